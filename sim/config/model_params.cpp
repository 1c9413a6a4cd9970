#include "sim/config/model_params.h"

#include <stdexcept>
#include <string>

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
    p.requesters = chip.kind == ChipKind::simt ? chip.gpu.sms : chip.tpu.cores;
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
    if (!p.ideal_memory) p.memory = memory_hierarchy_params_from_config(config);
    return p;
}

simt::SimtParams simt_params_from(const ChipConfig& config) {
    simt::SimtParams p;
    p.sms = config.gpu.sms;
    p.sm = simt::sm_params_from(config.sm);
    return p;
}

}  // namespace accelsim
