// --validate's references made on the validation worker (LoweringTarget::reference_on_worker,
// models/common/validation_worker.h) give the same check, value for value, as those made inline
// after the launch: plain, batched, fp32, split-K and fused-epilogue GEMMs, padded, strided and
// grouped convolutions (tensor-core and FFMA), and a kernel that never ran fails on the worker as it
// does inline.
#include <gtest/gtest.h>

#include "models/gpu/conv.h"
#include "models/gpu/gemm.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/a100_like.h"
#include "tests/gpu/gemm_op.h"
#include "tests/gpu/launch_lowered.h"

namespace accelsim::gpu::validation_worker_test {
namespace {

using test::a100_like;
using test::gemm_op;

LoweringTarget target_of(int sms, bool on_worker) {
    LoweringTarget t;
    t.sms = sms;
    t.sm = a100_like(sms).sm;
    t.seed = 23;
    t.real_data = true;
    t.reference_on_worker = on_worker;
    return t;
}

// Lowers with `lower`, runs every launch on one memory (ideal 200-cycle memory), then the check.
template <class Lower>
LoweringNumerics launch_and_check(Lower lower, int sms, bool on_worker) {
    simt::GlobalMemory memory;
    const LoweredKernel lk = lower(memory, target_of(sms, on_worker));
    return test::launch_all_and_check(lk, memory, a100_like(sms));
}

void expect_same(const LoweringNumerics& inline_check, const LoweringNumerics& worker_check, std::int64_t outputs) {
    EXPECT_EQ(inline_check.checked, outputs);
    EXPECT_EQ(worker_check.checked, outputs);
    EXPECT_TRUE(inline_check.passed);
    EXPECT_EQ(worker_check.passed, inline_check.passed);
    // The same Eigen code on the same values: the errors agree to the last bit, not approximately.
    EXPECT_EQ(worker_check.max_abs_err, inline_check.max_abs_err);
    EXPECT_EQ(worker_check.max_rel_err, inline_check.max_rel_err);
    EXPECT_GT(inline_check.max_abs_err, 0.0);  // rounded outputs: the comparison saw real values
}

TEST(ValidationWorker, PlainBatchedAndFp32GemmsCheckAlikeOnTheWorker) {
    const struct {
        OpKind kind;
        std::int64_t batch, m, n, k;
        DType dtype;
    } cases[] = {{OpKind::matmul, 1, 130, 70, 200, DType::fp16},
                 {OpKind::bmm, 3, 65, 40, 33, DType::bf16},
                 {OpKind::matmul, 1, 37, 50, 61, DType::fp32}};
    for (const auto& c : cases) {
        const Op op = gemm_op(c.kind, c.batch, c.m, c.n, c.k, c.dtype);
        auto lower = [&](simt::GlobalMemory& memory, const LoweringTarget& target) { return lower_gemm(op, memory, target); };
        SCOPED_TRACE(std::string(to_string(c.dtype)) + " " + std::to_string(c.m) + "x" + std::to_string(c.n));
        expect_same(launch_and_check(lower, 3, false), launch_and_check(lower, 3, true), c.batch * c.m * c.n);
    }
}

TEST(ValidationWorker, SplitKAndFusedEpilogueCheckAlikeOnTheWorker) {
    const Op op = gemm_op(OpKind::matmul, 1, 40, 72, 960, DType::fp16);
    const GemmTile tile = gemm_tensor_tiles()[4];  // 32x32x32
    auto split = [&](simt::GlobalMemory& memory, const LoweringTarget& target) {
        return lower_gemm_with_tile(op, memory, target, tile, 3);
    };
    expect_same(launch_and_check(split, 2, false), launch_and_check(split, 2, true), 40 * 72);
    const GemmEpilogue bias_gelu{{EpilogueStep::bias, EpilogueStep::gelu}};
    auto fused = [&](simt::GlobalMemory& memory, const LoweringTarget& target) {
        return lower_gemm_epilogue(op, bias_gelu, memory, target, &tile, 2);
    };
    expect_same(launch_and_check(fused, 2, false), launch_and_check(fused, 2, true), 40 * 72);
}

TEST(ValidationWorker, ConvolutionsCheckAlikeOnTheWorker) {
    // n h w c k r stride pad groups: padded 3x3, strided 7x7, grouped 3x3; fp16 (tensor cores) and
    // fp32 (FFMA). The references are direct convolutions on the host.
    const std::int64_t shapes[][9] = {{1, 9, 9, 16, 24, 3, 1, 1, 1}, {2, 15, 13, 3, 16, 7, 2, 3, 1}, {1, 8, 8, 8, 8, 3, 1, 1, 2}};
    for (const auto& v : shapes)
        for (const DType dtype : {DType::fp16, DType::fp32}) {
            Op op;
            op.kind = OpKind::conv2d;
            op.name = "c";
            op.dtype = dtype;
            Conv2dShape& s = op.conv;
            s.n = v[0], s.h = v[1], s.w = v[2], s.c = v[3], s.k = v[4], s.r = s.s = v[5];
            s.stride_h = s.stride_w = v[6];
            s.pad_h = s.pad_w = v[7];
            s.groups = v[8];
            auto lower = [&](simt::GlobalMemory& memory, const LoweringTarget& target) { return lower_conv2d(op, memory, target); };
            SCOPED_TRACE(std::string(to_string(dtype)) + " c=" + std::to_string(s.c) + " r=" + std::to_string(s.r));
            expect_same(launch_and_check(lower, 2, false), launch_and_check(lower, 2, true),
                        s.n * s.out_h() * s.out_w() * s.k);
        }
}

TEST(ValidationWorker, AKernelThatNeverRanFailsOnTheWorkerToo) {
    // The worker's reference is compared with C, not taken for granted: C left as zeros fails.
    simt::GlobalMemory memory;
    const LoweredKernel lk = lower_gemm(gemm_op(OpKind::matmul, 1, 17, 33, 45, DType::fp16), memory, target_of(1, true));
    ASSERT_TRUE(lk.check);
    const LoweringNumerics n = lk.check(memory);
    EXPECT_FALSE(n.passed);
    EXPECT_EQ(n.checked, 17 * 33);
}

TEST(ValidationWorker, AReferenceNeverAskedForIsHarmless) {
    // A simulation that throws before its check leaves the worker's task to finish on its own:
    // the task owns its operands, so dropping the check early is safe.
    for (int i = 0; i < 3; ++i) {
        simt::GlobalMemory memory;
        const LoweredKernel lk =
            lower_gemm(gemm_op(OpKind::matmul, 1, 96, 96, 96, DType::fp16), memory, target_of(1, true));
        ASSERT_TRUE(lk.check);
    }
    simt::GlobalMemory memory;
    const auto n = launch_and_check(
        [](simt::GlobalMemory& m, const LoweringTarget& t) {
            return lower_gemm(gemm_op(OpKind::matmul, 1, 96, 96, 96, DType::fp16), m, t);
        },
        1, true);
    EXPECT_TRUE(n.passed);
    EXPECT_EQ(n.checked, 96 * 96);
}

}  // namespace
}  // namespace accelsim::gpu::validation_worker_test
