#pragma once
// `accelsim compare --trace FILE --config A --config B [...]`: several designs side by side on one
// trace (docs/compare.md). Each design runs in its own forked process.
#include <ostream>
#include <string>
#include <vector>

namespace accelsim {

// args: the words after "compare". Returns the exit code: 0 ok, 1 a simulation failed or crashed,
// 2 bad usage or bad input (one message on `err`, naming the config where a design's run failed).
int run_compare_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace accelsim
