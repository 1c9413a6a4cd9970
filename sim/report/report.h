#pragma once
// What a run produced, and its three renderings: the terminal table, JSON (schema
// "accelsim.report/1", field names are a contract: add freely, rename never) and CSV.
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/op.h"
#include "models/common/stats.h"
#include "sim/config/chip_config.h"
#include "sim/roofline/roofline.h"

namespace accelsim {

inline constexpr const char* kReportSchema = "accelsim.report/1";

struct NumericsSummary {
    std::int64_t checked = 0;
    double max_abs_err = 0, max_rel_err = 0;
    bool passed = true;
};

struct OpReport {
    Op op;
    std::string model;  // which model produced the cycles: "roofline" means no cycle model ran
    std::uint64_t cycles = 0, start_cycle = 0, end_cycle = 0;
    std::map<std::string, std::int64_t> bytes;  // by memory level
    std::optional<double> utilization;          // share of the running unit's peak
    std::optional<double> occupancy_theoretical, occupancy_achieved, simd_efficiency;
    Roofline roofline;
    std::vector<StatValue> stats;  // model-specific counters
    std::optional<NumericsSummary> numerics;  // with --validate, for ops whose data was checked
};

struct RunReport {
    const ChipConfig* config = nullptr;
    std::string trace;
    std::vector<OpReport> ops;
    std::optional<NumericsSummary> numerics;

    std::uint64_t total_cycles() const;
    double seconds() const;
    std::int64_t total_macs() const;
    std::int64_t total_flops() const;
    std::map<std::string, std::int64_t> total_bytes() const;
    // MACs over (matrix-unit peak for the default dtype x total cycles).
    double mac_utilization() const;
    std::size_t ops_without_cycle_model() const;
};

nlohmann::json to_json(const RunReport& report);
void write_json(std::ostream& out, const RunReport& report);
void write_csv(std::ostream& out, const RunReport& report);
void write_table(std::ostream& out, const RunReport& report);

// Short text of an op's shape for tables, e.g. "m=128 n=2304 k=768".
std::string shape_text(const Op& op);

}  // namespace accelsim
