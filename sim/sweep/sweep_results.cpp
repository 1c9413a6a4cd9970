#include "sim/sweep/sweep_results.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "sim/compare/comparison.h"
#include "sim/input_error.h"
#include "sim/sweep/sweep_files.h"

namespace accelsim {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const char* const kCost = "cost_per_million_inferences_usd";
const char* const kEnergy = "energy_per_inference_j_upper_bound";
const std::vector<std::string> kFixedMetrics = {"cycles", "seconds", "utilization", "macs", "flops", "ops"};
// Bounds in the order a reader expects them; any other bound a model reports follows, sorted.
const std::vector<std::string> kBoundOrder = {"compute", "hbm", "l2", "cmem", "scratchpad", "smem", "latency"};

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string number_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A report without its "ops" array (the bulk of the file): the CSV needs only totals and config.
json read_report_without_ops(const std::string& path) {
    const std::string text = read_whole_file(path);
    const json::parser_callback_t skip_ops = [](int depth, json::parse_event_t event, json& parsed) {
        return !(event == json::parse_event_t::key && depth == 1 && parsed == "ops");
    };
    return json::parse(text, skip_ops);
}

// true when a is at least as good as b in every objective and better in one.
bool dominates(const SweepRow& a, const SweepRow& b, const std::vector<Objective>& objectives) {
    bool better = false;
    for (const Objective& o : objectives) {
        const double x = a.metric(o.metric)->get<double>(), y = b.metric(o.metric)->get<double>();
        if (o.maximize ? x < y : x > y) return false;
        if (x != y) better = true;
    }
    return better;
}

}  // namespace

const json* SweepRow::metric(const std::string& column) const {
    for (const auto& [name, value] : metrics)
        if (name == column) return &value;
    return nullptr;
}

std::vector<Objective> parse_objectives(const std::vector<std::string>& names, const std::string& where,
                                        const std::vector<std::string>& axis_names) {
    std::vector<Objective> objectives;
    for (std::string name : names) {
        Objective o;
        bool explicit_direction = false;
        for (const char* prefix : {"max:", "min:"})
            if (name.rfind(prefix, 0) == 0) {
                o.maximize = prefix[1] == 'a';
                explicit_direction = true;
                name.erase(0, 4);
            }
        if (name == "latency") name = "seconds";
        if (name == "cost") name = kCost;
        if (name == "energy") name = kEnergy;
        const bool known = std::find(kFixedMetrics.begin(), kFixedMetrics.end(), name) != kFixedMetrics.end() ||
                           name == kCost || name == kEnergy || name.rfind("share_", 0) == 0 ||
                           name.rfind("bytes_", 0) == 0 ||
                           std::find(axis_names.begin(), axis_names.end(), name) != axis_names.end();
        if (!known)
            throw InputError(where + ": unknown metric '" + name +
                             "' (allowed: latency, cost, energy, cycles, seconds, utilization, macs, flops, ops, "
                             "share_<bound>, bytes_<level>, a numeric axis, " + kCost + ", " + kEnergy + "; prefix max: or min:)");
        if (!explicit_direction) o.maximize = name == "utilization";
        o.metric = name;
        objectives.push_back(o);
    }
    if (objectives.size() == 1) throw InputError(where + ": a Pareto front needs two or more objectives");
    return objectives;
}

std::vector<std::pair<std::string, json>> report_metrics(const json& report) {
    const json& totals = report.at("totals");
    std::vector<std::pair<std::string, json>> m;
    for (const std::string& name : kFixedMetrics) m.emplace_back(name, totals.at(name));
    const double cycles = totals.at("cycles").get<double>();
    std::map<std::string, std::uint64_t> by_bound = totals.value("cycles_by_bound", std::map<std::string, std::uint64_t>{});
    for (const std::string& b : kBoundOrder)
        if (const auto it = by_bound.find(b); it != by_bound.end()) {
            m.emplace_back("share_" + b, cycles > 0 ? static_cast<double>(it->second) / cycles : 0.0);
            by_bound.erase(it);
        }
    for (const auto& [b, c] : by_bound) m.emplace_back("share_" + b, cycles > 0 ? static_cast<double>(c) / cycles : 0.0);
    for (const auto& [level, bytes] : totals.at("bytes").items()) m.emplace_back("bytes_" + level, bytes);
    const json& config = report.at("config");
    const double seconds = totals.at("seconds").get<double>();
    if (config.contains("cost_per_hour_usd") && config["cost_per_hour_usd"].is_number())
        m.emplace_back(kCost, cost_per_million_inferences_usd(seconds, config["cost_per_hour_usd"].get<double>()));
    if (config.contains("tdp_w") && config["tdp_w"].is_number())
        m.emplace_back(kEnergy, energy_per_inference_j_upper_bound(seconds, config["tdp_w"].get<double>()));
    return m;
}

json report_totals(const json& report) {
    json config = json::object();
    for (const char* key : {"cost_per_hour_usd", "tdp_w"})
        if (report.at("config").contains(key)) config[key] = report.at("config").at(key);
    return {{"totals", report.at("totals")}, {"config", config}};
}

SweepResults collect_results(const SweepPlan& plan, const std::string& dir, const std::vector<Objective>& objectives) {
    SweepResults results;
    results.objectives = objectives;
    std::map<std::string, SweepRow> by_hash;  // identical points share one file and one row content
    for (const SweepPoint& p : plan.points) {
        auto [it, fresh] = by_hash.try_emplace(p.hash);
        SweepRow& row = it->second;
        if (!fresh) continue;
        std::error_code ec;
        const std::string store = plan.store_for(dir);
        const std::string file = point_file(store, p.hash);
        if (fs::exists(file, ec)) {
            try {
                // The totals file, when the point's child wrote one, holds the same totals in a
                // few hundred bytes instead of the whole report.
                const std::string totals = totals_file(store, p.hash);
                row.metrics = report_metrics(fs::exists(totals, ec) ? json::parse(read_whole_file(totals))
                                                                    : read_report_without_ops(file));
                row.status = "ok";
            } catch (const std::exception& e) {
                row.status = "failed";
                row.message = file + ": unreadable point file: " + e.what();
            }
        } else if (fs::exists(failure_file(dir, p.hash), ec)) {
            row.status = "failed";
            try {
                const json f = json::parse(read_whole_file(failure_file(dir, p.hash)));
                row.exit_code = f.at("exit_code").get<int>();
                row.message = f.at("message").get<std::string>();
            } catch (const std::exception& e) {
                row.message = failure_file(dir, p.hash) + ": unreadable failure record: " + e.what();
            }
        } else {
            row.status = "missing";
        }
    }
    // Columns: the fixed metrics, then every share and byte column any point has, in a stable
    // order (shares in bound order, bytes by name), then cost and energy.
    std::vector<std::string> shares, bytes;
    bool cost = false, energy = false;
    for (const auto& [hash, row] : by_hash)
        for (const auto& [name, value] : row.metrics) {
            if (name.rfind("share_", 0) == 0 && std::find(shares.begin(), shares.end(), name) == shares.end()) shares.push_back(name);
            if (name.rfind("bytes_", 0) == 0 && std::find(bytes.begin(), bytes.end(), name) == bytes.end()) bytes.push_back(name);
            cost |= name == kCost;
            energy |= name == kEnergy;
        }
    auto bound_rank = [](const std::string& share) {
        const auto it = std::find(kBoundOrder.begin(), kBoundOrder.end(), share.substr(6));
        return static_cast<std::size_t>(it - kBoundOrder.begin());
    };
    std::sort(shares.begin(), shares.end(), [&](const std::string& a, const std::string& b) {
        return std::make_pair(bound_rank(a), a) < std::make_pair(bound_rank(b), b);
    });
    std::sort(bytes.begin(), bytes.end());
    results.metric_columns = kFixedMetrics;
    results.metric_columns.insert(results.metric_columns.end(), shares.begin(), shares.end());
    results.metric_columns.insert(results.metric_columns.end(), bytes.begin(), bytes.end());
    if (cost) results.metric_columns.push_back(kCost);
    if (energy) results.metric_columns.push_back(kEnergy);

    for (const SweepPoint& p : plan.points) {
        results.rows.push_back(by_hash.at(p.hash));
        SweepRow& row = results.rows.back();
        (row.status == "ok" ? results.ok : row.status == "failed" ? results.failed : results.missing)++;
        if (row.status != "ok") continue;
        // A bound or level a point never touched held 0 of its time or bytes (not "unknown").
        for (const std::string& c : results.metric_columns)
            if ((c.rfind("share_", 0) == 0 || c.rfind("bytes_", 0) == 0) && !row.metric(c))
                row.metrics.emplace_back(c, c[0] == 's' ? json(0.0) : json(0));
        // Numeric axis values can be objectives too (e.g. a smaller MXU as a cheaper design).
        for (const Objective& o : objectives)
            for (std::size_t a = 0; a < plan.axis_names.size(); ++a)
                if (o.metric == plan.axis_names[a] && !row.metric(o.metric)) {
                    char* end = nullptr;
                    const double v = std::strtod(p.axis_values[a].c_str(), &end);
                    if (!p.axis_values[a].empty() && *end == '\0') row.metrics.emplace_back(o.metric, v);
                }
    }
    if (!objectives.empty()) {
        // Points lacking an objective (e.g. no price in the config) cannot be placed on the front.
        std::vector<std::size_t> candidates;
        for (std::size_t i = 0; i < results.rows.size(); ++i) {
            const SweepRow& r = results.rows[i];
            bool complete = r.status == "ok";
            for (const Objective& o : objectives) complete = complete && r.metric(o.metric) != nullptr;
            if (complete) candidates.push_back(i);
        }
        for (std::size_t i : candidates) {
            bool dominated = false;
            for (std::size_t j : candidates)
                if (j != i && dominates(results.rows[j], results.rows[i], objectives)) {
                    dominated = true;
                    break;
                }
            results.rows[i].pareto = !dominated;
        }
    }
    return results;
}

void write_results_csv(std::ostream& out, const SweepPlan& plan, const SweepResults& results) {
    out << "point,config,trace";
    for (const std::string& p : plan.trace_param_names) out << "," << csv_field(p);
    for (const std::string& a : plan.axis_names) out << "," << csv_field(a);
    out << ",status";
    for (const std::string& m : results.metric_columns) out << "," << m;
    if (!results.objectives.empty()) out << ",pareto";
    out << ",hash,exit_code,message\n";
    for (std::size_t i = 0; i < plan.points.size(); ++i) {
        const SweepPoint& p = plan.points[i];
        const SweepRow& r = results.rows[i];
        out << p.index << "," << csv_field(p.config_label) << "," << csv_field(p.trace_label);
        for (const std::string& v : p.trace_params) out << "," << csv_field(v);
        for (const std::string& v : p.axis_values) out << "," << csv_field(v);
        out << "," << r.status;
        for (const std::string& m : results.metric_columns) {
            out << ",";
            if (const json* v = r.metric(m)) out << number_text(*v);
        }
        if (!results.objectives.empty()) out << "," << (r.pareto ? 1 : 0);
        out << "," << p.hash << "," << (r.exit_code ? std::to_string(*r.exit_code) : "") << "," << csv_field(r.message)
            << "\n";
    }
}

json summary_json(const SweepPlan& plan, const SweepResults& results) {
    auto describe = [&](std::size_t i) {
        const SweepPoint& p = plan.points[i];
        json d = {{"point", p.index}, {"config", p.config_label}, {"trace", p.trace_label}, {"hash", p.hash}};
        json axes = json::object(), params = json::object();
        for (std::size_t a = 0; a < plan.axis_names.size(); ++a) axes[plan.axis_names[a]] = p.axis_values[a];
        for (std::size_t t = 0; t < plan.trace_param_names.size(); ++t)
            if (!p.trace_params[t].empty()) params[plan.trace_param_names[t]] = p.trace_params[t];
        d["axes"] = axes;
        if (!params.empty()) d["trace_params"] = params;
        return d;
    };
    json s;
    s["schema"] = kSweepSummarySchema;
    s["name"] = plan.name;
    s["spec"] = plan.spec_file;
    s["points"] = plan.points.size();
    s["unique_points"] = plan.unique_hashes().size();
    s["ok"] = results.ok;
    s["failed"] = results.failed;
    s["missing"] = results.missing;
    s["columns"] = results.metric_columns;
    json objectives = json::array();
    for (const Objective& o : results.objectives)
        objectives.push_back({{"metric", o.metric}, {"direction", o.maximize ? "max" : "min"}});
    s["objectives"] = objectives;
    json pareto = json::array();
    for (std::size_t i = 0; i < results.rows.size(); ++i) {
        if (!results.rows[i].pareto) continue;
        json d = describe(i);
        for (const Objective& o : results.objectives) d["objectives"][o.metric] = *results.rows[i].metric(o.metric);
        pareto.push_back(std::move(d));
    }
    s["pareto"] = pareto;
    // The best point for each headline metric (first in plan order on ties).
    json best = json::object();
    for (const auto& [metric, maximize] : std::vector<std::pair<std::string, bool>>{
             {"seconds", false}, {"utilization", true}, {"cost_per_million_inferences_usd", false},
             {"energy_per_inference_j_upper_bound", false}}) {
        std::optional<std::size_t> at;
        for (std::size_t i = 0; i < results.rows.size(); ++i) {
            const json* v = results.rows[i].status == "ok" ? results.rows[i].metric(metric) : nullptr;
            if (!v) continue;
            const double x = v->get<double>();
            if (!at || (maximize ? x > results.rows[*at].metric(metric)->get<double>()
                                 : x < results.rows[*at].metric(metric)->get<double>()))
                at = i;
        }
        if (at) {
            json d = describe(*at);
            d["value"] = *results.rows[*at].metric(metric);
            best[metric] = d;
        }
    }
    s["best"] = best;
    json failures = json::array();
    for (std::size_t i = 0; i < results.rows.size(); ++i)
        if (results.rows[i].status == "failed") {
            json d = describe(i);
            if (results.rows[i].exit_code) d["exit_code"] = *results.rows[i].exit_code;
            d["message"] = results.rows[i].message;
            failures.push_back(std::move(d));
        }
    s["failures"] = failures;
    return s;
}

SweepResults write_sweep_results(const SweepPlan& plan, const std::string& dir, const std::vector<Objective>& objectives) {
    SweepResults results = collect_results(plan, dir, objectives);
    std::ostringstream csv;
    write_results_csv(csv, plan, results);
    write_file_atomically((fs::path(dir) / "results.csv").string(), csv.str());
    write_file_atomically((fs::path(dir) / "summary.json").string(), summary_json(plan, results).dump(2) + "\n");
    return results;
}

}  // namespace accelsim
