// The copy op (a transpose, concat or gather of activations, docs/import.md) on the TPU: a DMA pass
// through VMEM with no vector work. Byte counts and times worked out by hand below.
#include <gtest/gtest.h>

#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_lowering.h"
#include "tests/tpu/tpu_test_chips.h"

namespace accelsim::tpu::tpu_copy_test {
namespace {

using namespace tpu_test;

TEST(TpuCopy, MovesEachElementInAndOutOnceWithNoVectorWork) {
    // copy of n = 1,048,576 bf16 elements: 2 MiB read + 2 MiB written = 4,194,304 HBM bytes. On
    // 8 HBM2 channels of 32 B per cycle (256 B per cycle) that is 16,384 cycles at least; the
    // vector unit does nothing (0 operations per element), so the memory sets the time: the
    // transfer plus the exposed first load and last write-back (512 cycles each) and what HBM2's
    // timing costs (row activations, refresh, read/write turnarounds on this mix of reads and
    // writes; 19,491 cycles measured, 84% of peak bandwidth): below 1.25 x the transfer.
    TpuChip chip(hierarchy_chip(8));
    const Op op = elementwise(OpKind::copy, 1048576);
    EXPECT_EQ(op.input_bytes(), 2097152);
    EXPECT_EQ(op.output_bytes(), 2097152);
    EXPECT_EQ(op.flops(), 0);
    const TpuOpResult r = chip.run(op, false);
    EXPECT_EQ(level_bytes(r, "hbm"), 4194304);
    EXPECT_GE(r.cycles, 16384u);
    EXPECT_LE(static_cast<double>(r.cycles), 1.25 * 16384);
    const OpPlan plan = lower_op(op, hierarchy_chip(8), TensorAddresses{});
    EXPECT_EQ(plan.unit, "vector");
    EXPECT_EQ(plan.element_ops, 0);
    for (const auto& core : plan.cores)
        for (std::size_t s = 0; s < core.size(); ++s) EXPECT_EQ(core[s].cold_cycles, 0) << s;
}

TEST(TpuCopy, TakesAboutWhatARelusTransferTakesAndValidatesExactly) {
    // relu moves the same bytes and adds one vector operation per element, hidden behind the DMA:
    // the copy is never slower, and both are within 5% of each other here.
    TpuChip copy_chip(hierarchy_chip(8)), relu_chip(hierarchy_chip(8));
    const TpuOpResult copy = copy_chip.run(elementwise(OpKind::copy, 1048576), false);
    const TpuOpResult relu = relu_chip.run(elementwise(OpKind::relu, 1048576), false);
    EXPECT_EQ(level_bytes(copy, "hbm"), level_bytes(relu, "hbm"));
    EXPECT_LE(copy.cycles, relu.cycles);
    EXPECT_GE(static_cast<double>(copy.cycles), 0.95 * static_cast<double>(relu.cycles));
    TpuChip checked(hierarchy_chip(8));
    const TpuOpResult v = checked.run(elementwise(OpKind::copy, 4096), true);
    ASSERT_TRUE(v.numerics);
    EXPECT_EQ(v.numerics->checked, 4096);
    EXPECT_EQ(v.numerics->max_abs_err, 0.0);
    EXPECT_TRUE(v.numerics->passed);
}

}  // namespace
}  // namespace accelsim::tpu::tpu_copy_test
