// docs/hardware.md's chip table is what the shipped configs give (accelsim hardware-docs).
#include <gtest/gtest.h>

#include <string>

#include "tests/accelsim_process.h"

using namespace accelsim_test;

namespace {

TEST(HardwareDocs, TheDocsTableIsTheShippedConfigs) {
    const Result r = run("hardware-docs --check docs/hardware.md");
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(HardwareDocs, CheckFindsADriftedFigureAndUpdateRewritesOnlyTheTable) {
    const fs::path dir = scratch_dir();
    const std::string doc = slurp(fs::path(ACCELSIM_SOURCE_DIR) / "docs/hardware.md");
    // A config whose clock moved: the doc's a100 row (1410 MHz) is stale.
    std::string stale = doc;
    const std::string row = "| [a100](#a100) | simt | 1410 |";
    ASSERT_NE(stale.find(row), std::string::npos);
    stale.replace(stale.find(row), row.size(), "| [a100](#a100) | simt | 1400 |");
    write_file(dir / "hardware.md", stale);
    const Result check = run("hardware-docs --check '" + (dir / "hardware.md").string() + "'");
    EXPECT_EQ(check.exit_code, 1);
    EXPECT_TRUE(contains(check.err, "hardware-docs --update")) << check.err;
    const Result update = run("hardware-docs --update '" + (dir / "hardware.md").string() + "'");
    EXPECT_EQ(update.exit_code, 0) << update.err;
    EXPECT_EQ(slurp(dir / "hardware.md"), doc);  // the hand-written part is kept
    // --configs names the folder; one without configs is an input error naming it.
    const Result none =
        run("hardware-docs --configs '" + dir.string() + "' --check docs/hardware.md");
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_TRUE(contains(none.err, dir.string() + ": no chip configs")) << none.err;
}

}  // namespace
