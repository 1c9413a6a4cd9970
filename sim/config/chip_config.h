#pragma once
// The typed, validated chip configuration. sim/config/config_loader fills it from JSON (strict:
// unknown keys, wrong types and out-of-range values are errors); models never see JSON, the
// engine copies what each model needs into that model's own Params struct.
//
// JSON layout (docs/config.md is the reference; every key below is a JSON key of the same name):
//   name, kind ("systolic"|"simt"), description, extends, source{...free-form citations...},
//   clock_mhz, default_dtype, memory ("ideal"|"hierarchy"), seed, cost_per_hour_usd, tdp_w,
//   tpu{cores, mxus_per_core, vmem_bytes, cmem_bytes, vector{lanes, sublanes}, dma{...}},
//   mxu{rows, cols, dataflow, overlap_folds, mode, macs_per_pe_per_cycle{int8,fp16,bf16,fp32}},
//   compiler{fuse_elementwise},
//   gpu{sms, launch_overhead_cycles},
//   sm{compute_capability, schedulers, warp_scheduler, max_warps, max_threads, max_blocks, ...},
//   hbm{preset, channels, ..., timing{...}}, l2{...}, interconnect{...}
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "models/common/dtype.h"

namespace accelsim {

struct DTypeRates {  // per-dtype throughput multipliers; 0 means "not supported by this unit"
    double int8 = 0, fp16 = 0, bf16 = 0, fp32 = 0;
    double of(DType t) const {
        switch (t) {
            case DType::int8: return int8;
            case DType::fp16: return fp16;
            case DType::bf16: return bf16;
            case DType::fp32: return fp32;
            case DType::int32: return 0;
        }
        return 0;
    }
};

struct TpuConfig {
    int cores = 1;
    int mxus_per_core = 1;
    std::int64_t vmem_bytes = 0;     // per core
    std::int64_t cmem_bytes = 0;     // per chip, shared; 0 = none
    double cmem_bytes_per_cycle = 0; // CMEM port, bytes per core cycle (shared by the cores)
    int vector_lanes = 128;
    int vector_sublanes = 8;         // elementwise ops per core per cycle = lanes * sublanes
    double dma_bytes_per_cycle = 0;  // per core; 0 = limited only by the memory behind it
    int dma_latency_cycles = 0;
    bool fuse_elementwise = false;   // compiler.fuse_elementwise
};

struct MxuConfig {
    int rows = 128, cols = 128;
    std::string dataflow = "ws";   // ws | os | is
    bool overlap_folds = true;
    std::string mode = "fast";     // fast | stepped
    DTypeRates macs_per_pe_per_cycle{1, 1, 1, 0};
};

struct SmConfig {
    std::string compute_capability = "sm_80";
    int schedulers = 4;
    std::string warp_scheduler = "gto";  // lrr | gto | two_level
    int max_warps = 64, max_threads = 2048, max_blocks = 32;
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
};

struct GpuConfig {
    int sms = 1;
    int launch_overhead_cycles = 0;
};

struct HbmConfig {
    std::string preset = "HBM2";
    int channels = 8;             // independent channels, each bus_width_bits wide
    int pseudo_channels = 1;      // per channel
    int bus_width_bits = 128;     // per channel
    double data_rate_gbps = 2.0;  // per pin
    int bank_groups = 4, banks_per_group = 4;
    std::int64_t row_bytes = 2048;
    std::string address_map = "channel_low";
    std::string scheduler = "fr_fcfs";
    std::string page_policy = "open";
    int queue_depth = 32;
    double controller_latency_ns = 0;
    std::map<std::string, double> timing;  // overrides of the preset, in memory-clock cycles (tCK in ns)
    double peak_bytes_per_second() const {
        return static_cast<double>(channels) * bus_width_bits / 8.0 * data_rate_gbps * 1e9;
    }
};

struct L2Config {
    std::int64_t size_bytes = 0;  // 0 = no L2
    int slices = 1, ways = 16, line_bytes = 128, sector_bytes = 32;
    int mshrs_per_slice = 64;
    double bytes_per_cycle_per_slice = 64;
    int hit_latency_cycles = 200;
};

struct InterconnectConfig {
    int latency_cycles = 0;
    double bytes_per_cycle_per_port = 64;
};

struct ChipConfig {
    std::string name;
    std::string kind = "systolic";  // a chip kind of sim/engine/chip_registry ("systolic", "simt")
    std::string description;
    double clock_mhz = 1000;
    DType default_dtype = DType::bf16;
    std::string memory = "hierarchy";  // "ideal": operands always ready (compute effects alone)
    std::uint64_t seed = 1;
    std::optional<double> cost_per_hour_usd, tdp_w;

    TpuConfig tpu;
    MxuConfig mxu;
    GpuConfig gpu;
    SmConfig sm;
    HbmConfig hbm;
    L2Config l2;
    InterconnectConfig interconnect;

    std::string file;        // the config file it was loaded from
    nlohmann::json effective;  // the merged, validated JSON with defaults filled (embedded in reports)

    double clock_hz() const { return clock_mhz * 1e6; }
};

}  // namespace accelsim
