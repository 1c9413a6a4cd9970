#pragma once
// GEMM kernels of the GPU kernel library (issue 7): matmul and bmm, C[b] = A[b] (M x K) * B[b]
// (K x N), row-major. docs/gpu.md ("GEMM and conv kernels") documents them.
//
// 16-bit inputs (fp16 / bf16) run a tiled tensor-core kernel generated here for a few tile shapes:
// a block of W warps computes a BM x BN tile of C, each warp a WM x WN sub-tile of
// (WM/16) x (WN/8) mma.m16n8k16 accumulators (register tiling: each A fragment serves WN/8 mmas,
// each B fragment WM/16). The K loop stages BK = 32 wide slices of A and B through shared memory
// with two stages (double buffering): the next slice's ld.global.v4 / .v2 are issued before the
// current slice's mmas and stored (st.shared.v4) to the other stage after them, one bar.sync per
// slice. Shared layouts are padded so that fragment loads and the vector stores are conflict-free.
// fp32 inputs run a tiled FP32 SIMT kernel (ffma, 64 x 64 tiles, 4 x 4 outputs per thread).
//
// Operand layout in global memory: A is M x K' and B is K' x N', C is M x N' with K' = K and
// N' = N rounded up to multiples of 8 elements (16 bytes: every row starts aligned for vector
// loads, as cuBLAS's fast paths require); the padding is zero. Rows of A beyond M and columns of B
// beyond N are clamped to the last valid one (they only feed C elements that are never stored);
// the K remainder is the first slice (as CUTLASS does), loaded with predicates that leave zeros,
// so every later slice runs without predicates.
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/op.h"
#include "models/gpu/lowering.h"

namespace accelsim::gpu {

// A fused epilogue (fusion.h): steps applied in order to each fp32 accumulator before the GEMM's
// one store, as CUTLASS's epilogue visitors and cuBLASLt's epilogues do. bias adds a vector of N
// (one value per column, shared by every row and batch entry); add and mul read a tensor of C's
// shape and layout (a residual, a scale-and-mask tensor); gelu is the elementwise kernel's sigmoid
// form; relu max(x, 0); scale multiplies by the scalar alpha (a launch argument: one kernel serves
// every alpha).
enum class EpilogueStep : std::uint8_t { bias, gelu, relu, add, mul, scale };
struct GemmEpilogue {
    std::vector<EpilogueStep> steps;
    float alpha = 1.0f;  // the scale step's factor
    int tensor_steps() const;  // add and mul steps: each reads a tensor of C's shape
    bool has_bias() const;
    bool has_scale() const;
    std::string name() const;  // "gelu", "add_gelu": the kernel's name suffix
};
// The step of a fused trace op (gelu, relu, add, mul); throws LoweringError for other kinds.
EpilogueStep epilogue_step_of(OpKind kind);
// The instructions of one step on the fp32 value in register `v` (lines without indentation), as
// the GEMM kernels' epilogues emit them: `operand` the step's fp32 operand register (bias, add,
// mul: unpacked by the caller), `temporary` a free register (gelu: the elementwise kernel's
// sigmoid form, fmul, ex2, fadd, rcp, fmul).
std::vector<std::string> epilogue_step_lines(EpilogueStep step, const std::string& v, const std::string& operand,
                                             const std::string& temporary);

struct GemmTile {
    int bm = 128, bn = 128, bk = 32;
    int warps_m = 2, warps_n = 4;  // warp grid in the block; warp tile = bm/warps_m x bn/warps_n
    // Measured tensor-core utilization of this tile within full waves on a100 with its memory
    // hierarchy (bench/gpu_gemm_bench, docs/gpu.md): the tile rule's per-tile efficiency.
    double efficiency = 1.0;
    // K slices whose global loads are in flight while one is computed: 1 = classic double
    // buffering (one register-staged slice ahead), 2 = a second staging set, so a load has two
    // slices of mmas to hide behind (costs ACH*4 + BU*4 + 1 registers). The conv variant uses 1.
    int slices_ahead = 1;
    int threads() const { return 32 * warps_m * warps_n; }
    std::string name() const { return std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk); }
};

// Tensor-core tile shapes, largest first.
const std::vector<GemmTile>& gemm_tensor_tiles();

// The tile rule (docs/gpu.md): for each tile (256x128, 128x128, 128x64, 64x64, 32x32), blocks = batch * ceil(M/BM) * ceil(N/BN), each SM
// runs ceil(blocks / sms) of them, so the estimated time is ceil(blocks / sms) * BM * BN /
// efficiency (the K loop is common to all). The smallest estimate wins; ties go to the larger
// tile. The chosen tile keeps its table slices_ahead, raised to 2 when the grid fits one wave at
// the two-ahead variant's occupancy (idle warp slots hide no latency). Waves and wave efficiency
// are reported with the choice.
struct GemmTileChoice {
    GemmTile tile;
    int splits = 1;               // split-K parts (1: none); see choose_gemm_splits
    std::int64_t blocks = 0;
    int blocks_per_sm = 0;        // occupancy calculator
    double waves = 0;             // blocks / (sms * blocks_per_sm)
    double wave_efficiency = 0;   // waves / ceil(waves)
};
// type: the kernels whose occupancy counts (s8: the int8 kernel; f16 and bf16 share one).
GemmTileChoice choose_gemm_tile(const GemmShape& shape, int sms, const simt::SmParams& sm,
                                simt::MmaType type = simt::MmaType::f16);

// Split-K (docs/gpu.md): a GEMM whose grid leaves SMs idle and whose K loop is long is cut into
// S parts of K, each computed by its own blocks into an fp32 partial plane, and a second launch
// sums the planes into C. Only for batch 1, S in {2, 3, 4, 6, 8} with K' divisible by 8 S, at
// least 4 slices per part and the split grid within one wave. Estimated time, smallest wins
// (S = 1 on ties):
//   T(S) = max(ceil(K'/S / BK) * kGemmLatencySliceCycles,
//              A and B bytes / (min(blocks * S, SMs) * port bytes per cycle * kGemmPortEfficiency))
//          + (S > 1: launch overhead + kSplitkSumLatencyCycles + S * M * N' * 4 / HBM bytes per cycle)
// (A and B bytes = tiles * K' * (BM + BN) * 2: the same for every S.) Returns 1 when the target
// gives no launch overhead or HBM bandwidth. element_bytes 1: the 8-bit kernel (int8, fp8), whose
// slice holds 2 BK values of K' (K rounded up to 16), its parts whole 16-byte chunks (K'
// divisible by 16 S), its bytes one per element, its planes the accumulators as they are.
int choose_gemm_splits(const GemmShape& shape, const GemmTileChoice& choice, int sms, const LoweringTarget& target,
                       int element_bytes = 2);
// Calibrated on a100 with BERT's fc2 (128x768x3072, 32x32 tiles two ahead, bench/gpu_gemm_bench
// --splits S): a latency-bound block's time per K slice (22,443 kernel cycles / 96 slices), the
// share of an SM's port a GEMM's loads achieve when every SM has blocks (37.7 MB in 10,633 cycles
// over 108 SMs = 32.8 B/cycle of 64), and the sum launch's fixed part (its loads' latency).
inline constexpr double kGemmLatencySliceCycles = 234;
inline constexpr double kGemmPortEfficiency = 0.51;
inline constexpr double kSplitkSumLatencyCycles = 1000;

// Warp-ISA source of the tensor-core kernel for one tile (16-bit type `type`), and the assembled
// kernel (once per process per tile and type). Params, in order:
//   M, N, Mlast (M-1), Nlast (N'-4: last B column group), A, B, C, lda, ldb, ldc (row pitches in
//   bytes), a_batch, b_batch, c_batch (matrix strides in bytes), tiles_m, tiles_n, tiles_per_batch,
//   group_blocks (kGemmGroupRows * tiles_n), slices (ceil(K'/BK)), kfirst (K' - slices*BK, <= 0:
//   the k at which the first, partial slice starts), b_slice (BK * ldb)
std::string gemm_tensor_source(const GemmTile& tile, simt::MmaType type);
const simt::Kernel* gemm_tensor_kernel(const GemmTile& tile, simt::MmaType type);
// fp8 operands of two formats (A e4m3 x B e5m2, or the reverse): the mma's .atype.btype form.
std::string gemm_tensor_source(const GemmTile& tile, simt::MmaType a_type, simt::MmaType b_type);
const simt::Kernel* gemm_tensor_kernel(const GemmTile& tile, simt::MmaType a_type, simt::MmaType b_type);
// The split-K variant: C is an fp32 partial plane per batch entry (ldc, c_batch in bytes of fp32),
// stored as accumulator pairs (st.global.v2) instead of packed 16-bit pairs.
const simt::Kernel* gemm_tensor_partials_kernel(const GemmTile& tile, simt::MmaType type);
// Split-K's sum: pairs = M * N' / 2 output pairs; out[i] = pack(sum over the S planes of ws).
// Params: pairs, ws, plane (bytes between planes), c. Grid-stride, all S loads issued first. With a
// fused epilogue the sum applies it before packing (further params: bias and ldc_pairs (N'/2) with
// a bias, e<i> per tensor step, as the GEMM kernel's).
const simt::Kernel* splitk_sum_kernel(int splits, simt::MmaType type, const GemmEpilogue& epilogue = {});
// The 8-bit kernels' mma type of an operand dtype: e4m3, e5m2, or s8 for int8 (GEMMs and convolutions).
simt::MmaType byte_gemm_mma_type(DType dtype);
// The 8-bit GEMM's split-K sum: the S planes of 32-bit accumulators added into C as they are, fp32
// (fadd: fp8) or int32 (add, wrapping modulo 2^32 as the mma does: int8). Params as above.
const simt::Kernel* splitk_sum_wide_kernel(int splits, bool integer);

// The implicit-GEMM conv2d variant of the same kernel (conv.h): A gathered from the NHWC input,
// B^T = the weights. Params: those of the GEMM kernel, then H, W, Cp (channels per group, padded
// to 8), S, OW, OHW (OH * OW), stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, pix (bytes per
// input pixel), image (bytes per input image), zero (address of 16 zero bytes).
std::string conv_tensor_source(const GemmTile& tile, simt::MmaType type);
const simt::Kernel* conv_tensor_kernel(const GemmTile& tile, simt::MmaType type);

// Blocks are rasterized in groups of kGemmGroupRows tile rows, column by column within a group
// (Triton's GROUP_SIZE_M, CUTLASS's threadblock swizzle), so a wave of blocks shares its A and B
// tiles in the L2.
inline constexpr int kGemmGroupRows = 8;

// The FP32 SIMT kernel (64 x 64 x 8 tiles, 256 threads, 4 x 4 outputs per thread). Params:
//   M, N, K, Mlast, Nlast, A, B, C, lda, ldb, ldc (bytes), a_batch, b_batch, c_batch, tiles_n,
//   tiles_per_batch
std::string gemm_fp32_source();
const simt::Kernel* gemm_fp32_kernel();
// Its implicit-GEMM conv2d variant (conv.h): A gathered from the NHWC fp32 input (one im2col
// address per element and slice), B = the weights as K x N ([R][S][C/groups][K/groups] per group).
// Params: those of the GEMM kernel (lda unused, a_batch: bytes between groups' channels), then H,
// W, Cg (channels per group), S, OW, OHW, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, pix
// (bytes per input pixel), image (bytes per input image), zero (address of a zero word).
std::string conv_fp32_source();
const simt::Kernel* conv_fp32_kernel();
inline constexpr int kFp32TileM = 64, kFp32TileN = 64, kFp32TileK = 8;

// The tensor-core GEMM with a fused epilogue (fp16, bf16). Split-K as the unfused GEMM would
// (choose_gemm_splits), the sum launch then applying the epilogue. Tensor steps get their own buffers after A, B and C; with real data they are seeded
// and the check compares C with Eigen's A*B followed by the steps in double. tile_override forces the
// tile (tests); otherwise the GEMM's tile rule picks it.
LoweredKernel lower_gemm_epilogue(const Op& op, const GemmEpilogue& epilogue, simt::GlobalMemory& memory,
                                  const LoweringTarget& target, const GemmTile* tile_override = nullptr,
                                  int splits_override = 1);
const simt::Kernel* gemm_epilogue_kernel(const GemmTile& tile, simt::MmaType type, const GemmEpilogue& epilogue);

// lower_gemm with the tensor-core tile (and split-K parts) forced (tests of every tile shape).
LoweredKernel lower_gemm_with_tile(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                   const GemmTile& tile, int splits = 1);

// lower_gemm on the Hopper path (sm_90 target, a shape that tiles) with the split-K parts forced
// (tests); the tile as the rule picks it.
LoweredKernel lower_hopper_gemm_with_splits(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                            int splits);

// 16-bit operand values (fp16 or bf16 bits) to and from fp32, shared by the GEMM and conv lowerings.
float gemm_operand_to_float(std::uint16_t bits, DType dtype);
std::uint16_t gemm_operand_bits(float f, DType dtype);
// Counts one int32 output of an int8 GEMM or conv into n: equal to the exact value `want` (both
// as the mma's wrapping int32 bits), or its error.
void check_int32_output(LoweringNumerics& n, std::uint32_t got, std::uint32_t want);
// The largest total of one GEMM's or convolution's buffers. Global addresses are 32-bit; keeping
// every address below 2^31 (less 4 KiB for the null page and each allocation's 256-byte alignment)
// keeps the kernels' address arithmetic and signed 32-bit comparisons valid
// (GemmAddresses.* in tests/gpu/high_address_test.cpp run kernels on buffers above 2^30).
inline constexpr std::int64_t kGemmMaxBufferBytes = (std::int64_t{1} << 31) - 4096;

// K and N rounded up to the 8-element row alignment of the operand layout.
inline std::int64_t gemm_padded(std::int64_t x) { return (x + 7) / 8 * 8; }
// The int8 GEMM's K' (docs/gpu.md, "int8 GEMMs"): 16 int8 values, one 16-byte chunk.
inline std::int64_t gemm_int8_padded_k(std::int64_t k) { return (k + 15) / 16 * 16; }

}  // namespace accelsim::gpu
