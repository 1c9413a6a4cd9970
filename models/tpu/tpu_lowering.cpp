#include "models/tpu/tpu_lowering.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "models/tpu/gemm_split.h"
#include "models/tpu/tpu_chip.h"

namespace accelsim::tpu {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

constexpr std::int64_t kAccumulatorBytes = 4;  // int32 or fp32 accumulators

// Candidate sizes for one tile dimension: the whole extent, then halvings rounded up to the
// granule, down to the granule (or `floor`, whichever is larger).
std::vector<std::int64_t> candidates(std::int64_t extent, std::int64_t granule, std::int64_t floor) {
    std::vector<std::int64_t> out{extent};
    std::int64_t v = extent;
    const std::int64_t lowest = std::min(extent, std::max(granule, floor));
    while (v > lowest) {
        v = std::max(lowest, round_up(ceil_div(v, 2), granule));
        if (v == out.back()) break;
        out.push_back(v);
    }
    return out;
}

// VMEM of a GEMM tiling: two input buffers (A and B tiles, double-buffered), one accumulator
// tile (4-byte sums) and one output staging tile in the operand dtype, which the DMA drains while
// the next output tile accumulates.
std::int64_t gemm_footprint(std::int64_t bt, std::int64_t mt, std::int64_t nt, std::int64_t kt, std::int64_t e) {
    return 2 * (bt * mt * kt + bt * kt * nt) * e + bt * mt * nt * (kAccumulatorBytes + e);
}

std::string op_label(const Op& op) { return "op '" + op.name + "' (" + std::string(to_string(op.kind)) + ")"; }

}  // namespace

double core_bytes_per_cycle_estimate(const TpuChipParams& p) {
    // DRAM sustains about 80% of its peak on streaming tiles (refresh, row switches: a weight-
    // streaming m=8 n=k=4096 matmul on tpu_v4 achieves 81%); 75% keeps the estimate on the safe side.
    constexpr double kSustainedShare = 0.75;
    double bpc = p.memory ? kSustainedShare * p.memory->dram.peak_bytes_per_second() / p.clock_hz / p.cores : 1e18;
    if (p.memory) bpc = std::min(bpc, p.memory->crossbar.bytes_per_cycle_per_port);
    if (p.dma.bytes_per_cycle > 0) bpc = std::min(bpc, p.dma.bytes_per_cycle);
    return bpc;
}

double dma_latency_estimate(const TpuChipParams& p) {
    double cycles = p.dma.latency_cycles;
    if (p.memory) {
        const auto& t = p.memory->dram.timing;
        cycles += ((t.tRCD + t.CL) * t.tCK + p.memory->dram.controller_latency_ns) * p.clock_hz * 1e-9 +
                  p.memory->crossbar.latency_cycles;
    }
    return cycles;
}

std::vector<GemmPart> mxu_tile_parts(const GemmShape& tile, const TpuChipParams& p, DType dtype) {
    const double rate = p.mxu_rates.of(dtype);
    return split_gemm(tile, p.mxus_per_core, p.mxu.cols, [&](const GemmShape& s) {
        return mxu_gemm_timing(p.mxu, mxu_timing_shape(s, rate), dtype).cycles;
    });
}

MxuTileCost mxu_tile_cost(const GemmShape& tile, const TpuChipParams& p, DType dtype) {
    const double rate = p.mxu_rates.of(dtype);
    MxuTileCost cost;
    for (const GemmPart& part : mxu_tile_parts(tile, p, dtype)) {
        const GemmShape s = mxu_timing_shape(part.shape(tile.k), rate);
        GemmShape twice = s;
        twice.batch *= 2;
        const MxuStats one = mxu_gemm_timing(p.mxu, s, dtype);
        // The marginal cost of one more tile right behind this one: the fold stream continues
        // without a new fill (closed forms are linear in the fold count, docs/mxu.md).
        const std::int64_t warm = mxu_gemm_timing(p.mxu, twice, dtype).cycles - one.cycles;
        if (one.cycles > cost.cold) {
            cost.cold = one.cycles;
            cost.weight_stall = one.weight_load_stall_cycles + one.fill_drain_cycles;
        }
        cost.warm = std::max(cost.warm, warm);
    }
    return cost;
}

namespace {

struct GemmTiling {
    std::int64_t bt = 1, mt = 1, nt = 1, kt = 1;
    double estimate = 0;
    std::int64_t traffic = 0;
};

struct GemmContext {
    const Op& op;
    const TpuChipParams& p;
    GemmShape g;
    std::int64_t e;          // operand bytes
    bool on_mxu;
    double bpc;              // HBM bytes per core cycle (estimate)
    double latency;          // unloaded cycles from a DMA request to its first data (estimate)
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>, MxuTileCost> cache;

    MxuTileCost tile_cost(std::int64_t bt, std::int64_t mt, std::int64_t nt, std::int64_t kt) {
        const auto key = std::make_tuple(bt, mt, nt, kt);
        auto it = cache.find(key);
        if (it != cache.end()) return it->second;
        MxuTileCost c;
        if (on_mxu) {
            c = mxu_tile_cost(GemmShape{bt, mt, nt, kt}, p, op.dtype);
        } else {
            // No MXU rate for the dtype: one MAC per vector ALU per cycle.
            c.cold = c.warm = ceil_div(bt * mt * nt * kt, p.vector.element_ops_per_cycle());
        }
        cache.emplace(key, c);
        return c;
    }

    // HBM bytes of A for a part: the activations (conv: the raw input, not the im2col matrix).
    std::int64_t a_bytes(std::int64_t batch, std::int64_t m) const {
        if (op.kind == OpKind::conv2d)
            return ceil_div(op.input_bytes() * batch * m, g.batch * g.m);
        return batch * m * g.k * e;
    }

    // The best tiling of a core's part (batch, m, n); throws when nothing fits. Estimates within
    // 2% of the fastest count as equal (the estimate ignores DRAM latency and row effects), and
    // among those the least HBM traffic, then the fewest steps, wins.
    GemmTiling tile(const GemmPart& part) {
        std::vector<GemmTiling> fits;
        const std::int64_t vmem = p.vmem_bytes;
        for (std::int64_t nt : candidates(part.n, p.mxu.cols, p.mxu.cols)) {
            for (std::int64_t kt : candidates(g.k, p.mxu.rows, p.mxu.rows)) {
                for (std::int64_t bt : candidates(part.batch, 1, 1)) {
                    for (std::int64_t mt : candidates(part.m, 8, 8)) {
                        const std::int64_t footprint = gemm_footprint(bt, mt, nt, kt, e);
                        if (footprint > vmem) continue;
                        const std::int64_t nb = ceil_div(part.batch, bt), nm = ceil_div(part.m, mt),
                                           nn = ceil_div(part.n, nt), nk = ceil_div(g.k, kt);
                        const std::int64_t steps = nb * nm * nn * nk;
                        const std::int64_t a_traffic = a_bytes(part.batch, part.m) * nn;
                        const std::int64_t b_traffic = part.batch * g.k * part.n * e * (nk == 1 ? 1 : nm);
                        const std::int64_t c_traffic = part.batch * part.m * part.n * e;
                        const MxuTileCost cost = tile_cost(bt, mt, nt, kt);
                        const double d = static_cast<double>(a_traffic + b_traffic) / steps / bpc + latency;
                        const double w = static_cast<double>(c_traffic) / (nb * nm * nn) / bpc;
                        // First tile's transfer, then one step per max(transfer, compute), the
                        // array's fill and drain once, the last write-back.
                        const double estimate = d + steps * std::max(d, static_cast<double>(cost.warm)) +
                                                static_cast<double>(cost.cold - cost.warm) + w;
                        fits.push_back(GemmTiling{bt, mt, nt, kt, estimate, a_traffic + b_traffic + c_traffic});
                    }
                }
            }
        }
        bool found = !fits.empty();
        GemmTiling best;
        if (found) {
            double fastest = fits.front().estimate;
            for (const GemmTiling& t : fits) fastest = std::min(fastest, t.estimate);
            bool have = false;
            for (const GemmTiling& t : fits) {
                if (t.estimate > 1.02 * fastest) continue;
                const std::int64_t volume = t.bt * t.mt * t.nt * t.kt;
                if (!have || t.traffic < best.traffic ||
                    (t.traffic == best.traffic && volume > best.bt * best.mt * best.nt * best.kt)) {
                    best = t;
                    have = true;
                }
            }
        }
        if (!found) {
            const std::int64_t smallest = gemm_footprint(1, 8, p.mxu.cols, p.mxu.rows, e);
            throw std::invalid_argument(op_label(op) + ": no GEMM tile fits VMEM (" + std::to_string(vmem) +
                                        " bytes per core; the smallest double-buffered tile needs " +
                                        std::to_string(smallest) + ")");
        }
        return best;
    }
};

OpPlan lower_gemm(const Op& op, const TpuChipParams& p, const TensorAddresses& where) {
    GemmContext ctx{op, p, op.as_gemm(), bytes_of(op.dtype), p.mxu_rates.of(op.dtype) > 0,
                    core_bytes_per_cycle_estimate(p), dma_latency_estimate(p), {}};
    const GemmShape& g = ctx.g;
    const std::int64_t e = ctx.e;
    OpPlan plan;
    plan.unit = ctx.on_mxu ? "mxu" : "vector";
    plan.macs = g.macs();
    // Cores: compute of the part on the core's MXUs against its compulsory bytes at the core's
    // share of HBM, whichever is larger.
    const std::vector<GemmPart> core_parts = split_gemm(g, p.cores, p.mxu.cols, [&](const GemmShape& s) {
        const MxuTileCost c = ctx.tile_cost(s.batch, s.m, s.n, s.k);
        const double bytes = static_cast<double>(ctx.a_bytes(s.batch, s.m) + (s.k * s.n + s.m * s.n) * s.batch * e);
        // The traffic term breaks ties between equally compute-bound splits in favour of less
        // HBM traffic (splitting N reads each weight once; splitting M reads them on every core).
        const auto memory = static_cast<std::int64_t>(bytes / ctx.bpc);
        return std::max<std::int64_t>(c.cold, memory) + memory / 16;
    });
    plan.cores.resize(static_cast<std::size_t>(p.cores));
    for (std::size_t c = 0; c < core_parts.size(); ++c) {
        const GemmPart& part = core_parts[c];
        const GemmTiling t = ctx.tile(part);
        plan.tile = TileShape{t.bt, t.mt, t.nt, t.kt};
        plan.vmem_footprint = std::max(plan.vmem_footprint, gemm_footprint(t.bt, t.mt, t.nt, t.kt, e));
        std::vector<TileStep>& steps = plan.cores[c];
        for (std::int64_t n0 = part.n0; n0 < part.n0 + part.n; n0 += t.nt) {
            const std::int64_t nt = std::min(t.nt, part.n0 + part.n - n0);
            for (std::int64_t b0 = part.b0; b0 < part.b0 + part.batch; b0 += t.bt) {
                const std::int64_t bt = std::min(t.bt, part.b0 + part.batch - b0);
                for (std::int64_t m0 = part.m0; m0 < part.m0 + part.m; m0 += t.mt) {
                    const std::int64_t mt = std::min(t.mt, part.m0 + part.m - m0);
                    for (std::int64_t k0 = 0; k0 < g.k; k0 += t.kt) {
                        const std::int64_t kt = std::min(t.kt, g.k - k0);
                        TileStep s;
                        s.b0 = b0; s.bt = bt; s.m0 = m0; s.mt = mt; s.n0 = n0; s.nt = nt; s.k0 = k0; s.kt = kt;
                        const std::int64_t a_tile = op.kind == OpKind::conv2d
                                                        ? ceil_div(ctx.a_bytes(bt, mt) * kt, g.k)
                                                        : bt * mt * kt * e;
                        s.in[s.in_count++] = {where.a + static_cast<std::uint64_t>(((b0 * g.m + m0) * g.k + k0) * e),
                                              a_tile};
                        // B stays resident across m-blocks when the whole K fits in one k-block.
                        const bool b_resident = kt == g.k && m0 != part.m0;
                        if (!b_resident)
                            s.in[s.in_count++] = {
                                where.b + static_cast<std::uint64_t>(((b0 * g.k + k0) * g.n + n0) * e), bt * kt * nt * e};
                        if (k0 + kt == g.k)
                            s.out = {where.c + static_cast<std::uint64_t>(((b0 * g.m + m0) * g.n + n0) * e),
                                     bt * mt * nt * e};
                        const MxuTileCost cost = ctx.tile_cost(bt, mt, nt, kt);
                        s.cold_cycles = cost.cold;
                        s.warm_cycles = cost.warm;
                        s.weight_stall_cycles = cost.weight_stall;
                        s.vmem_bytes = (bt * mt * kt + bt * kt * nt) * e + bt * mt * nt * kAccumulatorBytes;
                        steps.push_back(s);
                    }
                }
            }
        }
    }
    return plan;
}

OpPlan lower_vector(const Op& op, const TpuChipParams& p, const TensorAddresses& where, bool input_in_vmem) {
    OpPlan plan;
    plan.unit = "vector";
    const std::int64_t e = bytes_of(op.dtype);
    const bool by_rows = op.kind == OpKind::softmax || op.kind == OpKind::layernorm;
    const std::int64_t row = by_rows ? op.cols : 1;  // elements that must stay together
    const std::int64_t rows = by_rows ? op.rows : op.elements;
    const std::int64_t inputs = (op.kind == OpKind::add || op.kind == OpKind::mul) ? 2 : 1;
    const std::int64_t ops = op.vector_ops_per_element();
    const std::int64_t reductions = by_rows ? 2 : 0;  // softmax: max, sum; layernorm: mean, variance
    const std::int64_t vreg = p.vector.element_ops_per_cycle();
    plan.element_ops = op.vector_elements() * ops;
    // Bytes of VMEM per element of a tile: inputs and output, double-buffered.
    const std::int64_t per_element = 2 * (inputs + 1) * e;
    const std::int64_t extra = op.kind == OpKind::layernorm ? 2 * op.cols * e : 0;  // gamma, beta
    const std::int64_t fit_rows = (p.vmem_bytes - extra) / (per_element * row);
    if (fit_rows < 1)
        throw std::invalid_argument(op_label(op) + ": one row of " + std::to_string(row) +
                                    " elements does not fit VMEM twice over (" + std::to_string(p.vmem_bytes) +
                                    " bytes per core)");
    if (input_in_vmem) plan.fused_bytes_saved = op.vector_elements() * e;
    std::vector<std::int64_t> begin, size;
    // Elementwise ops split in whole vector registers so every core's work is register aligned.
    split_range(rows, p.cores, by_rows ? 1 : vreg, begin, size);
    plan.cores.resize(static_cast<std::size_t>(p.cores));
    for (std::size_t c = 0; c < begin.size(); ++c) {
        // Aim for ~16 steps per core so DMA overlaps compute, in whole vector registers.
        std::int64_t tile_rows = std::max<std::int64_t>(ceil_div(size[c], 16), ceil_div(vreg, row));
        tile_rows = std::min({tile_rows, fit_rows, size[c]});
        plan.tile = TileShape{1, tile_rows * row, 0, 0};
        plan.vmem_footprint = std::max(plan.vmem_footprint, tile_rows * row * per_element + extra);
        std::vector<TileStep>& steps = plan.cores[c];
        for (std::int64_t r0 = begin[c]; r0 < begin[c] + size[c]; r0 += tile_rows) {
            const std::int64_t rt = std::min(tile_rows, begin[c] + size[c] - r0);
            const std::int64_t elems = rt * row;
            const auto offset = static_cast<std::uint64_t>(r0 * row * e);
            TileStep s;
            s.m0 = r0;
            s.mt = rt;
            if (!input_in_vmem) s.in[s.in_count++] = {where.a + offset, elems * e};
            if (inputs == 2) s.in[s.in_count++] = {where.b + offset, elems * e};
            if (extra > 0 && r0 == begin[c]) s.in[s.in_count++] = {where.b, extra};
            s.out = {where.c + offset, elems * e};
            s.cold_cycles = s.warm_cycles =
                ceil_div(elems * ops, vreg) + reductions * p.vector.reduction_latency_cycles();
            s.vmem_bytes = (inputs + 1) * elems * e;
            steps.push_back(s);
        }
    }
    return plan;
}

}  // namespace

OpPlan lower_op(const Op& op, const TpuChipParams& p, const TensorAddresses& where, bool input_in_vmem) {
    if (is_gemm_like(op.kind)) return lower_gemm(op, p, where);
    if (op.kind == OpKind::kernel) throw std::invalid_argument(op_label(op) + ": kernel ops run only on simt chips (this chip is systolic)");
    return lower_vector(op, p, where, input_in_vmem);
}

}  // namespace accelsim::tpu
