#pragma once
// Internals shared by the stepped array, the closed form and the fast numerics. Not part of the
// public API (mxu.h, mxu_stepped.h and mxu_sc.h are).
#include <cstdint>
#include <vector>

#include "models/common/ceil_div.h"
#include "models/mxu/mxu.h"

namespace accelsim::mxu_detail {

// The GEMM as the array sees it. ws and is both run a "stationary-streaming" schedule:
//   stream   [batch][t_len][k_len]  rows enter the array's left edge, one per cycle
//   station  [batch][k_len][n_len]  tiles of R x C sit in the PEs
//   out      [batch][t_len][n_len]
// ws: stream = A, station = B, out = C.  is: stream = B^T, station = A^T, out = C^T.
// os: stream A [batch][m][k] from the left, B [batch][k][n] from the top, out C [batch][m][n].
struct ArrayProblem {
    std::int64_t batch = 1;
    std::int64_t t_len = 0;   // ws: M, is: N, os: K (cycles one fold streams)
    std::int64_t k_len = 0;   // ws/is: K (folded over rows);   os: M (folded over rows)
    std::int64_t n_len = 0;   // ws: N, is: M (folded over cols); os: N (folded over cols)
};

ArrayProblem array_problem(MxuDataflow dataflow, const GemmShape& shape);

// Raw counters both modes produce; mxu.cpp turns them into MxuStats.
struct RawCounts {
    std::int64_t cycles = 0, compute = 0, fill_drain = 0, load_stall = 0, drain_stall = 0;
    std::int64_t folds = 0;
    std::int64_t used_pe_sum = 0;       // sum over folds of used PEs
    std::int64_t stream_reads = 0;      // ws/is: stream buffer; os: A buffer
    std::int64_t station_reads = 0;     // ws/is: stationary buffer; os: B buffer
    std::int64_t out_writes = 0, out_reads = 0;
};

RawCounts closed_form_counts(const MxuParams& p, const ArrayProblem& q);

MxuStats make_stats(const MxuParams& p, const GemmShape& shape, DType dtype, const RawCounts& r);

// Blocked numerics in the PEs' accumulation order: for every output, each K tile [k0, k1) is
// summed in ascending k starting from zero, and the tile sum is added to out (which the caller
// zeroes first). T is float (fp16/bf16/fp32 operands) or int32 (int8 operands, wrapping adds).
template <class T>
void accumulate_k_tile(const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* out,
                       std::int64_t ldo, std::int64_t m, std::int64_t n, std::int64_t k0,
                       std::int64_t k1);

// One PE multiply-accumulate, p + a*w, exactly as the hardware does it: fp32 multiply and add
// (fp16/bf16 products are exact in fp32), or two's complement wrapping int32.
inline float pe_mac(float p, float a, float w) { return p + a * w; }
inline std::int32_t pe_mac(std::int32_t p, std::int32_t a, std::int32_t w) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(p) +
                                     static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(w));
}

}  // namespace accelsim::mxu_detail
