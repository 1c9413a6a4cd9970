#include "models/gpu/gemm_hopper.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "models/gpu/gemm.h"
#include "models/gpu/kernel_text.h"
#include "models/simt/occupancy.h"

namespace accelsim::gpu {

namespace {

using kernel_text::n;
using kernel_text::r;

class Lines {
public:
    void operator()(const std::string& line) { text_ += "    " + line + "\n"; }
    void label(const std::string& name) { text_ += name + ":\n"; }
    const std::string& text() const { return text_; }

private:
    std::string text_;
};

}  // namespace

const std::vector<HopperTile>& hopper_gemm_tiles() {
    // Stages: as many as keep the tile's blocks per SM (228 KB of shared memory per SM, 227 KB per
    // block): 128x256 one block of 4 x 48 KB; 128x128 two blocks of 3 x 32 KB (one's epilogue
    // overlaps the other's main loop); 64x128 two of 4 x 24 KB; 64x64 three of 4 x 16 KB.
    // The cluster of 2 fetches a third less, so the rule takes it where the port or the L2 cannot
    // feed 128x256 alone; on ties the plain tile wins.
    static const std::vector<HopperTile> tiles = {{128, 256, 4}, {128, 256, 4, 2}, {128, 128, 3}, {64, 128, 4}, {64, 64, 4}};
    return tiles;
}

bool hopper_gemm_target(const simt::SmParams& sm) { return sm.limits.arch == "sm_90"; }

bool hopper_gemm_fits(const GemmShape& shape, const HopperTile& tile, simt::MmaType type) {
    return shape.m % tile.bm == 0 && shape.n % tile.bn == 0 && shape.k % HopperTile::bk(type) == 0 &&
           (shape.m / tile.bm) % tile.cluster == 0;
}

bool hopper_gemm_fits_with_edges(const GemmShape& shape, const HopperTile& tile, std::int64_t min_m) {
    return shape.m >= std::max<std::int64_t>(1, min_m) && shape.n >= kHopperMinEdgeSide && shape.k >= 1 &&
           ((shape.m + tile.bm - 1) / tile.bm) % tile.cluster == 0;
}

namespace {

// The kernel's name after "hopper_gemm_": tile, A's type, B's where it differs, "_tn" for 16-bit
// operands with B transposed (the 8-bit kernels' B is always so).
std::string hopper_kernel_name(const HopperTile& tile, simt::MmaType type, simt::MmaType b_type, bool edges, bool b_k_major) {
    return tile.name(type) + "_" + simt::mma_type_name(type) + (b_type != type ? std::string("_") + simt::mma_type_name(b_type) : "") +
           (b_k_major && !simt::is_k32(type) ? "_tn" : "") + (edges ? "_edges" : "");
}

// The convolution kernel's name after "hopper_conv_": the GEMM name, "_tapN" for taps of N bytes.
std::string hopper_conv_name(const HopperTile& tile, simt::MmaType type, bool edges, int tap_bytes) {
    return tile.name(type) + "_" + simt::mma_type_name(type) +
           (tap_bytes != HopperTile::kblock_bytes ? "_tap" + std::to_string(tap_bytes) : "") + (edges ? "_edges" : "");
}

// b_type: B's type where it differs from A's (fp8 e4m3 x e5m2, wgmma's .atype.btype). b_k_major:
// B given transposed (N x K), which the 8-bit types always are.
// im2col_a: the convolution variant (gemm_hopper.h, hopper_conv_kernel): A's boxes gathered from
// the NHWC input through an im2col tensor map, B the weights K-major.
// tap_bytes (im2col_a): the bytes of one tap's A row in a k-block: KB (a tap spans whole k-blocks),
// or 64 or 32 for pixels that narrow, KB / tap_bytes taps a k-block, each its own im2col box and
// shared-memory sub-tile of BM rows (TMA packs a box's rows).
// epilogue: a fused epilogue (gemm.h, GemmEpilogue) on the 16-bit GEMM's accumulators before its
// one store (see the epilogue below); not with partials, 8-bit operands or the convolution.
std::string hopper_source(const HopperTile& tile, simt::MmaType type, simt::MmaType b_type, bool partials, bool edges,
                          bool b_k_major, bool im2col_a = false, int tap_bytes = HopperTile::kblock_bytes,
                          const GemmEpilogue& epilogue = {}, int epilogue_chunk = 4) {
    const int BM = tile.bm, BN = tile.bn, S = tile.stages;
    const int KB = HopperTile::kblock_bytes;  // bytes of a k-block row (BK elements)
    const int TB = im2col_a ? tap_bytes : KB;  // bytes of an A sub-tile row
    if (TB != KB && TB != 64 && TB != 32) throw LoweringError("hopper_gemm_source: taps of 32, 64 or whole k-blocks of bytes");
    const int taps_per_kblock = KB / TB;
    const int CW = tile.consumer_warps();
    const int a_bytes = BM * KB, stage = tile.stage_bytes();
    const int bars = S * stage;  // S "full" mbarriers, then S "empty" ones, 8 bytes each
    const int acc_regs = BN / 2;
    const char* dtype = simt::mma_type_name(type);
    const std::string types = std::string(dtype) + "." + simt::mma_type_name(b_type);  // the 8-bit wgmma's
    // 8-bit operands: m64nNk32 on K-major A and B (B transposed in global memory too), and C the
    // accumulators as they are (fp32 or int32), stored as the split-K partials are.
    const bool eight_bit = simt::is_k32(type);
    if (eight_bit && partials) throw LoweringError("hopper_gemm_source: the 8-bit Hopper GEMM has no split-K partials");
    // B K-major in shared memory (N rows of the k-block's 128 bytes): the 8-bit operands, or 16-bit
    // ones given transposed, read with wgmma's imm-trans-b = 0.
    b_k_major = b_k_major || eight_bit || im2col_a;
    const bool wide_c = partials || eight_bit;  // 4-byte C elements
    const bool fused = !epilogue.steps.empty();
    if (fused && (wide_c || im2col_a || b_type != type))
        throw LoweringError("hopper_gemm_source: a fused epilogue needs the 16-bit GEMM without split-K partials");

    // Registers: the accumulators first (payload), then addresses and counters (never payload).
    const int acc = 0;
    int next = acc_regs;
    auto alloc = [&]() { return next++; };
    const int tid = alloc(), warp = alloc(), lane = alloc(), x = alloc(), y = alloc(), batch = alloc();
    const int row0 = alloc(), col0 = alloc(), s = alloc(), ph = alloc(), kb = alloc(), sa = alloc(), sb = alloc();
    const int full = alloc(), empty = alloc(), tmp = alloc(), ta = alloc(), tb = alloc(), pk0 = alloc(), pk1 = alloc();
    const int tile_id = alloc();  // the tile this block works on (persistent: ctaid, ctaid + grid, ...)
    const int g = alloc();        // k-blocks this block has consumed (or produced) over all its tiles
    const int last = alloc();     // the last value of g whose stage a producer waits for again
    const int wg_rows = alloc();  // consumers: this warpgroup's rows in the A box
    const bool pair = tile.cluster == 2;
    const int rank = pair ? alloc() : -1;
    // Edge tiles (gemm_hopper.h): the producer's bounds of its A and B boxes (rows and bytes per
    // row of the operand from the box's origin on), the consumers' columns of C left in the tile's
    // rows (0 for a row past M).
    const int a_rows_in = edges ? alloc() : -1, a_bytes_in = edges ? alloc() : -1;
    const int b_rows_in = edges ? alloc() : -1, b_bytes_in = edges ? alloc() : -1;
    const int cols0 = edges ? alloc() : -1, cols8 = edges ? alloc() : -1;
    // Convolution: the producer's place in the filter (channel bytes, tap column s, tap row r).
    const int coff = im2col_a ? alloc() : -1, tap_s = im2col_a ? alloc() : -1, tap_r = im2col_a ? alloc() : -1;
    const int tap = taps_per_kblock > 1 ? alloc() : -1;  // narrow pixels: the next box's tap, r S + s
    // Fused epilogue, payload: the words of a chunk of 8-column groups (a word per row, group and
    // tensor step) and the chunk's bias words. Its addresses and temporaries take registers the
    // K loop no longer needs (below), so a GELU or a scale costs no register at all.
    const int steps = epilogue.tensor_steps();
    const bool chunked = steps > 0 || epilogue.has_bias();  // otherwise the chunk changes no instruction
    const int chunk = chunked ? std::max(1, std::min({epilogue_chunk, BN / 8})) : std::min(4, BN / 8);
    if (fused && (BN / 8) % chunk != 0) throw LoweringError("hopper_gemm_source: the epilogue chunk must divide the tile's column groups");
    const int words = next;  // words + (s * 2 + h) * chunk + jj
    next += 2 * chunk * steps;
    const int bias_words = epilogue.has_bias() ? next : -1;
    if (epilogue.has_bias()) next += chunk;
    const int registers = next;

    Lines a;
    // The ring's next stage (its parity flips at each wrap) and the next k-block, looping to `loop`.
    auto next_stage = [&](const std::string& loop) {
        a("add " + r(s) + ", " + r(s) + ", 1");
        a("setp.eq.s32 p2, " + r(s) + ", " + n(S));
        a("@p2 mov " + r(s) + ", 0");
        a("@p2 xor " + r(ph) + ", " + r(ph) + ", 1");
        a("add " + r(g) + ", " + r(g) + ", 1");
        a("add " + r(kb) + ", " + r(kb) + ", 1");
        a("setp.lt.s32 p2, " + r(kb) + ", kblocks");
        a("@p2 bra " + loop);
    };
    // Tile `tile_id` -> (batch, row0, col0): the tile scheduler's rasterization. Tile rows go in
    // groups of group_rows (the swizzle, gemm_hopper.h), walked column by column, so the tiles in
    // flight share their A and B panels in the L2; a cluster's blocks are consecutive tiles, tile
    // rows 2i and 2i+1 of one column.
    auto tile_coordinates = [&]() {
        a("div " + r(batch) + ", " + r(tile_id) + ", tiles_per_batch");
        a("rem " + r(x) + ", " + r(tile_id) + ", tiles_per_batch");
        a("div " + r(y) + ", " + r(x) + ", group_blocks");
        a("rem " + r(x) + ", " + r(x) + ", group_blocks");
        a("mul " + r(y) + ", " + r(y) + ", group_rows");
        a("sub " + r(tmp) + ", tiles_m, " + r(y));
        a("min " + r(tmp) + ", " + r(tmp) + ", group_rows");
        a("rem " + r(row0) + ", " + r(x) + ", " + r(tmp));
        a("add " + r(row0) + ", " + r(row0) + ", " + r(y));
        a("mul " + r(row0) + ", " + r(row0) + ", " + n(BM));
        a("div " + r(col0) + ", " + r(x) + ", " + r(tmp));
        a("mul " + r(col0) + ", " + r(col0) + ", " + n(BN));
    };
    // The next tile of this block (the grid is a whole number of clusters, so a cluster's blocks
    // stay on tile rows 2i, 2i+1 and run out of tiles together), looping to `loop`.
    auto next_tile = [&](const std::string& loop) {
        a("mov " + r(tmp) + ", %nctaid");
        a("add " + r(tile_id) + ", " + r(tile_id) + ", " + r(tmp));
        a("setp.lt.s32 p2, " + r(tile_id) + ", tiles");
        a("@p2 bra " + loop);
    };
    std::string src = ".kernel hopper_" +
                      (im2col_a ? "conv_" + hopper_conv_name(tile, type, edges, TB) : "gemm_" + hopper_kernel_name(tile, type, b_type, edges, b_k_major)) +
                      (partials ? "_partials" : "") + (fused ? "_" + epilogue.name() : "") +
                      (fused && chunked && chunk < std::min(4, BN / 8) ? "_g" + n(chunk) : "") + "\n";
    src += ".param A, B, C, lda, ldb, ldc, a_batch, b_batch, c_batch, tiles_m, tiles_per_batch, group_rows, "
           "group_blocks, tiles, kblocks";
    if (edges) src += ", m, a_row_bytes, b_rows, b_row_bytes, c_cols";
    if (im2col_a) src += ", pixel_bytes, taps_s";
    if (taps_per_kblock > 1) src += ", taps";
    // Epilogue operands, as the pre-Hopper fused kernels take them: the bias vector, alpha, and
    // e<i> = tensor i's address minus C's (the same layout as C).
    if (epilogue.has_bias()) src += ", bias";
    if (epilogue.has_scale()) src += ", alpha";
    for (int i = 0; i < steps; ++i) src += ", e" + n(i);
    src += "\n";
    src += ".reg " + n(registers) + "\n.shared " + n(bars + 16 * S) + "\n";
    if (pair) src += ".cluster 2\n";

    a("mov " + r(tid) + ", %tid");
    a("shr " + r(warp) + ", " + r(tid) + ", 5");
    a("and " + r(lane) + ", " + r(tid) + ", 31");
    // Thread 0 initializes the barriers before any warp uses them.
    a("setp.eq.s32 p0, " + r(tid) + ", 0");
    if (pair) {
        // Rank 0's "empty" barriers count both blocks' consumer warps.
        a("mov " + r(rank) + ", %cluster_ctarank");
        a("sub " + r(tmp) + ", 2, " + r(rank));
        a("mul " + r(tmp) + ", " + r(tmp) + ", " + n(CW));
    }
    for (int i = 0; i < S; ++i) {
        a("@p0 mbarrier.init [" + n(bars + 8 * i) + "], 1");
        a("@p0 mbarrier.init [" + n(bars + 8 * (S + i)) + "], " + (pair ? r(tmp) : n(CW)));
    }
    a("bar.sync");
    a("setp.eq.s32 p1, " + r(lane) + ", 0");
    a("mov " + r(s) + ", 0");
    a("mov " + r(ph) + ", 0");
    a("mov " + r(g) + ", 0");
    // This block's tiles: ceil((tiles - ctaid) / grid); its k-blocks, that times kblocks.
    a("mov " + r(tile_id) + ", %ctaid");
    a("mov " + r(tmp) + ", %nctaid");
    a("sub " + r(last) + ", tiles, " + r(tile_id));
    a("add " + r(last) + ", " + r(last) + ", " + r(tmp));
    a("sub " + r(last) + ", " + r(last) + ", 1");
    a("div " + r(last) + ", " + r(last) + ", " + r(tmp));
    a("mul " + r(last) + ", " + r(last) + ", kblocks");
    a("sub " + r(last) + ", " + r(last) + ", " + n(S));
    a("setp.eq.s32 p0, " + r(warp) + ", " + n(CW));
    a("@p0 bra producer_tile");

    // ---- Consumers: warpgroup wg = warp / 4 computes rows 64 wg .. 64 wg + 63 of each tile.
    a("shr " + r(wg_rows) + ", " + r(warp) + ", 2");
    a("mul " + r(wg_rows) + ", " + r(wg_rows) + ", " + n(64 * TB));  // this warpgroup's rows of the A box (sub-tile)
    a("mov " + r(empty) + ", 0");
    // The stage of the k-block before g goes back to the producer (lane 0 of each warp) when a
    // producer waits for it again (g <= last) and there is one (empty != 0).
    auto release = [&]() {
        a("setp.ne.s32 p2, " + r(empty) + ", 0");
        a("selp " + r(tmp) + ", " + r(lane) + ", 1, p2");
        a("setp.le.s32 p2, " + r(g) + ", " + r(last));
        a("selp " + r(tmp) + ", " + r(tmp) + ", 1, p2");
        a("setp.eq.s32 p3, " + r(tmp) + ", 0");
        a("@p3 mbarrier.arrive [" + r(empty) + "]");
        if (pair) {
            a("selp " + r(tmp) + ", " + r(rank) + ", 0, p3");
            a("setp.eq.s32 p3, " + r(tmp) + ", 1");  // lane 0 of rank 1: also rank 0's barrier
            a("@p3 mbarrier.arrive.remote [" + r(empty) + "], 0");
        }
    };
    a.label("consumer_tile");
    tile_coordinates();
    for (int i = 0; i < acc_regs; ++i) a("mov " + r(acc + i) + ", 0");
    a("wgmma.fence");
    a("mov " + r(kb) + ", 0");
    a.label("consume");
    a("mul " + r(sa) + ", " + r(s) + ", " + n(stage));
    a("add " + r(sb) + ", " + r(sa) + ", " + n(a_bytes));
    a("add " + r(sa) + ", " + r(sa) + ", " + r(wg_rows));
    a("shl " + r(full) + ", " + r(s) + ", 3");
    a("add " + r(full) + ", " + r(full) + ", " + n(bars));
    a("mbarrier.wait.parity [" + r(full) + "], " + r(ph));
    // Four 32-byte k slices per k-block: k16 of 16-bit or k32 of 8-bit elements.
    for (int k = 0; k < KB / 32; ++k) {
        // the slice's columns of A: its sub-tile (narrow taps: BM rows of TB bytes each) and bytes in it
        a("add " + r(ta) + ", " + r(sa) + ", " + n(32 * k / TB * BM * TB + 32 * k % TB));
        if (eight_bit) {
            a("add " + r(tb) + ", " + r(sb) + ", " + n(32 * k));  // and of B^T (K-major)
            a("wgmma.mma_async.m64n" + n(BN) + "k32." + types + " " + r(acc) + ", " + r(ta) + ", " + r(tb) +
              ", " + n(TB) + ", " + n(KB));
        } else if (b_k_major) {
            a("add " + r(tb) + ", " + r(sb) + ", " + n(32 * k));  // and of B^T (K-major: imm-trans-b 0)
            a("wgmma.mma_async.m64n" + n(BN) + "k16." + dtype + " " + r(acc) + ", " + r(ta) + ", " + r(tb) + ", " + n(TB) +
              ", " + n(KB) + ", 0");
        } else {
            a("add " + r(tb) + ", " + r(sb) + ", " + n(16 * BN * 2 * k));  // and its 16 rows of B
            a("wgmma.mma_async.m64n" + n(BN) + "k16." + dtype + " " + r(acc) + ", " + r(ta) + ", " + r(tb) + ", " + n(KB) +
              ", " + n(BN * 2));
        }
    }
    a("wgmma.commit_group");
    // The previous k-block's wgmmas are done: its stage goes back to the producer.
    a("wgmma.wait_group 1");
    release();
    a("add " + r(empty) + ", " + r(full) + ", " + n(8 * S));
    next_stage("consume");
    a("wgmma.wait_group 0");
    // The tile's last stage goes back before the epilogue, so the producer fills the ring with the
    // next tile's k-blocks while the accumulators are stored.
    release();
    a("mov " + r(empty) + ", 0");
    // Epilogue: lane (g, t) of warp q of warpgroup wg holds rows 64 wg + 16 q + g (+8) and
    // columns 8 j + 2t, 8 j + 2t + 1 of each 8-column group j: one packed pair per store.
    a("and " + r(y) + ", " + r(warp) + ", 3");
    a("shl " + r(y) + ", " + r(y) + ", 4");
    a("shr " + r(tmp) + ", " + r(lane) + ", 2");
    a("add " + r(y) + ", " + r(y) + ", " + r(tmp));
    a("shr " + r(tmp) + ", " + r(warp) + ", 2");
    a("mad " + r(y) + ", " + r(tmp) + ", 64, " + r(y));
    a("add " + r(y) + ", " + r(y) + ", " + r(row0));               // row
    a("and " + r(tmp) + ", " + r(lane) + ", 3");
    a("shl " + r(tmp) + ", " + r(tmp) + ", 1");
    a("add " + r(tmp) + ", " + r(tmp) + ", " + r(col0));           // column
    a("shl " + r(tmp) + ", " + r(tmp) + ", " + (wide_c ? "2" : "1"));  // bytes: 4-byte partials or C, or 16-bit C
    // Fused epilogue registers free after the K loop: the bias pointer (the stage's barrier
    // address), a tensor word's address (the k-block counter), and the two packing registers as
    // the steps' temporaries (a pair's steps finish before it is packed).
    const int bias_ptr = fused && epilogue.has_bias() ? full : -1, word_address = kb, t0 = pk0, t1 = pk1;
    if (bias_ptr >= 0) a("add " + r(bias_ptr) + ", " + r(tmp) + ", bias");  // &bias[column]
    a("mad " + r(ta) + ", " + r(batch) + ", c_batch, C");
    a("add " + r(ta) + ", " + r(ta) + ", " + r(tmp));
    a("mad " + r(ta) + ", " + r(y) + ", ldc, " + r(ta));            // &C[row][column]
    a("shl " + r(tb) + ", ldc, 3");
    a("add " + r(tb) + ", " + r(ta) + ", " + r(tb));                // 8 rows down
    std::string store0, store1;  // edge tiles: the guards of the two rows' stores
    if (edges) {
        // C's columns left from the tile's first (c_cols and col0 are multiples of 8, so an
        // 8-column group is inside or outside as a whole), or none for a row past M.
        a("sub " + r(cols0) + ", c_cols, " + r(col0));
        a("add " + r(x) + ", " + r(y) + ", 8");
        a("setp.lt.s32 p5, " + r(x) + ", m");
        a("selp " + r(cols8) + ", " + r(cols0) + ", 0, p5");
        a("setp.lt.s32 p5, " + r(y) + ", m");
        a("selp " + r(cols0) + ", " + r(cols0) + ", 0, p5");
        store0 = "@p5 ";
        store1 = "@p6 ";
    }
    auto guard = [&](int j) {  // group j's stores: only inside C
        if (!edges) return;
        a("setp.gt.s32 p5, " + r(cols0) + ", " + n(8 * j));
        a("setp.gt.s32 p6, " + r(cols8) + ", " + n(8 * j));
    };
    const std::string pack = std::string("cvt.") + dtype + "x2.f32 ";
    // Fused epilogue, a chunk of 8-column groups at a time: the chunk's tensor words and bias words
    // are loaded first (guarded as the stores, the bias as the first row's: a second row inside C
    // has its first inside too), so their latencies overlap; then each accumulator goes through
    // the steps in place before the pair is packed and stored. CUTLASS's sm90 epilogues bring such
    // operands into shared memory with TMA; here each lane loads its own words.
    const std::string lo = std::string("cvt.f32.") + dtype + ".lo ", hi = std::string("cvt.f32.") + dtype + ".hi ";
    auto W = [&](int step, int h, int jj) { return r(words + (step * 2 + h) * chunk + jj); };
    auto load_chunk = [&](int first) {
        for (int jj = 0; jj < chunk; ++jj) {
            const int j = first + jj;
            guard(j);
            for (int i = 0; i < steps; ++i) {  // the lane's two rows in tensor i: C's addresses + e<i>
                a("add " + r(word_address) + ", " + r(ta) + ", e" + n(i));
                a(store0 + "ld.global " + W(i, 0, jj) + ", [" + r(word_address) + "+" + n(16 * j) + "]");
                a("add " + r(word_address) + ", " + r(tb) + ", e" + n(i));
                a(store1 + "ld.global " + W(i, 1, jj) + ", [" + r(word_address) + "+" + n(16 * j) + "]");
            }
            if (bias_ptr >= 0) a(store0 + "ld.global " + r(bias_words + jj) + ", [" + r(bias_ptr) + "+" + n(16 * j) + "]");
        }
    };
    auto apply_steps = [&](int d, int h, int jj) {  // accumulators d, d + 1: row h of group jj
        for (int half = 0; half < 2; ++half) {
            const std::string v = r(d + half);
            int i = 0;  // tensor steps so far
            for (const EpilogueStep step : epilogue.steps) {
                // The step's packed 16-bit operand (a bias or tensor word), unpacked into t1.
                const bool tensor = step == EpilogueStep::add || step == EpilogueStep::mul;
                if (tensor || step == EpilogueStep::bias)
                    a((half == 0 ? lo : hi) + r(t1) + ", " + (tensor ? W(i++, h, jj) : r(bias_words + jj)));
                for (const std::string& line : epilogue_step_lines(step, v, r(t1), r(t0))) a(line);
            }
        }
    };
    for (int j = 0; j < BN / 8; ++j) {
        const int d = acc + 4 * j;
        if (fused && j % chunk == 0) load_chunk(j);
        guard(j);
        if (fused) {
            apply_steps(d, 0, j % chunk);
            apply_steps(d + 2, 1, j % chunk);
        }
        if (wide_c) {  // split-K (the accumulator pairs as they are, for the sum launch to add) or 8-bit C
            a(store0 + "st.global.v2 [" + r(ta) + "+" + n(32 * j) + "], " + r(d));
            a(store1 + "st.global.v2 [" + r(tb) + "+" + n(32 * j) + "], " + r(d + 2));
            continue;
        }
        a(pack + r(pk0) + ", " + r(d) + ", " + r(d + 1));
        a(store0 + "st.global [" + r(ta) + "+" + n(16 * j) + "], " + r(pk0));
        a(pack + r(pk1) + ", " + r(d + 2) + ", " + r(d + 3));
        a(store1 + "st.global [" + r(tb) + "+" + n(16 * j) + "], " + r(pk1));
    }
    next_tile("consumer_tile");
    a("exit");

    // ---- Producer warp: lane 0 fills stage s once its consumers have released it, tile after
    // tile without waiting for the consumers' epilogues.
    a.label("producer_tile");
    tile_coordinates();
    if (im2col_a) {  // the tile's first k-block (split-K: the part's, batch x kblocks): tap and channel bytes
        a("mul " + r(tmp) + ", " + r(batch) + ", kblocks");
        a("shl " + r(tmp) + ", " + r(tmp) + ", 7");                  // x 128 bytes a k-block
        a("div " + r(tap_r) + ", " + r(tmp) + ", pixel_bytes");      // the tap, r S + s
        a("rem " + r(coff) + ", " + r(tmp) + ", pixel_bytes");
        if (tap >= 0) a("mov " + r(tap) + ", " + r(tap_r));
        a("rem " + r(tap_s) + ", " + r(tap_r) + ", taps_s");
        a("div " + r(tap_r) + ", " + r(tap_r) + ", taps_s");
    } else {
        a("mad " + r(ta) + ", " + r(batch) + ", a_batch, A");
        a("mad " + r(ta) + ", " + r(row0) + ", lda, " + r(ta));    // &A[row0][0]
    }
    a("mad " + r(tb) + ", " + r(batch) + ", b_batch, B");
    if (b_k_major) {
        a("mad " + r(tb) + ", " + r(col0) + ", ldb, " + r(tb));     // &B^T[col0][0]
        a("mov " + r(y) + ", " + n(KB));                            // the next k-block: 128 bytes on
    } else {
        a("shl " + r(tmp) + ", " + r(col0) + ", 1");
        a("add " + r(tb) + ", " + r(tb) + ", " + r(tmp));           // &B[0][col0]
        a("shl " + r(y) + ", ldb, 6");                              // 64 rows of B
    }
    if (edges) {  // each box's extent inside its operand, from the tile's first k-block
        if (!im2col_a) {  // (the im2col map bounds A itself)
            a("sub " + r(a_rows_in) + ", m, " + r(row0));
            a("mov " + r(a_bytes_in) + ", a_row_bytes");
        }
        if (b_k_major) {
            a("sub " + r(b_rows_in) + ", b_rows, " + r(col0));       // B^T's rows are B's columns
            a("mov " + r(b_bytes_in) + ", b_row_bytes");
        } else {
            a("mov " + r(b_rows_in) + ", b_rows");
            a("shl " + r(tmp) + ", " + r(col0) + ", 1");
            a("sub " + r(b_bytes_in) + ", b_row_bytes, " + r(tmp));
        }
    }
    a("mov " + r(kb) + ", 0");
    a.label("produce");
    a("mul " + r(sa) + ", " + r(s) + ", " + n(stage));
    a("add " + r(sb) + ", " + r(sa) + ", " + n(a_bytes));
    a("shl " + r(full) + ", " + r(s) + ", 3");
    a("add " + r(full) + ", " + r(full) + ", " + n(bars));
    a("add " + r(empty) + ", " + r(full) + ", " + n(8 * S));
    // The ring's first pass finds every stage free: wait for the phase before the current one.
    a("xor " + r(tmp) + ", " + r(ph) + ", 1");
    a("mbarrier.wait.parity [" + r(empty) + "], " + r(tmp));
    a("@p1 mbarrier.arrive.expect_tx [" + r(full) + "], " + n(stage));
    const std::string a_bounds = edges ? ", " + r(a_rows_in) + ", " + r(a_bytes_in) : "";
    const std::string b_bounds = edges ? ", " + r(b_rows_in) + ", " + r(b_bytes_in) : "";
    if (im2col_a && taps_per_kblock == 1) {  // BM output pixels from row0 on, at tap (r, s), KB channel bytes from coff
        a("shl " + r(tmp) + ", " + r(tap_r) + ", 16");
        a("add " + r(tmp) + ", " + r(tmp) + ", " + r(tap_s));
        a("@p1 cp.async.bulk.tensor.im2col." + n(BM) + "x" + n(KB) + " [" + r(sa) + "], A, " + r(full) + ", " + r(row0) + ", " +
          r(coff) + ", " + r(tmp));
    } else if (im2col_a) {
        // Narrow pixels: each tap of the k-block is a box of BM rows of TB bytes (the whole pixel)
        // into its own sub-tile. Taps past the filter's last (the final k-block's) get a row offset
        // no image reaches: zeros, no reads (B's bounded box has zeros there too).
        for (int t = 0; t < taps_per_kblock; ++t) {
            a("shl " + r(tmp) + ", " + r(tap_r) + ", 16");
            a("add " + r(tmp) + ", " + r(tmp) + ", " + r(tap_s));
            a("setp.ge.s32 p3, " + r(tap) + ", taps");
            a("@p3 mov " + r(tmp) + ", 0x7fff0000");
            a("add " + r(x) + ", " + r(sa) + ", " + n(t * BM * TB));
            a("@p1 cp.async.bulk.tensor.im2col." + n(BM) + "x" + n(TB) + " [" + r(x) + "], A, " + r(full) + ", " + r(row0) + ", 0, " +
              r(tmp));
            a("add " + r(tap) + ", " + r(tap) + ", 1");
            a("add " + r(tap_s) + ", " + r(tap_s) + ", 1");
            a("setp.eq.s32 p3, " + r(tap_s) + ", taps_s");
            a("@p3 mov " + r(tap_s) + ", 0");
            a("@p3 add " + r(tap_r) + ", " + r(tap_r) + ", 1");
        }
    } else {
        a("@p1 cp.async.bulk.tensor.2d." + n(BM) + "x" + n(KB) + " [" + r(sa) + "], " + r(ta) + ", lda, " + r(full) + a_bounds);
    }
    // B's box: 64 rows of BN 16-bit elements, or (B^T) BN rows of 128 bytes.
    const std::string b_box = b_k_major ? n(BN) + "x" + n(KB) : n(64) + "x" + n(BN * 2);
    if (pair) {
        a("add " + r(tmp) + ", " + r(lane) + ", " + r(rank));
        a("setp.eq.s32 p4, " + r(tmp) + ", 0");  // lane 0 of rank 0
        a("@p4 cp.async.bulk.tensor.2d.multicast." + b_box + " [" + r(sb) + "], " + r(tb) + ", ldb, " + r(full) + b_bounds);
    } else {
        a("@p1 cp.async.bulk.tensor.2d." + b_box + " [" + r(sb) + "], " + r(tb) + ", ldb, " + r(full) + b_bounds);
    }
    if (im2col_a && taps_per_kblock == 1) {  // the next k-block: the next KB channel bytes, else the next tap
        a("add " + r(coff) + ", " + r(coff) + ", " + n(KB));
        a("setp.eq.s32 p3, " + r(coff) + ", pixel_bytes");
        a("@p3 mov " + r(coff) + ", 0");
        a("@p3 add " + r(tap_s) + ", " + r(tap_s) + ", 1");
        a("setp.eq.s32 p3, " + r(tap_s) + ", taps_s");
        a("@p3 mov " + r(tap_s) + ", 0");
        a("@p3 add " + r(tap_r) + ", " + r(tap_r) + ", 1");
    } else if (!im2col_a) {
        a("add " + r(ta) + ", " + r(ta) + ", " + n(KB));
    }
    a("add " + r(tb) + ", " + r(tb) + ", " + r(y));
    if (edges) {  // the next k-block's boxes start KB bytes (B: 64 rows) further along K
        if (!im2col_a) a("sub " + r(a_bytes_in) + ", " + r(a_bytes_in) + ", " + n(KB));
        if (b_k_major) a("sub " + r(b_bytes_in) + ", " + r(b_bytes_in) + ", " + n(KB));
        else a("sub " + r(b_rows_in) + ", " + r(b_rows_in) + ", 64");
    }
    next_stage("produce");
    next_tile("producer_tile");
    a("exit");
    return src + a.text();
}

const simt::Kernel* hopper_kernel(const HopperTile& tile, simt::MmaType type, simt::MmaType b_type, bool partials, bool edges,
                                  bool b_k_major) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<simt::Kernel>> kernels;
    b_k_major = b_k_major || simt::is_k32(type);
    const std::string key = "hopper_gemm_" + hopper_kernel_name(tile, type, b_type, edges, b_k_major) + (partials ? "_partials" : "");
    std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[key];
    if (!k)
        k = std::make_unique<simt::Kernel>(
            simt::assemble(hopper_source(tile, type, b_type, partials, edges, b_k_major), "<gpu library>/" + key));
    return k.get();
}

const simt::Kernel* hopper_epilogue_kernel_cached(const HopperTile& tile, simt::MmaType type, bool edges,
                                                  const GemmEpilogue& epilogue, int chunk) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<simt::Kernel>> kernels;
    const std::string key = "hopper_gemm_" + hopper_kernel_name(tile, type, type, edges, false) + "_" + epilogue.name() +
                            "_g" + n(chunk);
    std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[key];
    if (!k)
        k = std::make_unique<simt::Kernel>(simt::assemble(
            hopper_source(tile, type, type, false, edges, false, false, HopperTile::kblock_bytes, epilogue, chunk),
            "<gpu library>/" + key));
    return k.get();
}

const simt::Kernel* hopper_conv_kernel_cached(const HopperTile& tile, simt::MmaType type, bool edges, bool partials,
                                              int tap_bytes) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<simt::Kernel>> kernels;
    const std::string key = "hopper_conv_" + hopper_conv_name(tile, type, edges, tap_bytes) + (partials ? "_partials" : "");
    std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[key];
    if (!k)
        k = std::make_unique<simt::Kernel>(
            simt::assemble(hopper_source(tile, type, type, partials, edges, true, true, tap_bytes), "<gpu library>/" + key));
    return k.get();
}

void require_mixed_fp8(simt::MmaType a_type, simt::MmaType b_type) {
    auto fp8 = [](simt::MmaType t) { return t == simt::MmaType::e4m3 || t == simt::MmaType::e5m2; };
    if (a_type == b_type || !fp8(a_type) || !fp8(b_type))
        throw LoweringError("the Hopper GEMM mixes only the fp8 types (e4m3 x e5m2)");
}

}  // namespace

std::string hopper_gemm_source(const HopperTile& tile, simt::MmaType type, bool partials, bool edges, bool b_k_major) {
    return hopper_source(tile, type, type, partials, edges, b_k_major);
}
std::string hopper_gemm_source(const HopperTile& tile, simt::MmaType a_type, simt::MmaType b_type, bool edges) {
    require_mixed_fp8(a_type, b_type);
    return hopper_source(tile, a_type, b_type, false, edges, true);
}
const simt::Kernel* hopper_gemm_kernel(const HopperTile& tile, simt::MmaType type, bool partials, bool edges, bool b_k_major) {
    return hopper_kernel(tile, type, type, partials, edges, b_k_major);
}
const simt::Kernel* hopper_gemm_kernel(const HopperTile& tile, simt::MmaType a_type, simt::MmaType b_type, bool edges) {
    require_mixed_fp8(a_type, b_type);
    return hopper_kernel(tile, a_type, b_type, false, edges, true);
}
std::string hopper_gemm_epilogue_source(const HopperTile& tile, simt::MmaType type, bool edges, const GemmEpilogue& epilogue,
                                        int chunk) {
    if (epilogue.steps.empty()) throw LoweringError("hopper_gemm_epilogue_source: no epilogue steps");
    return hopper_source(tile, type, type, false, edges, false, false, HopperTile::kblock_bytes, epilogue, chunk);
}
const simt::Kernel* hopper_gemm_epilogue_kernel(const HopperTile& tile, simt::MmaType type, bool edges,
                                                const GemmEpilogue& epilogue, int chunk) {
    if (epilogue.steps.empty()) throw LoweringError("hopper_gemm_epilogue_kernel: no epilogue steps");
    if (chunk != 1 && chunk != 2 && chunk != 4) throw LoweringError("hopper_gemm_epilogue_kernel: chunks of 1, 2 or 4 groups");
    // Without tensor steps or a bias no chunk changes the code: one kernel for all.
    const bool chunked = epilogue.tensor_steps() > 0 || epilogue.has_bias();
    return hopper_epilogue_kernel_cached(tile, type, edges, epilogue, std::min(chunked ? chunk : 4, tile.bn / 8));
}

int choose_hopper_epilogue_chunk(const HopperTile& tile, simt::MmaType type, bool edges, const GemmEpilogue& epilogue,
                                 const simt::SmParams& sm) {
    auto per_sm = [&](const simt::Kernel* k) {
        return simt::compute_occupancy(sm.limits, {tile.threads(), k->registers, k->shared_bytes}).blocks_per_sm;
    };
    int best = 4, best_per_sm = per_sm(hopper_gemm_epilogue_kernel(tile, type, edges, epilogue, 4));
    for (const int chunk : {2, 1}) {
        const int blocks = per_sm(hopper_gemm_epilogue_kernel(tile, type, edges, epilogue, chunk));
        if (blocks > best_per_sm) best = chunk, best_per_sm = blocks;
    }
    return best_per_sm > 0 ? best : 0;
}
std::string hopper_conv_source(const HopperTile& tile, simt::MmaType type, bool edges, bool partials, int tap_bytes) {
    return hopper_source(tile, type, type, partials, edges, true, true, tap_bytes);
}
const simt::Kernel* hopper_conv_kernel(const HopperTile& tile, simt::MmaType type, bool edges, bool partials, int tap_bytes) {
    return hopper_conv_kernel_cached(tile, type, edges, partials, tap_bytes);
}

namespace {

// One m16n8k16 (2048 MACs; 8-bit: m16n8k32, 4096) per tensor initiation interval of the type per
// sub-partition.
double hopper_macs_per_cycle(const simt::SmParams& sm, simt::MmaType type) {
    return static_cast<double>(simt::mma_macs(type)) * sm.sub_partitions / std::max(1, sm.tensor_of(type).initiation_interval);
}

// How much slower than the tensor cores' full rate `blocks` blocks of `tile` run (the tile rule's
// slowdown, gemm_hopper.h): max(1, demand / port, busy SMs x demand / L2).
double hopper_slowdown(const HopperTile& tile, std::int64_t blocks, int sms, const simt::SmParams& sm,
                       double port_bytes_per_cycle, double l2_bytes_per_cycle, simt::MmaType type) {
    const double demand = simt::mma_element_bytes(type) * (tile.bm + static_cast<double>(tile.bn) / tile.cluster) /
                          (static_cast<double>(tile.bm) * tile.bn) * hopper_macs_per_cycle(sm, type);
    double slowdown = port_bytes_per_cycle > 0 ? std::max(1.0, demand / port_bytes_per_cycle) : 1.0;
    const double busy_sms = static_cast<double>(std::min<std::int64_t>(blocks, sms));
    if (l2_bytes_per_cycle > 0) slowdown = std::max(slowdown, busy_sms * demand / l2_bytes_per_cycle);
    return slowdown;
}

}  // namespace

HopperTileChoice choose_hopper_tile(const GemmShape& shape, int sms, const simt::SmParams& sm, double port_bytes_per_cycle,
                                    double l2_bytes_per_cycle, simt::MmaType type, std::int64_t min_m) {
    HopperTileChoice best;
    double best_estimate = 0;
    bool exact = false;  // some tile fits exactly: only those are candidates
    for (const HopperTile& tile : hopper_gemm_tiles()) exact |= hopper_gemm_fits(shape, tile, type) && tile.cluster <= sms;
    for (const HopperTile& tile : hopper_gemm_tiles()) {
        if (tile.cluster > sms) continue;
        if (exact ? !hopper_gemm_fits(shape, tile, type) : !hopper_gemm_fits_with_edges(shape, tile, min_m)) continue;
        const simt::Kernel* k = hopper_gemm_kernel(tile, type, false, !exact);
        const int per_sm = simt::compute_occupancy(sm.limits, {tile.threads(), k->registers, k->shared_bytes}).blocks_per_sm;
        if (per_sm == 0) continue;
        const std::int64_t blocks = shape.batch * ((shape.m + tile.bm - 1) / tile.bm) * ((shape.n + tile.bn - 1) / tile.bn);
        const double slowdown = hopper_slowdown(tile, blocks, sms, sm, port_bytes_per_cycle, l2_bytes_per_cycle, type);
        const std::int64_t per_sm_blocks = (blocks + std::max(1, sms) - 1) / std::max(1, sms);
        const double estimate = static_cast<double>(per_sm_blocks) * tile.bm * tile.bn * slowdown;
        if (best.blocks == 0 || estimate < best_estimate) {
            best = {tile, !exact, blocks, per_sm};
            // Persistent: one block per resident slot (a whole number of clusters), none idle.
            best.slots = static_cast<std::int64_t>(sms / tile.cluster) * tile.cluster * per_sm;
            best.grid = std::min(blocks, best.slots);
            best_estimate = estimate;
        }
    }
    return best;
}

double hopper_split_estimate(const GemmShape& shape, const HopperTileChoice& choice, int parts, const LoweringTarget& target,
                             simt::MmaType type) {
    const HopperTile& tile = choice.tile;
    const std::int64_t blocks = choice.blocks * parts;
    const int sms = std::max(1, target.sms);
    const double kblock_cycles = static_cast<double>(tile.bm) * tile.bn * HopperTile::bk(type) /
                                 hopper_macs_per_cycle(target.sm, type) *
                                 hopper_slowdown(tile, blocks, sms, target.sm, target.sm_port_bytes_per_cycle,
                                                 target.l2_bytes_per_cycle, type);
    const double per_sm_blocks = static_cast<double>((blocks + sms - 1) / sms);
    const double loop = per_sm_blocks * static_cast<double>(shape.k / HopperTile::bk(type) / parts) * kblock_cycles;
    if (parts == 1) return loop;
    const double plane = static_cast<double>(shape.m) * static_cast<double>(shape.n) * 4.0;
    return loop + target.launch_overhead_cycles + kSplitkSumLatencyCycles + parts * plane / target.hbm_bytes_per_cycle;
}

int choose_hopper_splits(const GemmShape& shape, const HopperTileChoice& choice, const LoweringTarget& target,
                         simt::MmaType type) {
    if (shape.batch != 1 || choice.blocks == 0 || target.launch_overhead_cycles <= 0 || !(target.hbm_bytes_per_cycle > 0))
        return 1;
    if (shape.k % HopperTile::bk(type) != 0) return 1;  // parts of whole k-blocks only
    const std::int64_t kblocks = shape.k / HopperTile::bk(type);
    int best = 1;
    double best_time = hopper_split_estimate(shape, choice, 1, target, type);
    for (const int parts : {2, 3, 4, 6, 8}) {
        if (kblocks % parts != 0 || kblocks / parts < kHopperMinKblocksPerPart) continue;
        if (choice.blocks * parts > choice.slots) continue;  // every part-tile resident at once: one pass
        const double t = hopper_split_estimate(shape, choice, parts, target, type);
        if (t < best_time) {
            best_time = t;
            best = parts;
        }
    }
    return best;
}

int choose_hopper_group_rows(const GemmShape& shape, const HopperTile& tile, std::int64_t blocks_in_flight,
                             std::int64_t l2_bytes, simt::MmaType type) {
    const std::int64_t tiles_m = (shape.m + tile.bm - 1) / tile.bm, tiles_n = (shape.n + tile.bn - 1) / tile.bn;
    // The panels (full K, elements of the type) of a wave of `blocks_in_flight` consecutive tiles from
    // the start of a group: G rows and ceil(wave / G) columns, or, when the wave covers whole
    // groups (G x tiles_n tiles each), every column and the rows of the groups it reaches.
    const std::int64_t wave = std::min(blocks_in_flight, tiles_m * tiles_n);
    auto wave_bytes = [&](std::int64_t rows) {
        const std::int64_t groups = (wave + rows * tiles_n - 1) / (rows * tiles_n);
        const std::int64_t rows_used = std::min(tiles_m, rows * groups);
        const std::int64_t columns = std::min(tiles_n, (wave + rows - 1) / rows);
        return simt::mma_element_bytes(type) * shape.k * (rows_used * tile.bm + columns * tile.bn);
    };
    int fitting = 0, smallest = tile.cluster;
    for (int rows = tile.cluster; rows <= 8 * tile.cluster && rows <= tiles_m; rows *= 2) {
        if (2 * wave_bytes(rows) <= l2_bytes) fitting = rows;
        if (wave_bytes(rows) < wave_bytes(smallest)) smallest = rows;
    }
    return fitting > 0 ? fitting : smallest;
}

}  // namespace accelsim::gpu
