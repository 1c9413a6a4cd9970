#pragma once
// Several designs side by side on one trace: built from each design's accelsim.report/1 JSON (the
// report a single `accelsim --json` run writes), so the comparison never needs a live simulation
// and can be tested on hand-made reports. Renderings: terminal table, JSON
// (schema "accelsim.compare/1") and CSV (one row per op x design). docs/compare.md documents them.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/chip_config.h"

namespace accelsim {

inline constexpr const char* kCompareSchema = "accelsim.compare/1";

// What one design contributed: its config (for peak, clock, price and power) and its report.
struct DesignInput {
    std::string config_file;  // as given on the command line
    ChipConfig config;        // loaded with the same --set overrides the run used
    nlohmann::json report;    // the design's full accelsim.report/1
};

// One op on one design.
struct OpOnDesign {
    std::uint64_t cycles = 0;
    double seconds = 0;          // cycles / the design's clock
    // Unknown (the report's null) for a `kernel` op: its assembled code says nothing of FLOPs.
    std::optional<std::int64_t> flops;
    std::optional<double> achieved_tflops;  // flops / seconds / 1e12 (0 for a zero-cycle op)
    std::optional<double> share_of_peak;    // achieved / the design's peak (0 when the design has no peak)
    std::optional<double> utilization;         // as the report gives it
    std::optional<double> occupancy_achieved;  // simt ops whose report has occupancy
    std::string bound, model;
};

struct OpComparison {
    std::string name, kind;
    std::vector<OpOnDesign> per_design;  // in --config order
};

struct DesignSummary {
    std::string config_file, name, kind;
    std::string label;  // column header: the config name, made unique with "#N" if repeated
    double clock_mhz = 0;
    std::string peak_dtype;  // the design's default dtype, which the peak is quoted for
    double peak_tflops = 0;  // 2 x matrix MACs per cycle (default dtype) x clock / 1e12
    std::uint64_t cycles = 0;
    double seconds = 0;
    // How the design's ops were launched (its host.launch) and the host time in `seconds` that the
    // device did not hide (docs/host.md).
    std::string host_launch;
    double host_seconds = 0;
    std::int64_t macs = 0, flops = 0;
    double achieved_tflops = 0, share_of_peak = 0;
    double utilization = 0;  // the report's totals.utilization (MAC utilization)
    std::string dominant_bound = "-";  // the bound holding the most cycles ("-" for no cycles)
    std::size_t ops = 0, ops_without_cycle_model = 0;
    std::optional<double> speedup_vs_first;  // first design's seconds / this design's seconds
    std::optional<double> cost_per_million_inferences_usd;
    std::optional<double> energy_per_inference_j_upper_bound;
    std::string cost_note, energy_note;  // why a figure is n/a (empty when it is present)
};

struct Comparison {
    std::string trace;
    std::vector<DesignSummary> designs;
    std::vector<OpComparison> ops;
    std::vector<nlohmann::json> reports;  // per design, embedded whole in the JSON
};

// One inference = one pass of the trace. cost = seconds x (USD per hour / 3600) x 1e6.
double cost_per_million_inferences_usd(double seconds_per_inference, double cost_per_hour_usd);
// An upper bound: the chip is assumed to draw its full TDP for the whole pass.
double energy_per_inference_j_upper_bound(double seconds_per_inference, double tdp_w);

// Aligns the designs' ops by position (the same trace gives the same op list on every chip).
// Throws std::runtime_error when a report is malformed or two reports list different ops: both
// are internal failures, not bad input.
Comparison build_comparison(const std::string& trace, const std::vector<DesignInput>& designs);

nlohmann::json to_json(const Comparison& comparison);
void write_compare_json(std::ostream& out, const Comparison& comparison);
void write_compare_csv(std::ostream& out, const Comparison& comparison);
void write_compare_table(std::ostream& out, const Comparison& comparison);

}  // namespace accelsim
