#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace accelsim {

// `accelsim membench --config FILE --pattern stream|random|strided|mixed [--bytes N]
//  [--size 32|64|128] [--stride BYTES] [--level l2|hbm] [--outstanding N] [--seed N] [--json FILE]
//  [--set key=value ...]`; args are what follows `membench`. Returns 0, or 2 with one message on err.
int run_membench_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace accelsim
