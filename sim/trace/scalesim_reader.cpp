// SCALE-Sim topology CSV importer. The files mean what SCALE-Sim v2 (scalesim/topology_utils.py,
// scalesim/compute/operand_matrix.py) makes of them:
//  * conv form "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels,
//    Num Filter, Strides," is one convolution per row, batch 1. SCALE-Sim's output size is
//    ceil((H - F + S) / S) = ceil((H - F) / S) + 1 with no padding written in the file: when S does
//    not divide H - F, its last window overhangs the bottom/right edge and the overhanging elements
//    are treated as padding. Our conv2d uses floor((H + 2P - F) / S) + 1, so the importer sets the
//    smallest symmetric pad P that gives the same output size (P = 0 whenever S divides H - F);
//    output size, MACs and bytes then equal SCALE-Sim's. A row whose name contains "DP" is
//    depthwise in SCALE-Sim (it runs Channels separate one-channel layers of Num Filter filters
//    each); that is our conv2d with groups = Channels, k = Channels * Num Filter.
//  * GEMM form "Layer, M, N, K," : SCALE-Sim turns a row into the convolution
//    IFMAP M x K, filter 1 x K, 1 channel, N filters, stride 1, i.e. M output pixels (rows of the
//    activation operand), N filters (columns of the weight operand) and a window of K (reduction):
//    our matmul m=M n=N k=K, C[M,N] = A[M,K] * B[K,N].
#include "sim/trace/scalesim_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

#include "models/common/op_checks.h"
#include "sim/trace/trace_text_util.h"

namespace accelsim {

using trace_detail::fail;
using trace_detail::trim;

namespace {

std::vector<std::string> split_csv_row(std::string_view line) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = line.find(',', start);
        const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
        fields.emplace_back(trim(line.substr(start, end - start)));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    // SCALE-Sim rows end with a trailing comma; the empty field after it is not a column (nor are
    // further empty fields, which SCALE-Sim's GEMM reader also ignores).
    while (fields.size() > 1 && fields.back().empty()) fields.pop_back();
    return fields;
}

bool all_empty(const std::vector<std::string>& fields) {
    return std::all_of(fields.begin(), fields.end(),
                       [](const std::string& f) { return f.empty(); });
}

// Lower case with runs of blanks collapsed, so "IFMAP  Height" matches "ifmap height".
std::string normalize(const std::string& name) {
    std::string out;
    for (char ch : name) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (std::isspace(c)) {
            if (!out.empty() && out.back() != ' ') out.push_back(' ');
        } else {
            out.push_back(static_cast<char>(std::tolower(c)));
        }
    }
    if (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

enum class Form { conv, conv_two_strides, gemm };

const std::vector<std::string>& columns_of(Form form) {
    static const std::vector<std::string> conv = {"Layer name",    "IFMAP Height", "IFMAP Width",
                                                  "Filter Height", "Filter Width", "Channels",
                                                  "Num Filter",    "Strides"};
    static const std::vector<std::string> conv2 = {
        "Layer name", "IFMAP Height", "IFMAP Width",   "Filter Height", "Filter Width",
        "Channels",   "Num Filter",   "Stride Height", "Stride Width"};
    static const std::vector<std::string> gemm = {"Layer", "M", "N", "K"};
    switch (form) {
        case Form::conv:
            return conv;
        case Form::conv_two_strides:
            return conv2;
        case Form::gemm:
            return gemm;
    }
    return conv;
}

std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

Form detect_form(const std::string& path, int line, const std::vector<std::string>& header) {
    const auto normalized_at = [&](std::size_t i) {
        return i < header.size() ? normalize(header[i]) : std::string();
    };
    Form form;
    if (normalized_at(1) == "m") {
        form = Form::gemm;
    } else if (normalized_at(1) == "ifmap height") {
        form = normalized_at(7) == "stride height" ? Form::conv_two_strides : Form::conv;
    } else {
        fail(path, line,
             "not a SCALE-Sim topology header: expected '" + join(columns_of(Form::conv)) +
                 ",' (conv form) or '" + join(columns_of(Form::gemm)) + ",' (GEMM form)");
    }
    const std::vector<std::string>& expected = columns_of(form);
    for (std::size_t i = 0; i < header.size(); ++i) {
        const std::string got = normalize(header[i]);
        if (i >= expected.size())
            fail(path, line,
                 "unexpected column " + std::to_string(i + 1) + " '" + header[i] +
                     "' (the columns are: " + join(expected) + ")");
        // SCALE-Sim's own GEMM files name the first column "Layer" or "Layer Name".
        const bool ok =
            got == normalize(expected[i]) || (i == 0 && (got == "layer" || got == "layer name"));
        if (!ok)
            fail(path, line,
                 "column " + std::to_string(i + 1) + " is '" + header[i] + "', expected '" +
                     expected[i] + "'");
    }
    if (header.size() < expected.size())
        fail(path, line,
             "missing column '" + expected[header.size()] +
                 "' (the columns are: " + join(expected) + ")");
    return form;
}

std::int64_t positive_field(const std::string& path, int line, const std::string& column,
                            const std::string& text) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range)
        fail(path, line, column + " '" + text + "' does not fit in a 64-bit integer");
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
        fail(path, line, column + " '" + text + "' is not an integer");
    if (v <= 0) fail(path, line, column + " " + text + " must be a positive integer");
    return v;
}

// Smallest symmetric pad P with floor((size + 2P - filter) / stride) + 1 equal to SCALE-Sim's
// ceil((size - filter + stride) / stride), for filter <= size. With r = (size - filter) mod stride
// > 0, P = ceil((stride - r) / 2) lifts the numerator past the next multiple of stride but not past
// the one after (r + 2P <= stride + 1 < 2 * stride).
std::int64_t scalesim_equivalent_pad(std::int64_t size, std::int64_t filter, std::int64_t stride) {
    const std::int64_t r = (size - filter) % stride;
    return r == 0 ? 0 : (stride - r + 1) / 2;
}

// Layer names may contain blanks in SCALE-Sim files ("Test 1"); accelsim names are single words.
std::string op_name_from(std::string name) {
    std::replace_if(
        name.begin(), name.end(),
        [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }, '_');
    return name;
}

}  // namespace

std::vector<Op> read_scalesim_topology(const std::string& path, DType default_dtype) {
    const std::vector<std::string> lines = trace_detail::read_lines(path);
    std::vector<Op> ops;
    std::map<std::string, int> first_line_of_name;
    TraceTotals totals;
    bool have_header = false;
    int header_line = 0;
    Form form = Form::conv;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const int line_no = static_cast<int>(i) + 1;
        trace_detail::require_utf8(path, line_no, lines[i]);
        const std::vector<std::string> fields = split_csv_row(lines[i]);
        if (all_empty(fields)) continue;
        if (!have_header) {
            form = detect_form(path, line_no, fields);
            have_header = true;
            header_line = line_no;
            continue;
        }
        const std::vector<std::string>& columns = columns_of(form);
        if (fields.size() != columns.size())
            fail(path, line_no,
                 "expected " + std::to_string(columns.size()) + " values (" + join(columns) +
                     "), got " + std::to_string(fields.size()));
        if (fields[0].empty()) fail(path, line_no, "missing layer name");
        const std::string name = op_name_from(fields[0]);
        if (const auto it = first_line_of_name.find(name); it != first_line_of_name.end())
            fail(path, line_no,
                 "duplicate layer name '" + name + "' (first used on line " +
                     std::to_string(it->second) + ")");
        std::vector<std::int64_t> v(fields.size(), 0);
        for (std::size_t c = 1; c < fields.size(); ++c)
            v[c] = positive_field(path, line_no, columns[c], fields[c]);

        Op op;
        op.name = name;
        op.dtype = default_dtype;
        op.file = path;
        op.line = line_no;
        if (form == Form::gemm) {
            op.kind = OpKind::matmul;
            op.gemm = GemmShape{1, v[1], v[2], v[3]};
        } else {
            op.kind = OpKind::conv2d;
            Conv2dShape& s = op.conv;
            s.n = 1;
            s.h = v[1];
            s.w = v[2];
            s.r = v[3];
            s.s = v[4];
            s.c = v[5];
            s.k = v[6];
            s.stride_h = v[7];
            s.stride_w = form == Form::conv_two_strides ? v[8] : v[7];
            if (fields[0].find("DP") != std::string::npos) {
                // SCALE-Sim's depthwise convention (see the top of this file).
                const auto k = checked_mul(s.c, v[6]);
                if (!k) fail(path, line_no, "Channels * Num Filter overflows a 64-bit integer");
                s.groups = s.c;
                s.k = *k;
            }
            if (s.r > s.h || s.s > s.w)
                fail(path, line_no,
                     "filter " + std::to_string(s.r) + "x" + std::to_string(s.s) +
                         " is larger than the IFMAP " + std::to_string(s.h) + "x" +
                         std::to_string(s.w) + " (SCALE-Sim uses no padding)");
            s.pad_h = scalesim_equivalent_pad(s.h, s.r, s.stride_h);
            s.pad_w = scalesim_equivalent_pad(s.w, s.s, s.stride_w);
        }
        if (const std::string problem = shape_problem(op); !problem.empty())
            fail(path, line_no, problem);
        if (const std::string problem = totals.add(op); !problem.empty())
            fail(path, line_no, problem);
        first_line_of_name.emplace(name, line_no);
        ops.push_back(std::move(op));
    }
    if (!have_header)
        fail(path, std::max<int>(1, static_cast<int>(lines.size())),
             "empty SCALE-Sim topology: no header line");
    if (ops.empty())
        fail(path, header_line, "empty SCALE-Sim topology: no layers after the header");
    return ops;
}

}  // namespace accelsim
