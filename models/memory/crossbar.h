#pragma once
// Crossbar between N requesters (cores, SMs) and M targets (L2 slices): every input and output
// port moves bytes_per_cycle_per_port, modelled as busy-until on both ports, plus a fixed latency.
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/stats.h"
#include "models/memory/memory_time.h"

namespace accelsim::memory {

struct CrossbarParams {
    int requesters = 1;
    int targets = 1;
    int latency_cycles = 0;                // one way, unloaded
    double bytes_per_cycle_per_port = 64;
    double clock_hz = 1e9;
};

struct CrossbarStats {
    std::uint64_t transfers = 0, bytes = 0;
    Picoseconds input_wait_ps = 0, output_wait_ps = 0;  // time lost to busy ports
};

class Crossbar {
public:
    explicit Crossbar(const CrossbarParams& params);  // throws std::invalid_argument

    // Moves `bytes` from requester to target; returns when the last byte arrives. A transfer
    // occupies its input and output port for ceil(bytes / bytes_per_cycle_per_port) cycles.
    Picoseconds traverse(int requester, int target, std::uint32_t bytes, Picoseconds arrival);

    const CrossbarStats& stats() const { return stats_; }
    void register_stats(StatsRegistry& registry, const std::string& prefix) const;
    const CrossbarParams& params() const { return params_; }

private:
    CrossbarParams params_;
    Picoseconds cycle_ps_, latency_ps_;
    std::vector<Picoseconds> input_free_, output_free_;
    std::vector<Picoseconds> occupancy_ps_;  // port time by transfer bytes, 0..kTableBytes
    static constexpr std::uint32_t kTableBytes = 1024;
    Picoseconds occupancy_ps(std::uint32_t bytes) const;
    Picoseconds occupancy_ps_uncached(std::uint32_t bytes) const;
    CrossbarStats stats_;
};

}  // namespace accelsim::memory
