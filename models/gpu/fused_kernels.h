#pragma once
// Kernels of the fused-graph compiler (fusion.h) besides the GEMM epilogue (gemm.h): residual add +
// layernorm in one kernel, and fused multi-head attention. Written in the project's warp ISA and
// assembled once per process; docs/gpu.md "Fused graphs" documents them.
#include <cstdint>
#include <vector>

#include "models/common/op.h"
#include "models/gpu/elementwise.h"
#include "models/gpu/lowering.h"

namespace accelsim::gpu {

// ---- residual add + layernorm (TensorRT's skip-layernorm) ---------------------------------------
// y = layernorm(x + residual) * gamma + beta over rows of `cols` 16-bit values, one warp per row
// with the row held in registers: every word of x, the residual, gamma and beta is loaded at once
// (one memory latency per row), the sum stays in fp32 (never rounded to 16 bits, never stored),
// mean and biased variance by two butterflies over the registers (eps = kLayernormEps), one store.
// Rows of up to kResidualLayernormMaxWordsPerLane words per lane; even cols (no padding half in a
// row).
inline constexpr int kResidualLayernormMaxWordsPerLane =
    16;  // 1024 columns: the warp-per-row width
bool residual_layernorm_fusable(std::int64_t cols);
inline constexpr std::uint32_t kResidualLayernormWarpsPerBlock = 4;
// Params: rows, words (row pitch), x, res, gamma, beta, y, inv_cols (fp32 bits of 1/cols).
const simt::Kernel* residual_layernorm_kernel(int words_per_lane, Storage storage);
// `add` is the residual add (x + residual, elements = rows * cols), `layernorm` the layernorm after
// it. Buffers: x first (the warm L2's input), the residual, gamma, beta, y. With real data the
// check compares y with the double-precision reference of the stored inputs.
LoweredKernel lower_residual_layernorm(const Op& add, const Op& layernorm,
                                       simt::GlobalMemory& memory, const LoweringTarget& target);

// ---- fused multi-head attention (flash attention) -----------------------------------------------
// O = softmax(scale * Q K^T + mask) V per batch entry (b = batch x heads) of s queries and keys
// with head dimension d, without ever storing the s x s scores: each warp owns 16 query rows (a
// block kAttentionWarps warps, 16 kAttentionWarps rows); the key/value sequence streams through
// shared memory in tiles of kAttentionKeyTile keys (K as mma B fragments directly, V as k-pair
// words built with prmt, as the GEMM stages B). Per tile: S = Q K^T with mma.m16n8k16 (Q's
// fragments stay in registers), the online softmax (running row max m and sum l in fp32; the
// previous O and l scaled by 2^((m_old - m_new) log2 e)), P packed from the accumulators straight
// into A fragments (the C fragment of two n8 tiles is the A fragment of one k16 step), O += P V. At
// the end O /= l, one store. scale = 1/sqrt(d) (the trace's scale_mask mul); the mask is a
// key-padding mask (keys at or past kv_len get -inf), as TensorRT's fixed-sequence-length fused
// kernels take a length rather than an s x s mask tensor. One length for the launch: a length read
// per batch entry from memory would be data that control flow depends on, which timing-only runs
// cannot skip.
inline constexpr int kAttentionWarps = 4;
// Head dimensions the kernel holds in registers (Q fragments, O accumulators, staging: 185
// registers at 64): 16, 32 and 64 (BERT, GPT-2 and most encoders use 64).
inline bool attention_head_dim_supported(std::int64_t d) {
    return d == 16 || d == 32 || d == 64;
}
inline constexpr int kAttentionKeyTile = 64;
// Params: s, kv_len, q, k, v, o (16-bit [b][s'][d], s' = s rounded up to 64 rows, padding zero),
// batch_stride (s' d 2 bytes), scale_log2e (fp32 bits of log2(e)/sqrt(d)), q_blocks (ceil(s / 64)).
const simt::Kernel* attention_kernel(int head_dim, Storage storage);
// scores: bmm (b, s, s, d); context: bmm (b, s, d, s). kv_length: keys attended to (0: all s).
LoweredKernel lower_attention(const Op& scores, const Op& context, simt::GlobalMemory& memory,
                              const LoweringTarget& target, std::int64_t kv_length = 0);

}  // namespace accelsim::gpu
