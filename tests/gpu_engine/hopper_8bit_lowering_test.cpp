// Which kernel the shipped GPU configs lower an 8-bit GEMM to (docs/gpu.md "Hopper GEMMs"): the
// Hopper kernel (wgmma m64nNk32) on h100 (sm_90) for fp8_e4m3, fp8_e5m2 and int8, the
// mma.m16n8k32 kernel on a100 (sm_80, int8 only) and l4 (sm_89) and on b200 (sm_100: wgmma is
// sm_90a-only in PTX); --validate checks every one against Eigen.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/gpu_engine/engine_run.h"

namespace accelsim::hopper_8bit_lowering_test {
namespace {

bool has_stat(const OpReport& r, const std::string& name) {
    for (const auto& s : r.stats)
        if (s.name == name) return true;
    return false;
}

TEST(Hopper8bitLowering, H100RunsTheHopperKernelOtherChipsTheMmaOne) {
    // 256^3: on h100 the 64x64 Hopper tile (the tile rule with h100's 64 B/cycle port, one block
    // per SM at most: 64x64 4096 x 2 = 8192 against 64x128's 8192 x 1.5 and 128x128's 16384), 5
    // warps (4 consumers + the producer) and BK = 128; the mma kernel reports its warp grid
    // (gpu.warps_m), which the Hopper kernel has not.
    const struct { const char* config; std::vector<std::string> dtypes; bool hopper; } chips[] = {
        {"h100", {"fp8_e4m3", "fp8_e5m2", "int8"}, true},
        {"a100", {"int8"}, false},
        {"l4", {"fp8_e4m3", "int8"}, false},
        {"b200", {"fp8_e4m3", "int8"}, false},
    };
    for (const auto& chip : chips) {
        std::vector<std::string> lines;
        for (const std::string& dt : chip.dtypes) lines.push_back("matmul g_" + dt + " m=256 n=256 k=256 dtype=" + dt);
        const RunReport report = test::run(test::shipped_config(chip.config), test::write_trace(lines), true);
        ASSERT_EQ(report.ops.size(), chip.dtypes.size());
        for (const OpReport& op : report.ops) {
            EXPECT_EQ(has_stat(op, "gpu.warps_m"), !chip.hopper) << chip.config << " " << op.op.name;
            if (chip.hopper) {
                EXPECT_EQ(test::stat(op, "gpu.block"), 160.0) << op.op.name;
                EXPECT_EQ(test::stat(op, "gpu.tile_k"), 128.0) << op.op.name;
                EXPECT_EQ(test::stat(op, "gpu.tile_n"), 64.0) << op.op.name;
            }
            ASSERT_TRUE(op.numerics.has_value()) << chip.config << " " << op.op.name;
            EXPECT_EQ(op.numerics->checked, 256 * 256);
            EXPECT_TRUE(op.numerics->passed) << chip.config << " " << op.op.name;
            EXPECT_TRUE(op.numerics->quantization.has_value()) << chip.config << " " << op.op.name;
        }
    }
}

}  // namespace
}  // namespace accelsim::hopper_8bit_lowering_test
