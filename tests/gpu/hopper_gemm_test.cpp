// The Hopper GEMM kernel (gemm_hopper.h) on H100-like SMs: values against Eigen for every tile,
// both 16-bit types and a batch, timing-only runs against full ones, the tile rule on hand-worked
// cases, tensor-core utilization against a hand-derived ceiling, and the Ampere path kept for
// other compute capabilities and shapes that do not tile.
#include <gtest/gtest.h>

#include "models/gpu/gemm.h"
#include "models/gpu/gemm_hopper.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::gpu {
namespace {

simt::SimtParams h100_like(int sms) {
    simt::SimtParams p;
    p.sms = sms;
    p.sm.limits = *simt::published_limits("sm_90");
    p.sm.tensor.initiation_interval = 4;  // 2048 MACs per SM cycle (h100.json)
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
    const struct { std::int64_t m, n, k; int sms; const char* kernel; double port; } cases[] = {
        {512, 256, 320, 2, "hopper_gemm_128x256x64_s4_c2", 40},
        {256, 512, 128, 1, "hopper_gemm_128x256x64_s4", 64},
        {256, 128, 192, 1, "hopper_gemm_128x128x64_s3", 64},
        {64, 128, 64, 1, "hopper_gemm_64x128x64_s4", 64},
        {64, 64, 320, 1, "hopper_gemm_64x64x64_s4", 64},
    };
    for (const auto& c : cases)
        for (DType dt : {DType::bf16, DType::fp16}) {
            const HopperRun r = run(gemm_op(1, c.m, c.n, c.k, dt), c.sms, true, false, nullptr, c.port);
            EXPECT_EQ(r.kernel, std::string(c.kernel) + (dt == DType::bf16 ? "_bf16" : "_f16"));
            EXPECT_EQ(r.numerics.checked, c.m * c.n);
            EXPECT_TRUE(r.numerics.passed) << r.kernel << " max abs err " << r.numerics.max_abs_err;
        }
    const HopperRun b = run(gemm_op(3, 128, 128, 128, DType::bf16), 2, true);
    EXPECT_EQ(b.numerics.checked, 3 * 128 * 128);
    EXPECT_TRUE(b.numerics.passed);
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
    // Shapes that do not tile have no Hopper kernel (the Ampere kernel runs them).
    EXPECT_EQ(choose_hopper_tile({1, 100, 128, 64}, 132, sm, 64).blocks, 0);
    EXPECT_EQ(run(gemm_op(1, 100, 128, 64, DType::bf16), 1, false, true).kernel.rfind("gemm_", 0), 0u);
    // Other compute capabilities keep the Ampere kernels.
    simt::SimtParams a100;
    a100.sms = 1;
    a100.sm.limits = *simt::published_limits("sm_80");
    EXPECT_FALSE(hopper_gemm_target(a100.sm));
    EXPECT_EQ(run(gemm_op(1, 256, 256, 256, DType::bf16), 1, false, true, &a100).kernel.rfind("gemm_", 0), 0u);
}

TEST(HopperGemm, TensorCoresStayBusy) {
    // One SM, one 128x256 block, K = 4096: 64 k-blocks of 128 x 256 x 64 MACs = 1024 tensor
    // cycles each, 65,536 in all. Around them: the first stage's TMA (300-cycle memory + 384 cycles
    // of sectors) before the first wgmma, one group's drain (512 cycles of one warp's queue + 32) and
    // the epilogue (128 stores per thread) after the last. So utilization is above
    // 65536 / (65536 + 684 + 544 + 2 x 128 x 4 issue) = 97%, and cannot exceed 100%.
    const HopperRun r = run(gemm_op(1, 128, 256, 4096, DType::bf16), 1, false, true);
    const double macs = static_cast<double>(r.stats.mma_issued) * 2048.0;
    EXPECT_EQ(macs, 128.0 * 256 * 4096);
    const double utilization = macs / (2048.0 * static_cast<double>(r.stats.cycles));
    EXPECT_GT(utilization, 0.96) << r.stats.cycles;
    EXPECT_LE(utilization, 1.0);
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

}  // namespace
}  // namespace accelsim::gpu
