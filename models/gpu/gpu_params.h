#pragma once
// Chip-level figures of a GPU-like chip (the config's `gpu` section); each SM is described by
// simt::SmSpec.
#include "models/common/param_table.h"

namespace accelsim::gpu {

struct GpuParams {
    int sms = 1;
    int launch_overhead_cycles = 0;  // from a kernel launch to its first block starting
};

const ParamTable<GpuParams>& gpu_param_table();

}  // namespace accelsim::gpu
