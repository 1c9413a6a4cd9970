#include "models/gpu/fusion.h"

#include "models/gpu/fused_kernels.h"

namespace accelsim::gpu {

const char* to_string(FusedKind kind) {
    switch (kind) {
        case FusedKind::gemm_epilogue:
            return "gemm_epilogue";
        case FusedKind::residual_layernorm:
            return "residual_layernorm";
        case FusedKind::attention:
            return "attention";
    }
    return "?";
}

namespace {

bool sixteen_bit(DType t) {
    return t == DType::fp16 || t == DType::bf16;
}

std::int64_t gemm_output_elements(const Op& op) {
    const GemmShape g = op.as_gemm();
    return (op.kind == OpKind::matmul ? 1 : g.batch) * g.m * g.n;
}

// `next` reads `producer`'s output as its first input (the chain assumption) in the same dtype.
bool consumes(const Op& next, const Op& producer, std::int64_t elements) {
    return next.dtype == producer.dtype && next.elements == elements;
}

bool epilogue_step(const Op& op) {
    return op.kind == OpKind::gelu || op.kind == OpKind::relu || op.kind == OpKind::add ||
           op.kind == OpKind::mul;
}

bool residual_layernorm_at(const std::vector<Op>& ops, std::size_t i) {
    if (i + 1 >= ops.size()) return false;
    const Op& add = ops[i];
    const Op& ln = ops[i + 1];
    return add.kind == OpKind::add && ln.kind == OpKind::layernorm && sixteen_bit(add.dtype) &&
           ln.dtype == add.dtype && ln.rows * ln.cols == add.elements &&
           residual_layernorm_fusable(ln.cols);
}

}  // namespace

bool attention_fusable(const Op& scores, const Op& scale, const Op& softmax, const Op& context) {
    if (scores.kind != OpKind::bmm || scale.kind != OpKind::mul ||
        softmax.kind != OpKind::softmax || context.kind != OpKind::bmm)
        return false;
    const GemmShape q = scores.gemm, c = context.gemm;
    const std::int64_t b = q.batch, s = q.m, d = q.k;
    const bool same_dtype = sixteen_bit(scores.dtype) && scale.dtype == scores.dtype &&
                            softmax.dtype == scores.dtype && context.dtype == scores.dtype;
    return same_dtype && q.n == s && scale.elements == b * s * s && softmax.rows == b * s &&
           softmax.cols == s && c.batch == b && c.m == s && c.k == s && c.n == d &&
           attention_head_dim_supported(d);
}

std::vector<FusionGroup> plan_gpu_fusion(const std::vector<Op>& ops, GpuFusion mode,
                                         const std::function<bool(DType)>& tensor_cores_for) {
    std::vector<FusionGroup> groups;
    auto tensor_cores = [&](DType t) { return !tensor_cores_for || tensor_cores_for(t); };
    if (mode == GpuFusion::none || mode == GpuFusion::automatic) return groups;
    const bool trt = mode == GpuFusion::tensorrt_like;
    std::size_t i = 0;
    while (i < ops.size()) {
        const Op& op = ops[i];
        if (trt && tensor_cores(op.dtype) && i + 3 < ops.size() &&
            attention_fusable(op, ops[i + 1], ops[i + 2], ops[i + 3])) {
            groups.push_back({FusedKind::attention, {i, i + 1, i + 2, i + 3}});
            i += 4;
            continue;
        }
        if (trt && residual_layernorm_at(ops, i)) {
            groups.push_back({FusedKind::residual_layernorm, {i, i + 1}});
            i += 2;
            continue;
        }
        if (tensor_cores(op.dtype) && (op.kind == OpKind::matmul || op.kind == OpKind::bmm) && sixteen_bit(op.dtype)) {
            FusionGroup g{FusedKind::gemm_epilogue, {i}};
            const std::int64_t elements = gemm_output_elements(op);
            std::size_t j = i + 1;
            while (j < ops.size() && g.ops.size() <= kMaxEpilogueSteps && epilogue_step(ops[j]) &&
                   consumes(ops[j], op, elements) && !(trt && residual_layernorm_at(ops, j))) {
                g.ops.push_back(j);
                ++j;
            }
            if (g.ops.size() > 1) {
                groups.push_back(std::move(g));
                i = j;
                continue;
            }
        }
        ++i;
    }
    return groups;
}

}  // namespace accelsim::gpu
