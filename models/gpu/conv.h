#pragma once
// conv2d of the GPU kernel library (issue 7) as implicit GEMM: M = N*OH*OW output pixels,
// N = K/groups output channels, K = R*S*C' (C' = C/groups, padded as the kernel's loads need),
// one GEMM per group (the grid's batch). No im2col is materialised: the A loader computes the
// im2col addresses of what it loads per slice (stride, padding, dilation; padding taps read a zero
// area); B is the weights. docs/gpu.md ("GEMM and conv kernels") documents the layouts.
//
//   fp16, bf16 on tensor cores that run them: the tensor-core GEMM kernel of gemm.h (mma.m16n8k16),
//     A gathered in 16-byte chunks. Input NHWC [n][h][w][groups][C'], weights [K][R][S][C'],
//     output [n][oh][ow][groups][K'] in the dtype; C' and K' rounded up to 8, the padding zero.
//   int8 on chips with an int8 tensor rate: the int8 GEMM kernel (mma.m16n8k32.s8), the same
//     layouts in int8 bytes with C' rounded up to 16 (one chunk), the output int32 (K' rounded up
//     to 8), as the int8 matmul's. Inputs quantized per tensor (quantization.h).
//   fp32, and fp16 / bf16 where the tensor cores do not run the dtype (k80; bf16 on v100): the
//     FP32 FFMA GEMM kernel (64 x 64 x 8), A gathered one word per element; input NHWC
//     [n][h][w][C] and output [n][oh][ow][K] fp32 without padding, weights
//     [groups][R][S][C/groups][K/groups] (K x N per group). 16-bit convs run on fp32 copies
//     (gpu.fp32_fallback), as their GEMMs do.
// Other dtypes are LoweringErrors (lower_op keeps their roofline rows).
#include "models/common/op.h"
#include "models/gpu/gemm.h"
#include "models/gpu/lowering.h"

namespace accelsim::gpu {

// lower_conv2d (lowering.h) with the tensor-core tile forced (tests of every tile shape): fp16,
// bf16 and int8 only.
LoweredKernel lower_conv2d_with_tile(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                     const GemmTile& tile);

}  // namespace accelsim::gpu
