// The host launch model (models/common/host_launch.h) against hand-worked max-plus schedules, and
// the engine placing ops with it. Times are picked so every microsecond is a whole number of
// cycles at 1000 MHz (1 us = 1000 cycles).
#include <gtest/gtest.h>

#include <vector>

#include "models/common/chip_model.h"
#include "models/common/host_launch.h"
#include "sim/engine/engine.h"
#include "sim/report/report.h"

using namespace accelsim;

namespace {

// A chip whose ops take the device cycles it is given, in order.
class FixedCyclesChip final : public ChipModel {
public:
    explicit FixedCyclesChip(std::vector<std::uint64_t> cycles) : cycles_(std::move(cycles)) {}
    OpReport run(const Op& op, const Op*) override {
        OpReport r;
        r.op = op;
        r.model = "fixed";
        r.cycles = cycles_.at(next_++);
        return r;
    }
    ComputeUnit compute_unit_for(const Op&) const override { return {"fixed", 1}; }
    double matrix_macs_per_cycle(DType) const override { return 0; }
    MemoryPeaks memory_peaks() const override { return {}; }

private:
    std::vector<std::uint64_t> cycles_;
    std::size_t next_ = 0;
};

ChipConfig config_with(HostParams host, const char* kind = "simt") {
    ChipConfig c;
    c.kind = kind;
    c.clock_mhz = 1000;
    c.host = host;
    return c;
}

Op op_of(OpKind kind) {
    Op op;
    op.kind = kind;
    op.name = std::string(to_string(kind));
    return op;
}

HostParams explicit_costs(HostLaunch launch, double op, double library, double program, double submit, double sync) {
    HostParams p;
    p.launch = launch;
    p.op_us = op, p.library_call_us = library, p.program_us = program, p.submit_us = submit, p.sync_us = sync;
    return p;
}

}  // namespace

TEST(HostLaunch, AutoIsEagerOnSimtAndNoneOnSystolic) {
    EXPECT_EQ(HostCosts::of(HostParams{}, true).launch, HostLaunch::eager);
    EXPECT_EQ(HostCosts::of(HostParams{}, false).launch, HostLaunch::none);
    const HostCosts none = HostCosts::of(HostParams{}, false);
    EXPECT_EQ(none.op_us + none.library_call_us + none.program_us + none.submit_us + none.sync_us, 0.0);
}

TEST(HostLaunch, PresetsAreTheCitedFiguresAndKeysOverrideThem) {
    HostParams p;
    p.launch = HostLaunch::eager;
    const HostCosts eager = HostCosts::of(p, true);
    // docs/host.md: 5 us dispatch; cuBLAS's host path is LLMCompass's 1x1 matmul (21 us) less its
    // 1x1 softmax (12 us); the host's part of the launch round trip is 6.7 us (NVIDIA's V100
    // figures) less the V100's per-kernel launch latency, 5000 cycles at 1530 MHz (3.27 us).
    EXPECT_DOUBLE_EQ(eager.op_us, 5.0);
    EXPECT_DOUBLE_EQ(eager.library_call_us, 21.0 - 12.0);
    EXPECT_NEAR(eager.submit_us + eager.sync_us, 6.7 - 5000 / 1530.0, 0.05);
    p.op_us = 12;
    EXPECT_DOUBLE_EQ(HostCosts::of(p, true).op_us, 12.0);
    EXPECT_DOUBLE_EQ(HostCosts::of(p, true).sync_us, 1.6);  // the others keep the preset
}

// One op measured with a synchronize pays everything: op + submit + device + sync.
TEST(HostLaunch, OneEagerOpPaysDispatchSubmitAndSync) {
    const ChipConfig config = config_with(explicit_costs(HostLaunch::eager, 5, 3, 0, 4, 2));
    FixedCyclesChip chip({1500});
    const RunReport r = run_trace(chip, config, "t", {op_of(OpKind::matmul)}, RunOptions{});
    // ready = 5 + 3 us (a library call), start = ready + 4 us = 12000, end 13500, seen at 15500.
    EXPECT_EQ(r.ops[0].start_cycle, 12000u);
    EXPECT_EQ(r.ops[0].host_cycles, 12000u);
    EXPECT_EQ(r.ops[0].sync_cycles, 2000u);
    EXPECT_EQ(r.total_cycles(), 15500u);
    EXPECT_EQ(r.host_cycles(), 14000u);  // total - device
}

// Short kernels: the host is the bottleneck and each op waits for its dispatch.
TEST(HostLaunch, ShortKernelsWaitForTheHost) {
    const ChipConfig config = config_with(explicit_costs(HostLaunch::eager, 5, 0, 0, 4, 0));
    FixedCyclesChip chip({1000, 1000, 1000});
    const std::vector<Op> ops(3, op_of(OpKind::softmax));
    const RunReport r = run_trace(chip, config, "t", ops, RunOptions{});
    // ready 5, 10, 15 us; starts 9, 14, 19 us (the device is free at 10 and 15 us).
    EXPECT_EQ(r.ops[0].start_cycle, 9000u);
    EXPECT_EQ(r.ops[1].start_cycle, 14000u);
    EXPECT_EQ(r.ops[2].start_cycle, 19000u);
    EXPECT_EQ(r.ops[1].host_cycles, 4000u);
    EXPECT_EQ(r.total_cycles(), 20000u);
}

// Long kernels: the CPU runs ahead and its time is hidden after the first op.
TEST(HostLaunch, LongKernelsHideTheHost) {
    const ChipConfig config = config_with(explicit_costs(HostLaunch::eager, 5, 0, 0, 4, 3));
    FixedCyclesChip chip({20000, 20000});
    const std::vector<Op> ops(2, op_of(OpKind::gelu));
    const RunReport r = run_trace(chip, config, "t", ops, RunOptions{});
    EXPECT_EQ(r.ops[1].start_cycle, 29000u);  // 9 us + 20 us: ready at 10 + 4 = 14 us is long past
    EXPECT_EQ(r.ops[1].host_cycles, 0u);
    EXPECT_EQ(r.total_cycles(), 52000u);
}

// A graph: one launch for the program, no per-op host time.
TEST(HostLaunch, CudaGraphPaysOneLaunch) {
    const ChipConfig config = config_with(explicit_costs(HostLaunch::cuda_graph, 0, 0, 3, 4, 2));
    FixedCyclesChip chip({500, 500, 500});
    const std::vector<Op> ops(3, op_of(OpKind::add));
    const RunReport r = run_trace(chip, config, "t", ops, RunOptions{});
    EXPECT_EQ(r.ops[0].start_cycle, 7000u);
    EXPECT_EQ(r.ops[2].end_cycle, 8500u);
    EXPECT_EQ(r.total_cycles(), 10500u);
}

TEST(HostLaunch, NoneIsDeviceTimeOnly) {
    const ChipConfig config = config_with(HostParams{}, "systolic");
    FixedCyclesChip chip({700, 300});
    const RunReport r = run_trace(chip, config, "t", {op_of(OpKind::matmul), op_of(OpKind::relu)}, RunOptions{});
    EXPECT_EQ(r.ops[1].start_cycle, 700u);
    EXPECT_EQ(r.total_cycles(), 1000u);
    EXPECT_EQ(r.host_cycles(), 0u);
}
