// The pool op through the real executable: a bad pool line exits 2 with one message naming the
// file and line, and a pool trace simulates with --validate on both chip families, its numerics
// checked against the double reference.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/accelsim_process.h"

namespace accelsim_test::pool_cli_test {
namespace {

TEST(PoolCli, BadPoolLinesExitTwoNamingFileAndLine) {
    const fs::path dir = scratch_dir();
    const fs::path trace = dir / "bad.trace";
    write_file(trace, "# accelsim-trace 1\nrelu r n=64\npool p n=1 h=4 w=4 c=4 mode=max r=5 s=5\n");
    Result r = run("--config configs/tpu_v4.json --trace '" + trace.string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, trace.string() + ":3: pool: the window's height (5 with dilation) is larger than the "
                                                 "padded input (4 + 2*0 = 4)"))
        << r.err;
    write_file(trace, "# accelsim-trace 1\npool p n=1 h=8 w=8 c=4 mode=avg r=2 s=2 stride_h=0 stride_w=2\n");
    r = run("--config configs/a100.json --trace '" + trace.string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, trace.string() + ":2: pool: stride_h=0 must be a positive integer")) << r.err;
}

// 2 x 14x14x64 bf16, 3x3/2 pad 1 -> 7x7: 2*7*7*64 = 6,272 outputs of 9 compares.
TEST(PoolCli, ValidatedPoolsOnBothChips) {
    const fs::path dir = scratch_dir();
    const fs::path trace = dir / "pools.trace";
    write_file(trace, "# accelsim-trace 1\n"
                      "pool mp n=2 h=14 w=14 c=64 mode=max r=3 s=3 stride=2 pad=1\n"
                      "pool gap n=2 h=7 w=7 c=64 mode=avg global=1\n");
    for (const char* chip : {"tpu_v4", "a100"}) {
        SCOPED_TRACE(chip);
        const fs::path json = dir / (std::string(chip) + ".json");
        const Result r = run(std::string("--config configs/") + chip + ".json --trace '" + trace.string() +
                             "' --validate -q --json '" + json.string() + "'");
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const nlohmann::json j = nlohmann::json::parse(slurp(json));
        ASSERT_EQ(j["ops"].size(), 2u);
        for (const auto& op : j["ops"]) {
            EXPECT_EQ(op["kind"], "pool");
            EXPECT_TRUE(op["numerics"]["passed"].get<bool>()) << op.dump();
        }
        EXPECT_EQ(j["ops"][0]["numerics"]["checked"], 2 * 7 * 7 * 64);
        EXPECT_EQ(j["ops"][0]["numerics"]["max_abs_err"], 0.0);  // max: exact
        EXPECT_EQ(j["ops"][0]["flops"], 2 * 7 * 7 * 64 * 9);
        EXPECT_EQ(j["ops"][0]["macs"], 0);
    }
}

}  // namespace
}  // namespace accelsim_test::pool_cli_test
