#include "model/presets.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "model/hf_config.hpp"
#include "util/embedded.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// The fidelity class column of data/models/PROVENANCE.md's table row for `folder`.
std::string provenance_class_of(std::string_view folder) {
  auto md = embedded_file("models/PROVENANCE.md");
  if (!md) return {};
  const std::string needle = fmt::format("| {} |", folder);
  std::string_view text = *md;
  std::size_t pos = text.find(needle);
  if (pos == std::string_view::npos) return {};
  std::size_t eol = text.find('\n', pos);
  std::string_view row = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
  // | folder | source | path | commit | class | notes |
  std::vector<std::string_view> cells;
  std::size_t start = 1;
  while (true) {
    std::size_t bar = row.find('|', start);
    if (bar == std::string_view::npos) break;
    cells.push_back(row.substr(start, bar - start));
    start = bar + 1;
  }
  if (cells.size() < 5) return {};
  std::string_view c = cells[4];
  while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
  while (!c.empty() && c.back() == ' ') c.remove_suffix(1);
  return std::string(c);
}

PresetInfo make(std::string short_name, std::string hf_id, std::string folder, std::vector<std::string> aliases = {}) {
  PresetInfo p{std::move(short_name), std::move(hf_id), std::move(folder), {}, std::move(aliases)};
  p.provenance_class = provenance_class_of(p.folder);
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
      make("mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1", "mistralai__Mistral-7B-v0.1", {"mistral-7b"}),
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
      make("olmo-3.1-32b-instruct", "allenai/Olmo-3.1-32B-Instruct", "allenai__Olmo-3.1-32B-Instruct", {"olmo-3.1-32b"}),
      make("falcon-7b", "tiiuae/falcon-7b", "tiiuae__falcon-7b"),
      make("gpt2", "openai-community/gpt2", "openai-community__gpt2", {"gpt-2"}),
      make("opt-66b", "facebook/opt-66b", "facebook__opt-66b"),
      make("bloom", "bigscience/bloom", "bigscience__bloom", {"bloom-176b"}),
      make("mamba-2.8b", "state-spaces/mamba-2.8b-hf", "state-spaces__mamba-2.8b-hf", {"mamba-2.8b-hf"}),
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

ModelArch load_preset(std::string_view short_name) {
  // No preset or Hugging Face id is this long (a repo name has at most 96 characters): refused
  // without echoing the name (a trial's 60 KB name came back whole in the error and the page).
  constexpr std::size_t kMaxModelNameChars = 128;
  if (short_name.size() > kMaxModelNameChars)
    throw_not_found_coded("--model", "unknown_model_name_too_long",
                          {{"length", std::to_string(short_name.size())}, {"max", std::to_string(kMaxModelNameChars)}},
                          fmt::format("unknown model: no name has {} characters", short_name.size()),
                          fmt::format("a preset name of at most {} characters (see `gpuplan models`)", kMaxModelNameChars));
  const PresetInfo* p = find_preset(short_name);
  if (!p) {
    // Suggest only close names (trial of issue 10, D9e: "mistral-8b" suggested qwen3-8b and
    // mamba-2.8b, "gpt-5" phi-4 and bloom): a preset of the same family (the name's leading
    // letters: "llama" in "llama3-8b" and "llama-3.1-8b"), a name that contains what was typed,
    // or one at most 2 edits away; the nearest first (edit distance, then the catalog's order).
    const std::string key = lower(short_name);
    const auto family = [](std::string_view n) {
      std::size_t end = 0;
      while (end < n.size() && std::isalpha(static_cast<unsigned char>(n[end]))) ++end;
      return n.substr(0, end);
    };
    const std::string_view key_family = family(key);
    std::vector<std::pair<std::size_t, std::string>> scored;
    for (const auto& q : list_presets()) {
      std::size_t d = edit_distance(key, q.short_name);
      if (!key.empty() && q.short_name.find(key) != std::string::npos) d = 0;  // substring: "llama" → all llamas
      const bool same_family = key_family.size() >= 2 && family(q.short_name) == key_family;
      if (d <= 2 || same_family) scored.emplace_back(d, q.short_name);
    }
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
  a.source = fmt::format("preset {} ({}, data/{}, provenance class {})", p->short_name, p->hf_id, path,
                         p->provenance_class.empty() ? "unknown" : p->provenance_class);
  std::lock_guard<std::mutex> lock(parsed_mutex);
  parsed.emplace(p->short_name, a);
  return a;
}

}  // namespace gpuplan
