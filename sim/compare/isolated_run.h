#pragma once
// Runs one design (config + trace) in a forked child process and brings back its report JSON.
// SystemC elaborates once per process and a chip may elaborate modules, so each design of a
// comparison needs a fresh process; the parent never touches the SystemC kernel.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/trace/trace_reader.h"

namespace accelsim {

// A child's stdout is sent to its stderr so stray model output cannot mix into the parent's table.
struct IsolatedRunResult {
    enum class Status {
        ok,           // `report` holds the accelsim.report/1 JSON
        input_error,  // the child threw InputError; `message` is its text
        failed,       // the simulation failed, crashed or died; `message` says how
    };
    Status status = Status::failed;
    nlohmann::json report;
    std::string message;
    int exit_code = -1;  // the child's exit code, or 128 + signal number if a signal ended it
};

// Runs `work` in a forked child and returns what it produced: its JSON (ok), the message of an
// InputError it threw (input_error), or how it failed: another exception, a signal, an exit without
// a result (failed). Never throws for anything the child does; the parent's state is untouched.
IsolatedRunResult run_isolated(const std::function<nlohmann::json()>& work);

// Runs every work item in its own child, at most `jobs` at a time, and returns the results in the
// order of `works` (so the outcome does not depend on which child finishes first). With
// stop_after_failure, no new child starts once one has failed; items never started come back
// failed with "not run: an earlier design failed".
// on_finished, when given, is called in the parent as each item ends (in the order they end), so
// a caller can report progress or keep each result as soon as it exists.
using IsolatedRunFinished = std::function<void(std::size_t index, const IsolatedRunResult& result)>;
std::vector<IsolatedRunResult> run_isolated_all(const std::vector<std::function<nlohmann::json()>>& works,
                                                int jobs, bool stop_after_failure,
                                                const IsolatedRunFinished& on_finished = {});

// The work of one design, for run_isolated(_all): load_config(config_path, overrides),
// load_trace(trace_path, that config's default dtype, format, import_options), run_trace,
// to_json — exactly what a single `accelsim --config --trace --json` run does (with --dim and
// --strict for ONNX and PyTorch imports).
std::function<nlohmann::json()> design_run(const std::string& config_path, const std::vector<std::string>& overrides,
                                           const std::string& trace_path, TraceFormat format,
                                           const ImportOptions& import_options = {});

}  // namespace accelsim
