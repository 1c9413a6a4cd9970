// The pool kernel: one thread per output element (per output word: two channels of a 16-bit
// tensor), in a grid-stride loop, reading its window straight from global memory. This is how
// PyTorch organizes its CUDA pooling: aten/src/ATen/native/cuda/AveragePool2d.cu
// (avg_pool2d_out_cuda_frame_nhwc: index -> channel, pw, ph, n; sum over the clipped window, divide)
// and DilatedMaxPool2d.cu (max_pool_forward_nchw, Caffe's kernel: one output per thread, the
// window's maximum, padding never taken). NHWC puts the channel fastest, so a warp's 32 threads
// read 32 consecutive words of one window position: coalesced.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <map>
#include <string>
#include <tuple>

#include "models/gpu/pool.h"

#include "models/common/pool_reference.h"
#include "models/common/quantization.h"
#include "models/gpu/gpu_stats.h"

namespace accelsim::gpu {

namespace {

// The body of the grid-stride loop (grid_stride_source: r0 the output word, r2 the grid stride,
// r3 its byte offset). Registers: r13 channel word, r4 n*H, r5 / r6 the window's first column /
// row (negative inside the padding), r7 / r15 window row / column counters, r8 / r16 input row /
// column, r9 row base, r17 address; payload: r10 (r11) accumulators, r12 the average's scale, r18
// (r19) loaded values; 8-bit storage (four channels a word): r20-r23 the accumulators, r24-r27 the
// unpacked values. Addresses never depend on payload, so timing-only runs skip the arithmetic
// (docs/simt-isa.md).
// 8-bit: the output keeps the input's quantization (PyTorch's quantized max_pool2d and avg_pool2d
// keep the input's scale), so int8 works on the integers (scale_x and inv_scale_y are 1: the
// shared unpacking and packing, elementwise.h) and an average is rounded half to even and clamped;
// fp8 works on the values and rounds the average once (cvt.rn.satfinite).
std::string pool_source(PoolMode mode, Storage s) {
    const bool avg = mode == PoolMode::avg, bytes = is_eight_bit(s), packed = s != Storage::f32 && !bytes;
    const std::string op = avg ? "fadd" : "fmax";
    const std::string t = s == Storage::f16 ? "f16" : "bf16";
    // word index -> channel word, output column, output row, image
    std::string body = "    rem r13, r0, cw\n"
                       "    div r4, r0, cw\n"
                       "    rem r5, r4, ow\n"
                       "    div r4, r4, ow\n"
                       "    rem r6, r4, oh\n"
                       "    div r4, r4, oh\n"
                       "    mul r4, r4, h\n"
                       "    mul r6, r6, sh\n"
                       "    sub r6, r6, ph\n"
                       "    mul r5, r5, sw\n"
                       "    sub r5, r5, pw\n";
    // max starts from -inf (its bits: the assembler's float immediates have no sign before inf).
    const std::string start = avg ? "0.0" : "0xff800000";
    if (bytes) {
        for (int j = 0; j < 4; ++j) body += "    mov r" + std::to_string(20 + j) + ", " + start + "\n";
    } else {
        body += "    mov r10, " + start + "\n";
        if (packed) body += "    mov r11, " + start + "\n";
    }
    if (avg) {
        // Divisor (dilation 1): rows min(start + r, high_h) - max(start, low), columns likewise;
        // low / high are 0 / H, W, or -pad / H + pad, W + pad with count_pad.
        body += "    add r7, r6, r\n"
                "    min r7, r7, high_h\n"
                "    max r8, r6, low\n"
                "    sub r7, r7, r8\n"
                "    add r15, r5, s\n"
                "    min r15, r15, high_w\n"
                "    max r16, r5, low\n"
                "    sub r15, r15, r16\n"
                "    mul r7, r7, r15\n"
                "    i2f r12, r7\n"
                "    rcp r12, r12\n";
    }
    body += "    mov r7, 0\n"
            "    mov r8, r6\n"
            "row:\n"
            // a negative row is a large unsigned number: one compare tests both ends
            "    setp.ge.u32 p1, r8, h\n"
            "    @p1 bra row_next\n"
            "    add r9, r4, r8\n"
            "    mul r9, r9, w\n"
            "    mov r15, 0\n"
            "    mov r16, r5\n"
            "col:\n"
            "    setp.ge.u32 p2, r16, w\n"
            "    @p2 bra col_next\n"
            "    add r17, r9, r16\n"
            "    mad r17, r17, cw, r13\n"
            "    shl r17, r17, 2\n"
            "    add r17, r17, x\n"
            "    ld.global r18, [r17]\n";
    if (bytes) {
        body += unpack_eight_bit(s, "r18", 24, "scale_x");
        for (int j = 0; j < 4; ++j)
            body += "    " + op + " r" + std::to_string(20 + j) + ", r" + std::to_string(20 + j) + ", r" + std::to_string(24 + j) + "\n";
    } else if (packed) {
        body += "    cvt.f32." + t + ".hi r19, r18\n"
                "    cvt.f32." + t + ".lo r18, r18\n"
                "    " + op + " r10, r10, r18\n"
                "    " + op + " r11, r11, r19\n";
    } else {
        body += "    " + op + " r10, r10, r18\n";
    }
    body += "col_next:\n"
            "    add r15, r15, 1\n"
            "    add r16, r16, dw\n"
            "    setp.lt.u32 p2, r15, s\n"
            "    @p2 bra col\n"
            "row_next:\n"
            "    add r7, r7, 1\n"
            "    add r8, r8, dh\n"
            "    setp.lt.u32 p1, r7, r\n"
            "    @p1 bra row\n";
    if (avg && bytes) {
        for (int j = 0; j < 4; ++j) body += "    fmul r" + std::to_string(20 + j) + ", r" + std::to_string(20 + j) + ", r12\n";
    } else if (avg) {
        body += "    fmul r10, r10, r12\n";
        if (packed) body += "    fmul r11, r11, r12\n";
    }
    if (packed) body += "    cvt." + t + "x2.f32 r10, r10, r11\n";
    if (bytes) body += pack_eight_bit(s, 20);
    body += "    add r17, r3, y\n"
            "    st.global [r17], " + std::string(bytes ? "r20" : "r10") + "\n";
    std::string params = "n, cw, h, w, oh, ow, r, s, sh, sw, ph, pw, dh, dw, low, high_h, high_w, x, y";
    if (s == Storage::s8) params += ", scale_x, inv_scale_y";
    return grid_stride_source("pool_" + std::string(avg ? "avg" : "max") + (s != Storage::f32 ? "_" + std::string(to_string(s)) : ""),
                              params, body, bytes ? 28 : 20);
}

// Global pools (the window is the whole image: ResNet's final 7x7 average) as a reduction, the way
// PyTorch runs a 1x1 adaptive average pool (a `mean` over H and W: its reduce kernel splits the
// reduced dimension across a block's warps and combines them in shared memory). A block of
// kGlobalPoolWarps warps owns 32 consecutive output words, one per lane, so each load of a warp
// reads 32 consecutive words of one pixel (coalesced); warp w sums pixels w, w + 8, ..., issuing
// kGlobalPoolUnroll guarded loads before it adds them (nvcc unrolls such loops, keeping the loads
// in flight together). The warps' partial sums (or maxima) meet in shared memory and warp 0 adds
// them, divides and stores. Registers: r0 tid, r1 lane, r2 warp, r3 output word, r4 the image's
// first pixel, r5 channel word, r6 pixel, r7 pixel / shared offset, r8 address, r9 the pixels to
// read (hw, or 0 past the last output word); payload: r10-r13 accumulators (V values a word),
// r14 the average's scale, r20-r27 loaded words, r28-r31 unpacked values, r32-r59 partials.
constexpr int kGlobalPoolWarps = 8, kGlobalPoolUnroll = 8;

std::string global_pool_source(PoolMode mode, Storage s) {
    const bool avg = mode == PoolMode::avg, bytes = is_eight_bit(s), packed = s != Storage::f32 && !bytes;
    const int values = elements_per_word(s);  // V: accumulators per output word
    const std::string op = avg ? "fadd" : "fmax", t = s == Storage::f16 ? "f16" : "bf16";
    auto r = [](int i) { return "r" + std::to_string(i); };
    auto n = [](long long v) { return std::to_string(v); };
    std::string params = "n, cw, hw, x, y";
    if (s == Storage::s8) params += ", scale_x, inv_scale_y";
    const int partial_bytes = 32 * values * 4;  // one warp's partials in shared memory
    std::string src = ".kernel pool_global_" + std::string(avg ? "avg" : "max") + "_" + to_string(s) + "\n.param " + params +
                      "\n.reg 60\n.shared " + n(kGlobalPoolWarps * partial_bytes) + "\n";
    auto a = [&](const std::string& line) { src += "    " + line + "\n"; };
    a("mov r0, %tid");
    a("and r1, r0, 31");
    a("shr r2, r0, 5");
    a("mov r3, %ctaid");
    a("shl r3, r3, 5");
    a("add r3, r3, r1");                  // the lane's output word
    a("setp.lt.s32 p0, r3, n");
    a("selp r9, hw, 0, p0");              // pixels to read: none past the last word
    a("div r4, r3, cw");
    a("rem r5, r3, cw");
    a("mul r4, r4, hw");
    const std::string start = avg ? "0.0" : "0xff800000";  // max from -inf
    for (int v = 0; v < values; ++v) a("mov " + r(10 + v) + ", " + start);
    a("mov r6, r2");
    src += "pixels:\n";
    for (int u = 0; u < kGlobalPoolUnroll; ++u) {
        a("add r7, r6, " + n(kGlobalPoolWarps * u));
        a("setp.lt.s32 p1, r7, r9");
        a("add r8, r4, r7");
        a("mad r8, r8, cw, r5");
        a("shl r8, r8, 2");
        a("add r8, r8, x");
        a("@p1 ld.global " + r(20 + u) + ", [r8]");
    }
    for (int u = 0; u < kGlobalPoolUnroll; ++u) {
        a("add r7, r6, " + n(kGlobalPoolWarps * u));
        a("setp.lt.s32 p1, r7, r9");
        if (bytes) {
            src += unpack_eight_bit(s, r(20 + u), 28, "scale_x");
            for (int v = 0; v < 4; ++v) a("@p1 " + op + " " + r(10 + v) + ", " + r(10 + v) + ", " + r(28 + v));
        } else if (packed) {
            a("cvt.f32." + t + ".hi r29, " + r(20 + u));
            a("cvt.f32." + t + ".lo r28, " + r(20 + u));
            a("@p1 " + op + " r10, r10, r28");
            a("@p1 " + op + " r11, r11, r29");
        } else {
            a("@p1 " + op + " r10, r10, " + r(20 + u));
        }
    }
    a("add r6, r6, " + n(kGlobalPoolWarps * kGlobalPoolUnroll));
    a("setp.lt.s32 p1, r6, r9");
    a("@p1 bra pixels");
    // The warps' partials meet in shared memory; warp 0 combines them.
    a("shl r7, r0, " + n(2 + (values == 4 ? 2 : values == 2 ? 1 : 0)));  // tid x V words
    for (int v = 0; v < values; ++v) a("st.shared [r7+" + n(4 * v) + "], " + r(10 + v));
    a("bar.sync");
    a("setp.ne.s32 p1, r2, 0");
    a("@p1 exit");
    for (int w = 1; w < kGlobalPoolWarps; ++w)
        for (int v = 0; v < values; ++v)
            a("ld.shared " + r(32 + (w - 1) * values + v) + ", [r7+" + n(w * partial_bytes + 4 * v) + "]");
    for (int w = 1; w < kGlobalPoolWarps; ++w)
        for (int v = 0; v < values; ++v) a(op + " " + r(10 + v) + ", " + r(10 + v) + ", " + r(32 + (w - 1) * values + v));
    if (avg) {
        a("i2f r14, hw");
        a("rcp r14, r14");
        for (int v = 0; v < values; ++v) a("fmul " + r(10 + v) + ", " + r(10 + v) + ", r14");
    }
    if (packed) a("cvt." + t + "x2.f32 r10, r10, r11");
    if (bytes) src += pack_eight_bit(s, 10);
    a("shl r8, r3, 2");
    a("add r8, r8, y");
    a("@p0 st.global [r8], r10");
    a("exit");
    return src;
}

// Error bound of one output against the double reference, for inputs exactly as stored:
// max is exact (the result is one of the inputs, and stores back unchanged); avg sums k values in
// fp32 ((k - 1) u32 sum|x|), then multiplies by rcp(divisor) (u32 each for rcp and fmul), and a
// 16-bit result is rounded once more (u_storage relative plus half a subnormal spacing).
// The report's words for what an 8-bit pool computes (QuantizationError::scheme).
std::string pool_quantization_scheme(DType dtype, Fp8Encoding encoding) {
    const std::string input = eight_bit_inputs_wording(dtype, encoding, "input", false);
    if (dtype == DType::int8)
        return input + "; the pool keeps the input's scale: the maximum of the integers, or their average in fp32 rounded "
                       "half to even; output dequantized by scale";
    return input + "; the maximum exact, the average in fp32 rounded once to the format; no scaling";
}

// int8 (on the integers): the average rounded to an integer, so within half a step of the exact
// mean plus the fp32 error (a mean within err32 of a half may round either way).
double pool_tolerance(PoolMode mode, Storage s, double magnitude, double divisor, double window, double want) {
    if (mode == PoolMode::max) return 0.0;
    const double u32 = std::ldexp(1.0, -24);
    const double err32 = (window - 1) * u32 * magnitude / divisor + 2 * u32 * std::fabs(want);
    if (s == Storage::f32) return err32;
    if (s == Storage::s8) return 0.5 + err32;
    return err32 + unit_roundoff(s) * (std::fabs(want) + err32) + subnormal_half_spacing(s);
}

}  // namespace

namespace {

// One assembled kernel per (global, mode, storage) and process.
const simt::Kernel* cached_pool_kernel(bool global, PoolMode mode, Storage storage) {
    static std::mutex mutex;
    static std::map<std::tuple<bool, PoolMode, Storage>, std::unique_ptr<simt::Kernel>> kernels;
    const std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[{global, mode, storage}];
    if (!k)
        k = std::make_unique<simt::Kernel>(simt::assemble(
            global ? global_pool_source(mode, storage) : pool_source(mode, storage),
            std::string("<gpu library>/pool_") + (global ? "global_" : "") + (mode == PoolMode::max ? "max" : "avg") + "_" +
                to_string(storage)));
    return k.get();
}

}  // namespace

const simt::Kernel* global_pool_kernel(PoolMode mode, Storage storage) { return cached_pool_kernel(true, mode, storage); }
const simt::Kernel* pool_kernel(PoolMode mode, Storage storage) { return cached_pool_kernel(false, mode, storage); }

bool whole_image_window(const PoolShape& p) {
    return p.out_h() == 1 && p.out_w() == 1 && p.r == p.h && p.s == p.w && p.pad_h == 0 && p.pad_w == 0 &&
           p.dilation_h == 1 && p.dilation_w == 1;
}

bool has_pool_kernel(const Op& op) {
    // 16-bit tensors hold two channels per word, 8-bit ones four: a channel count that is not a
    // multiple would split a word between two pixels, which the kernel does not handle (such ops
    // keep their roofline rows). int32 has no kernel.
    if (op.dtype == DType::int32) return false;
    return op.pool.c % elements_per_word(pool_storage(op.dtype)) == 0;
}

Storage pool_storage(DType dtype) { return eight_bit_storage(dtype).value_or(storage_of(dtype)); }

LoweredKernel lower_pool(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    if (op.kind != OpKind::pool) throw std::invalid_argument("lower_pool: not a pool");
    if (!has_pool_kernel(op))
        throw std::invalid_argument("lower_pool: a pool's channels must fill whole words (16-bit: even; 8-bit: a multiple of 4)");
    const PoolShape& p = op.pool;
    const Storage s = pool_storage(op.dtype);
    const Fp8Encoding encoding = target.sm.fp8_encoding;
    const std::int64_t per_word = elements_per_word(s);
    const std::int64_t in_elements = p.n * p.h * p.w * p.c, out_elements = op.vector_elements();
    const std::int64_t in_words = in_elements / per_word, out_words = out_elements / per_word;
    if (in_elements > INT32_MAX ||
        static_cast<std::uint64_t>(in_words + out_words) * 4 > kVectorOpMaxBufferBytes ||
        p.h + p.pad_h > INT32_MAX / 2 || p.w + p.pad_w > INT32_MAX / 2)
        throw LoweringError("a pool of " + std::to_string(in_elements) + " input elements is outside what the gpu pool "
                            "kernel handles (at most 2^31 - 1 elements, 1 GiB of operands)");
    const bool global = whole_image_window(p);
    const simt::Kernel* kernel = global ? global_pool_kernel(p.mode, s) : pool_kernel(p.mode, s);
    LoweredKernel out;
    out.kernel = kernel;
    const std::uint32_t x = memory.allocate(static_cast<std::size_t>(in_words) * 4);
    const std::uint32_t y = memory.allocate(static_cast<std::size_t>(out_words) * 4);
    // input: the values as stored (int8: the integers q); drawn: before quantization (8-bit: for
    // the quantization error against the fp32 pool).
    std::vector<float> input, drawn;
    double input_scale = 1;  // int8: the per-tensor scale (max|x| / 127); the output keeps it
    if (target.real_data) {
        std::mt19937_64 rng = tensor_rng(target.seed, 0);
        drawn.resize(static_cast<std::size_t>(in_elements));
        for (float& v : drawn) v = unit_random(rng);
        if (s == Storage::s8) {
            QuantizedOperand q = quantize_operand(drawn, DType::int8);
            input = std::move(q.values);
            input_scale = q.scale;
        } else {
            input.resize(drawn.size());
            for (std::size_t i = 0; i < drawn.size(); ++i) input[i] = round_to(s, drawn[i], encoding);
        }
        store_elements(memory, x, input, s, encoding);
        if (!is_eight_bit(s)) drawn.clear();
    }
    const auto word = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    // The divisor's lower clip: 0, or with count_pad any bound at or below -pad of both axes (a
    // window never starts below -pad, so max(start, low) is the start on either axis).
    const std::int64_t low = p.count_pad ? -std::max(p.pad_h, p.pad_w) : 0;
    if (global) {  // one block of kGlobalPoolWarps warps per 32 output words
        out.args = {word(out_words), word(p.c / per_word), word(p.h * p.w), x, y};
        const std::int64_t blocks = (out_words + 31) / 32;
        if (blocks > INT32_MAX) throw LoweringError("a global pool of " + std::to_string(out_words) + " output words has too many blocks");
        out.dims = {static_cast<std::uint32_t>(blocks), static_cast<std::uint32_t>(32 * kGlobalPoolWarps)};
    } else {
        out.args = {word(out_words), word(p.c / per_word), word(p.h), word(p.w), word(p.out_h()), word(p.out_w()),
                    word(p.r), word(p.s), word(p.stride_h), word(p.stride_w), word(p.pad_h), word(p.pad_w),
                    word(p.dilation_h), word(p.dilation_w), word(low), word(p.h + (p.count_pad ? p.pad_h : 0)),
                    word(p.w + (p.count_pad ? p.pad_w : 0)), x, y};
        out.dims = elementwise_dims(out_words, target.sms, blocks_per_sm(*kernel, kElementwiseBlock, target));
    }
    if (s == Storage::s8) out.args.insert(out.args.end(), {float_argument(1.0f), float_argument(1.0f)});
    out.stats.push_back(stat_value(stat::grid, static_cast<double>(out.dims.grid)));
    out.stats.push_back(stat_value(stat::block, static_cast<double>(out.dims.block)));
    out.stats.push_back(stat_value(stat::elements_per_thread_step, static_cast<double>(per_word)));

    if (target.real_data) {
        out.check = [p, s, y, encoding, dtype = op.dtype, input_scale, input = std::move(input),
                     drawn = std::move(drawn)](const simt::GlobalMemory& m) {
            const std::vector<double> want = pool_reference(p, input);
            LoweringNumerics num;
            std::vector<double> got;
            double magnitude = 0;
            for_each_pool_window(
                p, [&](std::int64_t, std::int64_t i) { magnitude += std::fabs(input[static_cast<std::size_t>(i)]); },
                [&](std::int64_t o, std::int64_t oh, std::int64_t ow) {
                    const double ref = want[static_cast<std::size_t>(o)];
                    const double value = load_element(m, y, o, s, encoding);
                    if (is_eight_bit(s)) got.push_back(value);
                    const double err = std::fabs(value - ref);
                    const double tol = pool_tolerance(p.mode, s, magnitude, double(pool_divisor(p, oh, ow)),
                                                      double(p.window()), ref);
                    num.max_abs_err = std::max(num.max_abs_err, err);
                    num.max_rel_err = std::max(num.max_rel_err, err / std::max(1e-30, std::fabs(ref)));
                    num.passed = num.passed && err <= tol;
                    magnitude = 0;
                });
            num.checked = static_cast<std::int64_t>(want.size());
            if (is_eight_bit(s)) {  // against the fp32 pool of the values before quantization
                const std::vector<double> exact = pool_reference(p, drawn);
                num.quantization = quantization_error(dtype, got, std::vector<float>(exact.begin(), exact.end()), input_scale,
                                                      encoding);
                num.quantization->scheme = pool_quantization_scheme(dtype, encoding);
            }
            return num;
        };
    }
    return out;
}

}  // namespace accelsim::gpu
