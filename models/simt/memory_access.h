#pragma once
// The memory side of a warp instruction: global accesses coalesced into 32-byte sectors, shared
// accesses costed by their bank conflicts, and the port global sectors go through. The port is an
// interface so that the fixed-latency stand-in can be replaced by models/memory's L2/HBM.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

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

// The answer to a sector handed to a port with submit(): `done` is the cycle its data is back
// (loads) or the write accepted (stores).
struct SectorAnswer {
    int sm;
    std::uint64_t tag;
    std::uint64_t done;
};

// Where an SM's global sectors go. Two ways to use a port:
//  * blocking: access() returns the sector's completion at once. The memory behind it serves
//    requests in call order, so callers must call in time order to be exact.
//  * non-blocking (ports whose lookahead_cycles() > 0): submit() hands a sector over with the
//    cycle it leaves the SM; advance(end) serves, in time order (ties by SM, then submission
//    order), everything that happens before cycle `end` and appends the answers it learnt. An
//    answer to an event before `end` is never due before `end` provided the events served in one
//    advance() lie within lookahead_cycles() before `end` (the port's minimum latency): so SMs
//    may run a window of that many cycles on their own, then take the answers (launch()).
class GlobalMemoryPort {
public:
    virtual ~GlobalMemoryPort() = default;
    // One 32-byte sector of a warp's access, leaving SM `sm` at `cycle` (SM clock). Returns the
    // cycle its data is back (loads) or accepted (stores).
    virtual std::uint64_t access(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm) = 0;

    // 0: blocking only (the default). Else the window length the port guarantees (see above).
    virtual std::uint64_t lookahead_cycles() const { return 0; }
    // Sectors must be submitted with cycles no earlier than the `end` of the last advance().
    virtual void submit(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm, std::uint64_t tag);
    virtual void advance(std::uint64_t end, std::vector<SectorAnswer>& answers);
    // The earliest cycle at which anything submitted could next make progress (~0: nothing pending).
    virtual std::uint64_t next_activity_cycle() { return ~std::uint64_t{0}; }
    // A sector of work that is not simulated (the blocks wave sampling skips): a port with caches
    // leaves it in them as the access would, taking no time and counting nothing. The default has
    // no caches to keep.
    virtual void record_untimed_access(std::uint32_t /*sector_address*/, bool /*write*/) {}
    // Bytes those caches hold (0: none, and untimed accesses leave nothing).
    virtual std::uint64_t cache_bytes() const { return 0; }
};

// Every sector takes `latency` cycles, no contention (the stand-in for tests and "ideal" memory).
// Blocking by default; `non_blocking` serves the same cycles through submit()/advance() with a
// lookahead of `latency` (tests use it to check that windowed runs equal blocking ones).
class FixedLatencyMemory : public GlobalMemoryPort {
public:
    explicit FixedLatencyMemory(int latency, bool non_blocking = false)
        : latency_(latency), non_blocking_(non_blocking) {}
    std::uint64_t access(std::uint64_t cycle, std::uint32_t, bool write, int) override {
        ++(write ? write_sectors_ : read_sectors_);
        return cycle + static_cast<std::uint64_t>(latency_);
    }
    std::uint64_t lookahead_cycles() const override {
        return non_blocking_ ? static_cast<std::uint64_t>(std::max(1, latency_)) : 0;
    }
    void submit(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm, std::uint64_t tag) override;
    void advance(std::uint64_t end, std::vector<SectorAnswer>& answers) override;
    std::uint64_t next_activity_cycle() override;
    std::uint64_t read_sectors() const { return read_sectors_; }
    std::uint64_t write_sectors() const { return write_sectors_; }

private:
    int latency_;
    bool non_blocking_;
    std::uint64_t read_sectors_ = 0, write_sectors_ = 0;
    std::vector<SectorAnswer> pending_;  // answered at the advance() whose end passes their cycle
    std::vector<std::uint64_t> pending_cycles_;
};

}  // namespace accelsim::simt
