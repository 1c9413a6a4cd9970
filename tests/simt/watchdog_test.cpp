// The watchdog of one SmCore: a kernel past its cycle or warp-instruction limit stops with
// KernelTimeout naming the SM, the cycle reached and every warp still running with its PC.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "models/simt/simt_gpu.h"
#include "models/simt/occupancy.h"
#include "models/simt/sm_core.h"

using namespace accelsim::simt;

namespace {

// Odd warps exit at once; even warps loop forever on lines 6-7 (pc 3 add, pc 4 bra).
const char* kHalfSpin =
    ".kernel half_spin\n"        // 1
    ".reg 2\n"                   // 2
    "    and r1, %warpid, 1\n"   // 3  pc 0
    "    setp.ne.s32 p0, r1, 0\n"// 4  pc 1
    "    @p0 exit\n"             // 5  pc 2
    "top:\n"                     // 6
    "    add r0, r0, 1\n"        // 7  pc 3
    "    bra top\n";             // 8  pc 4

struct Stopped {
    std::string message;
    std::uint64_t now = 0, issued = 0;
};

// Runs one block of `threads` threads on SM `sm_index` of its own until the watchdog stops it.
Stopped run_until_stopped(const Kernel& kernel, std::uint32_t threads, int sm_index, SmParams params) {
    GlobalMemory memory;
    FixedLatencyMemory port(10);
    WarpExecutor executor(kernel, memory, Dim{1, threads}, {}, false);
    SmCore core(params, sm_index, executor, port);
    core.add_block(0);
    Stopped s;
    try {
        while (core.busy()) core.run_until_block_completes();
        ADD_FAILURE() << "the kernel finished";
    } catch (const KernelTimeout& e) {
        s.message = e.what();
    }
    s.now = core.now();
    s.issued = executor.counters().issued;
    return s;
}

}  // namespace

TEST(SmWatchdog, ACycleLimitStopsTheKernelNamingTheRunningWarpsAndTheirPcs) {
    const Kernel k = assemble(kHalfSpin, "half_spin.sasm");
    SmParams p;
    p.limits = *published_limits("sm_80");
    p.max_cycles = 5000;
    p.warp_scheduler = "lrr";  // every warp gets its turns (gto would starve some at pc 0)
    // 20 warps: 10 exit, 10 loop. Eight are named, the other two counted.
    const Stopped s = run_until_stopped(k, 20 * 32, 3, p);
    EXPECT_GT(s.now, 5000u);
    EXPECT_LE(s.now, 5000u + 8u);  // stopped at the first step past the limit (idle stretches are a few cycles)
    EXPECT_NE(s.message.find("half_spin.sasm: kernel 'half_spin' stopped by the watchdog at cycle " +
                             std::to_string(s.now) + " (limit 5000) after " + std::to_string(s.issued) +
                             " warp instructions (limit "),
              std::string::npos)
        << s.message;
    EXPECT_NE(s.message.find("SM 3 has 10 warps running: "), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("; and 2 more"), std::string::npos) << s.message;
    // Each named warp: an even one (the odd ones exited), its PC in the loop and that PC's line.
    // (Parsed with sscanf: std::regex trips GCC 12's -Wmaybe-uninitialized in the sanitizer build.)
    std::vector<int> warps;
    for (std::size_t at = s.message.find("block 0 warp "); at != std::string::npos;
         at = s.message.find("block 0 warp ", at + 1)) {
        int warp = -1, pc = -1, line = -1;
        char opcode[16] = {};
        const std::string named = s.message.substr(at, s.message.find(')', at) + 1 - at);
        ASSERT_EQ(std::sscanf(named.c_str(), "block 0 warp %d at pc %d (half_spin.sasm:%d: %15[a-z])", &warp, &pc, &line,
                              opcode),
                  4)
            << named;
        warps.push_back(warp);
        EXPECT_TRUE(pc == 3 || pc == 4) << named;
        EXPECT_EQ(line, pc + 4) << named;
        EXPECT_EQ(std::string(opcode), pc == 3 ? "add" : "bra") << named;
    }
    EXPECT_EQ(warps, (std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14}));
}

TEST(SmWatchdog, AnInstructionLimitStopsAWideGridLongBeforeTheCycleLimit) {
    const Kernel k = assemble(kHalfSpin, "half_spin.sasm");
    SmParams p;
    p.limits = *published_limits("sm_80");
    p.max_issued = 1000;
    const Stopped s = run_until_stopped(k, 4 * 32, 0, p);
    EXPECT_GT(s.issued, 1000u);
    EXPECT_LE(s.issued, 1000u + 4u);  // at most one issue per sub-partition in the last step
    EXPECT_NE(s.message.find("at cycle " + std::to_string(s.now) + " (limit 1000000000) after " +
                             std::to_string(s.issued) + " warp instructions (limit 1000): endless loop? SM 0 has 2 warps running: block 0 warp 0 at pc "),
              std::string::npos)
        << s.message;
}

TEST(SmWatchdog, TheDefaultLimitsAreTheDocumentedOnes) {
    const SmParams p;
    EXPECT_EQ(p.max_cycles, 1'000'000'000u);
    EXPECT_EQ(p.max_issued, 2'000'000'000u);
}

TEST(SmWatchdog, LaunchReportsTheTimeoutAsAKernelTimeout) {
    // Through launch(), several SMs: the first SM past the limit stops the launch.
    const Kernel k = assemble(kHalfSpin, "half_spin.sasm");
    SimtParams p;
    p.sms = 2;
    p.sm.limits = *published_limits("sm_80");
    p.sm.max_cycles = 2000;
    GlobalMemory memory;
    EXPECT_THROW(launch(k, {4, 64}, {}, memory, p), KernelTimeout);
}
