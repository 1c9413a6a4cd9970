#pragma once
// conv2d of the GPU kernel library (issue 7) as implicit GEMM on the tensor-core GEMM kernel of
// gemm.h: M = N*OH*OW output pixels, N = K/groups output channels, K = R*S*C' (C' = C/groups
// rounded up to 8), one GEMM per group (the grid's batch). The A loader computes the im2col
// addresses of its 16-byte chunks per slice (stride, padding, dilation; padding taps read a zero
// area) instead of materialising im2col; B is the weights read as rows. docs/gpu.md
// ("GEMM and conv kernels") documents the layout.
//
// Layout in global memory: input NHWC [n][h][w][groups][C'], weights [K][R][S][C'], output
// [n][oh][ow][groups][K'] with K' = K/groups rounded up to 8; the channel padding is zero.
// fp16 and bf16 only (LoweringError otherwise).
#include "models/common/op.h"
#include "models/gpu/gemm.h"
#include "models/gpu/lowering.h"

namespace accelsim::gpu {

// lower_conv2d (lowering.h) with the tensor-core tile forced (tests of every tile shape).
LoweredKernel lower_conv2d_with_tile(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                     const GemmTile& tile);

}  // namespace accelsim::gpu
