#pragma once
// Row reductions of the GPU kernel library (issue 7): softmax and layernorm over the cols of each
// of `rows` independent rows, in the project's warp ISA, with warp-shuffle reductions
// (shfl.bfly). docs/gpu.md ("Softmax, layernorm and elementwise kernels") documents them.
//
// Softmax runs PyTorch's CUDA kernels (softmax_variant and ReductionVariant below: issue 18 item 4,
// docs/gpu.md "Softmax: PyTorch's three kernels"), and so does layernorm (layernorm_variant,
// layernorm_torch.cpp; docs/gpu.md "Layernorm: PyTorch's kernels"). Two OneFlow-style variants
// run 8-bit rows (eight_bit_row_variant) and stay selectable for both when a test forces them:
// - warp per row (cols <= kWarpPerRowMaxCols): each warp owns a row; its lanes stride the row by 32
//   and a 5-step butterfly (16, 8, 4, 2, 1) gives every lane the row's max / sum; blocks of
//   warp_rows_per_block warps;
// - block per row (longer rows): a block of kReductionBlock threads owns a row; each warp
//   butterflies its part, lane 0 writes it to shared memory, bar.sync, and every warp butterflies
//   the kReductionBlock/32 partials (3 more steps), so every thread holds the row's value.
// Both are grid-stride over rows: the grid is at most one wave of resident blocks.
//
// softmax: y = 2^((x - max) log2 e) / sum, as max pass, exp-sum pass, output pass (the exponential
// is recomputed rather than stored, so the row is read three times, written once).
// layernorm: two-pass mean and biased variance (as models/tpu/tpu_vector.cpp), eps = 1e-5,
// y = (x - mean) * rsqrt(var + eps) * gamma + beta; read three times, written once.
// Tensors are stored in the op's dtype (elementwise.h: fp16/bf16 as packed pairs, fp32 math);
// 16-bit rows of odd cols are padded to whole words (row pitch = ceil(cols / 2) words).
#include <cstdint>

#include "models/common/op.h"
#include "models/gpu/elementwise.h"
#include "models/gpu/lowering.h"

namespace accelsim::gpu {

inline constexpr std::uint32_t kReductionBlock = 256;
// OneFlow's CUDA softmax and layernorm (oneflow/core/cuda/softmax.cuh, layer_norm.cuh:
// DispatchSoftmax, DispatchLayerNorm) use their warp implementation for cols <= 1024 and a block per
// row beyond. Layernorm's rule (softmax follows PyTorch's: softmax_variant).
inline constexpr std::int64_t kWarpPerRowMaxCols = 1024;
inline constexpr float kLayernormEps = 1e-5f;  // as the TPU vector unit (models/tpu/tpu_vector.cpp)

// warp_per_row / block_per_row: the OneFlow-style kernels above (layernorm's rule,
// reduction_variant). softmax_* are PyTorch's softmax forward kernels (softmax_variant):
// - softmax_warp_persistent: softmax_warp_forward (aten/src/ATen/native/cuda/PersistentSoftmax.cuh):
//   the row in registers (read once, one load per element), a group of min(32, next_pow2(cols))
//   lanes per row, 2 rows per group when next_pow2(cols) <= 128, 128-thread blocks, one block per
//   128 / group x batch rows;
// - softmax_block_smem: cunn_SoftMaxForwardSmem (aten/src/ATen/native/cuda/SoftMax.cu): one
//   block of SoftMaxForward_getBlockSize(cols) threads per row (grid = rows), the row copied to
//   shared memory by 16-byte vectors while taking the max, read back from there (read once);
// - softmax_block_global: cunn_SoftMaxForward (same file): one block per row, three passes over
//   the row in global memory (the L1 / L2 serve the second and third).
// The block variants reduce as PyTorch's blockReduceWarp: shuffle-down within each warp, partials
// through shared memory between two barriers, warp 0 reduces them, thread 0 broadcasts through
// shared memory after a third barrier.
enum class ReductionVariant : std::uint8_t {
    warp_per_row,
    block_per_row,
    softmax_warp_persistent,
    softmax_block_smem,
    softmax_block_global,
    // PyTorch's layernorm forward (layer_norm_kernel.cu, layernorm_variant):
    // - layernorm_vectorized: vectorized_layer_norm_kernel, one 128-thread block per row, Welford
    //   statistics over 4-element vectors, then a second read of the row with gamma and beta;
    // - layernorm_moments: RowwiseMomentsCUDAKernel (512 threads a row: Welford, block reduce,
    //   mean and rstd to global memory) then LayerNormForwardCUDAKernel (256 threads a row).
    layernorm_vectorized,
    layernorm_moments,
};
const char* to_string(ReductionVariant v);
// OneFlow's rule by cols alone (eight_bit_row_variant starts from it).
ReductionVariant reduction_variant(std::int64_t cols);

// PyTorch's host_softmax dispatch for a row-wise softmax over the last dim (SoftMax.cu, pytorch
// commit 000cace5a401cabff792f70ee9768708415ec98d): the persistent warp kernel when
// cols <= 1024 and cols x element bytes <= 4096; otherwise the shared-memory kernel when the row
// fits the 48 KB a block may use without opting in (cudaDeviceProp::sharedMemPerBlock) less the
// reduction's warp partials, and cols is a multiple of ILP = 16 bytes / element bytes (the
// pointers are 16-byte aligned here: every buffer is); otherwise the global-memory kernel.
// `shared_per_block`: the most a block may use on the target (below 48 KB: never the smem kernel).
// `wave_size` (sm.wave_size): the build's warp size, 64 for ROCm (CDNA), whose block kernels
// reduce in waves of 64 (blockReduceWarp with C10_WARP_SIZE 64: fewer partials).
ReductionVariant softmax_variant(std::int64_t cols, Storage storage, std::int64_t shared_per_block = 49152,
                                 int wave_size = 32);
// SoftMaxForward_getBlockSize: min(cols, 1024) rounded up to a multiple of the warp size.
std::uint32_t softmax_block_threads(std::int64_t cols, int wave_size = 32);
inline constexpr std::int64_t kSharedMemPerBlock = 49152;  // cudaDeviceProp::sharedMemPerBlock
inline constexpr int kPersistentSoftmaxBlock = 128;         // PersistentSoftmax.cuh threads_per_block

// PyTorch's layernorm launch constants (pytorch commit 0005c538: layer_norm_kernel.cu vec_size,
// thread_constants.h num_threads() = C10_WARP_SIZE x 4 = 128 (CUDA) or 1024 (ROCm 5.3 and
// later), block_reduce.cuh kCUDABlockReduceNumThreads, layer_norm_kernel.cu kCUDANumThreads).
inline constexpr std::int64_t kLayernormVecElements = 4;
// C10_WARP_SIZE of the PyTorch build a target runs: 64 on wave64 (ROCm, sm.wave_size 64), else 32.
inline constexpr int torch_warp_size(int wave_size) { return wave_size == 64 ? 64 : 32; }
// The vectorized kernel's block, threads(warp_size, num_threads() / warp_size): 4 warps of 32, or
// 16 waves of 64 on a wave64 (ROCm) target.
inline constexpr int layernorm_vectorized_threads(int wave_size) { return wave_size == 64 ? 1024 : 128; }
inline constexpr int kLayernormMomentsThreads = 512;
inline constexpr int kLayernormForwardThreads = 256;
// LayerNormKernelImplInternal's choice: layernorm_vectorized when cols % 4 == 0 and cols <= 2^24
// (float, half and bfloat16 with buffers aligned to 4 elements, as every buffer here is), else
// layernorm_moments.
ReductionVariant layernorm_variant(std::int64_t cols);
// The assembled kernel (once per process): the vectorized kernel (params cols, x, gamma, beta, y,
// mean, rstd), the moments kernel (cols, words, x, mean, rstd) or, with `forward`, the moments
// variant's second kernel (cols, words, x, gamma, beta, y, mean, rstd); nullptr otherwise.
// wave_size 64 (sm.wave_size; CDNA): the kernels of ROCm's build, whose Welford shuffles span
// each wave of 64 (the vectorized kernel's 4 waves; the moments kernel's 8).
const simt::Kernel* torch_layernorm_kernel(ReductionVariant variant, Storage storage, bool forward = false,
                                           int wave_size = 32);

// Rows (warps) per block of the warp-per-row variant: 8, halved while 8 per block would leave SMs
// without a row (rows < per_block x sms), down to 1.
std::int64_t warp_rows_per_block(std::int64_t rows, int sms);

// The variant of an 8-bit softmax or layernorm (PyTorch has none, so the library chooses between its
// two OneFlow-style kernels): a block per row beyond kWarpPerRowMaxCols columns, as OneFlow; up to
// there, whichever of warp and block per row takes fewer estimated steps, warp per row on a tie.
// Steps = waves of rows (rows over the rows the chip holds at once with that kernel, SMs x the
// occupancy calculator's blocks per SM x rows per block) x (the unrolled trips of 2 words a
// thread that one pass over a row takes, + 1 for a row's fixed costs: its set-up and reductions).
// A few long rows take a block each (128 x 768 int8 on a100: warp 1 x (3 + 1) = 4, block
// 1 x (1 + 1) = 2), many rows a warp each (2048 x 768: warp 1 x 4, block 3 x 2 = 6); docs/gpu.md
// "8-bit softmax and layernorm" has the measured cycles the rule follows.
ReductionVariant eight_bit_row_variant(OpKind kind, std::int64_t rows, std::int64_t cols, Storage storage,
                                       const LoweringTarget& target);

// The assembled kernel (once per process). Params: softmax rows, cols, words, x, y; layernorm
// rows, cols, words, x, gamma, beta, y, inv_cols (fp32 bits of 1/cols). words = row pitch in
// 32-bit words. `cols` picks the persistent warp kernel's size (one kernel per power of two, as
// PyTorch's templates) and the global kernel's load width (16-byte vectors when a row is whole
// vectors); the other variants ignore it. `wave_size` (the target's sm.wave_size, 32 or 64) is
// the persistent kernel's widest group (PyTorch's at::cuda::warp_size(): 64 on CDNA, where the
// group's shuffles span the wave's two halves); the other variants are the 32-lane kernels.
const simt::Kernel* reduction_kernel(OpKind kind, ReductionVariant variant, Storage storage, std::int64_t cols = 0,
                                     int wave_size = 32);

// lower_softmax / lower_layernorm (lowering.h) with the variant forced (tests of both variants).
LoweredKernel lower_row_reduction(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                  ReductionVariant variant);

}  // namespace accelsim::gpu
