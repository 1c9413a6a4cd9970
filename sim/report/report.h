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

#include "models/common/chip_model.h"
#include "models/common/op.h"
#include "models/common/op_table.h"
#include "models/common/stats.h"
#include "sim/config/chip_config.h"
#include "models/common/roofline.h"

namespace accelsim {

inline constexpr const char* kReportSchema = "accelsim.report/1";

struct RunReport {
    const ChipConfig* config = nullptr;
    std::string trace;
    std::vector<OpReport> ops;
    std::optional<NumericsSummary> numerics;
    // The chip's matrix-unit peak for the config's default dtype, MACs per cycle (the engine asks
    // the chip; 0: no matrix unit runs it).
    double matrix_macs_per_cycle = 0;

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

}  // namespace accelsim
