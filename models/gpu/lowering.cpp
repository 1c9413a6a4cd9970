#include "models/gpu/lowering.h"

#include "models/gpu/elementwise.h"

namespace accelsim::gpu {

std::optional<LoweredKernel> lower_op(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    // The kernels compute in fp32 on 16- or 32-bit floating-point tensors, except the int8
    // tensor-core GEMM (int32 accumulators) on chips with an int8 tensor rate; other integer ops
    // keep their roofline rows (docs/gpu.md).
    // fp8 likewise: GEMMs run the fp8 tensor-core kernel, other fp8 ops (and fp8 convolutions)
    // keep roofline rows.
    const bool byte_type = op.dtype == DType::int8 || op.dtype == DType::int32 || is_fp8(op.dtype);
    const bool byte_gemm = (op.dtype == DType::int8 || is_fp8(op.dtype)) &&
                           (op.kind == OpKind::matmul || op.kind == OpKind::bmm) && target.tensor_cores_for(op.dtype);
    if (op.kind != OpKind::kernel && byte_type && !byte_gemm) return std::nullopt;
    switch (op.kind) {
        case OpKind::matmul:
        case OpKind::bmm: return lower_gemm(op, memory, target);
        case OpKind::conv2d:
            // The implicit-GEMM kernel gathers 16-bit operands for the tensor cores; fp32
            // convolutions have no kernel yet and keep their roofline rows (docs/gpu.md).
            // The same holds for a convolution whose dtype the chip's tensor cores do not run
            // (every dtype on k80, bf16 on v100).
            if (op.dtype == DType::fp32 || !target.tensor_cores_for(op.dtype)) return std::nullopt;
            return lower_conv2d(op, memory, target);
        case OpKind::softmax: return lower_softmax(op, memory, target);
        case OpKind::layernorm: return lower_layernorm(op, memory, target);
        case OpKind::pool:
            if (!has_pool_kernel(op)) return std::nullopt;
            return lower_pool(op, memory, target);
        case OpKind::kernel: return std::nullopt;  // the chip runs the trace's own kernel
        default: break;
    }
    // Elementwise kinds: one grid-stride kernel per kind the library has a row for.
    if (is_elementwise(op.kind) && has_elementwise_kernel(op.kind)) return lower_elementwise(op, memory, target);
    return std::nullopt;
}

}  // namespace accelsim::gpu
