#include "models/tpu/tpu_vector.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "models/common/op_table.h"
#include "models/common/pool_reference.h"

namespace accelsim::tpu {

namespace {

const double kU = std::ldexp(1.0, -24);

void record(NumericsCheck& check, double got, double want, double tolerance) {
    const double err = std::fabs(got - want);
    ++check.checked;
    check.max_abs_err = std::max(check.max_abs_err, err);
    check.max_rel_err = std::max(check.max_rel_err, err / std::max(std::fabs(want), 1e-30));
    if (!(err <= tolerance)) check.passed = false;
}

float gelu_fp32(float x) {
    const float inner = 0.7978845608f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + std::tanh(inner));
}

double gelu_reference(double x) {
    const double inner = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + std::tanh(inner));
}

// What the vector unit computes for each elementwise kind in fp32, the double reference and the
// error bound against it (one fp32 rounding for add and mul; relu and copy are exact; the tanh form of
// gelu within 16 u (|x| + 1)). A kind without a row is not checked.
struct ElementwiseNumerics {
    OpKind kind;
    float (*fp32)(float a, float b);
    double (*reference)(double a, double b);
    double (*tolerance)(double a, double want);
};

const ElementwiseNumerics kElementwiseNumerics[] = {
    {OpKind::gelu, [](float a, float) { return gelu_fp32(a); }, [](double a, double) { return gelu_reference(a); },
     [](double a, double) { return 16.0 * kU * (std::fabs(a) + 1.0); }},
    {OpKind::relu, [](float a, float) { return std::max(a, 0.0f); }, [](double a, double) { return a > 0 ? a : 0.0; },
     [](double, double) { return 0.0; }},
    {OpKind::add, [](float a, float b) { return a + b; }, [](double a, double b) { return a + b; },
     [](double, double want) { return kU * std::fabs(want); }},
    {OpKind::mul, [](float a, float b) { return a * b; }, [](double a, double b) { return a * b; },
     [](double, double want) { return kU * std::fabs(want); }},
    {OpKind::copy, [](float a, float) { return a; }, [](double a, double) { return a; },
     [](double, double) { return 0.0; }},
};

const ElementwiseNumerics* elementwise_numerics(OpKind kind) {
    for (const ElementwiseNumerics& f : kElementwiseNumerics)
        if (f.kind == kind) return &f;
    return nullptr;
}

// pool as the unit computes it: fp32 max (exact: the result is one of the inputs) or fp32 sum in
// window order times the fp32 reciprocal of the divisor. An fp32 sum of k terms errs by at most
// (k - 1) u sum|x|; the reciprocal and the product add u |want| each.
NumericsCheck run_pool_checked(const Op& op, std::mt19937_64& rng) {
    const PoolShape& p = op.pool;
    std::vector<float> x;
    fill_random(x, op.input_bytes() / bytes_of(op.dtype), op.dtype, rng);
    const std::vector<double> want = pool_reference(p, x);
    const bool max = p.mode == PoolMode::max;
    NumericsCheck check;
    float acc = max ? -INFINITY : 0.0f;
    double magnitude = 0;
    for_each_pool_window(
        p,
        [&](std::int64_t, std::int64_t i) {
            const float v = x[static_cast<std::size_t>(i)];
            acc = max ? std::max(acc, v) : acc + v;
            magnitude += std::fabs(v);
        },
        [&](std::int64_t o, std::int64_t oh, std::int64_t ow) {
            const double ref = want[static_cast<std::size_t>(o)];
            if (max) {
                record(check, acc, ref, 0.0);
            } else {
                const auto divisor = static_cast<double>(pool_divisor(p, oh, ow));
                const float got = acc * (1.0f / static_cast<float>(divisor));
                const double window = static_cast<double>(p.window());
                record(check, got, ref, (window - 1) * kU * magnitude / divisor + 2 * kU * std::fabs(ref));
            }
            acc = max ? -INFINITY : 0.0f;
            magnitude = 0;
        });
    return check;
}

}  // namespace

NumericsCheck run_vector_op_checked(const Op& op, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    if (op.kind == OpKind::pool) return run_pool_checked(op, rng);
    NumericsCheck check;
    std::vector<float> x, y, gamma, beta;
    const std::int64_t n = op.vector_elements();
    fill_random(x, n, op.dtype, rng);
    switch (op.kind) {
        case OpKind::softmax: {
            const std::int64_t cols = op.cols;
            const double tol_sum = 2.0 * static_cast<double>(cols + 8) * kU;
            for (std::int64_t r = 0; r < op.rows; ++r) {
                const float* in = x.data() + r * cols;
                float m = in[0];
                for (std::int64_t j = 1; j < cols; ++j) m = std::max(m, in[j]);
                std::vector<float> e(static_cast<std::size_t>(cols));
                float sum = 0;
                for (std::int64_t j = 0; j < cols; ++j) sum += (e[static_cast<std::size_t>(j)] = std::exp(in[j] - m));
                const float inv = 1.0f / sum;
                double row_sum = 0, ref_sum = 0;
                std::vector<double> ref(static_cast<std::size_t>(cols));
                for (std::int64_t j = 0; j < cols; ++j) ref_sum += (ref[static_cast<std::size_t>(j)] = std::exp(double(in[j])));
                for (std::int64_t j = 0; j < cols; ++j) {
                    const double got = e[static_cast<std::size_t>(j)] * inv;
                    const double want = ref[static_cast<std::size_t>(j)] / ref_sum;
                    row_sum += got;
                    // exp of a large negative difference underflows below FLT_MIN in fp32: absolute floor.
                    record(check, got, want, 4.0 * static_cast<double>(cols + 8) * kU * want + std::ldexp(1.0, -126));
                }
                record(check, row_sum, 1.0, tol_sum);  // the row sums to 1
            }
            break;
        }
        case OpKind::layernorm: {
            const std::int64_t cols = op.cols;
            fill_random(gamma, cols, op.dtype, rng);
            fill_random(beta, cols, op.dtype, rng);
            const float eps = 1e-5f;
            for (std::int64_t r = 0; r < op.rows; ++r) {
                const float* in = x.data() + r * cols;
                float sum = 0;
                for (std::int64_t j = 0; j < cols; ++j) sum += in[j];
                const float mean = sum / static_cast<float>(cols);
                float sq = 0;
                for (std::int64_t j = 0; j < cols; ++j) sq += (in[j] - mean) * (in[j] - mean);
                const float inv = 1.0f / std::sqrt(sq / static_cast<float>(cols) + eps);
                // Reference: two passes in double.
                double dmean = 0;
                for (std::int64_t j = 0; j < cols; ++j) dmean += in[j];
                dmean /= static_cast<double>(cols);
                double dvar = 0;
                for (std::int64_t j = 0; j < cols; ++j) dvar += (in[j] - dmean) * (in[j] - dmean);
                dvar /= static_cast<double>(cols);
                const double dinv = 1.0 / std::sqrt(dvar + static_cast<double>(eps));
                for (std::int64_t j = 0; j < cols; ++j) {
                    const auto jj = static_cast<std::size_t>(j);
                    const double got = (in[j] - mean) * inv * gamma[jj] + beta[jj];
                    const double normal = (in[j] - dmean) * dinv;
                    const double want = normal * gamma[jj] + beta[jj];
                    const double tol = 8.0 * static_cast<double>(cols + 8) * kU *
                                       (std::fabs(normal * gamma[jj]) + std::fabs(beta[jj]) + 1.0);
                    record(check, got, want, tol);
                }
            }
            break;
        }
        default: {
            const ElementwiseNumerics* f = elementwise_numerics(op.kind);
            if (!f) break;
            std::vector<float> z;  // second operand (add, mul)
            if (op_info(op.kind).vector_inputs == 2) fill_random(z, n, op.dtype, rng);
            for (std::int64_t i = 0; i < n; ++i) {
                const auto ii = static_cast<std::size_t>(i);
                const float a = x[ii], b = z.empty() ? 0.0f : z[ii];
                const double want = f->reference(a, b);
                record(check, f->fp32(a, b), want, f->tolerance(a, want));
            }
            break;
        }
    }
    return check;
}

}  // namespace accelsim::tpu
