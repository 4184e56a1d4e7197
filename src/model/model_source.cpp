#include "model/model_source.hpp"

#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <regex>

#include "model/hf_config.hpp"
#include "model/param_count.hpp"
#include "model/presets.hpp"
#include "model/safetensors.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

constexpr double kMaxParams = 1e14;
constexpr std::int64_t kSyntheticVocab = 32000;
constexpr std::int64_t kSyntheticHeadDim = 128;
constexpr std::int64_t kAspectRatio = 128;  // hidden / layers
constexpr std::int64_t kIntermediateMultiple = 256;
constexpr std::int64_t kSyntheticContext = 4096;

bool has_override(const ModelSource& s) {
  return s.layers || s.hidden || s.heads || s.kv_heads || s.vocab || s.intermediate || s.plain_mlp;
}

std::string format_count(double n) {
  if (n >= 1e9) return fmt::format("{:.3g}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.3g}M", n / 1e6);
  return fmt::format("{:.0f}", n);
}

/// Shape of the synthetic decoder; the free fields are chosen by the documented rule.
struct Shape {
  std::int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, vocab = 0, intermediate = 0;
  bool gated = true;
};

ModelArch arch_from_shape(const Shape& s) {
  ModelArch a;
  a.model_type = "llama";
  a.family = ModelFamily::decoder;
  a.num_layers = s.layers;
  a.hidden_size = s.hidden;
  a.num_attention_heads = s.heads;
  a.num_kv_heads = s.kv_heads;
  a.head_dim = s.hidden / s.heads;
  a.vocab_size = s.vocab;
  a.intermediate_size = s.intermediate;
  a.gated_mlp = s.gated;
  a.hidden_act = s.gated ? "silu" : "gelu";
  a.tied_embeddings = false;
  return a;
}

std::int64_t count_of(const Shape& s) { return count_decoder_params(arch_from_shape(s)).total(); }

/// Synthetic dense llama-like decoder with exactly `n` parameters (rule in model_source.hpp).
ModelArch synthesize(std::int64_t n, const ModelSource& src, const std::string& flag) {
  Shape s;
  s.gated = !src.plain_mlp.value_or(false);
  s.vocab = src.vocab.value_or(kSyntheticVocab);
  const double V = static_cast<double>(s.vocab);
  const double N = static_cast<double>(n);
  const double A = static_cast<double>(kAspectRatio);
  if (src.layers && src.hidden) {
    s.layers = *src.layers;
    s.hidden = *src.hidden;
  } else if (src.layers) {
    s.layers = *src.layers;
    s.hidden = kAspectRatio * s.layers;
  } else if (src.hidden) {
    s.hidden = *src.hidden;
    const double h = static_cast<double>(s.hidden);
    s.layers = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor((N - 2 * V * h) / (12 * h * h))));
  } else {
    // Solve 12·A²·x³ + 2·V·A·x = N for x by bisection (monotone), L = floor(x) so the shape fits in N.
    double lo = 0, hi = 1e6;
    for (int i = 0; i < 200; ++i) {
      const double mid = 0.5 * (lo + hi);
      (12 * A * A * mid * mid * mid + 2 * V * A * mid < N ? lo : hi) = mid;
    }
    s.layers = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(lo)));
    s.hidden = kAspectRatio * s.layers;
  }
  if (src.heads) {
    s.heads = *src.heads;
    if (s.hidden % s.heads != 0) {
      throw_invalid_coded("--heads", "heads_not_dividing_hidden", {{"heads", fmt::format("{}", s.heads)}, {"hidden", fmt::format("{}", s.hidden)}},
                          fmt::format("{} heads do not divide hidden size {}", s.heads, s.hidden), "a divisor of --hidden");
    }
  } else if (s.hidden % kSyntheticHeadDim == 0) {
    s.heads = s.hidden / kSyntheticHeadDim;
  } else {
    throw_invalid_coded("--hidden", "hidden_not_multiple_of_head_dim", {{"hidden", fmt::format("{}", s.hidden)}, {"head_dim", "128"}},
                        fmt::format("hidden size {} is not a multiple of the default head_dim 128", s.hidden),
                        "--heads dividing --hidden, or a multiple of 128");
  }
  s.kv_heads = src.kv_heads.value_or(s.heads);
  if (s.heads % s.kv_heads != 0) {
    throw_invalid_coded("--kv-heads", "kv_heads_not_dividing_heads",
                        {{"kv_heads", fmt::format("{}", s.kv_heads)}, {"heads", fmt::format("{}", s.heads)}},
                        fmt::format("{} KV heads do not divide {} heads", s.kv_heads, s.heads), "a divisor of --heads");
  }
  if (src.intermediate) {
    s.intermediate = *src.intermediate;
  } else {
    // Largest multiple of 256 in [256, 4h] that keeps the count <= N.
    Shape probe = s;
    probe.intermediate = kIntermediateMultiple;
    const std::int64_t base = count_of(probe);
    const std::int64_t per_step = (s.gated ? 3 : 2) * s.hidden * s.layers * kIntermediateMultiple;
    std::int64_t steps = base <= n ? 1 + (n - base) / per_step : 1;
    steps = std::min(steps, (4 * s.hidden) / kIntermediateMultiple);
    s.intermediate = std::max<std::int64_t>(1, steps) * kIntermediateMultiple;
  }
  ModelArch a = arch_from_shape(s);
  a.max_position_embeddings = src.seq_len_hint.value_or(kSyntheticContext);
  finalize_arch(a);
  const std::int64_t shape_count = a.params.total();
  if (shape_count > n) {
    throw_invalid_coded(flag, "shape_exceeds_params", {{"shape_params", fmt::format("{}", shape_count)}, {"params", fmt::format("{}", n)}},
                  fmt::format("the synthetic shape (layers {}, hidden {}, intermediate {}, vocab {}) already has {} parameters, more than {}",
                              s.layers, s.hidden, s.intermediate, s.vocab, shape_count, n),
                  fmt::format("--params of at least {}, or smaller --layers/--hidden/--vocab", shape_count));
  }
  a.params.other = n - shape_count;
  a.name = fmt::format("synthetic-{}", format_count(N));
  a.source = flag;
  a.notes.push_back(fmt::format(
      "synthetic dense decoder: layers {}, hidden {}, heads {} (kv {}), head_dim {}, {} MLP intermediate {}, vocab {}; {} parameters not placed in the shape are in other",
      s.layers, s.hidden, s.heads, s.kv_heads, a.head_dim, s.gated ? "SwiGLU" : "plain GELU", s.intermediate, s.vocab, a.params.other));
  if (static_cast<double>(a.params.other) > 0.05 * N) {
    a.notes.push_back("more than 5% of the parameters are outside the shape: give a consistent --layers/--hidden/--intermediate");
  }
  return a;
}

std::optional<fs::path> sibling_config(const fs::path& p) {
  fs::path c = p.parent_path() / "config.json";
  if (fs::exists(c)) return c;
  return std::nullopt;
}

std::int64_t dtype_bytes_of_torch(const std::string& d) {
  if (d == "float32") return 4;
  if (d == "bfloat16" || d == "float16") return 2;
  if (d == "float64") return 8;
  return 0;
}

ModelArch from_index(const fs::path& path) {
  const WeightIndex idx = read_weight_index(path.string());
  auto cfg = sibling_config(path);
  if (!cfg) {
    throw_invalid(path.string(), "a weight index gives bytes, not a parameter count or a shape: no config.json beside it",
                  "a folder holding config.json with the index, or --config / --params");
  }
  ModelArch a = load_hf_config_file(cfg->string());
  a.source = fmt::format("{} (shape from {})", path.string(), cfg->string());
  a.checkpoint_bytes = idx.total_size_bytes;
  a.notes.push_back(fmt::format("checkpoint weights {} bytes (index metadata.total_size, {} shard files)", idx.total_size_bytes,
                                idx.shard_files.size()));
  if (const std::int64_t b = dtype_bytes_of_torch(a.torch_dtype); b > 0 && a.head_dim > 0) {
    // Old .bin checkpoints also store rotary inv_freq buffers (head_dim/2 fp32 values each): not parameters.
    const std::int64_t buffer_bytes = idx.num_inv_freq_buffers * (a.head_dim / 2) * 4;
    const std::int64_t implied = (idx.total_size_bytes - buffer_bytes) / b;
    if (implied != a.params.total()) {
      a.notes.push_back(fmt::format("the index implies {} parameters at {} ({} bytes each); the config gives {}", implied,
                                    a.torch_dtype, b, a.params.total()));
    }
  }
  return a;
}

/// Shape hints read from tensor names/shapes of an HF-style checkpoint (llama naming).
void infer_shape(const SafetensorsSummary& s, ModelSource& hints) {
  static const std::regex layer_re(R"((?:^|\.)(?:layers|h|blocks)\.(\d+)\.)");
  std::int64_t max_layer = -1;
  for (const auto& t : s.tensors) {
    std::smatch m;
    if (std::regex_search(t.name, m, layer_re)) max_layer = std::max<std::int64_t>(max_layer, std::stoll(m[1].str()));
    const bool two_d = t.shape.size() == 2;
    if (two_d && (t.name.ends_with("embed_tokens.weight") || t.name.ends_with("wte.weight"))) {
      hints.vocab = t.shape[0];
      hints.hidden = t.shape[1];
    }
    if (two_d && t.name.find("layers.0.mlp.up_proj.weight") != std::string::npos) hints.intermediate = t.shape[0];
  }
  if (max_layer >= 0) hints.layers = max_layer + 1;
}

ModelArch from_safetensors_file(const fs::path& path) {
  const SafetensorsSummary s = read_safetensors_header(path.string());
  const std::string note = fmt::format("safetensors header: {} tensors, {} parameters, {} bytes", s.tensors.size(), s.num_params,
                                       s.weights_bytes);
  if (auto cfg = sibling_config(path)) {
    ModelArch a = load_hf_config_file(cfg->string());
    a.source = fmt::format("{} (shape from {})", path.string(), cfg->string());
    a.checkpoint_bytes = s.weights_bytes;
    a.notes.push_back(note);
    const std::int64_t diff = s.num_params - a.params.total();
    if (diff > 0) {
      a.params.other += diff;
      a.notes.push_back(fmt::format("{} parameters in the file beyond the config count are in other", diff));
    } else if (diff < 0) {
      a.notes.push_back(fmt::format("the file holds {} fewer parameters than the config count (one shard of several?)", -diff));
    }
    return a;
  }
  if (s.num_params <= 0) throw_invalid(path.string(), "no tensors in the header", "a checkpoint with weights");
  ModelSource hints;
  infer_shape(s, hints);
  if (hints.hidden && *hints.hidden % kSyntheticHeadDim != 0) hints.hidden.reset();
  ModelArch a = synthesize(s.num_params, hints, path.string());
  a.name = path.filename().string();
  a.checkpoint_bytes = s.weights_bytes;
  a.notes.push_back(note);
  a.notes.push_back("no config.json beside the file: shape inferred from tensor names where possible, the rest by the --params rule");
  return a;
}

}  // namespace

void ModelSource::validate() const {
  const int given = (preset.empty() ? 0 : 1) + (config_path.empty() ? 0 : 1) + (safetensors_path.empty() ? 0 : 1) + (params ? 1 : 0);
  if (given == 0) {
    throw_invalid_coded("--model", "model_missing", {}, "no model given",
                        "one of --model PRESET, --config config.json, --safetensors FILE, --params N");
  }
  if (given > 1) {
    throw_invalid_coded("--model", "model_sources_conflict", {}, "more than one model source given",
                        "exactly one of --model, --config, --safetensors, --params");
  }
  if (params) {
    if (!std::isfinite(*params) || *params <= 0 || *params > kMaxParams) {
      throw_invalid_coded("--params", "number_out_of_range", {{"value", fmt::format("{}", *params)}, {"range", "[1, 1e14]"}},
                          fmt::format("parameter count {} out of range", *params), "a count in (0, 1e14], e.g. 7e9 or 7B");
    }
    if (*params < 1)
      throw_invalid_coded("--params", "number_out_of_range", {{"value", fmt::format("{}", *params)}, {"range", "[1, 1e14]"}},
                          "parameter count below 1", "a count in (0, 1e14]");
  }
  auto check = [](const std::optional<std::int64_t>& v, const char* flag) {
    if (v && *v <= 0)
      throw_invalid_coded(flag, "not_positive", {{"value", fmt::format("{}", *v)}}, fmt::format("must be positive, got {}", *v),
                          "a positive integer");
    if (v && *v > 10'000'000)
      throw_invalid_coded(flag, "too_large", {{"value", fmt::format("{}", *v)}, {"max", "10000000"}},
                          fmt::format("{} is not a realistic size", *v), "at most 10000000");
  };
  check(layers, "--layers");
  check(hidden, "--hidden");
  check(heads, "--heads");
  check(kv_heads, "--kv-heads");
  check(vocab, "--vocab");
  check(intermediate, "--intermediate");
  check(seq_len_hint, "--seq-len");
  if (!params && has_override(*this)) {
    throw_invalid_coded(layers ? "--layers" : hidden ? "--hidden" : heads ? "--heads" : kv_heads ? "--kv-heads" : vocab ? "--vocab"
                  : intermediate ? "--intermediate" : "--mlp",
                  "shape_needs_params", {}, "shape flags apply only to a synthetic model", "--params N together with the shape flags");
  }
}

ModelArch resolve_model(const ModelSource& src) {
  src.validate();
  if (!src.preset.empty()) return load_preset(src.preset);
  if (!src.config_path.empty()) return load_hf_config_file(src.config_path);
  if (!src.safetensors_path.empty()) {
    fs::path p = src.safetensors_path;
    if (fs::is_directory(p)) {
      for (const char* name : {"model.safetensors.index.json", "model.safetensors", "pytorch_model.bin.index.json"}) {
        if (fs::exists(p / name)) {
          p /= name;
          break;
        }
      }
    }
    if (!fs::exists(p)) throw_not_found(src.safetensors_path, "no such file", "a .safetensors file, an index .json, or a folder holding one");
    if (p.extension() == ".json") return from_index(p);
    return from_safetensors_file(p);
  }
  const std::int64_t n = std::llround(*src.params);
  return synthesize(n, src, "--params");
}

}  // namespace gpuplan
