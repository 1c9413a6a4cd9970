#include "sim/engine/chip_registry.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "models/gpu/gpu_chip.h"
#include "models/tpu/tpu_chip_model.h"
#include "sim/input_error.h"
#include "sim/membench/memory_params_from_config.h"
#include "sim/occupancy/simt_params.h"

namespace accelsim {

namespace {

std::string config_where(const ChipConfig& config) { return config.file.empty() ? "config" : config.file; }

// ---- kind "systolic": models/tpu ----

tpu::TpuChipParams tpu_params_from_config(const ChipConfig& config) {
    tpu::TpuChipParams p;
    p.cores = config.tpu.cores;
    p.mxus_per_core = config.tpu.mxus_per_core;
    p.mxu.rows = config.mxu.rows;
    p.mxu.cols = config.mxu.cols;
    p.mxu.overlap_folds = config.mxu.overlap_folds;
    const auto dataflow = parse_mxu_dataflow(config.mxu.dataflow);
    if (!dataflow) throw InputError(config_where(config) + ": mxu.dataflow = \"" + config.mxu.dataflow + "\" is not ws, os or is");
    p.mxu.dataflow = *dataflow;
    const auto mode = parse_mxu_mode(config.mxu.mode);
    if (!mode) throw InputError(config_where(config) + ": mxu.mode = \"" + config.mxu.mode + "\" is not fast or stepped");
    p.mxu.mode = *mode;
    const DTypeRates& rates = config.mxu.macs_per_pe_per_cycle;
    p.mxu_rates = tpu::MxuRates{rates.int8, rates.fp16, rates.bf16, rates.fp32};
    p.vector.lanes = config.tpu.vector_lanes;
    p.vector.sublanes = config.tpu.vector_sublanes;
    p.dma.bytes_per_cycle = config.tpu.dma_bytes_per_cycle;
    p.dma.latency_cycles = config.tpu.dma_latency_cycles;
    p.vmem_bytes = config.tpu.vmem_bytes;
    p.cmem_bytes = config.tpu.cmem_bytes;
    p.cmem_bytes_per_cycle = config.tpu.cmem_bytes_per_cycle;
    p.ideal_memory = config.memory == "ideal";
    p.fuse_elementwise = config.tpu.fuse_elementwise;
    p.clock_hz = config.clock_hz();
    p.seed = config.seed;
    if (!p.ideal_memory) p.memory = memory_hierarchy_params_from_config(config);
    return p;
}

std::unique_ptr<ChipModel> make_systolic_chip(const ChipConfig& config, const RunOptions& options) {
    const tpu::TpuChipParams params = tpu_params_from_config(config);
    try {
        return std::make_unique<tpu::TpuChipModel>(params, tpu::TpuChipModelOptions{options.validate, options.systemc});
    } catch (const std::invalid_argument& e) {
        // MxuParams::validate and the chip's own checks name the key ("mxu.rows must be ...").
        throw InputError(config_where(config) + ": " + e.what());
    }
}

// ---- kind "simt": models/gpu ----

gpu::GpuChipParams gpu_params_from_config(const ChipConfig& config) {
    if (config.memory != "ideal" && config.memory != "hierarchy")
        throw InputError(config_where(config) + ": memory = \"" + config.memory + "\" is not ideal or hierarchy");
    gpu::GpuChipParams p;
    p.simt = simt_params_from(config);
    if (config.memory == "hierarchy") p.memory = memory_hierarchy_params_from_config(config);
    // Ideal memory: every sector comes back after the L2 hit latency (a perfect L2, no bandwidth
    // limit); 200 cycles when the config has no L2.
    p.ideal_latency_cycles = config.l2.size_bytes > 0 ? config.l2.hit_latency_cycles : 200;
    p.launch_overhead_cycles = std::max(0, config.gpu.launch_overhead_cycles);
    p.sm_port_bytes_per_cycle = config.interconnect.bytes_per_cycle_per_port;
    p.clock_hz = config.clock_hz();
    p.seed = config.seed;
    for (DType t : {DType::int8, DType::fp16, DType::bf16, DType::fp32})
        p.tensor_macs_per_sm_cycle[t] = config.sm.tensor_macs_per_cycle.of(t);
    p.fp32_lanes = config.sm.fp32_lanes;
    p.int_lanes = config.sm.int_lanes;
    p.hbm_bytes_per_cycle = config.hbm.peak_bytes_per_second() / config.clock_hz();
    p.l2_bytes_per_cycle = config.l2.slices * config.l2.bytes_per_cycle_per_slice;
    return p;
}

std::unique_ptr<ChipModel> make_simt_chip(const ChipConfig& config, const RunOptions& options) {
    const gpu::GpuChipParams params = gpu_params_from_config(config);
    try {
        return std::make_unique<gpu::GpuChip>(params, gpu::GpuChipOptions{options.validate});
    } catch (const std::invalid_argument& e) {
        throw InputError(config_where(config) + ": " + e.what());
    }
}

struct Registry {
    std::mutex mutex;
    std::vector<std::pair<std::string, ChipFactory>> kinds;
};

Registry& registry() {
    // The built-in kinds: one line per chip kind.
    static Registry r{{}, {{"systolic", make_systolic_chip}, {"simt", make_simt_chip}}};
    return r;
}

}  // namespace

void register_chip_kind(const std::string& kind, ChipFactory factory) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (kind.empty()) throw std::logic_error("register_chip_kind: empty kind");
    for (const auto& [name, make] : r.kinds)
        if (name == kind) throw std::logic_error("register_chip_kind: kind '" + kind + "' is already registered");
    r.kinds.emplace_back(kind, std::move(factory));
}

std::vector<std::string> chip_kinds() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::vector<std::string> names;
    for (const auto& [name, make] : r.kinds) names.push_back(name);
    return names;
}

std::unique_ptr<ChipModel> make_chip(const ChipConfig& config, const RunOptions& options) {
    ChipFactory factory;
    {
        Registry& r = registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        for (const auto& [name, make] : r.kinds)
            if (name == config.kind) factory = make;
    }
    if (!factory) {
        std::string known;
        for (const std::string& name : chip_kinds()) known += (known.empty() ? "" : ", ") + name;
        throw InputError(config_where(config) + ": kind = \"" + config.kind + "\" is not a chip kind this build knows (" +
                         known + ")");
    }
    return factory(config, options);
}

}  // namespace accelsim
