#include "sim/trace/trace_text_util.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace accelsim::trace_detail {

std::string read_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw InputError(path + ": cannot open: is a directory");
    // A device or pipe (/dev/zero) could stream forever: traces are regular files.
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
        throw InputError(path + ": cannot open: not a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw InputError(path + ": cannot read: " + std::strerror(errno));
    return text;
}

std::vector<std::string> read_lines(const std::string& path) {
    const std::string text = read_file(path);
    // A UTF-8 byte order mark (editors on Windows write one) is not part of the first line.
    std::size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    // Lines end in "\n", "\r\n" or a lone "\r" (classic Mac OS); a final terminator adds no line.
    std::vector<std::string> lines;
    while (i < text.size()) {
        const std::size_t end = text.find_first_of("\r\n", i);
        if (end == std::string::npos) {
            lines.push_back(text.substr(i));
            break;
        }
        lines.push_back(text.substr(i, end - i));
        i = end + (text.compare(end, 2, "\r\n") == 0 ? 2 : 1);
    }
    return lines;
}

std::size_t invalid_utf8_at(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        // Sequence length and the smallest code point it may encode (no overlong forms).
        std::size_t n = 0;
        std::uint32_t min = 0, cp = 0;
        if (c < 0x80) { ++i; continue; }
        if ((c & 0xE0) == 0xC0) { n = 2; min = 0x80; cp = c & 0x1F; }
        else if ((c & 0xF0) == 0xE0) { n = 3; min = 0x800; cp = c & 0x0F; }
        else if ((c & 0xF8) == 0xF0) { n = 4; min = 0x10000; cp = c & 0x07; }
        else return i;
        if (i + n > s.size()) return i;
        for (std::size_t k = 1; k < n; ++k) {
            const auto d = static_cast<unsigned char>(s[i + k]);
            if ((d & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (d & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += n;
    }
    return std::string_view::npos;
}

void require_utf8(const std::string& file, int line, std::string_view text) {
    const std::size_t bad = invalid_utf8_at(text);
    if (bad == std::string_view::npos) return;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[bad]));
    fail(file, line,
         "byte " + std::string(hex) + " at column " + std::to_string(bad + 1) +
             " is not valid UTF-8 (op names and values must be UTF-8 text)");
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
