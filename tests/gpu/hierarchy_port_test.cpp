// gpu::HierarchyMemoryPort: the SIMT core's global-memory port over the L2 + HBM models. The
// numbers are worked out by hand from the parameters set in each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "models/gpu/hierarchy_port.h"
#include "tests/gpu/small_gpu_memory.h"
#include "models/simt/isa.h"
#include "models/simt/simt_gpu.h"
#include "models/simt/wave_sampling.h"

namespace accelsim::gpu::hierarchy_port_test {
namespace {

memory::MemoryHierarchyParams small_gpu() { return test::small_gpu(2); }  // two SMs

TEST(HierarchyPort, HbmPeakPerCycle) {
    // 8 channels x 16 bytes x 2 Gb/s = 256 GB/s; at 1 GHz that is 256 bytes per SM cycle.
    HierarchyMemoryPort port(small_gpu());
    EXPECT_DOUBLE_EQ(port.hbm_bytes_per_cycle(), 256.0);
}

TEST(HierarchyPort, L2HitTakesCrossbarPlusHitLatency) {
    HierarchyMemoryPort port(small_gpu());
    const std::uint64_t miss_done = port.access(0, 0x1000, false, 0);
    // A miss goes to HBM (row activate, CAS, burst): certainly longer than an L2 hit.
    EXPECT_GT(miss_done, 201u);
    // Later, the same sector hits: 32 B through a 64 B/cycle crossbar port = 1 cycle, then the
    // 200-cycle hit latency: done at 10000 + 1 + 200.
    EXPECT_EQ(port.access(10000, 0x1000, false, 1), 10201u);
    const HierarchyTraffic t = port.traffic();
    EXPECT_EQ(t.l2_read_bytes, 64u);  // two sectors asked of the L2
    EXPECT_EQ(t.l2_accesses, 2u);
    EXPECT_EQ(t.l2_hits, 1u);
    EXPECT_EQ(t.hbm_read_bytes, 32u);  // the L2 fetches only the missing sector
    EXPECT_EQ(t.hbm_write_bytes, 0u);
}

TEST(HierarchyPort, StoresOfWholeSectorsNeedNoFill) {
    HierarchyMemoryPort port(small_gpu());
    // Four stores cover one 128 B line: write-allocate without fetch, so nothing reaches HBM
    // (the dirty line stays in the L2: 1 MiB is far from full).
    for (std::uint32_t s = 0; s < 4; ++s) port.access(0, 0x2000 + 32 * s, true, 0);
    const HierarchyTraffic t = port.traffic();
    EXPECT_EQ(t.l2_write_bytes, 128u);
    EXPECT_EQ(t.hbm_bytes(), 0u);
}

TEST(HierarchyPort, StreamingReadsRespectHbmPeak) {
    HierarchyMemoryPort port(small_gpu());
    // 4096 distinct sectors (128 KiB, every sector of 1024 lines) all asked for at cycle 0 by two
    // SMs. They must all come from HBM: 131072 B / 256 B per cycle = 512 cycles at the very least.
    std::uint64_t last = 0;
    for (std::uint32_t i = 0; i < 4096; ++i) last = std::max(last, port.access(0, 32 * i, false, static_cast<int>(i % 2)));
    const HierarchyTraffic t = port.traffic();
    EXPECT_EQ(t.hbm_read_bytes, 131072u);
    EXPECT_GE(static_cast<double>(last), 131072.0 / port.hbm_bytes_per_cycle());
}

TEST(HierarchyPort, NonIntegerClockRoundsUpAndStaysAfterIssue) {
    memory::MemoryHierarchyParams p = small_gpu();
    p.clock_hz = 1.41e9;  // 709.22 ps per cycle
    HierarchyMemoryPort port(p);
    port.access(0, 0x40, false, 0);  // warm the line
    // Hit at cycle 1000: arrival 709220 ps; 1 crossbar cycle + 200 hit cycles = 201 cycles later
    // in picoseconds (each rounded to the ps), so the data is usable at SM cycle 1201.
    EXPECT_EQ(port.access(1000, 0x40, false, 0), 1201u);
}

TEST(HierarchyPort, DrivesASimtKernel) {
    // saxpy over 4096 elements on 2 SMs through the port: x and y are read once (32 KiB from HBM),
    // y is written back into the L2 (16 KiB of stores, no HBM writes while the L2 holds it).
    const simt::Kernel k = simt::assemble_file(std::string(ACCELSIM_SOURCE_DIR) + "/models/simt/kernels/saxpy.sasm");
    simt::GlobalMemory mem;
    const std::uint32_t n = 4096;
    const std::uint32_t x = mem.allocate(4 * n), y = mem.allocate(4 * n);
    for (std::uint32_t i = 0; i < n; ++i) {
        mem.store_f32(x + 4 * i, static_cast<float>(i));
        mem.store_f32(y + 4 * i, 1.0f);
    }
    simt::SimtParams params;
    params.sms = 2;
    HierarchyMemoryPort port(small_gpu());
    simt::LaunchOptions options;
    options.sm_quantum_cycles = 64;
    const simt::KernelStats s = simt::launch(k, {16, 256}, {n, 0x40000000u /* 2.0f */, x, y}, mem, params, &port, options);
    EXPECT_FLOAT_EQ(mem.load_f32(y + 4 * 100), 201.0f);  // 2 * 100 + 1
    const HierarchyTraffic t = port.traffic();
    EXPECT_EQ(t.l2_read_bytes, 2u * 4 * n);
    EXPECT_EQ(t.l2_write_bytes, 4u * n);
    EXPECT_EQ(t.hbm_read_bytes, 2u * 4 * n);
    EXPECT_EQ(t.hbm_write_bytes, 0u);
    EXPECT_GE(static_cast<double>(s.cycles), static_cast<double>(t.hbm_bytes()) / port.hbm_bytes_per_cycle());
}

TEST(HierarchyPort, ASampledLaunchLeavesTheL2TheFullLaunchLeaves) {
    // saxpy over 49,152 elements in 192 blocks of 256 threads on 2 SMs: waves of 16 blocks (8
    // resident per SM), so sampling can skip whole waves. x and y take 3,072 lines (384 KiB), well
    // inside the 1 MiB L2: the full launch leaves every one of them, all four sectors valid, y's
    // 1,536 dirty. The sampled launch must leave the same lines, the skipped blocks' included.
    const simt::Kernel k = simt::assemble_file(std::string(ACCELSIM_SOURCE_DIR) + "/models/simt/kernels/saxpy.sasm");
    const std::uint32_t n = 192 * 256;
    auto run = [&](simt::WaveSampler* sampler) {
        simt::GlobalMemory mem;
        const std::uint32_t x = mem.allocate(4 * n), y = mem.allocate(4 * n);
        simt::SimtParams params;
        params.sms = 2;
        HierarchyMemoryPort port(small_gpu());
        simt::LaunchOptions options;
        options.wave_sampler = sampler;
        simt::launch(k, {192, 256}, {n, 0x40000000u /* 2.0f */, x, y}, mem, params, &port, options);
        std::vector<std::tuple<std::uint64_t, int, int>> lines;
        for (const auto& l : port.l2_lines()) lines.emplace_back(l.line_address, l.valid, l.dirty);
        std::sort(lines.begin(), lines.end());
        return lines;
    };
    const auto full = run(nullptr);
    ASSERT_EQ(full.size(), 3072u);
    int dirty = 0;
    for (const auto& [line, valid, d] : full) {
        EXPECT_EQ(valid, 0xF) << line;
        dirty += d == 0xF ? 1 : 0;
    }
    EXPECT_EQ(dirty, 1536);
    simt::WaveSampler sampler(simt::WaveSamplingRule{1.0, 2});  // any two waves will do
    const auto sampled = run(&sampler);
    ASSERT_GT(sampler.skipped_waves(), 0u);
    EXPECT_EQ(sampler.wave_blocks(), 16u);
    EXPECT_EQ(sampled, full);
}

TEST(LaunchQuantum, WindowsGiveTheRunAheadCyclesOnOneSm) {
    // With one SM nothing is shared, so lock-step windows must not change a single cycle.
    const simt::Kernel k = simt::assemble_file(std::string(ACCELSIM_SOURCE_DIR) + "/models/simt/kernels/reduce.sasm");
    auto run = [&](std::uint64_t quantum) {
        simt::GlobalMemory mem;
        const std::uint32_t in = mem.allocate(4 * 2048), out = mem.allocate(4 * 8);
        simt::SimtParams params;
        simt::FixedLatencyMemory port(300);
        simt::LaunchOptions options;
        options.sm_quantum_cycles = quantum;
        return simt::launch(k, {8, 256}, {2000, in, out}, mem, params, &port, options);
    };
    const simt::KernelStats ahead = run(0), windows = run(7), big = run(100000);
    EXPECT_EQ(windows.cycles, ahead.cycles);
    EXPECT_EQ(big.cycles, ahead.cycles);
    EXPECT_EQ(windows.issued, ahead.issued);
    EXPECT_EQ(windows.scoreboard_cycles, ahead.scoreboard_cycles);
    EXPECT_EQ(windows.idle_cycles, ahead.idle_cycles);
}

}  // namespace
}  // namespace accelsim::gpu::hierarchy_port_test
