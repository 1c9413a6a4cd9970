#pragma once
// Validation data and reference checks of the TPU chip (--validate): seeded random operands that
// are exactly representable in the op's dtype, and comparisons of the chip's outputs with
// references computed independently (Eigen GEMMs, a direct convolution loop, std:: math).
//
// Tolerance for float GEMMs (docs/tpu.md, "Numerics"): an output is a sum of K products; the MXU
// adds them in fp32 (bf16/fp16 products are exact in fp32), so any order of additions has error
// at most gamma_K * sum|a_k b_k| with gamma_K = K u / (1 - K u), u = 2^-24 (Higham, Accuracy and
// Stability of Numerical Algorithms, eq. 3.4-3.5). The fp32 Eigen reference has the same bound,
// and sum|a_k b_k| <= K max|a| max|b|, so |chip - ref| <= 2 gamma_K K max|a| max|b|.
// int8 is compared exactly (int32 accumulation; the reference is exact in fp32 while
// K * 128 * 128 <= 2^24, i.e. K <= 1024, and runs in double beyond).
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "models/common/dtype.h"
#include "models/common/op.h"
#include "models/common/quantization.h"

namespace accelsim::tpu {

struct NumericsCheck {
    std::int64_t checked = 0;
    double max_abs_err = 0, max_rel_err = 0;
    bool passed = true;
    std::optional<QuantizationError> quantization;  // int8 and fp8 GEMM-like ops
    void merge(const NumericsCheck& o);
};

// Seed of op number `op_index` (0-based position in the trace) under config seed `seed`.
std::uint64_t op_seed(std::uint64_t seed, std::int64_t op_index);

// n values exactly representable in dtype: int8 integers in [-128, 127]; floats uniform in
// [-1, 1) rounded to the dtype.
void fill_random(std::vector<float>& out, std::int64_t n, DType dtype, std::mt19937_64& rng);

struct GemmData {
    std::vector<float> a;  // [batch][m][k]
    std::vector<float> b;  // [batch][k][n]
    // int8 and fp8 (quantization.h): the seeded fp32 values a and b were quantized from, and what
    // the datapath's outputs are multiplied by to be real values again (int8: scale_a scale_b).
    std::vector<float> a_fp32, b_fp32;
    double output_scale = 1;
};
// Floats: fill_random's values. int8 and fp8: fp32 values uniform in [-1, 1) (fill_random's fp32
// stream), quantized per tensor (quantize_operand); fp8 operands are the same as fill_random's.
// outliers: scale the activation's (A's) outlier features (quantization.h), as the int8/fp8 ops of
// a config with activation outliers draw them; their fp32 reference draws them alike.
GemmData random_gemm_data(const GemmShape& g, DType dtype, std::uint64_t seed, const ActivationOutliers& outliers = {});

// What a check compares the chip's output with: reference values laid out as the output, the
// bound each output's error must meet, and the floor of the relative error's denominator (the
// magnitude of one product, max|a| max|b|, so outputs that cancel to almost zero stay meaningful).
struct NumericsReference {
    std::vector<float> fp32;   // Eigen's fp32 GEMM (floats; int8 up to K = 1024), or empty
    std::vector<double> fp64;  // int8 beyond K = 1024 and the direct convolution, or empty
    double tolerance = 0, floor = 0;
};
NumericsCheck compare_with_reference(const std::vector<double>& c, const NumericsReference& ref);
// Eigen's fp32 GEMM of the values random_gemm_data / random_conv_data quantized for `seed`, drawn
// again from the same stream (so --validate need not hold them while the op runs); a convolution's
// laid out as its GEMM output [group][m][j].
std::vector<float> unquantized_gemm_reference(const GemmShape& g, std::uint64_t seed, const ActivationOutliers& outliers = {});
std::vector<float> unquantized_conv_reference(const Conv2dShape& s, std::uint64_t seed, const ActivationOutliers& outliers = {});

// The Eigen reference of a GEMM ([batch][m][n]): fp32, or double for int8 beyond K = 1024.
NumericsReference gemm_reference(const GemmShape& g, DType dtype, const GemmData& data);
// c is [batch][m][n] as the chip produced it: compare_with_reference(c, gemm_reference(...)).
NumericsCheck check_gemm(const GemmShape& g, DType dtype, const GemmData& data, const std::vector<double>& c);

struct ConvData {
    std::vector<float> input;   // NHWC [n][h][w][c]
    std::vector<float> filter;  // [k][r][s][c/groups]
    // int8 and fp8, as GemmData's: the values before quantization, the output's dequantizing scale.
    std::vector<float> input_fp32, filter_fp32;
    double output_scale = 1;
};
ConvData random_conv_data(const Conv2dShape& s, DType dtype, std::uint64_t seed, const ActivationOutliers& outliers = {});
// The implicit-GEMM lowering (docs/tpu.md): per group g, A[g][m][kk] with m = (n, oh, ow) and
// kk = (r, s, c) (zeros where the window reads padding), B[g][kk][j] = filter[g*K/groups + j][r][s][c].
GemmData lower_conv_to_gemm(const Conv2dShape& s, const ConvData& data);
// A direct convolution loop in double, laid out as the GEMM output [group][m][j].
NumericsReference conv_reference(const Conv2dShape& s, DType dtype, const ConvData& data);
// c is the GEMM output [group][m][j]; compared with conv_reference.
NumericsCheck check_conv(const Conv2dShape& s, DType dtype, const ConvData& data, const std::vector<double>& c);

}  // namespace accelsim::tpu
