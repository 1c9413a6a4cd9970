#pragma once
// How the host launches a trace's ops (the config's `host` section): the software stack in front
// of the chip. A measured op pays more than its kernel: the framework's dispatch on the CPU, the
// driver's launch call, the launch reaching an idle device, and the host noticing completion.
// docs/host.md explains the model and cites every figure.
//
// The host and the device form a two-stage max-plus pipeline. The CPU issues ops one after another
// without waiting for the device (CUDA streams are asynchronous), so op i is ready on the host at
//     ready_i = ready_{i-1} + issue_i                       (ready_0 = program launch)
// and starts on the device at
//     start_i = max(end_{i-1}, ready_i + submit)            end_i = start_i + device_i
// The run ends when the host sees the last op finish: end_last + sync. Host time the device hides
// (the CPU running ahead of long kernels) costs nothing; what shows is start_i - end_{i-1}, the
// device waiting on the host, reported per op as its host cycles.
#include <cstdint>
#include <string>

#include "models/common/enum_names.h"
#include "models/common/param_table.h"

namespace accelsim {

enum class HostLaunch {
    automatic,   // `eager` on GPU-like chips, `none` on systolic ones
    none,        // device time only (kernel studies): no host cost at all
    eager,       // a framework dispatches op by op (PyTorch eager): every op pays its dispatch
    cuda_graph,  // the ops captured once and replayed as one graph launch
    engine,      // a C++ inference runtime (TensorRT) enqueues every kernel ahead of the device
};

inline constexpr EnumNames<HostLaunch, 5> kHostLaunchNames = {{{HostLaunch::automatic, "auto"},
                                                              {HostLaunch::none, "none"},
                                                              {HostLaunch::eager, "eager"},
                                                              {HostLaunch::cuda_graph, "cuda_graph"},
                                                              {HostLaunch::engine, "engine"}}};

// The `host` section. Every time < 0 takes the launch mode's preset (HostCosts::of).
struct HostParams {
    HostLaunch launch = HostLaunch::automatic;
    double op_us = -1;            // CPU time to issue one op (framework + launch call)
    double library_call_us = -1;  // extra CPU time of ops issued through a vendor library (cuBLAS)
    double program_us = -1;       // CPU time to launch the whole program once (a graph launch)
    double submit_us = -1;        // a launch reaching an idle device: issue done to kernel start
    double sync_us = -1;          // the last kernel done to the host seeing it (synchronize returns)
    // The host link (PCIe, USB) and whether the run copies its input over it before the first op
    // and its output back after the last (docs/host.md "Host-link transfers").
    bool io = false;
    double link_gb_per_s = 0;     // per direction, 10^9 bytes/s; 0: the config gives no link
};

const ParamTable<HostParams>& host_param_table();

// The resolved times of one launch mode, in microseconds.
struct HostCosts {
    HostLaunch launch = HostLaunch::none;  // never `automatic`
    double op_us = 0, library_call_us = 0, program_us = 0, submit_us = 0, sync_us = 0;

    // `params` with its presets filled in; `simt` picks what `auto` means.
    static HostCosts of(const HostParams& params, bool simt);
    // The mode's own figures (docs/host.md cites each).
    static HostCosts preset(HostLaunch launch);
};

std::string_view to_string(HostLaunch launch);

// The max-plus pipeline above, in device clock cycles. Times are rounded to whole cycles.
class HostPipeline {
public:
    HostPipeline(const HostCosts& costs, double clock_hz);

    struct Placement {
        std::uint64_t start_cycle = 0;  // when the op's first kernel starts on the device
        std::uint64_t host_cycles = 0;  // the device waiting on the host right before it
    };
    // Places the next op, `device_cycles` long; `library_call` when it is issued through a vendor
    // library (GEMMs and convolutions through cuBLAS/cuDNN).
    Placement place(std::uint64_t device_cycles, bool library_call);
    // The host seeing the last op finish, after its end.
    std::uint64_t sync_cycles() const { return sync_; }
    // Device cycles of a copy of `bytes` over the host link at `gb_per_s`: exact (the roofline's
    // bound) and rounded up (the copy's cycles).
    static double transfer_cycles_exact(std::int64_t bytes, double gb_per_s, double clock_hz);
    static std::uint64_t transfer_cycles(std::int64_t bytes, double gb_per_s, double clock_hz);
    std::uint64_t device_end() const { return device_end_; }

private:
    std::uint64_t cycles(double us) const;

    double clock_hz_;
    std::uint64_t op_, library_, submit_, sync_;
    std::uint64_t host_ready_ = 0, device_end_ = 0;
};

}  // namespace accelsim
