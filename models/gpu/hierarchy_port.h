#pragma once
// The SIMT core's global-memory port over models/memory's hierarchy: every 32-byte sector an SM's
// L1 sends on (misses and stores) crosses the crossbar from that SM's port to an L2 slice, and L2
// misses and write-backs go to the HBM channels. Times cross between the SM clock (cycles) and the
// memory models' integer picoseconds here, and nowhere else. Each SM's L1 stays in the SIMT core.
//
// Two ways to drive it (GlobalMemoryPort): non-blocking (the default when there is an L2) through
// MemoryHierarchy's queued engine, the one membench's run_queued uses: requests are served in time
// order (ties by SM, then submission order) with the L2's misses and write-backs scheduled by the
// HBM controllers' FR-FCFS queues; and blocking, access() served at once in call order (FCFS
// DRAM), the only mode without an L2 and the one tests use to call the port by hand.
#include <cstdint>
#include <optional>
#include <vector>

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
    // blocking = true keeps the port blocking even with an L2 (the FCFS path, for comparisons).
    explicit HierarchyMemoryPort(const memory::MemoryHierarchyParams& params, bool blocking = false);

    // One sector leaving SM `sm` at `cycle`; returns the first SM cycle at or after the memory's
    // completion (data back for loads, write accepted for stores), at least cycle + 1. Blocking:
    // do not mix with submit() on one port.
    std::uint64_t access(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm) override;

    // Non-blocking (tags must leave bits 40..61 clear: the port keeps the SM there). The lookahead: an answer lies at least the L2 hit latency after the event that
    // decides it (an L2 lookup, a burst entering a controller queue, a controller decision; a
    // sector reaches its lookup no earlier than it left the SM), so W = the hit latency in SM
    // cycles, less one for rounding picoseconds to cycles. 0 (blocking) without an L2.
    std::uint64_t lookahead_cycles() const override { return lookahead_; }
    void submit(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm, std::uint64_t tag) override;
    void advance(std::uint64_t end, std::vector<simt::SectorAnswer>& answers) override;
    std::uint64_t next_activity_cycle() override;
    // A skipped block's sector (wave sampling): into the L2 as its access would leave it, untimed.
    void record_untimed_access(std::uint32_t sector_address, bool write) override;
    std::uint64_t cache_bytes() const override;  // the L2's (the SMs' L1s are not the port's)

    HierarchyTraffic traffic() const;
    // The first sector written through the port (the op's output buffer, for the warm L2).
    std::optional<std::uint32_t> first_write() const { return first_write_; }
    // The L2 carried across launches (docs/gpu.md "Warm L2 across ops"): its lines, least recently
    // used first, and putting lines back into this fresh port's L2 before its launch. Lines that
    // no longer fit leave; their dirty bytes count as HBM writes (written back in the background,
    // no time charged). No-ops without an L2.
    std::vector<memory::L2Cache::ResidentLine> l2_lines() const;
    void warm_l2(const std::vector<memory::L2Cache::ResidentLine>& lines);
    const memory::MemoryHierarchy& hierarchy() const { return hierarchy_; }
    // HBM peak in bytes per SM cycle (the denominator of the report's hbm bound).
    double hbm_bytes_per_cycle() const;

private:
    static constexpr int kTagSmShift = 40;
    static constexpr std::uint64_t kTagSmBits = ((std::uint64_t{1} << 22) - 1) << kTagSmShift;
    // 32 bytes: a window holds thousands. The SM rides in the tag; ties of one cycle are put in
    // SM order by a stable sort, which keeps submission order within an SM.
    struct Submitted {
        memory::Picoseconds at;
        std::uint64_t cycle;
        std::uint64_t tag;  // the SM's tag with the SM in bits 40..61
        std::uint32_t sector;
        bool write;
        int sm() const { return static_cast<int>((tag & kTagSmBits) >> kTagSmShift); }
    };
    memory::Picoseconds to_ps(std::uint64_t cycle) const;
    std::uint64_t to_cycle(memory::Picoseconds done, std::uint64_t cycle) const;  // rounding up, > cycle
    void collect(std::vector<simt::SectorAnswer>& answers);

    memory::MemoryHierarchy hierarchy_;
    double cycle_ps_;  // one SM cycle in picoseconds (not an integer in general: 1410 MHz = 709.2 ps)
    std::uint64_t lookahead_ = 0;
    std::uint64_t read_sectors_ = 0, write_sectors_ = 0;
    std::optional<std::uint32_t> first_write_;
    std::uint64_t displaced_writeback_bytes_ = 0;  // dirty lines warm_l2 could not place
    // Submitted, not yet issued; at each advance() the ones due are sorted (cheaper than a heap:
    // contiguous, and most requests of a window are due at its end).
    std::vector<Submitted> submitted_, due_, sorted_;
    std::vector<std::size_t> bucket_start_;
    void sort_due();
};

}  // namespace accelsim::gpu
