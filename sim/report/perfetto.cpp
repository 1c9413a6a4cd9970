#include "sim/report/perfetto.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <set>
#include <utility>

namespace accelsim {

using nlohmann::json;

namespace {

constexpr int kPid = 1;

// Track names in natural order ("core2" before "core10"), "ops" first, "kernels" next.
bool natural_less(const std::string& a, const std::string& b) {
    auto rank = [](const std::string& s) { return s == "ops" ? 0 : s == "kernels" ? 1 : 2; };
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
            std::size_t ie = i, je = j;
            while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
            while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
            const std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
            if (na.size() != nb.size()) return na.size() < nb.size();
            if (na != nb) return na < nb;
            i = ie, j = je;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i, ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

struct NaturalLess {
    bool operator()(const std::string& a, const std::string& b) const { return natural_less(a, b); }
};

struct Span {
    std::string name;
    double start, end;  // cycles from the run's start
    json args;          // null: none
};

}  // namespace

std::vector<int> assign_sub_tracks(const std::vector<TimeSpan>& spans) {
    std::vector<std::size_t> order(spans.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (spans[a].start != spans[b].start) return spans[a].start < spans[b].start;
        return spans[a].end < spans[b].end;
    });
    std::vector<int> lane(spans.size(), 0);
    std::vector<double> free_at;  // per sub-track: the end of its last span
    for (const std::size_t i : order) {
        std::size_t k = 0;
        while (k < free_at.size() && free_at[k] > spans[i].start) ++k;
        if (k == free_at.size()) free_at.push_back(spans[i].end);
        else free_at[k] = spans[i].end;
        lane[i] = static_cast<int>(k);
    }
    return lane;
}

PerfettoTimeline::PerfettoTimeline(const ChipConfig& config, std::string trace,
                                   std::map<std::string, double> peak_bytes_per_cycle)
    : chip_name_(config.name), trace_(std::move(trace)), clock_hz_(config.clock_hz()),
      peak_bytes_per_cycle_(std::move(peak_bytes_per_cycle)) {}

void PerfettoTimeline::add(const OpReport& r) {
    OpSpan s;
    s.name = r.op.name;
    s.kind = std::string(to_string(r.op.kind));
    s.model = r.model;
    s.bound = r.roofline.bound;
    s.bound_cycles = r.roofline.bound_cycles;
    s.start_cycle = r.start_cycle;
    s.cycles = r.cycles;
    s.bytes = r.bytes;
    s.utilization = r.utilization;
    s.activity = r.activity;
    ops_.push_back(std::move(s));
}

json PerfettoTimeline::to_json() const {
    // Spans by track, in cycles from the run's start; a unit's span is kept inside its op.
    std::map<std::string, std::vector<Span>, NaturalLess> tracks;
    std::map<std::string, std::vector<std::pair<double, double>>> counters;  // name -> (cycle, value)
    std::set<std::string> levels;
    for (const OpSpan& op : ops_)
        if (op.activity)
            for (const ActivityTransfer& t : op.activity->transfers) levels.insert(t.level);
    for (const OpSpan& op : ops_) {
        const double start = static_cast<double>(op.start_cycle), end = start + static_cast<double>(op.cycles);
        json args = {{"kind", op.kind}, {"model", op.model}, {"cycles", op.cycles}, {"start_cycle", op.start_cycle},
                     {"bound", op.bound}, {"bound_cycles", op.bound_cycles}, {"bytes", op.bytes}};
        if (op.utilization) args["utilization"] = *op.utilization;
        tracks["ops"].push_back({op.name, start, end, std::move(args)});
        if (!op.activity) {
            for (const std::string& level : levels) counters[level].emplace_back(start, 0.0);
            continue;
        }
        auto clamp = [&](double t) { return std::min(end, std::max(start, start + t)); };
        for (const ActivitySpan& s : op.activity->spans)
            tracks[s.track].push_back({s.name, clamp(s.start), clamp(s.end), json{{"op", op.name}}});
        for (const ActivitySample& s : op.activity->samples) counters[s.counter].emplace_back(clamp(s.time), s.value);
        // Bandwidth: each transfer's bytes spread evenly over its interval, summed per bin.
        const int bins = static_cast<int>(std::clamp<std::uint64_t>(op.cycles, 1, kBandwidthBinsPerOp));
        const double width = std::max(1.0, static_cast<double>(op.cycles)) / bins;
        for (const std::string& level : levels) {
            std::vector<double> bytes(static_cast<std::size_t>(bins), 0.0);
            for (const ActivityTransfer& t : op.activity->transfers) {
                if (t.level != level) continue;
                const double from = std::clamp(t.start, 0.0, bins * width), to = std::clamp(t.end, from, bins * width);
                if (to <= from) {
                    bytes[static_cast<std::size_t>(std::min(bins - 1, static_cast<int>(from / width)))] += t.bytes;
                    continue;
                }
                for (int b = static_cast<int>(from / width); b < bins && b * width < to; ++b) {
                    const double overlap = std::min(to, (b + 1) * width) - std::max(from, b * width);
                    if (overlap > 0) bytes[static_cast<std::size_t>(b)] += t.bytes * overlap / (to - from);
                }
            }
            // Bytes done in an interval beyond what the level can move in it were moving in the
            // interval before (a chunk is counted when it is done, not while it moves).
            if (const auto peak = peak_bytes_per_cycle_.find(level); peak != peak_bytes_per_cycle_.end() && peak->second > 0)
                for (int b = bins - 1; b > 0; --b) {
                    const double capacity = peak->second * width;
                    if (bytes[static_cast<std::size_t>(b)] <= capacity) continue;
                    bytes[static_cast<std::size_t>(b - 1)] += bytes[static_cast<std::size_t>(b)] - capacity;
                    bytes[static_cast<std::size_t>(b)] = capacity;
                }
            const double seconds_per_bin = width / clock_hz_;
            for (int b = 0; b < bins; ++b)
                counters[level].emplace_back(start + b * width, bytes[static_cast<std::size_t>(b)] / seconds_per_bin / 1e9);
            // Idle from the op's end: the host may start the next op later (a counter holds its
            // value until the next sample; the next op's first bin at the same time replaces it).
            counters[level].emplace_back(end, 0.0);
        }
    }
    const double run_end = ops_.empty() ? 0.0 : static_cast<double>(ops_.back().start_cycle + ops_.back().cycles);
    for (const std::string& level : levels) counters[level].emplace_back(run_end, 0.0);

    json events = json::array();
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", 0},
                      {"args", {{"name", "accelsim " + chip_name_ + " (" + trace_ + ")"}}}});
    int tid = 0;
    for (const auto& track_spans : tracks) {
        // Named copies of the pair's parts: C++17 lambdas cannot capture structured bindings.
        const auto& track = track_spans.first;
        const auto& spans = track_spans.second;
        std::vector<TimeSpan> times;
        times.reserve(spans.size());
        for (const Span& s : spans) times.push_back({s.start, s.end});
        const std::vector<int> lane = assign_sub_tracks(times);
        const int lanes = lane.empty() ? 1 : *std::max_element(lane.begin(), lane.end()) + 1;
        const std::string category = track == "ops" ? "op" : "unit";
        for (int l = 0; l < lanes; ++l) {
            ++tid;
            const std::string name = l == 0 ? track : track + " #" + std::to_string(l + 1);
            events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", {{"name", name}}}});
            events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid},
                              {"args", {{"sort_index", tid}}}});
            // This sub-track's spans in order of start (assign_sub_tracks placed them so).
            std::vector<std::size_t> mine;
            for (std::size_t i = 0; i < spans.size(); ++i)
                if (lane[i] == l) mine.push_back(i);
            std::stable_sort(mine.begin(), mine.end(), [&](std::size_t a, std::size_t b) { return spans[a].start < spans[b].start; });
            for (const std::size_t i : mine) {
                const Span& s = spans[i];
                json e = {{"name", s.name}, {"cat", category}, {"ph", "X"}, {"pid", kPid}, {"tid", tid},
                          {"ts", microseconds(s.start)}, {"dur", microseconds(s.end) - microseconds(s.start)}};
                if (!s.args.is_null()) e["args"] = s.args;
                events.push_back(std::move(e));
            }
        }
    }
    for (auto& [name, samples] : counters) {
        std::stable_sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        const bool bandwidth = levels.count(name) > 0;
        const std::string counter = bandwidth ? name + " bandwidth" : name;
        const std::string series = bandwidth ? "GB/s" : "warps";
        for (std::size_t i = 0; i < samples.size(); ++i) {
            // Several values at one time: the last holds.
            if (i + 1 < samples.size() && samples[i + 1].first == samples[i].first) continue;
            events.push_back({{"name", counter}, {"ph", "C"}, {"pid", kPid}, {"ts", microseconds(samples[i].first)},
                              {"args", {{series, samples[i].second}}}});
        }
    }
    return {{"traceEvents", std::move(events)},
            {"displayTimeUnit", "ns"},
            {"otherData", {{"generator", "accelsim"}, {"config", chip_name_}, {"trace", trace_},
                           {"clock_hz", clock_hz_}}}};
}

void PerfettoTimeline::write(std::ostream& out) const { out << to_json().dump(1) << "\n"; }

}  // namespace accelsim
