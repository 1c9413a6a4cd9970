// Inputs fuzz_onnx_import and fuzz_pytorch_import (fuzz/, docs/reliability.md) found crashing,
// and the neighbours of each found while fixing it, each with the one clear error it must give
// now, naming the file and the node or event.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/input_error.h"
#include "sim/trace/model_import.h"
#include "tests/onnx_test_models.h"

namespace accelsim::importer_fuzz_found_test {
namespace {

using accelsim_test::OnnxBuilder;

std::string scratch_file(const std::string& name, const std::string& bytes) {
    const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / ("fuzz_found_" + name);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path.string();
}

// The importer's error for the bytes, without the "FILE: " every message starts with.
template <typename Import>
std::string import_error(const std::string& name, const std::string& bytes, Import import) {
    const std::string path = scratch_file(name, bytes);
    try {
        import(path, DType::bf16, ImportOptions{});
    } catch (const InputError& e) {
        const std::string message = e.what();
        return message.rfind(path + ": ", 0) == 0 ? message.substr(path.size() + 2) : message;
    }
    return "no error";
}

std::string onnx_error(const OnnxBuilder& model, const std::string& name) {
    return import_error(name, model.bytes(), import_onnx);
}

std::string pytorch_error(const std::string& json, const std::string& name) {
    return import_error(name, json, import_pytorch_profile);
}

// fuzz_onnx_import, 6 minutes in: a MatMul node with one input. ONNX's non-strict shape
// inference let it through and the mapping read its second input past the end of the list
// (AddressSanitizer: heap-buffer-overflow in map_matmul).
TEST(FuzzFoundOnnxImport, NodeWithTooFewInputsIsDamaged) {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t{2}, std::int64_t{3}});
    b.node("MatMul", {"x"}, {"y"});
    b.output("y");
    EXPECT_EQ(onnx_error(b, "matmul1.onnx"),
              "node 1 'y' (MatMul): has 1 input(s) and 1 output(s); MatMul takes at least 2 and 1 (damaged file?)");
    // The same for an operator ONNX 1.12 has no schema for (Gelu, opset 20): one of each.
    OnnxBuilder g(20);
    g.input("x", {std::int64_t{2}, std::int64_t{3}});
    g.node("Gelu", {"x"}, {"y"})->clear_output();
    EXPECT_EQ(onnx_error(g, "gelu0.onnx"),
              "node 1 'y' (Gelu): has 1 input(s) and 0 output(s); Gelu takes at least 1 and 1 (damaged file?)");
}

// Found while fixing the above (the mapping's own arithmetic on fuzzed sizes): a Softmax over a
// tensor whose element count overflows read an empty optional; a Conv with a dilation near
// 2^62 overflowed the output-size arithmetic (undefined behaviour).
TEST(FuzzFoundOnnxImport, HugeSizesAreErrorsNotOverflows) {
    OnnxBuilder b(13);
    const std::int64_t big = std::int64_t{1} << 40;
    b.input("x", {big, big, std::int64_t{4}});
    b.node("Softmax", {"x"}, {"y"});
    b.output("y");
    EXPECT_EQ(onnx_error(b, "softmax_overflow.onnx"),
              "node 1 'y' (Softmax): element count overflows a 64-bit integer");
    OnnxBuilder c(13);
    c.input("img", {std::int64_t{1}, std::int64_t{4}, std::int64_t{10}, std::int64_t{10}});
    c.weight("w", {4, 4, 3, 3});
    OnnxBuilder::attr(c.node("Conv", {"img", "w"}, {"y"}), "dilations",
                      std::vector<std::int64_t>{std::int64_t{1} << 62, 1});
    c.output("y");
    EXPECT_EQ(onnx_error(c, "conv_dilation.onnx"),
              "node 1 'y' (Conv): a size, stride or dilation of 4611686018427387904 is out of range (at most 2^31 - 1)");
}

// fuzz_onnx_import in CI (60 s) and again here (5 minutes): a grouped Conv with auto_pad and no
// kernel_shape whose weight has rank 3 after a rank-4 input. ONNX 1.12's convPoolShapeInference
// takes the kernel from the weight's dimensions 2.. (one value) and indexes it once per spatial
// axis of the input (two): a read out of bounds inside libonnx (AddressSanitizer: SEGV).
TEST(FuzzFoundOnnxImport, ConvWeightRankDifferentFromInputRankIsNamed) {
    OnnxBuilder b(13);
    b.input("img", {std::int64_t{1}, std::int64_t{16}, std::int64_t{8}, std::int64_t{8}});
    OnnxBuilder::attr(b.node("MaxPool", {"img"}, {"p1"}), "kernel_shape", std::vector<std::int64_t>{2, 2});
    b.weight("w2", {16, 1, 3});
    auto* conv = b.node("Conv", {"p1", "w2"}, {"c2"});
    OnnxBuilder::attr(conv, "group", std::int64_t{16});
    OnnxBuilder::attr(conv, "auto_pad", std::string("SAME_UPPER"));
    b.output("c2");
    EXPECT_EQ(onnx_error(b, "conv_weight_rank.onnx"),
              "node 2 'c2' (Conv): its weight (input 2) has rank 3 but its input has rank 4; the ONNX specification "
              "requires the same rank (the kernel is the weight's dimensions 2..) (damaged file?)");
}

// Neighbours of the above: list attributes of the wrong length for the input's spatial axes,
// on a pool (inferred input) and on a conv, and a stride of 0; ONNX's own node check names an
// attribute the operator does not have (the CI reproducer also had one, "@ads").
TEST(FuzzFoundOnnxImport, ConvAndPoolAttributesMustFitTheSpatialAxes) {
    const auto image = [](OnnxBuilder& b) {
        b.input("img", {std::int64_t{1}, std::int64_t{4}, std::int64_t{8}, std::int64_t{8}});
    };
    OnnxBuilder pool(13);
    image(pool);
    auto* p = pool.node("MaxPool", {"img"}, {"p"});
    OnnxBuilder::attr(p, "kernel_shape", std::vector<std::int64_t>{2, 2});
    OnnxBuilder::attr(p, "strides", std::vector<std::int64_t>{2, 2, 2});
    pool.output("p");
    EXPECT_EQ(onnx_error(pool, "pool_strides.onnx"),
              "node 1 'p' (MaxPool): attribute 'strides' [2,2,2] has 3 value(s); the input has 2 spatial axes "
              "(input rank 4), so it needs 2 (damaged file?)");
    // A 3x3 Conv over the image with one list attribute set, and the importer's error for it.
    const auto conv_error = [&image](const std::string& attribute, const std::vector<std::int64_t>& values,
                                     const std::string& file) {
        OnnxBuilder conv(13);
        image(conv);
        conv.weight("w", {4, 4, 3, 3});
        OnnxBuilder::attr(conv.node("Conv", {"img", "w"}, {"y"}), attribute, values);
        conv.output("y");
        return onnx_error(conv, file);
    };
    EXPECT_EQ(conv_error("pads", {1, 1}, "conv_pads.onnx"),
              "node 1 'y' (Conv): attribute 'pads' [1,1] has 2 value(s); the input has 2 spatial axes (input rank 4), "
              "so it needs 4 (damaged file?)");
    EXPECT_EQ(conv_error("strides", {0, 1}, "conv_stride0.onnx"),
              "node 1 'y' (Conv): attribute 'strides' [0,1] holds 0; each value must be at least 1 (damaged file?)");
    EXPECT_EQ(conv_error("@ads", {1, 1, 1}, "conv_unknown_attribute.onnx"),
              "node 1 'y' (Conv): does not match ONNX's Conv (opset 11): Unrecognized attribute: @ads for operator Conv "
              "(damaged file?)");
}

// Found by reading the PyTorch importer for the harness: an integer in Concrete Inputs beyond
// 64 bits made std::stoll throw std::out_of_range, which escaped the importer (accelsim exited 1,
// "simulation failed", no file named); fuzz_pytorch_import reaches it from the fixture.
TEST(FuzzFoundPyTorchImport, ConcreteInputBeyond64BitsIsAnError) {
    const std::string json = R"({"traceEvents": [{"ph": "X", "name": "aten::softmax", "pid": 1, "tid": 1, "ts": 0,
        "dur": 1, "args": {"Input Dims": [[2, 8], [], []], "Concrete Inputs": ["", "99999999999999999999999", ""]}}]})";
    EXPECT_EQ(pytorch_error(json, "stoll.json"),
              "event 0 'aten::softmax': an integer in Concrete Inputs (\"99999999999999999999999\") is out of 64-bit "
              "range");
}

// Found by fuzz_pytorch_import in CI's 60 s run (2026-11-27): a number beyond a double (1e999)
// makes nlohmann throw out_of_range, not parse_error; the importer caught only the latter, so
// the exception escaped (the fuzzer aborted; accelsim exited 1 with "simulation failed"). Both
// kinds now give FILE:LINE:COL (sim/json_input_error.h), the same as configs and sweep specs.
TEST(FuzzFoundPyTorchImport, NumberBeyondADoubleIsAnErrorWithItsPlace) {
    const std::string path = scratch_file("overflow.json", "{\"traceEvents\": [\n  {\"ph\": \"X\", \"ts\": -1e999}]}");
    try {
        import_pytorch_profile(path, DType::bf16, ImportOptions{});
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), path + ":2:21: not a PyTorch profiler trace: not valid JSON: number overflow "
                                                "parsing '-1e999' (beyond the range of a double)");
    }
}

// Found with the above: a conv's weight channels times its groups overflowed in the channel
// check (undefined behaviour) instead of failing it.
TEST(FuzzFoundPyTorchImport, ConvChannelProductOverflowIsAChannelError) {
    const std::string json = R"({"traceEvents": [{"ph": "X", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 0,
        "dur": 1, "args": {"Input Dims": [[1, 4, 8, 8], [4, 4611686018427387904, 3, 3], [], [], [], [], []],
        "Concrete Inputs": ["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "4"]}}]})";
    EXPECT_EQ(pytorch_error(json, "conv_groups.json"),
              "event 0 'aten::conv2d': weight has 4611686018427387904 input channels per group, input has 4 channels "
              "in 4 group(s)");
}

}  // namespace
}  // namespace accelsim::importer_fuzz_found_test
