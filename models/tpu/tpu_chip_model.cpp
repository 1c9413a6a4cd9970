#include "models/tpu/tpu_chip_model.h"

#include <stdexcept>
#include <string>

namespace accelsim::tpu {

TpuChipModel::TpuChipModel(const TpuChipParams& params, const TpuChipModelOptions& options)
    : options_(options), chip_(std::make_unique<TpuChip>(params)) {
    if (options.systemc) {
        cores_ = std::make_unique<TpuCoresModule>("tpu", params.cores);
        chip_->set_pipeline_driver(cores_->driver());
    }
}

double TpuChipModel::matrix_macs_per_cycle(DType dtype) const {
    const TpuChipParams& p = chip_->params();
    return static_cast<double>(p.cores) * p.mxus_per_core * p.mxu.rows * p.mxu.cols * p.mxu.macs_per_pe_per_cycle.of(dtype);
}

ComputeUnit TpuChipModel::compute_unit_for(const Op& op) const {
    if (op.kind == OpKind::kernel)
        throw std::invalid_argument(op_location(op) + "op '" + op.name + "' (kernel, " + std::string(to_string(op.dtype)) +
                                    "): kernel ops run only on simt chips (this chip is systolic)");
    const TpuChipParams& p = chip_->params();
    const double vector = static_cast<double>(p.cores) * p.vector.lanes * p.vector.sublanes;
    if (is_gemm_like(op.kind)) {
        const double macs = matrix_macs_per_cycle(op.dtype);
        if (macs > 0) return {"mxu", macs};
        // A dtype the MXUs do not support (fp32 on TPUs) runs on the vector unit, one MAC per lane
        // per cycle.
        return {"vector", vector, true};
    }
    return {"vector", vector};
}

MemoryPeaks TpuChipModel::memory_peaks() const {
    const TpuChipParams& p = chip_->params();
    MemoryPeaks m;
    if (!p.ideal_memory) {
        m.bytes_per_cycle["hbm"] = p.memory->dram.peak_bytes_per_second() / p.clock_hz;
        m.compulsory_levels.push_back("hbm");
        if (p.cmem_bytes > 0) m.bytes_per_cycle["cmem"] = p.cmem_bytes_per_cycle;
    }
    m.compulsory_levels.push_back("scratchpad");  // every operand passes through VMEM once
    return m;
}

SimulationCost TpuChipModel::simulation_cost(const Op& op) const {
    try {
        return chip_->simulation_cost(op, options_.validate);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(op_location(op) + e.what());  // as run() says it
    }
}

OpReport TpuChipModel::run(const Op& op, const Op* next) {
    TpuOpResult result;
    try {
        result = chip_->run(op, options_.validate, next);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(op_location(op) + e.what());  // the models' messages name the op
    }
    if (result.model.empty()) return roofline_only(op, *this);  // no cycle model for this op yet

    OpReport r;
    r.op = op;
    r.model = result.model;
    const MemoryPeaks memory = memory_peaks();
    r.roofline = roofline_of(op, compute_unit_for(op), memory);
    // The compulsory bytes fusion keeps in VMEM or the lowering reads from CMEM are not HBM bytes.
    apply_placement(r.roofline, memory, result.hbm_bytes_not_read + result.hbm_bytes_not_written,
                    result.cmem_compulsory_bytes);
    r.cycles = result.cycles;
    r.bytes = result.bytes.empty() ? r.roofline.bytes : result.bytes;
    r.utilization = result.utilization;
    r.stats = std::move(result.stats);
    if (result.numerics) {
        NumericsSummary n;
        n.checked = result.numerics->checked;
        n.max_abs_err = result.numerics->max_abs_err;
        n.max_rel_err = result.numerics->max_rel_err;
        n.passed = result.numerics->passed;
        r.numerics = n;
    }
    return r;
}

}  // namespace accelsim::tpu
