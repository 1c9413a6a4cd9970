#pragma once
// Sectored L2 cache: 128 B lines of four 32 B sectors, set-associative with LRU, write-back and
// write-allocate, MSHRs that merge misses to a line in flight, slices chosen by an address hash,
// each slice with its own bandwidth (busy-until) and hit latency. Misses and write-backs go to
// the next level through a blocking callback, so the cache composes with any memory behind it.
#include <cstdint>
#include <utility>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/common/stats.h"
#include "models/memory/fast_divider.h"
#include "models/common/param_table.h"
#include "models/memory/memory_time.h"
#include "models/memory/ring_queue.h"

namespace accelsim::memory {

class Dram;

struct L2Params {
    std::int64_t size_bytes = 0;         // total over all slices; 0 = no L2 (a chip's config may say so)
    int slices = 1;
    int ways = 16;                       // 1..255
    int line_bytes = 128;
    int sector_bytes = 32;
    int mshrs_per_slice = 64;            // outstanding line fills per slice
    double bytes_per_cycle_per_slice = 64;
    int hit_latency_cycles = 200;        // request in to data out, unloaded
    double clock_hz = 1e9;               // the cycles above are of this clock
};

void validate(const L2Params& params);  // throws std::invalid_argument naming the field

// The config's `l2` section (clock_hz is the chip's).
const ParamTable<L2Params>& l2_param_table();

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
    // The same with a DRAM device behind it, called directly (no std::function on the hot path).
    // `next_level` must outlive the cache.
    L2Cache(const L2Params& params, Dram& next_level);

    // One request within one line (callers split larger ones); returns when its data is delivered
    // (reads) or accepted (writes).
    Picoseconds access(std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds arrival) {
        return access(address, bytes, write, arrival, slice_of(address));
    }
    // The same when the caller already knows slice == slice_of(address) (the hierarchy needs it
    // for the crossbar first); saves hashing twice.
    Picoseconds access(std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds arrival, int slice);

    // ---- Deferred fills, for queued drivers (drive_hierarchy_queued) whose DRAM schedules misses
    // in its own queues. Misses do not call the next level: they start a *fill* with an id whose
    // requests the caller sends on, and whose completion the caller reports with resolve_fill().
    // A line with a fill in flight is pending; later accesses to it wait for that fill.
    struct NextLevelRequest {
        std::uint64_t address = 0;
        std::uint32_t bytes = 0;
        std::int64_t fill = -1;  // the fill it belongs to; -1 for a write-back
    };
    struct DeferredOutcome {
        // Completion = max(floor, completion of each fill in `waits` + hit latency).
        Picoseconds floor = 0;
        std::int64_t waits[2] = {-1, -1};
        std::int64_t new_fill = -1;       // fill started by this access (requests in `requests`)
        bool new_fill_blocked = false;    // no MSHR free: it issues when resolve_fill releases it
        Picoseconds new_fill_issue = 0;   // when its requests leave the slice (if not blocked)
    };
    DeferredOutcome access_deferred(std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds arrival,
                                    int slice, std::vector<NextLevelRequest>& requests);
    // Records that `fill` completed at `done`; appends (fill, issue time) for fills of the same
    // slice that were waiting for an MSHR and may now issue. The caller must not refer to `fill`
    // afterwards: its id may be reused by a later fill (ids stay below the fills in flight).
    void resolve_fill(std::int64_t fill, Picoseconds done, std::vector<std::pair<std::int64_t, Picoseconds>>& released);
    // ---- Contents carried from one kernel to the next (a GPU's L2 keeps its lines across launches).
    struct ResidentLine {
        std::uint64_t line_address = 0;  // address / line_bytes
        std::uint8_t valid = 0, dirty = 0;  // sector masks
    };
    // Every line held, least recently used first (by rank within its set; sets in order).
    std::vector<ResidentLine> resident_lines() const;
    // Puts `line` in as the most recently used of its set, data ready, without a request or a
    // stat. When the set is full its least recently used line leaves and is returned (the caller
    // owes its dirty sectors a write-back); else nullopt. A line already held merges its masks
    // and keeps any fill in flight.
    std::optional<ResidentLine> install(const ResidentLine& line);
    // An access of work that was not simulated (wave sampling's skipped blocks), in the middle of
    // a run: the line is left as the access would leave it (the set's most recently used, its
    // sectors valid, and dirty for a write) with no time, no request and no stat. A line already
    // held keeps any fill in flight; otherwise the set's least recently used line leaves, dropped:
    // its write-back, like the rest of the skipped work's traffic, is the sampled op's
    // extrapolated counters' business.
    void record_untimed_access(std::uint64_t address, std::uint32_t bytes, bool write);
    Picoseconds hit_latency_ps() const { return hit_latency_ps_; }

    int slice_of(std::uint64_t address) const;
    // Hint: starts loading the host memory that access(address, ..., slice) will read, so that a
    // caller with other work to do first (the crossbar) overlaps the host cache misses with it.
    void prefetch(std::uint64_t address, int slice) const;
    // Hint: starts loading the record resolve_fill(fill, ...) will read first (a deferred fill in
    // flight), for a caller that knows which fill is likely to land next.
    void prefetch_fill(std::int64_t fill) const {
        if (static_cast<std::size_t>(fill) >= fills_.size()) return;
        const auto* rec = reinterpret_cast<const char*>(&fills_[static_cast<std::size_t>(fill)]);
        __builtin_prefetch(rec);
        __builtin_prefetch(rec + sizeof(FillRecord) - 1);
    }
    std::int64_t sets_per_slice() const { return sets_; }
    const L2Stats& stats() const { return stats_; }
    void register_stats(StatsRegistry& registry, const std::string& prefix) const;
    const L2Params& params() const { return params_; }

private:
    // Host layout: one contiguous block per set, cache-line aligned, holding
    //   valid[ways] dirty[ways] lru_rank[ways] (bytes) | tags[ways] | ready[ways] (8-byte words),
    // so a lookup touches one set's few host cache lines and nothing else (a 40 MiB cache has
    // 6 MB of state; separate per-field arrays cost a host cache miss per field). LRU is kept as a
    // rank per way (0 = most recent), which orders the ways exactly as global use stamps would.
    struct SetView {
        std::uint8_t* valid;
        std::uint8_t* dirty;
        std::uint8_t* rank;
        // 1 while the way's ready word names a deferred fill (kPendingBit | id): an eviction reads
        // it here, beside the rank and dirty bytes it reads anyway, not in the ready words' lines.
        std::uint8_t* pending;
        std::uint64_t* tags;   // line address + 1, 0 = empty; valid ways are always a prefix
        Picoseconds* ready;    // when the latest fill of the way's line lands
    };
    struct Slice {
        // Busy-until per MSHR as a ring sorted ascending from mshr_head: the earliest free MSHR is
        // at the head, and a new fill (usually the latest) goes in near the tail.
        std::vector<Picoseconds> mshr_free;
        std::size_t mshr_head = 0;
        std::size_t mshr_pending = 0;  // deferred: MSHRs held by undecided fills (the ring's tail)
        Picoseconds port_free = 0;
        // Deferred: (fill, start). A ring, not a std::deque: its front is read once per landing
        // fill of the slice, and a deque reaches it through its block map (two host cache misses).
        RingQueue<std::pair<std::int64_t, Picoseconds>> blocked_fills;
    };
    struct FillRecord {  // deferred fills
        std::size_t block_offset;  // words from storage_.data() + sets_offset_
        int slice, way;
        std::int64_t after = -1;        // older fill of the same line still in flight
        Picoseconds done = 0, max_with = 0;
        int newer = 0;                  // fills whose `after` names this one
        bool resolved = false;
        // The line's ready word names this fill (kPendingBit | id): kept up to date wherever that
        // word changes, so that a landing fill need not read its set (a host cache miss) to know.
        bool names_line = false;
    };
    void release_fill_id(std::int64_t fill);  // recycles an id once nothing can refer to it
    void release_line_name(const SetView& set, int way);  // the way's ready word is to be overwritten
    static constexpr Picoseconds kPendingBit = Picoseconds{1} << 63;  // ready = kPendingBit | fill
    static constexpr Picoseconds kMshrPending = ~Picoseconds{0};
    std::int64_t start_deferred_fill(Slice& slice, int slice_index, const SetView& set, std::size_t block_offset,
                                     int way, std::uint64_t line_addr, std::uint8_t missing, Picoseconds start,
                                     std::vector<NextLevelRequest>& requests, DeferredOutcome& outcome);
    static void mshr_insert(Slice& slice, std::size_t slot, Picoseconds value, std::size_t sorted_before);
    std::vector<FillRecord> fills_;
    std::vector<std::int64_t> free_fill_ids_;
    void init();
    std::uint64_t* set_block(std::size_t slice, std::uint64_t address);
    const std::uint64_t* set_block(std::size_t slice, std::uint64_t address) const;
    SetView set_view(std::uint64_t* block) const;
    void touch(const SetView& set, int way) const;  // makes `way` the most recently used
    Picoseconds occupy_port(Slice& slice, std::uint32_t bytes, bool write, Picoseconds arrival);
    std::pair<int, int> find_way(const SetView& set, std::uint64_t tag) const;  // {found, empty}
    Picoseconds next_level(std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds at);
    Picoseconds fill(Slice& slice, std::uint64_t line_addr, Picoseconds& line_ready, std::uint8_t& line_valid,
                     std::uint8_t missing, Picoseconds when);
    Picoseconds occupancy_ps(std::uint32_t bytes) const;
    Picoseconds occupancy_ps_uncached(std::uint32_t bytes) const;
    std::uint8_t sector_mask(std::uint64_t address, std::uint32_t bytes) const;       // sectors touched
    std::uint8_t full_sector_mask(std::uint64_t address, std::uint32_t bytes) const;  // sectors wholly covered

    L2Params params_;
    NextLevel next_;
    Dram* dram_ = nullptr;  // when set, misses go straight to it instead of next_
    std::int64_t sets_;
    std::uint64_t line_bytes_, sector_bytes_;
    int sectors_per_line_;
    FastDivider line_div_, sector_div_, slice_div_, set_div_;
    Picoseconds cycle_ps_, hit_latency_ps_;
    std::vector<Picoseconds> occupancy_ps_;  // slice port time by request bytes, 0..line_bytes
    std::vector<Slice> slices_;
    std::size_t words_per_set_ = 0;
    std::vector<std::uint64_t> storage_;     // all sets of all slices
    std::size_t sets_offset_ = 0;            // words from storage_.data() to a 64-byte boundary
                                             // (an offset, not a pointer, so copies stay valid)
    L2Stats stats_;
};

}  // namespace accelsim::memory
