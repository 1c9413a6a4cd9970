// The int8 tensor-core MMA, mma.m16n8k32.s8 (PTX's mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32):
// its fragment layout (PTX ISA 9.7.14.5.10, "Matrix Fragments for mma.m16n8k32") against Eigen's
// integer product, exact; int32 wrap-around; and its issue rate on the tensor pipe, worked by hand
// from the a100 config's int8 rate.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

#include <Eigen/Core>

#include "models/simt/simt_gpu.h"
#include "models/simt/sm_spec.h"

namespace accelsim::simt {
namespace {

// D = A(16x32 int8, row-major) * B(32x8 int8, stored column-major: n rows of 32 k) + C(16x8 int32).
// Each lane loads its fragments straight from the PTX layout: A register i holds row g + 8 (i & 1),
// bytes 4t + 16 (i >> 1) ..+3; B register i holds column g, k = 4t + 16 i ..+3; C register i is
// (g + 8 (i >> 1), 2t + (i & 1)).
const char* const kMmaS8 = R"(
    .param A, B, C, D
    .reg 20
    mov r0, %laneid
    shr r1, r0, 2             // g
    and r2, r0, 3             // t
    shl r3, r1, 5             // g * 32 bytes (one A row, one B column)
    shl r4, r2, 2             // t * 4 bytes (4 int8)
    add r5, r3, r4
    add r10, r5, B
    add r5, r5, A
    ld.global r6, [r5]        // a0..a3    (g, 4t..)
    ld.global r7, [r5+256]    // a4..a7    (g+8, 4t..)
    ld.global r8, [r5+16]     // a8..a11   (g, 4t+16..)
    ld.global r9, [r5+272]    // a12..a15  (g+8, 4t+16..)
    ld.global r11, [r10]      // b0..b3 (k=4t.., n=g)
    ld.global r12, [r10+16]   // b4..b7 (k=4t+16.., n=g)
    shl r13, r2, 3            // t * 8 bytes (2 int32)
    add r13, r13, r3          // + g * 32 bytes (one row of 8 int32)
    add r14, r13, C
    ld.global r16, [r14]
    ld.global r17, [r14+4]
    ld.global r18, [r14+256]
    ld.global r19, [r14+260]
    MMA r16, r6, r11, r16
    add r15, r13, D
    st.global [r15], r16
    st.global [r15+4], r17
    st.global [r15+256], r18
    st.global [r15+260], r19
    exit
)";

std::string mma_s8_source(const std::string& mnemonic) {
    std::string s = kMmaS8;
    s.replace(s.find("MMA"), 3, mnemonic);
    return s;
}

using IntA = Eigen::Matrix<std::int32_t, 16, 32, Eigen::RowMajor>;
using IntB = Eigen::Matrix<std::int32_t, 32, 8, Eigen::RowMajor>;
using IntC = Eigen::Matrix<std::int32_t, 16, 8, Eigen::RowMajor>;

// Runs the kernel on A, B, C and returns D as the mma left it.
IntC run_mma(const Kernel& k, const IntA& a, const IntB& b, const IntC& c) {
    std::vector<std::int8_t> a8(16 * 32), bt8(8 * 32);
    for (int i = 0; i < 16; ++i)
        for (int kk = 0; kk < 32; ++kk) a8[static_cast<std::size_t>(i * 32 + kk)] = static_cast<std::int8_t>(a(i, kk));
    for (int kk = 0; kk < 32; ++kk)
        for (int n = 0; n < 8; ++n) bt8[static_cast<std::size_t>(n * 32 + kk)] = static_cast<std::int8_t>(b(kk, n));
    GlobalMemory mem;
    const std::uint32_t A = mem.allocate(512), B = mem.allocate(256), C = mem.allocate(512), D = mem.allocate(512);
    mem.write(A, a8.data(), a8.size());
    mem.write(B, bt8.data(), bt8.size());
    mem.write(C, c.data(), 512);
    launch(k, {1, 32}, {A, B, C, D}, mem, SimtParams{});
    IntC d;
    mem.read(D, d.data(), 512);
    return d;
}

TEST(MmaS8, FragmentLayoutMatchesEigenExactly) {
    std::mt19937 rng(13);
    std::uniform_int_distribution<int> int8(-128, 127), int32(-1000000, 1000000);
    IntA a;
    IntB b;
    IntC c;
    for (int i = 0; i < a.size(); ++i) a.data()[i] = int8(rng);
    for (int i = 0; i < b.size(); ++i) b.data()[i] = int8(rng);
    for (int i = 0; i < c.size(); ++i) c.data()[i] = int32(rng);
    // The extremes too: -128 * -128 summed over k is the largest product sum of a row.
    a.row(5).setConstant(-128);
    b.col(3).setConstant(-128);
    const IntC expected = a * b + c;
    EXPECT_EQ(expected(5, 3), c(5, 3) + 32 * 16384);
    // The short form and PTX's full spelling assemble to the same instruction.
    for (const char* mnemonic : {"mma.m16n8k32.s8", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"}) {
        const IntC d = run_mma(assemble(mma_s8_source(mnemonic), "mma_s8.sasm"), a, b, c);
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 8; ++j) EXPECT_EQ(d(i, j), expected(i, j)) << mnemonic << " " << i << "," << j;
    }
}

TEST(MmaS8, AccumulatorsWrapAroundLikeInt32) {
    // Without .satfinite PTX's integer mma wraps: INT32_MAX + 32 x 127 x 127 = 2,147,999,775, which
    // is 2^32 too large for int32: -2,146,967,521.
    const IntA a = IntA::Constant(127);
    const IntB b = IntB::Constant(127);
    const IntC c = IntC::Constant(std::numeric_limits<std::int32_t>::max());
    const IntC d = run_mma(assemble(mma_s8_source("mma.m16n8k32.s8"), "mma_s8.sasm"), a, b, c);
    const std::int32_t wrapped = -2146967521;
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 8; ++j) EXPECT_EQ(d(i, j), wrapped) << i << "," << j;
}

TEST(MmaS8, AssemblerRejectsOtherIntegerShapes) {
    try {
        assemble(".reg 16\nmma.m16n8k16.s8 r0, r4, r8, r0\n", "k.sasm");
        FAIL() << "assembled";
    } catch (const AssemblyError& e) {
        EXPECT_EQ(std::string(e.what()), "k.sasm:2: expected mma.m16n8k16.f16, mma.m16n8k16.bf16, mma.m16n8k32.s8, "
                                         "mma.m16n8k32.e4m3 or mma.m16n8k32.e5m2");
    }
}

// Independent mmas (distinct accumulators) from one warp, then exit.
Kernel independent_mmas(const char* mnemonic, int count) {
    std::string src = ".reg " + std::to_string(6 + 4 * count) + "\n";
    for (int i = 0; i < count; ++i) {
        const std::string d = "r" + std::to_string(6 + 4 * i);
        src += std::string(mnemonic) + " " + d + ", r0, r4, " + d + "\n";
    }
    src += "exit\n";
    return assemble(src, "mmas.sasm");
}

TEST(MmaS8, TensorPipeIssuesAtTheConfigsInt8Rate) {
    // a100's SM: int8 2048 dense MACs per cycle (624 TOPS / (2 x 108 SMs x 1.41 GHz)), 4 tensor
    // cores: 512 per sub-partition per cycle, so one m16n8k32 (16 x 8 x 32 = 4096 MACs) every
    // 4096 / 512 = 8 cycles, the same interval as the fp16 m16n8k16 (2048 MACs at 256 per cycle):
    // twice the MACs per instruction, twice the rate.
    SmSpec a100;
    a100.tensor_macs_per_cycle.int8 = 2048;
    a100.tensor_macs_per_cycle.fp16 = 1024;
    const SmParams sm = sm_params_from(a100);
    EXPECT_EQ(sm.tensor_s8.initiation_interval, 8);
    EXPECT_EQ(sm.tensor.initiation_interval, 8);
    // 10 independent mmas from one warp issue at 0, 8, ..., 72 (pipe-bound); exit issues at 73
    // (control, no pipe); done at 74. The 9 gaps of 7 cycles are pipeline stalls.
    SimtParams p;
    p.sm = sm;
    p.sm.limits = *published_limits("sm_80");
    GlobalMemory mem;
    const KernelStats s8 = launch(independent_mmas("mma.m16n8k32.s8", 10), {1, 32}, {}, mem, p);
    EXPECT_EQ(s8.cycles, 74u);
    EXPECT_EQ(s8.mma_issued, 10u);
    EXPECT_EQ(s8.pipeline_cycles, 63u);
    // Over the first 9 mmas' 72 cycles: 9 x 4096 / 72 = 512 MACs per cycle, the sub-partition's
    // int8 rate exactly.
    // With the int8 rate equal to the fp16 one (a chip whose int8 is not doubled) the interval
    // doubles: 4096 / 256 = 16 cycles; issues at 0, 16, ..., 144, exit at 145, done at 146.
    a100.tensor_macs_per_cycle.int8 = 1024;
    p.sm.tensor_s8 = sm_params_from(a100).tensor_s8;
    EXPECT_EQ(p.sm.tensor_s8.initiation_interval, 16);
    const KernelStats slow = launch(independent_mmas("mma.m16n8k32.s8", 10), {1, 32}, {}, mem, p);
    EXPECT_EQ(slow.cycles, 146u);
    // fp16 mmas keep their own interval (8) whatever the int8 rate.
    const KernelStats f16 = launch(independent_mmas("mma.m16n8k16.f16", 10), {1, 32}, {}, mem, p);
    EXPECT_EQ(f16.cycles, 74u);
}

}  // namespace
}  // namespace accelsim::simt
