#pragma once
// ChipConfig -> the memory models' Params. Header-only (inline) so that the memory unit tests,
// which link only accelsim_memory, use the very same mapping as the simulator.
//
// HbmConfig: the named preset gives every timing value; the config's organisation fields
// (channels, width, data rate, banks, row size, policies) always apply; `timing` overrides are
// applied last. The memory clock follows the data rate (see dram_params_from_config).
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/memory/dram.h"
#include "models/memory/memory_hierarchy.h"
#include "sim/config/chip_config.h"
#include "sim/input_error.h"

namespace accelsim {

inline memory::DramParams dram_params_from_config(const HbmConfig& c) {
    auto fail = [](const std::string& key, const std::string& what) { return InputError("hbm." + key + ": " + what); };
    memory::DramParams p;
    try {
        p = memory::dram_preset(c.preset);
    } catch (const std::invalid_argument& e) {
        throw fail("preset", e.what());
    }
    const double preset_rate = p.data_rate_gbps, preset_tck = p.timing.tCK;
    p.channels = c.channels;
    p.pseudo_channels = c.pseudo_channels;
    p.bus_width_bits = c.bus_width_bits;
    p.data_rate_gbps = c.data_rate_gbps;
    p.bank_groups = c.bank_groups;
    p.banks_per_group = c.banks_per_group;
    p.row_bytes = c.row_bytes;
    p.queue_depth = c.queue_depth;
    p.controller_latency_ns = c.controller_latency_ns;
    try {
        p.address_map = memory::dram_address_map_from_name(c.address_map);
    } catch (const std::invalid_argument& e) {
        throw fail("address_map", e.what());
    }
    try {
        p.scheduler = memory::dram_scheduler_from_name(c.scheduler);
    } catch (const std::invalid_argument& e) {
        throw fail("scheduler", e.what());
    }
    try {
        p.page_policy = memory::page_policy_from_name(c.page_policy);
    } catch (const std::invalid_argument& e) {
        throw fail("page_policy", e.what());
    }
    // A different data rate moves the memory clock at the preset's ratio (2 beats per tCK for
    // DDR/HBM2, 4 for HBM3) unless timing.tCK says otherwise. Burst-bound timings (BL, tCCD_S/L)
    // keep their cycles; the DRAM core's timings keep their nanoseconds (rounded up to whole
    // cycles), as in JEDEC speed bins: a faster interface does not make the arrays faster.
    double tck = c.data_rate_gbps > 0 ? preset_tck * preset_rate / c.data_rate_gbps : preset_tck;
    if (auto it = c.timing.find("tCK"); it != c.timing.end()) tck = it->second;
    if (!(tck > 0)) throw fail("timing.tCK", "must be > 0");
    if (std::abs(tck - preset_tck) > 1e-12) {
        for (const char* name : {"CL", "CWL", "tRCD", "tRP", "tRAS", "tRC", "tRRD_S", "tRRD_L", "tFAW", "tWR", "tWTR",
                                 "tRTP", "tREFI", "tRFC"}) {
            const double ns = memory::get_dram_timing(p.timing, name) * preset_tck;
            memory::set_dram_timing(p.timing, name, std::ceil(ns / tck - 1e-9));
        }
        p.timing.tCK = tck;
    }
    for (const auto& [key, value] : c.timing) {  // std::map: applied in a fixed order
        if (key != "tCK" && value != std::floor(value))
            throw fail("timing." + key, "must be a whole number of memory-clock cycles, got " + std::to_string(value));
        if (!memory::set_dram_timing(p.timing, key, value)) {
            std::string valid;
            for (const auto& n : memory::dram_timing_names()) valid += (valid.empty() ? "" : ", ") + n;
            throw fail("timing." + key, "unknown timing parameter (valid: " + valid + ")");
        }
    }
    try {
        memory::validate(p);
    } catch (const std::invalid_argument& e) {
        throw InputError(std::string("hbm: ") + e.what());
    }
    return p;
}

// The memory system of a chip: one requester per TPU core or per SM, the L2 when l2.size_bytes > 0.
inline memory::MemoryHierarchyParams memory_hierarchy_params_from_config(const ChipConfig& chip) {
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
        memory::L2Params l2;
        l2.size_bytes = chip.l2.size_bytes;
        l2.slices = chip.l2.slices;
        l2.ways = chip.l2.ways;
        l2.line_bytes = chip.l2.line_bytes;
        l2.sector_bytes = chip.l2.sector_bytes;
        l2.mshrs_per_slice = chip.l2.mshrs_per_slice;
        l2.bytes_per_cycle_per_slice = chip.l2.bytes_per_cycle_per_slice;
        l2.hit_latency_cycles = chip.l2.hit_latency_cycles;
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

}  // namespace accelsim
