#pragma once
// Chips and ops shared by the TPU tests: built from plain params, no config files.
#include "models/memory/dram.h"
#include "models/tpu/tpu_chip.h"

namespace accelsim::tpu::tpu_test {

// One core (or `cores`), `mxus` 128x128 MXUs per core, 16 MiB VMEM, HBM2 with `channels`
// channels (each 128 bit at 2 Gb/s = 32 GB/s = 32 B per 1 GHz cycle).
inline TpuChipParams hierarchy_chip(int channels, int cores = 1, int mxus = 1) {
    TpuChipParams p;
    p.cores = cores;
    p.mxus_per_core = mxus;
    p.mxu.rows = p.mxu.cols = 128;
    p.vmem_bytes = 16 << 20;
    p.clock_hz = 1e9;
    memory::MemoryHierarchyParams m;
    m.requesters = cores;
    m.clock_hz = p.clock_hz;
    m.crossbar.bytes_per_cycle_per_port = 1e6;  // the crossbar never limits here
    m.dram = memory::dram_preset("HBM2");
    m.dram.channels = channels;
    m.dram.data_rate_gbps = 2.0;
    p.memory = m;
    return p;
}

inline Op matmul(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype = DType::bf16) {
    Op op;
    op.kind = OpKind::matmul;
    op.name = "mm";
    op.dtype = dtype;
    op.gemm = GemmShape{1, m, n, k};
    return op;
}

inline Op vector_op(OpKind kind, std::int64_t rows, std::int64_t cols) {
    Op op;
    op.kind = kind;
    op.name = "v";
    op.dtype = DType::bf16;
    op.rows = rows;
    op.cols = cols;
    op.elements = rows * cols;
    return op;
}

inline Op elementwise(OpKind kind, std::int64_t elements) {
    Op op = vector_op(kind, 1, 1);
    op.elements = elements;
    return op;
}

// The value of the op's stat `name`; a missing stat is a test failure (and -1).
// Works on a TpuOpResult and on an OpReport (both carry `stats`).
template <class Result>
double stat(const Result& r, const std::string& name) {
    for (const auto& s : r.stats)
        if (s.name == name) return s.value;
    ADD_FAILURE() << "no stat " << name;
    return -1;
}

inline std::int64_t level_bytes(const TpuOpResult& r, const std::string& level) {
    auto it = r.bytes.find(level);
    return it == r.bytes.end() ? 0 : it->second;
}

}  // namespace accelsim::tpu::tpu_test
