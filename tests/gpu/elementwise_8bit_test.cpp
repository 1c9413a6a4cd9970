// The 8-bit elementwise kernels (models/gpu/elementwise.h; docs/gpu.md "8-bit elementwise
// kernels"): int8 (per-tensor scale) and fp8 e4m3 / e5m2, four values a word. Every output against
// the double reference on the dequantized inputs at odd sizes (tails), the rounding of the int8
// requantization on hand-picked ties, instruction counts worked out by hand, the bytes moved (one
// per element and tensor) and which chips lower_op gives the kernels to.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "models/gpu/elementwise.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/launch_lowered.h"

namespace accelsim::gpu::elementwise_8bit_test {
namespace {

using test::elementwise_op;

LoweringTarget target_on(const char* arch, int sms, bool real_data) {
    return test::target_on(arch, sms, real_data, 5);
}

test::LaunchOutcome run(const Op& op, const LoweringTarget& target, bool skip_payload, simt::GlobalMemory& memory) {
    return test::launch_lowered(lower_elementwise(op, memory, target), memory, target, skip_payload);
}

using Case = std::tuple<OpKind, std::int64_t, DType>;
class EightBitElementwise : public ::testing::TestWithParam<Case> {};

TEST_P(EightBitElementwise, EveryOutputWithinItsBoundOfTheDoubleReference) {
    const auto [kind, n, dtype] = GetParam();
    simt::GlobalMemory memory;
    const test::LaunchOutcome o = run(elementwise_op(kind, n, dtype), target_on("sm_89", 2, true), false, memory);
    EXPECT_EQ(o.numerics.checked, n);
    EXPECT_TRUE(o.numerics.passed) << "max abs err " << o.numerics.max_abs_err;
    ASSERT_TRUE(o.numerics.quantization.has_value());
    EXPECT_EQ(o.numerics.quantization->values, n);
    // The report's scheme says what this kernel did to the values (not the GEMMs' int32
    // accumulation): int8 requantizes with its own scale but a copy keeps the input's; fp8 scales
    // its output by a power of two except relu and copy, which are exact in the format.
    const std::string& scheme = o.numerics.quantization->scheme;
    EXPECT_EQ(scheme.find("accumulation"), std::string::npos) << scheme;
    if (dtype == DType::int8)
        EXPECT_NE(scheme.find(kind == OpKind::copy ? "keeps the input's scale" : "requantized per tensor"), std::string::npos)
            << scheme;
    else
        EXPECT_EQ(scheme.find("2^-k") != std::string::npos, kind != OpKind::relu && kind != OpKind::copy) << scheme;
    if (dtype == DType::int8 && kind != OpKind::copy) {
        // Against the dequantized inputs the error is half an output step plus fp32's share
        // (gelu: (5|x| + 6) 2^-24 relative, |x| <= 1): below 0.5001 s_y.
        const double output_scale = 1.0 / test::argument_float(o.lowered.args.back());
        EXPECT_LE(o.numerics.max_abs_err, 0.5001 * output_scale);
        if (kind == OpKind::add) {
            // Against the unquantized inputs each input's rounding adds half its step: the
            // quantization error of a + b is at most (s_a + s_b + s_y) / 2.
            const std::size_t k = o.lowered.args.size();
            const double bound = 0.5 * (test::argument_float(o.lowered.args[k - 3]) + test::argument_float(o.lowered.args[k - 2]) + output_scale);
            EXPECT_LE(o.numerics.quantization->max_abs, bound * (1 + 1e-6));
        }
    }
    if (kind == OpKind::relu && dtype != DType::int8) {
        EXPECT_EQ(o.numerics.max_abs_err, 0.0);  // fp8 relu: the input or 0, both fp8 values, unscaled
    }
    if (dtype != DType::int8 && kind != OpKind::relu && kind != OpKind::copy && n > 1) {
        // A scaled fp8 output: the power-of-two scale puts the largest output in the top binade
        // below the format's largest value (OCP e4m3 (224, 448], e5m2 (28672, 57344]).
        const Storage s = *eight_bit_storage(dtype);
        const std::uint32_t y = o.lowered.args[kind == OpKind::gelu ? 2 : 3];  // after x, or a and b
        double largest = 0;
        for (std::int64_t e = 0; e < n; ++e)
            largest = std::max(largest, std::fabs(static_cast<double>(load_element(memory, y, e, s))));
        const double top = dtype == DType::fp8_e4m3 ? 448.0 : 57344.0;
        EXPECT_GE(largest, top / 2);  // z > top / 2 may round down onto it
        EXPECT_LE(largest, top);
        int exponent = 0;
        EXPECT_EQ(std::frexp(static_cast<double>(test::argument_float(o.lowered.args.back())), &exponent), 0.5);
    }
    if (kind == OpKind::copy) {
        EXPECT_EQ(o.numerics.max_abs_err, 0.0);
    }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    const auto [kind, n, dtype] = info.param;
    return std::string(to_string(kind)) + "_" + std::to_string(n) + "_" + std::string(to_string(dtype));
}

// 1, 7 and 4097 elements: a lone value in a padded word; a full word and a 3-value tail; 1025
// words, whose fifth block of 256 threads has a single lane with a word (a 1-value word).
INSTANTIATE_TEST_SUITE_P(All, EightBitElementwise,
                         ::testing::Combine(::testing::Values(OpKind::add, OpKind::mul, OpKind::relu, OpKind::gelu,
                                                              OpKind::copy),
                                            ::testing::Values(std::int64_t{1}, std::int64_t{7}, std::int64_t{4097}),
                                            ::testing::Values(DType::int8, DType::fp8_e4m3, DType::fp8_e5m2)),
                         case_name);

TEST(EightBitCheck, CatchesAnOutputOneStepOff) {
    // One output byte one step up: int8 one whole output step (> half a step), fp8 one ulp (twice
    // the rounding bound); the check must fail.
    for (DType dtype : {DType::int8, DType::fp8_e4m3, DType::fp8_e5m2}) {
        simt::GlobalMemory memory;
        const test::LaunchOutcome o =
            run(elementwise_op(OpKind::add, 100, dtype), target_on("sm_90", 1, true), false, memory);
        ASSERT_TRUE(o.numerics.passed) << to_string(dtype);
        const std::uint32_t y = o.lowered.args[3];
        std::uint8_t* byte = memory.data() + y + 9;
        *byte = static_cast<std::uint8_t>(*byte == 0x7f || *byte == 0x7e ? *byte - 1 : *byte + 1);
        EXPECT_FALSE(o.lowered.check(memory).passed) << to_string(dtype);
    }
}

// Runs ew_add_s8 on one word of a and b with scales 1 and the given 1/scale_y; the output word.
std::uint32_t add_s8_word(std::uint32_t a, std::uint32_t b, float inv_scale_y) {
    const simt::Kernel* k = elementwise_kernel(OpKind::add, Storage::s8);
    simt::GlobalMemory m;
    const std::uint32_t pa = m.allocate(4), pb = m.allocate(4), py = m.allocate(4);
    m.store32(pa, a);
    m.store32(pb, b);
    std::uint32_t one, inv;
    const float f1 = 1.0f;
    std::memcpy(&one, &f1, 4);
    std::memcpy(&inv, &inv_scale_y, 4);
    simt::run_functional(*k, m, {1, 32}, {1, pa, pb, py, one, one, inv});
    return m.load32(py);
}

TEST(EightBitInt8, RequantizationRoundsHalfToEvenAndSaturatesAt127) {
    // a = (1, 3, 5, -3) and b = 0, halved (1/scale_y = 0.5): 0.5, 1.5, 2.5, -1.5 round half to
    // even to 0, 2, 2, -2 = bytes 0x00, 0x02, 0x02, 0xFE (element 0 in the low byte).
    EXPECT_EQ(add_s8_word(0xFD050301u, 0, 0.5f), 0xFE020200u);
    // (127 + 127, -127 - 127, 100 + 27, -1 + 0) at 1/scale_y = 1: 254 and -254 saturate to 127
    // and -127 (0x7F, 0x81; never -128), 127 stays, -1 = 0xFF.
    EXPECT_EQ(add_s8_word(0xFF64817Fu, 0x001B817Fu, 1.0f), 0xFF7F817Fu);
    // -0.5 rounds to (negative) zero, stored as integer 0: (-1, 0, 0, 0) halved.
    EXPECT_EQ(add_s8_word(0x000000FFu, 0, 0.5f), 0x00000000u);
}

// Static instruction counts of a kernel by opcode name (cvt and prmt counted as one name each).
std::map<std::string, int> opcode_counts(const simt::Kernel& k) {
    std::map<std::string, int> counts;
    for (const simt::Instruction& in : k.code) ++counts[simt::opcode_name(in.op)];
    return counts;
}

TEST(EightBitInstructions, AddPerWordWorkedByHand) {
    // ew_add_s8, per word of 4 values: 2 loads, 8 prmt sign-extensions + 8 i2f + 8 fmul (the two
    // inputs dequantized), 4 fadd (the op), then per value fmul by 1/scale_y, fmin, fmax and the
    // rounding fadd (16), 3 prmt to gather the bytes, 1 store; 2 + 1 address adds and the loop's
    // add (4 integer adds); the preamble's 2 movs and mul/mad, the loop's setp, exit, shl, bra.
    const std::map<std::string, int> s8 = opcode_counts(*elementwise_kernel(OpKind::add, Storage::s8));
    EXPECT_EQ(s8.at("prmt"), 11);
    EXPECT_EQ(s8.at("i2f"), 8);
    EXPECT_EQ(s8.at("fmul"), 8 + 4);
    EXPECT_EQ(s8.at("fadd"), 4 + 4);
    EXPECT_EQ(s8.at("fmin"), 4);
    EXPECT_EQ(s8.at("fmax"), 4);
    EXPECT_EQ(s8.at("ld.global"), 2);
    EXPECT_EQ(s8.at("st.global"), 1);
    // ew_add_e4m3: per input 2 cvt fp8x2 -> f16x2 and 4 cvt f16 -> f32; 4 fmul by 1/scale_y;
    // 2 cvt packs; 1 prmt. ew_relu_e4m3 keeps its input's scale: no fmul.
    const std::map<std::string, int> f8 = opcode_counts(*elementwise_kernel(OpKind::add, Storage::e4m3));
    EXPECT_EQ(f8.at("cvt"), 2 * 6 + 2);
    EXPECT_EQ(f8.at("prmt"), 1);
    EXPECT_EQ(f8.at("fadd"), 4);
    EXPECT_EQ(f8.at("fmul"), 4);
    EXPECT_EQ(opcode_counts(*elementwise_kernel(OpKind::relu, Storage::e4m3)).count("fmul"), 0u);
    EXPECT_EQ(f8.count("i2f"), 0u);

    // Issued warp instructions for 32 words (128 int8 values), one block of 256 threads: the
    // preamble is 5 (mov, mov, mad, mov, mul). Warp 0 runs one trip: setp, exit (not taken), shl,
    // the body (4 address/load + 24 unpack + 4 op + 16 requantize + 3 pack + add and st = 53), add,
    // bra = 58, then setp and exit: 5 + 58 + 2 = 65. Warps 1-7 have no word: 5 + setp + exit = 7.
    // 65 + 7 x 7 = 114. fp8 e4m3: body 4 + 12 + 4 + 4 + 3 + 2 = 29, warp 0 = 5 + 34 + 2 = 41: 90.
    for (const auto& [dtype, issued] : {std::pair{DType::int8, 114u}, std::pair{DType::fp8_e4m3, 90u}}) {
        simt::GlobalMemory memory;
        const test::LaunchOutcome o =
            run(elementwise_op(OpKind::add, 128, dtype), target_on("sm_89", 1, false), true, memory);
        EXPECT_EQ(o.lowered.args[0], 32u) << to_string(dtype);
        EXPECT_EQ(o.stats.issued, issued) << to_string(dtype);
    }
}

TEST(EightBitBytes, OneBytePerElementAndTensor) {
    // relu over 4096 8-bit values: 1024 words, 4 KiB read and 4 KiB written = 128 + 128 sectors
    // of 32 B (a quarter of fp32's 1024); add reads two tensors: 384. A warp trip moves 32 words =
    // 128 B = 4 sectors per access.
    for (DType dtype : {DType::int8, DType::fp8_e4m3, DType::fp8_e5m2}) {
        for (const auto& [kind, sectors] : {std::pair{OpKind::relu, 256u}, std::pair{OpKind::add, 384u}}) {
            simt::GlobalMemory memory;
            const test::LaunchOutcome o = run(elementwise_op(kind, 4096, dtype), target_on("sm_90", 2, false), true, memory);
            EXPECT_EQ(o.stats.global_sectors, sectors) << to_string(dtype) << " " << to_string(kind);
            EXPECT_EQ(o.stats.global_requests, sectors / 4) << to_string(dtype) << " " << to_string(kind);
        }
    }
    EXPECT_EQ(storage_words(7, Storage::s8), 2);
    EXPECT_EQ(storage_words(8, Storage::e5m2), 2);
    EXPECT_EQ(storage_words(9, Storage::e4m3), 3);
}

TEST(EightBitStorage, FourValuesAWordLowByteFirst) {
    // int8: values already divided by the scale, rounded half to even and clamped: 2.5 -> 2,
    // -3.5 -> -4 (0xFC), 300 -> 127; fp8 e4m3 (OCP): 1 = 0x38, -2 = 0xC0, 0.5 = 0x30, 1000
    // saturates to 448 = 0x7E.
    simt::GlobalMemory m;
    const std::uint32_t a = m.allocate(8);
    store_elements(m, a, {2.5f, -3.5f, 300.0f, 0.0f, -1.0f}, Storage::s8);
    EXPECT_EQ(m.load32(a), 0x007FFC02u);
    EXPECT_EQ(m.load32(a + 4) & 0xffu, 0xFFu);
    EXPECT_EQ(load_element(m, a, 1, Storage::s8), -4.0f);
    store_elements(m, a, {1.0f, -2.0f, 0.5f, 1000.0f}, Storage::e4m3);
    EXPECT_EQ(m.load32(a), 0x7E30C038u);
    EXPECT_EQ(load_element(m, a, 3, Storage::e4m3), 448.0f);
}

class EightBitTiming : public ::testing::TestWithParam<std::tuple<OpKind, DType>> {};

TEST_P(EightBitTiming, SkipPayloadCyclesEqualFullRun) {
    const auto [kind, dtype] = GetParam();
    const Op op = elementwise_op(kind, 20001, dtype);
    test::expect_timing_only_equals_full_run(
        [&](simt::GlobalMemory& m, const LoweringTarget& t) { return lower_elementwise(op, m, t); },
        target_on("sm_90", 2, true));
}

INSTANTIATE_TEST_SUITE_P(All, EightBitTiming,
                         ::testing::Combine(::testing::Values(OpKind::add, OpKind::gelu),
                                            ::testing::Values(DType::int8, DType::fp8_e4m3, DType::fp8_e5m2)));

TEST(EightBitLowering, Int8EverywhereFp8FromSm89) {
    // a100 (sm_80), h100 (sm_90), l4 (sm_89) as in configs/*.json "compute_capability".
    const Op int8_add = elementwise_op(OpKind::add, 1000, DType::int8);
    const Op e4m3_gelu = elementwise_op(OpKind::gelu, 1000, DType::fp8_e4m3);
    const Op e5m2_mul = elementwise_op(OpKind::mul, 1000, DType::fp8_e5m2);
    const Op int32_add = elementwise_op(OpKind::add, 1000, DType::int32);
    for (const char* arch : {"sm_70", "sm_75", "sm_80", "sm_89", "sm_90"}) {
        SCOPED_TRACE(arch);
        const LoweringTarget t = target_on(arch, 2, false);
        const bool fp8 = std::string(arch) >= "sm_89";
        simt::GlobalMemory m;
        const auto lowered = lower_op(int8_add, m, t);
        ASSERT_TRUE(lowered.has_value());
        EXPECT_EQ(lowered->kernel->name, "ew_add_s8");
        EXPECT_EQ(lower_op(e4m3_gelu, m, t).has_value(), fp8);
        EXPECT_EQ(lower_op(e5m2_mul, m, t).has_value(), fp8);
        if (fp8) {
            EXPECT_EQ(lower_op(e4m3_gelu, m, t)->kernel->name, "ew_gelu_e4m3");
        }
        EXPECT_FALSE(lower_op(int32_add, m, t).has_value());  // int32 vector ops stay roofline rows
    }
}

TEST(EightBitLowering, Fp8OnCdna3ReadsAndWritesFnuz) {
    // mi300x (gfx942, sm.fp8_encoding fnuz): CDNA3 converts fp8 in hardware (V_CVT_PK_F32_FP8,
    // V_CVT_PK_FP8_F32), so fp8 elementwise ops run the 8-bit kernels there, in FNUZ: every output
    // within its bound, and a scaled output's largest value in FNUZ's top binade (e4m3: (120, 240],
    // FNUZ's largest being 240 where OCP's is 448; e5m2: (28672, 57344]).
    LoweringTarget t = target_on("gfx942", 2, true);
    t.sm.fp8_encoding = Fp8Encoding::fnuz;
    for (const DType dtype : {DType::fp8_e4m3, DType::fp8_e5m2})
        for (const OpKind kind : {OpKind::add, OpKind::mul, OpKind::relu, OpKind::gelu}) {
            SCOPED_TRACE(std::string(to_string(kind)) + " " + std::string(to_string(dtype)));
            simt::GlobalMemory memory;
            const test::LaunchOutcome o = run(elementwise_op(kind, 4097, dtype), t, false, memory);
            EXPECT_EQ(o.numerics.checked, 4097);
            EXPECT_TRUE(o.numerics.passed) << "max abs err " << o.numerics.max_abs_err;
            ASSERT_TRUE(o.numerics.quantization.has_value());
            EXPECT_EQ(o.numerics.quantization->encoding, Fp8Encoding::fnuz);
            EXPECT_EQ(o.numerics.quantization->scheme.rfind(std::string(to_string(dtype)) + " FNUZ: ", 0), 0u)
                << o.numerics.quantization->scheme;
            if (kind == OpKind::relu) continue;
            const Storage s = *eight_bit_storage(dtype);
            const std::uint32_t y = o.lowered.args[kind == OpKind::gelu ? 2 : 3];
            double largest = 0;
            for (std::int64_t e = 0; e < 4097; ++e)
                largest = std::max(largest, std::fabs(static_cast<double>(load_element(memory, y, e, s, Fp8Encoding::fnuz))));
            const double top = dtype == DType::fp8_e4m3 ? 240.0 : 57344.0;
            EXPECT_GE(largest, top / 2);
            EXPECT_LE(largest, top);
        }
}

}  // namespace
}  // namespace accelsim::gpu::elementwise_8bit_test
