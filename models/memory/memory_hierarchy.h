#pragma once
// The memory system behind the cores, as plain C++: requesters -> crossbar -> L2 slices -> DRAM
// channels. Every level is busy-until, so a request's completion depends only on the order of
// the calls, never on the SystemC kernel (memory_tlm.h wraps it in TLM-2.0).
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "models/memory/crossbar.h"
#include "models/memory/dram.h"
#include "models/memory/fast_divider.h"
#include "models/memory/l2_cache.h"
#include "models/memory/memory_time.h"
#include "models/memory/traffic.h"

namespace accelsim::memory {

struct MemoryHierarchyParams {
    int requesters = 1;
    double clock_hz = 1e9;                 // chip clock: crossbar and L2 cycles
    CrossbarParams crossbar;               // requesters/targets/clock are filled in by the hierarchy
    std::optional<L2Params> l2;            // none: the crossbar feeds the DRAM directly
    DramParams dram;
};

// A request of the incremental queued mode that has completed (see MemoryHierarchy::queued_issue).
struct QueuedCompletion {
    std::uint64_t tag;           // the caller's, from queued_issue
    Picoseconds issued, done;    // arrival, and data delivered (reads) or accepted (writes)
};

struct MemoryHierarchyStats {
    std::uint64_t requests = 0, bytes_read = 0, bytes_written = 0;
    LatencyHistogram latency;  // per request, arrival to completion
    CrossbarStats crossbar;
    std::optional<L2Stats> l2;
    DramStats dram;
};

class MemoryHierarchy {
public:
    explicit MemoryHierarchy(const MemoryHierarchyParams& params);  // throws std::invalid_argument
    MemoryHierarchy(const MemoryHierarchy&) = delete;  // the L2 holds a callback into this object
    MemoryHierarchy& operator=(const MemoryHierarchy&) = delete;

    // A request from `requester` (0-based); requests crossing L2 lines are split per line.
    // Returns when the read data is delivered or the write is accepted.
    Picoseconds access(int requester, std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds arrival);
    // When a request of `requester` arriving at `arrival` would enter the memory system: after the
    // requester's earlier requests have left its crossbar port. Callers that issue several
    // requesters' requests in this order feed the busy-until DRAM channels in time order.
    Picoseconds entry_time(int requester, Picoseconds arrival) const {
        const Picoseconds free = crossbar_.input_free(requester);
        return arrival > free ? arrival : free;
    }

    // Event-driven replay of `traffic` (request i from requester i mod requesters) with the L2's
    // misses and write-backs scheduled by the DRAM controllers' queues (FR-FCFS when configured),
    // not served one blocking call at a time: each L2 lookup happens at its slice-arrival time,
    // a miss's fill completes when the controllers have decided its bursts, and accesses to a line
    // whose fill is undecided wait for it. Needs an L2 (throws std::logic_error without one) and a
    // fresh hierarchy (do not mix with access()). Results depend only on the inputs.
    DriveResult run_queued(TrafficGenerator& traffic, const DriverParams& driver);

    // The same event engine driven incrementally, for callers that learn their requests as they
    // go (the GPU's memory port, run_queued's driver). The caller merges its own requests with the
    // engine's events in time order: while its next request is due no later than
    // queued_next_event(), it calls queued_issue(); otherwise queued_step() processes that one
    // event. Requests must be issued in non-decreasing time, never before an event already
    // processed. Completed requests are appended to queued_completions() (the caller drains it).
    // A completion is known no later than when the event that decides it is processed, and it
    // lies at least the L2 hit latency after that event: callers use this bound as lookahead.
    // Needs an L2 (throws std::logic_error without one); do not mix with access().
    void queued_issue(int requester, std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds now,
                      std::uint64_t tag);
    Picoseconds queued_next_event();  // DramController::kNeverPs when nothing is pending
    void queued_step();
    bool queued_idle() const;         // no request in flight
    std::vector<QueuedCompletion>& queued_completions();

    MemoryHierarchyStats stats() const;
    void drain_writes(Picoseconds now) { dram_.drain_writes(now); }  // posted DRAM writes
    Picoseconds flush_writes() { return dram_.flush_writes(); }       // Dram::flush_writes
    const MemoryHierarchyParams& params() const { return params_; }
    L2Cache* l2() { return l2_.get(); }  // nullptr without an L2
    const L2Cache* l2() const { return l2_.get(); }
    double peak_dram_bytes_per_second() const { return params_.dram.peak_bytes_per_second(); }

private:
    MemoryHierarchyParams params_;
    Dram dram_;
    std::unique_ptr<L2Cache> l2_;
    Crossbar crossbar_;
    std::uint64_t requests_ = 0, bytes_read_ = 0, bytes_written_ = 0;
    LatencyHistogram latency_;
    FastDivider line_div_;  // L2 line size
    struct QueuedState;     // the queued mode's events and requests (hierarchy_queued.cpp)
    struct QueuedStateDeleter {
        void operator()(QueuedState* state) const;
    };
    std::unique_ptr<QueuedState, QueuedStateDeleter> queued_;
    QueuedState& queued();
};

}  // namespace accelsim::memory
