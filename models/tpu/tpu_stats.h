#pragma once
// The TPU chip's statistics (chip.*), each defined once. Reports and tests look them up by these
// handles.
#include "models/common/stats.h"

namespace accelsim::tpu::stat {

// Ideal-MXU chips (tpu_chip): per MXU and for the slowest one.
extern const StatDef mxu_unit_busy_cycles, mxus_used, slowest_mxu_compute_cycles, slowest_mxu_fill_drain_cycles,
    slowest_mxu_weight_load_stall_cycles, slowest_mxu_drain_stall_cycles, mxu_folds, mxu_mapping_efficiency;
// Chips with a memory hierarchy (tpu_hierarchy): per core.
extern const StatDef core_mxu_busy_cycles, core_vpu_busy_cycles, core_dma_bytes_in, core_dma_bytes_out,
    core_stall_dma_cycles, core_steps;
// Whole chip.
extern const StatDef hbm_bytes_read, hbm_bytes_written, hbm_achieved_bytes_per_second,
    vmem_achieved_bytes_per_second, cmem_bytes_read, cmem_bytes_written, cmem_achieved_bytes_per_second,
    cmem_hbm_bytes_saved, stall_dma_cycles, stall_weight_load_cycles, stall_vector_unit_cycles, cold_steps,
    tile_batch, tile_m, tile_n, tile_k, vmem_footprint_bytes, wall_time_seconds, fusion_hbm_bytes_saved,
    mxu_utilization, vpu_utilization;
// Chips that stream parameters from the host (Edge TPU).
extern const StatDef host_stream_bytes, host_stream_cycles, parameter_cache_used_bytes;

}  // namespace accelsim::tpu::stat
