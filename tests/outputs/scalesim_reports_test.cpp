// --scalesim-reports: the three CSV files of SCALE-Sim, with its headers as SCALE-Sim writes them
// (typed here from SCALE-Sim's simulator.py, not from accelsim's constants), their cycle columns
// equal to the JSON report's, and hand-worked mapping efficiencies.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/accelsim_process.h"

using nlohmann::json;
using namespace accelsim_test;

namespace {

const char* const kCompute = "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,";
const char* const kBandwidth =
    "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW,";
const char* const kDetail =
    "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, SRAM Filter Start Cycle, SRAM Filter Stop Cycle, "
    "SRAM Filter Reads, SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, DRAM IFMAP Start Cycle, "
    "DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM Filter Reads, "
    "DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,";

// Rows of a SCALE-Sim CSV: fields split at ", ", the trailing empty field dropped.
std::vector<std::vector<std::string>> rows(const std::string& text, std::string& header) {
    std::istringstream in(text);
    std::getline(in, header);
    std::vector<std::vector<std::string>> out;
    for (std::string line; std::getline(in, line);) {
        EXPECT_EQ(line.back(), ',') << "SCALE-Sim ends every row with a comma";
        std::vector<std::string> fields;
        std::istringstream cells(line.substr(0, line.size() - 1));
        for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell.substr(cell.find_first_not_of(' ')));
        out.push_back(fields);
    }
    return out;
}

struct Reports {
    json report;
    std::vector<std::vector<std::string>> compute, bandwidth, detail;
};

Reports run_reports(const std::string& config, const std::string& trace, const std::string& extra = "") {
    const fs::path dir = scratch_dir();
    const Result r = run("--config configs/" + config + " --trace traces/" + trace + " -q " + extra + " --json '" +
                         (dir / "r.json").string() + "' --scalesim-reports '" + (dir / "reports").string() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Reports out;
    out.report = json::parse(slurp(dir / "r.json"));
    std::string header;
    out.compute = rows(slurp(dir / "reports/COMPUTE_REPORT.csv"), header);
    EXPECT_EQ(header, kCompute);
    out.bandwidth = rows(slurp(dir / "reports/BANDWIDTH_REPORT.csv"), header);
    EXPECT_EQ(header, kBandwidth);
    out.detail = rows(slurp(dir / "reports/DETAILED_ACCESS_REPORT.csv"), header);
    EXPECT_EQ(header, kDetail);
    return out;
}

// Cycle columns equal the report's: Total Cycles = cycles; every start and stop = the op's
// start_cycle and end_cycle; overall utilization = the report's MAC utilization.
void check_cycles_match(const Reports& r) {
    const json& ops = r.report["ops"];
    ASSERT_EQ(r.compute.size(), ops.size()) << "every layer of a SCALE-Sim topology is a GEMM or conv";
    ASSERT_EQ(r.bandwidth.size(), ops.size());
    ASSERT_EQ(r.detail.size(), ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const json& op = ops[i];
        const auto& c = r.compute[i];
        ASSERT_EQ(c.size(), 6u);
        EXPECT_EQ(c[0], std::to_string(i));
        EXPECT_EQ(std::stoull(c[1]), op["cycles"].get<std::uint64_t>()) << op["name"];
        const double stall = std::stod(c[2]);
        EXPECT_LE(stall, op["cycles"].get<double>());
        EXPECT_NEAR(std::stod(c[3]), 100.0 * op["utilization"].get<double>(), 5e-5) << op["name"];
        // Compute utilization is the same MACs over the cycles without stalls.
        EXPECT_NEAR(std::stod(c[5]), std::stod(c[3]) * op["cycles"].get<double>() / (op["cycles"].get<double>() - stall),
                    1e-3 * std::stod(c[5]) + 1e-4);
        const auto& d = r.detail[i];
        ASSERT_EQ(d.size(), 19u);
        for (int k = 0; k < 6; ++k) {
            EXPECT_EQ(std::stoull(d[1 + 3 * k]), op["start_cycle"].get<std::uint64_t>());
            EXPECT_EQ(std::stoull(d[2 + 3 * k]), op["end_cycle"].get<std::uint64_t>());
        }
        // Bandwidth = words over the layer's cycles.
        ASSERT_EQ(r.bandwidth[i].size(), 7u);
        for (int k = 0; k < 6; ++k)
            EXPECT_NEAR(std::stod(r.bandwidth[i][1 + k]), std::stod(d[3 + 3 * k]) / op["cycles"].get<double>(), 5e-5);
    }
}

}  // namespace

TEST(ScaleSimReports, BertGemmsOnTpuV4) {
    const Reports r = run_reports("tpu_v4.json", "scalesim/bert_base_layer_gemm.csv");
    check_cycles_match(r);
    // Mapping efficiency on a 128 x 128 weight-stationary array (K on rows, N on columns):
    // QKV_proj K=768, N=2304: every fold full, 100%; Attn_scores K=64: half the rows, 50%;
    // Attn_context N=64: half the columns, 50%; Out_proj 100%.
    EXPECT_EQ(r.compute[0][4], "100.0000");
    EXPECT_EQ(r.compute[1][4], "50.0000");
    EXPECT_EQ(r.compute[2][4], "50.0000");
    EXPECT_EQ(r.compute[3][4], "100.0000");
    // DRAM words of QKV_proj: ifmap M x K = 128 x 768, filter K x N = 768 x 2304, ofmap 128 x 2304.
    EXPECT_EQ(r.detail[0][12], std::to_string(128 * 768));
    EXPECT_EQ(r.detail[0][15], std::to_string(768 * 2304));
    EXPECT_EQ(r.detail[0][18], std::to_string(128 * 2304));
}

TEST(ScaleSimReports, ConvLayersOnTheTeachingArray) {
    // systolic_8x8: ideal memory, so no stall cycles and compute utilization = overall.
    const Reports r = run_reports("systolic_8x8.json", "scalesim/alexnet_resnet_conv.csv");
    check_cycles_match(r);
    for (const auto& row : r.compute) {
        EXPECT_EQ(row[2], "0");
        EXPECT_EQ(row[5], row[3]);
    }
    // Conv1: K = 11 x 11 x 3 = 363 rows over 46 folds of 8 (368), N = 96 filters over 12 folds
    // of 8: mapping efficiency 363 / 368 = 98.6413%.
    EXPECT_EQ(r.compute[0][4], "98.6413");
}

TEST(ScaleSimReports, ConvLayersOnTpuV4) {
    const Reports r = run_reports("tpu_v4.json", "scalesim/alexnet_resnet_conv.csv");
    check_cycles_match(r);
    // Conv1 on 128 x 128: K = 363 over 3 folds (384), N = 96 of 128 columns:
    // 363 x 96 / (384 x 128) = 70.8984%.
    EXPECT_EQ(r.compute[0][4], "70.8984");
}

TEST(ScaleSimReports, RefusedOnAGpuConfig) {
    const fs::path dir = scratch_dir();
    const Result r = run("--config configs/a100.json --trace traces/tiny_gemm.trace -q --scalesim-reports '" +
                         (dir / "reports").string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--scalesim-reports: SCALE-Sim reports are for systolic chips")) << r.err;
    EXPECT_FALSE(fs::exists(dir / "reports"));
}
