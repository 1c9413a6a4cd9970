#pragma once
// Runs one design (config + trace) in a forked child process and brings back its report JSON.
// SystemC elaborates once per process and a chip may elaborate modules, so each design of a
// comparison needs a fresh process; the parent never touches the SystemC kernel.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/trace/trace_reader.h"

namespace accelsim {

struct IsolatedRunResult {
    enum class Status {
        ok,           // `report` holds the accelsim.report/1 JSON
        input_error,  // the child threw InputError; `message` is its text
        failed,       // the simulation failed, crashed or died; `message` says how
    };
    Status status = Status::failed;
    nlohmann::json report;
    std::string message;
};

// In the child: load_config(config_path, overrides), read_trace(trace_path, that config's default
// dtype, format), run_trace, to_json. The child's stdout is sent to stderr so stray model output
// cannot mix into the parent's table. Never throws for anything the child does.
IsolatedRunResult run_design_isolated(const std::string& config_path,
                                      const std::vector<std::string>& overrides,
                                      const std::string& trace_path, TraceFormat format);

}  // namespace accelsim
