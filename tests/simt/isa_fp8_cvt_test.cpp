// The fp8 cvt forms of the warp ISA (docs/simt-isa.md, PTX's .e4m3x2 / .e5m2x2 cvt), against bit
// patterns worked out by hand from the OCP formats (e4m3: bias 7; e5m2: bias 15) and IEEE fp16.
#include <gtest/gtest.h>

#include <cstring>

#include "models/simt/simt_gpu.h"

namespace accelsim::simt::isa_fp8_cvt_test {
namespace {

std::uint32_t bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

// Runs `body` (reading r0, r1 from in[0], in[1], leaving its result in r2) on one warp; returns
// lane 0's r2.
std::uint32_t run_one(const std::string& body, std::uint32_t a, std::uint32_t b) {
    const Kernel k = assemble(".param in, out\n.reg 4\n    ld.global r0, [in]\n    ld.global r1, [in+4]\n" + body +
                                  "    st.global [out], r2\n    exit\n",
                              "fp8_cvt.sasm");
    GlobalMemory m;
    const std::uint32_t in = m.allocate(8), out = m.allocate(4);
    m.store32(in, a);
    m.store32(in + 4, b);
    run_functional(k, m, {1, 1}, {in, out});
    return m.load32(out);
}

TEST(Fp8Cvt, UnpackTwoBytesOfAHalfToF16x2Exactly) {
    // e4m3 0x38 = 1 (exponent 7 - 7) -> fp16 0x3C00; 0xC0 = -2 -> 0xC000; lower byte in the low half.
    EXPECT_EQ(run_one("    cvt.rn.f16x2.e4m3x2.lo r2, r0\n", 0x1234C038u, 0), 0xC0003C00u);
    // .hi reads bits 16-31: 0x30 = 0.5 -> 0x3800; 0x7E = 448 = 1.75 2^8 -> 0 10111 1100000000 = 0x5F00.
    EXPECT_EQ(run_one("    cvt.rn.f16x2.e4m3x2.hi r2, r0\n", 0x7E30FFFFu, 0), 0x5F003800u);
    // e5m2 is fp16's top byte: 0x3C -> 0x3C00 (1), 0x7B -> 0x7B00 (57344).
    EXPECT_EQ(run_one("    cvt.rn.f16x2.e5m2x2.lo r2, r0\n", 0x00007B3Cu, 0), 0x7B003C00u);
    // e4m3 subnormal 0x01 = 2^-9 -> fp16 normal 2^-9 = 0 00110 0000000000 = 0x1800.
    EXPECT_EQ(run_one("    cvt.rn.f16x2.e4m3x2.lo r2, r0\n", 0x00000001u, 0), 0x00001800u);
}

TEST(Fp8Cvt, PackRoundsToNearestEvenSaturatesAndPutsTheFirstSourceHigh) {
    const std::string pack_e4m3 = "    cvt.rn.satfinite.e4m3x2.f32 r2, r0, r1\n";
    // 1.1875 lies halfway between 1.125 (0x39) and 1.25 (0x3A): even mantissa 010 -> 0x3A, in the
    // upper byte; 1.0625 halfway between 1 (0x38) and 1.125: even -> 0x38, in the lower byte.
    EXPECT_EQ(run_one(pack_e4m3, bits(1.1875f), bits(1.0625f)), 0x3A38u);
    // Beyond 448: the signed max (0xFE, 0x7E), not NaN.
    EXPECT_EQ(run_one(pack_e4m3, bits(-1000.0f), bits(500.0f)), 0xFE7Eu);
    // e5m2: 1e6 saturates to 57344 = 0x7B; 1 = 0x3C.
    EXPECT_EQ(run_one("    cvt.rn.satfinite.e5m2x2.f32 r2, r0, r1\n", bits(1e6f), bits(1.0f)), 0x7B3Cu);
}

TEST(Fp8Cvt, UnknownFormIsAnAssemblyErrorNamingTheForms) {
    try {
        assemble(".reg 2\n    cvt.rn.f16x2.e4m3x2 r0, r1\n    exit\n", "bad.sasm");
        FAIL() << "no error";
    } catch (const AssemblyError& e) {
        EXPECT_NE(std::string(e.what()).find("bad.sasm:2"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("cvt.rn.f16x2.e4m3x2.lo|hi"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace accelsim::simt::isa_fp8_cvt_test
