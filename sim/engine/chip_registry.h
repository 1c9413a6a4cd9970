#pragma once
// The chip kinds this build knows, keyed by the config's `kind`. Each kind is one factory that
// turns the validated ChipConfig into its model's parameters and builds the model (a ChipModel,
// models/common/chip_model.h). The built-in kinds are one line each in an explicit list in
// chip_registry.cpp (an explicit list, not static self-registering objects: the linker drops an
// unreferenced object file of a static library, and its registration with it). Tests may add kinds
// at run time with register_chip_kind.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/common/chip_model.h"
#include "sim/config/chip_config.h"

namespace accelsim {

// How much host a run may use, checked for every op before the first one runs (sim/engine,
// docs/reliability.md "Limits"). The defaults let every shipped trace run on every shipped
// config with room to spare: no op of them needs a tenth of any (tests/sim/simulation_limits_test.cpp).
struct SimulationLimits {
    double max_memory_bytes = 8e9;                 // host memory one op's simulation may hold
    double max_traffic_bytes = 200e9;              // bytes the memory models may move for one op
    double validate_max_macs = 1e12;               // MACs one op's --validate may check
    double max_stepped_pe_cycles = 1e12;           // PE-cycles a stepped array may simulate for one op
};

struct RunOptions {
    bool validate = false;  // run real data through the datapaths and compare with Eigen
    SimulationLimits limits{};  // checked for every op before the first runs
    // Elaborate the chip's SystemC modules (one process per hardware unit) and let the kernel
    // schedule them. SystemC elaborates once per process, so only a process that runs exactly one
    // simulation (the CLI, one compare child) sets this; tests and validation programs that run
    // many chips in one process use the plain C++ schedulers, which tests prove give identical
    // results.
    bool systemc = false;
    // A GPU op identical to one already run (same shape, same L2 contents at its start) takes that
    // run's outcome instead of simulating again: identical results (tested), a model's repeated
    // layers simulated once (docs/gpu.md "Repeated ops"). False: every op simulated.
    bool reuse_repeated_ops = true;
    // Called before each op runs with its index, the trace's op count, the op and the share of the
    // run's estimated work done before it (each op weighted by its roofline cycles on this chip,
    // which the host time of a cycle-level run follows): the CLI's progress line
    // (sim/engine/progress.h). Empty: not called, and no weights are computed.
    std::function<void(std::size_t index, std::size_t total, const Op& op, double done_share)> progress = nullptr;
};

// Builds the chip from its config. Throws InputError naming the config file and key for values
// the model rejects.
using ChipFactory = std::function<std::unique_ptr<ChipModel>(const ChipConfig&, const RunOptions&)>;

// Adds a kind; throws std::logic_error when the name is empty or already taken.
void register_chip_kind(const std::string& kind, ChipFactory factory);

// The known kinds, built-in ones first, in registration order.
std::vector<std::string> chip_kinds();

// The chip for config.kind. Throws InputError naming the config file and the key `kind` when no
// chip has that kind, and the factory's InputError for values its model rejects.
std::unique_ptr<ChipModel> make_chip(const ChipConfig& config, const RunOptions& options);

}  // namespace accelsim
