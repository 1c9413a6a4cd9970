// The 8-bit Hopper GEMM (gemm_hopper.h: fp8_e4m3, fp8_e5m2 and int8 operands, wgmma m64nNk32,
// K-major A and B^T, 128-byte k-blocks = BK 128) on H100-like SMs: values against Eigen on the same
// fp8-rounded (or int8-quantized) inputs for every tile, timing-only runs against full ones, the
// tile rule's element-size scaling on hand-worked cases, tensor-core utilization against a
// hand-derived ceiling, and the mma.m16n8k32 kernel kept for other chips and shapes that do not tile.
#include <gtest/gtest.h>

#include "models/gpu/gemm.h"
#include "models/gpu/gemm_hopper.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/gemm_op.h"

namespace accelsim::gpu {
namespace {

// h100.json's tensor rates: 2048 16-bit and 4096 8-bit MACs per SM cycle, so one m16n8k16 or one
// m16n8k32 every 4 cycles per sub-partition.
simt::SimtParams h100_like(int sms) {
    simt::SimtParams p;
    p.sms = sms;
    p.sm.limits = *simt::published_limits("sm_90");
    p.sm.tensor.initiation_interval = 4;
    p.sm.tensor_s8.initiation_interval = 4;
    p.sm.tensor_e4m3.initiation_interval = 4;
    p.sm.tensor_e5m2.initiation_interval = 4;
    return p;
}

LoweringTarget h100_target(int sms, bool real, double port_bytes_per_cycle) {
    LoweringTarget target;
    target.sms = sms;
    target.sm = h100_like(sms).sm;
    target.seed = 7;
    target.real_data = real;
    target.sm_port_bytes_per_cycle = port_bytes_per_cycle;
    target.tensor_macs_per_sm_cycle = {4096, 2048, 2048, 1024, 4096, 4096};
    return target;
}

Op gemm_op(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, DType dtype) {
    return test::gemm_op(batch > 1 ? OpKind::bmm : OpKind::matmul, batch, m, n, k, dtype);
}

struct EightBitRun {
    simt::KernelStats stats;
    LoweringNumerics numerics;
    std::string kernel;
};

EightBitRun run(const Op& op, const LoweringTarget& target, const simt::SimtParams& params, bool skip = false) {
    simt::GlobalMemory memory;
    const LoweredKernel lk = lower_gemm(op, memory, target);
    EXPECT_TRUE(lk.then.empty());  // the 8-bit kernels have no split-K
    simt::FixedLatencyMemory port(300);
    EightBitRun r;
    r.kernel = lk.kernel->name;
    r.stats = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {skip});
    if (lk.check) r.numerics = lk.check(memory);
    return r;
}

EightBitRun run_h100(const Op& op, int sms, bool real, double port = 64, bool skip = false) {
    return run(op, h100_target(sms, real, port), h100_like(sms), skip);
}

constexpr DType kEightBit[] = {DType::fp8_e4m3, DType::fp8_e5m2, DType::int8};
const char* suffix(DType dt) { return dt == DType::fp8_e4m3 ? "_e4m3" : dt == DType::fp8_e5m2 ? "_e5m2" : "_s8"; }

TEST(HopperGemm8bit, EveryTileMatchesEigen) {
    // The tile rule's demand for 8-bit operands: 1 byte (BM + BN / cluster) / (BM BN) per MAC at
    // 4096 MACs per cycle, the same bytes per cycle as 16-bit operands at 2048: 128x256 48 B/cycle,
    // 128x128 64, 64x128 96, 64x64 128, the cluster 32. So the 16-bit test's shapes pick the same
    // tiles (HopperGemm.EveryTileMatchesEigen works them out), K now a multiple of BK = 128. fp8:
    // Eigen's fp32 GEMM of the same rounded values (bound K 2^-24 sum |a||b|); int8: Eigen's
    // integer GEMM, exactly.
    const struct { std::int64_t m, n, k; int sms; const char* kernel; double port; } cases[] = {
        {512, 256, 384, 2, "hopper_gemm_128x256x128_s4_c2", 40},
        {256, 512, 128, 1, "hopper_gemm_128x256x128_s4", 64},
        {256, 128, 256, 1, "hopper_gemm_128x128x128_s3", 64},
        {64, 128, 128, 1, "hopper_gemm_64x128x128_s4", 64},
        {64, 64, 384, 1, "hopper_gemm_64x64x128_s4", 64},
    };
    for (const auto& c : cases)
        for (const DType dt : kEightBit) {
            const EightBitRun r = run_h100(gemm_op(1, c.m, c.n, c.k, dt), c.sms, true, c.port);
            EXPECT_EQ(r.kernel, std::string(c.kernel) + suffix(dt));
            EXPECT_EQ(r.numerics.checked, c.m * c.n);
            EXPECT_TRUE(r.numerics.passed) << r.kernel << " max abs err " << r.numerics.max_abs_err;
            // Exactly the GEMM's MACs, in m16n8k32s of 4096.
            EXPECT_EQ(static_cast<std::int64_t>(r.stats.mma_issued) * 4096, c.m * c.n * c.k) << r.kernel;
        }
    // A batch (bmm) and a long K.
    for (const DType dt : kEightBit) {
        const EightBitRun b = run_h100(gemm_op(3, 128, 128, 256, dt), 2, true);
        EXPECT_EQ(b.numerics.checked, 3 * 128 * 128);
        EXPECT_TRUE(b.numerics.passed) << b.kernel;
        const EightBitRun k = run_h100(gemm_op(1, 64, 64, 2048, dt), 1, true);
        EXPECT_TRUE(k.numerics.passed) << k.kernel << " max abs err " << k.numerics.max_abs_err;
    }
}

TEST(HopperGemm8bit, TimingOnlyRunsGiveIdenticalCycles) {
    for (const HopperTile& t : hopper_gemm_tiles())
        for (const simt::MmaType type : {simt::MmaType::e4m3, simt::MmaType::s8})
            EXPECT_TRUE(hopper_gemm_kernel(t, type)->fp_payload_skippable)
                << t.name(type) << ": " << hopper_gemm_kernel(t, type)->fp_dependence;
    const Op op = gemm_op(1, 256, 512, 256, DType::fp8_e4m3);
    const EightBitRun full = run_h100(op, 2, true), timing = run_h100(op, 2, false, 64, true);
    EXPECT_EQ(full.stats.cycles, timing.stats.cycles);
    EXPECT_EQ(full.stats.issued, timing.stats.issued);
    // int8 at fp8's rate is the same schedule, cycle for cycle.
    EXPECT_EQ(run_h100(gemm_op(1, 256, 512, 256, DType::int8), 2, false, 64, true).stats.cycles, timing.stats.cycles);
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
    // K must be a multiple of 128 8-bit values (64 suffices for 16-bit).
    EXPECT_EQ(choose_hopper_tile({1, 256, 256, 192}, 132, sm, 64, 0, e4m3).blocks, 0);
    EXPECT_GT(choose_hopper_tile({1, 256, 256, 192}, 132, sm, 64).blocks, 0);
    // The swizzle counts 1-byte panels. 2048^3 with the cluster tile, 128 tiles in flight: every G
    // touches all of A and B (HopperGemm.SchedulerSwizzleRule), 16.8 MB of 16-bit or 8.4 MB of 8-bit
    // values. With 20 MiB of L2 (half of it: 10.5 MB) the 8-bit wave fits: the largest G, 16; the
    // 16-bit one does not: the fewest bytes, all equal, the first, 2.
    const HopperTile pair{128, 256, 4, 2};
    EXPECT_EQ(choose_hopper_group_rows({1, 2048, 2048, 2048}, pair, 128, 20 << 20, e4m3), 16);
    EXPECT_EQ(choose_hopper_group_rows({1, 2048, 2048, 2048}, pair, 128, 20 << 20), 2);
}

TEST(HopperGemm8bit, TensorCoresStayBusy) {
    // One SM, one 128x256 block, K = 8192: 64 k-blocks of 128 x 256 x 128 MACs = 1024 tensor
    // cycles each at 4096 MACs per cycle, 65,536 in all: twice the 16-bit kernel's MACs in its
    // cycles (HopperGemm.TensorCoresStayBusy: fill 684, drain 544, epilogue; the 8-bit epilogue
    // stores 4-byte C, 256 stores per thread, 2 x 256 x 4 issue cycles). Above
    // 65536 / (65536 + 684 + 544 + 2048) = 95 %, at most 100 %.
    for (const DType dt : {DType::fp8_e5m2, DType::int8}) {
        const EightBitRun r = run_h100(gemm_op(1, 128, 256, 8192, dt), 1, false, 64, true);
        const double macs = static_cast<double>(r.stats.mma_issued) * 4096.0;
        EXPECT_EQ(macs, 128.0 * 256 * 8192);
        const double utilization = macs / (4096.0 * static_cast<double>(r.stats.cycles));
        EXPECT_GT(utilization, 0.95) << r.stats.cycles;
        EXPECT_LE(utilization, 1.0);
    }
}

TEST(HopperGemm8bit, LoweringKeepsTheMmaKernelElsewhere) {
    // A shape the Hopper kernel does not tile (K = 200) runs the mma.m16n8k32 kernel, and passes.
    const EightBitRun odd = run_h100(gemm_op(1, 128, 128, 200, DType::fp8_e4m3), 1, true);
    EXPECT_EQ(odd.kernel.rfind("gemm_", 0), 0u) << odd.kernel;
    EXPECT_TRUE(odd.numerics.passed);
    // Other compute capabilities (a100: sm_80; l4: sm_89) keep it for every shape.
    for (const char* arch : {"sm_80", "sm_89"}) {
        simt::SimtParams params = h100_like(1);
        params.sm.limits = *simt::published_limits(arch);
        LoweringTarget target = h100_target(1, false, 64);
        target.sm = params.sm;
        EXPECT_FALSE(hopper_gemm_target(params.sm));
        for (const DType dt : kEightBit)
            EXPECT_EQ(run(gemm_op(1, 256, 256, 256, dt), target, params, true).kernel.rfind("gemm_", 0), 0u) << arch;
    }
}

}  // namespace
}  // namespace accelsim::gpu
