#pragma once
// One SM as a chip's config describes it (the `sm` section): resident limits, schedulers, lanes
// and tensor-core rates as datasheets give them. The SM model's own parameters are derived from
// it: OccupancyLimits (occupancy_limits_from) and SmParams (sm_params_from: per-SM lane counts
// become per-sub-partition initiation intervals).
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/dtype.h"
#include "models/common/param_table.h"
#include "models/simt/occupancy.h"
#include "models/simt/sm_core.h"

namespace accelsim::simt {

struct SmSpec {
    std::string compute_capability = "sm_80";
    int schedulers = 4;
    std::string warp_scheduler = "gto";
    int wave_size = 32;  // threads per warp (wave): 32 on NVIDIA, 64 on AMD CDNA
    int max_warps = 64, max_threads = 2048, max_blocks = 32;
    int max_blocks_single_warp = 0;  // blocks of one warp per SM; 0 = max_blocks
    int registers = 65536;
    int register_alloc_unit = 256;       // registers are allocated per warp in units of this
    int max_registers_per_thread = 255;
    std::int64_t shared_memory_bytes = 0;            // per SM, the largest carveout
    std::int64_t shared_memory_per_block_bytes = 0;  // the most one block may request
    int shared_memory_alloc_unit = 128;
    int shared_memory_reserved_per_block = 0;        // 1024 on sm_80 and later
    int smem_banks = 32, smem_bank_bytes = 4;
    std::int64_t l1_bytes = 0;
    int fp32_lanes = 64;    // FP32 FMA per SM per cycle
    int int_lanes = 64;
    int sfu_lanes = 16;
    DTypeRates tensor_macs_per_cycle;  // dense tensor-core MACs per SM per cycle; fp32 = TF32
    Fp8Encoding fp8_encoding = Fp8Encoding::ocp;  // how the matrix units read fp8 bytes (dtype.h)
};

// The config's `sm` section.
const ParamTable<SmSpec>& sm_param_table();

OccupancyLimits occupancy_limits_from(const SmSpec& sm);
SmParams sm_params_from(const SmSpec& sm);

}  // namespace accelsim::simt
