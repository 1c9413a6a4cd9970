#include "models/memory/scratchpad.h"
#include "models/memory/memory_stats.h"

#include <algorithm>

namespace accelsim::memory {

Scratchpad::Scratchpad(const ScratchpadParams& p) : params_(p) {
    if (p.capacity_bytes <= 0) throw std::invalid_argument(p.name + ": capacity_bytes must be > 0");
    if (p.banks <= 0 || p.bank_bytes <= 0) throw std::invalid_argument(p.name + ": banks and bank_bytes must be > 0");
    if (p.ports <= 0) throw std::invalid_argument(p.name + ": ports must be > 0");
    if (p.latency_cycles < 0) throw std::invalid_argument(p.name + ": latency_cycles must be >= 0");
    if (p.alignment <= 0) throw std::invalid_argument(p.name + ": alignment must be > 0");
    if (p.clock_hz <= 0) throw std::invalid_argument(p.name + ": clock must be > 0");
    free_blocks_[0] = p.capacity_bytes;
    port_free_.assign(static_cast<std::size_t>(p.ports), 0);
    cycle_ps_ = cycles_to_ps(1, p.clock_hz);
    latency_ps_ = cycles_to_ps(p.latency_cycles, p.clock_hz);
}

std::int64_t Scratchpad::allocate(std::int64_t bytes) {
    if (bytes <= 0) throw std::invalid_argument(params_.name + ": allocation of " + std::to_string(bytes) + " bytes");
    const std::int64_t size = (bytes + params_.alignment - 1) / params_.alignment * params_.alignment;
    for (auto it = free_blocks_.begin(); it != free_blocks_.end(); ++it) {
        if (it->second < size) continue;
        const std::int64_t offset = it->first, left = it->second - size;
        free_blocks_.erase(it);
        if (left > 0) free_blocks_[offset + size] = left;
        used_blocks_[offset] = size;
        allocated_ += size;
        stats_.peak_allocated = std::max(stats_.peak_allocated, allocated_);
        return offset;
    }
    std::int64_t largest = 0;
    for (const auto& [offset, len] : free_blocks_) largest = std::max(largest, len);
    throw ScratchpadCapacityError(params_.name + ": cannot allocate " + std::to_string(bytes) + " bytes (capacity " +
                                  std::to_string(params_.capacity_bytes) + ", free " + std::to_string(free_bytes()) +
                                  ", largest free block " + std::to_string(largest) + ")");
}

void Scratchpad::free(std::int64_t offset) {
    auto it = used_blocks_.find(offset);
    if (it == used_blocks_.end())
        throw std::invalid_argument(params_.name + ": free of unallocated offset " + std::to_string(offset));
    std::int64_t start = offset, size = it->second;
    used_blocks_.erase(it);
    allocated_ -= size;
    auto next = free_blocks_.lower_bound(start);
    if (next != free_blocks_.end() && next->first == start + size) {  // merge with the block after
        size += next->second;
        next = free_blocks_.erase(next);
    }
    if (next != free_blocks_.begin()) {  // and with the block before
        auto prev = std::prev(next);
        if (prev->first + prev->second == start) {
            start = prev->first;
            size += prev->second;
            free_blocks_.erase(prev);
        }
    }
    free_blocks_[start] = size;
}

void Scratchpad::register_stats(StatsRegistry& r, const std::string& prefix) const {
    r.add(stat::scratchpad_reads, {prefix}, &stats_.reads);
    r.add(stat::scratchpad_writes, {prefix}, &stats_.writes);
    r.add(stat::scratchpad_bytes_read, {prefix}, &stats_.bytes_read);
    r.add(stat::scratchpad_bytes_written, {prefix}, &stats_.bytes_written);
    r.add(stat::scratchpad_busy_ps, {prefix}, &stats_.busy_ps);
}

std::int64_t Scratchpad::access_cycles(std::int64_t address, std::int64_t bytes) const {
    if (bytes <= 0) return 0;
    // Words of bank_bytes, interleaved over the banks: n consecutive words put ceil(n / banks) on
    // the busiest bank.
    const std::int64_t first = address / params_.bank_bytes, last = (address + bytes - 1) / params_.bank_bytes;
    const std::int64_t words = last - first + 1;
    return (words + params_.banks - 1) / params_.banks;
}

Picoseconds Scratchpad::access(std::int64_t address, std::int64_t bytes, bool write, Picoseconds arrival) {
    auto port = std::min_element(port_free_.begin(), port_free_.end());
    const Picoseconds start = std::max(arrival, *port);
    const Picoseconds busy = static_cast<Picoseconds>(access_cycles(address, bytes)) * cycle_ps_;
    *port = start + busy;
    stats_.busy_ps += busy;
    if (write) {
        ++stats_.writes;
        stats_.bytes_written += static_cast<std::uint64_t>(bytes);
    } else {
        ++stats_.reads;
        stats_.bytes_read += static_cast<std::uint64_t>(bytes);
    }
    return start + busy + latency_ps_;
}

}  // namespace accelsim::memory
