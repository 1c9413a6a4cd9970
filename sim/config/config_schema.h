#pragma once
// The one table of config keys: the chip-level keys declared here, each model section mounted from
// the model's own parameter table (models/*: key, type, range, doc, enum names; the default is
// the model struct's). The loader validates every file and every --set against it, fills defaults
// from it, and copies values into ChipConfig through it; docs/config.md's key list is generated
// from it (`accelsim config-docs`), so the docs and the checks cannot drift apart.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/chip_config.h"

namespace accelsim {

enum class KeyType {
    integer,     // JSON integer (1.0 is not an integer)
    number,      // any JSON number
    boolean,     // true | false
    string,      // any string
    choice,      // one of KeySpec::choices
    section,     // a JSON object whose keys are themselves in the table
    number_map,  // a JSON object whose keys are KeySpec::choices and whose values are numbers >= 0
    free_form,   // any object of strings and nested objects (only "source")
};

struct KeySpec {
    std::string path;  // dotted JSON path, e.g. "mxu.macs_per_pe_per_cycle.bf16"
    KeyType type = KeyType::integer;
    // Inclusive range for integer/number keys; min_exclusive makes the lower bound strict (> min).
    double min = 0, max = 0;
    bool min_exclusive = false;
    bool zero_allowed = false;  // 0 (the key's "off" value) is allowed besides the range
    std::vector<std::string> choices;  // choice values, or the allowed keys of a number_map
    // Filled into the effective config when the key is absent; null = no default (see required).
    nlohmann::json default_value;
    bool required = false;
    std::optional<std::string> only_for;  // set on sections that belong to one chip kind
    std::string doc;                   // one line, shown in docs/config.md
    // Copies the validated value into the typed config; empty for sections and keys with no field.
    std::function<void(ChipConfig&, const nlohmann::json&)> apply;

    bool is_object() const {
        return type == KeyType::section || type == KeyType::number_map ||
               type == KeyType::free_form;
    }
};

// All keys, parents before children, in documentation order.
const std::vector<KeySpec>& config_schema();

// The entry for a dotted path, or nullptr.
const KeySpec* find_key(const std::string& path);

// Human-readable type and range of a key, e.g. "integer in [1, 512]" or "one of ws, os, is".
std::string describe_allowed(const KeySpec& spec);

// Checks one value against its key's type, range and choices (not the contents of sections).
// Returns an empty string when it is fine, otherwise the reason, e.g.
// "mxu.rows = 0 is out of range (allowed: integer in [1, 512])".
std::string check_value(const KeySpec& spec, const nlohmann::json& value);

// The Markdown table of every key (path, type and range, default, meaning) for docs/config.md.
std::string config_keys_markdown();

}  // namespace accelsim
