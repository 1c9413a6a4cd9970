// The fused-graph compiler of GPU-like chips (models/gpu/fusion.h, fused_kernels.h, the GEMM
// epilogue of gemm.h): the grouping rules on BERT's op sequence by hand, every fused kernel against
// Eigen or a double-precision reference (odd shapes, fp16 and bf16, every GEMM tile, split-K), the
// traffic a fused kernel saves (no intermediate tensor read or written, counted in sectors), and
// timing-only runs equal to full ones.
#include "models/gpu/fusion.h"

#include <gtest/gtest.h>

#include "models/gpu/fused_kernels.h"
#include "models/gpu/gemm.h"
#include "models/simt/simt_gpu.h"
#include "tests/gpu/a100_like.h"

namespace accelsim::gpu::fusion_test {
namespace {

using test::a100_like;

LoweringTarget target_of(int sms, bool real) {
    LoweringTarget t;
    t.sms = sms;
    t.sm = a100_like(sms).sm;
    t.seed = 11;
    t.real_data = real;
    return t;
}

Op op_of(OpKind kind, const std::string& name, DType dtype = DType::fp16) {
    Op op;
    op.kind = kind;
    op.name = name;
    op.dtype = dtype;
    return op;
}
Op gemm(OpKind kind, std::int64_t b, std::int64_t m, std::int64_t n, std::int64_t k,
        DType dt = DType::fp16, const std::string& name = "g") {
    Op op = op_of(kind, name, dt);
    op.gemm = {b, m, n, k};
    return op;
}
Op vector_op(OpKind kind, std::int64_t n, const std::string& name, DType dt = DType::fp16) {
    Op op = op_of(kind, name, dt);
    op.elements = n;
    return op;
}
Op rows_op(OpKind kind, std::int64_t rows, std::int64_t cols, const std::string& name,
           DType dt = DType::fp16) {
    Op op = op_of(kind, name, dt);
    op.rows = rows;
    op.cols = cols;
    return op;
}

// One BERT-base encoder layer at sequence s, batch b (traces/bert_base.trace's 13 ops).
std::vector<Op> bert_layer(std::int64_t s, std::int64_t b) {
    const std::int64_t t = s * b, h = 12;
    return {gemm(OpKind::matmul, 1, t, 2304, 768, DType::fp16, "qkv"),
            gemm(OpKind::bmm, h * b, s, s, 64, DType::fp16, "scores"),
            vector_op(OpKind::mul, h * b * s * s, "scale_mask"),
            rows_op(OpKind::softmax, h * b * s, s, "softmax"),
            gemm(OpKind::bmm, h * b, s, 64, s, DType::fp16, "context"),
            gemm(OpKind::matmul, 1, t, 768, 768, DType::fp16, "proj"),
            vector_op(OpKind::add, t * 768, "resid1"),
            rows_op(OpKind::layernorm, t, 768, "ln1"),
            gemm(OpKind::matmul, 1, t, 3072, 768, DType::fp16, "fc1"),
            vector_op(OpKind::gelu, t * 3072, "act"),
            gemm(OpKind::matmul, 1, t, 768, 3072, DType::fp16, "fc2"),
            vector_op(OpKind::add, t * 768, "resid2"),
            rows_op(OpKind::layernorm, t, 768, "ln2")};
}

std::vector<std::vector<std::size_t>> groups_of(const std::vector<Op>& ops, GpuFusion mode) {
    std::vector<std::vector<std::size_t>> out;
    for (const FusionGroup& g : plan_gpu_fusion(ops, mode)) out.push_back(g.ops);
    return out;
}

TEST(FusionPlan, BertLayerByHand) {
    const std::vector<Op> layer = bert_layer(128, 1);
    EXPECT_TRUE(groups_of(layer, GpuFusion::none).empty());
    // epilogue: scale_mask into scores, resid1 into proj, act into fc1, resid2 into fc2: 13 - 4 = 9
    // kernels.
    using G = std::vector<std::vector<std::size_t>>;
    EXPECT_EQ(groups_of(layer, GpuFusion::epilogue), (G{{1, 2}, {5, 6}, {8, 9}, {10, 11}}));
    // tensorrt_like: attention (4 ops), resid1 + ln1, fc1 + act, resid2 + ln2: 13 - 6 = 7 kernels,
    // as TensorRT's BERT runs a layer (QKV GEMM, fused MHA, projection, skip-layernorm, FC1 + GELU,
    // FC2, skip-layernorm).
    const std::vector<FusionGroup> trt = plan_gpu_fusion(layer, GpuFusion::tensorrt_like);
    ASSERT_EQ(trt.size(), 4u);
    EXPECT_EQ(trt[0].kind, FusedKind::attention);
    EXPECT_EQ(trt[0].ops, (std::vector<std::size_t>{1, 2, 3, 4}));
    EXPECT_EQ(trt[1].kind, FusedKind::residual_layernorm);
    EXPECT_EQ(trt[1].ops, (std::vector<std::size_t>{6, 7}));
    EXPECT_EQ(trt[2].kind, FusedKind::gemm_epilogue);
    EXPECT_EQ(trt[2].ops, (std::vector<std::size_t>{8, 9}));
    EXPECT_EQ(trt[3].ops, (std::vector<std::size_t>{11, 12}));
}

TEST(FusionPlan, OnlyWhatTheKernelsRun) {
    // An elementwise op over another shape or dtype is not the GEMM's output; fp32 GEMMs have no
    // epilogue kernel; a head dimension of 128 or a layernorm over 2048 columns stays unfused.
    std::vector<Op> ops = {gemm(OpKind::matmul, 1, 64, 64, 64),
                           vector_op(OpKind::gelu, 64 * 63, "short")};
    EXPECT_TRUE(plan_gpu_fusion(ops, GpuFusion::tensorrt_like).empty());
    ops = {gemm(OpKind::matmul, 1, 64, 64, 64),
           vector_op(OpKind::gelu, 64 * 64, "bf", DType::bf16)};
    EXPECT_TRUE(plan_gpu_fusion(ops, GpuFusion::tensorrt_like).empty());
    ops = {gemm(OpKind::matmul, 1, 64, 64, 64, DType::fp32),
           vector_op(OpKind::gelu, 64 * 64, "a", DType::fp32)};
    EXPECT_TRUE(plan_gpu_fusion(ops, GpuFusion::epilogue).empty());
    ops = {gemm(OpKind::bmm, 2, 32, 32, 128), vector_op(OpKind::mul, 2 * 32 * 32, "m"),
           rows_op(OpKind::softmax, 64, 32, "s"), gemm(OpKind::bmm, 2, 32, 128, 32)};
    const std::vector<FusionGroup> wide = plan_gpu_fusion(ops, GpuFusion::tensorrt_like);
    ASSERT_EQ(wide.size(), 1u);  // the scores bmm keeps its scale in the epilogue
    EXPECT_EQ(wide[0].kind, FusedKind::gemm_epilogue);
    ops = {vector_op(OpKind::add, 4 * 2048, "add"), rows_op(OpKind::layernorm, 4, 2048, "ln")};
    EXPECT_TRUE(plan_gpu_fusion(ops, GpuFusion::tensorrt_like).empty());
    // Epilogues chain up to three steps: matmul, mul, add, gelu, relu -> the first three.
    ops = {gemm(OpKind::matmul, 1, 8, 8, 8), vector_op(OpKind::mul, 64, "a"),
           vector_op(OpKind::add, 64, "b"), vector_op(OpKind::gelu, 64, "c"),
           vector_op(OpKind::relu, 64, "d")};
    EXPECT_EQ(groups_of(ops, GpuFusion::epilogue),
              (std::vector<std::vector<std::size_t>>{{0, 1, 2, 3}}));
    // Without tensor cores (k80) only the skip-layernorm fuses: the other kernels are built on mma.
    const std::vector<FusionGroup> no_mma = plan_gpu_fusion(bert_layer(128, 1), GpuFusion::tensorrt_like,
                                                                [](DType) { return false; });
    ASSERT_EQ(no_mma.size(), 2u);
    EXPECT_EQ(no_mma[0].kind, FusedKind::residual_layernorm);
    EXPECT_EQ(no_mma[1].kind, FusedKind::residual_layernorm);
    EXPECT_EQ(resolve_gpu_fusion(GpuFusion::automatic, true), GpuFusion::tensorrt_like);
    EXPECT_EQ(resolve_gpu_fusion(GpuFusion::automatic, false), GpuFusion::none);
    EXPECT_EQ(resolve_gpu_fusion(GpuFusion::epilogue, true), GpuFusion::epilogue);
}

struct Launched {
    std::uint64_t cycles = 0, global_sectors = 0;
    LoweringNumerics numerics;
    bool checked = false;
};

// Runs a lowering's launches in order on one memory (ideal 200-cycle memory), then its check.
Launched run(const LoweredKernel& lk, simt::GlobalMemory& memory, int sms, bool skip = false) {
    const simt::SimtParams params = a100_like(sms);
    Launched out;
    simt::FixedLatencyMemory port(200);
    const simt::KernelStats first =
        simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {skip});
    out.cycles = first.cycles;
    out.global_sectors = first.global_sectors;
    for (const LoweredLaunch& next : lk.then) {
        simt::FixedLatencyMemory next_port(200);
        const simt::KernelStats k =
            simt::launch(*next.kernel, next.dims, next.args, memory, params, &next_port, {skip});
        out.cycles += k.cycles;
        out.global_sectors += k.global_sectors;
    }
    if (lk.check) {
        out.numerics = lk.check(memory);
        out.checked = true;
    }
    return out;
}

const GemmEpilogue kEpilogues[] = {
    {{EpilogueStep::gelu}},
    {{EpilogueStep::add}},
    {{EpilogueStep::mul}},
    {{EpilogueStep::bias, EpilogueStep::gelu}},
    {{EpilogueStep::bias, EpilogueStep::add, EpilogueStep::relu}},
    {{EpilogueStep::mul, EpilogueStep::add}},
    {{EpilogueStep::scale, EpilogueStep::add}, 0.125f},  // attention's 1/sqrt(64), then a mask
    {{EpilogueStep::bias, EpilogueStep::scale, EpilogueStep::gelu}, -1.5f},
};

TEST(GemmEpilogue, EveryTileAndStepMatchesEigen) {
    const std::int64_t shapes[][3] = {{17, 33, 45}, {130, 70, 200}};
    for (const GemmTile& base : gemm_tensor_tiles())
        for (int ahead : {1, 2}) {
            GemmTile tile = base;
            tile.slices_ahead = ahead;
            for (const GemmEpilogue& e : kEpilogues) {
                const simt::Kernel* k = gemm_epilogue_kernel(tile, simt::MmaType::f16, e);
                if (simt::compute_occupancy(a100_like(1).sm.limits,
                                            {tile.threads(), k->registers, k->shared_bytes})
                        .blocks_per_sm == 0)
                    continue;  // 256x128 two ahead does not fit, as without an epilogue
                EXPECT_TRUE(k->fp_payload_skippable)
                    << tile.name() << " " << e.name() << ": " << k->fp_dependence;
                for (const auto& s : shapes)
                    for (DType dt : {DType::fp16, DType::bf16}) {
                        simt::GlobalMemory memory;
                        const LoweredKernel lk =
                            lower_gemm_epilogue(gemm(OpKind::matmul, 1, s[0], s[1], s[2], dt), e,
                                                memory, target_of(4, true), &tile);
                        const Launched r = run(lk, memory, 4);
                        EXPECT_EQ(r.numerics.checked, s[0] * s[1]);
                        EXPECT_TRUE(r.numerics.passed)
                            << tile.name() << " ahead " << ahead << " " << e.name() << " " << s[0]
                            << "x" << s[1] << "x" << s[2] << " " << to_string(dt)
                            << ": max abs err " << r.numerics.max_abs_err;
                    }
            }
        }
}

TEST(GemmEpilogue, BmmAndSplitKMatchEigen) {
    // A bmm (the scores' scale-and-mask epilogue) and split-K, whose sum launch applies the
    // epilogue.
    for (DType dt : {DType::fp16, DType::bf16}) {
        for (const GemmEpilogue& e : kEpilogues) {
            simt::GlobalMemory memory;
            const LoweredKernel lk = lower_gemm_epilogue(gemm(OpKind::bmm, 3, 65, 40, 33, dt), e,
                                                         memory, target_of(2, true));
            const Launched r = run(lk, memory, 2);
            EXPECT_EQ(r.numerics.checked, 3 * 65 * 40);
            EXPECT_TRUE(r.numerics.passed) << "bmm " << e.name() << " " << to_string(dt);
        }
        for (const int splits : {2, 3}) {
            const GemmTile tile = gemm_tensor_tiles()[4];  // 32x32x32
            for (const GemmEpilogue& e : kEpilogues) {
                simt::GlobalMemory memory;
                const LoweredKernel lk =
                    lower_gemm_epilogue(gemm(OpKind::matmul, 1, 40, 72, 960, dt), e, memory,
                                        target_of(2, true), &tile, splits);
                ASSERT_EQ(lk.then.size(), 1u);
                EXPECT_TRUE(lk.then[0].kernel->fp_payload_skippable)
                    << lk.then[0].kernel->fp_dependence;
                const Launched r = run(lk, memory, 2);
                EXPECT_EQ(r.numerics.checked, 40 * 72);
                EXPECT_TRUE(r.numerics.passed)
                    << "split " << splits << " " << e.name() << " " << to_string(dt)
                    << ": max abs err " << r.numerics.max_abs_err;
            }
        }
    }
}

TEST(GemmEpilogue, CheckFailsWithoutTheEpilogue) {
    // The reference applies the steps: the plain kernel of the same tile on the same buffers (the
    // residual never added) fails the fused check.
    simt::GlobalMemory memory;
    const GemmTile tile = gemm_tensor_tiles()[4];  // 32x32x32, one slice ahead
    const LoweredKernel lk =
        lower_gemm_epilogue(gemm(OpKind::matmul, 1, 40, 24, 64), GemmEpilogue{{EpilogueStep::add}},
                            memory, target_of(1, true), &tile);
    LoweredKernel plain = lk;
    plain.kernel = gemm_tensor_kernel(tile, simt::MmaType::f16);
    plain.args.pop_back();  // e0
    const Launched r = run(plain, memory, 1);
    EXPECT_EQ(r.numerics.checked, 40 * 24);
    EXPECT_FALSE(r.numerics.passed);
}

TEST(GemmEpilogue, ReadsItsOperandsAndWritesCOnce) {
    // 128 x 768 x 768 fp16 on the 64x64 tile: the fused kernel's global sectors are the plain
    // kernel's plus the residual it reads (128 x 768 x 2 B = 6,144 sectors, each asked for twice:
    // like C's stores, a lane's word of 8 rows x 4 lanes covers half a sector per row); a GELU adds
    // none. Unfused, the add alone would read C and the residual and write its output.
    const GemmTile tile = gemm_tensor_tiles()[3];
    const Op op = gemm(OpKind::matmul, 1, 128, 768, 768);
    simt::GlobalMemory plain_memory;
    const Launched plain = run(lower_gemm_with_tile(op, plain_memory, target_of(8, false), tile),
                               plain_memory, 8, true);
    for (const auto& [e, extra] :
         {std::pair<GemmEpilogue, std::uint64_t>{{{EpilogueStep::add}}, 2 * 6144},
          {{{EpilogueStep::gelu}}, 0},
          {{{EpilogueStep::mul, EpilogueStep::add}}, 4 * 6144}}) {
        simt::GlobalMemory memory;
        const Launched fused =
            run(lower_gemm_epilogue(op, e, memory, target_of(8, false), &tile), memory, 8, true);
        EXPECT_EQ(fused.global_sectors, plain.global_sectors + extra) << e.name();
    }
}

TEST(GemmEpilogue, TimingOnlyRunsGiveTheCyclesOfFullRuns) {
    for (const GemmEpilogue& e : kEpilogues) {
        simt::GlobalMemory full_memory, timing_memory;
        const Op op = gemm(OpKind::matmul, 1, 96, 80, 128);
        const Launched full =
            run(lower_gemm_epilogue(op, e, full_memory, target_of(2, true)), full_memory, 2, false);
        const Launched timing = run(lower_gemm_epilogue(op, e, timing_memory, target_of(2, false)),
                                    timing_memory, 2, true);
        EXPECT_EQ(full.cycles, timing.cycles) << e.name();
    }
}

TEST(ResidualLayernorm, MatchesTheDoubleReference) {
    // Rows of 768 (BERT), 1024 (16 words per lane), 130 (65 words: the last word of a lane is
    // missing in all but one lane) and 2 columns; fp16 and bf16.
    const std::int64_t shapes[][2] = {{128, 768}, {37, 1024}, {5, 130}, {3, 2}};
    for (const auto& s : shapes)
        for (DType dt : {DType::fp16, DType::bf16}) {
            simt::GlobalMemory memory;
            const LoweredKernel lk = lower_residual_layernorm(
                vector_op(OpKind::add, s[0] * s[1], "add", dt),
                rows_op(OpKind::layernorm, s[0], s[1], "ln", dt), memory, target_of(4, true));
            EXPECT_TRUE(lk.kernel->fp_payload_skippable) << lk.kernel->fp_dependence;
            const Launched r = run(lk, memory, 4);
            EXPECT_EQ(r.numerics.checked, s[0] * s[1]);
            EXPECT_TRUE(r.numerics.passed) << s[0] << "x" << s[1] << " " << to_string(dt)
                                           << ": max abs err " << r.numerics.max_abs_err;
            // One pass: x, the residual and y once each, gamma and beta once per row (the L1 is
            // off).
            const std::int64_t row_sectors = (s[1] * 2 + 31) / 32;
            if (s[1] * 2 % 128 == 0) {
                EXPECT_EQ(r.global_sectors, static_cast<std::uint64_t>(s[0] * row_sectors * 5))
                    << s[0] << "x" << s[1];
            }
        }
    simt::GlobalMemory memory;
    EXPECT_THROW(lower_residual_layernorm(vector_op(OpKind::add, 4 * 2048, "add"),
                                          rows_op(OpKind::layernorm, 4, 2048, "ln"), memory,
                                          target_of(1, false)),
                 LoweringError);
}

TEST(ResidualLayernorm, CheckFailsWithoutTheResidual) {
    // The check is not vacuous: with the residual left out of y (x alone normalized), it fails.
    simt::GlobalMemory memory;
    const LoweredKernel lk = lower_residual_layernorm(vector_op(OpKind::add, 16 * 768, "add"),
                                                      rows_op(OpKind::layernorm, 16, 768, "ln"),
                                                      memory, target_of(2, true));
    LoweredKernel without = lk;
    without.args[3] = without.args[6];  // the residual read from y, still zero before the launch
    const Launched r = run(without, memory, 2);
    EXPECT_FALSE(r.numerics.passed);
}

TEST(FusedAttention, MatchesTheDoubleReference) {
    // Key lengths: all keys, 1, 37 and 63 (a partly masked tile), 130 of 200 (the third tile).
    struct Case {
        std::int64_t b, s, d, keys;
    };
    const Case cases[] = {{2, 128, 64, 0}, {3, 100, 32, 1},   {3, 100, 32, 37},
                          {2, 64, 16, 63}, {1, 200, 64, 130}, {4, 17, 64, 0}};
    for (const Case& c : cases)
        for (DType dt : {DType::fp16, DType::bf16}) {
            simt::GlobalMemory memory;
            const LoweredKernel lk = lower_attention(gemm(OpKind::bmm, c.b, c.s, c.s, c.d, dt),
                                                     gemm(OpKind::bmm, c.b, c.s, c.d, c.s, dt),
                                                     memory, target_of(4, true), c.keys);
            EXPECT_TRUE(lk.kernel->fp_payload_skippable) << lk.kernel->fp_dependence;
            const Launched r = run(lk, memory, 4);
            EXPECT_EQ(r.numerics.checked, c.b * c.s * c.d);
            EXPECT_TRUE(r.numerics.passed)
                << c.b << "x" << c.s << "x" << c.d << " " << to_string(dt) << ": max abs err "
                << r.numerics.max_abs_err;
        }
}

TEST(FusedAttention, CheckFailsWithoutTheKernel) {
    // The reference is not vacuous: O left as zeros (no launch) fails it.
    simt::GlobalMemory memory;
    const LoweredKernel lk =
        lower_attention(gemm(OpKind::bmm, 2, 40, 40, 32), gemm(OpKind::bmm, 2, 40, 32, 40), memory,
                        target_of(1, true));
    ASSERT_TRUE(lk.check);
    const LoweringNumerics n = lk.check(memory);
    EXPECT_EQ(n.checked, 2 * 40 * 32);
    EXPECT_FALSE(n.passed);
}

TEST(FusedAttention, NeverStoresTheScores) {
    // b = 2, s = 128, d = 64: 2 blocks of 64 query rows per entry, 4 blocks. Sectors requested:
    // Q's A fragments are 32-bit loads of 8 rows x 16 B, so each 32-byte sector of Q is asked for
    // twice (2 x 2 x 128 x 128 B / 32); every block streams all of K and V (16-byte and 8-byte
    // vector loads filling their sectors: 4 x 128 x 128 B / 32 each); O is stored like Q is loaded
    // (2 x 2 x 128 x 128 B / 32). Nothing of the
    // 2 x 128 x 128 scores: the unfused chain would write and read them (2 x 128 x 128 x 2 B) three
    // times over.
    simt::GlobalMemory memory;
    const LoweredKernel lk =
        lower_attention(gemm(OpKind::bmm, 2, 128, 128, 64), gemm(OpKind::bmm, 2, 128, 64, 128),
                        memory, target_of(4, false));
    const Launched r = run(lk, memory, 4, true);
    const std::uint64_t q = 2 * 2 * 128 * 128 / 32, kv = 4 * 128 * 128 / 32, o = q;
    EXPECT_EQ(r.global_sectors, q + 2 * kv + o);
    EXPECT_EQ(lk.dims.grid, 4u);
    EXPECT_EQ(lk.dims.block, 128u);
}

TEST(FusedAttention, TimingOnlyRunsGiveTheCyclesOfFullRuns) {
    simt::GlobalMemory full_memory, timing_memory;
    const Op scores = gemm(OpKind::bmm, 3, 100, 100, 32),
             context = gemm(OpKind::bmm, 3, 100, 32, 100);
    const Launched full =
        run(lower_attention(scores, context, full_memory, target_of(2, true), 50), full_memory, 2);
    const Launched timing =
        run(lower_attention(scores, context, timing_memory, target_of(2, false), 50), timing_memory,
            2, true);
    EXPECT_EQ(full.cycles, timing.cycles);
}

}  // namespace
}  // namespace accelsim::gpu::fusion_test
