#include "sim/config/model_params.h"

#include <stdexcept>
#include <string>

#include <algorithm>

#include "models/simt/sm_spec.h"

namespace accelsim {

memory::DramParams dram_params_from_config(const memory::DramConfig& hbm) {
    try {
        return memory::dram_params_from(hbm);
    } catch (const std::invalid_argument& e) {
        throw InputError(e.what());  // names the key: "hbm.timing.tRCDX: ..."
    }
}

memory::MemoryHierarchyParams memory_hierarchy_params_from_config(const ChipConfig& chip) {
    memory::MemoryHierarchyParams p;
    p.requesters = chip.kind == "simt" ? chip.gpu.sms : chip.tpu.cores;
    if (p.requesters <= 0) throw InputError("gpu.sms / tpu.cores: must be > 0");
    p.clock_hz = chip.clock_hz();
    p.crossbar.latency_cycles = chip.interconnect.latency_cycles;
    p.crossbar.bytes_per_cycle_per_port = chip.interconnect.bytes_per_cycle_per_port;
    if (chip.interconnect.latency_cycles < 0) throw InputError("interconnect.latency_cycles: must be >= 0");
    if (chip.interconnect.bytes_per_cycle_per_port <= 0)
        throw InputError("interconnect.bytes_per_cycle_per_port: must be > 0");
    if (chip.l2.size_bytes > 0) {
        memory::L2Params l2 = chip.l2;
        l2.clock_hz = p.clock_hz;
        try {
            memory::validate(l2);
        } catch (const std::invalid_argument& e) {
            throw InputError(e.what());  // already prefixed "l2: "
        }
        p.l2 = l2;
    }
    p.dram = dram_params_from_config(chip.hbm);
    return p;
}

tpu::TpuChipParams tpu_params_from_config(const ChipConfig& config) {
    tpu::TpuChipParams p;
    static_cast<tpu::TpuParams&>(p) = config.tpu;
    p.mxu = config.mxu;
    p.ideal_memory = config.memory == "ideal";
    p.clock_hz = config.clock_hz();
    p.seed = config.seed;
    p.outliers = config.activation_outliers();
    if (!p.ideal_memory) p.memory = memory_hierarchy_params_from_config(config);
    return p;
}

simt::SimtParams simt_params_from(const ChipConfig& config) {
    simt::SimtParams p;
    p.sms = config.gpu.sms;
    p.sm = simt::sm_params_from(config.sm);
    p.sm.max_cycles = static_cast<std::uint64_t>(config.gpu.max_kernel_cycles);
    p.sm.max_issued = static_cast<std::uint64_t>(config.gpu.max_kernel_instructions);
    return p;
}

gpu::GpuChipParams gpu_params_from_config(const ChipConfig& config) {
    if (config.memory != "ideal" && config.memory != "hierarchy")
        throw InputError((config.file.empty() ? std::string("config") : config.file) + ": memory = \"" + config.memory + "\" is not ideal or hierarchy");
    gpu::GpuChipParams p;
    p.simt = simt_params_from(config);
    if (config.memory == "hierarchy") p.memory = memory_hierarchy_params_from_config(config);
    // Ideal memory: every sector comes back after the L2 hit latency (a perfect L2, no bandwidth
    // limit); 200 cycles when the config has no L2.
    p.ideal_latency_cycles = config.l2.size_bytes > 0 ? config.l2.hit_latency_cycles : 200;
    p.launch_overhead_cycles = std::max(0, config.gpu.launch_overhead_cycles);
    p.cold_l2_per_op = config.gpu.cold_l2_per_op;
    p.sampling = config.gpu.sampling;
    p.fusion = gpu::resolve_gpu_fusion(config.gpu.fusion, config.host.launch == HostLaunch::engine);
    p.sm_port_bytes_per_cycle = config.interconnect.bytes_per_cycle_per_port;
    p.clock_hz = config.clock_hz();
    p.seed = config.seed;
    p.outliers = config.activation_outliers();
    for (const DType t : kOperandDTypes)
        p.tensor_macs_per_sm_cycle[t] = config.sm.tensor_macs_per_cycle.of(t);
    p.fp32_lanes = config.sm.fp32_lanes;
    p.int_lanes = config.sm.int_lanes;
    p.hbm_bytes_per_cycle = config.hbm.peak_bytes_per_second() / config.clock_hz();
    p.l2_bytes_per_cycle = config.l2.slices * config.l2.bytes_per_cycle_per_slice;
    return p;
}

}  // namespace accelsim
