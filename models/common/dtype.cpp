#include "models/common/dtype.h"

namespace accelsim {

std::optional<DType> parse_operand_dtype(std::string_view s) {
    if (s == "int8") return DType::int8;
    if (s == "fp16") return DType::fp16;
    if (s == "bf16") return DType::bf16;
    if (s == "fp32") return DType::fp32;
    return std::nullopt;
}

}  // namespace accelsim
