#pragma once
// The run loop: elaborates the chip the config names and feeds it the trace's operators one after
// another. It does not know which chip family it drives: each implements Chip.
#include <memory>
#include <string>
#include <vector>

#include "models/common/op.h"
#include "sim/config/chip_config.h"
#include "sim/report/report.h"

namespace accelsim {

struct RunOptions {
    bool validate = false;  // run real data through the datapaths and compare with Eigen
    // Elaborate the chip's SystemC modules (one process per hardware unit) and let the kernel
    // schedule them. SystemC elaborates once per process, so only a process that runs exactly one
    // simulation (the CLI, one compare child) sets this; tests and validation programs that run
    // many chips in one process use the plain C++ schedulers, which tests prove give identical
    // results.
    bool systemc = false;
};

class Chip {
public:
    virtual ~Chip() = default;
    // Announces the ops run() will be given next, in order (a chip may look ahead: TPU fusion and
    // CMEM placement). Optional; `ops` outlives the runs.
    virtual void begin_trace(const std::vector<Op>& ops) { (void)ops; }
    // Runs one operator to completion; fills everything of OpReport except start/end cycles.
    virtual OpReport run(const Op& op) = 0;
};

// The chip for config.kind (and config.memory); throws InputError for unsupported combinations.
std::unique_ptr<Chip> make_chip(const ChipConfig& config, const RunOptions& options);

// Runs all ops in order. Throws InputError for ops the chip cannot run, and std::runtime_error
// when a model breaks an invariant (cycles below the roofline bound).
RunReport run_trace(const ChipConfig& config, const std::string& trace_path,
                    const std::vector<Op>& ops, const RunOptions& options);

// The roofline-only result of an op: what every op reports before a cycle model covers it.
OpReport roofline_only(const Op& op, const ChipConfig& config);

}  // namespace accelsim
