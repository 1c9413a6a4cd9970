// int8 and fp8 elementwise ops through the engine on the shipped configs: which chips run the
// 8-bit kernels (models/gpu/elementwise.h) and which keep the roofline row, and the bytes the
// kernels move worked out by hand (one per element and tensor).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/gpu_engine/engine_run.h"

namespace accelsim::eight_bit_elementwise_test {
namespace {

using test::run;
using test::stat;

TEST(EightBitElementwiseEngine, Int8OnA100Fp8OnH100L4AndMi300x) {
    // add over n = 100,000 with a cold L2: 25,000 words a tensor; the L2 sees a and b read and y
    // written, 3 x 100,000 bytes, HBM the 200,000 read (the write-back L2 keeps y, as for every
    // elementwise op); gelu one tensor read. ceil(25000 / 256) = 98 blocks.
    // a100 refuses fp8 traces (no fp8 rate; lower_op keeps sm_80's fp8 vector ops as roofline
    // rows, elementwise_8bit_test.cpp); mi300x (gfx942) runs them with CDNA3's fp8 conversions,
    // in FNUZ.
    for (const char* chip_name : {"a100", "h100", "l4", "mi300x"}) {
        SCOPED_TRACE(chip_name);
        const std::string name = chip_name;
        std::vector<std::string> ops = {"add q n=100000 dtype=int8"};
        if (name != "a100") ops.insert(ops.end(), {"add e4 n=100000 dtype=fp8_e4m3", "gelu e5 n=100000 dtype=fp8_e5m2"});
        const RunReport report = run(test::shipped_config(name, {"gpu.cold_l2_per_op=true"}), test::write_trace(ops), true);
        EXPECT_EQ(report.ops.size(), ops.size());
        for (const OpReport& r : report.ops) {
            SCOPED_TRACE(r.op.name);
            EXPECT_EQ(r.model, "simt");
            EXPECT_EQ(stat(r, "gpu.elements_per_thread_step"), 4.0);
            const std::int64_t tensors = r.op.kind == OpKind::gelu ? 2 : 3;
            EXPECT_EQ(r.bytes.at("l2"), tensors * 100000);
            EXPECT_EQ(r.bytes.at("hbm"), (tensors - 1) * 100000);
            ASSERT_TRUE(r.numerics);
            EXPECT_TRUE(r.numerics->passed);
            EXPECT_EQ(r.numerics->checked, 100000);
            EXPECT_TRUE(r.numerics->quantization.has_value());
            if (name == "a100") {
                EXPECT_EQ(stat(r, "gpu.grid"), 98.0);
            }
        }
    }
}

}  // namespace
}  // namespace accelsim::eight_bit_elementwise_test
