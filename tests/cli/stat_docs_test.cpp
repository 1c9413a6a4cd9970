// docs/stats.md lists exactly the stats the accelsim binary defines.
#include <gtest/gtest.h>

#include <string>

#include "tests/accelsim_process.h"

using namespace accelsim_test;

namespace {

TEST(StatDocs, TheDocsTableIsTheBinarysStatCatalogue) {
    const Result r = run("stat-docs --check docs/stats.md");
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(StatDocs, CheckFindsAStaleTableAndUpdateRewritesOnlyTheTable) {
    const fs::path dir = scratch_dir();
    const std::string doc = slurp(fs::path(ACCELSIM_SOURCE_DIR) / "docs/stats.md");
    std::string stale = doc;
    const std::string row = "| `simt.ipc` |";
    ASSERT_NE(stale.find(row), std::string::npos);
    stale.replace(stale.find(row), row.size(), "| `simt.ipc_renamed` |");
    write_file(dir / "stats.md", stale);
    const Result check = run("stat-docs --check '" + (dir / "stats.md").string() + "'");
    EXPECT_EQ(check.exit_code, 1);
    EXPECT_TRUE(contains(check.err, "stat-docs --update")) << check.err;
    const Result update = run("stat-docs --update '" + (dir / "stats.md").string() + "'");
    EXPECT_EQ(update.exit_code, 0) << update.err;
    EXPECT_EQ(slurp(dir / "stats.md"), doc);
    // A file without the markers is an input error.
    write_file(dir / "plain.md", "no table\n");
    const Result plain = run("stat-docs --check '" + (dir / "plain.md").string() + "'");
    EXPECT_EQ(plain.exit_code, 2);
    EXPECT_TRUE(contains(plain.err, "plain.md: no generated table")) << plain.err;
}

}  // namespace
