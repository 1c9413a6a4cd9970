#include "models/common/chip_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace accelsim {

Roofline chip_roofline(const Op& op, const ChipModel& chip) {
    return roofline_of(op, chip.compute_unit_for(op), chip.memory_peaks());
}

OpReport roofline_only(const Op& op, const ChipModel& chip, std::string reason) {
    OpReport r;
    r.op = op;
    r.model = "roofline";
    r.roofline_reason = std::move(reason);
    r.roofline = chip_roofline(op, chip);
    r.cycles = static_cast<std::uint64_t>(std::max(1.0, std::ceil(r.roofline.bound_cycles)));
    r.bytes = r.roofline.bytes;
    r.utilization = r.roofline.compute_cycles / static_cast<double>(r.cycles);
    return r;
}

std::string op_location(const Op& op) {
    return op.file.empty() ? std::string() : op.file + ":" + std::to_string(op.line) + ": ";
}

}  // namespace accelsim
