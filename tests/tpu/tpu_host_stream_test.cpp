// The Edge TPU's parameter cache and host-streamed parameters (tpu.parameter_cache_bytes,
// tpu.host_link_bytes_per_second) and its int8-only refusal, on a small ideal-memory chip whose
// numbers are worked out by hand: the streamed op costs exactly its weight bytes / link bytes per
// cycle more than the same op with cached weights.
#include <gtest/gtest.h>

#include <stdexcept>

#include "models/tpu/tpu_chip_model.h"
#include "tpu_test_chips.h"

namespace accelsim::tpu::tpu_host_stream_test {
namespace {

TpuChipParams edge_like() {
    TpuChipParams p;
    p.cores = 1;
    p.mxus_per_core = 1;
    p.mxu.rows = p.mxu.cols = 8;
    p.mxu.macs_per_pe_per_cycle = {};
    p.mxu.macs_per_pe_per_cycle.int8 = 1;
    p.ideal_memory = true;
    p.clock_hz = 1e9;
    p.int8_only = true;
    p.parameter_cache_bytes = 1000;
    p.host_link_bytes_per_second = 1e9;  // 1 byte per cycle
    return p;
}

TEST(HostStreamedParameters, WholeTensorsAreCachedInTraceOrderTheRestStream) {
    TpuChipModel chip(edge_like(), {});
    const Op a = tpu_test::matmul(8, 16, 32, DType::int8);  // weights 32 x 16 = 512 B
    const Op c = tpu_test::matmul(8, 8, 32, DType::int8);   // weights 32 x 8 = 256 B
    Op attention = a;
    attention.kind = OpKind::bmm;  // both operands are activations: nothing to cache or stream
    // 1st: 512 <= 1000, cached. 2nd: 512 + 512 > 1000, streamed: 512 B at 1 B/cycle = 512 cycles more
    // than the same op cached. bmm: no parameters. 3rd: 512 + 256 = 768 <= 1000, cached.
    const OpReport first = chip.run(a, nullptr);
    const OpReport second = chip.run(a, nullptr);
    const OpReport bmm = chip.run(attention, nullptr);
    const OpReport third = chip.run(c, nullptr);
    EXPECT_EQ(tpu_test::stat(first, "chip.host_link.stream_bytes"), 0);
    EXPECT_EQ(tpu_test::stat(first, "chip.parameter_cache.used_bytes"), 512);
    EXPECT_EQ(tpu_test::stat(second, "chip.host_link.stream_bytes"), 512);
    EXPECT_EQ(second.cycles, first.cycles + 512);
    EXPECT_EQ(second.bytes.at("host_link"), 512);
    // The array needs 8 x 16 x 32 / 64 = 64 cycles of MACs: the link (512) bounds the op.
    EXPECT_EQ(second.roofline.bound, "host_link");
    EXPECT_DOUBLE_EQ(second.roofline.cycles.at("host_link"), 512.0);
    EXPECT_GE(static_cast<double>(second.cycles), second.roofline.bound_cycles);
    EXPECT_EQ(tpu_test::stat(bmm, "chip.host_link.stream_bytes"), 0);
    EXPECT_EQ(tpu_test::stat(bmm, "chip.parameter_cache.used_bytes"), 512);
    EXPECT_EQ(tpu_test::stat(third, "chip.host_link.stream_bytes"), 0);
    EXPECT_EQ(tpu_test::stat(third, "chip.parameter_cache.used_bytes"), 768);
    EXPECT_EQ(first.bytes.count("host_link"), 0u);
}

TEST(HostStreamedParameters, AnInt8OnlyChipRefusesOtherDtypes) {
    TpuChipModel chip(edge_like(), {});
    try {
        chip.run(tpu_test::matmul(8, 8, 8, DType::bf16), nullptr);
        FAIL() << "a bf16 matmul ran on an int8-only chip";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("int8 only"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace accelsim::tpu::tpu_host_stream_test
