#include "models/common/dtype.h"

namespace accelsim {

std::optional<DType> parse_operand_dtype(std::string_view s) {
    for (const DType t : kOperandDTypes)
        if (to_string(t) == s) return t;
    return std::nullopt;
}

}  // namespace accelsim
