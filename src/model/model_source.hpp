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
  /// Shape flags (--layers, --hidden, --heads, --kv-heads, --vocab, --intermediate): they fix the shape of
  /// the synthetic --params model; given with any other source they are an error (validate()).
  std::optional<std::int64_t> layers, hidden, heads, kv_heads, vocab, intermediate;
  /// --mlp plain|gated with --params: plain = 2-matrix GELU MLP (GPT-2/GPT-NeoX/StarCoder style, up + down),
  /// gated = SwiGLU (gate + up + down, the default). nullopt = gated.
  std::optional<bool> plain_mlp;
  /// Context length given to a synthetic (--params) model as max_position_embeddings; default 4096.
  std::optional<std::int64_t> seq_len_hint;

  /// Throws Error{invalid_input} unless exactly one of preset/config/safetensors/params is given,
  /// and when a number is out of range: params must be in [1, 1e14]; shape flags in [1, 1e7] and only
  /// with --params; where = the flag.
  void validate() const;
};

/// Resolves the source (validate() first).
///
/// --params N (synthetic dense llama-like decoder, untied head, RMSNorm, gated MLP, MHA unless --kv-heads):
///   vocab V = 32000 (--vocab), head_dim 128, aspect ratio hidden/layers = 128 (Kaplan et al. 2020,
///   arXiv:2001.08361 Fig. 5: loss depends only weakly on the aspect ratio over a wide range; Llama-2-7B has 4096/32 = 128).
///   Layers L = floor(x) where 12·128²·x³ + 2·V·128·x = N (N ≈ 12·L·h² from Kaplan §2.1, plus the untied embedding and head 2·V·h),
///   hidden h = 128·L; with --layers only, h = 128·L; with --hidden only, L = floor((N − 2Vh) / 12h²).
///   heads = h/128 (--heads), kv_heads = heads (--kv-heads); intermediate I = the largest multiple of 256
///   in [256, 4h] that keeps the exact count (count_decoder_params) <= N (--intermediate).
///   --mlp plain: the MLP is up + down (2·h·I, GELU, no gate) instead of SwiGLU's 3·h·I; the same rules apply.
///   The residual N − count goes to ParamBreakdown::other, so params.total() == N exactly.
///   Example: 7e9 → L 32, h 4096, 32 heads, I 11520, other 60,257,792.
/// --safetensors FILE: exact count and bytes from the header; with a config.json in the same folder the shape
///   comes from it (file params beyond the config count go to other); without, vocab/hidden/layers/intermediate
///   are read from tensor names (embed_tokens, layers.N., mlp.up_proj) and the rest follows the --params rule.
///   An index JSON (or a folder holding one) needs config.json beside it; checkpoint_bytes = total_size.
/// Errors: those of validate(), of the readers, Error{not_found} for missing files, and Error{invalid_input}
/// when the shape flags are inconsistent (heads not dividing hidden, kv_heads not dividing heads, shape
/// already larger than N).
ModelArch resolve_model(const ModelSource& source);

}  // namespace gpuplan
