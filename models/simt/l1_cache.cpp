#include "models/simt/l1_cache.h"

#include <algorithm>
#include <stdexcept>

namespace accelsim::simt {

L1Cache::L1Cache(const L1Params& params, GlobalMemoryPort& next) : params_(params), next_(next) {
    if (params_.line_bytes != 128 || params_.ways < 1 || params_.bytes < params_.line_bytes * params_.ways)
        throw std::invalid_argument("L1: needs 128-byte lines, at least one way and room for one set");
    sets_ = static_cast<int>(params_.bytes / (params_.line_bytes * params_.ways));
    lines_.resize(static_cast<std::size_t>(sets_) * static_cast<std::size_t>(params_.ways));
}

std::uint64_t L1Cache::access(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm) {
    const std::uint32_t line_address = sector_address / 128u;
    const auto set = static_cast<std::size_t>(line_address % static_cast<std::uint32_t>(sets_));
    const std::uint32_t tag = line_address / static_cast<std::uint32_t>(sets_);
    const int sector = static_cast<int>((sector_address / 32u) & 3u);
    Line* first = &lines_[set * static_cast<std::size_t>(params_.ways)];
    Line* line = nullptr;
    for (int w = 0; w < params_.ways; ++w)
        if (first[w].valid && first[w].tag == tag) line = &first[w];
    if (write) {
        // Write-through, no allocate: the sector (if cached) stays valid with the new data.
        if (line) line->last_use = ++use_counter_;
        return next_.access(cycle, sector_address, true, sm);
    }
    if (line && line->sector_ready[sector] != 0) {
        ++hits_;
        line->last_use = ++use_counter_;
        return std::max(cycle + static_cast<std::uint64_t>(params_.hit_latency), line->sector_ready[sector]);
    }
    ++misses_;
    if (!line) {
        line = first;  // an invalid way, else the least recently used one
        for (int w = 0; w < params_.ways; ++w) {
            if (!first[w].valid) {
                line = &first[w];
                break;
            }
            if (first[w].last_use < line->last_use) line = &first[w];
        }
        *line = Line{};
        line->valid = true;
        line->tag = tag;
    }
    line->last_use = ++use_counter_;
    const std::uint64_t ready = next_.access(cycle + static_cast<std::uint64_t>(params_.hit_latency), sector_address, false, sm);
    line->sector_ready[sector] = ready;
    return ready;
}

}  // namespace accelsim::simt
