#pragma once
// ONNX models for the importer tests, built with the ONNX C++ API (no downloads, no Python):
// a BERT-like encoder layer as exporters write it in the fused style (LayerNormalization, Gelu of
// opset 20) and in the decomposed style (ReduceMean/Sub/Pow/Sqrt/Div and the erf form of GELU),
// and a small CNN. Weights carry shapes but no values: shapes are all the importer reads.
#include <cstdint>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include <onnx/onnx_pb.h>

namespace accelsim_test {

// A dimension: a size, or the name of a symbolic one ("batch").
using Dim = std::variant<std::int64_t, std::string>;

class OnnxBuilder {
public:
    explicit OnnxBuilder(int opset, std::int32_t elem_type = onnx::TensorProto_DataType_FLOAT) : elem_(elem_type) {
        model_.set_ir_version(8);
        model_.set_producer_name("accelsim-tests");
        auto* o = model_.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        model_.mutable_graph()->set_name("test");
    }
    void input(const std::string& name, const std::vector<Dim>& dims) { value_info(graph()->add_input(), name, dims); }
    void output(const std::string& name) { graph()->add_output()->set_name(name); }
    // A weight of the given shape (no values).
    void weight(const std::string& name, const std::vector<std::int64_t>& dims) {
        auto* t = graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(elem_);
        for (const auto d : dims) t->add_dims(d);
    }
    // A scalar float constant (0-D initializer), e.g. a LayerNorm epsilon.
    void scalar(const std::string& name, float value) {
        auto* t = graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(elem_);
        t->add_float_data(value);
    }
    // An int64 vector constant (Reshape shapes, axes), in raw_data as torch.onnx writes them
    // (little-endian, as on the x86 and ARM machines this runs on).
    void ints(const std::string& name, const std::vector<std::int64_t>& values) {
        auto* t = graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto_DataType_INT64);
        t->add_dims(static_cast<std::int64_t>(values.size()));
        t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(std::int64_t)));
    }
    onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "") {
        auto* n = graph()->add_node();
        n->set_op_type(op);
        n->set_name(name.empty() ? outputs.front() : name);
        for (const auto& i : inputs) n->add_input(i);
        for (const auto& o : outputs) n->add_output(o);
        return n;
    }
    static void attr(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto_AttributeType_INT);
        a->set_i(v);
    }
    static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<std::int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto_AttributeType_INTS);
        for (const auto x : v) a->add_ints(x);
    }
    static void attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto_AttributeType_STRING);
        a->set_s(v);
    }
    std::string bytes() const { return model_.SerializeAsString(); }
    void save(const std::string& path) const { std::ofstream(path, std::ios::binary) << bytes(); }
    onnx::ModelProto& model() { return model_; }

private:
    onnx::GraphProto* graph() { return model_.mutable_graph(); }
    void value_info(onnx::ValueInfoProto* v, const std::string& name, const std::vector<Dim>& dims) {
        v->set_name(name);
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(elem_);
        auto* shape = t->mutable_shape();
        for (const Dim& d : dims) {
            if (std::holds_alternative<std::int64_t>(d)) shape->add_dim()->set_dim_value(std::get<std::int64_t>(d));
            else shape->add_dim()->set_dim_param(std::get<std::string>(d));
        }
    }
    onnx::ModelProto model_;
    std::int32_t elem_;
};

// The layer's sizes: hidden 64, 4 heads of 16, FFN 256 by default (BERT-base: 768, 12, 3072).
struct EncoderSizes {
    std::int64_t hidden = 64, heads = 4, ffn = 256;
};

// Input x [batch, seq, hidden]. Exported as PyTorch does: MatMul
// then Add for each Linear, Reshape/Transpose for the heads, scores scaled by a Div.
// fused: LayerNormalization (opset 17) and Gelu (opset 20, unknown to ONNX 1.12), model opset 20.
// decomposed: LayerNorm as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add and GELU as
// Div, Erf, Add, Mul, Mul, model opset 17 (ReduceMean with its axes attribute), or with
// axes_as_input opset 18, where ReduceMean takes its axes as a second input (unknown to ONNX 1.12).
inline OnnxBuilder bert_layer(bool fused, std::int32_t elem_type = onnx::TensorProto_DataType_FLOAT,
                              bool axes_as_input = false, EncoderSizes size = {}) {
    OnnxBuilder b(fused ? 20 : axes_as_input ? 18 : 17, elem_type);
    using B = OnnxBuilder;
    const std::int64_t d = size.hidden, head = size.hidden / size.heads;
    b.input("x", {std::string("batch"), std::string("seq"), d});
    for (const char* w : {"Wq", "Wk", "Wv", "Wo"}) b.weight(w, {d, d});
    for (const char* w : {"bq", "bk", "bv", "bo", "b2", "ln1_g", "ln1_b", "ln2_g", "ln2_b"}) b.weight(w, {d});
    b.weight("W1", {d, size.ffn});
    b.weight("b1", {size.ffn});
    b.weight("W2", {size.ffn, d});
    b.ints("heads_shape", {0, 0, size.heads, head});
    b.ints("merged_shape", {0, 0, d});
    b.scalar("sqrt_head", 4.0f);  // its value does not matter to the importer
    const auto linear = [&](const std::string& in, const std::string& w, const std::string& bias, const std::string& out) {
        b.node("MatMul", {in, w}, {out + "_mm"}, out + ".matmul");
        b.node("Add", {out + "_mm", bias}, {out}, out + ".bias");
    };
    const auto layernorm = [&](const std::string& in, const std::string& g, const std::string& beta, const std::string& out) {
        if (fused) {
            auto* n = b.node("LayerNormalization", {in, g, beta}, {out});
            B::attr(n, "axis", std::int64_t{-1});
            return;
        }
        b.scalar(out + "_two", 2.0f);
        b.scalar(out + "_eps", 1e-12f);
        const auto mean = [&](const std::string& x, const std::string& y) {
            if (axes_as_input) {
                b.ints(y + "_axes", {-1});
                b.node("ReduceMean", {x, y + "_axes"}, {y});
            } else {
                B::attr(b.node("ReduceMean", {x}, {y}), "axes", std::vector<std::int64_t>{-1});
            }
        };
        mean(in, out + "_mean");
        b.node("Sub", {in, out + "_mean"}, {out + "_centered"});
        b.node("Pow", {out + "_centered", out + "_two"}, {out + "_sq"});
        mean(out + "_sq", out + "_var");
        b.node("Add", {out + "_var", out + "_eps"}, {out + "_var_eps"});
        b.node("Sqrt", {out + "_var_eps"}, {out + "_std"});
        b.node("Div", {out + "_centered", out + "_std"}, {out + "_normed"});
        b.node("Mul", {out + "_normed", g}, {out + "_scaled"});
        b.node("Add", {out + "_scaled", beta}, {out});
    };
    linear("x", "Wq", "bq", "q");
    linear("x", "Wk", "bk", "k");
    linear("x", "Wv", "bv", "v");
    for (const char* t : {"q", "k", "v"}) b.node("Reshape", {t, "heads_shape"}, {std::string(t) + "_heads"});
    B::attr(b.node("Transpose", {"q_heads"}, {"qT"}), "perm", std::vector<std::int64_t>{0, 2, 1, 3});
    B::attr(b.node("Transpose", {"k_heads"}, {"kT"}), "perm", std::vector<std::int64_t>{0, 2, 3, 1});
    B::attr(b.node("Transpose", {"v_heads"}, {"vT"}), "perm", std::vector<std::int64_t>{0, 2, 1, 3});
    b.node("MatMul", {"qT", "kT"}, {"scores"});
    b.node("Div", {"scores", "sqrt_head"}, {"scaled"});
    B::attr(b.node("Softmax", {"scaled"}, {"probs"}), "axis", std::int64_t{-1});
    b.node("MatMul", {"probs", "vT"}, {"context"});
    B::attr(b.node("Transpose", {"context"}, {"context_T"}), "perm", std::vector<std::int64_t>{0, 2, 1, 3});
    b.node("Reshape", {"context_T", "merged_shape"}, {"context_merged"});
    linear("context_merged", "Wo", "bo", "proj");
    b.node("Add", {"proj", "x"}, {"resid1"});
    layernorm("resid1", "ln1_g", "ln1_b", "ln1");
    linear("ln1", "W1", "b1", "ffn1");
    if (fused) {
        b.node("Gelu", {"ffn1"}, {"act"});
    } else {
        b.scalar("sqrt2", 1.4142135f);
        b.scalar("one", 1.0f);
        b.scalar("half", 0.5f);
        b.node("Div", {"ffn1", "sqrt2"}, {"act_scaled"});
        b.node("Erf", {"act_scaled"}, {"act_erf"});
        b.node("Add", {"act_erf", "one"}, {"act_shifted"});
        b.node("Mul", {"ffn1", "act_shifted"}, {"act_x"});
        b.node("Mul", {"act_x", "half"}, {"act"});
    }
    linear("act", "W2", "b2", "ffn2");
    b.node("Add", {"ffn2", "ln1"}, {"resid2"});
    layernorm("resid2", "ln2_g", "ln2_b", "y");
    b.output("y");
    return b;
}

// input [batch, 3, 64, 64]: Conv 3x3/1 pad 1 (16) + BatchNormalization + Relu, MaxPool 2x2/2,
// depthwise Conv 3x3/2 (groups 16, auto_pad SAME_UPPER) + Relu, Conv 3x3 dilation 2 pad 2 (16) +
// Relu, GlobalAveragePool, Flatten, Gemm (transB) to 10 classes. Opset 13.
inline OnnxBuilder small_cnn() {
    OnnxBuilder b(13);
    using B = OnnxBuilder;
    b.input("image", {std::string("batch"), std::int64_t{3}, std::int64_t{64}, std::int64_t{64}});
    b.weight("w1", {16, 3, 3, 3});
    b.weight("b1", {16});
    for (const char* p : {"bn_scale", "bn_bias", "bn_mean", "bn_var"}) b.weight(p, {16});
    b.weight("w2", {16, 1, 3, 3});
    b.weight("w3", {16, 16, 3, 3});
    b.weight("fc_w", {10, 16});
    b.weight("fc_b", {10});
    auto* c1 = b.node("Conv", {"image", "w1", "b1"}, {"c1"});
    B::attr(c1, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    B::attr(c1, "kernel_shape", std::vector<std::int64_t>{3, 3});
    b.node("BatchNormalization", {"c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"bn1"});
    b.node("Relu", {"bn1"}, {"r1"});
    auto* pool = b.node("MaxPool", {"r1"}, {"p1"});
    B::attr(pool, "kernel_shape", std::vector<std::int64_t>{2, 2});
    B::attr(pool, "strides", std::vector<std::int64_t>{2, 2});
    auto* c2 = b.node("Conv", {"p1", "w2"}, {"c2"});
    B::attr(c2, "group", std::int64_t{16});
    B::attr(c2, "strides", std::vector<std::int64_t>{2, 2});
    B::attr(c2, "auto_pad", std::string("SAME_UPPER"));
    b.node("Relu", {"c2"}, {"r2"});
    auto* c3 = b.node("Conv", {"r2", "w3"}, {"c3"});
    B::attr(c3, "dilations", std::vector<std::int64_t>{2, 2});
    B::attr(c3, "pads", std::vector<std::int64_t>{2, 2, 2, 2});
    b.node("Relu", {"c3"}, {"r3"});
    b.node("GlobalAveragePool", {"r3"}, {"gap"});
    b.node("Flatten", {"gap"}, {"flat"});
    B::attr(b.node("Gemm", {"flat", "fc_w", "fc_b"}, {"logits"}), "transB", std::int64_t{1});
    b.output("logits");
    return b;
}

}  // namespace accelsim_test
