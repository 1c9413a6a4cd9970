#pragma once
// The SM's L1 data cache in front of a GlobalMemoryPort: sectored (128-byte lines of four 32-byte
// sectors), set-associative with LRU replacement, write-through without allocation (as NVIDIA's
// L1 treats global stores). A sector still in flight serves later requests when it arrives, so a
// second warp reading the same data does not pay the miss again.
#include <cstdint>
#include <vector>

#include "models/simt/memory_access.h"

namespace accelsim::simt {

struct L1Params {
    std::int64_t bytes = 0;  // 0 = no L1
    int ways = 4;
    int line_bytes = 128;
    int hit_latency = 33;
};

class L1Cache : public GlobalMemoryPort {
public:
    L1Cache(const L1Params& params, GlobalMemoryPort& next);
    std::uint64_t access(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm) override;
    std::uint64_t hits() const { return hits_; }
    std::uint64_t misses() const { return misses_; }

private:
    struct Line {
        std::uint32_t tag = 0;
        bool valid = false;
        std::uint64_t last_use = 0;
        std::uint64_t sector_ready[4] = {};  // 0 = sector not present
    };
    L1Params params_;
    GlobalMemoryPort& next_;
    int sets_;
    std::vector<Line> lines_;  // sets_ x ways
    std::uint64_t use_counter_ = 0;
    std::uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace accelsim::simt
