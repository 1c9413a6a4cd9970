// A third chip kind added the way a new chip is added: one ChipModel implementation (here, in this
// file) and one registration. The engine, the roofline and the reports run a trace on it without
// knowing the kind. The chip is roofline-only: every op takes its roofline bound, rounded up.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/common/chip_model.h"
#include "sim/engine/chip_registry.h"
#include "sim/engine/engine.h"
#include "sim/input_error.h"
#include "sim/report/report.h"
#include "sim/trace/trace_reader.h"

namespace fs = std::filesystem;
using namespace accelsim;

namespace {

// The toy chip's one stat, defined once like every model's.
const StatDef kToyBoundCycles{"toy.bound_cycles", StatUnit::cycles, "the roofline bound, before rounding up"};

// One compute unit of `macs_per_cycle` MACs (and element-ops) per cycle for every dtype, and an
// HBM of `hbm_bytes_per_cycle`.
class ToyRooflineChip final : public ChipModel {
public:
    ToyRooflineChip(double macs_per_cycle, double hbm_bytes_per_cycle)
        : macs_per_cycle_(macs_per_cycle), hbm_bytes_per_cycle_(hbm_bytes_per_cycle) {}
    OpReport run(const Op& op, const Op*) override {
        OpReport r = roofline_only(op, *this, "");
        r.model = "toy";
        r.stats.push_back(stat_value(kToyBoundCycles, r.roofline.bound_cycles));
        return r;
    }
    ComputeUnit compute_unit_for(const Op& op) const override {
        if (op.kind == OpKind::kernel) throw std::invalid_argument(op_location(op) + "the toy chip runs no kernels");
        return {"toy", macs_per_cycle_};
    }
    double matrix_macs_per_cycle(DType) const override { return macs_per_cycle_; }
    MemoryPeaks memory_peaks() const override {
        MemoryPeaks m;
        m.bytes_per_cycle["hbm"] = hbm_bytes_per_cycle_;
        m.compulsory_levels = {"hbm"};
        return m;
    }

private:
    double macs_per_cycle_, hbm_bytes_per_cycle_;
};

// The one registration. Its parameters come from the config: 1024 MACs per cycle, and the HBM
// peak the config's hbm section gives, per chip cycle.
void register_toy_kind() {
    static const bool once = [] {
        register_chip_kind("toy_roofline", [](const ChipConfig& c, const RunOptions&) {
            return std::make_unique<ToyRooflineChip>(1024.0, c.hbm.peak_bytes_per_second() / c.clock_hz());
        });
        return true;
    }();
    (void)once;
}

ChipConfig toy_config() {
    ChipConfig c;
    c.name = "toy";
    c.kind = "toy_roofline";
    c.file = "toy.json";
    c.clock_mhz = 1000;
    c.hbm.channels = 1;
    c.hbm.bus_width_bits = 64;
    c.hbm.data_rate_gbps = 2.0;  // 8 B x 2e9 = 16 GB/s = 16 B per 1 GHz cycle
    c.effective = {{"name", "toy"}, {"kind", "toy_roofline"}};
    return c;
}

std::string write_trace(const std::string& body) {
    const fs::path path = fs::path(::testing::TempDir()) / "accelsim_toy_chip.trace";
    std::ofstream(path) << "# accelsim-trace 1\n" << body;
    return path.string();
}

}  // namespace

TEST(ToyChipKind, RunsATraceThroughTheEngineAtItsRooflineBounds) {
    register_toy_kind();
    const ChipConfig chip = toy_config();
    const std::string trace = write_trace(
        "matmul big m=256 n=256 k=256 dtype=bf16\n"
        "relu act n=4096 dtype=fp32\n");
    const RunReport report = run_trace(chip, trace, read_trace(trace, chip.default_dtype), RunOptions{});
    ASSERT_EQ(report.ops.size(), 2u);
    // matmul: 256^3 = 16,777,216 MACs / 1024 = 16,384 compute cycles; bytes 3 x 256^2 x 2 B =
    // 393,216 / 16 B per cycle = 24,576 HBM cycles: hbm-bound at 24,576.
    const OpReport& mm = report.ops[0];
    EXPECT_EQ(mm.model, "toy");
    EXPECT_EQ(mm.roofline.compute_unit, "toy");
    EXPECT_DOUBLE_EQ(mm.roofline.cycles.at("compute"), 16384.0);
    EXPECT_DOUBLE_EQ(mm.roofline.cycles.at("hbm"), 24576.0);
    EXPECT_EQ(mm.roofline.bound, "hbm");
    EXPECT_EQ(mm.cycles, 24576u);
    EXPECT_EQ(mm.bytes.at("hbm"), 393216);
    // relu over 4096 fp32: in + out = 32,768 B / 16 = 2048 HBM cycles; 4096 element-ops / 1024 = 4.
    const OpReport& act = report.ops[1];
    EXPECT_EQ(act.cycles, 2048u);
    EXPECT_EQ(act.start_cycle, 24576u);
    EXPECT_EQ(report.total_cycles(), 24576u + 2048u);
    // The summary's peak is the chip's own: 2 x 1024 MACs x 1 GHz = 2.0 TFLOP/s; MAC utilization
    // 16,777,216 / (1024 x 26,624) = 61.5%.
    EXPECT_DOUBLE_EQ(report.matrix_peaks.default_dtype, 1024.0);
    std::ostringstream table;
    write_table(table, report);
    EXPECT_NE(table.str().find("config toy (toy_roofline, 1000 MHz"), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("of 2.0 peak (bf16); MAC utilization 61.5%"), std::string::npos) << table.str();
}

// The progress line's shares (RunOptions::progress): each op weighs its roofline bound, so the
// matmul above (24,576 cycles) is 24,576 / 26,624 = 12/13 of the run and the relu starts there.
TEST(ToyChipKind, ProgressSharesFollowTheOpsRooflineCycles) {
    register_toy_kind();
    const ChipConfig chip = toy_config();
    const std::string trace = write_trace(
        "matmul big m=256 n=256 k=256 dtype=bf16\n"
        "relu act n=4096 dtype=fp32\n");
    RunOptions options;
    std::vector<std::string> seen;
    options.progress = [&seen](std::size_t index, std::size_t total, const Op& op, double done_share) {
        std::ostringstream line;
        line << index << "/" << total << " " << op.name << " " << done_share;
        seen.push_back(line.str());
    };
    run_trace(chip, trace, read_trace(trace, chip.default_dtype), options);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0], "0/2 big 0");
    std::ostringstream expected;
    expected << "1/2 act " << 24576.0 / 26624.0;
    EXPECT_EQ(seen[1], expected.str());
}

TEST(ToyChipKind, ItsInputErrorsReachTheUserAsInputErrors) {
    register_toy_kind();
    const ChipConfig chip = toy_config();
    const std::string trace = write_trace("kernel k file=none.sasm grid=1 block=32 args=1\n");
    std::vector<Op> ops(1);
    ops[0].kind = OpKind::kernel;
    ops[0].name = "k";
    ops[0].file = trace;
    ops[0].line = 2;
    try {
        run_trace(chip, trace, ops, RunOptions{});
        FAIL() << "expected InputError";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), trace + ":2: the toy chip runs no kernels");
    }
}

TEST(ChipRegistry, AnUnknownKindIsAnInputErrorNamingTheKey) {
    ChipConfig chip = toy_config();
    chip.kind = "tpu";
    try {
        make_chip(chip, RunOptions{});
        FAIL() << "expected InputError";
    } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("toy.json: kind = \"tpu\" is not a chip kind this build knows (systolic, simt", 0), 0u) << what;
    }
}

TEST(ChipRegistry, AKindIsRegisteredOnce) {
    register_toy_kind();
    EXPECT_THROW(register_chip_kind("toy_roofline", nullptr), std::logic_error);
    EXPECT_THROW(register_chip_kind("simt", nullptr), std::logic_error);
    const std::vector<std::string> kinds = chip_kinds();
    ASSERT_GE(kinds.size(), 3u);
    EXPECT_EQ(kinds[0], "systolic");
    EXPECT_EQ(kinds[1], "simt");
}
