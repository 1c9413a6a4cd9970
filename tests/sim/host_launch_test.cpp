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

// Host-link transfers (host.io): the first op's input crosses before it, the last op's output after
// it, each a row of its own at the link's bandwidth, placed in the pipeline like an op.
TEST(HostIo, InputAndOutputCrossTheLinkAsRowsOfTheirOwn) {
    HostParams host = explicit_costs(HostLaunch::eager, 5, 3, 0, 4, 2);
    host.io = true;
    host.link_gb_per_s = 2;  // 2 bytes per ns: 2 bytes per cycle at 1000 MHz
    const ChipConfig config = config_with(host);
    FixedCyclesChip chip({1500, 700});
    Op gemm = op_of(OpKind::matmul);
    gemm.dtype = DType::fp16;
    gemm.gemm = {1, 100, 64, 30};  // A: 100 x 30 fp16 = 6000 bytes in
    Op act = op_of(OpKind::relu);
    act.dtype = DType::fp16;
    act.elements = 6400;  // 12800 bytes out
    const RunReport r = run_trace(chip, config, "t", {gemm, act}, RunOptions{});
    ASSERT_EQ(r.ops.size(), 4u);
    const OpReport& in = r.ops[0];
    const OpReport& out = r.ops[3];
    EXPECT_EQ(in.op.name, "host_to_device");
    EXPECT_EQ(in.model, "host_link");
    EXPECT_EQ(in.bytes.at("host_link"), 6000);
    EXPECT_EQ(in.cycles, 3000u);  // 6000 B at 2 B/cycle
    EXPECT_EQ(in.roofline.bound, "host_link");
    EXPECT_DOUBLE_EQ(in.roofline.bound_cycles, 3000.0);
    // The copy is issued like an op without a library call: ready 5 us, on the device at 9 us.
    EXPECT_EQ(in.start_cycle, 9000u);
    // The GEMM: ready 5 + 5 + 3 = 13 us, arrives 17 us, the device free at 12 us: starts 17 us.
    EXPECT_EQ(r.ops[1].start_cycle, 17000u);
    EXPECT_EQ(r.ops[1].sync_cycles, 0u);
    // relu: ready 18 us, arrives 22 us, the device free at 18.5 us: 22 to 22.7 us.
    EXPECT_EQ(r.ops[2].end_cycle, 22700u);
    EXPECT_EQ(r.ops[2].sync_cycles, 0u);
    // The output: ready 23 us, arrives 27 us; 12800 B take 6400 cycles; seen 2 us later.
    EXPECT_EQ(out.op.name, "device_to_host");
    EXPECT_EQ(out.bytes.at("host_link"), 12800);
    EXPECT_EQ(out.start_cycle, 27000u);
    EXPECT_EQ(out.end_cycle, 33400u);
    EXPECT_EQ(out.sync_cycles, 2000u);
    EXPECT_EQ(r.total_cycles(), 35400u);
}

TEST(HostIo, OffLeavesTheOpsAlone) {
    HostParams host = explicit_costs(HostLaunch::eager, 5, 3, 0, 4, 2);
    host.link_gb_per_s = 2;  // a link, but no copies asked for
    FixedCyclesChip chip({1500});
    const RunReport r = run_trace(chip, config_with(host), "t", {op_of(OpKind::matmul)}, RunOptions{});
    ASSERT_EQ(r.ops.size(), 1u);
    EXPECT_EQ(r.total_cycles(), 15500u);  // OneEagerOpPaysDispatchSubmitAndSync's figure
}

TEST(HostIo, TransferCyclesRoundUp) {
    // 1 GB/s at 1410 MHz: 1.41 cycles per byte; 100 bytes = 141 cycles, 101 bytes = 142.41 -> 143.
    EXPECT_EQ(HostPipeline::transfer_cycles(100, 1.0, 1410e6), 141u);
    EXPECT_EQ(HostPipeline::transfer_cycles(101, 1.0, 1410e6), 143u);
}
