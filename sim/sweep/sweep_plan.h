#pragma once
// The expanded sweep: every point with its effective config validated and its content hash. The
// plan is also written to DIR/plan.json so that `accelsim sweep merge DIR` (and the Slurm merge
// job) can rebuild the results from whatever point files exist, without the spec.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/sweep_spec.h"

namespace accelsim {

inline constexpr const char* kSweepPlanSchema = "accelsim.sweep-plan/1";

struct SweepPoint {
    std::size_t index = 0;
    std::string config_label;              // the config's name (made unique with "#N")
    std::string config_path;
    std::string trace_label;
    std::vector<std::string> trace_params;  // per SweepPlan::trace_param_names ("" = n/a)
    std::vector<std::string> axis_values;   // per SweepPlan::axis_names, as value_text
    std::vector<std::string> overrides;     // fixed + axis --set assignments
    std::string trace_sha256;
    std::string trace_path;                 // empty for a generated trace: see generated_trace_path
    std::string trace_format;               // auto | accelsim | scalesim | onnx | pytorch
    ImportOptions import;                   // ONNX, PyTorch: --dim and --strict (part of the hash)
    std::string hash;                       // point_hash(): the point's file name in DIR/points
};

struct SweepPlan {
    std::string spec_file, name;
    std::vector<std::string> axis_names, trace_param_names, objectives;
    std::vector<SweepPoint> points;
    // The folder holding points/ and totals/: empty for the sweep's own DIR, or a store shared by
    // several sweeps (--store), so identical points across sweeps are simulated once.
    std::string store;
    std::string store_for(const std::string& dir) const { return store.empty() ? dir : store; }
    // Generated traces (by content hash) that the runner writes to DIR/traces before running.
    std::vector<std::pair<std::string, std::string>> generated_traces;  // sha256, text

    // The distinct hashes in point order (identical points run once).
    std::vector<std::string> unique_hashes() const;
};

// The hash that names a point's result: SHA-256 over the accelsim version, the effective config
// (every default filled in, keys sorted), the trace's content and its format, and the import
// options of an ONNX or PyTorch trace (none: the hash of a point without them, unchanged).
std::string point_hash(const nlohmann::json& effective_config, const std::string& trace_sha256,
                       const std::string& trace_format, const ImportOptions& import = {});

// Expands the spec into points and loads every point's config (base + "set" + axis values) with
// load_config. Throws InputError "SPEC: key: message" for the first bad key or value.
SweepPlan plan_sweep(const SweepSpec& spec);

// Where a point's trace is read from when the sweep writes into dir.
std::string point_trace_path(const SweepPoint& point, const std::string& dir);
std::string generated_trace_path(const std::string& dir, const std::string& sha256);

nlohmann::json plan_to_json(const SweepPlan& plan);
// Throws InputError naming `file` when the JSON is not a plan.
SweepPlan plan_from_json(const nlohmann::json& j, const std::string& file);

}  // namespace accelsim
