#include "models/simt/execution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <Eigen/Core>

#include "models/common/dtype.h"
#include "models/simt/memory_access.h"

namespace accelsim::simt {

namespace {

inline float as_float(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline std::uint32_t as_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline std::int32_t as_int(std::uint32_t u) { return static_cast<std::int32_t>(u); }

float narrow_to_float(std::uint16_t bits, MmaType type) {
    if (type == MmaType::bf16) return as_float(static_cast<std::uint32_t>(bits) << 16);
    return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

// fp32 -> fp16 / bf16 bits, round to nearest even (NaN stays a quiet NaN of the same sign).
std::uint16_t narrow_from_float(float f, MmaType type) {
    if (type == MmaType::f16) return Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(f));
    const std::uint32_t u = as_bits(f);
    if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

std::string hex32(std::uint32_t v) {
    char text[9];
    std::snprintf(text, sizeof text, "%08x", v);
    return text;
}

template <typename F>
inline void for_lanes(std::uint32_t* out, F f) {
    for (int l = 0; l < 32; ++l) out[l] = f(l);
}


// The C and D fragments of both mma shapes (m16n8k16 and m16n8k32): register i of a lane holds
// element (g + 8 [i >= 2], 2t + (i & 1)) of the 16x8 accumulator, g = lane / 4, t = lane % 4.
struct AccumulatorElement {
    int row, col;
};
AccumulatorElement accumulator_element(int lane, int i) {
    return {(lane >> 2) + (i >= 2 ? 8 : 0), 2 * (lane & 3) + (i & 1)};
}
}  // namespace

std::uint32_t GlobalMemory::allocate(std::size_t bytes, std::size_t align) {
    std::size_t start = (std::max(bytes_.size(), kNullBytes) + align - 1) / align * align;
    if (start + bytes > 0xffffffffULL) throw SimtError("global memory: allocation beyond 4 GiB");
    bytes_.resize(start + bytes, 0);
    allocations_.push_back({static_cast<std::uint32_t>(start), bytes});
    return static_cast<std::uint32_t>(start);
}
float GlobalMemory::load_f32(std::uint32_t a) const { return as_float(load32(a)); }
void GlobalMemory::store_f32(std::uint32_t a, float v) { store32(a, as_bits(v)); }
void GlobalMemory::write(std::uint32_t a, const void* src, std::size_t n) {
    if (a + n > bytes_.size()) throw SimtError("global memory: write beyond the end");
    std::memcpy(&bytes_[a], src, n);
}
void GlobalMemory::read(std::uint32_t a, void* dst, std::size_t n) const {
    if (a + n > bytes_.size()) throw SimtError("global memory: read beyond the end");
    std::memcpy(dst, &bytes_[a], n);
}

void Warp::reset(int registers, std::uint32_t block, int warp_index, std::uint32_t threads_in_block, int slot) {
    regs.assign(static_cast<std::size_t>(registers) * 32, 0);
    preds.fill(0);
    block_id = block;
    warp_in_block = warp_index;
    first_thread = static_cast<std::uint32_t>(warp_index) * 32;
    const std::uint32_t lanes = std::min<std::uint32_t>(32, threads_in_block - first_thread);
    live = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1);
    stack.clear();
    stack.reserve(32);
    stack.push_back({0, -1, live});
    block_slot = slot;
    at_barrier = false;
    finished = false;
    trips = 0;
}

void ExecutionCounters::add(const ExecutionCounters& o) {
    issued += o.issued;
    mma_issued += o.mma_issued;
    active_lanes += o.active_lanes;
    for (std::size_t i = 0; i < lanes_histogram.size(); ++i) lanes_histogram[i] += o.lanes_histogram[i];
}

WarpExecutor::WarpExecutor(const Kernel& kernel, GlobalMemory& memory, Dim dims, std::vector<std::uint32_t> args,
                           bool skip_fp_payload)
    : kernel_(kernel), memory_(memory), dims_(dims), args_(std::move(args)), skip_fp_payload_(skip_fp_payload) {
    if (args_.size() != kernel_.params.size())
        throw SimtError(kernel_.file + ": kernel '" + kernel_.name + "' takes " +
                        std::to_string(kernel_.params.size()) + " argument(s), got " + std::to_string(args_.size()));
    if (skip_fp_payload_ && !kernel_.fp_payload_skippable)
        throw SimtError(kernel_.file + ": floating-point payload cannot be skipped: " + kernel_.fp_dependence);
}

void WarpExecutor::fault(const Instruction& in, const std::string& msg) const {
    const std::ptrdiff_t pc = &in - kernel_.code.data();
    throw SimtError(kernel_.where(in) + ": " + opcode_name(in.op) + ": " + msg + " (kernel '" + kernel_.name +
                    "', pc " + std::to_string(pc) + ")");
}

void WarpExecutor::operand_words(const Operand& o, const Warp& warp, std::uint32_t* out) const {
    const std::uint32_t* words = fetch(o, warp, out);
    if (words != out) std::copy(words, words + 32, out);
}

const std::uint32_t* WarpExecutor::fetch(const Operand& o, const Warp& w, std::uint32_t* scratch) const {
    switch (o.kind) {
        case Operand::Kind::reg: return &w.regs[static_cast<std::size_t>(o.value) * 32];
        case Operand::Kind::imm: std::fill(scratch, scratch + 32, o.value); return scratch;
        case Operand::Kind::param: std::fill(scratch, scratch + 32, args_[o.value]); return scratch;
        case Operand::Kind::special: {
            std::uint32_t v = 0;
            switch (static_cast<Special>(o.value)) {
                case Special::tid: for_lanes(scratch, [&](int l) { return w.first_thread + static_cast<std::uint32_t>(l); }); return scratch;
                case Special::laneid: for_lanes(scratch, [](int l) { return static_cast<std::uint32_t>(l); }); return scratch;
                case Special::ctaid: v = w.block_id; break;
                case Special::ntid: v = dims_.block; break;
                case Special::nctaid: v = dims_.grid; break;
                case Special::warpid: v = static_cast<std::uint32_t>(w.warp_in_block); break;
                case Special::cluster_ctarank: v = w.block_id % static_cast<std::uint32_t>(kernel_.cluster); break;
            }
            std::fill(scratch, scratch + 32, v);
            return scratch;
        }
        case Operand::Kind::pred:
        case Operand::Kind::none: break;
    }
    std::fill(scratch, scratch + 32, 0u);
    return scratch;
}

void WarpExecutor::step(Warp& w, Block& block, StepResult& r) {
    StackEntry& top = w.stack.back();
    const int pc = top.pc;
    const Instruction& in = kernel_.code[static_cast<std::size_t>(pc)];
    const std::uint32_t active = top.mask;
    std::uint32_t exec = active;
    if (in.guard >= 0) {
        const std::uint32_t p = w.preds[static_cast<std::size_t>(in.guard)];
        exec &= in.guard_negated ? ~p : p;
    }
    // Full warps are the common case; without -mpopcnt __builtin_popcount is a library call.
    const int lanes = active == 0xffffffffu ? 32 : __builtin_popcount(active);
    ++counters_.issued;
    // A warp's share of a wgmma (16 rows of m64nNk16 / m64nNk32) counts as the N/8 m16n8k16 /
    // m16n8k32 it equals in MACs.
    counters_.mma_issued += in.op == Opcode::mma ? 1u : in.op == Opcode::wgmma_mma ? in.wgmma_n / 8u : 0u;
    counters_.active_lanes += static_cast<std::uint64_t>(lanes);
    ++counters_.lanes_histogram[static_cast<std::size_t>(lanes)];
    r.instruction = &in;
    r.active = active;
    r.executed = exec;
    r.redirected = false;
    r.barrier = false;
    r.warp_finished = false;
    // A remote arrival whose guard is false for every lane sends nothing (not the previous one's).
    r.remote_arrivals = 0;

    alignas(64) std::uint32_t s0[32], s1[32], s2[32], result[32];
    std::uint32_t* dst = in.dst.kind == Operand::Kind::reg ? &w.regs[static_cast<std::size_t>(in.dst.value) * 32] : nullptr;
    bool write_result = dst != nullptr && exec != 0;
    // PTX ISA, "Multiply-and-Accumulate Instruction: mma" (parallel-thread-execution/index.html
    // #warp-level-matrix-instructions-mma): the mandatory .aligned qualifier means all threads of
    // the warp must execute the same mma, and a divergent one is undefined: a fault here, checked
    // before the payload, which timing-only runs skip.
    if (in.op == Opcode::mma && exec != 0 && exec != 0xffffffffu)
        fault(in, "needs all 32 lanes active (warp-synchronous), " + std::to_string(__builtin_popcount(exec)) +
                      " are (mask 0x" + hex32(exec) + ")");
    // PTX ISA 9.7.15.5.2 (wgmma.mma_async): .sync.aligned, executed by all threads of the 4 warps
    // of a warpgroup.
    if (in.op == Opcode::wgmma_mma) {
        if (exec != 0xffffffffu)
            fault(in, "needs all 32 lanes active (warpgroup-synchronous), mask is 0x" + hex32(exec));
        const int warps = static_cast<int>((dims_.block + 31) / 32);
        if ((w.warp_in_block / 4 + 1) * 4 > warps)
            fault(in, "warp " + std::to_string(w.warp_in_block) + " is not in a complete warpgroup of 4 warps (block of " +
                          std::to_string(warps) + " warps)");
    }
    const bool skip = skip_fp_payload_ && in.fp_payload;
    int next_pc = pc + 1;

    if (skip || exec == 0) {
        write_result = false;  // skipped payload, or every lane's guard false: only control below
    } else {
        switch (in.op) {
            case Opcode::mov: {
                const std::uint32_t* a = fetch(in.src[0], w, s0);
                for_lanes(result, [&](int l) { return a[l]; });
                break;
            }
#define ACCELSIM_BINARY_OP(OPC, EXPR)                                 \
    case Opcode::OPC: {                                               \
        const std::uint32_t* a = fetch(in.src[0], w, s0);             \
        const std::uint32_t* b = fetch(in.src[1], w, s1);             \
        for_lanes(result, [&](int l) { return EXPR; });               \
        break;                                                        \
    }
            ACCELSIM_BINARY_OP(add, a[l] + b[l])
            ACCELSIM_BINARY_OP(sub, a[l] - b[l])
            ACCELSIM_BINARY_OP(mul, a[l] * b[l])
            // Unsigned; division by zero gives all ones (quotient) and the dividend (remainder).
            ACCELSIM_BINARY_OP(div, b[l] == 0 ? 0xffffffffu : a[l] / b[l])
            ACCELSIM_BINARY_OP(rem, b[l] == 0 ? a[l] : a[l] % b[l])
            ACCELSIM_BINARY_OP(min, static_cast<std::uint32_t>(std::min(as_int(a[l]), as_int(b[l]))))
            ACCELSIM_BINARY_OP(max, static_cast<std::uint32_t>(std::max(as_int(a[l]), as_int(b[l]))))
            ACCELSIM_BINARY_OP(shl, b[l] >= 32 ? 0u : a[l] << b[l])
            ACCELSIM_BINARY_OP(shr, b[l] >= 32 ? 0u : a[l] >> b[l])
            ACCELSIM_BINARY_OP(and_, a[l] & b[l])
            ACCELSIM_BINARY_OP(or_, a[l] | b[l])
            ACCELSIM_BINARY_OP(xor_, a[l] ^ b[l])
            ACCELSIM_BINARY_OP(fadd, as_bits(as_float(a[l]) + as_float(b[l])))
            ACCELSIM_BINARY_OP(fsub, as_bits(as_float(a[l]) - as_float(b[l])))
            ACCELSIM_BINARY_OP(fmul, as_bits(as_float(a[l]) * as_float(b[l])))
            ACCELSIM_BINARY_OP(fmin, as_bits(std::fmin(as_float(a[l]), as_float(b[l]))))
            ACCELSIM_BINARY_OP(fmax, as_bits(std::fmax(as_float(a[l]), as_float(b[l]))))
#undef ACCELSIM_BINARY_OP
            case Opcode::mad:
            case Opcode::ffma: {
                const std::uint32_t* a = fetch(in.src[0], w, s0);
                const std::uint32_t* b = fetch(in.src[1], w, s1);
                const std::uint32_t* c = fetch(in.src[2], w, s2);
                if (in.op == Opcode::mad) for_lanes(result, [&](int l) { return a[l] * b[l] + c[l]; });
                else for_lanes(result, [&](int l) { return as_bits(std::fma(as_float(a[l]), as_float(b[l]), as_float(c[l]))); });
                break;
            }
#define ACCELSIM_UNARY_OP(OPC, EXPR)                                  \
    case Opcode::OPC: {                                               \
        const std::uint32_t* a = fetch(in.src[0], w, s0);             \
        for_lanes(result, [&](int l) { return EXPR; });               \
        break;                                                        \
    }
            ACCELSIM_UNARY_OP(not_, ~a[l])
            ACCELSIM_UNARY_OP(i2f, as_bits(static_cast<float>(as_int(a[l]))))
            ACCELSIM_UNARY_OP(ex2, as_bits(std::exp2(as_float(a[l]))))
            ACCELSIM_UNARY_OP(rcp, as_bits(1.0f / as_float(a[l])))
            ACCELSIM_UNARY_OP(rsqrt, as_bits(1.0f / std::sqrt(as_float(a[l]))))
#undef ACCELSIM_UNARY_OP
            case Opcode::f2i: {
                // Truncation toward zero, saturating like cvt.rzi.s32.f32; NaN gives 0.
                const std::uint32_t* a = fetch(in.src[0], w, s0);
                for_lanes(result, [&](int l) {
                    const float f = as_float(a[l]);
                    if (std::isnan(f)) return 0u;
                    if (f >= 2147483647.0f) return 0x7fffffffu;
                    if (f <= -2147483648.0f) return 0x80000000u;
                    return static_cast<std::uint32_t>(static_cast<std::int32_t>(f));
                });
                break;
            }
            case Opcode::setp: {
                const std::uint32_t* a = fetch(in.src[0], w, s0);
                const std::uint32_t* b = fetch(in.src[1], w, s1);
                const auto cmp = static_cast<Compare>(in.modifier);
                std::uint32_t bits = 0;
                for (int l = 0; l < 32; ++l) {
                    int c;  // -1, 0, 1, or 2 for unordered (NaN): every comparison but ne is false
                    if (in.compare_type == CompareType::f32) {
                        const float x = as_float(a[l]), y = as_float(b[l]);
                        c = (std::isnan(x) || std::isnan(y)) ? 2 : (x < y ? -1 : (x > y ? 1 : 0));
                    } else if (in.compare_type == CompareType::s32) {
                        c = as_int(a[l]) < as_int(b[l]) ? -1 : (as_int(a[l]) > as_int(b[l]) ? 1 : 0);
                    } else {
                        c = a[l] < b[l] ? -1 : (a[l] > b[l] ? 1 : 0);
                    }
                    bool t = false;
                    switch (cmp) {
                        case Compare::eq: t = c == 0; break;
                        case Compare::ne: t = c != 0; break;
                        case Compare::lt: t = c == -1; break;
                        case Compare::le: t = c == -1 || c == 0; break;
                        case Compare::gt: t = c == 1; break;
                        case Compare::ge: t = c == 1 || c == 0; break;
                    }
                    bits |= static_cast<std::uint32_t>(t) << l;
                }
                std::uint32_t& p = w.preds[in.dst.value];
                p = (p & ~exec) | (bits & exec);
                break;
            }
            case Opcode::selp: {
                const std::uint32_t* a = fetch(in.src[0], w, s0);
                const std::uint32_t* b = fetch(in.src[1], w, s1);
                const std::uint32_t p = w.preds[in.src[2].value];
                for_lanes(result, [&](int l) { return ((p >> l) & 1) ? a[l] : b[l]; });
                break;
            }
            case Opcode::shfl: {
                const std::uint32_t* a = fetch(in.src[0], w, s0);
                const std::uint32_t* b = fetch(in.src[1], w, s1);
                const auto mode = static_cast<ShuffleMode>(in.modifier);
                // The warp's 32 lanes, or (set_wave_shuffle) the wave's 64, this half's lanes at
                // first .. first + 31 of them.
                const std::uint32_t* from = wave_words_ ? wave_words_ : a;
                const int last = wave_words_ ? 63 : 31, first = wave_words_ ? 32 * wave_half_ : 0;
                for_lanes(result, [&](int l) {
                    const int lane = first + l, by = static_cast<int>(b[l] & static_cast<std::uint32_t>(last));
                    int src = lane;
                    switch (mode) {
                        case ShuffleMode::idx: src = by; break;
                        case ShuffleMode::up: src = lane - by < 0 ? lane : lane - by; break;
                        case ShuffleMode::down: src = lane + by > last ? lane : lane + by; break;
                        case ShuffleMode::bfly: src = lane ^ by; break;
                    }
                    return from[src];
                });
                break;
            }
            case Opcode::prmt: {
                // PTX prmt.b32 (default mode): bytes 0-3 of a and 4-7 of b; result byte i is the
                // byte that nibble i of c selects (bits 0-2), or its sign replicated when bit 3 is set.
                const std::uint32_t* a = fetch(in.src[0], w, s0);
                const std::uint32_t* b = fetch(in.src[1], w, s1);
                const std::uint32_t* c = fetch(in.src[2], w, s2);
                for_lanes(result, [&](int l) {
                    const std::uint64_t bytes = static_cast<std::uint64_t>(b[l]) << 32 | a[l];
                    std::uint32_t out = 0;
                    for (int i = 0; i < 4; ++i) {
                        const std::uint32_t nibble = (c[l] >> (4 * i)) & 0xfu;
                        std::uint32_t byte = static_cast<std::uint32_t>(bytes >> (8 * (nibble & 7u))) & 0xffu;
                        if (nibble & 8u) byte = (byte & 0x80u) ? 0xffu : 0u;
                        out |= byte << (8 * i);
                    }
                    return out;
                });
                break;
            }
            case Opcode::cvt: {
                const std::uint32_t* a = fetch(in.src[0], w, s0);
                switch (static_cast<Conversion>(in.modifier)) {
                    case Conversion::f32_f16_lo: for_lanes(result, [&](int l) { return as_bits(narrow_to_float(static_cast<std::uint16_t>(a[l]), MmaType::f16)); }); break;
                    case Conversion::f32_f16_hi: for_lanes(result, [&](int l) { return as_bits(narrow_to_float(static_cast<std::uint16_t>(a[l] >> 16), MmaType::f16)); }); break;
                    case Conversion::f32_bf16_lo: for_lanes(result, [&](int l) { return a[l] << 16; }); break;
                    case Conversion::f32_bf16_hi: for_lanes(result, [&](int l) { return a[l] & 0xffff0000u; }); break;
                    case Conversion::f16x2_f32:
                    case Conversion::bf16x2_f32: {
                        const std::uint32_t* b = fetch(in.src[1], w, s1);
                        const MmaType type = static_cast<Conversion>(in.modifier) == Conversion::f16x2_f32 ? MmaType::f16 : MmaType::bf16;
                        for_lanes(result, [&](int l) {
                            return static_cast<std::uint32_t>(narrow_from_float(as_float(a[l]), type)) |
                                   static_cast<std::uint32_t>(narrow_from_float(as_float(b[l]), type)) << 16;
                        });
                        break;
                    }
                    case Conversion::f16x2_e4m3x2_lo:
                    case Conversion::f16x2_e4m3x2_hi:
                    case Conversion::f16x2_e5m2x2_lo:
                    case Conversion::f16x2_e5m2x2_hi: {
                        // Every e4m3 and e5m2 value (OCP or FNUZ) is exact in fp16.
                        const auto c = static_cast<Conversion>(in.modifier);
                        const DType format = c == Conversion::f16x2_e4m3x2_lo || c == Conversion::f16x2_e4m3x2_hi
                                                 ? DType::fp8_e4m3
                                                 : DType::fp8_e5m2;
                        const int shift = c == Conversion::f16x2_e4m3x2_hi || c == Conversion::f16x2_e5m2x2_hi ? 16 : 0;
                        for_lanes(result, [&](int l) {
                            const std::uint32_t pair = a[l] >> shift;
                            auto half = [&](int byte) {
                                const float v = fp8_decode(static_cast<std::uint8_t>(pair >> (8 * byte)), format, fp8_encoding_);
                                return static_cast<std::uint32_t>(narrow_from_float(v, MmaType::f16));
                            };
                            return half(0) | half(1) << 16;
                        });
                        break;
                    }
                    case Conversion::e4m3x2_f32:
                    case Conversion::e5m2x2_f32: {
                        // PTX: a in the upper byte, b in the lower; nearest even, finite saturation.
                        const std::uint32_t* b = fetch(in.src[1], w, s1);
                        const DType format = static_cast<Conversion>(in.modifier) == Conversion::e4m3x2_f32
                                                 ? DType::fp8_e4m3
                                                 : DType::fp8_e5m2;
                        for_lanes(result, [&](int l) {
                            const std::uint32_t hi = fp8_encode(as_float(a[l]), format, Fp8Overflow::saturate, fp8_encoding_);
                            const std::uint32_t lo = fp8_encode(as_float(b[l]), format, Fp8Overflow::saturate, fp8_encoding_);
                            return hi << 8 | lo;
                        });
                        break;
                    }
                }
                break;
            }
            case Opcode::ld_global:
            case Opcode::st_global:
            case Opcode::ld_shared:
            case Opcode::st_shared: {
                const bool global = in.op == Opcode::ld_global || in.op == Opcode::st_global;
                const bool load = in.op == Opcode::ld_global || in.op == Opcode::ld_shared;
                const std::uint32_t* base = fetch(in.src[0], w, s0);
                const std::uint32_t* value = load ? nullptr : fetch(in.src[1], w, s1);
                std::uint8_t* bytes = global ? memory_.data() : block.shared.data();
                const std::size_t size = global ? memory_.size() : block.shared.size();
                const bool move_data = !(skip_fp_payload_ && in.payload_data);
                // Each lane moves `words` consecutive 32-bit words from an address aligned to
                // their total size (4, 8 or 16 bytes).
                const std::uint32_t words = in.vector;
                const std::uint32_t access_bytes = 4u * words, align_mask = access_bytes - 1u;
                // Addresses of all 32 lanes in one branch-free pass (the timing model reads only
                // the executed lanes'); a bad executed lane is looked for again only to name it.
                // "address + bytes > size" is "address > size - bytes" (clamped to 32 bits) in
                // 32-bit lanes, which SSE2 vectorizes.
                const std::uint32_t last_word =
                    size >= access_bytes ? static_cast<std::uint32_t>(std::min<std::size_t>(size - access_bytes, 0xffffffffu)) : 0;
                std::uint32_t bad = size >= access_bytes ? 0u : 1u;
                // Global addresses below kNullBytes are never allocated: a null pointer (or an
                // offset from one) faults, as a load or store on an invalid address does in CUDA.
                const std::uint32_t first_valid = global ? static_cast<std::uint32_t>(GlobalMemory::kNullBytes) : 0u;
                const auto offset = static_cast<std::uint32_t>(in.offset);
                for (int l = 0; l < 32; ++l) r.addresses[static_cast<std::size_t>(l)] = base[l] + offset;
                if (exec == 0xffffffffu) {
                    for (int l = 0; l < 32; ++l) {
                        const std::uint32_t address = r.addresses[static_cast<std::size_t>(l)];
                        bad |= static_cast<std::uint32_t>((address & align_mask) != 0) | static_cast<std::uint32_t>(address > last_word) |
                               static_cast<std::uint32_t>(address < first_valid);
                    }
                } else {
                    for (int l = 0; l < 32; ++l) {
                        const std::uint32_t address = r.addresses[static_cast<std::size_t>(l)];
                        bad |= (static_cast<std::uint32_t>((address & align_mask) != 0) | static_cast<std::uint32_t>(address > last_word) |
                                static_cast<std::uint32_t>(address < first_valid)) &
                               ((exec >> l) & 1u);
                    }
                }
                if (bad)
                    for (int l = 0; l < 32; ++l) {
                        const std::uint32_t address = r.addresses[static_cast<std::size_t>(l)];
                        if (((exec >> l) & 1) && address < first_valid)
                            fault(in, "lane " + std::to_string(l) + " address " + std::to_string(address) +
                                          " is a null pointer (global addresses below " + std::to_string(first_valid) +
                                          " are never allocated)");
                        if (((exec >> l) & 1) && ((address & align_mask) != 0 || static_cast<std::size_t>(address) + access_bytes > size))
                            fault(in, "lane " + std::to_string(l) + " address " + std::to_string(address) +
                                          ((address & align_mask) ? " is not " + std::to_string(access_bytes) + "-byte aligned"
                                                                  : " is outside the " + std::string(global ? "global" : "shared") +
                                                                        " memory of " + std::to_string(size) + " bytes"));
                    }
                if (!move_data) {
                    write_result = false;
                    break;
                }
                if (words == 1) {
                    for (int l = 0; l < 32; ++l) {
                        if (!((exec >> l) & 1)) continue;
                        const std::uint32_t address = r.addresses[static_cast<std::size_t>(l)];
                        if (load) std::memcpy(&result[l], bytes + address, 4);
                        else std::memcpy(bytes + address, &value[l], 4);
                    }
                    break;
                }
                // Vector: register i of the range holds word i; written in place (write_result off).
                write_result = false;
                const std::uint32_t first = load ? in.dst.value : in.src[1].value;
                for (int l = 0; l < 32; ++l) {
                    if (!((exec >> l) & 1)) continue;
                    std::uint8_t* p = bytes + r.addresses[static_cast<std::size_t>(l)];
                    for (std::uint32_t i = 0; i < words; ++i) {
                        std::uint32_t& reg = w.regs[static_cast<std::size_t>(first + i) * 32 + static_cast<std::size_t>(l)];
                        if (load) std::memcpy(&reg, p + 4 * i, 4);
                        else std::memcpy(p + 4 * i, &reg, 4);
                    }
                }
                break;
            }
            case Opcode::mma:  // all 32 lanes: checked above
                execute_mma(in, w);
                write_result = false;
                break;
            case Opcode::wgmma_mma:
                execute_wgmma(in, w, block);
                write_result = false;
                break;
            case Opcode::mbarrier_init:
            case Opcode::mbarrier_arrive:
            case Opcode::mbarrier_arrive_remote:
            case Opcode::mbarrier_expect_tx:
            case Opcode::tma_load:
                execute_async(in, w, block, exec, r);
                write_result = false;
                break;
            case Opcode::mbarrier_wait: {
                // Timed runs issue it only once satisfied (SmCore); the functional runner retries.
                bool satisfied = true;
                mbarrier_waited(w, block, in, satisfied);
                if (!satisfied) next_pc = pc;
                write_result = false;
                break;
            }            case Opcode::wgmma_fence:
            case Opcode::wgmma_commit:
            case Opcode::wgmma_wait:  // ordering only: the values are computed at issue
            case Opcode::bar:
            case Opcode::bra:
            case Opcode::exit:
            case Opcode::nop:
                break;
        }
    }
    if (write_result) {
        if (exec == 0xffffffffu) std::memcpy(dst, result, sizeof(result));
        else for (int l = 0; l < 32; ++l) dst[l] = ((exec >> l) & 1) ? result[l] : dst[l];
    }

    // SIMT stack update. `top` is still valid: nothing above pushed or popped yet.
    switch (in.op) {
        case Opcode::bra: {
            const std::uint32_t taken = exec;
            const std::uint32_t fallthrough = active & ~taken;
            if (taken == active) {
                next_pc = in.target;
                r.redirected = true;
                if (pc == counted_back_edge_) ++w.trips;
            } else if (taken != 0) {
                // Divergence: the lanes meet again at the immediate post-dominator `rpc`. The
                // current entry waits there, unless it already is a path that ends at rpc (a loop
                // back-edge): then it is replaced, so loops do not grow the stack. A path that
                // starts at rpc needs no entry. The taken path runs first.
                const std::int32_t rpc = in.reconverge;
                if (top.reconverge == rpc) w.stack.pop_back();
                else top.pc = rpc;
                if (pc + 1 != rpc) w.stack.push_back({pc + 1, rpc, fallthrough});
                if (in.target != rpc) w.stack.push_back({in.target, rpc, taken});
                r.redirected = true;
                next_pc = -1;
            }
            break;
        }
        case Opcode::exit: {
            w.live &= ~exec;
            for (StackEntry& e : w.stack) e.mask &= ~exec;
            break;
        }
        case Opcode::bar:
            if (exec != 0) {
                r.barrier = true;
                w.at_barrier = true;
                ++block.arrived;
            }
            break;
        default: break;
    }
    if (next_pc >= 0) w.stack.back().pc = next_pc;
    // Pop entries that reached their reconvergence point or lost all their lanes.
    const int end = static_cast<int>(kernel_.code.size());
    while (!w.stack.empty()) {
        const StackEntry& t = w.stack.back();
        if (t.mask == 0 || (t.reconverge >= 0 && t.pc == t.reconverge) || t.pc >= end) {
            if (t.mask != 0 && t.pc >= end && t.reconverge < 0) {
                // Fell off the end of the kernel: those lanes exit.
                const std::uint32_t gone = t.mask;
                w.live &= ~gone;
                for (StackEntry& e : w.stack) e.mask &= ~gone;
            }
            w.stack.pop_back();
            r.redirected = true;
        } else {
            break;
        }
    }
    if (w.stack.empty() || w.live == 0) {
        w.finished = true;
        r.warp_finished = true;
        w.stack.clear();
    }
}

void WarpExecutor::execute_mma(const Instruction& in, Warp& w) {
    // PTX mma.m16n8k16 fragment layout (row-major A, column-major B), groupID g = lane / 4 and
    // t = lane % 4; each 32-bit register holds two 16-bit values, the lower-indexed in the low half.
    //   A 16x16: a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
    //   B 16x8:  b0 (k=2t..2t+1, n=g)  b1 (k=2t+8.., n=g)
    //   C/D 16x8 fp32: c0,c1 (g, 2t, 2t+1)  c2,c3 (g+8, 2t, 2t+1)
    const auto type = static_cast<MmaType>(in.modifier);
    if (is_k32(type)) {
        execute_mma_k32(in, w);
        return;
    }
    float a[16][16], b[16][8], c[16][8];
    auto reg = [&](std::uint32_t r, int lane) { return w.regs[static_cast<std::size_t>(r) * 32 + static_cast<std::size_t>(lane)]; };
    const std::uint32_t ra = in.src[0].value, rb = in.src[1].value, rc = in.src[2].value, rd = in.dst.value;
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 4; ++i) {
            const std::uint32_t v = reg(ra + static_cast<std::uint32_t>(i), lane);
            const int row = g + ((i & 1) ? 8 : 0), col = 2 * t + ((i & 2) ? 8 : 0);
            a[row][col] = narrow_to_float(static_cast<std::uint16_t>(v & 0xffff), type);
            a[row][col + 1] = narrow_to_float(static_cast<std::uint16_t>(v >> 16), type);
        }
        for (int i = 0; i < 2; ++i) {
            const std::uint32_t v = reg(rb + static_cast<std::uint32_t>(i), lane);
            const int k = 2 * t + (i ? 8 : 0);
            b[k][g] = narrow_to_float(static_cast<std::uint16_t>(v & 0xffff), type);
            b[k + 1][g] = narrow_to_float(static_cast<std::uint16_t>(v >> 16), type);
        }
        for (int i = 0; i < 4; ++i) {
            const AccumulatorElement e = accumulator_element(lane, i);
            c[e.row][e.col] = as_float(reg(rc + static_cast<std::uint32_t>(i), lane));
        }
    }
    for (int row = 0; row < 16; ++row)
        for (int col = 0; col < 8; ++col) {
            float acc = c[row][col];
            for (int k = 0; k < 16; ++k) acc += a[row][k] * b[k][col];  // products exact in fp32
            c[row][col] = acc;
        }
    for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 4; ++i) {
            const AccumulatorElement e = accumulator_element(lane, i);
            w.regs[static_cast<std::size_t>(rd + static_cast<std::uint32_t>(i)) * 32 + static_cast<std::size_t>(lane)] =
                as_bits(c[e.row][e.col]);
        }
}

void WarpExecutor::execute_mma_k32(const Instruction& in, Warp& w) {
    // PTX ISA 9.7.14.5.10, "Matrix Fragments for mma.m16n8k32": one layout for the 8-bit types
    // (.s8/.u8 with .s32 C and D; .e4m3/.e5m2 with .f32 C and D), g = lane / 4, t = lane % 4; each
    // 32-bit register of A and B holds four 8-bit values, the lower-indexed in the lower byte:
    //   A 16x32: a0..a3 (g, 4t..4t+3)  a4..a7 (g+8, 4t..)  a8..a11 (g, 4t+16..)  a12..a15 (g+8, 4t+16..)
    //   B 32x8:  b0..b3 (k=4t..4t+3, n=g)  b4..b7 (k=4t+16.., n=g)
    //   C/D 16x8 (s32 or f32): c0,c1 (g, 2t, 2t+1)  c2,c3 (g+8, 2t, 2t+1)
    // s8: exact integer accumulation; without .satfinite a sum beyond int32 wraps (two's complement).
    // e4m3/e5m2 (A's and B's types may differ): each product of two fp8 values is exact in fp32 (at
    // most 4 x 4 significant bits, exponents within fp32's normal range), summed into the fp32
    // accumulator in k order.
    const auto type = static_cast<MmaType>(in.modifier), b_type = static_cast<MmaType>(in.b_type);
    std::uint8_t a[16][32], b[32][8];
    std::uint32_t c[16][8];
    auto reg = [&](std::uint32_t r, int lane) { return w.regs[static_cast<std::size_t>(r) * 32 + static_cast<std::size_t>(lane)]; };
    auto byte = [](std::uint32_t v, int i) { return static_cast<std::uint8_t>(v >> (8 * i)); };
    const std::uint32_t ra = in.src[0].value, rb = in.src[1].value, rc = in.src[2].value, rd = in.dst.value;
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 4; ++i) {
            const std::uint32_t v = reg(ra + static_cast<std::uint32_t>(i), lane);
            const int row = g + ((i & 1) ? 8 : 0), col = 4 * t + ((i & 2) ? 16 : 0);
            for (int e = 0; e < 4; ++e) a[row][col + e] = byte(v, e);
        }
        for (int i = 0; i < 2; ++i) {
            const std::uint32_t v = reg(rb + static_cast<std::uint32_t>(i), lane);
            const int k = 4 * t + (i ? 16 : 0);
            for (int e = 0; e < 4; ++e) b[k + e][g] = byte(v, e);
        }
        for (int i = 0; i < 4; ++i) c[g + (i >= 2 ? 8 : 0)][2 * t + (i & 1)] = reg(rc + static_cast<std::uint32_t>(i), lane);
    }
    if (type == MmaType::s8) {
        for (int row = 0; row < 16; ++row)
            for (int col = 0; col < 8; ++col) {
                std::uint32_t acc = c[row][col];  // unsigned: wrapping is defined
                for (int k = 0; k < 32; ++k)
                    acc += static_cast<std::uint32_t>(static_cast<std::int8_t>(a[row][k]) * static_cast<std::int8_t>(b[k][col]));
                c[row][col] = acc;
            }
    } else {
        float fa[16][32], fb[32][8];
        for (int row = 0; row < 16; ++row)
            for (int k = 0; k < 32; ++k) fa[row][k] = fp8_operand(a[row][k], type);
        for (int k = 0; k < 32; ++k)
            for (int col = 0; col < 8; ++col) fb[k][col] = fp8_operand(b[k][col], b_type);
        for (int row = 0; row < 16; ++row)
            for (int col = 0; col < 8; ++col) {
                float acc = as_float(c[row][col]);
                for (int k = 0; k < 32; ++k) acc += fa[row][k] * fb[k][col];
                c[row][col] = as_bits(acc);
            }
    }
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 4; ++i)
            w.regs[static_cast<std::size_t>(rd + static_cast<std::uint32_t>(i)) * 32 + static_cast<std::size_t>(lane)] =
                c[g + (i >= 2 ? 8 : 0)][2 * t + (i & 1)];
    }
}

float WarpExecutor::fp8_operand(std::uint8_t code, MmaType type) const {
    return fp8_decode(code, type == MmaType::e4m3 ? DType::fp8_e4m3 : DType::fp8_e5m2, fp8_encoding_);
}

bool Block::mbarrier_update(std::uint32_t address, std::int64_t arrivals, std::int64_t tx_bytes, std::uint64_t time) {
    Mbarrier* m = mbarrier(address);
    if (!m) return false;
    m->pending -= arrivals;
    m->tx += tx_bytes;
    m->phase_time = std::max(m->phase_time, time);
    // PTX ISA 9.7.13.15.4 (phase completion): every arrival and every expected byte seen; the
    // next phase starts with the full arrival count. Several arrivals at once (a warp's lanes
    // arriving remotely, delivered as one event) complete the phases they would one by one.
    bool completed = false;
    while (m->pending <= 0 && m->tx == 0) {
        ++m->phase;
        m->pending += m->expected;
        m->completed_at = m->phase_time;
        ++mbarrier_phases;
        completed = true;
    }
    if (completed) m->phase_time = 0;
    return true;
}

std::uint32_t WarpExecutor::shared_operand(const Instruction& in, const Warp& w, int lane, std::uint32_t bytes,
                                           const Block& block) const {
    std::uint32_t scratch[32];
    const std::uint32_t address = fetch(in.src[0], w, scratch)[lane] + static_cast<std::uint32_t>(in.offset);
    if (static_cast<std::size_t>(address) + bytes > block.shared.size() || address % bytes != 0)
        fault(in, "lane " + std::to_string(lane) + " shared address " + std::to_string(address) +
                      (address % bytes ? " is not " + std::to_string(bytes) + "-byte aligned"
                                       : " is outside the shared memory of " + std::to_string(block.shared.size()) + " bytes"));
    return address;
}

const Mbarrier* WarpExecutor::mbarrier_waited(const Warp& w, Block& block, const Instruction& in, bool& satisfied) const {
    const std::uint32_t active = w.stack.back().mask;
    std::uint32_t exec = active;
    if (in.guard >= 0) {
        const std::uint32_t p = w.preds[static_cast<std::size_t>(in.guard)];
        exec &= in.guard_negated ? ~p : p;
    }
    satisfied = true;
    if (exec == 0) return nullptr;
    const int lane = __builtin_ctz(exec);
    const std::uint32_t address = shared_operand(in, w, lane, 8, block);
    std::uint32_t scratch[32];
    const std::uint32_t parity = fetch(in.src[1], w, scratch)[lane] & 1u;
    const Mbarrier* m = block.mbarrier(address);
    if (!m) fault(in, "no mbarrier was initialized at shared address " + std::to_string(address));
    // PTX try_wait.parity: waits while the current (incomplete) phase has the given parity.
    satisfied = (m->phase & 1u) != parity;
    return m;
}

void WarpExecutor::set_resident(std::uint32_t block_id, Block* block) {
    if (kernel_.cluster <= 1) return;
    if (resident_.size() < dims_.grid) resident_.assign(dims_.grid, nullptr);
    resident_[block_id] = block;
}

Block& WarpExecutor::cluster_peer(const Instruction& in, const Warp& w, std::uint32_t rank) const {
    const auto size = static_cast<std::uint32_t>(kernel_.cluster);
    if (rank >= size) fault(in, "cluster rank " + std::to_string(rank) + " is not below the cluster size " + std::to_string(size));
    const std::uint32_t id = w.block_id / size * size + rank;
    Block* peer = resident(id);
    if (!peer) fault(in, "block " + std::to_string(id) + " of the cluster is not resident (a kernel without .cluster?)");
    return *peer;
}

void WarpExecutor::execute_async(const Instruction& in, Warp& w, Block& block, std::uint32_t exec, StepResult& r) {
    std::uint32_t scratch1[32], scratch2[32], scratch3[32];
    r.remote_arrivals = 0;
    if (in.op == Opcode::tma_load) {
        // PTX cp.async.bulk.tensor is issued by one thread: several lanes would be several copies.
        if (__builtin_popcount(exec) != 1)
            fault(in, "is issued by one lane (guard it), " + std::to_string(__builtin_popcount(exec)) + " lanes execute it");
        const int lane = __builtin_ctz(exec);
        const std::uint32_t bytes = static_cast<std::uint32_t>(in.box_rows) * in.box_row_bytes;
        // PTX: the shared destination of a bulk tensor copy is 128-byte aligned.
        std::uint32_t scratch0[32];
        const std::uint32_t dst = fetch(in.src[0], w, scratch0)[lane] + static_cast<std::uint32_t>(in.offset);
        if (dst % 128 != 0 || static_cast<std::size_t>(dst) + bytes > block.shared.size())
            fault(in, "shared destination " + std::to_string(dst) + (dst % 128 ? " is not 128-byte aligned" :
                      " + " + std::to_string(bytes) + " bytes is outside the shared memory of " + std::to_string(block.shared.size()) + " bytes"));
        r.tma_row_starts = nullptr;
        if (in.modifier & kTmaIm2col) return execute_tma_im2col(in, w, block, lane, dst, r);
        const std::uint32_t src = fetch(in.src[1], w, scratch1)[lane];
        const std::uint32_t pitch = fetch(in.src[2], w, scratch2)[lane];
        const std::uint32_t mbar = fetch(in.src[3], w, scratch3)[lane];
        // The bounded form: the tensor's rows and bytes per row from src on (signed; none when <= 0).
        std::uint32_t rows = in.box_rows, row_bytes = in.box_row_bytes;
        if (in.modifier & kTmaBounded) {
            std::uint32_t scratch4[32], scratch5[32];
            const auto rows_in = static_cast<std::int32_t>(fetch(in.src[4], w, scratch4)[lane]);
            const auto bytes_in = static_cast<std::int32_t>(fetch(in.src[5], w, scratch5)[lane]);
            rows = static_cast<std::uint32_t>(std::clamp<std::int32_t>(rows_in, 0, in.box_rows));
            row_bytes = static_cast<std::uint32_t>(std::clamp<std::int32_t>(bytes_in, 0, in.box_row_bytes));
            if (rows == 0 || row_bytes == 0) rows = row_bytes = 0;
        }
        // Only the part inside the tensor is read: it must lie in global memory.
        const std::uint64_t last = rows == 0 ? src : static_cast<std::uint64_t>(src) + static_cast<std::uint64_t>(pitch) * (rows - 1u) + row_bytes;
        if (src % 16 != 0 || pitch % 16 != 0 || src < GlobalMemory::kNullBytes || last > memory_.size())
            fault(in, "global box at " + std::to_string(src) + " (pitch " + std::to_string(pitch) + ", " +
                          std::to_string(rows) + " rows of " + std::to_string(row_bytes) +
                          " bytes) is misaligned (16 bytes) or outside the global memory of " + std::to_string(memory_.size()) + " bytes");
        // .multicast: the same box lands at the same offsets in every block of the cluster.
        const bool multicast = (in.modifier & kTmaMulticast) != 0;
        const std::uint32_t copies = multicast ? static_cast<std::uint32_t>(kernel_.cluster) : 1u;
        for (std::uint32_t rank = 0; rank < copies; ++rank) {
            Block& target = multicast ? cluster_peer(in, w, rank) : block;
            // A peer's barrier is checked when the bytes arrive (timed runs: SmCore).
            if ((&target == &block || !timed_) && !target.mbarrier(mbar))
                fault(in, "no mbarrier was initialized at shared address " + std::to_string(mbar) + " of cluster rank " +
                              std::to_string(rank));
            if (!(skip_fp_payload_ && in.payload_data))
                for (std::uint32_t row = 0; row < in.box_rows; ++row) {
                    std::uint8_t* to = target.shared.data() + dst + row * in.box_row_bytes;
                    const std::uint32_t inside = row < rows ? row_bytes : 0;
                    if (inside) std::memcpy(to, memory_.data() + src + row * pitch, inside);
                    std::memset(to + inside, 0, in.box_row_bytes - inside);  // outside the tensor: zeros
                }
            // Functional runs: the bytes are there at once. Timed runs complete them on arrival.
            if (!timed_) target.mbarrier_update(mbar, 0, -static_cast<std::int64_t>(bytes), 0);
        }
        r.tma_global = src;
        r.tma_pitch = pitch;
        r.tma_rows = rows;
        r.tma_row_bytes = row_bytes;
        r.tma_shared = dst;
        r.tma_mbarrier = mbar;
        return;
    }
    for (int lane = 0; lane < 32; ++lane) {
        if (!((exec >> lane) & 1)) continue;
        const std::uint32_t address = shared_operand(in, w, lane, 8, block);
        if (in.op == Opcode::mbarrier_init) {
            const std::uint32_t count = fetch(in.src[1], w, scratch1)[lane];
            if (count < 1 || count > (1u << 20)) fault(in, "arrival count " + std::to_string(count) + " is not in 1..2^20");
            Mbarrier* m = block.mbarrier(address);
            if (!m) {
                block.mbarriers.emplace_back();
                m = &block.mbarriers.back();
            }
            *m = Mbarrier{address, count, count, 0, 0, 0, 0};
            continue;
        }
        if (in.op == Opcode::mbarrier_arrive_remote) {
            const std::uint32_t rank = fetch(in.src[1], w, scratch1)[lane];
            Block& peer = cluster_peer(in, w, rank);
            if (!timed_ && !peer.mbarrier(address))  // timed runs: checked on arrival (SmCore)
                fault(in, "no mbarrier was initialized at shared address " + std::to_string(address) + " of cluster rank " +
                              std::to_string(rank));
            // Timed runs: the SM core delivers the arrival over the cluster's network.
            if (!timed_) peer.mbarrier_update(address, 1, 0, 0);
            r.remote_block = peer.block_id;
            r.remote_mbarrier = address;
            ++r.remote_arrivals;
            continue;
        }
        const std::int64_t tx = in.op == Opcode::mbarrier_expect_tx ? fetch(in.src[1], w, scratch1)[lane] : 0;
        if (!block.mbarrier_update(address, 1, tx, cycle_))
            fault(in, "no mbarrier was initialized at shared address " + std::to_string(address));
    }
}

void WarpExecutor::execute_tma_im2col(const Instruction& in, Warp& w, Block& block, int lane, std::uint32_t dst,
                                      StepResult& r) {
    // PTX's .im2col mode (PTX ISA 9.7.9.25; the tensor map as cuTensorMapEncodeIm2col describes
    // it): box row i is output pixel `pixel` + i of the convolution, read at the input pixel its
    // filter tap (r, s) lands on, channel_bytes on; a tap in the padding or a pixel past the last
    // is a row of zeros (TMA's out-of-bounds fill) that reads nothing.
    std::uint32_t s1[32], s2[32], s3[32], s4[32], s5[32];
    const std::uint32_t map = fetch(in.src[1], w, s1)[lane], mbar = fetch(in.src[2], w, s2)[lane];
    const std::uint32_t pixel = fetch(in.src[3], w, s3)[lane], channel_bytes = fetch(in.src[4], w, s4)[lane];
    const std::uint32_t offsets = fetch(in.src[5], w, s5)[lane];
    if (map % 64 != 0 || map < GlobalMemory::kNullBytes || static_cast<std::size_t>(map) + 4u * kIm2colWords > memory_.size())
        fault(in, "tensor map at " + std::to_string(map) + " is not 64-byte aligned or outside the global memory");
    std::int64_t word[kIm2colWords];
    for (int i = 0; i < kIm2colWords; ++i) word[i] = memory_.load32(map + 4u * static_cast<std::uint32_t>(i));
    const std::int64_t images = word[kIm2colImages], height = word[kIm2colHeight], width = word[kIm2colWidth];
    const std::int64_t pitch = word[kIm2colPixelBytes], out_h = word[kIm2colOutHeight], out_w = word[kIm2colOutWidth];
    const std::int64_t tap_r = offsets >> 16, tap_s = offsets & 0xffff;
    const std::int64_t base = word[kIm2colBase];
    if (pitch % 16 != 0 || base % 16 != 0 || channel_bytes % 16 != 0 || channel_bytes + in.box_row_bytes > pitch ||
        out_h < 1 || out_w < 1 || base + images * height * width * pitch > static_cast<std::int64_t>(memory_.size()))
        fault(in, "tensor map at " + std::to_string(map) + ": the box's " + std::to_string(in.box_row_bytes) + " bytes from channel byte " +
                      std::to_string(channel_bytes) + " leave the pixel's " + std::to_string(pitch) +
                      " bytes, or the tensor is misaligned (16 bytes) or outside the global memory");
    const std::int64_t pixels = images * out_h * out_w;
    std::uint32_t rows_read = 0;
    for (std::uint32_t row = 0; row < in.box_rows; ++row) {
        const std::int64_t q = static_cast<std::int64_t>(pixel) + row;
        std::uint32_t start = 0;
        if (q < pixels) {
            const std::int64_t n = q / (out_h * out_w), oy = q / out_w % out_h, ox = q % out_w;
            const std::int64_t iy = oy * word[kIm2colStrideH] - word[kIm2colPadH] + tap_r * word[kIm2colDilationH];
            const std::int64_t ix = ox * word[kIm2colStrideW] - word[kIm2colPadW] + tap_s * word[kIm2colDilationW];
            if (iy >= 0 && iy < height && ix >= 0 && ix < width) {
                start = static_cast<std::uint32_t>(base + ((n * height + iy) * width + ix) * pitch + channel_bytes);
                ++rows_read;
            }
        }
        im2col_rows_[row] = start;
    }
    if (!block.mbarrier(mbar)) fault(in, "no mbarrier was initialized at shared address " + std::to_string(mbar));
    if (!(skip_fp_payload_ && in.payload_data))
        for (std::uint32_t row = 0; row < in.box_rows; ++row) {
            std::uint8_t* to = block.shared.data() + dst + row * in.box_row_bytes;
            if (im2col_rows_[row] != 0) std::memcpy(to, memory_.data() + im2col_rows_[row], in.box_row_bytes);
            else std::memset(to, 0, in.box_row_bytes);
        }
    const std::uint32_t bytes = static_cast<std::uint32_t>(in.box_rows) * in.box_row_bytes;
    if (!timed_) block.mbarrier_update(mbar, 0, -static_cast<std::int64_t>(bytes), 0);
    r.tma_global = 0;
    r.tma_pitch = 0;
    r.tma_rows = in.box_rows;
    r.tma_row_bytes = rows_read > 0 ? in.box_row_bytes : 0;
    r.tma_row_starts = im2col_rows_.data();
    r.tma_shared = dst;
    r.tma_mbarrier = mbar;
}

void WarpExecutor::execute_wgmma(const Instruction& in, Warp& w, const Block& block) {
    // PTX ISA 9.7.15.5 (wgmma.mma_async), D (64 x N, fp32) += A (64 x 16) * B (16 x N). Warp q of
    // the warpgroup holds rows 16q..16q+15 of D in the m16n8 accumulator layout, one 8-column
    // group per 4 registers: register 4j+i of lane (g, t) is (16q + g + 8 (i >= 2), 8j + 2t + (i & 1)).
    // Operands in shared memory (a simplified descriptor: base address and row pitch, no swizzle):
    // A(m, k) at a + m * a_pitch + 2k (K-major), B(k, n) at b + k * b_pitch + 2n (N-major, PTX's
    // imm-trans-b = 1) or, with imm-trans-b = 0, at b + n * b_pitch + 2k (K-major).
    const auto type = static_cast<MmaType>(in.modifier);
    if (is_k32(type)) return execute_wgmma_k32(in, w, block);
    const int n_dim = in.wgmma_n;
    const bool b_n_major = in.wgmma_trans_b;
    std::uint32_t scratch_a[32], scratch_b[32];
    const std::uint32_t a = fetch(in.src[0], w, scratch_a)[0], b = fetch(in.src[1], w, scratch_b)[0];
    const std::size_t a_end = static_cast<std::size_t>(a) + 63u * in.a_pitch + 32u;
    const std::size_t b_end = b_n_major ? static_cast<std::size_t>(b) + 15u * in.b_pitch + 2u * static_cast<std::size_t>(n_dim)
                                        : static_cast<std::size_t>(b) + static_cast<std::size_t>(n_dim - 1) * in.b_pitch + 32u;
    if (a % 16 != 0 || b % 16 != 0 || a_end > block.shared.size() || b_end > block.shared.size())
        fault(in, "operands at shared " + std::to_string(a) + " / " + std::to_string(b) +
                      " are not 16-byte aligned or reach beyond the shared memory of " + std::to_string(block.shared.size()) + " bytes");
    const int q = w.warp_in_block % 4;
    auto element = [&](std::size_t address) {
        std::uint16_t bits;
        std::memcpy(&bits, block.shared.data() + address, 2);
        return narrow_to_float(bits, type);
    };
    float a_rows[16][16];
    for (int m = 0; m < 16; ++m)
        for (int k = 0; k < 16; ++k)
            a_rows[m][k] = element(a + static_cast<std::size_t>(16 * q + m) * in.a_pitch + 2u * static_cast<std::size_t>(k));
    std::vector<float> b_tile(static_cast<std::size_t>(16 * n_dim));
    for (int k = 0; k < 16; ++k)
        for (int col = 0; col < n_dim; ++col)
            b_tile[static_cast<std::size_t>(k * n_dim + col)] =
                b_n_major ? element(b + static_cast<std::size_t>(k) * in.b_pitch + 2u * static_cast<std::size_t>(col))
                          : element(b + static_cast<std::size_t>(col) * in.b_pitch + 2u * static_cast<std::size_t>(k));
    const std::uint32_t rd = in.dst.value;
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        for (int j = 0; j < n_dim / 8; ++j)
            for (int i = 0; i < 4; ++i) {
                const int row = g + (i >= 2 ? 8 : 0), col = 8 * j + 2 * t + (i & 1);
                std::uint32_t& reg = w.regs[static_cast<std::size_t>(rd + static_cast<std::uint32_t>(4 * j + i)) * 32 +
                                            static_cast<std::size_t>(lane)];
                float acc = as_float(reg);
                for (int k = 0; k < 16; ++k) acc += a_rows[row][k] * b_tile[static_cast<std::size_t>(k * n_dim + col)];
                reg = as_bits(acc);
            }
    }
}

void WarpExecutor::execute_wgmma_k32(const Instruction& in, Warp& w, const Block& block) {
    // PTX ISA 9.7.15.5 (wgmma.mma_async), the 8-bit forms: D (64 x N) += A (64 x 32) * B (32 x N),
    // fp8 (.e4m3 / .e5m2, A's and B's types independent) into fp32, .s8 x .s8 into s32. D in
    // registers as for k16 (execute_wgmma). PTX 9.7.15.5.1: the transpose flags exist for .f16 /
    // .bf16 only, so both 8-bit operands are K-major in shared memory: A(m, k) at a + m * a_pitch + k,
    // B(k, n) at b + n * b_pitch + k (B stored as N rows of K bytes).
    // Arithmetic as mma.m16n8k32 (execute_mma_k32): s8 exact with two's-complement wrapping;
    // fp8 products exact in fp32, summed into the fp32 accumulator in k order.
    const auto a_type = static_cast<MmaType>(in.modifier), b_type = static_cast<MmaType>(in.b_type);
    const int n_dim = in.wgmma_n;
    std::uint32_t scratch_a[32], scratch_b[32];
    const std::uint32_t a = fetch(in.src[0], w, scratch_a)[0], b = fetch(in.src[1], w, scratch_b)[0];
    const std::size_t a_end = static_cast<std::size_t>(a) + 63u * in.a_pitch + 32u;
    const std::size_t b_end = static_cast<std::size_t>(b) + static_cast<std::size_t>(n_dim - 1) * in.b_pitch + 32u;
    if (a % 16 != 0 || b % 16 != 0 || a_end > block.shared.size() || b_end > block.shared.size())
        fault(in, "operands at shared " + std::to_string(a) + " / " + std::to_string(b) +
                      " are not 16-byte aligned or reach beyond the shared memory of " + std::to_string(block.shared.size()) + " bytes");
    const int q = w.warp_in_block % 4;
    const std::uint8_t* smem = block.shared.data();
    auto a_byte = [&](int m, int k) { return smem[a + static_cast<std::size_t>(16 * q + m) * in.a_pitch + static_cast<std::size_t>(k)]; };
    auto b_byte = [&](int k, int col) { return smem[b + static_cast<std::size_t>(col) * in.b_pitch + static_cast<std::size_t>(k)]; };
    const std::uint32_t rd = in.dst.value;
    auto accumulator = [&](int lane, int j, int i) -> std::uint32_t& {
        return w.regs[static_cast<std::size_t>(rd + static_cast<std::uint32_t>(4 * j + i)) * 32 + static_cast<std::size_t>(lane)];
    };
    if (a_type == MmaType::s8) {
        std::int32_t a_rows[16][32];
        for (int m = 0; m < 16; ++m)
            for (int k = 0; k < 32; ++k) a_rows[m][k] = static_cast<std::int8_t>(a_byte(m, k));
        std::vector<std::int32_t> b_cols(static_cast<std::size_t>(32 * n_dim));  // column-major: B(., col) contiguous
        for (int col = 0; col < n_dim; ++col)
            for (int k = 0; k < 32; ++k) b_cols[static_cast<std::size_t>(col * 32 + k)] = static_cast<std::int8_t>(b_byte(k, col));
        for (int lane = 0; lane < 32; ++lane) {
            const int g = lane >> 2, t = lane & 3;
            for (int j = 0; j < n_dim / 8; ++j)
                for (int i = 0; i < 4; ++i) {
                    const int row = g + (i >= 2 ? 8 : 0), col = 8 * j + 2 * t + (i & 1);
                    std::uint32_t& reg = accumulator(lane, j, i);  // unsigned: wrapping is defined
                    for (int k = 0; k < 32; ++k)
                        reg += static_cast<std::uint32_t>(a_rows[row][k] * b_cols[static_cast<std::size_t>(col * 32 + k)]);
                }
        }
        return;
    }
    // fp8: each operand's 256 codes decoded once (fp8_operand), then looked up.
    float a_values[256], b_values[256];
    for (int code = 0; code < 256; ++code) {
        a_values[code] = fp8_operand(static_cast<std::uint8_t>(code), a_type);
        b_values[code] = fp8_operand(static_cast<std::uint8_t>(code), b_type);
    }
    float a_rows[16][32];
    for (int m = 0; m < 16; ++m)
        for (int k = 0; k < 32; ++k) a_rows[m][k] = a_values[a_byte(m, k)];
    std::vector<float> b_cols(static_cast<std::size_t>(32 * n_dim));
    for (int col = 0; col < n_dim; ++col)
        for (int k = 0; k < 32; ++k) b_cols[static_cast<std::size_t>(col * 32 + k)] = b_values[b_byte(k, col)];
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        for (int j = 0; j < n_dim / 8; ++j)
            for (int i = 0; i < 4; ++i) {
                const int row = g + (i >= 2 ? 8 : 0), col = 8 * j + 2 * t + (i & 1);
                std::uint32_t& reg = accumulator(lane, j, i);
                float acc = as_float(reg);
                for (int k = 0; k < 32; ++k) acc += a_rows[row][k] * b_cols[static_cast<std::size_t>(col * 32 + k)];
                reg = as_bits(acc);
            }
    }
}

namespace {

// The 32-byte sectors one step's global accesses touch: a load's or store's executed lanes
// coalesced as the timed SM coalesces them, a TMA box's rows.
void report_sectors(const StepResult& r, const std::function<void(std::uint32_t, bool)>& on_sector) {
    const Opcode op = r.instruction->op;
    if ((op == Opcode::ld_global || op == Opcode::st_global) && r.executed != 0) {
        std::array<std::uint32_t, 32> sectors{};
        const int n = coalesce_sectors(r.addresses, r.executed, 32, sectors);
        for (int i = 0; i < n; ++i) on_sector(sectors[static_cast<std::size_t>(i)], op == Opcode::st_global);
    } else if (op == Opcode::tma_load && r.executed != 0) {
        for (std::uint32_t row = 0; row < r.tma_rows && r.tma_row_bytes > 0; ++row) {
            const std::uint32_t start = r.tma_row_starts ? r.tma_row_starts[row] : r.tma_global + row * r.tma_pitch;
            if (start == 0) continue;  // an im2col row of zeros reads nothing
            for (std::uint32_t s = start / 32; s <= (start + r.tma_row_bytes - 1) / 32; ++s) on_sector(s * 32, false);
        }
    }
}

// Blocks first .. first + count - 1 in groups of `together` (whole clusters; the last group may
// be smaller), one group after another; the warps of a group in round-robin order one instruction
// at a time, so its blocks progress side by side as resident blocks do. after_step sees each
// step's result.
void run_blocks(WarpExecutor& exec, std::uint32_t first_block, std::uint32_t count, std::uint32_t together,
                std::uint64_t max_issued, const std::function<void(const StepResult&)>& after_step) {
    const Kernel& kernel = exec.kernel();
    const Dim dims = exec.dims();
    const int warps_per_block = static_cast<int>((dims.block + 31) / 32);
    // A cluster's blocks run together (they may wait for each other).
    const auto cluster = static_cast<std::uint32_t>(kernel.cluster);
    if (dims.grid % cluster != 0)
        throw SimtError(kernel.file + ": grid of " + std::to_string(dims.grid) + " blocks is not a multiple of the cluster size " +
                        std::to_string(cluster));
    together = std::max(cluster, together / cluster * cluster);
    std::vector<Block> blocks;
    std::vector<Warp> warps;
    StepResult r;
    for (std::uint32_t first = first_block; first < first_block + count; first += together) {
        const std::uint32_t group = std::min(together, first_block + count - first);
        blocks.resize(group);
        warps.resize(static_cast<std::size_t>(warps_per_block) * group);
        int live_blocks = static_cast<int>(group);
        for (std::uint32_t c = 0; c < group; ++c) {
            Block& block = blocks[c];
            block.block_id = first + c;
            block.shared.assign(static_cast<std::size_t>(kernel.shared_bytes), 0);
            block.live_warps = warps_per_block;
            block.arrived = 0;
            block.mbarriers.clear();
            exec.set_resident(block.block_id, &block);
            for (int i = 0; i < warps_per_block; ++i)
                warps[c * static_cast<std::size_t>(warps_per_block) + static_cast<std::size_t>(i)].reset(
                    kernel.registers, block.block_id, i, dims.block, static_cast<int>(c));
        }
        while (live_blocks > 0) {
            bool progressed = false;
            for (Warp& w : warps) {
                Block& block = blocks[static_cast<std::size_t>(w.block_slot)];
                if (w.finished || w.at_barrier) continue;
                exec.step(w, block, r);
                if (after_step) after_step(r);
                progressed = true;
                if (r.warp_finished && --block.live_warps == 0) --live_blocks;
                if (block.live_warps > 0 && block.arrived == block.live_warps) {
                    for (int i = 0; i < warps_per_block; ++i)
                        warps[static_cast<std::size_t>(w.block_slot * warps_per_block + i)].at_barrier = false;
                    block.arrived = 0;
                }
            }
            if (!progressed) throw SimtError(kernel.file + ": block " + std::to_string(first) + " deadlocked at a barrier");
            if (exec.counters().issued > max_issued) {
                std::string where;
                for (const Warp& w : warps)
                    if (!w.finished) where += " block " + std::to_string(w.block_id) + " warp " + std::to_string(w.warp_in_block) +
                                              " at " + kernel.where(kernel.code[static_cast<std::size_t>(w.pc())]) + ";";
                throw SimtError(kernel.file + ": more than " + std::to_string(max_issued) +
                                " warp instructions issued: endless loop? Running:" + where);
            }
        }
        for (std::uint32_t c = 0; c < group; ++c) exec.set_resident(first + c, nullptr);
    }
}

}  // namespace

void advance_loop_trips(WarpExecutor& exec, Block& block, const std::vector<Warp*>& warps, std::uint32_t trips,
                        const std::function<void(std::uint32_t, bool)>& on_sector, std::uint64_t max_issued) {
    struct Target {
        std::uint32_t trips;
        int pc;
        bool at_barrier;
    };
    std::vector<Target> targets;
    targets.reserve(warps.size());
    for (const Warp* w : warps) targets.push_back({w->trips + trips, w->pc(), w->at_barrier});
    const auto arrived = [&](const Warp& w, const Target& t) {
        return w.trips == t.trips && w.pc() == t.pc && w.at_barrier == t.at_barrier;
    };
    const Kernel& kernel = exec.kernel();
    const std::uint64_t issued_before = exec.counters().issued;
    StepResult r;
    for (;;) {
        bool progressed = false, all_there = true;
        for (std::size_t i = 0; i < warps.size(); ++i) {
            Warp& w = *warps[i];
            if (w.finished)
                throw SimtError(kernel.file + ": loop-trip sampling: block " + std::to_string(block.block_id) + " warp " +
                                std::to_string(w.warp_in_block) + " finished before its trips were advanced");
            if (arrived(w, targets[i])) continue;
            all_there = false;
            if (w.at_barrier) continue;
            exec.step(w, block, r);
            if (on_sector) report_sectors(r, on_sector);
            progressed = true;
            if (w.trips > targets[i].trips)
                throw SimtError(kernel.file + ": loop-trip sampling: block " + std::to_string(block.block_id) + " warp " +
                                std::to_string(w.warp_in_block) + " passed its place in the loop");
            if (block.live_warps > 0 && block.arrived == block.live_warps) {
                for (Warp* each : warps) each->at_barrier = false;
                block.arrived = 0;
            }
        }
        if (all_there) return;
        if (!progressed)
            throw SimtError(kernel.file + ": loop-trip sampling: block " + std::to_string(block.block_id) +
                            " deadlocked at a barrier");
        if (exec.counters().issued - issued_before > max_issued)
            throw SimtError(kernel.file + ": loop-trip sampling: more than " + std::to_string(max_issued) +
                            " warp instructions advancing block " + std::to_string(block.block_id));
    }
}

ExecutionCounters run_functional(const Kernel& kernel, GlobalMemory& memory, Dim dims,
                                 const std::vector<std::uint32_t>& args, std::uint64_t max_issued) {
    WarpExecutor exec(kernel, memory, dims, args, false);
    run_blocks(exec, 0, dims.grid, 1, max_issued, nullptr);
    return exec.counters();
}

void run_blocks_untimed(const WarpExecutor& launch, std::uint32_t first, std::uint32_t count, std::uint32_t together,
                        const std::function<void(std::uint32_t, bool)>& on_sector, std::uint64_t max_issued) {
    WarpExecutor exec(launch.kernel(), launch.memory(), launch.dims(), launch.args(), launch.skips_fp_payload());
    exec.set_fp8_encoding(launch.fp8_encoding());
    run_blocks(exec, first, count, together, max_issued, [&](const StepResult& r) { report_sectors(r, on_sector); });
}

}  // namespace accelsim::simt
