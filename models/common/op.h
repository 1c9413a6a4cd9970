#pragma once
// The architecture-neutral operator: what a trace line says, before any chip lowers it.
// Both chip families consume it; sim/trace produces it.
#include <cstdint>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

#include "models/common/dtype.h"

namespace accelsim {

enum class OpKind : std::uint8_t { matmul, bmm, conv2d, softmax, layernorm, gelu, relu, add, mul, copy, pool, kernel };

std::string_view to_string(OpKind k);
std::optional<OpKind> parse_op_kind(std::string_view s);
bool is_gemm_like(OpKind k);     // matmul, bmm, conv2d: run on MXUs / tensor cores
bool is_elementwise(OpKind k);   // gelu, relu, add, mul, copy

// C[batch][m][n] = A[batch][m][k] * B[batch][k][n]; for matmul batch == 1 and B is the weights.
struct GemmShape {
    std::int64_t batch = 1, m = 0, n = 0, k = 0;
    std::int64_t macs() const { return batch * m * n * k; }
    bool operator==(const GemmShape& o) const {
        return batch == o.batch && m == o.m && n == o.n && k == o.k;
    }
};

// NHWC input [n][h][w][c], weights [k][r][s][c/groups], output [n][out_h][out_w][k].
struct Conv2dShape {
    std::int64_t n = 1, h = 0, w = 0, c = 0, k = 0, r = 0, s = 0;
    std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
    std::int64_t groups = 1;
    // floor((H + 2P - D(R-1) - 1) / S) + 1, as in PyTorch / cuDNN; <= 0 means the shape is invalid.
    std::int64_t out_h() const { return (h + 2 * pad_h - dilation_h * (r - 1) - 1) / stride_h + 1; }
    std::int64_t out_w() const { return (w + 2 * pad_w - dilation_w * (s - 1) - 1) / stride_w + 1; }
    // Implicit-GEMM (im2col) view: one GEMM per group with
    // M = N*OH*OW, N = K/groups, K = (C/groups)*R*S, batch = groups.
    GemmShape as_gemm() const;
};

enum class PoolMode : std::uint8_t { max, avg };

// 2-D max or average pooling, NHWC input [n][h][w][c] -> output [n][out_h][out_w][c]; an r x s
// window (dilated), moved by the stride over the input padded by pad on both sides of each axis.
// A global pool has r = h, s = w, stride 1 and no padding (output 1 x 1).
struct PoolShape {
    std::int64_t n = 1, h = 0, w = 0, c = 0, r = 1, s = 1;
    std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
    PoolMode mode = PoolMode::max;
    bool ceil_mode = false;  // output size rounded up (ONNX and PyTorch ceil_mode)
    bool count_pad = false;  // avg: padded positions count in the divisor (count_include_pad)
    bool global = false;     // written as global=1 (r, s are then h, w)
    // ONNX / PyTorch: floor or ceil of (H + 2P - D(R-1) - 1) / S, plus 1; with ceil_mode, a last
    // window that would start in the bottom padding is dropped (PyTorch's pooling_output_shape,
    // ONNX's reference since opset 19). <= 0 means the shape is invalid (op_checks says why).
    std::int64_t out_h() const;
    std::int64_t out_w() const;
    std::int64_t window() const { return r * s; }
};

// Outputs along one axis of a window of `kernel` (dilated) moved by `stride` over `size` + `total_pad`
// positions (the pad split evenly, the odd one after): floor((size + total_pad - D(K-1) - 1) / S) + 1,
// or with ceil_mode rounded up, a last window that would start in the trailing padding dropped
// (PyTorch's pooling_output_shape). 0 when the window does not fit.
std::int64_t window_output_size(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t total_pad,
                                std::int64_t dilation, bool ceil_mode);

// A kernel launch for SIMT chips: program file, grid and block dimensions, argument words.
struct KernelLaunch {
    std::string file;
    std::int64_t grid[3] = {1, 1, 1};
    std::int64_t block[3] = {1, 1, 1};
    std::vector<std::string> args;  // as written in the trace; the kernel loader interprets them
};

struct Op {
    OpKind kind = OpKind::matmul;
    std::string name;
    DType dtype = DType::bf16;
    // matmul, bmm: B's dtype where it differs from dtype, A's (fp8 only: fp8_e4m3 x fp8_e5m2, as
    // Transformer Engine's hybrid recipe multiplies e5m2 gradients by e4m3 weights or activations).
    std::optional<DType> b_dtype;
    GemmShape gemm;               // matmul, bmm
    Conv2dShape conv;             // conv2d
    PoolShape pool;               // pool
    std::int64_t rows = 0, cols = 0;  // softmax, layernorm: reduce over cols, rows independent
    std::int64_t elements = 0;    // gelu, relu, add, mul, copy
    KernelLaunch kernel;          // kernel
    std::string file;             // where the op was read from, for error messages
    int line = 0;

    DType operand_b_dtype() const { return b_dtype.value_or(dtype); }
    // Sets b_dtype when an imported GEMM's B is in the other fp8 format than its A (dtype); any
    // other pair leaves the op in A's dtype (the importers' rule; a trace line says b_dtype itself).
    void set_b_dtype_if_mixed(DType b) {
        if (is_fp8(dtype) && is_fp8(b) && b != dtype) b_dtype = b;
    }

    // Multiply-accumulates of the GEMM-like part (0 for other ops).
    std::int64_t macs() const;
    // Floating-point (or integer) operations: 2 per MAC, plus the per-element costs documented in
    // docs/roofline.md for vector ops.
    std::int64_t flops() const;
    // The GEMM this op is (matmul, bmm, conv2d as implicit GEMM); batch*m*n*k == macs().
    GemmShape as_gemm() const;
    // Compulsory traffic: every input read once, every output written once.
    std::int64_t input_bytes() const;   // activations (and second operands of add/mul)
    std::int64_t weight_bytes() const;  // matmul B, conv filters, layernorm gamma/beta
    std::int64_t output_bytes() const;
    std::int64_t compulsory_bytes() const { return input_bytes() + weight_bytes() + output_bytes(); }
    // Elements a vector unit touches (outputs of vector ops).
    std::int64_t vector_elements() const;
    // Vector-unit operations per element for vector ops (documented in docs/roofline.md); pool:
    // one max or add per window element of each output.
    std::int64_t vector_ops_per_element() const;
};

}  // namespace accelsim
