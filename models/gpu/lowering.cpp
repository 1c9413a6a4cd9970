#include "models/gpu/lowering.h"

#include "models/gpu/elementwise.h"

namespace accelsim::gpu {

std::optional<std::string> no_kernel_reason(const Op& op, const LoweringTarget& target) {
    // The kernels compute in fp32 on 16- or 32-bit floating-point tensors, except the int8
    // tensor-core GEMM and conv (int32 accumulators) on chips with an int8 tensor rate; other
    // integer ops keep their roofline rows (docs/gpu.md).
    // fp8 likewise: GEMMs and convolutions run the 8-bit tensor-core kernels with the fp8 mma, other
    // fp8 ops keep roofline rows, but for the elementwise ones, softmax and layernorm below.
    if (op.kind == OpKind::kernel) return std::nullopt;
    const std::string kind(to_string(op.kind)), dtype(to_string(op.dtype));
    const bool elementwise_kernel = is_elementwise(op.kind) && has_elementwise_kernel(op.kind);
    const bool byte_type = op.dtype == DType::int8 || op.dtype == DType::int32 || is_fp8(op.dtype);
    if (byte_type) {
        const bool gemm_kind = op.kind == OpKind::matmul || op.kind == OpKind::bmm;
        if (gemm_kind || op.kind == OpKind::conv2d) {  // int8 and fp8: the 8-bit kernels
            if (op.dtype == DType::int32) return "the library has no int32 " + kind + " kernel";
            for (const DType t : {op.dtype, op.operand_b_dtype()}) {
                const std::string name(to_string(t));
                if (!target.tensor_cores_for(t))
                    return "this chip's tensor cores have no " + name + " rate (config: sm.tensor_macs_per_cycle." + name +
                           " is 0), and the library has no " + name + " " + (gemm_kind ? std::string("GEMM") : kind) +
                           " outside them";
            }
            return std::nullopt;
        }
        // int8 and fp8 elementwise ops, softmax, layernorm and pools run the 8-bit kernels
        // (elementwise.h, reduction.h, pool.h) where the ISA has their conversions: int8
        // everywhere, fp8 from sm_89.
        const bool vector_kind =
            elementwise_kernel || op.kind == OpKind::softmax || op.kind == OpKind::layernorm || op.kind == OpKind::pool;
        if (!vector_kind || op.dtype == DType::int32)
            return "the library has no " + dtype + " " + kind + " kernel (8-bit storage: GEMMs, convolutions, "
                   "elementwise ops, softmax, layernorm and pools)";
        if (op.kind == OpKind::pool && !has_pool_kernel(op))
            return "a pool in " + dtype + " holds four channels per word; a channel count that is not a multiple of 4 (" +
                   std::to_string(op.pool.c) + ") has no kernel";
        if (!runs_eight_bit_elementwise(op.dtype, target))
            return "an fp8 " + kind + " needs fp8 conversions (PTX's cvt e4m3x2/e5m2x2: sm_89 or later; CDNA3: gfx942); this chip is " +
                   target.sm.limits.arch;
        return std::nullopt;
    }
    switch (op.kind) {
        case OpKind::matmul:
        case OpKind::bmm:
        case OpKind::conv2d:
        case OpKind::softmax:
        case OpKind::layernorm: return std::nullopt;
        case OpKind::pool:
            if (!has_pool_kernel(op))
                return "a pool in " + dtype + " holds two channels per word; an odd channel count (" +
                       std::to_string(op.pool.c) + ") has no kernel";
            return std::nullopt;
        default: break;
    }
    if (elementwise_kernel) return std::nullopt;
    return "the library has no GPU kernel for " + kind;
}

std::optional<LoweredKernel> lower_op(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    if (op.kind == OpKind::kernel || no_kernel_reason(op, target)) return std::nullopt;
    switch (op.kind) {
        case OpKind::matmul:
        case OpKind::bmm: return lower_gemm(op, memory, target);
        case OpKind::conv2d:
            // Implicit GEMM (conv.h): on the tensor cores for fp16, bf16 and int8, on the FP32
            // FFMA kernel for fp32 and for 16-bit dtypes the chip's tensor cores do not run.
            return lower_conv2d(op, memory, target);
        case OpKind::softmax: return lower_softmax(op, memory, target);
        case OpKind::layernorm: return lower_layernorm(op, memory, target);
        case OpKind::pool: return lower_pool(op, memory, target);
        default: break;
    }
    // Elementwise kinds: one grid-stride kernel per kind the library has a row for.
    return lower_elementwise(op, memory, target);
}

}  // namespace accelsim::gpu
