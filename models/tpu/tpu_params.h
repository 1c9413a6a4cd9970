#pragma once
// Parameters of the TPU-like chip (docs/tpu.md). Plain structs with defaults: models never see
// JSON; sim/engine/systolic_chip.cpp fills them from the ChipConfig.
#include <cstdint>
#include <optional>

#include "models/common/dtype.h"
#include "models/memory/memory_hierarchy.h"
#include "models/mxu/mxu.h"

namespace accelsim::tpu {

// MACs one PE completes per cycle for each operand dtype (mxu.macs_per_pe_per_cycle); 0 = the
// MXU does not run the dtype (it falls to the vector unit, as the roofline assumes).
struct MxuRates {
    double int8 = 1, fp16 = 1, bf16 = 1, fp32 = 0;
    double of(DType t) const {
        switch (t) {
            case DType::int8: return int8;
            case DType::fp16: return fp16;
            case DType::bf16: return bf16;
            case DType::fp32: return fp32;
            case DType::int32: return 0;
        }
        return 0;
    }
};

// One core's vector unit: lanes x sublanes 32-bit ALUs, each completing one element-op per cycle
// (add, mul, max, compare, exp via the transcendental slot: all one op, docs/tpu.md).
struct VectorUnitParams {
    int lanes = 128;
    int sublanes = 8;
    // Cycles of a cross-lane reduction tree (sum/max over a row): log2(lanes) adder stages,
    // paid once per reduction pass of an op (the tree is pipelined across rows).
    int reduction_latency_cycles() const;
    std::int64_t element_ops_per_cycle() const { return static_cast<std::int64_t>(lanes) * sublanes; }
};

// One core's DMA engine between HBM (or CMEM) and VMEM.
struct DmaParams {
    double bytes_per_cycle = 0;  // 0 = limited only by the memory behind it
    int latency_cycles = 0;      // added to every transfer (descriptor issue)
    std::int64_t chunk_bytes = 4096;  // one memory request per chunk of a transfer
};

struct TpuChipParams {
    int cores = 1;
    int mxus_per_core = 1;
    MxuParams mxu;  // every MXU of the chip is alike
    MxuRates mxu_rates;
    VectorUnitParams vector;
    DmaParams dma;
    std::int64_t vmem_bytes = 16 << 20;  // per core
    std::int64_t cmem_bytes = 0;         // per chip, shared; 0 = none
    // CMEM port of the chip, shared by the cores' DMA engines (bytes per core cycle); CMEM is a
    // placement target only when both cmem_bytes and this are > 0.
    double cmem_bytes_per_cycle = 0;
    bool cmem_enabled() const { return cmem_bytes > 0 && cmem_bytes_per_cycle > 0; }
    bool ideal_memory = false;           // operands always ready: only compute is timed
    bool fuse_elementwise = false;       // keep an elementwise op after a GEMM in VMEM
    double clock_hz = 1e9;
    std::uint64_t seed = 1;              // validation operands: seeded per op index
    // The memory system behind the cores (requesters = cores); required unless ideal_memory.
    std::optional<memory::MemoryHierarchyParams> memory;
};

}  // namespace accelsim::tpu
