// int8 and fp8 softmax and layernorm (models/gpu/reduction.h, 8-bit storage four values a word):
// every output against a double reference the test computes itself on the dequantized inputs it
// reads back, within a bound derived below; issued instructions worked out by hand; timing-only
// runs equal to full ones; which targets lower_op gives the kernels to (fp8 from sm_89).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "models/gpu/reduction.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/launch_lowered.h"

namespace accelsim::gpu::reduction_8bit_test {
namespace {

using test::row_op;

LoweringTarget target_on(const char* arch, int sms, bool real_data) {
    return test::target_on(arch, sms, real_data, 11);
}

Storage storage_for(DType dtype) { return *eight_bit_storage(dtype); }

// Element `index` of an 8-bit input as the kernel reads it: s8 q times its scale in fp32.
double read_input(const simt::GlobalMemory& m, std::uint32_t address, std::int64_t index, Storage s, float scale) {
    const float v = load_element(m, address, index, s);
    return s == Storage::s8 ? static_cast<double>(v * scale) : static_cast<double>(v);
}

using Case = std::tuple<OpKind, std::int64_t, DType>;
class EightBitRows : public ::testing::TestWithParam<Case> {};

// The test's own bound on |output - double reference on the dequantized inputs|:
// - the fp32 computation's share stays below 2e-3 for these data (reduction.cpp's derivations:
//   softmax (10 X + cols + 16) 2^-24 <= 1.2e-4 relative with X <= 8, cols <= 1030; layernorm
//   2^-23 [|gamma| ((n + 10) X rstd + (n / 2 + 12) |z|) + |y|] <= 1.6e-3 with n <= 1030, X <= 3,
//   |gamma| <= 1.5 and, checked per row below, rstd <= 3, |z| <= 3, |y| <= 5);
// - int8 requantization: half an output step s_y (round half to even, no clamp: s_y covers
//   the largest output); fp8: one rounding of y / s_y, s_y the output scale, so u |y| (u = 2^-4
//   e4m3, 2^-3 e5m2) plus s_y times half the subnormal spacing (2^-10, 2^-17 OCP); no saturation
//   (s_y maps the largest output onto the format's largest value, which the test checks).
TEST_P(EightBitRows, EveryOutputWithinTheDerivedBoundOfTheTestsDoubleReference) {
    const auto [kind, cols, dtype] = GetParam();
    const std::int64_t rows = 5;
    const bool ln = kind == OpKind::layernorm;
    const Storage s = storage_for(dtype);
    const LoweringTarget target = target_on("sm_89", 2, true);
    simt::GlobalMemory m;
    const Op op = row_op(kind, rows, cols, dtype);
    const test::LaunchOutcome o =
        test::launch_lowered(ln ? lower_layernorm(op, m, target) : lower_softmax(op, m, target), m, target, false);
    // Warp per row up to 1024 columns, a block per row beyond (reduction_variant).
    EXPECT_EQ(o.lowered.kernel->name, std::string(ln ? "layernorm_" : "softmax_") + (cols <= 1024 ? "warp_" : "block_") +
                                          to_string(s));
    // The library's own check passes and reports the quantization error of every output.
    EXPECT_TRUE(o.numerics.passed) << o.numerics.max_abs_err;
    EXPECT_EQ(o.numerics.checked, rows * cols);
    ASSERT_TRUE(o.numerics.quantization.has_value());
    EXPECT_EQ(o.numerics.quantization->values, rows * cols);
    // The scheme names the row op's own inputs and its requantized or scaled output.
    const std::string& scheme = o.numerics.quantization->scheme;
    EXPECT_EQ(scheme.find("accumulation"), std::string::npos) << scheme;
    EXPECT_NE(scheme.find(ln ? "inputs x, gamma and beta" : "input x"), std::string::npos) << scheme;
    EXPECT_NE(scheme.find(s == Storage::s8 ? "requantized per tensor" : "2^-k"), std::string::npos) << scheme;

    const std::vector<std::uint32_t>& a = o.lowered.args;
    const std::uint32_t x = a[3], gamma = ln ? a[4] : 0, beta = ln ? a[5] : 0, y = ln ? a[6] : a[4];
    const std::size_t extra = ln ? 8 : 5;  // the scale arguments follow (s8)
    const float scale_x = s == Storage::s8 ? test::argument_float(a[extra]) : 1.0f;
    const float scale_gamma = s == Storage::s8 && ln ? test::argument_float(a[extra + 1]) : 1.0f;
    const float scale_beta = s == Storage::s8 && ln ? test::argument_float(a[extra + 2]) : 1.0f;
    const double output_scale = 1.0 / test::argument_float(a.back());  // the last argument is 1 / s_y
    if (s == Storage::s8 && !ln) {
        // Softmax's calibrated scale: the largest probability / 127, never above 1/127.
        EXPECT_GE(test::argument_float(a.back()), 127.0f);
    }
    const std::int64_t pitch = storage_words(cols, s) * 4;
    const double u = s == Storage::s8 ? 0.0 : unit_roundoff(s);
    const double floor = s == Storage::s8 ? 0.0 : output_scale * subnormal_half_spacing(s);
    double worst = 0, largest_stored = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        std::vector<double> in(static_cast<std::size_t>(cols)), want(in.size());
        for (std::int64_t j = 0; j < cols; ++j) in[static_cast<std::size_t>(j)] = read_input(m, x, r * pitch + j, s, scale_x);
        if (ln) {
            double mean = 0, var = 0;
            for (double v : in) mean += v;
            mean /= static_cast<double>(cols);
            for (double v : in) var += (v - mean) * (v - mean);
            const double rstd = 1.0 / std::sqrt(var / static_cast<double>(cols) + 1e-5);
            ASSERT_LE(rstd, 3.0);
            for (std::int64_t j = 0; j < cols; ++j) {
                const double z = (in[static_cast<std::size_t>(j)] - mean) * rstd;
                ASSERT_LE(std::fabs(z), 3.0);
                want[static_cast<std::size_t>(j)] =
                    z * read_input(m, gamma, j, s, scale_gamma) + read_input(m, beta, j, s, scale_beta);
                ASSERT_LE(std::fabs(want[static_cast<std::size_t>(j)]), 5.0);
            }
        } else {
            const double mx = *std::max_element(in.begin(), in.end());
            double sum = 0;
            for (std::size_t j = 0; j < in.size(); ++j) sum += (want[j] = std::exp(in[j] - mx));
            for (double& w : want) w /= sum;
        }
        for (std::int64_t j = 0; j < cols; ++j) {
            const double w = want[static_cast<std::size_t>(j)];
            const double q = static_cast<double>(load_element(m, y, r * pitch + j, s));
            largest_stored = std::max(largest_stored, std::fabs(q));
            const double got = q * output_scale;
            const double bound = s == Storage::s8 ? 0.5 * output_scale + 2e-3 : u * std::fabs(w) + floor + 2e-3;
            worst = std::max(worst, std::fabs(got - w) / bound);
            ASSERT_LE(std::fabs(got - w), bound) << "row " << r << " col " << j;
        }
    }
    EXPECT_GT(worst, 0.0);  // the outputs were rounded to 8 bits: not all exact
    // The calibration puts the largest output on int8's 127; fp8's scale is the power of two that
    // brings it into the top binade below the format's largest value (OCP e4m3 448 = 1.75 x 2^8,
    // so (224, 448] before rounding; e5m2 57344 = 1.75 x 2^15, so (28672, 57344]).
    if (s == Storage::s8) {
        EXPECT_EQ(largest_stored, 127.0);
    } else {
        const double largest = s == Storage::e4m3 ? 448.0 : 57344.0;
        EXPECT_GE(largest_stored, largest / 2);  // z > largest / 2 may round down onto it
        EXPECT_LE(largest_stored, largest);
        int exponent = 0;
        EXPECT_EQ(std::frexp(output_scale, &exponent), 0.5) << output_scale;  // a power of two
    }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    const auto [kind, cols, dtype] = info.param;
    return std::string(to_string(kind)) + "_" + std::to_string(cols) + "_" + std::string(to_string(dtype));
}

// 13 columns: three full words and a 1-value tail (three padding values masked); 130: the
// unrolled 2-word trips then a 2-value tail; 1030: a block per row (past 1024), tail of 2.
INSTANTIATE_TEST_SUITE_P(All, EightBitRows,
                         ::testing::Combine(::testing::Values(OpKind::softmax, OpKind::layernorm),
                                            ::testing::Values(std::int64_t{13}, std::int64_t{130}, std::int64_t{1030}),
                                            ::testing::Values(DType::int8, DType::fp8_e4m3, DType::fp8_e5m2)),
                         case_name);

// The byte among `n` at `address` whose value is largest read as a signed int8: for int8 the
// largest output, for fp8 the largest positive one (sign clear, the bits ordered as magnitudes).
std::uint8_t* memory_byte_of_largest(simt::GlobalMemory& m, std::uint32_t address, int n) {
    std::uint8_t* bytes = m.data() + address;
    return std::max_element(bytes, bytes + n, [](std::uint8_t p, std::uint8_t q) {
        return static_cast<std::int8_t>(p) < static_cast<std::int8_t>(q);
    });
}

TEST(EightBitRowsCheck, CatchesAnOutputOneStepOff) {
    // Row 0's largest output moved down: int8 one step (twice the half-step bound); fp8 two ulps
    // (at least 1.5 ulps from the reference, and the bound u |y| is at most one ulp of y's binade);
    // the lowering's check must fail.
    for (DType dtype : {DType::int8, DType::fp8_e4m3, DType::fp8_e5m2}) {
        for (OpKind kind : {OpKind::softmax, OpKind::layernorm}) {
            SCOPED_TRACE(std::string(to_string(dtype)) + " " + std::string(to_string(kind)));
            const LoweringTarget target = target_on("sm_90", 1, true);
            simt::GlobalMemory m;
            const Op op = row_op(kind, 4, 64, dtype);
            const test::LaunchOutcome o = test::launch_lowered(
                kind == OpKind::layernorm ? lower_layernorm(op, m, target) : lower_softmax(op, m, target), m, target, false);
            ASSERT_TRUE(o.numerics.passed);
            const std::uint32_t y = kind == OpKind::layernorm ? o.lowered.args[6] : o.lowered.args[4];
            std::uint8_t* largest = memory_byte_of_largest(m, y, 64);
            *largest = static_cast<std::uint8_t>(*largest - (dtype == DType::int8 ? 1 : 2));
            EXPECT_FALSE(o.lowered.check(m).passed);
        }
    }
}

TEST(EightBitRowsInstructions, OneWordPerLaneSoftmaxWorkedByHand) {
    // Softmax over 1 row of 128 int8 values: 32 words, warp per row, one 32-thread block; every
    // lane owns one word (r6 = lane < 32 = cols / 4 full words). Issued warp instructions:
    // preamble 5 (shr, mad, mul, mov, mov) + shr r9 = 6; row head (setp, exit, mul, shl, add, add)
    // = 6; mov -inf = 1.
    // Each pass: mov r6, the 2-word loop's test (add, setp, bra taken: lane + 32 >= 32) = 4, one
    // trip of the one-word loop (setp, bra, shl, add, ld = 5; unpack 4 prmt + 4 i2f + 4 fmul = 12;
    // ... ; add, bra = 2), then setp and the taken bra = 2.
    // - max: masking the tail (shl, sub, 3 x setp + selp = 8) and 4 fmax: 4 + 5 + 12 + 8 + 4 + 2 + 2 = 37;
    // - sum: masking 8, 4 x (ffma, ex2, fadd): 4 + 5 + 12 + 8 + 12 + 2 + 2 = 45;
    // - out: no masking, 4 x (ffma, ex2, fmul) = 12, requantize 4 x (fmul, fmin, fmax, fadd) + 3
    //   prmt = 19, add and st = 2: 4 + 5 + 12 + 12 + 21 + 2 + 2 = 58.
    // Two butterflies of 5 (shfl, op) = 20; fmul and mov between max and sum = 2; rcp = 1; the
    // row loop's add, bra, then setp and exit = 4.
    // 6 + 6 + 1 + 37 + 45 + 58 + 20 + 2 + 1 + 4 = 180.
    // e4m3: unpack 2 cvt to f16x2 + 4 cvt to f32 = 6 (not 12) in each pass, pack 4 fmul by the
    // output's 1/scale + 2 cvt + 1 prmt = 7 (not 19): 180 - 3 x 6 - 12 = 150.
    for (const auto& [dtype, issued] : {std::pair{DType::int8, 180u}, std::pair{DType::fp8_e4m3, 150u}}) {
        SCOPED_TRACE(to_string(dtype));
        const LoweringTarget target = target_on("sm_89", 1, false);
        simt::GlobalMemory m;
        const test::LaunchOutcome o =
            test::launch_lowered(lower_softmax(row_op(OpKind::softmax, 1, 128, dtype), m, target), m, target, true);
        EXPECT_EQ(o.lowered.dims.grid, 1u);
        EXPECT_EQ(o.lowered.dims.block, 32u);
        EXPECT_EQ(o.stats.issued, issued);
    }
}

TEST(EightBitRowsScale, Fp8ProbabilitiesKeepTheFormatsPrecision) {
    // A softmax row of 512 values on [-8, 8) has probabilities around 1/512 = 2^-9, below e4m3's
    // smallest normal 2^-6: stored as they are they would keep 1 to 3 significant bits. Scaled by
    // s_y (a power of two, the largest probability into (224, 448]), all but the far tail are
    // normal, so the outputs'
    // rounding error is that of 4 significant bits: with mantissas log-uniform on [1, 2), the error
    // e uniform on +-ulp/2 with ulp = 2^-3 of the binade gives E[(e/v)^2] = (2^-6 / 12) E[1/v^2]
    // and E[1/v^2] = (1 / ln 2) * integral of v^-3 over [1, 2) = 0.541, so a relative RMS of
    // sqrt(2^-6 / 12 * 0.541) = 2.65 % (measured 2.70 %: the norm weights the few largest
    // probabilities). Stored unscaled, the same outputs measure 5.7 %. (e5m2 needs no scale here:
    // its normals reach down to 2^-14.)
    {
        const DType dtype = DType::fp8_e4m3;
        const double expected_rms = 0.0265;
        const Storage s = storage_for(dtype);
        const LoweringTarget target = target_on("sm_90", 2, true);
        simt::GlobalMemory m;
        const std::int64_t rows = 64, cols = 512;
        const test::LaunchOutcome o =
            test::launch_lowered(lower_softmax(row_op(OpKind::softmax, rows, cols, dtype), m, target), m, target, false);
        ASSERT_TRUE(o.numerics.passed);
        const std::vector<std::uint32_t>& a = o.lowered.args;
        const double output_scale = 1.0 / test::argument_float(a.back());
        double squared_error = 0, squared_reference = 0;
        for (std::int64_t r = 0; r < rows; ++r) {
            // The reference on the fp8 inputs as read: only the outputs' rounding is measured.
            std::vector<double> want(static_cast<std::size_t>(cols));
            double mx = -INFINITY, sum = 0;
            for (std::int64_t j = 0; j < cols; ++j)
                mx = std::max(mx, want[static_cast<std::size_t>(j)] = read_input(m, a[3], r * cols + j, s, 1.0f));
            for (double& w : want) sum += (w = std::exp(w - mx));
            for (std::int64_t j = 0; j < cols; ++j) {
                const double w = want[static_cast<std::size_t>(j)] / sum;
                const double got = static_cast<double>(load_element(m, a[4], r * cols + j, s)) * output_scale;
                squared_error += (got - w) * (got - w);
                squared_reference += w * w;
            }
        }
        const double rms = std::sqrt(squared_error / squared_reference);
        EXPECT_NEAR(rms, expected_rms, 0.15 * expected_rms);
    }
}

class EightBitRowsTiming : public ::testing::TestWithParam<std::tuple<OpKind, DType>> {};

TEST_P(EightBitRowsTiming, SkipPayloadCyclesEqualFullRun) {
    const auto [kind, dtype] = GetParam();
    const Op op = row_op(kind, 40, 515, dtype);
    test::expect_timing_only_equals_full_run(
        [&](simt::GlobalMemory& m, const LoweringTarget& t) {
            return kind == OpKind::layernorm ? lower_layernorm(op, m, t) : lower_softmax(op, m, t);
        },
        target_on("sm_90", 2, true));
}

INSTANTIATE_TEST_SUITE_P(All, EightBitRowsTiming,
                         ::testing::Combine(::testing::Values(OpKind::softmax, OpKind::layernorm),
                                            ::testing::Values(DType::int8, DType::fp8_e4m3, DType::fp8_e5m2)));

TEST(EightBitRowsLowering, Int8EverywhereFp8FromSm89) {
    // int8 softmax and layernorm lower on every SIMT arch; fp8 only from sm_89 (PTX's e4m3x2 /
    // e5m2x2 cvt forms), below which lower_op keeps the roofline row (nullopt).
    // 4096 rows of 768 on 2 SMs take a warp each (eight_bit_row_variant: warp 32 x 4 steps, block
    // 256 x 2).
    for (const char* arch : {"sm_70", "sm_80", "sm_89", "sm_90"}) {
        SCOPED_TRACE(arch);
        const LoweringTarget t = target_on(arch, 2, false);
        const bool fp8 = std::string(arch) >= "sm_89";
        for (OpKind kind : {OpKind::softmax, OpKind::layernorm}) {
            simt::GlobalMemory m;
            const auto int8 = lower_op(row_op(kind, 4096, 768, DType::int8), m, t);
            ASSERT_TRUE(int8.has_value());
            EXPECT_EQ(int8->kernel->name, std::string(to_string(kind)) + "_warp_s8");
            for (DType dtype : {DType::fp8_e4m3, DType::fp8_e5m2}) {
                const auto lowered = lower_op(row_op(kind, 4096, 768, dtype), m, t);
                EXPECT_EQ(lowered.has_value(), fp8);
                if (lowered) {
                    EXPECT_EQ(lowered->kernel->name, std::string(to_string(kind)) + "_warp_" + to_string(*eight_bit_storage(dtype)));
                }
            }
            EXPECT_FALSE(lower_op(row_op(kind, 8, 768, DType::int32), m, t).has_value());  // no int32 kernel
        }
    }
    // PyTorch's variants have no 8-bit form: forcing one is an error, not a silent 16-bit run.
    simt::GlobalMemory m;
    EXPECT_THROW(lower_row_reduction(row_op(OpKind::softmax, 8, 128, DType::int8), m, target_on("sm_80", 2, false),
                                     ReductionVariant::softmax_warp_persistent),
                 std::invalid_argument);
}

TEST(EightBitRowVariant, FewLongRowsTakeABlockEachManyRowsAWarp) {
    // sm_80 limits on 108 SMs (a100's): both kernels use 32 registers, so 256-thread blocks fit 8 an
    // SM (2048 threads): block per row holds 864 rows at once; warp per row with 8 warps a block
    // (rows >= 8 x 108) 6912, with 1 (fewer than 216 rows) 32 blocks an SM, 3456. Steps = waves x
    // (ceil(words / 64) + 1) for a warp, waves x (ceil(words / 512) + 1) for a block; int8 words =
    // ceil(cols / 4).
    const LoweringTarget t = target_on("sm_80", 108, false);
    struct Case {
        OpKind kind;
        std::int64_t rows, cols;
        ReductionVariant want;
    };
    const Case cases[] = {
        {OpKind::layernorm, 128, 768, ReductionVariant::block_per_row},   // 192 words: warp 1 x 4, block 1 x 2
        {OpKind::layernorm, 1024, 768, ReductionVariant::warp_per_row},   // warp 1 x 4, block 2 x 2: a tie
        {OpKind::layernorm, 2048, 768, ReductionVariant::warp_per_row},   // warp 1 x 4, block 3 x 2
        {OpKind::softmax, 1536, 128, ReductionVariant::warp_per_row},     // 32 words: warp 1 x 2, block 2 x 2
        {OpKind::softmax, 64, 1024, ReductionVariant::block_per_row},     // 256 words: warp 1 x 5, block 1 x 2
        {OpKind::layernorm, 100000, 1024, ReductionVariant::warp_per_row},  // warp 15 x 5, block 116 x 2
        {OpKind::softmax, 5, 1030, ReductionVariant::block_per_row},      // beyond 1024 columns: OneFlow's rule
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::to_string(c.rows) + " x " + std::to_string(c.cols));
        EXPECT_EQ(eight_bit_row_variant(c.kind, c.rows, c.cols, Storage::s8, t), c.want);
    }
    // And the choice is the faster kernel, simulated (timing only, ideal memory): 128 x 768 and
    // 2048 x 768 layernorms under both variants.
    for (const std::int64_t rows : {std::int64_t{128}, std::int64_t{2048}}) {
        SCOPED_TRACE(rows);
        std::uint64_t cycles[2];
        for (const ReductionVariant v : {ReductionVariant::warp_per_row, ReductionVariant::block_per_row}) {
            simt::GlobalMemory m;
            const Op op = row_op(OpKind::layernorm, rows, 768, DType::int8);
            cycles[v == ReductionVariant::block_per_row] =
                test::launch_lowered(lower_row_reduction(op, m, t, v), m, t, true).stats.cycles;
        }
        const bool block_faster = cycles[1] < cycles[0];
        EXPECT_EQ(block_faster, eight_bit_row_variant(OpKind::layernorm, rows, 768, Storage::s8, t) ==
                                    ReductionVariant::block_per_row)
            << "warp " << cycles[0] << ", block " << cycles[1];
    }
}

TEST(EightBitRowsLowering, Fp8OnCdna3ReadsAndWritesFnuz) {
    // mi300x (gfx942, FNUZ): fp8 softmax and layernorm run the 8-bit row kernels, every output
    // within its bound; the stored bytes are FNUZ (read as OCP the same checks would not hold:
    // FNUZ's bias is one more, so an OCP reading doubles every value).
    LoweringTarget t = target_on("gfx942", 2, true);
    t.sm.fp8_encoding = Fp8Encoding::fnuz;
    for (const OpKind kind : {OpKind::softmax, OpKind::layernorm})
        for (const DType dtype : {DType::fp8_e4m3, DType::fp8_e5m2}) {
            SCOPED_TRACE(std::string(to_string(kind)) + " " + std::string(to_string(dtype)));
            simt::GlobalMemory m;
            const Op op = row_op(kind, 64, 768, dtype);
            const auto o = test::launch_lowered(kind == OpKind::layernorm ? lower_layernorm(op, m, t) : lower_softmax(op, m, t),
                                                m, t, false);
            EXPECT_EQ(o.numerics.checked, 64 * 768);
            EXPECT_TRUE(o.numerics.passed) << "max abs err " << o.numerics.max_abs_err;
            ASSERT_TRUE(o.numerics.quantization.has_value());
            EXPECT_EQ(o.numerics.quantization->encoding, Fp8Encoding::fnuz);
        }
}

}  // namespace
}  // namespace accelsim::gpu::reduction_8bit_test
