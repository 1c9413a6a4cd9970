#include "sim/trace/trace_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <map>
#include <string_view>
#include <tuple>

#include "sim/trace/op_checks.h"
#include "sim/trace/scalesim_reader.h"
#include "sim/trace/trace_text_util.h"

namespace accelsim {

using trace_detail::did_you_mean;
using trace_detail::fail;
using trace_detail::trim;

namespace {

constexpr std::array<OpKind, 10> kAllKinds = {
    OpKind::matmul, OpKind::bmm,  OpKind::conv2d, OpKind::softmax, OpKind::layernorm,
    OpKind::gelu,   OpKind::relu, OpKind::add,    OpKind::mul,     OpKind::kernel};

struct KeySpec {
    std::vector<std::string> required;
    std::vector<std::string> optional;  // besides dtype, which every op kind accepts
};

const KeySpec& keys_of(OpKind kind) {
    static const KeySpec matmul{{"m", "n", "k"}, {}};
    static const KeySpec bmm{{"b", "m", "n", "k"}, {}};
    static const KeySpec conv{{"n", "h", "w", "c", "k", "r", "s"},
                              {"stride", "stride_h", "stride_w", "pad", "pad_h", "pad_w",
                               "dilation", "dilation_h", "dilation_w", "groups"}};
    static const KeySpec rows_cols{{"rows", "cols"}, {}};
    static const KeySpec elementwise{{"n"}, {}};
    static const KeySpec kernel{{"file", "grid", "block"}, {"args"}};
    switch (kind) {
        case OpKind::matmul:
            return matmul;
        case OpKind::bmm:
            return bmm;
        case OpKind::conv2d:
            return conv;
        case OpKind::softmax:
        case OpKind::layernorm:
            return rows_cols;
        case OpKind::gelu:
        case OpKind::relu:
        case OpKind::add:
        case OpKind::mul:
            return elementwise;
        case OpKind::kernel:
            return kernel;
    }
    return matmul;
}

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

// The value of an axis pair such as stride / stride_h+stride_w; fallback when none is given.
std::pair<std::int64_t, std::int64_t> axis_pair(const LineContext& ctx,
                                                const std::map<std::string, std::string>& kv,
                                                const std::string& base, bool allow_zero,
                                                std::int64_t fallback) {
    const auto get = [&](const std::string& key) {
        const std::string& text = kv.at(key);
        return allow_zero ? parse_non_negative(ctx, key, text) : parse_positive(ctx, key, text);
    };
    const bool both = kv.count(base) > 0;
    const bool h = kv.count(base + "_h") > 0, w = kv.count(base + "_w") > 0;
    if (both && (h || w))
        ctx.error("give either " + base + " or " + base + "_h and " + base + "_w, not both");
    if (both) {
        const std::int64_t v = get(base);
        return {v, v};
    }
    if (h != w)
        ctx.error(std::string(h ? base + "_h" : base + "_w") + " given without " +
                  (h ? base + "_w" : base + "_h"));
    if (h) return {get(base + "_h"), get(base + "_w")};
    return {fallback, fallback};
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
        const std::vector<std::string> tokens = split_whitespace(text);
        if (tokens.empty()) return;

        const auto kind = parse_op_kind(tokens[0]);
        if (!kind) {
            std::vector<std::string> names;
            for (OpKind k : kAllKinds) names.emplace_back(to_string(k));
            fail(path_, line_no,
                 "unknown op kind '" + tokens[0] + "'" + did_you_mean(tokens[0], names));
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

        const KeySpec& spec = keys_of(*kind);
        std::vector<std::string> allowed = spec.required;
        allowed.insert(allowed.end(), spec.optional.begin(), spec.optional.end());
        allowed.emplace_back("dtype");

        std::map<std::string, std::string> kv;
        for (std::size_t t = 2; t < tokens.size(); ++t) {
            const std::string& token = tokens[t];
            const std::size_t eq = token.find('=');
            if (eq == std::string::npos) ctx.error("expected key=value, got '" + token + "'");
            std::string key = token.substr(0, eq);
            std::string value = token.substr(eq + 1);
            if (key.empty()) ctx.error("missing key before '=' in '" + token + "'");
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
                ctx.error("unknown key '" + key + "'" + did_you_mean(key, allowed));
            if (value.empty()) ctx.error("missing value for key '" + key + "'");
            if (!kv.emplace(key, std::move(value)).second) ctx.error("duplicate key '" + key + "'");
        }
        for (const std::string& key : spec.required)
            if (!kv.count(key)) ctx.error("missing required key '" + key + "'");

        Op op;
        op.kind = *kind;
        op.name = name;
        op.file = path_;
        op.line = line_no;
        op.dtype = default_dtype_;
        if (const auto it = kv.find("dtype"); it != kv.end()) {
            const auto dtype = parse_operand_dtype(it->second);
            if (!dtype)
                ctx.error("unknown dtype '" + it->second + "'" +
                          did_you_mean(it->second, {"int8", "fp16", "bf16", "fp32"}) +
                          " (valid: int8, fp16, bf16, fp32)");
            op.dtype = *dtype;
        }
        fill_shape(ctx, kv, op);
        if (const std::string problem = shape_problem(op); !problem.empty()) ctx.error(problem);
        if (const std::string problem = totals_.add(op); !problem.empty()) ctx.error(problem);
        first_line_of_name_.emplace(name, line_no);
        ops_.push_back(std::move(op));
    }

    void fill_shape(const LineContext& ctx, const std::map<std::string, std::string>& kv, Op& op) {
        const auto positive = [&](const char* key) { return parse_positive(ctx, key, kv.at(key)); };
        switch (op.kind) {
            case OpKind::matmul:
            case OpKind::bmm:
                op.gemm.batch = op.kind == OpKind::bmm ? positive("b") : 1;
                op.gemm.m = positive("m");
                op.gemm.n = positive("n");
                op.gemm.k = positive("k");
                break;
            case OpKind::conv2d: {
                Conv2dShape& s = op.conv;
                s.n = positive("n");
                s.h = positive("h");
                s.w = positive("w");
                s.c = positive("c");
                s.k = positive("k");
                s.r = positive("r");
                s.s = positive("s");
                std::tie(s.stride_h, s.stride_w) = axis_pair(ctx, kv, "stride", false, 1);
                std::tie(s.pad_h, s.pad_w) = axis_pair(ctx, kv, "pad", true, 0);
                std::tie(s.dilation_h, s.dilation_w) = axis_pair(ctx, kv, "dilation", false, 1);
                s.groups = kv.count("groups") ? positive("groups") : 1;
                break;
            }
            case OpKind::softmax:
            case OpKind::layernorm:
                op.rows = positive("rows");
                op.cols = positive("cols");
                break;
            case OpKind::gelu:
            case OpKind::relu:
            case OpKind::add:
            case OpKind::mul:
                op.elements = positive("n");
                break;
            case OpKind::kernel: {
                const std::string& file = kv.at("file");
                std::filesystem::path resolved(file);
                if (resolved.is_relative()) resolved = (folder_ / resolved).lexically_normal();
                std::error_code ec;
                if (!std::filesystem::is_regular_file(resolved, ec))
                    ctx.error("kernel file '" + file + "' not found (looked for '" +
                              resolved.string() + "')");
                op.kernel.file = resolved.string();
                parse_dims(ctx, "grid", kv.at("grid"), op.kernel.grid);
                parse_dims(ctx, "block", kv.at("block"), op.kernel.block);
                if (const auto it = kv.find("args"); it != kv.end())
                    op.kernel.args = split_args(it->second);
                break;
            }
        }
    }

    const std::string& path_;
    DType default_dtype_;
    std::filesystem::path folder_;
    std::vector<Op> ops_;
    std::map<std::string, int> first_line_of_name_;
    TraceTotals totals_;
};

bool has_csv_extension(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".csv";
}

}  // namespace

std::vector<Op> read_trace(const std::string& path, DType default_dtype, TraceFormat format) {
    if (format == TraceFormat::automatic)
        format = has_csv_extension(path) ? TraceFormat::scalesim : TraceFormat::accelsim;
    if (format == TraceFormat::scalesim) return read_scalesim_topology(path, default_dtype);
    return TextTraceParser(path, default_dtype).parse();
}

TraceFormat parse_trace_format(const std::string& name) {
    if (name == "auto") return TraceFormat::automatic;
    if (name == "accelsim") return TraceFormat::accelsim;
    if (name == "scalesim") return TraceFormat::scalesim;
    throw InputError("--trace-format: unknown trace format '" + name + "'" +
                     did_you_mean(name, {"auto", "accelsim", "scalesim"}) +
                     " (valid: auto, accelsim, scalesim)");
}

}  // namespace accelsim
