// Why an op keeps its roofline row on a GPU (gpu::no_kernel_reason, printed by the report next to
// the row): one reason per gap of the kernel library, and lower_op lowers exactly the ops that
// have none.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "models/gpu/lowering.h"
#include "tests/gpu/launch_lowered.h"

namespace accelsim::gpu::no_kernel_reason_test {
namespace {

using test::elementwise_op;
using test::row_op;
using test::target_on;

Op gemm_op(DType dtype) {
    Op op;
    op.kind = OpKind::matmul;
    op.name = "t";
    op.gemm = {1, 64, 64, 64};
    op.dtype = dtype;
    return op;
}

Op conv_op(DType dtype) {
    Op op;
    op.kind = OpKind::conv2d;
    op.name = "t";
    op.dtype = dtype;
    op.conv.n = 1;
    op.conv.h = op.conv.w = 8;
    op.conv.c = op.conv.k = 16;
    op.conv.r = op.conv.s = 3;
    op.conv.pad_h = op.conv.pad_w = 1;
    return op;
}

Op pool_op(DType dtype, std::int64_t channels) {
    Op op;
    op.kind = OpKind::pool;
    op.name = "t";
    op.dtype = dtype;
    op.pool.n = 1;
    op.pool.h = op.pool.w = 8;
    op.pool.c = channels;
    op.pool.r = op.pool.s = 2;
    op.pool.stride_h = op.pool.stride_w = 2;
    return op;
}

// `arch`'s limits with tensor cores for fp16 and bf16, and int8 and fp8 if asked.
LoweringTarget target(const char* arch, bool int8_rate, bool fp8_rate) {
    LoweringTarget t = target_on(arch, 4, false, 1);
    t.tensor_macs_per_sm_cycle = DTypeRates{};
    t.tensor_macs_per_sm_cycle.fp16 = t.tensor_macs_per_sm_cycle.bf16 = 1024;
    if (int8_rate) t.tensor_macs_per_sm_cycle.int8 = 2048;
    if (fp8_rate) t.tensor_macs_per_sm_cycle.fp8_e4m3 = t.tensor_macs_per_sm_cycle.fp8_e5m2 = 2048;
    return t;
}

std::string reason(const Op& op, const LoweringTarget& t) { return no_kernel_reason(op, t).value_or("(lowered)"); }

// lower_op lowers an op exactly when no_kernel_reason gives none.
void expect_lowering_agrees(const Op& op, const LoweringTarget& t) {
    simt::GlobalMemory memory;
    EXPECT_EQ(lower_op(op, memory, t).has_value(), !no_kernel_reason(op, t).has_value()) << reason(op, t);
}

TEST(NoKernelReason, EachGapOfTheLibraryHasItsOwnReason) {
    const LoweringTarget volta = target("sm_70", false, false), ampere = target("sm_80", true, false),
                         hopper = target("sm_90", true, true);
    EXPECT_EQ(reason(gemm_op(DType::int8), volta),
              "this chip's tensor cores have no int8 rate (config: sm.tensor_macs_per_cycle.int8 is 0), and the "
              "library has no int8 GEMM outside them");
    EXPECT_EQ(reason(gemm_op(DType::int8), ampere), "(lowered)");
    EXPECT_EQ(reason(gemm_op(DType::fp8_e4m3), hopper), "(lowered)");
    EXPECT_EQ(reason(gemm_op(DType::int32), hopper), "the library has no int32 matmul kernel");
    EXPECT_EQ(reason(row_op(OpKind::softmax, 4, 64, DType::fp8_e5m2), ampere),
              "an fp8 softmax needs fp8 conversions (PTX's cvt e4m3x2/e5m2x2: sm_89 or later; CDNA3: gfx942); this chip is "
              "sm_80");
    EXPECT_EQ(reason(row_op(OpKind::softmax, 4, 64, DType::fp8_e5m2), hopper), "(lowered)");
    EXPECT_EQ(reason(row_op(OpKind::layernorm, 4, 64, DType::int8), volta), "(lowered)");
    EXPECT_EQ(reason(pool_op(DType::int8, 4), hopper), "(lowered)");
    EXPECT_EQ(reason(pool_op(DType::int8, 6), hopper),
              "a pool in int8 holds four channels per word; a channel count that is not a multiple of 4 (6) has no kernel");
    EXPECT_EQ(reason(pool_op(DType::fp8_e4m3, 4), ampere),
              "an fp8 pool needs fp8 conversions (PTX's cvt e4m3x2/e5m2x2: sm_89 or later; CDNA3: gfx942); this chip is sm_80");
    EXPECT_EQ(reason(pool_op(DType::int32, 4), hopper),
              "the library has no int32 pool kernel (8-bit storage: GEMMs, convolutions, elementwise ops, softmax, layernorm "
              "and pools)");
    // Convolutions: int8 and fp8 run the 8-bit implicit-GEMM kernel where the tensor cores take the
    // type; int32 has no kernel.
    EXPECT_EQ(reason(conv_op(DType::fp8_e5m2), hopper), "(lowered)");
    EXPECT_EQ(reason(conv_op(DType::fp8_e4m3), ampere),
              "this chip's tensor cores have no fp8_e4m3 rate (config: sm.tensor_macs_per_cycle.fp8_e4m3 is 0), and the "
              "library has no fp8_e4m3 conv2d outside them");
    EXPECT_EQ(reason(conv_op(DType::int32), hopper), "the library has no int32 conv2d kernel");
    EXPECT_EQ(reason(pool_op(DType::fp16, 3), hopper),
              "a pool in fp16 holds two channels per word; an odd channel count (3) has no kernel");
    EXPECT_EQ(reason(pool_op(DType::fp16, 4), hopper), "(lowered)");
    EXPECT_EQ(reason(elementwise_op(OpKind::relu, 4096, DType::fp16), volta), "(lowered)");
    Op kernel = elementwise_op(OpKind::kernel, 0, DType::fp32);
    EXPECT_FALSE(no_kernel_reason(kernel, hopper).has_value());  // the chip runs the trace's own kernel
    for (const LoweringTarget* t : {&volta, &ampere, &hopper}) {
        for (const DType d : {DType::int8, DType::int32, DType::fp8_e4m3, DType::fp16})
            expect_lowering_agrees(gemm_op(d), *t);
        for (const DType d : {DType::int8, DType::fp8_e4m3, DType::bf16})
            expect_lowering_agrees(row_op(OpKind::softmax, 4, 64, d), *t);
        for (const DType d : {DType::int8, DType::int32, DType::fp8_e4m3, DType::fp8_e5m2, DType::fp16})
            expect_lowering_agrees(conv_op(d), *t);
        expect_lowering_agrees(pool_op(DType::fp16, 3), *t);
        expect_lowering_agrees(pool_op(DType::fp16, 4), *t);
    }
}

}  // namespace
}  // namespace accelsim::gpu::no_kernel_reason_test
