// Sectored L2: hits after the first pass when the working set fits, LRU miss rate when it does not,
// sector misses, MSHR merges, write-back, and the slice bandwidth.
#include <gtest/gtest.h>

#include <vector>

#include "models/memory/l2_cache.h"

namespace accelsim::memory::l2_test {
namespace {

// Next level with a fixed latency that records what it was asked.
struct FixedMemory {
    Picoseconds latency = 100000;  // 100 ns
    std::uint64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
    L2Cache::NextLevel callback() {
        return [this](std::uint64_t, std::uint32_t bytes, bool write, Picoseconds t) {
            (write ? writes : reads)++;
            (write ? write_bytes : read_bytes) += bytes;
            return t + latency;
        };
    }
};

L2Params small_l2() {
    L2Params p;
    p.size_bytes = 64 * 1024;  // 1 slice x 8 ways x 64 sets x 128 B
    p.slices = 1;
    p.ways = 8;
    p.hit_latency_cycles = 10;
    p.clock_hz = 1e9;  // 1 ns cycles
    p.bytes_per_cycle_per_slice = 128;
    return p;
}

TEST(L2, WorkingSetThatFitsHitsAfterTheFirstPass) {
    FixedMemory mem;
    L2Cache l2(small_l2(), mem.callback());
    const std::uint64_t lines = 256;  // 32 KiB: half the cache
    Picoseconds t = 0;
    for (int pass = 0; pass < 3; ++pass)
        for (std::uint64_t i = 0; i < lines; ++i) t = l2.access(i * 128, 128, false, t);
    // First pass: 256 compulsory misses; then 2 x 256 hits.
    EXPECT_EQ(l2.stats().misses, lines);
    EXPECT_EQ(l2.stats().hits, 2 * lines);
    EXPECT_EQ(mem.reads, lines);
    EXPECT_EQ(l2.stats().evictions, 0u);
}

TEST(L2, CyclicSweepOverWaysPlusOneLinesPerSetAlwaysMisses) {
    FixedMemory mem;
    L2Params p = small_l2();
    L2Cache l2(p, mem.callback());
    const std::uint64_t sets = static_cast<std::uint64_t>(l2.sets_per_slice());
    ASSERT_EQ(sets, 64u);
    // ways + 1 = 9 lines per set, all 64 sets, swept cyclically: under LRU the line needed next is
    // always the one just evicted, so every access misses (Belady's LRU worst case).
    Picoseconds t = 0;
    const int rounds = 5;
    for (int r = 0; r < rounds; ++r)
        for (std::uint64_t k = 0; k < 9; ++k)
            for (std::uint64_t s = 0; s < sets; ++s) t = l2.access((k * sets + s) * 128, 128, false, t);
    EXPECT_EQ(l2.stats().hits, 0u);
    EXPECT_EQ(l2.stats().misses, rounds * 9 * sets);
    EXPECT_EQ(l2.stats().evictions, rounds * 9 * sets - 8 * sets);  // all but the first fill of each way

    // With exactly `ways` lines per set the same sweep hits from the second round on.
    FixedMemory mem2;
    L2Cache fits(p, mem2.callback());
    t = 0;
    for (int r = 0; r < rounds; ++r)
        for (std::uint64_t k = 0; k < 8; ++k)
            for (std::uint64_t s = 0; s < sets; ++s) t = fits.access((k * sets + s) * 128, 128, false, t);
    EXPECT_EQ(fits.stats().misses, 8 * sets);
    EXPECT_EQ(fits.stats().hits, (rounds - 1) * 8 * sets);
}

TEST(L2, SectorsAreFetchedOnDemand) {
    FixedMemory mem;
    L2Cache l2(small_l2(), mem.callback());
    l2.access(0, 32, false, 0);           // miss: one 32 B sector fetched
    l2.access(32, 32, false, 1000000);    // same line, other sector: sector miss
    l2.access(0, 64, false, 2000000);     // both present: hit
    EXPECT_EQ(l2.stats().sector_misses, 1u);
    EXPECT_EQ(l2.stats().misses, 2u);
    EXPECT_EQ(l2.stats().hits, 1u);
    EXPECT_EQ(mem.read_bytes, 64u);
}

TEST(L2, MissesToALineInFlightMergeInItsMshr) {
    FixedMemory mem;
    L2Cache l2(small_l2(), mem.callback());
    // Miss at t=0: slice port 1 cycle (128 B / 128 B per cycle), fill 100 ns, +10 ns hit latency.
    const Picoseconds a = l2.access(0, 128, false, 0);
    EXPECT_EQ(a, 110000u);
    // A second read 5 ns later finds the fill in flight and waits for the same data.
    const Picoseconds b = l2.access(0, 128, false, 5000);
    EXPECT_EQ(b, a);
    EXPECT_EQ(l2.stats().mshr_merges, 1u);
    EXPECT_EQ(mem.reads, 1u);
}

TEST(L2, DirtyLinesAreWrittenBackOnEviction) {
    FixedMemory mem;
    L2Params p = small_l2();
    L2Cache l2(p, mem.callback());
    l2.access(0, 128, true, 0);  // write-allocate of a whole line: no fetch, all 4 sectors dirty
    EXPECT_EQ(mem.reads, 0u);
    // Eight more lines into set 0 evict it (8 ways).
    for (std::uint64_t k = 1; k <= 8; ++k) l2.access(k * 64 * 128, 128, false, 1000000 * k);
    EXPECT_EQ(l2.stats().evictions, 1u);
    EXPECT_EQ(l2.stats().writebacks, 1u);
    EXPECT_EQ(mem.write_bytes, 128u);
    // A partial-sector write must fetch the sector first.
    l2.access(1 << 20, 8, true, 20000000);
    EXPECT_EQ(mem.read_bytes, 8 * 128u + 32u);
}

TEST(L2, SliceBandwidthSerialisesSimultaneousHits) {
    FixedMemory mem;
    L2Params p = small_l2();
    p.bytes_per_cycle_per_slice = 32;  // a 128 B line takes 4 cycles of the slice port
    L2Cache l2(p, mem.callback());
    for (int i = 0; i < 4; ++i) l2.access(static_cast<std::uint64_t>(i) * 128, 128, false, 0);  // warm
    const Picoseconds t0 = 1000000;
    for (int i = 0; i < 4; ++i) {
        // i-th of four hits at the same instant starts after i x 4 cycles: t0 + 4i ns + 10 ns.
        EXPECT_EQ(l2.access(static_cast<std::uint64_t>(i) * 128, 128, false, t0), t0 + (4000u * i) + 10000u);
    }
}

TEST(L2, SlicesSpreadConsecutiveLines) {
    FixedMemory mem;
    L2Params p = small_l2();
    p.slices = 8;
    p.size_bytes = 8 * 64 * 1024;
    L2Cache l2(p, mem.callback());
    std::vector<int> count(8, 0);
    for (std::uint64_t i = 0; i < 8000; ++i) ++count[static_cast<std::size_t>(l2.slice_of(i * 128))];
    for (int c : count) EXPECT_NEAR(c, 1000, 200);
}

TEST(L2, EveryRunOfSliceCountLinesCoversEverySliceOnce) {
    // A stream then fills every set of every slice evenly, so the LRU victims leave in the
    // stream's order (write-backs of a streamed output stay row hits at the DRAM).
    FixedMemory mem;
    L2Params p = small_l2();
    p.slices = 80;  // not a power of two, as on A100
    p.size_bytes = 80 * 16 * 1024;
    L2Cache l2(p, mem.callback());
    for (std::uint64_t run : {0ull, 1ull, 127ull, 128ull, 99991ull, 3000000ull}) {
        std::vector<int> count(80, 0);
        for (std::uint64_t i = 0; i < 80; ++i) ++count[static_cast<std::size_t>(l2.slice_of((run * 80 + i) * 128))];
        for (int c : count) EXPECT_EQ(c, 1) << "run " << run;
    }
    // A power-of-two stride of lines still visits many slices.
    std::vector<int> strided(80, 0);
    for (std::uint64_t i = 0; i < 8000; ++i) ++strided[static_cast<std::size_t>(l2.slice_of(i * 1024 * 128))];
    int used = 0;
    for (int c : strided) used += c > 0;
    EXPECT_GE(used, 64);
    // With a power-of-two slice count a stride that is a multiple of it is spread too (4 slices,
    // 16 lines: the lines of one DRAM row of one bank on HBM2 with 8 channels).
    L2Params q = small_l2();
    q.slices = 4;
    q.size_bytes = 4 * 64 * 1024;
    L2Cache four(q, mem.callback());
    std::vector<int> on(4, 0);
    for (std::uint64_t i = 0; i < 64; ++i) ++on[static_cast<std::size_t>(four.slice_of(i * 16 * 128))];
    for (int c : on) EXPECT_GT(c, 0);
}

TEST(L2, RejectsBadParams) {
    FixedMemory mem;
    L2Params p = small_l2();
    p.size_bytes = 1000;
    EXPECT_THROW(L2Cache(p, mem.callback()), std::invalid_argument);
}

}  // namespace
}  // namespace accelsim::memory::l2_test
