#include "models/tpu/tpu_validation.h"

#include <sched.h>

#include <exception>
#include <stdexcept>
#include <thread>

#include "models/tpu/tpu_vector.h"

namespace accelsim::tpu {

GemmValidation::GemmValidation(const Op& op, std::uint64_t seed, bool on_worker_thread)
    : op_(op), seed_(seed), data_ready_(data_promise_.get_future().share()) {
    if (!on_worker_thread) {
        make_data();
        data_promise_.set_value();
        reference_ = std::async(std::launch::deferred, [this] { return make_reference(); });
        return;
    }
    reference_ = std::async(std::launch::async, [this] {
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

GemmValidation::~GemmValidation() = default;

void GemmValidation::make_data() {
    if (op_.kind == OpKind::conv2d) {
        conv_ = random_conv_data(op_.conv, op_.dtype, seed_);
        data_ = lower_conv_to_gemm(op_.conv, conv_);
    } else {
        data_ = random_gemm_data(op_.as_gemm(), op_.dtype, seed_);
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
    return compare_with_reference(c, reference_.get());
}

std::future<NumericsCheck> start_vector_check(const Op& op, std::uint64_t seed, bool on_worker_thread) {
    return std::async(on_worker_thread ? std::launch::async : std::launch::deferred,
                      [op, seed] { return run_vector_op_checked(op, seed); });
}

bool validation_worker_by_default() {
    // The CPUs this process may run on (taskset, a container's cpuset), not the machine's: a
    // worker sharing the only CPU with the simulator would just take turns with it.
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) return CPU_COUNT(&allowed) > 1;
    return std::thread::hardware_concurrency() > 1;
}

}  // namespace accelsim::tpu
