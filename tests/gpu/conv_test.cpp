// conv2d as implicit GEMM on the tensor-core kernel, against a direct convolution loop on the host:
// 1x1, padded 3x3, strided 7x7, dilated, grouped and depthwise shapes, every tile, fp16 and bf16,
// and timing-only runs against full ones.
#include <gtest/gtest.h>

#include "models/gpu/conv.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::gpu {
namespace {

Op conv_op(Conv2dShape s, DType dtype) {
    Op op;
    op.kind = OpKind::conv2d;
    op.name = "c";
    op.dtype = dtype;
    op.conv = s;
    return op;
}

Conv2dShape shape(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t k, std::int64_t r,
                  std::int64_t stride, std::int64_t pad, std::int64_t dilation = 1, std::int64_t groups = 1) {
    Conv2dShape s;
    s.n = n, s.h = h, s.w = w, s.c = c, s.k = k, s.r = r, s.s = r;
    s.stride_h = s.stride_w = stride;
    s.pad_h = s.pad_w = pad;
    s.dilation_h = s.dilation_w = dilation;
    s.groups = groups;
    return s;
}

struct ConvRun {
    simt::KernelStats stats;
    LoweringNumerics numerics;
};

ConvRun run(const Op& op, bool real, const GemmTile* tile = nullptr, bool skip = false) {
    simt::SimtParams params;
    params.sms = 2;
    params.sm.limits = *simt::published_limits("sm_80");
    LoweringTarget target;
    target.sms = params.sms;
    target.sm = params.sm;
    target.seed = 3;
    target.real_data = real;
    simt::GlobalMemory memory;
    const LoweredKernel lk = tile ? lower_conv2d_with_tile(op, memory, target, *tile) : lower_conv2d(op, memory, target);
    EXPECT_TRUE(lk.kernel->fp_payload_skippable) << lk.kernel->fp_dependence;
    simt::FixedLatencyMemory port(200);
    ConvRun r;
    r.stats = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {skip});
    if (lk.check) r.numerics = lk.check(memory);
    return r;
}

TEST(ConvKernels, MatchesDirectConvolution) {
    const Conv2dShape shapes[] = {
        shape(1, 5, 7, 16, 24, 1, 1, 0),         // 1x1: a plain GEMM over pixels
        shape(2, 9, 9, 3, 10, 3, 1, 1),          // padded 3x3, C = 3 padded to 8 channels
        shape(1, 20, 18, 3, 16, 7, 2, 3),        // ResNet conv1-like: 7x7, stride 2, pad 3
        shape(1, 12, 12, 8, 8, 3, 1, 2, 2),      // dilation 2
        shape(1, 8, 8, 16, 12, 3, 1, 1, 1, 2),   // 2 groups of 8 -> 6 channels
        shape(1, 6, 6, 4, 4, 3, 1, 1, 1, 4),     // depthwise: 4 groups of 1 -> 1
    };
    for (const Conv2dShape& s : shapes)
        for (DType dt : {DType::fp16, DType::bf16}) {
            const ConvRun r = run(conv_op(s, dt), true);
            EXPECT_EQ(r.numerics.checked, s.n * s.out_h() * s.out_w() * s.k);
            EXPECT_TRUE(r.numerics.passed) << "c=" << s.c << " k=" << s.k << " r=" << s.r << " groups=" << s.groups
                                           << " " << to_string(dt) << " max abs err " << r.numerics.max_abs_err;
            EXPECT_GT(r.stats.mma_issued, 0u);
        }
}

TEST(ConvKernels, EveryTileAndTimingOnlyRuns) {
    const Op op = conv_op(shape(2, 10, 11, 12, 40, 3, 2, 1), DType::fp16);
    for (const GemmTile& tile : gemm_tensor_tiles()) {
        const ConvRun full = run(op, true, &tile, false);
        const ConvRun skipped = run(op, false, &tile, true);
        EXPECT_TRUE(full.numerics.passed) << tile.name() << " " << full.numerics.max_abs_err;
        EXPECT_EQ(full.stats.cycles, skipped.stats.cycles) << tile.name();
        EXPECT_EQ(full.stats.global_sectors, skipped.stats.global_sectors) << tile.name();
    }
}

TEST(ConvKernels, CheckFailsWithoutTheKernelAndRegistersFit) {
    simt::GlobalMemory memory;
    LoweringTarget target;
    target.sm.limits = *simt::published_limits("sm_80");
    target.real_data = true;
    const LoweredKernel lk = lower_conv2d(conv_op(shape(1, 9, 9, 3, 10, 3, 1, 1), DType::fp16), memory, target);
    ASSERT_TRUE(lk.check);
    EXPECT_FALSE(lk.check(memory).passed);  // output still zero
    for (const GemmTile& tile : gemm_tensor_tiles()) {
        const simt::Kernel* k = conv_tensor_kernel(tile, simt::MmaType::bf16);
        EXPECT_LE(k->registers, 128) << tile.name();  // 128x128: 2 blocks of 256 threads per SM
    }
}

TEST(ConvKernels, UnsupportedInputsAreLoweringErrors) {
    simt::GlobalMemory memory;
    LoweringTarget target;
    target.sm.limits = *simt::published_limits("sm_80");
    EXPECT_THROW(lower_conv2d(conv_op(shape(1, 8, 8, 8, 8, 3, 1, 1), DType::int8), memory, target), LoweringError);
    EXPECT_THROW(lower_conv2d(conv_op(shape(1, 8, 8, 8, 8, 3, 1, 1), DType::fp32), memory, target), LoweringError);
    EXPECT_THROW(lower_conv2d(conv_op(shape(1, 2, 2, 8, 8, 5, 1, 0), DType::fp16), memory, target), LoweringError);
}

}  // namespace
}  // namespace accelsim::gpu
