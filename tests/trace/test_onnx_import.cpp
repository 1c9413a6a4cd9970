// ONNX import: models built in C++ (tests/onnx_test_models.h), imported and checked against op
// lists and MAC counts worked out by hand below.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/trace/model_import.h"
#include "sim/tracegen/trace_writer.h"
#include "tests/onnx_test_models.h"
#include "trace_test_util.h"

namespace accelsim::test_onnx_import {
namespace {

using accelsim_test::OnnxBuilder;

std::string save(const OnnxBuilder& model, const std::string& name) {
    return test::write_file(name, model.bytes());
}


std::int64_t total_macs(const std::vector<Op>& ops) {
    std::int64_t macs = 0;
    for (const Op& op : ops) macs += op.macs();
    return macs;
}

std::string import_error(const std::string& path, const ImportOptions& options = {}) {
    try {
        import_onnx(path, DType::bf16, options);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

ImportOptions dims(std::int64_t batch, std::int64_t seq) {
    ImportOptions o;
    o.dims = {{"batch", batch}, {"seq", seq}};
    return o;
}

// The encoder layer at batch 2, seq 8: T = 16 tokens, hidden 64, 4 heads of 16, FFN 256.
//   q, k, v, proj: matmul m=T=16 n=64 k=64           4 x 65,536 = 262,144 MACs
//   scores: [2,4,8,16] x [2,4,16,8] -> bmm b=8 m=8 n=8 k=16     8,192
//   context: [2,4,8,8] x [2,4,8,16] -> bmm b=8 m=8 n=16 k=8     8,192
//   ffn1: m=16 n=256 k=64 and ffn2: m=16 n=64 k=256        2 x 262,144 = 524,288
//   total 802,816 = 12 T d^2 + 2 batch seq^2 d = 786,432 + 16,384.
// Vector ops: each Linear's bias Add covers its output (T x 64 = 1,024, FFN1 T x 256 = 4,096),
// the scores Div 2*4*8*8 = 512, softmax rows 2*4*8 = 64 of 8, layernorm rows 16 of 64.
// Each head Transpose (q, k, v to [b, heads, s, 16] and the context back) is a copy of
// 2*4*8*16 = 1,024 elements; the Reshapes around them are free.
const std::vector<std::string> kEncoderOps = {
    "matmul m=16 n=64 k=64",    "add n=1024",  // q
    "matmul m=16 n=64 k=64",    "add n=1024",  // k
    "matmul m=16 n=64 k=64",    "add n=1024",  // v
    "copy n=1024", "copy n=1024", "copy n=1024",  // qT, kT, vT
    "bmm b=8 m=8 n=8 k=16",                    // scores
    "mul n=512",                               // / sqrt(16)
    "softmax rows=64 cols=8",
    "bmm b=8 m=8 n=16 k=8",                    // context
    "copy n=1024",                             // context_T
    "matmul m=16 n=64 k=64",    "add n=1024",  // proj
    "add n=1024",                              // resid1
    "layernorm rows=16 cols=64",
    "matmul m=16 n=256 k=64",   "add n=4096",  // ffn1
    "gelu n=4096",
    "matmul m=16 n=64 k=256",   "add n=1024",  // ffn2
    "add n=1024",                              // resid2
    "layernorm rows=16 cols=64",
};
const std::vector<std::string> kEncoderNames = {
    "q.matmul", "q.bias", "k.matmul", "k.bias", "v.matmul", "v.bias", "qT", "kT", "vT", "scores", "scaled", "probs",
    "context", "context_T", "proj.matmul", "proj.bias", "resid1", "ln1", "ffn1.matmul", "ffn1.bias", "act", "ffn2.matmul", "ffn2.bias",
    "resid2", "y"};

TEST(OnnxImport, FusedEncoderLayerOpsAndMacs) {
    const ImportedModel m = import_onnx(save(accelsim_test::bert_layer(true), "fused.onnx"), DType::bf16, dims(2, 8));
    EXPECT_EQ(test::op_lines(m.ops), kEncoderOps);
    std::vector<std::string> names;
    for (const Op& op : m.ops) names.push_back(op.name);
    EXPECT_EQ(names, kEncoderNames);
    EXPECT_EQ(total_macs(m.ops), 802816);
    for (const Op& op : m.ops) EXPECT_EQ(op.dtype, DType::bf16) << op.name;  // fp32 tensors: the default
    // 29 nodes: 8 MatMul, 8 Add, Div, Softmax, 2 LayerNormalization, Gelu, 4 Transpose mapped;
    // 4 Reshape shape-only.
    const ImportSummary& s = m.summary;
    EXPECT_EQ(s.source_ops, 29);
    EXPECT_EQ(s.ops, 25);
    EXPECT_EQ(s.mapped, (std::map<std::string, std::int64_t>{{"Add", 8}, {"Div", 1}, {"Gelu", 1},
                                                             {"LayerNormalization", 2}, {"MatMul", 8}, {"Softmax", 1},
                                                             {"Transpose", 4}}));
    EXPECT_EQ(s.shape_only, (std::map<std::string, std::int64_t>{{"Reshape", 4}}));
    EXPECT_TRUE(s.unmapped.empty());
    // Gelu is an opset-20 operator ONNX 1.12 cannot infer: its shape (and so everything after it)
    // comes from the fallback rule, which the summary says.
    ASSERT_FALSE(s.notes.empty());
    EXPECT_NE(s.notes.front().find("fallback rules"), std::string::npos) << s.notes.front();
    EXPECT_NE(s.notes.front().find("Gelu x1"), std::string::npos) << s.notes.front();
}

TEST(OnnxImport, DecomposedEncoderLayerGivesTheSameOpsAsTheFusedOne) {
    const ImportedModel m =
        import_onnx(save(accelsim_test::bert_layer(false), "decomposed.onnx"), DType::bf16, dims(2, 8));
    EXPECT_EQ(test::op_lines(m.ops), kEncoderOps);
    std::vector<std::string> names;
    for (const Op& op : m.ops) names.push_back(op.name);
    EXPECT_EQ(names, kEncoderNames);  // a pattern's op takes the name of its last node
    EXPECT_EQ(total_macs(m.ops), 802816);
    // 49 nodes: each LayerNorm is 9 (ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul
    // gamma, Add beta) and GELU 5 (Div, Erf, Add, Mul, Mul): 29 - 3 + 18 + 5.
    const ImportSummary& s = m.summary;
    EXPECT_EQ(s.source_ops, 49);
    EXPECT_EQ(s.patterns, (std::map<std::string, std::int64_t>{
                              {"gelu <- Div,Erf,Add,Mul,Mul", 1},
                              {"layernorm <- ReduceMean,Sub,Pow,ReduceMean,Add,Sqrt,Div[,Mul,Add]", 2}}));
    EXPECT_EQ(s.fused, (std::map<std::string, std::int64_t>{{"Add", 5}, {"Div", 3}, {"Erf", 1}, {"Mul", 4},
                                                            {"Pow", 2}, {"ReduceMean", 4}, {"Sqrt", 2}, {"Sub", 2}}));
    EXPECT_EQ(s.mapped, (std::map<std::string, std::int64_t>{
                            {"Add", 8}, {"Div", 1}, {"MatMul", 8}, {"Softmax", 1}, {"Transpose", 4}}));
    EXPECT_TRUE(s.unmapped.empty());
}

TEST(OnnxImport, Opset18ReductionsWithAxesInputs) {
    // ReduceMean-18 takes its axes as an input (newer than ONNX 1.12's opset 17); 1.12's
    // ReduceMean-13 inference already reads an axes input, and the pattern reads the axes constant.
    const ImportedModel m = import_onnx(
        save(accelsim_test::bert_layer(false, onnx::TensorProto_DataType_FLOAT, true), "opset18.onnx"), DType::bf16,
        dims(2, 8));
    EXPECT_EQ(test::op_lines(m.ops), kEncoderOps);
    EXPECT_EQ(m.summary.patterns.size(), 2u);
}

TEST(OnnxImport, BertBaseSizedLayerHasTheGeneratorsMacCount) {
    // At BERT-base's sizes (hidden 768, 12 heads, FFN 3072), batch 1, seq 128, one layer has the
    // MACs `accelsim trace bert` gives each of its layers (docs/trace-format.md: 12 T d^2 + 2 T^2 d
    // = 905,969,664 + 25,165,824 = 931,135,488), though the export keeps Q, K and V apart.
    const ImportedModel m = import_onnx(
        save(accelsim_test::bert_layer(true, onnx::TensorProto_DataType_FLOAT, false, {768, 12, 3072}), "base.onnx"),
        DType::bf16, dims(1, 128));
    EXPECT_EQ(total_macs(m.ops), 931135488);
    EXPECT_EQ(test::op_lines(m.ops)[9], "bmm b=12 m=128 n=128 k=64");
    EXPECT_EQ(test::op_lines(m.ops)[11], "softmax rows=1536 cols=128");
}

TEST(OnnxImport, ConvPaddingModesOneDimensionalConvAndOldSoftmax) {
    OnnxBuilder b(11);  // Softmax before opset 13 flattens from its axis
    using B = OnnxBuilder;
    b.input("img", {std::int64_t{1}, std::int64_t{4}, std::int64_t{10}, std::int64_t{10}});
    b.weight("w3", {4, 4, 3, 3});
    b.weight("w2", {4, 4, 2, 2});
    b.weight("w1d", {8, 4, 5});
    // VALID 3x3/2: out floor((10 - 3)/2) + 1 = 4, pad 0.
    auto* valid = b.node("Conv", {"img", "w3"}, {"valid"});
    B::attr(valid, "auto_pad", std::string("VALID"));
    B::attr(valid, "strides", std::vector<std::int64_t>{2, 2});
    // SAME_LOWER 2x2/1: total pad 1, which no symmetric pad matches (pad 0 gives 9, pad 1 gives 11):
    // the importer pads 1 and notes the difference.
    B::attr(b.node("Conv", {"img", "w2"}, {"same_lower"}), "auto_pad", std::string("SAME_LOWER"));
    // Explicit asymmetric pads (top 0, left 1, bottom 2, right 1), 3x3/1: heights 10 + 2 - 2 = 10,
    // widths 10 + 2 - 2 = 10; symmetric 1 and 1 give the same.
    B::attr(b.node("Conv", {"img", "w3"}, {"asym"}), "pads", std::vector<std::int64_t>{0, 1, 2, 1});
    // 1-D: [1, 4, 40] * [8, 4, 5], stride 5: a conv2d of height 1, out floor(35/5) + 1 = 8.
    b.input("seq", {std::int64_t{1}, std::int64_t{4}, std::int64_t{40}});
    B::attr(b.node("Conv", {"seq", "w1d"}, {"conv1d"}), "strides", std::vector<std::int64_t>{5});
    // Softmax-11 over axis 1 of [1, 4, 4, 4]: 1 row of 4*4*4 = 64.
    B::attr(b.node("Softmax", {"valid"}, {"sm"}), "axis", std::int64_t{1});
    b.output("sm");
    const ImportedModel m = import_onnx(save(b, "pads.onnx"), DType::bf16, {});
    EXPECT_EQ(test::op_lines(m.ops), (std::vector<std::string>{
                                         "conv2d n=1 h=10 w=10 c=4 k=4 r=3 s=3 stride=2 pad=0",
                                         "conv2d n=1 h=10 w=10 c=4 k=4 r=2 s=2 stride=1 pad=1",
                                         "conv2d n=1 h=10 w=10 c=4 k=4 r=3 s=3 stride=1 pad=1",
                                         "conv2d n=1 h=1 w=40 c=4 k=8 r=1 s=5 stride_h=1 stride_w=5 pad=0",
                                         "softmax rows=1 cols=64",
                                     }));
    EXPECT_EQ(m.ops[3].conv.out_w(), 8);
    bool noted = false;
    for (const std::string& n : m.summary.notes)
        noted = noted || n.find("'same_lower' (Conv): asymmetric padding 1 has no symmetric equal; output 11 instead of 10") !=
                             std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(OnnxImport, Fp16ModelKeepsItsDtype) {
    const ImportedModel m = import_onnx(
        save(accelsim_test::bert_layer(true, onnx::TensorProto_DataType_FLOAT16), "fp16.onnx"), DType::bf16, dims(1, 4));
    for (const Op& op : m.ops) EXPECT_EQ(op.dtype, DType::fp16) << op.name;
}

TEST(OnnxImport, Fp8ModelsKeepTheirFormat) {
    // ONNX 1.14's FLOAT8E4M3FN = 17, FLOAT8E4M3FNUZ = 18, FLOAT8E5M2 = 19, FLOAT8E5M2FNUZ = 20
    // (onnx.proto, TensorProto.DataType); Debian's ONNX 1.12 headers have no names for them.
    const std::pair<std::int32_t, DType> types[] = {
        {17, DType::fp8_e4m3}, {18, DType::fp8_e4m3}, {19, DType::fp8_e5m2}, {20, DType::fp8_e5m2}};
    for (const auto& [elem_type, dtype] : types) {
        SCOPED_TRACE(elem_type);
        OnnxBuilder b(17, elem_type);
        b.input("x", {std::int64_t{32}, std::int64_t{64}});
        b.weight("w", {64, 16});
        b.node("MatMul", {"x", "w"}, {"y"});
        b.node("Relu", {"y"}, {"r"});
        b.output("r");
        const ImportedModel m =
            import_onnx(save(b, "fp8_" + std::to_string(elem_type) + ".onnx"), DType::bf16, {});
        ASSERT_EQ(m.ops.size(), 2u);
        for (const Op& op : m.ops) EXPECT_EQ(op.dtype, dtype) << op.name;
        EXPECT_EQ(m.ops[0].gemm.m, 32);
        EXPECT_EQ(m.ops[0].gemm.n, 16);
        EXPECT_EQ(m.ops[0].gemm.k, 64);
        EXPECT_EQ(m.ops[1].elements, 32 * 16);
    }
}

TEST(OnnxImport, Fp8GemmsOfTwoFormatsKeepBoth) {
    // An e5m2 activation (a gradient) times e4m3 weights, and the reverse through Gemm: the op takes
    // A's format as its dtype and B's as b_dtype; a B in A's format adds nothing, and a B of
    // another type (fp16) leaves the op in A's dtype.
    const struct { std::int32_t a, b; DType dtype; std::optional<DType> b_dtype; const char* node; } cases[] = {
        {19, 17, DType::fp8_e5m2, DType::fp8_e4m3, "MatMul"},
        {17, 20, DType::fp8_e4m3, DType::fp8_e5m2, "Gemm"},
        {17, 18, DType::fp8_e4m3, std::nullopt, "MatMul"},
        {17, onnx::TensorProto_DataType_FLOAT16, DType::fp8_e4m3, std::nullopt, "MatMul"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(std::to_string(c.a) + " x " + std::to_string(c.b));
        OnnxBuilder b(17, c.a);
        b.input("x", {std::int64_t{32}, std::int64_t{64}});
        b.weight("w", {64, 16});
        b.node(c.node, {"x", "w"}, {"y"});
        b.output("y");
        for (auto& t : *b.model().mutable_graph()->mutable_initializer())
            if (t.name() == "w") t.set_data_type(c.b);
        const ImportedModel m = import_onnx(save(b, "mixed.onnx"), DType::bf16, {});
        ASSERT_EQ(m.ops.size(), 1u);
        EXPECT_EQ(m.ops[0].dtype, c.dtype);
        EXPECT_EQ(m.ops[0].b_dtype, c.b_dtype);
        EXPECT_EQ(m.ops[0].gemm.m, 32);
        EXPECT_EQ(m.ops[0].gemm.n, 16);
    }
}

// The CNN at batch 1:
//   c1: 64x64x3 -> 16, 3x3/1 pad 1: out 64x64; MACs 64*64*16*3*9 = 1,769,472
//   BatchNormalization right after it: folded (no op)
//   MaxPool 2x2/2 reads r1, 16*64*64 = 65,536 elements
//   c2: depthwise 32x32x16, 3x3/2, SAME_UPPER: out ceil(32/2) = 16, total pad (16-1)*2 + 3 - 32 = 1,
//       which the symmetric pad 1 matches: floor((32 + 2 - 3)/2) + 1 = 16; MACs 16*16*16*1*9 = 36,864
//   c3: 16x16x16 -> 16, 3x3 dilation 2 pad 2: out (16 + 4 - 4 - 1) + 1 = 16; MACs 16*16*16*16*9 = 589,824
//   GlobalAveragePool reads 16*16*16 = 4,096; Gemm transB [1,16] x [10,16]^T: m=1 n=10 k=16, 160
//   total 2,396,320 MACs.
TEST(OnnxImport, SmallCnnConvolutionsPoolsAndGemm) {
    ImportOptions o;
    o.dims = {{"batch", 1}};
    const ImportedModel m = import_onnx(save(accelsim_test::small_cnn(), "cnn.onnx"), DType::int8, o);
    EXPECT_EQ(test::op_lines(m.ops), (std::vector<std::string>{
                                "conv2d n=1 h=64 w=64 c=3 k=16 r=3 s=3 stride=1 pad=1",
                                "relu n=65536",
                                "pool n=1 h=64 w=64 c=16 mode=max r=2 s=2 stride=2 pad=0",
                                "conv2d n=1 h=32 w=32 c=16 k=16 r=3 s=3 stride=2 pad=1 groups=16",
                                "relu n=4096",
                                "conv2d n=1 h=16 w=16 c=16 k=16 r=3 s=3 stride=1 pad=2 dilation=2",
                                "relu n=4096",
                                "pool n=1 h=16 w=16 c=16 mode=avg global=1",
                                "matmul m=1 n=10 k=16",
                            }));
    EXPECT_EQ(m.ops[3].conv.out_h(), 16);
    EXPECT_EQ(m.ops[5].conv.out_h(), 16);
    EXPECT_EQ(total_macs(m.ops), 2396320);
    const ImportSummary& s = m.summary;
    EXPECT_EQ(s.source_ops, 11);
    EXPECT_EQ(s.folded, (std::map<std::string, std::int64_t>{{"BatchNormalization", 1}}));
    EXPECT_EQ(s.shape_only, (std::map<std::string, std::int64_t>{{"Flatten", 1}}));
    EXPECT_EQ(s.mapped, (std::map<std::string, std::int64_t>{
                            {"Conv", 3}, {"Gemm", 1}, {"GlobalAveragePool", 1}, {"MaxPool", 1}, {"Relu", 3}}));
    // Pools are pool ops now, so no note says they were costed as something else.
    for (const std::string& n : s.notes) EXPECT_EQ(n.find("Pool"), std::string::npos) << n;
}

// Pools with their attributes, on input [1, 8, 10, 10] (opset 13):
//   MaxPool 3x3/2 pads 1, ceil_mode: ceil((10 + 2 - 3) / 2) + 1 = 6 (floor would give 5; window 5
//     starts at 10 - 1 = 9 < 10 + 1: kept) -> [1, 8, 6, 6]; 6*6*8*9 = 2,592 FLOPs
//   AveragePool 2x2/1 pads 0,0,1,1 (asymmetric, total 1 per axis), count_include_pad:
//     ONNX gives floor((6 + 1 - 2) / 1) + 1 = 6; symmetric pad 0 gives 5, pad 1 gives 7: no equal,
//     noted, pad 1; count_include_pad kept (the pad is not 0)
//   GlobalMaxPool on ONNX's [1, 8, 6, 6] -> 1 x 1; 8 outputs of 36 compares = 288 FLOPs
//   AveragePool 1-D kernel 3 stride 3 on [1, 8, 12]: height 1, 12 -> 4
//   MaxPool auto_pad SAME_UPPER 3x3/2 on x: out ceil(10 / 2) = 5, total pad 4*2 + 3 - 10 = 1,
//     which symmetric pad 1 matches: floor((10 + 2 - 3) / 2) + 1 = 5
TEST(OnnxImport, PoolsWithTheirAttributes) {
    OnnxBuilder b(13);
    using B = OnnxBuilder;
    b.input("x", {std::int64_t{1}, std::int64_t{8}, std::int64_t{10}, std::int64_t{10}});
    auto* p1 = b.node("MaxPool", {"x"}, {"p1"});
    B::attr(p1, "kernel_shape", std::vector<std::int64_t>{3, 3});
    B::attr(p1, "strides", std::vector<std::int64_t>{2, 2});
    B::attr(p1, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    B::attr(p1, "ceil_mode", std::int64_t{1});
    auto* p2 = b.node("AveragePool", {"p1"}, {"p2"});
    B::attr(p2, "kernel_shape", std::vector<std::int64_t>{2, 2});
    B::attr(p2, "pads", std::vector<std::int64_t>{0, 0, 1, 1});
    B::attr(p2, "count_include_pad", std::int64_t{1});
    b.node("GlobalMaxPool", {"p2"}, {"p3"});
    b.input("seq", {std::int64_t{1}, std::int64_t{8}, std::int64_t{12}});
    auto* p4 = b.node("AveragePool", {"seq"}, {"p4"});
    B::attr(p4, "kernel_shape", std::vector<std::int64_t>{3});
    B::attr(p4, "strides", std::vector<std::int64_t>{3});
    auto* p5 = b.node("MaxPool", {"x"}, {"p5"});
    B::attr(p5, "kernel_shape", std::vector<std::int64_t>{3, 3});
    B::attr(p5, "strides", std::vector<std::int64_t>{2, 2});
    B::attr(p5, "auto_pad", std::string("SAME_UPPER"));
    for (const char* o : {"p3", "p4", "p5"}) b.output(o);
    const ImportedModel m = import_onnx(save(b, "pools.onnx"), DType::bf16, {});
    EXPECT_EQ(test::op_lines(m.ops), (std::vector<std::string>{
                                         "pool n=1 h=10 w=10 c=8 mode=max r=3 s=3 stride=2 pad=1 ceil=1",
                                         "pool n=1 h=6 w=6 c=8 mode=avg r=2 s=2 stride=1 pad=1 count_pad=1",
                                         "pool n=1 h=6 w=6 c=8 mode=max global=1",
                                         "pool n=1 h=1 w=12 c=8 mode=avg r=1 s=3 stride_h=1 stride_w=3 pad=0",
                                         "pool n=1 h=10 w=10 c=8 mode=max r=3 s=3 stride=2 pad=1",
                                     }));
    EXPECT_EQ(m.ops[0].pool.out_h(), 6);
    EXPECT_EQ(m.ops[0].flops(), 2592);
    EXPECT_EQ(m.ops[1].pool.out_h(), 7);
    EXPECT_EQ(m.ops[2].flops(), 288);
    EXPECT_EQ(m.ops[3].pool.out_w(), 4);
    EXPECT_EQ(m.ops[4].pool.out_h(), 5);
    EXPECT_EQ(m.summary.mapped, (std::map<std::string, std::int64_t>{
                                    {"AveragePool", 2}, {"GlobalMaxPool", 1}, {"MaxPool", 2}}));
    bool noted = false;
    for (const std::string& n : m.summary.notes) noted = noted || n.find("asymmetric padding 1") != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(OnnxImport, PoolLargerThanItsInputIsAnErrorNamingTheNode) {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t{1}, std::int64_t{4}, std::int64_t{3}, std::int64_t{3}});
    auto* p = b.node("MaxPool", {"x"}, {"y"});
    OnnxBuilder::attr(p, "kernel_shape", std::vector<std::int64_t>{5, 5});
    b.output("y");
    const std::string path = save(b, "big.onnx");
    const std::string e = import_error(path);
    EXPECT_NE(e.find("big.onnx: node 1 'y' (MaxPool): the window's height (5 with dilation) is larger than the "
                     "padded input (3 + 2*0 = 3)"),
              std::string::npos)
        << e;
}

TEST(OnnxImport, GemmTransposesMatMulVectorsAndBroadcastBatches) {
    OnnxBuilder b(13);
    b.input("a", {std::int64_t{32}, std::int64_t{8}});  // transA: A^T is 8 x 32
    b.weight("w", {16, 32});                            // transB: B^T is 32 x 16
    auto* g = b.node("Gemm", {"a", "w"}, {"g"});
    OnnxBuilder::attr(g, "transA", std::int64_t{1});
    OnnxBuilder::attr(g, "transB", std::int64_t{1});
    b.input("v", {std::int64_t{16}});
    b.weight("g_t_src", {16, 8});
    b.node("Identity", {"g_t_src"}, {"g_t"});
    b.node("MatMul", {"v", "g_t"}, {"mv"});  // [16] x [16, 8]: a row vector, m=1
    b.input("x", {std::int64_t{3}, std::int64_t{1}, std::int64_t{5}, std::int64_t{7}});
    b.input("y", {std::int64_t{4}, std::int64_t{7}, std::int64_t{2}});
    b.node("MatMul", {"x", "y"}, {"bx"});  // batch [3,1] x [4] broadcast to [3,4]: bmm b=12
    b.output("bx");
    const ImportedModel m = import_onnx(save(b, "misc.onnx"), DType::fp16, {});
    EXPECT_EQ(test::op_lines(m.ops), (std::vector<std::string>{"matmul m=8 n=16 k=32", "matmul m=1 n=8 k=16",
                                                      "bmm b=12 m=5 n=2 k=7"}));
}

TEST(OnnxImport, UnboundSymbolicDimensionIsAnErrorNamingIt) {
    const std::string path = save(accelsim_test::bert_layer(true), "fused.onnx");
    ImportOptions only_batch;
    only_batch.dims = {{"batch", 2}};
    EXPECT_EQ(import_error(path, only_batch),
              path + ": symbolic dimension 'seq' (input 'x', axis 1) is not bound: give its size with --dim seq=N");
    EXPECT_EQ(import_error(path),
              path + ": symbolic dimension 'batch' (input 'x', axis 0) is not bound: give its size with --dim batch=N "
                     "(also unbound: seq)");
    ImportOptions typo = dims(2, 8);
    typo.dims["sqe"] = 8;
    EXPECT_EQ(import_error(path, typo), path + ": --dim sqe=8: the model has no symbolic dimension 'sqe' (did you mean "
                                               "'seq'?) (its symbolic dimensions: batch, seq)");
}

OnnxBuilder model_with_unmapped_ops() {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t{4}, std::int64_t{8}});
    b.weight("w", {8, 8});
    b.ints("k", {2});
    b.node("MatMul", {"x", "w"}, {"y"});
    b.node("TopK", {"y", "k"}, {"values", "indices"});
    auto* custom = b.node("FancyAttention", {"y"}, {"z"});
    custom->set_domain("com.example");
    b.model().add_opset_import()->set_domain("com.example");
    b.model().mutable_opset_import(1)->set_version(1);
    b.node("TopK", {"values", "k"}, {"values2", "indices2"});
    b.output("values2");
    b.output("z");
    return b;
}

TEST(OnnxImport, UnmappedOpsAreCountedAndStrictRejectsThem) {
    const std::string path = save(model_with_unmapped_ops(), "unmapped.onnx");
    const ImportedModel m = import_onnx(path, DType::bf16, {});
    EXPECT_EQ(test::op_lines(m.ops), (std::vector<std::string>{"matmul m=4 n=8 k=8"}));
    EXPECT_EQ(m.summary.unmapped,
              (std::map<std::string, std::int64_t>{{"TopK", 2}, {"com.example:FancyAttention", 1}}));
    EXPECT_NE(m.summary.text().find("UNMAPPED (not simulated): TopK x2, com.example:FancyAttention x1"),
              std::string::npos)
        << m.summary.text();
    ImportOptions strict;
    strict.strict = true;
    EXPECT_EQ(import_error(path, strict), path + ": --strict: 3 operator(s) have no accelsim mapping: TopK x2, "
                                                 "com.example:FancyAttention x1");
}

TEST(OnnxImport, BadFilesGiveOneErrorNamingTheFile) {
    const std::string text = test::write_file("notes.onnx", "# accelsim-trace 1\nmatmul a m=1 n=1 k=1\n");
    EXPECT_EQ(import_error(text).rfind(text + ": not an ONNX model", 0), 0u) << import_error(text);
    const std::string bytes = accelsim_test::bert_layer(true).bytes();
    const std::string truncated = test::write_file("truncated.onnx", bytes.substr(0, bytes.size() / 2));
    EXPECT_EQ(import_error(truncated).rfind(truncated + ": not an ONNX model, or a truncated one", 0), 0u)
        << import_error(truncated);
    const std::string empty = test::write_file("empty.onnx", "");
    EXPECT_EQ(import_error(empty), empty + ": not an ONNX model: the file is empty");
    const std::string missing = (test::temp_folder() / "missing.onnx").string();
    EXPECT_EQ(import_error(missing), missing + ": cannot open: No such file or directory");
    EXPECT_EQ(import_error("/dev/zero"), "/dev/zero: cannot open: not a regular file");  // would never end
}

TEST(OnnxImport, WrittenTraceReadsBackAsTheSameOps) {
    // As `accelsim import onnx` does: fp32 ops are written without dtype= and take the reader's default.
    const ImportedModel m =
        import_onnx(save(accelsim_test::bert_layer(false), "decomposed.onnx"), DType::fp32, dims(2, 8));
    std::ostringstream text;
    write_trace(text, m.ops, m.summary.text(), DType::fp32);
    EXPECT_EQ(text.str().find("dtype="), std::string::npos);
    for (const DType d : {DType::bf16, DType::int8}) {
        const std::vector<Op> back = read_trace(test::write_file("back.trace", text.str()), d);
        const ImportedModel direct =
            import_onnx(save(accelsim_test::bert_layer(false), "decomposed.onnx"), d, dims(2, 8));
        ASSERT_EQ(back.size(), direct.ops.size());
        EXPECT_EQ(test::op_lines(back), test::op_lines(direct.ops));
        for (std::size_t i = 0; i < back.size(); ++i) {
            EXPECT_EQ(back[i].name, direct.ops[i].name);
            EXPECT_EQ(back[i].dtype, direct.ops[i].dtype);
        }
    }
}

TEST(OnnxImport, TraceFormatByExtensionAndByName) {
    const std::string path = save(accelsim_test::small_cnn(), "cnn.onnx");
    ImportOptions o;
    o.dims = {{"batch", 1}};
    const LoadedTrace t = load_trace(path, DType::bf16, TraceFormat::automatic, o);
    ASSERT_TRUE(t.import.has_value());
    EXPECT_EQ(t.import->format, "onnx");
    EXPECT_EQ(t.ops.size(), 9u);
    const std::string renamed = test::write_file("cnn.bin", accelsim_test::small_cnn().bytes());
    EXPECT_EQ(load_trace(renamed, DType::bf16, parse_trace_format("onnx"), o).ops.size(), 9u);
}

}  // namespace
}  // namespace accelsim::test_onnx_import
