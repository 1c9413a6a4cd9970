#pragma once
// Running the real accelsim executable from tests: capture its exit code, stdout and stderr, and
// give each test its own scratch folder. Shared by the CLI, occupancy and compare tests.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern char** environ;

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

// A run of the executable measured by the kernel: exit code, peak resident set (wait4's rusage,
// KiB on Linux) and wall time; stdout and stderr go to files in `dir`.
struct Measured {
    int exit_code = -1;
    long max_rss_kib = 0;
    double seconds = 0;
};

inline Measured run_measured(const std::vector<std::string>& args, const fs::path& dir) {
    std::vector<std::string> argv_text = {ACCELSIM_BINARY};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
    posix_spawn_file_actions_addopen(&files, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&files, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    Measured m;
    const auto start = std::chrono::steady_clock::now();
    const int spawned = posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    if (spawned != 0) return m;
    int status = 0;
    struct rusage usage {};
    if (wait4(pid, &status, 0, &usage) != pid) return m;
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    m.max_rss_kib = usage.ru_maxrss;
    return m;
}

}  // namespace accelsim_test
