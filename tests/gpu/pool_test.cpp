// The pool kernel of the GPU kernel library (models/gpu/pool.cpp): every output against the double
// reference (pool_reference: max exactly, avg within the fp32 sum's and the storage format's
// rounding) over padded, strided, dilated, ceil-mode and global windows in fp32, fp16 and bf16,
// and int8, fp8_e4m3 and fp8_e5m2 (on the stored values, with the quantization error);
// the launch shape; the loads a warp issues (hand-counted); timing-only runs equal to full ones.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "models/gpu/pool.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/launch_lowered.h"

namespace accelsim::gpu::pool_test {
namespace {

Op pool_op(PoolMode mode, DType dtype, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t r,
           std::int64_t s, std::int64_t stride, std::int64_t pad) {
    Op op;
    op.kind = OpKind::pool;
    op.name = "p";
    op.dtype = dtype;
    PoolShape& p = op.pool;
    p.mode = mode;
    p.n = n;
    p.h = h;
    p.w = w;
    p.c = c;
    p.r = r;
    p.s = s;
    p.stride_h = p.stride_w = stride;
    p.pad_h = p.pad_w = pad;
    return op;
}

test::LaunchOutcome run(const Op& op, bool real_data, bool skip_payload) {
    simt::GlobalMemory memory;
    LoweringTarget target;
    target.sms = 2;
    target.sm.limits = *simt::published_limits("sm_90");  // fp8 conversions: sm_89 and later
    target.real_data = real_data;
    target.seed = 5;
    return test::launch_lowered(lower_pool(op, memory, target), memory, target, skip_payload);
}

// A shape: (name, op maker).
using Case = std::tuple<std::string, PoolMode, DType>;
class PoolKernel : public ::testing::TestWithParam<Case> {};

Op shape_of(const std::string& name, PoolMode mode, DType dtype) {
    if (name == "resnet_max") return pool_op(mode, dtype, 1, 14, 14, 8, 3, 3, 2, 1);  // 3x3/2 pad 1: 7x7
    if (name == "ceil") {
        Op op = pool_op(mode, dtype, 2, 9, 7, 6, 2, 2, 2, 1);  // ceil: 5 x 4 (width: 5 dropped to 4)
        op.pool.ceil_mode = true;
        op.pool.count_pad = mode == PoolMode::avg;
        return op;
    }
    if (name == "dilated") {
        Op op = pool_op(mode, dtype, 1, 11, 9, 4, 3, 2, 1, 0);
        if (mode == PoolMode::max) op.pool.dilation_h = op.pool.dilation_w = 2;  // spans 5 x 3: 7 x 7
        return op;
    }
    Op op = pool_op(mode, dtype, 3, 7, 7, 34, 7, 7, 1, 0);  // global
    op.pool.global = true;
    return op;
}

TEST_P(PoolKernel, EveryOutputMatchesTheDoubleReference) {
    const auto [name, mode, dtype] = GetParam();
    const Op op = shape_of(name, mode, dtype);
    const test::LaunchOutcome o = run(op, true, false);
    EXPECT_EQ(o.numerics.checked, op.vector_elements());
    EXPECT_TRUE(o.numerics.passed) << "max abs err " << o.numerics.max_abs_err << ", max rel err "
                                   << o.numerics.max_rel_err;
    if (mode == PoolMode::max) {
        EXPECT_EQ(o.numerics.max_abs_err, 0.0);  // the maximum is one of the inputs: exact
    }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    const auto [name, mode, dtype] = info.param;
    return name + (mode == PoolMode::max ? "_max_" : "_avg_") + std::string(to_string(dtype));
}

INSTANTIATE_TEST_SUITE_P(All, PoolKernel,
                         ::testing::Combine(::testing::Values("resnet_max", "ceil", "dilated", "global"),
                                            ::testing::Values(PoolMode::max, PoolMode::avg),
                                            ::testing::Values(DType::fp32, DType::fp16, DType::bf16)),
                         case_name);

// 8-bit pools: four channels a word (the shapes' channel counts made multiples of 4). int8 works on
// the integers and keeps the input's scale (max exact, avg within half a step of the exact mean);
// fp8 on the values (max exact, avg rounded once). Each reports its quantization error against
// the fp32 pool of the values before quantization.
class PoolKernel8bit : public ::testing::TestWithParam<Case> {};

TEST_P(PoolKernel8bit, EveryOutputMatchesTheReferenceOfTheStoredValues) {
    const auto [name, mode, dtype] = GetParam();
    Op op = shape_of(name, mode, dtype);
    op.pool.c = (op.pool.c + 3) / 4 * 4;
    const test::LaunchOutcome o = run(op, true, false);
    EXPECT_EQ(o.numerics.checked, op.vector_elements());
    EXPECT_TRUE(o.numerics.passed) << "max abs err " << o.numerics.max_abs_err;
    if (mode == PoolMode::max) {
        EXPECT_EQ(o.numerics.max_abs_err, 0.0);
    } else if (dtype == DType::int8) {
        EXPECT_LE(o.numerics.max_abs_err, 0.5 + 1e-5);
    }
    ASSERT_TRUE(o.numerics.quantization.has_value());
    EXPECT_EQ(o.numerics.quantization->values, op.vector_elements());
    // The stored inputs are within half a step of the drawn ones (int8: max|x| / 254; e4m3: 2^-4
    // relative; e5m2: 2^-3), and pooling does not grow a relative error: a loose ceiling.
    EXPECT_LT(o.numerics.quantization->relative_rms(), dtype == DType::fp8_e5m2 ? 0.15 : 0.08);
    EXPECT_GT(o.numerics.quantization->relative_rms(), 0.0);
    // The report's scheme says what a pool does (not the GEMMs' int32 accumulation).
    EXPECT_NE(o.numerics.quantization->scheme.find(dtype == DType::int8 ? "keeps the input's scale" : "rounded once to the format"),
              std::string::npos)
        << o.numerics.quantization->scheme;
    EXPECT_EQ(run(op, false, true).stats.cycles, o.stats.cycles);
}

INSTANTIATE_TEST_SUITE_P(All, PoolKernel8bit,
                         ::testing::Combine(::testing::Values("resnet_max", "ceil", "dilated", "global"),
                                            ::testing::Values(PoolMode::max, PoolMode::avg),
                                            ::testing::Values(DType::int8, DType::fp8_e4m3, DType::fp8_e5m2)),
                         case_name);

TEST(PoolKernelShape, OutputShapeOfTheCeilCase) {
    // h 9, window 2, stride 2, pad 1: ceil((9 + 2 - 2) / 2) + 1 = 6, the last window starts at 10 >= 9 + 1:
    // dropped, 5; w 7: ceil(7 / 2) + 1 = 5, starts at 8 >= 8: dropped, 4.
    const Op op = shape_of("ceil", PoolMode::max, DType::fp32);
    EXPECT_EQ(op.pool.out_h(), 5);
    EXPECT_EQ(op.pool.out_w(), 4);
}

TEST(PoolKernelShape, OneThreadPerOutputWordAndItsLoads) {
    // A windowed pool: one thread per output word. 3x3/2 max of 1 x 14x14x8 fp32 (7x7 outputs):
    // 392 words in the grid-stride rule's blocks of 256: 2 blocks.
    const test::LaunchOutcome windowed = run(shape_of("resnet_max", PoolMode::max, DType::fp32), false, false);
    EXPECT_EQ(windowed.lowered.dims.block, 256u);
    EXPECT_EQ(windowed.lowered.dims.grid, 2u);
    EXPECT_EQ(windowed.lowered.kernel, pool_kernel(PoolMode::max, Storage::f32));
    // A global pool runs as a reduction: blocks of 8 warps own 32 output words, warp w loads pixels
    // w, w + 8, ... Global max of 3 x 7x7x34 fp32: 102 output words, 4 blocks of 256; per block
    // warp 0 loads 7 pixels (0, 8, ..., 48) and warps 1-7 6 each: 49 load requests, and warp 0's
    // store: 4 x 50 = 200 (the last block's warps hold 6 active lanes). bf16 packs two channels a
    // word: 51 words, 2 blocks, 2 x 50 = 100; int8 four: 3 x 36 channels (34 rounded up to a
    // multiple of 4) = 27 words, 1 block, 50.
    const test::LaunchOutcome f32 = run(shape_of("global", PoolMode::max, DType::fp32), false, false);
    EXPECT_EQ(f32.lowered.kernel, global_pool_kernel(PoolMode::max, Storage::f32));
    EXPECT_EQ(f32.lowered.dims.grid, 4u);
    EXPECT_EQ(f32.lowered.dims.block, 256u);
    EXPECT_EQ(f32.stats.global_requests, 4u * 50);
    const test::LaunchOutcome bf16 = run(shape_of("global", PoolMode::max, DType::bf16), false, false);
    EXPECT_EQ(bf16.lowered.dims.grid, 2u);
    EXPECT_EQ(bf16.stats.global_requests, 2u * 50);
    Op int8 = shape_of("global", PoolMode::max, DType::int8);
    int8.pool.c = 36;
    EXPECT_EQ(run(int8, false, false).stats.global_requests, 50u);
}

TEST(PoolKernelShape, TimingOnlyRunsTakeTheCyclesOfFullOnes) {
    for (PoolMode mode : {PoolMode::max, PoolMode::avg}) {
        const Op op = shape_of("resnet_max", mode, DType::fp16);
        EXPECT_TRUE(pool_kernel(mode, Storage::f16)->fp_payload_skippable);
        EXPECT_EQ(run(op, true, false).stats.cycles, run(op, false, true).stats.cycles);
    }
}

TEST(PoolKernelShape, OddChannelsIn16BitKeepTheRooflineRow) {
    EXPECT_FALSE(has_pool_kernel(pool_op(PoolMode::max, DType::bf16, 1, 8, 8, 3, 2, 2, 2, 0)));
    EXPECT_TRUE(has_pool_kernel(pool_op(PoolMode::max, DType::fp32, 1, 8, 8, 3, 2, 2, 2, 0)));
    simt::GlobalMemory memory;
    LoweringTarget target;
    EXPECT_FALSE(lower_op(pool_op(PoolMode::max, DType::bf16, 1, 8, 8, 3, 2, 2, 2, 0), memory, target).has_value());
    // 8-bit: channels in multiples of 4; fp8 needs the fp8 conversions (sm_89 on); no int32 pool.
    EXPECT_FALSE(has_pool_kernel(pool_op(PoolMode::max, DType::int8, 1, 8, 8, 6, 2, 2, 2, 0)));
    EXPECT_TRUE(has_pool_kernel(pool_op(PoolMode::max, DType::int8, 1, 8, 8, 8, 2, 2, 2, 0)));
    target.sm.limits = *simt::published_limits("sm_80");
    EXPECT_TRUE(lower_op(pool_op(PoolMode::avg, DType::int8, 1, 8, 8, 8, 2, 2, 2, 0), memory, target).has_value());
    EXPECT_FALSE(lower_op(pool_op(PoolMode::avg, DType::fp8_e4m3, 1, 8, 8, 8, 2, 2, 2, 0), memory, target).has_value());
    EXPECT_FALSE(lower_op(pool_op(PoolMode::avg, DType::int32, 1, 8, 8, 8, 2, 2, 2, 0), memory, target).has_value());
    EXPECT_NE(no_kernel_reason(pool_op(PoolMode::max, DType::int8, 1, 8, 8, 6, 2, 2, 2, 0), target)->find("multiple of 4"),
              std::string::npos);
}

}  // namespace
}  // namespace accelsim::gpu::pool_test
