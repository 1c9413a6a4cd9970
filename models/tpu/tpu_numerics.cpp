#include "models/tpu/tpu_numerics.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

namespace accelsim::tpu {

namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMajorD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double max_abs(const std::vector<float>& v) {
    float m = 0;
    for (float x : v) m = std::max(m, std::fabs(x));
    return m;
}

// Folds one element's comparison into the check. `floor` keeps the relative error meaningful for
// outputs that cancel to almost zero: it is the magnitude of one product, max|a| max|b|.
void record(NumericsCheck& check, double got, double want, double tolerance, double floor) {
    const double err = std::fabs(got - want);
    ++check.checked;
    check.max_abs_err = std::max(check.max_abs_err, err);
    check.max_rel_err = std::max(check.max_rel_err, err / std::max(std::fabs(want), floor));
    if (!(err <= tolerance)) check.passed = false;  // also fails on NaN
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
    // dominate its time.
    out.resize(static_cast<std::size_t>(n));
    std::uint64_t state = rng();
    auto next = [&state]() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    std::size_t i = 0;
    const std::size_t size = out.size();
    if (dtype == DType::int8) {
        while (i < size) {
            std::uint64_t bits = next();
            for (int j = 0; j < 8 && i < size; ++j, bits >>= 8)
                out[i++] = static_cast<float>(static_cast<int>(bits & 0xFF) - 128);  // -128 .. 127
        }
        return;
    }
    constexpr float kScale = 1.0f / 8388608.0f;  // 2^-23: 24-bit integers to [-1, 1), exact in fp32
    while (i < size) {
        std::uint64_t bits = next();
        for (int j = 0; j < 2 && i < size; ++j, bits >>= 32) {
            const float x = static_cast<float>(static_cast<std::int32_t>(bits & 0xFFFFFF) - 8388608) * kScale;
            if (dtype == DType::bf16) out[i++] = static_cast<float>(bf16_t(x));
            else if (dtype == DType::fp16) out[i++] = static_cast<float>(fp16_t(x));
            else if (is_fp8(dtype)) out[i++] = fp8_round(x, dtype);  // a config that gives the MXU an fp8 rate
            else out[i++] = x;
        }
    }
}

GemmData random_gemm_data(const GemmShape& g, DType dtype, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    GemmData d;
    fill_random(d.a, g.batch * g.m * g.k, dtype, rng);
    fill_random(d.b, g.batch * g.k * g.n, dtype, rng);
    return d;
}

NumericsCheck check_gemm(const GemmShape& g, DType dtype, const GemmData& data, const std::vector<double>& c) {
    NumericsCheck check;
    const double amax = max_abs(data.a), bmax = max_abs(data.b);
    const bool exact = dtype == DType::int8;
    const bool in_double = exact && g.k > 1024;  // fp32 sums of int8 products are exact up to K = 1024
    const double tolerance = exact ? 0.0 : float_gemm_tolerance(g.k, amax, bmax);
    const double floor = std::max(amax * bmax, 1e-30);
    RowMajorF ref_f;
    RowMajorD ref_d;
    for (std::int64_t b = 0; b < g.batch; ++b) {
        Eigen::Map<const RowMajorF> a(data.a.data() + b * g.m * g.k, g.m, g.k);
        Eigen::Map<const RowMajorF> w(data.b.data() + b * g.k * g.n, g.k, g.n);
        if (in_double) ref_d.noalias() = a.cast<double>() * w.cast<double>();
        else ref_f.noalias() = a * w;
        const double* got = c.data() + b * g.m * g.n;
        for (std::int64_t i = 0; i < g.m; ++i)
            for (std::int64_t j = 0; j < g.n; ++j) {
                const double want = in_double ? ref_d(i, j) : static_cast<double>(ref_f(i, j));
                record(check, got[i * g.n + j], want, tolerance, floor);
            }
    }
    return check;
}

ConvData random_conv_data(const Conv2dShape& s, DType dtype, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    ConvData d;
    fill_random(d.input, s.n * s.h * s.w * s.c, dtype, rng);
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

NumericsCheck check_conv(const Conv2dShape& s, DType dtype, const ConvData& data, const std::vector<double>& c) {
    // Direct convolution, independent of the im2col lowering, in double (exact for int8).
    NumericsCheck check;
    const GemmShape g = s.as_gemm();
    const std::int64_t oh = s.out_h(), ow = s.out_w(), cg = s.c / s.groups, kg = s.k / s.groups;
    const double amax = max_abs(data.input), bmax = max_abs(data.filter);
    const double tolerance = dtype == DType::int8 ? 0.0 : float_gemm_tolerance(g.k, amax, bmax);
    const double floor = std::max(amax * bmax, 1e-30);
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
                    record(check, c[static_cast<std::size_t>((grp * g.m + m) * g.n + (k - grp * kg))], sum,
                           tolerance, floor);
                }
    return check;
}

}  // namespace accelsim::tpu
