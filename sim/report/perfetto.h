#pragma once
// `--perfetto FILE.json`: the run as a timeline in Chrome's Trace Event format (JSON), which
// ui.perfetto.dev and chrome://tracing open. docs/outputs.md describes the tracks.
//
// One process (the chip); one thread per track: "ops" (every op, with its bound, bytes and
// utilization in args), then each unit the chip recorded (OpActivity: a TPU core's MXUs, DMA engine
// and vector unit; a GPU's kernels). A track never holds overlapping spans (Perfetto cannot draw
// them): spans of a unit that overlap (a DMA engine with several transfers in flight) go to
// sub-tracks "NAME #2", "NAME #3", ..., each span to the first sub-track free at its start, in
// order of start (ties: end, then recording order), so the split is deterministic. Counters: the
// bandwidth of each memory level the chip recorded (GB/s, over up to kBandwidthBinsPerOp equal
// intervals per op; bytes the chip counted when they were done there, and what would exceed the
// level's peak in an interval moved to the interval before, when those bytes were on their way)
// and each GPU SM's resident warps. Times are microseconds (cycles / clock).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/activity.h"
#include "models/common/chip_model.h"
#include "sim/config/chip_config.h"

namespace accelsim {

inline constexpr int kBandwidthBinsPerOp = 64;

class PerfettoTimeline {
public:
    // `peak_bytes_per_cycle`: each memory level's peak (ChipModel::memory_peaks), the most its
    // bandwidth counter may show.
    PerfettoTimeline(const ChipConfig& config, std::string trace, std::map<std::string, double> peak_bytes_per_cycle);
    // An op as it finished (start and end cycles set); keeps what the timeline shows.
    void add(const OpReport& op);
    nlohmann::json to_json() const;
    void write(std::ostream& out) const;

private:
    struct OpSpan {
        std::string name, kind, model, bound;
        std::uint64_t start_cycle = 0, cycles = 0;
        std::map<std::string, std::int64_t> bytes;
        std::optional<double> utilization;
        double bound_cycles = 0;
        std::shared_ptr<const OpActivity> activity;
    };
    double microseconds(double cycles) const { return cycles / clock_hz_ * 1e6; }

    std::string chip_name_, trace_;
    double clock_hz_;
    std::map<std::string, double> peak_bytes_per_cycle_;
    std::vector<OpSpan> ops_;
};

// Spreads spans over sub-tracks so that none overlaps another on its sub-track: returns each
// span's sub-track (0 = the track itself), in the order given. Exposed for tests.
struct TimeSpan {
    double start = 0, end = 0;
};
std::vector<int> assign_sub_tracks(const std::vector<TimeSpan>& spans);

}  // namespace accelsim
