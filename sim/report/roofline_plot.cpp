#include "sim/report/roofline_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "models/common/dtype.h"
#include "sim/output/gnuplot.h"
#include "sim/report/report.h"

namespace accelsim {

namespace {

std::string six_significant(double v) {
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", v);
    return text;
}

// The bounds in the order the report names them: one point series each.
const char* const kBounds[] = {"compute", "hbm", "cmem", "l2", "latency", "host_link"};

}  // namespace

std::string ceiling_value_text(const RooflineCeiling& c) { return si_text(c.value, c.memory ? "B/s" : "FLOP/s", 4); }

std::vector<RooflineCeiling> roofline_ceilings(const ChipModel& chip, const ChipConfig& config) {
    const double hz = config.clock_hz();
    std::vector<RooflineCeiling> ceilings;
    // fp8: one ceiling when both formats run at one rate (every shipped fp8 chip), else one each.
    const bool one_fp8_rate = chip.matrix_macs_per_cycle(DType::fp8_e4m3) == chip.matrix_macs_per_cycle(DType::fp8_e5m2);
    for (const DType dtype : {DType::int8, DType::fp8_e4m3, DType::fp8_e5m2, DType::fp16, DType::bf16, DType::fp32}) {
        const double macs = chip.matrix_macs_per_cycle(dtype);
        if (macs <= 0 || (one_fp8_rate && dtype == DType::fp8_e5m2)) continue;
        Op gemm;
        gemm.kind = OpKind::matmul;
        gemm.dtype = dtype;
        const std::string name = one_fp8_rate && dtype == DType::fp8_e4m3 ? "fp8" : std::string(to_string(dtype));
        ceilings.push_back({chip.compute_unit_for(gemm).name + " " + name, 2.0 * macs * hz, false});
    }
    Op elementwise;
    elementwise.kind = OpKind::add;
    elementwise.dtype = config.default_dtype;
    const ComputeUnit vector = chip.compute_unit_for(elementwise);
    ceilings.push_back({vector.name + " (element-ops)", vector.ops_per_cycle * hz, false});
    for (const auto& [level, bytes_per_cycle] : chip.memory_peaks().bytes_per_cycle)
        if (bytes_per_cycle > 0) ceilings.push_back({level, bytes_per_cycle * hz, true});
    return ceilings;
}

RooflinePlot::RooflinePlot(const ChipModel& chip, const ChipConfig& config)
    : chip_name_(config.name), clock_hz_(config.clock_hz()), has_hbm_(chip.memory_peaks().of("hbm") > 0),
      ceilings_(roofline_ceilings(chip, config)) {}

void RooflinePlot::add(const OpReport& r) {
    const double flops = static_cast<double>(r.op.flops());
    double bytes = static_cast<double>(r.op.compulsory_bytes());
    if (has_hbm_) {
        const auto it = r.bytes.find("hbm");
        bytes = it == r.bytes.end() ? 0.0 : static_cast<double>(it->second);
    }
    if (flops <= 0 || bytes <= 0 || r.cycles == 0) {
        ++not_shown_;
        return;
    }
    points_.push_back({r.op.name, r.roofline.bound, flops / bytes, flops / (static_cast<double>(r.cycles) / clock_hz_)});
}

std::string RooflinePlot::script(const std::string& output) const {
    // Axis ranges: every point and every ridge (where a memory ceiling meets a compute one).
    double x_min = 1e300, x_max = 0, y_min = 1e300, y_max = 0;
    for (const RooflinePoint& p : points_) {
        x_min = std::min(x_min, p.intensity), x_max = std::max(x_max, p.intensity);
        y_min = std::min(y_min, p.flops_per_second), y_max = std::max(y_max, p.flops_per_second);
    }
    for (const RooflineCeiling& c : ceilings_)
        if (!c.memory) {
            y_max = std::max(y_max, c.value);
            for (const RooflineCeiling& m : ceilings_)
                if (m.memory) x_min = std::min(x_min, c.value / m.value), x_max = std::max(x_max, c.value / m.value);
        }
    if (x_max <= 0) x_min = 0.1, x_max = 1000;
    if (y_min > y_max) y_min = y_max / 1e3;
    x_min /= 4, x_max *= 4, y_min /= 4, y_max *= 3;

    std::ostringstream s;
    s << gnuplot_terminal("--plot-roofline", output) << "\n"
      << "set output " << gnuplot_quote(output, false) << "\n"
      << "set title "
      << gnuplot_quote("roofline: " + chip_name_ + " (" + std::to_string(points_.size()) + " ops" +
                       (not_shown_ ? ", " + std::to_string(not_shown_) +
                                         " without FLOPs or HBM bytes not shown"
                                   : "") +
                       ")")
      << "\n"
      << "set logscale xy\nset grid\nset key outside right top\n"
      << "set xlabel "
      << gnuplot_quote(has_hbm_ ? "arithmetic intensity (FLOP per HBM byte)"
                                : "arithmetic intensity (FLOP per compulsory byte)")
      << "\n"
      << "set ylabel \"achieved FLOP/s\"\n"
      << "set format y \"10^{%L}\"\nset format x \"10^{%L}\"\n"
      << "set xrange [" << six_significant(x_min) << ":" << six_significant(x_max) << "]\n"
      << "set yrange [" << six_significant(y_min) << ":" << six_significant(y_max) << "]\n"
      << "set samples 400\n";
    // Each ceiling as a labelled line: compute ceilings flat, memory ceilings bandwidth x intensity.
    std::string plot = "plot ";
    for (std::size_t i = 0; i < ceilings_.size(); ++i) {
        const RooflineCeiling& c = ceilings_[i];
        const std::string title = c.label + ": " + ceiling_value_text(c);
        plot += std::string(i ? ", \\\n     " : "") +
                (c.memory ? six_significant(c.value) + "*x" : six_significant(c.value)) +
                " with lines linewidth 2 dashtype " + (c.memory ? "2" : "1") + " title " +
                gnuplot_quote(title);
    }
    // One series per bound (its own colour and marker), ops in run order within it.
    const char* const colours[] = {"#d62728", "#1f77b4", "#9467bd", "#8c564b", "#7f7f7f", "#2ca02c"};
    for (std::size_t b = 0; b < std::size(kBounds); ++b) {
        std::ostringstream data;
        std::size_t count = 0;
        for (const RooflinePoint& p : points_)
            if (p.bound == kBounds[b]) {
                data << six_significant(p.intensity) << " " << six_significant(p.flops_per_second)
                     << " " << gnuplot_quote(p.name, false) << "\n";
                ++count;
            }
        if (count == 0) continue;
        const std::string block = std::string("$") + kBounds[b];
        s << block << " << EOD\n" << data.str() << "EOD\n";
        plot += ", \\\n     " + block + " using 1:2 with points pointtype " + std::to_string(5 + 2 * static_cast<int>(b) % 8) +
                " pointsize 1 linecolor rgb \"" + colours[b] + "\" title " +
                gnuplot_quote("ops bound by " + std::string(kBounds[b]) + " (" + std::to_string(count) + ")");
        // Names beside the points while they stay readable.
        if (points_.size() <= 40)
            plot += ", \\\n     " + block + " using 1:2:3 with labels offset 0.8,0.4 left font \",8\" noenhanced notitle";
    }
    s << plot << "\n";
    return s.str();
}

}  // namespace accelsim
