// The fork-and-pipe protocol of run_isolated: what the child produced or how it failed comes back
// to the parent intact, and the parent survives a child that crashes.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/compare/isolated_run.h"
#include "sim/input_error.h"

namespace accelsim::isolated_run_test {
namespace {

using Status = IsolatedRunResult::Status;

TEST(IsolatedRun, ReturnsTheChildsJsonEvenWhenLargerThanAPipeBuffer) {
    // 100,000 numbers is ~600 KB of JSON, far above the 64 KiB pipe buffer: the parent must read
    // while the child writes.
    const IsolatedRunResult r = run_isolated([] {
        nlohmann::json j = nlohmann::json::array();
        for (int i = 0; i < 100000; ++i) j.push_back(i * 7);
        return nlohmann::json{{"values", j}};
    });
    ASSERT_EQ(r.status, Status::ok) << r.message;
    ASSERT_EQ(r.report["values"].size(), 100000u);
    EXPECT_EQ(r.report["values"][99999], 699993);
}

TEST(IsolatedRun, InputErrorComesBackAsItsMessage) {
    const IsolatedRunResult r = run_isolated([]() -> nlohmann::json { throw InputError("t.trace:3: bad op"); });
    EXPECT_EQ(r.status, Status::input_error);
    EXPECT_EQ(r.message, "t.trace:3: bad op");
}

TEST(IsolatedRun, OtherExceptionsAreFailures) {
    const IsolatedRunResult r = run_isolated([]() -> nlohmann::json { throw std::runtime_error("below bound"); });
    EXPECT_EQ(r.status, Status::failed);
    EXPECT_EQ(r.message, "simulation failed: below bound");
}

TEST(IsolatedRun, ACrashIsReportedWithItsSignal) {
    const IsolatedRunResult r = run_isolated([]() -> nlohmann::json {
        const rlimit no_core{0, 0};  // no core file left behind
        setrlimit(RLIMIT_CORE, &no_core);
        std::signal(SIGABRT, SIG_DFL);
        std::abort();
    });
    EXPECT_EQ(r.status, Status::failed);
    EXPECT_NE(r.message.find("crashed (signal " + std::to_string(SIGABRT)), std::string::npos) << r.message;
}

TEST(IsolatedRun, AnExitWithoutAResultIsAFailure) {
    const IsolatedRunResult r = run_isolated([]() -> nlohmann::json { std::_Exit(3); });
    EXPECT_EQ(r.status, Status::failed);
    EXPECT_EQ(r.message, "simulation process exited with code 3 and no report");
}

TEST(IsolatedRunAll, ResultsKeepTheOrderOfTheWorkNotOfCompletion) {
    // With 3 at once, the first (slowest) child finishes last; its result is still first.
    std::vector<std::function<nlohmann::json()>> works;
    for (int i = 0; i < 3; ++i)
        works.push_back([i] {
            ::usleep(static_cast<useconds_t>((3 - i) * 50000));
            return nlohmann::json{{"index", i}};
        });
    const auto results = run_isolated_all(works, 3, true);
    ASSERT_EQ(results.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(results[static_cast<std::size_t>(i)].status, Status::ok);
        EXPECT_EQ(results[static_cast<std::size_t>(i)].report["index"], i);
    }
}

TEST(IsolatedRunAll, NothingStartsAfterAFailureWhenAskedToStop) {
    std::vector<std::function<nlohmann::json()>> works = {
        [] { return nlohmann::json{{"ok", true}}; },
        []() -> nlohmann::json { throw InputError("cfg.json: bad key"); },
        [] { return nlohmann::json{{"ok", true}}; },
    };
    auto results = run_isolated_all(works, 1, true);
    EXPECT_EQ(results[0].status, Status::ok);
    EXPECT_EQ(results[1].status, Status::input_error);
    EXPECT_EQ(results[1].message, "cfg.json: bad key");
    EXPECT_EQ(results[2].status, Status::failed);
    EXPECT_EQ(results[2].message, "not run: an earlier design failed");
    // Without stopping, the third runs anyway.
    results = run_isolated_all(works, 1, false);
    EXPECT_EQ(results[2].status, Status::ok);
}

}  // namespace
}  // namespace accelsim::isolated_run_test
