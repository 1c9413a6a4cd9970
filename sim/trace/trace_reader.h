#pragma once
// Reads a trace into architecture-neutral Ops. Formats: accelsim's own text format (.trace,
// docs/trace-format.md) and SCALE-Sim topology CSV (.csv, conv and GEMM forms). Every error throws
// InputError as "FILE:LINE: message".
#include <optional>
#include <string>
#include <vector>

#include "models/common/op.h"
#include "sim/input_error.h"
#include "sim/trace/model_import.h"

namespace accelsim {

enum class TraceFormat { automatic, accelsim, scalesim, onnx, pytorch };

// default_dtype fills ops whose line has no dtype= (the config's default_dtype).
std::vector<Op> read_trace(const std::string& path, DType default_dtype,
                           TraceFormat format = TraceFormat::automatic);

// A trace with what its importer says about the source model (ONNX and PyTorch profiler only).
struct LoadedTrace {
    std::vector<Op> ops;
    std::optional<ImportSummary> import;
};
// As read_trace, with the importers' options (--dim, --strict). Automatic format: .csv is
// SCALE-Sim, .onnx ONNX, .json and .json.gz a PyTorch profiler trace, anything else accelsim's.
LoadedTrace load_trace(const std::string& path, DType default_dtype, TraceFormat format,
                       const ImportOptions& import_options);

// The format a trace is read in: `format`, or for automatic the one its file name implies.
TraceFormat resolve_trace_format(const std::string& path, TraceFormat format);
// ONNX and PyTorch profiles: the formats --dim and --strict apply to.
bool is_import_format(TraceFormat format);

// "auto", "accelsim", "scalesim", "onnx", "pytorch"; throws InputError for anything else.
TraceFormat parse_trace_format(const std::string& name);

}  // namespace accelsim
