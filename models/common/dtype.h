#pragma once
// Element types the datapaths compute in. fp16 and bf16 use Eigen's bit-exact
// round-to-nearest-even implementations; Eigen has no 8-bit floats, so the two fp8 formats
// (fp8_e4m3, fp8_e5m2; docs/trace-format.md "fp8") are encoded and decoded here.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "models/common/enum_names.h"

namespace accelsim {

enum class DType : std::uint8_t { int8, fp16, bf16, fp32, int32, fp8_e4m3, fp8_e5m2 };

using fp16_t = Eigen::half;
using bf16_t = Eigen::bfloat16;

constexpr int bytes_of(DType t) {
    switch (t) {
        case DType::int8:
        case DType::fp8_e4m3:
        case DType::fp8_e5m2: return 1;
        case DType::fp16:
        case DType::bf16: return 2;
        case DType::fp32:
        case DType::int32: return 4;
    }
    return 0;
}

constexpr std::string_view to_string(DType t) {
    switch (t) {
        case DType::int8: return "int8";
        case DType::fp16: return "fp16";
        case DType::bf16: return "bf16";
        case DType::fp32: return "fp32";
        case DType::int32: return "int32";
        case DType::fp8_e4m3: return "fp8_e4m3";
        case DType::fp8_e5m2: return "fp8_e5m2";
    }
    return "?";
}

// The dtypes a trace or config may name (int32 is an accumulator type, not an operand type).
inline constexpr std::array<DType, 6> kOperandDTypes{DType::int8,     DType::fp16,     DType::bf16,
                                                     DType::fp32,     DType::fp8_e4m3, DType::fp8_e5m2};
std::optional<DType> parse_operand_dtype(std::string_view s);
inline std::vector<std::string> operand_dtype_names() {
    std::vector<std::string> names;
    for (const DType t : kOperandDTypes) names.emplace_back(to_string(t));
    return names;
}

// A rate per operand dtype (MACs per PE or per SM per cycle); 0 means "this unit does not run
// the dtype".
struct DTypeRates {
    double int8 = 0, fp16 = 0, bf16 = 0, fp32 = 0, fp8_e4m3 = 0, fp8_e5m2 = 0;
    static constexpr double DTypeRates::*member(DType t) {
        switch (t) {
            case DType::int8: return &DTypeRates::int8;
            case DType::fp16: return &DTypeRates::fp16;
            case DType::bf16: return &DTypeRates::bf16;
            case DType::fp32: return &DTypeRates::fp32;
            case DType::fp8_e4m3: return &DTypeRates::fp8_e4m3;
            case DType::fp8_e5m2: return &DTypeRates::fp8_e5m2;
            case DType::int32: return nullptr;
        }
        return nullptr;
    }
    double of(DType t) const {
        const auto rate = member(t);
        return rate ? this->*rate : 0;
    }
};

// Accumulator type of a multiply-accumulate on operands of type t: int8 -> int32, floats -> fp32.
constexpr DType accumulator_of(DType t) { return t == DType::int8 ? DType::int32 : DType::fp32; }

constexpr bool is_fp8(DType t) { return t == DType::fp8_e4m3 || t == DType::fp8_e5m2; }

// fp8 (OCP 8-bit floating point formats, v1.0, 2023; NVIDIA's __nv_fp8_e4m3 / __nv_fp8_e5m2):
//   e4m3: bias 7, no infinities, S.1111.111 is NaN (0x7F, 0xFF), max 448, min normal 2^-6,
//         min subnormal 2^-9;
//   e5m2: bias 15, IEEE-like: S.11111.00 is infinity, S.11111.xx (xx != 0) NaN, max 57344,
//         min normal 2^-14, min subnormal 2^-16.
// Encoding rounds to nearest, ties to even. What a finite value beyond the format's range
// becomes is the overflow mode: saturate (PTX cvt.rn.satfinite: the result is the sign-preserved
// max normal, an infinity too; NaN stays NaN) or not (OCP's non-saturating mode: e5m2 gives
// infinity, e4m3, which has none, NaN). A value rounds beyond the range when it is at least
// max + half an ulp, ties to even deciding the midpoint (e4m3: 464 rounds to 448; e5m2: 61440
// rounds up to 65536, so overflows).
//
// AMD CDNA3 (MI300) encodes the same two formats as FNUZ ("finite, no negative zero"; LLVM's
// Float8E4M3FNUZ / Float8E5M2FNUZ, AMD's "FP8" and "BF8" of the CDNA3 ISA): bias 8 (e4m3) and 16
// (e5m2), no infinities, no negative zero, and one NaN, 0x80 (the negative-zero pattern); every
// other pattern is finite. e4m3: max 240, min normal 2^-7, min subnormal 2^-10; e5m2: max 57344,
// min normal 2^-15, min subnormal 2^-17. A result that rounds to zero is +0; beyond the range,
// saturate gives the signed max, non-saturating NaN (no infinity to give).
enum class Fp8Overflow : std::uint8_t { saturate, non_saturating };
enum class Fp8Encoding : std::uint8_t { ocp, fnuz };
inline constexpr EnumNames<Fp8Encoding, 2> kFp8EncodingNames = {{{Fp8Encoding::ocp, "ocp"}, {Fp8Encoding::fnuz, "fnuz"}}};
std::uint8_t fp8_encode(float value, DType format, Fp8Overflow overflow = Fp8Overflow::saturate,
                        Fp8Encoding encoding = Fp8Encoding::ocp);
float fp8_decode(std::uint8_t bits, DType format, Fp8Encoding encoding = Fp8Encoding::ocp);
// The nearest fp8 value (saturating), as fp32: what an fp8 operand holds.
inline float fp8_round(float value, DType format, Fp8Encoding encoding = Fp8Encoding::ocp) {
    return fp8_decode(fp8_encode(value, format, Fp8Overflow::saturate, encoding), format, encoding);
}
// Largest finite magnitude: 448 (e4m3), 57344 (e5m2); FNUZ e4m3 240.
constexpr float fp8_max(DType format, Fp8Encoding encoding = Fp8Encoding::ocp) {
    return format == DType::fp8_e4m3 ? (encoding == Fp8Encoding::fnuz ? 240.0f : 448.0f) : 57344.0f;
}

}  // namespace accelsim
