// The copy op (a transpose, concat or gather of activations, docs/import.md) on the GPU: the
// library's grid-stride kernel moving whole words, no arithmetic. Bytes worked out by hand.
#include <gtest/gtest.h>

#include <string>

#include "sim/config/config_loader.h"
#include "tests/gpu_engine/engine_run.h"
#include "tests/trace/trace_test_util.h"

namespace accelsim::copy_kernel_test {
namespace {

using test::run;
using test::stat;

TEST(CopyKernel, A100MovesTheHandWorkedBytesAndCopiesExactly) {
    // copy over n = 100,000 fp32 with a cold L2: every thread loads one word and stores it, so
    // the L2 sees 4 B read + 4 B written per element (800,000 bytes) and HBM the 400,000 read
    // (the write-back L2 keeps the output, as for every elementwise op). ceil(100000 / 256) = 391
    // blocks, below one wave of 108 SMs x 8 blocks. In bf16 two elements share a 32-bit word, the
    // kernel moves 50,000 words: 400,000 L2 bytes, 200,000 from HBM, 196 blocks.
    const ChipConfig chip =
        load_config(std::string(ACCELSIM_SOURCE_DIR) + "/configs/a100.json", {"gpu.cold_l2_per_op=true"});
    const std::string trace =
        test::write_file("copy.trace", "# accelsim-trace 1\ncopy c32 n=100000 dtype=fp32\ncopy c16 n=100000 dtype=bf16\n");
    const RunReport report = run(chip, trace, true);
    const OpReport& f32 = report.ops[0];
    EXPECT_EQ(stat(f32, "gpu.grid"), 391.0);
    EXPECT_EQ(f32.bytes.at("l2"), 800000);
    EXPECT_EQ(f32.bytes.at("hbm"), 400000);
    const OpReport& b16 = report.ops[1];
    EXPECT_EQ(stat(b16, "gpu.grid"), 196.0);
    EXPECT_EQ(b16.bytes.at("l2"), 400000);
    EXPECT_EQ(b16.bytes.at("hbm"), 200000);
    for (const OpReport& r : report.ops) {
        SCOPED_TRACE(r.op.name);
        EXPECT_EQ(r.model, "simt");
        EXPECT_GE(static_cast<double>(r.cycles), r.roofline.bound_cycles);
        ASSERT_TRUE(r.numerics);
        EXPECT_EQ(r.numerics->checked, 100000);
        EXPECT_EQ(r.numerics->max_abs_err, 0.0);
        EXPECT_TRUE(r.numerics->passed);
    }
}

}  // namespace
}  // namespace accelsim::copy_kernel_test
