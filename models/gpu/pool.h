#pragma once
// The GPU kernel library's pool kernel (pool.cpp; docs/gpu.md, "Pooling"): one thread per output
// word in a grid-stride loop, each reading its window from global memory.
#include "models/gpu/elementwise.h"
#include "models/gpu/lowering.h"

namespace accelsim::gpu {

// The assembled kernel for a mode and storage, assembled once per process. Parameters:
// n (output words), cw (channel words per pixel), h, w, oh, ow, r, s, sh, sw, ph, pw, dh, dw,
// low, high_h, high_w (the avg divisor's clip bounds), x, y.
// s8 adds scale_x and inv_scale_y (both 1: the output keeps the input's scale).
const simt::Kernel* pool_kernel(PoolMode mode, Storage storage);
// A pool whose window is the whole image (one output pixel, no padding or dilation) runs as a
// reduction instead (pool.cpp): blocks of 8 warps, 32 output words each, the image's pixels split
// across the warps and combined in shared memory. Parameters: n (output words), cw, hw (pixels
// per image), x, y (s8: scale_x, inv_scale_y).
const simt::Kernel* global_pool_kernel(PoolMode mode, Storage storage);
bool whole_image_window(const PoolShape& p);
// The storage a pool of `dtype` runs on (8-bit dtypes: s8, e4m3, e5m2).
Storage pool_storage(DType dtype);

}  // namespace accelsim::gpu
