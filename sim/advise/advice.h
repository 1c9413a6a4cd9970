#pragma once
// `accelsim advise`: which chip, at which batch and precision, for what cost. The points (chip x
// batch x dtype) are simulated by the sweep machinery; this file ranks them: per chip the best
// point under the latency bound, the chips ordered by the chosen metric, each with one line of why.
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace accelsim {

inline constexpr const char* kAdviceSchema = "accelsim.advice/1";

// One simulated run of the trace: `batch` inferences on `chip` in `dtype`.
struct AdvicePoint {
    std::string chip;  // the config's label
    std::int64_t batch = 1;
    std::string dtype;
    bool ok = false;
    std::string failure;          // why the point failed (ok == false)
    double seconds = 0;           // one run of the trace (all `batch` inferences)
    double utilization = 0;       // matrix-unit MAC utilization over the run
    std::map<std::string, double> bound_shares;  // bound -> share of the run's cycles
    std::map<std::string, double> bytes;         // memory level -> bytes moved in the run
    std::int64_t ops = 0, ops_without_cycle_model = 0;
    std::optional<double> cost_per_hour_usd, tdp_w;  // from the config

    double throughput() const { return seconds > 0 ? static_cast<double>(batch) / seconds : 0; }
    // Rented time for a million inferences at the config's hourly price.
    std::optional<double> cost_per_million_usd() const;
    // An upper bound: the chip's TDP for the whole run, shared by the batch.
    std::optional<double> energy_per_inference_j() const;
    // The bound with the largest share of cycles ("compute", "hbm", ...).
    std::string dominant_bound() const;
};

enum class RankBy { cost, throughput, energy, latency };
RankBy parse_rank_by(const std::string& text);  // throws InputError
const char* to_string(RankBy r);

struct ChipAdvice {
    std::string chip;
    std::optional<AdvicePoint> best;  // none when no point meets the latency bound
    std::string why;                  // one line
};

struct Advice {
    RankBy rank_by = RankBy::cost;
    std::optional<double> latency_bound_s;
    std::vector<ChipAdvice> chips;  // ranked: chips with a best point first, by rank_by
};

// Per chip, the point that is best by `rank_by` among those that succeeded and meet the latency
// bound (ties: the smaller batch, then the dtype listed first); chips ranked by that value.
// A chip whose points lack the figure rank_by needs (no price for cost, no TDP for energy) ranks
// after the chips that have it.
Advice advise(const std::vector<AdvicePoint>& points, RankBy rank_by, std::optional<double> latency_bound_s);

void write_advice_table(std::ostream& out, const Advice& advice);
nlohmann::json advice_json(const Advice& advice);
void write_advice_csv(std::ostream& out, const Advice& advice);

}  // namespace accelsim
