// FastDivider must agree with the divide instruction everywhere: the hot paths (L2 set and slice,
// DRAM address map) rely on it for results identical to plain division.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "models/memory/fast_divider.h"

namespace accelsim::memory::fast_divider_test {
namespace {

TEST(FastDivider, AgreesWithHardwareDivisionIncludingTheEdges) {
    const std::vector<std::uint64_t> divisors = {1, 2, 3, 5, 7, 10, 40, 64, 80, 96, 100, 127, 128, 1000, 65535,
                                                 65536, 4294967295ull, 4294967296ull, 6700417ull * 641ull,
                                                 (1ull << 63) + 1, ~0ull};
    std::mt19937_64 rng(42);
    for (const std::uint64_t d : divisors) {
        const FastDivider f(d);
        const std::uint64_t limit = ~0ull / d;  // the multiply path's bound (see fast_divider.h)
        std::vector<std::uint64_t> numerators = {0, 1, d - 1, d, d + 1, limit - 1, limit, limit + 1,
                                                 limit * d, limit * d - 1, ~0ull, ~0ull - 1};
        for (int i = 0; i < 2000; ++i) {
            numerators.push_back(rng());
            numerators.push_back(rng() >> (rng() % 64));
        }
        for (const std::uint64_t n : numerators) {
            ASSERT_EQ(f.div(n), n / d) << n << " / " << d;
            ASSERT_EQ(f.mod(n), n % d) << n << " % " << d;
        }
    }
}

TEST(FastDivider, ZeroDivisorIsRejected) { EXPECT_THROW(FastDivider(0), std::invalid_argument); }

}  // namespace
}  // namespace accelsim::memory::fast_divider_test
