// Sampled simulation (gpu.sampling = "waves", docs/gpu.md "Sampled simulation") against full
// simulation of the same trace on a100: every op's cycles within 2%, and the ops with many waves
// really sampled. The reference is the full simulation (the chip's own cycle-level result);
// the extrapolation arithmetic itself is worked by hand in tests/simt/wave_sampling_test.cpp.
// Slow tier: the full runs of the many-wave ops take tens of seconds (loaded machine: minutes).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/config/config_loader.h"
#include "tests/gpu_engine/engine_run.h"

namespace accelsim::wave_sampling_test {
namespace {

namespace fs = std::filesystem;

// One file per test: ctest runs the tests of this file side by side.
std::string write_trace(const std::string& name, const std::string& body) {
    const fs::path dir = fs::path(::testing::TempDir()) / "accelsim_wave_sampling";
    fs::create_directories(dir);
    const fs::path path = dir / (name + ".trace");
    std::ofstream(path) << "# accelsim-trace 1\n" << body;
    return path.string();
}

TEST(GpuSampling, SampledOpsWithinTwoPercentOfFullSimulationOnA100) {
    // Every op with an empty L2 (gpu.cold_l2_per_op), so each op's error is its own sampling's,
    // not the L2 a sampled op before it left (docs/gpu.md: that effect is measured separately).
    // A softmax of 32768 rows of 256 (8192 blocks of 4 rows, waves of 1296: sampled) and one of
    // 65536 rows of 128; GEMMs of one and two waves (512^3; 1000^3, whose tile grid has edge tiles)
    // and a grid-stride elementwise op (one wave): never skipped, so exactly the full result.
    const std::string trace = write_trace("cold_ops",
        "softmax sm256 rows=32768 cols=256 dtype=fp16\n"
        "softmax sm128 rows=65536 cols=128 dtype=fp16\n"
        "matmul g512 m=512 n=512 k=512 dtype=fp16\n"
        "matmul g1000 m=1000 n=1000 k=1000 dtype=fp16\n"
        "gelu act n=4194304 dtype=fp16\n");
    const std::string a100 = std::string(ACCELSIM_SOURCE_DIR) + "/configs/a100.json";
    const RunReport full = test::run(load_config(a100, {"gpu.sampling=off", "gpu.cold_l2_per_op=true"}), trace);
    const RunReport sampled = test::run(load_config(a100, {"gpu.sampling=waves", "gpu.cold_l2_per_op=true"}), trace);
    ASSERT_EQ(full.ops.size(), sampled.ops.size());
    for (std::size_t i = 0; i < full.ops.size(); ++i) {
        const OpReport& f = full.ops[i];
        const OpReport& s = sampled.ops[i];
        SCOPED_TRACE(f.op.name);
        EXPECT_FALSE(f.sampling.has_value());
        const double error = std::fabs(static_cast<double>(s.cycles) - static_cast<double>(f.cycles)) /
                             static_cast<double>(f.cycles);
        EXPECT_LE(error, 0.02) << f.cycles << " full, " << s.cycles << " sampled";
        if (s.sampling) {
            EXPECT_LT(s.sampling->simulated_blocks, s.sampling->total_blocks);
            EXPECT_EQ(static_cast<double>(s.sampling->total_blocks), test::stat(f, "simt.blocks"));
            // Instructions are extrapolated: identical blocks, so within 2% of the full count too.
            EXPECT_NEAR(test::stat(s, "simt.issued") / test::stat(f, "simt.issued"), 1.0, 0.02);
        } else {
            EXPECT_EQ(s.cycles, f.cycles);
        }
    }
    // The 65536-row softmax (8192 blocks of 8 rows, 6.3 waves) converges and skips a wave
    // (measured: 6896 of 8192 blocks simulated). The 32768-row one sits at the edge of the 1 %
    // criterion: it was sampled the same way until the DRAM refresh fix of 2026-11-27 moved its
    // wave times (before: sampled, 28,178 cycles; since: not sampled, 28,183, the full run's), so
    // either outcome is checked by the bound above.
    ASSERT_TRUE(sampled.ops[1].sampling.has_value());
    EXPECT_EQ(sampled.ops[1].sampling->simulated_blocks, 6896);
    EXPECT_EQ(sampled.ops[1].sampling->total_blocks, 8192);
    for (std::size_t i = 2; i < 5; ++i) EXPECT_FALSE(sampled.ops[i].sampling.has_value());
    EXPECT_NEAR(static_cast<double>(sampled.total_cycles()) / static_cast<double>(full.total_cycles()), 1.0, 0.01);
}

TEST(GpuSampling, OpsAfterASampledOpSeeTheL2TheFullRunLeaves) {
    // The warm L2 (the default): a gelu over the sampled softmax's 16 MB output, then a residual
    // add. The skipped wave's blocks replayed untimed into the L2 leave the lines the full run
    // leaves (measured 2026-11-28: both ops exactly the full run's cycles and HBM bytes; before the
    // replay the add was off by -6.6 %, its HBM bytes by 2.2 MB, the skipped blocks' dirty lines
    // missing), so each later op is held to half a percent, the mean bar.
    const std::string trace = write_trace("warm_after_sampled",
        "softmax sm rows=65536 cols=128 dtype=fp16\n"
        "gelu act n=8388608 dtype=fp16\n"
        "add res n=8388608 dtype=fp16\n");
    const std::string a100 = std::string(ACCELSIM_SOURCE_DIR) + "/configs/a100.json";
    const RunReport full = test::run(load_config(a100, {"gpu.sampling=off"}), trace);
    const RunReport sampled = test::run(load_config(a100, {"gpu.sampling=waves"}), trace);
    ASSERT_EQ(sampled.ops.size(), 3u);
    ASSERT_TRUE(sampled.ops[0].sampling.has_value());
    EXPECT_EQ(sampled.ops[0].sampling->simulated_blocks, 6896);
    for (std::size_t i = 1; i < 3; ++i) {
        SCOPED_TRACE(full.ops[i].op.name);
        EXPECT_FALSE(sampled.ops[i].sampling.has_value());
        EXPECT_NEAR(static_cast<double>(sampled.ops[i].cycles) / static_cast<double>(full.ops[i].cycles), 1.0, 0.005);
        EXPECT_NEAR(static_cast<double>(sampled.ops[i].bytes.at("hbm")) / static_cast<double>(full.ops[i].bytes.at("hbm")), 1.0,
                    0.005);
    }
}

TEST(GpuSampling, LoopTripsSampledWithinTheirBoundAndValuesExact) {
    // gpu.sampling waves_and_trips: a GEMM of one wave on a100 (1024 x 3456 in tiles of 256 x 128:
    // 108 blocks, one an SM) whose K loop of 4096 / 32 slices, one a trip, has 127 back-edges.
    // Measured 2026-11-28: 69 trips skipped in 4 skips, 156,297 cycles against the full run's
    // 156,418 (-0.077 %, bound 0.21 %), in 4.5 s against 7.8 s. The skipped trips run
    // functionally, so the output is the full run's: --validate checks it against Eigen.
    const std::string trace = write_trace("loop_trips", "matmul w m=1024 n=3456 k=4096 dtype=fp16\n");
    const std::string a100 = std::string(ACCELSIM_SOURCE_DIR) + "/configs/a100.json";
    const RunReport full = test::run(load_config(a100, {"gpu.sampling=off"}), trace, true);
    const RunReport sampled = test::run(load_config(a100, {"gpu.sampling=waves_and_trips"}), trace, true);
    ASSERT_EQ(sampled.ops.size(), 1u);
    const OpReport& f = full.ops[0];
    const OpReport& s = sampled.ops[0];
    EXPECT_FALSE(f.sampling.has_value());
    ASSERT_TRUE(s.sampling.has_value());
    EXPECT_GT(s.sampling->skipped_trips, 0u);
    EXPECT_GT(s.sampling->trip_skips, 0u);
    EXPECT_EQ(s.sampling->trips_per_block, 127u);
    EXPECT_EQ(s.sampling->simulated_blocks, s.sampling->total_blocks);  // no block skipped
    EXPECT_EQ(test::stat(s, "gpu.sampling.skipped_trips"), static_cast<double>(s.sampling->skipped_trips));
    const double error = static_cast<double>(s.cycles) / static_cast<double>(f.cycles) - 1.0;
    EXPECT_LE(std::fabs(error), 0.01) << f.cycles << " full, " << s.cycles << " sampled";
    EXPECT_LE(std::fabs(error), s.sampling->error_estimate) << "outside the op's own bound";
    // The skipped trips' instructions are counted as they run: the tensor-core instructions
    // exactly (every trip issues the same), all of them exactly too (the loop has no divergence);
    // timing counters are extrapolated at their rate: HBM bytes within 2 %.
    EXPECT_EQ(test::stat(s, "simt.mma_issued"), test::stat(f, "simt.mma_issued"));
    EXPECT_EQ(test::stat(s, "simt.issued"), test::stat(f, "simt.issued"));
    EXPECT_NEAR(static_cast<double>(s.bytes.at("hbm")) / static_cast<double>(f.bytes.at("hbm")), 1.0, 0.02);
    // The values: every output checked, both runs pass.
    ASSERT_TRUE(f.numerics.has_value());
    ASSERT_TRUE(s.numerics.has_value());
    EXPECT_TRUE(f.numerics->passed);
    EXPECT_TRUE(s.numerics->passed);
    EXPECT_EQ(s.numerics->checked, f.numerics->checked);
    EXPECT_EQ(s.numerics->max_abs_err, f.numerics->max_abs_err);  // the same output, bit for bit
}

}  // namespace
}  // namespace accelsim::wave_sampling_test
