#include "sim/tracegen/trace_writer.h"

#include <algorithm>
#include <sstream>

#include "models/common/op_table.h"

namespace accelsim {

namespace {

// Keeps long names from pushing every line far right.
constexpr std::size_t kMaxNameColumn = 32;

}  // namespace

void write_trace(std::ostream& out, const std::vector<Op>& ops, const std::string& header_comment,
                 std::optional<DType> implicit_dtype) {
    out << "# accelsim-trace 1\n";
    std::istringstream comment(header_comment);
    for (std::string line; std::getline(comment, line);) {
        if (line.empty())
            out << "#\n";
        else
            out << "# " << line << '\n';
    }
    std::size_t name_width = 0;
    for (const Op& op : ops) name_width = std::max(name_width, op.name.size());
    name_width = std::min(name_width, kMaxNameColumn);
    for (const Op& op : ops) {
        const std::string_view kind = to_string(op.kind);
        out << kind << std::string(10 - std::min<std::size_t>(kind.size(), 9), ' ') << op.name
            << std::string(name_width + 1 - std::min(op.name.size(), name_width), ' ');
        write_shape(out, op);
        if (op_info(op.kind).has_dtype && (!implicit_dtype || op.dtype != *implicit_dtype))
            out << " dtype=" << to_string(op.dtype);
        if (op.b_dtype) out << " b_dtype=" << to_string(*op.b_dtype);
        out << '\n';
    }
}

}  // namespace accelsim
