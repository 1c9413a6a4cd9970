// Report outputs are written whole or not at all, never over an input, and every write is
// checked; every command-line word belongs to an option.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/input_error.h"
#include "sim/output/output_file.h"
#include "tests/accelsim_process.h"

namespace fs = std::filesystem;
using namespace accelsim_test;

namespace {

const std::string kTinyRun = "--quiet --config configs/tpu_v4.json --trace traces/tiny_mixed.trace";

// Files in `dir` other than `keep`: a leftover temporary file would show here.
std::size_t other_files(const fs::path& dir, const std::string& keep) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename() != keep) ++n;
    return n;
}

}  // namespace

TEST(OutputFile, UncommittedLeavesThePreviousFileAndNoTemporary) {
    const fs::path dir = scratch_dir();
    write_file(dir / "r.json", "previous");
    {
        accelsim::OutputFile f("--json", (dir / "r.json").string());
        f.stream() << "half a report";
    }  // a run that throws before commit() ends here
    EXPECT_EQ(slurp(dir / "r.json"), "previous");
    EXPECT_EQ(other_files(dir, "r.json"), 0u);
}

TEST(OutputFile, CommitReplacesTheFileWhole) {
    const fs::path dir = scratch_dir();
    write_file(dir / "r.json", "previous and longer than the new text");
    accelsim::OutputFile f("--json", (dir / "r.json").string());
    f.stream() << "new";
    f.commit();
    EXPECT_EQ(slurp(dir / "r.json"), "new");
    EXPECT_EQ(other_files(dir, "r.json"), 0u);
}

TEST(OutputFile, WriteErrorsAndUnwritablePathsAreInputErrorsNamingTheFile) {
    ASSERT_TRUE(fs::exists("/dev/full")) << "the test needs /dev/full (Linux)";
    accelsim::OutputFile full("--json", "/dev/full");
    full.stream() << std::string(1 << 16, 'x');  // more than a stream buffer, so a write reaches the device
    try {
        full.commit();
        FAIL() << "a write to /dev/full succeeded";
    } catch (const accelsim::InputError& e) {
        EXPECT_EQ(std::string(e.what()), "--json /dev/full: write failed (disk full?)");
    }
    const fs::path dir = scratch_dir();
    EXPECT_THROW(accelsim::OutputFile("--csv", dir.string()), accelsim::InputError);  // a folder
    EXPECT_THROW(accelsim::OutputFile("--csv", (dir / "no/such/folder/r.csv").string()), accelsim::InputError);
}

TEST(OutputFile, AnOutputEqualToAnInputOrToAnotherOutputIsRefused) {
    const fs::path dir = scratch_dir();
    write_file(dir / "t.trace", "x");
    const std::string trace = (dir / "t.trace").string();
    // The same file under another spelling is still the same file.
    const std::string other_spelling = (dir / "." / "t.trace").string();
    EXPECT_THROW(accelsim::check_outputs_are_distinct({{"--json", other_spelling}}, {{"--trace", trace}}),
                 accelsim::InputError);
    EXPECT_THROW(accelsim::check_outputs_are_distinct({{"--json", (dir / "a").string()}, {"--csv", (dir / "a").string()}}, {}),
                 accelsim::InputError);
    EXPECT_NO_THROW(accelsim::check_outputs_are_distinct(
        {{"--json", (dir / "a").string()}, {"--csv", (dir / "b").string()}, {"--vcd", ""}}, {{"--trace", trace}}));
    // Devices may take several outputs.
    EXPECT_NO_THROW(accelsim::check_outputs_are_distinct({{"--json", "/dev/null"}, {"--csv", "/dev/null"}}, {}));
}

TEST(OutputSafety, AFailedRunKeepsThePreviousReport) {
    const fs::path dir = scratch_dir();
    // A kernel whose load is misaligned fails inside the simulation, after the outputs were opened.
    write_file(dir / "bad.sasm", ".kernel bad\n.param p\n.reg 2\n    add r0, p, 2\n    ld.global r1, [r0]\n    exit\n");
    write_file(dir / "bad.trace", "# accelsim-trace 1\nkernel k file=bad.sasm grid=1 block=32 args=buf:f32:64:zero\n");
    write_file(dir / "r.json", "previous");
    const Result r = run("--quiet --config configs/simt_1sm.json --trace '" + (dir / "bad.trace").string() +
                         "' --json '" + (dir / "r.json").string() + "'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "not 4-byte aligned")) << r.err;
    EXPECT_EQ(slurp(dir / "r.json"), "previous");
    std::size_t temporaries = 0;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp") != std::string::npos) ++temporaries;
    EXPECT_EQ(temporaries, 0u);
}

TEST(OutputSafety, ReportsOverInputsOrOverEachOtherAreRefusedBeforeRunning) {
    const fs::path dir = scratch_dir();
    fs::copy_file(fs::path(ACCELSIM_SOURCE_DIR) / "traces/tiny_mixed.trace", dir / "t.trace");
    const std::string before = slurp(dir / "t.trace");
    Result r = run("--quiet --config configs/tpu_v4.json --trace '" + (dir / "t.trace").string() + "' --json '" +
                   (dir / "t.trace").string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "is the --trace input file; refusing to overwrite it")) << r.err;
    EXPECT_EQ(slurp(dir / "t.trace"), before);
    r = run(kTinyRun + " --json '" + (dir / "same").string() + "' --csv '" + (dir / "same").string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--csv " + (dir / "same").string() + ": is also the --json output")) << r.err;
    EXPECT_FALSE(fs::exists(dir / "same"));
    r = run("compare --quiet --trace traces/tiny_mixed.trace --config configs/tpu_v4.json --json configs/tpu_v4.json");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "is the --config input file")) << r.err;
}

TEST(OutputSafety, WriteErrorsExitTwoNamingTheFile) {
    for (const std::string option : {"--json", "--csv"}) {
        const Result r = run(kTinyRun + " " + option + " /dev/full");
        EXPECT_EQ(r.exit_code, 2) << option;
        EXPECT_TRUE(contains(r.err, option + " /dev/full: write failed")) << r.err;
    }
    Result r = run("membench --config configs/tpu_v4.json --pattern stream --bytes 1M --json /dev/full");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--json /dev/full: write failed")) << r.err;
    r = run("trace bert --size base --seq 128 --layers 1 -o /dev/full");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "/dev/full: write failed")) << r.err;
    r = run("compare --quiet --trace traces/tiny_mixed.trace --config configs/tpu_v4.json --csv /dev/full");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--csv /dev/full: write failed")) << r.err;
}

TEST(CommandLine, EveryWordBelongsToAnOption) {
    // "--set a=1 b=2": the second assignment used to be dropped without a word.
    Result r = run(kTinyRun + " --set mxu.rows=8 mxu.cols=8");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "unexpected argument 'mxu.cols=8': each --set takes one key.path=value")) << r.err;
    r = run(kTinyRun + " stray");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "unexpected argument 'stray'")) << r.err;
    r = run("compar --trace traces/tiny_mixed.trace");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "unknown subcommand 'compar' (did you mean 'compare'?)")) << r.err;
    r = run("compare --quiet --trace traces/tiny_mixed.trace --config configs/tpu_v4.json configs/a100.json");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "unexpected argument 'configs/a100.json'")) << r.err;
}
