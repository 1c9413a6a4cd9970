// Quantization error (models/common/quantization.h): int8 symmetric per-tensor quantization and
// fp8 rounding against fp32, on cases worked by hand and on a larger GEMM whose figures Eigen
// computes here in double from the test's own quantization.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "models/common/quantization.h"

namespace accelsim::quantization_test {
namespace {

TEST(Quantization, Int8ScaleAndTiesToEven) {
    // max|x| = 127/64: scale 1/64 exactly, so x/scale = 64 x is exact and the ties are real.
    const std::vector<float> x{127.0f / 64, -65.0f / 128, 0.3f, -1.0f, 3.0f / 128, 0.0f};
    EXPECT_EQ(int8_symmetric_scale(x.data(), x.size()), 1.0f / 64);
    const QuantizedOperand q = quantize_operand(x, DType::int8);
    EXPECT_EQ(q.scale, 1.0 / 64);
    // 127; -32.5 -> -32 (even); 19.2 -> 19; -64; 1.5 -> 2 (even); 0.
    EXPECT_EQ(q.values, (std::vector<float>{127, -32, 19, -64, 2, 0}));
    // An all-zero tensor keeps scale 1 (no division by zero) and quantizes to zeros.
    const std::vector<float> zeros(4, 0.0f);
    EXPECT_EQ(quantize_operand(zeros, DType::int8).scale, 1.0);
    // Values beyond the scale's range (not produced by the per-tensor scale, but the clamp holds).
    float big[2] = {2.0f, -2.0f}, out[2];
    quantize_int8(big, 2, 1.0f / 127, out);
    EXPECT_EQ(out[0], 127.0f);
    EXPECT_EQ(out[1], -127.0f);
}

TEST(Quantization, Int8TwoByTwoMatmulWorkedByHand) {
    // A = [[127/64, -65/128], [0.3, -1]]: scale_a = 1/64, q_a = [[127, -32], [19, -64]].
    // B = [[127/32, 0.1], [-49/64, 2]]:   scale_b = 1/32, q_b = [[127, 3], [-24, 64]] (-24.5 -> -24).
    // int32 q_a q_b = [[16897, -1667], [3949, -4039]]; dequantized by 1/2048:
    //   [[8.25048828125, -0.81396484375], [1.92822265625, -1.97216796875]].
    // fp32 reference A B = [[67701/8192, -0.8171875], [1.95625, -1.97]] (0.3 and 0.1 as fp32: 1e-8 off).
    // Errors: -113/8192 = -0.0137939453125, 0.00322265625, -0.02802734375, -0.00216796875.
    const GemmShape g{1, 2, 2, 2};
    const std::vector<float> a{127.0f / 64, -65.0f / 128, 0.3f, -1.0f}, b{127.0f / 32, 0.1f, -49.0f / 64, 2.0f};
    const QuantizedOperand qa = quantize_operand(a, DType::int8), qb = quantize_operand(b, DType::int8);
    EXPECT_EQ(qa.values, (std::vector<float>{127, -32, 19, -64}));
    EXPECT_EQ(qb.values, (std::vector<float>{127, 3, -24, 64}));
    const std::vector<float> acc = fp32_reference_gemm(g, qa.values, qb.values);  // exact: small integers
    EXPECT_EQ(acc, (std::vector<float>{16897, -1667, 3949, -4039}));
    std::vector<double> dequantized;
    for (float v : acc) dequantized.push_back(v * qa.scale * qb.scale);
    const QuantizationError e = quantization_error(DType::int8, dequantized, fp32_reference_gemm(g, a, b));
    EXPECT_EQ(e.values, 4);
    EXPECT_NEAR(e.max_abs, 0.02802734375, 1e-6);
    // sum e^2 = 0.000990893, sum ref^2 = 8.2642822^2 + 0.8171875^2 + 1.95625^2 + 1.97^2 = 76.673970.
    EXPECT_NEAR(e.sum_squared_error, 0.000990893, 1e-8);
    EXPECT_NEAR(e.sum_squared_reference, 76.673970, 1e-5);
    EXPECT_NEAR(e.relative_rms(), std::sqrt(0.000990893 / 76.673970), 1e-7);  // 0.0035949
}

TEST(Quantization, Fp8DotProductWorkedByHand) {
    // e4m3 has 3 mantissa bits: 0.3 -> 0.3125 (ulp 1/32 in [0.25, 0.5): 9.6 -> 10), 1.1 -> 1.125
    // (ulp 1/8: 8.8 -> 9), 1 stays, -0.2 -> -0.203125 (ulp 1/64: 12.8 -> 13).
    // y_q = 0.3125 - 1.125 * 0.203125 = 0.083984375; y = 0.3 - 0.22 = 0.08; error 0.003984375.
    const GemmShape g{1, 1, 1, 2};
    const std::vector<float> a{0.3f, 1.1f}, b{1.0f, -0.2f};
    const QuantizedOperand qa = quantize_operand(a, DType::fp8_e4m3), qb = quantize_operand(b, DType::fp8_e4m3);
    EXPECT_EQ(qa.values, (std::vector<float>{0.3125f, 1.125f}));
    EXPECT_EQ(qb.values, (std::vector<float>{1.0f, -0.203125f}));
    EXPECT_EQ(qa.scale, 1.0);
    const std::vector<float> y_q = fp32_reference_gemm(g, qa.values, qb.values);
    const QuantizationError e =
        quantization_error(DType::fp8_e4m3, {static_cast<double>(y_q[0])}, fp32_reference_gemm(g, a, b));
    EXPECT_NEAR(e.max_abs, 0.003984375, 1e-7);
    EXPECT_NEAR(e.relative_rms(), 0.003984375 / 0.08, 1e-6);  // 0.0498
}

TEST(Quantization, PoolingIsTheRmsOverAllOutputs) {
    // Op 1: errors (3, 4) on references (0, 10); op 2: error 1 on reference 5 (hand: sums 25 + 1
    // over 100 + 25, so relative RMS sqrt(26/125); worst op sqrt(25/100) = 0.5; max abs 4).
    QuantizationError one, two, run;
    one.add(3, 0);
    one.add(14, 10);
    two.add(6, 5);
    run.pool(one);
    run.pool(two);
    EXPECT_EQ(run.ops, 2);
    EXPECT_EQ(run.values, 3);
    EXPECT_EQ(run.max_abs, 4);
    EXPECT_DOUBLE_EQ(run.relative_rms(), std::sqrt(26.0 / 125.0));
    EXPECT_DOUBLE_EQ(run.worst_op_relative_rms, 0.5);
    QuantizationError all_zero;
    all_zero.add(0, 0);
    EXPECT_EQ(all_zero.relative_rms(), 0);
}

TEST(Quantization, Int8GemmAgainstEigenInDouble) {
    // 48 x 56 x 40 uniform [-1, 1) inputs. The test quantizes with its own Eigen expressions and
    // computes the error in double; the module's figures must agree to fp32's rounding. For
    // uniform inputs the error has a closed form too: each operand's rounding error is uniform on
    // [-s/2, s/2] (variance s^2/12) and |x| is uniform (E x^2 = 1/3), so
    // E(y_q - y)^2 / E y^2 = (2 K (1/3) s^2/12) / (K/9) = s^2/2 with s = max|x|/127 ~ 1/127:
    // relative RMS ~ 1/(127 sqrt 2) = 0.00557.
    using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const GemmShape g{1, 48, 40, 56};
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(48 * 56), b(56 * 40);
    for (float& x : a) x = uniform(rng);
    for (float& x : b) x = uniform(rng);
    const Eigen::Map<const Eigen::Matrix<float, 48, 56, Eigen::RowMajor>> A(a.data());
    const Eigen::Map<const Eigen::Matrix<float, 56, 40, Eigen::RowMajor>> B(b.data());
    const float sa = A.cwiseAbs().maxCoeff() / 127.0f, sb = B.cwiseAbs().maxCoeff() / 127.0f;
    auto rint = [](float v) { return std::rint(v); };
    const Matrix qa = (A.array() / sa).unaryExpr(rint).cast<double>().matrix();
    const Matrix qb = (B.array() / sb).unaryExpr(rint).cast<double>().matrix();
    const Matrix want_q = qa * qb * (static_cast<double>(sa) * sb);
    const Matrix want_ref = A.cast<double>() * B.cast<double>();
    const double want_max = (want_q - want_ref).cwiseAbs().maxCoeff();
    const double want_rms = (want_q - want_ref).norm() / want_ref.norm();

    const QuantizedOperand qa_m = quantize_operand(a, DType::int8), qb_m = quantize_operand(b, DType::int8);
    const std::vector<float> acc = fp32_reference_gemm(g, qa_m.values, qb_m.values);  // |acc| < 2^24: exact
    std::vector<double> y_q;
    for (float v : acc) y_q.push_back(v * qa_m.scale * qb_m.scale);
    const QuantizationError e = quantization_error(DType::int8, y_q, fp32_reference_gemm(g, a, b));
    EXPECT_EQ(e.values, 48 * 40);
    EXPECT_NEAR(e.max_abs, want_max, 1e-5);
    EXPECT_NEAR(e.relative_rms(), want_rms, 1e-5);
    EXPECT_NEAR(e.relative_rms(), 1.0 / (127 * std::sqrt(2.0)), 0.1 / (127 * std::sqrt(2.0)));  // within 10%
}

TEST(Quantization, ActivationOutliersScaleWholeFeatureDimensions) {
    // ceil(fraction x features) features, at least one, sorted, the same for the same seed.
    const ActivationOutliers one{0.001, 20};  // 768 x 0.001 = 0.768: 1
    EXPECT_EQ(outlier_features(768, one, 5).size(), 1u);
    EXPECT_EQ(outlier_features(768, {0.01, 20}, 5).size(), 8u);    // 7.68: 8
    EXPECT_EQ(outlier_features(768, {1e-9, 20}, 5).size(), 1u);
    EXPECT_EQ(outlier_features(768, {1.0, 20}, 5).size(), 768u);
    EXPECT_TRUE(outlier_features(768, {0.0, 20}, 5).empty());
    const std::vector<std::int64_t> eight = outlier_features(768, {0.01, 20}, 5);
    EXPECT_TRUE(std::is_sorted(eight.begin(), eight.end()));
    EXPECT_EQ(std::adjacent_find(eight.begin(), eight.end()), eight.end());
    EXPECT_EQ(eight, outlier_features(768, {0.01, 20}, 5));
    for (const std::int64_t f : eight) EXPECT_LT(f, 768);
    // Every row's values of those features times the magnitude; the others untouched.
    std::vector<float> x(3 * 768);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5f + static_cast<float>(i % 7) * 0.0625f;
    const std::vector<float> before = x;
    apply_activation_outliers(x, 768, {0.01, 20}, 5);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const bool outlier = std::binary_search(eight.begin(), eight.end(), static_cast<std::int64_t>(i % 768));
        EXPECT_EQ(x[i], outlier ? before[i] * 20 : before[i]) << i;
    }
    std::vector<float> unchanged = before;
    apply_activation_outliers(unchanged, 768, {}, 5);
    EXPECT_EQ(unchanged, before);
}

TEST(Quantization, OneOutlierFeatureCostsInt8ItsResolutionNotFp8) {
    // A (512 x 768) uniform [-1, 1) with one feature 20 times larger, B (768 x 64) uniform. The
    // closed form of Int8GemmAgainstEigenInDouble with unequal scales: A's rounding error (variance
    // s_a^2/12 per value) meets B's values (E b^2 = 1/3), B's (s_b^2/12) meets A's (E a^2), and
    // E y^2 = K E a^2 / 3, so
    //   relative RMS^2 = s_a^2 / (12 E a^2) + s_b^2 / 4,
    // with E a^2 = ((K - 1) / 3 + 20^2 / 3) / K = 0.50651 and s_a = max|a| / 127 (about 20 / 127):
    // about 0.064, eleven times the 0.0056 of uniform inputs. fp8 rounds each value relative to
    // itself, so the outlier costs it nothing: its relative RMS stays within 10% of the uniform
    // inputs' one.
    const GemmShape g{1, 512, 64, 768};
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(512 * 768), b(768 * 64);
    for (float& x : a) x = uniform(rng);
    for (float& x : b) x = uniform(rng);
    std::vector<float> a_out = a;
    apply_activation_outliers(a_out, 768, {0.001, 20}, 3);
    auto error = [&](const std::vector<float>& x, DType t) {
        const QuantizedOperand qa = quantize_operand(x, t), qb = quantize_operand(b, t);
        const std::vector<float> acc = fp32_reference_gemm(g, qa.values, qb.values);
        std::vector<double> y;
        for (float v : acc) y.push_back(static_cast<double>(v) * qa.scale * qb.scale);
        return quantization_error(t, y, fp32_reference_gemm(g, x, b)).relative_rms();
    };
    float amax = 0, bmax = 0;
    for (float v : a_out) amax = std::max(amax, std::fabs(v));
    for (float v : b) bmax = std::max(bmax, std::fabs(v));
    const double sa = amax / 127.0, sb = bmax / 127.0, ea2 = (767.0 / 3 + 400.0 / 3) / 768;
    const double want = std::sqrt(sa * sa / (12 * ea2) + sb * sb / 4);
    EXPECT_NEAR(want, 0.064, 0.001);
    const double int8 = error(a_out, DType::int8);
    EXPECT_NEAR(int8, want, 0.1 * want);
    EXPECT_GT(int8, 10 * error(a, DType::int8));
    const double fp8 = error(a_out, DType::fp8_e4m3), fp8_uniform = error(a, DType::fp8_e4m3);
    EXPECT_NEAR(fp8, fp8_uniform, 0.1 * fp8_uniform);
}

}  // namespace
}  // namespace accelsim::quantization_test
