// The sm_90 operations (docs/simt-isa.md, "Hopper"): wgmma values against Eigen, wgmma, TMA and
// mbarrier timing against hand-worked cycle counts, and their faults. Timing uses H100-like SM
// parameters: the tensor core of a sub-partition does one m16n8k16 (2048 MACs) every 4 cycles
// (2048 MACs per SM cycle, h100.json), latency 32; the shared-memory port moves 32 banks x 4 B =
// 128 B per cycle; global memory is a fixed 400-cycle latency, sectors sent 4 per cycle.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "models/common/dtype.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::simt::hopper_test {
namespace {

SimtParams h100_like() {
    SimtParams p;
    p.sms = 1;
    p.sm.limits = *published_limits("sm_90");
    p.sm.tensor.initiation_interval = 4;
    return p;
}

std::uint16_t to_bits(float f, MmaType type) {
    if (type == MmaType::f16) return Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(f));
    return Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(f));
}
float from_bits(std::uint16_t b, MmaType type) {
    if (type == MmaType::f16) return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(b));
    return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(b));
}

// One warpgroup: thread 0 sets up the mbarrier at `bar` and copies A (64 x 16, pitch 32 B) and B
// (16 x N, pitch 2N B) with two TMA boxes; everyone waits for the barrier's phase 0, then issues
// `count` wgmma.m64nNk16 on D = 1.0 and stores D (fp32, 64 x N row-major) from the accumulator
// layout: register 4j+i of lane (g, t) in warp q is row 16q + g + 8 (i >= 2), column 8j + 2t + (i & 1).
// types "A.B" (e4m3, e5m2, s8): the 8-bit wgmma.m64nNk32.A.B instead, A 64 x 32 bytes (pitch 32)
// and B transposed, N x 32 bytes (pitch 32; PTX wants 8-bit B K-major), the same 2048 + 32 N bytes;
// s8 accumulates from D = 3 (s32). b_k_major (16-bit): B transposed as for 8-bit, N x 16 values
// (pitch 32), read with imm-trans-b = 0.
std::string wgmma_kernel(int n_dim, const std::string& types, int count, bool store = true, bool b_k_major = false) {
    const int acc = n_dim / 2, b_smem = 2048, bar = b_smem + 32 * n_dim;
    const bool eight_bit = types.find('.') != std::string::npos;
    const bool b_rows_n = eight_bit || b_k_major;
    const std::string b_box = b_rows_n ? std::to_string(n_dim) + "x32" : "16x" + std::to_string(2 * n_dim);
    const std::string b_pitch = b_rows_n ? "32" : std::to_string(2 * n_dim);
    const int t0 = acc;  // scratch registers after the accumulators
    std::string s = ".param A, B, D\n.reg " + std::to_string(acc + 6) + "\n.shared " + std::to_string(bar + 8) + "\n";
    auto r = [](int i) { return "r" + std::to_string(i); };
    s += "mov " + r(t0) + ", %tid\nsetp.eq.s32 p0, " + r(t0) + ", 0\n";
    s += "@p0 mbarrier.init [" + std::to_string(bar) + "], 1\nbar.sync\n";
    s += "@p0 mbarrier.arrive.expect_tx [" + std::to_string(bar) + "], " + std::to_string(2048 + 32 * n_dim) + "\n";
    s += "mov " + r(t0 + 1) + ", " + std::to_string(bar) + "\n";
    s += "@p0 cp.async.bulk.tensor.2d.64x32 [0], A, 32, " + r(t0 + 1) + "\n";
    s += "@p0 cp.async.bulk.tensor.2d." + b_box + " [" + std::to_string(b_smem) + "], B, " + b_pitch + ", " + r(t0 + 1) + "\n";
    s += "mbarrier.wait.parity [" + std::to_string(bar) + "], 0\n";
    const std::string init = types == "s8.s8" ? "3" : "1.0";
    for (int i = 0; i < acc; ++i) s += "mov " + r(i) + ", " + init + "\n";
    s += "mov " + r(t0 + 2) + ", 0\nmov " + r(t0 + 3) + ", " + std::to_string(b_smem) + "\n";
    s += "wgmma.fence\n";
    const std::string mma = "wgmma.mma_async.m64n" + std::to_string(n_dim) + (eight_bit ? "k32." : "k16.") + types;
    for (int i = 0; i < count; ++i)
        s += mma + " r0, " + r(t0 + 2) + ", " + r(t0 + 3) + ", 32, " + b_pitch + (b_k_major ? ", 0" : "") + "\n";
    s += "wgmma.commit_group\nwgmma.wait_group 0\n";
    if (!store) return s + "exit\n";
    // base = D + ((16q + g) N + 2t) 4
    s += "shr " + r(t0 + 1) + ", " + r(t0) + ", 5\nshl " + r(t0 + 1) + ", " + r(t0 + 1) + ", 4\n";  // 16q
    s += "and " + r(t0 + 2) + ", " + r(t0) + ", 31\nshr " + r(t0 + 3) + ", " + r(t0 + 2) + ", 2\n";  // g
    s += "add " + r(t0 + 1) + ", " + r(t0 + 1) + ", " + r(t0 + 3) + "\nmul " + r(t0 + 1) + ", " + r(t0 + 1) + ", " +
         std::to_string(n_dim) + "\n";
    s += "and " + r(t0 + 3) + ", " + r(t0 + 2) + ", 3\nshl " + r(t0 + 3) + ", " + r(t0 + 3) + ", 1\n";  // 2t
    s += "add " + r(t0 + 1) + ", " + r(t0 + 1) + ", " + r(t0 + 3) + "\nshl " + r(t0 + 1) + ", " + r(t0 + 1) + ", 2\n";
    s += "add " + r(t0 + 1) + ", " + r(t0 + 1) + ", D\n";
    for (int j = 0; j < n_dim / 8; ++j)
        for (int i = 0; i < 4; ++i) {
            const int offset = ((i >= 2 ? 8 * n_dim : 0) + 8 * j + (i & 1)) * 4;
            s += "st.global [" + r(t0 + 1) + "+" + std::to_string(offset) + "], " + r(4 * j + i) + "\n";
        }
    return s + "exit\n";
}

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void check_wgmma_values(int n_dim, MmaType type, int count, bool b_k_major = false) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    GlobalMemory mem;
    const std::uint32_t a = mem.allocate(64 * 16 * 2), b = mem.allocate(16 * n_dim * 2), d = mem.allocate(64 * n_dim * 4);
    Matrix A(64, 16), B(16, n_dim);
    for (int i = 0; i < 64; ++i)
        for (int k = 0; k < 16; ++k) {
            const std::uint16_t h = to_bits(uniform(rng), type);
            std::memcpy(mem.data() + a + (i * 16 + k) * 2, &h, 2);
            A(i, k) = from_bits(h, type);
        }
    for (int k = 0; k < 16; ++k)
        for (int j = 0; j < n_dim; ++j) {
            const std::uint16_t h = to_bits(uniform(rng), type);
            std::memcpy(mem.data() + b + (b_k_major ? j * 16 + k : k * n_dim + j) * 2, &h, 2);
            B(k, j) = from_bits(h, type);
        }
    const Kernel k = assemble(wgmma_kernel(n_dim, mma_type_name(type), count, true, b_k_major), "wgmma.sasm");
    launch(k, {1, 128}, {a, b, d}, mem, h100_like());
    // Eigen: D = 1 + count x A B. Products of 16-bit values are exact in fp32; the bound is the fp32
    // accumulation of 16 count products in any order.
    const Matrix ref = (A * B * static_cast<float>(count)).array() + 1.0f;
    const Matrix mag = (A.cwiseAbs() * B.cwiseAbs() * static_cast<float>(count)).array() + 1.0f;
    for (int i = 0; i < 64; ++i)
        for (int j = 0; j < n_dim; ++j)
            ASSERT_NEAR(mem.load_f32(d + (i * n_dim + j) * 4), ref(i, j), 16.0 * count * 0x1p-24 * mag(i, j) + 1e-6)
                << "row " << i << " column " << j;
}

TEST(Wgmma, ValuesMatchEigen) {
    check_wgmma_values(128, MmaType::bf16, 1);
    check_wgmma_values(256, MmaType::f16, 2);
    check_wgmma_values(8, MmaType::bf16, 3);
}

TEST(Wgmma, KMajorBMatchesEigen) {
    // imm-trans-b = 0: B stored N x K (as a convolution's weights are), the same product.
    check_wgmma_values(128, MmaType::bf16, 1, true);
    check_wgmma_values(256, MmaType::f16, 2, true);
    check_wgmma_values(8, MmaType::f16, 3, true);
}

std::uint64_t wgmma_cycles(int n_dim, int count, bool b_k_major = false) {
    GlobalMemory mem;
    const std::uint32_t a = mem.allocate(64 * 16 * 2), b = mem.allocate(16 * n_dim * 2);
    const Kernel k = assemble(wgmma_kernel(n_dim, "bf16", count, false, b_k_major), "wgmma.sasm");
    const KernelStats s = launch(k, {1, 128}, {a, b, 0}, mem, h100_like());
    EXPECT_EQ(s.mma_issued, static_cast<std::uint64_t>(4 * count * n_dim / 8));  // m16n8k16 equivalents
    return s.cycles;
}

TEST(Wgmma, TakesItsMacsAtTheConfiguredRate) {
    // m64n128k16 = 131072 MACs; at 2048 MACs per SM cycle that is 64 cycles: each warp's 16 rows
    // (32768 MACs) on its sub-partition's tensor core at 512 MACs per cycle. Its operands are
    // 2 KB of A + 4 KB of B = 48 cycles of the 128 B/cycle port: compute-bound, so every further
    // wgmma in the chain adds 64 cycles.
    const std::uint64_t one = wgmma_cycles(128, 1);
    EXPECT_EQ(wgmma_cycles(128, 2) - one, 64u);
    EXPECT_EQ(wgmma_cycles(128, 5) - one, 4u * 64u);
    // m64n256k16: 128 cycles of compute, 2 KB + 8 KB = 80 port cycles.
    EXPECT_EQ(wgmma_cycles(256, 3) - wgmma_cycles(256, 1), 2u * 128u);
    // B K-major moves the same bytes through the port: the same 64 cycles per m64n128k16.
    EXPECT_EQ(wgmma_cycles(128, 2, true) - wgmma_cycles(128, 1, true), 64u);
}

TEST(Wgmma, SharedMemoryOperandsBoundSmallN) {
    // m64n8k16: 4 cycles of compute per warp, but each warp reads 512 B of A and a quarter of
    // B's 256 B = 576 B = 5 port cycles (rounded up per warp): the four warps take 20 cycles of
    // the SM's port per wgmma, so the chain advances by 20 cycles, not 4.
    EXPECT_EQ(wgmma_cycles(8, 2) - wgmma_cycles(8, 1), 20u);
    EXPECT_EQ(wgmma_cycles(8, 2, true) - wgmma_cycles(8, 1, true), 20u);  // the same 576 B K-major
}

// ---- The 8-bit forms, wgmma.mma_async.m64nNk32 (PTX ISA 9.7.15.5.2): fp8 .e4m3 / .e5m2 (A's and
// B's types independent) into fp32, .s8 x .s8 into s32, both operands K-major.

DType fp8_dtype(MmaType type) { return type == MmaType::e4m3 ? DType::fp8_e4m3 : DType::fp8_e5m2; }

// A (64 x 32) and B (32 x N) of random fp8 codes in [-1, 1] (B stored transposed), `count` wgmmas
// on D = 1; D against Eigen's fp32 D = 1 + count A B of the codes' values in `encoding`.
// Products of two fp8 values are exact in fp32; the bound is the fp32 accumulation of 32 count
// products in any order.
void check_wgmma_fp8_values(int n_dim, MmaType a_type, MmaType b_type, int count, Fp8Encoding encoding) {
    std::mt19937 rng(13);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    GlobalMemory mem;
    const std::uint32_t a = mem.allocate(64 * 32), b = mem.allocate(32 * n_dim), d = mem.allocate(64 * n_dim * 4);
    Matrix A(64, 32), B(32, n_dim);
    for (int i = 0; i < 64; ++i)
        for (int k = 0; k < 32; ++k) {
            const std::uint8_t code = fp8_encode(uniform(rng), fp8_dtype(a_type), Fp8Overflow::saturate, encoding);
            mem.data()[a + i * 32 + k] = code;
            A(i, k) = fp8_decode(code, fp8_dtype(a_type), encoding);
        }
    for (int j = 0; j < n_dim; ++j)
        for (int k = 0; k < 32; ++k) {
            const std::uint8_t code = fp8_encode(uniform(rng), fp8_dtype(b_type), Fp8Overflow::saturate, encoding);
            mem.data()[b + j * 32 + k] = code;  // B^T: row j holds column j of B
            B(k, j) = fp8_decode(code, fp8_dtype(b_type), encoding);
        }
    const std::string types = std::string(mma_type_name(a_type)) + "." + mma_type_name(b_type);
    const Kernel k = assemble(wgmma_kernel(n_dim, types, count), "wgmma8.sasm");
    SimtParams params = h100_like();
    params.sm.fp8_encoding = encoding;
    launch(k, {1, 128}, {a, b, d}, mem, params);
    const Matrix ref = (A * B * static_cast<float>(count)).array() + 1.0f;
    const Matrix mag = (A.cwiseAbs() * B.cwiseAbs() * static_cast<float>(count)).array() + 1.0f;
    for (int i = 0; i < 64; ++i)
        for (int j = 0; j < n_dim; ++j)
            ASSERT_NEAR(mem.load_f32(d + (i * n_dim + j) * 4), ref(i, j), 32.0 * count * 0x1p-24 * mag(i, j) + 1e-6)
                << types << " row " << i << " column " << j;
}

TEST(Wgmma8bit, Fp8ValuesMatchEigenOnTheSameFp8Inputs) {
    check_wgmma_fp8_values(128, MmaType::e4m3, MmaType::e4m3, 1, Fp8Encoding::ocp);
    check_wgmma_fp8_values(256, MmaType::e5m2, MmaType::e5m2, 2, Fp8Encoding::ocp);
    // PTX allows .atype != .btype for fp8: A e4m3, B e5m2 (and the other way round).
    check_wgmma_fp8_values(64, MmaType::e4m3, MmaType::e5m2, 3, Fp8Encoding::ocp);
    check_wgmma_fp8_values(8, MmaType::e5m2, MmaType::e4m3, 1, Fp8Encoding::ocp);
    // The operands are read in the SM's encoding (sm.fp8_encoding). Only mi300x (gfx942, not a
    // Hopper target) uses FNUZ, so the Hopper GEMM never meets it; the instruction itself honours
    // it (FNUZ e4m3 is OCP's value halved: a decoder mix-up fails by far more than the bound).
    check_wgmma_fp8_values(32, MmaType::e4m3, MmaType::e5m2, 1, Fp8Encoding::fnuz);
}

TEST(Wgmma8bit, S8IsExactAgainstEigensIntegerProduct) {
    // Codes over the whole int8 range, D = 3 + 2 A B in int32 (32 products of at most 2^14 each).
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> value(-128, 127);
    const int n_dim = 48;  // .s8 allows N = 8, 16, 24 and multiples of 16
    GlobalMemory mem;
    const std::uint32_t a = mem.allocate(64 * 32), b = mem.allocate(32 * n_dim), d = mem.allocate(64 * n_dim * 4);
    Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> A(64, 32), B(32, n_dim);
    for (int i = 0; i < 64; ++i)
        for (int k = 0; k < 32; ++k) {
            A(i, k) = value(rng);
            mem.data()[a + i * 32 + k] = static_cast<std::uint8_t>(A(i, k));
        }
    for (int j = 0; j < n_dim; ++j)
        for (int k = 0; k < 32; ++k) {
            B(k, j) = value(rng);
            mem.data()[b + j * 32 + k] = static_cast<std::uint8_t>(B(k, j));
        }
    launch(assemble(wgmma_kernel(n_dim, "s8.s8", 2), "wgmma_s8.sasm"), {1, 128}, {a, b, d}, mem, h100_like());
    const Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> ref = (A * B * 2).array() + 3;
    for (int i = 0; i < 64; ++i)
        for (int j = 0; j < n_dim; ++j)
            ASSERT_EQ(static_cast<std::int32_t>(mem.load32(d + (i * n_dim + j) * 4)), ref(i, j)) << "row " << i << " column " << j;
}

// h100's 8-bit rates: 4096 fp8 / int8 MACs per SM cycle = one m16n8k32 (4096 MACs) every 4 cycles
// per sub-partition (sm_spec.cpp); e5m2_interval 8 models a chip whose e5m2 rate is half.
std::uint64_t wgmma8_cycles(int n_dim, const std::string& types, int count, int e5m2_interval = 4) {
    GlobalMemory mem;
    const std::uint32_t a = mem.allocate(64 * 32), b = mem.allocate(32 * n_dim);
    SimtParams params = h100_like();
    params.sm.tensor_s8.initiation_interval = 4;
    params.sm.tensor_e4m3.initiation_interval = 4;
    params.sm.tensor_e5m2.initiation_interval = e5m2_interval;
    const KernelStats s = launch(assemble(wgmma_kernel(n_dim, types, count, false), "wgmma8.sasm"), {1, 128}, {a, b, 0}, mem, params);
    EXPECT_EQ(s.mma_issued, static_cast<std::uint64_t>(4 * count * n_dim / 8));  // m16n8k32 equivalents
    return s.cycles;
}

TEST(Wgmma8bit, TakesItsMacsAtTheTypesRate) {
    // m64n128k32 = 262144 MACs; each warp's 16 rows (65536 MACs) at 1024 MACs per cycle on its
    // sub-partition = 64 cycles (N x II / 8). Operands: 16 x 32 B of A + a quarter of B's
    // 128 x 32 B = 1536 B per warp, 48 cycles of the 128 B/cycle port for the four warps:
    // compute-bound, each further wgmma adds 64 cycles: the 16-bit m64n128k16's time for twice the MACs.
    for (const char* types : {"e4m3.e4m3", "s8.s8"}) {
        const std::uint64_t one = wgmma8_cycles(128, types, 1);
        EXPECT_EQ(wgmma8_cycles(128, types, 2) - one, 64u) << types;
        EXPECT_EQ(wgmma8_cycles(128, types, 4) - one, 3u * 64u) << types;
    }
    // At half the e5m2 rate (II 8) a mixed e4m3 x e5m2 wgmma runs at the slower type's: 128 cycles.
    EXPECT_EQ(wgmma8_cycles(128, "e4m3.e5m2", 3, 8) - wgmma8_cycles(128, "e4m3.e5m2", 1, 8), 2u * 128u);
    // m64n8k32: 4 cycles of compute per warp, but 512 B of A + 64 B of B = 5 port cycles per warp,
    // 20 for the four: port-bound, as m64n8k16.
    EXPECT_EQ(wgmma8_cycles(8, "e5m2.e5m2", 2) - wgmma8_cycles(8, "e5m2.e5m2", 1), 20u);
}

TEST(Wgmma8bit, AssemblyRejectsFormsPtxDoesNotHave) {
    const std::string regs = ".reg 128\n";
    EXPECT_NO_THROW(assemble(regs + "wgmma.mma_async.m64n256k32.e5m2.e4m3 r0, 0, 0, 32, 32\n", "ok.sasm"));
    EXPECT_NO_THROW(assemble(regs + "wgmma.mma_async.m64n24k32.s8.s8 r0, 0, 0, 32, 32\n", "ok.sasm"));
    // .s8 N above 24 must be a multiple of 16; .s8 does not mix with fp8; k16 takes no 8-bit
    // type and k32 no 16-bit one.
    EXPECT_THROW(assemble(regs + "wgmma.mma_async.m64n40k32.s8.s8 r0, 0, 0, 32, 32\n", "n.sasm"), AssemblyError);
    EXPECT_THROW(assemble(regs + "wgmma.mma_async.m64n64k32.s8.e4m3 r0, 0, 0, 32, 32\n", "t.sasm"), AssemblyError);
    EXPECT_THROW(assemble(regs + "wgmma.mma_async.m64n64k16.e4m3.e4m3 r0, 0, 0, 32, 32\n", "k.sasm"), AssemblyError);
    EXPECT_THROW(assemble(regs + "wgmma.mma_async.m64n64k32.bf16 r0, 0, 0, 32, 32\n", "k.sasm"), AssemblyError);
    EXPECT_THROW(assemble(regs + "wgmma.mma_async.m64n64k32.f16.f16 r0, 0, 0, 32, 32\n", "k.sasm"), AssemblyError);
    // imm-trans-b: 0 or 1 on the 16-bit forms only (PTX has no transpose for 8-bit operands).
    EXPECT_NO_THROW(assemble(regs + "wgmma.mma_async.m64n64k16.bf16 r0, 0, 0, 32, 32, 0\n", "ok.sasm"));
    EXPECT_NO_THROW(assemble(regs + "wgmma.mma_async.m64n64k16.f16 r0, 0, 0, 32, 128, 1\n", "ok.sasm"));
    EXPECT_THROW(assemble(regs + "wgmma.mma_async.m64n64k16.f16 r0, 0, 0, 32, 32, 2\n", "t.sasm"), AssemblyError);
    EXPECT_THROW(assemble(regs + "wgmma.mma_async.m64n64k32.e4m3.e4m3 r0, 0, 0, 32, 32, 0\n", "t.sasm"), AssemblyError);
}

// Thread 0 initializes an mbarrier (1 arrival), arrives with expect_tx = the box's bytes and issues
// one TMA box of `rows` x 128 bytes; all 32 threads wait for phase 0.
std::uint64_t tma_cycles(int rows, GlobalMemory& mem, std::uint32_t src) {
    const std::string s = ".param src\n.reg 2\n.shared 32768\nmov r0, %tid\nsetp.eq.s32 p0, r0, 0\n"
                          "@p0 mbarrier.init [32760], 1\n"
                          "@p0 mbarrier.arrive.expect_tx [32760], " + std::to_string(rows * 128) + "\n"
                          "mov r1, 32760\n"
                          "@p0 cp.async.bulk.tensor.2d." + std::to_string(rows) + "x128 [0], src, 256, r1\n"
                          "mbarrier.wait.parity [32760], 0\nexit\n";
    const Kernel k = assemble(s, "tma.sasm");
    return launch(k, {1, 32}, {src}, mem, h100_like()).cycles;
}

TEST(Tma, BoxCompletesItsBarrierWhenTheLastSectorArrives) {
    // A box of R rows x 128 B is 4R sectors, sent 4 per cycle from the issue: the last leaves R - 1
    // cycles after the first and arrives 400 cycles later; the waiters issue then. So a box of 64
    // rows completes 32 cycles after one of 32 rows, and one of 1 row after 400 + the issue.
    GlobalMemory mem;
    const std::uint32_t src = mem.allocate(256 * 64);
    const std::uint64_t rows32 = tma_cycles(32, mem, src), rows64 = tma_cycles(64, mem, src);
    EXPECT_EQ(rows64 - rows32, 32u);
    // Issue order (one warp, instruction buffer refilled every cycle, INT latency 4): mov at 0,
    // setp at 4 (waits for r0), init 8 (waits for p0), arrive 9, mov 10, cp 14 (waits for r1):
    // 1 sector at 14, answered at 414; the wait issues at 414, exit at 415, done at 416.
    EXPECT_EQ(tma_cycles(1, mem, src), 416u);
}

TEST(Tma, CopiesTheBoxAndPhasesAlternate) {
    // Two rounds on one barrier: phase 0 completes with the first box, phase 1 with the second
    // (waited for with parity 1); the values land where the boxes say.
    GlobalMemory mem;
    const std::uint32_t src = mem.allocate(4096);
    for (std::uint32_t i = 0; i < 4096; i += 4) mem.store32(src + i, i);
    const std::uint32_t out = mem.allocate(64);
    const std::string s = ".param src, out\n.reg 4\n.shared 4096\nmov r0, %tid\nsetp.eq.s32 p0, r0, 0\nmov r1, 4088\n"
                          "@p0 mbarrier.init [4088], 1\n"
                          "@p0 mbarrier.arrive.expect_tx [4088], 64\n"
                          "@p0 cp.async.bulk.tensor.2d.2x32 [0], src, 1024, r1\n"  // rows 0 and 1024 B on
                          "mbarrier.wait.parity [4088], 0\n"
                          "add r2, src, 64\n"
                          "@p0 mbarrier.arrive.expect_tx [4088], 32\n"
                          "@p0 cp.async.bulk.tensor.2d.1x32 [128], r2, 16, r1\n"
                          "mbarrier.wait.parity [4088], 1\n"
                          "shl r2, r0, 2\nld.shared r3, [r2]\nadd r2, r2, out\n@p0 st.global [r2], r3\n"
                          "setp.eq.s32 p1, r0, 8\n@p1 ld.shared r3, [32]\n@p1 st.global [out+4], r3\n"
                          "@p1 ld.shared r3, [136]\n@p1 st.global [out+8], r3\nexit\n";
    const Kernel k = assemble(s, "tma_phases.sasm");
    launch(k, {1, 32}, {src, out}, mem, h100_like());
    EXPECT_EQ(mem.load32(out), 0u);          // box 1, row 0, word 0
    EXPECT_EQ(mem.load32(out + 4), 1024u);   // box 1, row 1 (1024 B on), word 0
    EXPECT_EQ(mem.load32(out + 8), 72u);     // box 2 (src + 64), word 2
    // The functional runner gives the same values (the waits retry until the phase completes).
    GlobalMemory mem2 = mem;
    std::memset(mem2.data() + out, 0, 12);
    run_functional(k, mem2, {1, 32}, {src, out});
    EXPECT_EQ(mem2.load32(out + 4), 1024u);
    EXPECT_EQ(mem2.load32(out + 8), 72u);
}

TEST(Tma, BoundedBoxFillsZerosOutsideTheTensorAndReadsOnlyInside) {
    // A 4 x 64 B box whose tensor has 3 rows and 40 bytes per row from the box's origin (the
    // bounded form): rows 0-2 copy bytes 0-39, the rest of the box lands as zeros, over a first,
    // unbounded copy of the same box (so the zeros are written, not left). Values: word w of row r
    // is the global word at src + r x 256 + 4w inside, 0 outside.
    GlobalMemory mem;
    const std::uint32_t src = mem.allocate(1024);
    for (std::uint32_t i = 0; i < 1024; i += 4) mem.store32(src + i, 1000 + i);
    const std::uint32_t out = mem.allocate(256);
    const std::string s = ".param src, out\n.reg 4\n.shared 4096\nmov r0, %tid\nsetp.eq.s32 p0, r0, 0\nmov r1, 4088\n"
                          "@p0 mbarrier.init [4088], 1\n"
                          "@p0 mbarrier.arrive.expect_tx [4088], 256\n"
                          "@p0 cp.async.bulk.tensor.2d.4x64 [0], src, 256, r1\n"
                          "mbarrier.wait.parity [4088], 0\n"
                          "@p0 mbarrier.arrive.expect_tx [4088], 256\n"  // the whole box counts
                          "@p0 cp.async.bulk.tensor.2d.4x64 [0], src, 256, r1, 3, 40\n"
                          "mbarrier.wait.parity [4088], 1\n"
                          "shl r2, r0, 2\nld.shared r3, [r2]\nld.shared r2, [r2+128]\n"
                          "shl r0, r0, 2\nadd r0, r0, out\nst.global [r0], r3\nst.global [r0+128], r2\nexit\n";
    const Kernel k = assemble(s, "tma_bounded.sasm");
    auto check = [&](const GlobalMemory& m) {
        for (std::uint32_t row = 0; row < 4; ++row)
            for (std::uint32_t w = 0; w < 16; ++w) {
                const std::uint32_t expected = row < 3 && 4 * w < 40 ? 1000 + row * 256 + 4 * w : 0;
                EXPECT_EQ(m.load32(out + row * 64 + 4 * w), expected) << "row " << row << " word " << w;
            }
    };
    launch(k, {1, 32}, {src, out}, mem, h100_like());
    check(mem);
    GlobalMemory functional = mem;
    std::memset(functional.data() + out, 0xff, 256);
    run_functional(k, functional, {1, 32}, {src, out});
    check(functional);

    // Only the part inside is read: 3 rows of bytes 0-39, two sectors each (6, against 8 for the
    // whole box). A box entirely outside (no rows, or no bytes, left; the counts may be negative)
    // reads nothing and completes its bytes at issue: mov 0, setp 4, init 8, arrive 9, mov 10,
    // cp 14 (waits for r1), the wait at 15, exit 16: 17 cycles (a one-sector box: 416, Tma.BoxCompletes...).
    auto one_box = [&](const std::string& bounds) {
        const std::string t = ".param src\n.reg 2\n.shared 4096\nmov r0, %tid\nsetp.eq.s32 p0, r0, 0\n"
                              "@p0 mbarrier.init [4088], 1\n@p0 mbarrier.arrive.expect_tx [4088], 256\nmov r1, 4088\n"
                              "@p0 cp.async.bulk.tensor.2d.4x64 [0], src, 256, r1, " + bounds + "\n"
                              "mbarrier.wait.parity [4088], 0\nexit\n";
        return launch(assemble(t, "tma_one_box.sasm"), {1, 32}, {src}, mem, h100_like());
    };
    EXPECT_EQ(one_box("3, 40").global_sectors, 6u);
    EXPECT_EQ(one_box("4, 64").global_sectors, 8u);
    EXPECT_EQ(one_box("9, 999").global_sectors, 8u);  // a tensor larger than the box: the box
    for (const char* outside : {"0, 64", "4, 0", "-5, 64", "4, -16"}) {
        const KernelStats st = one_box(outside);
        EXPECT_EQ(st.global_sectors, 0u) << outside;
        EXPECT_EQ(st.cycles, 17u) << outside;
    }
    // The bounded part must lie in global memory (the rest need not), and the form takes 4 or 6
    // operands.
    const std::uint32_t near_end = static_cast<std::uint32_t>(mem.size()) - 128;
    const std::string edge = ".param src\n.reg 2\n.shared 4096\nmov r0, %tid\nsetp.eq.s32 p0, r0, 0\n"
                             "@p0 mbarrier.init [4088], 1\n@p0 mbarrier.arrive.expect_tx [4088], 256\nmov r1, 4088\n"
                             "@p0 cp.async.bulk.tensor.2d.4x64 [0], src, 64, r1, 2, 64\nmbarrier.wait.parity [4088], 0\nexit\n";
    EXPECT_NO_THROW(launch(assemble(edge, "tma_edge.sasm"), {1, 32}, {near_end}, mem, h100_like()));
    EXPECT_THROW(launch(assemble(edge, "tma_edge.sasm"), {1, 32}, {near_end + 64}, mem, h100_like()), SimtError);
    EXPECT_THROW(assemble(".reg 2\n.shared 4096\ncp.async.bulk.tensor.2d.4x64 [0], 16, 64, r1, 2\n", "n.sasm"), AssemblyError);
}

// The im2col tensor map of a 3x3 convolution on an NHWC tensor of n x h x w pixels of 128 bytes.
std::uint32_t im2col_map(GlobalMemory& mem, std::uint32_t base, std::uint32_t n, std::uint32_t h, std::uint32_t w,
                         std::uint32_t stride, std::uint32_t pad) {
    const std::uint32_t map = mem.allocate(4 * kIm2colWords, 64);
    const std::uint32_t out_h = (h + 2 * pad - 3) / stride + 1, out_w = (w + 2 * pad - 3) / stride + 1;
    const std::uint32_t words[kIm2colWords] = {base, n, h, w, 128, out_h, out_w, stride, stride, pad, pad, 1, 1};
    for (int i = 0; i < kIm2colWords; ++i) mem.store32(map + 4u * static_cast<std::uint32_t>(i), words[i]);
    return map;
}

// Thread 0 issues `box` (a cp.async.bulk.tensor line on the barrier r1 and the operands r2-r4:
// pixel 0, channel byte 64, tap (r, s) = (0, 2)) of 16 rows x 64 bytes into shared byte 0;
// everyone waits, then the 32 threads copy the 1024 bytes to out.
std::string im2col_kernel(const std::string& box, bool copy_out) {
    std::string s = ".param map, out\n.reg 7\n.shared 2048\nmov r0, %tid\nsetp.eq.s32 p0, r0, 0\nmov r1, 2040\n"
                    "@p0 mbarrier.init [2040], 1\n@p0 mbarrier.arrive.expect_tx [2040], 1024\n"
                    "mov r2, 0\nmov r3, 64\nmov r4, 2\n@p0 " + box + "\nmbarrier.wait.parity [2040], 0\n";
    if (!copy_out) return s + "exit\n";
    s += "shl r5, r0, 2\nadd r6, r5, out\n";
    for (int j = 0; j < 8; ++j)
        s += "ld.shared r2, [r5+" + std::to_string(128 * j) + "]\nst.global [r6+" + std::to_string(128 * j) + "], r2\n";
    return s + "exit\n";
}

TEST(Tma, Im2colGathersEachOutputPixelsTapAndZerosThePadding) {
    // A 1 x 3 x 4 image of 128-byte pixels (64 bf16 channels), a 3x3 convolution of stride 1 and
    // padding 1 (3 x 4 output pixels). The box: 16 rows of 64 bytes from output pixel 0, channel
    // byte 64, tap (r, s) = (0, 2): row p = (oy, ox) = (p / 4, p % 4) reads input pixel (oy - 1,
    // ox + 1), inside for oy in 1..2 and ox in 0..2: 6 rows, 2 sectors each = 12 sectors; rows
    // 12-15 are past the pixels. Word w of an inside row is the input word at byte 64 + 4w of
    // that pixel, every other row is zeros.
    GlobalMemory mem;
    const std::uint32_t image = mem.allocate(12 * 128);
    for (std::uint32_t px = 0; px < 12; ++px)
        for (std::uint32_t b = 0; b < 128; b += 4) mem.store32(image + px * 128 + b, 10000 + px * 1000 + b);
    const std::uint32_t map = im2col_map(mem, image, 1, 3, 4, 1, 1);
    const std::uint32_t out = mem.allocate(1024);
    const std::string gather = "cp.async.bulk.tensor.im2col.16x64 [0], map, r1, r2, r3, r4";
    const Kernel k = assemble(im2col_kernel(gather, true), "im2col.sasm");
    auto check = [&](const GlobalMemory& m) {
        for (std::uint32_t p = 0; p < 16; ++p)
            for (std::uint32_t w = 0; w < 16; ++w) {
                const std::uint32_t oy = p / 4, ox = p % 4;
                const bool inside = p < 12 && oy >= 1 && ox <= 2;
                const std::uint32_t expected = inside ? 10000 + ((oy - 1) * 4 + ox + 1) * 1000 + 64 + 4 * w : 0;
                EXPECT_EQ(m.load32(out + p * 64 + 4 * w), expected) << "row " << p << " word " << w;
            }
    };
    std::memset(mem.data() + out, 0xff, 1024);
    launch(k, {1, 32}, {map, out}, mem, h100_like());
    check(mem);
    GlobalMemory functional = mem;
    std::memset(functional.data() + out, 0xff, 1024);
    run_functional(k, functional, {1, 32}, {map, out});
    check(functional);
    EXPECT_EQ(launch(assemble(im2col_kernel(gather, false), "im2col.sasm"), {1, 32}, {map, out}, mem, h100_like()).global_sectors,
              12u);

    // Stride 2 without padding on a 1 x 5 x 5 image (2 x 2 outputs): tap (0, 2) of output (oy, ox)
    // is input (2 oy, 2 ox + 2), all inside: rows 0-3 read pixels 2, 4, 12, 14 of the 5-wide
    // image; rows 4-15 are past the 4 pixels: 8 sectors.
    GlobalMemory mem2;
    const std::uint32_t image2 = mem2.allocate(25 * 128);
    for (std::uint32_t px = 0; px < 25; ++px)
        for (std::uint32_t b = 0; b < 128; b += 4) mem2.store32(image2 + px * 128 + b, px * 1000 + b);
    const std::uint32_t map2 = im2col_map(mem2, image2, 1, 5, 5, 2, 0);
    const std::uint32_t out2 = mem2.allocate(1024);
    launch(k, {1, 32}, {map2, out2}, mem2, h100_like());
    EXPECT_EQ(launch(assemble(im2col_kernel(gather, false), "im2col.sasm"), {1, 32}, {map2, out2}, mem2, h100_like()).global_sectors,
              8u);
    const std::uint32_t source[4] = {2, 4, 12, 14};
    for (std::uint32_t p = 0; p < 16; ++p)
        for (std::uint32_t w = 0; w < 16; ++w)
            EXPECT_EQ(mem2.load32(out2 + p * 64 + 4 * w), p < 4 ? source[p] * 1000 + 64 + 4 * w : 0) << "row " << p;

    // A box with no row inside (from pixel 12 on: all past the last) reads nothing and completes
    // its bytes at issue, as a bounded 2-D box wholly outside does in the same instruction stream.
    const std::string past = "cp.async.bulk.tensor.im2col.16x64 [0], map, r1, 12, r3, r4";
    // (the 2-D box reads the same registers: pitch r3 = 64, no rows (r2 = 0), r4 bytes)
    const std::string outside_2d = "cp.async.bulk.tensor.2d.16x64 [0], map, r3, r1, r2, r4";
    const KernelStats none = launch(assemble(im2col_kernel(past, false), "past.sasm"), {1, 32}, {map, out}, mem, h100_like());
    EXPECT_EQ(none.global_sectors, 0u);
    EXPECT_EQ(none.cycles,
              launch(assemble(im2col_kernel(outside_2d, false), "outside.sasm"), {1, 32}, {map, out}, mem, h100_like()).cycles);

    // Faults: a box reaching past the pixel's bytes (channel byte 96 + 64 > 128), a misaligned map;
    // assembly: 6 operands, no multicast form.
    const std::string wide = "cp.async.bulk.tensor.im2col.16x64 [0], map, r1, r2, 96, r4";
    EXPECT_THROW(launch(assemble(im2col_kernel(wide, false), "wide.sasm"), {1, 32}, {map, out}, mem, h100_like()), SimtError);
    EXPECT_THROW(launch(k, {1, 32}, {map + 4, out}, mem, h100_like()), SimtError);
    EXPECT_THROW(assemble(".reg 8\n.shared 4096\ncp.async.bulk.tensor.im2col.16x64 [0], 256, r1, r2, r3\n", "n.sasm"), AssemblyError);
    EXPECT_THROW(assemble(".reg 8\n.shared 4096\ncp.async.bulk.tensor.im2col.multicast.16x64 [0], 256, r1, r2, r3, r4\n", "m.sasm"),
                 AssemblyError);
}

SimtParams two_sms() {
    SimtParams p = h100_like();
    p.sms = 2;
    return p;
}

// Runs a kernel of one 2-block cluster (32 threads each) on two SMs, then functionally (the
// functional runner runs the cluster's blocks together); returns the timed run's stats.
KernelStats run_cluster_pair(const std::string& text, const char* file) {
    const Kernel k = assemble(text, file);
    GlobalMemory mem;
    const KernelStats s = launch(k, {2, 32}, {}, mem, two_sms());
    run_functional(k, mem, {2, 32}, {}, 100000);
    return s;
}

TEST(Cluster, RemoteArrivalTakesTheClusterLatency) {
    // Rank 0 initializes a barrier of 1 arrival and waits for it; lane 0 of rank 1 arrives on it
    // remotely. Each warp issues (INT latency 4, in order): mov r0 at 0, setp p0 at 4, init at 8,
    // sub at 9, add at 13, setp p1 at 17, arrive.remote at 21: rank 1's arrival reaches rank 0 200
    // cycles later (SmParams::cluster_latency), at 221; rank 0's wait issues then, its exit at 222:
    // the kernel takes 223 cycles.
    const KernelStats s =
        run_cluster_pair(".cluster 2\n.reg 2\n.shared 4096\nmov r0, %cluster_ctarank\nsetp.eq.s32 p0, r0, 0\n"
                         "@p0 mbarrier.init [4080], 1\nsub r1, 1, r0\nadd r1, r1, %tid\nsetp.eq.s32 p1, r1, 0\n"
                         "@p1 mbarrier.arrive.remote [4080], 0\n@p0 mbarrier.wait.parity [4080], 0\nexit\n",
                         "remote.sasm");
    EXPECT_EQ(s.cycles, 223u);
    EXPECT_EQ(s.blocks, 2u);
}

TEST(Cluster, RemoteArrivalGuardedOffEverywhereSendsNothing) {
    // Rank 0's barrier waits for 2 arrivals, both from lane 0 of rank 1: one remote arrival at
    // once, then one guarded off on every lane (p2), then ten dependent adds, then the second. The
    // INT pipe has latency 4 and takes a warp every 2 cycles, so rank 1 issues: mov 0, setp 4,
    // init 8 (guarded off), sub 9, add 13, setp p1 17, setp p2 19, arrive 21, guarded-off arrive
    // 23 (p2 ready), adds 24, 28, ..., 60, arrive 61. The second arrival reaches rank 0 at 261; its
    // wait issues then and its exit at 262: 263 cycles. The guarded-off arrival used to resend the
    // first one's (a stale StepResult), completing the phase at 223 and ending the kernel about 40
    // cycles early.
    std::string adds = "add r2, r0, 1\n";
    for (int i = 1; i < 10; ++i) adds += "add r2, r2, 1\n";
    const KernelStats s =
        run_cluster_pair(".cluster 2\n.reg 3\n.shared 4096\nmov r0, %cluster_ctarank\nsetp.eq.s32 p0, r0, 0\n"
                         "@p0 mbarrier.init [4080], 2\nsub r1, 1, r0\nadd r1, r1, %tid\nsetp.eq.s32 p1, r1, 0\n"
                         "setp.eq.s32 p2, r1, 99\n@p1 mbarrier.arrive.remote [4080], 0\n"
                         "@p2 mbarrier.arrive.remote [4080], 0\n" + adds +
                         "@p1 mbarrier.arrive.remote [4080], 0\n@p0 mbarrier.wait.parity [4080], 0\nexit\n",
                         "remote_guarded.sasm");
    EXPECT_EQ(s.cycles, 263u);
}

TEST(Cluster, MulticastBoxLandsInEveryBlock) {
    // Rank 0 copies one 64-byte row of global memory into shared offset 0 of both blocks; each
    // block's barrier expects the 64 bytes, and each block then stores its word 3 to out[rank].
    // Blocks 2 and 3 form a second cluster reading the second row.
    GlobalMemory mem;
    const std::uint32_t src = mem.allocate(128), out = mem.allocate(16);
    for (std::uint32_t i = 0; i < 32; ++i) mem.store32(src + 4 * i, 100 + i);
    const std::string text = ".cluster 2\n.param src, out\n.reg 4\n.shared 4096\n"
                             "mov r0, %tid\nsetp.eq.s32 p0, r0, 0\nmov r1, %cluster_ctarank\nmov r2, %ctaid\n"
                             "@p0 mbarrier.init [4088], 1\n@p0 mbarrier.arrive.expect_tx [4088], 64\n"
                             "add r3, r0, r1\nsetp.eq.s32 p1, r3, 0\nshr r3, r2, 1\nshl r3, r3, 6\nadd r3, r3, src\n"
                             "mov r0, 4088\n@p1 cp.async.bulk.tensor.2d.multicast.1x64 [0], r3, 64, r0\n"
                             "mbarrier.wait.parity [4088], 0\nld.shared r3, [12]\nshl r2, r2, 2\nadd r2, r2, out\n"
                             "@p0 st.global [r2], r3\nexit\n";
    const Kernel k = assemble(text, "multicast.sasm");
    for (int run = 0; run < 2; ++run) {
        GlobalMemory m = mem;
        if (run == 0) launch(k, {4, 32}, {src, out}, m, two_sms());
        else run_functional(k, m, {4, 32}, {src, out});
        EXPECT_EQ(m.load32(out), 103u) << run;
        EXPECT_EQ(m.load32(out + 4), 103u) << run;   // rank 1 got rank 0's box
        EXPECT_EQ(m.load32(out + 8), 119u) << run;   // the second cluster: row 1
        EXPECT_EQ(m.load32(out + 12), 119u) << run;
    }
    // A grid that is not a whole number of clusters, or a chip with fewer SMs than a cluster.
    EXPECT_THROW(launch(k, {3, 32}, {src, out}, mem, two_sms()), SimtError);
    EXPECT_THROW(launch(k, {2, 32}, {src, out}, mem, h100_like()), SimtError);
}

TEST(Hopper, FaultsAndAssemblyErrorsNameTheLine) {
    GlobalMemory mem;
    // A wgmma from a block of 2 warps: no complete warpgroup.
    const Kernel k = assemble(".reg 8\nwgmma.fence\nwgmma.mma_async.m64n8k16.bf16 r0, 0, 2048, 32, 16\nexit\n", "wg.sasm");
    try {
        launch(k, {1, 64}, {}, mem, h100_like());
        FAIL() << "expected a fault";
    } catch (const SimtError& e) {
        EXPECT_NE(std::string(e.what()).find("wg.sasm:3"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("warpgroup"), std::string::npos) << e.what();
    }
    // Waiting on an mbarrier nobody initialized.
    const Kernel w = assemble(".reg 1\n.shared 64\nmbarrier.wait.parity [8], 0\nexit\n", "w.sasm");
    EXPECT_THROW(launch(w, {1, 32}, {}, mem, h100_like()), SimtError);
    EXPECT_THROW(assemble(".reg 8\nwgmma.mma_async.m64n12k16.bf16 r0, 0, 0, 32, 32\n", "n.sasm"), AssemblyError);
    // m64n16k16 accumulates into 8 registers: r0..r7 do not fit in .reg 7.
    EXPECT_THROW(assemble(".reg 7\nwgmma.mma_async.m64n16k16.bf16 r0, 0, 0, 32, 32\n", "r.sasm"), AssemblyError);
    EXPECT_THROW(assemble(".reg 8\n.shared 64\ncp.async.bulk.tensor.2d.4x24 [0], 256, 32, 8\n", "c.sasm"), AssemblyError);
}

}  // namespace
}  // namespace accelsim::simt::hopper_test
