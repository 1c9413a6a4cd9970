#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace accelsim {

// `accelsim trace MODEL [options]`: args are the words after "trace", e.g.
// {"bert", "--size", "base", "--seq", "128"}. Models: bert, resnet50, gpt2 (see --help of each).
// Writes the trace to out, or to the file given by -o/--output. Returns 0 on success (also for
// --help, printed to out) and 2 on bad usage or bad values, after one message on err.
int run_trace_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace accelsim
