#pragma once
// Statistics are plain integer (or double) members of the model that owns them, registered once
// with a name, a unit and a description, and read only when a report is written: nothing on the
// hot path looks anything up by string.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace accelsim {

struct StatValue {
    std::string name;         // hierarchical, e.g. "chip.core0.mxu1.busy_cycles"
    std::string unit;         // "cycles", "bytes", "requests", "ratio", ...
    std::string description;
    double value = 0;
};

class StatsRegistry {
public:
    void add(std::string name, std::string unit, std::string description, const std::uint64_t* counter) {
        entries_.push_back({std::move(name), std::move(unit), std::move(description), counter});
    }
    void add(std::string name, std::string unit, std::string description, const double* value) {
        entries_.push_back({std::move(name), std::move(unit), std::move(description), value});
    }
    std::vector<StatValue> snapshot() const {
        std::vector<StatValue> out;
        out.reserve(entries_.size());
        for (const auto& e : entries_) {
            double v = std::holds_alternative<const std::uint64_t*>(e.ptr)
                           ? static_cast<double>(*std::get<const std::uint64_t*>(e.ptr))
                           : *std::get<const double*>(e.ptr);
            out.push_back({e.name, e.unit, e.description, v});
        }
        return out;
    }
    std::size_t size() const { return entries_.size(); }

private:
    struct Entry {
        std::string name, unit, description;
        std::variant<const std::uint64_t*, const double*> ptr;
    };
    std::vector<Entry> entries_;
};

}  // namespace accelsim
