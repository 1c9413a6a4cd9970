#pragma once
// Per-operator roofline (docs/roofline.md): the cycles an op needs at least on each resource, at the
// peak of the unit and dtype that would run it. Chip-neutral: the chip (models/common/chip_model.h)
// says which unit runs an op and what its memory levels move per cycle; this file turns that and the
// op's work and compulsory bytes into bounds. Every cycle model's result is checked against them.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/common/op.h"

namespace accelsim {

// The unit of a chip that would execute an op, and its peak per chip cycle.
struct ComputeUnit {
    std::string name;          // "mxu", "vector" (systolic); "tensor", "fp32", "int" (simt); ...
    double ops_per_cycle = 0;  // MACs per cycle for GEMM-like ops, element-ops per cycle otherwise
    // A GEMM-like op whose dtype the chip's matrix unit does not run, so it falls to a slower unit
    // (fp16 on a TPU whose MXU has no fp16 rate): reports announce it.
    bool matrix_fallback = false;
};

// What a chip's memory levels move per chip cycle at peak, and which of them every compulsory byte
// of an op crosses once.
struct MemoryPeaks {
    // Levels with a bandwidth bound, by the report's names ("hbm", "l2", "cmem").
    std::map<std::string, double> bytes_per_cycle;
    // Levels that carry an op's compulsory bytes ("hbm", "l2", "scratchpad"): each gets the bytes,
    // and a cycle bound when it has a bandwidth above.
    std::vector<std::string> compulsory_levels;
    // A fixed cost every op pays first (a GPU's launch overhead); 0 = none.
    double latency_cycles = 0;
    // 0 when the level has no bandwidth entry.
    double of(const std::string& level) const {
        auto it = bytes_per_cycle.find(level);
        return it == bytes_per_cycle.end() ? 0.0 : it->second;
    }
};

struct Roofline {
    std::string compute_unit;
    double compute_cycles = 0;
    bool matrix_fallback = false;  // see ComputeUnit::matrix_fallback
    // Lower bounds by resource, keyed by the report's names: "compute", "hbm", "cmem", "l2", "latency",
    // "host_link" (parameters streamed from the host, Edge TPU).
    std::map<std::string, double> cycles;
    // Compulsory bytes by memory level: every input read once, every output written once.
    std::map<std::string, std::int64_t> bytes;
    std::string bound;       // the key of the largest entry of `cycles`
    double bound_cycles = 0;
};

// The op's bounds on `unit` behind `memory`.
Roofline roofline_of(const Op& op, const ComputeUnit& unit, const MemoryPeaks& memory);

// Sets bound and bound_cycles to the largest entry of `cycles`; ties go to the first of compute,
// hbm, cmem, l2, latency, host_link, so the result is deterministic.
void choose_bound(Roofline& roofline);

// A chip's lowering placed some of an op's compulsory bytes off HBM: `hbm_bytes_off` of them stay
// in VMEM (fusion) or come from CMEM, and `cmem_bytes` cross the CMEM port (an input read from
// CMEM, an output copied there for the next op). Moves them to their level, recomputes the hbm and
// cmem bounds and the bound, so the roofline stays a lower bound of what the chip must move where
// (docs/roofline.md, "Placement"). Throws std::logic_error for bytes the roofline cannot hold.
void apply_placement(Roofline& roofline, const MemoryPeaks& memory, std::int64_t hbm_bytes_off, std::int64_t cmem_bytes);

}  // namespace accelsim
