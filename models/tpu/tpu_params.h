#pragma once
// Parameters of the TPU-like chip (docs/tpu.md). Plain structs with defaults: models never see
// JSON; sim/config fills them from the ChipConfig through their parameter tables.
#include <cstdint>
#include <optional>

#include "models/common/dtype.h"
#include "models/common/param_table.h"
#include "models/common/quantization.h"
#include "models/memory/memory_hierarchy.h"
#include "models/mxu/mxu.h"

namespace accelsim::tpu {

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

// What a TPU config describes (its `tpu` and `compiler` sections, tpu_param_table and
// tpu_compiler_param_table); TpuChipParams adds the MXU and the memory system behind the cores.
struct TpuParams {
    int cores = 1;
    int mxus_per_core = 1;
    VectorUnitParams vector;
    DmaParams dma;
    std::int64_t vmem_bytes = 16 << 20;  // per core
    std::int64_t cmem_bytes = 0;         // per chip, shared; 0 = none
    // CMEM port of the chip, shared by the cores' DMA engines (bytes per core cycle); CMEM is a
    // placement target only when both cmem_bytes and this are > 0.
    double cmem_bytes_per_cycle = 0;
    bool cmem_enabled() const { return cmem_bytes > 0 && cmem_bytes_per_cycle > 0; }
    bool fuse_elementwise = false;       // keep an elementwise op after a GEMM in VMEM
    // Edge TPU (docs/tpu.md "Int8-only chips and host-streamed parameters"): ops of any dtype but
    // int8 are refused; the model's parameters stay on chip up to parameter_cache_bytes (whole
    // tensors, in trace order), and the rest cross the host link every inference.
    bool int8_only = false;
    std::int64_t parameter_cache_bytes = 0;  // 0: parameters are read from the chip's memory
    double host_link_bytes_per_second = 0;   // streams the parameters the cache does not hold
    bool streams_parameters() const { return parameter_cache_bytes > 0 && host_link_bytes_per_second > 0; }
};

const ParamTable<TpuParams>& tpu_param_table();           // the `tpu` section
const ParamTable<TpuParams>& tpu_compiler_param_table();  // the `compiler` section

struct TpuChipParams : TpuParams {
    MxuParams mxu;  // every MXU of the chip is alike
    bool ideal_memory = false;           // operands always ready: only compute is timed
    double clock_hz = 1e9;
    std::uint64_t seed = 1;              // validation operands: seeded per op index
    ActivationOutliers outliers;         // of int8/fp8 GEMM and convolution activations
    // The memory system behind the cores (requesters = cores); required unless ideal_memory.
    std::optional<memory::MemoryHierarchyParams> memory;
};

}  // namespace accelsim::tpu
