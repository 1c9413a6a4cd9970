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

TEST(KernelFaults, ALoadThroughANullPointerExitsTwoNamingTheOpKernelPcAndInstruction) {
    const fs::path dir = scratch_dir();
    // The argument is a real buffer, so the global memory is not empty: address 0 still faults.
    const std::string trace = kernel_trace(dir, "null.sasm",
                                           ".kernel null_load\n.param p\n.reg 2\n    mov r0, 0\n    ld.global r1, [r0]\n",
                                           "grid=1 block=32 args=buf:f32:64:zero");
    const Result r = run("--quiet --config configs/simt_1sm.json --trace '" + trace + "'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "accelsim: error: " + trace + ":2: kernel 'forever': " + (dir / "null.sasm").string() +
                         ":5: ld.global: lane 0 address 0 is a null pointer (global addresses below 256 are never "
                         "allocated) (kernel 'null_load', pc 1)\n");
}

TEST(KernelFaults, AnMmaWithSixteenActiveLanesExitsTwoWithAndWithoutValidate) {
    const fs::path dir = scratch_dir();
    const std::string trace = kernel_trace(dir, "mma16.sasm",
                                           ".kernel mma_half\n.reg 16\n    setp.lt.s32 p0, %laneid, 16\n    @!p0 exit\n"
                                           "    mma.m16n8k16.f16 r0, r4, r8, r0\n    exit\n",
                                           "grid=1 block=32");
    const std::string expected = "accelsim: error: " + trace + ":2: kernel 'forever': " + (dir / "mma16.sasm").string() +
                                 ":5: mma: needs all 32 lanes active (warp-synchronous), 16 are (mask 0x0000ffff) "
                                 "(kernel 'mma_half', pc 2)\n";
    for (const std::string validate : {"", " --validate"}) {
        const Result r = run("--quiet --config configs/simt_1sm.json --trace '" + trace + "'" + validate);
        EXPECT_EQ(r.exit_code, 2) << validate << r.err;
        EXPECT_EQ(r.err, expected) << validate;
    }
}
