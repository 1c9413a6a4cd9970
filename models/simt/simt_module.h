#pragma once
// SystemC wrapper: one SC_THREAD per SM, each driving an SmCore. An SM runs ahead in plain C++
// until one of its blocks completes, then waits until SystemC time reaches that cycle before it
// takes new blocks from the shared dispatcher, so blocks are handed out in global time order
// (the same order launch() uses; SMs finishing at the very same cycle may be served in a
// different order). With a non-blocking port the SM processes run in the same windows as
// launch(): a window process waits until every busy SM has reached the window's end, lets the
// port serve the window's requests, delivers the answers and opens the next window.
// Elaborate, sc_start(), then read stats().
#include <memory>
#include <vector>

#include <systemc>

#include "models/simt/simt_gpu.h"

namespace accelsim::simt {

class SimtChipModule : public sc_core::sc_module {
public:
    // The kernel, memory, port and args must outlive the module.
    SimtChipModule(sc_core::sc_module_name name, const Kernel& kernel, Dim dims, std::vector<std::uint32_t> args,
                   GlobalMemory& memory, const SimtParams& params, GlobalMemoryPort& port,
                   sc_core::sc_time clock_period = sc_core::sc_time(1, sc_core::SC_NS),
                   const LaunchOptions& options = {});
    KernelStats stats() const;
    bool done() const { return windowed_ ? drained_ : finished_sms_ == static_cast<int>(sms_.size()); }

private:
    void sm_process(int index);
    void windowed_sm_process(int index);
    void window_process();

    SimtParams params_;
    sc_core::sc_time clock_period_;
    WarpExecutor executor_;
    std::vector<std::unique_ptr<SmCore>> sms_;
    BlockDispatcher dispatcher_;
    int finished_sms_ = 0;
    GlobalMemoryPort& port_;
    bool windowed_;
    std::uint64_t window_end_ = 0;
    int running_ = 0, arrived_ = 0;  // SMs in the current window, and those at its end
    bool drained_ = false;
    sc_core::sc_event window_open_, all_arrived_;
};

}  // namespace accelsim::simt
