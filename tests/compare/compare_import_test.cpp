// `accelsim compare` on ONNX models with --dim (docs/compare.md): each design's report is the
// single run's report of the same import, including the import summary.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/accelsim_process.h"
#include "tests/onnx_test_models.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace accelsim_test;

TEST(CompareImport, OnnxModelWithDimsMatchesSingleRuns) {
    const fs::path dir = scratch_dir();
    const fs::path model = dir / "layer.onnx";
    bert_layer(true).save(model.string());
    const std::string dims = " --dim batch=2 --dim seq=8";
    const Result r = run("compare --quiet --trace '" + model.string() + "'" + dims +
                         " --config configs/tpu_v4.json --config configs/a100.json --json '" + (dir / "c.json").string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json c = json::parse(slurp(dir / "c.json"));
    ASSERT_EQ(c["designs"].size(), 2u);
    // 25 ops and 802,816 MACs (tests/trace/test_onnx_import.cpp works them out).
    EXPECT_EQ(c["ops"].size(), 25u);
    const char* configs[] = {"tpu_v4.json", "a100.json"};
    for (std::size_t i = 0; i < 2; ++i) {
        const fs::path single_json = dir / (std::string("single_") + configs[i]);
        const Result single = run(std::string("--quiet --config configs/") + configs[i] + " --trace '" + model.string() +
                                  "'" + dims + " --json '" + single_json.string() + "'");
        ASSERT_EQ(single.exit_code, 0) << single.err;
        const json s = json::parse(slurp(single_json));
        EXPECT_EQ(c["designs"][i]["report"], s) << configs[i];
        EXPECT_EQ(s["totals"]["macs"].get<std::int64_t>(), 802816);
        EXPECT_EQ(s["import"]["format"], "onnx");
    }
}

TEST(CompareImport, UnboundDimensionIsOneErrorBeforeAnyRun) {
    const fs::path dir = scratch_dir();
    const fs::path model = dir / "layer.onnx";
    bert_layer(true).save(model.string());
    const Result r = run("compare --quiet --trace '" + model.string() +
                         "' --dim batch=2 --config configs/tpu_v4.json --config configs/a100.json");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, model.string() + ": symbolic dimension 'seq' (input 'x', axis 1) is not bound: give its "
                                                 "size with --dim seq=N"))
        << r.err;
    // --dim on a text trace is refused as for a single run.
    const Result text = run("compare --quiet --trace traces/tiny_mixed.trace --dim batch=2 --config configs/tpu_v4.json");
    EXPECT_EQ(text.exit_code, 2);
    EXPECT_TRUE(contains(text.err, "traces/tiny_mixed.trace: --dim and --strict apply to ONNX and PyTorch imports only"))
        << text.err;
}
