#include "models/gpu/gpu_params.h"

namespace accelsim::gpu {

const ParamTable<GpuParams>& gpu_param_table() {
    static const ParamTable<GpuParams> table = [] {
        ParamTable<GpuParams> t;
        t.integer("sms", &GpuParams::sms, 1, 1024, "Streaming multiprocessors per chip.")
            .integer("launch_overhead_cycles", &GpuParams::launch_overhead_cycles, 0, 1e8,
                     "Device cycles each kernel costs besides its blocks (from the previous kernel's end, launched back to back, "
                     "to its first block starting); the host's part of a launch is the host section's.")
            .boolean("cold_l2_per_op", &GpuParams::cold_l2_per_op,
                     "true: every op starts with an empty L2 (kernel studies); false: an op's L2 starts with what "
                     "the op before it left, its output read as the next op's input (docs/gpu.md).")
            .choice("sampling", &GpuParams::sampling, kGpuSamplingNames,
                    "Sampled simulation of library ops (docs/gpu.md \"Sampled simulation\"): `off` simulates every "
                    "block; `waves` simulates a launch of many identical waves of blocks until the per-wave time "
                    "predicts the rest (the 95% bound of the steady waves' mean and trend over the waves to "
                    "skip within 1% of the op's cycles), skips all but the last full wave and "
                    "extrapolates their cycles and work counters; the tail is simulated. `waves_and_trips` also samples "
                    "the trips of a GEMM's main loop (docs/gpu.md \"Sampled simulation: loop trips\"): while every "
                    "resident warp is in the loop and the per-trip time has converged by the same rule, the blocks "
                    "run all but their last trips functionally and the trips' cycles and counters are extrapolated. "
                    "`kernel` ops are never sampled.")
            .integer("max_kernel_cycles", &GpuParams::max_kernel_cycles, 1, 1e15,
                     "Watchdog: a kernel launch still running after this many cycles is stopped (exit 1, "
                     "naming the warps still running and their PCs); see docs/reliability.md.")
            .integer("max_kernel_instructions", &GpuParams::max_kernel_instructions, 1, 1e15,
                     "Watchdog: a kernel launch that has issued this many warp instructions (all SMs) and is "
                     "still running is stopped the same way; bounds the host time of a whole grid looping forever.");
        return t;
    }();
    return table;
}

const ParamTable<GpuParams>& gpu_compiler_param_table() {
    static const ParamTable<GpuParams> table = [] {
        ParamTable<GpuParams> t;
        t.choice("gpu_fusion", &GpuParams::fusion, kGpuFusionNames,
                 "Fused-graph compiler of GPU-like chips (docs/gpu.md, \"Fused graphs\"): `none` runs one kernel per "
                 "trace op; `epilogue` runs elementwise ops after a GEMM in its epilogue (GELU, residual add, "
                 "scale); `tensorrt_like` adds residual add + layernorm in one kernel and fused multi-head "
                 "attention; `auto` is `tensorrt_like` when host.launch is `engine`, `none` otherwise.");
        return t;
    }();
    return table;
}

GpuFusion resolve_gpu_fusion(GpuFusion fusion, bool engine_launch) {
    if (fusion != GpuFusion::automatic) return fusion;
    return engine_launch ? GpuFusion::tensorrt_like : GpuFusion::none;
}

}  // namespace accelsim::gpu
