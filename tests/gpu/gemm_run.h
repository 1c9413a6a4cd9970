#pragma once
// Lowers one GEMM op for `target`, runs its kernel on `params` behind a fixed-latency memory and
// checks it (the 8-bit GEMM tests: int8 and fp8; one launch without split-K, two with).
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

// The same with `splits` split-K parts forced on `tile`: the GEMM launch and the sum launch, one
// after the other on the same memory; stats are the GEMM launch's, then_cycles the sum's.
struct SplitGemmRun : GemmRun {
    std::uint64_t then_cycles = 0;
    int launches = 0;
};
inline SplitGemmRun run_split_gemm(const Op& op, const simt::SimtParams& params, const LoweringTarget& target, bool skip,
                                   const GemmTile& tile, int splits) {
    simt::GlobalMemory memory;
    const LoweredKernel lk = lower_gemm_with_tile(op, memory, target, tile, splits);
    simt::FixedLatencyMemory port(200);
    SplitGemmRun r;
    r.stats = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {skip});
    r.launches = 1 + static_cast<int>(lk.then.size());
    for (const LoweredLaunch& next : lk.then) {
        simt::FixedLatencyMemory next_port(200);
        r.then_cycles += simt::launch(*next.kernel, next.dims, next.args, memory, params, &next_port, {skip}).cycles;
    }
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
