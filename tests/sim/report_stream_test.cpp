// The streaming report writer (ReportWriter, what the CLI uses) gives the same bytes as the whole
// report held in memory: its JSON equals nlohmann::json's dump of to_json(report), and fed op by op
// from the engine (nothing kept) its table, JSON and CSV equal those of the whole RunReport.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/report/report.h"
#include "sim/trace/trace_reader.h"

using namespace accelsim;

namespace {

const std::string kSource = ACCELSIM_SOURCE_DIR;

struct Case {
    std::string config, trace;
    bool validate;
};

class ReportStreaming : public ::testing::TestWithParam<Case> {};

// The whole report in memory, rendered by nlohmann::json (the reference for the JSON) and by the
// writers, against the writer fed op by op from the engine (nothing kept). Returns the streamed
// table.
std::string expect_streaming_equals_whole(const ChipConfig& chip, const std::string& trace, const std::vector<Op>& ops,
                                          const RunOptions& options) {
    const RunReport whole = run_trace(chip, trace, ops, options);
    std::ostringstream json_whole, csv_whole, table_whole;
    write_json(json_whole, whole);
    write_csv(csv_whole, whole);
    write_table(table_whole, whole);
    EXPECT_EQ(json_whole.str(), to_json(whole).dump(2) + "\n");

    std::ostringstream json_stream, csv_stream, table_stream;
    ReportWriter writer(chip, trace, whole.matrix_peaks, options.validate, &table_stream, &json_stream,
                        &csv_stream);
    const RunReport streamed = run_trace(chip, trace, ops, options, [&writer](const OpReport& r) { writer.add(r); });
    EXPECT_TRUE(streamed.ops.empty());
    EXPECT_EQ(streamed.numerics.has_value(), options.validate);
    if (streamed.numerics.has_value() == options.validate) writer.finish(streamed.numerics);
    EXPECT_EQ(json_stream.str(), json_whole.str());
    EXPECT_EQ(csv_stream.str(), csv_whole.str());
    EXPECT_EQ(table_stream.str(), table_whole.str());
    EXPECT_FALSE(json_stream.str().empty());
    return table_stream.str();
}

void expect_streaming_equals_whole(const ChipConfig& chip, const std::vector<Op>& ops) {
    expect_streaming_equals_whole(chip, "hand.trace", ops, RunOptions{});
}

}  // namespace

TEST_P(ReportStreaming, WritesTheBytesOfTheWholeReport) {
    const Case& c = GetParam();
    const ChipConfig chip = load_config(kSource + "/configs/" + c.config + ".json", {});
    const std::string trace = kSource + "/traces/" + c.trace + ".trace";
    const std::vector<Op> ops = read_trace(trace, chip.default_dtype);
    RunOptions options;
    options.validate = c.validate;

    const std::string table = expect_streaming_equals_whole(chip, trace, ops, options);
    EXPECT_NE(table.find("top bottlenecks:"), std::string::npos);
}

// Both chip kinds; with and without numerics (whose summary precedes "ops" in the JSON); SIMT
// kernels (the "simt ops" table section); roofline-only ops and matrix-unit fallbacks (tiny_mixed
// on a100 has int8 ops).
INSTANTIATE_TEST_SUITE_P(Runs, ReportStreaming,
                         ::testing::Values(Case{"tpu_v4", "tiny_mixed", false}, Case{"tpu_v4", "tiny_mixed", true},
                                           Case{"systolic_8x8", "tiny_gemm", true},
                                           Case{"simt_1sm", "simt_teaching", false},
                                           Case{"a100", "tiny_mixed", true}, Case{"t4", "tiny_conv", false}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                             return info.param.config + "_" + info.param.trace + (info.param.validate ? "_validate" : "");
                         });

TEST(ReportStreamingEdges, AWriterToldOfNumericsMustGetThem) {
    const ChipConfig chip = load_config(kSource + "/configs/tpu_v4.json", {});
    std::ostringstream json;
    ReportWriter writer(chip, "t.trace", 1.0, true, nullptr, &json, nullptr);
    EXPECT_THROW(writer.finish(std::nullopt), std::logic_error);
}


TEST(ReportStreamingEdges, NoOpsGiveAnEmptyOpsArray) {
    const ChipConfig chip = load_config(kSource + "/configs/tpu_v4.json", {});
    expect_streaming_equals_whole(chip, {});
    const RunReport whole = run_trace(chip, "hand.trace", {}, RunOptions{});
    std::ostringstream json;
    write_json(json, whole);
    EXPECT_NE(json.str().find("\n  \"ops\": [],\n"), std::string::npos) << json.str();
}

TEST(ReportStreamingEdges, NamesThatNeedEscapingAndTiesAmongTheLongestOps) {
    // Quotes, a backslash, commas and non-ASCII text in names (JSON escapes, CSV quoting); seven
    // equal ops, so the top five are chosen among ties (the earlier first).
    const ChipConfig chip = load_config(kSource + "/configs/tpu_v4.json", {});
    std::vector<Op> ops;
    const std::vector<std::string> names = {"a \"quoted\" name", "back\\slash", "comma, here", "naïve ünïcode",
                                            "e", "f", "g"};
    for (const std::string& name : names) {
        Op relu;
        relu.kind = OpKind::relu;
        relu.name = name;
        relu.elements = 4096;
        ops.push_back(relu);
    }
    expect_streaming_equals_whole(chip, ops);
}

TEST(ReportStreamingEdges, FusedOpsNameTheirKernelInEveryFormat) {
    // A fused graph (compiler.gpu_fusion; docs/gpu.md "Fused graphs"): matmul + gelu in one kernel,
    // add + layernorm in another. The report keeps the 4 ops; whole and streamed agree.
    const ChipConfig chip = load_config(kSource + "/configs/a100.json", {"compiler.gpu_fusion=tensorrt_like"});
    auto op = [](OpKind kind, const std::string& name) {
        Op o;
        o.kind = kind;
        o.name = name;
        o.dtype = DType::fp16;
        return o;
    };
    Op mm = op(OpKind::matmul, "mm"), act = op(OpKind::gelu, "act"), add = op(OpKind::add, "add"),
       ln = op(OpKind::layernorm, "ln");
    mm.gemm = {1, 64, 64, 64};
    act.elements = add.elements = 64 * 64;
    ln.rows = ln.cols = 64;
    const std::vector<Op> ops = {mm, act, add, ln};
    const std::string table = expect_streaming_equals_whole(chip, "hand.trace", ops, RunOptions{});
    EXPECT_NE(table.find("fused kernels (compiler.gpu_fusion tensorrt_like): 2 kernels for 4 ops\n  mm + act\n  add + ln\n"),
              std::string::npos)
        << table;
    const RunReport whole = run_trace(chip, "hand.trace", ops, RunOptions{});
    const nlohmann::json j = to_json(whole);
    EXPECT_EQ(j["ops"][1]["fused_into"], "mm");
    EXPECT_EQ(j["ops"][1]["model"], "fused");
    EXPECT_EQ(j["ops"][0]["fused_ops"], nlohmann::json::array({"act"}));
    EXPECT_EQ(j["ops"][3]["fused_into"], "add");
    EXPECT_EQ(j["totals"]["kernels"], 2);
    EXPECT_EQ(j["totals"]["fused_ops"], 2);
    EXPECT_EQ(j["totals"]["gpu_fusion"], "tensorrt_like");
    std::ostringstream csv;
    write_csv(csv, whole);
    const std::string text = csv.str();
    EXPECT_NE(text.find(",fused_into,fused_ops\n"), std::string::npos);
    EXPECT_NE(text.find(",mm,\n"), std::string::npos) << text;  // act's row: fused into mm
    EXPECT_NE(text.find(",,act\n"), std::string::npos) << text;  // mm's row: runs act
}
