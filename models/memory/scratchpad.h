#pragma once
// Software-managed scratchpad (TPU VMEM, CMEM, unified buffer): a capacity handed out by
// allocate/free, and a banked array whose ports move bank_bytes per bank per cycle.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/common/stats.h"
#include "models/memory/memory_time.h"

namespace accelsim::memory {

struct ScratchpadParams {
    std::string name = "scratchpad";   // used in error messages ("vmem", "cmem", "unified_buffer")
    std::int64_t capacity_bytes = 16 << 20;
    int banks = 16;                     // interleaved every bank_bytes
    int bank_bytes = 64;                // per bank per cycle
    int ports = 1;                      // independent accesses per cycle
    int latency_cycles = 1;             // unloaded access latency
    std::int64_t alignment = 64;        // allocations are rounded up to this
    double clock_hz = 1e9;
};

// Thrown when an allocation does not fit: the lowering catches it to re-tile.
struct ScratchpadCapacityError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct ScratchpadStats {
    std::uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0;
    Picoseconds busy_ps = 0;
    std::int64_t peak_allocated = 0;
};

class Scratchpad {
public:
    explicit Scratchpad(const ScratchpadParams& params);  // throws std::invalid_argument

    // First fit; returns the offset. Throws ScratchpadCapacityError naming the scratchpad, the
    // request and the space left when no free block is large enough.
    std::int64_t allocate(std::int64_t bytes);
    void free(std::int64_t offset);  // throws std::invalid_argument for an unknown offset
    std::int64_t allocated_bytes() const { return allocated_; }
    std::int64_t free_bytes() const { return params_.capacity_bytes - allocated_; }

    // Cycles the array is busy for one contiguous access: the busiest bank's words.
    std::int64_t access_cycles(std::int64_t address, std::int64_t bytes) const;
    // Busy-until over the ports; returns when the data is available (reads) or written.
    Picoseconds access(std::int64_t address, std::int64_t bytes, bool write, Picoseconds arrival);

    const ScratchpadStats& stats() const { return stats_; }
    void register_stats(StatsRegistry& registry, const std::string& prefix) const;
    const ScratchpadParams& params() const { return params_; }

private:
    ScratchpadParams params_;
    std::map<std::int64_t, std::int64_t> free_blocks_;  // offset -> size, coalesced
    std::map<std::int64_t, std::int64_t> used_blocks_;  // offset -> size
    std::int64_t allocated_ = 0;
    std::vector<Picoseconds> port_free_;
    Picoseconds cycle_ps_, latency_ps_;
    ScratchpadStats stats_;
};

}  // namespace accelsim::memory
