#include "models/simt/memory_access.h"

#include <algorithm>
#include <stdexcept>

namespace accelsim::simt {

namespace {

// Sorted unique values of the masked lanes (at most 32; insertion keeps it allocation-free).
int unique_sorted(const std::array<std::uint32_t, 32>& in, std::uint32_t mask, std::uint32_t divisor,
                  std::array<std::uint32_t, 32>& out) {
    int n = 0;
    for (int l = 0; l < 32; ++l) {
        if (!((mask >> l) & 1)) continue;
        const std::uint32_t v = in[static_cast<std::size_t>(l)] / divisor;
        int pos = n;
        while (pos > 0 && out[static_cast<std::size_t>(pos - 1)] > v) --pos;
        if (pos > 0 && out[static_cast<std::size_t>(pos - 1)] == v) continue;
        for (int i = n; i > pos; --i) out[static_cast<std::size_t>(i)] = out[static_cast<std::size_t>(i - 1)];
        out[static_cast<std::size_t>(pos)] = v;
        ++n;
    }
    return n;
}

}  // namespace

int coalesce_sectors(const std::array<std::uint32_t, 32>& addresses, std::uint32_t mask, int sector_bytes,
                     std::array<std::uint32_t, 32>& sectors) {
    if (mask == 0xffffffffu) {
        // Fast path: a full warp reading consecutive words (the common, coalesced case).
        bool consecutive = true;
        for (int l = 1; l < 32 && consecutive; ++l)
            consecutive = addresses[static_cast<std::size_t>(l)] == addresses[0] + 4u * static_cast<std::uint32_t>(l);
        if (consecutive && addresses[0] <= 0xffffffffu - 128u) {
            const auto size = static_cast<std::uint32_t>(sector_bytes);
            const std::uint32_t first = addresses[0] / size, last = (addresses[31] + 3) / size;
            if (last - first < 32) {
                for (std::uint32_t s = first; s <= last; ++s) sectors[s - first] = s * size;
                return static_cast<int>(last - first + 1);
            }
        }
    }
    const auto size = static_cast<std::uint32_t>(sector_bytes);
    const int n = unique_sorted(addresses, mask, size, sectors);
    for (int i = 0; i < n; ++i) sectors[static_cast<std::size_t>(i)] *= size;
    return n;
}

int shared_bank_conflict_degree(const std::array<std::uint32_t, 32>& addresses, std::uint32_t mask, int banks,
                                int bank_bytes) {
    if (mask == 0) return 0;
    if (banks == 32 && bank_bytes > 0 && (bank_bytes & (bank_bytes - 1)) == 0) {
        // Fast path for the conflict-free case (every bank asked for at most one distinct word,
        // broadcasts included); any real conflict falls through to the exact count below.
        const int shift = __builtin_ctz(static_cast<unsigned>(bank_bytes));
        if (mask == 0xffffffffu) {
            // Quickest test first: words within a window of 32 consecutive words fall into 32
            // distinct banks (or are the same word), so the access is conflict-free. Min and max
            // over the lanes vectorize; tiles, rows and broadcasts all pass this.
            std::uint32_t lo = 0xffffffffu, hi = 0;
            for (int l = 0; l < 32; ++l) {
                const std::uint32_t word = addresses[static_cast<std::size_t>(l)] >> shift;
                lo = std::min(lo, word);
                hi = std::max(hi, word);
            }
            if (hi - lo < 32) return 1;
        }
        std::uint32_t bank_used = 0;
        std::array<std::uint32_t, 32> bank_word;
        bool conflict = false;
        for (int l = 0; l < 32; ++l) {
            if (!((mask >> l) & 1)) continue;
            const std::uint32_t word = addresses[static_cast<std::size_t>(l)] >> shift;
            const std::uint32_t bank = word & 31u;
            const std::uint32_t bit = 1u << bank;
            if (bank_used & bit) {
                conflict |= bank_word[bank] != word;
            } else {
                bank_used |= bit;
                bank_word[bank] = word;
            }
        }
        if (!conflict) return 1;
    }
    std::array<std::uint32_t, 32> words;
    const int n = unique_sorted(addresses, mask, static_cast<std::uint32_t>(bank_bytes), words);
    std::array<int, 64> per_bank{};
    int degree = 0;
    for (int i = 0; i < n; ++i) {
        const auto bank = static_cast<std::size_t>(words[static_cast<std::size_t>(i)] % static_cast<std::uint32_t>(banks)) % per_bank.size();
        degree = std::max(degree, ++per_bank[bank]);
    }
    return degree;
}

void GlobalMemoryPort::submit(std::uint64_t, std::uint32_t, bool, int, std::uint64_t) {
    throw std::logic_error("GlobalMemoryPort::submit on a blocking port");
}

void GlobalMemoryPort::advance(std::uint64_t, std::vector<SectorAnswer>&) {}

void FixedLatencyMemory::submit(std::uint64_t cycle, std::uint32_t, bool write, int sm, std::uint64_t tag) {
    ++(write ? write_sectors_ : read_sectors_);
    pending_.push_back({sm, tag, cycle + static_cast<std::uint64_t>(latency_)});
    pending_cycles_.push_back(cycle);
}

void FixedLatencyMemory::advance(std::uint64_t end, std::vector<SectorAnswer>& answers) {
    // No contention: a sector's answer depends on nothing else, so "serving" it is taking it out.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < pending_.size(); ++i) {
        if (pending_cycles_[i] < end) {
            answers.push_back(pending_[i]);
        } else {
            pending_[kept] = pending_[i];
            pending_cycles_[kept++] = pending_cycles_[i];
        }
    }
    pending_.resize(kept);
    pending_cycles_.resize(kept);
}

std::uint64_t FixedLatencyMemory::next_activity_cycle() {
    std::uint64_t next = ~std::uint64_t{0};
    for (const std::uint64_t c : pending_cycles_) next = std::min(next, c);
    return next;
}

}  // namespace accelsim::simt
