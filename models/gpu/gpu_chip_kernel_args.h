#pragma once
// The parameter words of a trace's `kernel` op (syntax in docs/trace-format.md), for the GPU chip.
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/op.h"
#include "models/simt/isa.h"
#include "models/simt/execution.h"

namespace accelsim::gpu {

// A buffer a kernel argument asked the chip to allocate (`buf:TYPE:COUNT:FILL`).
struct KernelBuffer {
    std::string spec;           // the argument as written
    std::uint32_t address = 0;  // byte address in global memory, passed to the kernel
    std::uint64_t bytes = 0;
};

// The 32-bit parameter words of a kernel op, from op.kernel.args:
//   123, -4, i:123      a 32-bit integer (two's complement)
//   f:2.5               fp32 bits
//   buf:T:N:FILL        a buffer of N elements of T (f32, i32, f16) allocated in `memory` and
//                       filled with zero | ones | iota | rand (rand: seeded from `seed` and the
//                       argument's position, so the same trace and config give the same data)
// Throws std::invalid_argument naming op.file:op.line and the argument for anything else, or when
// the count differs from the kernel's .param list. `buffers` (optional) receives what was allocated.
std::vector<std::uint32_t> kernel_arguments(const Op& op, const simt::Kernel& kernel, std::uint64_t seed,
                                            simt::GlobalMemory& memory, std::vector<KernelBuffer>* buffers = nullptr);

// "file:line: kind 'name'" of an op, the start of the GPU chip's error messages.
std::string op_where(const Op& op);

}  // namespace accelsim::gpu
