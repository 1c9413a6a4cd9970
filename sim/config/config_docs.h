#pragma once
// docs/config.md's key table is generated from the models' parameter tables (through the config
// schema): `accelsim config-docs` prints it, `--update FILE` rewrites the part of FILE between
// the markers below, `--check FILE` exits 1 when FILE's table differs from what the tables give.
#include <ostream>
#include <string>
#include <vector>

namespace accelsim {

inline constexpr const char* kConfigKeysBegin = "<!-- keys:begin -->\n";
inline constexpr const char* kConfigKeysEnd = "<!-- keys:end -->";

// `text` with the part between kConfigKeysBegin and kConfigKeysEnd replaced by `table`; throws
// InputError naming `file` when a marker is missing.
std::string with_config_key_table(const std::string& file, const std::string& text, const std::string& table);

// args: the words after "config-docs". Returns 0, 1 (--check found a difference) or 2 (bad input).
int run_config_docs_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace accelsim
