// What the importers cost for data movement (docs/import.md, "Data movement"): Transpose, Concat,
// Gather of activations and width-changing Casts become copy ops (each element read once and
// written once); views, shape arithmetic, embedding lookups and same-width Casts stay free. Byte
// counts worked out by hand below.
#include <gtest/gtest.h>

#include "sim/trace/model_import.h"
#include "tests/onnx_test_models.h"
#include "trace_test_util.h"

namespace accelsim::test_import_data_movement {
namespace {

using accelsim_test::OnnxBuilder;
using Counts = std::map<std::string, std::int64_t>;

// x [2, 3, 4] fp32 (24 elements), ids [2, 3] int64, an embedding table emb [10, 4].
OnnxBuilder data_movement_model() {
    OnnxBuilder b(13);
    using B = OnnxBuilder;
    b.input("x", {std::int64_t{2}, std::int64_t{3}, std::int64_t{4}});
    b.weight("emb", {10, 4});
    b.ints("pick", {0, 2});
    b.ints("first", {0});
    b.ints("flat_shape", {6, 4});
    b.ints("lead", {0});
    B::attr(b.node("Transpose", {"x"}, {"xt"}), "perm", std::vector<std::int64_t>{0, 2, 1});  // copy of 24
    B::attr(b.node("Concat", {"x", "x"}, {"cat"}), "axis", std::int64_t{1});                 // [2, 6, 4]: 48
    B::attr(b.node("Gather", {"x", "pick"}, {"picked"}), "axis", std::int64_t{1});           // [2, 2, 4]: 16
    // ids as an int64 graph input: an embedding lookup (Gather of a weight) is free.
    auto* ids = b.model().mutable_graph()->add_input();
    ids->set_name("ids");
    ids->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_INT64);
    for (const std::int64_t d : {2, 3}) ids->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    b.node("Gather", {"emb", "ids"}, {"embedded"});
    // Shape arithmetic on int64 tensors: free.
    b.node("Shape", {"x"}, {"shape"});
    b.node("Gather", {"shape", "first"}, {"batch"});
    B::attr(b.node("Concat", {"batch", "first"}, {"new_shape"}), "axis", std::int64_t{0});
    // A Cast that halves the width is a conversion pass (copy of 24); to the same type it is free.
    B::attr(b.node("Cast", {"x"}, {"x16"}), "to", std::int64_t{onnx::TensorProto_DataType_FLOAT16});
    B::attr(b.node("Cast", {"x"}, {"x32"}), "to", std::int64_t{onnx::TensorProto_DataType_FLOAT});
    // Views: free.
    b.node("Reshape", {"x", "flat_shape"}, {"flat"});
    b.node("Flatten", {"x"}, {"flat2"});
    b.node("Unsqueeze", {"x", "lead"}, {"x4"});
    for (const char* out : {"xt", "cat", "picked", "embedded", "new_shape", "x16", "x32", "flat", "flat2", "x4"}) b.output(out);
    return b;
}

TEST(ImportDataMovement, OnnxTransposeConcatAndGatherOfActivationsAreCopies) {
    const std::string path = test::write_file("moves.onnx", data_movement_model().bytes());
    const ImportedModel m = import_onnx(path, DType::bf16, {});
    EXPECT_EQ(test::op_lines(m.ops),
              (std::vector<std::string>{"copy n=24", "copy n=48", "copy n=16", "copy n=24"}));
    std::vector<std::string> names;
    for (const Op& op : m.ops) names.push_back(op.name);
    EXPECT_EQ(names, (std::vector<std::string>{"xt", "cat", "picked", "x16"}));
    // bf16 (the default for fp32 tensors): the transpose reads 24 x 2 = 48 bytes and writes 48;
    // the concat reads both inputs, 2 x 24 x 2 = 96, and writes its 96.
    EXPECT_EQ(m.ops[0].input_bytes(), 48);
    EXPECT_EQ(m.ops[0].output_bytes(), 48);
    EXPECT_EQ(m.ops[1].compulsory_bytes(), 192);
    EXPECT_EQ(m.ops[2].compulsory_bytes(), 64);
    for (const Op& op : m.ops) EXPECT_EQ(op.flops(), 0) << op.name;
    EXPECT_EQ(m.summary.mapped, (Counts{{"Cast", 1}, {"Concat", 1}, {"Gather", 1}, {"Transpose", 1}}));
    EXPECT_EQ(m.summary.shape_only, (Counts{{"Cast", 1}, {"Concat", 1}, {"Flatten", 1}, {"Gather", 2},
                                            {"Reshape", 1}, {"Shape", 1}, {"Unsqueeze", 1}}));
    bool noted = false;
    for (const std::string& n : m.summary.notes) noted = noted || n.find("Transpose as copy") != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(ImportDataMovement, PyTorchCopiesAndConcatenationsCostViewsDoNot) {
    // contiguous > clone > (empty_like, copy_): the copy_ of a [2, 8, 4, 16] tensor is the work
    // (1,024 elements); cat of [2, 3, 4] and [2, 5, 4] copies 24 + 40 = 64; index_select of 3
    // rows along dim 1 of [4, 6, 8] gives [4, 3, 8] = 96; transpose is a view.
    const std::string json = R"({"traceEvents": [
  {"ph": "X", "name": "aten::contiguous", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "args": {"Input Dims": [[2, 4, 8, 16], []]}},
  {"ph": "X", "name": "aten::clone", "pid": 1, "tid": 1, "ts": 1, "dur": 8, "args": {"Input Dims": [[2, 4, 8, 16], []]}},
  {"ph": "X", "name": "aten::empty_like", "pid": 1, "tid": 1, "ts": 1.5, "dur": 1, "args": {"Input Dims": [[2, 4, 8, 16]]}},
  {"ph": "X", "name": "aten::copy_", "pid": 1, "tid": 1, "ts": 3, "dur": 5, "args": {"Input Dims": [[2, 8, 4, 16], [2, 8, 4, 16], []], "Input type": ["float", "float", "Scalar"]}},
  {"ph": "X", "name": "aten::cat", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"Input Dims": [[[2, 3, 4], [2, 5, 4]], []], "Concrete Inputs": ["", "1"]}},
  {"ph": "X", "name": "aten::index_select", "pid": 1, "tid": 1, "ts": 30, "dur": 2, "args": {"Input Dims": [[4, 6, 8], [], [3]], "Concrete Inputs": ["", "1", ""]}},
  {"ph": "X", "name": "aten::transpose", "pid": 1, "tid": 1, "ts": 40, "dur": 1, "args": {"Input Dims": [[4, 6, 8], [], []]}}
]})";
    const ImportedModel m = import_pytorch_profile(test::write_file("moves.json", json), DType::bf16, {});
    EXPECT_EQ(test::op_lines(m.ops), (std::vector<std::string>{"copy n=1024", "copy n=64", "copy n=96"}));
    EXPECT_EQ(m.ops[0].compulsory_bytes(), 2 * 1024 * 2);
    EXPECT_EQ(m.summary.mapped, (Counts{{"aten::cat", 1}, {"aten::copy_", 1}, {"aten::index_select", 1}}));
    EXPECT_EQ(m.summary.shape_only,
              (Counts{{"aten::clone", 1}, {"aten::contiguous", 1}, {"aten::empty_like", 1}, {"aten::transpose", 1}}));
}

}  // namespace
}  // namespace accelsim::test_import_data_movement
