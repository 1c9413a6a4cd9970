#pragma once
// `accelsim advise`: ranks chips for a model (see advice.h, docs/advise.md).
#include <ostream>
#include <string>
#include <vector>

namespace accelsim {

// args: the words after "advise". Returns 0, 1 (a point failed) or 2 (bad input).
int run_advise_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace accelsim
