// Where the TPU lowering puts tensors (docs/tpu.md, "Placement"): fusion keeps a GEMM's output in
// VMEM for the elementwise op after it, CMEM carries an activation to the next op and serves tiles
// read more than once, conv tiles re-read their halo rows; and the roofline follows the bytes to
// the level they really cross (docs/roofline.md, "Placement").
#include <gtest/gtest.h>

#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_lowering.h"
#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/roofline/roofline.h"
#include "tests/tpu/tpu_test_chips.h"

namespace accelsim::tpu::tpu_placement_test {
namespace {

using namespace tpu_test;

TpuChipParams with_cmem(TpuChipParams p, std::int64_t bytes, double bytes_per_cycle) {
    p.cmem_bytes = bytes;
    p.cmem_bytes_per_cycle = bytes_per_cycle;
    return p;
}

TEST(Placement, FusionRemovesTheProducersWriteAndTheConsumersRead) {
    // matmul 128 x 512 x 256 then gelu over its 65,536 outputs (131,072 bf16 bytes). Fused, the
    // GEMM's output tiles stay in VMEM: the matmul writes nothing to HBM (unfused: 131,072) and
    // the gelu reads nothing (it writes its 131,072-byte result only; unfused it also reads
    // 131,072).
    const Op mm = matmul(128, 512, 256);
    const Op gelu = elementwise(OpKind::gelu, 128 * 512);
    TpuOpResult producer[2], consumer[2];
    for (bool fuse : {false, true}) {
        TpuChipParams p = hierarchy_chip(8);
        p.fuse_elementwise = fuse;
        TpuChip chip(p);
        producer[fuse] = chip.run(mm, false, &gelu);
        consumer[fuse] = chip.run(gelu, false);
    }
    EXPECT_EQ(stat(producer[0], "chip.hbm.bytes_written"), 131072.0);
    // Reads: A 65,536 + B 262,144 at least (the tiling may read a tile twice).
    EXPECT_GE(stat(producer[1], "chip.hbm.bytes_read"), 327680.0);
    EXPECT_EQ(producer[1].hbm_bytes_not_written, 131072);
    EXPECT_EQ(stat(producer[1], "chip.fusion.hbm_bytes_saved"), 131072.0);
    EXPECT_EQ(stat(producer[1], "chip.hbm.bytes_written"), 0.0);
    EXPECT_EQ(level_bytes(consumer[0], "hbm"), 262144);
    EXPECT_EQ(level_bytes(consumer[1], "hbm"), 131072);
    EXPECT_EQ(consumer[1].hbm_bytes_not_read, 131072);
    EXPECT_EQ(stat(consumer[1], "chip.fusion.hbm_bytes_saved"), 131072.0);
    EXPECT_FALSE(producer[0].fused);
    EXPECT_TRUE(producer[1].fused && consumer[1].fused);
    // Without knowing the next op nothing fuses.
    TpuChipParams p = hierarchy_chip(8);
    p.fuse_elementwise = true;
    TpuChip chip(p);
    EXPECT_FALSE(chip.run(mm, false).fused);
    EXPECT_FALSE(chip.run(gelu, false).fused);
}

TEST(Placement, CmemCarriesAnActivationToTheNextOp) {
    // The same pair with 1 MiB of CMEM at 512 B/cycle and no fusion. The matmul writes its output
    // to HBM and leaves a copy in CMEM (131,072 bytes); its HBM traffic is exactly its compulsory
    // A 65,536 + B 262,144 + C 131,072 = 458,752 bytes (a tile read twice comes from CMEM the
    // second time). The gelu reads its input from CMEM: HBM 131,072 (the result), CMEM 131,072.
    const TpuChipParams p = with_cmem(hierarchy_chip(8), 1 << 20, 512.0);
    const Op mm = matmul(128, 512, 256);
    const Op gelu = elementwise(OpKind::gelu, 128 * 512);
    TpuChip chip(p);
    const TpuOpResult producer = chip.run(mm, false, &gelu);
    const TpuOpResult consumer = chip.run(gelu, false);
    EXPECT_EQ(level_bytes(producer, "hbm"), 458752);
    EXPECT_EQ(producer.cmem_compulsory_bytes, 131072);
    EXPECT_GE(stat(producer, "chip.cmem.bytes_written"), 131072.0);
    EXPECT_EQ(producer.hbm_bytes_not_read + producer.hbm_bytes_not_written, 0);
    EXPECT_EQ(level_bytes(consumer, "hbm"), 131072);
    EXPECT_EQ(level_bytes(consumer, "cmem"), 131072);
    EXPECT_EQ(consumer.hbm_bytes_not_read, 131072);
    EXPECT_EQ(consumer.cmem_compulsory_bytes, 131072);
    EXPECT_GE(consumer.cycles, 131072u / 512u);  // the CMEM port's bound

    // An op whose first input does not match the output (32,768 elements, not 65,536) is not
    // taken to consume it: no copy, and its input comes from HBM.
    TpuChip other(p);
    const Op softmax = vector_op(OpKind::softmax, 64, 512);
    EXPECT_EQ(other.run(mm, false, &softmax).cmem_compulsory_bytes, 0);
    EXPECT_EQ(level_bytes(other.run(softmax, false), "hbm"), 2 * 32768 * 2);

    // Without CMEM (tpu_v3-like) the gelu reads its input from HBM.
    TpuChip plain(hierarchy_chip(8));
    plain.run(mm, false, &gelu);
    const TpuOpResult unplaced = plain.run(gelu, false);
    EXPECT_EQ(level_bytes(unplaced, "hbm"), 262144);
    EXPECT_EQ(unplaced.bytes.count("cmem"), 0u);
}

TEST(Placement, CmemServesTilesReadAgain) {
    // 160 KiB of VMEM splits K = 1024 of a 200 x 256 x 1024 matmul, so the tiling reads each B
    // tile once per m-block (and A once per n-block). With 2 MiB of CMEM (A 409,600 + B 524,288 +
    // C 102,400 = 1,036,288 bytes fit) the first read of a tile leaves a copy in CMEM and the
    // later reads come from there: HBM carries exactly the compulsory 1,036,288 bytes. Numerics
    // run through the same tiles (int8: exact).
    TpuChipParams p = hierarchy_chip(8);
    p.vmem_bytes = 160 * 1024;
    const Op op = matmul(200, 256, 1024, DType::int8);
    const Op bf16 = matmul(200, 256, 1024);
    TpuChip plain(p);
    const std::int64_t without = level_bytes(plain.run(bf16, false), "hbm");
    EXPECT_GT(without, 1036288);  // re-reads go to HBM
    TpuChip chip(with_cmem(p, 2 << 20, 512.0));
    const TpuOpResult r = chip.run(bf16, false);
    EXPECT_EQ(level_bytes(r, "hbm"), 1036288);
    EXPECT_GT(stat(r, "chip.cmem.bytes_read"), 0.0);
    EXPECT_GT(stat(r, "chip.cmem.bytes_written"), 0.0);  // the copies left by first reads
    EXPECT_EQ(r.cmem_compulsory_bytes, 0);  // re-reads are the tiling's choice, not compulsory
    const TpuOpResult checked = chip.run(op, true);
    ASSERT_TRUE(checked.numerics);
    EXPECT_TRUE(checked.numerics->passed);

    // CMEM smaller than the op's tensors: no reuse, the re-reads stay at HBM.
    TpuChip small(with_cmem(p, 1000000, 512.0));
    EXPECT_EQ(level_bytes(small.run(bf16, false), "hbm"), without);
}

Op conv(std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t k, std::int64_t r, std::int64_t stride,
         std::int64_t pad) {
    Op op;
    op.kind = OpKind::conv2d;
    op.name = "conv";
    op.dtype = DType::bf16;
    op.conv.n = 1;
    op.conv.h = h;
    op.conv.w = w;
    op.conv.c = c;
    op.conv.k = k;
    op.conv.r = op.conv.s = r;
    op.conv.stride_h = op.conv.stride_w = stride;
    op.conv.pad_h = op.conv.pad_w = pad;
    return op;
}

TEST(Placement, ConvTilesReadTheirHaloRows) {
    // A tile of whole output rows [a, b] reads input rows a·S − P .. b·S − P + (R−1)·D (clipped);
    // the next tile starts at (b+1)·S − P, so neighbouring tiles share (R−1)·D + 1 − S rows (none
    // when negative: the rows between are read once, by the earlier tile, so every input row is
    // read). With T tiles (K ≤ 128 and N = 128: one k-block and one n-block, so the input is read
    // in one pass):
    //   A bytes = (H + (T − 1)·max(0, (R−1)·D + 1 − S)) · W · C · 2   (n = 1, bf16)
    // and the op's HBM bytes exceed the compulsory input + filters + output by exactly the halo.
    struct Case {
        Op op;
        std::int64_t vmem, halo_rows_per_boundary;
    };
    // 3x3 stride 1 pad 1 on 32 x 8 x 8: M = 256 output pixels, K = 72; VMEM 100,000 allows at most
    // 32-pixel tiles (2·(72·mt + 72·128)·2 + 6·128·mt = 1056·mt + 36,864 bytes): 2 rows shared.
    // 3x3 stride 2 pad 1 on 32 x 8 x 8: OH = 16, OW = 4, M = 64: 1 row shared.
    // 1x1 stride 2 on 32 x 8 x 8: M = 64, K = 8, VMEM 40,000 allows at most 32-pixel tiles
    // (800·mt + 4096 bytes): no row shared (the odd rows are read once, by the tile before).
    const Case cases[] = {{conv(32, 8, 8, 128, 3, 1, 1), 100000, 2},
                          {conv(32, 8, 8, 128, 3, 2, 1), 100000, 1},
                          {conv(32, 8, 8, 128, 1, 2, 0), 40000, 0}};
    for (const Case& c : cases) {
        TpuChipParams p = hierarchy_chip(8);
        p.vmem_bytes = c.vmem;
        const OpPlan plan = lower_op(c.op, p, TensorAddresses{});
        const auto tiles = static_cast<std::int64_t>(plan.cores[0].size());
        ASSERT_GE(tiles, 2) << "the VMEM limit must split M";
        ASSERT_EQ(plan.tile.m % c.op.conv.out_w(), 0);  // whole output rows (M tiles in multiples of 8)
        std::int64_t a_bytes = 0;
        for (const TileStep& s : plan.cores[0]) a_bytes += s.in[0].bytes;
        const std::int64_t row_bytes = 8 * 8 * 2, halo = (tiles - 1) * c.halo_rows_per_boundary * row_bytes;
        EXPECT_EQ(a_bytes, 32 * row_bytes + halo) << "R=" << c.op.conv.r << " S=" << c.op.conv.stride_h;
        TpuChip chip(p);
        const TpuOpResult r = chip.run(c.op, false);
        EXPECT_EQ(level_bytes(r, "hbm"), c.op.compulsory_bytes() + halo);
    }
}

TEST(Placement, ConvTileRowsOfPartialRowsAndImages) {
    // 3x3 stride 1 pad 1 on 2 images of 6 x 4 (OH = 6, OW = 4: 24 pixels per image). Global input
    // rows are n·6 + h. Pixels [0, 10) cover output rows 0..2 of image 0 (row 2 partly): rows
    // 0..3, extended to the row before the next tile's first (pixel 10: oh 2 reads row 1): 0..3.
    // Pixels [10, 30): image 0 rows 2..5 from oh 2, image 1 oh 0..1: input rows 1 .. 6 + 2 = 8.
    // Pixels [30, 48): from pixel 30 (image 1, oh 1: reads h 0..2, global 6) to the last row, 11.
    Conv2dShape c;
    c.n = 2;
    c.h = 6;
    c.w = 4;
    c.c = 1;
    c.k = 1;
    c.r = c.s = 3;
    c.pad_h = c.pad_w = 1;
    EXPECT_EQ(conv_tile_rows(c, 0, 10).first, 0);
    EXPECT_EQ(conv_tile_rows(c, 0, 10).last, 3);
    EXPECT_EQ(conv_tile_rows(c, 10, 30).first, 1);
    EXPECT_EQ(conv_tile_rows(c, 10, 30).last, 8);
    EXPECT_EQ(conv_tile_rows(c, 30, 48).first, 6);
    EXPECT_EQ(conv_tile_rows(c, 30, 48).last, 11);
}

// A TPU v4-like config (2 cores x 4 MXUs of 128x128 at 1050 MHz, HBM 1200 GB/s = 1142.857
// B/cycle) with 128 MiB of CMEM at 2286 B/cycle.
ChipConfig v4_like() {
    ChipConfig c;
    c.name = "v4-like";
    c.kind = "systolic";
    c.clock_mhz = 1050;
    c.tpu.cores = 2;
    c.tpu.mxus_per_core = 4;
    c.tpu.cmem_bytes = 128 << 20;
    c.tpu.cmem_bytes_per_cycle = 2286;
    c.mxu.rows = c.mxu.cols = 128;
    c.mxu.macs_per_pe_per_cycle = {1, 0, 1, 0};
    c.hbm.channels = 32;
    c.hbm.bus_width_bits = 128;
    c.hbm.data_rate_gbps = 2.34375;
    return c;
}

// The memory peaks the chip `config` names gives the roofline.
MemoryPeaks peaks(const ChipConfig& config) { return make_chip(config, RunOptions{})->memory_peaks(); }

TEST(Placement, RooflineCountsHbmBytesOnlyWhereTheyGoToHbm) {
    // gelu over 65,536 bf16 elements: compulsory 262,144 bytes = 229.376 HBM cycles; compute
    // 65,536·7 / (2·128·8) = 224 cycles: bound hbm. With its input from CMEM, 131,072 bytes leave
    // HBM (114.688 cycles) and cross CMEM (131,072 / 2286 = 57.34 cycles): bound compute, 224.
    const ChipConfig chip = v4_like();
    Roofline r = compute_roofline(elementwise(OpKind::gelu, 65536), chip);
    EXPECT_EQ(r.bound, "hbm");
    EXPECT_NEAR(r.bound_cycles, 229.376, 1e-9);
    EXPECT_EQ(r.cycles.count("cmem"), 0u);
    apply_placement(r, peaks(chip), 131072, 131072);
    EXPECT_EQ(r.bytes.at("hbm"), 131072);
    EXPECT_EQ(r.bytes.at("cmem"), 131072);
    EXPECT_NEAR(r.cycles.at("hbm"), 114.688, 1e-9);
    EXPECT_NEAR(r.cycles.at("cmem"), 131072.0 / 2286.0, 1e-9);
    EXPECT_EQ(r.bound, "compute");
    EXPECT_DOUBLE_EQ(r.bound_cycles, 224.0);
    // relu over 5 M elements with its input from a 1000 B/cycle CMEM and its output copied there:
    // HBM 10 MB = 8750 cycles, CMEM 20 MB = 20,000 cycles: bound cmem.
    ChipConfig slow = chip;
    slow.tpu.cmem_bytes_per_cycle = 1000;
    Roofline big = compute_roofline(elementwise(OpKind::relu, 5000000), slow);
    apply_placement(big, peaks(slow), 10000000, 20000000);
    EXPECT_NEAR(big.cycles.at("hbm"), 8750.0, 1e-9);
    EXPECT_EQ(big.bound, "cmem");
    EXPECT_DOUBLE_EQ(big.bound_cycles, 20000.0);
    // More bytes off HBM than the op has is a bug, not a faster op.
    Roofline bad = compute_roofline(elementwise(OpKind::relu, 100), chip);
    EXPECT_THROW(apply_placement(bad, peaks(chip), 401, 0), std::logic_error);
    // No CMEM: CMEM bytes are a bug too.
    ChipConfig v3 = chip;
    v3.tpu.cmem_bytes = 0;
    EXPECT_EQ(peaks(v3).of("cmem"), 0.0);
    Roofline none = compute_roofline(elementwise(OpKind::relu, 100), v3);
    EXPECT_THROW(apply_placement(none, peaks(v3), 0, 200), std::logic_error);
}

TEST(Placement, EngineKeepsEveryRooflineALowerBoundWithFusionAndCmem) {
    // BERT-base FFN on the shipped tpu_v4 (CMEM) with fusion: fc1 -> gelu -> fc2 -> resid2 add.
    // The two cores split N, so each reads all of A.
    //   fc1 (first op): HBM = 2·A 128·768·2 + B 768·3072·2 = 393,216 + 4,718,592 = 5,111,808, of
    //       which A + B = 4,915,200 are compulsory; its output stays in VMEM for the fused gelu;
    //   gelu: input in VMEM, output 786,432 bytes to HBM and a copy to CMEM for fc2;
    //   fc2: A from CMEM, B 3072·768·2 = 4,718,592 from HBM, output left in VMEM for the add;
    //   add: first input in VMEM, second 196,608 from HBM, output 196,608: 393,216.
    // Each roofline counts the compulsory HBM bytes of that placement, and every op ends at or
    // above its bound (run_trace throws otherwise).
    const ChipConfig config =
        load_config(std::string(ACCELSIM_SOURCE_DIR) + "/configs/tpu_v4.json", {"compiler.fuse_elementwise=true"});
    std::vector<Op> ops{matmul(128, 3072, 768), elementwise(OpKind::gelu, 128 * 3072), matmul(128, 768, 3072),
                        elementwise(OpKind::add, 128 * 768)};
    const RunReport report = run_trace(config, "(ops)", ops, RunOptions{});
    const std::int64_t expected_hbm[] = {5111808, 786432, 4718592, 393216};
    const std::int64_t compulsory_hbm[] = {4915200, 786432, 4718592, 393216};
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const OpReport& r = report.ops[i];
        EXPECT_EQ(r.bytes.at("hbm"), expected_hbm[i]) << i;
        EXPECT_EQ(r.roofline.bytes.at("hbm"), compulsory_hbm[i]) << i;
        EXPECT_GE(static_cast<double>(r.cycles), r.roofline.bound_cycles) << i;
    }
    EXPECT_EQ(report.ops[1].roofline.bytes.at("cmem"), 786432);  // the copy for fc2
    EXPECT_EQ(report.ops[2].roofline.bytes.at("cmem"), 786432);  // fc2 reads it
    EXPECT_EQ(report.ops[0].roofline.bytes.count("cmem"), 0u);
}

TEST(Placement, AnOpEndsOnlyWhenItsWritesAreInHbm) {
    // relu -> relu on tpu_v4: the second reads its input from CMEM and writes its output to HBM
    // only. 64 pseudo-channels of 32-burst write buffers hold 64 KiB, a whole 32768-element bf16
    // output: with writes acknowledged when buffered, op b ended at 56 cycles, below its bound of
    // 65,536 B / 1142.86 B per cycle = 57.3 (run_trace refused it). Its writes now reach HBM first.
    const ChipConfig config = load_config(std::string(ACCELSIM_SOURCE_DIR) + "/configs/tpu_v4.json", {});
    for (const std::int64_t n : {8192, 16384, 32768, 65536}) {
        const std::vector<Op> ops{elementwise(OpKind::relu, n), elementwise(OpKind::relu, n)};
        const RunReport report = run_trace(config, "(ops)", ops, RunOptions{});
        const OpReport& b = report.ops[1];
        EXPECT_EQ(b.bytes.at("hbm"), 2 * n) << n;  // the output only: the input came from CMEM
        EXPECT_GE(static_cast<double>(b.cycles), static_cast<double>(2 * n) / 1142.857) << n;
    }
}

}  // namespace
}  // namespace accelsim::tpu::tpu_placement_test
