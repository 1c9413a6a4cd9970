#include "models/gpu/lowering.h"

#include "models/gpu/elementwise.h"

namespace accelsim::gpu {

std::optional<LoweredKernel> lower_op(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    // The kernels compute in fp32 on 16- or 32-bit floating-point tensors, except the int8
    // tensor-core GEMM and conv (int32 accumulators) on chips with an int8 tensor rate; other
    // integer ops keep their roofline rows (docs/gpu.md).
    // fp8 likewise: GEMMs run the fp8 tensor-core kernel, other fp8 ops (and fp8 convolutions)
    // keep roofline rows, but for the elementwise ones, softmax and layernorm below.
    const bool byte_type = op.dtype == DType::int8 || op.dtype == DType::int32 || is_fp8(op.dtype);
    const bool gemm_kind = op.kind == OpKind::matmul || op.kind == OpKind::bmm;
    const bool byte_gemm = target.tensor_cores_for(op.dtype) &&
                           ((is_fp8(op.dtype) && gemm_kind) ||
                            (op.dtype == DType::int8 && (gemm_kind || op.kind == OpKind::conv2d)));
    // int8 and fp8 elementwise ops, softmax and layernorm run the 8-bit kernels (elementwise.h,
    // reduction.h) where the ISA has their conversions: int8 everywhere, fp8 from sm_89.
    const bool byte_vector = ((is_elementwise(op.kind) && has_elementwise_kernel(op.kind)) ||
                              op.kind == OpKind::softmax || op.kind == OpKind::layernorm) &&
                             runs_eight_bit_elementwise(op.dtype, target);
    if (op.kind != OpKind::kernel && byte_type && !byte_gemm && !byte_vector) return std::nullopt;
    switch (op.kind) {
        case OpKind::matmul:
        case OpKind::bmm: return lower_gemm(op, memory, target);
        case OpKind::conv2d:
            // Implicit GEMM (conv.h): on the tensor cores for fp16, bf16 and int8, on the FP32
            // FFMA kernel for fp32 and for 16-bit dtypes the chip's tensor cores do not run.
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
