#pragma once
// Crossbar between N requesters (cores, SMs) and M targets (L2 slices), buffered at the output
// ports: every input and output port moves bytes_per_cycle_per_port, modelled as busy-until on
// each port separately, plus a fixed latency. A transfer holds its input port only for its own
// serialization and then waits in the target's output buffer, so a busy target does not block its
// requester's transfers to other targets (no head-of-line blocking) until that buffer is full.
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/stats.h"
#include "models/common/param_table.h"
#include "models/memory/memory_time.h"

namespace accelsim::memory {

struct CrossbarParams {
    int requesters = 1;
    int targets = 1;
    int latency_cycles = 0;                // one way, unloaded, after the output port
    double bytes_per_cycle_per_port = 64;
    double clock_hz = 1e9;
    // Transfers each output port can hold between leaving their input port and leaving the
    // output port (its queue). When it is full, a transfer waits at its input port, and so do
    // the transfers behind it from the same requester (backpressure). 0 = unbounded. Default 64:
    // the default of GPGPU-Sim's local crossbar option -icnt_out_buffer_limit (Accel-Sim's Volta
    // config raises it to 512); on a100 saxpy it costs 0.1 ns of backpressure per transfer.
    int output_buffer_transfers = 64;
};

// The config's `interconnect` section (the ports and the clock are the chip's).
const ParamTable<CrossbarParams>& crossbar_param_table();

struct CrossbarStats {
    std::uint64_t transfers = 0, bytes = 0;
    Picoseconds input_wait_ps = 0;     // waiting for the requester's own input port (serialization)
    Picoseconds output_wait_ps = 0;    // buffered, waiting for the target's output port
    Picoseconds backpressure_ps = 0;   // held at the input port because the output buffer was full
};

class Crossbar {
public:
    explicit Crossbar(const CrossbarParams& params);  // throws std::invalid_argument

    // Moves `bytes` from requester to target; returns when the last byte arrives. A transfer
    // occupies its input port, then its output port, each for bytes / bytes_per_cycle_per_port
    // cycles, to the picosecond (the port's bandwidth; cut-through: the output may start as the
    // input starts):
    //   t_in  = max(arrival, input free, departure of the transfer output_buffer_transfers earlier
    //           at this target);                 input free  = t_in + occupancy
    //   t_out = max(t_in, output free);           output free = t_out + occupancy
    //   done  = t_out + occupancy + latency.
    // Books the ports at call time, so calls must come in arrival order per port for the busy-until
    // times to mean what they say (the blocking hierarchy path).
    Picoseconds traverse(int requester, int target, std::uint32_t bytes, Picoseconds arrival);

    // A transfer to the memory controllers of a chip with no L2: the crossbar's outputs are then
    // the (pseudo-)channels, each port far faster than its channel (the DRAM model limits those),
    // so only the requester's input port is booked:
    //   t_in = max(arrival, input free);  input free = t_in + occupancy;  done = input free + latency.
    // One shared output port instead would cap the whole chip at one port's bandwidth.
    Picoseconds enter(int requester, std::uint32_t bytes, Picoseconds arrival);
    // When the requester's input port is free (a transfer arriving earlier waits until then).
    Picoseconds input_free(int requester) const { return input_free_[static_cast<std::size_t>(requester)]; }

    // The same transfer, for a caller that walks time in order (the queued hierarchy engine): the
    // transfer is at the head of its requester's queue at `now` (it arrived at `arrival`). If its
    // input port is free and the target's buffer has room it starts now: ports are booked and
    // `started` is true with `time` = when its last byte reaches the target. Otherwise nothing is
    // booked and `time` is when to try again (input port free, or the buffer's oldest transfer
    // gone). Booking only when a transfer starts keeps a requester held by a full buffer from
    // reserving another target's output port for a future time, ahead of other requesters that
    // reach it sooner (traverse would).
    struct Start {
        bool started;
        Picoseconds time;
    };
    Start try_start(int requester, int target, std::uint32_t bytes, Picoseconds arrival, Picoseconds now);

    const CrossbarStats& stats() const { return stats_; }
    void register_stats(StatsRegistry& registry, const std::string& prefix) const;
    const CrossbarParams& params() const { return params_; }

private:
    CrossbarParams params_;
    Picoseconds latency_ps_;
    std::vector<Picoseconds> input_free_, output_free_;
    std::vector<Picoseconds> held_ps_;  // try_start: backpressure of each requester's head so far
    // Per target, a ring of the departure times of its last output_buffer_transfers transfers;
    // departures from one output port are in call order, so the oldest entry is the slot to wait for.
    std::vector<Picoseconds> departures_;
    std::vector<std::uint32_t> ring_head_;
    std::vector<Picoseconds> occupancy_ps_;  // port time by transfer bytes, 0..kTableBytes
    void check_ports(int requester, int target) const;
    Picoseconds book(std::size_t target, Picoseconds& input_free, Picoseconds* slot, Picoseconds t_in, std::uint32_t bytes);
    static constexpr std::uint32_t kTableBytes = 1024;
    Picoseconds occupancy_ps(std::uint32_t bytes) const;
    Picoseconds occupancy_ps_uncached(std::uint32_t bytes) const;
    CrossbarStats stats_;
};

}  // namespace accelsim::memory
