// Faults the ISA documents (docs/simt-isa.md): a global access through a null pointer, and an mma
// the whole warp does not execute. Each names the kernel file and line, the instruction, the
// kernel and the PC, in timing-only runs (payload skipped) as in runs with data.
#include <gtest/gtest.h>

#include <string>

#include "models/simt/occupancy.h"
#include "models/simt/simt_gpu.h"

using namespace accelsim::simt;

namespace {

SimtParams one_sm() {
    SimtParams p;
    p.sm.limits = *published_limits("sm_80");
    return p;
}

// Runs the kernel and returns its fault's message ("" if it ran to the end).
std::string fault_of(const Kernel& k, Dim dims, const std::vector<std::uint32_t>& args, GlobalMemory& memory,
                     bool timing_only) {
    LaunchOptions o;
    o.skip_fp_payload = timing_only;
    try {
        launch(k, dims, args, memory, one_sm(), nullptr, o);
    } catch (const SimtError& e) {
        return e.what();
    }
    return "";
}

// Lane l stores to p + 4 l; p is the kernel's argument.
const char* kStoreEachLane =
    ".kernel store_each\n"      // 1
    ".param p\n"                // 2
    ".reg 3\n"                  // 3
    "    shl r0, %laneid, 2\n"  // 4  pc 0
    "    add r0, r0, p\n"       // 5  pc 1
    "    st.global [r0], r1\n"  // 6  pc 2
    "    ld.global r2, [r0]\n"  // 7  pc 3
    "    exit\n";               // 8

}  // namespace

TEST(SimtFaults, TheFirstAllocationLiesPastTheNullBytes) {
    GlobalMemory memory;
    EXPECT_EQ(GlobalMemory::kNullBytes, 256u);
    EXPECT_EQ(memory.allocate(100), 256u);
    EXPECT_EQ(memory.allocate(100, 16), 368u);  // 356 rounded up to 16
    GlobalMemory coarse;
    EXPECT_EQ(coarse.allocate(8, 1024), 1024u);  // as before: the first aligned address past 0
}

TEST(SimtFaults, AGlobalAccessThroughANullPointerFaults) {
    const Kernel k = assemble(kStoreEachLane, "store_each.sasm");
    for (const bool timing_only : {false, true}) {
        GlobalMemory memory;
        const std::uint32_t buffer = memory.allocate(128);
        // A valid pointer runs to the end; the same kernel given 0 (null) faults on its store.
        EXPECT_EQ(fault_of(k, {1, 32}, {buffer}, memory, timing_only), "");
        EXPECT_EQ(fault_of(k, {1, 32}, {0}, memory, timing_only),
                  "store_each.sasm:6: st.global: lane 0 address 0 is a null pointer (global addresses below 256 "
                  "are never allocated) (kernel 'store_each', pc 2)");
        // An offset from null (lane 0 at 128) faults too; the first lane in the null bytes is named.
        EXPECT_EQ(fault_of(k, {1, 32}, {128}, memory, timing_only),
                  "store_each.sasm:6: st.global: lane 0 address 128 is a null pointer (global addresses below 256 "
                  "are never allocated) (kernel 'store_each', pc 2)");
    }
    // A load faults the same way.
    const Kernel load = assemble(".kernel load_null\n.reg 2\n    mov r0, 0\n    ld.global r1, [r0]\n", "load_null.sasm");
    GlobalMemory memory;
    memory.allocate(128);
    EXPECT_EQ(fault_of(load, {1, 32}, {}, memory, false),
              "load_null.sasm:4: ld.global: lane 0 address 0 is a null pointer (global addresses below 256 are never "
              "allocated) (kernel 'load_null', pc 1)");
}

TEST(SimtFaults, SharedMemoryAddressZeroIsValid) {
    const Kernel k = assemble(".kernel shared0\n.reg 2\n.shared 128\n    mov r0, 0\n    st.shared [r0], r1\n"
                              "    ld.shared r1, [r0]\n",
                              "shared0.sasm");
    GlobalMemory memory;
    EXPECT_EQ(fault_of(k, {1, 32}, {}, memory, false), "");
}

TEST(SimtFaults, AnMmaWithoutAllThirtyTwoLanesFaultsInTimingOnlyRunsToo) {
    // Lanes 16-31 exit, lanes 0-15 reach the mma.
    const Kernel diverged = assemble(".kernel mma_half\n.reg 16\n    setp.lt.s32 p0, %laneid, 16\n    @!p0 exit\n"
                                     "    mma.m16n8k16.f16 r0, r4, r8, r0\n",
                                     "mma_half.sasm");
    ASSERT_TRUE(diverged.fp_payload_skippable);  // so the timing-only run really skips the payload
    // A block of 16 threads: its one warp has 16 live lanes.
    const Kernel whole = assemble(".kernel mma_all\n.reg 16\n    mma.m16n8k16.f16 r0, r4, r8, r0\n", "mma_all.sasm");
    for (const bool timing_only : {false, true}) {
        GlobalMemory memory;
        EXPECT_EQ(fault_of(diverged, {1, 32}, {}, memory, timing_only),
                  "mma_half.sasm:5: mma: needs all 32 lanes active (warp-synchronous), 16 are (mask 0x0000ffff) "
                  "(kernel 'mma_half', pc 2)");
        EXPECT_EQ(fault_of(whole, {1, 16}, {}, memory, timing_only),
                  "mma_all.sasm:3: mma: needs all 32 lanes active (warp-synchronous), 16 are (mask 0x0000ffff) "
                  "(kernel 'mma_all', pc 0)");
        EXPECT_EQ(fault_of(whole, {1, 32}, {}, memory, timing_only), "");  // the full warp runs it
    }
}
