// `accelsim sweep` end to end with the real executable: rows against separate single runs, resume
// after kill -9, bad specs, failed points, shards + merge, and gnuplot plots.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <regex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../accelsim_process.h"
#include "sim/sweep/sweep_plot.h"

namespace accelsim_test {
namespace {

using nlohmann::json;
using Row = std::map<std::string, std::string>;

std::vector<Row> csv_rows(const fs::path& file) {
    const accelsim::CsvTable t = accelsim::read_csv(file.string());
    std::vector<Row> rows;
    for (const auto& r : t.rows) {
        Row row;
        for (std::size_t i = 0; i < t.header.size(); ++i) row[t.header[i]] = r[i];
        rows.push_back(row);
    }
    return rows;
}

double num(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

std::size_t files_in(const fs::path& dir, const std::string& ext) {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ext) ++n;
    return n;
}

// A spec in the scratch folder, naming shipped configs and traces by absolute path.
fs::path write_spec(const fs::path& dir, const std::string& body) {
    std::string text = body;
    for (std::size_t at; (at = text.find("@ROOT@")) != std::string::npos;) text.replace(at, 6, ACCELSIM_SOURCE_DIR);
    const fs::path path = dir / "spec.json";
    write_file(path, text);
    return path;
}

// The acceptance check of issue 12: the coursework example, and three of its rows field by field
// against separate single runs; cost and energy worked out from the single run's seconds and the
// config's price (3.22 USD/h) and TDP (192 W).
TEST(SweepCli, MxuHbmExampleRowsEqualSeparateSingleRuns) {
    const fs::path dir = scratch_dir("out");
    const Result r = run("sweep sweeps/mxu_hbm.json -j 2 -o '" + dir.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<Row> rows = csv_rows(dir / "results.csv");
    ASSERT_EQ(rows.size(), 27u);  // MXU 64, 128, 256 x HBM 0.5, 1, 2 x 1.2 TB/s x ws, os, is
    EXPECT_EQ(files_in(dir / "points", ".json"), 27u);
    for (const std::size_t index : {0u, 13u, 26u}) {
        const Row& row = rows[index];
        ASSERT_EQ(row.at("status"), "ok");
        const fs::path single = scratch_dir("single") / "report.json";
        const std::string mxu = row.at("mxu");
        const Result s = run("-c configs/tpu_v4.json -t traces/bert_base.trace -q --set mxu.rows=" + mxu + " --set mxu.cols=" +
                             mxu + " --set hbm.data_rate_gbps=" + row.at("hbm.data_rate_gbps") +
                             " --set mxu.dataflow=" + row.at("mxu.dataflow") + " --json '" + single.string() + "'");
        ASSERT_EQ(s.exit_code, 0) << s.err;
        const json totals = json::parse(slurp(single)).at("totals");
        SCOPED_TRACE("point " + row.at("point"));
        EXPECT_EQ(row.at("cycles"), std::to_string(totals.at("cycles").get<std::uint64_t>()));
        EXPECT_EQ(row.at("macs"), std::to_string(totals.at("macs").get<std::int64_t>()));
        EXPECT_EQ(row.at("flops"), std::to_string(totals.at("flops").get<std::int64_t>()));
        EXPECT_EQ(row.at("ops"), "156");  // 12 layers x 13 ops
        const double seconds = totals.at("seconds").get<double>();
        EXPECT_DOUBLE_EQ(num(row.at("seconds")), seconds);
        EXPECT_DOUBLE_EQ(num(row.at("seconds")), num(row.at("cycles")) / 1050e6);  // clock_mhz 1050
        EXPECT_DOUBLE_EQ(num(row.at("utilization")), totals.at("utilization").get<double>());
        for (const auto& [level, bytes] : totals.at("bytes").items())
            EXPECT_EQ(row.at("bytes_" + level), std::to_string(bytes.get<std::int64_t>())) << level;
        double shares = 0;
        for (const auto& [bound, cycles] : totals.at("cycles_by_bound").items()) {
            EXPECT_DOUBLE_EQ(num(row.at("share_" + bound)), cycles.get<double>() / totals.at("cycles").get<double>()) << bound;
            shares += num(row.at("share_" + bound));
        }
        EXPECT_NEAR(shares, 1.0, 1e-12);
        EXPECT_DOUBLE_EQ(num(row.at("cost_per_million_inferences_usd")), seconds * 3.22 / 3600 * 1e6);
        EXPECT_DOUBLE_EQ(num(row.at("energy_per_inference_j_upper_bound")), seconds * 192);
    }
    // The Pareto front over (latency, MXU size, HBM bandwidth): no marked point is beaten by
    // another point in all three, and every unmarked point is.
    auto beats = [](const Row& a, const Row& b) {
        const double fa[] = {num(a.at("seconds")), num(a.at("mxu")), num(a.at("hbm.data_rate_gbps"))};
        const double fb[] = {num(b.at("seconds")), num(b.at("mxu")), num(b.at("hbm.data_rate_gbps"))};
        bool better = false;
        for (int i = 0; i < 3; ++i) {
            if (fa[i] > fb[i]) return false;
            better |= fa[i] < fb[i];
        }
        return better;
    };
    for (const Row& a : rows) {
        bool dominated = false;
        for (const Row& b : rows) dominated |= beats(b, a);
        EXPECT_EQ(a.at("pareto"), dominated ? "0" : "1") << "point " << a.at("point");
    }
}

// kill -9 of the driver midway, then the same command: finished points are reused (the log
// counts them) and the CSV is byte-identical to an uninterrupted run's.
TEST(SweepCli, KillNineThenRerunReusesPointsAndGivesTheSameCsv) {
    const fs::path dir = scratch_dir("spec");
    const fs::path spec = write_spec(dir, R"({"configs": ["@ROOT@/configs/tpu_v4.json"],
        "traces": ["@ROOT@/traces/bert_base.trace"],
        "axes": {"mxu.dataflow": ["ws", "os", "is"], "hbm.data_rate_gbps": [1.5, 2.0, 2.5, 3.0]}})");
    const fs::path reference = dir / "reference", killed = dir / "killed";
    const Result full = run("sweep '" + spec.string() + "' -j 2 -q -o '" + reference.string() + "'");
    ASSERT_EQ(full.exit_code, 0) << full.err;

    const pid_t driver = ::fork();
    ASSERT_GE(driver, 0);
    if (driver == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
        ::execl(ACCELSIM_BINARY, "accelsim", "sweep", spec.c_str(), "-j", "2", "-q", "-o", killed.c_str(), nullptr);
        ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (files_in(killed / "points", ".json") < 3 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ::kill(driver, SIGKILL);
    int status = 0;
    ::waitpid(driver, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the driver finished before it could be killed";
    const std::size_t finished_at_kill = files_in(killed / "points", ".json");
    ASSERT_GE(finished_at_kill, 3u);
    ASSERT_LT(finished_at_kill, 12u);
    EXPECT_FALSE(fs::exists(killed / "results.csv"));

    const Result rerun = run("sweep '" + spec.string() + "' -j 2 -o '" + killed.string() + "'");
    ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(rerun.err, m, std::regex("; ([0-9]+) reused from .*, ([0-9]+) to run"))) << rerun.err;
    const std::size_t reused = std::stoul(m[1]), ran = std::stoul(m[2]);
    EXPECT_GE(reused, finished_at_kill);  // every point finished before the kill is reused
    EXPECT_EQ(reused + ran, 12u);
    EXPECT_EQ(slurp(killed / "results.csv"), slurp(reference / "results.csv"));

    // A third run simulates nothing.
    const Result again = run("sweep '" + spec.string() + "' -j 2 -o '" + killed.string() + "'");
    EXPECT_TRUE(contains(again.err, "; 12 reused from")) << again.err;
    EXPECT_TRUE(contains(again.err, ", 0 to run")) << again.err;
}

TEST(SweepCli, MisspeltKeyExitsTwoNamingSpecAndKeyBeforeAnyPoint) {
    const fs::path dir = scratch_dir("spec");
    const fs::path spec = write_spec(dir, R"({"configs": ["@ROOT@/configs/tpu_v4.json"],
        "traces": ["@ROOT@/traces/tiny_gemm.trace"],
        "axes": {"mxu.rows": [64, 128], "hbm.data_rate_gpbs": [1, 2]}})");
    const Result r = run("sweep '" + spec.string() + "' -j 2 -o '" + (dir / "out").string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, spec.string() + ": hbm.data_rate_gpbs: unknown key 'hbm.data_rate_gpbs' (did you mean "
                                                "'hbm.data_rate_gbps'?)"))
        << r.err;
    EXPECT_FALSE(fs::exists(dir / "out"));  // nothing ran, nothing was written
}

TEST(SweepCli, FailedPointIsRecordedAndTheOthersRun) {
    const fs::path dir = scratch_dir("spec");
    // A kernel op passes the trace reader but a systolic chip refuses it when the point runs.
    const fs::path spec = write_spec(dir, R"({"configs": "@ROOT@/configs/tpu_v4.json",
        "traces": ["@ROOT@/traces/simt_teaching.trace", "@ROOT@/traces/tiny_gemm.trace"],
        "axes": {"mxu.rows": [64, 128]}})");
    const Result r = run("sweep '" + spec.string() + "' -j 2 -o '" + (dir / "all").string() + "'");
    EXPECT_EQ(r.exit_code, 1);
    std::vector<Row> rows = csv_rows(dir / "all" / "results.csv");
    ASSERT_EQ(rows.size(), 4u);
    for (const std::size_t i : {0u, 2u}) {
        EXPECT_EQ(rows[i].at("status"), "failed");
        EXPECT_EQ(rows[i].at("exit_code"), "2");
        EXPECT_TRUE(contains(rows[i].at("message"), "kernel ops run only on simt chips")) << rows[i].at("message");
        EXPECT_TRUE(fs::exists(dir / "all" / "failed" / (rows[i].at("hash") + ".json")));
    }
    EXPECT_EQ(rows[1].at("status"), "ok");
    EXPECT_EQ(rows[3].at("status"), "ok");
    EXPECT_EQ(json::parse(slurp(dir / "all" / "summary.json")).at("failures").size(), 2u);

    // --fail-fast with one point at a time: the first point fails, nothing else starts.
    const Result ff = run("sweep '" + spec.string() + "' -j 1 --fail-fast -o '" + (dir / "ff").string() + "'");
    EXPECT_EQ(ff.exit_code, 1);
    rows = csv_rows(dir / "ff" / "results.csv");
    EXPECT_EQ(rows[0].at("status"), "failed");
    for (const std::size_t i : {1u, 2u, 3u}) EXPECT_EQ(rows[i].at("status"), "missing");
    EXPECT_EQ(files_in(dir / "ff" / "points", ".json"), 0u);
}

TEST(SweepCli, ShardsThenMergeEqualOneLocalRun) {
    const fs::path dir = scratch_dir("spec");
    const fs::path spec = write_spec(dir, R"({"configs": "@ROOT@/configs/tpu_v4.json",
        "traces": ["@ROOT@/traces/tiny_gemm.trace"], "objectives": ["latency", "mxu.rows"],
        "axes": {"mxu.rows": [32, 64, 128], "mxu.dataflow": ["ws", "os"]}})");
    const fs::path local = dir / "local", shared = dir / "shared";
    ASSERT_EQ(run("sweep '" + spec.string() + "' -j 2 -q -o '" + local.string() + "'").exit_code, 0);
    const Result s0 = run("sweep '" + spec.string() + "' -j 2 --shard 0/2 -o '" + shared.string() + "'");
    ASSERT_EQ(s0.exit_code, 0) << s0.err;
    EXPECT_TRUE(contains(s0.err, "shard 0/2: 3;")) << s0.err;  // 6 distinct points, every other one
    EXPECT_FALSE(fs::exists(shared / "results.csv"));
    const Result partial = run("sweep merge '" + shared.string() + "'");
    EXPECT_TRUE(contains(partial.err, "3 ok, 0 failed, 3 not run yet")) << partial.err;
    ASSERT_EQ(run("sweep '" + spec.string() + "' -j 2 --shard 1/2 -q -o '" + shared.string() + "'").exit_code, 0);
    const Result merged = run("sweep merge '" + shared.string() + "'");
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_EQ(slurp(shared / "results.csv"), slurp(local / "results.csv"));
    EXPECT_EQ(run("sweep '" + spec.string() + "' --shard 2/2").exit_code, 2);
}

// gnuplot draws the real sweep: one marker per finished point (plus one per legend entry), each
// series' markers at the x positions of its points, the Pareto rings on the marked rows.
TEST(SweepCli, PlotDrawsEveryPointWithGnuplot) {
    const fs::path dir = scratch_dir("spec");
    const fs::path spec = write_spec(dir, R"({"configs": "@ROOT@/configs/tpu_v4.json",
        "traces": ["@ROOT@/traces/tiny_gemm.trace"], "objectives": ["latency", "mxu.rows"],
        "axes": {"mxu.rows": [32, 64, 128], "mxu.dataflow": ["ws", "os"]}})");
    const fs::path out = dir / "out";
    ASSERT_EQ(run("sweep '" + spec.string() + "' -j 2 -q -o '" + out.string() + "'").exit_code, 0);
    const std::vector<Row> rows = csv_rows(out / "results.csv");
    std::size_t pareto = 0;
    for (const Row& r : rows) pareto += r.at("pareto") == "1";
    ASSERT_GT(pareto, 0u);

    const fs::path svg = dir / "plot.svg";
    const Result p = run("sweep plot '" + out.string() + "' --x mxu.rows --y cycles --color mxu.dataflow --pareto -o '" +
                         svg.string() + "'");
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const std::string text = slurp(svg);
    // pointtype 7 is gnuplot's #gpPt6 (filled circle), pointtype 6 its #gpPt5 (open circle).
    const std::regex marker("xlink:href='#gpPt([0-9]+)' transform='translate\\(([0-9.]+),([0-9.]+)\\)");
    std::map<std::string, std::vector<std::pair<double, double>>> by_type;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), marker); it != std::sregex_iterator(); ++it)
        by_type[(*it)[1]].emplace_back(std::stod((*it)[2]), std::stod((*it)[3]));
    EXPECT_EQ(by_type["6"].size(), rows.size() + 2);  // 6 points + 2 legend entries (ws, os)
    EXPECT_EQ(by_type["5"].size(), pareto + 1);        // rings + the legend's
    // Three distinct x positions among the data markers (32, 64, 128), two markers at each.
    std::map<long, int> per_x;
    for (const auto& [x, y] : by_type["6"]) per_x[std::lround(x)]++;
    int data_columns = 0;
    for (const auto& [x, n] : per_x) data_columns += n == 2;
    EXPECT_GE(data_columns, 3);
    EXPECT_TRUE(contains(text, "mxu.dataflow=ws"));
    EXPECT_TRUE(contains(text, "Pareto-optimal"));

    const fs::path heat = dir / "heat.svg";
    const Result h = run("sweep plot '" + out.string() + "' --x mxu.rows --y mxu.dataflow --z cycles -o '" + heat.string() + "'");
    ASSERT_EQ(h.exit_code, 0) << h.err;
    const std::string heat_text = slurp(heat);
    for (const Row& r : rows) {  // every cell is labelled with its cycles (%.4g)
        char label[32];
        std::snprintf(label, sizeof label, "%.4g", num(r.at("cycles")));
        EXPECT_TRUE(contains(heat_text, std::string(">") + label + "<")) << label;
    }
    EXPECT_EQ(run("sweep plot '" + out.string() + "' --x mxu.rows --y cylces -o '" + heat.string() + "'").exit_code, 2);
}

}  // namespace
}  // namespace accelsim_test

namespace accelsim_test {
namespace {

// The shipped examples validate in full (every point's config) and have the sizes worked out by
// hand: 3 MXU sizes x 3 HBM rates x 3 dataflows; 3 SM counts x 3 L2 sizes; 9 chips x 7 batches.
TEST(SweepCli, ShippedExamplesValidate) {
    for (const auto& [spec, points] : std::vector<std::pair<std::string, int>>{
             {"sweeps/mxu_hbm.json", 27}, {"sweeps/gpu_sms_l2.json", 9}, {"sweeps/chips.json", 63}}) {
        const Result r = run("sweep " + spec + " --dry-run");
        EXPECT_EQ(r.exit_code, 0) << spec << ": " << r.err;
        EXPECT_TRUE(contains(r.out, ": " + std::to_string(points) + " points (" + std::to_string(points) + " distinct)"))
            << spec << ": " << r.out;
    }
}

}  // namespace
}  // namespace accelsim_test

namespace accelsim_test {
namespace {

// Two different sweeps sharing a point store: the second simulates only the point the first did
// not (mxu.rows = 128), and its row for the shared point equals the first sweep's.
TEST(SweepCli, SweepsSharingAStoreSimulateIdenticalPointsOnce) {
    const fs::path dir = scratch_dir("spec");
    const std::string common = R"({"configs": "@ROOT@/configs/tpu_v4.json", "traces": ["@ROOT@/traces/tiny_gemm.trace"], )";
    fs::create_directories(dir / "a");
    fs::create_directories(dir / "b");
    const fs::path a = write_spec(dir / "a", common + R"("axes": {"mxu.rows": [32, 64]}})");
    const fs::path b = write_spec(dir / "b", common + R"("axes": {"mxu.rows": [64, 128]}})");
    const fs::path store = dir / "store";
    const Result first = run("sweep '" + a.string() + "' -j 2 -o '" + (dir / "out_a").string() + "' --store '" + store.string() + "'");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_TRUE(contains(first.err, "; 0 reused from")) << first.err;
    const Result second = run("sweep '" + b.string() + "' -j 2 -o '" + (dir / "out_b").string() + "' --store '" + store.string() + "'");
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_TRUE(contains(second.err, "; 1 reused from " + store.string() + "/points, 1 to run")) << second.err;
    EXPECT_EQ(files_in(store / "points", ".json"), 3u);
    EXPECT_FALSE(fs::exists(dir / "out_b" / "points"));
    const std::vector<Row> ra = csv_rows(dir / "out_a" / "results.csv"), rb = csv_rows(dir / "out_b" / "results.csv");
    EXPECT_EQ(ra[1].at("hash"), rb[0].at("hash"));
    EXPECT_EQ(ra[1].at("cycles"), rb[0].at("cycles"));
    // merge finds the store through the plan.
    fs::remove(dir / "out_b" / "results.csv");
    ASSERT_EQ(run("sweep merge '" + (dir / "out_b").string() + "'").exit_code, 0);
    EXPECT_EQ(csv_rows(dir / "out_b" / "results.csv").size(), 2u);
    EXPECT_EQ(csv_rows(dir / "out_b" / "results.csv")[1].at("status"), "ok");
}

}  // namespace
}  // namespace accelsim_test
