#pragma once
// Sectored L2 cache: 128 B lines of four 32 B sectors, set-associative with LRU, write-back and
// write-allocate, MSHRs that merge misses to a line in flight, slices chosen by an address hash,
// each slice with its own bandwidth (busy-until) and hit latency. Misses and write-backs go to
// the next level through a blocking callback, so the cache composes with any memory behind it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/common/stats.h"
#include "models/memory/memory_time.h"

namespace accelsim::memory {

struct L2Params {
    std::int64_t size_bytes = 4 << 20;   // total over all slices
    int slices = 1;
    int ways = 16;
    int line_bytes = 128;
    int sector_bytes = 32;
    int mshrs_per_slice = 64;            // outstanding line fills per slice
    double bytes_per_cycle_per_slice = 64;
    int hit_latency_cycles = 200;        // request in to data out, unloaded
    double clock_hz = 1e9;               // the cycles above are of this clock
};

void validate(const L2Params& params);  // throws std::invalid_argument naming the field

struct L2Stats {
    std::uint64_t accesses = 0, hits = 0, misses = 0, sector_misses = 0, mshr_merges = 0;
    std::uint64_t evictions = 0, writebacks = 0;
    std::uint64_t bytes_read = 0, bytes_written = 0;          // by requesters
    std::uint64_t fill_bytes = 0, writeback_bytes = 0;        // to/from the next level
    Picoseconds busy_ps = 0;                                  // slice port occupancy, summed
    double hit_rate() const { return accesses ? static_cast<double>(hits) / static_cast<double>(accesses) : 0.0; }
};

class L2Cache {
public:
    // next_level(address, bytes, write, arrival) -> completion
    using NextLevel = std::function<Picoseconds(std::uint64_t, std::uint32_t, bool, Picoseconds)>;

    L2Cache(const L2Params& params, NextLevel next_level);  // validates

    // One request within one line (callers split larger ones); returns when its data is delivered
    // (reads) or accepted (writes).
    Picoseconds access(std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds arrival);

    int slice_of(std::uint64_t address) const;
    std::int64_t sets_per_slice() const { return sets_; }
    const L2Stats& stats() const { return stats_; }
    void register_stats(StatsRegistry& registry, const std::string& prefix) const;
    const L2Params& params() const { return params_; }

private:
    struct Line {                     // state of a present line; its tag lives in Slice::tags
        Picoseconds ready = 0;        // when the latest fill of this line lands
        std::uint8_t valid = 0, dirty = 0;  // sector masks
    };
    struct Slice {
        // Tags and LRU stamps in their own arrays: a lookup scans one set's tags (16 x 8 B), not
        // whole line records, which keeps a 40 MB cache's host-cache footprint small.
        std::vector<std::uint64_t> tags;      // sets_ * ways, set-major; line address + 1, 0 = empty
        std::vector<std::uint64_t> last_use;  // LRU stamps
        std::vector<Line> lines;
        std::vector<Picoseconds> mshr_free;   // busy-until per MSHR
        Picoseconds port_free = 0;
    };
    std::uint8_t sector_mask(std::uint64_t address, std::uint32_t bytes) const;       // sectors touched
    std::uint8_t full_sector_mask(std::uint64_t address, std::uint32_t bytes) const;  // sectors wholly covered

    L2Params params_;
    NextLevel next_;
    std::int64_t sets_;
    std::uint64_t line_bytes_, sector_bytes_;
    int sectors_per_line_;
    Picoseconds cycle_ps_, hit_latency_ps_;
    std::vector<Slice> slices_;
    std::uint64_t use_clock_ = 0;
    L2Stats stats_;
};

}  // namespace accelsim::memory
