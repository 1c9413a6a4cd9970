#pragma once
// The config-facing side of the occupancy calculator: the result as text and as JSON (the limits
// come from the config's sm section through simt::occupancy_limits_from). Header-only so that
// unit tests can check it without the config loader; the command is in occupancy_command.h.
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "models/simt/occupancy.h"
#include "models/simt/sm_spec.h"
#include "sim/config/chip_config.h"

namespace accelsim {

// JSON fields are a contract (issue 6): blocks_per_sm, active_warps, max_warps, occupancy, limiter.
// limiter is a string, or a list of strings when several resources tie; "none" when unlaunchable
// for a reason outside the four (e.g. too many threads per block), with "reason" saying why.
inline nlohmann::json occupancy_to_json(const simt::Occupancy& o) {
    nlohmann::json j;
    j["blocks_per_sm"] = o.blocks_per_sm;
    j["active_warps"] = o.active_warps;
    j["max_warps"] = o.max_warps;
    j["occupancy"] = o.occupancy;
    if (o.limiters.size() == 1) j["limiter"] = o.limiters.front();
    else if (o.limiters.empty()) j["limiter"] = "none";
    else j["limiter"] = o.limiters;
    j["warps_per_block"] = o.warps_per_block;
    j["registers_per_block"] = o.registers_per_block;
    j["shared_memory_per_block"] = o.shared_memory_per_block;
    j["blocks_limit"] = {{"warps", o.blocks_by_warps},
                         {"registers", o.blocks_by_registers},
                         {"shared_memory", o.blocks_by_shared_memory},
                         {"blocks", o.blocks_by_blocks}};
    if (!o.unlaunchable_reason.empty()) j["reason"] = o.unlaunchable_reason;
    return j;
}

inline void print_occupancy(const simt::Occupancy& o, std::ostream& out) {
    std::string limiter;
    for (const auto& l : o.limiters) limiter += (limiter.empty() ? "" : ", ") + l;
    out << "blocks per SM:  " << o.blocks_per_sm << "\n"
        << "active warps:   " << o.active_warps << " of " << o.max_warps << "\n"
        << "occupancy:      " << o.occupancy * 100.0 << " %\n"
        << "limiter:        " << (limiter.empty() ? "none" : limiter) << "\n";
    if (!o.unlaunchable_reason.empty()) out << "cannot launch:  " << o.unlaunchable_reason << "\n";
}

}  // namespace accelsim
