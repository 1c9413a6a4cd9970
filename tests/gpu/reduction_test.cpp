// Softmax and layernorm kernels of the GPU kernel library (models/gpu/reduction.h): every output
// against a double-precision host reference (the check the lowering returns, whose tolerances are
// derived in reduction.cpp), both variants of the warp/block rule at odd sizes, fp32/fp16/bf16,
// hand-worked launch shapes and shuffle counts, and timing-only runs equal to full ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "models/gpu/reduction.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/launch_lowered.h"

namespace accelsim::gpu::reduction_test {
namespace {

using test::row_op;

LoweringTarget small_target(int sms, bool real_data, std::uint64_t seed = 7) {
    LoweringTarget t;
    t.sms = sms;
    t.real_data = real_data;
    t.seed = seed;
    return t;  // default SmParams: A100-like SM, no L1, 400-cycle fixed-latency memory
}

simt::SimtParams simt_params(const LoweringTarget& target) {
    simt::SimtParams p;
    p.sms = target.sms;
    p.sm = target.sm;
    return p;
}

struct Outcome {
    simt::KernelStats stats;
    LoweredKernel lowered;
    LoweringNumerics numerics;
};

Outcome run(const Op& op, ReductionVariant variant, const LoweringTarget& target, bool skip_payload,
            simt::GlobalMemory& memory, bool record_issues = false) {
    Outcome o;
    o.lowered = lower_row_reduction(op, memory, target, variant);
    simt::SimtParams params = simt_params(target);
    params.sm.record_issue_order = record_issues;
    simt::LaunchOptions options;
    options.skip_fp_payload = skip_payload;
    o.stats = simt::launch(*o.lowered.kernel, o.lowered.dims, o.lowered.args, memory, params, nullptr, options);
    if (o.lowered.check) o.numerics = o.lowered.check(memory);
    return o;
}

double stat(const LoweredKernel& k, const std::string& name) {
    for (const auto& s : k.stats)
        if (s.name == name) return s.value;
    ADD_FAILURE() << "no stat " << name;
    return -1;
}

// ---- numerics at odd sizes, both variants, three dtypes ------------------------------------------

using Case = std::tuple<OpKind, std::tuple<std::int64_t, std::int64_t>, ReductionVariant, DType>;

class RowReduction : public ::testing::TestWithParam<Case> {};

TEST_P(RowReduction, EveryOutputMatchesDoubleReference) {
    const auto [kind, shape, variant, dtype] = GetParam();
    const auto [rows, cols] = shape;
    const Op op = row_op(kind, rows, cols, dtype);
    simt::GlobalMemory memory;
    const Outcome o = run(op, variant, small_target(4, true), false, memory);
    // softmax: one value per element plus one row-sum check per row; layernorm: one per element.
    RecordProperty("max_abs_err", std::to_string(o.numerics.max_abs_err));
    RecordProperty("max_rel_err", std::to_string(o.numerics.max_rel_err));
    RecordProperty("cycles", std::to_string(o.stats.cycles));
    EXPECT_EQ(o.numerics.checked, rows * cols + (kind == OpKind::softmax ? rows : 0));
    EXPECT_TRUE(o.numerics.passed) << "max abs err " << o.numerics.max_abs_err << ", max rel err "
                                   << o.numerics.max_rel_err;
    // The grid covers the rows (grid-stride). On 4 SMs a warp per row puts 8 rows in a block when
    // rows >= 8 x 4 (129 rows), else halves until each SM gets a row: 3 rows -> 1 per block.
    const std::int64_t per_block = variant == ReductionVariant::warp_per_row ? (rows >= 32 ? 8 : 1) : 1;
    EXPECT_EQ(o.lowered.dims.block, variant == ReductionVariant::warp_per_row ? 32u * per_block : 256u);
    EXPECT_LE(o.lowered.dims.grid, static_cast<std::uint32_t>((rows + per_block - 1) / per_block));
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    const auto [kind, shape, variant, dtype] = info.param;
    return std::string(to_string(kind)) + "_" + std::to_string(std::get<0>(shape)) + "x" +
           std::to_string(std::get<1>(shape)) + "_" +
           (variant == ReductionVariant::warp_per_row ? "warp" : "block") + "_" + std::string(to_string(dtype));
}

// rows 1, 3, 129 and cols 1, 7, 768, 3072, 4097 (odd: a 16-bit row ends in a padding half; 4097
// leaves one lane/thread with one more element than the rest).
const auto kShapes = ::testing::Values(std::make_tuple(std::int64_t{1}, std::int64_t{1}),
                                       std::make_tuple(std::int64_t{3}, std::int64_t{7}),
                                       std::make_tuple(std::int64_t{129}, std::int64_t{7}),
                                       std::make_tuple(std::int64_t{129}, std::int64_t{768}),
                                       std::make_tuple(std::int64_t{3}, std::int64_t{3072}),
                                       std::make_tuple(std::int64_t{3}, std::int64_t{4097}),
                                       std::make_tuple(std::int64_t{1}, std::int64_t{4097}),
                                       std::make_tuple(std::int64_t{129}, std::int64_t{4097}));

INSTANTIATE_TEST_SUITE_P(Softmax, RowReduction,
                         ::testing::Combine(::testing::Values(OpKind::softmax), kShapes,
                                            ::testing::Values(ReductionVariant::warp_per_row,
                                                              ReductionVariant::block_per_row),
                                            ::testing::Values(DType::fp32, DType::fp16, DType::bf16)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Layernorm, RowReduction,
                         ::testing::Combine(::testing::Values(OpKind::layernorm), kShapes,
                                            ::testing::Values(ReductionVariant::warp_per_row,
                                                              ReductionVariant::block_per_row),
                                            ::testing::Values(DType::fp32, DType::fp16, DType::bf16)),
                         case_name);

// ---- the check can fail ------------------------------------------------------------------------

TEST(RowReductionCheck, CatchesOneWrongOutput) {
    for (OpKind kind : {OpKind::softmax, OpKind::layernorm}) {
        const Op op = row_op(kind, 3, 7, DType::fp32);
        simt::GlobalMemory memory;
        const Outcome o = run(op, ReductionVariant::warp_per_row, small_target(1, true), false, memory);
        ASSERT_TRUE(o.numerics.passed);
        // y is the last argument but one (layernorm: before inv_cols) or the last (softmax).
        const std::uint32_t y = kind == OpKind::softmax ? o.lowered.args.back() : o.lowered.args[6];
        const std::uint32_t at = y + 4 * 10;  // row 1, col 3
        memory.store_f32(at, memory.load_f32(at) * (1.0f + 1e-3f));
        EXPECT_FALSE(o.lowered.check(memory).passed) << to_string(kind);
    }
}

TEST(RowReductionCheck, SoftmaxRowsSumToOne) {
    // Independent of the per-element check: the stored fp16 outputs of each row, summed in double.
    const Op op = row_op(OpKind::softmax, 3, 3072, DType::fp16);
    simt::GlobalMemory memory;
    const Outcome o = run(op, ReductionVariant::block_per_row, small_target(2, true), false, memory);
    const std::uint32_t y = o.lowered.args.back();
    for (int r = 0; r < 3; ++r) {
        double sum = 0;
        for (int j = 0; j < 3072; ++j) sum += load_element(memory, y, r * 3072 + j, Storage::f16);
        // 3072 outputs each within 2^-11 relative of p_j (sum 1) after fp16 rounding, plus the fp32
        // bound (10 * 8 + 3072 + 16) 2^-24 = 1.9e-4: |sum - 1| <= 4.9e-4 + 1.9e-4.
        EXPECT_NEAR(sum, 1.0, 6.8e-4) << "row " << r;
    }
}

TEST(RowReductionCheck, LayernormRowsHaveMeanBetaAndUnitVariance) {
    // With gamma = 1 and beta = 0 (overwritten after lowering), y has mean 0 and variance
    // var / (var + eps) per row: the textbook identity, independent of the kernel's formula.
    const std::int64_t rows = 3, cols = 768;
    const Op op = row_op(OpKind::layernorm, rows, cols, DType::fp32);
    simt::GlobalMemory memory;
    LoweredKernel k = lower_row_reduction(op, memory, small_target(1, true), ReductionVariant::warp_per_row);
    const std::uint32_t x = k.args[3], gamma = k.args[4], beta = k.args[5], y = k.args[6];
    for (int j = 0; j < cols; ++j) {
        memory.store_f32(gamma + 4 * j, 1.0f);
        memory.store_f32(beta + 4 * j, 0.0f);
    }
    simt::launch(*k.kernel, k.dims, k.args, memory, simt_params(small_target(1, false)));
    for (int r = 0; r < rows; ++r) {
        double mx = 0, my = 0;
        for (int j = 0; j < cols; ++j) {
            mx += memory.load_f32(x + 4 * (r * cols + j));
            my += memory.load_f32(y + 4 * (r * cols + j));
        }
        mx /= cols;
        my /= cols;
        double vx = 0, vy = 0;
        for (int j = 0; j < cols; ++j) {
            vx += std::pow(memory.load_f32(x + 4 * (r * cols + j)) - mx, 2);
            vy += std::pow(memory.load_f32(y + 4 * (r * cols + j)) - my, 2);
        }
        vx /= cols;
        vy /= cols;
        EXPECT_NEAR(my, 0.0, 1e-5);
        EXPECT_NEAR(vy, vx / (vx + 1e-5), 2e-6);  // eps = 0 would give 7.5e-6 more
    }
}

// ---- the variant rule and the launch shape -----------------------------------------------------

TEST(RowReductionShape, VariantRuleSwitchesAbove1024Cols) {
    EXPECT_EQ(reduction_variant(1), ReductionVariant::warp_per_row);
    EXPECT_EQ(reduction_variant(1024), ReductionVariant::warp_per_row);
    EXPECT_EQ(reduction_variant(1025), ReductionVariant::block_per_row);
    simt::GlobalMemory m1, m2;
    const LoweringTarget t = small_target(4, false);
    EXPECT_EQ(stat(lower_softmax(row_op(OpKind::softmax, 8, 768, DType::fp16), m1, t), "gpu.variant"), 2.0);
    // lower_layernorm runs PyTorch's kernels (layernorm_torch_test.cpp): 3072 = whole 4-vectors.
    EXPECT_EQ(stat(lower_layernorm(row_op(OpKind::layernorm, 8, 3072, DType::fp16), m2, t), "gpu.variant"), 5.0);
}

TEST(RowReductionShape, GridIsRowsCappedAtOneWaveOnA100) {
    // 256 threads x 32 registers: 1024 registers per warp, 4 partitions x (16384 / 1024) = 64 warps
    // fit the register file = 8 blocks; 64 warps / 8 per block = 8 too: wave 108 x 8 = 864.
    LoweringTarget t = small_target(108, false);
    simt::GlobalMemory m1, m2, m3;
    // BERT-base attention softmax: 1536 rows of 128, PyTorch's persistent warp kernel: 128-thread
    // blocks of 4 warps x 2 rows -> 192 blocks.
    const LoweredKernel a = lower_softmax(row_op(OpKind::softmax, 1536, 128, DType::fp16), m1, t);
    EXPECT_EQ(a.dims.grid, 192u);
    EXPECT_EQ(stat(a, "gpu.grid"), 192.0);
    EXPECT_EQ(stat(a, "gpu.block"), 128.0);
    // Block per row (forced: lower_layernorm runs PyTorch's kernels): 1536 rows of 4096 -> capped
    // at 864 blocks.
    const LoweredKernel b = lower_row_reduction(row_op(OpKind::layernorm, 1536, 4096, DType::fp32), m2, t,
                                                ReductionVariant::block_per_row);
    EXPECT_EQ(b.dims.grid, 864u);
    EXPECT_EQ(stat(b, "gpu.rows_per_block"), 1.0);
    // BERT layernorm, 128 rows of 768: 8 rows per block would use 16 of 108 SMs; 4, 2 per block
    // still leave SMs idle (432, 216 > 128), so one warp per block: 128 blocks of 32 threads.
    const LoweredKernel c = lower_row_reduction(row_op(OpKind::layernorm, 128, 768, DType::fp16), m3, t,
                                                ReductionVariant::warp_per_row);
    EXPECT_EQ(c.dims.grid, 128u);
    EXPECT_EQ(c.dims.block, 32u);
    EXPECT_EQ(stat(c, "gpu.rows_per_block"), 1.0);
    // The rule itself: 8 while 8 x SMs <= rows.
    EXPECT_EQ(warp_rows_per_block(864, 108), 8);
    EXPECT_EQ(warp_rows_per_block(863, 108), 4);
    EXPECT_EQ(warp_rows_per_block(216, 108), 2);
    EXPECT_EQ(warp_rows_per_block(1, 108), 1);
}

TEST(RowReductionShape, SixteenBitTensorsAreHalfTheBytes) {
    // Words per row: fp32 cols, 16-bit ceil(cols / 2). 3 rows x 7 cols: x and y 3 x 4 words each.
    simt::GlobalMemory m16, m32;
    const LoweredKernel k16 = lower_softmax(row_op(OpKind::softmax, 3, 7, DType::bf16), m16, small_target(1, false));
    const LoweredKernel k32 = lower_softmax(row_op(OpKind::softmax, 3, 7, DType::fp32), m32, small_target(1, false));
    EXPECT_EQ(k16.args[2], 4u);
    EXPECT_EQ(k32.args[2], 7u);
    // PyTorch's persistent warp kernel reads each row once and writes it once; a row of 4 words
    // is one 32-byte sector when it does not straddle one (row starts at 16 r bytes from a
    // 256-aligned base: rows 0..2 at 0, 16, 32: row 1 straddles nothing either, 16 + 16 = 32):
    // 3 rows x 2 accesses. Groups of G = 8 lanes with 2 row slots: slot 0 holds rows 0 (group 0)
    // and 2 (group 1) in one warp instruction, slot 1 row 1: 2 load and 2 store requests.
    simt::LaunchOptions skip;
    skip.skip_fp_payload = true;
    const simt::KernelStats s =
        simt::launch(*k16.kernel, k16.dims, k16.args, m16, simt_params(small_target(1, false)), nullptr, skip);
    EXPECT_EQ(s.global_sectors, 3u * 2u);
    EXPECT_EQ(s.global_requests, 4u);
}

// ---- shuffles ----------------------------------------------------------------------------------

int shuffles_issued(const Outcome& o) {
    int n = 0;
    for (const simt::IssueRecord& r : o.stats.issue_order)
        if (o.lowered.kernel->code[static_cast<std::size_t>(r.pc)].op == simt::Opcode::shfl) ++n;
    return n;
}

TEST(RowReductionShuffles, CountPerRowIsLog2OfWarpTimesPasses) {
    for (OpKind kind : {OpKind::softmax, OpKind::layernorm}) {
        // Warp per row: 2 reductions (max and sum / mean and variance) x log2(32) = 5 butterfly
        // steps = 10 warp shuffles per row; 3 rows -> 30.
        {
            simt::GlobalMemory m;
            const Outcome o = run(row_op(kind, 3, 7, DType::fp32), ReductionVariant::warp_per_row,
                                  small_target(1, false), true, m, true);
            EXPECT_EQ(shuffles_issued(o), 30) << to_string(kind);
        }
        // Block per row: each of 8 warps does 5 steps on its part and log2(8) = 3 on the 8
        // partials, per reduction: 8 x 2 x (5 + 3) = 128 per row; 3 rows -> 384.
        {
            simt::GlobalMemory m;
            const Outcome o = run(row_op(kind, 3, 7, DType::fp32), ReductionVariant::block_per_row,
                                  small_target(1, false), true, m, true);
            EXPECT_EQ(shuffles_issued(o), 384) << to_string(kind);
            // Shared memory per row: 8 partial stores (lane 0 of each warp) and 8 warp loads, per
            // reduction: 32 requests per row, 96 for 3 rows.
            EXPECT_EQ(o.stats.shared_requests, 96u);
        }
    }
}

// ---- PyTorch's softmax kernels ------------------------------------------------------------------

TEST(TorchSoftmaxRule, ThresholdsOfHostSoftmax) {
    // Persistent warp kernel: cols <= 1024 and cols x element bytes <= 4096 (both dtypes reach 1024).
    EXPECT_EQ(softmax_variant(1, Storage::f16), ReductionVariant::softmax_warp_persistent);
    EXPECT_EQ(softmax_variant(1024, Storage::f16), ReductionVariant::softmax_warp_persistent);
    EXPECT_EQ(softmax_variant(1024, Storage::f32), ReductionVariant::softmax_warp_persistent);
    // Shared-memory kernel: cols < (49152 - 32 warps x 4) / bytes = 24512 (16-bit), 12256 (fp32),
    // and cols a multiple of 8 (16-bit) / 4 (fp32) elements.
    EXPECT_EQ(softmax_variant(1032, Storage::f16), ReductionVariant::softmax_block_smem);
    EXPECT_EQ(softmax_variant(2048, Storage::bf16), ReductionVariant::softmax_block_smem);
    EXPECT_EQ(softmax_variant(24504, Storage::f16), ReductionVariant::softmax_block_smem);
    EXPECT_EQ(softmax_variant(24512, Storage::f16), ReductionVariant::softmax_block_global);
    EXPECT_EQ(softmax_variant(32768, Storage::f16), ReductionVariant::softmax_block_global);
    EXPECT_EQ(softmax_variant(1028, Storage::f32), ReductionVariant::softmax_block_smem);
    EXPECT_EQ(softmax_variant(12252, Storage::f32), ReductionVariant::softmax_block_smem);
    EXPECT_EQ(softmax_variant(12256, Storage::f32), ReductionVariant::softmax_block_global);
    EXPECT_EQ(softmax_variant(1025, Storage::f16), ReductionVariant::softmax_block_global);  // not whole vectors
    EXPECT_EQ(softmax_variant(1036, Storage::f16), ReductionVariant::softmax_block_global);  // 1036 % 8 = 4
    // A chip whose blocks cannot have 48 KB never gets the shared-memory kernel.
    EXPECT_EQ(softmax_variant(2048, Storage::f16, 32768), ReductionVariant::softmax_block_global);
    // SoftMaxForward_getBlockSize: min(cols, 1024) rounded up to a multiple of 32.
    EXPECT_EQ(softmax_block_threads(1025), 1024u);
    EXPECT_EQ(softmax_block_threads(100), 128u);
    EXPECT_EQ(softmax_block_threads(96), 96u);
}

TEST(TorchSoftmaxRule, LaunchShapes) {
    const LoweringTarget t = small_target(108, false);
    struct Expect {
        std::int64_t rows, cols;
        DType dtype;
        std::uint32_t grid, block;
        double variant;
    };
    // Persistent: 128 threads; group G = min(32, next_pow2(cols)) lanes, 2 rows per group when
    // next_pow2(cols) <= 128: rows per block 4 x 2 = 8 (cols 32..128), 4 (256..1024),
    // 16 x 2 = 32 (cols 5..8: G = 8). Block kernels: one block of 1024 per row.
    const Expect cases[] = {{4096, 32, DType::fp16, 512, 128, 2},    {4096, 128, DType::fp16, 512, 128, 2},
                            {4096, 256, DType::fp16, 1024, 128, 2},  {4096, 1024, DType::fp16, 1024, 128, 2},
                            {100, 7, DType::fp32, 4, 128, 2},        {4096, 2048, DType::fp16, 4096, 1024, 3},
                            {4096, 16384, DType::fp16, 4096, 1024, 3}, {4096, 32768, DType::fp16, 4096, 1024, 4},
                            {5, 4097, DType::bf16, 5, 1024, 4}};
    for (const Expect& e : cases) {
        simt::GlobalMemory m;
        const LoweredKernel k = lower_softmax(row_op(OpKind::softmax, e.rows, e.cols, e.dtype), m, t);
        EXPECT_EQ(k.dims.grid, e.grid) << e.rows << "x" << e.cols;
        EXPECT_EQ(k.dims.block, e.block) << e.rows << "x" << e.cols;
        EXPECT_EQ(stat(k, "gpu.variant"), e.variant) << e.rows << "x" << e.cols;
    }
    // On a100 the block kernels hold 2 blocks per SM (2048 threads / 1024; the shared-memory
    // kernel's 48 KB + 1 KB reserved would allow 3): the occupancy calculator on the kernels.
    simt::GlobalMemory m1, m2;
    const LoweredKernel smem = lower_softmax(row_op(OpKind::softmax, 8, 2048, DType::fp16), m1, t);
    const LoweredKernel global = lower_softmax(row_op(OpKind::softmax, 8, 32768, DType::fp16), m2, t);
    EXPECT_EQ(smem.kernel->shared_bytes, 49152);
    EXPECT_EQ(blocks_per_sm(*smem.kernel, 1024, t), 2);
    EXPECT_EQ(blocks_per_sm(*global.kernel, 1024, t), 2);
}

using TorchCase = std::tuple<ReductionVariant, std::tuple<std::int64_t, std::int64_t>, DType>;
class TorchSoftmax : public ::testing::TestWithParam<TorchCase> {};

TEST_P(TorchSoftmax, EveryOutputMatchesDoubleReference) {
    const auto [variant, shape, dtype] = GetParam();
    const auto [rows, cols] = shape;
    simt::GlobalMemory memory;
    const Outcome o = run(row_op(OpKind::softmax, rows, cols, dtype), variant, small_target(4, true), false, memory);
    EXPECT_EQ(o.numerics.checked, rows * cols + rows);
    EXPECT_TRUE(o.numerics.passed) << "max abs err " << o.numerics.max_abs_err << ", max rel err "
                                   << o.numerics.max_rel_err;
}

std::string torch_case_name(const ::testing::TestParamInfo<TorchCase>& info) {
    const auto [variant, shape, dtype] = info.param;
    return std::string(to_string(variant)) + "_" + std::to_string(std::get<0>(shape)) + "x" +
           std::to_string(std::get<1>(shape)) + "_" + std::string(to_string(dtype));
}

// Every dtype over the given (rows, cols) shapes, for one kernel.
auto torch_cases(ReductionVariant variant, const std::vector<std::tuple<std::int64_t, std::int64_t>>& shapes) {
    return ::testing::Combine(::testing::Values(variant), ::testing::ValuesIn(shapes),
                              ::testing::Values(DType::fp32, DType::fp16, DType::bf16));
}

// Persistent: every group width (cols 1: G = 1; 7: G = 8; 33: G = 32, 2 rows; 129: 1 row), odd
// cols (a padding half), rows not a multiple of a block's (129), the largest size (1024).
INSTANTIATE_TEST_SUITE_P(Persistent, TorchSoftmax,
                         torch_cases(ReductionVariant::softmax_warp_persistent,
                                     {{1, 1}, {3, 7}, {129, 33}, {5, 129}, {9, 1024}}),
                         torch_case_name);
// Shared memory: rows of whole 16-byte vectors, one vector per thread or fewer (1032) and two or
// more per thread (8192 fp16 = 1024 vectors: one each; 12248 fp32 = 3062 vectors: 2 or 3).
INSTANTIATE_TEST_SUITE_P(Smem, TorchSoftmax,
                         torch_cases(ReductionVariant::softmax_block_smem, {{3, 1032}, {2, 8192}, {2, 12248}}),
                         torch_case_name);
// Global: whole vectors (4096, 16-byte loads) and not (7, 4097: one word a trip, padding half).
INSTANTIATE_TEST_SUITE_P(Global, TorchSoftmax,
                         torch_cases(ReductionVariant::softmax_block_global, {{3, 7}, {3, 4096}, {2, 4097}}),
                         torch_case_name);

TEST(TorchSoftmaxTraffic, PersistentAndSmemReadTheRowOnceGlobalThrice) {
    // 16 rows x 2048 fp16 = 4096 bytes = 128 sectors a row. Sectors moved (loads + stores):
    // persistent and shared-memory kernels read each sector once and write it once (256 a row);
    // the global kernel reads it three times (512 a row).
    const Op op = row_op(OpKind::softmax, 16, 2048, DType::fp16);
    const std::pair<ReductionVariant, std::uint64_t> cases[] = {
        {ReductionVariant::softmax_block_smem, 16 * 256},
        {ReductionVariant::softmax_block_global, 16 * 512}};
    for (const auto& [variant, sectors] : cases) {
        simt::GlobalMemory m;
        const Outcome o = run(op, variant, small_target(2, false), true, m);
        EXPECT_EQ(o.stats.global_sectors, sectors) << to_string(variant);
        // 16-byte vectors: a warp request covers 512 bytes = 16 sectors.
        EXPECT_EQ(o.stats.global_requests, sectors / 16) << to_string(variant);
    }
    // Persistent, 1024 fp16 cols = 2048 bytes = 64 sectors a row, 16 rows: 16 x 128 sectors. As
    // PyTorch's, a load instruction covers one element a lane: 32 x 2 bytes = 2 sectors a warp
    // request; a store covers the words of the 16 even lanes: 64 bytes = 2 sectors.
    simt::GlobalMemory m;
    const Outcome p = run(row_op(OpKind::softmax, 16, 1024, DType::fp16), ReductionVariant::softmax_warp_persistent,
                          small_target(2, false), true, m);
    EXPECT_EQ(p.stats.global_sectors, 16u * 128u);
    EXPECT_EQ(p.stats.global_requests, 16u * 128u / 2u);
}

TEST(TorchSoftmaxShuffles, WarpButterflyAndBlockReduceWarp) {
    // Persistent, 3 rows of 7 fp32: G = 8 lanes, log2 8 = 3 butterfly steps per reduction and
    // row slot, 2 reductions, 2 row slots per group (WARP_BATCH); the groups of a warp share each
    // shuffle instruction. One block (32 rows) of 4 warps, and like softmax_warp_forward every warp
    // runs its reductions even when its rows are past the end: 4 x 2 x 2 x 3 = 48.
    {
        simt::GlobalMemory m;
        const Outcome o = run(row_op(OpKind::softmax, 3, 7, DType::fp32), ReductionVariant::softmax_warp_persistent,
                              small_target(1, false), true, m, true);
        EXPECT_EQ(shuffles_issued(o), 48);
    }
    // Block kernels, 1024 threads = 32 warps per row: per reduction each warp shuffles down 5
    // times and warp 0 5 more on the partials: 32 x 5 + 5 = 165, two reductions: 330 a row.
    // Shared requests per reduction: 32 partial stores, warp 0's load and broadcast store, 32
    // broadcast loads = 66. The smem kernel adds the row: 1032 fp16 = 129 vectors, threads 0..128
    // in warps 0..4: 5 warp requests per pass, 3 passes.
    for (ReductionVariant v : {ReductionVariant::softmax_block_global, ReductionVariant::softmax_block_smem}) {
        simt::GlobalMemory m;
        const Outcome o = run(row_op(OpKind::softmax, 2, 1032, DType::fp16), v, small_target(1, false), true, m, true);
        EXPECT_EQ(shuffles_issued(o), 2 * 330) << to_string(v);
        EXPECT_EQ(o.stats.shared_requests, 2u * (2 * 66 + (v == ReductionVariant::softmax_block_smem ? 15 : 0)))
            << to_string(v);
    }
}

// gfx942 (waves of 64): PyTorch's warp_size() is 64 there, so the persistent kernel's groups are
// min(64, next_pow2(cols)) lanes: a group of 64 is a wave and its butterfly's first step (mask
// 32) crosses the wave's halves (SmTiming.AWave64Shuffle*).
LoweringTarget wave64_target(int sms, bool real_data) {
    LoweringTarget t = small_target(sms, real_data);
    t.sm.limits = *simt::published_limits("gfx942");
    return t;
}

TEST(TorchSoftmaxWave64, GroupsOfAWaveMatchTheReference) {
    // Launch shapes: cols 128 -> G = 64, 2 rows a group, 128 / 64 x 2 = 4 rows a block (8 with
    // G = 32); cols 1024 -> G = 64, 1 row, 2 rows a block (4); cols 33 -> G = 64 (next_pow2 64);
    // cols 7 -> G = 8 either way (32 rows a block).
    const std::tuple<std::int64_t, std::int64_t, std::uint32_t, std::uint32_t> shapes[] = {
        {1536, 128, 384, 192}, {9, 1024, 5, 3}, {129, 33, 33, 17}, {100, 7, 4, 4}};
    for (const auto& [rows, cols, grid64, grid32] : shapes)
        for (const DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
            const Op op = row_op(OpKind::softmax, rows, cols, dtype);
            simt::GlobalMemory m64, m32;
            const Outcome o = run(op, ReductionVariant::softmax_warp_persistent, wave64_target(4, true), false, m64);
            const LoweredKernel nvidia = lower_row_reduction(op, m32, small_target(4, false),
                                                             ReductionVariant::softmax_warp_persistent);
            EXPECT_EQ(o.lowered.dims.grid, grid64) << rows << "x" << cols;
            EXPECT_EQ(nvidia.dims.grid, grid32) << rows << "x" << cols;
            EXPECT_EQ(o.numerics.checked, rows * cols + rows);
            EXPECT_TRUE(o.numerics.passed) << rows << "x" << cols << " " << to_string(dtype) << ": max rel err "
                                           << o.numerics.max_rel_err;
        }
    // Shuffles: 3 rows of 33 fp32, G = 64: log2 64 = 6 butterfly steps per reduction and row slot,
    // 2 reductions, 2 row slots, issued by each 32-lane half: one block of 128 threads = 2 waves
    // = 4 halves: 4 x 2 x 2 x 6 = 96 (with G = 32 on sm_80: 4 warps x 2 x 2 x 5 = 80).
    simt::GlobalMemory m64, m32;
    const Op op = row_op(OpKind::softmax, 3, 33, DType::fp32);
    EXPECT_EQ(shuffles_issued(run(op, ReductionVariant::softmax_warp_persistent, wave64_target(1, false), true, m64, true)), 96);
    EXPECT_EQ(shuffles_issued(run(op, ReductionVariant::softmax_warp_persistent, small_target(1, false), true, m32, true)), 80);
}

TEST(TorchSoftmaxWave64, BlockKernelsReduceInWavesOfSixtyFour) {
    // blockReduceWarp with C10_WARP_SIZE 64: 1024 threads = 16 waves = 32 halves; per reduction
    // every half shuffles down 32 .. 1 (6) and wave 0's two halves 6 more on the 16 partials:
    // 32 x 6 + 2 x 6 = 204, two reductions 408 a row (sm_80: 330). Shared requests per reduction:
    // 16 partial stores (lane 0 of each wave; a half with no lane on stores nothing), wave 0's load
    // of the partials (lanes 0..15: one half), its broadcast store, 32 broadcast loads = 50 (66);
    // the smem kernel adds its 15 row requests, as in TorchSoftmaxShuffles.
    for (ReductionVariant v : {ReductionVariant::softmax_block_global, ReductionVariant::softmax_block_smem}) {
        simt::GlobalMemory m;
        const Outcome o = run(row_op(OpKind::softmax, 2, 1032, DType::fp16), v, wave64_target(1, false), true, m, true);
        EXPECT_EQ(shuffles_issued(o), 2 * 408) << to_string(v);
        EXPECT_EQ(o.stats.shared_requests, 2u * (2 * 50 + (v == ReductionVariant::softmax_block_smem ? 15 : 0)))
            << to_string(v);
    }
    // Every output against the double reference (smem: whole vectors; global: 16-byte loads, and
    // one word a trip with a padding half).
    const std::tuple<ReductionVariant, std::int64_t, std::int64_t> cases[] = {
        {ReductionVariant::softmax_block_smem, 3, 1032}, {ReductionVariant::softmax_block_smem, 2, 12248},
        {ReductionVariant::softmax_block_global, 3, 4096}, {ReductionVariant::softmax_block_global, 2, 4097}};
    for (const auto& [variant, rows, cols] : cases)
        for (const DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
            simt::GlobalMemory m;
            const Outcome o = run(row_op(OpKind::softmax, rows, cols, dtype), variant, wave64_target(2, true), false, m);
            EXPECT_EQ(o.numerics.checked, rows * cols + rows);
            EXPECT_TRUE(o.numerics.passed) << to_string(variant) << " " << rows << "x" << cols << " "
                                           << to_string(dtype) << ": max rel err " << o.numerics.max_rel_err;
        }
}

TEST(TorchLayernormWave64, SixteenWavesOfSixtyFourMatchTheReference) {
    // ROCm's vectorized_layer_norm_kernel: threads(64, 1024 / 64) = 1024 threads, each reading
    // vectors at tid, tid + 1024, ...; the Welford state shuffles down 32 .. 1 in each wave, the
    // 16 waves' lane 0s combine in 4 rounds through 96 bytes of shared memory.
    for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{5, 4}, {3, 1024}, {2, 8196}, {17, 768}})
        for (const DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
            simt::GlobalMemory m;
            const Outcome o = run(row_op(OpKind::layernorm, rows, cols, dtype), ReductionVariant::layernorm_vectorized,
                                  wave64_target(3, true), false, m);
            EXPECT_EQ(o.lowered.dims.block, 1024u);
            EXPECT_EQ(o.lowered.kernel->shared_bytes, 96);
            EXPECT_EQ(o.lowered.dims.grid, static_cast<std::uint32_t>(rows));
            EXPECT_TRUE(o.numerics.passed) << rows << "x" << cols << " " << to_string(dtype) << ": max rel err "
                                           << o.numerics.max_rel_err;
        }
    // Shuffles a row: 3 state words x 6 offsets x 32 halves = 576 (sm_80: 3 x 5 x 4 warps = 60).
    simt::GlobalMemory m64, m32;
    const Op op = row_op(OpKind::layernorm, 2, 768, DType::fp32);
    EXPECT_EQ(shuffles_issued(run(op, ReductionVariant::layernorm_vectorized, wave64_target(1, false), true, m64, true)), 2 * 576);
    EXPECT_EQ(shuffles_issued(run(op, ReductionVariant::layernorm_vectorized, small_target(1, false), true, m32, true)), 2 * 60);
}

TEST(TorchLayernormWave64, MomentsKernelReducesInWavesOfSixtyFour) {
    // RowwiseMomentsCUDAKernel<<<M, 512>>> in ROCm's build: 8 waves = 16 halves each shuffle the
    // 3 Welford words down 32 .. 1, then wave 0's 2 halves again on the 8 partials: 3 x 6 x (16 +
    // 2) = 324 a row (sm_80: 3 x 5 x (16 warps + 1) = 255). Then the whole op (the forward kernel
    // after it) against the double reference.
    simt::GlobalMemory m64, m32;
    const Op op = row_op(OpKind::layernorm, 2, 1030, DType::fp32);
    EXPECT_EQ(shuffles_issued(run(op, ReductionVariant::layernorm_moments, wave64_target(1, false), true, m64, true)), 2 * 324);
    EXPECT_EQ(shuffles_issued(run(op, ReductionVariant::layernorm_moments, small_target(1, false), true, m32, true)), 2 * 255);
    for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{3, 7}, {2, 1030}, {4, 5001}})
        for (const DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
            simt::GlobalMemory m;
            const LoweringTarget t = wave64_target(2, true);
            LoweredKernel k = lower_row_reduction(row_op(OpKind::layernorm, rows, cols, dtype), m, t,
                                                  ReductionVariant::layernorm_moments);
            ASSERT_EQ(k.then.size(), 1u);
            simt::launch(*k.kernel, k.dims, k.args, m, simt_params(t));
            simt::launch(*k.then[0].kernel, k.then[0].dims, k.then[0].args, m, simt_params(t));
            const LoweringNumerics n = k.check(m);
            EXPECT_TRUE(n.passed) << rows << "x" << cols << " " << to_string(dtype) << ": max rel err " << n.max_rel_err;
        }
}

// A timing-only run (payload skipped, buffers zero) takes exactly the cycles of a full run.
void expect_timing_only_equals_full_run(const Op& op, ReductionVariant variant) {
    simt::GlobalMemory full_memory, skip_memory;
    const Outcome full = run(op, variant, small_target(3, true), false, full_memory);
    const simt::Kernel& k = *full.lowered.kernel;
    ASSERT_TRUE(k.fp_payload_skippable) << k.fp_dependence;
    const Outcome skip = run(op, variant, small_target(3, false), true, skip_memory);
    EXPECT_TRUE(full.numerics.passed);
    EXPECT_EQ(skip.stats.cycles, full.stats.cycles);
    EXPECT_EQ(skip.stats.issued, full.stats.issued);
    EXPECT_EQ(skip.stats.global_sectors, full.stats.global_sectors);
    EXPECT_EQ(skip.stats.scoreboard_cycles, full.stats.scoreboard_cycles);
}

class TorchSoftmaxTiming : public ::testing::TestWithParam<std::tuple<ReductionVariant, DType>> {};

TEST_P(TorchSoftmaxTiming, SkipPayloadCyclesEqualFullRun) {
    const auto [variant, dtype] = GetParam();
    const std::int64_t cols = variant == ReductionVariant::softmax_warp_persistent ? 301
                              : variant == ReductionVariant::softmax_block_smem   ? 1304
                                                                                  : 1301;
    expect_timing_only_equals_full_run(row_op(OpKind::softmax, 37, cols, dtype), variant);
}

INSTANTIATE_TEST_SUITE_P(All, TorchSoftmaxTiming,
                         ::testing::Combine(::testing::Values(ReductionVariant::softmax_warp_persistent,
                                                              ReductionVariant::softmax_block_smem,
                                                              ReductionVariant::softmax_block_global),
                                            ::testing::Values(DType::fp32, DType::fp16, DType::bf16)));

TEST(TorchSoftmaxErrors, LayernormHasNoSoftmaxKernels) {
    simt::GlobalMemory m;
    EXPECT_THROW(lower_row_reduction(row_op(OpKind::layernorm, 2, 64, DType::fp32), m, small_target(1, false),
                                     ReductionVariant::softmax_block_smem),
                 std::invalid_argument);
    EXPECT_THROW(lower_row_reduction(row_op(OpKind::softmax, 2, 1030, DType::fp16), m, small_target(1, false),
                                     ReductionVariant::softmax_block_smem),
                 std::invalid_argument);
}

// ---- timing-only runs --------------------------------------------------------------------------

class RowReductionTiming : public ::testing::TestWithParam<std::tuple<OpKind, ReductionVariant, DType>> {};

TEST_P(RowReductionTiming, SkipPayloadCyclesEqualFullRun) {
    const auto [kind, variant, dtype] = GetParam();
    expect_timing_only_equals_full_run(row_op(kind, 37, variant == ReductionVariant::warp_per_row ? 301 : 1301, dtype),
                                       variant);
}

INSTANTIATE_TEST_SUITE_P(All, RowReductionTiming,
                         ::testing::Combine(::testing::Values(OpKind::softmax, OpKind::layernorm),
                                            ::testing::Values(ReductionVariant::warp_per_row,
                                                              ReductionVariant::block_per_row),
                                            ::testing::Values(DType::fp32, DType::fp16, DType::bf16)));

// ---- determinism -------------------------------------------------------------------------------

TEST(RowReductionData, SameSeedSameBytesOtherSeedOtherInputs) {
    const Op op = row_op(OpKind::layernorm, 5, 99, DType::fp16);
    simt::GlobalMemory a, b, c;
    const Outcome ra = run(op, ReductionVariant::warp_per_row, small_target(2, true, 11), false, a);
    const Outcome rb = run(op, ReductionVariant::warp_per_row, small_target(2, true, 11), false, b);
    run(op, ReductionVariant::warp_per_row, small_target(2, true, 12), false, c);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size()), 0);
    EXPECT_EQ(ra.stats.cycles, rb.stats.cycles);
    EXPECT_NE(std::memcmp(a.data() + ra.lowered.args[3], c.data() + ra.lowered.args[3], 5 * 50 * 4), 0);
}

TEST(RowReductionErrors, EmptyShapeIsALoweringError) {
    simt::GlobalMemory m;
    EXPECT_THROW(lower_softmax(row_op(OpKind::softmax, 0, 8, DType::fp32), m, small_target(1, false)), LoweringError);
    EXPECT_THROW(lower_layernorm(row_op(OpKind::layernorm, 8, 0, DType::fp32), m, small_target(1, false)), LoweringError);
}

}  // namespace
}  // namespace accelsim::gpu::reduction_test
