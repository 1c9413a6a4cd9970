#pragma once
// Operand checking and conversion shared by both modes (internal).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/mxu/mxu.h"

namespace accelsim::mxu_detail {

// Throws std::invalid_argument for bad params, shapes or dtypes (messages name the key/field).
void check_run_arguments(const MxuParams& p, const GemmShape& shape, DType dtype, const MxuOperands* ops);

// True when v is exactly representable in dtype (int8: integer in -128..127).
inline bool representable(float v, DType dtype) {
    switch (dtype) {
        case DType::int8: return std::isfinite(v) && v == std::nearbyint(v) && v >= -128.0f && v <= 127.0f;
        case DType::fp16: return static_cast<float>(fp16_t(v)) == v;
        case DType::bf16: {  // bf16 is the top half of an fp32: the low 16 bits must be zero
            std::uint32_t bits;
            std::memcpy(&bits, &v, sizeof bits);
            return std::isfinite(v) && (bits & 0xFFFFu) == 0;
        }
        case DType::fp32: return std::isfinite(v);
        case DType::fp8_e4m3:
        case DType::fp8_e5m2: return std::isfinite(v) && fp8_round(v, dtype) == v;
        case DType::int32: return false;
    }
    return false;
}

// True when all n values are exact finite bf16 (mask 0xFFFF: no low bits) or finite fp32 (mask 0),
// in one branch-free pass over the bits that the compiler vectorises: validation checks ~10^9
// operand values per BERT run, and the per-value test with its throw dominated that.
inline bool all_finite_with_clear_bits(const float* src, std::int64_t n, std::uint32_t low_mask) {
    std::uint32_t low = 0, non_finite = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, src + i, sizeof bits);
        low |= bits & low_mask;
        non_finite |= static_cast<std::uint32_t>((bits & 0x7F800000u) == 0x7F800000u);
    }
    return (low | non_finite) == 0;
}

// Checks n operand values in place; throws like convert_operand.
inline void check_operand(const float* src, std::int64_t n, DType dtype, const char* name) {
    if (src == nullptr) throw std::invalid_argument(std::string("mxu operand ") + name + " is null");
    if ((dtype == DType::bf16 && all_finite_with_clear_bits(src, n, 0xFFFFu)) ||
        (dtype == DType::fp32 && all_finite_with_clear_bits(src, n, 0u)))
        return;  // all good; otherwise the loop below finds the first bad value for the message
    for (std::int64_t i = 0; i < n; ++i) {
        if (!representable(src[i], dtype))
            throw std::invalid_argument(std::string("mxu operand ") + name + "[" + std::to_string(i) + "] = " +
                                        std::to_string(src[i]) + " is not an exact finite " +
                                        std::string(to_string(dtype)) + " value");
    }
}

// Copies n operand values into the PE arithmetic type T (int32 for int8, float otherwise),
// checking each; the message names the operand and the element index.
template <class T>
std::vector<T> convert_operand(const float* src, std::int64_t n, DType dtype, const char* name) {
    if (src == nullptr) throw std::invalid_argument(std::string("mxu operand ") + name + " is null");
    std::vector<T> out(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = src[i];
        if (!representable(v, dtype))
            throw std::invalid_argument(std::string("mxu operand ") + name + "[" + std::to_string(i) + "] = " +
                                        std::to_string(v) + " is not an exact finite " +
                                        std::string(to_string(dtype)) + " value");
        out[static_cast<std::size_t>(i)] = static_cast<T>(v);
    }
    return out;
}

// [batch][rows][cols] -> [batch][cols][rows]
template <class T>
std::vector<T> transpose_batched(const std::vector<T>& in, std::int64_t batch, std::int64_t rows, std::int64_t cols) {
    std::vector<T> out(in.size());
    for (std::int64_t b = 0; b < batch; ++b) {
        const T* s = in.data() + b * rows * cols;
        T* d = out.data() + b * rows * cols;
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < cols; ++c) d[c * rows + r] = s[r * cols + c];
    }
    return out;
}

}  // namespace accelsim::mxu_detail
