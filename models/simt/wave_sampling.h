#pragma once
// Sampled simulation of a launch made of many identical waves of blocks (gpu.sampling = "waves";
// docs/gpu.md "Sampled simulation").
//
// A wave is as many blocks as the chip holds resident at once (SMs x the occupancy calculator's
// blocks per SM). Wave n ends when the (n x W)-th block completes. The launch runs normally, block
// after block, until the per-wave time has converged (waves_converged); the dispatcher then skips K
// whole waves of block ids (waves_to_skip) and runs on: the blocks in flight, the last full wave,
// the tail wave and the drain are all simulated, so only the K skipped waves are estimated. The
// op's cycles are the sampled run's plus K x the steady wave time; counters that scale with work
// get K x their steady per-wave increase (extrapolate_stats).
#include <cstdint>
#include <functional>
#include <vector>

#include "models/simt/simt_gpu.h"

namespace accelsim::simt {

// The convergence criterion: at least `min_waves` waves done (the first, cold one, and two after
// it), and the last two waves' times within `tolerance` of the one before the last.
struct WaveSamplingRule {
    double tolerance = 0.01;
    std::size_t min_waves = 3;
};

// wave_ends[i]: the cycle wave i+1 ended (wave 0 starts at cycle 0). True when the waves so far
// satisfy the rule.
bool waves_converged(const std::vector<std::uint64_t>& wave_ends, const WaveSamplingRule& rule);

// Whole waves to skip when the next block to dispatch is `next_block` of `grid`: all but one of
// the full waves left, so the last full wave and the tail (grid mod wave_blocks blocks) are
// simulated after the skip. 0 when that leaves nothing to skip.
std::uint64_t waves_to_skip(std::uint64_t grid, std::uint64_t next_block, std::uint64_t wave_blocks);

// The cycles of the whole launch from the sampled run: the steady wave time is the mean of the
// last two waves at the decision; the estimate's error bound is the skipped waves times the
// difference of those two waves (the per-wave uncertainty the criterion allowed).
struct WaveExtrapolation {
    double steady_wave_cycles = 0;
    std::uint64_t cycles = 0;     // sampled cycles + skipped waves x steady wave time, rounded
    double error_cycles = 0;      // skipped waves x |last wave - the one before|
};
WaveExtrapolation extrapolate_cycles(std::uint64_t sampled_cycles, const std::vector<std::uint64_t>& wave_ends,
                                     std::uint64_t skipped_waves);

// One counter that scales with work: sampled + waves x (last - two_before) / 2, rounded (the mean
// increase over the last two waves, from snapshots at their ends).
std::uint64_t extrapolate_counter(std::uint64_t sampled, std::uint64_t last, std::uint64_t two_before,
                                  std::uint64_t waves);

// Counters that scale with work: sampled + skipped_waves x (at_last - at_two_before) / 2, i.e. the
// mean increase over the last two waves (snapshots at their ends), rounded. Ratios (ipc, SIMD
// efficiency, issue-slot use) are recomputed from the extrapolated counts and `cycles`; achieved
// occupancy stays the sampled run's. blocks = the whole grid.
KernelStats extrapolate_stats(const KernelStats& sampled, const KernelStats& at_last, const KernelStats& at_two_before,
                              std::uint64_t skipped_waves, std::uint64_t cycles, std::uint64_t grid, int sms,
                              int sub_partitions);

// Driven by the block dispatcher of launch(): hears every block completion in time order and says
// when to skip. Clustered launches are not sampled.
class WaveSampler {
public:
    explicit WaveSampler(WaveSamplingRule rule = {}) : rule_(rule) {}

    // launch() sets the launch's shape and how to read its counters now.
    void begin(std::uint64_t grid, std::uint64_t wave_blocks, std::function<KernelStats()> snapshot);
    // A block completed at `cycle`; `next_block` is the next id to dispatch. Returns how many block
    // ids to skip before it (0, or whole waves once).
    std::uint64_t block_completed(std::uint64_t cycle, std::uint64_t next_block);
    // The caller's own counters at each wave's end (the memory port's traffic), index = wave - 1.
    std::function<void(std::size_t wave)> on_wave_end = nullptr;
    // A further condition for convergence, asked at each wave's end (nullptr: none). GpuChip
    // requires the L2 to have turned over and begun writing back: until then its dirty outputs
    // cost nothing and the waves are faster than the steady state (a 8192 x 8192 x 128 GEMM's waves grow from 8.7k to 13.5k cycles as it fills).
    std::function<bool()> steady_state_possible = nullptr;

    bool skipped() const { return skipped_waves_ > 0; }
    std::uint64_t skipped_waves() const { return skipped_waves_; }
    std::uint64_t wave_blocks() const { return wave_blocks_; }
    std::uint64_t grid() const { return grid_; }
    // The waves at the decision: their end cycles and the counters at each end.
    const std::vector<std::uint64_t>& wave_ends() const { return wave_ends_; }
    const std::vector<KernelStats>& snapshots() const { return snapshots_; }
    const WaveSamplingRule& rule() const { return rule_; }

private:
    WaveSamplingRule rule_;
    std::uint64_t grid_ = 0, wave_blocks_ = 0, completed_ = 0, skipped_waves_ = 0;
    bool decided_ = false;
    std::function<KernelStats()> snapshot_;
    std::vector<std::uint64_t> wave_ends_;
    std::vector<KernelStats> snapshots_;
};

}  // namespace accelsim::simt
