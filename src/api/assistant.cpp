#include "api/assistant.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>

#include "api/plan.hpp"
#include "model/presets.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"
#include "util/text_check.hpp"

namespace gpuplan::api {

using nlohmann::json;

namespace {

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool has(const std::string& text, std::string_view word) { return text.find(word) != std::string::npos; }

bool has_any(const std::string& text, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return has(text, w); });
}

std::string guess_language(const std::string& low) {
  for (std::size_t i = 0; i + 1 < low.size(); ++i) {
    const auto a = static_cast<unsigned char>(low[i]), b = static_cast<unsigned char>(low[i + 1]);
    if (a == 0xE0 && (b == 0xB8 || b == 0xB9)) return "th";  // U+0E00–U+0E7F
  }
  if (has_any(low, {"jetons", "jours", "heures", "moins de", "affiner", "servir", "avec ", "pour ", "semaine", " de ",
                    " sur ", "demain", "\xc3\xa9", "\xc3\xa8", "\xc3\xa0", "\xc3\xae"}))  // é è à î ("entraîner")
    return "fr";
  return "en";
}

/// "1,5" (French decimal) or "200,000" (English thousands) → a double. A number a double cannot
/// hold ("1e999") is Error{invalid_input} at "question" naming it (a trial found `ask` ending in
/// "internal error: stod", exit 70).
/// A number as read_number reads it, spaces and group commas dropped: "200,000" → "200000", a
/// French "1,5" → "1.5".
std::string plain_number_text(std::string text, const std::string& language) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  if (language == "fr" && std::regex_match(text, std::regex(R"(\d+,\d{1,2})"))) {
    std::replace(text.begin(), text.end(), ',', '.');
  } else {
    text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  }
  return text;
}

double read_number(std::string text, const std::string& language) {
  const std::string as_written = text;
  text = plain_number_text(std::move(text), language);
  // "10^30", "10**30": a power of ten as the field writes huge counts (a trial's "10^30 tokens"
  // was read as "30 tokens" and planned). Read whole, so the planner's range check sees it.
  for (std::string_view op : {"**", "^"}) {
    if (const auto at = text.find(op); at != std::string::npos) {
      const double power = std::pow(read_number(text.substr(0, at), language), read_number(text.substr(at + op.size()), language));
      if (!std::isfinite(power))
        throw_invalid_coded("question", "question_number_out_of_range", {{"value", as_written}},
                            fmt::format("the number \"{}\" is out of range", as_written), "a number below 1e300, e.g. 5e8 or 500 million");
      return power;
    }
  }
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v))
    throw_invalid_coded("question", "question_number_out_of_range", {{"value", as_written}},
                        fmt::format("the number \"{}\" is out of range", as_written), "a number below 1e300, e.g. 5e8 or 500 million");
  return v;
}

/// value × scale, refused like read_number when the product overflows ("1e300 billion").
double scaled(double value, double scale, const std::string& as_written) {
  const double v = value * scale;
  if (!std::isfinite(v))
    throw_invalid_coded("question", "question_number_out_of_range", {{"value", as_written}},
                        fmt::format("the number \"{}\" is out of range", as_written), "a number below 1e300, e.g. 5e8 or 500 million");
  return v;
}

/// The number `text` times `scale` as JSON, for a field the plan reads as a whole number: a whole
/// number written in digits, times a power of ten ("9007199254740993", "1.5 billion", "5e8"), that
/// fits 64 bits is a JSON integer with every digit; anything else (a fraction, a power "10^30",
/// 8k = 8 × 1024) the double scaled() gives. Through a double, `ask` echoed 9007199254740993 tokens
/// as 9,007,199,254,740,992, a number nobody typed (issue 11); the planner now refuses a count no
/// double holds exactly (api/fields.cpp count_not_exact), naming the field.
json exact_number(const std::string& text, double scale, const std::string& as_written, const std::string& language) {
  const double v = scaled(read_number(text, language), scale, as_written);  // its refusals first
  const std::string t = plain_number_text(text, language);
  if (t.find('^') != std::string::npos || t.find('*') != std::string::npos) return v;
  int scale10 = 0;
  for (double s = scale; s >= 10 && scale10 < 30; s /= 10) ++scale10;
  if (std::pow(10.0, scale10) != scale) return v;
  const auto digits = decimal_integer_digits(t, scale10);
  if (!digits) return v;
  std::int64_t i = 0;
  const auto [p, ec] = std::from_chars(digits->data(), digits->data() + digits->size(), i);
  if (ec != std::errc() || p != digits->data() + digits->size()) return v;
  return i;
}

/// `lang` "fr": "billion(s)" is 10^12 (the long scale French uses; "milliard" is 10^9); trial10d
/// found "1,5 billion de jetons" read as 1.5 × 10^9.
double scale_of(const std::string& unit, std::string_view lang = {}) {
  if (unit.empty()) return 1;
  if (lang == "fr" && unit.rfind("billion", 0) == 0) return 1e12;
  if (unit == "k" || unit == "thousand" || unit == "mille" || unit == "\xe0\xb8\x9e\xe0\xb8\xb1\xe0\xb8\x99") return 1e3;  // พัน
  if (unit == "\xe0\xb8\xab\xe0\xb8\xa1\xe0\xb8\xb7\xe0\xb9\x88\xe0\xb8\x99") return 1e4;                                   // หมื่น
  if (unit == "\xe0\xb9\x81\xe0\xb8\xaa\xe0\xb8\x99") return 1e5;                                                            // แสน
  if (unit == "m" || unit.rfind("million", 0) == 0 || unit == "\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99") return 1e6;  // ล้าน
  if (unit == "b" || unit == "bn" || unit.rfind("billion", 0) == 0 || unit.rfind("milliard", 0) == 0 ||
      unit == "\xe0\xb8\x9e\xe0\xb8\xb1\xe0\xb8\x99\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99")  // พันล้าน
    return 1e9;
  if (unit == "t" || unit.rfind("trillion", 0) == 0 ||
      unit == "\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99")  // ล้านล้าน (a million millions)
    return 1e12;
  return 1;
}

/// Small number words used with durations ("two days", "deux jours", "สอง วัน").
const std::vector<std::pair<std::string, int>>& number_words() {
  static const std::vector<std::pair<std::string, int>> words = {
      {"one", 1},   {"two", 2},    {"three", 3},   {"four", 4},   {"five", 5},   {"six", 6},    {"seven", 7},
      {"eight", 8}, {"nine", 9},   {"ten", 10},    {"un", 1},     {"une", 1},    {"deux", 2},   {"trois", 3},
      {"quatre", 4}, {"cinq", 5},  {"sept", 7},    {"huit", 8},   {"neuf", 9},   {"dix", 10},
      {"\xe0\xb8\xab\xe0\xb8\x99\xe0\xb8\xb6\xe0\xb9\x88\xe0\xb8\x87", 1},  // หนึ่ง
      {"\xe0\xb8\xaa\xe0\xb8\xad\xe0\xb8\x87", 2},                          // สอง
      {"\xe0\xb8\xaa\xe0\xb8\xb2\xe0\xb8\xa1", 3},                          // สาม
      {"\xe0\xb8\xaa\xe0\xb8\xb5\xe0\xb9\x88", 4},                          // สี่
      {"\xe0\xb8\xab\xe0\xb9\x89\xe0\xb8\xb2", 5},                          // ห้า
      {"\xe0\xb8\xaa\xe0\xb8\xb4\xe0\xb8\x9a", 10},                         // สิบ
  };
  return words;
}

const std::string kScaleWords =
    "k|m|b|t|thousand|millions?|billions?|trillions?|milliards?|mille|"
    "\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99|"  // ล้านล้าน (before ล้าน)
    "\xe0\xb8\x9e\xe0\xb8\xb1\xe0\xb8\x99\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99|"  // พันล้าน
    "\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99|"                                      // ล้าน
    "\xe0\xb9\x81\xe0\xb8\xaa\xe0\xb8\x99|"                                                  // แสน
    "\xe0\xb8\xab\xe0\xb8\xa1\xe0\xb8\xb7\xe0\xb9\x88\xe0\xb8\x99|"                          // หมื่น
    "\xe0\xb8\x9e\xe0\xb8\xb1\xe0\xb8\x99";                                                  // พัน
/// A number as written: digits with "," or "." groups, an exponent ("5e8") or a power ("10^30",
/// "10**30"); French digit groups ("1 000") are joined before (join_digit_groups).
const std::string kNumber = R"((\d+(?:[.,]\d+)*(?:e\d+|\s*(?:\^|\*\*)\s*\d+)?))";

/// U+00A0 (no-break space), U+202F (narrow no-break space, what French typography and our fr
/// locale print between digit groups) and U+2009 (thin space) as a plain space, so that every
/// reader sees "1 000 $" however it was typed.
std::string plain_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.substr(i, 2) == "\xc2\xa0") {
      out += ' ';
      ++i;
    } else if (s.substr(i, 3) == "\xe2\x80\xaf" || s.substr(i, 3) == "\xe2\x80\x89") {
      out += ' ';
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

/// French thousands: "1 000", "200 000 000" (a first group of 1 to 3 digits, then groups of exactly
/// 3 digits after one space) joined as "1000", "200000000" (a trial: "moins de 1 000 $" was read as
/// a budget of "000 $"). A group run glued to a letter or digit ("llama 3 405b") is left as it is.
std::string join_digit_groups(const std::string& s) {
  const auto digit = [&](std::size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0; };
  const auto glued = [&](std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    return std::isalnum(c) != 0 || c == '.' || c == ',' || c == '_';
  };
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (!digit(i) || (i > 0 && glued(i - 1))) {
      out += s[i++];
      continue;
    }
    std::size_t end = i;
    while (digit(end)) ++end;
    std::size_t groups_end = end;
    if (end - i <= 3)
      while (groups_end < s.size() && s[groups_end] == ' ' && digit(groups_end + 1) && digit(groups_end + 2) &&
             digit(groups_end + 3) && !digit(groups_end + 4))
        groups_end += 4;
    if (groups_end > end && (groups_end == s.size() || !std::isalpha(static_cast<unsigned char>(s[groups_end])))) {
      for (std::size_t k = i; k < groups_end; ++k)
        if (s[k] != ' ') out += s[k];
    } else {
      out.append(s, i, end - i);
      groups_end = end;
    }
    i = groups_end;
  }
  return out;
}

/// Thai digits (U+0E50..U+0E59, "๑๐๐") as ASCII digits ("100"), so that every number reader
/// sees them (a trial: "๑๐๐ ชั่วโมง" was not read at all). The echo quotes the sentence as read.
std::string ascii_digits(std::string s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    if (i + 2 < s.size() && b(i) == 0xE0 && b(i + 1) == 0xB9 && b(i + 2) >= 0x90 && b(i + 2) <= 0x99) {
      out += static_cast<char>('0' + (b(i + 2) - 0x90));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

class Reader {
 public:
  Reader(std::string_view sentence, const GpuCatalog& gpus, std::string_view today)
      : low_(ascii_digits(plain_spaces(lower_ascii(sentence)))), gpus_(gpus), today_(today) {
    result_.language = guess_language(low_);
    if (result_.language == "fr") low_ = join_digit_groups(low_);
  }

  AskResult run() {
    read_model();
    read_task();
    read_latency();  // before tokens: "50 ms per token" is a latency, not a token count
    read_seq();      // before tokens: "a sequence length of 8192 tokens" is not a token budget
    read_gpu();      // before tokens and money: "4 H100s"
    read_quant();    // "in int4", "8-bit", "awq"
    read_stack();    // "with megatron", "using deepspeed"
    read_spot();     // "on spot instances", "no spot"
    read_request_lengths();  // before tokens: "128k token prompts" is a request's length, not a budget
    read_examples();  // before tokens: "20k examples of 512 tokens" is 20k × 512 tokens, not 512
    read_tokens();
    read_images();
    read_rate();
    read_money();
    read_duration();
    read_model_size();
    read_plain_training();
    read_serving_from_load();
    refuse_out_of_bounds();
    decide_missing();
    mark_not_for_task();
    collect_unread();
    return result_;
  }

 private:
  /// `at`: where `source` starts in low_ (npos: its first occurrence), so collect_unread knows
  /// which words were read.
  void add(std::string name, json value, std::string source, std::string mark = {}, std::string not_used = {},
           std::size_t at = std::string::npos) {
    while (!source.empty() && source.back() == ' ') source.pop_back();  // "under $50 " (a regex's \s*): echoed trimmed
    take(source, at);
    for (const auto& f : result_.fields)
      if (f.name == name) return;  // first reading wins
    result_.fields.push_back({std::move(name), std::move(value), std::move(source), std::move(mark), std::move(not_used)});
  }

  /// A number read by `m` (a match in low_), with the mark written before it ("at least 200M
  /// tokens", "~500M", "≥ 8", "moins de 500 $", "ไม่เกิน 2 วัน"): the field's source then starts
  /// at the mark, so the echo keeps it (a trial found "≥" and "about" dropped).
  void add_marked(std::string name, json value, const std::smatch& m, std::string not_used = {}) {
    std::size_t start = static_cast<std::size_t>(m.position(0));
    // "-500 $", "budget -500": the minus sign is part of the number (a trial found it dropped, so
    // a negative amount was planned as a positive one); the planner then refuses it by name.
    if (value.is_number() && start > 0 && low_[start - 1] == '-' &&
        (start == 1 || !std::isalnum(static_cast<unsigned char>(low_[start - 2])))) {
      value = value.is_number_integer() ? json(-value.get<std::int64_t>()) : json(-value.get<double>());
      --start;
    }
    // A number read only in part (the "30" of a power the grammar does not know): never used;
    // the field stays missing (asked for) and the number is listed as not read.
    if (start > 0 && (std::isdigit(static_cast<unsigned char>(low_[start - 1])) || low_[start - 1] == '^' || low_[start - 1] == '*'))
      return;
    // The digits at the end of a name ("int4", "fp8", "w8a8", "h100"): part of the name, not a
    // number (trial46: "70b int4 users 100" was read as 4 users).
    if (glued_to_word(static_cast<std::size_t>(m.position(0)))) return;
    // "1 000 users" in English: three digits after a digit and one space are a group of a number
    // written with spaces, read only in part (trial47: "000 users" was refused as zero users).
    if (start >= 2 && low_[start - 1] == ' ' && std::isdigit(static_cast<unsigned char>(low_[start - 2])) &&
        start + 3 <= low_.size() && std::isdigit(static_cast<unsigned char>(low_[start])) &&
        std::isdigit(static_cast<unsigned char>(low_[start + 1])) && std::isdigit(static_cast<unsigned char>(low_[start + 2])) &&
        (start + 3 == low_.size() || !std::isdigit(static_cast<unsigned char>(low_[start + 3]))))
      return;
    // "1,5" in English or Thai: a comma that does not separate groups of three digits is neither a
    // group separator nor (outside French) a decimal mark; which was meant is not guessed
    // (trial46: "1,5 million tokens" was read as 15 million). Left unread, so the field is asked for.
    if (m.size() > 1 && m[1].matched && bad_digit_groups(m[1].str())) return;
    const auto [mark, mark_start] = mark_before(start);
    add(std::move(name), std::move(value),
        low_.substr(mark_start, static_cast<std::size_t>(m.position(0) + m.length(0)) - mark_start), mark, std::move(not_used),
        mark_start);
  }

  /// Whether byte `pos` of low_ starts a run of digits written straight after an ASCII letter
  /// ("int4", "fp8", "h100"), i.e. the tail of a name.
  bool glued_to_word(std::size_t pos) const {
    return pos > 0 && pos < low_.size() && std::isdigit(static_cast<unsigned char>(low_[pos])) &&
           std::isalpha(static_cast<unsigned char>(low_[pos - 1]));
  }

  /// Whether a number as written has commas that are not thousands separators (each comma followed
  /// by exactly three digits): "1,5" outside French ("1,5" in French is the decimal 1.5).
  bool bad_digit_groups(const std::string& number) const {
    if (number.find(',') == std::string::npos || number.find_first_not_of("0123456789., ") != std::string::npos)
      return false;
    if (result_.language == "fr" && std::regex_match(number, std::regex(R"(\d+,\d{1,2})"))) return false;
    return !std::regex_match(number, std::regex(R"(\d{1,3}(?:,\d{3})+(?:\.\d+)?)"));
  }

  /// The first match of `re` in low_ whose number is not the tail of a name (glued_to_word at the
  /// match's group `group`): regex_search stops at "fp8 users" where "users 50" follows.
  bool search_unglued(const std::regex& re, std::smatch& out, int group = 1) const {
    for (auto it = std::sregex_iterator(low_.begin(), low_.end(), re); it != std::sregex_iterator(); ++it) {
      if (!(*it)[group].matched || glued_to_word(static_cast<std::size_t>(it->position(group)))) continue;
      out = *it;
      return true;
    }
    return false;
  }

  /// Whether a currency match has a minus between the currency sign and its number ("$-5", "€ -5").
  static bool minus_inside(const std::smatch& m) {
    return m.str(0).substr(0, static_cast<std::size_t>(m.position(1) - m.position(0))).find('-') != std::string::npos;
  }

  static constexpr const char* kAtMost = "\xe2\x89\xa4";  ///< "≤", mark_before's symbol of a ceiling

  /// The mark just before byte `pos` of low_ and where it starts ({"", pos} when none).
  std::pair<std::string, std::size_t> mark_before(std::size_t pos) const {
    // Longest phrases first within each symbol; all lower case (low_ is).
    // Negated comparatives first: they end with a positive one ("no more than $50" ends with
    // "more than $50", which a trial saw read as a budget of at least $50).
    static const std::vector<std::pair<std::string_view, const char*>> marks = {
        {"no more than", "\xe2\x89\xa4"}, {"not more than", "\xe2\x89\xa4"}, {"pas plus de", "\xe2\x89\xa4"},
        {"no less than", "\xe2\x89\xa5"}, {"not less than", "\xe2\x89\xa5"}, {"pas moins de", "\xe2\x89\xa5"},
        {"not over", "\xe2\x89\xa4"}, {"not above", "\xe2\x89\xa4"}, {"not exceeding", "\xe2\x89\xa4"},
        {"at least", "\xe2\x89\xa5"}, {"au moins", "\xe2\x89\xa5"}, {"more than", "\xe2\x89\xa5"}, {"plus de", "\xe2\x89\xa5"},
        {"minimum", "\xe2\x89\xa5"}, {">=", "\xe2\x89\xa5"}, {"\xe2\x89\xa5", "\xe2\x89\xa5"},
        {"\xe0\xb8\xad\xe0\xb8\xa2\xe0\xb9\x88\xe0\xb8\xb2\xe0\xb8\x87\xe0\xb8\x99\xe0\xb9\x89\xe0\xb8\xad\xe0\xb8\xa2", "\xe2\x89\xa5"},  // อย่างน้อย
        {"approximately", "\xe2\x89\x88"}, {"roughly", "\xe2\x89\x88"}, {"around", "\xe2\x89\x88"}, {"about", "\xe2\x89\x88"},
        {"environ", "\xe2\x89\x88"}, {"\xc3\xa0 peu pr\xc3\xa8s", "\xe2\x89\x88"}, {"~", "\xe2\x89\x88"}, {"\xe2\x89\x88", "\xe2\x89\x88"},
        {"\xe0\xb8\x9b\xe0\xb8\xa3\xe0\xb8\xb0\xe0\xb8\xa1\xe0\xb8\xb2\xe0\xb8\x93", "\xe2\x89\x88"},  // ประมาณ
        {"\xe0\xb8\xa3\xe0\xb8\xb2\xe0\xb8\xa7", "\xe2\x89\x88"},                                                  // ราว
        {"at most", "\xe2\x89\xa4"}, {"less than", "\xe2\x89\xa4"}, {"fewer than", "\xe2\x89\xa4"}, {"max", "\xe2\x89\xa4"}, {"under", "\xe2\x89\xa4"}, {"below", "\xe2\x89\xa4"},
        {"within", "\xe2\x89\xa4"}, {"up to", "\xe2\x89\xa4"}, {"maximum", "\xe2\x89\xa4"}, {"au plus", "\xe2\x89\xa4"},
        {"moins de", "\xe2\x89\xa4"}, {"jusqu'\xc3\xa0", "\xe2\x89\xa4"}, {"<=", "\xe2\x89\xa4"}, {"\xe2\x89\xa4", "\xe2\x89\xa4"},
        {"\xe0\xb9\x84\xe0\xb8\xa1\xe0\xb9\x88\xe0\xb9\x80\xe0\xb8\x81\xe0\xb8\xb4\xe0\xb8\x99", "\xe2\x89\xa4"},  // ไม่เกิน
        {"\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\xa2\xe0\xb9\x83\xe0\xb8\x99", "\xe2\x89\xa4"},                    // ภายใน
    };
    std::size_t end = pos;
    while (end > 0 && low_[end - 1] == ' ') --end;
    // "budget of", "de", "en", "for", "on": one small word between the mark and the number.
    std::size_t word_end = end;
    for (std::string_view w : {"of", "de", "en", "for", "on", "sur", "in", "with", "avec", "budget", "\xe0\xb8\x87\xe0\xb8\x9a"}) {
      if (end >= w.size() && low_.compare(end - w.size(), w.size(), w) == 0 &&
          (end == w.size() || !std::isalnum(static_cast<unsigned char>(low_[end - w.size() - 1])))) {
        word_end = end - w.size();
        while (word_end > 0 && low_[word_end - 1] == ' ') --word_end;
        break;
      }
    }
    for (std::size_t e : {end, word_end}) {
      for (const auto& [w, symbol] : marks) {
        if (e >= w.size() && low_.compare(e - w.size(), w.size(), w) == 0) {
          const std::size_t s = e - w.size();
          const bool ascii_word = std::isalpha(static_cast<unsigned char>(w.front())) != 0;
          if (ascii_word && s > 0 && std::isalpha(static_cast<unsigned char>(low_[s - 1]))) continue;  // "thunder 5"
          return {symbol, s};
        }
      }
    }
    return {"", pos};
  }

  /// True when the words just before `pos` negate what follows ("not qlora", "sans QLoRA",
  /// "ไม่ใช้ qlora"): a negated task word must not select the task.
  bool negated(std::size_t pos) const {
    std::size_t end = pos;
    while (end > 0 && (low_[end - 1] == ' ' || low_[end - 1] == ',')) --end;
    std::string_view before(low_.data(), end);
    for (std::string_view article : {"a", "an", "un", "une", "du", "de", "en", "with", "avec", "use", "using"}) {
      if (before.size() > article.size() && before.ends_with(article) && before[before.size() - article.size() - 1] == ' ') {
        std::string_view rest = before.substr(0, before.size() - article.size());
        while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
        for (std::string_view n : {"not", "no", "without", "pas", "sans", "non"})
          if (rest.ends_with(n) && (rest.size() == n.size() || !std::isalpha(static_cast<unsigned char>(rest[rest.size() - n.size() - 1]))))
            return true;
      }
    }
    static const std::vector<std::string_view> negations = {
        "not", "no", "without", "rather than", "instead of", "pas", "pas de", "pas en", "sans", "non", "plut\xc3\xb4t que",
        "au lieu de", "\xe0\xb9\x84\xe0\xb8\xa1\xe0\xb9\x88",  // ไม่ (also the start of ไม่ใช่, ไม่ใช้, ไม่เอา: checked below)
        "\xe0\xb9\x84\xe0\xb8\xa1\xe0\xb9\x88\xe0\xb9\x83\xe0\xb8\x8a\xe0\xb9\x88",   // ไม่ใช่
        "\xe0\xb9\x84\xe0\xb8\xa1\xe0\xb9\x88\xe0\xb9\x83\xe0\xb8\x8a\xe0\xb9\x89",   // ไม่ใช้
        "\xe0\xb9\x84\xe0\xb8\xa1\xe0\xb9\x88\xe0\xb9\x80\xe0\xb8\xad\xe0\xb8\xb2",   // ไม่เอา
    };
    for (std::string_view n : negations) {
      if (!before.ends_with(n)) continue;
      const std::size_t s = before.size() - n.size();
      if (s == 0 || !std::isalpha(static_cast<unsigned char>(before[s - 1])) || static_cast<unsigned char>(n.front()) >= 0x80)
        return true;
    }
    return false;
  }
  double value_of(std::string_view name) const {
    for (const auto& f : result_.fields)
      if (f.name == name && f.value.is_number()) return f.value.get<double>();
    return 0;
  }
  /// Another reading of the same field later in the sentence ("$500 ... $800"): the first is
  /// used, and the answer says the sentence named both (never silently one of them).
  void note_other_matches(const std::string& name, const std::smatch& first, std::initializer_list<const std::regex*> res) {
    const std::size_t after = static_cast<std::size_t>(first.position(0) + first.length(0));
    const std::string rest = low_.substr(after);
    std::smatch m;
    for (const std::regex* re : res) {
      if (std::regex_search(rest, m, *re)) {
        note_ambiguous(name, {first.str(0), m.str(0)});
        return;
      }
    }
  }
  void note_ambiguous(const std::string& name, std::vector<std::string> readings) {
    for (auto& r : readings) {  // as words: a match's trailing space is not part of them ("$500 ")
      while (!r.empty() && (r.back() == ' ' || r.back() == ',')) r.pop_back();
      const std::size_t first = r.find_first_not_of(' ');
      r.erase(0, first == std::string::npos ? r.size() : first);
    }
    for (const auto& r : readings)  // the other reading's words were read too (said as ambiguous)
      for (auto at = low_.find(r); !r.empty() && at != std::string::npos; at = low_.find(r, at + 1)) take(r, at);
    for (const auto& a : result_.ambiguous)
      if (a.name == name) return;
    result_.ambiguous.push_back({name, std::move(readings)});
  }
  bool got(std::string_view name) const {
    return std::any_of(result_.fields.begin(), result_.fields.end(), [&](const auto& f) { return f.name == name; });
  }

  void read_model() {
    // Compare with separators removed: "Llama 3.1 70B" and "llama-3.1-70b" both read "llama3170b".
    std::string flat;
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < low_.size(); ++i) {
      const char c = low_[i];
      if (c == ' ' || c == '-' || c == '.' || c == '_') continue;
      flat += c;
      at.push_back(i);
    }
    auto flatten = [](std::string s) {
      s = lower_ascii(s);
      s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == ' ' || c == '-' || c == '.' || c == '_'; }), s.end());
      return s;
    };
    std::string best_name;
    std::size_t best_len = 0, best_pos = 0;
    for (const auto& p : list_presets()) {
      std::vector<std::string> names = p.aliases;
      names.push_back(p.short_name);
      for (const auto& n : names) {
        const std::string key = flatten(n);
        if (key.size() < 3) continue;
        const auto pos = flat.find(key);
        if (pos == std::string::npos || key.size() <= best_len) continue;
        // The key must not run on into more digits ("llama318b" inside "llama3180b" is not 8B).
        const std::size_t end = pos + key.size();
        if (end < flat.size() && std::isdigit(static_cast<unsigned char>(flat[end])) &&
            std::isdigit(static_cast<unsigned char>(key.back())))
          continue;
        best_name = p.short_name;
        best_len = key.size();
        best_pos = pos;
      }
    }
    if (best_len == 0) {
      read_model_candidates();
      return;
    }
    // The longest name wins where names overlap ("llama-3.1-70b" over "llama-3.1"); a different
    // preset named elsewhere in the sentence makes the reading ambiguous (said, not resolved).
    for (const auto& p : list_presets()) {
      if (p.short_name == best_name) continue;
      std::vector<std::string> names = p.aliases;
      names.push_back(p.short_name);
      for (const auto& n : names) {
        const std::string key = flatten(n);
        if (key.size() < 3) continue;
        for (auto pos = flat.find(key); pos != std::string::npos; pos = flat.find(key, pos + 1)) {
          const std::size_t end = pos + key.size();
          const bool overlaps = pos < best_pos + best_len && end > best_pos;
          const bool runs_on = end < flat.size() && std::isdigit(static_cast<unsigned char>(flat[end])) &&
                               std::isdigit(static_cast<unsigned char>(key.back()));
          if (overlaps || runs_on) continue;
          taken_.emplace_back(at[pos], at[end - 1] + 1);
          note_ambiguous("model", {best_name, p.short_name});  // the used one first
        }
      }
    }
    add("model", best_name, low_.substr(at[best_pos], at[best_pos + best_len - 1] - at[best_pos] + 1), {}, {}, at[best_pos]);
  }

  /// No preset named: the longest run of up to four words (trailing , . ; : dropped) that begins
  /// two or more presets' names (presets_begun_by: "mistral 7b") is kept with those presets, and
  /// its words count as read; the model stays missing (AskResult::model_candidates).
  void read_model_candidates() {
    std::vector<std::pair<std::size_t, std::size_t>> words;  // [begin, end) in low_
    for (std::size_t i = 0; i < low_.size();) {
      while (i < low_.size() && low_[i] == ' ') ++i;
      const std::size_t b = i;
      while (i < low_.size() && low_[i] != ' ') ++i;
      std::size_t e = i;
      while (e > b && (low_[e - 1] == ',' || low_[e - 1] == '.' || low_[e - 1] == ';' || low_[e - 1] == ':')) --e;
      if (e > b) words.emplace_back(b, e);
    }
    for (std::size_t n = std::min<std::size_t>(4, words.size()); n >= 1; --n) {
      for (std::size_t first = 0; first + n <= words.size(); ++first) {
        const std::size_t b = words[first].first, e = words[first + n - 1].second;
        std::vector<std::string> presets = presets_begun_by(low_.substr(b, e - b));
        if (presets.empty()) continue;
        result_.model_candidates = ModelCandidates{low_.substr(b, e - b), std::move(presets)};
        taken_.emplace_back(b, e);
        return;
      }
    }
  }

  void read_task() {
    struct Rule {
      const char* task;
      std::vector<std::string_view> words;
    };
    static const std::vector<Rule> rules = {
        {"qlora", {"qlora"}},
        {"lora", {"lora"}},
        {"pretrain",
         {"pretrain", "pre-train", "from scratch", "pr\xc3\xa9-entra\xc3\xae", "pr\xc3\xa9" "entra\xc3\xae", "de z\xc3\xa9ro",
          "\xe0\xb8\x9e\xe0\xb8\xa3\xe0\xb8\xb5\xe0\xb9\x80\xe0\xb8\x97\xe0\xb8\xa3\xe0\xb8\x99",                     // พรีเทรน
          "\xe0\xb8\x95\xe0\xb8\xb1\xe0\xb9\x89\xe0\xb8\x87\xe0\xb9\x81\xe0\xb8\x95\xe0\xb9\x88\xe0\xb8\x95\xe0\xb9\x89\xe0\xb8\x99"}},  // ตั้งแต่ต้น
        {"images",
         {"image generation", "generate images", "g\xc3\xa9n\xc3\xa9rer des images", "images",
          "\xe0\xb8\xaa\xe0\xb8\xa3\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x87\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\x9e",   // สร้างภาพ
          "\xe0\xb8\xaa\xe0\xb8\xa3\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x87\xe0\xb8\xa3\xe0\xb8\xb9\xe0\xb8\x9b"}},  // สร้างรูป
        {"serve",
         {"serve", "serving", "inference", "deploy", "host ", "chatbot", "servir", "d\xc3\xa9ployer", "inf\xc3\xa9rence",
          "h\xc3\xa9" "berger",
          "\xe0\xb9\x83\xe0\xb8\xab\xe0\xb9\x89\xe0\xb8\x9a\xe0\xb8\xa3\xe0\xb8\xb4\xe0\xb8\x81\xe0\xb8\xb2\xe0\xb8\xa3",  // ให้บริการ
          "\xe0\xb8\x94\xe0\xb8\xb5\xe0\xb8\x9e\xe0\xb8\xa5\xe0\xb8\xad\xe0\xb8\xa2",                                      // ดีพลอย
          "\xe0\xb8\xad\xe0\xb8\x99\xe0\xb8\xb8\xe0\xb8\xa1\xe0\xb8\xb2\xe0\xb8\x99"}},                                    // อนุมาน
        {"full",
         {"fine-tune", "finetune", "fine tune", "fine-tuning", "affiner", "fine-tuner", "r\xc3\xa9glage fin", "ajustement fin",
          "\xe0\xb9\x84\xe0\xb8\x9f\xe0\xb8\x99\xe0\xb9\x8c\xe0\xb8\x88\xe0\xb8\xb9\xe0\xb8\x99",                          // ไฟน์จูน
          "\xe0\xb8\x9b\xe0\xb8\xa3\xe0\xb8\xb1\xe0\xb8\x9a\xe0\xb9\x81\xe0\xb8\x95\xe0\xb9\x88\xe0\xb8\x87"}},            // ปรับแต่ง
    };
    for (const auto& r : rules) {
      for (auto w : r.words) {
        for (std::size_t at = low_.find(w); at != std::string::npos; at = low_.find(w, at + 1)) {
          if (w == "lora" && at > 0 && low_[at - 1] == 'q') continue;  // inside "qlora"
          if (negated(at)) continue;                                    // "not qlora", "sans QLoRA"
          add("task", r.task, std::string(w), {}, {}, at);
          return;
        }
      }
    }
  }

  /// A served request's lengths: "128k token prompts", "8000 input tokens", "prompts of 8000
  /// tokens", "2k output tokens", "outputs of 500 tokens", "8000 jetons d'entrée", "sorties de 500
  /// jetons": the plan's prompt_tokens / output_tokens (trial50 #14: read as a training budget and
  /// dropped, and the plan ran at 1000 + 250 tokens without a word). "k" is 1,024 here, as the field
  /// writes context sizes ("128k" prompts of Llama 3.1 = 131,072). A speed ("30 output tokens/s
  /// each") is a TPOT target, read before (read_latency).
  void read_request_lengths() {
    static const std::string num = R"((\d+(?:[.,]\d+)?)\s*(k\b)?)";
    static const std::string not_speed = R"((?!\s*(?:/\s*s\b|per\s+s|par\s+s)))";
    static const std::string prompt_words =
        R"((?:input\s+tokens?|prompt\s+tokens?|prompts?|inputs?|(?:d'|de\s+)?entr\xc3\xa9es?))";
    static const std::string output_words =
        R"((?:output\s+tokens?|generated\s+tokens?|outputs?|completions?|(?:de\s+)?sorties?))";
    // "8000 input tokens" (count first) and "prompts of 8000 tokens" (count after), built once.
    auto after = [&](const std::string& words) {
      return std::regex(num + R"([ -]*(?:tokens?[ -]+|jetons?\s+)?)" + words + R"(\b)" + not_speed);
    };
    auto before = [&](const std::string& words) {
      return std::regex(words + R"(\s+(?:of|de|:|=)\s*)" + num + R"(\s*(?:tokens?|jetons?)\b)" + not_speed);
    };
    static const std::regex prompt_after = after(prompt_words), prompt_before = before(prompt_words);
    static const std::regex output_after = after(output_words), output_before = before(output_words);
    auto read = [&](const std::string& field, const std::regex& count_first, const std::regex& count_after) {
      for (const std::regex* re : {&count_first, &count_after}) {
        for (auto it = std::sregex_iterator(low_.begin(), low_.end(), *re); it != std::sregex_iterator(); ++it) {
          const std::smatch& m = *it;
          if (is_taken(static_cast<std::size_t>(m.position(0)), static_cast<std::size_t>(m.position(0) + m.length(0))))
            continue;
          add_marked(field, exact_number(m[1].str(), m[2].matched ? 1024 : 1, m[0].str(), result_.language), m);
          return;
        }
      }
    };
    read("prompt_tokens", prompt_after, prompt_before);
    read("output_tokens", output_after, output_before);
  }

  /// A load without a task word: "run llama 3.1 70b in 4-bit for 10 users", "llama 3.1 8b at 5
  /// requests per second". Users and requests per second are a service's load, so the task is
  /// serving (trial56 #3: "does not say: task"). The echo names the load's words.
  void read_serving_from_load() {
    if (got("task") || !got("model")) return;
    std::string load;  // copied: add() appends to result_.fields
    for (const auto& f : result_.fields) {
      if (f.name == "concurrency" || f.name == "rps") {
        load = f.source;
        break;
      }
    }
    if (!load.empty()) add("task", "serve", load);
  }

  /// A dataset given as examples of a length: "20k examples of 512 tokens", "5000 conversations
  /// of ~800 tokens each", "10k samples x 2k tokens": the token budget is their product (trial56 #3:
  /// "512 tokens" was read as the whole budget and refused as shorter than one sequence).
  void read_examples() {
    static const std::regex re(
        kNumber + R"(\s*()" + kScaleWords +
        R"()?\s*(?:training\s+)?(?:examples?|samples?|conversations?|dialogues?|documents?|rows?|pairs?|exemples?|)"
        R"(\xc3\xa9chantillons?|\xe0\xb8\x95\xe0\xb8\xb1\xe0\xb8\xa7\xe0\xb8\xad\xe0\xb8\xa2\xe0\xb9\x88\xe0\xb8\xb2\xe0\xb8\x87)\s*)"  // ตัวอย่าง
        R"((?:of|at|with|averaging|x|\xc3\x97|\*|,|de|d'|(?:\xe0\xb8\x95\xe0\xb8\xb1\xe0\xb8\xa7\xe0\xb8\xad\xe0\xb8\xa2\xe0\xb9\x88\xe0\xb8\xb2\xe0\xb8\x87)?\xe0\xb8\xa5\xe0\xb8\xb0)\s*)"  // (ตัวอย่าง)ละ
        R"((about\s+|around\s+|roughly\s+|environ\s+|~\s*)?)" +
        kNumber + R"(\s*()" + kScaleWords +
        R"()?\s*(?:tokens?|jetons?|\xe0\xb9\x82\xe0\xb8\x97\xe0\xb9\x80\xe0\xb8\x84(?:\xe0\xb9\x87)?\xe0\xb8\x99)(?:\s+(?:each|chacun(?:e)?))?)");
    std::smatch m;
    if (!std::regex_search(low_, m, re)) return;
    const json n = exact_number(m[1].str(), scale_of(m[2].str(), result_.language), m[0].str(), result_.language);
    const json per = exact_number(m[4].str(), scale_of(m[5].str(), result_.language), m[0].str(), result_.language);
    const double total = n.get<double>() * per.get<double>();
    const json value = total >= 9007199254740992.0 ? json(total) : json(static_cast<std::int64_t>(std::llround(total)));
    // "of ~800 tokens": the product is as approximate as the length (trial57 #11: the ≈ was lost).
    if (m[3].matched) add("tokens", value, m.str(0), "\xe2\x89\x88", {}, static_cast<std::size_t>(m.position(0)));
    else add_marked("tokens", value, m);
  }

  void read_tokens() {
    // A budget already read from examples × their length: another token count is not silently
    // taken as the same field (trial57 #1: "20k examples of 512 tokens and 1B tokens" planned
    // 10,240,000 tokens and said nothing of "1B tokens"); it stays unread and is listed so.
    if (got("tokens")) return;
    static const std::regex re(kNumber + R"(\s*()" + kScaleWords +
                               R"()?\s*(?:de\s+|d'|training\s+)?(tokens?|jetons?|\xe0\xb9\x82\xe0\xb8\x97\xe0\xb9\x80\xe0\xb8\x84(?:\xe0\xb9\x87)?\xe0\xb8\x99))");
    for (auto it = std::sregex_iterator(low_.begin(), low_.end(), re); it != std::sregex_iterator(); ++it) {
      const std::smatch& m = *it;
      if (is_taken(static_cast<std::size_t>(m.position(0)), static_cast<std::size_t>(m.position(0) + m.length(0)))) continue;
      add_marked("tokens", exact_number(m[1].str(), scale_of(m[2].str(), result_.language), m[0].str(), result_.language), m);
      return;
    }
  }

  /// The training sequence length: "seq 8192", "sequence length of 4096", "context 8k",
  /// "8k context", "longueur de séquence 4096", "ความยาว 4096": the plan's `seq`. "k" here is
  /// 1,024 as the field writes context sizes ("8k context" = 8,192; "128K" = 131,072 for
  /// Llama 3.1), not 1,000 as in token budgets. A serving task does not use it (said, not sent).
  void read_seq() {
    static const std::string names =
        R"((?:\bseq(?:uence)?(?:[ _-]*len(?:gth)?)?|\bctx|\bcontext(?:[ _-]*(?:length|window|size))?|longueur de s\xc3\xa9quence|)"
        R"(\bcontexte|\xe0\xb8\x84\xe0\xb8\xa7\xe0\xb8\xb2\xe0\xb8\xa1\xe0\xb8\xa2\xe0\xb8\xb2\xe0\xb8\xa7(?:\xe0\xb8\xa5\xe0\xb8\xb3\xe0\xb8\x94\xe0\xb8\xb1\xe0\xb8\x9a)?|)"
        R"(\xe0\xb8\x9a\xe0\xb8\xa3\xe0\xb8\xb4\xe0\xb8\x9a\xe0\xb8\x97))";  // ความยาว(ลำดับ), บริบท
    static const std::regex before(names + R"(\s*(?:of|de|:|=|is|est)?\s*(\d+(?:[.,]\d+)?)\s*(k\b)?(?:\s*(?:tokens?|jetons?))?)");
    static const std::regex after(R"((\d+(?:[.,]\d+)?)\s*(k)?[ -]*(?:(?:tokens?|jetons?)\s+(?:of\s+|de\s+)?)?)" + names);
    std::smatch m;
    if (std::regex_search(low_, m, before) || std::regex_search(low_, m, after)) {
      add_marked("seq", exact_number(m[1].str(), m[2].matched ? 1024 : 1, m[0].str(), result_.language), m);
    }
  }

  void read_images() {
    static const std::regex re(kNumber + R"(\s*()" + kScaleWords +
                               R"()?\s*(images?|\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\x9e|\xe0\xb8\xa3\xe0\xb8\xb9\xe0\xb8\x9b))");
    std::smatch m;
    if (std::regex_search(low_, m, re)) {
      add_marked("images", exact_number(m[1].str(), scale_of(m[2].str(), result_.language), m[0].str(), result_.language), m);
    }
  }

  void read_rate() {
    // Queries as requests, and per minute as a sixtieth per second (trial57 #6: "5 queries per
    // second", "300 requests per minute" were not read); a user count with "k" ("10k users").
    static const std::string request_words =
        R"((?:requests?|queries|query|requ\xc3\xaates?|\xe0\xb8\x84\xe0\xb8\xb3\xe0\xb8\x82\xe0\xb8\xad)\s*(?:/|per|par|\xe0\xb8\x95\xe0\xb9\x88\xe0\xb8\xad)\s*)";  // คำขอ, ต่อ
    static const std::regex rps(kNumber + R"(\s*(?:rps|qps|req/s|)" + request_words +
                                R"((?:secondes?|seconds?|sec\b|s\b|\xe0\xb8\xa7\xe0\xb8\xb4\xe0\xb8\x99\xe0\xb8\xb2\xe0\xb8\x97\xe0\xb8\xb5)))");
    static const std::regex rpm(kNumber + R"(\s*(?:rpm|req/min|)" + request_words +
                                R"((?:minutes?|min\b|\xe0\xb8\x99\xe0\xb8\xb2\xe0\xb8\x97\xe0\xb8\xb5)))");  // นาที
    static const std::regex users(kNumber + R"(\s*(k\b)?\s*(?:concurrent users|users|utilisateurs|\xe0\xb8\x9c\xe0\xb8\xb9\xe0\xb9\x89\xe0\xb9\x83\xe0\xb8\x8a\xe0\xb9\x89))");
    // Thai also puts the count after the noun, with the classifier คน: "ผู้ใช้ 100 คน",
    // "ผู้ใช้งานพร้อมกัน 100 คน" (trial10c: only "100 ผู้ใช้" was read).
    static const std::regex users_th(R"((?:\xe0\xb8\x9c\xe0\xb8\xb9\xe0\xb9\x89\xe0\xb9\x83\xe0\xb8\x8a\xe0\xb9\x89(?:\xe0\xb8\x87\xe0\xb8\xb2\xe0\xb8\x99)?(?:\xe0\xb8\x9e\xe0\xb8\xa3\xe0\xb9\x89\xe0\xb8\xad\xe0\xb8\xa1\xe0\xb8\x81\xe0\xb8\xb1\xe0\xb8\x99)?)\s*)" + kNumber + R"(\s*\xe0\xb8\x84\xe0\xb8\x99)");
    // English, French and Thai also put the count after the noun: "users: 100", "utilisateurs :
    // 100", "ผู้ใช้: 100" (trial46, trial47), not when something else follows the number.
    static const std::regex users_after(
        R"((?:\b(?:concurrent users|users|utilisateurs)|\xe0\xb8\x9c\xe0\xb8\xb9\xe0\xb9\x89\xe0\xb9\x83\xe0\xb8\x8a\xe0\xb9\x89)\s*(?::|=)?\s*)" + kNumber +
        // Only where the number ends its clause (end, punctuation, or a joining word): "users 2
        // weeks", "users: 2x8 H100", "users: 1 000" are another field's number or a number read
        // in part (trial47), so the user count is asked for instead.
        R"((?=\s*(?:$|[,.;!?)]|(?:and|et|with|avec|for|pour|at|in|en|on|sur|during|pendant)\b)))");
    std::smatch m;
    if (search_unglued(rps, m)) add_marked("rps", read_number(m[1].str(), result_.language), m);
    else if (search_unglued(rpm, m)) add_marked("rps", read_number(m[1].str(), result_.language) / 60.0, m);
    if (search_unglued(users, m)) {
      add_marked("concurrency", exact_number(m[1].str(), m[2].matched ? 1000 : 1, m[0].str(), result_.language), m);
    } else if (std::regex_search(low_, m, users_th)) {
      add_marked("concurrency", exact_number(m[1].str(), 1, m[0].str(), result_.language), m);
    } else if (std::regex_search(low_, m, users_after)) {
      const auto at = static_cast<std::size_t>(m.position(0));
      if (!bad_digit_groups(m[1].str()))
        add("concurrency", exact_number(m[1].str(), 1, m[0].str(), result_.language), m[0].str(), {}, {}, at);
    }
  }

  void read_money() {
    // "$-5", "US$ -5": a minus between the sign and the number (a trial's "under $-5" was not read
    // at all, so the budget was dropped without a word); negated below, then refused by name.
    // The amount's scale word counts ("$1.5M", "1.5 million dollars", "1,5 million de dollars",
    // "1.5 ล้านดอลลาร์", "2 พันดอลลาร์": trial10d saw each read as $1.50 or $2).
    static const std::string scale = "(" + kScaleWords + R"(|bn)?(?![a-z]))";
    static const std::regex before(R"((?:us)?\$\s*-?\s*)" + kNumber + R"(\s*)" + scale);
    static const std::regex after(kNumber + R"(\s*)" + scale + R"(\s*(?:of\s+|de\s+|d')?(?:\$|usd|dollars?|\xe0\xb8\x94\xe0\xb8\xad\xe0\xb8\xa5\xe0\xb8\xa5\xe0\xb8\xb2\xe0\xb8\xa3\xe0\xb9\x8c))");
    std::smatch m;
    if (std::regex_search(low_, m, before) || std::regex_search(low_, m, after)) {
      double v = scaled(read_number(m[1].str(), result_.language), scale_of(m[2].str(), result_.language), m[0].str());
      if (minus_inside(m)) v = -v;
      add_marked("budget_usd", v, m);
      result_.budget_usd = value_of("budget_usd");  // signed as written
      note_other_matches("budget_usd", m, {&before, &after});
      return;
    }
    // Euros and baht ("500€", "€500", "500 euros", "5000 บาท"): read, shown, and not used:
    // offers are priced in US dollars and gpuplan keeps no exchange rate (a guessed rate would
    // be an invented number).
    static const std::regex eur_before("\xe2\x82\xac\\s*-?\\s*" + kNumber + R"(\s*)" + scale);
    static const std::regex eur_after(kNumber + R"(\s*)" + scale + R"(\s*(?:de\s+|d')?(?:\xe2\x82\xac|eur\b|euros?))");
    static const std::regex thb_after(kNumber + R"(\s*)" + scale + R"(\s*(?:\xe0\xb8\x9a\xe0\xb8\xb2\xe0\xb8\x97|baht|thb))");  // บาท
    for (const auto& [re, name] : {std::pair{&eur_before, "budget_eur"}, std::pair{&eur_after, "budget_eur"},
                                   std::pair{&thb_after, "budget_thb"}}) {
      if (std::regex_search(low_, m, *re)) {
        const double v = scaled(read_number(m[1].str(), result_.language), scale_of(m[2].str(), result_.language), m[0].str());
        add_marked(name, minus_inside(m) ? -v : v, m, "currency");
        return;
      }
    }
    // "budget 500", "budget of 500", "un budget de 500", "งบ 500": an amount with no currency is
    // in US dollars, the currency of every price gpuplan shows (the answer echoes it as $500).
    static const std::regex bare(R"((?:budget|\xe0\xb8\x87\xe0\xb8\x9a(?:\xe0\xb8\x9b\xe0\xb8\xa3\xe0\xb8\xb0\xe0\xb8\xa1\xe0\xb8\xb2\xe0\xb8\x93)?)\s*(?:of|de|:|is|est)?\s*(?:at most|under|max(?:imum)?|au plus|moins de|\xe0\xb9\x84\xe0\xb8\xa1\xe0\xb9\x88\xe0\xb9\x80\xe0\xb8\x81\xe0\xb8\xb4\xe0\xb8\x99)?\s*)" + kNumber + R"(\s*)" + scale + R"((?![\d.,]*\s*(?:tokens?|jetons?|gpus?|h\b|hours?|days?|jours?)))");
    if (std::regex_search(low_, m, bare)) {
      double v = scaled(read_number(m[1].str(), result_.language), scale_of(m[2].str(), result_.language), m[0].str());
      const auto num_at = static_cast<std::size_t>(m.position(1));
      if (num_at > 0 && low_[num_at - 1] == '-') v = -v;  // "budget -500"
      result_.budget_usd = v;
      std::string mark = mark_before(static_cast<std::size_t>(m.position(1))).first;
      add("budget_usd", v, m[0].str(), mark.empty() ? "\xe2\x89\xa4" : mark);  // a budget is a limit
    }
  }

  void read_duration() {
    std::string words;
    for (const auto& [w, n] : number_words()) words += (words.empty() ? "" : "|") + w;
    words += R"(|\ban?\b)";  // "for a month", "within an hour": one (whole words only)
    static const std::string units =
        R"((hours?|h\b|heures?|\xe0\xb8\x8a\xe0\xb8\xb1\xe0\xb9\x88\xe0\xb8\xa7\xe0\xb9\x82\xe0\xb8\xa1\xe0\xb8\x87|days?|jours?|\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\x99|weeks?|semaines?|\xe0\xb8\xaa\xe0\xb8\xb1\xe0\xb8\x9b\xe0\xb8\x94\xe0\xb8\xb2\xe0\xb8\xab\xe0\xb9\x8c|months?|mois\b|\xe0\xb9\x80\xe0\xb8\x94\xe0\xb8\xb7\xe0\xb8\xad\xe0\xb8\x99))";
    // The number as kNumber reads it (an exponent included: "1e999 hours" was read as "999 hours").
    const std::regex re("(\\d+(?:[.,]\\d+)*(?:e\\d+)?|" + words + ")\\s*" + units);
    auto seconds_of = [&](const std::smatch& m) {
      double n = 0;
      const std::string num = m[1].str();
      if (std::isdigit(static_cast<unsigned char>(num[0]))) {
        n = read_number(num, result_.language);
      } else {
        for (const auto& [w, v] : number_words())
          if (w == num) n = v;
        if (num == "a" || num == "an") n = 1;
      }
      const std::string unit = m[2].str();
      if (unit.rfind("day", 0) == 0 || unit.rfind("jour", 0) == 0 || unit == "\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\x99") return scaled(n, 86400, m[0].str());
      if (unit.rfind("week", 0) == 0 || unit.rfind("semaine", 0) == 0 || unit.rfind("\xe0\xb8\xaa\xe0\xb8\xb1", 0) == 0)
        return scaled(n, 7 * 86400, m[0].str());
      // A month is 30 days (what providers bill as a month of GPU time is 720 h, and `--hours`'
      // default is 720).
      if (unit.rfind("month", 0) == 0 || unit == "mois" || unit == "\xe0\xb9\x80\xe0\xb8\x94\xe0\xb8\xb7\xe0\xb8\xad\xe0\xb8\x99")
        return scaled(n, 30 * 86400, m[0].str());
      return scaled(n, 3600, m[0].str());
    };
    // "24 hours a day", "8 h par jour", "8 ชั่วโมงต่อวัน", "วันละ 8 ชั่วโมง": hours per day, and
    // "5 days a week", "5 jours par semaine", "สัปดาห์ละ 5 วัน": days per week, are duty cycles, not
    // durations (trial47: "24 hours a day for 3 weeks" was read as 24 h + "a day" = 48 h). A service
    // runs that share of the duration the sentence gives ("8 hours a day for 5 days" is 40 h; "8 hours
    // a day 5 days a week for 4 weeks" is 4 × 168 h × 8/24 × 5/7 = 160 h). Without a duration the
    // phrase is left unread (the default service time applies and the answer says so). More hours
    // than a day or days than a week, or none, are refused with the sentence's words. A training
    // deadline is wall-clock time: there the phrase is left unread.
    static const std::string per_word = R"(\s*(?:an?|per|each|every|/|par|chaque)\s*)";
    static const std::regex per_day_re(
        R"((\d+(?:[.,]\d+)?)\s*(?:hours?|h|heures?))" + per_word + R"((?:days?|jours?)\b)"
        "|" "(\\d+(?:[.,]\\d+)?)" "\\s*" "\xe0\xb8\x8a\xe0\xb8\xb1\xe0\xb9\x88\xe0\xb8\xa7\xe0\xb9\x82\xe0\xb8\xa1\xe0\xb8\x87" "\\s*" "\xe0\xb8\x95\xe0\xb9\x88\xe0\xb8\xad" "\\s*" "\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\x99"
        "|" "\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\x99" "\xe0\xb8\xa5\xe0\xb8\xb0" "\\s*" "(\\d+(?:[.,]\\d+)?)" "\\s*" "\xe0\xb8\x8a\xe0\xb8\xb1\xe0\xb9\x88\xe0\xb8\xa7\xe0\xb9\x82\xe0\xb8\xa1\xe0\xb8\x87");
    static const std::regex per_week_re(
        R"((\d+(?:[.,]\d+)?)\s*(?:days?|jours?))" + per_word + R"((?:weeks?|semaines?)\b)"
        "|" "\xe0\xb8\xaa\xe0\xb8\xb1\xe0\xb8\x9b\xe0\xb8\x94\xe0\xb8\xb2\xe0\xb8\xab\xe0\xb9\x8c" "\xe0\xb8\xa5\xe0\xb8\xb0" "\\s*" "(\\d+(?:[.,]\\d+)?)" "\\s*" "\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\x99");
    struct Duty {
      std::size_t begin = 0, end = 0;
      double fraction = 1;  ///< share of the time the service runs
    };
    std::vector<Duty> duties;
    const bool service = task_is("serve");
    auto collect = [&](const std::regex& dre, double per, const char* what) {
      for (auto it = std::sregex_iterator(low_.begin(), low_.end(), dre); it != std::sregex_iterator(); ++it) {
        const std::smatch& d = *it;
        std::string num;
        for (std::size_t g = 1; g < d.size() && num.empty(); ++g)
          if (d[g].matched) num = d[g].str();
        const double v = read_number(num, result_.language);
        if (service && !(v > 0 && v <= per))
          throw_invalid_coded("question", "question_duty_cycle_out_of_range",
                              {{"words", d.str(0)}, {"max", fmt::format("{:g}", per)}},
                              fmt::format("\"{}\": {} {} is not a share of the {}", d.str(0), num, what, what[0] == 'h' ? "day" : "week"),
                              fmt::format("more than 0 and at most {:g} {}", per, what));
        const auto b = static_cast<std::size_t>(d.position(0));
        duties.push_back({b, b + static_cast<std::size_t>(d.length(0)), v / per});
      }
    };
    collect(per_day_re, 24, "hours");
    collect(per_week_re, 7, "days");
    std::sort(duties.begin(), duties.end(), [](const Duty& a, const Duty& b) { return a.begin < b.begin; });
    auto in_duty = [&](std::size_t at) {
      return std::any_of(duties.begin(), duties.end(), [&](const Duty& d) { return at >= d.begin && at < d.end; });
    };
    std::vector<std::smatch> found;
    for (auto it = std::sregex_iterator(low_.begin(), low_.end(), re); it != std::sregex_iterator(); ++it)
      if (!in_duty(static_cast<std::size_t>(it->position(0)))) found.push_back(*it);
    if (found.empty()) {
      read_relative_deadline();
      return;
    }
    // "2 days and 3 hours", "2 jours et 3 heures", "1 week, 2 days": parts joined only by "and",
    // "et", "และ" or a comma are one duration, their sum (a trial found "2 days and 3 hours" read
    // as 2 days).
    auto joins = [&](std::size_t from, std::size_t to) {
      std::string between = low_.substr(from, to - from);
      for (const char* w : {"and", "et", "\xe0\xb9\x81\xe0\xb8\xa5\xe0\xb8\xb0", ","}) {
        for (auto p = between.find(w); p != std::string::npos; p = between.find(w)) between.erase(p, std::strlen(w));
      }
      return between.find_first_not_of(' ') == std::string::npos;
    };
    double seconds = seconds_of(found[0]);
    std::size_t last = 0;
    while (last + 1 < found.size() &&
           joins(static_cast<std::size_t>(found[last].position(0) + found[last].length(0)), static_cast<std::size_t>(found[last + 1].position(0)))) {
      ++last;
      seconds += seconds_of(found[last]);
    }
    const std::string name = service ? "hours" : "deadline_seconds";  // a service runs for a duration
    if (last + 1 < found.size()) note_ambiguous(name, {found[0].str(0), found[last + 1].str(0)});
    std::size_t start = static_cast<std::size_t>(found[0].position(0));
    if (start > 0 && low_[start - 1] == '-' && (start == 1 || !std::isalnum(static_cast<unsigned char>(low_[start - 2])))) {
      seconds = -seconds;  // "-2 days": refused by the planner, not read as 2 days
      --start;
    }
    const auto [mark, mark_start] = mark_before(start);
    const std::size_t end = static_cast<std::size_t>(found[last].position(0) + found[last].length(0));
    if (name == "hours") {
      std::string said = low_.substr(mark_start, end - mark_start);
      if (!duties.empty()) {
        take(said, mark_start);
        for (const Duty& d : duties) {
          seconds *= d.fraction;
          take(low_.substr(d.begin, d.end - d.begin), d.begin);
          said += ", " + low_.substr(d.begin, d.end - d.begin);  // the echo says each
        }
      }
      add("hours", seconds / 3600, said, mark);
    } else {
      result_.deadline_seconds = seconds;
      add("deadline_seconds", seconds, low_.substr(mark_start, end - mark_start), mark);
    }
  }

  /// A budget, deadline or service time read as zero or less, or a USD budget above
  /// PlanRequest::kMaxBudgetUsd: Error{invalid_input} at "question" quoting the sentence's own
  /// words (a trial's "-3 jours" was refused as "-259200s", and "$10^30" was planned and shown as
  /// "1000000000000000019884624838656"). Codes question_value_not_positive (values: value_field,
  /// words) and question_budget_too_large (values: words, max).
  void refuse_out_of_bounds() const {
    for (const auto& f : result_.fields) {
      if (!f.value.is_number()) continue;
      const bool limit = f.name == "budget_usd" || f.name == "budget_eur" || f.name == "budget_thb" ||
                         f.name == "deadline_seconds" || f.name == "hours";
      if (!limit) continue;
      const double v = f.value.get<double>();
      if (!(v > 0))
        throw_invalid_coded("question", "question_value_not_positive", {{"value_field", f.name}, {"words", f.source}},
                            fmt::format("{} \"{}\" must be more than zero", f.name == "budget_usd" ? "budget" : f.name == "deadline_seconds" ? "deadline" : f.name, f.source),
                            "the sentence with that value changed");
      if (f.name == "budget_usd" && v > PlanRequest::kMaxBudgetUsd)
        throw_invalid_coded("question", "question_budget_too_large",
                            {{"words", f.source}, {"max", fmt::format("{:.0f}", PlanRequest::kMaxBudgetUsd)}},
                            fmt::format("the budget \"{}\" is more than the largest budget planned, ${:.0f}", f.source, PlanRequest::kMaxBudgetUsd),
                            "a budget of at most $1,000,000,000,000");
    }
  }

  /// A deadline said without a number (trial 9: "by tomorrow" was dropped without a word):
  /// "tomorrow" / "demain" / "พรุ่งนี้" is 1 day (24 h from now), "overnight" / "cette nuit" /
  /// "ข้ามคืน" 12 hours, "next week" / "semaine prochaine" / "สัปดาห์หน้า" 7 days. Fixed
  /// lengths, not calendar arithmetic on the hour of asking (docs/api.md "Assistant"). A training
  /// deadline only: a service runs for `hours`, which these words do not say.
  void read_relative_deadline() {
    if (task_is("serve")) return;
    struct Phrase {
      std::string_view words;
      double seconds;
    };
    static const Phrase phrases[] = {
        {"by tomorrow", 86400}, {"d'ici demain", 86400}, {"pour demain", 86400}, {"tomorrow", 86400}, {"demain", 86400},
        {"\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\xa2\xe0\xb9\x83\xe0\xb8\x99\xe0\xb8\x9e\xe0\xb8\xa3\xe0\xb8\xb8\xe0\xb9\x88\xe0\xb8\x87\xe0\xb8\x99\xe0\xb8\xb5\xe0\xb9\x89", 86400},  // ภายในพรุ่งนี้
        {"\xe0\xb8\x9e\xe0\xb8\xa3\xe0\xb8\xb8\xe0\xb9\x88\xe0\xb8\x87\xe0\xb8\x99\xe0\xb8\xb5\xe0\xb9\x89", 86400},  // พรุ่งนี้
        {"overnight", 12 * 3600.0}, {"cette nuit", 12 * 3600.0}, {"pendant la nuit", 12 * 3600.0},
        {"\xe0\xb8\x82\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\xa1\xe0\xb8\x84\xe0\xb8\xb7\xe0\xb8\x99", 12 * 3600.0},  // ข้ามคืน
        {"by next week", 7 * 86400.0}, {"next week", 7 * 86400.0}, {"la semaine prochaine", 7 * 86400.0},
        {"semaine prochaine", 7 * 86400.0},
        {"\xe0\xb8\xaa\xe0\xb8\xb1\xe0\xb8\x9b\xe0\xb8\x94\xe0\xb8\xb2\xe0\xb8\xab\xe0\xb9\x8c\xe0\xb8\xab\xe0\xb8\x99\xe0\xb9\x89\xe0\xb8\xb2", 7 * 86400.0},  // สัปดาห์หน้า
    };
    for (const auto& p : phrases) {
      const std::size_t at = low_.find(p.words);
      if (at == std::string::npos) continue;
      const bool ascii = static_cast<unsigned char>(p.words[0]) < 0x80;
      const std::size_t end = at + p.words.size();
      // Whole words for the Latin phrases ("demain" not inside "lendemain").
      if (ascii && ((at > 0 && std::isalpha(static_cast<unsigned char>(low_[at - 1]))) ||
                    (end < low_.size() && std::isalpha(static_cast<unsigned char>(low_[end])))))
        continue;
      if (negated(at)) continue;
      result_.deadline_seconds = p.seconds;
      add("deadline_seconds", p.seconds, std::string(p.words), "\xe2\x89\xa4", {}, at);  // a deadline is a limit
      return;
    }
    read_calendar_deadline();
  }

  /// A deadline named by a day of the calendar (small11: "by Friday" and "by end of month" were
  /// dropped without a word): "by friday" / "d'ici vendredi" / "ภายในวันศุกร์" is the next Friday
  /// after today, "by end of month" / "d'ici la fin du mois" / "ภายในสิ้นเดือน" the month's last day.
  /// Counted, like "tomorrow" (24 h), in whole days from today's date (the hour of asking is not
  /// known; the deadline is never past the end of that day): Thursday → Friday 24 h; on a Friday
  /// "by Friday" is the next one, 7 days. Without a date (or on the month's last day, when the
  /// month ends within the day) the words are listed as unread, never dropped.
  void read_calendar_deadline() {
    struct Phrase {
      std::string_view words;
      bool month_end;  ///< false: the next Friday
    };
    static const Phrase phrases[] = {
        {"by the end of the month", true}, {"by end of the month", true}, {"by end of month", true},
        {"by the end of this month", true}, {"by month end", true}, {"d'ici la fin du mois", true},
        {"avant la fin du mois", true},
        {"\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\xa2\xe0\xb9\x83\xe0\xb8\x99\xe0\xb8\xaa\xe0\xb8\xb4\xe0\xb9\x89\xe0\xb8\x99\xe0\xb9\x80\xe0\xb8\x94\xe0\xb8\xb7\xe0\xb8\xad\xe0\xb8\x99", true},  // ภายในสิ้นเดือน
        {"by friday", false}, {"d'ici vendredi", false}, {"avant vendredi", false},
        {"\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\xa2\xe0\xb9\x83\xe0\xb8\x99\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\x99\xe0\xb8\xa8\xe0\xb8\xb8\xe0\xb8\x81\xe0\xb8\xa3\xe0\xb9\x8c", false},  // ภายในวันศุกร์
    };
    for (const auto& p : phrases) {
      const std::size_t at = low_.find(p.words);
      if (at == std::string::npos) continue;
      const std::size_t end = at + p.words.size();
      const bool ascii = static_cast<unsigned char>(p.words[0]) < 0x80;
      if (ascii && ((at > 0 && std::isalpha(static_cast<unsigned char>(low_[at - 1]))) ||
                    (end < low_.size() && std::isalpha(static_cast<unsigned char>(low_[end])))))
        continue;
      if (negated(at)) continue;
      const std::optional<int> days = p.month_end ? days_to_month_end() : days_to_next_friday();
      if (!days || *days <= 0) {
        result_.unread.emplace_back(p.words);  // said, not read: no date to count from
        take(std::string(p.words), at);
        return;
      }
      const double seconds = *days * 86400.0;
      result_.deadline_seconds = seconds;
      add("deadline_seconds", seconds, std::string(p.words), "\xe2\x89\xa4", {}, at);
      return;
    }
  }

  /// today_ as a calendar date; nullopt when not a valid YYYY-MM-DD.
  std::optional<std::chrono::year_month_day> today_date() const {
    int y = 0;
    unsigned m = 0, d = 0;
    if (today_.size() != 10 || std::sscanf(today_.c_str(), "%4d-%2u-%2u", &y, &m, &d) != 3) return std::nullopt;
    const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{m}, std::chrono::day{d}};
    if (!ymd.ok()) return std::nullopt;
    return ymd;
  }
  /// Days from today to the next Friday (1 to 7).
  std::optional<int> days_to_next_friday() const {
    const auto ymd = today_date();
    if (!ymd) return std::nullopt;
    const std::chrono::weekday wd{std::chrono::sys_days{*ymd}};
    const int ahead = static_cast<int>((std::chrono::Friday - wd).count());  // 0..6
    return ahead == 0 ? 7 : ahead;
  }
  /// Days from today to the month's last day (0 on the last day).
  std::optional<int> days_to_month_end() const {
    const auto ymd = today_date();
    if (!ymd) return std::nullopt;
    const std::chrono::year_month_day_last last{ymd->year(), std::chrono::month_day_last{ymd->month()}};
    return static_cast<int>(static_cast<unsigned>(last.day()) - static_cast<unsigned>(ymd->day()));
  }

  /// "train" without a task word (trial 9: "entraîner llama 3.1 8b sur 1e9 tokens" asked for the
  /// task): "train", "training", "entraîner", "entraînement", "เทรน", "ฝึก". A model given by its
  /// size is trained from scratch (`pretrain`); a named, released model is trained further on the
  /// user's tokens, which is a full fine-tune (`full`). The echo names the word, and the task is an
  /// editable field like any other.
  void read_plain_training() {
    if (got("task")) return;
    static const std::regex words(
        R"(\b(?:train(?:ing|s)?|entra(?:\xc3\xae|i)n(?:er|e|ement|ez)?)\b|\xe0\xb9\x80\xe0\xb8\x97\xe0\xb8\xa3\xe0\xb8\x99|\xe0\xb8\x9d\xe0\xb8\xb6\xe0\xb8\x81)");  // เทรน, ฝึก
    for (auto it = std::sregex_iterator(low_.begin(), low_.end(), words); it != std::sregex_iterator(); ++it) {
      const auto at = static_cast<std::size_t>(it->position(0));
      if (negated(at)) continue;
      // "training tokens" names the budget, not the task.
      if (low_.compare(at, 15, "training tokens") == 0) continue;
      if (!got("model") && !got("params")) return;  // nothing to say which: ask
      add("task", got("model") ? "full" : "pretrain", it->str(0), {}, {}, at);
      return;
    }
  }

  /// Serving latency targets: "50 ms per token" (TPOT, time per output token), "time to first
  /// token 500 ms" / "500 ms to first token" (TTFT), in ms. They go to the planner as `tpot_ms` /
  /// `ttft_ms` when its request table has those fields; until then they are read and reported
  /// as not used (never silently dropped).
  void read_latency() {
    // มิลลิวินาที (milliseconds) before วินาที (seconds, trial57 #6: "ttft ไม่เกิน 1 วินาที" was not read).
    static const std::string ms = R"((millisecondes?|milliseconds?|ms|\xe0\xb8\xa1\xe0\xb8\xb4\xe0\xb8\xa5\xe0\xb8\xa5\xe0\xb8\xb4\xe0\xb8\xa7\xe0\xb8\xb4\xe0\xb8\x99\xe0\xb8\xb2\xe0\xb8\x97\xe0\xb8\xb5|secondes?|seconds?|sec\b|s\b|\xe0\xb8\xa7\xe0\xb8\xb4\xe0\xb8\x99\xe0\xb8\xb2\xe0\xb8\x97\xe0\xb8\xb5))";
    static const std::string token = R"((?:output\s+|generated\s+|de\s+sortie\s+)?(?:tokens?|jetons?|\xe0\xb9\x82\xe0\xb8\x97\xe0\xb9\x80\xe0\xb8\x84(?:\xe0\xb9\x87)?\xe0\xb8\x99))";
    static const std::regex tpot(kNumber + R"(\s*)" + ms + R"(\s*(?:per|/|par|a|an|\xe0\xb8\x95\xe0\xb9\x88\xe0\xb8\xad)\s*)" + token);  // ต่อ
    static const std::regex tpot_named(R"(\b(?:tpot|itl)\b\s*(?:of|de|:|=|under|below|<|\xe2\x89\xa4|<=)?\s*)" + kNumber + R"(\s*)" + ms);
    static const std::regex ttft_after(R"((?:\bttft\b|time to first token|first token|premier jeton|\xe0\xb9\x82\xe0\xb8\x97\xe0\xb9\x80\xe0\xb8\x84(?:\xe0\xb9\x87)?\xe0\xb8\x99\xe0\xb9\x81\xe0\xb8\xa3\xe0\xb8\x81)[^0-9]{0,24}?)" + kNumber + R"(\s*)" + ms);  // โทเคนแรก
    static const std::regex ttft_before(kNumber + R"(\s*)" + ms + R"(\s*(?:to|before|for|until|avant|pour|jusqu'au)\s*(?:the\s+|le\s+)?(?:first token|premier jeton))");
    // "under 1s time to first token", "500 ms ttft", "2 s de délai du premier jeton" (trial56 #3:
    // only "time to first token under 1 s" was read).
    static const std::regex ttft_unit_first(kNumber + R"(\s*)" + ms +
                                            R"(\s*(?:of\s+)?(?:the\s+)?(?:time to first token|\bttft\b|d\xc3\xa9lai (?:du|de) premier jeton))");
    auto millis = [&](const std::smatch& m, int number, int unit) {
      const std::string u = m[unit].str();
      const bool milli = u.rfind("ms", 0) == 0 || u.rfind("milli", 0) == 0 ||
                         u.rfind("\xe0\xb8\xa1\xe0\xb8\xb4\xe0\xb8\xa5\xe0\xb8\xa5\xe0\xb8\xb4", 0) == 0;  // มิลลิ
      return scaled(read_number(m[number].str(), result_.language), milli ? 1 : 1000, m[0].str());
    };
    // A per-user generation speed is the TPOT it allows: "30 tokens per second per user" = at most
    // 1000/30 ms per output token (trial46: it was read as 30 training tokens and dropped).
    static const std::regex per_user(
        kNumber + R"(\s*)" + token + R"(\s*(?:/\s*s(?:ec)?\b|per\s+second|a\s+second|par\s+seconde|\xe0\xb8\x95\xe0\xb9\x88\xe0\xb8\xad\xe0\xb8\xa7\xe0\xb8\xb4\xe0\xb8\x99\xe0\xb8\xb2\xe0\xb8\x97\xe0\xb8\xb5)\s*)"
                  R"((?:(?:per|/|par|for\s+each|pour\s+chaque|\xe0\xb8\x95\xe0\xb9\x88\xe0\xb8\xad)\s*(?:users?|utilisateurs?|\xe0\xb8\x9c\xe0\xb8\xb9\xe0\xb9\x89\xe0\xb9\x83\xe0\xb8\x8a\xe0\xb9\x89|\xe0\xb8\x84\xe0\xb8\x99)|each\b|chacune?\b))");  // ต่อวินาที, ต่อ, ผู้ใช้, คน; "each"
    // The same with "each" before the speed (trial49: "100 users, each at 30 tokens/s" was read as
    // 30 training tokens), French "chacun à", Thai "คนละ" (each person).
    static const std::regex each_user(
        R"((?:\beach\s+(?:at\s+)?|\bchacune?\s+(?:à\s+)?|\xe0\xb8\x84\xe0\xb8\x99\xe0\xb8\xa5\xe0\xb8\xb0\s*))" + kNumber + R"(\s*)" + token +
        R"(\s*(?:/\s*s(?:ec)?\b|per\s+second|a\s+second|par\s+seconde|\xe0\xb8\x95\xe0\xb9\x88\xe0\xb8\xad\xe0\xb8\xa7\xe0\xb8\xb4\xe0\xb8\x99\xe0\xb8\xb2\xe0\xb8\x97\xe0\xb8\xb5))");
    std::smatch m;
    auto per_user_speed = [&](const std::smatch& found) {
      const double rate = read_number(found[1].str(), result_.language);
      // A speed of zero or less allows no TPOT: refused in the sentence's words (it was dropped).
      if (!(rate > 0))
        throw_invalid_coded("question", "question_value_not_positive", {{"value_field", "tpot_ms"}, {"words", found.str(0)}},
                            fmt::format("per-user speed \"{}\" must be more than zero", found.str(0)),
                            "the sentence with that value changed");
      add_marked("tpot_ms", 1000.0 / rate, found, planner_field_missing("tpot_ms"));
    };
    if (std::regex_search(low_, m, tpot)) add_marked("tpot_ms", millis(m, 1, 2), m, planner_field_missing("tpot_ms"));
    else if (std::regex_search(low_, m, tpot_named)) add_marked("tpot_ms", millis(m, 1, 2), m, planner_field_missing("tpot_ms"));
    else if (std::regex_search(low_, m, per_user)) per_user_speed(m);
    else if (std::regex_search(low_, m, each_user)) per_user_speed(m);
    // The unit-first form first: in "1s time to first token and 50 ms per token" the words after
    // "first token" reach the TPOT's number.
    if (std::regex_search(low_, m, ttft_unit_first)) add_marked("ttft_ms", millis(m, 1, 2), m, planner_field_missing("ttft_ms"));
    else if (std::regex_search(low_, m, ttft_after)) add_marked("ttft_ms", millis(m, 1, 2), m, planner_field_missing("ttft_ms"));
    else if (std::regex_search(low_, m, ttft_before)) add_marked("ttft_ms", millis(m, 1, 2), m, planner_field_missing("ttft_ms"));
  }

  /// "no_plan_field" when the plan request has no field `name` (api/plan.hpp plan_fields()), "" when it has.
  static std::string planner_field_missing(std::string_view name) {
    for (const auto& d : plan_fields())
      if (d.info.name == name) return "";
    return "no_plan_field";
  }

  /// A model given by its size, not its name: "pretrain a 7B model", "un modèle de 7B", "a
  /// 13B-parameter model", "โมเดล 7B": the plan's `params` (a synthetic model of that size,
  /// docs/models.md). Only when no bundled model was named, and only in these phrasings: a size
  /// next to an unknown model's name ("falcon 40b") is not read as one.
  void read_model_size() {
    if (got("model")) return;
    static const std::string size = R"((\d+(?:[.,]\d+)?)\s*(b|m|t)\b)";
    static const std::regex en(R"(\b(?:a|an|one|the)\s+)" + size + R"(\s*-?\s*(?:param(?:eter)?s?\s+)?(?:model|llm)\b)");
    static const std::regex params(size + R"(\s*(?:params|parameters|param\xc3\xa8tres|\xe0\xb8\x9e\xe0\xb8\xb2\xe0\xb8\xa3\xe0\xb8\xb2\xe0\xb8\xa1\xe0\xb8\xb4\xe0\xb9\x80\xe0\xb8\x95\xe0\xb8\xad\xe0\xb8\xa3\xe0\xb9\x8c))");  // พารามิเตอร์
    static const std::regex fr(R"((?:mod\xc3\xa8le|llm)\s+(?:de\s+)?)" + size);
    static const std::regex th(R"(\xe0\xb9\x82\xe0\xb8\xa1\xe0\xb9\x80\xe0\xb8\x94\xe0\xb8\xa5(?:\xe0\xb8\x82\xe0\xb8\x99\xe0\xb8\xb2\xe0\xb8\x94)?\s*)" + size);  // โมเดล(ขนาด)
    std::smatch m;
    for (const std::regex* re : {&en, &params, &fr, &th}) {
      if (!std::regex_search(low_, m, *re)) continue;
      add_marked("params", exact_number(m[1].str(), scale_of(m[2].str(), result_.language), m[0].str(), result_.language), m);
      return;
    }
  }

  /// The served weights' format (the plan's `quant`): "int4", "int8", "fp8", "nf4", "awq", "gptq",
  /// "mxfp4", "q4_k_m", "q8_0", "w4a16", "w8a8", "4-bit" (int4), "8-bit" (int8), "4 bits", "8 bits";
  /// the names `--quant` takes (sizing/memory_names.cpp). A task that does not serve does not use it
  /// (said, not sent: trial 9 found "in int4" dropped without a word, so a bf16 plan was priced).
  /// The training stack named in the sentence ("with megatron", "using DeepSpeed", "avec FSDP"):
  /// the plan's `stack` (trial48: "pretrain qwen3 30b a3b on 100B tokens with megatron" was planned
  /// on the default stack without a word). torchtitan runs FSDP2, TRL the hf stack ("NeMo" and
  /// "Hugging Face" also name models and hubs: not read). Two different stacks are ambiguous; the
  /// first is used.
  void read_stack() {
    static const std::regex re(
        R"(\b(megatron(?:[- ](?:lm|core|bridge))?|deepspeed|fsdp2?|torchtitan|unsloth|trl)\b)");
    std::string first, first_words;
    for (auto it = std::sregex_iterator(low_.begin(), low_.end(), re); it != std::sregex_iterator(); ++it) {
      const std::string w = (*it)[1].str();
      const std::string stack = w.rfind("megatron", 0) == 0                    ? "megatron"
                                : w == "deepspeed"                               ? "deepspeed"
                                : w.rfind("fsdp", 0) == 0 || w == "torchtitan" ? "fsdp"
                                : w == "unsloth"                                 ? "unsloth"
                                                                                 : "hf";
      if (first.empty()) {
        first = stack;
        first_words = it->str(0);
        add("stack", stack, first_words, {}, {}, static_cast<std::size_t>(it->position(0)));
      } else if (stack != first) {
        note_ambiguous("stack", {first_words, it->str(0)});
        break;
      }
    }
  }

  /// Spot wording (trial52: "on spot instances" was dropped without a word): "no spot", "without
  /// spot", "sans spot", "pas de spot", "on-demand only", "ไม่ใช้ spot" → no_spot true; any other
  /// "spot" / "preemptible" / "interruptible" → no_spot false (spot prices are planned, the
  /// default for training, shown as read). Spot is planned for training only: on another task the
  /// reading is shown as not used.
  void read_spot() {
    static const std::regex no(
        R"((?:\b(?:no|without|not|avoid|sans|pas\s+de)\s+(?:spot|preemptible|interruptible)\b|\bon[- ]demand\s+only\b|)"
        R"(\buniquement\s+(?:[aà]\s+la\s+demande|on[- ]demand)\b|\xe0\xb9\x84\xe0\xb8\xa1\xe0\xb9\x88\xe0\xb9\x83\xe0\xb8\x8a\xe0\xb9\x89\s*spot))");
    static const std::regex yes(R"(\b(?:spot|preemptible|interruptible)\b)");
    std::smatch m;
    const bool negative = std::regex_search(low_, m, no);
    if (!negative && !std::regex_search(low_, m, yes)) return;
    std::string task;
    for (const auto& f : result_.fields)
      if (f.name == "task" && f.value.is_string()) task = f.value.get<std::string>();
    add("no_spot", negative, m.str(0), {}, task == "serve" || task == "images" ? "not_for_task" : "",
        static_cast<std::size_t>(m.position(0)));
  }

  void read_quant() {
    static const std::regex re(
        R"(\b(int4|int8|fp8|fp16|bf16|nf4|awq|gptq|mxfp4|q4_k_m|q8_0|q4_0|q2_k|w4a16|w8a8|([48])[ -]?bits?)\b)");
    std::smatch m;
    if (!std::regex_search(low_, m, re)) return;
    std::string quant = m[1].str();
    if (m[2].matched) quant = m[2].str() == "4" ? "int4" : "int8";
    add("quant", quant, m[0].str(), {}, {}, static_cast<std::size_t>(m.position(0)));
  }

  /// A GPU model ("on H100", "avec des A100", "using 4 H100s": the plural too) becomes the
  /// filter `gpu=NAME`; a count written before it ("4 H100s", "8x H100", "2 × A100") or before
  /// "GPUs" ("on 8 GPUs") becomes the plan's `gpus` (the total GPU count, exact), and one before
  /// "nodes" ("2 H100 nodes", "2 nœuds", "2 โหนด") the plan's `nodes`.
  void read_gpu() {
    static const std::string names =
        R"((gb200|b200|b100|h200|h100|h800|a100|a10g|a10|l40s|l40|l4|mi300x|mi325x|mi250x|v100|t4|rtx ?a\d{4}|rtx ?\d{4}(?: ?ti)?|a6000))";
    static const std::regex re(R"(\b)" + names + R"((?:s|'s)?\b)");
    // "8 H100 nodes", "2 nœuds", "4 machines", "2 โหนด": a node count (the plan's `nodes`), not GPUs.
    static const std::string node_words =
        R"((?:(?:nodes?|n\xc5\x93uds?|noeuds?|machines?|servers?|serveurs?)\b|\xe0\xb9\x82\xe0\xb8\xab\xe0\xb8\x99\xe0\xb8\x94))";
    static const std::regex counted(R"((?:^|[^a-z0-9_.,])(\d+)\s*(?:x|\xc3\x97|\*)?\s*)" + names + R"((?:s|'s)?\b(?!\s*)" + node_words + ")");
    static const std::regex count_only(R"((?:^|[^a-z0-9_.,])(\d+)\s*(?:x|\xc3\x97|\*)?\s*gpus?\b(?!\s*)" + node_words + ")");
    static const std::regex nodes(R"((?:^|[^a-z0-9_.,])(\d+)\s*(?:x|\xc3\x97|\*)?\s*(?:)" + names + R"((?:s|'s)?\s*|gpus?\s*)?)" + node_words);
    // "2 nodes of 8 H100", "2 nœuds de 8 A100", "2 × 8 H100s", "2x8 GPUs": N nodes of M GPUs each is
    // nodes N and N·M GPUs in all (trial46: "2 nodes of 8 H100" was read as 8 GPUs on 2 nodes).
    static const std::regex nodes_of(R"((?:^|[^a-z0-9_.,])(\d+)\s*(?:)" + node_words +
                                     R"(\s*(?:of|with|de|avec|each\s+with|,|\xe0\xb9\x82\xe0\xb8\xab\xe0\xb8\x99\xe0\xb8\x94\xe0\xb8\xa5\xe0\xb8\xb0)?\s*|(?:x|\xc3\x97|\*)\s*)(\d+)\s*(?:x|\xc3\x97|\*)?\s*(?:)" +  // โหนดละ (per node)
                                     names + R"((?:s|'s)?\b|gpus?\b))");
    std::smatch cm;
    bool nodes_of_read = false;  // "N nodes of M GPUs" read: its counts are not read again below
    if (std::regex_search(low_, cm, nodes_of)) {
      const json n = exact_number(cm[1].str(), 1, cm[0].str(), result_.language);
      const json per = exact_number(cm[2].str(), 1, cm[0].str(), result_.language);
      const auto at = static_cast<std::size_t>(cm.position(1));
      const std::string source = low_.substr(at, static_cast<std::size_t>(cm.position(0) + cm.length(0)) - at);
      if (n.is_number_integer() && per.is_number_integer() && n.get<std::int64_t>() <= 1'000'000 &&
          per.get<std::int64_t>() <= 1'000'000) {
        // "at most 2 nodes of 8 GPUs": ceilings (--max-nodes, --max-gpus), not an exact cluster.
        const auto [mark, mark_at] = mark_before(at);
        nodes_of_read = true;
        if (mark == kAtMost) {
          const std::string marked = low_.substr(mark_at, static_cast<std::size_t>(cm.position(0) + cm.length(0)) - mark_at);
          add("max_nodes", n, marked, mark, {}, mark_at);
          add("max_gpus", n.get<std::int64_t>() * per.get<std::int64_t>(), marked, mark, {}, mark_at);
        } else {
          add("nodes", n, source, {}, {}, at);
          add("gpus", n.get<std::int64_t>() * per.get<std::int64_t>(), source, {}, {}, at);
        }
        // Another GPU count elsewhere ("on 32 H100 as 2 nodes of 8 H100"): said, not dropped
        // (trial47); the N × M reading is the one used.
        const std::size_t span_end = static_cast<std::size_t>(cm.position(0) + cm.length(0));
        for (const std::regex* other_re : {&counted, &count_only}) {
          for (auto it = std::sregex_iterator(low_.begin(), low_.end(), *other_re); it != std::sregex_iterator(); ++it) {
            const auto pos = static_cast<std::size_t>(it->position(1));
            if (pos >= at && pos < span_end) continue;  // the M of "N nodes of M"
            const json other = exact_number((*it)[1].str(), 1, it->str(0), result_.language);
            if (other != json(n.get<std::int64_t>() * per.get<std::int64_t>()))
              note_ambiguous("gpus", {source, low_.substr(pos, static_cast<std::size_t>(it->position(0) + it->length(0)) - pos)});
          }
        }
      }
    }
    // A count after "at most", "up to", "no more than", "au plus", "ไม่เกิน" ... is a ceiling
    // (trial52: "at most 2 nodes" was planned on exactly 2 nodes, at 5× the cost of one GPU):
    // --max-nodes / --max-gpus; otherwise the exact count.
    auto count = [&](const char* exact_name, const char* ceiling_name) {
      const auto at = static_cast<std::size_t>(cm.position(1));
      const auto end = static_cast<std::size_t>(cm.position(0) + cm.length(0));
      const json n = exact_number(cm[1].str(), 1, cm[0].str(), result_.language);
      const auto [mark, mark_at] = mark_before(at);
      // "fewer than 8 GPUs" is at most 7 (a whole count below a strict bound).
      const bool strict = low_.compare(mark_at, 10, "fewer than") == 0 || low_.compare(mark_at, 9, "less than") == 0 ||
                          low_.compare(mark_at, 8, "moins de") == 0;
      if (mark == kAtMost && strict && n.is_number_integer() && n.get<std::int64_t>() >= 2)
        add(ceiling_name, n.get<std::int64_t>() - 1, low_.substr(mark_at, end - mark_at), "<", {}, mark_at);
      else if (mark == kAtMost)
        add(ceiling_name, n, low_.substr(mark_at, end - mark_at), mark, {}, mark_at);
      else if (!mark.empty())  // "at least 8 GPUs", "about 8 GPUs": no such setting; shown, not used (trial53)
        add(exact_name, n, low_.substr(mark_at, end - mark_at), mark, "no_plan_field", mark_at);
      else
        add(exact_name, n, low_.substr(at, end - at), {}, {}, at);
    };
    if (!nodes_of_read && std::regex_search(low_, cm, nodes)) count("nodes", "max_nodes");
    if (!nodes_of_read && (std::regex_search(low_, cm, counted) || std::regex_search(low_, cm, count_only)))
      count("gpus", "max_gpus");
    std::smatch m;
    if (!std::regex_search(low_, m, re)) return;
    std::string name = m[1].str();
    try {
      (void)gpus_.find(name);
    } catch (const Error&) {
      return;  // not in the catalog: not a field
    }
    std::string upper = name;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    upper.erase(std::remove(upper.begin(), upper.end(), ' '), upper.end());
    add("filter", "gpu=" + upper, m[0].str(), {}, {}, static_cast<std::size_t>(m.position(0)));
  }

  bool task_is(std::string_view t) const {
    for (const auto& f : result_.fields)
      if (f.name == "task") return f.value == t;
    return false;
  }

  void decide_missing() {
    if (!got("model") && !got("params")) result_.missing.push_back("model");
    if (!got("task")) {
      result_.missing.push_back("task");
      return;
    }
    if (task_is("serve")) {
      if (!got("rps") && !got("concurrency")) result_.missing.push_back("rps");
    } else if (task_is("images")) {
      if (!got("images")) result_.missing.push_back("images");
    } else if (!got("tokens")) {
      result_.missing.push_back("tokens");
    }
  }

  /// A number read that the task read does not use ("serve llama to 50 users with 2000 tokens per
  /// request": tokens are a training budget) is shown as read but not used (`not_for_task`), not
  /// sent to the planner, which would refuse it as a field of another task (field_not_for_task).
  /// Which task reads which field: the plan table (api/plan.cpp, FieldInfo::tasks).
  void mark_not_for_task() {
    std::string task;
    for (const auto& f : result_.fields)
      if (f.name == "task" && f.value.is_string()) task = f.value.get<std::string>();
    const unsigned bit = task_bits::of(task);
    if (bit == 0) return;
    for (auto& f : result_.fields) {
      if (!f.not_used.empty()) continue;
      for (const auto& d : plan_fields())
        if (d.info.name == f.name && (d.info.tasks & bit) == 0) f.not_used = "not_for_task";
    }
  }

  void take(const std::string& source, std::size_t at) {
    if (at == std::string::npos) at = low_.find(source);
    if (at != std::string::npos && !source.empty()) taken_.emplace_back(at, at + source.size());
  }
  bool is_taken(std::size_t begin, std::size_t end) const {
    return std::any_of(taken_.begin(), taken_.end(), [&](const auto& r) { return begin < r.second && r.first < end; });
  }

  /// Every number of the sentence that no field read ("seq 8192" before the reader knew the
  /// sequence length), with the word before and after it: the answer lists them as not read
  /// instead of planning as if they were not written (a trial: "using 4 H100s" was dropped
  /// without a word). Numbers inside names ("h100", "qwen3") are not numbers of the sentence.
  void collect_unread() {
    auto word_char = [&](std::size_t i) {
      const auto c = static_cast<unsigned char>(low_[i]);
      return std::isalnum(c) != 0 || c >= 0x80 || c == '.' || c == '_' || c == '$' || c == '-';
    };
    std::size_t i = 0;
    while (i < low_.size()) {
      const bool starts = std::isdigit(static_cast<unsigned char>(low_[i])) != 0 &&
                          (i == 0 || !(std::isalpha(static_cast<unsigned char>(low_[i - 1])) || std::isdigit(static_cast<unsigned char>(low_[i - 1])) ||
                                       low_[i - 1] == '.' || low_[i - 1] == '_'));
      if (!starts) {
        ++i;
        continue;
      }
      std::size_t end = i;
      while (end < low_.size() && word_char(end)) ++end;  // the number and what is glued to it ("8k", "4x")
      if (!is_taken(i, end)) {
        std::size_t from = i, to = end;
        while (from > 0 && low_[from - 1] == ' ') --from;  // the word before it
        while (from > 0 && word_char(from - 1)) --from;
        while (to < low_.size() && low_[to] == ' ') ++to;  // and the word after it
        while (to < low_.size() && word_char(to)) ++to;
        std::string words = low_.substr(from, to - from);
        while (!words.empty() && (words.back() == ' ' || words.back() == '.' || words.back() == '-')) words.pop_back();
        const std::size_t first = words.find_first_not_of(" ,;:");  // "tokens, 3 epochs": the comma is not a word
        words.erase(0, first == std::string::npos ? words.size() : first);
        result_.unread.push_back(words);
        taken_.emplace_back(i, end);
      }
      i = end;
    }
    // Money the sentence gives in words ("budget: five hundred dollars", "cinq cents dollars"):
    // no field read it, so its currency word is not taken; said as unread with the words before
    // it (trial10c: the plan ran without a budget and said nothing).
    static const std::regex money_word(
        R"((?:^|[^a-z])(dollars?|usd|euros?|eur|baht|thb)(?![a-z])|(\xe0\xb8\x94\xe0\xb8\xad\xe0\xb8\xa5\xe0\xb8\xa5\xe0\xb8\xb2\xe0\xb8\xa3\xe0\xb9\x8c|\xe0\xb8\x9a\xe0\xb8\xb2\xe0\xb8\x97|\xe0\xb8\xa2\xe0\xb8\xb9\xe0\xb9\x82\xe0\xb8\xa3))");  // ดอลลาร์ บาท ยูโร
    // So are token counts in words when no count was read ("on two hundred million tokens",
    // "sur deux cents millions de jetons", "บนสองร้อยล้านโทเค็น": trial10d saw them vanish, the
    // sentence then said only that tokens were missing).
    static const std::regex token_word(R"((?:^|[^a-z])(tokens?|jetons?)(?![a-z])|(\xe0\xb9\x82\xe0\xb8\x97\xe0\xb9\x80\xe0\xb8\x84\xe0\xb9\x87\xe0\xb8\x99|\xe0\xb9\x82\xe0\xb8\x97\xe0\xb9\x80\xe0\xb8\x84\xe0\xb8\x99))");
    std::vector<std::sregex_iterator> words_to_say;
    for (auto it = std::sregex_iterator(low_.begin(), low_.end(), money_word); it != std::sregex_iterator(); ++it)
      words_to_say.push_back(it);
    if (!got("tokens"))
      for (auto it = std::sregex_iterator(low_.begin(), low_.end(), token_word); it != std::sregex_iterator(); ++it)
        words_to_say.push_back(it);
    for (const auto& it : words_to_say) {
      const int g = (*it)[1].matched ? 1 : 2;
      const std::size_t at = static_cast<std::size_t>(it->position(g)), end = at + static_cast<std::size_t>(it->length(g));
      if (is_taken(at, end)) continue;
      std::size_t from = at;
      // Up to three words before it, never into words a field read ("100 ล้านโทเคน งบห้าร้อยดอลลาร์").
      const auto free_before = [&](std::size_t k) { return k > 0 && !is_taken(k - 1, k); };
      for (int words = 0; words < 3 && free_before(from); ++words) {
        while (free_before(from) && low_[from - 1] == ' ') --from;
        if (free_before(from) && (low_[from - 1] == ',' || low_[from - 1] == ':' || low_[from - 1] == ';')) break;
        while (free_before(from) && word_char(from - 1)) --from;
      }
      while (from < at && low_[from] == ' ') ++from;
      result_.unread.push_back(low_.substr(from, end - from));
      taken_.emplace_back(from, end);
    }
  }

  std::string low_;
  const GpuCatalog& gpus_;
  std::string today_;  ///< YYYY-MM-DD (the clock's or --today), for "by Friday"; "" = unknown
  AskResult result_;
  std::vector<std::pair<std::size_t, std::size_t>> taken_;  ///< byte ranges of low_ read into a field
};

}  // namespace

json AskResult::plan_body() const {
  json body = json::object();
  for (const auto& f : fields) {
    if (f.name == "budget_usd" || f.name == "deadline_seconds" || !f.not_used.empty()) continue;
    body[f.name] = f.value;
  }
  // The planner's own constraints: only plans within them are listed, and the recommendation
  // follows `gpuplan plan --deadline/--budget` (none within them: no plan, and by how much the
  // closest miss).
  if (deadline_seconds) body["deadline"] = fmt::format("{:.0f}s", *deadline_seconds);
  if (budget_usd) body["budget"] = *budget_usd;
  return body;
}

std::string sentence_language(std::string_view sentence) {
  return guess_language(ascii_digits(plain_spaces(lower_ascii(sentence))));
}

AskResult understand(std::string_view sentence, const GpuCatalog& gpus, std::string_view today) {
  // Bytes that are not UTF-8 (or control characters) are refused at their position, as in a filter
  // or a model name (trial48: `ask $'fine-tune llama \xff\xfe'` was read without a word).
  if (const auto pr = find_text_problem(sentence, /*allow_newlines=*/true))
    throw_invalid_coded("question", "text_not_clean", {{"position", fmt::format("1:{}", pr->offset + 1)}},
                        fmt::format("{} in the sentence at character {}", pr->what, pr->offset + 1),
                        "UTF-8 text without control characters");
  return Reader(sentence, gpus, today).run();
}

std::optional<std::size_t> first_plan_within(const AskResult& ask, const PlanResult& result) {
  for (std::size_t i = 0; i < result.plans.size(); ++i) {
    const Plan& p = result.plans[i];
    if (ask.budget_usd && p.total_usd() > *ask.budget_usd) continue;
    if (ask.deadline_seconds && p.time_seconds() > *ask.deadline_seconds) continue;
    return i;
  }
  return std::nullopt;
}

std::string within_text_key(const AskResult& ask, bool found) {
  if (!ask.budget_usd && !ask.deadline_seconds) return {};
  const std::string base = found ? "within_yes" : "within_no";
  if (!ask.budget_usd) return base + "_deadline";
  if (!ask.deadline_seconds) return base + "_budget";
  return base;
}

json to_json(const AskResult& ask) {
  json fields = json::array();
  for (const auto& f : ask.fields)
    fields.push_back({{"name", f.name}, {"value", f.value}, {"source", f.source}, {"mark", f.mark}, {"not_used", f.not_used}});
  return {{"language", ask.language},
          {"fields", fields},
          {"missing", ask.missing},
          {"ambiguous", [&] {
             json a = json::array();
             for (const auto& f : ask.ambiguous) a.push_back({{"name", f.name}, {"readings", f.readings}});
             return a;
           }()},
          {"model_candidates", ask.model_candidates ? json{{"words", ask.model_candidates->words},
                                                          {"presets", ask.model_candidates->presets}}
                                                    : json(nullptr)},
          {"unread", ask.unread},
          {"budget_usd", ask.budget_usd ? json(*ask.budget_usd) : json(nullptr)},
          {"deadline_seconds", ask.deadline_seconds ? json(*ask.deadline_seconds) : json(nullptr)},
          {"plan_request", ask.plan_body()}};
}

}  // namespace gpuplan::api
