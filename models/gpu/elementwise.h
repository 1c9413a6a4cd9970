#pragma once
// The first piece of the GPU kernel library (issue 7): elementwise trace ops (add, mul, relu,
// gelu) as grid-stride loops in the project's warp ISA. The grid is one wave of resident blocks
// (or fewer when n is small); each thread handles i, i + grid*block, ... so the last trip is a real
// tail where lanes with i >= n leave and the rest run on with a partial mask.
#include <cstdint>
#include <optional>

#include "models/common/op.h"
#include "models/simt/isa.h"
#include "models/simt/execution.h"

namespace accelsim::gpu {

inline constexpr std::uint32_t kElementwiseBlock = 256;

// The assembled kernel for an elementwise op kind (add, mul: params n, a, b, y; relu, gelu: n, x,
// y), assembled once per process; nullopt-like nullptr for other kinds.
const simt::Kernel* elementwise_kernel(OpKind kind);

// Grid and block for n elements on `sms` SMs that each hold `blocks_per_sm` blocks of
// kElementwiseBlock threads: ceil(n / block) blocks, capped at one full wave.
simt::Dim elementwise_dims(std::int64_t n, int sms, int blocks_per_sm);

// What one element of the kernel computes, in the same fp32 operations (the --validate
// reference): gelu is the sigmoid form x * 1 / (1 + 2^(-1.702 * log2(e) * x)).
float elementwise_reference(OpKind kind, float a, float b);

}  // namespace accelsim::gpu
