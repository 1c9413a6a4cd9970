#include "models/memory/crossbar.h"
#include "models/memory/memory_stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace accelsim::memory {

const ParamTable<CrossbarParams>& crossbar_param_table() {
    static const ParamTable<CrossbarParams> table = [] {
        ParamTable<CrossbarParams> t;
        t.integer("latency_cycles", &CrossbarParams::latency_cycles, 0, 1e6, "One-way latency in core cycles.")
            // At least 1/1000 B/cycle: slower ports make every time in the run absurd (and overflow it).
            .number("bytes_per_cycle_per_port", &CrossbarParams::bytes_per_cycle_per_port, 1e-3, 1e6,
                    "Bytes per core cycle through one port (one per core or SM).");
        return t;
    }();
    return table;
}

Crossbar::Crossbar(const CrossbarParams& p) : params_(p) {
    if (p.requesters <= 0 || p.targets <= 0) throw std::invalid_argument("interconnect: ports must be > 0");
    if (p.latency_cycles < 0) throw std::invalid_argument("interconnect.latency_cycles must be >= 0");
    if (p.bytes_per_cycle_per_port <= 0) throw std::invalid_argument("interconnect.bytes_per_cycle_per_port must be > 0");
    if (p.clock_hz <= 0) throw std::invalid_argument("interconnect: clock must be > 0");
    if (p.output_buffer_transfers < 0) throw std::invalid_argument("interconnect: output_buffer_transfers must be >= 0");
    latency_ps_ = cycles_to_ps(p.latency_cycles, p.clock_hz);
    input_free_.assign(static_cast<std::size_t>(p.requesters), 0);
    held_ps_.assign(static_cast<std::size_t>(p.requesters), 0);
    output_free_.assign(static_cast<std::size_t>(p.targets), 0);
    departures_.assign(static_cast<std::size_t>(p.targets) * static_cast<std::size_t>(p.output_buffer_transfers), 0);
    ring_head_.assign(static_cast<std::size_t>(p.targets), 0);
    occupancy_ps_.resize(kTableBytes + 1);
    for (std::uint32_t b = 0; b <= kTableBytes; ++b) occupancy_ps_[b] = occupancy_ps_uncached(b);
}

void Crossbar::register_stats(StatsRegistry& r, const std::string& prefix) const {
    r.add(stat::crossbar_transfers, {prefix}, &stats_.transfers);
    r.add(stat::crossbar_bytes, {prefix}, &stats_.bytes);
    r.add(stat::crossbar_input_wait_ps, {prefix}, &stats_.input_wait_ps);
    r.add(stat::crossbar_output_wait_ps, {prefix}, &stats_.output_wait_ps);
    r.add(stat::crossbar_backpressure_ps, {prefix}, &stats_.backpressure_ps);
}

// bytes / bytes_per_cycle_per_port cycles, rounded to the picosecond; a transfer of 0 bytes
// counts as 1. Not whole cycles: a 32 B sector on a 64 B/cycle port would otherwise cost the port
// a full cycle and halve its bandwidth for sector traffic (ports carry flits of several transfers).
Picoseconds Crossbar::occupancy_ps_uncached(std::uint32_t bytes) const {
    const double cycles = static_cast<double>(std::max<std::uint32_t>(bytes, 1)) / params_.bytes_per_cycle_per_port;
    return std::max<Picoseconds>(1, static_cast<Picoseconds>(std::llround(cycles * 1e12 / params_.clock_hz)));
}

Picoseconds Crossbar::occupancy_ps(std::uint32_t bytes) const {
    return bytes <= kTableBytes ? occupancy_ps_[bytes] : occupancy_ps_uncached(bytes);
}

void Crossbar::check_ports(int requester, int target) const {
    if (requester < 0 || requester >= params_.requesters || target < 0 || target >= params_.targets)
        throw std::out_of_range("crossbar port out of range: requester " + std::to_string(requester) + ", target " +
                                std::to_string(target));
}

// Books the input port from t_in, then the output port, and the buffer slot until departure.
Picoseconds Crossbar::book(std::size_t t, Picoseconds& in, Picoseconds* slot, Picoseconds t_in, std::uint32_t bytes) {
    const Picoseconds occupancy = occupancy_ps(bytes);
    auto& out = output_free_[t];
    in = t_in + occupancy;
    const Picoseconds t_out = std::max(t_in, out);
    stats_.output_wait_ps += t_out - t_in;
    out = t_out + occupancy;
    if (slot) *slot = out;
    ++stats_.transfers;
    stats_.bytes += bytes;
    return out + latency_ps_;
}

Picoseconds Crossbar::traverse(int requester, int target, std::uint32_t bytes, Picoseconds arrival) {
    check_ports(requester, target);
    const auto t = static_cast<std::size_t>(target);
    auto& in = input_free_[static_cast<std::size_t>(requester)];
    const Picoseconds ready = std::max(arrival, in);
    stats_.input_wait_ps += ready - arrival;
    Picoseconds t_in = ready;
    Picoseconds* slot = nullptr;  // this transfer's entry in the target's departure ring
    if (const auto depth = static_cast<std::uint32_t>(params_.output_buffer_transfers); depth > 0) {
        std::uint32_t& head = ring_head_[t];
        slot = &departures_[t * depth + head];
        head = head + 1 == depth ? 0 : head + 1;
        // The slot holds the departure of the transfer `depth` places earlier at this target:
        // until it has left, the buffer is full and this transfer stays at its input port.
        if (*slot > t_in) {
            stats_.backpressure_ps += *slot - t_in;
            t_in = *slot;
        }
    }
    return book(t, in, slot, t_in, bytes);
}

Picoseconds Crossbar::enter(int requester, std::uint32_t bytes, Picoseconds arrival) {
    check_ports(requester, 0);
    auto& in = input_free_[static_cast<std::size_t>(requester)];
    const Picoseconds t_in = std::max(arrival, in);
    stats_.input_wait_ps += t_in - arrival;
    in = t_in + occupancy_ps(bytes);
    ++stats_.transfers;
    stats_.bytes += bytes;
    return in + latency_ps_;
}

Crossbar::Start Crossbar::try_start(int requester, int target, std::uint32_t bytes, Picoseconds arrival,
                                    Picoseconds now) {
    check_ports(requester, target);
    const auto r = static_cast<std::size_t>(requester);
    const auto t = static_cast<std::size_t>(target);
    auto& in = input_free_[r];
    if (in > now) return {false, in};
    Picoseconds* slot = nullptr;
    if (const auto depth = static_cast<std::uint32_t>(params_.output_buffer_transfers); depth > 0) {
        std::uint32_t& head = ring_head_[t];
        slot = &departures_[t * depth + head];
        if (*slot > now) {  // full until the transfer `depth` places earlier leaves
            stats_.backpressure_ps += *slot - now;
            held_ps_[r] += *slot - now;
            return {false, *slot};
        }
        head = head + 1 == depth ? 0 : head + 1;
    }
    // Its wait since arrival was for its own input port (behind the requester's earlier
    // transfers), except the backpressure already counted.
    const Picoseconds waited = now > arrival ? now - arrival : 0;
    stats_.input_wait_ps += waited - std::min(waited, held_ps_[r]);
    held_ps_[r] = 0;
    return {true, book(t, in, slot, now, bytes)};
}

}  // namespace accelsim::memory
