#include "models/common/pool_reference.h"

#include <algorithm>
#include <limits>

namespace accelsim {

PoolAxisWindow pool_axis_window(std::int64_t out_index, std::int64_t size, std::int64_t kernel, std::int64_t stride,
                                std::int64_t pad, std::int64_t dilation) {
    PoolAxisWindow a;
    a.start = out_index * stride - pad;
    for (std::int64_t i = 0; i < kernel; ++i) {
        const std::int64_t at = a.start + i * dilation;
        if (at >= 0 && at < size) ++a.valid;
        if (at >= -pad && at < size + pad) ++a.padded;
    }
    return a;
}

std::int64_t pool_divisor(const PoolShape& p, std::int64_t oh, std::int64_t ow) {
    const PoolAxisWindow y = pool_axis_window(oh, p.h, p.r, p.stride_h, p.pad_h, p.dilation_h);
    const PoolAxisWindow x = pool_axis_window(ow, p.w, p.s, p.stride_w, p.pad_w, p.dilation_w);
    return p.count_pad ? y.padded * x.padded : y.valid * x.valid;
}

std::vector<double> pool_reference(const PoolShape& p, const std::vector<float>& x) {
    std::vector<double> out(static_cast<std::size_t>(p.n * p.out_h() * p.out_w() * p.c));
    const bool max = p.mode == PoolMode::max;
    double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
    for_each_pool_window(
        p,
        [&](std::int64_t, std::int64_t i) {
            const double v = x[static_cast<std::size_t>(i)];
            acc = max ? std::max(acc, v) : acc + v;
        },
        [&](std::int64_t o, std::int64_t oh, std::int64_t ow) {
            out[static_cast<std::size_t>(o)] = max ? acc : acc / static_cast<double>(pool_divisor(p, oh, ow));
            acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
        });
    return out;
}

}  // namespace accelsim
