#pragma once
// The typed, validated chip configuration. sim/config/config_loader fills it from JSON (strict:
// unknown keys, wrong types and out-of-range values are errors); models never see JSON. Each
// section is the owning model's own parameter struct, declared once with its parameter table
// (key, type, range, default, doc); sim/config/config_schema.cpp mounts those tables, and
// sim/config/model_params.h derives what is not stated directly (the full DRAM timing, the
// SM's pipelines, the TPU chip's memory system).
//
// JSON layout (docs/config.md is the reference; every key below is a JSON key of the same name):
//   name, kind ("systolic"|"simt"), description, extends, source{...free-form citations...},
//   clock_mhz, sustained_clock_mhz, default_dtype, memory ("ideal"|"hierarchy"), seed, cost_per_hour_usd,
//   tdp_w, memory_gb,
//   tpu{...}, compiler{...}  tpu::tpu_param_table, tpu::tpu_compiler_param_table
//   mxu{...}                 mxu_param_table
//   gpu{...}                 gpu::gpu_param_table
//   sm{...}                  simt::sm_param_table
//   host{...}                host_param_table (how the ops are launched; both kinds)
//   hbm{...}, l2{...}, interconnect{...}
//                            memory::dram_param_table, l2_param_table, crossbar_param_table
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "models/common/dtype.h"
#include "models/common/host_launch.h"
#include "models/gpu/gpu_params.h"
#include "models/memory/crossbar.h"
#include "models/memory/dram.h"
#include "models/memory/l2_cache.h"
#include "models/mxu/mxu.h"
#include "models/simt/sm_spec.h"
#include "models/tpu/tpu_params.h"

namespace accelsim {


struct ChipConfig {
    std::string name;
    std::string kind = "systolic";  // a chip kind of sim/engine/chip_registry ("systolic", "simt")
    std::string description;
    double clock_mhz = 1000;
    // The clock a GPU holds under sustained dense work at its power limit (0: it holds clock_mhz).
    // Every cycle of a run is at this clock; peak figures stay at clock_mhz, the clock datasheet
    // peaks are quoted at (docs/config.md, "Peak figures from a config").
    double sustained_clock_mhz = 0;
    DType default_dtype = DType::bf16;
    std::string memory = "hierarchy";  // "ideal": operands always ready (compute effects alone)
    std::uint64_t seed = 1;
    // Outlier features of quantized GEMMs' and convolutions' activations (quantization.h).
    double activation_outlier_fraction = 0, activation_outlier_magnitude = 20;
    ActivationOutliers activation_outliers() const { return {activation_outlier_fraction, activation_outlier_magnitude}; }
    std::optional<double> cost_per_hour_usd, tdp_w;
    std::optional<double> memory_gb;  // device memory capacity, documentation only (not simulated)

    tpu::TpuParams tpu;      // the tpu and compiler sections
    MxuParams mxu;
    gpu::GpuParams gpu;
    simt::SmSpec sm;
    memory::DramConfig hbm;
    memory::L2Params l2;     // size_bytes 0: no L2
    memory::CrossbarParams interconnect;
    HostParams host;         // how the trace's ops are launched (docs/host.md)

    std::string file;        // the config file it was loaded from
    nlohmann::json effective;  // the merged, validated JSON with defaults filled (embedded in reports)

    // The clock every simulated cycle runs at: the sustained clock when the config gives one.
    double clock_hz() const { return (sustained_clock_mhz > 0 ? sustained_clock_mhz : clock_mhz) * 1e6; }
    double run_clock_mhz() const { return clock_hz() / 1e6; }
    // The clock peak figures (datasheet TFLOP/s) are quoted at.
    double peak_clock_hz() const { return clock_mhz * 1e6; }
};

}  // namespace accelsim
