#include "models/gpu/gemm.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <tuple>

#include "models/common/validation_worker.h"
#include "models/gpu/elementwise.h"
#include "models/gpu/gemm_hopper.h"
#include "models/gpu/gpu_stats.h"
#include "models/gpu/kernel_text.h"
#include "models/simt/occupancy.h"

namespace accelsim::gpu {

namespace {

// Collects generated assembly lines and hands out registers.
class Asm {
public:
    int alloc(int n = 1) {
        const int first = next_;
        next_ += n;
        return first;
    }
    int used() const { return next_; }
    void operator()(const std::string& line) { text_ += "    " + line + "\n"; }
    void label(const std::string& name) { text_ += name + ":\n"; }
    void raw(const std::string& s) { text_ += s; }
    const std::string& text() const { return text_; }

private:
    int next_ = 0;
    std::string text_;
};

using kernel_text::at;
using kernel_text::n;
using kernel_text::r;

// The kernel name's operand type: _f16, _bf16, _s8, _e4m3, _e5m2.
std::string type_suffix(simt::MmaType type) { return std::string("_") + simt::mma_type_name(type); }

// The conv kernels' im2col arithmetic (the tensor-core variant per 16-byte chunk, the FFMA one per
// element). The origin of output pixel `m` (a register, clobbered): its image's base address
// (img = image * (m / OHW) + base) and its window's corner (ih0, iw0) = (oh * stride - pad,
// ow * stride - pad).
void im2col_pixel_origin(Asm& a, int m, int img, int ih0, int iw0, int base) {
    a("div " + r(img) + ", " + r(m) + ", OHW");
    a("rem " + r(m) + ", " + r(m) + ", OHW");
    a("div " + r(ih0) + ", " + r(m) + ", OW");
    a("rem " + r(iw0) + ", " + r(m) + ", OW");
    a("mul " + r(ih0) + ", " + r(ih0) + ", stride_h");
    a("sub " + r(ih0) + ", " + r(ih0) + ", pad_h");
    a("mul " + r(iw0) + ", " + r(iw0) + ", stride_w");
    a("sub " + r(iw0) + ", " + r(iw0) + ", pad_w");
    a("mad " + r(img) + ", " + r(img) + ", image, " + r(base));
}
// The address `ad` of the tap (r dil_h, s dil_w) = (rr, ss) of a pixel's window, byte `c0` of its
// input pixel; a tap in the padding gets the zero area's address instead.
void im2col_address(Asm& a, int ad, int ih, int iw, int img, int ih0, int iw0, int rr, int ss, int c0) {
    a("add " + r(ih) + ", " + r(ih0) + ", " + r(rr));
    a("add " + r(iw) + ", " + r(iw0) + ", " + r(ss));
    a("mad " + r(ad) + ", " + r(ih) + ", W, " + r(iw));
    a("mad " + r(ad) + ", " + r(ad) + ", pix, " + r(img));
    a("add " + r(ad) + ", " + r(ad) + ", " + r(c0));
    a("setp.lt.u32 p4, " + r(ih) + ", H");  // negative rows wrap to large unsigned
    a("selp " + r(ad) + ", " + r(ad) + ", zero, p4");
    a("setp.lt.u32 p4, " + r(iw) + ", W");
    a("selp " + r(ad) + ", " + r(ad) + ", zero, p4");
}

constexpr int kSliceWordsPad = 4;  // A rows in shared memory: BK/2 words + 4 (pitch = 4 mod 8 words)
constexpr int kBRowPad = 8;        // B k-pair rows: BN + 8 words (pitch = 8 mod 32 words)

}  // namespace

const std::vector<GemmTile>& gemm_tensor_tiles() {
    // Efficiencies: tensor-core utilization on the whole a100 (108 SMs, its L2 + HBM hierarchy)
    // with K = 2048 and M x N chosen so that the grid is exactly one or two full waves of the tile
    // (bench/gpu_gemm_bench M N 2048 --memory hierarchy --tile T --ahead A; docs/gpu.md). The
    // full chip loads the L2 as large problems do: small tiles fetch more bytes per MAC, which is
    // what favours large tiles. slices_ahead: the variant measured and used for large grids (the
    // rule may raise it to 2 for a grid that fits one wave, choose_gemm_tile).
    static const std::vector<GemmTile> tiles = {
        {256, 128, 32, 4, 4, 0.790, 1},  // 16 warps of 64 x 32; 6912 x 1024, 2 waves
        {128, 128, 32, 2, 4, 0.782, 1},  // 8 warps of 64 x 32; 3456 x 1024, 1 wave of 2 per SM
        {128, 64, 32, 4, 2, 0.766, 2},   // 8 warps of 32 x 32; 3456 x 1024, 2 waves (0.703 one ahead)
        {64, 64, 32, 2, 2, 0.642, 1},    // 4 warps of 32 x 32; 1728 x 1280, 1 wave of 5 per SM
        {32, 32, 32, 2, 2, 0.435, 1},    // 4 warps of 16 x 16; 1152 x 864, 1 wave of 9 per SM
    };
    return tiles;
}

namespace {

// Registers of the plain epilogue that the fused one reuses.
struct EpilogueRegs {
    int acc, mi, nj;  // accumulators, MI x NJ fragments of 4
    int out;          // the packed output word (payload)
    int cptr, ldc8;   // &C of the lane's first row and column, 8 rows' pitch
    int col;          // the lane's first column's byte offset (becomes the bias pointer)
    int mrem, left, q, addr;  // rows left, rows left from a row, store guard, an address temporary
};

// Fused epilogue (GemmEpilogue): per MI row block every tensor word the block needs is loaded first
// (2 NJ words per tensor step, guarded like the stores), so their latencies overlap; then each
// accumulator pair goes through the steps in place, is packed and stored. The bias (NJ words, two
// columns each) is loaded once. nr[jj]: columns left from the lane's column of fragment jj.
void fused_epilogue(Asm& a, const GemmEpilogue& epilogue, simt::MmaType type, const std::vector<int>& pool,
                    const EpilogueRegs& e, const int* nr) {
    const char* pack = type == simt::MmaType::f16 ? "cvt.f16x2.f32" : "cvt.bf16x2.f32";
    const std::string lo = type == simt::MmaType::f16 ? "cvt.f32.f16.lo " : "cvt.f32.bf16.lo ";
    const std::string hi = type == simt::MmaType::f16 ? "cvt.f32.f16.hi " : "cvt.f32.bf16.hi ";
    const int NJ = e.nj, steps = epilogue.tensor_steps();
    std::size_t next = 0;
    auto take = [&](int count) {
        const int first = static_cast<int>(next);
        next += static_cast<std::size_t>(count);
        return first;
    };
    const int words = take(2 * NJ * steps);  // pool[words + (s * 2 + h) * NJ + jj]
    const int bias = epilogue.has_bias() ? take(2 * NJ) : -1;
    const int t0 = take(1), t1 = take(1);
    auto P = [&](int index) { return r(pool[static_cast<std::size_t>(index)]); };
    auto guard = [&](int h, int jj, int i) {  // p3: the pair (row, column) lies inside M x N
        a("sub " + r(e.left) + ", " + r(e.mrem) + ", " + n(16 * i + 8 * h));
        a("min " + r(e.q) + ", " + r(e.left) + ", " + r(nr[jj]));
        a("setp.gt.s32 p3, " + r(e.q) + ", 0");
    };
    if (bias >= 0) {
        a("add " + r(e.col) + ", " + r(e.col) + ", bias");
        for (int jj = 0; jj < NJ; ++jj) {
            a("setp.gt.s32 p3, " + r(nr[jj]) + ", 0");
            a("@p3 ld.global " + P(bias + 2 * jj + 1) + ", " + at(e.col, 16LL * jj));
        }
        for (int jj = 0; jj < NJ; ++jj) {
            a(lo + P(bias + 2 * jj) + ", " + P(bias + 2 * jj + 1));
            a(hi + P(bias + 2 * jj + 1) + ", " + P(bias + 2 * jj + 1));
        }
    }
    for (int i = 0; i < e.mi; ++i) {
        for (int h = 0; h < 2; ++h)
            for (int jj = 0; jj < NJ; ++jj) {
                if (steps == 0) break;
                guard(h, jj, i);
                for (int s = 0; s < steps; ++s) {
                    a("add " + r(e.addr) + ", " + r(e.cptr) + ", e" + n(s));
                    if (h == 1) a("add " + r(e.addr) + ", " + r(e.addr) + ", " + r(e.ldc8));
                    a("@p3 ld.global " + P(words + (s * 2 + h) * NJ + jj) + ", " + at(e.addr, 16LL * jj));
                }
            }
        for (int h = 0; h < 2; ++h) {
            for (int jj = 0; jj < NJ; ++jj) {
                const int d = e.acc + 4 * (i * NJ + jj) + 2 * h;
                int s = 0;
                for (const EpilogueStep step : epilogue.steps) {
                    const bool tensor = step == EpilogueStep::add || step == EpilogueStep::mul;
                    for (int half = 0; half < 2; ++half) {
                        if (tensor) a((half == 0 ? lo : hi) + P(t1) + ", " + P(words + (s * 2 + h) * NJ + jj));
                        const std::string operand = tensor ? P(t1) : step == EpilogueStep::bias ? P(bias + 2 * jj + half) : "";
                        for (const std::string& line : epilogue_step_lines(step, r(d + half), operand, P(t0))) a(line);
                    }
                    if (tensor) ++s;
                }
                a(std::string(pack) + " " + r(e.out) + ", " + r(d) + ", " + r(d + 1));
                guard(h, jj, i);
                a("@p3 st.global " + at(e.cptr, 16LL * jj) + ", " + r(e.out));
            }
            a("add " + r(e.cptr) + ", " + r(e.cptr) + ", " + r(e.ldc8));
        }
    }
}

// conv: the implicit-GEMM variant (conv.h): A rows are output pixels whose 16-byte chunks are
// gathered from the NHWC input (im2col addresses computed per slice, padding read from a zero
// area), and B is given transposed (the weights, [K][R][S][C'] = N x K'), loaded like A.
// epilogue (GEMM only, not partials): steps applied to the fp32 accumulators before the one store
// (fused_kernels.h); empty: the plain kernel, whose code is unchanged.
// b_type: B's type where it differs from A's (fp8 e4m3 x e5m2, the mma's .atype.btype form).
std::string tensor_source(const GemmTile& tile, simt::MmaType type, simt::MmaType b_type, bool conv, bool partials = false,
                          const GemmEpilogue& epilogue = {}) {
    const int T = tile.threads();
    const int BM = tile.bm, BN = tile.bn, BK = tile.bk;
    const int WM = BM / tile.warps_m, WN = BN / tile.warps_n;
    const int MI = WM / 16, NJ = WN / 8, KS = BK / 16;
    // int8 (s8): the same kernel in bytes. A slice is BK 16-bit slots = 2 BK int8 values, one
    // m16n8k32 per 32 int8 (KS steps as for 16 bits); the m16n8k32 fragments hold the same words
    // of a row as the m16n8k16 ones (PTX: 4 int8 where 2 16-bit values were), so A's staging and
    // fragment loads are unchanged. B comes transposed (N x K, cuBLASLt's int8 "TN" layout),
    // staged like conv's B^T; the accumulators are int32 and are stored as they are (no packing).
    // fp8 (e4m3, e5m2) is the same kernel with the fp8 m16n8k32 (one fragment layout for the
    // 8-bit types) and fp32 accumulators stored as they are.
    const bool s8 = simt::is_k32(type);
    const bool bt = conv || s8;                        // B given transposed, loaded like A
    const bool wide_out = partials || s8;              // C holds 32-bit accumulator pairs
    const int SA = BK / 2 + kSliceWordsPad;           // words per A row in shared memory
    const int SB = bt ? SA : BN + kBRowPad;            // words per B k-pair row (bt: per B^T row)
    const int a_bytes = BM * SA * 4, b_rows = BK / 2;  // a stage: A rows, then BK/2 k-pair rows of B
    const int stage = a_bytes + (bt ? BN * SA * 4 : b_rows * SB * 4);
    const int chunks_per_row = BK / 8;                 // 16-byte chunks per A row of a slice
    const int ACH = BM * chunks_per_row / T;           // A chunks per thread per slice
    const int groups = BN / 4;                         // 4-column groups of a B row
    const int BU = bt ? BN * chunks_per_row / T        // bt: 16-byte chunks of B^T rows per thread
                        : b_rows * groups / T;         // B units (k-pair row x 4 columns) per thread
    const int rows_per_round = T / chunks_per_row;     // A rows between a thread's chunks
    const int kp_step = T / groups;                    // k-pair rows between a thread's B units
    const std::string mma = b_type != type ? std::string("mma.m16n8k32.") + simt::mma_type_name(type) + "." + simt::mma_type_name(b_type)
                            : simt::is_k32(type) ? std::string("mma.m16n8k32.") + simt::mma_type_name(type)
                                                 : std::string("mma.m16n8k16.") + simt::mma_type_name(type);
    const char* pack = type == simt::MmaType::f16 ? "cvt.f16x2.f32" : "cvt.bf16x2.f32";

    // Registers. Payload (fp data): accumulators, fragments (A double-buffered: 2 x 4), staging.
    // Addresses, counters and predicates' sources never share a register with payload (the
    // timing-only skip analysis is flow-insensitive).
    Asm a;
    const int acc = a.alloc(MI * NJ * 4);
    const int fa = a.alloc(8), fb = a.alloc(NJ * 2);
    // Two slices in flight (tile.slices_ahead == 2, GEMM only): a second set of staging registers;
    // the sets alternate slice by slice.
    const bool ahead2 = !conv && tile.slices_ahead == 2;
    const int sa = a.alloc(ACH * 4), sbx = a.alloc(BU * 4);
    const int sa2 = ahead2 ? a.alloc(ACH * 4) : sa, sbx2 = ahead2 ? a.alloc(BU * 4) : sbx;
    const int jn = ahead2 ? a.alloc() : -1;  // j + 1
    // conv: per A chunk its image base, ih0, iw0 (gA + 3i ..), then the thread's k (kl).
    const int gA = a.alloc(conv ? 3 * ACH + 1 : ACH), gB = a.alloc(BU), gB1 = bt ? -1 : a.alloc(BU);
    const int kl = conv ? gA + 3 * ACH : -1;
    const int stA = a.alloc(), stB = a.alloc(), fA = a.alloc(), fB = a.alloc(), flip = a.alloc(), j = a.alloc();
    const int tp = a.alloc(15);  // set-up and epilogue temporaries
    const int so = fa;           // prmt outputs: the A fragments are free between the mmas and the next slice
    // A fused epilogue's payload registers: those the main loop no longer needs (fragments and
    // staging), more only when they do not suffice. Per MI row block it holds the 2 NJ words of each
    // tensor step, the bias (2 NJ floats, loaded once) and two temporaries.
    const int tensor_steps = epilogue.tensor_steps();
    std::vector<int> pool;
    if (!epilogue.steps.empty()) {
        for (int i = 1; i < 8; ++i) pool.push_back(fa + i);  // fa itself holds the packed output
        for (int i = 0; i < NJ * 2; ++i) pool.push_back(fb + i);
        for (int i = 0; i < ACH * 4; ++i) pool.push_back(sa + i);
        for (int i = 0; i < BU * 4; ++i) pool.push_back(sbx + i);
        for (int i = 0; ahead2 && i < ACH * 4; ++i) pool.push_back(sa2 + i);
        for (int i = 0; ahead2 && i < BU * 4; ++i) pool.push_back(sbx2 + i);
        const int need = 2 * NJ * tensor_steps + (epilogue.has_bias() ? 2 * NJ : 0) + 2;
        while (static_cast<int>(pool.size()) < need) pool.push_back(a.alloc());
    }
    const int registers = a.used();

    // Thread and block coordinates into tp[0..11]: tid lane warp g t batch tm tn row0 col0 x y.
    struct Coords { int tid, lane, warp, g, tq, batch, tm, tn, row0, col0, x, y; };
    auto decode = [&]() {
        const int f = tp;
        Coords c{f, f + 1, f + 2, f + 3, f + 4, f + 5, f + 6, f + 7, f + 8, f + 9, f + 10, f + 11};
        a("mov " + r(c.tid) + ", %tid");
        a("and " + r(c.lane) + ", " + r(c.tid) + ", 31");
        a("shr " + r(c.warp) + ", " + r(c.tid) + ", 5");
        a("shr " + r(c.g) + ", " + r(c.lane) + ", 2");
        a("and " + r(c.tq) + ", " + r(c.lane) + ", 3");
        // Block -> (batch, tile row, tile column); tile rows in groups of kGemmGroupRows, the
        // blocks of a group column by column.
        a("mov " + r(c.x) + ", %ctaid");
        a("div " + r(c.batch) + ", " + r(c.x) + ", tiles_per_batch");
        a("rem " + r(c.x) + ", " + r(c.x) + ", tiles_per_batch");
        a("div " + r(c.y) + ", " + r(c.x) + ", group_blocks");          // group
        a("rem " + r(c.x) + ", " + r(c.x) + ", group_blocks");          // block in the group
        a("mul " + r(c.y) + ", " + r(c.y) + ", " + n(kGemmGroupRows));  // its first tile row
        a("sub " + r(c.row0) + ", tiles_m, " + r(c.y));
        a("min " + r(c.row0) + ", " + r(c.row0) + ", " + n(kGemmGroupRows));  // tile rows in the group
        a("rem " + r(c.tm) + ", " + r(c.x) + ", " + r(c.row0));
        a("add " + r(c.tm) + ", " + r(c.tm) + ", " + r(c.y));
        a("div " + r(c.tn) + ", " + r(c.x) + ", " + r(c.row0));
        a("mul " + r(c.row0) + ", " + r(c.tm) + ", " + n(BM));  // first row of the tile
        a("mul " + r(c.col0) + ", " + r(c.tn) + ", " + n(BN));  // first column
        return c;
    };

    std::string src = std::string(conv ? ".kernel conv_" : ".kernel gemm_") + tile.name() +
                      type_suffix(type) + (b_type != type ? type_suffix(b_type) : "") + (partials ? "_partials" : "") +
                      (epilogue.steps.empty() ? "" : "_" + epilogue.name()) + "\n";
    src += ".param M, N, Mlast, Nlast, A, B, C, lda, ldb, ldc, a_batch, b_batch, c_batch, tiles_m, tiles_n, "
           "tiles_per_batch, group_blocks, slices, kfirst, b_slice";
    if (conv) src += ", H, W, Cp, S, OW, OHW, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, pix, image, zero";
    // Epilogue tensors: e<i> = the tensor's address minus C's (same layout as C), bias its vector.
    if (epilogue.has_bias()) src += ", bias";
    if (epilogue.has_scale()) src += ", alpha";
    for (int i = 0; i < tensor_steps; ++i) src += ", e" + n(i);
    src += "\n";
    src += ".reg " + n(registers) + "\n";
    src += ".shared " + n(2 * stage) + "\n";
    a.raw(src);

    // ---- Set-up.
    const Coords c = decode();
    const int x = c.x, y = c.y, z = tp + 12, w = tp + 13, base = tp + 14;
    // A copy: chunk u = tid + i*T is row (u % 8) + 8 (u / 32), k-chunk (u / 8) % chunks_per_row of
    // the slice. A warp covers 8 rows x 4 chunks, so each 8-lane phase of its st.shared.v4 writes 8
    // rows at pitch SA = 4 (mod 8) words: 32 distinct banks.
    a("and " + r(x) + ", " + r(c.tid) + ", 7");
    a("shr " + r(y) + ", " + r(c.tid) + ", 5");
    a("shl " + r(y) + ", " + r(y) + ", 3");
    a("add " + r(x) + ", " + r(x) + ", " + r(y));  // row in the tile of chunk 0
    a("shr " + r(z) + ", " + r(c.tid) + ", 3");
    a("and " + r(z) + ", " + r(z) + ", " + n(chunks_per_row - 1));  // k-chunk
    a("mul " + r(stA) + ", " + r(x) + ", " + n(SA * 4));
    a("shl " + r(w) + ", " + r(z) + ", 4");
    a("add " + r(stA) + ", " + r(stA) + ", " + r(w));
    // &A[batch][min(row0 + row, Mlast)][kfirst + 8 kc]
    a("mul " + r(base) + ", " + r(c.batch) + ", a_batch");
    a("add " + r(base) + ", " + r(base) + ", A");
    a("shl " + r(w) + ", " + r(z) + ", 3");
    a("add " + r(w) + ", " + r(w) + ", kfirst");
    a("setp.ge.s32 p1, " + r(w) + ", 0");  // slice 0: chunks at k < 0 stay zero
    a("shl " + r(w) + ", " + r(w) + ", 1");
    a("add " + r(base) + ", " + r(base) + ", " + r(w));
    a("add " + r(x) + ", " + r(x) + ", " + r(c.row0));
    if (!conv) {
        for (int i = 0; i < ACH; ++i) {
            a("add " + r(y) + ", " + r(x) + ", " + n(i * rows_per_round));
            a("min " + r(y) + ", " + r(y) + ", Mlast");
            a("mad " + r(gA + i) + ", " + r(y) + ", lda, " + r(base));
        }
    } else {
        // Output pixel m = (image, oh, ow): the chunk reads input (oh*stride - pad + r*dil,
        // ow*stride - pad + s*dil), channels c0..c0+7 of its (r, s, c0) = k decomposition.
        a("shl " + r(kl) + ", " + r(z) + ", 3");
        a("add " + r(kl) + ", " + r(kl) + ", kfirst");
        a("sub " + r(kl) + ", " + r(kl) + ", " + n(BK));  // k of the chunk one slice before slice 0
        a("mul " + r(base) + ", " + r(c.batch) + ", a_batch");
        a("add " + r(base) + ", " + r(base) + ", A");   // group's first channel
        for (int i = 0; i < ACH; ++i) {
            const int img = gA + 3 * i, ih0 = img + 1, iw0 = img + 2;
            a("add " + r(y) + ", " + r(x) + ", " + n(i * rows_per_round));
            a("min " + r(y) + ", " + r(y) + ", Mlast");
            im2col_pixel_origin(a, y, img, ih0, iw0, base);
        }
    }
    if (bt) {
        // B^T rows (conv: output channels; int8: the columns of B) are copied exactly like A rows:
        // chunk u = tid + i*T is row (u % 8) + 8 (u / 32) (clamped to Nlast), k-chunk (u / 8) % 4;
        // the same stA offset pattern lands in the B area of the stage.
        a("and " + r(x) + ", " + r(c.tid) + ", 7");
        a("shr " + r(y) + ", " + r(c.tid) + ", 5");
        a("shl " + r(y) + ", " + r(y) + ", 3");
        a("add " + r(x) + ", " + r(x) + ", " + r(y));
        a("add " + r(stB) + ", " + r(stA) + ", " + n(a_bytes));
        a("mul " + r(base) + ", " + r(c.batch) + ", b_batch");
        a("add " + r(base) + ", " + r(base) + ", B");
        a("shl " + r(w) + ", " + r(z) + ", 3");
        a("add " + r(w) + ", " + r(w) + ", kfirst");
        a("shl " + r(w) + ", " + r(w) + ", 1");
        a("add " + r(base) + ", " + r(base) + ", " + r(w));
        a("add " + r(x) + ", " + r(x) + ", " + r(c.col0));
        for (int i = 0; i < BU; ++i) {
            a("add " + r(y) + ", " + r(x) + ", " + n(i * rows_per_round));
            a("min " + r(y) + ", " + r(y) + ", Nlast");
            a("mad " + r(gB + i) + ", " + r(y) + ", ldb, " + r(base));
        }
        for (int i = 0; i < ACH * 4; ++i) a("mov " + r(sa + i) + ", 0");
        for (int i = 0; i < BU * 4; ++i) a("mov " + r(sbx + i) + ", 0");
        for (int i = 0; i < BU; ++i) a("@p1 ld.global.v4 " + r(sbx + 4 * i) + ", " + at(gB + i, 0));
    } else {
    // B copy: unit u = tid + i*T is k-pair row u / groups, columns 4 (u % groups) .. +3: two
    // ld.global.v2 (rows k and k+1), four prmt into (B[k][n], B[k+1][n]) words, one st.shared.v4.
    // The 8 lanes of a phase write 32 consecutive words: conflict-free.
    a("and " + r(x) + ", " + r(c.tid) + ", " + n(groups - 1));
    a("shr " + r(y) + ", " + r(c.tid) + ", " + n(__builtin_ctz(static_cast<unsigned>(groups))));
    a("mul " + r(stB) + ", " + r(y) + ", " + n(SB * 4));
    a("shl " + r(w) + ", " + r(x) + ", 4");
    a("add " + r(stB) + ", " + r(stB) + ", " + r(w));
    a("add " + r(stB) + ", " + r(stB) + ", " + n(a_bytes));
    a("shl " + r(x) + ", " + r(x) + ", 2");
    a("add " + r(x) + ", " + r(x) + ", " + r(c.col0));
    a("min " + r(x) + ", " + r(x) + ", Nlast");  // columns past N read the last group
    a("shl " + r(x) + ", " + r(x) + ", 1");
    a("mul " + r(base) + ", " + r(c.batch) + ", b_batch");
    a("add " + r(base) + ", " + r(base) + ", B");
    a("add " + r(base) + ", " + r(base) + ", " + r(x));
    a("shl " + r(y) + ", " + r(y) + ", 1");
    a("add " + r(y) + ", " + r(y) + ", kfirst");  // k of unit 0 in slice 0
    // Slice 0: zero the staging registers, then load what lies at k >= 0.
    for (int i = 0; i < ACH * 4; ++i) a("mov " + r(sa + i) + ", 0");
    for (int i = 0; i < BU * 4; ++i) a("mov " + r(sbx + i) + ", 0");
    for (int i = 0; i < BU; ++i) {
        a("add " + r(z) + ", " + r(y) + ", " + n(2 * kp_step * i));
        a("mad " + r(gB + i) + ", " + r(z) + ", ldb, " + r(base));
        a("add " + r(gB1 + i) + ", " + r(gB + i) + ", ldb");
        a("setp.ge.s32 p2, " + r(z) + ", 0");
        a("@p2 ld.global.v2 " + r(sbx + 4 * i) + ", " + at(gB + i, 0));
        a("@p2 ld.global.v2 " + r(sbx + 4 * i + 2) + ", " + at(gB1 + i, 0));
    }
    }
    auto im2col_loads = [&](const std::string& guard) {
        // The next slice's k for this thread's chunks, its (r, s, c0), and one gathered 16-byte
        // chunk per A chunk; taps in the padding read the zero area instead.
        const int rs = tp, c0 = tp + 1, rr = tp + 2, ss = tp + 3, ih = tp + 4, iw = tp + 5, ad = tp + 6;
        a("add " + r(kl) + ", " + r(kl) + ", " + n(BK));
        a("div " + r(rs) + ", " + r(kl) + ", Cp");
        a("rem " + r(c0) + ", " + r(kl) + ", Cp");
        a("div " + r(rr) + ", " + r(rs) + ", S");
        a("rem " + r(ss) + ", " + r(rs) + ", S");
        a("mul " + r(rr) + ", " + r(rr) + ", dil_h");
        a("mul " + r(ss) + ", " + r(ss) + ", dil_w");
        a("shl " + r(c0) + ", " + r(c0) + ", 1");
        for (int i = 0; i < ACH; ++i) {
            const int img = gA + 3 * i, ih0 = img + 1, iw0 = img + 2;
            im2col_address(a, ad, ih, iw, img, ih0, iw0, rr, ss, c0);
            a(guard + "ld.global.v4 " + r(sa + 4 * i) + ", " + at(ad, 0));
        }
    };
    if (!conv)
        for (int i = 0; i < ACH; ++i) a("@p1 ld.global.v4 " + r(sa + 4 * i) + ", " + at(gA + i, 0));
    // Fragment bases: A row warp_row*WM + g, word t; B k-pair row t, column warp_col*WN + g.
    a("div " + r(x) + ", " + r(c.warp) + ", " + n(tile.warps_n));
    a("rem " + r(y) + ", " + r(c.warp) + ", " + n(tile.warps_n));
    a("mul " + r(fA) + ", " + r(x) + ", " + n(WM));
    a("add " + r(fA) + ", " + r(fA) + ", " + r(c.g));
    a("mul " + r(fA) + ", " + r(fA) + ", " + n(SA));
    a("add " + r(fA) + ", " + r(fA) + ", " + r(c.tq));
    a("shl " + r(fA) + ", " + r(fA) + ", 2");
    if (bt) {  // B^T row warp_col*WN + g, word t (as A)
        a("mul " + r(fB) + ", " + r(y) + ", " + n(WN));
        a("add " + r(fB) + ", " + r(fB) + ", " + r(c.g));
        a("mul " + r(fB) + ", " + r(fB) + ", " + n(SA));
        a("add " + r(fB) + ", " + r(fB) + ", " + r(c.tq));
    } else {
        a("mul " + r(fB) + ", " + r(c.tq) + ", " + n(SB));
        a("mul " + r(z) + ", " + r(y) + ", " + n(WN));
        a("add " + r(fB) + ", " + r(fB) + ", " + r(z));
        a("add " + r(fB) + ", " + r(fB) + ", " + r(c.g));
    }
    a("shl " + r(fB) + ", " + r(fB) + ", 2");
    a("add " + r(fB) + ", " + r(fB) + ", " + n(a_bytes));
    if (conv) im2col_loads("@p1 ");  // after the set-up: it uses the temporaries

    auto advance = [&]() {
        if (bt)
            for (int i = 0; i < BU; ++i) a("add " + r(gB + i) + ", " + r(gB + i) + ", " + n(BK * 2));
        if (conv) return;
        for (int i = 0; i < ACH; ++i) a("add " + r(gA + i) + ", " + r(gA + i) + ", " + n(BK * 2));
        if (bt) return;
        for (int i = 0; i < BU; ++i) {
            a("add " + r(gB + i) + ", " + r(gB + i) + ", b_slice");
            a("add " + r(gB1 + i) + ", " + r(gB1 + i) + ", b_slice");
        }
    };
    // The next slice's global loads into a set of staging registers.
    auto global_loads = [&](const std::string& guard, int sa, int sbx) {
        if (bt) {
            for (int i = 0; i < BU; ++i) a(guard + "ld.global.v4 " + r(sbx + 4 * i) + ", " + at(gB + i, 0));
            if (conv) im2col_loads(guard);
        }
        for (int i = 0; !bt && i < BU; ++i) {
            a(guard + "ld.global.v2 " + r(sbx + 4 * i) + ", " + at(gB + i, 0));
            a(guard + "ld.global.v2 " + r(sbx + 4 * i + 2) + ", " + at(gB1 + i, 0));
        }
        for (int i = 0; !conv && i < ACH; ++i) a(guard + "ld.global.v4 " + r(sa + 4 * i) + ", " + at(gA + i, 0));
    };
    auto store_slice = [&](const std::string& guard, int sa, int sbx) {
        for (int i = 0; bt && i < BU; ++i)
            a(guard + "st.shared.v4 " + at(stB, static_cast<long long>(i) * rows_per_round * SA * 4) + ", " +
              r(sbx + 4 * i));
        for (int i = 0; !bt && i < BU; ++i) {
            const int x0 = sbx + 4 * i, y0 = x0 + 2;
            a(guard + "prmt " + r(so) + ", " + r(x0) + ", " + r(y0) + ", 0x5410");
            a(guard + "prmt " + r(so + 1) + ", " + r(x0) + ", " + r(y0) + ", 0x7632");
            a(guard + "prmt " + r(so + 2) + ", " + r(x0 + 1) + ", " + r(y0 + 1) + ", 0x5410");
            a(guard + "prmt " + r(so + 3) + ", " + r(x0 + 1) + ", " + r(y0 + 1) + ", 0x7632");
            a(guard + "st.shared.v4 " + at(stB, static_cast<long long>(i) * kp_step * SB * 4) + ", " + r(so));
        }
        for (int i = 0; i < ACH; ++i)
            a(guard + "st.shared.v4 " + at(stA, static_cast<long long>(i) * rows_per_round * SA * 4) + ", " +
              r(sa + 4 * i));
    };
    // Slice 0 goes to stage 0; from here on fA/fB point at the stage being computed and stA/stB
    // at the other one, and both swap by +-flip after every slice.
    if (ahead2) {  // slice 1 into the second set, before slice 0 is stored
        advance();
        a("mov " + r(j) + ", 1");
        a("setp.lt.s32 p5, " + r(j) + ", slices");
        global_loads("@p5 ", sa2, sbx2);
    }
    store_slice("", sa, sbx);
    a("add " + r(stA) + ", " + r(stA) + ", " + n(stage));
    a("add " + r(stB) + ", " + r(stB) + ", " + n(stage));
    a("mov " + r(flip) + ", " + n(stage));
    advance();
    for (int i = 0; i < MI * NJ * 4; ++i) a("mov " + r(acc + i) + ", 0");
    a("mov " + r(j) + ", 0");
    a("bar.sync");

    // ---- Main loop: slice j-1 is in stage fA; load slice j, compute, store it to stage stA.
    auto load_a = [&](int i, int ks, int buffer) {
        const long long off = static_cast<long long>(i) * 16 * SA * 4 + ks * 32;
        const int f = fa + 4 * buffer;
        a("ld.shared " + r(f) + ", " + at(fA, off));
        a("ld.shared " + r(f + 1) + ", " + at(fA, off + 8 * SA * 4));
        a("ld.shared " + r(f + 2) + ", " + at(fA, off + 16));
        a("ld.shared " + r(f + 3) + ", " + at(fA, off + 8 * SA * 4 + 16));
    };
    auto load_b = [&](int jj, int ks) {
        if (bt) {  // B^T row jj*8 + g: words t (k 2t.., int8 4t..) and t + 4 (k 2t+8.., int8 4t+16..)
            const long long off = static_cast<long long>(jj) * 8 * SA * 4 + ks * 32;
            a("ld.shared " + r(fb + 2 * jj) + ", " + at(fB, off));
            a("ld.shared " + r(fb + 2 * jj + 1) + ", " + at(fB, off + 16));
            return;
        }
        const long long off = (static_cast<long long>(ks) * 8 * SB + jj * 8) * 4;
        a("ld.shared " + r(fb + 2 * jj) + ", " + at(fB, off));
        a("ld.shared " + r(fb + 2 * jj + 1) + ", " + at(fB, off + 4 * SB * 4));
    };
    // Fragments and mmas of the slice in stage fA/fB (the global pointers advance in between).
    auto compute_slice = [&]() {
        for (int jj = 0; jj < NJ; ++jj) load_b(jj, 0);
        load_a(0, 0, 0);
        advance();
        // Steps (ks, i) in order; step s uses A buffer s % 2 and first prefetches the next step's A
        // fragment into the other buffer (its last reader, step s-1, has issued: operands are read at
        // issue). B fragments of ks+1 are loaded right after the last mma that reads them.
        const int steps = KS * MI;
        for (int s = 0; s < steps; ++s) {
            const int ks = s / MI, i = s % MI;
            if (s + 1 < steps) load_a((s + 1) % MI, (s + 1) / MI, (s + 1) % 2);
            for (int jj = 0; jj < NJ; ++jj) {
                const int d = acc + 4 * (i * NJ + jj);
                a(std::string(mma) + " " + r(d) + ", " + r(fa + 4 * (s % 2)) + ", " + r(fb + 2 * jj) + ", " + r(d));
                if (ks + 1 < KS && i == MI - 1) load_b(jj, ks + 1);
            }
        }
    };
    auto swap_stages = [&]() {
        a("add " + r(fA) + ", " + r(fA) + ", " + r(flip));
        a("add " + r(fB) + ", " + r(fB) + ", " + r(flip));
        a("sub " + r(stA) + ", " + r(stA) + ", " + r(flip));
        a("sub " + r(stB) + ", " + r(stB) + ", " + r(flip));
        a("sub " + r(flip) + ", 0, " + r(flip));
        a("bar.sync");
    };
    if (!ahead2) {
        // One slice ahead: iteration j loads slice j into the staging registers, computes slice
        // j-1 meanwhile, then stores slice j to the other stage. The load's latency hides behind
        // one slice of mmas.
        a.label("loop");
        a("add " + r(j) + ", " + r(j) + ", 1");
        a("setp.lt.s32 p0, " + r(j) + ", slices");
        global_loads("@p0 ", sa, sbx);
        compute_slice();
        store_slice("@p0 ", sa, sbx);
        swap_stages();
        a("@p0 bra loop");
    } else {
        // Two slices ahead: slice j+1's loads are issued while slice j's are still in flight (in
        // the other register set) and slice j-1 is computed, so a load has two slices of mmas to
        // hide behind. Slice 1 was issued with slice 0; the loop is unrolled twice to alternate
        // the register sets.
        auto half = [&](int in_flight_a, int in_flight_b, int next_a, int next_b) {
            a("add " + r(j) + ", " + r(j) + ", 1");
            a("setp.lt.s32 p0, " + r(j) + ", slices");  // slice j (in flight) exists
            a("add " + r(jn) + ", " + r(j) + ", 1");
            a("setp.lt.s32 p5, " + r(jn) + ", slices");  // slice j+1 exists
            global_loads("@p5 ", next_a, next_b);
            compute_slice();
            store_slice("@p0 ", in_flight_a, in_flight_b);
            swap_stages();
        };
        a.label("loop");
        half(sa2, sbx2, sa, sbx);
        a("@!p0 bra done");
        half(sa, sbx, sa2, sbx2);
        a("@p0 bra loop");
        a.label("done");
    }

    // ---- Epilogue: pack pairs of fp32 accumulators to 16 bits, store those inside M x N.
    const Coords e = decode();
    const int row = e.x, col = e.y, mrem = e.lane, nrem = e.tn, cptr = e.tm, ldc8 = e.batch, q = e.row0, left = e.col0;
    const int nr[4] = {e.tid, e.warp, e.g, e.tq};
    const int v = fa;  // payload
    a("div " + r(row) + ", " + r(e.warp) + ", " + n(tile.warps_n));
    a("rem " + r(col) + ", " + r(e.warp) + ", " + n(tile.warps_n));
    a("mad " + r(row) + ", " + r(row) + ", " + n(WM) + ", " + r(e.row0));
    a("add " + r(row) + ", " + r(row) + ", " + r(e.g));  // the lane's first C row
    a("mad " + r(col) + ", " + r(col) + ", " + n(WN) + ", " + r(e.col0));
    a("shl " + r(z) + ", " + r(e.tq) + ", 1");
    a("add " + r(col) + ", " + r(col) + ", " + r(z));  // the lane's first C column
    a("sub " + r(mrem) + ", M, " + r(row));
    a("sub " + r(nrem) + ", N, " + r(col));
    a("mul " + r(cptr) + ", " + r(e.batch) + ", c_batch");
    a("add " + r(cptr) + ", " + r(cptr) + ", C");
    a("mad " + r(cptr) + ", " + r(row) + ", ldc, " + r(cptr));
    a("shl " + r(col) + ", " + r(col) + ", " + n(wide_out ? 2 : 1));  // fp32 partials, int32 or 16-bit C
    a("add " + r(cptr) + ", " + r(cptr) + ", " + r(col));  // &C[batch][row][col]
    a("shl " + r(ldc8) + ", ldc, 3");
    for (int jj = 0; jj < NJ; ++jj) a("sub " + r(nr[jj]) + ", " + r(nrem) + ", " + n(8 * jj));
    if (!epilogue.steps.empty()) {
        fused_epilogue(a, epilogue, type, pool, {acc, MI, NJ, v, cptr, ldc8, col, mrem, left, q, w}, nr);
        a("exit");
        return a.text();
    }
    for (int i = 0; i < MI; ++i)
        for (int h = 0; h < 2; ++h) {
            a("sub " + r(left) + ", " + r(mrem) + ", " + n(16 * i + 8 * h));  // rows left from this row
            for (int jj = 0; jj < NJ; ++jj) {
                const int d = acc + 4 * (i * NJ + jj) + 2 * h;
                if (!wide_out) a(std::string(pack) + " " + r(v) + ", " + r(d) + ", " + r(d + 1));
                a("min " + r(q) + ", " + r(left) + ", " + r(nr[jj]));
                a("setp.gt.s32 p3, " + r(q) + ", 0");
                if (wide_out) a("@p3 st.global.v2 " + at(cptr, 32LL * jj) + ", " + r(d));  // (d, d+1) as fp32 / int32
                else a("@p3 st.global " + at(cptr, 16LL * jj) + ", " + r(v));
            }
            a("add " + r(cptr) + ", " + r(cptr) + ", " + r(ldc8));
        }
    a("exit");
    return a.text();
}

const simt::Kernel* cached_kernel(const GemmTile& tile, simt::MmaType type, simt::MmaType b_type, bool conv,
                                  bool partials = false, const GemmEpilogue& epilogue = {}) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<simt::Kernel>> kernels;
    const std::string key = std::string(conv ? "conv_" : "gemm_") + tile.name() + "_" + n(tile.warps_m) + "x" +
                            n(tile.warps_n) + type_suffix(type) + (b_type != type ? type_suffix(b_type) : "") +
                            (!conv && tile.slices_ahead == 2 ? "_ahead2" : "") + (partials ? "_partials" : "") +
                            (epilogue.steps.empty() ? "" : "_" + epilogue.name());
    std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[key];
    if (!k)
        k = std::make_unique<simt::Kernel>(
            simt::assemble(tensor_source(tile, type, b_type, conv, partials, epilogue), "<gpu library>/" + key));
    return k.get();
}

}  // namespace

std::string gemm_tensor_source(const GemmTile& tile, simt::MmaType type) { return tensor_source(tile, type, type, false); }
std::string gemm_tensor_source(const GemmTile& tile, simt::MmaType a_type, simt::MmaType b_type) {
    return tensor_source(tile, a_type, b_type, false);
}
std::string conv_tensor_source(const GemmTile& tile, simt::MmaType type) { return tensor_source(tile, type, type, true); }
const simt::Kernel* gemm_tensor_kernel(const GemmTile& tile, simt::MmaType type) { return cached_kernel(tile, type, type, false); }
const simt::Kernel* gemm_tensor_kernel(const GemmTile& tile, simt::MmaType a_type, simt::MmaType b_type) {
    return cached_kernel(tile, a_type, b_type, false);
}
const simt::Kernel* conv_tensor_kernel(const GemmTile& tile, simt::MmaType type) { return cached_kernel(tile, type, type, true); }
const simt::Kernel* gemm_epilogue_kernel(const GemmTile& tile, simt::MmaType type, const GemmEpilogue& epilogue) {
    return cached_kernel(tile, type, type, false, false, epilogue);
}

int GemmEpilogue::tensor_steps() const {
    return static_cast<int>(std::count_if(steps.begin(), steps.end(), [](EpilogueStep s) {
        return s == EpilogueStep::add || s == EpilogueStep::mul;
    }));
}
bool GemmEpilogue::has_bias() const { return std::find(steps.begin(), steps.end(), EpilogueStep::bias) != steps.end(); }
bool GemmEpilogue::has_scale() const { return std::find(steps.begin(), steps.end(), EpilogueStep::scale) != steps.end(); }
std::string GemmEpilogue::name() const {
    std::string out;
    for (const EpilogueStep s : steps) {
        static const char* const names[] = {"bias", "gelu", "relu", "add", "mul", "scale"};
        out += (out.empty() ? "" : "_") + std::string(names[static_cast<int>(s)]);
    }
    return out;
}
std::vector<std::string> epilogue_step_lines(EpilogueStep step, const std::string& v, const std::string& operand,
                                             const std::string& temporary) {
    switch (step) {
        case EpilogueStep::bias:
        case EpilogueStep::add: return {"fadd " + v + ", " + v + ", " + operand};
        case EpilogueStep::mul: return {"fmul " + v + ", " + v + ", " + operand};
        case EpilogueStep::relu: return {"fmax " + v + ", " + v + ", 0.0"};
        case EpilogueStep::scale: return {"fmul " + v + ", " + v + ", alpha"};
        case EpilogueStep::gelu:  // the elementwise kernel's sigmoid form (elementwise.cpp)
            return {"fmul " + temporary + ", " + v + ", -2.4554669", "ex2 " + temporary + ", " + temporary,
                    "fadd " + temporary + ", " + temporary + ", 1.0", "rcp " + temporary + ", " + temporary,
                    "fmul " + v + ", " + v + ", " + temporary};
    }
    throw LoweringError("epilogue_step_lines: unknown step");
}

EpilogueStep epilogue_step_of(OpKind kind) {
    switch (kind) {
        case OpKind::gelu: return EpilogueStep::gelu;
        case OpKind::relu: return EpilogueStep::relu;
        case OpKind::add: return EpilogueStep::add;
        case OpKind::mul: return EpilogueStep::mul;
        default: throw LoweringError("no GEMM epilogue step for a " + std::string(to_string(kind)) + " op");
    }
}

const simt::Kernel* gemm_tensor_partials_kernel(const GemmTile& tile, simt::MmaType type) {
    return cached_kernel(tile, type, type, false, true);
}

const simt::Kernel* splitk_sum_kernel(int splits, simt::MmaType type, const GemmEpilogue& epilogue) {
    if (splits < 2 || splits > 8) throw LoweringError("split-K sum: 2 to 8 parts");
    static std::mutex mutex;
    static std::map<std::tuple<int, simt::MmaType, std::string>, std::unique_ptr<simt::Kernel>> kernels;
    std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[{splits, type, epilogue.name()}];
    if (k) return k.get();
    // r0 pair index, r1 stride, r2 its byte offset in a plane, r3 an address; r4.. the S pairs
    // (data only). Every part's load is issued before the first add, so their latencies overlap.
    const std::string t = type == simt::MmaType::f16 ? "f16" : "bf16";
    // A fused epilogue (cuBLASLt applies it in its split-K reduction): after the sum, the pair
    // goes through the steps; r(4 + 2S) holds the column's byte offset in the bias, then per
    // tensor step a word, then two temporaries (data).
    const int steps = epilogue.tensor_steps(), col = 4 + 2 * splits, word = col + 1, t0 = word + steps,
              t1 = t0 + 1;
    std::string params = "pairs, ws, plane, c";
    if (epilogue.has_bias()) params += ", bias, ldc_pairs";
    if (epilogue.has_scale()) params += ", alpha";
    for (int i = 0; i < steps; ++i) params += ", e" + n(i);
    std::string src = ".kernel splitk_sum_" + n(splits) + "_" + t + (epilogue.steps.empty() ? "" : "_" + epilogue.name()) +
                      "\n.param " + params + "\n.reg " + n(epilogue.steps.empty() ? 4 + 2 * splits : t1 + 1) + "\n";
    src += "    mov r0, %ctaid\n    mov r1, %ntid\n    mad r0, r0, r1, %tid\n    mov r2, %nctaid\n    mul r1, r2, r1\n";
    src += "loop:\n    setp.ge.s32 p0, r0, pairs\n    @p0 exit\n    shl r2, r0, 3\n    add r3, r2, ws\n";
    for (int p = 0; p < splits; ++p) {
        if (p > 0) src += "    add r3, r3, plane\n";
        src += "    ld.global.v2 " + r(4 + 2 * p) + ", [r3]\n";
    }
    for (int p = 1; p < splits; ++p) {
        src += "    fadd r4, r4, " + r(4 + 2 * p) + "\n";
        src += "    fadd r5, r5, " + r(5 + 2 * p) + "\n";
    }
    if (!epilogue.steps.empty()) {
        src += "    shl r2, r0, 2\n";
        const std::string lo = "    cvt.f32." + t + ".lo ", hi = "    cvt.f32." + t + ".hi ";
        for (int i = 0; i < steps; ++i) src += "    add r3, r2, c\n    add r3, r3, e" + n(i) + "\n    ld.global " + r(word + i) + ", [r3]\n";
        if (epilogue.has_bias()) {
            src += "    rem " + r(col) + ", r0, ldc_pairs\n    shl " + r(col) + ", " + r(col) + ", 2\n    add " + r(col) +
                   ", " + r(col) + ", bias\n    ld.global " + r(t1) + ", [" + r(col) + "]\n";
        }
        int tensor = 0;
        for (const EpilogueStep step : epilogue.steps) {
            // The step's packed operand (the bias word in t1, or a tensor word) unpacked into t0.
            const bool tensor_step = step == EpilogueStep::add || step == EpilogueStep::mul;
            for (int half = 0; half < 2; ++half) {
                if (tensor_step || step == EpilogueStep::bias)
                    src += (half == 0 ? lo : hi) + r(t0) + ", " + (tensor_step ? r(word + tensor) : r(t1)) + "\n";
                for (const std::string& line : epilogue_step_lines(step, r(4 + half), r(t0), r(t0))) src += "    " + line + "\n";
            }
            if (tensor_step) ++tensor;
        }
    }
    if (epilogue.steps.empty()) src += "    cvt." + t + "x2.f32 r4, r4, r5\n    shl r2, r0, 2\n    add r3, r2, c\n    st.global [r3], r4\n";
    else src += "    cvt." + t + "x2.f32 r4, r4, r5\n    add r3, r2, c\n    st.global [r3], r4\n";
    src += "    add r0, r0, r1\n    bra loop\n";
    k = std::make_unique<simt::Kernel>(simt::assemble(src, "<gpu library>/splitk_sum_" + n(splits) + "_" + t));
    return k.get();
}

const simt::Kernel* splitk_sum_wide_kernel(int splits, bool integer) {
    if (splits < 2 || splits > 8) throw LoweringError("split-K sum: 2 to 8 parts");
    static std::mutex mutex;
    static std::map<std::pair<int, bool>, std::unique_ptr<simt::Kernel>> kernels;
    std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[{splits, integer}];
    if (k) return k.get();
    // As splitk_sum_kernel: r0 pair index, r1 stride, r2 its byte offset in a plane, r3 an
    // address; r4.. the S pairs. The sum is stored as it is (no packing): C has the planes' layout.
    const std::string name = "splitk_sum_wide_" + n(splits) + (integer ? "_s32" : "_f32");
    std::string src = ".kernel " + name + "\n.param pairs, ws, plane, c\n.reg " + n(4 + 2 * splits) + "\n";
    src += "    mov r0, %ctaid\n    mov r1, %ntid\n    mad r0, r0, r1, %tid\n    mov r2, %nctaid\n    mul r1, r2, r1\n";
    src += "loop:\n    setp.ge.s32 p0, r0, pairs\n    @p0 exit\n    shl r2, r0, 3\n    add r3, r2, ws\n";
    for (int p = 0; p < splits; ++p) {
        if (p > 0) src += "    add r3, r3, plane\n";
        src += "    ld.global.v2 " + r(4 + 2 * p) + ", [r3]\n";
    }
    const std::string op = integer ? "    add " : "    fadd ";
    for (int p = 1; p < splits; ++p) {
        src += op + "r4, r4, " + r(4 + 2 * p) + "\n";
        src += op + "r5, r5, " + r(5 + 2 * p) + "\n";
    }
    src += "    add r3, r2, c\n    st.global.v2 [r3], r4\n    add r0, r0, r1\n    bra loop\n";
    k = std::make_unique<simt::Kernel>(simt::assemble(src, "<gpu library>/" + name));
    return k.get();
}

namespace {
// conv: the implicit-GEMM conv2d variant (conv.h): A rows are output pixels and each A element is
// gathered from the NHWC input at the im2col address of its k = (r, s, c) (computed per slice, as
// the tensor-core conv does per 16-byte chunk; padding taps read a zero word), B is the weights
// as a K x N matrix ([R][S][C/groups][K/groups] per group), C the NHWC output.
std::string fp32_source(bool conv) {
    // 64 x 64 tile, 256 threads as 16 x 16, each thread a 4 x 4 block of C (rows 4 ty.., cols
    // 4 tx..). Slices of BK = 8: A transposed into As[k][m] (pitch 68 words), B into Bs[k][n]
    // (pitch 68); each k step reads one ld.shared.v4 of each (conflict-free: a phase's 8 lanes share
    // ty, so As is a broadcast and Bs 32 consecutive words) and issues 16 ffma. The next slice's
    // global loads are issued before the current slice's ffmas (register staging), stored after a
    // barrier. The K remainder is the first slice, loaded with predicates (zeros at k < 0).
    constexpr int P = 68, a_bytes = 8 * P * 4;
    Asm a;
    const int acc = a.alloc(16), fa = a.alloc(4), fb = a.alloc(4), st = a.alloc(4);
    const int gA0 = a.alloc(), gA1 = a.alloc(), gB0 = a.alloc(), gB1 = a.alloc();
    const int sA = a.alloc(), sB = a.alloc(), rA = a.alloc(), rB = a.alloc(), j = a.alloc();
    const int tp = a.alloc(12);
    const int tid = tp, tx = tp + 1, ty = tp + 2, batch = tp + 3, tm = tp + 4, tn = tp + 5, x = tp + 6,
              y = tp + 7, z = tp + 8, base = tp + 9, k0 = tp + 10, k1 = tp + 11;
    // conv: per A element (rows x and x + 32) its image base, ih0 and iw0, then the thread's k.
    const int img = conv ? a.alloc(6) : -1, kl = conv ? a.alloc() : -1;
    std::string src = conv ? ".kernel conv_fp32_64x64x8\n" : ".kernel gemm_fp32_64x64x8\n";
    src += ".param M, N, K, Mlast, Nlast, A, B, C, lda, ldb, ldc, a_batch, b_batch, c_batch, tiles_n, "
           "tiles_per_batch, slices, kfirst";
    if (conv) src += ", H, W, Cg, S, OW, OHW, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, pix, image, zero";
    src += "\n";
    src += ".reg " + n(a.used()) + "\n.shared " + n(2 * a_bytes) + "\n";
    a.raw(src);
    auto coords = [&]() {
        a("mov " + r(tid) + ", %tid");
        a("and " + r(tx) + ", " + r(tid) + ", 15");
        a("shr " + r(ty) + ", " + r(tid) + ", 4");
        a("mov " + r(x) + ", %ctaid");
        a("div " + r(batch) + ", " + r(x) + ", tiles_per_batch");
        a("rem " + r(x) + ", " + r(x) + ", tiles_per_batch");
        a("div " + r(tm) + ", " + r(x) + ", tiles_n");
        a("rem " + r(tn) + ", " + r(x) + ", tiles_n");
        a("shl " + r(tm) + ", " + r(tm) + ", 6");  // first row
        a("shl " + r(tn) + ", " + r(tn) + ", 6");  // first column
    };
    coords();
    // A elements e = tid + 256 i: row e / 8, k e % 8 -> As[k][row]; B: k e / 64, column e % 64.
    a("and " + r(k0) + ", " + r(tid) + ", 7");
    a("shr " + r(x) + ", " + r(tid) + ", 3");              // row of element 0 (element 1: +32)
    a("mul " + r(sA) + ", " + r(k0) + ", " + n(P * 4));
    a("shl " + r(y) + ", " + r(x) + ", 2");
    a("add " + r(sA) + ", " + r(sA) + ", " + r(y));
    a("add " + r(k0) + ", " + r(k0) + ", kfirst");         // k of the A elements in slice 0
    a("setp.ge.s32 p1, " + r(k0) + ", 0");
    a("mul " + r(base) + ", " + r(batch) + ", a_batch");
    a("add " + r(base) + ", " + r(base) + ", A");
    if (!conv) {
        a("shl " + r(y) + ", " + r(k0) + ", 2");
        a("add " + r(base) + ", " + r(base) + ", " + r(y));
        a("add " + r(x) + ", " + r(x) + ", " + r(tm));
        a("min " + r(y) + ", " + r(x) + ", Mlast");
        a("mad " + r(gA0) + ", " + r(y) + ", lda, " + r(base));
        a("add " + r(y) + ", " + r(x) + ", 32");
        a("min " + r(y) + ", " + r(y) + ", Mlast");
        a("mad " + r(gA1) + ", " + r(y) + ", lda, " + r(base));
    } else {
        // Output pixel m = (image, oh, ow) of each element: the input window's corner
        // (oh*stride - pad, ow*stride - pad) and the image's base (base: the group's first channel).
        a("add " + r(x) + ", " + r(x) + ", " + r(tm));
        a("sub " + r(kl) + ", " + r(k0) + ", 8");  // k one slice before slice 0
        for (int i = 0; i < 2; ++i) {
            const int im = img + 3 * i;
            a("add " + r(y) + ", " + r(x) + ", " + n(32 * i));
            a("min " + r(y) + ", " + r(y) + ", Mlast");
            im2col_pixel_origin(a, y, im, im + 1, im + 2, base);
        }
    }
    a("and " + r(x) + ", " + r(tid) + ", 63");             // column
    a("shr " + r(k1) + ", " + r(tid) + ", 6");              // k of element 0 (element 1: +4)
    a("mul " + r(sB) + ", " + r(k1) + ", " + n(P * 4));
    a("shl " + r(y) + ", " + r(x) + ", 2");
    a("add " + r(sB) + ", " + r(sB) + ", " + r(y));
    a("add " + r(sB) + ", " + r(sB) + ", " + n(a_bytes));
    a("add " + r(x) + ", " + r(x) + ", " + r(tn));
    a("min " + r(x) + ", " + r(x) + ", Nlast");
    a("shl " + r(x) + ", " + r(x) + ", 2");
    a("mul " + r(base) + ", " + r(batch) + ", b_batch");
    a("add " + r(base) + ", " + r(base) + ", B");
    a("add " + r(base) + ", " + r(base) + ", " + r(x));
    a("add " + r(k1) + ", " + r(k1) + ", kfirst");
    a("mad " + r(gB0) + ", " + r(k1) + ", ldb, " + r(base));
    a("shl " + r(y) + ", ldb, 2");
    a("add " + r(gB1) + ", " + r(gB0) + ", " + r(y));
    for (int i = 0; i < 4; ++i) a("mov " + r(st + i) + ", 0");
    if (!conv) {
        a("@p1 ld.global " + r(st) + ", " + at(gA0, 0));
        a("@p1 ld.global " + r(st + 1) + ", " + at(gA1, 0));
    }
    a("setp.ge.s32 p2, " + r(k1) + ", 0");
    a("@p2 ld.global " + r(st + 2) + ", " + at(gB0, 0));
    a("add " + r(k1) + ", " + r(k1) + ", 4");
    a("setp.ge.s32 p2, " + r(k1) + ", 0");
    a("@p2 ld.global " + r(st + 3) + ", " + at(gB1, 0));
    a("shl " + r(rA) + ", " + r(ty) + ", 4");               // As[.][4 ty]
    a("shl " + r(rB) + ", " + r(tx) + ", 4");
    a("add " + r(rB) + ", " + r(rB) + ", " + n(a_bytes));  // Bs[.][4 tx]
    a("shl " + r(z) + ", ldb, 3");                           // b_slice = 8 rows
    auto im2col_loads = [&](const std::string& guard) {
        // The next slice's k of this thread's elements, its (r, s, c), and one gathered word per
        // element; taps in the padding read the zero word instead. Slice 0's k < 0 decompose as
        // k = 0 (their loads are predicated off). Temporaries: the set-up's, free from here on.
        const int rs = tid, c = tx, rr = ty, ss = batch, ih = tm, iw = tn, ad = x;
        a("add " + r(kl) + ", " + r(kl) + ", 8");
        a("max " + r(rs) + ", " + r(kl) + ", 0");
        a("rem " + r(c) + ", " + r(rs) + ", Cg");
        a("div " + r(rs) + ", " + r(rs) + ", Cg");
        a("rem " + r(ss) + ", " + r(rs) + ", S");
        a("div " + r(rr) + ", " + r(rs) + ", S");
        a("mul " + r(rr) + ", " + r(rr) + ", dil_h");
        a("mul " + r(ss) + ", " + r(ss) + ", dil_w");
        a("shl " + r(c) + ", " + r(c) + ", 2");
        for (int i = 0; i < 2; ++i) {
            const int im = img + 3 * i;
            im2col_address(a, ad, ih, iw, im, im + 1, im + 2, rr, ss, c);
            a(guard + "ld.global " + r(st + i) + ", " + at(ad, 0));
        }
    };
    if (conv) im2col_loads("@p1 ");
    auto advance = [&]() {
        if (!conv) {
            a("add " + r(gA0) + ", " + r(gA0) + ", 32");
            a("add " + r(gA1) + ", " + r(gA1) + ", 32");
        }
        a("add " + r(gB0) + ", " + r(gB0) + ", " + r(z));
        a("add " + r(gB1) + ", " + r(gB1) + ", " + r(z));
    };
    auto store = [&](const std::string& guard) {
        a(guard + "st.shared " + at(sA, 0) + ", " + r(st));
        a(guard + "st.shared " + at(sA, 128) + ", " + r(st + 1));
        a(guard + "st.shared " + at(sB, 0) + ", " + r(st + 2));
        a(guard + "st.shared " + at(sB, 4 * P * 4) + ", " + r(st + 3));
    };
    store("");
    advance();
    for (int i = 0; i < 16; ++i) a("mov " + r(acc + i) + ", 0");
    a("mov " + r(j) + ", 0");
    a("bar.sync");
    a.label("loop");
    a("add " + r(j) + ", " + r(j) + ", 1");
    a("setp.lt.s32 p0, " + r(j) + ", slices");
    if (conv) {
        im2col_loads("@p0 ");
    } else {
        a("@p0 ld.global " + r(st) + ", " + at(gA0, 0));
        a("@p0 ld.global " + r(st + 1) + ", " + at(gA1, 0));
    }
    a("@p0 ld.global " + r(st + 2) + ", " + at(gB0, 0));
    a("@p0 ld.global " + r(st + 3) + ", " + at(gB1, 0));
    advance();
    for (int k = 0; k < 8; ++k) {
        a("ld.shared.v4 " + r(fa) + ", " + at(rA, k * P * 4));
        a("ld.shared.v4 " + r(fb) + ", " + at(rB, k * P * 4));
        for (int i = 0; i < 4; ++i)
            for (int jj = 0; jj < 4; ++jj)
                a("ffma " + r(acc + 4 * i + jj) + ", " + r(fa + i) + ", " + r(fb + jj) + ", " + r(acc + 4 * i + jj));
    }
    a("bar.sync");
    store("@p0 ");
    a("bar.sync");
    a("@p0 bra loop");
    // Epilogue: C[row 4 ty + i][col 4 tx + jj] for those inside M x N.
    coords();
    a("shl " + r(x) + ", " + r(ty) + ", 2");
    a("add " + r(x) + ", " + r(x) + ", " + r(tm));          // first row
    a("shl " + r(y) + ", " + r(tx) + ", 2");
    a("add " + r(y) + ", " + r(y) + ", " + r(tn));          // first column
    a("sub " + r(tm) + ", M, " + r(x));                      // rows left
    a("sub " + r(tn) + ", N, " + r(y));                      // columns left
    a("mul " + r(base) + ", " + r(batch) + ", c_batch");
    a("add " + r(base) + ", " + r(base) + ", C");
    a("mad " + r(base) + ", " + r(x) + ", ldc, " + r(base));
    a("shl " + r(y) + ", " + r(y) + ", 2");
    a("add " + r(base) + ", " + r(base) + ", " + r(y));
    for (int i = 0; i < 4; ++i) {
        a("sub " + r(k0) + ", " + r(tm) + ", " + n(i));
        for (int jj = 0; jj < 4; ++jj) {
            a("sub " + r(k1) + ", " + r(tn) + ", " + n(jj));
            a("min " + r(k1) + ", " + r(k1) + ", " + r(k0));
            a("setp.gt.s32 p3, " + r(k1) + ", 0");
            a("@p3 st.global " + at(base, 4LL * jj) + ", " + r(acc + 4 * i + jj));
        }
        a("add " + r(base) + ", " + r(base) + ", ldc");
    }
    a("exit");
    return a.text();
}

}  // namespace

std::string gemm_fp32_source() { return fp32_source(false); }
std::string conv_fp32_source() { return fp32_source(true); }
const simt::Kernel* gemm_fp32_kernel() {
    static const simt::Kernel k = simt::assemble(gemm_fp32_source(), "<gpu library>/gemm_fp32_64x64x8");
    return &k;
}
const simt::Kernel* conv_fp32_kernel() {
    static const simt::Kernel k = simt::assemble(conv_fp32_source(), "<gpu library>/conv_fp32_64x64x8");
    return &k;
}

namespace {
// waves = blocks / (SMs x blocks per SM); wave efficiency = waves / ceil(waves).
void set_waves(GemmTileChoice& choice, int sms) {
    const double wave = static_cast<double>(std::max(1, sms)) * std::max(1, choice.blocks_per_sm);
    choice.waves = static_cast<double>(choice.blocks) / wave;
    choice.wave_efficiency = choice.waves / std::ceil(choice.waves);
}
}  // namespace

GemmTileChoice choose_gemm_tile(const GemmShape& shape, int sms, const simt::SmParams& sm, simt::MmaType type) {
    GemmTileChoice best;
    double best_estimate = 0;
    auto occupancy = [&](const GemmTile& tile) {
        const simt::Kernel* k = gemm_tensor_kernel(tile, simt::is_k32(type) ? type : simt::MmaType::f16);
        return simt::compute_occupancy(sm.limits, {tile.threads(), k->registers, k->shared_bytes}).blocks_per_sm;
    };
    for (GemmTile tile : gemm_tensor_tiles()) {
        int blocks_per_sm = occupancy(tile);
        if (blocks_per_sm == 0) continue;
        const std::int64_t blocks = shape.batch * ((shape.m + tile.bm - 1) / tile.bm) * ((shape.n + tile.bn - 1) / tile.bn);
        const std::int64_t per_sm = (blocks + sms - 1) / std::max(1, sms);
        const double estimate = static_cast<double>(per_sm) * tile.bm * tile.bn / tile.efficiency;
        if (best.blocks == 0 || estimate < best_estimate) {  // strict: ties keep the larger tile
            // Two slices ahead when the grid fits one wave even at that variant's occupancy: the
            // SMs then have idle warp slots, so no other block hides a slice's load latency.
            if (tile.slices_ahead == 1) {
                GemmTile ahead = tile;
                ahead.slices_ahead = 2;
                const int ahead_per_sm = occupancy(ahead);
                if (ahead_per_sm > 0 && blocks <= static_cast<std::int64_t>(sms) * ahead_per_sm) {
                    tile = ahead;
                    blocks_per_sm = ahead_per_sm;
                }
            }
            best_estimate = estimate;
            best.tile = tile;
            best.blocks = blocks;
            best.blocks_per_sm = blocks_per_sm;
            set_waves(best, sms);
        }
    }
    if (best.blocks == 0) throw LoweringError("gemm: no tensor-core tile fits on an SM of " + sm.limits.arch);
    return best;
}

float gemm_operand_to_float(std::uint16_t bits, DType dtype) {
    if (dtype == DType::bf16) {
        const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

std::uint16_t gemm_operand_bits(float f, DType dtype) {
    if (dtype == DType::bf16) return Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(f));
    return Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(f));
}

namespace {

float to_float(std::uint16_t bits, DType dtype) { return gemm_operand_to_float(bits, dtype); }
std::uint16_t to_bits(float f, DType dtype) { return gemm_operand_bits(f, dtype); }


// Operand layout and the reference check, shared by the tensor-core and FP32 paths.
struct GemmBuffers {
    std::int64_t batch, m, n, k, lda, ldb, ldc;  // leading dimensions in elements
    int element_bytes;
    std::uint32_t a = 0, b = 0, c = 0;
    std::int64_t bytes = 0;  // A + B + C
};

GemmBuffers allocate_gemm(const GemmShape& g, DType dtype, bool pad, simt::GlobalMemory& memory) {
    GemmBuffers buf{g.batch, g.m, g.n, g.k, pad ? gemm_padded(g.k) : g.k, pad ? gemm_padded(g.n) : g.n,
                    pad ? gemm_padded(g.n) : g.n, bytes_of(dtype)};
    const std::int64_t a_bytes = buf.batch * buf.m * buf.lda * buf.element_bytes;
    const std::int64_t b_bytes = buf.batch * buf.lda * buf.ldb * buf.element_bytes;  // K' rows
    const std::int64_t c_bytes = buf.batch * buf.m * buf.ldc * buf.element_bytes;
    if (a_bytes + b_bytes + c_bytes > kGemmMaxBufferBytes)
        throw LoweringError("operands of " +
                            std::to_string(a_bytes + b_bytes + c_bytes) +
                            " bytes exceed the GPU kernel library's 2 GiB of global memory (32-bit addresses below 2^31)");
    buf.bytes = a_bytes + b_bytes + c_bytes;
    buf.a = memory.allocate(static_cast<std::size_t>(a_bytes));
    buf.b = memory.allocate(static_cast<std::size_t>(b_bytes));
    buf.c = memory.allocate(static_cast<std::size_t>(c_bytes));
    return buf;
}

// Seeded inputs uniform in [-1, 1), rounded to the dtype, written into the (zero) padded layout.
// Returns them as fp32 (A: batch x m x k, B: batch x k x n, dense).
void fill_gemm(const GemmBuffers& buf, DType dtype, std::uint64_t seed, simt::GlobalMemory& memory,
               std::vector<float>& a, std::vector<float>& b) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    a.resize(static_cast<std::size_t>(buf.batch * buf.m * buf.k));
    b.resize(static_cast<std::size_t>(buf.batch * buf.k * buf.n));
    auto put = [&](std::uint32_t address, float f) {
        if (dtype == DType::fp32) {
            memory.store_f32(address, f);
            return f;
        }
        const std::uint16_t h = to_bits(f, dtype);
        std::memcpy(memory.data() + address, &h, 2);
        return to_float(h, dtype);
    };
    const auto eb = static_cast<std::uint32_t>(buf.element_bytes);
    for (std::int64_t p = 0; p < buf.batch; ++p)
        for (std::int64_t i = 0; i < buf.m; ++i)
            for (std::int64_t kk = 0; kk < buf.k; ++kk)
                a[static_cast<std::size_t>((p * buf.m + i) * buf.k + kk)] =
                    put(buf.a + static_cast<std::uint32_t>(((p * buf.m + i) * buf.lda + kk) * eb), uniform(rng));
    for (std::int64_t p = 0; p < buf.batch; ++p)
        for (std::int64_t kk = 0; kk < buf.k; ++kk)
            for (std::int64_t jx = 0; jx < buf.n; ++jx)
                b[static_cast<std::size_t>((p * buf.k + kk) * buf.n + jx)] =
                    put(buf.b + static_cast<std::uint32_t>(((p * buf.lda + kk) * buf.ldb + jx) * eb), uniform(rng));
}

// Eigen's fp32 C = A*B of the stored (rounded) inputs and sum_k |a||b| of every element, per batch.
// Made when the op is lowered, on the validation worker when the target asks (the second core:
// models/common/validation_worker.h), so that it is ready when the kernel has run.
struct GemmReference {
    using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    std::vector<Matrix> product, magnitude;  // [batch]: m x n
};

std::shared_future<GemmReference> start_gemm_reference(const GemmBuffers& buf, std::vector<float> a,
                                                       std::vector<float> b, bool on_worker) {
    return start_reference(
               [buf, a = std::move(a), b = std::move(b)] {
                   using Matrix = GemmReference::Matrix;
                   GemmReference r;
                   for (std::int64_t p = 0; p < buf.batch; ++p) {
                       const Eigen::Map<const Matrix> A(a.data() + p * buf.m * buf.k, buf.m, buf.k);
                       const Eigen::Map<const Matrix> B(b.data() + p * buf.k * buf.n, buf.k, buf.n);
                       r.product.emplace_back(A * B);
                       r.magnitude.emplace_back(A.cwiseAbs() * B.cwiseAbs());
                   }
                   return r;
               },
               on_worker)
        .share();
}

// visit(p, i, j, reference, magnitude) for every output element: the checks of the plain and the
// fused GEMM share it.
template <class Visit>
void for_each_gemm_reference(const GemmBuffers& buf, const GemmReference& r, Visit visit) {
    for (std::int64_t p = 0; p < buf.batch; ++p) {
        const auto& ref = r.product[static_cast<std::size_t>(p)];
        const auto& mag = r.magnitude[static_cast<std::size_t>(p)];
        for (std::int64_t i = 0; i < buf.m; ++i)
            for (std::int64_t jx = 0; jx < buf.n; ++jx) visit(p, i, jx, static_cast<double>(ref(i, jx)), static_cast<double>(mag(i, jx)));
    }
}

std::function<LoweringNumerics(const simt::GlobalMemory&)> gemm_check(const GemmBuffers& buf, DType dtype,
                                                                       std::vector<float> a, std::vector<float> b,
                                                                       bool on_worker) {
    // Reference: Eigen fp32 GEMM of the same (rounded) inputs. Bound per element: the fp32
    // accumulation of K products in any order, K * 2^-24 * sum_k |a||b|, plus the rounding of the
    // output to the dtype (half an ulp: 2^-11 relative for fp16, 2^-8 for bf16, 0 for fp32).
    return [buf, dtype, reference = start_gemm_reference(buf, std::move(a), std::move(b), on_worker)](
               const simt::GlobalMemory& memory) {
        LoweringNumerics out;
        const double unit_out = dtype == DType::fp16 ? 0x1p-11 : dtype == DType::bf16 ? 0x1p-8 : 0.0;
        for_each_gemm_reference(buf, reference.get(), [&](std::int64_t p, std::int64_t i, std::int64_t jx, double r, double mag) {
                    const auto address = static_cast<std::uint32_t>(
                        buf.c + ((p * buf.m + i) * buf.ldc + jx) * buf.element_bytes);
                    float got;
                    if (dtype == DType::fp32) {
                        got = memory.load_f32(address);
                    } else {
                        std::uint16_t h;
                        std::memcpy(&h, memory.data() + address, 2);
                        got = to_float(h, dtype);
                    }
                    const double accumulate = static_cast<double>(buf.k) * 0x1p-24 * mag;
                    const double bound = accumulate + unit_out * (std::fabs(r) + accumulate) + 1e-30;
                    const double err = std::fabs(static_cast<double>(got) - r);
                    out.max_abs_err = std::max(out.max_abs_err, err);
                    if (std::fabs(r) > 0) out.max_rel_err = std::max(out.max_rel_err, err / std::fabs(r));
                    if (!(err <= bound)) out.passed = false;
                    ++out.checked;
        });
        return out;
    };
}

// The launch-shape stats of a tensor-core GEMM: grid (its blocks, or a persistent kernel's tiles),
// block, occupancy, waves.
void push_launch_shape_stats(LoweredKernel& out, const GemmTileChoice& choice, int threads) {
    out.stats.push_back(stat_value(stat::grid, static_cast<double>(choice.blocks)));
    out.stats.push_back(stat_value(stat::block, threads));
    out.stats.push_back(stat_value(stat::blocks_per_sm, choice.blocks_per_sm));
    out.stats.push_back(stat_value(stat::waves, choice.waves));
    out.stats.push_back(stat_value(stat::wave_efficiency, choice.wave_efficiency));
}

// A persistent Hopper launch's waves: those of its tiles, as a non-persistent grid would run them.
GemmTileChoice hopper_tile_waves(std::int64_t tiles, int blocks_per_sm, int sms) {
    GemmTileChoice waves;
    waves.blocks = tiles;
    waves.blocks_per_sm = blocks_per_sm;
    set_waves(waves, sms);
    return waves;
}

// The launch-shape stats and, with real data, the inputs and the Eigen check.
void finish_tensor_lowering(LoweredKernel& out, const GemmTileChoice& choice, int threads, const Op& op,
                            const GemmBuffers& buf, simt::GlobalMemory& memory, const LoweringTarget& target) {
    push_launch_shape_stats(out, choice, threads);
    if (target.real_data) {
        std::vector<float> a, b;
        fill_gemm(buf, op.dtype, target.seed, memory, a, b);
        out.check = gemm_check(buf, op.dtype, std::move(a), std::move(b), target.reference_on_worker);
    }
}

// The check of a fused GEMM: Eigen's fp32 A*B, then the epilogue in double. Bound per element: the
// GEMM's (K 2^-24 sum|a||b|), carried through the steps (add, bias: unchanged, mul: times |m|,
// relu: unchanged, gelu: times 1.2, the largest slope of x sigma(1.702 x) being 1.13), plus each
// step's fp32 rounding (2^-24 of its result; gelu (5|x| + 6) 2^-24 as the elementwise kernel's)
// and the final rounding to the dtype.
std::function<LoweringNumerics(const simt::GlobalMemory&)> gemm_epilogue_check(
    const GemmBuffers& buf, DType dtype, const GemmEpilogue& epilogue, std::vector<float> a, std::vector<float> b,
    std::vector<float> bias, std::vector<std::vector<float>> tensors, bool on_worker) {
    return [buf, dtype, epilogue, reference = start_gemm_reference(buf, std::move(a), std::move(b), on_worker),
            bias = std::move(bias), tensors = std::move(tensors)](const simt::GlobalMemory& memory) {
        LoweringNumerics out;
        const Storage storage = storage_of(dtype);
        const double u32 = 0x1p-24, unit_out = unit_roundoff(storage);
        for_each_gemm_reference(buf, reference.get(), [&](std::int64_t p, std::int64_t i, std::int64_t jx, double ref, double mag) {
                    double v = ref, err = static_cast<double>(buf.k) * u32 * mag;
                    const std::size_t at_c = static_cast<std::size_t>((p * buf.m + i) * buf.ldc + jx);
                    std::size_t tensor = 0;
                    for (const EpilogueStep step : epilogue.steps) {
                        switch (step) {
                            case EpilogueStep::bias: v += bias[static_cast<std::size_t>(jx)]; break;
                            case EpilogueStep::add: v += tensors[tensor++][at_c]; break;
                            case EpilogueStep::mul: {
                                const double m = tensors[tensor++][at_c];
                                v *= m;
                                err *= std::fabs(m);
                                break;
                            }
                            case EpilogueStep::relu: v = std::fmax(v, 0.0); break;
                            case EpilogueStep::scale:
                                v *= epilogue.alpha;
                                err *= std::fabs(epilogue.alpha);
                                break;
                            case EpilogueStep::gelu: {
                                const double x = v;
                                v = elementwise_reference_double(OpKind::gelu, x, 0);
                                err = 1.2 * err + (5 * std::fabs(x) + 6) * u32 * std::fabs(v);
                                continue;
                            }
                        }
                        if (step != EpilogueStep::relu) err += u32 * (std::fabs(v) + err);
                    }
                    const double bound = err + unit_out * (std::fabs(v) + err) + subnormal_half_spacing(storage) + 1e-30;
                    const auto address = static_cast<std::uint32_t>(buf.c + at_c * 2);
                    std::uint16_t h;
                    std::memcpy(&h, memory.data() + address, 2);
                    const double got = to_float(h, dtype);
                    const double e = std::fabs(got - v);
                    out.max_abs_err = std::max(out.max_abs_err, e);
                    if (std::fabs(v) > 0) out.max_rel_err = std::max(out.max_rel_err, e / std::fabs(v));
                    if (!(e <= bound)) out.passed = false;
                    ++out.checked;
        });
        return out;
    };
}

// A fused epilogue's operands, allocated after A, B and C (A stays the op's first buffer: the warm
// L2's input): the bias (N' elements), then each tensor step's operand in C's layout. Their kernel
// arguments follow the GEMM launch's, or with split-K the sum launch's (which then applies the
// epilogue, as cuBLASLt's split-K reduction does): bias (and the sum's row pitch in pairs), alpha,
// and each tensor's address minus C's.
struct EpilogueOperands {
    std::uint32_t bias = 0;
    std::vector<std::uint32_t> tensors;
};
EpilogueOperands allocate_epilogue_operands(const GemmBuffers& buf, const GemmEpilogue& epilogue, bool split,
                                            LoweredKernel& out, simt::GlobalMemory& memory) {
    auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    const std::int64_t eb = buf.element_bytes;
    const std::int64_t c_bytes = buf.m * buf.ldc * eb * buf.batch;
    if (buf.bytes + buf.ldc * eb + epilogue.tensor_steps() * c_bytes > kGemmMaxBufferBytes)
        throw LoweringError("operands exceed the GPU kernel library's 2 GiB of global memory (32-bit addresses below 2^31)");
    std::vector<std::uint32_t>& args = split ? out.then.front().args : out.args;
    EpilogueOperands operands;
    if (epilogue.has_bias()) {
        operands.bias = memory.allocate(static_cast<std::size_t>(buf.ldc * eb));
        args.push_back(operands.bias);
        if (split) args.push_back(u(buf.ldc / 2));
    }
    if (epilogue.has_scale()) {
        std::uint32_t alpha_bits;
        std::memcpy(&alpha_bits, &epilogue.alpha, 4);
        args.push_back(alpha_bits);
    }
    for (int i = 0; i < epilogue.tensor_steps(); ++i) {
        operands.tensors.push_back(memory.allocate(static_cast<std::size_t>(c_bytes)));
        args.push_back(operands.tensors.back() - buf.c);  // the kernel adds it to its C address
    }
    return operands;
}

LoweringTarget without_data(const LoweringTarget& target) {
    LoweringTarget t = target;
    t.real_data = false;
    return t;
}

// With real data: A, B, the bias and the tensors seeded (the tensors like the elementwise ops'
// second operands: one stream per tensor, after A and B's) and the fused check (Eigen's A*B, then
// the steps in double).
void fill_and_check_epilogue(LoweredKernel& out, const Op& op, const GemmBuffers& buf, const GemmEpilogue& epilogue,
                             const EpilogueOperands& operands, simt::GlobalMemory& memory, const LoweringTarget& target) {
    if (!target.real_data) return;
    std::vector<float> av, bv, bias_values;
    fill_gemm(buf, op.dtype, target.seed, memory, av, bv);
    const Storage storage = storage_of(op.dtype);
    auto fill = [&](std::uint32_t address, std::int64_t count, int stream) {
        std::mt19937_64 rng = tensor_rng(target.seed, stream);
        std::vector<float> values(static_cast<std::size_t>(count));
        for (float& v : values) v = round_to(storage, unit_random(rng));
        store_elements(memory, address, values, storage);
        return values;
    };
    if (operands.bias) bias_values = fill(operands.bias, buf.ldc, 100);
    std::vector<std::vector<float>> tensor_values;
    for (std::size_t i = 0; i < operands.tensors.size(); ++i)
        tensor_values.push_back(fill(operands.tensors[i], buf.batch * buf.m * buf.ldc, 101 + static_cast<int>(i)));
    out.check = gemm_epilogue_check(buf, op.dtype, epilogue, std::move(av), std::move(bv), std::move(bias_values),
                                    std::move(tensor_values), target.reference_on_worker);
}

// The main loop of the tensor-core GEMM kernels (tensor_source: label "loop", closed by the last
// backward branch to it). Its counter runs over the slices after the first (slice 0 is loaded
// before it), one slice a trip, or two with two slices in flight (the loop unrolled twice, leaving
// through "done" between its halves): slices - 1 back-edges, or (slices - 1) / 2.
std::optional<simt::SampledLoop> tensor_gemm_loop(const simt::Kernel& kernel, const GemmTile& tile, std::int64_t slices) {
    const auto head = kernel.labels.find("loop");
    if (head == kernel.labels.end() || slices < 1) return std::nullopt;
    simt::SampledLoop loop;
    loop.head_pc = head->second;
    for (int pc = static_cast<int>(kernel.code.size()) - 1; pc > loop.head_pc && loop.back_edge_pc < 0; --pc)
        if (kernel.code[static_cast<std::size_t>(pc)].op == simt::Opcode::bra &&
            kernel.code[static_cast<std::size_t>(pc)].target == loop.head_pc)
            loop.back_edge_pc = pc;
    loop.trips_per_block = static_cast<std::uint32_t>(tile.slices_ahead == 2 ? (slices - 1) / 2 : slices - 1);
    if (loop.back_edge_pc < 0) return std::nullopt;
    return loop;
}

LoweredKernel lower_tensor_gemm(const Op& op, const GemmShape& g, simt::GlobalMemory& memory,
                                const LoweringTarget& target, const GemmTileChoice& choice,
                                const GemmEpilogue& epilogue = {}) {
    const GemmTile& tile = choice.tile;
    const simt::MmaType type = op.dtype == DType::bf16 ? simt::MmaType::bf16 : simt::MmaType::f16;
    const GemmBuffers buf = allocate_gemm(g, op.dtype, true, memory);
    const std::int64_t splits = choice.splits;
    if (splits > 1 && (g.batch != 1 || buf.lda % (8 * splits) != 0))
        throw LoweringError("split-K needs batch 1 and K' divisible by 8 x " + std::to_string(splits));
    auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    const std::int64_t eb = buf.element_bytes;
    // Split-K: each of the S parts of K is a batch entry of the same kernel (A advanced by Ks
    // columns, B by Ks rows) writing its own fp32 plane of the workspace.
    std::uint32_t workspace = 0;
    const std::int64_t plane = buf.m * buf.ldc * 4;
    if (splits > 1) {
        if (buf.bytes + splits * plane > kGemmMaxBufferBytes)
            throw LoweringError("split-K workspace exceeds the GPU kernel library's 2 GiB of global memory (32-bit addresses below 2^31)");
        workspace = memory.allocate(static_cast<std::size_t>(splits * plane));
    }
    const std::int64_t k_part = buf.lda / splits;
    LoweredKernel out;
    out.kernel = splits > 1                 ? gemm_tensor_partials_kernel(tile, type)
                 : !epilogue.steps.empty() ? gemm_epilogue_kernel(tile, type, epilogue)
                                           : gemm_tensor_kernel(tile, type);
    const std::int64_t tiles_m = (g.m + tile.bm - 1) / tile.bm, tiles_n = (g.n + tile.bn - 1) / tile.bn;
    const std::int64_t slices = (k_part + tile.bk - 1) / tile.bk;
    const std::int64_t kfirst = k_part - slices * tile.bk;
    const std::int64_t blocks = g.batch * splits * tiles_m * tiles_n;
    if (blocks > 0xffffffffLL) throw LoweringError("gemm: grid too large");
    out.dims = {static_cast<std::uint32_t>(blocks), static_cast<std::uint32_t>(tile.threads())};
    // The kernel's batch entries: the op's matrices, or (split-K) the parts of K, whose A starts
    // k_part columns on, B k_part rows down, and whose C is its fp32 plane of the workspace.
    const bool split = splits > 1;
    const std::int64_t c_element = split ? 4 : eb;
    const std::int64_t a_step = split ? k_part * eb : buf.m * buf.lda * eb;
    const std::int64_t b_step = split ? k_part * buf.ldb * eb : buf.lda * buf.ldb * eb;
    out.args = {u(g.m), u(g.n), u(g.m - 1), u(buf.ldb - 4), buf.a, buf.b, split ? workspace : buf.c,
                u(buf.lda * eb), u(buf.ldb * eb), u(buf.ldc * c_element),
                u(a_step), u(b_step), u(buf.m * buf.ldc * c_element),
                u(tiles_m), u(tiles_n), u(tiles_m * tiles_n), u(kGemmGroupRows * tiles_n),
                u(slices), u(kfirst), u(tile.bk * buf.ldb * eb)};
    out.loop = tensor_gemm_loop(*out.kernel, tile, slices);
    if (split) {
        LoweredLaunch sum;
        sum.kernel = splitk_sum_kernel(static_cast<int>(splits), type, epilogue);
        const std::int64_t pairs = buf.m * buf.ldc / 2;
        sum.dims = elementwise_dims(pairs, target.sms, blocks_per_sm(*sum.kernel, kElementwiseBlock, target));
        sum.args = {u(pairs), workspace, u(plane), buf.c};
        out.then.push_back(std::move(sum));
    }
    out.stats.push_back(stat_value(stat::tile_m, tile.bm));
    out.stats.push_back(stat_value(stat::tile_n, tile.bn));
    out.stats.push_back(stat_value(stat::tile_k, tile.bk));
    out.stats.push_back(stat_value(stat::warps_m, tile.warps_m));
    out.stats.push_back(stat_value(stat::warps_n, tile.warps_n));
    out.stats.push_back(stat_value(stat::slices_ahead, tile.slices_ahead));
    out.stats.push_back(stat_value(stat::splits, static_cast<double>(splits)));
    if (epilogue.steps.empty()) {
        // Split-K rounds the S fp32 partials' sum once, like the one-part kernel: the same check.
        finish_tensor_lowering(out, choice, tile.threads(), op, buf, memory, target);
        return out;
    }
    const EpilogueOperands operands = allocate_epilogue_operands(buf, epilogue, split, out, memory);
    GemmTileChoice shown = choice;
    shown.blocks_per_sm = blocks_per_sm(*out.kernel, static_cast<std::uint32_t>(tile.threads()), target);
    set_waves(shown, target.sms);
    finish_tensor_lowering(out, shown, tile.threads(), op, buf, memory, without_data(target));
    fill_and_check_epilogue(out, op, buf, epilogue, operands, memory, target);
    return out;
}

// The Hopper path (gemm_hopper.h) on the padded buffers (K' and N' multiples of 8, so every row
// pitch is a multiple of 16 bytes, as TMA requires); a shape that does not tile exactly runs the
// edge variant (choice.edges), whose bounded boxes read zeros past M, N' and the part's K. splits
// > 1: split-K (choose_hopper_splits), the parts of K as the partials kernel's batch entries and
// splitk_sum_kernel as a second launch.
// epilogue: a fused epilogue, in the kernel (hopper_gemm_epilogue_kernel) or, split, in the sum
// launch; the kernel's own occupancy sets the persistent grid.
LoweredKernel lower_hopper_gemm(const Op& op, const GemmShape& g, simt::GlobalMemory& memory,
                                const LoweringTarget& target, const HopperTileChoice& choice, int splits,
                                const GemmEpilogue& epilogue = {}) {
    const HopperTile& tile = choice.tile;
    const simt::MmaType type = op.dtype == DType::bf16 ? simt::MmaType::bf16 : simt::MmaType::f16;
    const GemmBuffers buf = allocate_gemm(g, op.dtype, true, memory);
    auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    const std::int64_t eb = buf.element_bytes;
    const std::int64_t tiles_m = (g.m + tile.bm - 1) / tile.bm, tiles_n = (g.n + tile.bn - 1) / tile.bn;
    const bool split = splits > 1;
    if (split && (g.batch != 1 || (buf.lda / HopperTile::bk(type)) % splits != 0))
        throw LoweringError("Hopper split-K needs batch 1 and K / 64 divisible by " + std::to_string(splits));
    // Split-K: part p is batch entry p, its A k_part columns on, its B k_part rows down, its C the
    // p-th fp32 plane of the workspace.
    const std::int64_t k_part = buf.lda / splits, plane = buf.m * buf.ldc * 4;
    std::uint32_t workspace = 0;
    if (split) {
        if (buf.bytes + splits * plane > kGemmMaxBufferBytes)
            throw LoweringError("split-K workspace exceeds the GPU kernel library's 2 GiB of global memory (32-bit addresses below 2^31)");
        workspace = memory.allocate(static_cast<std::size_t>(splits * plane));
    }
    const std::int64_t tiles = choice.blocks * splits;
    if (tiles > 0x7fffffffLL) throw LoweringError("gemm: grid too large");
    const bool fused = !epilogue.steps.empty();
    LoweredKernel out;
    out.kernel = fused && !split ? hopper_gemm_epilogue_kernel(tile, type, choice.edges, epilogue,
                                                               choose_hopper_epilogue_chunk(tile, type, choice.edges, epilogue, target.sm))
                                 : hopper_gemm_kernel(tile, type, split, choice.edges);
    // Persistent: one block per resident slot (whole clusters), at this kernel's occupancy (a fused
    // epilogue's registers may allow fewer blocks per SM than the plain kernel's).
    const int per_sm = fused && !split ? blocks_per_sm(*out.kernel, static_cast<std::uint32_t>(tile.threads()), target)
                                       : choice.blocks_per_sm;
    const std::int64_t slots = static_cast<std::int64_t>(target.sms / tile.cluster) * tile.cluster * per_sm;
    const std::int64_t grid = std::min(tiles, slots);
    const int group_rows = choose_hopper_group_rows({g.batch, g.m, g.n, k_part}, tile, grid, target.l2_bytes);
    const std::int64_t bk = HopperTile::bk(type);
    out.dims = {static_cast<std::uint32_t>(grid), static_cast<std::uint32_t>(tile.threads())};
    const std::int64_t c_element = split ? 4 : eb;
    out.args = {buf.a, buf.b, split ? workspace : buf.c, u(buf.lda * eb), u(buf.ldb * eb), u(buf.ldc * c_element),
                u(split ? k_part * eb : buf.m * buf.lda * eb), u(split ? k_part * buf.ldb * eb : buf.lda * buf.ldb * eb),
                u(buf.m * buf.ldc * c_element),
                u(tiles_m), u(tiles_m * tiles_n), u(group_rows), u(group_rows * tiles_n), u(tiles),
                u((k_part + bk - 1) / bk)};
    // Edge variant: A has M rows of the part's K, B the part's K rows of N' (bytes), C N' columns.
    if (choice.edges) out.args.insert(out.args.end(), {u(g.m), u(k_part * eb), u(k_part), u(buf.ldb * eb), u(buf.ldc)});
    if (split) {
        LoweredLaunch sum;
        sum.kernel = splitk_sum_kernel(splits, type, epilogue);
        const std::int64_t pairs = buf.m * buf.ldc / 2;
        sum.dims = elementwise_dims(pairs, target.sms, blocks_per_sm(*sum.kernel, kElementwiseBlock, target));
        sum.args = {u(pairs), workspace, u(plane), buf.c};
        out.then.push_back(std::move(sum));
    }
    out.stats.push_back(stat_value(stat::tile_m, tile.bm));
    out.stats.push_back(stat_value(stat::tile_n, tile.bn));
    out.stats.push_back(stat_value(stat::tile_k, HopperTile::bk(type)));
    out.stats.push_back(stat_value(stat::slices_ahead, tile.stages - 1));  // k-blocks loading while one computes
    out.stats.push_back(stat_value(stat::splits, splits));
    if (!fused) {
        // The S fp32 partials' sum is rounded once to the dtype, like the one-part kernel: the same check.
        finish_tensor_lowering(out, hopper_tile_waves(tiles, per_sm, target.sms), tile.threads(), op, buf, memory, target);
        return out;
    }
    const EpilogueOperands operands = allocate_epilogue_operands(buf, epilogue, split, out, memory);
    finish_tensor_lowering(out, hopper_tile_waves(tiles, per_sm, target.sms), tile.threads(), op, buf, memory,
                           without_data(target));
    fill_and_check_epilogue(out, op, buf, epilogue, operands, memory, target);
    return out;
}

LoweredKernel lower_fp32_gemm(const GemmShape& g, simt::GlobalMemory& memory, const LoweringTarget& target) {
    const GemmBuffers buf = allocate_gemm(g, DType::fp32, false, memory);
    LoweredKernel out;
    out.kernel = gemm_fp32_kernel();
    const std::int64_t tiles_m = (g.m + kFp32TileM - 1) / kFp32TileM, tiles_n = (g.n + kFp32TileN - 1) / kFp32TileN;
    const std::int64_t slices = (g.k + kFp32TileK - 1) / kFp32TileK;
    const std::int64_t blocks = g.batch * tiles_m * tiles_n;
    if (blocks > 0xffffffffLL) throw LoweringError("gemm: grid too large");
    out.dims = {static_cast<std::uint32_t>(blocks), 256};
    auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    out.args = {u(g.m), u(g.n), u(g.k), u(g.m - 1), u(g.n - 1), buf.a, buf.b, buf.c,
                u(g.k * 4), u(g.n * 4), u(g.n * 4), u(g.m * g.k * 4), u(g.k * g.n * 4), u(g.m * g.n * 4),
                u(tiles_n), u(tiles_m * tiles_n), u(slices), u(g.k - slices * kFp32TileK)};
    out.stats.push_back(stat_value(stat::tile_m, kFp32TileM));
    out.stats.push_back(stat_value(stat::tile_n, kFp32TileN));
    out.stats.push_back(stat_value(stat::tile_k, kFp32TileK));
    out.stats.push_back(stat_value(stat::grid, static_cast<double>(blocks)));
    out.stats.push_back(stat_value(stat::block, 256));
    if (target.real_data) {
        std::vector<float> a, b;
        fill_gemm(buf, DType::fp32, target.seed, memory, a, b);
        out.check = gemm_check(buf, DType::fp32, std::move(a), std::move(b), target.reference_on_worker);
    }
    return out;
}

}  // namespace

void lower_hopper_tn_launch(LoweredKernel& out, const GemmShape& g, simt::MmaType type, simt::MmaType b_type,
                            std::uint32_t a, std::uint32_t b, std::uint32_t c, std::int64_t kp, std::int64_t np,
                            const HopperTileChoice& hopper, const LoweringTarget& target, simt::GlobalMemory& memory,
                            int splits, const HopperIm2col* im2col) {
    auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    // A shape that does not tile exactly runs the edge variant (bounded boxes: zeros past M, N and K').
    const HopperTile& tile = hopper.tile;
    const bool eight_bit = simt::is_k32(type);
    const std::int64_t bk = HopperTile::bk(type);
    splits = std::max(1, splits);
    const bool split = splits > 1;
    if (split && (g.batch != 1 || kp % (bk * splits) != 0))
        throw LoweringError("Hopper split-K needs batch 1 and K' divisible by " + std::to_string(bk * splits));
    const std::int64_t tiles_m = (g.m + tile.bm - 1) / tile.bm, tiles_n = (g.n + tile.bn - 1) / tile.bn;
    const std::int64_t tiles = hopper.blocks * splits;
    if (tiles > 0x7fffffffLL) throw LoweringError("gemm: grid too large");
    if (im2col && (g.batch != 1 || b_type != type)) throw LoweringError("the Hopper convolution takes one group of one type");
    // Split-K: the 16-bit kernels' partials variant stores fp32 pairs; the 8-bit kernel stores its
    // 32-bit accumulators anyway, so the plain kernel writes the planes.
    const bool partials = split && !eight_bit;
    const int tap_bytes = im2col && im2col->pixel_bytes < HopperTile::kblock_bytes ? static_cast<int>(im2col->pixel_bytes)
                                                                                   : HopperTile::kblock_bytes;
    out.kernel = im2col            ? hopper_conv_kernel(tile, type, hopper.edges, partials, tap_bytes)
                 : b_type != type ? hopper_gemm_kernel(tile, type, b_type, hopper.edges)
                                  : hopper_gemm_kernel(tile, type, partials, hopper.edges, true);
    // Persistent: one block per resident slot, counted for the kernel that runs (the convolution's
    // producer holds three more registers than the GEMM's the tile rule sized).
    const int per_sm = simt::compute_occupancy(target.sm.limits, {tile.threads(), out.kernel->registers, out.kernel->shared_bytes})
                           .blocks_per_sm;
    if (per_sm == 0) throw LoweringError("the Hopper kernel " + out.kernel->name + " does not fit an SM");
    const std::int64_t slots = static_cast<std::int64_t>(target.sms / tile.cluster) * tile.cluster * per_sm;
    const std::int64_t grid = std::min(tiles, slots);
    const std::int64_t k_part = kp / splits;
    const int group_rows = choose_hopper_group_rows({g.batch, g.m, g.n, k_part}, tile, grid, target.l2_bytes, type);
    const std::int64_t eb = simt::mma_element_bytes(type), c_eb = eight_bit || split ? 4 : 2;
    const std::int64_t row_bytes = kp * eb, part_bytes = k_part * eb;
    const std::int64_t plane = g.m * np * 4;  // split-K: one part's 32-bit C
    std::uint32_t workspace = 0;
    if (split) {
        // Every address stays below 2^31, as the kernels' 32-bit signed arithmetic needs.
        if (static_cast<std::int64_t>(memory.size()) + 256 + splits * plane > kGemmMaxBufferBytes)
            throw LoweringError("split-K workspace exceeds the GPU kernel library's 2 GiB of global memory (32-bit addresses below 2^31)");
        workspace = memory.allocate(static_cast<std::size_t>(splits * plane));
    }
    const std::int64_t a_pitch = im2col ? 0 : row_bytes;  // the im2col map locates A's rows itself
    // Batch entries: the GEMM's matrices, or (split-K) the parts of K: A and B^T part_bytes further
    // along their rows, C the part's plane.
    const std::int64_t a_step = im2col ? 0 : split ? part_bytes : g.m * row_bytes;
    const std::int64_t b_step = split ? part_bytes : g.n * row_bytes;
    const std::int64_t c_step = split ? plane : g.m * np * c_eb;
    out.dims = {static_cast<std::uint32_t>(grid), static_cast<std::uint32_t>(tile.threads())};
    out.args = {a, b, split ? workspace : c, u(a_pitch), u(row_bytes), u(np * c_eb), u(a_step), u(b_step), u(c_step),
                u(tiles_m), u(tiles_m * tiles_n), u(group_rows), u(group_rows * tiles_n), u(tiles),
                u((k_part + bk - 1) / bk)};
    if (hopper.edges) out.args.insert(out.args.end(), {u(g.m), u(part_bytes), u(g.n), u(part_bytes), u(np)});
    if (im2col) out.args.insert(out.args.end(), {u(im2col->pixel_bytes), u(im2col->taps_s)});
    if (im2col && tap_bytes < HopperTile::kblock_bytes) out.args.push_back(u(im2col->taps));
    if (split) {
        LoweredLaunch sum;
        sum.kernel = eight_bit ? splitk_sum_wide_kernel(splits, type == simt::MmaType::s8) : splitk_sum_kernel(splits, type);
        const std::int64_t pairs = plane / 8;
        sum.dims = elementwise_dims(pairs, target.sms, blocks_per_sm(*sum.kernel, kElementwiseBlock, target));
        sum.args = {u(pairs), workspace, u(plane), c};
        out.then.push_back(std::move(sum));
    }
    out.stats.push_back(stat_value(stat::tile_m, tile.bm));
    out.stats.push_back(stat_value(stat::tile_n, tile.bn));
    out.stats.push_back(stat_value(stat::tile_k, bk));  // values of the type
    out.stats.push_back(stat_value(stat::slices_ahead, tile.stages - 1));
    out.stats.push_back(stat_value(stat::splits, splits));
    push_launch_shape_stats(out, hopper_tile_waves(tiles, per_sm, target.sms), tile.threads());
}

namespace {

// The int8 GEMM (docs/gpu.md, "int8 GEMMs"): A is M x K' int8 row-major, B is given transposed,
// N x K' int8 (cuBLASLt's int8 "TN" layout: both operands K-contiguous; inference engines store
// int8 weights so), C is M x N' int32, the exact accumulators (cublasGemmEx with CUDA_R_8I inputs,
// CUDA_R_32I output and CUBLAS_COMPUTE_32I). K' = K rounded up to 16 (16-byte rows), N' = N
// rounded up to 8; the padding is zero.
//
// fp8 (docs/gpu.md, "fp8 GEMMs") runs the same kernel with the fp8 mma: A and B hold fp8_e4m3 or
// fp8_e5m2 bytes in the same layout (cuBLASLt's fp8 GEMMs require it too: TN, K-contiguous
// operands), C is M x N' fp32, the accumulators as they are (cublasLtMatmul with CUDA_R_8F_E4M3
// inputs, CUDA_R_32F output, CUBLAS_COMPUTE_32F; no scaling factors, no fp8 output).
//
// On Hopper targets (lower_gemm) the same buffers feed the 8-bit Hopper kernel (gemm_hopper.h:
// wgmma m64nNk32, K-major A and B^T as PTX requires), `hopper` its tile; shapes it does not tile
// exactly keep the mma.m16n8k32 kernel.
//
// b_dtype: B's format; it differs from dtype (A's) only for fp8 (e4m3 x e5m2, Op::b_dtype), and then
// the kernels' mma and wgmma take the mixed .atype.btype form, B's bytes and reference are rounded
// to B's format.
LoweredKernel lower_byte_gemm(const GemmShape& g, DType dtype, DType b_dtype, simt::GlobalMemory& memory,
                              const LoweringTarget& target, const GemmTileChoice& choice, const HopperTileChoice* hopper) {
    const bool fp8 = is_fp8(dtype);
    if (b_dtype != dtype && !(fp8 && is_fp8(b_dtype))) throw LoweringError("only the fp8 formats mix (e4m3 x e5m2)");
    const simt::MmaType type = byte_gemm_mma_type(dtype), b_type = byte_gemm_mma_type(b_dtype);
    const std::int64_t kp = gemm_int8_padded_k(g.k), np = gemm_padded(g.n);
    const std::int64_t a_bytes = g.batch * g.m * kp, b_bytes = g.batch * g.n * kp, c_bytes = g.batch * g.m * np * 4;
    if (a_bytes + b_bytes + c_bytes > kGemmMaxBufferBytes)
        throw LoweringError("operands of " + std::to_string(a_bytes + b_bytes + c_bytes) +
                            " bytes exceed the GPU kernel library's 2 GiB of global memory (32-bit addresses below 2^31)");
    const std::uint32_t a = memory.allocate(static_cast<std::size_t>(a_bytes));
    const std::uint32_t b = memory.allocate(static_cast<std::size_t>(b_bytes));
    const std::uint32_t c = memory.allocate(static_cast<std::size_t>(c_bytes));
    auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    LoweredKernel out;
    if (hopper) {
        lower_hopper_tn_launch(out, g, type, b_type, a, b, c, kp, np, *hopper, target, memory,
                               choose_hopper_splits(g, *hopper, target, type));
    } else {
        const GemmTile& tile = choice.tile;
        // Split-K (choose_gemm_splits with 1-byte elements): each of the S parts of K' is a batch
        // entry of the same kernel (A and B^T advanced by K'/S bytes along their rows) writing its
        // accumulators into its own plane of a workspace, and a second launch adds the planes into C
        // (fp32 or int32, as they are). The kernel already stores 32-bit accumulators.
        const std::int64_t splits = std::max(1, choice.splits);
        if (splits > 1 && (g.batch != 1 || kp % (16 * splits) != 0))
            throw LoweringError("split-K needs batch 1 and K' divisible by 16 x " + std::to_string(splits));
        const std::int64_t k_part = kp / splits, plane = g.m * np * 4;
        std::uint32_t workspace = 0;
        if (splits > 1) {
            if (a_bytes + b_bytes + c_bytes + splits * plane > kGemmMaxBufferBytes)
                throw LoweringError("split-K workspace exceeds the GPU kernel library's 2 GiB of global memory (32-bit addresses below 2^31)");
            workspace = memory.allocate(static_cast<std::size_t>(splits * plane));
        }
        // The kernel counts K in 16-bit slots (its slice is BK of them = 2 BK int8 values).
        const std::int64_t slice = 2 * tile.bk;
        const std::int64_t tiles_m = (g.m + tile.bm - 1) / tile.bm, tiles_n = (g.n + tile.bn - 1) / tile.bn;
        const std::int64_t slices = (k_part + slice - 1) / slice;
        const std::int64_t kfirst_slots = (k_part - slices * slice) / 2;
        const std::int64_t blocks = g.batch * splits * tiles_m * tiles_n;
        if (blocks > 0xffffffffLL) throw LoweringError("gemm: grid too large");
        out.kernel = gemm_tensor_kernel(tile, type, b_type);
        out.dims = {static_cast<std::uint32_t>(blocks), static_cast<std::uint32_t>(tile.threads())};
        // Nlast: the last B^T row (columns past N read it; their C is never stored). b_slice is unused.
        const bool split = splits > 1;
        out.args = {u(g.m), u(g.n), u(g.m - 1), u(g.n - 1), a, b, split ? workspace : c, u(kp), u(kp), u(np * 4),
                    u(split ? k_part : g.m * kp), u(split ? k_part : g.n * kp), u(plane), u(tiles_m), u(tiles_n),
                    u(tiles_m * tiles_n), u(kGemmGroupRows * tiles_n), u(slices), u(kfirst_slots), 0};
        if (split) {
            LoweredLaunch sum;
            sum.kernel = splitk_sum_wide_kernel(static_cast<int>(splits), dtype == DType::int8);
            const std::int64_t pairs = plane / 8;
            sum.dims = elementwise_dims(pairs, target.sms, blocks_per_sm(*sum.kernel, kElementwiseBlock, target));
            sum.args = {u(pairs), workspace, u(plane), c};
            out.then.push_back(std::move(sum));
        }
        out.stats.push_back(stat_value(stat::tile_m, tile.bm));
        out.stats.push_back(stat_value(stat::tile_n, tile.bn));
        out.stats.push_back(stat_value(stat::tile_k, static_cast<double>(slice)));  // 8-bit values
        out.stats.push_back(stat_value(stat::warps_m, tile.warps_m));
        out.stats.push_back(stat_value(stat::warps_n, tile.warps_n));
        out.stats.push_back(stat_value(stat::slices_ahead, tile.slices_ahead));
        out.stats.push_back(stat_value(stat::splits, static_cast<double>(splits)));
        GemmTileChoice shown = choice;
        shown.blocks = blocks;
        shown.blocks_per_sm = blocks_per_sm(*out.kernel, static_cast<std::uint32_t>(tile.threads()), target);
        set_waves(shown, target.sms);
        push_launch_shape_stats(out, shown, tile.threads());
    }
    if (!target.real_data) return out;
    // Seeded fp32 inputs uniform in [-1, 1) as for the 16-bit GEMM, drawn A then B (B in K x N
    // order), A's outlier features scaled (the config's activation outliers, quantization.h),
    // quantized per tensor (models/common/quantization.h): fp8 rounds each value to the format
    // (nearest, ties to even), int8 scales by max|x|/127. Both are stored in the TN layout (B
    // transposed).
    const auto draw_unquantized = [g, outliers = target.outliers](std::uint64_t seed, std::vector<float>& a32,
                                                                  std::vector<float>& b32) {
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
        a32.resize(static_cast<std::size_t>(g.batch * g.m * g.k));
        b32.resize(static_cast<std::size_t>(g.batch * g.k * g.n));
        for (float& x : a32) x = uniform(rng);
        for (float& x : b32) x = uniform(rng);
        apply_activation_outliers(a32, g.k, outliers, seed);
    };
    QuantizedOperand qa, qb;
    {
        std::vector<float> a32, b32;
        draw_unquantized(target.seed, a32, b32);
        qa = quantize_operand(a32, dtype, target.sm.fp8_encoding);
        qb = quantize_operand(b32, b_dtype, target.sm.fp8_encoding);
    }
    std::uint8_t* data = memory.data();
    auto byte_of = [encoding = target.sm.fp8_encoding](float q, DType t) {
        return t == DType::int8 ? static_cast<std::uint8_t>(static_cast<std::int8_t>(q))
                                : fp8_encode(q, t, Fp8Overflow::saturate, encoding);
    };
    for (std::int64_t p = 0; p < g.batch; ++p)
        for (std::int64_t i = 0; i < g.m; ++i)
            for (std::int64_t kk = 0; kk < g.k; ++kk)
                data[a + (p * g.m + i) * kp + kk] = byte_of(qa.values[static_cast<std::size_t>((p * g.m + i) * g.k + kk)], dtype);
    for (std::int64_t p = 0; p < g.batch; ++p)
        for (std::int64_t kk = 0; kk < g.k; ++kk)
            for (std::int64_t j = 0; j < g.n; ++j)
                data[b + (p * g.n + j) * kp + kk] = byte_of(qb.values[static_cast<std::size_t>((p * g.k + kk) * g.n + j)], b_dtype);
    // The quantization error: C (int32 accumulators times scale_a scale_b, or fp32 as it is)
    // against Eigen's fp32 GEMM of the unquantized values, drawn again after the launch rather
    // than held through it.
    const double output_scale = qa.scale * qb.scale;
    auto quantization = [g, np, c, dtype, b_dtype, output_scale, seed = target.seed, encoding = target.sm.fp8_encoding,
                         draw_unquantized](const simt::GlobalMemory& mem) {
        std::vector<float> a32, b32;
        draw_unquantized(seed, a32, b32);
        const std::vector<float> reference = fp32_reference_gemm(g, a32, b32);
        std::vector<double> got(reference.size());
        for (std::int64_t p = 0; p < g.batch; ++p)
            for (std::int64_t i = 0; i < g.m; ++i)
                for (std::int64_t j = 0; j < g.n; ++j) {
                    const auto address = static_cast<std::uint32_t>(c + ((p * g.m + i) * np + j) * 4);
                    const double value = dtype == DType::int8 ? static_cast<double>(static_cast<std::int32_t>(mem.load32(address)))
                                                              : static_cast<double>(mem.load_f32(address));
                    got[static_cast<std::size_t>((p * g.m + i) * g.n + j)] = value;
                }
        QuantizationError e = quantization_error(dtype, got, reference, output_scale, encoding);
        if (b_dtype != dtype) e.b_dtype = b_dtype;
        return e;
    };
    if (fp8) {
        // The datapath check: Eigen's fp32 GEMM of the same rounded values.
        // The C layout of gemm_check: M x N' fp32 (element_bytes 4, ldc = N').
        GemmBuffers buf{g.batch, g.m, g.n, g.k, kp, np, np, 4};
        buf.c = c;
        out.check = [datapath = gemm_check(buf, DType::fp32, std::move(qa.values), std::move(qb.values), target.reference_on_worker),
                     quantization = std::move(quantization)](const simt::GlobalMemory& mem) {
            LoweringNumerics n = datapath(mem);
            n.quantization = quantization(mem);
            return n;
        };
        return out;
    }
    // int8: the datapath check is Eigen's integer GEMM of the same quantized values.
    std::vector<std::int8_t> av(qa.values.size()), bv(qb.values.size());
    for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<std::int8_t>(qa.values[i]);
    for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<std::int8_t>(qb.values[i]);
    out.check = [g, np, c, av = std::move(av), bv = std::move(bv), quantization = std::move(quantization)](
                    const simt::GlobalMemory& mem) {
        // Eigen's integer GEMM of the same inputs; equality is exact. int32 cannot overflow while
        // K * 128 * 128 < 2^31; beyond, int64 and the comparison modulo 2^32 (the mma wraps).
        LoweringNumerics n;
        auto compare = [&](auto zero) {
            using T = decltype(zero);
            using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
            for (std::int64_t p = 0; p < g.batch; ++p) {
                const Matrix A = Eigen::Map<const Eigen::Matrix<std::int8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
                                     av.data() + p * g.m * g.k, g.m, g.k).template cast<T>();
                const Matrix B = Eigen::Map<const Eigen::Matrix<std::int8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
                                     bv.data() + p * g.k * g.n, g.k, g.n).template cast<T>();
                const Matrix ref = A * B;
                for (std::int64_t i = 0; i < g.m; ++i)
                    for (std::int64_t j = 0; j < g.n; ++j) {
                        const std::uint32_t got = mem.load32(static_cast<std::uint32_t>(c + ((p * g.m + i) * np + j) * 4));
                        check_int32_output(n, got, static_cast<std::uint32_t>(static_cast<std::int64_t>(ref(i, j))));
                    }
            }
        };
        if (g.k < (std::int64_t{1} << 17)) compare(std::int32_t{0});
        else compare(std::int64_t{0});
        n.quantization = quantization(mem);
        return n;
    };
    return out;
}

}  // namespace

void check_int32_output(LoweringNumerics& n, std::uint32_t got, std::uint32_t want) {
    const double err = std::fabs(static_cast<double>(static_cast<std::int32_t>(got)) -
                                 static_cast<double>(static_cast<std::int32_t>(want)));
    n.max_abs_err = std::max(n.max_abs_err, err);
    if (want != 0) n.max_rel_err = std::max(n.max_rel_err, err / std::fabs(static_cast<double>(static_cast<std::int32_t>(want))));
    if (got != want) n.passed = false;
    ++n.checked;
}

namespace {

GemmShape gemm_shape_of(const Op& op) {
    if (op.kind != OpKind::matmul && op.kind != OpKind::bmm)
        throw LoweringError("lower_gemm: not a matmul or bmm");
    GemmShape g = op.gemm;
    if (op.kind == OpKind::matmul) g.batch = 1;
    if (g.batch < 1 || g.m < 1 || g.n < 1 || g.k < 1) throw LoweringError("empty shape");
    if (op.dtype == DType::int32) throw LoweringError("int32 is an accumulator type, not a GEMM operand type");
    return g;
}

}  // namespace

LoweredKernel lower_gemm_with_tile(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                   const GemmTile& tile, int splits) {
    const GemmShape g = gemm_shape_of(op);
    if (op.dtype == DType::fp32) throw LoweringError("lower_gemm_with_tile: fp32 has no tensor-core tile");
    const bool int8 = op.dtype == DType::int8 || is_fp8(op.dtype);  // the 8-bit kernel
    GemmTileChoice choice;
    choice.tile = tile;
    choice.splits = std::max(1, splits);
    const simt::Kernel* k = gemm_tensor_kernel(tile, int8 ? simt::MmaType::s8 : simt::MmaType::f16);  // its registers (the 8-bit kernels' are the same)
    choice.blocks_per_sm = simt::compute_occupancy(target.sm.limits, {tile.threads(), k->registers, k->shared_bytes}).blocks_per_sm;
    choice.blocks = g.batch * choice.splits * ((g.m + tile.bm - 1) / tile.bm) * ((g.n + tile.bn - 1) / tile.bn);
    set_waves(choice, target.sms);
    return int8 ? lower_byte_gemm(g, op.dtype, op.operand_b_dtype(), memory, target, choice, nullptr) : lower_tensor_gemm(op, g, memory, target, choice);
}

LoweredKernel lower_hopper_gemm_with_splits(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target, int splits) {
    const GemmShape g = gemm_shape_of(op);
    if ((op.dtype != DType::fp16 && op.dtype != DType::bf16) || !hopper_gemm_target(target.sm))
        throw LoweringError("lower_hopper_gemm_with_splits: 16-bit GEMMs on an sm_90 target");
    const HopperTileChoice hopper =
        choose_hopper_tile(g, target.sms, target.sm, target.sm_port_bytes_per_cycle, target.l2_bytes_per_cycle);
    if (hopper.blocks == 0) throw LoweringError("lower_hopper_gemm_with_splits: the shape does not tile");
    return lower_hopper_gemm(op, g, memory, target, hopper, std::max(1, splits));
}

LoweredKernel lower_gemm_epilogue(const Op& op, const GemmEpilogue& epilogue, simt::GlobalMemory& memory,
                                  const LoweringTarget& target, const GemmTile* tile_override, int splits_override) {
    const GemmShape g = gemm_shape_of(op);
    if ((op.dtype != DType::fp16 && op.dtype != DType::bf16) || !target.tensor_cores_for(op.dtype))
        throw LoweringError("fused epilogues run on the 16-bit tensor-core kernel");
    if (!tile_override && hopper_gemm_target(target.sm)) {
        // sm_90: the Hopper GEMM of the unfused op (its tile and split), the epilogue in its kernel
        // or in the split's sum launch; the pre-Hopper kernel only where the fused kernel's
        // registers leave it no block per SM.
        const HopperTileChoice hopper = choose_hopper_tile(g, target.sms, target.sm, target.sm_port_bytes_per_cycle,
                                                           target.l2_bytes_per_cycle);
        if (hopper.blocks > 0) {
            const int splits = choose_hopper_splits(g, hopper, target);
            const simt::MmaType type = op.dtype == DType::bf16 ? simt::MmaType::bf16 : simt::MmaType::f16;
            if (splits > 1 || choose_hopper_epilogue_chunk(hopper.tile, type, hopper.edges, epilogue, target.sm) > 0)
                return lower_hopper_gemm(op, g, memory, target, hopper, splits, epilogue);
        }
    }
    GemmTileChoice choice = tile_override ? GemmTileChoice{} : choose_gemm_tile(g, target.sms, target.sm);
    if (tile_override) {
        choice.tile = *tile_override;
        choice.blocks = g.batch * ((g.m + choice.tile.bm - 1) / choice.tile.bm) * ((g.n + choice.tile.bn - 1) / choice.tile.bn);
        choice.splits = std::max(1, splits_override);
    } else {
        choice.splits = choose_gemm_splits(g, choice, target.sms, target);  // as the unfused GEMM
    }
    choice.blocks *= choice.splits;
    return lower_tensor_gemm(op, g, memory, target, choice, epilogue);
}

LoweredKernel lower_gemm(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    const GemmShape g = gemm_shape_of(op);
    if (op.dtype == DType::fp32) return lower_fp32_gemm(g, memory, target);
    if (op.dtype == DType::int8 || is_fp8(op.dtype)) {
        // int8: the sm_80 mma.m16n8k32.s8 kernel; fp8: the same kernel with sm_89's fp8
        // mma.m16n8k32. Without the dtype's tensor rate the op is a roofline row (lower_op never
        // gets here; the engine refuses fp8 on such a chip). Hopper targets run the 8-bit Hopper
        // kernel (wgmma m64nNk32) on the shapes it tiles exactly.
        if (op.b_dtype && !target.tensor_cores_for(*op.b_dtype))
            throw LoweringError(std::string(to_string(*op.b_dtype)) + " operands need an fp8 tensor-core rate (sm.tensor_macs_per_cycle." +
                                std::string(to_string(*op.b_dtype)) + ")");
        if (!target.tensor_cores_for(op.dtype))
            throw LoweringError(op.dtype == DType::int8
                                    ? std::string("int8 GEMMs need an int8 tensor-core rate (sm.tensor_macs_per_cycle.int8)")
                                    : std::string(to_string(op.dtype)) + " GEMMs need an fp8 tensor-core rate (sm.tensor_macs_per_cycle." +
                                          std::string(to_string(op.dtype)) + ")");
        if (hopper_gemm_target(target.sm)) {
            const HopperTileChoice hopper = choose_hopper_tile(g, target.sms, target.sm, target.sm_port_bytes_per_cycle,
                                                               target.l2_bytes_per_cycle, byte_gemm_mma_type(op.dtype));
            if (hopper.blocks > 0)
                return lower_byte_gemm(g, op.dtype, op.operand_b_dtype(), memory, target, GemmTileChoice{}, &hopper);
        }
        GemmTileChoice choice = choose_gemm_tile(g, target.sms, target.sm, simt::MmaType::s8);  // one kernel shape for all three
        choice.splits = choose_gemm_splits(g, choice, target.sms, target, 1);
        return lower_byte_gemm(g, op.dtype, op.operand_b_dtype(), memory, target, choice, nullptr);
    }
    if (!target.tensor_cores_for(op.dtype)) {
        // No mma unit for the dtype (k80: none at all; v100: no bf16): a 16-bit GEMM runs as an
        // fp32 one (operands and result stored as fp32, as cuBLAS's SGEMM would be called on
        // Kepler, and as frameworks run bf16 matmuls on Volta); the stat says so.
        LoweredKernel out = lower_fp32_gemm(g, memory, target);
        out.stats.push_back(stat_value(stat::fp32_fallback, 1));
        return out;
    }
    if (hopper_gemm_target(target.sm)) {
        const HopperTileChoice hopper = choose_hopper_tile(g, target.sms, target.sm, target.sm_port_bytes_per_cycle,
                                                                target.l2_bytes_per_cycle);
        if (hopper.blocks > 0) return lower_hopper_gemm(op, g, memory, target, hopper, choose_hopper_splits(g, hopper, target));
    }
    GemmTileChoice choice = choose_gemm_tile(g, target.sms, target.sm);
    choice.splits = choose_gemm_splits(g, choice, target.sms, target);
    choice.blocks *= choice.splits;
    set_waves(choice, target.sms);
    return lower_tensor_gemm(op, g, memory, target, choice);
}

int choose_gemm_splits(const GemmShape& shape, const GemmTileChoice& choice, int sms, const LoweringTarget& target,
                       int element_bytes) {
    if (shape.batch != 1 || target.launch_overhead_cycles <= 0 || !(target.hbm_bytes_per_cycle > 0)) return 1;
    if (element_bytes != 1 && element_bytes != 2) throw LoweringError("choose_gemm_splits: 1- or 2-byte operands");
    // K' and a slice in elements: 16-bit BK values, or 2 BK 8-bit ones (the kernel counts 16-bit slots).
    const std::int64_t k = element_bytes == 1 ? gemm_int8_padded_k(shape.k) : gemm_padded(shape.k);
    const std::int64_t bk = choice.tile.bk * (2 / element_bytes), chunk = 16 / element_bytes;
    const double plane = static_cast<double>(shape.m) * static_cast<double>(gemm_padded(shape.n)) * 4.0;
    const std::int64_t tiles = choice.blocks;  // batch 1: one block per tile
    const double operand_bytes = static_cast<double>(tiles) * static_cast<double>(k) *
                                 static_cast<double>(choice.tile.bm + choice.tile.bn) * element_bytes;
    auto time = [&](std::int64_t parts) {
        double loop = static_cast<double>((k / parts + bk - 1) / bk) * kGemmLatencySliceCycles;
        if (target.sm_port_bytes_per_cycle > 0) {
            const double ports = static_cast<double>(std::min<std::int64_t>(tiles * parts, sms));
            loop = std::max(loop, operand_bytes / (ports * target.sm_port_bytes_per_cycle * kGemmPortEfficiency));
        }
        if (parts == 1) return loop;
        return loop + target.launch_overhead_cycles + kSplitkSumLatencyCycles +
               static_cast<double>(parts) * plane / target.hbm_bytes_per_cycle;
    };
    int best = 1;
    double best_time = time(1);
    for (const int parts : {2, 3, 4, 6, 8}) {
        if (k % (chunk * parts) != 0 || k / parts < 4 * bk) continue;
        if (choice.blocks * parts > static_cast<std::int64_t>(sms) * choice.blocks_per_sm) continue;  // one wave
        const double t = time(parts);
        if (t < best_time) {
            best_time = t;
            best = parts;
        }
    }
    return best;
}

simt::MmaType byte_gemm_mma_type(DType dtype) {
    return dtype == DType::fp8_e4m3 ? simt::MmaType::e4m3 : dtype == DType::fp8_e5m2 ? simt::MmaType::e5m2 : simt::MmaType::s8;
}

}  // namespace accelsim::gpu
