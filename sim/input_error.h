#pragma once
// Bad input (a config, a trace, a kernel file, a command-line value) is reported by throwing
// InputError with one complete message that names the file and the line or key, e.g.
//   "traces/x.trace:12: unknown op kind 'matmull' (did you mean 'matmul'?)"
//   "configs/a.json: unknown key 'mxu.rwos' (did you mean 'mxu.rows'?)"
// The CLI prints it once, prefixed "accelsim: error: ", and exits with code 2.
#include <stdexcept>
#include <string>

namespace accelsim {

struct InputError : std::runtime_error {
    explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// Edit distance used to suggest the nearest valid name for a misspelt key, op kind or option.
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace accelsim
