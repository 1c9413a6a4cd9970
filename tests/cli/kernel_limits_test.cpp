// Kernels that would not end, or that break a rule of the ISA, through the real executable: the
// watchdog stops an endless loop (exit 1) naming the kernel, the cycle and the warps' PCs; a load
// from address 0 and an mma with a partial mask fault (exit 2) naming the kernel, PC and instruction.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tests/accelsim_process.h"

namespace fs = std::filesystem;
using namespace accelsim_test;

namespace {

// Two blocks of two warps, every warp looping on lines 4-5 forever.
const char* kSpin =
    ".kernel spin\n"
    ".reg 2\n"
    "top:\n"
    "    add r0, r0, 1\n"
    "    bra top\n";

struct Timed {
    Result result;
    double seconds = 0;
};

Timed run_timed(const std::string& args) {
    const auto start = std::chrono::steady_clock::now();
    Timed t;
    t.result = run(args);
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return t;
}

std::string kernel_trace(const fs::path& dir, const std::string& sasm_name, const std::string& sasm,
                         const std::string& launch) {
    write_file(dir / sasm_name, sasm);
    write_file(dir / "k.trace", "# accelsim-trace 1\nkernel forever file=" + sasm_name + " " + launch + "\n");
    return (dir / "k.trace").string();
}

}  // namespace

TEST(KernelWatchdog, AnEndlessKernelStopsAtTheCycleLimitWithExitOneNamingItsWarps) {
    const fs::path dir = scratch_dir();
    const std::string trace = kernel_trace(dir, "spin.sasm", kSpin, "grid=2 block=64");
    const Timed t = run_timed("--quiet --config configs/simt_1sm.json --trace '" + trace +
                              "' --set gpu.max_kernel_cycles=200000 --json '" + (dir / "r.json").string() + "'");
    const Result& r = t.result;
    EXPECT_EQ(r.exit_code, 1) << r.err;
    // The op (file:line, name), the kernel, the cycle reached, the SM and its running warps' PCs.
    const std::string sasm = (dir / "spin.sasm").string();
    EXPECT_TRUE(contains(r.err, "accelsim: simulation failed: " + trace + ":2: kernel 'forever': " + sasm +
                                    ": kernel 'spin' stopped by the watchdog at cycle 20000"))  // 200001..200009
        << r.err;
    EXPECT_TRUE(contains(r.err, " (limit 200000) after ")) << r.err;
    // simt_1sm has one SM with room for both blocks: all four warps are resident and looping.
    EXPECT_TRUE(contains(r.err, "SM 0 has 4 warps running: block 0 warp 0 at pc ")) << r.err;
    EXPECT_TRUE(contains(r.err, "block 1 warp 1 at pc ")) << r.err;
    EXPECT_TRUE(contains(r.err, "(" + sasm + ":5: bra)") || contains(r.err, "(" + sasm + ":4: add)")) << r.err;
    EXPECT_TRUE(contains(r.err, "raise the limits with --set gpu.max_kernel_cycles=N")) << r.err;
    EXPECT_FALSE(fs::exists(dir / "r.json"));  // a failed run writes no report
    EXPECT_LT(t.seconds, 30.0);                 // about 0.1 s; a hang guard
}

TEST(KernelWatchdog, AWholeGridLoopingStopsAtTheInstructionLimit) {
    const fs::path dir = scratch_dir();
    const std::string trace = kernel_trace(dir, "spin.sasm", kSpin, "grid=64 block=1024");
    const Timed t = run_timed("--quiet --config configs/simt_1sm.json --trace '" + trace +
                              "' --set gpu.max_kernel_instructions=1000000");
    const Result& r = t.result;
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "warp instructions (limit 1000000): endless loop? SM 0 has 64 warps running: ")) << r.err;
    EXPECT_TRUE(contains(r.err, "; and 56 more")) << r.err;  // eight named
    EXPECT_LT(t.seconds, 30.0);
}

TEST(KernelWatchdog, TheLimitsAreConfigKeysWithARangeAndInTheHelp) {
    const Result zero = run("--quiet --config configs/simt_1sm.json --trace traces/simt_teaching.trace "
                            "--set gpu.max_kernel_cycles=0");
    EXPECT_EQ(zero.exit_code, 2);
    EXPECT_TRUE(contains(zero.err, "gpu.max_kernel_cycles")) << zero.err;
    const Result help = run("--help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_TRUE(contains(help.out, "gpu.max_kernel_cycles")) << help.out;
    EXPECT_TRUE(contains(help.out, "gpu.max_kernel_instructions")) << help.out;
}
