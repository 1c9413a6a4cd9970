#pragma once
// `accelsim sweep SPEC [-j N] [-o DIR] ...`, `accelsim sweep merge DIR` and `accelsim sweep plot
// DIR ...` (docs/sweep.md).
#include <ostream>
#include <string>
#include <vector>

namespace accelsim {

// args: the words after "sweep". Returns 0 when every point succeeded, 1 when a point failed (or,
// for plot, gnuplot did), 2 for bad usage or bad input (one message on err; no point has run).
int run_sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace accelsim
