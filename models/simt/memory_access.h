#pragma once
// The memory side of a warp instruction: global accesses coalesced into 32-byte sectors, shared
// accesses costed by their bank conflicts, and the port global sectors go through. The port is an
// interface so that the fixed-latency stand-in can be replaced by models/memory's L2/HBM.
#include <array>
#include <cstdint>

namespace accelsim::simt {

// Unique sector addresses (address / sector_bytes * sector_bytes) touched by the lanes in `mask`,
// ascending, written to `sectors`; returns how many (0..32).
int coalesce_sectors(const std::array<std::uint32_t, 32>& addresses, std::uint32_t mask, int sector_bytes,
                     std::array<std::uint32_t, 32>& sectors);

// Shared-memory conflict degree: the most distinct `bank_bytes` words any one bank must deliver
// (lanes reading the same word are served by one broadcast). 1 = conflict-free, 32 = fully serial,
// 0 when no lane is active. The access takes `degree` wavefronts.
int shared_bank_conflict_degree(const std::array<std::uint32_t, 32>& addresses, std::uint32_t mask, int banks = 32,
                                int bank_bytes = 4);

class GlobalMemoryPort {
public:
    virtual ~GlobalMemoryPort() = default;
    // One 32-byte sector of a warp's access, leaving SM `sm` at `cycle` (SM clock). Returns the
    // cycle its data is back (loads) or accepted (stores).
    virtual std::uint64_t access(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm) = 0;
};

// Stand-in until the memory hierarchy lands: every sector takes `latency` cycles, no contention.
class FixedLatencyMemory : public GlobalMemoryPort {
public:
    explicit FixedLatencyMemory(int latency) : latency_(latency) {}
    std::uint64_t access(std::uint64_t cycle, std::uint32_t, bool write, int) override {
        ++(write ? write_sectors_ : read_sectors_);
        return cycle + static_cast<std::uint64_t>(latency_);
    }
    std::uint64_t read_sectors() const { return read_sectors_; }
    std::uint64_t write_sectors() const { return write_sectors_; }

private:
    int latency_;
    std::uint64_t read_sectors_ = 0, write_sectors_ = 0;
};

}  // namespace accelsim::simt
