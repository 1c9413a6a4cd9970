#include "sim/json_input_error.h"

#include <algorithm>

#include "sim/input_error.h"

namespace accelsim {
namespace {

std::string line_and_column(const std::string& text, std::size_t index) {
    index = std::min(index, text.size());
    std::size_t line = 1, line_start = 0;
    for (std::size_t i = 0; i < index; ++i)
        if (text[i] == '\n') ++line, line_start = i + 1;
    return std::to_string(line) + ":" + std::to_string(index - line_start + 1);
}

// nlohmann's message without its "[json.exception.KIND.N] " prefix (and, for syntax errors,
// without the "parse error at line L, column C: " it adds, since we name the place ourselves).
std::string reason_of(const nlohmann::json::exception& e) {
    std::string reason = e.what();
    if (const auto at = reason.find("] "); at != std::string::npos && reason.rfind("[json.exception", 0) == 0)
        reason = reason.substr(at + 2);
    if (reason.rfind("parse error", 0) == 0)
        if (const auto colon = reason.find(": "); colon != std::string::npos) reason = reason.substr(colon + 2);
    return reason;
}

}  // namespace

void throw_json_input_error(const std::string& file, const std::string& text, const nlohmann::json::exception& e,
                            const std::string& what_it_is_not) {
    const std::string reason = what_it_is_not + reason_of(e);
    if (const auto* syntax = dynamic_cast<const nlohmann::json::parse_error*>(&e))
        throw InputError(file + ":" + line_and_column(text, syntax->byte > 0 ? syntax->byte - 1 : 0) + ": " + reason);
    if (dynamic_cast<const nlohmann::json::out_of_range*>(&e) != nullptr) {
        // A number beyond a double: nlohmann names the token ("number overflow parsing '1e400'")
        // but not where it is; its first occurrence is the one the parser met first.
        const auto q1 = reason.find('\''), q2 = reason.rfind('\'');
        const std::string token = q1 != std::string::npos && q2 > q1 ? reason.substr(q1 + 1, q2 - q1 - 1) : "";
        const std::size_t index = token.empty() ? std::string::npos : text.find(token);
        if (index != std::string::npos)
            throw InputError(file + ":" + line_and_column(text, index) + ": " + reason + " (beyond the range of a double)");
        throw InputError(file + ": " + reason + " (beyond the range of a double)");
    }
    throw InputError(file + ": " + reason);
}

}  // namespace accelsim
