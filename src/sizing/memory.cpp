// Training and serving memory per GPU (memory.hpp). One code path computes the numbers; the
// formula strings are only built when an explanation is asked for (explain != nullptr).
#include "sizing/memory.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "model/geometry.hpp"
#include "model/param_count.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {
namespace {

constexpr double kGiB = 1073741824.0;
constexpr const char* kSrcZero = "ZeRO (Rajbhandari et al. 2020, arXiv:1910.02054) §3.1, §5.1";
constexpr const char* kSrcKorth =
    "Korthikanti et al. 2022 (arXiv:2205.05198) §4.1 Eq. 1-2, Table 2, §4.2.3; generalised to GQA/gated MLP/MoE "
    "(see docs/sizing.md)";
constexpr const char* kSrcLora = "LoRA (Hu et al. 2021, arXiv:2106.09685) §4: r·(d_in + d_out) per adapted matrix";
constexpr const char* kSrcQlora = "QLoRA (Dettmers et al. 2023, arXiv:2305.14314) §3: NF4 + double quantisation";
constexpr const char* kSrcKv =
    "Pope et al. 2022 (arXiv:2211.05102) §2: 2·layers·kv_heads·head_dim·tokens·bytes; MLA: DeepSeek-V2 "
    "(arXiv:2405.04434) §2.1.4";
constexpr const char* kSrcLogits = "cross-entropy over the vocabulary: 16-bit logits + fp32 log-softmax + fp32 grad";
constexpr const char* kSrcCtx = "CUDA context + kernels, per GPU (PyTorch CUDA semantics; HF 'model training anatomy')";
constexpr const char* kSrcFrag =
    "PyTorch caching-allocator slack (reserved − allocated) as a fraction of the per-step (dynamic) allocations; "
    "calibrated on gpuplan’s H200 measurements (docs/accuracy.md)";

std::string gb(double bytes) { return fmt::format("{:.3f} GiB", bytes / kGiB); }
std::string num(double v) {
  if (std::fabs(v) >= 1e6) return fmt::format("{:.4g}", v);
  return fmt::format("{:g}", v);
}

using Explain = std::vector<TermExplanation>;

/// Appends a term (skipped when 0 bytes unless `keep_zero`) and, when explaining, its formula.
template <typename Formula>
void add_term(MemoryBreakdown& out, Explain* ex, const char* name, double bytes, const char* source,
              const Formula& formula, bool keep_zero = false) {
  if (bytes <= 0 && !keep_zero) return;
  out.terms.push_back(MemoryTerm{name, bytes});
  if (ex) ex->push_back(TermExplanation{name, bytes, formula() + " = " + gb(bytes), source});
}

bool is_mixed(TrainPrecision p) {
  return p == TrainPrecision::bf16_mixed || p == TrainPrecision::fp16_mixed || p == TrainPrecision::fp8_mixed;
}
bool is_fp32(TrainPrecision p) { return p == TrainPrecision::fp32 || p == TrainPrecision::tf32; }

// ---------------------------------------------------------------------------------------------
// Architecture-derived shapes
// ---------------------------------------------------------------------------------------------

struct Shape {
  double h = 0, a = 0, kv = 0, d = 0, L = 0, V = 0, f = 0;
  double q_width = 0;      ///< query width (a·d; MLA a·(nope+rope))
  double k_width = 0;      ///< key width (kv·d; MLA a·(nope+rope) after up-projection)
  double v_width = 0;      ///< value width (kv·d; MLA a·v_head)
  double o_in_width = 0;   ///< attention output width = out-projection input (a·d; MLA a·v_head)
  double mla_replicated = 0;  ///< MLA latents per token (not split by TP): c_kv, k_rope, q latent
  double L_moe = 0, L_dense = 0, E = 0, k = 0, f_e = 0, shared_width = 0;
  /// Layers whose q/k/v/o and whose dense-MLP matrices exist (the model's geometry): L and L_dense, except in hybrids
  /// (Jamba's SSM blocks have no attention; Nemotron-H's blocks hold one mixer each). The matrices' sums
  /// (sum_linears: LoRA adapters, stored inputs) count these; the per-layer activations still count every block as a
  /// transformer layer (a warning says so for hybrids).
  double L_attn_linears = 0, L_dense_linears = 0;
  bool decoder = false, mla = false, moe = false;
};

Shape shape_of(const ModelArch& m) {
  Shape s;
  s.decoder = m.family == ModelFamily::decoder && m.num_layers > 0 && m.hidden_size > 0;
  s.h = static_cast<double>(m.hidden_size);
  s.L = static_cast<double>(m.num_layers);
  s.V = static_cast<double>(m.vocab_size);
  s.a = static_cast<double>(m.num_attention_heads);
  s.kv = static_cast<double>(m.num_kv_heads > 0 ? m.num_kv_heads : m.num_attention_heads);
  s.d = m.head_dim > 0 ? static_cast<double>(m.head_dim)
                       : (m.num_attention_heads > 0 ? s.h / s.a : 0.0);
  s.f = static_cast<double>(m.intermediate_size);
  if (m.mla) {
    s.mla = true;
    const MlaSpec& x = *m.mla;
    const double qk = static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim);
    s.q_width = s.a * qk;
    s.k_width = s.a * qk;
    s.v_width = s.a * static_cast<double>(x.v_head_dim);
    s.o_in_width = s.v_width;
    // kv_a output (c_kv + k_rope), its norm output c_kv, q latent and its norm output.
    s.mla_replicated = 2.0 * (static_cast<double>(x.kv_lora_rank + x.qk_rope_head_dim) +
                              static_cast<double>(x.kv_lora_rank)) +
                       (x.q_lora_rank ? 2.0 * 2.0 * static_cast<double>(*x.q_lora_rank) : 0.0);
  } else {
    s.q_width = s.a * s.d;
    s.k_width = s.kv * s.d;
    s.v_width = s.kv * s.d;
    s.o_in_width = s.a * s.d;
  }
  s.L_dense = s.L;
  if (m.moe) {
    const MoeSpec& e = *m.moe;
    s.moe = true;
    s.L_moe = static_cast<double>(e.num_moe_layers > 0 ? e.num_moe_layers : m.num_layers);
    s.L_dense = std::max(0.0, s.L - s.L_moe);
    s.E = static_cast<double>(e.num_routed_experts);
    s.k = static_cast<double>(e.experts_per_token);
    s.f_e = static_cast<double>(e.expert_intermediate_size);
    const double fs = static_cast<double>(e.shared_intermediate_size > 0 ? e.shared_intermediate_size
                                                                          : e.expert_intermediate_size);
    s.shared_width = static_cast<double>(e.num_shared_experts) * fs;
  }
  s.L_attn_linears = s.L;
  s.L_dense_linears = s.L_dense;
  if (m.ssm && m.geometry.num_layers == m.num_layers) {
    s.L_attn_linears = static_cast<double>(m.geometry.attention_layers);
    s.L_dense_linears = static_cast<double>(m.geometry.dense_mlp_layers);
  }
  return s;
}

/// K/V projection parameters per GPU beyond the even TP split when TP > KV heads (GQA/MQA, not
/// MLA): each GPU holds a whole KV head, so per layer 2·head_dim·hidden·(1 − kv/t) more than
/// kv/t of the heads; × the stage's layers. 0 when t ≤ kv. Llama 3.1 70B at TP16 (8 KV heads,
/// head_dim 128, hidden 8192, 80 layers on one stage): 80 × 2·128·8192·0.5 = 83,886,080.
double kv_replicated_params(const ModelArch& m, const Shape& s, double t, double layers_stage) {
  if (!s.decoder || s.mla || m.num_kv_heads <= 0 || !(t > s.kv)) return 0.0;
  return layers_stage * (2.0 * s.d * s.h) * (1.0 - s.kv / t);
}

/// One linear matrix family of a layer: d_in × d_out, `count` copies per layer of its kind.
struct Linear {
  const char* target;  ///< LoRA target name
  double d_in, d_out, count;
  bool moe_layer;      ///< present only in MoE layers (routed / shared experts)
  bool dense_layer;    ///< present only in dense-MLP layers
};

std::vector<Linear> linears_of(const ModelArch& m, const Shape& s) {
  std::vector<Linear> out;
  if (s.mla) {
    const MlaSpec& x = *m.mla;
    const double qk = static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim);
    if (x.q_lora_rank) {
      const double r = static_cast<double>(*x.q_lora_rank);
      out.push_back({"q", s.h, r, 1, false, false});
      out.push_back({"q", r, s.a * qk, 1, false, false});
    } else {
      out.push_back({"q", s.h, s.a * qk, 1, false, false});
    }
    const double c = static_cast<double>(x.kv_lora_rank);
    out.push_back({"k", s.h, c + static_cast<double>(x.qk_rope_head_dim), 1, false, false});
    out.push_back({"v", c, s.a * static_cast<double>(x.qk_nope_head_dim + x.v_head_dim), 1, false, false});
    out.push_back({"o", s.v_width, s.h, 1, false, false});
  } else {
    out.push_back({"q", s.h, s.q_width, 1, false, false});
    out.push_back({"k", s.h, s.k_width, 1, false, false});
    out.push_back({"v", s.h, s.v_width, 1, false, false});
    out.push_back({"o", s.o_in_width, s.h, 1, false, false});
  }
  if (s.L_dense > 0 && s.f > 0) {
    if (m.gated_mlp) out.push_back({"gate", s.h, s.f, 1, false, true});
    out.push_back({"up", s.h, s.f, 1, false, true});
    out.push_back({"down", s.f, s.h, 1, false, true});
  }
  if (s.moe) {
    const double n = s.E;
    if (m.gated_mlp) out.push_back({"gate", s.h, s.f_e, n, true, false});
    out.push_back({"up", s.h, s.f_e, n, true, false});
    out.push_back({"down", s.f_e, s.h, n, true, false});
    if (s.shared_width > 0) {
      if (m.gated_mlp) out.push_back({"gate", s.h, s.shared_width, 1, true, false});
      out.push_back({"up", s.h, s.shared_width, 1, true, false});
      out.push_back({"down", s.shared_width, s.h, 1, true, false});
    }
  }
  return out;
}

/// Σ over all layers of `per(matrix)` × copies, split into (non-expert, routed-expert) sums.
struct LinearSum {
  double dense = 0, expert = 0;
};
template <typename F>
LinearSum sum_linears(const std::vector<Linear>& ls, const Shape& s, F per) {
  LinearSum out;
  for (const auto& l : ls) {
    const double layers = l.moe_layer ? s.L_moe : (l.dense_layer ? s.L_dense_linears : s.L_attn_linears);
    const double v = per(l) * l.count * layers;
    if (l.moe_layer && l.count > 1) out.expert += v; else out.dense += v;
  }
  return out;
}

bool targets(const std::vector<std::string>& t, const char* name) {
  for (const auto& x : t) {
    if (x == name || x == "all_linear" || x == "all-linear") return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Activations (Korthikanti et al. 2022 §4.1, generalised). Bytes per token of one layer, 16-bit.
// ---------------------------------------------------------------------------------------------

struct LayerActivation {
  double replicated = 0;  ///< R: not split by TP unless SP (norm inputs, block inputs, dropout masks)
  double split = 0;       ///< T: split by TP (Q, K, V, attention output, MLP intermediates)
  double scores = 0;      ///< S: s×s attention scores per token (0 with FlashAttention), split by TP
};

/// What decides which tensors a layer saves for backward.
struct ActivationContext {
  ActivationProfile profile = ActivationProfile::pytorch_eager;
  bool flash = true, dropout = false, gated = true;
  double seq = 0;
  double norm_bytes_per_h = 2;  ///< saved bytes per hidden element per norm
  double norms_per_layer = 2;
  bool qk_norm = false;
  bool lora = false;
  double adapter_bytes = 4;     ///< dtype of the adapters (PEFT casts adapted inputs to it)
  const std::vector<std::string>* targets = nullptr;
  /// GPT-2's gelu_new is Python code in HF (NewGELUActivation): eager autograd keeps x, tanh(.),
  /// 0.5·x and 1 + tanh(.) (4 × 2f) instead of the fused GeLU's input (2f).
  bool python_gelu = false;
  bool kv_expanded = false;  ///< K, V copied to the query heads before attention (memory.hpp)
  /// Bytes per element of a linear layer's saved input: 2 (16 bits), 1 under Transformer Engine FP8
  /// (Megatron profile with fp8_mixed): TE's Linear/GroupedLinear keep the quantized input for the
  /// weight gradient and discard its row-wise copy (transformer_engine/pytorch/module/linear.py at
  /// d0067d0da, _Linear forward: saved_inputmat = the quantized inputmat, update_usage(rowwise_usage=False)).
  double gemm_input_bytes = 2;
  /// Megatron-Core selective recompute modules in effect (memory.hpp RecomputeModule): what they
  /// discard is not saved.
  RecomputeModules modules = 0;
};

/// Bytes saved for the input (width `w`) shared by the linear layers `group`: once in 16 bits when the
/// weights train; under LoRA each adapted matrix saves its own cast copy (one shared copy when the
/// adapters are 16-bit), frozen unadapted matrices save nothing.
double linear_input(const ActivationContext& c, double w, std::initializer_list<const char*> group) {
  if (!c.lora) return c.gemm_input_bytes * w;
  int n = 0;
  for (const char* g : group) n += targets(*c.targets, g) ? 1 : 0;
  if (n == 0) return 0.0;
  if (c.adapter_bytes <= 2.0) return 2.0 * w;
  // torch.compile: the identical casts of one input are one node after the partitioner's CSE
  // (partitioners.py min_cut_rematerialization_partition: fx_graph_cse when config.cse).
  if (c.profile == ActivationProfile::pytorch_compiled) return c.adapter_bytes * w;
  return c.adapter_bytes * w * n;
}

LayerActivation layer_activation(const Shape& s, bool moe_layer, const ActivationContext& c) {
  const bool eager = c.profile == ActivationProfile::pytorch_eager;
  const bool compiled = c.profile == ActivationProfile::pytorch_compiled;
  const bool megatron = c.profile == ActivationProfile::megatron;
  LayerActivation x;
  // Megatron-Core recompute_modules (memory.hpp RecomputeModule): the tensors they discard.
  const bool drop_attn_norm_out = s.mla && has_module(c.modules, RecomputeModule::layernorm);
  const bool drop_mlp_norm_out = moe_layer && has_module(c.modules, RecomputeModule::layernorm);
  const bool drop_dense_mlp = !moe_layer && has_module(c.modules, RecomputeModule::mlp);
  const bool drop_expert_act = moe_layer && has_module(c.modules, RecomputeModule::moe_act);
  const bool drop_mla_qkv = s.mla && has_module(c.modules, RecomputeModule::mla_up_proj);
  // R: norm inputs + the attention / MLP block inputs [+ 2 dropout masks, 1 B each] (Korthikanti: 4+2+2+2 = 10 sbh).
  x.replicated = c.norms_per_layer * c.norm_bytes_per_h * s.h +
                 (drop_attn_norm_out ? 0.0 : linear_input(c, s.h, {"q", "k", "v"})) +
                 (drop_mlp_norm_out || drop_dense_mlp ? 0.0 : linear_input(c, s.h, {"gate", "up"})) +
                 (c.dropout ? 2 * s.h : 0.0) + s.mla_replicated;
  // T: Q, K, V as attention reads them and the attention output, 2 B each (Korthikanti: 2+2+2+2 = 8 sbh).
  // K and V copied to the query heads first (kv_expanded_for_attention, memory.hpp): saved at q width.
  const double expand = c.kv_expanded && s.kv > 0 ? s.a / s.kv : 1.0;  // query heads per KV head
  const double k_read = s.k_width * expand, v_read = s.v_width * expand;
  x.split = (drop_mla_qkv ? 0.0 : 2 * s.q_width + 2 * k_read + 2 * v_read) + 2 * s.o_in_width;
  if (c.qk_norm) x.split += (eager ? 6.0 : 2.0) * (s.q_width + s.k_width);
  // The out-projection input: Megatron reuses the attention output; eager PyTorch makes a contiguous copy,
  // which torch.compile also saves (a backward mm reads it: is_materialized_backwards bans its recompute).
  // Megatron under LoRA: the frozen projection (a TE Linear whose weight needs no gradient) saves
  // no input (linear.py at d0067d0da: backward_needs_input = weight.requires_grad) and its bf16
  // adapter saves the attention output itself, already counted: nothing more.
  if (eager || compiled || (c.lora && !megatron)) x.split += linear_input(c, s.o_in_width, {"o"});
  // Under FP8 the out-projection (a TE Linear) keeps its own 8-bit copy of the attention output.
  else if (megatron && !c.lora && c.gemm_input_bytes < 2.0) x.split += c.gemm_input_bytes * s.o_in_width;
  if (c.flash) {
    x.split += 4 * s.a;  // [FA] fp32 logsumexp per head per token
  } else {
    x.scores = s.a * c.seq * (c.dropout ? 5.0 : 2.0);  // softmax out 2 [+ mask 1 + dropout out 2] per score
  }
  // MLP: gated keeps gate out, act out, up out (3·2f) + the down-projection input (the product);
  // plain keeps the activation input (2f) + the down-projection input (Korthikanti: 8+8 = 16 sbh at f = 4h).
  // torch.compile recomputes silu(gate) (pointwise, read only by pointwise backward ops): gate, up (4f).
  // Megatron's fused SwiGLU (bias_activation_fusion, which Megatron-Bridge sets for Llama, Qwen3,
  // DeepSeek-V3 and gpt-oss) saves only its input, gate and up (4f): Megatron-LM
  // megatron/core/fusions/fused_bias_swiglu.py at d98e8a64dd, SwiGLUFunction.forward
  // ctx.save_for_backward(input_for_backward).
  const double inner = c.gated ? (compiled || megatron ? 4.0 : 6.0) : (c.python_gelu ? 8.0 : 2.0);
  if (moe_layer) {
    // Per routed token (top-k): gathered input copy (the experts' first GEMM input: 8 bits under TE
    // FP8), expert intermediates, and what the routing weights' gradient reads: eager stacks weight
    // the expert output after the down projection (HF Mixtral/Qwen3-MoE: expert(x) * routing_weight),
    // saving that output (2h); Megatron-Core applies the weights inside the activation
    // (WeightedSwiGLUFunction saves its input, counted in `inner`, and the fp32 weights: 4 B), so
    // the combine saves nothing (Megatron-LM 2659630721, 2025-04-09, "Memory efficient token
    // permutation": experts.py activation_func_with_probs, fused_bias_swiglu.py).
    const double weight_grad_input = megatron && c.gated ? 4.0 : 2 * s.h;
    x.split += s.k * ((c.lora ? 2.0 : c.gemm_input_bytes) * s.h + inner * s.f_e +
                      (drop_expert_act ? 0.0 : linear_input(c, s.f_e, {"down"})) + weight_grad_input);
    x.split += inner * s.shared_width + linear_input(c, s.shared_width, {"down"});
    x.replicated += 2 * 4 * s.E;  // router logits + probabilities, fp32
  } else if (!drop_dense_mlp) {
    x.split += inner * s.f + linear_input(c, s.f, {"down"});
  }
  return x;
}

double stored_per_token(const LayerActivation& x, double t, bool sp, bool with_scores) {
  return x.replicated / (sp ? t : 1.0) + (x.split + (with_scores ? x.scores : 0.0)) / t;
}

// ---------------------------------------------------------------------------------------------
// Training
// ---------------------------------------------------------------------------------------------

void validate_against_model(const ModelArch& m, const Shape& s, int tp, int pp, int ep, const std::string& tp_flag) {
  if (m.params.total() <= 0) {
    throw_invalid(m.name.empty() ? "model" : m.name, "model has no parameter count", "a model with parameters");
  }
  if (s.decoder) {
    if (m.num_attention_heads > 0 && m.num_attention_heads % tp != 0) {
      throw_invalid_coded(tp_flag, "tp_not_dividing_heads",
                          {{"tp", std::to_string(tp)}, {"heads", std::to_string(m.num_attention_heads)}, {"model", m.name}},
                          fmt::format("tp {} does not divide the {} attention heads of {}", tp, m.num_attention_heads, m.name),
                          fmt::format("a divisor of {}", m.num_attention_heads));
    }
    // KV heads split over TP ranks, or each replicated on tp/kv ranks when tp > kv (vLLM,
    // Megatron num_query_groups): either way one must divide the other.
    const std::int64_t kv = m.num_kv_heads;
    if (!m.mla && kv > 0 && tp > 1 && (tp > kv ? tp % kv != 0 : kv % tp != 0)) {
      throw_invalid_coded(tp_flag, "tp_kv_heads_mismatch",
                          {{"tp", fmt::format("{}", tp)}, {"kv_heads", fmt::format("{}", kv)}, {"model", m.name}},
                          fmt::format("tp {} and the {} KV heads of {} neither divide each other (no even split and no "
                                      "even replication)",
                                      tp, kv, m.name),
                          fmt::format("a divisor or a multiple of {}", kv));
    }
    if (pp > m.num_layers) {
      throw_invalid_coded("--pp", "pp_exceeds_layers",
                          {{"pp", fmt::format("{}", pp)}, {"layers", fmt::format("{}", m.num_layers)}, {"model", m.name}},
                          fmt::format("pp {} exceeds the {} layers of {}", pp, m.num_layers, m.name),
                          fmt::format("at most {}", m.num_layers));
    }
  }
  // Encoders and encoder-decoders (BERT, T5) are sized whole on one GPU: no TP/PP split of them is modelled (trial61 #5:
  // --tp 2 --pp 2 printed the whole model per GPU, and --tp 3 on 16 heads was accepted).
  if ((m.family == ModelFamily::encoder || m.family == ModelFamily::encoder_decoder) && (tp > 1 || pp > 1)) {
    const bool tp_flag_bad = tp > 1;
    throw_invalid_coded(tp_flag_bad ? tp_flag : std::string("--pp"), "parallel_not_modelled",
                        {{"family", std::string(family_name(m.family))}, {"model", m.name}},
                        fmt::format("{} {} on {} ({}): gpuplan sizes encoder and encoder-decoder models whole on one GPU",
                                    tp_flag_bad ? "tp" : "pp", tp_flag_bad ? tp : pp, m.name, family_name(m.family)),
                        "tp 1 and pp 1 for this model");
  }
  if (ep > 1) {
    if (!m.moe)
      throw_invalid_coded("--ep", "ep_on_dense_model", {{"ep", fmt::format("{}", ep)}, {"model", m.name}},
                          fmt::format("ep {} on a dense model ({})", ep, m.name), "ep 1 for dense models");
    if (m.moe->num_routed_experts % ep != 0) {
      throw_invalid_coded("--ep", "ep_not_dividing_experts",
                          {{"ep", fmt::format("{}", ep)}, {"experts", fmt::format("{}", m.moe->num_routed_experts)}},
                          fmt::format("ep {} does not divide the {} experts", ep, m.moe->num_routed_experts),
                          fmt::format("a divisor of {}", m.moe->num_routed_experts));
    }
  }
}

struct StageInfo {
  int index = 0;         ///< 0-based pipeline stage
  bool first = true, last = true;
};

/// Whether the request lists its stages' layers (one entry per pipeline rank of its layout).
bool has_stage_layers(const TrainingMemoryRequest& r) {
  return r.pipeline_stage_layers.size() == static_cast<std::size_t>(r.layout.pp);
}

/// Decoder layers on stage `index`: the request's --pp-layers entry, else ceil(L / pp).
double stage_layers(const TrainingMemoryRequest& r, double L, int index) {
  if (has_stage_layers(r)) return static_cast<double>(r.pipeline_stage_layers[static_cast<std::size_t>(index)]);
  return std::ceil(L / r.layout.pp);
}

/// Micro-batches whose activations stage `index` holds under 1F1B: pp on the first (or
/// in_flight_micro_batches when set), pp − index on the others (1 on the last).
double stage_in_flight(const ParallelLayout& lay, int index) {
  if (index == 0) return lay.in_flight_micro_batches > 0 ? lay.in_flight_micro_batches : lay.pp;
  return static_cast<double>(lay.pp - index);
}

MemoryBreakdown training_stage(const ModelArch& m, const TrainingMemoryRequest& r, const StageInfo& st, Explain* ex) {
  const Shape s = shape_of(m);
  const ParallelLayout& lay = r.layout;
  const double t = lay.tp, p = lay.pp, dp = lay.dp, ep = lay.ep;
  const double b = lay.micro_batch, seq = static_cast<double>(r.seq_len);
  const bool lora = r.task == Task::lora || r.task == Task::qlora;
  const bool qlora = r.task == Task::qlora;
  MemoryBreakdown out;

  // --- Parameters held by this GPU before ZeRO sharding (TP, PP, EP splits). ---
  const ParamBreakdown& P = m.params;
  const double layers_stage = s.decoder ? stage_layers(r, s.L, st.index) : 1.0;
  const double frac = s.decoder ? layers_stage / s.L : 1.0;
  double dense_tp = 0, dense_rep = 0, expert_gpu = 0, extra = 0;
  // TP above the KV heads: each GPU holds one whole KV head (replicated on t / kv GPUs, vLLM and
  // Megatron num_query_groups), not kv/t of one: 2·head_dim·hidden·(1 − kv/t) more K/V projection
  // parameters per layer than the even split counts (kv_replicated_params, memory.hpp).
  const double kv_rep = kv_replicated_params(m, s, t, layers_stage);
  if (s.decoder) {
    dense_tp = frac * static_cast<double>(P.attention + P.mlp + m.ssm_mixer_params()) / t + kv_rep;
    dense_rep = frac * static_cast<double>(P.norms + P.router);
    expert_gpu = frac * static_cast<double>(P.experts) / (lay.etp() * ep);
    if (st.first) extra += static_cast<double>(P.embeddings) / t + static_cast<double>(P.other - m.ssm_mixer_params());
    if (st.last) {
      if (P.head > 0) extra += static_cast<double>(P.head) / t;
      else if (m.tied_embeddings && !st.first) extra += s.V * s.h / t;  // Megatron keeps a tied copy on the last stage
    }
  } else {
    dense_rep = static_cast<double>(P.total());  // non-decoder: not split (no TP/PP model of these families)
  }
  const double dense_gpu = dense_tp + dense_rep + extra;
  const double z = lay.zero_stage;
  const double shard_dense = dp, shard_expert = lay.edp();
  auto sharded = [&](double dense, double expert, int min_stage) {
    return z >= min_stage ? dense / shard_dense + expert / shard_expert : dense + expert;
  };
  const double params_gpu = sharded(dense_gpu, expert_gpu, 3);

  // --- Linear-layer shapes for LoRA / QLoRA / Adafactor. ---
  const std::vector<Linear> ls = s.decoder ? linears_of(m, s) : std::vector<Linear>{};
  const double mp_split = frac / t;  // a per-model linear sum → this GPU (dense parts)
  const double expert_split = frac / (lay.etp() * ep);  // routed experts: split by etp × ep

  const TrainPrecision prec = r.precision;
  const bool mixed = is_mixed(prec), fp32 = is_fp32(prec), pure = prec == TrainPrecision::bf16_pure;
  const double act_scale = fp32 ? 2.0 : 1.0;

  double weights_gpu_bytes = 0, grads_bytes = 0, optim_bytes = 0, adapter_bytes = 0, temp_bytes = 0;
  double temp_params = 0;
  std::function<std::string()> f_weights, f_grads, f_optim, f_adapter;

  if (!lora) {
    const double wb = fp32 ? 4.0 : (prec == TrainPrecision::fp8_mixed ? 3.0 : 2.0);
    const double gbytes = (fp32 || r.fp32_grad_accumulation) ? 4.0 : 2.0;
    double state_per_param = 0;  // optimizer state incl. fp32 master
    const double master = mixed ? 4.0 : 0.0;
    switch (r.optimizer) {
      case Optimizer::adamw: state_per_param = pure ? 4.0 : 8.0; break;
      case Optimizer::adamw_8bit:  // [8bit] + one fp32 absmax per block (kOptimizer8bitBlockValues) per state
        state_per_param = 2.0 + 2.0 * 4.0 / kOptimizer8bitBlockValues;
        break;
      case Optimizer::sgd_momentum:
      case Optimizer::lion: state_per_param = pure ? 2.0 : 4.0; break;
      case Optimizer::adafactor: state_per_param = 0; break;
    }
    weights_gpu_bytes = wb * params_gpu;
    grads_bytes = gbytes * sharded(dense_gpu, expert_gpu, 2);
    const double opt_params = sharded(dense_gpu, expert_gpu, 1);
    // DeepSpeed ZeRO-1/2 mixed precision: an fp32 gradient partition beside the 16-bit gradients.
    const double fp32_partition =
        (r.fp32_grad_partition && !fp32 && z >= 1 && z <= 2) ? 4.0 * opt_params : 0.0;
    grads_bytes += fp32_partition;
    double adafactor_bytes = 0;
    if (r.optimizer == Optimizer::adafactor) {
      // [Adafac] factored second moment: rows + cols values per matrix (fp32; bf16 when pure).
      const LinearSum rc = sum_linears(ls, s, [](const Linear& l) { return l.d_in + l.d_out; });
      const double vb = pure ? 2.0 : 4.0;
      double per_gpu = vb * (rc.dense * mp_split + rc.expert * expert_split);
      if (st.first) per_gpu += vb * (s.V + s.h);
      if (st.last && P.head > 0) per_gpu += vb * (s.V + s.h);
      adafactor_bytes = z >= 1 ? per_gpu / dp : per_gpu;
    }
    optim_bytes = (master + state_per_param) * opt_params + adafactor_bytes;
    if (r.optimizer_in_backward) {
      // One parameter's gradient at a time: the largest matrix (embedding / head, vocab-parallel).
      double largest = s.decoder ? s.V * s.h / t : 0.0;
      for (const auto& l : ls) largest = std::max(largest, l.d_in * l.d_out / t);
      grads_bytes = gbytes * largest;
    }
    if (r.optimizer_foreach && !r.optimizer_in_backward && r.optimizer != Optimizer::adamw_8bit &&
        r.optimizer != Optimizer::adafactor) {
      temp_bytes = (mixed ? 4.0 : wb) * opt_params;
      temp_params = opt_params;
    }
    if (ex) {
      f_weights = [=] {
        return fmt::format("{} B/param × {} params on this GPU (TP {}, PP stage {} of {}, EP {}{})", wb,
                           num(params_gpu), t, st.index + 1, p, ep, z >= 3 ? fmt::format(", ZeRO-3 / dp {}", dp) : "");
      };
      f_grads = [=] {
        if (r.optimizer_in_backward)
          return fmt::format("{} B × {} params of the largest matrix (optimizer in backward)", gbytes,
                             num(grads_bytes / gbytes));
        return fmt::format("{} B/param × {} params{}{}", gbytes, num(sharded(dense_gpu, expert_gpu, 2)),
                           z >= 2 ? fmt::format(" (ZeRO-{} / dp {})", z, dp) : "",
                           fp32_partition > 0 ? fmt::format(" + DeepSpeed fp32 gradient partition 4 B × {} params",
                                                            num(opt_params))
                                              : "");
      };
      f_optim = [=] {
        std::string what = fmt::format("({} master + {:.4g} {} state) B/param × {} params{}", master,
                                       state_per_param, optimizer_name(r.optimizer), num(opt_params),
                                       z >= 1 ? fmt::format(" (ZeRO-{} / dp {})", z, dp) : "");
        if (adafactor_bytes > 0) what += fmt::format(" + factored rows+cols {}", gb(adafactor_bytes));
        return what;
      };
    }
  } else {
    // Frozen base: 16-bit (fp32 when training in fp32) or NF4 for QLoRA linear layers.
    double base_bytes;
    if (qlora) {
      const double nf4 = weight_quant_bits(WeightQuant::nf4, r.qlora_double_quant) / 8.0;
      const double linear = frac * static_cast<double>(P.attention + P.mlp + m.ssm_mixer_params()) / t + kv_rep + expert_gpu;
      const double rest = dense_rep + extra;
      base_bytes = nf4 * linear + 2.0 * rest;
      if (z >= 3) base_bytes = nf4 * ((frac * static_cast<double>(P.attention + P.mlp + m.ssm_mixer_params()) / t + kv_rep) / shard_dense +
                                      expert_gpu / shard_expert) +
                               2.0 * rest / shard_dense;
      if (ex) {
        f_weights = [=] {
          return fmt::format("NF4 {:.4f} B/param × {} linear params + 2 B × {} embedding/norm params{}", nf4,
                             num(linear), num(rest), z >= 3 ? fmt::format(" (ZeRO-3 / dp {})", dp) : "");
        };
      }
    } else {
      const double wb = fp32 ? 4.0 : 2.0;
      base_bytes = wb * params_gpu;
      if (ex) {
        f_weights = [=] {
          return fmt::format("frozen base {} B/param × {} params on this GPU{}", wb, num(params_gpu),
                             z >= 3 ? fmt::format(" (ZeRO-3 / dp {})", dp) : "");
        };
      }
    }
    weights_gpu_bytes = base_bytes;
    // Adapters: r·(d_in + d_out) per targeted matrix [LoRA].
    const double rank = r.lora_rank;
    const LinearSum ad = sum_linears(ls, s, [&](const Linear& l) {
      return targets(r.lora_targets, l.target) ? rank * (l.d_in + l.d_out) : 0.0;
    });
    const double adapter_params = ad.dense * mp_split + ad.expert * expert_split;
    const double aw = pure ? 2.0 : 4.0;  // PEFT keeps adapters in fp32 (autocast_adapter_dtype)
    double state = 0;
    switch (r.optimizer) {
      case Optimizer::adamw: state = pure ? 4.0 : 8.0; break;
      case Optimizer::adamw_8bit: state = 2.0 + 2.0 * 4.0 / kOptimizer8bitBlockValues; break;
      case Optimizer::sgd_momentum:
      case Optimizer::lion: state = pure ? 2.0 : 4.0; break;
      case Optimizer::adafactor: state = pure ? 2.0 : 4.0; break;  // upper bound: factored state is smaller
    }
    const double ap_w = z >= 3 ? adapter_params / dp : adapter_params;
    const double ap_g = z >= 2 ? adapter_params / dp : adapter_params;
    const double ap_o = z >= 1 ? adapter_params / dp : adapter_params;
    adapter_bytes = aw * ap_w;
    if (r.optimizer_foreach && r.optimizer != Optimizer::adamw_8bit && r.optimizer != Optimizer::adafactor) {
      temp_bytes = aw * ap_o;
      temp_params = ap_o;
    }
    grads_bytes = aw * ap_g;
    optim_bytes = state * ap_o;
    if (ex) {
      f_adapter = [=] {
        return fmt::format("{} B × {} adapter params (rank {}, Σ r·(d_in+d_out) over targeted matrices)", aw,
                           num(ap_w), rank);
      };
      f_grads = [=] { return fmt::format("{} B × {} adapter params (gradients of the adapters only)", aw, num(ap_g)); };
      f_optim = [=] {
        return fmt::format("{} B × {} adapter params ({} state)", state, num(ap_o), optimizer_name(r.optimizer));
      };
    }
  }

  // Offload (ZeRO-Offload / ZeRO-Infinity / FSDP CPUOffload): state moves to host memory.
  double cpu_bytes = 0;
  if (lay.offload_optimizer || lay.offload_params) {
    cpu_bytes += optim_bytes + grads_bytes;
    optim_bytes = 0;
    grads_bytes = 0;
    temp_bytes = 0;
  }
  if (lay.offload_params) {
    cpu_bytes += weights_gpu_bytes;
    weights_gpu_bytes = 0;
  }
  out.cpu_offload_bytes = cpu_bytes;

  // --- Activations (this stage), logits, workspace. ---
  double act_bytes = 0, logits_bytes = 0, workspace_bytes = 0;
  std::function<std::string()> f_act, f_logits, f_ws;
  if (s.decoder) {
    ActivationContext ac;
    ac.profile = r.activation_profile;
    ac.flash = r.flash_attention;
    ac.dropout = r.dropout;
    ac.gated = m.gated_mlp;
    ac.seq = seq;
    ac.norms_per_layer = static_cast<double>(m.norms_per_layer > 0 ? m.norms_per_layer : 2);
    const bool gemma = m.model_type.rfind("gemma", 0) == 0;
    // Megatron's fused norm and torch.compile save the 16-bit norm input (compiled: the fp32 upcast and the
    // normalised values are pointwise, recomputed from it and the saved rstd); eager RMSNorm the fp32 input.
    ac.norm_bytes_per_h = r.activation_profile != ActivationProfile::pytorch_eager || m.norm_bias ? 2.0 : (gemma ? 8.0 : 6.0);
    ac.qk_norm = m.qk_norm;
    ac.python_gelu = r.activation_profile == ActivationProfile::pytorch_eager && m.model_type == "gpt2";
    ac.lora = lora;
    // Megatron keeps the model (adapters included) in bf16 and the fp32 main copy in the
    // optimizer (Float16Module), so an adapter reads the very tensor the frozen layer got.
    ac.adapter_bytes = pure || r.activation_profile == ActivationProfile::megatron ? 2.0 : 4.0;
    ac.targets = &r.lora_targets;
    ac.kv_expanded = r.kv_expanded_for_attention && !s.mla;
    ac.gemm_input_bytes =
        r.activation_profile == ActivationProfile::megatron && prec == TrainPrecision::fp8_mixed ? 1.0 : 2.0;
    const bool sp = lay.sequence_parallel && lay.tp > 1;
    // Megatron-Core recompute_modules in effect (memory.hpp RecomputeModule): the layers are sized
    // without what they discard; the layer being back-propagated holds it again (one_layer below).
    const RecomputeModules modules = effective_recompute_modules(r.recompute, r.recompute_modules);
    const LayerActivation dense_kept = layer_activation(s, false, ac);
    const LayerActivation moe_kept = s.moe ? layer_activation(s, true, ac) : dense_kept;
    ac.modules = modules;
    const LayerActivation dense_l = layer_activation(s, false, ac);
    const LayerActivation moe_l = s.moe ? layer_activation(s, true, ac) : dense_l;
    // The attention scores (without FlashAttention) are dropped when the attention core is recomputed.
    const bool keep_scores = r.recompute == Recompute::none ||
                             (r.recompute == Recompute::selective && !has_module(modules, RecomputeModule::core_attn));
    const double per_tok_dense = stored_per_token(dense_l, t, sp, keep_scores);
    const double per_tok_moe = stored_per_token(moe_l, t, sp, keep_scores);
    const double per_tok_avg = (s.L_dense * per_tok_dense + s.L_moe * per_tok_moe) / s.L;
    const double in_flight = stage_in_flight(lay, st.index);
    const double interleave = (st.first && lay.virtual_stages > 1 && lay.pp > 1)
                                  ? 1.0 + (p - 1.0) / (p * lay.virtual_stages)
                                  : 1.0;
    const double tokens = seq * b;
    double per_layer_token = per_tok_avg;
    double one_layer = 0;
    if (r.recompute == Recompute::full) {
      per_layer_token = 2.0 * s.h / (sp ? t : 1.0);  // layer input checkpoint
      one_layer = std::max(stored_per_token(dense_l, t, sp, true), stored_per_token(moe_l, t, sp, true)) * tokens;
    } else if (r.recompute == Recompute::op_selective && !s.mla) {
      // torchtitan per-op SAC (memory.hpp op_selective_saved_bytes_per_token): kept per token per dense layer.
      // MoE layers: not derived (their experts' mm calls differ): the eager list is kept.
      // Under torch.compile the outputs no backward reads (w2's, its reduce_scatter) are not kept.
      const double op_saved = op_selective_saved_bytes_per_token(
          s.h, s.q_width, s.v_width, s.f, s.o_in_width, s.a, t, sp,
          r.activation_profile == ActivationProfile::pytorch_compiled);
      per_layer_token = (s.L_dense * std::min(op_saved, per_tok_dense) + s.L_moe * per_tok_moe) / s.L;
      // The layer being back-propagated: the recomputed rest of its activations (the saved ones are reused).
      one_layer = std::max(0.0, stored_per_token(dense_l, t, sp, true) - op_saved) * tokens;
    } else if (modules != 0) {
      // The discarded tensors of the layer being back-propagated, rebuilt for its backward.
      one_layer = std::max(stored_per_token(dense_kept, t, sp, keep_scores) - per_tok_dense,
                           s.moe ? stored_per_token(moe_kept, t, sp, keep_scores) - per_tok_moe : 0.0) *
                  tokens;
    }
    double lora_inter = 0;
    if (lora) {
      // x·A (r values per token, adapter dtype) saved for each adapted matrix (per layer, average).
      const LinearSum n = sum_linears(ls, s, [&](const Linear& l) {
        return targets(r.lora_targets, l.target) ? (l.moe_layer && l.count > 1 ? 0.0 : 1.0) : 0.0;
      });
      lora_inter = ac.adapter_bytes * r.lora_rank * n.dense / s.L / t;
      if (r.recompute == Recompute::full) lora_inter = 0;
    }
    double layer_mult = layers_stage * in_flight * interleave;
    if (r.offload_activations && layer_mult > kOffloadedActivationLayers) {
      // Saved tensors stream to the CPU; the GPU keeps the layer in use and the one in transfer.
      out.cpu_offload_bytes +=
          act_scale * (per_layer_token + lora_inter) * tokens * (layer_mult - kOffloadedActivationLayers);
      layer_mult = kOffloadedActivationLayers;
    }
    act_bytes = act_scale * ((per_layer_token + lora_inter) * tokens * layer_mult + one_layer);
    // eager_head_and_loss (memory.hpp): logits per token on this GPU, V/t under loss_parallel, else V.
    const double eager_vocab = r.loss_parallel && t > 1 ? s.V / t : s.V;
    if (st.last) {
      const double ab = fp32 ? 4.0 : 2.0;
      // Megatron: 16-bit logits + fp32 softmax + fp32 grad (2+4+4). Eager PyTorch at the start of backward:
      // returned 16-bit logits + saved fp32 log-softmax + grad of the log-probs + grad of the fp32 logits (2+4+4+4).
      // torch.compile'd loss: the log-softmax is recomputed from the saved input and two per-token reductions, the
      // grad of the log-probs stays inside the fused backward; unchunked its input is the fp32 logits (torchtune
      // upcasts in the model) and their fp32 grad (2+4+4); chunked (upcast inside) one chunk's grad in 16 bits.
      const bool compiled = r.activation_profile == ActivationProfile::pytorch_compiled;
      const double fp32_copies = r.activation_profile == ActivationProfile::pytorch_eager ? 3.0 : 2.0;
      if (r.eager_head_and_loss) {
        // memory.hpp eager_head_and_loss: eager loss on pred.float() (12 B per logit, 16 with loss_parallel,
        // + the 16-bit logits when the loop keeps them), the final norm's fp32 input + normalised values
        // (/t with SP) and the output projection's input (gathered over the sequence under TP).
        const bool vocab_parallel = r.loss_parallel && t > 1;
        const double logits_local = tokens * eager_vocab;
        const double per_logit = (vocab_parallel ? 16.0 : 12.0) + (r.logits_kept_through_backward ? ab : 0.0);
        const double head_saved = tokens * ((4.0 + ab) * s.h / (sp ? t : 1.0) + ab * s.h);
        logits_bytes = logits_local * per_logit + head_saved;
        if (ex) {
          f_logits = [=] {
            return fmt::format("eager loss on the upcast logits: {} tokens × V {}{} × {} B (saved fp32 log-softmax + "
                               "{}{}) + final norm (4 + {}) B × h {}{} + output-projection input {} B × h {} per token",
                               tokens, s.V, vocab_parallel ? fmt::format(" / t {}", t) : std::string(), per_logit,
                               vocab_parallel ? "loss_parallel backward: zeros, exp, sum, product"
                                              : "nll_loss grad + log-softmax grad",
                               r.logits_kept_through_backward ? " + the kept 16-bit logits" : "", ab, s.h,
                               sp ? fmt::format(" / t {}", t) : std::string(), ab, s.h);
          };
        }
      } else if (r.chunked_cross_entropy) {
        const double chunk = std::min(tokens, static_cast<double>(r.cross_entropy_chunk_tokens));
        logits_bytes = tokens * s.V / t * ab + chunk * s.V / t * (compiled ? ab : 4.0 * fp32_copies);
      } else if (compiled && r.logits_upcast_in_loss) {
        // The upcast is inside the compiled loss (memory.hpp): it saves the 16-bit logits, returns a 16-bit grad.
        logits_bytes = tokens * s.V / t * (ab + ab);
      } else {
        logits_bytes = tokens * s.V / t * (ab + 4.0 * fp32_copies);
      }
      if (ex && !r.eager_head_and_loss) {
        f_logits = [=] {
          if (r.chunked_cross_entropy && compiled)
            return fmt::format("s·b·V/t·{} ({} tokens × V {} / t {}) + compiled loss: chunk {} tokens × V/t × {} (its "
                               "grad)", ab, tokens, s.V, t,
                               std::min(tokens, static_cast<double>(r.cross_entropy_chunk_tokens)), ab);
          if (r.chunked_cross_entropy)
            return fmt::format("s·b·V/t·{} ({} tokens × V {} / t {}) + chunk {} tokens × V/t × {}×4", ab, tokens, s.V,
                               t, std::min(tokens, static_cast<double>(r.cross_entropy_chunk_tokens)), fp32_copies);
          if (compiled && r.logits_upcast_in_loss)
            return fmt::format("s·b·V/t·({} + {}) = {} tokens × {} vocab / t {} × {} B (compiled loss upcasting inside: "
                               "16-bit logits + their 16-bit grad)", ab, ab, tokens, s.V, t, ab + ab);
          return fmt::format("s·b·V/t·({} + {}×4) = {} tokens × {} vocab / t {} × {} B", ab, fp32_copies, tokens, s.V, t,
                             ab + 4.0 * fp32_copies);
        };
      }
    }
    // Chunked output (torchtune TransformerDecoder.chunked_output applies the output layer to each of its
    // num_output_chunks chunks, torchtune/modules/transformer.py at 1814feb17): a trained head's weight
    // gradient is the sum of one V×h product per chunk, which autograd sums in the output layer's input
    // buffer (torch/csrc/autograd/input_buffer.cpp at 4537ef6cf, InputBuffer::add / accumulate: the first
    // product kept, each later one added in place, old_var.add_(var)), so the buffer and the incoming
    // chunk's product (2 copies) exist at the start of backward, beside the logits. With optimizer_in_backward one of them is already the gradient term;
    // under ZeRO-3/FSDP they are part of the head unit (workspace, below).
    const bool head_trained = st.last && !lora && (P.head > 0 || m.tied_embeddings);
    const bool gathered = z >= 3 || lay.offload_params;
    const bool chunked_output = r.chunked_cross_entropy && !r.eager_head_and_loss;  // eager_head_and_loss: unchunked
    const double head_grad_copies = head_trained ? (chunked_output ? 2.0 : 1.0) : 0.0;
    const double head_grad_bytes = ((fp32 || r.fp32_grad_accumulation) ? 4.0 : 2.0) * s.V * s.h / t;
    double output_grad_bytes = 0;  // in the logits term: the moment is the loss's backward
    if (head_trained && chunked_output && !gathered) {
      output_grad_bytes = (head_grad_copies - (r.optimizer_in_backward ? 1.0 : 0.0)) * head_grad_bytes;
      logits_bytes += output_grad_bytes;
    }
    // Workspace: gathered layer weights under ZeRO-3 / param offload (FSDP prefetch: current + next
    // layer, plus the unsharded gradients of one layer); QLoRA dequantises one matrix at a time.
    const double layer_params = static_cast<double>(P.attention + P.mlp + m.ssm_mixer_params() + P.norms + P.router) / s.L / t +
                                (s.L_moe > 0 ? static_cast<double>(P.experts) / s.L_moe / (lay.etp() * ep) : 0.0);
    const double gather_bytes = qlora ? weight_quant_bits(WeightQuant::nf4, r.qlora_double_quant) / 8.0
                                      : (fp32 ? 4.0 : 2.0);
    // The stage holding the output layer starts its backward in that layer (FSDP2 fully_shard in
    // torchtune shards `output` as its own unit: custom_sharded_layers, torchtune/training/_distributed.py
    // shard_model, 30b8519e8): the head gathered + its unsharded gradient copies (trained head, above) +
    // the last decoder layer prefetched for backward, beside the logits. A head larger than a layer
    // (large vocabularies) makes this the workspace of the start of backward.
    double layers_ws = 0, head_unit_bytes = 0;
    if (gathered) {
      layers_ws = (lora ? 2.0 : 3.0) * gather_bytes * layer_params;
      if (st.last && (P.head > 0 || m.tied_embeddings)) {
        const double head_bytes = (fp32 ? 4.0 : 2.0) * s.V * s.h / t;
        head_unit_bytes = head_bytes * (1.0 + head_grad_copies) + gather_bytes * layer_params;
      }
    }
    double dequant_bytes = 0;
    if (qlora) {
      double biggest = 0;
      for (const auto& l : ls) biggest = std::max(biggest, l.d_in * l.d_out);
      dequant_bytes = 2.0 * biggest / t;
    }
    // Two moments of the backward on the stage that computes the loss. (A) its start: the loss's and the
    // output layer's backward (logits term, head unit). (B) the last decoder layer's backward (layer
    // prefetch; with full recompute, that layer's activations rebuilt: torch.utils.checkpoint recomputes
    // a layer when its backward unpacks the saved inputs, torch/utils/checkpoint.py, by which time the
    // loss's saved logits and their gradients are freed; only logits the training loop still holds
    // remain). Without full recompute every saved activation exists at (A) and the larger workspace is
    // taken.
    double ws_a = std::max(layers_ws, head_unit_bytes);
    bool recompute_after_loss = false, recompute_is_peak = false;
    double kept_logits_bytes = 0;
    if (r.recompute == Recompute::full && st.last && logits_bytes > 0) {
      recompute_after_loss = true;
      ws_a = head_unit_bytes > 0 ? head_unit_bytes : layers_ws;
      kept_logits_bytes = !r.logits_kept_through_backward ? 0.0
                          : r.eager_head_and_loss ? tokens * eager_vocab * (fp32 ? 4.0 : 2.0)
                                                  : tokens * s.V / t * (fp32 ? 4.0 : 2.0);
      if (logits_bytes + ws_a >= act_scale * one_layer + kept_logits_bytes + layers_ws) {
        act_bytes = act_scale * ((per_layer_token + lora_inter) * tokens * layer_mult);
      } else {
        recompute_is_peak = true;
        logits_bytes = kept_logits_bytes;
        output_grad_bytes = 0;
        ws_a = layers_ws;
      }
    }
    workspace_bytes = ws_a + dequant_bytes;
    const bool head_unit_in_ws = head_unit_bytes > 0 && ws_a == head_unit_bytes && head_unit_bytes > layers_ws;
    if (ex) {
      if (recompute_is_peak) {
        f_logits = [=] {
          return kept_logits_bytes > 0
                     ? fmt::format("at the last layer's recompute, logits kept by the training loop: s·b·V/t·{} ({} "
                                   "tokens × V {} / t {})",
                                   fp32 ? 4 : 2, tokens, s.V, t)
                     : std::string("at the last layer's recompute, logits kept by the training loop: none");
        };
      } else if (output_grad_bytes > 0) {
        f_logits = [=, base = f_logits] {
          return fmt::format("{} + output-layer gradient in the chunked output's backward: {} × V {} × h {} / t {} × {} B",
                             base ? base() : std::string(), output_grad_bytes / head_grad_bytes, s.V, s.h, t,
                             (fp32 || r.fp32_grad_accumulation) ? 4 : 2);
        };
      }
      f_ws = [=] {
        std::string w;
        if (gathered) {
          if (head_unit_in_ws)
            w += fmt::format("ZeRO-3/FSDP gather at the start of backward: output layer V {} × h {} / t {} × {} B × "
                             "(1 + {} gradient) + 1 layer × {} params × {:.3g} B",
                             s.V, s.h, t, fp32 ? 4 : 2, head_grad_copies, num(layer_params), gather_bytes);
          else
            w += fmt::format("ZeRO-3/FSDP gather: {} layers × {} params/layer/GPU × {:.3g} B", lora ? 2 : 3,
                             num(layer_params), gather_bytes);
        }
        if (qlora) w += (w.empty() ? "" : " + ") + std::string("QLoRA dequantised matrix (bf16, largest linear)");
        return w;
      };
    }
    if (ex) {
      f_act = [=] {
        std::string base = fmt::format(
            "per layer per token R={} B{} + T={} B/t{} (h {}, a {}, kv {}, head_dim {}, mlp {}{}); stored {:.1f} B; × s·b "
            "= {}·{} tokens × {} layers on the stage × {} micro-batches in flight{}",
            num(dense_l.replicated), sp ? "/t" : "", num(dense_l.split), keep_scores && dense_l.scores > 0
                ? fmt::format(" + S=a·s·{}={} B/t", r.dropout ? 5 : 2, num(dense_l.scores)) : "",
            s.h, s.a, s.kv, s.d, s.f, s.moe ? fmt::format(", MoE top-{} of {} × {}", s.k, s.E, s.f_e) : "",
            per_tok_avg, seq, b, layers_stage, in_flight,
            interleave > 1 ? fmt::format(" × interleave (1+(p−1)/(p·v)) {:.4f}", interleave) : "");
        if (r.recompute == Recompute::full) {
          base = fmt::format("full recompute: 2h{} = {} B per token per layer × {} tokens × {} layers × {} in flight "
                             "+ one layer recomputed {}{}",
                             sp ? "/t" : "", num(per_layer_token), seq * b, layers_stage, in_flight * interleave,
                             gb(one_layer),
                             recompute_after_loss && !recompute_is_peak
                                 ? " (not at the peak: rebuilt after the loss's backward freed the logits)"
                                 : "");
        }
        if (r.recompute == Recompute::op_selective && !s.mla) {
          base = fmt::format("per-op selective recompute (torchtitan _save_list{}): {} B per token per layer (layer input "
                             "2h{}, wq/wv/w1/SDPA outputs + logsumexp{}{}) × {} tokens × {} layers × {} in flight + "
                             "one layer recomputed {}",
                             r.activation_profile == ActivationProfile::pytorch_compiled
                                 ? ", compiled: w2's output not kept" : "",
                             num(per_layer_token), sp ? "/t" : "", t > 1 ? "/t" : "",
                             r.activation_profile == ActivationProfile::pytorch_compiled ? "" : ", w2 output 2h",
                             seq * b, layers_stage, in_flight * interleave, gb(one_layer));
        }
        if (r.recompute == Recompute::selective && r.recompute_modules != 0) {
          std::string kept;
          if (s.L_moe > 0)
            kept += fmt::format("MoE layer {} B/t kept of {}", num(per_tok_moe), num(stored_per_token(moe_kept, t, sp, keep_scores)));
          if (s.L_dense > 0)
            kept += fmt::format("{}{} layer {} B/t kept of {}", kept.empty() ? "" : ", ", s.L_moe > 0 ? "dense" : "each",
                                num(per_tok_dense), num(stored_per_token(dense_kept, t, sp, keep_scores)));
          base += fmt::format(" (recompute_modules {}: {}) + one layer recomputed {}", recompute_modules_name(modules),
                              kept, gb(one_layer));
        }
        if (lora_inter > 0) base += fmt::format(" + LoRA x·A {} B/token/layer", num(lora_inter));
        if (act_scale > 1) base += " × 2 (fp32)";
        return base;
      };
    }
  } else {
    out.warnings.push_back(fmt::format("activation memory of {} models is not modelled; only weights, gradients and "
                                       "optimizer state are counted",
                                       m.model_type.empty() ? "non-decoder" : m.model_type));
  }

  // Phases of a step (each phase's terms add up): forward/backward holds the activations (and the
  // gradients when they persist); the optimizer step holds all gradients and a foreach temporary.
  const double fwd_phase = weights_gpu_bytes + adapter_bytes + optim_bytes + act_bytes + logits_bytes +
                           workspace_bytes + (r.gradients_persist || r.optimizer_in_backward ? grads_bytes : 0.0);
  const double step_phase = weights_gpu_bytes + adapter_bytes + optim_bytes + grads_bytes + temp_bytes;
  const bool step_peak = step_phase > fwd_phase;
  out.phase = step_peak ? "optimizer step" : "forward/backward";

  add_term(out, ex, "weights", weights_gpu_bytes, qlora ? kSrcQlora : kSrcZero,
           f_weights ? f_weights : [] { return std::string("offloaded to CPU"); }, true);
  if (lora) add_term(out, ex, "lora_adapters", adapter_bytes, kSrcLora, f_adapter);
  if (step_peak || r.gradients_persist || r.optimizer_in_backward) add_term(out, ex, "gradients", grads_bytes, kSrcZero, f_grads);
  add_term(out, ex, "optimizer_state", optim_bytes, r.optimizer == Optimizer::adamw_8bit
           ? "Dettmers et al. 2021 (arXiv:2110.02861) §2; master weights ZeRO §3.1" : kSrcZero, f_optim);
  if (step_peak) {
    add_term(out, ex, "optimizer_step_temp", temp_bytes,
             "torch.optim foreach step: one parameter-sized temporary (measured, gpuplan’s H200 measurements)",
             [=] { return fmt::format("one optimizer-dtype copy of the {} trained params on this GPU", num(temp_params)); });
  } else {
    add_term(out, ex, "activations", act_bytes, kSrcKorth, f_act);
    add_term(out, ex, "logits", logits_bytes, kSrcLogits, f_logits);
    add_term(out, ex, "workspace", workspace_bytes, "FSDP/ZeRO-3 prefetch of gathered layers; QLoRA dequant buffer",
             f_ws);
  }
  // Allocator slack grows with the tensors allocated and freed every step, not with the model states.
  const double dynamic = step_peak ? temp_bytes : act_bytes + logits_bytes + workspace_bytes;
  const double frag = r.fragmentation_fraction * dynamic;
  add_term(out, ex, "fragmentation", frag, kSrcFrag, [&] {
    return fmt::format("{} × {} of per-step allocations ({})", r.fragmentation_fraction, gb(dynamic),
                       step_peak ? "optimizer temporary" : "activations + logits + workspace");
  });
  add_term(out, ex, "cuda_context", r.cuda_context_bytes, kSrcCtx, [] { return std::string("per-GPU constant"); });

  // Warnings.
  if (lay.zero_stage > 0 && lay.dp == 1) {
    out.warnings.push_back(fmt::format("ZeRO-{} with dp = 1 shards nothing", lay.zero_stage));
  }
  if (s.decoder && !s.mla && lay.tp > m.num_kv_heads && m.num_kv_heads > 0) {
    out.warnings.push_back(fmt::format("tp {} > {} KV heads: KV projections are replicated", lay.tp, m.num_kv_heads));
  }
  if (s.decoder && lay.pp > 1 && m.num_layers % lay.pp != 0 && !has_stage_layers(r)) {
    out.warnings.push_back(fmt::format("{} layers do not split evenly over pp {}; counted {} layers per stage",
                                       m.num_layers, lay.pp, layers_stage));
  }
  if (s.decoder && m.ssm) {
    out.warnings.push_back(hybrid_activations_note(m));
  }
  if (prec == TrainPrecision::fp8_mixed && r.activation_profile != ActivationProfile::megatron) {
    out.warnings.push_back("fp8: activations counted in 16 bits (Transformer Engine saves some in fp8)");
  }
  if (m.max_position_embeddings > 0 && r.seq_len > m.max_position_embeddings) {
    out.warnings.push_back(
        m.position_encoding == PositionEncoding::learned
            ? fmt::format("sequence length {} exceeds the model's {} learned positions (max_position_embeddings): it "
                          "does not run without a longer position table",
                          r.seq_len, m.max_position_embeddings)
            : fmt::format("sequence length {} exceeds the model's max_position_embeddings {}: it needs "
                          "RoPE scaling or long-context training to make sense",
                          r.seq_len, m.max_position_embeddings));
  }
  if (lay.pp > 1) {
    out.stage = fmt::format("pipeline stage {} of {}{}", st.index + 1, lay.pp,
                            st.first ? " (first)" : st.last ? " (last)" : "");
  }
  return out;
}

StageInfo worst_training_stage(const ModelArch& m, const TrainingMemoryRequest& r, MemoryBreakdown* first_out) {
  MemoryBreakdown first = training_stage(m, r, StageInfo{0, true, r.layout.pp == 1}, nullptr);
  StageInfo chosen{0, true, r.layout.pp == 1};
  // With --pp-layers every rank is sized (a middle rank may hold the most layers); else the
  // middle ranks hold as many layers as the first and fewer micro-batches.
  const int from = has_stage_layers(r) ? 1 : r.layout.pp - 1;
  for (int i = from; i < r.layout.pp && r.layout.pp > 1; ++i) {
    StageInfo info{i, false, i == r.layout.pp - 1};
    MemoryBreakdown other = training_stage(m, r, info, nullptr);
    if (other.total_bytes() > first.total_bytes()) {
      chosen = info;
      first = std::move(other);
    }
  }
  if (first_out) *first_out = std::move(first);
  return chosen;
}

}  // namespace

double MemoryBreakdown::total_bytes() const {
  double sum = 0;
  for (const auto& t : terms) sum += t.bytes;
  return sum;
}

double MemoryBreakdown::term_bytes(std::string_view name) const {
  for (const auto& t : terms) {
    if (t.name == name) return t.bytes;
  }
  return 0;
}

namespace {
void check_range(std::int64_t v, std::int64_t lo, std::int64_t hi, const char* flag, const char* what) {
  if (v < lo || v > hi) {
    throw_invalid_coded(flag, "integer_out_of_range", {{"value", std::to_string(v)}, {"min", std::to_string(lo)}, {"max", std::to_string(hi)}},
                        fmt::format("{} {} is out of range", what, v), fmt::format("an integer in [{}, {}]", lo, hi));
  }
}
}  // namespace

double op_selective_saved_bytes_per_token(double h, double q_width, double v_width, double f, double o_in_width,
                                          double heads, double tp, bool sequence_parallel, bool compiled) {
  const double t = std::max(tp, 1.0);
  const bool sp = sequence_parallel && t > 1;
  const double input = 2.0 * h / (sp ? t : 1.0);
  const double column_parallel = (2.0 * q_width + 2.0 * v_width + 2.0 * f + 2.0 * o_in_width + 4.0 * heads) / t;
  // Eager: w2's mm output (full width) + the reduce_scatter outputs of wo and w2. Compiled: wo's only.
  const double w2_output = compiled ? 0.0 : 2.0 * h;
  const double reduce_scatters = t > 1 ? (compiled ? 1.0 : 2.0) * 2.0 * h / t : 0.0;
  return input + column_parallel + w2_output + reduce_scatters;
}

void TrainingMemoryRequest::validate() const {
  if (task == Task::serve)
    throw_invalid_coded("--task", "serve_not_training", {}, "serve is not a training task", "pretrain, full, lora or qlora");
  check_range(seq_len, 1, kMaxTrainingSeqLenTokens, "--seq", "sequence length");
  check_range(layout.tp, 1, kMaxParallelDegree, "--tp", "tensor-parallel degree");
  check_range(layout.pp, 1, kMaxParallelDegree, "--pp", "pipeline-parallel degree");
  check_range(layout.dp, 1, kMaxDataParallel, "--dp", "data-parallel degree");
  check_range(layout.ep, 1, kMaxParallelDegree, "--ep", "expert-parallel degree");
  check_range(layout.zero_stage, 0, 3, "--zero", "ZeRO stage");
  check_range(layout.micro_batch, 1, kMaxMicroBatchSeqs, "--micro-batch", "micro-batch");
  check_range(layout.in_flight_micro_batches, 0, 1'000'000, "--in-flight", "in-flight micro-batches");
  check_range(layout.virtual_stages, 1, kMaxParallelDegree, "--virtual-stages", "virtual pipeline stages");
  check_range(cross_entropy_chunk_tokens, 1, 1'000'000'000, "--ce-chunk", "cross-entropy chunk");
  check_range(layout.expert_tp, 0, kMaxParallelDegree, "--expert-tp", "expert tensor-parallel degree");
  if (!layout.expert_grid_divides()) {
    const std::string expected = "etp × ep dividing tp × dp (experts are sharded within a stage's GPUs; etp defaults to tp)";
    if (layout.expert_tp > 0)
      throw_invalid_coded("--ep", "expert_grid_not_dividing",
                          {{"etp", fmt::format("{}", layout.etp())}, {"ep", fmt::format("{}", layout.ep)},
                           {"tp", fmt::format("{}", layout.tp)}, {"dp", fmt::format("{}", layout.dp)}},
                          fmt::format("expert tp {} × ep {} does not divide tp {} × dp {}", layout.etp(), layout.ep,
                                      layout.tp, layout.dp),
                          expected);
    const bool etp1_fits = ParallelLayout::expert_tp_one_divides(layout.tp, layout.dp, layout.ep);
    throw_invalid_coded("--ep", "ep_not_dividing_dp", {{"ep", fmt::format("{}", layout.ep)}, {"dp", fmt::format("{}", layout.dp)}},
                        fmt::format("ep {} does not divide dp {}", layout.ep, layout.dp),
                        etp1_fits ? fmt::format("ep dividing dp, or --expert-tp 1, with which the EP group spans the TP ranks "
                                                "and ep {} divides tp {} × dp {}",
                                                layout.ep, layout.tp, layout.dp)
                                  : expected);
  }
  if (static_cast<double>(seq_len) * layout.micro_batch > 1e9) {
    throw_invalid_coded("--seq", "seq_micro_batch_too_large",
                        {{"seq", fmt::format("{}", seq_len)}, {"micro_batch", fmt::format("{}", layout.micro_batch)}, {"max", "1e9"}},
                        "sequence length × micro-batch exceeds 1e9 tokens", "a realistic micro-batch");
  }
  if (layout.offload_params && layout.zero_stage != 3) {
    throw_invalid_coded("--offload", "offload_params_needs_zero3", {}, "parameter offload needs ZeRO-3 / FSDP full shard",
                        "--zero 3 with parameter offload");
  }
  // fp8_mixed is not 16 bits either: QLoRA (Dettmers et al. 2023) dequantizes the NF4 base to a
  // 16-bit compute dtype; a trial's `--task qlora --precision fp8` was priced 1.66× faster.
  if (task == Task::qlora && precision != TrainPrecision::bf16_mixed && precision != TrainPrecision::bf16_pure &&
      precision != TrainPrecision::fp16_mixed) {
    throw_invalid_coded("--precision", "qlora_needs_16_bit", {{"precision", std::string(train_precision_name(precision))}},
                        fmt::format("QLoRA with {} precision: QLoRA computes in 16 bits", train_precision_name(precision)),
                        "bf16_mixed, bf16_pure or fp16_mixed");
  }
  if (task == Task::lora || task == Task::qlora) {
    check_range(lora_rank, 1, kMaxLoraRank, "--lora-rank", "LoRA rank");
    if (lora_targets.empty())
      throw_invalid_coded("--lora-targets", "lora_targets_missing", {}, "no LoRA target", "q,k,v,o,gate,up,down or all-linear");
    for (const auto& tname : lora_targets) {
      static const char* kOk[] = {"q", "k", "v", "o", "gate", "up", "down", "all-linear", "all_linear"};
      if (std::none_of(std::begin(kOk), std::end(kOk), [&](const char* k) { return tname == k; })) {
        throw_invalid_coded("--lora-targets", "unknown_choice", {{"value", tname}, {"allowed", "q, k, v, o, gate, up, down, all-linear"}},
                            fmt::format("unknown LoRA target '{}'", tname), "q, k, v, o, gate, up, down or all-linear");
      }
    }
  }
  if (!(cuda_context_bytes >= 0 && cuda_context_bytes < 1e12)) {
    throw_invalid("--cuda-context", "CUDA context bytes out of range", "0 to 1e12 bytes");
  }
  if (!(fragmentation_fraction >= 0 && fragmentation_fraction < 1)) {
    throw_invalid("--fragmentation", "fragmentation fraction out of range", "a fraction in [0, 1)");
  }
}

void ServingMemoryRequest::validate() const {
  check_range(context_tokens, 1, 100'000'000, "--context", "context length");
  check_range(concurrency, 1, 1'000'000, "--concurrency", "concurrency");
  check_range(tp, 1, 1024, "--tp", "tensor-parallel degree");
  check_range(pp, 1, 1024, "--pp", "pipeline-parallel degree");
  check_range(prefill_chunk_tokens, 1, 100'000'000, "--prefill-chunk", "prefill chunk");
  if (static_cast<double>(context_tokens) * static_cast<double>(concurrency) > 1e11) {
    throw_invalid_coded("--concurrency", "kv_tokens_too_large", {{"max", "1e11"}}, "context × concurrency exceeds 1e11 tokens",
                        "a realistic KV cache");
  }
  if (!(cuda_context_bytes >= 0 && cuda_context_bytes < 1e12)) {
    throw_invalid("--cuda-context", "CUDA context bytes out of range", "0 to 1e12 bytes");
  }
  if (!(fragmentation_fraction >= 0 && fragmentation_fraction < 1)) {
    throw_invalid("--fragmentation", "fragmentation fraction out of range", "a fraction in [0, 1)");
  }
}

/// LoRA / QLoRA are sized for decoders: an encoder's or encoder-decoder's adapters, their gradients and optimizer
/// state are not modelled, so the request is refused rather than answered with the frozen weights alone (trial61 #6).
std::string hybrid_activations_note(const ModelArch& m) {
  return fmt::format("hybrid {}: the activations of each of its {} blocks are counted as one transformer layer's "
                     "(attention + MLP), whatever its mixer (SSM, attention or MLP): an approximation, not a per-block "
                     "model",
                     m.model_type, m.num_layers);
}

namespace {

void validate_adapter_family(const ModelArch& arch, Task task, const std::vector<std::string>& targets) {
  if (task != Task::lora && task != Task::qlora) return;
  if (arch.family == ModelFamily::encoder || arch.family == ModelFamily::encoder_decoder)
    throw_invalid_coded("--task", "adapters_not_modelled", {{"family", std::string(family_name(arch.family))}, {"model", arch.name}},
                        fmt::format("{} on {} ({}): LoRA sizing covers decoder LLMs only", task_name(task), arch.name,
                                    family_name(arch.family)),
                        "--task full for this model, or a decoder model");
  // Targets that name no matrix of the model train nothing (trial62 #3: gate on a model without a gate was sized
  // with 0 adapters, silently).
  const LayerGeometry& g = arch.geometry;
  if (g.num_layers == arch.num_layers && !g.linears.empty() && g.lora_params(1, targets) == 0) {
    std::vector<std::string> names;
    for (const auto& l : g.linears)
      if (!l.lora_target.empty() && std::find(names.begin(), names.end(), l.lora_target) == names.end())
        names.push_back(l.lora_target);
    const std::string list = fmt::format("{}", fmt::join(names, ", "));
    throw_invalid_coded("--lora-targets", "lora_targets_absent",
                        {{"targets", fmt::format("{}", fmt::join(targets, ","))}, {"model", arch.name}, {"allowed", list}},
                        fmt::format("{}: no matrix of {} is named by them, so nothing would train",
                                    fmt::join(targets, ","), arch.name),
                        fmt::format("one or more of {} (or all-linear)", list));
  }
}

}  // namespace

MemoryBreakdown training_memory(const ModelArch& arch, const TrainingMemoryRequest& req) {
  req.validate();
  validate_against_model(arch, shape_of(arch), req.layout.tp, req.layout.pp, req.layout.ep, "--tp");
  validate_adapter_family(arch, req.task, req.lora_targets);
  // An adapter B·A of rank r on a d_in × d_out matrix has rank at most min(d_in, d_out): a rank
  // above that side on every adapted matrix adds parameters and no capacity (trial56 #10: rank
  // 65536 on a 4096-wide model was planned on 32 MI300X). The bound is the largest smaller side
  // among the targets (model/geometry.hpp): llama-3.1-8b 4096 (q, o, MLP), 1024 for k,v alone.
  if ((req.task == Task::lora || req.task == Task::qlora) && req.lora_rank > 64) {
    const std::int64_t bound = arch.geometry.max_lora_rank(req.lora_targets);
    if (bound > 0 && static_cast<std::int64_t>(req.lora_rank) > bound) {
      throw_invalid_coded("--lora-rank", "too_large",
                          {{"value", fmt::format("{}", req.lora_rank)}, {"max", fmt::format("{}", bound)}},
                          fmt::format("LoRA rank {} is above the smaller side of every matrix it adapts in {} (at most "
                                      "{}): an adapter's rank is at most that side",
                                      req.lora_rank, arch.name, bound),
                          fmt::format("at most {}", bound));
    }
  }
  MemoryBreakdown out;
  worst_training_stage(arch, req, &out);
  return out;
}

std::vector<TermExplanation> explain_training_memory(const ModelArch& arch, const TrainingMemoryRequest& req) {
  req.validate();
  validate_against_model(arch, shape_of(arch), req.layout.tp, req.layout.pp, req.layout.ep, "--tp");
  validate_adapter_family(arch, req.task, req.lora_targets);
  const StageInfo st = worst_training_stage(arch, req, nullptr);
  Explain ex;
  training_stage(arch, req, st, &ex);
  return ex;
}

// ---------------------------------------------------------------------------------------------
// Serving
// ---------------------------------------------------------------------------------------------

namespace {

MemoryBreakdown serving_stage(const ModelArch& m, const ServingMemoryRequest& r, const StageInfo& st, Explain* ex) {
  const Shape s = shape_of(m);
  const ParamBreakdown& P = m.params;
  const double t = r.tp, p = r.pp;
  MemoryBreakdown out;
  const double qbits = weight_quant_bits(r.quant, true);
  const bool gguf = r.quant == WeightQuant::gguf_q4_k_m || r.quant == WeightQuant::gguf_q8_0 ||
                    r.quant == WeightQuant::gguf_q4_0 || r.quant == WeightQuant::gguf_q2_k;
  const double qb = qbits / 8.0;
  const double eb = gguf ? qb : 2.0;  // embeddings / head / norms: 16-bit except in GGUF files

  double weights = 0, kv = 0, ws = 0;
  std::function<std::string()> f_w, f_kv, f_ws;
  if (s.decoder) {
    const double layers_stage = std::ceil(s.L / p);
    const double frac = layers_stage / s.L;
    const double linear = frac * static_cast<double>(P.attention + P.mlp + P.experts + m.ssm_mixer_params()) / t +
                          kv_replicated_params(m, s, t, layers_stage);
    const double rest = frac * static_cast<double>(P.norms + P.router);
    double extra = 0;
    if (st.first) extra += static_cast<double>(P.embeddings) / t + static_cast<double>(P.other - m.ssm_mixer_params());
    if (st.last) {
      if (P.head > 0) extra += static_cast<double>(P.head) / t;
      else if (m.tied_embeddings && !st.first) extra += s.V * s.h / t;
    }
    weights = qb * linear + eb * (rest + extra);
    if (ex) {
      f_w = [=] {
        return fmt::format("{} ({:.4g} bits) × {} linear params/GPU + {} B × {} embedding/head/norm params/GPU (TP {}, "
                           "{} of {} layers)",
                           weight_quant_name(r.quant), qbits, num(linear), eb, num(rest + extra), t, layers_stage, s.L);
      };
    }
    // KV cache [KV]: per layer per token; sliding-window layers hold min(context, window) tokens.
    const double kvb = kv_dtype_bytes(r.kv_dtype);
    const double ctx = static_cast<double>(r.context_tokens);
    const double conc = static_cast<double>(r.concurrency);
    double per_token_layer;
    if (s.mla) {
      per_token_layer = static_cast<double>(m.mla->kv_lora_rank + m.mla->qk_rope_head_dim) * kvb;  // replicated over TP
    } else {
      per_token_layer = 2.0 * std::ceil(s.kv / t) * s.d * kvb;
    }
    // The layers that hold a KV cache (the geometry's kv_cache_layers): every attention layer, but a hybrid's
    // attention blocks only and not gemma-3n's last num_kv_shared_layers, which read an earlier layer's cache; the
    // stage holds its share of them.
    const double kv_layers = m.geometry.num_layers == m.num_layers ? static_cast<double>(m.geometry.kv_cache_layers) : s.L;
    const double kv_sw = m.sliding_window ? static_cast<double>(m.sliding_window_layers_among_first(
                                                static_cast<std::int64_t>(kv_layers)))
                                          : 0.0;
    const double sw_tokens = m.sliding_window ? std::min(ctx, static_cast<double>(*m.sliding_window)) : ctx;
    const double layers_sw = layers_stage / s.L * kv_sw, layers_full = layers_stage / s.L * (kv_layers - kv_sw);
    kv = per_token_layer * conc * (layers_full * ctx + layers_sw * sw_tokens);
    if (ex) {
      f_kv = [=] {
        std::string per = s.mla ? fmt::format("(kv_lora_rank + qk_rope_head_dim) {} × {} B (MLA latent, same on every TP rank)",
                                              m.mla->kv_lora_rank + m.mla->qk_rope_head_dim, kvb)
                                : fmt::format("2 × ceil(kv_heads {} / tp {}) × head_dim {} × {} B", s.kv, t, s.d, kvb);
        std::string sw = layers_sw > 0 ? fmt::format(" + {} sliding-window layers × {} tokens", layers_sw, sw_tokens) : "";
        return fmt::format("{} per token per layer × concurrency {} × ({} layers × {} tokens{})", per, conc,
                           layers_full, ctx, sw);
      };
    }
    if (m.ssm) {
      // Mamba recurrent state per sequence and SSM block: conv (d_inner × d_conv) + SSM (d_inner × d_state), 16-bit;
      // a hybrid (Jamba, Nemotron-H) keeps the KV cache of its attention blocks beside it.
      const double inner = static_cast<double>(m.ssm->expand) * s.h;
      const double conv = m.ssm->conv_channels > 0 ? static_cast<double>(m.ssm->conv_channels) : inner;
      // The SSM blocks from the model's geometry (Nemotron-H also has MLP-only blocks, holding neither); the KV cache
      // above already counts the attention blocks only (kv_cache_layers).
      const double ssm_layers = layers_stage / s.L * static_cast<double>(m.geometry.ssm_layers);
      const double attention_layers = layers_stage / s.L * kv_layers;
      const double ssm_state = ssm_layers * conc * 2.0 * m.ssm_state_elements_per_layer() / t;
      kv += ssm_state;
      if (ex) {
        f_kv = [=] {
          return fmt::format("SSM state 2 B × (conv {} × d_conv {} + d_inner {} × d_state {}) / tp {} × concurrency {} × "
                             "{:.4g} SSM layers{}",
                             conv, m.ssm->conv_kernel, inner, m.ssm->state_size, t, conc, ssm_layers,
                             attention_layers > 0 ? fmt::format(" + KV cache of {:.4g} attention layers × {} tokens",
                                                                attention_layers, ctx)
                                                  : std::string());
        };
      }
    }
    // Workspace: one prefill chunk's intermediate tensors + the last-token logits of every sequence.
    const double c = std::min(static_cast<double>(r.prefill_chunk_tokens), ctx * conc);
    const double attn = 2.0 * (s.q_width + 2.0 * (s.mla ? s.k_width : std::ceil(s.kv / t) * s.d * t) + s.o_in_width) / t;
    const double mlp = s.moe ? 2.0 * 3.0 * (s.k * s.f_e + s.shared_width) / t + 2.0 * 2.0 * s.k * s.h
                             : 2.0 * (m.gated_mlp ? 3.0 : (m.model_type == "gpt2" ? 5.0 : 2.0)) * s.f / t;
    const double per_tok = 2.0 * 2.0 * s.h + std::max(attn, mlp);
    ws = c * per_tok + (st.last ? conc * s.V * (2.0 + 4.0 + 4.0) : 0.0);
    if (ex) {
      f_ws = [=] {
        return fmt::format("prefill chunk {} tokens × {} B/token (residual + max(attention, MLP) intermediates) + "
                           "concurrency {} × vocab {} × (2+4+4) B logits/probabilities",
                           c, num(per_tok), conc, s.V);
      };
    }
  } else {
    weights = qb * static_cast<double>(P.total()) / t;
    if (ex) f_w = [=] { return fmt::format("{:.4g} bits × {} params / tp {}", qbits, num(static_cast<double>(P.total())), t); };
    out.warnings.push_back(m.family == ModelFamily::encoder_decoder
                               ? "activation memory of non-decoder models is not modelled; weights only (the decoder's "
                                 "self- and cross-attention KV caches are not counted either)"
                               : "activation memory of non-decoder models is not modelled; weights only");
  }
  add_term(out, ex, "weights", weights, r.quant == WeightQuant::nf4 ? kSrcQlora
           : "weight bits per format: gpuplan memory model [GPTQ]/[GGUF]", f_w, true);
  add_term(out, ex, "kv_cache", kv, kSrcKv, f_kv);
  add_term(out, ex, "workspace", ws, "activations of one prefill chunk (vLLM chunked prefill) + sampler logits", f_ws);
  // The KV cache is allocated in fixed blocks (PagedAttention, Kwon et al. 2023, arXiv:2309.06180 §4: under
  // 4% waste), so the slack applies to the per-step workspace only.
  const double frag = r.fragmentation_fraction * ws;
  add_term(out, ex, "fragmentation", frag, kSrcFrag,
           [&] { return fmt::format("{} × {} of workspace", r.fragmentation_fraction, gb(ws)); });
  add_term(out, ex, "cuda_context", r.cuda_context_bytes, kSrcCtx, [] { return std::string("per-GPU constant"); });
  if (s.decoder && !s.mla && r.tp > m.num_kv_heads && m.num_kv_heads > 0) {
    out.warnings.push_back(fmt::format("tp {} > {} KV heads: KV heads are replicated across TP ranks", r.tp,
                                       m.num_kv_heads));
  }
  if (s.mla && r.tp > 1) out.warnings.push_back("MLA latent KV cache is not split by TP (each rank holds all of it)");
  if (m.max_position_embeddings > 0 && r.context_tokens > m.max_position_embeddings) {
    out.warnings.push_back(fmt::format("context {} exceeds the model's max_position_embeddings {}: the model was not "
                                       "trained for it (RoPE scaling needed)",
                                       r.context_tokens, m.max_position_embeddings));
  }
  if (r.pp > 1) out.stage = fmt::format("pipeline stage {} of {}", st.index + 1, r.pp);
  return out;
}

StageInfo worst_serving_stage(const ModelArch& m, const ServingMemoryRequest& r, MemoryBreakdown* out) {
  MemoryBreakdown first = serving_stage(m, r, StageInfo{0, true, r.pp == 1}, nullptr);
  StageInfo chosen{0, true, r.pp == 1};
  if (r.pp > 1) {
    StageInfo last_info{r.pp - 1, false, true};
    MemoryBreakdown last = serving_stage(m, r, last_info, nullptr);
    if (last.total_bytes() > first.total_bytes()) {
      chosen = last_info;
      first = std::move(last);
    }
  }
  if (out) *out = std::move(first);
  return chosen;
}

}  // namespace

MemoryBreakdown serving_memory(const ModelArch& arch, const ServingMemoryRequest& req) {
  req.validate();
  validate_against_model(arch, shape_of(arch), req.tp, req.pp, 1, "--tp");
  MemoryBreakdown out;
  worst_serving_stage(arch, req, &out);
  return out;
}

ServingMemoryLine serving_memory_line(const ModelArch& arch, ServingMemoryRequest req) {
  ServingMemoryLine line;
  req.concurrency = 1;
  line.one_sequence_bytes = serving_memory(arch, req).total_bytes();
  const std::int64_t ctx = std::max<std::int64_t>(req.context_tokens, 1);
  const std::int64_t n0 = std::max<std::int64_t>(1, (req.prefill_chunk_tokens + ctx - 1) / ctx);
  req.concurrency = n0;
  const MemoryBreakdown lo = serving_memory(arch, req);
  req.concurrency = n0 + 1;
  const MemoryBreakdown hi = serving_memory(arch, req);
  line.per_sequence_bytes = hi.total_bytes() - lo.total_bytes();
  line.kv_per_sequence_bytes = hi.term_bytes("kv_cache") - lo.term_bytes("kv_cache");
  line.base_bytes = lo.total_bytes() - static_cast<double>(n0) * line.per_sequence_bytes;
  return line;
}

double ServingMemoryLine::kv_capacity_bytes(double usable_bytes) const {
  if (per_sequence_bytes <= 0 || usable_bytes <= base_bytes) return 0.0;
  return (usable_bytes - base_bytes) * (kv_per_sequence_bytes / per_sequence_bytes);
}

std::vector<TermExplanation> explain_serving_memory(const ModelArch& arch, const ServingMemoryRequest& req) {
  req.validate();
  validate_against_model(arch, shape_of(arch), req.tp, req.pp, 1, "--tp");
  const StageInfo st = worst_serving_stage(arch, req, nullptr);
  Explain ex;
  serving_stage(arch, req, st, &ex);
  return ex;
}

}  // namespace gpuplan
