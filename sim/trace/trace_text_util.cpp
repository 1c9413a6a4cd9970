#include "sim/trace/trace_text_util.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace accelsim::trace_detail {

std::vector<std::string> read_lines(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw InputError(path + ": cannot open: is a directory");
    // A device or pipe (/dev/zero) could stream forever: traces are regular files.
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
        throw InputError(path + ": cannot open: not a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
    }
    if (in.bad()) throw InputError(path + ": cannot read: " + std::strerror(errno));
    return lines;
}

void fail(const std::string& file, int line, const std::string& message) {
    throw InputError(file + ":" + std::to_string(line) + ": " + message);
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    const std::string* best = nullptr;
    std::size_t best_distance = 0;
    for (const std::string& c : candidates) {
        const std::size_t d = edit_distance(word, c);
        if (!best || d < best_distance) {
            best = &c;
            best_distance = d;
        }
    }
    // A misspelling changes a few letters; beyond that a suggestion is noise.
    const std::size_t limit = best ? std::max<std::size_t>(2, best->size() / 3) : 0;
    if (!best || best_distance > limit || best_distance >= std::max(word.size(), best->size()))
        return {};
    return " (did you mean '" + *best + "'?)";
}

std::string_view trim(std::string_view s) {
    const char* ws = " \t\r\n\v\f";
    const auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

}  // namespace accelsim::trace_detail
