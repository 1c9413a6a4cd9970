#include "sim/engine/engine.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "models/common/op_table.h"
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

namespace {

// "8e+12": a count in scientific notation, three significant digits.
std::string count(double value) {
    std::ostringstream out;
    out.precision(3);
    out << value;
    return out.str();
}

std::string op_words(const Op& op) {
    return op_location(op) + "op '" + op.name + "' (" + std::string(to_string(op.kind)) + " " + shape_text(op) + ")";
}

// Each op's share of the run's work for the progress line: its roofline bound in cycles on this
// chip (at least one cycle), cumulated; an op the chip cannot bound counts one cycle.
std::vector<double> work_before_each_op(const ChipModel& chip, const std::vector<Op>& ops) {
    const MemoryPeaks memory = chip.memory_peaks();
    std::vector<double> before(ops.size() + 1, 0.0);
    for (std::size_t i = 0; i < ops.size(); ++i) {
        double cycles = 1;
        try {
            cycles = std::max(1.0, roofline_of(ops[i], chip.compute_unit_for(ops[i]), memory).bound_cycles);
        } catch (const std::exception&) {  // the op fails when it runs, with its own message
        }
        before[i + 1] = before[i] + cycles;
    }
    return before;
}

// A copy over the host link (host.io): a row of its own, bound by the link's bandwidth. `op` is the
// op whose tensor crosses (its dtype; `bytes` of it).
OpReport host_transfer(const char* name, const Op& op, std::int64_t bytes, const ChipConfig& config) {
    OpReport r;
    r.op.kind = OpKind::copy;
    r.op.name = name;
    r.op.dtype = op.dtype;
    r.op.elements = bytes / std::max<std::int64_t>(1, bytes_of(op.dtype));
    r.op.file = op.file;
    r.op.line = op.line;
    r.model = "host_link";
    r.cycles = HostPipeline::transfer_cycles(bytes, config.host.link_gb_per_s, config.clock_hz());
    r.bytes["host_link"] = bytes;
    r.roofline.bytes["host_link"] = bytes;
    r.roofline.cycles["host_link"] =
        HostPipeline::transfer_cycles_exact(bytes, config.host.link_gb_per_s, config.clock_hz());
    choose_bound(r.roofline);
    return r;
}

}  // namespace

double progress_share(const std::vector<double>& work_before, std::size_t index, double simulated_work) {
    const double done = work_before[index], total = work_before.back();
    if (done <= 0 || total <= 0) return 0;
    // Ops that took an earlier op's outcome cost no host time: the run so far simulated
    // simulated_work of its done work, and the work left is expected to be simulated in that share.
    const double simulated_share = simulated_work / done;
    const double left = simulated_share * (total - done);
    return simulated_work > 0 ? simulated_work / (simulated_work + left) : done / total;
}

MatrixPeaks matrix_peaks_of(const ChipModel& chip, DType default_dtype) {
    MatrixPeaks peaks(chip.matrix_macs_per_cycle(default_dtype));
    for (const DType t : kOperandDTypes) peaks.by_dtype[t] = chip.matrix_macs_per_cycle(t);
    return peaks;
}

void check_simulation_limits(const ChipModel& chip, const std::vector<Op>& ops, const RunOptions& options) {
    const SimulationLimits& limits = options.limits;
    for (const Op& op : ops) {
        // fp8 exists only where a matrix unit runs it: nothing falls back to a wider unit (a
        // framework would not store fp8 tensors for such a chip), so the trace is refused.
        if (is_fp8(op.dtype) && op_info(op.kind).has_dtype && chip.matrix_macs_per_cycle(op.dtype) <= 0)
            throw InputError(op_words(op) + ": dtype " + std::string(to_string(op.dtype)) +
                             " needs a matrix unit that runs it, and this chip's config gives no " +
                             std::string(to_string(op.dtype)) +
                             " rate (fp8 runs on h100, b200, l4, rtx4090 and mi300x; docs/trace-format.md "
                             "\"fp8\"); use dtype=bf16, fp16 or int8");
        if (op.b_dtype) {
            if (!chip.runs_mixed_fp8())
                throw InputError(op_words(op) + ": b_dtype " + std::string(to_string(*op.b_dtype)) + " with dtype " +
                                 std::string(to_string(op.dtype)) +
                                 ": mixed fp8 operands run on the GPU models' fp8 tensor cores only; the systolic "
                                 "model takes one operand dtype per GEMM (docs/trace-format.md \"fp8\")");
            if (chip.matrix_macs_per_cycle(*op.b_dtype) <= 0)
                throw InputError(op_words(op) + ": b_dtype " + std::string(to_string(*op.b_dtype)) +
                                 " needs a matrix unit that runs it, and this chip's config gives no " +
                                 std::string(to_string(*op.b_dtype)) + " rate");
        }
        if (options.validate && static_cast<double>(op.macs()) > limits.validate_max_macs)
            throw InputError(op_words(op) + ": checking its " + count(static_cast<double>(op.macs())) +
                             " MACs against Eigen would take too long; the limit is " +
                             count(limits.validate_max_macs) + " MACs" +
                             " (--validate-max-macs N raises it; Eigen checks a few G MACs per second)");
        SimulationCost cost;
        try {
            cost = chip.simulation_cost(op);
        } catch (const std::invalid_argument& e) {  // the op cannot be lowered: bad input
            throw InputError(e.what());
        }
        const std::string detail = cost.detail.empty() ? "" : " (" + cost.detail + ")";
        if (cost.memory_bytes > limits.max_memory_bytes)
            throw InputError(op_words(op) + ": simulating it would hold about " + si_text(cost.memory_bytes, "B", 3) +
                             " of host memory" + detail + ", more than the limit of " +
                             si_text(limits.max_memory_bytes, "B", 3) + " (--max-memory BYTES raises it)");
        if (cost.traffic_bytes > limits.max_traffic_bytes)
            throw InputError(op_words(op) + ": simulating it would move about " + si_text(cost.traffic_bytes, "B", 3) +
                             " through the memory model" + detail + ", more than the limit of " +
                             si_text(limits.max_traffic_bytes, "B", 3) +
                             " (--max-traffic BYTES raises it; the memory model simulates roughly half a GB "
                             "per second of host time)");
        if (cost.stepped_pe_cycles > limits.max_stepped_pe_cycles)
            throw InputError(op_words(op) + ": stepping its array clock by clock would take about " +
                             count(cost.stepped_pe_cycles) + " PE-cycles" + detail + ", more than the limit of " +
                             count(limits.max_stepped_pe_cycles) + " PE-cycles" +
                             " (--max-pe-cycles N raises it; the stepped array runs 1 to 4 G PE-cycles per second "
                             "of host time; mxu.mode=fast gives the same cycles in closed form)");
    }
}

RunReport run_trace(ChipModel& chip, const ChipConfig& config, const std::string& trace_path,
                    const std::vector<Op>& ops, const RunOptions& options, const OpReportSink& on_op) {
    RunReport report;
    report.config = &config;
    report.trace = trace_path;
    report.matrix_peaks = matrix_peaks_of(chip, config.default_dtype);
    if (options.validate) report.numerics = NumericsSummary{};  // present even if no op had data
    // Decided before the first op runs: a run that cannot finish stops at once.
    check_simulation_limits(chip, ops, options);
    try {
        chip.plan(ops);
    } catch (const std::invalid_argument& e) {
        throw InputError(e.what());
    }
    // The host launching the ops ahead of the device (max-plus pipeline, host_launch.h): each op
    // starts when the device is free and its launch has arrived.
    HostPipeline host(HostCosts::of(config.host, config.kind == "simt"), config.clock_hz());
    if (!on_op) report.ops.reserve(ops.size());
    const std::vector<double> work_before = options.progress ? work_before_each_op(chip, ops) : std::vector<double>{};
    double simulated_work = 0;  // of the ops before, those the chip simulated (not reused)
    // Places a row on the device after the ones before (an op run inside an earlier op's kernel
    // has no time of its own), and hands it on.
    const bool io = config.host.io && !ops.empty();
    auto emit = [&](OpReport r, bool last, bool library_call) {
        if (!r.fused_into.empty()) {
            r.start_cycle = host.device_end();
        } else {
            // Vendor-library ops (cuBLAS/cuDNN GEMMs and convolutions) pay the library's host path.
            const HostPipeline::Placement placed = host.place(r.cycles, library_call);
            r.start_cycle = placed.start_cycle;
            r.host_cycles = placed.host_cycles;
        }
        r.end_cycle = r.start_cycle + r.cycles;
        if (last) r.sync_cycles = host.sync_cycles();
        if (on_op) on_op(r);
        else report.ops.push_back(std::move(r));
    };
    if (io) emit(host_transfer("host_to_device", ops.front(), ops.front().input_bytes(), config), false, false);
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        const Op* next = i + 1 < ops.size() ? &ops[i + 1] : nullptr;
        if (options.progress) options.progress(i, ops.size(), op, progress_share(work_before, i, simulated_work));
        OpReport r;
        try {
            r = chip.run(op, next);
        } catch (const std::invalid_argument& e) {  // the chip cannot run this op: bad input
            throw InputError(e.what());
        }
        if (options.progress && !chip.last_op_reused()) simulated_work += work_before[i + 1] - work_before[i];
        // A bound is a lower bound: a model that beats it is wrong, not fast.
        if (static_cast<double>(r.cycles) + 1e-9 * r.roofline.bound_cycles < r.roofline.bound_cycles) {
            std::ostringstream msg;
            msg << "model '" << r.model << "' reported " << r.cycles << " cycles for op '" << op.name
                << "', below its " << r.roofline.bound << " bound of " << r.roofline.bound_cycles;
            throw std::runtime_error(msg.str());
        }
        if (r.numerics && report.numerics) {
            NumericsSummary& total = *report.numerics;
            total.checked += r.numerics->checked;
            total.max_abs_err = std::max(total.max_abs_err, r.numerics->max_abs_err);
            total.max_rel_err = std::max(total.max_rel_err, r.numerics->max_rel_err);
            total.passed = total.passed && r.numerics->passed;
            // End to end: the ops' errors pooled (each op has its own seeded inputs; docs/outputs.md).
            if (r.numerics->quantization) {
                if (!total.quantization) total.quantization = QuantizationError{};
                total.quantization->pool(*r.numerics->quantization);
            }
        }
        emit(std::move(r), !io && i + 1 == ops.size(), is_gemm_like(op.kind));
    }
    if (io) emit(host_transfer("device_to_host", ops.back(), ops.back().output_bytes(), config), true, false);
    return report;
}

}  // namespace accelsim
