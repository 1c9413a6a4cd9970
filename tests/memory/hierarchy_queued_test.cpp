// MemoryHierarchy::run_queued: the L2's misses scheduled by the DRAM controllers' queues. Where
// nothing can be reordered it must equal the blocking path exactly; where rows collide it must
// recover what FR-FCFS recovers at the HBM alone.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <vector>

#include "models/memory/memory_hierarchy.h"

namespace accelsim::memory::hierarchy_queued_test {
namespace {

MemoryHierarchyParams small_chip() {  // as in hierarchy_test.cpp
    MemoryHierarchyParams p;
    p.requesters = 4;
    p.clock_hz = 1e9;
    p.crossbar.latency_cycles = 5;
    p.crossbar.bytes_per_cycle_per_port = 64;
    L2Params l2;
    l2.size_bytes = 256 * 1024;
    l2.slices = 2;
    l2.ways = 16;
    l2.hit_latency_cycles = 20;
    l2.bytes_per_cycle_per_slice = 64;
    p.l2 = l2;
    p.dram = dram_preset("HBM2");  // 8 channels, tCK 1 ns, tRCD 14, CL 14, 64 B burst in 2 ns
    p.dram.controller_latency_ns = 3;
    return p;
}

TrafficParams traffic(TrafficPattern pattern, std::uint64_t total, std::uint64_t footprint = 1ull << 32) {
    TrafficParams t;
    t.pattern = pattern;
    t.request_bytes = 64;
    t.total_bytes = total;
    t.footprint_bytes = footprint;
    return t;
}

DriveResult run_blocking(MemoryHierarchy& h, const TrafficParams& t, int outstanding) {
    TrafficGenerator gen(t);
    std::uint64_t i = 0;
    const int requesters = h.params().requesters;
    DriveResult r = drive_blocking(
        [&](const MemoryRequest& q, Picoseconds at) {
            return h.access(static_cast<int>(i++ % static_cast<std::uint64_t>(requesters)), q.address, q.bytes,
                            q.write, at);
        },
        gen, DriverParams{outstanding, 0});
    h.drain_writes(r.last_completion);
    return r;
}

DriveResult run_queued(MemoryHierarchy& h, const TrafficParams& t, int outstanding) {
    TrafficGenerator gen(t);
    return h.run_queued(gen, DriverParams{outstanding, 0});
}

TEST(MemoryHierarchyQueued, UnloadedMissesAreTheClosedFormAndEqualTheBlockingPath) {
    // Two 64 B reads of one line issued at 0 by requesters 0 and 1.
    // Read 0: crossbar 1 + 5 = 6 ns; L2 misses, fetches sectors 0-1: controller 3, ACT at 9,
    //   RD at 9 + tRCD 14 = 23, data CL 14 later for 2 ns: 39; + hit latency 20 = 59 ns.
    // Read 1: the output port is busy until 1 ns: crossbar 1 + 1 + 5 = 7 ns; slice port free at 7;
    //   sector miss (sectors 2-3 = burst 1, the next channel): arrives 10, ACT 10, RD 24, data to 40,
    //   + 20 = 60 ns.
    MemoryHierarchy queued(small_chip());
    const DriveResult q = run_queued(queued, traffic(TrafficPattern::stream, 128), 2);
    EXPECT_EQ(q.requests, 2u);
    EXPECT_EQ(q.last_completion, 60000u);
    EXPECT_DOUBLE_EQ(q.latency.average_ns(), (59.0 + 60.0) / 2);
    MemoryHierarchy blocking(small_chip());
    const DriveResult b = run_blocking(blocking, traffic(TrafficPattern::stream, 128), 2);
    EXPECT_EQ(b.last_completion, q.last_completion);
    EXPECT_DOUBLE_EQ(b.latency.average_ns(), q.latency.average_ns());
    const MemoryHierarchyStats s = queued.stats();
    EXPECT_EQ(s.requests, 2u);
    EXPECT_EQ(s.l2->misses, 2u);
    EXPECT_EQ(s.l2->sector_misses, 1u);
    EXPECT_EQ(s.dram.reads, 2u);
    EXPECT_EQ(s.dram.bytes_read, 128u);
}

TEST(MemoryHierarchyQueued, SectorMissesOnAPendingLineThenHits) {
    // Four 32 B reads of one 128 B line at 0 from four requesters: the first allocates and fetches
    // sector 0; the others are sector misses on the pending line (sectors 1, 2, 3), each its own
    // fill; all complete, and the L2 counts 4 misses, 3 of them sector misses.
    MemoryHierarchy h(small_chip());
    TrafficParams t = traffic(TrafficPattern::stream, 128);
    t.request_bytes = 32;
    const DriveResult r = run_queued(h, t, 4);
    EXPECT_EQ(r.requests, 4u);
    const MemoryHierarchyStats s = h.stats();
    EXPECT_EQ(s.l2->misses, 4u);
    EXPECT_EQ(s.l2->sector_misses, 3u);
    EXPECT_EQ(s.l2->fill_bytes, 128u);
    // The same four reads again after the fills landed: all hits, one slice cycle apart.
    MemoryHierarchy h2(small_chip());
    TrafficParams twice = t;
    twice.total_bytes = 256;
    twice.footprint_bytes = 128;
    twice.pattern = TrafficPattern::strided;  // request i at (i x 32) mod 128: the line twice
    twice.stride_bytes = 32;
    const DriveResult r2 = run_queued(h2, twice, 4);  // the second four wait for slots of the first
    EXPECT_EQ(r2.requests, 8u);
    EXPECT_EQ(h2.stats().l2->misses, 4u);
    EXPECT_EQ(h2.stats().l2->hits, 4u);
    EXPECT_EQ(h2.stats().l2->fill_bytes, 128u);
}

TEST(MemoryHierarchyQueued, AReadOfALineInFlightMergesIntoItsFill) {
    // Two 64 B reads of address 0 at 0: the first misses (59 ns, as above); the second reaches the
    // slice at 7 ns, finds the line pending and waits for its fill: 39 + 20 = 59 ns. Same blocking.
    TrafficParams t = traffic(TrafficPattern::strided, 128);
    t.stride_bytes = 128;
    t.footprint_bytes = 128;  // both requests at address 0
    MemoryHierarchy queued(small_chip());
    const DriveResult q = run_queued(queued, t, 2);
    EXPECT_EQ(q.last_completion, 59000u);
    EXPECT_DOUBLE_EQ(q.latency.average_ns(), 59.0);
    EXPECT_EQ(queued.stats().l2->mshr_merges, 1u);
    EXPECT_EQ(queued.stats().dram.reads, 1u);
}

TEST(MemoryHierarchyQueued, OneMshrSerialisesFillsExactlyAsTheBlockingPath) {
    // One slice with one MSHR: each fill waits for the previous one to land, so the DRAM never has
    // two requests to choose between and the queued path must reproduce the blocking path's
    // times exactly (every completion, hence the average and the end).
    MemoryHierarchyParams p = small_chip();
    p.l2->slices = 1;
    p.l2->mshrs_per_slice = 1;
    const TrafficParams t = traffic(TrafficPattern::stream, 64 * 200);
    MemoryHierarchy queued(p), blocking(p);
    const DriveResult q = run_queued(queued, t, 16);
    const DriveResult b = run_blocking(blocking, t, 16);
    EXPECT_EQ(q.last_completion, b.last_completion);
    EXPECT_DOUBLE_EQ(q.latency.average_ns(), b.latency.average_ns());
    EXPECT_EQ(queued.stats().l2->misses, blocking.stats().l2->misses);
    EXPECT_EQ(queued.stats().dram.bursts.row_hits, blocking.stats().dram.bursts.row_hits);
}

TEST(MemoryHierarchyQueued, StreamThroughTheL2ReachesNinetyPercentOfPeak) {
    // HBM2 preset: 8 channels x 128 bit x 2 Gb/s = 256 GB/s peak. Eight requesters and eight
    // slices at 64 B per 1 ns cycle give the crossbar and L2 512 GB/s, so the HBM is the limit.
    MemoryHierarchyParams p = small_chip();
    p.requesters = 8;
    p.l2->slices = 8;
    p.l2->size_bytes = 1 << 20;
    MemoryHierarchy h(p);
    const DriveResult r = run_queued(h, traffic(TrafficPattern::stream, 8 << 20), 4 * 8 * 32);
    EXPECT_GE(r.achieved_bytes_per_second(), 0.90 * p.dram.peak_bytes_per_second());
}

TEST(MemoryHierarchyQueued, CollidingStreamsRecoverTheSchedulersBenefit) {
    // Triad (a, b read; c written) with the three arrays exactly 16 rows of one bank apart:
    // footprint 3 x 16 x 128 KiB, so a[j], b[j], c[j] fall in the same channel, bank group, bank
    // and column, on rows 16 apart (channel_low: 64 B bursts x 8 channels x 4 groups x 16 columns
    // x 4 banks = 128 KiB per row step). Served in call order every read switches rows (a, b, a,
    // ...): almost every read burst is a conflict. FR-FCFS serves runs of one row's hits.
    const TrafficParams t = traffic(TrafficPattern::mixed, 6 << 20, 3ull * 16 * (128 << 10));
    MemoryHierarchy blocking(small_chip());
    const DriveResult b = run_blocking(blocking, t, 4 * 8 * 32);
    MemoryHierarchy queued(small_chip());
    const DriveResult q = run_queued(queued, t, 4 * 8 * 32);
    const DramUnitStats& bb = blocking.stats().dram.bursts;
    const DramUnitStats& qb = queued.stats().dram.bursts;
    const double b_conflicts = static_cast<double>(bb.row_conflicts) / static_cast<double>(bb.reads + bb.writes);
    const double q_conflicts = static_cast<double>(qb.row_conflicts) / static_cast<double>(qb.reads + qb.writes);
    std::printf("blocking: %.1f%% of peak, conflicts %.1f%%; queued: %.1f%%, conflicts %.1f%%\n",
                100 * b.achieved_bytes_per_second() / small_chip().dram.peak_bytes_per_second(), 100 * b_conflicts,
                100 * q.achieved_bytes_per_second() / small_chip().dram.peak_bytes_per_second(), 100 * q_conflicts);
    EXPECT_GE(b_conflicts, 0.5);
    EXPECT_LE(q_conflicts, 0.5 * b_conflicts);
    EXPECT_GE(q.achieved_bytes_per_second(), 1.5 * b.achieved_bytes_per_second());
}

TEST(MemoryHierarchyQueued, SameInputsSameOutputs) {
    auto once = [] {
        MemoryHierarchy h(small_chip());
        TrafficParams t = traffic(TrafficPattern::random, 1 << 20, 1 << 22);
        t.request_bytes = 32;
        const DriveResult r = run_queued(h, t, 512);
        const MemoryHierarchyStats s = h.stats();
        return std::vector<std::uint64_t>{r.last_completion, s.l2->hits, s.l2->mshr_merges, s.dram.bursts.row_hits,
                                          s.dram.bursts.row_conflicts, static_cast<std::uint64_t>(r.latency.average_ns() * 1000)};
    };
    EXPECT_EQ(once(), once());
}

TEST(MemoryHierarchyQueued, ARequesterHeldByAFullBufferReservesNoOtherSlice) {
    // One-transfer output buffers; 32 B full-sector writes (no fetch: accepted at the slice port's
    // start + 20 ns hit latency). At 0 ns requester 0 writes X (slice 0); requester 1 writes Y
    // (slice 0, buffer full until X leaves at 0.5 ns) and then Z (slice 1); requester 2 writes W
    // (slice 1). A 32 B transfer holds a 64 B/cycle port 0.5 ns; crossbar latency 5 ns.
    //   X: crosses 0-0.5, at slice 0 at 5.5, accepted 25.5 ns.
    //   W: starts at once, slice 1 idle: also 25.5 ns.
    //   Y: held 0-0.5 (backpressure), crosses 0.5-1, at slice 0 at 6 (its port is free: X used
    //      it 5.5-6), accepted 26 ns.
    //   Z: behind Y at requester 1's input until 1 ns, crosses 1-1.5, at slice 1 at 6.5: 26.5 ns.
    // Booking at issue (Crossbar::traverse) reserved slice 1's output for Z from 1 to 1.5 ns at
    // time 0, and W, issued after it, would leave at 2 ns and be accepted at 27 ns.
    MemoryHierarchyParams p = small_chip();
    p.crossbar.output_buffer_transfers = 1;
    MemoryHierarchy h(p);
    L2Params l2 = *p.l2;
    l2.clock_hz = p.clock_hz;
    const L2Cache slices(l2, L2Cache::NextLevel{});
    std::vector<std::uint64_t> on[2];  // line addresses by slice
    for (std::uint64_t line = 0; on[0].size() < 2 || on[1].size() < 2; ++line)
        on[slices.slice_of(line * 128)].push_back(line * 128);
    const std::uint64_t X = on[0][0], Y = on[0][1], Z = on[1][0], W = on[1][1];
    h.queued_issue(0, X, 32, true, 0, 'X');
    h.queued_issue(1, Y, 32, true, 0, 'Y');
    h.queued_issue(1, Z, 32, true, 0, 'Z');
    h.queued_issue(2, W, 32, true, 0, 'W');
    std::map<std::uint64_t, Picoseconds> done;
    while (h.queued_next_event() != DramController::kNeverPs) {
        h.queued_step();
        for (const QueuedCompletion& c : h.queued_completions()) done[c.tag] = c.done;
        h.queued_completions().clear();
    }
    EXPECT_TRUE(h.queued_idle());
    EXPECT_EQ(done['X'], 25500u);
    EXPECT_EQ(done['W'], 25500u);
    EXPECT_EQ(done['Y'], 26000u);
    EXPECT_EQ(done['Z'], 26500u);
    const CrossbarStats x = h.stats().crossbar;
    EXPECT_EQ(x.backpressure_ps, 500u);  // Y
    EXPECT_EQ(x.input_wait_ps, 1000u);   // Z, behind Y
    EXPECT_EQ(x.output_wait_ps, 0u);
}

}  // namespace
}  // namespace accelsim::memory::hierarchy_queued_test
