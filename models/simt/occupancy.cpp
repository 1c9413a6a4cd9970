#include "models/simt/occupancy.h"

#include <algorithm>
#include <climits>

namespace accelsim::simt {

namespace {

std::int64_t round_up(std::int64_t value, std::int64_t unit) { return unit <= 0 ? value : (value + unit - 1) / unit * unit; }

OccupancyLimits make_limits(const char* arch, int max_warps, int max_blocks, std::int64_t smem_per_sm_kb,
                            std::int64_t smem_per_block_kb, int smem_unit, int reserved) {
    OccupancyLimits l;
    l.arch = arch;
    l.max_warps = max_warps;
    l.max_threads = max_warps * kWarpSize;
    l.max_blocks = max_blocks;
    l.shared_memory_bytes = smem_per_sm_kb * 1024;
    l.shared_memory_per_block_bytes = smem_per_block_kb * 1024;
    l.shared_memory_alloc_unit = smem_unit;
    l.shared_memory_reserved_per_block = reserved;
    return l;
}

}  // namespace

std::optional<OccupancyLimits> published_limits(std::string_view arch) {
    // CUDA C++ Programming Guide, Table "Technical Specifications per Compute Capability":
    // resident warps / blocks per SM, shared memory per SM and per block (opt-in); 64K registers,
    // 255 per thread, 1024 threads per block everywhere. Allocation granularity of shared memory
    // and the 1 KB per-block reserve (8.x, 9.0) as in cuda_occupancy.h.
    if (arch == "sm_70") return make_limits("sm_70", 64, 32, 96, 96, 256, 0);
    if (arch == "sm_75") return make_limits("sm_75", 32, 16, 64, 64, 256, 0);
    if (arch == "sm_80") return make_limits("sm_80", 64, 32, 164, 163, 128, 1024);
    if (arch == "sm_86") return make_limits("sm_86", 48, 16, 100, 99, 128, 1024);
    if (arch == "sm_87") return make_limits("sm_87", 48, 16, 164, 163, 128, 1024);  // Jetson Orin
    if (arch == "sm_89") return make_limits("sm_89", 48, 24, 100, 99, 128, 1024);
    if (arch == "sm_90") return make_limits("sm_90", 64, 32, 228, 227, 128, 1024);
    if (arch == "sm_100") return make_limits("sm_100", 64, 32, 228, 227, 128, 1024);  // B200
    if (arch == "sm_37") {  // Tesla K80 (GK210): twice GK110's registers, 112 KB shared memory
        OccupancyLimits l = make_limits("sm_37", 64, 16, 112, 48, 256, 0);
        l.registers = 131072;
        return l;
    }
    if (arch == "gfx942") {
        // AMD CDNA3 (MI300X), in the same rules with waves of 64 (ROCm "AMD GPU specifications":
        // wavefront 64, LDS 64 KiB and a 512 KiB VGPR file per CU; LLVM AMDGPUBaseInfo for gfx90a
        // and later: 512 VGPRs per SIMD lane allocated in granules of 8, at most 8 waves per SIMD and
        // 4 SIMDs per CU, 16 workgroups per CU (barriers) unless a workgroup is one wave; LDS
        // allocated in blocks of 128 dwords).
        OccupancyLimits l;
        l.arch = "gfx942";
        l.wave_size = 64;
        l.max_warps = 32;  // 4 SIMDs x 8 waves
        l.max_threads = 32 * 64;
        l.max_blocks = 16;
        l.max_blocks_single_warp = 32;
        l.registers = 512 * 1024 / 4;        // 32-bit registers per CU
        l.register_alloc_unit = 8 * 64;      // 8 VGPRs x 64 lanes
        l.max_registers_per_thread = 512;    // 256 arch VGPRs + 256 AccVGPRs
        l.register_partitions = 4;           // one VGPR file per SIMD
        l.shared_memory_bytes = 64 * 1024;
        l.shared_memory_per_block_bytes = 64 * 1024;
        l.shared_memory_alloc_unit = 512;
        l.shared_memory_reserved_per_block = 0;
        return l;
    }
    return std::nullopt;
}

const std::vector<std::string>& compute_capability_names() {
    static const std::vector<std::string> names{"sm_37", "sm_70", "sm_75", "sm_80", "sm_86",
                                                "sm_87", "sm_89", "sm_90", "sm_100", "gfx942"};
    return names;
}

Occupancy compute_occupancy(const OccupancyLimits& limits, const BlockResources& block) {
    Occupancy r;
    r.max_warps = limits.max_warps;
    if (block.threads_per_block <= 0) {
        r.unlaunchable_reason = "threads per block must be positive";
        return r;
    }
    const int wave = limits.wave_size > 0 ? limits.wave_size : kWarpSize;
    r.warps_per_block = (block.threads_per_block + wave - 1) / wave;
    r.core_warps_per_block = (block.threads_per_block + kWarpSize - 1) / kWarpSize;
    const std::int64_t regs_per_warp =
        round_up(static_cast<std::int64_t>(block.registers_per_thread) * wave, limits.register_alloc_unit);
    r.registers_per_block = regs_per_warp * r.warps_per_block;
    r.shared_memory_per_block =
        round_up(block.shared_memory_bytes + limits.shared_memory_reserved_per_block, limits.shared_memory_alloc_unit);

    if (block.threads_per_block > limits.max_threads_per_block) {
        r.unlaunchable_reason = std::to_string(block.threads_per_block) + " threads per block exceed the limit of " +
                                std::to_string(limits.max_threads_per_block);
    } else if (block.registers_per_thread < 0 || block.registers_per_thread > limits.max_registers_per_thread) {
        r.unlaunchable_reason = std::to_string(block.registers_per_thread) +
                                " registers per thread exceed the limit of " +
                                std::to_string(limits.max_registers_per_thread);
    } else if (r.registers_per_block > limits.registers) {
        r.unlaunchable_reason = "the block needs " + std::to_string(r.registers_per_block) +
                                " registers, the SM has " + std::to_string(limits.registers);
    } else if (block.shared_memory_bytes < 0 || block.shared_memory_bytes > limits.shared_memory_per_block_bytes) {
        r.unlaunchable_reason = std::to_string(block.shared_memory_bytes) +
                                " bytes of shared memory exceed the per-block limit of " +
                                std::to_string(limits.shared_memory_per_block_bytes);
    }

    r.blocks_by_blocks = r.warps_per_block == 1 && limits.max_blocks_single_warp > 0 ? limits.max_blocks_single_warp
                                                                                      : limits.max_blocks;
    r.blocks_by_warps = std::min(limits.max_warps, limits.max_threads / wave) / r.warps_per_block;
    if (regs_per_warp == 0) {
        r.blocks_by_registers = INT_MAX;
    } else {
        const int partitions = std::max(1, limits.register_partitions);
        const std::int64_t warps_per_partition = (limits.registers / partitions) / regs_per_warp;
        r.blocks_by_registers = static_cast<int>(warps_per_partition * partitions / r.warps_per_block);
    }
    r.blocks_by_shared_memory = r.shared_memory_per_block == 0
                                    ? INT_MAX
                                    : static_cast<int>(limits.shared_memory_bytes / r.shared_memory_per_block);
    if (!r.unlaunchable_reason.empty()) return r;

    r.blocks_per_sm = std::min({r.blocks_by_warps, r.blocks_by_registers, r.blocks_by_shared_memory, r.blocks_by_blocks});
    if (r.blocks_by_warps == r.blocks_per_sm) r.limiters.push_back("warps");
    if (r.blocks_by_registers == r.blocks_per_sm) r.limiters.push_back("registers");
    if (r.blocks_by_shared_memory == r.blocks_per_sm) r.limiters.push_back("shared_memory");
    if (r.blocks_by_blocks == r.blocks_per_sm) r.limiters.push_back("blocks");
    if (r.blocks_per_sm == 0) {
        r.unlaunchable_reason = "no block fits: limited by " + r.limiters.front();
    }
    r.active_warps = r.blocks_per_sm * r.warps_per_block;
    r.occupancy = limits.max_warps > 0 ? static_cast<double>(r.active_warps) / limits.max_warps : 0.0;
    return r;
}

}  // namespace accelsim::simt
