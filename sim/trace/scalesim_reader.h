#pragma once
// SCALE-Sim topology CSV importer (conv and GEMM forms). read_trace() dispatches here for .csv
// files or TraceFormat::scalesim; docs/trace-format.md describes the mapping.
#include <string>
#include <vector>

#include "models/common/op.h"

namespace accelsim {

std::vector<Op> read_scalesim_topology(const std::string& path, DType default_dtype);

}  // namespace accelsim
