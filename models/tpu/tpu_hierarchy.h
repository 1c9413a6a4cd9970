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
#include <vector>

#include "models/memory/memory_hierarchy.h"
#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_lowering.h"

namespace accelsim::tpu {

class HierarchyModel {
public:
    explicit HierarchyModel(const TpuChipParams& params);  // params.memory must be set
    // fused: the op's first input is the previous GEMM's output, still in VMEM.
    TpuOpResult run(const Op& op, bool validate, std::int64_t op_index, bool fused);

private:
    struct Transfer {
        memory::Picoseconds done = 0;
        std::int64_t bytes = 0;
    };
    Transfer transfer(int core, const DmaSegment& segment, bool write, memory::Picoseconds request);
    std::uint64_t allocate(std::int64_t bytes);
    NumericsCheck validate_gemm(const Op& op, const OpPlan& plan, std::int64_t op_index) const;

    TpuChipParams params_;
    memory::MemoryHierarchy memory_;
    memory::Picoseconds now_ = 0;                  // end of the previous op
    std::vector<memory::Picoseconds> dma_free_;    // per core: DMA engine free to issue
    std::uint64_t next_address_ = 0;               // bump allocator of HBM addresses
    std::uint64_t address_space_ = 0;
};

}  // namespace accelsim::tpu
