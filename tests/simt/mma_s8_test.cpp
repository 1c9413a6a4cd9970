// The int8 tensor-core MMA, mma.m16n8k32.s8 (PTX's mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32):
// its fragment layout (PTX ISA 9.7.14.5.10, "Matrix Fragments for mma.m16n8k32") against Eigen's
// integer product, exact; int32 wrap-around; and its issue rate on the tensor pipe, worked by hand
// from the a100 config's int8 rate.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include <Eigen/Core>

#include "models/simt/simt_gpu.h"
#include "models/simt/sm_spec.h"
#include "tests/simt/mma_m16n8k32.h"

namespace accelsim::simt::mma_s8_test {
namespace {

using test::independent_mmas;

std::string mma_s8_source(const std::string& mnemonic) { return test::mma_m16n8k32_source(mnemonic); }

using IntA = Eigen::Matrix<std::int32_t, 16, 32, Eigen::RowMajor>;
using IntB = Eigen::Matrix<std::int32_t, 32, 8, Eigen::RowMajor>;
using IntC = Eigen::Matrix<std::int32_t, 16, 8, Eigen::RowMajor>;

// Runs the kernel on A, B, C and returns D as the mma left it.
IntC run_mma(const Kernel& k, const IntA& a, const IntB& b, const IntC& c) {
    IntC d;
    std::function<std::uint8_t(int, int)> a_byte = [&](int i, int kk) { return static_cast<std::uint8_t>(a(i, kk)); };
    std::function<std::uint8_t(int, int)> b_byte = [&](int kk, int n) { return static_cast<std::uint8_t>(b(kk, n)); };
    test::run_mma_m16n8k32(k, a_byte, b_byte, c.data(), d.data());
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

TEST(MmaS8, AssemblerRejectsOtherShapesAndTypes) {
    // An int8 m16n8k16 and a misspelt fp8 type: one message listing the mma forms.
    for (const char* mnemonic : {"mma.m16n8k16.s8", "mma.m16n8k32.e4m2"}) {
        try {
            assemble(".reg 16\n" + std::string(mnemonic) + " r0, r4, r8, r0\n", "k.sasm");
            FAIL() << "assembled " << mnemonic;
        } catch (const AssemblyError& e) {
            EXPECT_EQ(std::string(e.what()), "k.sasm:2: expected mma.m16n8k16.f16, mma.m16n8k16.bf16, mma.m16n8k32.s8, "
                                             "mma.m16n8k32.e4m3, mma.m16n8k32.e5m2 or mixed fp8 mma.m16n8k32.e4m3.e5m2 / .e5m2.e4m3");
        }
    }
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
}  // namespace accelsim::simt::mma_s8_test
