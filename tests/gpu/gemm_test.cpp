// Tensor-core and FP32 GEMM kernels of the GPU kernel library against Eigen (every tile shape, odd
// sizes, fp16 and bf16, bmm), the tile rule on hand-worked cases, tensor-core utilization against a
// hand-derived ceiling, and timing-only runs against full ones.
#include <gtest/gtest.h>

#include <cstdio>

#include "models/gpu/gemm.h"
#include "models/gpu/gpu_stats.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/a100_like.h"
#include "tests/gpu/gemm_op.h"

namespace accelsim::gpu::gemm_test {
namespace {

using test::a100_like;
using test::gemm_op;

GemmTile tile_named(const std::string& name) {
    for (const GemmTile& t : gemm_tensor_tiles())
        if (t.name() == name) return t;
    ADD_FAILURE() << "no tile " << name;
    return {};
}

// Every tile of the table in both variants (one and two K slices ahead) whose kernel fits an SM.
std::vector<GemmTile> every_variant() {
    std::vector<GemmTile> out;
    const simt::SmParams sm = a100_like(1).sm;
    for (GemmTile t : gemm_tensor_tiles())
        for (int ahead : {1, 2}) {
            t.slices_ahead = ahead;
            const simt::Kernel* k = gemm_tensor_kernel(t, simt::MmaType::f16);
            if (simt::compute_occupancy(sm.limits, {t.threads(), k->registers, k->shared_bytes}).blocks_per_sm > 0)
                out.push_back(t);
        }
    return out;
}

std::string variant_name(const GemmTile& t) { return t.name() + (t.slices_ahead == 2 ? " two ahead" : ""); }

struct GemmRun {
    simt::KernelStats stats;  // the first launch
    int launches = 0;
    std::uint64_t then_cycles = 0;
    LoweringNumerics numerics;
};

GemmRun run(const Op& op, int sms, bool real, const GemmTile* tile = nullptr, bool skip = false,
            simt::GlobalMemoryPort* memory_port = nullptr, int splits = 1) {
    const simt::SimtParams params = a100_like(sms);
    LoweringTarget target;
    target.sms = sms;
    target.sm = params.sm;
    target.seed = 7;
    target.real_data = real;
    simt::GlobalMemory memory;
    const LoweredKernel lk = tile ? lower_gemm_with_tile(op, memory, target, *tile, splits) : lower_gemm(op, memory, target);
    simt::FixedLatencyMemory port(200);
    GemmRun r;
    r.stats = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, memory_port ? memory_port : &port, {skip});
    r.launches = 1 + static_cast<int>(lk.then.size());
    for (const LoweredLaunch& next : lk.then) {
        simt::FixedLatencyMemory next_port(200);
        r.then_cycles += simt::launch(*next.kernel, next.dims, next.args, memory, params, &next_port, {skip}).cycles;
    }
    if (lk.check) r.numerics = lk.check(memory);
    return r;
}

TEST(GemmKernels, EveryTileMatchesEigenOnOddSizes) {
    const std::int64_t shapes[][3] = {{1, 1, 1}, {17, 33, 45}, {130, 70, 200}};
    const std::vector<GemmTile> variants = every_variant();
    EXPECT_EQ(variants.size(), 9u);  // all but 256x128 two ahead (129 registers x 512 threads)
    for (const GemmTile& tile : variants) {
        const simt::Kernel* k = gemm_tensor_kernel(tile, simt::MmaType::f16);
        EXPECT_TRUE(k->fp_payload_skippable) << variant_name(tile) << ": " << k->fp_dependence;
        if (tile.slices_ahead == 1) {
            EXPECT_LE(k->registers, 128) << tile.name();
        }
        for (const auto& s : shapes)
            for (DType dt : {DType::fp16, DType::bf16}) {
                const GemmRun r = run(gemm_op(OpKind::matmul, 1, s[0], s[1], s[2], dt), 4, true, &tile);
                EXPECT_EQ(r.numerics.checked, s[0] * s[1]);
                EXPECT_TRUE(r.numerics.passed) << variant_name(tile) << " " << s[0] << "x" << s[1] << "x" << s[2]
                                               << " " << to_string(dt) << " max abs err " << r.numerics.max_abs_err;
            }
    }
}

TEST(GemmKernels, RandomShapesMatchEigen) {
    // Seeded random shapes (any tile the rule picks on 3 SMs), both 16-bit types and fp32.
    std::uint64_t state = 12345;
    auto next = [&](int lo, int hi) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return lo + static_cast<int>((state >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
    };
    for (int trial = 0; trial < 8; ++trial) {
        const int b = next(1, 3), m = next(1, 150), n = next(1, 150), k = next(1, 150);
        const DType dt = trial % 3 == 0 ? DType::bf16 : trial % 3 == 1 ? DType::fp16 : DType::fp32;
        const GemmRun r = run(gemm_op(b > 1 ? OpKind::bmm : OpKind::matmul, b, m, n, k, dt), 3, true);
        EXPECT_EQ(r.numerics.checked, static_cast<std::int64_t>(b) * m * n);
        EXPECT_TRUE(r.numerics.passed) << b << "x" << m << "x" << n << "x" << k << " " << to_string(dt);
    }
}

TEST(GemmKernels, CheckFailsWithoutTheKernel) {
    // The reference check is not vacuous: C left as zeros (no launch) fails it.
    for (DType dt : {DType::fp16, DType::fp32}) {
        simt::GlobalMemory memory;
        LoweringTarget target;
        target.sms = 1;
        target.sm = a100_like(1).sm;
        target.real_data = true;
        const LoweredKernel lk = lower_gemm(gemm_op(OpKind::matmul, 1, 17, 33, 45, dt), memory, target);
        ASSERT_TRUE(lk.check);
        const LoweringNumerics n = lk.check(memory);
        EXPECT_FALSE(n.passed);
        EXPECT_EQ(n.checked, 17 * 33);
    }
}

TEST(GemmKernels, BmmPutsTheBatchInTheGrid) {
    // b=3, 65 x 40 x 33: with the 64x64 tile, tiles = 3 x 2 x 1 = 6 blocks.
    for (DType dt : {DType::fp16, DType::bf16}) {
        const GemmTile tile = tile_named("64x64x32");
        simt::GlobalMemory memory;
        LoweringTarget target;
        target.sms = 4;
        target.sm = a100_like(4).sm;
        target.real_data = true;
        const LoweredKernel lk = lower_gemm_with_tile(gemm_op(OpKind::bmm, 3, 65, 40, 33, dt), memory, target, tile);
        EXPECT_EQ(lk.dims.grid, 6u);
        const GemmRun r = run(gemm_op(OpKind::bmm, 3, 65, 40, 33, dt), 4, true, &tile);
        EXPECT_EQ(r.numerics.checked, 3 * 65 * 40);
        EXPECT_TRUE(r.numerics.passed) << to_string(dt) << " " << r.numerics.max_abs_err;
        const GemmRun chosen = run(gemm_op(OpKind::bmm, 3, 65, 40, 33, dt), 4, true);
        EXPECT_TRUE(chosen.numerics.passed);
    }
}

TEST(GemmKernels, Fp32SimtKernelMatchesEigen) {
    const std::int64_t shapes[][4] = {{1, 1, 1, 1}, {1, 17, 33, 45}, {2, 70, 65, 19}};
    for (const auto& s : shapes) {
        const Op op = gemm_op(s[0] > 1 ? OpKind::bmm : OpKind::matmul, s[0], s[1], s[2], s[3], DType::fp32);
        const GemmRun r = run(op, 4, true);
        EXPECT_EQ(r.numerics.checked, s[0] * s[1] * s[2]);
        EXPECT_TRUE(r.numerics.passed) << s[1] << "x" << s[2] << "x" << s[3] << " " << r.numerics.max_abs_err;
        EXPECT_EQ(r.stats.mma_issued, 0u);
    }
    EXPECT_TRUE(gemm_fp32_kernel()->fp_payload_skippable) << gemm_fp32_kernel()->fp_dependence;
}

TEST(GemmKernels, ChipsWithoutTensorCoresRunSixteenBitGemmsAsFp32) {
    // K80 (sm_37, no tensor cores): fp16 and bf16 matmul and bmm run the FFMA kernel on fp32 copies
    // (fp32 math, fp32 storage), checked element by element against Eigen's fp32 GEMM of the same
    // inputs; no mma is issued and the stat says so.
    simt::SimtParams params;
    params.sms = 2;
    params.sm.limits = *simt::published_limits("sm_37");
    LoweringTarget target;
    target.sms = 2;
    target.sm = params.sm;
    target.seed = 11;
    target.real_data = true;
    target.tensor_macs_per_sm_cycle = {};  // no tensor cores
    const std::int64_t shapes[][4] = {{1, 17, 33, 45}, {3, 65, 40, 33}};
    for (DType dtype : {DType::fp16, DType::bf16})
        for (const auto& s : shapes) {
            const Op op = gemm_op(s[0] > 1 ? OpKind::bmm : OpKind::matmul, s[0], s[1], s[2], s[3], dtype);
            simt::GlobalMemory memory;
            const LoweredKernel lk = lower_gemm(op, memory, target);
            EXPECT_EQ(lk.kernel, gemm_fp32_kernel());
            simt::FixedLatencyMemory port(200);
            const simt::KernelStats st = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {false});
            const LoweringNumerics n = lk.check(memory);
            EXPECT_EQ(n.checked, s[0] * s[1] * s[2]);
            EXPECT_TRUE(n.passed) << s[1] << "x" << s[2] << "x" << s[3] << " " << n.max_abs_err;
            EXPECT_EQ(st.mma_issued, 0u);
            bool flagged = false;
            for (const StatValue& v : lk.stats) flagged |= v.def == &stat::fp32_fallback && v.value == 1;
            EXPECT_TRUE(flagged);
        }
}

TEST(GemmKernels, SharedMemoryAccessesAreConflictFree) {
    // 130 x 70 x 200 on the 128x128 tile: 2 blocks of 8 warps; K' = 200 -> 7 slices of 32.
    // Fragment loads per warp per slice: (4 A fragments x 4 + 4 B fragments x 2) x 2 k-steps = 48
    // scalar ld.shared -> 2 x 8 x 7 x 48 = 5376 requests of 1 wavefront. st.shared.v4 per warp per
    // slice: 2 A chunks + 2 B units = 4 -> 2 x 8 x 7 x 4 = 448 requests of 4 wavefronts (8-lane
    // phases). Conflict-free: 5376 + 4 x 448 = 7168 wavefronts.
    const GemmTile tile = tile_named("128x128x32");
    const GemmRun r = run(gemm_op(OpKind::matmul, 1, 130, 70, 200, DType::fp16), 4, false, &tile, true);
    EXPECT_EQ(r.stats.shared_requests, 5376u + 448u);
    EXPECT_EQ(r.stats.shared_wavefronts, 7168u);
    // mma: every warp issues (4 x 4) x 2 per slice whatever the edges: 2 x 8 x 7 x 32 = 3584.
    EXPECT_EQ(r.stats.mma_issued, 3584u);
}

TEST(GemmKernels, TwoSlicesAheadHideTwiceTheLatency) {
    // One 32x32 block, K = 3072 (96 slices), one SM, memory answering every sector 400 cycles
    // later (non-blocking: answers arrive while warps wait at barriers). One slice ahead, a slice's
    // loads are issued at the top of its iteration and stored at the bottom, so every iteration
    // lasts at least 400 cycles: >= 96 x 400 = 38,400. Two ahead, each load has two iterations:
    // about half. Both must match Eigen, and so must four such blocks sharing the SM (the barrier
    // case: loads in flight across bar.sync).
    GemmTile one = tile_named("32x32x32"), two = one;
    one.slices_ahead = 1;
    two.slices_ahead = 2;
    const Op op = gemm_op(OpKind::matmul, 1, 32, 32, 3072, DType::fp16);
    simt::FixedLatencyMemory port1(400, true), port2(400, true);
    const GemmRun r1 = run(op, 1, true, &one, false, &port1);
    const GemmRun r2 = run(op, 1, true, &two, false, &port2);
    EXPECT_TRUE(r1.numerics.passed);
    EXPECT_TRUE(r2.numerics.passed);
    EXPECT_GE(r1.stats.cycles, 96u * 400u);
    EXPECT_LT(r2.stats.cycles, r1.stats.cycles * 6 / 10);
    EXPECT_GE(r2.stats.cycles, 96u * 400u / 2);
    simt::FixedLatencyMemory port4(400, true);
    const GemmRun four = run(gemm_op(OpKind::matmul, 1, 64, 64, 512, DType::fp16), 1, true, &two, false, &port4);
    EXPECT_EQ(four.stats.blocks, 4u);
    EXPECT_TRUE(four.numerics.passed) << "max abs err " << four.numerics.max_abs_err;
}

TEST(GemmKernels, SplitKMatchesEigen) {
    // K' = 960 splits into 2, 3, 4, 6, 8 parts of 480 .. 120 (120 = 3 full slices + a first slice
    // of 24); 17 x 33 x 208 into 2 parts of 104 (a first slice of 8 in each part). The partial
    // planes are fp32 and the sum rounds once, so the bound is the one-part kernel's.
    struct Case {
        std::int64_t m, n, k;
        int splits;
        const char* tile;
    };
    const Case cases[] = {{40, 72, 960, 2, "32x32x32"}, {40, 72, 960, 3, "32x32x32"}, {40, 72, 960, 4, "64x64x32"},
                          {40, 72, 960, 6, "32x32x32"}, {40, 72, 960, 8, "128x64x32"}, {17, 33, 208, 2, "32x32x32"}};
    for (const Case& c : cases)
        for (DType dt : {DType::fp16, DType::bf16}) {
            const GemmTile tile = tile_named(c.tile);
            const GemmRun r = run(gemm_op(OpKind::matmul, 1, c.m, c.n, c.k, dt), 2, true, &tile, false, nullptr, c.splits);
            const std::int64_t tiles = (c.m + tile.bm - 1) / tile.bm * ((c.n + tile.bn - 1) / tile.bn);
            EXPECT_EQ(r.stats.blocks, static_cast<std::uint64_t>(c.splits * tiles));
            EXPECT_EQ(r.launches, 2);
            EXPECT_EQ(r.numerics.checked, c.m * c.n);
            EXPECT_TRUE(r.numerics.passed) << c.m << "x" << c.n << "x" << c.k << " in " << c.splits << " parts, "
                                           << to_string(dt) << ": max abs err " << r.numerics.max_abs_err;
        }
    for (const int parts : {2, 3, 4, 6, 8}) {  // timing-only runs may skip the fp payload
        const simt::Kernel* sum = splitk_sum_kernel(parts, simt::MmaType::bf16);
        EXPECT_TRUE(sum->fp_payload_skippable) << sum->fp_dependence;
    }
    for (const GemmTile& tile : every_variant()) {
        const simt::Kernel* k = gemm_tensor_partials_kernel(tile, simt::MmaType::f16);
        EXPECT_TRUE(k->fp_payload_skippable) << variant_name(tile) << ": " << k->fp_dependence;
    }
    simt::GlobalMemory memory;
    LoweringTarget target;
    target.sm = a100_like(1).sm;
    EXPECT_THROW(lower_gemm_with_tile(gemm_op(OpKind::matmul, 1, 40, 72, 1000, DType::fp16), memory, target,
                                      tile_named("32x32x32"), 16),
                 LoweringError);  // 1000 is not a multiple of 8 x 16
    EXPECT_THROW(lower_gemm_with_tile(gemm_op(OpKind::bmm, 2, 40, 72, 960, DType::fp16), memory, target,
                                      tile_named("32x32x32"), 2),
                 LoweringError);  // batch 1 only
}

TEST(GemmTileRule, SplitKHandWorked) {
    // a100: 108 SMs, launch overhead 4,230 cycles, HBM 2039 GB/s / 1.41 GHz = 1,446.1 B/cycle,
    // 64 B/cycle SM ports. BERT's fc2, 128 x 768 x 3072: 96 blocks of 32x32 (two ahead, 8 per SM),
    // 96 slices; A and B bytes 96 x 3072 x 64 x 2 = 37,748,736; a plane 128 x 768 x 4 = 393,216 B.
    //   T(1) = max(96 x 234, 37,748,736 / (96 x 64 x 0.51)) = max(22,464, 12,047) = 22,464
    //   T(2) = max(48 x 234, 37,748,736 / (108 x 32.64)) + 4,230 + 1,000 + 2 x 271.9 = 17,005.8
    //   T(3) = max(7,488, 10,708.6) + 4,230 + 1,000 + 815.7 = 16,754.2 (the smallest)
    //   T(4) = 10,708.6 + 5,230 + 1,087.6 = 17,026.2; T(6) = 17,570.0; T(8) = 18,113.8
    const simt::SmParams sm = a100_like(108).sm;
    LoweringTarget target;
    target.sms = 108;
    target.sm = sm;
    target.launch_overhead_cycles = 4230;
    target.hbm_bytes_per_cycle = 2039e9 / 1.41e9;
    target.sm_port_bytes_per_cycle = 64;
    auto splits = [&](std::int64_t b, std::int64_t m, std::int64_t n, std::int64_t k) {
        const GemmTileChoice c = choose_gemm_tile({b, m, n, k}, 108, sm);
        return choose_gemm_splits({b, m, n, k}, c, 108, target);
    };
    EXPECT_EQ(splits(1, 128, 768, 3072), 3);
    // attn.proj, 128 x 768 x 768: T(1) = 24 x 234 = 5,616; T(2) = 12 x 234 = 2,808 against a
    // floor of 9,437,184 / (108 x 32.64) = 2,677, + 5,773.8 = 8,581.8: one part.
    EXPECT_EQ(splits(1, 128, 768, 768), 1);
    EXPECT_EQ(splits(1, 8192, 8192, 8192), 1);  // 2048 blocks: no idle SM to give the parts
    EXPECT_EQ(splits(2, 128, 768, 3072), 1);    // batch 1 only
    target.launch_overhead_cycles = 0;          // no launch cost given: never split
    EXPECT_EQ(splits(1, 128, 768, 3072), 1);
}

TEST(GemmKernels, TimingOnlyRunsGiveTheCyclesOfFullRuns) {
    for (const GemmTile& tile : every_variant()) {
        const Op op = gemm_op(OpKind::bmm, 2, 130, 70, 200, DType::bf16);
        const GemmRun full = run(op, 2, true, &tile, false);
        const GemmRun skipped = run(op, 2, false, &tile, true);
        EXPECT_TRUE(full.numerics.passed);
        EXPECT_EQ(full.stats.cycles, skipped.stats.cycles) << tile.name();
        EXPECT_EQ(full.stats.issued, skipped.stats.issued) << tile.name();
        EXPECT_EQ(full.stats.global_sectors, skipped.stats.global_sectors) << tile.name();
        EXPECT_EQ(full.stats.mma_issued, skipped.stats.mma_issued) << tile.name();
    }
}

TEST(GemmKernels, TensorCoreUtilizationOnOneSm) {
    // 256 x 256 x 2048 fp16 on one A100-like SM, 128x128 tile (2 blocks resident of 8 warps,
    // 2 warps per sub-partition each). mma count: (256/16) x (256/8) x (2048/16) = 65536. Ceiling:
    // each of the 4 sub-partitions gets a quarter of them and its tensor pipe takes one per 8
    // cycles -> >= 131072 cycles, plus the first slice's loads (200-cycle memory) before the first
    // mma, the last mma's 32-cycle latency and the final stores' 200 cycles: >= 131504 cycles,
    // utilization <= 65536 x 2048 / (131504 x 1024) = 99.7%. The kernel must reach 80% of peak.
    const GemmTile tile = tile_named("128x128x32");
    const GemmRun r = run(gemm_op(OpKind::matmul, 1, 256, 256, 2048, DType::fp16), 1, false, &tile, true);
    EXPECT_EQ(r.stats.mma_issued, 65536u);
    EXPECT_GE(r.stats.cycles, 131504u);
    const double utilization = 65536.0 * 2048.0 / (static_cast<double>(r.stats.cycles) * 1024.0);
    EXPECT_GT(utilization, 0.80) << r.stats.cycles;
    EXPECT_LT(utilization, 0.997);
}

TEST(GemmTileRule, HandWorkedChoices) {
    // estimate = ceil(blocks / 108) x BM x BN / efficiency, smallest wins. Per-block costs
    // BM x BN / efficiency: 256x128 41,478; 128x128 20,951; 128x64 10,695; 64x64 6,380; 32x32 2,354.
    const simt::SmParams sm = a100_like(108).sm;
    auto name = [&](std::int64_t b, std::int64_t m, std::int64_t n, std::int64_t k) {
        return choose_gemm_tile({b, m, n, k}, 108, sm).tile.name();
    };
    auto ahead = [&](std::int64_t b, std::int64_t m, std::int64_t n, std::int64_t k) {
        return choose_gemm_tile({b, m, n, k}, 108, sm).tile.slices_ahead;
    };
    // 8192^3: 2048, 4096, 8192, 16384, 65536 blocks -> 19, 38, 76, 152, 607 per SM ->
    // 788,081, 796,138, 812,820, 969,760, 1,428,878. 2048 blocks fill 19 waves: one slice ahead.
    EXPECT_EQ(name(1, 8192, 8192, 8192), "256x128x32");
    EXPECT_EQ(ahead(1, 8192, 8192, 8192), 1);
    // 4096^3: 512, 1024, 2048, 4096, 16384 blocks -> 5, 10, 19, 38, 152 -> 207,390, 209,510,
    // 203,205, 242,440, 357,808 (18.96 blocks per SM round up less than 4.74). 128x64 is two
    // ahead in the table.
    EXPECT_EQ(name(1, 4096, 4096, 4096), "128x64x32");
    EXPECT_EQ(ahead(1, 4096, 4096, 4096), 2);
    // 8192 x 64 x 64: 32, 64, 64, 128, 512 blocks -> 1, 1, 1, 2, 5 per SM -> 41,478, 20,951,
    // 10,695, 12,760, 11,770.
    EXPECT_EQ(name(1, 8192, 64, 64), "128x64x32");
    // bmm 12 x 128 x 128 x 64 (BERT scores): 12, 12, 24, 48, 192 blocks -> 1, 1, 1, 1, 2 per SM
    // -> 41,478, 20,951, 10,695, 6,380, 4,708. 192 blocks fit one wave of 8 per SM (61 registers
    // two ahead): two ahead.
    EXPECT_EQ(name(12, 128, 128, 64), "32x32x32");
    EXPECT_EQ(ahead(12, 128, 128, 64), 2);
    // 1024 x 3072 x 768: 96, 192, 384, 768, 3072 blocks -> 1, 2, 4, 8, 29 per SM -> 41,478,
    // 41,902, 42,780, 51,040, 68,266. 96 blocks, but 256x128 two ahead fits no SM: one ahead.
    EXPECT_EQ(name(1, 1024, 3072, 768), "256x128x32");
    EXPECT_EQ(ahead(1, 1024, 3072, 768), 1);
    // 128 x 2304 x 768 (BERT qkv): 1x18, 1x18, 1x36, 2x36 = 72, 4x72 = 288 blocks -> 1, 1, 1, 1, 3
    // per SM -> 41,478, 20,951, 10,695, 6,380, 7,062: 64x64; 72 blocks <= 108 x 4: two ahead.
    EXPECT_EQ(name(1, 128, 2304, 768), "64x64x32");
    EXPECT_EQ(ahead(1, 128, 2304, 768), 2);
    const GemmTileChoice c = choose_gemm_tile({1, 8192, 8192, 8192}, 108, sm);
    EXPECT_EQ(c.blocks, 2048);
    // 117 registers x 32 lanes = 3,840 per warp (256-register units): 4 warps per 16,384-register
    // partition, 16 warps per SM = one block of 512 threads.
    EXPECT_EQ(c.blocks_per_sm, 1);
    EXPECT_NEAR(c.waves, 2048.0 / 108.0, 1e-12);
    EXPECT_NEAR(c.wave_efficiency, (2048.0 / 108.0) / 19.0, 1e-12);
}

TEST(GemmLowering, StatsErrorsAndLimits) {
    simt::GlobalMemory memory;
    LoweringTarget target;
    target.sms = 108;
    target.sm = a100_like(108).sm;
    const LoweredKernel lk = lower_gemm(gemm_op(OpKind::matmul, 1, 8192, 8192, 8192, DType::fp16), memory, target);
    auto stat = [&](const std::string& n) {
        for (const StatValue& v : lk.stats)
            if (v.name == n) return v.value;
        ADD_FAILURE() << "no stat " << n;
        return -1.0;
    };
    EXPECT_EQ(stat("gpu.tile_m"), 256);
    EXPECT_EQ(stat("gpu.tile_n"), 128);
    EXPECT_EQ(stat("gpu.tile_k"), 32);
    EXPECT_EQ(stat("gpu.grid"), 2048);
    EXPECT_EQ(stat("gpu.block"), 512);
    EXPECT_EQ(lk.dims.grid, 2048u);
    EXPECT_FALSE(lk.check);  // timing only: no data, no check
    simt::GlobalMemory m2;
    // int8 needs an int8 tensor rate (lower_op keeps a roofline row without one).
    LoweringTarget no_int8 = target;
    no_int8.tensor_macs_per_sm_cycle.int8 = 0;
    EXPECT_THROW(lower_gemm(gemm_op(OpKind::matmul, 1, 64, 64, 64, DType::int8), m2, no_int8), LoweringError);
    // 3 x 20480^2 x 2 bytes = 2.34 GiB, over the 2 GiB limit: refused before anything is allocated;
    // int8: A and B 400 MiB each, C 1.56 GiB of int32 (the limit by hand: high_address_test.cpp).
    EXPECT_THROW(lower_gemm(gemm_op(OpKind::matmul, 1, 20480, 20480, 20480, DType::fp16), m2, target), LoweringError);
    EXPECT_THROW(lower_gemm(gemm_op(OpKind::matmul, 1, 20480, 20480, 20480, DType::int8), m2, target), LoweringError);
    EXPECT_EQ(m2.size(), 0u);
}

}  // namespace
}  // namespace accelsim::gpu::gemm_test
