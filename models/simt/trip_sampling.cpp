#include "models/simt/trip_sampling.h"

#include <algorithm>
#include <cmath>

namespace accelsim::simt {

namespace {

bool keeps_state_outside_warps(Opcode op) {
    switch (op) {
        case Opcode::mbarrier_init:
        case Opcode::mbarrier_arrive:
        case Opcode::mbarrier_expect_tx:
        case Opcode::mbarrier_wait:
        case Opcode::mbarrier_arrive_remote:
        case Opcode::tma_load:
        case Opcode::wgmma_fence:
        case Opcode::wgmma_commit:
        case Opcode::wgmma_wait:
        case Opcode::wgmma_mma:
        case Opcode::shfl:
            return true;
        default: return false;
    }
}

}  // namespace

double SteadyTrips::error_cycles(std::uint64_t skipped) const {
    const auto n = static_cast<double>(skipped);
    const double centre_to_last = static_cast<double>(trips) / 2.0;
    return n * half_width + std::fabs(slope) * n * (centre_to_last + (n + 1.0) / 2.0);
}

SteadyTrips steady_trips(const std::vector<double>& crossings, std::size_t first) {
    SteadyTrips w;
    if (crossings.size() < first + 4) return w;  // the quadratic's 3 parameters and a residual
    const std::size_t points = crossings.size() - first;
    w.trips = points - 1;
    // Centred trip index x (symmetric, so x and x^2 - m2 are orthogonal: each coefficient is its
    // own projection). t = a + T x + c (x^2 - m2).
    const double centre = static_cast<double>(points - 1) / 2.0;
    double m2 = 0, mean_t = 0;
    for (std::size_t i = 0; i < points; ++i) {
        const double x = static_cast<double>(i) - centre;
        m2 += x * x;
        mean_t += crossings[first + i];
    }
    m2 /= static_cast<double>(points);
    mean_t /= static_cast<double>(points);
    double sxx = 0, sxt = 0, sqq = 0, sqt = 0;
    for (std::size_t i = 0; i < points; ++i) {
        const double x = static_cast<double>(i) - centre, q = x * x - m2, t = crossings[first + i] - mean_t;
        sxx += x * x;
        sxt += x * t;
        sqq += q * q;
        sqt += q * t;
    }
    w.mean = sxt / sxx;
    const double c = sqq > 0 ? sqt / sqq : 0.0;
    w.slope = 2.0 * c;
    double residuals = 0;
    for (std::size_t i = 0; i < points; ++i) {
        const double x = static_cast<double>(i) - centre;
        const double r = crossings[first + i] - mean_t - w.mean * x - c * (x * x - m2);
        residuals += r * r;
    }
    const std::size_t dof = points - 3;
    const double sigma = std::sqrt(residuals / static_cast<double>(dof));
    w.half_width = student_t_975(dof) * sigma / std::sqrt(sxx);
    return w;
}

std::uint32_t trips_within(const SteadyTrips& steady, std::uint32_t most, double tolerance) {
    if (steady.trips == 0 || steady.mean <= 0 || most == 0) return 0;
    // error_cycles(N) / N = h + |b| (d + (N + 1) / 2) <= tolerance x mean, d = trips / 2.
    const double room = tolerance * steady.mean - steady.half_width;
    if (room <= 0) return 0;
    double n = static_cast<double>(most);
    if (steady.slope != 0)
        n = std::min(n, std::floor(2.0 * room / std::fabs(steady.slope) - static_cast<double>(steady.trips) - 1.0));
    return n >= 1 ? static_cast<std::uint32_t>(n) : 0;
}

bool loop_can_be_sampled(const Kernel& kernel, const SampledLoop& loop) {
    const auto size = static_cast<int>(kernel.code.size());
    if (kernel.cluster != 1 || loop.trips_per_block == 0) return false;
    if (loop.head_pc < 0 || loop.back_edge_pc <= loop.head_pc || loop.back_edge_pc >= size) return false;
    const Instruction& edge = kernel.code[static_cast<std::size_t>(loop.back_edge_pc)];
    if (edge.op != Opcode::bra || edge.target != loop.head_pc) return false;
    for (int pc = loop.head_pc; pc <= loop.back_edge_pc; ++pc)
        if (keeps_state_outside_warps(kernel.code[static_cast<std::size_t>(pc)].op)) return false;
    return true;
}

void add_work_counters(KernelStats& s, const KernelStats& extra) {
    for (auto field : kWorkCounters) s.*field += extra.*field;
    for (std::size_t w = 0; w < s.lanes_histogram.size(); ++w) s.lanes_histogram[w] += extra.lanes_histogram[w];
}

void TripSampler::begin(std::function<KernelStats()> snapshot) {
    snapshot_ = std::move(snapshot);
    restart();
    skips_.clear();
    skipped_trips_ = 0;
    error_cycles_ = 0;
    last_extra_ = KernelStats{};
}

void TripSampler::restart() {
    crossings_.clear();
    seen_at_.clear();
    seen_.clear();
}

const std::vector<std::uint32_t>& TripSampler::window_end(std::uint64_t cycle, const std::vector<TripGroup>& groups) {
    skip_.assign(groups.size(), 0);
    crossings_.resize(groups.size());
    for (std::size_t i = 0; i < groups.size(); ++i)
        crossings_[i].insert(crossings_[i].end(), groups[i].new_crossings.begin(), groups[i].new_crossings.end());
    KernelStats now = snapshot_();
    now.issue_order.clear();
    now.resident_warps.clear();
    seen_at_.push_back(cycle);
    seen_.push_back(now);
    if (on_snapshot) on_snapshot(seen_.size() - 1);

    // Each group's window (its trips less the first quarter, whose first ones of a launch run on a
    // cold L2) and what its rule allows; D the least of those in cycles.
    std::vector<SteadyTrips>& steady = steady_;
    steady.assign(groups.size(), SteadyTrips{});
    double d = -1;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const std::vector<double>& c = crossings_[i];
        const std::size_t trips = c.empty() ? 0 : c.size() - 1, first = trips / 4;
        if (trips - first < kMinWindowTrips || groups[i].fewest_left <= margin_) return skip_;
        steady[i] = steady_trips(c, first);
        const std::uint32_t allowed = trips_within(steady[i], groups[i].fewest_left - margin_, rule_.tolerance);
        if (allowed == 0) return skip_;
        const double cycles = static_cast<double>(allowed) * steady[i].mean;
        d = d < 0 ? cycles : std::min(d, cycles);
    }
    if (d <= 0) return skip_;
    Skip s;
    s.skipped_cycles = static_cast<std::uint64_t>(std::llround(d));
    bool any = false;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const double n = std::floor(d / steady[i].mean + 0.5);
        skip_[i] = static_cast<std::uint32_t>(std::min(n, static_cast<double>(groups[i].fewest_left - margin_)));
        any = any || skip_[i] > 0;
        s.most_trips = std::max(s.most_trips, skip_[i]);
        s.error_cycles = std::max(s.error_cycles, steady[i].error_cycles(skip_[i]) +
                                                      std::fabs(static_cast<double>(skip_[i]) * steady[i].mean - d));
    }
    if (!any) {
        skip_.assign(groups.size(), 0);
        return skip_;
    }
    // Counters: their rate from the window's start (the first window end in the series' last
    // three quarters) to now, times D.
    const std::uint64_t quarter = seen_at_.front() + (cycle - seen_at_.front()) / 4;
    std::size_t from = 0;
    while (from + 1 < seen_at_.size() && seen_at_[from] < quarter) ++from;
    const KernelStats& before = seen_[from];
    const double span = static_cast<double>(cycle - seen_at_[from]);
    const double scale = span > 0 ? d / span : 0.0;
    KernelStats extra;
    auto scaled = [scale](std::uint64_t a, std::uint64_t b) {
        return static_cast<std::uint64_t>(std::llround(static_cast<double>(a - std::min(a, b)) * scale));
    };
    for (auto field : kWorkCounters) extra.*field = scaled(now.*field, before.*field);
    for (std::size_t w = 0; w < extra.lanes_histogram.size(); ++w)
        extra.lanes_histogram[w] = scaled(now.lanes_histogram[w], before.lanes_histogram[w]);
    last_extra_ = extra;
    if (on_skip) on_skip(from, scale);
    skips_.push_back(s);
    skipped_trips_ += s.most_trips;
    error_cycles_ += s.error_cycles;
    restart();
    return skip_;
}

}  // namespace accelsim::simt
