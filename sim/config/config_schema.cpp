#include "sim/config/config_schema.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <type_traits>
#include <variant>

#include "sim/engine/chip_registry.h"
#include "sim/input_error.h"

namespace accelsim {
namespace {

using nlohmann::json;
using Apply = std::function<void(ChipConfig&, const json&)>;


// Setters of the chip-level keys: one per typed field, built from member pointers so a table
// row names its field once.
template <class T>
Apply top_field(T ChipConfig::*field) {
    return [field](ChipConfig& c, const json& v) { c.*field = v.get<T>(); };
}

KeySpec make(std::string path, KeyType type, json default_value, std::string doc,
             Apply apply = {}) {
    KeySpec k;
    k.path = std::move(path);
    k.type = type;
    k.default_value = std::move(default_value);
    k.doc = std::move(doc);
    k.apply = std::move(apply);
    return k;
}
KeySpec section(std::string path, std::string doc,
                std::optional<std::string> only_for = std::nullopt) {
    KeySpec k = make(std::move(path), KeyType::section, nullptr, std::move(doc));
    k.only_for = only_for;
    return k;
}
KeySpec integer(std::string path, double min, double max, json def, std::string doc, Apply apply) {
    KeySpec k =
        make(std::move(path), KeyType::integer, std::move(def), std::move(doc), std::move(apply));
    k.min = min;
    k.max = max;
    return k;
}
KeySpec number(std::string path, double min, double max, json def, std::string doc, Apply apply,
               bool min_exclusive = false) {
    KeySpec k =
        make(std::move(path), KeyType::number, std::move(def), std::move(doc), std::move(apply));
    k.min = min;
    k.max = max;
    k.min_exclusive = min_exclusive;
    return k;
}
KeySpec positive(std::string path, double max, json def, std::string doc, Apply apply) {
    return number(std::move(path), 0, max, std::move(def), std::move(doc), std::move(apply), true);
}
KeySpec choice(std::string path, std::vector<std::string> choices, json def, std::string doc,
               Apply apply) {
    KeySpec k =
        make(std::move(path), KeyType::choice, std::move(def), std::move(doc), std::move(apply));
    k.choices = std::move(choices);
    return k;
}

KeyType key_type_of(ParamType t) {
    switch (t) {
        case ParamType::integer: return KeyType::integer;
        case ParamType::number: return KeyType::number;
        case ParamType::boolean: return KeyType::boolean;
        case ParamType::choice: return KeyType::choice;
        case ParamType::section: return KeyType::section;
        case ParamType::number_map: return KeyType::number_map;
    }
    return KeyType::section;
}

json json_of(const ParamValue& v) {
    return std::visit(
        [](const auto& x) -> json {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, NumberMap>) {
                json object = json::object();
                for (const auto& [name, number] : x) object[name] = number;
                return object;
            } else {
                return x;
            }
        },
        v);
}

// A validated JSON value in the form the model's table takes it.
ParamValue param_value_of(ParamType type, const json& v) {
    switch (type) {
        case ParamType::integer: return v.get<std::int64_t>();
        case ParamType::number: return v.get<double>();
        case ParamType::boolean: return v.get<bool>();
        case ParamType::choice: return v.get<std::string>();
        case ParamType::number_map: {
            NumberMap entries;
            for (const auto& [name, number] : v.items()) entries.emplace_back(name, number.get<double>());
            return entries;
        }
        case ParamType::section: break;
    }
    return {};
}

// Adds a model's table under `prefix`: the section row, then one row per table entry, each
// filling the ChipConfig member that holds the model's struct.
template <class P, class Section>
void mount_keys(std::vector<KeySpec>& s, const std::string& prefix, std::optional<std::string> only_for,
                const ParamTable<P>& table, Section ChipConfig::*member, bool keys_only_for = false) {
    for (const ParamSpec<P>& p : table.specs()) {
        KeySpec k = make(prefix + "." + p.key, key_type_of(p.type),
                         p.type == ParamType::section ? json(nullptr) : json_of(p.default_value), p.doc);
        k.min = p.min;
        k.max = p.max;
        k.min_exclusive = p.min_exclusive;
        k.zero_allowed = p.zero_allowed;
        k.choices = p.choices;
        if (p.type == ParamType::section || keys_only_for) k.only_for = only_for;
        if (p.set)
            k.apply = [set = p.set, type = p.type, member](ChipConfig& c, const json& v) {
                set(c.*member, param_value_of(type, v));
            };
        s.push_back(std::move(k));
    }
}

template <class P, class Section>
void mount(std::vector<KeySpec>& s, const std::string& prefix, std::string doc, std::optional<std::string> only_for,
           const ParamTable<P>& table, Section ChipConfig::*member) {
    s.push_back(section(prefix, std::move(doc), only_for));
    mount_keys(s, prefix, only_for, table, member);
}

std::vector<KeySpec> build_schema() {
    const ChipConfig d;  // the struct's defaults are the documented defaults
    std::vector<KeySpec> s;

    // ---- top level ----
    s.push_back(make("name", KeyType::string, nullptr,
                     "Chip name shown in reports. Default: the config file name without `.json`.",
                     top_field(&ChipConfig::name)));
    KeySpec kind =
        choice("kind", chip_kinds(), nullptr,
               "Chip family: `systolic` (TPU-like: tpu, compiler, mxu sections) or `simt` "
               "(GPU-like: gpu, sm sections).",
               [](ChipConfig& c, const json& v) {
                   c.kind = v.get<std::string>();
               });
    kind.required = true;
    s.push_back(kind);
    s.push_back(make("description", KeyType::string, "", "Free text shown in reports.",
                     top_field(&ChipConfig::description)));
    s.push_back(
        make("extends", KeyType::string, nullptr,
             "Path of a base config, relative to this file; this file's keys are deep-merged "
             "over it. Not part of the effective config."));
    s.push_back(make("source", KeyType::free_form, nullptr,
                     "Citations: an object of strings (nested objects allowed), e.g. "
                     "`{\"mxu.rows\": \"Jouppi et al. 2017\"}`. Copied to reports unchanged."));
    // At least 1 MHz: a slower clock makes picosecond times of ordinary traces overflow.
    KeySpec clock = number("clock_mhz", 1, 10000, nullptr,
                           "Core clock in MHz (1 to 10000); every cycle count is in this clock.",
                           top_field(&ChipConfig::clock_mhz));
    clock.required = true;
    s.push_back(clock);
    s.push_back(number("sustained_clock_mhz", 0, 10000, nullptr,
                       "The clock the chip holds under sustained dense work at its power limit (`tdp_w`), "
                       "in MHz; 0: it holds `clock_mhz`. When set, every simulated cycle is at this clock "
                       "(times, bandwidths per cycle, host costs), while peak figures stay at `clock_mhz`.",
                       top_field(&ChipConfig::sustained_clock_mhz)));
    s.push_back(choice(
        "default_dtype", operand_dtype_names(), std::string(to_string(d.default_dtype)),
        "Operand dtype of trace ops that name none.", [](ChipConfig& c, const json& v) {
            c.default_dtype = *parse_operand_dtype(v.get<std::string>());
        }));
    s.push_back(
        choice("memory", {"ideal", "hierarchy"}, d.memory,
               "`hierarchy`: operands come through hbm/l2/interconnect; `ideal`: operands are "
               "always ready, so only compute is timed.",
               top_field(&ChipConfig::memory)));
    s.push_back(integer("seed", 0, 9.2e18, d.seed,
                        "Seed of every random number generator (validation inputs).",
                        top_field(&ChipConfig::seed)));
    s.push_back(number("activation_outlier_fraction", 0, 1, d.activation_outlier_fraction,
                       "Fraction of the feature dimensions of an int8 or fp8 GEMM's activation (A's K columns) or "
                       "convolution's input (its channels) that are outliers, at least one when above 0, for "
                       "--validate's quantization error (docs/outputs.md \"Outliers\"); 0: none.",
                       top_field(&ChipConfig::activation_outlier_fraction)));
    s.push_back(number("activation_outlier_magnitude", 1, 10000, d.activation_outlier_magnitude,
                       "Factor of the outlier features' values over the others' (uniform in [-1, 1)); "
                       "LLM.int8() (Dettmers et al. 2022) reports outliers up to about 20 times the rest.",
                       top_field(&ChipConfig::activation_outlier_magnitude)));
    s.push_back(number(
        "cost_per_hour_usd", 0, 1e6, nullptr,
        "Public on-demand price of one chip-hour in USD, for cost-per-run figures. Optional.",
        [](ChipConfig& c, const json& v) { c.cost_per_hour_usd = v.get<double>(); }));
    s.push_back(positive("tdp_w", 1e5, nullptr,
                         "Thermal design power of one chip in watts. Optional.",
                         [](ChipConfig& c, const json& v) { c.tdp_w = v.get<double>(); }));
    s.push_back(positive("memory_gb", 1e6, nullptr,
                         "Device memory (HBM, GDDR or DRAM) capacity of one chip in GB, as the vendor states "
                         "it (the citation says GB or GiB). Not simulated (addresses past it wrap); shown in "
                         "docs/hardware.md. Optional.",
                         [](ChipConfig& c, const json& v) { c.memory_gb = v.get<double>(); }));

    // ---- model sections: each model's own parameter table ----
    const std::string sys = "systolic";
    mount(s, "tpu", "TensorCores and their on-chip memories (systolic only).", sys, tpu::tpu_param_table(),
          &ChipConfig::tpu);
    // One compiler section for both kinds; each key belongs to one kind (a key of the other kind is
    // an error naming it).
    s.push_back(section("compiler", "Lowering and fusion choices; each key applies to one chip kind.", std::nullopt));
    mount_keys(s, "compiler", sys, tpu::tpu_compiler_param_table(), &ChipConfig::tpu, true);
    mount_keys(s, "compiler", "simt", gpu::gpu_compiler_param_table(), &ChipConfig::gpu, true);
    mount(s, "mxu", "One matrix unit (systolic array); all MXUs of a chip are alike.", sys, mxu_param_table(),
          &ChipConfig::mxu);
    const std::string simt = "simt";
    mount(s, "gpu", "Chip-level GPU figures (simt only).", simt, gpu::gpu_param_table(), &ChipConfig::gpu);
    mount(s, "sm", "One streaming multiprocessor; all SMs of a chip are alike (simt only).", simt,
          simt::sm_param_table(), &ChipConfig::sm);
    mount(s, "host", "How the host launches the trace's ops (both kinds): framework dispatch, launch and sync "
          "times, and how they overlap the device (docs/host.md).", std::nullopt, host_param_table(), &ChipConfig::host);
    // The memory hierarchy serves both kinds.
    mount(s, "hbm", "Off-chip DRAM. Peak bytes/s = channels × bus_width_bits / 8 × data_rate_gbps × 1e9.",
          std::nullopt, memory::dram_param_table(), &ChipConfig::hbm);
    mount(s, "l2", "Last-level cache (GPU L2; on systolic chips the level in front of HBM, if any).",
          std::nullopt, memory::l2_param_table(), &ChipConfig::l2);
    mount(s, "interconnect", "Network between the cores/SMs and the L2 or memory.", std::nullopt,
          memory::crossbar_param_table(), &ChipConfig::interconnect);
    return s;
}

std::string format_number(double v) {
    char buf[64];
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e19)
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
    return out;
}

}  // namespace

const std::vector<KeySpec>& config_schema() {
    static const std::vector<KeySpec> schema = build_schema();
    return schema;
}

const KeySpec* find_key(const std::string& path) {
    static const std::map<std::string, const KeySpec*> index = [] {
        std::map<std::string, const KeySpec*> m;
        for (const KeySpec& k : config_schema()) m[k.path] = &k;
        return m;
    }();
    const auto it = index.find(path);
    return it == index.end() ? nullptr : it->second;
}

std::string describe_allowed(const KeySpec& spec) {
    switch (spec.type) {
        case KeyType::integer:
        case KeyType::number:
            return std::string(spec.zero_allowed ? "0, or " : "") +
                   (spec.type == KeyType::integer ? "integer" : "number") + " in " +
                   (spec.min_exclusive ? "(" : "[") + format_number(spec.min) + ", " +
                   format_number(spec.max) + "]";
        case KeyType::boolean:
            return "true or false";
        case KeyType::string:
            return "string";
        case KeyType::choice:
            return "one of " + join(spec.choices, ", ");
        case KeyType::section:
            return "object";
        case KeyType::number_map:
            return "object of numbers >= 0 with keys " + join(spec.choices, ", ");
        case KeyType::free_form:
            return "object of strings";
    }
    return "?";
}

std::string check_value(const KeySpec& spec, const nlohmann::json& value) {
    const std::string shown = spec.path + " = " + value.dump();
    const std::string allowed = " (allowed: " + describe_allowed(spec) + ")";
    const std::string wrong_type = shown + " has the wrong type" + allowed;
    switch (spec.type) {
        case KeyType::integer: {
            if (!value.is_number_integer()) return wrong_type;
            if (value.is_number_unsigned() &&
                value.get<std::uint64_t>() >
                    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                return shown + " is out of range" + allowed;
            const double v = static_cast<double>(value.get<std::int64_t>());
            if (v < spec.min || v > spec.max) return shown + " is out of range" + allowed;
            return {};
        }
        case KeyType::number: {
            if (!value.is_number()) return wrong_type;
            const double v = value.get<double>();
            if (spec.zero_allowed && v == 0) return {};
            const bool below = spec.min_exclusive ? v <= spec.min : v < spec.min;
            if (!std::isfinite(v) || below || v > spec.max)
                return shown + " is out of range" + allowed;
            return {};
        }
        case KeyType::boolean:
            return value.is_boolean() ? std::string() : wrong_type;
        case KeyType::string:
            return value.is_string() ? std::string() : wrong_type;
        case KeyType::choice: {
            if (!value.is_string()) return wrong_type;
            const std::string v = value.get<std::string>();
            for (const std::string& c : spec.choices)
                if (c == v) return {};
            std::string nearest;
            std::size_t best = 3;  // suggest only a choice within two edits
            for (const std::string& c : spec.choices) {
                const std::size_t dist = edit_distance(v, c);
                if (dist < best) best = dist, nearest = c;
            }
            return shown + " is not a valid choice" + allowed +
                   (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)");
        }
        case KeyType::section:
        case KeyType::number_map:
        case KeyType::free_form:
            return value.is_object() ? std::string() : wrong_type;
    }
    return wrong_type;
}

std::string config_keys_markdown() {
    std::ostringstream out;
    out << "| key | type and range | default | meaning |\n";
    out << "|---|---|---|---|\n";
    for (const KeySpec& k : config_schema()) {
        std::string def;
        if (k.required)
            def = "**required**";
        else if (k.is_object())
            def = k.type == KeyType::number_map ? "`{}`" : "";
        else if (k.default_value.is_null())
            def = k.path == "name" ? "file name" : "none";
        else
            def = "`" + k.default_value.dump() + "`";
        std::string type = describe_allowed(k);
        if (k.only_for)
            type += "; " + *k.only_for + " only";
        out << "| `" << k.path << "` | " << type << " | " << def << " | " << k.doc << " |\n";
    }
    return out.str();
}

}  // namespace accelsim
