// MXU params, the closed-form fold timing (fast mode), the blocked numerics and run_mxu_gemm.
// docs/mxu.md derives every formula used here.
#include "models/mxu/mxu.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "models/mxu/mxu_internal.h"
#include "models/mxu/mxu_operands.h"
#include "models/mxu/mxu_stepped.h"

namespace accelsim {

std::string_view to_string(MxuDataflow d) { return name_of(kMxuDataflowNames, d); }
std::string_view to_string(MxuMode m) { return name_of(kMxuModeNames, m); }
std::optional<MxuDataflow> parse_mxu_dataflow(std::string_view s) { return parse_enum(kMxuDataflowNames, s); }
std::optional<MxuMode> parse_mxu_mode(std::string_view s) { return parse_enum(kMxuModeNames, s); }

const ParamTable<MxuParams>& mxu_param_table() {
    static const ParamTable<MxuParams> table = [] {
        ParamTable<MxuParams> t;
        t.integer("rows", &MxuParams::rows, 1, 512, "PE rows (the K dimension of a weight tile).")
            .integer("cols", &MxuParams::cols, 1, 512, "PE columns (the N dimension of a weight tile).")
            .choice("dataflow", &MxuParams::dataflow, kMxuDataflowNames,
                    "Stationary operand: `ws` weights, `os` outputs, `is` inputs.")
            .boolean("overlap_folds", &MxuParams::overlap_folds,
                     "Load the next tile while the current one drains (double-buffered weights).")
            .choice("mode", &MxuParams::mode, kMxuModeNames,
                    "`fast`: closed-form tile timing; `stepped`: cycle by cycle (the reference).")
            .rates("macs_per_pe_per_cycle", &MxuParams::macs_per_pe_per_cycle, 64,
                   "MACs one PE completes per cycle for each operand dtype; 0 = the MXU does not run that "
                   "dtype natively.",
                   "MACs per PE per cycle.");
        return t;
    }();
    return table;
}

void MxuParams::validate() const {
    if (rows < 1 || rows > 512)
        throw std::invalid_argument("mxu.rows must be in 1..512, got " + std::to_string(rows));
    if (cols < 1 || cols > 512)
        throw std::invalid_argument("mxu.cols must be in 1..512, got " + std::to_string(cols));
    if (name_of(kMxuDataflowNames, dataflow) == "?")
        throw std::invalid_argument("mxu.dataflow must be " + join_names(names_of(kMxuDataflowNames)));
    if (name_of(kMxuModeNames, mode) == "?")
        throw std::invalid_argument("mxu.mode must be " + join_names(names_of(kMxuModeNames)));
}

bool MxuStats::operator==(const MxuStats& o) const {
    return cycles == o.cycles && compute_cycles == o.compute_cycles && fill_drain_cycles == o.fill_drain_cycles &&
           weight_load_stall_cycles == o.weight_load_stall_cycles && drain_stall_cycles == o.drain_stall_cycles &&
           folds == o.folds && macs == o.macs && mac_utilization == o.mac_utilization &&
           mapping_efficiency == o.mapping_efficiency && input_reads == o.input_reads &&
           weight_reads == o.weight_reads && output_writes == o.output_writes && output_reads == o.output_reads;
}

namespace mxu_detail {

ArrayProblem array_problem(MxuDataflow dataflow, const GemmShape& s) {
    ArrayProblem q;
    q.batch = s.batch;
    switch (dataflow) {
        case MxuDataflow::ws: q.t_len = s.m; q.k_len = s.k; q.n_len = s.n; break;
        case MxuDataflow::is: q.t_len = s.n; q.k_len = s.k; q.n_len = s.m; break;
        case MxuDataflow::os: q.t_len = s.k; q.k_len = s.m; q.n_len = s.n; break;
    }
    return q;
}

void check_run_arguments(const MxuParams& p, const GemmShape& s, DType dtype, const MxuOperands* ops) {
    p.validate();
    if (s.batch < 1 || s.m < 1 || s.n < 1 || s.k < 1)
        throw std::invalid_argument("mxu gemm shape needs batch, m, n, k >= 1, got batch=" + std::to_string(s.batch) +
                                    " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
                                    " k=" + std::to_string(s.k));
    if (dtype == DType::int32) throw std::invalid_argument("mxu dtype int32 is an accumulator type, not an operand type");
    if (ops != nullptr && (ops->a == nullptr || ops->b == nullptr))
        throw std::invalid_argument("mxu operands given with a null A or B");
}

// Closed form of the schedules the stepped cores implement (docs/mxu.md, "Closed forms").
RawCounts closed_form_counts(const MxuParams& p, const ArrayProblem& q) {
    const std::int64_t R = p.rows, C = p.cols, T = q.t_len;
    const std::int64_t row_tiles = ceil_div(q.k_len, R), col_tiles = ceil_div(q.n_len, C);
    const std::int64_t F = q.batch * row_tiles * col_tiles;
    RawCounts r;
    r.folds = F;
    r.compute = F * T;
    r.used_pe_sum = q.batch * q.k_len * q.n_len;
    if (p.dataflow == MxuDataflow::os) {
        // s_0 = 0; s_{f+1} = s_f + max(K, R) (overlap) or s_f + K + R + C - 2 (no overlap);
        // a fold ends K + R + C - 2 cycles after it starts.
        if (p.overlap_folds) {
            r.drain_stall = (F - 1) * std::max<std::int64_t>(0, R - T);
            r.fill_drain = R + C - 2;
        } else {
            r.fill_drain = F * (R + C - 2);
        }
        r.stream_reads = q.batch * col_tiles * q.k_len * T;  // A: every fold reads its M tile x K
        r.station_reads = q.batch * row_tiles * T * q.n_len;  // B: every fold reads K x its N tile
        r.out_writes = q.batch * q.k_len * q.n_len;
        r.out_reads = 0;
    } else {
        // s_0 = R (first tile load); s_{f+1} = s_f + max(T, R) (overlap) or
        // s_f + T + 2R + C - 2 (no overlap); a fold's stream ends T + R + C - 2 cycles after it starts.
        if (p.overlap_folds) {
            r.load_stall = R + (F - 1) * std::max<std::int64_t>(0, R - T);
            r.fill_drain = R + C - 2;
        } else {
            r.load_stall = F * R;
            r.fill_drain = F * (R + C - 2);
        }
        r.stream_reads = q.batch * col_tiles * T * q.k_len;
        r.station_reads = q.batch * q.k_len * q.n_len;
        r.out_writes = q.batch * row_tiles * T * q.n_len;
        r.out_reads = q.batch * (row_tiles - 1) * T * q.n_len;
    }
    r.cycles = r.compute + r.fill_drain + r.load_stall + r.drain_stall;
    return r;
}

MxuStats make_stats(const MxuParams& p, const GemmShape& shape, DType dtype, const RawCounts& r) {
    MxuStats s;
    s.cycles = r.cycles;
    s.compute_cycles = r.compute;
    s.fill_drain_cycles = r.fill_drain;
    s.weight_load_stall_cycles = r.load_stall;
    s.drain_stall_cycles = r.drain_stall;
    s.folds = r.folds;
    s.macs = shape.macs();
    const double pes = static_cast<double>(p.rows) * static_cast<double>(p.cols);
    s.mac_utilization = r.cycles > 0 ? static_cast<double>(s.macs) / (pes * static_cast<double>(r.cycles)) : 0.0;
    s.mapping_efficiency = r.folds > 0 ? static_cast<double>(r.used_pe_sum) / (pes * static_cast<double>(r.folds)) : 0.0;
    const std::int64_t op_bytes = bytes_of(dtype), acc_bytes = bytes_of(accumulator_of(dtype));
    // ws: stream = A, stationary = B; is: stream = B, stationary = A; os: stream = A, top = B.
    const bool is = p.dataflow == MxuDataflow::is;
    const std::int64_t a_reads = is ? r.station_reads : r.stream_reads;
    const std::int64_t b_reads = is ? r.stream_reads : r.station_reads;
    s.input_reads = {a_reads, a_reads * op_bytes};
    s.weight_reads = {b_reads, b_reads * op_bytes};
    s.output_writes = {r.out_writes, r.out_writes * acc_bytes};
    s.output_reads = {r.out_reads, r.out_reads * acc_bytes};
    return s;
}

namespace {

// Register-blocked MB x NB block of out += (sum over k in [k0,k1) of a[.,k] * b[k,.]), each
// output's sum starting from zero and taken in ascending k, exactly like a PE column.
template <class T, int MB, int NB>
inline void block_fixed(const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* out, std::int64_t ldo,
                        std::int64_t k0, std::int64_t k1) {
    T acc[MB][NB];
    for (int r = 0; r < MB; ++r)
        for (int x = 0; x < NB; ++x) acc[r][x] = T(0);
    for (std::int64_t k = k0; k < k1; ++k) {
        const T* br = b + k * ldb;
        for (int r = 0; r < MB; ++r) {
            const T av = a[r * lda + k];
            for (int x = 0; x < NB; ++x) acc[r][x] = pe_mac(acc[r][x], av, br[x]);
        }
    }
    for (int r = 0; r < MB; ++r)
        for (int x = 0; x < NB; ++x) out[r * ldo + x] = out[r * ldo + x] + acc[r][x];
}

template <class T, int MB, int NB>
inline void block_edge(const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* out, std::int64_t ldo,
                       std::int64_t mb, std::int64_t nb, std::int64_t k0, std::int64_t k1) {
    T acc[MB][NB];
    for (int r = 0; r < MB; ++r)
        for (int x = 0; x < NB; ++x) acc[r][x] = T(0);
    for (std::int64_t k = k0; k < k1; ++k) {
        const T* br = b + k * ldb;
        for (std::int64_t r = 0; r < mb; ++r) {
            const T av = a[r * lda + k];
            for (std::int64_t x = 0; x < nb; ++x) acc[r][x] = pe_mac(acc[r][x], av, br[x]);
        }
    }
    for (std::int64_t r = 0; r < mb; ++r)
        for (std::int64_t x = 0; x < nb; ++x) out[r * ldo + x] = out[r * ldo + x] + acc[r][x];
}

}  // namespace

template <class T>
void accumulate_k_tile(const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* out, std::int64_t ldo,
                       std::int64_t m, std::int64_t n, std::int64_t k0, std::int64_t k1) {
    constexpr int MB = 4, NB = 16;
    for (std::int64_t n0 = 0; n0 < n; n0 += NB) {
        const std::int64_t nb = std::min<std::int64_t>(NB, n - n0);
        for (std::int64_t m0 = 0; m0 < m; m0 += MB) {
            const std::int64_t mb = std::min<std::int64_t>(MB, m - m0);
            if (mb == MB && nb == NB)
                block_fixed<T, MB, NB>(a + m0 * lda, lda, b + n0, ldb, out + m0 * ldo + n0, ldo, k0, k1);
            else
                block_edge<T, MB, NB>(a + m0 * lda, lda, b + n0, ldb, out + m0 * ldo + n0, ldo, mb, nb, k0, k1);
        }
    }
}

namespace {

// fp32 path: GCC vector extensions with B packed per panel of two vectors' width so the 6-row
// block's 12 accumulators stay in registers: 4 x fp32 (8-column panels, the SSE2 baseline) and,
// on hosts that have AVX2 (checked at run time), 8 x fp32 (16-column panels). acc = acc + a*b is
// one multiply then one add per lane, the PE's operation, in ascending k: the baseline target has
// no fused multiply-add and AVX2 brings none (that is the separate "fma" target), so both widths
// give bit-identical outputs.
typedef float v4f __attribute__((vector_size(16)));
constexpr int kRowBlock = 6;

template <class V, int MB>
__attribute__((always_inline)) inline void panel_block(const float* a, std::int64_t lda, const float* packed,
                                                       float* out, std::int64_t ldo, std::int64_t k0,
                                                       std::int64_t k1) {
    constexpr int kLanes = sizeof(V) / sizeof(float), kWidth = 2 * kLanes;
    V acc[MB][2];
    for (int r = 0; r < MB; ++r) acc[r][0] = acc[r][1] = V{};
    const float* bp = packed;
    for (std::int64_t k = k0; k < k1; ++k, bp += kWidth) {
        V b0, b1;
        std::memcpy(&b0, bp, sizeof b0);
        std::memcpy(&b1, bp + kLanes, sizeof b1);
        for (int r = 0; r < MB; ++r) {
            // x in every lane: x - 0 is exactly x (also for -0), and compiles to one broadcast.
            const V av = a[r * lda + k] - V{};
            acc[r][0] = acc[r][0] + av * b0;
            acc[r][1] = acc[r][1] + av * b1;
        }
    }
    for (int r = 0; r < MB; ++r) {
        float tmp[kWidth];
        std::memcpy(tmp, &acc[r][0], sizeof acc[r][0]);
        std::memcpy(tmp + kLanes, &acc[r][1], sizeof acc[r][1]);
        for (int x = 0; x < kWidth; ++x) out[r * ldo + x] = out[r * ldo + x] + tmp[x];
    }
}

// The tile's whole panels from column n0 on; returns the first column left.
template <class V>
__attribute__((always_inline)) inline std::int64_t panels(const float* a, std::int64_t lda, const float* b,
                                                          std::int64_t ldb, float* out, std::int64_t ldo,
                                                          std::int64_t m, std::int64_t n, std::int64_t k0,
                                                          std::int64_t k1, std::int64_t n0) {
    constexpr int kWidth = 2 * static_cast<int>(sizeof(V) / sizeof(float));
    thread_local std::vector<float> packed;  // one panel of B: (k1 - k0) x kWidth
    packed.resize(static_cast<std::size_t>((k1 - k0) * kWidth));
    for (; n0 + kWidth <= n; n0 += kWidth) {
        for (std::int64_t k = k0; k < k1; ++k)
            std::memcpy(&packed[static_cast<std::size_t>((k - k0) * kWidth)], b + k * ldb + n0, sizeof(float) * kWidth);
        std::int64_t m0 = 0;
        for (; m0 + kRowBlock <= m; m0 += kRowBlock)
            panel_block<V, kRowBlock>(a + m0 * lda, lda, packed.data(), out + m0 * ldo + n0, ldo, k0, k1);
        for (; m0 < m; ++m0) panel_block<V, 1>(a + m0 * lda, lda, packed.data(), out + m0 * ldo + n0, ldo, k0, k1);
    }
    return n0;
}

#if defined(__x86_64__) && defined(__GNUC__)
typedef float v8f __attribute__((vector_size(32)));

__attribute__((target("avx2"))) std::int64_t wide_panels(const float* a, std::int64_t lda, const float* b,
                                                         std::int64_t ldb, float* out, std::int64_t ldo,
                                                         std::int64_t m, std::int64_t n, std::int64_t k0,
                                                         std::int64_t k1) {
    return panels<v8f>(a, lda, b, ldb, out, ldo, m, n, k0, k1, 0);
}

bool host_has_avx2() {
    static const bool has = __builtin_cpu_supports("avx2");
    return has;
}
#endif

}  // namespace

template <>
void accumulate_k_tile<float>(const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* out,
                              std::int64_t ldo, std::int64_t m, std::int64_t n, std::int64_t k0, std::int64_t k1) {
    std::int64_t n0 = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (host_has_avx2()) n0 = wide_panels(a, lda, b, ldb, out, ldo, m, n, k0, k1);
#endif
    n0 = panels<v4f>(a, lda, b, ldb, out, ldo, m, n, k0, k1, n0);
    if (n0 < n) {  // the last n % 8 columns
        for (std::int64_t m0 = 0; m0 < m; m0 += 4) {
            const std::int64_t mb = std::min<std::int64_t>(4, m - m0);
            block_edge<float, 4, 8>(a + m0 * lda, lda, b + n0, ldb, out + m0 * ldo + n0, ldo, mb, n - n0, k0, k1);
        }
    }
}

template void accumulate_k_tile<std::int32_t>(const std::int32_t*, std::int64_t, const std::int32_t*, std::int64_t,
                                              std::int32_t*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                              std::int64_t);

}  // namespace mxu_detail

MxuStats mxu_gemm_timing(const MxuParams& params, const GemmShape& shape, DType dtype) {
    mxu_detail::check_run_arguments(params, shape, dtype, nullptr);
    const auto q = mxu_detail::array_problem(params.dataflow, shape);
    return mxu_detail::make_stats(params, shape, dtype, mxu_detail::closed_form_counts(params, q));
}

namespace {

// Fast numerics: ws and is fold K by R and add each tile's column sum into the accumulator (is
// computes C^T = B^T A^T, whose products and order are the same); os sums all K in the PE.
template <class T>
std::vector<T> fast_numerics(const MxuParams& p, const GemmShape& s, const T* a, const T* b) {
    std::vector<T> c(static_cast<std::size_t>(s.batch * s.m * s.n), T(0));
    const std::int64_t k_step = p.dataflow == MxuDataflow::os ? s.k : p.rows;
    for (std::int64_t bi = 0; bi < s.batch; ++bi) {
        const T* ab = a + bi * s.m * s.k;
        const T* bb = b + bi * s.k * s.n;
        T* cb = c.data() + bi * s.m * s.n;
        for (std::int64_t k0 = 0; k0 < s.k; k0 += k_step)
            mxu_detail::accumulate_k_tile<T>(ab, s.k, bb, s.n, cb, s.n, s.m, s.n, k0, std::min(s.k, k0 + k_step));
    }
    return c;
}

}  // namespace

MxuGemmResult run_mxu_gemm(const MxuParams& params, const GemmShape& shape, DType dtype, const MxuOperands* operands) {
    if (params.mode == MxuMode::stepped) {
        MxuSteppedArray array(params, shape, dtype, operands);
        return array.finish();
    }
    MxuGemmResult result;
    result.stats = mxu_gemm_timing(params, shape, dtype);
    result.accumulator = accumulator_of(dtype);
    if (operands != nullptr) {
        mxu_detail::check_run_arguments(params, shape, dtype, operands);
        const std::int64_t a_count = shape.batch * shape.m * shape.k, b_count = shape.batch * shape.k * shape.n;
        if (dtype == DType::int8) {
            const auto a = mxu_detail::convert_operand<std::int32_t>(operands->a, a_count, dtype, "A");
            const auto b = mxu_detail::convert_operand<std::int32_t>(operands->b, b_count, dtype, "B");
            result.c_int32 = fast_numerics<std::int32_t>(params, shape, a.data(), b.data());
        } else {  // float operands are used in place once checked
            mxu_detail::check_operand(operands->a, a_count, dtype, "A");
            mxu_detail::check_operand(operands->b, b_count, dtype, "B");
            result.c_fp32 = fast_numerics<float>(params, shape, operands->a, operands->b);
        }
    }
    return result;
}

}  // namespace accelsim
