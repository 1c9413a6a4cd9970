#include "sim/report/report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <sstream>

#include "models/gpu/gpu_stats.h"

namespace accelsim {

using nlohmann::json;

std::uint64_t RunReport::total_cycles() const { return ops.empty() ? 0 : ops.back().end_cycle; }

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

double RunReport::mac_utilization() const {
    const double peak = matrix_macs_per_cycle;
    const auto cycles = total_cycles();
    if (peak <= 0 || cycles == 0) return 0;
    return static_cast<double>(total_macs()) / (peak * static_cast<double>(cycles));
}

std::size_t RunReport::ops_without_cycle_model() const {
    return static_cast<std::size_t>(
        std::count_if(ops.begin(), ops.end(), [](const OpReport& o) { return o.model == "roofline"; }));
}

namespace {

// A kernel op's program decides its element types: it has no dtype to show.
std::string dtype_text(const Op& op, const char* none) {
    return op_info(op.kind).has_dtype ? std::string(to_string(op.dtype)) : std::string(none);
}

// GEMM-like ops whose dtype the chip's matrix unit does not run: they fell to a slower unit.
struct Fallback {
    std::size_t ops = 0;
    std::uint64_t cycles = 0;
    std::set<std::string> dtypes, units;
};
Fallback matrix_fallback(const RunReport& report) {
    Fallback f;
    for (const auto& r : report.ops) {
        if (!r.roofline.matrix_fallback) continue;
        ++f.ops;
        f.cycles += r.cycles;
        f.dtypes.insert(std::string(to_string(r.op.dtype)));
        f.units.insert(r.roofline.compute_unit);
    }
    return f;
}
std::string joined(const std::set<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
    return s;
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json op_json(const OpReport& r) {
    json o;
    o["name"] = r.op.name;
    o["kind"] = std::string(to_string(r.op.kind));
    const OpKindInfo& info = op_info(r.op.kind);
    o["dtype"] = info.has_dtype ? json(std::string(to_string(r.op.dtype))) : json(nullptr);
    o["shape"] = shape_json(r.op);
    o["model"] = r.model;
    o["cycles"] = r.cycles;
    o["start_cycle"] = r.start_cycle;
    o["end_cycle"] = r.end_cycle;
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
    if (r.numerics)
        o["numerics"] = {{"checked", r.numerics->checked},
                         {"max_abs_err", r.numerics->max_abs_err},
                         {"max_rel_err", r.numerics->max_rel_err},
                         {"passed", r.numerics->passed}};
    if (!r.op.file.empty()) o["source"] = r.op.file + ":" + std::to_string(r.op.line);
    return o;
}

std::string with_commas(std::uint64_t v) {
    std::string s = std::to_string(v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string percent(std::optional<double> v) { return v ? fixed(*v * 100.0, 1) + "%" : "-"; }

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

json to_json(const RunReport& report) {
    json j;
    j["schema"] = kReportSchema;
    j["config"] = report.config->effective;
    j["config_file"] = report.config->file;
    j["trace"] = report.trace;
    json ops = json::array();
    for (const auto& r : report.ops) ops.push_back(op_json(r));
    j["ops"] = ops;
    json totals;
    totals["cycles"] = report.total_cycles();
    totals["seconds"] = report.seconds();
    totals["macs"] = report.total_macs();
    totals["flops"] = report.total_flops();
    totals["utilization"] = report.mac_utilization();
    totals["bytes"] = report.total_bytes();
    totals["ops"] = report.ops.size();
    totals["ops_without_cycle_model"] = report.ops_without_cycle_model();
    std::map<std::string, std::uint64_t> by_bound;
    for (const auto& r : report.ops) by_bound[r.roofline.bound] += r.cycles;
    totals["cycles_by_bound"] = by_bound;
    j["totals"] = totals;
    if (report.numerics) {
        const auto& n = *report.numerics;
        j["numerics"] = {{"checked", n.checked},
                         {"max_abs_err", n.max_abs_err},
                         {"max_rel_err", n.max_rel_err},
                         {"passed", n.passed}};
    }
    return j;
}

void write_json(std::ostream& out, const RunReport& report) { out << to_json(report).dump(2) << "\n"; }

void write_csv(std::ostream& out, const RunReport& report) {
    std::set<std::string> levels, bounds;
    for (const auto& r : report.ops) {
        for (const auto& [level, b] : r.bytes) levels.insert(level);
        for (const auto& [key, c] : r.roofline.cycles) bounds.insert(key);
    }
    out << "index,name,kind,dtype,shape,model,cycles,start_cycle,end_cycle,macs,flops";
    for (const auto& l : levels) out << ",bytes_" << l;
    out << ",utilization,occupancy_theoretical,occupancy_achieved,simd_efficiency,bound";
    for (const auto& b : bounds) out << ",roofline_" << b << "_cycles";
    out << "\n";
    std::size_t index = 0;
    for (const auto& r : report.ops) {
        out << index++ << "," << csv_field(r.op.name) << "," << to_string(r.op.kind) << ","
            << dtype_text(r.op, "") << "," << csv_field(shape_text(r.op)) << "," << r.model << ","
            << r.cycles << "," << r.start_cycle << "," << r.end_cycle << ",";
        if (op_info(r.op.kind).has_flops) out << r.op.macs() << "," << r.op.flops();
        else out << ",";
        for (const auto& l : levels) {
            auto it = r.bytes.find(l);
            out << "," << (it == r.bytes.end() ? 0 : it->second);
        }
        out << "," << csv_number(r.utilization) << "," << csv_number(r.occupancy_theoretical) << ","
            << csv_number(r.occupancy_achieved) << "," << csv_number(r.simd_efficiency) << ","
            << r.roofline.bound;
        for (const auto& b : bounds) {
            auto it = r.roofline.cycles.find(b);
            out << "," << (it == r.roofline.cycles.end() ? std::string() : csv_number(it->second));
        }
        out << "\n";
    }
}

void write_table(std::ostream& out, const RunReport& report) {
    const ChipConfig& chip = *report.config;
    const double clock_hz = chip.clock_hz();
    out << "accelsim " << ACCELSIM_VERSION << " | config " << chip.name << " ("
        << chip.kind << ", " << fixed(chip.clock_mhz, 0)
        << " MHz, memory " << chip.memory << ") | trace " << report.trace << " | " << report.ops.size()
        << " ops\n";
    const std::size_t unmodelled = report.ops_without_cycle_model();
    if (unmodelled > 0)
        out << "note: no cycle model ran for " << unmodelled << " of " << report.ops.size()
            << " ops (model \"roofline\"): their cycles are the roofline lower bound, not a "
               "simulation.\n";
    const Fallback fallback = matrix_fallback(report);
    if (fallback.ops > 0)
        out << "note: " << fallback.ops << " GEMM-like op(s) in " << joined(fallback.dtypes)
            << ", a dtype this chip's matrix unit does not run, ran on the slower " << joined(fallback.units)
            << " unit (the matrix unit's rate for that dtype is 0 in the config).\n";
    out << "\n";

    std::size_t name_w = 2, shape_w = 5, model_w = 5;
    for (const auto& r : report.ops) {
        name_w = std::max(name_w, r.op.name.size());
        shape_w = std::max(shape_w, shape_text(r.op).size());
        model_w = std::max(model_w, r.model.size());
    }
    std::set<std::string> levels;
    for (const auto& r : report.ops)
        for (const auto& [level, b] : r.bytes) levels.insert(level);

    char line[1024];
    std::snprintf(line, sizeof line, "%4s  %-*s  %-9s  %-*s  %-5s  %-*s  %14s  %10s  %6s  %-8s", "#",
                  static_cast<int>(name_w), "op", "kind", static_cast<int>(shape_w), "shape", "dtype",
                  static_cast<int>(model_w), "model", "cycles", "time(us)", "util", "bound");
    out << line;
    for (const auto& l : levels) {
        std::snprintf(line, sizeof line, "  %12s", (l + "(MB)").c_str());
        out << line;
    }
    out << "\n";
    std::size_t index = 0;
    for (const auto& r : report.ops) {
        std::snprintf(line, sizeof line, "%4zu  %-*s  %-9s  %-*s  %-5s  %-*s  %14s  %10s  %6s  %-8s", index++,
                      static_cast<int>(name_w), r.op.name.c_str(),
                      std::string(to_string(r.op.kind)).c_str(), static_cast<int>(shape_w),
                      shape_text(r.op).c_str(), dtype_text(r.op, "-").c_str(),
                      static_cast<int>(model_w), r.model.c_str(), with_commas(r.cycles).c_str(),
                      fixed(static_cast<double>(r.cycles) / clock_hz * 1e6, 2).c_str(),
                      percent(r.utilization).c_str(), r.roofline.bound.c_str());
        out << line;
        for (const auto& l : levels) {
            auto it = r.bytes.find(l);
            const double mb = it == r.bytes.end() ? 0.0 : static_cast<double>(it->second) / 1e6;
            std::snprintf(line, sizeof line, "  %12s", fixed(mb, 3).c_str());
            out << line;
        }
        out << "\n";
    }

    const std::uint64_t cycles = report.total_cycles();
    const double seconds = report.seconds();
    const double peak_flops = 2.0 * report.matrix_macs_per_cycle * clock_hz;
    const double achieved = seconds > 0 ? static_cast<double>(report.total_flops()) / seconds : 0;
    out << "\ntotals: " << with_commas(cycles) << " cycles = " << fixed(seconds * 1e3, 3) << " ms at "
        << fixed(chip.clock_mhz, 0) << " MHz; " << with_commas(static_cast<std::uint64_t>(report.total_macs()))
        << " MACs; " << fixed(achieved / 1e12, 2) << " TFLOP/s achieved";
    const auto uncounted = std::count_if(report.ops.begin(), report.ops.end(),
                                         [](const OpReport& r) { return !op_info(r.op.kind).has_flops; });
    if (uncounted > 0)
        out << " (" << uncounted << (uncounted == 1 ? " op" : " ops")
            << " whose program decides its work not counted)";
    if (peak_flops > 0)
        out << " of " << fixed(peak_flops / 1e12, 1) << " peak (" << to_string(chip.default_dtype)
            << "); MAC utilization " << fixed(report.mac_utilization() * 100, 1) << "%";
    out << "\n";
    for (const auto& [level, b] : report.total_bytes()) {
        out << "        " << level << ": " << fixed(static_cast<double>(b) / 1e6, 3) << " MB";
        if (seconds > 0) out << ", " << fixed(static_cast<double>(b) / seconds / 1e9, 1) << " GB/s average";
        out << "\n";
    }

    std::map<std::string, std::uint64_t> by_bound;
    for (const auto& r : report.ops) by_bound[r.roofline.bound] += r.cycles;
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

    std::vector<const OpReport*> sorted;
    for (const auto& r : report.ops) sorted.push_back(&r);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const OpReport* a, const OpReport* b) { return a->cycles > b->cycles; });
    out << "top bottlenecks:\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(5, sorted.size()); ++i) {
        const OpReport& r = *sorted[i];
        out << "  " << (i + 1) << ". " << r.op.name << " (" << to_string(r.op.kind) << ") "
            << with_commas(r.cycles) << " cycles, "
            << fixed(cycles ? 100.0 * static_cast<double>(r.cycles) / static_cast<double>(cycles) : 0, 1)
            << "% of the total, bound by " << r.roofline.bound << "\n";
    }
    // SIMT ops: what limited the warps (IPC, occupancy, divergence, stall reasons).
    bool header_done = false;
    for (const auto& r : report.ops) {
        if (!r.occupancy_achieved && !r.simd_efficiency) continue;
        if (!header_done) {
            std::snprintf(line, sizeof line, "simt ops:\n  %-*s  %7s  %13s  %6s  %9s  %11s  %9s  %8s\n",
                          static_cast<int>(name_w), "op", "IPC", "occ th/ach", "SIMD", "idle", "scoreboard",
                          "pipeline", "barrier");
            out << line;
            header_done = true;
        }
        namespace gs = gpu::stat;
        const auto stat_of = [&](const StatDef& def) { return find_stat(r.stats, def); };
        const auto stall_share = [&](const StatDef& def) {
            double slots = 0;
            for (const StatDef* d : {&gs::slots_issued, &gs::stall_idle, &gs::stall_scoreboard, &gs::stall_pipeline,
                                     &gs::stall_barrier})
                slots += stat_of(*d).value_or(0);
            const auto v = stat_of(def);
            return v && slots > 0 ? std::optional<double>(*v / slots) : std::nullopt;
        };
        const auto ipc = stat_of(gs::ipc);
        const std::string occupancy = percent(r.occupancy_theoretical) + "/" + percent(r.occupancy_achieved);
        std::snprintf(line, sizeof line, "  %-*s  %7s  %13s  %6s  %9s  %11s  %9s  %8s\n", static_cast<int>(name_w),
                      r.op.name.c_str(), ipc ? fixed(*ipc, 2).c_str() : "-", occupancy.c_str(),
                      percent(r.simd_efficiency).c_str(), percent(stall_share(gs::stall_idle)).c_str(),
                      percent(stall_share(gs::stall_scoreboard)).c_str(),
                      percent(stall_share(gs::stall_pipeline)).c_str(),
                      percent(stall_share(gs::stall_barrier)).c_str());
        out << line;
    }
    if (header_done)
        out << "  (stall columns: share of all scheduler-cycles that issued nothing, by reason; memory waits show as scoreboard)\n";
    if (report.numerics) {
        const auto& n = *report.numerics;
        out << "numerics: " << (n.passed ? "PASSED" : "FAILED") << ", " << n.checked
            << " values checked against Eigen, max abs err " << n.max_abs_err << ", max rel err "
            << n.max_rel_err << "\n";
    }
}

}  // namespace accelsim
