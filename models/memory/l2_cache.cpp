#include "models/memory/l2_cache.h"

#include "models/memory/dram.h"
#include "models/memory/memory_stats.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

namespace accelsim::memory {

void validate(const L2Params& p) {
    auto require = [](bool ok, const std::string& what) {
        if (!ok) throw std::invalid_argument("l2: " + what);
    };
    require(p.slices > 0, "slices must be > 0");
    require(p.ways > 0 && p.ways <= 255, "ways must be in 1..255");
    require(p.line_bytes > 0 && p.sector_bytes > 0 && p.line_bytes % p.sector_bytes == 0,
            "line_bytes must be a positive multiple of sector_bytes");
    require(p.line_bytes / p.sector_bytes <= 8, "at most 8 sectors per line");
    require(p.size_bytes > 0 && p.size_bytes % (static_cast<std::int64_t>(p.slices) * p.ways * p.line_bytes) == 0,
            "size_bytes must be a positive multiple of slices x ways x line_bytes");
    require(p.size_bytes / p.line_bytes <= (std::int64_t{1} << 28), "size_bytes must be at most 2^28 lines");
    require(p.mshrs_per_slice > 0 && p.mshrs_per_slice <= 65536, "mshrs_per_slice must be in 1..65536");
    require(p.bytes_per_cycle_per_slice > 0, "bytes_per_cycle_per_slice must be > 0");
    require(p.hit_latency_cycles >= 0, "hit_latency_cycles must be >= 0");
    require(p.clock_hz > 0, "clock must be > 0");
}

const ParamTable<L2Params>& l2_param_table() {
    static const ParamTable<L2Params> table = [] {
        ParamTable<L2Params> t;
        t.integer("size_bytes", &L2Params::size_bytes, 0, kTiB,
                  "Capacity in bytes; 0 = no L2. Must be a multiple of slices × ways × line_bytes.")
            .integer("slices", &L2Params::slices, 1, 1024, "Independent slices (address-interleaved).")
            .integer("ways", &L2Params::ways, 1, 128, "Associativity.")
            .integer("line_bytes", &L2Params::line_bytes, 1, 4096, "Line size in bytes (a multiple of sector_bytes).")
            .integer("sector_bytes", &L2Params::sector_bytes, 1, 4096, "Sector (fill granule) size in bytes.")
            .integer("mshrs_per_slice", &L2Params::mshrs_per_slice, 1, 65536, "Outstanding misses per slice.")
            .number("bytes_per_cycle_per_slice", &L2Params::bytes_per_cycle_per_slice, 1e-3, 1e6,
                    "Bandwidth of one slice in bytes per core cycle (at least 1/1000).")
            .integer("hit_latency_cycles", &L2Params::hit_latency_cycles, 0, 1e6,
                     "Load-to-use latency of an L2 hit in core cycles.");
        return t;
    }();
    return table;
}

L2Cache::L2Cache(const L2Params& params, NextLevel next_level)
    : params_((validate(params), params)),
      next_(std::move(next_level)),
      sets_(params.size_bytes / (static_cast<std::int64_t>(params.slices) * params.ways * params.line_bytes)),
      line_bytes_(static_cast<std::uint64_t>(params.line_bytes)),
      sector_bytes_(static_cast<std::uint64_t>(params.sector_bytes)),
      sectors_per_line_(params.line_bytes / params.sector_bytes),
      line_div_(line_bytes_),
      sector_div_(sector_bytes_),
      slice_div_(static_cast<std::uint64_t>(params.slices)),
      set_div_(static_cast<std::uint64_t>(sets_)),
      cycle_ps_(cycles_to_ps(1, params.clock_hz)),
      hit_latency_ps_(cycles_to_ps(params.hit_latency_cycles, params.clock_hz)),
      slices_(static_cast<std::size_t>(params.slices)) {
    init();
}

L2Cache::L2Cache(const L2Params& params, Dram& next_level) : L2Cache(params, NextLevel{}) { dram_ = &next_level; }

void L2Cache::init() {
    for (auto& s : slices_) s.mshr_free.assign(static_cast<std::size_t>(params_.mshrs_per_slice), 0);
    // Slice port occupancy by request size, computed once exactly as the per-request formula would.
    occupancy_ps_.resize(line_bytes_ + 1);
    for (std::uint32_t b = 0; b <= line_bytes_; ++b) occupancy_ps_[b] = occupancy_ps_uncached(b);
    const auto ways = static_cast<std::size_t>(params_.ways);
    const std::size_t meta_words = (4 * ways + 7) / 8;  // valid, dirty, rank, pending bytes
    words_per_set_ = (meta_words + 2 * ways + 7) / 8 * 8;  // whole 64-byte host cache lines
    const std::size_t sets = static_cast<std::size_t>(sets_) * slices_.size();
    storage_.assign(sets * words_per_set_ + 8, 0);
    auto addr = reinterpret_cast<std::uintptr_t>(storage_.data());
    sets_offset_ = ((64 - addr % 64) % 64) / sizeof(std::uint64_t);
    for (std::size_t i = 0; i < sets; ++i) {
        auto* rank = reinterpret_cast<std::uint8_t*>(storage_.data() + sets_offset_ + i * words_per_set_) + 2 * ways;
        for (std::size_t w = 0; w < ways; ++w) rank[w] = static_cast<std::uint8_t>(w);
    }
}

const std::uint64_t* L2Cache::set_block(std::size_t slice, std::uint64_t address) const {
    // Lines are spread over slices by the hash, so the set index uses the line address above it.
    const std::uint64_t set = set_div_.mod(slice_div_.div(line_div_.div(address)));
    return storage_.data() + sets_offset_ + (slice * static_cast<std::size_t>(sets_) + set) * words_per_set_;
}

std::uint64_t* L2Cache::set_block(std::size_t slice, std::uint64_t address) {
    return const_cast<std::uint64_t*>(static_cast<const L2Cache&>(*this).set_block(slice, address));
}

void L2Cache::prefetch(std::uint64_t address, int slice) const {
    const std::uint64_t* block = set_block(static_cast<std::size_t>(slice), address);
    for (std::size_t w = 0; w < words_per_set_; w += 8) __builtin_prefetch(block + w, 1);
}

L2Cache::SetView L2Cache::set_view(std::uint64_t* block) const {
    const auto ways = static_cast<std::size_t>(params_.ways);
    auto* bytes = reinterpret_cast<std::uint8_t*>(block);
    std::uint64_t* tags = block + (4 * ways + 7) / 8;
    return SetView{bytes, bytes + ways, bytes + 2 * ways, bytes + 3 * ways, tags, tags + ways};
}

void L2Cache::touch(const SetView& set, int way) const {
    // Every way more recent than `way` ages by one; `way` becomes the most recent. The ranks stay
    // a permutation, and the empty ways (a suffix) keep the largest ranks.
    const std::uint8_t r = set.rank[way];
    int w = 0;
    if (params_.ways <= 128) {
        // Eight ranks per 64-bit word: with every rank below 128, byte i of (r + 127) * ones - x
        // has its top bit set exactly when x_i < r, and no byte borrows from or carries into the next.
        constexpr std::uint64_t ones = 0x0101010101010101ull, tops = 0x8080808080808080ull;
        const std::uint64_t bound = ones * (static_cast<std::uint64_t>(r) + 127);
        for (; w + 8 <= params_.ways; w += 8) {
            std::uint64_t x;
            std::memcpy(&x, set.rank + w, sizeof x);
            x += ((bound - x) & tops) >> 7;
            std::memcpy(set.rank + w, &x, sizeof x);
        }
    }
    for (; w < params_.ways; ++w) set.rank[w] = static_cast<std::uint8_t>(set.rank[w] + (set.rank[w] < r));
    set.rank[way] = 0;
}

Picoseconds L2Cache::next_level(std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds at) {
    return dram_ ? dram_->access(address, bytes, write, at) : next_(address, bytes, write, at);
}

Picoseconds L2Cache::occupancy_ps(std::uint32_t bytes) const {
    return bytes <= line_bytes_ ? occupancy_ps_[bytes] : occupancy_ps_uncached(bytes);
}

// bytes / bytes_per_cycle_per_slice cycles, to the picosecond (a request of 0 bytes counts as 1):
// the slice's bandwidth. Whole cycles would let 32 B sectors use half of a 64 B/cycle slice (the
// A100's 5120 B/clk would be 2560 for sector traffic).
Picoseconds L2Cache::occupancy_ps_uncached(std::uint32_t bytes) const {
    const double cycles = static_cast<double>(std::max<std::uint32_t>(bytes, 1)) / params_.bytes_per_cycle_per_slice;
    return std::max<Picoseconds>(1, static_cast<Picoseconds>(std::llround(cycles * 1e12 / params_.clock_hz)));
}

void L2Cache::register_stats(StatsRegistry& r, const std::string& prefix) const {
    r.add(stat::l2_accesses, {prefix}, &stats_.accesses);
    r.add(stat::l2_hits, {prefix}, &stats_.hits);
    r.add(stat::l2_misses, {prefix}, &stats_.misses);
    r.add(stat::l2_sector_misses, {prefix}, &stats_.sector_misses);
    r.add(stat::l2_mshr_merges, {prefix}, &stats_.mshr_merges);
    r.add(stat::l2_evictions, {prefix}, &stats_.evictions);
    r.add(stat::l2_writebacks, {prefix}, &stats_.writebacks);
    r.add(stat::l2_bytes_read, {prefix}, &stats_.bytes_read);
    r.add(stat::l2_bytes_written, {prefix}, &stats_.bytes_written);
    r.add(stat::l2_fill_bytes, {prefix}, &stats_.fill_bytes);
    r.add(stat::l2_writeback_bytes, {prefix}, &stats_.writeback_bytes);
    r.add(stat::l2_busy_ps, {prefix}, &stats_.busy_ps);
}

int L2Cache::slice_of(std::uint64_t address) const {
    // Each run of `slices` consecutive lines covers every slice once (a rotation of the run by a
    // hash of its index), so that a stream fills every set of every slice evenly and the LRU
    // evicts in the stream's order; the mixed hash spreads power-of-two strides.
    const std::uint64_t line = line_div_.div(address);
    const std::uint64_t run = slice_div_.div(line);
    return static_cast<int>(slice_div_.mod(slice_div_.mod(line) + slice_div_.mod(mix_run_index(run))));
}

std::uint8_t L2Cache::sector_mask(std::uint64_t address, std::uint32_t bytes) const {
    const std::uint64_t offset = line_div_.mod(address);
    std::uint64_t end = offset + std::max<std::uint32_t>(bytes, 1);
    if (end > line_bytes_) end = line_bytes_;  // callers split requests at line boundaries
    // Sectors first..last inclusive.
    const std::uint64_t first = sector_div_.div(offset), last = sector_div_.div(end - 1);
    return static_cast<std::uint8_t>(((1u << (last + 1)) - 1) & ~((1u << first) - 1));
}

Picoseconds L2Cache::fill(Slice& slice, std::uint64_t line_addr, Picoseconds& line_ready, std::uint8_t& line_valid,
                          std::uint8_t missing, Picoseconds when) {
    // Take the MSHR that frees first (the head of the sorted ring); a fill waits for one when all
    // are busy. Only the multiset of free times matters, so any MSHR with the minimum will do.
    auto& pool = slice.mshr_free;
    const std::size_t n = pool.size();
    const std::size_t taken = slice.mshr_head;
    const Picoseconds issue = std::max(when, pool[taken]);
    Picoseconds done = issue;
    for (int s = 0; s < sectors_per_line_; ++s) {
        if (!((missing >> s) & 1u)) continue;
        int e = s;  // contiguous missing sectors go out as one request
        while (e + 1 < sectors_per_line_ && ((missing >> (e + 1)) & 1u)) ++e;
        const auto n = static_cast<std::uint32_t>((e - s + 1) * params_.sector_bytes);
        done = std::max(done, next_level(line_addr * line_bytes_ + static_cast<std::uint64_t>(s) * sector_bytes_, n,
                                         false, issue));
        stats_.fill_bytes += n;
        s = e;
    }
    // The taken slot becomes the ring's last position; move `done` back to its sorted place.
    slice.mshr_head = taken + 1 == n ? 0 : taken + 1;
    std::size_t j = taken;
    for (std::size_t k = 0; k + 1 < n; ++k) {
        const std::size_t prev = j ? j - 1 : n - 1;
        if (pool[prev] <= done) break;
        pool[j] = pool[prev];
        j = prev;
    }
    pool[j] = done;
    line_ready = std::max(line_ready, done);
    line_valid |= missing;
    return done;
}

// Slice port: start = max(arrival, free_at); occupancy = bytes / bandwidth.
Picoseconds L2Cache::occupy_port(Slice& slice, std::uint32_t bytes, bool write, Picoseconds arrival) {
    const Picoseconds occupancy = occupancy_ps(bytes);
    const Picoseconds start = std::max(arrival, slice.port_free);
    slice.port_free = start + occupancy;
    stats_.busy_ps += occupancy;
    ++stats_.accesses;
    (write ? stats_.bytes_written : stats_.bytes_read) += bytes;
    return start;
}

// One pass finds the line's way or the first empty way (valid ways are a prefix); -1 for none.
std::pair<int, int> L2Cache::find_way(const SetView& set, std::uint64_t tag) const {
    for (int w = 0; w < params_.ways; ++w) {
        if (set.tags[w] == tag) return {w, -1};
        if (set.tags[w] == 0) return {-1, w};
    }
    return {-1, -1};
}

Picoseconds L2Cache::access(std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds arrival, int slice_index) {
    const std::uint64_t line_addr = line_div_.div(address);
    Slice& slice = slices_[static_cast<std::size_t>(slice_index)];
    const SetView set = set_view(set_block(static_cast<std::size_t>(slice_index), address));
    const std::uint8_t want = sector_mask(address, bytes);

    const Picoseconds start = occupy_port(slice, bytes, write, arrival);
    const std::uint64_t tag = line_addr + 1;
    const auto [found, empty] = find_way(set, tag);
    // A write of whole sectors needs no data from below (write-allocate without fetch).
    const std::uint8_t written_whole = write ? full_sector_mask(address, bytes) : 0;

    if (found >= 0) {
        touch(set, found);
        std::uint8_t& valid = set.valid[found];
        Picoseconds& ready = set.ready[found];
        const auto missing = static_cast<std::uint8_t>(want & ~valid);
        if (write) set.dirty[found] |= want;
        if (missing == 0) {
            if (ready > start) {  // the line's fill is still in flight: merge into its MSHR
                ++stats_.mshr_merges;
                ++stats_.misses;
                return ready + hit_latency_ps_;
            }
            ++stats_.hits;
            return start + hit_latency_ps_;
        }
        ++stats_.sector_misses;
        ++stats_.misses;
        const auto fetch = static_cast<std::uint8_t>(missing & ~written_whole);
        valid |= static_cast<std::uint8_t>(missing & written_whole);
        const Picoseconds done = fetch ? fill(slice, line_addr, ready, valid, fetch, start) : start;
        return std::max(done, ready) + hit_latency_ps_;
    }

    ++stats_.misses;
    // Victim: an empty way, else the least recently used (the largest rank).
    int v = empty;
    if (v < 0) {
        v = 0;
        for (int w = 0; w < params_.ways; ++w)
            if (set.rank[w] == params_.ways - 1) v = w;
        ++stats_.evictions;
        const std::uint8_t dirty = set.dirty[v];
        if (dirty) {
            ++stats_.writebacks;
            const std::uint64_t victim_line = set.tags[v] - 1;
            for (int s = 0; s < sectors_per_line_; ++s) {
                if (!((dirty >> s) & 1u)) continue;
                int e = s;  // contiguous dirty sectors go out as one write
                while (e + 1 < sectors_per_line_ && ((dirty >> (e + 1)) & 1u)) ++e;
                const auto n = static_cast<std::uint32_t>((e - s + 1) * params_.sector_bytes);
                next_level(victim_line * line_bytes_ + static_cast<std::uint64_t>(s) * sector_bytes_, n, true, start);
                stats_.writeback_bytes += n;
                s = e;
            }
        }
    }
    set.tags[v] = tag;
    release_line_name(set, v);
    set.ready[v] = 0;
    touch(set, v);
    const auto fetch = static_cast<std::uint8_t>(want & ~written_whole);
    set.valid[v] = static_cast<std::uint8_t>(want & written_whole);
    set.dirty[v] = write ? want : 0;
    const Picoseconds done = fetch ? fill(slice, line_addr, set.ready[v], set.valid[v], fetch, start) : start;
    return done + hit_latency_ps_;
}

std::vector<L2Cache::ResidentLine> L2Cache::resident_lines() const {
    const std::size_t sets = static_cast<std::size_t>(sets_) * slices_.size();
    const auto ways = static_cast<std::size_t>(params_.ways);
    auto set_at = [&](std::size_t i) {
        return set_view(const_cast<std::uint64_t*>(storage_.data() + sets_offset_ + i * words_per_set_));
    };
    // Oldest rank first over all sets (sets in order within a rank), so installing in this order
    // rebuilds each set's LRU order. Two passes over the sets (count per rank, then place) rather
    // than one pass per rank: a GPU run takes this at every launch, over megabytes of sets.
    std::vector<std::size_t> first_of_rank(ways + 1, 0);  // by rank, oldest first
    for (std::size_t i = 0; i < sets; ++i) {
        const SetView set = set_at(i);
        for (std::size_t w = 0; w < ways && set.tags[w] != 0; ++w) ++first_of_rank[ways - 1 - set.rank[w] + 1];
    }
    for (std::size_t r = 1; r <= ways; ++r) first_of_rank[r] += first_of_rank[r - 1];
    std::vector<ResidentLine> lines(first_of_rank[ways]);
    for (std::size_t i = 0; i < sets; ++i) {
        const SetView set = set_at(i);
        for (std::size_t w = 0; w < ways && set.tags[w] != 0; ++w)
            lines[first_of_rank[ways - 1 - set.rank[w]]++] = {set.tags[w] - 1, set.valid[w], set.dirty[w]};
    }
    return lines;
}

std::optional<L2Cache::ResidentLine> L2Cache::install(const ResidentLine& line) {
    const std::uint64_t address = line.line_address * line_bytes_;
    const int slice = slice_of(address);
    const SetView set = set_view(set_block(static_cast<std::size_t>(slice), address));
    const std::uint64_t tag = line.line_address + 1;
    const auto [found, empty] = find_way(set, tag);
    std::optional<ResidentLine> evicted;
    int v = found >= 0 ? found : empty;
    if (v < 0) {
        for (int w = 0; w < params_.ways; ++w)
            if (set.rank[w] == params_.ways - 1) v = w;
        evicted = ResidentLine{set.tags[v] - 1, set.valid[v], set.dirty[v]};
    }
    if (found >= 0) {  // its ready word stays: a fill in flight still lands on it
        set.valid[v] |= line.valid;
        set.dirty[v] |= line.dirty;
    } else {
        set.tags[v] = tag;
        set.valid[v] = line.valid;
        set.dirty[v] = line.dirty;
        release_line_name(set, v);
        set.ready[v] = 0;
    }
    touch(set, v);
    return evicted;
}

void L2Cache::record_untimed_access(std::uint64_t address, std::uint32_t bytes, bool write) {
    const std::uint8_t mask = sector_mask(address, bytes);
    install(ResidentLine{line_div_.div(address), mask, write ? mask : std::uint8_t{0}});  // a line pushed out is dropped
}

std::uint8_t L2Cache::full_sector_mask(std::uint64_t address, std::uint32_t bytes) const {
    const std::uint64_t offset = line_div_.mod(address);
    const std::uint64_t end = std::min<std::uint64_t>(offset + bytes, line_bytes_);
    std::uint8_t mask = 0;
    for (std::uint64_t s = (offset + sector_bytes_ - 1) / sector_bytes_; (s + 1) * sector_bytes_ <= end; ++s)
        mask |= static_cast<std::uint8_t>(1u << s);
    return mask;
}

}  // namespace accelsim::memory

// ---- Deferred fills ---------------------------------------------------------------------------
namespace accelsim::memory {

void L2Cache::mshr_insert(Slice& slice, std::size_t j, Picoseconds value, std::size_t sorted_before) {
    // The sorted_before slots before slot j (ring order from mshr_head) are sorted; value goes
    // among them.
    auto& pool = slice.mshr_free;
    const std::size_t n = pool.size();
    for (std::size_t k = 0; k < sorted_before; ++k) {
        const std::size_t prev = j ? j - 1 : n - 1;
        if (pool[prev] <= value) break;
        pool[j] = pool[prev];
        j = prev;
    }
    pool[j] = value;
}

std::int64_t L2Cache::start_deferred_fill(Slice& slice, int slice_index, const SetView& set, std::size_t block_offset,
                                          int way, std::uint64_t line_addr, std::uint8_t missing, Picoseconds start,
                                          std::vector<NextLevelRequest>& requests, DeferredOutcome& outcome) {
    FillRecord rec{block_offset, slice_index, way};
    rec.names_line = true;
    if (set.ready[way] & kPendingBit) {
        rec.after = static_cast<std::int64_t>(set.ready[way] & ~kPendingBit);
        FillRecord& older = fills_[static_cast<std::size_t>(rec.after)];
        ++older.newer;
        older.names_line = false;
    }
    std::int64_t id;
    if (free_fill_ids_.empty()) {
        id = static_cast<std::int64_t>(fills_.size());
        fills_.push_back(rec);
    } else {
        id = free_fill_ids_.back();
        free_fill_ids_.pop_back();
        fills_[static_cast<std::size_t>(id)] = rec;
    }
    for (int s = 0; s < sectors_per_line_; ++s) {
        if (!((missing >> s) & 1u)) continue;
        int e = s;  // contiguous missing sectors go out as one request (as in the blocking fill)
        while (e + 1 < sectors_per_line_ && ((missing >> (e + 1)) & 1u)) ++e;
        const auto n = static_cast<std::uint32_t>((e - s + 1) * params_.sector_bytes);
        requests.push_back({line_addr * line_bytes_ + static_cast<std::uint64_t>(s) * sector_bytes_, n, id});
        stats_.fill_bytes += n;
        s = e;
    }
    set.valid[way] |= missing;
    set.ready[way] = kPendingBit | static_cast<Picoseconds>(id);
    set.pending[way] = 1;
    outcome.new_fill = id;
    // An MSHR whose free time is known: the fill issues at max(start, that time); all MSHRs held
    // by undecided fills: it waits for resolve_fill.
    if (slice.mshr_free[slice.mshr_head] == kMshrPending) {
        outcome.new_fill_blocked = true;
        slice.blocked_fills.push_back({id, start});
    } else {
        const std::size_t taken = slice.mshr_head;
        outcome.new_fill_issue = std::max(start, slice.mshr_free[taken]);
        slice.mshr_head = taken + 1 == slice.mshr_free.size() ? 0 : taken + 1;
        slice.mshr_free[taken] = kMshrPending;  // now the ring's last: no known time is larger
        ++slice.mshr_pending;
    }
    return id;
}

L2Cache::DeferredOutcome L2Cache::access_deferred(std::uint64_t address, std::uint32_t bytes, bool write,
                                                  Picoseconds arrival, int slice_index,
                                                  std::vector<NextLevelRequest>& requests) {
    // The same decisions as access(), with fills left to the caller. The two modes must not be
    // mixed on one cache.
    DeferredOutcome out;
    const std::uint64_t line_addr = line_div_.div(address);
    Slice& slice = slices_[static_cast<std::size_t>(slice_index)];
    std::uint64_t* block = set_block(static_cast<std::size_t>(slice_index), address);
    const std::size_t block_offset = static_cast<std::size_t>(block - (storage_.data() + sets_offset_));
    const SetView set = set_view(block);
    const std::uint8_t want = sector_mask(address, bytes);

    const Picoseconds start = occupy_port(slice, bytes, write, arrival);
    out.floor = start + hit_latency_ps_;
    const std::uint64_t tag = line_addr + 1;
    const auto [found, empty] = find_way(set, tag);
    const std::uint8_t written_whole = write ? full_sector_mask(address, bytes) : 0;
    // Waits for the line's current fill if it is in flight, else for its known ready time.
    auto wait_for_line = [&](Picoseconds ready, int slot) {
        if (ready & kPendingBit) out.waits[slot] = static_cast<std::int64_t>(ready & ~kPendingBit);
        else out.floor = std::max(out.floor, ready + hit_latency_ps_);
    };

    if (found >= 0) {
        touch(set, found);
        const Picoseconds ready = set.ready[found];
        const auto missing = static_cast<std::uint8_t>(want & ~set.valid[found]);
        if (write) set.dirty[found] |= want;
        if (missing == 0) {
            if (ready > start) {  // fill in flight (pending, or known but later): MSHR merge
                ++stats_.mshr_merges;
                ++stats_.misses;
                wait_for_line(ready, 0);
                return out;
            }
            ++stats_.hits;
            return out;
        }
        ++stats_.sector_misses;
        ++stats_.misses;
        const auto fetch = static_cast<std::uint8_t>(missing & ~written_whole);
        set.valid[found] |= static_cast<std::uint8_t>(missing & written_whole);
        wait_for_line(ready, 1);  // the sectors already coming
        if (fetch) {
            out.waits[0] = start_deferred_fill(slice, slice_index, set, block_offset, found, line_addr, fetch, start,
                                               requests, out);
        }
        return out;
    }

    ++stats_.misses;
    int v = empty;
    if (v < 0) {
        v = 0;
        for (int w = 0; w < params_.ways; ++w)
            if (set.rank[w] == params_.ways - 1) v = w;
        ++stats_.evictions;
        const std::uint8_t dirty = set.dirty[v];
        if (dirty) {
            ++stats_.writebacks;
            const std::uint64_t victim_line = set.tags[v] - 1;
            for (int s = 0; s < sectors_per_line_; ++s) {
                if (!((dirty >> s) & 1u)) continue;
                int e = s;
                while (e + 1 < sectors_per_line_ && ((dirty >> (e + 1)) & 1u)) ++e;
                const auto n = static_cast<std::uint32_t>((e - s + 1) * params_.sector_bytes);
                requests.push_back({victim_line * line_bytes_ + static_cast<std::uint64_t>(s) * sector_bytes_, n, -1});
                stats_.writeback_bytes += n;
                s = e;
            }
        }
    }
    set.tags[v] = tag;
    release_line_name(set, v);
    set.ready[v] = 0;
    touch(set, v);
    const auto fetch = static_cast<std::uint8_t>(want & ~written_whole);
    set.valid[v] = static_cast<std::uint8_t>(want & written_whole);
    set.dirty[v] = write ? want : 0;
    if (fetch)
        out.waits[0] = start_deferred_fill(slice, slice_index, set, block_offset, v, line_addr, fetch, start, requests, out);
    return out;
}

void L2Cache::release_line_name(const SetView& set, int way) {
    if (!set.pending[way]) return;
    set.pending[way] = 0;
    fills_[static_cast<std::size_t>(set.ready[way] & ~kPendingBit)].names_line = false;
}

void L2Cache::release_fill_id(std::int64_t fill) {
    // Free once resolved and no newer fill of its line still looks at its completion; freeing it
    // may free the older fill it looked at.
    while (fill >= 0) {
        FillRecord& rec = fills_[static_cast<std::size_t>(fill)];
        if (!rec.resolved || rec.newer > 0) return;
        free_fill_ids_.push_back(fill);
        const std::int64_t older = rec.after;
        rec.after = -1;
        rec.resolved = false;  // a freed record is never read until reused
        if (older < 0) return;
        --fills_[static_cast<std::size_t>(older)].newer;
        fill = older;
    }
}

void L2Cache::resolve_fill(std::int64_t fill, Picoseconds done,
                           std::vector<std::pair<std::int64_t, Picoseconds>>& released) {
    FillRecord& rec = fills_[static_cast<std::size_t>(fill)];
    rec.done = done;
    rec.resolved = true;
    // The line (if it still holds this fill): ready when this and any older fill of it have landed.
    if (rec.names_line) {
        rec.names_line = false;
        const SetView set = set_view(storage_.data() + sets_offset_ + rec.block_offset);
        FillRecord* older = rec.after >= 0 ? &fills_[static_cast<std::size_t>(rec.after)] : nullptr;
        if (older && !older->resolved) {
            set.ready[rec.way] = kPendingBit | static_cast<Picoseconds>(rec.after);
            older->names_line = true;
            older->max_with = std::max({older->max_with, done, rec.max_with});
        } else {
            set.ready[rec.way] = std::max({done, rec.max_with, older ? older->done : Picoseconds{0}});
            set.pending[rec.way] = 0;
        }
    }
    release_fill_id(fill);
    // Its MSHR is free at `done`: a pending entry takes that time. The pending entries are the
    // ring's tail and all equal, so the first of them is sorted in (not the last, which would
    // shift every other pending entry by one for the same result).
    Slice& slice = slices_[static_cast<std::size_t>(rec.slice)];
    const std::size_t n = slice.mshr_free.size();
    const std::size_t first_pending = (slice.mshr_head + n - slice.mshr_pending) % n;
    mshr_insert(slice, first_pending, done, n - slice.mshr_pending);
    --slice.mshr_pending;
    while (!slice.blocked_fills.empty() && slice.mshr_free[slice.mshr_head] != kMshrPending) {
        const auto [id, start] = slice.blocked_fills.front();
        slice.blocked_fills.pop_front();
        const std::size_t taken = slice.mshr_head;
        released.emplace_back(id, std::max(start, slice.mshr_free[taken]));
        slice.mshr_head = taken + 1 == n ? 0 : taken + 1;
        slice.mshr_free[taken] = kMshrPending;
        ++slice.mshr_pending;
    }
}

}  // namespace accelsim::memory
