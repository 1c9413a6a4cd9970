#pragma once
// `--scalesim-reports DIR`: COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv and DETAILED_ACCESS_REPORT.csv
// with SCALE-Sim's headers and meanings, so course scripts written for SCALE-Sim read accelsim's
// systolic runs unchanged (docs/outputs.md, "SCALE-Sim reports", says where each column comes from).
// One row per GEMM-like op the MXUs ran (SCALE-Sim reports conv and GEMM layers only); LayerID is
// the op's index in the trace, so a SCALE-Sim topology file keeps its layer numbers.
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/chip_model.h"
#include "models/mxu/mxu.h"
#include "sim/config/chip_config.h"

namespace accelsim {

inline constexpr const char* kScaleSimComputeHeader =
    "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,";
inline constexpr const char* kScaleSimBandwidthHeader =
    "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM BW, "
    "Avg OFMAP DRAM BW,";
inline constexpr const char* kScaleSimDetailHeader =
    "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, SRAM Filter Start Cycle, "
    "SRAM Filter Stop Cycle, SRAM Filter Reads, SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, "
    "DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, DRAM Filter Start Cycle, DRAM Filter Stop Cycle, "
    "DRAM Filter Reads, DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,";

class ScaleSimReports {
public:
    // Throws InputError naming the option when the config is not a systolic chip.
    explicit ScaleSimReports(const ChipConfig& config);
    void add(const OpReport& op);  // every op in trace order; rows only for the MXUs' GEMMs
    std::string compute_report() const;
    std::string bandwidth_report() const;
    std::string detailed_access_report() const;

private:
    struct Layer {
        std::size_t id;
        std::uint64_t start, end, total, stall;
        double overall_util, mapping_efficiency, compute_util;  // percent
        std::int64_t sram_ifmap_reads, sram_filter_reads, sram_ofmap_writes;
        std::int64_t dram_ifmap_reads, dram_filter_reads, dram_ofmap_writes;
    };
    MxuParams mxu_;
    double pes_per_cycle_;  // PEs of the whole chip (cores x MXUs x rows x cols)
    std::size_t next_id_ = 0;
    std::vector<Layer> layers_;
};

}  // namespace accelsim
