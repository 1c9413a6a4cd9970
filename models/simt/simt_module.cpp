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
      dispatcher_(dims.grid) {
    if (params.sms < 1) throw SimtError("SimtChipModule: sms must be at least 1");
    std::vector<SmCore*> raw;
    for (int i = 0; i < params.sms; ++i) {
        sms_.push_back(std::make_unique<SmCore>(params.sm, i, executor_, port));
        raw.push_back(sms_.back().get());
    }
    dispatcher_.initial_fill(raw);
    for (int i = 0; i < params.sms; ++i)
        sc_core::sc_spawn([this, i] { sm_process(i); }, sc_core::sc_gen_unique_name("sm"));
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
