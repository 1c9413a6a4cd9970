// --plot-roofline: gnuplot draws every op of the run under the chip's ceilings. The ceilings'
// values are worked out here by hand from the configs' figures; the SVG must carry them and one
// marker per op.
#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/report/roofline_plot.h"
#include "tests/accelsim_process.h"

using nlohmann::json;
using namespace accelsim_test;

namespace {

std::size_t count(const std::string& hay, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
    return n;
}

std::map<std::string, double> ceilings_of(const std::string& config_file) {
    const accelsim::ChipConfig config = accelsim::load_config(std::string(ACCELSIM_SOURCE_DIR) + "/configs/" + config_file, {});
    const auto chip = accelsim::make_chip(config, accelsim::RunOptions{});
    std::map<std::string, double> by_label;
    for (const accelsim::RooflineCeiling& c : accelsim::roofline_ceilings(*chip, config)) by_label[c.label] = c.value;
    return by_label;
}

}  // namespace

TEST(RooflinePlot, TpuV4CeilingsFromTheConfig) {
    // 2 cores x 4 MXUs x 128 x 128 PEs x 1 MAC x 2 FLOP x 1.05 GHz = 275.2512 TFLOP/s (int8 and
    // bf16 at rate 1; fp32 has no MXU rate); vector: 2 cores x 128 lanes x 8 sublanes x 1.05 GHz;
    // HBM: 32 channels x 128 bits x 2.34375 Gb/s = 1200 GB/s; CMEM: 2286 B/cycle x 1.05 GHz.
    const auto c = ceilings_of("tpu_v4.json");
    EXPECT_DOUBLE_EQ(c.at("mxu bf16"), 2.0 * 4 * 128 * 128 * 2 * 1.05e9);
    EXPECT_DOUBLE_EQ(c.at("mxu int8"), 2.0 * 4 * 128 * 128 * 2 * 1.05e9);
    EXPECT_FALSE(c.count("mxu fp32"));
    EXPECT_DOUBLE_EQ(c.at("vector (element-ops)"), 2.0 * 128 * 8 * 1.05e9);
    EXPECT_NEAR(c.at("hbm"), 32 * 128 / 8 * 2.34375e9, 1e-3);
    EXPECT_NEAR(c.at("cmem"), 2286 * 1.05e9, 1e-3);
    EXPECT_EQ(c.size(), 5u);
}

TEST(RooflinePlot, A100CeilingsFromTheConfig) {
    // 108 SMs x 1024 dense fp16 tensor MACs per SM-cycle x 2 FLOP x 1.41 GHz = 311.87 TFLOP/s;
    // HBM2e: 1555 GB/s class (the config's channels x width x rate).
    const auto c = ceilings_of("a100.json");
    EXPECT_NEAR(c.at("tensor fp16"), 108.0 * 1024 * 2 * 1.41e9, 1e3);
    EXPECT_NEAR(c.at("tensor int8"), 2 * c.at("tensor fp16"), 1e3);
    EXPECT_TRUE(c.count("hbm") && c.count("l2"));
}

TEST(RooflinePlot, H100HasOneFp8CeilingAtItsRate) {
    // configs/h100.json: 132 SMs x 4096 fp8 MACs (both formats) per SM-cycle x 2 FLOP x 1.575 GHz
    // (its sustained_clock_mhz, the clock the simulation runs at) = 1703.1 TFLOP/s, twice its fp16
    // ceiling; a100 has no fp8 rate, so no fp8 ceiling.
    const auto c = ceilings_of("h100.json");
    EXPECT_NEAR(c.at("tensor fp8"), 132.0 * 4096 * 2 * 1.575e9, 1e3);
    EXPECT_NEAR(c.at("tensor fp8"), 2 * c.at("tensor fp16"), 1e3);
    EXPECT_FALSE(c.count("tensor fp8_e4m3") || c.count("tensor fp8_e5m2"));
    EXPECT_FALSE(ceilings_of("a100.json").count("tensor fp8"));
}

TEST(RooflinePlot, SvgCarriesTheCeilingsAndOneMarkerPerOp) {
    const fs::path dir = scratch_dir();
    const Result r = run("--config configs/tpu_v4.json --trace traces/tiny_mixed.trace -q --json '" +
                         (dir / "r.json").string() + "' --plot-roofline '" + (dir / "roofline.svg").string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string svg = slurp(dir / "roofline.svg");
    ASSERT_NE(svg.find("<svg"), std::string::npos);
    ASSERT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_TRUE(contains(svg, "mxu bf16: 275.3 TFLOP/s")) << "275.2512 TFLOP/s rounded to 4 digits";
    EXPECT_TRUE(contains(svg, "hbm: 1.2 TB/s"));
    EXPECT_TRUE(contains(svg, "cmem: 2.4 TB/s"));
    EXPECT_TRUE(contains(svg, "vector (element-ops): 2.15 TFLOP/s"));
    // Markers: one per op with FLOPs and HBM bytes, plus one key sample per bound present.
    const json report = json::parse(slurp(dir / "r.json"));
    std::size_t shown = 0;
    std::map<std::string, int> bounds;
    for (const json& op : report["ops"])
        if (op["flops"].is_number() && op["flops"].get<double>() > 0 && op["bytes"].value("hbm", 0) > 0) ++shown, ++bounds[op["bound"]];
    ASSERT_GT(shown, 0u);
    // (gnuplot's SVG draws a marker as <use> of a point shape moved into place; the shapes
    // themselves are defined once at the top, without a translate.)
    const std::regex marker("<use xlink:href='#gpPt[0-9]+' transform='translate\\(");
    const auto markers = static_cast<std::size_t>(std::distance(std::sregex_iterator(svg.begin(), svg.end(), marker), std::sregex_iterator()));
    EXPECT_EQ(markers, shown + bounds.size());
    for (const auto& [bound, n] : bounds)
        EXPECT_TRUE(contains(svg, "ops bound by " + bound + " (" + std::to_string(n) + ")")) << bound;
    // Few ops: each is labelled with its name.
    for (const json& op : report["ops"]) EXPECT_TRUE(contains(svg, ">" + op["name"].get<std::string>() + "<")) << op["name"];
}

TEST(RooflinePlot, PngToo) {
    const fs::path dir = scratch_dir();
    const Result r = run("--config configs/a100.json --trace traces/tiny_mixed.trace -q --plot-roofline '" +
                         (dir / "roofline.png").string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(slurp(dir / "roofline.png").substr(0, 8), std::string("\x89PNG\r\n\x1a\n"));
}

TEST(RooflinePlot, MissingGnuplotIsOneClearErrorBeforeTheRun) {
    const fs::path dir = scratch_dir();
    const Result r = run_shell(std::string("cd '") + ACCELSIM_SOURCE_DIR + "' && PATH='" + dir.string() + "' '" +
                               ACCELSIM_BINARY + "' --config configs/tpu_v4.json --trace traces/tiny_mixed.trace -q " +
                               "--plot-roofline '" + (dir / "r.svg").string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--plot-roofline: gnuplot is not installed (Debian package gnuplot-nox")) << r.err;
    EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
    EXPECT_FALSE(fs::exists(dir / "r.svg"));
}

TEST(RooflinePlot, WrongExtensionIsRefused) {
    const fs::path dir = scratch_dir();
    const Result r = run("--config configs/tpu_v4.json --trace traces/tiny_mixed.trace -q --plot-roofline '" +
                         (dir / "r.pdf").string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "must end in .svg or .png")) << r.err;
}
