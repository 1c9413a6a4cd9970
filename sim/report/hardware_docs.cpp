#include "sim/report/hardware_docs.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/common/op.h"
#include "sim/config/config_docs.h"
#include "sim/config/config_loader.h"
#include "sim/engine/chip_registry.h"
#include "sim/input_error.h"

namespace accelsim {

namespace {

namespace fs = std::filesystem;

constexpr DType kGemmDtypes[] = {DType::int8, DType::fp16, DType::bf16, DType::fp32, DType::fp8_e4m3, DType::fp8_e5m2};

// Four significant digits: "311.9", "2250", "3.998".
std::string four_digits(double v) {
    char text[64];
    std::snprintf(text, sizeof text, "%.4g", v);
    return text;
}

// Sizes as the configs give them, in binary units: "40 MiB", "164 KiB".
std::string bytes_text(std::int64_t bytes) {
    if (bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    if (bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " B";
}

// The file of `file`'s "extends" chain (itself first) whose "source" cites `key`; empty if none.
std::string citing_file(const fs::path& file, const std::string& key) {
    std::ifstream in(file);
    const nlohmann::json raw = nlohmann::json::parse(in, nullptr, false);
    if (raw.is_discarded()) return {};
    const auto source = raw.find("source");
    if (source != raw.end() && source->is_object() && source->contains(key))
        return file.filename().string();
    const auto base = raw.find("extends");
    if (base == raw.end() || !base->is_string()) return {};
    return citing_file(file.parent_path() / base->get<std::string>(), key);
}

// The citation of `key` in the merged config; one a derived config inherits names its file, since a
// base chip's citation may not be about the derived chip.
void cite(HardwareRow& row, const ChipConfig& config, const std::string& key) {
    const auto source = config.effective.find("source");
    if (source == config.effective.end() || !source->is_object()) return;
    const auto it = source->find(key);
    if (it == source->end() || !it->is_string()) return;
    row.sources[key] = it->get<std::string>();
    const std::string from = citing_file(config.file, key);
    if (!from.empty() && from != fs::path(config.file).filename().string())
        row.sources[key] += " *(inherited from " + from + ")*";
}

void describe_systolic(const ChipConfig& c, HardwareRow& row) {
    row.compute_units = std::to_string(c.tpu.cores) + (c.tpu.cores == 1 ? " core" : " cores") +
                        " x " + std::to_string(c.tpu.mxus_per_core) +
                        (c.tpu.mxus_per_core == 1 ? " MXU" : " MXUs") + " of " +
                        std::to_string(c.mxu.rows) + "x" + std::to_string(c.mxu.cols);
    row.on_chip = (c.tpu.streams_parameters() ? "SRAM " : "VMEM ") + bytes_text(c.tpu.vmem_bytes) +
                  (c.tpu.cores > 1 ? " per core" : "");
    if (c.tpu.cmem_bytes > 0) row.on_chip += ", CMEM " + bytes_text(c.tpu.cmem_bytes);
    if (c.tpu.streams_parameters())
        row.host_link_bytes_per_second = c.tpu.host_link_bytes_per_second;
    for (const char* key :
         {"tpu.cores", "tpu.mxus_per_core", "mxu.rows", "tpu.vmem_bytes", "tpu.cmem_bytes",
          "tpu.parameter_cache_bytes", "tpu.host_link_bytes_per_second"})
        cite(row, c, key);
    for (const auto& [dtype, peak] : row.gemm_peaks)
        cite(row, c,
             peak.matrix_fallback ? "tpu.vector.lanes"
                                  : "mxu.macs_per_pe_per_cycle." + std::string(to_string(dtype)));
}

void describe_simt(const ChipConfig& c, HardwareRow& row) {
    row.compute_units =
        std::to_string(c.gpu.sms) + (c.sm.wave_size == 64 ? " CUs (wavefront 64)" : " SMs");
    const std::string per = c.sm.wave_size == 64 ? " per CU" : " per SM";
    // NVIDIA carves shared memory out of a unified L1; CDNA's LDS and L1 are separate arrays.
    if (c.sm.wave_size == 64)
        row.on_chip = "LDS " + bytes_text(c.sm.shared_memory_bytes) + ", L1 " +
                      bytes_text(c.sm.l1_bytes) + per;
    else if (c.sm.l1_bytes > 0)
        row.on_chip = "L1+shared " + bytes_text(c.sm.l1_bytes) + per;
    else
        row.on_chip = "shared " + bytes_text(c.sm.shared_memory_bytes) + per;
    if (c.l2.size_bytes > 0) row.on_chip += ", L2 " + bytes_text(c.l2.size_bytes);
    for (const char* key :
         {"gpu.sms", "sm.wave_size", "sm.l1_bytes", "sm.shared_memory_bytes", "l2.size_bytes"})
        cite(row, c, key);
    for (const auto& [dtype, peak] : row.gemm_peaks) {
        if (!peak.matrix_fallback)
            cite(row, c, "sm.tensor_macs_per_cycle." + std::string(to_string(dtype)));
        else
            cite(row, c, peak.unit == "int" ? "sm.int_lanes" : "sm.fp32_lanes");
    }
}

std::string optional_text(const std::optional<double>& v, const std::string& absent) {
    return v ? four_digits(*v) : absent;
}

// "int8 623.8, fp16 311.9": the peaks in TFLOP/s (TOP/s for int8) of the dtypes `fallback` selects.
std::string peaks_text(const HardwareRow& row, bool fallback) {
    std::string text;
    for (const auto& [dtype, peak] : row.gemm_peaks) {
        if (peak.matrix_fallback != fallback) continue;
        if (!text.empty()) text += ", ";
        text += std::string(to_string(dtype)) + (fallback ? " on " + peak.unit : "") + " " +
                four_digits(peak.flops_per_second / 1e12);
    }
    return text.empty() ? "none" : text;
}

std::string memory_text(const HardwareRow& row) {
    std::string text = row.memory_gb ? four_digits(*row.memory_gb) + " GB" : "no DRAM";
    if (row.memory_bytes_per_second) text += ", " + four_digits(*row.memory_bytes_per_second / 1e9) + " GB/s";
    else if (row.memory_gb) text += " (ideal, not timed)";
    if (row.host_link_bytes_per_second)
        text += "; host link " + four_digits(*row.host_link_bytes_per_second / 1e9) + " GB/s";
    return text;
}

}  // namespace

bool is_teaching_config(const ChipConfig& config) {
    return config.description.rfind("Teaching config", 0) == 0;
}

HardwareRow hardware_row(const ChipConfig& config) {
    HardwareRow row;
    row.name = config.name;
    row.kind = config.kind;
    row.file = config.file;
    row.clock_hz = config.peak_clock_hz();  // the clock the datasheet peaks are quoted at
    row.memory_gb = config.memory_gb;
    row.tdp_w = config.tdp_w;
    row.cost_per_hour_usd = config.cost_per_hour_usd;
    const std::unique_ptr<ChipModel> chip = make_chip(config, RunOptions{});
    for (const DType dtype : kGemmDtypes) {
        // An int8-only chip refuses other dtypes (it does not fall back to a slower unit).
        if (config.kind == "systolic" && config.tpu.int8_only && dtype != DType::int8) continue;
        // fp8 has no slower unit either: the engine refuses it where no matrix unit runs it.
        if (is_fp8(dtype) && chip->matrix_macs_per_cycle(dtype) <= 0) continue;
        Op gemm;
        gemm.kind = OpKind::matmul;
        gemm.dtype = dtype;
        const ComputeUnit unit = chip->compute_unit_for(gemm);
        row.gemm_peaks[dtype] = {unit.name, 2.0 * unit.ops_per_cycle * row.clock_hz,
                                 unit.matrix_fallback};
    }
    const MemoryPeaks memory = chip->memory_peaks();
    if (memory.of("hbm") > 0) row.memory_bytes_per_second = memory.of("hbm") * config.clock_hz();  // per run cycle
    if (config.kind == "systolic")
        describe_systolic(config, row);
    else
        describe_simt(config, row);
    for (const char* key :
         {"clock_mhz", "sustained_clock_mhz", "memory_gb", "hbm.data_rate_gbps", "tdp_w", "cost_per_hour_usd"})
        cite(row, config, key);
    if (!row.memory_bytes_per_second) row.sources.erase("hbm.data_rate_gbps");  // not timed
    return row;
}

std::string hardware_markdown(const std::string& config_dir) {
    std::vector<fs::path> files;
    std::error_code error;
    for (fs::directory_iterator it(config_dir, error), end; !error && it != end;
         it.increment(error))
        if (it->path().extension() == ".json") files.push_back(it->path());
    if (error || files.empty()) throw InputError(config_dir + ": no chip configs (*.json) there");
    std::vector<HardwareRow> rows;
    for (const fs::path& file : files) {
        const ChipConfig config = load_config(file.string());
        if (!is_teaching_config(config)) rows.push_back(hardware_row(config));
    }
    std::sort(rows.begin(), rows.end(), [](const HardwareRow& a, const HardwareRow& b) {
        // systolic before simt, then by name
        return a.kind != b.kind ? a.kind > b.kind : a.name < b.name;
    });
    std::ostringstream out;
    out << "| chip | kind | clock (MHz) | compute units | peak dense TFLOP/s, matrix unit | GEMM "
           "fallback TFLOP/s | "
           "memory | on-chip | TDP (W) | USD per hour |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n";
    for (const HardwareRow& r : rows)
        out << "| [" << r.name << "](#" << r.name << ") | " << r.kind << " | "
            << four_digits(r.clock_hz / 1e6) << " | " << r.compute_units << " | "
            << peaks_text(r, false) << " | " << peaks_text(r, true) << " | " << memory_text(r)
            << " | " << r.on_chip << " | " << optional_text(r.tdp_w, "not published") << " | "
            << optional_text(r.cost_per_hour_usd, "not stated") << " |\n";
    out << "\n### Sources\n\nEach chip's citations of the figures above, as its config states them "
           "(`[D]`: derived "
           "by the arithmetic shown; `[A]`: an assumption).\n";
    for (const HardwareRow& r : rows) {
        out << "\n#### " << r.name << "\n\n`" << fs::path(r.file).filename().string() << "`\n\n";
        for (const auto& [key, text] : r.sources) out << "- `" << key << "`: " << text << "\n";
    }
    return out.str();
}

int run_hardware_docs_command(const std::vector<std::string>& args, std::ostream& out,
                              std::ostream& err) {
    std::string config_dir = "configs";
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--configs" && i + 1 < args.size())
            config_dir = args[++i];
        else
            rest.push_back(args[i]);
    }
    return run_generated_docs_command({"hardware-docs", "chip table", kHardwareBegin, kHardwareEnd,
                                       [&] { return hardware_markdown(config_dir); }},
                                      rest, out, err);
}

}  // namespace accelsim
