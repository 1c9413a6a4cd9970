// The pool op kind: trace syntax, output shapes (ONNX / PyTorch formula, ceil_mode, pads,
// dilation), bytes and FLOPs, the double reference, and bad input. Every figure is worked by hand
// in the comment beside it.
#include <gtest/gtest.h>

#include <sstream>

#include "models/common/op_checks.h"
#include "models/common/pool_reference.h"
#include "sim/trace/model_import.h"
#include "trace_test_util.h"

namespace accelsim::test_pool {
namespace {

const std::string kHeader = "# accelsim-trace 1\n";

Op read_one(const std::string& line, DType dtype = DType::bf16) {
    const std::vector<Op> ops = read_trace(test::write_file("p.trace", kHeader + line + "\n"), dtype);
    EXPECT_EQ(ops.size(), 1u);
    return ops.front();
}

std::string error_of(const std::string& line) { return test::read_error("e.trace", kHeader + line + "\n"); }

TEST(PoolOp, OutputShapesWorkedByHand) {
    // ResNet-50's max pool: floor((112 + 2 - 3) / 2) + 1 = 55 + 1 = 56.
    Op op = read_one("pool p n=1 h=112 w=112 c=64 mode=max r=3 s=3 stride=2 pad=1");
    EXPECT_EQ(op.pool.out_h(), 56);
    EXPECT_EQ(op.pool.out_w(), 56);
    // 6 wide, window 3, stride 2, no pad: floor(3 / 2) + 1 = 2; ceil(3 / 2) + 1 = 3, and the last
    // window starts at 4 < 6: kept.
    EXPECT_EQ(read_one("pool p n=1 h=6 w=6 c=1 mode=max r=3 s=3 stride=2").pool.out_h(), 2);
    EXPECT_EQ(read_one("pool p n=1 h=6 w=6 c=1 mode=max r=3 s=3 stride=2 ceil=1").pool.out_h(), 3);
    // 5 wide, window 2, stride 2, pad 1: floor(5 / 2) + 1 = 3; ceil(5 / 2) + 1 = 4, but window 3
    // would start at 3 * 2 = 6 >= 5 + 1, wholly in the bottom padding: dropped, 3 (PyTorch gives
    // nn.MaxPool2d(2, 2, padding=1, ceil_mode=True) on 5x5 a 3x3 output).
    EXPECT_EQ(read_one("pool p n=1 h=5 w=5 c=1 mode=max r=2 s=2 stride=2 pad=1").pool.out_h(), 3);
    EXPECT_EQ(read_one("pool p n=1 h=5 w=5 c=1 mode=max r=2 s=2 stride=2 pad=1 ceil=1").pool.out_h(), 3);
    // Dilation 2 makes a 3-window span 5: (10 - 5) / 1 + 1 = 6; width 8 with stride 3: (8 - 5) / 3 + 1 = 2.
    op = read_one("pool p n=1 h=10 w=8 c=1 mode=max r=3 s=3 stride_h=1 stride_w=3 dilation=2");
    EXPECT_EQ(op.pool.out_h(), 6);
    EXPECT_EQ(op.pool.out_w(), 2);
    // Global: the window is the image, 1 x 1 out.
    op = read_one("pool gap n=2 h=7 w=7 c=2048 mode=avg global=1");
    EXPECT_EQ(op.pool.r, 7);
    EXPECT_EQ(op.pool.s, 7);
    EXPECT_EQ(op.pool.out_h(), 1);
    EXPECT_EQ(op.pool.out_w(), 1);
}

TEST(PoolOp, BytesAndFlopsOfResNet50Pools) {
    // Max pool 112x112x64 bf16 -> 56x56x64: input 112*112*64*2 = 1,605,632 bytes, output
    // 56*56*64*2 = 401,408, one max per window element: 56*56*64*9 = 1,806,336 FLOPs, no MACs.
    const Op max = read_one("pool p n=1 h=112 w=112 c=64 mode=max r=3 s=3 stride=2 pad=1");
    EXPECT_EQ(max.input_bytes(), 1605632);
    EXPECT_EQ(max.weight_bytes(), 0);
    EXPECT_EQ(max.output_bytes(), 401408);
    EXPECT_EQ(max.compulsory_bytes(), 2007040);
    EXPECT_EQ(max.flops(), 1806336);
    EXPECT_EQ(max.macs(), 0);
    EXPECT_FALSE(is_elementwise(OpKind::pool));
    EXPECT_FALSE(is_gemm_like(OpKind::pool));
    // Global average 7x7x2048 fp32, batch 2: input 2*49*2048*4 = 802,816, output 2*2048*4 = 16,384,
    // 49 adds per output: 4,096 * 49 = 200,704 FLOPs.
    const Op gap = read_one("pool gap n=2 h=7 w=7 c=2048 mode=avg global=1 dtype=fp32");
    EXPECT_EQ(gap.input_bytes(), 802816);
    EXPECT_EQ(gap.output_bytes(), 16384);
    EXPECT_EQ(gap.flops(), 200704);
    EXPECT_EQ(gap.vector_elements(), 4096);
}

TEST(PoolOp, WrittenShapeReadsBack) {
    for (const std::string line : {"pool p n=1 h=112 w=112 c=64 mode=max r=3 s=3 stride=2 pad=1",
                                   "pool p n=2 h=9 w=7 c=3 mode=avg r=3 s=2 stride_h=2 stride_w=1 pad_h=1 pad_w=0 ceil=1 "
                                   "count_pad=1",
                                   "pool p n=1 h=10 w=10 c=1 mode=max r=3 s=3 stride=1 pad=0 dilation=2",
                                   "pool p n=4 h=7 w=7 c=8 mode=avg global=1"}) {
        const Op op = read_one(line);
        std::ostringstream s;
        s << "pool p ";
        write_shape(s, op);
        EXPECT_EQ(s.str(), line);
    }
}

TEST(PoolOp, ReferenceOnAFourByFourImage) {
    // x[h][w] = 4h + w: 2x2/2 max -> {5, 7, 13, 15}; avg -> {2.5, 4.5, 10.5, 12.5}.
    std::vector<float> x(16);
    for (int i = 0; i < 16; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i);
    PoolShape p;
    p.h = p.w = 4;
    p.c = 1;
    p.r = p.s = 2;
    p.stride_h = p.stride_w = 2;
    EXPECT_EQ(pool_reference(p, x), (std::vector<double>{5, 7, 13, 15}));
    p.mode = PoolMode::avg;
    EXPECT_EQ(pool_reference(p, x), (std::vector<double>{2.5, 4.5, 10.5, 12.5}));
    // 3x3/1 pad 1: the corner window holds {0, 1, 4, 5}: 10 / 4 = 2.5 without the padding in the
    // divisor, 10 / 9 with it (count_include_pad); max ignores the padding: 5.
    p.r = p.s = 3;
    p.stride_h = p.stride_w = 1;
    p.pad_h = p.pad_w = 1;
    EXPECT_DOUBLE_EQ(pool_reference(p, x)[0], 2.5);
    EXPECT_EQ(pool_divisor(p, 0, 0), 4);
    EXPECT_EQ(pool_divisor(p, 1, 1), 9);
    p.count_pad = true;
    EXPECT_DOUBLE_EQ(pool_reference(p, x)[0], 10.0 / 9.0);
    p.mode = PoolMode::max;
    p.count_pad = false;
    EXPECT_EQ(pool_reference(p, x)[0], 5.0);
}

TEST(PoolOp, BadInputNamesTheLine) {
    // A window larger than the padded input (4 + 2 pad = 6 holds a window of 5; 2 does not).
    EXPECT_EQ(error_of("pool p n=1 h=4 w=4 c=1 mode=max r=5 s=3 pad=1"), "no error");
    EXPECT_EQ(error_of("pool p n=1 h=2 w=8 c=1 mode=max r=5 s=3"),
              "e.trace:2: pool: the window's height (5 with dilation) is larger than the padded input (2 + 2*0 = 2)");
    EXPECT_EQ(error_of("pool p n=1 h=8 w=8 c=1 mode=max r=3 s=3 dilation=4"),
              "e.trace:2: pool: the window's height (9 with dilation) is larger than the padded input (8 + 2*0 = 8)");
    EXPECT_EQ(error_of("pool p n=1 h=8 w=8 c=1 mode=max r=3 s=3 stride=0"),
              "e.trace:2: pool: stride=0 must be a positive integer");
    EXPECT_EQ(error_of("pool p n=1 h=8 w=8 c=1 mode=max r=3 s=3 pad=2"),
              "e.trace:2: pool: pad 2 along the height is more than half the window (3)");
    EXPECT_EQ(error_of("pool p n=1 h=8 w=8 c=1 mode=min r=3 s=3"), "e.trace:2: pool: mode must be max or avg");
    EXPECT_EQ(error_of("pool p n=1 h=8 w=8 c=1 mode=max"),
              "e.trace:2: pool: missing r= (the window; or global=1 for the whole image)");
    EXPECT_EQ(error_of("pool p n=1 h=8 w=8 c=1 mode=avg global=1 r=8"),
              "e.trace:2: pool: r does not apply to a global pool (global=1)");
    EXPECT_EQ(error_of("pool p n=1 h=8 w=8 c=1 mode=max r=2 s=2 count_pad=1"),
              "e.trace:2: pool: count_pad applies to mode=avg only");
    EXPECT_EQ(error_of("pool p n=1 h=8 w=8 c=1 mode=avg r=2 s=2 dilation=2"),
              "e.trace:2: pool: dilation applies to mode=max only");
    EXPECT_EQ(error_of("pool p n=1 h=8 w=8 c=1 mode=max r=2 s=2 ceil=2"), "e.trace:2: pool: ceil=2 must be 0 or 1");
    EXPECT_EQ(error_of("pool p n=1 h=8 w=8 c=1 r=2 s=2"), "e.trace:2: pool: missing required key 'mode'");
}

// tests/trace/fixtures/cnn_pool_profile.json, written by hand in torch.profiler's format
// (record_shapes=True): the innermost event of each nest, its arguments from Concrete Inputs (its
// own, else the enclosing pool event's):
//   max_pool2d_with_indices inside max_pool2d(k 3, s 2, p 1, d 1): floor((32 + 2 - 3) / 2) + 1 = 16
//   avg_pool2d(k 2, stride [] = the kernel, p 0, ceil True, count_include_pad True), fp16:
//     ceil((16 - 2) / 2) + 1 = 8; no padding, so nothing to count
//   _adaptive_avg_pool2d inside adaptive_avg_pool2d([1, 1]): the global pool
//   adaptive_avg_pool2d([2, 2]) of 6x6: windows [0, 3) and [3, 6): window 3, stride 3
TEST(PoolOp, PyTorchProfilerPools) {
    const ImportedModel m = import_pytorch_profile(
        std::string(ACCELSIM_SOURCE_DIR) + "/tests/trace/fixtures/cnn_pool_profile.json", DType::bf16, {});
    EXPECT_EQ(test::op_lines(m.ops), (std::vector<std::string>{
                                         "pool n=2 h=32 w=32 c=16 mode=max r=3 s=3 stride=2 pad=1",
                                         "pool n=2 h=16 w=16 c=16 mode=avg r=2 s=2 stride=2 pad=0 ceil=1",
                                         "pool n=2 h=8 w=8 c=16 mode=avg global=1",
                                         "pool n=1 h=6 w=6 c=8 mode=avg r=3 s=3 stride=3 pad=0",
                                     }));
    EXPECT_EQ(m.ops[0].pool.out_h(), 16);
    EXPECT_EQ(m.ops[1].pool.out_h(), 8);
    EXPECT_EQ(m.ops[1].dtype, DType::fp16);
    EXPECT_EQ(m.ops[3].pool.out_h(), 2);
    EXPECT_EQ(m.summary.nested, (std::map<std::string, std::int64_t>{{"aten::adaptive_avg_pool2d", 1},
                                                                    {"aten::max_pool2d", 1}}));
}

}  // namespace
}  // namespace accelsim::test_pool
