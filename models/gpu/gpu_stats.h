#pragma once
// The GPU chip's statistics (simt.*: what the SMs and the memory system did; gpu.*: how the kernel
// library launched an op), each defined once. Reports and tests look them up by these handles.
#include "models/common/stats.h"

namespace accelsim::gpu::stat {

// The launch.
extern const StatDef kernel_cycles, launch_overhead_cycles, ipc, issued, blocks, mma_issued, active_lanes;
// Scheduler-cycles by what happened (they sum to SMs x sub-partitions x kernel cycles).
extern const StatDef slots_issued, stall_idle, stall_scoreboard, stall_pipeline, stall_barrier;
// Issues by active-lane band (W1_8, W9_16, W17_24, W25_31, W32).
extern const StatDef lanes_band;
// Memory.
extern const StatDef global_requests, global_sectors, shared_requests, shared_wavefronts, l1_hits, l1_misses,
    l2_hits, l2_accesses, l2_hit_rate, memory_latency_avg_cycles, memory_latency_max_cycles, hbm_row_hits,
    hbm_row_misses, hbm_row_conflicts, hbm_bytes_per_cycle;
// Launches after the first (split-K's sum) and the tensor cores' share of peak.
extern const StatDef then_launches, then_cycles, then_issued, tensor_utilization;
// The warm L2 (docs/gpu.md "Warm L2 across ops").
extern const StatDef l2_warm_lines, l2_warm_input_lines, l2_flush_bytes;
// The library's launch choices.
extern const StatDef tile_m, tile_n, tile_k, warps_m, warps_n, slices_ahead, splits, grid, block, blocks_per_sm,
    waves, wave_efficiency, fp32_fallback, gemm_m, gemm_n, gemm_k, variant, rows_per_block, elements_per_thread_step;
// Sampled simulation (gpu.sampling waves; docs/gpu.md "Sampled simulation").
extern const StatDef sampling_simulated_blocks, sampling_total_blocks, sampling_wave_blocks, sampling_skipped_waves,
    sampling_skipped_trips, sampling_trips_per_block,
    sampling_steady_wave_cycles, sampling_error_estimate;
// The fused-graph compiler (fusion.h): trace ops one kernel runs.
extern const StatDef fused_ops;

}  // namespace accelsim::gpu::stat
