#include "models/common/quantization.h"

#include <random>
#include <stdexcept>

#include <Eigen/Core>

namespace accelsim {

std::string quantization_scheme(DType t, Fp8Encoding encoding, std::optional<DType> b) {
    if (b && *b != t) {
        if (!is_fp8(t) || !is_fp8(*b)) throw std::logic_error("quantization_scheme: only the fp8 formats mix");
        const std::string fnuz = encoding == Fp8Encoding::fnuz ? " FNUZ" : "";
        return "A " + std::string(to_string(t)) + fnuz + ", B " + std::string(to_string(*b)) + fnuz +
               ": inputs rounded to nearest even (saturating), fp32 accumulation, fp32 output, no scaling";
    }
    if (t == DType::int8)
        return "int8 symmetric per-tensor: scale = max|x|/127, q = round_half_even(x/scale) in [-127, 127], int32 "
               "accumulation, output dequantized by scale_a*scale_b";
    if (is_fp8(t))
        return std::string(to_string(t)) +
               (encoding == Fp8Encoding::fnuz ? (t == DType::fp8_e4m3 ? " FNUZ (bias 8, max 240)" : " FNUZ (bias 16)")
                                              : "") +
               ": inputs rounded to nearest even (saturating), fp32 accumulation, fp32 output, no scaling";
    throw std::logic_error("quantization_scheme: " + std::string(to_string(t)) + " is not a quantized dtype");
}

std::vector<std::int64_t> outlier_features(std::int64_t features, const ActivationOutliers& o, std::uint64_t seed) {
    if (!o.any() || features <= 0) return {};
    const auto count = std::min<std::int64_t>(features, static_cast<std::int64_t>(std::ceil(o.fraction * static_cast<double>(features))));
    std::vector<std::int64_t> order(static_cast<std::size_t>(features));
    for (std::int64_t f = 0; f < features; ++f) order[static_cast<std::size_t>(f)] = f;
    std::mt19937_64 rng(seed ^ 0x6f75746c69657273ull);  // a stream of its own ("outliers")
    for (std::int64_t i = 0; i < count; ++i) {
        const auto j = i + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(features - i));
        std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
    }
    order.resize(static_cast<std::size_t>(count));  // at least 1: ceil of a positive fraction
    std::sort(order.begin(), order.end());
    return order;
}

void apply_activation_outliers(std::vector<float>& x, std::int64_t features, const ActivationOutliers& o, std::uint64_t seed) {
    if (!o.any()) return;
    const std::vector<std::int64_t> chosen = outlier_features(features, o, seed);
    const auto m = static_cast<float>(o.magnitude);
    for (std::size_t row = 0; row < x.size(); row += static_cast<std::size_t>(features))
        for (const std::int64_t f : chosen)
            if (row + static_cast<std::size_t>(f) < x.size()) x[row + static_cast<std::size_t>(f)] *= m;
}

float int8_symmetric_scale(const float* x, std::size_t n) {
    float m = 0;
    for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
    return m > 0 ? m / 127.0f : 1.0f;
}

void quantize_int8(const float* x, std::size_t n, float scale, float* q) {
    // std::nearbyint rounds in the current mode: round to nearest, ties to even, unless a caller
    // changed it (nothing in accelsim does).
    for (std::size_t i = 0; i < n; ++i) q[i] = std::clamp(std::nearbyint(x[i] / scale), -127.0f, 127.0f);
}

QuantizedOperand quantize_operand(const std::vector<float>& x, DType t, Fp8Encoding encoding) {
    QuantizedOperand out;
    out.values.resize(x.size());
    if (t == DType::int8) {
        const float scale = int8_symmetric_scale(x.data(), x.size());
        quantize_int8(x.data(), x.size(), scale, out.values.data());
        out.scale = scale;
    } else if (is_fp8(t)) {
        for (std::size_t i = 0; i < x.size(); ++i) out.values[i] = fp8_round(x[i], t, encoding);
    } else {
        throw std::logic_error("quantize_operand: " + std::string(to_string(t)) + " is not a quantized dtype");
    }
    return out;
}

double QuantizationError::relative_rms() const {
    if (sum_squared_reference > 0) return std::sqrt(sum_squared_error / sum_squared_reference);
    return sum_squared_error > 0 ? INFINITY : 0.0;
}

void QuantizationError::pool(const QuantizationError& op) {
    values += op.values;
    max_abs = std::max(max_abs, op.max_abs);
    sum_squared_error += op.sum_squared_error;
    sum_squared_reference += op.sum_squared_reference;
    ops += std::max<std::int64_t>(1, op.ops);
    worst_op_relative_rms = std::max(worst_op_relative_rms, op.ops > 0 ? op.worst_op_relative_rms : op.relative_rms());
}

QuantizationError quantization_error(DType t, const std::vector<double>& outputs, const std::vector<float>& reference,
                                     double output_scale, Fp8Encoding encoding) {
    if (outputs.size() != reference.size())
        throw std::logic_error("quantization_error: output and reference sizes differ");
    QuantizationError e;
    e.dtype = t;
    e.encoding = encoding;
    for (std::size_t i = 0; i < outputs.size(); ++i)
        e.add(outputs[i] * output_scale, static_cast<double>(reference[i]));
    return e;
}

std::vector<float> fp32_reference_gemm(const GemmShape& g, const std::vector<float>& a, const std::vector<float>& b) {
    using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    if (a.size() != static_cast<std::size_t>(g.batch * g.m * g.k) || b.size() != static_cast<std::size_t>(g.batch * g.k * g.n))
        throw std::logic_error("fp32_reference_gemm: operand sizes do not match the shape");
    std::vector<float> c(static_cast<std::size_t>(g.batch * g.m * g.n));
    for (std::int64_t p = 0; p < g.batch; ++p)
        Eigen::Map<RowMajorF>(c.data() + p * g.m * g.n, g.m, g.n).noalias() =
            Eigen::Map<const RowMajorF>(a.data() + p * g.m * g.k, g.m, g.k) *
            Eigen::Map<const RowMajorF>(b.data() + p * g.k * g.n, g.k, g.n);
    return c;
}

}  // namespace accelsim
