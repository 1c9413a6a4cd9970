// --validate on the TPU chip with the operands and reference made on a second thread
// (TpuChip::set_validation_worker): the same outcome as the inline path, op by op, and a wrong
// datapath output is still caught (injected through the test hook set_result_fault_for_test).
// Also the host-cost shortcuts under it: the bf16 fill's integer rounding against Eigen's
// bfloat16 conversion, and the MXU's bulk operand check still naming the first bad value.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "models/mxu/mxu.h"
#include "models/tpu/tpu_chip.h"
#include "sim/trace/trace_reader.h"
#include "tpu_test_chips.h"

namespace accelsim::tpu::tpu_validation_test {
namespace {

using tpu_test::hierarchy_chip;
using tpu_test::matmul;

// tiny_mixed.trace (a matmul and every vector op), tiny_conv.trace (convolutions, int8) and a
// bf16 GEMM whose K the 2-core, 2-MXU chip splits: every kind of check the chip makes.
std::vector<Op> small_trace() {
    const std::string root = ACCELSIM_SOURCE_DIR;
    std::vector<Op> ops = read_trace(root + "/traces/tiny_mixed.trace", DType::bf16);
    for (const Op& op : read_trace(root + "/traces/tiny_conv.trace", DType::int8)) ops.push_back(op);
    ops.push_back(matmul(200, 300, 1500, DType::bf16));
    ops.push_back(matmul(64, 96, 2048, DType::int8));  // int8 beyond K = 1024: reference in double
    return ops;
}

std::vector<TpuOpResult> run_all(TpuChipParams params, bool worker, const ResultFault& fault = nullptr) {
    TpuChip chip(params);
    chip.set_validation_worker(worker);
    if (fault) chip.set_result_fault_for_test(fault);
    const std::vector<Op> ops = small_trace();
    std::vector<TpuOpResult> out;
    for (std::size_t i = 0; i < ops.size(); ++i)
        out.push_back(chip.run(ops[i], true, i + 1 < ops.size() ? &ops[i + 1] : nullptr));
    return out;
}

std::int64_t outputs_of(const Op& op) {
    if (op.kind == OpKind::conv2d) return op.conv.n * op.conv.out_h() * op.conv.out_w() * op.conv.k;
    const GemmShape g = op.as_gemm();
    return g.batch * g.m * g.n;
}

TpuChipParams ideal_chip() {
    TpuChipParams p;
    p.cores = 2;
    p.mxus_per_core = 2;
    p.mxu.rows = p.mxu.cols = 32;
    p.ideal_memory = true;
    return p;
}

// A hierarchy chip whose MXU does not run int8 (as tpu_v3): int8 GEMMs go to the vector unit.
TpuChipParams no_int8_mxu_chip() {
    TpuChipParams p = hierarchy_chip(8, 2, 2);
    p.mxu.macs_per_pe_per_cycle.int8 = 0;
    return p;
}

TEST(TpuValidationWorker, SameOutcomeAsInlineOpByOp) {
    for (const TpuChipParams& params : {hierarchy_chip(8, 2, 2), no_int8_mxu_chip(), ideal_chip()}) {
        const std::vector<TpuOpResult> inline_run = run_all(params, false), worker_run = run_all(params, true);
        const std::vector<Op> ops = small_trace();
        ASSERT_EQ(inline_run.size(), worker_run.size());
        for (std::size_t i = 0; i < ops.size(); ++i) {
            const TpuOpResult &a = inline_run[i], &b = worker_run[i];
            EXPECT_EQ(a.cycles, b.cycles) << ops[i].name;
            ASSERT_EQ(a.numerics.has_value(), b.numerics.has_value()) << ops[i].name;
            if (!a.numerics) continue;  // the ideal chip checks GEMMs only
            EXPECT_TRUE(a.numerics->passed) << ops[i].name;
            EXPECT_EQ(a.numerics->passed, b.numerics->passed) << ops[i].name;
            EXPECT_EQ(a.numerics->checked, b.numerics->checked) << ops[i].name;
            // Bit-identical errors: the same values in the same order on either thread.
            EXPECT_EQ(a.numerics->max_abs_err, b.numerics->max_abs_err) << ops[i].name;
            EXPECT_EQ(a.numerics->max_rel_err, b.numerics->max_rel_err) << ops[i].name;
            if (is_gemm_like(ops[i].kind)) {
                EXPECT_EQ(a.numerics->checked, outputs_of(ops[i])) << ops[i].name;
            }
            if (ops[i].dtype == DType::int8 && is_gemm_like(ops[i].kind)) {
                EXPECT_EQ(a.numerics->max_abs_err, 0.0) << ops[i].name;  // int32 accumulation is exact
            }
        }
    }
}

TEST(TpuValidationWorker, InjectedWrongOutputFailsTheCheck) {
    // One output of every GEMM off by 0.5: an int8 GEMM's outputs and reference are integers, so
    // its maximum error is exactly 0.5; a bf16 one's is 0.5 within the float tolerance (< 1e-3 here).
    const ResultFault fault = [](std::vector<double>& c) { c[c.size() / 2] += 0.5; };
    for (const TpuChipParams& params : {hierarchy_chip(8, 2, 2), no_int8_mxu_chip(), ideal_chip()}) {
        for (bool worker : {false, true}) {
            const std::vector<TpuOpResult> runs = run_all(params, worker, fault);
            const std::vector<Op> ops = small_trace();
            for (std::size_t i = 0; i < ops.size(); ++i) {
                if (!is_gemm_like(ops[i].kind)) {
                    if (runs[i].numerics) {
                        EXPECT_TRUE(runs[i].numerics->passed) << ops[i].name;  // untouched
                    }
                    continue;
                }
                ASSERT_TRUE(runs[i].numerics) << ops[i].name;
                EXPECT_FALSE(runs[i].numerics->passed) << ops[i].name << " worker " << worker;
                if (ops[i].dtype == DType::int8) EXPECT_EQ(runs[i].numerics->max_abs_err, 0.5) << ops[i].name;
                else EXPECT_NEAR(runs[i].numerics->max_abs_err, 0.5, 1e-3) << ops[i].name;
            }
        }
    }
}

TEST(TpuValidationData, Bf16FillIsEigensRoundingOfTheSameStream) {
    // The float stream is the same for every float dtype; bf16 rounds it in integer arithmetic,
    // which must agree with Eigen::bfloat16 (round to nearest even), odd sizes included.
    for (std::int64_t n : {1, 2, 7, 1000, 4097}) {
        std::mt19937_64 rng_f(42 + n), rng_b(42 + n);
        std::vector<float> f, b;
        fill_random(f, n, DType::fp32, rng_f);
        fill_random(b, n, DType::bf16, rng_b);
        ASSERT_EQ(b.size(), static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(b[i], static_cast<float>(bf16_t(f[i]))) << "n " << n << " i " << i;
            ASSERT_GE(f[i], -1.0f);
            ASSERT_LT(f[i], 1.0f);
        }
    }
}

TEST(TpuValidationData, MxuBulkOperandCheckStillNamesTheFirstBadValue) {
    MxuParams p;
    p.rows = p.cols = 4;
    std::vector<float> a(2 * 4, 0.5f), b(4 * 4, 0.25f);  // A is 2 x 4, B 4 x 4
    a[5] = 1.0f + 1.0f / 1024.0f;  // needs 10 mantissa bits: not a bf16, fine as fp32
    b[3] = INFINITY;
    const MxuOperands ops{a.data(), b.data()};
    try {
        run_mxu_gemm(p, {1, 2, 4, 4}, DType::bf16, &ops);
        FAIL() << "expected a throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("A[5]"), std::string::npos) << e.what();
    }
    try {
        run_mxu_gemm(p, {1, 2, 4, 4}, DType::fp32, &ops);
        FAIL() << "expected a throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("B[3]"), std::string::npos) << e.what();
    }
    b[3] = 0.25f;
    const MxuGemmResult r = run_mxu_gemm(p, {1, 2, 4, 4}, DType::fp32, &ops);
    // Row 1 of A is 0.5, 1+2^-10, 0.5, 0.5 against a column of 0.25: 0.25 * (2.5 + 2^-10).
    EXPECT_EQ(r.c(4), 0.25 * (2.5 + 1.0 / 1024.0));
}

}  // namespace
}  // namespace accelsim::tpu::tpu_validation_test
