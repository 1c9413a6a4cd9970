#include "sim/roofline/roofline.h"

#include <sstream>
#include <stdexcept>

#include "sim/input_error.h"

namespace accelsim {

namespace {

std::string where(const Op& op) {
    std::ostringstream s;
    if (!op.file.empty()) s << op.file << ":" << op.line << ": ";
    s << "op '" << op.name << "' (" << to_string(op.kind) << ", " << to_string(op.dtype) << ")";
    return s.str();
}

// The largest bound; ties go to the first in this fixed order so the result is deterministic.
void choose_bound(Roofline& r) {
    r.bound.clear();
    r.bound_cycles = 0;
    for (const char* key : {"compute", "hbm", "cmem", "l2", "latency"}) {
        auto it = r.cycles.find(key);
        if (it != r.cycles.end() && (r.bound.empty() || it->second > r.bound_cycles)) {
            r.bound = key;
            r.bound_cycles = it->second;
        }
    }
}

}  // namespace

double matrix_macs_per_cycle(const ChipConfig& chip, DType dtype) {
    if (chip.kind == ChipKind::systolic) {
        return static_cast<double>(chip.tpu.cores) * chip.tpu.mxus_per_core * chip.mxu.rows *
               chip.mxu.cols * chip.mxu.macs_per_pe_per_cycle.of(dtype);
    }
    return static_cast<double>(chip.gpu.sms) * chip.sm.tensor_macs_per_cycle.of(dtype);
}

double hbm_bytes_per_cycle(const ChipConfig& chip) {
    return chip.hbm.peak_bytes_per_second() / chip.clock_hz();
}

double cmem_bytes_per_cycle(const ChipConfig& chip) {
    return chip.kind == ChipKind::systolic && chip.tpu.cmem_bytes > 0 ? chip.tpu.cmem_bytes_per_cycle : 0.0;
}

ComputeUnit compute_unit_for(const Op& op, const ChipConfig& chip) {
    if (chip.kind == ChipKind::systolic) {
        if (op.kind == OpKind::kernel)
            throw InputError(where(op) + ": kernel ops run only on simt chips (config '" +
                             chip.name + "' is systolic)");
        if (is_gemm_like(op.kind)) {
            const double macs = matrix_macs_per_cycle(chip, op.dtype);
            if (macs > 0) return {"mxu", macs};
            // A dtype the MXUs do not support (fp32 on TPUs) runs on the vector unit, one MAC per
            // lane per cycle.
        }
        return {"vector",
                static_cast<double>(chip.tpu.cores) * chip.tpu.vector.lanes * chip.tpu.vector.sublanes};
    }
    const double sms = chip.gpu.sms;
    if (is_gemm_like(op.kind)) {
        const double tensor = matrix_macs_per_cycle(chip, op.dtype);
        if (tensor > 0) return {"tensor", tensor};
        if (op.dtype == DType::int8) return {"int", sms * chip.sm.int_lanes};
        return {"fp32", sms * chip.sm.fp32_lanes};
    }
    // Vector ops and kernels: FP32 pipes (elementwise ops per SM per cycle = FP32 lanes).
    return {"fp32", sms * chip.sm.fp32_lanes};
}

Roofline compute_roofline(const Op& op, const ChipConfig& chip) {
    Roofline r;
    const ComputeUnit unit = compute_unit_for(op, chip);
    r.compute_unit = unit.name;
    const double work = is_gemm_like(op.kind)
                            ? static_cast<double>(op.macs())
                            : static_cast<double>(op.vector_elements()) * op.vector_ops_per_element();
    r.compute_cycles = unit.ops_per_cycle > 0 ? work / unit.ops_per_cycle : 0;
    r.cycles["compute"] = r.compute_cycles;

    const std::int64_t bytes = op.compulsory_bytes();
    if (chip.memory != "ideal") {
        r.bytes["hbm"] = bytes;
        r.cycles["hbm"] = static_cast<double>(bytes) / hbm_bytes_per_cycle(chip);
    }
    if (chip.kind == ChipKind::systolic) {
        r.bytes["scratchpad"] = bytes;  // every operand passes through VMEM once
    } else {
        if (chip.memory != "ideal" && chip.l2.size_bytes > 0) {
            r.bytes["l2"] = bytes;
            r.cycles["l2"] = static_cast<double>(bytes) /
                             (chip.l2.slices * chip.l2.bytes_per_cycle_per_slice);
        }
        if (chip.gpu.launch_overhead_cycles > 0)
            r.cycles["latency"] = chip.gpu.launch_overhead_cycles;
    }
    choose_bound(r);
    return r;
}

void apply_placement(Roofline& r, const ChipConfig& chip, std::int64_t hbm_bytes_off, std::int64_t cmem_bytes) {
    if (hbm_bytes_off == 0 && cmem_bytes == 0) return;
    auto hbm = r.bytes.find("hbm");
    if (hbm == r.bytes.end()) throw std::logic_error("apply_placement: the roofline has no hbm level");
    if (hbm_bytes_off < 0 || hbm_bytes_off > hbm->second || cmem_bytes < 0)
        throw std::logic_error("apply_placement: bytes off HBM out of range");
    hbm->second -= hbm_bytes_off;
    r.cycles["hbm"] = static_cast<double>(hbm->second) / hbm_bytes_per_cycle(chip);
    if (cmem_bytes > 0) {
        const double port = cmem_bytes_per_cycle(chip);
        if (port <= 0) throw std::logic_error("apply_placement: CMEM bytes on a chip without CMEM");
        r.bytes["cmem"] = cmem_bytes;
        r.cycles["cmem"] = static_cast<double>(cmem_bytes) / port;
    }
    choose_bound(r);
}

}  // namespace accelsim
