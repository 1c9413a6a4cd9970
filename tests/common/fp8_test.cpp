// fp8 encoding and decoding (models/common/dtype.h) against values worked by hand from the OCP
// 8-bit floating point specification (v1.0) and PTX's cvt.rn.satfinite: every value class of both
// formats (zero, subnormal, normal, max, infinity, NaN), ties to even, overflow in both modes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "models/common/dtype.h"

namespace accelsim::fp8_test {
namespace {

constexpr DType E4M3 = DType::fp8_e4m3;
constexpr DType E5M2 = DType::fp8_e5m2;

TEST(Fp8, E4m3DecodesEveryValueClass) {
    // S.EEEE.MMM, bias 7: 0x38 = 0.0111.000 = 2^0.
    EXPECT_EQ(fp8_decode(0x38, E4M3), 1.0f);
    EXPECT_EQ(fp8_decode(0xB8, E4M3), -1.0f);
    EXPECT_EQ(fp8_decode(0x08, E4M3), 0x1p-6f);          // min normal: exponent field 1
    EXPECT_EQ(fp8_decode(0x07, E4M3), 7 * 0x1p-9f);      // max subnormal: 0.111 x 2^-6
    EXPECT_EQ(fp8_decode(0x01, E4M3), 0x1p-9f);          // min subnormal
    EXPECT_EQ(fp8_decode(0x7E, E4M3), 448.0f);           // max: 1.110 x 2^8 (exponent 15 is normal)
    EXPECT_EQ(fp8_decode(0x78, E4M3), 256.0f);           // 1.000 x 2^8: no infinity at exponent 15
    EXPECT_TRUE(std::isnan(fp8_decode(0x7F, E4M3)));     // the only NaNs: S.1111.111
    EXPECT_TRUE(std::isnan(fp8_decode(0xFF, E4M3)));
    EXPECT_EQ(fp8_decode(0x00, E4M3), 0.0f);
    EXPECT_TRUE(std::signbit(fp8_decode(0x80, E4M3)));  // negative zero
    int nans = 0;
    for (int code = 0; code < 256; ++code) nans += std::isnan(fp8_decode(static_cast<std::uint8_t>(code), E4M3));
    EXPECT_EQ(nans, 2);
}

TEST(Fp8, E5m2DecodesEveryValueClass) {
    // S.EEEEE.MM, bias 15: 0x3C = 0.01111.00 = 2^0.
    EXPECT_EQ(fp8_decode(0x3C, E5M2), 1.0f);
    EXPECT_EQ(fp8_decode(0x04, E5M2), 0x1p-14f);         // min normal
    EXPECT_EQ(fp8_decode(0x03, E5M2), 3 * 0x1p-16f);     // max subnormal: 0.11 x 2^-14
    EXPECT_EQ(fp8_decode(0x01, E5M2), 0x1p-16f);         // min subnormal
    EXPECT_EQ(fp8_decode(0x7B, E5M2), 57344.0f);         // max: 1.11 x 2^15
    EXPECT_EQ(fp8_decode(0x7C, E5M2), INFINITY);         // S.11111.00
    EXPECT_EQ(fp8_decode(0xFC, E5M2), -INFINITY);
    int nans = 0;
    for (int code = 0; code < 256; ++code) nans += std::isnan(fp8_decode(static_cast<std::uint8_t>(code), E5M2));
    EXPECT_EQ(nans, 6);  // S.11111.01, .10, .11
}

TEST(Fp8, EncodingRoundTripsEveryFiniteCode) {
    for (const DType format : {E4M3, E5M2})
        for (int code = 0; code < 256; ++code) {
            const auto bits = static_cast<std::uint8_t>(code);
            const float v = fp8_decode(bits, format);
            if (std::isnan(v)) continue;
            EXPECT_EQ(fp8_encode(v, format, Fp8Overflow::non_saturating), bits) << to_string(format) << " " << code;
        }
}

TEST(Fp8, MidpointsRoundToTheEvenNeighbour) {
    // Between consecutive positive finite codes c and c + 1 (one ulp apart, also across a binade
    // and from the subnormals to the normals) the midpoint goes to the code whose last mantissa bit
    // is 0, i.e. the even code; a hair either side of it goes to the nearer one.
    for (const DType format : {E4M3, E5M2})
        for (int code = 0; code < 0x7F; ++code) {
            const float lo = fp8_decode(static_cast<std::uint8_t>(code), format);
            const float hi = fp8_decode(static_cast<std::uint8_t>(code + 1), format);
            if (!std::isfinite(hi) || std::isnan(hi)) continue;
            const float mid = (lo + hi) / 2;  // exact in fp32
            const int even = code % 2 == 0 ? code : code + 1;
            EXPECT_EQ(fp8_encode(mid, format), even) << to_string(format) << " " << code;
            EXPECT_EQ(fp8_encode(std::nextafter(mid, 0.0f), format), code) << to_string(format) << " " << code;
            EXPECT_EQ(fp8_encode(std::nextafter(mid, INFINITY), format), code + 1) << to_string(format) << " " << code;
        }
}

TEST(Fp8, HandWorkedRoundings) {
    // e4m3, ulp 1/8 in [1, 2): 1.0625 is the midpoint of 1 (0x38, even) and 1.125 (0x39): 1;
    // 1.1875 of 1.125 and 1.25 (0x3A, even): 1.25.
    EXPECT_EQ(fp8_encode(1.0625f, E4M3), 0x38);
    EXPECT_EQ(fp8_encode(1.1875f, E4M3), 0x3A);
    // ulp 1 in [8, 16): 15.5 lies between 15 (0x57) and 16; ties to even carry into the next
    // binade: 16 = 1.000 x 2^4 = 0x58.
    EXPECT_EQ(fp8_encode(15.5f, E4M3), 0x58);
    // Subnormals (quantum 2^-9): 2^-10 is the midpoint of 0 and the min subnormal: 0 (even);
    // 1.5 x 2^-9 goes to 2 x 2^-9 = 0x02; a value below 2^-10 underflows to a signed zero.
    EXPECT_EQ(fp8_encode(0x1p-10f, E4M3), 0x00);
    EXPECT_EQ(fp8_encode(1.5f * 0x1p-9f, E4M3), 0x02);
    EXPECT_EQ(fp8_encode(-0x1p-12f, E4M3), 0x80);
    // e5m2, ulp 1/4 in [1, 2): 1.125 between 1 (0x3C, even) and 1.25: 1; 1.375 to 1.5 (0x3E).
    EXPECT_EQ(fp8_encode(1.125f, E5M2), 0x3C);
    EXPECT_EQ(fp8_encode(1.375f, E5M2), 0x3E);
    // 0.1 in e4m3: 0.1 = 1.6 x 2^-4, ulp 2^-7: 0.1 / 2^-7 = 12.8 -> 13 units = 0.1015625.
    EXPECT_EQ(fp8_round(0.1f, E4M3), 0.1015625f);
    // and in e5m2: ulp 2^-6: 6.4 -> 6 units = 0.09375.
    EXPECT_EQ(fp8_round(0.1f, E5M2), 0.09375f);
}

TEST(Fp8, OverflowSaturatesOrNot) {
    // e4m3 max 448 (ulp 32 at 2^8): 464 is the midpoint of 448 (mantissa 110, even) and the
    // would-be 480 (111, the NaN code): it rounds to 448 in both modes. Anything above overflows:
    // saturating (PTX cvt.rn.satfinite) to +-448, non-saturating to NaN (e4m3 has no infinity).
    for (const Fp8Overflow mode : {Fp8Overflow::saturate, Fp8Overflow::non_saturating})
        EXPECT_EQ(fp8_encode(464.0f, E4M3, mode), 0x7E);
    EXPECT_EQ(fp8_encode(465.0f, E4M3, Fp8Overflow::saturate), 0x7E);
    EXPECT_EQ(fp8_encode(-1e6f, E4M3, Fp8Overflow::saturate), 0xFE);
    EXPECT_EQ(fp8_encode(465.0f, E4M3, Fp8Overflow::non_saturating), 0x7F);
    EXPECT_EQ(fp8_encode(INFINITY, E4M3, Fp8Overflow::saturate), 0x7E);
    EXPECT_EQ(fp8_encode(INFINITY, E4M3, Fp8Overflow::non_saturating), 0x7F);
    // e5m2 max 57344 = 1.11 x 2^15 (ulp 8192): the midpoint 61440 ties to the even 2^16, beyond
    // the range: infinity when not saturating, 57344 when saturating; just below it stays 57344.
    EXPECT_EQ(fp8_encode(61440.0f, E5M2, Fp8Overflow::non_saturating), 0x7C);
    EXPECT_EQ(fp8_encode(-61440.0f, E5M2, Fp8Overflow::non_saturating), 0xFC);
    EXPECT_EQ(fp8_encode(61440.0f, E5M2, Fp8Overflow::saturate), 0x7B);
    EXPECT_EQ(fp8_encode(61439.0f, E5M2, Fp8Overflow::non_saturating), 0x7B);
    EXPECT_EQ(fp8_encode(INFINITY, E5M2, Fp8Overflow::non_saturating), 0x7C);
    EXPECT_EQ(fp8_encode(-INFINITY, E5M2, Fp8Overflow::saturate), 0xFB);
    // NaN stays NaN in both modes.
    for (const DType format : {E4M3, E5M2})
        for (const Fp8Overflow mode : {Fp8Overflow::saturate, Fp8Overflow::non_saturating})
            EXPECT_TRUE(std::isnan(fp8_decode(fp8_encode(NAN, format, mode), format)));
}

// AMD CDNA3's FNUZ encodings (LLVM's Float8E4M3FNUZ / Float8E5M2FNUZ): bias 8 and 16, no
// infinities, no negative zero, 0x80 the only NaN; every other code finite.
TEST(Fp8Fnuz, E4m3DecodesEveryValueClass) {
    constexpr Fp8Encoding F = Fp8Encoding::fnuz;
    EXPECT_EQ(fp8_decode(0x40, E4M3, F), 1.0f);              // 0.1000.000 = 2^(8-8)
    EXPECT_EQ(fp8_decode(0xC0, E4M3, F), -1.0f);
    EXPECT_EQ(fp8_decode(0x38, E4M3, F), 0.5f);              // OCP's 1.0 is half of it here
    EXPECT_EQ(fp8_decode(0x08, E4M3, F), 0x1p-7f);           // min normal
    EXPECT_EQ(fp8_decode(0x01, E4M3, F), 0x1p-10f);          // min subnormal: 2^(1-8-3)
    EXPECT_EQ(fp8_decode(0x7F, E4M3, F), 240.0f);            // max: 1.111 x 2^(15-8); not a NaN here
    EXPECT_EQ(fp8_decode(0xFF, E4M3, F), -240.0f);
    EXPECT_TRUE(std::isnan(fp8_decode(0x80, E4M3, F)));      // the negative-zero pattern is the NaN
    int nans = 0;
    for (int code = 0; code < 256; ++code)
        nans += std::isnan(fp8_decode(static_cast<std::uint8_t>(code), E4M3, F));
    EXPECT_EQ(nans, 1);
}

TEST(Fp8Fnuz, E5m2DecodesEveryValueClass) {
    constexpr Fp8Encoding F = Fp8Encoding::fnuz;
    EXPECT_EQ(fp8_decode(0x40, E5M2, F), 1.0f);              // 0.10000.00 = 2^(16-16)
    EXPECT_EQ(fp8_decode(0x04, E5M2, F), 0x1p-15f);          // min normal
    EXPECT_EQ(fp8_decode(0x01, E5M2, F), 0x1p-17f);          // min subnormal
    EXPECT_EQ(fp8_decode(0x7F, E5M2, F), 57344.0f);          // max: 1.11 x 2^(31-16)
    EXPECT_EQ(fp8_decode(0x7C, E5M2, F), 32768.0f);          // OCP's infinity is a normal here
    int nans = 0, infinities = 0;
    for (int code = 0; code < 256; ++code) {
        const float v = fp8_decode(static_cast<std::uint8_t>(code), E5M2, F);
        nans += std::isnan(v);
        infinities += std::isinf(v);
    }
    EXPECT_EQ(nans, 1);
    EXPECT_EQ(infinities, 0);
}

TEST(Fp8Fnuz, EncodingRoundsSaturatesAndHasNoNegativeZero) {
    constexpr Fp8Encoding F = Fp8Encoding::fnuz;
    for (const DType format : {E4M3, E5M2})
        for (int code = 0; code < 256; ++code) {
            const auto bits = static_cast<std::uint8_t>(code);
            const float v = fp8_decode(bits, format, F);
            if (std::isnan(v)) continue;
            EXPECT_EQ(fp8_encode(v, format, Fp8Overflow::non_saturating, F), bits) << to_string(format) << " " << code;
        }
    EXPECT_EQ(fp8_encode(-0.0f, E4M3, Fp8Overflow::saturate, Fp8Encoding::fnuz), 0x00);
    EXPECT_EQ(fp8_encode(-0x1p-12f, E4M3, Fp8Overflow::saturate, Fp8Encoding::fnuz), 0x00);  // underflows to +0
    // 1 + 1/16 lies halfway between 1 and 1.125 (ulp 1/8 at 2^0): ties to even, 1.0 = 0x40.
    EXPECT_EQ(fp8_encode(1.0625f, E4M3, Fp8Overflow::saturate, Fp8Encoding::fnuz), 0x40);
    // 300 is beyond the range (from 240 + half an ulp = 248 on): saturate gives 240, else the NaN.
    EXPECT_EQ(fp8_encode(300.0f, E4M3, Fp8Overflow::saturate, Fp8Encoding::fnuz), 0x7F);
    EXPECT_EQ(fp8_encode(-300.0f, E4M3, Fp8Overflow::saturate, Fp8Encoding::fnuz), 0xFF);
    EXPECT_EQ(fp8_encode(300.0f, E4M3, Fp8Overflow::non_saturating, Fp8Encoding::fnuz), 0x80);
    EXPECT_EQ(fp8_encode(INFINITY, E5M2, Fp8Overflow::non_saturating, Fp8Encoding::fnuz), 0x80);
    EXPECT_EQ(fp8_encode(NAN, E5M2, Fp8Overflow::saturate, Fp8Encoding::fnuz), 0x80);
    EXPECT_EQ(fp8_round(400.0f, E4M3, Fp8Encoding::fnuz), 240.0f);
    EXPECT_EQ(fp8_round(400.0f, E4M3), 384.0f);  // OCP: the tie between 384 and 416 goes to 384's even mantissa
}

TEST(Fp8, DtypesParseAndTakeOneByte) {
    EXPECT_EQ(parse_operand_dtype("fp8_e4m3"), E4M3);
    EXPECT_EQ(parse_operand_dtype("fp8_e5m2"), E5M2);
    EXPECT_EQ(parse_operand_dtype("fp8"), std::nullopt);  // the format is part of the name
    EXPECT_EQ(bytes_of(E4M3), 1);
    EXPECT_EQ(bytes_of(E5M2), 1);
    EXPECT_EQ(accumulator_of(E4M3), DType::fp32);
}

}  // namespace
}  // namespace accelsim::fp8_test
