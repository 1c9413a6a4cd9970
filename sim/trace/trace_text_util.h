#pragma once
// Helpers shared by the trace readers: whole-file reading with file-level errors, compiler-style
// error messages and nearest-name suggestions.
#include <string>
#include <string_view>
#include <vector>

#include "sim/input_error.h"

namespace accelsim::trace_detail {

// The file's lines without line terminators ("\n" or "\r\n"); line i is number i+1.
// Throws InputError "PATH: cannot open ..." when the file is missing, a directory or unreadable.
std::vector<std::string> read_lines(const std::string& path);

// Throws InputError "FILE:LINE: message".
[[noreturn]] void fail(const std::string& file, int line, const std::string& message);

// " (did you mean 'x'?)" for the candidate nearest to word, or "" when none is close enough to be
// a plausible misspelling.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

std::string_view trim(std::string_view s);

}  // namespace accelsim::trace_detail
