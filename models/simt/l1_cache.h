#pragma once
// The SM's L1 data cache: sectored (128-byte lines of four 32-byte sectors), set-associative with
// LRU replacement, write-through without allocation (as NVIDIA's L1 treats global stores). It only
// keeps state and decides; the SM sends misses on to the memory port and reports each fill's
// answer back with fill_done(). A load of a sector whose fill is still in flight waits for that
// fill (MSHR-like merge) instead of sending the sector again.
#include <cstdint>
#include <vector>

#include "models/memory/fast_divider.h"

namespace accelsim::simt {

struct L1Params {
    std::int64_t bytes = 0;  // 0 = no L1
    int ways = 4;
    int line_bytes = 128;
    int hit_latency = 33;
};

class L1Cache {
public:
    explicit L1Cache(const L1Params& params);  // throws std::invalid_argument

    enum class Outcome : std::uint8_t {
        hit,             // data present: ready = cycle + hit_latency
        merge,           // fill in flight whose landing is known: ready = max(cycle + hit_latency, landing)
        merge_pending,   // fill in flight, answer not known yet: wait for fill `fill`
        miss,            // new fill `fill`: send the sector on at cycle + hit_latency, then fill_done()
    };
    struct Read {
        Outcome outcome;
        std::uint64_t ready = 0;  // hit, merge
        std::uint32_t fill = 0;   // merge_pending, miss
    };
    // A warp's load of one sector, looked up at `cycle`.
    Read read(std::uint64_t cycle, std::uint32_t sector_address);
    // A store: write-through, no allocate; a cached sector stays valid with the new data.
    void write(std::uint32_t sector_address);
    // Fill `fill` lands at `ready` (SM cycle at which its data is usable). Its id is free afterwards.
    void fill_done(std::uint32_t fill, std::uint64_t ready);
    int hit_latency() const { return params_.hit_latency; }
    // Host-cache hint for read() / write() of a sector: its set's tags, LRU stamps and sectors.
    void prefetch_set(std::uint32_t sector_address) const {
        const std::uint32_t line_address = sector_address / 128u;
        const auto first = static_cast<std::size_t>(sets_div_.mod(line_address)) * static_cast<std::size_t>(params_.ways);
        __builtin_prefetch(&tags_[first]);
        __builtin_prefetch(&last_use_[first]);
        __builtin_prefetch(&sectors_[first]);
        __builtin_prefetch(&sectors_[first + static_cast<std::size_t>(params_.ways) - 1]);
    }
    // Host-cache hints for fill_done(fill): its record, then (once that is loaded) its line.
    void prefetch_fill(std::uint32_t fill) const { __builtin_prefetch(&fills_[fill]); }
    void prefetch_fill_line(std::uint32_t fill) const { __builtin_prefetch(&sectors_[fills_[fill].line]); }

private:
    static constexpr std::uint64_t kPendingBit = std::uint64_t{1} << 63;  // sector_ready = kPendingBit | fill
    // Per line (sets_ x ways, a set's ways adjacent), in separate arrays so that a lookup reads
    // one host cache line of tags and then only the matching line's sectors.
    struct Sectors {
        std::uint64_t ready[4] = {};  // 0 = sector not present
    };
    struct Fill {
        std::size_t line;  // index in the per-line arrays
        int sector;
    };
    // The line of `sector_address` (-1 if absent), its set's first index and its tag + 1.
    long find(std::uint32_t sector_address, std::size_t& first, std::uint32_t& tag) const;
    L1Params params_;
    int sets_;
    memory::FastDivider sets_div_;  // by sets_ (384 on a100, 192 on t4: not powers of two): no divide per lookup
    std::vector<std::uint32_t> tags_;      // tag + 1, 0 = invalid
    std::vector<std::uint64_t> last_use_;  // LRU stamps
    std::vector<Sectors> sectors_;
    std::vector<Fill> fills_;
    std::vector<std::uint32_t> free_fills_;
    std::uint64_t use_counter_ = 0;
};

}  // namespace accelsim::simt
