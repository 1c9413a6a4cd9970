// Occupancy against values worked out by hand from NVIDIA's published per-architecture limits
// (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability") and the CUDA
// occupancy calculator's allocation rules. Each case shows its working.
#include <gtest/gtest.h>

#include "models/simt/occupancy.h"
#include "sim/occupancy/occupancy_report.h"

namespace accelsim::simt {
namespace {

OccupancyLimits arch(const char* name) {
    auto l = published_limits(name);
    EXPECT_TRUE(l.has_value()) << name;
    return l.value_or(OccupancyLimits{});
}

TEST(PublishedLimits, MatchTheProgrammingGuideTable) {
    struct Row { const char* arch; int warps, blocks; std::int64_t smem_sm_kb, smem_block_kb; };
    const Row rows[] = {{"sm_70", 64, 32, 96, 96},  {"sm_75", 32, 16, 64, 64},  {"sm_80", 64, 32, 164, 163},
                        {"sm_86", 48, 16, 100, 99}, {"sm_87", 48, 16, 164, 163}, {"sm_89", 48, 24, 100, 99},
                        {"sm_90", 64, 32, 228, 227}, {"sm_100", 64, 32, 228, 227}};
    for (const Row& r : rows) {
        const OccupancyLimits l = arch(r.arch);
        EXPECT_EQ(l.max_warps, r.warps) << r.arch;
        EXPECT_EQ(l.max_threads, r.warps * 32) << r.arch;
        EXPECT_EQ(l.max_blocks, r.blocks) << r.arch;
        EXPECT_EQ(l.shared_memory_bytes, r.smem_sm_kb * 1024) << r.arch;
        EXPECT_EQ(l.shared_memory_per_block_bytes, r.smem_block_kb * 1024) << r.arch;
        EXPECT_EQ(l.registers, 65536) << r.arch;
        EXPECT_EQ(l.max_registers_per_thread, 255) << r.arch;
    }
    EXPECT_FALSE(published_limits("sm_61").has_value());
}

TEST(Occupancy, Sm80FullOccupancyWarpsAndRegistersTie) {
    // 256 threads = 8 warps; warps: 64/8 = 8 blocks.
    // 32 regs * 32 = 1024 per warp; 16384 per sub-partition / 1024 = 16 warps x 4 = 64 warps -> 8 blocks.
    // smem: (0 + 1024 reserve) -> 167936 / 1024 = 164 blocks; block limit 32.  min = 8, tie warps+registers.
    const Occupancy o = compute_occupancy(arch("sm_80"), {256, 32, 0});
    EXPECT_EQ(o.blocks_per_sm, 8);
    EXPECT_EQ(o.active_warps, 64);
    EXPECT_DOUBLE_EQ(o.occupancy, 1.0);
    EXPECT_EQ(o.limiters, (std::vector<std::string>{"warps", "registers"}));
    EXPECT_EQ(o.blocks_by_shared_memory, 164);
}

TEST(Occupancy, Sm70RegisterLimited) {
    // 128 threads = 4 warps; warps: 64/4 = 16 blocks.
    // 64 regs * 32 = 2048 per warp; 16384 / 2048 = 8 warps per sub-partition x 4 = 32 warps -> 8 blocks.
    // No shared memory and no reserve on sm_70.  min = 8 blocks = 32 warps = 0.5.
    const Occupancy o = compute_occupancy(arch("sm_70"), {128, 64, 0});
    EXPECT_EQ(o.blocks_per_sm, 8);
    EXPECT_EQ(o.active_warps, 32);
    EXPECT_DOUBLE_EQ(o.occupancy, 0.5);
    EXPECT_EQ(o.limiters, (std::vector<std::string>{"registers"}));
}

TEST(Occupancy, Sm80RegistersAllocatedPerSubPartition) {
    // 192 threads = 6 warps. 48 regs * 32 = 1536 per warp (already a multiple of 256).
    // Per sub-partition 16384 / 1536 = 10 warps (10.67 floored) x 4 = 40 warps -> 40/6 = 6 blocks.
    // (A pooled register file would allow 65536 / (1536*6) = 7 blocks: the split is what costs one.)
    // warps: 64/6 = 10 blocks. -> 6 blocks, 36 warps, 36/64 = 0.5625.
    const Occupancy o = compute_occupancy(arch("sm_80"), {192, 48, 0});
    EXPECT_EQ(o.blocks_per_sm, 6);
    EXPECT_EQ(o.active_warps, 36);
    EXPECT_DOUBLE_EQ(o.occupancy, 0.5625);
    EXPECT_EQ(o.limiters, (std::vector<std::string>{"registers"}));
}

TEST(Occupancy, Sm86SharedMemoryLimited) {
    // 128 threads = 4 warps; warps: 48/4 = 12 blocks; regs 32 -> 64 warps -> 16 blocks; block limit 16.
    // smem: 20000 + 1024 reserve = 21024 -> rounded up to 128: 165*128 = 21120; 102400 / 21120 = 4 blocks.
    // -> 4 blocks, 16 warps, 16/48.
    const Occupancy o = compute_occupancy(arch("sm_86"), {128, 32, 20000});
    EXPECT_EQ(o.shared_memory_per_block, 21120);
    EXPECT_EQ(o.blocks_per_sm, 4);
    EXPECT_EQ(o.active_warps, 16);
    EXPECT_DOUBLE_EQ(o.occupancy, 16.0 / 48.0);
    EXPECT_EQ(o.limiters, (std::vector<std::string>{"shared_memory"}));
}

TEST(Occupancy, Sm90BlockLimited) {
    // 32 threads = 1 warp; warps: 64 blocks; 16 regs -> 512 per warp -> 32 per sub-partition -> 128 blocks;
    // smem 1024 (reserve) -> 233472/1024 = 228 blocks; block limit 32. -> 32 blocks, 32 warps, 0.5.
    const Occupancy o = compute_occupancy(arch("sm_90"), {32, 16, 0});
    EXPECT_EQ(o.blocks_per_sm, 32);
    EXPECT_EQ(o.active_warps, 32);
    EXPECT_DOUBLE_EQ(o.occupancy, 0.5);
    EXPECT_EQ(o.limiters, (std::vector<std::string>{"blocks"}));
}

TEST(Occupancy, Sm90SharedMemoryOneBlock) {
    // 227 KB requested = 232448 + 1024 = 233472 = 228 KB = all of the SM -> exactly 1 block of 8 warps.
    const Occupancy o = compute_occupancy(arch("sm_90"), {256, 32, 227 * 1024});
    EXPECT_EQ(o.blocks_per_sm, 1);
    EXPECT_EQ(o.active_warps, 8);
    EXPECT_DOUBLE_EQ(o.occupancy, 0.125);
    EXPECT_EQ(o.limiters, (std::vector<std::string>{"shared_memory"}));
}

TEST(Occupancy, UnlaunchableBlocksReportZeroWithAReason) {
    // 1024 threads x 128 regs = 32 warps x 4096 = 131072 registers > 65536.
    Occupancy o = compute_occupancy(arch("sm_86"), {1024, 128, 0});
    EXPECT_EQ(o.blocks_per_sm, 0);
    EXPECT_EQ(o.active_warps, 0);
    EXPECT_NE(o.unlaunchable_reason.find("registers"), std::string::npos) << o.unlaunchable_reason;
    // 110000 bytes > 99 KB = 101376 per block on sm_86.
    o = compute_occupancy(arch("sm_86"), {128, 32, 110000});
    EXPECT_EQ(o.blocks_per_sm, 0);
    EXPECT_NE(o.unlaunchable_reason.find("shared memory"), std::string::npos) << o.unlaunchable_reason;
    // 2048 threads > 1024 per block.
    o = compute_occupancy(arch("sm_80"), {2048, 16, 0});
    EXPECT_EQ(o.blocks_per_sm, 0);
    EXPECT_NE(o.unlaunchable_reason.find("threads"), std::string::npos) << o.unlaunchable_reason;
}

// ---- AMD CDNA3 (gfx942, MI300X): waves of 64. Limits as LLVM's AMDGPU backend computes them
// (AMDGPUBaseInfo for gfx90a and later): 512 VGPRs per SIMD lane in granules of 8, 8 waves per
// SIMD, 4 SIMDs per CU, 16 workgroups per CU unless a workgroup is one wave; 64 KiB LDS in
// 512-byte blocks. Each case is worked in "waves per SIMD" (LLVM's unit) and in the model's terms.

TEST(Gfx942Occupancy, PublishedLimits) {
    const OccupancyLimits l = arch("gfx942");
    EXPECT_EQ(l.wave_size, 64);
    EXPECT_EQ(l.max_warps, 32);                  // 4 SIMDs x 8 waves
    EXPECT_EQ(l.max_threads, 2048);
    EXPECT_EQ(l.registers, 131072);              // 512 KiB VGPR file / 4 B = 4 SIMDs x 512 VGPRs x 64 lanes
    EXPECT_EQ(l.register_alloc_unit, 512);       // 8 VGPRs x 64 lanes
    EXPECT_EQ(l.shared_memory_bytes, 65536);
    EXPECT_EQ(l.shared_memory_alloc_unit, 512);
}

TEST(Gfx942Occupancy, VgprLimitedAt128Vgprs) {
    // 256 work-items = 4 waves of 64 (8 warps of 32 for the core). 128 VGPRs: 512 / 128 = 4 waves
    // per SIMD (LLVM getNumWavesPerEUWithNumVGPRs). Model: 128 x 64 = 8192 registers per wave;
    // 32768 per SIMD / 8192 = 4 waves x 4 SIMDs = 16 waves -> 16 / 4 = 4 workgroups.
    // Waves: 32 / 4 = 8 workgroups; barrier limit 16; no LDS. min = 4 -> 16 of 32 waves = 0.5.
    const Occupancy o = compute_occupancy(arch("gfx942"), {256, 128, 0});
    EXPECT_EQ(o.warps_per_block, 4);
    EXPECT_EQ(o.core_warps_per_block, 8);
    EXPECT_EQ(o.blocks_by_registers, 4);
    EXPECT_EQ(o.blocks_by_warps, 8);
    EXPECT_EQ(o.blocks_per_sm, 4);
    EXPECT_EQ(o.active_warps, 16);
    EXPECT_DOUBLE_EQ(o.occupancy, 0.5);
    EXPECT_EQ(o.limiters, (std::vector<std::string>{"registers"}));
}

TEST(Gfx942Occupancy, VgprGranuleRoundsUp) {
    // 84 VGPRs round up to 88 (granule 8): 512 / 88 = 5 waves per SIMD = 20 per CU. One-wave
    // workgroups (64 work-items): 20 by registers, 32 by waves, 32 by the one-wave workgroup limit
    // -> 20 workgroups, 20 of 32 waves = 0.625. The same kernel with 80 VGPRs: 512 / 80 = 6 per
    // SIMD -> 24 waves = 0.75.
    Occupancy o = compute_occupancy(arch("gfx942"), {64, 84, 0});
    EXPECT_EQ(o.blocks_per_sm, 20);
    EXPECT_DOUBLE_EQ(o.occupancy, 0.625);
    EXPECT_EQ(o.registers_per_block, 88 * 64);
    o = compute_occupancy(arch("gfx942"), {64, 80, 0});
    EXPECT_EQ(o.blocks_per_sm, 24);
    EXPECT_DOUBLE_EQ(o.occupancy, 0.75);
}

TEST(Gfx942Occupancy, LdsLimited) {
    // 128 work-items = 2 waves, 32 VGPRs (512 / 32 = 16 -> capped at 8 waves per SIMD), 20000 B of
    // LDS -> 20480 B allocated (512-byte blocks): 65536 / 20480 = 3 workgroups = 6 of 32 waves.
    // Registers: 2048 per wave, 32768 / 2048 = 16 per SIMD -> 64 waves -> 32 workgroups;
    // waves: 32 / 2 = 16; barriers 16. min = 3 by LDS -> 0.1875.
    const Occupancy o = compute_occupancy(arch("gfx942"), {128, 32, 20000});
    EXPECT_EQ(o.shared_memory_per_block, 20480);
    EXPECT_EQ(o.blocks_by_shared_memory, 3);
    EXPECT_EQ(o.blocks_per_sm, 3);
    EXPECT_EQ(o.active_warps, 6);
    EXPECT_DOUBLE_EQ(o.occupancy, 0.1875);
    EXPECT_EQ(o.limiters, (std::vector<std::string>{"shared_memory"}));
}

TEST(Gfx942Occupancy, BarrierLimitSparesOneWaveWorkgroups) {
    // 2-wave workgroups (128 work-items), 16 VGPRs: waves 32 / 2 = 16, registers 64 waves -> 32,
    // barriers 16 (LLVM getMaxWorkGroupsPerCU: min(32 / 2, 16)) -> 16 workgroups = 32 waves, full,
    // warps and blocks tie. 1-wave workgroups (64 work-items) need no barrier: 32 workgroups, where
    // the barrier limit alone would have allowed 16 (occupancy 0.5).
    Occupancy o = compute_occupancy(arch("gfx942"), {128, 16, 0});
    EXPECT_EQ(o.blocks_per_sm, 16);
    EXPECT_EQ(o.limiters, (std::vector<std::string>{"warps", "blocks"}));
    o = compute_occupancy(arch("gfx942"), {64, 16, 0});
    EXPECT_EQ(o.blocks_by_blocks, 32);
    EXPECT_EQ(o.blocks_per_sm, 32);
    EXPECT_DOUBLE_EQ(o.occupancy, 1.0);
}

TEST(Gfx942Occupancy, UnlaunchableWorkgroup) {
    // 1024 work-items = 16 waves x 512 VGPRs x 64 = 524288 registers > the CU's 131072.
    const Occupancy o = compute_occupancy(arch("gfx942"), {1024, 512, 0});
    EXPECT_EQ(o.blocks_per_sm, 0);
    EXPECT_NE(o.unlaunchable_reason.find("registers"), std::string::npos) << o.unlaunchable_reason;
}

TEST(Sm37Occupancy, K80RegisterFileIsTwiceGk110s) {
    // 256 threads = 8 warps, 64 registers: 2048 per warp; 131072 / 4 = 32768 per sub-partition / 2048
    // = 16 warps x 4 = 64 warps -> 8 blocks (64K registers would allow 4); warps 64 / 8 = 8 -> tie.
    const Occupancy o = compute_occupancy(arch("sm_37"), {256, 64, 0});
    EXPECT_EQ(o.blocks_per_sm, 8);
    EXPECT_DOUBLE_EQ(o.occupancy, 1.0);
    EXPECT_EQ(o.limiters, (std::vector<std::string>{"warps", "registers"}));
}

TEST(Occupancy, ConfigMappingAndJsonFields) {
    SmSpec sm;  // hand-filled as a100.json would fill it (sm_80)
    sm.compute_capability = "sm_80";
    sm.max_warps = 64;
    sm.max_threads = 2048;
    sm.max_blocks = 32;
    sm.shared_memory_bytes = 164 * 1024;
    sm.shared_memory_per_block_bytes = 163 * 1024;
    sm.shared_memory_alloc_unit = 128;
    sm.shared_memory_reserved_per_block = 1024;
    const OccupancyLimits l = occupancy_limits_from(sm);
    // Same case as Sm86SharedMemoryLimited but on sm_80: smem 21120 -> 167936/21120 = 7 blocks;
    // warps 16, regs 16, blocks 32 -> 7 blocks = 28 warps = 0.4375, shared_memory.
    const Occupancy o = compute_occupancy(l, {128, 32, 20000});
    const nlohmann::json j = occupancy_to_json(o);
    EXPECT_EQ(j["blocks_per_sm"], 7);
    EXPECT_EQ(j["active_warps"], 28);
    EXPECT_EQ(j["max_warps"], 64);
    EXPECT_DOUBLE_EQ(j["occupancy"].get<double>(), 0.4375);
    EXPECT_EQ(j["limiter"], "shared_memory");
    const nlohmann::json tie = occupancy_to_json(compute_occupancy(l, {256, 32, 0}));
    EXPECT_EQ(tie["limiter"], nlohmann::json::array({"warps", "registers"}));
}

}  // namespace
}  // namespace accelsim::simt

#include "models/simt/sm_spec.h"

namespace accelsim::simt {
namespace {

TEST(SmParamsFromSpec, LanesBecomeInitiationIntervals) {
    // A100 per SM: 64 INT32 and 64 FP32 lanes, 16 SFUs, 1024 dense fp16 tensor MACs/cycle, 4
    // sub-partitions -> per sub-partition 16, 16, 4 lanes and 256 MACs:
    // II = 32/16 = 2, 32/16 = 2, 32/4 = 8, 2048/256 = 8.
    SmSpec sm;
    sm.schedulers = 4;
    sm.warp_scheduler = "lrr";
    sm.int_lanes = 64;
    sm.fp32_lanes = 64;
    sm.sfu_lanes = 16;
    sm.tensor_macs_per_cycle.fp16 = 1024;
    sm.shared_memory_bytes = 164 * 1024;
    sm.shared_memory_per_block_bytes = 163 * 1024;
    sm.shared_memory_reserved_per_block = 1024;
    const SmParams p = sm_params_from(sm);
    EXPECT_EQ(p.sub_partitions, 4);
    EXPECT_EQ(p.warp_scheduler, "lrr");
    EXPECT_EQ(p.int_alu.initiation_interval, 2);
    EXPECT_EQ(p.fp32.initiation_interval, 2);
    EXPECT_EQ(p.sfu.initiation_interval, 8);
    EXPECT_EQ(p.tensor.initiation_interval, 8);
    EXPECT_EQ(p.limits.shared_memory_bytes, 164 * 1024);
    // V100-like FP32: 64 lanes / 4 = 16 -> 2; an SM with 128 FP32 lanes (sm_86) -> 32 per part -> 1.
    sm.fp32_lanes = 128;
    EXPECT_EQ(sm_params_from(sm).fp32.initiation_interval, 1);
}

}  // namespace
}  // namespace accelsim::simt
