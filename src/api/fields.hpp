#pragma once
/// Application layer (api): the one table of request fields shared by both front ends.
///
/// Each request kind (size, plan, offers, ...) has a table of FieldDef rows: the JSON name (also
/// the query-string name and, as "/name", the JSON pointer in error bodies), the CLI flag, the
/// value type and a setter into the request's input struct. The CLI adds its flags from the table
/// (cli/api_flags.hpp) and the server reads JSON bodies and query strings through it, so a field
/// has one name per face and errors can be rendered in each face's own form:
///   CLI:  "gpuplan: error: --micro-batch: ..."       API: {"field": "/micro_batch", ...}
/// Engine errors name CLI flags (Error::where() "--tp"); field_for_where() maps them back.
///
/// Naming rule: name = flag without "--", '-' → '_' ("--kv-dtype" ↔ "kv_dtype"). Units follow the
/// CLI's: token and request counts are plain numbers, durations in the unit their flag says.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan::api {

enum class FieldType {
  boolean,  ///< JSON true/false; a CLI flag without value
  integer,  ///< JSON integer (a float with an integral value is accepted: 8.0); CLI "8"
  number,   ///< JSON number; CLI "5e8", "0.1"
  string,   ///< JSON string
  count,    ///< a JSON number or a string with K/M/B/T suffix ("70B"); CLI the same
  /// a JSON number (a bare number: in the unit the field's help names, hours for deadline, days
  /// for max_price_age) or a string with a unit ("72h", "30d"); CLI the same. The setter reads
  /// duration_text(value), the text the CLI would carry.
  duration,
};
std::string_view field_type_name(FieldType t) noexcept;  ///< "boolean", "integer", ... (OpenAPI type: see openapi)

/// The workload tasks that read a request field (size, plan, estimate): a bit set. A field given
/// for a task that does not read it is refused (field_not_for_task, check_fields_for_task): a
/// trial's `size --task lora --quant int4` was sized as if --quant had not been typed.
namespace task_bits {
inline constexpr unsigned pretrain = 1, full = 2, lora = 4, qlora = 8, serve = 16, images = 32;
inline constexpr unsigned lora_family = lora | qlora;                  ///< adapters: --lora-rank, --lora-targets
inline constexpr unsigned training = pretrain | full | lora | qlora;   ///< the training tasks
inline constexpr unsigned all = training | serve | images;             ///< every task (the default)
/// The bit of a task name ("lora" → lora, "image" → images); 0 for a name that is not a task.
unsigned of(std::string_view task) noexcept;
}  // namespace task_bits

/// Where a field may be given.
enum class FieldFace {
  both,      ///< CLI flag and JSON API
  cli_only,  ///< reads a local file (--config, --safetensors): never from the network
};

struct FieldInfo {
  std::string_view name;  ///< JSON name, query-string name; JSON pointer "/name"
  std::string_view flag;  ///< CLI flag "--name", or "" for a positional argument (then `name` in usage)
  FieldType type = FieldType::string;
  FieldFace face = FieldFace::both;
  std::string_view help;  ///< one line; also the OpenAPI description
  /// Another name of the field `alias_of` (kept so existing requests and scripts still work):
  /// read like any field, but not listed in the CLI's --help, which would show one setting twice.
  std::string_view alias_of = {};
  /// The tasks that read the field (task_bits); the others refuse it when it is given.
  unsigned tasks = task_bits::all;
};

template <class Input>
struct FieldDef {
  FieldInfo info;
  /// Sets the field on `in`; `value` has already been checked against info.type. May throw
  /// Error{invalid_input} with an empty where (the reader fills in the field).
  void (*set)(Input& in, const nlohmann::json& value);
};

/// Converts a CLI/query-string text to the JSON value of `type` ("8" → 8, "5e8" → 5e8, "true" →
/// true); throws Error{invalid_input, where} naming the expected form.
nlohmann::json parse_field_text(const FieldInfo& field, std::string_view text, const std::string& where);
/// The text a CLI flag or a query string carries for a JSON value, read back by parse_field_text:
/// an integral number without a fraction (2e8 → "200000000", not "200000000.0"), another number
/// in its shortest round-trip form ("0.5"), true/false, a string as it is.
std::string field_value_text(const nlohmann::json& value);
/// Throws Error{invalid_input, where} unless `value` is of `field.type`.
void check_field_type(const FieldInfo& field, const nlohmann::json& value, const std::string& where);

/// A count: a number, or a string "7e9", "70B", "124M", "1.5T" (case-insensitive suffix K/M/B/T).
double count_value(const nlohmann::json& value);
/// A duration field's value as the CLI's text: a string as it is, a number in its shortest form
/// (72 → "72", 1.5 → "1.5"), which the field's parser reads as a bare number in its own unit.
std::string duration_text(const nlohmann::json& value);

/// An integer field whose range [lo, hi] the request's own validation checks (PlanRequest, the
/// sizing): read as json_as<T>, except that a value above `hi` or below T's minimum (digits beyond
/// what T holds included) is refused here, with that range (trial53 #7: `--tp 99999999999` read
/// "far outside the field's range", no range). Values within T and at most `hi` are left to the
/// later check, whose message names the field's meaning ("tensor-parallel degree 0 ...").
template <class T>
T json_at_most(const nlohmann::json& v, T lo, T hi);

/// Converts an already type-checked JSON number to T (integral T: range-checked), or to T's value
/// type when T is std::optional.
template <class T>
T json_as(const nlohmann::json& v) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
    return v.get<T>();
  } else if constexpr (std::is_integral_v<T>) {
    // A JSON integer (and a CLI's plain digits, parse_field_text) is read exactly, never through
    // a double: "--seq 9007199254740993" was refused as "9007199254740992 is out of range", a
    // value nobody typed (trial11). Above T's range it is refused with its digits as typed.
    auto far = [](const std::string& shown) {
      throw_invalid_coded("", "integer_far_out_of_range", {{"value", shown}},
                          fmt::format("{} is far outside the field's range", shown), "an integer in the field's range");
    };
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (!std::in_range<T>(u)) far(std::to_string(u));
      return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
      const auto i = v.get<std::int64_t>();
      if (!std::in_range<T>(i)) far(std::to_string(i));
      return static_cast<T>(i);
    }
    const double d = v.get<double>();
    // T's max + 1 is 2^digits, exact in a double (T's max itself is not for 64 bits: 2^63 passed a
    // "d > max" test and its cast was undefined).
    if (d < static_cast<double>(std::numeric_limits<T>::min()) || d >= std::ldexp(1.0, std::numeric_limits<T>::digits))
      // Beyond what the field's type holds (1e20 for a 64-bit count): the field's own range check
      // never runs, so the message states no range rather than the machine type's (a trial read
      // "between -9223372036854775808 and 9223372036854775807" on /fr/size?seq=1e20).
      throw_invalid_coded("", "integer_far_out_of_range", {{"value", fmt::format("{}", d)}},
                          fmt::format("{} is far outside the field's range", d), "an integer in the field's range");
    return static_cast<T>(d);
  } else if constexpr (std::is_floating_point_v<T>) {
    return v.get<T>();
  } else {
    return T(json_as<typename T::value_type>(v));  // std::optional<U>
  }
}

template <class T>
T json_at_most(const nlohmann::json& v, T lo, T hi) {
  const double d = v.get<double>();
  if (d > static_cast<double>(hi) || d < static_cast<double>(std::numeric_limits<T>::min()))
    throw_invalid_coded("", "integer_out_of_range",
                        {{"value", field_value_text(v)}, {"min", fmt::format("{}", lo)}, {"max", fmt::format("{}", hi)}},
                        fmt::format("{} is out of range", field_value_text(v)), fmt::format("an integer in [{}, {}]", lo, hi));
  return json_as<T>(v);
}

/// Records that the field `name` was given (a key of the body or query, a CLI flag typed) in
/// `in.given` when the input has such a set: the use case then knows what was typed, not only
/// the values (a default and a typed default look the same).
template <class Input>
void note_given(Input& in, std::string_view name) {
  if constexpr (requires { in.given.insert(std::string(name)); }) in.given.insert(std::string(name));
}

/// Throws Error{invalid_input, the field's flag, code field_not_for_task} for the first field of
/// `table` (in table order) that is in `given` and that `task` ("lora", "serve", ...) does not
/// read (FieldInfo::tasks), e.g. "--concurrency is a serving option; --task lora does not use
/// it" (expected: "drop it, or --task serve"). An unknown task name checks nothing (the task's
/// own parser refuses it).
void check_fields_for_task(const std::set<std::string>& given, std::span<const FieldInfo> table, std::string_view task);
template <class Input>
void check_fields_for_task(const std::set<std::string>& given, std::span<const FieldDef<Input>> table, std::string_view task) {
  std::vector<FieldInfo> infos;
  for (const auto& d : table) infos.push_back(d.info);
  check_fields_for_task(given, std::span<const FieldInfo>(infos), task);
}

/// Which face a request comes from (what read_fields accepts).
enum class Face { cli, api };

/// Reads a JSON object body into `in` strictly: every key must be a field of `table` usable from
/// `face`, of its type. Errors: Error{invalid_input, "/key" or "/" for a non-object body}, naming
/// the expected type or the known fields.
template <class Input>
void read_fields(Input& in, const nlohmann::json& body, std::span<const FieldDef<Input>> table, Face face = Face::api);
/// The same for query-string parameters (every value is text, parsed like a CLI value).
template <class Input>
void read_query(Input& in, const std::multimap<std::string, std::string>& params, std::span<const FieldDef<Input>> table);

/// The field an engine or catalog error's where names ("--micro-batch", "micro_batch", "sort"),
/// searched in every request table; nullptr when none.
const FieldInfo* field_for_where(std::string_view where);
/// The JSON pointer an error is rendered at in the API: "/filter" for a filter-language error,
/// "/name" for a field (from the flag or the name), the where itself when it is already a pointer
/// ("/tokens"), else "" (not a request field).
std::string api_field_of(const Error& e);

/// An engine message or "expected" text in the API's words: a CLI flag ("--heads") becomes its
/// JSON field name ("heads"; from the request tables, else the flag with '-' as '_'), "positional
/// NAME" becomes "name", and a CLI command in back-quotes ("`gpuplan models`", "`gpuplan gpus`",
/// "`gpuplan offers`") the endpoint that answers it ("GET /api/models"), "--json" "the JSON" (the
/// document itself), the filter hint "gpuplan offers --help-fields" "values.all of this error"
/// (an unknown filter field's error lists every field there). Text inside single or
/// double quotes is what the client sent and is left as written. (Issue 10: one table maps each
/// field to its flag and its pointer, "each front end shows its own form".)
std::string api_wording(std::string_view text);

/// How reworded() writes what an engine message names in the CLI's words.
struct Wording {
  /// A "--flag"'s words, given the request field it names (nullptr when no request table has it)
  /// and the flag as written ("--include-flagged").
  std::function<std::string(const FieldInfo* field, std::string_view flag)> field;
  /// Each CLI command or argument name in prose and its words ("`gpuplan gpus`" → "GET /api/gpus").
  /// Each must start with one of '"', '\'', '-', '`', 'p', 'F'.
  std::span<const std::pair<std::string_view, std::string_view>> commands;
  std::string_view json;         ///< the words for "--json" (the document itself)
  std::string_view help_fields;  ///< the words for "gpuplan offers --help-fields" (the list of filter fields)
};
/// `text` with its flags, "--json" and commands written as `wording` says, quoted text left as
/// written: api_wording with another front end's words (the web pages': server/pages.cpp).
std::string reworded(std::string_view text, const Wording& wording);

/// A size, plan or estimate document in the API's words (issue 10: "each front end shows its own
/// form"): every prose string goes through api_wording — the values of "message", "reason",
/// "no_fit", "formula", "recommendation_rule" and "sort_rule", each string of a "suggestions"
/// array, and an explanation line's
/// "source" (a line is an object with a "formula"). Everything else (numbers, codes, names, the
/// client's echoed filter and model, data sources' URLs) is returned unchanged, so the API's
/// document is the CLI's `--json` document with flags written as JSON field names
/// ("--include-flagged" → "include_flagged") and nothing else different.
nlohmann::json api_worded(nlohmann::json doc);

/// Every request table, by request name ("size", "offers", ...), for the OpenAPI document and tests.
struct RequestTable {
  std::string_view request;
  std::vector<FieldInfo> fields;
};
const std::vector<RequestTable>& request_tables();

// ---- implementation of the templates -------------------------------------------------------

namespace detail {
template <class Input>
const FieldDef<Input>* find_field(std::span<const FieldDef<Input>> table, std::string_view name) {
  for (const auto& d : table)
    if (d.info.name == name) return &d;
  return nullptr;
}
std::string known_names(std::span<const FieldInfo> infos, Face face);
/// Throws Error{invalid_input, "/ALIAS", code both_given} when `read` holds a field and the field
/// it is an alias of (FieldInfo::alias_of): `{"stale_days": 3, "max_price_age": "10d"}` is one
/// limit given twice, which the CLI refuses too (cli/api_flags.hpp); the later one silently won.
void check_alias_pairs(const std::set<std::string>& read, std::span<const FieldInfo> infos);
template <class Input>
void check_alias_pairs(const std::set<std::string>& read, std::span<const FieldDef<Input>> table) {
  std::vector<FieldInfo> infos;
  for (const auto& d : table) infos.push_back(d.info);
  check_alias_pairs(read, std::span<const FieldInfo>(infos));
}
template <class Input>
std::string known_names(std::span<const FieldDef<Input>> table, Face face) {
  std::vector<FieldInfo> infos;
  for (const auto& d : table) infos.push_back(d.info);
  return known_names(std::span<const FieldInfo>(infos), face);
}
/// parse_field_text for the field `d`: digits beyond 64 bits (no field holds them) are refused with
/// the field's own accepted range where its setter states one (`--limit 99999999999999999999` read
/// "far outside the field's range", no range; trial50 #19): the setter is tried on a scratch input
/// with ±1e300 and its integer_out_of_range range is quoted with the digits as typed.
template <class Input>
nlohmann::json parse_field_text_ranged(const FieldDef<Input>& d, std::string_view text, const std::string& where) {
  try {
    return parse_field_text(d.info, text, where);
  } catch (const Error& far) {
    const ErrorCode* fc = error_code_of(far);
    if (!fc || fc->code != "integer_far_out_of_range") throw;
    if constexpr (std::is_default_constructible_v<Input>) {
      Input scratch{};
      try {
        d.set(scratch, nlohmann::json(!text.empty() && text[0] == '-' ? -1e300 : 1e300));
      } catch (const Error& ranged) {
        const ErrorCode* rc = error_code_of(ranged);
        if (rc && rc->code == "integer_out_of_range" && rc->values.contains("min") && rc->values.contains("max")) {
          std::map<std::string, std::string> values = rc->values;
          values["value"] = std::string(text);
          throw_invalid_coded(where, "integer_out_of_range", values, fmt::format("{} is out of range", text),
                              ranged.expected());
        }
        if (rc && rc->code == "negative")
          throw_invalid_coded(where, "negative", {{"value", std::string(text)}}, fmt::format("{} is negative", text),
                              ranged.expected());
      }
    }
    throw;
  }
}

template <class Input>
void set_field(Input& in, const FieldDef<Input>& d, const nlohmann::json& v, const std::string& where) {
  try {
    d.set(in, v);
  } catch (const Error& e) {
    if (!e.where().empty()) throw;
    if (const ErrorCode* c = error_code_of(e)) throw CodedError(e.kind(), where, e.message(), e.expected(), c->code, c->values);
    throw Error(e.kind(), where, e.message(), e.expected());
  }
}
}  // namespace detail

template <class Input>
void read_fields(Input& in, const nlohmann::json& body, std::span<const FieldDef<Input>> table, Face face) {
  if (!body.is_object())
    throw_invalid_coded("/", "body_not_object", {}, "the request body must be a JSON object", "{\"field\": value, ...}");
  std::set<std::string> read;
  for (const auto& [key, value] : body.items()) {
    const std::string where = "/" + key;
    const FieldDef<Input>* d = detail::find_field(table, key);
    if (!d || (face == Face::api && d->info.face == FieldFace::cli_only)) {
      throw_invalid_coded(where, d ? "cli_only_field" : "unknown_field", {{"name", key}, {"known", detail::known_names(table, face)}},
                          d ? "this field reads a local file and is only accepted by the CLI" : "unknown field",
                          "one of " + detail::known_names(table, face));
    }
    // null = not given: the field keeps its default, as the answers write a default (training_settings'
    // "moe_dispatcher": null), so an answer's settings can be sent back (trial40 D5).
    if (value.is_null()) continue;
    check_field_type(d->info, value, where);
    detail::set_field(in, *d, value, where);
    note_given(in, d->info.name);
    read.insert(key);
  }
  detail::check_alias_pairs(read, table);
}

template <class Input>
void read_query(Input& in, const std::multimap<std::string, std::string>& params, std::span<const FieldDef<Input>> table) {
  std::string previous;
  std::set<std::string> read;
  for (const auto& [key, text] : params) {
    const std::string where = "/" + key;
    if (key == previous)
      throw_invalid_coded(where, "parameter_twice", {{"name", key}}, "query parameter \"" + key + "\" given twice", "each parameter once");
    previous = key;
    const FieldDef<Input>* d = detail::find_field(table, key);
    if (!d || d->info.face == FieldFace::cli_only)
      throw_invalid_coded(where, "unknown_field", {{"name", key}, {"known", detail::known_names(table, Face::api)}},
                          "unknown query parameter", "one of " + detail::known_names(table, Face::api));
    detail::set_field(in, *d, detail::parse_field_text_ranged(*d, text, where), where);
    note_given(in, d->info.name);
    read.insert(key);
  }
  detail::check_alias_pairs(read, table);
}

}  // namespace gpuplan::api
