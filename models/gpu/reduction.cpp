#include "models/gpu/reduction.h"
#include "models/gpu/gpu_stats.h"
#include "models/common/ceil_div.h"
#include "models/common/quantization.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace accelsim::gpu {

const char* to_string(ReductionVariant v) {
    switch (v) {
    case ReductionVariant::warp_per_row: return "warp_per_row";
    case ReductionVariant::block_per_row: return "block_per_row";
    case ReductionVariant::softmax_warp_persistent: return "softmax_warp_persistent";
    case ReductionVariant::softmax_block_smem: return "softmax_block_smem";
    case ReductionVariant::softmax_block_global: return "softmax_block_global";
    case ReductionVariant::layernorm_vectorized: return "layernorm_vectorized";
    case ReductionVariant::layernorm_moments: return "layernorm_moments";
    }
    return "?";
}

ReductionVariant reduction_variant(std::int64_t cols) {
    return cols <= kWarpPerRowMaxCols ? ReductionVariant::warp_per_row : ReductionVariant::block_per_row;
}

std::uint32_t softmax_block_threads(std::int64_t cols, int wave_size) {
    const std::int64_t t = std::min<std::int64_t>(std::max<std::int64_t>(cols, 1), 1024);
    return static_cast<std::uint32_t>((t + wave_size - 1) / wave_size * wave_size);
}

ReductionVariant softmax_variant(std::int64_t cols, Storage storage, std::int64_t shared_per_block, int wave_size) {
    const std::int64_t bytes = storage == Storage::f32 ? 4 : 2;
    if (cols <= 1024 && cols * bytes <= 4096) return ReductionVariant::softmax_warp_persistent;
    const std::int64_t warps = softmax_block_threads(cols, wave_size) / wave_size;
    const std::int64_t ilp = 16 / bytes;
    const std::int64_t max_elements = (kSharedMemPerBlock - warps * 4) / bytes;
    if (shared_per_block >= kSharedMemPerBlock && cols < max_elements && cols % ilp == 0)
        return ReductionVariant::softmax_block_smem;
    return ReductionVariant::softmax_block_global;
}

namespace {

// Register plan (addresses and integers never share a register with float data, so timing-only
// runs may skip the payload):
//   r0 row, r1 row stride, r2 first word of the thread in a row, r3 word step, r4 / r5 row base
//   address of x / y, r6 word index j, r7 j * 4, r8 element address, r9 full words (cols / 2;
//   8-bit: cols / 4), r17 this warp's shared slot, r22 the shared slot this lane reads back (block
//   per row); r23 last word of an unrolled trip, then the gamma / beta address (8-bit: also the
//   values of the one-word loop's word that lie in the row);
//   data: r10 accumulator, r11 / r12 low / high element, r13 temporary, r14 -max*log2(e) or mean,
//   r15 1/sum or rstd, r16 shuffle partner, r18..r21 gamma / beta (low, high) of the one-word loop
//   and beta of an unrolled trip, r24..r31 the words of an unrolled trip (r28..r31 gamma in
//   layernorm's output pass; 8-bit: the four values of a word in r24..r27, gamma r28..r31, beta
//   r18..r21, or two words' values in r24..r31). 32 registers cost no occupancy at 256 threads
//   (8 blocks by warps and by registers on sm_80).
// The block-per-row kernels assume kReductionBlock threads (unrolled offsets are constants); the
// warp-per-row kernels take any multiple of 32.

// Words per trip of the unrolled main loops (loads in flight per warp).
constexpr int kUnroll = 4;

// -inf as fp32 bits (the assembler reads a trailing f of "-inf" as a suffix).
const std::string kMinusInf = "0xff800000";

class Generator {
public:
    Generator(OpKind kind, ReductionVariant variant, Storage storage)
        : kind_(kind), variant_(variant), s_(storage), warps_(static_cast<int>(kReductionBlock / 32)) {}

    std::string source() {
        const bool ln = kind_ == OpKind::layernorm;
        const std::string name = std::string(ln ? "layernorm_" : "softmax_") +
                                 (variant_ == ReductionVariant::warp_per_row ? "warp_" : "block_") + to_string(s_);
        out_ = ".kernel " + name + "\n";
        out_ += ln ? ".param rows, cols, words, x, gamma, beta, y, inv_cols" : ".param rows, cols, words, x, y";
        // s8: each input's per-tensor scale and the output's 1/scale (elementwise.h's convention);
        // fp8: the output's 1/scale (the inputs are fp8 values as they are).
        if (s_ == Storage::s8) out_ += ln ? ", scale_x, scale_gamma, scale_beta, inv_scale_y" : ", scale_x, inv_scale_y";
        else if (eight_bit()) out_ += ", inv_scale_y";
        out_ += "\n";
        out_ += ".reg 32\n";
        if (variant_ == ReductionVariant::block_per_row) out_ += ".shared " + std::to_string(2 * warps_ * 4) + "\n";
        if (variant_ == ReductionVariant::warp_per_row) {
            emit("shr r1, %ntid, 5");               // warps per block
            emit("mad r0, %ctaid, r1, %warpid");    // row = ctaid * warps + warpid
            emit("mul r1, %nctaid, r1");            // row stride = grid * warps
            emit("mov r2, %laneid");
            emit("mov r3, 32");
        } else {
            emit("mov r0, %ctaid");
            emit("mov r1, %nctaid");
            emit("mov r2, %tid");
            emit("mov r3, %ntid");
            emit("shl r17, %warpid, 2");
            emit("and r22, %laneid, " + std::to_string(warps_ - 1));
            emit("shl r22, r22, 2");
            emit("setp.eq.s32 p3, %laneid, 0");
        }
        if (s_ != Storage::f32) emit(eight_bit() ? "shr r9, cols, 2" : "shr r9, cols, 1");  // words wholly in the row
        label("row");
        emit("setp.ge.s32 p0, r0, rows");
        emit("@p0 exit");
        emit("mul r4, r0, words");
        emit("shl r4, r4, 2");
        emit("add r5, r4, y");
        emit("add r4, r4, x");
        if (ln) layernorm(); else softmax();
        emit("add r0, r0, r1");
        emit("bra row");
        return out_;
    }

private:
    void emit(const std::string& line) { out_ += "    " + line + "\n"; }
    void label(const std::string& l) { out_ += l + ":\n"; }

    // Loops j over the thread's words of the row; per word loads x into r11 (and r12 for the high
    // half of a 16-bit word, replaced by `high_identity` when it lies past the row's end), then
    // runs `per_value` on r11 and (16-bit) r12, then `per_word`.
    // With `unroll`, a loop first takes kUnroll words a trip (j, j + step, ...), issuing their
    // loads back to back so that kUnroll loads per warp are in flight, as long as all of them lie
    // in the row with both halves (16-bit: below cols / 2, so nothing needs masking); then a loop
    // of 2 words a trip, on the same terms; values in r24 + 2k (low) and r25 + 2k (high);
    // `store_unrolled` packs and stores each word; `gamma_beta` (layernorm's output pass, at most
    // 2 words a trip for registers) loads the words of gamma and beta too. The single-word loop
    // finishes the row.
    // 8-bit storage (four values a word): the word is loaded into r27 (r27 + 4k unrolled) and
    // unpacked to fp32 in r24..r27 (r24 + 4k ..), dequantized by scale_x (s8), values past the
    // row's end replaced by `high_identity`; unrolled trips take at most 2 words and layernorm's
    // output pass none (gamma and beta need 8 more registers a word); the store requantizes
    // (pack_eight_bit).
    template <class PerValue>
    void for_each_word(const std::string& tag, const std::string& high_identity, PerValue per_value,
                       const std::string& per_word_prefix = "", const std::string& per_word = "",
                       int max_unroll = 1, bool store_unrolled = false, bool gamma_beta = false) {
        emit("mov r6, r2");
        // 8-bit: four values a word, so at most 2 words a trip (r24..r31), none with gamma and beta.
        if (eight_bit()) max_unroll = gamma_beta ? 1 : std::min(max_unroll, 2);
        for (int u = max_unroll; u >= 2; u /= 2) {
            const int step = variant_ == ReductionVariant::warp_per_row ? 32 : static_cast<int>(kReductionBlock);
            const std::string bound = s_ == Storage::f32 ? "words" : "r9";
            const std::string loop = tag + "_x" + std::to_string(u);
            const std::string next = u > 2 ? tag + "_x" + std::to_string(u / 2) : tag;
            label(loop);
            emit("add r23, r6, " + std::to_string((u - 1) * step));
            emit("setp.ge.s32 p1, r23, " + bound);
            emit("@p1 bra " + next);
            emit("shl r7, r6, 2");
            emit("add r8, r7, r4");
            auto lo = [](int k) { return "r" + std::to_string(24 + 2 * k); };
            auto hi = [](int k) { return "r" + std::to_string(25 + 2 * k); };
            auto offset = [step](int k) { return k == 0 ? std::string() : "+" + std::to_string(4 * step * k); };
            // gamma_beta (at most 2 words): gamma in r28 + 2k / r29 + 2k, beta in r18 + 2k / r19 + 2k.
            auto g = [](int k, int half) { return "r" + std::to_string(28 + 2 * k + half); };
            auto b = [](int k, int half) { return "r" + std::to_string(18 + 2 * k + half); };
            if (eight_bit()) {
                // Word k into r27 + 4k, unpacked to its four values in r24 + 4k .. r27 + 4k.
                for (int k = 0; k < u; ++k) emit("ld.global r" + std::to_string(27 + 4 * k) + ", [r8" + offset(k) + "]");
                for (int k = 0; k < u; ++k) {
                    out_ += unpack_eight_bit(s_, "r" + std::to_string(27 + 4 * k), 24 + 4 * k, "scale_x");
                    for (int j = 0; j < 4; ++j) per_value("r" + std::to_string(24 + 4 * k + j), "", "");
                }
                if (store_unrolled) {
                    emit("add r8, r7, r5");
                    for (int k = 0; k < u; ++k) {
                        out_ += pack_eight_bit(s_, 24 + 4 * k, true);
                        emit("st.global [r8" + offset(k) + "], r" + std::to_string(24 + 4 * k));
                    }
                }
                emit("add r6, r6, " + std::to_string(u * step));
                emit("bra " + loop);
                continue;
            }
            for (int k = 0; k < u; ++k) emit("ld.global " + lo(k) + ", [r8" + offset(k) + "]");
            if (gamma_beta) {
                emit("add r23, r7, gamma");
                for (int k = 0; k < u; ++k) emit("ld.global " + g(k, 0) + ", [r23" + offset(k) + "]");
                emit("add r23, r7, beta");
                for (int k = 0; k < u; ++k) emit("ld.global " + b(k, 0) + ", [r23" + offset(k) + "]");
            }
            auto unpack = [&](const std::string& l, const std::string& h) {
                emit("cvt.f32." + half_name() + ".hi " + h + ", " + l);
                emit("cvt.f32." + half_name() + ".lo " + l + ", " + l);
            };
            for (int k = 0; k < u; ++k) {
                if (s_ != Storage::f32) {
                    unpack(lo(k), hi(k));
                    if (gamma_beta) {
                        unpack(g(k, 0), g(k, 1));
                        unpack(b(k, 0), b(k, 1));
                    }
                }
                per_value(lo(k), g(k, 0), b(k, 0));
                if (s_ != Storage::f32) per_value(hi(k), g(k, 1), b(k, 1));
            }
            if (store_unrolled) {
                emit("add r8, r7, r5");
                for (int k = 0; k < u; ++k) {
                    if (s_ != Storage::f32) emit("cvt." + half_name() + "x2.f32 " + lo(k) + ", " + lo(k) + ", " + hi(k));
                    emit("st.global [r8" + offset(k) + "], " + lo(k));
                }
            }
            emit("add r6, r6, " + std::to_string(u * step));
            emit("bra " + loop);
        }
        label(tag);
        emit("setp.ge.s32 p1, r6, words");
        emit("@p1 bra " + tag + "_done");
        emit("shl r7, r6, 2");
        emit("add r8, r7, r4");
        emit(eight_bit() ? "ld.global r27, [r8]" : "ld.global r11, [r8]");
        out_ += per_word_prefix;
        if (eight_bit()) {
            // Values in r24..r27 (gamma r28..r31, beta r18..r21: layernorm's per_word_prefix).
            out_ += unpack_eight_bit(s_, "r27", 24, "scale_x");
            if (!high_identity.empty()) {
                // Value j of the row's last word lies past the row when 4 r6 + j >= cols.
                emit("shl r23, r6, 2");
                emit("sub r23, cols, r23");  // values of this word in the row
                for (int j = 1; j < 4; ++j) {
                    emit("setp.gt.s32 p2, r23, " + std::to_string(j));
                    emit("selp r" + std::to_string(24 + j) + ", r" + std::to_string(24 + j) + ", " + high_identity + ", p2");
                }
            }
            for (int j = 0; j < 4; ++j)
                per_value("r" + std::to_string(24 + j), "r" + std::to_string(28 + j), "r" + std::to_string(18 + j));
        } else if (s_ == Storage::f32) {
            per_value("r11", "r18", "r19");
        } else {
            emit("cvt.f32." + half_name() + ".hi r12, r11");
            emit("cvt.f32." + half_name() + ".lo r11, r11");
            if (!high_identity.empty()) {
                emit("setp.lt.s32 p2, r6, r9");
                emit("selp r12, r12, " + high_identity + ", p2");
            }
            per_value("r11", "r18", "r19");
            per_value("r12", "r20", "r21");
        }
        out_ += per_word;
        emit("add r6, r6, r3");
        emit("bra " + tag);
        label(tag + "_done");
    }

    std::string half_name() const { return s_ == Storage::f16 ? "f16" : "bf16"; }
    bool eight_bit() const { return is_eight_bit(s_); }

    // Every thread of the row ends with op(all r10 of the row) in r10. `slot` picks one of the two
    // shared areas (block per row), so a reduction never overwrites partials another warp may
    // still be reading: between two uses of one area every warp passes the other's bar.sync.
    void reduce(const std::string& op, int slot) {
        for (int mask = 16; mask >= 1; mask /= 2) {
            emit("shfl.bfly r16, r10, " + std::to_string(mask));
            emit(op + " r10, r10, r16");
        }
        if (variant_ == ReductionVariant::warp_per_row) return;
        const std::string offset = std::to_string(slot * warps_ * 4);
        emit("@p3 st.shared [r17+" + offset + "], r10");
        emit("bar.sync");
        emit("ld.shared r10, [r22+" + offset + "]");  // lane l: warp (l mod warps)'s partial
        for (int mask = warps_ / 2; mask >= 1; mask /= 2) {
            emit("shfl.bfly r16, r10, " + std::to_string(mask));
            emit(op + " r10, r10, r16");
        }
    }

    // Packs r11, r12 (16-bit) and stores the word at y.
    std::string store() const {
        if (eight_bit()) return pack_eight_bit(s_, 24, true) + "    add r8, r7, r5\n    st.global [r8], r24\n";
        std::string s;
        if (s_ != Storage::f32)
            s += std::string("    cvt.") + (s_ == Storage::f16 ? "f16" : "bf16") + "x2.f32 r11, r11, r12\n";
        return s + "    add r8, r7, r5\n    st.global [r8], r11\n";
    }

    void softmax() {
        emit("mov r10, " + kMinusInf);
        for_each_word("max", kMinusInf, [&](const std::string& v, const std::string&, const std::string&) {
            emit("fmax r10, r10, " + v);
        }, "", "", kUnroll);
        reduce("fmax", 0);
        emit("fmul r14, r10, -1.4426950");  // -max * log2(e)
        emit("mov r10, 0.0");
        for_each_word("sum", kMinusInf, [&](const std::string& v, const std::string&, const std::string&) {
            emit("ffma " + v + ", " + v + ", 1.4426950, r14");
            emit("ex2 " + v + ", " + v);
            emit("fadd r10, r10, " + v);
        }, "", "", kUnroll);
        reduce("fadd", 1);
        emit("rcp r15, r10");
        for_each_word("out", "", [&](const std::string& v, const std::string&, const std::string&) {
            emit("ffma " + v + ", " + v + ", 1.4426950, r14");
            emit("ex2 " + v + ", " + v);
            emit("fmul " + v + ", " + v + ", r15");
        }, "", store(), kUnroll, true);
    }

    void layernorm() {
        emit("mov r10, 0.0");
        for_each_word("sum", "0.0", [&](const std::string& v, const std::string&, const std::string&) {
            emit("fadd r10, r10, " + v);
        }, "", "", kUnroll);
        reduce("fadd", 0);
        emit("fmul r14, r10, inv_cols");  // mean
        emit("mov r10, 0.0");
        // A padding high half becomes the mean: it adds (mean - mean)^2 = 0.
        for_each_word("var", "r14", [&](const std::string& v, const std::string&, const std::string&) {
            emit("fsub r13, " + v + ", r14");
            emit("ffma r10, r13, r13, r10");
        }, "", "", kUnroll);
        reduce("fadd", 1);
        emit("fmul r10, r10, inv_cols");  // biased variance
        emit("fadd r10, r10, " + std::string("1e-5"));
        emit("rsqrt r15, r10");
        std::string params;  // gamma and beta of the word, unpacked into r18 / r20 and r19 / r21
        params += "    add r8, r7, gamma\n    ld.global r18, [r8]\n";
        params += "    add r8, r7, beta\n    ld.global r19, [r8]\n";
        if (eight_bit()) {  // gamma's word into r31, unpacked to r28..r31; beta's into r21, to r18..r21
            params = "    add r8, r7, gamma\n    ld.global r31, [r8]\n    add r8, r7, beta\n    ld.global r21, [r8]\n";
            params += unpack_eight_bit(s_, "r31", 28, "scale_gamma") + unpack_eight_bit(s_, "r21", 18, "scale_beta");
        } else if (s_ != Storage::f32) {
            const std::string t = s_ == Storage::f16 ? "f16" : "bf16";
            params += "    cvt.f32." + t + ".hi r20, r18\n    cvt.f32." + t + ".lo r18, r18\n";
            params += "    cvt.f32." + t + ".hi r21, r19\n    cvt.f32." + t + ".lo r19, r19\n";
        }
        for_each_word("out", "", [&](const std::string& v, const std::string& g, const std::string& b) {
            emit("fsub " + v + ", " + v + ", r14");
            emit("fmul " + v + ", " + v + ", r15");
            emit("ffma " + v + ", " + v + ", " + g + ", " + b);
        }, params, store(), 2, true, true);
    }

    OpKind kind_;
    ReductionVariant variant_;
    Storage s_;
    int warps_;
    std::string out_;
};

// ---- PyTorch's softmax forward kernels ---------------------------------------------------------

// -inf in both halves of a packed word / in an fp32 word: what a lane holds for an element past
// the row (softmax_warp_forward initialises its registers to -infinity).
std::string packed_minus_inf(Storage s) {
    return s == Storage::f16 ? "0xfc00fc00" : s == Storage::bf16 ? "0xff80ff80" : kMinusInf;
}

std::string half_type(Storage s) { return s == Storage::f16 ? "f16" : "bf16"; }

// PyTorch's ATen is compiled without --use_fast_math, so its std::exp(float) is CUDA's accurate
// expf (CUDA Math API: 2 ulp) and its `/` the IEEE round-to-nearest division (nvcc's default
// -prec-div=true). Their instruction sequences, as nvcc emits them for sm_80, cost several
// instructions per element where the fast intrinsics cost one or two; the kernels below issue
// the same sequences, written in this ISA:
// expf(x) (libdevice __nv_expf: FFMA.SAT, FFMA.RM, FADD, FFMA, FFMA, SHL, MUFU.EX2, FMUL): split
// x log2 e = m + f with m an integer (the 1.5 x 2^23 + 127 rounding trick puts m + 127 in the low
// mantissa bits, and a clamp at -87.3 keeps m >= -126 as the saturating FFMA does), 2^f on the
// SFU, 2^m built from the bits (shl 23), one multiply. expf(-inf) = 2^-inf x 2^m = 0.
// `d` may be `x`; t1 and t2 are temporaries (data registers).
std::vector<std::string> expf_sequence(const std::string& d, const std::string& x, const std::string& t1,
                                       const std::string& t2) {
    return {"fmax " + t1 + ", " + x + ", -87.33654",
            "ffma " + t1 + ", " + t1 + ", -1.4426950, -12583039.0",  // -(m + 127 + 1.5 x 2^23)
            "fadd " + t2 + ", " + t1 + ", 12583039.0",               // -m
            "ffma " + t2 + ", " + x + ", 1.4426950, " + t2,          // x log2e_hi - m
            "ffma " + t2 + ", " + x + ", 1.9259630e-08, " + t2,      // + x log2e_lo
            "ex2 " + t2 + ", " + t2,
            "shl " + t1 + ", " + t1 + ", 23",                        // 2^m: exponent field m + 127
            "fmul " + d + ", " + t2 + ", " + t1};
}
// IEEE division by a row's sum s: per row rcp r, s; e = 1 - s r; r += r e (the Newton step nvcc
// hoists out of the loop, as the divisor is loop-invariant); per element q = x r, the remainder
// x - s q, q + r remainder (FFMA, FFMA, FFMA; nvcc adds FCHK and a branch to a slow path taken
// only for extreme operands, not issued here).
std::vector<std::string> division_setup(const std::string& r, const std::string& neg_s, const std::string& s) {
    return {"rcp " + r + ", " + s, "fmul " + neg_s + ", " + s + ", -1.0", "ffma " + s + ", " + neg_s + ", " + r + ", 1.0",
            "ffma " + r + ", " + r + ", " + s + ", " + r};
}
std::vector<std::string> division(const std::string& d, const std::string& x, const std::string& r,
                                  const std::string& neg_s, const std::string& t) {
    return {"fmul " + t + ", " + x + ", " + r, "ffma " + d + ", " + neg_s + ", " + t + ", " + x,
            "ffma " + d + ", " + d + ", " + r + ", " + t};
}

int next_pow2_log2(std::int64_t n) {
    int l = 0;
    while ((std::int64_t{1} << l) < n) ++l;
    return l;
}

// softmax_warp_forward<WARP_BATCH, WARP_ITERATIONS, WARP_SIZE> for next_pow2(cols) = 2^log2p:
// a group of G = min(W, 2^log2p) lanes per row (PyTorch's WARP_SIZE: W = at::cuda::warp_size(),
// 32 on NVIDIA, 64 on CDNA, where a group of 64 is a whole wave and its butterfly's first step,
// mask 32, crosses the wave's halves), B = 2 rows per group when
// 2^log2p <= 128 else 1 (WARP_BATCH), 128 / G groups per block. Lane l of a group holds elements
// l, l + G, ... (WARP_ITERATIONS = 2^log2p / G of them) of each of its rows in registers, as
// PyTorch's: one load instruction per element. The ISA loads 32-bit words, so at 16 bits a lane
// loads the word holding its element and shifts its half down (the word's other half is the
// neighbour lane's: the same sectors as PyTorch's 16-bit loads); it has no 16-bit store, so the
// two lanes of a pair exchange their results by one shuffle and the even lane stores the word
// (half PyTorch's store instructions, the same bytes). Loads all, then max, butterfly, exp-sum,
// butterfly, scales and stores: the row is read once.
// Register plan: r0 first row, r1 lane in group, r2 group in block, r3 lane byte offset,
// r4 + i limit of row i (elements, 0 past the rows), r6 + i / r8 + i its x / y address at the lane,
// r10 half shift (16-bit; 0 on the even lane of a pair), r22 element index, r24 / r25 temporaries;
// data: r12 + i max, r14 + i sum, r16 shuffle partner, r18 + i -sum, r20 + i 1/sum, r26 / r27
// temporaries of the exponential and the division, r32... the row values.
class PersistentSoftmaxGenerator {
public:
    PersistentSoftmaxGenerator(Storage s, int log2p, int wave_size) : s_(s), log2p_(log2p), wave_(wave_size) {
        const std::int64_t p = std::int64_t{1} << log2p;
        group_ = static_cast<int>(std::min<std::int64_t>(wave_size, p));
        batch_ = p <= 128 ? 2 : 1;
        iter_ = static_cast<int>(std::max<std::int64_t>(1, p / group_));
    }

    std::string source() const {
        const bool half = s_ != Storage::f32;
        std::string o = ".kernel softmax_persistent_" + std::string(to_string(s_)) + "_p" + std::to_string(1 << log2p_) +
                        (wave_ == 32 ? "" : "_wave" + std::to_string(wave_)) + "\n.param rows, cols, words, x, y\n.reg " + std::to_string(32 + batch_ * iter_) + "\n";
        auto e = [&o](const std::string& line) { o += "    " + line + "\n"; };
        auto r = [](int n) { return "r" + std::to_string(n); };
        auto value = [&](int i, int it) { return r(32 + i * iter_ + it); };
        int log2g = 0;
        while ((1 << log2g) < group_) ++log2g;
        e("shr r2, %tid, " + std::to_string(log2g));
        e("and r1, %tid, " + std::to_string(group_ - 1));
        e("mad r0, %ctaid, " + std::to_string(kPersistentSoftmaxBlock / group_) + ", r2");
        e("mul r0, r0, " + std::to_string(batch_));
        if (half) {  // element l of a row: byte 4 (l / 2) of the row, half l mod 2
            e("shr r3, r1, 1");
            e("shl r3, r3, 2");
            e("and r10, r1, 1");
            e("shl r10, r10, 4");
        } else {
            e("shl r3, r1, 2");
        }
        for (int i = 0; i < batch_; ++i) {
            e("add r24, r0, " + std::to_string(i));
            e("setp.lt.s32 p1, r24, rows");
            e("selp " + r(4 + i) + ", cols, 0, p1");
            e("mul r25, r24, words");
            e("shl r25, r25, 2");
            e("add r25, r25, r3");
            e("add " + r(6 + i) + ", r25, x");
            e("add " + r(8 + i) + ", r25, y");
        }
        // Element l + G it lies 4 G it / (elements per word) bytes after element l (G even at
        // 16 bits whenever it > 0: G = 1 means one element).
        auto offset = [&](int it) {
            const int bytes = 4 * group_ * it / (half ? 2 : 1);
            return bytes == 0 ? std::string() : "+" + std::to_string(bytes);
        };
        // Loads: every element of the lane's rows, issued back to back; -inf past the row.
        for (int i = 0; i < batch_; ++i)
            for (int it = 0; it < iter_; ++it) {
                e("mov " + value(i, it) + ", " + packed_minus_inf(s_));
                e("add r22, r1, " + std::to_string(group_ * it));
                e("setp.lt.s32 p2, r22, " + r(4 + i));
                e("@p2 ld.global " + value(i, it) + ", [" + r(6 + i) + offset(it) + "]");
            }
        if (half)
            for (int i = 0; i < batch_; ++i)
                for (int it = 0; it < iter_; ++it) {
                    e("shr " + value(i, it) + ", " + value(i, it) + ", r10");
                    e("cvt.f32." + half_type(s_) + ".lo " + value(i, it) + ", " + value(i, it));
                }
        auto butterfly = [&](const std::string& op, const std::string& reg) {
            for (int mask = group_ / 2; mask >= 1; mask /= 2) {
                e("shfl.bfly r16, " + reg + ", " + std::to_string(mask));
                e(op + " " + reg + ", " + reg + ", r16");
            }
        };
        for (int i = 0; i < batch_; ++i) {
            e("mov " + r(12 + i) + ", " + value(i, 0));
            for (int it = 1; it < iter_; ++it) e("fmax " + r(12 + i) + ", " + r(12 + i) + ", " + value(i, it));
        }
        for (int i = 0; i < batch_; ++i) butterfly("fmax", r(12 + i));
        for (int i = 0; i < batch_; ++i) {
            e("mov " + r(14 + i) + ", 0.0");
            for (int it = 0; it < iter_; ++it) {  // elements = exp(elements - max); sum += elements
                const std::string v = value(i, it);
                e("fsub " + v + ", " + v + ", " + r(12 + i));
                for (const std::string& line : expf_sequence(v, v, "r26", "r27")) e(line);
                e("fadd " + r(14 + i) + ", " + r(14 + i) + ", " + v);
            }
        }
        for (int i = 0; i < batch_; ++i) butterfly("fadd", r(14 + i));
        for (int i = 0; i < batch_; ++i) {
            for (const std::string& line : division_setup(r(20 + i), r(18 + i), r(14 + i))) e(line);
            for (int it = 0; it < iter_; ++it) {
                const std::string v = value(i, it);
                for (const std::string& line : division(v, v, r(20 + i), r(18 + i), "r26")) e(line);
                e("add r22, r1, " + std::to_string(group_ * it));
                e("setp.lt.s32 p2, r22, " + r(4 + i));
                if (half) {
                    // The pair's word: this lane's element low, the next lane's high (one lane
                    // per row when G = 1: its own value fills the padding half).
                    e(group_ > 1 ? "shfl.down r16, " + v + ", 1" : "mov r16, " + v);
                    e("cvt." + half_type(s_) + "x2.f32 " + v + ", " + v + ", r16");
                    e("@p2 setp.eq.s32 p2, r10, 0");  // and the even lane of the pair
                }
                e("@p2 st.global [" + r(8 + i) + offset(it) + "], " + v);
            }
        }
        return o;
    }

    int group() const { return group_; }
    int batch() const { return batch_; }

private:
    Storage s_;
    int log2p_, wave_;
    int group_ = 32, batch_ = 1, iter_ = 1;
};

// cunn_SoftMaxForwardSmem (smem) and cunn_SoftMaxForward (global): one block per row (ctaid), each
// thread striding the row by blockDim 16-byte vectors (ILP elements; `vector` false: one word a
// trip, for rows that are not whole vectors, where PyTorch's ilpReduce also falls back to scalar
// accesses). smem: pass 1 copies each vector to shared memory while taking the max, passes 2 and
// 3 read shared memory; global: each pass reads global memory.
// Register plan: r0 row, r2 first byte offset of the thread, r3 byte step, r4 / r5 x / y row
// address, r6 byte offset j, r7 address, r9 row bytes, r17 this warp's partial slot, r21 warps,
// r22 this lane's partial slot, r23 full-word bytes (16-bit scalar path); data: r10 accumulator,
// r11 / r12 temporaries, r13 -sum, r14 max, r15 1/sum, r16 shuffle partner, r24..r27 the vector's
// words, r28..r31 their high halves.
class BlockSoftmaxGenerator {
public:
    BlockSoftmaxGenerator(Storage s, bool smem, bool vector, int wave) : s_(s), smem_(smem), vector_(vector), wave_(wave) {}

    // Shared bytes: the smem kernel is launched with all of sharedMemPerBlock (as the cited commit
    // does), the row cached from 0 and the 32 warp partials in its last 128 bytes; the global
    // kernel only has the partials (PyTorch: warps x sizeof(float)).
    static constexpr int kPartialsBytes = 32 * 4;
    int shared_bytes() const { return smem_ ? static_cast<int>(kSharedMemPerBlock) : kPartialsBytes; }
    int partials() const { return smem_ ? shared_bytes() - kPartialsBytes : 0; }

    std::string source() {
        out_ = ".kernel softmax_block_" + std::string(smem_ ? "smem_" : "global_") + (vector_ ? "v4_" : "w1_") +
               to_string(s_) + (wave_ == 32 ? "" : "_wave" + std::to_string(wave_)) + "\n.param rows, cols, words, x, y\n.reg 32\n.shared " + std::to_string(shared_bytes()) + "\n";
        const int shift = vector_ ? 4 : 2;
        emit("mov r0, %ctaid");
        emit("mul r4, r0, words");
        emit("shl r4, r4, 2");
        emit("add r5, r4, y");
        emit("add r4, r4, x");
        emit("shl r9, words, 2");
        emit("shl r2, %tid, " + std::to_string(shift));
        emit("shl r3, %ntid, " + std::to_string(shift));
        if (wave_ == 32) {
            emit("shl r17, %warpid, 2");
            emit("add r17, r17, " + std::to_string(partials()));
            emit("shl r22, %laneid, 2");
            emit("add r22, r22, " + std::to_string(partials()));
            emit("shr r21, %ntid, 5");
            emit("setp.eq.s32 p3, %laneid, 0");
            emit("setp.ne.s32 p4, %warpid, 0");
            emit("setp.lt.s32 p6, %laneid, r21");
        } else {  // ROCm's build: the warp is the wave of 64 (tid / 64), its lane tid mod 64
            emit("shr r17, %tid, 6");
            emit("setp.ne.s32 p4, r17, 0");
            emit("shl r17, r17, 2");
            emit("add r17, r17, " + std::to_string(partials()));
            emit("and r22, %tid, 63");
            emit("shr r21, %ntid, 6");
            emit("setp.eq.s32 p3, r22, 0");
            emit("setp.lt.s32 p6, r22, r21");
            emit("shl r22, r22, 2");
            emit("add r22, r22, " + std::to_string(partials()));
        }
        if (!vector_ && s_ != Storage::f32) {
            emit("shr r23, cols, 1");
            emit("shl r23, r23, 2");
        }
        emit("mov r10, " + kMinusInf);
        pass("max", true, kMinusInf, [&](const std::string& v) { emit("fmax r10, r10, " + v); }, false);
        block_reduce("fmax", kMinusInf, "max");
        emit("mov r14, r10");
        emit("mov r10, 0.0");
        pass("sum", false, kMinusInf, [&](const std::string& v) {  // SumExpFloat: sum + exp(v - max)
            emit("fsub " + v + ", " + v + ", r14");
            for (const std::string& line : expf_sequence(v, v, "r11", "r12")) emit(line);
            emit("fadd r10, r10, " + v);
        }, false);
        block_reduce("fadd", "0.0", "sum");
        for (const std::string& line : division_setup("r15", "r13", "r10")) emit(line);
        pass("out", false, "", [&](const std::string& v) {  // SoftMaxForwardEpilogue: exp(v - max) / sum
            emit("fsub " + v + ", " + v + ", r14");
            for (const std::string& line : expf_sequence(v, v, "r11", "r12")) emit(line);
            for (const std::string& line : division(v, v, "r15", "r13", "r11")) emit(line);
        }, true);
        return out_;
    }

private:
    void emit(const std::string& line) { out_ += "    " + line + "\n"; }
    void label(const std::string& l) { out_ += l + ":\n"; }

    // One pass over the thread's vectors (words) of the row: load (pass 1 and the global kernel:
    // global memory; otherwise shared), in pass 1 of the smem kernel also store to shared memory,
    // unpack, per_value on each element, and with `store` pack and store to y.
    template <class PerValue>
    void pass(const std::string& tag, bool first, const std::string& high_identity, PerValue per_value, bool store) {
        const int n = vector_ ? 4 : 1;
        const std::string suffix = vector_ ? ".v4" : "";
        emit("mov r6, r2");
        label(tag);
        emit("setp.ge.s32 p1, r6, r9");
        emit("@p1 bra " + tag + "_done");
        if (smem_ && !first) {
            emit("ld.shared" + suffix + " r24, [r6]");
        } else {
            emit("add r7, r4, r6");
            emit("ld.global" + suffix + " r24, [r7]");
            if (smem_) emit("st.shared" + suffix + " [r6], r24");
        }
        auto lo = [](int k) { return "r" + std::to_string(24 + k); };
        auto hi = [](int k) { return "r" + std::to_string(28 + k); };
        for (int k = 0; k < n; ++k) {
            if (s_ != Storage::f32) {
                emit("cvt.f32." + half_type(s_) + ".hi " + hi(k) + ", " + lo(k));
                emit("cvt.f32." + half_type(s_) + ".lo " + lo(k) + ", " + lo(k));
                if (!vector_ && !high_identity.empty()) {  // the padding half of an odd row's last word
                    emit("setp.lt.s32 p2, r6, r23");
                    emit("selp " + hi(k) + ", " + hi(k) + ", " + high_identity + ", p2");
                }
            }
            per_value(lo(k));
            if (s_ != Storage::f32) per_value(hi(k));
            if (store && s_ != Storage::f32) emit("cvt." + half_type(s_) + "x2.f32 " + lo(k) + ", " + lo(k) + ", " + hi(k));
        }
        if (store) {
            emit("add r7, r5, r6");
            emit("st.global" + suffix + " [r7], r24");
        }
        emit("add r6, r6, r3");
        emit("bra " + tag);
        label(tag + "_done");
    }

    // PyTorch's blockReduceWarp (cuda_utils::BlockReduce, then thread 0 broadcasts): every thread
    // ends with op over the block's r10 in r10. Three barriers: before the partials are written
    // (the previous reduction's readers are done), after, and after thread 0's broadcast store.
    void block_reduce(const std::string& op, const std::string& identity, const std::string& tag) {
        for (int offset = wave_ / 2; offset >= 1; offset /= 2) {
            emit("shfl.down r16, r10, " + std::to_string(offset));
            emit(op + " r10, r10, r16");
        }
        emit("bar.sync");
        emit("@p3 st.shared [r17], r10");
        emit("bar.sync");
        emit("@p4 bra " + tag + "_bcast");
        emit("mov r10, " + identity);
        emit("@p6 ld.shared r10, [r22]");
        for (int offset = wave_ / 2; offset >= 1; offset /= 2) {
            emit("shfl.down r16, r10, " + std::to_string(offset));
            emit(op + " r10, r10, r16");
        }
        emit("@p3 st.shared [" + std::to_string(partials()) + "], r10");
        label(tag + "_bcast");
        emit("bar.sync");
        emit("ld.shared r10, [" + std::to_string(partials()) + "]");
    }

    Storage s_;
    bool smem_, vector_;
    int wave_;  // C10_WARP_SIZE of the build: 32 (CUDA) or 64 (ROCm)
    std::string out_;
};

constexpr double kU32 = 1.0 / (1 << 24);  // fp32 unit roundoff

// Softmax inputs are uniform in [-kSoftmaxRange, kSoftmaxRange): wide enough that subtracting the
// max matters, narrow enough that no exponential underflows (2^-23 at worst).
constexpr float kSoftmaxRange = 8.0f;

void record(LoweringNumerics& num, double got, double want, double tolerance) {
    const double err = std::fabs(got - want);
    ++num.checked;
    num.max_abs_err = std::max(num.max_abs_err, err);
    num.max_rel_err = std::max(num.max_rel_err, err / std::max(1e-30, std::fabs(want)));
    if (!(err <= tolerance)) num.passed = false;
}

// What the 8-bit checks need besides the tensors in memory (nullptr for 16- and 32-bit ops).
struct EightBitIo {
    DType dtype = DType::int8;
    Fp8Encoding encoding = Fp8Encoding::ocp;
    float scale_x = 1, scale_gamma = 1, scale_beta = 1;  // s8 inputs' per-tensor scales
    double output_scale = 1;  // an output q (s8 integer, fp8 value) means q * output_scale
    double fp8_largest = 0;   // fp8: the format's largest finite value (the pack saturates there)
    // The values before quantization (x row by row at the storage pitch): the quantization
    // error's reference.
    std::vector<float> x, gamma, beta;
};

// Element `index` of an input as the kernel reads it: s8 q * scale in fp32 (its i2f and fmul).
double input_value(const simt::GlobalMemory& m, std::uint32_t address, std::int64_t index, Storage s,
                   const EightBitIo* io, float scale) {
    if (!io) return load_element(m, address, index, s);
    const float v = load_element(m, address, index, s, io->encoding);
    return s == Storage::s8 ? static_cast<double>(v * scale) : static_cast<double>(v);
}

double output_value(const simt::GlobalMemory& m, std::uint32_t y, std::int64_t index, Storage s, const EightBitIo* io) {
    if (!io) return load_element(m, y, index, s);
    return static_cast<double>(load_element(m, y, index, s, io->encoding)) * io->output_scale;
}

// An 8-bit output's bound given its fp32 result's (stored_output_tolerance, elementwise.h).
double eight_bit_tolerance(Storage s, double tol32, double want, const EightBitIo& io) {
    return stored_output_tolerance(s, tol32, want, io.output_scale, io.fp8_largest);
}

// Softmax of one row in double (max subtracted).
void softmax_row_double(const double* x, std::int64_t cols, double* y) {
    double mx = -INFINITY, sum = 0;
    for (std::int64_t j = 0; j < cols; ++j) mx = std::max(mx, x[j]);
    for (std::int64_t j = 0; j < cols; ++j) sum += (y[j] = std::exp(x[j] - mx));
    for (std::int64_t j = 0; j < cols; ++j) y[j] /= sum;
}

// Layernorm of one row in double: two-pass mean and biased variance, eps = (double)1e-5f.
void layernorm_row_double(const double* x, std::int64_t cols, const double* g, const double* b, double* y) {
    const double n = static_cast<double>(cols);
    double mean = 0, var = 0;
    for (std::int64_t j = 0; j < cols; ++j) mean += x[j];
    mean /= n;
    for (std::int64_t j = 0; j < cols; ++j) var += (x[j] - mean) * (x[j] - mean);
    const double rstd = 1.0 / std::sqrt(var / n + static_cast<double>(kLayernormEps));
    for (std::int64_t j = 0; j < cols; ++j) y[j] = (x[j] - mean) * rstd * g[j] + b[j];
}

// The quantization error (quantization.h) of an 8-bit row op: its dequantized outputs against the
// op in double on the values before quantization, rounded to fp32 (the reference's form).
QuantizationError row_quantization_error(const simt::GlobalMemory& m, std::int64_t rows, std::int64_t cols,
                                         Storage s, std::uint32_t y, const EightBitIo& io, bool layernorm) {
    const std::int64_t pitch = storage_words(cols, s) * elements_per_word(s);
    const auto n = static_cast<std::size_t>(cols);
    std::vector<double> in(n), g(io.gamma.begin(), io.gamma.end()), b(io.beta.begin(), io.beta.end()), want(n);
    std::vector<double> outputs;
    std::vector<float> reference;
    outputs.reserve(static_cast<std::size_t>(rows) * n);
    reference.reserve(outputs.capacity());
    for (std::int64_t r = 0; r < rows; ++r) {
        for (std::size_t j = 0; j < n; ++j) in[j] = io.x[static_cast<std::size_t>(r * pitch) + j];
        if (layernorm) layernorm_row_double(in.data(), cols, g.data(), b.data(), want.data());
        else softmax_row_double(in.data(), cols, want.data());
        for (std::int64_t j = 0; j < cols; ++j) {
            outputs.push_back(output_value(m, y, r * pitch + j, s, &io));
            reference.push_back(static_cast<float>(want[static_cast<std::size_t>(j)]));
        }
    }
    QuantizationError error = quantization_error(io.dtype, outputs, reference, 1.0, io.encoding);
    error.scheme = eight_bit_vector_scheme(layernorm ? OpKind::layernorm : OpKind::softmax, io.dtype, io.encoding);
    return error;
}

// Softmax against p_j = exp(x_j - m) / sum_k exp(x_k - m) in double, on the stored inputs.
// fp32 error of one output, X = max |x|, u = 2^-24:
// - the exponent t_j = fma(x_j, L, -fl(m L)) with L = fl(log2 e) (off by u log2 e relative) is off
//   from (x_j - m) log2 e by at most log2e u (|x_j| + 2|m|) + u |t_j| <= log2e u (3X + 2X) = 7.2 X u;
// - 2^t is then off by ln2 * 7.2 X u + 2u (ex2 within an ulp) = (5X + 2) u relative;
// - the sum of positives adds at most (adds on the longest path) u <= (cols + 8) u;
// - rcp and the final fmul u each. Numerator and denominator together:
//   (10 X + cols + 16) u relative. A 16-bit store rounds once more (u_storage, plus half a
//   subnormal spacing). Each row must also sum to 1 within the sum of its outputs' bounds.
// 8-bit (`io`): against the double softmax of the dequantized inputs; the fp32 bound, then the
// requantization's (eight_bit_tolerance).
LoweringNumerics check_softmax(const simt::GlobalMemory& m, std::int64_t rows, std::int64_t cols, Storage s,
                               std::uint32_t x, std::uint32_t y, const EightBitIo* io = nullptr) {
    LoweringNumerics num;
    const std::int64_t pitch = storage_words(cols, s) * elements_per_word(s);
    const double us = s == Storage::f32 ? 0.0 : unit_roundoff(s);
    const double floor = std::ldexp(1.0, -126) + (s == Storage::f32 ? 0.0 : subnormal_half_spacing(s));
    std::vector<double> in(static_cast<std::size_t>(cols)), e(static_cast<std::size_t>(cols));
    for (std::int64_t r = 0; r < rows; ++r) {
        double mx = -INFINITY, big = 0;
        for (std::int64_t j = 0; j < cols; ++j) {
            const double v = input_value(m, x, r * pitch + j, s, io, io ? io->scale_x : 1.0f);
            in[static_cast<std::size_t>(j)] = v;
            mx = std::max(mx, v);
            big = std::max(big, std::fabs(v));
        }
        double sum = 0;
        for (std::int64_t j = 0; j < cols; ++j) sum += (e[static_cast<std::size_t>(j)] = std::exp(in[static_cast<std::size_t>(j)] - mx));
        const double rel32 = (10.0 * big + static_cast<double>(cols) + 16.0) * kU32;
        const double rel = rel32 + us * (1.0 + rel32);
        double row_sum = 0;
        for (std::int64_t j = 0; j < cols; ++j) {
            const double want = e[static_cast<std::size_t>(j)] / sum;
            const double got = output_value(m, y, r * pitch + j, s, io);
            row_sum += got;
            const double tolerance =
                io ? eight_bit_tolerance(s, rel32 * want + std::ldexp(1.0, -126), want, *io) : rel * want + floor;
            record(num, got, want, tolerance);
        }
        // 8-bit: the row sum adds no check (each output within its bound puts the sum within the
        // bounds' sum) and its error, up to cols half steps, would stand as the op's max abs error.
        if (!io) record(num, row_sum, 1.0, rel + static_cast<double>(cols) * floor);
    }
    if (io) num.quantization = row_quantization_error(m, rows, cols, s, y, *io, false);
    return num;
}

// Layernorm against the textbook formula in double, on the stored inputs:
// y_j = (x_j - mean) / sqrt(var + eps) * gamma_j + beta_j, var biased, eps = (double)1e-5f.
// fp32 error bound, n = cols, X = max |x|, u = 2^-24, rstd = 1/sqrt(var + eps), z_j = (x_j - mean) rstd:
// - sum: (n + 8) u n X (longest add path n + 8), mean = sum * fl(1/n): |d mean| <= (n + 10) u X;
// - the variance pass sums (x_j - mean')^2 = sum (x_j - mean)^2 + n (mean - mean')^2: the mean's
//   error enters at second order only; the squares and sum add (n + 12) u relative; * 1/n, + eps,
//   rsqrt (1/sqrt: two roundings) 4u more, halved by the square root: rstd within (n/2 + 10) u;
// - z_j is off by |d mean| rstd + u |z_j| + |z_j| (n/2 + 10) u; the ffma with gamma, beta rounds once.
// Total u [|gamma| ((n + 10) X rstd + (n/2 + 12) |z|) + |y|], doubled for the terms dropped at
// second order; a 16-bit store rounds once more.
// `welford` (PyTorch's kernels: Welford updates per thread, pairwise combines): each update of the
// mean rounds at most three times, by at most u (|mean| + 2 |delta| / k) <= 5 u X, and the tree
// adds 7 combines (5 shuffle steps, 2 shared-memory rounds) of a few u X each, so
// |d mean| <= 2 (n + 32) u X over at most n updates a thread plus the tree. The variance: Chan, Golub
// and LeVeque (1983, "Algorithms for computing the sample variance", the updating algorithm)
// bound the relative error of Welford's sum of squares by n kappa u, kappa = sqrt(1 + mean^2 / var)
// its condition number; with the combines and the division by n: (n + 32) kappa u, doubled for
// the dropped second-order terms; rstd within half that plus 2 u. z_j is off by |d mean| rstd +
// |z| ((n + 32) kappa u + 3 u); the fmul and ffma of the output round twice:
// |gamma| (|d mean| rstd + |z| ((n + 32) kappa + 3) u) + 2 u |y|.
// 8-bit (`io`): against the double layernorm of the dequantized x, gamma and beta; the fp32 bound,
// then the requantization's (eight_bit_tolerance).
LoweringNumerics check_layernorm(const simt::GlobalMemory& m, std::int64_t rows, std::int64_t cols, Storage s,
                                 std::uint32_t x, std::uint32_t gamma, std::uint32_t beta, std::uint32_t y,
                                 bool welford, const EightBitIo* io = nullptr) {
    LoweringNumerics num;
    const std::int64_t pitch = storage_words(cols, s) * elements_per_word(s);
    const double us = s == Storage::f32 ? 0.0 : unit_roundoff(s);
    const double floor = s == Storage::f32 ? 0.0 : subnormal_half_spacing(s);
    const double n = static_cast<double>(cols);
    std::vector<double> in(static_cast<std::size_t>(cols)), g(in.size()), b(in.size());
    for (std::int64_t j = 0; j < cols; ++j) {
        g[static_cast<std::size_t>(j)] = input_value(m, gamma, j, s, io, io ? io->scale_gamma : 1.0f);
        b[static_cast<std::size_t>(j)] = input_value(m, beta, j, s, io, io ? io->scale_beta : 1.0f);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
        double mean = 0, big = 0;
        for (std::int64_t j = 0; j < cols; ++j) {
            const double v = input_value(m, x, r * pitch + j, s, io, io ? io->scale_x : 1.0f);
            in[static_cast<std::size_t>(j)] = v;
            mean += v;
            big = std::max(big, std::fabs(v));
        }
        mean /= n;
        double var = 0;
        for (double v : in) var += (v - mean) * (v - mean);
        var /= n;
        const double rstd = 1.0 / std::sqrt(var + static_cast<double>(kLayernormEps));
        const double kappa = std::sqrt(1.0 + mean * mean / std::max(var, 1e-30));
        for (std::int64_t j = 0; j < cols; ++j) {
            const auto jj = static_cast<std::size_t>(j);
            const double z = (in[jj] - mean) * rstd;
            const double want = z * g[jj] + b[jj];
            const double tol32 =
                welford ? std::fabs(g[jj]) * (2.0 * (n + 32.0) * kU32 * big * rstd +
                                              std::fabs(z) * ((n + 32.0) * kappa + 3.0) * kU32) +
                              2.0 * kU32 * std::fabs(want)
                        : 2.0 * kU32 *
                              (std::fabs(g[jj]) * ((n + 10.0) * big * rstd + (n / 2 + 12.0) * std::fabs(z)) + std::fabs(want));
            const double got = output_value(m, y, r * pitch + j, s, io);
            record(num, got, want, io ? eight_bit_tolerance(s, tol32, want, *io) : tol32 + us * (std::fabs(want) + tol32) + floor);
        }
    }
    if (io) num.quantization = row_quantization_error(m, rows, cols, s, y, *io, true);
    return num;
}

}  // namespace

namespace {
bool softmax_only(ReductionVariant v) {
    return v == ReductionVariant::softmax_warp_persistent || v == ReductionVariant::softmax_block_smem ||
           v == ReductionVariant::softmax_block_global;
}
bool torch_layernorm(ReductionVariant v) {
    return v == ReductionVariant::layernorm_vectorized || v == ReductionVariant::layernorm_moments;
}
// The global kernel loads 16-byte vectors when a row is whole vectors (PyTorch's ILP elements).
bool whole_vectors(std::int64_t cols, Storage s) { return cols % (s == Storage::f32 ? 4 : 8) == 0; }
}  // namespace

const simt::Kernel* reduction_kernel(OpKind kind, ReductionVariant variant, Storage storage, std::int64_t cols,
                                     int wave_size) {
    if (kind != OpKind::softmax && kind != OpKind::layernorm) return nullptr;
    wave_size = torch_warp_size(wave_size);
    if (kind == OpKind::layernorm && softmax_only(variant)) return nullptr;
    if (torch_layernorm(variant))
        return kind == OpKind::layernorm ? torch_layernorm_kernel(variant, storage, false, wave_size) : nullptr;
    // Per variant one kernel, but one per power of two for the persistent kernel and one per load
    // width for the global one.
    int size_key = 0;
    if (variant == ReductionVariant::softmax_warp_persistent) size_key = next_pow2_log2(std::max<std::int64_t>(1, cols));
    if (variant == ReductionVariant::softmax_block_global) size_key = whole_vectors(cols, storage) ? 1 : 0;
    // PyTorch's softmax kernels come in the target's build (warp size 32, or 64 for ROCm); the
    // OneFlow-style ones are the 32-lane kernels everywhere.
    const int wave = softmax_only(variant) ? wave_size : 32;
    static std::mutex mutex;
    static std::map<std::tuple<OpKind, ReductionVariant, Storage, int, int>, std::unique_ptr<simt::Kernel>> kernels;
    const std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[{kind, variant, storage, size_key, wave}];
    if (!k) {
        std::string source;
        if (variant == ReductionVariant::softmax_warp_persistent) {
            source = PersistentSoftmaxGenerator(storage, size_key, wave).source();
        } else if (variant == ReductionVariant::softmax_block_smem) {
            source = BlockSoftmaxGenerator(storage, true, true, wave).source();
        } else if (variant == ReductionVariant::softmax_block_global) {
            source = BlockSoftmaxGenerator(storage, false, size_key == 1, wave).source();
        } else {
            source = Generator(kind, variant, storage).source();
        }
        k = std::make_unique<simt::Kernel>(simt::assemble(
            source, "<gpu library>/" + std::string(to_string(kind)) + "_" + to_string(variant) + "_" +
                        to_string(storage) + "_" + std::to_string(size_key) + (wave == 32 ? "" : "_wave64")));
    }
    return k.get();
}

std::int64_t warp_rows_per_block(std::int64_t rows, int sms) {
    std::int64_t per_block = kReductionBlock / 32;
    while (per_block > 1 && per_block * std::max(1, sms) > rows) per_block /= 2;
    return per_block;
}

ReductionVariant eight_bit_row_variant(OpKind kind, std::int64_t rows, std::int64_t cols, Storage storage,
                                       const LoweringTarget& target) {
    if (reduction_variant(cols) == ReductionVariant::block_per_row) return ReductionVariant::block_per_row;
    const std::int64_t sms = std::max(1, target.sms), words = storage_words(cols, storage);
    const std::int64_t per_block = warp_rows_per_block(rows, target.sms);
    const std::int64_t warp_rows =
        sms * per_block *
        blocks_per_sm(*reduction_kernel(kind, ReductionVariant::warp_per_row, storage),
                      static_cast<std::uint32_t>(32 * per_block), target);
    const std::int64_t block_rows =
        sms * blocks_per_sm(*reduction_kernel(kind, ReductionVariant::block_per_row, storage), kReductionBlock, target);
    const std::int64_t warp_steps = ceil_div(rows, warp_rows) * (ceil_div(words, 2 * 32) + 1);
    const std::int64_t block_steps =
        ceil_div(rows, block_rows) * (ceil_div(words, 2 * static_cast<std::int64_t>(kReductionBlock)) + 1);
    return block_steps < warp_steps ? ReductionVariant::block_per_row : ReductionVariant::warp_per_row;
}

LoweredKernel lower_row_reduction(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                  ReductionVariant variant) {
    if (op.kind != OpKind::softmax && op.kind != OpKind::layernorm)
        throw std::invalid_argument("lower_row_reduction: " + std::string(to_string(op.kind)) +
                                    " is not softmax or layernorm");
    const bool ln = op.kind == OpKind::layernorm;
    const Storage s = eight_bit_storage(op.dtype).value_or(storage_of(op.dtype));
    const std::int64_t rows = op.rows, cols = op.cols;
    const std::int64_t words = storage_words(cols, s);
    const std::uint64_t tensor_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, rows)) *
                                       static_cast<std::uint64_t>(std::max<std::int64_t>(0, words)) * 4;
    if (rows <= 0 || cols <= 0 || rows > INT32_MAX || cols > INT32_MAX ||
        2 * tensor_bytes + 2 * static_cast<std::uint64_t>(words) * 4 > kVectorOpMaxBufferBytes)
        throw LoweringError("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) + " is outside what the "
                            "gpu " + std::string(to_string(op.kind)) + " kernel handles (at least 1 x 1, at most "
                            "1 GiB of operands)");
    if (ln && softmax_only(variant))
        throw std::invalid_argument("lower_row_reduction: " + std::string(to_string(variant)) + " is a softmax kernel");
    if (!ln && torch_layernorm(variant))
        throw std::invalid_argument("lower_row_reduction: " + std::string(to_string(variant)) + " is a layernorm kernel");
    if (variant == ReductionVariant::layernorm_vectorized && layernorm_variant(cols) != variant)
        throw std::invalid_argument("lower_row_reduction: layernorm_vectorized needs cols a multiple of 4 (at most "
                                    "2^24); cols=" + std::to_string(cols));
    if (variant == ReductionVariant::softmax_block_smem &&
        (!whole_vectors(cols, s) || cols * (s == Storage::f32 ? 4 : 2) > kSharedMemPerBlock - 128))
        throw std::invalid_argument("lower_row_reduction: softmax_block_smem needs rows of whole 16-byte vectors "
                                    "that fit 48 KB; cols=" + std::to_string(cols));
    if (is_eight_bit(s) && variant != ReductionVariant::warp_per_row && variant != ReductionVariant::block_per_row)
        throw std::invalid_argument("lower_row_reduction: 8-bit " + std::string(to_string(op.kind)) +
                                    " runs the warp_per_row and block_per_row kernels only, not " + to_string(variant));
    const int wave_size = torch_warp_size(target.sm.limits.wave_size);
    const simt::Kernel* kernel = reduction_kernel(op.kind, variant, s, cols, wave_size);

    LoweredKernel out;
    out.kernel = kernel;
    const std::uint32_t x = memory.allocate(static_cast<std::size_t>(tensor_bytes));
    std::uint32_t gamma = 0, beta = 0;
    if (ln) {
        gamma = memory.allocate(static_cast<std::size_t>(words) * 4);
        beta = memory.allocate(static_cast<std::size_t>(words) * 4);
    }
    const std::uint32_t y = memory.allocate(static_cast<std::size_t>(tensor_bytes));
    // PyTorch's kernels also write each row's mean and rstd (fp32 outputs of native_layer_norm).
    std::uint32_t mean = 0, rstd = 0;
    if (torch_layernorm(variant)) {
        mean = memory.allocate(static_cast<std::size_t>(rows) * 4);
        rstd = memory.allocate(static_cast<std::size_t>(rows) * 4);
    }
    // 8-bit: the scales (s8) and what the check needs. int8 output scales are calibrated on the
    // host as the 8-bit elementwise kernels' (max|reference| / 127, the reference on the values as
    // read), softmax's too. Its outputs lie in [0, 1], so the range alone would give 1/127, but
    // that rounds every probability below 1/254 to zero: a row of more than about 2,000 columns
    // keeps none (64 x 4099 on [-8, 8): all outputs 0, relative RMS error 0.999), where the
    // calibrated scale is never coarser (the largest probability is at most 1) and, fitted to the
    // op's own outputs, never clips.
    // fp8 outputs carry a per-tensor scale too, the power of two that brings max|reference| just
    // under the format's largest value (fp8_output_scale), as fp8 attention scales its
    // probabilities (cuDNN's fp8 SDPA, FlashAttention-3) and Transformer Engine a LayerNorm's fp8
    // output: unscaled, a softmax row's probabilities (about 1/cols each) fall below e4m3's
    // smallest normal, 2^-6, and keep 1 to 3 significant bits (docs/gpu.md "8-bit softmax and
    // layernorm" measures both).
    std::shared_ptr<EightBitIo> io;
    if (is_eight_bit(s)) {
        io = std::make_shared<EightBitIo>();
        io->dtype = op.dtype;
        io->encoding = target.sm.fp8_encoding;
        if (s != Storage::s8) io->fp8_largest = fp8_max(op.dtype, io->encoding);
    }
    // Stores an input: s8 quantized with its per-tensor scale (quantization.h), which it returns.
    auto store_input = [&](std::uint32_t address, const std::vector<float>& values) {
        if (!io) {
            store_elements(memory, address, values, s);
            return 1.0f;
        }
        if (s != Storage::s8) {
            store_elements(memory, address, values, s, io->encoding);
            return 1.0f;
        }
        const QuantizedOperand q = quantize_operand(values, DType::int8);
        store_elements(memory, address, q.values, s);
        return static_cast<float>(q.scale);
    };
    if (target.real_data) {
        // Row r starts at element r * pitch; a 16-bit row of odd cols keeps a zero padding half
        // (8-bit: up to three zero padding values).
        const std::int64_t pitch = words * elements_per_word(s);
        std::mt19937_64 rng = tensor_rng(target.seed, 0);
        std::vector<float> values(static_cast<std::size_t>(rows * pitch), 0.0f);
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t j = 0; j < cols; ++j)  // softmax: [-8, 8); layernorm: [-1, 3), mean 1
                values[static_cast<std::size_t>(r * pitch + j)] =
                    ln ? 2.0f * unit_random(rng) + 1.0f : kSoftmaxRange * unit_random(rng);
        const float scale_x = store_input(x, values);
        std::vector<float> g, b;
        float scale_gamma = 1, scale_beta = 1;
        if (ln) {  // gamma in [0.5, 1.5), beta in [-0.5, 0.5)
            std::mt19937_64 rg = tensor_rng(target.seed, 1), rb = tensor_rng(target.seed, 2);
            g.resize(static_cast<std::size_t>(cols));
            b.resize(g.size());
            for (float& v : g) v = 1.0f + 0.5f * unit_random(rg);
            for (float& v : b) v = 0.5f * unit_random(rb);
            scale_gamma = store_input(gamma, g);
            scale_beta = store_input(beta, b);
        }
        if (io) {
            io->scale_x = scale_x;
            io->scale_gamma = scale_gamma;
            io->scale_beta = scale_beta;
            // The output scale (int8_output_scale, fp8_output_scale) over the op on the values as
            // read.
            const auto n = static_cast<std::size_t>(cols);
            std::vector<double> in(n), gd(n), bd(n), want(static_cast<std::size_t>(rows) * n);
            for (std::int64_t j = 0; ln && j < cols; ++j) {
                gd[static_cast<std::size_t>(j)] = input_value(memory, gamma, j, s, io.get(), scale_gamma);
                bd[static_cast<std::size_t>(j)] = input_value(memory, beta, j, s, io.get(), scale_beta);
            }
            for (std::int64_t r = 0; r < rows; ++r) {
                for (std::int64_t j = 0; j < cols; ++j)
                    in[static_cast<std::size_t>(j)] = input_value(memory, x, r * pitch + j, s, io.get(), scale_x);
                double* row_want = want.data() + static_cast<std::size_t>(r) * n;
                if (ln) layernorm_row_double(in.data(), cols, gd.data(), bd.data(), row_want);
                else softmax_row_double(in.data(), cols, row_want);
            }
            io->output_scale = s == Storage::s8 ? int8_output_scale(want)
                                                : fp8_output_scale(want, io->fp8_largest);
            io->x = std::move(values);
            io->gamma = std::move(g);
            io->beta = std::move(b);
        }
    }
    out.args = {static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(cols), static_cast<std::uint32_t>(words), x};
    if (ln) {
        const float inv_cols = 1.0f / static_cast<float>(cols);
        std::uint32_t bits;
        std::memcpy(&bits, &inv_cols, 4);
        out.args.insert(out.args.end(), {gamma, beta, y, bits});
    } else {
        out.args.push_back(y);
    }
    if (s == Storage::s8) {
        out.args.push_back(float_argument(io->scale_x));
        if (ln) out.args.insert(out.args.end(), {float_argument(io->scale_gamma), float_argument(io->scale_beta)});
    }
    if (io) out.args.push_back(float_argument(1.0f / static_cast<float>(io->output_scale)));

    std::int64_t rows_per_block = 1;
    std::uint32_t threads = kReductionBlock;
    std::int64_t grid = 0;
    if (variant == ReductionVariant::layernorm_vectorized) {
        // launch_vectorized_layer_norm_kernel: blocks(M), threads(warp_size, num_threads() / warp_size).
        out.args = {static_cast<std::uint32_t>(cols), x, gamma, beta, y, mean, rstd};
        threads = static_cast<std::uint32_t>(layernorm_vectorized_threads(wave_size));
        grid = rows;
        blocks_per_sm(*kernel, threads, target);
    } else if (variant == ReductionVariant::layernorm_moments) {
        // RowwiseMomentsCUDAKernel<<<M, 512>>>, then LayerNormForwardCUDAKernel<<<M, 256>>>.
        const auto w = static_cast<std::uint32_t>(words);
        out.args = {static_cast<std::uint32_t>(cols), w, x, mean, rstd};
        threads = kLayernormMomentsThreads;
        grid = rows;
        blocks_per_sm(*kernel, threads, target);
        const simt::Kernel* forward = torch_layernorm_kernel(variant, s, true);
        blocks_per_sm(*forward, kLayernormForwardThreads, target);
        out.then.push_back({forward, {static_cast<std::uint32_t>(rows), kLayernormForwardThreads},
                            {static_cast<std::uint32_t>(cols), w, x, gamma, beta, y, mean, rstd}});
    } else if (variant == ReductionVariant::softmax_warp_persistent) {
        // dispatch_softmax_forward: 128 threads, groups of G lanes with B rows each, a block per
        // 128 / G x B rows, as many blocks as that takes (no grid-stride).
        const PersistentSoftmaxGenerator g(s, next_pow2_log2(cols), wave_size);
        rows_per_block = kPersistentSoftmaxBlock / g.group() * g.batch();
        threads = kPersistentSoftmaxBlock;
        grid = (rows + rows_per_block - 1) / rows_per_block;
        blocks_per_sm(*kernel, threads, target);  // a target that cannot hold the block is an error
    } else if (variant == ReductionVariant::softmax_block_smem || variant == ReductionVariant::softmax_block_global) {
        // host_softmax: dim3 grid(outer_size), one block per row.
        threads = softmax_block_threads(cols, wave_size);
        grid = rows;
        blocks_per_sm(*kernel, threads, target);
    } else {
        // Grid-stride over rows, the grid capped at one wave. Block per row: 256 threads a row. Warp
        // per row: up to 8 rows (warps) per block, fewer when the rows would not reach every SM
        // (BERT's 128-row layernorm on 108 SMs: one warp per block, 128 blocks, not 16).
        rows_per_block = variant == ReductionVariant::warp_per_row ? warp_rows_per_block(rows, target.sms) : 1;
        threads = static_cast<std::uint32_t>(variant == ReductionVariant::warp_per_row ? 32 * rows_per_block
                                                                                        : kReductionBlock);
        const std::int64_t wave =
            static_cast<std::int64_t>(std::max(1, target.sms)) * blocks_per_sm(*kernel, threads, target);
        grid = std::min((rows + rows_per_block - 1) / rows_per_block, wave);
    }
    out.dims = {static_cast<std::uint32_t>(grid), threads};

    out.stats.push_back(stat_value(stat::grid, static_cast<double>(out.dims.grid)));
    out.stats.push_back(stat_value(stat::block, static_cast<double>(out.dims.block)));
    out.stats.push_back(stat_value(stat::variant, static_cast<double>(static_cast<int>(variant))));
    out.stats.push_back(stat_value(stat::rows_per_block, static_cast<double>(rows_per_block)));

    if (target.real_data) {
        if (ln)
            out.check = [rows, cols, s, x, gamma, beta, y, welford = torch_layernorm(variant), io](const simt::GlobalMemory& m) {
                return check_layernorm(m, rows, cols, s, x, gamma, beta, y, welford, io.get());
            };
        else
            out.check = [rows, cols, s, x, y, io](const simt::GlobalMemory& m) {
                return check_softmax(m, rows, cols, s, x, y, io.get());
            };
    }
    return out;
}

// PyTorch has no int8 or fp8 softmax or layernorm kernel (its CUDA dispatch covers float, half
// and bfloat16), so 8-bit rows run the library's warp- and block-per-row kernels
// (eight_bit_row_variant) on 8-bit storage.
LoweredKernel lower_softmax(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    if (const auto s = eight_bit_storage(op.dtype))
        return lower_row_reduction(op, memory, target, eight_bit_row_variant(op.kind, op.rows, op.cols, *s, target));
    return lower_row_reduction(op, memory, target,
                               softmax_variant(op.cols, storage_of(op.dtype), target.sm.limits.shared_memory_per_block_bytes,
                                               torch_warp_size(target.sm.limits.wave_size)));
}

LoweredKernel lower_layernorm(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    if (const auto s = eight_bit_storage(op.dtype))
        return lower_row_reduction(op, memory, target, eight_bit_row_variant(op.kind, op.rows, op.cols, *s, target));
    return lower_row_reduction(op, memory, target, layernorm_variant(op.cols));
}

}  // namespace accelsim::gpu
