// The TPU's quantization error under --validate (models/common/quantization.h): the figures the
// chip reports for int8 and fp8 GEMMs and convolutions equal a recomputation here from the seeded
// fp32 values (random_gemm_data keeps them; the chip draws them again after the op), with the
// chip's exact integer output rebuilt by Eigen; inline and on the worker thread alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_numerics.h"
#include "tpu_test_chips.h"

namespace accelsim::tpu::tpu_quantization_test {
namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

TpuChipParams small_chip() {
    TpuChipParams p;
    p.cores = 1;
    p.mxus_per_core = 2;
    p.mxu.rows = p.mxu.cols = 16;
    p.ideal_memory = true;
    return p;
}

TEST(TpuQuantization, Int8AndFp8MatmulFiguresMatchARecomputationInDouble) {
    for (const DType dtype : {DType::int8, DType::fp8_e4m3}) {
        for (const bool worker : {false, true}) {
            SCOPED_TRACE(std::string(to_string(dtype)) + (worker ? " worker" : " inline"));
            TpuChipParams params = small_chip();
            if (dtype == DType::fp8_e4m3) params.mxu.macs_per_pe_per_cycle.fp8_e4m3 = 1;
            TpuChip chip(params);
            chip.set_validation_worker(worker);
            const Op op = tpu_test::matmul(40, 24, 72, dtype);
            const TpuOpResult r = chip.run(op, true, nullptr);
            ASSERT_TRUE(r.numerics && r.numerics->quantization);
            EXPECT_TRUE(r.numerics->passed);
            // Op 0's seed; the test's own dequantized product and fp32 product, in double.
            const GemmData d = random_gemm_data(op.as_gemm(), dtype, op_seed(params.seed, 0));
            const Matrix qa = Eigen::Map<const Eigen::MatrixXf>(d.a.data(), 72, 40).transpose().cast<double>();
            const Matrix qb = Eigen::Map<const Eigen::MatrixXf>(d.b.data(), 24, 72).transpose().cast<double>();
            const Matrix xa = Eigen::Map<const Eigen::MatrixXf>(d.a_fp32.data(), 72, 40).transpose().cast<double>();
            const Matrix xb = Eigen::Map<const Eigen::MatrixXf>(d.b_fp32.data(), 24, 72).transpose().cast<double>();
            const Matrix yq = qa * qb * d.output_scale, y = xa * xb;
            const QuantizationError& q = *r.numerics->quantization;
            EXPECT_EQ(q.values, 40 * 24);
            EXPECT_NEAR(q.max_abs, (yq - y).cwiseAbs().maxCoeff(), 1e-5);
            EXPECT_NEAR(q.relative_rms(), (yq - y).norm() / y.norm(), 1e-6);
            // int8's scale is max|x|/127 of each operand: the product of the two.
            if (dtype == DType::int8) {
                EXPECT_DOUBLE_EQ(d.output_scale,
                                 static_cast<double>(static_cast<float>(xa.cwiseAbs().maxCoeff()) / 127.0f) *
                                     static_cast<double>(static_cast<float>(xb.cwiseAbs().maxCoeff()) / 127.0f));
            }
        }
    }
}

TEST(TpuQuantization, ActivationOutliersScaleTheActivationsOwnFeatures) {
    // The operands with activation outliers (quantization.h) are the uniform ones of the same seed
    // with whole feature dimensions of the activation times the magnitude: A's K columns of a
    // GEMM, the input's channels of a convolution (NHWC); the weights untouched.
    const ActivationOutliers outliers{0.05, 20};
    const GemmShape g{1, 6, 5, 40};
    const GemmData plain = random_gemm_data(g, DType::int8, 9), scaled = random_gemm_data(g, DType::int8, 9, outliers);
    const std::vector<std::int64_t> columns = outlier_features(40, outliers, 9);
    EXPECT_EQ(columns.size(), 2u);  // ceil(0.05 x 40)
    for (std::size_t i = 0; i < plain.a_fp32.size(); ++i) {
        const bool outlier = std::find(columns.begin(), columns.end(), static_cast<std::int64_t>(i % 40)) != columns.end();
        EXPECT_EQ(scaled.a_fp32[i], outlier ? plain.a_fp32[i] * 20 : plain.a_fp32[i]) << i;
    }
    EXPECT_EQ(scaled.b_fp32, plain.b_fp32);
    Conv2dShape s;
    s.n = 1, s.h = 3, s.w = 3, s.c = 20, s.k = 4, s.r = s.s = 3, s.pad_h = s.pad_w = 1;
    const ConvData conv_plain = random_conv_data(s, DType::int8, 9), conv_scaled = random_conv_data(s, DType::int8, 9, outliers);
    const std::vector<std::int64_t> channels = outlier_features(20, outliers, 9);
    EXPECT_EQ(channels.size(), 1u);
    for (std::size_t i = 0; i < conv_plain.input_fp32.size(); ++i)
        EXPECT_EQ(conv_scaled.input_fp32[i], static_cast<std::int64_t>(i % 20) == channels[0] ? conv_plain.input_fp32[i] * 20
                                                                                              : conv_plain.input_fp32[i]);
    EXPECT_EQ(conv_scaled.filter_fp32, conv_plain.filter_fp32);
}

TEST(TpuQuantization, FloatOpsHaveNoQuantizationError) {
    TpuChip chip(small_chip());
    const TpuOpResult r = chip.run(tpu_test::matmul(16, 16, 16, DType::bf16), true, nullptr);
    ASSERT_TRUE(r.numerics);
    EXPECT_FALSE(r.numerics->quantization);
}

}  // namespace
}  // namespace accelsim::tpu::tpu_quantization_test
