// The fp8 tensor-core MMA, mma.m16n8k32.e4m3 / .e5m2 (PTX's
// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32, sm_89+): its fragment layout (PTX ISA
// 9.7.14.5.10, "Matrix Fragments for mma.m16n8k32", shared with .s8) and fp32 accumulation against
// Eigen on the same fp8 inputs, and its issue rate on the tensor pipe worked by hand from the
// h100 and rtx4090 configs' fp8 rates.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <random>

#include <Eigen/Core>

#include "models/common/dtype.h"
#include "models/simt/simt_gpu.h"
#include "models/simt/sm_spec.h"
#include "tests/simt/mma_m16n8k32.h"

namespace accelsim::simt::mma_fp8_test {
namespace {

using test::independent_mmas;
using test::mma_m16n8k32_source;

using MatA = Eigen::Matrix<float, 16, 32, Eigen::RowMajor>;
using MatB = Eigen::Matrix<float, 32, 8, Eigen::RowMajor>;
using MatC = Eigen::Matrix<float, 16, 8, Eigen::RowMajor>;

// A and B hold fp8 values (as floats); they are encoded to the format's bytes for the kernel, B to
// b_format where given (the mixed forms).
MatC run_mma(const Kernel& k, DType format, const MatA& a, const MatB& b, const MatC& c,
             std::optional<DType> b_format = std::nullopt) {
    MatC d;
    const DType bf = b_format.value_or(format);
    std::function<std::uint8_t(int, int)> a_byte = [&](int i, int kk) { return fp8_encode(a(i, kk), format); };
    std::function<std::uint8_t(int, int)> b_byte = [&](int kk, int n) { return fp8_encode(b(kk, n), bf); };
    test::run_mma_m16n8k32(k, a_byte, b_byte, c.data(), d.data());
    return d;
}

struct Format {
    DType dtype;
    const char* short_form;
    const char* ptx;
};
const Format kFormats[] = {
    {DType::fp8_e4m3, "mma.m16n8k32.e4m3", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"},
    {DType::fp8_e5m2, "mma.m16n8k32.e5m2", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"},
};

TEST(MmaFp8, FragmentLayoutMatchesEigenExactlyOnIntegerValues) {
    // Integer fp8 values (e4m3: every integer up to 16; e5m2: up to 8, then 10, 12, 14, 16) and
    // integer C: every product and partial sum is an integer below 2^24, exact in fp32 in any
    // order, so Eigen's product must match the mma bit for bit and any misplaced element shows.
    std::mt19937 rng(8);
    std::uniform_int_distribution<int> value(-16, 16), acc(-100000, 100000);
    for (const Format& f : kFormats) {
        MatA a;
        MatB b;
        MatC c;
        for (int i = 0; i < a.size(); ++i) a.data()[i] = fp8_round(static_cast<float>(value(rng)), f.dtype);
        for (int i = 0; i < b.size(); ++i) b.data()[i] = fp8_round(static_cast<float>(value(rng)), f.dtype);
        for (int i = 0; i < c.size(); ++i) c.data()[i] = static_cast<float>(acc(rng));
        for (int i = 0; i < a.size(); ++i) ASSERT_EQ(a.data()[i], std::nearbyint(a.data()[i]));
        const MatC expected = a * b + c;
        for (const char* mnemonic : {f.short_form, f.ptx}) {
            const MatC d = run_mma(assemble(mma_m16n8k32_source(mnemonic), "mma_fp8.sasm"), f.dtype, a, b, c);
            for (int i = 0; i < 16; ++i)
                for (int j = 0; j < 8; ++j) EXPECT_EQ(d(i, j), expected(i, j)) << mnemonic << " " << i << "," << j;
        }
    }
}

TEST(MmaFp8, Fp32AccumulationMatchesEigenWithinItsRoundingBound) {
    // Values over most of each format's range (e4m3 to 448; e5m2 to 2^8 so that no sum nears
    // fp32's limits), subnormals included. Each product of two fp8 values is exact in fp32; the
    // 32 additions into C round, so the mma and Eigen's fp32 product (summed in another order) may
    // differ by at most 2 x 33 x 2^-24 x (sum_k |a||b| + |c|): each is within 33 roundings of the
    // exact sum, computed here in double (its own error, under 33 x 2^-53 of the magnitude, is
    // negligible against the bound).
    std::mt19937 rng(89);
    for (const Format& f : kFormats) {
        std::uniform_int_distribution<int> code(0, 255);
        auto random_value = [&] {
            for (;;) {
                const float v = fp8_decode(static_cast<std::uint8_t>(code(rng)), f.dtype);
                if (std::isfinite(v) && std::fabs(v) <= (f.dtype == DType::fp8_e4m3 ? 448.0f : 256.0f)) return v;
            }
        };
        MatA a;
        MatB b;
        MatC c;
        for (int i = 0; i < a.size(); ++i) a.data()[i] = random_value();
        for (int i = 0; i < b.size(); ++i) b.data()[i] = random_value();
        for (int i = 0; i < c.size(); ++i) c.data()[i] = random_value();
        const MatC eigen = a * b + c;
        const Eigen::Matrix<double, 16, 8> exact = a.cast<double>() * b.cast<double>() + c.cast<double>();
        const Eigen::Matrix<double, 16, 8> magnitude =
            a.cast<double>().cwiseAbs() * b.cast<double>().cwiseAbs() + c.cast<double>().cwiseAbs();
        const MatC d = run_mma(assemble(mma_m16n8k32_source(f.short_form), "mma_fp8.sasm"), f.dtype, a, b, c);
        int inexact = 0;
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 8; ++j) {
                const double bound = 33 * 0x1p-24 * magnitude(i, j);
                EXPECT_LE(std::fabs(d(i, j) - exact(i, j)), bound) << to_string(f.dtype) << " " << i << "," << j;
                EXPECT_LE(std::fabs(static_cast<double>(d(i, j)) - eigen(i, j)), 2 * bound);
                inexact += static_cast<double>(d(i, j)) != exact(i, j);
            }
        EXPECT_GT(inexact, 0) << "the inputs should exercise fp32 rounding";
    }
}

TEST(MmaFp8, TensorPipeIssuesAtTheConfigsFp8Rate) {
    // h100's SM: fp8 4096 dense MACs per cycle (1978.9 TFLOPS / (2 x 132 SMs x 1.83 GHz)), 4
    // sub-partitions: 1024 each, so one m16n8k32 (4096 MACs) every 4096 / 1024 = 4 cycles.
    // 10 independent mmas from one warp issue at 0, 4, ..., 36; exit at 37; done at 38; the 9 gaps
    // of 3 cycles are pipeline stalls.
    SmSpec h100;
    h100.tensor_macs_per_cycle.fp16 = 2048;
    h100.tensor_macs_per_cycle.int8 = 4096;
    h100.tensor_macs_per_cycle.fp8_e4m3 = 4096;
    h100.tensor_macs_per_cycle.fp8_e5m2 = 4096;
    SimtParams p;
    p.sm = sm_params_from(h100);
    p.sm.limits = *published_limits("sm_90");
    EXPECT_EQ(p.sm.tensor_e4m3.initiation_interval, 4);
    EXPECT_EQ(p.sm.tensor_e5m2.initiation_interval, 4);
    GlobalMemory mem;
    for (const char* mnemonic : {"mma.m16n8k32.e4m3", "mma.m16n8k32.e5m2"}) {
        const KernelStats s = launch(independent_mmas(mnemonic, 10), {1, 32}, {}, mem, p);
        EXPECT_EQ(s.cycles, 38u) << mnemonic;
        EXPECT_EQ(s.mma_issued, 10u);
        EXPECT_EQ(s.pipeline_cycles, 27u);
    }
    // rtx4090's SM: fp8 with fp32 accumulation at half the int8 rate, 512 MACs per cycle (330.3
    // TFLOPS / (2 x 128 SMs x 2.52 GHz)): 128 per sub-partition, one mma every 32 cycles: issues
    // at 0, 32, ..., 288, exit at 289, done at 290. Its int8 mma (1024 per SM) keeps 16.
    SmSpec rtx4090;
    rtx4090.tensor_macs_per_cycle.fp16 = 256;
    rtx4090.tensor_macs_per_cycle.int8 = 1024;
    rtx4090.tensor_macs_per_cycle.fp8_e4m3 = 512;
    p.sm = sm_params_from(rtx4090);
    p.sm.limits = *published_limits("sm_89");
    EXPECT_EQ(p.sm.tensor_e4m3.initiation_interval, 32);
    EXPECT_EQ(launch(independent_mmas("mma.m16n8k32.e4m3", 10), {1, 32}, {}, mem, p).cycles, 290u);
    EXPECT_EQ(p.sm.tensor_s8.initiation_interval, 16);
    EXPECT_EQ(launch(independent_mmas("mma.m16n8k32.s8", 10), {1, 32}, {}, mem, p).cycles, 146u);
}

TEST(MmaFp8, MixedFormatsReadEachOperandInItsOwnFormat) {
    // PTX's mma.m16n8k32 takes .atype and .btype independently (.e4m3.e5m2, .e5m2.e4m3). Integer
    // values each format holds (e4m3: every integer to 16; e5m2: to 8, then even to 16) and integer
    // C: exact in fp32 in any order, so the mma must match Eigen bit for bit. The same B bytes read
    // in A's format would be other numbers (0x4C = 0.10011.00 is 2^(19-15) = 16 in e5m2 and
    // 0.1001.100 = 1.5 x 2^(9-7) = 6 in e4m3), so a kernel that ignored B's type fails this.
    std::mt19937 rng(58);
    std::uniform_int_distribution<int> value(-16, 16), acc(-100000, 100000);
    const struct {
        DType a, b;
        const char* short_form;
        const char* ptx;
    } pairs[] = {
        {DType::fp8_e4m3, DType::fp8_e5m2, "mma.m16n8k32.e4m3.e5m2", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32"},
        {DType::fp8_e5m2, DType::fp8_e4m3, "mma.m16n8k32.e5m2.e4m3", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32"},
    };
    EXPECT_EQ(fp8_decode(0x4C, DType::fp8_e5m2), 16.0f);
    EXPECT_EQ(fp8_decode(0x4C, DType::fp8_e4m3), 6.0f);
    for (const auto& p : pairs) {
        MatA a;
        MatB b;
        MatC c;
        for (int i = 0; i < a.size(); ++i) a.data()[i] = fp8_round(static_cast<float>(value(rng)), p.a);
        for (int i = 0; i < b.size(); ++i) b.data()[i] = fp8_round(static_cast<float>(value(rng)), p.b);
        for (int i = 0; i < c.size(); ++i) c.data()[i] = static_cast<float>(acc(rng));
        const MatC expected = a * b + c;
        // B's bytes read as A's format: what a kernel ignoring .btype would compute.
        MatB misread;
        for (int i = 0; i < b.size(); ++i) misread.data()[i] = fp8_decode(fp8_encode(b.data()[i], p.b), p.a);
        const MatC wrong = a * misread + c;
        for (const char* mnemonic : {p.short_form, p.ptx}) {
            const MatC d = run_mma(assemble(mma_m16n8k32_source(mnemonic), "mma_mixed.sasm"), p.a, a, b, c, p.b);
            int differs_from_wrong = 0;
            for (int i = 0; i < 16; ++i)
                for (int j = 0; j < 8; ++j) {
                    EXPECT_EQ(d(i, j), expected(i, j)) << mnemonic << " " << i << "," << j;
                    differs_from_wrong += d(i, j) != wrong(i, j);
                }
            EXPECT_GT(differs_from_wrong, 100) << mnemonic;  // of 128: the data tells the formats apart
        }
    }
    // .s8 does not mix with fp8, and a 16-bit mma has no second type.
    for (const char* bad : {"mma.m16n8k32.e4m3.s8", "mma.m16n8k32.s8.e5m2", "mma.m16n8k16.f16.bf16",
                            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.s8.f32", "mma.m16n8k32.e4m3.e5m2.e4m3"})
        EXPECT_THROW(assemble(mma_m16n8k32_source(bad), "bad.sasm"), AssemblyError) << bad;
}

TEST(MmaFp8, MixedFormatsIssueAtTheSlowerFormatsRate) {
    // An rtx4090-like SM (fp8 e4m3 512 MACs per cycle: one m16n8k32 per 32 cycles per
    // sub-partition) given half that rate for e5m2 (256: one per 64 cycles). Ten independent mixed
    // mmas from one warp issue every 64 cycles, at 0, 64, ..., 576; exit at 577, done at 578; the
    // e4m3 form keeps 32: 9 x 32 + 2 = 290 (the test above).
    SmSpec spec;
    spec.tensor_macs_per_cycle.fp16 = 256;
    spec.tensor_macs_per_cycle.int8 = 1024;
    spec.tensor_macs_per_cycle.fp8_e4m3 = 512;
    spec.tensor_macs_per_cycle.fp8_e5m2 = 256;
    SimtParams p;
    p.sm = sm_params_from(spec);
    p.sm.limits = *published_limits("sm_89");
    ASSERT_EQ(p.sm.tensor_e5m2.initiation_interval, 64);
    GlobalMemory mem;
    EXPECT_EQ(launch(independent_mmas("mma.m16n8k32.e4m3", 10), {1, 32}, {}, mem, p).cycles, 290u);
    for (const char* mixed : {"mma.m16n8k32.e4m3.e5m2", "mma.m16n8k32.e5m2.e4m3"})
        EXPECT_EQ(launch(independent_mmas(mixed, 10), {1, 32}, {}, mem, p).cycles, 578u) << mixed;
}

}  // namespace
}  // namespace accelsim::simt::mma_fp8_test
