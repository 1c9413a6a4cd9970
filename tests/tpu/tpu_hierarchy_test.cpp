// The TPU chip with a memory hierarchy: lowering (tiles that fit VMEM, step costs), the
// double-buffered DMA pipeline, fusion, and numerics through the tiles. Chips are built from
// plain params here; tests on the shipped configs and traces are in validation/tpu_*.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "models/memory/dram.h"
#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_lowering.h"
#include "tests/tpu/tpu_test_chips.h"

namespace accelsim::tpu::tpu_hierarchy_test {
namespace {

using namespace tpu_test;

TEST(TpuHierarchy, ComputeBoundPipelineExposesOnlyTheFirstLoadAndTheLastWriteBack) {
    // m=1024 n=128 k=1024 bf16 on one 128x128 MXU. Ideal memory (docs/mxu.md, ws, overlap):
    // F = 8 K tiles, T = M = 1024: 128 + 7·1024 + 1024 + 128 + 128 - 2 = 8574 cycles.
    TpuChipParams ideal = hierarchy_chip(64);
    ideal.ideal_memory = true;
    ideal.memory.reset();
    ASSERT_EQ(TpuChip(ideal).run(matmul(1024, 128, 1024), false).cycles, 8574u);

    // With HBM at 8192 B/cycle (256 channels), the DMA at 4096 B/cycle and 576 KiB of VMEM
    // (exactly the footprint of a 256 x 128 x 256 tiling: 2·(256·256 + 256·128)·2 + 256·128·6
    // bytes; larger tiles, such as 128 x 128 x 1024, which would hold B resident, do not fit) the
    // lowering picks 16 tiles of 256 x 128 x 256 (A 128 KiB + B 64 KiB in per step, a 64 KiB
    // output tile after every 4th).
    // Each tile costs 512 cycles right behind the previous one and 894 from its data (128 + 512 +
    // 254), so back to back: 894 + 15·512 = 8574, the ideal figure. A tile's fill hides behind
    // the previous tile when its data is there 894 - 512 = 382 cycles before that tile ends. Its
    // transfer is requested when the tile two back ends, 512 cycles before, and takes
    // 192 KiB / 4096 = 48 cycles (64 with a write-back queued ahead of it on the same DMA engine)
    // plus the DRAM latency, far under 512 - 382 = 130, so only two transfers are exposed:
    //   cycles = first tile's load + 8574 + last output tile's write-back (64 KiB / 4096 = 16
    //   cycles of transfer, and the op ends when those bytes are in HBM).
    // The first load is the memory system's answer for those two transfers from idle (replayed
    // here on a fresh memory model, chunk by chunk, at the DMA's rate); it must be at least its
    // 192 KiB at 4096 B/cycle = 48 cycles (the rest is DRAM latency).
    // Refresh is off: an all-bank refresh (tRFC 260 tCK) landing on a transfer would take
    // 130 cycles of slack at once and expose part of a fill.
    TpuChipParams p = hierarchy_chip(256);
    p.dma.bytes_per_cycle = 4096.0;
    p.vmem_bytes = 589824;
    p.memory->dram.timing.tREFI = 0;
    const Op op = matmul(1024, 128, 1024);
    // HierarchyModel's bump allocator: A at 0 (2 MiB), B at 2 MiB, C at 3 MiB.
    const OpPlan plan = lower_op(op, p, TensorAddresses{0, 2u << 20, 3u << 20});
    ASSERT_EQ(plan.cores[0].size(), 16u);
    const TileStep& first = plan.cores[0][0];
    ASSERT_EQ(first.in_count, 2);
    ASSERT_EQ(first.in[0].bytes + first.in[1].bytes, 196608);
    ASSERT_EQ(plan.cores[0].back().out.bytes, 65536);
    EXPECT_EQ(first.cold_cycles + 15 * first.warm_cycles, 8574);

    memory::MemoryHierarchy hbm(*p.memory);
    memory::Picoseconds engine_free = 0, loaded = 0;
    for (int i = 0; i < first.in_count; ++i) {
        const DmaSegment& s = first.in[static_cast<std::size_t>(i)];
        const memory::Picoseconds start = engine_free;
        for (std::int64_t off = 0; off < s.bytes; off += p.dma.chunk_bytes) {
            const std::int64_t n = std::min(p.dma.chunk_bytes, s.bytes - off);
            const memory::Picoseconds issue = start + static_cast<memory::Picoseconds>(off) * 1000 / 4096;
            const memory::Picoseconds arrived =
                hbm.access(0, s.address + static_cast<std::uint64_t>(off), static_cast<std::uint32_t>(n), false, issue);
            loaded = std::max({loaded, arrived, issue + static_cast<memory::Picoseconds>(n) * 1000 / 4096});
        }
        engine_free = start + static_cast<memory::Picoseconds>(s.bytes) * 1000 / 4096;
    }
    // The chip waits for the first cycle edge at or after the data lands (ports bill picoseconds).
    const std::uint64_t first_load = (loaded + 999) / 1000;
    EXPECT_GE(first_load, 48u);

    // The last output tile leaves at the DMA's rate (64 KiB / 4096 = 16 cycles) and the op ends
    // when its bytes are in HBM: the same write replayed from an idle memory model, flushed.
    memory::MemoryHierarchy idle(*p.memory);
    memory::Picoseconds written = 0;
    const TileStep& last = plan.cores[0].back();
    for (std::int64_t off = 0; off < last.out.bytes; off += p.dma.chunk_bytes) {
        const std::int64_t n = std::min(p.dma.chunk_bytes, last.out.bytes - off);
        const memory::Picoseconds issue = static_cast<memory::Picoseconds>(off) * 1000 / 4096;
        written = std::max({written, issue + static_cast<memory::Picoseconds>(n) * 1000 / 4096,
                            idle.access(0, last.out.address + static_cast<std::uint64_t>(off),
                                        static_cast<std::uint32_t>(n), true, issue)});
    }
    written = std::max(written, idle.flush_writes());
    const std::uint64_t write_back = (written + 999) / 1000;
    EXPECT_GT(write_back, 16u);  // the transfer, then the DRAM's write latency

    // Posted writes drain when a controller's buffer fills or when the op ends, so the three
    // earlier output tiles' bursts (4 of the 32 per buffer each) are still buffered at the end and
    // cross HBM with the last one: at most 3 x 64 KiB / 8192 B per cycle = 24 cycles more.
    TpuChip chip(p);
    const TpuOpResult r = chip.run(op, false);
    EXPECT_GE(r.cycles, first_load + 8574 + write_back);
    EXPECT_LE(r.cycles, first_load + 8574 + write_back + 24);
    EXPECT_EQ(stat(r, "chip.cold_steps"), 1.0);                            // only the first tile
    // Waited once, for the load (the stall counter rounds picoseconds to the nearest cycle).
    EXPECT_EQ(stat(r, "chip.stall.dma_cycles"), std::round(static_cast<double>(loaded) / 1000.0));
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
    const OpPlan plan = lower_op(vector_op(OpKind::softmax, 64, 128), p, TensorAddresses{});
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
        const OpPlan plan = lower_op(matmul(200, 256, 1024, dtype), p, TensorAddresses{});
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
}  // namespace accelsim::tpu::tpu_hierarchy_test
