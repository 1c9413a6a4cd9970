#include "models/gpu/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "models/common/op_table.h"
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

const char* to_string(Storage s) {
    switch (s) {
        case Storage::f16: return "f16";
        case Storage::bf16: return "bf16";
        default: return "f32";
    }
}

int elements_per_word(Storage s) { return s == Storage::f32 ? 1 : 2; }

std::int64_t storage_words(std::int64_t elements, Storage s) {
    return s == Storage::f32 ? elements : (elements + 1) / 2;
}

double unit_roundoff(Storage s) {
    switch (s) {
        case Storage::f16: return std::ldexp(1.0, -11);   // 10 fraction bits
        case Storage::bf16: return std::ldexp(1.0, -8);   // 7 fraction bits
        default: return std::ldexp(1.0, -24);             // 23 fraction bits
    }
}

double subnormal_half_spacing(Storage s) {
    switch (s) {
        case Storage::f16: return std::ldexp(1.0, -25);   // subnormal spacing 2^-24
        case Storage::bf16: return std::ldexp(1.0, -134); // fp32's exponent range: spacing 2^-133
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

}  // namespace

float round_to(Storage s, float v) { return s == Storage::f32 ? v : from_half_bits(s, half_bits(s, v)); }

float load_element(const simt::GlobalMemory& memory, std::uint32_t address, std::int64_t index, Storage s) {
    if (s == Storage::f32) return memory.load_f32(address + static_cast<std::uint32_t>(4 * index));
    std::uint16_t bits;
    std::memcpy(&bits, memory.data() + address + 2 * index, 2);  // little-endian: element 2w in the low half
    return from_half_bits(s, bits);
}

void store_elements(simt::GlobalMemory& memory, std::uint32_t address, const std::vector<float>& values, Storage s) {
    std::uint8_t* at = memory.data() + address;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (s == Storage::f32) {
            std::memcpy(at + 4 * i, &values[i], 4);
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

// The body (grid_stride_source): r4 the address; r5..r8 hold data only (timing-only runs skip them).
std::string kernel_source(const ElementwiseFunction& f, Storage s) {
    const OpKind kind = f.kind;
    const bool binary = op_info(kind).vector_inputs == 2;
    const std::string name = "ew_" + std::string(to_string(kind)) + (s == Storage::f32 ? "" : std::string("_") + to_string(s));
    const std::string first = binary ? "a" : "x";
    std::string body = "    add r4, r3, " + first + "\n    ld.global r5, [r4]\n";
    if (binary) body += "    add r4, r3, b\n    ld.global r6, [r4]\n";
    if (s == Storage::f32 || op_info(kind).vector_ops_per_element == 0) {
        body += f.code("r5", "r6", "r6");
    } else {
        // Unpack: r5 = low element, r7 = high element (and r6 / r8 for b), compute both, pack.
        const std::string t = s == Storage::f16 ? "f16" : "bf16";
        body += "    cvt.f32." + t + ".hi r7, r5\n    cvt.f32." + t + ".lo r5, r5\n";
        if (binary) body += "    cvt.f32." + t + ".hi r8, r6\n    cvt.f32." + t + ".lo r6, r6\n";
        body += f.code("r5", "r6", "r6") + f.code("r7", "r8", "r8");
        body += "    cvt." + t + "x2.f32 r5, r5, r7\n";
    }
    body += "    add r4, r3, y\n    st.global [r4], r5\n";
    return grid_stride_source(name, binary ? "n, a, b, y" : "n, x, y", body);
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

// Bytes an op's buffers may total: global memory is 32-bit addressed, and a test machine's RAM.
constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{1} << 30;

// Error bound of one output against the double reference, for inputs exactly as stored.
// - add, mul: one fp32 rounding, u32 * |want|.
// - gelu: the fp32 constant -2.4554669 is within 1.5 u32 of -1.702 log2(e) (the literal is 2.4e-8
//   relative off, rounding it to fp32 at most u32), the fmul adds u32, so the exponent t = c x is
//   off by 2.5 u32 |t| absolute-relative, i.e. 2^t by ln2 * 2.5 u32 |t| <= 1.75 u32 |t| relative,
//   plus 2 u32 for ex2 (std::exp2f, within an ulp); 1 + 2^t adds positives (no cancellation, u32
//   more), rcp and the last fmul u32 each: (1.75 |t| + 5) u32 with |t| = 2.46 |x|, rounded up to
//   (5 |x| + 6) u32 relative.
// - relu, copy: exact.
// Then a 16-bit result is rounded once more: u_storage relative, plus half a subnormal spacing.
double elementwise_tolerance(OpKind kind, Storage s, double x, double want) {
    const double u32 = std::ldexp(1.0, -24);
    double rel = elementwise_function(kind)->error_in_u32(x) * u32;
    if (s != Storage::f32) rel += unit_roundoff(s) * (1.0 + rel);
    return rel * std::fabs(want) + (s == Storage::f32 ? 0.0 : subnormal_half_spacing(s));
}

}  // namespace

LoweredKernel lower_elementwise(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    if (!elementwise_function(op.kind))
        throw std::invalid_argument("lower_elementwise: the gpu library has no kernel for " +
                                    std::string(to_string(op.kind)));
    const Storage s = storage_of(op.dtype);
    const std::int64_t n = op.elements;
    const int inputs = op_info(op.kind).vector_inputs;
    const std::int64_t words = storage_words(n, s);
    if (n <= 0 || n > INT32_MAX || static_cast<std::uint64_t>(words) * 4 * (inputs + 1) > kMaxBufferBytes)
        throw LoweringError("n=" + std::to_string(n) + " is outside what the gpu elementwise kernel handles (1 .. "
                            "2^31-1 elements, at most 1 GiB of operands)");
    const simt::Kernel* kernel = elementwise_kernel(op.kind, s);

    LoweredKernel out;
    out.kernel = kernel;
    out.args.push_back(static_cast<std::uint32_t>(words));
    std::vector<std::uint32_t> in;
    for (int i = 0; i < inputs; ++i) {
        in.push_back(memory.allocate(static_cast<std::size_t>(words) * 4));
        if (target.real_data) {
            std::mt19937_64 rng = tensor_rng(target.seed, i);
            std::vector<float> values(static_cast<std::size_t>(n));
            for (float& v : values) v = unit_random(rng);
            store_elements(memory, in.back(), values, s);
        }
        out.args.push_back(in.back());
    }
    const std::uint32_t y = memory.allocate(static_cast<std::size_t>(words) * 4);
    out.args.push_back(y);
    out.dims = elementwise_dims(words, target.sms, blocks_per_sm(*kernel, kElementwiseBlock, target));

    out.stats.push_back(stat_value(stat::grid, static_cast<double>(out.dims.grid)));
    out.stats.push_back(stat_value(stat::block, static_cast<double>(out.dims.block)));
    out.stats.push_back(stat_value(stat::elements_per_thread_step, static_cast<double>(elements_per_word(s))));

    if (target.real_data) {
        const OpKind kind = op.kind;
        out.check = [kind, s, n, in, y](const simt::GlobalMemory& m) {
            LoweringNumerics num;
            for (std::int64_t e = 0; e < n; ++e) {
                const double a = load_element(m, in[0], e, s);
                const double b = in.size() > 1 ? load_element(m, in[1], e, s) : 0.0;
                const double want = elementwise_reference_double(kind, a, b);
                const double err = std::fabs(static_cast<double>(load_element(m, y, e, s)) - want);
                num.max_abs_err = std::max(num.max_abs_err, err);
                num.max_rel_err = std::max(num.max_rel_err, err / std::max(1e-30, std::fabs(want)));
                num.passed = num.passed && err <= elementwise_tolerance(kind, s, a, want);
            }
            num.checked = n;
            return num;
        };
    }
    return out;
}

}  // namespace accelsim::gpu
