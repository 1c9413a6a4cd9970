#include "models/memory/l2_cache.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace accelsim::memory {

void validate(const L2Params& p) {
    auto require = [](bool ok, const std::string& what) {
        if (!ok) throw std::invalid_argument("l2: " + what);
    };
    require(p.slices > 0, "slices must be > 0");
    require(p.ways > 0, "ways must be > 0");
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

L2Cache::L2Cache(const L2Params& params, NextLevel next_level)
    : params_((validate(params), params)),
      next_(std::move(next_level)),
      sets_(params.size_bytes / (static_cast<std::int64_t>(params.slices) * params.ways * params.line_bytes)),
      line_bytes_(static_cast<std::uint64_t>(params.line_bytes)),
      sector_bytes_(static_cast<std::uint64_t>(params.sector_bytes)),
      sectors_per_line_(params.line_bytes / params.sector_bytes),
      cycle_ps_(cycles_to_ps(1, params.clock_hz)),
      hit_latency_ps_(cycles_to_ps(params.hit_latency_cycles, params.clock_hz)),
      slices_(static_cast<std::size_t>(params.slices)) {
    for (auto& s : slices_) {
        const auto n = static_cast<std::size_t>(sets_ * params_.ways);
        s.tags.assign(n, 0);
        s.last_use.assign(n, 0);
        s.lines.resize(n);
        s.mshr_free.assign(static_cast<std::size_t>(params_.mshrs_per_slice), 0);
    }
}

void L2Cache::register_stats(StatsRegistry& r, const std::string& prefix) const {
    r.add(prefix + ".accesses", "requests", "requests (split at line boundaries)", &stats_.accesses);
    r.add(prefix + ".hits", "requests", "all requested sectors present", &stats_.hits);
    r.add(prefix + ".misses", "requests", "line, sector or in-flight misses", &stats_.misses);
    r.add(prefix + ".sector_misses", "requests", "line present, some sectors missing", &stats_.sector_misses);
    r.add(prefix + ".mshr_merges", "requests", "misses merged into a fill in flight", &stats_.mshr_merges);
    r.add(prefix + ".evictions", "lines", "valid lines replaced", &stats_.evictions);
    r.add(prefix + ".writebacks", "lines", "dirty lines written back", &stats_.writebacks);
    r.add(prefix + ".bytes_read", "bytes", "bytes read by requesters", &stats_.bytes_read);
    r.add(prefix + ".bytes_written", "bytes", "bytes written by requesters", &stats_.bytes_written);
    r.add(prefix + ".fill_bytes", "bytes", "bytes fetched from the next level", &stats_.fill_bytes);
    r.add(prefix + ".writeback_bytes", "bytes", "bytes written to the next level", &stats_.writeback_bytes);
    r.add(prefix + ".busy_ps", "ps", "slice port occupancy, summed over slices", &stats_.busy_ps);
}

int L2Cache::slice_of(std::uint64_t address) const {
    // XOR-fold of the line address so that power-of-two strides still spread over the slices.
    std::uint64_t line = address / line_bytes_;
    std::uint64_t h = line ^ (line >> 7) ^ (line >> 17) ^ (line >> 29);
    return static_cast<int>(h % static_cast<std::uint64_t>(params_.slices));
}

std::uint8_t L2Cache::sector_mask(std::uint64_t address, std::uint32_t bytes) const {
    const std::uint64_t offset = address % line_bytes_;
    std::uint64_t end = offset + std::max<std::uint32_t>(bytes, 1);
    if (end > line_bytes_) end = line_bytes_;  // callers split requests at line boundaries
    std::uint8_t mask = 0;
    for (std::uint64_t s = offset / sector_bytes_; s * sector_bytes_ < end; ++s) mask |= static_cast<std::uint8_t>(1u << s);
    return mask;
}

Picoseconds L2Cache::access(std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds arrival) {
    const std::uint64_t line_addr = address / line_bytes_;
    Slice& slice = slices_[static_cast<std::size_t>(slice_of(address))];
    // Lines are spread over slices by the hash, so the set index uses the line address above it.
    const auto set = static_cast<std::size_t>((line_addr / static_cast<std::uint64_t>(params_.slices)) %
                                              static_cast<std::uint64_t>(sets_));
    const std::size_t base = set * static_cast<std::size_t>(params_.ways);
    std::uint64_t* tags = &slice.tags[base];
    std::uint64_t* last_use = &slice.last_use[base];
    Line* ways = &slice.lines[base];
    const std::uint8_t want = sector_mask(address, bytes);

    // Slice port: start = max(arrival, free_at); occupancy = bytes / bandwidth, whole cycles.
    const auto occupancy_cycles = static_cast<Picoseconds>(
        std::ceil(static_cast<double>(std::max<std::uint32_t>(bytes, 1)) / params_.bytes_per_cycle_per_slice));
    const Picoseconds start = std::max(arrival, slice.port_free);
    slice.port_free = start + occupancy_cycles * cycle_ps_;
    stats_.busy_ps += occupancy_cycles * cycle_ps_;
    ++stats_.accesses;
    (write ? stats_.bytes_written : stats_.bytes_read) += bytes;

    Line* line = nullptr;
    for (int w = 0; w < params_.ways; ++w)
        if (tags[w] == line_addr + 1) {
            line = &ways[w];
            last_use[w] = ++use_clock_;
            break;
        }
    // A write of whole sectors needs no data from below (write-allocate without fetch).
    const std::uint8_t written_whole = write ? full_sector_mask(address, bytes) : 0;

    auto fill = [&](Line& l, std::uint8_t missing, Picoseconds when) {
        // Take the MSHR that frees first; a fill waits for one when all are busy.
        auto mshr = std::min_element(slice.mshr_free.begin(), slice.mshr_free.end());
        const Picoseconds issue = std::max(when, *mshr);
        Picoseconds done = issue;
        for (int s = 0; s < sectors_per_line_; ++s) {
            if (!((missing >> s) & 1u)) continue;
            int e = s;  // contiguous missing sectors go out as one request
            while (e + 1 < sectors_per_line_ && ((missing >> (e + 1)) & 1u)) ++e;
            const auto n = static_cast<std::uint32_t>((e - s + 1) * params_.sector_bytes);
            done = std::max(done, next_(line_addr * line_bytes_ + static_cast<std::uint64_t>(s) * sector_bytes_, n,
                                        false, issue));
            stats_.fill_bytes += n;
            s = e;
        }
        *mshr = done;
        l.ready = std::max(l.ready, done);
        l.valid |= missing;
        return done;
    };

    if (line) {
        const auto missing = static_cast<std::uint8_t>(want & ~line->valid);
        if (write) line->dirty |= want;
        if (missing == 0) {
            if (line->ready > start) {  // the line's fill is still in flight: merge into its MSHR
                ++stats_.mshr_merges;
                ++stats_.misses;
                return line->ready + hit_latency_ps_;
            }
            ++stats_.hits;
            return start + hit_latency_ps_;
        }
        ++stats_.sector_misses;
        ++stats_.misses;
        const auto fetch = static_cast<std::uint8_t>(missing & ~written_whole);
        line->valid |= static_cast<std::uint8_t>(missing & written_whole);
        const Picoseconds done = fetch ? fill(*line, fetch, start) : start;
        return std::max(done, line->ready) + hit_latency_ps_;
    }

    ++stats_.misses;
    // Victim: an empty way, else the least recently used.
    int v = 0;
    for (int w = 0; w < params_.ways; ++w) {
        if (tags[w] == 0) {
            v = w;
            break;
        }
        if (last_use[w] < last_use[v]) v = w;
    }
    Line* victim = &ways[v];
    if (tags[v] != 0) {
        ++stats_.evictions;
        if (victim->dirty) {
            ++stats_.writebacks;
            const std::uint64_t victim_line = tags[v] - 1;
            for (int s = 0; s < sectors_per_line_; ++s) {
                if (!((victim->dirty >> s) & 1u)) continue;
                int e = s;  // contiguous dirty sectors go out as one write
                while (e + 1 < sectors_per_line_ && ((victim->dirty >> (e + 1)) & 1u)) ++e;
                const auto n = static_cast<std::uint32_t>((e - s + 1) * params_.sector_bytes);
                next_(victim_line * line_bytes_ + static_cast<std::uint64_t>(s) * sector_bytes_, n, true, start);
                stats_.writeback_bytes += n;
                s = e;
            }
        }
    }
    *victim = Line{};
    tags[v] = line_addr + 1;
    last_use[v] = ++use_clock_;
    const auto fetch = static_cast<std::uint8_t>(want & ~written_whole);
    victim->valid = static_cast<std::uint8_t>(want & written_whole);
    if (write) victim->dirty = want;
    const Picoseconds done = fetch ? fill(*victim, fetch, start) : start;
    return done + hit_latency_ps_;
}

std::uint8_t L2Cache::full_sector_mask(std::uint64_t address, std::uint32_t bytes) const {
    const std::uint64_t offset = address % line_bytes_;
    const std::uint64_t end = std::min<std::uint64_t>(offset + bytes, line_bytes_);
    std::uint8_t mask = 0;
    for (std::uint64_t s = (offset + sector_bytes_ - 1) / sector_bytes_; (s + 1) * sector_bytes_ <= end; ++s)
        mask |= static_cast<std::uint8_t>(1u << s);
    return mask;
}

}  // namespace accelsim::memory
