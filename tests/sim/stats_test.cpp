// Stats are defined once (StatDef), carry a unit from a closed set, and every stat a report holds
// is an instance of a catalogued definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "models/common/stats.h"
#include "models/gpu/gpu_stats.h"
#include "models/memory/memory_stats.h"
#include "models/tpu/tpu_stats.h"
#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/trace/trace_reader.h"

namespace accelsim::stats_test {
namespace {

const std::string kSource = ACCELSIM_SOURCE_DIR;

TEST(Stats, PlaceholdersAreFilledInOrderAndMatchedBack) {
    const StatDef& def = tpu::stat::mxu_unit_busy_cycles;  // chip.core{core}.mxu{mxu}.busy_cycles
    EXPECT_EQ(def.placeholders(), 2);
    EXPECT_EQ(def.instance({"3", "1"}), "chip.core3.mxu1.busy_cycles");
    EXPECT_TRUE(def.matches("chip.core3.mxu1.busy_cycles"));
    EXPECT_TRUE(def.matches("chip.core12.mxu10.busy_cycles"));
    EXPECT_FALSE(def.matches("chip.core.mxu1.busy_cycles"));  // an empty fill
    EXPECT_FALSE(def.matches("chip.core3.mxu1.busy_cycles_x"));
    EXPECT_THROW(def.instance({"3"}), std::logic_error);
    EXPECT_EQ(find_stat_def("chip.core0.mxu0.busy_cycles"), &def);
    EXPECT_EQ(find_stat_def("simt.ipc"), &gpu::stat::ipc);
    EXPECT_EQ(find_stat_def("simt.ipcx"), nullptr);
}

TEST(Stats, UnitsPrintAsReportsHaveAlwaysWrittenThem) {
    EXPECT_EQ(to_string(StatUnit::cycles), "cycles");
    EXPECT_EQ(to_string(StatUnit::scheduler_cycles), "scheduler-cycles");
    EXPECT_EQ(to_string(StatUnit::picoseconds), "ps");
    EXPECT_EQ(to_string(StatUnit::bytes_per_second), "bytes/s");
    EXPECT_EQ(to_string(StatUnit::enumeration), "enum");
    EXPECT_EQ(gpu::stat::stall_idle.unit(), StatUnit::scheduler_cycles);
}

TEST(Stats, EveryDefinitionHasAUniqueNameAndADescription) {
    std::set<std::string_view> names;
    ASSERT_GT(stat_catalogue().size(), 100u);
    for (const StatDef* def : stat_catalogue()) {
        EXPECT_TRUE(names.insert(def->name()).second) << def->name() << " is defined twice";
        EXPECT_FALSE(def->description().empty()) << def->name();
    }
    // Derived stats say how they are computed.
    EXPECT_EQ(gpu::stat::l2_hit_rate.formula(), "simt.l2_hits / simt.l2_accesses");
    EXPECT_TRUE(gpu::stat::issued.formula().empty());
}

// Every stat of every op of small traces on each chip family is an instance of its definition,
// and the definitions the report's SIMT block reads are present on a SIMT run.
TEST(Stats, EveryReportedStatIsAnInstanceOfACataloguedDefinition) {
    const std::vector<std::pair<std::string, std::string>> runs = {
        {"tpu_v4", "tiny_mixed"}, {"tpu_v1", "tiny_conv"},      {"systolic_8x8", "tiny_gemm"},
        {"a100", "tiny_mixed"},   {"simt_1sm", "simt_teaching"}, {"simt_1sm", "tiny_conv"}};
    const auto& catalogue = stat_catalogue();
    for (const auto& [config, trace] : runs) {
        SCOPED_TRACE(config + " x " + trace);
        const ChipConfig chip = load_config(kSource + "/configs/" + config + ".json", {});
        const std::string path = kSource + "/traces/" + trace + ".trace";
        const RunReport report = run_trace(chip, path, read_trace(path, chip.default_dtype), RunOptions{});
        std::size_t seen = 0;
        for (const OpReport& r : report.ops) {
            for (const StatValue& s : r.stats) {
                ++seen;
                ASSERT_NE(s.def, nullptr) << s.name;
                EXPECT_NE(std::find(catalogue.begin(), catalogue.end(), s.def), catalogue.end()) << s.name;
                EXPECT_TRUE(s.def->matches(s.name)) << s.name << " is not an instance of " << s.def->name();
            }
            if (r.model == "simt") {
                for (const StatDef* d : {&gpu::stat::ipc, &gpu::stat::slots_issued, &gpu::stat::stall_idle,
                                         &gpu::stat::stall_scoreboard, &gpu::stat::stall_pipeline,
                                         &gpu::stat::stall_barrier})
                    EXPECT_TRUE(find_stat(r.stats, *d).has_value()) << r.op.name << " lacks " << d->name();
            }
        }
        EXPECT_GT(seen, 0u);
    }
}

TEST(Stats, LiveCountersRegisterUnderTheUnitsPath) {
    StatsRegistry registry;
    std::uint64_t reads = 7;
    registry.add(memory::stat::dram_channel_reads, {"hbm", "3"}, &reads);
    reads = 9;
    const auto snap = registry.snapshot();
    ASSERT_EQ(snap.size(), 1u);
    EXPECT_EQ(snap[0].name, "hbm.ch3.reads");
    EXPECT_EQ(snap[0].unit(), "bursts");
    EXPECT_EQ(snap[0].value, 9);
}

}  // namespace
}  // namespace accelsim::stats_test
