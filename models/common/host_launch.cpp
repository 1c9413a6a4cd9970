#include "models/common/host_launch.h"

#include <algorithm>
#include <cmath>

namespace accelsim {

const ParamTable<HostParams>& host_param_table() {
    static const ParamTable<HostParams> table = [] {
        ParamTable<HostParams> t;
        const std::string preset = " Negative: the launch mode's preset (docs/host.md).";
        t.choice("launch", &HostParams::launch, kHostLaunchNames,
                 "How ops are launched: `eager` (a framework dispatching op by op, PyTorch eager), `cuda_graph` (one "
                 "graph launch for the whole trace), `engine` (a C++ runtime enqueuing kernels ahead, TensorRT), "
                 "`none` (device time only), `auto` (eager on simt chips, none on systolic: an XLA program is one "
                 "launch per step). Sets the presets of the keys below; docs/host.md.")
            .number("op_us", &HostParams::op_us, -1, 1e6,
                    "CPU microseconds to issue one op (framework dispatch and the launch call)." + preset)
            .number("library_call_us", &HostParams::library_call_us, -1, 1e6,
                    "Extra CPU microseconds of an op issued through a vendor library (GEMMs and convolutions: "
                    "cuBLAS/cuDNN host path)." + preset)
            .number("program_us", &HostParams::program_us, -1, 1e6,
                    "CPU microseconds to launch the whole trace once (a CUDA graph launch), before its first op." +
                        preset)
            .number("submit_us", &HostParams::submit_us, -1, 1e6,
                    "Microseconds from an op issued to its kernel starting on an idle device." + preset)
            .number("sync_us", &HostParams::sync_us, -1, 1e6,
                    "Microseconds from the last kernel finishing to the host seeing it (synchronize returning), "
                    "added once at the end of the run." + preset)
            .boolean("io", &HostParams::io,
                     "Copy the trace's input (the first op's activations) from the host to the device over the "
                     "host link before the first op, and its output (the last op's) back after the last: two more "
                     "rows, `host_to_device` and `device_to_host` (docs/host.md, \"Host-link transfers\"). Needs "
                     "host.link_gb_per_s.")
            .number("link_gb_per_s", &HostParams::link_gb_per_s, 0.001, 1e4,
                    "The host link's bandwidth per direction in GB/s (10^9 bytes/s): PCIe x16 is 15.75 (Gen3), "
                    "31.5 (Gen4), 63.0 (Gen5) after 128b/130b coding, USB 3.0 0.5 after 8b/10b. 0: the config "
                    "gives no link (host.io is then refused).")
            .or_zero();
        return t;
    }();
    return table;
}

std::string_view to_string(HostLaunch launch) { return name_of(kHostLaunchNames, launch); }

HostCosts HostCosts::preset(HostLaunch launch) {
    HostCosts c;
    c.launch = launch;
    // The launch path shared by every mode that launches from a host (docs/host.md): the launch
    // call reaching the device and the host noticing completion. A 2.9 us kernel took 9.6 us per
    // launch with a synchronize after each (NVIDIA, "Getting Started with CUDA Graphs", 2019,
    // V100): 6.7 us beyond the kernel, of which the device's own per-kernel launch latency is
    // gpu.launch_overhead_cycles (5000 SM cycles on Volta in Accel-Sim's tuned SM7_QV100 config,
    // 3.3 us at 1530 MHz), charged with the kernel. The host's part is the rest, 3.4 us; how it
    // splits between submit and sync is not published: about evenly.
    constexpr double kSubmitUs = 1.8, kSyncUs = 1.6;
    switch (launch) {
        case HostLaunch::automatic:
        case HostLaunch::none:
            break;
        case HostLaunch::eager:
            c.op_us = 5.0;            // PyTorch eager dispatch, 5-7 us per op (pytorch/pytorch#41383)
            // cuBLAS's host path: a 1x1 torch.matmul with a synchronize took 21 us, a 1x1 softmax
            // 12 us, on the A100 server and PyTorch of the calibration rows (LLMCompass,
            // hardware_model/compute_module.py overhead_dict "A100"; their null kernels differ by
            // 0.1 us of device time in the model). A newer stack on a faster CPU pays 3.5 us
            // (torch.matmul host-bound at 8.3-8.6 us per call, pytorch/pytorch#161822).
            c.library_call_us = 9.0;
            c.submit_us = kSubmitUs;
            c.sync_us = kSyncUs;
            break;
        case HostLaunch::cuda_graph:
            c.program_us = 3.0;  // one launch call for the whole graph (a launch, forum t/233645)
            c.submit_us = kSubmitUs;
            c.sync_us = kSyncUs;
            break;
        case HostLaunch::engine:
            c.op_us = 3.0;  // one launch call per kernel from C++, no framework (forum t/233645)
            c.submit_us = kSubmitUs;
            c.sync_us = 0;  // engine latencies are timed with CUDA events on the stream (docs/host.md)
            break;
    }
    return c;
}

HostCosts HostCosts::of(const HostParams& params, bool simt) {
    HostLaunch launch = params.launch;
    if (launch == HostLaunch::automatic) launch = simt ? HostLaunch::eager : HostLaunch::none;
    HostCosts c = preset(launch);
    const auto take = [](double given, double& into) {
        if (given >= 0) into = given;
    };
    take(params.op_us, c.op_us);
    take(params.library_call_us, c.library_call_us);
    take(params.program_us, c.program_us);
    take(params.submit_us, c.submit_us);
    take(params.sync_us, c.sync_us);
    return c;
}

HostPipeline::HostPipeline(const HostCosts& costs, double clock_hz)
    : clock_hz_(clock_hz),
      op_(cycles(costs.op_us)),
      library_(cycles(costs.library_call_us)),
      submit_(cycles(costs.submit_us)),
      sync_(cycles(costs.sync_us)),
      host_ready_(cycles(costs.program_us)) {}

std::uint64_t HostPipeline::cycles(double us) const {
    return static_cast<std::uint64_t>(std::llround(us * 1e-6 * clock_hz_));
}

double HostPipeline::transfer_cycles_exact(std::int64_t bytes, double gb_per_s, double clock_hz) {
    // bytes x clock first: a whole number of cycles stays whole (no rounding up of 141.00000000000003).
    return static_cast<double>(bytes) * clock_hz / (gb_per_s * 1e9);
}

std::uint64_t HostPipeline::transfer_cycles(std::int64_t bytes, double gb_per_s, double clock_hz) {
    const double cycles = std::ceil(transfer_cycles_exact(bytes, gb_per_s, clock_hz));
    return cycles < 1.8e19 ? static_cast<std::uint64_t>(cycles) : ~std::uint64_t{0};  // saturate, never UB
}

HostPipeline::Placement HostPipeline::place(std::uint64_t device_cycles, bool library_call) {
    host_ready_ += op_ + (library_call ? library_ : 0);
    const std::uint64_t arrives = host_ready_ + submit_;
    Placement p;
    p.start_cycle = std::max(device_end_, arrives);
    p.host_cycles = p.start_cycle - device_end_;
    device_end_ = p.start_cycle + device_cycles;
    return p;
}

}  // namespace accelsim
