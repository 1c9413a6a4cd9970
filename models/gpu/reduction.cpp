#include "models/gpu/reduction.h"
#include "models/gpu/gpu_stats.h"

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
    return v == ReductionVariant::warp_per_row ? "warp_per_row" : "block_per_row";
}

ReductionVariant reduction_variant(std::int64_t cols) {
    return cols <= kWarpPerRowMaxCols ? ReductionVariant::warp_per_row : ReductionVariant::block_per_row;
}

namespace {

// Register plan (addresses and integers never share a register with float data, so timing-only
// runs may skip the payload):
//   r0 row, r1 row stride, r2 first word of the thread in a row, r3 word step, r4 / r5 row base
//   address of x / y, r6 word index j, r7 j * 4, r8 element address, r9 full words (cols / 2),
//   r17 this warp's shared slot, r22 the shared slot this lane reads back (block per row);
//   r23 last word of an unrolled trip, then the gamma / beta address;
//   data: r10 accumulator, r11 / r12 low / high element, r13 temporary, r14 -max*log2(e) or mean,
//   r15 1/sum or rstd, r16 shuffle partner, r18..r21 gamma / beta (low, high) of the one-word loop
//   and beta of an unrolled trip, r24..r31 the words of an unrolled trip (r28..r31 gamma in
//   layernorm's output pass). 32 registers cost no occupancy at 256 threads (8 blocks by warps and
//   by registers on sm_80).
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
        out_ += ln ? ".param rows, cols, words, x, gamma, beta, y, inv_cols\n" : ".param rows, cols, words, x, y\n";
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
        if (s_ != Storage::f32) emit("shr r9, cols, 1");  // words whose high half is in the row
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
    template <class PerValue>
    void for_each_word(const std::string& tag, const std::string& high_identity, PerValue per_value,
                       const std::string& per_word_prefix = "", const std::string& per_word = "",
                       int max_unroll = 1, bool store_unrolled = false, bool gamma_beta = false) {
        emit("mov r6, r2");
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
        emit("ld.global r11, [r8]");
        out_ += per_word_prefix;
        if (s_ == Storage::f32) {
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
        if (s_ != Storage::f32) {
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

// Bytes an op's buffers may total: global memory is 32-bit addressed, and a test machine's RAM.
constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{1} << 30;
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

// Softmax against p_j = exp(x_j - m) / sum_k exp(x_k - m) in double, on the stored inputs.
// fp32 error of one output, X = max |x|, u = 2^-24:
// - the exponent t_j = fma(x_j, L, -fl(m L)) with L = fl(log2 e) (off by u log2 e relative) is off
//   from (x_j - m) log2 e by at most log2e u (|x_j| + 2|m|) + u |t_j| <= log2e u (3X + 2X) = 7.2 X u;
// - 2^t is then off by ln2 * 7.2 X u + 2u (ex2 within an ulp) = (5X + 2) u relative;
// - the sum of positives adds at most (adds on the longest path) u <= (cols + 8) u;
// - rcp and the final fmul u each. Numerator and denominator together:
//   (10 X + cols + 16) u relative. A 16-bit store rounds once more (u_storage, plus half a
//   subnormal spacing). Each row must also sum to 1 within the sum of its outputs' bounds.
LoweringNumerics check_softmax(const simt::GlobalMemory& m, std::int64_t rows, std::int64_t cols, Storage s,
                               std::uint32_t x, std::uint32_t y) {
    LoweringNumerics num;
    const std::int64_t pitch = storage_words(cols, s) * elements_per_word(s);
    const double us = s == Storage::f32 ? 0.0 : unit_roundoff(s);
    const double floor = std::ldexp(1.0, -126) + (s == Storage::f32 ? 0.0 : subnormal_half_spacing(s));
    std::vector<double> in(static_cast<std::size_t>(cols)), e(static_cast<std::size_t>(cols));
    for (std::int64_t r = 0; r < rows; ++r) {
        double mx = -INFINITY, big = 0;
        for (std::int64_t j = 0; j < cols; ++j) {
            const double v = load_element(m, x, r * pitch + j, s);
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
            const double got = load_element(m, y, r * pitch + j, s);
            row_sum += got;
            record(num, got, want, rel * want + floor);
        }
        record(num, row_sum, 1.0, rel + static_cast<double>(cols) * floor);
    }
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
LoweringNumerics check_layernorm(const simt::GlobalMemory& m, std::int64_t rows, std::int64_t cols, Storage s,
                                 std::uint32_t x, std::uint32_t gamma, std::uint32_t beta, std::uint32_t y) {
    LoweringNumerics num;
    const std::int64_t pitch = storage_words(cols, s) * elements_per_word(s);
    const double us = s == Storage::f32 ? 0.0 : unit_roundoff(s);
    const double floor = s == Storage::f32 ? 0.0 : subnormal_half_spacing(s);
    const double n = static_cast<double>(cols);
    std::vector<double> in(static_cast<std::size_t>(cols)), g(in.size()), b(in.size());
    for (std::int64_t j = 0; j < cols; ++j) {
        g[static_cast<std::size_t>(j)] = load_element(m, gamma, j, s);
        b[static_cast<std::size_t>(j)] = load_element(m, beta, j, s);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
        double mean = 0, big = 0;
        for (std::int64_t j = 0; j < cols; ++j) {
            const double v = load_element(m, x, r * pitch + j, s);
            in[static_cast<std::size_t>(j)] = v;
            mean += v;
            big = std::max(big, std::fabs(v));
        }
        mean /= n;
        double var = 0;
        for (double v : in) var += (v - mean) * (v - mean);
        var /= n;
        const double rstd = 1.0 / std::sqrt(var + static_cast<double>(kLayernormEps));
        for (std::int64_t j = 0; j < cols; ++j) {
            const auto jj = static_cast<std::size_t>(j);
            const double z = (in[jj] - mean) * rstd;
            const double want = z * g[jj] + b[jj];
            const double tol32 =
                2.0 * kU32 * (std::fabs(g[jj]) * ((n + 10.0) * big * rstd + (n / 2 + 12.0) * std::fabs(z)) + std::fabs(want));
            const double got = load_element(m, y, r * pitch + j, s);
            record(num, got, want, tol32 + us * (std::fabs(want) + tol32) + floor);
        }
    }
    return num;
}

}  // namespace

const simt::Kernel* reduction_kernel(OpKind kind, ReductionVariant variant, Storage storage) {
    if (kind != OpKind::softmax && kind != OpKind::layernorm) return nullptr;
    static std::mutex mutex;
    static std::map<std::tuple<OpKind, ReductionVariant, Storage>, std::unique_ptr<simt::Kernel>> kernels;
    const std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[{kind, variant, storage}];
    if (!k) {
        Generator g(kind, variant, storage);
        k = std::make_unique<simt::Kernel>(simt::assemble(
            g.source(), "<gpu library>/" + std::string(to_string(kind)) + "_" + to_string(variant) + "_" +
                            to_string(storage)));
    }
    return k.get();
}

std::int64_t warp_rows_per_block(std::int64_t rows, int sms) {
    std::int64_t per_block = kReductionBlock / 32;
    while (per_block > 1 && per_block * std::max(1, sms) > rows) per_block /= 2;
    return per_block;
}

LoweredKernel lower_row_reduction(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target,
                                  ReductionVariant variant) {
    if (op.kind != OpKind::softmax && op.kind != OpKind::layernorm)
        throw std::invalid_argument("lower_row_reduction: " + std::string(to_string(op.kind)) +
                                    " is not softmax or layernorm");
    const bool ln = op.kind == OpKind::layernorm;
    const Storage s = storage_of(op.dtype);
    const std::int64_t rows = op.rows, cols = op.cols;
    const std::int64_t words = storage_words(cols, s);
    const std::uint64_t tensor_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, rows)) *
                                       static_cast<std::uint64_t>(std::max<std::int64_t>(0, words)) * 4;
    if (rows <= 0 || cols <= 0 || rows > INT32_MAX || cols > INT32_MAX ||
        2 * tensor_bytes + 2 * static_cast<std::uint64_t>(words) * 4 > kMaxBufferBytes)
        throw LoweringError("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) + " is outside what the "
                            "gpu " + std::string(to_string(op.kind)) + " kernel handles (at least 1 x 1, at most "
                            "1 GiB of operands)");
    const simt::Kernel* kernel = reduction_kernel(op.kind, variant, s);

    LoweredKernel out;
    out.kernel = kernel;
    const std::uint32_t x = memory.allocate(static_cast<std::size_t>(tensor_bytes));
    std::uint32_t gamma = 0, beta = 0;
    if (ln) {
        gamma = memory.allocate(static_cast<std::size_t>(words) * 4);
        beta = memory.allocate(static_cast<std::size_t>(words) * 4);
    }
    const std::uint32_t y = memory.allocate(static_cast<std::size_t>(tensor_bytes));
    if (target.real_data) {
        // Row r starts at element r * pitch; a 16-bit row of odd cols keeps a zero padding half.
        const std::int64_t pitch = words * elements_per_word(s);
        std::mt19937_64 rng = tensor_rng(target.seed, 0);
        std::vector<float> values(static_cast<std::size_t>(rows * pitch), 0.0f);
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t j = 0; j < cols; ++j)  // softmax: [-8, 8); layernorm: [-1, 3), mean 1
                values[static_cast<std::size_t>(r * pitch + j)] =
                    ln ? 2.0f * unit_random(rng) + 1.0f : kSoftmaxRange * unit_random(rng);
        store_elements(memory, x, values, s);
        if (ln) {  // gamma in [0.5, 1.5), beta in [-0.5, 0.5)
            std::mt19937_64 rg = tensor_rng(target.seed, 1), rb = tensor_rng(target.seed, 2);
            std::vector<float> g(static_cast<std::size_t>(cols)), b(g.size());
            for (float& v : g) v = 1.0f + 0.5f * unit_random(rg);
            for (float& v : b) v = 0.5f * unit_random(rb);
            store_elements(memory, gamma, g, s);
            store_elements(memory, beta, b, s);
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

    // Grid-stride over rows, the grid capped at one wave. Block per row: 256 threads a row. Warp
    // per row: up to 8 rows (warps) per block, fewer when the rows would not reach every SM
    // (BERT's 128-row layernorm on 108 SMs: one warp per block, 128 blocks, not 16).
    const std::int64_t rows_per_block = variant == ReductionVariant::warp_per_row
                                            ? warp_rows_per_block(rows, target.sms)
                                            : 1;
    const auto threads = static_cast<std::uint32_t>(
        variant == ReductionVariant::warp_per_row ? 32 * rows_per_block : kReductionBlock);
    const std::int64_t wave =
        static_cast<std::int64_t>(std::max(1, target.sms)) * blocks_per_sm(*kernel, threads, target);
    out.dims = {static_cast<std::uint32_t>(std::min((rows + rows_per_block - 1) / rows_per_block, wave)), threads};

    out.stats.push_back(stat_value(stat::grid, static_cast<double>(out.dims.grid)));
    out.stats.push_back(stat_value(stat::block, static_cast<double>(out.dims.block)));
    out.stats.push_back(stat_value(stat::variant, variant == ReductionVariant::warp_per_row ? 0.0 : 1.0));
    out.stats.push_back(stat_value(stat::rows_per_block, static_cast<double>(rows_per_block)));

    if (target.real_data) {
        if (ln)
            out.check = [rows, cols, s, x, gamma, beta, y](const simt::GlobalMemory& m) {
                return check_layernorm(m, rows, cols, s, x, gamma, beta, y);
            };
        else
            out.check = [rows, cols, s, x, y](const simt::GlobalMemory& m) { return check_softmax(m, rows, cols, s, x, y); };
    }
    return out;
}

LoweredKernel lower_softmax(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    return lower_row_reduction(op, memory, target, reduction_variant(op.cols));
}

LoweredKernel lower_layernorm(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target) {
    return lower_row_reduction(op, memory, target, reduction_variant(op.cols));
}

}  // namespace accelsim::gpu
