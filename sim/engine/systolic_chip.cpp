#include "sim/engine/systolic_chip.h"

#include <stdexcept>
#include <string>

#include "sim/config/model_params.h"
#include "sim/input_error.h"

namespace accelsim {

namespace {

std::string config_where(const ChipConfig& config) { return config.file.empty() ? "config" : config.file; }

// "file:line: " of an op (the models' messages name the op themselves).
std::string op_where(const Op& op) {
    return op.file.empty() ? std::string() : op.file + ":" + std::to_string(op.line) + ": ";
}

}  // namespace

SystolicChip::SystolicChip(const ChipConfig& config, const RunOptions& options)
    : config_(config), options_(options) {
    const tpu::TpuChipParams params = tpu_params_from_config(config);
    try {
        chip_ = std::make_unique<tpu::TpuChip>(params);
    } catch (const std::invalid_argument& e) {
        // MxuParams::validate and the chip's own checks name the key ("mxu.rows must be ...").
        throw InputError(config_where(config) + ": " + e.what());
    }
    if (options.systemc) {
        cores_ = std::make_unique<tpu::TpuCoresModule>("tpu", params.cores);
        chip_->set_pipeline_driver(cores_->driver());
    }
}

void SystolicChip::begin_trace(const std::vector<Op>& ops) {
    trace_ = &ops;
    position_ = 0;
}

OpReport SystolicChip::run(const Op& op) {
    // The op after this one, when the engine runs a trace in order: it decides where this op
    // leaves its output (fusion, CMEM).
    const Op* next = nullptr;
    if (trace_ != nullptr && position_ < trace_->size() && &(*trace_)[position_] == &op) {
        if (position_ + 1 < trace_->size()) next = &(*trace_)[position_ + 1];
        ++position_;
    } else {
        trace_ = nullptr;  // ops not from the announced trace: no look-ahead
    }
    tpu::TpuOpResult result;
    try {
        result = chip_->run(op, options_.validate, next);
    } catch (const std::invalid_argument& e) {
        throw InputError(op_where(op) + e.what());
    }
    if (result.model.empty()) return roofline_only(op, config_);  // no cycle model for this op yet

    OpReport r;
    r.op = op;
    r.model = result.model;
    r.roofline = compute_roofline(op, config_);
    // The compulsory bytes fusion keeps in VMEM or the lowering reads from CMEM are not HBM bytes.
    apply_placement(r.roofline, config_, result.hbm_bytes_not_read + result.hbm_bytes_not_written,
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

}  // namespace accelsim
