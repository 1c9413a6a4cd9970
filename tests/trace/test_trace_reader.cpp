// The accelsim text trace reader: shapes, counts and every error case. Expected numbers are worked
// out by hand in the comments, not taken from the program.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/trace/trace_reader.h"
#include "sim/tracegen/trace_writer.h"
#include "trace_test_util.h"

namespace accelsim::test_trace_reader {
namespace {

using test::read_error;
using test::write_file;

TEST(TraceReader, MatmulShapeMacsAndBytes) {
    const std::string path = write_file("a.trace",
                                        "# accelsim-trace 1\n"
                                        "matmul awkward m=130 n=7 k=300   # trailing comment\n");
    const std::vector<Op> ops = read_trace(path, DType::bf16);
    ASSERT_EQ(ops.size(), 1u);
    const Op& op = ops[0];
    EXPECT_EQ(op.kind, OpKind::matmul);
    EXPECT_EQ(op.name, "awkward");
    EXPECT_EQ(op.dtype, DType::bf16);
    EXPECT_EQ(op.gemm, (GemmShape{1, 130, 7, 300}));
    EXPECT_EQ(op.line, 2);
    EXPECT_EQ(op.file, path);
    // 130 * 7 * 300 = 910 * 300 = 273,000 MACs.
    EXPECT_EQ(op.macs(), 273000);
    // bf16 = 2 bytes: A 130*300*2 = 78,000; B 300*7*2 = 4,200; C 130*7*2 = 1,820.
    EXPECT_EQ(op.input_bytes(), 78000);
    EXPECT_EQ(op.weight_bytes(), 4200);
    EXPECT_EQ(op.output_bytes(), 1820);
}

TEST(TraceReader, DtypeOnLineOverridesDefault) {
    const std::string path = write_file("d.trace",
                                        "# accelsim-trace 1\n"
                                        "matmul a m=4 n=4 k=4 dtype=int8\n"
                                        "matmul b m=4 n=4 k=4\n"
                                        "relu   c n=10 dtype=fp32\n");
    const std::vector<Op> ops = read_trace(path, DType::fp16);
    ASSERT_EQ(ops.size(), 3u);
    EXPECT_EQ(ops[0].dtype, DType::int8);
    EXPECT_EQ(ops[1].dtype, DType::fp16);
    EXPECT_EQ(ops[2].dtype, DType::fp32);
    // int8 A: 4*4*1 = 16 bytes; fp16 A: 4*4*2 = 32 bytes; fp32 relu input 10*4 = 40 bytes.
    EXPECT_EQ(ops[0].input_bytes(), 16);
    EXPECT_EQ(ops[1].input_bytes(), 32);
    EXPECT_EQ(ops[2].input_bytes(), 40);
}

TEST(TraceReader, BmmAndVectorOps) {
    const std::string path = write_file("v.trace",
                                        "\n\n# accelsim-trace 1\r\n"  // blank lines and CRLF
                                        "# a comment line\r\n"
                                        "bmm       s  b=12 m=128 n=128 k=64\r\n"
                                        "softmax   sm rows=1536 cols=128\r\n"
                                        "layernorm ln rows=128 cols=768\r\n"
                                        "gelu      g  n=393216\r\n"
                                        "add       a  n=98304\r\n"
                                        "mul       m  n=5\r\n"
                                        "relu      r  n=7\r\n");
    const std::vector<Op> ops = read_trace(path, DType::bf16);
    ASSERT_EQ(ops.size(), 7u);
    // 12 * 128 * 128 * 64 = 12 * 1,048,576 = 12,582,912 MACs.
    EXPECT_EQ(ops[0].macs(), 12582912);
    EXPECT_EQ(ops[0].line, 5);
    EXPECT_EQ(ops[1].rows, 1536);
    EXPECT_EQ(ops[1].cols, 128);
    // 1536 * 128 = 196,608 elements.
    EXPECT_EQ(ops[1].vector_elements(), 196608);
    EXPECT_EQ(ops[2].kind, OpKind::layernorm);
    // gamma and beta: 2 * 768 * 2 bytes = 3,072.
    EXPECT_EQ(ops[2].weight_bytes(), 3072);
    EXPECT_EQ(ops[3].elements, 393216);
    // add reads two operands: 2 * 98,304 * 2 bytes = 393,216.
    EXPECT_EQ(ops[4].input_bytes(), 393216);
    EXPECT_EQ(ops[5].kind, OpKind::mul);
    EXPECT_EQ(ops[6].kind, OpKind::relu);
    EXPECT_EQ(ops[6].elements, 7);
}

TEST(TraceReader, Conv2dOutputSizesMacsAndBytes) {
    const std::string path = write_file(
        "c.trace",
        "# accelsim-trace 1\n"
        "conv2d conv1 n=1 h=224 w=224 c=3 k=64 r=7 s=7 stride=2 pad=3\n"
        "conv2d dw    n=1 h=56 w=56 c=32 k=32 r=3 s=3 stride=2 pad=1 groups=32 dtype=fp32\n"
        "conv2d odd   n=2 h=10 w=12 c=4 k=6 r=3 s=5 stride_h=1 stride_w=2 pad_h=0 pad_w=2 "
        "dilation_h=2 dilation_w=1 groups=2\n");
    const std::vector<Op> ops = read_trace(path, DType::bf16);
    ASSERT_EQ(ops.size(), 3u);

    // conv1: out = floor((224 + 2*3 - 1*(7-1) - 1) / 2) + 1 = floor(223 / 2) + 1 = 112.
    const Conv2dShape& c1 = ops[0].conv;
    EXPECT_EQ(c1.out_h(), 112);
    EXPECT_EQ(c1.out_w(), 112);
    // MACs = 112*112 pixels * 64 filters * (3*7*7 = 147) = 12,544 * 9,408 = 118,013,952.
    EXPECT_EQ(ops[0].macs(), 118013952);
    // bf16 input 224*224*3*2 = 301,056 B; weights 64*3*7*7*2 = 18,816 B; output 112*112*64*2.
    EXPECT_EQ(ops[0].input_bytes(), 301056);
    EXPECT_EQ(ops[0].weight_bytes(), 18816);
    EXPECT_EQ(ops[0].output_bytes(), 1605632);

    // depthwise: out = floor((56 + 2 - 2 - 1) / 2) + 1 = floor(55 / 2) + 1 = 28.
    const Conv2dShape& dw = ops[1].conv;
    EXPECT_EQ(dw.groups, 32);
    EXPECT_EQ(dw.out_h(), 28);
    // Each of 32 channels: 28*28 pixels * 1 filter * 3*3 window = 7,056; * 32 = 225,792.
    EXPECT_EQ(ops[1].macs(), 225792);
    // fp32 weights: 32 filters * 1 channel * 9 * 4 bytes = 1,152.
    EXPECT_EQ(ops[1].weight_bytes(), 1152);

    // odd: out_h = floor((10 + 0 - 2*2 - 1) / 1) + 1 = 6;
    //      out_w = floor((12 + 4 - 1*4 - 1) / 2) + 1 = floor(11 / 2) + 1 = 6.
    const Conv2dShape& odd = ops[2].conv;
    EXPECT_EQ(odd.stride_h, 1);
    EXPECT_EQ(odd.stride_w, 2);
    EXPECT_EQ(odd.pad_w, 2);
    EXPECT_EQ(odd.dilation_h, 2);
    EXPECT_EQ(odd.out_h(), 6);
    EXPECT_EQ(odd.out_w(), 6);
    // 2 images * 36 pixels * 6 filters * (4/2 channels * 3*5) = 72 * 6 * 30 = 12,960 MACs.
    EXPECT_EQ(ops[2].macs(), 12960);
}

TEST(TraceReader, KernelLaunchResolvesFileAgainstTraceFolder) {
    write_file("saxpy.sasm", "exit\n");
    const std::string path = write_file("k.trace",
                                        "# accelsim-trace 1\n"
                                        "kernel k1 file=saxpy.sasm grid=80 block=16x16 args=a,b,3\n"
                                        "kernel k2 file=./saxpy.sasm grid=2x3x4 block=32\n");
    const std::vector<Op> ops = read_trace(path, DType::fp32);
    ASSERT_EQ(ops.size(), 2u);
    const std::string expected =
        (std::filesystem::path(path).parent_path() / "saxpy.sasm").string();
    EXPECT_EQ(ops[0].kernel.file, expected);
    EXPECT_EQ(ops[1].kernel.file, expected);
    EXPECT_EQ(ops[0].kernel.grid[0], 80);
    EXPECT_EQ(ops[0].kernel.grid[1], 1);
    EXPECT_EQ(ops[0].kernel.block[0], 16);
    EXPECT_EQ(ops[0].kernel.block[1], 16);
    EXPECT_EQ(ops[0].kernel.block[2], 1);
    EXPECT_EQ(ops[0].kernel.args, (std::vector<std::string>{"a", "b", "3"}));
    EXPECT_EQ(ops[1].kernel.grid[2], 4);
    EXPECT_TRUE(ops[1].kernel.args.empty());
    EXPECT_EQ(ops[0].macs(), 0);
}

TEST(TraceReader, TraceFormatNames) {
    EXPECT_EQ(parse_trace_format("auto"), TraceFormat::automatic);
    EXPECT_EQ(parse_trace_format("accelsim"), TraceFormat::accelsim);
    EXPECT_EQ(parse_trace_format("scalesim"), TraceFormat::scalesim);
    EXPECT_EQ(parse_trace_format("onnx"), TraceFormat::onnx);
    EXPECT_EQ(parse_trace_format("pytorch"), TraceFormat::pytorch);
    try {
        parse_trace_format("scalsim");
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(),
                     "--trace-format: unknown trace format 'scalsim' (did you mean 'scalesim'?) "
                     "(valid: auto, accelsim, scalesim, onnx, pytorch)");
    }
}

TEST(TraceReader, ForcedFormatOverridesExtension) {
    // A .txt file read as SCALE-Sim because the caller says so.
    const std::string path = write_file("topo.txt", "Layer, M, N, K,\nfc, 2, 3, 4,\n");
    const std::vector<Op> ops = read_trace(path, DType::bf16, TraceFormat::scalesim);
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_EQ(ops[0].gemm, (GemmShape{1, 2, 3, 4}));
}

// ---- error cases: each gives exactly one "FILE:LINE: message" -------------------------------

const char* kHeader = "# accelsim-trace 1\n";

std::string with_header(const std::string& body) {
    return kHeader + body;
}

TEST(TraceReaderErrors, UnknownOpKindSuggestsNearest) {
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n=1 k=1\nmatmull b m=1 n=1 k=1\n")),
              "e.trace:3: unknown op kind 'matmull' (did you mean 'matmul'?)");
    EXPECT_EQ(read_error("e.trace", with_header("layernrom a rows=1 cols=1\n")),
              "e.trace:2: unknown op kind 'layernrom' (did you mean 'layernorm'?)");
    // Nothing close: no suggestion.
    EXPECT_EQ(read_error("e.trace", with_header("lstm l n=1\n")),
              "e.trace:2: unknown op kind 'lstm'");
}

TEST(TraceReaderErrors, UnknownKeySuggestsNearest) {
    EXPECT_EQ(read_error("e.trace", with_header("conv2d c n=1 h=8 w=8 c=1 k=1 r=1 s=1 strdie=2\n")),
              "e.trace:2: conv2d: unknown key 'strdie' (did you mean 'stride'?)");
    EXPECT_EQ(read_error("e.trace", with_header("softmax s rows=2 colz=3\n")),
              "e.trace:2: softmax: unknown key 'colz' (did you mean 'cols'?)");
    // A key valid for another op kind is still unknown here.
    EXPECT_EQ(read_error("e.trace", with_header("matmul a b=2 m=1 n=1 k=1\n")),
              "e.trace:2: matmul: unknown key 'b'");  // no hint for a one-letter key
}

TEST(TraceReaderErrors, DuplicateAndMissingKeys) {
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n=2 m=3 k=1\n")),
              "e.trace:2: matmul: duplicate key 'm'");
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n=2\n")),
              "e.trace:2: matmul: missing required key 'k'");
    EXPECT_EQ(read_error("e.trace", with_header("bmm a m=1 n=2 k=3\n")),
              "e.trace:2: bmm: missing required key 'b'");
    EXPECT_EQ(read_error("e.trace", with_header("kernel k grid=1 block=1\n")),
              "e.trace:2: kernel: missing required key 'file'");
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n= k=1\n")),
              "e.trace:2: matmul: missing value for key 'n'");
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n=2 k=3 bf16\n")),
              "e.trace:2: matmul: expected key=value, got 'bf16'");
}

TEST(TraceReaderErrors, BadNumbers) {
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n=2 k=1.5\n")),
              "e.trace:2: matmul: k=1.5 is not an integer");
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=x n=2 k=1\n")),
              "e.trace:2: matmul: m=x is not an integer");
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=0 n=2 k=1\n")),
              "e.trace:2: matmul: m=0 must be a positive integer");
    EXPECT_EQ(read_error("e.trace", with_header("bmm a b=-4 m=1 n=2 k=1\n")),
              "e.trace:2: bmm: b=-4 must be a positive integer");
    EXPECT_EQ(read_error("e.trace", with_header("gelu g n=99999999999999999999\n")),
              "e.trace:2: gelu: n=99999999999999999999 does not fit in a 64-bit integer");
    EXPECT_EQ(read_error("e.trace", with_header("conv2d c n=1 h=8 w=8 c=1 k=1 r=1 s=1 pad=-1\n")),
              "e.trace:2: conv2d: pad=-1 must be >= 0");
    EXPECT_EQ(read_error("e.trace", with_header("kernel k file=x grid=4x0 block=1\n")),
              "e.trace:2: kernel: kernel file 'x' not found (looked for '" +
                  (test::temp_folder() / "x").string() + "')");
}

TEST(TraceReaderErrors, GridAndBlockSyntax) {
    write_file("k.sasm", "exit\n");
    EXPECT_EQ(read_error("e.trace", with_header("kernel k file=k.sasm grid=4x0 block=1\n")),
              "e.trace:2: kernel: grid=4x0 must be X, XxY or XxYxZ with positive integers");
    EXPECT_EQ(read_error("e.trace", with_header("kernel k file=k.sasm grid=1 block=2x2x2x2\n")),
              "e.trace:2: kernel: block=2x2x2x2 must be X, XxY or XxYxZ with positive integers");
}

TEST(TraceReaderErrors, ProductsThatOverflow64Bits) {
    // m*n = 2^32 * 2^32 = 2^64 > 2^63 - 1.
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=4294967296 n=4294967296 k=1\n")),
              "e.trace:2: matmul: MAC count b*m*n*k overflows a 64-bit integer");
    // MACs 2^61 and FLOPs 2^62 fit, but the activation bytes 2^61 * 4 = 2^63 do not.
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=2305843009213693952 n=1 k=1\n")),
              "e.trace:2: matmul: input bytes b*m*k*4 overflows a 64-bit integer");
    EXPECT_EQ(read_error("e.trace", with_header("softmax s rows=4294967296 cols=4294967296\n")),
              "e.trace:2: softmax: element count rows*cols overflows a 64-bit integer");
    // out 2^20 x 2^20 pixels * 2^20 filters * window 2^10: 2^70 MACs.
    EXPECT_EQ(read_error("e.trace", with_header("conv2d c n=1 h=1048576 w=1048576 c=1024 "
                                                "k=1048576 r=1 s=1\n")),
              "e.trace:2: conv2d: MAC count overflows a 64-bit integer");
    // 2^40 elements * 8 operations fits; 2^61 * 8 does not.
    EXPECT_EQ(read_error("e.trace", with_header("add a n=2305843009213693952\n")),
              "e.trace:2: add: operation count overflows a 64-bit integer");
}

TEST(TraceReaderErrors, TotalsThatOverflow64Bits) {
    // m = n = 2^30, k = 1: 2^60 MACs, 2^61 FLOPs, output 2^60 * 4 bytes = 2^62 at the widest
    // dtype: valid alone. Three such ops total 3 * 2^61 FLOPs < 2^63; the fourth reaches 2^63.
    const std::string big = " m=1073741824 n=1073741824 k=1\n";
    EXPECT_EQ(
        read_error("t.trace", with_header("matmul a" + big + "matmul b" + big + "matmul c" + big)),
        "no error");
    EXPECT_EQ(read_error("t.trace", with_header("matmul a" + big + "matmul b" + big + "matmul c" +
                                                big + "matmul d" + big)),
              "t.trace:5: matmul: the trace's total FLOP count overflows a 64-bit integer");
}

TEST(TraceReaderErrors, ConvShapeRules) {
    EXPECT_EQ(read_error("e.trace", with_header("conv2d c n=1 h=8 w=8 c=6 k=8 r=3 s=3 groups=4\n")),
              "e.trace:2: conv2d: c (6) is not divisible by groups (4)");
    EXPECT_EQ(read_error("e.trace", with_header("conv2d c n=1 h=8 w=8 c=8 k=6 r=3 s=3 groups=4\n")),
              "e.trace:2: conv2d: k (6) is not divisible by groups (4)");
    // 3 + 0 < 5: no complete window.
    EXPECT_EQ(
        read_error("e.trace", with_header("conv2d c n=1 h=3 w=8 c=1 k=1 r=5 s=3\n")),
        "e.trace:2: conv2d: output height would be < 1: input 3 + 2*pad 0 is smaller than the "
        "dilated filter extent 5");
    // dilation 3 makes a 3-wide filter span 3*(3-1)+1 = 7 > 6.
    EXPECT_EQ(
        read_error("e.trace", with_header("conv2d c n=1 h=8 w=6 c=1 k=1 r=1 s=3 dilation=3\n")),
        "e.trace:2: conv2d: output width would be < 1: input 6 + 2*pad 0 is smaller than the "
        "dilated filter extent 7");
    EXPECT_EQ(read_error("e.trace",
                         with_header("conv2d c n=1 h=8 w=8 c=1 k=1 r=1 s=1 stride=2 stride_h=1\n")),
              "e.trace:2: conv2d: give either stride or stride_h and stride_w, not both");
    EXPECT_EQ(read_error("e.trace", with_header("conv2d c n=1 h=8 w=8 c=1 k=1 r=1 s=1 pad_h=1\n")),
              "e.trace:2: conv2d: pad_h given without pad_w");
}

TEST(TraceReaderErrors, Dtype) {
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n=1 k=1 dtype=bf61\n")),
              "e.trace:2: matmul: unknown dtype 'bf61' (did you mean 'bf16'?) "
              "(valid: int8, fp16, bf16, fp32, fp8_e4m3 or fp8_e5m2)");
    // int32 is an accumulator type, not an operand type.
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n=1 k=1 dtype=int32\n")),
              "e.trace:2: matmul: unknown dtype 'int32' (did you mean 'int8'?) "
              "(valid: int8, fp16, bf16, fp32, fp8_e4m3 or fp8_e5m2)");
}

// b_dtype: B's fp8 format where it differs from A's (matmul and bmm only).
TEST(TraceReaderErrors, MixedFp8Operands) {
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n=1 k=1 dtype=bf16 b_dtype=fp8_e4m3\n")),
              "e.trace:2: matmul: b_dtype fp8_e4m3 with dtype bf16: only the fp8 formats mix "
              "(dtype=fp8_e4m3 b_dtype=fp8_e5m2, or the reverse)");
    EXPECT_EQ(read_error("e.trace", with_header("bmm a b=2 m=1 n=1 k=1 dtype=fp8_e4m3 b_dtype=int8\n")),
              "e.trace:2: bmm: b_dtype int8 with dtype fp8_e4m3: only the fp8 formats mix "
              "(dtype=fp8_e4m3 b_dtype=fp8_e5m2, or the reverse)");
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n=1 k=1 dtype=fp8_e4m3 b_dtype=fp8_e5m\n")),
              "e.trace:2: matmul: unknown b_dtype 'fp8_e5m' (did you mean 'fp8_e5m2'?) "
              "(valid: int8, fp16, bf16, fp32, fp8_e4m3 or fp8_e5m2)");
    EXPECT_EQ(read_error("e.trace", with_header("softmax s rows=2 cols=4 dtype=fp8_e4m3 b_dtype=fp8_e5m2\n")),
              "e.trace:2: softmax: unknown key 'b_dtype' (did you mean 'dtype'?)");
}

TEST(TraceReader, MixedFp8OperandsRoundTrip) {
    const std::string path = write_file("mixed.trace", with_header("matmul dgrad m=64 n=32 k=128 dtype=fp8_e5m2 b_dtype=fp8_e4m3\n"
                                                               "bmm wgrad b=2 m=16 n=16 k=64 dtype=fp8_e4m3 b_dtype=fp8_e5m2\n"
                                                               "matmul same m=8 n=8 k=32 dtype=fp8_e4m3 b_dtype=fp8_e4m3\n"));
    const std::vector<Op> ops = read_trace(path, DType::bf16);
    ASSERT_EQ(ops.size(), 3u);
    EXPECT_EQ(ops[0].dtype, DType::fp8_e5m2);
    ASSERT_TRUE(ops[0].b_dtype.has_value());
    EXPECT_EQ(*ops[0].b_dtype, DType::fp8_e4m3);
    EXPECT_EQ(ops[1].operand_b_dtype(), DType::fp8_e5m2);
    EXPECT_FALSE(ops[2].b_dtype.has_value());  // the same format: nothing mixed
    // One byte per element either way: A 64 x 128, B 128 x 32; fp32 out.
    EXPECT_EQ(ops[0].input_bytes(), 64 * 128);
    EXPECT_EQ(ops[0].weight_bytes(), 128 * 32);
    std::ostringstream written;
    write_trace(written, ops, "", std::nullopt);
    EXPECT_NE(written.str().find("dtype=fp8_e5m2 b_dtype=fp8_e4m3"), std::string::npos) << written.str();
    const std::string again = write_file("mixed_again.trace", written.str());
    const std::vector<Op> back = read_trace(again, DType::bf16);
    ASSERT_EQ(back.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(back[i].dtype, ops[i].dtype);
        EXPECT_EQ(back[i].b_dtype, ops[i].b_dtype);
    }
}

TEST(TraceReaderErrors, Names) {
    EXPECT_EQ(read_error("e.trace", with_header("matmul a m=1 n=1 k=1\n\nrelu a n=4\n")),
              "e.trace:4: relu: duplicate op name 'a' (first used on line 2)");
    EXPECT_EQ(read_error("e.trace", with_header("matmul m=1 n=1 k=1\n")),
              "e.trace:2: matmul: missing op name before 'm=1' (lines are 'op-kind name "
              "key=value...')");
    EXPECT_EQ(read_error("e.trace", with_header("relu\n")),
              "e.trace:2: relu: missing op name (lines are 'op-kind name key=value...')");
}

TEST(TraceReaderErrors, HeaderAndEmptyTrace) {
    EXPECT_EQ(read_error("e.trace", "matmul a m=1 n=1 k=1\n"),
              "e.trace:1: missing header: the first line of a trace must be '# accelsim-trace 1'");
    EXPECT_EQ(read_error("e.trace", "\n\n# some other comment\n# accelsim-trace 1\n"),
              "e.trace:3: missing header: the first line of a trace must be '# accelsim-trace 1'");
    EXPECT_EQ(read_error("e.trace", "# accelsim-trace 2\nrelu r n=1\n"),
              "e.trace:1: unsupported trace format version '2' (this accelsim reads version 1)");
    EXPECT_EQ(read_error("e.trace", ""),
              "e.trace:1: missing header: the first line of a trace must be '# accelsim-trace 1'");
    EXPECT_EQ(read_error("e.trace", "\n# accelsim-trace 1\n# only comments\n\n"),
              "e.trace:2: empty trace: no operators after the header");
}

TEST(TraceReaderErrors, MissingOrUnreadableFile) {
    const std::string missing = (test::temp_folder() / "nope.trace").string();
    try {
        read_trace(missing, DType::bf16);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), missing + ": cannot open: No such file or directory");
    }
    const std::string folder = test::temp_folder().string();
    try {
        read_trace(folder, DType::bf16);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), folder + ": cannot open: is a directory");
    }
    try {
        read_trace("/dev/zero", DType::bf16);  // would never end
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "/dev/zero: cannot open: not a regular file");
    }
}

TEST(TraceReaderText, AByteOrderMarkAndLoneCarriageReturnLineEndsAreRead) {
    // A UTF-8 BOM before the header (Windows editors), and classic Mac OS line ends ("\r" alone).
    const auto bom = read_trace(test::write_file("bom.trace", "\xEF\xBB\xBF# accelsim-trace 1\nmatmul a m=8 n=8 k=8\n"),
                                DType::bf16);
    ASSERT_EQ(bom.size(), 1u);
    EXPECT_EQ(bom[0].gemm.m, 8);
    const auto cr = read_trace(test::write_file("cr.trace", "# accelsim-trace 1\rmatmul a m=8 n=8 k=8\rrelu b n=4\r"),
                               DType::bf16);
    ASSERT_EQ(cr.size(), 2u);
    EXPECT_EQ(cr[1].line, 3);  // line numbers count lone "\r" ends too
}

TEST(TraceReaderErrors, BytesThatAreNotUtf8AreRefusedWithTheirColumn) {
    EXPECT_EQ(test::read_error("x.trace", "# accelsim-trace 1\nmatmul a\xFF m=8 n=8 k=8\n"),
              "x.trace:2: byte 0xFF at column 9 is not valid UTF-8 (op names and values must be UTF-8 text)");
    // An overlong encoding of '/' (0xC0 0xAF) and a UTF-16 surrogate (0xED 0xA0 0x80) are not UTF-8.
    EXPECT_NE(test::read_error("x.trace", "# accelsim-trace 1\nrelu a\xC0\xAF n=4\n").find("byte 0xC0 at column 7"),
              std::string::npos);
    EXPECT_NE(test::read_error("x.trace", "# accelsim-trace 1\nrelu \xED\xA0\x80 n=4\n").find("byte 0xED"),
              std::string::npos);
    // Valid multi-byte names and any bytes in comments are fine.
    EXPECT_EQ(test::read_error("x.trace", "# accelsim-trace 1\nrelu r\xC3\xA9lu_\xE2\x82\xAC n=4  # \xFF\n"),
              "no error");
}

TEST(TraceReaderErrors, AKernelFileThatIsADirectoryIsNamedAsSuch) {
    std::filesystem::create_directories(test::temp_folder() / "kdir");
    const std::string e = test::read_error("x.trace", "# accelsim-trace 1\nkernel k file=kdir grid=1 block=32\n");
    EXPECT_EQ(e.rfind("x.trace:2: kernel: kernel file 'kdir' is a directory, not a file (looked for ", 0), 0u) << e;
}

}  // namespace
}  // namespace accelsim::test_trace_reader
