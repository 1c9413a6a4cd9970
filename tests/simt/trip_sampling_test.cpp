// Loop-trip sampling (trip_sampling.h): the trip-time fit and the skip rule worked by hand, and
// advance_loop_trips against the closed form of a loop's registers and stores. The sampled GEMMs
// against full simulation are in tests/gpu_engine/wave_sampling_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "models/simt/execution.h"
#include "models/simt/isa.h"
#include "models/simt/trip_sampling.h"

namespace accelsim::simt::trip_sampling_test {
namespace {

TEST(TripSampling, SteadyTripsFitsTheCrossingTimes) {
    // Crossings 0, 11, 20, 29, 40 (x = -2..2, mean 20). T = sum x (t - 20) / sum x^2 =
    // (40 + 9 + 0 + 9 + 40) / 10 = 9.8. With q = x^2 - 2 = 2, -1, -2, -1, 2: sum q (t - 20) =
    // -40 + 9 + 0 - 9 + 40 = 0, so c = 0 and the slope 0. Residuals t - 20 - 9.8 x: -0.4, 0.8, 0,
    // -0.8, 0.4; their squares sum to 1.6 over 5 - 3 = 2 degrees of freedom: sigma = sqrt(0.8);
    // half-width t(2) x sigma / sqrt(10) = 4.303 x 0.894427 / 3.162278 = 3.848720 / 3.162278 = 1.217072.
    const SteadyTrips s = steady_trips({0, 11, 20, 29, 40}, 0);
    EXPECT_EQ(s.trips, 4u);
    EXPECT_NEAR(s.mean, 9.8, 1e-12);
    EXPECT_NEAR(s.slope, 0.0, 1e-12);
    EXPECT_NEAR(s.half_width, 1.217072, 1e-6);
    // The window starts at `first`: the same points after two leading ones.
    const SteadyTrips later = steady_trips({-500, -300, 0, 11, 20, 29, 40}, 2);
    EXPECT_EQ(later.trips, 4u);
    EXPECT_NEAR(later.mean, 9.8, 1e-12);
    // Trip times growing by 1 a trip (t_k = 10 k + k^2 / 2, k = 0..4: 0, 10.5, 22, 34.5, 48):
    // centred x = k - 2, t = 22 + 12 x + 0.5 (x^2 - 2): T 12 (the centre trip's time), slope 2c = 1,
    // an exact fit (half-width 0).
    const SteadyTrips growing = steady_trips({0, 10.5, 22, 34.5, 48}, 0);
    EXPECT_NEAR(growing.mean, 12.0, 1e-12);
    EXPECT_NEAR(growing.slope, 1.0, 1e-12);
    EXPECT_NEAR(growing.half_width, 0.0, 1e-9);
    // Fewer than 4 crossings in the window: nothing.
    EXPECT_EQ(steady_trips({0, 10, 20}, 0).trips, 0u);
}

TEST(TripSampling, SkipsTheMostTripsWithinTheTolerance) {
    SteadyTrips s;
    s.trips = 8;
    s.mean = 1000;
    s.half_width = 5;
    // No trend: N x 5 <= 0.01 x N x 1000 for every N, so all the trips offered.
    EXPECT_EQ(trips_within(s, 40, 0.01), 40u);
    // Slope 1 cycle a trip, window of 8 (d = 4): 5 + 4 + (N + 1) / 2 <= 10 holds for N <= 1.
    s.slope = 1;
    EXPECT_EQ(trips_within(s, 40, 0.01), 1u);
    EXPECT_NEAR(s.error_cycles(1), 1 * 5 + 1.0 * 1 * (4 + 1), 1e-12);
    // Slope 0.1: 5 + 0.1 (4 + (N + 1) / 2) <= 10, (N + 1) / 2 <= 46: N <= 91, so the 40 offered.
    s.slope = 0.1;
    EXPECT_EQ(trips_within(s, 40, 0.01), 40u);
    EXPECT_EQ(trips_within(s, 200, 0.01), 91u);
    // A half-width above the tolerance: none.
    s.half_width = 11;
    EXPECT_EQ(trips_within(s, 40, 0.01), 0u);
}

// Two warps; trip j adds j to r1 and stores j to out2[tid]; the two warps meet at a barrier each
// trip; after the loop each thread stores its sum to out[tid].
constexpr const char* kLoopKernel = R"(
.kernel sums
.param out, out2, trips
.reg 6
    mov r0, 0
    mov r1, 0
    mov r2, %tid
    shl r3, r2, 2
    add r4, r3, out2
loop:
    add r0, r0, 1
    add r1, r1, r0
    st.global [r4], r0
    bar.sync
    setp.lt.s32 p0, r0, trips
    @p0 bra loop
    add r3, r3, out
    st.global [r3], r1
    exit
)";

TEST(TripSampling, AdvancedBlockIsTheBlockThoseTripsLater) {
    const Kernel k = assemble(kLoopKernel, "sums.sasm");
    const int head = k.labels.at("loop");
    int back_edge = -1;
    for (int pc = head; pc < static_cast<int>(k.code.size()); ++pc)
        if (k.code[static_cast<std::size_t>(pc)].op == Opcode::bra) back_edge = pc;
    SampledLoop loop{head, back_edge, 19};  // 20 trips: 19 back-edges
    EXPECT_TRUE(loop_can_be_sampled(k, loop));
    EXPECT_FALSE(loop_can_be_sampled(k, SampledLoop{head, back_edge - 1, 19}));  // not the branch

    GlobalMemory mem(1 << 16);
    const std::uint32_t out = mem.allocate(256), out2 = mem.allocate(256);
    const Dim dims{1, 64};
    WarpExecutor exec(k, mem, dims, {out, out2, 20}, false);
    exec.count_trips_at(back_edge);
    Block block;
    block.shared.assign(static_cast<std::size_t>(k.shared_bytes), 0);
    block.live_warps = 2;
    std::vector<Warp> warps(2);
    for (int i = 0; i < 2; ++i) warps[static_cast<std::size_t>(i)].reset(k.registers, 0, i, dims.block, 0);
    StepResult r;
    const auto step = [&](Warp& w) {
        exec.step(w, block, r);
        if (block.arrived == block.live_warps) {
            for (Warp& each : warps) each.at_barrier = false;
            block.arrived = 0;
        }
    };
    // Both warps round-robin until warp 0 has taken 3 back-edges (it is at trip 4's head); then
    // warp 1 alone to just before trip 4's store, and warp 0 alone into trip 4's barrier, where it
    // waits for warp 1.
    const int bar_pc = back_edge - 2, store_pc = back_edge - 3;
    while (warps[0].trips < 3)
        for (Warp& w : warps)
            if (!w.at_barrier) step(w);
    while (!(warps[1].trips == 3 && warps[1].pc() == store_pc)) step(warps[1]);
    while (!warps[0].at_barrier) step(warps[0]);
    ASSERT_EQ(warps[0].pc(), bar_pc + 1);
    ASSERT_EQ(block.arrived, 1);

    WarpExecutor scratch(k, mem, dims, {out, out2, 20}, false);
    scratch.count_trips_at(back_edge);
    int sectors = 0, stores = 0;
    advance_loop_trips(scratch, block, {&warps[0], &warps[1]}, 10, [&](std::uint32_t sector, bool write) {
        ++sectors;
        stores += write ? 1 : 0;
        EXPECT_TRUE(sector == out2 || sector == out2 + 32 || sector == out2 + 64 || sector == out2 + 96 ||
                    sector == out2 + 128 || sector == out2 + 160 || sector == out2 + 192 || sector == out2 + 224);
    });
    // Where each stood, ten trips on: warp 0 waiting at trip 14's barrier (r0 = 14, r1 = 1 + .. +
    // 14 = 105), warp 1 before trip 14's store (r0 = 14, r1 = 105).
    EXPECT_EQ(warps[0].trips, 13u);
    EXPECT_EQ(warps[1].trips, 13u);
    EXPECT_EQ(warps[0].pc(), bar_pc + 1);
    EXPECT_TRUE(warps[0].at_barrier);
    EXPECT_EQ(warps[1].pc(), store_pc);
    EXPECT_FALSE(warps[1].at_barrier);
    EXPECT_EQ(block.arrived, 1);
    for (int w = 0; w < 2; ++w)
        for (int lane = 0; lane < 32; ++lane) {
            EXPECT_EQ(warps[static_cast<std::size_t>(w)].regs[0 * 32 + static_cast<std::size_t>(lane)], 14u);
            EXPECT_EQ(warps[static_cast<std::size_t>(w)].regs[1 * 32 + static_cast<std::size_t>(lane)], 105u);
        }
    // The stores of trips 4..13 (warp 1) and 5..14 (warp 0): ten 128-byte stores a warp, four
    // sectors each; the last value warp 0 stored is 14, warp 1's 13.
    EXPECT_EQ(sectors, 80);
    EXPECT_EQ(stores, 80);
    EXPECT_EQ(mem.load32(out2), 14u);
    EXPECT_EQ(mem.load32(out2 + 4 * 32), 13u);
    // Only the scratch executor saw the instructions.
    EXPECT_GT(scratch.counters().issued, 0u);

    // Run on to the end: every thread's sum is 1 + .. + 20 = 210, as a run without the advance.
    for (bool running = true; running;) {
        running = false;
        for (Warp& w : warps) {
            if (w.finished || w.at_barrier) continue;
            exec.step(w, block, r);
            running = true;
            if (r.warp_finished) --block.live_warps;
            if (block.live_warps > 0 && block.arrived == block.live_warps) {
                for (Warp& each : warps) each.at_barrier = false;
                block.arrived = 0;
            }
        }
    }
    EXPECT_EQ(warps[0].trips, 19u);
    for (int t = 0; t < 64; ++t) EXPECT_EQ(mem.load32(out + 4 * static_cast<std::uint32_t>(t)), 210u) << t;
}

TEST(TripSampling, AdvanceRefusesToRunPastTheLoop) {
    const Kernel k = assemble(kLoopKernel, "sums.sasm");
    int back_edge = -1;
    for (int pc = 0; pc < static_cast<int>(k.code.size()); ++pc)
        if (k.code[static_cast<std::size_t>(pc)].op == Opcode::bra) back_edge = pc;
    GlobalMemory mem(1 << 16);
    const std::uint32_t out = mem.allocate(256), out2 = mem.allocate(256);
    WarpExecutor exec(k, mem, {1, 32}, {out, out2, 3}, false);
    exec.count_trips_at(back_edge);
    Block block;
    block.live_warps = 1;
    Warp w;
    w.reset(k.registers, 0, 0, 32, 0);
    // Three trips, two back-edges: asking for five more from the start runs off the loop's end.
    EXPECT_THROW(advance_loop_trips(exec, block, {&w}, 5, nullptr), SimtError);
}

}  // namespace
}  // namespace accelsim::simt::trip_sampling_test
