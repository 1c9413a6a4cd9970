#pragma once
// docs/stats.md's table of every stat (name, unit, description, formula of derived stats) is
// generated from the stat catalogue: `accelsim stat-docs [--update FILE | --check FILE]`.
#include <ostream>
#include <string>
#include <vector>

namespace accelsim {

inline constexpr const char* kStatsBegin = "<!-- stats:begin -->\n";
inline constexpr const char* kStatsEnd = "<!-- stats:end -->";

// The catalogue as a markdown table, sorted by name.
std::string stats_markdown();

int run_stat_docs_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace accelsim
