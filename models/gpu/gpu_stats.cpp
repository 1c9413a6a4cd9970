#include "models/gpu/gpu_stats.h"

namespace accelsim::gpu::stat {

using U = StatUnit;

const StatDef l2_warm_lines{"gpu.l2_warm_lines", U::lines,
                             "L2 lines the op found left by the op before it (0: a cold L2)"};
const StatDef l2_warm_input_lines{"gpu.l2_warm_input_lines", U::lines,
                                  "of those, lines of the previous op's output the op reads as its input"};
const StatDef l2_flush_bytes{"gpu.l2_flush_bytes", U::bytes,
                             "dirty L2 bytes written back at the end of the run (counted in hbm bytes, no time)"};
const StatDef kernel_cycles{"simt.kernel_cycles", U::cycles, "launch to last block done, without the launch overhead"};
const StatDef launch_overhead_cycles{"simt.launch_overhead_cycles", U::cycles, "gpu.launch_overhead_cycles"};
const StatDef ipc{"simt.ipc", U::ratio, "warp instructions issued per kernel cycle, whole GPU",
                  "simt.issued / simt.kernel_cycles"};
const StatDef issued{"simt.issued", U::instructions, "warp instructions issued (branches and exits included)"};
const StatDef blocks{"simt.blocks", U::blocks, "thread blocks run"};
const StatDef mma_issued{"simt.mma_issued", U::instructions,
                         "tensor-core warp instructions (mma.m16n8k16: 2048 MACs each; int8 and fp8 mma.m16n8k32: 4096)"};
const StatDef active_lanes{"simt.active_lanes", U::lanes, "active lanes summed over issues"};

const StatDef slots_issued{"simt.slots.issued", U::scheduler_cycles, "scheduler-cycles that issued"};
const StatDef stall_idle{"simt.stall.idle", U::scheduler_cycles, "no valid instruction (no warp, or waiting for fetch)"};
const StatDef stall_scoreboard{"simt.stall.scoreboard", U::scheduler_cycles,
                               "every ready warp waits on a register dependency"};
const StatDef stall_pipeline{"simt.stall.pipeline", U::scheduler_cycles, "the next instruction's pipeline is busy"};
const StatDef stall_barrier{"simt.stall.barrier", U::scheduler_cycles, "warps wait at bar.sync"};

const StatDef lanes_band{"simt.lanes.W{band}", U::instructions,
                         "issues with as many active lanes as the band says (W1_8: 1 to 8; W32: all 32)"};

const StatDef global_requests{"simt.global_requests", U::requests, "warp global loads and stores"};
const StatDef global_sectors{"simt.global_sectors", U::sectors, "32-byte sectors after coalescing"};
const StatDef shared_requests{"simt.shared_requests", U::requests, "warp shared-memory accesses"};
const StatDef shared_wavefronts{"simt.shared_wavefronts", U::wavefronts,
                                "shared-memory wavefronts (more than requests = bank conflicts)"};
const StatDef l1_hits{"simt.l1_hits", U::sectors, "global load sectors that hit in L1"};
const StatDef l1_misses{"simt.l1_misses", U::sectors, "global load sectors that missed in L1"};
const StatDef l2_hits{"simt.l2_hits", U::accesses, "L2 lookups that hit"};
const StatDef l2_accesses{"simt.l2_accesses", U::accesses, "L2 lookups (one per sector)"};
const StatDef l2_hit_rate{"simt.l2_hit_rate", U::ratio, "L2 hits / lookups", "simt.l2_hits / simt.l2_accesses"};
const StatDef memory_latency_avg_cycles{"simt.memory_latency_avg_cycles", U::cycles,
                                        "sector leaving the SM to data back / write accepted, mean"};
const StatDef memory_latency_max_cycles{"simt.memory_latency_max_cycles", U::cycles,
                                        "sector leaving the SM to data back / write accepted, max"};
const StatDef hbm_row_hits{"simt.hbm_row_hits", U::bursts, "HBM bursts that found their row open"};
const StatDef hbm_row_misses{"simt.hbm_row_misses", U::bursts, "HBM bursts that opened a row in an idle bank"};
const StatDef hbm_row_conflicts{"simt.hbm_row_conflicts", U::bursts, "HBM bursts that closed another row first"};
const StatDef hbm_bytes_per_cycle{"simt.hbm_bytes_per_cycle", U::bytes_per_cycle,
                                  "achieved HBM bandwidth over the kernel's cycles",
                                  "bytes.hbm / simt.kernel_cycles"};

const StatDef sampling_simulated_blocks{"gpu.sampling.simulated_blocks", U::blocks,
                                        "blocks of the op's first launch simulated (the rest were skipped waves)"};
const StatDef sampling_total_blocks{"gpu.sampling.total_blocks", U::blocks, "blocks of the op's first launch"};
const StatDef sampling_wave_blocks{"gpu.sampling.wave_blocks", U::blocks,
                                   "blocks per wave: SMs x the occupancy calculator's blocks per SM"};
const StatDef sampling_skipped_waves{"gpu.sampling.skipped_waves", U::waves,
                                     "whole waves skipped and extrapolated from the steady wave time"};
const StatDef sampling_skipped_trips{"gpu.sampling.skipped_trips", U::trips,
                                     "main-loop trips every resident block ran functionally, summed over the skips "
                                     "(gpu.sampling waves_and_trips)"};
const StatDef sampling_trips_per_block{"gpu.sampling.trips_per_block", U::trips,
                                       "back-edges of the main loop each block takes"};
const StatDef sampling_steady_wave_cycles{"gpu.sampling.steady_wave_cycles", U::cycles,
                                          "mean wave time of the steady window at convergence"};
const StatDef sampling_error_estimate{"gpu.sampling.error_estimate", U::ratio,
                                      "error bound of the op's cycles: the steady window's 95% half-width "
                                      "and trend over the skipped waves / cycles"};
const StatDef then_launches{"simt.then.launches", U::launches, "launches after the first (split-K's sum)"};
const StatDef then_cycles{"simt.then.cycles", U::cycles,
                          "their cycles, launch overheads included (in the op's cycles)"};
const StatDef then_issued{"simt.then.issued", U::instructions, "their warp instructions"};
const StatDef tensor_utilization{"simt.tensor_utilization", U::ratio, "the op's utilization on the tensor cores",
                                 "simt.mma_issued x MACs per mma (2048; int8 and fp8 4096) / (tensor-core peak MACs per cycle of the op's dtype x cycles)"};

const StatDef tile_m{"gpu.tile_m", U::elements, "output rows per block (conv: output pixels, implicit-GEMM rows)"};
const StatDef tile_n{"gpu.tile_n", U::elements, "output columns per block (conv: output channels)"};
const StatDef tile_k{"gpu.tile_k", U::elements,
                     "reduction slice staged through shared memory per step (conv: of R*S*C')"};
const StatDef warps_m{"gpu.warps_m", U::warps, "warp rows of the block (warp tile = tile / warps)"};
const StatDef warps_n{"gpu.warps_n", U::warps, "warp columns of the block"};
const StatDef slices_ahead{"gpu.slices_ahead", U::slices,
                           "K slices whose global loads are in flight while one is computed"};
const StatDef splits{"gpu.splits", U::parts,
                     "split-K parts (1: none; else a second launch sums the partials: fp32, or int32 for int8)"};
const StatDef grid{"gpu.grid", U::blocks,
                   "blocks of the launch (GEMM: batch x split-K parts x tile rows x tile columns; conv: "
                   "groups x tile rows x tile columns; vector ops: at most one wave of a grid-stride loop)"};
const StatDef block{"gpu.block", U::threads, "threads per block"};
const StatDef blocks_per_sm{"gpu.blocks_per_sm", U::blocks, "resident blocks per SM (occupancy calculator)"};
const StatDef waves{"gpu.waves", U::waves, "blocks per full wave of resident blocks",
                    "gpu.grid / (SMs x gpu.blocks_per_sm)"};
const StatDef wave_efficiency{"gpu.wave_efficiency", U::ratio, "how full the waves are on average",
                              "gpu.waves / ceil(gpu.waves)"};
const StatDef fp32_fallback{"gpu.fp32_fallback", U::enumeration,
                            "1: a 16-bit GEMM or conv2d ran the FP32 FFMA kernel on fp32 copies (the chip's tensor cores do not run its dtype)"};
const StatDef gemm_m{"gpu.gemm_m", U::elements, "implicit GEMM M = N*OH*OW"};
const StatDef gemm_n{"gpu.gemm_n", U::elements, "implicit GEMM N = K/groups"};
const StatDef gemm_k{"gpu.gemm_k", U::elements, "implicit GEMM K = R*S*C' (C/groups padded to 8 for fp16 and bf16, 16 for int8, unpadded for fp32)"};
const StatDef variant{"gpu.variant", U::enumeration, "0: one warp per row (cols <= 1024), 1: one block per row, 2: softmax warp persistent (row in registers), 3: softmax block, row in shared memory, 4: softmax block, three passes over global memory, 5: PyTorch vectorized layernorm (128-thread block per row), 6: PyTorch layernorm moments + forward kernels (512 then 256 threads per row)"};
const StatDef rows_per_block{"gpu.rows_per_block", U::rows, "rows a block owns per grid-stride trip"};
const StatDef elements_per_thread_step{"gpu.elements_per_thread_step", U::elements,
                                       "elements a thread handles per loop trip (2: packed 16-bit pairs, 4: 8-bit values)"};
const StatDef fused_ops{"gpu.fused_ops", U::ops,
                        "trace ops this kernel runs (compiler.gpu_fusion: the op and those fused into it)"};

}  // namespace accelsim::gpu::stat
