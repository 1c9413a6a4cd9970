#pragma once
// The Hopper GEMM kernel (compute capability 9.0; docs/gpu.md, "Hopper GEMMs"): warp-specialized
// as CUTLASS 3 describes its sm90 "TMA warp-specialized" kernels. One producer warp issues TMA
// box copies (cp.async.bulk.tensor) of A and B k-blocks (128-byte rows: BK = 64 16-bit or 128 8-bit
// elements, as CUTLASS 3 picks for 8-bit operands) into a ring of `stages`
// shared-memory stages, each guarded by a "full" mbarrier (1 arrival + the stage's bytes) and an
// "empty" one (one arrival per consumer warp). BM / 64 consumer warpgroups each compute a 64 x BN
// slice of the tile with wgmma.mma_async.m64nBNk16 (8-bit: m64nBNk32; 4 per k-block, one commit
// group), keep one group in flight (wait_group 1) and release the previous k-block's stage.
// Accumulators stay in registers; the epilogue packs them to fp16/bf16 and stores them, or, for
// the 8-bit types, stores them as they are (fp8: fp32 C; int8: int32 C).
//
// 8-bit operands (s8, e4m3, e5m2): PTX requires both wgmma operands K-major in shared memory for
// them (PTX ISA 9.7.15.5.1: the transpose flags are for .f16 / .bf16 only), so B comes
// transposed, N x K (cuBLASLt's "TN" layout, as the pre-Hopper 8-bit kernel takes it), and its
// box is BN rows of 128 bytes. 16-bit operands may come so too (`b_k_major`: the "_tn" kernels,
// read with wgmma's imm-trans-b = 0), as a convolution's weights are stored (K x C').
//
// Persistent (CUTLASS 3's sm90 persistent tile scheduler): the grid is one block per resident slot
// and each block loops over tiles ctaid, ctaid + grid, ... in the scheduler's swizzled order
// (choose_hopper_group_rows). The ring of stages runs on across tiles, so the producer loads the
// next tile's k-blocks while the consumers store the previous tile's accumulators.
//
// Clusters of 2 (HopperTile::cluster): the pair's B boxes are the same; rank 0 multicasts them
// (cp.async.bulk.tensor.2d.multicast) and waits for both blocks' consumers before reusing a stage,
// rank 1's consumers arrive on rank 0's "empty" barriers too (mbarrier.arrive.remote). Stages the
// producers never wait for again are not released, so no block reaches a peer that has left.
//
// Row-major A (M x K) and B (K x N; 8-bit: N x K), C (M x N). Params, in order: A, B, C, lda,
// ldb, ldc (row pitches in bytes), a_batch, b_batch, c_batch (matrix strides in bytes), tiles_m,
// tiles_per_batch, group_rows (choose_hopper_group_rows), group_blocks (group_rows * tiles_n),
// tiles (all batches), kblocks (ceil(K / BK)).
//
// Edge tiles (`edges`): a shape that BM, BN or BK does not divide runs the kernel's edge variant,
// whose TMA boxes are bounded (cp.async.bulk.tensor's bounded form: the part of a box outside its
// operand lands in shared memory as zeros, as TMA fills out-of-bounds elements, and costs no
// memory traffic) and whose epilogue stores only inside C. Its extra params: m (rows of A and C),
// a_row_bytes (bytes of K in an A row), b_rows (rows of B: K, or for 8-bit B^T, N), b_row_bytes
// (bytes of a B row) and c_cols (columns of C, a multiple of 8). Shapes that tile exactly keep the
// exact kernel, which has none of these instructions.
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/op.h"
#include "models/gpu/lowering.h"
#include "models/simt/isa.h"
#include "models/simt/sm_core.h"

namespace accelsim::gpu {

struct GemmEpilogue;  // gemm.h

struct HopperTile {
    int bm = 128, bn = 256;  // bm / 64 consumer warpgroups
    int stages = 4;          // shared-memory ring depth
    // Blocks per thread-block cluster: 2 pairs the blocks of tile rows 2i and 2i+1 (same columns),
    // and rank 0's producer multicasts their common B box to both (half the B traffic).
    int cluster = 1;
    // A k-block's operand rows are 128 bytes whatever the type, so the stages, shared memory and
    // occupancy of a tile are the same for 16-bit and 8-bit operands.
    static constexpr int kblock_bytes = 128;
    static constexpr int bk(simt::MmaType type) { return kblock_bytes / simt::mma_element_bytes(type); }
    int consumer_warps() const { return bm / 16; }
    int threads() const { return 32 * (consumer_warps() + 1); }  // + the producer warp
    int stage_bytes() const { return (bm + bn) * kblock_bytes; }
    std::string name(simt::MmaType type = simt::MmaType::f16) const {
        return std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk(type)) + "_s" + std::to_string(stages) +
               (cluster > 1 ? "_c" + std::to_string(cluster) : "");
    }
};

// Tile shapes, largest first.
const std::vector<HopperTile>& hopper_gemm_tiles();

// True when the config's SMs run the Hopper path (compute capability sm_90; wgmma is sm_90a-only
// in PTX, so sm_100 does not).
bool hopper_gemm_target(const simt::SmParams& sm);
// True when the shape tiles exactly with `tile` for operands of `type` (see above; a cluster of 2
// also needs an even number of tile rows).
bool hopper_gemm_fits(const GemmShape& shape, const HopperTile& tile, simt::MmaType type = simt::MmaType::f16);
// True when the edge variant runs the shape with `tile`: M of at least min_m and N of at least
// kHopperMinEdgeSide (narrower GEMMs, a decode step's M of 1 to 8, keep the pre-Hopper kernels,
// whose small tiles and split-K suit them; convolutions, whose pre-Hopper kernel has no split-K,
// take any M: min_m 1) and, for a cluster of 2, an even number of tile rows.
inline constexpr std::int64_t kHopperMinEdgeSide = 64;
bool hopper_gemm_fits_with_edges(const GemmShape& shape, const HopperTile& tile, std::int64_t min_m = kHopperMinEdgeSide);

struct HopperTileChoice {
    HopperTile tile;
    bool edges = false;       // the shape does not tile exactly: the edge variant
    std::int64_t blocks = 0;  // output tiles (a non-persistent kernel's blocks)
    int blocks_per_sm = 0;
    std::int64_t slots = 0;   // resident block slots on the chip: whole clusters x blocks per SM
    std::int64_t grid = 0;    // persistent blocks: min(tiles, slots)
};
// The tile rule: among tiles that fit the shape exactly and an SM (or, when none does, tiles that
// fit with edges: hopper_gemm_fits_with_edges), the smallest estimate of the busiest SM's time,
// ceil(blocks / SMs) x BM x BN x slowdown, blocks counting edge tiles whole. demand is the operand bytes per cycle a
// block fetches at the tensor cores' full rate, E (BM + BN / cluster) / (BM x BN) bytes per MAC x
// the SM's MACs per cycle of `type` (E its element bytes: 8-bit operands run twice the MACs on
// half the bytes, so the same demand); slowdown = max(1, demand / port, busy SMs x demand / L2) with port the
// SM's port to the L2 and L2 the L2 slices' bytes per cycle together (0: no limit), busy SMs
// min(blocks, SMs). Ties go to the earlier tile of the table. blocks == 0: no tile fits.
HopperTileChoice choose_hopper_tile(const GemmShape& shape, int sms, const simt::SmParams& sm, double port_bytes_per_cycle,
                                    double l2_bytes_per_cycle = 0, simt::MmaType type = simt::MmaType::f16,
                                    std::int64_t min_m = kHopperMinEdgeSide);

// Split-K on the Hopper path (docs/gpu.md, "Hopper GEMMs"): a batch-1 GEMM whose tiles leave SMs
// idle is cut into S in {2, 3, 4, 6, 8} parts of K, each a batch entry of the partials kernel (the
// 8-bit kernels store their 32-bit accumulators anyway: the plain kernel into the planes), and a
// second launch adds the S planes: splitk_sum_kernel (gemm.h) packs 16-bit C,
// splitk_sum_wide_kernel writes the int32 or fp32 C of the 8-bit types. Candidates: K / BK
// divisible by S with at least kHopperMinKblocksPerPart k-blocks per part, and tiles x S blocks
// all resident at once (SMs x blocks per SM). The estimate, smallest wins (S = 1 on ties):
//   T(S) = ceil(tiles S / SMs) x K / (BK S) x (BM BN BK / MACs per cycle) x slowdown(tiles S)
//          + (S > 1: launch overhead + kSplitkSumLatencyCycles + S M N 4 / HBM bytes per cycle)
// with slowdown the tile rule's (choose_hopper_tile) for tiles S busy blocks: splitting shortens
// each part's K loop but loads the L2 with more SMs at once. 1 when the target gives no launch
// overhead or HBM bandwidth.
inline constexpr std::int64_t kHopperMinKblocksPerPart = 4;
double hopper_split_estimate(const GemmShape& shape, const HopperTileChoice& choice, int parts, const LoweringTarget& target,
                             simt::MmaType type = simt::MmaType::f16);
int choose_hopper_splits(const GemmShape& shape, const HopperTileChoice& choice, const LoweringTarget& target,
                         simt::MmaType type = simt::MmaType::f16);

// The tile scheduler's swizzle (CUTLASS's PersistentTileSchedulerSm90 walks groups of 1, 2, 4 or 8
// cluster rows column by column): tile rows per group (edge tiles counted), a power of two times the cluster height up
// to 8 of them and at most the tile rows (panels in elements of `type`). The `blocks_in_flight` tiles of a wave touch
// G row panels of A and ceil(in flight / G) column panels of B over the full K. When a wave's
// panels fit in half the L2 (LRU over hashed sets, and the C tiles written share it), the largest
// such G, so the next waves find their A panels and B is refetched tiles_m / G times; when none fits,
// the G that touches the fewest bytes per wave (each wave then fetches its panels once).
int choose_hopper_group_rows(const GemmShape& shape, const HopperTile& tile, std::int64_t blocks_in_flight,
                             std::int64_t l2_bytes, simt::MmaType type = simt::MmaType::f16);

// The Hopper GEMM's launch with B transposed ("TN"), on buffers already laid out as it reads them:
// A (M x K' elements of `type`) at a, B^T (N x K') at b, C (M x N') at c, one such matrix per batch
// entry; C's elements are 4 bytes for the 8-bit types (int32 or fp32 accumulators) and 16-bit for
// f16 / bf16 (packed as the other 16-bit kernels); `hopper` from choose_hopper_tile (edge variant
// included); splits > 1: split-K (choose_hopper_splits), the parts' planes in a workspace from
// `memory` and the sum as a second launch. Sets the kernel, grid, args and the tile and
// launch-shape stats. Defined beside the other GEMM lowerings (gemm.cpp); the 8-bit GEMMs and the
// convolutions (conv.cpp) use it. im2col: the convolution kernel (hopper_conv_kernel), a the
// address of its im2col tensor map, kp the reduction's R·S·C' and g.m the output pixels.
struct HopperIm2col {
    std::int64_t pixel_bytes = 0;  // C' x element bytes: a multiple of 128, or 64 or 32
    std::int64_t taps_s = 1;       // the filter's width S
    std::int64_t taps = 1;         // R·S
};
void lower_hopper_tn_launch(LoweredKernel& out, const GemmShape& g, simt::MmaType type, simt::MmaType b_type,
                            std::uint32_t a, std::uint32_t b, std::uint32_t c, std::int64_t kp, std::int64_t np,
                            const HopperTileChoice& hopper, const LoweringTarget& target, simt::GlobalMemory& memory,
                            int splits = 1, const HopperIm2col* im2col = nullptr);

// partials: the split-K variant, whose batch entries are the parts of K and whose epilogue stores
// the fp32 accumulator pairs (st.global.v2) into the part's plane (C, ldc and c_batch then in bytes
// of fp32) for splitk_sum_kernel (gemm.h) to add and pack. type s8, e4m3, e5m2: the 8-bit kernel
// (no partials).
// edges: the edge variant (above). b_k_major: B given transposed, N x K (implied for 8-bit types).
std::string hopper_gemm_source(const HopperTile& tile, simt::MmaType type, bool partials = false, bool edges = false,
                               bool b_k_major = false);
const simt::Kernel* hopper_gemm_kernel(const HopperTile& tile, simt::MmaType type, bool partials = false, bool edges = false,
                                       bool b_k_major = false);
// The 16-bit GEMM with a fused epilogue (gemm.h, GemmEpilogue; docs/gpu.md "Fused epilogues on
// sm_90"): after the K loop the consumers take their accumulators through the steps before the
// one store, loading the tensor steps' words (C's layout) and the bias `chunk` 8-column groups at
// a time (1, 2 or 4; the words are payload registers, so fewer when registers are short). Params
// after the plain kernel's (and the edge ones): bias, alpha, e0, e1, ... (e<i> = tensor i's
// address minus C's), as gemm_epilogue_kernel's. No split-K partials: a split GEMM's sum launch
// applies the epilogue (splitk_sum_kernel).
std::string hopper_gemm_epilogue_source(const HopperTile& tile, simt::MmaType type, bool edges, const GemmEpilogue& epilogue,
                                        int chunk = 4);
const simt::Kernel* hopper_gemm_epilogue_kernel(const HopperTile& tile, simt::MmaType type, bool edges,
                                                const GemmEpilogue& epilogue, int chunk = 4);
// The chunk (4, 2 or 1) whose kernel fits the most blocks per SM on `sm`, the largest of equals;
// 0 when none fits a block.
int choose_hopper_epilogue_chunk(const HopperTile& tile, simt::MmaType type, bool edges, const GemmEpilogue& epilogue,
                                 const simt::SmParams& sm);
// The implicit-GEMM convolution on the Hopper path (docs/gpu.md, "Hopper convolutions"): the
// GEMM kernel with B transposed (the weights, K x R·S·C') whose producer gathers A's boxes from the
// NHWC input with TMA's im2col mode (cp.async.bulk.tensor.im2col; PTX ISA 9.7.9.25): k-block j is
// KB channel bytes of one filter tap, taps in (r, s) order, so C' x element bytes must be a
// multiple of 128. Param A is the address of the im2col tensor map (simt::Im2colMapWord), lda and
// a_batch are unused, and two params follow the edge ones: pixel_bytes (C' x element bytes) and
// taps_s (the filter's width S). One group. partials (16-bit): split-K, as the GEMM's; each part
// (batch entry) starts its producer at its first k-block's tap and channel bytes.
// tap_bytes 64 or 32: pixels of that many bytes (C' x element bytes), 128 / tap_bytes taps a
// k-block, each gathered by its own box into its own shared-memory sub-tile of BM rows (the
// consumers' wgmma reads A with that row pitch); one more param, taps (R·S): the last k-block's
// taps past it are boxes of zeros that read nothing.
std::string hopper_conv_source(const HopperTile& tile, simt::MmaType type, bool edges = false, bool partials = false,
                               int tap_bytes = HopperTile::kblock_bytes);
const simt::Kernel* hopper_conv_kernel(const HopperTile& tile, simt::MmaType type, bool edges = false, bool partials = false,
                                       int tap_bytes = HopperTile::kblock_bytes);
// fp8 operands of two formats (A e4m3 x B e5m2 or the reverse): wgmma's .atype.btype form.
std::string hopper_gemm_source(const HopperTile& tile, simt::MmaType a_type, simt::MmaType b_type, bool edges = false);
const simt::Kernel* hopper_gemm_kernel(const HopperTile& tile, simt::MmaType a_type, simt::MmaType b_type, bool edges = false);

}  // namespace accelsim::gpu
