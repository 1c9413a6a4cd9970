// End-to-end tests of `accelsim compare`: the real executable, the shipped configs and traces.
// Expected totals come from separate single-design runs of the same executable (for BERT-base,
// the slow tier's own runs when fresh); cost and energy are
// recomputed here from those totals and the price and TDP read straight from the config files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/accelsim_process.h"
#include "tests/shipped_reports.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using namespace accelsim_test;


int count_lines_containing(const std::string& text, const std::string& needle) {
    std::istringstream lines(text);
    int n = 0;
    for (std::string line; std::getline(lines, line);) n += contains(line, needle) ? 1 : 0;
    return n;
}

json config_file_json(const std::string& name) {
    return json::parse(slurp(fs::path(ACCELSIM_SOURCE_DIR) / "configs" / name));
}

}  // namespace

TEST(CompareCli, BertBaseTpuV4AgainstA100MatchesSingleRuns) {
    const fs::path dir = scratch_dir();
    const fs::path compare_json = dir / "r.json";
    const Result r = run("compare --trace traces/bert_base.trace --config configs/tpu_v4.json "
                         "--config configs/a100.json --json '" + compare_json.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "[1] tpu_v4")) << r.out;
    EXPECT_TRUE(contains(r.out, "[2] a100")) << r.out;
    EXPECT_TRUE(contains(r.out, "L11.ffn.fc2")) << r.out;
    EXPECT_TRUE(contains(r.out, "speedup vs tpu_v4")) << r.out;

    const json c = json::parse(slurp(compare_json));
    EXPECT_EQ(c["schema"], "accelsim.compare/1");
    EXPECT_EQ(c["trace"], "traces/bert_base.trace");
    ASSERT_EQ(c["designs"].size(), 2u);
    // 12 layers x 13 ops, each with one entry per design.
    ASSERT_EQ(c["ops"].size(), 156u);
    EXPECT_EQ(c["ops"][0]["name"], "L0.attn.qkv");
    EXPECT_EQ(c["ops"][0]["per_design"].size(), 2u);

    const char* configs[] = {"tpu_v4.json", "a100.json"};
    const char* kinds[] = {"systolic", "simt"};
    double seconds[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
        // The single run's report: the one ShippedConfig.LargeTraces kept when it is fresh (ctest
        // runs that test first: tests/shipped_reports.h), otherwise a run of its own.
        fs::path single_json = accelsim_shipped::find_fresh(ACCELSIM_SHIPPED_REPORTS_DIR, ACCELSIM_SOURCE_DIR,
                                                            ACCELSIM_BINARY, configs[i], "bert_base.trace")
                                   .report;
        if (single_json.empty()) {
            single_json = dir / (std::string("single_") + configs[i]);
            const Result single = run(std::string("--quiet --config configs/") + configs[i] +
                                      " --trace traces/bert_base.trace --json '" + single_json.string() + "'");
            ASSERT_EQ(single.exit_code, 0) << single.err;
        }
        const json s = json::parse(slurp(single_json));
        const json& d = c["designs"][static_cast<std::size_t>(i)];
        EXPECT_EQ(d["config_file"], std::string("configs/") + configs[i]);
        EXPECT_EQ(d["kind"], kinds[i]);
        // The embedded report is the single run's report, and the totals are its totals.
        EXPECT_EQ(d["report"], s);
        EXPECT_EQ(d["totals"]["cycles"], s["totals"]["cycles"]);
        EXPECT_EQ(d["totals"]["seconds"], s["totals"]["seconds"]);
        EXPECT_EQ(d["totals"]["flops"], s["totals"]["flops"]);
        EXPECT_EQ(d["totals"]["utilization"], s["totals"]["utilization"]);
        for (std::size_t k = 0; k < 156; ++k)
            ASSERT_EQ(c["ops"][k]["per_design"][static_cast<std::size_t>(i)]["cycles"], s["ops"][k]["cycles"]) << k;
        seconds[i] = s["totals"]["seconds"].get<double>();

        // One inference = one pass of the trace: cost = seconds x USD per hour / 3600 x 1e6;
        // energy = TDP x seconds. Price and TDP are read from the shipped config file itself.
        const json cfg = config_file_json(configs[i]);
        const double cost = seconds[i] * cfg["cost_per_hour_usd"].get<double>() / 3600.0 * 1e6;
        const double energy = cfg["tdp_w"].get<double>() * seconds[i];
        EXPECT_NEAR(d["cost_per_million_inferences_usd"].get<double>(), cost, 1e-12 * cost);
        EXPECT_NEAR(d["energy_per_inference_j_upper_bound"].get<double>(), energy, 1e-12 * energy);
    }
    EXPECT_DOUBLE_EQ(c["designs"][0]["totals"]["speedup_vs_first"].get<double>(), 1.0);
    EXPECT_NEAR(c["designs"][1]["totals"]["speedup_vs_first"].get<double>(), seconds[0] / seconds[1],
                1e-12 * seconds[0] / seconds[1]);
}

TEST(CompareCli, SameInputsGiveByteIdenticalJsonAndCsv) {
    const fs::path dir = scratch_dir();
    for (const char* name : {"a", "b"}) {
        const Result r = run("compare --quiet --trace traces/tiny_mixed.trace --config configs/tpu_v4.json "
                             "--config configs/a100.json --config configs/simt_1sm.json --json '" +
                             (dir / (std::string(name) + ".json")).string() + "' --csv '" +
                             (dir / (std::string(name) + ".csv")).string() + "'");
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_TRUE(r.out.empty()) << "--quiet printed: " << r.out;
    }
    // Two designs at once: children finish in any order, the output does not change.
    const Result parallel = run("compare --quiet --jobs 2 --trace traces/tiny_mixed.trace --config configs/tpu_v4.json "
                                "--config configs/a100.json --config configs/simt_1sm.json --json '" +
                                (dir / "c.json").string() + "'");
    ASSERT_EQ(parallel.exit_code, 0) << parallel.err;
    EXPECT_EQ(slurp(dir / "a.json"), slurp(dir / "b.json"));
    EXPECT_EQ(slurp(dir / "a.json"), slurp(dir / "c.json"));
    EXPECT_EQ(slurp(dir / "a.csv"), slurp(dir / "b.csv"));
    // tiny_mixed has 7 ops; 3 designs: a header and 21 rows.
    const std::string csv = slurp(dir / "a.csv");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 7 * 3);
    // simt_1sm carries cost_per_hour_usd and tdp_w as null: both figures are n/a, with the reason.
    const json c = json::parse(slurp(dir / "a.json"));
    EXPECT_TRUE(c["designs"][2]["cost_per_million_inferences_usd"].is_null());
    EXPECT_EQ(c["designs"][2]["cost_note"], "config has no cost_per_hour_usd");
    EXPECT_EQ(c["designs"][2]["energy_note"], "config has no tdp_w");
}

// A `kernel` op's report has no FLOP count (its assembled code says nothing of FLOPs: "flops" is
// null): compare keeps it unknown (null in JSON, empty in CSV, "-" in the table) instead of
// refusing the report; the library ops beside it keep their figures.
TEST(CompareCli, KernelOpsWithoutFlopsCompareAsUnknown) {
    const fs::path dir = scratch_dir();
    const Result r = run("compare --trace tests/cli/data/gpu_mixed.trace --config configs/a100.json "
                         "--config configs/simt_1sm.json --json '" + (dir / "c.json").string() + "' --csv '" +
                         (dir / "c.csv").string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json c = json::parse(slurp(dir / "c.json"));
    ASSERT_EQ(c["ops"].size(), 8u);
    for (std::size_t i = 0; i < 8; ++i) {
        const bool kernel = c["ops"][i]["kind"] == "kernel";
        EXPECT_EQ(kernel, i >= 5) << i;
        for (const json& p : c["ops"][i]["per_design"]) {
            EXPECT_EQ(p["flops"].is_null(), kernel) << i;
            EXPECT_EQ(p["achieved_tflops"].is_null(), kernel) << i;
            EXPECT_EQ(p["share_of_peak"].is_null(), kernel) << i;
        }
    }
    // matmul m=512 n=256 k=256: 2 x 512 x 256 x 256 FLOPs, over the op's own seconds.
    for (const json& p : c["ops"][0]["per_design"]) {
        EXPECT_EQ(p["flops"].get<std::int64_t>(), 2LL * 512 * 256 * 256);
        const double tflops = 2.0 * 512 * 256 * 256 / p["seconds"].get<double>() / 1e12;
        EXPECT_NEAR(p["achieved_tflops"].get<double>(), tflops, 1e-12 * tflops);
    }
    // CSV: op 5 (saxpy) on design 0 has an empty flops field (the 11th column).
    std::istringstream csv(slurp(dir / "c.csv"));
    std::string line;
    std::getline(csv, line);
    while (std::getline(csv, line) && line.rfind("5,saxpy,kernel,0,", 0) != 0) {
    }
    ASSERT_EQ(line.rfind("5,saxpy,kernel,0,", 0), 0u) << slurp(dir / "c.csv");
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    ASSERT_GT(cells.size(), 12u);
    EXPECT_EQ(cells[10], "");
    EXPECT_EQ(cells[11], "");
    // The table shows "-" for the unknown TFLOP/s of the saxpy row.
    bool saxpy_row_has_dash = false;
    std::istringstream table(r.out);
    for (std::string t; std::getline(table, t);)
        if (contains(t, "saxpy") && contains(t, " - ")) saxpy_row_has_dash = true;
    EXPECT_TRUE(saxpy_row_has_dash) << r.out;
}

TEST(CompareCli, OneConfigPrintsOneColumn) {
    const Result r = run("compare --trace traces/tiny_gemm.trace --config configs/tpu_v4.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "[1] tpu_v4")) << r.out;
    EXPECT_FALSE(contains(r.out, "[2]")) << r.out;
    EXPECT_TRUE(contains(r.out, "1 design\n")) << r.out;
}

TEST(CompareCli, SetOverridesApplyToEveryDesign) {
    const fs::path dir = scratch_dir();
    const Result r = run("compare --quiet --trace traces/tiny_gemm.trace --config configs/tpu_v4.json "
                         "--config configs/a100.json --set clock_mhz=500 --json '" + (dir / "r.json").string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json c = json::parse(slurp(dir / "r.json"));
    for (const auto& d : c["designs"]) {
        EXPECT_EQ(d["clock_mhz"], 500.0);
        EXPECT_EQ(d["report"]["config"]["clock_mhz"], 500.0);
    }
}

TEST(CompareCli, BadUsageExitsTwoWithOneMessage) {
    Result r = run("compare --config configs/tpu_v4.json --config configs/a100.json");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--trace is required")) << r.err;

    r = run("compare --trace traces/tiny_gemm.trace");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--config is required")) << r.err;

    r = run("compare --trace traces/tiny_gemm.trace --config configs/tpu_v4.json --bogus 1");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "bogus")) << r.err;

    r = run("compare --trace traces/tiny_gemm.trace --config configs/tpu_v4.json --config configs/nope.json");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "configs/nope.json")) << r.err;

    r = run("compare --trace traces/nope.trace --config configs/tpu_v4.json");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "traces/nope.trace")) << r.err;

    r = run("compare --trace traces/tiny_gemm.trace --config configs/tpu_v4.json --json /nonexistent/dir/r.json");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "/nonexistent/dir/r.json")) << r.err;

    r = run("compare --trace traces/tiny_gemm.trace --config configs/tpu_v4.json --jobs 0");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--jobs 0")) << r.err;

    r = run("compare --trace traces/tiny_gemm.trace --config configs/tpu_v4.json --set mxu.rwos=64");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "mxu.rwos")) << r.err;
}

TEST(CompareCli, OpADesignCannotRunNamesTheConfigAndTheTraceLine) {
    const fs::path dir = scratch_dir();
    const fs::path trace = dir / "k.trace";
    write_file(dir / "k.sasm", ".kernel k\nexit\n");
    write_file(trace, "# accelsim-trace 1\nmatmul mm m=64 n=64 k=64\nkernel k file=k.sasm grid=1 block=32\n");
    const fs::path json_path = dir / "r.json";
    const Result r = run("compare --trace '" + trace.string() + "' --config configs/tpu_v4.json --config configs/a100.json"
                         " --json '" + json_path.string() + "'");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    // The child's InputError, prefixed with the design that could not run it; one error line.
    EXPECT_TRUE(contains(r.err, "accelsim: error: compare: config configs/tpu_v4.json (tpu_v4): ")) << r.err;
    EXPECT_TRUE(contains(r.err, "k.trace:3")) << r.err;
    EXPECT_TRUE(contains(r.err, "systolic")) << r.err;
    EXPECT_EQ(count_lines_containing(r.err, "error"), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(fs::exists(json_path)) << "an empty --json file was left behind";
}
