// The fp8 tensor-core GEMM of the GPU kernel library (fp8_e4m3 or fp8_e5m2 A and transposed B,
// fp32 C, one mma.m16n8k32 fp8 per 16 x 8 x 32) against Eigen's fp32 GEMM of the same fp8-rounded
// inputs: every tile shape, partial tiles in M, N and K, bmm, a long K; timing-only runs against
// full ones; and the same schedule as the int8 kernel at an equal rate.
#include <gtest/gtest.h>

#include "models/common/quantization.h"
#include "models/gpu/gemm.h"
#include "models/gpu/gpu_stats.h"
#include "models/simt/simt_gpu.h"
#include "models/simt/sm_spec.h"
#include "tests/gpu/a100_like.h"
#include "tests/gpu/gemm_op.h"
#include "tests/gpu/gemm_run.h"

namespace accelsim::gpu::gemm_fp8_test {
namespace {

using test::gemm_op;

// An h100-like SM (configs/h100.json rates: int8 and both fp8 formats 4096 MACs per SM per
// cycle) with sm_80's limits, as the other GEMM tests.
simt::SimtParams h100_like(int sms) {
    simt::SmSpec spec;
    spec.tensor_macs_per_cycle = {4096, 2048, 2048, 1024, 4096, 4096};
    simt::SimtParams p = test::a100_like(sms);
    const auto limits = p.sm.limits;
    p.sm = simt::sm_params_from(spec);
    p.sm.limits = limits;
    return p;
}

// The lowering target of those SMs: h100's tensor rates per SM, seed 7.
LoweringTarget h100_target(const simt::SimtParams& params, bool real) {
    LoweringTarget target;
    target.sms = params.sms;
    target.sm = params.sm;
    target.seed = 7;
    target.real_data = real;
    target.tensor_macs_per_sm_cycle = {4096, 2048, 2048, 1024, 4096, 4096};
    return target;
}

using Fp8Run = test::GemmRun;
using test::stat_of;

Fp8Run run(const Op& op, int sms, bool real, bool skip, const GemmTile* tile = nullptr) {
    const simt::SimtParams params = h100_like(sms);
    return test::run_single_launch_gemm(op, params, h100_target(params, real), skip, tile);
}

constexpr DType kFormats[] = {DType::fp8_e4m3, DType::fp8_e5m2};

TEST(Fp8Gemm, EveryTileMatchesEigenOnOddSizes) {
    // As the int8 test: 1 x 1 x 1, 17 x 33 x 45 (K' = 48 < one slice of 64), 130 x 70 x 200
    // (K' = 208: a partial first slice, then 3 full ones). The check bounds each element by the
    // fp32 accumulation of K products, K x 2^-24 x sum_k |a||b| (gemm.cpp's gemm_check).
    const std::int64_t shapes[][3] = {{1, 1, 1}, {17, 33, 45}, {130, 70, 200}};
    const simt::SmParams sm = h100_like(1).sm;
    int tiles = 0;
    for (const DType dtype : kFormats)
        for (GemmTile tile : gemm_tensor_tiles())
            for (int ahead : {1, 2}) {
                tile.slices_ahead = ahead;
                const simt::Kernel* k = gemm_tensor_kernel(tile, simt::MmaType::e4m3);
                if (simt::compute_occupancy(sm.limits, {tile.threads(), k->registers, k->shared_bytes}).blocks_per_sm == 0)
                    continue;
                ++tiles;
                for (const auto& s : shapes) {
                    const Op op = gemm_op(OpKind::matmul, 1, s[0], s[1], s[2], dtype);
                    const Fp8Run r = run(op, 2, true, false, &tile);
                    EXPECT_EQ(r.numerics.checked, s[0] * s[1]) << tile.name();
                    EXPECT_TRUE(r.numerics.passed)
                        << to_string(dtype) << " " << tile.name() << " ahead " << ahead << " " << s[0] << "x" << s[1] << "x" << s[2];
                    // One m16n8k32 per 16 x 8 x 32 of every block's padded tile.
                    const std::int64_t blocks = ((s[0] + tile.bm - 1) / tile.bm) * ((s[1] + tile.bn - 1) / tile.bn);
                    const std::int64_t slices = (gemm_int8_padded_k(s[2]) + 2 * tile.bk - 1) / (2 * tile.bk);
                    EXPECT_EQ(r.stats.mma_issued,
                              static_cast<std::uint64_t>(blocks * slices * tile.bm * tile.bn * 2 * tile.bk / 4096));
                }
            }
    EXPECT_GE(tiles, 10);  // every tile of the table fits in at least one variant, for both formats
}

TEST(Fp8Gemm, FnuzOperandsOnACdna3SmMatchEigenOnTheFnuzRoundedInputs) {
    // sm.fp8_encoding = fnuz (mi300x): the inputs are rounded to FNUZ and stored as FNUZ bytes, and
    // the mma reads them as FNUZ. Read as OCP bytes they would be twice their value (bias 7
    // against 8; e5m2: 15 against 16), so the check against Eigen on the FNUZ-rounded inputs fails
    // unless both sides use the same encoding.
    for (const DType dtype : kFormats) {
        simt::SimtParams params = h100_like(2);
        params.sm.fp8_encoding = Fp8Encoding::fnuz;
        const LoweringTarget target = h100_target(params, true);
        const Op op = gemm_op(OpKind::matmul, 1, 130, 70, 200, dtype);
        const Fp8Run fnuz = test::run_single_launch_gemm(op, params, target, false);
        EXPECT_EQ(fnuz.numerics.checked, 130 * 70);
        EXPECT_TRUE(fnuz.numerics.passed) << to_string(dtype) << " max abs err " << fnuz.numerics.max_abs_err;
        ASSERT_TRUE(fnuz.numerics.quantization.has_value());
        EXPECT_EQ(fnuz.numerics.quantization->encoding, Fp8Encoding::fnuz);  // the report names it
        EXPECT_EQ(quantization_scheme(dtype, Fp8Encoding::fnuz).rfind(std::string(to_string(dtype)) + " FNUZ (bias ", 0), 0u);
        // The same seeded values rounded to OCP: normals have the same 3 (2) mantissa bits in both
        // encodings (only values below OCP's smallest normal round differently), so the error
        // against fp32 is of the same size.
        const Fp8Run ocp = run(op, 2, true, false);
        ASSERT_TRUE(ocp.numerics.quantization.has_value());
        EXPECT_NEAR(fnuz.numerics.quantization->relative_rms(), ocp.numerics.quantization->relative_rms(),
                    0.2 * ocp.numerics.quantization->relative_rms());
        EXPECT_EQ(fnuz.stats.cycles, ocp.stats.cycles);  // the encoding changes values, not timing
    }
}

TEST(Fp8Gemm, BatchedLongKAndRuleChosenTilesMatchEigen) {
    // K = 1024 sums 1024 products in fp32, in another order than Eigen's; the check's bound grows
    // with K. (Products of fp8 values in [-1, 1) are multiples of 2^-18 in e4m3, so sums below 2^6
    // are exact in fp32: the kernel and Eigen often agree to the bit.)
    const std::int64_t shapes[][4] = {{3, 65, 40, 33}, {1, 64, 48, 1024}, {1, 300, 260, 96}};
    for (const DType dtype : kFormats)
        for (const auto& s : shapes) {
            const Op op = gemm_op(s[0] > 1 ? OpKind::bmm : OpKind::matmul, s[0], s[1], s[2], s[3], dtype);
            const Fp8Run r = run(op, 4, true, false);
            EXPECT_EQ(r.numerics.checked, s[0] * s[1] * s[2]);
            EXPECT_TRUE(r.numerics.passed) << to_string(dtype) << " " << s[0] << "x" << s[1] << "x" << s[2] << "x" << s[3];
            EXPECT_EQ(stat_of(r.lowering_stats, stat::tile_k), 64);  // fp8 values per K slice
            if (s[3] == 1024) {
                EXPECT_LT(r.numerics.max_rel_err, 1e-3);
            }
        }
}

TEST(Fp8Gemm, TimingOnlyRunGivesTheFullRunsCyclesAndTheInt8Schedule) {
    // fp8 data and fp32 accumulators are payload: skipping them must not change a cycle. At
    // h100's rates (int8 = fp8 = 4096 MACs per SM per cycle) the fp8 kernel is the int8 kernel
    // with another mma of the same interval: the same cycles, instruction for instruction.
    for (const GemmTile& tile : gemm_tensor_tiles()) {
        const Op op = gemm_op(OpKind::bmm, 2, 100, 90, 200, DType::fp8_e4m3);
        const Fp8Run full = run(op, 2, true, false, &tile);
        const Fp8Run timing = run(op, 2, false, true, &tile);
        ASSERT_TRUE(full.numerics.passed) << tile.name();
        EXPECT_EQ(timing.stats.cycles, full.stats.cycles) << tile.name();
        EXPECT_EQ(timing.stats.mma_issued, full.stats.mma_issued) << tile.name();
        const Fp8Run int8 = run(gemm_op(OpKind::bmm, 2, 100, 90, 200, DType::int8), 2, false, true, &tile);
        EXPECT_EQ(int8.stats.cycles, full.stats.cycles) << tile.name();
        EXPECT_EQ(int8.stats.issued, full.stats.issued) << tile.name();
    }
    EXPECT_TRUE(gemm_tensor_kernel(gemm_tensor_tiles().front(), simt::MmaType::e5m2)->fp_payload_skippable);
}

TEST(Fp8Gemm, KernelUsesTheFp8MmaAndStoresFp32Pairs) {
    const std::string src = gemm_tensor_source(gemm_tensor_tiles()[1], simt::MmaType::e5m2);
    EXPECT_NE(src.find(".kernel gemm_128x128x32_e5m2"), std::string::npos);
    EXPECT_NE(src.find("mma.m16n8k32.e5m2"), std::string::npos);
    EXPECT_EQ(src.find("mma.m16n8k32.s8"), std::string::npos);
    EXPECT_NE(src.find("st.global.v2"), std::string::npos);
    EXPECT_EQ(src.find("cvt."), std::string::npos);  // fp32 results are stored as they are
}

TEST(Fp8Gemm, AChipWithoutAnFp8RateHasNoFp8Kernel) {
    // a100's rates (LoweringTarget's defaults): no fp8. lower_op leaves no row to the kernel
    // library (the engine refuses the trace before, with the op's file and line).
    LoweringTarget target;
    target.sms = 2;
    target.sm = test::a100_like(2).sm;
    simt::GlobalMemory memory;
    const Op op = gemm_op(OpKind::matmul, 1, 64, 64, 64, DType::fp8_e4m3);
    EXPECT_FALSE(lower_op(op, memory, target).has_value());
    EXPECT_THROW(lower_gemm(op, memory, target), LoweringError);
}

// A in one fp8 format and B in the other: Transformer Engine's hybrid recipe (e5m2 gradients times
// e4m3 weights or activations), mma.m16n8k32 with .atype != .btype.
Op mixed_op(OpKind kind, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, DType a, DType b) {
    Op op = gemm_op(kind, batch, m, n, k, a);
    op.b_dtype = b;
    return op;
}

TEST(Fp8Gemm, MixedFormatsMatchEigenOnEachOperandsRounding) {
    // The check is Eigen's fp32 GEMM of A rounded to A's format and B to B's; a kernel reading B's
    // e5m2 bytes as e4m3 (or the reverse) would be off by factors up to 2^8 and fail it
    // (MmaFp8.MixedFormatsReadEachOperandInItsOwnFormat shows the mma itself).
    const std::int64_t shapes[][4] = {{1, 17, 33, 45}, {1, 130, 70, 200}, {3, 65, 40, 33}};
    for (const auto& [a, b] : {std::pair{DType::fp8_e4m3, DType::fp8_e5m2}, std::pair{DType::fp8_e5m2, DType::fp8_e4m3}})
        for (const auto& s : shapes) {
            const Op op = mixed_op(s[0] > 1 ? OpKind::bmm : OpKind::matmul, s[0], s[1], s[2], s[3], a, b);
            const Fp8Run r = run(op, 2, true, false);
            EXPECT_EQ(r.numerics.checked, s[0] * s[1] * s[2]);
            EXPECT_TRUE(r.numerics.passed) << to_string(a) << " x " << to_string(b) << " " << s[1] << "x" << s[2] << "x" << s[3];
            ASSERT_TRUE(r.numerics.quantization.has_value());
            ASSERT_TRUE(r.numerics.quantization->b_dtype.has_value());
            EXPECT_EQ(*r.numerics.quantization->b_dtype, b);
        }
}

TEST(Fp8Gemm, MixedFormatsErrorCombinesBothOperandsRounding) {
    // Against fp32, C = sum_k a_k b_k with a_k = a (1 + d_a), b_k = b (1 + d_b): the error is about
    // sum_k a b (d_a + d_b), and over independent uniform inputs its relative RMS is
    // sqrt(E[d_a^2] + E[d_b^2]) (weighted by a^2 b^2, the same for both formats' weighting). So
    // mixed^2 = (e4m3 x e4m3^2 + e5m2 x e5m2^2) / 2, each single-format error being sqrt(2 E[d^2]).
    // e4m3 keeps 3 mantissa bits, e5m2 2: e5m2's error is about twice e4m3's.
    const Op e4 = gemm_op(OpKind::matmul, 1, 128, 128, 256, DType::fp8_e4m3);
    const Op e5 = gemm_op(OpKind::matmul, 1, 128, 128, 256, DType::fp8_e5m2);
    const double r44 = run(e4, 2, true, false).numerics.quantization->relative_rms();
    const double r55 = run(e5, 2, true, false).numerics.quantization->relative_rms();
    EXPECT_NEAR(r55 / r44, 2.0, 0.2);
    for (const auto& [a, b] : {std::pair{DType::fp8_e4m3, DType::fp8_e5m2}, std::pair{DType::fp8_e5m2, DType::fp8_e4m3}}) {
        const Fp8Run r = run(mixed_op(OpKind::matmul, 1, 128, 128, 256, a, b), 2, true, false);
        ASSERT_TRUE(r.numerics.passed);
        EXPECT_NEAR(r.numerics.quantization->relative_rms(), std::sqrt((r44 * r44 + r55 * r55) / 2), 0.05 * r44)
            << to_string(a) << " x " << to_string(b) << ": e4m3 " << r44 << ", e5m2 " << r55;
    }
}

TEST(Fp8Gemm, MixedFormatsRunAtTheSlowerFormatsRate) {
    // At h100's rates (both formats 4096 MACs per SM per cycle) the mixed kernel is the e4m3 one
    // with another mma of the same interval: the same cycles. With e5m2 at half the rate (2048:
    // II 8 instead of 4) the mixed kernel runs every mma at e5m2's interval, so its cycles are
    // exactly the e5m2 kernel's, and slower than e4m3's.
    const GemmTile tile = gemm_tensor_tiles().front();
    auto cycles = [&](const Op& op, double e5m2_rate) {
        simt::SimtParams params = h100_like(2);
        simt::SmSpec spec;
        spec.tensor_macs_per_cycle = {4096, 2048, 2048, 1024, 4096, e5m2_rate};
        const simt::SmParams rates = simt::sm_params_from(spec);
        params.sm.tensor_e5m2 = rates.tensor_e5m2;
        LoweringTarget target = h100_target(params, false);
        target.tensor_macs_per_sm_cycle.fp8_e5m2 = e5m2_rate;
        return test::run_single_launch_gemm(op, params, target, true, &tile).stats.cycles;
    };
    const Op mixed = mixed_op(OpKind::matmul, 1, 200, 180, 256, DType::fp8_e4m3, DType::fp8_e5m2);
    const Op e4 = gemm_op(OpKind::matmul, 1, 200, 180, 256, DType::fp8_e4m3);
    const Op e5 = gemm_op(OpKind::matmul, 1, 200, 180, 256, DType::fp8_e5m2);
    EXPECT_EQ(cycles(mixed, 4096), cycles(e4, 4096));
    EXPECT_EQ(cycles(mixed, 2048), cycles(e5, 2048));
    EXPECT_GT(cycles(mixed, 2048), cycles(e4, 2048));
}

TEST(Fp8Gemm, SplitKSumsTheFp32PlanesWithinTheBound) {
    // As Int8Gemm.SplitKSumsTheIntegerPlanesExactly with fp8: each part's fp32 accumulators into its
    // plane, the sum launch adds the planes in fp32; the sum of K products is still within
    // K x 2^-24 x sum |a||b| of the exact one (K - 1 roundings in any order), both formats, and a
    // mixed pair.
    const GemmTile tile = gemm_tensor_tiles().back();
    const simt::SimtParams params = h100_like(2);
    const LoweringTarget target = h100_target(params, true);
    for (const auto& [a, b] : {std::pair{DType::fp8_e4m3, DType::fp8_e4m3}, std::pair{DType::fp8_e5m2, DType::fp8_e5m2},
                               std::pair{DType::fp8_e5m2, DType::fp8_e4m3}}) {
        Op op = gemm_op(OpKind::matmul, 1, 5, 72, 1024, a);
        if (b != a) op.b_dtype = b;
        for (const int splits : {2, 4, 8}) {
            const test::SplitGemmRun r = test::run_split_gemm(op, params, target, false, tile, splits);
            EXPECT_EQ(r.launches, 2);
            EXPECT_EQ(r.numerics.checked, 5 * 72);
            EXPECT_TRUE(r.numerics.passed) << to_string(a) << " x " << to_string(b) << " S " << splits;
            ASSERT_TRUE(r.numerics.quantization.has_value());
        }
    }
}

TEST(Fp8Gemm, SplitKRuleForEightBitOperands) {
    // choose_gemm_splits with 1-byte elements on a100's constants (GemmTileRule.SplitKHandWorked:
    // launch overhead 4,230, HBM 1,446.1 B/cycle, 64 B/cycle ports at 0.51) for a decode GEMM,
    // 1 x 768 x 3072 int8: 24 blocks of 32x32 (one tile row of 24 columns), a slice of 2 x 32 = 64
    // values, K' = 3072: 48 slices; A and B bytes 24 x 3072 x 64 x 1 = 4,718,592; a plane
    // 1 x 768 x 4 = 3,072 B (about 2.1 cycles of HBM per part).
    //   T(1) = max(48 x 234, 4,718,592 / (24 x 32.64)) = max(11,232, 6,023.5) = 11,232
    //   T(2) = max(24 x 234, 4,718,592 / (48 x 32.64) = 3,011.8) + 4,230 + 1,000 + 4.2 = 10,850.2
    //   T(3) = max(3,744, 2,007.8) + 5,236.4 = 8,980.4; T(4) = 2,808 + 5,238.5 = 8,046.5
    //   T(6) = max(1,872, 1,338.6 (144 blocks for 108 ports)) + 5,242.7 = 7,114.7
    //   T(8) = max(1,404, 4,718,592 / (108 x 32.64) = 1,338.6) + 5,247.0 = 6,651.0 (the smallest)
    // and the 8 parts keep the grid in one wave (192 blocks, 8 per SM x 108).
    const simt::SmParams sm = test::a100_like(108).sm;
    LoweringTarget target;
    target.sms = 108;
    target.sm = sm;
    target.launch_overhead_cycles = 4230;
    target.hbm_bytes_per_cycle = 2039e9 / 1.41e9;
    target.sm_port_bytes_per_cycle = 64;
    const GemmShape decode{1, 1, 768, 3072};
    const GemmTileChoice c = choose_gemm_tile(decode, 108, sm, simt::MmaType::s8);
    ASSERT_EQ(c.tile.bm, 32);
    ASSERT_EQ(c.blocks, 24);
    EXPECT_EQ(choose_gemm_splits(decode, c, 108, target, 1), 8);
    // K' = 3072 / (16 x 6) = 32: whole chunks; K = 200 (K' = 208 = 16 x 13) splits into no S of
    // the list (13 is prime): one part.
    const GemmShape odd{1, 1, 768, 200};
    EXPECT_EQ(choose_gemm_splits(odd, choose_gemm_tile(odd, 108, sm, simt::MmaType::s8), 108, target, 1), 1);
    target.launch_overhead_cycles = 0;  // no launch cost given: never split
    EXPECT_EQ(choose_gemm_splits(decode, c, 108, target, 1), 1);
}

}  // namespace
}  // namespace accelsim::gpu::gemm_fp8_test
