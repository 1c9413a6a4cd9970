#pragma once
// The GPU kernel library's pool kernel (pool.cpp; docs/gpu.md, "Pooling"): one thread per output
// word in a grid-stride loop, each reading its window from global memory.
#include "models/gpu/elementwise.h"
#include "models/gpu/lowering.h"

namespace accelsim::gpu {

// The assembled kernel for a mode and storage, assembled once per process. Parameters:
// n (output words), cw (channel words per pixel), h, w, oh, ow, r, s, sh, sw, ph, pw, dh, dw,
// low, high_h, high_w (the avg divisor's clip bounds), x, y.
const simt::Kernel* pool_kernel(PoolMode mode, Storage storage);

}  // namespace accelsim::gpu
