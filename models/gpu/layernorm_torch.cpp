// PyTorch's CUDA layernorm forward kernels in the project's warp ISA (reduction.h:
// layernorm_variant, torch_layernorm_kernel; docs/gpu.md "Layernorm: PyTorch's kernels").
// Source: aten/src/ATen/native/cuda/layer_norm_kernel.cu, block_reduce.cuh, thread_constants.h and
// SharedReduceOps.h (WelfordOps), pytorch commit 0005c538e468a9597b4372816aecacb33733deb6.
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "models/gpu/kernel_text.h"
#include "models/gpu/reduction.h"

namespace accelsim::gpu {

ReductionVariant layernorm_variant(std::int64_t cols) {
    // LayerNormKernelImplInternal: the vectorized kernel for float, half and bfloat16 when
    // N <= 2^24 (its Welford count is a float), N % vec_size == 0 and X, Y, gamma, beta are aligned
    // to vec_size elements (every buffer here is 256-byte aligned).
    return cols % kLayernormVecElements == 0 && cols <= (std::int64_t{1} << 24) ? ReductionVariant::layernorm_vectorized
                                                                                : ReductionVariant::layernorm_moments;
}

namespace {

std::string half_name(Storage s) { return s == Storage::f16 ? "f16" : "bf16"; }

using kernel_text::r;

// The IEEE division d = x / s as nvcc emits it without fast math (reduction.cpp: division_setup
// and division, here with the divisor kept): t1 = rcp(s), t2 = -s, t3 = 1 - s t1, t1 += t1 t3,
// t3 = x t1, d = x - s t3, d = t3 + t1 d. d may be x.
std::vector<std::string> ieee_divide(const std::string& d, const std::string& x, const std::string& s,
                                     const std::string& t1, const std::string& t2, const std::string& t3) {
    return {"rcp " + t1 + ", " + s,
            "fmul " + t2 + ", " + s + ", -1.0",
            "ffma " + t3 + ", " + t2 + ", " + t1 + ", 1.0",
            "ffma " + t1 + ", " + t1 + ", " + t3 + ", " + t1,
            "fmul " + t3 + ", " + x + ", " + t1,
            "ffma " + d + ", " + t2 + ", " + t3 + ", " + x,
            "ffma " + d + ", " + d + ", " + t1 + ", " + t3};
}

// The IEEE reciprocal 1.f / c as nvcc emits it without fast math (MUFU.RCP and a Newton step;
// the range check's slow path is not taken for counts): d = rcp(c); e = 1 - c d; d += d e.
// `t` is a temporary.
std::vector<std::string> reciprocal(const std::string& d, const std::string& c, const std::string& t) {
    return {"rcp " + d + ", " + c, "fmul " + t + ", " + c + ", -1.0", "ffma " + t + ", " + t + ", " + d + ", 1.0",
            "ffma " + d + ", " + d + ", " + t + ", " + d};
}

// What the three generators share: the kernel text being written, and the storage it is for.
class KernelText {
protected:
    explicit KernelText(Storage s) : s_(s) {}
    void emit(const std::string& line) { out_ += "    " + line + "\n"; }
    void label(const std::string& l) { out_ += l + ":\n"; }
    static std::string eps() {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9e", static_cast<double>(kLayernormEps));
        return buf;
    }

    Storage s_;
    std::string out_;
};

// vectorized_layer_norm_kernel: one block of num_threads() = 4 warps (threads(32, 4)) per row
// (grid = M), 24 bytes of shared memory (threads.y * 3/2 floats); ROCm's build (W = 64):
// num_threads() = 1024, threads(64, 16), 96 bytes. compute_stats: each thread reads
// its vectors of vec_size = 4 elements (16 bytes fp32, 8 bytes 16-bit: ld.global.v4 / .v2) at
// thread, thread + num_threads(), ..., folding each element into its Welford state (cuWelfordOnlineSum);
// the warp combines by shuffle-down W / 2 .. 1 (cuWelfordCombine of mean, sigma2, count; with W =
// 64 the first step crosses the wave's halves), the warps'
// lane 0s by a tree through shared memory (log2 of the warps rounds, two barriers each), thread 0 stores the
// mean and sigma2 / N, a barrier, every thread reads them. rstd = rsqrt(var + eps). The second
// loop reads the row again with gamma and beta and stores y = gamma (rstd (x - mean)) + beta;
// thread 0 stores the row's mean and rstd (fp32 outputs of native_layer_norm).
// The statistics loop takes 2 vectors a trip while both lie in the row (their loads issued
// together: the loop has no stores), then one; the output loop one (y may alias gamma and beta,
// so a trip's loads wait for the previous store). nvcc's actual unrolling is not published.
// Registers: r0 row, r1 row bytes, r2 thread byte offset, r3 x row address, r4 y row address,
// r5 offset of a trip's last vector, r6 address, r7 mean/rstd address; data r10 mean, r11
// sigma2, r12 count, r13..r16 temporaries, r17..r20 the shuffled / shared partner state (then beta
// of the output loop), r21 rstd, r24..r31 two vectors (then x and gamma); W = 64: r9 the wave, r22 the lane in it.
class VectorizedGenerator : KernelText {
public:
    VectorizedGenerator(Storage s, int wave) : KernelText(s), wave_(wave) {}

    std::string source() {
        const int vec_bytes = s_ == Storage::f32 ? 16 : 8;
        const int step = layernorm_vectorized_threads(wave_) * vec_bytes;  // bytes between a thread's vectors
        const int warps = layernorm_vectorized_threads(wave_) / wave_;   // blockDim.y
        // threadIdx.y: the warp (%warpid) with W = 32; with W = 64 the wave, tid / 64.
        const std::string wave_index = wave_ == 32 ? "%warpid" : "r9";
        // meansigmabuf: 2 floats for each of the warps / 2 writers, then countbuf (buf + blockDim.y).
        const std::string countbuf = "+" + std::to_string(4 * warps);
        out_ = ".kernel layernorm_torch_vectorized_" + std::string(to_string(s_)) +
               (wave_ == 32 ? "" : "_wave" + std::to_string(wave_)) +
               "\n.param cols, x, gamma, beta, y, mean, rstd\n.reg 32\n.shared " + std::to_string(warps * 3 / 2 * 4) + "\n";
        emit("mov r0, %ctaid");
        emit("shl r1, cols, " + std::string(s_ == Storage::f32 ? "2" : "1"));  // row bytes
        emit("mul r3, r0, r1");
        emit("add r4, r3, y");
        emit("add r3, r3, x");
        emit("shl r2, %tid, " + std::string(s_ == Storage::f32 ? "4" : "3"));
        if (wave_ == 32) {
            emit("setp.ne.s32 p3, %laneid, 0");
        } else {  // threadIdx.x != 0: the wave's lane
            emit("and r22, %tid, 63");
            emit("setp.ne.s32 p3, r22, 0");
            emit("shr r9, %tid, 6");
        }
        emit("mov r10, 0.0");
        emit("mov r11, 0.0");
        emit("mov r12, 0.0");
        // Statistics: 2 vectors a trip, then 1.
        emit("mov r6, r2");
        label("stats_x2");
        emit("add r5, r6, " + std::to_string(step));
        emit("setp.ge.s32 p1, r5, r1");
        emit("@p1 bra stats");
        emit("add r5, r3, r6");
        load_vector(24, "r5", 0);
        load_vector(28, "r5", step);
        unpack(24);
        unpack(28);
        for (int k = 0; k < 8; ++k) online(r(24 + k));
        emit("add r6, r6, " + std::to_string(2 * step));
        emit("bra stats_x2");
        label("stats");
        emit("setp.ge.s32 p1, r6, r1");
        emit("@p1 bra stats_done");
        emit("add r5, r3, r6");
        load_vector(24, "r5", 0);
        unpack(24);
        for (int k = 0; k < 4; ++k) online(r(24 + k));
        emit("add r6, r6, " + std::to_string(step));
        emit("bra stats");
        label("stats_done");
        // Intra-warp: shuffle-down W / 2 .. 1, cuWelfordCombine(own, partner's).
        for (int offset = wave_ / 2; offset >= 1; offset /= 2) {
            emit("shfl.down r17, r10, " + std::to_string(offset));
            emit("shfl.down r18, r11, " + std::to_string(offset));
            emit("shfl.down r19, r12, " + std::to_string(offset));
            combine();
        }
        // Inter-warp (blockDim.y = 4, or 16 waves): warps [offset, 2 offset) write (lane 0),
        // barrier, warps below offset read and combine (lane 0), barrier. meansigmabuf = floats
        // 0..3, countbuf = floats 4..5 (16 waves: 0..15 and 16..23).
        for (int offset = warps / 2; offset >= 1; offset /= 2) {
            const std::string tag = "tree" + std::to_string(offset);
            emit("sub r5, " + wave_index + ", " + std::to_string(offset));
            emit("setp.ge.u32 p4, r5, " + std::to_string(offset));  // not in [offset, 2 offset)
            emit("@p4 bra " + tag + "_written");
            emit("shl r6, r5, 3");
            emit("@!p3 st.shared [r6], r10");
            emit("@!p3 st.shared [r6+4], r11");
            emit("shl r6, r5, 2");
            emit("@!p3 st.shared [r6" + countbuf + "], r12");
            label(tag + "_written");
            emit("bar.sync");
            emit("setp.ge.s32 p4, " + wave_index + ", " + std::to_string(offset));
            emit("@p4 bra " + tag + "_merged");
            emit("shl r6, " + wave_index + ", 3");
            emit("@!p3 ld.shared r17, [r6]");
            emit("@!p3 ld.shared r18, [r6+4]");
            emit("shl r6, " + wave_index + ", 2");
            emit("@!p3 ld.shared r19, [r6" + countbuf + "]");
            combine();
            label(tag + "_merged");
            emit("bar.sync");
        }
        // Thread 0: meansigmabuf[0] = mean, [1] = sigma2 / float(N) (IEEE division); barrier;
        // every thread reads both.
        emit("setp.ne.s32 p4, " + wave_index + ", 0");
        emit("@p4 bra broadcast");
        emit("i2f r13, cols");
        for (const std::string& line : ieee_divide("r11", "r11", "r13", "r14", "r15", "r16")) emit(line);
        emit("@!p3 st.shared [0], r10");
        emit("@!p3 st.shared [4], r11");
        label("broadcast");
        emit("bar.sync");
        emit("ld.shared r10, [0]");
        emit("ld.shared r11, [4]");
        emit("fadd r11, r11, " + eps());
        emit("rsqrt r21, r11");
        // Output: x, gamma, beta a vector each; gamma (rstd (x - mean)) + beta.
        emit("mov r6, r2");
        label("out");
        emit("setp.ge.s32 p1, r6, r1");
        emit("@p1 bra out_done");
        emit("add r5, r3, r6");
        load_vector(24, "r5", 0);
        emit("add r5, r6, gamma");  // gamma and beta: the vector's offset in the row
        load_vector(28, "r5", 0);
        emit("add r5, r6, beta");
        load_vector(17, "r5", 0);
        unpack(24);
        unpack(28);
        unpack(17);
        for (int k = 0; k < 4; ++k) {
            emit("fsub " + r(24 + k) + ", " + r(24 + k) + ", r10");
            emit("fmul " + r(24 + k) + ", " + r(24 + k) + ", r21");
            emit("ffma " + r(24 + k) + ", " + r(28 + k) + ", " + r(24 + k) + ", " + r(17 + k));
        }
        emit("add r5, r4, r6");
        if (s_ == Storage::f32) {
            emit("st.global.v4 [r5], r24");
        } else {
            emit("cvt." + half_name(s_) + "x2.f32 r24, r24, r25");
            emit("cvt." + half_name(s_) + "x2.f32 r25, r26, r27");
            emit("st.global.v2 [r5], r24");
        }
        emit("add r6, r6, " + std::to_string(step));
        emit("bra out");
        label("out_done");
        emit("setp.ne.s32 p5, %tid, 0");
        emit("@p5 exit");
        emit("shl r7, r0, 2");
        emit("add r5, r7, mean");
        emit("st.global [r5], r10");
        emit("add r5, r7, rstd");
        emit("st.global [r5], r21");
        return out_;
    }

private:
    int wave_;
    // One vector (vec_size = 4 elements) into registers first..first+3 (16-bit: its two words into
    // first, first + 1; unpack spreads them).
    void load_vector(int first, const std::string& address, int offset) {
        const std::string off = offset == 0 ? "" : "+" + std::to_string(offset);
        emit(std::string("ld.global") + (s_ == Storage::f32 ? ".v4 " : ".v2 ") + r(first) + ", [" + address + off + "]");
    }
    // 16-bit: words w0 (first), w1 (first + 1) -> elements lo w0, hi w0, lo w1, hi w1 in first..first+3.
    void unpack(int first) {
        if (s_ == Storage::f32) return;
        const std::string t = half_name(s_);
        emit("cvt.f32." + t + ".hi " + r(first + 3) + ", " + r(first + 1));
        emit("cvt.f32." + t + ".lo " + r(first + 2) + ", " + r(first + 1));
        emit("cvt.f32." + t + ".hi " + r(first + 1) + ", " + r(first));
        emit("cvt.f32." + t + ".lo " + r(first) + ", " + r(first));
    }
    // cuWelfordOnlineSum: delta = v - mean; count += 1; mean += delta * (1.f / count);
    // sigma2 += delta * (v - mean).
    void online(const std::string& v) {
        emit("fsub r13, " + v + ", r10");
        emit("fadd r12, r12, 1.0");
        for (const std::string& line : reciprocal("r14", "r12", "r15")) emit(line);
        emit("ffma r10, r13, r14, r10");
        emit("fsub r15, " + v + ", r10");
        emit("ffma r11, r13, r15, r11");
    }
    // cuWelfordCombine(dataB = own r10..r12, dataA = partner r17..r19): delta = B.mean - A.mean;
    // count = A.count + B.count; if count > 0: coef = 1.f / count, nA = A.count coef,
    // nB = B.count coef, mean = nA A.mean + nB B.mean,
    // sigma2 = A.sigma2 + B.sigma2 + delta delta A.count nB; else 0, 0.
    void combine() {
        emit("fsub r13, r10, r17");
        emit("fadd r20, r19, r12");
        for (const std::string& line : reciprocal("r14", "r20", "r15")) emit(line);
        emit("fmul r15, r19, r14");  // nA
        emit("fmul r16, r12, r14");  // nB
        emit("fmul r10, r16, r10");
        emit("ffma r10, r15, r17, r10");
        emit("fadd r11, r18, r11");
        emit("fmul r13, r13, r13");
        emit("fmul r13, r13, r19");
        emit("ffma r11, r13, r16, r11");
        emit("setp.gt.f32 p2, r20, 0.0");
        emit("selp r10, r10, 0.0, p2");
        emit("selp r11, r11, 0.0, p2");
        emit("mov r12, r20");
    }

};

// The fallback (N not a multiple of 4): RowwiseMomentsCUDAKernel<<<M, 512>>> then
// LayerNormForwardCUDAKernel<<<M, 256>>>, one element per thread a trip (scalar loads).
// Moments: WelfordOps::reduce per element (count as an integer, new_nf = float(count),
// mean += delta / new_nf with the IEEE division), cuda_utils::BlockReduce with WelfordOps::combine
// (shuffle-down of mean, m2, nf; the int64 n is dead after the loop: combine sets it to -1),
// partials of the 16 warps through shared memory between two barriers, warp 0 reduces them;
// thread 0 projects var = m2 / nf and stores mean and rsqrt(var + eps). ROCm's build (W = 64):
// 8 waves shuffle down 32 .. 1, their 8 partials go through shared memory, wave 0 reduces them.
// 16-bit elements: a thread's element index keeps its parity (the strides are even), so it loads
// the word holding its element and shifts its half down (one load per element, as PyTorch's
// 16-bit loads; the word's other half is its neighbour lane's, the same sectors).
// Registers: r0 row, r1 j, r2 byte offset of the thread's word, r3 row word address, r4 limit,
// r5 shift of the thread's half, r6 address, r7 integer count, r8 warp partial slot, r9 lane
// partial slot; data r10 mean, r11 m2, r12 nf, r13..r16 temporaries, r17..r19 partner, r20 value.
class MomentsGenerator : KernelText {
public:
    MomentsGenerator(Storage s, int wave) : KernelText(s), wave_(wave) {}

    std::string source() {
        const bool wide = s_ == Storage::f32;
        out_ = ".kernel layernorm_torch_moments_" + std::string(to_string(s_)) +
               (wave_ == 32 ? "" : "_wave" + std::to_string(wave_)) + "\n.param cols, words, x, mean, rstd\n.reg 24\n.shared " + std::to_string(32 * 24) + "\n";
        emit("mov r0, %ctaid");
        emit("mul r3, r0, words");
        emit("shl r3, r3, 2");
        emit("add r3, r3, x");
        emit("mov r1, %tid");
        if (wide) {
            emit("shl r2, r1, 2");
        } else {
            emit("shr r2, r1, 1");
            emit("shl r2, r2, 2");
            emit("and r5, r1, 1");
            emit("shl r5, r5, 4");
        }
        emit("mov r10, 0.0");
        emit("mov r11, 0.0");
        emit("mov r12, 0.0");
        emit("mov r7, 0");
        label("elements");
        emit("setp.ge.s32 p1, r1, cols");
        emit("@p1 bra elements_done");
        emit("add r6, r3, r2");
        emit("ld.global r20, [r6]");
        if (!wide) {
            emit("shr r20, r20, r5");
            emit("cvt.f32." + half_name(s_) + ".lo r20, r20");
        }
        // WelfordOps::reduce: new_nf = float(n + 1); delta = x - mean; mean += delta / new_nf;
        // m2 += delta (x - mean).
        emit("add r7, r7, 1");
        emit("i2f r12, r7");
        emit("fsub r13, r20, r10");
        for (const std::string& line : ieee_divide("r16", "r13", "r12", "r14", "r15", "r17")) emit(line);
        emit("fadd r10, r10, r16");
        emit("fsub r16, r20, r10");
        emit("ffma r11, r13, r16, r11");
        emit("add r1, r1, " + std::to_string(kLayernormMomentsThreads));
        emit("add r2, r2, " + std::to_string(kLayernormMomentsThreads * (wide ? 4 : 2)));
        emit("bra elements");
        label("elements_done");
        // BlockReduce: WarpReduce, barrier, lane 0 stores, barrier, the first 16 lanes load the
        // partials (identity otherwise), warp 0 reduces them.
        if (wave_ == 32) {
            emit("setp.eq.s32 p3, %laneid, 0");
            emit("mul r8, %warpid, 24");
            emit("mul r9, %laneid, 24");
        } else {  // the wave (tid / 64) and its lane
            emit("and r9, %tid, 63");
            emit("setp.eq.s32 p3, r9, 0");
            emit("shr r8, %tid, 6");
            emit("mul r8, r8, 24");
            emit("mul r9, r9, 24");
        }
        warp_reduce();
        emit("bar.sync");
        emit("@p3 st.shared [r8], r10");
        emit("@p3 st.shared [r8+4], r11");
        emit("@p3 st.shared [r8+16], r12");
        emit("bar.sync");
        emit("mov r10, 0.0");
        emit("mov r11, 0.0");
        emit("mov r12, 0.0");
        emit("setp.lt.s32 p4, %tid, " + std::to_string(kLayernormMomentsThreads / wave_));
        emit("@p4 ld.shared r10, [r9]");
        emit("@p4 ld.shared r11, [r9+4]");
        emit("@p4 ld.shared r12, [r9+16]");
        emit(wave_ == 32 ? "setp.ne.s32 p5, %warpid, 0" : "setp.ge.s32 p5, %tid, 64");  // not warp (wave) 0
        emit("@p5 exit");
        warp_reduce();
        // Thread 0: var = m2 / nf, mean; rstd = rsqrt(var + eps).
        emit("setp.ne.s32 p5, %tid, 0");
        emit("@p5 exit");
        for (const std::string& line : ieee_divide("r11", "r11", "r12", "r14", "r15", "r16")) emit(line);
        emit("fadd r11, r11, " + eps());
        emit("rsqrt r11, r11");
        emit("shl r6, r0, 2");
        emit("add r6, r6, mean");
        emit("st.global [r6], r10");
        emit("shl r6, r0, 2");
        emit("add r6, r6, rstd");
        emit("st.global [r6], r11");
        return out_;
    }

private:
    int wave_;  // C10_WARP_SIZE of the build: 32 (CUDA) or 64 (ROCm)
    // WelfordOps::combine(a = own r10..r12, b = partner r17..r19): a.nf == 0 -> b; b.nf == 0 -> a;
    // else delta = b.mean - a.mean, n = a.nf + b.nf, q = b.nf / n (IEEE), mean = a.mean + delta q,
    // m2 = a.m2 + b.m2 + delta delta a.nf q.
    void warp_reduce() {
        for (int offset = wave_ / 2; offset >= 1; offset /= 2) {
            emit("shfl.down r17, r10, " + std::to_string(offset));
            emit("shfl.down r18, r11, " + std::to_string(offset));
            emit("shfl.down r19, r12, " + std::to_string(offset));
            emit("fsub r13, r17, r10");
            emit("fadd r20, r12, r19");
            for (const std::string& line : ieee_divide("r16", "r19", "r20", "r14", "r15", "r21")) emit(line);
            emit("ffma r21, r13, r16, r10");  // mean
            emit("fmul r13, r13, r13");
            emit("fmul r13, r13, r12");
            emit("fadd r22, r11, r18");
            emit("ffma r22, r13, r16, r22");  // m2
            emit("setp.eq.f32 p6, r12, 0.0");
            emit("setp.eq.f32 p7, r19, 0.0");
            emit("selp r21, r10, r21, p7");
            emit("selp r22, r11, r22, p7");
            emit("selp r20, r12, r20, p7");
            emit("selp r10, r17, r21, p6");
            emit("selp r11, r18, r22, p6");
            emit("selp r12, r19, r20, p6");
        }
    }

};

// LayerNormForwardCUDAKernel<<<M, 256>>>: y = (x - mean) rstd gamma + beta, one element per
// thread a trip. The row's mean and rstd are loaded every trip, as the source reads them in the
// loop (Y may alias them, so nvcc cannot hoist the loads past its store; the L1 or L2 serves
// them). 16-bit: as the moments kernel, one word
// load per element (x, gamma, beta); the lanes of an even/odd pair exchange their results by one
// shuffle and the even lane stores the word (the ISA has no 16-bit store: half the store
// instructions of PyTorch's, the same bytes); the loop runs over whole words so both lanes of a
// pair are active (an odd row's padding half gets (0 - mean) rstd 0 + 0 = 0).
// Registers: r0 row, r1 j, r2 byte offset of the thread's word in the row, r3 x row address, r4
// y row address, r5 half shift, r6 address, r7 limit, r8 / r9 the row's mean / rstd address; data r10 mean, r11 rstd,
// r12 x, r13 gamma, r14 beta, r15 partner's y.
class ForwardGenerator : KernelText {
public:
    explicit ForwardGenerator(Storage s) : KernelText(s) {}

    std::string source() {
        const bool wide = s_ == Storage::f32;
        out_ = ".kernel layernorm_torch_forward_" + std::string(to_string(s_)) +
               "\n.param cols, words, x, gamma, beta, y, mean, rstd\n.reg 16\n";
        emit("mov r0, %ctaid");
        emit("mul r3, r0, words");
        emit("shl r3, r3, 2");
        emit("add r4, r3, y");
        emit("add r3, r3, x");
        emit("shl r8, r0, 2");
        emit("add r9, r8, rstd");
        emit("add r8, r8, mean");
        emit("mov r1, %tid");
        if (wide) {
            emit("mov r7, cols");
            emit("shl r2, r1, 2");
        } else {
            emit("shl r7, words, 1");  // whole words: both lanes of a pair run every trip
            emit("shr r2, r1, 1");
            emit("shl r2, r2, 2");
            emit("and r5, r1, 1");
            emit("setp.eq.s32 p2, r5, 0");  // the even lane of a pair stores
            emit("shl r5, r5, 4");
        }
        label("elements");
        emit("setp.ge.s32 p1, r1, r7");
        emit("@p1 bra elements_done");
        emit("add r6, r3, r2");
        emit("ld.global r12, [r6]");
        emit("add r6, r2, gamma");
        emit("ld.global r13, [r6]");
        emit("add r6, r2, beta");
        emit("ld.global r14, [r6]");
        emit("ld.global r10, [r8]");
        emit("ld.global r11, [r9]");
        if (!wide) {
            for (int reg = 12; reg <= 14; ++reg) {
                emit("shr " + r(reg) + ", " + r(reg) + ", r5");
                emit("cvt.f32." + half_name(s_) + ".lo " + r(reg) + ", " + r(reg));
            }
        }
        emit("fsub r12, r12, r10");
        emit("fmul r12, r12, r11");
        emit("ffma r12, r12, r13, r14");
        emit("add r6, r4, r2");
        if (wide) {
            emit("st.global [r6], r12");
        } else {
            emit("shfl.down r15, r12, 1");
            emit("cvt." + half_name(s_) + "x2.f32 r12, r12, r15");
            emit("@p2 st.global [r6], r12");
        }
        emit("add r1, r1, " + std::to_string(kLayernormForwardThreads));
        emit("add r2, r2, " + std::to_string(kLayernormForwardThreads * (wide ? 4 : 2)));
        emit("bra elements");
        label("elements_done");
        return out_;
    }
};

}  // namespace

const simt::Kernel* torch_layernorm_kernel(ReductionVariant variant, Storage storage, bool forward, int wave_size) {
    if (variant != ReductionVariant::layernorm_vectorized && variant != ReductionVariant::layernorm_moments)
        return nullptr;
    if (variant == ReductionVariant::layernorm_vectorized && forward) return nullptr;
    // The forward kernel (one element a thread, no reduction) is one kernel whatever the wave.
    const int wave = forward ? 32 : torch_warp_size(wave_size);
    static std::mutex mutex;
    static std::map<std::tuple<ReductionVariant, Storage, bool, int>, std::unique_ptr<simt::Kernel>> kernels;
    const std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[{variant, storage, forward, wave}];
    if (!k) {
        const std::string source = variant == ReductionVariant::layernorm_vectorized ? VectorizedGenerator(storage, wave).source()
                                   : forward ? ForwardGenerator(storage).source()
                                             : MomentsGenerator(storage, wave).source();
        k = std::make_unique<simt::Kernel>(simt::assemble(
            source, "<gpu library>/layernorm_" + std::string(to_string(variant)) + (forward ? "_forward_" : "_") +
                        to_string(storage) + (wave == 32 ? "" : "_wave" + std::to_string(wave))));
    }
    return k.get();
}

}  // namespace accelsim::gpu
