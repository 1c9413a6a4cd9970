#pragma once
// Chip-level figures of a GPU-like chip (the config's `gpu` section); each SM is described by
// simt::SmSpec.
#include <cstdint>

#include "models/common/enum_names.h"
#include "models/common/param_table.h"
#include "models/simt/isa.h"

namespace accelsim::gpu {

// The fused-graph compiler for GPU-like chips (compiler.gpu_fusion; models/gpu/fusion.h).
enum class GpuFusion : std::uint8_t {
    automatic,      // tensorrt_like when host.launch is engine (an inference engine is a fused graph), else none
    none,           // one kernel per trace op, as PyTorch eager runs them
    epilogue,       // elementwise ops after a GEMM run in its epilogue (bias, GELU, residual add, scale)
    tensorrt_like,  // epilogue, plus residual add + layernorm in one kernel and fused multi-head attention
};
inline constexpr EnumNames<GpuFusion, 4> kGpuFusionNames = {{{GpuFusion::automatic, "auto"},
                                                            {GpuFusion::none, "none"},
                                                            {GpuFusion::epilogue, "epilogue"},
                                                            {GpuFusion::tensorrt_like, "tensorrt_like"}}};
inline std::string_view to_string(GpuFusion f) { return name_of(kGpuFusionNames, f); }

// Sampled simulation of lowered ops (docs/gpu.md "Sampled simulation"): off runs every block;
// waves runs a launch of many identical waves until the wave time converges and extrapolates.
enum class GpuSampling : std::uint8_t { off, waves, waves_and_trips };
inline constexpr EnumNames<GpuSampling, 3> kGpuSamplingNames = {
    {{GpuSampling::off, "off"}, {GpuSampling::waves, "waves"}, {GpuSampling::waves_and_trips, "waves_and_trips"}}};
inline std::string_view to_string(GpuSampling s) { return name_of(kGpuSamplingNames, s); }

struct GpuParams {
    int sms = 1;
    // true: every op starts with an empty L2 (kernel studies); false: an op's L2 starts with what
    // the op before it left (docs/gpu.md "Warm L2 across ops").
    bool cold_l2_per_op = false;
    int launch_overhead_cycles = 0;  // device cycles per kernel besides its blocks (the host part: HostParams)
    // Watchdog (simt::SmParams::max_cycles, max_issued): a launch past either limit is stopped.
    std::int64_t max_kernel_cycles = static_cast<std::int64_t>(simt::kDefaultMaxKernelCycles);
    std::int64_t max_kernel_instructions = static_cast<std::int64_t>(simt::kDefaultMaxKernelInstructions);
    GpuFusion fusion = GpuFusion::automatic;  // the compiler section's gpu_fusion
    GpuSampling sampling = GpuSampling::off;
};

const ParamTable<GpuParams>& gpu_param_table();
// The simt keys of the compiler section (gpu_fusion).
const ParamTable<GpuParams>& gpu_compiler_param_table();
// `auto` resolved: tensorrt_like when the ops are launched by an inference engine, none otherwise.
GpuFusion resolve_gpu_fusion(GpuFusion fusion, bool engine_launch);

}  // namespace accelsim::gpu
