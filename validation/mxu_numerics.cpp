// Numerics harness for the MXU datapath: every operand dtype, dataflow and mode on shapes that
// do not fit the array evenly, compared with Eigen in double precision on the same seeded inputs.
// int8 must match exactly; floats must lie within gamma_n * sum_k |a_k b_k| (gamma_n = n u / (1 - n u),
// u = 2^-24): every output takes K - 1 rounded fp32 additions, of products that are exact for
// fp16/bf16 (n = K - 1) and rounded once for fp32 (n = K); Higham, eq. 3.5. Prints one line per
// case; exits 1 on any failure.
#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol
#include <vector>

#include "models/mxu/mxu.h"

using namespace accelsim;

namespace {

using DMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using FMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

float sample(DType dtype, std::mt19937_64& rng) {
    if (dtype == DType::int8) return static_cast<float>(std::uniform_int_distribution<int>(-128, 127)(rng));
    const float v = std::uniform_real_distribution<float>(-4.0f, 4.0f)(rng);
    if (dtype == DType::fp16) return static_cast<float>(fp16_t(v));
    if (dtype == DType::bf16) return static_cast<float>(bf16_t(v));
    return v;
}

struct CaseResult {
    double max_abs = 0, max_rel = 0, worst_bound_ratio = 0;
    bool passed = true;
};

CaseResult run_case(const MxuParams& p, const GemmShape& s, DType dtype, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<float> a(static_cast<std::size_t>(s.batch * s.m * s.k)), b(static_cast<std::size_t>(s.batch * s.k * s.n));
    for (float& v : a) v = sample(dtype, rng);
    for (float& v : b) v = sample(dtype, rng);
    const MxuOperands ops{a.data(), b.data()};
    const MxuGemmResult r = run_mxu_gemm(p, s, dtype, &ops);
    const double u = std::ldexp(1.0, -24);
    const double n = static_cast<double>(dtype == DType::fp32 ? s.k : s.k - 1);
    const double gamma = n * u / (1.0 - n * u);
    CaseResult out;
    for (std::int64_t bi = 0; bi < s.batch; ++bi) {
        const DMat am = Eigen::Map<const FMat>(a.data() + bi * s.m * s.k, s.m, s.k).cast<double>();
        const DMat bm = Eigen::Map<const FMat>(b.data() + bi * s.k * s.n, s.k, s.n).cast<double>();
        const DMat ref = am * bm;
        const DMat mag = am.cwiseAbs() * bm.cwiseAbs();
        for (std::int64_t i = 0; i < s.m; ++i) {
            for (std::int64_t j = 0; j < s.n; ++j) {
                const double got = r.c((bi * s.m + i) * s.n + j);
                const double err = std::fabs(got - ref(i, j));
                out.max_abs = std::max(out.max_abs, err);
                if (ref(i, j) != 0) out.max_rel = std::max(out.max_rel, err / std::fabs(ref(i, j)));
                const double bound = dtype == DType::int8 ? 0.0 : gamma * mag(i, j);
                if (err > bound) out.passed = false;
                if (bound > 0) out.worst_bound_ratio = std::max(out.worst_bound_ratio, err / bound);
            }
        }
    }
    return out;
}

}  // namespace

int sc_main(int, char**) { return 0; }  // libsystemc needs the symbol; never called

int main() {
    const GemmShape shapes[] = {{1, 130, 7, 300}, {2, 45, 33, 129}, {1, 17, 200, 1000}};
    struct Array { int rows, cols; };
    const Array arrays[] = {{128, 128}, {8, 8}, {3, 16}};
    int failures = 0, cases = 0;
    std::uint64_t seed = 100;
    for (const Array ar : arrays) {
        for (const MxuDataflow flow : {MxuDataflow::ws, MxuDataflow::os, MxuDataflow::is}) {
            for (const DType dtype : {DType::int8, DType::fp16, DType::bf16, DType::fp32}) {
                for (const GemmShape& s : shapes) {
                    for (const MxuMode mode : {MxuMode::fast, MxuMode::stepped}) {
                        if (mode == MxuMode::stepped && s.k >= 1000 && ar.rows < 8) continue;  // keep it quick
                        MxuParams p;
                        p.rows = ar.rows;
                        p.cols = ar.cols;
                        p.dataflow = flow;
                        p.mode = mode;
                        const CaseResult r = run_case(p, s, dtype, ++seed);
                        ++cases;
                        if (!r.passed) ++failures;
                        std::printf("%-4s %3dx%-3d %-2s %-4s %-7s b=%lld m=%lld n=%lld k=%lld  max_abs=%.3g max_rel=%.3g err/bound=%.3f\n",
                                    r.passed ? "ok" : "FAIL", ar.rows, ar.cols, std::string(to_string(flow)).c_str(),
                                    std::string(to_string(dtype)).c_str(), std::string(to_string(mode)).c_str(),
                                    static_cast<long long>(s.batch), static_cast<long long>(s.m),
                                    static_cast<long long>(s.n), static_cast<long long>(s.k), r.max_abs, r.max_rel,
                                    r.worst_bound_ratio);
                    }
                }
            }
        }
    }
    std::printf("mxu numerics: %d cases, %d failed\n", cases, failures);
    return failures == 0 ? 0 : 1;
}
