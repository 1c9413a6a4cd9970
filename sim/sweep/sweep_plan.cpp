#include "sim/sweep/sweep_plan.h"

#include <filesystem>
#include <map>
#include <set>

#include "sim/config/config_loader.h"
#include "sim/sweep/sha256.h"
#include "sim/trace/import_command.h"

namespace accelsim {

namespace {

using nlohmann::json;

// load_config names the origin of an override "--set"; in a sweep the origin is the spec's key.
std::string without_set_prefix(std::string message) {
    const std::string prefix = "--set: ";
    if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
    return message;
}

std::string key_of(const std::string& assignment) { return assignment.substr(0, assignment.find('=')); }

ChipConfig load_checked(const SweepSpec& spec, const std::string& config_path, const std::vector<std::string>& overrides,
                        const std::string& key) {
    try {
        return load_config(config_path, overrides);
    } catch (const InputError& e) {
        throw InputError(spec.file + ": " + key + ": " + without_set_prefix(e.what()) +
                         (spec.config_paths.size() > 1 ? " (base config " + config_path + ")" : ""));
    }
}

const char* format_name(TraceFormat f) {
    switch (f) {
        case TraceFormat::accelsim: return "accelsim";
        case TraceFormat::scalesim: return "scalesim";
        case TraceFormat::onnx: return "onnx";
        case TraceFormat::pytorch: return "pytorch";
        case TraceFormat::automatic: break;
    }
    return "auto";
}

}  // namespace

std::vector<std::string> SweepPlan::unique_hashes() const {
    std::vector<std::string> hashes;
    std::set<std::string> seen;
    for (const SweepPoint& p : points)
        if (seen.insert(p.hash).second) hashes.push_back(p.hash);
    return hashes;
}

std::string point_hash(const json& effective_config, const std::string& trace_sha256, const std::string& trace_format,
                       const ImportOptions& import) {
    std::string import_line;
    for (const std::string& word : import_option_words(import)) import_line += (import_line.empty() ? "" : " ") + word;
    if (!import_line.empty()) import_line = "import " + import_line + "\n";
    return sha256_hex(std::string("accelsim-sweep-point/1\nversion ") + ACCELSIM_VERSION + "\ntrace " + trace_sha256 +
                      "\nformat " + trace_format + "\n" + import_line + "config " + effective_config.dump() + "\n");
}

SweepPlan plan_sweep(const SweepSpec& spec) {
    SweepPlan plan;
    plan.spec_file = spec.file;
    plan.name = spec.name;
    plan.objectives = spec.objectives;
    plan.trace_param_names = spec.trace_param_names;
    for (const SweepAxis& a : spec.axes) plan.axis_names.push_back(a.name);

    // Each fixed value and each axis value alone first, so an error names the exact key.
    std::vector<std::string> labels;
    std::map<std::string, int> label_count;
    for (const std::string& config_path : spec.config_paths) {
        for (const std::string& assignment : spec.fixed_overrides)
            load_checked(spec, config_path, {assignment}, key_of(assignment));
        const ChipConfig base = load_checked(spec, config_path, spec.fixed_overrides, "configs");
        const int n = ++label_count[base.name];
        labels.push_back(n == 1 ? base.name : base.name + "#" + std::to_string(n));
        for (const SweepAxis& axis : spec.axes) {
            std::vector<json> checked = axis.levels;
            if (axis.continuous) checked = {axis.from, axis.to};
            for (const json& level : checked)
                for (const std::string& key : axis.keys) {
                    std::vector<std::string> overrides = spec.fixed_overrides;
                    const json value = axis.integer && level.is_number_float() ? json(static_cast<std::int64_t>(level.get<double>())) : level;
                    overrides.push_back(key + "=" + value_text(value));
                    load_checked(spec, config_path, overrides, key);
                }
        }
    }

    const std::vector<std::vector<json>> combos = axis_points(spec);
    for (std::size_t c = 0; c < spec.config_paths.size(); ++c) {
        for (std::size_t a = 0; a < combos.size(); ++a) {
            std::vector<std::string> overrides = spec.fixed_overrides;
            std::vector<std::string> values;
            std::string description;
            for (std::size_t i = 0; i < spec.axes.size(); ++i) {
                const std::string text = value_text(combos[a][i]);
                values.push_back(text);
                description += (description.empty() ? "" : ", ") + spec.axes[i].name + "=" + text;
                for (const std::string& key : spec.axes[i].keys) overrides.push_back(key + "=" + text);
            }
            const ChipConfig config =
                load_checked(spec, spec.config_paths[c], overrides, "axes (point " + description + ")");
            for (std::size_t t = 0; t < spec.traces.size(); ++t) {
                const SweepTrace& trace = spec.traces[t];
                SweepPoint p;
                p.index = plan.points.size();
                p.config_label = labels[c];
                p.config_path = spec.config_paths[c];
                p.trace_label = trace.label;
                for (const std::string& name : spec.trace_param_names) {
                    const auto it = trace.params.find(name);
                    p.trace_params.push_back(it == trace.params.end() ? "" : it->second);
                }
                p.axis_values = values;
                p.overrides = overrides;
                p.trace_sha256 = trace.sha256;
                p.trace_path = trace.generated() ? "" : trace.path;
                p.trace_format = format_name(trace.format);
                p.import = trace.import;
                p.hash = point_hash(config.effective, trace.sha256, p.trace_format, p.import);
                plan.points.push_back(std::move(p));
            }
        }
    }
    for (const SweepTrace& t : spec.traces)
        if (t.generated()) plan.generated_traces.emplace_back(t.sha256, t.text);
    return plan;
}

std::string generated_trace_path(const std::string& dir, const std::string& sha256) {
    return (std::filesystem::path(dir) / "traces" / (sha256.substr(0, 16) + ".trace")).string();
}

std::string point_trace_path(const SweepPoint& point, const std::string& dir) {
    return point.trace_path.empty() ? generated_trace_path(dir, point.trace_sha256) : point.trace_path;
}

json plan_to_json(const SweepPlan& plan) {
    json j;
    j["schema"] = kSweepPlanSchema;
    j["spec"] = plan.spec_file;
    j["name"] = plan.name;
    j["axes"] = plan.axis_names;
    j["trace_params"] = plan.trace_param_names;
    j["objectives"] = plan.objectives;
    j["store"] = plan.store;
    json points = json::array();
    for (const SweepPoint& p : plan.points)
        points.push_back({{"index", p.index},
                          {"config", p.config_label},
                          {"config_file", p.config_path},
                          {"trace", p.trace_label},
                          {"trace_params", p.trace_params},
                          {"axis_values", p.axis_values},
                          {"overrides", p.overrides},
                          {"trace_sha256", p.trace_sha256},
                          {"trace_file", p.trace_path},
                          {"trace_format", p.trace_format},
                          {"hash", p.hash}});
    j["points"] = std::move(points);
    return j;
}

SweepPlan plan_from_json(const json& j, const std::string& file) {
    if (!j.is_object() || j.value("schema", "") != kSweepPlanSchema)
        throw InputError(file + ": not a sweep plan (schema " + kSweepPlanSchema + ")");
    try {
        SweepPlan plan;
        plan.spec_file = j.at("spec").get<std::string>();
        plan.name = j.at("name").get<std::string>();
        plan.axis_names = j.at("axes").get<std::vector<std::string>>();
        plan.trace_param_names = j.at("trace_params").get<std::vector<std::string>>();
        plan.objectives = j.at("objectives").get<std::vector<std::string>>();
        plan.store = j.value("store", "");
        for (const json& q : j.at("points")) {
            SweepPoint p;
            p.index = q.at("index").get<std::size_t>();
            p.config_label = q.at("config").get<std::string>();
            p.config_path = q.at("config_file").get<std::string>();
            p.trace_label = q.at("trace").get<std::string>();
            p.trace_params = q.at("trace_params").get<std::vector<std::string>>();
            p.axis_values = q.at("axis_values").get<std::vector<std::string>>();
            p.overrides = q.at("overrides").get<std::vector<std::string>>();
            p.trace_sha256 = q.at("trace_sha256").get<std::string>();
            p.trace_path = q.at("trace_file").get<std::string>();
            p.trace_format = q.at("trace_format").get<std::string>();
            p.hash = q.at("hash").get<std::string>();
            if (p.axis_values.size() != plan.axis_names.size() || p.trace_params.size() != plan.trace_param_names.size())
                throw InputError(file + ": point " + std::to_string(p.index) + " does not match the plan's columns");
            plan.points.push_back(std::move(p));
        }
        return plan;
    } catch (const json::exception& e) {
        throw InputError(file + ": malformed sweep plan: " + e.what());
    }
}

}  // namespace accelsim
