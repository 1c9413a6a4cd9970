#pragma once
// Seeded operands exactly representable in each dtype, and an Eigen reference GEMM.
#include <cstdint>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "models/common/dtype.h"
#include "models/common/op.h"

namespace accelsim::mxu_test {

struct Operands {
    std::vector<float> a, b;  // [batch][m][k], [batch][k][n]
};

inline float random_value(DType dtype, std::mt19937_64& rng) {
    if (dtype == DType::int8) return static_cast<float>(std::uniform_int_distribution<int>(-128, 127)(rng));
    const float v = std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
    if (dtype == DType::fp16) return static_cast<float>(fp16_t(v));
    if (dtype == DType::bf16) return static_cast<float>(bf16_t(v));
    return v;
}

inline Operands random_operands(const GemmShape& s, DType dtype, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    Operands o;
    o.a.resize(static_cast<std::size_t>(s.batch * s.m * s.k));
    o.b.resize(static_cast<std::size_t>(s.batch * s.k * s.n));
    for (float& v : o.a) v = random_value(dtype, rng);
    for (float& v : o.b) v = random_value(dtype, rng);
    return o;
}

// C = A * B per batch in double precision with Eigen (exact for int8 products and sums).
inline std::vector<double> eigen_reference(const GemmShape& s, const Operands& o) {
    using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    std::vector<double> c(static_cast<std::size_t>(s.batch * s.m * s.n));
    for (std::int64_t b = 0; b < s.batch; ++b) {
        const Mat a = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
                          o.a.data() + b * s.m * s.k, s.m, s.k).cast<double>();
        const Mat bm = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
                           o.b.data() + b * s.k * s.n, s.k, s.n).cast<double>();
        Eigen::Map<Mat>(c.data() + b * s.m * s.n, s.m, s.n) = a * bm;
    }
    return c;
}

}  // namespace accelsim::mxu_test
