// ResNet-50's convolutions on k80 (no tensor cores), from the outside: they run the FP32 FFMA
// implicit-GEMM conv kernel (model "simt"), where they used to be roofline rows.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/accelsim_process.h"
#include "tests/shipped_reports.h"

namespace fs = std::filesystem;

namespace {

using accelsim_test::slurp;

// Runs accelsim on configs/k80.json; returns the JSON report.
nlohmann::json run_k80(const fs::path& trace, const std::string& options, const fs::path& json) {
    const std::string cmd = std::string("cd '") + ACCELSIM_SOURCE_DIR + "' && '" + ACCELSIM_BINARY +
                            "' --config configs/k80.json --trace '" + trace.string() + "' " + options + " --json '" +
                            json.string() + "' >/dev/null";
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
    return nlohmann::json::parse(slurp(json));
}

double stat_of(const nlohmann::json& op, const std::string& name) {
    return op["stats"].contains(name) ? op["stats"][name]["value"].get<double>() : -1;
}

}  // namespace

TEST(K80Convs, Resnet50ConvLinesRunTheFfmaKernelInFp32) {
    // Three of traces/resnet50.trace's conv lines (conv1 7x7/2 on 3 channels, a 1x1 and a padded
    // 3x3 of layer1) in fp32, --validate: every output within fp32 rounding of a direct
    // convolution on the host. By hand, conv1: M = 112 x 112 = 12,544 pixels in 64-row tiles is
    // a grid of 196 blocks; K = 7 x 7 x 3 = 147 (the FFMA kernel pads nothing); 8 blocks of 256
    // threads per SMX (sm_37's 2048 threads; 56 registers and 4,352 bytes of shared memory allow
    // more); and 118,013,952 MACs at k80's FP32 peak (26 SMX x 192 lanes) take at least
    // 23,640.6 cycles.
    const fs::path dir = fs::path(::testing::TempDir()) / "accelsim_k80_conv";
    fs::create_directories(dir);
    std::ostringstream trace;
    trace << "# accelsim-trace 1\n";
    std::istringstream lines(slurp(fs::path(ACCELSIM_SOURCE_DIR) / "traces" / "resnet50.trace"));
    const std::set<std::string> wanted = {"conv1", "layer1.0.conv1", "layer1.0.conv2"};
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string kind, name;
        words >> kind >> name;
        if (kind == "conv2d" && wanted.count(name)) trace << line << " dtype=fp32\n";
    }
    std::ofstream(dir / "convs.trace") << trace.str();
    const nlohmann::json report = run_k80(dir / "convs.trace", "--validate", dir / "convs.json");
    ASSERT_EQ(report["ops"].size(), 3u);
    for (const auto& op : report["ops"]) {
        EXPECT_EQ(op["model"], "simt") << op["name"];
        EXPECT_EQ(op["dtype"], "fp32") << op["name"];
        EXPECT_EQ(stat_of(op, "simt.mma_issued"), 0) << op["name"];
        EXPECT_EQ(stat_of(op, "gpu.fp32_fallback"), -1) << op["name"];  // fp32 is no fallback
        EXPECT_GE(op["cycles"].get<double>(), op["roofline"]["bound_cycles"].get<double>()) << op["name"];
        ASSERT_TRUE(op.contains("numerics")) << op["name"];
        EXPECT_TRUE(op["numerics"]["passed"].get<bool>()) << op["name"];
        EXPECT_GT(op["numerics"]["max_abs_err"].get<double>(), 0.0) << op["name"];  // computed, not copied
    }
    const auto& conv1 = report["ops"][0];
    EXPECT_EQ(conv1["name"], "conv1");
    EXPECT_EQ(stat_of(conv1, "gpu.grid"), 196);
    EXPECT_EQ(stat_of(conv1, "gpu.gemm_k"), 147);
    EXPECT_EQ(stat_of(conv1, "gpu.blocks_per_sm"), 8);
    EXPECT_EQ(conv1["macs"].get<double>(), 118013952.0);
    EXPECT_GE(conv1["roofline"]["compute_cycles"].get<double>(), 118013952.0 / (26 * 192));
    EXPECT_EQ(conv1["numerics"]["checked"].get<double>(), 112.0 * 112 * 64);
}

// Slow tier: the whole of traces/resnet50.trace on k80 in its default dtype (fp16): all 53
// convolutions on the FFMA kernel, on fp32 copies (gpu.fp32_fallback), none a roofline row. Reads
// the report ShippedConfig.LargeTraces kept when it is fresh (tests/shipped_reports.h).
TEST(K80Convs, WholeResnet50HasNoConvRooflineRows) {
    const fs::path root(ACCELSIM_SOURCE_DIR);
    const accelsim_shipped::KeptRun kept =
        accelsim_shipped::find_fresh(ACCELSIM_SHIPPED_REPORTS_DIR, root, ACCELSIM_BINARY, "k80.json", "resnet50.trace");
    nlohmann::json report;
    if (kept) {
        report = nlohmann::json::parse(slurp(kept.report));
    } else {
        const fs::path dir = fs::path(::testing::TempDir()) / "accelsim_k80_conv";
        fs::create_directories(dir);
        report = run_k80(root / "traces" / "resnet50.trace", "", dir / "resnet50.json");
    }
    int convs = 0;
    for (const auto& op : report["ops"]) {
        if (op["kind"] != "conv2d") continue;
        ++convs;
        EXPECT_EQ(op["model"], "simt") << op["name"];
        EXPECT_EQ(stat_of(op, "gpu.fp32_fallback"), 1) << op["name"];
    }
    EXPECT_EQ(convs, 53);
}
