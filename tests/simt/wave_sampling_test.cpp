// The arithmetic of sampled simulation (models/simt/wave_sampling.h) on synthetic wave times,
// every expected value worked by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "models/simt/wave_sampling.h"

namespace accelsim::simt::wave_sampling_test {
namespace {

TEST(WaveSampling, StudentsQuantilesFromTheTableAndBeyond) {
    EXPECT_DOUBLE_EQ(student_t_975(1), 12.706);
    EXPECT_DOUBLE_EQ(student_t_975(3), 3.182);
    EXPECT_DOUBLE_EQ(student_t_975(30), 2.042);
    // 1.959964 + (1.959964^3 + 1.959964) / 4000 = 1.962336 (tables: 1.962 for 1000).
    EXPECT_NEAR(student_t_975(1000), 1.962336, 1e-6);
    EXPECT_TRUE(std::isinf(student_t_975(0)));
}

TEST(WaveSampling, SteadyWavesOfAWindowWorkedByHand) {
    // Waves 1000 (cold, outside the window), 800, 810, 808, 812. Window from wave 2: mean 3230 / 4 =
    // 807.5; deviations -7.5, 2.5, 0.5, 4.5, squares 83, s = sqrt(83 / 3) = 5.25991; half-width
    // t(3) s / 2 = 3.182 x 5.25991 / 2 = 8.36852; slope sum(dx dw) / sum(dx^2) with dx = -1.5,
    // -0.5, 0.5, 1.5: (11.25 - 1.25 + 0.25 + 6.75) / 5 = 3.4 cycles a wave.
    const SteadyWaves w = steady_waves({1000, 1800, 2610, 3418, 4230}, 2);
    EXPECT_EQ(w.waves, 4u);
    EXPECT_DOUBLE_EQ(w.mean, 807.5);
    EXPECT_NEAR(w.half_width, 8.36852, 1e-5);
    EXPECT_DOUBLE_EQ(w.slope, 3.4);
    // Skipping 3 waves: 3 x 8.36852 + 3.4 x 3 x (1.5 + 2) = 25.10556 + 35.7 = 60.80556.
    EXPECT_NEAR(w.error_cycles(3), 60.80556, 1e-5);
    // A window of one wave has no statistics.
    EXPECT_EQ(steady_waves({1000, 1800}, 2).waves, 0u);
}

TEST(WaveSampling, ConvergesWhenTheBoundIsWithinTheToleranceOfTheProjectedCycles) {
    const WaveSamplingRule rule;  // 1 %, at least 2 waves in the window
    // One wave in the window is not enough; two equal ones (no spread, no trend) give a bound of 0.
    EXPECT_FALSE(waves_converged(steady_waves({1000, 1800}, 2), 5, 10000, rule));
    EXPECT_TRUE(waves_converged(steady_waves({1000, 1800, 2600}, 2), 5, 10000, rule));
    EXPECT_FALSE(waves_converged(steady_waves({1000, 1800, 2600}, 2), 5, 10000, WaveSamplingRule{0.01, 3}));
    // Two waves 800 and 808: s = 8 / sqrt(2), half-width 12.706 x 8 / 2 = 50.824, slope 8; one
    // skipped wave: 50.824 + 8 x (0.5 + 1) = 62.824 cycles: within 1 % of 6,300 projected (6.3
    // waves of 1,000), over 1 % of 6,000.
    const SteadyWaves two = steady_waves({1000, 1800, 2608}, 2);
    EXPECT_NEAR(two.error_cycles(1), 62.824, 1e-9);
    EXPECT_TRUE(waves_converged(two, 1, 6300, rule));
    EXPECT_FALSE(waves_converged(two, 1, 6000, rule));
    EXPECT_FALSE(waves_converged(steady_waves({1000, 1800, 2600, 3400}, 2), 0, 10000, rule));  // nothing to skip
    // The window above: 60.80556 cycles for 3 skipped waves: over 1 % of 6000, within 1 % of 6100.
    const SteadyWaves w = steady_waves({1000, 1800, 2610, 3418, 4230}, 2);
    EXPECT_FALSE(waves_converged(w, 3, 6000, rule));
    EXPECT_TRUE(waves_converged(w, 3, 6100, rule));
}

TEST(WaveSampling, ADriftingWaveTimeIsNotASteadyState) {
    // Waves 800, 808, 816 after the cold one: each within 1 % of the one before (what the earlier
    // two-wave rule accepted), but growing by 8 a wave. Skipping 10: half-width 4.303 x 8 / sqrt(3)
    // = 19.87471, trend 8 x 10 x (1 + 5.5) = 520: 718.75 cycles, 6.5 % of the 11,000 projected.
    const SteadyWaves w = steady_waves({1000, 1800, 2608, 3424}, 2);
    EXPECT_DOUBLE_EQ(w.slope, 8.0);
    EXPECT_NEAR(w.error_cycles(10), 718.74706, 1e-5);
    EXPECT_FALSE(waves_converged(w, 10, 11000, WaveSamplingRule{}));
}

TEST(WaveSampling, SkipsAllButTheLastFullWaveLeft) {
    // 1000 blocks, waves of 100, next block 520: 480 left = 4 full waves + 80 (the tail); skip 3,
    // so one full wave and the tail run after the skip.
    EXPECT_EQ(waves_to_skip(1000, 520, 100), 3u);
    // 180 left = 1 full wave + 80: nothing to skip.
    EXPECT_EQ(waves_to_skip(1000, 820, 100), 0u);
    // 200 left = 2 full waves: skip 1.
    EXPECT_EQ(waves_to_skip(1000, 800, 100), 1u);
    EXPECT_EQ(waves_to_skip(1000, 1000, 100), 0u);
}

TEST(WaveSampling, ExtrapolatesCyclesFromTheWindowsMean) {
    // The window of SteadyWavesOfAWindowWorkedByHand (mean 807.5); sampled run 5000 cycles, 3 waves
    // skipped: 5000 + 2422.5, rounded half away from zero: 7423; bound 60.80556 cycles.
    const SteadyWaves w = steady_waves({1000, 1800, 2610, 3418, 4230}, 2);
    const WaveExtrapolation e = extrapolate_cycles(5000, w, 3);
    EXPECT_DOUBLE_EQ(e.steady_wave_cycles, 807.5);
    EXPECT_EQ(e.cycles, 7423u);
    EXPECT_NEAR(e.error_cycles, 60.80556, 1e-5);
}

TEST(WaveSampling, ExtrapolatesWorkCountersByTheirMeanIncreasePerWave) {
    KernelStats sampled, last, two_before;
    sampled.issued = 10000, last.issued = 8000, two_before.issued = 4000;           // +2000 per wave
    sampled.active_lanes = 320000, last.active_lanes = 256000, two_before.active_lanes = 128000;  // +64000
    sampled.mma_issued = 90, last.mma_issued = 61, two_before.mma_issued = 40;      // +10.5 per wave
    sampled.issue_cycles = 5000, last.issue_cycles = 4000, two_before.issue_cycles = 2000;
    sampled.lanes_histogram[32] = 9000, last.lanes_histogram[32] = 7000, two_before.lanes_histogram[32] = 3000;
    // A window of 2 waves, 3 waves skipped, 7427 cycles, 1000 blocks, 2 SMs of 4 sub-partitions.
    const KernelStats s = extrapolate_stats(sampled, last, two_before, 2, 3, 7427, 1000, 2, 4);
    EXPECT_EQ(s.issued, 16000u);                 // 10000 + 3 x 2000
    EXPECT_EQ(s.active_lanes, 512000u);          // 320000 + 3 x 64000
    EXPECT_EQ(s.mma_issued, 122u);               // 90 + 31.5, rounded to 122 (half away from zero)
    EXPECT_EQ(s.issue_cycles, 8000u);            // 5000 + 3 x 1000
    EXPECT_EQ(s.lanes_histogram[32], 15000u);    // 9000 + 3 x 2000
    EXPECT_EQ(s.blocks, 1000u);
    EXPECT_EQ(s.cycles, 7427u);
    EXPECT_DOUBLE_EQ(s.ipc, 16000.0 / 7427.0);
    EXPECT_DOUBLE_EQ(s.simd_efficiency, 512000.0 / (32.0 * 16000.0));  // 1.0
    EXPECT_DOUBLE_EQ(s.issue_slot_utilization, 8000.0 / (2.0 * 4.0 * 7427.0));
    // A window of 4 waves: 100 + 3 x (900 - 100) / 4 = 700.
    EXPECT_EQ(extrapolate_counter(100, 900, 100, 3, 4), 700u);
}

TEST(WaveSampling, SamplerSkipsOnceWhenTheWavesConverge) {
    // Waves of 2 blocks, grid 20. Completions at 100, 100 (wave 1 ends at 100), then every 80:
    // with at least 3 waves in the window (waves 2, 3, 4 of 80, all equal) it converges at the 8th
    // completion, when the next block is 9: 11 left = 5 full waves + 1, skip 4 = 8 block ids;
    // nothing more is asked afterwards.
    WaveSampler sampler(WaveSamplingRule{0.01, 3});
    int snapshots = 0;
    sampler.begin(20, 2, [&snapshots] {
        ++snapshots;
        return KernelStats{};
    });
    const std::uint64_t cycles[] = {100, 100, 180, 180, 260, 260, 340, 340};
    std::uint64_t skip = 0;
    for (std::size_t i = 0; i < 8; ++i) skip += sampler.block_completed(cycles[i], 2 + i);
    EXPECT_EQ(skip, 8u);
    EXPECT_TRUE(sampler.skipped());
    EXPECT_EQ(sampler.skipped_waves(), 4u);
    EXPECT_EQ(sampler.skipped_from(), 9u);  // ids 9..16 skipped
    EXPECT_EQ(sampler.skipped_blocks(), 8u);
    EXPECT_EQ(snapshots, 4);
    EXPECT_EQ(sampler.wave_ends(), (std::vector<std::uint64_t>{100, 180, 260, 340}));
    EXPECT_EQ(sampler.window_first_wave(), 2u);
    EXPECT_DOUBLE_EQ(sampler.steady().mean, 80.0);
    EXPECT_EQ(sampler.block_completed(420, 18), 0u);
}

TEST(WaveSampling, TheWindowStartsAfterTheSteadyStateBecamePossible) {
    // Grid 40 in waves of 2, a wave every 80 cycles after the first; the caller's condition holds
    // from its third call (the end of wave 3), so the window is waves 4, 5, 6, complete at the
    // 12th completion (with at least 3 waves in the window): next block 13, 27 left = 13 full
    // waves + 1, skip 12 (24 ids).
    WaveSampler sampler(WaveSamplingRule{0.01, 3});
    int asked = 0;
    sampler.steady_state_possible = [&asked] { return ++asked >= 3; };
    sampler.begin(40, 2, [] { return KernelStats{}; });
    std::uint64_t skip = 0;
    for (std::size_t i = 0; i < 12 && skip == 0; ++i) skip += sampler.block_completed(100 + 80 * (i / 2), 2 + i);
    EXPECT_EQ(skip, 24u);
    EXPECT_EQ(sampler.wave_ends().size(), 6u);
    EXPECT_EQ(sampler.window_first_wave(), 4u);
    EXPECT_EQ(asked, 3);  // not asked again once it held
}

}  // namespace
}  // namespace accelsim::simt::wave_sampling_test
