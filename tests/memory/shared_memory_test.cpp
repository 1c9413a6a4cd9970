// Shared-memory bank conflicts: 32 banks x 4 B; a warp access costs its worst bank's distinct words.
#include <gtest/gtest.h>

#include "models/memory/shared_memory.h"

namespace accelsim::memory::shared_memory_test {
namespace {

std::array<std::uint32_t, 32> strided_floats(std::uint32_t stride_words) {
    std::array<std::uint32_t, 32> a{};
    for (std::uint32_t lane = 0; lane < 32; ++lane) a[lane] = lane * stride_words * 4;
    return a;
}

TEST(SharedMemory, ConflictDegreeOfStridedFloatAccesses) {
    const std::uint32_t all = 0xffffffffu;
    // Word w lives in bank w mod 32. Stride s puts lane i in bank (i*s) mod 32; the busiest bank
    // holds gcd(s, 32) distinct words.
    EXPECT_EQ(shared_memory_conflict_degree(strided_floats(1), all), 1);    // gcd(1,32) = 1
    EXPECT_EQ(shared_memory_conflict_degree(strided_floats(2), all), 2);    // gcd(2,32) = 2
    EXPECT_EQ(shared_memory_conflict_degree(strided_floats(32), all), 32);  // every lane in bank 0
    EXPECT_EQ(shared_memory_conflict_degree(strided_floats(33), all), 1);   // gcd(33,32) = 1
    EXPECT_EQ(shared_memory_conflict_degree(strided_floats(8), all), 8);    // gcd(8,32) = 8
}

TEST(SharedMemory, SameWordIsABroadcast) {
    std::array<std::uint32_t, 32> same{};
    same.fill(1234 * 4);
    EXPECT_EQ(shared_memory_conflict_degree(same, 0xffffffffu), 1);
    // Bytes of one word also count as the same word.
    for (std::uint32_t lane = 0; lane < 32; ++lane) same[lane] = 64 + lane % 4;
    EXPECT_EQ(shared_memory_conflict_degree(same, 0xffffffffu), 1);
}

TEST(SharedMemory, InactiveLanesDoNotCount) {
    const auto a = strided_floats(32);  // all lanes in bank 0
    EXPECT_EQ(shared_memory_conflict_degree(a, 0x0000000fu), 4);  // four lanes, four words
    EXPECT_EQ(shared_memory_conflict_degree(a, 0x1u), 1);
    EXPECT_EQ(shared_memory_conflict_degree(a, 0x0u), 0);
}

TEST(SharedMemory, MixedBroadcastAndConflict) {
    // Lanes 0-15 read word 0, lanes 16-31 read word 32 (also bank 0): two distinct words, degree 2.
    std::array<std::uint32_t, 32> a{};
    for (std::uint32_t lane = 0; lane < 32; ++lane) a[lane] = lane < 16 ? 0 : 32 * 4;
    EXPECT_EQ(shared_memory_conflict_degree(a, 0xffffffffu), 2);
}

}  // namespace
}  // namespace accelsim::memory::shared_memory_test
