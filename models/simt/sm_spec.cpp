#include "models/simt/sm_spec.h"

#include <algorithm>

#include "models/simt/warp_scheduler.h"

namespace accelsim::simt {

const ParamTable<SmSpec>& sm_param_table() {
    static const ParamTable<SmSpec> table = [] {
        ParamTable<SmSpec> t;
        t.choice("compute_capability", &SmSpec::compute_capability, compute_capability_names(),
                 "CUDA compute capability (selects the warp-level MMA shapes).")
            .integer("schedulers", &SmSpec::schedulers, 1, 16,
                     "Warp schedulers per SM (each issues one warp instruction per cycle).")
            .choice("warp_scheduler", &SmSpec::warp_scheduler, warp_scheduler_names(),
                    "Warp scheduling policy: loose round robin, greedy-then-oldest, two-level.")
            .choice("fp8_encoding", &SmSpec::fp8_encoding, kFp8EncodingNames,
                    "How the tensor cores read fp8 bytes: `ocp` (OCP 8-bit formats, NVIDIA: e4m3 bias 7, max 448) "
                    "or `fnuz` (AMD CDNA3: bias 8 and 16, no infinities or negative zero, NaN 0x80; e4m3 max "
                    "240). docs/trace-format.md \"fp8\".")
            .integer("wave_size", &SmSpec::wave_size, 32, 64,
                     "Threads per warp (wavefront) in the occupancy rules: 32 (NVIDIA) or 64 (AMD CDNA; the core "
                     "runs a wave as two 32-lane warps on one scheduler).")
            .integer("max_warps", &SmSpec::max_warps, 1, 256, "Resident warps (waves) per SM.")
            .integer("max_threads", &SmSpec::max_threads, 1, 16384,
                     "Resident threads per SM (at most wave_size × max_warps).")
            .integer("max_blocks", &SmSpec::max_blocks, 1, 256, "Resident thread blocks per SM.")
            .integer("max_blocks_single_warp", &SmSpec::max_blocks_single_warp, 0, 256,
                     "Resident blocks of a single warp per SM (CDNA: one-wave workgroups need no barrier); 0 = "
                     "max_blocks.")
            .integer("registers", &SmSpec::registers, 1, 1 << 20, "32-bit registers per SM.")
            .integer("register_alloc_unit", &SmSpec::register_alloc_unit, 1, 65536,
                     "Registers are allocated per warp in multiples of this.")
            .integer("max_registers_per_thread", &SmSpec::max_registers_per_thread, 1, 1024,
                     "Most registers one thread may use.")
            .integer("shared_memory_bytes", &SmSpec::shared_memory_bytes, 0, kGiB,
                     "Shared memory per SM in bytes (the largest carveout).")
            .integer("shared_memory_per_block_bytes", &SmSpec::shared_memory_per_block_bytes, 0, kGiB,
                     "Most shared memory one block may request (opt-in maximum); at most shared_memory_bytes.")
            .integer("shared_memory_alloc_unit", &SmSpec::shared_memory_alloc_unit, 1, 65536,
                     "Shared memory is allocated per block in multiples of this many bytes.")
            .integer("shared_memory_reserved_per_block", &SmSpec::shared_memory_reserved_per_block, 0, 65536,
                     "Bytes of shared memory the system reserves per resident block (1024 on sm_80 and later).")
            .integer("smem_banks", &SmSpec::smem_banks, 1, 128, "Shared memory banks.")
            .integer("smem_bank_bytes", &SmSpec::smem_bank_bytes, 1, 64, "Width of one shared memory bank in bytes.")
            .integer("l1_bytes", &SmSpec::l1_bytes, 0, kGiB,
                     "Unified L1/shared memory capacity per SM in bytes (L1 gets what shared memory leaves).")
            .integer("fp32_lanes", &SmSpec::fp32_lanes, 0, 1024, "FP32 FMAs per SM per cycle.")
            .integer("int_lanes", &SmSpec::int_lanes, 0, 1024, "INT32 operations per SM per cycle.")
            .integer("sfu_lanes", &SmSpec::sfu_lanes, 0, 1024,
                     "Special-function (exp, rsqrt, ...) results per SM per cycle.")
            .rates("tensor_macs_per_cycle", &SmSpec::tensor_macs_per_cycle, 1e6,
                   "Dense tensor-core MACs per SM per cycle for each operand dtype (fp32 means TF32); 0 = no "
                   "tensor-core support.",
                   "tensor-core MACs per SM per cycle.", " (TF32)");
        return t;
    }();
    return table;
}

OccupancyLimits occupancy_limits_from(const SmSpec& sm) {
    OccupancyLimits l;
    l.arch = sm.compute_capability;
    l.max_warps = sm.max_warps;
    l.max_threads = sm.max_threads;
    l.max_blocks = sm.max_blocks;
    l.wave_size = sm.wave_size;
    l.max_blocks_single_warp = sm.max_blocks_single_warp;
    l.registers = sm.registers;
    l.register_alloc_unit = sm.register_alloc_unit;
    l.max_registers_per_thread = sm.max_registers_per_thread;
    l.register_partitions = sm.schedulers;  // one register-file bank group per sub-partition
    l.shared_memory_bytes = sm.shared_memory_bytes;
    l.shared_memory_per_block_bytes = sm.shared_memory_per_block_bytes;
    l.shared_memory_alloc_unit = sm.shared_memory_alloc_unit;
    l.shared_memory_reserved_per_block = sm.shared_memory_reserved_per_block;
    return l;
}

SmParams sm_params_from(const SmSpec& sm) {
    SmParams p;
    p.limits = occupancy_limits_from(sm);
    p.sub_partitions = std::max(1, sm.schedulers);
    p.warp_scheduler = sm.warp_scheduler;
    p.fp8_encoding = sm.fp8_encoding;
    p.smem_banks = sm.smem_banks;
    p.smem_bank_bytes = sm.smem_bank_bytes;
    p.l1.bytes = sm.l1_bytes;  // 0 = no L1
    // A warp instruction needs 32 lanes; a sub-partition has lanes / schedulers of them.
    const int parts = p.sub_partitions;
    auto interval = [parts](double per_sm, double work) {
        const double per_part = per_sm / parts;
        return per_part > 0 ? std::max(1, static_cast<int>(work / per_part + 0.999999)) : 1;
    };
    if (sm.int_lanes > 0) p.int_alu.initiation_interval = interval(sm.int_lanes, kWarpSize);
    if (sm.fp32_lanes > 0) p.fp32.initiation_interval = interval(sm.fp32_lanes, kWarpSize);
    if (sm.sfu_lanes > 0) p.sfu.initiation_interval = interval(sm.sfu_lanes, kWarpSize);
    // mma.m16n8k16 = 16*8*16 = 2048 MACs.
    if (sm.tensor_macs_per_cycle.fp16 > 0)
        p.tensor.initiation_interval = interval(sm.tensor_macs_per_cycle.fp16, mma_macs(MmaType::f16));
    // mma.m16n8k32.s8 = 4096 MACs at the int8 rate.
    if (sm.tensor_macs_per_cycle.int8 > 0)
        p.tensor_s8.initiation_interval = interval(sm.tensor_macs_per_cycle.int8, mma_macs(MmaType::s8));
    // fp8 mma.m16n8k32 = 4096 MACs at each format's rate.
    if (sm.tensor_macs_per_cycle.fp8_e4m3 > 0)
        p.tensor_e4m3.initiation_interval = interval(sm.tensor_macs_per_cycle.fp8_e4m3, mma_macs(MmaType::e4m3));
    if (sm.tensor_macs_per_cycle.fp8_e5m2 > 0)
        p.tensor_e5m2.initiation_interval = interval(sm.tensor_macs_per_cycle.fp8_e5m2, mma_macs(MmaType::e5m2));
    return p;
}

}  // namespace accelsim::simt
