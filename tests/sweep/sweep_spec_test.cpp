// Spec reading and point expansion: ranges, modes and the SPEC: key: message errors, against
// values worked out by hand.
#include "sim/sweep/sweep_plan.h"
#include "sim/sweep/sweep_spec.h"

#include <set>

#include <gtest/gtest.h>

#include "../accelsim_process.h"

namespace accelsim::sweep_spec_test {
namespace {

using accelsim_test::scratch_dir;
using accelsim_test::write_file;
using nlohmann::json;

// A spec file in a scratch folder next to the real configs (paths are spec-relative).
std::string spec_file(const std::string& body) {
    const auto dir = scratch_dir("spec");
    const std::string path = (dir / "spec.json").string();
    std::string text = body;
    const std::string root = ACCELSIM_SOURCE_DIR;
    for (std::size_t at; (at = text.find("@ROOT@")) != std::string::npos;) text.replace(at, 6, root);
    write_file(path, text);
    return path;
}

std::string error_of(const std::string& body, bool plan) {
    try {
        const SweepSpec spec = load_sweep_spec(spec_file(body));
        if (plan) plan_sweep(spec);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

const char* kBase = R"("configs": ["@ROOT@/configs/tpu_v4.json"], "traces": ["@ROOT@/traces/tiny_gemm.trace"])";

TEST(SweepSpec, MulAndAddRangesGiveTheHandWorkedLevels) {
    const SweepSpec spec = load_sweep_spec(spec_file(std::string("{") + kBase + R"(, "axes": {
        "mxu.rows": {"from": 32, "to": 256, "mul": 2},
        "clock_mhz": {"from": 500, "to": 1000, "add": 250},
        "hbm.data_rate_gbps": {"from": 0.5, "to": 2.0, "mul": 2}}})"));
    ASSERT_EQ(spec.axes.size(), 3u);
    EXPECT_EQ(json(spec.axes[0].levels), json::parse("[32, 64, 128, 256]"));
    EXPECT_EQ(json(spec.axes[1].levels), json::parse("[500, 750, 1000]"));
    EXPECT_EQ(json(spec.axes[2].levels), json::parse("[0.5, 1.0, 2.0]"));
    // grid: 4 x 3 x 3 points, the last axis varying fastest
    const auto points = axis_points(spec);
    ASSERT_EQ(points.size(), 36u);
    EXPECT_EQ(json(points[0]), json::parse("[32, 500, 0.5]"));
    EXPECT_EQ(json(points[1]), json::parse("[32, 500, 1.0]"));
    EXPECT_EQ(json(points[35]), json::parse("[256, 1000, 2.0]"));
}

TEST(SweepSpec, ZipPairsValuesAndRejectsUnequalAxes) {
    const SweepSpec spec = load_sweep_spec(spec_file(std::string("{") + kBase +
                                                     R"(, "mode": "zip", "axes": {"mxu.rows": [64, 128], "mxu.cols": [32, 256]}})"));
    EXPECT_EQ(json(axis_points(spec)), json::parse("[[64, 32], [128, 256]]"));
    const std::string e = error_of(std::string("{") + kBase + R"(, "mode": "zip", "axes": {"mxu.rows": [64, 128], "mxu.cols": [32]}})", false);
    EXPECT_NE(e.find("axes.mxu.cols: mode zip pairs"), std::string::npos) << e;
}

TEST(SweepSpec, LatinHypercubeUsesEveryStratumOnceAndIsSeeded) {
    // 8 points over an 8-level axis: a Latin hypercube uses each level exactly once; a continuous
    // axis gets one sample in each eighth of [0, 8).
    const std::string body = std::string("{") + kBase + R"(, "mode": "lhs", "points": 8, "seed": 7, "axes": {
        "mxu.rows": [8, 16, 24, 32, 40, 48, 56, 64], "clock_mhz": {"from": 0, "to": 8}}})";
    const auto points = axis_points(load_sweep_spec(spec_file(body)));
    ASSERT_EQ(points.size(), 8u);
    std::set<std::int64_t> rows;
    std::set<int> eighths;
    for (const auto& p : points) {
        rows.insert(p[0].get<std::int64_t>());
        eighths.insert(static_cast<int>(p[1].get<double>()));
    }
    EXPECT_EQ(rows.size(), 8u);
    EXPECT_EQ(eighths, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(json(axis_points(load_sweep_spec(spec_file(body)))), json(points));  // same seed, same points
    std::string other = body;
    other.replace(other.find("\"seed\": 7"), 9, "\"seed\": 8");
    EXPECT_NE(json(axis_points(load_sweep_spec(spec_file(other)))), json(points));
}

TEST(SweepSpec, RandomModeDrawsFromTheLevels) {
    const auto points = axis_points(load_sweep_spec(spec_file(std::string("{") + kBase +
        R"(, "mode": "random", "points": 50, "axes": {"mxu.dataflow": ["ws", "os"], "mxu.rows": {"from": 16, "to": 64}}})")));
    ASSERT_EQ(points.size(), 50u);
    std::set<std::string> flows;
    for (const auto& p : points) {
        flows.insert(p[0].get<std::string>());
        ASSERT_TRUE(p[1].is_number_integer());  // mxu.rows is an integer key: samples are rounded
        EXPECT_GE(p[1].get<int>(), 16);
        EXPECT_LE(p[1].get<int>(), 64);
    }
    EXPECT_EQ(flows, (std::set<std::string>{"ws", "os"}));
}

TEST(SweepSpec, GeneratorInvocationsExpandIntoTraces) {
    const SweepSpec spec = load_sweep_spec(spec_file(
        R"({"configs": "@ROOT@/configs/tpu_v4.json", "traces": [{"bert": {"size": "base", "layers": 1, "seq": [128, 256], "batch": [1, 8]}}]})"));
    ASSERT_EQ(spec.traces.size(), 4u);
    EXPECT_EQ(spec.traces[0].label, "bert size=base layers=1 seq=128 batch=1");
    EXPECT_EQ(spec.traces[3].label, "bert size=base layers=1 seq=256 batch=8");
    EXPECT_EQ(spec.trace_param_names, (std::vector<std::string>{"size", "layers", "seq", "batch"}));
    // 13 ops per BERT layer (sim/tracegen/models.h)
    std::size_t op_lines = 0;
    for (std::size_t at = 0; (at = spec.traces[3].text.find(" L0.", at)) != std::string::npos; ++at) ++op_lines;
    EXPECT_EQ(op_lines, 13u);
    EXPECT_NE(spec.traces[3].text.find("m=2048"), std::string::npos);  // seq 256 x batch 8 rows in the QKV matmul
    EXPECT_NE(spec.traces[0].sha256, spec.traces[1].sha256);
}

TEST(SweepSpec, ErrorsNameTheSpecAndTheKey) {
    EXPECT_NE(error_of(std::string("{") + kBase + R"(, "axes": {"mxu.rwos": [64]}})", true)
                  .find("spec.json: mxu.rwos: unknown key 'mxu.rwos' (did you mean 'mxu.rows'?)"),
              std::string::npos);
    EXPECT_NE(error_of(std::string("{") + kBase + R"(, "axes": {"mxu.rows": [64, 0]}})", true)
                  .find("spec.json: mxu.rows: mxu.rows = 0 is out of range"),
              std::string::npos);
    EXPECT_NE(error_of(std::string("{") + kBase + R"(, "axse": {}})", false).find("spec.json: axse: unknown key 'axse' (did you mean 'axes'?)"),
              std::string::npos);
    EXPECT_NE(error_of(std::string("{") + kBase + R"(, "axes": {"mxu.rows": {"from": 64, "to": 32, "mul": 2}}})", false)
                  .find("axes.mxu.rows: \"from\" (64) is larger than \"to\" (32)"),
              std::string::npos);
    EXPECT_NE(error_of(std::string("{") + kBase + R"(, "axes": {"mxu.rows": {"from": 16, "to": 64}}})", false)
                  .find("axes.mxu.rows: a range without \"mul\" or \"add\" is continuous"),
              std::string::npos);
    EXPECT_NE(error_of(std::string("{") + kBase + R"(, "set": {"l2.size_bytes": 1000}})", true).find("spec.json: l2.size_bytes: "),
              std::string::npos);
    // Bad JSON names its line and column, a number beyond a double included (nlohmann throws
    // out_of_range for it, which once escaped as "sweep failed", exit 1).
    EXPECT_NE(error_of("{\n  \"seed\": 1e999\n}", false).find("spec.json:2:11: number overflow parsing '1e999' (beyond the range of a double)"),
              std::string::npos)
        << error_of("{\n  \"seed\": 1e999\n}", false);
    EXPECT_NE(error_of("{\n  \"seed\": 1,\n}", false).find("spec.json:3:1: syntax error while parsing object key"),
              std::string::npos)
        << error_of("{\n  \"seed\": 1,\n}", false);
    EXPECT_NE(error_of(R"({"configs": "@ROOT@/configs/tpu_v4.json", "traces": [{"bert": {"sise": "base"}}]})", false)
                  .find("spec.json: traces[0].bert: accelsim trace bert: unknown option"),
              std::string::npos);
}

TEST(SweepPlan, HashCoversConfigTraceAndNothingElse) {
    const SweepSpec spec = load_sweep_spec(spec_file(std::string("{") + kBase + R"(, "axes": {"mxu.rows": [64, 128, 128]}})"));
    const SweepPlan plan = plan_sweep(spec);
    ASSERT_EQ(plan.points.size(), 3u);
    EXPECT_NE(plan.points[0].hash, plan.points[1].hash);
    EXPECT_EQ(plan.points[1].hash, plan.points[2].hash);  // identical points run once
    EXPECT_EQ(plan.unique_hashes().size(), 2u);
    // tpu_v4 ships 128x128 MXUs: the second point's effective config is the shipped one.
    const SweepPlan shipped = plan_sweep(load_sweep_spec(spec_file(std::string("{") + kBase + "}")));
    EXPECT_EQ(shipped.points[0].hash, plan.points[1].hash);
    EXPECT_EQ(plan_to_json(plan_from_json(plan_to_json(plan), "plan.json")), plan_to_json(plan));
}

}  // namespace
}  // namespace accelsim::sweep_spec_test
