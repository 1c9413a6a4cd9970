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
    // Power-of-two bank widths (all shipped configs): a shift, not a division per lane.
    const bool pow2 = bank_bytes > 0 && (bank_bytes & (bank_bytes - 1)) == 0;
    const int shift = pow2 ? __builtin_ctz(static_cast<unsigned>(bank_bytes)) : 0;
    auto word_of = [&](int l) {
        const std::uint32_t a = addresses[static_cast<std::size_t>(l)];
        return pow2 ? a >> shift : a / word_bytes;
    };
    int wavefronts = 0;
    for (int first = 0; first < 32; first += lanes_per_phase) {
        // Quick test first: all words of the phase inside a window of `banks` consecutive words
        // hit distinct banks (or the same word), so the phase is conflict-free.
        std::uint32_t lo = 0xffffffffu, hi = 0;
        bool any = false;
        for (int l = first; l < first + lanes_per_phase; ++l) {
            if (!((mask >> l) & 1)) continue;
            const std::uint32_t word0 = word_of(l);
            lo = std::min(lo, word0);
            hi = std::max(hi, word0 + static_cast<std::uint32_t>(words - 1));
            any = true;
        }
        if (!any) continue;
        if (hi - lo < static_cast<std::uint32_t>(banks)) {
            ++wavefronts;
            continue;
        }
        if (banks == 32) {
            // Second test: every bank asked for at most one distinct word (broadcasts included)
            // gives degree 1; any real conflict falls through to the exact count below.
            std::uint32_t bank_used = 0;
            std::array<std::uint32_t, 32> bank_word;
            bool conflict = false;
            for (int l = first; l < first + lanes_per_phase && !conflict; ++l) {
                if (!((mask >> l) & 1)) continue;
                const std::uint32_t word0 = word_of(l);
                for (int i = 0; i < words; ++i) {
                    const std::uint32_t word = word0 + static_cast<std::uint32_t>(i);
                    const std::uint32_t bit = 1u << (word & 31u);
                    if (bank_used & bit) {
                        conflict |= bank_word[word & 31u] != word;
                    } else {
                        bank_used |= bit;
                        bank_word[word & 31u] = word;
                    }
                }
            }
            if (!conflict) {
                ++wavefronts;
                continue;
            }
        }
        // Distinct words of this phase (at most 32), then the largest count in one bank.
        std::array<std::uint32_t, 32> distinct;
        int n = 0;
        for (int l = first; l < first + lanes_per_phase; ++l) {
            if (!((mask >> l) & 1)) continue;
            const std::uint32_t word0 = word_of(l);
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
