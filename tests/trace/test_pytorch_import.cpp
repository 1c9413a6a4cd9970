// PyTorch profiler import, on a Chrome trace written by hand in torch.profiler's format
// (tests/trace/fixtures/bert_layer_profile.json: cpu_op events with "Input Dims", "Input type" and
// "Concrete Inputs", nested as PyTorch 2.x records them on CPU).
#include <gtest/gtest.h>

#include <zlib.h>

#include <fstream>
#include <sstream>

#include "sim/trace/model_import.h"
#include "trace_test_util.h"

namespace accelsim::test_pytorch_import {
namespace {

const std::string kFixture = std::string(ACCELSIM_SOURCE_DIR) + "/tests/trace/fixtures/bert_layer_profile.json";


std::string import_error(const std::string& path) {
    try {
        import_pytorch_profile(path, DType::bf16, {});
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

// The fixture: one BERT-like layer (batch 2, seq 8, hidden 64, 4 heads, FFN 256) and a conv + relu
// on thread 1, and an fp16 mm on thread 2 that overlaps thread 1's first linear in time.
// Innermost recognized events, in time order (the thread-2 mm starts first, at 1015 us):
//   mm [4,8]x[8,4] fp16 (thread 2)                              128 MACs
//   addmm x3 (q, k, v inside aten::linear) m=16 n=64 k=64       3 x 65,536
//   bmm [8,8,16]x[8,16,8] (inside aten::matmul)                 8,192
//   div [2,4,8,8] by a scalar -> mul 512; _softmax -> 64 rows of 8
//   bmm [8,8,8]x[8,8,16]                                        8,192
//   proj: aten::linear > aten::matmul > mm [16,64]x[64,64]      65,536, then add_ [2,8,64]+[64]: 1,024
//   add 1,024; native_layer_norm 16 rows of 64 (normalized_shape [64])
//   addmm m=16 n=256 k=64 262,144; gelu 4,096; addmm m=16 n=64 k=256 262,144; add 1,024; layernorm
//   mkldnn_convolution [2,3,32,32] * [16,3,3,3], stride 2 and padding 1 from the enclosing
//     aten::conv2d's Concrete Inputs: out 16x16, 2*16*16*16*3*9 = 221,184 MACs
//   clamp_min (inside aten::relu) [2,16,16,16]: relu 8,192
// MACs: 128 + 196,608 + 16,384 + 65,536 + 524,288 + 221,184 = 1,024,128.
TEST(PyTorchImport, InnermostEventsOfTheFixture) {
    const ImportedModel m = import_pytorch_profile(kFixture, DType::bf16, {});
    EXPECT_EQ(test::op_lines(m.ops), (std::vector<std::string>{
                                "matmul m=4 n=4 k=8",
                                "matmul m=16 n=64 k=64",
                                "matmul m=16 n=64 k=64",
                                "matmul m=16 n=64 k=64",
                                "bmm b=8 m=8 n=8 k=16",
                                "mul n=512",
                                "softmax rows=64 cols=8",
                                "bmm b=8 m=8 n=16 k=8",
                                "matmul m=16 n=64 k=64",
                                "add n=1024",
                                "add n=1024",
                                "layernorm rows=16 cols=64",
                                "matmul m=16 n=256 k=64",
                                "gelu n=4096",
                                "matmul m=16 n=64 k=256",
                                "add n=1024",
                                "layernorm rows=16 cols=64",
                                "conv2d n=2 h=32 w=32 c=3 k=16 r=3 s=3 stride=2 pad=1",
                                "relu n=8192",
                            }));
    std::int64_t macs = 0;
    for (const Op& op : m.ops) macs += op.macs();
    EXPECT_EQ(macs, 1024128);
    EXPECT_EQ(m.ops[0].dtype, DType::fp16);  // "Input type": c10::Half
    EXPECT_EQ(m.ops[1].dtype, DType::bf16);  // float: the default
    EXPECT_EQ(m.ops[0].name, "mm");
    EXPECT_EQ(m.ops[1].name, "addmm");
    EXPECT_EQ(m.ops[2].name, "addmm.2");
    EXPECT_EQ(m.ops[6].name, "softmax");  // aten::_softmax without its underscore
    // 57 aten:: events: 19 taken, 16 recognized ones that hold a recognized event (6 linear,
    // 3 matmul, softmax, 2 layer_norm, conv2d, convolution, _convolution, relu), 20 shape-only
    // (6 t, 3 transpose, 3 as_strided, 2 view, 2 _unsafe_view, expand, reshape, empty, embedding),
    // and 2 cumsum with no mapping. The user annotation and the GPU kernel are not aten:: events.
    const ImportSummary& s = m.summary;
    EXPECT_EQ(s.source_ops, 57);
    EXPECT_EQ(s.ops, 19);
    EXPECT_EQ(s.nested, (std::map<std::string, std::int64_t>{{"aten::_convolution", 1}, {"aten::conv2d", 1},
                                                             {"aten::convolution", 1}, {"aten::layer_norm", 2},
                                                             {"aten::linear", 6}, {"aten::matmul", 3},
                                                             {"aten::relu", 1}, {"aten::softmax", 1}}));
    EXPECT_EQ(s.unmapped, (std::map<std::string, std::int64_t>{{"aten::cumsum", 2}}));
    std::int64_t shape_only = 0;
    for (const auto& [name, n] : s.shape_only) shape_only += n;
    EXPECT_EQ(shape_only, 20);
    EXPECT_EQ(s.shape_only.at("aten::t"), 6);
    EXPECT_EQ(s.mapped.at("aten::addmm"), 5);
}

TEST(PyTorchImport, GzipCompressedTraceGivesTheSameOps) {
    std::ifstream in(kFixture, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string path = (test::temp_folder() / "prof.pt.trace.json.gz").string();
    gzFile out = gzopen(path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    gzclose(out);
    const LoadedTrace gz = load_trace(path, DType::bf16, TraceFormat::automatic, {});
    ASSERT_TRUE(gz.import.has_value());
    EXPECT_EQ(gz.import->format, "pytorch");
    EXPECT_EQ(test::op_lines(gz.ops), test::op_lines(import_pytorch_profile(kFixture, DType::bf16, {}).ops));
    // Truncated gzip data is an error naming the file.
    std::ifstream zin(path, std::ios::binary);
    const std::string zipped((std::istreambuf_iterator<char>(zin)), std::istreambuf_iterator<char>());
    const std::string cut = test::write_file("cut.json.gz", zipped.substr(0, zipped.size() / 2));
    EXPECT_EQ(import_error(cut).rfind(cut + ": cannot read (damaged or truncated gzip data): ", 0), 0u)
        << import_error(cut);
}

TEST(PyTorchImport, BadFilesGiveOneErrorNamingTheFile) {
    const std::string not_json = test::write_file("a.json", "{\"traceEvents\": [");
    EXPECT_EQ(import_error(not_json), not_json + ":1:18: not a PyTorch profiler trace: not valid JSON: syntax error "
                                                 "while parsing value - unexpected end of input; expected '[', '{', or a literal");
    const std::string other = test::write_file("config.json", "{\"kind\": \"systolic\"}");
    EXPECT_EQ(import_error(other).rfind(other + ": not a PyTorch profiler trace: no \"traceEvents\" array", 0), 0u)
        << import_error(other);
    const std::string no_ops = test::write_file("empty.json", "{\"traceEvents\": []}");
    EXPECT_EQ(import_error(no_ops), no_ops + ": no operator accelsim can simulate (0 source ops)");
    const std::string no_dur = test::write_file(
        "nodur.json", "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"aten::mm\", \"ts\": 1, \"tid\": 1}]}");
    EXPECT_EQ(import_error(no_dur), no_dur + ": event 0 'aten::mm': a complete event (ph X) needs numbers ts and dur");
    const std::string missing = (test::temp_folder() / "missing.json").string();
    EXPECT_EQ(import_error(missing), missing + ": cannot open: No such file or directory");
}

TEST(PyTorchImport, StrictRejectsUnmappedEvents) {
    ImportOptions strict;
    strict.strict = true;
    try {
        import_pytorch_profile(kFixture, DType::bf16, strict);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  kFixture + ": --strict: 2 operator(s) have no accelsim mapping: aten::cumsum x2");
    }
}

TEST(PyTorchImport, Fp8ScaledMatmulsKeepBothFormats) {
    // aten::_scaled_mm (torchao's float8 linear): mat1 [m, k], mat2 [k, n], then the scales. Its
    // dtype is mat1's fp8 format and b_dtype mat2's when the two differ (an e5m2 gradient times e4m3
    // weights); an fp8 mm keeps its format; a float mm takes the default.
    const std::string json = R"({"traceEvents": [
  {"ph": "X", "name": "aten::_scaled_mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "args": {"Input Dims": [[16, 64], [64, 32], [], [], [], [], [], []], "Input type": ["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", "", "", "Scalar", "Scalar"]}},
  {"ph": "X", "name": "aten::_scaled_mm", "pid": 1, "tid": 1, "ts": 20, "dur": 10, "args": {"Input Dims": [[16, 32], [32, 64], [], []], "Input type": ["c10::Float8_e5m2", "c10::Float8_e4m3fn", "float", "float"]}},
  {"ph": "X", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 40, "dur": 10, "args": {"Input Dims": [[8, 16], [16, 8]], "Input type": ["c10::Float8_e5m2fnuz", "c10::Float8_e5m2fnuz"]}},
  {"ph": "X", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 60, "dur": 10, "args": {"Input Dims": [[8, 16], [16, 8]], "Input type": ["float", "c10::Float8_e4m3fn"]}}
]})";
    const ImportedModel m = import_pytorch_profile(test::write_file("fp8.json", json), DType::bf16, {});
    ASSERT_EQ(m.ops.size(), 4u);
    EXPECT_EQ(test::op_lines(m.ops), (std::vector<std::string>{"matmul m=16 n=32 k=64", "matmul m=16 n=64 k=32",
                                                               "matmul m=8 n=8 k=16", "matmul m=8 n=8 k=16"}));
    EXPECT_EQ(m.ops[0].dtype, DType::fp8_e4m3);
    EXPECT_FALSE(m.ops[0].b_dtype.has_value());
    EXPECT_EQ(m.ops[1].dtype, DType::fp8_e5m2);
    EXPECT_EQ(m.ops[1].b_dtype, DType::fp8_e4m3);
    EXPECT_EQ(m.ops[2].dtype, DType::fp8_e5m2);
    EXPECT_FALSE(m.ops[2].b_dtype.has_value());
    EXPECT_EQ(m.ops[3].dtype, DType::bf16);  // A in float: the default; B's fp8 is not mixed into it
    EXPECT_FALSE(m.ops[3].b_dtype.has_value());
    EXPECT_EQ(m.summary.mapped, (std::map<std::string, std::int64_t>{{"aten::_scaled_mm", 2}, {"aten::mm", 2}}));
}

}  // namespace
}  // namespace accelsim::test_pytorch_import
