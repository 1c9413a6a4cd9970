// PyTorch's layernorm forward kernels (models/gpu/layernorm_torch.cpp, reduction.h
// layernorm_variant): the selection rule and launch shapes of layer_norm_kernel.cu hand-worked,
// every output against Eigen (fp32, fp16, bf16) within the Welford bound derived in reduction.cpp,
// instruction counts of the Welford reduction, and timing-only runs equal to full ones.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "models/gpu/reduction.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::gpu::layernorm_torch_test {
namespace {

Op layernorm_op(std::int64_t rows, std::int64_t cols, DType dtype) {
    Op op;
    op.kind = OpKind::layernorm;
    op.name = "ln";
    op.rows = rows;
    op.cols = cols;
    op.dtype = dtype;
    return op;
}

LoweringTarget target(int sms, bool real_data) {
    LoweringTarget t;
    t.sms = sms;
    t.real_data = real_data;
    t.seed = 5;
    return t;  // default SmParams: A100-like SM, no L1, 400-cycle fixed-latency memory
}

struct LayernormRun {
    LoweredKernel lowered;
    simt::KernelStats first, then;  // then: the moments variant's forward kernel
    LoweringNumerics numerics;
};

// Every launch of the op in order on `memory`, as the chip runs them.
LayernormRun run(const Op& op, const LoweringTarget& t, bool skip_payload, simt::GlobalMemory& memory,
        bool record_issues = false) {
    LayernormRun out;
    out.lowered = lower_layernorm(op, memory, t);
    simt::SimtParams p;
    p.sms = t.sms;
    p.sm = t.sm;
    p.sm.record_issue_order = record_issues;
    simt::LaunchOptions options;
    options.skip_fp_payload = skip_payload;
    out.first = simt::launch(*out.lowered.kernel, out.lowered.dims, out.lowered.args, memory, p, nullptr, options);
    for (const LoweredLaunch& l : out.lowered.then)
        out.then = simt::launch(*l.kernel, l.dims, l.args, memory, p, nullptr, options);
    if (out.lowered.check) out.numerics = out.lowered.check(memory);
    return out;
}

double stat(const LoweredKernel& k, const std::string& name) {
    for (const auto& s : k.stats)
        if (s.name == name) return s.value;
    ADD_FAILURE() << "no stat " << name;
    return -1;
}

// ---- selection rule and launch shapes ----------------------------------------------------------

TEST(TorchLayernormRule, VectorizedWhenColsAreWholeVectorsOfFour) {
    // LayerNormKernelImplInternal: N % vec_size (4) == 0 and N <= 2^24 -> vectorized.
    EXPECT_EQ(layernorm_variant(4), ReductionVariant::layernorm_vectorized);
    EXPECT_EQ(layernorm_variant(768), ReductionVariant::layernorm_vectorized);
    EXPECT_EQ(layernorm_variant(std::int64_t{1} << 24), ReductionVariant::layernorm_vectorized);
    EXPECT_EQ(layernorm_variant((std::int64_t{1} << 24) + 4), ReductionVariant::layernorm_moments);
    EXPECT_EQ(layernorm_variant(1), ReductionVariant::layernorm_moments);
    EXPECT_EQ(layernorm_variant(770), ReductionVariant::layernorm_moments);  // even, not whole vectors
    EXPECT_EQ(layernorm_variant(3071), ReductionVariant::layernorm_moments);
}

TEST(TorchLayernormRule, LaunchShapes) {
    const LoweringTarget t = target(108, false);
    // BERT-base: 128 rows of 768 fp16 -> 128 blocks of 4 warps (threads(32, 4)), 24 bytes of
    // shared memory (threads.y * 3/2 floats), one launch.
    simt::GlobalMemory m1;
    const LoweredKernel v = lower_layernorm(layernorm_op(128, 768, DType::fp16), m1, t);
    EXPECT_EQ(v.dims.grid, 128u);
    EXPECT_EQ(v.dims.block, 128u);
    EXPECT_EQ(v.kernel->shared_bytes, 24);
    EXPECT_TRUE(v.then.empty());
    EXPECT_EQ(stat(v, "gpu.variant"), 5.0);
    // Rows are not capped at a wave: 5000 rows -> 5000 blocks.
    simt::GlobalMemory m2;
    EXPECT_EQ(lower_layernorm(layernorm_op(5000, 1024, DType::fp32), m2, t).dims.grid, 5000u);
    // 770 columns: RowwiseMomentsCUDAKernel <<<M, 512>>> then LayerNormForwardCUDAKernel <<<M, 256>>>.
    simt::GlobalMemory m3;
    const LoweredKernel f = lower_layernorm(layernorm_op(33, 770, DType::bf16), m3, t);
    EXPECT_EQ(f.dims.grid, 33u);
    EXPECT_EQ(f.dims.block, 512u);
    ASSERT_EQ(f.then.size(), 1u);
    EXPECT_EQ(f.then[0].dims.grid, 33u);
    EXPECT_EQ(f.then[0].dims.block, 256u);
    EXPECT_EQ(stat(f, "gpu.variant"), 6.0);
    // The moments kernel's static shared memory: 32 WelfordData<float, int64_t> of 24 bytes.
    EXPECT_EQ(f.kernel->shared_bytes, 32 * 24);
}

// ---- numerics against Eigen --------------------------------------------------------------------

using Case = std::tuple<std::tuple<std::int64_t, std::int64_t>, DType>;
class TorchLayernorm : public ::testing::TestWithParam<Case> {};

TEST_P(TorchLayernorm, EveryOutputMatchesEigen) {
    const auto [shape, dtype] = GetParam();
    const auto [rows, cols] = shape;
    simt::GlobalMemory memory;
    const LayernormRun r = run(layernorm_op(rows, cols, dtype), target(4, true), false, memory);
    // The lowering's own check (double host loop, the Welford bound of reduction.cpp).
    EXPECT_EQ(r.numerics.checked, rows * cols);
    EXPECT_TRUE(r.numerics.passed) << "max abs err " << r.numerics.max_abs_err;
    // Eigen on the same stored inputs, in double: y = (x - mean) / sqrt(var + eps) * gamma + beta.
    const Storage s = storage_of(dtype);
    const std::int64_t pitch = storage_words(cols, s) * elements_per_word(s);
    const auto& a = r.lowered.args;
    const bool vectorized = r.lowered.then.empty();
    const std::uint32_t x = vectorized ? a[1] : a[2];
    const std::uint32_t gamma = vectorized ? a[2] : r.lowered.then[0].args[3];
    const std::uint32_t beta = vectorized ? a[3] : r.lowered.then[0].args[4];
    const std::uint32_t y = vectorized ? a[4] : r.lowered.then[0].args[5];
    Eigen::ArrayXXd in(rows, cols), out(rows, cols);
    Eigen::ArrayXd g(cols), b(cols);
    for (std::int64_t j = 0; j < cols; ++j) {
        g(j) = load_element(memory, gamma, j, s);
        b(j) = load_element(memory, beta, j, s);
    }
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
            in(i, j) = load_element(memory, x, i * pitch + j, s);
            out(i, j) = load_element(memory, y, i * pitch + j, s);
        }
    const Eigen::ArrayXd mean = in.rowwise().mean();
    const Eigen::ArrayXXd centered = in.colwise() - mean;
    const Eigen::ArrayXd var = centered.square().rowwise().mean();
    const Eigen::ArrayXd rstd = (var + static_cast<double>(kLayernormEps)).rsqrt();
    const Eigen::ArrayXXd want = (centered.colwise() * rstd).rowwise() * g.transpose();
    const Eigen::ArrayXXd expected = want.rowwise() + b.transpose();
    // Bound (reduction.cpp, check_layernorm with welford): |gamma| < 1.5, x in [-1, 3) so
    // X = 3, mean ~ 1, var ~ 4/3, kappa ~ 1.33, |z| <= 2/sqrt(4/3) ~ 1.8, |y| < 3.2; fp32 part at most
    // 1.5 (2 (n + 32) u 3 rstd + 1.8 ((n + 32) 1.4 + 3) u) + 6.4 u, plus one rounding of the stored y.
    const double u = 1.0 / (1 << 24), n = static_cast<double>(cols);
    const double fp32 = 1.5 * (2.0 * (n + 32.0) * u * 3.0 * 0.9 + 1.8 * ((n + 32.0) * 1.4 + 3.0) * u) + 6.4 * u;
    const double tolerance = fp32 + unit_roundoff(s) * (3.2 + fp32) + subnormal_half_spacing(s);
    EXPECT_LE((out - expected).abs().maxCoeff(), tolerance);
    // The row statistics PyTorch returns (fp32 mean and rstd), against Eigen's.
    const std::uint32_t mean_address = vectorized ? a[5] : a[3];
    const std::uint32_t rstd_address = vectorized ? a[6] : a[4];
    for (std::int64_t i = 0; i < rows; ++i) {
        EXPECT_NEAR(memory.load_f32(mean_address + 4 * static_cast<std::uint32_t>(i)), mean(i), 2.0 * (n + 32.0) * u * 3.0);
        EXPECT_NEAR(memory.load_f32(rstd_address + 4 * static_cast<std::uint32_t>(i)), rstd(i),
                    rstd(i) * ((n + 32.0) * 1.4 + 3.0) * u);
    }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    const auto [shape, dtype] = info.param;
    return std::to_string(std::get<0>(shape)) + "x" + std::to_string(std::get<1>(shape)) + "_" +
           std::string(to_string(dtype));
}

// Vectorized: 4 (one vector, one thread), 768 (BERT: 192 vectors, 1-2 per thread), 1028 (2 or 3
// per thread: the 2-vector loop and the 1-vector tail), 4096 fp16 (8 a thread). Moments: 1, 7,
// 770 (odd number of words per thread pair at 16-bit: the last trip's pairs), 3071 (odd: a
// padding half), 129 rows.
INSTANTIATE_TEST_SUITE_P(Rows, TorchLayernorm,
                         ::testing::Combine(::testing::Values(std::make_tuple(std::int64_t{3}, std::int64_t{4}),
                                                              std::make_tuple(std::int64_t{129}, std::int64_t{768}),
                                                              std::make_tuple(std::int64_t{5}, std::int64_t{1028}),
                                                              std::make_tuple(std::int64_t{2}, std::int64_t{4096}),
                                                              std::make_tuple(std::int64_t{2}, std::int64_t{1}),
                                                              std::make_tuple(std::int64_t{3}, std::int64_t{7}),
                                                              std::make_tuple(std::int64_t{33}, std::int64_t{770}),
                                                              std::make_tuple(std::int64_t{3}, std::int64_t{3071})),
                                            ::testing::Values(DType::fp32, DType::fp16, DType::bf16)),
                         case_name);

// ---- instruction counts ------------------------------------------------------------------------

TEST(TorchLayernormCounts, ShufflesBarriersAndRowTraffic) {
    // Vectorized, 2 rows of 768 fp16: per row 4 warps x 5 shuffle-down steps x 3 values (mean,
    // sigma2, count) = 60 shuffles; 5 barriers (2 per tree round, 1 broadcast) per warp: 20 bar
    // issues. Global sectors per row: x read twice (1536 B = 48 sectors each), gamma and beta once
    // (48 each), y once (48), mean and rstd one sector each: 5 x 48 + 2 = 242.
    simt::GlobalMemory m;
    const LayernormRun r = run(layernorm_op(2, 768, DType::fp16), target(1, false), true, m, true);
    int shuffles = 0, barriers = 0;
    for (const simt::IssueRecord& i : r.first.issue_order) {
        const simt::Opcode op = r.lowered.kernel->code[static_cast<std::size_t>(i.pc)].op;
        shuffles += op == simt::Opcode::shfl;
        barriers += op == simt::Opcode::bar;
    }
    EXPECT_EQ(shuffles, 2 * 60);
    EXPECT_EQ(barriers, 2 * 20);
    EXPECT_EQ(r.first.global_sectors, 2u * 242u);
    // Moments variant, 1 row of 7 fp32: 16 warps x 5 steps x 3 values in the first WarpReduce,
    // warp 0's 15 more: 255 shuffles; the forward kernel reads x, gamma, beta (one sector each),
    // mean and rstd, and writes y: 6 sectors.
    simt::GlobalMemory m2;
    const LayernormRun f = run(layernorm_op(1, 7, DType::fp32), target(1, false), true, m2, true);
    int moments_shuffles = 0;
    for (const simt::IssueRecord& i : f.first.issue_order)
        moments_shuffles += f.lowered.kernel->code[static_cast<std::size_t>(i.pc)].op == simt::Opcode::shfl;
    EXPECT_EQ(moments_shuffles, 16 * 15 + 15);
    EXPECT_EQ(f.then.global_sectors, 6u);
}

// ---- timing-only runs --------------------------------------------------------------------------

class TorchLayernormTiming : public ::testing::TestWithParam<std::tuple<std::int64_t, DType>> {};

TEST_P(TorchLayernormTiming, SkipPayloadCyclesEqualFullRun) {
    const auto [cols, dtype] = GetParam();
    const Op op = layernorm_op(37, cols, dtype);
    simt::GlobalMemory full_memory, skip_memory;
    const LayernormRun full = run(op, target(3, true), false, full_memory);
    ASSERT_TRUE(full.lowered.kernel->fp_payload_skippable) << full.lowered.kernel->fp_dependence;
    for (const LoweredLaunch& l : full.lowered.then) ASSERT_TRUE(l.kernel->fp_payload_skippable) << l.kernel->fp_dependence;
    const LayernormRun skip = run(op, target(3, false), true, skip_memory);
    EXPECT_TRUE(full.numerics.passed);
    EXPECT_EQ(skip.first.cycles, full.first.cycles);
    EXPECT_EQ(skip.first.issued, full.first.issued);
    EXPECT_EQ(skip.first.global_sectors, full.first.global_sectors);
    EXPECT_EQ(skip.then.cycles, full.then.cycles);
    EXPECT_EQ(skip.then.issued, full.then.issued);
}

INSTANTIATE_TEST_SUITE_P(Both, TorchLayernormTiming,
                         ::testing::Combine(::testing::Values(std::int64_t{1300}, std::int64_t{1301}),
                                            ::testing::Values(DType::fp32, DType::fp16, DType::bf16)));

}  // namespace
}  // namespace accelsim::gpu::layernorm_torch_test
