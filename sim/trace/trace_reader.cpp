#include "sim/trace/trace_reader.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <string_view>

#include "models/common/enum_names.h"
#include "models/common/op_checks.h"
#include "models/common/op_table.h"
#include "sim/trace/scalesim_reader.h"
#include "sim/trace/trace_text_util.h"

namespace accelsim {

using trace_detail::did_you_mean;
using trace_detail::fail;
using trace_detail::trim;

namespace {

std::vector<std::string> split_whitespace(std::string_view s) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
        if (j > i) out.emplace_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

// Everything about one line that an error message needs.
struct LineContext {
    const std::string& file;
    int line;
    std::string_view kind;
    [[noreturn]] void error(const std::string& message) const {
        fail(file, line, std::string(kind) + ": " + message);
    }
};

// Parses a decimal integer; the whole text must be digits (optionally a leading '-').
std::int64_t parse_integer(const LineContext& ctx, const std::string& key,
                           const std::string& text) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range)
        ctx.error(key + "=" + text + " does not fit in a 64-bit integer");
    if (ec != std::errc() || end != text.data() + text.size())
        ctx.error(key + "=" + text + " is not an integer");
    return v;
}

std::int64_t parse_positive(const LineContext& ctx, const std::string& key,
                            const std::string& text) {
    const std::int64_t v = parse_integer(ctx, key, text);
    if (v <= 0) ctx.error(key + "=" + text + " must be a positive integer");
    return v;
}

std::int64_t parse_non_negative(const LineContext& ctx, const std::string& key,
                                const std::string& text) {
    const std::int64_t v = parse_integer(ctx, key, text);
    if (v < 0) ctx.error(key + "=" + text + " must be >= 0");
    return v;
}

// "X", "XxY" or "XxYxZ"; missing dimensions are 1, as for CUDA's dim3.
void parse_dims(const LineContext& ctx, const std::string& key, const std::string& text,
                std::int64_t (&dims)[3]) {
    const auto bad = [&] {
        ctx.error(key + "=" + text + " must be X, XxY or XxYxZ with positive integers");
    };
    std::size_t start = 0;
    int count = 0;
    while (true) {
        if (count == 3) bad();
        const std::size_t x = text.find('x', start);
        const std::size_t end = x == std::string::npos ? text.size() : x;
        std::int64_t v = 0;
        const auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + end, v);
        if (ec != std::errc() || ptr != text.data() + end || v <= 0) bad();
        dims[count++] = v;
        if (x == std::string::npos) break;
        start = x + 1;
    }
    for (int i = count; i < 3; ++i) dims[i] = 1;
}

std::vector<std::string> split_args(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        out.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

// The key=value fields of one trace line, for the op table's shape readers.
class LineFields : public OpFieldSource {
  public:
    LineFields(const LineContext& ctx, const std::map<std::string, std::string>& kv,
               const std::filesystem::path& folder)
        : ctx_(ctx), kv_(kv), folder_(folder) {}
    bool has(const std::string& key) const override { return kv_.count(key) > 0; }
    std::int64_t positive(const std::string& key) const override {
        return parse_positive(ctx_, key, kv_.at(key));
    }
    std::int64_t non_negative(const std::string& key) const override {
        return parse_non_negative(ctx_, key, kv_.at(key));
    }
    void dims(const std::string& key, std::int64_t (&out)[3]) const override {
        parse_dims(ctx_, key, kv_.at(key), out);
    }
    std::string existing_file(const std::string& key) const override {
        const std::string& file = kv_.at(key);
        std::filesystem::path resolved(file);
        if (resolved.is_relative()) resolved = (folder_ / resolved).lexically_normal();
        std::error_code ec;
        if (std::filesystem::is_directory(resolved, ec))
            ctx_.error(std::string(ctx_.kind) + " " + key + " '" + file + "' is a directory, not a file (looked for '" +
                       resolved.string() + "')");
        if (!std::filesystem::is_regular_file(resolved, ec))
            ctx_.error(std::string(ctx_.kind) + " " + key + " '" + file + "' not found (looked for '" + resolved.string() + "')");
        return resolved.string();
    }
    std::vector<std::string> list(const std::string& key) const override { return split_args(kv_.at(key)); }
    [[noreturn]] void error(const std::string& message) const override { ctx_.error(message); }

  private:
    const LineContext& ctx_;
    const std::map<std::string, std::string>& kv_;
    const std::filesystem::path& folder_;
};

// The header must be the first non-empty line: "# accelsim-trace 1".
bool is_header_line(std::string_view line, std::string* version) {
    std::string_view s = trim(line);
    if (s.empty() || s.front() != '#') return false;
    const std::vector<std::string> words = split_whitespace(s.substr(1));
    if (words.size() < 2 || words[0] != "accelsim-trace") return false;
    if (words.size() > 2 && words[2].front() != '#') return false;
    *version = words[1];
    return true;
}

class TextTraceParser {
  public:
    TextTraceParser(const std::string& path, DType default_dtype)
        : path_(path), default_dtype_(default_dtype) {
        folder_ = std::filesystem::path(path).parent_path();
    }

    std::vector<Op> parse() {
        const std::vector<std::string> lines = trace_detail::read_lines(path_);
        int header_line = 0;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const int line_no = static_cast<int>(i) + 1;
            if (header_line == 0) {
                if (trim(lines[i]).empty()) continue;
                std::string version;
                if (!is_header_line(lines[i], &version))
                    fail(path_, line_no,
                         "missing header: the first line of a trace must be '# accelsim-trace 1'");
                if (version != "1")
                    fail(path_, line_no,
                         "unsupported trace format version '" + version +
                             "' (this accelsim reads version 1)");
                header_line = line_no;
                continue;
            }
            parse_line(lines[i], line_no);
        }
        if (header_line == 0)
            fail(path_, std::max<int>(1, static_cast<int>(lines.size())),
                 "missing header: the first line of a trace must be '# accelsim-trace 1'");
        if (ops_.empty()) fail(path_, header_line, "empty trace: no operators after the header");
        return std::move(ops_);
    }

  private:
    void parse_line(const std::string& raw, int line_no) {
        const std::string_view text = std::string_view(raw).substr(0, raw.find('#'));
        trace_detail::require_utf8(path_, line_no, text);  // comments may hold anything
        const std::vector<std::string> tokens = split_whitespace(text);
        if (tokens.empty()) return;

        const auto kind = parse_op_kind(tokens[0]);
        if (!kind) {
            fail(path_, line_no,
                 "unknown op kind '" + tokens[0] + "'" + did_you_mean(tokens[0], op_kind_names()));
        }
        const LineContext ctx{path_, line_no, tokens[0]};
        if (tokens.size() < 2) ctx.error("missing op name (lines are 'op-kind name key=value...')");
        const std::string& name = tokens[1];
        if (name.find('=') != std::string::npos)
            ctx.error("missing op name before '" + name +
                      "' (lines are 'op-kind name key=value...')");
        if (const auto it = first_line_of_name_.find(name); it != first_line_of_name_.end())
            ctx.error("duplicate op name '" + name + "' (first used on line " +
                      std::to_string(it->second) + ")");

        const std::vector<std::string>& required = required_keys(*kind);
        std::vector<std::string> allowed = required;
        const std::vector<std::string>& optional = optional_keys(*kind);
        allowed.insert(allowed.end(), optional.begin(), optional.end());
        if (op_info(*kind).has_dtype) allowed.emplace_back("dtype");
        const bool mixes_operands = op_info(*kind).layout == OpLayout::gemm;  // matmul, bmm
        if (mixes_operands) allowed.emplace_back("b_dtype");

        std::map<std::string, std::string> kv;
        for (std::size_t t = 2; t < tokens.size(); ++t) {
            const std::string& token = tokens[t];
            const std::size_t eq = token.find('=');
            if (eq == std::string::npos) ctx.error("expected key=value, got '" + token + "'");
            std::string key = token.substr(0, eq);
            std::string value = token.substr(eq + 1);
            if (key.empty()) ctx.error("missing key before '=' in '" + token + "'");
            if (key == "dtype" && !op_info(*kind).has_dtype)
                ctx.error("takes no dtype: its program decides its element types");
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
                ctx.error("unknown key '" + key + "'" + did_you_mean(key, allowed));
            if (value.empty()) ctx.error("missing value for key '" + key + "'");
            if (!kv.emplace(key, std::move(value)).second) ctx.error("duplicate key '" + key + "'");
        }
        for (const std::string& key : required)
            if (!kv.count(key)) ctx.error("missing required key '" + key + "'");

        Op op;
        op.kind = *kind;
        op.name = name;
        op.file = path_;
        op.line = line_no;
        auto dtype_value = [&](const std::string& key, const std::string& value) {
            const auto dtype = parse_operand_dtype(value);
            if (!dtype)
                ctx.error("unknown " + key + " '" + value + "'" + did_you_mean(value, operand_dtype_names()) +
                          " (valid: " + join_names(operand_dtype_names()) + ")");
            return *dtype;
        };
        op.dtype = default_dtype_;
        if (const auto it = kv.find("dtype"); it != kv.end()) op.dtype = dtype_value(it->first, it->second);
        if (const auto it = kv.find("b_dtype"); it != kv.end()) {
            const DType b_dtype = dtype_value(it->first, it->second);
            // Only the fp8 formats mix (the tensor cores' .e4m3.e5m2 forms); a b_dtype equal to
            // dtype says nothing more.
            if (!is_fp8(op.dtype) || !is_fp8(b_dtype))
                ctx.error("b_dtype " + it->second + " with dtype " + std::string(to_string(op.dtype)) +
                          ": only the fp8 formats mix (dtype=fp8_e4m3 b_dtype=fp8_e5m2, or the reverse)");
            if (b_dtype != op.dtype) op.b_dtype = b_dtype;
        }
        read_shape(LineFields(ctx, kv, folder_), op);
        if (const std::string problem = shape_problem(op); !problem.empty()) ctx.error(problem);
        if (const std::string problem = totals_.add(op); !problem.empty()) ctx.error(problem);
        first_line_of_name_.emplace(name, line_no);
        ops_.push_back(std::move(op));
    }

    const std::string& path_;
    DType default_dtype_;
    std::filesystem::path folder_;
    std::vector<Op> ops_;
    std::map<std::string, int> first_line_of_name_;
    TraceTotals totals_;
};

// The file name's ending, lower case: ".csv", ".onnx", ".json", ".json.gz", ...
bool ends_with_lower(const std::string& path, const std::string& suffix) {
    std::string name = std::filesystem::path(path).filename().string();
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TraceFormat format_by_extension(const std::string& path) {
    if (ends_with_lower(path, ".csv")) return TraceFormat::scalesim;
    if (ends_with_lower(path, ".onnx")) return TraceFormat::onnx;
    if (ends_with_lower(path, ".json") || ends_with_lower(path, ".json.gz")) return TraceFormat::pytorch;
    return TraceFormat::accelsim;
}

}  // namespace

TraceFormat resolve_trace_format(const std::string& path, TraceFormat format) {
    return format == TraceFormat::automatic ? format_by_extension(path) : format;
}

bool is_import_format(TraceFormat format) { return format == TraceFormat::onnx || format == TraceFormat::pytorch; }

std::vector<Op> read_trace(const std::string& path, DType default_dtype, TraceFormat format) {
    return load_trace(path, default_dtype, format, ImportOptions{}).ops;
}

LoadedTrace load_trace(const std::string& path, DType default_dtype, TraceFormat format,
                       const ImportOptions& import_options) {
    format = resolve_trace_format(path, format);
    if (!is_import_format(format) && (!import_options.dims.empty() || import_options.strict))
        throw InputError(path + ": --dim and --strict apply to ONNX and PyTorch imports only");
    switch (format) {
        case TraceFormat::scalesim: return {read_scalesim_topology(path, default_dtype), std::nullopt};
        case TraceFormat::onnx: {
            ImportedModel model = import_onnx(path, default_dtype, import_options);
            return {std::move(model.ops), std::move(model.summary)};
        }
        case TraceFormat::pytorch: {
            ImportedModel model = import_pytorch_profile(path, default_dtype, import_options);
            return {std::move(model.ops), std::move(model.summary)};
        }
        default: return {TextTraceParser(path, default_dtype).parse(), std::nullopt};
    }
}

TraceFormat parse_trace_format(const std::string& name) {
    if (name == "auto") return TraceFormat::automatic;
    if (name == "accelsim") return TraceFormat::accelsim;
    if (name == "scalesim") return TraceFormat::scalesim;
    if (name == "onnx") return TraceFormat::onnx;
    if (name == "pytorch") return TraceFormat::pytorch;
    throw InputError("--trace-format: unknown trace format '" + name + "'" +
                     did_you_mean(name, {"auto", "accelsim", "scalesim", "onnx", "pytorch"}) +
                     " (valid: auto, accelsim, scalesim, onnx, pytorch)");
}

}  // namespace accelsim
