#include "models/gpu/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/common/op_table.h"
#include "models/common/quantization.h"
#include "models/simt/occupancy.h"
#include "models/gpu/gpu_stats.h"

namespace accelsim::gpu {

// ---- storage -----------------------------------------------------------------------------------

Storage storage_of(DType dtype) {
    switch (dtype) {
        case DType::fp16: return Storage::f16;
        case DType::bf16: return Storage::bf16;
        default: return Storage::f32;
    }
}

std::optional<Storage> eight_bit_storage(DType dtype) {
    switch (dtype) {
        case DType::int8: return Storage::s8;
        case DType::fp8_e4m3: return Storage::e4m3;
        case DType::fp8_e5m2: return Storage::e5m2;
        default: return std::nullopt;
    }
}

const char* to_string(Storage s) {
    switch (s) {
        case Storage::f16: return "f16";
        case Storage::bf16: return "bf16";
        case Storage::s8: return "s8";
        case Storage::e4m3: return "e4m3";
        case Storage::e5m2: return "e5m2";
        default: return "f32";
    }
}

int elements_per_word(Storage s) { return s == Storage::f32 ? 1 : is_eight_bit(s) ? 4 : 2; }

std::int64_t storage_words(std::int64_t elements, Storage s) {
    const int per_word = elements_per_word(s);
    return (elements + per_word - 1) / per_word;
}

double unit_roundoff(Storage s) {
    switch (s) {
        case Storage::f16: return std::ldexp(1.0, -11);   // 10 fraction bits
        case Storage::bf16: return std::ldexp(1.0, -8);   // 7 fraction bits
        case Storage::e4m3: return std::ldexp(1.0, -4);   // 3 fraction bits
        case Storage::e5m2: return std::ldexp(1.0, -3);   // 2 fraction bits
        case Storage::s8: return 0.0;                     // fixed point: half a step of its scale
        default: return std::ldexp(1.0, -24);             // 23 fraction bits
    }
}

double subnormal_half_spacing(Storage s) {
    switch (s) {
        case Storage::f16: return std::ldexp(1.0, -25);   // subnormal spacing 2^-24
        case Storage::bf16: return std::ldexp(1.0, -134); // fp32's exponent range: spacing 2^-133
        case Storage::e4m3: return std::ldexp(1.0, -10);  // OCP spacing 2^-9 (FNUZ 2^-10)
        case Storage::e5m2: return std::ldexp(1.0, -17);  // OCP spacing 2^-16 (FNUZ 2^-17)
        case Storage::s8: return 0.0;
        default: return std::ldexp(1.0, -150);
    }
}

namespace {

std::uint16_t half_bits(Storage s, float v) {
    if (s == Storage::f16) return Eigen::numext::bit_cast<std::uint16_t>(fp16_t(v));
    return Eigen::numext::bit_cast<std::uint16_t>(bf16_t(v));
}

float from_half_bits(Storage s, std::uint16_t bits) {
    if (s == Storage::f16) return static_cast<float>(Eigen::numext::bit_cast<fp16_t>(bits));
    return static_cast<float>(Eigen::numext::bit_cast<bf16_t>(bits));
}

DType fp8_format(Storage s) { return s == Storage::e4m3 ? DType::fp8_e4m3 : DType::fp8_e5m2; }

// The byte an 8-bit storage holds for `v` (s8: v already divided by the scale).
std::uint8_t eight_bit_byte(Storage s, float v, Fp8Encoding encoding) {
    if (s == Storage::s8) {
        float q;
        quantize_int8(&v, 1, 1.0f, &q);  // round half to even, clamp to [-127, 127]
        return static_cast<std::uint8_t>(static_cast<std::int8_t>(q));
    }
    return fp8_encode(v, fp8_format(s), Fp8Overflow::saturate, encoding);
}

float from_eight_bit_byte(Storage s, std::uint8_t bits, Fp8Encoding encoding) {
    if (s == Storage::s8) return static_cast<float>(static_cast<std::int8_t>(bits));
    return fp8_decode(bits, fp8_format(s), encoding);
}

}  // namespace

float round_to(Storage s, float v, Fp8Encoding encoding) {
    if (s == Storage::f32) return v;
    if (is_eight_bit(s)) return from_eight_bit_byte(s, eight_bit_byte(s, v, encoding), encoding);
    return from_half_bits(s, half_bits(s, v));
}

float load_element(const simt::GlobalMemory& memory, std::uint32_t address, std::int64_t index, Storage s,
                   Fp8Encoding encoding) {
    if (s == Storage::f32) return memory.load_f32(address + static_cast<std::uint32_t>(4 * index));
    if (is_eight_bit(s)) return from_eight_bit_byte(s, memory.data()[address + index], encoding);
    std::uint16_t bits;
    std::memcpy(&bits, memory.data() + address + 2 * index, 2);  // little-endian: element 2w in the low half
    return from_half_bits(s, bits);
}

void store_elements(simt::GlobalMemory& memory, std::uint32_t address, const std::vector<float>& values, Storage s,
                    Fp8Encoding encoding) {
    std::uint8_t* at = memory.data() + address;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (s == Storage::f32) {
            std::memcpy(at + 4 * i, &values[i], 4);
        } else if (is_eight_bit(s)) {
            at[i] = eight_bit_byte(s, values[i], encoding);  // element 4w + j in byte j of word w
        } else {
            const std::uint16_t bits = half_bits(s, values[i]);
            std::memcpy(at + 2 * i, &bits, 2);
        }
    }
}

float unit_random(std::mt19937_64& rng) {
    return static_cast<float>(rng() >> 40) / static_cast<float>(1u << 23) - 1.0f;
}

std::mt19937_64 tensor_rng(std::uint64_t seed, int tensor) {
    return std::mt19937_64(seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(tensor) + 1);
}

int blocks_per_sm(const simt::Kernel& kernel, std::uint32_t threads, const LoweringTarget& target) {
    const simt::Occupancy o = simt::compute_occupancy(
        target.sm.limits, {static_cast<int>(threads), kernel.registers, kernel.shared_bytes});
    if (o.blocks_per_sm < 1)
        throw LoweringError("kernel " + kernel.name + " cannot run on this SM: " + o.unlaunchable_reason);
    return o.blocks_per_sm;
}

// ---- kernels -----------------------------------------------------------------------------------

std::string grid_stride_source(const std::string& name, const std::string& params, const std::string& body,
                               int registers) {
    return ".kernel " + name + "\n.param " + params + "\n.reg " + std::to_string(registers) + "\n" +
           "    mov r0, %ctaid\n"
           "    mov r1, %ntid\n"
           "    mad r0, r0, r1, %tid\n"
           "    mov r2, %nctaid\n"
           "    mul r2, r2, r1\n"
           "loop:\n"
           "    setp.ge.s32 p0, r0, n\n"
           "    @p0 exit\n"
           "    shl r3, r0, 2\n" +
           body +
           "    add r0, r0, r2\n"
           "    bra loop\n";
}


namespace {

// How the library computes each elementwise kind: fp32 code computing in place on value register v
// (second operand w, temporary t), the double reference the --validate check compares with, and
// the code's error bound relative to the result, in units of fp32 roundoff u32 (derivations at
// elementwise_tolerance). A kind without a row keeps its roofline row on gpu chips.
struct ElementwiseFunction {
    OpKind kind;
    std::string (*code)(const std::string& v, const std::string& w, const std::string& t);
    double (*reference)(double a, double b);
    double (*error_in_u32)(double x);
};

const ElementwiseFunction kElementwiseFunctions[] = {
    {OpKind::add, [](const std::string& v, const std::string& w,
                     const std::string&) { return "    fadd " + v + ", " + v + ", " + w + "\n"; },
     [](double a, double b) { return a + b; }, [](double) { return 1.0; }},
    {OpKind::mul, [](const std::string& v, const std::string& w,
                     const std::string&) { return "    fmul " + v + ", " + v + ", " + w + "\n"; },
     [](double a, double b) { return a * b; }, [](double) { return 1.0; }},
    {OpKind::relu, [](const std::string& v, const std::string&,
                      const std::string&) { return "    fmax " + v + ", " + v + ", 0.0\n"; },
     [](double a, double) { return std::fmax(a, 0.0); }, [](double) { return 0.0; }},
    // No arithmetic: the kernel moves whole words (kernel_source skips the 16-bit unpacking).
    {OpKind::copy, [](const std::string&, const std::string&, const std::string&) { return std::string(); },
     [](double a, double) { return a; }, [](double) { return 0.0; }},
    // The sigmoid form x / (1 + e^(-1.702 x)) as x * 1 / (1 + 2^(-1.702 * log2(e) * x));
    // -1.702 * log2(e) = -2.4554669...
    {OpKind::gelu,
     [](const std::string& v, const std::string&, const std::string& t) {
         return "    fmul " + t + ", " + v + ", -2.4554669\n"
                "    ex2 " + t + ", " + t + "\n"
                "    fadd " + t + ", " + t + ", 1.0\n"
                "    rcp " + t + ", " + t + "\n"
                "    fmul " + v + ", " + v + ", " + t + "\n";
     },
     [](double a, double) { return a / (1.0 + std::exp(-1.702 * a)); },
     [](double x) { return 5.0 * std::fabs(x) + 6.0; }},
};

const ElementwiseFunction* elementwise_function(OpKind kind) {
    for (const ElementwiseFunction& f : kElementwiseFunctions)
        if (f.kind == kind) return &f;
    return nullptr;
}

}  // namespace

std::string unpack_eight_bit(Storage s, const std::string& word, int first, const std::string& scale) {
    auto r = [first](int j) { return "r" + std::to_string(first + j); };
    std::string code;
    if (s == Storage::s8) {
        // prmt selector nibble 8 + j: byte j's sign replicated, so 0x8880 + 0x1110 j sign-extends byte j.
        static const char* kSignExtend[] = {"0x8880", "0x9991", "0xaaa2", "0xbbb3"};
        for (int j = 0; j < 4; ++j) code += "    prmt " + r(j) + ", " + word + ", 0, " + kSignExtend[j] + "\n";
        for (int j = 0; j < 4; ++j) code += "    i2f " + r(j) + ", " + r(j) + "\n";
        for (int j = 0; j < 4; ++j) code += "    fmul " + r(j) + ", " + r(j) + ", " + scale + "\n";
        return code;
    }
    // fp8: each 16-bit half to an f16x2 (exact), then each fp16 to fp32 (exact).
    const std::string f8 = s == Storage::e4m3 ? "e4m3x2" : "e5m2x2";
    code += "    cvt.rn.f16x2." + f8 + ".lo " + r(0) + ", " + word + "\n";
    code += "    cvt.rn.f16x2." + f8 + ".hi " + r(2) + ", " + word + "\n";
    for (int j : {0, 2})
        code += "    cvt.f32.f16.hi " + r(j + 1) + ", " + r(j) + "\n    cvt.f32.f16.lo " + r(j) + ", " + r(j) + "\n";
    return code;
}

// Requantizes the four fp32 results in first..first+3 and packs them into register `first`.
// s8: times 1/scale_y, clamped to [-127, 127], then + 1.5 2^23: in [2^23, 2^24) the fp32 spacing
// is 1, so the fadd rounds to the nearest integer, ties to even, and leaves it two's-complement in
// the low byte of the bits (0x4B400000 + q); prmt gathers the four low bytes.
// fp8: PTX's cvt.rn.satfinite pairs (first source in the upper byte), then the two halves; a scaled
// output is first multiplied by inv_scale_y.
std::string pack_eight_bit(Storage s, int first, bool scaled_fp8) {
    auto r = [first](int j) { return "r" + std::to_string(first + j); };
    std::string code;
    if (s == Storage::s8) {
        for (int j = 0; j < 4; ++j)
            code += "    fmul " + r(j) + ", " + r(j) + ", inv_scale_y\n    fmin " + r(j) + ", " + r(j) +
                    ", 127.0\n    fmax " + r(j) + ", " + r(j) + ", -127.0\n    fadd " + r(j) + ", " + r(j) +
                    ", 12582912.0\n";
        code += "    prmt " + r(0) + ", " + r(0) + ", " + r(1) + ", 0x0040\n";
        code += "    prmt " + r(2) + ", " + r(2) + ", " + r(3) + ", 0x0040\n";
    } else {
        const std::string f8 = s == Storage::e4m3 ? "e4m3x2" : "e5m2x2";
        if (scaled_fp8)
            for (int j = 0; j < 4; ++j) code += "    fmul " + r(j) + ", " + r(j) + ", inv_scale_y\n";
        for (int j : {0, 2})
            code += "    cvt.rn.satfinite." + f8 + ".f32 " + r(j) + ", " + r(j + 1) + ", " + r(j) + "\n";
    }
    code += "    prmt " + r(0) + ", " + r(0) + ", " + r(2) + ", 0x5410\n";
    return code;
}

namespace {

// Whether an fp8 op's output carries a per-tensor scale (fp8_output_scale): every fp8 op
// that computes new values; relu and copy, whose outputs are their inputs' values or 0, keep the
// inputs' (none), and stay exact.
bool fp8_output_scaled(OpKind kind, Storage s) {
    return (s == Storage::e4m3 || s == Storage::e5m2) && op_info(kind).vector_ops_per_element != 0 &&
           kind != OpKind::relu;
}

// The body (grid_stride_source): r4 the address; r5.. hold data only (timing-only runs skip them).
std::string kernel_source(const ElementwiseFunction& f, Storage s) {
    const OpKind kind = f.kind;
    const bool binary = op_info(kind).vector_inputs == 2;
    const bool moves_words = op_info(kind).vector_ops_per_element == 0;
    const std::string name = "ew_" + std::string(to_string(kind)) + (s == Storage::f32 ? "" : std::string("_") + to_string(s));
    const std::string first = binary ? "a" : "x";
    std::string params = binary ? "n, a, b, y" : "n, x, y";
    std::string body = "    add r4, r3, " + first + "\n    ld.global r5, [r4]\n";
    if (binary) body += "    add r4, r3, b\n    ld.global r6, [r4]\n";
    std::string result = "r5";
    if (s == Storage::f32 || moves_words) {
        body += f.code("r5", "r6", "r6");
    } else if (is_eight_bit(s)) {
        // a's four values in r7..r10, b's in r11..r14, r15 the temporary; results packed into r7.
        if (s == Storage::s8) params += binary ? ", scale_a, scale_b, inv_scale_y" : ", scale_x, inv_scale_y";
        else if (fp8_output_scaled(kind, s)) params += ", inv_scale_y";
        body += unpack_eight_bit(s, "r5", 7, binary ? "scale_a" : "scale_x");
        if (binary) body += unpack_eight_bit(s, "r6", 11, "scale_b");
        for (int j = 0; j < 4; ++j)
            body += f.code("r" + std::to_string(7 + j), "r" + std::to_string(11 + j), "r15");
        body += pack_eight_bit(s, 7, fp8_output_scaled(kind, s));
        result = "r7";
    } else {
        // Unpack: r5 = low element, r7 = high element (and r6 / r8 for b), compute both, pack.
        const std::string t = s == Storage::f16 ? "f16" : "bf16";
        body += "    cvt.f32." + t + ".hi r7, r5\n    cvt.f32." + t + ".lo r5, r5\n";
        if (binary) body += "    cvt.f32." + t + ".hi r8, r6\n    cvt.f32." + t + ".lo r6, r6\n";
        body += f.code("r5", "r6", "r6") + f.code("r7", "r8", "r8");
        body += "    cvt." + t + "x2.f32 r5, r5, r7\n";
    }
    body += "    add r4, r3, y\n    st.global [r4], " + result + "\n";
    return grid_stride_source(name, params, body, is_eight_bit(s) && !moves_words ? 16 : 10);
}

}  // namespace

const simt::Kernel* elementwise_kernel(OpKind kind, Storage storage) {
    const ElementwiseFunction* f = elementwise_function(kind);
    if (!f) return nullptr;
    // Assembled on first use (a 16-bit kernel needs the cvt instructions, fp32 ones do not).
    static std::mutex mutex;
    static std::map<std::pair<OpKind, Storage>, std::unique_ptr<simt::Kernel>> kernels;
    const std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[{kind, storage}];
    if (!k) {
        const std::string source = kernel_source(*f, storage);
        k = std::make_unique<simt::Kernel>(simt::assemble(
            source, "<gpu library>/ew_" + std::string(to_string(kind)) + "_" + to_string(storage)));
    }
    return k.get();
}

simt::Dim elementwise_dims(std::int64_t n, int sms, int blocks_per_sm) {
    const std::int64_t blocks = (n + kElementwiseBlock - 1) / kElementwiseBlock;
    const std::int64_t wave = static_cast<std::int64_t>(std::max(1, sms)) * std::max(1, blocks_per_sm);
    return {static_cast<std::uint32_t>(std::max<std::int64_t>(1, std::min(blocks, wave))), kElementwiseBlock};
}

bool has_elementwise_kernel(OpKind kind) { return elementwise_function(kind) != nullptr; }

double elementwise_reference_double(OpKind kind, double a, double b) {
    const ElementwiseFunction* f = elementwise_function(kind);
    return f ? f->reference(a, b) : 0.0;
}

// ---- lowering ----------------------------------------------------------------------------------

namespace {

// Error bound of one output against the double reference, for inputs exactly as stored.
// - add, mul: one fp32 rounding, u32 * |want|.
// - gelu: the fp32 constant -2.4554669 is within 1.5 u32 of -1.702 log2(e) (the literal is 2.4e-8
//   relative off, rounding it to fp32 at most u32), the fmul adds u32, so the exponent t = c x is
//   off by 2.5 u32 |t| absolute-relative, i.e. 2^t by ln2 * 2.5 u32 |t| <= 1.75 u32 |t| relative,
//   plus 2 u32 for ex2 (std::exp2f, within an ulp); 1 + 2^t adds positives (no cancellation, u32
//   more), rcp and the last fmul u32 each: (1.75 |t| + 5) u32 with |t| = 2.46 |x|, rounded up to
//   (5 |x| + 6) u32 relative.
// - relu, copy: exact.
// Then the stored result (stored_output_tolerance).
double elementwise_tolerance(OpKind kind, Storage s, double x, double want, double output_scale = 1.0,
                             double fp8_largest = 0.0) {
    const double fp32_error = elementwise_function(kind)->error_in_u32(x) * std::ldexp(1.0, -24) * std::fabs(want);
    return stored_output_tolerance(s, fp32_error, want, output_scale, fp8_largest);
}

}  // namespace

// A 16- or 8-bit float result is rounded once more: u_storage relative, plus half a subnormal
// spacing, plus (fp8 satfinite) whatever lies beyond the format's largest value.
// A scaled fp8 output (s_y = output_scale != 1): z = v * fl(1/s_y) is within 2.01 u32 |v| of v / s_y
// (two fp32 roundings), so z s_y lies within e' = e_f + 2.01 u32 (|want| + e_f) of want; rounding z
// to fp8 costs u8 |z| + h8, read back as q s_y (exact in double): e' + u8 (|want| + e') + s_y h8,
// plus what lies beyond s_y times the largest value.
// int8 (the fp32 result v within e_f of want, then q = round(clamp(v * fl(1/s_y))), s_y the
// output scale): with z = want / s_y, |z| <= 127 (1 + u32) by the calibration (s_y is
// max|want| / 127 rounded to fp32); the two fp32 products are 2.01 u32 |z| <= 256 u32 (times
// 1 + 3 u32 on e_f / s_y) off z, the clamp (1-Lipschitz) adds at most 127 u32 (what z exceeds 127
// by), the rounding 0.5: |q s_y - want| <= s_y (0.5 + 384 u32) + e_f (1 + 4 u32). Half a
// quantization step, then fp32's share.
double stored_output_tolerance(Storage s, double fp32_error, double want, double output_scale, double fp8_largest) {
    const double u32 = std::ldexp(1.0, -24);
    if (s == Storage::s8) return output_scale * (0.5 + 384 * u32) + fp32_error * (1 + 4 * u32);
    if (s == Storage::f32) return fp32_error;
    const bool scaled = is_eight_bit(s) && output_scale != 1.0;
    const double e = scaled ? fp32_error + 2.01 * u32 * (std::fabs(want) + fp32_error) : fp32_error;
    const double step = scaled ? output_scale : 1.0;
    double bound = e + unit_roundoff(s) * (std::fabs(want) + e) + step * subnormal_half_spacing(s);
    if (fp8_largest > 0) bound += std::max(0.0, std::fabs(want) + e - step * fp8_largest);
    return bound;
}

std::uint32_t float_argument(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return bits;
}

bool runs_eight_bit_elementwise(DType dtype, const LoweringTarget& target) {
    if (dtype == DType::int8) return true;
    if (!is_fp8(dtype)) return false;
    // PTX's cvt e4m3x2 / e5m2x2 forms require sm_89 or later ("sm_NN", NN >= 89). CDNA3 (gfx942,
    // mi300x) converts fp8 in hardware too: V_CVT_PK_F32_FP8 / _BF8 and V_CVT_PK_FP8_F32 / _BF8_F32
    // (the GFX940 instructions of LLVM's AMDGPU backend, llvm-project PR 78414; Composable Kernel's
    // CK_FP8_CVT_FAST_PATH on gfx942), in its FNUZ encodings. The kernels' PTX forms stand for them:
    // the same values in the SM's encoding (docs/gpu.md "8-bit elementwise kernels").
    const std::string& arch = target.sm.limits.arch;
    if (arch == "gfx942") return true;
    if (arch.rfind("sm_", 0) != 0) return false;
    return std::atoi(arch.c_str() + 3) >= 89;
}

std::string eight_bit_inputs_wording(DType dtype, Fp8Encoding encoding, const std::string& inputs, bool several) {
    if (dtype == DType::int8)
        return "int8 symmetric per-tensor " + inputs + (several ? " (each: " : " (") +
               "scale = max|x|/127, q = round_half_even(x/scale) in [-127, 127])";
    if (!is_fp8(dtype)) throw std::logic_error("eight_bit_inputs_wording: " + std::string(to_string(dtype)) + " is not 8-bit");
    return std::string(to_string(dtype)) + (encoding == Fp8Encoding::fnuz ? " FNUZ" : "") + ": " + inputs +
           " rounded to nearest even (saturating)";
}

std::string eight_bit_vector_scheme(OpKind kind, DType dtype, Fp8Encoding encoding) {
    const bool several = kind == OpKind::layernorm || op_info(kind).vector_inputs == 2;
    const std::string inputs = eight_bit_inputs_wording(
        dtype, encoding,
        kind == OpKind::layernorm ? "inputs x, gamma and beta" : several ? "inputs a and b" : "input x", several);
    const bool moves_words = op_info(kind).vector_ops_per_element == 0;
    if (dtype == DType::int8) {
        if (moves_words) return inputs + "; the integers are copied, the output keeps the input's scale";
        return inputs + "; " + std::string(to_string(kind)) +
               " in fp32 on q*scale; output requantized per tensor: scale_y = max|y|/127 over the exact outputs, "
               "q_y = round_half_even(y/scale_y) in [-127, 127], dequantized by scale_y";
    }
    if (moves_words) return inputs + "; the bytes are copied; no scaling";
    if (!fp8_output_scaled(kind, *eight_bit_storage(dtype)))
        return inputs + "; " + std::string(to_string(kind)) + " in fp32 is exact in the format; no scaling";
    return inputs + "; " + std::string(to_string(kind)) +
           " in fp32; output scaled by 2^-k, the smallest k with max|y|*2^-k within the format's largest value "
           "(max|y| over the exact outputs), rounded to nearest even (saturating), dequantized by 2^k";
}

float int8_output_scale(const std::vector<double>& reference_outputs) {
    double largest = 0;
    for (const double v : reference_outputs) largest = std::max(largest, std::fabs(v));
    return largest > 0 ? static_cast<float>(largest / 127.0) : 1.0f;
}

float fp8_output_scale(const std::vector<double>& reference_outputs, double largest) {
    double amax = 0;
    for (const double v : reference_outputs) amax = std::max(amax, std::fabs(v));
    if (!(amax > 0)) return 1.0f;
    int k = static_cast<int>(std::ceil(std::log2(amax / largest)));
    while (std::ldexp(amax, -k) > largest) ++k;       // log2's rounding, either way
    while (std::ldexp(amax, -(k - 1)) <= largest) --k;
    return std::ldexp(1.0f, k);
}

LoweredKernel lower_elementwise(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    if (!elementwise_function(op.kind))
        throw std::invalid_argument("lower_elementwise: the gpu library has no kernel for " +
                                    std::string(to_string(op.kind)));
    const Storage s = eight_bit_storage(op.dtype).value_or(storage_of(op.dtype));
    const Fp8Encoding encoding = target.sm.fp8_encoding;
    const std::int64_t n = op.elements;
    const int inputs = op_info(op.kind).vector_inputs;
    const std::int64_t words = storage_words(n, s);
    if (n <= 0 || n > INT32_MAX ||
        static_cast<std::uint64_t>(words) * 4 * (inputs + 1) > kVectorOpMaxBufferBytes)
        throw LoweringError("n=" + std::to_string(n) + " is outside what the gpu elementwise kernel handles (1 .. "
                            "2^31-1 elements, at most 1 GiB of operands)");
    const simt::Kernel* kernel = elementwise_kernel(op.kind, s);
    const bool moves_words = op_info(op.kind).vector_ops_per_element == 0;

    LoweredKernel out;
    out.kernel = kernel;
    out.args.push_back(static_cast<std::uint32_t>(words));
    std::vector<std::uint32_t> in;
    // With real data: each input's unquantized values (the quantization error's reference), its
    // per-tensor scale (s8; 1 otherwise) and its real values as the kernel reads them (s8: q * scale
    // rounded to fp32 as its fmul does; a copy moves q, whose value is q * scale exactly).
    std::vector<std::vector<float>> unquantized(static_cast<std::size_t>(inputs));
    std::vector<float> scales(static_cast<std::size_t>(inputs), 1.0f);
    std::vector<std::vector<double>> as_read(static_cast<std::size_t>(inputs));
    for (int i = 0; i < inputs; ++i) {
        in.push_back(memory.allocate(static_cast<std::size_t>(words) * 4));
        if (target.real_data) {
            std::mt19937_64 rng = tensor_rng(target.seed, i);
            std::vector<float>& values = unquantized[static_cast<std::size_t>(i)];
            values.resize(static_cast<std::size_t>(n));
            for (float& v : values) v = unit_random(rng);
            std::vector<float> stored = values;
            if (s == Storage::s8) {
                // quantization.h's per-tensor quantization; the kernel dequantizes q * scale in fp32.
                QuantizedOperand q = quantize_operand(values, DType::int8);
                scales[static_cast<std::size_t>(i)] = static_cast<float>(q.scale);
                stored = std::move(q.values);
            }
            store_elements(memory, in.back(), stored, s, encoding);
            std::vector<double>& read = as_read[static_cast<std::size_t>(i)];
            read.resize(stored.size());
            const float scale = scales[static_cast<std::size_t>(i)];
            for (std::size_t e = 0; e < stored.size(); ++e) {
                if (s != Storage::s8) read[e] = round_to(s, stored[e], encoding);
                else read[e] = moves_words ? static_cast<double>(stored[e]) * scale : static_cast<double>(stored[e] * scale);
            }
        }
        out.args.push_back(in.back());
    }
    const std::uint32_t y = memory.allocate(static_cast<std::size_t>(words) * 4);
    out.args.push_back(y);

    // int8 and (fp8_output_scaled) fp8: the output's scale, calibrated on the reference outputs
    // (int8_output_scale, fp8_output_scale; an int8 copy keeps its input's).
    float output_scale = 1.0f;
    const bool scaled_fp8 = fp8_output_scaled(op.kind, s);
    if ((s == Storage::s8 || scaled_fp8) && target.real_data) {
        if (moves_words) {
            output_scale = scales[0];
        } else {
            std::vector<double> reference(static_cast<std::size_t>(n));
            for (std::size_t e = 0; e < reference.size(); ++e)
                reference[e] = elementwise_reference_double(op.kind, as_read[0][e], inputs > 1 ? as_read[1][e] : 0.0);
            output_scale = s == Storage::s8 ? int8_output_scale(reference)
                                            : fp8_output_scale(reference, fp8_max(op.dtype, encoding));
        }
    }
    const bool int8_scales = s == Storage::s8 && !moves_words;  // an int8 copy moves words: no scales
    if (int8_scales)
        for (const float scale : scales) out.args.push_back(float_argument(scale));
    if (int8_scales || scaled_fp8) out.args.push_back(float_argument(1.0f / output_scale));
    out.dims = elementwise_dims(words, target.sms, blocks_per_sm(*kernel, kElementwiseBlock, target));

    out.stats.push_back(stat_value(stat::grid, static_cast<double>(out.dims.grid)));
    out.stats.push_back(stat_value(stat::block, static_cast<double>(out.dims.block)));
    out.stats.push_back(stat_value(stat::elements_per_thread_step, static_cast<double>(elements_per_word(s))));

    if (target.real_data) {
        const OpKind kind = op.kind;
        const DType dtype = op.dtype;
        const double fp8_largest = s == Storage::e4m3 || s == Storage::e5m2 ? fp8_max(op.dtype, encoding) : 0.0;
        out.check = [kind, dtype, s, encoding, n, in, y, output_scale, fp8_largest, as_read = std::move(as_read),
                     unquantized = std::move(unquantized)](const simt::GlobalMemory& m) {
            LoweringNumerics num;
            std::vector<double> outputs;
            std::vector<float> unquantized_reference;
            if (is_eight_bit(s)) {
                outputs.reserve(static_cast<std::size_t>(n));
                unquantized_reference.reserve(static_cast<std::size_t>(n));
            }
            for (std::int64_t e = 0; e < n; ++e) {
                const std::size_t at = static_cast<std::size_t>(e);
                // The inputs as the kernel read them (s8: q * scale in fp32, as its fmul computes).
                const double a = is_eight_bit(s) ? as_read[0][at] : load_element(m, in[0], e, s);
                const double b = in.size() > 1 ? (is_eight_bit(s) ? as_read[1][at] : load_element(m, in[1], e, s)) : 0.0;
                const double want = elementwise_reference_double(kind, a, b);
                const double got = static_cast<double>(load_element(m, y, e, s, encoding)) * output_scale;
                const double err = std::fabs(got - want);
                num.max_abs_err = std::max(num.max_abs_err, err);
                num.max_rel_err = std::max(num.max_rel_err, err / std::max(1e-30, std::fabs(want)));
                num.passed = num.passed && err <= elementwise_tolerance(kind, s, a, want, output_scale, fp8_largest);
                if (is_eight_bit(s)) {
                    outputs.push_back(got);
                    unquantized_reference.push_back(static_cast<float>(elementwise_reference_double(
                        kind, unquantized[0][at], unquantized.size() > 1 ? unquantized[1][at] : 0.0)));
                }
            }
            num.checked = n;
            // Against the op on the values before quantization (quantization.h), as int8 and fp8 GEMMs report.
            if (is_eight_bit(s)) {
                num.quantization = quantization_error(dtype, outputs, unquantized_reference, 1.0, encoding);
                num.quantization->scheme = eight_bit_vector_scheme(kind, dtype, encoding);
            }
            return num;
        };
    }
    return out;
}

}  // namespace accelsim::gpu
