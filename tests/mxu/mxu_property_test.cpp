// Stepped (the reference) vs fast (closed form + blocked numerics): identical stats and outputs
// over hundreds of random shapes, array sizes, dataflows, overlap settings and dtypes.
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "models/mxu/mxu.h"
#include "tests/mxu/mxu_test_util.h"

namespace accelsim::mxu_property_test {
namespace {

TEST(MxuProperty, SteppedEqualsFastOnRandomShapes) {
    std::mt19937_64 rng(20261122);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const DType dtypes[] = {DType::int8, DType::fp16, DType::bf16, DType::fp32};
    const MxuDataflow flows[] = {MxuDataflow::ws, MxuDataflow::os, MxuDataflow::is};
    for (int trial = 0; trial < 400; ++trial) {
        MxuParams p;
        // Mostly small arrays (incl. 1xN, Nx1, non-square), now and then a large one.
        const int kind = pick(0, 9);
        p.rows = kind == 0 ? 1 : kind == 9 ? pick(64, 160) : pick(1, 12);
        p.cols = kind == 1 ? 1 : kind == 9 ? pick(64, 160) : pick(1, 12);
        p.dataflow = flows[pick(0, 2)];
        p.overlap_folds = pick(0, 1) == 1;
        const DType dtype = dtypes[pick(0, 3)];
        GemmShape s;
        s.batch = pick(1, 3);
        s.m = pick(1, kind == 9 ? 200 : 30);
        s.n = pick(1, kind == 9 ? 200 : 30);
        s.k = pick(1, kind == 9 ? 300 : 40);
        SCOPED_TRACE(::testing::Message() << "trial " << trial << " " << p.rows << "x" << p.cols << " "
                                          << to_string(p.dataflow) << " overlap=" << p.overlap_folds << " "
                                          << to_string(dtype) << " b=" << s.batch << " m=" << s.m << " n=" << s.n
                                          << " k=" << s.k);
        const mxu_test::Operands ops = mxu_test::random_operands(s, dtype, rng());
        const MxuOperands view{ops.a.data(), ops.b.data()};
        p.mode = MxuMode::stepped;
        const MxuGemmResult stepped = run_mxu_gemm(p, s, dtype, &view);
        const MxuGemmResult stepped_timing_only = run_mxu_gemm(p, s, dtype);
        p.mode = MxuMode::fast;
        const MxuGemmResult fast = run_mxu_gemm(p, s, dtype, &view);
        ASSERT_EQ(stepped.stats.cycles, fast.stats.cycles);
        ASSERT_TRUE(stepped.stats == fast.stats);
        ASSERT_TRUE(stepped_timing_only.stats == fast.stats);
        ASSERT_EQ(stepped.c_fp32, fast.c_fp32);  // bit-identical floats (vector ==)
        ASSERT_EQ(stepped.c_int32, fast.c_int32);
        ASSERT_TRUE(stepped.has_output());
        // Never faster than the compute roofline: macs / (R*C) cycles, i.e. utilization <= 1.
        ASSERT_GE(fast.stats.cycles * p.rows * p.cols, s.macs());
        ASSERT_LE(fast.stats.mac_utilization, 1.0);
        ASSERT_EQ(fast.stats.cycles, fast.stats.compute_cycles + fast.stats.fill_drain_cycles +
                                         fast.stats.weight_load_stall_cycles + fast.stats.drain_stall_cycles);
    }
}

}  // namespace
}  // namespace accelsim::mxu_property_test
