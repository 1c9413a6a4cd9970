#include "sim/engine/engine.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "models/common/host_launch.h"
#include "sim/input_error.h"

namespace accelsim {

RunReport run_trace(const ChipConfig& config, const std::string& trace_path,
                    const std::vector<Op>& ops, const RunOptions& options) {
    return run_trace(config, trace_path, ops, options, OpReportSink{});
}

RunReport run_trace(ChipModel& chip, const ChipConfig& config, const std::string& trace_path,
                    const std::vector<Op>& ops, const RunOptions& options) {
    return run_trace(chip, config, trace_path, ops, options, OpReportSink{});
}

RunReport run_trace(const ChipConfig& config, const std::string& trace_path, const std::vector<Op>& ops,
                    const RunOptions& options, const OpReportSink& on_op) {
    const auto chip = make_chip(config, options);
    return run_trace(*chip, config, trace_path, ops, options, on_op);
}

RunReport run_trace(ChipModel& chip, const ChipConfig& config, const std::string& trace_path,
                    const std::vector<Op>& ops, const RunOptions& options, const OpReportSink& on_op) {
    RunReport report;
    report.config = &config;
    report.trace = trace_path;
    report.matrix_macs_per_cycle = chip.matrix_macs_per_cycle(config.default_dtype);
    if (options.validate) report.numerics = NumericsSummary{};  // present even if no op had data
    // The host launching the ops ahead of the device (max-plus pipeline, host_launch.h): each op
    // starts when the device is free and its launch has arrived.
    HostPipeline host(HostCosts::of(config.host, config.kind == "simt"), config.clock_hz());
    if (!on_op) report.ops.reserve(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        const Op* next = i + 1 < ops.size() ? &ops[i + 1] : nullptr;
        OpReport r;
        try {
            r = chip.run(op, next);
        } catch (const std::invalid_argument& e) {  // the chip cannot run this op: bad input
            throw InputError(e.what());
        }
        // A bound is a lower bound: a model that beats it is wrong, not fast.
        if (static_cast<double>(r.cycles) + 1e-9 * r.roofline.bound_cycles < r.roofline.bound_cycles) {
            std::ostringstream msg;
            msg << "model '" << r.model << "' reported " << r.cycles << " cycles for op '" << op.name
                << "', below its " << r.roofline.bound << " bound of " << r.roofline.bound_cycles;
            throw std::runtime_error(msg.str());
        }
        // Vendor-library ops (cuBLAS/cuDNN GEMMs and convolutions) pay the library's host path.
        const HostPipeline::Placement placed = host.place(r.cycles, is_gemm_like(op.kind));
        r.start_cycle = placed.start_cycle;
        r.host_cycles = placed.host_cycles;
        r.end_cycle = r.start_cycle + r.cycles;
        if (i + 1 == ops.size()) r.sync_cycles = host.sync_cycles();
        if (r.numerics && report.numerics) {
            NumericsSummary& total = *report.numerics;
            total.checked += r.numerics->checked;
            total.max_abs_err = std::max(total.max_abs_err, r.numerics->max_abs_err);
            total.max_rel_err = std::max(total.max_rel_err, r.numerics->max_rel_err);
            total.passed = total.passed && r.numerics->passed;
        }
        if (on_op) on_op(r);
        else report.ops.push_back(std::move(r));
    }
    return report;
}

}  // namespace accelsim
