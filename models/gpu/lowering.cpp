#include "models/gpu/lowering.h"

namespace accelsim::gpu {

std::optional<LoweredKernel> lower_op(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    // The kernels compute in fp32 on 16- or 32-bit floating-point tensors; integer tensors keep
    // their roofline rows (docs/gpu.md).
    if (op.kind != OpKind::kernel && (op.dtype == DType::int8 || op.dtype == DType::int32)) return std::nullopt;
    switch (op.kind) {
        case OpKind::matmul:
        case OpKind::bmm:
        case OpKind::conv2d:
            if (op.kind == OpKind::conv2d) {
                // The implicit-GEMM kernel gathers 16-bit operands for the tensor cores; fp32
                // convolutions have no kernel yet and keep their roofline rows (docs/gpu.md).
                if (op.dtype == DType::fp32) return std::nullopt;
                return lower_conv2d(op, memory, target);
            }
            return lower_gemm(op, memory, target);
        case OpKind::softmax: return lower_softmax(op, memory, target);
        case OpKind::layernorm: return lower_layernorm(op, memory, target);
        case OpKind::gelu:
        case OpKind::relu:
        case OpKind::add:
        case OpKind::mul: return lower_elementwise(op, memory, target);
        case OpKind::kernel: break;  // the chip runs the trace's own kernel
    }
    return std::nullopt;
}

}  // namespace accelsim::gpu
