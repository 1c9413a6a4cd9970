#include "sim/config/config_loader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "sim/config/config_schema.h"
#include "sim/json_input_error.h"

namespace accelsim {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const char* const kSetLabel = "--set";

std::string parent_of(const std::string& path) {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? std::string() : path.substr(0, dot);
}
std::string last_of(const std::string& path) {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? path : path.substr(dot + 1);
}
json::json_pointer pointer_of(const std::string& path) {
    std::string p = "/" + path;
    std::replace(p.begin(), p.end(), '.', '/');
    return json::json_pointer(p);
}

// Entries of a number map (hbm.timing.X) are not table rows of their own; this spec checks them.
std::optional<KeySpec> map_entry_spec(const std::string& path) {
    const KeySpec* parent = find_key(parent_of(path));
    if (!parent || parent->type != KeyType::number_map) return std::nullopt;
    const std::string name = last_of(path);
    if (std::find(parent->choices.begin(), parent->choices.end(), name) == parent->choices.end())
        return std::nullopt;
    KeySpec entry;
    entry.path = path;
    entry.type = KeyType::number;
    entry.min = 0;
    entry.max = name == "tCK" ? 100 : 1e6;  // tCK is in ns; the rest are counts of memory cycles
    entry.min_exclusive = name == "tCK";
    return entry;
}

// The names valid next to `path`: its sibling table keys, or the allowed keys of a number map.
std::vector<std::string> siblings_of(const std::string& path) {
    const std::string parent = parent_of(path);
    if (const KeySpec* p = find_key(parent); p && p->type == KeyType::number_map) {
        std::vector<std::string> names;
        for (const std::string& c : p->choices) names.push_back(parent + "." + c);
        return names;
    }
    std::vector<std::string> names;
    for (const KeySpec& k : config_schema())
        if (parent_of(k.path) == parent) names.push_back(k.path);
    return names;
}

[[noreturn]] void throw_unknown_key(const std::string& where, const std::string& path) {
    const std::string name = last_of(path);
    // A suggestion must be close: at most two edits, and fewer edits than the name has letters.
    const std::size_t limit = std::min<std::size_t>(2, name.size() > 1 ? name.size() - 1 : 0);
    auto nearest = [&](const std::vector<std::string>& candidates, bool compare_full_path) {
        std::string best;
        std::size_t best_distance = limit + 1;
        for (const std::string& c : candidates) {
            std::size_t dist = edit_distance(name, last_of(c));
            if (compare_full_path) dist = std::min(dist, edit_distance(path, c));
            if (dist < best_distance) best_distance = dist, best = c;
        }
        return best;
    };
    const std::vector<std::string> siblings = siblings_of(path);
    std::string suggestion = nearest(siblings, false);
    if (suggestion.empty()) {  // perhaps the key was put in the wrong section
        std::vector<std::string> all;
        for (const KeySpec& k : config_schema()) all.push_back(k.path);
        for (const KeySpec& k : config_schema())
            if (k.type == KeyType::number_map)
                for (const std::string& c : k.choices) all.push_back(k.path + "." + c);
        suggestion = nearest(all, true);
    }
    std::string message = where + ": unknown key '" + path + "'";
    if (!suggestion.empty()) {
        message += " (did you mean '" + suggestion + "'?)";
    } else {
        message += " (valid keys here: ";
        for (std::size_t i = 0; i < siblings.size(); ++i)
            message += (i ? ", " : "") + last_of(siblings[i]);
        message += ")";
    }
    throw InputError(message);
}

std::string read_file(const std::string& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw InputError(path + ": cannot open");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

json parse_json(const std::string& file, const std::string& text) {
    // nlohmann keeps the last of duplicate keys silently; a strict loader reports them.
    std::vector<std::set<std::string>> keys_per_open_object;
    std::vector<std::string> key_path;  // the key under which each open object sits
    std::string last_key;
    const json::parser_callback_t check_duplicates = [&](int, json::parse_event_t event,
                                                         json& parsed) {
        switch (event) {
            case json::parse_event_t::object_start:
                keys_per_open_object.emplace_back();
                key_path.push_back(last_key);
                break;
            case json::parse_event_t::object_end:
                keys_per_open_object.pop_back();
                key_path.pop_back();
                break;
            case json::parse_event_t::key:
                last_key = parsed.get<std::string>();
                if (!keys_per_open_object.back().insert(last_key).second) {
                    std::string path;
                    for (std::size_t i = 1; i < key_path.size(); ++i) path += key_path[i] + ".";
                    throw InputError(file + ": duplicate key '" + path + last_key + "'");
                }
                break;
            default:
                break;
        }
        return true;
    };
    try {
        return json::parse(text, check_duplicates);
    } catch (const json::exception& e) {
        throw_json_input_error(file, text, e);
    }
}

void check_citations(const std::string& file, const std::string& path, const json& value) {
    for (const auto& [key, item] : value.items()) {
        if (item.is_object())
            check_citations(file, path + "." + key, item);
        else if (!item.is_string())
            throw InputError(
                file + ": " + path + "." + key + " = " + item.dump() +
                " has the wrong type (allowed: a citation string or an object of them)");
    }
}

// Checks every key written in one file (names, types, ranges, choices) so that an error names the
// file where the bad key was written; records that file as the origin of each path.
void check_tree(const std::string& file, const json& object, const std::string& prefix,
                std::map<std::string, std::string>& origin) {
    for (const auto& [key, value] : object.items()) {
        const std::string path = prefix.empty() ? key : prefix + "." + key;
        std::optional<KeySpec> entry;
        const KeySpec* spec = find_key(path);
        if (!spec && (entry = map_entry_spec(path))) spec = &*entry;
        if (!spec) throw_unknown_key(file, path);
        if (value.is_null()) {  // removes an inherited value (as JSON Merge Patch, RFC 7386, does)
            if (spec->required)
                throw InputError(file + ": " + path + " = null: a required key cannot be removed");
            origin[path] = file;
            continue;
        }
        if (const std::string problem = check_value(*spec, value); !problem.empty())
            throw InputError(file + ": " + problem);
        origin[path] = file;
        if (spec->type == KeyType::section || spec->type == KeyType::number_map)
            check_tree(file, value, path, origin);
        else if (spec->type == KeyType::free_form)
            check_citations(file, path, value);
    }
}

// Objects merge key by key; null removes the key; anything else in `over` replaces what `base` had.
void deep_merge(json& base, const json& over) {
    for (const auto& [key, value] : over.items()) {
        if (value.is_null())
            base.erase(key);
        else if (value.is_object() && base.contains(key) && base[key].is_object())
            deep_merge(base[key], value);
        else
            base[key] = value;
    }
}

class Loader {
  public:
    // Reads `path` and the chain of files it extends; returns the merged tree (without "extends").
    json load(const std::string& path) {
        std::error_code ec;
        fs::path canonical = fs::weakly_canonical(path, ec);
        if (ec) canonical = fs::absolute(path);
        for (std::size_t i = 0; i < chain_.size(); ++i) {
            if (chain_[i].second != canonical) continue;
            std::string cycle;
            for (std::size_t j = i; j < chain_.size(); ++j) cycle += chain_[j].first + " -> ";
            throw InputError(chain_.back().first + ": \"extends\" cycle: " + cycle + path);
        }
        const std::string text = read_file(path);
        json tree = parse_json(path, text);
        if (!tree.is_object()) throw InputError(path + ": the top level must be a JSON object");
        std::map<std::string, std::string> own_origin;
        check_tree(path, tree, "", own_origin);

        json merged = json::object();
        if (tree.contains("extends") && tree["extends"].is_string()) {
            const std::string named = tree["extends"].get<std::string>();
            const fs::path base = fs::path(path).parent_path() / named;
            if (!fs::is_regular_file(base, ec))
                throw InputError(path + ": extends '" + named +
                                 "': " + base.lexically_normal().string() + ": cannot open");
            chain_.emplace_back(path, canonical);
            merged = load(base.lexically_normal().string());
            chain_.pop_back();
        }
        tree.erase("extends");
        deep_merge(merged, tree);
        for (const auto& [key_path, file] : own_origin) origin_[key_path] = file;
        return merged;
    }

    void apply_override(json& tree, const std::string& assignment) {
        const auto equals = assignment.find('=');
        if (equals == std::string::npos || equals == 0)
            throw InputError(std::string(kSetLabel) + " '" + assignment +
                             "': expected key.path=value");
        const std::string path = assignment.substr(0, equals);
        const std::string text = assignment.substr(equals + 1);
        std::optional<KeySpec> entry;
        const KeySpec* spec = find_key(path);
        if (!spec && (entry = map_entry_spec(path))) spec = &*entry;
        if (!spec) throw_unknown_key(kSetLabel, path);
        if (spec->type == KeyType::free_form)
            throw InputError(std::string(kSetLabel) + ": '" + path +
                             "' cannot be set from the command line");
        if (spec->is_object())
            throw InputError(std::string(kSetLabel) + ": '" + path +
                             "' is a section, not a value; set one of its keys, e.g. '" +
                             siblings_of(path + ".x").front() + "'");
        if (path == "extends")
            throw InputError(
                std::string(kSetLabel) +
                ": 'extends' is resolved before overrides; name the base config with --config");
        const json value = parse_typed(*spec, text);
        if (const std::string problem = check_value(*spec, value); !problem.empty())
            throw InputError(std::string(kSetLabel) + ": " + problem);
        tree[pointer_of(path)] = value;
        for (std::string p = path; !p.empty(); p = parent_of(p))
            if (p == path || !origin_.count(p)) origin_[p] = kSetLabel;
    }

    // The file where `path` (or its nearest written ancestor) came from; the top file for defaults.
    // The file (or --set) that wrote exactly this key, or "" when no file did (a default).
    std::string written_by(const std::string& path) const {
        const auto it = origin_.find(path);
        return it == origin_.end() ? std::string() : it->second;
    }

    std::string origin_of(const std::string& path, const std::string& top_file) const {
        for (std::string p = path; !p.empty(); p = parent_of(p))
            if (const auto it = origin_.find(p); it != origin_.end()) return it->second;
        return top_file;
    }

  private:
    static json parse_typed(const KeySpec& spec, const std::string& text) {
        const std::string fail = std::string(kSetLabel) + ": " + spec.path + " = " + text +
                                 " is not valid (allowed: " + describe_allowed(spec) + ")";
        switch (spec.type) {
            case KeyType::integer: {
                std::int64_t v = 0;
                const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
                if (ec != std::errc() || end != text.data() + text.size() || text.empty())
                    throw InputError(fail);
                return v;
            }
            case KeyType::number: {
                char* end = nullptr;
                const double v = std::strtod(text.c_str(), &end);
                if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
                    throw InputError(fail);
                return v;
            }
            case KeyType::boolean:
                if (text == "true") return true;
                if (text == "false") return false;
                throw InputError(fail);
            default:
                return text;
        }
    }

    std::vector<std::pair<std::string, fs::path>>
        chain_;                                  // files being loaded: as named, canonical
    std::map<std::string, std::string> origin_;  // key path -> file (or --set) that wrote it
};

bool relevant(const KeySpec& spec, const std::string& kind) {
    if (spec.type != KeyType::section && spec.only_for) return *spec.only_for == kind;  // a key of one kind
    const std::string top = spec.path.substr(0, spec.path.find('.'));
    const KeySpec* section = find_key(top);
    return !section->only_for || *section->only_for == kind;
}

// Where the keys of a cross-key error came from, e.g. "configs/a100.json and --set sm.max_warps":
// each file once, and every key a --set gave by name, so the message blames what the user changed.
std::string origins_of(const std::vector<std::string>& keys, const Loader& loader, const std::string& top_file) {
    std::vector<std::string> parts;
    for (const std::string& key : keys) {
        const std::string origin = loader.written_by(key);
        if (origin.empty()) continue;  // a default: nobody to blame
        const std::string part = origin == kSetLabel ? origin + " " + key : origin;
        if (std::find(parts.begin(), parts.end(), part) == parts.end()) parts.push_back(part);
    }
    if (parts.empty()) return loader.origin_of(keys.front(), top_file);
    std::string joined;
    for (std::size_t i = 0; i < parts.size(); ++i) joined += (i == 0 ? "" : " and ") + parts[i];
    return joined;
}

void check_consistency(const ChipConfig& c, const Loader& loader, const std::string& top_file) {
    auto fail = [&](const std::vector<std::string>& keys, const std::string& message) {
        throw InputError(origins_of(keys, loader, top_file) + ": " + message);
    };
    if (c.kind == "systolic") {
        const DTypeRates& r = c.mxu.macs_per_pe_per_cycle;
        if (r.int8 == 0 && r.fp16 == 0 && r.bf16 == 0 && r.fp32 == 0)
            fail({"mxu.macs_per_pe_per_cycle"},
                 "mxu.macs_per_pe_per_cycle: every rate is 0, so the MXU could run nothing");
    } else {
        const simt::SmSpec& sm = c.sm;
        if (sm.wave_size != 32 && sm.wave_size != 64)
            fail({"sm.wave_size"}, "sm.wave_size = " + std::to_string(sm.wave_size) + " must be 32 or 64");
        if (sm.max_threads > sm.wave_size * sm.max_warps)
            fail({"sm.max_threads", "sm.max_warps"},
                 "sm.max_threads = " + std::to_string(sm.max_threads) + " exceeds " + std::to_string(sm.wave_size) +
                     " × sm.max_warps = " + std::to_string(sm.wave_size * sm.max_warps));
        if (sm.max_warps % sm.schedulers != 0)
            fail({"sm.max_warps", "sm.schedulers"},
                 "sm.max_warps = " + std::to_string(sm.max_warps) +
                     " is not a multiple of sm.schedulers = " + std::to_string(sm.schedulers) +
                     " (each scheduler owns an equal share of the warp slots)");
        if (sm.registers % sm.register_alloc_unit != 0)
            fail({"sm.registers", "sm.register_alloc_unit"}, "sm.registers = " + std::to_string(sm.registers) +
                                     " is not a multiple of sm.register_alloc_unit = " +
                                     std::to_string(sm.register_alloc_unit));
        if (sm.shared_memory_per_block_bytes > sm.shared_memory_bytes)
            fail({"sm.shared_memory_per_block_bytes", "sm.shared_memory_bytes"},
                 "sm.shared_memory_per_block_bytes = " +
                     std::to_string(sm.shared_memory_per_block_bytes) +
                     " exceeds sm.shared_memory_bytes = " + std::to_string(sm.shared_memory_bytes));
        // NVIDIA carves shared memory out of a unified L1; CDNA's (wave 64) LDS and L1 are separate arrays.
        if (sm.wave_size == 32 && sm.l1_bytes > 0 && sm.l1_bytes < sm.shared_memory_bytes)
            fail({"sm.l1_bytes", "sm.shared_memory_bytes"}, "sm.l1_bytes = " + std::to_string(sm.l1_bytes) +
                                    " is smaller than sm.shared_memory_bytes = " +
                                    std::to_string(sm.shared_memory_bytes) +
                                    " (shared memory is carved out of the unified L1)");
    }
    if (c.host.io && c.host.link_gb_per_s <= 0)
        fail({"host.io", "host.link_gb_per_s"},
             "host.io copies the input and output over the host link, but host.link_gb_per_s is 0 (the config gives "
             "no link): set it, e.g. --set host.link_gb_per_s=31.5 for PCIe Gen4 x16");
    const memory::L2Params& l2 = c.l2;
    const std::int64_t set_bytes = static_cast<std::int64_t>(l2.slices) * l2.ways * l2.line_bytes;
    if (l2.size_bytes % set_bytes != 0)
        fail({"l2.size_bytes", "l2.slices", "l2.ways", "l2.line_bytes"},
             "l2.size_bytes = " + std::to_string(l2.size_bytes) +
                 " is not a multiple of slices × ways × line_bytes = " + std::to_string(l2.slices) +
                 " × " + std::to_string(l2.ways) + " × " + std::to_string(l2.line_bytes) + " = " +
                 std::to_string(set_bytes));
    if (l2.line_bytes % l2.sector_bytes != 0)
        fail({"l2.line_bytes", "l2.sector_bytes"},
             "l2.line_bytes = " + std::to_string(l2.line_bytes) +
                 " is not a multiple of l2.sector_bytes = " + std::to_string(l2.sector_bytes));
    if (c.hbm.bus_width_bits % c.hbm.pseudo_channels != 0)
        fail({"hbm.pseudo_channels", "hbm.bus_width_bits"}, "hbm.bus_width_bits = " + std::to_string(c.hbm.bus_width_bits) +
                                        " cannot be split into hbm.pseudo_channels = " +
                                        std::to_string(c.hbm.pseudo_channels) + " equal buses");
}

}  // namespace

ChipConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
    Loader loader;
    json tree = loader.load(path);
    for (const std::string& assignment : overrides) loader.apply_override(tree, assignment);

    for (const KeySpec& k : config_schema())
        if (k.required && !tree.contains(pointer_of(k.path)))
            throw InputError(path + ": missing required key '" + k.path + "' (" +
                             describe_allowed(k) + ")");
    const std::string kind = tree["kind"].get<std::string>();

    for (const auto& [key, value] : tree.items()) {
        const KeySpec* section = find_key(key);
        if (section->only_for && *section->only_for != kind) {
            throw InputError(origins_of({key, "kind"}, loader, path) + ": section '" + key +
                             "' does not apply to a " + kind + " chip (kind is \"" + kind +
                             "\"; sections '" + key + "' belong to " + *section->only_for + " chips)");
        }
        // A section shared by both kinds (compiler) whose key belongs to the other kind.
        if (!value.is_object()) continue;
        for (const auto& [sub, unused] : value.items()) {
            const KeySpec* spec = find_key(key + "." + sub);
            if (spec && spec->type != KeyType::section && spec->only_for && *spec->only_for != kind)
                throw InputError(origins_of({key + "." + sub, "kind"}, loader, path) + ": key '" + key + "." + sub +
                                 "' does not apply to a " + kind + " chip (it belongs to " + *spec->only_for +
                                 " chips)");
        }
    }

    // The effective config: what was written plus every default, so reports say exactly what ran.
    json effective = tree;
    if (!effective.contains("name")) effective["name"] = fs::path(path).stem().string();
    for (const KeySpec& k : config_schema()) {
        if (!relevant(k, kind) || effective.contains(pointer_of(k.path))) continue;
        if (k.type == KeyType::section)
            effective[pointer_of(k.path)] = json::object();
        else if (!k.default_value.is_null())
            effective[pointer_of(k.path)] = k.default_value;
    }

    ChipConfig config;
    for (const KeySpec& k : config_schema())
        if (k.apply && effective.contains(pointer_of(k.path)))
            k.apply(config, effective[pointer_of(k.path)]);
    check_consistency(config, loader, path);
    config.file = path;
    config.effective = std::move(effective);
    return config;
}

}  // namespace accelsim
