#include "models/simt/shared_access.h"

#include <algorithm>

#include "models/simt/memory_access.h"

namespace accelsim::simt {

int shared_access_wavefronts(const std::array<std::uint32_t, 32>& addresses, std::uint32_t mask, int words, int banks,
                             int bank_bytes) {
    if (words <= 1) return shared_bank_conflict_degree(addresses, mask, banks, bank_bytes);
    // 32 lanes x `words` words split into phases of 32 / words lanes, so a conflict-free phase
    // asks each of the 32 banks once.
    const int lanes_per_phase = std::max(1, 32 / words);
    const auto word_bytes = static_cast<std::uint32_t>(bank_bytes);
    int wavefronts = 0;
    for (int first = 0; first < 32; first += lanes_per_phase) {
        // Quick test first: all words of the phase inside a window of `banks` consecutive words
        // hit distinct banks (or the same word), so the phase is conflict-free.
        std::uint32_t lo = 0xffffffffu, hi = 0;
        bool any = false;
        for (int l = first; l < first + lanes_per_phase; ++l) {
            if (!((mask >> l) & 1)) continue;
            const std::uint32_t word0 = addresses[static_cast<std::size_t>(l)] / word_bytes;
            lo = std::min(lo, word0);
            hi = std::max(hi, word0 + static_cast<std::uint32_t>(words - 1));
            any = true;
        }
        if (!any) continue;
        if (hi - lo < static_cast<std::uint32_t>(banks)) {
            ++wavefronts;
            continue;
        }
        // Distinct words of this phase (at most 32), then the largest count in one bank.
        std::array<std::uint32_t, 32> distinct;
        int n = 0;
        for (int l = first; l < first + lanes_per_phase; ++l) {
            if (!((mask >> l) & 1)) continue;
            const std::uint32_t word0 = addresses[static_cast<std::size_t>(l)] / word_bytes;
            for (int i = 0; i < words; ++i) {
                const std::uint32_t word = word0 + static_cast<std::uint32_t>(i);
                if (std::find(distinct.begin(), distinct.begin() + n, word) == distinct.begin() + n)
                    distinct[static_cast<std::size_t>(n++)] = word;
            }
        }
        std::array<int, 64> per_bank{};
        int degree = 0;
        for (int i = 0; i < n; ++i) {
            const auto bank = static_cast<std::size_t>(distinct[static_cast<std::size_t>(i)] %
                                                       static_cast<std::uint32_t>(banks)) % per_bank.size();
            degree = std::max(degree, ++per_bank[bank]);
        }
        wavefronts += degree;
    }
    return wavefronts;
}

}  // namespace accelsim::simt
