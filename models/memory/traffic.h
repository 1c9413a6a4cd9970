#pragma once
// Synthetic memory traffic (what `accelsim membench` and the benchmarks drive) and the two drivers
// that replay it: a queued driver for a DRAM device alone (the controllers' FR-FCFS queues see
// many requests at once) and a windowed driver for any blocking target (the hierarchy).
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "models/memory/dram.h"
#include "models/memory/memory_time.h"

namespace accelsim::memory {

enum class TrafficPattern {
    stream,   // consecutive requests at consecutive addresses
    random,   // uniform over the footprint, aligned to the request size (seeded)
    strided,  // request i at i * stride (modulo the footprint), or at address_of_request(i)
    mixed,    // triad-like: two read streams and one write stream in separate regions, interleaved
};
TrafficPattern traffic_pattern_from_name(const std::string& name);  // throws std::invalid_argument
const char* to_string(TrafficPattern p);

struct TrafficParams {
    TrafficPattern pattern = TrafficPattern::stream;
    std::uint64_t total_bytes = 1 << 20;   // requests = total_bytes / request_bytes
    std::uint32_t request_bytes = 64;
    std::uint64_t stride_bytes = 4096;     // strided only
    std::uint64_t footprint_bytes = 1ull << 32;  // random / strided wrap-around range
    std::uint64_t base_address = 0;
    std::uint64_t seed = 1;
    // Strided only, when set: request i's address (base_address and stride_bytes unused). membench's
    // default walks the rows of one bank through the address map, whatever its channel hashing.
    std::function<std::uint64_t(std::uint64_t request)> address_of_request;
};

struct MemoryRequest {
    std::uint64_t address = 0;
    std::uint32_t bytes = 0;
    bool write = false;
};

class TrafficGenerator {
public:
    explicit TrafficGenerator(const TrafficParams& params);  // throws std::invalid_argument
    bool next(MemoryRequest& request);  // false when all requests have been produced
    std::uint64_t total_requests() const { return total_; }

private:
    TrafficParams p_;
    std::uint64_t total_, issued_ = 0;
    std::mt19937_64 rng_;
};

struct DriveResult {
    std::uint64_t requests = 0, bytes = 0;
    Picoseconds first_issue = 0, last_completion = 0;
    LatencyHistogram latency;  // issue to completion, per request
    double achieved_bytes_per_second() const {
        return last_completion > first_issue
                   ? static_cast<double>(bytes) * 1e12 / static_cast<double>(last_completion - first_issue)
                   : 0.0;
    }
};

struct DriverParams {
    int max_outstanding = 256;           // requests in flight at once (the requesters' MLP)
    Picoseconds issue_interval_ps = 0;   // minimum time between two issues (0: no limit)
};

// Event-driven replay against a DRAM device alone, through its controllers' queues: requests are
// split into bursts and enqueued in order (a full controller queue stalls issue, as in hardware),
// each controller decides one command per tCK at most with its scheduler (FR-FCFS or FCFS).
DriveResult drive_dram_queued(Dram& dram, TrafficGenerator& traffic, const DriverParams& driver);

// Replay against any blocking target `access(request, arrival) -> completion`.
using BlockingAccess = std::function<Picoseconds(const MemoryRequest&, Picoseconds)>;
DriveResult drive_blocking(const BlockingAccess& access, TrafficGenerator& traffic, const DriverParams& driver);

}  // namespace accelsim::memory
