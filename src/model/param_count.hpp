#pragma once
/// Exact parameter counting for transformer decoders from their shape (ModelArch fields).
///
/// Counts are element counts (int64). The per-layer formula is the one every Hugging Face
/// decoder implements (modeling_llama.py and relatives), written out here so each term
/// is visible:
///   attention  = h*(H*d) [q] + 2*h*(K*d) [k,v] + (H*d)*h [o]      (+ biases when attention_bias)
///   gated MLP  = 3*h*I  (gate, up, down: SwiGLU, Shazeer 2020 arXiv:2002.05202)
///   plain MLP  = 2*h*I  (up, down)                                (+ biases when mlp_bias)
///   norms      = per-layer norms * h  (+ h biases for LayerNorm)  + final norm
///   embeddings = V*h (+ positions*h for learned positions); head = V*h unless tied
/// with h = hidden_size, H = heads, K = kv heads, d = head_dim, I = intermediate, V = vocab.
/// MoE layers (Fedus et al. 2022; Jiang et al. 2024 Mixtral): experts = E * 3*h*I_e,
/// router = h*E; MLA (DeepSeek-V2 arXiv:2405.04434 §2.1): see count_decoder_params().
#include <string_view>

#include "model/model_arch.hpp"

namespace gpuplan {

/// Parameters of a geometry: Σ linears + Σ tensors into their ParamBreakdown buckets; active_experts
/// = Σ routed-expert matrices × top-k copies.
ParamBreakdown count_params(const LayerGeometry& geometry);

/// Computes arch.geometry (build_layer_geometry), arch.params = count_params(geometry) + `outside`
/// (parameters outside the geometry: vision towers, the --params residual) and arch.attention.
/// Call after changing any shape field. Throws like build_layer_geometry.
void finalize_arch(ModelArch& arch, const ParamBreakdown& outside = {});

/// Counts the parameters of a llama-family decoder described by `arch` (dense, GQA/MQA,
/// MoE with shared experts / dense first layers / interleave, MLA, tied embeddings,
/// gated or plain MLP, attention/MLP biases). Architecture-specific extras (Qwen3 q/k norms,
/// Gemma's 4 norms per layer, gpt-oss sinks and expert biases, ...) are handled by the
/// config reader, which calls this and adds them.
/// = count_params(build_layer_geometry(arch)).
/// Throws Error{internal} when a required shape field is not positive.
ParamBreakdown count_decoder_params(const ModelArch& arch);

/// MHA / GQA / MQA from the head counts, MLA when arch.mla is set, none for non-attention families.
AttentionKind attention_kind(const ModelArch& arch);

/// "MHA", "GQA", "MQA", "MLA", "none".
std::string_view attention_kind_name(AttentionKind kind);
/// "decoder", "diffusion_unet", "diffusion_transformer", "state_space", "encoder", "encoder_decoder".
std::string_view family_name(ModelFamily family);
/// What a model of `family` is, in words for a refusal: "a transformer decoder", "a state-space
/// (Mamba) model, not a transformer", "an encoder (BERT-style) model", "an encoder-decoder
/// (T5-style) model", "a diffusion model".
std::string_view family_description(ModelFamily family);

}  // namespace gpuplan
