#include "models/gpu/conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "models/simt/occupancy.h"
#include "models/gpu/gpu_stats.h"

namespace accelsim::gpu {

namespace {

constexpr std::int64_t kMaxBufferBytes = kGemmMaxBufferBytes;

float to_float(std::uint16_t bits, DType dtype) { return gemm_operand_to_float(bits, dtype); }
std::uint16_t to_bits(float f, DType dtype) { return gemm_operand_bits(f, dtype); }

struct ConvLayout {
    Conv2dShape s;
    std::int64_t oh = 0, ow = 0, cg = 0, kg = 0, cp = 0, kp = 0, kred = 0;  // kred = R*S*C'
    std::int64_t in_bytes = 0, w_bytes = 0, out_bytes = 0;
    std::uint32_t in = 0, w = 0, out = 0, zero = 0;
    static constexpr std::int64_t eb = 2;
    std::int64_t in_index(std::int64_t n, std::int64_t h, std::int64_t x, std::int64_t grp, std::int64_t c) const {
        return (((n * s.h + h) * s.w + x) * s.groups + grp) * cp + c;
    }
    std::int64_t w_index(std::int64_t k, std::int64_t r, std::int64_t q, std::int64_t c) const {
        return ((k * s.r + r) * s.s + q) * cp + c;
    }
    std::int64_t out_index(std::int64_t n, std::int64_t y, std::int64_t x, std::int64_t grp, std::int64_t k) const {
        return (((n * oh + y) * ow + x) * s.groups + grp) * kp + k;
    }
};

ConvLayout conv_layout(const Op& op) {
    if (op.kind != OpKind::conv2d) throw LoweringError("lower_conv2d: not a conv2d");
    if (op.dtype != DType::fp16 && op.dtype != DType::bf16)
        throw LoweringError("the implicit-GEMM kernel takes fp16 or bf16, not " +
                            std::string(to_string(op.dtype)));
    ConvLayout l;
    l.s = op.conv;
    const Conv2dShape& s = l.s;
    if (s.n < 1 || s.h < 1 || s.w < 1 || s.c < 1 || s.k < 1 || s.r < 1 || s.s < 1 || s.groups < 1 ||
        s.c % s.groups != 0 || s.k % s.groups != 0 || s.stride_h < 1 || s.stride_w < 1 || s.dilation_h < 1 ||
        s.dilation_w < 1 || s.pad_h < 0 || s.pad_w < 0 || s.out_h() < 1 || s.out_w() < 1)
        throw LoweringError("invalid shape");
    l.oh = s.out_h();
    l.ow = s.out_w();
    l.cg = s.c / s.groups;
    l.kg = s.k / s.groups;
    l.cp = gemm_padded(l.cg);
    l.kp = gemm_padded(l.kg);
    l.kred = s.r * s.s * l.cp;
    l.in_bytes = s.n * s.h * s.w * s.groups * l.cp * l.eb;
    l.w_bytes = s.k * l.kred * l.eb;
    l.out_bytes = s.n * l.oh * l.ow * s.groups * l.kp * l.eb;
    if (l.in_bytes + l.w_bytes + l.out_bytes > kMaxBufferBytes)
        throw LoweringError("tensors of " + std::to_string(l.in_bytes + l.w_bytes + l.out_bytes) +
                            " bytes exceed the GPU kernel library's 1 GiB of 32-bit global memory");
    return l;
}

// Direct convolution on the host (fp32 products of the rounded values summed in double), the
// --validate reference; bound as for the GEMM: K * 2^-24 * sum |x||w| (fp32 accumulation of the
// K = R*S*C/groups real taps) plus the output's rounding to the dtype.
std::function<LoweringNumerics(const simt::GlobalMemory&)> conv_check(const ConvLayout& l, DType dtype,
                                                                       std::vector<float> x, std::vector<float> w) {
    return [l, dtype, x = std::move(x), w = std::move(w)](const simt::GlobalMemory& memory) {
        const Conv2dShape& s = l.s;
        const double unit_out = dtype == DType::fp16 ? 0x1p-11 : 0x1p-8;
        const double taps = static_cast<double>(s.r * s.s * l.cg);
        LoweringNumerics out;
        for (std::int64_t n = 0; n < s.n; ++n)
            for (std::int64_t y = 0; y < l.oh; ++y)
                for (std::int64_t xo = 0; xo < l.ow; ++xo)
                    for (std::int64_t grp = 0; grp < s.groups; ++grp)
                        for (std::int64_t k = 0; k < l.kg; ++k) {
                            double ref = 0, mag = 0;
                            for (std::int64_t r = 0; r < s.r; ++r) {
                                const std::int64_t ih = y * s.stride_h - s.pad_h + r * s.dilation_h;
                                if (ih < 0 || ih >= s.h) continue;
                                for (std::int64_t q = 0; q < s.s; ++q) {
                                    const std::int64_t iw = xo * s.stride_w - s.pad_w + q * s.dilation_w;
                                    if (iw < 0 || iw >= s.w) continue;
                                    for (std::int64_t c = 0; c < l.cg; ++c) {
                                        const double p = static_cast<double>(x[static_cast<std::size_t>(l.in_index(n, ih, iw, grp, c))]) *
                                                         w[static_cast<std::size_t>(l.w_index(grp * l.kg + k, r, q, c))];
                                        ref += p;
                                        mag += std::fabs(p);
                                    }
                                }
                            }
                            std::uint16_t h;
                            std::memcpy(&h, memory.data() + l.out + l.out_index(n, y, xo, grp, k) * l.eb, 2);
                            const double got = to_float(h, dtype);
                            const double accumulate = taps * 0x1p-24 * mag;
                            const double bound = accumulate + unit_out * (std::fabs(ref) + accumulate) + 1e-30;
                            const double err = std::fabs(got - ref);
                            out.max_abs_err = std::max(out.max_abs_err, err);
                            if (ref != 0) out.max_rel_err = std::max(out.max_rel_err, err / std::fabs(ref));
                            if (!(err <= bound)) out.passed = false;
                            ++out.checked;
                        }
        return out;
    };
}

LoweredKernel lower_conv(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target, const ConvLayout& layout,
                         const GemmTile& tile) {
    ConvLayout l = layout;
    const Conv2dShape& s = l.s;
    const simt::MmaType type = op.dtype == DType::bf16 ? simt::MmaType::bf16 : simt::MmaType::f16;
    l.in = memory.allocate(static_cast<std::size_t>(l.in_bytes));
    l.w = memory.allocate(static_cast<std::size_t>(l.w_bytes));
    l.out = memory.allocate(static_cast<std::size_t>(l.out_bytes));
    l.zero = memory.allocate(16);
    LoweredKernel out;
    out.kernel = conv_tensor_kernel(tile, type);
    const std::int64_t m = s.n * l.oh * l.ow, eb = l.eb;
    const std::int64_t tiles_m = (m + tile.bm - 1) / tile.bm, tiles_n = (l.kg + tile.bn - 1) / tile.bn;
    const std::int64_t slices = (l.kred + tile.bk - 1) / tile.bk, kfirst = l.kred - slices * tile.bk;
    const std::int64_t blocks = s.groups * tiles_m * tiles_n;
    if (blocks > 0xffffffffLL) throw LoweringError("conv2d: grid too large");
    out.dims = {static_cast<std::uint32_t>(blocks), static_cast<std::uint32_t>(tile.threads())};
    auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    const std::int64_t pix = s.groups * l.cp * eb;
    out.args = {u(m), u(l.kg), u(m - 1), u(l.kg - 1), l.in, l.w, l.out,
                0, u(l.kred * eb), u(s.groups * l.kp * eb),
                u(l.cp * eb), u(l.kg * l.kred * eb), u(l.kp * eb),
                u(tiles_m), u(tiles_n), u(tiles_m * tiles_n), u(kGemmGroupRows * tiles_n),
                u(slices), u(kfirst), 0,
                u(s.h), u(s.w), u(l.cp), u(s.s), u(l.ow), u(l.oh * l.ow), u(s.stride_h), u(s.stride_w),
                u(s.pad_h), u(s.pad_w), u(s.dilation_h), u(s.dilation_w), u(pix), u(s.h * s.w * pix), l.zero};
    const simt::Occupancy occ =
        simt::compute_occupancy(target.sm.limits, {tile.threads(), out.kernel->registers, out.kernel->shared_bytes});
    const double waves = static_cast<double>(blocks) / (static_cast<double>(std::max(1, target.sms)) * std::max(1, occ.blocks_per_sm));
    out.stats.push_back(stat_value(stat::tile_m, tile.bm));
    out.stats.push_back(stat_value(stat::tile_n, tile.bn));
    out.stats.push_back(stat_value(stat::tile_k, tile.bk));
    out.stats.push_back(stat_value(stat::grid, static_cast<double>(blocks)));
    out.stats.push_back(stat_value(stat::block, tile.threads()));
    out.stats.push_back(stat_value(stat::blocks_per_sm, occ.blocks_per_sm));
    out.stats.push_back(stat_value(stat::waves, waves));
    out.stats.push_back(stat_value(stat::gemm_m, static_cast<double>(m)));
    out.stats.push_back(stat_value(stat::gemm_n, static_cast<double>(l.kg)));
    out.stats.push_back(stat_value(stat::gemm_k, static_cast<double>(l.kred)));
    if (target.real_data) {
        std::mt19937_64 rng(target.seed);
        std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
        std::vector<float> x(static_cast<std::size_t>(l.in_bytes / eb), 0.0f), w(static_cast<std::size_t>(l.w_bytes / eb), 0.0f);
        auto put = [&](std::uint32_t base, std::int64_t index, std::vector<float>& host) {
            const std::uint16_t h = to_bits(uniform(rng), op.dtype);
            std::memcpy(memory.data() + base + index * eb, &h, 2);
            host[static_cast<std::size_t>(index)] = to_float(h, op.dtype);
        };
        for (std::int64_t n = 0; n < s.n; ++n)
            for (std::int64_t y = 0; y < s.h; ++y)
                for (std::int64_t xx = 0; xx < s.w; ++xx)
                    for (std::int64_t grp = 0; grp < s.groups; ++grp)
                        for (std::int64_t c = 0; c < l.cg; ++c) put(l.in, l.in_index(n, y, xx, grp, c), x);
        for (std::int64_t k = 0; k < s.k; ++k)
            for (std::int64_t r = 0; r < s.r; ++r)
                for (std::int64_t q = 0; q < s.s; ++q)
                    for (std::int64_t c = 0; c < l.cg; ++c) put(l.w, l.w_index(k, r, q, c), w);
        out.check = conv_check(l, op.dtype, std::move(x), std::move(w));
    }
    return out;
}

}  // namespace

LoweredKernel lower_conv2d_with_tile(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                     const GemmTile& tile) {
    return lower_conv(op, memory, target, conv_layout(op), tile);
}

LoweredKernel lower_conv2d(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    const ConvLayout l = conv_layout(op);
    const GemmShape g{l.s.groups, l.s.n * l.oh * l.ow, l.kg, l.kred};
    GemmTile tile = choose_gemm_tile(g, target.sms, target.sm).tile;
    tile.slices_ahead = 1;  // the conv variant keeps one slice ahead (its im2col state is per slice)
    return lower_conv(op, memory, target, l, tile);
}

}  // namespace accelsim::gpu
