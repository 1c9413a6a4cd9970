// The kernel library's buffers may reach 2^31 - 4 KiB (kGemmMaxBufferBytes): kernels whose buffers
// sit above 2^30 (after a 1 GiB allocation) still compute the right values: tensor-core GEMMs in
// fp16, bf16 and int8, the FP32 FFMA GEMM, a split-K GEMM, a tensor-core convolution and the Hopper
// warp-specialized GEMM, each checked against its host reference. And the limit itself, by hand.
#include <gtest/gtest.h>

#include "models/gpu/conv.h"
#include "models/gpu/gemm.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/a100_like.h"
#include "tests/gpu/gemm_op.h"
#include "tests/gpu/launch_lowered.h"

namespace accelsim::gpu::high_address_test {
namespace {

using test::a100_like;
using test::gemm_op;

constexpr std::size_t kLowGiB = std::size_t{1} << 30;

// Lowers `op` on `memory` (which already holds 1 GiB), runs every launch, returns the check.
LoweringNumerics run_high(const Op& op, simt::GlobalMemory& memory, const simt::SimtParams& params, int splits = 1) {
    LoweringTarget target;
    target.sms = params.sms;
    target.sm = params.sm;
    target.seed = 5;
    target.real_data = true;
    const std::size_t first_buffer = memory.allocations().size();
    const LoweredKernel lk = op.kind == OpKind::conv2d ? lower_conv2d(op, memory, target)
                             : splits > 1 ? lower_gemm_with_tile(op, memory, target, gemm_tensor_tiles()[4], splits)
                                          : lower_gemm(op, memory, target);
    for (std::size_t i = first_buffer; i < memory.allocations().size(); ++i)
        EXPECT_GT(memory.allocations()[i].address, kLowGiB);
    return test::launch_all_and_check(lk, memory, params);
}

TEST(GemmAddresses, KernelsComputeRightAboveOneGiB) {
    simt::GlobalMemory memory;
    memory.allocate(kLowGiB);
    const simt::SimtParams a100 = a100_like(2);
    for (const DType dtype : {DType::fp16, DType::bf16, DType::fp32, DType::int8}) {
        const LoweringNumerics n = run_high(gemm_op(OpKind::matmul, 1, 70, 90, 130, dtype), memory, a100);
        EXPECT_EQ(n.checked, 70 * 90) << to_string(dtype);
        EXPECT_TRUE(n.passed) << to_string(dtype) << " max abs err " << n.max_abs_err;
    }
    const LoweringNumerics split = run_high(gemm_op(OpKind::matmul, 1, 40, 72, 960, DType::fp16), memory, a100, 3);
    EXPECT_EQ(split.checked, 40 * 72);
    EXPECT_TRUE(split.passed);

    Op conv;
    conv.kind = OpKind::conv2d;
    conv.name = "c";
    conv.dtype = DType::fp16;
    conv.conv.n = 1, conv.conv.h = conv.conv.w = 9, conv.conv.c = 16, conv.conv.k = 24, conv.conv.r = conv.conv.s = 3;
    conv.conv.pad_h = conv.conv.pad_w = 1;
    const LoweringNumerics c = run_high(conv, memory, a100);
    EXPECT_EQ(c.checked, 9 * 9 * 24);
    EXPECT_TRUE(c.passed);

    simt::SimtParams h100 = a100_like(1);
    h100.sm.limits = *simt::published_limits("sm_90");
    h100.sm.tensor.initiation_interval = 4;
    const LoweringNumerics hopper = run_high(gemm_op(OpKind::matmul, 1, 128, 128, 192, DType::bf16), memory, h100);
    EXPECT_EQ(hopper.checked, 128 * 128);
    EXPECT_TRUE(hopper.passed);
}

TEST(GemmAddresses, TheLimitIsTwoGiBLessFourKiB) {
    // 2^31 - 4096 = 2,147,479,552 bytes. fp16 m = n = k = 18920 (a multiple of 8: no padding):
    // 3 x 18920^2 x 2 = 2,147,798,400 bytes, 318,848 over: refused before anything is allocated.
    // 16384^3 fp16 (1,610,612,736 bytes) fits: not lowered here (it would zero 1.6 GB).
    EXPECT_EQ(kGemmMaxBufferBytes, 2147479552);
    EXPECT_LT(3LL * 16384 * 16384 * 2, kGemmMaxBufferBytes);
    simt::GlobalMemory memory;
    LoweringTarget target;
    target.sms = 108;
    target.sm = a100_like(108).sm;
    EXPECT_THROW(lower_gemm(gemm_op(OpKind::matmul, 1, 18920, 18920, 18920, DType::fp16), memory, target),
                 LoweringError);
    // int8: A and B 18920^2 bytes each, C 18920^2 x 4: 6 x 18920^2, the same total.
    EXPECT_THROW(lower_gemm(gemm_op(OpKind::matmul, 1, 18920, 18920, 18920, DType::int8), memory, target),
                 LoweringError);
    EXPECT_EQ(memory.size(), 0u);
}

}  // namespace
}  // namespace accelsim::gpu::high_address_test
