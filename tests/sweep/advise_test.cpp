// accelsim advise: the ranking worked by hand on synthetic points, and end to end against single
// runs of the same chips.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/advise/advice.h"
#include "sim/input_error.h"
#include "tests/accelsim_process.h"

namespace accelsim::advise_test {
namespace {

using nlohmann::json;

AdvicePoint point(const std::string& chip, std::int64_t batch, double ms, std::optional<double> cost,
                  std::optional<double> tdp, const std::string& dtype = "bf16") {
    AdvicePoint p;
    p.chip = chip;
    p.batch = batch;
    p.dtype = dtype;
    p.ok = true;
    p.seconds = ms / 1e3;
    p.cost_per_hour_usd = cost;
    p.tdp_w = tdp;
    p.bound_shares = {{"hbm", 0.7}, {"compute", 0.3}};
    p.bytes = {{"hbm", 8e6 * static_cast<double>(batch)}};
    p.ops = 10;
    return p;
}

// Chip a: $3.60/h, 100 W: batch 1 in 1 ms, 4 in 2 ms, 16 in 6 ms.
// Chip b: $1.80/h, 50 W: batch 1 in 3 ms, 4 in 8 ms, 16 in 30 ms.
// Chip c: everything slower than 5 ms. Chip d: no price, batch 1 in 0.5 ms.
std::vector<AdvicePoint> four_chips() {
    return {point("a", 1, 1, 3.6, 100), point("a", 4, 2, 3.6, 100),  point("a", 16, 6, 3.6, 100),
            point("b", 1, 3, 1.8, 50),  point("b", 4, 8, 1.8, 50),   point("b", 16, 30, 1.8, 50),
            point("c", 1, 9, 1.0, 10),  point("d", 1, 0.5, std::nullopt, 30)};
}

TEST(Advice, UnderALatencyBoundEachChipsCheapestBatchIsChosenAndChipsRankByCost) {
    // Cost per million = $/h / 3600 x seconds / batch x 1e6: a: 1000 $ x s / b, b: 500 $ x s / b.
    // Under 5 ms: a at batch 1 costs 1.0, at batch 4 0.5 (batch 16 takes 6 ms); b at batch 1 1.5
    // (batch 4 takes 8 ms). c meets no bound; d has no price, so it ranks after the priced chips.
    const Advice a = advise(four_chips(), RankBy::cost, 0.005);
    ASSERT_EQ(a.chips.size(), 4u);
    EXPECT_EQ(a.chips[0].chip, "a");
    EXPECT_EQ(a.chips[0].best->batch, 4);
    EXPECT_DOUBLE_EQ(*a.chips[0].best->cost_per_million_usd(), 0.5);
    // Energy (TDP bound): 100 W x 2 ms / 4 = 0.05 J; throughput 4 / 2 ms = 2000 per second.
    EXPECT_DOUBLE_EQ(*a.chips[0].best->energy_per_inference_j(), 0.05);
    EXPECT_DOUBLE_EQ(a.chips[0].best->throughput(), 2000);
    EXPECT_EQ(a.chips[1].chip, "b");
    EXPECT_EQ(a.chips[1].best->batch, 1);
    EXPECT_DOUBLE_EQ(*a.chips[1].best->cost_per_million_usd(), 1.5);
    EXPECT_EQ(a.chips[2].chip, "d");
    EXPECT_FALSE(a.chips[2].best->cost_per_million_usd().has_value());
    EXPECT_EQ(a.chips[3].chip, "c");
    EXPECT_FALSE(a.chips[3].best.has_value());
    EXPECT_EQ(a.chips[3].why, "no batch meets the 5.00 ms bound (fastest: batch 1 bf16 at 9.00 ms)");
    // Why a stopped at batch 4: HBM-bound, 8 MB per inference, and batch 16 breaks the bound.
    EXPECT_EQ(a.chips[0].why,
              "HBM-bound at batch 4 (70% of cycles): 8.00 MB of HBM traffic per inference; a larger batch shares "
              "each weight read; batch 16 takes 6.00 ms, over the 5.00 ms bound");
}

// A dtype name longer than the header ("fp8_e4m3") widens its column: every row's cells end where
// the header's do.
TEST(Advice, TableColumnsFitTheLongestDtype) {
    const Advice a = advise({point("h100", 1, 1, 3.6, 700, "fp8_e4m3"), point("a100", 1, 2, 1.8, 400, "fp16")},
                            RankBy::cost, std::nullopt);
    std::ostringstream out;
    write_advice_table(out, a);
    std::istringstream lines(out.str());
    std::string title, header, first, why, second;
    std::getline(lines, title);
    std::getline(lines, header);
    std::getline(lines, first);
    std::getline(lines, why);
    std::getline(lines, second);
    // "rank  chip  batch  " is 4 + 2 + 4 + 2 + 5 + 2 = 19 characters; the dtype column is 8 wide.
    EXPECT_EQ(header.substr(19, 8), "   dtype") << out.str();
    EXPECT_EQ(first.substr(19, 8), "fp8_e4m3") << out.str();
    EXPECT_EQ(second.substr(19, 8), "    fp16") << out.str();
    EXPECT_EQ(header.find("latency(ms)"), 19u + 8 + 2 + 0) << out.str();
}

TEST(Advice, AHostLinkBoundChipSaysHowManyParametersStream) {
    // An Edge-TPU-like point: 89% of its cycles bound by the host link, 34.6 MB streamed for a batch
    // of 2 = 17.3 MB per inference.
    AdvicePoint e = point("e", 2, 40, 0.0023, 2);
    e.bound_shares = {{"host_link", 0.89}, {"compute", 0.11}};
    e.bytes = {{"host_link", 34.6e6}};
    const Advice a = advise({e}, RankBy::cost, std::nullopt);
    ASSERT_EQ(a.chips.size(), 1u);
    EXPECT_EQ(a.chips[0].why,
              "host_link-bound at batch 2 (89% of cycles): 17.3 MB of parameters per inference stream from the "
              "host (they exceed the on-chip cache); a larger batch shares each stream");
}

TEST(Advice, WithoutABoundTheLargestBatchCanWinAndOtherMetricsRankDifferently) {
    // No bound: a at batch 16 costs 1000 x 0.006 / 16 = 0.375; b at 16 costs 500 x 0.030 / 16 =
    // 0.9375 (batch 4: 1.0).
    const Advice cost = advise(four_chips(), RankBy::cost, std::nullopt);
    EXPECT_EQ(cost.chips[0].best->batch, 16);
    EXPECT_DOUBLE_EQ(*cost.chips[0].best->cost_per_million_usd(), 0.375);
    EXPECT_EQ(cost.chips[1].chip, "b");
    EXPECT_EQ(cost.chips[1].best->batch, 16);
    EXPECT_NE(cost.chips[0].why.find("; the largest batch tried"), std::string::npos) << cost.chips[0].why;
    // Latency: d's 0.5 ms beats a's 1 ms, then b's 3 ms, then c's 9 ms.
    const Advice latency = advise(four_chips(), RankBy::latency, std::nullopt);
    std::vector<std::string> order;
    for (const ChipAdvice& c : latency.chips) order.push_back(c.chip);
    EXPECT_EQ(order, (std::vector<std::string>{"d", "a", "b", "c"}));
    // Throughput: a at 16 / 6 ms = 2667/s; c 111/s; d 2000/s; b 16 / 30 ms = 533/s.
    const Advice throughput = advise(four_chips(), RankBy::throughput, std::nullopt);
    order.clear();
    for (const ChipAdvice& c : throughput.chips) order.push_back(c.chip);
    EXPECT_EQ(order, (std::vector<std::string>{"a", "d", "b", "c"}));
}

TEST(Advice, FailedPointsAreSkippedAndAChipWithOnlyFailuresSaysWhy) {
    std::vector<AdvicePoint> points = {point("a", 1, 1, 1.0, 1.0)};
    AdvicePoint bad = point("z", 1, 1, 1.0, 1.0);
    bad.ok = false;
    bad.failure = "kernel ops run only on simt chips";
    points.push_back(bad);
    const Advice a = advise(points, RankBy::cost, std::nullopt);
    EXPECT_EQ(a.chips[1].why, "every point failed: kernel ops run only on simt chips");
    EXPECT_THROW(parse_rank_by("cheapest"), InputError);
}

// End to end: two TPUs on a trace file; the ranking and the costs equal what single runs give with
// the cost formula applied by hand.
TEST(AdviseCli, RanksTwoChipsAsTheirSingleRunsAndPricesSay) {
    using namespace accelsim_test;
    const fs::path dir = scratch_dir();
    double cost[2] = {0, 0};
    const char* chips[2] = {"tpu_v3", "tpu_v4"};
    for (int i = 0; i < 2; ++i) {
        const fs::path report = dir / (std::string(chips[i]) + ".json");
        const Result r = run("--config configs/" + std::string(chips[i]) + ".json --trace traces/tiny_mixed.trace --json '" +
                             report.string() + "' --quiet");
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const json j = json::parse(slurp(report));
        const double seconds = j["totals"]["seconds"].get<double>();
        cost[i] = j["config"]["cost_per_hour_usd"].get<double>() / 3600.0 * seconds * 1e6;
    }
    const fs::path advice = dir / "advice.json";
    const Result r = run("advise --trace traces/tiny_mixed.trace --configs configs/tpu_v3.json,configs/tpu_v4.json -j 2 "
                         "-q -o '" + (dir / "points").string() + "' --json '" + advice.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "advice: ranked by cost")) << r.out;
    const json a = json::parse(slurp(advice));
    ASSERT_EQ(a["chips"].size(), 2u);
    const int first = cost[0] <= cost[1] ? 0 : 1;
    EXPECT_EQ(a["chips"][0]["chip"], chips[first]);
    EXPECT_EQ(a["chips"][1]["chip"], chips[1 - first]);
    EXPECT_DOUBLE_EQ(a["chips"][0]["cost_per_million_inferences_usd"].get<double>(), cost[first]);
    EXPECT_DOUBLE_EQ(a["chips"][1]["cost_per_million_inferences_usd"].get<double>(), cost[1 - first]);
    // A trace file is one batch: several batch sizes are refused with exit 2.
    const Result bad = run("advise --trace traces/tiny_mixed.trace --configs configs/tpu_v4.json --batch 1,2");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "a trace file holds one batch")) << bad.err;
}

TEST(AdviseCli, HostIoCountsEachChipsCopiesAndRefusesAChipWithoutALink) {
    // --host-io: every point runs with host.io, so each chip's latency is its single run with the
    // copies (a100: PCIe Gen4, tpu_v1: PCIe Gen3), longer than without them.
    using namespace accelsim_test;
    const fs::path dir = scratch_dir();
    std::map<std::string, double> with_io, without_io;
    for (const std::string chip : {"a100", "tpu_v1"})
        for (const bool io : {true, false}) {
            const fs::path report = dir / (chip + (io ? "_io" : "") + ".json");
            const Result r = run("--config configs/" + chip + ".json --trace traces/tiny_mixed.trace --json '" +
                                 report.string() + "' --quiet" + (io ? " --set host.io=true" : ""));
            ASSERT_EQ(r.exit_code, 0) << r.err;
            (io ? with_io : without_io)[chip] = json::parse(slurp(report))["totals"]["seconds"].get<double>() * 1e3;
        }
    const fs::path advice = dir / "advice.json";
    const Result r = run("advise --trace traces/tiny_mixed.trace --configs configs/a100.json,configs/tpu_v1.json "
                         "--host-io -j 2 -q -o '" + (dir / "points").string() + "' --json '" + advice.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json a = json::parse(slurp(advice));
    ASSERT_EQ(a["chips"].size(), 2u);
    for (const json& chip : a["chips"]) {
        const std::string name = chip["chip"].get<std::string>();
        SCOPED_TRACE(name);
        EXPECT_DOUBLE_EQ(chip["latency_ms"].get<double>(), with_io.at(name));
        EXPECT_GT(with_io.at(name), without_io.at(name));
    }
    const Result bad = run("advise --trace traces/tiny_mixed.trace --configs configs/a100.json,configs/tpu_v4.json --host-io");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "configs/tpu_v4.json gives no host link")) << bad.err;
}

}  // namespace
}  // namespace accelsim::advise_test
