// `accelsim sweep --dim NAME=N [--strict]`: each point imports the ONNX model as a single
// `accelsim --trace model.onnx --dim ...` run does (the same import options, the same numbers), the
// dims are part of the point's hash, and a missing or misplaced --dim stops the sweep before any
// point with exit 2 naming the file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../accelsim_process.h"
#include "sim/sweep/sweep_plot.h"
#include "tests/onnx_test_models.h"

namespace accelsim_test::sweep_import_test {
namespace {

using nlohmann::json;

// x [batch, 16, 8, 8] -> MaxPool 2x2/2 -> Flatten [batch, 256] -> MatMul [256, 32].
// At batch 4: a pool of 4*4*4*16 = 1,024 outputs and a matmul m=4 n=32 k=256: 32,768 MACs.
OnnxBuilder pooled_classifier() {
    OnnxBuilder b(13);
    b.input("x", {std::string("batch"), std::int64_t{16}, std::int64_t{8}, std::int64_t{8}});
    b.weight("w", {256, 32});
    auto* pool = b.node("MaxPool", {"x"}, {"p"});
    OnnxBuilder::attr(pool, "kernel_shape", std::vector<std::int64_t>{2, 2});
    OnnxBuilder::attr(pool, "strides", std::vector<std::int64_t>{2, 2});
    b.node("Flatten", {"p"}, {"f"});
    b.node("MatMul", {"f", "w"}, {"y"});
    b.output("y");
    return b;
}

fs::path write_spec(const fs::path& dir, const fs::path& model) {
    const fs::path spec = dir / "spec.json";
    write_file(spec, std::string(R"({"configs": [")") + ACCELSIM_SOURCE_DIR + R"(/configs/tpu_v4.json"],
        "traces": [")" + model.string() + R"("], "axes": {"mxu.rows": [64, 128]}})");
    return spec;
}

TEST(SweepImport, DimBindsTheModelAsASingleRunDoes) {
    const fs::path dir = scratch_dir("spec");
    const fs::path model = dir / "classifier.onnx";
    pooled_classifier().save(model.string());
    const fs::path spec = write_spec(dir, model);
    const Result r = run("sweep '" + spec.string() + "' -j 2 --dim batch=4 -q -o '" + (dir / "out").string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const accelsim::CsvTable t = accelsim::read_csv((dir / "out" / "results.csv").string());
    ASSERT_EQ(t.rows.size(), 2u);
    const auto column = [&](const std::string& name) {
        for (std::size_t i = 0; i < t.header.size(); ++i)
            if (t.header[i] == name) return i;
        ADD_FAILURE() << "no column " << name;
        return std::size_t{0};
    };
    for (std::size_t i = 0; i < 2; ++i) {
        const std::string rows = t.rows[i][column("mxu.rows")];
        const fs::path single = dir / ("single" + rows + ".json");
        const Result s = run("-c configs/tpu_v4.json -t '" + model.string() + "' --dim batch=4 -q --set mxu.rows=" + rows +
                             " --json '" + single.string() + "'");
        ASSERT_EQ(s.exit_code, 0) << s.err;
        const json totals = json::parse(slurp(single)).at("totals");
        EXPECT_EQ(t.rows[i][column("status")], "ok");
        EXPECT_EQ(t.rows[i][column("macs")], "32768");  // 4 x 32 x 256
        EXPECT_EQ(t.rows[i][column("ops")], "2");
        EXPECT_EQ(t.rows[i][column("cycles")], std::to_string(totals.at("cycles").get<std::uint64_t>()));
    }
    // Another batch is another point (the dims are in the hash), not a reuse of these.
    const Result again = run("sweep '" + spec.string() + "' -j 2 --dim batch=8 -o '" + (dir / "out").string() + "'");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(contains(again.err, "0 reused")) << again.err;
    EXPECT_EQ(accelsim::read_csv((dir / "out" / "results.csv").string()).rows[0][column("macs")], "65536");
}

TEST(SweepImport, AnUnboundOrMisplacedDimExitsTwoBeforeAnyPoint) {
    const fs::path dir = scratch_dir("spec");
    const fs::path model = dir / "classifier.onnx";
    pooled_classifier().save(model.string());
    const Result unbound = run("sweep '" + write_spec(dir, model).string() + "' -o '" + (dir / "a").string() + "'");
    EXPECT_EQ(unbound.exit_code, 2);
    EXPECT_TRUE(contains(unbound.err, model.string() + ": symbolic dimension 'batch'")) << unbound.err;
    EXPECT_FALSE(fs::exists(dir / "a"));
    // A spec of accelsim traces only: --dim applies to nothing.
    const fs::path plain = dir / "plain.json";
    write_file(plain, std::string(R"({"configs": [")") + ACCELSIM_SOURCE_DIR + R"(/configs/tpu_v4.json"], "traces": [")" +
                          ACCELSIM_SOURCE_DIR + R"(/traces/tiny_gemm.trace"], "axes": {"mxu.rows": [64]}})");
    const Result misplaced = run("sweep '" + plain.string() + "' --dim batch=4 -o '" + (dir / "b").string() + "'");
    EXPECT_EQ(misplaced.exit_code, 2);
    EXPECT_TRUE(contains(misplaced.err, plain.string() + ": traces: --dim and --strict apply to ONNX and PyTorch traces"))
        << misplaced.err;
    const Result bad = run("sweep '" + write_spec(dir, model).string() + "' --dim batch=zero -o '" + (dir / "c").string() + "'");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "--dim batch=zero: expected NAME=N")) << bad.err;
}

}  // namespace
}  // namespace accelsim_test::sweep_import_test
