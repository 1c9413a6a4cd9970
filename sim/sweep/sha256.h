#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits. Sweep points are named by the
// hash of what determines their result, so a cryptographic hash keeps distinct points apart at any
// sweep size without a dependency beyond the standard library.
#include <string>

namespace accelsim {

std::string sha256_hex(const std::string& data);

}  // namespace accelsim
