#pragma once
// The SMs of a SIMT GPU as SystemC processes: one SC_THREAD per SM, each driving its SmCore, and
// one front-end thread for what the SMs share (the block dispatcher and the memory port's
// windows). The module is elaborated once and runs any number of launches one after another
// (SystemC elaborates once per process; the CLI's GPU chip runs every op's launches on it).
//
// launch() takes launch()'s arguments (simt_gpu.h) and gives identical results: both run the same
// GridLaunch through the same per-SM steps in the same order.
//   - Time-ordered schedules (a non-blocking port's windows; a blocking port with SMs running
//     ahead): an SM thread runs its SM ahead of SystemC time (temporal decoupling) to the window's
//     end or until a block completes, then sleeps until the cycle of that completion (idle cycles
//     are skipped, never stepped). The front end serves completions in (cycle, SM) order: it
//     refills the earliest SM's blocks and lets that SM run on. Every busy SM runs its first stretch
//     of a window in SM order (one thread hands over to the next), so SMs touch the shared state
//     (port, dispatcher, global memory) in launch()'s order. At a window's end the front end lets
//     the port serve the window and hands the answers to the SMs.
//   - Lock-step schedules (a blocking port shared by several SMs; clusters on a blocking port):
//     the SM threads take turns in SM order within each window, SystemC time moving window by
//     window (a global quantum).
// SystemC time advances by the kernel's cycles at clock_period each (launch overheads and the
// host are the engine's, not SystemC time). A failure inside a thread (a kernel fault, the
// watchdog) stops the kernel and launch() rethrows it; the module runs no launch after that.
#include <cstdint>
#include <exception>
#include <vector>

#include <systemc>

#include "models/simt/simt_gpu.h"

namespace accelsim::simt {

class SimtChipModule : public sc_core::sc_module {
public:
    // sms: the SM threads (every launch's params.sms must equal it).
    SimtChipModule(sc_core::sc_module_name name, int sms,
                   sc_core::sc_time clock_period = sc_core::sc_time(1, sc_core::SC_NS));
    // As simt::launch; runs the SystemC kernel (sc_start) until the grid is done.
    KernelStats launch(const Kernel& kernel, Dim dims, const std::vector<std::uint32_t>& args, GlobalMemory& memory,
                       const SimtParams& params, GlobalMemoryPort* port = nullptr, const LaunchOptions& options = {});
    int sms() const { return static_cast<int>(resume_.size()); }

private:
    // What an SM thread does when resumed.
    enum class Command : std::uint8_t { segment, lock_step_turn, cluster_turn, catch_up };
    void sm_thread(int index);
    void perform(int index);
    void front_end_thread();
    void run_schedule(GridLaunch& g);
    void run_time_ordered_window(GridLaunch& g, std::uint64_t end);
    // Resumes the SMs of `order` one after another (each hands over to the next when done) and
    // returns when the last is done.
    void run_chain(const std::vector<int>& order, Command command);
    void hand_over();  // an SM thread's turn in the chain is over
    void resume(int index, Command command);
    std::uint64_t cycle_now() const;
    void wait_until(std::uint64_t cycle);
    void fail(std::exception_ptr error);

    sc_core::sc_time clock_period_;
    sc_core::sc_time base_;        // SystemC time of the current launch's cycle 0
    GridLaunch* grid_ = nullptr;   // the current launch
    std::uint64_t end_ = kNoCycle;  // the current window's end
    std::vector<sc_core::sc_event> resume_;
    std::vector<Command> command_;
    // Time-ordered schedules: the SM's last stretch ended with a block completion (not yet served),
    // and SystemC time has reached that completion's cycle.
    std::vector<char> stopped_, arrived_;
    sc_core::sc_event start_, chain_done_, arrivals_, caught_up_;
    std::vector<int> chain_;
    std::size_t chain_position_ = 0;
    Command chain_command_ = Command::segment;
    bool any_busy_ = false;                // lock-step turns
    std::uint64_t next_event_ = kNoCycle;  // lock-step turns
    bool finished_ = false;
    std::exception_ptr error_;
};

}  // namespace accelsim::simt
