#include "models/simt/l1_cache.h"

#include <algorithm>
#include <stdexcept>

namespace accelsim::simt {

L1Cache::L1Cache(const L1Params& params) : params_(params) {
    if (params_.line_bytes != 128 || params_.ways < 1 || params_.bytes < params_.line_bytes * params_.ways)
        throw std::invalid_argument("L1: needs 128-byte lines, at least one way and room for one set");
    sets_ = static_cast<int>(params_.bytes / (params_.line_bytes * params_.ways));
    sets_div_ = memory::FastDivider(static_cast<std::uint64_t>(sets_));
    const std::size_t lines = static_cast<std::size_t>(sets_) * static_cast<std::size_t>(params_.ways);
    tags_.assign(lines, 0);
    last_use_.assign(lines, 0);
    sectors_.resize(lines);
}

long L1Cache::find(std::uint32_t sector_address, std::size_t& first, std::uint32_t& tag) const {
    const std::uint32_t line_address = sector_address / 128u;
    const std::uint64_t quotient = sets_div_.div(line_address);
    const auto set = static_cast<std::size_t>(line_address - quotient * static_cast<std::uint64_t>(sets_));
    tag = static_cast<std::uint32_t>(quotient) + 1;
    first = set * static_cast<std::size_t>(params_.ways);
    for (int w = 0; w < params_.ways; ++w)
        if (tags_[first + static_cast<std::size_t>(w)] == tag) return static_cast<long>(first) + w;
    return -1;
}

void L1Cache::write(std::uint32_t sector_address) {
    std::size_t first;
    std::uint32_t tag;
    const long line = find(sector_address, first, tag);
    if (line >= 0) last_use_[static_cast<std::size_t>(line)] = ++use_counter_;
}

L1Cache::Read L1Cache::read(std::uint64_t cycle, std::uint32_t sector_address) {
    std::size_t first;
    std::uint32_t tag;
    long found = find(sector_address, first, tag);
    const int sector = static_cast<int>((sector_address / 32u) & 3u);
    const std::uint64_t lookup_done = cycle + static_cast<std::uint64_t>(params_.hit_latency);
    if (found >= 0 && sectors_[static_cast<std::size_t>(found)].ready[sector] != 0) {
        const auto line = static_cast<std::size_t>(found);
        last_use_[line] = ++use_counter_;
        const std::uint64_t ready = sectors_[line].ready[sector];
        if (ready & kPendingBit) return {Outcome::merge_pending, 0, static_cast<std::uint32_t>(ready & ~kPendingBit)};
        // Present once its fill has landed by the lookup; before that the load waits for it.
        if (ready <= cycle) return {Outcome::hit, lookup_done, 0};
        return {Outcome::merge, std::max(lookup_done, ready), 0};
    }
    if (found < 0) {
        std::size_t victim = first;  // an invalid way, else the least recently used one
        for (int w = 0; w < params_.ways; ++w) {
            const std::size_t i = first + static_cast<std::size_t>(w);
            if (tags_[i] == 0) {
                victim = i;
                break;
            }
            if (last_use_[i] < last_use_[victim]) victim = i;
        }
        tags_[victim] = tag;
        sectors_[victim] = Sectors{};
        found = static_cast<long>(victim);
    }
    const auto line = static_cast<std::size_t>(found);
    last_use_[line] = ++use_counter_;
    std::uint32_t fill;
    if (free_fills_.empty()) {
        fill = static_cast<std::uint32_t>(fills_.size());
        fills_.emplace_back();
    } else {
        fill = free_fills_.back();
        free_fills_.pop_back();
    }
    fills_[fill] = Fill{line, sector};
    sectors_[line].ready[sector] = kPendingBit | fill;
    return {Outcome::miss, 0, fill};
}

void L1Cache::fill_done(std::uint32_t fill, std::uint64_t ready) {
    const Fill& f = fills_[fill];
    // The line may have been replaced while the fill was in flight: then the data is dropped.
    std::uint64_t& slot = sectors_[f.line].ready[f.sector];
    if (slot == (kPendingBit | fill)) slot = std::max<std::uint64_t>(ready, 1);
    free_fills_.push_back(fill);
}

}  // namespace accelsim::simt
