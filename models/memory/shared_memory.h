#pragma once
// Shared-memory bank conflicts of one warp access (SIMT cores): 32 banks of 4 bytes. The access
// takes as many cycles as the busiest bank has distinct 4-byte words to deliver; lanes reading the
// same word are served by one broadcast.
#include <array>
#include <cstdint>

namespace accelsim::memory {

struct SharedMemoryParams {
    int banks = 32;       // at most 32 (one warp)
    int bank_bytes = 4;   // width of one bank word
};

// Conflict degree (cycles, >= 1 when any lane is active, 0 for an empty mask) of one warp access:
// max over banks of the number of distinct words requested in that bank. `active_mask` bit i
// enables lane i. Allocation-free.
int shared_memory_conflict_degree(const std::array<std::uint32_t, 32>& lane_addresses, std::uint32_t active_mask,
                                  const SharedMemoryParams& params = {});

}  // namespace accelsim::memory
