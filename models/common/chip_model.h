#pragma once
// The one interface every chip model implements (docs/architecture.md, "Chips"). The engine
// (sim/engine) elaborates the chip the config's `kind` names through the chip registry and feeds it
// the trace's ops one after another; it does not know which chip it drives, and neither do the
// roofline nor the reports: they ask the chip for its peaks.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/common/activity.h"
#include "models/common/dtype.h"
#include "models/common/op.h"
#include "models/common/quantization.h"
#include "models/common/roofline.h"
#include "models/common/stats.h"

namespace accelsim {

struct NumericsSummary {
    std::int64_t checked = 0;
    double max_abs_err = 0, max_rel_err = 0;
    bool passed = true;
    // int8 and fp8 ops: the output against fp32 arithmetic on the unquantized values
    // (models/common/quantization.h); a run's summary pools its ops'.
    std::optional<QuantizationError> quantization;
};

// A sampled op (docs/gpu.md "Sampled simulation"): blocks simulated of the launch's total, and the
// estimate's error bound as a share of the op's cycles.
struct SamplingSummary {
    std::uint64_t simulated_blocks = 0, total_blocks = 0, wave_blocks = 0, skipped_waves = 0;
    double steady_wave_cycles = 0;
    // Loop trips (gpu.sampling waves_and_trips): trips every resident block ran functionally at
    // each skip, summed over the skips, and the trips of a block's loop.
    std::uint64_t skipped_trips = 0, trip_skips = 0, trips_per_block = 0;
    double error_estimate = 0;  // skipped waves x |last wave - the one before| / op cycles
};

// What running one op produced (reports render it; field names follow the JSON report).
struct OpReport {
    Op op;
    std::string model;  // which model produced the cycles: "roofline" means no cycle model ran
    std::string roofline_reason;  // model "roofline": why no cycle model ran (table note, JSON)
    std::uint64_t cycles = 0, start_cycle = 0, end_cycle = 0;  // device time: end = start + cycles
    // Host time the device spent waiting for right before this op (framework dispatch, launch;
    // models/common/host_launch.h), and, on the last op only, the host seeing it finish.
    std::uint64_t host_cycles = 0, sync_cycles = 0;
    std::map<std::string, std::int64_t> bytes;  // by memory level
    std::optional<double> utilization;          // share of the running unit's peak
    std::optional<double> occupancy_theoretical, occupancy_achieved, simd_efficiency;
    Roofline roofline;
    std::vector<StatValue> stats;  // model-specific counters
    std::optional<NumericsSummary> numerics;  // with validation, for ops whose data was checked
    std::optional<SamplingSummary> sampling;  // set when the op's cycles were extrapolated
    // A fused graph (a GPU's compiler.gpu_fusion): the op whose kernel ran this op (this op then has
    // no kernel of its own, model "fused", 0 cycles), or the other trace ops this op's kernel ran.
    std::string fused_into;
    std::vector<std::string> fused_ops;
    // What the chip's units did, when the chip records activity (ChipModel::record_activity).
    std::shared_ptr<const OpActivity> activity;
};

// What simulating one op will cost the host, estimated before any op runs: the engine refuses a
// run whose estimate exceeds its limits at once (sim/engine), instead of failing with bad_alloc
// after minutes or running for hours. Zero: nothing the chip needs to bound.
struct SimulationCost {
    double memory_bytes = 0;   // host memory the op's simulation holds at its peak
    double traffic_bytes = 0;  // bytes the memory models move request by request (their host cost)
    double stepped_pe_cycles = 0;  // PE-cycles a clock-by-clock array model steps (its host cost)
    std::string detail;        // what the estimate counts, for the message ("1.2e7 tile steps")
};

class ChipModel {
public:
    virtual ~ChipModel() = default;

    // Runs `op` to completion and fills everything of OpReport but start and end cycles. `next` is
    // the op that will run right after it, when known (nullptr: the last op, or unknown): a chip may
    // decide from it where `op` leaves its output (TPU fusion into VMEM, a copy in CMEM).
    // Throws std::invalid_argument, with a message naming the op (file:line), for an op this chip
    // cannot run (a shape that cannot be lowered, a kernel fault, a malformed kernel argument).
    virtual OpReport run(const Op& op, const Op* next) = 0;
    // The whole trace, before its first op runs: a chip that compiles a graph (GPU fusion) groups
    // the ops here; run() then gets the same ops in the same order. The default: no graph.
    virtual void plan(const std::vector<Op>& ops) { (void)ops; }

    // The unit that would run `op` and its peak per chip cycle. Throws std::invalid_argument for an
    // op kind the chip cannot run at all (a `kernel` op on a chip without SIMT cores).
    virtual ComputeUnit compute_unit_for(const Op& op) const = 0;
    // Matrix-unit MACs per chip cycle over the whole chip for `dtype` (0: no matrix unit runs it).
    virtual double matrix_macs_per_cycle(DType dtype) const = 0;
    // Memory levels, their peaks and the compulsory path of an op's bytes.
    virtual MemoryPeaks memory_peaks() const = 0;
    // The host cost of simulating `op` (with the chip's own validate setting). The default: none
    // worth bounding.
    virtual SimulationCost simulation_cost(const Op& op) const {
        (void)op;
        return {};
    }
    // From now on, attach to each OpReport what the chip's units did (timelines). A chip that
    // cannot record leaves OpReport::activity empty; the timeline then shows the op alone.
    virtual void record_activity() {}
    // Whether the last run() took an earlier identical op's outcome instead of simulating (a GPU's
    // repeated ops, models/gpu/repeated_ops.h): the progress line leaves such ops out of the rate.
    virtual bool last_op_reused() const { return false; }
    // Whether GEMMs may take B in another fp8 format than A (Op::b_dtype: e4m3 x e5m2). The
    // engine refuses such a trace on a chip that cannot.
    virtual bool runs_mixed_fp8() const { return false; }
    // Its stats travel with each op's result (OpReport::stats: name, unit, description, value).
};

// The op's roofline on `chip` (its compute unit and memory peaks).
Roofline chip_roofline(const Op& op, const ChipModel& chip);

// The result of an op no cycle model covers on `chip`: its roofline bound, model "roofline".
OpReport roofline_only(const Op& op, const ChipModel& chip, std::string reason);

// "file:line: " of an op read from a file, "" otherwise (chips' error messages start with it).
std::string op_location(const Op& op);

}  // namespace accelsim
