#include "sim/advise/advice.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "sim/input_error.h"
#include "sim/report/number_text.h"

namespace accelsim {

using nlohmann::json;

std::optional<double> AdvicePoint::cost_per_million_usd() const {
    if (!cost_per_hour_usd || batch <= 0) return std::nullopt;
    return *cost_per_hour_usd / 3600.0 * seconds / static_cast<double>(batch) * 1e6;
}

std::optional<double> AdvicePoint::energy_per_inference_j() const {
    if (!tdp_w || batch <= 0) return std::nullopt;
    return *tdp_w * seconds / static_cast<double>(batch);
}

std::string AdvicePoint::dominant_bound() const {
    std::string best;
    double share = -1;
    for (const auto& [bound, s] : bound_shares)
        if (s > share) {
            best = bound;
            share = s;
        }
    return best;
}

RankBy parse_rank_by(const std::string& text) {
    if (text == "cost") return RankBy::cost;
    if (text == "throughput") return RankBy::throughput;
    if (text == "energy") return RankBy::energy;
    if (text == "latency") return RankBy::latency;
    throw InputError("--rank-by: unknown metric '" + text + "' (valid: cost, throughput, energy, latency)");
}

const char* to_string(RankBy r) {
    switch (r) {
        case RankBy::cost: return "cost";
        case RankBy::throughput: return "throughput";
        case RankBy::energy: return "energy";
        case RankBy::latency: return "latency";
    }
    return "cost";
}

namespace {

// The value a point is ranked by, smaller is better; nullopt when the point lacks it.
std::optional<double> rank_value(const AdvicePoint& p, RankBy r) {
    switch (r) {
        case RankBy::cost: return p.cost_per_million_usd();
        case RankBy::throughput: return -p.throughput();
        case RankBy::energy: return p.energy_per_inference_j();
        case RankBy::latency: return p.seconds;
    }
    return std::nullopt;
}

using number_text::fixed;

// Three significant digits, without exponent for the usual magnitudes.
std::string sig3(double v) {
    char buf[64];
    if (v == 0) return "0";
    const double a = std::abs(v);
    const int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : a >= 0.1 ? 3 : a >= 0.01 ? 4 : 6;
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string whole_percent(double share) {
    return number_text::percent(share, 0);
}

std::string bound_name(const std::string& b) {
    if (b == "hbm" || b == "l2" || b == "cmem" || b == "smem") {
        std::string upper = b;
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return upper;
    }
    return b;
}

// One line: what limits the chosen point, and why not a larger batch.
std::string why_line(const AdvicePoint& best, const std::vector<const AdvicePoint*>& same_chip,
                     std::optional<double> bound_s) {
    const std::string b = best.dominant_bound();
    const double share = best.bound_shares.count(b) ? best.bound_shares.at(b) : 0.0;
    std::string why = bound_name(b) + "-bound at batch " + std::to_string(best.batch) + " (" +
                      whole_percent(share) + " of cycles)";
    if (b == "compute") {
        why += ", matrix units at " + whole_percent(best.utilization) + " of peak";
    } else if (b == "hbm") {
        const auto it = best.bytes.find("hbm");
        if (it != best.bytes.end() && best.batch > 0)
            why += ": " + sig3(it->second / static_cast<double>(best.batch) / 1e6) +
                   " MB of HBM traffic per inference; a larger batch shares each weight read";
    } else if (b == "host_link") {
        const auto it = best.bytes.find("host_link");
        if (it != best.bytes.end() && best.batch > 0)
            why += ": " + sig3(it->second / static_cast<double>(best.batch) / 1e6) +
                   " MB of parameters per inference stream from the host (they exceed the on-chip cache); a larger "
                   "batch shares each stream";
    } else if (b == "latency") {
        why += ": ops too small to fill the chip (fixed per-op and launch costs)";
    }
    // The next larger batch of the same dtype that broke the latency bound.
    if (bound_s) {
        const AdvicePoint* next = nullptr;
        for (const AdvicePoint* p : same_chip)
            if (p->ok && p->dtype == best.dtype && p->batch > best.batch && p->seconds > *bound_s &&
                (!next || p->batch < next->batch))
                next = p;
        if (next)
            why += "; batch " + std::to_string(next->batch) + " takes " + sig3(next->seconds * 1e3) + " ms, over the " +
                   sig3(*bound_s * 1e3) + " ms bound";
    }
    bool largest = true;
    for (const AdvicePoint* p : same_chip) largest = largest && !(p->dtype == best.dtype && p->batch > best.batch);
    if (largest && same_chip.size() > 1) why += "; the largest batch tried";
    if (best.ops_without_cycle_model > 0)
        why += "; " + std::to_string(best.ops_without_cycle_model) + " of " + std::to_string(best.ops) + " ops in " +
               best.dtype + " have no cycle model here (roofline rows)";
    return why;
}

}  // namespace

Advice advise(const std::vector<AdvicePoint>& points, RankBy rank_by, std::optional<double> latency_bound_s) {
    Advice advice;
    advice.rank_by = rank_by;
    advice.latency_bound_s = latency_bound_s;
    std::vector<std::string> chips;  // first-seen order
    std::map<std::string, std::vector<const AdvicePoint*>> by_chip;
    std::map<std::string, std::size_t> dtype_order;
    for (const AdvicePoint& p : points) {
        if (!by_chip.count(p.chip)) chips.push_back(p.chip);
        by_chip[p.chip].push_back(&p);
        dtype_order.emplace(p.dtype, dtype_order.size());
    }
    for (const std::string& chip : chips) {
        const auto& mine = by_chip[chip];
        ChipAdvice c;
        c.chip = chip;
        const AdvicePoint* best = nullptr;
        for (const AdvicePoint* p : mine) {
            if (!p->ok || (latency_bound_s && p->seconds > *latency_bound_s)) continue;
            if (!best) {
                best = p;
                continue;
            }
            const auto v = rank_value(*p, rank_by), w = rank_value(*best, rank_by);
            const bool better = v && (!w || *v < *w ||
                                      (*v == *w && (p->batch < best->batch ||
                                                    (p->batch == best->batch &&
                                                     dtype_order[p->dtype] < dtype_order[best->dtype]))));
            if (better) best = p;
        }
        if (best) {
            c.best = *best;
            c.why = why_line(*best, mine, latency_bound_s);
        } else {
            const AdvicePoint* fastest = nullptr;
            std::string failure;
            for (const AdvicePoint* p : mine) {
                if (!p->ok) {
                    if (failure.empty()) failure = p->failure;
                    continue;
                }
                if (!fastest || p->seconds < fastest->seconds) fastest = p;
            }
            if (fastest)
                c.why = "no batch meets the " + sig3(*latency_bound_s * 1e3) + " ms bound (fastest: batch " +
                        std::to_string(fastest->batch) + " " + fastest->dtype + " at " +
                        sig3(fastest->seconds * 1e3) + " ms)";
            else
                c.why = "every point failed: " + failure;
        }
        advice.chips.push_back(std::move(c));
    }
    // Ranked chips first by their value; chips without the value, then chips without a point.
    std::stable_sort(advice.chips.begin(), advice.chips.end(), [&](const ChipAdvice& a, const ChipAdvice& b) {
        const auto va = a.best ? rank_value(*a.best, rank_by) : std::nullopt;
        const auto vb = b.best ? rank_value(*b.best, rank_by) : std::nullopt;
        const int ga = a.best ? (va ? 0 : 1) : 2, gb = b.best ? (vb ? 0 : 1) : 2;
        if (ga != gb) return ga < gb;
        return ga == 0 && *va < *vb;
    });
    return advice;
}

namespace {

std::string optional_text(const std::optional<double>& v) { return v ? sig3(*v) : "-"; }

}  // namespace

void write_advice_table(std::ostream& out, const Advice& a) {
    out << "advice: ranked by " << to_string(a.rank_by);
    if (a.latency_bound_s) out << ", latency bound " << sig3(*a.latency_bound_s * 1e3) << " ms per batch";
    out << " (energy is an upper bound: TDP for the whole run)\n";
    // Columns as wide as their widest entry (chip names; dtypes such as fp8_e4m3).
    std::size_t chip_w = 4, dtype_w = 5;
    for (const ChipAdvice& c : a.chips) {
        chip_w = std::max(chip_w, c.chip.size());
        if (c.best) dtype_w = std::max(dtype_w, c.best->dtype.size());
    }
    const int dw = static_cast<int>(dtype_w);
    char line[512];
    std::snprintf(line, sizeof line, "%4s  %-*s  %5s  %*s  %11s  %13s  %12s  %10s  %-8s\n", "rank",
                  static_cast<int>(chip_w), "chip", "batch", dw, "dtype", "latency(ms)", "inferences/s", "$/M inf",
                  "J/inf", "bound");
    out << line;
    std::size_t rank = 0;
    for (const ChipAdvice& c : a.chips) {
        if (c.best) {
            const AdvicePoint& p = *c.best;
            std::snprintf(line, sizeof line, "%4zu  %-*s  %5lld  %*s  %11s  %13s  %12s  %10s  %-8s\n", ++rank,
                          static_cast<int>(chip_w), c.chip.c_str(), static_cast<long long>(p.batch), dw,
                          p.dtype.c_str(),
                          sig3(p.seconds * 1e3).c_str(), sig3(p.throughput()).c_str(),
                          optional_text(p.cost_per_million_usd()).c_str(),
                          optional_text(p.energy_per_inference_j()).c_str(), p.dominant_bound().c_str());
        } else {
            std::snprintf(line, sizeof line, "%4s  %-*s  %5s  %*s  %11s  %13s  %12s  %10s  %-8s\n", "-",
                          static_cast<int>(chip_w), c.chip.c_str(), "-", dw, "-", "-", "-", "-", "-", "-");
        }
        out << line;
        out << "      " << std::string(chip_w, ' ') << "  why: " << c.why << "\n";
    }
}

json advice_json(const Advice& a) {
    json j;
    j["schema"] = kAdviceSchema;
    j["rank_by"] = to_string(a.rank_by);
    j["latency_bound_ms"] = a.latency_bound_s ? json(*a.latency_bound_s * 1e3) : json(nullptr);
    json chips = json::array();
    std::size_t rank = 0;
    for (const ChipAdvice& c : a.chips) {
        json e;
        e["chip"] = c.chip;
        e["why"] = c.why;
        if (c.best) {
            const AdvicePoint& p = *c.best;
            const auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
            e["rank"] = ++rank;
            e["batch"] = p.batch;
            e["dtype"] = p.dtype;
            e["latency_ms"] = p.seconds * 1e3;
            e["inferences_per_second"] = p.throughput();
            e["cost_per_million_inferences_usd"] = opt(p.cost_per_million_usd());
            e["energy_per_inference_j_upper_bound"] = opt(p.energy_per_inference_j());
            e["bound"] = p.dominant_bound();
            e["bound_shares"] = p.bound_shares;
            e["utilization"] = p.utilization;
        } else {
            e["rank"] = nullptr;
        }
        chips.push_back(e);
    }
    j["chips"] = chips;
    return j;
}

void write_advice_csv(std::ostream& out, const Advice& a) {
    out << "rank,chip,batch,dtype,latency_ms,inferences_per_second,cost_per_million_inferences_usd,"
           "energy_per_inference_j_upper_bound,bound,why\n";
    const auto quoted = [](const std::string& s) {
        std::string q = "\"";
        for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
        return q + "\"";
    };
    const auto number = [](const std::optional<double>& v) { return v ? json(*v).dump() : std::string(); };
    std::size_t rank = 0;
    for (const ChipAdvice& c : a.chips) {
        if (c.best) {
            const AdvicePoint& p = *c.best;
            out << ++rank << "," << quoted(c.chip) << "," << p.batch << "," << p.dtype << "," << json(p.seconds * 1e3).dump()
                << "," << json(p.throughput()).dump() << "," << number(p.cost_per_million_usd()) << ","
                << number(p.energy_per_inference_j()) << "," << p.dominant_bound() << ",";
        } else {
            out << "," << quoted(c.chip) << ",,,,,,,,";
        }
        out << quoted(c.why) << "\n";
    }
}

}  // namespace accelsim
