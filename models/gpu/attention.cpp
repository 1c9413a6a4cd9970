// Fused multi-head attention, flash-attention style (fused_kernels.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "models/gpu/fused_kernels.h"
#include "models/gpu/gemm.h"
#include "models/gpu/gpu_stats.h"
#include "models/gpu/kernel_text.h"

namespace accelsim::gpu {

namespace {

constexpr int kQueryRowsPerWarp = 16;  // one mma M
constexpr int kBlockRows = kAttentionWarps * kQueryRowsPerWarp;
constexpr int kThreads = 32 * kAttentionWarps;
constexpr int kKeyTiles8 = kAttentionKeyTile / 8;  // n8 tiles of S per key tile
const std::string kMinusInf = "0xff800000";        // -inf as fp32 bits

using kernel_text::at;
using kernel_text::n;
using kernel_text::r;

// Padded sequence length: K and V stream in whole key tiles and Q in whole blocks of rows, so the
// tensors hold ceil(s / 64) * 64 rows per batch entry (the padding rows are zero and never stored).
std::int64_t padded_seq(std::int64_t s) {
    return (s + kAttentionKeyTile - 1) / kAttentionKeyTile * kAttentionKeyTile;
}

std::string attention_source(int D, Storage s) {
    const std::string t = s == Storage::bf16 ? "bf16" : "f16";
    const std::string mma = "mma.m16n8k16." + t;
    const std::string pack = "cvt." + t + "x2.f32";
    const int KD = D / 16, ND = D / 8;
    const int row_bytes = D * 2;
    const int pitch_k =
        D / 2 + 4;  // words per K row in shared memory (= 4 mod 8: conflict-free fragments)
    const int pitch_v = D + 8;  // words per V k-pair row (= 8 mod 32)
    const int k_bytes = kAttentionKeyTile * pitch_k * 4;
    const int v_bytes = kAttentionKeyTile / 2 * pitch_v * 4;
    const int k_chunks =
        kAttentionKeyTile * D / 8 / kThreads;  // 16-byte K chunks per thread per tile
    const int v_units =
        kAttentionKeyTile / 2 * D / 4 / kThreads;  // (k-pair row, 4 columns) units per thread
    const int k_rows_per_round = kThreads / (D / 8), v_pairs_per_round = kThreads / (D / 4);

    int next = 0;
    auto alloc = [&next](int count) {
        const int first = next;
        next += count;
        return first;
    };
    // Integers and addresses.
    const int tid = alloc(1), lane = alloc(1), g = alloc(1), tq = alloc(1), x = alloc(1),
              y = alloc(1);
    const int len = alloc(1), key0 = alloc(1), tiles = alloc(1), j = alloc(1), gK = alloc(1),
              gV = alloc(1);
    const int stK = alloc(1), stV = alloc(1), fK = alloc(1), fV = alloc(1), optr = alloc(1),
              rows_left = alloc(1);
    // Data (never an address: timing-only runs skip it).
    const int qf = alloc(4 * KD), sacc = alloc(4 * kKeyTiles8), oacc = alloc(4 * ND), pf = alloc(4);
    const int kb = alloc(4 * KD), vb = alloc(2 * ND), sk = alloc(4 * k_chunks),
              sv = alloc(4 * v_units), so = alloc(4), zero = alloc(4);
    const int m = alloc(2), l = alloc(2), mx = alloc(2), alpha = alloc(2), nm = alloc(2),
              other = alloc(1);
    const int registers = next;

    std::string o = ".kernel attention_d" + n(D) + "_" + t +
                    "\n.param s, kv_len, q, k, v, o, batch_stride, scale_log2e, q_blocks\n.reg " +
                    n(registers) + "\n.shared " + n(k_bytes + v_bytes) + "\n";
    auto e = [&o](const std::string& line) { o += "    " + line + "\n"; };
    auto label = [&o](const std::string& name) { o += name + ":\n"; };

    // ---- Set-up: block -> (batch entry, block of 64 query rows); lane -> (g, t).
    e("mov " + r(tid) + ", %tid");
    e("and " + r(lane) + ", " + r(tid) + ", 31");
    e("shr " + r(g) + ", " + r(lane) + ", 2");
    e("and " + r(tq) + ", " + r(lane) + ", 3");
    e("mov " + r(x) + ", %ctaid");
    e("div " + r(y) + ", " + r(x) + ", q_blocks");      // batch entry
    e("rem " + r(x) + ", " + r(x) + ", q_blocks");      // block of query rows
    e("mov " + r(len) + ", kv_len");                    // keys at or past it are masked
    e("mul " + r(y) + ", " + r(y) + ", batch_stride");  // the entry's byte offset in Q, K, V, O
    e("add " + r(gK) + ", " + r(y) + ", k");
    e("add " + r(gV) + ", " + r(y) + ", v");
    // The warp's first query row: 64 x + 16 warp; rows_left = s - it, the store guard.
    e("shl " + r(x) + ", " + r(x) + ", 6");
    e("shr " + r(stK) + ", " + r(tid) + ", 5");
    e("shl " + r(stK) + ", " + r(stK) + ", 4");
    e("add " + r(x) + ", " + r(x) + ", " + r(stK));
    e("sub " + r(rows_left) + ", s, " + r(x));
    e("add " + r(x) + ", " + r(x) + ", " + r(g));
    e("mul " + r(x) + ", " + r(x) + ", " + n(row_bytes));
    e("add " + r(x) + ", " + r(x) + ", " + r(y));
    e("shl " + r(stV) + ", " + r(tq) + ", 2");
    e("add " + r(x) + ", " + r(x) + ", " + r(stV));  // byte offset of (row g, column 2t)
    e("add " + r(optr) + ", " + r(x) + ", o");
    e("add " + r(x) + ", " + r(x) + ", q");
    // Q's A fragments for the whole kernel: (g, 2t), (g+8, 2t), (g, 2t+8), (g+8, 2t+8) per k16
    // step.
    for (int ks = 0; ks < KD; ++ks) {
        e("ld.global " + r(qf + 4 * ks) + ", " + at(x, 32LL * ks));
        e("ld.global " + r(qf + 4 * ks + 1) + ", " + at(x, 32LL * ks + 8LL * row_bytes));
        e("ld.global " + r(qf + 4 * ks + 2) + ", " + at(x, 32LL * ks + 16));
        e("ld.global " + r(qf + 4 * ks + 3) + ", " + at(x, 32LL * ks + 8LL * row_bytes + 16));
    }
    // K copy: chunk i of a thread is key row tid / (D/8) + i * rows_per_round, 16-byte chunk tid %
    // (D/8).
    e("shr " + r(x) + ", " + r(tid) + ", " + n(__builtin_ctz(static_cast<unsigned>(D / 8))));
    e("and " + r(y) + ", " + r(tid) + ", " + n(D / 8 - 1));
    e("shl " + r(y) + ", " + r(y) + ", 4");
    e("mad " + r(gK) + ", " + r(x) + ", " + n(row_bytes) + ", " + r(gK));
    e("add " + r(gK) + ", " + r(gK) + ", " + r(y));
    e("mul " + r(stK) + ", " + r(x) + ", " + n(pitch_k * 4));
    e("add " + r(stK) + ", " + r(stK) + ", " + r(y));
    // V copy: unit i is k-pair row tid / (D/4) + i * pairs_per_round, columns 4 (tid % (D/4)) .. +
    // 3: rows 2kp and 2kp + 1 (ld.global.v2 each), four prmt into (V[2kp][c], V[2kp+1][c]) words.
    e("shr " + r(x) + ", " + r(tid) + ", " + n(__builtin_ctz(static_cast<unsigned>(D / 4))));
    e("and " + r(y) + ", " + r(tid) + ", " + n(D / 4 - 1));
    e("shl " + r(y) + ", " + r(y) + ", 3");
    e("mad " + r(gV) + ", " + r(x) + ", " + n(2 * row_bytes) + ", " + r(gV));
    e("add " + r(gV) + ", " + r(gV) + ", " + r(y));
    e("mul " + r(stV) + ", " + r(x) + ", " + n(pitch_v * 4));
    e("shl " + r(y) + ", " + r(y) + ", 1");
    e("add " + r(stV) + ", " + r(stV) + ", " + r(y));
    e("add " + r(stV) + ", " + r(stV) + ", " + n(k_bytes));
    // Fragment bases: K row (key) g, word t; V k-pair row t, column g.
    e("mad " + r(fK) + ", " + r(g) + ", " + n(pitch_k) + ", " + r(tq));
    e("shl " + r(fK) + ", " + r(fK) + ", 2");
    e("mad " + r(fV) + ", " + r(tq) + ", " + n(pitch_v) + ", " + r(g));
    e("shl " + r(fV) + ", " + r(fV) + ", 2");
    e("add " + r(fV) + ", " + r(fV) + ", " + n(k_bytes));
    e("add " + r(tiles) + ", " + r(len) + ", " + n(kAttentionKeyTile - 1));
    e("shr " + r(tiles) + ", " + r(tiles) + ", 6");  // key tiles holding an unmasked key
    auto global_loads = [&](const std::string& guard) {
        for (int i = 0; i < k_chunks; ++i)
            e(guard + "ld.global.v4 " + r(sk + 4 * i) + ", " +
              at(gK, 1LL * i * k_rows_per_round * row_bytes));
        for (int i = 0; i < v_units; ++i) {
            const long long off = 2LL * i * v_pairs_per_round * row_bytes;
            e(guard + "ld.global.v2 " + r(sv + 4 * i) + ", " + at(gV, off));
            e(guard + "ld.global.v2 " + r(sv + 4 * i + 2) + ", " + at(gV, off + row_bytes));
        }
        e("add " + r(gK) + ", " + r(gK) + ", " + n(kAttentionKeyTile * row_bytes));
        e("add " + r(gV) + ", " + r(gV) + ", " + n(kAttentionKeyTile * row_bytes));
    };
    global_loads("");
    for (int i = 0; i < 4; ++i) e("mov " + r(zero + i) + ", 0.0");
    for (int i = 0; i < 4 * ND; ++i) e("mov " + r(oacc + i) + ", 0.0");
    for (int h = 0; h < 2; ++h) {
        e("mov " + r(m + h) + ", " + kMinusInf);
        e("mov " + r(l + h) + ", 0.0");
    }
    e("mov " + r(j) + ", 0");
    e("mov " + r(key0) + ", 0");

    // ---- Key tiles: store the staged tile, load the next, compute.
    label("tile");
    e("bar.sync");  // every warp is done with the previous tile's shared memory
    for (int i = 0; i < k_chunks; ++i)
        e("st.shared.v4 " + at(stK, 1LL * i * k_rows_per_round * pitch_k * 4) + ", " +
          r(sk + 4 * i));
    for (int i = 0; i < v_units; ++i) {
        const int x0 = sv + 4 * i, y0 = x0 + 2;
        e("prmt " + r(so) + ", " + r(x0) + ", " + r(y0) + ", 0x5410");
        e("prmt " + r(so + 1) + ", " + r(x0) + ", " + r(y0) + ", 0x7632");
        e("prmt " + r(so + 2) + ", " + r(x0 + 1) + ", " + r(y0 + 1) + ", 0x5410");
        e("prmt " + r(so + 3) + ", " + r(x0 + 1) + ", " + r(y0 + 1) + ", 0x7632");
        e("st.shared.v4 " + at(stV, 1LL * i * v_pairs_per_round * pitch_v * 4) + ", " + r(so));
    }
    e("bar.sync");
    e("add " + r(j) + ", " + r(j) + ", 1");
    e("setp.lt.s32 p5, " + r(j) + ", " + r(tiles));
    global_loads("@p5 ");  // the next tile's loads fly while this one is computed
    // S = Q K^T: n8 tile jt holds keys jt*8 .. +7; K fragments of tile jt+1 load while tile jt's
    // mmas run.
    auto load_k = [&](int jt, int set) {
        for (int ks = 0; ks < KD; ++ks) {
            const long long off = (1LL * jt * 8 * pitch_k + 8 * ks) * 4;
            e("ld.shared " + r(kb + 2 * KD * set + 2 * ks) + ", " + at(fK, off));
            e("ld.shared " + r(kb + 2 * KD * set + 2 * ks + 1) + ", " + at(fK, off + 16));
        }
    };
    load_k(0, 0);
    for (int jt = 0; jt < kKeyTiles8; ++jt) {
        if (jt + 1 < kKeyTiles8) load_k(jt + 1, (jt + 1) % 2);
        const int d = sacc + 4 * jt;
        for (int ks = 0; ks < KD; ++ks)
            e(mma + " " + r(d) + ", " + r(qf + 4 * ks) + ", " + r(kb + 2 * KD * (jt % 2) + 2 * ks) +
              ", " + r(ks == 0 ? zero : d));
    }
    // Keys at or past the length get -inf (only in the tile that holds the length).
    e("add " + r(x) + ", " + r(key0) + ", " + n(kAttentionKeyTile));
    e("setp.le.s32 p6, " + r(x) + ", " + r(len));
    e("@p6 bra unmasked");
    for (int jt = 0; jt < kKeyTiles8; ++jt)
        for (int c = 0; c < 2; ++c) {
            e("shl " + r(x) + ", " + r(tq) + ", 1");
            e("add " + r(x) + ", " + r(x) + ", " + r(key0));
            e("add " + r(x) + ", " + r(x) + ", " + n(jt * 8 + c));
            e("setp.lt.s32 p6, " + r(x) + ", " + r(len));
            e("selp " + r(sacc + 4 * jt + c) + ", " + r(sacc + 4 * jt + c) + ", " + kMinusInf +
              ", p6");
            e("selp " + r(sacc + 4 * jt + c + 2) + ", " + r(sacc + 4 * jt + c + 2) + ", " +
              kMinusInf + ", p6");
        }
    label("unmasked");
    // Online softmax in the log2 domain, rows g (h = 0: c0, c1) and g+8 (h = 1: c2, c3); the four
    // lanes of a row (t = 0..3) combine by butterflies 1 and 2.
    auto across_row = [&](const std::string& op, int value) {
        for (int mask = 1; mask <= 2; mask *= 2) {
            e("shfl.bfly " + r(other) + ", " + r(value) + ", " + n(mask));
            e(op + " " + r(value) + ", " + r(value) + ", " + r(other));
        }
    };
    for (int h = 0; h < 2; ++h) {
        e("fmax " + r(mx + h) + ", " + r(sacc + 2 * h) + ", " + r(sacc + 2 * h + 1));
        for (int jt = 1; jt < kKeyTiles8; ++jt)
            for (int c = 0; c < 2; ++c)
                e("fmax " + r(mx + h) + ", " + r(mx + h) + ", " + r(sacc + 4 * jt + 2 * h + c));
        across_row("fmax", mx + h);
        e("fmul " + r(mx + h) + ", " + r(mx + h) + ", scale_log2e");
        e("fmax " + r(mx + h) + ", " + r(mx + h) + ", " + r(m + h));  // the new running max
        e("fsub " + r(alpha + h) + ", " + r(m + h) + ", " + r(mx + h));
        e("ex2 " + r(alpha + h) + ", " + r(alpha + h));  // rescales what came before
        e("mov " + r(m + h) + ", " + r(mx + h));
        e("fmul " + r(nm + h) + ", " + r(mx + h) + ", -1.0");
        for (int jt = 0; jt < kKeyTiles8; ++jt)
            for (int c = 0; c < 2; ++c) {
                const std::string v = r(sacc + 4 * jt + 2 * h + c);
                e("ffma " + v + ", " + v + ", scale_log2e, " + r(nm + h));
                e("ex2 " + v + ", " + v);
            }
        e("fadd " + r(mx + h) + ", " + r(sacc + 2 * h) + ", " +
          r(sacc + 2 * h + 1));  // the tile's row sum
        for (int jt = 1; jt < kKeyTiles8; ++jt)
            for (int c = 0; c < 2; ++c)
                e("fadd " + r(mx + h) + ", " + r(mx + h) + ", " + r(sacc + 4 * jt + 2 * h + c));
        across_row("fadd", mx + h);
        e("ffma " + r(l + h) + ", " + r(l + h) + ", " + r(alpha + h) + ", " + r(mx + h));
        for (int nn = 0; nn < ND; ++nn)
            for (int c = 0; c < 2; ++c)
                e("fmul " + r(oacc + 4 * nn + 2 * h + c) + ", " + r(oacc + 4 * nn + 2 * h + c) +
                  ", " + r(alpha + h));
    }
    // O += P V: the accumulators of S tiles 2kk and 2kk+1 are the A fragment of keys 16kk .. +15.
    for (int kk = 0; kk < kAttentionKeyTile / 16; ++kk) {
        const int s0 = sacc + 8 * kk, s1 = s0 + 4;
        e(pack + " " + r(pf) + ", " + r(s0) + ", " + r(s0 + 1));
        e(pack + " " + r(pf + 1) + ", " + r(s0 + 2) + ", " + r(s0 + 3));
        e(pack + " " + r(pf + 2) + ", " + r(s1) + ", " + r(s1 + 1));
        e(pack + " " + r(pf + 3) + ", " + r(s1 + 2) + ", " + r(s1 + 3));
        for (int nn = 0; nn < ND; ++nn) {
            const long long off = (1LL * kk * 8 * pitch_v + nn * 8) * 4;
            e("ld.shared " + r(vb + 2 * nn) + ", " + at(fV, off));
            e("ld.shared " + r(vb + 2 * nn + 1) + ", " + at(fV, off + 4LL * pitch_v * 4));
        }
        for (int nn = 0; nn < ND; ++nn)
            e(mma + " " + r(oacc + 4 * nn) + ", " + r(pf) + ", " + r(vb + 2 * nn) + ", " +
              r(oacc + 4 * nn));
    }
    e("add " + r(key0) + ", " + r(key0) + ", " + n(kAttentionKeyTile));
    e("@p5 bra tile");

    // ---- O / l, packed; rows past s are not stored.
    for (int h = 0; h < 2; ++h) e("rcp " + r(l + h) + ", " + r(l + h));
    for (int h = 0; h < 2; ++h) {
        e("sub " + r(x) + ", " + r(rows_left) + ", " + r(g));
        e("setp.gt.s32 p3, " + r(x) + ", " + n(8 * h));
        for (int nn = 0; nn < ND; ++nn) {
            const int d = oacc + 4 * nn + 2 * h;
            e("fmul " + r(d) + ", " + r(d) + ", " + r(l + h));
            e("fmul " + r(d + 1) + ", " + r(d + 1) + ", " + r(l + h));
            e(pack + " " + r(so) + ", " + r(d) + ", " + r(d + 1));
            e("@p3 st.global " + at(optr, 8LL * h * row_bytes + 16LL * nn) + ", " + r(so));
        }
    }
    return o;
}

}  // namespace

const simt::Kernel* attention_kernel(int head_dim, Storage storage) {
    if (!attention_head_dim_supported(head_dim) || storage == Storage::f32)
        throw LoweringError("fused attention: head dimension 16, 32 or 64, 16-bit values");
    static std::mutex mutex;
    static std::map<std::pair<int, Storage>, std::unique_ptr<simt::Kernel>> kernels;
    std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[{head_dim, storage}];
    if (!k)
        k = std::make_unique<simt::Kernel>(simt::assemble(
            attention_source(head_dim, storage), "<gpu library>/attention_d" + n(head_dim)));
    return k.get();
}

LoweredKernel lower_attention(const Op& scores, const Op& context, simt::GlobalMemory& memory,
                              const LoweringTarget& target, std::int64_t kv_length) {
    const Storage st = storage_of(scores.dtype);
    const std::int64_t b = scores.gemm.batch, s = scores.gemm.m, d = scores.gemm.k;
    if (scores.kind != OpKind::bmm || context.kind != OpKind::bmm || scores.gemm.n != s ||
        context.gemm.batch != b || context.gemm.m != s || context.gemm.k != s ||
        context.gemm.n != d)
        throw LoweringError("fused attention '" + scores.name +
                            "': needs scores bmm (b, s, s, d) and context bmm (b, s, d, s)");
    const simt::Kernel* kernel = attention_kernel(static_cast<int>(d), st);
    if (kv_length == 0) kv_length = s;
    if (kv_length < 1 || kv_length > s)
        throw LoweringError("fused attention: the key length must lie in [1, s]");
    const std::int64_t sp = padded_seq(s), stride = sp * d * 2, tensor = b * stride;
    if (4 * tensor > (std::int64_t{1} << 30))
        throw LoweringError("fused attention '" + scores.name +
                            "': tensors exceed the GPU kernel library's 1 GiB");
    auto alloc = [&](std::int64_t bytes) {
        return memory.allocate(static_cast<std::size_t>(bytes));
    };
    // Q first: the warm L2 reads the previous op's output (the QKV projection) as the first buffer.
    const std::uint32_t q = alloc(tensor), k = alloc(tensor), v = alloc(tensor), o = alloc(tensor);
    LoweredKernel out;
    out.kernel = kernel;
    const std::int64_t q_blocks = (s + kBlockRows - 1) / kBlockRows;
    if (b * q_blocks > 0xffffffffLL) throw LoweringError("fused attention: grid too large");
    out.dims = {static_cast<std::uint32_t>(b * q_blocks), static_cast<std::uint32_t>(kThreads)};
    const float scale_log2e =
        static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(d)));
    std::uint32_t scale_bits;
    std::memcpy(&scale_bits, &scale_log2e, 4);
    auto u = [](std::int64_t value) { return static_cast<std::uint32_t>(value); };
    out.args = {u(s), u(kv_length), q, k, v, o, u(stride), scale_bits, u(q_blocks)};
    out.stats.push_back(stat_value(stat::grid, out.dims.grid));
    out.stats.push_back(stat_value(stat::block, out.dims.block));
    out.stats.push_back(
        stat_value(stat::blocks_per_sm, blocks_per_sm(*kernel, out.dims.block, target)));
    out.stats.push_back(stat_value(stat::tile_m, kBlockRows));
    out.stats.push_back(stat_value(stat::tile_n, kAttentionKeyTile));
    if (!target.real_data) return out;
    // Q, K, V uniform in [-1, 1), rounded to the dtype; padding rows stay zero.
    std::vector<std::vector<float>> values(3);
    const std::uint32_t bases[3] = {q, k, v};
    for (int which = 0; which < 3; ++which) {
        std::mt19937_64 rng = tensor_rng(target.seed, which);
        values[static_cast<std::size_t>(which)].assign(static_cast<std::size_t>(b * s * d), 0.0f);
        for (std::int64_t e = 0; e < b; ++e) {
            std::vector<float> rows(static_cast<std::size_t>(s * d));
            for (float& x : rows) x = round_to(st, unit_random(rng));
            store_elements(memory, bases[which] + static_cast<std::uint32_t>(e * stride), rows, st);
            std::copy(rows.begin(), rows.end(),
                      values[static_cast<std::size_t>(which)].begin() + e * s * d);
        }
    }
    // Reference in double: O = softmax(Q K^T / sqrt(d) over the first `length` keys) V. Bound per
    // row, u = 2^-24: the exponent of each score is off by E = log2(e)/sqrt(d) (d u sum |q||k|) + 4
    // u (X + 1) with X its magnitude (the fp32 dot product, ffma and the running max), so each
    // normalized weight by at most 2 ln2 E + 4 u relative (numerator and sum), plus 2^-24 for ex2;
    // P is rounded to the dtype before P V (u_storage relative). O is a weighted mean of V rows:
    // its error is at most that relative error times max|v|, plus the fp32 sum of s products, the
    // rescaling and 1/l ((s + 8) u max|v|), plus the store's rounding; doubled for second-order
    // terms.
    out.check = [=](const simt::GlobalMemory& mem) {
        LoweringNumerics num;
        const double u = 0x1p-24, c = 1.0 / std::sqrt(static_cast<double>(d));
        const std::vector<float>& Q = values[0];
        const std::vector<float>& K = values[1];
        const std::vector<float>& V = values[2];
        std::vector<double> w(static_cast<std::size_t>(s));
        for (std::int64_t e = 0; e < b; ++e) {
            const std::int64_t keys = kv_length;
            double vmax = 0;
            for (std::int64_t i = 0; i < keys * d; ++i)
                vmax = std::max(
                    vmax,
                    std::fabs(static_cast<double>(V[static_cast<std::size_t>(e * s * d + i)])));
            for (std::int64_t row = 0; row < s; ++row) {
                const float* qr = &Q[static_cast<std::size_t>((e * s + row) * d)];
                double mx = -INFINITY, E = 0;
                for (std::int64_t key = 0; key < keys; ++key) {
                    const float* kr = &K[static_cast<std::size_t>((e * s + key) * d)];
                    double dot = 0, mag = 0;
                    for (std::int64_t i = 0; i < d; ++i) {
                        dot += static_cast<double>(qr[i]) * kr[i];
                        mag += std::fabs(static_cast<double>(qr[i]) * kr[i]);
                    }
                    w[static_cast<std::size_t>(key)] = dot * c;
                    mx = std::max(mx, dot * c);
                    E = std::max(E, 1.4426950408889634 * c * static_cast<double>(d) * u * mag +
                                        4 * u * (std::fabs(dot * c) * 1.45 + 1));
                }
                double sum = 0;
                for (std::int64_t key = 0; key < keys; ++key)
                    sum += w[static_cast<std::size_t>(key)] =
                        std::exp(w[static_cast<std::size_t>(key)] - mx);
                const double rel = 2 * std::log(2.0) * E + 5 * u + unit_roundoff(st);
                for (std::int64_t col = 0; col < d; ++col) {
                    double want = 0;
                    for (std::int64_t key = 0; key < keys; ++key)
                        want += w[static_cast<std::size_t>(key)] *
                                V[static_cast<std::size_t>((e * s + key) * d + col)];
                    want /= sum;
                    const double got = load_element(mem, o + static_cast<std::uint32_t>(e * stride),
                                                    row * d + col, st);
                    const double bound = 2 * (rel + static_cast<double>(keys + 8) * u) * vmax +
                                         unit_roundoff(st) * std::fabs(want) +
                                         subnormal_half_spacing(st);
                    const double err = std::fabs(got - want);
                    ++num.checked;
                    num.max_abs_err = std::max(num.max_abs_err, err);
                    num.max_rel_err =
                        std::max(num.max_rel_err, err / std::max(1e-30, std::fabs(want)));
                    if (!(err <= bound)) num.passed = false;
                }
            }
        }
        return num;
    };
    return out;
}

}  // namespace accelsim::gpu
