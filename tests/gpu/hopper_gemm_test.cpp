// The Hopper GEMM kernel (gemm_hopper.h) on H100-like SMs: values against Eigen for every tile,
// both 16-bit types, the 8-bit variant (fp8_e4m3, fp8_e5m2, int8: wgmma m64nNk32, K-major A and
// B^T, BK = 128) and a batch, timing-only runs against full ones, the tile rule on hand-worked
// cases (and its element-size scaling), tensor-core utilization against a hand-derived ceiling,
// and the Ampere path kept for other compute capabilities and shapes that do not tile.
#include <gtest/gtest.h>

#include "models/gpu/gemm.h"
#include "models/gpu/gemm_hopper.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::gpu::hopper_gemm_test {
namespace {

simt::SimtParams h100_like(int sms) {
    simt::SimtParams p;
    p.sms = sms;
    p.sm.limits = *simt::published_limits("sm_90");
    // h100.json: 2048 16-bit and 4096 8-bit MACs per SM cycle, one m16n8k16 or m16n8k32 every 4
    // cycles per sub-partition.
    p.sm.tensor.initiation_interval = 4;
    p.sm.tensor_s8.initiation_interval = 4;
    p.sm.tensor_e4m3.initiation_interval = 4;
    p.sm.tensor_e5m2.initiation_interval = 4;
    return p;
}

Op gemm_op(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, DType dtype) {
    Op op;
    op.kind = batch > 1 ? OpKind::bmm : OpKind::matmul;
    op.name = "g";
    op.dtype = dtype;
    op.gemm = {batch, m, n, k};
    return op;
}

constexpr DType kTensorDtypes[] = {DType::bf16, DType::fp16, DType::fp8_e4m3, DType::fp8_e5m2, DType::int8};
simt::MmaType mma_type_of(DType dt) {
    switch (dt) {
        case DType::fp16: return simt::MmaType::f16;
        case DType::fp8_e4m3: return simt::MmaType::e4m3;
        case DType::fp8_e5m2: return simt::MmaType::e5m2;
        case DType::int8: return simt::MmaType::s8;
        default: return simt::MmaType::bf16;
    }
}

struct HopperRun {
    simt::KernelStats stats;
    LoweringNumerics numerics;
    std::string kernel;
};

HopperRun run(const Op& op, int sms, bool real, bool skip = false, const simt::SimtParams* override_params = nullptr,
              double port_bytes_per_cycle = 64) {
    const simt::SimtParams params = override_params ? *override_params : h100_like(sms);
    LoweringTarget target;
    target.sms = sms;
    target.sm = params.sm;
    target.seed = 3;
    target.real_data = real;
    target.sm_port_bytes_per_cycle = port_bytes_per_cycle;  // h100.json's interconnect: 64
    target.tensor_macs_per_sm_cycle = {4096, 2048, 2048, 1024, 4096, 4096};  // h100.json
    simt::GlobalMemory memory;
    const LoweredKernel lk = lower_gemm(op, memory, target);
    simt::FixedLatencyMemory port(300);
    HopperRun r;
    r.kernel = lk.kernel->name;
    r.stats = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {skip});
    if (lk.check) r.numerics = lk.check(memory);
    return r;
}

TEST(HopperGemm, EveryTileMatchesEigen) {
    // Shapes that pick each tile (the rule, with a 64 B/cycle port: 128x256 and 128x128 need 48 and
    // 64 B/cycle at 2048 MACs per cycle, 64x128 96 (x 1.5), 64x64 128 (x 2)): on 1 SM,
    // 256 x 512: 4 x 32768 = 8 x 16384 < 16 x 8192 x 1.5, the tie to the larger tile;
    // 256 x 128 (no 256-wide tile): 2 x 16384 < 4 x 8192 x 1.5 < 8 x 4096 x 2;
    // 64 x 128 (no 128-row tile): 8192 x 1.5 < 2 x 4096 x 2; 64 x 64: the only one.
    // 512 x 256 on 2 SMs with a 40 B/cycle port: the cluster of 2 (2 x 32768, its 32 B/cycle
    // fits) beats 128x256 alone (48 B/cycle: x 1.2) and 128x128 (4 x 16384 x 64/40).
    // 8-bit operands: demand is 1 byte (BM + BN / cluster) / (BM BN) per MAC at 4096 MACs per
    // cycle, the same bytes per cycle, so the same tiles; K a multiple of both BKs (64, 128). fp8:
    // Eigen's fp32 GEMM of the same rounded values; int8: Eigen's integer GEMM, exactly.
    const struct { std::int64_t m, n, k; int sms; HopperTile tile; double port; } cases[] = {
        {512, 256, 384, 2, {128, 256, 4, 2}, 40},
        {256, 512, 128, 1, {128, 256, 4}, 64},
        {256, 128, 256, 1, {128, 128, 3}, 64},
        {64, 128, 128, 1, {64, 128, 4}, 64},
        {64, 64, 384, 1, {64, 64, 4}, 64},
    };
    for (const auto& c : cases)
        for (const DType dt : kTensorDtypes) {
            const HopperRun r = run(gemm_op(1, c.m, c.n, c.k, dt), c.sms, true, false, nullptr, c.port);
            const simt::MmaType type = mma_type_of(dt);
            EXPECT_EQ(r.kernel, "hopper_gemm_" + c.tile.name(type) + "_" + simt::mma_type_name(type));
            EXPECT_EQ(r.numerics.checked, c.m * c.n);
            EXPECT_TRUE(r.numerics.passed) << r.kernel << " max abs err " << r.numerics.max_abs_err;
            // Exactly the GEMM's MACs, in m16n8k16s (2048) or m16n8k32s (4096).
            EXPECT_EQ(static_cast<std::int64_t>(r.stats.mma_issued) * simt::mma_macs(type), c.m * c.n * c.k) << r.kernel;
        }
    // A batch (bmm), and a long K for the 8-bit kernels.
    for (const DType dt : kTensorDtypes) {
        const HopperRun b = run(gemm_op(3, 128, 128, 256, dt), 2, true);
        EXPECT_EQ(b.numerics.checked, 3 * 128 * 128);
        EXPECT_TRUE(b.numerics.passed) << b.kernel;
    }
    for (const DType dt : {DType::fp8_e4m3, DType::int8}) {
        const HopperRun k = run(gemm_op(1, 64, 64, 2048, dt), 1, true);
        EXPECT_TRUE(k.numerics.passed) << k.kernel << " max abs err " << k.numerics.max_abs_err;
    }
}

TEST(HopperGemm, EdgeTilesMatchEigen) {
    // Shapes no tile divides run the edge variant: bounded TMA boxes read zeros past M, N and K,
    // and the epilogue stores only inside C. 100 x 200 on 1 SM (64 B/cycle port): 128x256 1 block
    // (32768) ties 128x128's 2 (2 x 16384) and wins; 64x128 4 blocks (4 x 8192 x 1.5), 64x64 8
    // (8 x 4096 x 2); the cluster needs an even number of tile rows. Each block computes its whole
    // tile: K = 72 is 2 k-blocks of 64 16-bit values (128 x 256 x 128 MACs = 2048 m16n8k16), or,
    // padded to K' = 80 for 8-bit operands, one k-block of 128 (1024 m16n8k32).
    for (const DType dt : kTensorDtypes) {
        const simt::MmaType type = mma_type_of(dt);
        const HopperRun r = run(gemm_op(1, 100, 200, 72, dt), 1, true);
        EXPECT_EQ(r.kernel, "hopper_gemm_128x256x" + std::to_string(HopperTile::bk(type)) + "_s4_" +
                                simt::mma_type_name(type) + "_edges");
        EXPECT_EQ(r.numerics.checked, 100 * 200);
        EXPECT_TRUE(r.numerics.passed) << r.kernel << " max abs err " << r.numerics.max_abs_err;
        EXPECT_EQ(static_cast<std::int64_t>(r.stats.mma_issued), simt::is_k32(type) ? 1024 : 2048) << r.kernel;
        // A timing-only run (the zeros are not written, nothing reads them as more than payload)
        // takes the same cycles.
        const HopperRun timing = run(gemm_op(1, 100, 200, 72, dt), 1, false, true);
        EXPECT_EQ(timing.stats.cycles, r.stats.cycles) << r.kernel;
        EXPECT_EQ(timing.stats.issued, r.stats.issued) << r.kernel;
    }
    // Edges in every direction on several tiles and a batch; and the cluster of 2, which needs an
    // even number of tile rows: 1000 x 256 on 2 SMs with a 40 B/cycle port has ceil(1000 / 128) = 8,
    // and the pair (4 x 32768, its 32 B/cycle fits) beats 128x256 alone (4 x 32768 x 1.2) and
    // 128x128 (8 x 16384 x 1.6), as in EveryTileMatchesEigen.
    for (const DType dt : kTensorDtypes) {
        const HopperRun b = run(gemm_op(3, 130, 264, 200, dt), 2, true);
        EXPECT_NE(b.kernel.find("_edges"), std::string::npos) << b.kernel;
        EXPECT_EQ(b.numerics.checked, 3 * 130 * 264);
        EXPECT_TRUE(b.numerics.passed) << b.kernel << " max abs err " << b.numerics.max_abs_err;
        const HopperRun pair = run(gemm_op(1, 1000, 256, 136, dt), 2, true, false, nullptr, 40);
        EXPECT_EQ(pair.kernel, "hopper_gemm_128x256x" + std::to_string(HopperTile::bk(mma_type_of(dt))) + "_s4_c2_" +
                                   simt::mma_type_name(mma_type_of(dt)) + "_edges");
        EXPECT_TRUE(pair.numerics.passed) << pair.kernel << " max abs err " << pair.numerics.max_abs_err;
    }
}

TEST(HopperGemm, TimingOnlyRunsGiveIdenticalCycles) {
    for (const HopperTile& t : hopper_gemm_tiles())
        EXPECT_TRUE(hopper_gemm_kernel(t, simt::MmaType::bf16)->fp_payload_skippable)
            << t.name() << ": " << hopper_gemm_kernel(t, simt::MmaType::bf16)->fp_dependence;
    const Op op = gemm_op(1, 256, 512, 256, DType::bf16);
    const HopperRun full = run(op, 2, true), timing = run(op, 2, false, true);
    EXPECT_EQ(full.stats.cycles, timing.stats.cycles);
    EXPECT_EQ(full.stats.issued, timing.stats.issued);
}

TEST(HopperGemm, TileRule) {
    const simt::SmParams sm = h100_like(132).sm;
    // 8192^3 on 132 SMs: 128x256 gives 2048 blocks of 1 per SM = ceil(15.5) = 16 waves x 32768;
    // 128x128 gives 4096 blocks, 2 per SM: 16 waves x 2 x 16384, a tie the larger tile wins.
    // 8192^3 on 132 SMs: 128x256 gives 2048 blocks, 16 on the busiest SM: 16 x 32768, with or
    // without the cluster of 2 (which fetches 32 B/cycle instead of 48); 128x128 4096 blocks,
    // 32 x 16384 (its 64 B/cycle fits the port): a three-way tie the table's first wins.
    const HopperTileChoice big = choose_hopper_tile({1, 8192, 8192, 8192}, 132, sm, 64);
    EXPECT_EQ(big.tile.name(), "128x256x64_s4");
    EXPECT_EQ(big.blocks, 2048);
    EXPECT_EQ(big.blocks_per_sm, 1);
    // 1024^3: 128x256 gives 32 blocks (1 x 32768), 128x128 64 (1 x 16384), 64x128 128 (1 x 8192 x
    // 1.5 = 12288, the smallest), 64x64 256 (2 x 4096 x 2 = 16384).
    const HopperTileChoice small = choose_hopper_tile({1, 1024, 1024, 1024}, 132, sm, 64);
    EXPECT_EQ(small.tile.name(), "64x128x64_s4");
    EXPECT_EQ(small.blocks, 128);
    // A shape no tile divides runs edge tiles: 100 x 128 x 64 gives 128x256 1 block (32768),
    // 128x128 1 (16384), 64x128 2, one per SM (8192 x 1.5 = 12288), 64x64 4, one per SM (4096 x 2
    // = 8192, the smallest). The cluster of 2 needs an even number of tile rows (1 here).
    const HopperTileChoice edges = choose_hopper_tile({1, 100, 128, 64}, 132, sm, 64);
    EXPECT_TRUE(edges.edges);
    EXPECT_EQ(edges.tile.name(), "64x64x64_s4");
    EXPECT_EQ(edges.blocks, 4);
    EXPECT_FALSE(big.edges);
    // A shape some tile divides exactly takes only exact tiles (1024^3 above); narrower than 64 in
    // M or N, the Ampere kernel runs it.
    EXPECT_EQ(choose_hopper_tile({1, 32, 1024, 1024}, 132, sm, 64).blocks, 0);
    EXPECT_EQ(run(gemm_op(1, 32, 128, 64, DType::bf16), 1, false, true).kernel.rfind("gemm_", 0), 0u);
    // Other compute capabilities keep the Ampere kernels.
    simt::SimtParams a100;
    a100.sms = 1;
    a100.sm.limits = *simt::published_limits("sm_80");
    EXPECT_FALSE(hopper_gemm_target(a100.sm));
    EXPECT_EQ(run(gemm_op(1, 256, 256, 256, DType::bf16), 1, false, true, &a100).kernel.rfind("gemm_", 0), 0u);
}

TEST(HopperGemm, TensorCoresStayBusy) {
    // One SM, one 128x256 block, K = 4096 (16-bit) or 8192 (8-bit): 64 k-blocks of 128 x 256 x BK
    // MACs = 1024 tensor cycles each (2048 or 4096 MACs per cycle), 65,536 in all. Around them:
    // the first stage's TMA (300-cycle memory + 384 cycles of sectors: 48 KB either way) before the
    // first wgmma, one group's drain (512 cycles of one warp's queue + 32) and the epilogue (128
    // instructions per thread: 64 cvt + 64 st.global, or 64 st.global.v2 of fp32 / int32 pairs)
    // after the last. So utilization is above 65536 / (65536 + 684 + 544 + 2 x 128 x 4 issue) =
    // 97%, and cannot exceed 100%.
    for (const auto& [dt, k] : {std::pair{DType::bf16, 4096}, {DType::fp8_e5m2, 8192}, {DType::int8, 8192}}) {
        const HopperRun r = run(gemm_op(1, 128, 256, k, dt), 1, false, true);
        const double rate = 4.0 * simt::mma_macs(mma_type_of(dt)) / 4;  // 4 sub-partitions, one mma per 4 cycles
        const double macs = static_cast<double>(r.stats.mma_issued) * simt::mma_macs(mma_type_of(dt));
        EXPECT_EQ(macs, 128.0 * 256 * k);
        const double utilization = macs / (rate * static_cast<double>(r.stats.cycles));
        EXPECT_GT(utilization, 0.96) << r.stats.cycles << " " << to_string(dt);
        EXPECT_LE(utilization, 1.0);
    }
}

TEST(HopperGemm, PersistentBlocksRunTilesBackToBack) {
    // One SM, 128x256 tiles, K = 4096 (65,536 tensor cycles a tile): one persistent block runs 1 or
    // 4 tiles. The producer loads the next tile's k-blocks while the last ones compute, and the two
    // consumer warpgroups' shares queue on the same four tensor cores, so one warpgroup's epilogue
    // runs behind the other's last wgmmas: each further tile adds its 65,536 tensor cycles and at
    // most 200 cycles per tile of seams (a block per tile would pay its fill, drain and
    // epilogue, about 2,200 cycles, each time: the TensorCoresStayBusy bound).
    const HopperRun one = run(gemm_op(1, 128, 256, 4096, DType::bf16), 1, false, true);
    const HopperRun four = run(gemm_op(1, 512, 256, 4096, DType::bf16), 1, false, true);
    const std::int64_t added = static_cast<std::int64_t>(four.stats.cycles) - static_cast<std::int64_t>(one.stats.cycles);
    EXPECT_GE(added, 3 * 65536);
    EXPECT_LE(added, 3 * 65536 + 3 * 200) << one.stats.cycles << " " << four.stats.cycles;
    // The persistent grid: one block per resident slot, a whole number of clusters.
    LoweringTarget target;
    target.sms = 3;
    target.sm = h100_like(3).sm;
    target.sm_port_bytes_per_cycle = 40;  // takes the cluster tile (as in EveryTileMatchesEigen)
    simt::GlobalMemory memory;
    const LoweredKernel lk = lower_gemm(gemm_op(1, 1024, 256, 64, DType::bf16), memory, target);
    EXPECT_EQ(lk.kernel->name, "hopper_gemm_128x256x64_s4_c2_bf16");
    EXPECT_EQ(lk.dims.grid, 2u);  // 8 tiles, 3 SMs: one cluster of 2
}

TEST(HopperGemm, PersistentClustersRunManyTiles) {
    // A cluster of 2 on 2 SMs with 16 tiles of 128x256 (K = 256, 4 k-blocks: one ring pass a tile):
    // each block runs 8 tiles. Its first k-block of every tile releases no stage, so rank 1's
    // guarded remote arrival there sends nothing; it used to resend the previous one (an extra
    // arrival on rank 0's "empty" barrier), which let one warpgroup fall a ring behind and
    // deadlock the pair at the 6th tile. Values against Eigen.
    const HopperRun r = run(gemm_op(1, 2048, 256, 256, DType::bf16), 2, true, false, nullptr, 40);
    EXPECT_EQ(r.kernel, "hopper_gemm_128x256x64_s4_c2_bf16");
    EXPECT_EQ(r.numerics.checked, 2048 * 256);
    EXPECT_TRUE(r.numerics.passed) << r.numerics.max_abs_err;
    // 16 tiles x 4 k-blocks x 1024 tensor cycles on each SM's share (8 tiles): at least 32,768.
    EXPECT_GE(r.stats.cycles, 8u * 4 * 1024);
    // A timing-only run of the same launch gives the same cycles.
    const HopperRun timing = run(gemm_op(1, 2048, 256, 256, DType::bf16), 2, false, true, nullptr, 40);
    EXPECT_EQ(timing.stats.cycles, r.stats.cycles);
    EXPECT_EQ(timing.stats.issued, r.stats.issued);
}

TEST(HopperGemm, SchedulerSwizzleRule) {
    // 132 tiles in flight, 50 MB of L2 (h100.json). Bytes a wave touches, 2 K (rows x BM + columns
    // x BN), for 128x256 tiles:
    // 8192^3 (64 x 32 tiles): G = 2: 132 tiles span 3 groups of 64: 6 rows, 32 columns: 147 MB;
    // G = 4: 8 rows, 32 columns: 151 MB; G = 8: 8 rows, 17 columns: 88 MB; G = 16: 16 rows, 9
    // columns: 71 MB. None fits in 25 MB: the fewest bytes, G = 16 for the cluster of 2 (8 cluster
    // rows), G = 8 without it (at most 8 cluster rows, as CUTLASS's swizzle).
    const std::int64_t l2 = 52428800;
    const HopperTile plain{128, 256, 4}, pair{128, 256, 4, 2};
    EXPECT_EQ(choose_hopper_group_rows({1, 8192, 8192, 8192}, plain, 132, l2), 8);
    EXPECT_EQ(choose_hopper_group_rows({1, 8192, 8192, 8192}, pair, 132, l2), 16);
    // 4096^3 (32 x 16): G = 8: 16 rows, 16 columns: 50 MB; G = 16: 16 rows, 9 columns: 36 MB.
    EXPECT_EQ(choose_hopper_group_rows({1, 4096, 4096, 4096}, pair, 132, l2), 16);
    // 2048^3 (16 x 8, one wave of 128): every G touches all of A and B, 16.8 MB, which fits in
    // 25 MB: the largest, 16. With 8 MB of L2 none fits: the first of the equal ones, 2.
    EXPECT_EQ(choose_hopper_group_rows({1, 2048, 2048, 2048}, pair, 128, l2), 16);
    EXPECT_EQ(choose_hopper_group_rows({1, 2048, 2048, 2048}, pair, 128, 8 << 20), 2);
    // 8192 x 1024 x 1024 (64 x 4 tiles), 132 in flight, 2 K = 2 KB: G = 2: 17 groups of 8 tiles,
    // 34 rows, 4 columns: 2 KB x (4352 + 1024) = 11.0 MB; G = 4: 9 groups, 36 rows: 11.5 MB; G = 8:
    // 5 groups, 40 rows: 12.6 MB; G = 16: 3 groups, 48 rows: 14.7 MB. All fit in 25 MB: the
    // largest, 16 (B refetched the fewest times); with 8 MB of L2 none fits: the fewest bytes, 2.
    EXPECT_EQ(choose_hopper_group_rows({1, 8192, 1024, 1024}, pair, 132, l2), 16);
    EXPECT_EQ(choose_hopper_group_rows({1, 8192, 1024, 1024}, pair, 132, 8 << 20), 2);
}

TEST(HopperGemm, TileRuleWeighsTheL2Bandwidth) {
    const simt::SmParams sm = h100_like(132).sm;
    // 8192^3 with the L2's 80 x 64 B per cycle (h100.json): 132 SMs x 48 B/cycle = 6,336 for
    // 128x256 alone, x 1.24 over 5,120; the cluster's 32 B/cycle, 4,224, fits: the cluster tile,
    // one block per SM, a persistent grid of 132.
    const HopperTileChoice big = choose_hopper_tile({1, 8192, 8192, 8192}, 132, sm, 64, 5120);
    EXPECT_EQ(big.tile.name(), "128x256x64_s4_c2");
    EXPECT_EQ(big.blocks, 2048);
    EXPECT_EQ(big.grid, 132);
}

// h100.json's split-K costs: 132 SMs, 64 B/cycle ports, 80 x 64 B/cycle of L2, 3,000 cycles per
// launch, HBM 3.35e12 B/s at 1575 MHz, rounded to 2,127 B/cycle.
LoweringTarget h100_split_target(int sms = 132) {
    LoweringTarget target;
    target.sms = sms;
    target.sm = h100_like(sms).sm;
    target.sm_port_bytes_per_cycle = 64;
    target.l2_bytes_per_cycle = 5120;
    target.launch_overhead_cycles = 3000;
    target.hbm_bytes_per_cycle = 2127;
    return target;
}

TEST(HopperGemm, SplitKRule) {
    const LoweringTarget target = h100_split_target();
    auto choose = [&](const GemmShape& g) {
        const HopperTileChoice c = choose_hopper_tile(g, target.sms, target.sm, 64, 5120);
        return std::make_pair(c, choose_hopper_splits(g, c, target));
    };
    // BERT-base FFN2, 128 x 768 x 3072: 64x64 tiles (128 B/cycle each, x 2 over the port), 24 of
    // them, 3 per SM, 48 k-blocks of 64 x 64 x 64 / 2048 = 128 tensor cycles. A plane is
    // 128 x 768 x 4 = 393,216 B, 184.9 cycles of HBM.
    //   T(1) = 48 x 128 x 2 = 12,288
    //   T(2) = 24 x 128 x 2 (48 busy SMs x 128 / 5120 = 1.2 < 2) + 3000 + 1000 + 2 x 184.9 = 10,513.7
    //   T(3) = 16 x 256 (72 SMs: 1.8) + 4000 + 554.6 = 8,650.6
    //   T(4) = 12 x 128 x 2.4 (96 SMs x 128 / 5120) + 4000 + 739.5 = 8,425.9, the smallest
    //   T(6) = ceil(144 / 132) = 2 x 8 x 128 x 3.3 (132 SMs) + 4000 + 1,109.3 = 11,867.7
    //   T(8) = 2 x 6 x 128 x 3.3 + 4000 + 1,479.0 = 10,547.8
    const auto [ffn2, ffn2_parts] = choose({1, 128, 768, 3072});
    EXPECT_EQ(ffn2.tile.name(), "64x64x64_s4");
    EXPECT_EQ(ffn2.blocks, 24);
    EXPECT_EQ(ffn2.blocks_per_sm, 3);
    const double plane_cycles = 393216.0 / 2127;
    const GemmShape ffn2_shape{1, 128, 768, 3072};
    EXPECT_NEAR(hopper_split_estimate(ffn2_shape, ffn2, 1, target), 12288, 1e-6);
    EXPECT_NEAR(hopper_split_estimate(ffn2_shape, ffn2, 2, target), 6144 + 4000 + 2 * plane_cycles, 1e-6);
    EXPECT_NEAR(hopper_split_estimate(ffn2_shape, ffn2, 3, target), 4096 + 4000 + 3 * plane_cycles, 1e-6);
    EXPECT_NEAR(hopper_split_estimate(ffn2_shape, ffn2, 4, target), 3686.4 + 4000 + 4 * plane_cycles, 1e-6);
    EXPECT_NEAR(hopper_split_estimate(ffn2_shape, ffn2, 6, target), 2 * 8 * 128 * 3.3 + 4000 + 6 * plane_cycles, 1e-6);
    EXPECT_NEAR(hopper_split_estimate(ffn2_shape, ffn2, 8, target), 2 * 6 * 128 * 3.3 + 4000 + 8 * plane_cycles, 1e-6);
    EXPECT_EQ(ffn2_parts, 4);
    // One 64x64 tile, K = 4096 (64 k-blocks; 3 and 6 do not divide 64): T(1) = 64 x 256 = 16,384,
    // T(2) = 8,192 + 4000 + 15.4, T(4) = 4,096 + 4000 + 30.8, T(8) = 2,048 + 4000 + 61.6, the smallest
    // (a plane of 64 x 64 x 4 = 16,384 B is 7.7 cycles of HBM).
    EXPECT_EQ(choose({1, 64, 64, 4096}).second, 8);
    // BERT's attention projection, 128 x 768 x 768: 12 k-blocks, T(1) = 12 x 256 = 3,072 against
    // T(2) = 1,536 + 4000 + 369.7 and T(3) = 1,024 + 4000 + 554.6 (S = 4 leaves 3 k-blocks a part,
    // fewer than kHopperMinKblocksPerPart): the launch of the sum costs more than the split saves.
    EXPECT_EQ(choose({1, 128, 768, 768}).second, 1);
    // 1024^3: 64 tiles of 128x128 (64 B/cycle, 2 per SM), 16 k-blocks of 512 tensor cycles:
    // T(1) = 8,192 (64 SMs x 64 / 5120 = 0.8 < 1); T(2) = 8 x 512 x 1.6 + 4000 + 2 x 4 MiB / 2127
    // = 14,497.9; T(4) = ceil(256 / 132) = 2 x 4 x 512 x 1.65 (132 SMs) + 4000 + 4 x 1,972 = 18,646;
    // 3, 6 do not divide 16 and 8 parts would have 2 k-blocks.
    const auto [k1024, k1024_parts] = choose({1, 1024, 1024, 1024});
    EXPECT_EQ(k1024.tile.name(), "128x128x64_s3");
    EXPECT_EQ(k1024_parts, 1);
    // 2048^3 .. 8192^3: 128 to 2048 cluster tiles, 1 per SM: two parts no longer fit the 132 slots.
    for (const std::int64_t n : {2048, 4096, 8192}) EXPECT_EQ(choose({1, n, n, n}).second, 1) << n;
    // Batched GEMMs (the parts are the kernel's batch entries) and targets without launch costs.
    EXPECT_EQ(choose({2, 128, 768, 3072}).second, 1);
    LoweringTarget free_launches = target;
    free_launches.launch_overhead_cycles = 0;
    EXPECT_EQ(choose_hopper_splits(ffn2_shape, ffn2, free_launches), 1);
}

// Lowers with `splits` parts and runs the GEMM launch and then the sum launch on the same memory.
struct HopperSplitRun {
    simt::KernelStats gemm, sum;
    LoweringNumerics numerics;
    std::string kernel;
    simt::Dim sum_dims;
};
HopperSplitRun run_split(const Op& op, const LoweringTarget& base, int splits, bool real) {
    LoweringTarget target = base;
    target.seed = 5;
    target.real_data = real;
    simt::GlobalMemory memory;
    const LoweredKernel lk = lower_hopper_gemm_with_splits(op, memory, target, splits);
    const simt::SimtParams params = h100_like(target.sms);
    simt::FixedLatencyMemory port(300), sum_port(300);
    HopperSplitRun r;
    r.kernel = lk.kernel->name;
    r.gemm = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {!real});
    EXPECT_EQ(lk.then.size(), splits > 1 ? 1u : 0u);
    for (const LoweredLaunch& next : lk.then) {
        r.sum = simt::launch(*next.kernel, next.dims, next.args, memory, params, &sum_port, {!real});
        r.sum_dims = next.dims;
    }
    if (lk.check) r.numerics = lk.check(memory);
    return r;
}

TEST(HopperGemm, SplitKMatchesEigen) {
    // Parts of 4 to 6 k-blocks on each tile the rule picks here: 64x64 (3 parts on 1 SM: one
    // persistent block runs them all), 64x128, 128x128, and the cluster of 2 (512 x 256 on 2 SMs,
    // 40 B/cycle ports: 8 part-tiles on one cluster), against Eigen; the fp32 partials' sum is
    // rounded once.
    const struct { std::int64_t m, n, k; int sms, splits; double port; const char* kernel; } cases[] = {
        {64, 64, 64 * 12, 1, 3, 64, "hopper_gemm_64x64x64_s4"},
        {128, 128, 64 * 8, 2, 2, 64, "hopper_gemm_64x128x64_s4"},
        {256, 128, 64 * 16, 1, 4, 64, "hopper_gemm_128x128x64_s3"},
        {512, 256, 64 * 8, 2, 2, 40, "hopper_gemm_128x256x64_s4_c2"},
    };
    for (const auto& c : cases)
        for (DType dt : {DType::bf16, DType::fp16}) {
            LoweringTarget target = h100_split_target(c.sms);
            target.sm_port_bytes_per_cycle = c.port;
            target.l2_bytes_per_cycle = 0;
            const HopperSplitRun r = run_split(gemm_op(1, c.m, c.n, c.k, dt), target, c.splits, true);
            EXPECT_EQ(r.kernel, std::string(c.kernel) + (dt == DType::bf16 ? "_bf16" : "_f16") + "_partials");
            EXPECT_EQ(r.numerics.checked, c.m * c.n);
            EXPECT_TRUE(r.numerics.passed) << r.kernel << " max abs err " << r.numerics.max_abs_err;
            // The parts together do the GEMM's MACs, no more (counted in m16n8k16s of 2048 MACs).
            EXPECT_EQ(static_cast<std::int64_t>(r.gemm.mma_issued) * 2048, c.m * c.n * c.k);
        }
    // Edge tiles split too (K a multiple of 64): 100 x 72 on 1 SM takes one 128x128 edge tile
    // (16384, against 128x256's 32768, 64x128's 2 x 8192 x 1.5 and 64x64's 4 x 4096 x 2); each of
    // the 2 parts runs the whole tile over its 4 k-blocks: 2 x 4 x 128 x 128 x 64 / 2048 mmas.
    for (DType dt : {DType::bf16, DType::fp16}) {
        LoweringTarget target = h100_split_target(1);
        target.l2_bytes_per_cycle = 0;
        const HopperSplitRun r = run_split(gemm_op(1, 100, 72, 512, dt), target, 2, true);
        EXPECT_EQ(r.kernel, std::string("hopper_gemm_128x128x64_s3") + (dt == DType::bf16 ? "_bf16" : "_f16") + "_edges_partials");
        EXPECT_EQ(r.numerics.checked, 100 * 72);
        EXPECT_TRUE(r.numerics.passed) << r.kernel << " max abs err " << r.numerics.max_abs_err;
        EXPECT_EQ(r.gemm.mma_issued, 2u * 4 * 128 * 128 * 64 / 2048);
    }
    // The partials kernels are timing-skippable like the plain ones, with edges too.
    for (const HopperTile& t : hopper_gemm_tiles()) {
        EXPECT_TRUE(hopper_gemm_kernel(t, simt::MmaType::bf16, true)->fp_payload_skippable) << t.name();
        EXPECT_TRUE(hopper_gemm_kernel(t, simt::MmaType::bf16, true, true)->fp_payload_skippable) << t.name();
        EXPECT_TRUE(hopper_gemm_kernel(t, simt::MmaType::e4m3, false, true)->fp_payload_skippable) << t.name();
    }
}

TEST(HopperGemm, SplitKSumLaunchInstructions) {
    // The sum launch of BERT-base FFN2's 4 parts on h100: 128 x 768 / 2 = 49,152 output pairs,
    // 192 blocks of 256 threads (within 132 SMs' slots), one pair per thread. Per thread
    // (splitk_sum_kernel): 5 set-up instructions; per pair setp, exit guard, shl, add, S loads
    // with S - 1 address adds, 2 (S - 1) fadds, cvt, shl, add, st, add, bra; then setp and exit:
    // 5 + (5 + 2 (S - 1)) + 2 (S - 1) + 6 + 2 = 14 + 4 S per thread, 30 at S = 4, so
    // 1,536 warps x 30 = 46,080 warp instructions.
    const HopperSplitRun r = run_split(gemm_op(1, 128, 768, 3072, DType::bf16), h100_split_target(), 4, false);
    EXPECT_EQ(r.sum_dims.grid * r.sum_dims.block, 49152u);
    EXPECT_EQ(r.sum.issued, 1536u * 30);
    // Its loads: 4 planes of 393,216 B and C's 196,608 B written. Each warp's loads issue back to
    // back and its store follows the last load's return: at least one 300-cycle round trip.
    EXPECT_GT(r.sum.cycles, 300u);
}

TEST(HopperGemm8bit, TimingOnlyRunsGiveIdenticalCycles) {
    for (const HopperTile& t : hopper_gemm_tiles())
        for (const simt::MmaType type : {simt::MmaType::e4m3, simt::MmaType::s8})
            EXPECT_TRUE(hopper_gemm_kernel(t, type)->fp_payload_skippable)
                << t.name(type) << ": " << hopper_gemm_kernel(t, type)->fp_dependence;
    const Op op = gemm_op(1, 256, 512, 256, DType::fp8_e4m3);
    const HopperRun full = run(op, 2, true), timing = run(op, 2, false, true);
    EXPECT_EQ(full.stats.cycles, timing.stats.cycles);
    EXPECT_EQ(full.stats.issued, timing.stats.issued);
    // int8 at fp8's rate is the same schedule, cycle for cycle.
    EXPECT_EQ(run(gemm_op(1, 256, 512, 256, DType::int8), 2, false, true).stats.cycles, timing.stats.cycles);
}

TEST(HopperGemm8bit, TileRuleScalesWithTheElementSize) {
    const simt::SmParams sm = h100_like(132).sm;
    // The same choices as 16-bit (equal demand per cycle, TileRule and TileRuleWeighsTheL2Bandwidth
    // of the 16-bit test): 8192^3 a three-way tie the plain 128x256 wins without an L2 limit, the
    // cluster with h100's 5,120 B/cycle of L2; 1024^3 64x128 (1 x 8192 x 1.5).
    const auto e4m3 = simt::MmaType::e4m3;
    EXPECT_EQ(choose_hopper_tile({1, 8192, 8192, 8192}, 132, sm, 64, 0, e4m3).tile.name(e4m3), "128x256x128_s4");
    const HopperTileChoice big = choose_hopper_tile({1, 8192, 8192, 8192}, 132, sm, 64, 5120, simt::MmaType::s8);
    EXPECT_EQ(big.tile.name(simt::MmaType::s8), "128x256x128_s4_c2");
    EXPECT_EQ(big.grid, 132);
    EXPECT_EQ(choose_hopper_tile({1, 1024, 1024, 1024}, 132, sm, 64, 0, e4m3).tile.name(e4m3), "64x128x128_s4");
    // K = 192 tiles exactly with 16-bit k-blocks of 64, not with 8-bit ones of 128: edge tiles.
    EXPECT_TRUE(choose_hopper_tile({1, 256, 256, 192}, 132, sm, 64, 0, e4m3).edges);
    EXPECT_FALSE(choose_hopper_tile({1, 256, 256, 192}, 132, sm, 64).edges);
    // The swizzle counts 1-byte panels. 2048^3 with the cluster tile, 128 tiles in flight: every G
    // touches all of A and B (HopperGemm.SchedulerSwizzleRule), 16.8 MB of 16-bit or 8.4 MB of 8-bit
    // values. With 20 MiB of L2 (half of it: 10.5 MB) the 8-bit wave fits: the largest G, 16; the
    // 16-bit one does not: the fewest bytes, all equal, the first, 2.
    const HopperTile pair{128, 256, 4, 2};
    EXPECT_EQ(choose_hopper_group_rows({1, 2048, 2048, 2048}, pair, 128, 20 << 20, e4m3), 16);
    EXPECT_EQ(choose_hopper_group_rows({1, 2048, 2048, 2048}, pair, 128, 20 << 20), 2);
}

TEST(HopperGemm8bit, LoweringKeepsTheMmaKernelElsewhere) {
    // A shape narrower than the Hopper tiles (M = 8: a decode step) runs the mma.m16n8k32 kernel,
    // and passes.
    const HopperRun odd = run(gemm_op(1, 8, 128, 200, DType::fp8_e4m3), 1, true);
    EXPECT_EQ(odd.kernel.rfind("gemm_", 0), 0u) << odd.kernel;
    EXPECT_TRUE(odd.numerics.passed);
    // Other compute capabilities (a100: sm_80; l4: sm_89) keep it for every shape.
    for (const char* arch : {"sm_80", "sm_89"}) {
        simt::SimtParams params = h100_like(1);
        params.sm.limits = *simt::published_limits(arch);
        EXPECT_FALSE(hopper_gemm_target(params.sm));
        for (const DType dt : {DType::fp8_e4m3, DType::fp8_e5m2, DType::int8})
            EXPECT_EQ(run(gemm_op(1, 256, 256, 256, dt), 1, false, true, &params).kernel.rfind("gemm_", 0), 0u) << arch;
    }
}

TEST(HopperGemm8bit, MixedFp8FormatsMatchEigenOnEachOperandsRounding) {
    // A in one fp8 format and B in the other (Op::b_dtype): the kernel's wgmma takes the mixed
    // .e4m3.e5m2 / .e5m2.e4m3 form, B's bytes are e5m2 (e4m3) encodings, and the check is Eigen's
    // fp32 GEMM of A rounded to A's format and B to B's. At h100's rates (equal for both formats)
    // the cycles are the single-format kernel's, instruction for instruction.
    const struct { DType a, b; } pairs[] = {{DType::fp8_e4m3, DType::fp8_e5m2}, {DType::fp8_e5m2, DType::fp8_e4m3}};
    for (const auto& p : pairs) {
        Op op = gemm_op(1, 256, 512, 256, p.a);
        op.b_dtype = p.b;
        const HopperRun mixed = run(op, 2, true);
        const std::string a_name = simt::mma_type_name(mma_type_of(p.a)), b_name = simt::mma_type_name(mma_type_of(p.b));
        EXPECT_EQ(mixed.kernel.rfind("hopper_gemm_", 0), 0u) << mixed.kernel;
        EXPECT_NE(mixed.kernel.find("_" + a_name + "_" + b_name), std::string::npos) << mixed.kernel;
        EXPECT_EQ(mixed.numerics.checked, 256 * 512);
        EXPECT_TRUE(mixed.numerics.passed) << mixed.kernel << " max abs err " << mixed.numerics.max_abs_err;
        EXPECT_EQ(static_cast<std::int64_t>(mixed.stats.mma_issued) * 4096, 256LL * 512 * 256);
        EXPECT_EQ(mixed.stats.cycles, run(gemm_op(1, 256, 512, 256, p.a), 2, true).stats.cycles);
        Op batched = gemm_op(3, 128, 128, 256, p.a);
        batched.b_dtype = p.b;
        const HopperRun b = run(batched, 2, true);
        EXPECT_EQ(b.numerics.checked, 3 * 128 * 128);
        EXPECT_TRUE(b.numerics.passed) << b.kernel;
    }
    const HopperTile tile{128, 128, 4};
    EXPECT_THROW(hopper_gemm_kernel(tile, simt::MmaType::s8, simt::MmaType::e4m3), LoweringError);
    EXPECT_THROW(hopper_gemm_kernel(tile, simt::MmaType::e4m3, simt::MmaType::e4m3), LoweringError);
}

// ---- Fused epilogues on sm_90 (lower_gemm_epilogue: the Hopper GEMM with the steps before its store)

const GemmEpilogue kHopperEpilogues[] = {
    {{EpilogueStep::gelu}},
    {{EpilogueStep::add}},
    {{EpilogueStep::bias, EpilogueStep::gelu}},
    {{EpilogueStep::bias, EpilogueStep::add, EpilogueStep::relu}},
    {{EpilogueStep::mul, EpilogueStep::add}},
    {{EpilogueStep::scale, EpilogueStep::add}, 0.125f},
    {{EpilogueStep::bias, EpilogueStep::scale, EpilogueStep::gelu}, -1.5f},
};

struct FusedRun {
    simt::KernelStats gemm, sum;
    LoweringNumerics numerics;
    std::string kernel;
    simt::Dim dims;
    std::size_t launches = 0;
};
FusedRun run_fused(const Op& op, const GemmEpilogue& e, LoweringTarget target, bool real, LoweredKernel* keep = nullptr,
                   simt::GlobalMemory* keep_memory = nullptr) {
    target.seed = 7;
    target.real_data = real;
    simt::GlobalMemory local;
    simt::GlobalMemory& memory = keep_memory ? *keep_memory : local;
    const LoweredKernel lk = lower_gemm_epilogue(op, e, memory, target);
    if (keep) *keep = lk;
    const simt::SimtParams params = h100_like(target.sms);
    simt::FixedLatencyMemory port(300), sum_port(300);
    FusedRun r;
    r.kernel = lk.kernel->name;
    r.dims = lk.dims;
    r.gemm = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {!real});
    r.launches = 1 + lk.then.size();
    for (const LoweredLaunch& next : lk.then) r.sum = simt::launch(*next.kernel, next.dims, next.args, memory, params, &sum_port, {!real});
    if (lk.check) r.numerics = lk.check(memory);
    return r;
}
LoweringTarget tile_target(int sms, double port) {
    LoweringTarget target;
    target.sms = sms;
    target.sm = h100_like(sms).sm;
    target.sm_port_bytes_per_cycle = port;
    return target;
}

TEST(HopperGemmEpilogue, EveryTileAndStepMatchesEigen) {
    // The shapes of EveryTileMatchesEigen (each picks one tile; no launch costs, so no split) with
    // every epilogue, both 16-bit types: the Hopper kernel with the steps (its name says so), the
    // values against Eigen's A*B with the steps applied in double, the GEMM's MACs exactly.
    const struct { std::int64_t m, n, k; int sms; const char* tile; double port; } cases[] = {
        {512, 256, 384, 2, "128x256x64_s4_c2", 40},
        {256, 512, 128, 1, "128x256x64_s4", 64},
        {256, 128, 256, 1, "128x128x64_s3", 64},
        {64, 128, 128, 1, "64x128x64_s4", 64},
        {64, 64, 384, 1, "64x64x64_s4", 64},
    };
    for (const auto& c : cases)
        for (const GemmEpilogue& e : kHopperEpilogues)
            for (const DType dt : {DType::bf16, DType::fp16}) {
                const FusedRun r = run_fused(gemm_op(1, c.m, c.n, c.k, dt), e, tile_target(c.sms, c.port), true);
                // Chunks of fewer than 4 groups are named (HopperGemmEpilogue.ChunkRule works them out).
                EXPECT_EQ(r.kernel.rfind(std::string("hopper_gemm_") + c.tile + (dt == DType::bf16 ? "_bf16_" : "_f16_") + e.name(), 0),
                          0u) << r.kernel;
                EXPECT_EQ(r.launches, 1u);
                EXPECT_EQ(r.numerics.checked, c.m * c.n);
                EXPECT_TRUE(r.numerics.passed) << r.kernel << " max abs err " << r.numerics.max_abs_err;
                EXPECT_EQ(static_cast<std::int64_t>(r.gemm.mma_issued) * 2048, c.m * c.n * c.k) << r.kernel;
            }
}

TEST(HopperGemmEpilogue, EdgesBatchesAndSplitKMatchEigen) {
    // Edge tiles (100 x 200 x 72: one 128x256 edge tile, EdgeTilesMatchEigen) load and store only
    // inside C; a batch (a bmm's scale-and-mask); and split-K (BERT-base FFN2 on h100's costs: 4
    // parts, SplitKRule), whose sum launch applies the steps, the GEMM kernel staying the plain
    // partials one.
    // (The batch and split cases run one dtype per epilogue, alternating: their step code is the
    // same for both, and the edge cases run both.)
    for (std::size_t i = 0; i < std::size(kHopperEpilogues); ++i)
        for (const DType dt : {DType::bf16, DType::fp16}) {
            const GemmEpilogue& e = kHopperEpilogues[i];
            const bool once = (i % 2 == 0) == (dt == DType::bf16);
            const FusedRun edge = run_fused(gemm_op(1, 100, 200, 72, dt), e, tile_target(1, 64), true);
            EXPECT_EQ(edge.kernel.rfind(std::string("hopper_gemm_128x256x64_s4") + (dt == DType::bf16 ? "_bf16" : "_f16") +
                                            "_edges_" + e.name(), 0),
                      0u) << edge.kernel;
            EXPECT_EQ(edge.numerics.checked, 100 * 200);
            EXPECT_TRUE(edge.numerics.passed) << edge.kernel << " max abs err " << edge.numerics.max_abs_err;
            if (!once) continue;
            const FusedRun batch = run_fused(gemm_op(3, 130, 264, 200, dt), e, tile_target(2, 64), true);
            EXPECT_NE(batch.kernel.find("_edges_" + e.name()), std::string::npos) << batch.kernel;
            EXPECT_EQ(batch.numerics.checked, 3 * 130 * 264);
            EXPECT_TRUE(batch.numerics.passed) << batch.kernel << " max abs err " << batch.numerics.max_abs_err;
            const FusedRun split = run_fused(gemm_op(1, 128, 768, 3072, dt), e, h100_split_target(), true);
            EXPECT_EQ(split.kernel, std::string("hopper_gemm_64x64x64_s4") + (dt == DType::bf16 ? "_bf16" : "_f16") + "_partials");
            EXPECT_EQ(split.launches, 2u);
            EXPECT_EQ(split.numerics.checked, 128 * 768);
            EXPECT_TRUE(split.numerics.passed) << "split " << e.name() << " max abs err " << split.numerics.max_abs_err;
        }
}

TEST(HopperGemmEpilogue, ChunkRule) {
    // The chunk's words are payload registers: 2 rows x chunk x tensor steps, plus chunk bias
    // words; the addresses and temporaries reuse registers the K loop is done with, so a GELU costs
    // none. sm_90 (published limits): 65,536 registers in 4 sub-partitions of 16,384, a warp's
    // registers in units of 256, a block's 9 warps spread over the sub-partitions.
    simt::SmParams sm;
    sm.limits = *simt::published_limits("sm_90");
    const GemmEpilogue mul_add{{EpilogueStep::mul, EpilogueStep::add}}, bias_add{{EpilogueStep::bias, EpilogueStep::add}},
        gelu{{EpilogueStep::gelu}};
    for (const HopperTile& t : hopper_gemm_tiles()) {
        const int plain = hopper_gemm_kernel(t, simt::MmaType::bf16)->registers;
        for (const int chunk : {1, 2, 4}) {
            EXPECT_EQ(hopper_gemm_epilogue_kernel(t, simt::MmaType::bf16, false, mul_add, chunk)->registers, plain + 4 * chunk);
            EXPECT_EQ(hopper_gemm_epilogue_kernel(t, simt::MmaType::bf16, false, bias_add, chunk)->registers, plain + 3 * chunk);
            EXPECT_EQ(hopper_gemm_epilogue_kernel(t, simt::MmaType::bf16, false, gelu, chunk)->registers, plain);
        }
    }
    const HopperTile wide{128, 256, 4, 2}, square{128, 128, 3};
    const int wide_plain = hopper_gemm_kernel(wide, simt::MmaType::bf16)->registers;
    const int square_plain = hopper_gemm_kernel(square, simt::MmaType::bf16)->registers;
    // 128x256 (cluster), one block of 9 warps: 3 in a sub-partition, so at most 16,384 / 3 =
    // 5,461 registers a warp, 21 units = 5,376 = 168 a thread. mul_add in chunks of 4 needs
    // plain + 16 registers, above 168 (no block fits), in chunks of 2 plain + 8: chunk 2.
    ASSERT_GT(wide_plain + 16, 168);
    ASSERT_LE(wide_plain + 8, 168);
    EXPECT_EQ(choose_hopper_epilogue_chunk(wide, simt::MmaType::bf16, false, mul_add, sm), 2);
    // 128x128, two blocks of 9 warps: 5 in a sub-partition, 3,276 registers a warp, 12 units =
    // 3,072 = 96 a thread: chunks of 4 (plain + 16) leave one block, of 2 (plain + 8) keep two.
    ASSERT_GT(square_plain + 16, 96);
    ASSERT_LE(square_plain + 8, 96);
    EXPECT_EQ(choose_hopper_epilogue_chunk(square, simt::MmaType::bf16, false, mul_add, sm), 2);
    // Where every chunk keeps the blocks, the largest: a GELU, and any epilogue on 64x64.
    EXPECT_EQ(choose_hopper_epilogue_chunk(wide, simt::MmaType::bf16, false, gelu, sm), 4);
    EXPECT_EQ(choose_hopper_epilogue_chunk({64, 64, 4}, simt::MmaType::bf16, false, mul_add, sm), 4);
}

TEST(HopperGemmEpilogue, CheckFailsWithoutTheSteps) {
    // The check is not vacuous on this path: the plain Hopper kernel on the same buffers (the
    // residual never added) fails it.
    LoweredKernel lk;
    simt::GlobalMemory memory;
    const Op op = gemm_op(1, 256, 128, 256, DType::bf16);
    run_fused(op, GemmEpilogue{{EpilogueStep::add}}, tile_target(1, 64), true, &lk, &memory);
    LoweredKernel plain = lk;
    plain.kernel = hopper_gemm_kernel({128, 128, 3}, simt::MmaType::bf16);
    plain.args.pop_back();  // e0
    for (std::uint32_t a = lk.args[2]; a < lk.args[2] + 256 * 128 * 2; a += 4) memory.store32(a, 0);  // C cleared
    simt::FixedLatencyMemory port(300);
    simt::launch(*plain.kernel, plain.dims, plain.args, memory, h100_like(1), &port, {false});
    const LoweringNumerics n = lk.check(memory);
    EXPECT_EQ(n.checked, 256 * 128);
    EXPECT_FALSE(n.passed);
}

TEST(HopperGemmEpilogue, ReadsItsOperandsAndTimesAsFullRuns) {
    // 256 x 128 x 256: two 128x128 tiles. The fused kernel's global sectors are the plain kernel's
    // plus each tensor step's 256 x 128 x 2 B = 2,048 sectors, each asked for twice (4 lanes of a
    // row read 16 B of a group: half a sector, as C's stores write), plus, for a bias, one sector
    // per consumer warp and 8-column group (all 8 rows of lanes read the same 16 B): 8 warps x 16
    // groups x 2 tiles. A GELU reads nothing. Timing-only runs take the cycles of full ones.
    const Op op = gemm_op(1, 256, 128, 256, DType::bf16);
    simt::GlobalMemory plain_memory;
    LoweringTarget target = tile_target(1, 64);
    target.real_data = false;
    const LoweredKernel plain_lk = lower_gemm(op, plain_memory, target);
    simt::FixedLatencyMemory plain_port(300);
    const simt::KernelStats plain =
        simt::launch(*plain_lk.kernel, plain_lk.dims, plain_lk.args, plain_memory, h100_like(1), &plain_port, {true});
    for (const auto& [e, extra] : {std::pair<GemmEpilogue, std::uint64_t>{{{EpilogueStep::add}}, 2 * 2048},
                                   {{{EpilogueStep::gelu}}, 0},
                                   {{{EpilogueStep::mul, EpilogueStep::add}}, 4 * 2048},
                                   {{{EpilogueStep::bias, EpilogueStep::gelu}}, 8 * 16 * 2}}) {
        const FusedRun timing = run_fused(op, e, tile_target(1, 64), false);
        EXPECT_EQ(timing.gemm.global_sectors, plain.global_sectors + extra) << e.name();
        const FusedRun full = run_fused(op, e, tile_target(1, 64), true);
        EXPECT_EQ(full.gemm.cycles, timing.gemm.cycles) << e.name();
        EXPECT_EQ(full.gemm.issued, timing.gemm.issued) << e.name();
        EXPECT_TRUE(full.numerics.passed) << e.name();
    }
    for (const HopperTile& t : hopper_gemm_tiles())
        for (const GemmEpilogue& e : kHopperEpilogues)
            for (const bool edges : {false, true}) {
                const simt::Kernel* k = hopper_gemm_epilogue_kernel(t, simt::MmaType::f16, edges, e);
                EXPECT_TRUE(k->fp_payload_skippable) << k->name << ": " << k->fp_dependence;
                EXPECT_LE(k->registers, 255) << k->name;
            }
}

}  // namespace
}  // namespace accelsim::gpu::hopper_gemm_test
