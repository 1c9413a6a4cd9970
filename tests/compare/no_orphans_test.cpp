// A compare driver killed by SIGKILL leaves no child simulating on as an orphan.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The processes whose parent is `parent` and that are not zombies.
std::vector<pid_t> live_children(pid_t parent) {
    std::vector<pid_t> out;
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(e.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        // pid (comm) state ppid ...: comm may hold spaces, so parse after the last ')'.
        const auto close = line.rfind(')');
        if (close == std::string::npos) continue;
        char state = 0;
        long ppid = 0;
        if (std::sscanf(line.c_str() + close + 1, " %c %ld", &state, &ppid) != 2) continue;
        if (ppid == parent && state != 'Z') out.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return out;
}

bool alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const auto close = line.rfind(')');
    return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

}  // namespace

TEST(CompareProcesses, KillingTheDriverKillsItsChildren) {
    // BERT-base on a100 simulates for about half a minute: long enough to kill the driver mid-run.
    const pid_t driver = ::fork();
    ASSERT_GE(driver, 0);
    if (driver == 0) {
        ::chdir(ACCELSIM_SOURCE_DIR);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        ::execl(ACCELSIM_BINARY, ACCELSIM_BINARY, "compare", "--quiet", "--jobs", "2", "--trace",
                "traces/bert_base.trace", "--config", "configs/a100.json", "--config", "configs/h100.json",
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    std::vector<pid_t> children;
    for (int i = 0; i < 200 && children.size() < 2; ++i) {  // up to 20 s for both designs to start
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        children = live_children(driver);
    }
    ASSERT_EQ(children.size(), 2u) << "the compare driver did not start its two design processes";
    ASSERT_EQ(::kill(driver, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(driver, &status, 0), driver);
    for (pid_t child : children) {
        bool gone = false;
        for (int i = 0; i < 50 && !gone; ++i) {  // the kernel delivers the parent-death signal at once
            gone = !alive(child);
            if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        EXPECT_TRUE(gone) << "design process " << child << " outlived its killed driver";
        if (!gone) ::kill(child, SIGKILL);
    }
}
