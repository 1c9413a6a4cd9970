#pragma once
// `--plot-roofline FILE.svg|.png`: every op of the run on the chip's roofline, drawn by gnuplot
// (sim/output/gnuplot.h). x: arithmetic intensity, FLOP per byte of HBM traffic (the bytes the run
// moved at HBM; chips without an HBM level, ideal memory, use the op's compulsory bytes); y:
// achieved FLOP/s (the op's FLOPs over its simulated time). Ceilings from the chip's peaks: one
// per compute unit and dtype (a matrix unit per dtype it runs, 2 FLOP per MAC; the vector / FP32
// unit, 1 FLOP per element-op as Op::flops counts), one per memory level with a bandwidth.
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/chip_model.h"
#include "sim/config/chip_config.h"

namespace accelsim {

struct RooflineCeiling {
    std::string label;  // "mxu bf16", "hbm"
    double value = 0;   // FLOP/s (compute) or bytes/s (memory)
    bool memory = false;
};

// The chip's ceilings, compute first (matrix unit by dtype int8, fp16, bf16, fp32, then the
// vector unit), then memory levels by name.
std::vector<RooflineCeiling> roofline_ceilings(const ChipModel& chip, const ChipConfig& config);

struct RooflinePoint {
    std::string name, bound;
    double intensity = 0, flops_per_second = 0;
};

class RooflinePlot {
public:
    RooflinePlot(const ChipModel& chip, const ChipConfig& config);
    // An op as it finished. Ops without FLOPs (kernels) or without HBM bytes (fused away) have
    // no place on the plot: they are counted in its title.
    void add(const OpReport& op);
    const std::vector<RooflinePoint>& points() const { return points_; }
    const std::vector<RooflineCeiling>& ceilings() const { return ceilings_; }
    // The gnuplot script (data inline) drawing into `output` (.svg or .png).
    std::string script(const std::string& output) const;

private:
    std::string chip_name_;
    double clock_hz_;
    bool has_hbm_;
    std::vector<RooflineCeiling> ceilings_;
    std::vector<RooflinePoint> points_;
    std::size_t not_shown_ = 0;
};

// "275.3 TFLOP/s", "1.23 TB/s": a ceiling's value as its label shows it.
std::string ceiling_value_text(const RooflineCeiling& ceiling);

}  // namespace accelsim
