#include "models/simt/wave_sampling.h"

#include <cmath>
#include <cstdlib>

namespace accelsim::simt {

namespace {

// Wave i's time (1-based): its end less the previous wave's end (wave 1 starts at cycle 0).
double wave_cycles(const std::vector<std::uint64_t>& ends, std::size_t i) {
    const std::uint64_t start = i >= 2 ? ends[i - 2] : 0;
    return static_cast<double>(ends[i - 1]) - static_cast<double>(start);
}

}  // namespace

std::uint64_t extrapolate_counter(std::uint64_t sampled, std::uint64_t last, std::uint64_t two_before,
                                  std::uint64_t waves) {
    // Counters only grow, so last >= two_before.
    const double per_wave = (static_cast<double>(last) - static_cast<double>(two_before)) / 2.0;
    return sampled + static_cast<std::uint64_t>(std::llround(per_wave * static_cast<double>(waves)));
}

bool waves_converged(const std::vector<std::uint64_t>& wave_ends, const WaveSamplingRule& rule) {
    const std::size_t n = wave_ends.size();
    if (n < std::max<std::size_t>(rule.min_waves, 2)) return false;
    const double last = wave_cycles(wave_ends, n), before = wave_cycles(wave_ends, n - 1);
    return before > 0 && std::fabs(last - before) <= rule.tolerance * before;
}

std::uint64_t waves_to_skip(std::uint64_t grid, std::uint64_t next_block, std::uint64_t wave_blocks) {
    if (wave_blocks == 0 || next_block >= grid) return 0;
    const std::uint64_t full_waves_left = (grid - next_block) / wave_blocks;
    return full_waves_left > 1 ? full_waves_left - 1 : 0;
}

WaveExtrapolation extrapolate_cycles(std::uint64_t sampled_cycles, const std::vector<std::uint64_t>& wave_ends,
                                     std::uint64_t skipped_waves) {
    WaveExtrapolation e;
    const std::size_t n = wave_ends.size();
    if (n < 2) return {0, sampled_cycles, 0};
    const double last = wave_cycles(wave_ends, n), before = wave_cycles(wave_ends, n - 1);
    const auto k = static_cast<double>(skipped_waves);
    e.steady_wave_cycles = (last + before) / 2.0;
    e.cycles = sampled_cycles + static_cast<std::uint64_t>(std::llround(k * e.steady_wave_cycles));
    e.error_cycles = k * std::fabs(last - before);
    return e;
}

KernelStats extrapolate_stats(const KernelStats& sampled, const KernelStats& at_last, const KernelStats& at_two_before,
                              std::uint64_t skipped_waves, std::uint64_t cycles, std::uint64_t grid, int sms,
                              int sub_partitions) {
    KernelStats s = sampled;
    const std::uint64_t k = skipped_waves;
    auto scale = [&](std::uint64_t KernelStats::*field) {
        s.*field = extrapolate_counter(sampled.*field, at_last.*field, at_two_before.*field, k);
    };
    for (auto field : {&KernelStats::issued, &KernelStats::mma_issued, &KernelStats::active_lanes,
                       &KernelStats::issue_cycles, &KernelStats::idle_cycles, &KernelStats::scoreboard_cycles,
                       &KernelStats::pipeline_cycles, &KernelStats::barrier_cycles, &KernelStats::global_requests,
                       &KernelStats::global_sectors, &KernelStats::shared_requests, &KernelStats::shared_wavefronts,
                       &KernelStats::l1_hits, &KernelStats::l1_misses, &KernelStats::l1_merges})
        scale(field);
    for (std::size_t w = 0; w < s.lanes_histogram.size(); ++w)
        s.lanes_histogram[w] =
            extrapolate_counter(sampled.lanes_histogram[w], at_last.lanes_histogram[w], at_two_before.lanes_histogram[w], k);
    s.blocks = grid;
    s.cycles = cycles;
    s.ipc = cycles ? static_cast<double>(s.issued) / static_cast<double>(cycles) : 0.0;
    s.simd_efficiency = s.issued ? static_cast<double>(s.active_lanes) / (32.0 * static_cast<double>(s.issued)) : 0.0;
    const double slots = static_cast<double>(sms) * sub_partitions * static_cast<double>(cycles);
    s.issue_slot_utilization = slots > 0 ? static_cast<double>(s.issue_cycles) / slots : 0.0;
    return s;
}

void WaveSampler::begin(std::uint64_t grid, std::uint64_t wave_blocks, std::function<KernelStats()> snapshot) {
    grid_ = grid;
    wave_blocks_ = wave_blocks;
    completed_ = skipped_waves_ = 0;
    decided_ = false;
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
    if (on_wave_end) on_wave_end(wave_ends_.size() - 1);
    if (!waves_converged(wave_ends_, rule_) || (steady_state_possible && !steady_state_possible())) {
        // Nothing left to skip even if it converged later: stop watching.
        if (waves_to_skip(grid_, next_block, wave_blocks_) == 0) decided_ = true;
        return 0;
    }
    decided_ = true;
    skipped_waves_ = waves_to_skip(grid_, next_block, wave_blocks_);
    return skipped_waves_ * wave_blocks_;
}

}  // namespace accelsim::simt
