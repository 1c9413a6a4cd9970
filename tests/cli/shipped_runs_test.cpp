// Every shipped trace on every shipped config: the run succeeds and no op's simulated cycles fall
// below its roofline bound (the engine also enforces this; here it is checked from the outside,
// on the JSON a user would read).
#include <gtest/gtest.h>

#include <algorithm>
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

namespace {

std::vector<std::string> shipped(const char* folder, const char* extension) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(fs::path(ACCELSIM_SOURCE_DIR) / folder))
        if (e.path().extension() == extension) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

using accelsim_test::slurp;

// A config's "kind", following "extends" when the file itself does not say.
std::string config_kind(const fs::path& file) {
    const auto j = nlohmann::json::parse(slurp(file));
    if (j.contains("kind")) return j["kind"];
    return config_kind(file.parent_path() / j["extends"].get<std::string>());
}

bool has_kernel_ops(const fs::path& trace) {
    std::istringstream lines(slurp(trace));
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("kernel", 0) == 0) return true;
    return false;
}

// The MACs a generated trace states in its header ("# 156 ops, 11173625856 MACs."), 0 if none.
double header_macs(const fs::path& trace) {
    std::istringstream lines(slurp(trace));
    for (std::string line; std::getline(lines, line) && line.rfind("#", 0) == 0;) {
        const auto at = line.find(" ops, ");
        if (at != std::string::npos && line.size() > 6 && line.compare(line.size() - 6, 6, " MACs.") == 0)
            return std::stod(line.substr(at + 6));
    }
    return 0;
}

// SIMT chips simulate every block of every kernel: a trace of BERT-base's size (11.2 G MACs) takes
// about 30 s of one core on a100, so the larger shipped traces (bert_large, bert_base_s512_b8,
// gpt2_prefill: 39 to 387 G MACs) are run on SIMT configs by hand (README, docs/gpu.md) and not
// in CI. The engine checks every run against the roofline either way.
constexpr double kMaxSimtTestMacs = 12e9;

// Simulation cost follows the ops and the bytes they move more than the MACs (gpt2_decode, 0.13 G
// MACs of weight-streaming GEMVs, takes 47 s on a10g; bert_base_1layer, 0.93 G MACs, 6 s). The
// one-layer and teaching traces (tiny_*, simt_teaching, bert_base_1layer: at most 13 ops) run on
// every config in every commit's tests; the whole-model traces in the slow tier
// (tests/CMakeLists.txt).
constexpr std::size_t kMaxSmallTraceOps = 32;

std::size_t op_lines(const fs::path& trace) {
    std::istringstream lines(slurp(trace));
    std::size_t ops = 0;
    for (std::string line; std::getline(lines, line);) {
        const auto first = line.find_first_not_of(" \t\r");
        if (first != std::string::npos && line[first] != '#') ++ops;
    }
    return ops;
}

enum class Size { small, large };

// Runs every shipped trace of the given size that the config's kind can run; returns how many.
std::size_t run_shipped_traces(const std::string& config, Size size) {
    const fs::path dir = fs::path(::testing::TempDir()) /
                         ("accelsim_shipped_" + config + (size == Size::small ? "_small" : "_large"));
    fs::create_directories(dir);
    std::size_t runs = 0;
    const fs::path root(ACCELSIM_SOURCE_DIR);
    const bool systolic = config_kind(root / "configs" / config) == "systolic";
    for (const std::string& trace : shipped("traces", ".trace")) {
        if (systolic && has_kernel_ops(root / "traces" / trace)) continue;  // kernels need SIMT cores
        if ((op_lines(root / "traces" / trace) <= kMaxSmallTraceOps) != (size == Size::small)) continue;
        if (!systolic && header_macs(root / "traces" / trace) > kMaxSimtTestMacs) continue;
        // The whole-model runs keep their report and table for the tests that need the same run
        // (tests/shipped_reports.h); the table goes to a temporary name until the run succeeds.
        const fs::path json = size == Size::large
                                  ? accelsim_shipped::report_path(ACCELSIM_SHIPPED_REPORTS_DIR, config, trace, ".json")
                                  : dir / (trace + ".json");
        const fs::path table = accelsim_shipped::report_path(ACCELSIM_SHIPPED_REPORTS_DIR, config, trace, ".stdout");
        const std::string table_output =
            size == Size::large
                ? " >'" + table.string() + ".part' && mv '" + table.string() + ".part' '" + table.string() + "'"
                : " >/dev/null";
        const std::string cmd = std::string("cd '") + ACCELSIM_SOURCE_DIR + "' && '" + ACCELSIM_BINARY +
                                "' --config configs/" + config + " --trace traces/" + trace + " --json '" +
                                json.string() + "' 2>'" + (dir / "err").string() + "'" + table_output;
        const int status = std::system(cmd.c_str());
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) continue;
        std::ifstream f(json);
        const auto report = nlohmann::json::parse(f);
        for (const auto& op : report["ops"]) {
            EXPECT_GE(op["cycles"].get<double>(), op["roofline"]["bound_cycles"].get<double>())
                << config << " " << trace << " " << op["name"];
        }
        ++runs;
    }
    return runs;
}

bool is_systolic(const std::string& config) {
    return config_kind(fs::path(ACCELSIM_SOURCE_DIR) / "configs" / config) == "systolic";
}

class ShippedConfig : public ::testing::TestWithParam<std::string> {};

}  // namespace

// Per commit: tiny_conv, tiny_gemm, tiny_mixed, bert_base_1layer on every config, and
// simt_teaching on SIMT configs.
TEST_P(ShippedConfig, SmallTraces) {
    EXPECT_GE(run_shipped_traces(GetParam(), Size::small), is_systolic(GetParam()) ? 4u : 5u);
}

// Slow tier: bert_base, resnet50 and gpt2_decode on every config; bert_large, bert_base_s512_b8
// and gpt2_prefill on systolic configs.
TEST_P(ShippedConfig, LargeTraces) {
    EXPECT_GE(run_shipped_traces(GetParam(), Size::large), is_systolic(GetParam()) ? 6u : 3u);
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, ShippedConfig, ::testing::ValuesIn(shipped("configs", ".json")),
                         [](const auto& info) {
                             std::string n = info.param.substr(0, info.param.size() - 5);
                             for (char& c : n)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return n;
                         });
