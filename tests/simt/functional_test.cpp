// Assembler, SIMT divergence and functional results. Every divergence figure below is worked out
// by hand in the comment next to it: issued warp instructions, active lanes, SIMD efficiency
// (active / (32 * issued)) and the W1..W32 histogram.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "models/simt/execution.h"
#include "models/simt/isa.h"

namespace accelsim::simt {
namespace {

struct WarpRun {
    ExecutionCounters counters;
    std::vector<std::uint32_t> out;  // 32 words written by the kernel (one per thread) if it has .param out
};

WarpRun run_one_warp(const std::string& source, std::uint32_t threads = 32) {
    const Kernel k = assemble(source, "test.sasm");
    GlobalMemory mem;
    const std::uint32_t out = mem.allocate(4 * threads);
    std::vector<std::uint32_t> args;
    if (!k.params.empty()) args.push_back(out);
    WarpRun r;
    r.counters = run_functional(k, mem, {1, threads}, args);
    r.out.resize(threads);
    mem.read(out, r.out.data(), 4 * threads);
    return r;
}

TEST(Divergence, UniformBranchIsFullyEfficient) {
    // All 32 lanes take the branch: mov, setp, bra, exit = 4 issues x 32 lanes; efficiency 1.
    const WarpRun r = run_one_warp(R"(
        .reg 4
        mov r0, %tid
        setp.lt.s32 p0, r0, 100
        @p0 bra skip
        add r1, r1, 1
    skip:
        exit
    )");
    EXPECT_EQ(r.counters.issued, 4u);
    EXPECT_EQ(r.counters.active_lanes, 128u);
    EXPECT_DOUBLE_EQ(r.counters.simd_efficiency(), 1.0);
    EXPECT_EQ(r.counters.lanes_histogram[32], 4u);
}

TEST(Divergence, IfElseOnLaneParity) {
    // mov, and, setp, bra: 4 x 32. Taken (even, 16 lanes): mov r2,5 -> 1 x 16, reaches join.
    // Fall-through (odd, 16): mov r2,7 ; bra join -> 2 x 16. Then mul, add, st, exit: 4 x 32.
    // issued = 4 + 1 + 2 + 4 = 11; lanes = 8*32 + 3*16 = 304; efficiency = 304 / 352.
    const WarpRun r = run_one_warp(R"(
        .param out
        .reg 4
        mov r0, %laneid
        and r1, r0, 1
        setp.eq.s32 p0, r1, 0
        @p0 bra even
        mov r2, 7
        bra join
    even:
        mov r2, 5
    join:
        mul r3, r0, 4
        add r3, r3, out
        st.global [r3], r2
        exit
    )");
    EXPECT_EQ(r.counters.issued, 11u);
    EXPECT_EQ(r.counters.active_lanes, 304u);
    EXPECT_DOUBLE_EQ(r.counters.simd_efficiency(), 304.0 / 352.0);
    EXPECT_EQ(r.counters.lanes_histogram[32], 8u);
    EXPECT_EQ(r.counters.lanes_histogram[16], 3u);
    for (int l = 0; l < 32; ++l) EXPECT_EQ(r.out[static_cast<std::size_t>(l)], l % 2 == 0 ? 5u : 7u) << l;
}

TEST(Divergence, LaneDependentLoopTripCount) {
    // Lane l runs the 3-instruction body l+1 times. Iteration k (1..32) has 33-k lanes active.
    // issued = 2 (movs) + 3*32 + 1 (exit) = 99
    // lanes  = 2*32 + 3*(32+31+...+1) + 32 = 64 + 3*528 + 32 = 1680; efficiency = 1680 / 3168.
    // Histogram: W32 = 2 + 3 + 1 = 6, W1..W31 = 3 each. The stack must not grow with the trip count.
    const WarpRun r = run_one_warp(R"(
        .param out
        .reg 4
        mov r0, %laneid
        mov r1, 0
    loop:
        add r1, r1, 1
        setp.le.s32 p0, r1, r0
        @p0 bra loop
        exit
    )");
    EXPECT_EQ(r.counters.issued, 99u);
    EXPECT_EQ(r.counters.active_lanes, 1680u);
    EXPECT_DOUBLE_EQ(r.counters.simd_efficiency(), 1680.0 / 3168.0);
    EXPECT_EQ(r.counters.lanes_histogram[32], 6u);
    for (int w = 1; w <= 31; ++w) EXPECT_EQ(r.counters.lanes_histogram[static_cast<std::size_t>(w)], 3u) << w;
}

TEST(Divergence, EarlyExitRetiresLanes) {
    // mov, setp, @p0 exit: 3 x 32 (24 lanes leave); add, add, exit: 3 x 8.
    // issued = 6; lanes = 96 + 24 = 120; efficiency = 120 / 192 = 0.625.
    const WarpRun r = run_one_warp(R"(
        .param out
        .reg 4
        mov r0, %laneid
        setp.ge.s32 p0, r0, 8
        @p0 exit
        add r1, r0, 1
        add r1, r1, 1
        exit
    )");
    EXPECT_EQ(r.counters.issued, 6u);
    EXPECT_EQ(r.counters.active_lanes, 120u);
    EXPECT_DOUBLE_EQ(r.counters.simd_efficiency(), 0.625);
    EXPECT_EQ(r.counters.lanes_histogram[32], 3u);
    EXPECT_EQ(r.counters.lanes_histogram[8], 3u);
}

TEST(Divergence, NestedBranches) {
    // mov, setp, bra (outer): 3 x 32. Taken (lanes 16-31): mov r1,3: 1 x 16.
    // Fall-through (0-15): setp, bra (inner): 2 x 16; inner taken (8-15): mov r1,2: 1 x 8;
    // inner fall-through (0-7): mov r1,1 ; bra inner_join: 2 x 8; inner_join: bra outer_join: 1 x 16.
    // outer_join: mul, add, st, exit: 4 x 32.
    // issued = 3+1+2+1+2+1+4 = 14; lanes = 96+16+32+8+16+16+128 = 312; efficiency = 312 / 448.
    // Histogram: W32 = 7, W16 = 4, W8 = 3.
    const WarpRun r = run_one_warp(R"(
        .param out
        .reg 4
        mov r0, %laneid
        setp.lt.s32 p0, r0, 16
        @!p0 bra outer_else
        setp.lt.s32 p1, r0, 8
        @!p1 bra inner_else
        mov r1, 1
        bra inner_join
    inner_else:
        mov r1, 2
    inner_join:
        bra outer_join
    outer_else:
        mov r1, 3
    outer_join:
        mul r2, r0, 4
        add r2, r2, out
        st.global [r2], r1
        exit
    )");
    EXPECT_EQ(r.counters.issued, 14u);
    EXPECT_EQ(r.counters.active_lanes, 312u);
    EXPECT_DOUBLE_EQ(r.counters.simd_efficiency(), 312.0 / 448.0);
    EXPECT_EQ(r.counters.lanes_histogram[32], 7u);
    EXPECT_EQ(r.counters.lanes_histogram[16], 4u);
    EXPECT_EQ(r.counters.lanes_histogram[8], 3u);
    for (int l = 0; l < 32; ++l) EXPECT_EQ(r.out[static_cast<std::size_t>(l)], l < 8 ? 1u : (l < 16 ? 2u : 3u)) << l;
}

TEST(Divergence, ReconvergencePointIsTheImmediatePostDominator) {
    const Kernel k = assemble(R"(
        .reg 2
        setp.eq.s32 p0, r0, 0     // 0
        @p0 bra a                 // 1: ipdom = join (5)
        mov r1, 1                 // 2
        bra join                  // 3
    a:  mov r1, 2                 // 4
    join:
        @p0 exit                  // 5
        mov r1, 3                 // 6
    )", "ipdom.sasm");
    EXPECT_EQ(k.code[1].target, 4);
    EXPECT_EQ(k.code[1].reconverge, 5);
    const std::vector<int> ipdom = immediate_post_dominators(k.code);
    EXPECT_EQ(ipdom[5], 7);  // the virtual exit: both successors of @p0 exit lead out
    EXPECT_EQ(ipdom[6], 7);
}

TEST(Functional, ShufflesMoveValuesBetweenLanes) {
    // Butterfly sum over 5 steps: every lane ends with 0+1+...+31 = 496.
    // Then up by 1 (lane 0 keeps its own), down by 2 (lanes 30, 31 keep their own), idx 31-l.
    const WarpRun r = run_one_warp(R"(
        .param out
        .reg 8
        mov r0, %laneid
        mov r1, r0
        shfl.bfly r2, r1, 16
        add r1, r1, r2
        shfl.bfly r2, r1, 8
        add r1, r1, r2
        shfl.bfly r2, r1, 4
        add r1, r1, r2
        shfl.bfly r2, r1, 2
        add r1, r1, r2
        shfl.bfly r2, r1, 1
        add r1, r1, r2            // 496
        shfl.up r3, r0, 1         // l-1 (lane 0: 0)
        shfl.down r4, r3, 2       // (l+2)-1 for l < 30; own value for 30, 31
        sub r5, 31, r0
        shfl.idx r6, r4, r5       // value of lane 31-l
        mul r6, r6, 1000
        add r6, r6, r1
        mul r7, r0, 4
        add r7, r7, out
        st.global [r7], r6
        exit
    )");
    for (int l = 0; l < 32; ++l) {
        auto r3 = [](int lane) { return lane == 0 ? 0 : lane - 1; };
        auto r4 = [&](int lane) { return lane < 30 ? r3(lane + 2) : r3(lane); };
        EXPECT_EQ(r.out[static_cast<std::size_t>(l)], static_cast<std::uint32_t>(r4(31 - l) * 1000 + 496)) << l;
    }
}

TEST(Functional, ArithmeticSfuAndPartialWarp) {
    // 20 threads: the last 12 lanes do not exist. out[t] = bits of ffma(t, 0.5, rcp(4)) + ex2(3) - rsqrt(16)
    //   = t/2 + 0.25 + 8 - 0.25 = t/2 + 8.
    const Kernel k = assemble(R"(
        .param out
        .reg 8
        mov r0, %tid
        i2f r1, r0
        rcp r2, 4.0
        ffma r1, r1, 0.5, r2
        ex2 r3, 3.0
        fadd r1, r1, r3
        rsqrt r4, 16.0
        fsub r1, r1, r4
        shl r5, r0, 2
        add r5, r5, out
        st.global [r5], r1
        exit
    )", "arith.sasm");
    GlobalMemory mem;
    const std::uint32_t out = mem.allocate(4 * 32);
    const ExecutionCounters c = run_functional(k, mem, {1, 20}, {out});
    for (std::uint32_t t = 0; t < 20; ++t) EXPECT_FLOAT_EQ(mem.load_f32(out + 4 * t), static_cast<float>(t) / 2 + 8) << t;
    EXPECT_EQ(mem.load32(out + 4 * 20), 0u);  // lane 20 does not exist
    EXPECT_EQ(c.lanes_histogram[20], c.issued);
}

TEST(Functional, MmaFragmentLayoutMatchesEigen) {
    // D = A(16x16 fp16, row-major) * B(16x8 fp16, stored column-major) + C(16x8 fp32) by one mma.
    const char* src = R"(
        .param A, B, C, D
        .reg 20
        mov r0, %laneid
        shr r1, r0, 2             // g
        and r2, r0, 3             // t
        shl r3, r1, 5             // g * 32 bytes (one row of 16 halves)
        shl r4, r2, 2             // t * 4 bytes (2 halves)
        add r5, r3, r4
        add r5, r5, A
        ld.global r6, [r5]        // a0 (g, 2t)
        ld.global r7, [r5+256]    // a1 (g+8, 2t)
        ld.global r8, [r5+16]     // a2 (g, 2t+8)
        ld.global r9, [r5+272]    // a3 (g+8, 2t+8)
        add r10, r3, r4
        add r10, r10, B
        ld.global r11, [r10]      // b0 (k=2t, n=g)
        ld.global r12, [r10+16]   // b1 (k=2t+8, n=g)
        shl r13, r2, 3            // t * 8 bytes (2 floats)
        add r13, r13, r3          // + g * 32 bytes (one row of 8 floats)
        add r14, r13, C
        ld.global r16, [r14]
        ld.global r17, [r14+4]
        ld.global r18, [r14+256]
        ld.global r19, [r14+260]
        mma.m16n8k16.f16 r16, r6, r11, r16
        add r15, r13, D
        st.global [r15], r16
        st.global [r15+4], r17
        st.global [r15+256], r18
        st.global [r15+260], r19
        exit
    )";
    const Kernel k = assemble(src, "mma.sasm");
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    Eigen::Matrix<float, 16, 16, Eigen::RowMajor> a;
    Eigen::Matrix<float, 16, 8, Eigen::RowMajor> b, c;
    std::vector<Eigen::half> a_h(256), bt_h(128);
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) {
            a_h[static_cast<std::size_t>(i * 16 + j)] = Eigen::half(dist(rng));
            a(i, j) = static_cast<float>(a_h[static_cast<std::size_t>(i * 16 + j)]);
        }
    for (int kk = 0; kk < 16; ++kk)
        for (int n = 0; n < 8; ++n) {
            bt_h[static_cast<std::size_t>(n * 16 + kk)] = Eigen::half(dist(rng));
            b(kk, n) = static_cast<float>(bt_h[static_cast<std::size_t>(n * 16 + kk)]);
            c(kk, n) = dist(rng);
        }
    GlobalMemory mem;
    const std::uint32_t A = mem.allocate(512), B = mem.allocate(256), C = mem.allocate(512), D = mem.allocate(512);
    mem.write(A, a_h.data(), 512);
    mem.write(B, bt_h.data(), 256);
    mem.write(C, c.data(), 512);
    run_functional(k, mem, {1, 32}, {A, B, C, D});
    const Eigen::Matrix<float, 16, 8, Eigen::RowMajor> expected = a * b + c;
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 8; ++j)
            EXPECT_NEAR(mem.load_f32(D + static_cast<std::uint32_t>(4 * (i * 8 + j))), expected(i, j), 1e-4f) << i << "," << j;
}

TEST(Assembler, ErrorsNameFileAndLine) {
    auto message = [](const std::string& src) {
        try {
            assemble(src, "k.sasm");
        } catch (const AssemblyError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(".reg 4\nmov r0, 1\nfrob r1, r2\n"), "k.sasm:3: unknown instruction 'frob'");
    EXPECT_EQ(message(".reg 4\n\nbra nowhere\n"), "k.sasm:3: unknown label 'nowhere'");
    EXPECT_EQ(message(".reg 4\nadd r4, r0, 1\n"), "k.sasm:2: register r4 beyond .reg 4");
    EXPECT_EQ(message("mov r0, 1\n"), "k.sasm:1: declare .reg N before using registers");
    EXPECT_EQ(message(".reg 4\nadd r0, r1\n"), "k.sasm:2: 'add' takes 3 operand(s), got 2");
    EXPECT_EQ(message(".reg 4\nsetp.lt.s64 p0, r0, r1\n"), "k.sasm:2: unknown compare type 's64' (s32 u32 f32)");
    EXPECT_EQ(message(".reg 4\nld.global r0, [x]\n"), "k.sasm:2: unknown operand 'x' (not a register or .param)");
    EXPECT_EQ(message(".reg 4\nmov r0, n\n"), "k.sasm:2: unknown operand 'n' (not a register or .param)");
    EXPECT_EQ(message(".reg 4\n.bogus 3\n"), "k.sasm:2: unknown directive '.bogus' (expected .kernel, .param, .reg, .shared or .cluster)");
    EXPECT_THROW(assemble_file("/nonexistent/k.sasm"), AssemblyError);
}

TEST(Assembler, FloatingPointDependenceIsDetected) {
    // Addresses from integers only: skippable.
    EXPECT_TRUE(assemble(".param x\n.reg 4\nmov r0, %tid\nshl r0, r0, 2\nadd r0, r0, x\nld.global r1, [r0]\n"
                         "fmul r1, r1, 2.0\nst.global [r0], r1\nexit\n", "ok.sasm").fp_payload_skippable);
    // A branch on a float comparison: not skippable, and the message names the line.
    const Kernel k = assemble(".reg 4\nfadd r1, r1, 1.0\nsetp.gt.f32 p0, r1, 0.0\n@p0 bra end\nmov r2, 1\nend:\nexit\n", "bad.sasm");
    EXPECT_FALSE(k.fp_payload_skippable);
    EXPECT_EQ(k.fp_dependence, "bad.sasm:4: its guard predicate depends on floating-point data");
    // An address loaded from memory the kernel also fills with float results: not skippable.
    EXPECT_FALSE(assemble(".param x\n.reg 4\nfmul r1, r1, 2.0\nst.global [x], r1\nld.global r2, [x]\n"
                          "ld.global r3, [r2]\nexit\n", "mem.sasm").fp_payload_skippable);
}

}  // namespace
}  // namespace accelsim::simt

namespace accelsim::simt {
namespace {

TEST(Divergence, ReductionTailOfOneWarp) {
    // reduce.sasm with one block of 32 threads, n = 32, in[i] = i.
    //   prologue (guard not taken by anyone): 10 x 32; store + bar + shr: 4 x 32
    //   5 iterations, s = 16, 8, 4, 2, 1: setp, bra: 2 x 32; the s lanes with tid < s: 6 x s;
    //   bar, shr, setp, bra: 4 x 32
    //   epilogue: setp, @p3 exit: 2 x 32; lane 0 alone: ld.shared, shl, add, st.global, exit: 5 x 1
    // issued = 14 + 5*12 + 2 + 5 = 81
    // lanes  = 14*32 + (5*6*32 + 6*(16+8+4+2+1)) + 2*32 + 5 = 448 + 1146 + 64 + 5 = 1663
    // histogram: W32 = 14 + 5*6 + 2 = 46; W16 = W8 = W4 = W2 = 6; W1 = 6 + 5 = 11.
    const Kernel k = assemble_file(std::string(ACCELSIM_SOURCE_DIR) + "/models/simt/kernels/reduce.sasm");
    GlobalMemory mem;
    const std::uint32_t in = mem.allocate(128), out = mem.allocate(4);
    for (std::uint32_t i = 0; i < 32; ++i) mem.store_f32(in + 4 * i, static_cast<float>(i));
    const ExecutionCounters c = run_functional(k, mem, {1, 32}, {32, in, out});
    EXPECT_EQ(mem.load_f32(out), 496.0f);
    EXPECT_EQ(c.issued, 81u);
    EXPECT_EQ(c.active_lanes, 1663u);
    EXPECT_DOUBLE_EQ(c.simd_efficiency(), 1663.0 / (32.0 * 81.0));
    EXPECT_EQ(c.lanes_histogram[32], 46u);
    for (int w : {16, 8, 4, 2}) EXPECT_EQ(c.lanes_histogram[static_cast<std::size_t>(w)], 6u) << w;
    EXPECT_EQ(c.lanes_histogram[1], 11u);
}

}  // namespace
}  // namespace accelsim::simt

namespace accelsim::simt {
namespace {

TEST(Functional, UntimedBlocksReportTheirSectorsAndLeaveTheLaunchAlone) {
    // saxpy over 4096 elements in 16 blocks of 256 threads; blocks 2 and 3 run untimed. Each of
    // their 8 warps loads 32 consecutive floats of x and of y (128 B: 4 sectors each) and stores
    // the 4 sectors of y back: 2 x 8 x 12 = 192 sectors, those of elements 512..1023.
    const Kernel k = assemble_file(std::string(ACCELSIM_SOURCE_DIR) + "/models/simt/kernels/saxpy.sasm");
    GlobalMemory mem;
    const std::uint32_t n = 4096;
    const std::uint32_t x = mem.allocate(4 * n), y = mem.allocate(4 * n);
    for (std::uint32_t i = 0; i < n; ++i) {
        mem.store_f32(x + 4 * i, static_cast<float>(i));
        mem.store_f32(y + 4 * i, 1.0f);
    }
    const WarpExecutor launch(k, mem, {16, 256}, {n, 0x40000000u /* 2.0f */, x, y}, false);
    using Sectors = std::vector<std::pair<std::uint32_t, bool>>;
    auto run = [&](std::uint32_t together) {
        Sectors seen;
        run_blocks_untimed(launch, 2, 2, together, [&](std::uint32_t sector, bool write) { seen.emplace_back(sector, write); });
        return seen;
    };
    const Sectors one_by_one = run(1), side_by_side = run(2);
    // The ninth instruction of every warp loads x. One block after another: block 2's 8 warps
    // load x (32 sectors), then y; side by side, block 3's warps load x right after block 2's.
    ASSERT_EQ(one_by_one.size(), 192u);
    ASSERT_EQ(side_by_side.size(), 192u);
    EXPECT_EQ(one_by_one[0], std::make_pair(x + 2048, false));
    EXPECT_EQ(one_by_one[32], std::make_pair(y + 2048, false));
    EXPECT_EQ(side_by_side[0], std::make_pair(x + 2048, false));
    EXPECT_EQ(side_by_side[32], std::make_pair(x + 3072, false));
    Sectors expected;
    for (std::uint32_t s = 0; s < 64; ++s) {  // 512 elements x 4 B / 32 B
        expected.emplace_back(x + 2048 + 32 * s, false);
        expected.emplace_back(y + 2048 + 32 * s, false);
        expected.emplace_back(y + 2048 + 32 * s, true);
    }
    std::sort(expected.begin(), expected.end());
    for (Sectors seen : {one_by_one, side_by_side}) {
        std::sort(seen.begin(), seen.end());
        EXPECT_EQ(seen, expected);
    }
    // The blocks ran, once per call, on an executor of their own: saxpy updates y in place, so
    // theirs are 2x + (2x + 1), the others untouched.
    EXPECT_FLOAT_EQ(mem.load_f32(y + 4 * 600), 2401.0f);
    EXPECT_FLOAT_EQ(mem.load_f32(y + 4 * 100), 1.0f);
    EXPECT_FLOAT_EQ(mem.load_f32(y + 4 * 1024), 1.0f);
    EXPECT_EQ(launch.counters().issued, 0u);
}

}  // namespace
}  // namespace accelsim::simt
