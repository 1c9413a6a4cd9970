#pragma once
// The SM the GPU kernel tests run on: the published sm_80 (A100) limits, `sms` of them.
#include "models/simt/simt_gpu.h"

namespace accelsim::gpu::test {

inline simt::SimtParams a100_like(int sms) {
    simt::SimtParams p;
    p.sms = sms;
    p.sm.limits = *simt::published_limits("sm_80");
    return p;
}

}  // namespace accelsim::gpu::test
