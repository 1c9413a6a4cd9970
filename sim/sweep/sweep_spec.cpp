#include "sim/sweep/sweep_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/config/config_schema.h"
#include "sim/json_input_error.h"
#include "sim/sweep/sha256.h"
#include "sim/tracegen/trace_command.h"

namespace accelsim {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ordered = nlohmann::ordered_json;  // axes and parameters keep the order the user wrote

constexpr std::size_t kMaxLevels = 100000;
constexpr std::int64_t kMaxPoints = 1000000;

const std::vector<std::string> kSpecKeys = {"name",  "description", "configs", "traces",    "set",
                                            "axes",  "mode",        "points",  "seed",      "objectives"};
const std::vector<std::string> kAxisKeys = {"keys", "values", "from", "to", "mul", "add", "log"};
const std::vector<std::string> kModes = {"grid", "zip", "random", "lhs"};

class SpecErrors {
  public:
    explicit SpecErrors(std::string file) : file_(std::move(file)) {}
    [[noreturn]] void fail(const std::string& key, const std::string& message) const {
        throw InputError(file_ + ": " + key + ": " + message);
    }
    void check_keys(const std::string& where, const ordered& object, const std::vector<std::string>& allowed) const {
        for (const auto& [key, value] : object.items()) {
            if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
            std::string best;
            std::size_t best_distance = 3;
            for (const std::string& a : allowed)
                if (const std::size_t d = edit_distance(key, a); d < best_distance) best_distance = d, best = a;
            std::string valid;
            for (const std::string& a : allowed) valid += (valid.empty() ? "" : ", ") + a;
            fail(where.empty() ? key : where + "." + key,
                 "unknown key '" + key + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)") +
                     " (valid keys: " + valid + ")");
        }
    }
    const std::string& file() const { return file_; }

  private:
    std::string file_;
};

std::string read_text(const std::string& path, const std::string& what) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw InputError(what + ": cannot open");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in && !in.eof()) throw InputError(what + ": cannot read");
    return text.str();
}

ordered parse_spec_json(const std::string& file, const std::string& text) {
    // nlohmann keeps the last of duplicate keys silently; a strict reader reports them.
    std::vector<std::set<std::string>> open_objects;
    const ordered::parser_callback_t check_duplicates = [&](int, ordered::parse_event_t event, ordered& parsed) {
        if (event == ordered::parse_event_t::object_start) open_objects.emplace_back();
        if (event == ordered::parse_event_t::object_end) open_objects.pop_back();
        if (event == ordered::parse_event_t::key && !open_objects.back().insert(parsed.get<std::string>()).second)
            throw InputError(file + ": " + parsed.get<std::string>() + ": duplicate key");
        return true;
    };
    try {
        return ordered::parse(text, check_duplicates);
    } catch (const ordered::exception& e) {
        throw_json_input_error(file, text, e);
    }
}

std::string resolve(const std::string& spec_file, const std::string& path) {
    if (fs::path(path).is_absolute()) return path;
    return (fs::path(spec_file).parent_path() / path).lexically_normal().string();
}

// Rounds a sampled number to 6 significant digits so that CSV values stay readable.
double readable(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::strtod(buf, nullptr);
}

json to_plain(const ordered& v) { return json::parse(v.dump()); }

// Levels of a list or a stepped range; continuous ranges set axis.continuous instead.
void read_levels(const SpecErrors& errors, const std::string& where, const ordered& v, SweepAxis& axis) {
    if (v.is_array()) {
        if (v.empty()) errors.fail(where, "an axis needs at least one value");
        for (const ordered& item : v) {
            if (!item.is_primitive() || item.is_null())
                errors.fail(where, "axis values must be numbers, strings or booleans, got " + item.dump());
            axis.levels.push_back(to_plain(item));
        }
        return;
    }
    if (!v.is_object())
        errors.fail(where, "expected a list of values or a range {\"from\", \"to\", \"mul\" or \"add\"}, got " + v.dump());
    errors.check_keys(where, v, kAxisKeys);
    if (v.contains("values")) {
        for (const char* k : {"from", "to", "mul", "add", "log"})
            if (v.contains(k)) errors.fail(where + "." + k, "give either \"values\" or a range, not both");
        read_levels(errors, where + ".values", v["values"], axis);
        return;
    }
    for (const char* k : {"from", "to"}) {
        if (!v.contains(k)) errors.fail(where, std::string("a range needs \"from\" and \"to\" (and \"mul\" or \"add\" for steps)"));
        if (!v[k].is_number()) errors.fail(where + "." + k, "expected a number, got " + v[k].dump());
    }
    const double from = v["from"].get<double>(), to = v["to"].get<double>();
    if (!(from <= to)) errors.fail(where, "\"from\" (" + v["from"].dump() + ") is larger than \"to\" (" + v["to"].dump() + ")");
    if (v.contains("mul") && v.contains("add")) errors.fail(where, "give \"mul\" or \"add\", not both");
    const bool integral = v["from"].is_number_integer() && v["to"].is_number_integer();
    if (v.contains("log") && !v["log"].is_boolean()) errors.fail(where + ".log", "expected true or false");
    if (!v.contains("mul") && !v.contains("add")) {
        axis.continuous = true;
        axis.from = from;
        axis.to = to;
        axis.log_scale = v.value("log", false);
        if (axis.log_scale && !(from > 0)) errors.fail(where + ".log", "a log-scale range needs \"from\" > 0");
        return;
    }
    if (v.contains("log")) errors.fail(where + ".log", "\"log\" applies to continuous ranges (no \"mul\" or \"add\")");
    const bool mul = v.contains("mul");
    const ordered& step = mul ? v["mul"] : v["add"];
    const std::string step_key = where + (mul ? ".mul" : ".add");
    if (!step.is_number()) errors.fail(step_key, "expected a number, got " + step.dump());
    const double s = step.get<double>();
    if (mul && !(s > 1)) errors.fail(step_key, "the factor must be larger than 1, got " + step.dump());
    if (mul && !(from > 0)) errors.fail(where + ".from", "a \"mul\" range needs \"from\" > 0");
    if (!mul && !(s > 0)) errors.fail(step_key, "the step must be positive, got " + step.dump());
    const bool integer_steps = integral && step.is_number_integer();
    // Each level is computed from `from` directly (not by accumulation) so rounding cannot drift;
    // `to` is included when a level lands on it within rounding.
    const double tolerance = 1e-9 * std::max(std::abs(from), std::abs(to));
    for (std::size_t i = 0;; ++i) {
        const double level = mul ? from * std::pow(s, static_cast<double>(i)) : from + s * static_cast<double>(i);
        if (level > to + tolerance) break;
        if (axis.levels.size() >= kMaxLevels) errors.fail(where, "the range has more than " + std::to_string(kMaxLevels) + " values");
        if (integer_steps)
            axis.levels.push_back(static_cast<std::int64_t>(std::llround(level)));
        else
            axis.levels.push_back(level);
    }
}

SweepAxis read_axis(const SpecErrors& errors, const std::string& name, const ordered& v) {
    SweepAxis axis;
    axis.name = name;
    const std::string where = "axes." + name;
    if (v.is_object() && v.contains("keys")) {
        const ordered& keys = v["keys"];
        if (!keys.is_array() || keys.empty())
            errors.fail(where + ".keys", "expected a non-empty list of config keys (--set paths)");
        for (const ordered& k : keys) {
            if (!k.is_string()) errors.fail(where + ".keys", "expected config key strings, got " + k.dump());
            axis.keys.push_back(k.get<std::string>());
        }
        ordered rest = v;
        rest.erase("keys");
        read_levels(errors, where, rest, axis);
    } else {
        axis.keys = {name};
        read_levels(errors, where, v, axis);
    }
    axis.integer = true;
    for (const std::string& k : axis.keys) {
        const KeySpec* spec = find_key(k);
        if (!spec || spec->type != KeyType::integer) axis.integer = false;
    }
    return axis;
}

// Expands {"bert": {"size": "base", "seq": [128, 512]}} into one trace per parameter combination.
void read_generator(const SpecErrors& errors, const std::string& where, const ordered& v, SweepSpec& spec) {
    if (!v.is_object() || v.size() != 1)
        errors.fail(where, "a generated trace is one object {\"MODEL\": {parameters}}, e.g. {\"bert\": {\"size\": \"base\"}}");
    const std::string model = v.begin().key();
    const ordered& params = v.begin().value();
    if (!params.is_object()) errors.fail(where + "." + model, "expected an object of generator parameters");
    std::vector<std::pair<std::string, std::vector<json>>> choices;
    for (const auto& [key, value] : params.items()) {
        SweepAxis values;
        if (value.is_primitive() && !value.is_null())
            values.levels.push_back(to_plain(value));
        else
            read_levels(errors, where + "." + model + "." + key, value, values);
        if (values.continuous) errors.fail(where + "." + model + "." + key, "generator parameters need explicit values or a stepped range");
        choices.emplace_back(key, values.levels);
        if (std::find(spec.trace_param_names.begin(), spec.trace_param_names.end(), key) == spec.trace_param_names.end())
            spec.trace_param_names.push_back(key);
    }
    std::vector<std::size_t> at(choices.size(), 0);
    for (;;) {
        SweepTrace t;
        t.generator_args = {model};
        t.label = model;
        for (std::size_t i = 0; i < choices.size(); ++i) {
            const json& value = choices[i].second[at[i]];
            const std::string text = value_text(value);
            t.params[choices[i].first] = text;
            t.label += " " + choices[i].first + "=" + text;
            if (value.is_boolean()) {  // a switch such as --training
                if (value.get<bool>()) t.generator_args.push_back("--" + choices[i].first);
            } else {
                t.generator_args.push_back("--" + choices[i].first);
                t.generator_args.push_back(text);
            }
        }
        std::ostringstream text, err;
        if (run_trace_command(t.generator_args, text, err) != 0) {
            std::string message = err.str();
            while (!message.empty() && message.back() == '\n') message.pop_back();
            errors.fail(where + "." + model, message);
        }
        t.text = text.str();
        t.sha256 = sha256_hex(t.text);
        t.format = TraceFormat::accelsim;
        spec.traces.push_back(std::move(t));
        std::size_t i = choices.size();
        while (i > 0 && ++at[i - 1] == choices[i - 1].second.size()) at[--i] = 0;
        if (i == 0) break;
    }
}

// splitmix64: a small, fully specified generator, so samples are the same on every platform.
struct SampleRng {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(uniform() * static_cast<double>(n)); }
};

// The value of `axis` at quantile u in [0, 1).
json sample(const SweepAxis& axis, double u) {
    if (!axis.continuous) return axis.levels[std::min(axis.levels.size() - 1, static_cast<std::size_t>(u * static_cast<double>(axis.levels.size())))];
    const double v = axis.log_scale ? axis.from * std::pow(axis.to / axis.from, u) : axis.from + u * (axis.to - axis.from);
    if (axis.integer) return static_cast<std::int64_t>(std::llround(v));
    return readable(v);
}

}  // namespace

std::string value_text(const json& value) {
    if (value.is_string()) return value.get<std::string>();
    return value.dump();
}

SweepSpec load_sweep_spec(const std::string& path, const ImportOptions& import_options) {
    SweepSpec spec;
    spec.file = path;
    const SpecErrors errors(path);
    const ordered root = parse_spec_json(path, read_text(path, path));
    if (!root.is_object()) throw InputError(path + ": the top level must be a JSON object");
    errors.check_keys("", root, kSpecKeys);

    spec.name = fs::path(path).stem().string();
    if (root.contains("name")) {
        if (!root["name"].is_string()) errors.fail("name", "expected a string");
        spec.name = root["name"].get<std::string>();
    }
    if (root.contains("description") && !root["description"].is_string()) errors.fail("description", "expected a string");

    if (!root.contains("configs")) errors.fail("configs", "missing: list the base config files (relative to the spec)");
    const ordered& configs = root["configs"];
    if (configs.is_string()) {
        spec.config_paths.push_back(resolve(path, configs.get<std::string>()));
    } else if (configs.is_array() && !configs.empty()) {
        for (const ordered& c : configs) {
            if (!c.is_string()) errors.fail("configs", "expected config file paths, got " + c.dump());
            spec.config_paths.push_back(resolve(path, c.get<std::string>()));
        }
    } else {
        errors.fail("configs", "expected a config file path or a non-empty list of them");
    }
    for (const std::string& c : spec.config_paths) {
        std::error_code ec;
        if (!fs::is_regular_file(c, ec)) errors.fail("configs", c + ": cannot open");
    }

    if (!root.contains("traces")) errors.fail("traces", "missing: list trace files or generators such as {\"bert\": {\"size\": \"base\"}}");
    ordered traces = root["traces"];
    if (!traces.is_array()) traces = ordered::array({traces});
    if (traces.empty()) errors.fail("traces", "at least one trace is needed");
    for (std::size_t i = 0; i < traces.size(); ++i) {
        const std::string where = "traces[" + std::to_string(i) + "]";
        if (traces[i].is_string()) {
            SweepTrace t;
            t.label = traces[i].get<std::string>();
            t.path = resolve(path, t.label);
            const std::string text = read_text(t.path, path + ": " + where + ": " + t.path);
            t.sha256 = sha256_hex(text);
            if (is_import_format(resolve_trace_format(t.path, t.format))) t.import = import_options;
            // Checked once here so a bad trace stops the sweep before any point (bf16: dtype-less
            // lines take the config default, which does not change what parses).
            try {
                load_trace(t.path, DType::bf16, t.format, t.import);
            } catch (const InputError& e) {
                errors.fail(where, e.what());
            }
            spec.traces.push_back(std::move(t));
        } else {
            read_generator(errors, where, traces[i], spec);
        }
    }
    const bool any_import = std::any_of(spec.traces.begin(), spec.traces.end(), [](const SweepTrace& t) {
        return !t.generated() && is_import_format(resolve_trace_format(t.path, t.format));
    });
    if (!any_import && (!import_options.dims.empty() || import_options.strict))
        throw InputError(path + ": traces: --dim and --strict apply to ONNX and PyTorch traces, and the spec has none");
    for (SweepTrace& t : spec.traces)
        for (const std::string& p : spec.trace_param_names)
            if (!t.params.count(p) && t.generated()) t.params[p] = "";

    if (root.contains("set")) {
        const ordered& set = root["set"];
        if (!set.is_object()) errors.fail("set", "expected an object of config keys and values, e.g. {\"memory\": \"ideal\"}");
        for (const auto& [key, value] : set.items()) {
            if (!value.is_primitive() || value.is_null()) errors.fail(key, "expected a number, string or boolean");
            spec.fixed_overrides.push_back(key + "=" + value_text(to_plain(value)));
        }
    }

    if (root.contains("mode")) {
        if (!root["mode"].is_string()) errors.fail("mode", "expected one of grid, zip, random, lhs");
        spec.mode = root["mode"].get<std::string>();
        if (std::find(kModes.begin(), kModes.end(), spec.mode) == kModes.end())
            errors.fail("mode", "'" + spec.mode + "' is not a mode (allowed: grid, zip, random, lhs)");
    }
    const bool sampled = spec.mode == "random" || spec.mode == "lhs";
    if (root.contains("points")) {
        if (!sampled) errors.fail("points", "\"points\" applies to modes random and lhs");
        if (!root["points"].is_number_integer() || root["points"].get<std::int64_t>() < 1 ||
            root["points"].get<std::int64_t>() > kMaxPoints)
            errors.fail("points", "expected an integer in [1, " + std::to_string(kMaxPoints) + "], got " + root["points"].dump());
        spec.samples = root["points"].get<std::int64_t>();
    } else if (sampled) {
        errors.fail("points", "mode " + spec.mode + " needs \"points\": the number of points to draw");
    }
    if (root.contains("seed")) {
        if (!sampled) errors.fail("seed", "\"seed\" applies to modes random and lhs");
        if (!root["seed"].is_number_unsigned()) errors.fail("seed", "expected a non-negative integer, got " + root["seed"].dump());
        spec.seed = root["seed"].get<std::uint64_t>();
    }

    if (root.contains("axes")) {
        const ordered& axes = root["axes"];
        if (!axes.is_object()) errors.fail("axes", "expected an object: config key -> values or range");
        for (const auto& [name, value] : axes.items()) spec.axes.push_back(read_axis(errors, name, value));
    }
    std::set<std::string> seen_keys;
    for (const SweepAxis& a : spec.axes) {
        for (const std::string& k : a.keys)
            if (!seen_keys.insert(k).second) errors.fail(k, "set by two axes");
        if (a.continuous && !sampled)
            errors.fail("axes." + a.name, "a range without \"mul\" or \"add\" is continuous: it needs mode random or lhs");
        if (std::find(spec.trace_param_names.begin(), spec.trace_param_names.end(), a.name) != spec.trace_param_names.end() ||
            a.name == "config" || a.name == "trace")
            errors.fail("axes." + a.name, "the name is already a column (config, trace or a generator parameter)");
    }
    if (spec.mode == "zip")
        for (const SweepAxis& a : spec.axes)
            if (a.levels.size() != spec.axes.front().levels.size())
                errors.fail("axes." + a.name, "mode zip pairs the axes' values: every axis needs " +
                                                  std::to_string(spec.axes.front().levels.size()) + " values (as axes." +
                                                  spec.axes.front().name + "), this one has " + std::to_string(a.levels.size()));

    if (root.contains("objectives")) {
        const ordered& o = root["objectives"];
        if (!o.is_array() || o.size() < 2) errors.fail("objectives", "expected a list of two or more metrics, e.g. [\"latency\", \"cost\"]");
        for (const ordered& m : o) {
            if (!m.is_string()) errors.fail("objectives", "expected metric names");
            spec.objectives.push_back(m.get<std::string>());
        }
    }
    return spec;
}

std::vector<std::vector<json>> axis_points(const SweepSpec& spec) {
    std::vector<std::vector<json>> points;
    const std::size_t n_axes = spec.axes.size();
    if (spec.mode == "grid") {
        std::vector<std::size_t> at(n_axes, 0);
        for (;;) {
            std::vector<json> p;
            for (std::size_t i = 0; i < n_axes; ++i) p.push_back(spec.axes[i].levels[at[i]]);
            points.push_back(std::move(p));
            if (static_cast<std::int64_t>(points.size()) > kMaxPoints)
                throw InputError(spec.file + ": axes: the grid has more than " + std::to_string(kMaxPoints) + " points");
            std::size_t i = n_axes;
            while (i > 0 && ++at[i - 1] == spec.axes[i - 1].levels.size()) at[--i] = 0;
            if (i == 0) break;
        }
    } else if (spec.mode == "zip") {
        const std::size_t n = n_axes ? spec.axes.front().levels.size() : 1;
        for (std::size_t j = 0; j < n; ++j) {
            std::vector<json> p;
            for (const SweepAxis& a : spec.axes) p.push_back(a.levels[j]);
            points.push_back(std::move(p));
        }
    } else {
        const std::size_t n = static_cast<std::size_t>(spec.samples);
        SampleRng rng{spec.seed};
        points.assign(n, std::vector<json>(n_axes));
        for (std::size_t i = 0; i < n_axes; ++i) {
            if (spec.mode == "random") {
                for (std::size_t j = 0; j < n; ++j) points[j][i] = sample(spec.axes[i], rng.uniform());
            } else {
                // Latin hypercube: each axis's [0, 1) is cut into n strata, each stratum used by
                // exactly one point (a random permutation), at a random place inside it.
                std::vector<std::size_t> stratum(n);
                for (std::size_t j = 0; j < n; ++j) stratum[j] = j;
                for (std::size_t j = n; j > 1; --j) std::swap(stratum[j - 1], stratum[rng.below(j)]);
                for (std::size_t j = 0; j < n; ++j)
                    points[j][i] = sample(spec.axes[i], (static_cast<double>(stratum[j]) + rng.uniform()) / static_cast<double>(n));
            }
        }
    }
    return points;
}

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> parts;
    std::string part;
    for (char c : text) {
        if (c == ',') {
            if (!part.empty()) parts.push_back(part);
            part.clear();
        } else if (c != ' ') {
            part += c;
        }
    }
    if (!part.empty()) parts.push_back(part);
    return parts;
}

}  // namespace accelsim
