#pragma once
// Element types the datapaths compute in. Narrow float types use Eigen's bit-exact
// round-to-nearest-even implementations rather than hand-written conversions.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

namespace accelsim {

enum class DType : std::uint8_t { int8, fp16, bf16, fp32, int32 };

using fp16_t = Eigen::half;
using bf16_t = Eigen::bfloat16;

constexpr int bytes_of(DType t) {
    switch (t) {
        case DType::int8: return 1;
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
    }
    return "?";
}

// The dtypes a trace or config may name (int32 is an accumulator type, not an operand type).
inline constexpr std::array<DType, 4> kOperandDTypes{DType::int8, DType::fp16, DType::bf16, DType::fp32};
std::optional<DType> parse_operand_dtype(std::string_view s);
inline std::vector<std::string> operand_dtype_names() {
    std::vector<std::string> names;
    for (const DType t : kOperandDTypes) names.emplace_back(to_string(t));
    return names;
}

// A rate per operand dtype (MACs per PE or per SM per cycle); 0 means "this unit does not run
// the dtype".
struct DTypeRates {
    double int8 = 0, fp16 = 0, bf16 = 0, fp32 = 0;
    static constexpr double DTypeRates::*member(DType t) {
        switch (t) {
            case DType::int8: return &DTypeRates::int8;
            case DType::fp16: return &DTypeRates::fp16;
            case DType::bf16: return &DTypeRates::bf16;
            case DType::fp32: return &DTypeRates::fp32;
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

}  // namespace accelsim
