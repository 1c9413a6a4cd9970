// SCALE-Sim topology CSV import. Expected values follow SCALE-Sim v2's own arithmetic
// (scalesim/topology_utils.py): ofmap = ceil((H - F + S) / S), MACs = ofmap_h * ofmap_w * F_h *
// F_w * channels * filters; a GEMM row M, N, K becomes ifmap M x K, filter 1 x K, N filters.
#include <gtest/gtest.h>

#include "sim/trace/trace_reader.h"
#include "trace_test_util.h"

namespace accelsim::test_scalesim_import {
namespace {

using test::read_error;
using test::write_file;

// SCALE-Sim's ceil((size - filter + stride) / stride) in integers, for filter <= size.
std::int64_t scalesim_ofmap(std::int64_t size, std::int64_t filter, std::int64_t stride) {
    return (size - filter + stride + stride - 1) / stride;
}

TEST(ScaleSimImport, ConvFormAsWrittenBySCALESim) {
    // Rows copied in SCALE-Sim's own layout: padded names, spaces, trailing commas.
    const std::string path = write_file(
        "alexnet.csv",
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
        "Strides,\n"
        "Conv1     ,224         ,224        ,11           ,11          ,3       ,96        ,4      "
        ",\n"
        "Conv2     ,27         ,27        ,5            ,5           ,96      ,256       ,1      "
        ",\n"
        "\n"
        ",,,,,,,,\n"
        "CB3a_1,56,56,1,1,256,128,2,\n");
    const std::vector<Op> ops = read_trace(path, DType::int8);
    ASSERT_EQ(ops.size(), 3u);
    for (const Op& op : ops) {
        EXPECT_EQ(op.kind, OpKind::conv2d);
        EXPECT_EQ(op.conv.n, 1);
        EXPECT_EQ(op.dtype, DType::int8);
    }
    EXPECT_EQ(ops[0].name, "Conv1");
    EXPECT_EQ(ops[0].line, 2);
    EXPECT_EQ(ops[2].line, 6);
    const Conv2dShape& c1 = ops[0].conv;
    EXPECT_EQ(c1.h, 224);
    EXPECT_EQ(c1.r, 11);
    EXPECT_EQ(c1.c, 3);
    EXPECT_EQ(c1.k, 96);
    EXPECT_EQ(c1.stride_h, 4);
    EXPECT_EQ(c1.stride_w, 4);
    // Conv1: ceil((224 - 11 + 4) / 4) = ceil(54.25) = 55 (a plain floor formula with no padding
    // would give floor(213 / 4) + 1 = 54: SCALE-Sim's last window overhangs the edge).
    EXPECT_EQ(c1.out_h(), 55);
    EXPECT_EQ(c1.out_w(), 55);
    // MACs = 55*55 * 11*11 * 3 * 96 = 3,025 * 121 * 288 = 105,415,200.
    EXPECT_EQ(ops[0].macs(), 105415200);
    // Conv2: ceil((27 - 5 + 1) / 1) = 23; MACs = 23*23 * 5*5 * 96 * 256 = 325,017,600. S divides
    // H - F, so no padding is needed to match.
    EXPECT_EQ(ops[1].conv.out_h(), 23);
    EXPECT_EQ(ops[1].conv.pad_h, 0);
    EXPECT_EQ(ops[1].macs(), 325017600);
    // CB3a_1 (1x1 stride 2 on 56x56): ceil((56 - 1 + 2) / 2) = ceil(28.5) = 29;
    // MACs = 29*29 * 256 * 128 = 841 * 32,768 = 27,557,888.
    EXPECT_EQ(ops[2].conv.out_h(), 29);
    EXPECT_EQ(ops[2].macs(), 27557888);
    // Input bytes are the ifmap as written, whatever padding reproduces the output size:
    // int8 224*224*3 = 150,528.
    EXPECT_EQ(ops[0].input_bytes(), 150528);
}

TEST(ScaleSimImport, OutputSizeMatchesSCALESimOnEveryShapeUpTo40) {
    // Exhaustive over small shapes, with rectangular inputs and different strides per axis.
    std::string csv =
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
        "Stride Height, Stride Width,\n";
    struct Case {
        std::int64_t h, w, r, s, sh, sw;
    };
    std::vector<Case> cases;
    for (std::int64_t h = 1; h <= 40; ++h)
        for (std::int64_t r = 1; r <= h && r <= 12; ++r)
            for (std::int64_t st = 1; st <= 6; ++st) {
                const std::int64_t w = 41 - h, s = std::min<std::int64_t>(r, w), sw = 7 - st;
                cases.push_back({h, w, r, s, st, sw});
                csv += "L" + std::to_string(cases.size()) + "," + std::to_string(h) + "," +
                       std::to_string(w) + "," + std::to_string(r) + "," + std::to_string(s) +
                       ",2,3," + std::to_string(st) + "," + std::to_string(sw) + ",\n";
            }
    const std::vector<Op> ops = read_trace(write_file("grid.csv", csv), DType::bf16);
    ASSERT_EQ(ops.size(), cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        const std::int64_t oh = scalesim_ofmap(c.h, c.r, c.sh), ow = scalesim_ofmap(c.w, c.s, c.sw);
        ASSERT_EQ(ops[i].conv.out_h(), oh) << ops[i].name;
        ASSERT_EQ(ops[i].conv.out_w(), ow) << ops[i].name;
        ASSERT_EQ(ops[i].macs(), oh * ow * c.r * c.s * 2 * 3) << ops[i].name;
    }
}

TEST(ScaleSimImport, DepthwiseRowsFollowSCALESimsDPConvention) {
    // SCALE-Sim runs a "DP" row as Channels one-channel layers of Num Filter filters each.
    const std::string path = write_file(
        "mobilenet.csv",
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
        "Strides,\n"
        "Conv_DP1, 112, 112, 3, 3, 32, 1, 1,\n");
    const std::vector<Op> ops = read_trace(path, DType::bf16);
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_EQ(ops[0].conv.groups, 32);
    EXPECT_EQ(ops[0].conv.c, 32);
    EXPECT_EQ(ops[0].conv.k, 32);
    // 32 layers of 110*110 * 3*3 * 1 * 1 = 108,900 MACs each: 3,484,800.
    EXPECT_EQ(ops[0].macs(), 3484800);
}

TEST(ScaleSimImport, GemmForm) {
    const std::string path = write_file("gemm.csv",
                                        "Layer, M, N, K,\n"
                                        "QKT, 1024, 1024, 64,\n"
                                        "Linear1,1024,4800,1600\n"  // no trailing comma: accepted
                                        "Linear2,1024,1600,1600,,,\n");  // extra empty fields too
    const std::vector<Op> ops = read_trace(path, DType::bf16);
    ASSERT_EQ(ops.size(), 3u);
    EXPECT_EQ(ops[0].kind, OpKind::matmul);
    EXPECT_EQ(ops[2].gemm, (GemmShape{1, 1024, 1600, 1600}));
    // SCALE-Sim: ifmap 1024 x 64, filter 1 x 64, 1 channel, 1024 filters -> ofmap 1024 x 1 per
    // filter, window 64: M = 1024 output rows, N = 1024 output columns, K = 64 reduction.
    EXPECT_EQ(ops[0].gemm, (GemmShape{1, 1024, 1024, 64}));
    EXPECT_EQ(ops[0].macs(), 1024LL * 1024 * 64);
    // 1024 * 4800 * 1600 = 7,864,320,000 MACs; B (weights) is K x N = 1600 x 4800.
    EXPECT_EQ(ops[1].macs(), 7864320000LL);
    EXPECT_EQ(ops[1].weight_bytes(), 1600LL * 4800 * 2);
}

TEST(ScaleSimImport, GemmFormLayerNameHeaderAndBlankNames) {
    // SCALE-Sim's own test_mnk_input.csv: "Layer Name" header, a layer name with a blank.
    const std::vector<Op> ops = read_trace(
        write_file("t.csv", "Layer Name, M, N, K,\nTest 1, 256, 128, 256,"), DType::bf16);
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_EQ(ops[0].name, "Test_1");
    // 256 * 128 * 256 = 8,388,608.
    EXPECT_EQ(ops[0].macs(), 8388608);
}

TEST(ScaleSimImportErrors, Messages) {
    EXPECT_EQ(read_error("t.csv", "Layer, Rows, Cols,\nx,1,2,\n"),
              "t.csv:1: not a SCALE-Sim topology header: expected 'Layer name, IFMAP Height, "
              "IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,' (conv "
              "form) or 'Layer, M, N, K,' (GEMM form)");
    EXPECT_EQ(read_error("t.csv", "Layer, M, N, Q,\nx,1,2,3,\n"),
              "t.csv:1: column 4 is 'Q', expected 'K'");
    EXPECT_EQ(read_error("t.csv", "Layer, M, N, K, Sparsity,\nx,1,2,3,4,\n"),
              "t.csv:1: unexpected column 5 'Sparsity' (the columns are: Layer, M, N, K)");
    EXPECT_EQ(read_error("t.csv", "Layer, M, N,\nx,1,2,\n"),
              "t.csv:1: missing column 'K' (the columns are: Layer, M, N, K)");
    EXPECT_EQ(read_error("t.csv", "Layer, M, N, K,\nx,1,2,\n"),
              "t.csv:2: expected 4 values (Layer, M, N, K), got 3");
    EXPECT_EQ(read_error("t.csv", "Layer, M, N, K,\nx,1,2.5,3,\n"),
              "t.csv:2: N '2.5' is not an integer");
    EXPECT_EQ(read_error("t.csv", "Layer, M, N, K,\nx,1,0,3,\n"),
              "t.csv:2: N 0 must be a positive integer");
    EXPECT_EQ(read_error("t.csv", "Layer, M, N, K,\nx,1,2,3,\n\nx,4,5,6,\n"),
              "t.csv:4: duplicate layer name 'x' (first used on line 2)");
    EXPECT_EQ(read_error("t.csv", "Layer, M, N, K,\n ,1,2,3,\n"), "t.csv:2: missing layer name");
    EXPECT_EQ(read_error("t.csv", "Layer, M, N, K,\n"),
              "t.csv:1: empty SCALE-Sim topology: no layers after the header");
    EXPECT_EQ(read_error("t.csv", "\n"), "t.csv:1: empty SCALE-Sim topology: no header line");
    EXPECT_EQ(read_error("t.csv", "Layer, M, N, K,\nx,4294967296,4294967296,1,\n"),
              "t.csv:2: MAC count b*m*n*k overflows a 64-bit integer");
    EXPECT_EQ(read_error("t.csv",
                         "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                         "Channels, Num Filter, Strides,\nc,5,5,7,3,1,1,1,\n"),
              "t.csv:2: filter 7x3 is larger than the IFMAP 5x5 (SCALE-Sim uses no padding)");
}

}  // namespace
}  // namespace accelsim::test_scalesim_import
