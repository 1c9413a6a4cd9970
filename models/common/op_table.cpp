#include "models/common/op_table.h"

#include <sstream>
#include <tuple>
#include <stdexcept>

namespace accelsim {

namespace {

using json = nlohmann::json;

// The rows, in enum order (a test checks the order).
const std::vector<OpKindInfo> kKinds = {
    {OpKind::matmul, "matmul", OpLayout::gemm, "C[m][n] = A[m][k] B[k][n]; B is the weights"},
    {OpKind::bmm, "bmm", OpLayout::gemm, "batched matmul: b independent GEMMs, both operands activations",
     /*batched=*/true},
    {OpKind::conv2d, "conv2d", OpLayout::conv2d,
     "2-D convolution, NHWC input, KRSC filters; stride, pad, dilation, groups"},
    // max, subtract, exp, sum, scale by the reciprocal
    {OpKind::softmax, "softmax", OpLayout::rows_cols, "softmax over each row of cols elements", false, 1, 5},
    // mean (sum), subtract, square, sum, scale by rsqrt, multiply gamma, add beta
    {OpKind::layernorm, "layernorm", OpLayout::rows_cols,
     "layer normalization over each row, with per-column gamma and beta", false, 1, 7, 2},
    // tanh approximation: x^3, fma, scale, tanh, add, multiply, multiply
    {OpKind::gelu, "gelu", OpLayout::elements, "GELU activation of n elements", false, 1, 7},
    {OpKind::relu, "relu", OpLayout::elements, "max(x, 0) of n elements", false, 1, 1},
    {OpKind::add, "add", OpLayout::elements, "elementwise sum of two n-element tensors", false, 2, 1},
    {OpKind::mul, "mul", OpLayout::elements, "elementwise product of two n-element tensors", false, 2, 1},
    // Data movement only: what a transpose, concat or gather of activations costs when the compiler
    // does not fold it into its consumer (docs/import.md). No arithmetic.
    {OpKind::copy, "copy", OpLayout::elements, "a copy of n elements: each read once and written once", false, 1, 0},
    // Operations per element come from the window (Op::vector_ops_per_element): one max or add
    // per window element of each output.
    {OpKind::pool, "pool", OpLayout::pool,
     "2-D max or average pooling, NHWC input; window r x s, stride, pad, dilation, ceil, global", false, 1, 0},
    {OpKind::kernel, "kernel", OpLayout::kernel, "a SIMT program launch (simt chips only)", false, 0, 0, 0,
     /*has_dtype=*/false, /*has_flops=*/false},
};

struct LayoutKeys {
    std::vector<std::string> required, optional;
};

const LayoutKeys& keys_of(const OpKindInfo& info) {
    static const LayoutKeys matmul{{"m", "n", "k"}, {}};
    static const LayoutKeys bmm{{"b", "m", "n", "k"}, {}};
    static const LayoutKeys conv{{"n", "h", "w", "c", "k", "r", "s"},
                                 {"stride", "stride_h", "stride_w", "pad", "pad_h", "pad_w", "dilation",
                                  "dilation_h", "dilation_w", "groups"}};
    static const LayoutKeys rows_cols{{"rows", "cols"}, {}};
    static const LayoutKeys elements{{"n"}, {}};
    static const LayoutKeys kernel{{"file", "grid", "block"}, {"args"}};
    static const LayoutKeys pool{{"n", "h", "w", "c", "mode"},
                                 {"r", "s", "stride", "stride_h", "stride_w", "pad", "pad_h", "pad_w", "dilation",
                                  "dilation_h", "dilation_w", "ceil", "count_pad", "global"}};
    switch (info.layout) {
        case OpLayout::gemm: return info.batched ? bmm : matmul;
        case OpLayout::conv2d: return conv;
        case OpLayout::rows_cols: return rows_cols;
        case OpLayout::elements: return elements;
        case OpLayout::kernel: return kernel;
        case OpLayout::pool: return pool;
    }
    throw std::logic_error("op table: unknown layout");
}

// An axis pair such as stride / stride_h + stride_w; fallback when neither is given.
std::pair<std::int64_t, std::int64_t> read_axis_pair(const OpFieldSource& src, const std::string& base,
                                                     bool allow_zero, std::int64_t fallback) {
    const auto get = [&](const std::string& key) {
        return allow_zero ? src.non_negative(key) : src.positive(key);
    };
    const bool both = src.has(base);
    const bool h = src.has(base + "_h"), w = src.has(base + "_w");
    if (both && (h || w)) src.error("give either " + base + " or " + base + "_h and " + base + "_w, not both");
    if (both) {
        const std::int64_t v = get(base);
        return {v, v};
    }
    if (h != w)
        src.error(std::string(h ? base + "_h" : base + "_w") + " given without " + (h ? base + "_w" : base + "_h"));
    if (h) return {get(base + "_h"), get(base + "_w")};
    return {fallback, fallback};
}

// An axis pair written as one key when both axes agree; skipped when both equal the default.
void write_axis_pair(std::ostream& out, const char* base, std::int64_t h, std::int64_t w,
                     std::int64_t default_value, bool always) {
    if (!always && h == default_value && w == default_value) return;
    if (h == w)
        out << ' ' << base << '=' << h;
    else
        out << ' ' << base << "_h=" << h << ' ' << base << "_w=" << w;
}

std::string dims_text(const std::int64_t (&d)[3]) {
    if (d[1] == 1 && d[2] == 1) return std::to_string(d[0]);
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// A 0/1 flag key (ceil=1); absent is 0.
bool read_flag(const OpFieldSource& src, const std::string& key) {
    if (!src.has(key)) return false;
    const std::int64_t v = src.non_negative(key);
    if (v > 1) src.error(key + "=" + std::to_string(v) + " must be 0 or 1");
    return v == 1;
}

const char* pool_mode_name(PoolMode m) { return m == PoolMode::max ? "max" : "avg"; }

void read_pool(const OpFieldSource& src, PoolShape& p) {
    p.n = src.positive("n");
    p.h = src.positive("h");
    p.w = src.positive("w");
    p.c = src.positive("c");
    const std::vector<std::string> mode = src.list("mode");
    if (mode.size() == 1 && mode[0] == "max") p.mode = PoolMode::max;
    else if (mode.size() == 1 && mode[0] == "avg") p.mode = PoolMode::avg;
    else src.error("mode must be max or avg");
    p.global = read_flag(src, "global");
    p.ceil_mode = read_flag(src, "ceil");
    p.count_pad = read_flag(src, "count_pad");
    if (p.global) {
        // The whole image is the window: nothing else shapes it.
        for (const char* key : {"r", "s", "stride", "stride_h", "stride_w", "pad", "pad_h", "pad_w", "dilation",
                                "dilation_h", "dilation_w", "ceil"})
            if (src.has(key)) src.error(std::string(key) + " does not apply to a global pool (global=1)");
        p.r = p.h;
        p.s = p.w;
        return;
    }
    for (const char* key : {"r", "s"})
        if (!src.has(key)) src.error(std::string("missing ") + key + "= (the window; or global=1 for the whole image)");
    p.r = src.positive("r");
    p.s = src.positive("s");
    std::tie(p.stride_h, p.stride_w) = read_axis_pair(src, "stride", false, 1);
    std::tie(p.pad_h, p.pad_w) = read_axis_pair(src, "pad", true, 0);
    std::tie(p.dilation_h, p.dilation_w) = read_axis_pair(src, "dilation", false, 1);
}

void write_pool(std::ostream& out, const PoolShape& p) {
    out << "n=" << p.n << " h=" << p.h << " w=" << p.w << " c=" << p.c << " mode=" << pool_mode_name(p.mode);
    if (p.global) {
        out << " global=1";
    } else {
        out << " r=" << p.r << " s=" << p.s;
        write_axis_pair(out, "stride", p.stride_h, p.stride_w, 1, true);
        write_axis_pair(out, "pad", p.pad_h, p.pad_w, 0, true);
        write_axis_pair(out, "dilation", p.dilation_h, p.dilation_w, 1, false);
        if (p.ceil_mode) out << " ceil=1";
    }
    if (p.count_pad) out << " count_pad=1";
}

void write_gemm(std::ostream& out, const Op& op) {
    if (op_info(op.kind).batched) out << "b=" << op.gemm.batch << ' ';
    out << "m=" << op.gemm.m << " n=" << op.gemm.n << " k=" << op.gemm.k;
}

}  // namespace

const std::vector<OpKindInfo>& op_kinds() { return kKinds; }

const OpKindInfo& op_info(OpKind kind) { return kKinds.at(static_cast<std::size_t>(kind)); }

std::vector<std::string> op_kind_names() {
    std::vector<std::string> names;
    for (const OpKindInfo& info : kKinds) names.emplace_back(info.name);
    return names;
}

const std::vector<std::string>& required_keys(OpKind kind) { return keys_of(op_info(kind)).required; }
const std::vector<std::string>& optional_keys(OpKind kind) { return keys_of(op_info(kind)).optional; }

void read_shape(const OpFieldSource& src, Op& op) {
    const OpKindInfo& info = op_info(op.kind);
    switch (info.layout) {
        case OpLayout::gemm:
            op.gemm.batch = info.batched ? src.positive("b") : 1;
            op.gemm.m = src.positive("m");
            op.gemm.n = src.positive("n");
            op.gemm.k = src.positive("k");
            return;
        case OpLayout::conv2d: {
            Conv2dShape& s = op.conv;
            s.n = src.positive("n");
            s.h = src.positive("h");
            s.w = src.positive("w");
            s.c = src.positive("c");
            s.k = src.positive("k");
            s.r = src.positive("r");
            s.s = src.positive("s");
            std::tie(s.stride_h, s.stride_w) = read_axis_pair(src, "stride", false, 1);
            std::tie(s.pad_h, s.pad_w) = read_axis_pair(src, "pad", true, 0);
            std::tie(s.dilation_h, s.dilation_w) = read_axis_pair(src, "dilation", false, 1);
            s.groups = src.has("groups") ? src.positive("groups") : 1;
            return;
        }
        case OpLayout::rows_cols:
            op.rows = src.positive("rows");
            op.cols = src.positive("cols");
            return;
        case OpLayout::elements:
            op.elements = src.positive("n");
            return;
        case OpLayout::pool: read_pool(src, op.pool); return;
        case OpLayout::kernel:
            op.kernel.file = src.existing_file("file");
            src.dims("grid", op.kernel.grid);
            src.dims("block", op.kernel.block);
            if (src.has("args")) op.kernel.args = src.list("args");
            return;
    }
}

void write_shape(std::ostream& out, const Op& op) {
    switch (op_info(op.kind).layout) {
        case OpLayout::gemm: write_gemm(out, op); return;
        case OpLayout::conv2d: {
            const Conv2dShape& s = op.conv;
            out << "n=" << s.n << " h=" << s.h << " w=" << s.w << " c=" << s.c << " k=" << s.k << " r=" << s.r
                << " s=" << s.s;
            write_axis_pair(out, "stride", s.stride_h, s.stride_w, 1, true);
            write_axis_pair(out, "pad", s.pad_h, s.pad_w, 0, true);
            write_axis_pair(out, "dilation", s.dilation_h, s.dilation_w, 1, false);
            if (s.groups != 1) out << " groups=" << s.groups;
            return;
        }
        case OpLayout::rows_cols: out << "rows=" << op.rows << " cols=" << op.cols; return;
        case OpLayout::elements: out << "n=" << op.elements; return;
        case OpLayout::pool: write_pool(out, op.pool); return;
        case OpLayout::kernel:
            out << "file=" << op.kernel.file << " grid=" << dims_text(op.kernel.grid)
                << " block=" << dims_text(op.kernel.block);
            if (!op.kernel.args.empty()) {
                out << " args=";
                for (std::size_t i = 0; i < op.kernel.args.size(); ++i) out << (i ? "," : "") << op.kernel.args[i];
            }
            return;
    }
}

std::string shape_text(const Op& op) {
    std::ostringstream s;
    switch (op_info(op.kind).layout) {
        case OpLayout::gemm: write_gemm(s, op); break;
        case OpLayout::conv2d: {
            // Compact: n=1 56x56x64 k=64 3x3/1 (input HxWxC, filter RxS / stride).
            const auto& c = op.conv;
            s << "n=" << c.n << " " << c.h << "x" << c.w << "x" << c.c << " k=" << c.k << " " << c.r << "x" << c.s
              << "/" << c.stride_h;
            if (c.groups != 1) s << " g=" << c.groups;
            break;
        }
        case OpLayout::rows_cols:
        case OpLayout::elements: write_shape(s, op); break;
        case OpLayout::pool: {
            // Compact: max n=1 112x112x64 3x3/2 (input HxWxC, window RxS / stride), or "avg global".
            const auto& p = op.pool;
            s << pool_mode_name(p.mode) << " n=" << p.n << " " << p.h << "x" << p.w << "x" << p.c;
            if (p.global) s << " global";
            else s << " " << p.r << "x" << p.s << "/" << p.stride_h;
            break;
        }
        case OpLayout::kernel:
            s << op.kernel.file << " grid=" << op.kernel.grid[0] << " block=" << op.kernel.block[0];
            break;
    }
    return s.str();
}

json shape_json(const Op& op) {
    switch (op_info(op.kind).layout) {
        case OpLayout::gemm: return {{"b", op.gemm.batch}, {"m", op.gemm.m}, {"n", op.gemm.n}, {"k", op.gemm.k}};
        case OpLayout::conv2d: {
            const auto& c = op.conv;
            return {{"n", c.n},
                    {"h", c.h},
                    {"w", c.w},
                    {"c", c.c},
                    {"k", c.k},
                    {"r", c.r},
                    {"s", c.s},
                    {"stride_h", c.stride_h},
                    {"stride_w", c.stride_w},
                    {"pad_h", c.pad_h},
                    {"pad_w", c.pad_w},
                    {"dilation_h", c.dilation_h},
                    {"dilation_w", c.dilation_w},
                    {"groups", c.groups},
                    {"out_h", c.out_h()},
                    {"out_w", c.out_w()}};
        }
        case OpLayout::rows_cols: return {{"rows", op.rows}, {"cols", op.cols}};
        case OpLayout::elements: return {{"n", op.elements}};
        case OpLayout::pool: {
            const auto& p = op.pool;
            return {{"n", p.n},
                    {"h", p.h},
                    {"w", p.w},
                    {"c", p.c},
                    {"mode", pool_mode_name(p.mode)},
                    {"r", p.r},
                    {"s", p.s},
                    {"stride_h", p.stride_h},
                    {"stride_w", p.stride_w},
                    {"pad_h", p.pad_h},
                    {"pad_w", p.pad_w},
                    {"dilation_h", p.dilation_h},
                    {"dilation_w", p.dilation_w},
                    {"ceil", p.ceil_mode},
                    {"count_pad", p.count_pad},
                    {"global", p.global},
                    {"out_h", p.out_h()},
                    {"out_w", p.out_w()}};
        }
        case OpLayout::kernel:
            return {{"file", op.kernel.file},
                    {"grid", {op.kernel.grid[0], op.kernel.grid[1], op.kernel.grid[2]}},
                    {"block", {op.kernel.block[0], op.kernel.block[1], op.kernel.block[2]}},
                    {"args", op.kernel.args}};
    }
    return json::object();
}

}  // namespace accelsim
