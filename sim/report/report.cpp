#include "sim/report/report.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>

#include "models/gpu/gpu_params.h"
#include "models/gpu/gpu_stats.h"
#include "sim/report/number_text.h"

namespace accelsim {

using nlohmann::json;

// The run ends when the host sees the last op finish.
std::uint64_t RunReport::total_cycles() const {
    return ops.empty() ? 0 : ops.back().end_cycle + ops.back().sync_cycles;
}

std::uint64_t RunReport::host_cycles() const {
    std::uint64_t s = 0;
    for (const auto& o : ops) s += o.host_cycles + o.sync_cycles;
    return s;
}

double RunReport::seconds() const {
    return static_cast<double>(total_cycles()) / config->clock_hz();
}

std::int64_t RunReport::total_macs() const {
    std::int64_t s = 0;
    for (const auto& o : ops) s += o.op.macs();
    return s;
}

std::int64_t RunReport::total_flops() const {
    std::int64_t s = 0;
    for (const auto& o : ops) s += o.op.flops();
    return s;
}

std::map<std::string, std::int64_t> RunReport::total_bytes() const {
    std::map<std::string, std::int64_t> t;
    for (const auto& o : ops)
        for (const auto& [level, b] : o.bytes) t[level] += b;
    return t;
}

double MatrixPeaks::for_op(const Op& op) const {
    if (!op_info(op.kind).has_dtype) return default_dtype;
    auto peak = [&](DType t) {
        const auto it = by_dtype.find(t);
        return it != by_dtype.end() && it->second > 0 ? it->second : default_dtype;
    };
    // Mixed fp8 operands run at the slower format's rate (equal on every shipped chip).
    return op.b_dtype ? std::min(peak(op.dtype), peak(*op.b_dtype)) : peak(op.dtype);
}

namespace {
// MACs grouped by the peak they count against, each group's share added: with one peak this is
// MACs / (peak x cycles) to the bit.
double utilization_of(const std::map<double, std::int64_t>& macs_by_peak, std::uint64_t cycles) {
    double u = 0;
    for (const auto& [peak, macs] : macs_by_peak) u += static_cast<double>(macs) / (peak * static_cast<double>(cycles));
    return u;
}
}  // namespace

double RunReport::mac_utilization() const {
    const auto cycles = total_cycles();
    if (matrix_peaks.default_dtype <= 0 || cycles == 0) return 0;
    std::map<double, std::int64_t> macs_by_peak;
    for (const auto& o : ops) macs_by_peak[matrix_peaks.for_op(o.op)] += o.op.macs();
    return utilization_of(macs_by_peak, cycles);
}

std::size_t RunReport::ops_without_cycle_model() const {
    return static_cast<std::size_t>(
        std::count_if(ops.begin(), ops.end(), [](const OpReport& o) { return o.model == "roofline"; }));
}

namespace {

// A kernel op's program decides its element types: it has no dtype to show. Mixed fp8 operands
// show as A's and B's formats, e.g. fp8_e5m2*fp8_e4m3.
std::string dtype_text(const Op& op, const char* none) {
    if (!op_info(op.kind).has_dtype) return none;
    return std::string(to_string(op.dtype)) + (op.b_dtype ? "*" + std::string(to_string(*op.b_dtype)) : "");
}

// GEMM-like ops whose dtype the chip's matrix unit does not run: they fell to a slower unit.
struct Fallback {
    std::size_t ops = 0;
    std::uint64_t cycles = 0;
    std::set<std::string> dtypes, units;
};
std::string joined(const std::set<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
    return s;
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// What the end-to-end quantization error is, in the report's words (docs/outputs.md).
constexpr const char* kQuantizationScope =
    "aggregate over the run's int8/fp8 ops, each with its own seeded inputs (values do not flow from op to op): "
    "the largest error of any output, and the RMS error of all outputs over the RMS of their references";

// An op's quantization error (per_op) or a run's pooled one.
json quantization_json(const QuantizationError& q, bool per_op) {
    json j = {{"reference", "fp32"}, {"values", q.values}, {"max_abs", q.max_abs}, {"relative_rms", q.relative_rms()}};
    if (per_op) {
        j["scheme"] = q.scheme.empty() ? quantization_scheme(q.dtype, q.encoding, q.b_dtype) : q.scheme;
    } else {
        j["scope"] = kQuantizationScope;
        j["ops"] = q.ops;
        j["worst_op_relative_rms"] = q.worst_op_relative_rms;
    }
    return j;
}

// The "numerics" object of an op (per_op) or of the run.
json numerics_json(const NumericsSummary& n, bool per_op) {
    json j = {{"checked", n.checked}, {"max_abs_err", n.max_abs_err}, {"max_rel_err", n.max_rel_err}, {"passed", n.passed}};
    if (n.quantization) j["quantization_error"] = quantization_json(*n.quantization, per_op);
    return j;
}

json op_json(const OpReport& r) {
    json o;
    o["name"] = r.op.name;
    o["kind"] = std::string(to_string(r.op.kind));
    const OpKindInfo& info = op_info(r.op.kind);
    o["dtype"] = info.has_dtype ? json(std::string(to_string(r.op.dtype))) : json(nullptr);
    if (r.op.b_dtype) o["b_dtype"] = std::string(to_string(*r.op.b_dtype));  // mixed fp8 GEMMs only
    o["shape"] = shape_json(r.op);
    o["model"] = r.model;
    if (!r.roofline_reason.empty()) o["roofline_reason"] = r.roofline_reason;
    o["cycles"] = r.cycles;
    o["start_cycle"] = r.start_cycle;
    o["end_cycle"] = r.end_cycle;
    o["host_cycles"] = r.host_cycles;
    if (r.sync_cycles > 0) o["sync_cycles"] = r.sync_cycles;
    o["macs"] = info.has_flops ? json(r.op.macs()) : json(nullptr);
    o["flops"] = info.has_flops ? json(r.op.flops()) : json(nullptr);
    o["bytes"] = r.bytes;
    o["utilization"] = optional_json(r.utilization);
    if (r.occupancy_theoretical || r.occupancy_achieved)
        o["occupancy"] = {{"theoretical", optional_json(r.occupancy_theoretical)},
                          {"achieved", optional_json(r.occupancy_achieved)}};
    if (r.simd_efficiency) o["simd_efficiency"] = *r.simd_efficiency;
    o["bound"] = r.roofline.bound;
    json roof;
    roof["compute_unit"] = r.roofline.compute_unit;
    for (const auto& [key, cycles] : r.roofline.cycles) roof[key + "_cycles"] = cycles;
    roof["bound_cycles"] = r.roofline.bound_cycles;
    o["roofline"] = roof;
    if (!r.stats.empty()) {
        json stats = json::object();
        for (const auto& s : r.stats) {
            json& st = stats[s.name];
            st = {{"value", s.value}, {"unit", std::string(s.unit())}, {"description", std::string(s.description())}};
            if (!s.def->formula().empty()) st["formula"] = std::string(s.def->formula());
        }
        o["stats"] = stats;
    }
    if (r.numerics) o["numerics"] = numerics_json(*r.numerics, true);
    // gpu.sampling waves: the op's cycles are an estimate from these simulated blocks.
    if (r.sampling)
        o["sampling"] = {{"simulated_blocks", r.sampling->simulated_blocks},
                         {"total_blocks", r.sampling->total_blocks},
                         {"wave_blocks", r.sampling->wave_blocks},
                         {"skipped_waves", r.sampling->skipped_waves},
                         {"skipped_trips", r.sampling->skipped_trips},
                         {"trip_skips", r.sampling->trip_skips},
                         {"error_estimate", r.sampling->error_estimate}};
    if (!r.op.file.empty()) o["source"] = r.op.file + ":" + std::to_string(r.op.line);
    // A fused graph (compiler.gpu_fusion): the op whose kernel ran this one, or the ops this one's ran.
    if (!r.fused_into.empty()) o["fused_into"] = r.fused_into;
    if (!r.fused_ops.empty()) o["fused_ops"] = r.fused_ops;
    return o;
}

using number_text::fixed;
using number_text::with_commas;

std::string percent(std::optional<double> v) {
    return v ? number_text::percent(*v, 1) : "-";
}

// Says when a run's clock is the chip's sustained clock rather than the one its peaks are quoted at.
std::string sustained_note(const ChipConfig& chip) {
    if (chip.sustained_clock_mhz <= 0) return "";
    return " sustained (peaks at " + fixed(chip.clock_mhz, 0) + " MHz)";
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += c;
    }
    return q + "\"";
}

std::string csv_number(std::optional<double> v) {
    if (!v) return "";
    std::ostringstream s;
    s.precision(17);
    s << *v;
    return s.str();
}

}  // namespace

namespace {
// The resolved compiler.gpu_fusion of a config (the report states it when ops were fused).
std::string gpu_fusion_name(const ChipConfig& config) {
    return std::string(to_string(gpu::resolve_gpu_fusion(config.gpu.fusion, config.host.launch == HostLaunch::engine)));
}
}  // namespace

json to_json(const RunReport& report) {
    json j;
    j["schema"] = kReportSchema;
    j["config"] = report.config->effective;
    j["config_file"] = report.config->file;
    j["trace"] = report.trace;
    if (!report.import_summary.is_null()) j["import"] = report.import_summary;
    json ops = json::array();
    for (const auto& r : report.ops) ops.push_back(op_json(r));
    j["ops"] = ops;
    json totals;
    totals["cycles"] = report.total_cycles();
    totals["device_cycles"] = report.total_cycles() - report.host_cycles();
    totals["host_cycles"] = report.host_cycles();
    totals["host_launch"] = std::string(to_string(HostCosts::of(report.config->host, report.config->kind == "simt").launch));
    totals["seconds"] = report.seconds();
    totals["macs"] = report.total_macs();
    totals["flops"] = report.total_flops();
    totals["utilization"] = report.mac_utilization();
    totals["bytes"] = report.total_bytes();
    totals["ops"] = report.ops.size();
    totals["ops_without_cycle_model"] = report.ops_without_cycle_model();
    std::map<std::string, std::uint64_t> by_bound;
    std::size_t fused = 0, sampled = 0;
    double sampling_error_cycles = 0;
    for (const auto& r : report.ops) {
        if (r.fused_into.empty()) by_bound[r.roofline.bound] += r.cycles;
        else ++fused;
        if (r.sampling) {
            ++sampled;
            sampling_error_cycles += r.sampling->error_estimate * static_cast<double>(r.cycles);
        }
        if (r.host_cycles + r.sync_cycles > 0) by_bound["host"] += r.host_cycles + r.sync_cycles;
    }
    totals["cycles_by_bound"] = by_bound;
    if (fused > 0) {
        totals["gpu_fusion"] = gpu_fusion_name(*report.config);
        totals["fused_ops"] = fused;
        totals["kernels"] = report.ops.size() - fused;
    }
    if (sampled > 0) {
        totals["gpu_sampling"] = std::string(to_string(report.config->gpu.sampling));
        totals["sampled_ops"] = sampled;
        totals["sampling_error_estimate"] = sampling_error_cycles / static_cast<double>(std::max<std::uint64_t>(1, report.total_cycles()));
    }
    j["totals"] = totals;
    if (report.numerics) j["numerics"] = numerics_json(*report.numerics, false);
    return j;
}

namespace {

// ---- streaming ----------------------------------------------------------------------------
// ReportWriter writes each op as it finishes and keeps only what the totals, the columns and the
// top bottlenecks need, so a run's memory does not grow with its op count. The table and the CSV
// depend on every op (column sets, widths) before their first row: their rows go to an anonymous
// spill file, written once and read back at the end. JSON is written exactly as nlohmann::json
// dumps the whole document (to_json(report).dump(2)): members in key order, each op indented
// into the "ops" array; the run's numerics summary comes before "ops" in that order, so a run
// that checks numerics spills its ops' JSON too and copies it in at the end.

// `text` (a dump(2)) with every line after the first indented by `spaces` more.
std::string indented(const std::string& text, int spaces) {
    std::string out;
    out.reserve(text.size() + 64);
    const std::string pad(static_cast<std::size_t>(spaces), ' ');
    for (const char c : text) {
        out += c;
        if (c == '\n') out += pad;
    }
    return out;
}

// An anonymous temporary file (removed when closed or when the process ends).
class SpillFile {
  public:
    SpillFile() : file_(std::tmpfile()) {
        if (!file_) throw std::runtime_error(std::string("cannot create a temporary file for the report: ") + std::strerror(errno));
    }
    ~SpillFile() { std::fclose(file_); }
    SpillFile(const SpillFile&) = delete;
    SpillFile& operator=(const SpillFile&) = delete;

    void write(const void* data, std::size_t n) {
        if (n > 0 && std::fwrite(data, 1, n, file_) != n)
            throw std::runtime_error(std::string("writing the report's temporary file failed: ") + std::strerror(errno));
    }
    void put(const std::string& s) {
        put(static_cast<std::uint64_t>(s.size()));
        write(s.data(), s.size());
    }
    void put(std::uint64_t v) { write(&v, sizeof v); }
    void put(std::int64_t v) { write(&v, sizeof v); }
    void put(double v) { write(&v, sizeof v); }
    void put(bool v) { put(static_cast<std::uint64_t>(v ? 1 : 0)); }
    void put(const std::optional<double>& v) {
        put(v.has_value());
        put(v.value_or(0.0));
    }

    void rewind() {
        if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0)
            throw std::runtime_error(std::string("reading back the report's temporary file failed: ") + std::strerror(errno));
    }
    void read(void* data, std::size_t n) {
        if (n > 0 && std::fread(data, 1, n, file_) != n) throw std::runtime_error("the report's temporary file is short");
    }
    std::uint64_t get_u64() { std::uint64_t v; read(&v, sizeof v); return v; }
    std::int64_t get_i64() { std::int64_t v; read(&v, sizeof v); return v; }
    double get_f64() { double v; read(&v, sizeof v); return v; }
    bool get_bool() { return get_u64() != 0; }
    std::string get_string() {
        std::string s(get_u64(), '\0');
        read(s.data(), s.size());
        return s;
    }
    std::optional<double> get_optional() {
        const bool has = get_bool();
        const double v = get_f64();
        return has ? std::optional<double>(v) : std::nullopt;
    }
    // Copies everything written to `out`.
    void copy_to(std::ostream& out) {
        rewind();
        char buf[1 << 16];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) out.write(buf, static_cast<std::streamsize>(n));
    }

  private:
    std::FILE* file_;
};

// What the table and the CSV print of one op.
struct OpRow {
    std::string name, kind, shape, dtype_table, dtype_csv, model, bound;
    std::string fused_into, fused_ops;  // fused_ops: the names joined by "; "
    std::string roofline_reason;        // model "roofline": why no cycle model ran
    std::uint64_t cycles = 0, start_cycle = 0, end_cycle = 0, host_cycles = 0;
    bool has_flops = false;
    std::int64_t macs = 0, flops = 0;
    std::vector<std::pair<std::string, std::int64_t>> bytes;
    std::optional<double> utilization, occupancy_theoretical, occupancy_achieved, simd_efficiency;
    std::vector<std::pair<std::string, double>> roofline_cycles;
    // The "simt ops" section: IPC and the stall shares (idle, scoreboard, pipeline, barrier).
    std::optional<double> ipc;
    std::array<std::optional<double>, 4> stalls;
    // --validate on int8/fp8 ops: the quantization error against fp32 (absent otherwise).
    std::optional<double> quantization_max_abs, quantization_relative_rms;
};

OpRow row_of(const OpReport& r) {
    OpRow row;
    row.name = r.op.name;
    row.kind = std::string(to_string(r.op.kind));
    row.shape = shape_text(r.op);
    row.dtype_table = dtype_text(r.op, "-");
    row.dtype_csv = dtype_text(r.op, "");
    row.model = r.model;
    row.bound = r.roofline.bound;
    row.fused_into = r.fused_into;
    for (const std::string& name : r.fused_ops) row.fused_ops += (row.fused_ops.empty() ? "" : "; ") + name;
    row.roofline_reason = r.roofline_reason;
    row.cycles = r.cycles;
    row.start_cycle = r.start_cycle;
    row.end_cycle = r.end_cycle;
    row.host_cycles = r.host_cycles + r.sync_cycles;
    row.has_flops = op_info(r.op.kind).has_flops;
    if (row.has_flops) row.macs = r.op.macs(), row.flops = r.op.flops();
    row.bytes.assign(r.bytes.begin(), r.bytes.end());
    row.utilization = r.utilization;
    row.occupancy_theoretical = r.occupancy_theoretical;
    row.occupancy_achieved = r.occupancy_achieved;
    row.simd_efficiency = r.simd_efficiency;
    row.roofline_cycles.assign(r.roofline.cycles.begin(), r.roofline.cycles.end());
    if (r.occupancy_achieved || r.simd_efficiency) {
        namespace gs = gpu::stat;
        const auto stat_of = [&](const StatDef& def) { return find_stat(r.stats, def); };
        double slots = 0;
        for (const StatDef* d : {&gs::slots_issued, &gs::stall_idle, &gs::stall_scoreboard, &gs::stall_pipeline,
                                 &gs::stall_barrier})
            slots += stat_of(*d).value_or(0);
        const StatDef* stalls[] = {&gs::stall_idle, &gs::stall_scoreboard, &gs::stall_pipeline, &gs::stall_barrier};
        for (std::size_t i = 0; i < 4; ++i) {
            const auto v = stat_of(*stalls[i]);
            if (v && slots > 0) row.stalls[i] = *v / slots;
        }
        row.ipc = stat_of(gs::ipc);
    }
    if (r.numerics && r.numerics->quantization) {
        row.quantization_max_abs = r.numerics->quantization->max_abs;
        row.quantization_relative_rms = r.numerics->quantization->relative_rms();
    }
    return row;
}

void put_row(SpillFile& f, const OpRow& row) {
    for (const std::string* s : {&row.name, &row.kind, &row.shape, &row.dtype_table, &row.dtype_csv, &row.model, &row.bound,
                                 &row.fused_into, &row.fused_ops, &row.roofline_reason})
        f.put(*s);
    f.put(row.cycles);
    f.put(row.start_cycle);
    f.put(row.end_cycle);
    f.put(row.host_cycles);
    f.put(row.has_flops);
    f.put(row.macs);
    f.put(row.flops);
    f.put(static_cast<std::uint64_t>(row.bytes.size()));
    for (const auto& [level, b] : row.bytes) f.put(level), f.put(b);
    for (const auto* v : {&row.utilization, &row.occupancy_theoretical, &row.occupancy_achieved, &row.simd_efficiency})
        f.put(*v);
    f.put(static_cast<std::uint64_t>(row.roofline_cycles.size()));
    for (const auto& [key, c] : row.roofline_cycles) f.put(key), f.put(c);
    f.put(row.ipc);
    for (const auto& v : row.stalls) f.put(v);
    f.put(row.quantization_max_abs);
    f.put(row.quantization_relative_rms);
}

OpRow get_row(SpillFile& f) {
    OpRow row;
    for (std::string* s : {&row.name, &row.kind, &row.shape, &row.dtype_table, &row.dtype_csv, &row.model, &row.bound,
                           &row.fused_into, &row.fused_ops, &row.roofline_reason})
        *s = f.get_string();
    row.cycles = f.get_u64();
    row.start_cycle = f.get_u64();
    row.end_cycle = f.get_u64();
    row.host_cycles = f.get_u64();
    row.has_flops = f.get_bool();
    row.macs = f.get_i64();
    row.flops = f.get_i64();
    row.bytes.resize(f.get_u64());
    for (auto& [level, b] : row.bytes) level = f.get_string(), b = f.get_i64();
    for (auto* v : {&row.utilization, &row.occupancy_theoretical, &row.occupancy_achieved, &row.simd_efficiency})
        *v = f.get_optional();
    row.roofline_cycles.resize(f.get_u64());
    for (auto& [key, c] : row.roofline_cycles) key = f.get_string(), c = f.get_f64();
    row.ipc = f.get_optional();
    for (auto& v : row.stalls) v = f.get_optional();
    row.quantization_max_abs = f.get_optional();
    row.quantization_relative_rms = f.get_optional();
    return row;
}

template <class V>
const V* find_in(const std::vector<std::pair<std::string, V>>& items, const std::string& key) {
    for (const auto& [k, v] : items)
        if (k == key) return &v;
    return nullptr;
}

}  // namespace

struct ReportWriter::Impl {
    Impl(const ChipConfig& c, std::string t, MatrixPeaks peaks, bool numerics, std::ostream* table_out, std::ostream* json,
         std::ostream* csv_out)
        : config(c), trace(std::move(t)), matrix_peaks(std::move(peaks)), with_numerics(numerics), table(table_out),
          json_out(json), csv(csv_out) {}

    const ChipConfig& config;
    std::string trace;
    MatrixPeaks matrix_peaks;
    bool with_numerics;
    std::ostream *table, *json_out, *csv;
    // What an importer said about the source model (null: the trace was not imported).
    json import_summary;
    std::string import_text;
    bool json_head_written = false;

    // JSON: ops go straight to json_out, or to json_spill when the numerics summary must come first.
    std::unique_ptr<SpillFile> json_spill;
    std::unique_ptr<SpillFile> rows;  // table and CSV rows

    // Totals, in op order.
    std::size_t ops = 0, unmodelled = 0, uncounted = 0;
    // Roofline rows by the reason no cycle model ran: how many, and the first few ops' names.
    struct ReasonOps {
        std::size_t count = 0;
        std::vector<std::string> first_names;
    };
    std::map<std::string, ReasonOps> roofline_reasons;
    std::map<double, std::int64_t> macs_by_peak;  // the ops' MACs by the matrix-unit peak they count against
    std::set<DType> mac_dtypes;           // the dtypes of the ops with MACs
    std::size_t fused = 0;  // ops that ran inside another op's kernel (compiler.gpu_fusion)
    std::size_t sampled = 0;  // ops whose cycles were extrapolated (gpu.sampling waves)
    std::size_t quantized = 0;  // ops with a quantization error (--validate on int8/fp8)
    double sampling_error_cycles = 0;  // their error bounds, in cycles
    std::uint64_t total_cycles = 0, host_cycles = 0;  // end to end; host time not hidden by the device
    std::int64_t macs = 0, flops = 0;
    std::map<std::string, std::int64_t> bytes;
    std::map<std::string, std::uint64_t> by_bound;
    Fallback fallback;
    std::set<std::string> levels, bounds;
    std::size_t name_w = 2, shape_w = 5, dtype_w = 5, model_w = 5;
    // Top bottlenecks: the five longest ops, longest first, earlier first among equals.
    struct Top {
        std::uint64_t cycles;
        std::string name, kind, bound;
    };
    std::vector<Top> top;

    void write_json_op(const OpReport& r) {
        std::string text = (ops == 1 ? "[\n    " : ",\n    ") + indented(op_json(r).dump(2), 4);
        if (json_spill) json_spill->write(text.data(), text.size());
        else json_out->write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    void json_member(std::ostream& out, bool& first, const std::string& key, const json& value) {
        out << (first ? "{\n  " : ",\n  ") << json(key).dump() << ": " << indented(value.dump(2), 2);
        first = false;
    }
    // Members in key order, as to_json's object prints them. Written at the first op (or at the
    // end), so set_import can come after construction.
    void json_head(std::ostream& out, const std::optional<NumericsSummary>& numerics) {
        json_head_written = true;
        bool first = true;
        json_member(out, first, "config", config.effective);
        json_member(out, first, "config_file", config.file);
        if (!import_summary.is_null()) json_member(out, first, "import", import_summary);
        if (numerics) json_member(out, first, "numerics", numerics_json(*numerics, false));
        out << ",\n  \"ops\": ";
    }
    std::string fusion_name() const { return gpu_fusion_name(config); }
    std::string launch_name() const {
        return std::string(to_string(HostCosts::of(config.host, config.kind == "simt").launch));
    }
    double seconds() const { return static_cast<double>(total_cycles) / config.clock_hz(); }
    double mac_utilization() const {
        if (matrix_peaks.default_dtype <= 0 || total_cycles == 0) return 0;
        return utilization_of(macs_by_peak, total_cycles);
    }
    void json_tail(std::ostream& out) {
        out << (ops == 0 ? "[]" : "\n  ]");
        bool first = false;
        json_member(out, first, "schema", kReportSchema);
        json totals;
        totals["cycles"] = total_cycles;
        totals["device_cycles"] = total_cycles - host_cycles;
        totals["host_cycles"] = host_cycles;
        totals["host_launch"] = launch_name();
        totals["seconds"] = seconds();
        totals["macs"] = macs;
        totals["flops"] = flops;
        totals["utilization"] = mac_utilization();
        totals["bytes"] = bytes;
        totals["ops"] = ops;
        totals["ops_without_cycle_model"] = unmodelled;
        totals["cycles_by_bound"] = by_bound;
        if (fused > 0) {
            totals["gpu_fusion"] = fusion_name();
            totals["fused_ops"] = fused;
            totals["kernels"] = ops - fused;
        }
        if (sampled > 0) {
            totals["gpu_sampling"] = std::string(to_string(config.gpu.sampling));
            totals["sampled_ops"] = sampled;
            totals["sampling_error_estimate"] = sampling_error_cycles / static_cast<double>(std::max<std::uint64_t>(1, total_cycles));
        }
        json_member(out, first, "totals", totals);
        json_member(out, first, "trace", trace);
        out << "\n}\n";
    }

    void write_csv();
    void write_table(const std::optional<NumericsSummary>& numerics);
    void write_quantization(std::ostream& out, const QuantizationError& pooled);
};

ReportWriter::ReportWriter(const ChipConfig& config, std::string trace, MatrixPeaks matrix_peaks,
                           bool with_numerics, std::ostream* table, std::ostream* json_out, std::ostream* csv)
    : impl_(std::make_unique<Impl>(config, std::move(trace), std::move(matrix_peaks), with_numerics, table, json_out, csv)) {
    if (json_out) {
        if (with_numerics) impl_->json_spill = std::make_unique<SpillFile>();
    }
    if (table || csv) impl_->rows = std::make_unique<SpillFile>();
}

ReportWriter::~ReportWriter() = default;

void ReportWriter::set_import(const nlohmann::json& summary, const std::string& table_lines) {
    if (impl_->ops > 0) throw std::logic_error("ReportWriter: set_import after the first op");
    impl_->import_summary = summary;
    impl_->import_text = table_lines;
}

void ReportWriter::add(const OpReport& r) {
    Impl& w = *impl_;
    if (w.json_out && !w.json_spill && !w.json_head_written) w.json_head(*w.json_out, std::nullopt);
    ++w.ops;
    w.total_cycles = r.end_cycle + r.sync_cycles;
    w.host_cycles += r.host_cycles + r.sync_cycles;
    if (r.host_cycles + r.sync_cycles > 0) w.by_bound["host"] += r.host_cycles + r.sync_cycles;
    w.macs += r.op.macs();
    if (r.op.macs() > 0 && w.matrix_peaks.default_dtype > 0) {
        w.macs_by_peak[w.matrix_peaks.for_op(r.op)] += r.op.macs();
        if (op_info(r.op.kind).has_dtype) w.mac_dtypes.insert(r.op.dtype);
    }
    w.flops += r.op.flops();
    for (const auto& [level, b] : r.bytes) {
        w.bytes[level] += b;
        w.levels.insert(level);
    }
    for (const auto& [key, c] : r.roofline.cycles) w.bounds.insert(key);
    if (r.fused_into.empty()) w.by_bound[r.roofline.bound] += r.cycles;
    if (r.model == "roofline") {
        ++w.unmodelled;
        if (!r.roofline_reason.empty()) {
            auto& reason = w.roofline_reasons[r.roofline_reason];
            if (++reason.count <= 3) reason.first_names.push_back(r.op.name);
        }
    }
    if (!r.fused_into.empty()) ++w.fused;
    if (r.sampling) {
        ++w.sampled;
        w.sampling_error_cycles += r.sampling->error_estimate * static_cast<double>(r.cycles);
    }
    if (r.numerics && r.numerics->quantization) ++w.quantized;
    if (!op_info(r.op.kind).has_flops) ++w.uncounted;
    if (r.roofline.matrix_fallback) {
        ++w.fallback.ops;
        w.fallback.cycles += r.cycles;
        w.fallback.dtypes.insert(std::string(to_string(r.op.dtype)));
        w.fallback.units.insert(r.roofline.compute_unit);
    }
    if (w.top.size() < 5 || r.cycles > w.top.back().cycles) {
        Impl::Top t{r.cycles, r.op.name, std::string(to_string(r.op.kind)), r.roofline.bound};
        auto at = std::find_if(w.top.begin(), w.top.end(), [&](const Impl::Top& o) { return r.cycles > o.cycles; });
        w.top.insert(at, std::move(t));
        if (w.top.size() > 5) w.top.pop_back();
    }
    if (w.json_out) w.write_json_op(r);
    if (w.rows) {
        const OpRow row = row_of(r);
        w.name_w = std::max(w.name_w, row.name.size());
        w.shape_w = std::max(w.shape_w, row.shape.size());
        w.dtype_w = std::max(w.dtype_w, row.dtype_table.size());
        w.model_w = std::max(w.model_w, row.model.size());
        put_row(*w.rows, row);
    }
}

void ReportWriter::finish(const std::optional<NumericsSummary>& numerics) {
    Impl& w = *impl_;
    if (numerics.has_value() != w.with_numerics)
        throw std::logic_error("ReportWriter: numerics present at the end but not announced at the start, or the reverse");
    if (w.json_out) {
        if (w.json_spill) {
            w.json_head(*w.json_out, numerics);
            w.json_spill->copy_to(*w.json_out);
        } else if (!w.json_head_written) {
            w.json_head(*w.json_out, std::nullopt);
        }
        w.json_tail(*w.json_out);
    }
    if (w.csv) w.write_csv();
    if (w.table) w.write_table(numerics);
}

void ReportWriter::Impl::write_csv() {
    std::ostream& out = *csv;
    out << "index,name,kind,dtype,shape,model,cycles,start_cycle,end_cycle,host_cycles,macs,flops";
    for (const auto& l : levels) out << ",bytes_" << l;
    out << ",utilization,occupancy_theoretical,occupancy_achieved,simd_efficiency,bound";
    for (const auto& b : bounds) out << ",roofline_" << b << "_cycles";
    if (fused > 0) out << ",fused_into,fused_ops";  // only runs that fused ops have the columns
    if (quantized > 0) out << ",quantization_max_abs,quantization_relative_rms";  // --validate on int8/fp8
    const bool reasons = !roofline_reasons.empty();
    if (reasons) out << ",roofline_reason";  // only runs with a roofline row that has a reason
    out << "\n";
    rows->rewind();
    for (std::size_t index = 0; index < ops; ++index) {
        const OpRow r = get_row(*rows);
        out << index << "," << csv_field(r.name) << "," << r.kind << "," << r.dtype_csv << "," << csv_field(r.shape)
            << "," << r.model << "," << r.cycles << "," << r.start_cycle << "," << r.end_cycle << "," << r.host_cycles << ",";
        if (r.has_flops) out << r.macs << "," << r.flops;
        else out << ",";
        for (const auto& l : levels) {
            const std::int64_t* b = find_in(r.bytes, l);
            out << "," << (b ? *b : 0);
        }
        out << "," << csv_number(r.utilization) << "," << csv_number(r.occupancy_theoretical) << ","
            << csv_number(r.occupancy_achieved) << "," << csv_number(r.simd_efficiency) << "," << r.bound;
        for (const auto& b : bounds) {
            const double* c = find_in(r.roofline_cycles, b);
            out << "," << (c ? csv_number(*c) : std::string());
        }
        if (fused > 0) out << "," << csv_field(r.fused_into) << "," << csv_field(r.fused_ops);
        if (quantized > 0)
            out << "," << csv_number(r.quantization_max_abs) << "," << csv_number(r.quantization_relative_rms);
        if (reasons) out << "," << csv_field(r.roofline_reason);
        out << "\n";
    }
}

void ReportWriter::Impl::write_table(const std::optional<NumericsSummary>& numerics) {
    std::ostream& out = *table;
    const ChipConfig& chip = config;
    const double clock_hz = chip.clock_hz();
    out << "accelsim " << ACCELSIM_VERSION << " | config " << chip.name << " ("
        << chip.kind << ", " << fixed(chip.run_clock_mhz(), 0) << " MHz" << sustained_note(chip) << ", memory "
        << chip.memory << ", host launch " << launch_name() << ") | trace " << trace << " | " << ops << " ops\n";
    if (unmodelled > 0)
        out << "note: no cycle model ran for " << unmodelled << " of " << ops
            << " ops (model \"roofline\"): their cycles are the roofline lower bound, not a "
               "simulation.\n";
    for (const auto& [reason, named] : roofline_reasons) {
        out << "      ";
        for (std::size_t i = 0; i < named.first_names.size(); ++i) out << (i ? ", " : "") << named.first_names[i];
        if (named.count > named.first_names.size()) out << " and " << named.count - named.first_names.size() << " more";
        out << ": " << reason << "\n";
    }
    if (fallback.ops > 0)
        out << "note: " << fallback.ops << " GEMM-like op(s) in " << joined(fallback.dtypes)
            << ", a dtype this chip's matrix unit does not run, ran on the slower " << joined(fallback.units)
            << " unit (the matrix unit's rate for that dtype is 0 in the config).\n";
    out << import_text;
    out << "\n";

    char line[1024];
    std::snprintf(line, sizeof line, "%4s  %-*s  %-9s  %-*s  %-*s  %-*s  %14s  %10s  %8s  %6s  %-8s", "#",
                  static_cast<int>(name_w), "op", "kind", static_cast<int>(shape_w), "shape", static_cast<int>(dtype_w), "dtype",
                  static_cast<int>(model_w), "model", "cycles", "time(us)", "host(us)", "util", "bound");
    out << line;
    for (const auto& l : levels) {
        std::snprintf(line, sizeof line, "  %12s", (l + "(MB)").c_str());
        out << line;
    }
    out << "\n";
    rows->rewind();
    for (std::size_t index = 0; index < ops; ++index) {
        const OpRow r = get_row(*rows);
        std::snprintf(line, sizeof line, "%4zu  %-*s  %-9s  %-*s  %-*s  %-*s  %14s  %10s  %8s  %6s  %-8s", index,
                      static_cast<int>(name_w), r.name.c_str(), r.kind.c_str(), static_cast<int>(shape_w),
                      r.shape.c_str(), static_cast<int>(dtype_w), r.dtype_table.c_str(), static_cast<int>(model_w), r.model.c_str(),
                      with_commas(r.cycles).c_str(),
                      fixed(static_cast<double>(r.cycles) / clock_hz * 1e6, 2).c_str(),
                      fixed(static_cast<double>(r.host_cycles) / clock_hz * 1e6, 2).c_str(),
                      percent(r.utilization).c_str(), r.bound.c_str());
        out << line;
        for (const auto& l : levels) {
            const std::int64_t* b = find_in(r.bytes, l);
            const double mb = b ? static_cast<double>(*b) / 1e6 : 0.0;
            std::snprintf(line, sizeof line, "  %12s", fixed(mb, 3).c_str());
            out << line;
        }
        out << "\n";
    }

    const std::uint64_t cycles = total_cycles;
    const double secs = seconds();
    // The peak shown: the one dtype of the trace's MACs, or the default dtype's for a mix (each
    // op's MACs still count against their own dtype's peak).
    const bool one_dtype = mac_dtypes.size() == 1;
    Op of_dtype;
    of_dtype.kind = OpKind::matmul;
    of_dtype.dtype = one_dtype ? *mac_dtypes.begin() : chip.default_dtype;
    const double peak_flops = 2.0 * matrix_peaks.for_op(of_dtype) * chip.peak_clock_hz();
    const double achieved = secs > 0 ? static_cast<double>(flops) / secs : 0;
    out << "\ntotals: " << with_commas(cycles) << " cycles = " << fixed(secs * 1e3, 3) << " ms at "
        << fixed(chip.run_clock_mhz(), 0) << " MHz; " << with_commas(static_cast<std::uint64_t>(macs))
        << " MACs; " << fixed(achieved / 1e12, 2) << " TFLOP/s achieved";
    if (uncounted > 0)
        out << " (" << uncounted << (uncounted == 1 ? " op" : " ops")
            << " whose program decides its work not counted)";
    if (peak_flops > 0)
        out << " of " << fixed(peak_flops / 1e12, 1) << " peak (" << to_string(of_dtype.dtype)
            << (one_dtype || mac_dtypes.empty() ? "" : "; mixed dtypes, each op against its own peak")
            << "); MAC utilization " << fixed(mac_utilization() * 100, 1) << "%";
    out << "\n";
    // Host and device apart: the device's own time, and the host time it could not hide.
    out << "        device " << fixed(static_cast<double>(cycles - host_cycles) / clock_hz * 1e3, 3) << " ms + host "
        << fixed(static_cast<double>(host_cycles) / clock_hz * 1e3, 3) << " ms not hidden by the device (host launch "
        << launch_name() << ", docs/host.md)\n";
    for (const auto& [level, b] : bytes) {
        out << "        " << level << ": " << fixed(static_cast<double>(b) / 1e6, 3) << " MB";
        if (secs > 0) out << ", " << fixed(static_cast<double>(b) / secs / 1e9, 1) << " GB/s average";
        out << "\n";
    }

    if (sampled > 0)
        out << "sampled ops (gpu.sampling " << to_string(config.gpu.sampling) << "): " << sampled << " of " << ops
            << ", cycles extrapolated from converged waves; error bound "
            << fixed(sampling_error_cycles / static_cast<double>(std::max<std::uint64_t>(1, total_cycles)) * 100, 2)
            << "% of the total (docs/gpu.md \"Sampled simulation\")\n";
    if (fused > 0) {
        // Which trace ops each kernel ran (docs/gpu.md "Fused graphs").
        out << "fused kernels (compiler.gpu_fusion " << fusion_name() << "): " << ops - fused << " kernels for " << ops
            << " ops\n";
        rows->rewind();
        for (std::size_t index = 0; index < ops; ++index) {
            const OpRow r = get_row(*rows);
            if (!r.fused_ops.empty()) out << "  " << r.name << " + " << r.fused_ops << "\n";
        }
    }
    out << "time by bound:";
    for (const auto& [bound, c] : by_bound)
        out << " " << bound << " " << fixed(cycles ? 100.0 * static_cast<double>(c) / static_cast<double>(cycles) : 0, 1)
            << "%";
    out << "\n";
    if (fallback.ops > 0)
        out << "matrix-unit fallback: " << fallback.ops << " op(s) in " << joined(fallback.dtypes) << " on "
            << joined(fallback.units) << ", "
            << fixed(cycles ? 100.0 * static_cast<double>(fallback.cycles) / static_cast<double>(cycles) : 0, 1)
            << "% of cycles\n";

    out << "top bottlenecks:\n";
    for (std::size_t i = 0; i < top.size(); ++i) {
        const Top& r = top[i];
        out << "  " << (i + 1) << ". " << r.name << " (" << r.kind << ") " << with_commas(r.cycles) << " cycles, "
            << fixed(cycles ? 100.0 * static_cast<double>(r.cycles) / static_cast<double>(cycles) : 0, 1)
            << "% of the total, bound by " << r.bound << "\n";
    }
    // SIMT ops: what limited the warps (IPC, occupancy, divergence, stall reasons).
    bool header_done = false;
    rows->rewind();
    for (std::size_t index = 0; index < ops; ++index) {
        const OpRow r = get_row(*rows);
        if (!r.occupancy_achieved && !r.simd_efficiency) continue;
        if (!header_done) {
            std::snprintf(line, sizeof line, "simt ops:\n  %-*s  %7s  %13s  %6s  %9s  %11s  %9s  %8s\n",
                          static_cast<int>(name_w), "op", "IPC", "occ th/ach", "SIMD", "idle", "scoreboard",
                          "pipeline", "barrier");
            out << line;
            header_done = true;
        }
        const std::string occupancy = percent(r.occupancy_theoretical) + "/" + percent(r.occupancy_achieved);
        std::snprintf(line, sizeof line, "  %-*s  %7s  %13s  %6s  %9s  %11s  %9s  %8s\n", static_cast<int>(name_w),
                      r.name.c_str(), r.ipc ? fixed(*r.ipc, 2).c_str() : "-", occupancy.c_str(),
                      percent(r.simd_efficiency).c_str(), percent(r.stalls[0]).c_str(), percent(r.stalls[1]).c_str(),
                      percent(r.stalls[2]).c_str(), percent(r.stalls[3]).c_str());
        out << line;
    }
    if (header_done)
        out << "  (stall columns: share of all scheduler-cycles that issued nothing, by reason; memory waits show as scoreboard)\n";
    if (numerics) {
        const auto& n = *numerics;
        out << "numerics: " << (n.passed ? "PASSED" : "FAILED") << ", " << n.checked
            << " values checked against host references (Eigen for GEMMs), max abs err " << n.max_abs_err << ", max rel err "
            << n.max_rel_err << "\n";
        if (n.quantization) write_quantization(out, *n.quantization);
    }
}

// The int8/fp8 ops' error against fp32, one line each, then the run's pooled figure.
void ReportWriter::Impl::write_quantization(std::ostream& out, const QuantizationError& pooled) {
    char line[1024];
    const int dtype_column = static_cast<int>(std::max<std::size_t>(dtype_w, 8));
    std::snprintf(line, sizeof line, "quantization error against fp32 (docs/outputs.md):\n  %-*s  %-*s  %12s  %12s\n",
                  static_cast<int>(name_w), "op", dtype_column, "dtype", "max abs", "rel RMS");
    out << line;
    rows->rewind();
    for (std::size_t index = 0; index < ops; ++index) {
        const OpRow r = get_row(*rows);
        if (!r.quantization_max_abs) continue;
        std::snprintf(line, sizeof line, "  %-*s  %-*s  %12.4g  %12.4g\n", static_cast<int>(name_w), r.name.c_str(),
                      dtype_column, r.dtype_table.c_str(), *r.quantization_max_abs, *r.quantization_relative_rms);
        out << line;
    }
    std::snprintf(line, sizeof line,
                  "  end to end, aggregated over %lld independently seeded ops (values do not flow from op to op): "
                  "max abs %.4g, relative RMS %.4g over all %lld outputs, worst op %.4g\n",
                  static_cast<long long>(pooled.ops), pooled.max_abs, pooled.relative_rms(),
                  static_cast<long long>(pooled.values), pooled.worst_op_relative_rms);
    out << line;
}

namespace {
// The in-memory report through the same writer the CLI streams with.
void write_through(const RunReport& report, std::ostream* table, std::ostream* json_out, std::ostream* csv) {
    ReportWriter w(*report.config, report.trace, report.matrix_peaks, report.numerics.has_value(), table,
                   json_out, csv);
    if (!report.import_summary.is_null()) w.set_import(report.import_summary, report.import_text);
    for (const auto& r : report.ops) w.add(r);
    w.finish(report.numerics);
}
}  // namespace

void write_json(std::ostream& out, const RunReport& report) { write_through(report, nullptr, &out, nullptr); }
void write_csv(std::ostream& out, const RunReport& report) { write_through(report, nullptr, nullptr, &out); }
void write_table(std::ostream& out, const RunReport& report) { write_through(report, &out, nullptr, nullptr); }
std::string si_text(double value, const char* unit, int significant) {
    static const char* const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    int i = 0;
    while (value >= 1000 && i < 6) {
        value /= 1000;
        ++i;
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.*g %s%s", significant, value, prefixes[i], unit);
    return text;
}

}  // namespace accelsim
