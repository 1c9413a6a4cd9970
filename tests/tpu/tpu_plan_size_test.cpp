// plan_size (models/tpu/tpu_lowering.h): the steps and DMA bytes of an op's plan, computed from
// its tiling without building it, equal those of the plan lower_op builds, step by step.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "models/tpu/tpu_lowering.h"
#include "sim/trace/trace_reader.h"
#include "tests/tpu/tpu_test_chips.h"

namespace accelsim::tpu::tpu_plan_size_test {
namespace {

PlanSize counted(const OpPlan& plan) {
    PlanSize size;
    for (const auto& core : plan.cores)
        for (const TileStep& step : core) {
            size.steps += 1;
            for (int i = 0; i < step.in_count; ++i) size.dma_bytes += static_cast<double>(step.in[static_cast<std::size_t>(i)].bytes);
            size.dma_bytes += static_cast<double>(step.out.bytes);
        }
    return size;
}

std::vector<Op> ops_of(const std::string& lines) {
    const auto path = std::filesystem::path(::testing::TempDir()) / "plan_size_ops.trace";
    std::ofstream(path) << "# accelsim-trace 1\n" << lines;
    return read_trace(path.string(), DType::bf16);
}

void expect_equal_sizes(const Op& op, const TpuChipParams& p, const Placement& place) {
    const PlanSize estimate = plan_size(op, p, place);
    const PlanSize built = counted(lower_op(op, p, TensorAddresses{}, place));
    EXPECT_EQ(estimate.steps, built.steps) << op.name;
    EXPECT_EQ(estimate.dma_bytes, built.dma_bytes) << op.name;
}

TEST(PlanSize, EqualsTheBuiltPlanOnModelShapes) {
    // BERT's GEMMs, a batched matmul, convolutions with strides, padding, groups and dilation,
    // and vector ops of every layout, on one and two cores.
    const std::vector<Op> ops = ops_of(
        "matmul qkv m=128 n=2304 k=768\n"
        "matmul fc2 m=128 n=768 k=3072\n"
        "matmul skinny m=8 n=4096 k=4096\n"
        "matmul big m=2048 n=4096 k=4096\n"
        "matmul ragged m=1000 n=1000 k=1000\n"
        "bmm scores b=12 m=128 n=128 k=64\n"
        "conv2d conv1 n=1 h=224 w=224 c=3 k=64 r=7 s=7 stride=2 pad=3\n"
        "conv2d c3 n=2 h=56 w=56 c=64 k=64 r=3 s=3 stride=1 pad=1\n"
        "conv2d wide n=4 h=28 w=28 c=512 k=512 r=3 s=3 stride=1 pad=1\n"
        "conv2d grouped n=1 h=56 w=56 c=64 k=64 r=3 s=3 stride=2 pad=1 groups=4\n"
        "conv2d dilated n=1 h=64 w=64 c=32 k=32 r=3 s=3 stride=1 pad=2 dilation=2\n"
        "relu r n=1000003\n"
        "add a n=98304\n"
        "softmax sm rows=1536 cols=128\n"
        "layernorm ln rows=129 cols=3071\n"
        "gelu g n=393216\n");
    for (const int cores : {1, 2}) {
        TpuChipParams p = tpu_test::hierarchy_chip(8, cores, 2);
        for (const Op& op : ops) expect_equal_sizes(op, p, Placement{});
    }
}

TEST(PlanSize, FollowsThePlacement) {
    // A GEMM reading its input from CMEM and leaving its output in VMEM for a fused consumer; a
    // vector op whose input is in VMEM.
    TpuChipParams p = tpu_test::hierarchy_chip(8, 2, 4);
    p.cmem_bytes = 128 << 20;
    p.cmem_bytes_per_cycle = 2048;
    const Op mm = tpu_test::matmul(128, 3072, 768);
    expect_equal_sizes(mm, p, Placement{InputFrom::cmem, OutputTo::vmem});
    expect_equal_sizes(mm, p, Placement{InputFrom::hbm, OutputTo::hbm_and_cmem});
    expect_equal_sizes(tpu_test::elementwise(OpKind::gelu, 128 * 3072), p, Placement{InputFrom::vmem, OutputTo::hbm});
}

TEST(PlanSize, EqualsTheBuiltPlanOnRandomShapes) {
    std::mt19937_64 rng(20261126);
    auto pick = [&](std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
    };
    std::string lines;
    for (int i = 0; i < 40; ++i) {
        lines += "matmul mm" + std::to_string(i) + " m=" + std::to_string(pick(1, 3000)) + " n=" +
                 std::to_string(pick(1, 3000)) + " k=" + std::to_string(pick(1, 3000)) + "\n";
        lines += "conv2d cv" + std::to_string(i) + " n=" + std::to_string(pick(1, 4)) + " h=" +
                 std::to_string(pick(7, 60)) + " w=" + std::to_string(pick(7, 60)) + " c=" +
                 std::to_string(8 * pick(1, 64)) + " k=" + std::to_string(8 * pick(1, 64)) + " r=3 s=3 stride=" +
                 std::to_string(pick(1, 2)) + " pad=1\n";
    }
    const std::vector<Op> ops = ops_of(lines);
    for (const int cores : {1, 2, 4}) {
        TpuChipParams p = tpu_test::hierarchy_chip(8, cores, 1);
        p.vmem_bytes = 4 << 20;  // small VMEM: more tiles, K split more often
        for (const Op& op : ops) expect_equal_sizes(op, p, Placement{});
    }
}

TEST(PlanSize, OfAHugeGemmIsComputedWithoutBuildingIt) {
    // m = n = k = 10^6 bf16 on one 128x128 MXU with 16 MiB of VMEM: the footprint
    // 4·mt·kt + 4·kt·nt + 6·mt·nt (double-buffered A and B, fp32 sums and a staging C) fits 2^24
    // bytes, so each of mt·kt, kt·nt, mt·nt is at most 2^22, a tile's mt·nt·kt at most 2^33, and
    // the plan has at least 10^18 / 2^33 = 1.16e8 steps; its DMA moves at least the compulsory
    // 3 x 2·10^12 bytes. Far too many steps to build (a TileStep is about 200 bytes).
    const TpuChipParams p = tpu_test::hierarchy_chip(8, 1, 1);
    const PlanSize size = plan_size(tpu_test::matmul(1000000, 1000000, 1000000), p);
    EXPECT_GE(size.steps, 1.16e8);
    EXPECT_GE(size.dma_bytes, 6e12);
}

}  // namespace
}  // namespace accelsim::tpu::tpu_plan_size_test
