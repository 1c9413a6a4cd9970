// gpu::HierarchyMemoryPort driven non-blocking (submit / advance, FR-FCFS HBM queues) and the SM
// windows over it: hand-worked answers, the row-hit reordering FCFS does not do, windows of the
// port's lookahead against the cycle-by-cycle reference (1-cycle windows), determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/gpu/hierarchy_port.h"
#include "tests/gpu/small_gpu_memory.h"
#include "models/memory/dram.h"
#include "models/memory/l2_cache.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::gpu::memory_port_test {
namespace {

memory::MemoryHierarchyParams small_gpu(int sms = 4) { return test::small_gpu(sms); }

std::vector<simt::SectorAnswer> serve_all(HierarchyMemoryPort& port) {
    std::vector<simt::SectorAnswer> answers;
    port.advance(~std::uint64_t{0}, answers);
    return answers;
}

TEST(NonBlockingPort, LookaheadIsTheHitLatencyLessOne) {
    EXPECT_EQ(HierarchyMemoryPort(small_gpu()).lookahead_cycles(), 199u);
    EXPECT_EQ(HierarchyMemoryPort(small_gpu(), true).lookahead_cycles(), 0u);  // blocking on request
    memory::MemoryHierarchyParams no_l2 = small_gpu();
    no_l2.l2.reset();
    EXPECT_EQ(HierarchyMemoryPort(no_l2).lookahead_cycles(), 0u);  // the queued engine needs an L2
}

TEST(NonBlockingPort, UnloadedMissEqualsTheBlockingPathAndHitIsHandWorked) {
    // One request alone sees no queue, so FR-FCFS and the blocking FCFS call give the same miss.
    HierarchyMemoryPort blocking(small_gpu(), true), port(small_gpu());
    const std::uint64_t miss = blocking.access(0, 0x1000, false, 0);
    port.submit(0, 0x1000, false, 0, 7);
    std::vector<simt::SectorAnswer> answers = serve_all(port);
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_EQ(answers[0].sm, 0);
    EXPECT_EQ(answers[0].tag, 7u);
    EXPECT_EQ(answers[0].done, miss);
    // A hit at 10000 from SM 1: 1 crossbar cycle (32 B at 64 B/cycle) + 200 = 10201. Served by the
    // window ending at 10000 + 199 = 10199 (its lookup at 10001 lies inside), answered >= the end.
    port.submit(10000, 0x1000, false, 1, 8);
    answers.clear();
    port.advance(10000, answers);
    EXPECT_TRUE(answers.empty());  // nothing before cycle 10000
    port.advance(10199, answers);
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_EQ(answers[0].sm, 1);
    EXPECT_EQ(answers[0].done, 10201u);
    const HierarchyTraffic t = port.traffic();
    EXPECT_EQ(t.l2_accesses, 2u);
    EXPECT_EQ(t.l2_hits, 1u);
    EXPECT_EQ(t.hbm_read_bytes, 32u);
}

// Three line-sized misses to one HBM bank: a1 and a2 in one row, b in another, each in its own L2
// slice (so that no slice port orders them), all three leaving their own SM at cycle 0, in the
// order a1, b, a2 (ties go by SM index).
struct BankTriple {
    std::uint32_t a1 = 0, b = 0, a2 = 0;
};
BankTriple find_bank_triple(const memory::MemoryHierarchyParams& p) {
    memory::Dram dram(p.dram);
    memory::L2Cache l2(*p.l2, dram);
    const memory::DramAddressMapper& map = dram.mapper();
    BankTriple t;
    const memory::DramCoordinates c1 = map.map(t.a1);
    const int s1 = l2.slice_of(t.a1);
    bool have_b = false, have_a2 = false;
    for (std::uint32_t a = 128; a < (64u << 20) && !(have_b && have_a2); a += 128) {
        const memory::DramCoordinates c = map.map(a);
        if (c.unit != c1.unit || c.bank_group != c1.bank_group || c.bank != c1.bank) continue;
        const int s = l2.slice_of(a);
        if (!have_a2 && c.row == c1.row && s != s1) {
            t.a2 = a;
            have_a2 = true;
        } else if (have_a2 && !have_b && c.row != c1.row && s != s1 && s != l2.slice_of(t.a2)) {
            t.b = a;
            have_b = true;
        }
    }
    EXPECT_TRUE(have_b && have_a2);
    EXPECT_NE(l2.slice_of(t.b), l2.slice_of(t.a2));
    return t;
}

TEST(NonBlockingPort, FrFcfsServesTheRowHitBeforeTheOlderConflict) {
    // All three reach the controller's queue at the same picosecond. FCFS serves them in arrival
    // order: a1 opens its row (miss), b must close it (conflict), a2 must reopen it (conflict).
    // FR-FCFS opens a1's row ahead, serves a1, then a2 (a row hit, the data moves first), then b
    // (conflict): one miss, one hit, one conflict, and a2 is answered before b.
    memory::MemoryHierarchyParams p = small_gpu();
    const BankTriple t = find_bank_triple(p);
    auto run = [&](memory::DramScheduler scheduler, std::vector<simt::SectorAnswer>& answers) {
        p.dram.scheduler = scheduler;
        HierarchyMemoryPort port(p);
        port.submit(0, t.a1, false, 0, 1);
        port.submit(0, t.b, false, 1, 2);
        port.submit(0, t.a2, false, 2, 3);
        answers = serve_all(port);
        return port.traffic();
    };
    std::vector<simt::SectorAnswer> fr, fc;
    const HierarchyTraffic frfcfs = run(memory::DramScheduler::fr_fcfs, fr);
    const HierarchyTraffic fcfs = run(memory::DramScheduler::fcfs, fc);
    EXPECT_EQ(fcfs.hbm_row_misses, 1u);
    EXPECT_EQ(fcfs.hbm_row_hits, 0u);
    EXPECT_EQ(fcfs.hbm_row_conflicts, 2u);
    EXPECT_EQ(frfcfs.hbm_row_misses, 1u);
    EXPECT_EQ(frfcfs.hbm_row_hits, 1u);
    EXPECT_EQ(frfcfs.hbm_row_conflicts, 1u);
    auto done = [](const std::vector<simt::SectorAnswer>& a, std::uint64_t tag) {
        for (const simt::SectorAnswer& x : a)
            if (x.tag == tag) return x.done;
        ADD_FAILURE() << "no answer for tag " << tag;
        return std::uint64_t{0};
    };
    EXPECT_LT(done(fr, 3), done(fr, 2));  // FR-FCFS: a2 before b
    EXPECT_LT(done(fc, 2), done(fc, 3));  // FCFS: b before a2
    EXPECT_LT(done(fr, 3), done(fc, 3));  // and a2 much earlier than under FCFS
}

struct SaxpyRun {
    simt::KernelStats stats;
    HierarchyTraffic traffic;
    std::vector<float> y;
};

// saxpy over n floats on `sms` SMs (with a 64 KiB L1 each) through the hierarchy.
SaxpyRun saxpy(std::uint32_t n, int sms, std::uint64_t max_window, bool blocking = false) {
    const simt::Kernel k = simt::assemble_file(std::string(ACCELSIM_SOURCE_DIR) + "/models/simt/kernels/saxpy.sasm");
    simt::GlobalMemory mem;
    const std::uint32_t x = mem.allocate(4 * n), y = mem.allocate(4 * n);
    for (std::uint32_t i = 0; i < n; ++i) {
        mem.store_f32(x + 4 * i, static_cast<float>(i % 13));
        mem.store_f32(y + 4 * i, 1.0f);
    }
    simt::SimtParams params;
    params.sms = sms;
    params.sm.l1.bytes = 64 * 1024;
    HierarchyMemoryPort port(small_gpu(sms), blocking);
    simt::LaunchOptions options;
    options.max_window_cycles = max_window;
    options.sm_quantum_cycles = blocking ? 1 : 0;
    SaxpyRun r;
    r.stats = simt::launch(k, {(n + 95) / 96, 96}, {n, 0x40000000u /* 2.0f */, x, y}, mem, params, &port, options);
    r.traffic = port.traffic();
    for (std::uint32_t i = 0; i < n; ++i) r.y.push_back(mem.load_f32(y + 4 * i));
    return r;
}

void expect_same(const SaxpyRun& a, const SaxpyRun& b) {
    EXPECT_EQ(a.stats.cycles, b.stats.cycles);
    EXPECT_EQ(a.stats.issued, b.stats.issued);
    EXPECT_EQ(a.stats.scoreboard_cycles, b.stats.scoreboard_cycles);
    EXPECT_EQ(a.stats.idle_cycles, b.stats.idle_cycles);
    EXPECT_EQ(a.stats.pipeline_cycles, b.stats.pipeline_cycles);
    EXPECT_EQ(a.stats.l1_hits, b.stats.l1_hits);
    EXPECT_EQ(a.stats.l1_merges, b.stats.l1_merges);
    EXPECT_EQ(a.traffic.l2_hits, b.traffic.l2_hits);
    EXPECT_EQ(a.traffic.hbm_read_bytes, b.traffic.hbm_read_bytes);
    EXPECT_EQ(a.traffic.hbm_row_hits, b.traffic.hbm_row_hits);
    EXPECT_EQ(a.traffic.hbm_row_conflicts, b.traffic.hbm_row_conflicts);
    EXPECT_EQ(a.traffic.average_latency_ns, b.traffic.average_latency_ns);
    EXPECT_EQ(a.traffic.max_latency_ns, b.traffic.max_latency_ns);
    EXPECT_EQ(a.y, b.y);
}

TEST(SmWindows, LookaheadWindowsEqualTheCycleByCycleReference) {
    // The reference advances every SM one cycle, then serves that cycle's requests (1-cycle
    // windows): nothing is served out of time order by more than it can be. 199-cycle windows and
    // an odd 61 must give the very same run, counter for counter.
    const SaxpyRun reference = saxpy(16384, 4, 1);
    EXPECT_GT(reference.traffic.hbm_row_hits, 0u);
    EXPECT_GT(reference.stats.l1_misses, 0u);
    expect_same(reference, saxpy(16384, 4, 0));
    expect_same(reference, saxpy(16384, 4, 61));
}

TEST(SmWindows, TwoRunsAreIdentical) {
    expect_same(saxpy(32768, 4, 0), saxpy(32768, 4, 0));
}

TEST(SmWindows, SaxpyMovesTheHandWorkedBytesAndComputes) {
    // x and y read once from HBM (8n), y's stores stay in the 1 MiB L2 (write-back, no HBM writes).
    const std::uint32_t n = 32768;
    const SaxpyRun r = saxpy(n, 4, 0);
    EXPECT_EQ(r.traffic.l2_read_bytes, 8u * n);
    EXPECT_EQ(r.traffic.l2_write_bytes, 4u * n);
    EXPECT_EQ(r.traffic.hbm_read_bytes, 8u * n);
    EXPECT_EQ(r.traffic.hbm_write_bytes, 0u);
    for (std::uint32_t i = 0; i < n; ++i) ASSERT_EQ(r.y[i], 2.0f * static_cast<float>(i % 13) + 1.0f) << i;
    // Never below the HBM bound: 8n bytes at 256 B per cycle.
    EXPECT_GE(static_cast<double>(r.stats.cycles), 8.0 * n / 256.0);
}

}  // namespace
}  // namespace accelsim::gpu::memory_port_test
