#pragma once
// ChipConfig -> simt::SimtParams for the engine's `kernel` op (header-only so that unit tests can
// check it without the config loader). Per-SM lane counts become per-sub-partition initiation
// intervals: a warp instruction needs 32 lanes, a sub-partition has lanes / schedulers of them.
#include <algorithm>

#include "models/simt/simt_gpu.h"
#include "sim/config/chip_config.h"
#include "sim/occupancy/occupancy_report.h"

namespace accelsim {

inline simt::SimtParams simt_params_from(const ChipConfig& config) {
    const SmConfig& sm = config.sm;
    simt::SimtParams p;
    p.sms = config.gpu.sms;
    p.sm.limits = occupancy_limits_from(sm);
    p.sm.sub_partitions = std::max(1, sm.schedulers);
    p.sm.warp_scheduler = sm.warp_scheduler;
    p.sm.smem_banks = sm.smem_banks;
    p.sm.smem_bank_bytes = sm.smem_bank_bytes;
    p.sm.l1.bytes = sm.l1_bytes;  // 0 = no L1
    const int parts = p.sm.sub_partitions;
    auto interval = [parts](double per_sm, double work) {
        const double per_part = per_sm / parts;
        return per_part > 0 ? std::max(1, static_cast<int>(work / per_part + 0.999999)) : 1;
    };
    if (sm.int_lanes > 0) p.sm.int_alu.initiation_interval = interval(sm.int_lanes, simt::kWarpSize);
    if (sm.fp32_lanes > 0) p.sm.fp32.initiation_interval = interval(sm.fp32_lanes, simt::kWarpSize);
    if (sm.sfu_lanes > 0) p.sm.sfu.initiation_interval = interval(sm.sfu_lanes, simt::kWarpSize);
    // mma.m16n8k16 = 16*8*16 = 2048 MACs.
    if (sm.tensor_macs_per_cycle.fp16 > 0)
        p.sm.tensor.initiation_interval = interval(sm.tensor_macs_per_cycle.fp16, 16 * 8 * 16);
    return p;
}

}  // namespace accelsim
