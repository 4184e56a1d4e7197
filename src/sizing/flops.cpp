#include "sizing/flops.hpp"

#include "model/param_count.hpp"

#include <algorithm>
#include <optional>

namespace gpuplan {
namespace {

/// Blocks with self-attention: all of a decoder's, a hybrid's attention blocks (Jamba, Nemotron-H), none of Mamba's.
std::int64_t attention_layer_count(const ModelArch& arch) {
  if (arch.family != ModelFamily::decoder || arch.num_attention_heads <= 0) return 0;
  return std::clamp<std::int64_t>(arch.attention_layers.value_or(arch.ssm ? 0 : arch.num_layers), 0, arch.num_layers);
}

bool has_attention(const ModelArch& arch) { return arch.num_layers > 0 && attention_layer_count(arch) > 0; }

/// Per-token width of the Q·Kᵀ and A·V products summed over heads (forward FLOP per key =
/// 2·qk_width + 2·v_width).
struct AttentionWidths {
  double qk = 0;
  double v = 0;
};

AttentionWidths attention_widths(const ModelArch& arch) {
  const double heads = static_cast<double>(arch.num_attention_heads);
  if (arch.mla.has_value()) {
    const MlaSpec& m = *arch.mla;
    return {heads * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim),
            heads * static_cast<double>(m.v_head_dim)};
  }
  double head_dim = static_cast<double>(arch.head_dim);
  if (head_dim <= 0 && arch.num_attention_heads > 0)
    head_dim = static_cast<double>(arch.hidden_size) / heads;
  return {heads * head_dim, heads * head_dim};
}

/// Mean number of keys a query attends to in a causal sequence of s tokens with an optional
/// window w: query i (1-based) sees min(i, w) keys.
double causal_mean_keys(std::int64_t s, std::optional<std::int64_t> window) {
  const double sd = static_cast<double>(s);
  if (!window || *window >= s) return (sd + 1.0) / 2.0;
  const double w = static_cast<double>(*window);
  return (w * (w + 1.0) / 2.0 + (sd - w) * w) / sd;
}

/// Sum over attention layers of the forward attention FLOP per token, given a function that
/// returns the keys attended per query for a layer (full or windowed).
template <class KeysFn>
double attention_forward_flop(const ModelArch& arch, KeysFn keys_for_layer) {
  if (!has_attention(arch)) return 0;
  const AttentionWidths w = attention_widths(arch);
  const double per_key = 2.0 * w.qk + 2.0 * w.v;
  const std::int64_t sliding = arch.sliding_window ? arch.num_sliding_window_layers() : 0;
  // Mistral v0.1-style configs set sliding_window without a per-layer list: all layers.
  const std::int64_t attention_layers = attention_layer_count(arch);
  const std::int64_t windowed =
      arch.sliding_window ? std::min(arch.layer_uses_sliding_window.empty() ? attention_layers : sliding, attention_layers) : 0;
  const std::int64_t full_layers = attention_layers - windowed;
  return per_key * (static_cast<double>(full_layers) * keys_for_layer(false) +
                    static_cast<double>(windowed) * keys_for_layer(true));
}

FlopsPerToken make(double matmul, double attention) { return {matmul, attention, matmul + attention}; }

bool frozen_base(Task task) { return task == Task::lora || task == Task::qlora; }

}  // namespace

const LayerGeometry* current_geometry(const ModelArch& arch) {
  const LayerGeometry& g = arch.geometry;
  if (g.linears.empty() || g.num_layers != arch.num_layers) return nullptr;
  if (count_params(g).total() != arch.params.total()) return nullptr;  // shape edited without finalize_arch()
  return &g;
}

double matmul_params_per_token(const ModelArch& arch) {
  // The model's LayerGeometry lists every matrix once (the same list memory and parameter
  // counting read): Σ layers × active copies × d_in × d_out, tied LM head included.
  if (const LayerGeometry* g = current_geometry(arch)) {
    double macs = 0;
    for (const LinearFamily& f : g->linears) macs += static_cast<double>(f.macs_per_token());
    return macs;
  }
  const ParamBreakdown& p = arch.params;
  double n = static_cast<double>(p.active() - p.embeddings - p.norms);
  if (arch.family == ModelFamily::decoder && arch.tied_embeddings && p.head == 0)
    n += static_cast<double>(arch.vocab_size) * static_cast<double>(arch.hidden_size);
  return std::max(n, 0.0);
}

FlopsPerToken forward_flops_per_token(const ModelArch& arch, std::int64_t seq_len) {
  const std::int64_t s = std::max<std::int64_t>(seq_len, 1);
  const double matmul = 2.0 * matmul_params_per_token(arch);
  const double attention = attention_forward_flop(
      arch, [&](bool windowed) { return causal_mean_keys(s, windowed ? arch.sliding_window : std::nullopt); });
  return make(matmul, attention);
}

FlopsPerToken model_training_flops_per_token(const ModelArch& arch, std::int64_t seq_len, Task task) {
  const FlopsPerToken fwd = forward_flops_per_token(arch, seq_len);
  // Full training: forward + backward (2 × forward). Frozen base weights: the matmuls skip the
  // weight-gradient half of the backward; the attention core has no weights, its backward is
  // still 2 × forward.
  const double matmul_passes = frozen_base(task) ? 2.0 : 3.0;
  return make(matmul_passes * fwd.dense_matmul_flop, 3.0 * fwd.attention_flop);
}

FlopsPerToken training_flops_per_token(const ModelArch& arch, std::int64_t seq_len, Recompute recompute,
                                       Task task, RecomputeModules modules) {
  const FlopsPerToken fwd = forward_flops_per_token(arch, seq_len);
  FlopsPerToken t = model_training_flops_per_token(arch, seq_len, task);
  switch (recompute) {
    case Recompute::none: break;
    case Recompute::selective: {
      const RecomputeModules set = effective_recompute_modules(recompute, modules);
      if (has_module(set, RecomputeModule::core_attn)) t.attention_flop += fwd.attention_flop;
      const bool mla_up = has_module(set, RecomputeModule::mla_up_proj) && arch.mla.has_value();
      const bool mlp = has_module(set, RecomputeModule::mlp);
      if ((mla_up || mlp) && current_geometry(arch) != nullptr) {
        for (const LinearFamily& l : current_geometry(arch)->linears) {
          const bool up_proj = l.name == "self_attn.q_b_proj" || l.name == "self_attn.kv_b_proj";
          if ((mla_up && up_proj) || (mlp && l.role == LinearRole::mlp))
            t.dense_matmul_flop += 2.0 * static_cast<double>(l.macs_per_token());
        }
      } else if (mlp && arch.family == ModelFamily::decoder) {
        // A model without a geometry (--params/--layers/--hidden shapes): its dense MLP from the
        // shape, (3 gated | 2) matrices of h·f in each layer without routed experts (trial41 D1).
        const double dense_layers = static_cast<double>(arch.num_layers - (arch.moe ? arch.moe->num_moe_layers : 0));
        t.dense_matmul_flop += 2.0 * (arch.gated_mlp ? 3.0 : 2.0) * static_cast<double>(arch.hidden_size) *
                               static_cast<double>(arch.intermediate_size) * std::max(dense_layers, 0.0);
      }
      break;
    }
    case Recompute::op_selective: {
      // torchtitan per-op SAC: of a Llama layer's seven mm calls (wq wk wv wo w1 w3 w2) the even ones (wk, wo,
      // w3) are recomputed, the attention core is saved. Their share of the layer's matmul FLOPs, from the
      // widths (h·kv·d + h·a·d + h·f) / (h·(2·a·d + 2·kv·d) + 3·h·f); gated MLP assumed (Llama).
      const double h = static_cast<double>(arch.hidden_size), a = static_cast<double>(arch.num_attention_heads);
      const double kv = static_cast<double>(arch.num_kv_heads > 0 ? arch.num_kv_heads : arch.num_attention_heads);
      const double d = arch.head_dim > 0 ? static_cast<double>(arch.head_dim) : (a > 0 ? h / a : 0.0);
      const double f = static_cast<double>(arch.intermediate_size);
      const double all = h * (2.0 * a * d + 2.0 * kv * d) + 3.0 * h * f;
      const double share = all > 0 ? (h * kv * d + h * a * d + h * f) / all : 0.0;
      t.dense_matmul_flop += share * fwd.dense_matmul_flop;
      break;
    }
    case Recompute::full:
      t.dense_matmul_flop += fwd.dense_matmul_flop;
      t.attention_flop += fwd.attention_flop;
      break;
  }
  t.total_flop = t.dense_matmul_flop + t.attention_flop;
  return t;
}

FlopsPerToken inference_flops_per_token(const ModelArch& arch, std::int64_t context_tokens) {
  const std::int64_t c = std::max<std::int64_t>(context_tokens, 1);
  const double matmul = 2.0 * matmul_params_per_token(arch);
  const double attention = attention_forward_flop(arch, [&](bool windowed) {
    const std::int64_t keys = windowed && arch.sliding_window ? std::min(c, *arch.sliding_window) : c;
    return static_cast<double>(keys);
  });
  return make(matmul, attention);
}

double prefill_flops(const ModelArch& arch, std::int64_t prompt_tokens) {
  const std::int64_t p = std::max<std::int64_t>(prompt_tokens, 1);
  return forward_flops_per_token(arch, p).total_flop * static_cast<double>(p);
}

}  // namespace gpuplan
