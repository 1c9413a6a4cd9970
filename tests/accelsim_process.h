#pragma once
// Running the real accelsim executable from tests: capture its exit code, stdout and stderr, and
// give each test its own scratch folder. Shared by the CLI, occupancy and compare tests.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace accelsim_test {

namespace fs = std::filesystem;

struct Result {
    int exit_code = -1;
    std::string out, err;
};

inline std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

inline void write_file(const fs::path& p, const std::string& text) {
    std::ofstream f(p, std::ios::binary);
    f << text;
}

inline bool contains(const std::string& hay, const std::string& needle) {
    return hay.find(needle) != std::string::npos;
}

// A fresh, empty folder for the current test; `purpose` keeps separate uses apart.
inline fs::path scratch_dir(const std::string& purpose = "files") {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const fs::path dir = fs::path(::testing::TempDir()) / (std::string("accelsim_") + info->test_suite_name() +
                                                           "_" + info->name() + "_" + purpose);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// Runs a shell command, capturing its exit code, stdout and stderr.
inline Result run_shell(const std::string& command, const std::string& purpose = "io") {
    const fs::path dir = scratch_dir(purpose);
    const std::string cmd = command + " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
    const int status = std::system(cmd.c_str());
    Result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir / "out");
    r.err = slurp(dir / "err");
    return r;
}

// Runs accelsim with `args` (shell words) from the source tree.
inline Result run(const std::string& args) {
    return run_shell(std::string("cd '") + ACCELSIM_SOURCE_DIR + "' && '" + ACCELSIM_BINARY + "' " + args);
}

}  // namespace accelsim_test
