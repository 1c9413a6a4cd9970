#pragma once
// Row reductions of the GPU kernel library (issue 7): softmax and layernorm over the cols of each
// of `rows` independent rows, in the project's warp ISA, with warp-shuffle reductions
// (shfl.bfly). docs/gpu.md ("Softmax, layernorm and elementwise kernels") documents them.
//
// Two variants, chosen by the op's cols (reduction_variant):
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
// row beyond; PyTorch's persistent warp softmax stops at 1024 columns too. One rule for both ops.
inline constexpr std::int64_t kWarpPerRowMaxCols = 1024;
inline constexpr float kLayernormEps = 1e-5f;  // as the TPU vector unit (models/tpu/tpu_vector.cpp)

enum class ReductionVariant : std::uint8_t { warp_per_row, block_per_row };
const char* to_string(ReductionVariant v);
ReductionVariant reduction_variant(std::int64_t cols);

// Rows (warps) per block of the warp-per-row variant: 8, halved while 8 per block would leave SMs
// without a row (rows < per_block x sms), down to 1.
std::int64_t warp_rows_per_block(std::int64_t rows, int sms);

// The assembled kernel (once per process). Params: softmax rows, cols, words, x, y; layernorm
// rows, cols, words, x, gamma, beta, y, inv_cols (fp32 bits of 1/cols). words = row pitch in
// 32-bit words.
const simt::Kernel* reduction_kernel(OpKind kind, ReductionVariant variant, Storage storage);

// lower_softmax / lower_layernorm (lowering.h) with the variant forced (tests of both variants).
LoweredKernel lower_row_reduction(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                  ReductionVariant variant);

}  // namespace accelsim::gpu
