#pragma once
// The SIMT core's global-memory port over models/memory's hierarchy: every 32-byte sector an SM's
// L1 sends on (misses and stores) crosses the crossbar from that SM's port to an L2 slice, and L2
// misses and write-backs go to the HBM channels. Times cross between the SM clock (cycles) and the
// memory models' integer picoseconds here, and nowhere else. Each SM's L1 stays in the SIMT core.
#include <cstdint>

#include "models/memory/memory_hierarchy.h"
#include "models/simt/memory_access.h"

namespace accelsim::gpu {

// Bytes that reached each level below the SMs, counted since the port was made.
struct HierarchyTraffic {
    std::uint64_t l2_read_bytes = 0, l2_write_bytes = 0;    // sectors the SMs sent to the L2
    std::uint64_t l2_hits = 0, l2_accesses = 0;             // L2 lookups (one per sector)
    std::uint64_t hbm_read_bytes = 0, hbm_write_bytes = 0;  // L2 fills and write-backs at the DRAM
    std::uint64_t hbm_row_hits = 0, hbm_row_misses = 0, hbm_row_conflicts = 0;  // DRAM bursts
    double average_latency_ns = 0, max_latency_ns = 0;      // per sector, leaving the SM to done
    std::uint64_t l2_bytes() const { return l2_read_bytes + l2_write_bytes; }
    std::uint64_t hbm_bytes() const { return hbm_read_bytes + hbm_write_bytes; }
};

class HierarchyMemoryPort final : public simt::GlobalMemoryPort {
public:
    static constexpr int kSectorBytes = 32;

    // params.requesters must be the number of SMs (SM i is requester i); params.clock_hz is the SM
    // clock. Throws std::invalid_argument for parameters the memory models reject.
    explicit HierarchyMemoryPort(const memory::MemoryHierarchyParams& params);

    // One sector leaving SM `sm` at `cycle`; returns the first SM cycle at or after the memory's
    // completion (data back for loads, write accepted for stores), at least cycle + 1.
    std::uint64_t access(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm) override;

    HierarchyTraffic traffic() const;
    const memory::MemoryHierarchy& hierarchy() const { return hierarchy_; }
    // HBM peak in bytes per SM cycle (the denominator of the report's hbm bound).
    double hbm_bytes_per_cycle() const;

private:
    memory::MemoryHierarchy hierarchy_;
    double cycle_ps_;  // one SM cycle in picoseconds (not an integer in general: 1410 MHz = 709.2 ps)
    std::uint64_t read_sectors_ = 0, write_sectors_ = 0;
};

}  // namespace accelsim::gpu
