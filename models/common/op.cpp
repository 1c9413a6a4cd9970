#include "models/common/op.h"

#include <array>

namespace accelsim {

namespace {
constexpr std::array<std::string_view, 10> kOpNames = {
    "matmul", "bmm", "conv2d", "softmax", "layernorm", "gelu", "relu", "add", "mul", "kernel"};
}

std::string_view to_string(OpKind k) { return kOpNames[static_cast<std::size_t>(k)]; }

std::optional<OpKind> parse_op_kind(std::string_view s) {
    for (std::size_t i = 0; i < kOpNames.size(); ++i)
        if (kOpNames[i] == s) return static_cast<OpKind>(i);
    return std::nullopt;
}

bool is_gemm_like(OpKind k) {
    return k == OpKind::matmul || k == OpKind::bmm || k == OpKind::conv2d;
}

bool is_elementwise(OpKind k) {
    return k == OpKind::gelu || k == OpKind::relu || k == OpKind::add || k == OpKind::mul;
}

GemmShape Conv2dShape::as_gemm() const {
    GemmShape g;
    g.batch = groups;
    g.m = n * out_h() * out_w();
    g.n = k / groups;
    g.k = (c / groups) * r * s;
    return g;
}

GemmShape Op::as_gemm() const {
    switch (kind) {
        case OpKind::matmul:
        case OpKind::bmm: return gemm;
        case OpKind::conv2d: return conv.as_gemm();
        default: return GemmShape{0, 0, 0, 0};
    }
}

std::int64_t Op::macs() const { return is_gemm_like(kind) ? as_gemm().macs() : 0; }

std::int64_t Op::vector_elements() const {
    switch (kind) {
        case OpKind::softmax:
        case OpKind::layernorm: return rows * cols;
        case OpKind::gelu:
        case OpKind::relu:
        case OpKind::add:
        case OpKind::mul: return elements;
        default: return 0;
    }
}

std::int64_t Op::vector_ops_per_element() const {
    switch (kind) {
        // max, subtract, exp, sum, scale by the reciprocal
        case OpKind::softmax: return 5;
        // mean (sum), subtract, square, sum, scale by rsqrt, multiply gamma, add beta
        case OpKind::layernorm: return 7;
        // tanh approximation: x^3, fma, scale, tanh, add, multiply, multiply
        case OpKind::gelu: return 7;
        case OpKind::relu:
        case OpKind::add:
        case OpKind::mul: return 1;
        default: return 0;
    }
}

std::int64_t Op::flops() const {
    if (is_gemm_like(kind)) return 2 * macs();
    return vector_elements() * vector_ops_per_element();
}

std::int64_t Op::input_bytes() const {
    const std::int64_t b = bytes_of(dtype);
    switch (kind) {
        case OpKind::matmul:
        case OpKind::bmm: return gemm.batch * gemm.m * gemm.k * b;
        case OpKind::conv2d: return conv.n * conv.h * conv.w * conv.c * b;
        case OpKind::softmax:
        case OpKind::layernorm: return rows * cols * b;
        case OpKind::gelu:
        case OpKind::relu: return elements * b;
        case OpKind::add:
        case OpKind::mul: return 2 * elements * b;
        case OpKind::kernel: return 0;
    }
    return 0;
}

std::int64_t Op::weight_bytes() const {
    const std::int64_t b = bytes_of(dtype);
    switch (kind) {
        case OpKind::matmul:
        case OpKind::bmm: return gemm.batch * gemm.k * gemm.n * b;
        case OpKind::conv2d: return conv.k * (conv.c / conv.groups) * conv.r * conv.s * b;
        case OpKind::layernorm: return 2 * cols * b;  // gamma and beta
        default: return 0;
    }
}

std::int64_t Op::output_bytes() const {
    // Outputs are stored in the operand dtype (int8 results are requantized on the way out).
    const std::int64_t b = bytes_of(dtype);
    switch (kind) {
        case OpKind::matmul:
        case OpKind::bmm: return gemm.batch * gemm.m * gemm.n * b;
        case OpKind::conv2d: return conv.n * conv.out_h() * conv.out_w() * conv.k * b;
        case OpKind::softmax:
        case OpKind::layernorm: return rows * cols * b;
        case OpKind::gelu:
        case OpKind::relu:
        case OpKind::add:
        case OpKind::mul: return elements * b;
        case OpKind::kernel: return 0;
    }
    return 0;
}

}  // namespace accelsim
