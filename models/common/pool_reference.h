#pragma once
// The pool op's windows and its double-precision reference, shared by the chips' --validate checks
// (tpu_vector.cpp, gpu/pool.cpp) and the tests: which input positions an output reads and what it
// divides by, written once from the ONNX / PyTorch definitions.
#include <cstdint>
#include <vector>

#include "models/common/op.h"

namespace accelsim {

// The window of output (oh, ow) along one axis: positions start + i * dilation for i in
// [0, count) of which [first, last] lie inside the input (clipped); padded_count of them lie inside
// the padded input (the avg divisor with count_pad, as PyTorch's avg_pool2d clips its window to
// the padded bounds).
struct PoolAxisWindow {
    std::int64_t start = 0;        // input position of window element 0 (may be negative: padding)
    std::int64_t valid = 0;        // window elements inside the input
    std::int64_t padded = 0;       // window elements inside the padded input
};
PoolAxisWindow pool_axis_window(std::int64_t out_index, std::int64_t size, std::int64_t kernel, std::int64_t stride,
                                std::int64_t pad, std::int64_t dilation);

// The divisor of an average: window elements inside the input, or inside the padded input with
// count_pad. Never 0 for a shape op_checks accepts (pad at most half the window).
std::int64_t pool_divisor(const PoolShape& p, std::int64_t oh, std::int64_t ow);

// Visits every output o (NHWC order) of the pool: element(o, i) for each input element i (NHWC
// index) its window holds inside the input, in window order (rows, then columns), then
// output(o, oh, ow). The one walk over windows that the reference and the chips' checks share.
template <class Element, class Output>
void for_each_pool_window(const PoolShape& p, Element&& element, Output&& output) {
    const std::int64_t oh_count = p.out_h(), ow_count = p.out_w();
    std::int64_t o = 0;
    for (std::int64_t n = 0; n < p.n; ++n)
        for (std::int64_t oh = 0; oh < oh_count; ++oh)
            for (std::int64_t ow = 0; ow < ow_count; ++ow)
                for (std::int64_t c = 0; c < p.c; ++c, ++o) {
                    for (std::int64_t i = 0; i < p.r; ++i) {
                        const std::int64_t h = oh * p.stride_h - p.pad_h + i * p.dilation_h;
                        for (std::int64_t j = 0; h >= 0 && h < p.h && j < p.s; ++j) {
                            const std::int64_t w = ow * p.stride_w - p.pad_w + j * p.dilation_w;
                            if (w >= 0 && w < p.w) element(o, ((n * p.h + h) * p.w + w) * p.c + c);
                        }
                    }
                    output(o, oh, ow);
                }
}

// The pool of x (NHWC, n*h*w*c values) in double: the maximum of the window's input elements
// (padding never wins), or their sum over pool_divisor. Output NHWC, n*out_h*out_w*c values.
std::vector<double> pool_reference(const PoolShape& p, const std::vector<float>& x);

}  // namespace accelsim
