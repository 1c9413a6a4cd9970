#pragma once
// ceil(a / b) for a >= 0, b > 0: the blocks, tiles and passes a size needs (every model's lowering
// counts them this way).
#include <cstdint>

namespace accelsim {

constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace accelsim
