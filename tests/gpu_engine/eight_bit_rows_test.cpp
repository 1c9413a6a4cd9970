// int8 and fp8 softmax and layernorm through the engine on shipped configs with --validate: which
// chips run the 8-bit row kernels (models/gpu/reduction.h) and which keep the roofline row, the
// numerics and quantization error reported, and the DRAM bytes worked out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/gpu_engine/engine_run.h"

namespace accelsim::eight_bit_rows_test {
namespace {

using test::run;

TEST(EightBitRowsEngine, Int8OnA100Fp8OnH100L4AndMi300x) {
    // softmax 64 x 256 and layernorm 32 x 768, cold L2. DRAM reads: the input once, one byte a
    // value (the second and third passes over a row hit the L1 / L2), and layernorm's gamma and
    // beta once (768 bytes each); y stays in the write-back L2: softmax 16,384 B, layernorm
    // 24,576 + 1,536 = 26,112 B.
    // a100 refuses fp8 traces (no fp8 rate); mi300x (gfx942) runs them with CDNA3's fp8
    // conversions, in FNUZ.
    for (const char* chip_name : {"a100", "h100", "l4", "mi300x"}) {
        SCOPED_TRACE(chip_name);
        const std::string name = chip_name;
        std::vector<std::string> ops = {"softmax s8 rows=64 cols=256 dtype=int8", "layernorm l8 rows=32 cols=768 dtype=int8"};
        if (name != "a100")
            ops.insert(ops.end(), {"softmax s4 rows=64 cols=256 dtype=fp8_e4m3", "layernorm l5 rows=32 cols=768 dtype=fp8_e5m2"});
        const RunReport report = run(test::shipped_config(name, {"gpu.cold_l2_per_op=true"}), test::write_trace(ops), true);
        ASSERT_EQ(report.ops.size(), ops.size());
        for (const OpReport& r : report.ops) {
            SCOPED_TRACE(r.op.name);
            EXPECT_EQ(r.model, "simt");
            const bool ln = r.op.kind == OpKind::layernorm;
            EXPECT_EQ(r.bytes.at("hbm"), ln ? 26112 : 16384);
            ASSERT_TRUE(r.numerics);
            EXPECT_TRUE(r.numerics->passed);
            EXPECT_EQ(r.numerics->checked, ln ? 32 * 768 : 64 * 256);
            ASSERT_TRUE(r.numerics->quantization.has_value());
            EXPECT_EQ(r.numerics->quantization->values, ln ? 32 * 768 : 64 * 256);
            EXPECT_GT(r.numerics->quantization->max_abs, 0.0);
        }
    }
}

}  // namespace
}  // namespace accelsim::eight_bit_rows_test
