#include "models/tpu/tpu_validation.h"

#include <exception>
#include <memory>
#include <stdexcept>

#include "models/common/validation_worker.h"
#include "models/tpu/tpu_vector.h"

namespace accelsim::tpu {

GemmValidation::GemmValidation(const Op& op, std::uint64_t seed, bool on_worker_thread, const ActivationOutliers& outliers)
    : op_(op),
      seed_(seed),
      outliers_(is_quantized(op.dtype) ? outliers : ActivationOutliers{}),
      data_ready_(data_promise_.get_future().share()) {
    if (!on_worker_thread) {
        make_data();
        data_promise_.set_value();
        reference_ = std::async(std::launch::deferred, [this] { return make_reference(); });
        return;
    }
    reference_ = run_on_validation_worker([this] {
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
        conv_ = random_conv_data(op_.conv, op_.dtype, seed_, outliers_);
        output_scale_ = conv_.output_scale;
        std::vector<float>().swap(conv_.input_fp32);
        std::vector<float>().swap(conv_.filter_fp32);
        data_ = lower_conv_to_gemm(op_.conv, conv_);
    } else {
        data_ = random_gemm_data(op_.as_gemm(), op_.dtype, seed_, outliers_);
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
                                                   ? unquantized_conv_reference(op_.conv, seed_, outliers_)
                                                   : unquantized_gemm_reference(op_.as_gemm(), seed_, outliers_);
        result.quantization = quantization_error(op_.dtype, c, unquantized, output_scale_);
    }
    return result;
}

std::future<NumericsCheck> start_vector_check(const Op& op, std::uint64_t seed, bool on_worker_thread) {
    return start_reference([op, seed] { return run_vector_op_checked(op, seed); }, on_worker_thread);
}

}  // namespace accelsim::tpu
