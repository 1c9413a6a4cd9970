// Carrying an L2's contents to a fresh one (the GPU's warm L2 across kernels): resident_lines()
// lists what a set holds, least recently used first, with its sector masks; install() rebuilds
// the LRU order and hands back the line a full set pushes out.
#include <gtest/gtest.h>

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
