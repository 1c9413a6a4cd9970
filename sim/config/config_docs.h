#pragma once
// docs/config.md's key table is generated from the models' parameter tables (through the config
// schema): `accelsim config-docs` prints it, `--update FILE` rewrites the part of FILE between
// the markers below, `--check FILE` exits 1 when FILE's table differs from what the tables give.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace accelsim {

inline constexpr const char* kConfigKeysBegin = "<!-- keys:begin -->\n";
inline constexpr const char* kConfigKeysEnd = "<!-- keys:end -->";

// `text` with the part between kConfigKeysBegin and kConfigKeysEnd replaced by `table`; throws
// InputError naming `file` when a marker is missing.
std::string with_config_key_table(const std::string& file, const std::string& text, const std::string& table);

// `text` with the part between the marker lines `begin` and `end` replaced by `table`.
std::string with_generated_part(const std::string& file, const std::string& text, const std::string& begin,
                                const std::string& end, const std::string& table);

// A generated part of a doc file and the command that prints, updates or checks it.
struct GeneratedDocs {
    std::string command;  // e.g. "config-docs"
    std::string what;     // e.g. "key table"
    std::string begin, end;
    std::function<std::string()> generate;
};
// args: the words after the command. Returns 0, 1 (--check found a difference) or 2 (bad input).
int run_generated_docs_command(const GeneratedDocs& docs, const std::vector<std::string>& args, std::ostream& out,
                               std::ostream& err);

// args: the words after "config-docs". Returns 0, 1 (--check found a difference) or 2 (bad input).
int run_config_docs_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace accelsim
