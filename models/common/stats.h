#pragma once
// Statistics. Each one is defined once, as a namespace-scope StatDef (name, unit from a closed set,
// description, and for a derived stat the formula it is computed by) that adds itself to the
// catalogue. Models count in plain integer (or double) members and read them only when a report is
// written; reports and tests look a stat up by its StatDef, so a renamed stat is a compile error,
// not a silent dash.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace accelsim {

enum class StatUnit : std::uint8_t {
    cycles,
    scheduler_cycles,  // one warp scheduler for one cycle
    picoseconds,
    seconds,
    bytes,
    bytes_per_second,
    bytes_per_cycle,
    instructions,
    requests,
    accesses,
    sectors,
    lines,
    bursts,
    commands,
    transfers,
    wavefronts,
    lanes,
    blocks,
    warps,
    threads,
    waves,
    launches,
    elements,
    rows,
    tiles,
    slices,
    trips,  // loop trips (back-edges taken)
    parts,
    units,
    ops,  // trace operators
    ratio,
    enumeration,  // a small integer naming a choice (its description lists them)
};
// The unit as reports write it ("cycles", "scheduler-cycles", "ps", "bytes/s", ...).
std::string_view to_string(StatUnit unit);

class StatDef {
public:
    // `name` may hold placeholders in braces ("chip.core{core}.dma.bytes_in"), filled per instance
    // in order. Defined once at namespace scope; the object must outlive every report.
    StatDef(std::string_view name, StatUnit unit, std::string_view description, std::string_view formula = {});
    StatDef(const StatDef&) = delete;
    StatDef& operator=(const StatDef&) = delete;

    std::string_view name() const { return name_; }
    StatUnit unit() const { return unit_; }
    std::string_view description() const { return description_; }
    std::string_view formula() const { return formula_; }  // empty for a counted stat
    int placeholders() const;
    // The name with its placeholders replaced by `fills`, in order (their count must match).
    std::string instance(std::initializer_list<std::string_view> fills = {}) const;
    // Whether `name` is an instance of this definition.
    bool matches(std::string_view name) const;

private:
    std::string_view name_, description_, formula_;
    StatUnit unit_;
};

// Every StatDef of the program, in no particular order.
const std::vector<const StatDef*>& stat_catalogue();
// The definition `name` is an instance of, or nullptr.
const StatDef* find_stat_def(std::string_view name);

// One stat of one op in a report.
struct StatValue {
    const StatDef* def = nullptr;
    std::string name;  // def's name with its placeholders filled
    double value = 0;
    std::string_view unit() const { return to_string(def->unit()); }
    std::string_view description() const { return def->description(); }
};

inline StatValue stat_value(const StatDef& def, double value) { return {&def, def.instance(), value}; }
inline StatValue stat_value(const StatDef& def, std::initializer_list<std::string_view> fills, double value) {
    return {&def, def.instance(fills), value};
}
// The value of the stat `def` (without placeholders) in `stats`, if present.
std::optional<double> find_stat(const std::vector<StatValue>& stats, const StatDef& def);

// Live counters of a hardware unit, registered once under the unit's path and read on demand.
class StatsRegistry {
public:
    void add(const StatDef& def, std::initializer_list<std::string_view> fills, const std::uint64_t* counter) {
        entries_.push_back({&def, def.instance(fills), counter});
    }
    void add(const StatDef& def, std::initializer_list<std::string_view> fills, const double* value) {
        entries_.push_back({&def, def.instance(fills), value});
    }
    std::vector<StatValue> snapshot() const {
        std::vector<StatValue> out;
        out.reserve(entries_.size());
        for (const auto& e : entries_) {
            const double v = std::holds_alternative<const std::uint64_t*>(e.ptr)
                                 ? static_cast<double>(*std::get<const std::uint64_t*>(e.ptr))
                                 : *std::get<const double*>(e.ptr);
            out.push_back({e.def, e.name, v});
        }
        return out;
    }
    std::size_t size() const { return entries_.size(); }

private:
    struct Entry {
        const StatDef* def;
        std::string name;
        std::variant<const std::uint64_t*, const double*> ptr;
    };
    std::vector<Entry> entries_;
};

}  // namespace accelsim
