#include "sim/compare/comparison.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "sim/report/number_text.h"
#include "sim/roofline/roofline.h"

namespace accelsim {

using nlohmann::json;

double cost_per_million_inferences_usd(double seconds_per_inference, double cost_per_hour_usd) {
    return seconds_per_inference * (cost_per_hour_usd / 3600.0) * 1e6;
}

double energy_per_inference_j_upper_bound(double seconds_per_inference, double tdp_w) {
    return tdp_w * seconds_per_inference;
}

namespace {

[[noreturn]] void malformed(const DesignInput& d, const std::string& what) {
    throw std::runtime_error("compare: the report of " + d.config_file + " is malformed: " + what);
}

const json& field(const DesignInput& d, const json& object, const char* key, const std::string& where) {
    if (!object.is_object() || !object.contains(key)) malformed(d, "no '" + std::string(key) + "' in " + where);
    return object.at(key);
}

template <typename T>
T number(const DesignInput& d, const json& object, const char* key, const std::string& where) {
    const json& v = field(d, object, key, where);
    if (!v.is_number()) malformed(d, "'" + std::string(key) + "' in " + where + " is not a number");
    return v.get<T>();
}

std::string text(const DesignInput& d, const json& object, const char* key, const std::string& where) {
    const json& v = field(d, object, key, where);
    if (!v.is_string()) malformed(d, "'" + std::string(key) + "' in " + where + " is not a string");
    return v.get<std::string>();
}

std::optional<double> optional_number(const json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object.at(key).is_number()) return std::nullopt;
    return object.at(key).get<double>();
}

double tflops(double flops, double seconds) { return seconds > 0 ? flops / seconds / 1e12 : 0; }
double share(double achieved, double peak) { return peak > 0 ? achieved / peak : 0; }

OpOnDesign op_on_design(const DesignInput& d, const json& op, const std::string& where,
                        double clock_hz, double peak_tflops) {
    OpOnDesign c;
    c.cycles = number<std::uint64_t>(d, op, "cycles", where);
    c.seconds = static_cast<double>(c.cycles) / clock_hz;
    if (!field(d, op, "flops", where).is_null()) {
        c.flops = number<std::int64_t>(d, op, "flops", where);
        c.achieved_tflops = tflops(static_cast<double>(*c.flops), c.seconds);
        c.share_of_peak = share(*c.achieved_tflops, peak_tflops);
    }
    c.utilization = optional_number(op, "utilization");
    if (op.contains("occupancy")) c.occupancy_achieved = optional_number(op.at("occupancy"), "achieved");
    c.bound = text(d, op, "bound", where);
    c.model = text(d, op, "model", where);
    return c;
}

DesignSummary summarize(const DesignInput& d) {
    const ChipConfig& chip = d.config;
    const json& report = d.report;
    if (!report.is_object() || report.value("schema", "") != "accelsim.report/1")
        malformed(d, "schema is not accelsim.report/1");
    const json& totals = field(d, report, "totals", "the report");
    DesignSummary s;
    s.config_file = d.config_file;
    s.name = chip.name;
    s.kind = chip.kind;
    s.clock_mhz = chip.run_clock_mhz();
    s.peak_dtype = std::string(to_string(chip.default_dtype));
    s.peak_tflops = 2.0 * matrix_macs_per_cycle(chip, chip.default_dtype) * chip.peak_clock_hz() / 1e12;
    s.cycles = number<std::uint64_t>(d, totals, "cycles", "totals");
    s.seconds = number<double>(d, totals, "seconds", "totals");
    // Reports written before the host model had no host time: "none".
    s.host_launch = totals.value("host_launch", std::string("none"));
    if (totals.contains("host_cycles"))
        s.host_seconds = static_cast<double>(number<std::uint64_t>(d, totals, "host_cycles", "totals")) / chip.clock_hz();
    s.macs = number<std::int64_t>(d, totals, "macs", "totals");
    s.flops = number<std::int64_t>(d, totals, "flops", "totals");
    s.achieved_tflops = tflops(static_cast<double>(s.flops), s.seconds);
    s.share_of_peak = share(s.achieved_tflops, s.peak_tflops);
    s.utilization = number<double>(d, totals, "utilization", "totals");
    s.ops = number<std::size_t>(d, totals, "ops", "totals");
    s.ops_without_cycle_model = number<std::size_t>(d, totals, "ops_without_cycle_model", "totals");
    if (chip.cost_per_hour_usd)
        s.cost_per_million_inferences_usd = cost_per_million_inferences_usd(s.seconds, *chip.cost_per_hour_usd);
    else
        s.cost_note = "config has no cost_per_hour_usd";
    if (chip.tdp_w)
        s.energy_per_inference_j_upper_bound = energy_per_inference_j_upper_bound(s.seconds, *chip.tdp_w);
    else
        s.energy_note = "config has no tdp_w";
    return s;
}

}  // namespace

Comparison build_comparison(const std::string& trace, const std::vector<DesignInput>& designs) {
    Comparison c;
    c.trace = trace;
    std::map<std::string, int> name_count;
    for (const DesignInput& d : designs) ++name_count[d.config.name];
    std::map<std::string, int> name_seen;
    for (const DesignInput& d : designs) {
        DesignSummary s = summarize(d);
        s.label = s.name;
        if (name_count[s.name] > 1) s.label += "#" + std::to_string(++name_seen[s.name]);
        c.designs.push_back(std::move(s));
        c.reports.push_back(d.report);
    }
    if (!c.designs.empty() && c.designs.front().seconds > 0) {
        for (DesignSummary& s : c.designs)
            if (s.seconds > 0) s.speedup_vs_first = c.designs.front().seconds / s.seconds;
    }

    for (std::size_t di = 0; di < designs.size(); ++di) {
        const DesignInput& d = designs[di];
        const json& ops = field(d, d.report, "ops", "the report");
        if (!ops.is_array()) malformed(d, "'ops' is not an array");
        if (di == 0) {
            for (std::size_t i = 0; i < ops.size(); ++i) {
                const std::string where = "ops[" + std::to_string(i) + "]";
                c.ops.push_back(OpComparison{text(d, ops[i], "name", where), text(d, ops[i], "kind", where), {}});
            }
        } else if (ops.size() != c.ops.size()) {
            throw std::runtime_error("compare: " + d.config_file + " reported " + std::to_string(ops.size()) +
                                     " ops but " + designs.front().config_file + " reported " +
                                     std::to_string(c.ops.size()) + " for the same trace");
        }
        std::map<std::string, std::uint64_t> cycles_by_bound;
        for (std::size_t i = 0; i < ops.size(); ++i) {
            const std::string where = "ops[" + std::to_string(i) + "]";
            OpComparison& row = c.ops[i];
            if (text(d, ops[i], "name", where) != row.name)
                throw std::runtime_error("compare: op " + std::to_string(i) + " is '" +
                                         text(d, ops[i], "name", where) + "' in the report of " +
                                         d.config_file + " but '" + row.name + "' in the report of " +
                                         designs.front().config_file);
            row.per_design.push_back(op_on_design(d, ops[i], where, d.config.clock_hz(), c.designs[di].peak_tflops));
            cycles_by_bound[row.per_design.back().bound] += row.per_design.back().cycles;
        }
        // Ties go to the alphabetically first bound (map order), so the choice is deterministic.
        std::uint64_t most = 0;
        for (const auto& [bound, cycles] : cycles_by_bound)
            if (cycles > most) {
                c.designs[di].dominant_bound = bound;
                most = cycles;
            }
    }
    return c;
}

namespace {

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

json to_json(const Comparison& comparison) {
    json j;
    j["schema"] = kCompareSchema;
    j["trace"] = comparison.trace;
    json designs = json::array();
    for (std::size_t i = 0; i < comparison.designs.size(); ++i) {
        const DesignSummary& s = comparison.designs[i];
        json d;
        d["config_file"] = s.config_file;
        d["name"] = s.name;
        d["label"] = s.label;
        d["kind"] = s.kind;
        d["clock_mhz"] = s.clock_mhz;
        d["peak_dtype"] = s.peak_dtype;
        d["peak_tflops"] = s.peak_tflops;
        d["totals"] = {{"cycles", s.cycles},
                       {"seconds", s.seconds},
                       {"host_launch", s.host_launch},
                       {"host_seconds", s.host_seconds},
                       {"macs", s.macs},
                       {"flops", s.flops},
                       {"achieved_tflops", s.achieved_tflops},
                       {"share_of_peak", s.share_of_peak},
                       {"utilization", s.utilization},
                       {"dominant_bound", s.dominant_bound},
                       {"ops", s.ops},
                       {"ops_without_cycle_model", s.ops_without_cycle_model},
                       {"speedup_vs_first", optional_json(s.speedup_vs_first)}};
        d["cost_per_million_inferences_usd"] = optional_json(s.cost_per_million_inferences_usd);
        d["energy_per_inference_j_upper_bound"] = optional_json(s.energy_per_inference_j_upper_bound);
        if (!s.cost_note.empty()) d["cost_note"] = s.cost_note;
        if (!s.energy_note.empty()) d["energy_note"] = s.energy_note;
        d["report"] = comparison.reports[i];
        designs.push_back(std::move(d));
    }
    j["designs"] = designs;
    json ops = json::array();
    for (const OpComparison& row : comparison.ops) {
        json per_design = json::array();
        for (const OpOnDesign& c : row.per_design) {
            json p = {{"cycles", c.cycles},
                      {"seconds", c.seconds},
                      {"flops", c.flops ? json(*c.flops) : json(nullptr)},
                      {"achieved_tflops", optional_json(c.achieved_tflops)},
                      {"share_of_peak", optional_json(c.share_of_peak)},
                      {"bound", c.bound},
                      {"utilization", optional_json(c.utilization)},
                      {"model", c.model}};
            if (c.occupancy_achieved) p["occupancy_achieved"] = *c.occupancy_achieved;
            per_design.push_back(std::move(p));
        }
        ops.push_back({{"name", row.name}, {"kind", row.kind}, {"per_design", per_design}});
    }
    j["ops"] = ops;
    return j;
}

void write_compare_json(std::ostream& out, const Comparison& comparison) {
    out << to_json(comparison).dump(2) << "\n";
}

namespace {

// Shortest text that reads back as the same double: exact and byte-stable.
std::string exact(double v) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string exact(const std::optional<double>& v) { return v ? exact(*v) : std::string(); }

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) {
        if (ch == '"') q += '"';
        q += ch;
    }
    return q + "\"";
}

}  // namespace

void write_compare_csv(std::ostream& out, const Comparison& comparison) {
    out << "op_index,op_name,op_kind,design_index,design,config_file,design_kind,model,cycles,seconds,"
           "flops,achieved_tflops,share_of_peak,utilization,occupancy_achieved,bound,speedup_vs_first\n";
    for (std::size_t i = 0; i < comparison.ops.size(); ++i) {
        const OpComparison& row = comparison.ops[i];
        for (std::size_t di = 0; di < row.per_design.size(); ++di) {
            const OpOnDesign& c = row.per_design[di];
            const DesignSummary& s = comparison.designs[di];
            const double first_seconds = row.per_design.front().seconds;
            const std::string speedup = c.seconds > 0 ? exact(first_seconds / c.seconds) : std::string();
            out << i << "," << csv_field(row.name) << "," << row.kind << "," << di << ","
                << csv_field(s.label) << "," << csv_field(s.config_file) << "," << s.kind << ","
                << csv_field(c.model) << "," << c.cycles << "," << exact(c.seconds) << "," << (c.flops ? std::to_string(*c.flops) : std::string()) << ","
                << exact(c.achieved_tflops) << "," << exact(c.share_of_peak) << "," << exact(c.utilization)
                << "," << exact(c.occupancy_achieved) << "," << c.bound << "," << speedup << "\n";
        }
    }
}

namespace {

using number_text::fixed;
using number_text::with_commas;

std::string share_percent(double v) {
    return number_text::percent(v, 1);
}

// Utilization where the report gives it; for simt ops that report occupancy, the achieved occupancy.
std::string use_text(const OpOnDesign& c) {
    if (c.occupancy_achieved) return "occ " + share_percent(*c.occupancy_achieved);
    return c.utilization ? share_percent(*c.utilization) : "-";
}

// Four significant digits: tells designs apart at any scale (tiny traces give tiny costs).
std::string significant(double v) {
    if (v >= 1000) return fixed(v, 0);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// A text grid printed with per-column widths; `right` columns hold numbers.
struct Grid {
    std::vector<bool> right;
    std::vector<std::vector<std::string>> rows;

    std::vector<std::size_t> widths() const {
        std::vector<std::size_t> w(right.size(), 0);
        for (const auto& row : rows)
            for (std::size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], row[i].size());
        return w;
    }
};

void pad(std::ostream& out, const std::string& s, std::size_t width, bool right) {
    const std::string fill(width > s.size() ? width - s.size() : 0, ' ');
    out << (right ? fill + s : s + fill);
}

constexpr std::size_t kLeadColumns = 3;  // #, op, kind
constexpr std::size_t kColumnsPerDesign = 7;

std::vector<std::string> op_cells(const OpOnDesign& c) {
    return {with_commas(c.cycles),
            fixed(c.seconds * 1e6, 2),
            c.achieved_tflops ? fixed(*c.achieved_tflops, 2) : "-",
            c.share_of_peak ? share_percent(*c.share_of_peak) : "-",
            use_text(c),
            c.bound,
            c.model};
}

}  // namespace

void write_compare_table(std::ostream& out, const Comparison& comparison) {
    const auto& designs = comparison.designs;
    out << "accelsim compare | trace " << comparison.trace << " | " << comparison.ops.size() << " ops | "
        << designs.size() << (designs.size() == 1 ? " design" : " designs") << "\n";
    for (std::size_t i = 0; i < designs.size(); ++i) {
        const DesignSummary& s = designs[i];
        out << "  [" << (i + 1) << "] " << s.label << ": " << s.config_file << ", " << s.kind << ", "
            << fixed(s.clock_mhz, 0) << " MHz, peak " << fixed(s.peak_tflops, 1) << " TFLOP/s ("
            << s.peak_dtype << " matrix units), host launch " << s.host_launch << " ("
            << fixed(s.host_seconds * 1e3, 3) << " ms of host time not hidden by the device)\n";
    }
    for (const DesignSummary& s : designs) {
        if (s.ops_without_cycle_model == 0) continue;
        out << "note: " << s.label << ": no cycle model ran for " << s.ops_without_cycle_model << " of "
            << s.ops << " ops (model \"roofline\"): "
            << (s.ops_without_cycle_model == s.ops ? "all its" : "those") << " cycles are the roofline "
            << "lower bound, not a simulation.\n";
    }
    out << "\n";

    Grid grid;
    grid.right = {true, false, false};
    for (std::size_t i = 0; i < designs.size(); ++i)
        grid.right.insert(grid.right.end(), {true, true, true, true, true, false, false});
    std::vector<std::string> header = {"#", "op", "kind"};
    for (std::size_t i = 0; i < designs.size(); ++i)
        header.insert(header.end(), {"cycles", "time(us)", "TFLOP/s", "%peak", "util/occ", "bound", "model"});
    grid.rows.push_back(header);
    for (std::size_t i = 0; i < comparison.ops.size(); ++i) {
        const OpComparison& row = comparison.ops[i];
        std::vector<std::string> cells = {std::to_string(i), row.name, row.kind};
        for (const OpOnDesign& c : row.per_design) {
            const auto more = op_cells(c);
            cells.insert(cells.end(), more.begin(), more.end());
        }
        grid.rows.push_back(std::move(cells));
    }
    std::vector<std::string> total = {"", "total", ""};
    for (const DesignSummary& s : designs) {
        const char* model = s.ops_without_cycle_model == 0 ? "cycle"
                            : s.ops_without_cycle_model == s.ops ? "roofline"
                                                                 : "mixed";
        total.insert(total.end(), {with_commas(s.cycles), fixed(s.seconds * 1e6, 2),
                                   fixed(s.achieved_tflops, 2), share_percent(s.share_of_peak),
                                   share_percent(s.utilization), s.dominant_bound, model});
    }
    grid.rows.push_back(total);

    const auto widths = grid.widths();
    const std::string gap = "  ", bar = " | ";
    // Group header: each design's label over its block of columns.
    std::size_t lead = 0;
    for (std::size_t i = 0; i < kLeadColumns; ++i) lead += widths[i] + (i + 1 < kLeadColumns ? gap.size() : 0);
    out << std::string(lead, ' ');
    for (std::size_t d = 0; d < designs.size(); ++d) {
        std::size_t block = 0;
        for (std::size_t i = 0; i < kColumnsPerDesign; ++i)
            block += widths[kLeadColumns + d * kColumnsPerDesign + i] + (i + 1 < kColumnsPerDesign ? gap.size() : 0);
        out << bar;
        pad(out, "[" + std::to_string(d + 1) + "] " + designs[d].label, block, false);
    }
    out << "\n";
    for (std::size_t r = 0; r < grid.rows.size(); ++r) {
        const auto& row = grid.rows[r];
        if (r + 1 == grid.rows.size()) out << "\n";  // totals set apart
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (i > 0) out << (i >= kLeadColumns && (i - kLeadColumns) % kColumnsPerDesign == 0 ? bar : gap);
            pad(out, row[i], widths[i], grid.right[i]);
        }
        out << "\n";
    }
    out << "(total: util/occ is MAC utilization over the whole run; bound is the one holding the most "
           "cycles; model \"cycle\" = every op cycle-modelled)\n\n";

    // Per-design summary: one metric per line, designs as columns.
    Grid summary;
    summary.right = {false};
    std::vector<std::string> names = {"per inference (one pass of the trace)"};
    for (const DesignSummary& s : designs) {
        summary.right.push_back(true);
        names.push_back(s.label);
    }
    summary.rows.push_back(names);
    auto add = [&](const std::string& metric, auto cell) {
        std::vector<std::string> row = {metric};
        for (const DesignSummary& s : designs) row.push_back(cell(s));
        summary.rows.push_back(std::move(row));
    };
    add("cycles", [](const DesignSummary& s) { return with_commas(s.cycles); });
    add("time (ms)", [](const DesignSummary& s) { return significant(s.seconds * 1e3); });
    add("achieved TFLOP/s", [](const DesignSummary& s) { return fixed(s.achieved_tflops, 2); });
    add("peak TFLOP/s", [](const DesignSummary& s) { return fixed(s.peak_tflops, 1) + " " + s.peak_dtype; });
    add("share of peak", [](const DesignSummary& s) { return share_percent(s.share_of_peak); });
    add("MAC utilization", [](const DesignSummary& s) { return share_percent(s.utilization); });
    add("speedup vs " + (designs.empty() ? std::string() : designs.front().label), [](const DesignSummary& s) {
        if (!s.speedup_vs_first) return std::string("n/a");
        const double x = *s.speedup_vs_first;
        return (x >= 0.1 ? fixed(x, 2) : significant(x)) + "x";
    });
    add("cost per 1M inferences (USD)", [](const DesignSummary& s) {
        return s.cost_per_million_inferences_usd ? significant(*s.cost_per_million_inferences_usd) : std::string("n/a");
    });
    add("energy per inference (J, upper bound)", [](const DesignSummary& s) {
        return s.energy_per_inference_j_upper_bound ? significant(*s.energy_per_inference_j_upper_bound)
                                                    : std::string("n/a");
    });
    const auto sw = summary.widths();
    for (const auto& row : summary.rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (i > 0) out << gap;
            pad(out, row[i], sw[i], summary.right[i]);
        }
        out << "\n";
    }
    for (const DesignSummary& s : designs) {
        if (!s.cost_note.empty()) out << "n/a: " << s.label << " cost: " << s.cost_note << "\n";
        if (!s.energy_note.empty()) out << "n/a: " << s.label << " energy: " << s.energy_note << "\n";
    }
    out << "cost = time x cost_per_hour_usd / 3600 x 1e6 (the config's on-demand price, host included);\n"
           "energy = tdp_w x time, an upper bound (real draw is below TDP). Both assume back-to-back\n"
           "inferences at the simulated time, batch as in the trace; see docs/compare.md.\n";
}

}  // namespace accelsim
