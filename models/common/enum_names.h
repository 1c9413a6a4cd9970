#pragma once
// One list of names per enum: the parser, the printer and the config schema's allowed values all
// read it, so a new enumerator is named in exactly one place.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accelsim {

template <class E>
struct EnumName {
    E value;
    std::string_view name;
};

template <class E, std::size_t N>
using EnumNames = std::array<EnumName<E>, N>;

template <class E, std::size_t N>
constexpr std::optional<E> parse_enum(const EnumNames<E, N>& names, std::string_view text) {
    for (const EnumName<E>& n : names)
        if (n.name == text) return n.value;
    return std::nullopt;
}

template <class E, std::size_t N>
constexpr std::string_view name_of(const EnumNames<E, N>& names, E value) {
    for (const EnumName<E>& n : names)
        if (n.value == value) return n.name;
    return "?";
}

template <class E, std::size_t N>
std::vector<std::string> names_of(const EnumNames<E, N>& names) {
    std::vector<std::string> out;
    for (const EnumName<E>& n : names) out.emplace_back(n.name);
    return out;
}

// "a, b or c": for messages listing the valid names.
inline std::string join_names(const std::vector<std::string>& names, const char* last_separator = " or ") {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? last_separator : ", ") + names[i];
    return out;
}

}  // namespace accelsim
