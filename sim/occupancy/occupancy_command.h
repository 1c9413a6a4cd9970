#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace accelsim {

// `accelsim occupancy --config FILE --threads T --regs R [--smem BYTES] [--json FILE] [--set k=v]`
// args: the words after "occupancy" (a leading "occupancy" is skipped too). Prints blocks per SM,
// active warps, occupancy and the limiter to out; errors to err. Returns 0, or 2 on bad input.
int run_occupancy_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace accelsim
