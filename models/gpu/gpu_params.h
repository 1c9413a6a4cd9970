#pragma once
// Chip-level figures of a GPU-like chip (the config's `gpu` section); each SM is described by
// simt::SmSpec.
#include <cstdint>

#include "models/common/param_table.h"
#include "models/simt/isa.h"

namespace accelsim::gpu {

struct GpuParams {
    int sms = 1;
    // true: every op starts with an empty L2 (kernel studies); false: an op's L2 starts with what
    // the op before it left (docs/gpu.md "Warm L2 across ops").
    bool cold_l2_per_op = false;
    int launch_overhead_cycles = 0;  // device cycles per kernel besides its blocks (the host part: HostParams)
    // Watchdog (simt::SmParams::max_cycles, max_issued): a launch past either limit is stopped.
    std::int64_t max_kernel_cycles = static_cast<std::int64_t>(simt::kDefaultMaxKernelCycles);
    std::int64_t max_kernel_instructions = static_cast<std::int64_t>(simt::kDefaultMaxKernelInstructions);
};

const ParamTable<GpuParams>& gpu_param_table();

}  // namespace accelsim::gpu
