#include "models/simt/wave_sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace accelsim::simt {

namespace {

// Wave i's time (1-based): its end less the previous wave's end (wave 1 starts at cycle 0).
double wave_cycles(const std::vector<std::uint64_t>& ends, std::size_t i) {
    const std::uint64_t start = i >= 2 ? ends[i - 2] : 0;
    return static_cast<double>(ends[i - 1]) - static_cast<double>(start);
}

}  // namespace

double student_t_975(std::size_t dof) {
    // Two-sided 95 % (one-sided 97.5 %) quantiles of Student's t, dof 1 to 30 (standard tables).
    static const double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                    2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                    2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (dof == 0) return std::numeric_limits<double>::infinity();
    if (dof <= 30) return kTable[dof - 1];
    // Beyond the table: z + (z^3 + z) / (4 dof), z the normal quantile (2.039 at 30 against 2.042).
    const double z = 1.959964;
    return z + (z * z * z + z) / (4.0 * static_cast<double>(dof));
}

double SteadyWaves::error_cycles(std::uint64_t skipped_waves) const {
    const auto k = static_cast<double>(skipped_waves);
    const double centre_to_last = (static_cast<double>(waves) - 1.0) / 2.0;
    return k * half_width + std::fabs(slope) * k * (centre_to_last + (k + 1.0) / 2.0);
}

SteadyWaves steady_waves(const std::vector<std::uint64_t>& wave_ends, std::size_t first_wave) {
    SteadyWaves w;
    const std::size_t last = wave_ends.size();
    if (first_wave < 1 || last < first_wave + 1) return w;  // fewer than 2 waves
    w.waves = last - first_wave + 1;
    const auto n = static_cast<double>(w.waves);
    double sum = 0;
    for (std::size_t i = first_wave; i <= last; ++i) sum += wave_cycles(wave_ends, i);
    w.mean = sum / n;
    const double x_mean = (n - 1.0) / 2.0;
    double squares = 0, xy = 0, xx = 0;
    for (std::size_t i = first_wave; i <= last; ++i) {
        const double dw = wave_cycles(wave_ends, i) - w.mean;
        const double dx = static_cast<double>(i - first_wave) - x_mean;
        squares += dw * dw;
        xy += dx * dw;
        xx += dx * dx;
    }
    const double s = std::sqrt(squares / (n - 1.0));
    w.half_width = student_t_975(w.waves - 1) * s / std::sqrt(n);
    w.slope = xy / xx;
    return w;
}

bool waves_converged(const SteadyWaves& steady, std::uint64_t skipped_waves, double projected_cycles,
                     const WaveSamplingRule& rule) {
    if (steady.waves < std::max<std::size_t>(rule.min_window, 2) || skipped_waves == 0) return false;
    return steady.error_cycles(skipped_waves) <= rule.tolerance * projected_cycles;
}

std::uint64_t waves_to_skip(std::uint64_t grid, std::uint64_t next_block, std::uint64_t wave_blocks) {
    if (wave_blocks == 0 || next_block >= grid) return 0;
    const std::uint64_t full_waves_left = (grid - next_block) / wave_blocks;
    return full_waves_left > 1 ? full_waves_left - 1 : 0;
}

WaveExtrapolation extrapolate_cycles(std::uint64_t sampled_cycles, const SteadyWaves& steady,
                                     std::uint64_t skipped_waves) {
    WaveExtrapolation e;
    e.steady_wave_cycles = steady.mean;
    e.cycles = sampled_cycles +
               static_cast<std::uint64_t>(std::llround(static_cast<double>(skipped_waves) * steady.mean));
    e.error_cycles = steady.error_cycles(skipped_waves);
    return e;
}

std::uint64_t extrapolate_counter(std::uint64_t sampled, std::uint64_t at_window_end, std::uint64_t at_window_start,
                                  std::uint64_t waves, std::size_t window_waves) {
    // Counters only grow, so at_window_end >= at_window_start.
    const double per_wave = (static_cast<double>(at_window_end) - static_cast<double>(at_window_start)) /
                            static_cast<double>(std::max<std::size_t>(window_waves, 1));
    return sampled + static_cast<std::uint64_t>(std::llround(per_wave * static_cast<double>(waves)));
}

KernelStats extrapolate_stats(const KernelStats& sampled, const KernelStats& at_window_end,
                              const KernelStats& at_window_start, std::size_t window_waves,
                              std::uint64_t skipped_waves, std::uint64_t cycles, std::uint64_t grid, int sms,
                              int sub_partitions) {
    KernelStats s = sampled;
    const std::uint64_t k = skipped_waves;
    auto scale = [&](std::uint64_t KernelStats::*field) {
        s.*field = extrapolate_counter(sampled.*field, at_window_end.*field, at_window_start.*field, k, window_waves);
    };
    for (auto field : kWorkCounters) scale(field);
    for (std::size_t w = 0; w < s.lanes_histogram.size(); ++w)
        s.lanes_histogram[w] = extrapolate_counter(sampled.lanes_histogram[w], at_window_end.lanes_histogram[w],
                                                   at_window_start.lanes_histogram[w], k, window_waves);
    s.blocks = grid;
    s.cycles = cycles;
    set_ratios(s, sms, sub_partitions);
    return s;
}

void WaveSampler::begin(std::uint64_t grid, std::uint64_t wave_blocks, std::function<KernelStats()> snapshot) {
    grid_ = grid;
    wave_blocks_ = wave_blocks;
    completed_ = skipped_waves_ = skipped_from_ = 0;
    decided_ = false;
    window_first_ = 0;
    steady_ = SteadyWaves{};
    snapshot_ = std::move(snapshot);
    wave_ends_.clear();
    snapshots_.clear();
}

std::uint64_t WaveSampler::block_completed(std::uint64_t cycle, std::uint64_t next_block) {
    if (decided_ || wave_blocks_ == 0) return 0;
    if (++completed_ % wave_blocks_ != 0) return 0;
    wave_ends_.push_back(cycle);
    KernelStats now = snapshot_();
    now.issue_order.clear();
    now.resident_warps.clear();
    snapshots_.push_back(std::move(now));
    const std::size_t n = wave_ends_.size();
    if (on_wave_end) on_wave_end(n - 1);
    // The window starts after the first (cold) wave and after the wave that made the steady state
    // possible.
    if (window_first_ == 0 && (!steady_state_possible || steady_state_possible()))
        window_first_ = std::max<std::size_t>(2, n + 1);
    const std::uint64_t skip = waves_to_skip(grid_, next_block, wave_blocks_);
    if (skip == 0) {  // nothing left to skip, now or later: stop watching
        decided_ = true;
        return 0;
    }
    if (window_first_ == 0) return 0;
    const SteadyWaves steady = steady_waves(wave_ends_, window_first_);
    const double waves_left = static_cast<double>(grid_ - completed_) / static_cast<double>(wave_blocks_);
    const double projected = static_cast<double>(cycle) + waves_left * steady.mean;
    if (!waves_converged(steady, skip, projected, rule_)) return 0;
    decided_ = true;
    steady_ = steady;
    skipped_waves_ = skip;
    skipped_from_ = next_block;
    return skipped_blocks();
}

}  // namespace accelsim::simt
