#pragma once
// Exact unsigned division by a divisor fixed at construction, without a hardware divide on the
// hot path: a shift for powers of two, otherwise a multiply by floor(2^64 / d) + 1 and the high
// half of the 128-bit product. That product is exact for every n <= floor((2^64 - 1) / d):
// with m = 2^64/d + e (0 < e < 1) and n = q d + r, n m / 2^64 = q + r/d + n e / 2^64, and
// n e < 2^64 / d keeps the fraction below 1. Larger n take two such steps (base 2^32) when d is
// below 2^16, else the divide instruction.
#include <cstdint>
#include <stdexcept>

namespace accelsim::memory {

class FastDivider {
public:
    FastDivider() : FastDivider(1) {}
    explicit FastDivider(std::uint64_t divisor) : d_(divisor) {
        if (divisor == 0) throw std::invalid_argument("FastDivider: divisor must be > 0");
        if ((divisor & (divisor - 1)) == 0) {
            shift_ = 0;
            while ((std::uint64_t{1} << shift_) != divisor) ++shift_;
        } else {
            magic_ = ~std::uint64_t{0} / divisor + 1;
            limit_ = ~std::uint64_t{0} / divisor;
        }
    }
    std::uint64_t divisor() const { return d_; }
    std::uint64_t div(std::uint64_t n) const {
        if (shift_ >= 0) return n >> shift_;
        if (n <= limit_) return static_cast<std::uint64_t>((static_cast<U128>(n) * magic_) >> 64);
        if (d_ < kSmallDivisor) {
            // Long division in base 2^32 (hashed addresses are this large): both steps' dividends
            // stay within limit_, since (d - 1) 2^32 + 2^32 - 1 < d 2^32 <= (2^64 - 1) / d for d < 2^16.
            const std::uint64_t high = n >> 32;
            const std::uint64_t high_q = static_cast<std::uint64_t>((static_cast<U128>(high) * magic_) >> 64);
            const std::uint64_t rest = (high - high_q * d_) << 32 | (n & 0xFFFFFFFFu);
            return high_q << 32 | static_cast<std::uint64_t>((static_cast<U128>(rest) * magic_) >> 64);
        }
        return n / d_;
    }
    std::uint64_t mod(std::uint64_t n) const { return n - div(n) * d_; }

private:
    __extension__ typedef unsigned __int128 U128;
    static constexpr std::uint64_t kSmallDivisor = std::uint64_t{1} << 16;
    std::uint64_t d_, magic_ = 0, limit_ = 0;
    int shift_ = -1;
};

// A well-mixed 64-bit hash of a run index (MurmurHash3's fmix64 finalizer): every input bit
// moves every output bit, so runs at any power-of-two stride get unrelated values. The L2 slice
// and the DRAM channel rotate each run of lines / channel turns by it, as GPUs hash many address
// bits into the slice and partition they pick.
inline std::uint64_t mix_run_index(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

}  // namespace accelsim::memory
