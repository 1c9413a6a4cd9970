#pragma once
// One clear InputError for JSON a reader could not parse, for every JSON file a user hands us
// (configs, sweep specs, PyTorch profiler traces): "FILE:LINE:COL: what is wrong". nlohmann throws
// parse_error (with a byte offset) for bad syntax and out_of_range for a number beyond a double
// (1e400, with the token but no position); both must end as the same kind of message.
#include <string>

#include <nlohmann/json.hpp>

namespace accelsim {

// `what_it_is_not` prefixes the reason for readers whose users may pass a file of another kind
// ("not a PyTorch profiler trace: not valid JSON: ").
[[noreturn]] void throw_json_input_error(const std::string& file, const std::string& text,
                                         const nlohmann::json::exception& e, const std::string& what_it_is_not = "");

}  // namespace accelsim
