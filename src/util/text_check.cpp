#include "util/text_check.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <unordered_set>
#include <vector>

#include "util/error.hpp"
#include "util/error_code.hpp"
#include "util/text_position.hpp"

namespace gpuplan {

std::optional<TextProblem> find_text_problem(std::string_view s, bool allow_newlines) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  auto bad = [&](std::size_t at, const char* what) {
    return TextProblem{at, fmt::format("{} (byte 0x{:02x})", what, static_cast<unsigned>(p[at]))};
  };
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      if (c == '\t' || (allow_newlines && (c == '\n' || c == '\r'))) {
        ++i;
        continue;
      }
      if (c < 0x20 || c == 0x7f) return bad(i, c == 0 ? "NUL byte" : "control character");
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return bad(i, "invalid UTF-8");
    }
    if (i + len > n) return bad(i, "truncated UTF-8 sequence");
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return bad(i, "invalid UTF-8 sequence");
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    auto bad_sequence = [&](const char* what) {
      TextProblem pr = bad(i, what);
      pr.length = len;
      return pr;
    };
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return bad_sequence("overlong UTF-8 sequence");
    if (cp >= 0xD800 && cp <= 0xDFFF) return bad_sequence("UTF-8 encoded surrogate");
    if (cp > 0x10FFFF) return bad_sequence("UTF-8 beyond U+10FFFF");
    if (cp >= 0x80 && cp <= 0x9F) return bad_sequence("C1 control character");
    if (is_bidi_control(cp))
      return TextProblem{i, fmt::format("bidirectional control character U+{:04X}", static_cast<unsigned>(cp)), len};
    i += len;
  }
  return std::nullopt;
}

bool is_bidi_control(std::uint32_t cp) noexcept {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void check_text_file(std::string_view text, const std::string& source, const FieldAt& field_at) {
  if (auto pr = find_text_problem(text, true)) {
    const std::string at = line_col(text, pr->offset);
    const std::string field = field_at ? field_at(pr->offset) : std::string();
    std::map<std::string, std::string> values = {{"position", at}};
    if (!field.empty()) values["field"] = field;
    throw_invalid_coded(fmt::format("{}:{}", source, at), "text_not_clean", std::move(values),
                        field.empty() ? pr->what : fmt::format("{} in {}", pr->what, field),
                        "UTF-8 text without control characters");
  }
}

namespace {
std::string escape_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

bool plain_identifier(std::string_view key) {
  if (key.empty() || (key[0] >= '0' && key[0] <= '9')) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}
}  // namespace

std::string json_place_key(std::string_view parent, std::string_view key, JsonPlaceStyle style) {
  std::string out(parent);
  if (style == JsonPlaceStyle::pointer) {
    out += '/';
    out += escape_pointer_token(key);
  } else if (plain_identifier(key)) {
    if (!out.empty()) out += '.';
    out += key;
  } else {
    out += '[';
    out += dump_json(nlohmann::json(std::string(key)), -1);
    out += ']';
  }
  return out;
}

std::string json_place_index(std::string_view parent, std::size_t index, JsonPlaceStyle style) {
  return style == JsonPlaceStyle::pointer ? fmt::format("{}/{}", parent, index) : fmt::format("{}[{}]", parent, index);
}

std::string json_place_where(const std::string& source, std::string_view place, JsonPlaceStyle style) {
  if (place.empty()) return style == JsonPlaceStyle::pointer ? source + ": /" : source;
  return fmt::format("{}: {}", source, place);
}

namespace {
void walk(const nlohmann::json& j, std::string& place, const std::string& source, JsonPlaceStyle style) {
  auto check = [&](const std::string& s, const char* role) {
    if (auto pr = find_text_problem(s, false)) {
      throw_invalid_coded(json_place_where(source, place, style), "json_text_not_clean",
                          {{"character", std::to_string(pr->offset + 1)}},
                          fmt::format("{} in a JSON {} at character {}", pr->what, role, pr->offset + 1),
                          "UTF-8 text without control characters");
    }
  };
  if (j.is_string()) {
    check(j.get_ref<const std::string&>(), "string");
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      const std::size_t keep = place.size();
      place = json_place_key(place, key, style);
      check(key, "key");
      walk(value, place, source, style);
      place.resize(keep);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      const std::size_t keep = place.size();
      place = json_place_index(place, i, style);
      walk(j[i], place, source, style);
      place.resize(keep);
    }
  }
}
}  // namespace

void check_json_strings(const nlohmann::json& doc, const std::string& source, JsonPlaceStyle style) {
  std::string place;
  walk(doc, place, source, style);
}

namespace {
/// Where the callback parser is: one frame per open array/object.
struct JsonFrame {
  bool object = false;
  std::unordered_set<std::string> keys;  ///< keys seen (objects), for duplicate detection
  std::string key;                ///< current key (objects)
  std::size_t index = 0;          ///< next element index (arrays)
};

std::string place_of(const std::vector<JsonFrame>& stack, bool include_last_key, JsonPlaceStyle style) {
  std::string out;
  for (std::size_t i = 0; i < stack.size(); ++i) {
    const JsonFrame& f = stack[i];
    if (f.object) {
      if (i + 1 < stack.size() || include_last_key) out = json_place_key(out, f.key, style);
    } else if (i + 1 < stack.size()) {
      out = json_place_index(out, f.index, style);
    }
  }
  return out;
}

/// Where the value being read sits: place_of with the innermost key or index too ("/concurrency",
/// "/offers/3").
std::string place_of_value(const std::vector<JsonFrame>& stack, JsonPlaceStyle style) {
  std::string out = place_of(stack, true, style);
  if (!stack.empty() && !stack.back().object) out = json_place_index(out, stack.back().index, style);
  return out;
}

void element_done(std::vector<JsonFrame>& stack) {
  if (!stack.empty() && !stack.back().object) ++stack.back().index;
}
}  // namespace

namespace {
nlohmann::json parse_strict(std::string_view text, const std::string& source, std::string_view array_key,
                            const JsonElementSink& sink, JsonPlaceStyle style) {
  using json = nlohmann::json;
  std::vector<JsonFrame> stack;
  // True when the value that just ended (stack already popped for an *_end event) is an element
  // of the top-level object's array `array_key`: handed to the sink, then discarded.
  auto streamed_element = [&](json& parsed) {
    if (!sink || stack.size() != 2 || !stack[0].object || stack[0].key != array_key || stack[1].object) return false;
    std::string place = json_place_index(json_place_key("", stack[0].key, style), stack[1].index, style);
    walk(parsed, place, source, style);
    sink(stack[1].index, parsed);
    return true;
  };
  json::parser_callback_t cb = [&](int /*depth*/, json::parse_event_t event, json& parsed) -> bool {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (stack.size() >= kMaxJsonDepth)
          throw_invalid_coded(json_place_where(source, place_of(stack, true, style), style), "json_too_deep",
                              {{"max", std::to_string(kMaxJsonDepth)}},
                              fmt::format("JSON nests more than {} levels deep", kMaxJsonDepth), "a flatter document");
        stack.push_back(JsonFrame{event == json::parse_event_t::object_start, {}, {}, 0});
        break;
      case json::parse_event_t::key: {
        JsonFrame& f = stack.back();
        const std::string& k = parsed.get_ref<const std::string&>();
        f.key = k;
        if (!f.keys.insert(k).second)
          throw_invalid_coded(json_place_where(source, place_of(stack, true, style), style), "json_duplicate_key", {{"key", k}},
                              fmt::format("duplicate key \"{}\"", k), "each key once per object");
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end: {
        if (!stack.empty()) stack.pop_back();
        const bool streamed = streamed_element(parsed);
        element_done(stack);
        return !streamed;
      }
      case json::parse_event_t::value: {
        const bool streamed = streamed_element(parsed);
        element_done(stack);
        return !streamed;
      }
    }
    return true;
  };
  // nlohmann's message quotes the bytes it last read ("last read: '\"lla<0xff>'"): those are
  // shown as \xNN, so an error never prints a raw invalid or control byte (trial11).
  auto shown_clean = [](std::string_view raw) {
    std::string out;
    while (!raw.empty()) {
      const std::optional<TextProblem> bad = find_text_problem(raw, false);
      if (!bad) {
        out += raw;
        break;
      }
      out += raw.substr(0, bad->offset);
      const std::size_t n = std::min(std::max<std::size_t>(bad->length, 1), raw.size() - bad->offset);
      for (std::size_t i = 0; i < n; ++i)
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(raw[bad->offset + i]));
      raw.remove_prefix(bad->offset + n);
    }
    return out;
  };
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), cb);
  } catch (const json::parse_error& e) {
    const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    std::string what = shown_clean(e.what());
    if (auto pos = what.find("syntax error"); pos != std::string::npos) what = what.substr(pos);
    const std::string at = line_col(text, offset);
    throw_invalid_coded(fmt::format("{}:{}", source, at), "json_malformed", {{"position", at}},
                        fmt::format("malformed JSON: {}", what), "valid JSON (RFC 8259)");
  } catch (const json::out_of_range& e) {
    // 406 "number overflow parsing '1e400'": nlohmann gives no position; find the token.
    std::string what = e.what();
    std::size_t offset = text.size();
    const auto q1 = what.find('\'');
    const auto q2 = what.rfind('\'');
    if (q1 != std::string::npos && q2 > q1 + 1) {
      const std::string token = what.substr(q1 + 1, q2 - q1 - 1);
      if (auto at = text.find(token); at != std::string_view::npos) offset = at;
    }
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    const std::string at = line_col(text, offset);
    // The field it was given for, as the other refusals name it ({"concurrency": 1e400} at
    // /concurrency, not at "/"; trial50 #19); the line and column stay in the message.
    const std::string place = place_of_value(stack, style);
    if (!place.empty())
      throw_invalid_coded(json_place_where(source, place, style), "json_number_out_of_range", {{"position", at}},
                          fmt::format("JSON number out of range at line:column {}: {}", at, what),
                          "a number within ±1.8e308");
    throw_invalid_coded(fmt::format("{}:{}", source, at), "json_number_out_of_range", {{"position", at}},
                        fmt::format("JSON number out of range: {}", what), "a number within ±1.8e308");
  } catch (const json::exception& e) {
    throw_invalid_coded(source, "json_unreadable", {}, fmt::format("malformed JSON: {}", shown_clean(e.what())),
                        "valid JSON (RFC 8259)");
  }
  check_json_strings(doc, source, style);
  return doc;
}
}  // namespace

nlohmann::json parse_json_strict(std::string_view text, const std::string& source, JsonPlaceStyle style) {
  return parse_strict(text, source, {}, {}, style);
}

nlohmann::json parse_json_strict(std::string_view text, const std::string& source, std::string_view array_key,
                                 const JsonElementSink& sink) {
  return parse_strict(text, source, array_key, sink, JsonPlaceStyle::pointer);
}

std::string dump_json(const nlohmann::json& doc, int indent) {
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<double> parse_decimal(std::string_view t) noexcept {
  std::size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
  const std::size_t int_start = i;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  std::size_t digits = i - int_start;
  if (i < t.size() && t[i] == '.') {
    ++i;
    const std::size_t frac_start = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    digits += i - frac_start;
  }
  if (digits == 0) return std::nullopt;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    const std::size_t exp_start = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == exp_start) return std::nullopt;
  }
  if (i != t.size()) return std::nullopt;
  const std::size_t start = (t[0] == '+') ? 1 : 0;
  double v = 0;
  const auto res = std::from_chars(t.data() + start, t.data() + t.size(), v, std::chars_format::general);
  if (res.ec != std::errc() || res.ptr != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::string> decimal_integer_digits(std::string_view t, int scale10) {
  std::size_t i = 0;
  bool negative = false;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) negative = t[i++] == '-';
  std::string mantissa;  // every digit written, the point dropped
  long exponent = scale10;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') mantissa += t[i++];
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      mantissa += t[i++];
      --exponent;
    }
  }
  if (mantissa.empty()) return std::nullopt;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) exp_negative = t[i++] == '-';
    if (i == t.size()) return std::nullopt;
    long e = 0;
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) e = std::min(e * 10 + (t[i] - '0'), 100000L);
    exponent += exp_negative ? -e : e;
  }
  if (i != t.size()) return std::nullopt;
  const std::size_t first = mantissa.find_first_not_of('0');
  if (first == std::string::npos) return std::string("0");
  mantissa.erase(0, first);
  if (exponent < 0) {  // the last -exponent digits are the fraction: all zeros, or not a whole number
    const auto drop = static_cast<std::size_t>(-exponent);
    if (drop >= mantissa.size() || mantissa.find_first_not_of('0', mantissa.size() - drop) != std::string::npos)
      return std::nullopt;
    mantissa.erase(mantissa.size() - drop);
  } else {
    if (mantissa.size() + static_cast<std::size_t>(exponent) > 400) return std::nullopt;
    mantissa.append(static_cast<std::size_t>(exponent), '0');
  }
  return negative ? "-" + mantissa : mantissa;
}

bool double_is_exactly(double value, const std::string& digits) {
  if (!std::isfinite(value)) return false;
  std::string shown = fmt::format("{:.0f}", value);
  if (shown == "-0") shown = "0";
  return shown == digits;
}

std::string echo_clip(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t end = max_bytes;
  // Back to the start of a character: continuation bytes are 10xxxxxx.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "…";
}

}  // namespace gpuplan
