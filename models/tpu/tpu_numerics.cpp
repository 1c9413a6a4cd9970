#include "models/tpu/tpu_numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <Eigen/Core>

namespace accelsim::tpu {

namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMajorD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double max_abs(const std::vector<float>& v) {
    // Eight independent maxima (the compiler keeps them in two vector registers) instead of one
    // chain of dependent maxss: the operands of BERT-base are ~10^8 values. The maximum is the
    // same in any order.
    constexpr std::size_t kLanes = 8;
    float lanes[kLanes] = {};
    const std::size_t n = v.size(), whole = n - n % kLanes;
    for (std::size_t i = 0; i < whole; i += kLanes)
        for (std::size_t j = 0; j < kLanes; ++j) lanes[j] = std::max(lanes[j], std::fabs(v[i + j]));
    float m = 0;
    for (std::size_t j = 0; j < kLanes; ++j) m = std::max(m, lanes[j]);
    for (std::size_t i = whole; i < n; ++i) m = std::max(m, std::fabs(v[i]));
    return m;
}

double float_gemm_tolerance(std::int64_t k, double amax, double bmax) {
    const double u = std::ldexp(1.0, -24), n = static_cast<double>(k);
    const double gamma = n * u / (1.0 - n * u);
    return 2.0 * gamma * n * amax * bmax;
}

}  // namespace

void NumericsCheck::merge(const NumericsCheck& o) {
    checked += o.checked;
    max_abs_err = std::max(max_abs_err, o.max_abs_err);
    max_rel_err = std::max(max_rel_err, o.max_rel_err);
    passed = passed && o.passed;
}

std::uint64_t op_seed(std::uint64_t seed, std::int64_t op_index) {
    // splitmix64 of (seed, index): neighbouring ops get unrelated streams.
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(op_index) + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void fill_random(std::vector<float>& out, std::int64_t n, DType dtype, std::mt19937_64& rng) {
    // The generator seeds a splitmix64 stream that yields eight int8 values or two 24-bit floats per
    // draw: validation fills ~10^8 values per BERT run, and a distribution call per value would
    // dominate its time. Each dtype has its own loop (no per-value dispatch), and bf16 rounds in
    // integer arithmetic: the same round-to-nearest-even as Eigen::bfloat16 for these finite values.
    out.resize(static_cast<std::size_t>(n));
    std::uint64_t state = rng();
    auto next = [&state]() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    const std::size_t size = out.size();
    float* dst = out.data();
    if (dtype == DType::int8) {
        std::size_t i = 0;
        while (i < size) {
            std::uint64_t bits = next();
            for (int j = 0; j < 8 && i < size; ++j, bits >>= 8)
                dst[i++] = static_cast<float>(static_cast<int>(bits & 0xFF) - 128);  // -128 .. 127
        }
        return;
    }
    constexpr float kScale = 1.0f / 8388608.0f;  // 2^-23: 24-bit integers to [-1, 1), exact in fp32
    auto uniform = [](std::uint64_t bits) {
        return static_cast<float>(static_cast<std::int32_t>(bits & 0xFFFFFF) - 8388608) * kScale;
    };
    auto to_bf16 = [](float x) {
        std::uint32_t u;
        std::memcpy(&u, &x, sizeof u);
        u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest even on the top 16 bits
        u &= 0xFFFF0000u;
        float r;
        std::memcpy(&r, &u, sizeof r);
        return r;
    };
    // Two values per draw, the low 32 bits first; an odd size uses the last draw's low half. One
    // loop per dtype (the conversion inlined), not a dtype test per value.
    const auto fill = [&](auto convert) {
        const std::size_t pairs = size / 2;
        for (std::size_t p = 0; p < pairs; ++p) {
            const std::uint64_t bits = next();
            dst[2 * p] = convert(uniform(bits));
            dst[2 * p + 1] = convert(uniform(bits >> 32));
        }
        if (size % 2) dst[size - 1] = convert(uniform(next()));
    };
    if (dtype == DType::bf16) fill(to_bf16);
    else if (dtype == DType::fp16) fill([](float x) { return static_cast<float>(fp16_t(x)); });
    else if (is_fp8(dtype)) fill([dtype](float x) { return fp8_round(x, dtype); });  // an MXU given an fp8 rate
    else fill([](float x) { return x; });
}

namespace {

// int8 and fp8: x gets the seeded fp32 values (an activation's outlier features scaled: `features`
// feature dimensions, `seed` the op's), q their quantized form; returns the scale.
double fill_quantized(std::vector<float>& q, std::vector<float>& x, std::int64_t n, DType dtype, std::mt19937_64& rng,
                      std::int64_t features = 1, const ActivationOutliers& outliers = {}, std::uint64_t seed = 0) {
    fill_random(x, n, DType::fp32, rng);
    apply_activation_outliers(x, features, outliers, seed);
    QuantizedOperand quantized = quantize_operand(x, dtype);
    q = std::move(quantized.values);
    return quantized.scale;
}

}  // namespace

GemmData random_gemm_data(const GemmShape& g, DType dtype, std::uint64_t seed, const ActivationOutliers& outliers) {
    std::mt19937_64 rng(seed);
    GemmData d;
    if (is_quantized(dtype)) {
        // A then B from the stream (two statements: the operands of * have no evaluation order).
        const double scale_a = fill_quantized(d.a, d.a_fp32, g.batch * g.m * g.k, dtype, rng, g.k, outliers, seed);
        d.output_scale = scale_a * fill_quantized(d.b, d.b_fp32, g.batch * g.k * g.n, dtype, rng);
        return d;
    }
    fill_random(d.a, g.batch * g.m * g.k, dtype, rng);
    apply_activation_outliers(d.a, g.k, outliers, seed);  // fp32: an unquantized reference's values
    fill_random(d.b, g.batch * g.k * g.n, dtype, rng);
    return d;
}

NumericsReference gemm_reference(const GemmShape& g, DType dtype, const GemmData& data) {
    NumericsReference ref;
    const double amax = max_abs(data.a), bmax = max_abs(data.b);
    const bool exact = dtype == DType::int8;
    const bool in_double = exact && g.k > 1024;  // fp32 sums of int8 products are exact up to K = 1024
    ref.tolerance = exact ? 0.0 : float_gemm_tolerance(g.k, amax, bmax);
    ref.floor = std::max(amax * bmax, 1e-30);
    const auto outputs = static_cast<std::size_t>(g.batch * g.m * g.n);
    if (in_double) ref.fp64.resize(outputs);
    else ref.fp32.resize(outputs);
    for (std::int64_t b = 0; b < g.batch; ++b) {
        Eigen::Map<const RowMajorF> a(data.a.data() + b * g.m * g.k, g.m, g.k);
        Eigen::Map<const RowMajorF> w(data.b.data() + b * g.k * g.n, g.k, g.n);
        if (in_double)
            Eigen::Map<RowMajorD>(ref.fp64.data() + b * g.m * g.n, g.m, g.n).noalias() =
                a.cast<double>() * w.cast<double>();
        else
            Eigen::Map<RowMajorF>(ref.fp32.data() + b * g.m * g.n, g.m, g.n).noalias() = a * w;
    }
    return ref;
}

namespace {

template <class Want>
NumericsCheck compare_all(const std::vector<double>& c, const std::vector<Want>& want, double tolerance,
                          double floor) {
    if (c.size() != want.size()) throw std::logic_error("tpu numerics: output and reference sizes differ");
    // The maxima stay in locals, so the loop has no stores to memory: BERT-base checks 28 M outputs.
    double max_abs_err = 0, max_rel_err = 0;
    bool passed = true;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const double w = static_cast<double>(want[i]);
        const double err = std::fabs(c[i] - w);
        max_abs_err = std::max(max_abs_err, err);
        max_rel_err = std::max(max_rel_err, err / std::max(std::fabs(w), floor));
        passed &= err <= tolerance;  // also fails on NaN
    }
    NumericsCheck check;
    check.checked = static_cast<std::int64_t>(c.size());
    check.max_abs_err = max_abs_err;
    check.max_rel_err = max_rel_err;
    check.passed = passed;
    return check;
}

}  // namespace

NumericsCheck compare_with_reference(const std::vector<double>& c, const NumericsReference& ref) {
    if (!ref.fp64.empty()) return compare_all(c, ref.fp64, ref.tolerance, ref.floor);
    return compare_all(c, ref.fp32, ref.tolerance, ref.floor);
}

// An int8/fp8 op's operands were quantized from the fp32 stream of the same seed (fill_quantized),
// so the fp32 op of that seed holds exactly the values before quantization.
std::vector<float> unquantized_gemm_reference(const GemmShape& g, std::uint64_t seed, const ActivationOutliers& outliers) {
    const GemmData d = random_gemm_data(g, DType::fp32, seed, outliers);
    return fp32_reference_gemm(g, d.a, d.b);
}

std::vector<float> unquantized_conv_reference(const Conv2dShape& s, std::uint64_t seed, const ActivationOutliers& outliers) {
    // Eigen's fp32 GEMM of the im2col lowering (the lowering only moves values, so this is the
    // fp32 convolution, summed in Eigen's order).
    const GemmData lowered = lower_conv_to_gemm(s, random_conv_data(s, DType::fp32, seed, outliers));
    return fp32_reference_gemm(s.as_gemm(), lowered.a, lowered.b);
}

NumericsCheck check_gemm(const GemmShape& g, DType dtype, const GemmData& data, const std::vector<double>& c) {
    return compare_with_reference(c, gemm_reference(g, dtype, data));
}

ConvData random_conv_data(const Conv2dShape& s, DType dtype, std::uint64_t seed, const ActivationOutliers& outliers) {
    std::mt19937_64 rng(seed);
    ConvData d;
    if (is_quantized(dtype)) {  // the input (NHWC) is the activation: its channels the features
        const double scale_input = fill_quantized(d.input, d.input_fp32, s.n * s.h * s.w * s.c, dtype, rng, s.c, outliers, seed);
        d.output_scale =
            scale_input * fill_quantized(d.filter, d.filter_fp32, s.k * s.r * s.s * (s.c / s.groups), dtype, rng);
        return d;
    }
    fill_random(d.input, s.n * s.h * s.w * s.c, dtype, rng);
    apply_activation_outliers(d.input, s.c, outliers, seed);
    fill_random(d.filter, s.k * s.r * s.s * (s.c / s.groups), dtype, rng);
    return d;
}

GemmData lower_conv_to_gemm(const Conv2dShape& s, const ConvData& data) {
    const GemmShape g = s.as_gemm();
    const std::int64_t oh = s.out_h(), ow = s.out_w(), cg = s.c / s.groups, kg = s.k / s.groups;
    GemmData out;
    out.a.assign(static_cast<std::size_t>(g.batch * g.m * g.k), 0.0f);
    out.b.assign(static_cast<std::size_t>(g.batch * g.k * g.n), 0.0f);
    for (std::int64_t grp = 0; grp < s.groups; ++grp) {
        float* a = out.a.data() + grp * g.m * g.k;
        for (std::int64_t n = 0; n < s.n; ++n)
            for (std::int64_t y = 0; y < oh; ++y)
                for (std::int64_t x = 0; x < ow; ++x) {
                    const std::int64_t m = (n * oh + y) * ow + x;
                    for (std::int64_t r = 0; r < s.r; ++r)
                        for (std::int64_t q = 0; q < s.s; ++q) {
                            const std::int64_t iy = y * s.stride_h - s.pad_h + r * s.dilation_h;
                            const std::int64_t ix = x * s.stride_w - s.pad_w + q * s.dilation_w;
                            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;  // padding: zeros
                            const float* in = data.input.data() + ((n * s.h + iy) * s.w + ix) * s.c + grp * cg;
                            float* row = a + m * g.k + (r * s.s + q) * cg;
                            std::copy(in, in + cg, row);
                        }
                }
        float* b = out.b.data() + grp * g.k * g.n;
        for (std::int64_t j = 0; j < kg; ++j)
            for (std::int64_t r = 0; r < s.r; ++r)
                for (std::int64_t q = 0; q < s.s; ++q)
                    for (std::int64_t ch = 0; ch < cg; ++ch)
                        b[((r * s.s + q) * cg + ch) * g.n + j] =
                            data.filter[static_cast<std::size_t>((((grp * kg + j) * s.r + r) * s.s + q) * cg + ch)];
    }
    return out;
}

NumericsReference conv_reference(const Conv2dShape& s, DType dtype, const ConvData& data) {
    // Direct convolution, independent of the im2col lowering, in double (exact for int8), laid
    // out as the GEMM output [group][m][j].
    NumericsReference ref;
    const GemmShape g = s.as_gemm();
    const std::int64_t oh = s.out_h(), ow = s.out_w(), cg = s.c / s.groups, kg = s.k / s.groups;
    const double amax = max_abs(data.input), bmax = max_abs(data.filter);
    ref.tolerance = dtype == DType::int8 ? 0.0 : float_gemm_tolerance(g.k, amax, bmax);
    ref.floor = std::max(amax * bmax, 1e-30);
    ref.fp64.resize(static_cast<std::size_t>(g.batch * g.m * g.n));
    for (std::int64_t n = 0; n < s.n; ++n)
        for (std::int64_t y = 0; y < oh; ++y)
            for (std::int64_t x = 0; x < ow; ++x)
                for (std::int64_t k = 0; k < s.k; ++k) {
                    const std::int64_t grp = k / kg;
                    double sum = 0;
                    for (std::int64_t r = 0; r < s.r; ++r)
                        for (std::int64_t q = 0; q < s.s; ++q) {
                            const std::int64_t iy = y * s.stride_h - s.pad_h + r * s.dilation_h;
                            const std::int64_t ix = x * s.stride_w - s.pad_w + q * s.dilation_w;
                            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                            for (std::int64_t ch = 0; ch < cg; ++ch)
                                sum += static_cast<double>(
                                           data.input[static_cast<std::size_t>(((n * s.h + iy) * s.w + ix) * s.c +
                                                                               grp * cg + ch)]) *
                                       data.filter[static_cast<std::size_t>(((k * s.r + r) * s.s + q) * cg + ch)];
                        }
                    const std::int64_t m = (n * oh + y) * ow + x;
                    ref.fp64[static_cast<std::size_t>((grp * g.m + m) * g.n + (k - grp * kg))] = sum;
                }
    return ref;
}

NumericsCheck check_conv(const Conv2dShape& s, DType dtype, const ConvData& data, const std::vector<double>& c) {
    return compare_with_reference(c, conv_reference(s, dtype, data));
}

}  // namespace accelsim::tpu
