#pragma once
// A model's parameter table: the one declaration of each configurable parameter of its plain
// Params struct (key, type, range, doc, the enum's own name list), its default read from the
// struct itself. sim/config builds the config schema and docs/config.md from these tables and
// fills the structs through them; models stay free of JSON and of the config layer.
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "models/common/dtype.h"
#include "models/common/enum_names.h"

namespace accelsim {

// Upper bounds of memory sizes in tables: generous, but they stop a typo asking for exabytes.
inline constexpr double kTiB = 1099511627776.0;  // 2^40
inline constexpr double kGiB = 1073741824.0;     // 2^30

enum class ParamType {
    integer,  // whole number in [min, max]
    number,   // real number in [min, max] ((min, max] with min_exclusive)
    boolean,
    choice,   // one of `choices`
    section,  // a group of keys ("vector" in "tpu.vector.lanes"); no value of its own
    number_map,  // an object whose keys are `choices` and whose values are numbers
};

// A value as the config layer hands it over: integers as int64, numbers as double, choices as
// their name, number maps as (name, number) pairs.
using NumberMap = std::vector<std::pair<std::string, double>>;
using ParamValue = std::variant<std::int64_t, double, bool, std::string, NumberMap>;

template <class P>
struct ParamSpec {
    std::string key;  // relative to the table's section, e.g. "rows" or "vector.lanes"
    ParamType type = ParamType::integer;
    double min = 0, max = 0;
    bool min_exclusive = false;
    bool zero_allowed = false;  // 0 (the key's "off" value) is allowed besides [min, max]
    std::vector<std::string> choices;  // ParamType::choice: the enum's names, in its own order
    ParamValue default_value;          // the value a default-constructed P holds
    std::string doc;                   // one line, shown in docs/config.md
    // Stores a value already checked against the spec; empty for sections.
    std::function<void(P&, const ParamValue&)> set;
};

template <class P>
class ParamTable {
  public:
    // Fields may belong to P or to a base of P (DramConfig's DramOrganisation fields).
    template <class C, class T>
    using Field = std::enable_if_t<std::is_base_of_v<C, P>>;
    template <class C, class T>
    using IntegerField = std::enable_if_t<std::is_base_of_v<C, P> && std::is_integral_v<T> && !std::is_same_v<T, bool>>;

    // A sub-section ("vector" of "vector.lanes"): declared before its keys, for the docs.
    ParamTable& section(std::string key, std::string doc) {
        specs_.push_back(spec(std::move(key), ParamType::section, std::move(doc)));
        return *this;
    }

    // Every setter takes a field of P, or a field of a struct inside P ("vector.lanes" ->
    // p.vector.lanes), so nested members need no second table.
    template <class C, class T, class = IntegerField<C, T>>
    ParamTable& integer(std::string key, T C::*field, double min, double max, std::string doc) {
        return integer_at(std::move(key), [field](P& p) -> T& { return p.*field; }, min, max, std::move(doc));
    }
    template <class C, class S, class T, class = IntegerField<C, T>>
    ParamTable& integer(std::string key, S C::*outer, T S::*field, double min, double max, std::string doc) {
        return integer_at(std::move(key), [outer, field](P& p) -> T& { return (p.*outer).*field; }, min, max,
                          std::move(doc));
    }

    template <class C, class = Field<C, double>>
    ParamTable& number(std::string key, double C::*field, double min, double max, std::string doc,
                       bool min_exclusive = false) {
        return number_at(std::move(key), [field](P& p) -> double& { return p.*field; }, min, max, std::move(doc),
                         min_exclusive);
    }
    template <class C, class S, class = Field<C, double>>
    ParamTable& number(std::string key, S C::*outer, double S::*field, double min, double max, std::string doc,
                       bool min_exclusive = false) {
        return number_at(std::move(key), [outer, field](P& p) -> double& { return (p.*outer).*field; }, min, max,
                         std::move(doc), min_exclusive);
    }
    // The key just added also takes 0, its "off" value (an unlimited rate, a disabled unit), besides
    // its range: a tiny positive value then cannot pass for "almost off" and make time absurd.
    ParamTable& or_zero() {
        specs_.back().zero_allowed = true;
        return *this;
    }
    // A number that must be > 0.
    template <class C, class = Field<C, double>>
    ParamTable& positive(std::string key, double C::*field, double max, std::string doc) {
        return number(std::move(key), field, 0, max, std::move(doc), true);
    }

    template <class C, class = Field<C, bool>>
    ParamTable& boolean(std::string key, bool C::*field, std::string doc) {
        ParamSpec<P> s = spec(std::move(key), ParamType::boolean, std::move(doc));
        s.default_value = defaults().*field;
        s.set = [field](P& p, const ParamValue& v) { p.*field = std::get<bool>(v); };
        specs_.push_back(std::move(s));
        return *this;
    }

    // An enum field, its allowed names taken from the enum's own list.
    template <class C, class E, std::size_t N, class = Field<C, E>>
    ParamTable& choice(std::string key, E C::*field, const EnumNames<E, N>& names, std::string doc) {
        ParamSpec<P> s = spec(std::move(key), ParamType::choice, std::move(doc));
        s.choices = names_of(names);
        s.default_value = std::string(name_of(names, defaults().*field));
        s.set = [field, &names](P& p, const ParamValue& v) { p.*field = *parse_enum(names, std::get<std::string>(v)); };
        specs_.push_back(std::move(s));
        return *this;
    }
    // A string field restricted to a model's list of names (presets, policy names).
    template <class C, class = Field<C, std::string>>
    ParamTable& choice(std::string key, std::string C::*field, std::vector<std::string> names, std::string doc) {
        ParamSpec<P> s = spec(std::move(key), ParamType::choice, std::move(doc));
        s.choices = std::move(names);
        s.default_value = defaults().*field;
        s.set = [field](P& p, const ParamValue& v) { p.*field = std::get<std::string>(v); };
        specs_.push_back(std::move(s));
        return *this;
    }

    // One number per operand dtype under `key` (a sub-section documented by `doc`); each rate's
    // doc line is `rate_doc` with the dtype's name (and, for fp32, `fp32_note`) in front.
    template <class C, class = Field<C, DTypeRates>>
    ParamTable& rates(std::string key, DTypeRates C::*field, double max, std::string doc, std::string rate_doc,
                      std::string fp32_note = "") {
        section(key, std::move(doc));
        for (const DType t : kOperandDTypes) {
            double DTypeRates::*rate = DTypeRates::member(t);
            number_at(key + "." + std::string(to_string(t)),
                      [field, rate](P& p) -> double& { return (p.*field).*rate; }, 0, max,
                      std::string(to_string(t)) + (t == DType::fp32 ? fp32_note : "") + " " + rate_doc, false);
        }
        return *this;
    }

    // An object of named numbers (DRAM timing overrides); its defaults are empty.
    ParamTable& number_map(std::string key, std::function<void(P&, const NumberMap&)> set,
                           std::vector<std::string> names, std::string doc) {
        ParamSpec<P> s = spec(std::move(key), ParamType::number_map, std::move(doc));
        s.choices = std::move(names);
        s.default_value = NumberMap{};
        s.set = [set](P& p, const ParamValue& v) { set(p, std::get<NumberMap>(v)); };
        specs_.push_back(std::move(s));
        return *this;
    }

    // Parents before children, in documentation order.
    const std::vector<ParamSpec<P>>& specs() const { return specs_; }

  private:
    template <class At>
    ParamTable& integer_at(std::string key, At at, double min, double max, std::string doc) {
        using T = std::remove_reference_t<decltype(at(std::declval<P&>()))>;
        ParamSpec<P> s = spec(std::move(key), ParamType::integer, std::move(doc));
        s.min = min, s.max = max;
        s.default_value = static_cast<std::int64_t>(at(defaults()));
        s.set = [at](P& p, const ParamValue& v) { at(p) = static_cast<T>(std::get<std::int64_t>(v)); };
        specs_.push_back(std::move(s));
        return *this;
    }
    template <class At>
    ParamTable& number_at(std::string key, At at, double min, double max, std::string doc, bool min_exclusive) {
        ParamSpec<P> s = spec(std::move(key), ParamType::number, std::move(doc));
        s.min = min, s.max = max, s.min_exclusive = min_exclusive;
        s.default_value = at(defaults());
        s.set = [at](P& p, const ParamValue& v) { at(p) = std::get<double>(v); };
        specs_.push_back(std::move(s));
        return *this;
    }
    // A default-constructed P: where every default is read from.
    static P& defaults() {
        static P d{};
        return d;
    }
    static ParamSpec<P> spec(std::string key, ParamType type, std::string doc) {
        ParamSpec<P> s;
        s.key = std::move(key);
        s.type = type;
        s.doc = std::move(doc);
        return s;
    }

    std::vector<ParamSpec<P>> specs_;
};

}  // namespace accelsim
