#include "models/common/dtype.h"

#include <cmath>
#include <stdexcept>

namespace accelsim {

std::optional<DType> parse_operand_dtype(std::string_view s) {
    for (const DType t : kOperandDTypes)
        if (to_string(t) == s) return t;
    return std::nullopt;
}

namespace {

struct Fp8Layout {
    int mantissa_bits, bias;
    bool has_infinity;  // OCP e5m2; OCP e4m3 spends S.1111.000-110 on normals instead
    bool fnuz;          // one NaN (0x80), no negative zero, every other pattern finite
};

Fp8Layout fp8_layout(DType format, Fp8Encoding encoding) {
    const bool fnuz = encoding == Fp8Encoding::fnuz;
    if (format == DType::fp8_e4m3) return {3, fnuz ? 8 : 7, false, fnuz};
    if (format == DType::fp8_e5m2) return {2, fnuz ? 16 : 15, !fnuz, fnuz};
    throw std::invalid_argument("fp8_encode/decode: " + std::string(to_string(format)) + " is not an fp8 format");
}

}  // namespace

std::uint8_t fp8_encode(float value, DType format, Fp8Overflow overflow, Fp8Encoding encoding) {
    const Fp8Layout f = fp8_layout(format, encoding);
    const std::uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
    const std::uint8_t zero = f.fnuz ? 0x00 : sign;  // FNUZ has no negative zero
    const std::uint8_t nan = f.fnuz ? 0x80 : sign | 0x7F;  // OCP e4m3: S.1111.111; e5m2: S.11111.11
    const std::uint8_t max_bits = f.fnuz ? 0x7F : f.has_infinity ? 0x7B : 0x7E;
    const std::uint8_t beyond = overflow == Fp8Overflow::saturate ? static_cast<std::uint8_t>(sign | max_bits)
                                : f.has_infinity                   ? static_cast<std::uint8_t>(sign | 0x7C)
                                                                   : nan;
    if (std::isnan(value)) return nan;
    if (std::isinf(value)) return beyond;
    const double a = std::fabs(static_cast<double>(value));
    if (a == 0) return zero;
    // The quantum (ulp) at a's binade, never below the subnormal quantum 2^(1 - bias - m).
    const int min_exponent = 1 - f.bias;
    int e = std::ilogb(a);
    if (e < min_exponent) e = min_exponent;
    const double quantum = std::ldexp(1.0, e - f.mantissa_bits);
    const double scaled = a / quantum;  // exact: a power-of-two scaling of an fp32 value
    double units = std::floor(scaled);
    const double rest = scaled - units;
    if (rest > 0.5 || (rest == 0.5 && std::fmod(units, 2.0) != 0)) units += 1;  // nearest, ties to even
    const double rounded = units * quantum;
    if (rounded > static_cast<double>(fp8_max(format, encoding))) return beyond;
    if (rounded == 0) return zero;  // underflow to zero (OCP: signed)
    const int re = std::ilogb(rounded);
    if (re < min_exponent) {  // subnormal: exponent field 0, value = mantissa x 2^(1 - bias - m)
        const auto mantissa = static_cast<int>(rounded / std::ldexp(1.0, min_exponent - f.mantissa_bits));
        return static_cast<std::uint8_t>(sign | mantissa);
    }
    const auto mantissa =
        static_cast<int>(rounded / std::ldexp(1.0, re - f.mantissa_bits)) - (1 << f.mantissa_bits);
    return static_cast<std::uint8_t>(sign | ((re + f.bias) << f.mantissa_bits) | mantissa);
}

float fp8_decode(std::uint8_t bits, DType format, Fp8Encoding encoding) {
    const Fp8Layout f = fp8_layout(format, encoding);
    if (f.fnuz && bits == 0x80) return NAN;
    const float sign = (bits & 0x80) ? -1.0f : 1.0f;
    const int exponent_field = (bits & 0x7F) >> f.mantissa_bits;
    const int mantissa = bits & ((1 << f.mantissa_bits) - 1);
    const int top = (1 << (7 - f.mantissa_bits)) - 1;  // the all-ones exponent field
    if (f.has_infinity && exponent_field == top)
        return mantissa == 0 ? sign * INFINITY : NAN;
    if (!f.fnuz && !f.has_infinity && exponent_field == top && mantissa == (1 << f.mantissa_bits) - 1) return NAN;
    if (exponent_field == 0) return sign * std::ldexp(static_cast<float>(mantissa), 1 - f.bias - f.mantissa_bits);
    return sign * std::ldexp(static_cast<float>(mantissa + (1 << f.mantissa_bits)),
                             exponent_field - f.bias - f.mantissa_bits);
}

}  // namespace accelsim
