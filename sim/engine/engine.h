#pragma once
// The run loop: builds the chip the config's `kind` names (chip_registry.h) and feeds it the
// trace's operators one after another, each with the op that follows it. It does not know which
// chip it drives: each implements ChipModel (models/common/chip_model.h).
#include <functional>
#include <string>
#include <vector>

#include "models/common/op.h"
#include "sim/config/chip_config.h"
#include "sim/engine/chip_registry.h"
#include "sim/report/report.h"

namespace accelsim {

// Throws InputError naming the op, the estimate and the flag that raises the limit when an op's
// simulation would exceed options.limits (ChipModel::simulation_cost; MACs checked with validate).
// The progress line's share of the run done before op `index` (work_before: the estimated work
// before each op, and the total last), counting only the work the chip simulated so far
// (simulated_work: ops that reused an earlier op's outcome took no host time) and expecting the
// work left to be simulated in the same proportion. Without reuse: work_before[index] / total.
double progress_share(const std::vector<double>& work_before, std::size_t index, double simulated_work);

void check_simulation_limits(const ChipModel& chip, const std::vector<Op>& ops, const RunOptions& options);
// The chip's matrix-unit peaks for the reports (every operand dtype's and the default one's).
MatrixPeaks matrix_peaks_of(const ChipModel& chip, DType default_dtype);

// Runs all ops in order (after check_simulation_limits). Throws InputError for ops the chip cannot run (the chip's message names
// the op's file and line), and std::runtime_error when a model breaks an invariant (cycles below
// the roofline bound).
RunReport run_trace(const ChipConfig& config, const std::string& trace_path,
                    const std::vector<Op>& ops, const RunOptions& options);

// The same on a chip already built (tests drive a chip they hold).
RunReport run_trace(ChipModel& chip, const ChipConfig& config, const std::string& trace_path,
                    const std::vector<Op>& ops, const RunOptions& options);

// Streaming: each op's report goes to `on_op` as it finishes (start and end cycles set) and is not
// kept, so the returned RunReport has no ops, only the run's numerics summary (with validation).
// The CLI feeds a ReportWriter this way: memory does not grow with the number of ops.
using OpReportSink = std::function<void(const OpReport&)>;
RunReport run_trace(const ChipConfig& config, const std::string& trace_path, const std::vector<Op>& ops,
                    const RunOptions& options, const OpReportSink& on_op);
RunReport run_trace(ChipModel& chip, const ChipConfig& config, const std::string& trace_path,
                    const std::vector<Op>& ops, const RunOptions& options, const OpReportSink& on_op);

}  // namespace accelsim
