#pragma once
// Quantization error (--validate on int8 and fp8 ops; docs/outputs.md "Quantization error"): what
// the low-precision datapath's output costs in accuracy against fp32 arithmetic on the values
// before quantization.
//
// The seeded operands are fp32 values uniform in [-1, 1). The quantized run gets:
//   int8: symmetric per-tensor quantization, scale s = max|x| / 127 (1 for an all-zero tensor),
//         q = x / s in fp32 rounded to nearest, ties to even, clamped to [-127, 127]; the
//         datapath accumulates q_a q_b in int32 and the output is dequantized as s_a s_b acc.
//   fp8:  each value rounded to the fp8 format (nearest, ties to even, saturating; dtype.h),
//         fp32 accumulation, the fp32 accumulator is the output (no scaling factors).
// The reference is Eigen's fp32 GEMM of the unquantized values. Its own rounding error (about
// K 2^-24 relative) is far below either format's (int8: 2^-8 of the range; e4m3: 2^-4 relative).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/common/dtype.h"
#include "models/common/op.h"

namespace accelsim {

// Whether --validate measures a quantization error for ops of this dtype.
constexpr bool is_quantized(DType t) { return t == DType::int8 || is_fp8(t); }

// One line naming the scheme (the JSON's "scheme").
// b: B's dtype of a GEMM whose operands are of two fp8 formats (Op::b_dtype).
std::string quantization_scheme(DType t, Fp8Encoding encoding = Fp8Encoding::ocp, std::optional<DType> b = std::nullopt);

// int8: the per-tensor scale of n values (max|x| / 127; 1 when every value is 0).
float int8_symmetric_scale(const float* x, std::size_t n);
// int8: round_half_even(x / scale), clamped to [-127, 127], as floats (the datapaths' operand form).
void quantize_int8(const float* x, std::size_t n, float scale, float* q);

// Activation outliers (config keys activation_outlier_fraction, activation_outlier_magnitude;
// docs/outputs.md "Outliers"): a fraction of an activation's feature dimensions whose values are
// `magnitude` times the others', the systematic outlier features of transformers' hidden states
// (Dettmers et al. 2022, "LLM.int8()", arXiv 2208.07339). Applied to the activation operand of
// quantized (int8, fp8) GEMMs and convolutions (A's K columns, a convolution input's channels),
// before quantization and in the unquantized reference alike, so that the quantization error shows
// what they cost: a per-tensor int8 scale set by the outliers leaves the other values few levels.
struct ActivationOutliers {
    double fraction = 0;     // of the feature dimensions, in [0, 1]; 0: none
    double magnitude = 20;   // their values' factor
    bool any() const { return fraction > 0; }
};
// The outlier features of an activation with `features` feature dimensions: ceil(fraction x
// features) of them (at least one when fraction > 0), the first of a permutation drawn from
// `seed` (a partial Fisher-Yates shuffle on mt19937_64), in increasing order.
std::vector<std::int64_t> outlier_features(std::int64_t features, const ActivationOutliers& o, std::uint64_t seed);
// Multiplies the outlier features' values of x (element e is of feature e % features) by
// o.magnitude; nothing when !o.any().
void apply_activation_outliers(std::vector<float>& x, std::int64_t features, const ActivationOutliers& o, std::uint64_t seed);

// A tensor's quantized form, as the datapath gets it, and what its output is multiplied by.
struct QuantizedOperand {
    std::vector<float> values;  // int8 integers or fp8 values, as floats
    double scale = 1;           // int8: s; fp8: 1
};
// fp8: rounded in `encoding` (the chip's: OCP, or FNUZ on CDNA3).
QuantizedOperand quantize_operand(const std::vector<float>& x, DType t, Fp8Encoding encoding = Fp8Encoding::ocp);

// The error of a quantized op's outputs against the fp32 reference, or of several ops pooled.
struct QuantizationError {
    DType dtype = DType::int8;  // of the op (pooled: unused)
    std::optional<DType> b_dtype;  // B's where a GEMM's operands mix fp8 formats
    Fp8Encoding encoding = Fp8Encoding::ocp;  // fp8: the chip's encoding (mi300x: FNUZ)
    // What the op computed, where the dtype's wording (quantization_scheme, written for GEMMs) does
    // not fit it; empty: that wording.
    std::string scheme;
    std::int64_t values = 0;
    double max_abs = 0;
    double sum_squared_error = 0, sum_squared_reference = 0;
    // Pooled only: how many ops, and the largest relative RMS of one op.
    std::int64_t ops = 0;
    double worst_op_relative_rms = 0;

    // ||y_q - y_ref||_2 / ||y_ref||_2 (0 when the reference is all zeros and so is the error).
    double relative_rms() const;
    // Adds one output value.
    void add(double quantized, double reference) {
        const double e = quantized - reference;
        max_abs = std::max(max_abs, std::fabs(e));
        sum_squared_error += e * e;
        sum_squared_reference += reference * reference;
        ++values;
    }
    // Pools one op's error into a run's.
    void pool(const QuantizationError& op);
};

// Compares the outputs, dequantized by output_scale (int8: scale_a scale_b; 1 for outputs already
// in real units), with the reference, value by value.
QuantizationError quantization_error(DType t, const std::vector<double>& outputs, const std::vector<float>& reference,
                                     double output_scale = 1, Fp8Encoding encoding = Fp8Encoding::ocp);

// Eigen's fp32 GEMM, batch by batch: a [batch][m][k] times b [batch][k][n] -> [batch][m][n].
std::vector<float> fp32_reference_gemm(const GemmShape& g, const std::vector<float>& a, const std::vector<float>& b);

}  // namespace accelsim
