#include "models/common/op.h"

#include "models/common/op_table.h"

namespace accelsim {

std::string_view to_string(OpKind k) { return op_info(k).name; }

std::optional<OpKind> parse_op_kind(std::string_view s) {
    for (const OpKindInfo& info : op_kinds())
        if (info.name == s) return info.kind;
    return std::nullopt;
}

bool is_gemm_like(OpKind k) {
    const OpLayout l = op_info(k).layout;
    return l == OpLayout::gemm || l == OpLayout::conv2d;
}

bool is_elementwise(OpKind k) { return op_info(k).layout == OpLayout::elements; }

GemmShape Conv2dShape::as_gemm() const {
    GemmShape g;
    g.batch = groups;
    g.m = n * out_h() * out_w();
    g.n = k / groups;
    g.k = (c / groups) * r * s;
    return g;
}

std::int64_t window_output_size(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t total_pad,
                                std::int64_t dilation, bool ceil_mode) {
    const std::int64_t numerator = size + total_pad - dilation * (kernel - 1) - 1;
    if (numerator < 0 || stride <= 0) return 0;
    std::int64_t out = (numerator + (ceil_mode ? stride - 1 : 0)) / stride + 1;
    if (ceil_mode && (out - 1) * stride >= size + total_pad / 2) --out;
    return out;
}

std::int64_t PoolShape::out_h() const { return window_output_size(h, r, stride_h, 2 * pad_h, dilation_h, ceil_mode); }
std::int64_t PoolShape::out_w() const { return window_output_size(w, s, stride_w, 2 * pad_w, dilation_w, ceil_mode); }

GemmShape Op::as_gemm() const {
    switch (op_info(kind).layout) {
        case OpLayout::gemm: return gemm;
        case OpLayout::conv2d: return conv.as_gemm();
        default: return GemmShape{0, 0, 0, 0};
    }
}

std::int64_t Op::macs() const { return is_gemm_like(kind) ? as_gemm().macs() : 0; }

std::int64_t Op::vector_elements() const {
    switch (op_info(kind).layout) {
        case OpLayout::rows_cols: return rows * cols;
        case OpLayout::elements: return elements;
        case OpLayout::pool: return pool.n * pool.out_h() * pool.out_w() * pool.c;
        default: return 0;
    }
}

std::int64_t Op::vector_ops_per_element() const {
    return op_info(kind).layout == OpLayout::pool ? pool.window() : op_info(kind).vector_ops_per_element;
}

std::int64_t Op::flops() const {
    if (is_gemm_like(kind)) return 2 * macs();
    return vector_elements() * vector_ops_per_element();
}

std::int64_t Op::input_bytes() const {
    const std::int64_t b = bytes_of(dtype);
    switch (op_info(kind).layout) {
        case OpLayout::gemm: return gemm.batch * gemm.m * gemm.k * b;
        case OpLayout::conv2d: return conv.n * conv.h * conv.w * conv.c * b;
        case OpLayout::rows_cols:
        case OpLayout::elements: return vector_elements() * op_info(kind).vector_inputs * b;
        case OpLayout::pool: return pool.n * pool.h * pool.w * pool.c * b;
        case OpLayout::kernel: return 0;
    }
    return 0;
}

std::int64_t Op::weight_bytes() const {
    const std::int64_t b = bytes_of(dtype);
    switch (op_info(kind).layout) {
        case OpLayout::gemm: return gemm.batch * gemm.k * gemm.n * b;
        case OpLayout::conv2d: return conv.k * (conv.c / conv.groups) * conv.r * conv.s * b;
        case OpLayout::rows_cols: return op_info(kind).params_per_column * cols * b;
        default: return 0;
    }
}

std::int64_t Op::output_bytes() const {
    // Outputs are stored in the operand dtype (int8 results are requantized on the way out).
    const std::int64_t b = bytes_of(dtype);
    switch (op_info(kind).layout) {
        case OpLayout::gemm: return gemm.batch * gemm.m * gemm.n * b;
        case OpLayout::conv2d: return conv.n * conv.out_h() * conv.out_w() * conv.k * b;
        case OpLayout::rows_cols:
        case OpLayout::elements:
        case OpLayout::pool: return vector_elements() * b;
        case OpLayout::kernel: return 0;
    }
    return 0;
}

}  // namespace accelsim
