// The CLI runs a GPU chip's SMs as SystemC processes (simt::SimtChipModule); --no-systemc runs the
// same launches with simt::launch's plain C++ loop, the scheduler the unit tests check against
// closed forms. Both must give the same report byte for byte: every op's cycles and every counter.
// One trace holds each kind of GPU work (library GEMM, softmax, layernorm, elementwise, hand-written
// kernels); the configs cover each way the SMs advance (GridLaunch::Schedule): a100 (memory
// windows of the L2 + HBM port, 108 SMs), simt_1sm (one SM), h100 with a narrow SM port (the GEMM
// takes a cluster tile of 2: cluster events between windows), ideal memory (SMs running ahead),
// no L2 (a blocking port shared in lock-step windows) and clusters on ideal memory (lock-step
// windows of the cluster latency).
#include <string>

#include <gtest/gtest.h>

#include "tests/accelsim_process.h"

namespace {

using accelsim_test::run;
using accelsim_test::scratch_dir;
using accelsim_test::slurp;

const std::string kTrace = "tests/cli/data/gpu_mixed.trace";

// Runs the trace on `config` (with `sets`) under both schedulers; returns the SystemC run's report.
std::string expect_same_report(const std::string& config, const std::string& sets) {
    const auto dir = scratch_dir("reports");
    const std::string systemc = (dir / "systemc.json").string(), plain = (dir / "plain.json").string();
    const std::string args = "--config configs/" + config + ".json --trace " + kTrace + " " + sets + " -q --json ";
    const auto a = run(args + systemc);
    const auto b = run(args + plain + " --no-systemc");
    EXPECT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(b.exit_code, 0) << b.err;
    const std::string report = slurp(systemc);
    EXPECT_GT(report.size(), 1000u);
    EXPECT_EQ(report, slurp(plain)) << "the SystemC and plain runs of " << config << " " << sets << " differ";
    return report;
}

TEST(SystemcPath, A100MemoryWindowsMatchThePlainScheduler) { expect_same_report("a100", ""); }

TEST(SystemcPath, OneSmMatchesThePlainSchedulerAndRepeatsItself) {
    const std::string first = expect_same_report("simt_1sm", "");
    // Determinism: a second SystemC run gives the same bytes.
    const auto dir = scratch_dir("again");
    const auto again = run("--config configs/simt_1sm.json --trace " + kTrace + " -q --json " + (dir / "r.json").string());
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(slurp(dir / "r.json"), first);
}

TEST(SystemcPath, ClusterTileBetweenMemoryWindowsMatchesThePlainScheduler) {
    expect_same_report("h100", "--set gpu.sms=2 --set interconnect.bytes_per_cycle_per_port=40");
}

TEST(SystemcPath, SmsRunningAheadOnIdealMemoryMatchThePlainScheduler) {
    expect_same_report("a100", "--set memory=ideal");
}

TEST(SystemcPath, LoopTripSamplingMatchesThePlainScheduler) {
    // The trip sampler acts between memory windows, which the SystemC module and the plain loop
    // both end the same way (measured 2026-11-28: 114 of 127 trips skipped, 154,519 cycles against
    // the full run's 154,642).
    const auto dir = scratch_dir("trips");
    const std::string args = "--config configs/a100.json --trace tests/cli/data/gemm_long_k.trace --set gpu.sms=8 "
                             "--set gpu.sampling=waves_and_trips -q --json ";
    const auto a = run(args + (dir / "systemc.json").string());
    const auto b = run(args + (dir / "plain.json").string() + " --no-systemc");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const std::string report = slurp(dir / "systemc.json");
    EXPECT_NE(report.find("\"skipped_trips\": 114"), std::string::npos) << "the trips were not sampled";
    EXPECT_EQ(report, slurp(dir / "plain.json"));
}

TEST(SystemcPath, LockStepWindowsOfABlockingPortMatchThePlainScheduler) {
    expect_same_report("a100", "--set l2.size_bytes=0 --set gpu.sms=8");
}

TEST(SystemcPath, ClusterWindowsOnIdealMemoryMatchThePlainScheduler) {
    expect_same_report("h100", "--set gpu.sms=4 --set interconnect.bytes_per_cycle_per_port=40 --set memory=ideal");
}

}  // namespace
