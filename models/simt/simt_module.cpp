// sc_spawn needs the dynamic-process API (SC_INCLUDE_DYNAMIC_PROCESSES, defined for the library in
// CMakeLists.txt).
#include "models/simt/simt_module.h"

#include <stdexcept>
#include <string>

namespace accelsim::simt {

SimtChipModule::SimtChipModule(sc_core::sc_module_name name, int sms, sc_core::sc_time clock_period)
    : sc_core::sc_module(name),
      clock_period_(clock_period),
      resume_(static_cast<std::size_t>(sms < 1 ? 0 : sms)),
      command_(resume_.size(), Command::segment),
      stopped_(resume_.size(), 0),
      arrived_(resume_.size(), 1) {
    if (sms < 1) throw SimtError("SimtChipModule: sms must be at least 1");
    if (clock_period_ == sc_core::SC_ZERO_TIME) throw SimtError("SimtChipModule: the clock period is below the time resolution");
    for (int i = 0; i < sms; ++i) sc_core::sc_spawn([this, i] { sm_thread(i); }, ("sm" + std::to_string(i)).c_str());
    sc_core::sc_spawn([this] { front_end_thread(); }, "front_end");
}

std::uint64_t SimtChipModule::cycle_now() const {
    return (sc_core::sc_time_stamp() - base_).value() / clock_period_.value();
}

void SimtChipModule::wait_until(std::uint64_t cycle) {
    const std::uint64_t now = cycle_now();
    if (cycle > now) sc_core::wait(sc_core::sc_time::from_value((cycle - now) * clock_period_.value()));
}

void SimtChipModule::fail(std::exception_ptr error) {
    if (!error_) error_ = error;
    sc_core::sc_stop();
}

KernelStats SimtChipModule::launch(const Kernel& kernel, Dim dims, const std::vector<std::uint32_t>& args,
                                   GlobalMemory& memory, const SimtParams& params, GlobalMemoryPort* port,
                                   const LaunchOptions& options) {
    if (error_ || sc_core::sc_get_status() == sc_core::SC_STOPPED)
        throw std::logic_error("SimtChipModule: a failed launch stopped the SystemC kernel");
    if (params.sms != sms())
        throw SimtError("SimtChipModule: launch on " + std::to_string(params.sms) + " SMs, the module has " +
                        std::to_string(sms()));
    GridLaunch g(kernel, dims, args, memory, params, port, options);
    // The first launch initialises the kernel (every thread runs up to its first wait) so that the
    // start notification finds the front end waiting.
    if (sc_core::sc_get_status() == sc_core::SC_ELABORATION) sc_core::sc_start(sc_core::SC_ZERO_TIME);
    grid_ = &g;
    base_ = sc_core::sc_time_stamp();
    finished_ = false;
    start_.notify(sc_core::SC_ZERO_TIME);
    sc_core::sc_start();  // returns when every thread waits for the next launch
    grid_ = nullptr;
    if (error_) std::rethrow_exception(error_);
    if (!finished_) throw std::logic_error("SimtChipModule: the kernel stopped before the grid was done");
    g.leave_skipped_footprint();
    return g.stats();
}

void SimtChipModule::front_end_thread() {
    for (;;) {
        sc_core::wait(start_);
        try {
            run_schedule(*grid_);
            wait_until(grid_->stats().cycles);  // SystemC time at the kernel's end
            finished_ = true;
        } catch (...) {
            fail(std::current_exception());
            return;
        }
    }
}

void SimtChipModule::run_schedule(GridLaunch& g) {
    const std::uint64_t window = g.window_cycles();
    std::vector<int> all;
    for (int i = 0; i < sms(); ++i) all.push_back(i);
    switch (g.schedule()) {
        case GridLaunch::Schedule::run_ahead:
            run_time_ordered_window(g, kNoCycle);
            return;
        case GridLaunch::Schedule::memory_windows: {
            std::vector<SectorAnswer> answers;
            for (std::uint64_t end = 0;;) {
                bool any_busy = false;
                const std::uint64_t start = next_window_start(g.sms, *g.port, end, any_busy);
                if (!any_busy) break;
                wait_until(start);
                end = start + window;
                run_time_ordered_window(g, end);
                wait_until(end);
                g.port->advance(end, answers);
                deliver_answers(answers, g.sms);
                deliver_cluster_events(g.network.get(), g.sms);
                g.sample_trips(end);
                if (g.options.on_window) g.options.on_window(end);
            }
            g.port->advance(kNoCycle, answers);  // the last stores (and loads of warps that have exited)
            deliver_answers(answers, g.sms);
            deliver_cluster_events(g.network.get(), g.sms);
            if (g.options.on_window) g.options.on_window(kNoCycle);
            return;
        }
        case GridLaunch::Schedule::lock_step:
            for (std::uint64_t window_end = window;;) {
                any_busy_ = false;
                next_event_ = kNoCycle;
                end_ = window_end;
                // Only busy SMs take a turn (an SM's turn changes no other SM's blocks here).
                std::vector<int> busy;
                for (int i = 0; i < sms(); ++i)
                    if (g.sms[static_cast<std::size_t>(i)]->busy()) busy.push_back(i);
                run_chain(busy, Command::lock_step_turn);
                if (!any_busy_) break;
                wait_until(window_end);
                window_end = std::max(window_end, next_event_ == kNoCycle ? window_end : next_event_) + window;
            }
            return;
        case GridLaunch::Schedule::cluster_windows:
            for (std::uint64_t end = window;; end += window) {
                any_busy_ = false;
                end_ = end;
                // Every SM takes its turn: one that was idle may have been given a cluster by now.
                run_chain(all, Command::cluster_turn);
                deliver_cluster_events(g.network.get(), g.sms);
                if (!any_busy_) break;
                wait_until(end);
            }
            return;
    }
}

void SimtChipModule::run_time_ordered_window(GridLaunch& g, std::uint64_t end) {
    end_ = end;
    std::vector<int> order;
    for (int i = 0; i < sms(); ++i) {
        stopped_[static_cast<std::size_t>(i)] = 0;
        arrived_[static_cast<std::size_t>(i)] = 1;
        if (g.sms[static_cast<std::size_t>(i)]->busy()) order.push_back(i);
    }
    run_chain(order, Command::segment);
    for (;;) {
        // The earliest completion (ties: the lower SM). SMs still asleep complete later than any
        // that has arrived, so this is the earliest of all.
        int best = -1;
        bool asleep = false;
        for (int i = 0; i < sms(); ++i) {
            const auto u = static_cast<std::size_t>(i);
            if (!stopped_[u]) continue;
            if (!arrived_[u]) {
                asleep = true;
                continue;
            }
            if (best < 0 || g.sms[u]->now() < g.sms[static_cast<std::size_t>(best)]->now()) best = i;
        }
        if (best < 0) {
            if (!asleep) return;
            sc_core::wait(arrivals_);
            continue;
        }
        stopped_[static_cast<std::size_t>(best)] = 0;
        g.dispatcher.refill(*g.sms[static_cast<std::size_t>(best)]);
        // The refilled SM runs on, then the SMs its refill started (a cluster) that were not
        // stopped at a completion of their own.
        order.assign(1, best);
        for (const SmCore* other : g.dispatcher.started_others())
            if (!stopped_[static_cast<std::size_t>(other->index())]) order.push_back(other->index());
        run_chain(order, Command::segment);
    }
}

void SimtChipModule::run_chain(const std::vector<int>& order, Command command) {
    if (order.empty()) return;
    chain_ = order;
    chain_position_ = 0;
    chain_command_ = command;
    resume(chain_.front(), command);
    sc_core::wait(chain_done_);
}

void SimtChipModule::resume(int index, Command command) {
    command_[static_cast<std::size_t>(index)] = command;
    resume_[static_cast<std::size_t>(index)].notify();  // immediate: runs in this evaluation phase
}

void SimtChipModule::hand_over() {
    if (++chain_position_ < chain_.size()) resume(chain_[chain_position_], chain_command_);
    else chain_done_.notify();
}

void SimtChipModule::sm_thread(int index) {
    for (;;) {
        sc_core::wait(resume_[static_cast<std::size_t>(index)]);
        try {
            perform(index);
        } catch (...) {
            fail(std::current_exception());
            return;
        }
    }
}

void SimtChipModule::perform(int index) {
    GridLaunch& g = *grid_;
    const auto u = static_cast<std::size_t>(index);
    SmCore& sm = *g.sms[u];
    switch (command_[u]) {
        case Command::segment: {
            const bool completed = sm.busy() && sm.run_until_block_completes(end_);
            const bool asleep = completed && sm.now() > cycle_now();
            stopped_[u] = completed;
            arrived_[u] = !asleep;
            hand_over();
            if (asleep) {  // until the cycle the block completed, then the front end serves it
                wait_until(sm.now());
                arrived_[u] = 1;
                arrivals_.notify(sc_core::SC_ZERO_TIME);
            }
            return;
        }
        case Command::lock_step_turn:
            lock_step_turn(sm, g.dispatcher, end_, any_busy_, next_event_);
            hand_over();
            return;
        case Command::cluster_turn: {
            // A lower SM the dispatcher started catches up on its own thread while this one waits.
            const std::function<void(SmCore&)> catch_up = [this](SmCore& other) {
                resume(other.index(), Command::catch_up);
                sc_core::wait(caught_up_);
            };
            cluster_window_turn(sm, g.dispatcher, end_, any_busy_, catch_up);
            hand_over();
            return;
        }
        case Command::catch_up:
            sm.run_until_block_completes(end_);
            caught_up_.notify();
            return;
    }
}

}  // namespace accelsim::simt
