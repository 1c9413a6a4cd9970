#pragma once
// The TPU chip with a memory hierarchy: runs the tile schedule of tpu_lowering.h on the cores'
// DMA engines, MXUs and vector units against the shared memory system (models/memory).
//
// Timing (docs/tpu.md, "Double buffering"): per core, step i's inputs are requested when their
// buffer is free (the compute of step i-2 has ended; steps 0 and 1 at the op's start), so the
// transfer of the next tile overlaps the compute of the current one. Compute of step i starts at
// max(end of compute i-1, inputs of i delivered); it costs the tile's warm cycles when it follows
// step i-1 back to back and its cold cycles (fill and drain) after an idle gap. A finished output
// tile is written back from its compute's end. All cores' transfers go to the memory system in
// the order of their request times (ties: lower core first, write-backs before reads), so the
// busy-until DRAM channels see the cores' traffic interleaved as in time.
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "models/memory/memory_hierarchy.h"
#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_lowering.h"

namespace accelsim::tpu {

// One core's pipeline for one op: its DMA engine's transfer requests in time order (prefetches of
// step inputs, write-backs of finished output tiles) and the compute that follows from them.
// Request times never decrease, so any driver that executes every core's next request in global
// time order (ties: lower core first) gives the same result.
class CorePipeline {
public:
    CorePipeline(HierarchyModel& model, int core, const std::vector<TileStep>& steps, memory::Picoseconds start);
    bool done() const { return next_ >= steps_->size() && writebacks_.empty(); }
    memory::Picoseconds next_request() const;  // time of the next transfer request
    void execute_next();                       // performs it (memory accesses at that time)
    int core() const { return core_; }

    // Results, complete once done().
    memory::Picoseconds end = 0;
    std::int64_t busy_cycles = 0, dma_wait_cycles = 0, fill_cycles = 0, cold_steps = 0;
    std::int64_t bytes_in = 0, bytes_out = 0, vmem_bytes = 0;  // bytes_in / bytes_out: HBM
    std::int64_t cmem_in = 0, cmem_out = 0;                    // CMEM -> VMEM, VMEM -> CMEM

private:
    HierarchyModel* model_;
    int core_;
    const std::vector<TileStep>* steps_;
    memory::Picoseconds start_;
    std::size_t next_ = 0;                     // next step whose inputs are to be fetched
    std::vector<memory::Picoseconds> compute_end_;
    std::deque<std::pair<memory::Picoseconds, DmaSegment>> writebacks_;  // requested, not yet issued
};

// The default PipelineDriver (tpu_chip.h): a plain loop executing the earliest request of any core.
void run_pipelines_in_time_order(std::vector<CorePipeline>& pipelines);

class HierarchyModel {
public:
    explicit HierarchyModel(const TpuChipParams& params);  // params.memory must be set
    // place: where the op's first input comes from and its output goes (TpuChip decides).
    TpuOpResult run(const Op& op, bool validate, std::int64_t op_index, const Placement& place);
    void set_driver(PipelineDriver driver) { driver_ = std::move(driver); }

    struct Transfer {
        memory::Picoseconds done = 0;
        std::int64_t bytes = 0;       // at the segment's level (HBM or CMEM)
        std::int64_t cmem_copy = 0;   // bytes a write also left in CMEM
    };
    // One DMA transfer of core `core` requested at `request` (used by CorePipeline).
    Transfer transfer(int core, const DmaSegment& segment, bool write, memory::Picoseconds request);
    const TpuChipParams& params() const { return params_; }

private:
    std::uint64_t allocate(std::int64_t bytes);
    // CMEM port: `bytes` offered at `issue`; returns when the last byte has passed.
    memory::Picoseconds cmem_access(std::int64_t bytes, memory::Picoseconds issue);
    NumericsCheck validate_gemm(const Op& op, const OpPlan& plan, std::int64_t op_index) const;

    TpuChipParams params_;
    memory::MemoryHierarchy memory_;
    memory::Picoseconds now_ = 0;                  // end of the previous op
    std::vector<memory::Picoseconds> dma_free_;    // per core: DMA engine free to issue
    memory::Picoseconds cmem_free_ = 0;            // the CMEM port is busy until then (busy-until)
    std::uint64_t next_address_ = 0;               // bump allocator of HBM addresses
    std::uint64_t address_space_ = 0;
    PipelineDriver driver_;
};

}  // namespace accelsim::tpu
