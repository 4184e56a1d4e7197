#include "model/geometry.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "model/model_arch.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

void require_positive(std::int64_t v, const char* field, const ModelArch& a) {
  if (v <= 0) {
    throw Error(ErrorKind::internal, a.source.empty() ? a.name : a.source,
                fmt::format("build_layer_geometry: {} is {}", field, v), "a positive integer");
  }
}

LinearFamily linear(std::string name, std::string target, LinearRole role, ParamBucket bucket, std::int64_t d_in,
                    std::int64_t d_out, std::int64_t layers, bool bias) {
  LinearFamily l;
  l.name = std::move(name);
  l.lora_target = std::move(target);
  l.role = role;
  l.bucket = bucket;
  l.d_in = d_in;
  l.d_out = d_out;
  l.layers = layers;
  l.bias = bias;
  return l;
}

/// gate (when gated), up, down of width `width`: the HF LlamaMLP / GPT-2 MLP layout.
void add_mlp(LayerGeometry& g, const std::string& prefix, LinearRole role, ParamBucket bucket, std::int64_t h,
             std::int64_t width, std::int64_t layers, std::int64_t copies, std::int64_t active, bool gated, bool bias) {
  auto push = [&](const char* name, const char* target, std::int64_t in, std::int64_t out) {
    LinearFamily l = linear(prefix + name, target, role, bucket, in, out, layers, bias);
    l.copies = copies;
    l.active_copies = active;
    g.linears.push_back(std::move(l));
  };
  if (gated) push("gate_proj", "gate", h, width);
  push("up_proj", "up", h, width);
  push("down_proj", "down", width, h);
}

std::int64_t norm_elements(const ModelArch& a) {
  if (a.norm_bias) return 2 * a.hidden_size;
  if (a.norm_kind == NormKind::non_parametric) return 0;
  return a.hidden_size;
}

}  // namespace

std::int64_t LayerGeometry::linear_params(LinearRole role) const {
  std::int64_t n = 0;
  for (const auto& l : linears) n += l.role == role ? l.params() : 0;
  return n;
}

namespace {
/// Whether LoRA with `targets` adapts `l` ("all_linear"/"all-linear": every matrix with a target).
bool lora_adapts(const LinearFamily& l, const std::vector<std::string>& targets) {
  if (l.lora_target.empty()) return false;
  return std::any_of(targets.begin(), targets.end(), [&](const std::string& t) {
    return t == l.lora_target || t == "all_linear" || t == "all-linear";
  });
}
}  // namespace

std::int64_t LayerGeometry::lora_params(std::int64_t rank, const std::vector<std::string>& targets) const {
  std::int64_t n = 0;
  for (const auto& l : linears)
    if (lora_adapts(l, targets)) n += l.layers * l.copies * rank * (l.d_in + l.d_out);
  return n;
}

std::int64_t LayerGeometry::max_lora_rank(const std::vector<std::string>& targets) const {
  std::int64_t bound = 0;
  for (const auto& l : linears)
    if (lora_adapts(l, targets)) bound = std::max(bound, std::min(l.d_in, l.d_out));
  return bound;
}

LayerGeometry build_layer_geometry(const ModelArch& a) {
  LayerGeometry g;
  if (a.family == ModelFamily::diffusion_unet || a.family == ModelFamily::diffusion_transformer) return g;
  require_positive(a.num_layers, "num_layers", a);
  require_positive(a.hidden_size, "hidden_size", a);
  require_positive(a.vocab_size, "vocab_size", a);
  const std::int64_t h = a.hidden_size;
  const std::int64_t L = a.num_layers;
  const std::int64_t V = a.vocab_size;
  const bool ssm_only = a.family == ModelFamily::state_space;
  g.num_layers = L;
  g.attention_layers = a.attention_layers.value_or(ssm_only ? 0 : L);
  g.kv_cache_layers = a.kv_cache_layers.value_or(g.attention_layers);
  g.moe_layers = a.moe ? std::min(a.moe->num_moe_layers, L) : 0;
  g.dense_mlp_layers = a.dense_mlp_layers.value_or(ssm_only ? 0 : L - g.moe_layers);
  g.gated_mlp = a.gated_mlp;
  g.activation = (g.dense_mlp_layers > 0 || g.moe_layers > 0) ? mlp_activation_from(a.hidden_act, a.gated_mlp)
                                                               : MlpActivation::none;
  g.norm = a.norm_bias ? NormKind::layer_norm : a.norm_kind;
  g.norms_per_layer = a.norms_per_layer;
  g.norm_width = h;
  g.qk_norm = a.qk_norm || a.qk_norm_full_width;
  g.parallel_attention = a.parallel_attention;
  g.tied_embeddings = a.tied_embeddings;

  // Attention: q/k/v/o (LlamaAttention), or MLA (DeepSeek-V2 arXiv:2405.04434 §2.1; HF DeepseekV3Attention).
  const std::int64_t La = g.attention_layers;
  if (La > 0) {
    require_positive(a.num_attention_heads, "num_attention_heads", a);
    const std::int64_t H = a.num_attention_heads;
    AttentionGeometry& at = g.attention;
    at.num_heads = H;
    const auto A = LinearRole::attention;
    const auto B = ParamBucket::attention;
    if (a.mla) {
      //   q:  q_a_proj h·r_q (+ r_q bias) + q_a_layernorm r_q + q_b_proj r_q·H·(d_nope+d_rope)  (or q_proj h·H·qk)
      //   kv: kv_a_proj_with_mqa h·(d_c+d_rope) (+ bias) + kv_a_layernorm d_c + kv_b_proj d_c·H·(d_nope+d_v)
      //   o:  o_proj H·d_v·h
      const MlaSpec& m = *a.mla;
      const std::int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
      if (m.q_lora_rank) {
        const std::int64_t r = *m.q_lora_rank;
        g.linears.push_back(linear("self_attn.q_a_proj", "q", A, B, h, r, La, a.attention_bias));
        g.tensors.push_back({"self_attn.q_a_layernorm", B, r, La});
        g.linears.push_back(linear("self_attn.q_b_proj", "q", A, B, r, H * qk, La, false));
      } else {
        g.linears.push_back(linear("self_attn.q_proj", "q", A, B, h, H * qk, La, false));
      }
      g.linears.push_back(linear("self_attn.kv_a_proj_with_mqa", "k", A, B, h, m.kv_lora_rank + m.qk_rope_head_dim, La,
                                 a.attention_bias));
      g.tensors.push_back({"self_attn.kv_a_layernorm", B, m.kv_lora_rank, La});
      g.linears.push_back(linear("self_attn.kv_b_proj", "v", A, B, m.kv_lora_rank, H * (m.qk_nope_head_dim + m.v_head_dim),
                                 La, false));
      g.linears.push_back(linear("self_attn.o_proj", "o", A, B, H * m.v_head_dim, h, La, a.attention_output_bias));
      at.num_kv_heads = H;
      at.head_dim = qk;
      at.q_width = H * qk;
      at.k_width = H * qk;
      at.v_width = H * m.v_head_dim;
      at.o_in_width = at.v_width;
      at.kv_cache_width = m.kv_lora_rank + m.qk_rope_head_dim;
    } else {
      require_positive(a.num_kv_heads, "num_kv_heads", a);
      require_positive(a.head_dim, "head_dim", a);
      at.num_kv_heads = a.num_kv_heads;
      at.head_dim = a.head_dim;
      at.q_width = H * a.head_dim;
      at.k_width = at.v_width = a.num_kv_heads * a.head_dim;
      at.o_in_width = at.q_width;
      at.kv_cache_width = at.k_width + at.v_width;
      g.linears.push_back(linear("self_attn.q_proj", "q", A, B, h, at.q_width, La, a.attention_bias));
      g.linears.push_back(linear("self_attn.k_proj", "k", A, B, h, at.k_width, La, a.attention_bias));
      g.linears.push_back(linear("self_attn.v_proj", "v", A, B, h, at.v_width, La, a.attention_bias));
      g.linears.push_back(linear("self_attn.o_proj", "o", A, B, at.o_in_width, h, La, a.attention_output_bias));
    }
    // Per-head q/k norms (Qwen3, Gemma 3: RMSNorm(head_dim)) or full-width ones (OLMo 2: RMSNorm(H·d), RMSNorm(K·d)).
    if (a.qk_norm_full_width) {
      g.tensors.push_back({"self_attn.q_norm", ParamBucket::norms, at.q_width, La});
      g.tensors.push_back({"self_attn.k_norm", ParamBucket::norms, at.k_width, La});
    } else if (a.qk_norm) {
      g.tensors.push_back({"self_attn.q_norm", ParamBucket::norms, a.head_dim, La});
      g.tensors.push_back({"self_attn.k_norm", ParamBucket::norms, a.head_dim, La});
    }
  }

  // Dense MLP layers (gated: 3·h·I, plain: 2·h·I; Shazeer 2020 arXiv:2002.05202).
  if (g.dense_mlp_layers > 0) {
    require_positive(a.intermediate_size, "intermediate_size", a);
    g.mlp_width = a.intermediate_size;
    add_mlp(g, "mlp.", LinearRole::mlp, ParamBucket::mlp, h, a.intermediate_size, g.dense_mlp_layers, 1, 1, a.gated_mlp,
            a.mlp_bias);
  }
  // MoE layers: routed experts (E copies, top-k active), router h·E (+E), shared experts, Qwen2-MoE shared gate.
  if (a.moe && g.moe_layers > 0) {
    const MoeSpec& m = *a.moe;
    require_positive(m.num_routed_experts, "moe.num_routed_experts", a);
    require_positive(m.expert_intermediate_size, "moe.expert_intermediate_size", a);
    g.num_experts = m.num_routed_experts;
    g.experts_per_token = m.experts_per_token;
    g.expert_width = m.expert_intermediate_size;
    add_mlp(g, "mlp.experts.", LinearRole::routed_expert, ParamBucket::experts, h, m.expert_intermediate_size,
            g.moe_layers, m.num_routed_experts, m.experts_per_token, a.gated_mlp, m.expert_bias);
    g.linears.push_back(linear("mlp.gate", "", LinearRole::router, ParamBucket::router, h, m.num_routed_experts,
                               g.moe_layers, m.router_bias));
    if (m.num_shared_experts > 0) {
      const std::int64_t width = m.shared_intermediate_size > 0 ? m.shared_intermediate_size : m.expert_intermediate_size;
      g.shared_expert_width = m.num_shared_experts * width;
      add_mlp(g, "mlp.shared_experts.", LinearRole::shared_expert, ParamBucket::mlp, h, width, g.moe_layers,
              m.num_shared_experts, m.num_shared_experts, a.gated_mlp, a.mlp_bias);
    }
    if (m.shared_expert_gate) {
      g.linears.push_back(linear("mlp.shared_expert_gate", "", LinearRole::router, ParamBucket::router, h, 1,
                                 g.moe_layers, false));
    }
  }

  // Norms: weight (+ bias for LayerNorm) of width h per norm; a final norm after the last block.
  const std::int64_t norm = norm_elements(a);
  if (a.norms_per_layer > 0 && norm > 0) g.tensors.push_back({"layer_norms", ParamBucket::norms, a.norms_per_layer * norm, L});
  if (a.final_norm && norm > 0) g.tensors.push_back({"norm", ParamBucket::norms, norm, 1});

  // Embeddings (token table V·w, learned positions P·h) and the LM head (w → V).
  const std::int64_t w = a.embedding_width > 0 ? a.embedding_width : h;
  g.tensors.push_back({"embed_tokens", ParamBucket::embeddings, V * w, 1});
  if (a.learned_positions > 0) g.tensors.push_back({"embed_positions", ParamBucket::embeddings, a.learned_positions * h, 1});
  if (a.has_lm_head) {
    LinearFamily head = linear("lm_head", "", LinearRole::head, ParamBucket::head, w, V, 1, a.lm_head_bias);
    head.tied = a.tied_embeddings;
    g.linears.push_back(std::move(head));
  }

  for (const auto& l : a.extra_linears) g.linears.push_back(l);
  for (const auto& t : a.extra_tensors) g.tensors.push_back(t);
  for (const auto& l : a.extra_linears) {
    if (l.role == LinearRole::ssm) g.ssm_layers = std::max(g.ssm_layers, l.layers);
  }
  return g;
}

std::string_view linear_role_name(LinearRole role) {
  switch (role) {
    case LinearRole::attention: return "attention";
    case LinearRole::mlp: return "mlp";
    case LinearRole::shared_expert: return "shared_expert";
    case LinearRole::routed_expert: return "routed_expert";
    case LinearRole::router: return "router";
    case LinearRole::ssm: return "ssm";
    case LinearRole::projection: return "projection";
    case LinearRole::head: return "head";
  }
  return "attention";
}

std::string_view mlp_activation_name(MlpActivation a) {
  switch (a) {
    case MlpActivation::swiglu: return "swiglu";
    case MlpActivation::geglu: return "geglu";
    case MlpActivation::gelu: return "gelu";
    case MlpActivation::gelu_python: return "gelu_python";
    case MlpActivation::relu: return "relu";
    case MlpActivation::squared_relu: return "squared_relu";
    case MlpActivation::silu: return "silu";
    case MlpActivation::none: return "none";
  }
  return "none";
}

MlpActivation mlp_activation_from(std::string_view act, bool gated) {
  const bool gelu = act.rfind("gelu", 0) == 0;
  if (gated) return gelu ? MlpActivation::geglu : MlpActivation::swiglu;
  if (act == "gelu_new") return MlpActivation::gelu_python;  // transformers NewGELUActivation: Python ops
  if (act == "relu") return MlpActivation::relu;
  if (act == "relu2") return MlpActivation::squared_relu;
  if (act == "silu" || act == "swish") return MlpActivation::silu;
  return MlpActivation::gelu;
}

}  // namespace gpuplan
