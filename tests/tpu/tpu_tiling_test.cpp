// The tiling estimate (StepPipeline, models/tpu/tpu_lowering.h): hand-worked pipelines, the
// steady-state extrapolation against a replay of every step, and its bound.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "models/tpu/tpu_lowering.h"

namespace accelsim::tpu::tpu_tiling_test {
namespace {

StepPipeline four_steps(double step_in) {
    StepPipeline p;
    p.steps = 4;
    p.steps_per_output = 4;  // one output tile, written back after the last step
    p.first_in = 10;
    p.step_in = step_in;
    p.output = 2;
    p.latency = 0;
    p.cold = 8;
    p.warm = 5;
    return p;
}

TEST(StepPipeline, DataInTimeHidesTheFillAndLateDataExposesPartOfIt) {
    // step_in 4 < warm 5; a step ends at max(previous end + 5, its data + 8).
    // Step 0: data at 10, ends 18. Step 1 (requested at 0): data at 14, max(23, 22) = 23: its
    // fill hid behind step 0. Step 2 (requested at 18, when step 0's buffer frees): data at 22,
    // max(28, 30) = 30: the data came 1 cycle before step 1 ended, 3 (= cold - warm) were needed,
    // so 2 cycles of fill show. Step 3 (at 23): data at 27, max(35, 35) = 35. Write-back: 37.
    const StepPipeline p = four_steps(4);
    EXPECT_DOUBLE_EQ(p.replayed_cycles(), 37.0);
    EXPECT_DOUBLE_EQ(p.cycles(), 37.0);
    EXPECT_DOUBLE_EQ(p.lower_bound(), 35.0);  // the first step cold, then every step warm
}

TEST(StepPipeline, ATransferThatFallsBehindPaysTheWaitAndTheRefill) {
    // step_in 10 > warm 5. Step 0: 10, 18. Step 1: data at 20, max(23, 28) = 28. Step 2
    // (requested at 18): data at 30, 38. Step 3 (at 28): 40, 48. Write-back: 50. Both costs
    // count: the wait for data and the fill it can no longer hide: transfers back to back, then
    // the last step from its data (10 + 3 x 10 + 8 + 2 = 50, the lower bound, reached).
    const StepPipeline p = four_steps(10);
    EXPECT_DOUBLE_EQ(p.replayed_cycles(), 50.0);
    EXPECT_DOUBLE_EQ(p.cycles(), 50.0);
    EXPECT_DOUBLE_EQ(p.lower_bound(), 50.0);
}

TEST(StepPipeline, LeadStepsCarryTheirOwnTransfer) {
    // Steps 1 and 2 move 10 cycles of data (an A panel from HBM), step 3 moves 4.
    // Step 0: 10, 18. Step 1: data at 20, 28. Step 2 (at 18): 30, 38. Step 3 (at 28): data at
    // 34, max(43, 42) = 43. Write-back 45.
    StepPipeline p = four_steps(4);
    p.lead_steps = 3;
    p.lead_in = 10;
    EXPECT_DOUBLE_EQ(p.replayed_cycles(), 45.0);
    EXPECT_DOUBLE_EQ(p.cycles(), 45.0);
}

TEST(StepPipeline, ExtrapolatedSteadyStateEqualsTheReplayOfEveryStep) {
    // Random pipelines, long enough that cycles() replays only a few periods and extrapolates.
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> cycles(1.0, 400.0);
    std::uniform_int_distribution<int> per_output(1, 9), lead(0, 40);
    std::uniform_int_distribution<std::int64_t> steps(50, 3000);
    for (int trial = 0; trial < 2000; ++trial) {
        StepPipeline p;
        p.steps = steps(rng);
        p.steps_per_output = per_output(rng);
        p.first_in = cycles(rng);
        p.step_in = cycles(rng);
        p.lead_steps = lead(rng);
        p.lead_in = cycles(rng);
        p.output = cycles(rng) / 4;
        p.latency = cycles(rng) / 8;
        p.warm = cycles(rng);
        p.cold = p.warm + cycles(rng);
        const double replayed = p.replayed_cycles();
        ASSERT_NEAR(p.cycles(), replayed, 1e-9 * replayed) << "trial " << trial << ": steps " << p.steps
                                                            << ", steps_per_output " << p.steps_per_output;
        ASSERT_LE(p.lower_bound(), replayed * (1 + 1e-12)) << "trial " << trial;
    }
}

TEST(StepPipeline, MoreBandwidthNeverMakesTheEstimateSlower) {
    // Every transfer time scaled down (more bandwidth): each step's data arrives no later, and a
    // step's end is a max of sums of earlier times, so none ends later (max-plus monotonicity).
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> cycles(1.0, 400.0);
    for (int trial = 0; trial < 500; ++trial) {
        StepPipeline p;
        p.steps = 200;
        p.steps_per_output = 1 + trial % 5;
        p.first_in = cycles(rng);
        p.step_in = cycles(rng);
        p.output = cycles(rng) / 4;
        p.latency = 20;
        p.warm = cycles(rng);
        p.cold = p.warm + cycles(rng);
        double previous = p.cycles();
        for (double scale = 0.9; scale > 0.05; scale -= 0.1) {
            StepPipeline faster = p;
            faster.first_in *= scale;
            faster.step_in *= scale;
            faster.output *= scale;
            const double now = faster.cycles();
            ASSERT_LE(now, previous * (1 + 1e-12)) << "trial " << trial << ", scale " << scale;
            previous = now;
        }
    }
}

}  // namespace
}  // namespace accelsim::tpu::tpu_tiling_test
