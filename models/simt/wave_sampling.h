#pragma once
// Sampled simulation of a launch made of many identical waves of blocks (gpu.sampling = "waves";
// docs/gpu.md "Sampled simulation").
//
// A wave is as many blocks as the chip holds resident at once (SMs x the occupancy calculator's
// blocks per SM). Wave n ends when the (n x W)-th block completes. The launch runs normally, block
// after block, until the waves seen so far predict the rest well enough (waves_converged); the
// dispatcher then skips K whole waves of block ids (waves_to_skip) and runs on: the blocks in
// flight, the last full wave, the tail wave and the drain are all simulated, so only the K skipped
// waves are estimated. The op's cycles are the sampled run's plus K x the steady wave time;
// counters that scale with work get K x their steady per-wave increase (extrapolate_stats).
#include <cstdint>
#include <functional>
#include <vector>

#include "models/simt/simt_gpu.h"

namespace accelsim::simt {

// The convergence criterion. The steady state is judged on a window of waves: every wave after
// the first (cold) one, and after the caller's steady_state_possible condition first held. From
// the window's n wave times (mean m, sample standard deviation s, least-squares slope b per wave),
// skipping K waves is estimated to be off by at most
//     K x t(n - 1) x s / sqrt(n)                  (the mean's 95 % confidence half-width)
//   + |b| x K x (d + (K + 1) / 2)                 (a trend carried over the skipped waves)
// where t is Student's 97.5 % quantile and d the waves from the window's centre to its last wave.
// It converges when that bound is at most `tolerance` of the launch's projected cycles, with at
// least `min_window` waves in the window. Two waves suffice to start: t(1) = 12.7 makes their
// bound 7.85 |difference| for one skipped wave, and it grows with K, so a launch with many waves
// to skip waits for a window that predicts them (a 6.3-wave softmax skips its one wave after
// waves 2 and 3 agree to 0.8 %).
struct WaveSamplingRule {
    double tolerance = 0.01;
    std::size_t min_window = 2;
};

// Student's t distribution's 97.5 % quantile for `dof` degrees of freedom (table to 30, then the
// normal 1.96 plus the first terms of its expansion in 1/dof).
double student_t_975(std::size_t dof);

// The window's statistics and the error bound of skipping `skipped_waves` waves after it.
struct SteadyWaves {
    std::size_t waves = 0;          // in the window
    double mean = 0;                // the steady wave time: what a skipped wave is taken to last
    double half_width = 0;          // t x s / sqrt(n)
    double slope = 0;               // cycles per wave
    double error_cycles(std::uint64_t skipped_waves) const;
};
// wave_ends[i]: the cycle wave i+1 ended (wave 1 starts at cycle 0); the window is waves
// first_wave..wave_ends.size() (1-based). Fewer than 2 waves in the window: waves = 0.
SteadyWaves steady_waves(const std::vector<std::uint64_t>& wave_ends, std::size_t first_wave);

// Whether skipping `skipped_waves` waves now is within the rule: the window holds min_window waves
// and its error bound is at most tolerance x projected_cycles.
bool waves_converged(const SteadyWaves& steady, std::uint64_t skipped_waves, double projected_cycles,
                     const WaveSamplingRule& rule);

// Whole waves to skip when the next block to dispatch is `next_block` of `grid`: all but one of
// the full waves left, so the last full wave and the tail (grid mod wave_blocks blocks) are
// simulated after the skip. 0 when that leaves nothing to skip.
std::uint64_t waves_to_skip(std::uint64_t grid, std::uint64_t next_block, std::uint64_t wave_blocks);

// The cycles of the whole launch from the sampled run: sampled + K x the window's mean, rounded;
// the error bound is SteadyWaves::error_cycles(K).
struct WaveExtrapolation {
    double steady_wave_cycles = 0;
    std::uint64_t cycles = 0;
    double error_cycles = 0;
};
WaveExtrapolation extrapolate_cycles(std::uint64_t sampled_cycles, const SteadyWaves& steady,
                                     std::uint64_t skipped_waves);

// One counter that scales with work: sampled + waves x (at_window_end - at_window_start) /
// window_waves, rounded (the mean increase per wave over the window, from snapshots at the end of
// the window's last wave and of the wave before its first).
std::uint64_t extrapolate_counter(std::uint64_t sampled, std::uint64_t at_window_end, std::uint64_t at_window_start,
                                  std::uint64_t waves, std::size_t window_waves);

// Counters that scale with work, each as extrapolate_counter. Ratios (ipc, SIMD efficiency,
// issue-slot use) are recomputed from the extrapolated counts and `cycles`; achieved occupancy
// stays the sampled run's. blocks = the whole grid.
KernelStats extrapolate_stats(const KernelStats& sampled, const KernelStats& at_window_end,
                              const KernelStats& at_window_start, std::size_t window_waves,
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
    // A further condition for the steady state, asked at each wave's end (nullptr: none); the
    // window starts with the wave after the one at whose end it first held. GpuChip requires the
    // L2 to have turned over and begun writing back: until then its dirty outputs cost nothing and
    // the waves are faster than the steady state (a 8192 x 8192 x 128 GEMM's waves grow from 8.7k
    // to 13.5k cycles as it fills).
    std::function<bool()> steady_state_possible = nullptr;

    bool skipped() const { return skipped_waves_ > 0; }
    std::uint64_t skipped_waves() const { return skipped_waves_; }
    // The block ids skipped: skipped_from() .. skipped_from() + skipped_blocks() - 1.
    std::uint64_t skipped_from() const { return skipped_from_; }
    std::uint64_t skipped_blocks() const { return skipped_waves_ * wave_blocks_; }
    std::uint64_t wave_blocks() const { return wave_blocks_; }
    std::uint64_t grid() const { return grid_; }
    // The waves at the decision: their end cycles and the counters at each end.
    const std::vector<std::uint64_t>& wave_ends() const { return wave_ends_; }
    const std::vector<KernelStats>& snapshots() const { return snapshots_; }
    // The window at the decision: its first wave (1-based) and statistics.
    std::size_t window_first_wave() const { return window_first_; }
    const SteadyWaves& steady() const { return steady_; }
    const WaveSamplingRule& rule() const { return rule_; }

private:
    WaveSamplingRule rule_;
    std::uint64_t grid_ = 0, wave_blocks_ = 0, completed_ = 0, skipped_waves_ = 0, skipped_from_ = 0;
    bool decided_ = false;
    std::size_t window_first_ = 0;  // 0: the steady state is not possible yet
    SteadyWaves steady_;
    std::function<KernelStats()> snapshot_;
    std::vector<std::uint64_t> wave_ends_;
    std::vector<KernelStats> snapshots_;
};

}  // namespace accelsim::simt
