#pragma once
// A sweep's results, rebuilt from the point files alone (so the local driver, each Slurm shard and
// `accelsim sweep merge` produce the same bytes from the same finished points): one CSV row per
// planned point in plan order, and summary.json with the Pareto-optimal points.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/sweep_plan.h"

namespace accelsim {

inline constexpr const char* kSweepSummarySchema = "accelsim.sweep-summary/1";

// One objective of the Pareto front: a metric column and its direction.
struct Objective {
    std::string metric;  // a CSV metric column, e.g. "seconds"
    bool maximize = false;
};

// Names accepted by --objectives: CSV metric columns, aliases latency (seconds), cost
// (cost_per_million_inferences_usd), energy (energy_per_inference_j_upper_bound), each optionally
// prefixed max: or min:, or a numeric axis (e.g. "mxu": a smaller array as the cheaper design).
// utilization is maximized by default, everything else minimized. Throws InputError (naming
// `where`) for an unknown metric or fewer than two objectives.
std::vector<Objective> parse_objectives(const std::vector<std::string>& names, const std::string& where,
                                        const std::vector<std::string>& axis_names = {});

struct SweepRow {
    std::string status;  // ok | failed | missing (not run yet)
    std::vector<std::pair<std::string, nlohmann::json>> metrics;  // column -> number
    std::optional<int> exit_code;
    std::string message;
    bool pareto = false;
    const nlohmann::json* metric(const std::string& column) const;
};

struct SweepResults {
    std::vector<std::string> metric_columns;  // in CSV order
    std::vector<SweepRow> rows;               // one per plan point, in plan order
    std::vector<Objective> objectives;
    std::size_t ok = 0, failed = 0, missing = 0;
};

// Reads DIR/points and DIR/failed for every planned point and marks the Pareto front.
SweepResults collect_results(const SweepPlan& plan, const std::string& dir, const std::vector<Objective>& objectives);

void write_results_csv(std::ostream& out, const SweepPlan& plan, const SweepResults& results);
nlohmann::json summary_json(const SweepPlan& plan, const SweepResults& results);

// collect_results, then DIR/results.csv and DIR/summary.json written atomically.
SweepResults write_sweep_results(const SweepPlan& plan, const std::string& dir, const std::vector<Objective>& objectives);

// The CSV metric row of one accelsim.report/1 (without its ops): cycles, seconds, utilization,
// macs, flops, ops, share_<bound> (share of cycles per bound), bytes_<level>, and cost and energy
// when the report's config carries cost_per_hour_usd and tdp_w.
std::vector<std::pair<std::string, nlohmann::json>> report_metrics(const nlohmann::json& report);

// What report_metrics reads from a report: its totals and the config's price and power.
nlohmann::json report_totals(const nlohmann::json& report);

}  // namespace accelsim
