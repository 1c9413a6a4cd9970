#include "sim/engine/engine.h"
#include "sim/engine/simt_chip.h"
#include "sim/engine/systolic_chip.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace accelsim {

OpReport roofline_only(const Op& op, const ChipConfig& config) {
    OpReport r;
    r.op = op;
    r.model = "roofline";
    r.roofline = compute_roofline(op, config);
    r.cycles = static_cast<std::uint64_t>(std::max(1.0, std::ceil(r.roofline.bound_cycles)));
    r.bytes = r.roofline.bytes;
    r.utilization = r.roofline.compute_cycles / static_cast<double>(r.cycles);
    return r;
}

std::unique_ptr<Chip> make_chip(const ChipConfig& config, const RunOptions& options) {
    if (config.kind == ChipKind::systolic) return std::make_unique<SystolicChip>(config, options);
    return make_simt_chip(config, options);
}

RunReport run_trace(const ChipConfig& config, const std::string& trace_path,
                    const std::vector<Op>& ops, const RunOptions& options) {
    RunReport report;
    report.config = &config;
    report.trace = trace_path;
    auto chip = make_chip(config, options);
    chip->begin_trace(ops);
    if (options.validate) report.numerics = NumericsSummary{};  // present even if no op had data
    std::uint64_t now = 0;
    report.ops.reserve(ops.size());
    for (const Op& op : ops) {
        OpReport r = chip->run(op);
        // A bound is a lower bound: a model that beats it is wrong, not fast.
        if (static_cast<double>(r.cycles) + 1e-9 * r.roofline.bound_cycles < r.roofline.bound_cycles) {
            std::ostringstream msg;
            msg << "model '" << r.model << "' reported " << r.cycles << " cycles for op '" << op.name
                << "', below its " << r.roofline.bound << " bound of " << r.roofline.bound_cycles;
            throw std::runtime_error(msg.str());
        }
        r.start_cycle = now;
        now += r.cycles;
        r.end_cycle = now;
        if (r.numerics && report.numerics) {
            NumericsSummary& total = *report.numerics;
            total.checked += r.numerics->checked;
            total.max_abs_err = std::max(total.max_abs_err, r.numerics->max_abs_err);
            total.max_rel_err = std::max(total.max_rel_err, r.numerics->max_rel_err);
            total.passed = total.passed && r.numerics->passed;
        }
        report.ops.push_back(std::move(r));
    }
    return report;
}

}  // namespace accelsim
