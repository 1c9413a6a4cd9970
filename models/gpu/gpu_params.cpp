#include "models/gpu/gpu_params.h"

namespace accelsim::gpu {

const ParamTable<GpuParams>& gpu_param_table() {
    static const ParamTable<GpuParams> table = [] {
        ParamTable<GpuParams> t;
        t.integer("sms", &GpuParams::sms, 1, 1024, "Streaming multiprocessors per chip.")
            .integer("launch_overhead_cycles", &GpuParams::launch_overhead_cycles, 0, 1e8,
                     "Cycles from a kernel launch to its first block starting.");
        return t;
    }();
    return table;
}

}  // namespace accelsim::gpu
