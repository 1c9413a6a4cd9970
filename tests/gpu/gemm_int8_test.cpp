// The int8 tensor-core GEMM of the GPU kernel library (int8 A and transposed B, int32 C, one
// mma.m16n8k32.s8 per 16 x 8 x 32) against Eigen's integer product, exactly: every tile shape,
// sizes that leave partial tiles in M, N and K, bmm; timing-only runs against full ones; and the
// per-dtype tensor-core choice (a dtype the chip's tensor cores do not run takes the FP32 path).
#include <gtest/gtest.h>

#include "models/gpu/gemm.h"
#include "models/gpu/gpu_stats.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/a100_like.h"
#include "tests/gpu/gemm_op.h"
#include "tests/gpu/gemm_run.h"

namespace accelsim::gpu::gemm_int8_test {
namespace {

using test::a100_like;
using test::gemm_op;

using Int8Run = test::GemmRun;
using test::stat_of;

Int8Run run(const Op& op, int sms, bool real, bool skip, const GemmTile* tile = nullptr) {
    const simt::SimtParams params = a100_like(sms);
    LoweringTarget target;
    target.sms = sms;
    target.sm = params.sm;
    target.seed = 5;
    target.real_data = real;
    return test::run_single_launch_gemm(op, params, target, skip, tile);
}

TEST(Int8Gemm, EveryTileMatchesEigenExactlyOnOddSizes) {
    // 1 x 1 x 1 (everything padding), 17 x 33 x 45 (partial tiles in M and N, K' = 48 < one slice
    // of 64), 130 x 70 x 200 (K' = 208: a partial first slice of 16, then 3 full ones).
    const std::int64_t shapes[][3] = {{1, 1, 1}, {17, 33, 45}, {130, 70, 200}};
    const simt::SmParams sm = a100_like(1).sm;
    int tiles = 0;
    for (GemmTile tile : gemm_tensor_tiles())
        for (int ahead : {1, 2}) {
            tile.slices_ahead = ahead;
            const simt::Kernel* k = gemm_tensor_kernel(tile, simt::MmaType::s8);
            if (simt::compute_occupancy(sm.limits, {tile.threads(), k->registers, k->shared_bytes}).blocks_per_sm == 0)
                continue;
            ++tiles;
            for (const auto& s : shapes) {
                const Op op = gemm_op(OpKind::matmul, 1, s[0], s[1], s[2], DType::int8);
                const Int8Run r = run(op, 2, true, false, &tile);
                EXPECT_EQ(r.numerics.checked, s[0] * s[1]) << tile.name();
                EXPECT_TRUE(r.numerics.passed) << tile.name() << " ahead " << ahead << " " << s[0] << "x" << s[1] << "x" << s[2];
                EXPECT_EQ(r.numerics.max_abs_err, 0.0);
                // One m16n8k32 per 16 x 8 x 32 of every block's padded tile: blocks x BM BN (2 BK) / 4096 per slice.
                const std::int64_t blocks = ((s[0] + tile.bm - 1) / tile.bm) * ((s[1] + tile.bn - 1) / tile.bn);
                const std::int64_t slices = (gemm_int8_padded_k(s[2]) + 2 * tile.bk - 1) / (2 * tile.bk);
                EXPECT_EQ(r.stats.mma_issued, static_cast<std::uint64_t>(blocks * slices * tile.bm * tile.bn * 2 * tile.bk / 4096));
            }
        }
    EXPECT_GE(tiles, 5);  // every tile of the table fits in at least one variant
}

TEST(Int8Gemm, BatchedAndRuleChosenTilesMatchEigenExactly) {
    // bmm with a K' of 48 (K = 33), a large-K matmul (int32 sums up to 1024 x 16384) and a shape
    // the tile rule gives the 256x128 or 128x128 tile.
    const std::int64_t shapes[][4] = {{3, 65, 40, 33}, {1, 64, 48, 1024}, {1, 300, 260, 96}};
    for (const auto& s : shapes) {
        const Op op = gemm_op(s[0] > 1 ? OpKind::bmm : OpKind::matmul, s[0], s[1], s[2], s[3], DType::int8);
        const Int8Run r = run(op, 4, true, false);
        EXPECT_EQ(r.numerics.checked, s[0] * s[1] * s[2]);
        EXPECT_TRUE(r.numerics.passed) << s[0] << "x" << s[1] << "x" << s[2] << "x" << s[3];
        EXPECT_EQ(stat_of(r.lowering_stats, stat::tile_k), 64);  // int8 values per K slice
        EXPECT_EQ(stat_of(r.lowering_stats, stat::splits), 1);
        if (s[1] == 300) {
            EXPECT_GE(stat_of(r.lowering_stats, stat::tile_m), 128);
        }
    }
}

TEST(Int8Gemm, TimingOnlyRunGivesTheFullRunsCycles) {
    // The int32 accumulators and the int8 data are payload: skipping them (zeros, no mma
    // arithmetic) must not change a cycle.
    for (const GemmTile& tile : gemm_tensor_tiles()) {
        const Op op = gemm_op(OpKind::bmm, 2, 100, 90, 200, DType::int8);
        const Int8Run full = run(op, 2, true, false, &tile);
        const Int8Run timing = run(op, 2, false, true, &tile);
        ASSERT_TRUE(full.numerics.passed) << tile.name();
        EXPECT_EQ(timing.stats.cycles, full.stats.cycles) << tile.name();
        EXPECT_EQ(timing.stats.issued, full.stats.issued) << tile.name();
        EXPECT_EQ(timing.stats.mma_issued, full.stats.mma_issued) << tile.name();
    }
    EXPECT_TRUE(gemm_tensor_kernel(gemm_tensor_tiles().front(), simt::MmaType::s8)->fp_payload_skippable);
}

TEST(Int8Gemm, SharedMemoryAccessesAreConflictFree) {
    // 130 x 70 x 400 int8 on the 128x128 tile: 2 blocks of 8 warps; K' = 400 -> 7 slices of 64.
    // Per warp per slice, as for fp16: (4 A fragments x 4 + 4 B^T fragments x 2) x 2 k-steps = 48
    // scalar ld.shared -> 2 x 8 x 7 x 48 = 5376 requests of 1 wavefront; st.shared.v4: 2 A chunks
    // + 2 B^T chunks (128 rows x 4 chunks / 256 threads each) = 4 -> 448 requests of 4 wavefronts
    // (8-lane phases). Conflict-free: 5376 + 4 x 448 = 7168 wavefronts. mma.m16n8k32: (4 x 4) x 2
    // per warp per slice: 2 x 8 x 7 x 32 = 3584.
    GemmTile tile = gemm_tensor_tiles()[1];
    ASSERT_EQ(tile.name(), "128x128x32");
    const Int8Run r = run(gemm_op(OpKind::matmul, 1, 130, 70, 400, DType::int8), 4, false, true, &tile);
    EXPECT_EQ(r.stats.shared_requests, 5376u + 448u);
    EXPECT_EQ(r.stats.shared_wavefronts, 7168u);
    EXPECT_EQ(r.stats.mma_issued, 3584u);
}

TEST(Int8Gemm, KernelUsesTheInt8MmaAndStoresInt32Pairs) {
    const std::string src = gemm_tensor_source(gemm_tensor_tiles()[1], simt::MmaType::s8);
    EXPECT_NE(src.find(".kernel gemm_128x128x32_s8"), std::string::npos);
    EXPECT_NE(src.find("mma.m16n8k32.s8"), std::string::npos);
    EXPECT_EQ(src.find("mma.m16n8k16"), std::string::npos);
    EXPECT_EQ(src.find("prmt"), std::string::npos);  // B^T is staged like A, no interleaving
    EXPECT_NE(src.find("st.global.v2"), std::string::npos);
    EXPECT_EQ(src.find("cvt."), std::string::npos);  // int32 results are stored as they are
}

LoweringTarget v100_like_target() {
    // v100's tensor rates (configs/v100.json): fp16 only.
    LoweringTarget target;
    target.sms = 2;
    target.sm = a100_like(2).sm;
    target.seed = 3;
    target.real_data = true;
    target.tensor_macs_per_sm_cycle = {};
    target.tensor_macs_per_sm_cycle.fp16 = 512;
    return target;
}

TEST(TensorFallback, ADtypeWithoutATensorRateRunsTheFp32Kernel) {
    // On a chip whose tensor cores run fp16 but not bf16 (v100), a bf16 GEMM runs the FP32 FFMA
    // kernel and says so; an fp16 GEMM keeps the mma kernel; int8 has no kernel (lower_op leaves
    // a roofline row).
    const LoweringTarget target = v100_like_target();
    const simt::SimtParams params = a100_like(2);
    for (DType dtype : {DType::bf16, DType::fp16}) {
        const Op op = gemm_op(OpKind::matmul, 1, 65, 40, 33, dtype);
        simt::GlobalMemory memory;
        const LoweredKernel lk = lower_gemm(op, memory, target);
        simt::FixedLatencyMemory port(200);
        const simt::KernelStats st = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {false});
        const LoweringNumerics n = lk.check(memory);
        EXPECT_TRUE(n.passed) << to_string(dtype);
        EXPECT_EQ(n.checked, 65 * 40);
        const bool fallback = stat_of(lk.stats, stat::fp32_fallback) == 1;
        if (dtype == DType::bf16) {
            EXPECT_EQ(lk.kernel, gemm_fp32_kernel());
            EXPECT_TRUE(fallback);
            EXPECT_EQ(st.mma_issued, 0u);
        } else {
            EXPECT_NE(lk.kernel, gemm_fp32_kernel());
            EXPECT_FALSE(fallback);
            EXPECT_GT(st.mma_issued, 0u);
        }
    }
    simt::GlobalMemory memory;
    EXPECT_FALSE(lower_op(gemm_op(OpKind::matmul, 1, 64, 64, 64, DType::int8), memory, target).has_value());
    EXPECT_THROW(lower_gemm_epilogue(gemm_op(OpKind::matmul, 1, 64, 64, 64, DType::bf16), {{EpilogueStep::relu}},
                                     memory, target),
                 LoweringError);
}

TEST(Int8Gemm, SplitKSumsTheIntegerPlanesExactly) {
    // A decode-like GEMM, 5 x 72 x 1024 (K' = 1024), in S = 2, 4 and 8 parts of 512, 256 and 128
    // int8 values (16-byte chunks each): the GEMM launch writes S int32 planes, the sum launch adds
    // them with integer adds into C, and C equals Eigen's integer product exactly. The GEMM
    // launch's mmas are the unsplit kernel's (the same 5 x 72 x 1024 MACs: one 32x32 tile row and
    // 3 tile columns, 1024 / 32 k steps, (32/16)(32/8) mmas each = 96 x 8 = 768 per tile column).
    const GemmTile tile = gemm_tensor_tiles().back();  // the smallest, 32x32
    ASSERT_EQ(tile.bm, 32);
    const simt::SimtParams params = a100_like(2);
    LoweringTarget target;
    target.sms = 2;
    target.sm = params.sm;
    target.seed = 5;
    target.real_data = true;
    const Op op = gemm_op(OpKind::matmul, 1, 5, 72, 1024, DType::int8);
    const test::SplitGemmRun one = test::run_split_gemm(op, params, target, false, tile, 1);
    EXPECT_EQ(one.launches, 1);
    EXPECT_EQ(one.stats.mma_issued, 3u * 32u * 8u);
    for (const int splits : {2, 4, 8}) {
        const test::SplitGemmRun r = test::run_split_gemm(op, params, target, false, tile, splits);
        EXPECT_EQ(r.launches, 2);
        EXPECT_EQ(r.numerics.checked, 5 * 72);
        EXPECT_TRUE(r.numerics.passed) << splits;
        EXPECT_EQ(r.numerics.max_abs_err, 0.0) << splits;
        EXPECT_EQ(r.stats.mma_issued, one.stats.mma_issued) << splits;
        EXPECT_EQ(stat_of(r.lowering_stats, stat::splits), splits);
        EXPECT_GT(r.then_cycles, 0u);
        // Timing only: the same cycles for both launches.
        const test::SplitGemmRun timing = test::run_split_gemm(op, params, target, true, tile, splits);
        EXPECT_EQ(timing.stats.cycles, r.stats.cycles) << splits;
        EXPECT_EQ(timing.then_cycles, r.then_cycles) << splits;
    }
    // K' must split into whole 16-byte chunks: 1024 / (16 x 3) is not whole.
    simt::GlobalMemory memory;
    EXPECT_THROW(lower_gemm_with_tile(op, memory, target, tile, 3), LoweringError);
}

}  // namespace
}  // namespace accelsim::gpu::gemm_int8_test
