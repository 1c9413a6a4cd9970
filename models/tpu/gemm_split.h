#pragma once
// How a GEMM is divided among the chip's matrix units (docs/tpu.md, "Splitting a GEMM").
// A GEMM batch x M x N x K is cut into pb x pm x pn parts: batches, rows of A (M) and groups of
// whole array-width column tiles of B (N); K is never split, so every part produces finished
// outputs and no cross-unit reduction is needed. The factors are chosen to minimise the cycles of
// the slowest part (the op ends when its slowest unit ends).
#include <cstdint>
#include <functional>
#include <vector>

#include "models/common/ceil_div.h"
#include "models/common/op.h"

namespace accelsim::tpu {

struct GemmPart {
    std::int64_t b0 = 0, batch = 0;  // batches b0 .. b0+batch-1
    std::int64_t m0 = 0, m = 0;      // rows of A / C
    std::int64_t n0 = 0, n = 0;      // columns of B / C
    GemmShape shape(std::int64_t k) const { return GemmShape{batch, m, n, k}; }
};

// Cost of one part of shape (batch, m, n, k) on one unit, in cycles.
using PartCost = std::function<std::int64_t(const GemmShape&)>;

// Splits `g` over at most `units` units; columns are split in multiples of `n_granule` (the array
// width, so no column tile is shared by two units). Returns the non-empty parts, at most `units`,
// in (batch, n, m) order. Deterministic: among equal slowest-part costs the split using fewer
// units wins, then the first in (pb, pn, pm) enumeration order.
std::vector<GemmPart> split_gemm(const GemmShape& g, int units, std::int64_t n_granule, const PartCost& cost);

// Cuts `total` items into `parts` contiguous ranges whose sizes differ by at most one granule:
// range i starts at begin[i] and has size[i] (multiples of granule except possibly the last).
void split_range(std::int64_t total, std::int64_t parts, std::int64_t granule, std::vector<std::int64_t>& begin,
                 std::vector<std::int64_t>& size);

}  // namespace accelsim::tpu
