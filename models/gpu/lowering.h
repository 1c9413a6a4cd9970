#pragma once
// The GPU kernel library's one entry point: a trace op becomes one kernel launch on the SIMT chip
// (two for a split-K GEMM: the partial products, then their sum).
// Each op family lowers in its own file (elementwise.cpp, gemm.cpp, conv.cpp, reduction.cpp);
// lower_op() picks the family. The lowering allocates and fills the op's buffers in `memory`,
// picks the kernel and the launch shape, and (when the data is real) returns a check that compares
// the kernel's outputs with an independent reference (Eigen or a host loop) after the launch.
// docs/gpu.md documents every kernel, its launch shape and the rule that chose it.
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <vector>

#include "models/common/dtype.h"
#include "models/common/op.h"
#include "models/common/quantization.h"
#include "models/common/stats.h"
#include "models/simt/execution.h"
#include "models/simt/isa.h"
#include "models/simt/sm_core.h"
#include "models/simt/trip_sampling.h"

namespace accelsim::gpu {

// Bytes the buffers of an elementwise, pool, softmax or layernorm op may total: global memory is
// 32-bit addressed, and a test machine's RAM (GEMMs and convolutions: kGemmMaxBufferBytes, gemm.h).
inline constexpr std::uint64_t kVectorOpMaxBufferBytes = std::uint64_t{1} << 30;

// What the lowering may assume about the chip.
struct LoweringTarget {
    int sms = 1;
    simt::SmParams sm;       // occupancy limits, smem size, pipes
    std::uint64_t seed = 1;  // data: the same seed gives the same inputs
    ActivationOutliers outliers;  // of int8/fp8 GEMM and convolution activations (quantization.h)
    // true: inputs get seeded random values and `check` is set (--validate). false: buffers stay
    // zero (timing-only runs skip fp payloads, so their values never matter).
    bool real_data = false;
    // With real_data: GEMM references (Eigen) are computed on the validation worker while the
    // kernel runs (models/common/validation_worker.h); the outcome is the same either way.
    bool reference_on_worker = false;
    // What a second launch costs, for lowerings that may split an op (split-K GEMMs): the chip's
    // per-launch overhead and its HBM peak, in SM cycles. 0 overhead and 0 bandwidth: never split.
    int launch_overhead_cycles = 0;
    double hbm_bytes_per_cycle = 0;
    double sm_port_bytes_per_cycle = 0;  // an SM's port to the L2 (0: no bandwidth floor)
    // The chip's dense tensor-core MACs per SM per cycle by operand dtype (the config's
    // sm.tensor_macs_per_cycle; a100's by default). A dtype whose rate is 0 has no tensor-core path:
    // its 16-bit GEMMs and convolutions run the FP32 FFMA kernels on fp32 copies of the operands
    // (k80 for every dtype, v100 for bf16), its int8 GEMMs and convolutions keep their roofline
    // rows (docs/gpu.md).
    DTypeRates tensor_macs_per_sm_cycle{2048, 1024, 1024, 512};
    bool tensor_cores_for(DType dtype) const { return tensor_macs_per_sm_cycle.of(dtype) > 0; }
    std::int64_t l2_bytes = 0;           // the L2's capacity (0: none; the Hopper tile scheduler's swizzle)
    double l2_bytes_per_cycle = 0;       // all L2 slices together, per SM cycle (0: no limit; the Hopper tile rule)
};

// The outcome of comparing a kernel's outputs with the reference.
struct LoweringNumerics {
    std::int64_t checked = 0;  // output values compared
    double max_abs_err = 0, max_rel_err = 0;
    bool passed = true;
    // int8 and fp8 GEMMs: the output against Eigen's fp32 GEMM of the unquantized inputs
    // (models/common/quantization.h).
    std::optional<QuantizationError> quantization;
};

// A further launch of the same op, run after the first on the same memory (split-K's sum).
struct LoweredLaunch {
    const simt::Kernel* kernel = nullptr;
    simt::Dim dims;
    std::vector<std::uint32_t> args;
};

struct LoweredKernel {
    const simt::Kernel* kernel = nullptr;  // owned by the library (assembled once per process)
    simt::Dim dims;
    std::vector<std::uint32_t> args;
    std::vector<LoweredLaunch> then;  // launched in order after the first (most ops: none)
    // Lowering choices for the report, e.g. gpu.tile_m / gpu.tile_n / gpu.grid (plain values).
    std::vector<StatValue> stats;
    // Set when target.real_data: run after the launch on the same memory.
    std::function<LoweringNumerics(const simt::GlobalMemory&)> check;
    // The first launch's main loop, when its trips may be sampled (gpu.sampling waves_and_trips).
    std::optional<simt::SampledLoop> loop;
};

// A shape or size the library cannot run (too large for 32-bit global memory, ...). The chip turns
// it into an input error naming the op's file, line, kind and name, so the message does not name the op.
class LoweringError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// nullopt when the library has no kernel for the op on this target (the chip keeps its roofline
// row, with no_kernel_reason's text) or the op is a trace `kernel` (the chip runs it as written).
std::optional<LoweredKernel> lower_op(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target);
// Why the library has no kernel for `op` on `target`, in a phrase the report prints next to the
// roofline row ("fp8 softmax needs the sm_89+ cvt e4m3x2/e5m2x2 forms; this chip is gfx942");
// nullopt when lower_op lowers it, and for `kernel` ops.
std::optional<std::string> no_kernel_reason(const Op& op, const LoweringTarget& target);

// The families behind lower_op (each in its own file).
LoweredKernel lower_elementwise(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target);
LoweredKernel lower_gemm(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target);     // matmul, bmm
LoweredKernel lower_conv2d(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target);   // implicit GEMM (conv.h)
LoweredKernel lower_softmax(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target);
LoweredKernel lower_layernorm(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target);
// pool.cpp: one thread per output word; fp32, or 16-bit with an even channel count (has_pool_kernel).
LoweredKernel lower_pool(const Op& op, simt::GlobalMemory& memory, const LoweringTarget& target);
bool has_pool_kernel(const Op& op);

}  // namespace accelsim::gpu
