#include "api/assistant.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>

#include "model/presets.hpp"
#include "util/error.hpp"

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
                    "\xc3\xa9", "\xc3\xa8", "\xc3\xa0"}))
    return "fr";
  return "en";
}

/// "1,5" (French decimal) or "200,000" (English thousands) → a double. A number a double cannot
/// hold ("1e999") is Error{invalid_input} at "question" naming it (a trial found `ask` ending in
/// "internal error: stod", exit 70).
double read_number(std::string text, const std::string& language) {
  const std::string as_written = text;
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  if (language == "fr" && std::regex_match(text, std::regex(R"(\d+,\d{1,2})"))) {
    std::replace(text.begin(), text.end(), ',', '.');
  } else {
    text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  }
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v))
    throw Error(ErrorKind::invalid_input, "question", fmt::format("the number \"{}\" is out of range", as_written),
                "a number below 1e300, e.g. 5e8 or 500 million");
  return v;
}

/// value × scale, refused like read_number when the product overflows ("1e300 billion").
double scaled(double value, double scale, const std::string& as_written) {
  const double v = value * scale;
  if (!std::isfinite(v))
    throw Error(ErrorKind::invalid_input, "question", fmt::format("the number \"{}\" is out of range", as_written),
                "a number below 1e300, e.g. 5e8 or 500 million");
  return v;
}

double scale_of(const std::string& unit) {
  if (unit.empty()) return 1;
  if (unit == "k" || unit == "thousand" || unit == "mille" || unit == "\xe0\xb8\x9e\xe0\xb8\xb1\xe0\xb8\x99") return 1e3;  // พัน
  if (unit == "\xe0\xb8\xab\xe0\xb8\xa1\xe0\xb8\xb7\xe0\xb9\x88\xe0\xb8\x99") return 1e4;                                   // หมื่น
  if (unit == "\xe0\xb9\x81\xe0\xb8\xaa\xe0\xb8\x99") return 1e5;                                                            // แสน
  if (unit == "m" || unit.rfind("million", 0) == 0 || unit == "\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99") return 1e6;  // ล้าน
  if (unit == "b" || unit.rfind("billion", 0) == 0 || unit.rfind("milliard", 0) == 0 ||
      unit == "\xe0\xb8\x9e\xe0\xb8\xb1\xe0\xb8\x99\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99")  // พันล้าน
    return 1e9;
  if (unit == "t" || unit.rfind("trillion", 0) == 0) return 1e12;
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
    "\xe0\xb8\x9e\xe0\xb8\xb1\xe0\xb8\x99\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99|"  // พันล้าน
    "\xe0\xb8\xa5\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\x99|"                                      // ล้าน
    "\xe0\xb9\x81\xe0\xb8\xaa\xe0\xb8\x99|"                                                  // แสน
    "\xe0\xb8\xab\xe0\xb8\xa1\xe0\xb8\xb7\xe0\xb9\x88\xe0\xb8\x99|"                          // หมื่น
    "\xe0\xb8\x9e\xe0\xb8\xb1\xe0\xb8\x99";                                                  // พัน
const std::string kNumber = R"((\d+(?:[.,]\d+)*(?:e\d+)?))";

class Reader {
 public:
  Reader(std::string_view sentence, const GpuCatalog& gpus) : low_(lower_ascii(sentence)), gpus_(gpus) {
    result_.language = guess_language(low_);
  }

  AskResult run() {
    read_model();
    read_task();
    read_tokens();
    read_images();
    read_rate();
    read_money();
    read_duration();
    read_gpu();
    decide_missing();
    return result_;
  }

 private:
  void add(std::string name, json value, std::string source) {
    for (const auto& f : result_.fields)
      if (f.name == name) return;  // first reading wins
    result_.fields.push_back({std::move(name), std::move(value), std::move(source)});
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
    if (best_len > 0) add("model", best_name, low_.substr(at[best_pos], at[best_pos + best_len - 1] - at[best_pos] + 1));
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
        if (has(low_, w)) {
          add("task", r.task, std::string(w));
          return;
        }
      }
    }
  }

  void read_tokens() {
    static const std::regex re(kNumber + R"(\s*()" + kScaleWords +
                               R"()?\s*(?:de\s+|d')?(tokens?|jetons?|\xe0\xb9\x82\xe0\xb8\x97\xe0\xb9\x80\xe0\xb8\x84(?:\xe0\xb9\x87)?\xe0\xb8\x99))");
    std::smatch m;
    if (std::regex_search(low_, m, re)) {
      add("tokens", scaled(read_number(m[1].str(), result_.language), scale_of(m[2].str()), m[0].str()), m[0].str());
    }
  }

  void read_images() {
    static const std::regex re(kNumber + R"(\s*()" + kScaleWords +
                               R"()?\s*(images?|\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\x9e|\xe0\xb8\xa3\xe0\xb8\xb9\xe0\xb8\x9b))");
    std::smatch m;
    if (std::regex_search(low_, m, re)) {
      add("images", scaled(read_number(m[1].str(), result_.language), scale_of(m[2].str()), m[0].str()), m[0].str());
    }
  }

  void read_rate() {
    static const std::regex rps(kNumber + R"(\s*(?:rps|req/s|(?:requests?|requ\xc3\xaates?|\xe0\xb8\x84\xe0\xb8\xb3\xe0\xb8\x82\xe0\xb8\xad)\s*(?:/|per|par|\xe0\xb8\x95\xe0\xb9\x88\xe0\xb8\xad)\s*(?:s\b|sec|second|seconde|\xe0\xb8\xa7\xe0\xb8\xb4\xe0\xb8\x99\xe0\xb8\xb2\xe0\xb8\x97\xe0\xb8\xb5)))");
    static const std::regex users(kNumber + R"(\s*(?:concurrent users|users|utilisateurs|\xe0\xb8\x9c\xe0\xb8\xb9\xe0\xb9\x89\xe0\xb9\x83\xe0\xb8\x8a\xe0\xb9\x89))");
    std::smatch m;
    if (std::regex_search(low_, m, rps)) add("rps", read_number(m[1].str(), result_.language), m[0].str());
    if (std::regex_search(low_, m, users)) add("concurrency", read_number(m[1].str(), result_.language), m[0].str());
  }

  void read_money() {
    static const std::regex before(R"((?:us)?\$\s*)" + kNumber + R"(\s*(k)?)");
    static const std::regex after(kNumber + R"(\s*(k)?\s*(?:\$|usd|dollars?|\xe0\xb8\x94\xe0\xb8\xad\xe0\xb8\xa5\xe0\xb8\xa5\xe0\xb8\xb2\xe0\xb8\xa3\xe0\xb9\x8c))");
    std::smatch m;
    if (std::regex_search(low_, m, before) || std::regex_search(low_, m, after)) {
      const double v = scaled(read_number(m[1].str(), result_.language), m[2].matched ? 1e3 : 1, m[0].str());
      result_.budget_usd = v;
      add("budget_usd", v, m[0].str());
    }
  }

  void read_duration() {
    std::string words;
    for (const auto& [w, n] : number_words()) words += (words.empty() ? "" : "|") + w;
    static const std::string units =
        R"((hours?|h\b|heures?|\xe0\xb8\x8a\xe0\xb8\xb1\xe0\xb9\x88\xe0\xb8\xa7\xe0\xb9\x82\xe0\xb8\xa1\xe0\xb8\x87|days?|jours?|\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\x99|weeks?|semaines?|\xe0\xb8\xaa\xe0\xb8\xb1\xe0\xb8\x9b\xe0\xb8\x94\xe0\xb8\xb2\xe0\xb8\xab\xe0\xb9\x8c))";
    // The number as kNumber reads it (an exponent included: "1e999 hours" was read as "999 hours").
    const std::regex re("(\\d+(?:[.,]\\d+)*(?:e\\d+)?|" + words + ")\\s*" + units);
    std::smatch m;
    if (!std::regex_search(low_, m, re)) return;
    double n = 0;
    const std::string num = m[1].str();
    if (std::isdigit(static_cast<unsigned char>(num[0]))) {
      n = read_number(num, result_.language);
    } else {
      for (const auto& [w, v] : number_words())
        if (w == num) n = v;
    }
    const std::string unit = m[2].str();
    double seconds = scaled(n, 3600, m[0].str());
    if (unit.rfind("day", 0) == 0 || unit.rfind("jour", 0) == 0 || unit == "\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\x99") seconds = scaled(n, 86400, m[0].str());
    if (unit.rfind("week", 0) == 0 || unit.rfind("semaine", 0) == 0 || unit.rfind("\xe0\xb8\xaa\xe0\xb8\xb1", 0) == 0)
      seconds = scaled(n, 7 * 86400, m[0].str());
    if (task_is("serve")) {
      add("hours", seconds / 3600, m[0].str());  // a service runs for a duration
    } else {
      result_.deadline_seconds = seconds;
      add("deadline_seconds", seconds, m[0].str());
    }
  }

  void read_gpu() {
    static const std::regex re(
        R"(\b(gb200|b200|b100|h200|h100|h800|a100|a10g|a10|l40s|l40|l4|mi300x|mi325x|mi250x|v100|t4|rtx ?a\d{4}|rtx ?\d{4}(?: ?ti)?|a6000)\b)");
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
    add("filter", "gpu=" + upper, m[0].str());
  }

  bool task_is(std::string_view t) const {
    for (const auto& f : result_.fields)
      if (f.name == "task") return f.value == t;
    return false;
  }

  void decide_missing() {
    if (!got("model")) result_.missing.push_back("model");
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

  std::string low_;
  const GpuCatalog& gpus_;
  AskResult result_;
};

}  // namespace

json AskResult::plan_body() const {
  json body = json::object();
  for (const auto& f : fields) {
    if (f.name == "budget_usd" || f.name == "deadline_seconds") continue;
    body[f.name] = f.value;
  }
  // The planner's own constraints: only plans within them are listed, and the recommendation
  // follows `gpuplan plan --deadline/--budget` (none within them: no plan, and by how much the
  // closest miss).
  if (deadline_seconds) body["deadline"] = fmt::format("{:.0f}s", *deadline_seconds);
  if (budget_usd) body["budget"] = *budget_usd;
  return body;
}

AskResult understand(std::string_view sentence, const GpuCatalog& gpus) { return Reader(sentence, gpus).run(); }

std::optional<std::size_t> first_plan_within(const AskResult& ask, const PlanResult& result) {
  for (std::size_t i = 0; i < result.plans.size(); ++i) {
    const Plan& p = result.plans[i];
    if (ask.budget_usd && p.total_usd() > *ask.budget_usd) continue;
    if (ask.deadline_seconds && p.time_seconds() > *ask.deadline_seconds) continue;
    return i;
  }
  return std::nullopt;
}

json to_json(const AskResult& ask) {
  json fields = json::array();
  for (const auto& f : ask.fields) fields.push_back({{"name", f.name}, {"value", f.value}, {"source", f.source}});
  return {{"language", ask.language},
          {"fields", fields},
          {"missing", ask.missing},
          {"budget_usd", ask.budget_usd ? json(*ask.budget_usd) : json(nullptr)},
          {"deadline_seconds", ask.deadline_seconds ? json(*ask.deadline_seconds) : json(nullptr)},
          {"plan_request", ask.plan_body()}};
}

}  // namespace gpuplan::api
