#pragma once
// Chip-level figures of a GPU-like chip (the config's `gpu` section); each SM is described by
// simt::SmSpec.
#include <cstdint>

#include "models/common/param_table.h"
#include "models/simt/isa.h"

namespace accelsim::gpu {

struct GpuParams {
    int sms = 1;
    int launch_overhead_cycles = 0;  // from a kernel launch to its first block starting
    // Watchdog (simt::SmParams::max_cycles, max_issued): a launch past either limit is stopped.
    std::int64_t max_kernel_cycles = static_cast<std::int64_t>(simt::kDefaultMaxKernelCycles);
    std::int64_t max_kernel_instructions = static_cast<std::int64_t>(simt::kDefaultMaxKernelInstructions);
};

const ParamTable<GpuParams>& gpu_param_table();

}  // namespace accelsim::gpu
