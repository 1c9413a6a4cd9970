#include "models/tpu/gemm_split.h"

#include <algorithm>
#include <stdexcept>

namespace accelsim::tpu {

void split_range(std::int64_t total, std::int64_t parts, std::int64_t granule, std::vector<std::int64_t>& begin,
                 std::vector<std::int64_t>& size) {
    begin.clear();
    size.clear();
    const std::int64_t granules = ceil_div(total, granule);
    parts = std::min(parts, granules);
    for (std::int64_t i = 0; i < parts; ++i) {
        const std::int64_t g0 = i * granules / parts, g1 = (i + 1) * granules / parts;
        const std::int64_t lo = g0 * granule, hi = std::min(total, g1 * granule);
        begin.push_back(lo);
        size.push_back(hi - lo);
    }
}

std::vector<GemmPart> split_gemm(const GemmShape& g, int units, std::int64_t n_granule, const PartCost& cost) {
    if (units < 1 || n_granule < 1 || g.batch < 1 || g.m < 1 || g.n < 1 || g.k < 1)
        throw std::invalid_argument("split_gemm: empty GEMM or no units");
    const std::int64_t n_tiles = ceil_div(g.n, n_granule);
    std::int64_t best_pb = 1, best_pn = 1, best_pm = 1, best_cost = -1, best_units = 0;
    for (std::int64_t pb = 1; pb <= std::min<std::int64_t>(units, g.batch); ++pb) {
        for (std::int64_t pn = 1; pn <= std::min<std::int64_t>(units / pb, n_tiles); ++pn) {
            for (std::int64_t pm = 1; pm <= std::min<std::int64_t>(units / (pb * pn), g.m); ++pm) {
                const GemmShape slowest{ceil_div(g.batch, pb), ceil_div(g.m, pm),
                                        std::min(g.n, ceil_div(n_tiles, pn) * n_granule), g.k};
                const std::int64_t c = cost(slowest);
                const std::int64_t used = pb * pn * pm;
                if (best_cost < 0 || c < best_cost || (c == best_cost && used < best_units)) {
                    best_cost = c;
                    best_units = used;
                    best_pb = pb;
                    best_pn = pn;
                    best_pm = pm;
                }
            }
        }
    }
    std::vector<std::int64_t> b_begin, b_size, n_begin, n_size, m_begin, m_size;
    split_range(g.batch, best_pb, 1, b_begin, b_size);
    split_range(g.n, best_pn, n_granule, n_begin, n_size);
    split_range(g.m, best_pm, 1, m_begin, m_size);
    std::vector<GemmPart> parts;
    for (std::size_t b = 0; b < b_begin.size(); ++b)
        for (std::size_t n = 0; n < n_begin.size(); ++n)
            for (std::size_t m = 0; m < m_begin.size(); ++m)
                parts.push_back(GemmPart{b_begin[b], b_size[b], m_begin[m], m_size[m], n_begin[n], n_size[n]});
    return parts;
}

}  // namespace accelsim::tpu
