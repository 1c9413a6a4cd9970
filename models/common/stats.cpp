#include "models/common/stats.h"

#include <array>
#include <stdexcept>

namespace accelsim {

namespace {

// In StatUnit's order.
constexpr std::array<std::string_view, 32> kUnitNames = {
    "cycles",    "scheduler-cycles", "ps",       "s",       "bytes",  "bytes/s",  "bytes/cycle", "instructions",
    "requests",  "accesses",         "sectors",  "lines",   "bursts", "commands", "transfers",   "wavefronts",
    "lanes",     "blocks",           "warps",    "threads", "waves",  "launches", "elements",    "rows",
    "tiles",     "slices",           "trips",    "parts",   "units",  "ops",      "ratio",       "enum"};
static_assert(kUnitNames.size() == static_cast<std::size_t>(StatUnit::enumeration) + 1);

// Construct on first use: StatDefs in other translation units register during static
// initialization, in an order C++ does not fix.
std::vector<const StatDef*>& catalogue() {
    static std::vector<const StatDef*> defs;
    return defs;
}

}  // namespace

std::string_view to_string(StatUnit unit) { return kUnitNames[static_cast<std::size_t>(unit)]; }

StatDef::StatDef(std::string_view name, StatUnit unit, std::string_view description, std::string_view formula)
    : name_(name), description_(description), formula_(formula), unit_(unit) {
    catalogue().push_back(this);
}

int StatDef::placeholders() const {
    int n = 0;
    for (char c : name_) n += c == '{';
    return n;
}

std::string StatDef::instance(std::initializer_list<std::string_view> fills) const {
    if (static_cast<int>(fills.size()) != placeholders())
        throw std::logic_error("stat " + std::string(name_) + ": " + std::to_string(fills.size()) +
                               " fill(s) for " + std::to_string(placeholders()) + " placeholder(s)");
    std::string out;
    auto fill = fills.begin();
    for (std::size_t i = 0; i < name_.size(); ++i) {
        if (name_[i] != '{') {
            out += name_[i];
            continue;
        }
        out += *fill++;
        i = name_.find('}', i);
    }
    return out;
}

bool StatDef::matches(std::string_view name) const {
    // Literal pieces must match in order; a placeholder matches one or more characters up to the
    // next literal piece (names are short: a simple backtracking-free scan is enough because a
    // placeholder is always followed by a literal that does not occur inside a fill).
    std::size_t n = 0, p = 0;
    while (p < name_.size()) {
        if (name_[p] != '{') {
            if (n >= name.size() || name[n] != name_[p]) return false;
            ++n, ++p;
            continue;
        }
        p = name_.find('}', p) + 1;
        const std::string_view next = p < name_.size() ? name_.substr(p, 1) : std::string_view();
        const std::size_t end = next.empty() ? name.size() : name.find(next, n + 1);
        if (end == std::string_view::npos || end <= n) return false;
        n = end;
    }
    return n == name.size();
}

const std::vector<const StatDef*>& stat_catalogue() { return catalogue(); }

const StatDef* find_stat_def(std::string_view name) {
    for (const StatDef* def : catalogue())
        if (def->matches(name)) return def;
    return nullptr;
}

std::optional<double> find_stat(const std::vector<StatValue>& stats, const StatDef& def) {
    for (const StatValue& s : stats)
        if (s.def == &def) return s.value;
    return std::nullopt;
}

}  // namespace accelsim
