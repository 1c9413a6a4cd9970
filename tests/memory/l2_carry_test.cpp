// Carrying an L2's contents to a fresh one (the GPU's warm L2 across kernels): resident_lines()
// lists what a set holds, least recently used first, with its sector masks; install() rebuilds
// the LRU order and hands back the line a full set pushes out. record_untimed_access() leaves a
// line as an access would, without time or stats (the blocks wave sampling skips).
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "models/memory/l2_cache.h"

namespace accelsim::memory::l2_carry_test {
namespace {

// 1 slice, 2 sets of 2 ways: line addresses 0, 2, 4 share set 0.
L2Params two_by_two() {
    L2Params p;
    p.size_bytes = 2 * 2 * 128;
    p.slices = 1;
    p.ways = 2;
    p.hit_latency_cycles = 1;
    p.clock_hz = 1e9;
    return p;
}

L2Cache::NextLevel fixed_latency() {
    return [](std::uint64_t, std::uint32_t, bool, Picoseconds t) { return t + 1000; };
}

TEST(L2Carry, ResidentLinesListLeastRecentFirstWithTheirSectors) {
    L2Cache l2(two_by_two(), fixed_latency());
    l2.access(0 * 128, 128, true, 0);      // line 0: all four sectors written
    l2.access(2 * 128 + 32, 32, false, 0);  // line 2: sector 1 read
    const auto lines = l2.resident_lines();
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].line_address, 0u);
    EXPECT_EQ(lines[0].valid, 0xF);
    EXPECT_EQ(lines[0].dirty, 0xF);
    EXPECT_EQ(lines[1].line_address, 2u);
    EXPECT_EQ(lines[1].valid, 0x2);
    EXPECT_EQ(lines[1].dirty, 0x0);
}

TEST(L2Carry, InstallRebuildsTheOrderAndReturnsTheLineAFullSetPushesOut) {
    L2Cache from(two_by_two(), fixed_latency());
    from.access(0 * 128, 128, true, 0);
    from.access(2 * 128, 128, false, 0);
    L2Cache to(two_by_two(), fixed_latency());
    for (const auto& line : from.resident_lines()) EXPECT_FALSE(to.install(line).has_value());
    // Line 0 is the least recent: a third line in set 0 pushes it out, dirty.
    const auto out = to.install({4, 0xF, 0x0});
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(out->line_address, 0u);
    EXPECT_EQ(out->dirty, 0xF);
    // Installed lines are hits, and count no request.
    EXPECT_EQ(to.stats().accesses, 0u);
    to.access(2 * 128, 128, false, 0);
    EXPECT_EQ(to.stats().hits, 1u);
}

}  // namespace
}  // namespace accelsim::memory::l2_carry_test

namespace accelsim::memory::l2_carry_test {
namespace {

// (line address, valid sectors, dirty sectors) of every line held, least recently used first.
using Held = std::vector<std::tuple<std::uint64_t, int, int>>;
Held held(const L2Cache& l2) {
    Held out;
    for (const auto& l : l2.resident_lines()) out.emplace_back(l.line_address, l.valid, l.dirty);
    return out;
}

TEST(L2Untimed, AccessesLeaveTheirLinesAsAccessesWouldWithoutTimeOrStats) {
    L2Cache l2(two_by_two(), fixed_latency());
    l2.record_untimed_access(2 * 128 + 32, 32, false);  // line 2, sector 1 read
    l2.record_untimed_access(0 * 128, 32, true);         // line 0, sector 0 written: most recent
    EXPECT_EQ(held(l2), (Held{{2, 0x2, 0x0}, {0, 0x1, 0x1}}));
    // Line 2 again, sector 2 written: its masks merge and it becomes the most recent.
    l2.record_untimed_access(2 * 128 + 64, 32, true);
    EXPECT_EQ(held(l2), (Held{{0, 0x1, 0x1}, {2, 0x6, 0x4}}));
    // A third line of set 0 pushes out the least recent (line 0), its write-back not counted.
    l2.record_untimed_access(4 * 128 + 96, 32, false);
    EXPECT_EQ(held(l2), (Held{{2, 0x6, 0x4}, {4, 0x8, 0x0}}));
    EXPECT_EQ(l2.stats().accesses, 0u);
    EXPECT_EQ(l2.stats().writebacks, 0u);
    EXPECT_EQ(l2.stats().writeback_bytes, 0u);
    // What it left is there for timed accesses: a hit, at the hit latency (1 cycle of 1 ns).
    const Picoseconds done = l2.access(4 * 128 + 96, 32, false, 5000);
    EXPECT_EQ(l2.stats().hits, 1u);
    EXPECT_EQ(done, 5000u + l2.hit_latency_ps());
}

TEST(L2Untimed, ALineWithAFillInFlightKeepsIt) {
    L2Cache l2(two_by_two(), fixed_latency());
    std::vector<L2Cache::NextLevelRequest> requests;
    const L2Cache::DeferredOutcome miss = l2.access_deferred(0, 32, false, 0, 0, requests);
    ASSERT_GE(miss.new_fill, 0);
    // An untimed access to another sector of the same line does not land the fill early:
    requests.clear();
    l2.record_untimed_access(32, 32, false);
    const L2Cache::DeferredOutcome again = l2.access_deferred(0, 32, false, 10, 0, requests);
    EXPECT_EQ(again.new_fill, -1);
    EXPECT_EQ(again.waits[0], miss.new_fill);
    EXPECT_TRUE(requests.empty());
}

}  // namespace
}  // namespace accelsim::memory::l2_carry_test
