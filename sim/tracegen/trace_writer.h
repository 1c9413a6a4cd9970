#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "models/common/op.h"

namespace accelsim {

// Writes ops in the accelsim text trace format (docs/trace-format.md): the header line, then
// header_comment as '#' comment lines (one per line of the text), then one aligned line per op.
// Ops whose dtype equals implicit_dtype are written without dtype= (they take the config default
// when read back); with std::nullopt every op carries its dtype. Reading the output back with
// read_trace(path, implicit_dtype or any default) gives the same ops; kernel file paths are written
// as stored in the Op (read_trace stores them resolved against the trace's folder).
void write_trace(std::ostream& out, const std::vector<Op>& ops, const std::string& header_comment,
                 std::optional<DType> implicit_dtype = std::nullopt);

}  // namespace accelsim
