// --perfetto: the timeline is valid Trace Event JSON (what ui.perfetto.dev loads), no track holds
// overlapping spans, and its times agree with the report's cycles: each op's span starts at
// start_cycle / clock and lasts cycles / clock, each unit's spans lie inside their op, and the
// bandwidth counters integrate to the bytes the report counts at that level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/perfetto.h"
#include "tests/accelsim_process.h"

using nlohmann::json;
using namespace accelsim_test;

namespace {

struct Timeline {
    json report, trace;
};

Timeline run_with_timeline(const std::string& config, const std::string& trace, const std::string& extra = "") {
    const fs::path dir = scratch_dir();
    const Result r = run("--config configs/" + config + " --trace traces/" + trace + extra + " -q --json '" +
                         (dir / "report.json").string() + "' --perfetto '" + (dir / "timeline.json").string() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return {json::parse(slurp(dir / "report.json")), json::parse(slurp(dir / "timeline.json"))};
}

// The schema Perfetto's JSON importer reads, and the properties the timeline promises.
void check_trace_event_schema(const json& trace) {
    ASSERT_TRUE(trace.is_object());
    ASSERT_TRUE(trace.contains("traceEvents"));
    ASSERT_TRUE(trace["traceEvents"].is_array());
    std::map<int, std::string> thread_names;
    std::map<int, std::vector<std::pair<double, double>>> spans;
    std::map<std::string, std::vector<double>> counter_times;
    for (const json& e : trace["traceEvents"]) {
        ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e;
        ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e;
        ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e;
        const std::string ph = e["ph"];
        if (ph == "M") {
            ASSERT_TRUE(e["args"].is_object()) << e;
            if (e["name"] == "thread_name") thread_names[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
        } else if (ph == "X") {
            ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number() && e["tid"].is_number_integer()) << e;
            EXPECT_GE(e["dur"].get<double>(), 0.0) << e;
            EXPECT_GE(e["ts"].get<double>(), 0.0) << e;
            spans[e["tid"].get<int>()].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
        } else if (ph == "C") {
            ASSERT_TRUE(e["ts"].is_number() && e["args"].is_object() && e["args"].size() == 1) << e;
            ASSERT_TRUE(e["args"].begin()->is_number()) << e;
            counter_times[e["name"].get<std::string>()].push_back(e["ts"].get<double>());
        } else {
            ADD_FAILURE() << "unexpected phase " << ph;
        }
    }
    // Every track is named, its spans come in time order and none overlaps the next.
    for (const auto& [tid, list] : spans) {
        EXPECT_TRUE(thread_names.count(tid)) << "tid " << tid << " has no thread_name";
        for (std::size_t i = 1; i < list.size(); ++i) {
            EXPECT_LE(list[i - 1].first, list[i].first) << thread_names[tid];
            EXPECT_LE(list[i - 1].second, list[i].first + 1e-9) << thread_names[tid] << ": spans overlap at " << list[i].first;
        }
    }
    std::set<std::string> unique_names;
    for (const auto& [tid, name] : thread_names) EXPECT_TRUE(unique_names.insert(name).second) << "two tracks named " << name;
    for (const auto& [name, times] : counter_times)
        for (std::size_t i = 1; i < times.size(); ++i) EXPECT_LT(times[i - 1], times[i]) << name << " is not monotone";
}

std::map<std::string, int> tids_by_name(const json& trace) {
    std::map<std::string, int> tids;
    for (const json& e : trace["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name") tids[e["args"]["name"].get<std::string>()] = e["tid"].get<int>();
    return tids;
}

// Op spans equal the report's cycles; unit spans lie inside the op of the same name.
void check_times_against_report(const json& report, const json& trace) {
    const double hz = trace["otherData"]["clock_hz"].get<double>();
    EXPECT_DOUBLE_EQ(hz, report["config"]["clock_mhz"].get<double>() * 1e6);
    const int ops_tid = tids_by_name(trace).at("ops");
    std::vector<json> op_spans;
    for (const json& e : trace["traceEvents"])
        if (e["ph"] == "X" && e["tid"] == ops_tid) op_spans.push_back(e);
    const json& ops = report["ops"];
    ASSERT_EQ(op_spans.size(), ops.size());
    std::map<std::string, std::pair<double, double>> window;  // op name -> [ts, ts + dur]
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const json& op = ops[i];
        const json& span = op_spans[i];
        EXPECT_EQ(span["name"], op["name"]);
        const double start_us = op["start_cycle"].get<double>() / hz * 1e6;
        const double dur_us = op["cycles"].get<double>() / hz * 1e6;
        EXPECT_NEAR(span["ts"].get<double>(), start_us, 1e-9 * std::max(1.0, start_us)) << op["name"];
        EXPECT_NEAR(span["dur"].get<double>(), dur_us, 1e-9 * std::max(1.0, start_us + dur_us)) << op["name"];
        EXPECT_EQ(span["args"]["bound"], op["bound"]);
        EXPECT_EQ(span["args"]["cycles"], op["cycles"]);
        EXPECT_EQ(span["args"]["bytes"], op["bytes"]);
        window[op["name"].get<std::string>()] = {span["ts"].get<double>(), span["ts"].get<double>() + span["dur"].get<double>()};
    }
    for (const json& e : trace["traceEvents"]) {
        if (e["ph"] != "X" || e["tid"] == ops_tid || e["cat"] != "unit") continue;
        const std::string name = e["name"];
        const auto it = window.find(e["args"]["op"].get<std::string>());
        ASSERT_NE(it, window.end()) << "unit span " << name << " names no op";
        EXPECT_GE(e["ts"].get<double>(), it->second.first - 1e-9) << name;
        EXPECT_LE(e["ts"].get<double>() + e["dur"].get<double>(), it->second.second + 1e-9) << name;
    }
}

// The integral of a bandwidth counter (GB/s, each value held until the next sample) in bytes.
double integrated_bytes(const json& trace, const std::string& counter) {
    std::vector<std::pair<double, double>> samples;
    for (const json& e : trace["traceEvents"])
        if (e["ph"] == "C" && e["name"] == counter) samples.emplace_back(e["ts"].get<double>(), e["args"]["GB/s"].get<double>());
    double bytes = 0;
    for (std::size_t i = 0; i + 1 < samples.size(); ++i)
        bytes += samples[i].second * 1e9 * (samples[i + 1].first - samples[i].first) * 1e-6;
    return bytes;
}

// A run's timeline, checked against the schema and its report's cycles.
Timeline checked_timeline(const std::string& config, const std::string& trace, const std::string& extra = "") {
    Timeline t = run_with_timeline(config, trace, extra);
    check_trace_event_schema(t.trace);
    check_times_against_report(t.report, t.trace);
    return t;
}

// A level's bandwidth counter carries exactly the bytes the report counts at that level.
void expect_counter_carries_the_reported_bytes(const Timeline& t, const std::string& level) {
    const double reported = t.report["totals"]["bytes"][level].get<double>();
    ASSERT_GT(reported, 0.0) << level;
    EXPECT_NEAR(integrated_bytes(t.trace, level + " bandwidth"), reported, 1e-6 * reported) << level;
}

// No interval of a level's bandwidth counter exceeds the level's peak, but an op's first (bytes
// done there may have moved before the op started: they are not moved into the op before).
void expect_counter_within_peak(const Timeline& t, const std::string& level, double peak_gb_per_s) {
    std::set<double> op_starts;
    for (const json& e : t.trace["traceEvents"])
        if (e["ph"] == "X" && e["cat"] == "op") op_starts.insert(e["ts"].get<double>());
    std::size_t samples = 0;
    for (const json& e : t.trace["traceEvents"]) {
        if (e["ph"] != "C" || e["name"] != level + " bandwidth" || op_starts.count(e["ts"].get<double>())) continue;
        EXPECT_LE(e["args"]["GB/s"].get<double>(), peak_gb_per_s * (1 + 1e-9)) << level << " at " << e["ts"];
        ++samples;
    }
    EXPECT_GT(samples, 0u) << level;
}

}  // namespace

TEST(Perfetto, TpuV4TimelineHasEveryUnitAndAgreesWithTheReport) {
    const Timeline t = checked_timeline("tpu_v4.json", "tiny_mixed.trace");
    // tpu_v4: 2 cores x (4 MXUs, a DMA engine, a vector unit).
    const auto tids = tids_by_name(t.trace);
    for (const char* track : {"ops", "core0.mxu0", "core0.mxu3", "core1.mxu0", "core1.mxu3", "core0.dma", "core1.dma",
                              "core0.vector", "core1.vector"})
        EXPECT_TRUE(tids.count(track)) << track;
    EXPECT_FALSE(tids.count("core0.mxu4"));
    EXPECT_FALSE(tids.count("core2.dma"));
    expect_counter_carries_the_reported_bytes(t, "hbm");
    expect_counter_carries_the_reported_bytes(t, "cmem");
    // HBM: 32 channels x 16 bytes x 2.34375 GT/s; CMEM: 2286 bytes per cycle at 1.05 GHz.
    expect_counter_within_peak(t, "hbm", 32 * 16 * 2.34375);
    expect_counter_within_peak(t, "cmem", 2286 * 1.05);
}

TEST(Perfetto, A100TimelineHasKernelsOccupancyAndBandwidth) {
    // Cold L2 per op: with the warm L2 (the default) the report's HBM and L2 bytes also count the
    // carried lines' write-backs and the end flush, which the port's traffic windows do not see
    // yet (docs/outputs.md says so); the counters are checked where both count the same bytes.
    const Timeline t = checked_timeline("a100.json", "tiny_mixed.trace", " --set gpu.cold_l2_per_op=true");
    const auto tids = tids_by_name(t.trace);
    ASSERT_TRUE(tids.count("kernels"));
    // Each op's launch overhead and kernels fill its cycles exactly (one launch after the other).
    const double hz = t.trace["otherData"]["clock_hz"].get<double>();
    for (const json& op : t.report["ops"]) {
        double microseconds = 0;
        for (const json& e : t.trace["traceEvents"])
            if (e["ph"] == "X" && e["tid"] == tids.at("kernels") && e["args"]["op"] == op["name"]) microseconds += e["dur"].get<double>();
        EXPECT_NEAR(microseconds * 1e-6 * hz, op["cycles"].get<double>(), 1e-6 * op["cycles"].get<double>()) << op["name"];
    }
    // Every SM's resident warps lie in 0..64 (an A100 SM holds at most 64 warps), end at 0, and
    // at least one SM held warps.
    std::map<std::string, std::vector<double>> warps;
    for (const json& e : t.trace["traceEvents"])
        if (e["ph"] == "C" && e["name"].get<std::string>().find(".resident_warps") != std::string::npos)
            warps[e["name"]].push_back(e["args"]["warps"].get<double>());
    ASSERT_FALSE(warps.empty());
    EXPECT_TRUE(warps.count("sm0.resident_warps"));
    for (const auto& [name, values] : warps) {
        for (const double v : values) EXPECT_TRUE(v >= 0 && v <= 64) << name << " " << v;
        EXPECT_EQ(values.back(), 0.0) << name;
    }
    expect_counter_carries_the_reported_bytes(t, "hbm");
    expect_counter_carries_the_reported_bytes(t, "l2");
    // HBM2e: 40 channels x 16 bytes x 3.1859375 GT/s.
    expect_counter_within_peak(t, "hbm", 40 * 16 * 3.1859375);
}

TEST(Perfetto, IdealMemoryMxuSpansLastEachMxusCycles) {
    // systolic_8x8: one core, one 8x8 MXU, ideal memory: the MXU's span is the whole op.
    const Timeline t = checked_timeline("systolic_8x8.json", "tiny_gemm.trace");
    const int mxu = tids_by_name(t.trace).at("core0.mxu0");
    std::size_t spans = 0;
    for (const json& e : t.trace["traceEvents"])
        if (e["ph"] == "X" && e["tid"] == mxu) ++spans;
    std::size_t gemms = 0;
    for (const json& op : t.report["ops"]) gemms += op["model"] == "tpu.ideal";
    EXPECT_EQ(spans, gemms);
}

TEST(Perfetto, TimelineChangesNoSimulatedNumberAndIsDeterministic) {
    const fs::path dir = scratch_dir();
    const std::string base = "--config configs/tpu_v4.json --trace traces/bert_base_1layer.trace -q --json '";
    ASSERT_EQ(run(base + (dir / "plain.json").string() + "'").exit_code, 0);
    ASSERT_EQ(run(base + (dir / "a.json").string() + "' --perfetto '" + (dir / "a.trace.json").string() + "'").exit_code, 0);
    ASSERT_EQ(run(base + (dir / "b.json").string() + "' --perfetto '" + (dir / "b.trace.json").string() + "'").exit_code, 0);
    EXPECT_EQ(slurp(dir / "plain.json"), slurp(dir / "a.json"));
    EXPECT_EQ(slurp(dir / "a.trace.json"), slurp(dir / "b.trace.json"));
    check_trace_event_schema(json::parse(slurp(dir / "a.trace.json")));
}

TEST(Perfetto, OverlappingSpansGoToSubTracksInOrderOfStart) {
    // A: 0-10, B: 2-5 (overlaps A: sub-track 1), C: 5-8 (B has ended: sub-track 1 again, A
    // still runs), D: 10-12 (A has ended: sub-track 0), E: 3-4 (A and B busy: sub-track 2).
    const std::vector<accelsim::TimeSpan> spans = {{0, 10}, {2, 5}, {5, 8}, {10, 12}, {3, 4}};
    EXPECT_EQ(accelsim::assign_sub_tracks(spans), (std::vector<int>{0, 1, 1, 0, 2}));
}

TEST(Perfetto, AnOutputNamingTheTraceIsRefusedBeforeTheRun) {
    const fs::path dir = scratch_dir();
    const fs::path trace = dir / "t.trace";
    write_file(trace, "# accelsim-trace 1\nmatmul a m=8 n=8 k=8\n");
    const Result r = run("--config configs/systolic_8x8.json --trace '" + trace.string() + "' -q --perfetto '" +
                         trace.string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--perfetto")) << r.err;
    EXPECT_EQ(slurp(trace), "# accelsim-trace 1\nmatmul a m=8 n=8 k=8\n");
}

TEST(Perfetto, TpuUnitSpansAddUpToTheCoresBusyCycles) {
    // Per op and core, the vector unit's spans, and per tile step the longest MXU span, add up to
    // the core's busy cycles in the report (chip.coreC.vpu / mxu.busy_cycles, which round each
    // step to whole cycles: within half a cycle per step).
    const Timeline t = checked_timeline("tpu_v4.json", "bert_base_1layer.trace");
    const double hz = t.trace["otherData"]["clock_hz"].get<double>();
    std::map<int, std::string> track;
    for (const json& e : t.trace["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name") track[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    std::size_t compared = 0;
    for (const json& op : t.report["ops"]) {
        for (const std::string core : {"0", "1"}) {
            const json& stats = op["stats"];
            const bool mxu = stats.contains("chip.core" + core + ".mxu.busy_cycles");
            const std::string stat = "chip.core" + core + (mxu ? ".mxu.busy_cycles" : ".vpu.busy_cycles");
            if (!stats.contains(stat)) continue;
            std::map<double, double> step_cycles;  // step start -> its longest unit span, in cycles
            for (const json& e : t.trace["traceEvents"]) {
                if (e["ph"] != "X" || e["cat"] != "unit" || e["args"]["op"] != op["name"]) continue;
                const std::string& name = track.at(e["tid"].get<int>());
                if (name.rfind("core" + core + (mxu ? ".mxu" : ".vector"), 0) != 0) continue;
                double& longest = step_cycles[e["ts"].get<double>()];
                longest = std::max(longest, e["dur"].get<double>() * 1e-6 * hz);
            }
            double sum = 0;
            for (const auto& [start, cycles] : step_cycles) sum += cycles;
            const double steps = stats["chip.core" + core + ".steps"]["value"].get<double>();
            EXPECT_NEAR(sum, stats[stat]["value"].get<double>(), 0.5 * steps + 1e-6) << op["name"] << " core " << core;
            ++compared;
        }
    }
    EXPECT_EQ(compared, 2 * t.report["ops"].size());
}
