#pragma once
// A sweep spec (docs/sweep.md): base configs x traces x a set of axis points, read strictly from
// JSON. load_sweep_spec checks the spec's own structure; plan_sweep expands it into points and
// validates every point's effective config with the same loader `--set` uses, so a bad key or
// value stops the sweep before any point runs. Every error is an InputError "SPEC: key: message".
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/input_error.h"
#include "sim/trace/trace_reader.h"

namespace accelsim {

// One axis: one or more config keys (`--set` paths) that take the same value at each point.
struct SweepAxis {
    std::string name;               // CSV column; the key itself for a one-key axis
    std::vector<std::string> keys;  // --set paths
    std::vector<nlohmann::json> levels;  // explicit values (lists and stepped ranges)
    // A range without mul/add: any value in [from, to], only for modes random and lhs.
    bool continuous = false;
    double from = 0, to = 0;
    bool log_scale = false;   // continuous: sample uniformly in log(value)
    bool integer = false;     // every key is an integer key: continuous samples are rounded
};

// One trace of the sweep: a file, or the output of a trace generator (`accelsim trace ...`).
struct SweepTrace {
    std::string label;      // as the spec wrote it: the path, or "bert size=base seq=128"
    std::string path;       // file traces: the path to read (spec-relative, resolved)
    std::vector<std::string> generator_args;  // generated: the words after "accelsim trace"
    std::map<std::string, std::string> params;  // generated: parameter -> value text
    std::string text;       // generated: the trace text
    std::string sha256;     // of the trace's content
    TraceFormat format = TraceFormat::automatic;
    // ONNX and PyTorch files: --dim and --strict of the sweep command, as a single run takes them.
    ImportOptions import;
    bool generated() const { return !generator_args.empty(); }
};

struct SweepSpec {
    std::string file;  // the spec's path, as given
    std::string name;  // "name" or the file's stem
    std::vector<std::string> config_paths;  // resolved against the spec's folder
    std::vector<SweepTrace> traces;
    std::vector<std::string> trace_param_names;  // union of generator parameters, first seen first
    std::vector<std::string> fixed_overrides;    // "set": applied to every point, key=value
    std::vector<SweepAxis> axes;
    std::string mode = "grid";  // grid | zip | random | lhs
    std::int64_t samples = 0;   // random, lhs: number of axis points
    std::uint64_t seed = 1;
    std::vector<std::string> objectives;
};

// Reads and checks the spec (structure, ranges, modes, generator invocations; traces are read or
// generated and hashed). Config keys are checked by plan_sweep.
// import_options (sweep --dim, --strict) apply to the ONNX and PyTorch traces, each imported as
// a single run imports it; given with no such trace in the spec, they are an error.
SweepSpec load_sweep_spec(const std::string& path, const ImportOptions& import_options = {});

// The axis points of the spec's mode, each a value per axis (in axis order). Deterministic for a
// given seed.
std::vector<std::vector<nlohmann::json>> axis_points(const SweepSpec& spec);

// "a, b,,c" -> {"a", "b", "c"}: a comma-separated option value (--objectives, --configs, --batch),
// blanks dropped.
std::vector<std::string> split_commas(const std::string& text);

// The text a value takes in --set and in the CSV: strings bare, numbers as JSON writes them.
std::string value_text(const nlohmann::json& value);

}  // namespace accelsim
