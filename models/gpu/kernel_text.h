#pragma once
// Pieces of warp-ISA text that every kernel generator writes: register names, immediates and
// addresses (docs/simt-isa.md).
#include <string>

namespace accelsim::gpu::kernel_text {

inline std::string r(int i) { return "r" + std::to_string(i); }
inline std::string n(long long v) { return std::to_string(v); }
// "[rX]", "[rX+off]", "[rX-off]"
inline std::string at(int reg, long long off) {
    if (off == 0) return "[" + r(reg) + "]";
    return "[" + r(reg) + (off > 0 ? "+" : "-") + std::to_string(off > 0 ? off : -off) + "]";
}

}  // namespace accelsim::gpu::kernel_text
