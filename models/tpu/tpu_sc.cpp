// sc_spawn (one thread per core, created in a loop) needs the dynamic-process API
// (SC_INCLUDE_DYNAMIC_PROCESSES, defined for the library in CMakeLists.txt).
#include "models/tpu/tpu_sc.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace accelsim::tpu {

TpuCoresModule::TpuCoresModule(sc_core::sc_module_name name, int cores)
    : sc_core::sc_module(name), start_(static_cast<std::size_t>(cores)) {
    for (int c = 0; c < cores; ++c) {
        sc_core::sc_spawn_options options;
        sc_core::sc_spawn([this, c]() { core_thread(c); }, ("core" + std::to_string(c)).c_str(), &options);
    }
}

void TpuCoresModule::core_thread(int core) {
    const auto index = static_cast<std::size_t>(core);
    const double ps_per_unit = sc_core::sc_get_time_resolution().to_seconds() * 1e12;
    while (true) {
        wait(start_[index]);
        bool woke = true;  // arrived at this time by waiting: take this core's delta slot
        CorePipeline& pipeline = (*pipelines_)[index];
        while (!pipeline.done()) {
            const memory::Picoseconds request = pipeline.next_request();
            const auto now = static_cast<memory::Picoseconds>(
                std::llround(static_cast<double>(sc_core::sc_time_stamp().value()) * ps_per_unit));
            if (request > now) {
                wait(sc_core::sc_time(static_cast<double>(request - now), sc_core::SC_PS));
                woke = true;
            }
            if (woke) {
                for (int i = 0; i < core; ++i) wait(sc_core::SC_ZERO_TIME);  // lower cores first
                woke = false;
            }
            pipeline.execute_next();
        }
        --running_;
    }
}

void TpuCoresModule::drive(std::vector<CorePipeline>& pipelines) {
    if (pipelines.size() != start_.size()) throw std::logic_error("TpuCoresModule: one pipeline per core");
    pipelines_ = &pipelines;
    running_ = static_cast<int>(pipelines.size());
    // The first call initialises the kernel (every thread runs up to its first wait) so that the
    // start notifications find the threads waiting.
    if (sc_core::sc_get_status() == sc_core::SC_ELABORATION) sc_core::sc_start(sc_core::SC_ZERO_TIME);
    for (auto& e : start_) e.notify(sc_core::SC_ZERO_TIME);
    sc_core::sc_start();  // returns when every thread waits for the next op
    if (running_ != 0) throw std::logic_error("TpuCoresModule: a core did not finish its pipeline");
}

}  // namespace accelsim::tpu
