#pragma once
// The models' parameters from a loaded ChipConfig, in one place: what a config states directly
// is already the model's own struct (ChipConfig's sections); these add what only the chip as a
// whole knows (clock, kind, seed, the memory system behind the cores) and turn the models'
// std::invalid_argument into InputError naming the key.
#include "models/memory/dram.h"
#include "models/memory/memory_hierarchy.h"
#include "models/gpu/gpu_chip.h"
#include "models/simt/simt_gpu.h"
#include "models/tpu/tpu_params.h"
#include "sim/config/chip_config.h"
#include "sim/input_error.h"

namespace accelsim {

// The preset's timing under the config's organisation and overrides (memory::dram_params_from).
memory::DramParams dram_params_from_config(const memory::DramConfig& hbm);

// The memory system of a chip: one requester per TPU core or per SM, the L2 when l2.size_bytes > 0.
memory::MemoryHierarchyParams memory_hierarchy_params_from_config(const ChipConfig& chip);

// The TPU chip: its tpu, compiler and mxu sections, the clock, the seed and (unless memory is
// "ideal") the memory hierarchy.
tpu::TpuChipParams tpu_params_from_config(const ChipConfig& config);

// The GPU's SMs for the engine's `kernel` op (simt::sm_params_from derives their pipelines).
simt::SimtParams simt_params_from(const ChipConfig& config);

// The GPU chip: its SMs, memory system (or ideal memory), launch overhead and the peaks its
// roofline uses.
gpu::GpuChipParams gpu_params_from_config(const ChipConfig& config);

}  // namespace accelsim
