// Vector memory ops (.v2 / .v4), fp16/bf16 conversions and the tensor-core issue counter, against
// values worked out by hand: IEEE bit patterns for the rounding cases, bank arithmetic for the
// shared-memory phases, 32-byte sectors for the global coalescing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "models/simt/shared_access.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::simt::isa_vector_cvt_test {
namespace {

SimtParams a100_like() {
    SimtParams p;
    p.sm.limits = *published_limits("sm_80");
    return p;
}

std::uint32_t bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float as_float(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

TEST(VectorMemory, V4AndV2RoundTripThroughGlobalAndShared) {
    // Lane t loads in[4t..4t+3] with one ld.global.v4 and stores them to shared slot 31 - t; after
    // the barrier it reads slot t (written by lane 31 - t), so out[4t..4t+3] = in[4(31-t)..+3].
    // The second part moves in[0..63] to out2 with .v2, unchanged.
    const char* src = R"(
.param in, out, out2
.reg 12
.shared 512
    mov r0, %tid
    shl r1, r0, 4               // 16 bytes per lane
    add r2, r1, in
    ld.global.v4 r4, [r2]
    sub r3, 31, r0
    shl r3, r3, 4
    st.shared.v4 [r3], r4
    bar.sync
    ld.shared.v4 r8, [r1]
    add r2, r1, out
    st.global.v4 [r2], r8
    shl r1, r0, 3               // 8 bytes per lane
    add r2, r1, in
    ld.global.v2 r4, [r2]
    add r2, r1, out2
    st.global.v2 [r2], r4
    exit
)";
    const Kernel k = assemble(src, "roundtrip.sasm");
    GlobalMemory mem;
    const std::uint32_t in = mem.allocate(512), out = mem.allocate(512), out2 = mem.allocate(256);
    for (std::uint32_t i = 0; i < 128; ++i) mem.store32(in + 4 * i, 1000 + i);
    run_functional(k, mem, {1, 32}, {in, out, out2});
    for (std::uint32_t t = 0; t < 32; ++t)
        for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(mem.load32(out + 16 * t + 4 * i), 1000 + 4 * (31 - t) + i);
    for (std::uint32_t i = 0; i < 64; ++i) EXPECT_EQ(mem.load32(out2 + 4 * i), 1000 + i);
}

TEST(VectorMemory, MisalignedVectorAccessFaultsWithFileAndLine) {
    const Kernel k4 = assemble(".param a\n.reg 6\nld.global.v4 r0, [a+8]\nexit\n", "mis4.sasm");
    const Kernel k2 = assemble(".param a\n.reg 6\nst.shared.v2 [4], r0\nexit\n", "mis2.sasm");
    GlobalMemory mem;
    const std::uint32_t a = mem.allocate(64);  // 256-aligned: a + 8 is 8- but not 16-byte aligned
    try {
        run_functional(k4, mem, {1, 32}, {a});
        FAIL() << "no fault";
    } catch (const SimtError& e) {
        EXPECT_NE(std::string(e.what()).find("mis4.sasm:3:"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("not 16-byte aligned"), std::string::npos) << e.what();
    }
    try {
        run_functional(k2, mem, {1, 32}, {a});
        FAIL() << "no fault";
    } catch (const SimtError& e) {
        EXPECT_NE(std::string(e.what()).find("mis2.sasm:3:"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("not 8-byte aligned"), std::string::npos) << e.what();
    }
    // The last 16 bytes of memory are fine; one word further is out of range.
    const Kernel end = assemble(".param a\n.reg 6\nld.global.v4 r0, [a]\nexit\n", "end.sasm");
    GlobalMemory small;
    const std::uint32_t b = small.allocate(16);
    EXPECT_NO_THROW(run_functional(end, small, {1, 1}, {b}));
    EXPECT_THROW(run_functional(end, small, {1, 1}, {b + 16}), SimtError);
}

TEST(VectorMemory, AssemblerChecksRegisterRanges) {
    EXPECT_THROW(assemble(".reg 6\nld.global.v4 r3, [r0]\n", "a.sasm"), AssemblyError);  // r3..r6 > .reg 6
    EXPECT_THROW(assemble(".reg 6\nst.global.v2 [r0], 5\n", "a.sasm"), AssemblyError);   // value must be a register
    EXPECT_THROW(assemble(".reg 6\nld.global.v3 r0, [r0]\n", "a.sasm"), AssemblyError);
    const Kernel k = assemble(".reg 8\nld.shared.v4 r2, [r0]\nst.global.v2 [r0], r6\n", "a.sasm");
    ASSERT_EQ(k.code[0].writes_count, 4);  // the scoreboard sees all destinations
    EXPECT_EQ(k.code[0].writes[3], 5);
    ASSERT_EQ(k.code[1].reads_count, 3);   // address and both values
    EXPECT_EQ(k.code[1].reads[2], 7);
}

TEST(VectorMemory, SharedWavefrontsMatchTheirDefinition) {
    // By definition: lanes split into phases of 32 / words lanes; a phase costs the most distinct
    // 4-byte words any one of the 32 banks (bank = word % 32) is asked for, counted here by brute
    // force over every word each lane touches. Patterns reach the window test, the one-word-per-
    // bank test and the exact count (strides, random words), with full and partial masks.
    auto by_definition = [](const std::array<std::uint32_t, 32>& a, std::uint32_t mask, int words) {
        const int per_phase = 32 / words;
        int total = 0;
        for (int first = 0; first < 32; first += per_phase) {
            int degree = 0;
            for (std::uint32_t bank = 0; bank < 32; ++bank) {
                std::vector<std::uint32_t> seen;
                for (int l = first; l < first + per_phase; ++l) {
                    if (!((mask >> l) & 1)) continue;
                    for (int i = 0; i < words; ++i) {
                        const std::uint32_t word = a[static_cast<std::size_t>(l)] / 4 + static_cast<std::uint32_t>(i);
                        if (word % 32 == bank && std::find(seen.begin(), seen.end(), word) == seen.end())
                            seen.push_back(word);
                    }
                }
                degree = std::max(degree, static_cast<int>(seen.size()));
            }
            total += degree;
        }
        return total;
    };
    std::mt19937 rng(15);
    for (int trial = 0; trial < 3000; ++trial) {
        const int words = trial % 2 == 0 ? 2 : 4;
        std::array<std::uint32_t, 32> a{};
        const std::uint32_t base = (rng() % 1024) * 16;
        const std::uint32_t stride = rng() % 40;
        for (int l = 0; l < 32; ++l) {
            const auto lane = static_cast<std::uint32_t>(l);
            std::uint32_t word = 0;
            switch (trial % 5) {
                case 0: word = base / 4 + lane * static_cast<std::uint32_t>(words); break;  // contiguous
                case 1: word = base / 4 + (rng() % 16) * static_cast<std::uint32_t>(words); break;
                case 2: word = base / 4 + lane * stride * static_cast<std::uint32_t>(words); break;  // strided
                case 3: word = base / 4 + (lane % 8) * 32 + (lane / 8) * static_cast<std::uint32_t>(words); break;
                default: word = (rng() % 256) * static_cast<std::uint32_t>(words); break;  // random, aligned
            }
            a[static_cast<std::size_t>(l)] = word * 4;
        }
        const std::uint32_t mask = trial % 3 == 0 ? static_cast<std::uint32_t>(rng()) | 1u : 0xffffffffu;
        ASSERT_EQ(shared_access_wavefronts(a, mask, words), by_definition(a, mask, words)) << "trial " << trial;
    }
}

TEST(VectorMemory, SharedWavefrontsSumThePhases) {
    std::array<std::uint32_t, 32> a{};
    auto lanes = [&](std::uint32_t stride, std::uint32_t modulo = 32) {
        for (std::uint32_t l = 0; l < 32; ++l) a[l] = 1024 + stride * (l % modulo);
    };
    // v4, lane l at 16 l: each phase of 8 lanes reads 128 consecutive bytes, one per bank: 4.
    lanes(16);
    EXPECT_EQ(shared_access_wavefronts(a, 0xffffffffu, 4), 4);
    // v4, lane l at 32 l: in a phase, lanes l and l + 4 hit banks 8(l%4)..8(l%4)+3 with different
    // words: degree 2 per phase, 8 wavefronts.
    lanes(32);
    EXPECT_EQ(shared_access_wavefronts(a, 0xffffffffu, 4), 8);
    // v4, lane l at 128 l: the 8 lanes of a phase all start in bank 0: degree 8, 32 wavefronts.
    lanes(128);
    EXPECT_EQ(shared_access_wavefronts(a, 0xffffffffu, 4), 32);
    // v4, every phase the same 128 bytes (lane l at 16 (l % 8)): phases are independent: 4.
    lanes(16, 8);
    EXPECT_EQ(shared_access_wavefronts(a, 0xffffffffu, 4), 4);
    // v4, one address for all lanes (broadcast): 1 per phase; only lanes 0 and 8 active: 2 phases.
    lanes(0);
    EXPECT_EQ(shared_access_wavefronts(a, 0xffffffffu, 4), 4);
    EXPECT_EQ(shared_access_wavefronts(a, 0x101u, 4), 2);
    // v2, lane l at 8 l: 2 phases of 16 lanes x 8 bytes: 2.  At 16 l: lanes l, l + 8 collide: 4.
    lanes(8);
    EXPECT_EQ(shared_access_wavefronts(a, 0xffffffffu, 2), 2);
    lanes(16);
    EXPECT_EQ(shared_access_wavefronts(a, 0xffffffffu, 2), 4);
    // Scalar accesses keep the one-phase conflict degree: stride 128 is 32-way.
    lanes(128);
    EXPECT_EQ(shared_access_wavefronts(a, 0xffffffffu, 1), 32);
    EXPECT_EQ(shared_access_wavefronts(a, 0u, 4), 0);
}

TEST(VectorMemory, TimingUsesWavefrontsSectorsAndTheWholeScoreboardRange) {
    // One warp. mov r0 (0) | shl r0 (4, RAW on r0, INT latency 4) | ld.shared.v4 r4 at 8:
    // conflict-free, 4 wavefronts, ready at 8 + 23 + 4 - 1 = 34 | add r8, r7 waits for the last
    // register of the range: 34 | exit 35 | done 36. With r4 (the first) instead: the same 36.
    for (const char* use : {"r7", "r4"}) {
        const Kernel k = assemble(std::string(".reg 9\n.shared 512\nmov r0, %tid\nshl r0, r0, 4\n"
                                              "ld.shared.v4 r4, [r0]\nadd r8, ") + use + ", 1\nexit\n", "sb.sasm");
        GlobalMemory mem;
        const KernelStats s = launch(k, {1, 32}, {}, mem, a100_like());
        EXPECT_EQ(s.cycles, 36u) << use;
        EXPECT_EQ(s.shared_requests, 1u);
        EXPECT_EQ(s.shared_wavefronts, 4u);
    }
    // Global: 32 lanes x 16 consecutive bytes = 512 B = 16 sectors; x 8 bytes = 8 sectors; v4 at a
    // lane stride of 32 bytes: one sector per lane, 32.
    auto sectors = [](int shift, const char* width) {
        const Kernel k = assemble(std::string(".param a\n.reg 8\nmov r0, %tid\nshl r0, r0, ") + std::to_string(shift) +
                                      "\nadd r0, r0, a\nld.global." + width + " r4, [r0]\nexit\n", "g.sasm");
        GlobalMemory mem;
        const std::uint32_t a = mem.allocate(1024);
        FixedLatencyMemory port(100);
        const KernelStats s = launch(k, {1, 32}, {a}, mem, a100_like(), &port);
        EXPECT_EQ(port.read_sectors(), s.global_sectors);
        return s.global_sectors;
    };
    EXPECT_EQ(sectors(4, "v4"), 16u);
    EXPECT_EQ(sectors(3, "v2"), 8u);
    EXPECT_EQ(sectors(5, "v4"), 32u);
}

TEST(Conversions, PackRoundsToNearestEvenAndUnpacksExactly) {
    // One lane; x, y are fp32 bit patterns. Results stored to out[0..].
    const char* src = R"(
.param x, y, h, out
.reg 8
    cvt.f16x2.f32 r0, x, y
    st.global [out], r0
    cvt.bf16x2.f32 r1, x, y
    st.global [out+4], r1
    cvt.f32.f16.lo r2, h
    st.global [out+8], r2
    cvt.f32.f16.hi r3, h
    st.global [out+12], r3
    cvt.f32.bf16.lo r4, h
    st.global [out+16], r4
    cvt.f32.bf16.hi r5, h
    st.global [out+20], r5
    exit
)";
    const Kernel k = assemble(src, "cvt.sasm");
    struct Case {
        float x, y;
        std::uint32_t f16x2, bf16x2;
    };
    // fp16 has 10 fraction bits: 1 + 2^-11 lies halfway between 1 (0x3c00, even) and 1 + 2^-10
    // (0x3c01): ties to even gives 0x3c00; 1 + 3*2^-11 lies between 0x3c01 and 0x3c02 (even): 0x3c02.
    // bf16 has 7: 1 + 2^-8 -> 0x3f80, 1 + 3*2^-8 -> 0x3f82 likewise; 1 + 2^-11 is below half an
    // ulp of bf16 -> 0x3f80; 1 + 3*2^-11 too (3*2^-11 < 2^-8) -> 0x3f80.
    const float t1 = 1.0f + 0x1p-11f, t3 = 1.0f + 3 * 0x1p-11f, b1 = 1.0f + 0x1p-8f, b3 = 1.0f + 3 * 0x1p-8f;
    const Case cases[] = {
        {1.0f, -2.0f, 0xc0003c00u, 0xc0003f80u},  // exact; lo in the low half
        {t1, t3, 0x3c023c00u, 0x3f803f80u},
        // fp16: b1 = 1 + 2^-8 is exact (0x3c04), b3 = 1 + 3*2^-8 = 0x3c0c.
        {b1, b3, 0x3c0c3c04u, 0x3f823f80u},
        // 65520 is halfway between 65504 (0x7bff, odd) and 2^16 (overflow): ties to even -> inf
        // (0x7c00); 65519 rounds down to 65504. In bf16 65520 = 0xff.f0 x 2^8 -> 0x4780 (65536),
        // 65519 -> 0x4780 too (0x477f = 65280 is further).
        {65520.0f, 65519.0f, 0x7bff7c00u, 0x47804780u},
        // Smallest fp16 subnormal 2^-24 -> 0x0001; half of it (2^-25) ties to even -> 0 (sign kept: -0 = 0x8000).
        {0x1p-24f, -0x1p-25f, 0x80000001u, 0xb3003380u},
    };
    for (const Case& c : cases) {
        GlobalMemory mem;
        const std::uint32_t out = mem.allocate(64);
        run_functional(k, mem, {1, 1}, {bits(c.x), bits(c.y), 0xc0003c00u, out});
        EXPECT_EQ(mem.load32(out), c.f16x2) << std::hex << c.x << " " << c.y << " got " << mem.load32(out);
        EXPECT_EQ(mem.load32(out + 4), c.bf16x2) << std::hex << c.x << " " << c.y << " got " << mem.load32(out + 4);
        // h = 0xc0003c00: as fp16 halves lo 1.0, hi -2.0; as bf16 halves lo 0x3c00 = 2^-7 = 0.0078125, hi -2.0.
        EXPECT_EQ(as_float(mem.load32(out + 8)), 1.0f);
        EXPECT_EQ(as_float(mem.load32(out + 12)), -2.0f);
        EXPECT_EQ(as_float(mem.load32(out + 16)), 0.0078125f);
        EXPECT_EQ(as_float(mem.load32(out + 20)), -2.0f);
    }
    // An fp16 subnormal unpacks exactly: 0x0001 = 2^-24.
    GlobalMemory mem;
    const std::uint32_t out = mem.allocate(64);
    run_functional(k, mem, {1, 1}, {0, 0, 0x00010001u, out});
    EXPECT_EQ(as_float(mem.load32(out + 8)), 0x1p-24f);
    EXPECT_THROW(assemble(".reg 2\ncvt.f16.f32 r0, r1\n", "bad.sasm"), AssemblyError);
    EXPECT_THROW(assemble(".reg 2\ncvt.f16x2.f32 r0, r1\n", "bad.sasm"), AssemblyError);  // needs two sources
}

TEST(Conversions, PrmtSelectsBytes) {
    // {b, a} = bytes 0x88776655'44332211 (a = 0x44332211, b = 0x88776655).
    const Kernel k = assemble(".param out\n.reg 4\nmov r0, 0x44332211\nmov r1, 0x88776655\n"
                              "prmt r2, r0, r1, 0x5410\nst.global [out], r2\n"
                              "prmt r2, r0, r1, 0x7632\nst.global [out+4], r2\n"
                              "prmt r2, r0, r1, 0x0f0c\nst.global [out+8], r2\nexit\n", "prmt.sasm");
    GlobalMemory mem;
    const std::uint32_t out = mem.allocate(16);
    run_functional(k, mem, {1, 1}, {out});
    EXPECT_EQ(mem.load32(out), 0x66552211u);      // low halves: a.lo in the low half, b.lo high
    EXPECT_EQ(mem.load32(out + 4), 0x88774433u);  // high halves
    // c = 0x0f0c, nibbles from byte 0 up: 0xc (byte 4 = 0x55, sign replicated: 0x00), 0x0 (0x11),
    // 0xf (byte 7 = 0x88, sign replicated: 0xff), 0x0 (0x11).
    EXPECT_EQ(mem.load32(out + 8), 0x11ff1100u);
}

// A small GEMM-like kernel using every new piece: v4/v2 global loads, v4 shared store and load,
// two mmas, cvt pack and unpack, a v2 global store.
const char* kMixed = R"(
.param a, b, c
.reg 24
.shared 512
    mov r0, %laneid
    shl r1, r0, 4
    add r2, r1, a
    ld.global.v4 r4, [r2]
    shl r3, r0, 3
    add r2, r3, b
    ld.global.v2 r8, [r2]
    xor r20, r1, 16
    st.shared.v4 [r20], r4
    bar.sync
    ld.shared.v4 r4, [r1]
    mma.m16n8k16.f16 r12, r4, r8, r12
    mma.m16n8k16.f16 r12, r4, r8, r12
    cvt.f16x2.f32 r16, r12, r13
    cvt.f32.f16.hi r17, r16
    add r2, r3, c
    st.global.v2 [r2], r16
    exit
)";

TEST(Conversions, TimingOnlySkipGivesIdenticalCyclesAndCountsMma) {
    const Kernel k = assemble(kMixed, "mixed.sasm");
    ASSERT_TRUE(k.fp_payload_skippable) << k.fp_dependence;
    for (const Instruction& in : k.code) {
        if (in.op == Opcode::cvt || in.op == Opcode::mma) {
            EXPECT_TRUE(in.fp_payload) << in.line;
        }
    }
    auto run = [&](bool skip) {
        GlobalMemory mem;
        const std::uint32_t a = mem.allocate(512 * 8), b = mem.allocate(256 * 8), c = mem.allocate(256 * 8);
        for (std::uint32_t i = 0; i < 512 * 8 / 4; ++i) mem.store32(a + 4 * i, 0x3c003c00u);  // fp16 1.0 pairs
        for (std::uint32_t i = 0; i < 256 * 8 / 4; ++i) mem.store32(b + 4 * i, 0x3c003c00u);
        FixedLatencyMemory port(200);
        const KernelStats s = launch(k, {1, 256}, {a, b, c}, mem, a100_like(), &port, {skip});
        // Full run: every product is 1, so two mmas give C = 2 * 16 = 32 everywhere; packed 0x5000
        // (fp16 32.0) twice; hi half unpacked: 32.0f.
        if (!skip) {
            EXPECT_EQ(mem.load32(c), 0x50005000u);
            EXPECT_EQ(as_float(mem.load32(c + 4)), 32.0f);
        }
        return s;
    };
    const KernelStats full = run(false), skipped = run(true);
    EXPECT_EQ(full.cycles, skipped.cycles);
    EXPECT_EQ(full.issued, skipped.issued);
    EXPECT_EQ(full.shared_wavefronts, skipped.shared_wavefronts);
    EXPECT_EQ(full.global_sectors, skipped.global_sectors);
    EXPECT_EQ(full.mma_issued, 16u);  // 8 warps x 2
    EXPECT_EQ(skipped.mma_issued, 16u);
}

}  // namespace
}  // namespace accelsim::simt::isa_vector_cvt_test
