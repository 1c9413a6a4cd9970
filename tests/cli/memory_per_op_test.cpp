// Memory per op: a long trace runs in memory that grows by well under a kilobyte per
// op, with the table, CSV and JSON reports written. Each run is a child process whose peak
// resident set comes from wait4's rusage (ru_maxrss, KiB on Linux); two trace lengths give the
// growth per op, so the fixed cost (SystemC, the config, the chip) drops out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "tests/accelsim_process.h"

namespace fs = std::filesystem;
using namespace accelsim_test;

namespace {

// `ops` relu ops of 4096 elements, each its own name.
fs::path relu_trace(const fs::path& dir, int ops) {
    const fs::path path = dir / ("relu" + std::to_string(ops) + ".trace");
    std::ofstream f(path);
    f << "# accelsim-trace 1\n";
    for (int i = 0; i < ops; ++i) f << "relu r" << i << " n=4096\n";
    return path;
}

// Bytes of peak RSS per op between a run of `small` and one of `large` ops, with `outputs`.
double bytes_per_op(const fs::path& dir, int small, int large, bool json) {
    const std::string config = std::string(ACCELSIM_SOURCE_DIR) + "/configs/tpu_v4.json";
    long rss[2] = {0, 0};
    const int sizes[2] = {small, large};
    for (int i = 0; i < 2; ++i) {
        const fs::path trace = relu_trace(dir, sizes[i]);
        std::vector<std::string> args = {"--config", config, "--trace", trace.string(), "--csv", (dir / "r.csv").string()};
        if (json) args.insert(args.end(), {"--json", (dir / "r.json").string()});
        const Measured m = run_measured(args, dir);
        EXPECT_EQ(m.exit_code, 0) << slurp(dir / "stderr");
        EXPECT_GT(m.max_rss_kib, 0);
        rss[i] = m.max_rss_kib;
        fs::remove(trace);
        fs::remove(dir / "r.json");  // about 6 KB per op
        fs::remove(dir / "r.csv");
    }
    ::testing::Test::RecordProperty("rss_small_kib", std::to_string(rss[0]));
    ::testing::Test::RecordProperty("rss_large_kib", std::to_string(rss[1]));
    std::cout << "peak RSS " << rss[0] << " KiB (" << small << " ops), " << rss[1] << " KiB (" << large << " ops)\n";
    return static_cast<double>(rss[1] - rss[0]) * 1024.0 / static_cast<double>(large - small);
}

}  // namespace

// The table (stdout) and the CSV: 50,000 and 250,000 ops. Before reports streamed, every op's
// whole report was held to the end: 4.7 KB per op (4.72 GB for 1,000,000 ops); now about 0.5 KB,
// the parsed trace itself.
TEST(MemoryPerOp, ALongTraceWithTableAndCsvGrowsByLessThanAKilobytePerOp) {
    const fs::path dir = scratch_dir();
    const double per_op = bytes_per_op(dir, 50'000, 250'000, false);
    EXPECT_LT(per_op, 1024.0);
    EXPECT_GT(per_op, 0.0);  // the parsed ops are held: a measurement, not noise
}

// With --json too (about 6 KB of JSON per op): 5,000 and 25,000 ops. Before, the JSON document was
// built whole in memory: about 56 KB per op.
TEST(MemoryPerOp, JsonReportsStreamToTheirFile) {
    const fs::path dir = scratch_dir();
    EXPECT_LT(bytes_per_op(dir, 5'000, 25'000, true), 1024.0);
}
