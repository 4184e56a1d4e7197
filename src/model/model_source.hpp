#pragma once
/// Where a model comes from, as the CLI and the server fill it (one request struct, STYLE.md §6),
/// and resolve_model(), which turns it into a ModelArch.
#include <cstdint>
#include <optional>
#include <string>

#include "model/model_arch.hpp"

namespace gpuplan {

struct ModelSource {
  std::string preset;            ///< --model: preset short name (see presets.hpp)
  std::string config_path;       ///< --config: path to a Hugging Face config.json
  /// --safetensors: a .safetensors file, or a model.safetensors.index.json /
  /// pytorch_model.bin.index.json. A config.json in the same folder gives the shape.
  std::string safetensors_path;
  std::optional<double> params;  ///< --params: total parameter count (7e9) of a synthetic dense decoder
  /// Shape overrides (--layers, --hidden, --heads, --kv-heads, --vocab, --intermediate): with --params
  /// they fix the synthetic shape; with a preset/config they replace those fields and the count is redone
  /// (decoders only).
  std::optional<std::int64_t> layers, hidden, heads, kv_heads, vocab, intermediate;
  /// Context length given to a synthetic (--params) model as max_position_embeddings; default 4096.
  std::optional<std::int64_t> seq_len_hint;

  /// Throws Error{invalid_input} unless exactly one of preset/config/safetensors/params is given,
  /// and when a number is out of range: params must be in (0, 1e14]; overrides positive; where = the flag.
  void validate() const;
};

/// Resolves the source (validate() first). --params rule (synthetic dense llama-like decoder):
///   vocab V = 32000, head_dim = 128, MHA (kv_heads = heads), gated MLP with I = 8/3 h rounded up to 256,
///   untied head, RMSNorm; layers L and hidden h from the aspect ratio h/L = 128 (Kaplan et al. 2020,
///   arXiv:2001.08361 §3.2: loss is flat for aspect ratios 50..200; Llama-2-7B has 4096/32 = 128):
///   h = 128*round(((N/(12*128))^(1/3))/1)*... see model_source.cpp (N ≈ 12 L h^2 + 2 V h).
///   The residual N - count(shape) goes to ParamBreakdown::other, so params.total() == N exactly.
/// Errors: those of validate(), of the readers, and Error{invalid_input} when overrides make the shape
/// inconsistent (hidden not divisible by heads, kv_heads not dividing heads, shape bigger than N).
ModelArch resolve_model(const ModelSource& source);

}  // namespace gpuplan
