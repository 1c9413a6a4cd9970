#pragma once
// The data side of one op's --validate check on the TPU chip: seeded random operands and the
// independent reference (Eigen GEMM, direct convolution loop, std:: math for vector ops), made
// either inline or on a second thread while the simulator runs the op's timing and datapath.
// Both ways compute the same values with the same code in the same order, so the outcome
// (checked count, maximum errors, pass/fail) is identical (tests/tpu/tpu_validation_test.cpp).
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <vector>

#include "models/common/op.h"
#include "models/common/validation_worker.h"
#include "models/tpu/tpu_numerics.h"

namespace accelsim::tpu {

// Changes the chip's output before it is compared (tests only: shows a wrong datapath fails).
using ResultFault = std::function<void(std::vector<double>& c)>;

// One GEMM-like op (matmul, conv2d as its implicit GEMM): the constructor starts making the
// operands and then the reference; data() waits for the operands, check() for the reference.
class GemmValidation {
public:
    // outliers: of an int8/fp8 op's activation (quantization.h).
    GemmValidation(const Op& op, std::uint64_t seed, bool on_worker_thread, const ActivationOutliers& outliers = {});
    ~GemmValidation();
    GemmValidation(const GemmValidation&) = delete;
    GemmValidation& operator=(const GemmValidation&) = delete;

    // The GEMM operands ([batch][m][k], [batch][k][n]; a convolution's lowered to its GEMM).
    const GemmData& data();
    // Compares the chip's output c ([batch][m][n]) with the reference; int8 and fp8 also with
    // Eigen's fp32 GEMM of the values before quantization (NumericsCheck::quantization). The
    // operands (data()) are released.
    NumericsCheck check(const std::vector<double>& c);

private:
    void make_data();
    NumericsReference make_reference() const;

    Op op_;
    std::uint64_t seed_;
    ActivationOutliers outliers_;  // none unless the dtype is quantized
    GemmData data_;
    ConvData conv_;  // conv2d: the tensors before lowering, for the direct-convolution reference
    double output_scale_ = 1;  // int8: what the outputs are multiplied by to be real values again
    std::promise<void> data_promise_;
    std::shared_future<void> data_ready_;
    std::future<NumericsReference> reference_;  // the destructor waits for it
};

// A vector op's whole check (run_vector_op_checked), inline at get() or on the worker thread.
std::future<NumericsCheck> start_vector_check(const Op& op, std::uint64_t seed, bool on_worker_thread);

}  // namespace accelsim::tpu
