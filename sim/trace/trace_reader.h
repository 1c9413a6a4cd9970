#pragma once
// Reads a trace into architecture-neutral Ops. Formats: accelsim's own text format (.trace,
// docs/trace-format.md) and SCALE-Sim topology CSV (.csv, conv and GEMM forms). Every error throws
// InputError as "FILE:LINE: message".
#include <string>
#include <vector>

#include "models/common/op.h"
#include "sim/input_error.h"

namespace accelsim {

enum class TraceFormat { automatic, accelsim, scalesim };

// default_dtype fills ops whose line has no dtype= (the config's default_dtype).
std::vector<Op> read_trace(const std::string& path, DType default_dtype,
                           TraceFormat format = TraceFormat::automatic);

// "auto", "accelsim", "scalesim"; throws InputError for anything else.
TraceFormat parse_trace_format(const std::string& name);

}  // namespace accelsim
