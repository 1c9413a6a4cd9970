// sc_spawn needs dynamic processes, declared before the first SystemC include of this file.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "models/simt/simt_module.h"

namespace accelsim::simt {

SimtChipModule::SimtChipModule(sc_core::sc_module_name name, const Kernel& kernel, Dim dims,
                               std::vector<std::uint32_t> args, GlobalMemory& memory, const SimtParams& params,
                               GlobalMemoryPort& port, sc_core::sc_time clock_period, const LaunchOptions& options)
    : sc_core::sc_module(name),
      params_(params),
      clock_period_(clock_period),
      executor_(kernel, memory, dims, std::move(args), options.skip_fp_payload),
      dispatcher_(dims.grid),
      port_(port),
      windowed_(port.lookahead_cycles() > 0) {
    if (params.sms < 1) throw SimtError("SimtChipModule: sms must be at least 1");
    if (kernel.cluster > 1)
        throw SimtError(kernel.file + ": kernel '" + kernel.name + "' uses clusters, which launch() runs (SimtChipModule does not)");
    std::vector<SmCore*> raw;
    for (int i = 0; i < params.sms; ++i) {
        sms_.push_back(std::make_unique<SmCore>(params.sm, i, executor_, port));
        raw.push_back(sms_.back().get());
    }
    dispatcher_.initial_fill(raw);
    for (int i = 0; i < params.sms; ++i) {
        if (windowed_) sc_core::sc_spawn([this, i] { windowed_sm_process(i); }, sc_core::sc_gen_unique_name("sm"));
        else sc_core::sc_spawn([this, i] { sm_process(i); }, sc_core::sc_gen_unique_name("sm"));
    }
    if (windowed_) sc_core::sc_spawn([this] { window_process(); }, sc_core::sc_gen_unique_name("memory_windows"));
}

void SimtChipModule::windowed_sm_process(int index) {
    SmCore& sm = *sms_[static_cast<std::size_t>(index)];
    sm.set_now(static_cast<std::uint64_t>(sc_core::sc_time_stamp() / clock_period_));
    for (;;) {
        sc_core::wait(window_open_);
        if (!sm.busy()) continue;
        for (;;) {  // to the window's end, taking new blocks at the cycles blocks complete
            const bool completed = sm.run_until_block_completes(window_end_);
            const auto now = static_cast<std::uint64_t>(sc_core::sc_time_stamp() / clock_period_);
            if (sm.now() > now) sc_core::wait(clock_period_ * static_cast<double>(sm.now() - now));
            if (!completed) break;
            dispatcher_.refill(sm);
            if (!sm.busy()) break;
        }
        if (++arrived_ == running_) all_arrived_.notify(sc_core::SC_ZERO_TIME);
    }
}

void SimtChipModule::window_process() {
    constexpr std::uint64_t kNone = ~std::uint64_t{0};
    std::vector<SmCore*> raw;
    for (const auto& sm : sms_) raw.push_back(sm.get());
    std::vector<SectorAnswer> answers;
    const std::uint64_t window = port_.lookahead_cycles();
    for (bool first = true;; first = false) {
        if (!first) {
            if (running_ > 0) sc_core::wait(all_arrived_);
            port_.advance(window_end_, answers);
            deliver_answers(answers, raw);
        }
        // The next window, chosen as launch() does.
        int busy = 0;
        std::uint64_t start = port_.next_activity_cycle();
        for (const SmCore* sm : raw) {
            if (!sm->busy()) continue;
            ++busy;
            const std::uint64_t next = sm->next_event_cycle();
            if (next < SmCore::kWaitsForMemory) start = std::min(start, std::max(sm->now(), next));
        }
        if (busy == 0) break;
        start = start == kNone ? window_end_ : std::max(start, window_end_);
        window_end_ = start + window;
        running_ = busy;
        arrived_ = 0;
        window_open_.notify(sc_core::SC_ZERO_TIME);
    }
    port_.advance(kNone, answers);
    deliver_answers(answers, raw);
    // The kernel is done when its last stores have been accepted.
    std::uint64_t last = 0;
    for (const SmCore* sm : raw) last = std::max(last, sm->stats().last_memory_cycle);
    const auto now = static_cast<std::uint64_t>(sc_core::sc_time_stamp() / clock_period_);
    if (last > now) sc_core::wait(clock_period_ * static_cast<double>(last - now));
    drained_ = true;
}

void SimtChipModule::sm_process(int index) {
    SmCore& sm = *sms_[static_cast<std::size_t>(index)];
    const std::uint64_t start = static_cast<std::uint64_t>(sc_core::sc_time_stamp() / clock_period_);
    sm.set_now(start);
    while (sm.busy()) {
        const bool completed = sm.run_until_block_completes();
        const auto now = static_cast<std::uint64_t>(sc_core::sc_time_stamp() / clock_period_);
        if (sm.now() > now) sc_core::wait(clock_period_ * static_cast<double>(sm.now() - now));
        if (completed) dispatcher_.refill(sm);
    }
    // The kernel is done when its last stores have been accepted.
    const auto now = static_cast<std::uint64_t>(sc_core::sc_time_stamp() / clock_period_);
    if (sm.stats().last_memory_cycle > now)
        sc_core::wait(clock_period_ * static_cast<double>(sm.stats().last_memory_cycle - now));
    ++finished_sms_;
}

KernelStats SimtChipModule::stats() const {
    std::vector<SmCore*> raw;
    for (const auto& sm : sms_) raw.push_back(sm.get());
    return collect_stats(raw, executor_, params_);
}

}  // namespace accelsim::simt
