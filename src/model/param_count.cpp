#include "model/param_count.hpp"

#include <fmt/core.h>

#include "util/error.hpp"

namespace gpuplan {
namespace {

void require_positive(std::int64_t v, const char* field, const ModelArch& a) {
  if (v <= 0) {
    throw Error(ErrorKind::internal, a.source.empty() ? a.name : a.source,
                fmt::format("count_decoder_params: {} is {}", field, v), "a positive integer");
  }
}

/// One dense (or expert) MLP of width `width`: gated = gate+up+down (3·h·I), plain = up+down (2·h·I);
/// biases: gated 2·I (gate, up) + h (down), plain I + h.
std::int64_t mlp_params(std::int64_t h, std::int64_t width, bool gated, bool bias) {
  std::int64_t n = (gated ? 3 : 2) * h * width;
  if (bias) n += (gated ? 2 * width : width) + h;
  return n;
}

}  // namespace

ParamBreakdown count_decoder_params(const ModelArch& a) {
  require_positive(a.num_layers, "num_layers", a);
  require_positive(a.hidden_size, "hidden_size", a);
  require_positive(a.vocab_size, "vocab_size", a);
  const std::int64_t h = a.hidden_size;
  const std::int64_t L = a.num_layers;
  const std::int64_t V = a.vocab_size;
  ParamBreakdown p;

  // Attention, per layer.
  std::int64_t attn = 0;
  if (a.mla) {
    // DeepSeek-V2/V3 MLA (arXiv:2405.04434 §2.1; HF modeling_deepseek.py DeepseekV3Attention):
    //   q:  q_a_proj h·r_q + q_a_layernorm r_q + q_b_proj r_q·H·(d_nope+d_rope)   (or q_proj h·H·(d_nope+d_rope))
    //   kv: kv_a_proj_with_mqa h·(d_c+d_rope) + kv_a_layernorm d_c + kv_b_proj d_c·H·(d_nope+d_v)
    //   o:  o_proj H·d_v·h
    require_positive(a.num_attention_heads, "num_attention_heads", a);
    const MlaSpec& m = *a.mla;
    const std::int64_t H = a.num_attention_heads;
    const std::int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if (m.q_lora_rank) {
      attn += h * *m.q_lora_rank + *m.q_lora_rank + *m.q_lora_rank * H * qk;
      if (a.attention_bias) attn += *m.q_lora_rank;
    } else {
      attn += h * H * qk;
    }
    attn += h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank + m.kv_lora_rank * H * (m.qk_nope_head_dim + m.v_head_dim);
    if (a.attention_bias) attn += m.kv_lora_rank + m.qk_rope_head_dim;
    attn += H * m.v_head_dim * h;
    if (a.attention_output_bias) attn += h;
  } else {
    require_positive(a.num_attention_heads, "num_attention_heads", a);
    require_positive(a.num_kv_heads, "num_kv_heads", a);
    require_positive(a.head_dim, "head_dim", a);
    const std::int64_t q_width = a.num_attention_heads * a.head_dim;
    const std::int64_t kv_width = a.num_kv_heads * a.head_dim;
    attn = h * q_width + 2 * h * kv_width + q_width * h;
    if (a.attention_bias) attn += q_width + 2 * kv_width;
    if (a.attention_output_bias) attn += h;
  }
  p.attention = L * attn;

  // Dense MLP layers, routed experts, shared experts, router.
  const std::int64_t moe_layers = a.moe ? a.moe->num_moe_layers : 0;
  const std::int64_t dense_layers = L - moe_layers;
  if (dense_layers > 0) {
    require_positive(a.intermediate_size, "intermediate_size", a);
    p.mlp = dense_layers * mlp_params(h, a.intermediate_size, a.gated_mlp, a.mlp_bias);
  }
  if (a.moe && moe_layers > 0) {
    const MoeSpec& m = *a.moe;
    require_positive(m.num_routed_experts, "moe.num_routed_experts", a);
    require_positive(m.expert_intermediate_size, "moe.expert_intermediate_size", a);
    const std::int64_t per_expert = mlp_params(h, m.expert_intermediate_size, a.gated_mlp, m.expert_bias);
    p.experts = moe_layers * m.num_routed_experts * per_expert;
    p.active_experts = moe_layers * m.experts_per_token * per_expert;
    p.router = moe_layers * (h * m.num_routed_experts + (m.router_bias ? m.num_routed_experts : 0));
    if (m.num_shared_experts > 0) {
      const std::int64_t width = m.shared_intermediate_size > 0 ? m.shared_intermediate_size : m.expert_intermediate_size;
      p.mlp += moe_layers * m.num_shared_experts * mlp_params(h, width, a.gated_mlp, a.mlp_bias);
    }
  }

  // Norms: weight (+ bias for LayerNorm) of width h; Qwen3/Gemma 3 q/k norms of width head_dim.
  const std::int64_t norm = a.norm_bias ? 2 * h : h;
  p.norms = L * a.norms_per_layer * norm + (a.final_norm ? norm : 0);
  if (a.qk_norm) p.norms += L * 2 * a.head_dim;

  p.embeddings = V * h + a.learned_positions * h;
  p.head = a.tied_embeddings ? 0 : V * h;
  return p;
}

AttentionKind attention_kind(const ModelArch& a) {
  if (a.mla) return AttentionKind::mla;
  if (a.family != ModelFamily::decoder || a.num_attention_heads <= 0) return AttentionKind::none;
  if (a.num_kv_heads == 1 && a.num_attention_heads > 1) return AttentionKind::mqa;
  if (a.num_kv_heads > 0 && a.num_kv_heads < a.num_attention_heads) return AttentionKind::gqa;
  return AttentionKind::mha;
}

std::string_view attention_kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::mha: return "MHA";
    case AttentionKind::gqa: return "GQA";
    case AttentionKind::mqa: return "MQA";
    case AttentionKind::mla: return "MLA";
    case AttentionKind::none: return "none";
  }
  return "none";
}

std::string_view family_name(ModelFamily family) {
  switch (family) {
    case ModelFamily::decoder: return "decoder";
    case ModelFamily::diffusion_unet: return "diffusion_unet";
    case ModelFamily::diffusion_transformer: return "diffusion_transformer";
    case ModelFamily::state_space: return "state_space";
  }
  return "decoder";
}

}  // namespace gpuplan
