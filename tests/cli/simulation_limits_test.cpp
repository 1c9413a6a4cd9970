// Bounded work and memory, decided before running (docs/reliability.md, "Limits"): an op whose
// simulation would exceed a limit stops the run at once with exit 2, naming the op, the estimate
// and the option that raises the limit; nothing runs first, nothing is written. Each run is
// measured (peak RSS from wait4, wall time) so a refusal that came only after trying would show.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/accelsim_process.h"

namespace fs = std::filesystem;
using namespace accelsim_test;

namespace {

const std::string kSource = ACCELSIM_SOURCE_DIR;

fs::path trace_of(const fs::path& dir, const std::string& lines) {
    const fs::path path = dir / "t.trace";
    write_file(path, "# accelsim-trace 1\n" + lines);
    return path;
}

struct Refusal {
    Measured run;
    std::string err;
};

Refusal run_refused(const std::vector<std::string>& args, const fs::path& dir) {
    Refusal r;
    r.run = run_measured(args, dir);
    r.err = slurp(dir / "stderr");
    // Refused before anything ran: well under a second and SystemC's footprint (about 15 MB).
    EXPECT_EQ(r.run.exit_code, 2) << r.err;
    EXPECT_LT(r.run.max_rss_kib, 100 * 1024) << r.err;
    EXPECT_LT(r.run.seconds, 20.0) << r.err;  // a hang guard; measured 0.03-0.1 s
    return r;
}

}  // namespace

TEST(SimulationLimits, AHugeGemmOnATpuIsRefusedForItsTrafficNamingTheOpAndTheOption) {
    // m = n = k = 10^6: 1.95e9 tile steps on tpu_v4 (plan_size) moving 2.98 PB; it used to grow to
    // 13 GB in two minutes and end in bad_alloc. A timing-only run holds no plan (its steps are
    // made on demand), so its traffic, not its memory, is what cannot be afforded.
    const fs::path dir = scratch_dir();
    const fs::path trace = trace_of(dir, "matmul small m=128 n=128 k=128\nmatmul huge m=1000000 n=1000000 k=1000000\n");
    const Refusal r = run_refused({"--config", kSource + "/configs/tpu_v4.json", "--trace", trace.string(), "--json",
                                   (dir / "r.json").string()},
                                  dir);
    EXPECT_TRUE(contains(r.err, trace.string() + ":3: op 'huge' (matmul m=1000000 n=1000000 k=1000000): simulating it "
                                                 "would move about 2.98 PB through the memory model (1.95e+09 tile "
                                                 "steps), more than the limit of 200 GB (--max-traffic BYTES raises it"))
        << r.err;
    EXPECT_EQ(slurp(dir / "stdout"), "");   // decided before the first op ran: no table started
    EXPECT_FALSE(fs::exists(dir / "r.json"));
}

TEST(SimulationLimits, AHugeGemmWithValidationIsRefusedForTheMemoryOfItsOperands) {
    // With --validate (its MAC limit raised) the operands and results are held: 2e12 operands as
    // floats with their per-unit copies (8 bytes each) and 1e12 results and references (16 bytes):
    // 32 TB.
    const fs::path dir = scratch_dir();
    const fs::path trace = trace_of(dir, "matmul huge m=1000000 n=1000000 k=1000000\n");
    const Refusal r = run_refused({"--quiet", "--validate", "--validate-max-macs", "1e20", "--config",
                                   kSource + "/configs/tpu_v4.json", "--trace", trace.string()},
                                  dir);
    EXPECT_TRUE(contains(r.err, ":2: op 'huge' (matmul m=1000000 n=1000000 k=1000000): simulating it would hold about "
                                "32 TB of host memory (1.95e+09 tile steps), more than the limit of 8 GB "
                                "(--max-memory BYTES raises it)"))
        << r.err;
}

TEST(SimulationLimits, ATimelineCountsTheRecordsItWouldHold) {
    // --perfetto records every DMA chunk's bytes and a span per MXU and transfer per step:
    // m = n = k = 4096 on tpu_v4 moves 302 MB (73,728 chunks of 4 KiB) in 64 steps, so
    // 2 x (73,728 x 56 + 64 x 7 x 80) bytes = 8.33 MB (vectors at twice what they hold; measured
    // on m = n = k = 8192: 35 MB more peak RSS with --perfetto, estimated 48.9 MB). The same op
    // and limit without a timeline holds no records and runs.
    const fs::path dir = scratch_dir();
    const fs::path trace = trace_of(dir, "matmul g m=4096 n=4096 k=4096\n");
    const std::vector<std::string> base = {"--quiet", "--config", kSource + "/configs/tpu_v4.json", "--trace",
                                           trace.string(), "--max-memory", "5e6"};
    std::vector<std::string> timeline = base;
    timeline.insert(timeline.end(), {"--perfetto", (dir / "t.json").string()});
    const Refusal r = run_refused(timeline, dir);
    EXPECT_TRUE(contains(r.err, ":2: op 'g' (matmul m=4096 n=4096 k=4096): simulating it would hold about 8.33 MB of "
                                "host memory (64 tile steps, 7.37e+04 DMA chunks recorded for the timeline), more than "
                                "the limit of 5 MB (--max-memory BYTES raises it)"))
        << r.err;
    EXPECT_FALSE(fs::exists(dir / "t.json"));
    EXPECT_EQ(run_measured(base, dir).exit_code, 0) << slurp(dir / "stderr");
}

TEST(SimulationLimits, ATimingOnlyGemmHoldsTheSameMemoryWhateverItsStepCount) {
    // 25,000 and 200,000 tile steps of 8 x 128 x 128 (VMEM cut to 80,000 bytes, so the smallest
    // tile is the only one that fits): the steps are made on demand and the pipelines hold the
    // few in flight. When the plan held every step, peak RSS grew by about 290 bytes per step
    // (24 MB and 74 MB); now both runs peak at SystemC's and the chip's fixed footprint.
    const fs::path dir = scratch_dir();
    long rss[2] = {0, 0};
    const int rows[2] = {200'000, 1'600'000};
    for (int i = 0; i < 2; ++i) {
        const fs::path trace = trace_of(dir, "matmul g m=" + std::to_string(rows[i]) + " n=128 k=128\n");
        const Measured m = run_measured({"--quiet", "--config", kSource + "/configs/tpu_v4.json", "--trace",
                                         trace.string(), "--set", "tpu.vmem_bytes=80000", "--json",
                                         (dir / "r.json").string()},
                                        dir);
        ASSERT_EQ(m.exit_code, 0) << slurp(dir / "stderr");
        rss[i] = m.max_rss_kib;
        // m / 8 rows per tile / 2 cores steps on core 0.
        const std::string steps = "\"chip.core0.steps\": {\n          \"description\": \"pipeline steps (tiles) of this "
                                  "core\",\n          \"unit\": \"tiles\",\n          \"value\": " +
                                  std::to_string(rows[i] / 16) + ".0";
        EXPECT_NE(slurp(dir / "r.json").find(steps), std::string::npos) << steps;
    }
    ::testing::Test::RecordProperty("rss_small_kib", std::to_string(rss[0]));
    ::testing::Test::RecordProperty("rss_large_kib", std::to_string(rss[1]));
    // 175,000 more steps at the old 290 bytes each would add 50 MB; allow 4 MB of noise.
    EXPECT_LT(rss[1] - rss[0], 4 * 1024) << rss[0] << " KiB, then " << rss[1] << " KiB";
}

TEST(SimulationLimits, ALongGemmIsRefusedForItsTrafficAndRunsOnceTheLimitIsRaised) {
    // m = n = k = 4096 bf16 on tpu_v4: each core's plan moves A and B per output tile block:
    // 302 MB through the memory model (plan_size; tests/tpu checks it against the built plan).
    const fs::path dir = scratch_dir();
    const fs::path trace = trace_of(dir, "matmul g m=4096 n=4096 k=4096\n");
    const std::vector<std::string> base = {"--quiet", "--config", kSource + "/configs/tpu_v4.json", "--trace",
                                           trace.string()};
    std::vector<std::string> low = base;
    low.insert(low.end(), {"--max-traffic", "1e8"});
    const Refusal r = run_refused(low, dir);
    EXPECT_TRUE(contains(r.err, ":2: op 'g' (matmul m=4096 n=4096 k=4096): simulating it would move about 302 MB "
                                "through the memory model (64 tile steps), more than the limit of 100 MB "
                                "(--max-traffic BYTES raises it"))
        << r.err;
    std::vector<std::string> enough = base;
    enough.insert(enough.end(), {"--max-traffic", "3.1e8"});
    EXPECT_EQ(run_measured(enough, dir).exit_code, 0) << slurp(dir / "stderr");
}

TEST(SimulationLimits, ValidationOfTooManyMacsIsRefused) {
    // 20000^3 fp32 = 8e12 MACs, eight times the default 1e12; it used to run for hours in 3.9 GB.
    const fs::path dir = scratch_dir();
    const fs::path trace = trace_of(dir, "matmul v m=20000 n=20000 k=20000 dtype=fp32\n");
    const Refusal r = run_refused(
        {"--quiet", "--validate", "--config", kSource + "/configs/tpu_v4.json", "--trace", trace.string()}, dir);
    EXPECT_TRUE(contains(r.err, "op 'v' (matmul m=20000 n=20000 k=20000): checking its 8e+12 MACs against Eigen would "
                                "take too long; the limit is 1e+12 MACs (--validate-max-macs N raises it"))
        << r.err;
}

TEST(SimulationLimits, ASteppedArrayIsRefusedForItsPeCycles) {
    // systolic_8x8 steps its array clock by clock: m = n = k = 10^5 takes about 10^15 / 64 cycles
    // of 64 PEs, about 10^15 PE-cycles (the closed form's cycles times 64).
    const fs::path dir = scratch_dir();
    const fs::path trace = trace_of(dir, "matmul s m=100000 n=100000 k=100000\n");
    const Refusal r =
        run_refused({"--quiet", "--config", kSource + "/configs/systolic_8x8.json", "--trace", trace.string()}, dir);
    EXPECT_TRUE(contains(r.err, "op 's' (matmul m=100000 n=100000 k=100000): stepping its array clock by clock would "
                                "take about 1e+15 PE-cycles, more than the limit of 1e+12 PE-cycles (--max-pe-cycles N "
                                "raises it"))
        << r.err;
}

TEST(SimulationLimits, ALimitMustBeAPositiveNumber) {
    const fs::path dir = scratch_dir();
    const fs::path trace = trace_of(dir, "matmul g m=8 n=8 k=8\n");
    for (const char* bad : {"0", "-5", "nan", "lots"}) {
        const Refusal r = run_refused({"--quiet", "--config", kSource + "/configs/tpu_v4.json", "--trace",
                                       trace.string(), "--max-memory", bad},
                                      dir);
        EXPECT_TRUE(contains(r.err, "max-memory")) << bad << ": " << r.err;
    }
}
