#pragma once
/// Hugging Face config.json → ModelArch with an exact per-component parameter count.
///
/// Supported model_type values (transformers / diffusers configuration classes):
///   decoders: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3
///             (text config nested under text_config), gemma3_text, phi3, falcon, gpt2, opt, bloom,
///             deepseek_v3 (MLA + MoE), gpt_oss, llama4 / llama4_text, gpt_neox, phi (phi-1/1.5/2),
///             gpt_bigcode (StarCoder), starcoder2, mpt, olmo, olmo2, olmo3, smollm3;
///   encoder: bert (BertModel + pooler); encoder-decoder: t5 (relu or gated-gelu);
///   hybrid attention + Mamba-1 + MoE: jamba;
///   state space: mamba;
/// The dispatch is one table (model_type → reader) in hf_config.cpp; every reader fills the shape fields
/// and finalize_arch() computes ModelArch::geometry and the counts from them.
///   diffusion: diffusers "_class_name" UNet2DConditionModel (SDXL) and FluxTransformer2DModel.
/// Counting conventions are documented per family in hf_config.cpp and in data/models/PROVENANCE.md
/// (e.g. DeepSeek-V3's MTP module is reported in ModelArch::mtp_params, not in params).
///
/// Errors (gpuplan::Error, kind invalid_input). A field is named by its dotted path, keys as the
/// file writes them (util/text_check.hpp JsonPlaceStyle::dotted): where = "<source>: hidden_size",
/// "<source>: text_config.num_hidden_layers", "<source>: layer_types[1]"; <source> is the file's path.
///   - a required field missing or of the wrong type: expected = the type wanted;
///   - a size that is zero or negative: expected = "a positive integer";
///   - a count outside its physical range (layers, hidden, heads, KV heads, experts, experts per
///     token, vocabulary, positions, feed-forward widths, ...; hf_config.cpp kKeyRanges), or above
///     the field it is bounded by (experts per token above the experts): where = that field,
///     expected = "an integer from LO to HI" (and the bounding field);
///   - a duplicate key, or nesting deeper than 64: where = the key's path;
///   - an unknown model_type: where = "<source>: model_type", expected = the supported list.
/// load_hf_config_file: malformed JSON → where = "path:line:col"; unreadable file → not_found.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/model_arch.hpp"

namespace gpuplan {

/// Parses a config.json already loaded as JSON. `source` names it in errors and in ModelArch::source
/// (a file path or "preset llama-3.1-8b"). ModelArch::name is set to `source`; callers may override it.
ModelArch parse_hf_config(const nlohmann::json& config, const std::string& source);

/// Parses JSON text; malformed JSON → Error{invalid_input, "source:line:col"}.
ModelArch parse_hf_config_text(std::string_view text, const std::string& source);

/// Reads and parses a config.json file (path used as source).
ModelArch load_hf_config_file(const std::string& path);

/// The model_type values parse_hf_config accepts (plus the two diffusers class names), sorted.
const std::vector<std::string>& supported_model_types();

/// Line and 1-based column of byte offset `offset` in `text` (for JSON parse errors).
/// Shared with the safetensors reader.
std::string json_error_location(std::string_view text, std::size_t offset, const std::string& source);

}  // namespace gpuplan
