#include "sim/roofline/roofline.h"

#include <stdexcept>

#include "sim/engine/chip_registry.h"
#include "sim/input_error.h"

namespace accelsim {

Roofline compute_roofline(const Op& op, const ChipConfig& config) {
    const auto chip = make_chip(config, RunOptions{});
    try {
        return chip_roofline(op, *chip);
    } catch (const std::invalid_argument& e) {
        throw InputError(e.what());
    }
}

double matrix_macs_per_cycle(const ChipConfig& config, DType dtype) {
    return make_chip(config, RunOptions{})->matrix_macs_per_cycle(dtype);
}

}  // namespace accelsim
