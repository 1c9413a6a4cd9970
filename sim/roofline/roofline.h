#pragma once
// The roofline of an op on the chip a config describes. The bounds themselves are chip-neutral
// (models/common/roofline.h); the chip says which unit runs an op and what its memories move per
// cycle (ChipModel::compute_unit_for, memory_peaks), so nothing here knows the chip kinds.
#include "models/common/op.h"
#include "models/common/roofline.h"
#include "sim/config/chip_config.h"

namespace accelsim {

// Builds the chip `config` names (chip_registry.h) and asks it. Throws InputError naming the op's
// file:line for an op the chip cannot run at all (a kernel on a systolic chip).
Roofline compute_roofline(const Op& op, const ChipConfig& config);

// Matrix-unit MACs per cycle over the whole chip `config` names, for a dtype (0: unsupported).
double matrix_macs_per_cycle(const ChipConfig& config, DType dtype);

}  // namespace accelsim
