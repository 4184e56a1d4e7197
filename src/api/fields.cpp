#include "api/fields.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "catalog/filter.hpp"
#include "util/text_check.hpp"

namespace gpuplan::api {

std::string_view field_type_name(FieldType t) noexcept {
  switch (t) {
    case FieldType::boolean: return "boolean";
    case FieldType::integer: return "integer";
    case FieldType::number: return "number";
    case FieldType::string: return "string";
    case FieldType::count: return "count";
    case FieldType::duration: return "duration";
  }
  return "string";
}

namespace {

std::string_view expected_of(FieldType t) {
  switch (t) {
    case FieldType::boolean: return "true or false";
    case FieldType::integer: return "an integer";
    case FieldType::number: return "a number such as 5e8 or 0.1";
    case FieldType::string: return "a string";
    case FieldType::count: return "a number such as 7e9, or a string such as \"70B\", \"124M\", \"1.5T\"";
    case FieldType::duration: return "a duration such as \"72h\", \"30d\", \"2w\", or a bare number in the field's unit";
  }
  return "";
}

std::optional<double> strict_double(std::string_view text) {
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(0, 1);
  if (s.empty()) return std::nullopt;
  // Decimal numbers only (issue 11): strtod also reads hex ("0x10" → 16), hex floats, "inf" and
  // "nan"; a request field takes digits, one sign, a point and an exponent (util/text_check.hpp).
  return parse_decimal(s);
}

/// A count (tokens, requests, images, parameters) is held as a double, exact for every whole
/// number up to 2^53 = 9007199254740992 and beyond it only for some: a count typed that the double
/// does not hold exactly is refused with the value as typed (issue 11: `plan --requests
/// 9007199254740993` was refused as "9.0072e+15", `ask` echoed 9007199254740993 tokens as
/// ...992), never rounded to a neighbour nobody typed. `where` "": the caller's field (set_field).
void require_exact_count(double value, const std::string& digits, const std::string& as_typed, const std::string& where) {
  if (double_is_exactly(value, digits)) return;
  throw_invalid_coded(where, "count_not_exact", {{"value", as_typed}, {"max", "9007199254740992"}},
                      fmt::format("{} is not held exactly: above 9007199254740992 (2^53) a count keeps about 16 "
                                  "significant digits",
                                  as_typed),
                      "a count of at most 9007199254740992, or one with fewer significant digits (1e16)");
}

std::optional<double> count_text(std::string_view text, const std::string& where) {
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  double scale = 1;
  int scale10 = 0;
  if (!s.empty()) {
    switch (std::tolower(static_cast<unsigned char>(s.back()))) {
      case 'k': scale = 1e3, scale10 = 3; break;
      case 'm': scale = 1e6, scale10 = 6; break;
      case 'b': scale = 1e9, scale10 = 9; break;
      case 't': scale = 1e12, scale10 = 12; break;
      default: break;
    }
    if (scale != 1) s.pop_back();
  }
  auto v = strict_double(s);
  if (!v) return std::nullopt;
  std::string bare = s;  // strict_double's trimming, for the exact reading
  while (!bare.empty() && std::isspace(static_cast<unsigned char>(bare.front()))) bare.erase(0, 1);
  // A whole number ("9007199254740993", "1.5T", "2e12") is read from its exact digits, so the
  // double is the nearest one to what was typed (1.1M was 1.1 × 1e6 = 1100000.0000000002 before),
  // and refused when that double is not it.
  if (const auto digits = decimal_integer_digits(bare, scale10)) {
    if (const auto exact = parse_decimal(*digits)) {
      std::string typed(text);
      while (!typed.empty() && std::isspace(static_cast<unsigned char>(typed.back()))) typed.pop_back();
      while (!typed.empty() && std::isspace(static_cast<unsigned char>(typed.front()))) typed.erase(0, 1);
      require_exact_count(*exact, *digits, typed, where);
      return *exact;
    }
  }
  return *v * scale;
}

}  // namespace

double count_value(const nlohmann::json& value) {
  // A JSON integer is read exactly (nlohmann keeps its 64 bits): refused when no double is it.
  if (value.is_number_unsigned() || value.is_number_integer()) {
    const std::string digits = value.is_number_unsigned() ? std::to_string(value.get<std::uint64_t>())
                                                          : std::to_string(value.get<std::int64_t>());
    const double v = value.get<double>();
    require_exact_count(v, digits, digits, "");
    return v;
  }
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    if (auto v = count_text(value.get<std::string>(), "")) return *v;
  }
  throw_invalid_coded("", "not_count", {{"value", value.is_string() ? value.get<std::string>() : value.dump()}},
                      "cannot read this as a count", std::string(expected_of(FieldType::count)));
}

std::string duration_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : field_value_text(value);
}

nlohmann::json parse_field_text(const FieldInfo& field, std::string_view text, const std::string& where) {
  auto bad = [&]() -> nlohmann::json {
    throw_invalid_coded(where, "not_" + std::string(field_type_name(field.type)), {{"value", std::string(text)}},
                        fmt::format("'{}' is not {}", text, field.type == FieldType::integer   ? "an integer"
                                                            : field.type == FieldType::boolean ? "true or false"
                                                                                                : "a " + std::string(field_type_name(field.type))),
                        std::string(expected_of(field.type)));
  };
  switch (field.type) {
    case FieldType::boolean:
      if (text == "true" || text == "1" || text.empty()) return true;
      if (text == "false" || text == "0") return false;
      return bad();
    case FieldType::integer: {
      auto v = strict_double(text);
      if (!v || std::floor(*v) != *v) return bad();
      if (std::abs(*v) < 9e15) return static_cast<std::int64_t>(*v);
      // Above 2^53 a double drops the last digits: "--gpus 9007199254740993" was refused as
      // "9007199254740992 is out of range" (trial11). Plain digits that fit 64 bits stay exact,
      // as the JSON API reads them, so the range check echoes the value as typed.
      // (from_chars reads an optional '-' and digits only: "1e16" stops at the 'e' and stays a double.)
      {
        const std::string_view t = text[0] == '+' ? text.substr(1) : text;  // strict_double read text: not empty
        std::int64_t i = 0;
        const auto res = std::from_chars(t.data(), t.data() + t.size(), i);
        if (res.ec == std::errc() && res.ptr == t.data() + t.size()) return i;
        std::uint64_t u = 0;
        const auto res_u = std::from_chars(t.data(), t.data() + t.size(), u);
        if (res_u.ec == std::errc() && res_u.ptr == t.data() + t.size()) return u;
        // Plain digits beyond 64 bits: no field holds them; refused with the digits as typed
        // (through a double, 99999999999999999999 was echoed as "1e+20").
        if (res.ptr == t.data() + t.size() && res.ec == std::errc::result_out_of_range)
          throw_invalid_coded(where, "integer_far_out_of_range", {{"value", std::string(text)}},
                              fmt::format("{} is far outside the field's range", text), "an integer in the field's range");
      }
      return *v;
    }
    case FieldType::number: {
      auto v = strict_double(text);
      if (!v) return bad();
      return *v;
    }
    case FieldType::count: {
      auto v = count_text(text, where);
      if (!v) return bad();
      return *v;
    }
    case FieldType::string:
    case FieldType::duration: return std::string(text);  // the field's own parser reads the unit
  }
  return bad();
}

std::string field_value_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (std::isfinite(v) && std::floor(v) == v && std::abs(v) < 1e18) return fmt::format("{:.0f}", v);
    return fmt::format("{}", v);
  }
  return value.dump();
}

void check_field_type(const FieldInfo& field, const nlohmann::json& value, const std::string& where) {
  bool ok = false;
  switch (field.type) {
    case FieldType::boolean: ok = value.is_boolean(); break;
    case FieldType::integer:
      ok = value.is_number_integer() || (value.is_number_float() && std::isfinite(value.get<double>()) &&
                                         std::floor(value.get<double>()) == value.get<double>());
      break;
    case FieldType::number: ok = value.is_number() && std::isfinite(value.get<double>()); break;
    case FieldType::string: ok = value.is_string(); break;
    case FieldType::count:
    case FieldType::duration: ok = (value.is_number() && std::isfinite(value.get<double>())) || value.is_string(); break;
  }
  if (!ok) {
    std::string shown = value.dump();
    if (shown.size() > 40) shown = shown.substr(0, 40) + "…";
    throw_invalid_coded(where, "not_" + std::string(field_type_name(field.type)), {{"value", shown}},
                        fmt::format("expected {}, got {}", field_type_name(field.type), value.type_name()),
                        std::string(expected_of(field.type)));
  }
}

std::string detail::known_names(std::span<const FieldInfo> infos, Face face) {
  std::string out;
  for (const auto& f : infos) {
    if (face == Face::api && f.face == FieldFace::cli_only) continue;
    out += (out.empty() ? "" : ", ") + std::string(f.name);
  }
  return out;
}

void detail::check_alias_pairs(const std::set<std::string>& read, std::span<const FieldInfo> infos) {
  for (const FieldInfo& alias : infos) {
    if (alias.alias_of.empty() || !read.contains(std::string(alias.name)) || !read.contains(std::string(alias.alias_of))) continue;
    const FieldInfo* main = nullptr;
    for (const FieldInfo& f : infos)
      if (f.name == alias.alias_of) main = &f;
    // The words of the CLI's refusal of the same pair (cli/command.cpp), in the API's names.
    throw_invalid_coded("/" + std::string(alias.name), "both_given",
                        {{"a_field", std::string(alias.name)}, {"b_field", std::string(alias.alias_of)}},
                        fmt::format("both {} and {} given; they set the same thing", alias.flag, main ? main->flag : alias.alias_of),
                        "one of them");
  }
}

unsigned task_bits::of(std::string_view task) noexcept {
  if (task == "pretrain") return pretrain;
  if (task == "full") return full;
  if (task == "lora") return lora;
  if (task == "qlora") return qlora;
  if (task == "serve") return serve;
  if (task == "images" || task == "image") return images;  // plan takes both (api/plan.cpp)
  return 0;
}

namespace {
/// The tasks of a bit set, as --task takes them: "serve", "lora or qlora", "pretrain, full, lora or qlora".
std::string task_list(unsigned tasks, std::string_view last_sep) {
  std::vector<std::string_view> names;
  for (const auto& [bit, name] : {std::pair{task_bits::pretrain, "pretrain"}, std::pair{task_bits::full, "full"},
                                  std::pair{task_bits::lora, "lora"}, std::pair{task_bits::qlora, "qlora"},
                                  std::pair{task_bits::serve, "serve"}, std::pair{task_bits::images, "images"}})
    if (tasks & bit) names.emplace_back(name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == names.size() ? last_sep : ", ") + std::string(names[i]);
  return out;
}
/// "a serving option", "a LoRA option", ... (what kind of option a field of these tasks is).
std::string option_kind(unsigned tasks) {
  if (tasks == task_bits::serve) return "a serving option";
  if (tasks == task_bits::images) return "an image-generation option";
  if (tasks == task_bits::training) return "a training option";
  if (tasks == task_bits::lora_family) return "a LoRA option (lora, qlora)";
  return "an option of --task " + task_list(tasks, " and ");
}
}  // namespace

void check_fields_for_task(const std::set<std::string>& given, std::span<const FieldInfo> table, std::string_view task) {
  const unsigned bit = task_bits::of(task);
  if (bit == 0) return;
  for (const FieldInfo& f : table) {
    if ((f.tasks & bit) != 0 || !given.contains(std::string(f.name))) continue;
    const std::string shown = f.flag.empty() ? std::string(f.name) : std::string(f.flag);
    throw_invalid_coded(shown, "field_not_for_task",
                        {{"a_field", std::string(f.name)}, {"task", std::string(task)}, {"tasks", task_list(f.tasks, ", ")}},
                        fmt::format("{} is {}; --task {} does not use it", shown, option_kind(f.tasks), task),
                        fmt::format("drop it, or --task {}{}", task_list(f.tasks, " or "),
                                    // --quant is the served weights; training on 4-bit weights is QLoRA.
                                    f.name == "quant" && (bit & task_bits::training) ? " (4-bit weights while training: --task qlora)" : ""));
  }
}

const FieldInfo* field_for_where(std::string_view where) {
  if (where.empty()) return nullptr;
  for (const auto& t : request_tables()) {
    for (const auto& f : t.fields) {
      if ((!f.flag.empty() && f.flag == where) || f.name == where) return &f;
    }
  }
  return nullptr;
}

namespace {
/// The CLI's command and argument names in prose and their API forms (the other rewording is a
/// "--flag", by the field table).
constexpr std::pair<std::string_view, std::string_view> kCommands[] = {
    {"`gpuplan models`", "GET /api/models"}, {"`gpuplan gpus`", "GET /api/gpus"}, {"`gpuplan offers`", "GET /api/offers"},
    {"`gpuplan import FILE`", "POST /api/import"}, {"`gpuplan import`", "POST /api/import"},
    // The model sources (model/model_source.cpp): --config and --safetensors read local files,
    // which the API refuses (model_fields.hpp: cli_only), so its wording offers only the others.
    {"--model PRESET, --config config.json, --safetensors FILE, --params N", "model PRESET or params N"},
    {"--model, --config, --safetensors, --params", "model, params"},
    {"positional NAME", "name"},
    // The plan's positional argument is the request's `filter` field ("widen the FILTER").
    {"FILTER", "filter"}};
/// What precedes "--help-fields" in the filter language's "all fields" hint.
constexpr std::string_view kHelpFieldsCommand = "gpuplan offers ";
}  // namespace

std::string api_wording(std::string_view text) {
  static const Wording kApi{[](const FieldInfo* f, std::string_view flag) {
                              if (f) return std::string(f->name);
                              std::string name(flag.substr(2));
                              std::replace(name.begin(), name.end(), '-', '_');
                              return name;
                            },
                            kCommands, "the JSON", "values.all of this error"};
  return reworded(text, kApi);
}

std::string reworded(std::string_view text, const Wording& wording) {
  std::string out;
  out.reserve(text.size());
  char quote = 0;  // inside '...' or "...": the client's own text
  // Only these characters can start something to reword or a quote ("--flag", "`gpuplan ...`",
  // "positional NAME", "FILTER", '...', "..."): the runs between them are copied whole (a per-character
  // scan that tried every replacement at every character was ~3% of a distinct plan's work).
  static constexpr std::string_view kStarts = "\"'-`pF";
  static_assert(std::ranges::all_of(kCommands, [](const auto& c) { return kStarts.find(c.first.front()) != kStarts.npos; }),
                "every kCommands entry must start with one of kStarts");
  assert(std::ranges::all_of(wording.commands, [](const auto& c) { return kStarts.find(c.first.front()) != kStarts.npos; }));
  for (std::size_t i = 0; i < text.size();) {
    if (quote != 0) {
      const std::size_t close = text.find(quote, i);
      const std::size_t end = close == std::string_view::npos ? text.size() : close + 1;
      out.append(text.substr(i, end - i));
      if (close != std::string_view::npos) quote = 0;
      i = end;
      continue;
    }
    const std::size_t next = text.find_first_of(kStarts, i);
    if (next == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    if (next > i) {
      out.append(text.substr(i, next - i));
      i = next;
    }
    const char c = text[i];
    // An apostrophe inside a word ("can't") does not open a quote.
    if (c == '"' || (c == '\'' && (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))))) {
      quote = c;
      out += c;
      ++i;
      continue;
    }
    // Whole phrases first: some start with a flag ("--model PRESET, --config ...").
    bool replaced = false;
    for (const auto& [cli, words] : wording.commands) {
      if (text.substr(i, cli.size()) == cli) {
        out += words;
        i += cli.size();
        replaced = true;
        break;
      }
    }
    if (replaced) continue;
    if (c == '-' && i + 2 < text.size() && text[i + 1] == '-' && std::islower(static_cast<unsigned char>(text[i + 2])) &&
        (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])))) {
      std::size_t end = i + 2;
      while (end < text.size() && (std::islower(static_cast<unsigned char>(text[end])) || std::isdigit(static_cast<unsigned char>(text[end])) ||
                                   (text[end] == '-' && end + 1 < text.size() && std::islower(static_cast<unsigned char>(text[end + 1])))))
        ++end;
      const std::string_view flag = text.substr(i, end - i);
      if (flag == "--json") {
        out += wording.json;  // "(all in --json: warnings[].values.gpus)": this very document
      } else if (flag == "--help-fields" && out.ends_with(kHelpFieldsCommand)) {
        // "(all fields: gpuplan offers --help-fields)" (catalog/filter.cpp) read "gpuplan offers
        // help_fields" in the API (trial of issue 10, D9a): the error's own values.all lists them.
        out.resize(out.size() - kHelpFieldsCommand.size());
        out += wording.help_fields;
      } else {
        out += wording.field(field_for_where(flag), flag);
      }
      i = end;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

namespace {
/// Whether api_wording can change `text`: only a "--" (a flag) or one of kCommands is reworded;
/// quotes alone change nothing. Most prose strings of a plan have none, and are then left in
/// place instead of copied.
bool may_reword(std::string_view text) {
  if (text.find("--") != std::string_view::npos) return true;
  for (const auto& [cli, api] : kCommands)
    if (text.find(cli) != std::string_view::npos) return true;
  return false;
}

void reword(nlohmann::json& v) {
  const std::string& s = v.get_ref<const std::string&>();
  if (may_reword(s)) v = api_wording(s);
}

void word_prose(nlohmann::json& node) {
  if (node.is_array()) {
    for (auto& v : node) word_prose(v);
    return;
  }
  if (!node.is_object()) return;
  const bool explanation_line = node.contains("formula");
  for (auto& [key, v] : node.items()) {
    const bool prose = key == "message" || key == "reason" || key == "no_fit" || key == "formula" ||
                       key == "recommendation_rule" || key == "sort_rule" || (key == "source" && explanation_line);
    if (prose && v.is_string()) {
      reword(v);
    } else if (key == "suggestions" && v.is_array()) {
      for (auto& s : v)
        if (s.is_string()) reword(s);
    } else {
      word_prose(v);
    }
  }
}
}  // namespace

nlohmann::json api_worded(nlohmann::json doc) {
  word_prose(doc);
  return doc;
}

std::string api_field_of(const Error& e) {
  if (dynamic_cast<const FilterError*>(&e)) return "/filter";  // offers' filter and plan's filter share the name
  const std::string& w = e.where();
  if (!w.empty() && w.front() == '/') return w;
  if (const FieldInfo* f = field_for_where(w)) return "/" + std::string(f->name);
  return "";
}

}  // namespace gpuplan::api
