// The TPU chip with ideal memory (operands always ready): GEMMs split over every MXU of the chip,
// cycles of the slowest MXU, real data checked against Eigen with --validate. Cycle counts are
// worked out by hand from the MXU closed forms of docs/mxu.md (ws, overlap_folds = true):
//   cycles = R + (F-1)·max(T, R) + T + R + C - 2,  F = batch·ceil(K/R)·ceil(N/C), T = M.
#include <gtest/gtest.h>

#include "models/tpu/gemm_split.h"
#include "models/tpu/tpu_chip.h"

namespace accelsim::tpu::tpu_ideal_test {
namespace {

TpuChipParams ideal_chip(int cores, int mxus, int rows, int cols) {
    TpuChipParams p;
    p.cores = cores;
    p.mxus_per_core = mxus;
    p.mxu.rows = rows;
    p.mxu.cols = cols;
    p.ideal_memory = true;
    return p;
}

Op matmul(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype) {
    Op op;
    op.kind = OpKind::matmul;
    op.name = "mm";
    op.dtype = dtype;
    op.gemm = GemmShape{1, m, n, k};
    return op;
}

TEST(TpuIdeal, OneTileOnOneArrayIsTheMxuClosedForm) {
    // 8x8 ws, M = N = K = 8: one fold, 4n - 2 = 30 cycles (docs/mxu.md worked example).
    TpuChip chip(ideal_chip(1, 1, 8, 8));
    const TpuOpResult r = chip.run(matmul(8, 8, 8, DType::int8), false);
    EXPECT_EQ(r.model, "tpu.ideal");
    EXPECT_EQ(r.cycles, 30u);
    // utilization = 512 MACs / (64 PEs x 30 cycles)
    EXPECT_DOUBLE_EQ(*r.utilization, 512.0 / (64.0 * 30.0));
}

TEST(TpuIdeal, GemmIsSplitOverAllMxusAndTakesTheSlowest) {
    // 2 cores x 2 MXUs of 128x128, BERT qkv m=128 n=2304 k=768: 18 column tiles over 4 MXUs
    // -> 4, 5, 4, 5 tiles (split_range: boundaries i*18/4 = 0, 4, 9, 13, 18). Slowest MXU:
    // N = 640, F = 6 K tiles x 5 N tiles = 30, T = M = 128 = R:
    //   128 + 29·128 + 128 + 128 + 128 - 2 = 4222 cycles.
    // (Splitting M instead, 2 x 2 with 9 tiles of M = 64, would cost 128 + 53·128 + 64 + 254 = 7230.)
    TpuChip chip(ideal_chip(2, 2, 128, 128));
    const TpuOpResult r = chip.run(matmul(128, 2304, 768, DType::bf16), false);
    EXPECT_EQ(r.cycles, 4222u);
    // One MXU alone: F = 108: 128 + 107·128 + 128 + 254 = 14206 (docs/mxu.md).
    TpuChip single(ideal_chip(1, 1, 128, 128));
    EXPECT_EQ(single.run(matmul(128, 2304, 768, DType::bf16), false).cycles, 14206u);
}

TEST(TpuIdeal, SplitRangeKeepsWholeGranules) {
    std::vector<std::int64_t> begin, size;
    split_range(2304, 4, 128, begin, size);
    ASSERT_EQ(size.size(), 4u);
    EXPECT_EQ(begin, (std::vector<std::int64_t>{0, 512, 1152, 1664}));
    EXPECT_EQ(size, (std::vector<std::int64_t>{512, 640, 512, 640}));
    // 130 columns in granules of 8: 17 granules over 3 parts -> 5, 6, 6 granules, the last clipped.
    split_range(130, 3, 8, begin, size);
    EXPECT_EQ(size, (std::vector<std::int64_t>{40, 48, 42}));
}

TEST(TpuIdeal, SteppedAndFastGiveIdenticalCycles) {
    // The shapes of traces/tiny_gemm.trace on the 8x8 teaching array.
    const GemmShape shapes[] = {{1, 8, 8, 8}, {1, 16, 8, 16}, {1, 13, 10, 9}, {1, 130, 7, 300}, {1, 1, 64, 64}};
    for (const GemmShape& s : shapes) {
        TpuChipParams fast = ideal_chip(1, 2, 8, 8), stepped = fast;
        fast.mxu.mode = MxuMode::fast;
        stepped.mxu.mode = MxuMode::stepped;
        TpuChip a(fast), b(stepped);
        const Op op = matmul(s.m, s.n, s.k, DType::int8);
        EXPECT_EQ(a.run(op, false).cycles, b.run(op, false).cycles) << s.m << "x" << s.n << "x" << s.k;
    }
}

TEST(TpuIdeal, Int8AtTwiceTheRatePacksTwoKElementsPerPeCycle) {
    // 128x128, m = n = 128, k = 256. bf16 at rate 1: F = 2 K tiles, T = R = 128:
    //   128 + 1·128 + 128 + 254 = 638.  int8 at rate 2: K' = 128, one fold: 4·128 - 2 = 510.
    TpuChipParams p = ideal_chip(1, 1, 128, 128);
    p.mxu.macs_per_pe_per_cycle.int8 = 2;
    TpuChip chip(p);
    EXPECT_EQ(chip.run(matmul(128, 128, 256, DType::bf16), false).cycles, 638u);
    EXPECT_EQ(chip.run(matmul(128, 128, 256, DType::int8), false).cycles, 510u);
    EXPECT_EQ(mxu_timing_shape(GemmShape{1, 1, 1, 301}, 2.0).k, 151);
    EXPECT_EQ(mxu_timing_shape(GemmShape{1, 1, 1, 100}, 1.0 / 3.0).k, 300);
}

TEST(TpuIdeal, ValidateChecksEveryOutputAgainstEigen) {
    // Awkward shapes over 3 MXUs, every dtype: int8 exact, floats within the K-derived bound.
    for (DType dtype : {DType::int8, DType::bf16, DType::fp16, DType::fp32}) {
        TpuChipParams p = ideal_chip(1, 3, 8, 8);
        p.mxu.macs_per_pe_per_cycle.fp32 = 1;
        TpuChip chip(p);
        Op op = matmul(13, 30, 41, dtype);
        op.kind = OpKind::bmm;
        op.gemm.batch = 2;
        const TpuOpResult r = chip.run(op, true);
        ASSERT_TRUE(r.numerics);
        EXPECT_TRUE(r.numerics->passed) << to_string(dtype);
        EXPECT_EQ(r.numerics->checked, 2 * 13 * 30);
        if (dtype == DType::int8) {
            EXPECT_EQ(r.numerics->max_abs_err, 0.0);
        }
    }
}

TEST(TpuIdeal, ValidateConvolutionAgainstDirectLoop) {
    // The depthwise conv of traces/tiny_conv.trace (groups = 16: 16 GEMMs of 64 x 1 x 9) and a
    // strided padded one, checked against a direct convolution loop (independent of im2col).
    Op dw;
    dw.kind = OpKind::conv2d;
    dw.dtype = DType::int8;
    dw.conv = Conv2dShape{};
    dw.conv.n = 1; dw.conv.h = 8; dw.conv.w = 8; dw.conv.c = 16; dw.conv.k = 16; dw.conv.r = 3; dw.conv.s = 3;
    dw.conv.pad_h = dw.conv.pad_w = 1;
    dw.conv.groups = 16;
    Op down = dw;
    down.dtype = DType::bf16;
    down.conv = Conv2dShape{};
    down.conv.n = 1; down.conv.h = 16; down.conv.w = 16; down.conv.c = 8; down.conv.k = 16; down.conv.r = 3;
    down.conv.s = 3; down.conv.stride_h = down.conv.stride_w = 2; down.conv.pad_h = down.conv.pad_w = 1;
    TpuChip chip(ideal_chip(1, 1, 8, 8));
    for (const Op& op : {dw, down}) {
        const TpuOpResult r = chip.run(op, true);
        ASSERT_TRUE(r.numerics);
        EXPECT_TRUE(r.numerics->passed);
        // outputs: n * oh * ow * k = 64*16 (dw), 8*8*16 (down)
        EXPECT_EQ(r.numerics->checked, op.conv.n * op.conv.out_h() * op.conv.out_w() * op.conv.k);
    }
}

TEST(TpuIdeal, ValidationIsDeterministicPerSeed) {
    TpuChipParams p = ideal_chip(1, 1, 8, 8);
    TpuChip a(p), b(p);
    const Op op = matmul(9, 9, 9, DType::bf16);
    const TpuOpResult ra = a.run(op, true), rb = b.run(op, true);
    EXPECT_EQ(ra.numerics->max_abs_err, rb.numerics->max_abs_err);
    EXPECT_NE(op_seed(1, 0), op_seed(1, 1));
    EXPECT_NE(op_seed(1, 0), op_seed(2, 0));
}

TEST(TpuIdeal, BadMxuParamsAreRejectedNamingTheKey) {
    TpuChipParams p = ideal_chip(1, 1, 0, 8);
    try {
        TpuChip chip(p);
        FAIL() << "accepted mxu.rows = 0";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("mxu.rows"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace accelsim::tpu::tpu_ideal_test
