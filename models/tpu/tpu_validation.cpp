#include "models/tpu/tpu_validation.h"

#include <sched.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "models/tpu/tpu_vector.h"

namespace accelsim::tpu {

namespace {

// One worker thread for the process, started at the first check that asks for it, taking tasks
// in order. A thread per op (std::async) cost more than it saved on a busy machine: each new
// thread queued behind the other processes' before its first instruction.
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
    template <class F>
    auto submit(F f) -> std::future<decltype(f())> {
        auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::move(f));
        auto result = task->get_future();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            tasks_.emplace_back([task] { (*task)(); });
        }
        wake_.notify_one();
        return result;
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

ValidationWorker& worker() {
    static ValidationWorker instance;
    return instance;
}

}  // namespace

GemmValidation::GemmValidation(const Op& op, std::uint64_t seed, bool on_worker_thread)
    : op_(op), seed_(seed), data_ready_(data_promise_.get_future().share()) {
    if (!on_worker_thread) {
        make_data();
        data_promise_.set_value();
        reference_ = std::async(std::launch::deferred, [this] { return make_reference(); });
        return;
    }
    reference_ = worker().submit([this] {
        try {
            make_data();
        } catch (...) {
            data_promise_.set_exception(std::current_exception());
            throw;
        }
        data_promise_.set_value();
        return make_reference();
    });
}

GemmValidation::~GemmValidation() {
    // The worker's task uses this object: it must be done before the members go (also when the
    // simulation threw before check() was called).
    if (reference_.valid()) reference_.wait();
}

void GemmValidation::make_data() {
    // int8 and fp8: the fp32 values before quantization are not held while the op runs (a large
    // GEMM's would add half its operands' memory); check() draws them again from the seed.
    if (op_.kind == OpKind::conv2d) {
        conv_ = random_conv_data(op_.conv, op_.dtype, seed_);
        output_scale_ = conv_.output_scale;
        std::vector<float>().swap(conv_.input_fp32);
        std::vector<float>().swap(conv_.filter_fp32);
        data_ = lower_conv_to_gemm(op_.conv, conv_);
    } else {
        data_ = random_gemm_data(op_.as_gemm(), op_.dtype, seed_);
        output_scale_ = data_.output_scale;
        std::vector<float>().swap(data_.a_fp32);
        std::vector<float>().swap(data_.b_fp32);
    }
}

NumericsReference GemmValidation::make_reference() const {
    if (op_.kind == OpKind::conv2d) return conv_reference(op_.conv, op_.dtype, conv_);
    return gemm_reference(op_.as_gemm(), op_.dtype, data_);
}

const GemmData& GemmValidation::data() {
    data_ready_.get();  // rethrows the worker's exception, if any
    return data_;
}

NumericsCheck GemmValidation::check(const std::vector<double>& c) {
    if (!reference_.valid()) throw std::logic_error("tpu validation: check() called twice");
    NumericsCheck result = compare_with_reference(c, reference_.get());  // the reference goes here
    if (is_quantized(op_.dtype)) {
        // The chip is done with the operands: their memory goes before the fp32 values come back.
        data_ = GemmData{};
        conv_ = ConvData{};
        const std::vector<float> unquantized = op_.kind == OpKind::conv2d
                                                   ? unquantized_conv_reference(op_.conv, seed_)
                                                   : unquantized_gemm_reference(op_.as_gemm(), seed_);
        result.quantization = quantization_error(op_.dtype, c, unquantized, output_scale_);
    }
    return result;
}

std::future<NumericsCheck> start_vector_check(const Op& op, std::uint64_t seed, bool on_worker_thread) {
    auto check = [op, seed] { return run_vector_op_checked(op, seed); };
    if (on_worker_thread) return worker().submit(std::move(check));
    return std::async(std::launch::deferred, std::move(check));
}

bool validation_worker_by_default() {
    // The CPUs this process may run on (taskset, a container's cpuset), not the machine's: a
    // worker sharing the only CPU with the simulator would just take turns with it.
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) return CPU_COUNT(&allowed) > 1;
    return std::thread::hardware_concurrency() > 1;
}

}  // namespace accelsim::tpu
