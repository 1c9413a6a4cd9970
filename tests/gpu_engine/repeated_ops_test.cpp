// Exact reuse of repeated ops (models/gpu/repeated_ops.h): an op whose shape and starting L2
// contents equal an earlier op's takes that op's outcome. The reference is the same chip with
// reuse switched off, which simulates every op: every report must be equal, field by field, and
// the L2 each op leaves must be the one the simulation leaves (the ops after a reused op see it).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/gpu/gpu_chip.h"
#include "models/gpu/repeated_ops.h"
#include "sim/engine/chip_registry.h"
#include "sim/trace/trace_reader.h"
#include "tests/gpu_engine/engine_run.h"

namespace accelsim::repeated_ops_test {
namespace {

using test::shipped_config;

std::vector<Op> ops_of(const std::vector<std::string>& lines, const ChipConfig& chip) {
    return read_trace(test::write_trace(lines), chip.default_dtype);
}

struct ChipRun {
    std::vector<OpReport> reports;
    std::size_t reused = 0;
    std::size_t flagged = 0;  // ops after which last_op_reused() said so
};

// Runs the ops one after another on a fresh chip, as the engine does (plan, then each op with the
// next one).
ChipRun run_ops(const ChipConfig& chip, const std::vector<Op>& ops, bool reuse) {
    RunOptions options;
    options.reuse_repeated_ops = reuse;
    std::unique_ptr<ChipModel> model = make_chip(chip, options);
    model->plan(ops);
    ChipRun out;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        out.reports.push_back(model->run(ops[i], i + 1 < ops.size() ? &ops[i + 1] : nullptr));
        out.flagged += model->last_op_reused() ? 1 : 0;
    }
    out.reused = dynamic_cast<const gpu::GpuChip&>(*model).reused_ops();
    EXPECT_EQ(out.flagged, out.reused);
    return out;
}

void expect_same_reports(const ChipRun& reused, const ChipRun& simulated, const std::vector<Op>& ops) {
    ASSERT_EQ(reused.reports.size(), simulated.reports.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const OpReport& a = reused.reports[i];
        const OpReport& b = simulated.reports[i];
        SCOPED_TRACE(ops[i].name);
        EXPECT_EQ(a.op.name, ops[i].name);
        EXPECT_EQ(a.op.line, ops[i].line);
        EXPECT_EQ(a.model, b.model);
        EXPECT_EQ(a.cycles, b.cycles);
        EXPECT_EQ(a.bytes, b.bytes);
        EXPECT_EQ(a.utilization, b.utilization);
        EXPECT_EQ(a.occupancy_achieved, b.occupancy_achieved);
        EXPECT_EQ(a.simd_efficiency, b.simd_efficiency);
        EXPECT_EQ(a.roofline.bound, b.roofline.bound);
        EXPECT_EQ(a.roofline.bound_cycles, b.roofline.bound_cycles);
        EXPECT_EQ(a.roofline.cycles, b.roofline.cycles);
        EXPECT_EQ(a.fused_into, b.fused_into);
        EXPECT_EQ(a.fused_ops, b.fused_ops);
        ASSERT_EQ(a.stats.size(), b.stats.size());
        for (std::size_t s = 0; s < a.stats.size(); ++s) {
            EXPECT_EQ(a.stats[s].name, b.stats[s].name);
            EXPECT_EQ(a.stats[s].value, b.stats[s].value) << a.stats[s].name;
        }
    }
}

// One encoder-like layer of small ops, repeated; names differ per layer as in a real trace.
std::vector<std::string> layers(int n) {
    std::vector<std::string> lines;
    for (int l = 0; l < n; ++l) {
        const std::string p = "l" + std::to_string(l) + "_";
        lines.push_back("matmul " + p + "proj m=64 n=256 k=256 dtype=fp16");
        lines.push_back("softmax " + p + "softmax rows=64 cols=256 dtype=fp16");
        lines.push_back("add " + p + "residual n=16384 dtype=fp16");
        lines.push_back("layernorm " + p + "norm rows=64 cols=256 dtype=fp16");
    }
    return lines;
}

TEST(RepeatedOps, LaterLayersReuseAndEveryReportEqualsTheSimulatedOne) {
    const ChipConfig chip = shipped_config("a100", {"gpu.sms=16"});
    const std::vector<Op> ops = ops_of(layers(5), chip);
    const ChipRun reused = run_ops(chip, ops, true);
    const ChipRun simulated = run_ops(chip, ops, false);
    expect_same_reports(reused, simulated, ops);
    EXPECT_EQ(simulated.reused, 0u);
    // The warm L2 carries every earlier layer's lines: the starts repeat once the stale lines have
    // settled, so at least the last layer's four ops are taken from an earlier layer.
    EXPECT_GE(reused.reused, 4u);
    EXPECT_LT(reused.reused, ops.size() - 4);  // the first layer's ops start from L2s nothing met before
}

TEST(RepeatedOps, FusedGroupsReuseUnderTheirOwnNames) {
    const ChipConfig chip = shipped_config("a100", {"gpu.sms=16", "compiler.gpu_fusion=epilogue"});
    std::vector<std::string> lines;
    for (int l = 0; l < 5; ++l) {
        const std::string p = "l" + std::to_string(l) + "_";
        lines.push_back("matmul " + p + "fc m=64 n=256 k=256 dtype=fp16");
        lines.push_back("gelu " + p + "act n=16384 dtype=fp16");
    }
    const std::vector<Op> ops = ops_of(lines, chip);
    const ChipRun reused = run_ops(chip, ops, true);
    const ChipRun simulated = run_ops(chip, ops, false);
    expect_same_reports(reused, simulated, ops);
    EXPECT_GE(reused.reused, 1u);
    ASSERT_EQ(reused.reports[8].fused_ops.size(), 1u);
    EXPECT_EQ(reused.reports[8].fused_ops[0], "l4_act");
    EXPECT_EQ(reused.reports[9].fused_into, "l4_fc");
}

TEST(RepeatedOps, WithAColdL2EveryRepeatOfAShapeIsReused) {
    // Each op starts from an empty L2: A B A B A has three repeats.
    const ChipConfig chip = shipped_config("a100", {"gpu.sms=16", "gpu.cold_l2_per_op=true"});
    const std::vector<Op> ops = ops_of({"relu a1 n=65536 dtype=fp16", "gelu b1 n=65536 dtype=fp16",
                                        "relu a2 n=65536 dtype=fp16", "gelu b2 n=65536 dtype=fp16",
                                        "relu a3 n=65536 dtype=fp16"},
                                       chip);
    const ChipRun reused = run_ops(chip, ops, true);
    expect_same_reports(reused, run_ops(chip, ops, false), ops);
    EXPECT_EQ(reused.reused, 3u);
}

TEST(RepeatedOps, TheSameShapeOnADifferentL2IsSimulated) {
    // The second relu finds the first one's output in the L2 (its input, warm), the first found an
    // empty L2: different starts, so no reuse, and indeed different cycles.
    const ChipConfig chip = shipped_config("a100", {"gpu.sms=16"});
    const std::vector<Op> ops = ops_of({"relu a n=262144 dtype=fp16", "relu b n=262144 dtype=fp16"}, chip);
    const ChipRun reused = run_ops(chip, ops, true);
    EXPECT_EQ(reused.reused, 0u);
    EXPECT_NE(reused.reports[0].cycles, reused.reports[1].cycles);
    expect_same_reports(reused, run_ops(chip, ops, false), ops);
}

TEST(RepeatedOps, ShapeKeySeesEverySizeAndNotTheName) {
    Op base;
    base.kind = OpKind::conv2d;
    base.name = "a";
    auto key = [](const Op& op) {
        std::string k;
        gpu::append_op_shape_key(k, op);
        return k;
    };
    Op renamed = base;
    renamed.name = "b";
    renamed.file = "other.trace";
    renamed.line = 7;
    EXPECT_EQ(key(base), key(renamed));
    std::vector<Op> changed;
    auto vary = [&](auto&& change) {
        Op o = base;
        change(o);
        changed.push_back(o);
    };
    vary([](Op& o) { o.kind = OpKind::matmul; });
    vary([](Op& o) { o.dtype = DType::fp16; });
    for (std::int64_t GemmShape::*f : {&GemmShape::batch, &GemmShape::m, &GemmShape::n, &GemmShape::k})
        vary([f](Op& o) { o.gemm.*f += 1; });
    for (std::int64_t Conv2dShape::*f :
         {&Conv2dShape::n, &Conv2dShape::h, &Conv2dShape::w, &Conv2dShape::c, &Conv2dShape::k, &Conv2dShape::r,
          &Conv2dShape::s, &Conv2dShape::stride_h, &Conv2dShape::stride_w, &Conv2dShape::pad_h, &Conv2dShape::pad_w,
          &Conv2dShape::dilation_h, &Conv2dShape::dilation_w, &Conv2dShape::groups})
        vary([f](Op& o) { o.conv.*f += 1; });
    for (std::int64_t PoolShape::*f :
         {&PoolShape::n, &PoolShape::h, &PoolShape::w, &PoolShape::c, &PoolShape::r, &PoolShape::s,
          &PoolShape::stride_h, &PoolShape::stride_w, &PoolShape::pad_h, &PoolShape::pad_w, &PoolShape::dilation_h,
          &PoolShape::dilation_w})
        vary([f](Op& o) { o.pool.*f += 1; });
    vary([](Op& o) { o.pool.mode = PoolMode::avg; });
    vary([](Op& o) { o.pool.ceil_mode = true; });
    vary([](Op& o) { o.pool.count_pad = true; });
    vary([](Op& o) { o.pool.global = true; });
    vary([](Op& o) { o.rows = 3; });
    vary([](Op& o) { o.cols = 3; });
    vary([](Op& o) { o.elements = 3; });
    EXPECT_EQ(changed.size(), 39u);
    for (std::size_t i = 0; i < changed.size(); ++i) {
        EXPECT_NE(key(changed[i]), key(base)) << "change " << i;
        for (std::size_t j = 0; j < i; ++j) EXPECT_NE(key(changed[i]), key(changed[j])) << i << " " << j;
    }
}

}  // namespace
}  // namespace accelsim::repeated_ops_test
