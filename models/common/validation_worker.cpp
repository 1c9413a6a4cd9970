#include "models/common/validation_worker.h"

#include <sched.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace accelsim {

namespace {

// One thread for the process, taking tasks in order. A thread per op (std::async) cost more than
// it saved on a busy machine: each new thread queued behind the other processes' before its first
// instruction.
class ValidationWorker {
public:
    ValidationWorker() : thread_([this] { loop(); }) {}
    ~ValidationWorker() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_one();
        thread_.join();
    }
    void submit(std::function<void()> task) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            tasks_.push_back(std::move(task));
        }
        wake_.notify_one();
    }

private:
    void loop() {
        for (;;) {
            std::function<void()> task;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
                if (tasks_.empty()) return;  // stopping, nothing left
                task = std::move(tasks_.front());
                tasks_.pop_front();
            }
            task();  // a packaged_task: exceptions go to its future
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> tasks_;
    bool stop_ = false;
    std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace

void submit_to_validation_worker(std::function<void()> task) {
    static ValidationWorker worker;
    worker.submit(std::move(task));
}

bool validation_worker_by_default() {
    // The CPUs this process may run on (taskset, a container's cpuset), not the machine's: a
    // worker sharing the only CPU with the simulator would just take turns with it.
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) return CPU_COUNT(&allowed) > 1;
    return std::thread::hardware_concurrency() > 1;
}

}  // namespace accelsim
