// SM timing against closed forms worked out by hand from SmParams' defaults (INT pipe latency 4,
// initiation interval 2; ld.shared latency 23 + degree - 1, one wavefront per cycle; instruction
// buffer refilled the cycle after an issue), scheduler orders against their definitions, GEMM
// kernels against Eigen, and the timing-only mode against full computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <Eigen/Core>
#include <random>

#include "models/simt/simt_gpu.h"
#include "models/simt/simt_module.h"

namespace accelsim::simt::timing_test {
namespace {

const std::string kKernels = std::string(ACCELSIM_SOURCE_DIR) + "/models/simt/kernels/";

SimtParams a100_like(int sms = 1) {
    SimtParams p;
    p.sms = sms;
    p.sm.limits = *published_limits("sm_80");
    return p;
}

std::uint32_t float_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

TEST(SmTiming, DependentChainPaysTheLatency) {
    // 10 dependent adds on r1: issue at 0, 4, ..., 36 (RAW, latency 4); exit at 37; done at 38.
    // Sub-partition 0: 11 issue cycles + 9 gaps x 3 scoreboard cycles = 38; the other three idle.
    std::string src = ".reg 2\n";
    for (int i = 0; i < 10; ++i) src += "add r1, r1, 1\n";
    src += "exit\n";
    const Kernel k = assemble(src, "chain.sasm");
    GlobalMemory mem;
    const KernelStats s = launch(k, {1, 32}, {}, mem, a100_like());
    EXPECT_EQ(s.cycles, 38u);
    EXPECT_EQ(s.issued, 11u);
    EXPECT_EQ(s.issue_cycles, 11u);
    EXPECT_EQ(s.scoreboard_cycles, 27u);
    EXPECT_EQ(s.idle_cycles, 3u * 38u);
    EXPECT_EQ(s.pipeline_cycles, 0u);
}

// 10 independent adds (r1..r10 = r0 + 1), then exit.
Kernel independent_adds() {
    std::string src = ".reg 12\n";
    for (int i = 1; i <= 10; ++i) src += "add r" + std::to_string(i) + ", r0, 1\n";
    src += "exit\n";
    return assemble(src, "independent.sasm");
}

TEST(SmTiming, IndependentChainPaysTheInitiationInterval) {
    // 10 independent adds: the INT pipe takes one every 2 cycles: issue at 0, 2, ..., 18; exit at
    // 19 (no pipe); done at 20. The 9 odd cycles in between are pipeline stalls.
    const Kernel k = independent_adds();
    GlobalMemory mem;
    const KernelStats s = launch(k, {1, 32}, {}, mem, a100_like());
    EXPECT_EQ(s.cycles, 20u);
    EXPECT_EQ(s.pipeline_cycles, 9u);
    EXPECT_EQ(s.scoreboard_cycles, 0u);
}

TEST(SmTiming, AWaveOf64IsTwoHalvesOnOneScheduler) {
    // The 10 independent adds above, one block of 64 threads. Waves of 32 (sm_80 limits): two warps
    // on sub-partitions 0 and 1, each done at 20 as above. Waves of 64 (gfx942 limits, same pipes):
    // one wave = both 32-lane halves on sub-partition 0, sharing its INT pipe (II 2): the first
    // half (oldest, greedy) issues its adds at 0, 2, ..., 18 and exits at 19; the second half's adds
    // go at 20, ..., 38, its exit at 39: done at 40, twice the cycles for the same 20 adds, as a
    // SIMD16 takes 4 cycles per wave64 instruction where two SIMDs took 2 each.
    const Kernel k = independent_adds();
    GlobalMemory mem;
    const KernelStats wave32 = launch(k, {1, 64}, {}, mem, a100_like());
    SimtParams cdna = a100_like();
    cdna.sm.limits = *published_limits("gfx942");
    const KernelStats wave64 = launch(k, {1, 64}, {}, mem, cdna);
    EXPECT_EQ(wave32.cycles, 20u);
    EXPECT_EQ(wave64.cycles, 40u);
    EXPECT_EQ(wave32.issued, 22u);
    EXPECT_EQ(wave64.issued, 22u);
    // Occupancy in waves of the CU's 32, counted in 32-lane halves: both halves resident for 20
    // cycles, the second alone for 20 more -> 1.5 halves = 0.75 waves on average -> 0.75 / 32
    // (a half that has exited no longer counts). Theoretical: 32 one-wave workgroups per CU = 1.0.
    EXPECT_DOUBLE_EQ(wave64.achieved_occupancy, 0.75 / 32);
    EXPECT_DOUBLE_EQ(wave64.theoretical.occupancy, 1.0);
    EXPECT_EQ(wave64.theoretical.warps_per_block, 1);
}

SimtParams cdna3_like() {
    SimtParams p = a100_like();
    p.sm.limits = *published_limits("gfx942");
    return p;
}

// Each thread stores the results of its shuffles at out + 4 (tid * kWaveShuffleResults + i).
constexpr int kWaveShuffleResults = 7;
std::vector<std::uint32_t> run_wave_shuffles(const SimtParams& params, std::uint32_t threads) {
    // r1 = tid; bfly 32, down 16, idx 40, up 33 of it; a six-step butterfly sum of tid; bfly 1;
    // bfly 32 in place (r10 = tid, shfl.bfly r10, r10, 32: the half that issues second overwrites
    // its source before the first issues, which must still read the value at the meeting).
    const std::string src = R"(.param out
.reg 12
    mov r1, %tid
    shfl.bfly r2, r1, 32
    shfl.down r3, r1, 16
    shfl.idx r4, r1, 40
    shfl.up r5, r1, 33
    mov r6, r1
    shfl.bfly r7, r6, 32
    add r6, r6, r7
    shfl.bfly r7, r6, 16
    add r6, r6, r7
    shfl.bfly r7, r6, 8
    add r6, r6, r7
    shfl.bfly r7, r6, 4
    add r6, r6, r7
    shfl.bfly r7, r6, 2
    add r6, r6, r7
    shfl.bfly r7, r6, 1
    add r6, r6, r7
    shfl.bfly r8, r1, 1
    mov r10, r1
    shfl.bfly r10, r10, 32
    mul r9, r1, 28
    add r9, r9, out
    st.global [r9], r2
    st.global [r9+4], r3
    st.global [r9+8], r4
    st.global [r9+12], r5
    st.global [r9+16], r6
    st.global [r9+20], r8
    st.global [r9+24], r10
    exit
)";
    const Kernel k = assemble(src, "wave_shuffles.sasm");
    GlobalMemory mem;
    const std::uint32_t out = mem.allocate(threads * kWaveShuffleResults * 4);
    launch(k, {1, threads}, {out}, mem, params);
    std::vector<std::uint32_t> words(threads * kWaveShuffleResults);
    mem.read(out, words.data(), words.size() * 4);
    return words;
}

TEST(SmTiming, AWave64ShuffleSpansItsSixtyFourLanes) {
    // gfx942 (waves of 64): lane t of the wave reads lane t ^ 32 (bfly 32), t + 16 (down 16, own
    // value past 63), 40 (idx), t - 33 (up 33, own value below 0); six butterflies sum 0..63 =
    // 2016 in every lane; bfly 1 stays in the half. Two waves (128 threads): each its own 64.
    // sm_80 (waves of 32): lane numbers, offsets and masks are mod 32 (bfly 32 is bfly 0, idx 40 is
    // idx 8, ...), so the same code sums each 32-lane warp: 496 + 1024 w.
    const std::vector<std::uint32_t> wave64 = run_wave_shuffles(cdna3_like(), 128);
    const std::vector<std::uint32_t> warp32 = run_wave_shuffles(a100_like(), 128);
    for (std::uint32_t tid = 0; tid < 128; ++tid) {
        const std::uint32_t t = tid % 64, base = tid - t;
        const std::uint32_t* r = &wave64[tid * kWaveShuffleResults];
        EXPECT_EQ(r[0], base + (t ^ 32)) << tid;
        EXPECT_EQ(r[1], base + (t + 16 > 63 ? t : t + 16)) << tid;
        EXPECT_EQ(r[2], base + 40) << tid;
        EXPECT_EQ(r[3], base + (t < 33 ? t : t - 33)) << tid;
        EXPECT_EQ(r[4], 64 * base + 2016) << tid;  // sum of base + 0 .. base + 63
        EXPECT_EQ(r[5], tid ^ 1) << tid;
        EXPECT_EQ(r[6], base + (t ^ 32)) << tid;
        const std::uint32_t l = tid % 32, warp = tid - l;
        const std::uint32_t* q = &warp32[tid * kWaveShuffleResults];
        EXPECT_EQ(q[0], tid) << tid;
        EXPECT_EQ(q[1], warp + (l + 16 > 31 ? l : l + 16)) << tid;
        EXPECT_EQ(q[2], warp + 8) << tid;
        EXPECT_EQ(q[3], warp + (l < 1 ? l : l - 1)) << tid;
        EXPECT_EQ(q[4], 32 * warp * 2 + 2 * 496) << tid;  // the bfly-0 step doubles: 2 x (32 warp + 496)
        EXPECT_EQ(q[5], tid ^ 1) << tid;
        EXPECT_EQ(q[6], tid) << tid;
    }
}

TEST(SmTiming, AWave64ShuffleWaitsForTheOtherHalf) {
    // Half 1 (warp 1) does 10 dependent adds before the wave's shfl; half 0 branches straight to
    // it and waits there (a barrier stall of the warp; the scheduler's cycles count half 1's
    // scoreboard waits, which rank first) until half 1 arrives: its shfl issues after half 1's
    // last add, and each half reads the other's r1 (bfly 32). With waves of 32 nobody waits.
    std::string src = ".param out\n.reg 6\n    mov r1, %warpid\n    setp.eq.s32 p0, r1, 0\n    @p0 bra meet\n";
    for (int i = 0; i < 10; ++i) src += "    add r2, r2, 1\n";
    src += "meet:\n    shfl.bfly r3, r1, 32\n    mov r4, %tid\n    shl r4, r4, 2\n    add r4, r4, out\n"
           "    st.global [r4], r3\n    exit\n";
    const Kernel k = assemble(src, "wave_wait.sasm");
    for (const bool wave64 : {true, false}) {
        SimtParams p = wave64 ? cdna3_like() : a100_like();
        p.sm.record_issue_order = true;
        GlobalMemory mem;
        const std::uint32_t out = mem.allocate(64 * 4);
        const KernelStats s = launch(k, {1, 64}, {out}, mem, p);
        std::uint64_t shfl_cycle[2] = {0, 0}, last_add = 0;
        int shuffle_pc = -1;
        for (int pc = 0; pc < static_cast<int>(k.code.size()); ++pc)
            if (k.code[static_cast<std::size_t>(pc)].op == Opcode::shfl) shuffle_pc = pc;
        for (const IssueRecord& r : s.issue_order) {
            if (r.pc == shuffle_pc) shfl_cycle[r.warp_in_block] = r.cycle;
            if (r.warp_in_block == 1 && r.pc < shuffle_pc && k.code[static_cast<std::size_t>(r.pc)].op == Opcode::add)
                last_add = std::max(last_add, r.cycle);
        }
        std::vector<std::uint32_t> got(64);
        mem.read(out, got.data(), 64 * 4);
        for (std::uint32_t t = 0; t < 64; ++t)
            EXPECT_EQ(got[t], wave64 ? 1 - t / 32 : t / 32) << (wave64 ? "wave64 " : "wave32 ") << t;
        if (wave64) {
            EXPECT_GT(shfl_cycle[0], last_add);
            EXPECT_GT(shfl_cycle[1], last_add);
        } else {
            EXPECT_LT(shfl_cycle[0], last_add);
        }
        EXPECT_GT(last_add, 30u);  // the ten dependent adds: 4 cycles apart
    }
}

TEST(SmTiming, AWave64ShuffleGoesAloneWhenTheOtherHalfCannotCome) {
    // Half 1 exits before the shfl (or waits at a bar.sync that half 0 reaches only after it):
    // half 0 must not wait for it forever. It reads half 1's r1 as it was left (lanes that are not
    // there give their register's value, as inactive lanes do).
    for (const bool barrier : {false, true}) {
        std::string src = ".param out\n.reg 6\n    mov r1, %warpid\n    add r1, r1, 7\n    setp.eq.s32 p0, r1, 8\n";
        src += barrier ? "    @p0 bra wait\n" : "    @p0 exit\n";
        src += "    shfl.bfly r3, r1, 32\n    mov r4, %tid\n    shl r4, r4, 2\n    add r4, r4, out\n    st.global [r4], r3\n";
        src += barrier ? "wait:\n    bar.sync\n    exit\n" : "    exit\n";
        const Kernel k = assemble(src, "wave_alone.sasm");
        GlobalMemory mem;
        const std::uint32_t out = mem.allocate(64 * 4);
        launch(k, {1, 64}, {out}, mem, cdna3_like());
        std::vector<std::uint32_t> got(32);
        mem.read(out, got.data(), 32 * 4);
        for (std::uint32_t t = 0; t < 32; ++t) EXPECT_EQ(got[t], 8u) << (barrier ? "barrier " : "exit ") << t;
    }
}

TEST(SmTiming, GlobalLoadsWaitForTheMemoryPort) {
    // saxpy.sasm, one warp, n = 32, fixed 400-cycle memory; INT latency 4 / II 2, FP32 latency 4.
    //   0 mov r0 | 2 mov r1 (INT II) | 6 mad (r1 ready 6) | 10 setp (r0 ready 10) | 14 @p0 exit
    //   (p0 ready 14; no lane exits) | 15 shl r1 | 19 add r2 | 21 add r3 (INT II) | 23 ld r4 (4
    //   sectors, back at 423) | 25 ld r5 (back at 425) | 425 ffma (ready 429) | 429 st (accepted
    //   at 829) | 430 exit -> SM done at 431; the kernel ends when the store is accepted: 829.
    const Kernel k = assemble_file(kKernels + "saxpy.sasm");
    GlobalMemory mem;
    const std::uint32_t x = mem.allocate(128), y = mem.allocate(128);
    FixedLatencyMemory port(400);
    const KernelStats s = launch(k, {1, 32}, {32, float_bits(1.0f), x, y}, mem, a100_like(), &port);
    EXPECT_EQ(s.cycles, 829u);
    EXPECT_EQ(s.issued, 13u);
    EXPECT_EQ(port.read_sectors(), 8u);
    EXPECT_EQ(port.write_sectors(), 4u);
}

TEST(SmTiming, L1HitsAfterTheFirstMiss) {
    // x[0] = 0, so the second load's address (x + loaded value) depends on the first load.
    //   no L1:  ld 0 -> 400 | add 400 -> 404 | ld 404 -> 804 | add 804 | exit 805 | done 806
    //   L1 (hit 33): ld 0 misses -> 33 + 400 = 433 | add 433 -> 437 | ld 437 hits -> 470 |
    //                add 470 | exit 471 | done 472
    const Kernel k = assemble(".param x\n.reg 5\nld.global r1, [x]\nadd r3, r1, x\nld.global r2, [r3]\n"
                              "add r4, r2, 1\nexit\n", "l1.sasm");
    GlobalMemory mem;
    const std::uint32_t x = mem.allocate(128);
    SimtParams p = a100_like();
    EXPECT_EQ(launch(k, {1, 32}, {x}, mem, p).cycles, 806u);
    p.sm.l1.bytes = 128 * 1024;
    const KernelStats s = launch(k, {1, 32}, {x}, mem, p);
    EXPECT_EQ(s.cycles, 472u);
    EXPECT_EQ(s.l1_hits, 1u);
    EXPECT_EQ(s.l1_misses, 1u);
}

TEST(SmTiming, BankConflictsCostTheirDegree) {
    // bank_conflict.sasm: mov (0), mul (4, RAW), shl (8, RAW), then 16 loads from 12 on; exit one
    // cycle after the last load, done one cycle later.
    //   stride 33: conflict-free, a load every cycle: 12..27, exit 28, done 29.
    //   stride 32: 32-way, each load holds the LD/ST pipe 32 cycles: 12 + 32*15 = 492, exit 493, done 494.
    // Slower by (degree - 1) * (loads - 1) = 31 * 15 = 465 cycles; 32x the wavefronts.
    const Kernel k = assemble_file(kKernels + "bank_conflict.sasm");
    GlobalMemory mem;
    const KernelStats s33 = launch(k, {1, 32}, {33}, mem, a100_like());
    const KernelStats s32 = launch(k, {1, 32}, {32}, mem, a100_like());
    EXPECT_EQ(s33.cycles, 29u);
    EXPECT_EQ(s32.cycles, 494u);
    EXPECT_EQ(s32.cycles - s33.cycles, 31u * 15u);
    EXPECT_EQ(s33.shared_wavefronts, 16u);
    EXPECT_EQ(s32.shared_wavefronts, 16u * 32u);
    EXPECT_EQ(shared_bank_conflict_degree({0, 4, 4, 8}, 0xf), 1);      // same word: broadcast
    EXPECT_EQ(shared_bank_conflict_degree({0, 128, 256, 4}, 0xf), 3);  // 3 words in bank 0
}

TEST(SmTiming, BankConflictDegreeMatchesItsDefinition) {
    // The degree by definition: the most distinct 4-byte words any one of the 32 banks is asked
    // for (bank = word % 32), counted here by brute force. Patterns cover the fast paths (a window
    // of 32 words, broadcasts) and the slow one (strides, random words), full and partial masks.
    auto by_definition = [](const std::array<std::uint32_t, 32>& a, std::uint32_t mask) {
        int degree = 0;
        for (std::uint32_t bank = 0; bank < 32; ++bank) {
            std::vector<std::uint32_t> words;
            for (int l = 0; l < 32; ++l)
                if (((mask >> l) & 1) && (a[static_cast<std::size_t>(l)] / 4) % 32 == bank &&
                    std::find(words.begin(), words.end(), a[static_cast<std::size_t>(l)] / 4) == words.end())
                    words.push_back(a[static_cast<std::size_t>(l)] / 4);
            degree = std::max(degree, static_cast<int>(words.size()));
        }
        return degree;
    };
    std::mt19937 rng(6);
    for (int trial = 0; trial < 2000; ++trial) {
        std::array<std::uint32_t, 32> a{};
        const int pattern = trial % 4;
        const std::uint32_t base = (rng() % 4096) * 4;
        const std::uint32_t stride = rng() % 40;
        for (int l = 0; l < 32; ++l) {
            const auto lane = static_cast<std::uint32_t>(l);
            std::uint32_t word = 0;
            switch (pattern) {
                case 0: word = base / 4 + rng() % 32; break;               // inside a 32-word window
                case 1: word = base / 4 + rng() % 48; break;               // just wider than a window
                case 2: word = base / 4 + lane * stride; break;            // strided
                default: word = rng() % 256; break;                        // random
            }
            a[static_cast<std::size_t>(l)] = word * 4;
        }
        const std::uint32_t mask = trial % 3 == 0 ? static_cast<std::uint32_t>(rng()) | 1u : 0xffffffffu;
        ASSERT_EQ(shared_bank_conflict_degree(a, mask), by_definition(a, mask)) << "trial " << trial;
    }
}

TEST(SmTiming, CoalescingCountsSectors) {
    std::array<std::uint32_t, 32> a{}, sectors{};
    for (int l = 0; l < 32; ++l) a[static_cast<std::size_t>(l)] = 4096 + 4 * static_cast<std::uint32_t>(l);
    EXPECT_EQ(coalesce_sectors(a, 0xffffffffu, 32, sectors), 4);  // 128 consecutive bytes
    for (int l = 0; l < 32; ++l) a[static_cast<std::size_t>(l)] = 4096 + 128 * static_cast<std::uint32_t>(l);
    EXPECT_EQ(coalesce_sectors(a, 0xffffffffu, 32, sectors), 32);  // one sector per lane
    EXPECT_EQ(coalesce_sectors(a, 0x5u, 32, sectors), 2);
    EXPECT_EQ(sectors[0], 4096u);
    EXPECT_EQ(sectors[1], 4096u + 256u);
}

std::vector<int> issue_warps(const std::string& scheduler) {
    // 4 warps on one sub-partition, each 4 nops + exit: nothing ever stalls, so the order is the
    // policy alone.
    const Kernel k = assemble(".reg 1\nnop\nnop\nnop\nnop\nexit\n", "order.sasm");
    SimtParams p = a100_like();
    p.sm.sub_partitions = 1;
    p.sm.warp_scheduler = scheduler;
    p.sm.two_level_active_warps = 2;
    p.sm.record_issue_order = true;
    GlobalMemory mem;
    const KernelStats s = launch(k, {1, 128}, {}, mem, p);
    std::vector<int> order;
    for (const IssueRecord& r : s.issue_order) order.push_back(r.warp);
    EXPECT_EQ(s.cycles, 20u) << scheduler;  // one issue per cycle whatever the policy
    return order;
}

TEST(WarpSchedulers, IssueOrdersFollowTheirDefinitions) {
    // lrr: the warp after the last issuer, every cycle.
    EXPECT_EQ(issue_warps("lrr"), (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}));
    // gto: stay on the last issuer while it can issue; then the oldest.
    EXPECT_EQ(issue_warps("gto"), (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3}));
    // two_level (active set 2): round-robin inside {0,1}; finished warps are replaced by pending 2, 3.
    EXPECT_EQ(issue_warps("two_level"), (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3}));
}

TEST(WarpSchedulers, TwoLevelDemotesOnLongLatency) {
    // Warps 0,1 active, 2,3 pending. Cycle 0: w0 issues ld.global (long latency) and is demoted,
    // w2 promoted: active {1,2}. Cycle 1: w1 ld.global -> demoted, w3 promoted: active {2,3}.
    // Cycles 2, 3: w2, w3 issue their loads and return behind 0 and 1.
    const Kernel k = assemble(".param x\n.reg 2\nld.global r1, [x]\nnop\nexit\n", "tl.sasm");
    SimtParams p = a100_like();
    p.sm.sub_partitions = 1;
    p.sm.warp_scheduler = "two_level";
    p.sm.two_level_active_warps = 2;
    p.sm.record_issue_order = true;
    GlobalMemory mem;
    const std::uint32_t x = mem.allocate(4);
    const KernelStats s = launch(k, {1, 128}, {x}, mem, p);
    ASSERT_GE(s.issue_order.size(), 4u);
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(s.issue_order[static_cast<std::size_t>(i)].warp, i);
        EXPECT_EQ(s.issue_order[static_cast<std::size_t>(i)].pc, 0);
    }
    EXPECT_THROW(make_warp_scheduler("fifo", 2), std::invalid_argument);
}

TEST(SmTiming, TimingOnlyRunsGiveIdenticalCycles) {
    for (const char* file : {"saxpy.sasm", "gemm_smem.sasm", "gemm_mma.sasm", "reduce.sasm"}) {
        const Kernel k = assemble_file(kKernels + file);
        EXPECT_TRUE(k.fp_payload_skippable) << file << ": " << k.fp_dependence;
    }
    const Kernel k = assemble_file(kKernels + "gemm_smem.sasm");
    const int M = 32, N = 32, K = 64;
    auto run = [&](bool skip) {
        GlobalMemory mem;
        const std::uint32_t A = mem.allocate(4 * M * K), B = mem.allocate(4 * K * N), C = mem.allocate(4 * M * N);
        for (int i = 0; i < M * K; ++i) mem.store_f32(A + 4 * static_cast<std::uint32_t>(i), static_cast<float>(i % 7));
        for (int i = 0; i < K * N; ++i) mem.store_f32(B + 4 * static_cast<std::uint32_t>(i), static_cast<float>(i % 5));
        LaunchOptions o;
        o.skip_fp_payload = skip;
        return launch(k, {(M / 16) * (N / 16), 256}, {M, N, K, A, B, C}, mem, a100_like(2), nullptr, o);
    };
    const KernelStats full = run(false), fast = run(true);
    EXPECT_EQ(full.cycles, fast.cycles);
    EXPECT_EQ(full.issued, fast.issued);
    EXPECT_EQ(full.scoreboard_cycles, fast.scoreboard_cycles);
    // The other shipped kernels, with an L1 so that hits and misses are compared too.
    auto same = [&](const char* file, Dim dims, int words, auto make_args) {
        const Kernel kk = assemble_file(kKernels + file);
        KernelStats r[2];
        for (int skip = 0; skip < 2; ++skip) {
            GlobalMemory mem;
            const std::uint32_t base = mem.allocate(4 * static_cast<std::size_t>(words));
            for (int i = 0; i < words; ++i) mem.store_f32(base + 4 * static_cast<std::uint32_t>(i), 0.5f * static_cast<float>(i % 9));
            SimtParams p = a100_like(2);
            p.sm.l1.bytes = 64 * 1024;
            LaunchOptions o;
            o.skip_fp_payload = skip == 1;
            r[skip] = launch(kk, dims, make_args(base), mem, p, nullptr, o);
        }
        EXPECT_EQ(r[0].cycles, r[1].cycles) << file;
        EXPECT_EQ(r[0].issued, r[1].issued) << file;
        EXPECT_EQ(r[0].l1_hits, r[1].l1_hits) << file;
        EXPECT_EQ(r[0].pipeline_cycles, r[1].pipeline_cycles) << file;
    };
    same("saxpy.sasm", {5, 128}, 2048, [](std::uint32_t b) { return std::vector<std::uint32_t>{600, float_bits(2.0f), b, b + 4096}; });
    same("reduce.sasm", {3, 256}, 1024, [](std::uint32_t b) { return std::vector<std::uint32_t>{700, b, b + 3200}; });
    same("gemm_mma.sasm", {4, 32}, 4096, [](std::uint32_t b) { return std::vector<std::uint32_t>{32, 16, 64, b, b + 4096, b + 8192}; });
    // A kernel whose branch depends on a float cannot skip.
    const Kernel bad = assemble(".reg 2\nfadd r1, r1, 1.0\nsetp.gt.f32 p0, r1, 0.0\n@p0 exit\nexit\n", "bad.sasm");
    GlobalMemory mem;
    LaunchOptions o;
    o.skip_fp_payload = true;
    EXPECT_THROW(launch(bad, {1, 32}, {}, mem, a100_like(), nullptr, o), SimtError);
}

TEST(Kernels, SaxpyComputesAndCoalesces) {
    // n = 1000 in blocks of 128: 8 blocks, the last with 104 live threads (1000 - 7*128).
    const Kernel k = assemble_file(kKernels + "saxpy.sasm");
    GlobalMemory mem;
    const int n = 1000;
    const std::uint32_t x = mem.allocate(4 * n), y = mem.allocate(4 * n);
    for (int i = 0; i < n; ++i) {
        mem.store_f32(x + 4 * static_cast<std::uint32_t>(i), static_cast<float>(i));
        mem.store_f32(y + 4 * static_cast<std::uint32_t>(i), 1.0f);
    }
    const KernelStats s = launch(k, {8, 128}, {n, float_bits(2.0f), x, y}, mem, a100_like(2));
    for (int i = 0; i < n; ++i) ASSERT_EQ(mem.load_f32(y + 4 * static_cast<std::uint32_t>(i)), 2.0f * i + 1.0f) << i;
    // 32 warps; the 4th warp of the last block holds threads 992..1023: 8 live (992..999), 24 exit.
    // Global requests: 31 full warps x 3 (2 loads + 1 store) of 4 sectors each + 1 warp x 3 of 1 sector.
    EXPECT_EQ(s.global_requests, 32u * 3u);
    EXPECT_EQ(s.global_sectors, 31u * 3u * 4u + 3u * 1u);
    EXPECT_EQ(s.blocks, 8u);
    EXPECT_GT(s.cycles, 400u);  // at least one global round trip
    EXPECT_LE(s.achieved_occupancy, s.theoretical.occupancy);
}

TEST(Kernels, ReductionWithDivergentTail) {
    const Kernel k = assemble_file(kKernels + "reduce.sasm");
    GlobalMemory mem;
    const int n = 1000, blocks = 4;
    const std::uint32_t in = mem.allocate(4 * n), out = mem.allocate(4 * blocks);
    for (int i = 0; i < n; ++i) mem.store_f32(in + 4 * static_cast<std::uint32_t>(i), static_cast<float>(i % 13));
    const KernelStats s = launch(k, {blocks, 256}, {n, in, out}, mem, a100_like());
    for (int b = 0; b < blocks; ++b) {
        double expected = 0;
        for (int i = b * 256; i < std::min(n, (b + 1) * 256); ++i) expected += i % 13;
        EXPECT_FLOAT_EQ(mem.load_f32(out + 4 * static_cast<std::uint32_t>(b)), static_cast<float>(expected)) << b;
    }
    // The tail (s = 16, 8, 4, 2, 1) runs warp 0 with 16, 8, 4, 2 and 1 active lanes.
    for (int w : {1, 2, 4, 8, 16}) EXPECT_GT(s.lanes_histogram[static_cast<std::size_t>(w)], 0u) << w;
    EXPECT_LT(s.simd_efficiency, 1.0);
    EXPECT_GT(s.barrier_cycles, 0u);
}

TEST(Kernels, SharedMemoryGemmMatchesEigen) {
    const Kernel k = assemble_file(kKernels + "gemm_smem.sasm");
    const int M = 32, N = 48, K = 64;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> a(M, K), b(K, N);
    for (int i = 0; i < a.size(); ++i) a.data()[i] = dist(rng);
    for (int i = 0; i < b.size(); ++i) b.data()[i] = dist(rng);
    GlobalMemory mem;
    const std::uint32_t A = mem.allocate(4 * M * K), B = mem.allocate(4 * K * N), C = mem.allocate(4 * M * N);
    mem.write(A, a.data(), 4 * M * K);
    mem.write(B, b.data(), 4 * K * N);
    const KernelStats s = launch(k, {(M / 16) * (N / 16), 256}, {M, N, K, A, B, C}, mem, a100_like(2));
    const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> c = a * b;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
            EXPECT_NEAR(mem.load_f32(C + 4 * static_cast<std::uint32_t>(i * N + j)), c(i, j), 1e-4f) << i << "," << j;
    EXPECT_DOUBLE_EQ(s.simd_efficiency, 1.0);  // no divergence anywhere
    EXPECT_EQ(s.blocks, 6u);
}

TEST(Kernels, TensorCoreGemmMatchesEigen) {
    const Kernel k = assemble_file(kKernels + "gemm_mma.sasm");
    const int M = 32, N = 16, K = 64;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<Eigen::half> a_h(M * K), bt_h(N * K);
    Eigen::MatrixXf a(M, K), b(K, N);
    for (int i = 0; i < M; ++i)
        for (int kk = 0; kk < K; ++kk) {
            a_h[static_cast<std::size_t>(i * K + kk)] = Eigen::half(dist(rng));
            a(i, kk) = static_cast<float>(a_h[static_cast<std::size_t>(i * K + kk)]);
        }
    for (int j = 0; j < N; ++j)
        for (int kk = 0; kk < K; ++kk) {
            bt_h[static_cast<std::size_t>(j * K + kk)] = Eigen::half(dist(rng));
            b(kk, j) = static_cast<float>(bt_h[static_cast<std::size_t>(j * K + kk)]);
        }
    GlobalMemory mem;
    const std::uint32_t A = mem.allocate(2 * M * K), Bt = mem.allocate(2 * N * K), C = mem.allocate(4 * M * N);
    mem.write(A, a_h.data(), 2 * M * K);
    mem.write(Bt, bt_h.data(), 2 * N * K);
    launch(k, {(M / 16) * (N / 8), 32}, {M, N, K, A, Bt, C}, mem, a100_like());
    const Eigen::MatrixXf c = a * b;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
            EXPECT_NEAR(mem.load_f32(C + 4 * static_cast<std::uint32_t>(i * N + j)), c(i, j), 1e-4f) << i << "," << j;
}

TEST(Occupancy, AchievedOccupancyOfOneResidentWarp) {
    // One warp resident for the whole run on a 64-warp SM: achieved = 1/64 exactly.
    const Kernel k = assemble(".reg 2\nadd r1, r1, 1\nadd r1, r1, 1\nexit\n", "one.sasm");
    GlobalMemory mem;
    const KernelStats s = launch(k, {1, 32}, {}, mem, a100_like());
    EXPECT_DOUBLE_EQ(s.achieved_occupancy, 1.0 / 64.0);
    // Unlaunchable: 1024 threads x 128 registers.
    const Kernel big = assemble(".reg 128\nexit\n", "big.sasm");
    EXPECT_THROW(launch(big, {1, 1024}, {}, mem, a100_like()), SimtError);
}

TEST(SmTiming, EndlessLoopsAndFaultsStopWithTheLine) {
    const Kernel loop = assemble(".reg 1\nspin:\nbra spin\n", "spin.sasm");
    GlobalMemory mem;
    SimtParams p = a100_like();
    p.sm.max_cycles = 10000;
    EXPECT_THROW(launch(loop, {1, 32}, {}, mem, p), SimtError);
    EXPECT_THROW(run_functional(loop, mem, {1, 32}, {}, 1000), SimtError);
    const Kernel wild = assemble(".reg 2\nmov r0, 0x7ffffff0\nld.global r1, [r0]\nexit\n", "wild.sasm");
    try {
        launch(wild, {1, 32}, {}, mem, a100_like());
        ADD_FAILURE() << "no fault";
    } catch (const SimtError& e) {
        EXPECT_NE(std::string(e.what()).find("wild.sasm:3: ld.global: lane 0 address"), std::string::npos) << e.what();
    }
}

TEST(Occupancy, DispatcherAdmitsBlocksAsTheCalculatorSays) {
    // The 38-cycle dependent chain of DependentChainPaysTheLatency, 2 blocks of one warp, 1 SM.
    //   no shared memory: both resident (warp slots 0 and 1 -> sub-partitions 0 and 1): 38 cycles,
    //     2 warps resident throughout: achieved 2/64.
    //   .shared 100000 (+1 KB reserve -> 101120 B; 167936 / 101120 = 1 block per SM): the second
    //     block starts when the first ends: 76 cycles, 1 warp resident throughout: achieved 1/64.
    std::string chain;
    for (int i = 0; i < 10; ++i) chain += "add r1, r1, 1\n";
    chain += "exit\n";
    GlobalMemory mem;
    const KernelStats both = launch(assemble(".reg 2\n" + chain, "a.sasm"), {2, 32}, {}, mem, a100_like());
    EXPECT_EQ(both.theoretical.blocks_per_sm, 32);
    EXPECT_EQ(both.cycles, 38u);
    EXPECT_DOUBLE_EQ(both.achieved_occupancy, 2.0 / 64.0);
    const KernelStats serial = launch(assemble(".reg 2\n.shared 100000\n" + chain, "b.sasm"), {2, 32}, {}, mem, a100_like());
    EXPECT_EQ(serial.theoretical.blocks_per_sm, 1);
    EXPECT_EQ(serial.theoretical.limiters, (std::vector<std::string>{"shared_memory"}));
    EXPECT_EQ(serial.cycles, 76u);
    EXPECT_DOUBLE_EQ(serial.achieved_occupancy, 1.0 / 64.0);
    // Two SMs take one block each: back to 38.
    EXPECT_EQ(launch(assemble(".reg 2\n.shared 100000\n" + chain, "b.sasm"), {2, 32}, {}, mem, a100_like(2)).cycles, 38u);
}

TEST(SystemC, OneProcessPerSmGivesTheSameCyclesAsLaunch) {
    const Kernel k = assemble_file(kKernels + "saxpy.sasm");
    const int n = 4096;
    auto fill = [&](GlobalMemory& mem, std::uint32_t& x, std::uint32_t& y) {
        x = mem.allocate(4 * n);
        y = mem.allocate(4 * n);
        for (int i = 0; i < n; ++i) mem.store_f32(x + 4 * static_cast<std::uint32_t>(i), 1.0f * static_cast<float>(i));
    };
    // Blocks of 96 threads (3 warps) leave an uneven tail so that dispatch order matters.
    const Dim dims{(n + 95) / 96, 96};
    GlobalMemory m1;
    std::uint32_t x1, y1;
    fill(m1, x1, y1);
    const KernelStats reference = launch(k, dims, {n, float_bits(3.0f), x1, y1}, m1, a100_like(3));

    GlobalMemory m2;
    std::uint32_t x2, y2;
    fill(m2, x2, y2);
    FixedLatencyMemory port(a100_like().sm.global_latency);
    SimtChipModule chip("chip", 3);
    const KernelStats s = chip.launch(k, dims, {n, float_bits(3.0f), x2, y2}, m2, a100_like(3), &port);
    EXPECT_EQ(s.cycles, reference.cycles);
    EXPECT_EQ(s.issued, reference.issued);
    EXPECT_EQ(s.scoreboard_cycles, reference.scoreboard_cycles);
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(static_cast<double>(s.cycles), sc_core::SC_NS));
    for (int i = 0; i < n; ++i) ASSERT_EQ(m2.load_f32(y2 + 4 * static_cast<std::uint32_t>(i)), 3.0f * i) << i;
    // The module runs launch after launch (one elaboration per process): a second grid, its time
    // counted on from the first one's end.
    GlobalMemory m3;
    std::uint32_t x3, y3;
    fill(m3, x3, y3);
    const KernelStats again = chip.launch(k, dims, {n, float_bits(3.0f), x3, y3}, m3, a100_like(3), &port);
    EXPECT_EQ(again.cycles, reference.cycles);
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(static_cast<double>(2 * s.cycles), sc_core::SC_NS));
}

}  // namespace
}  // namespace accelsim::simt::timing_test
