// The TPU chip with a memory hierarchy: lowering (tiles that fit VMEM, step costs), the
// double-buffered DMA pipeline, fusion, and numerics through the tiles. Chips are built from
// plain params here; tests on the shipped configs and traces are in validation/tpu_*.cpp.
#include <gtest/gtest.h>

#include "models/memory/dram.h"
#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_lowering.h"

namespace accelsim::tpu {
namespace {

// One core, one 128x128 MXU, 16 MiB VMEM, HBM2 with `channels` channels (each 128 bit at 2 Gb/s
// = 32 GB/s = 32 B per 1 GHz cycle).
TpuChipParams hierarchy_chip(int channels, int cores = 1, int mxus = 1) {
    TpuChipParams p;
    p.cores = cores;
    p.mxus_per_core = mxus;
    p.mxu.rows = p.mxu.cols = 128;
    p.vmem_bytes = 16 << 20;
    p.clock_hz = 1e9;
    memory::MemoryHierarchyParams m;
    m.requesters = cores;
    m.clock_hz = p.clock_hz;
    m.crossbar.bytes_per_cycle_per_port = 1e6;  // the crossbar never limits here
    m.dram = memory::dram_preset("HBM2");
    m.dram.channels = channels;
    m.dram.data_rate_gbps = 2.0;
    p.memory = m;
    return p;
}

Op matmul(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype = DType::bf16) {
    Op op;
    op.kind = OpKind::matmul;
    op.name = "mm";
    op.dtype = dtype;
    op.gemm = GemmShape{1, m, n, k};
    return op;
}

Op vector_op(OpKind kind, std::int64_t rows, std::int64_t cols) {
    Op op;
    op.kind = kind;
    op.name = "v";
    op.dtype = DType::bf16;
    op.rows = rows;
    op.cols = cols;
    op.elements = rows * cols;
    return op;
}

TEST(TpuHierarchy, FastDmaApproachesIdealMemoryCycles) {
    // m=1024 n=128 k=1024 bf16 on one 128x128 MXU. Ideal memory (docs/mxu.md, ws, overlap):
    // F = 8 K tiles, T = M = 1024: 128 + 7·1024 + 1024 + 128 + 128 - 2 = 8574 cycles.
    // With 64 HBM channels (2048 B/cycle) the 2.6 MB of traffic takes ~1300 cycles, hidden behind
    // the compute by double buffering except the first tile's transfer and the last write-back.
    TpuChipParams ideal = hierarchy_chip(64);
    ideal.ideal_memory = true;
    ideal.memory.reset();
    const std::uint64_t ideal_cycles = TpuChip(ideal).run(matmul(1024, 128, 1024), false).cycles;
    ASSERT_EQ(ideal_cycles, 8574u);
    TpuChip chip(hierarchy_chip(64));
    const TpuOpResult r = chip.run(matmul(1024, 128, 1024), false);
    EXPECT_GE(r.cycles, ideal_cycles);
    EXPECT_LE(static_cast<double>(r.cycles), 1.10 * static_cast<double>(ideal_cycles));
}

TEST(TpuHierarchy, SlowDmaApproachesTheTransferTime) {
    // Same GEMM with the DMA engine limited to 1 byte per cycle: A 1024·1024·2 + B 1024·128·2
    // + C 1024·128·2 = 2,621,440 bytes must cross it, 2.6 M cycles against 8.6 k of compute:
    // the op takes the transfer time (within 2%: the last tile's compute is exposed).
    TpuChipParams p = hierarchy_chip(64);
    p.dma.bytes_per_cycle = 1.0;
    TpuChip chip(p);
    const TpuOpResult r = chip.run(matmul(1024, 128, 1024), false);
    const double transfer = 2621440.0;
    EXPECT_EQ(r.bytes.at("hbm"), 2621440);
    EXPECT_GE(static_cast<double>(r.cycles), transfer);
    EXPECT_LE(static_cast<double>(r.cycles), 1.02 * transfer);
}

TEST(TpuHierarchy, DoubleBufferingOverlapsTransferAndCompute) {
    // Balanced case: the op takes about max(transfer, compute), not their sum. DMA at 256 B/cycle:
    // 2,621,440 / 256 = 10,240 cycles of transfer against 8,574 of compute; serial would be 18,814.
    TpuChipParams p = hierarchy_chip(64);
    p.dma.bytes_per_cycle = 256.0;
    TpuChip chip(p);
    const TpuOpResult r = chip.run(matmul(1024, 128, 1024), false);
    EXPECT_GE(r.cycles, 10240u);
    EXPECT_LT(static_cast<double>(r.cycles), 0.75 * (10240.0 + 8574.0));
}

TEST(TpuHierarchy, VectorStepCostIsWorkOverAlusPlusReductionTree) {
    // softmax rows=64 cols=128 on one core of 128 lanes x 8 sublanes: tiles of
    // max(ceil(64/16), ceil(1024/128)) = 8 rows -> 8 steps; each step
    // ceil(8·128·5 / 1024) = 5 cycles + 2 reductions x log2(128) = 14 -> 19 cycles.
    const TpuChipParams p = hierarchy_chip(8);
    const OpPlan plan = lower_op(vector_op(OpKind::softmax, 64, 128), p, TensorAddresses{}, false);
    ASSERT_EQ(plan.cores.size(), 1u);
    ASSERT_EQ(plan.cores[0].size(), 8u);
    EXPECT_EQ(plan.cores[0][0].cold_cycles, 19);
    EXPECT_EQ(plan.cores[0][0].in[0].bytes, 8 * 128 * 2);
    EXPECT_EQ(plan.unit, "vector");
}

TEST(TpuHierarchy, TileThatCannotFitIsAnErrorNamingTheOp) {
    // 4 KiB of VMEM: the smallest GEMM tiling (8 x 128 x 128 bf16 inputs double-buffered, one fp32
    // accumulator and one bf16 staging tile of 8 x 128) needs 2·(8·128 + 128·128)·2 + 8·128·(4 + 2)
    // = 69,632 + 6,144 = 75,776 bytes.
    TpuChipParams p = hierarchy_chip(8);
    p.vmem_bytes = 4096;
    TpuChip chip(p);
    Op op = matmul(256, 256, 256);
    op.name = "too_big";
    try {
        chip.run(op, false);
        FAIL() << "a GEMM ran without a tile that fits";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("too_big"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("75776"), std::string::npos) << e.what();
    }
}

TEST(TpuHierarchy, SmallVmemSplitsKAndStillValidates) {
    // 160 KiB of VMEM cannot hold K = 1024 in one tile (2·(8·1024 + 1024·128)·2 > 160 Ki), so
    // the lowering splits K and accumulates the K blocks in VMEM; the results still match Eigen
    // (int8 exactly, bf16 within the K-derived bound).
    for (DType dtype : {DType::int8, DType::bf16}) {
        TpuChipParams p = hierarchy_chip(8);
        p.vmem_bytes = 160 * 1024;
        const OpPlan plan = lower_op(matmul(200, 256, 1024, dtype), p, TensorAddresses{}, false);
        EXPECT_LT(plan.tile.k, 1024);
        EXPECT_LE(plan.vmem_footprint, p.vmem_bytes);
        TpuChip chip(p);
        const TpuOpResult r = chip.run(matmul(200, 256, 1024, dtype), true);
        ASSERT_TRUE(r.numerics);
        EXPECT_TRUE(r.numerics->passed) << to_string(dtype);
        EXPECT_EQ(r.numerics->checked, 200 * 256);
    }
}

TEST(TpuHierarchy, VectorOpsValidate) {
    TpuChip chip(hierarchy_chip(8, 2));
    for (OpKind kind : {OpKind::softmax, OpKind::layernorm, OpKind::gelu, OpKind::relu, OpKind::add, OpKind::mul}) {
        const TpuOpResult r = chip.run(vector_op(kind, 48, 96), true);
        ASSERT_TRUE(r.numerics);
        EXPECT_TRUE(r.numerics->passed) << to_string(kind);
        // softmax also checks each of the 48 row sums
        EXPECT_EQ(r.numerics->checked, 48 * 96 + (kind == OpKind::softmax ? 48 : 0)) << to_string(kind);
    }
}

TEST(TpuHierarchy, FusionKeepsTheGemmOutputInVmem) {
    // gelu over the 128 x 512 output of a matmul: unfused it reads 65,536 bf16 elements and writes
    // as many (262,144 HBM bytes); fused its input comes from VMEM: 131,072 bytes, 131,072 saved.
    for (bool fuse : {false, true}) {
        TpuChipParams p = hierarchy_chip(8);
        p.fuse_elementwise = fuse;
        TpuChip chip(p);
        chip.run(matmul(128, 512, 256), false);
        Op gelu = vector_op(OpKind::gelu, 1, 1);
        gelu.elements = 128 * 512;
        const TpuOpResult r = chip.run(gelu, false);
        EXPECT_EQ(r.fused, fuse);
        EXPECT_EQ(r.bytes.at("hbm"), fuse ? 131072 : 262144);
        EXPECT_EQ(r.fused_hbm_bytes_saved, fuse ? 131072 : 0);
    }
}

TEST(TpuHierarchy, SameInputsGiveTheSameCycles) {
    std::uint64_t first = 0;
    for (int run = 0; run < 2; ++run) {
        TpuChip chip(hierarchy_chip(8, 2, 2));
        std::uint64_t total = 0;
        for (const Op& op : {matmul(300, 700, 500), vector_op(OpKind::layernorm, 300, 700), matmul(64, 4096, 256)})
            total += chip.run(op, false).cycles;
        if (run == 0) first = total;
        else EXPECT_EQ(total, first);
    }
}

}  // namespace
}  // namespace accelsim::tpu
