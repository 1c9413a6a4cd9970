// PyTorch profiler importer: a Chrome trace from torch.profiler (record_shapes=True), plain or
// gzip-compressed. Only the innermost recognized aten:: event of each nest on a thread becomes an
// op (aten::linear holds aten::addmm; counting both would count its work twice); shapes come from
// "Input Dims", dtypes from "Input type", integer arguments (stride, padding, dim) from "Concrete
// Inputs". docs/import.md gives the mapping.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <set>

#include <zlib.h>

#include "models/common/op_checks.h"
#include "sim/input_error.h"
#include "sim/json_input_error.h"
#include "sim/trace/model_import.h"
#include "sim/trace/trace_text_util.h"

namespace accelsim {

namespace {

using json = nlohmann::json;
using Shape = std::vector<std::int64_t>;

[[noreturn]] void fail_import(const std::string& file, const std::string& message) {
    throw InputError(file + ": " + message);
}

enum class Handler {
    mm,           // mm(a, b)
    addmm,        // addmm(bias, a, b)
    bmm,          // bmm(a, b)
    baddbmm,      // baddbmm(bias, a, b)
    matmul,       // matmul(a, b): numpy rules
    linear,       // linear(x, weight[N, K], bias)
    conv,         // the conv family; argument positions in ConvArgs
    softmax,      // softmax(x, dim, ...)
    layernorm,    // layer_norm(x, normalized_shape, weight, bias, ...)
    elementwise,  // the broadcast of all tensor inputs
    pool,         // max_pool2d, avg_pool2d, adaptive_avg_pool2d: pool; argument positions in PoolArgs
    input_pass,   // mean, sum and batch norm: one pass over input 0
    concat,       // cat / stack of a tensor list: a copy of all its elements
    index_select, // index_select(x, dim, index): a copy of the rows picked
};

struct EventRule {
    Handler handler;
    OpKind kind = OpKind::relu;
};

// Positions of stride, padding, dilation and groups among a conv event's arguments (-1: absent).
struct ConvArgs {
    int stride, padding, dilation, groups, transposed;
};

const std::map<std::string, ConvArgs>& conv_args() {
    static const std::map<std::string, ConvArgs> args = {
        {"aten::conv1d", {3, 4, 5, 6, -1}},          {"aten::conv2d", {3, 4, 5, 6, -1}},
        {"aten::convolution", {3, 4, 5, 8, 6}},      {"aten::_convolution", {3, 4, 5, 8, 6}},
        {"aten::cudnn_convolution", {3, 2, 4, 5, -1}}, {"aten::mkldnn_convolution", {4, 3, 5, 6, -1}},
        {"aten::miopen_convolution", {4, 3, 5, 6, -1}},
    };
    return args;
}

// Positions of a pool event's arguments after the input (-1: absent). adaptive: output_size at
// `kernel`, the window derived from it.
struct PoolArgs {
    PoolMode mode;
    int kernel, stride, padding, dilation, ceil_mode, count_include_pad;
    bool adaptive = false;
};

const std::map<std::string, PoolArgs>& pool_args() {
    // max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode);
    // avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
    // adaptive_avg_pool2d(self, output_size).
    static const std::map<std::string, PoolArgs> args = {
        {"aten::max_pool2d", {PoolMode::max, 1, 2, 3, 4, 5, -1}},
        {"aten::max_pool2d_with_indices", {PoolMode::max, 1, 2, 3, 4, 5, -1}},
        {"aten::avg_pool2d", {PoolMode::avg, 1, 2, 3, -1, 4, 5}},
        {"aten::adaptive_avg_pool2d", {PoolMode::avg, 1, -1, -1, -1, -1, -1, true}},
        {"aten::_adaptive_avg_pool2d", {PoolMode::avg, 1, -1, -1, -1, -1, -1, true}},
    };
    return args;
}

const std::map<std::string, EventRule>& event_rules() {
    static const std::map<std::string, EventRule> rules = [] {
        std::map<std::string, EventRule> r;
        r["aten::mm"] = {Handler::mm};
        // fp8 GEMMs (torchao's float8 linear, Transformer Engine's PyTorch path): mat1, mat2, then
        // the scales, bias and output dtype; the work is mm's, the dtypes mat1's and mat2's.
        r["aten::_scaled_mm"] = {Handler::mm};
        r["aten::addmm"] = {Handler::addmm};
        r["aten::bmm"] = {Handler::bmm};
        r["aten::baddbmm"] = {Handler::baddbmm};
        r["aten::matmul"] = {Handler::matmul};
        r["aten::linear"] = {Handler::linear};
        for (const auto& [name, args] : conv_args()) r[name] = {Handler::conv};
        for (const char* n : {"aten::softmax", "aten::_softmax", "aten::log_softmax", "aten::_log_softmax"})
            r[n] = {Handler::softmax};
        for (const char* n : {"aten::layer_norm", "aten::native_layer_norm"}) r[n] = {Handler::layernorm};
        for (const char* n : {"aten::gelu", "aten::gelu_", "aten::tanh", "aten::tanh_", "aten::sigmoid", "aten::sigmoid_",
                              "aten::silu", "aten::silu_", "aten::exp", "aten::erf", "aten::sqrt", "aten::rsqrt"})
            r[n] = {Handler::elementwise, OpKind::gelu};
        for (const char* n : {"aten::relu", "aten::relu_", "aten::clamp", "aten::clamp_", "aten::clamp_min",
                              "aten::clamp_min_", "aten::threshold", "aten::hardtanh", "aten::hardtanh_", "aten::neg"})
            r[n] = {Handler::elementwise, OpKind::relu};
        for (const char* n : {"aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::rsub", "aten::where",
                              "aten::maximum", "aten::minimum", "aten::masked_fill", "aten::masked_fill_"})
            r[n] = {Handler::elementwise, OpKind::add};
        for (const char* n : {"aten::mul", "aten::mul_", "aten::div", "aten::div_", "aten::pow"})
            r[n] = {Handler::elementwise, OpKind::mul};
        for (const auto& [name, args] : pool_args()) r[name] = {Handler::pool};
        for (const char* n : {"aten::mean", "aten::sum", "aten::batch_norm", "aten::_batch_norm_impl_index", "aten::native_batch_norm",
                              "aten::_native_batch_norm_legit_no_training"})
            r[n] = {Handler::input_pass, OpKind::relu};
        // Data movement (docs/import.md): views (transpose, permute, view) are free, the copies
        // that make them contiguous (copy_, inside contiguous / clone / to) and concatenations are not.
        r["aten::copy_"] = {Handler::elementwise, OpKind::copy};
        r["aten::cat"] = r["aten::stack"] = {Handler::concat, OpKind::copy};
        r["aten::index_select"] = {Handler::index_select, OpKind::copy};
        return r;
    }();
    return rules;
}

// aten:: operators that only reshape, view, copy or allocate: no cost (docs/import.md).
bool is_shape_only(const std::string& name) {
    static const std::set<std::string> names = {
        "aten::view", "aten::reshape", "aten::_reshape_alias", "aten::_unsafe_view", "aten::t", "aten::transpose",
        "aten::permute", "aten::expand", "aten::contiguous", "aten::clone", "aten::copy_", "aten::to",
        "aten::_to_copy", "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::as_strided",
        "aten::select", "aten::slice", "aten::unsqueeze", "aten::squeeze", "aten::flatten", "aten::detach",
        "aten::detach_", "aten::zeros", "aten::zeros_like", "aten::ones", "aten::ones_like", "aten::fill_",
        "aten::zero_", "aten::split", "aten::chunk", "aten::narrow",
        "aten::resolve_conj", "aten::resolve_neg", "aten::dropout", "aten::embedding",
        "aten::lift_fresh", "aten::alias", "aten::result_type", "aten::item", "aten::_local_scalar_dense",
        "aten::scalar_tensor", "aten::arange", "aten::full", "aten::new_empty", "aten::new_zeros", "aten::split_with_sizes",
        "aten::unbind", "aten::view_as", "aten::type_as", "aten::size", "aten::numpy_T", "aten::set_"};
    return names.count(name) > 0;
}

struct Event {
    std::size_t index;  // position in traceEvents
    std::string name;
    std::string thread;  // pid/tid
    double ts = 0, end = 0;
    const json* args = nullptr;
    const EventRule* rule = nullptr;
    int parent = -1;              // the enclosing aten:: event on the same thread
    bool inside_recognized = false;
    bool contains_recognized = false;
};

// The file's text, gunzipped when it starts with gzip's magic bytes 1f 8b (the .gz ending is not
// needed). Truncated or damaged gzip data is an error naming the file.
std::string read_maybe_gzip(const std::string& path) {
    const std::string raw = trace_detail::read_file(path);  // missing, a directory or a device: one message
    if (raw.size() < 2 || static_cast<unsigned char>(raw[0]) != 0x1f || static_cast<unsigned char>(raw[1]) != 0x8b)
        return raw;
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        fail_import(path, "cannot start gzip decompression");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
    z.avail_in = static_cast<uInt>(raw.size());
    std::string text;
    char buffer[1 << 16];
    int code = Z_OK;
    while (code != Z_STREAM_END) {
        z.next_out = reinterpret_cast<Bytef*>(buffer);
        z.avail_out = sizeof buffer;
        code = inflate(&z, Z_NO_FLUSH);
        text.append(buffer, sizeof buffer - z.avail_out);
        if (code == Z_STREAM_END && z.avail_in > 0) code = inflateReset(&z);  // another gzip member follows
        if (code != Z_OK && code != Z_STREAM_END) break;
        if (code == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
            code = Z_BUF_ERROR;  // input ended inside the stream
            break;
        }
    }
    const std::string message = z.msg ? z.msg : "the data ends before the gzip stream does";
    inflateEnd(&z);
    if (code != Z_STREAM_END)
        fail_import(path, "cannot read (damaged or truncated gzip data): " + message);
    return text;
}

std::optional<Shape> dims_of(const json& v) {
    if (!v.is_array()) return std::nullopt;
    Shape s;
    for (const json& d : v) {
        if (!d.is_number_integer()) return std::nullopt;  // a TensorList holds arrays
        s.push_back(d.get<std::int64_t>());
    }
    return s;
}

// The integers in a "Concrete Inputs" string: "[2, 2]" -> {2, 2}, "1" -> {1}, "" -> {}; nullopt
// when one does not fit in 64 bits.
std::optional<std::vector<std::int64_t>> concrete_ints(const std::string& text) {
    std::vector<std::int64_t> out;
    std::size_t i = 0;
    while (i < text.size()) {
        if (std::isdigit(static_cast<unsigned char>(text[i])) || (text[i] == '-' && i + 1 < text.size() &&
                                                                  std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
            errno = 0;
            char* end = nullptr;
            const long long v = std::strtoll(text.c_str() + i, &end, 10);
            if (errno == ERANGE) return std::nullopt;
            out.push_back(v);
            i = static_cast<std::size_t>(end - text.c_str());
        } else {
            ++i;
        }
    }
    return out;
}

class PyTorchImporter {
public:
    PyTorchImporter(const std::string& path, DType default_dtype, const ImportOptions& options)
        : path_(path), default_dtype_(default_dtype), options_(options) {}

    ImportedModel run() {
        const std::string text = read_maybe_gzip(path_);
        try {
            root_ = json::parse(text);
        } catch (const json::exception& e) {
            throw_json_input_error(path_, text, e, "not a PyTorch profiler trace: not valid JSON: ");
        }
        const json* events = &root_;
        if (root_.is_object()) {
            const auto it = root_.find("traceEvents");
            if (it == root_.end() || !it->is_array())
                fail_import(
                    path_,
                    "not a PyTorch profiler trace: no \"traceEvents\" array (export it with "
                    "prof.export_chrome_trace(...) from torch.profiler with record_shapes=True)");
            events = &*it;
        } else if (!root_.is_array()) {
            fail_import(path_,
                        "not a PyTorch profiler trace: the top level is neither an object nor an "
                        "array of events");
        }
        summary_.format = "pytorch";
        summary_.file = path_;
        collect(*events);
        nest();
        emit();
        ImportedModel model{std::move(ops_), std::move(summary_)};
        finish_imported_ops(model, options_.strict);
        return model;
    }

private:
    std::string where(const Event& e) const {
        return "event " + std::to_string(e.index) + " '" + e.name + "'";
    }

    void collect(const json& events) {
        for (std::size_t i = 0; i < events.size(); ++i) {
            const json& e = events[i];
            if (!e.is_object()) continue;
            const auto name = e.find("name");
            const auto ph = e.find("ph");
            if (name == e.end() || !name->is_string() || ph == e.end() || *ph != "X") continue;
            const std::string n = name->get<std::string>();
            if (n.rfind("aten::", 0) != 0) continue;
            const auto ts = e.find("ts");
            const auto dur = e.find("dur");
            if (ts == e.end() || !ts->is_number() || dur == e.end() || !dur->is_number())
                fail_import(path_, "event " + std::to_string(i) + " '" + n +
                                       "': a complete event (ph X) needs numbers ts and dur");
            Event ev;
            ev.index = i;
            ev.name = n;
            ev.thread = (e.contains("pid") ? e["pid"].dump() : "") + "/" + (e.contains("tid") ? e["tid"].dump() : "");
            ev.ts = ts->get<double>();
            ev.end = ev.ts + dur->get<double>();
            if (const auto args = e.find("args"); args != e.end() && args->is_object()) ev.args = &*args;
            if (const auto rule = event_rules().find(n); rule != event_rules().end()) ev.rule = &rule->second;
            events_.push_back(std::move(ev));
        }
        summary_.source_ops = static_cast<std::int64_t>(events_.size());
    }

    // Nesting by time containment on each thread: sorted by start (longer first among equal
    // starts), an event's parent is the innermost open event that contains it.
    void nest() {
        std::vector<std::size_t> order(events_.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const Event &x = events_[a], &y = events_[b];
            if (x.thread != y.thread) return x.thread < y.thread;
            if (x.ts != y.ts) return x.ts < y.ts;
            return x.end > y.end;
        });
        // Timestamps are microseconds with three decimals; allow their rounding at the edges.
        constexpr double kSlack = 1e-3;
        std::vector<std::size_t> open;
        std::string thread;
        for (const std::size_t i : order) {
            Event& e = events_[i];
            if (e.thread != thread) open.clear(), thread = e.thread;
            while (!open.empty() && events_[open.back()].end + kSlack < e.end) open.pop_back();
            if (!open.empty()) {
                e.parent = static_cast<int>(open.back());
                for (const std::size_t o : open) e.inside_recognized = e.inside_recognized || events_[o].rule;
                if (e.rule)
                    for (auto it = open.rbegin(); it != open.rend() && !events_[*it].contains_recognized; ++it)
                        events_[*it].contains_recognized = true;
            }
            open.push_back(i);
        }
    }

    void emit() {
        std::vector<std::size_t> taken;
        for (std::size_t i = 0; i < events_.size(); ++i) {
            const Event& e = events_[i];
            if (e.rule && !e.contains_recognized) taken.push_back(i);
            else if (e.rule) ++summary_.nested[e.name];
            else if (e.inside_recognized || e.contains_recognized || is_shape_only(e.name)) ++summary_.shape_only[e.name];
            else ++summary_.unmapped[e.name];
        }
        // Ops in time order (threads interleaved), ties by position in the file.
        std::stable_sort(taken.begin(), taken.end(), [&](std::size_t a, std::size_t b) { return events_[a].ts < events_[b].ts; });
        for (const std::size_t i : taken) {
            const Event& e = events_[i];
            if (map_event(e)) ++summary_.mapped[e.name];
            else ++summary_.unmapped[e.name + " (no Input Dims)"];
        }
    }

    // Input i's dims, if the event recorded them as a tensor shape.
    std::optional<Shape> input_dims(const Event& e, std::size_t i) const {
        if (!e.args) return std::nullopt;
        const auto dims = e.args->find("Input Dims");
        if (dims == e.args->end() || !dims->is_array() || i >= dims->size()) return std::nullopt;
        return dims_of((*dims)[i]);
    }
    // The integers of a Concrete Inputs string of event e; one out of 64-bit range is an error.
    std::vector<std::int64_t> ints(const Event& e, const std::string& text) const {
        auto v = concrete_ints(text);
        if (!v)
            fail_import(path_, where(e) + ": an integer in Concrete Inputs (\"" +
                                   text.substr(0, 40) + "\") is out of 64-bit range");
        return std::move(*v);
    }
    std::optional<std::string> concrete(const Event& e, int i) const {
        if (!e.args || i < 0) return std::nullopt;
        const auto c = e.args->find("Concrete Inputs");
        if (c == e.args->end() || !c->is_array() || static_cast<std::size_t>(i) >= c->size() || !(*c)[i].is_string())
            return std::nullopt;
        const std::string s = (*c)[i].get<std::string>();
        if (s.empty()) return std::nullopt;
        return s;
    }
    DType dtype(const Event& e, std::size_t input) const {
        if (!e.args) return default_dtype_;
        const auto types = e.args->find("Input type");
        if (types == e.args->end() || !types->is_array() || input >= types->size() || !(*types)[input].is_string())
            return default_dtype_;
        const std::string t = (*types)[input].get<std::string>();
        if (t == "c10::Half") return DType::fp16;
        if (t == "c10::BFloat16") return DType::bf16;
        if (t == "signed char" || t == "unsigned char" || t == "c10::qint8" || t == "c10::quint8") return DType::int8;
        // PyTorch's float8 dtypes (the FNUZ ones are AMD's encodings: the chip's sm.fp8_encoding reads them).
        if (t == "c10::Float8_e4m3fn" || t == "c10::Float8_e4m3fnuz") return DType::fp8_e4m3;
        if (t == "c10::Float8_e5m2" || t == "c10::Float8_e5m2fnuz") return DType::fp8_e5m2;
        return default_dtype_;  // float (fp32) and the rest: the config's default
    }

    Op new_op(const Event& e, OpKind kind, std::size_t dtype_input) const {
        Op op;
        op.kind = kind;
        std::string short_name = e.name.substr(6);  // without "aten::"
        while (!short_name.empty() && short_name.front() == '_') short_name.erase(short_name.begin());
        op.name = short_name;
        op.line = static_cast<int>(e.index) + 1;
        op.dtype = dtype(e, dtype_input);
        return op;
    }

    void gemm(const Event& e, std::size_t a_input, const Shape& a, const Shape& b) {
        OpKind kind = OpKind::matmul;
        GemmShape g;
        if (const std::string problem = numpy_matmul(a, b, kind, g); !problem.empty())
            fail_import(path_, where(e) + ": " + problem);
        Op op = new_op(e, kind, a_input);
        // B in the other fp8 format than A (an e5m2 gradient times e4m3 weights): Op::b_dtype.
        op.set_b_dtype_if_mixed(dtype(e, a_input + 1));
        op.gemm = g;
        ops_.push_back(std::move(op));
    }

    std::int64_t count(const Event& e, const Shape& s) const {
        std::int64_t n = 1;
        for (const std::int64_t d : s) {
            if (d < 0) fail_import(path_, where(e) + ": negative dimension in Input Dims");
            const auto p = checked_mul(n, d);
            if (!p) fail_import(path_, where(e) + ": element count overflows a 64-bit integer");
            n = *p;
        }
        return n;
    }

    bool map_event(const Event& e) {
        const auto in = [&](std::size_t i) { return input_dims(e, i); };
        switch (e.rule->handler) {
            case Handler::mm:
            case Handler::bmm:
            case Handler::matmul: {
                const auto a = in(0), b = in(1);
                if (!a || !b) return false;
                if (e.rule->handler == Handler::mm && (a->size() != 2 || b->size() != 2))
                    fail_import(path_, where(e) + ": mm takes 2-D operands");
                if (e.rule->handler == Handler::bmm && (a->size() != 3 || b->size() != 3))
                    fail_import(path_, where(e) + ": bmm takes 3-D operands");
                gemm(e, 0, *a, *b);
                return true;
            }
            case Handler::addmm:
            case Handler::baddbmm: {
                const auto a = in(1), b = in(2);
                if (!a || !b) return false;
                gemm(e, 1, *a, *b);
                return true;
            }
            case Handler::linear: {
                const auto x = in(0), w = in(1);
                if (!x || !w || x->empty() || w->size() != 2) return false;
                // y = x W^T: W is [out_features, in_features].
                gemm(e, 0, *x, Shape{(*w)[1], (*w)[0]});
                return true;
            }
            case Handler::conv: return map_conv(e);
            case Handler::pool: return map_pool(e);
            case Handler::softmax: {
                const auto x = in(0);
                if (!x || x->empty()) return false;
                const auto rank = static_cast<std::int64_t>(x->size());
                std::int64_t dim = rank - 1;
                if (const auto d = concrete(e, 1)) {
                    const auto v = ints(e, *d);
                    if (v.size() == 1) dim = v[0] < 0 ? v[0] + rank : v[0];
                }
                if (dim < 0 || dim >= rank) fail_import(path_, where(e) + ": dim out of range");
                Op op = new_op(e, OpKind::softmax, 0);
                op.cols = (*x)[static_cast<std::size_t>(dim)];
                op.rows = op.cols > 0 ? count(e, *x) / op.cols : 0;
                ops_.push_back(std::move(op));
                return true;
            }
            case Handler::layernorm: {
                const auto x = in(0);
                if (!x || x->empty()) return false;
                // normalized_shape: from Concrete Inputs, else as many axes as gamma has, else one.
                std::size_t axes = 1;
                if (const auto c = concrete(e, 1); c && !ints(e, *c).empty()) axes = ints(e, *c).size();
                else if (const auto gamma = in(2); gamma && !gamma->empty()) axes = gamma->size();
                if (axes > x->size())
                    fail_import(path_,
                                where(e) + ": normalized_shape has more axes than the input");
                Op op = new_op(e, OpKind::layernorm, 0);
                op.cols = count(e, Shape(x->end() - static_cast<std::ptrdiff_t>(axes), x->end()));
                op.rows = op.cols > 0 ? count(e, *x) / op.cols : 0;
                ops_.push_back(std::move(op));
                return true;
            }
            case Handler::elementwise: {
                // The broadcast of the tensor inputs (a Python scalar records no dims).
                Shape out;
                bool any = false;
                for (std::size_t i = 0; e.args && i < 4; ++i) {
                    const auto s = in(i);
                    if (!s) continue;
                    any = true;
                    if (s->size() > out.size()) out.insert(out.begin(), s->size() - out.size(), 1);
                    for (std::size_t j = 0; j < s->size(); ++j) {
                        std::int64_t& o = out[out.size() - s->size() + j];
                        o = std::max(o, (*s)[j]);
                    }
                }
                if (!any) return false;
                Op op = new_op(e, e.rule->kind, 0);
                op.elements = count(e, out);
                ops_.push_back(std::move(op));
                return true;
            }
            case Handler::input_pass: {
                const auto x = in(0);
                if (!x) return false;
                Op op = new_op(e, e.rule->kind, 0);
                op.elements = count(e, *x);
                ops_.push_back(std::move(op));
                return true;
            }
            case Handler::concat: {
                // Input 0 is the tensor list: one dims array per tensor.
                const auto dims = e.args ? e.args->find("Input Dims") : json::const_iterator();
                if (!e.args || dims == e.args->end() || !dims->is_array() || dims->empty() || !(*dims)[0].is_array())
                    return false;
                std::int64_t total = 0;
                for (const json& member : (*dims)[0]) {
                    const auto s = dims_of(member);
                    if (!s) return false;
                    if (__builtin_add_overflow(total, count(e, *s), &total))
                        fail_import(path_, where(e) + ": element count overflows a 64-bit integer");
                }
                if (total == 0) return false;
                Op op = new_op(e, e.rule->kind, 0);
                op.elements = total;
                ops_.push_back(std::move(op));
                return true;
            }
            case Handler::index_select: {
                // The output is x with axis dim cut to the index's length.
                const auto x = in(0), index = in(2);
                const auto d = concrete(e, 1);
                if (!x || !index || !d || x->empty() || index->size() > 1) return false;
                const auto dim_values = ints(e, *d);
                if (dim_values.size() != 1) return false;
                const auto rank = static_cast<std::int64_t>(x->size());
                const std::int64_t dim = dim_values[0] < 0 ? dim_values[0] + rank : dim_values[0];
                if (dim < 0 || dim >= rank) fail_import(path_, where(e) + ": dim out of range");
                Shape out = *x;
                out[static_cast<std::size_t>(dim)] = index->empty() ? 1 : (*index)[0];
                Op op = new_op(e, e.rule->kind, 0);
                op.elements = count(e, out);
                ops_.push_back(std::move(op));
                return true;
            }
        }
        return false;
    }

    // A conv argument from this event's Concrete Inputs or, failing that, from an enclosing conv
    // event's (aten::conv2d records them, the backend call inside it may not).
    std::optional<std::vector<std::int64_t>> conv_arg(const Event& e, int ConvArgs::*field) {
        for (const Event* p = &e; p; p = p->parent >= 0 ? &events_[static_cast<std::size_t>(p->parent)] : nullptr) {
            const auto args = conv_args().find(p->name);
            if (args == conv_args().end()) continue;
            if (const auto c = concrete(*p, args->second.*field)) {
                if (*c == "valid") return std::vector<std::int64_t>{0};
                const auto v = ints(*p, *c);
                if (!v.empty()) return v;
            }
        }
        return std::nullopt;
    }

    bool map_conv(const Event& e) {
        const auto x = input_dims(e, 0), w = input_dims(e, 1);
        if (!x || !w || (w->size() != 3 && w->size() != 4)) return false;
        if (const auto t = conv_arg(e, &ConvArgs::transposed); t && !t->empty() && (*t)[0] != 0) return false;
        const bool two_d = w->size() == 4;
        const std::size_t spatial = two_d ? 2 : 1;
        // Batched input has one more axis than the weight's spatial axes + 1; unbatched has N = 1.
        const bool batched = x->size() == spatial + 2;
        if (!batched && x->size() != spatial + 1)
            fail_import(path_, where(e) + ": input and weight ranks do not match");
        const Shape xs = batched ? *x : [&] { Shape s{1}; s.insert(s.end(), x->begin(), x->end()); return s; }();
        const auto pick = [](const std::optional<std::vector<std::int64_t>>& v, std::size_t axis, std::int64_t fallback) {
            if (!v || v->empty()) return fallback;
            return axis < v->size() ? (*v)[axis] : v->front();
        };
        const auto stride = conv_arg(e, &ConvArgs::stride), padding = conv_arg(e, &ConvArgs::padding),
                   dilation = conv_arg(e, &ConvArgs::dilation), groups = conv_arg(e, &ConvArgs::groups);
        if (!stride || !padding)
            summary_.notes.push_back(where(e) + ": no stride or padding in Concrete Inputs: 1 and 0 assumed");
        Op op = new_op(e, OpKind::conv2d, 0);
        Conv2dShape& c = op.conv;
        c.n = xs[0];
        c.c = xs[1];
        c.k = (*w)[0];
        c.groups = pick(groups, 0, 1);
        c.h = two_d ? xs[2] : 1;
        c.w = two_d ? xs[3] : xs[2];
        c.r = two_d ? (*w)[2] : 1;
        c.s = two_d ? (*w)[3] : (*w)[2];
        c.stride_h = two_d ? pick(stride, 0, 1) : 1;
        c.stride_w = pick(stride, two_d ? 1 : 0, 1);
        c.pad_h = two_d ? pick(padding, 0, 0) : 0;
        c.pad_w = pick(padding, two_d ? 1 : 0, 0);
        c.dilation_h = two_d ? pick(dilation, 0, 1) : 1;
        c.dilation_w = pick(dilation, two_d ? 1 : 0, 1);
        if (const std::string problem = conv_channels_problem(c.c, (*w)[1], c.groups); !problem.empty())
            fail_import(path_, where(e) + ": " + problem);
        ops_.push_back(std::move(op));
        return true;
    }

    // A pool argument from this event's Concrete Inputs or, failing that, an enclosing pool event's
    // (max_pool2d records them, the max_pool2d_with_indices inside it may not). Booleans are 0 / 1.
    std::optional<std::vector<std::int64_t>> pool_arg(const Event& e, int PoolArgs::*field) {
        for (const Event* p = &e; p; p = p->parent >= 0 ? &events_[static_cast<std::size_t>(p->parent)] : nullptr) {
            const auto args = pool_args().find(p->name);
            if (args == pool_args().end()) continue;
            if (const auto c = concrete(*p, args->second.*field)) {
                if (*c == "True" || *c == "False") return std::vector<std::int64_t>{*c == "True" ? 1 : 0};
                const auto v = ints(*p, *c);
                if (!v.empty()) return v;
            }
        }
        return std::nullopt;
    }

    bool map_pool(const Event& e) {
        const auto x = input_dims(e, 0);
        if (!x || (x->size() != 3 && x->size() != 4)) return false;
        const PoolArgs& args = pool_args().at(e.name);
        // [N, C, H, W], or unbatched [C, H, W].
        const Shape xs = x->size() == 4 ? *x : [&] { Shape s{1}; s.insert(s.end(), x->begin(), x->end()); return s; }();
        const auto pick = [](const std::optional<std::vector<std::int64_t>>& v, std::size_t axis, std::int64_t fallback) {
            if (!v || v->empty()) return fallback;
            return axis < v->size() ? (*v)[axis] : v->front();
        };
        Op op = new_op(e, OpKind::pool, 0);
        PoolShape& p = op.pool;
        p.mode = args.mode;
        p.n = xs[0];
        p.c = xs[1];
        p.h = xs[2];
        p.w = xs[3];
        const auto size = pool_arg(e, &PoolArgs::kernel);
        if (!size) return false;
        if (args.adaptive) {
            // Output o of input i: windows [floor(j i / o), ceil((j + 1) i / o)). Where o divides
            // i they are a pool of window and stride i / o; 1 x 1 is the global pool. Otherwise
            // the windows differ in size: costed as window ceil(i / o), stride floor(i / o).
            const std::int64_t oh = pick(size, 0, 1), ow = pick(size, 1, 1);
            if (oh <= 0 || ow <= 0) fail_import(path_, where(e) + ": output_size must be positive");
            if (oh == 1 && ow == 1) {
                p.global = true;
                p.r = p.h;
                p.s = p.w;
            } else {
                if (p.h % oh != 0 || p.w % ow != 0)
                    summary_.notes.push_back(where(e) + ": adaptive pool " + std::to_string(p.h) + "x" + std::to_string(p.w) +
                                             " -> " + std::to_string(oh) + "x" + std::to_string(ow) +
                                             " has windows of two sizes: costed as the larger");
                p.r = (p.h + oh - 1) / oh;
                p.s = (p.w + ow - 1) / ow;
                p.stride_h = std::max<std::int64_t>(1, p.h / oh);
                p.stride_w = std::max<std::int64_t>(1, p.w / ow);
            }
        } else {
            // stride [] (empty) means the kernel size, as in PyTorch.
            const auto stride = pool_arg(e, &PoolArgs::stride), padding = pool_arg(e, &PoolArgs::padding),
                       dilation = pool_arg(e, &PoolArgs::dilation), ceil = pool_arg(e, &PoolArgs::ceil_mode),
                       count_pad = pool_arg(e, &PoolArgs::count_include_pad);
            p.r = pick(size, 0, 1);
            p.s = pick(size, 1, 1);
            p.stride_h = pick(stride, 0, p.r);
            p.stride_w = pick(stride, 1, p.s);
            p.pad_h = pick(padding, 0, 0);
            p.pad_w = pick(padding, 1, 0);
            p.dilation_h = pick(dilation, 0, 1);
            p.dilation_w = pick(dilation, 1, 1);
            p.ceil_mode = pick(ceil, 0, 0) != 0;
            // avg_pool2d counts the padding by default (count_include_pad=True).
            p.count_pad = p.mode == PoolMode::avg && pick(count_pad, 0, 1) != 0 && (p.pad_h > 0 || p.pad_w > 0);
        }
        ops_.push_back(std::move(op));
        return true;
    }

    const std::string& path_;
    DType default_dtype_;
    const ImportOptions& options_;
    json root_;
    std::vector<Event> events_;
    std::vector<Op> ops_;
    ImportSummary summary_;
};

}  // namespace

ImportedModel import_pytorch_profile(const std::string& path, DType default_dtype, const ImportOptions& options) {
    return PyTorchImporter(path, default_dtype, options).run();
}

}  // namespace accelsim
