// The pool op on the TPU's vector unit (docs/tpu.md, "Pooling"): tiles of whole output rows, each
// bringing in the input rows its windows read (halo rows read twice), one max or add per window
// element on the lanes; --validate against the double reference.
#include <gtest/gtest.h>

#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_lowering.h"
#include "tests/tpu/tpu_test_chips.h"

namespace accelsim::tpu::tpu_pool_test {
namespace {

using namespace tpu_test;

Op resnet_like_pool(PoolMode mode) {
    Op op;
    op.kind = OpKind::pool;
    op.name = "pool";
    op.dtype = DType::bf16;
    PoolShape& p = op.pool;
    p.mode = mode;
    p.n = 1;
    p.h = p.w = 16;
    p.c = 128;
    p.r = p.s = 3;
    p.stride_h = p.stride_w = 2;
    p.pad_h = p.pad_w = 1;
    return op;
}

// 16x16x128 bf16, 3x3/2 pad 1 -> 8x8x128, one core (vector unit 128 x 8 = 1,024 element-ops a
// cycle). 8 output rows in tiles of max(ceil(8 / 16), ceil(1,024 / (8 * 128))) = 1 row: 8 steps.
// Output row oh reads input rows 2 oh - 1 .. 2 oh + 1 clipped, the tiles together every row:
// tile 0 rows 0-1, tiles 1-6 rows 2 oh - 1 .. 2 oh + 1 (3 each), tile 7 rows 13-15: 23 rows of
// 16 * 128 * 2 = 4,096 bytes = 94,208 bytes read (the 16-row input, 65,536, plus 7 halo rows);
// written 8 * 8 * 128 * 2 = 16,384. Each step: 1,024 outputs x 9 / 1,024 = 9 cycles of the unit.
TEST(TpuPool, TilesReadTheirWindowsRowsAndTheHalo) {
    const Op op = resnet_like_pool(PoolMode::max);
    const TpuChipParams p = hierarchy_chip(16);
    const OpPlan plan = lower_op(op, p, TensorAddresses{0, 1 << 20, 2 << 20});
    ASSERT_EQ(plan.cores.size(), 1u);
    ASSERT_EQ(plan.cores[0].size(), 8u);
    std::int64_t in = 0, out = 0;
    for (const TileStep& s : plan.cores[0]) {
        ASSERT_EQ(s.in_count, 1);
        in += s.in[0].bytes;
        out += s.out.bytes;
        EXPECT_EQ(s.cold_cycles, 9);
    }
    EXPECT_EQ(plan.cores[0][0].in[0].bytes, 2 * 4096);
    EXPECT_EQ(plan.cores[0][3].in[0].address, 5u * 4096);  // output row 3 reads from input row 5
    EXPECT_EQ(in, 94208);
    EXPECT_EQ(out, 16384);
    EXPECT_EQ(plan.element_ops, 64 * 128 * 9);
    EXPECT_EQ(plan.unit, "vector");
    EXPECT_EQ(plan_size(op, p).dma_bytes, 94208.0 + 16384.0);

    TpuChip chip(p);
    const TpuOpResult r = chip.run(op, false);
    EXPECT_EQ(stat(r, "chip.hbm.bytes_read"), 94208.0);
    EXPECT_EQ(stat(r, "chip.hbm.bytes_written"), 16384.0);
    EXPECT_GE(r.cycles, 8u * 9);
}

TEST(TpuPool, ValidatedOutputsMatchTheDoubleReference) {
    for (PoolMode mode : {PoolMode::max, PoolMode::avg}) {
        Op op = resnet_like_pool(mode);
        op.pool.count_pad = mode == PoolMode::avg;
        TpuChip chip(hierarchy_chip(16));
        const TpuOpResult r = chip.run(op, true);
        ASSERT_TRUE(r.numerics.has_value());
        EXPECT_EQ(r.numerics->checked, 8 * 8 * 128);
        EXPECT_TRUE(r.numerics->passed);
        if (mode == PoolMode::max) {
            EXPECT_EQ(r.numerics->max_abs_err, 0.0);
        }
    }
}

TEST(TpuPool, AGlobalPoolIsOneStepPerImage) {
    // 7x7x2048 global average, batch 2: 2 output rows of one pixel; each step reads its image,
    // 49 * 2048 * 2 = 200,704 bytes, and computes 2,048 x 49 / 1,024 = 98 cycles.
    Op op = resnet_like_pool(PoolMode::avg);
    op.pool = PoolShape{};
    op.pool.mode = PoolMode::avg;
    op.pool.global = true;
    op.pool.n = 2;
    op.pool.h = op.pool.w = op.pool.r = op.pool.s = 7;
    op.pool.c = 2048;
    const OpPlan plan = lower_op(op, hierarchy_chip(16), TensorAddresses{0, 1 << 20, 2 << 20});
    ASSERT_EQ(plan.cores[0].size(), 2u);
    EXPECT_EQ(plan.cores[0][1].in[0].bytes, 200704);
    EXPECT_EQ(plan.cores[0][1].in[0].address, 200704u);
    EXPECT_EQ(plan.cores[0][1].cold_cycles, 98);
}

}  // namespace
}  // namespace accelsim::tpu::tpu_pool_test
