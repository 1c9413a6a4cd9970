#include "models/memory/shared_memory.h"

#include <stdexcept>

namespace accelsim::memory {

int shared_memory_conflict_degree(const std::array<std::uint32_t, 32>& lane_addresses, std::uint32_t active_mask,
                                  const SharedMemoryParams& params) {
    if (params.banks <= 0 || params.banks > 32 || params.bank_bytes <= 0)
        throw std::invalid_argument("shared memory: banks must be in 1..32 and bank_bytes > 0");
    // At most 32 distinct words: a fixed array and a quadratic scan beat any map here.
    std::array<std::uint32_t, 32> words{};
    int distinct = 0;
    std::array<int, 32> per_bank{};
    int worst = 0;
    const auto bank_bytes = static_cast<std::uint32_t>(params.bank_bytes);
    const auto banks = static_cast<std::uint32_t>(params.banks);
    for (int lane = 0; lane < 32; ++lane) {
        if (!((active_mask >> lane) & 1u)) continue;
        const std::uint32_t word = lane_addresses[static_cast<std::size_t>(lane)] / bank_bytes;
        bool seen = false;
        for (int i = 0; i < distinct; ++i)
            if (words[static_cast<std::size_t>(i)] == word) {
                seen = true;
                break;
            }
        if (seen) continue;  // broadcast
        words[static_cast<std::size_t>(distinct++)] = word;
        const int n = ++per_bank[word % banks];
        if (n > worst) worst = n;
    }
    return worst;
}

}  // namespace accelsim::memory
