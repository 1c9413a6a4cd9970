// --validate's quantization error (docs/outputs.md "Quantization error") from the real executable:
// int8 matmul, bmm and conv2d on tpu_v4, int8 matmul on a100, fp8 matmul on h100. The test draws
// the same seeded fp32 inputs (the chips' documented streams), quantizes them with its own code,
// computes both outputs in double (a direct convolution loop for conv2d) and checks every op's
// JSON figures and the run's pooled ones against that.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/dtype.h"
#include "models/common/quantization.h"
#include "models/tpu/tpu_numerics.h"
#include "tests/accelsim_process.h"

namespace accelsim_test::quantization_cli_test {
namespace {

using nlohmann::json;
using accelsim::DType;

// The test's quantization: int8 per-tensor scale max|x|/127 with rint (ties to even in the
// default rounding mode), or fp8 rounding; returns the dequantized values.
std::vector<double> dequantized(const std::vector<float>& x, DType dtype) {
    std::vector<double> out(x.size());
    if (dtype == DType::int8) {
        float m = 0;
        for (float v : x) m = std::max(m, std::fabs(v));
        const float s = m / 127.0f;
        for (std::size_t i = 0; i < x.size(); ++i) out[i] = static_cast<double>(std::rint(x[i] / s)) * s;
    } else {
        for (std::size_t i = 0; i < x.size(); ++i) out[i] = accelsim::fp8_round(x[i], dtype);
    }
    return out;
}

struct Expected {
    double max_abs = 0, sum_err2 = 0, sum_ref2 = 0;
    void add(double q, double r) {
        max_abs = std::max(max_abs, std::fabs(q - r));
        sum_err2 += (q - r) * (q - r);
        sum_ref2 += r * r;
    }
    double relative_rms() const { return std::sqrt(sum_err2 / sum_ref2); }
};

// C = A B per batch in double, for the quantized and the fp32 inputs.
Expected gemm_error(int batch, int m, int n, int k, const std::vector<float>& a, const std::vector<float>& b, DType dtype) {
    const std::vector<double> qa = dequantized(a, dtype), qb = dequantized(b, dtype);
    Expected e;
    for (int p = 0; p < batch; ++p)
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double q = 0, r = 0;
                for (int kk = 0; kk < k; ++kk) {
                    const std::size_t ai = static_cast<std::size_t>((p * m + i) * k + kk), bi = static_cast<std::size_t>((p * k + kk) * n + j);
                    q += qa[ai] * qb[bi];
                    r += static_cast<double>(a[ai]) * b[bi];
                }
                e.add(q, r);
            }
    return e;
}

void expect_op(const json& op, const Expected& want, const std::string& dtype) {
    SCOPED_TRACE(op["name"].get<std::string>());
    ASSERT_TRUE(op["numerics"].contains("quantization_error"));
    const json& q = op["numerics"]["quantization_error"];
    EXPECT_EQ(q["reference"], "fp32");
    EXPECT_TRUE(contains(q["scheme"].get<std::string>(), dtype));
    EXPECT_NEAR(q["max_abs"].get<double>(), want.max_abs, 1e-5 + 1e-4 * want.max_abs);
    EXPECT_NEAR(q["relative_rms"].get<double>(), want.relative_rms(), 1e-4 * want.relative_rms());
}

json run_validated(const std::string& config, const std::string& trace_text, const std::string& name) {
    const fs::path dir = scratch_dir(name);
    write_file(dir / "q.trace", "# accelsim-trace 1\n" + trace_text);
    const Result r = run("--config configs/" + config + ".json --trace '" + (dir / "q.trace").string() +
                         "' --validate --json '" + (dir / "q.json").string() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "quantization error against fp32")) << r.out;
    return json::parse(slurp(dir / "q.json"));
}

TEST(QuantizationCli, TpuInt8MatmulBmmConvAgainstIndependentRecomputation) {
    const json report = run_validated("tpu_v4",
                                      "matmul q8 m=24 n=40 k=72 dtype=int8\n"
                                      "bmm qb b=2 m=16 n=24 k=40 dtype=int8\n"
                                      "conv2d qc n=1 h=6 w=6 c=8 k=16 r=3 s=3 pad=1 dtype=int8\n"
                                      "matmul f32 m=8 n=8 k=8 dtype=fp32\n",
                                      "tpu");
    const std::uint64_t seed = report["config"]["seed"].get<std::uint64_t>();
    // The TPU's operands (tpu_numerics.h): per op, mt19937_64(op_seed(seed, index)) feeds
    // fill_random's fp32 stream, A (or the conv input) first.
    auto draw = [&](int index, std::int64_t n_a, std::int64_t n_b, std::vector<float>& a, std::vector<float>& b) {
        std::mt19937_64 rng(accelsim::tpu::op_seed(seed, index));
        accelsim::tpu::fill_random(a, n_a, DType::fp32, rng);
        accelsim::tpu::fill_random(b, n_b, DType::fp32, rng);
    };
    std::vector<float> a, b;
    const json& ops = report["ops"];
    draw(0, 24 * 72, 72 * 40, a, b);
    const Expected matmul = gemm_error(1, 24, 40, 72, a, b, DType::int8);
    expect_op(ops[0], matmul, "int8");
    draw(1, 2 * 16 * 40, 2 * 40 * 24, a, b);
    const Expected bmm = gemm_error(2, 16, 24, 40, a, b, DType::int8);
    expect_op(ops[1], bmm, "int8");
    // conv2d: NHWC input 6x6x8, filters [16][3][3][8], pad 1: a direct loop in double.
    draw(2, 6 * 6 * 8, 16 * 3 * 3 * 8, a, b);
    const std::vector<double> qx = dequantized(a, DType::int8), qw = dequantized(b, DType::int8);
    Expected conv;
    for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 6; ++x)
            for (int k = 0; k < 16; ++k) {
                double q = 0, r = 0;
                for (int dy = 0; dy < 3; ++dy)
                    for (int dx = 0; dx < 3; ++dx) {
                        const int iy = y + dy - 1, ix = x + dx - 1;
                        if (iy < 0 || iy >= 6 || ix < 0 || ix >= 6) continue;
                        for (int c = 0; c < 8; ++c) {
                            const auto xi = static_cast<std::size_t>((iy * 6 + ix) * 8 + c);
                            const auto wi = static_cast<std::size_t>(((k * 3 + dy) * 3 + dx) * 8 + c);
                            q += qx[xi] * qw[wi];
                            r += static_cast<double>(a[xi]) * b[wi];
                        }
                    }
                conv.add(q, r);
            }
    expect_op(ops[2], conv, "int8");
    EXPECT_FALSE(ops[3]["numerics"].contains("quantization_error"));  // fp32: nothing quantized
    // End to end: the pooled figure over the three ops.
    const json& pooled = report["numerics"]["quantization_error"];
    EXPECT_EQ(pooled["ops"], 3);
    EXPECT_EQ(pooled["values"], 24 * 40 + 2 * 16 * 24 + 36 * 16);
    EXPECT_NEAR(pooled["max_abs"].get<double>(), std::max({matmul.max_abs, bmm.max_abs, conv.max_abs}), 1e-5);
    const double rms = std::sqrt((matmul.sum_err2 + bmm.sum_err2 + conv.sum_err2) / (matmul.sum_ref2 + bmm.sum_ref2 + conv.sum_ref2));
    EXPECT_NEAR(pooled["relative_rms"].get<double>(), rms, 1e-4 * rms);
    EXPECT_NEAR(pooled["worst_op_relative_rms"].get<double>(),
                std::max({matmul.relative_rms(), bmm.relative_rms(), conv.relative_rms()}), 1e-4 * rms);
}

// The GPU lowering's operands (models/gpu/gemm.cpp lower_byte_gemm): mt19937_64(config seed),
// uniform_real_distribution(-1, 1), A then B in K x N order, the same stream for every op.
Expected gpu_gemm_error(const json& report, int batch, int m, int n, int k, DType dtype) {
    std::mt19937_64 rng(report["config"]["seed"].get<std::uint64_t>());
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(static_cast<std::size_t>(batch * m * k)), b(static_cast<std::size_t>(batch * k * n));
    for (float& x : a) x = uniform(rng);
    for (float& x : b) x = uniform(rng);
    return gemm_error(batch, m, n, k, a, b, dtype);
}

TEST(QuantizationCli, A100Int8AndH100Fp8Gemms) {
    const json a100 = run_validated("a100", "bmm qb b=2 m=32 n=24 k=48 dtype=int8\n", "a100");
    expect_op(a100["ops"][0], gpu_gemm_error(a100, 2, 32, 24, 48, DType::int8), "int8");
    const json h100 = run_validated("h100",
                                    "matmul e4 m=32 n=24 k=64 dtype=fp8_e4m3\n"
                                    "matmul e5 m=32 n=24 k=64 dtype=fp8_e5m2\n",
                                    "h100");
    const Expected e4 = gpu_gemm_error(h100, 1, 32, 24, 64, DType::fp8_e4m3);
    const Expected e5 = gpu_gemm_error(h100, 1, 32, 24, 64, DType::fp8_e5m2);
    expect_op(h100["ops"][0], e4, "fp8_e4m3");
    expect_op(h100["ops"][1], e5, "fp8_e5m2");
    // e5m2 keeps one mantissa bit fewer than e4m3: about twice the error.
    EXPECT_GT(e5.relative_rms(), 1.5 * e4.relative_rms());
}

TEST(QuantizationCli, SameSeedSameBytesAndTimingOnlyRunsHaveNoQuantization) {
    const fs::path dir = scratch_dir("det");
    write_file(dir / "q.trace", "# accelsim-trace 1\nmatmul q8 m=16 n=16 k=32 dtype=int8\n");
    auto json_of = [&](const std::string& extra, const std::string& out) {
        const Result r = run("--config configs/systolic_8x8.json --trace '" + (dir / "q.trace").string() + "' " + extra +
                             " --json '" + (dir / out).string() + "' --csv '" + (dir / (out + ".csv")).string() + "'");
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return slurp(dir / out) + slurp(dir / (out + ".csv"));
    };
    const std::string first = json_of("--validate", "a.json"), second = json_of("--validate", "b.json");
    EXPECT_EQ(first, second);
    EXPECT_TRUE(contains(first, "quantization_relative_rms"));
    const std::string timing = json_of("", "t.json");
    EXPECT_FALSE(contains(timing, "quantization"));
}

TEST(QuantizationCli, ActivationOutliersFromTheConfigOnTpuAndGpu) {
    // --set activation_outlier_fraction=0.002: two of a 768-feature activation's columns 20 times
    // larger (activation_outlier_magnitude's default), in A before quantization and in the fp32
    // reference alike. The test applies the library's outlier choice (its own unit test checks it)
    // to the documented streams and recomputes every figure; int8's error grows about tenfold, fp8's
    // stays.
    const std::string trace = "matmul q m=64 n=32 k=768 dtype=int8\n";
    auto run_with = [&](const std::string& config, const std::string& text, const std::string& name) {
        const fs::path dir = scratch_dir(name);
        write_file(dir / "q.trace", "# accelsim-trace 1\n" + text);
        const Result r = run("--config configs/" + config + ".json --trace '" + (dir / "q.trace").string() +
                             "' --validate --set activation_outlier_fraction=0.002 --json '" + (dir / "q.json").string() + "'");
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return json::parse(slurp(dir / "q.json"));
    };
    const accelsim::ActivationOutliers outliers{0.002, 20};
    // TPU (tpu_v4): op 0's stream, A's outlier features chosen from the op's seed.
    const json tpu = run_with("tpu_v4", trace, "outliers_tpu");
    const std::uint64_t tpu_seed = accelsim::tpu::op_seed(tpu["config"]["seed"].get<std::uint64_t>(), 0);
    std::mt19937_64 rng(tpu_seed);
    std::vector<float> a, b;
    accelsim::tpu::fill_random(a, 64 * 768, DType::fp32, rng);
    accelsim::tpu::fill_random(b, 768 * 32, DType::fp32, rng);
    const Expected uniform_tpu = gemm_error(1, 64, 32, 768, a, b, DType::int8);
    accelsim::apply_activation_outliers(a, 768, outliers, tpu_seed);
    const Expected tpu_int8 = gemm_error(1, 64, 32, 768, a, b, DType::int8);
    expect_op(tpu["ops"][0], tpu_int8, "int8");
    EXPECT_GT(tpu_int8.relative_rms(), 8 * uniform_tpu.relative_rms());
    // GPU (a100 int8, h100 fp8_e4m3): the config seed's stream, outliers chosen from it.
    auto gpu_error = [&](const json& report, DType dtype, bool with_outliers) {
        const std::uint64_t seed = report["config"]["seed"].get<std::uint64_t>();
        std::mt19937_64 g(seed);
        std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
        std::vector<float> ga(64 * 768), gb(768 * 32);
        for (float& x : ga) x = uniform(g);
        for (float& x : gb) x = uniform(g);
        if (with_outliers) accelsim::apply_activation_outliers(ga, 768, outliers, seed);
        return gemm_error(1, 64, 32, 768, ga, gb, dtype);
    };
    const json a100 = run_with("a100", trace, "outliers_a100");
    expect_op(a100["ops"][0], gpu_error(a100, DType::int8, true), "int8");
    EXPECT_GT(gpu_error(a100, DType::int8, true).relative_rms(), 8 * gpu_error(a100, DType::int8, false).relative_rms());
    const json h100 = run_with("h100", "matmul e4 m=64 n=32 k=768 dtype=fp8_e4m3\n", "outliers_h100");
    const Expected fp8 = gpu_error(h100, DType::fp8_e4m3, true);
    expect_op(h100["ops"][0], fp8, "fp8_e4m3");
    EXPECT_NEAR(fp8.relative_rms(), gpu_error(h100, DType::fp8_e4m3, false).relative_rms(),
                0.15 * fp8.relative_rms());
}

}  // namespace
}  // namespace accelsim_test::quantization_cli_test
