#include "models/gpu/conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "models/common/validation_worker.h"
#include "models/simt/occupancy.h"
#include "models/gpu/gemm_hopper.h"
#include "models/gpu/gpu_stats.h"

namespace accelsim::gpu {

namespace {

// Which kernel runs the conv (conv.h): the 16-bit or the 8-bit tensor-core variant (int8 with
// int32 outputs; fp8 with fp32 outputs, the same kernel with the fp8 mma, as for GEMMs), or the
// FP32 FFMA variant (fp32, and 16-bit dtypes the chip's tensor cores do not run, on fp32 copies).
enum class ConvPath { tensor16, tensor_8bit, ffma };

struct ConvLayout {
    Conv2dShape s;
    ConvPath path = ConvPath::tensor16;
    DType dtype = DType::fp16;  // of the stored operands (fp32 for the FFMA path)
    std::int64_t oh = 0, ow = 0, cg = 0, kg = 0, cp = 0, kp = 0, kred = 0;  // kred = R*S*C' (elements)
    std::int64_t in_eb = 2, out_eb = 2;  // bytes per input / weight element, per output element
    std::int64_t in_bytes = 0, w_bytes = 0, out_bytes = 0;
    std::uint32_t in = 0, w = 0, out = 0, zero = 0;
    std::int64_t in_index(std::int64_t n, std::int64_t h, std::int64_t x, std::int64_t grp, std::int64_t c) const {
        return (((n * s.h + h) * s.w + x) * s.groups + grp) * cp + c;
    }
    // Tensor paths: [K][R][S][C'] (B^T rows); FFMA: [group][R][S][C/groups][K/groups] (B as K x N).
    std::int64_t w_index(std::int64_t k, std::int64_t r, std::int64_t q, std::int64_t c) const {
        if (path != ConvPath::ffma) return ((k * s.r + r) * s.s + q) * cp + c;
        return ((((k / kg) * s.r + r) * s.s + q) * cg + c) * kg + k % kg;
    }
    std::int64_t out_index(std::int64_t n, std::int64_t y, std::int64_t x, std::int64_t grp, std::int64_t k) const {
        return (((n * oh + y) * ow + x) * s.groups + grp) * kp + k;
    }
};

ConvLayout conv_layout(const Op& op, ConvPath path) {
    if (op.kind != OpKind::conv2d) throw LoweringError("lower_conv2d: not a conv2d");
    ConvLayout l;
    l.s = op.conv;
    l.path = path;
    const Conv2dShape& s = l.s;
    if (s.n < 1 || s.h < 1 || s.w < 1 || s.c < 1 || s.k < 1 || s.r < 1 || s.s < 1 || s.groups < 1 ||
        s.c % s.groups != 0 || s.k % s.groups != 0 || s.stride_h < 1 || s.stride_w < 1 || s.dilation_h < 1 ||
        s.dilation_w < 1 || s.pad_h < 0 || s.pad_w < 0 || s.out_h() < 1 || s.out_w() < 1)
        throw LoweringError("invalid shape");
    l.oh = s.out_h();
    l.ow = s.out_w();
    l.cg = s.c / s.groups;
    l.kg = s.k / s.groups;
    switch (path) {
        case ConvPath::tensor16:  // 16-byte chunks of 8 values; packed 16-bit outputs
            l.dtype = op.dtype;
            l.cp = gemm_padded(l.cg);
            l.kp = gemm_padded(l.kg);
            break;
        case ConvPath::tensor_8bit:  // 16-byte chunks of 16 values; int32 or fp32 outputs (as the 8-bit GEMM)
            l.dtype = op.dtype;
            l.in_eb = 1;
            l.out_eb = 4;
            l.cp = gemm_int8_padded_k(l.cg);
            l.kp = gemm_padded(l.kg);
            break;
        case ConvPath::ffma:  // one word per element: no padding
            l.dtype = DType::fp32;
            l.in_eb = l.out_eb = 4;
            l.cp = l.cg;
            l.kp = l.kg;
            break;
    }
    l.kred = s.r * s.s * l.cp;
    l.in_bytes = s.n * s.h * s.w * s.groups * l.cp * l.in_eb;
    l.w_bytes = s.k * l.kred * l.in_eb;
    l.out_bytes = s.n * l.oh * l.ow * s.groups * l.kp * l.out_eb;
    if (l.in_bytes + l.w_bytes + l.out_bytes > kGemmMaxBufferBytes)
        throw LoweringError("tensors of " + std::to_string(l.in_bytes + l.w_bytes + l.out_bytes) +
                            " bytes exceed the GPU kernel library's 2 GiB of global memory (32-bit addresses below 2^31)");
    return l;
}

// Seeded inputs uniform in [-1, 1), drawn input then weights, dense: x [n][h][w][c] and
// w [k][r][s][c/groups]. The --validate references are computed from these (as rounded or
// quantized for the datapath); the int8 quantization error draws them again after the launch.
struct ConvValues {
    std::vector<float> x, w;
};
// outliers: the input's (NHWC: its channels the features) outlier features scaled (quantization.h).
ConvValues draw_conv_values(const Conv2dShape& s, std::uint64_t seed, const ActivationOutliers& outliers = {}) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    ConvValues v;
    v.x.resize(static_cast<std::size_t>(s.n * s.h * s.w * s.c));
    v.w.resize(static_cast<std::size_t>(s.k * s.r * s.s * (s.c / s.groups)));
    for (float& f : v.x) f = uniform(rng);
    for (float& f : v.w) f = uniform(rng);
    apply_activation_outliers(v.x, s.c, outliers, seed);
    return v;
}

// Direct convolution on the host of dense values (draw_conv_values' order), fp32 products summed
// in double: visit(output index in the layout, reference, sum of |x w|) for every output.
// Every output of the convolution once, in one fixed order: visit(n, y, x, group, k).
template <class Visit>
void for_each_conv_output(const ConvLayout& l, Visit visit) {
    for (std::int64_t n = 0; n < l.s.n; ++n)
        for (std::int64_t y = 0; y < l.oh; ++y)
            for (std::int64_t xo = 0; xo < l.ow; ++xo)
                for (std::int64_t grp = 0; grp < l.s.groups; ++grp)
                    for (std::int64_t k = 0; k < l.kg; ++k) visit(n, y, xo, grp, k);
}

template <class Visit>
void for_each_direct_conv(const ConvLayout& l, const std::vector<float>& x, const std::vector<float>& w, Visit visit) {
    const Conv2dShape& s = l.s;
    for_each_conv_output(l, [&](std::int64_t n, std::int64_t y, std::int64_t xo, std::int64_t grp, std::int64_t k) {
        double ref = 0, mag = 0;
        for (std::int64_t r = 0; r < s.r; ++r) {
            const std::int64_t ih = y * s.stride_h - s.pad_h + r * s.dilation_h;
            if (ih < 0 || ih >= s.h) continue;
            for (std::int64_t q = 0; q < s.s; ++q) {
                const std::int64_t iw = xo * s.stride_w - s.pad_w + q * s.dilation_w;
                if (iw < 0 || iw >= s.w) continue;
                const float* xp = x.data() + ((n * s.h + ih) * s.w + iw) * s.c + grp * l.cg;
                const float* wp = w.data() + (((grp * l.kg + k) * s.r + r) * s.s + q) * l.cg;
                for (std::int64_t c = 0; c < l.cg; ++c) {
                    const double p = static_cast<double>(xp[c]) * wp[c];
                    ref += p;
                    mag += std::fabs(p);
                }
            }
        }
        visit(l.out_index(n, y, xo, grp, k), ref, mag);
    });
}

// The direct convolution's value and sum |x||w| of every output, in for_each_conv_output's order:
// made when the op is lowered, on the validation worker when the target asks (the second core:
// models/common/validation_worker.h), so that it is ready when the kernel has run.
struct DirectConvValue {
    double ref, mag;
};
std::shared_future<std::vector<DirectConvValue>> start_direct_conv(const ConvLayout& l, ConvValues v, bool on_worker) {
    return start_reference(
               [l, v = std::move(v)] {
                   std::vector<DirectConvValue> out;
                   out.reserve(static_cast<std::size_t>(l.s.n * l.oh * l.ow * l.s.groups * l.kg));
                   for_each_direct_conv(l, v.x, v.w, [&](std::int64_t, double ref, double mag) { out.push_back({ref, mag}); });
                   return out;
               },
               on_worker)
        .share();
}

// Writes dense values into the layout (encode: a value's bytes, in_eb of them).
template <class Encode>
void store_conv_values(const ConvLayout& l, std::vector<float>& x, std::vector<float>& w,
                       Encode encode) {
    const Conv2dShape& s = l.s;
    std::size_t i = 0;
    for (std::int64_t n = 0; n < s.n; ++n)
        for (std::int64_t y = 0; y < s.h; ++y)
            for (std::int64_t xx = 0; xx < s.w; ++xx)
                for (std::int64_t grp = 0; grp < s.groups; ++grp)
                    for (std::int64_t c = 0; c < l.cg; ++c)
                        encode(l.in + static_cast<std::uint32_t>(l.in_index(n, y, xx, grp, c) * l.in_eb), x[i++]);
    i = 0;
    for (std::int64_t k = 0; k < s.k; ++k)
        for (std::int64_t r = 0; r < s.r; ++r)
            for (std::int64_t q = 0; q < s.s; ++q)
                for (std::int64_t c = 0; c < l.cg; ++c)
                    encode(l.w + static_cast<std::uint32_t>(l.w_index(k, r, q, c) * l.in_eb), w[i++]);
}

// fp16, bf16 and fp32 (tensor16 and ffma paths): the inputs rounded to the stored dtype, and the
// check against the direct convolution of the rounded values. Bound as for the GEMM:
// K * 2^-24 * sum |x||w| (fp32 accumulation of the K = R*S*C/groups real taps) plus the output's
// rounding to the dtype (0 for fp32).
std::function<LoweringNumerics(const simt::GlobalMemory&)> fill_float_conv(const ConvLayout& l, std::uint64_t seed,
                                                                           simt::GlobalMemory& memory, bool on_worker) {
    ConvValues v = draw_conv_values(l.s, seed);
    const DType dtype = l.dtype;
    store_conv_values(l, v.x, v.w, [&](std::uint32_t address, float& f) {
        if (dtype == DType::fp32) {
            memory.store_f32(address, f);
            return;
        }
        const std::uint16_t h = gemm_operand_bits(f, dtype);
        std::memcpy(memory.data() + address, &h, 2);
        f = gemm_operand_to_float(h, dtype);  // the reference sees the rounded value
    });
    return [l, reference = start_direct_conv(l, std::move(v), on_worker)](const simt::GlobalMemory& memory) {
        const double unit_out = l.dtype == DType::fp16 ? 0x1p-11 : l.dtype == DType::bf16 ? 0x1p-8 : 0.0;
        const double taps = static_cast<double>(l.s.r * l.s.s * l.cg);
        LoweringNumerics out;
        const std::vector<DirectConvValue>& values = reference.get();
        std::size_t next = 0;
        for_each_conv_output(l, [&](std::int64_t n, std::int64_t y, std::int64_t xo, std::int64_t grp, std::int64_t k) {
            const std::int64_t index = l.out_index(n, y, xo, grp, k);
            const double ref = values[next].ref, mag = values[next].mag;
            ++next;
            const auto address = static_cast<std::uint32_t>(l.out + index * l.out_eb);
            double got;
            if (l.dtype == DType::fp32) {
                got = memory.load_f32(address);
            } else {
                std::uint16_t h;
                std::memcpy(&h, memory.data() + address, 2);
                got = gemm_operand_to_float(h, l.dtype);
            }
            const double accumulate = taps * 0x1p-24 * mag;
            const double bound = accumulate + unit_out * (std::fabs(ref) + accumulate) + 1e-30;
            const double err = std::fabs(got - ref);
            out.max_abs_err = std::max(out.max_abs_err, err);
            if (ref != 0) out.max_rel_err = std::max(out.max_rel_err, err / std::fabs(ref));
            if (!(err <= bound)) out.passed = false;
            ++out.checked;
        });
        return out;
    };
}

// The quantization error of an 8-bit conv's outputs (`got`, in for_each_conv_output's order, times
// output_scale) against the direct convolution of the seeded values before quantization, drawn
// again after the launch rather than held through it.
QuantizationError conv_quantization_error(const ConvLayout& l, std::uint64_t seed, const ActivationOutliers& outliers,
                                          const std::vector<double>& got,
                                          double output_scale, Fp8Encoding encoding) {
    const ConvValues unquantized = draw_conv_values(l.s, seed, outliers);
    std::vector<float> reference;
    reference.reserve(got.size());
    for_each_direct_conv(l, unquantized.x, unquantized.w,
                         [&](std::int64_t, double ref, double) { reference.push_back(static_cast<float>(ref)); });
    return quantization_error(l.dtype, got, reference, output_scale, encoding);
}

// int8 (docs/gpu.md, "int8 GEMMs"): input and weights quantized per tensor (quantization.h), the
// int32 outputs checked exactly against the direct convolution of the same integers (summed in
// double: exact below 2^53; compared modulo 2^32, as the mma's int32 accumulators wrap), and the
// quantization error against the direct convolution of the unquantized values.
std::function<LoweringNumerics(const simt::GlobalMemory&)> fill_int8_conv(const ConvLayout& l, std::uint64_t seed,
                                                                          const ActivationOutliers& outliers,
                                                                          simt::GlobalMemory& memory) {
    const ConvValues v = draw_conv_values(l.s, seed, outliers);
    QuantizedOperand qx = quantize_operand(v.x, DType::int8), qw = quantize_operand(v.w, DType::int8);
    const double output_scale = qx.scale * qw.scale;
    ConvValues q{std::move(qx.values), std::move(qw.values)};
    store_conv_values(l, q.x, q.w, [&](std::uint32_t address, float f) {
        memory.data()[address] = static_cast<std::uint8_t>(static_cast<std::int8_t>(f));
    });
    return [l, seed, outliers, output_scale, q = std::move(q)](const simt::GlobalMemory& memory) {
        LoweringNumerics out;
        std::vector<double> got;
        for_each_direct_conv(l, q.x, q.w, [&](std::int64_t index, double ref, double) {
            const std::uint32_t value = memory.load32(static_cast<std::uint32_t>(l.out + index * l.out_eb));
            check_int32_output(out, value, static_cast<std::uint32_t>(static_cast<std::int64_t>(ref)));
            got.push_back(static_cast<double>(static_cast<std::int32_t>(value)));
        });
        out.quantization = conv_quantization_error(l, seed, outliers, got, output_scale, Fp8Encoding::ocp);
        return out;
    };
}

// fp8 (docs/gpu.md, "fp8 GEMMs"): input and weights rounded to the format in the chip's encoding
// (quantization.h), stored as fp8 bytes; the fp32 outputs checked against the direct convolution of
// the same rounded values within K * 2^-24 * sum |x||w| (each fp8 product is exact in fp32; the
// kernel's fp32 accumulation of the K = R*S*C/groups taps), and the quantization error against the
// direct convolution of the unrounded values.
std::function<LoweringNumerics(const simt::GlobalMemory&)> fill_fp8_conv(const ConvLayout& l, std::uint64_t seed,
                                                                         const ActivationOutliers& outliers,
                                                                         Fp8Encoding encoding, simt::GlobalMemory& memory,
                                                                         bool on_worker) {
    const ConvValues v = draw_conv_values(l.s, seed, outliers);
    const DType dtype = l.dtype;
    QuantizedOperand qx = quantize_operand(v.x, dtype, encoding), qw = quantize_operand(v.w, dtype, encoding);
    const double output_scale = qx.scale * qw.scale;
    ConvValues q{std::move(qx.values), std::move(qw.values)};
    store_conv_values(l, q.x, q.w, [&](std::uint32_t address, float f) {
        memory.data()[address] = fp8_encode(f, dtype, Fp8Overflow::saturate, encoding);
    });
    return [l, seed, outliers, encoding, output_scale, reference = start_direct_conv(l, std::move(q), on_worker)](
               const simt::GlobalMemory& memory) {
        const double taps = static_cast<double>(l.s.r * l.s.s * l.cg);
        LoweringNumerics out;
        const std::vector<DirectConvValue>& values = reference.get();
        std::vector<double> got;
        got.reserve(values.size());
        std::size_t next = 0;
        for_each_conv_output(l, [&](std::int64_t n, std::int64_t y, std::int64_t xo, std::int64_t grp, std::int64_t k) {
            const DirectConvValue& want = values[next++];
            const double value = memory.load_f32(static_cast<std::uint32_t>(l.out + l.out_index(n, y, xo, grp, k) * l.out_eb));
            const double err = std::fabs(value - want.ref);
            out.max_abs_err = std::max(out.max_abs_err, err);
            if (want.ref != 0) out.max_rel_err = std::max(out.max_rel_err, err / std::fabs(want.ref));
            if (!(err <= taps * 0x1p-24 * want.mag + 1e-30)) out.passed = false;
            ++out.checked;
            got.push_back(value);
        });
        out.quantization = conv_quantization_error(l, seed, outliers, got, output_scale, encoding);
        return out;
    };
}

// The tensor paths' inputs and check: the 16-bit values, or the quantized int8 or rounded fp8 ones.
std::function<LoweringNumerics(const simt::GlobalMemory&)> fill_tensor_conv(const ConvLayout& l, simt::GlobalMemory& memory, const LoweringTarget& target) {
    if (l.path != ConvPath::tensor_8bit) return fill_float_conv(l, target.seed, memory, target.reference_on_worker);
    if (l.dtype == DType::int8) return fill_int8_conv(l, target.seed, target.outliers, memory);
    return fill_fp8_conv(l, target.seed, target.outliers, target.sm.fp8_encoding, memory, target.reference_on_worker);
}

void allocate_conv(ConvLayout& l, simt::GlobalMemory& memory) {
    l.in = memory.allocate(static_cast<std::size_t>(l.in_bytes));
    l.w = memory.allocate(static_cast<std::size_t>(l.w_bytes));
    l.out = memory.allocate(static_cast<std::size_t>(l.out_bytes));
    l.zero = memory.allocate(16);
}

void push_launch_stats(LoweredKernel& out, const ConvLayout& l, const LoweringTarget& target, int threads,
                       std::int64_t blocks) {
    const simt::Occupancy occ =
        simt::compute_occupancy(target.sm.limits, {threads, out.kernel->registers, out.kernel->shared_bytes});
    const double waves = static_cast<double>(blocks) / (static_cast<double>(std::max(1, target.sms)) * std::max(1, occ.blocks_per_sm));
    out.stats.push_back(stat_value(stat::grid, static_cast<double>(blocks)));
    out.stats.push_back(stat_value(stat::block, threads));
    out.stats.push_back(stat_value(stat::blocks_per_sm, occ.blocks_per_sm));
    out.stats.push_back(stat_value(stat::waves, waves));
    out.stats.push_back(stat_value(stat::gemm_m, static_cast<double>(l.s.n * l.oh * l.ow)));
    out.stats.push_back(stat_value(stat::gemm_n, static_cast<double>(l.kg)));
    out.stats.push_back(stat_value(stat::gemm_k, static_cast<double>(l.kred)));
}

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

// The conv params both kernels share after their GEMM params: H, W, channels (tensor: 16-bit
// slots per group, FFMA: elements), S, OW, OHW, strides, pads, dilations, pix, image, zero.
void push_conv_args(std::vector<std::uint32_t>& args, const ConvLayout& l, std::int64_t channels) {
    const Conv2dShape& s = l.s;
    const std::int64_t pix = s.groups * l.cp * l.in_eb;
    for (const std::int64_t v : {s.h, s.w, channels, s.s, l.ow, l.oh * l.ow, s.stride_h, s.stride_w, s.pad_h, s.pad_w,
                                 s.dilation_h, s.dilation_w, pix, s.h * s.w * pix})
        args.push_back(u32(v));
    args.push_back(l.zero);
}

// The tensor paths' mma operand type.
simt::MmaType conv_mma_type(const ConvLayout& l) {
    if (l.path == ConvPath::tensor_8bit) return byte_gemm_mma_type(l.dtype);
    return l.dtype == DType::bf16 ? simt::MmaType::bf16 : simt::MmaType::f16;
}

// Tensor-core paths. The kernel counts K in 16-bit slots (int8: two values per slot).
LoweredKernel lower_tensor_conv(const ConvLayout& layout, simt::GlobalMemory& memory, const LoweringTarget& target,
                                const GemmTile& tile) {
    ConvLayout l = layout;
    const Conv2dShape& s = l.s;
    const simt::MmaType type = conv_mma_type(l);
    allocate_conv(l, memory);
    LoweredKernel out;
    out.kernel = conv_tensor_kernel(tile, type);
    const std::int64_t m = s.n * l.oh * l.ow;
    const std::int64_t slots = l.kred * l.in_eb / 2;
    const std::int64_t tiles_m = (m + tile.bm - 1) / tile.bm, tiles_n = (l.kg + tile.bn - 1) / tile.bn;
    const std::int64_t slices = (slots + tile.bk - 1) / tile.bk, kfirst = slots - slices * tile.bk;
    const std::int64_t blocks = s.groups * tiles_m * tiles_n;
    if (blocks > 0xffffffffLL) throw LoweringError("conv2d: grid too large");
    out.dims = {static_cast<std::uint32_t>(blocks), static_cast<std::uint32_t>(tile.threads())};
    out.args = {u32(m), u32(l.kg), u32(m - 1), u32(l.kg - 1), l.in, l.w, l.out,
                0, u32(l.kred * l.in_eb), u32(s.groups * l.kp * l.out_eb),
                u32(l.cp * l.in_eb), u32(l.kg * l.kred * l.in_eb), u32(l.kp * l.out_eb),
                u32(tiles_m), u32(tiles_n), u32(tiles_m * tiles_n), u32(kGemmGroupRows * tiles_n),
                u32(slices), u32(kfirst), 0};
    push_conv_args(out.args, l, l.cp * l.in_eb / 2);
    out.stats.push_back(stat_value(stat::tile_m, tile.bm));
    out.stats.push_back(stat_value(stat::tile_n, tile.bn));
    out.stats.push_back(stat_value(stat::tile_k, static_cast<double>(tile.bk * 2 / l.in_eb)));  // values per slice
    push_launch_stats(out, l, target, tile.threads(), blocks);
    if (target.real_data) out.check = fill_tensor_conv(l, memory, target);
    return out;
}

// A 1x1 convolution of stride 1 without padding, one group, is a GEMM on the NHWC input: A = the
// input (N·H·W pixels x C' values), B^T = the weights (K x C'), C = the output (pixels x K': 4-byte
// values for the 8-bit path, packed 16-bit ones for fp16 / bf16), the very layouts of the tensor
// paths. On an sm_90 target it runs the Hopper GEMM with B transposed (gemm_hopper.h; 16-bit: the
// "_tn" kernels, wgmma's imm-trans-b = 0) on the conv's own buffers, as cuDNN runs pointwise
// convolutions with GEMM kernels; other convolutions keep the implicit-GEMM kernel.
bool pointwise(const Conv2dShape& s) {
    return s.r == 1 && s.s == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_h == 0 && s.pad_w == 0 && s.groups == 1;
}

LoweredKernel lower_hopper_pointwise_conv(const ConvLayout& layout, simt::GlobalMemory& memory, const LoweringTarget& target,
                                          const GemmShape& g, const HopperTileChoice& hopper, int splits) {
    ConvLayout l = layout;
    allocate_conv(l, memory);
    LoweredKernel out;
    const simt::MmaType type = conv_mma_type(l);
    lower_hopper_tn_launch(out, g, type, type, l.in, l.w, l.out, l.cp, l.kp, hopper, target, memory, splits);
    out.stats.push_back(stat_value(stat::gemm_m, static_cast<double>(g.m)));
    out.stats.push_back(stat_value(stat::gemm_n, static_cast<double>(l.kg)));
    out.stats.push_back(stat_value(stat::gemm_k, static_cast<double>(l.kred)));
    if (target.real_data) out.check = fill_tensor_conv(l, memory, target);
    return out;
}

// Other convolutions of one group whose channel rows are whole 128-byte k-blocks (C' x element
// bytes a multiple of 128: 16-bit C a multiple of 64, 8-bit of 128), or 64 or 32 bytes (several
// taps a k-block: 16-bit C' 32 or 16, 8-bit 64 or 32), run the Hopper convolution on
// sm_90 (gemm_hopper.h, hopper_conv_kernel): A gathered through an im2col tensor map (written here,
// as cuTensorMapEncodeIm2col writes CUDA's), B the weights K-major, C the output.
bool hopper_im2col_conv(const ConvLayout& l) {
    const std::int64_t pixel = l.cp * l.in_eb;
    return l.s.groups == 1 && l.path != ConvPath::ffma && (pixel % HopperTile::kblock_bytes == 0 || pixel == 64 || pixel == 32);
}

LoweredKernel lower_hopper_im2col_conv(const ConvLayout& layout, simt::GlobalMemory& memory, const LoweringTarget& target,
                                       const GemmShape& g, const HopperTileChoice& hopper, int splits) {
    ConvLayout l = layout;
    allocate_conv(l, memory);
    const Conv2dShape& s = l.s;
    const std::uint32_t map = memory.allocate(4 * simt::kIm2colWords, 64);
    std::int64_t words[simt::kIm2colWords] = {};
    words[simt::kIm2colBase] = l.in;
    words[simt::kIm2colImages] = s.n;
    words[simt::kIm2colHeight] = s.h;
    words[simt::kIm2colWidth] = s.w;
    words[simt::kIm2colPixelBytes] = l.cp * l.in_eb;
    words[simt::kIm2colOutHeight] = l.oh;
    words[simt::kIm2colOutWidth] = l.ow;
    words[simt::kIm2colStrideH] = s.stride_h;
    words[simt::kIm2colStrideW] = s.stride_w;
    words[simt::kIm2colPadH] = s.pad_h;
    words[simt::kIm2colPadW] = s.pad_w;
    words[simt::kIm2colDilationH] = s.dilation_h;
    words[simt::kIm2colDilationW] = s.dilation_w;
    for (int i = 0; i < simt::kIm2colWords; ++i) memory.store32(map + 4u * static_cast<std::uint32_t>(i), u32(words[i]));
    LoweredKernel out;
    const HopperIm2col im2col{l.cp * l.in_eb, s.s, s.r * s.s};
    lower_hopper_tn_launch(out, g, conv_mma_type(l), conv_mma_type(l), map, l.w, l.out, l.kred, l.kp, hopper, target, memory,
                           splits, &im2col);
    out.stats.push_back(stat_value(stat::gemm_m, static_cast<double>(g.m)));
    out.stats.push_back(stat_value(stat::gemm_n, static_cast<double>(l.kg)));
    out.stats.push_back(stat_value(stat::gemm_k, static_cast<double>(l.kred)));
    if (target.real_data) out.check = fill_tensor_conv(l, memory, target);
    return out;
}

// The FP32 FFMA path: 64 x 64 x 8 tiles, one GEMM per group.
LoweredKernel lower_ffma_conv(const ConvLayout& layout, simt::GlobalMemory& memory, const LoweringTarget& target) {
    ConvLayout l = layout;
    const Conv2dShape& s = l.s;
    allocate_conv(l, memory);
    LoweredKernel out;
    out.kernel = conv_fp32_kernel();
    const std::int64_t m = s.n * l.oh * l.ow;
    const std::int64_t tiles_m = (m + kFp32TileM - 1) / kFp32TileM, tiles_n = (l.kg + kFp32TileN - 1) / kFp32TileN;
    const std::int64_t slices = (l.kred + kFp32TileK - 1) / kFp32TileK;
    const std::int64_t blocks = s.groups * tiles_m * tiles_n;
    if (blocks > 0xffffffffLL) throw LoweringError("conv2d: grid too large");
    out.dims = {static_cast<std::uint32_t>(blocks), 256};
    out.args = {u32(m), u32(l.kg), u32(l.kred), u32(m - 1), u32(l.kg - 1), l.in, l.w, l.out,
                0, u32(l.kg * 4), u32(s.groups * l.kg * 4), u32(l.cg * 4), u32(l.kred * l.kg * 4), u32(l.kg * 4),
                u32(tiles_n), u32(tiles_m * tiles_n), u32(slices), u32(l.kred - slices * kFp32TileK)};
    push_conv_args(out.args, l, l.cg);
    out.stats.push_back(stat_value(stat::tile_m, kFp32TileM));
    out.stats.push_back(stat_value(stat::tile_n, kFp32TileN));
    out.stats.push_back(stat_value(stat::tile_k, kFp32TileK));
    push_launch_stats(out, l, target, 256, blocks);
    if (target.real_data) out.check = fill_float_conv(l, target.seed, memory, target.reference_on_worker);
    return out;
}

ConvPath tensor_path_of(DType dtype) {
    if (dtype == DType::fp16 || dtype == DType::bf16) return ConvPath::tensor16;
    if (dtype == DType::int8 || is_fp8(dtype)) return ConvPath::tensor_8bit;
    throw LoweringError("the tensor-core implicit-GEMM kernel takes fp16, bf16, int8, fp8_e4m3 or fp8_e5m2, not " +
                        std::string(to_string(dtype)));
}

}  // namespace

LoweredKernel lower_conv2d_with_tile(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                     const GemmTile& tile) {
    return lower_tensor_conv(conv_layout(op, tensor_path_of(op.dtype)), memory, target, tile);
}

LoweredKernel lower_conv2d(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    if (op.dtype == DType::fp32) return lower_ffma_conv(conv_layout(op, ConvPath::ffma), memory, target);
    const ConvPath path = tensor_path_of(op.dtype);
    if (!target.tensor_cores_for(op.dtype)) {
        if (path == ConvPath::tensor_8bit)
            throw LoweringError(std::string(to_string(op.dtype)) + " convolutions need an " +
                                (op.dtype == DType::int8 ? "int8" : "fp8") + " tensor-core rate (sm.tensor_macs_per_cycle." +
                                std::string(to_string(op.dtype)) + ")");
        // No mma unit for the dtype (k80: none; v100: no bf16): a 16-bit conv runs as an fp32 one
        // on fp32 copies, as the GEMMs do (lower_gemm); the stat says so.
        LoweredKernel out = lower_ffma_conv(conv_layout(op, ConvPath::ffma), memory, target);
        out.stats.push_back(stat_value(stat::fp32_fallback, 1));
        return out;
    }
    const ConvLayout l = conv_layout(op, path);
    const GemmShape g{l.s.groups, l.s.n * l.oh * l.ow, l.kg, l.kred};
    if (hopper_gemm_target(target.sm) && (pointwise(l.s) || hopper_im2col_conv(l))) {
        // Any number of output pixels (min_m 1): the pre-Hopper conv kernel has no split-K, so a
        // long K over few pixels (ResNet's layer4 at batch 1: 49) is better spread by the Hopper
        // kernel's split-K even with its 64-row tiles part empty.
        const simt::MmaType type = conv_mma_type(l);
        const HopperTileChoice hopper = choose_hopper_tile(g, target.sms, target.sm, target.sm_port_bytes_per_cycle,
                                                           target.l2_bytes_per_cycle, type, 1);
        if (hopper.blocks > 0) {
            const int splits = choose_hopper_splits(g, hopper, target, type);
            return pointwise(l.s) ? lower_hopper_pointwise_conv(l, memory, target, g, hopper, splits)
                                  : lower_hopper_im2col_conv(l, memory, target, g, hopper, splits);
        }
    }
    GemmTile tile = choose_gemm_tile(g, target.sms, target.sm,
                                     path == ConvPath::tensor_8bit ? simt::MmaType::s8 : simt::MmaType::f16).tile;  // one shape for the 8-bit types
    tile.slices_ahead = 1;  // the conv variant keeps one slice ahead (its im2col state is per slice)
    return lower_tensor_conv(l, memory, target, tile);
}

}  // namespace accelsim::gpu
