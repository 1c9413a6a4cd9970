// Unit tests of the comparison built from hand-made reports: every expected number is worked out
// by hand in the comments from the reports and configs written here.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/compare/comparison.h"

namespace accelsim::comparison_test {
namespace {

using nlohmann::json;

// One 128x128 MXU at 1000 MHz: 16,384 bf16 MACs per cycle; peak = 2 x 16,384 x 1e9 = 32.768 TFLOP/s.
ChipConfig systolic_chip() {
    ChipConfig c;
    c.name = "sys";
    c.kind = "systolic";
    c.clock_mhz = 1000;
    c.default_dtype = DType::bf16;
    c.tpu.cores = 1;
    c.tpu.mxus_per_core = 1;
    c.mxu.rows = c.mxu.cols = 128;
    c.mxu.macs_per_pe_per_cycle = DTypeRates{1, 1, 1, 0};
    c.cost_per_hour_usd = 3.6;
    c.tdp_w = 200;
    return c;
}

// 10 SMs x 512 fp16 tensor MACs per cycle at 500 MHz: peak = 2 x 5,120 x 5e8 = 5.12 TFLOP/s.
// No price and no TDP: both figures must come out n/a.
ChipConfig simt_chip() {
    ChipConfig c;
    c.name = "gpu";
    c.kind = "simt";
    c.clock_mhz = 500;
    c.default_dtype = DType::fp16;
    c.gpu.sms = 10;
    c.sm.tensor_macs_per_cycle = DTypeRates{0, 512, 512, 0};
    return c;
}

json op(const std::string& name, const std::string& kind, std::uint64_t cycles, std::int64_t flops,
        const std::string& bound, const std::string& model, json utilization) {
    return {{"name", name},   {"kind", kind},   {"cycles", cycles},          {"flops", flops},
            {"bound", bound}, {"model", model}, {"utilization", utilization}};
}

json report(json ops, std::uint64_t cycles, double clock_hz, std::int64_t macs, std::int64_t flops,
            double utilization, std::size_t without_model) {
    return {{"schema", "accelsim.report/1"},
            {"ops", ops},
            {"totals",
             {{"cycles", cycles},
              {"seconds", static_cast<double>(cycles) / clock_hz},
              {"macs", macs},
              {"flops", flops},
              {"utilization", utilization},
              {"ops", ops.size()},
              {"ops_without_cycle_model", without_model}}}};
}

// Design A (systolic, 1 GHz): a matmul of 1,638,400 MACs (3,276,800 flops) in 200 cycles and a
// gelu of 1,000 flops in 800 cycles: 1,000 cycles = 1 us in total.
// Design B (simt, 500 MHz): the same ops in 100 + 150 = 250 cycles = 0.5 us; the gelu reports an
// achieved occupancy of 0.25.
std::vector<DesignInput> two_designs() {
    DesignInput a{"a.json", systolic_chip(),
                  report(json::array({op("mm", "matmul", 200, 3276800, "compute", "mxu", 0.5),
                                      op("act", "gelu", 800, 1000, "hbm", "roofline", nullptr)}),
                         1000, 1e9, 1638400, 3277800, 0.1, 1)};
    json gelu_b = op("act", "gelu", 150, 1000, "latency", "simt", 0.05);
    gelu_b["occupancy"] = {{"theoretical", 0.5}, {"achieved", 0.25}};
    DesignInput b{"b.json", simt_chip(),
                  report(json::array({op("mm", "matmul", 100, 3276800, "compute", "simt", 0.64), gelu_b}),
                         250, 5e8, 1638400, 3277800, 0.256, 0)};
    return {a, b};
}

TEST(CompareFormulas, CostAndEnergyPerInference) {
    // 1 ms at 3.6 USD/h: 0.001 s x 0.001 USD/s = 1e-6 USD per inference = 1 USD per million.
    EXPECT_DOUBLE_EQ(cost_per_million_inferences_usd(1e-3, 3.6), 1.0);
    // 2.5 ms at 400 W = 1 J (upper bound).
    EXPECT_DOUBLE_EQ(energy_per_inference_j_upper_bound(2.5e-3, 400), 1.0);
}

TEST(Comparison, TotalsPeaksSpeedupCostAndEnergy) {
    const Comparison c = build_comparison("t.trace", two_designs());
    ASSERT_EQ(c.designs.size(), 2u);
    const DesignSummary& a = c.designs[0];
    const DesignSummary& b = c.designs[1];
    EXPECT_EQ(a.kind, "systolic");
    EXPECT_EQ(b.kind, "simt");
    EXPECT_DOUBLE_EQ(a.peak_tflops, 32.768);
    EXPECT_DOUBLE_EQ(b.peak_tflops, 5.12);
    // A: 3,277,800 flops in 1 us = 3.2778 TFLOP/s = 10.0030...% of 32.768.
    EXPECT_DOUBLE_EQ(a.seconds, 1e-6);
    EXPECT_NEAR(a.achieved_tflops, 3.2778, 1e-12);
    EXPECT_NEAR(a.share_of_peak, 3.2778 / 32.768, 1e-12);
    // B: the same flops in 0.5 us = 6.5556 TFLOP/s, above its 5.12 peak because the trace's flops
    // count the vector op too; the share is reported as is (1.2804...).
    EXPECT_NEAR(b.achieved_tflops, 6.5556, 1e-12);
    EXPECT_NEAR(b.share_of_peak, 6.5556 / 5.12, 1e-12);
    // Speedup relative to the first: 1 us / 0.5 us.
    ASSERT_TRUE(a.speedup_vs_first && b.speedup_vs_first);
    EXPECT_DOUBLE_EQ(*a.speedup_vs_first, 1.0);
    EXPECT_DOUBLE_EQ(*b.speedup_vs_first, 2.0);
    // A: 1e-6 s x 3.6/3600 USD/s x 1e6 = 1e-3 USD per million; 200 W x 1e-6 s = 2e-4 J.
    ASSERT_TRUE(a.cost_per_million_inferences_usd && a.energy_per_inference_j_upper_bound);
    EXPECT_NEAR(*a.cost_per_million_inferences_usd, 1e-3, 1e-15);
    EXPECT_NEAR(*a.energy_per_inference_j_upper_bound, 2e-4, 1e-16);
    EXPECT_FALSE(b.cost_per_million_inferences_usd);
    EXPECT_FALSE(b.energy_per_inference_j_upper_bound);
    EXPECT_EQ(b.cost_note, "config has no cost_per_hour_usd");
    EXPECT_EQ(b.energy_note, "config has no tdp_w");
    EXPECT_EQ(a.ops_without_cycle_model, 1u);
    // A: hbm holds 800 of 1,000 cycles; B: latency holds 150 of 250.
    EXPECT_EQ(a.dominant_bound, "hbm");
    EXPECT_EQ(b.dominant_bound, "latency");
}

TEST(Comparison, PerOpCellsUseEachDesignsClockAndPeak) {
    const Comparison c = build_comparison("t.trace", two_designs());
    ASSERT_EQ(c.ops.size(), 2u);
    const OpOnDesign& mm_a = c.ops[0].per_design[0];
    const OpOnDesign& mm_b = c.ops[0].per_design[1];
    // A: 200 cycles at 1 GHz = 0.2 us; 3,276,800 flops / 0.2 us = 16.384 TFLOP/s = 50% of 32.768.
    EXPECT_DOUBLE_EQ(mm_a.seconds, 2e-7);
    ASSERT_TRUE(mm_a.achieved_tflops && mm_a.share_of_peak && mm_b.share_of_peak);
    EXPECT_NEAR(*mm_a.achieved_tflops, 16.384, 1e-9);
    EXPECT_NEAR(*mm_a.share_of_peak, 0.5, 1e-12);
    // B: 100 cycles at 500 MHz = 0.2 us; the same 16.384 TFLOP/s is 320% of 5.12.
    EXPECT_DOUBLE_EQ(mm_b.seconds, 2e-7);
    EXPECT_NEAR(*mm_b.share_of_peak, 3.2, 1e-12);
    EXPECT_EQ(mm_b.model, "simt");
    const OpOnDesign& act_a = c.ops[1].per_design[0];
    const OpOnDesign& act_b = c.ops[1].per_design[1];
    EXPECT_FALSE(act_a.utilization);
    EXPECT_EQ(act_a.bound, "hbm");
    ASSERT_TRUE(act_b.occupancy_achieved);
    EXPECT_DOUBLE_EQ(*act_b.occupancy_achieved, 0.25);
    EXPECT_EQ(act_b.bound, "latency");
}

TEST(Comparison, JsonFollowsTheSchemaAndEmbedsEachReport) {
    const auto designs = two_designs();
    const json j = to_json(build_comparison("t.trace", designs));
    EXPECT_EQ(j["schema"], "accelsim.compare/1");
    EXPECT_EQ(j["trace"], "t.trace");
    ASSERT_EQ(j["designs"].size(), 2u);
    EXPECT_EQ(j["designs"][0]["report"], designs[0].report);
    EXPECT_EQ(j["designs"][1]["report"], designs[1].report);
    EXPECT_EQ(j["designs"][0]["totals"]["cycles"], 1000);
    EXPECT_TRUE(j["designs"][1]["cost_per_million_inferences_usd"].is_null());
    EXPECT_TRUE(j["designs"][1]["energy_per_inference_j_upper_bound"].is_null());
    ASSERT_EQ(j["ops"].size(), 2u);
    EXPECT_EQ(j["ops"][1]["name"], "act");
    EXPECT_EQ(j["ops"][1]["per_design"][1]["cycles"], 150);
    EXPECT_EQ(j["ops"][1]["per_design"][1]["occupancy_achieved"], 0.25);
    EXPECT_TRUE(j["ops"][1]["per_design"][0]["utilization"].is_null());
}

TEST(Comparison, CsvHasOneRowPerOpAndDesign) {
    std::ostringstream csv;
    write_compare_csv(csv, build_comparison("t.trace", two_designs()));
    std::istringstream lines(csv.str());
    std::string line;
    std::vector<std::string> rows;
    while (std::getline(lines, line)) rows.push_back(line);
    ASSERT_EQ(rows.size(), 1u + 2 * 2);
    // Second op on the second design: 150 cycles at 500 MHz = 3e-7 s; 1,000 flops / 3e-7 s =
    // 0.00333... TFLOP/s; speedup vs the first design's 800 cycles at 1 GHz: 8e-7 / 3e-7 = 2.666...
    EXPECT_EQ(rows[4].rfind("1,act,gelu,1,gpu,b.json,simt,simt,150,3e-07,1000,", 0), 0u) << rows[4];
    EXPECT_NE(rows[4].find(",0.05,0.25,latency,2.66666666666666"), std::string::npos) << rows[4];
}

TEST(Comparison, TableShowsBothDesignsAndWhyAFigureIsMissing) {
    std::ostringstream table;
    write_compare_table(table, build_comparison("t.trace", two_designs()));
    const std::string t = table.str();
    EXPECT_NE(t.find("[1] sys"), std::string::npos) << t;
    EXPECT_NE(t.find("[2] gpu"), std::string::npos) << t;
    EXPECT_NE(t.find("occ 25.0%"), std::string::npos) << t;
    EXPECT_NE(t.find("2.00x"), std::string::npos) << t;
    EXPECT_NE(t.find("n/a: gpu cost: config has no cost_per_hour_usd"), std::string::npos) << t;
    EXPECT_NE(t.find("no cycle model ran for 1 of 2 ops"), std::string::npos) << t;
}

TEST(Comparison, RepeatedConfigNamesGetDistinctLabels) {
    auto designs = two_designs();
    designs[1] = designs[0];
    const Comparison c = build_comparison("t.trace", designs);
    EXPECT_EQ(c.designs[0].label, "sys#1");
    EXPECT_EQ(c.designs[1].label, "sys#2");
}

TEST(Comparison, ReportsListingDifferentOpsAreRefused) {
    auto designs = two_designs();
    designs[1].report["ops"][1]["name"] = "other";
    EXPECT_THROW(build_comparison("t.trace", designs), std::runtime_error);
    designs = two_designs();
    designs[1].report["ops"].erase(1);
    EXPECT_THROW(build_comparison("t.trace", designs), std::runtime_error);
    designs = two_designs();
    designs[0].report["schema"] = "something/1";
    EXPECT_THROW(build_comparison("t.trace", designs), std::runtime_error);
    designs = two_designs();
    designs[0].report["ops"][0].erase("cycles");
    EXPECT_THROW(build_comparison("t.trace", designs), std::runtime_error);
}

}  // namespace
}  // namespace accelsim::comparison_test
