#include "model/presets.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "model/hf_config.hpp"
#include "util/embedded.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"
#include "util/text_check.hpp"

namespace gpuplan {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view c) {
  while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
  while (!c.empty() && c.back() == ' ') c.remove_suffix(1);
  return c;
}

/// The cells of data/models/PROVENANCE.md's table row for `folder` (the bundled, compiled-in copy):
/// | folder | source repo / URL | path | commit | class | notes |; empty if no row.
std::vector<std::string> provenance_row(std::string_view folder) {
  auto md = embedded_file("models/PROVENANCE.md");
  if (!md) return {};
  const std::string needle = fmt::format("| {} |", folder);
  std::string_view text = *md;
  std::size_t pos = text.find(needle);
  if (pos == std::string_view::npos) return {};
  std::size_t eol = text.find('\n', pos);
  std::string_view row = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
  std::vector<std::string> cells;
  std::size_t start = 1;
  while (true) {
    std::size_t bar = row.find('|', start);
    if (bar == std::string_view::npos) break;
    cells.emplace_back(trim(row.substr(start, bar - start)));
    start = bar + 1;
  }
  return cells;
}

/// Where the row says the config was copied from: a GitHub repo "owner/name" with the path (in
/// backticks, a note after " (" dropped) at the commit → the file's address at that commit, no
/// revision apart; a URL → the URL (a note after a space dropped) and the revision ("HF rev
/// 367d8cb" → "367d8cb"; "main" or a revision already in the URL: ""). {"", ""} without a row.
struct CopiedFrom {
  std::string url;
  std::string revision;
};
CopiedFrom copied_from(const std::vector<std::string>& cells) {
  if (cells.size() < 4) return {};
  std::string_view source = cells[1], path = cells[2], commit = cells[3];
  if (source.starts_with("https://")) {
    std::string url(source.substr(0, source.find(' ')));
    std::string_view rev = commit;
    if (rev.starts_with("HF rev ")) rev.remove_prefix(7);
    if (rev.empty() || rev == "main" || url.find(rev) != std::string::npos) return {std::move(url), {}};
    return {std::move(url), std::string(rev)};
  }
  if (path.starts_with('`')) path.remove_prefix(1);
  path = path.substr(0, path.find('`'));
  path = trim(path.substr(0, path.find(" (")));
  return {fmt::format("https://github.com/{}/blob/{}/{}", source, commit, path), {}};
}

PresetInfo make(std::string short_name, std::string hf_id, std::string folder, std::vector<std::string> aliases = {}) {
  PresetInfo p{std::move(short_name), std::move(hf_id), std::move(folder), {}, std::move(aliases), {}, {}, {}, {}};
  const std::vector<std::string> cells = provenance_row(p.folder);
  if (cells.size() >= 5) p.provenance_class = cells[4];
  CopiedFrom from = copied_from(cells);
  p.config_copied_from = from.revision.empty() ? from.url : fmt::format("{} (revision {})", from.url, from.revision);
  p.config_url = std::move(from.url);
  p.config_revision = std::move(from.revision);
  p.hf_url = "https://huggingface.co/" + p.hf_id.substr(0, p.hf_id.find(" ("));  // "… (unet)": the pipeline's repo
  return p;
}

/// Edit distance for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

/// A model name as words, separators and the letter/digit seam normalised away: lower case, split
/// at '-', '_', ' ', '/' and where a version number follows letters ("llama3-70b" and
/// "llama-3-70b" → llama 3 70b; "qwen2.5-7b" → qwen 2.5 7b; "flux.1-schnell" → flux 1 schnell).
/// A size ("70b", "0.5b", "8x7b") stays one word.
std::vector<std::string> name_words(std::string_view name) {
  std::vector<std::string> out;
  std::string cur;
  const auto flush = [&] {
    if (!cur.empty()) out.push_back(std::move(cur));
    cur.clear();
  };
  const std::string s = lower(name);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '-' || c == '_' || c == ' ' || c == '/') {
      flush();
    } else if (c == '.' && !cur.empty() && is_alpha(cur.back()) && i + 1 < s.size() && is_digit(s[i + 1])) {
      flush();  // "flux.1"
    } else {
      if (is_digit(c) && cur.size() >= 2 && std::ranges::all_of(cur, is_alpha)) flush();  // "llama3" → llama 3, not "a3b"
      cur += c;
    }
  }
  flush();
  return out;
}

/// A version word: digits and dots only ("3", "3.1", "2.5").
bool is_version(std::string_view w) {
  return !w.empty() && is_digit(w.front()) && std::ranges::all_of(w, [](char c) { return is_digit(c) || c == '.'; });
}

/// A size word's parameter count: "70b" → 7e10, "0.5b" → 5e8, "350m" → 3.5e8; nullopt otherwise.
std::optional<double> size_of(std::string_view w) {
  if (w.size() < 2 || !is_digit(w.front()) || (w.back() != 'b' && w.back() != 'm')) return std::nullopt;
  const std::string_view digits = w.substr(0, w.size() - 1);
  if (!std::ranges::all_of(digits, [](char c) { return is_digit(c) || c == '.'; })) return std::nullopt;
  try {
    return std::stod(std::string(digits)) * (w.back() == 'b' ? 1e9 : 1e6);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// How close a preset name is to what was typed, lower = closer; nullopt = not close (no hint).
/// Compared word by word (name_words), in this order:
///  1. family (the first word): the same (0), else one edit away when both have 4+ letters
///     ("lama" ~ "llama", 1; used only where no preset has the same family), else the typed name
///     is inside the preset's (2);
///  2. version (the word after the family, digits and dots): the same (0); the typed one is the
///     preset's major version ("3" of "3.1", 1); none typed (2); another version: not close
///     (never llama-2 for "llama-3.1-71b");
///  3. size ("70b"): |ln(typed / preset)|, 0 when none typed, 99 when the preset has none;
///  4. the other words: how many of the typed ones the preset lacks.
struct Closeness {
  int family = 0, version = 0;
  double size = 0;
  std::size_t missing_words = 0;
  auto operator<=>(const Closeness&) const = default;
};

std::optional<Closeness> closeness(const std::vector<std::string>& typed, std::string_view typed_name, std::string_view name) {
  const std::vector<std::string> words = name_words(name);
  if (typed.empty() || words.empty()) return std::nullopt;
  Closeness c;
  const std::string& fam = typed.front();
  if (fam == words.front()) {
    c.family = 0;
  } else if (fam.size() >= 4 && words.front().size() >= 4 && is_alpha(fam.front()) && edit_distance(fam, words.front()) <= 1) {
    c.family = 1;
  } else if (typed_name.size() >= 3 && lower(name).find(lower(typed_name)) != std::string::npos) {
    c.family = 2;
  } else {
    return std::nullopt;
  }
  const std::string typed_version = typed.size() > 1 && is_version(typed[1]) ? typed[1] : std::string();
  const std::string version = words.size() > 1 && is_version(words[1]) ? words[1] : std::string();
  if (typed_version.empty()) {
    c.version = 2;
  } else if (typed_version == version) {
    c.version = 0;
  } else if (!version.empty() && typed_version.find('.') == std::string::npos && version.starts_with(typed_version + ".")) {
    c.version = 1;
  } else if (c.family < 2) {
    return std::nullopt;  // another version of the family
  } else {
    c.version = 2;
  }
  std::optional<double> typed_size, size;
  for (const auto& w : typed)
    if (!typed_size) typed_size = size_of(w);
  for (const auto& w : words)
    if (!size) size = size_of(w);
  c.size = !typed_size ? 0.0 : !size ? 99.0 : std::abs(std::log(*typed_size / *size));
  for (std::size_t i = 1; i < typed.size(); ++i) {
    if (typed[i] == typed_version || size_of(typed[i])) continue;
    if (std::ranges::find(words, typed[i]) == words.end()) ++c.missing_words;
  }
  return c;
}

/// Whether `prefix`'s words begin `words` and are fewer ("mistral-7b" of "mistral-7b-v0.1").
bool words_prefix(const std::vector<std::string>& prefix, const std::vector<std::string>& words) {
  return !prefix.empty() && prefix.size() < words.size() && std::equal(prefix.begin(), prefix.end(), words.begin());
}

}  // namespace

const std::vector<PresetInfo>& list_presets() {
  // Short names: the Hugging Face model name in lower case; "-hf" / "-v0.1" suffixes dropped where the
  // family has one variant here (the full lower-case name stays an alias); diffusion components by role.
  static const std::vector<PresetInfo> kPresets = {
      make("llama-2-7b", "meta-llama/Llama-2-7b-hf", "meta-llama__Llama-2-7b-hf", {"llama-2-7b-hf"}),
      make("llama-2-13b", "meta-llama/Llama-2-13b-hf", "meta-llama__Llama-2-13b-hf", {"llama-2-13b-hf"}),
      make("llama-2-70b-chat", "meta-llama/Llama-2-70b-chat-hf", "meta-llama__Llama-2-70b-chat-hf", {"llama-2-70b-chat-hf"}),
      make("llama-3.1-8b", "meta-llama/Llama-3.1-8B", "meta-llama__Llama-3.1-8B", {"meta-llama-3.1-8b"}),
      make("llama-3.1-70b", "meta-llama/Llama-3.1-70B", "meta-llama__Llama-3.1-70B", {"meta-llama-3.1-70b"}),
      make("llama-3.1-405b", "meta-llama/Llama-3.1-405B", "meta-llama__Llama-3.1-405B", {"meta-llama-3.1-405b"}),
      make("llama-3.2-1b-instruct", "meta-llama/Llama-3.2-1B-Instruct", "meta-llama__Llama-3.2-1B-Instruct", {"llama-3.2-1b"}),
      make("llama-3.2-3b-instruct", "meta-llama/Llama-3.2-3B-Instruct", "meta-llama__Llama-3.2-3B-Instruct", {"llama-3.2-3b"}),
      make("llama-4-scout-17b-16e-instruct", "meta-llama/Llama-4-Scout-17B-16E-Instruct",
           "meta-llama__Llama-4-Scout-17B-16E-Instruct", {"llama-4-scout"}),
      // No alias "mistral-7b": it names mistral-7b-instruct-v0.3 as well (an ambiguous_model error).
      make("mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1", "mistralai__Mistral-7B-v0.1"),
      make("mistral-7b-instruct-v0.3", "mistralai/Mistral-7B-Instruct-v0.3", "mistralai__Mistral-7B-Instruct-v0.3"),
      make("mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1", "mistralai__Mixtral-8x7B-v0.1", {"mixtral-8x7b-v0.1"}),
      make("mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1", "mistralai__Mixtral-8x22B-v0.1", {"mixtral-8x22b-v0.1"}),
      make("qwen2.5-0.5b-instruct", "Qwen/Qwen2.5-0.5B-Instruct", "Qwen__Qwen2.5-0.5B-Instruct"),
      make("qwen2.5-7b-instruct", "Qwen/Qwen2.5-7B-Instruct", "Qwen__Qwen2.5-7B-Instruct"),
      make("qwen2.5-14b", "Qwen/Qwen2.5-14B", "Qwen__Qwen2.5-14B"),
      make("qwen2.5-32b-instruct", "Qwen/Qwen2.5-32B-Instruct", "Qwen__Qwen2.5-32B-Instruct"),
      make("qwen2.5-72b", "Qwen/Qwen2.5-72B", "Qwen__Qwen2.5-72B"),
      make("qwen3-0.6b", "Qwen/Qwen3-0.6B", "Qwen__Qwen3-0.6B"),
      make("qwen3-1.7b", "Qwen/Qwen3-1.7B", "Qwen__Qwen3-1.7B"),
      make("qwen3-8b", "Qwen/Qwen3-8B", "Qwen__Qwen3-8B"),
      make("qwen3-14b", "Qwen/Qwen3-14B", "Qwen__Qwen3-14B"),
      make("qwen3-32b", "Qwen/Qwen3-32B", "Qwen__Qwen3-32B"),
      make("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", "Qwen__Qwen3-30B-A3B"),
      make("qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B", "Qwen__Qwen3-235B-A22B"),
      make("deepseek-v3", "deepseek-ai/DeepSeek-V3", "deepseek-ai__DeepSeek-V3"),
      make("deepseek-r1", "deepseek-ai/DeepSeek-R1", "deepseek-ai__DeepSeek-R1"),
      make("gpt-oss-20b", "openai/gpt-oss-20b", "openai__gpt-oss-20b"),
      make("gpt-oss-120b", "openai/gpt-oss-120b", "openai__gpt-oss-120b"),
      make("gemma-2-9b", "google/gemma-2-9b", "google__gemma-2-9b"),
      make("gemma-2-27b", "google/gemma-2-27b", "google__gemma-2-27b"),
      make("phi-3-mini-4k-instruct", "microsoft/Phi-3-mini-4k-instruct", "microsoft__Phi-3-mini-4k-instruct", {"phi-3-mini"}),
      make("phi-4", "microsoft/phi-4", "microsoft__phi-4"),
      make("phi-1", "microsoft/phi-1", "microsoft__phi-1"),
      make("phi-2", "microsoft/phi-2", "microsoft__phi-2"),
      make("smollm3-3b", "HuggingFaceTB/SmolLM3-3B", "HuggingFaceTB__SmolLM3-3B", {"smollm3"}),
      make("pythia-410m", "EleutherAI/pythia-410m", "EleutherAI__pythia-410m"),
      make("bert-base-uncased", "google-bert/bert-base-uncased", "google-bert__bert-base-uncased", {"bert-base"}),
      make("t5-large", "google-t5/t5-large", "google-t5__t5-large"),
      make("olmo-3.1-32b-instruct", "allenai/Olmo-3.1-32B-Instruct", "allenai__Olmo-3.1-32B-Instruct", {"olmo-3.1-32b"}),
      make("falcon-7b", "tiiuae/falcon-7b", "tiiuae__falcon-7b"),
      make("gpt2", "openai-community/gpt2", "openai-community__gpt2", {"gpt-2"}),
      make("opt-66b", "facebook/opt-66b", "facebook__opt-66b"),
      make("bloom", "bigscience/bloom", "bigscience__bloom", {"bloom-176b"}),
      make("mamba-2.8b", "state-spaces/mamba-2.8b-hf", "state-spaces__mamba-2.8b-hf", {"mamba-2.8b-hf"}),
      make("nemotron-h-56b", "nvidia/Nemotron-H-56B-Base-8K", "nvidia__Nemotron-H-56B-Base-8K", {"nemotron-h-56b-base-8k"}),
      make("sdxl-unet", "stabilityai/stable-diffusion-xl-base-1.0 (unet)", "stabilityai__stable-diffusion-xl-base-1.0__unet",
           {"stable-diffusion-xl-base-1.0", "sdxl"}),
      make("flux.1-schnell", "black-forest-labs/FLUX.1-schnell (transformer)", "black-forest-labs__FLUX.1-schnell__transformer",
           {"flux-schnell"}),
  };
  return kPresets;
}

const PresetInfo* find_preset(std::string_view name) {
  const std::string key = lower(name);
  for (const auto& p : list_presets()) {
    if (key == p.short_name || key == lower(p.folder) || key == lower(p.hf_id)) return &p;
    // HF id without the " (unet)" component note.
    auto paren = p.hf_id.find(" (");
    if (paren != std::string::npos && key == lower(p.hf_id.substr(0, paren))) return &p;
    for (const auto& a : p.aliases) {
      if (key == a) return &p;
    }
  }
  return nullptr;
}

std::vector<std::string> presets_begun_by(std::string_view name) {
  const std::vector<std::string> typed = name_words(name);
  if (typed.size() < 2) return {};
  std::vector<std::string> begun;
  for (const auto& q : list_presets()) {
    bool b = words_prefix(typed, name_words(q.short_name));
    for (const auto& a : q.aliases) b = b || words_prefix(typed, name_words(a));
    if (b) begun.push_back(q.short_name);
  }
  if (begun.size() < 2) return {};
  return begun;
}

ModelArch load_preset(std::string_view short_name) {
  // No preset or Hugging Face id is this long (a repo name has at most 96 characters): refused
  // without echoing the name (a trial's 60 KB name came back whole in the error and the page).
  constexpr std::size_t kMaxModelNameChars = 128;
  if (short_name.size() > kMaxModelNameChars)
    throw_not_found_coded("--model", "unknown_model_name_too_long",
                          {{"length", std::to_string(short_name.size())}, {"max", std::to_string(kMaxModelNameChars)}},
                          fmt::format("unknown model: no name has {} characters", short_name.size()),
                          fmt::format("a preset name of at most {} characters (see `gpuplan models`)", kMaxModelNameChars));
  // A name that is not clean UTF-8 (`/api/models?name=%c3%28`) is bad input, as in a filter,
  // not an unknown name (it was a 404 that echoed the bytes): 400, the byte's position.
  if (const auto pr = find_text_problem(short_name, /*allow_newlines=*/false))
    throw_invalid_coded("--model", "text_not_clean", {{"position", fmt::format("1:{}", pr->offset + 1)}},
                        fmt::format("{} in the model name at character {}", pr->what, pr->offset + 1),
                        "UTF-8 text without control characters");
  const PresetInfo* p = find_preset(short_name);
  if (!p) {
    const std::vector<std::string> typed = name_words(short_name);
    // A name of two or more words that begins several presets' names ("mistral-7b":
    // mistral-7b-v0.1 and mistral-7b-instruct-v0.3) is not resolved to one of them silently:
    // refused with them all. A bare family ("llama") stays an unknown name with suggestions.
    const std::vector<std::string> begun = presets_begun_by(short_name);
    if (!begun.empty())
      throw_invalid_coded("--model", "ambiguous_model", {{"name", std::string(short_name)}, {"candidates", fmt::format("{}", fmt::join(begun, ", "))}},
                          fmt::format("model name '{}' matches {} presets: {}", short_name, begun.size(), fmt::join(begun, ", ")),
                          "one of them, by its full name (see `gpuplan models`)");
    // Otherwise suggest close names only, the closest first (closeness() above; trial of issue
    // 10: "llama-3.1-71b" listed llama-2 models, "llama3-70b" llama-2-7b first, "lama3" none).
    std::vector<std::pair<Closeness, std::string>> scored;
    for (const auto& q : list_presets()) {
      std::optional<Closeness> best = closeness(typed, short_name, q.short_name);
      for (const auto& a : q.aliases)
        if (auto c = closeness(typed, short_name, a); c && (!best || *c < *best)) best = c;
      if (best) scored.emplace_back(*best, q.short_name);
    }
    // A fuzzy family ("lama" ~ "llama") only where no preset has the typed family ("mistral" is
    // not "mixtral").
    const bool exact_family = std::ranges::any_of(scored, [](const auto& s) { return s.first.family == 0; });
    if (exact_family) std::erase_if(scored, [](const auto& s) { return s.first.family == 1; });
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> near;
    for (std::size_t i = 0; i < scored.size() && near.size() < 5; ++i) near.push_back(scored[i].second);
    if (near.empty())  // nothing close: no list of unrelated names, only where the names are
      throw_not_found_coded("--model", "unknown_model_no_near", {{"name", std::string(short_name)}},
                            fmt::format("unknown model preset '{}'", short_name),
                            "a preset name (see `gpuplan models`)");
    throw_not_found_coded("--model", "unknown_model", {{"name", std::string(short_name)}, {"near", fmt::format("{}", fmt::join(near, ", "))}},
                          fmt::format("unknown model preset '{}'", short_name),
                          fmt::format("a preset such as {} (see `gpuplan models`)", fmt::join(near, ", ")));
  }
  // A preset is embedded, immutable data: each is parsed once per process and copied after (the
  // server parsed the model's config.json for every plan request: 0.7% of a distinct plan's
  // instructions, bench/plan_instructions.sh). Bounded by the number of presets.
  static std::mutex parsed_mutex;
  static std::map<std::string, ModelArch, std::less<>> parsed;
  {
    std::lock_guard<std::mutex> lock(parsed_mutex);
    if (auto it = parsed.find(p->short_name); it != parsed.end()) return it->second;
  }
  const std::string path = fmt::format("models/{}/config.json", p->folder);
  const std::string_view text = embedded_file_or_throw(path);
  ModelArch a = parse_hf_config_text(text, "data/" + path);
  a.name = p->short_name;
  // Where the config comes from, as addresses a reader can open (not the repository's
  // data/models/... path: trial of issue 10, D2).
  a.source = fmt::format("preset {}: {} ({}); config.json copied from {}, provenance class {}", p->short_name, p->hf_id,
                         p->hf_url, p->config_copied_from.empty() ? "unknown" : p->config_copied_from,
                         p->provenance_class.empty() ? "unknown" : p->provenance_class);
  std::lock_guard<std::mutex> lock(parsed_mutex);
  parsed.emplace(p->short_name, a);
  return a;
}

}  // namespace gpuplan
