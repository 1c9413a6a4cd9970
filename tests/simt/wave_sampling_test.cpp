// The arithmetic of sampled simulation (models/simt/wave_sampling.h) on synthetic wave times,
// every expected value worked by hand in the comments.
#include <gtest/gtest.h>

#include <vector>

#include "models/simt/wave_sampling.h"

namespace accelsim::simt {
namespace {

TEST(WaveSampling, ConvergesOnlyAfterTheFirstWaveAndTwoMore) {
    const WaveSamplingRule rule;  // 1%, 3 waves
    // Two equal waves are not enough: the first (cold) wave and two after it are required.
    EXPECT_FALSE(waves_converged({1000, 2000}, rule));
    // Waves 1000, 800, 800: |800 - 800| = 0 <= 1% of 800.
    EXPECT_TRUE(waves_converged({1000, 1800, 2600}, rule));
    // Waves 1000, 800, 810: |810 - 800| = 10 > 8 (1% of 800).
    EXPECT_FALSE(waves_converged({1000, 1800, 2610}, rule));
    // Then a fourth wave of 808: |808 - 810| = 2 <= 8.1.
    EXPECT_TRUE(waves_converged({1000, 1800, 2610, 3418}, rule));
    // Exactly at the tolerance counts: 800 then 808 is 8 = 1% of 800.
    EXPECT_TRUE(waves_converged({1000, 1800, 2608}, rule));
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

TEST(WaveSampling, ExtrapolatesCyclesFromTheMeanOfTheLastTwoWaves) {
    // Waves 1000, 800, 810, 808: steady = (808 + 810) / 2 = 809. Sampled run 5000 cycles, 3 waves
    // skipped: 5000 + 3 x 809 = 7427; bound 3 x |808 - 810| = 6 cycles.
    const WaveExtrapolation e = extrapolate_cycles(5000, {1000, 1800, 2610, 3418}, 3);
    EXPECT_DOUBLE_EQ(e.steady_wave_cycles, 809.0);
    EXPECT_EQ(e.cycles, 7427u);
    EXPECT_DOUBLE_EQ(e.error_cycles, 6.0);
    // An odd sum rounds to nearest: waves 801 and 800, steady 800.5, 1 skipped: 1000 + 800.5 -> 1001
    // (llround rounds half away from zero).
    EXPECT_EQ(extrapolate_cycles(200, {1000, 1801, 2601}, 1).cycles, 1001u);
}

TEST(WaveSampling, ExtrapolatesWorkCountersByTheirMeanIncreasePerWave) {
    KernelStats sampled, last, two_before;
    sampled.issued = 10000, last.issued = 8000, two_before.issued = 4000;           // +2000 per wave
    sampled.active_lanes = 320000, last.active_lanes = 256000, two_before.active_lanes = 128000;  // +64000
    sampled.mma_issued = 90, last.mma_issued = 61, two_before.mma_issued = 40;      // +10.5 per wave
    sampled.issue_cycles = 5000, last.issue_cycles = 4000, two_before.issue_cycles = 2000;
    sampled.lanes_histogram[32] = 9000, last.lanes_histogram[32] = 7000, two_before.lanes_histogram[32] = 3000;
    // 3 waves skipped, 7427 cycles, 1000 blocks, 2 SMs of 4 sub-partitions.
    const KernelStats s = extrapolate_stats(sampled, last, two_before, 3, 7427, 1000, 2, 4);
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
}

TEST(WaveSampling, SamplerSkipsOnceWhenTheWavesConverge) {
    // Waves of 2 blocks, grid 20. Completions at 100, 100 (wave 1 ends at 100), 180, 180 (wave 2:
    // 80), 260, 260 (wave 3: 80, converged). Next block then 7: 13 left = 6 full waves + 1, skip 5
    // = 10 block ids; nothing more is asked afterwards.
    WaveSampler sampler;
    int snapshots = 0;
    sampler.begin(20, 2, [&snapshots] {
        ++snapshots;
        return KernelStats{};
    });
    const std::uint64_t cycles[] = {100, 100, 180, 180, 260, 260};
    std::uint64_t skip = 0;
    for (std::size_t i = 0; i < 6; ++i) skip += sampler.block_completed(cycles[i], 2 + i);
    EXPECT_EQ(skip, 10u);
    EXPECT_TRUE(sampler.skipped());
    EXPECT_EQ(sampler.skipped_waves(), 5u);
    EXPECT_EQ(snapshots, 3);
    EXPECT_EQ(sampler.wave_ends(), (std::vector<std::uint64_t>{100, 180, 260}));
    EXPECT_EQ(sampler.block_completed(340, 18), 0u);
}

}  // namespace
}  // namespace accelsim::simt
