#pragma once
// Helpers shared by the trace readers: whole-file reading with file-level errors, compiler-style
// error messages and nearest-name suggestions.
#include <string>
#include <string_view>
#include <vector>

#include "sim/input_error.h"

namespace accelsim::trace_detail {

// The file's bytes. Throws InputError "PATH: cannot open ..." when the file is missing, a directory,
// not a regular file (a device could stream forever) or unreadable.
std::string read_file(const std::string& path);

// The file's lines without line terminators ("\n", "\r\n" or a lone "\r") and without a leading
// UTF-8 byte order mark; line i is number i+1.
// Throws InputError "PATH: cannot open ..." when the file is missing, a directory or unreadable.
std::vector<std::string> read_lines(const std::string& path);

// The offset of the first byte of s that does not start a valid UTF-8 sequence (overlong forms,
// surrogates and code points above U+10FFFF are invalid), or npos when s is valid UTF-8.
std::size_t invalid_utf8_at(std::string_view s);

// Throws InputError "FILE:LINE: byte 0xFF at column 7 is not valid UTF-8 ..." unless text is valid
// UTF-8: names and values reach JSON reports, which must be UTF-8.
void require_utf8(const std::string& file, int line, std::string_view text);

// Throws InputError "FILE:LINE: message".
[[noreturn]] void fail(const std::string& file, int line, const std::string& message);

// " (did you mean 'x'?)" for the candidate nearest to word, or "" when none is close enough to be
// a plausible misspelling.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

std::string_view trim(std::string_view s);

}  // namespace accelsim::trace_detail
