// `accelsim membench`: argument parsing, the run on hand-built chip configs, text and JSON output.
#include "sim/membench/membench.h"
#include "sim/input_error.h"
#include "sim/config/model_params.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace accelsim::membench_test {
namespace {

// An A100-like memory system: 108 SMs, 40 MB L2 in 80 slices, HBM2e 2039 GB/s.
ChipConfig a100_like() {
    ChipConfig c;
    c.name = "a100_like";
    c.kind = "simt";
    c.clock_mhz = 1410;
    c.gpu.sms = 108;
    c.l2.size_bytes = 40 << 20;  // 80 slices x 16 ways x 256 sets x 128 B = 40 MiB
    c.l2.slices = 80;
    c.l2.ways = 16;
    c.l2.bytes_per_cycle_per_slice = 64;
    c.l2.hit_latency_cycles = 200;
    c.interconnect.latency_cycles = 10;
    c.interconnect.bytes_per_cycle_per_port = 64;
    c.hbm.preset = "HBM2E";
    c.hbm.channels = 40;
    c.hbm.pseudo_channels = 2;
    c.hbm.bus_width_bits = 128;
    c.hbm.data_rate_gbps = 3.186;
    c.hbm.row_bytes = 1024;
    return c;
}

ChipConfig tpu_like() {  // one core, no L2, HBM2 1200 GB/s
    ChipConfig c;
    c.name = "tpu_like";
    c.kind = "systolic";
    c.tpu.cores = 2;
    c.hbm.preset = "HBM2";
    c.hbm.channels = 32;
    c.hbm.data_rate_gbps = 2.34375;
    c.hbm.row_bytes = 1024;
    return c;
}

std::string parse_error(const std::vector<std::string>& args) {
    try {
        parse_membench_args(args);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(Membench, ParsesOptions) {
    const MembenchOptions o = parse_membench_args({"--config", "c.json", "--pattern", "random", "--bytes", "2M",
                                                   "--size", "32", "--json", "out.json", "--set", "hbm.channels=4",
                                                   "--level", "hbm", "--stride", "4096"});
    EXPECT_EQ(o.config_path, "c.json");
    EXPECT_EQ(o.pattern, "random");
    EXPECT_EQ(o.bytes, 2u << 20);
    EXPECT_EQ(o.request_bytes, 32u);
    EXPECT_EQ(o.json_path, "out.json");
    ASSERT_EQ(o.overrides.size(), 1u);
    EXPECT_EQ(o.overrides[0], "hbm.channels=4");
    EXPECT_EQ(o.level, "hbm");
    EXPECT_EQ(*o.stride_bytes, 4096u);
}

TEST(Membench, BadUsageGivesOneClearMessage) {
    EXPECT_NE(parse_error({"--pattern", "stream"}).find("--config FILE is required"), std::string::npos);
    EXPECT_NE(parse_error({"--config", "c.json"}).find("--pattern is required"), std::string::npos);
    EXPECT_NE(parse_error({"--config", "c", "--pattern", "zigzag"}).find("unknown pattern 'zigzag'"), std::string::npos);
    EXPECT_NE(parse_error({"--config", "c", "--pattern", "stream", "--size", "48"}).find("--size must be 32, 64 or 128"),
              std::string::npos);
    EXPECT_NE(parse_error({"--config", "c", "--pattern", "stream", "--bytes", "-5"}).find("--bytes"), std::string::npos);
    EXPECT_NE(parse_error({"--config", "c", "--pattern", "stream", "--frobnicate"}).find("unknown option '--frobnicate'"),
              std::string::npos);
    EXPECT_NE(parse_error({"--config"}).find("--config needs a value"), std::string::npos);
}

TEST(Membench, StreamReachesPeakOnTheHbmAndReportsIt) {
    MembenchOptions o;
    o.pattern = "stream";
    o.level = "hbm";
    o.bytes = 32 << 20;
    const char* json_path = "membench_stream_test.json";
    o.json_path = json_path;
    std::ostringstream out, err;
    ASSERT_EQ(run_membench_on_config(a100_like(), o, out, err), 0) << err.str();
    // Peak = 40 channels x 16 B x 3.186 Gb/s = 2039.04 GB/s.
    EXPECT_NE(out.str().find("2039.0 GB/s"), std::string::npos) << out.str();
    std::ifstream f(json_path);
    const nlohmann::json j = nlohmann::json::parse(f);
    std::remove(json_path);
    for (const char* key : {"peak_gbps", "achieved_gbps", "avg_latency_ns", "p99_latency_ns", "row_hits", "row_misses",
                            "row_conflicts", "l2_hit_rate"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_NEAR(j["peak_gbps"].get<double>(), 2039.04, 1e-6);
    EXPECT_GE(j["achieved_gbps"].get<double>(), 0.9 * 2039.04);
    EXPECT_TRUE(j["l2_hit_rate"].is_null());  // --level hbm
    EXPECT_GE(j["p99_latency_ns"].get<double>(), j["avg_latency_ns"].get<double>());
}

TEST(Membench, RandomSmallReadsShowRowMisses) {
    MembenchOptions o;
    o.pattern = "random";
    o.request_bytes = 32;
    o.bytes = 4 << 20;
    const MembenchReport r = run_membench(tpu_like(), o);
    EXPECT_EQ(r.level, "hbm");  // no L2 on this chip
    EXPECT_LT(r.percent_of_peak, 20.0);
    EXPECT_GT(r.row_misses + r.row_conflicts, 20 * r.row_hits);
}

TEST(Membench, StridedDefaultHitsOneBankWithNewRows) {
    MembenchOptions o;
    o.pattern = "strided";
    o.bytes = 64 * 1000;
    const MembenchReport r = run_membench(tpu_like(), o);
    // Without --stride: one bank, the next row each request; with this unhashed map it is the
    // stride of one row across every bank (1024 B x 32 channels x 4 groups x 4 banks = 512 KiB).
    EXPECT_TRUE(r.one_bank_walk);
    EXPECT_EQ(r.stride_bytes, 0u);
    EXPECT_GE(r.row_conflicts + r.row_misses, 1000u);
    EXPECT_EQ(r.row_hits, 0u);
    EXPECT_LT(r.percent_of_peak, 1.0);
    o.stride_bytes = 1024u * 32 * 4 * 4;
    const MembenchReport same = run_membench(tpu_like(), o);
    EXPECT_EQ(same.stride_bytes, 1024u * 32 * 4 * 4);
    EXPECT_FALSE(same.one_bank_walk);
    EXPECT_EQ(same.simulated_ns, r.simulated_ns);
    EXPECT_EQ(same.row_conflicts, r.row_conflicts);
}

// With hashed channels (256 B runs, as GPUs interleave), no constant stride stays in one bank;
// the walk does, through the address map: every request opens a new row of one bank, so the run
// is one row cycle (tRC) per request, and its
// second 32 B burst is a row hit.
TEST(Membench, StridedDefaultStaysInOneBankWhenChannelsAreHashed) {
    ChipConfig chip = a100_like();
    chip.hbm.interleave_bytes = 256;
    MembenchOptions o;
    o.pattern = "strided";
    o.level = "hbm";
    o.bytes = 64 * 1000;
    const MembenchReport r = run_membench(chip, o);
    EXPECT_TRUE(r.one_bank_walk);
    // The first burst of each 64 B request opens a new row, the second hits it, except where a
    // refresh of the bank falls between them (about 10 in the 45 us, one per tREFI).
    EXPECT_EQ(r.row_hits + r.row_conflicts + r.row_misses, 2000u);
    EXPECT_GE(r.row_hits, 980u);
    const memory::DramTiming& t = memory_hierarchy_params_from_config(chip).dram.timing;
    const double row_cycle_bound_gbps = 64 / (t.tRC * t.tCK);  // bytes per ns = GB/s
    EXPECT_LE(r.achieved_gbps, row_cycle_bound_gbps * 1.001);
    EXPECT_GE(r.achieved_gbps, 0.9 * row_cycle_bound_gbps);
    // A stride of one row across every bank, the old default, spreads over hashed channels.
    o.stride_bytes = 1024u * 80 * 4 * 4;
    EXPECT_GT(run_membench(chip, o).achieved_gbps, 10 * r.achieved_gbps);
}

TEST(Membench, L2LevelReportsHitRate) {
    MembenchOptions o;
    o.pattern = "mixed";
    o.bytes = 8 << 20;
    const MembenchReport r = run_membench(a100_like(), o);
    EXPECT_EQ(r.level, "l2");
    ASSERT_TRUE(r.l2_hit_rate.has_value());
    // Each 64 B request covers half a 128 B line; the next request of the same stream covers the
    // other half, which is a sector miss: streaming traffic has (almost) no L2 hits.
    EXPECT_LT(*r.l2_hit_rate, 0.05);
    EXPECT_GT(r.l2_sector_misses, 0u);
    EXPECT_EQ(r.l2_evictions, 0u);  // 8 MiB of traffic fits in the 40 MiB L2
    std::ostringstream out;
    print_membench_report(r, out);
    EXPECT_NE(out.str().find("L2                 hit rate"), std::string::npos);
}

TEST(Membench, L2DramSchedulingIsChosenAndReported) {
    EXPECT_EQ(parse_membench_args({"--config", "c", "--pattern", "mixed", "--l2-dram", "blocking"}).l2_dram, "blocking");
    EXPECT_EQ(parse_membench_args({"--config", "c", "--pattern", "mixed"}).l2_dram, "queued");
    EXPECT_NE(parse_error({"--config", "c", "--pattern", "mixed", "--l2-dram", "fifo"})
                  .find("--l2-dram must be queued or blocking, got 'fifo'"),
              std::string::npos);
    // Triad behind the L2: with the controllers' FR-FCFS queues seeing the L2's misses the DRAM
    // keeps more of its bandwidth than when each miss is served in call order (docs/memory.md:
    // a100 64 MiB, 59 % vs 39 % of peak). Same traffic, same L2 decisions: equal L2 counters.
    MembenchOptions o;
    o.pattern = "mixed";
    o.bytes = 8 << 20;
    const MembenchReport queued = run_membench(a100_like(), o);
    o.l2_dram = "blocking";
    const MembenchReport blocking = run_membench(a100_like(), o);
    EXPECT_EQ(queued.l2_dram, "queued");
    EXPECT_EQ(membench_report_json(blocking)["l2_dram"], "blocking");
    EXPECT_EQ(queued.l2_misses, blocking.l2_misses);
    EXPECT_EQ(queued.hbm_bytes, blocking.hbm_bytes);
    EXPECT_GT(queued.achieved_gbps, 1.2 * blocking.achieved_gbps);
}

TEST(Membench, L2LevelOnAChipWithoutL2IsAnError) {
    MembenchOptions o;
    o.level = "l2";
    std::ostringstream out, err;
    EXPECT_EQ(run_membench_on_config(tpu_like(), o, out, err), 2);
    EXPECT_NE(err.str().find("has no L2"), std::string::npos) << err.str();
}

TEST(Membench, BadHbmConfigIsAnInputError) {
    ChipConfig c = tpu_like();
    c.hbm.preset = "GDDR7";
    MembenchOptions o;
    std::ostringstream out, err;
    EXPECT_EQ(run_membench_on_config(c, o, out, err), 2);
    EXPECT_NE(err.str().find("hbm.preset"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace accelsim::membench_test
