// Non-blocking global memory and the SM windows of launch(): with a fixed latency a windowed run
// must equal the blocking run-ahead one cycle for cycle (the blocking run is the reference: with
// no contention, serving a request late changes nothing as long as its answer comes in time), for
// any window up to the latency; and the L1 merges a miss into a fill already in flight.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "models/simt/simt_gpu.h"
#include "models/simt/simt_module.h"

namespace accelsim::simt::memory_windows_test {
namespace {

const std::string kKernels = std::string(ACCELSIM_SOURCE_DIR) + "/models/simt/kernels/";

SimtParams a100_like(int sms, bool l1) {
    SimtParams p;
    p.sms = sms;
    p.sm.limits = *published_limits("sm_80");
    if (l1) p.sm.l1.bytes = 64 * 1024;
    return p;
}

std::uint32_t float_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

void expect_same(const KernelStats& a, const KernelStats& b, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(a.cycles, b.cycles);
    EXPECT_EQ(a.issued, b.issued);
    EXPECT_EQ(a.issue_cycles, b.issue_cycles);
    EXPECT_EQ(a.idle_cycles, b.idle_cycles);
    EXPECT_EQ(a.scoreboard_cycles, b.scoreboard_cycles);
    EXPECT_EQ(a.pipeline_cycles, b.pipeline_cycles);
    EXPECT_EQ(a.barrier_cycles, b.barrier_cycles);
    EXPECT_EQ(a.global_sectors, b.global_sectors);
    EXPECT_EQ(a.l1_hits, b.l1_hits);
    EXPECT_EQ(a.l1_misses, b.l1_misses);
    EXPECT_EQ(a.l1_merges, b.l1_merges);
    EXPECT_EQ(a.blocks, b.blocks);
    EXPECT_DOUBLE_EQ(a.achieved_occupancy, b.achieved_occupancy);
}

struct Case {
    const char* file;
    Dim dims;
    int words;
    std::vector<std::uint32_t> (*args)(std::uint32_t base);
};

const Case kCases[] = {
    // Blocks of 96 threads leave an uneven tail, so the dispatch order matters.
    {"saxpy.sasm", {43, 96}, 8192, [](std::uint32_t b) { return std::vector<std::uint32_t>{4096, float_bits(2.0f), b, b + 16384}; }},
    {"reduce.sasm", {7, 256}, 4096, [](std::uint32_t b) { return std::vector<std::uint32_t>{1700, b, b + 8192}; }},
    {"gemm_smem.sasm", {4, 256}, 3 * 1024, [](std::uint32_t b) { return std::vector<std::uint32_t>{32, 32, 32, b, b + 4096, b + 8192}; }},
    {"gemm_mma.sasm", {4, 32}, 4096, [](std::uint32_t b) { return std::vector<std::uint32_t>{32, 16, 64, b, b + 4096, b + 8192}; }},
};

KernelStats run(const Case& c, bool l1, GlobalMemoryPort& port, std::uint64_t max_window = 0) {
    const Kernel k = assemble_file(kKernels + c.file);
    GlobalMemory mem;
    const std::uint32_t base = mem.allocate(4 * static_cast<std::size_t>(c.words));
    for (int i = 0; i < c.words; ++i) mem.store_f32(base + 4 * static_cast<std::uint32_t>(i), 0.25f * static_cast<float>(i % 11));
    LaunchOptions o;
    o.max_window_cycles = max_window;
    return launch(k, c.dims, c.args(base), mem, a100_like(3, l1), &port, o);
}

TEST(MemoryWindows, FixedLatencyWindowsEqualTheBlockingRun) {
    for (const Case& c : kCases)
        for (const bool l1 : {false, true}) {
            FixedLatencyMemory blocking(400), windowed(400, true);
            ASSERT_EQ(blocking.lookahead_cycles(), 0u);
            ASSERT_EQ(windowed.lookahead_cycles(), 400u);
            const KernelStats reference = run(c, l1, blocking);
            const std::string what = std::string(c.file) + (l1 ? " with L1" : " without L1");
            expect_same(reference, run(c, l1, windowed), what);
            EXPECT_EQ(windowed.read_sectors(), blocking.read_sectors()) << what;
            EXPECT_EQ(windowed.write_sectors(), blocking.write_sectors()) << what;
            // Windows of 1 and 37 cycles: any window up to the latency gives the same run.
            FixedLatencyMemory one(400, true), odd(400, true);
            expect_same(reference, run(c, l1, one, 1), what + ", 1-cycle windows");
            expect_same(reference, run(c, l1, odd, 37), what + ", 37-cycle windows");
        }
}

TEST(MemoryWindows, L1MissMergesIntoTheFillInFlight) {
    // Two warps of one block (slots 0 and 1, sub-partitions 0 and 1) load the same word at cycle 0;
    // L1 hit latency 33, memory 400. Warp 0 misses: the sector leaves at 33, is back at 433. Warp 1
    // looks it up in the same cycle, finds the fill in flight and waits for it: no second request,
    // its data also at max(0 + 33, 433) = 433. Both add at 433 and exit at 434: done at 435.
    const Kernel k = assemble(".param x\n.reg 3\nld.global r1, [x]\nadd r2, r1, 1\nexit\n", "merge.sasm");
    for (const bool non_blocking : {false, true}) {
        SCOPED_TRACE(non_blocking ? "non-blocking" : "blocking");
        GlobalMemory mem;
        const std::uint32_t x = mem.allocate(128);
        FixedLatencyMemory port(400, non_blocking);
        const KernelStats s = launch(k, {1, 64}, {x}, mem, a100_like(1, true), &port);
        EXPECT_EQ(s.cycles, 435u);
        EXPECT_EQ(port.read_sectors(), 1u);
        EXPECT_EQ(s.l1_hits, 0u);
        EXPECT_EQ(s.l1_misses, 2u);
        EXPECT_EQ(s.l1_merges, 1u);
        EXPECT_EQ(s.scoreboard_cycles, 2u * (433u - 1u));  // each warp's sub-partition waits 1..432
    }
}

TEST(MemoryWindows, SystemCWindowsGiveTheSameCyclesAsLaunch) {
    const Case& c = kCases[0];
    FixedLatencyMemory reference_port(400);
    const KernelStats reference = run(c, true, reference_port);
    const Kernel k = assemble_file(kKernels + c.file);
    GlobalMemory mem;
    const std::uint32_t base = mem.allocate(4 * static_cast<std::size_t>(c.words));
    for (int i = 0; i < c.words; ++i) mem.store_f32(base + 4 * static_cast<std::uint32_t>(i), 0.25f * static_cast<float>(i % 11));
    FixedLatencyMemory port(400, true);
    SimtChipModule chip("chip", 3);
    const KernelStats s = chip.launch(k, c.dims, c.args(base), mem, a100_like(3, true), &port);
    EXPECT_EQ(s.cycles, reference.cycles);
    EXPECT_EQ(s.issued, reference.issued);
    EXPECT_EQ(s.l1_merges, reference.l1_merges);
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(static_cast<double>(s.cycles), sc_core::SC_NS));
    // y = 2 x + y computed through the windows (x[i] and y[i] as filled above: exact in fp32).
    for (std::uint32_t i = 0; i < 4096; ++i) {
        const float x = 0.25f * static_cast<float>(i % 11), y = 0.25f * static_cast<float>((i + 4096) % 11);
        ASSERT_EQ(mem.load_f32(base + 16384 + 4 * i), 2.0f * x + y) << i;
    }
}

TEST(MemoryWindows, ALoadInFlightAcrossABarrierDoesNotReleaseItsWarp) {
    // Warp 0 issues a global load it does not read, then waits at bar.sync; warp 1 spins for a
    // few thousand cycles, writes 7 to shared word 0 and arrives. Warp 0 must read 7 after the
    // barrier. (The load's answer, 400 cycles later, once cleared warp 0's blocked state while it
    // waited, so it ran past the barrier and read 0; multi-stage GEMM pipelines hit this.)
    const Kernel k = assemble(R"(
.kernel barrier_with_load_in_flight
.param in, out
.reg 8
.shared 4
    mov r0, %tid
    shr r1, r0, 5
    setp.ne.s32 p0, r1, 0
    @p0 bra late
    mov r7, in
    ld.global r2, [r7]
    bar.sync
    ld.shared r3, [0]
    shl r4, r0, 2
    add r4, r4, out
    st.global [r4], r3
    exit
late:
    mov r5, 0
spin:
    add r5, r5, 1
    setp.lt.s32 p1, r5, 300
    @p1 bra spin
    mov r6, 7
    st.shared [0], r6
    bar.sync
    exit
)", "barrier_test");
    for (const bool non_blocking : {false, true}) {
        SCOPED_TRACE(non_blocking ? "non-blocking port" : "blocking port");
        GlobalMemory mem;
        const std::uint32_t in = mem.allocate(4), out = mem.allocate(4 * 32);
        FixedLatencyMemory port(400, non_blocking);
        const KernelStats s = launch(k, {1, 64}, {in, out}, mem, a100_like(1, false), &port, LaunchOptions{});
        EXPECT_GT(s.cycles, 1000u);  // the spin outlasts the load
        for (std::uint32_t lane = 0; lane < 32; ++lane) EXPECT_EQ(mem.load32(out + 4 * lane), 7u) << "lane " << lane;
    }
}

}  // namespace
}  // namespace accelsim::simt::memory_windows_test
