// Datapath results against Eigen (double precision) for every dtype, in both modes, including
// shapes that are not multiples of the array. int8 must be bit-exact. For floats each output is a
// sum of K products. In every dataflow the PEs and accumulators start from +0 and add the products
// one at a time (a K tile down a column, then the tile sums into the accumulator), so an output
// takes K - 1 rounded fp32 additions in total (adding to the initial zero is exact). fp16/bf16
// products are exact in fp32 (<= 22 significand bits); fp32 products are rounded once. The standard
// inner-product bound (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.4-3.5)
// then gives |error| <= gamma_n * sum_k |a_k b_k| with gamma_n = n u / (1 - n u), u = 2^-24 and
// n = K - 1 for fp16/bf16, n = K for fp32.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "models/mxu/mxu.h"
#include "tests/mxu/mxu_test_util.h"

namespace accelsim::mxu_numerics_test {
namespace {

void check_against_eigen(const MxuParams& p, const GemmShape& s, DType dtype, std::uint64_t seed) {
    const mxu_test::Operands ops = mxu_test::random_operands(s, dtype, seed);
    const MxuOperands view{ops.a.data(), ops.b.data()};
    const MxuGemmResult r = run_mxu_gemm(p, s, dtype, &view);
    const std::vector<double> ref = mxu_test::eigen_reference(s, ops);
    // sum |a_k b_k| per output, for the bound
    mxu_test::Operands abs_ops = ops;
    for (float& v : abs_ops.a) v = std::fabs(v);
    for (float& v : abs_ops.b) v = std::fabs(v);
    const std::vector<double> magnitude = mxu_test::eigen_reference(s, abs_ops);
    const double u = std::ldexp(1.0, -24);
    const double n = static_cast<double>(dtype == DType::fp32 ? s.k : s.k - 1);
    const double gamma = n * u / (1.0 - n * u);
    ASSERT_TRUE(r.has_output());
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double got = r.c(static_cast<std::int64_t>(i));
        if (dtype == DType::int8) {
            ASSERT_EQ(got, ref[i]) << "element " << i;
        } else {
            ASSERT_LE(std::fabs(got - ref[i]), gamma * magnitude[i]) << "element " << i << " got " << got
                                                                       << " want " << ref[i];
        }
    }
}

TEST(MxuNumerics, EveryDtypeDataflowAndModeAgainstEigen) {
    const DType dtypes[] = {DType::int8, DType::fp16, DType::bf16, DType::fp32};
    const MxuDataflow flows[] = {MxuDataflow::ws, MxuDataflow::os, MxuDataflow::is};
    struct Array { int rows, cols; };
    const GemmShape shapes[] = {{1, 130, 7, 300}, {2, 33, 65, 17}, {1, 1, 1, 1}, {3, 5, 9, 129}};
    std::uint64_t seed = 7;
    for (const Array a : {Array{128, 128}, Array{8, 8}, Array{4, 16}, Array{1, 5}}) {
        for (const MxuDataflow flow : flows) {
            for (const DType dtype : dtypes) {
                for (const GemmShape& s : shapes) {
                    for (const MxuMode mode : {MxuMode::fast, MxuMode::stepped}) {
                        MxuParams p;
                        p.rows = a.rows;
                        p.cols = a.cols;
                        p.dataflow = flow;
                        p.mode = mode;
                        SCOPED_TRACE(::testing::Message() << a.rows << "x" << a.cols << " " << to_string(flow) << " "
                                                          << to_string(dtype) << " " << to_string(mode) << " b="
                                                          << s.batch << " m=" << s.m << " n=" << s.n << " k=" << s.k);
                        check_against_eigen(p, s, dtype, ++seed);
                    }
                }
            }
        }
    }
}

TEST(MxuNumerics, Int8ExtremesAreExactInInt32) {
    // -128 * -128 = 16384 per product; K = 1000 gives 16,384,000, exact in int32 (and an fp32 sum
    // would already round above 2^24 = 16,777,216 with a slightly larger K).
    const GemmShape s{1, 3, 2, 1000};
    std::vector<float> a(static_cast<std::size_t>(s.m * s.k), -128.0f), b(static_cast<std::size_t>(s.k * s.n), -128.0f);
    const MxuOperands ops{a.data(), b.data()};
    for (const MxuDataflow flow : {MxuDataflow::ws, MxuDataflow::os, MxuDataflow::is}) {
        MxuParams p;
        p.rows = 16;
        p.cols = 16;
        p.dataflow = flow;
        const MxuGemmResult r = run_mxu_gemm(p, s, DType::int8, &ops);
        for (std::int32_t v : r.c_int32) EXPECT_EQ(v, 16384 * 1000);
    }
}

}  // namespace
}  // namespace accelsim::mxu_numerics_test
