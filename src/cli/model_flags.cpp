#include "cli/model_flags.hpp"

#include <fmt/core.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "util/error.hpp"

namespace gpuplan::cli {
namespace {

void add_size_flag(CLI::App& sub, const std::string& name, std::optional<std::int64_t>& target, const std::string& help) {
  sub.add_option_function<std::int64_t>(
         name, [&target](const std::int64_t& v) { target = v; }, help)
      ->type_name("INT");
}

}  // namespace

double parse_param_count(const std::string& text) {
  std::string s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  double scale = 1;
  if (!s.empty()) {
    switch (std::tolower(static_cast<unsigned char>(s.back()))) {
      case 'k': scale = 1e3; break;
      case 'm': scale = 1e6; break;
      case 'b': scale = 1e9; break;
      case 't': scale = 1e12; break;
      default: break;
    }
    if (scale != 1) s.pop_back();
  }
  const char* begin = s.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (s.empty() || end == begin || *end != '\0' || !std::isfinite(v)) {
    throw_invalid("--params", fmt::format("cannot read '{}' as a parameter count", text), "a number such as 7e9, 7B, 124M or 1.5T");
  }
  return v * scale;
}

void add_model_flags(CLI::App& sub, ModelSource& src) {
  sub.add_option("--model", src.preset, "a bundled model preset (see `gpuplan models`), e.g. llama-3.1-8b");
  sub.add_option("--config", src.config_path, "a Hugging Face config.json");
  sub.add_option("--safetensors", src.safetensors_path,
                 "a .safetensors file, a model.safetensors.index.json / pytorch_model.bin.index.json, or a folder holding one");
  sub.add_option_function<std::string>(
         "--params", [&src](const std::string& v) { src.params = parse_param_count(v); },
         "total parameters of a synthetic dense decoder: 7e9, 7B, 124M, 1.5T")
      ->type_name("N");
  add_size_flag(sub, "--layers", src.layers, "with --params: number of decoder layers");
  add_size_flag(sub, "--hidden", src.hidden, "with --params: hidden size");
  add_size_flag(sub, "--heads", src.heads, "with --params: attention heads (default hidden/128)");
  add_size_flag(sub, "--kv-heads", src.kv_heads, "with --params: key-value heads (GQA; default = heads)");
  add_size_flag(sub, "--vocab", src.vocab, "with --params: vocabulary size (default 32000)");
  add_size_flag(sub, "--intermediate", src.intermediate, "with --params: MLP intermediate size");
  sub.add_option_function<std::string>(
         "--mlp",
         [&src](const std::string& v) {
           if (v != "plain" && v != "gated") throw_invalid("--mlp", fmt::format("unknown MLP kind '{}'", v), "plain or gated");
           src.plain_mlp = v == "plain";
         },
         "with --params: gated (SwiGLU, default) or plain (2-matrix GELU MLP)")
      ->type_name("KIND");
}

}  // namespace gpuplan::cli
