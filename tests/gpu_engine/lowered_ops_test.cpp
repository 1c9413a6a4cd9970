// Trace ops lowered by the GPU kernel library (models/gpu/lowering.h) through the engine: each op
// runs as one kernel launch on the config's SMs and memory, and --validate compares its outputs
// with Eigen or a host reference inside the library. Expected values are worked out in comments.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "tests/gpu_engine/engine_run.h"
#include "sim/roofline/roofline.h"
#include "sim/trace/trace_reader.h"

namespace fs = std::filesystem;

namespace accelsim::lowered_ops_test {
namespace {

const std::string kSource = ACCELSIM_SOURCE_DIR;

ChipConfig config(const std::string& name, const std::vector<std::string>& overrides = {}) {
    return test::shipped_config(name, overrides);
}

using test::run;
using test::stat;
using test::write_trace;

// Outputs each op writes (what --validate must at least compare).
std::int64_t outputs(const Op& op) {
    switch (op.kind) {
        case OpKind::matmul:
        case OpKind::bmm: return op.gemm.batch * op.gemm.m * op.gemm.n;
        case OpKind::softmax:
        case OpKind::layernorm: return op.rows * op.cols;
        default: return op.elements;
    }
}

void expect_every_op_is_a_validated_kernel(const std::string& config_name) {
    const ChipConfig chip = config(config_name);
    const RunReport report = run(chip, kSource + "/traces/bert_base_1layer.trace", true);
    ASSERT_EQ(report.ops.size(), 13u);
    for (const OpReport& r : report.ops) {
        SCOPED_TRACE(r.op.name);
        EXPECT_EQ(r.model, "simt");
        EXPECT_GE(static_cast<double>(r.cycles), r.roofline.bound_cycles);
        ASSERT_TRUE(r.numerics);
        EXPECT_TRUE(r.numerics->passed);
        EXPECT_GE(r.numerics->checked, outputs(r.op));
    }
    ASSERT_TRUE(report.numerics);
    EXPECT_TRUE(report.numerics->passed);
}

TEST(LoweredOps, OneBertLayerOnA100RunsAsKernelsAndMatchesTheReferences) {
    expect_every_op_is_a_validated_kernel("a100");
}

TEST(LoweredOps, OneBertLayerOnOneSmRunsAsKernelsAndMatchesTheReferences) {
    expect_every_op_is_a_validated_kernel("simt_1sm");
}

TEST(LoweredOps, TensorCoreWorkAndUtilizationFollowTheTiles) {
    // A GEMM's blocks each issue (BM/16) x (BN/8) mma per 16 of K, over ceil(K'/BK) slices of BK
    // (K' = K rounded up to 8): the mma count is a closed form of the reported tile, and the
    // utilization is those MACs (2048 per mma) over the tensor peak (1024 MACs per SM per cycle,
    // 108 SMs) times the op's cycles.
    const ChipConfig chip = config("a100");
    const RunReport report = run(chip, write_trace({"matmul g m=300 n=200 k=100", "bmm b b=3 m=64 n=40 k=72"}));
    for (const OpReport& r : report.ops) {
        SCOPED_TRACE(r.op.name);
        const auto tm = static_cast<std::int64_t>(stat(r, "gpu.tile_m"));
        const auto tn = static_cast<std::int64_t>(stat(r, "gpu.tile_n"));
        const auto tk = static_cast<std::int64_t>(stat(r, "gpu.tile_k"));
        const GemmShape& g = r.op.gemm;
        const std::int64_t blocks = g.batch * ((g.m + tm - 1) / tm) * ((g.n + tn - 1) / tn);
        EXPECT_EQ(stat(r, "gpu.grid"), static_cast<double>(blocks));
        const std::int64_t k_padded = (g.k + 7) / 8 * 8;
        const std::int64_t slices = (k_padded + tk - 1) / tk;
        const std::int64_t mma = blocks * (tm / 16) * (tn / 8) * (slices * tk / 16);
        EXPECT_EQ(stat(r, "simt.mma_issued"), static_cast<double>(mma));
        ASSERT_TRUE(r.utilization);
        EXPECT_DOUBLE_EQ(*r.utilization, static_cast<double>(mma) * 2048.0 / (1024.0 * 108.0 * static_cast<double>(r.cycles)));
        // The compute bound is the larger of the tensor peak and one issue per scheduler-cycle.
        EXPECT_GE(r.roofline.cycles.at("compute"), static_cast<double>(g.macs()) / (1024.0 * 108.0));
    }
}

TEST(LoweredOps, SkinnyGemmIsFarBelowPeakAndNotComputeBound) {
    // 8192 x 64 x 64: 33.5 M MACs are 303 cycles of a100's tensor peak (1024 x 108 per cycle),
    // while its operands (8192 x 64 x 2 B in, out; 8 KB of weights) take about 1,450 cycles of HBM
    // and a launch costs gpu.launch_overhead_cycles: the bound is latency or hbm, never compute.
    const ChipConfig chip = config("a100");
    const OpReport r = run(chip, write_trace({"matmul skinny m=8192 n=64 k=64"})).ops[0];
    EXPECT_EQ(r.model, "simt");
    EXPECT_NE(r.roofline.bound, "compute");
    EXPECT_TRUE(r.roofline.bound == "latency" || r.roofline.bound == "hbm") << r.roofline.bound;
    ASSERT_TRUE(r.utilization);
    EXPECT_LT(*r.utilization, 0.10);
    EXPECT_GE(r.roofline.cycles.at("compute"), 33554432.0 / (1024.0 * 108.0));
}

TEST(LoweredOps, SplitKAddsTheSumLaunchToTheOp) {
    // BERT's fc2 on a100 splits K in 3 (tests/gpu/gemm_test.cpp, GemmTileRule.SplitKHandWorked):
    // 3 x 96 blocks of 32x32 over 1024 of K each issue the unsplit kernel's mma count,
    // 96 x (32/16) x (32/8) x (3072/16) = 147,456; the op's cycles are the GEMM launch, its
    // overhead and the sum launch with its own overhead.
    const ChipConfig chip = config("a100");
    const OpReport r = run(chip, write_trace({"matmul fc2 m=128 n=768 k=3072"})).ops[0];
    EXPECT_EQ(stat(r, "gpu.splits"), 3.0);
    EXPECT_EQ(stat(r, "gpu.grid"), 288.0);
    EXPECT_EQ(stat(r, "simt.mma_issued"), 147456.0);
    EXPECT_EQ(stat(r, "simt.then.launches"), 1.0);
    const double overhead = chip.gpu.launch_overhead_cycles;
    EXPECT_GT(stat(r, "simt.then.cycles"), overhead);
    EXPECT_EQ(static_cast<double>(r.cycles), stat(r, "simt.kernel_cycles") + overhead + stat(r, "simt.then.cycles"));
    EXPECT_GE(static_cast<double>(r.cycles), r.roofline.bound_cycles);
    EXPECT_GE(r.roofline.cycles.at("latency"), 2 * overhead);  // two launches
    ASSERT_TRUE(r.utilization);
    EXPECT_DOUBLE_EQ(*r.utilization, 147456.0 * 2048.0 / (1024.0 * 108.0 * static_cast<double>(r.cycles)));
}

}  // namespace
}  // namespace accelsim::lowered_ops_test
