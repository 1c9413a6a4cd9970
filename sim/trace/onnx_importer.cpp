// ONNX importer: ModelProto -> shape inference (ONNX 1.12, plus fallback rules for operators of
// newer opsets) -> one accelsim Op per compute node, with the decomposed LayerNorm and erf-GELU
// patterns fused into one op each. docs/import.md gives the mapping table and its approximations.
#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "models/common/op_checks.h"
#include "sim/input_error.h"
#include "sim/trace/onnx_inference_guards.h"
#include "sim/trace/model_import.h"
#include "sim/trace/trace_text_util.h"

namespace accelsim {

namespace {

using Shape = std::vector<std::int64_t>;

struct TensorInfo {
    std::optional<Shape> shape;  // every dimension known
    int elem_type = 0;           // onnx::TensorProto_DataType
    int rank = -1;               // -1: not known
};

// How a node is costed (docs/import.md, "Operator mapping").
enum class Rule {
    matmul,          // MatMul: matmul, or bmm when both operands carry batch dimensions
    gemm,            // Gemm (transA, transB): matmul
    conv,            // Conv (1-D and 2-D): conv2d
    softmax,         // Softmax, LogSoftmax: softmax rows x cols
    layernorm,       // LayerNormalization: layernorm rows x cols
    batchnorm,       // folded into the Conv before it, else an elementwise pass (mul)
    elementwise,     // one accelsim elementwise kind over the output's elements
    pool,            // MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool (1-D and 2-D): pool
    input_pass,      // LpPool and reductions: one pass over the input's elements (relu)
    data_copy,       // Transpose, Concat: a copy of the output's elements
    gather,          // a copy of the output's elements when it gathers from an activation;
                     // free when it picks rows of a weight (an embedding lookup)
    cast,            // free to the same width (folded into the consumer's loads); else a copy
    shape_only,      // views, layout, bookkeeping: no cost
};

struct MappingRule {
    Rule rule;
    OpKind kind = OpKind::relu;  // elementwise and input_pass rules
};

const std::map<std::string, MappingRule>& mapping_rules() {
    static const std::map<std::string, MappingRule> rules = [] {
        std::map<std::string, MappingRule> r;
        r["MatMul"] = {Rule::matmul};
        r["Gemm"] = {Rule::gemm};
        r["Conv"] = {Rule::conv};
        r["Softmax"] = r["LogSoftmax"] = {Rule::softmax};
        r["LayerNormalization"] = {Rule::layernorm};
        r["BatchNormalization"] = {Rule::batchnorm, OpKind::mul};
        // One cheap operation per element on one input.
        for (const char* op : {"Relu", "LeakyRelu", "PRelu", "Clip", "Neg", "Abs", "Floor", "Ceil", "Round", "Sign",
                               "Not", "ThresholdedRelu", "IsNaN", "IsInf"})
            r[op] = {Rule::elementwise, OpKind::relu};
        // One cheap operation per element on two (Where: three) inputs.
        for (const char* op : {"Add", "Sub", "Max", "Min", "Where", "Equal", "Greater", "Less", "GreaterOrEqual",
                               "LessOrEqual", "And", "Or", "Xor", "Mod", "Sum", "Mean", "BitShift"})
            r[op] = {Rule::elementwise, OpKind::add};
        for (const char* op : {"Mul", "Div", "Pow"}) r[op] = {Rule::elementwise, OpKind::mul};
        // A transcendental function per element: costed as gelu (several vector operations each).
        for (const char* op : {"Gelu", "Tanh", "Sigmoid", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Softplus",
                               "Softsign", "HardSigmoid", "HardSwish", "Elu", "Selu", "Celu", "Mish", "Sin", "Cos"})
            r[op] = {Rule::elementwise, OpKind::gelu};
        for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}) r[op] = {Rule::pool};
        for (const char* op : {"LpPool", "ReduceMean",
                               "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                               "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin"})
            r[op] = {Rule::input_pass, OpKind::relu};
        r["Transpose"] = r["Concat"] = {Rule::data_copy, OpKind::copy};
        r["Gather"] = {Rule::gather, OpKind::copy};
        r["Cast"] = r["CastLike"] = {Rule::cast, OpKind::copy};
        for (const char* op : {"Reshape", "Squeeze", "Unsqueeze", "GatherElements", "GatherND", "Shape", "Size",
                               "Constant", "ConstantOfShape", "Identity", "Flatten", "Slice", "Split", "Expand",
                               "Tile", "Pad", "Dropout", "Range", "EyeLike", "DepthToSpace", "SpaceToDepth", "Trilu",
                               "NonZero", "OneHot"})
            r[op] = {Rule::shape_only};
        return r;
    }();
    return rules;
}

// Operators whose output shape accelsim infers itself when ONNX 1.12 cannot: elementwise operators
// added after opset 17 (Gelu at opset 20, Mish at 18): a one-input one has its input's shape.
bool has_same_shape_fallback(const std::string& op) {
    const auto it = mapping_rules().find(op);
    return it != mapping_rules().end() && it->second.rule == Rule::elementwise;
}

[[noreturn]] void fail(const std::string& file, const std::string& message) { throw InputError(file + ": " + message); }

// ONNX's exceptions append a context paragraph; an error message takes the first line.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string node_label(const onnx::NodeProto& node, int index) {
    return "node " + std::to_string(index + 1) + " '" + (node.name().empty() ? node.op_type() : node.name()) + "' (" +
           node.op_type() + ")";
}

std::optional<std::int64_t> numel(const Shape& shape) {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) {
        const auto p = checked_mul(n, d);
        if (!p) return std::nullopt;
        n = *p;
    }
    return n;
}

// ONNX 1.14's 8-bit float element types (TensorProto.DataType, IR version 9). Debian's ONNX
// library (1.12) predates them, but elem_type and data_type are int32 fields, so a newer model's
// values arrive intact. FNUZ (AMD's encodings) map to the same dtypes: how fp8 bytes are read is
// the chip's (sm.fp8_encoding).
constexpr int kOnnxFloat8E4M3FN = 17, kOnnxFloat8E4M3FNUZ = 18, kOnnxFloat8E5M2 = 19, kOnnxFloat8E5M2FNUZ = 20;

std::optional<DType> dtype_of(int elem_type) {
    switch (elem_type) {
        case kOnnxFloat8E4M3FN:
        case kOnnxFloat8E4M3FNUZ: return DType::fp8_e4m3;
        case kOnnxFloat8E5M2:
        case kOnnxFloat8E5M2FNUZ: return DType::fp8_e5m2;
        case onnx::TensorProto_DataType_FLOAT16: return DType::fp16;
        case onnx::TensorProto_DataType_BFLOAT16: return DType::bf16;
        case onnx::TensorProto_DataType_INT8:
        case onnx::TensorProto_DataType_UINT8: return DType::int8;
        default: return std::nullopt;  // fp32 and the rest take the config's default
    }
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name) {
    for (const auto& a : node.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}
std::int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, std::int64_t fallback) {
    const auto* a = attribute(node, name);
    return a ? a->i() : fallback;
}
std::vector<std::int64_t> ints_attribute(const onnx::NodeProto& node, const std::string& name) {
    const auto* a = attribute(node, name);
    if (!a) return {};
    return {a->ints().begin(), a->ints().end()};
}
std::string string_attribute(const onnx::NodeProto& node, const std::string& name, const std::string& fallback) {
    const auto* a = attribute(node, name);
    return a ? a->s() : fallback;
}

// INT64 and INT32 tensors in a model's graph hold shapes, indices and token ids: bookkeeping the
// host or the compiler's constant folding does, not activations.
bool is_integer_index_type(int elem_type) {
    return elem_type == onnx::TensorProto_DataType_INT64 || elem_type == onnx::TensorProto_DataType_INT32;
}

// Bytes per element of an ONNX tensor type (0 for types of no fixed width: strings, undefined).
int element_width(int elem_type) {
    switch (elem_type) {
        case onnx::TensorProto_DataType_BOOL:
        case kOnnxFloat8E4M3FN:
        case kOnnxFloat8E4M3FNUZ:
        case kOnnxFloat8E5M2:
        case kOnnxFloat8E5M2FNUZ:
        case onnx::TensorProto_DataType_INT8:
        case onnx::TensorProto_DataType_UINT8: return 1;
        case onnx::TensorProto_DataType_FLOAT16:
        case onnx::TensorProto_DataType_BFLOAT16:
        case onnx::TensorProto_DataType_INT16:
        case onnx::TensorProto_DataType_UINT16: return 2;
        case onnx::TensorProto_DataType_FLOAT:
        case onnx::TensorProto_DataType_INT32:
        case onnx::TensorProto_DataType_UINT32: return 4;
        case onnx::TensorProto_DataType_DOUBLE:
        case onnx::TensorProto_DataType_INT64:
        case onnx::TensorProto_DataType_UINT64:
        case onnx::TensorProto_DataType_COMPLEX64: return 8;
        case onnx::TensorProto_DataType_COMPLEX128: return 16;
        default: return 0;
    }
}

// The values of an int64 constant tensor (axes, shapes: int64 in every ONNX version), from
// int64_data or, as exporters write them, little-endian raw_data.
std::optional<std::vector<std::int64_t>> tensor_ints(const onnx::TensorProto& t) {
    if (t.data_type() != onnx::TensorProto_DataType_INT64) return std::nullopt;
    if (t.int64_data_size() > 0) return std::vector<std::int64_t>(t.int64_data().begin(), t.int64_data().end());
    std::vector<std::int64_t> v(t.raw_data().size() / sizeof(std::int64_t));
    if (!v.empty()) std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(std::int64_t));
    return v;
}

class OnnxImporter {
public:
    OnnxImporter(const std::string& path, DType default_dtype, const ImportOptions& options)
        : path_(path), default_dtype_(default_dtype), options_(options) {}

    ImportedModel run() {
        load();
        check_graph();
        bind_dimensions();
        infer_shapes();
        index_graph();
        find_patterns();
        map_nodes();
        ImportedModel model{std::move(ops_), std::move(summary_)};
        finish_imported_ops(model, options_.strict);
        return model;
    }

private:
    // ---- reading -------------------------------------------------------------------------------
    void load() {
        const std::string bytes = trace_detail::read_file(path_);
        if (bytes.empty()) fail(path_, "not an ONNX model: the file is empty");
        if (!model_.ParseFromString(bytes))
            fail(path_, "not an ONNX model, or a truncated one: its bytes do not parse as an ONNX ModelProto");
        if (model_.ir_version() <= 0 || !model_.has_graph() || model_.graph().node_size() == 0)
            fail(path_, "not an ONNX model: no IR version or no graph with nodes (is it an ONNX file?)");
        for (const auto& opset : model_.opset_import())
            if (opset.domain().empty() || opset.domain() == "ai.onnx") opset_ = static_cast<int>(opset.version());
        if (opset_ <= 0) fail(path_, "the model imports no version of the default ONNX operator set");
        summary_.format = "onnx";
        summary_.file = path_;
    }

    // Every input of every node must be defined before it: a truncated or damaged file that still
    // parses as protobuf fails here, naming the node.
    void check_graph() {
        const onnx::GraphProto& g = model_.graph();
        std::set<std::string> defined;
        for (const auto& v : g.input()) defined.insert(v.name());
        for (const auto& t : g.initializer()) defined.insert(t.name());
        for (int i = 0; i < g.node_size(); ++i) {
            const onnx::NodeProto& node = g.node(i);
            if (node.op_type().empty()) fail(path_, "node " + std::to_string(i + 1) + " has no operator type (damaged file?)");
            // Mapping and pattern matching read a node's inputs and outputs by position: a node
            // with fewer than its operator takes is damaged (ONNX's non-strict shape inference
            // lets it through). The schema of the model's opset (the latest ONNX 1.12 has, for a
            // newer one) gives the minimums; an operator 1.12 does not know needs one of each.
            const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
            const onnx::OpSchema* schema =
                default_domain ? onnx::OpSchemaRegistry::Schema(node.op_type(), opset_, "") : nullptr;
            const int min_inputs = schema ? schema->min_input() : 1, min_outputs = schema ? schema->min_output() : 1;
            if (default_domain && (schema || mapping_rules().count(node.op_type())) &&
                (node.input_size() < min_inputs || node.output_size() < min_outputs))
                fail(path_, node_label(node, i) + ": has " + std::to_string(node.input_size()) + " input(s) and " +
                                std::to_string(node.output_size()) + " output(s); " + node.op_type() + " takes at least " +
                                std::to_string(min_inputs) + " and " + std::to_string(min_outputs) +
                                " (damaged file?)");
            // ONNX's own node check (input and output counts, attribute names and types, required
            // attributes) against the schema its shape inference will use; only for opsets ONNX
            // 1.12 knows whole (a newer opset may have changed the operator's signature).
            if (schema && opset_ <= kOnnxKnownOpset) {
                try {
                    schema->Verify(node);
                } catch (const std::exception& e) {
                    fail(path_, node_label(node, i) + ": does not match ONNX's " + node.op_type() + " (opset " +
                                    std::to_string(schema->SinceVersion()) + "): " + first_line(e.what()) +
                                    " (damaged file?)");
                }
            }
            for (const std::string& input : node.input())
                if (!input.empty() && !defined.count(input))
                    fail(path_, node_label(node, i) + ": input '" + input +
                                    "' is not defined by a graph input, an initializer or an earlier node "
                                    "(truncated or damaged file, or nodes not in topological order)");
            for (const std::string& output : node.output()) defined.insert(output);
        }
    }

    // Symbolic dimensions of the graph inputs take the --dim values; every one must be bound.
    void bind_dimensions() {
        onnx::GraphProto& g = *model_.mutable_graph();
        std::set<std::string> initializers;
        for (const auto& t : g.initializer()) initializers.insert(t.name());
        std::set<std::string> symbols;
        struct Unbound {
            std::string symbol, input;
            int axis;
        };
        std::vector<Unbound> unbound;
        const auto bind = [&](onnx::ValueInfoProto& v, bool is_input) {
            if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
            auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
            for (int axis = 0; axis < shape->dim_size(); ++axis) {
                auto* dim = shape->mutable_dim(axis);
                if (dim->has_dim_param()) {
                    const std::string symbol = dim->dim_param();
                    symbols.insert(symbol);
                    if (const auto it = options_.dims.find(symbol); it != options_.dims.end())
                        dim->set_dim_value(it->second);
                    else if (is_input)
                        unbound.push_back({symbol, v.name(), axis});
                } else if (!dim->has_dim_value() && is_input) {
                    unbound.push_back({"", v.name(), axis});
                }
            }
        };
        for (auto& v : *g.mutable_input())
            if (!initializers.count(v.name())) bind(v, true);
        for (auto& v : *g.mutable_output()) bind(v, false);
        for (auto& v : *g.mutable_value_info()) bind(v, false);
        for (const auto& [name, value] : options_.dims) {
            if (symbols.count(name)) continue;
            std::string known;
            for (const std::string& s : symbols) known += (known.empty() ? "" : ", ") + s;
            fail(path_, "--dim " + name + "=" + std::to_string(value) + ": the model has no symbolic dimension '" + name +
                            "'" + trace_detail::did_you_mean(name, std::vector<std::string>(symbols.begin(), symbols.end())) +
                            (known.empty() ? " (all its dimensions are fixed)" : " (its symbolic dimensions: " + known + ")"));
        }
        if (unbound.empty()) return;
        const Unbound& u = unbound.front();
        if (u.symbol.empty())
            fail(path_, "input '" + u.input + "' has an unknown size on axis " + std::to_string(u.axis) +
                            " (neither a number nor a symbolic name): the model cannot be sized");
        std::set<std::string> others;
        for (const Unbound& o : unbound)
            if (!o.symbol.empty() && o.symbol != u.symbol) others.insert(o.symbol);
        std::string also;
        for (const std::string& o : others) also += (also.empty() ? "" : ", ") + o;
        fail(path_, "symbolic dimension '" + u.symbol + "' (input '" + u.input + "', axis " + std::to_string(u.axis) +
                        ") is not bound: give its size with --dim " + u.symbol + "=N" +
                        (also.empty() ? "" : " (also unbound: " + also + ")"));
    }

    // ---- shapes --------------------------------------------------------------------------------
    void infer_shapes() {
        onnx_guards::install_inference_guards();
        const int nodes = model_.graph().node_size();
        std::map<std::string, std::int64_t> fallback_ops;
        for (int round = 0; round <= nodes; ++round) {
            try {
                // Not strict: a node ONNX 1.12 cannot infer (an unknown or newer operator) leaves its
                // outputs without shapes; the fallback rules below fill those that accelsim knows.
                onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(),
                                                   onnx::ShapeInferenceOptions(false, 0, true));
            } catch (const std::exception& e) {
                fail(path_, std::string("ONNX shape inference failed: ") + e.what());
            }
            collect_infos();
            bool added = false;
            for (int i = 0; i < nodes; ++i) {
                const onnx::NodeProto& node = model_.graph().node(i);
                if (node.output_size() == 0 || node.input_size() == 0 || known(node.output(0))) continue;
                const TensorInfo* in = info(node.input(0));
                if (!in || !in->shape) continue;
                std::optional<Shape> out;
                if (has_same_shape_fallback(node.op_type()) && node.input_size() == 1) out = in->shape;
                if (!out) continue;
                auto* v = model_.mutable_graph()->add_value_info();
                v->set_name(node.output(0));
                auto* tensor = v->mutable_type()->mutable_tensor_type();
                tensor->set_elem_type(in->elem_type);
                for (const std::int64_t d : *out) tensor->mutable_shape()->add_dim()->set_dim_value(d);
                ++fallback_ops[node.op_type()];
                added = true;
            }
            if (!added) break;
        }
        check_inference_guards();
        if (!fallback_ops.empty()) {
            std::string list;
            for (const auto& [op, n] : fallback_ops) list += (list.empty() ? "" : ", ") + op + " x" + std::to_string(n);
            summary_.notes.push_back("shapes from accelsim's fallback rules (operators or forms newer than ONNX 1.12's opset " +
                                     std::to_string(kOnnxKnownOpset) + ", model opset " + std::to_string(opset_) + "): " + list);
        }
    }

    // A convolution or pool that breaks the rules ONNX's inference assumes got no output shape
    // (onnx_inference_guards.h); name it here, on the shapes inferred for its inputs.
    void check_inference_guards() const {
        const onnx::GraphProto& g = model_.graph();
        for (int i = 0; i < g.node_size(); ++i) {
            const onnx::NodeProto& node = g.node(i);
            if (!(node.domain().empty() || node.domain() == "ai.onnx") || !onnx_guards::is_guarded(node.op_type()))
                continue;
            const auto attribute = [&node](const std::string& name) -> const onnx::AttributeProto* {
                for (const onnx::AttributeProto& a : node.attribute())
                    if (a.name() == name) return &a;
                return nullptr;
            };
            const auto input_rank = [&](int position) {
                if (position >= node.input_size() || node.input(position).empty()) return -1;
                const TensorInfo* t = info(node.input(position));
                return t ? t->rank : -1;
            };
            if (const auto violation = onnx_guards::conv_pool_violation(node.op_type(), attribute, input_rank))
                fail(path_, node_label(node, i) + ": " + *violation + " (damaged file?)");
        }
    }

    void collect_infos() {
        infos_.clear();
        const auto take = [&](const onnx::ValueInfoProto& v) {
            if (!v.type().has_tensor_type()) return;
            TensorInfo t;
            const auto& tt = v.type().tensor_type();
            t.elem_type = tt.elem_type();
            if (tt.has_shape()) {
                t.rank = tt.shape().dim_size();
                Shape s;
                bool complete = true;
                for (const auto& d : tt.shape().dim()) {
                    if (!d.has_dim_value() || d.dim_value() < 0) complete = false;
                    else s.push_back(d.dim_value());
                }
                if (complete) t.shape = s;
            }
            infos_[v.name()] = t;
        };
        const onnx::GraphProto& g = model_.graph();
        for (const auto& v : g.input()) take(v);
        for (const auto& v : g.value_info()) take(v);
        for (const auto& v : g.output()) take(v);
        for (const auto& t : g.initializer()) {
            TensorInfo info;
            info.elem_type = t.data_type();
            info.shape = Shape(t.dims().begin(), t.dims().end());
            info.rank = t.dims_size();
            infos_[t.name()] = info;
        }
    }

    const TensorInfo* info(const std::string& name) const {
        const auto it = infos_.find(name);
        return it == infos_.end() ? nullptr : &it->second;
    }
    bool known(const std::string& name) const {
        const TensorInfo* t = info(name);
        return t && t->shape;
    }
    const Shape* shape(const std::string& name) const {
        const TensorInfo* t = info(name);
        return t && t->shape ? &*t->shape : nullptr;
    }

    // ---- graph structure -----------------------------------------------------------------------
    void index_graph() {
        const onnx::GraphProto& g = model_.graph();
        for (const auto& t : g.initializer()) constants_.insert(t.name());
        for (int i = 0; i < g.node_size(); ++i) {
            const onnx::NodeProto& node = g.node(i);
            for (const std::string& out : node.output()) producer_[out] = i;
            for (const std::string& in : node.input())
                if (!in.empty()) consumers_[in].push_back(i);
            if (node.op_type() == "Constant")
                for (const std::string& out : node.output()) constants_.insert(out);
        }
        for (const auto& v : g.output()) consumers_[v.name()].push_back(-1);  // a graph output is used outside
    }

    std::optional<std::vector<std::int64_t>> constant_ints(const std::string& name) const {
        for (const auto& t : model_.graph().initializer())
            if (t.name() == name) return tensor_ints(t);
        for (const auto& node : model_.graph().node())
            if (node.op_type() == "Constant" && node.output_size() > 0 && node.output(0) == name)
                if (const auto* a = attribute(node, "value"); a && a->has_t()) return tensor_ints(a->t());
        return std::nullopt;
    }

    // The node producing name if its type is op, else -1.
    int produced_by(const std::string& name, const std::string& op) const {
        const auto it = producer_.find(name);
        if (it == producer_.end()) return -1;
        return model_.graph().node(it->second).op_type() == op ? it->second : -1;
    }
    const onnx::NodeProto& node(int i) const { return model_.graph().node(i); }
    // The only consumer of name if it is a node of type op, else -1.
    int single_consumer(const std::string& name, const std::string& op) const {
        const auto it = consumers_.find(name);
        if (it == consumers_.end() || it->second.size() != 1 || it->second[0] < 0) return -1;
        return node(it->second[0]).op_type() == op ? it->second[0] : -1;
    }
    bool is_constant(const std::string& name) const { return constants_.count(name) > 0; }
    // For a two-input node with one constant input: the other input, or "" when neither or both are.
    std::string other_than_constant(const onnx::NodeProto& n) const {
        if (n.input_size() != 2) return "";
        const bool c0 = is_constant(n.input(0)), c1 = is_constant(n.input(1));
        if (c0 == c1) return "";
        return c0 ? n.input(1) : n.input(0);
    }

    // ---- patterns ------------------------------------------------------------------------------
    struct Group {
        std::vector<int> nodes;  // sorted; the last one emits the op
        OpKind kind;
        std::string input;       // the tensor the fused op reads
        std::string pattern;     // for the summary
        std::vector<std::int64_t> axes;  // layernorm: reduced axes of the first ReduceMean
    };

    // y = (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* gamma] [+ beta], as exporters write
    // LayerNorm below opset 17: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add.
    std::optional<Group> match_layernorm(int div) const {
        const onnx::NodeProto& d = node(div);
        if (d.input_size() != 2) return std::nullopt;
        const int sub = produced_by(d.input(0), "Sub");
        const int sqrt = produced_by(d.input(1), "Sqrt");
        if (sub < 0 || sqrt < 0) return std::nullopt;
        const int add_eps = produced_by(node(sqrt).input(0), "Add");
        if (add_eps < 0) return std::nullopt;
        const std::string var = other_than_constant(node(add_eps));
        const int mean2 = var.empty() ? -1 : produced_by(var, "ReduceMean");
        if (mean2 < 0) return std::nullopt;
        const std::string& centered = d.input(0);
        int square = produced_by(node(mean2).input(0), "Pow");
        if (square >= 0 && (node(square).input(0) != centered || !is_constant(node(square).input(1)))) square = -1;
        if (square < 0) {  // (x - mean) * (x - mean)
            square = produced_by(node(mean2).input(0), "Mul");
            if (square >= 0 && (node(square).input(0) != centered || node(square).input(1) != centered)) square = -1;
        }
        if (square < 0) return std::nullopt;
        const std::string& x = node(sub).input(0);
        const int mean1 = produced_by(node(sub).input(1), "ReduceMean");
        if (mean1 < 0 || node(mean1).input(0) != x) return std::nullopt;
        Group g{{mean1, sub, square, mean2, add_eps, sqrt, div}, OpKind::layernorm, x,
                "layernorm <- ReduceMean,Sub,Pow,ReduceMean,Add,Sqrt,Div[,Mul,Add]", ints_attribute(node(mean1), "axes")};
        if (g.axes.empty() && node(mean1).input_size() > 1)
            if (const auto a = constant_ints(node(mean1).input(1))) g.axes = *a;
        // The affine part: * gamma, then + beta.
        std::string out = d.output(0);
        const int gamma = single_consumer(out, "Mul");
        if (gamma >= 0 && other_than_constant(node(gamma)) == out) {
            g.nodes.push_back(gamma);
            out = node(gamma).output(0);
            const int beta = single_consumer(out, "Add");
            if (beta >= 0 && other_than_constant(node(beta)) == out) g.nodes.push_back(beta);
        }
        std::sort(g.nodes.begin(), g.nodes.end());
        return g;
    }

    // gelu(x) = x * 0.5 * (1 + erf(x / sqrt(2))), as exporters write GELU below opset 20:
    // Div (or Mul by 1/sqrt 2), Erf, Add 1, Mul by x (or by 0.5 x), Mul by 0.5.
    std::optional<Group> match_gelu(int erf) const {
        const std::string& scaled = node(erf).input(0);
        int scale = produced_by(scaled, "Div");
        if (scale < 0) scale = produced_by(scaled, "Mul");
        if (scale < 0) return std::nullopt;
        const std::string x = other_than_constant(node(scale));
        if (x.empty() || (node(scale).op_type() == "Div" && node(scale).input(0) != x)) return std::nullopt;
        const std::string& e = node(erf).output(0);
        const int one = single_consumer(e, "Add");
        if (one < 0 || other_than_constant(node(one)) != e) return std::nullopt;
        const std::string& shifted = node(one).output(0);
        const int times = single_consumer(shifted, "Mul");
        if (times < 0 || node(times).input_size() != 2) return std::nullopt;
        const std::string other = node(times).input(0) == shifted ? node(times).input(1) : node(times).input(0);
        Group g{{scale, erf, one, times}, OpKind::gelu, x, "gelu <- Div,Erf,Add,Mul,Mul", {}};
        if (other == x) {
            // (x * (1 + erf)) * 0.5
            const int half = single_consumer(node(times).output(0), "Mul");
            if (half < 0 || other_than_constant(node(half)) != node(times).output(0)) return std::nullopt;
            g.nodes.push_back(half);
        } else {
            // (0.5 * x) * (1 + erf)
            const int half = produced_by(other, "Mul");
            if (half < 0 || other_than_constant(node(half)) != x) return std::nullopt;
            const auto users = consumers_.find(other);
            if (users == consumers_.end() || users->second.size() != 1) return std::nullopt;
            g.nodes.push_back(half);
        }
        std::sort(g.nodes.begin(), g.nodes.end());
        return g;
    }

    void find_patterns() {
        const onnx::GraphProto& g = model_.graph();
        for (int i = 0; i < g.node_size(); ++i) {
            std::optional<Group> group;
            if (g.node(i).op_type() == "Div") group = match_layernorm(i);
            else if (g.node(i).op_type() == "Erf") group = match_gelu(i);
            if (!group) continue;
            bool overlaps = false;
            for (const int n : group->nodes) overlaps = overlaps || group_of_.count(n);
            if (overlaps) continue;
            const int anchor = group->nodes.back();
            for (const int n : group->nodes) group_of_[n] = anchor;
            groups_[anchor] = *group;
        }
        // BatchNormalization right after a Conv whose output nothing else reads: folded into the
        // convolution's weights and bias, as inference compilers (and accelsim's ResNet-50 trace) do.
        for (int i = 0; i < g.node_size(); ++i) {
            if (g.node(i).op_type() != "BatchNormalization" || g.node(i).input_size() == 0) continue;
            const int conv = produced_by(g.node(i).input(0), "Conv");
            if (conv >= 0 && single_consumer(g.node(i).input(0), "BatchNormalization") == i) folded_.insert(i);
        }
    }

    // ---- mapping -------------------------------------------------------------------------------
    Op new_op(OpKind kind, int index, const std::string& dtype_source) {
        const onnx::NodeProto& n = node(index);
        Op op;
        op.kind = kind;
        op.name = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
        op.line = index + 1;
        const TensorInfo* t = info(dtype_source);
        op.dtype = t ? dtype_of(t->elem_type).value_or(default_dtype_) : default_dtype_;
        return op;
    }

    // A GEMM whose B is in the other fp8 format than A (an fp8 training graph's e5m2 gradients
    // times e4m3 weights): Op::b_dtype.
    void set_b_dtype(Op& op, const std::string& b_source) {
        const TensorInfo* t = info(b_source);
        if (const std::optional<DType> b = t ? dtype_of(t->elem_type) : std::nullopt) op.set_b_dtype_if_mixed(*b);
    }

    void unmapped(const std::string& label) { ++summary_.unmapped[label]; }

    void map_nodes() {
        const onnx::GraphProto& g = model_.graph();
        summary_.source_ops = g.node_size();
        std::map<std::string, std::string> approximations;  // op type -> accelsim kind it is costed as
        for (int i = 0; i < g.node_size(); ++i) {
            const onnx::NodeProto& n = g.node(i);
            const std::string& type = n.op_type();
            if (const auto grouped = group_of_.find(i); grouped != group_of_.end()) {
                ++summary_.fused[type];
                if (grouped->second == i) emit_group(groups_.at(i), i);
                continue;
            }
            if (folded_.count(i)) {
                ++summary_.folded[type];
                continue;
            }
            const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
            const auto rule = mapping_rules().find(type);
            if (!default_domain || rule == mapping_rules().end()) {
                unmapped(default_domain ? type : n.domain() + ":" + type);
                continue;
            }
            if (rule->second.rule == Rule::shape_only || moves_nothing(i, rule->second.rule)) {
                ++summary_.shape_only[type];
                continue;
            }
            if (!map_node(i, rule->second)) {
                unmapped(type + " (shape unknown)");
                continue;
            }
            ++summary_.mapped[type];
            const OpKind kind = ops_.back().kind;
            std::string natural = type;
            std::transform(natural.begin(), natural.end(), natural.begin(), [](unsigned char c) { return std::tolower(c); });
            const Rule r = rule->second.rule;
            if ((r == Rule::elementwise || r == Rule::input_pass || r == Rule::batchnorm || r == Rule::data_copy ||
                 r == Rule::gather || r == Rule::cast) &&
                natural != to_string(kind))
                approximations[type] = std::string(to_string(kind));
        }
        if (!approximations.empty()) {
            std::string list;
            for (const auto& [type, kind] : approximations) list += (list.empty() ? "" : ", ") + type + " as " + kind;
            summary_.notes.push_back("costed as the nearest accelsim op (docs/import.md): " + list);
        }
    }

    void emit_group(const Group& group, int anchor) {
        ++summary_.patterns[group.pattern];
        const Shape* x = shape(group.input);
        if (!x || x->empty()) {
            unmapped(std::string(to_string(group.kind)) + " pattern (shape unknown)");
            return;
        }
        const auto total = numel(*x);
        if (!total) fail(path_, node_label(node(anchor), anchor) + ": element count overflows a 64-bit integer");
        Op op = new_op(group.kind, anchor, group.input);
        if (group.kind == OpKind::layernorm) {
            // Reduced over the trailing axes ReduceMean names (the last one when it names none).
            const auto rank = static_cast<std::int64_t>(x->size());
            std::int64_t first = rank - 1;
            for (const std::int64_t a : group.axes) first = std::min(first, a < 0 ? a + rank : a);
            const auto cols = numel(Shape(x->begin() + std::max<std::int64_t>(first, 0), x->end()));
            if (!cols) fail(path_, node_label(node(anchor), anchor) + ": element count overflows a 64-bit integer");
            op.cols = *cols;
            op.rows = *cols > 0 ? *total / *cols : 0;
        } else {
            op.elements = *total;
        }
        push(std::move(op), anchor);
    }

    void push(Op op, int index) {
        if (op.vector_elements() == 0 && !is_gemm_like(op.kind))
            fail(path_, node_label(node(index), index) + ": an empty tensor (a dimension of 0)");
        ops_.push_back(std::move(op));
    }

    // Data-movement nodes that cost nothing (docs/import.md): index and shape arithmetic (an
    // integer output: Shape -> Gather -> Concat chains, token ids), a Gather from a weight (an
    // embedding lookup reads only the rows it picks), a Cast to a type of the same width.
    bool moves_nothing(int i, Rule rule) const {
        if (rule != Rule::data_copy && rule != Rule::gather && rule != Rule::cast) return false;
        const onnx::NodeProto& n = node(i);
        if (n.input_size() == 0 || n.output_size() == 0) return true;
        const TensorInfo* out = info(n.output(0));
        if (out && is_integer_index_type(out->elem_type)) return true;
        if (rule == Rule::gather) return is_constant(n.input(0));
        if (rule == Rule::cast) {
            const TensorInfo* in = info(n.input(0));
            return !in || !out || element_width(in->elem_type) == element_width(out->elem_type);
        }
        return false;
    }

    // Fills one op for node i; false when a shape it needs is unknown.
    bool map_node(int i, const MappingRule& rule) {
        const onnx::NodeProto& n = node(i);
        switch (rule.rule) {
            case Rule::matmul: return map_matmul(i);
            case Rule::gemm: return map_gemm(i);
            case Rule::conv: return map_conv(i);
            case Rule::pool: return map_pool(i);
            case Rule::softmax:
            case Rule::layernorm: {
                const Shape* s = shape(n.input(0));
                if (!s || s->empty()) return false;
                const auto rank = static_cast<std::int64_t>(s->size());
                // Softmax before opset 13 flattens at axis (default 1); from 13 on it reduces one
                // axis (default -1). LayerNormalization normalizes axis.. (default -1).
                const bool flattening = rule.rule == Rule::layernorm || opset_ < 13;
                std::int64_t axis = int_attribute(n, "axis", rule.rule == Rule::softmax && opset_ < 13 ? 1 : -1);
                if (axis < 0) axis += rank;
                if (axis < 0 || axis >= rank) fail(path_, node_label(n, i) + ": axis out of range");
                const auto total = numel(*s);
                const auto cols = numel(Shape(s->begin() + axis, flattening ? s->end() : s->begin() + axis + 1));
                if (!total || !cols) fail(path_, node_label(n, i) + ": element count overflows a 64-bit integer");
                Op op = new_op(rule.rule == Rule::softmax ? OpKind::softmax : OpKind::layernorm, i, n.input(0));
                op.cols = *cols;
                op.rows = *cols > 0 ? *total / *cols : 0;
                push(std::move(op), i);
                return true;
            }
            case Rule::batchnorm:
            case Rule::elementwise:
            case Rule::input_pass:
            case Rule::data_copy:
            case Rule::gather:
            case Rule::cast: {
                // Elementwise ops cover their (broadcast) output; pools and reductions read each
                // input element once.
                const std::string& tensor = rule.rule == Rule::input_pass ? n.input(0) : n.output(0);
                const Shape* s = shape(tensor);
                if (!s) return false;
                const auto count = numel(*s);
                if (!count) fail(path_, node_label(n, i) + ": element count overflows a 64-bit integer");
                Op op = new_op(rule.kind, i, n.input(0));
                op.elements = *count;
                push(std::move(op), i);
                return true;
            }
            case Rule::shape_only: break;
        }
        return false;
    }

    bool map_matmul(int i) {
        const onnx::NodeProto& n = node(i);
        const Shape* a = shape(n.input(0));
        const Shape* b = shape(n.input(1));
        if (!a || !b) return false;
        OpKind kind = OpKind::matmul;
        GemmShape gemm;
        if (const std::string problem = numpy_matmul(*a, *b, kind, gemm); !problem.empty())
            fail(path_, node_label(n, i) + ": " + problem);
        Op op = new_op(kind, i, n.input(0));
        set_b_dtype(op, n.input(1));
        op.gemm = gemm;
        push(std::move(op), i);
        return true;
    }

    bool map_gemm(int i) {
        const onnx::NodeProto& n = node(i);
        const Shape* a = shape(n.input(0));
        const Shape* b = shape(n.input(1));
        if (!a || !b || a->size() != 2 || b->size() != 2) return false;
        const bool ta = int_attribute(n, "transA", 0) != 0, tb = int_attribute(n, "transB", 0) != 0;
        Op op = new_op(OpKind::matmul, i, n.input(0));
        set_b_dtype(op, n.input(1));
        op.gemm.m = ta ? (*a)[1] : (*a)[0];
        op.gemm.k = ta ? (*a)[0] : (*a)[1];
        op.gemm.n = tb ? (*b)[0] : (*b)[1];
        const std::int64_t kb = tb ? (*b)[1] : (*b)[0];
        if (kb != op.gemm.k)
            fail(path_, node_label(n, i) + ": inner dimensions differ (" + std::to_string(op.gemm.k) + " and " +
                            std::to_string(kb) + ")");
        push(std::move(op), i);
        return true;
    }

    // The spatial axes of a Conv or a pool: input sizes, window, strides, dilations and the
    // symmetric pad per axis (accelsim's conv2d and pool pad both sides alike), from the node's
    // strides, dilations, pads and auto_pad; a 1-D node is a 2-D one of height 1.
    struct SpatialAxes {
        std::int64_t in[2] = {1, 1}, window[2] = {1, 1}, stride[2] = {1, 1}, dilation[2] = {1, 1}, pad[2] = {0, 0};
    };
    SpatialAxes spatial_axes(int i, const Shape& x, const std::int64_t* window, std::size_t spatial, bool ceil_mode) {
        const onnx::NodeProto& n = node(i);
        const std::vector<std::int64_t> strides = ints_attribute(n, "strides"), dilations = ints_attribute(n, "dilations"),
                                        pads = ints_attribute(n, "pads");
        const std::string auto_pad = string_attribute(n, "auto_pad", "NOTSET");
        SpatialAxes s;
        const std::size_t first = 2 - spatial;  // 1-D: the width axis only
        for (std::size_t a = 0; a < spatial; ++a) {
            const std::size_t axis = first + a;
            s.in[axis] = x[2 + a];
            s.window[axis] = window[a];
            if (a < strides.size()) s.stride[axis] = strides[a];
            if (a < dilations.size()) s.dilation[axis] = dilations[a];
            if (s.stride[axis] <= 0 || s.dilation[axis] <= 0)
                fail(path_, node_label(n, i) + ": strides and dilations must be positive");
            // Sizes, strides, dilations and pads below 2^31 keep the output-size arithmetic
            // below in 64 bits; op_checks then judges the shape itself.
            constexpr std::int64_t kLimit = std::int64_t{1} << 31;
            for (const std::int64_t v : {s.in[axis], s.window[axis], s.stride[axis], s.dilation[axis]})
                if (v >= kLimit) fail(path_, node_label(n, i) + ": a size, stride or dilation of " + std::to_string(v) + " is out of range (at most 2^31 - 1)");
            if (s.window[axis] <= 0)
                fail(path_, node_label(n, i) + ": the window must be positive, got " + std::to_string(s.window[axis]));
            for (const std::int64_t p : pads)
                if (p < 0 || p >= kLimit) fail(path_, node_label(n, i) + ": pads must be between 0 and 2^31 - 1, got " + std::to_string(p));
            std::int64_t total = 0;
            if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
                const std::int64_t out = (s.in[axis] + s.stride[axis] - 1) / s.stride[axis];
                total = std::max<std::int64_t>(0, (out - 1) * s.stride[axis] + (s.window[axis] - 1) * s.dilation[axis] + 1 - s.in[axis]);
            } else if (auto_pad == "NOTSET") {
                if (a < pads.size() && a + spatial < pads.size()) total = pads[a] + pads[a + spatial];
            } else if (auto_pad != "VALID") {
                fail(path_, node_label(n, i) + ": unknown auto_pad '" + auto_pad + "'");
            }
            // Take the symmetric pad that gives ONNX's output size (an odd total pads one more
            // row or column on one side).
            const auto out_with = [&](std::int64_t total_pad) {
                return window_output_size(s.in[axis], s.window[axis], s.stride[axis], total_pad, s.dilation[axis], ceil_mode);
            };
            const std::int64_t wanted = out_with(total);
            s.pad[axis] = total / 2;
            if (out_with(2 * s.pad[axis]) != wanted) s.pad[axis] = (total + 1) / 2;
            if (out_with(2 * s.pad[axis]) != wanted)
                summary_.notes.push_back(node_label(n, i) + ": asymmetric padding " + std::to_string(total) +
                                         " has no symmetric equal; output " + std::to_string(out_with(2 * s.pad[axis])) +
                                         " instead of " + std::to_string(wanted));
        }
        return s;
    }

    bool map_conv(int i) {
        const onnx::NodeProto& n = node(i);
        const Shape* x = shape(n.input(0));
        const Shape* w = n.input_size() > 1 ? shape(n.input(1)) : nullptr;
        if (!x || !w || x->size() != w->size()) return false;
        const std::size_t spatial = x->size() - 2;
        if (spatial != 1 && spatial != 2) return false;  // Conv3D: no accelsim op
        Op op = new_op(OpKind::conv2d, i, n.input(0));
        Conv2dShape& c = op.conv;
        c.n = (*x)[0];
        c.c = (*x)[1];
        c.k = (*w)[0];
        c.groups = int_attribute(n, "group", 1);
        // ONNX is NCHW with [K, C/groups, R, S] filters.
        const SpatialAxes s = spatial_axes(i, *x, w->data() + 2, spatial, false);
        c.h = s.in[0];
        c.w = s.in[1];
        c.r = s.window[0];
        c.s = s.window[1];
        c.stride_h = s.stride[0];
        c.stride_w = s.stride[1];
        c.dilation_h = s.dilation[0];
        c.dilation_w = s.dilation[1];
        c.pad_h = s.pad[0];
        c.pad_w = s.pad[1];
        if (const std::string problem = conv_channels_problem(c.c, (*w)[1], c.groups); !problem.empty())
            fail(path_, node_label(n, i) + ": " + problem);
        push(std::move(op), i);
        return true;
    }

    // MaxPool / AveragePool (kernel_shape, strides, pads, auto_pad, dilations, ceil_mode,
    // count_include_pad) and the global pools (the whole image) of a 1-D or 2-D NCHW input.
    bool map_pool(int i) {
        const onnx::NodeProto& n = node(i);
        const Shape* x = shape(n.input(0));
        if (!x || x->size() < 3) return false;
        const std::size_t spatial = x->size() - 2;
        if (spatial != 1 && spatial != 2) return false;  // 3-D pools: no accelsim op
        const std::string& type = n.op_type();
        const bool global = type == "GlobalAveragePool" || type == "GlobalMaxPool";
        Op op = new_op(OpKind::pool, i, n.input(0));
        PoolShape& p = op.pool;
        p.mode = type == "MaxPool" || type == "GlobalMaxPool" ? PoolMode::max : PoolMode::avg;
        p.n = (*x)[0];
        p.c = (*x)[1];
        p.global = global;
        std::vector<std::int64_t> window(x->begin() + 2, x->end());
        if (!global) {
            window = ints_attribute(n, "kernel_shape");
            if (window.size() != spatial)
                fail(path_, node_label(n, i) + ": kernel_shape must have " + std::to_string(spatial) + " values, got " +
                                std::to_string(window.size()));
            p.ceil_mode = int_attribute(n, "ceil_mode", 0) != 0;
            p.count_pad = p.mode == PoolMode::avg && int_attribute(n, "count_include_pad", 0) != 0;
        }
        const SpatialAxes s = spatial_axes(i, *x, window.data(), spatial, p.ceil_mode);
        p.h = s.in[0];
        p.w = s.in[1];
        p.r = s.window[0];
        p.s = s.window[1];
        p.stride_h = s.stride[0];
        p.stride_w = s.stride[1];
        p.dilation_h = s.dilation[0];
        p.dilation_w = s.dilation[1];
        p.pad_h = s.pad[0];
        p.pad_w = s.pad[1];
        p.count_pad = p.count_pad && (p.pad_h > 0 || p.pad_w > 0);  // no padding: nothing to count
        // A window that does not fit leaves no output: say so here, before push() would call it
        // an empty tensor.
        if (const std::string problem = shape_problem(op); !problem.empty())
            fail(path_, node_label(n, i) + ": " + problem);
        push(std::move(op), i);
        return true;
    }

    const std::string& path_;
    DType default_dtype_;
    const ImportOptions& options_;
    onnx::ModelProto model_;
    int opset_ = 0;
    std::map<std::string, TensorInfo> infos_;
    std::map<std::string, int> producer_;
    std::map<std::string, std::vector<int>> consumers_;
    std::set<std::string> constants_;
    std::map<int, int> group_of_;  // node -> the node that emits its group's op
    std::map<int, Group> groups_;  // by emitting node
    std::set<int> folded_;
    std::vector<Op> ops_;
    ImportSummary summary_;
};

}  // namespace

ImportedModel import_onnx(const std::string& path, DType default_dtype, const ImportOptions& options) {
    return OnnxImporter(path, default_dtype, options).run();
}

}  // namespace accelsim
