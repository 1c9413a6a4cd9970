#include "models/common/op_checks.h"

#include <vector>

#include "models/common/op_table.h"

namespace accelsim {

std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

std::optional<std::int64_t> checked_product(std::initializer_list<std::int64_t> factors) {
    std::int64_t r = 1;
    for (std::int64_t f : factors) {
        if (__builtin_mul_overflow(r, f, &r)) return std::nullopt;
    }
    return r;
}

namespace {

constexpr std::int64_t kWidestElementBytes = 4;

// Accumulates named quantities and remembers the first one that overflowed.
class OverflowCheck {
  public:
    // Returns the product (0 after an overflow, so later products stay well defined).
    std::int64_t product(const char* what, std::initializer_list<std::int64_t> factors) {
        const auto p = checked_product(factors);
        if (!p) {
            note(what);
            return 0;
        }
        return *p;
    }
    std::int64_t sum(const char* what, std::initializer_list<std::int64_t> terms) {
        std::int64_t s = 0;
        for (std::int64_t t : terms) {
            if (__builtin_add_overflow(s, t, &s)) {
                note(what);
                return 0;
            }
        }
        return s;
    }
    std::string problem() const {
        return first_.empty() ? std::string() : first_ + " overflows a 64-bit integer";
    }

  private:
    void note(const char* what) {
        if (first_.empty()) first_ = what;
    }
    std::string first_;
};

std::string must_be_positive(const char* key, std::int64_t v) {
    return std::string(key) + " must be a positive integer, got " + std::to_string(v);
}

std::string check_gemm(const Op& op) {
    const GemmShape& g = op.gemm;
    const std::pair<const char*, std::int64_t> dims[] = {
        {"b", g.batch}, {"m", g.m}, {"n", g.n}, {"k", g.k}};
    for (const auto& [key, v] : dims)
        if (v <= 0) return must_be_positive(key, v);
    if (!op_info(op.kind).batched && g.batch != 1)
        return std::string(to_string(op.kind)) + " has no batch (use bmm)";
    OverflowCheck c;
    const std::int64_t macs = c.product("MAC count b*m*n*k", {g.batch, g.m, g.n, g.k});
    c.product("FLOP count 2*b*m*n*k", {2, macs});
    const std::int64_t in =
        c.product("input bytes b*m*k*4", {g.batch, g.m, g.k, kWidestElementBytes});
    const std::int64_t w =
        c.product("weight bytes b*k*n*4", {g.batch, g.k, g.n, kWidestElementBytes});
    const std::int64_t out =
        c.product("output bytes b*m*n*4", {g.batch, g.m, g.n, kWidestElementBytes});
    c.sum("total bytes", {in, w, out});
    return c.problem();
}

// Output size along one axis: (size + 2*pad - dilation*(kernel-1) - 1) / stride + 1, with the
// numerator checked for sign first (C++ division truncates toward zero, so a numerator of -1 would
// otherwise give an output of 1).
std::string conv_output(const char* axis, std::int64_t size, std::int64_t kernel,
                        std::int64_t stride, std::int64_t pad, std::int64_t dilation,
                        std::int64_t* out) {
    OverflowCheck c;
    const std::int64_t padded = c.sum("padded input size", {size, c.product("2*pad", {2, pad})});
    const std::int64_t span =
        c.sum("dilated filter extent", {c.product("dilation*(r-1)", {dilation, kernel - 1}), 1});
    if (!c.problem().empty()) return c.problem();
    const std::int64_t numerator = padded - span;
    if (numerator < 0) {
        return std::string("output ") + axis + " would be < 1: input " + std::to_string(size) +
               " + 2*pad " + std::to_string(pad) + " is smaller than the dilated filter extent " +
               std::to_string(span);
    }
    *out = numerator / stride + 1;
    return {};
}

std::string check_conv(const Op& op) {
    const Conv2dShape& s = op.conv;
    const std::pair<const char*, std::int64_t> dims[] = {{"n", s.n},
                                                         {"h", s.h},
                                                         {"w", s.w},
                                                         {"c", s.c},
                                                         {"k", s.k},
                                                         {"r", s.r},
                                                         {"s", s.s},
                                                         {"stride_h", s.stride_h},
                                                         {"stride_w", s.stride_w},
                                                         {"dilation_h", s.dilation_h},
                                                         {"dilation_w", s.dilation_w},
                                                         {"groups", s.groups}};
    for (const auto& [key, v] : dims)
        if (v <= 0) return must_be_positive(key, v);
    if (s.pad_h < 0) return "pad_h must be >= 0, got " + std::to_string(s.pad_h);
    if (s.pad_w < 0) return "pad_w must be >= 0, got " + std::to_string(s.pad_w);
    if (s.c % s.groups != 0)
        return "c (" + std::to_string(s.c) + ") is not divisible by groups (" +
               std::to_string(s.groups) + ")";
    if (s.k % s.groups != 0)
        return "k (" + std::to_string(s.k) + ") is not divisible by groups (" +
               std::to_string(s.groups) + ")";
    std::int64_t oh = 0, ow = 0;
    if (auto e = conv_output("height", s.h, s.r, s.stride_h, s.pad_h, s.dilation_h, &oh);
        !e.empty())
        return e;
    if (auto e = conv_output("width", s.w, s.s, s.stride_w, s.pad_w, s.dilation_w, &ow); !e.empty())
        return e;
    OverflowCheck c;
    const std::int64_t cg = s.c / s.groups;
    const std::int64_t rows = c.product("output pixels n*out_h*out_w", {s.n, oh, ow});
    const std::int64_t window = c.product("filter window (c/groups)*r*s", {cg, s.r, s.s});
    const std::int64_t macs = c.product("MAC count", {rows, s.k, window});
    c.product("FLOP count 2*MACs", {2, macs});
    const std::int64_t in =
        c.product("input bytes n*h*w*c*4", {s.n, s.h, s.w, s.c, kWidestElementBytes});
    const std::int64_t w = c.product("weight bytes", {s.k, window, kWidestElementBytes});
    const std::int64_t out = c.product("output bytes", {rows, s.k, kWidestElementBytes});
    c.sum("total bytes", {in, w, out});
    return c.problem();
}

// One axis of a pool: the dilated window must fit the padded input, and the pad may be at most
// half the window (PyTorch's rule; with it no window lies wholly in the padding).
std::string pool_axis(const char* axis, std::int64_t size, std::int64_t kernel, std::int64_t pad,
                      std::int64_t dilation) {
    OverflowCheck c;
    const std::int64_t padded = c.sum("padded input size", {size, c.product("2*pad", {2, pad})});
    const std::int64_t span = c.sum("dilated window extent", {c.product("dilation*(r-1)", {dilation, kernel - 1}), 1});
    if (!c.problem().empty()) return c.problem();
    if (span > padded)
        return std::string("the window's ") + axis + " (" + std::to_string(span) + " with dilation) is larger than the padded input (" +
               std::to_string(size) + " + 2*" + std::to_string(pad) + " = " + std::to_string(padded) + ")";
    if (2 * pad > span)
        return std::string("pad ") + std::to_string(pad) + " along the " + axis + " is more than half the window (" +
               std::to_string(span) + ")";
    return {};
}

std::string check_pool(const Op& op) {
    const PoolShape& p = op.pool;
    const std::pair<const char*, std::int64_t> dims[] = {
        {"n", p.n}, {"h", p.h}, {"w", p.w}, {"c", p.c}, {"r", p.r}, {"s", p.s}, {"stride_h", p.stride_h},
        {"stride_w", p.stride_w}, {"dilation_h", p.dilation_h}, {"dilation_w", p.dilation_w}};
    for (const auto& [key, v] : dims)
        if (v <= 0) return must_be_positive(key, v);
    if (p.pad_h < 0) return "pad_h must be >= 0, got " + std::to_string(p.pad_h);
    if (p.pad_w < 0) return "pad_w must be >= 0, got " + std::to_string(p.pad_w);
    if (p.count_pad && p.mode != PoolMode::avg) return "count_pad applies to mode=avg only";
    // ONNX AveragePool has dilations only from opset 19 (ONNX 1.12 knows 17), PyTorch's avg_pool2d none.
    if (p.mode == PoolMode::avg && (p.dilation_h != 1 || p.dilation_w != 1)) return "dilation applies to mode=max only";
    if (auto e = pool_axis("height", p.h, p.r, p.pad_h, p.dilation_h); !e.empty()) return e;
    if (auto e = pool_axis("width", p.w, p.s, p.pad_w, p.dilation_w); !e.empty()) return e;
    OverflowCheck c;
    const std::int64_t in = c.product("input elements n*h*w*c", {p.n, p.h, p.w, p.c});
    const std::int64_t out = c.product("output elements n*out_h*out_w*c", {p.n, p.out_h(), p.out_w(), p.c});
    c.product("operation count", {out, p.r, p.s});
    const std::int64_t io = c.product("input and output bytes", {c.sum("elements", {in, out}), kWidestElementBytes});
    c.sum("total bytes", {io});
    return c.problem();
}

// Vector ops: up to 7 operations per element (op_table.cpp), at most two inputs and one output.
std::string check_vector(const Op& op) {
    OverflowCheck c;
    std::int64_t elements = 0, weights = 0;
    if (op_info(op.kind).layout == OpLayout::rows_cols) {
        if (op.rows <= 0) return must_be_positive("rows", op.rows);
        if (op.cols <= 0) return must_be_positive("cols", op.cols);
        elements = c.product("element count rows*cols", {op.rows, op.cols});
        weights = c.product("per-column parameter bytes",
                            {op_info(op.kind).params_per_column, op.cols, kWidestElementBytes});
    } else {
        if (op.elements <= 0) return must_be_positive("n", op.elements);
        elements = op.elements;
    }
    c.product("operation count", {elements, 8});
    const std::int64_t io = c.product("input and output bytes", {elements, 3, kWidestElementBytes});
    c.sum("total bytes", {io, weights});
    return c.problem();
}

std::string check_kernel(const Op& op) {
    const KernelLaunch& k = op.kernel;
    if (k.file.empty()) return "kernel file is empty";
    for (int i = 0; i < 3; ++i) {
        if (k.grid[i] <= 0) return must_be_positive("grid", k.grid[i]);
        if (k.block[i] <= 0) return must_be_positive("block", k.block[i]);
    }
    OverflowCheck c;
    const std::int64_t blocks = c.product("grid size", {k.grid[0], k.grid[1], k.grid[2]});
    const std::int64_t threads = c.product("block size", {k.block[0], k.block[1], k.block[2]});
    c.product("thread count grid*block", {blocks, threads});
    return c.problem();
}

}  // namespace

std::string shape_problem(const Op& op) {
    switch (op_info(op.kind).layout) {
        case OpLayout::gemm: return check_gemm(op);
        case OpLayout::conv2d: return check_conv(op);
        case OpLayout::rows_cols:
        case OpLayout::elements: return check_vector(op);
        case OpLayout::pool: return check_pool(op);
        case OpLayout::kernel: return check_kernel(op);
    }
    return "unknown op kind";
}

std::string TraceTotals::add(const Op& op) {
    if (__builtin_add_overflow(macs_, op.macs(), &macs_))
        return "the trace's total MAC count overflows a 64-bit integer";
    if (__builtin_add_overflow(flops_, op.flops(), &flops_))
        return "the trace's total FLOP count overflows a 64-bit integer";
    if (__builtin_add_overflow(bytes_, op.compulsory_bytes(), &bytes_))
        return "the trace's total byte count overflows a 64-bit integer";
    return {};
}

}  // namespace accelsim
