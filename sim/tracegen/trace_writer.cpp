#include "sim/tracegen/trace_writer.h"

#include <algorithm>
#include <sstream>

namespace accelsim {

namespace {

// Keeps long names from pushing every line far right.
constexpr std::size_t kMaxNameColumn = 32;

std::string dims_text(const std::int64_t (&d)[3]) {
    if (d[1] == 1 && d[2] == 1) return std::to_string(d[0]);
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// An axis pair written as one key when both axes agree; skipped when both equal the default.
void axis_pair(std::ostream& out, const char* base, std::int64_t h, std::int64_t w,
               std::int64_t default_value, bool always) {
    if (!always && h == default_value && w == default_value) return;
    if (h == w)
        out << ' ' << base << '=' << h;
    else
        out << ' ' << base << "_h=" << h << ' ' << base << "_w=" << w;
}

void write_shape(std::ostream& out, const Op& op) {
    switch (op.kind) {
        case OpKind::matmul:
            out << "m=" << op.gemm.m << " n=" << op.gemm.n << " k=" << op.gemm.k;
            break;
        case OpKind::bmm:
            out << "b=" << op.gemm.batch << " m=" << op.gemm.m << " n=" << op.gemm.n
                << " k=" << op.gemm.k;
            break;
        case OpKind::conv2d: {
            const Conv2dShape& s = op.conv;
            out << "n=" << s.n << " h=" << s.h << " w=" << s.w << " c=" << s.c << " k=" << s.k
                << " r=" << s.r << " s=" << s.s;
            axis_pair(out, "stride", s.stride_h, s.stride_w, 1, true);
            axis_pair(out, "pad", s.pad_h, s.pad_w, 0, true);
            axis_pair(out, "dilation", s.dilation_h, s.dilation_w, 1, false);
            if (s.groups != 1) out << " groups=" << s.groups;
            break;
        }
        case OpKind::softmax:
        case OpKind::layernorm:
            out << "rows=" << op.rows << " cols=" << op.cols;
            break;
        case OpKind::gelu:
        case OpKind::relu:
        case OpKind::add:
        case OpKind::mul:
            out << "n=" << op.elements;
            break;
        case OpKind::kernel: {
            out << "file=" << op.kernel.file << " grid=" << dims_text(op.kernel.grid)
                << " block=" << dims_text(op.kernel.block);
            if (!op.kernel.args.empty()) {
                out << " args=";
                for (std::size_t i = 0; i < op.kernel.args.size(); ++i)
                    out << (i ? "," : "") << op.kernel.args[i];
            }
            break;
        }
    }
}

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
        if (!implicit_dtype || op.dtype != *implicit_dtype) out << " dtype=" << to_string(op.dtype);
        out << '\n';
    }
}

}  // namespace accelsim
