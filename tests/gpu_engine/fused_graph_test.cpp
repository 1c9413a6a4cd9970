// The fused-graph compiler through the engine (compiler.gpu_fusion; docs/gpu.md "Fused graphs"):
// one BERT-base layer on a100 keeps its 13 trace ops in the report, the fused ones without a kernel
// or time of their own, naming the kernel they ran in, and every kernel's outputs match the
// references
// (--validate). The kernels and their numerics are tested in tests/gpu/fusion_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "sim/config/config_loader.h"
#include "tests/gpu_engine/engine_run.h"

namespace accelsim::fused_graph_test {
namespace {

const std::string kSource = ACCELSIM_SOURCE_DIR;

RunReport bert_layer(const std::vector<std::string>& overrides, bool validate) {
    const ChipConfig chip = load_config(kSource + "/configs/a100.json", overrides);
    return test::run(chip, kSource + "/traces/bert_base_1layer.trace", validate);
}

void expect_fused_as(const RunReport& report, const std::map<std::string, std::string>& fused_into,
                     std::size_t kernels) {
    ASSERT_EQ(report.ops.size(), 13u);
    std::size_t launched = 0;
    std::uint64_t device = 0;
    std::map<std::string, std::vector<std::string>> runs;  // kernel -> the ops fused into it
    for (std::size_t i = 0; i < report.ops.size(); ++i) {
        const OpReport& r = report.ops[i];
        SCOPED_TRACE(r.op.name);
        const auto it = fused_into.find(r.op.name);
        if (it == fused_into.end()) {
            EXPECT_EQ(r.model, "simt");
            EXPECT_TRUE(r.fused_into.empty());
            ASSERT_TRUE(r.numerics);
            EXPECT_TRUE(r.numerics->passed);
            ++launched;
            device += r.cycles;
            for (const std::string& name : r.fused_ops) runs[r.op.name].push_back(name);
            if (!r.fused_ops.empty()) {
                EXPECT_EQ(test::stat(r, "gpu.fused_ops"),
                          1.0 + static_cast<double>(r.fused_ops.size()));
            }
            continue;
        }
        // Ran inside an earlier op's kernel: no launch, no time, no host time, no data of its own.
        EXPECT_EQ(r.model, "fused");
        EXPECT_EQ(r.fused_into, it->second);
        EXPECT_EQ(r.cycles, 0u);
        EXPECT_EQ(r.host_cycles, 0u);
        EXPECT_FALSE(r.numerics);
        ASSERT_GT(i, 0u);
        EXPECT_EQ(r.start_cycle, report.ops[i - 1].end_cycle);
        EXPECT_EQ(r.end_cycle, r.start_cycle);
    }
    EXPECT_EQ(launched, kernels);
    // Each kernel row lists exactly the ops that name it.
    std::map<std::string, std::vector<std::string>> named;
    for (const OpReport& r : report.ops)
        if (!r.fused_into.empty()) named[r.fused_into].push_back(r.op.name);
    EXPECT_EQ(runs, named);
    // End to end = the kernels' device time + the host time the device waited.
    EXPECT_EQ(report.total_cycles() - report.host_cycles(), device);
    ASSERT_TRUE(report.numerics);
    EXPECT_TRUE(report.numerics->passed);
}

TEST(FusedGraph, TensorRtLikeBertLayerKeepsEveryOpAndPassesItsChecks) {
    // host.launch=engine: compiler.gpu_fusion auto means tensorrt_like. 7 kernels: QKV, fused
    // attention, projection, skip-layernorm, FC1 + GELU, FC2, skip-layernorm.
    const RunReport report = bert_layer({"host.launch=engine"}, true);
    expect_fused_as(report,
                    {{"L0.attn.scale_mask", "L0.attn.scores"},
                     {"L0.attn.softmax", "L0.attn.scores"},
                     {"L0.attn.context", "L0.attn.scores"},
                     {"L0.ln1", "L0.resid1"},
                     {"L0.ffn.act", "L0.ffn.fc1"},
                     {"L0.ln2", "L0.resid2"}},
                    7);
}

TEST(FusedGraph, EpilogueBertLayerKeepsEveryOpAndPassesItsChecks) {
    const RunReport report = bert_layer({"compiler.gpu_fusion=epilogue"}, true);
    expect_fused_as(report,
                    {{"L0.attn.scale_mask", "L0.attn.scores"},
                     {"L0.resid1", "L0.attn.proj"},
                     {"L0.ffn.act", "L0.ffn.fc1"},
                     {"L0.resid2", "L0.ffn.fc2"}},
                    9);
}

TEST(FusedGraph, DefaultRunsEveryOpAloneAndFusionSavesTime) {
    // The shipped default (host.launch auto = eager, so compiler.gpu_fusion auto = none) launches
    // all 13 ops; with the same eager host, tensorrt_like's 7 kernels end sooner on the device.
    const RunReport plain = bert_layer({}, false);
    for (const OpReport& r : plain.ops) {
        EXPECT_TRUE(r.fused_into.empty()) << r.op.name;
        EXPECT_TRUE(r.fused_ops.empty()) << r.op.name;
    }
    const RunReport fused = bert_layer({"compiler.gpu_fusion=tensorrt_like"}, false);
    EXPECT_LT(fused.total_cycles() - fused.host_cycles(),
              plain.total_cycles() - plain.host_cycles());
    // The first op runs the same kernel on the same (empty) L2 either way.
    EXPECT_EQ(fused.ops[0].cycles, plain.ops[0].cycles);
}

}  // namespace
}  // namespace accelsim::fused_graph_test
