#pragma once
// Lowers one GEMM op for `target`, runs its kernel on `params` behind a fixed-latency memory and
// checks it (the 8-bit GEMM tests: int8 and fp8; no split-K, so one launch).
#include <gtest/gtest.h>

#include <vector>

#include "models/gpu/gemm.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::gpu::test {

struct GemmRun {
    simt::KernelStats stats;
    LoweringNumerics numerics;
    std::vector<StatValue> lowering_stats;
};

// `skip`: a timing-only launch (no payload arithmetic).
inline GemmRun run_single_launch_gemm(const Op& op, const simt::SimtParams& params, const LoweringTarget& target,
                                      bool skip, const GemmTile* tile = nullptr) {
    simt::GlobalMemory memory;
    const LoweredKernel lk = tile ? lower_gemm_with_tile(op, memory, target, *tile) : lower_gemm(op, memory, target);
    EXPECT_TRUE(lk.then.empty());  // no split-K for the 8-bit kernels
    simt::FixedLatencyMemory port(200);
    GemmRun r;
    r.stats = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {skip});
    if (lk.check) r.numerics = lk.check(memory);
    r.lowering_stats = lk.stats;
    return r;
}

// The value of one lowering stat, -1 if absent.
inline double stat_of(const std::vector<StatValue>& stats, const StatDef& def) {
    for (const StatValue& v : stats)
        if (v.def == &def) return v.value;
    return -1;
}

}  // namespace accelsim::gpu::test
