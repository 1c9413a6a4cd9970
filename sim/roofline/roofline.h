#pragma once
// Per-operator roofline: the cycles an op needs at least, on each resource, at the peak of the unit
// and dtype that would run it. Every cycle model's result is checked to be at or above the bound.
#include <cstdint>
#include <map>
#include <string>

#include "models/common/op.h"
#include "sim/config/chip_config.h"

namespace accelsim {

// The unit of a chip that would execute an op, and its peak per chip cycle.
struct ComputeUnit {
    std::string name;          // "mxu", "vector" (systolic); "tensor", "fp32", "int" (simt)
    double ops_per_cycle = 0;  // MACs per cycle for GEMM-like ops, element-ops per cycle otherwise
};

// Which unit runs `op` on `chip`: the matrix unit when it supports the op's dtype, the vector
// unit (systolic) or FP32/integer pipes (simt) otherwise. Throws InputError (naming the op's
// file:line) for an op the chip cannot run at all (a kernel on a systolic chip).
ComputeUnit compute_unit_for(const Op& op, const ChipConfig& chip);

// Matrix-unit MACs per cycle for a dtype over the whole chip (0 when unsupported).
double matrix_macs_per_cycle(const ChipConfig& chip, DType dtype);
// HBM bytes per chip cycle at peak.
double hbm_bytes_per_cycle(const ChipConfig& chip);
// CMEM port bytes per chip cycle (systolic chips with tpu.cmem_bytes > 0; 0 = no CMEM).
double cmem_bytes_per_cycle(const ChipConfig& chip);

struct Roofline {
    std::string compute_unit;
    double compute_cycles = 0;
    // Lower bounds by resource, keyed by the report's names: "compute", "hbm", "cmem", "l2", "latency".
    std::map<std::string, double> cycles;
    // Compulsory bytes by memory level: every input read once, every output written once.
    std::map<std::string, std::int64_t> bytes;
    std::string bound;       // the key of the largest entry of `cycles`
    double bound_cycles = 0;
};

Roofline compute_roofline(const Op& op, const ChipConfig& chip);

// A systolic chip's lowering placed some of an op's compulsory bytes off HBM: `hbm_bytes_off` of
// them stay in VMEM (fusion) or come from CMEM, and `cmem_bytes` cross the CMEM port (an input
// read from CMEM, an output copied there for the next op). Moves them to their level, recomputes
// the hbm and cmem bounds and the bound, so the roofline stays a lower bound of what the chip
// must move where (docs/roofline.md, "Placement").
void apply_placement(Roofline& roofline, const ChipConfig& chip, std::int64_t hbm_bytes_off, std::int64_t cmem_bytes);

}  // namespace accelsim
