#pragma once
// Number formatting shared by the text reports (the run report, compare, advise).
#include <cstdint>
#include <cstdio>
#include <string>

namespace accelsim::number_text {

// 1234567 -> "1,234,567"
inline std::string with_commas(std::uint64_t v) {
    std::string s = std::to_string(v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

// printf's "%.*f"
inline std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// A share as a percentage: 0.257 -> "25.7%" with one decimal.
inline std::string percent(double share, int decimals) { return fixed(share * 100.0, decimals) + "%"; }

}  // namespace accelsim::number_text
