#include "models/gpu/hierarchy_port.h"

#include <cmath>
#include <stdexcept>

namespace accelsim::gpu {

HierarchyMemoryPort::HierarchyMemoryPort(const memory::MemoryHierarchyParams& params)
    : hierarchy_(params), cycle_ps_(1e12 / params.clock_hz) {
    if (!(params.clock_hz > 0)) throw std::invalid_argument("hierarchy port: clock_hz must be > 0");
}

std::uint64_t HierarchyMemoryPort::access(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm) {
    ++(write ? write_sectors_ : read_sectors_);
    const auto arrival = static_cast<memory::Picoseconds>(std::llround(static_cast<double>(cycle) * cycle_ps_));
    const memory::Picoseconds done = hierarchy_.access(sm, sector_address, kSectorBytes, write, arrival);
    // Back to SM cycles, rounding up (the data is usable from the first SM edge after it lands);
    // the 1e-6 keeps an exact cycle boundary that picosecond rounding nudged up on that cycle.
    const auto back = static_cast<std::uint64_t>(std::ceil(static_cast<double>(done) / cycle_ps_ - 1e-6));
    return back > cycle ? back : cycle + 1;
}

HierarchyTraffic HierarchyMemoryPort::traffic() const {
    HierarchyTraffic t;
    t.l2_read_bytes = read_sectors_ * kSectorBytes;
    t.l2_write_bytes = write_sectors_ * kSectorBytes;
    const memory::MemoryHierarchyStats s = hierarchy_.stats();
    if (s.l2) {
        t.l2_hits = s.l2->hits;
        t.l2_accesses = s.l2->accesses;
    }
    t.hbm_read_bytes = s.dram.bytes_read;
    t.hbm_write_bytes = s.dram.bytes_written;
    t.hbm_row_hits = s.dram.bursts.row_hits;
    t.hbm_row_misses = s.dram.bursts.row_misses;
    t.hbm_row_conflicts = s.dram.bursts.row_conflicts;
    t.average_latency_ns = s.latency.average_ns();
    t.max_latency_ns = s.latency.max_ns();
    return t;
}

double HierarchyMemoryPort::hbm_bytes_per_cycle() const {
    return hierarchy_.peak_dram_bytes_per_second() * cycle_ps_ * 1e-12;
}

}  // namespace accelsim::gpu
