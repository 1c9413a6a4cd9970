#pragma once
// docs/hardware.md's chip table is generated from the shipped configs: `accelsim hardware-docs
// [--configs DIR] [--update FILE | --check FILE]` prints it, rewrites the part of FILE between the
// markers below, or exits 1 when FILE's table differs. Peaks come from the chip models themselves
// (ChipModel::compute_unit_for, memory_peaks), the numbers every roofline bound uses.
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "models/common/dtype.h"
#include "sim/config/chip_config.h"

namespace accelsim {

inline constexpr const char* kHardwareBegin = "<!-- hardware:begin -->\n";
inline constexpr const char* kHardwareEnd = "<!-- hardware:end -->";

// A GEMM's peak on one chip for one dtype, as the roofline charges it.
struct GemmPeak {
    std::string unit;              // the unit that runs it ("mxu", "tensor", "vector", "fp32", ...)
    double flops_per_second = 0;   // 2 x MACs per cycle x clock
    bool matrix_fallback = false;  // the matrix unit does not run this dtype
};

// One chip's row of the table, in SI units.
struct HardwareRow {
    std::string name, kind, file;
    double clock_hz = 0;
    std::string compute_units;             // "2 cores x 4 MXUs of 128x128", "108 SMs"
    std::map<DType, GemmPeak> gemm_peaks;  // dtypes the chip runs (an int8-only chip: int8 alone)
    std::optional<double> memory_gb;       // as the vendor states it
    std::optional<double> memory_bytes_per_second;  // the roofline's hbm peak; none: ideal memory
    std::optional<double> host_link_bytes_per_second;  // parameters streamed from the host
    std::string
        on_chip;  // "VMEM 16 MiB per core, CMEM 128 MiB", "L1+shared 192 KiB per SM, L2 40 MiB"
    std::optional<double> tdp_w, cost_per_hour_usd;
    std::map<std::string, std::string> sources;  // config key -> citation, for the figures above
};

// A config marked as a teaching config (its description starts "Teaching config"): not a chip.
bool is_teaching_config(const ChipConfig& config);

// The row of `config`, through the chip model its kind builds.
HardwareRow hardware_row(const ChipConfig& config);

// The generated part of docs/hardware.md for every non-teaching config in `config_dir`, by kind
// then name. Throws InputError naming the directory when it has no configs.
std::string hardware_markdown(const std::string& config_dir);

// args: the words after "hardware-docs". Returns 0, 1 (--check found a difference) or 2 (bad
// input).
int run_hardware_docs_command(const std::vector<std::string>& args, std::ostream& out,
                              std::ostream& err);

}  // namespace accelsim
