// The importers through the real executable: ONNX models built by the tests and the PyTorch
// profiler fixture, simulated on tpu_v4 and a100 (each run under a second: the models are one small
// layer), `accelsim import` round trips, and bad input exiting 2 with one message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/accelsim_process.h"
#include "tests/onnx_test_models.h"

namespace fs = std::filesystem;
using namespace accelsim_test;

namespace {

const char* kFixture = "tests/trace/fixtures/bert_layer_profile.json";
const char* kEncoderDims = "--dim batch=2 --dim seq=8";

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// The per-op reports without "source" (FILE:LINE of the op, which differs between a model and the
// trace written from it).
nlohmann::json ops_without_source(nlohmann::json ops) {
    for (auto& op : ops) op.erase("source");
    return ops;
}

nlohmann::json run_json(const std::string& args, const fs::path& json_path) {
    const Result r = run(args + " -q --json " + quoted(json_path));
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(slurp(json_path)) : nlohmann::json::object();
}

// MACs and op counts worked out in tests/trace/test_onnx_import.cpp and test_pytorch_import.cpp.
struct Model {
    const char* name;
    std::int64_t macs;
    std::size_t ops;
};

class ImportCliOnChip : public ::testing::TestWithParam<const char*> {};

TEST_P(ImportCliOnChip, OnnxModelsSimulate) {
    const fs::path dir = scratch_dir();
    bert_layer(true).save((dir / "fused.onnx").string());
    bert_layer(false).save((dir / "decomposed.onnx").string());
    small_cnn().save((dir / "cnn.onnx").string());
    const std::string config = std::string("--config configs/") + GetParam() + ".json";
    for (const Model& m : {Model{"fused", 802816, 25}, Model{"decomposed", 802816, 25}, Model{"cnn", 2396320, 9}}) {
        const std::string dims = std::string(m.name) == "cnn" ? "--dim batch=1" : kEncoderDims;
        const nlohmann::json j = run_json(config + " --trace " + quoted(dir / (std::string(m.name) + ".onnx")) + " " + dims,
                                          dir / (std::string(m.name) + ".json"));
        EXPECT_EQ(j["totals"]["macs"].get<std::int64_t>(), m.macs) << m.name;
        EXPECT_EQ(j["ops"].size(), m.ops) << m.name;
        EXPECT_EQ(j["import"]["format"], "onnx");
        EXPECT_TRUE(j["import"]["unmapped"].empty()) << j["import"].dump();
        EXPECT_GT(j["totals"]["cycles"].get<std::int64_t>(), 0);
    }
}

TEST_P(ImportCliOnChip, PyTorchFixtureSimulates) {
    const fs::path dir = scratch_dir();
    const std::string config = std::string("--config configs/") + GetParam() + ".json";
    // .json is recognized by its "traceEvents" key; --trace-format pytorch says it outright.
    const nlohmann::json a = run_json(config + " --trace " + kFixture, dir / "auto.json");
    const nlohmann::json b = run_json(config + " --trace " + kFixture + " --trace-format pytorch", dir / "named.json");
    EXPECT_EQ(a["totals"]["macs"].get<std::int64_t>(), 1024128);
    EXPECT_EQ(a["ops"].size(), 19u);
    EXPECT_EQ(a["import"]["unmapped"], (nlohmann::json{{"aten::cumsum", 2}}));
    EXPECT_EQ(a["ops"], b["ops"]);
}

INSTANTIATE_TEST_SUITE_P(Chips, ImportCliOnChip, ::testing::Values("tpu_v4", "a100"));

TEST(ImportCli, WrittenTracesSimulateExactlyAsTheirSources) {
    const fs::path dir = scratch_dir();
    bert_layer(false).save((dir / "decomposed.onnx").string());
    Result r = run("import onnx " + quoted(dir / "decomposed.onnx") + " " + kEncoderDims + " -o " + quoted(dir / "onnx.trace"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run(std::string("import pytorch ") + kFixture + " -o " + quoted(dir / "torch.trace"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string written = slurp(dir / "torch.trace");
    EXPECT_NE(written.find("# import: UNMAPPED (not simulated): aten::cumsum x2"), std::string::npos) << written;
    EXPECT_NE(written.find("dtype=fp16"), std::string::npos) << written;  // the fp16 mm keeps its dtype
    for (const char* chip : {"tpu_v4", "a100"}) {
        const std::string config = std::string("--config configs/") + chip + ".json";
        const nlohmann::json from_onnx = run_json(
            config + " --trace " + quoted(dir / "decomposed.onnx") + " " + kEncoderDims, dir / "a.json");
        const nlohmann::json from_trace = run_json(config + " --trace " + quoted(dir / "onnx.trace"), dir / "b.json");
        EXPECT_EQ(ops_without_source(from_onnx["ops"]), ops_without_source(from_trace["ops"])) << chip;
        EXPECT_EQ(from_onnx["totals"], from_trace["totals"]) << chip;
        const nlohmann::json from_json = run_json(config + " --trace " + kFixture, dir / "c.json");
        const nlohmann::json from_torch_trace = run_json(config + " --trace " + quoted(dir / "torch.trace"), dir / "d.json");
        EXPECT_EQ(ops_without_source(from_json["ops"]), ops_without_source(from_torch_trace["ops"])) << chip;
        EXPECT_EQ(from_json["totals"], from_torch_trace["totals"]) << chip;
    }
}

TEST(ImportCli, TableListsUnmappedOperators) {
    const Result r = run(std::string("--config configs/tpu_v4.json --trace ") + kFixture);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "import: UNMAPPED (not simulated): aten::cumsum x2")) << r.out;
    EXPECT_TRUE(contains(r.out, "57 source ops -> 19 accelsim ops")) << r.out;
}

TEST(ImportCli, BadInputExitsTwoWithOneMessage) {
    const fs::path dir = scratch_dir();
    const fs::path model = dir / "fused.onnx";
    bert_layer(true).save(model.string());
    const std::string base = "--config configs/tpu_v4.json --trace ";
    Result r = run(base + quoted(model) + " --dim batch=2");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "accelsim: error: " + model.string() +
                         ": symbolic dimension 'seq' (input 'x', axis 1) is not bound: give its size with --dim seq=N\n");
    r = run("import onnx " + quoted(model) + " --dim batch=2");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "'seq'")) << r.err;
    r = run(base + kFixture + " --strict");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--strict: 2 operator(s) have no accelsim mapping: aten::cumsum x2")) << r.err;
    write_file(dir / "text.onnx", "hello\n");
    r = run(base + quoted(dir / "text.onnx"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, (dir / "text.onnx").string() + ": not an ONNX model")) << r.err;
    r = run(base + quoted(dir / "missing.onnx"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "missing.onnx: cannot open")) << r.err;
    r = run(base + "traces/tiny_gemm.trace --dim batch=2");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--dim and --strict apply to ONNX and PyTorch imports only")) << r.err;
    r = run(base + quoted(model) + " --dim batch=two");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--dim batch=two: expected NAME=N")) << r.err;
}

}  // namespace
