#pragma once
// Kernels shared by the m16n8k32 mma tests (int8 and fp8: one fragment layout, PTX ISA
// 9.7.14.5.10).
#include <cstdint>
#include <string>

#include "models/simt/simt_gpu.h"

namespace accelsim::simt::test {

// D = A(16x32 8-bit, row-major) * B(32x8 8-bit, stored column-major: n rows of 32 k) + C(16x8
// 32-bit). Each lane loads its fragments straight from the PTX layout: A register i holds row
// g + 8 (i & 1), bytes 4t + 16 (i >> 1) ..+3; B register i holds column g, k = 4t + 16 i ..+3; C
// register i is (g + 8 (i >> 1), 2t + (i & 1)). `mnemonic` is the mma's spelling.
inline std::string mma_m16n8k32_source(const std::string& mnemonic) {
    std::string s = R"(
    .param A, B, C, D
    .reg 20
    mov r0, %laneid
    shr r1, r0, 2             // g
    and r2, r0, 3             // t
    shl r3, r1, 5             // g * 32 bytes (one A row, one B column)
    shl r4, r2, 2             // t * 4 bytes (4 8-bit values)
    add r5, r3, r4
    add r10, r5, B
    add r5, r5, A
    ld.global r6, [r5]        // a0..a3    (g, 4t..)
    ld.global r7, [r5+256]    // a4..a7    (g+8, 4t..)
    ld.global r8, [r5+16]     // a8..a11   (g, 4t+16..)
    ld.global r9, [r5+272]    // a12..a15  (g+8, 4t+16..)
    ld.global r11, [r10]      // b0..b3 (k=4t.., n=g)
    ld.global r12, [r10+16]   // b4..b7 (k=4t+16.., n=g)
    shl r13, r2, 3            // t * 8 bytes (2 32-bit values)
    add r13, r13, r3          // + g * 32 bytes (one row of 8 32-bit values)
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
    s.replace(s.find("MMA"), 3, mnemonic);
    return s;
}

// Runs a mma_m16n8k32_source kernel with one warp: A as 16 x 32 bytes (row-major), B transposed as
// 8 x 32 bytes, C as 16 x 8 32-bit values; D's 16 x 8 32-bit values into d.
template <class F8, class Word>
void run_mma_m16n8k32(const Kernel& k, F8 a_byte, F8 b_byte, const Word* c, Word* d) {
    std::uint8_t a8[16 * 32], bt8[8 * 32];
    for (int i = 0; i < 16; ++i)
        for (int kk = 0; kk < 32; ++kk) a8[i * 32 + kk] = a_byte(i, kk);
    for (int kk = 0; kk < 32; ++kk)
        for (int n = 0; n < 8; ++n) bt8[n * 32 + kk] = b_byte(kk, n);
    GlobalMemory mem;
    const std::uint32_t A = mem.allocate(512), B = mem.allocate(256), C = mem.allocate(512), D = mem.allocate(512);
    mem.write(A, a8, sizeof a8);
    mem.write(B, bt8, sizeof bt8);
    mem.write(C, c, 512);
    launch(k, {1, 32}, {A, B, C, D}, mem, SimtParams{});
    mem.read(D, d, 512);
}

// `count` independent mmas (distinct accumulators) from one warp, then exit.
inline Kernel independent_mmas(const char* mnemonic, int count) {
    std::string src = ".reg " + std::to_string(6 + 4 * count) + "\n";
    for (int i = 0; i < count; ++i) {
        const std::string d = "r" + std::to_string(6 + 4 * i);
        src += std::string(mnemonic) + " " + d + ", r0, r4, " + d + "\n";
    }
    src += "exit\n";
    return assemble(src, "mmas.sasm");
}

}  // namespace accelsim::simt::test
