#include "models/tpu/tpu_stats.h"

namespace accelsim::tpu::stat {

using U = StatUnit;

const StatDef mxu_unit_busy_cycles{"chip.core{core}.mxu{mxu}.busy_cycles", U::cycles, "cycles this MXU ran its part"};
const StatDef mxus_used{"chip.mxus_used", U::units, "MXUs the op was split over"};
const StatDef slowest_mxu_compute_cycles{"chip.slowest_mxu.compute_cycles", U::cycles,
                                         "slowest MXU: operands entering the array"};
const StatDef slowest_mxu_fill_drain_cycles{"chip.slowest_mxu.fill_drain_cycles", U::cycles,
                                            "slowest MXU: wavefront filling/draining"};
const StatDef slowest_mxu_weight_load_stall_cycles{"chip.slowest_mxu.weight_load_stall_cycles", U::cycles,
                                                   "slowest MXU: waiting for a weight tile"};
const StatDef slowest_mxu_drain_stall_cycles{"chip.slowest_mxu.drain_stall_cycles", U::cycles,
                                             "slowest MXU: waiting for result buses (os)"};
const StatDef mxu_folds{"chip.mxu.folds", U::tiles, "weight tiles mapped on all MXUs"};
const StatDef mxu_mapping_efficiency{"chip.mxu.mapping_efficiency", U::ratio,
                                     "mean share of PEs holding useful work per fold",
                                     "sum over folds of (useful PEs / all PEs) / chip.mxu.folds"};

const StatDef core_mxu_busy_cycles{"chip.core{core}.mxu.busy_cycles", U::cycles, "cycles the core's MXUs worked"};
const StatDef core_vpu_busy_cycles{"chip.core{core}.vpu.busy_cycles", U::cycles,
                                   "cycles the core's vector unit worked"};
const StatDef core_dma_bytes_in{"chip.core{core}.dma.bytes_in", U::bytes, "HBM to VMEM"};
const StatDef core_dma_bytes_out{"chip.core{core}.dma.bytes_out", U::bytes, "VMEM to HBM"};
const StatDef core_stall_dma_cycles{"chip.core{core}.stall.dma_cycles", U::cycles,
                                    "compute idle waiting for a DMA tile"};
const StatDef core_steps{"chip.core{core}.steps", U::tiles, "pipeline steps (tiles) of this core"};

const StatDef hbm_bytes_read{"chip.hbm.bytes_read", U::bytes, "read from HBM by the DMA engines"};
const StatDef hbm_bytes_written{"chip.hbm.bytes_written", U::bytes, "written to HBM by the DMA engines"};
const StatDef hbm_achieved_bytes_per_second{"chip.hbm.achieved_bytes_per_second", U::bytes_per_second,
                                            "HBM bytes over the op's wall time",
                                            "(chip.hbm.bytes_read + chip.hbm.bytes_written) / chip.wall_time_seconds"};
const StatDef vmem_achieved_bytes_per_second{"chip.vmem.achieved_bytes_per_second", U::bytes_per_second,
                                             "VMEM bytes over the op's wall time",
                                             "bytes.scratchpad / chip.wall_time_seconds"};
const StatDef cmem_bytes_read{"chip.cmem.bytes_read", U::bytes,
                              "read from CMEM by the DMA engines (the previous op's output, tiles read again)"};
const StatDef cmem_bytes_written{"chip.cmem.bytes_written", U::bytes,
                                 "copies left in CMEM (the output for the next op, tiles that will be read again)"};
const StatDef cmem_achieved_bytes_per_second{"chip.cmem.achieved_bytes_per_second", U::bytes_per_second,
                                             "CMEM bytes over the op's wall time",
                                             "(chip.cmem.bytes_read + chip.cmem.bytes_written) / chip.wall_time_seconds"};
const StatDef cmem_hbm_bytes_saved{"chip.cmem.hbm_bytes_saved", U::bytes,
                                   "HBM reads replaced by CMEM reads (first input from the previous op, re-read tiles)"};
const StatDef stall_dma_cycles{"chip.stall.dma_cycles", U::cycles, "sum over cores of compute idle waiting on DMA"};
const StatDef stall_weight_load_cycles{"chip.stall.weight_load_cycles", U::cycles,
                                       "sum over cores of MXU fill/weight-load cycles not hidden behind the previous tile"};
const StatDef stall_vector_unit_cycles{"chip.stall.vector_unit_cycles", U::cycles,
                                       "MXU waiting on the vector unit (0: ops run one at a time, fused work is "
                                       "charged to the elementwise op)"};
const StatDef cold_steps{"chip.cold_steps", U::tiles, "tiles whose fill and drain were not wholly hidden behind the previous tile"};
const StatDef tile_batch{"chip.tile.batch", U::elements, "tile batch"};
const StatDef tile_m{"chip.tile.m", U::elements, "tile rows (vector ops: elements per tile)"};
const StatDef tile_n{"chip.tile.n", U::elements, "tile columns"};
const StatDef tile_k{"chip.tile.k", U::elements, "tile reduction length"};
const StatDef vmem_footprint_bytes{"chip.vmem.footprint_bytes", U::bytes, "VMEM one core uses, double-buffered"};
const StatDef wall_time_seconds{"chip.wall_time_seconds", U::seconds, "cycles at the chip clock",
                                "cycles / clock"};
const StatDef fusion_hbm_bytes_saved{"chip.fusion.hbm_bytes_saved", U::bytes,
                                     "HBM traffic a fused GEMM and elementwise op avoided: the input read from "
                                     "VMEM (elementwise op) or the output left in VMEM (GEMM) instead of HBM"};
const StatDef mxu_utilization{"chip.mxu.utilization", U::ratio, "the op's utilization of the MXUs",
                              "useful MACs / (all MXU PEs x cycles)"};
const StatDef vpu_utilization{"chip.vpu.utilization", U::ratio, "the op's utilization of the vector units",
                              "element-ops / (all vector ALUs x cycles)"};

const StatDef host_stream_bytes{"chip.host_link.stream_bytes", U::bytes,
                                "parameter bytes of the op the on-chip cache does not hold, streamed from the host"};
const StatDef host_stream_cycles{"chip.host_link.stream_cycles", U::cycles,
                                 "cycles the host link takes for them, added to the op's cycles",
                                 "chip.host_link.stream_bytes / (tpu.host_link_bytes_per_second / clock)"};
const StatDef parameter_cache_used_bytes{"chip.parameter_cache.used_bytes", U::bytes,
                                         "parameters held on chip after this op (whole tensors in trace order)"};

}  // namespace accelsim::tpu::stat
