#pragma once
// Theoretical occupancy as NVIDIA's CUDA occupancy calculator computes it (cuda_occupancy.h rules),
// generalised to a wave width W (32 on NVIDIA; 64 on AMD CDNA, where the same rules give LLVM's
// AMDGPU occupancy: VGPRs per SIMD, waves per SIMD, LDS per CU, docs/gpu.md "Wave64"):
//   warps per block      = ceil(threads / W)
//   registers per warp   = roundup(regs_per_thread * W, register_alloc_unit)         (unit 256)
//   register file        : split over `register_partitions` sub-partitions; a warp's registers
//                          live in one of them, so warps fit = partitions * floor((regs / partitions)
//                          / registers per warp)
//   shared mem per block = roundup(smem + reserved_per_block, shared_memory_alloc_unit)
//   blocks per SM        = min(warps limit, registers limit, shared-memory limit, block limit)
// The SIMT core executes 32-lane warps (the ISA's width, kWarpSize); a wave of 64 runs as two of
// them on one scheduler (core_warps_per_block).
// Plain C++, no SystemC, no config types: sim/occupancy maps the config's SmConfig onto
// OccupancyLimits.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accelsim::simt {

constexpr int kWarpSize = 32;  // lanes of one ISA warp instruction

// Per-SM resource limits of one architecture.
struct OccupancyLimits {
    std::string arch = "sm_80";                   // compute capability name, for messages
    int wave_size = 32;                           // threads per warp (wave) in the resource rules: 32 or 64
    int max_warps = 64;                           // resident warps (waves) per SM
    int max_threads = 2048;                       // resident threads per SM
    int max_blocks = 32;                          // resident blocks per SM
    // Resident blocks of a single warp (wave) per SM; 0 = max_blocks. On CDNA a one-wave workgroup
    // takes no barrier resource, so only the wave slots bound it (LLVM getMaxWorkGroupsPerCU).
    int max_blocks_single_warp = 0;
    int max_threads_per_block = 1024;
    int registers = 65536;                        // 32-bit registers per SM
    int register_alloc_unit = 256;                // registers are allocated per warp in units of this
    int max_registers_per_thread = 255;
    int register_partitions = 4;                  // sub-partitions the register file is split into
    std::int64_t shared_memory_bytes = 167936;    // per SM (largest carveout)
    std::int64_t shared_memory_per_block_bytes = 166912;  // most a block may request (opt-in)
    int shared_memory_alloc_unit = 128;
    int shared_memory_reserved_per_block = 1024;  // system use, sm_80 and later
};

// Limits from the CUDA C++ Programming Guide, "Technical Specifications per Compute Capability",
// for sm_70, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100; nullopt for any other name.
std::optional<OccupancyLimits> published_limits(std::string_view arch);
// The compute capabilities published_limits knows, oldest first.
const std::vector<std::string>& compute_capability_names();

struct BlockResources {
    int threads_per_block = 256;
    int registers_per_thread = 32;
    std::int64_t shared_memory_bytes = 0;  // static + dynamic, per block
};

struct Occupancy {
    int blocks_per_sm = 0;
    int warps_per_block = 0;       // warps (waves) of wave_size threads: the resource rules' unit
    int core_warps_per_block = 0;  // 32-lane warps the SIMT core runs per block (2 per wave of 64)
    int active_warps = 0;  // blocks_per_sm * warps_per_block (waves)
    int max_warps = 0;
    double occupancy = 0;  // active_warps / max_warps
    // Blocks each resource alone would allow (INT32_MAX when the resource is unused).
    int blocks_by_warps = 0, blocks_by_registers = 0, blocks_by_shared_memory = 0, blocks_by_blocks = 0;
    std::vector<std::string> limiters;  // "warps", "registers", "shared_memory", "blocks"; ties all listed
    std::string unlaunchable_reason;    // non-empty when the block cannot launch at all (blocks_per_sm 0)
    std::int64_t registers_per_block = 0;      // allocated
    std::int64_t shared_memory_per_block = 0;  // allocated, with reserve and rounding
};

Occupancy compute_occupancy(const OccupancyLimits& limits, const BlockResources& block);

}  // namespace accelsim::simt
