// Simulated-results regression guard. Each case runs the real accelsim executable on a fixed
// (config, trace) pair and compares what it simulated, op by op (cycles, start and end, bytes per
// level, utilization, occupancy, SIMD efficiency, bound, roofline, every model stat's value, and
// the totals), with a file recorded under tests/regression/data/. Refactors and host-speed work
// must leave every number identical; a change that moves simulated numbers on purpose
// regenerates the files with ACCELSIM_REGRESSION_RECORD=1 and says why in its commit.
//
// What is left out on purpose: the embedded config (its layout may change without a simulated
// number moving), each op's source line, stat units and descriptions (text).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/accelsim_process.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Case {
    const char* config;
    const char* trace;
};

// GPU-like chips of three generations and the one-SM teaching chip, on every op kind the SIMT
// lowering has (GEMM tiles, split-K, conv, reductions, elementwise, kernels); TPU-like chips of
// four generations on the same op kinds. Sized so the whole set runs in about a minute of one core.
const std::vector<Case> kCases = {
    {"a100.json", "bert_base_1layer.trace"}, {"a100.json", "tiny_mixed.trace"},
    {"a100.json", "tiny_conv.trace"},        {"a100.json", "simt_teaching.trace"},
    {"h100.json", "bert_base_1layer.trace"}, {"h100.json", "tiny_mixed.trace"},
    {"t4.json", "bert_base_1layer.trace"},   {"t4.json", "tiny_conv.trace"},
    {"simt_1sm.json", "simt_teaching.trace"}, {"simt_1sm.json", "tiny_mixed.trace"},
    {"simt_1sm.json", "tiny_gemm.trace"},    {"simt_1sm.json", "tiny_conv.trace"},
    {"tpu_v4.json", "bert_base.trace"},      {"tpu_v4.json", "resnet50.trace"},
    {"tpu_v4.json", "gpt2_decode.trace"},    {"tpu_v4.json", "tiny_mixed.trace"},
    {"tpu_v1.json", "bert_base_1layer.trace"}, {"tpu_v3.json", "bert_base_1layer.trace"},
    {"tpu_v5e.json", "bert_base_1layer.trace"}, {"systolic_8x8.json", "tiny_gemm.trace"},
    {"systolic_8x8.json", "tiny_conv.trace"},
};

std::string stem(const std::string& file) { return fs::path(file).stem().string(); }

std::string case_name(const Case& c) {
    std::string n = stem(c.config) + "__" + stem(c.trace);
    for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return n;
}

// The simulated numbers of a report, without the config, text and host-side facts.
json simulated_numbers(const json& report) {
    json ops = json::array();
    for (const auto& op : report.at("ops")) {
        json kept = op;
        kept.erase("source");  // where the op came from (file:line), not a simulated number
        if (op.contains("stats"))
            for (auto& [name, stat] : kept.at("stats").items()) stat = stat.at("value");
        ops.push_back(kept);
    }
    return json{{"ops", ops}, {"totals", report.at("totals")}};
}

class Regression : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(Regression, SimulatedNumbersEqualTheRecordedOnes) {
    const Case c = GetParam();
    const fs::path dir = accelsim_test::scratch_dir("report");
    const fs::path report_path = dir / "report.json";
    const auto r = accelsim_test::run(std::string("--quiet --config configs/") + c.config + " --trace traces/" +
                                      c.trace + " --json '" + report_path.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json actual = simulated_numbers(json::parse(accelsim_test::slurp(report_path)));

    const fs::path recorded = fs::path(ACCELSIM_SOURCE_DIR) / "tests/regression/data" / (case_name(c) + ".json");
    if (const char* record = std::getenv("ACCELSIM_REGRESSION_RECORD"); record && std::string(record) == "1") {
        fs::create_directories(recorded.parent_path());
        accelsim_test::write_file(recorded, actual.dump(1) + "\n");
        GTEST_SKIP() << "recorded " << recorded;
    }
    ASSERT_TRUE(fs::exists(recorded)) << recorded << " is missing: record it with ACCELSIM_REGRESSION_RECORD=1";
    const json expected = json::parse(accelsim_test::slurp(recorded));
    if (expected == actual) return;
    // Name the first differences (JSON Patch paths such as /ops/3/cycles) rather than dumping both.
    const json patch = json::diff(expected, actual);
    std::string where;
    for (std::size_t i = 0; i < patch.size() && i < 20; ++i) {
        const std::string path = patch[i].at("path");
        where += "  " + patch[i].at("op").get<std::string>() + " " + path;
        if (patch[i].contains("value")) where += " -> " + patch[i].at("value").dump();
        try {
            where += " (was " + expected.at(json::json_pointer(path)).dump() + ")";
        } catch (const json::exception&) {
        }
        where += "\n";
    }
    ADD_FAILURE() << c.config << " x " << c.trace << ": " << patch.size()
                  << " simulated numbers differ from " << recorded << ":\n"
                  << where;
}

INSTANTIATE_TEST_SUITE_P(FixedSet, Regression, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return case_name(info.param); });

// The fixed set is what the guard is worth: every case has its recorded file, and every recorded
// file belongs to a case (a stale file would hide a case that no longer runs).
TEST(RegressionData, EveryCaseHasItsFileAndEveryFileItsCase) {
    const fs::path data = fs::path(ACCELSIM_SOURCE_DIR) / "tests/regression/data";
    std::vector<std::string> expected;
    for (const Case& c : kCases) expected.push_back(case_name(c) + ".json");
    std::sort(expected.begin(), expected.end());
    std::vector<std::string> found;
    if (fs::exists(data))
        for (const auto& e : fs::directory_iterator(data)) found.push_back(e.path().filename().string());
    std::sort(found.begin(), found.end());
    EXPECT_EQ(found, expected);
}
