#pragma once
// Launches a lowered kernel on a plain SIMT GPU of the target's SMs and runs its check: what the
// kernel-library tests share (elementwise_test.cpp, pool_test.cpp, validation_worker_test.cpp,
// high_address_test.cpp, reduction_test.cpp and the 8-bit elementwise and row tests).
#include <gtest/gtest.h>

#include <cstring>

#include "models/gpu/lowering.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::gpu::test {

struct LaunchOutcome {
    simt::KernelStats stats;
    LoweredKernel lowered;
    LoweringNumerics numerics;
};

// An elementwise op of n elements in `dtype` (what the elementwise tests lower).
inline Op elementwise_op(OpKind kind, std::int64_t n, DType dtype) {
    Op op;
    op.kind = kind;
    op.name = "t";
    op.elements = n;
    op.dtype = dtype;
    return op;
}

// A softmax or layernorm over `rows` rows of `cols` in `dtype` (what the reduction tests lower).
inline Op row_op(OpKind kind, std::int64_t rows, std::int64_t cols, DType dtype) {
    Op op;
    op.kind = kind;
    op.name = "t";
    op.rows = rows;
    op.cols = cols;
    op.dtype = dtype;
    return op;
}

// A target of `sms` SMs with the published limits of `arch` ("sm_80", ...); `real_data` fills the
// tensors from `seed` for the check.
inline LoweringTarget target_on(const char* arch, int sms, bool real_data, std::uint64_t seed) {
    LoweringTarget t;
    t.sms = sms;
    t.sm.limits = *simt::published_limits(arch);
    t.real_data = real_data;
    t.seed = seed;
    return t;
}

// A float kernel argument's value (the arguments hold fp32 bits).
inline float argument_float(std::uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

inline LaunchOutcome launch_lowered(LoweredKernel lowered, simt::GlobalMemory& memory, const LoweringTarget& target,
                                    bool skip_payload) {
    LaunchOutcome o;
    o.lowered = std::move(lowered);
    simt::LaunchOptions options;
    options.skip_fp_payload = skip_payload;
    simt::SimtParams params;
    params.sms = target.sms;
    params.sm = target.sm;
    o.stats = simt::launch(*o.lowered.kernel, o.lowered.dims, o.lowered.args, memory, params, nullptr, options);
    if (o.lowered.check) o.numerics = o.lowered.check(memory);
    return o;
}

// Every launch of `lk` in order (split-K's sum after the parts) on one memory, each behind its own
// ideal 200-cycle memory, then the check, which must exist.
inline LoweringNumerics launch_all_and_check(const LoweredKernel& lk, simt::GlobalMemory& memory,
                                             const simt::SimtParams& params) {
    simt::FixedLatencyMemory port(200);
    simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {});
    for (const LoweredLaunch& next : lk.then) {
        simt::FixedLatencyMemory next_port(200);
        simt::launch(*next.kernel, next.dims, next.args, memory, params, &next_port, {});
    }
    EXPECT_TRUE(lk.check);
    return lk.check ? lk.check(memory) : LoweringNumerics{};
}

// What a run without --validate does (timing only: no data, no payload) must cost the cycles and
// issue the instructions of a full run on `full_target` (real data), whose check must pass and
// whose kernel must declare its payload skippable. `lower(memory, target)` lowers the op.
template <class Lower>
void expect_timing_only_equals_full_run(Lower lower, const LoweringTarget& full_target) {
    LoweringTarget skip_target = full_target;
    skip_target.real_data = false;
    simt::GlobalMemory full_memory, skip_memory;
    const LaunchOutcome full = launch_lowered(lower(full_memory, full_target), full_memory, full_target, false);
    ASSERT_TRUE(full.lowered.kernel->fp_payload_skippable) << full.lowered.kernel->fp_dependence;
    const LaunchOutcome skip = launch_lowered(lower(skip_memory, skip_target), skip_memory, skip_target, true);
    EXPECT_TRUE(full.numerics.passed);
    EXPECT_EQ(skip.stats.cycles, full.stats.cycles);
    EXPECT_EQ(skip.stats.issued, full.stats.issued);
}

}  // namespace accelsim::gpu::test
