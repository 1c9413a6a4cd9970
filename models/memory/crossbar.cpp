#include "models/memory/crossbar.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace accelsim::memory {

Crossbar::Crossbar(const CrossbarParams& p) : params_(p) {
    if (p.requesters <= 0 || p.targets <= 0) throw std::invalid_argument("interconnect: ports must be > 0");
    if (p.latency_cycles < 0) throw std::invalid_argument("interconnect.latency_cycles must be >= 0");
    if (p.bytes_per_cycle_per_port <= 0) throw std::invalid_argument("interconnect.bytes_per_cycle_per_port must be > 0");
    if (p.clock_hz <= 0) throw std::invalid_argument("interconnect: clock must be > 0");
    cycle_ps_ = cycles_to_ps(1, p.clock_hz);
    latency_ps_ = cycles_to_ps(p.latency_cycles, p.clock_hz);
    input_free_.assign(static_cast<std::size_t>(p.requesters), 0);
    output_free_.assign(static_cast<std::size_t>(p.targets), 0);
    occupancy_ps_.resize(kTableBytes + 1);
    for (std::uint32_t b = 0; b <= kTableBytes; ++b) occupancy_ps_[b] = occupancy_ps_uncached(b);
}

void Crossbar::register_stats(StatsRegistry& r, const std::string& prefix) const {
    r.add(prefix + ".transfers", "transfers", "transfers through the crossbar", &stats_.transfers);
    r.add(prefix + ".bytes", "bytes", "bytes through the crossbar", &stats_.bytes);
    r.add(prefix + ".input_wait_ps", "ps", "time lost waiting for busy input ports", &stats_.input_wait_ps);
    r.add(prefix + ".output_wait_ps", "ps", "time lost waiting for busy output ports", &stats_.output_wait_ps);
}

// ceil(bytes / bytes_per_cycle_per_port) whole cycles; a transfer of 0 bytes counts as 1.
Picoseconds Crossbar::occupancy_ps_uncached(std::uint32_t bytes) const {
    return static_cast<Picoseconds>(
               std::ceil(static_cast<double>(std::max<std::uint32_t>(bytes, 1)) / params_.bytes_per_cycle_per_port)) *
           cycle_ps_;
}

Picoseconds Crossbar::occupancy_ps(std::uint32_t bytes) const {
    return bytes <= kTableBytes ? occupancy_ps_[bytes] : occupancy_ps_uncached(bytes);
}

Picoseconds Crossbar::traverse(int requester, int target, std::uint32_t bytes, Picoseconds arrival) {
    if (requester < 0 || requester >= params_.requesters || target < 0 || target >= params_.targets)
        throw std::out_of_range("crossbar port out of range: requester " + std::to_string(requester) + ", target " +
                                std::to_string(target));
    auto& in = input_free_[static_cast<std::size_t>(requester)];
    auto& out = output_free_[static_cast<std::size_t>(target)];
    const Picoseconds occupancy = occupancy_ps(bytes);
    const Picoseconds start = std::max({arrival, in, out});
    stats_.input_wait_ps += in > arrival ? in - arrival : 0;
    stats_.output_wait_ps += start > std::max(arrival, in) ? start - std::max(arrival, in) : 0;
    in = out = start + occupancy;
    ++stats_.transfers;
    stats_.bytes += bytes;
    return start + occupancy + latency_ps_;
}

}  // namespace accelsim::memory
