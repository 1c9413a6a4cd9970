#include "sim/report/stat_docs.h"

#include <algorithm>
#include <sstream>

#include "models/common/stats.h"
#include "sim/config/config_docs.h"

namespace accelsim {

std::string stats_markdown() {
    std::vector<const StatDef*> defs = stat_catalogue();
    std::sort(defs.begin(), defs.end(), [](const StatDef* a, const StatDef* b) { return a->name() < b->name(); });
    std::ostringstream out;
    out << "| stat | unit | what it counts | formula (derived stats) |\n|---|---|---|---|\n";
    for (const StatDef* d : defs) {
        out << "| `" << d->name() << "` | " << to_string(d->unit()) << " | " << d->description() << " | ";
        if (!d->formula().empty()) out << '`' << d->formula() << '`';
        out << " |\n";
    }
    return out.str();
}

int run_stat_docs_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    return run_generated_docs_command({"stat-docs", "stat table", kStatsBegin, kStatsEnd, stats_markdown}, args, out,
                                      err);
}

}  // namespace accelsim
