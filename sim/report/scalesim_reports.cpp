#include "sim/report/scalesim_reports.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_stats.h"
#include "sim/input_error.h"

namespace accelsim {

namespace {

std::string four_decimals(double v) {
    char text[64];
    std::snprintf(text, sizeof text, "%.4f", v);
    return text;
}

}  // namespace

ScaleSimReports::ScaleSimReports(const ChipConfig& config) : mxu_(config.mxu) {
    if (config.kind != "systolic")
        throw InputError("--scalesim-reports: SCALE-Sim reports are for systolic chips; " + config.file + " is a '" +
                         config.kind + "' chip");
    pes_per_cycle_ = static_cast<double>(config.tpu.cores) * config.tpu.mxus_per_core * config.mxu.rows * config.mxu.cols;
}

void ScaleSimReports::add(const OpReport& r) {
    const std::size_t id = next_id_++;
    if (!is_gemm_like(r.op.kind) || r.roofline.compute_unit != "mxu" || r.model == "roofline") return;
    const double rate = mxu_.macs_per_pe_per_cycle.of(r.op.dtype);
    Layer l{};
    l.id = id;
    l.start = r.start_cycle;
    l.end = r.end_cycle;
    l.total = r.cycles;
    // Stall: cycles the busiest MXUs (or core) did not work, waiting for their operands' DMA.
    double busy = 0;
    for (const StatValue& s : r.stats)
        if (s.def == &tpu::stat::mxu_unit_busy_cycles || s.def == &tpu::stat::core_mxu_busy_cycles) busy = std::max(busy, s.value);
    l.stall = static_cast<std::uint64_t>(std::max(0.0, static_cast<double>(r.cycles) - busy));
    const double macs = static_cast<double>(r.op.macs());
    const double peak = pes_per_cycle_ * rate;
    l.overall_util = 100.0 * macs / (peak * static_cast<double>(l.total));
    const std::uint64_t compute_cycles = l.total - l.stall;
    l.compute_util = compute_cycles > 0 ? 100.0 * macs / (peak * static_cast<double>(compute_cycles)) : 0.0;
    // The whole layer on one array of the config's shape and dataflow, as SCALE-Sim maps it: the
    // PEs its folds use and the operand words its SRAMs deliver.
    const MxuStats one_array = mxu_gemm_timing(mxu_, tpu::mxu_timing_shape(r.op.as_gemm(), rate), r.op.dtype);
    l.mapping_efficiency = 100.0 * one_array.mapping_efficiency;
    l.sram_ifmap_reads = one_array.input_reads.elements;
    l.sram_filter_reads = one_array.weight_reads.elements;
    l.sram_ofmap_writes = one_array.output_writes.elements;
    // DRAM: each operand once (the compulsory traffic of docs/roofline.md), in words.
    const std::int64_t word = bytes_of(r.op.dtype);
    l.dram_ifmap_reads = r.op.input_bytes() / word;
    l.dram_filter_reads = r.op.weight_bytes() / word;
    l.dram_ofmap_writes = r.op.output_bytes() / word;
    layers_.push_back(l);
}

std::string ScaleSimReports::compute_report() const {
    std::string out = std::string(kScaleSimComputeHeader) + "\n";
    for (const Layer& l : layers_)
        out += std::to_string(l.id) + ", " + std::to_string(l.total) + ", " +
               std::to_string(l.stall) + ", " + four_decimals(l.overall_util) + ", " +
               four_decimals(l.mapping_efficiency) + ", " + four_decimals(l.compute_util) + ",\n";
    return out;
}

std::string ScaleSimReports::bandwidth_report() const {
    std::string out = std::string(kScaleSimBandwidthHeader) + "\n";
    for (const Layer& l : layers_) {
        // Words per cycle over the layer's cycles.
        const double cycles = static_cast<double>(std::max<std::uint64_t>(1, l.total));
        out += std::to_string(l.id);
        for (const std::int64_t words : {l.sram_ifmap_reads, l.sram_filter_reads, l.sram_ofmap_writes, l.dram_ifmap_reads,
                                         l.dram_filter_reads, l.dram_ofmap_writes})
            out += ", " + four_decimals(static_cast<double>(words) / cycles);
        out += ",\n";
    }
    return out;
}

std::string ScaleSimReports::detailed_access_report() const {
    std::string out = std::string(kScaleSimDetailHeader) + "\n";
    for (const Layer& l : layers_) {
        out += std::to_string(l.id);
        for (const std::int64_t count : {l.sram_ifmap_reads, l.sram_filter_reads, l.sram_ofmap_writes, l.dram_ifmap_reads,
                                         l.dram_filter_reads, l.dram_ofmap_writes})
            out += ", " + std::to_string(l.start) + ", " + std::to_string(l.end) + ", " + std::to_string(count);
        out += ",\n";
    }
    return out;
}

}  // namespace accelsim
