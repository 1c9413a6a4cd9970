#pragma once
// The fused-graph compiler of GPU-like chips (compiler.gpu_fusion; docs/gpu.md "Fused graphs"): the
// GPU counterpart of the TPU's compiler.fuse_elementwise. It groups a trace's ops into the kernels
// a graph compiler such as TensorRT would launch; each group runs as one kernel of the library
// (fused_kernels.h), and the report keeps every trace op, naming the kernel it ran in.
//
// The trace names no tensors, so, as the warm L2 does (docs/gpu.md), an op is taken to consume the
// output of the op before it when its first input has that output's shape and dtype. Patterns:
// - gemm_epilogue (epilogue, tensorrt_like): a 16-bit matmul or bmm followed by up to
//   kMaxEpilogueSteps elementwise ops over its output (gelu, relu, add, mul; add and mul read a
//   second tensor of the output's shape: a residual, a scale-and-mask tensor). The GEMM kernel
//   applies them to its fp32 accumulators before its one store; the intermediate tensors never
//   exist.
// - residual_layernorm (tensorrt_like): add over rows x cols, then layernorm of those rows
// (TensorRT's
//   skip-layernorm): one kernel reads x and the residual, writes the normalized sum.
// - attention (tensorrt_like): bmm scores (b, s, s, d), mul scale_mask (b s s), softmax (b s rows
// of
//   s), bmm context (b, s, d, s): one flash-attention kernel (fused_kernels.h).
// In tensorrt_like an add followed by a layernorm goes to the layernorm, not to the GEMM before it,
// as TensorRT's BERT does (GEMM with bias, then skip-layernorm).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "models/common/op.h"
#include "models/gpu/gpu_params.h"

namespace accelsim::gpu {

enum class FusedKind : std::uint8_t { gemm_epilogue, residual_layernorm, attention };
const char* to_string(FusedKind kind);

inline constexpr std::size_t kMaxEpilogueSteps = 3;

struct FusionGroup {
    FusedKind kind = FusedKind::gemm_epilogue;
    std::vector<std::size_t>
        ops;  // indices into the trace, in order; ops.front() carries the kernel
};

// The groups of two or more ops; ops in no group run alone. Deterministic, in trace order. Without
// tensor cores (16-bit GEMMs then run the FP32 kernel) no GEMM epilogue or attention is formed:
// both fused kernels are built on mma.
// tensor_cores_for(dtype): whether the chip's tensor cores run the dtype (empty: every dtype);
// GEMM epilogues and attention fuse only onto tensor-core GEMMs.
std::vector<FusionGroup> plan_gpu_fusion(const std::vector<Op>& ops, GpuFusion mode,
                                         const std::function<bool(DType)>& tensor_cores_for = {});

// Whether the fused attention kernel runs these shapes: 16-bit, head dimension d of 16, 32 or 64
// (fused_kernels.h).
bool attention_fusable(const Op& scores, const Op& scale, const Op& softmax, const Op& context);

}  // namespace accelsim::gpu
