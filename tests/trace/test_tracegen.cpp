// Trace generators (BERT, ResNet-50, GPT-2), the trace writer's round trip and the
// `accelsim trace` command. Totals are worked out by hand from the published architectures.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "models/common/op_table.h"
#include "sim/trace/trace_reader.h"
#include "sim/tracegen/models.h"
#include "sim/tracegen/trace_command.h"
#include "sim/tracegen/trace_writer.h"
#include "trace_test_util.h"

namespace accelsim::test_tracegen {
namespace {

std::int64_t total_macs(const std::vector<Op>& ops) {
    std::int64_t total = 0;
    for (const Op& op : ops) total += op.macs();
    return total;
}

const Op& find_op(const std::vector<Op>& ops, const std::string& name) {
    for (const Op& op : ops)
        if (op.name == name) return op;
    throw std::runtime_error("no op named " + name);
}

// Every field a trace line can carry (file and line are where it was read, not what it is).
void expect_same_ops(const std::vector<Op>& a, const std::vector<Op>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        SCOPED_TRACE(a[i].name);
        EXPECT_EQ(a[i].kind, b[i].kind);
        EXPECT_EQ(a[i].name, b[i].name);
        // A kernel op has no dtype (its program decides): the writer omits it.
        if (op_info(a[i].kind).has_dtype) {
            EXPECT_EQ(a[i].dtype, b[i].dtype);
        }
        EXPECT_EQ(a[i].gemm, b[i].gemm);
        const Conv2dShape &x = a[i].conv, &y = b[i].conv;
        EXPECT_EQ(
            (std::vector<std::int64_t>{x.n, x.h, x.w, x.c, x.k, x.r, x.s, x.stride_h, x.stride_w,
                                       x.pad_h, x.pad_w, x.dilation_h, x.dilation_w, x.groups}),
            (std::vector<std::int64_t>{y.n, y.h, y.w, y.c, y.k, y.r, y.s, y.stride_h, y.stride_w,
                                       y.pad_h, y.pad_w, y.dilation_h, y.dilation_w, y.groups}));
        EXPECT_EQ(a[i].rows, b[i].rows);
        EXPECT_EQ(a[i].cols, b[i].cols);
        EXPECT_EQ(a[i].elements, b[i].elements);
        EXPECT_EQ(a[i].kernel.file, b[i].kernel.file);
        for (int d = 0; d < 3; ++d) {
            EXPECT_EQ(a[i].kernel.grid[d], b[i].kernel.grid[d]);
            EXPECT_EQ(a[i].kernel.block[d], b[i].kernel.block[d]);
        }
        EXPECT_EQ(a[i].kernel.args, b[i].kernel.args);
    }
}

std::vector<Op> round_trip(const std::vector<Op>& ops, std::optional<DType> implicit,
                           DType read_default) {
    std::ostringstream text;
    write_trace(text, ops, "round trip\n\nsecond paragraph", implicit);
    return read_trace(test::write_file("rt.trace", text.str()), read_default);
}

TEST(BertGenerator, BaseSeq128Has156OpsAndExactMacs) {
    const std::vector<Op> ops = bert_ops(BertParams{});
    // 12 layers * 13 ops.
    EXPECT_EQ(ops.size(), 156u);
    // Per layer, T = 128 tokens, d = 768, 12 heads of 64:
    //   QKV 128*2304*768 = 226,492,416; scores and context 12*128*128*64 = 12,582,912 each;
    //   output projection 128*768*768 = 75,497,472; FFN1 and FFN2 128*3072*768 = 301,989,888 each;
    //   sum 931,135,488 (= 12*T*d^2 + 2*T^2*d); * 12 layers = 11,173,625,856.
    EXPECT_EQ(total_macs(ops), 11173625856LL);
}

TEST(BertGenerator, LayerOrderNamesAndShapes) {
    const std::vector<Op> ops = bert_ops(BertParams{});
    const std::vector<std::string> names = {
        "L0.attn.qkv",     "L0.attn.scores", "L0.attn.scale_mask", "L0.attn.softmax",
        "L0.attn.context", "L0.attn.proj",   "L0.resid1",          "L0.ln1",
        "L0.ffn.fc1",      "L0.ffn.act",     "L0.ffn.fc2",         "L0.resid2",
        "L0.ln2"};
    const std::vector<OpKind> kinds = {
        OpKind::matmul, OpKind::bmm, OpKind::mul,       OpKind::softmax, OpKind::bmm,
        OpKind::matmul, OpKind::add, OpKind::layernorm, OpKind::matmul,  OpKind::gelu,
        OpKind::matmul, OpKind::add, OpKind::layernorm};
    for (std::size_t i = 0; i < names.size(); ++i) {
        EXPECT_EQ(ops[i].name, names[i]);
        EXPECT_EQ(ops[i].kind, kinds[i]) << names[i];
    }
    EXPECT_EQ(ops[13].name, "L1.attn.qkv");
    EXPECT_EQ(ops[155].name, "L11.ln2");
    EXPECT_EQ(ops[0].gemm, (GemmShape{1, 128, 2304, 768}));
    EXPECT_EQ(ops[1].gemm, (GemmShape{12, 128, 128, 64}));
    EXPECT_EQ(ops[2].elements, 12 * 128 * 128);
    EXPECT_EQ(ops[3].rows, 12 * 128);
    EXPECT_EQ(ops[3].cols, 128);
    EXPECT_EQ(ops[4].gemm, (GemmShape{12, 128, 64, 128}));
    EXPECT_EQ(ops[5].gemm, (GemmShape{1, 128, 768, 768}));
    EXPECT_EQ(ops[6].elements, 128 * 768);
    EXPECT_EQ(ops[7].rows, 128);
    EXPECT_EQ(ops[7].cols, 768);
    EXPECT_EQ(ops[8].gemm, (GemmShape{1, 128, 3072, 768}));
    EXPECT_EQ(ops[9].elements, 128 * 3072);
    EXPECT_EQ(ops[10].gemm, (GemmShape{1, 128, 768, 3072}));
    for (const Op& op : ops) EXPECT_EQ(op.dtype, kGeneratedDtype);
}

TEST(BertGenerator, LargeAndBatchedTotals) {
    BertParams large;
    large.size = BertSize::large;
    const std::vector<Op> l = bert_ops(large);
    EXPECT_EQ(l.size(), 24u * 13);
    // d = 1024, 16 heads, T = 128: 12*T*d^2 + 2*T^2*d = 1,610,612,736 + 33,554,432
    // = 1,644,167,168 per layer; * 24 = 39,460,012,032.
    EXPECT_EQ(total_macs(l), 39460012032LL);

    BertParams batched;
    batched.seq = 512;
    batched.batch = 8;
    const std::vector<Op> b = bert_ops(batched);
    // Per layer and sequence, T = 512: 12*512*768^2 + 2*512^2*768 = 3,623,878,656 + 402,653,184
    // = 4,026,531,840; * 8 sequences * 12 layers = 386,547,056,640.
    EXPECT_EQ(total_macs(b), 386547056640LL);
    EXPECT_EQ(find_op(b, "L0.attn.qkv").gemm, (GemmShape{1, 4096, 2304, 768}));
    EXPECT_EQ(find_op(b, "L0.attn.scores").gemm, (GemmShape{96, 512, 512, 64}));
    EXPECT_EQ(find_op(b, "L0.attn.softmax").rows, 96 * 512);

    BertParams two;
    two.layers = 2;
    EXPECT_EQ(bert_ops(two).size(), 26u);
}

TEST(BertGenerator, TrainingAddsDxAndDwForEveryGemm) {
    BertParams p;
    p.training = true;
    const std::vector<Op> ops = bert_ops(p);
    // 6 GEMMs per layer * 12 layers = 72 forward GEMMs, 2 backward GEMMs each.
    EXPECT_EQ(ops.size(), 156u + 144u);
    // dX and dW have the forward GEMM's MAC count each: 3 * 11,173,625,856.
    EXPECT_EQ(total_macs(ops), 3 * 11173625856LL);
    // Backward runs in reverse: the last forward GEMM (L11.ffn.fc2, m=128 n=768 k=3072) first.
    EXPECT_EQ(ops[156].name, "L11.ffn.fc2.dx");
    EXPECT_EQ(ops[156].gemm, (GemmShape{1, 128, 3072, 768}));  // dX[128,3072] = dY[128,768] W^T
    EXPECT_EQ(ops[157].name, "L11.ffn.fc2.dw");
    EXPECT_EQ(ops[157].gemm, (GemmShape{1, 3072, 768, 128}));  // dW[3072,768] = X^T dY
    const Op& da = find_op(ops, "L0.attn.scores.da");          // dQ = dS * K: [128,64] per head
    EXPECT_EQ(da.gemm, (GemmShape{12, 128, 64, 128}));
    const Op& db = find_op(ops, "L0.attn.scores.db");  // dK^T = Q^T * dS: [64,128] per head
    EXPECT_EQ(db.gemm, (GemmShape{12, 64, 128, 128}));
    EXPECT_EQ(ops.back().name, "L0.attn.qkv.dw");
}

TEST(ResNet50Generator, TorchvisionV15Layout) {
    const std::vector<Op> ops = resnet50_ops(ResNet50Params{});
    // conv1 + relu + max pool, 16 bottlenecks of 7 ops (3 convs, 3 relus, add) + 4 downsample
    // convs, global average pool, fc.
    EXPECT_EQ(ops.size(), 3u + 16 * 7 + 4 + 2);
    // Hand sum (MACs = out pixels * out channels * in channels * r * s):
    //   conv1 112^2*64*3*49 = 118,013,952
    //   layer1: block0 56^2*(64*64 + 64*64*9 + 256*64 + 256*64) = 231,211,008;
    //           blocks 1-2 56^2*(64*256 + 64*64*9 + 256*64) = 218,365,952 each  -> 667,942,912
    //   layer2: block0 56^2*128*256 + 28^2*(128*128*9 + 512*128 + 512*256) = 372,506,624;
    //           3 more blocks 218,365,952 each (28^2*(128*512 + 128*128*9 + 512*128)) ->
    //           1,027,604,480
    //   layer3: block0 372,506,624 + 5 * 218,365,952 -> 1,464,336,384
    //   layer4: block0 372,506,624 + 2 * 218,365,952 -> 809,238,528
    //   fc 2048*1000 = 2,048,000
    //   total 4,089,184,256 (torchvision lists 4.09 GFLOPS, i.e. multiply-adds, for ResNet-50).
    EXPECT_EQ(total_macs(ops), 4089184256LL);

    const Op& conv1 = find_op(ops, "conv1");
    EXPECT_EQ(conv1.conv.out_h(), 112);
    // v1.5: layer2's first block keeps 56x56 through the 1x1 and strides on the 3x3.
    const Op& l2c1 = find_op(ops, "layer2.0.conv1");
    EXPECT_EQ(l2c1.conv.h, 56);
    EXPECT_EQ(l2c1.conv.stride_h, 1);
    const Op& l2c2 = find_op(ops, "layer2.0.conv2");
    EXPECT_EQ(l2c2.conv.stride_h, 2);
    EXPECT_EQ(l2c2.conv.out_h(), 28);
    const Op& ds = find_op(ops, "layer2.0.downsample");
    EXPECT_EQ(ds.conv.c, 256);
    EXPECT_EQ(ds.conv.k, 512);
    EXPECT_EQ(ds.conv.out_h(), 28);
    EXPECT_EQ(find_op(ops, "layer4.2.add").elements, 7 * 7 * 2048);
    EXPECT_EQ(find_op(ops, "fc").gemm, (GemmShape{1, 1, 1000, 2048}));
    // The max pool 3x3/2 pad 1 takes conv1's 112x112x64 to layer1's 56x56; the global average pool
    // takes layer4's 7x7x2048 to fc's 2048.
    const Op& maxpool = find_op(ops, "maxpool");
    EXPECT_EQ(ops[2].name, "maxpool");
    EXPECT_EQ(maxpool.pool.h, 112);
    EXPECT_EQ(maxpool.pool.out_h(), find_op(ops, "layer1.0.conv1").conv.h);
    EXPECT_EQ(maxpool.pool.mode, PoolMode::max);
    const Op& avgpool = find_op(ops, "avgpool");
    EXPECT_TRUE(avgpool.pool.global);
    EXPECT_EQ(avgpool.pool.mode, PoolMode::avg);
    EXPECT_EQ(avgpool.pool.h, 7);
    EXPECT_EQ(avgpool.pool.c, 2048);
    EXPECT_EQ(avgpool.output_bytes() / bytes_of(avgpool.dtype), 2048);

    ResNet50Params four;
    four.batch = 4;
    EXPECT_EQ(total_macs(resnet50_ops(four)), 4 * 4089184256LL);
}

TEST(Gpt2Generator, DecodeSmall) {
    Gpt2Params p;
    p.phase = Gpt2Phase::decode;
    p.seq = 512;
    const std::vector<Op> ops = gpt2_ops(p);
    EXPECT_EQ(ops.size(), 12u * 13 + 2);
    // One token, d = 768, 12 layers, cache 512 + itself = 513 keys, vocabulary 50,257:
    //   per layer 12*d^2 (QKV 3d^2, proj d^2, FFN 8d^2) = 7,077,888
    //             + attention 2*d*513 = 787,968                       -> 7,865,856
    //   12 layers 94,390,272 + LM head 50,257*768 = 38,597,376 -> 132,987,648
    // (12*12*d^2 + V*d = 123.5M: GPT-2 small's published 124M parameters less position
    // embeddings, biases and layer norms.)
    EXPECT_EQ(total_macs(ops), 132987648LL);
    EXPECT_EQ(find_op(ops, "L0.attn.qkv").gemm, (GemmShape{1, 1, 2304, 768}));
    EXPECT_EQ(find_op(ops, "L0.attn.scores").gemm, (GemmShape{12, 1, 513, 64}));
    EXPECT_EQ(find_op(ops, "L0.attn.context").gemm, (GemmShape{12, 1, 64, 513}));
    EXPECT_EQ(find_op(ops, "L0.attn.softmax").cols, 513);
    EXPECT_EQ(find_op(ops, "lm_head").gemm, (GemmShape{1, 1, 50257, 768}));
    EXPECT_EQ(ops[0].name, "L0.ln1");
    EXPECT_EQ(ops.back().name, "lm_head");
}

TEST(Gpt2Generator, PrefillAndSizes) {
    Gpt2Params p;
    p.seq = 1024;
    // Prefill, T = 1024: per layer 12*T*d^2 + 2*T^2*d = 7,247,757,312 + 1,610,612,736
    // = 8,858,370,048; * 12 = 106,300,440,576; LM head 1024*50257*768 = 39,523,713,024;
    // total 145,824,153,600.
    EXPECT_EQ(total_macs(gpt2_ops(p)), 145824153600LL);

    Gpt2Params xl;
    xl.size = Gpt2Size::xl;
    xl.phase = Gpt2Phase::decode;
    xl.seq = 99;
    xl.batch = 2;
    const std::vector<Op> ops = gpt2_ops(xl);
    EXPECT_EQ(ops.size(), 48u * 13 + 2);
    // 25 heads of 64 over d = 1600, two sequences.
    EXPECT_EQ(find_op(ops, "L47.attn.scores").gemm, (GemmShape{50, 1, 100, 64}));
    EXPECT_EQ(find_op(ops, "L0.ffn.fc1").gemm, (GemmShape{1, 2, 6400, 1600}));
}

TEST(Gpt2Generator, ContextLimit) {
    Gpt2Params p;
    p.phase = Gpt2Phase::decode;
    p.seq = 1023;  // 1023 cached + 1 new = 1024 positions: allowed
    EXPECT_EQ(find_op(gpt2_ops(p), "L0.attn.scores").gemm.n, 1024);
    p.seq = 1024;
    try {
        gpt2_ops(p);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(),
                     "gpt2: --seq 1024 plus the new token exceeds GPT-2's 1024 positions");
    }
}

TEST(Generators, OverflowingSizesAreInputErrors) {
    BertParams p;
    p.batch = 1LL << 60;  // 2^60 sequences * 128 tokens overflows
    try {
        bert_ops(p);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "bert: the requested size overflows a 64-bit integer");
    }
    p.batch = 1;
    p.seq = 513;
    try {
        bert_ops(p);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "bert: --seq 513 exceeds BERT's 512 positions");
    }
    BertParams many;
    many.layers = 10001;
    try {
        bert_ops(many);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "bert: --layers 10001 exceeds the limit of 10000");
    }
    ResNet50Params r;
    r.batch = 1LL << 50;
    EXPECT_THROW(resnet50_ops(r), InputError);
}

TEST(TraceWriter, GeneratedTracesRoundTrip) {
    BertParams bert;
    bert.training = true;
    bert.layers = 2;
    const std::vector<Op> b = bert_ops(bert);
    expect_same_ops(b, round_trip(b, kGeneratedDtype, kGeneratedDtype));
    const std::vector<Op> r = resnet50_ops(ResNet50Params{});
    expect_same_ops(r, round_trip(r, kGeneratedDtype, kGeneratedDtype));
    Gpt2Params g;
    g.phase = Gpt2Phase::decode;
    const std::vector<Op> d = gpt2_ops(g);
    expect_same_ops(d, round_trip(d, kGeneratedDtype, kGeneratedDtype));
}

TEST(TraceWriter, EveryFieldAndDtypeRoundTrips) {
    std::vector<Op> ops(6);
    ops[0].kind = OpKind::conv2d;
    ops[0].name = "asym";
    ops[0].dtype = DType::int8;
    ops[0].conv = Conv2dShape{2, 10, 12, 4, 6, 3, 5, 1, 2, 0, 2, 2, 1, 2};
    ops[1].kind = OpKind::bmm;
    ops[1].name = "b";
    ops[1].dtype = DType::fp32;
    ops[1].gemm = GemmShape{3, 4, 5, 6};
    ops[2].kind = OpKind::layernorm;
    ops[2].name = "ln";
    ops[2].dtype = DType::fp16;
    ops[2].rows = 7;
    ops[2].cols = 9;
    ops[3].kind = OpKind::kernel;
    ops[3].name = "k";
    ops[3].kernel.file = test::write_file("saxpy.sasm", "exit\n");  // absolute: valid anywhere
    ops[3].kernel.grid[0] = 80;
    ops[3].kernel.block[0] = 16;
    ops[3].kernel.block[1] = 8;
    ops[3].kernel.args = {"x", "y", "2.5"};
    ops[4].kind = OpKind::conv2d;
    ops[4].name = "depthwise";
    ops[4].conv = Conv2dShape{1, 9, 9, 8, 16, 3, 3, 2, 2, 1, 1, 1, 1, 8};
    ops[5].kind = OpKind::mul;
    ops[5].name = "m";
    ops[5].elements = 11;
    // All dtypes explicit: the read default must not matter.
    expect_same_ops(ops, round_trip(ops, std::nullopt, DType::int8));
    // Implicit bf16: the bf16 ops take whatever default the reader is given.
    std::vector<Op> read = round_trip(ops, DType::bf16, DType::fp32);
    EXPECT_EQ(read[4].dtype, DType::fp32);
    EXPECT_EQ(read[0].dtype, DType::int8);
}

TEST(TraceWriter, FormatOfLines) {
    std::vector<Op> ops(2);
    ops[0].name = "qkv";
    ops[0].gemm = GemmShape{1, 128, 2304, 768};
    ops[1].kind = OpKind::softmax;
    ops[1].name = "L0.attn.softmax";
    ops[1].rows = 1536;
    ops[1].cols = 128;
    ops[1].dtype = DType::fp32;
    std::ostringstream out;
    write_trace(out, ops, "hello", DType::bf16);
    EXPECT_EQ(out.str(),
              "# accelsim-trace 1\n"
              "# hello\n"
              "matmul    qkv             m=128 n=2304 k=768\n"
              "softmax   L0.attn.softmax rows=1536 cols=128 dtype=fp32\n");
}

TEST(TraceCommand, BertMatchesGeneratorAndHeader) {
    std::ostringstream out, err;
    EXPECT_EQ(run_trace_command({"bert", "--size", "base", "--seq", "128"}, out, err), 0);
    EXPECT_EQ(err.str(), "");
    const std::string text = out.str();
    EXPECT_EQ(text.rfind("# accelsim-trace 1\n"
                         "# generated by: accelsim trace bert --size base --seq 128 --batch 1 "
                         "--layers 12\n",
                         0),
              0u);
    EXPECT_NE(text.find("# 156 ops, 11173625856 MACs.\n"), std::string::npos);
    EXPECT_EQ(text.find(" dtype="), std::string::npos);  // on no op line
    expect_same_ops(bert_ops(BertParams{}),
                    read_trace(test::write_file("b.trace", text), DType::bf16));
}

TEST(TraceCommand, OutputFileAndOtherModels) {
    const std::string path = (test::temp_folder() / "r.trace").string();
    std::ostringstream out, err;
    EXPECT_EQ(run_trace_command({"resnet50", "--batch=2", "-o", path}, out, err), 0);
    EXPECT_EQ(out.str(), "");
    EXPECT_EQ(total_macs(read_trace(path, DType::bf16)), 2 * 4089184256LL);
    std::ostringstream out2, err2;
    EXPECT_EQ(run_trace_command({"gpt2", "--phase", "decode", "--seq", "512"}, out2, err2), 0);
    EXPECT_EQ(total_macs(read_trace(test::write_file("g.trace", out2.str()), DType::bf16)),
              132987648LL);
    std::ostringstream out3, err3;
    EXPECT_EQ(run_trace_command({"bert", "--training", "--layers", "1"}, out3, err3), 0);
    EXPECT_EQ(read_trace(test::write_file("t.trace", out3.str()), DType::bf16).size(), 13u + 12u);
}

// Runs the command and returns "exit code: stderr".
std::string usage_error(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    const int code = run_trace_command(args, out, err);
    return std::to_string(code) + ": " + err.str();
}

TEST(TraceCommand, BadUsageGivesOneMessageAndExit2) {
    EXPECT_EQ(usage_error({}),
              "2: accelsim trace: missing model\nusage: accelsim trace MODEL [options] [-o FILE]\n"
              "models: bert, resnet50, gpt2 ('accelsim trace MODEL --help' lists the options)\n");
    EXPECT_EQ(usage_error({"bret"}),
              "2: accelsim trace: unknown model 'bret' (did you mean 'bert'?) (models: bert, "
              "resnet50, gpt2)\n");
    EXPECT_EQ(usage_error({"bert", "--sise", "base"}),
              "2: accelsim trace bert: unknown option '--sise' (did you mean '--size'?)\n");
    EXPECT_EQ(usage_error({"bert", "--size", "huge"}),
              "2: accelsim trace bert: --size must be one of base|large, got 'huge'\n");
    EXPECT_EQ(usage_error({"gpt2", "--phase", "decod"}),
              "2: accelsim trace gpt2: --phase must be one of prefill|decode, got 'decod' (did you "
              "mean 'decode'?)\n");
    EXPECT_EQ(usage_error({"bert", "--seq", "0"}),
              "2: accelsim trace bert: --seq must be a positive integer, got '0'\n");
    EXPECT_EQ(usage_error({"bert", "--seq", "12x"}),
              "2: accelsim trace bert: --seq must be a positive integer, got '12x'\n");
    EXPECT_EQ(usage_error({"resnet50", "--training"}),
              "2: accelsim trace resnet50: unknown option '--training'\n");
    EXPECT_EQ(usage_error({"gpt2", "--phase", "decode", "--seq", "1024"}),
              "2: accelsim trace: gpt2: --seq 1024 plus the new token exceeds GPT-2's 1024 "
              "positions\n");
    // 2^40 tokens: the largest op (FFN1, 2^40*3072*768 MACs = 2^61.2, FLOPs 2^62.2) fits; the
    // 12-layer sum (2^40 * 84,934,656 MACs = 2^66.3, FLOPs twice that) does not.
    EXPECT_EQ(usage_error({"bert", "--seq", "512", "--batch", "2147483648"}),
              "2: accelsim trace: the trace's total FLOP count overflows a 64-bit integer\n");
    EXPECT_EQ(usage_error({"bert", "-o", (test::temp_folder() / "no/such/dir/x.trace").string()}),
              "2: accelsim trace: -o " + (test::temp_folder() / "no/such/dir/x.trace").string() +
                  ": cannot open for writing\n");
}

TEST(TraceCommand, Help) {
    std::ostringstream out, err;
    EXPECT_EQ(run_trace_command({"gpt2", "--help"}, out, err), 0);
    EXPECT_NE(out.str().find("--phase"), std::string::npos);
    EXPECT_NE(out.str().find("prefill|decode"), std::string::npos);
    std::ostringstream out2, err2;
    EXPECT_EQ(run_trace_command({"--help"}, out2, err2), 0);
    EXPECT_NE(out2.str().find("models: bert, resnet50, gpt2"), std::string::npos);
}

}  // namespace
}  // namespace accelsim::test_tracegen
