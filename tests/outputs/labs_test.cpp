// docs/labs/: every command of every lab runs, as a student would type it at the top of the
// repository, and shows the figures the lab says it shows. A lab's commands are its ```sh blocks
// (run in order, one shell script per block, in a scratch folder that sees the repository's
// configs/, traces/, models/ and docs/ and build/accelsim); the ```text block right after a
// command block holds lines its output (stdout and stderr, as on a terminal) must contain.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/accelsim_process.h"

using namespace accelsim_test;

namespace {

struct LabStep {
    int line = 0;              // of the ```sh fence in the lab
    std::string commands;      // a shell script
    std::vector<std::string> expected;
};

std::string rtrim(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
    return s;
}

std::vector<LabStep> lab_steps(const std::string& markdown) {
    std::vector<std::string> lines;
    std::istringstream in(markdown);
    for (std::string l; std::getline(in, l);) lines.push_back(rtrim(l));
    std::vector<LabStep> steps;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i] != "```sh") continue;
        LabStep step;
        step.line = static_cast<int>(i + 1);
        for (++i; i < lines.size() && lines[i] != "```"; ++i) step.commands += lines[i] + "\n";
        std::size_t j = i + 1;
        while (j < lines.size() && lines[j].empty()) ++j;
        if (j < lines.size() && lines[j] == "```text") {
            for (++j; j < lines.size() && lines[j] != "```"; ++j)
                if (!lines[j].empty()) step.expected.push_back(lines[j]);
            i = j;
        }
        steps.push_back(step);
    }
    return steps;
}

class LabCommands : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(LabCommands, RunAndShowTheFigures) {
    const std::string lab = std::string(ACCELSIM_SOURCE_DIR) + "/docs/labs/" + GetParam() + ".md";
    const std::vector<LabStep> steps = lab_steps(slurp(lab));
    ASSERT_GE(steps.size(), 2u) << lab;
    std::size_t checked = 0;
    // The student's view of the repository: the sources, and build/accelsim.
    const fs::path root = scratch_dir("repo");
    for (const char* folder : {"configs", "traces", "models", "docs"})
        fs::create_directory_symlink(fs::path(ACCELSIM_SOURCE_DIR) / folder, root / folder);
    fs::create_directories(root / "build");
    fs::create_symlink(ACCELSIM_BINARY, root / "build" / "accelsim");
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const LabStep& step = steps[s];
        const fs::path script = root / ("step" + std::to_string(s) + ".sh");
        write_file(script, step.commands);
        const Result r = run_shell("cd '" + root.string() + "' && sh -e '" + script.string() + "' 2>&1", "step" + std::to_string(s));
        ASSERT_EQ(r.exit_code, 0) << lab << ":" << step.line << ": the commands failed:\n" << step.commands << r.out;
        for (const std::string& want : step.expected) {
            EXPECT_TRUE(contains(r.out, want)) << lab << ":" << step.line << ": the output lacks\n  " << want
                                               << "\noutput:\n" << r.out;
            ++checked;
        }
    }
    EXPECT_GE(checked, 5u) << lab << " shows too few figures";
}

// Lab 4 runs BERT on a GPU config: the slow tier (tests/CMakeLists.txt).
INSTANTIATE_TEST_SUITE_P(EveryLab, LabCommands,
                         ::testing::Values("lab1_systolic", "lab2_divergence", "lab3_roofline", "lab4_tpu_vs_gpu"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });
