#pragma once
// The second core for --validate: one worker thread for the process that computes the
// independent references (Eigen GEMMs, host loops) while the simulator runs the op's timing and
// datapath. Tasks run in submission order; the same code computes the same values in the same
// order on either thread, so a check's outcome does not depend on where its reference was made
// (tests/tpu/tpu_validation_test.cpp, tests/gpu/validation_worker_test.cpp).
#include <functional>
#include <future>
#include <memory>

namespace accelsim {

// Queues `task` on the worker thread (started at the first call) and returns its future;
// exceptions thrown by the task go to the future.
void submit_to_validation_worker(std::function<void()> task);

template <class F>
auto run_on_validation_worker(F f) -> std::future<decltype(f())> {
    auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::move(f));
    auto result = task->get_future();
    submit_to_validation_worker([task] { (*task)(); });
    return result;
}

// `f` on the worker thread when `on_worker` (its result waits in the future), else deferred to the
// future's first get()/wait() on the caller's thread.
template <class F>
auto start_reference(F f, bool on_worker) -> std::future<decltype(f())> {
    if (on_worker) return run_on_validation_worker(std::move(f));
    return std::async(std::launch::deferred, std::move(f));
}

// Whether --validate uses the worker: when the process may run on more than one CPU.
bool validation_worker_by_default();

}  // namespace accelsim
