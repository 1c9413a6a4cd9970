// Elementwise kernels of the GPU kernel library (models/gpu/elementwise.h) behind lower_elementwise:
// every output against a double reference at odd sizes in fp32/fp16/bf16, the bytes a 16-bit op
// really moves (hand-worked sectors), launch shapes, and timing-only runs equal to full ones.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "models/gpu/elementwise.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/launch_lowered.h"

namespace accelsim::gpu::elementwise_test {
namespace {

using test::elementwise_op;

LoweringTarget small_target(int sms, bool real_data) {
    LoweringTarget t;
    t.sms = sms;
    t.real_data = real_data;
    t.seed = 3;
    return t;
}

using Outcome = test::LaunchOutcome;

Outcome run(const Op& op, const LoweringTarget& target, bool skip_payload, simt::GlobalMemory& memory) {
    return test::launch_lowered(lower_elementwise(op, memory, target), memory, target, skip_payload);
}

using Case = std::tuple<OpKind, std::int64_t, DType>;
class Elementwise : public ::testing::TestWithParam<Case> {};

TEST_P(Elementwise, EveryOutputMatchesDoubleReference) {
    const auto [kind, n, dtype] = GetParam();
    simt::GlobalMemory memory;
    const Outcome o = run(elementwise_op(kind, n, dtype), small_target(2, true), false, memory);
    EXPECT_EQ(o.numerics.checked, n);
    EXPECT_TRUE(o.numerics.passed) << "max abs err " << o.numerics.max_abs_err << ", max rel err "
                                   << o.numerics.max_rel_err;
    if (kind == OpKind::relu) {
        EXPECT_EQ(o.numerics.max_abs_err, 0.0);  // exact in every format
    }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    const auto [kind, n, dtype] = info.param;
    return std::string(to_string(kind)) + "_" + std::to_string(n) + "_" + std::string(to_string(dtype));
}

INSTANTIATE_TEST_SUITE_P(All, Elementwise,
                         ::testing::Combine(::testing::Values(OpKind::add, OpKind::mul, OpKind::relu, OpKind::gelu),
                                            ::testing::Values(std::int64_t{1}, std::int64_t{7}, std::int64_t{1000},
                                                              std::int64_t{4097}),
                                            ::testing::Values(DType::fp32, DType::fp16, DType::bf16)),
                         case_name);

TEST(ElementwiseCheck, CatchesOneWrongOutput) {
    for (DType dtype : {DType::fp32, DType::fp16}) {
        simt::GlobalMemory memory;
        const Outcome o = run(elementwise_op(OpKind::gelu, 100, dtype), small_target(1, true), false, memory);
        ASSERT_TRUE(o.numerics.passed);
        const std::uint32_t y = o.lowered.args.back();
        memory.store32(y + 8, memory.load32(y + 8) ^ 0x00040004u);  // flip a low mantissa bit of 2 values
        EXPECT_FALSE(o.lowered.check(memory).passed) << to_string(dtype);
    }
}

TEST(ElementwiseBytes, SixteenBitOpsMoveTheirRealBytes) {
    // relu over 4096 elements: fp32 reads 16 KiB and writes 16 KiB = 512 + 512 sectors of 32 B;
    // fp16 and bf16 pack two elements a word: 256 + 256 sectors. One warp trip moves 32 words
    // = 128 B = 4 sectors per access, so requests are sectors / 4.
    for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
        simt::GlobalMemory memory;
        const Outcome o = run(elementwise_op(OpKind::relu, 4096, dtype), small_target(2, false), true, memory);
        const std::uint64_t sectors = dtype == DType::fp32 ? 1024 : 512;
        EXPECT_EQ(o.stats.global_sectors, sectors) << to_string(dtype);
        EXPECT_EQ(o.stats.global_requests, sectors / 4) << to_string(dtype);
    }
    // add over 7 fp16 elements: 4 words (the last one's high half is padding), one warp with 4
    // lanes: a, b and y one sector each.
    simt::GlobalMemory memory;
    const Outcome o = run(elementwise_op(OpKind::add, 7, DType::fp16), small_target(1, false), true, memory);
    EXPECT_EQ(o.lowered.args[0], 4u);
    EXPECT_EQ(o.stats.global_sectors, 3u);
    EXPECT_EQ(o.stats.active_lanes % 4, 0u);  // every issue had 4 lanes (or 32 before the exit)
}

TEST(ElementwiseShape, GridIsWordsCappedAtOneWave) {
    // 256 threads x 10 registers: warps limit 64 / 8 = 8 blocks per SM; 108 SMs: wave 864.
    LoweringTarget t = small_target(108, false);
    simt::GlobalMemory m1, m2, m3;
    // gelu over 393216 fp16 elements = 196608 words = 768 blocks of 256 (< 864).
    EXPECT_EQ(lower_elementwise(elementwise_op(OpKind::gelu, 393216, DType::fp16), m1, t).dims.grid, 768u);
    // The same in fp32: 1536 blocks, capped at 864.
    EXPECT_EQ(lower_elementwise(elementwise_op(OpKind::gelu, 393216, DType::fp32), m2, t).dims.grid, 864u);
    // 7 elements: one block.
    const LoweredKernel k = lower_elementwise(elementwise_op(OpKind::mul, 7, DType::bf16), m3, t);
    EXPECT_EQ(k.dims.grid, 1u);
    EXPECT_EQ(k.dims.block, 256u);
    bool found = false;
    for (const auto& s : k.stats) found = found || (s.name == "gpu.elements_per_thread_step" && s.value == 2.0);
    EXPECT_TRUE(found);
}

class ElementwiseTiming : public ::testing::TestWithParam<std::tuple<OpKind, DType>> {};

TEST_P(ElementwiseTiming, SkipPayloadCyclesEqualFullRun) {
    const auto [kind, dtype] = GetParam();
    const Op op = elementwise_op(kind, 20001, dtype);
    simt::GlobalMemory full_memory, skip_memory;
    const Outcome full = run(op, small_target(2, true), false, full_memory);
    ASSERT_TRUE(full.lowered.kernel->fp_payload_skippable) << full.lowered.kernel->fp_dependence;
    const Outcome skip = run(op, small_target(2, false), true, skip_memory);
    EXPECT_TRUE(full.numerics.passed);
    EXPECT_EQ(skip.stats.cycles, full.stats.cycles);
    EXPECT_EQ(skip.stats.issued, full.stats.issued);
    EXPECT_EQ(skip.stats.scoreboard_cycles, full.stats.scoreboard_cycles);
}

INSTANTIATE_TEST_SUITE_P(All, ElementwiseTiming,
                         ::testing::Combine(::testing::Values(OpKind::add, OpKind::mul, OpKind::relu, OpKind::gelu),
                                            ::testing::Values(DType::fp32, DType::fp16, DType::bf16)));

TEST(ElementwiseStorage, PackedPairsLowElementFirst) {
    // Element 2w in the low half of word w, rounded to nearest even: 1 + 2^-11 is a tie between
    // fp16 1 and 1 + 2^-10 (even: 1); bf16 keeps 8 bits, 1 + 2^-8 ties to 1.
    simt::GlobalMemory m;
    const std::uint32_t a = m.allocate(8);
    store_elements(m, a, {1.0f, -2.0f, 1.0f + std::ldexp(1.0f, -11)}, Storage::f16);
    EXPECT_EQ(m.load32(a), 0xC0003C00u);  // fp16 -2 = 0xC000 high, 1 = 0x3C00 low
    EXPECT_EQ(load_element(m, a, 2, Storage::f16), 1.0f);
    store_elements(m, a, {1.0f + std::ldexp(1.0f, -8), 3.0f}, Storage::bf16);
    EXPECT_EQ(m.load32(a), 0x40403F80u);  // bf16 3 = 0x4040, 1 = 0x3F80
    EXPECT_EQ(storage_words(7, Storage::bf16), 4);
    EXPECT_EQ(storage_words(7, Storage::f32), 7);
}

TEST(ElementwiseErrors, OutOfRangeCountIsALoweringError) {
    simt::GlobalMemory m;
    EXPECT_THROW(lower_elementwise(elementwise_op(OpKind::relu, 0, DType::fp32), m, small_target(1, false)),
                 LoweringError);
    EXPECT_THROW(lower_elementwise(elementwise_op(OpKind::add, std::int64_t{1} << 31, DType::fp32), m,
                                   small_target(1, false)),
                 LoweringError);
}

}  // namespace
}  // namespace accelsim::gpu::elementwise_test
