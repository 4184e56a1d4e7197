// The lean total-only training memory (memory_total.hpp). Each block names the memory.cpp
// training_stage block it repeats; expressions keep memory.cpp's operand order so that the
// doubles are identical (tests/sizing/memory_total_test.cpp).
#include "sizing/memory_total.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

namespace gpuplan {
namespace {

bool is_mixed(TrainPrecision p) {
  return p == TrainPrecision::bf16_mixed || p == TrainPrecision::fp16_mixed || p == TrainPrecision::fp8_mixed;
}
bool is_fp32(TrainPrecision p) { return p == TrainPrecision::fp32 || p == TrainPrecision::tf32; }

/// LoRA target names (memory.hpp TrainingMemoryRequest::lora_targets) as bits, resolved once.
enum TargetBit : unsigned { kQ = 1, kK = 2, kV = 4, kO = 8, kGate = 16, kUp = 32, kDown = 64 };
unsigned target_bits(const std::vector<std::string>& targets) {
  unsigned bits = 0;
  for (const std::string& t : targets) {
    if (t == "all_linear" || t == "all-linear") bits |= kQ | kK | kV | kO | kGate | kUp | kDown;
    else if (t == "q") bits |= kQ;
    else if (t == "k") bits |= kK;
    else if (t == "v") bits |= kV;
    else if (t == "o") bits |= kO;
    else if (t == "gate") bits |= kGate;
    else if (t == "up") bits |= kUp;
    else if (t == "down") bits |= kDown;
  }
  return bits;
}

/// memory.cpp Linear, with the target as a bit.
struct Linear {
  unsigned target;
  double d_in, d_out, count;
  bool moe_layer, dense_layer;
};

}  // namespace

TrainingMemoryTotal::TrainingMemoryTotal(const ModelArch& m, const TrainingMemoryRequest& request) : r_(request) {
  // The request's own checks (and the model's parameter count) throw here as in training_memory.
  (void)training_memory(m, request);

  // memory.cpp shape_of.
  decoder_ = m.family == ModelFamily::decoder && m.num_layers > 0 && m.hidden_size > 0;
  h_ = static_cast<double>(m.hidden_size);
  L_ = static_cast<double>(m.num_layers);
  V_ = static_cast<double>(m.vocab_size);
  const double a = static_cast<double>(m.num_attention_heads);
  const double kv = static_cast<double>(m.num_kv_heads > 0 ? m.num_kv_heads : m.num_attention_heads);
  const double d = m.head_dim > 0 ? static_cast<double>(m.head_dim) : (m.num_attention_heads > 0 ? h_ / a : 0.0);
  const double f = static_cast<double>(m.intermediate_size);
  if (!m.mla && m.num_kv_heads > 0) {  // memory.cpp kv_replicated_params
    kv_heads_ = kv;
    kv_proj_per_head_ = 2.0 * d * h_;
  }
  double q_width = 0, k_width = 0, v_width = 0, o_in_width = 0, mla_replicated = 0;
  if (m.mla) {
    const MlaSpec& x = *m.mla;
    const double qk = static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim);
    q_width = a * qk;
    k_width = a * qk;
    v_width = a * static_cast<double>(x.v_head_dim);
    o_in_width = v_width;
    mla_replicated = 2.0 * (static_cast<double>(x.kv_lora_rank + x.qk_rope_head_dim) + static_cast<double>(x.kv_lora_rank)) +
                     (x.q_lora_rank ? 2.0 * 2.0 * static_cast<double>(*x.q_lora_rank) : 0.0);
  } else {
    q_width = a * d;
    k_width = kv * d;
    v_width = kv * d;
    o_in_width = a * d;
  }
  op_selective_applies_ = !m.mla;
  heads_ = a;
  q_width_ = q_width;
  v_width_ = v_width;
  f_ = f;
  o_in_width_ = o_in_width;
  L_dense_ = L_;
  double E = 0, k = 0, f_e = 0, shared_width = 0;
  if (m.moe) {
    const MoeSpec& e = *m.moe;
    moe_ = true;
    L_moe_ = static_cast<double>(e.num_moe_layers > 0 ? e.num_moe_layers : m.num_layers);
    L_dense_ = std::max(0.0, L_ - L_moe_);
    E = static_cast<double>(e.num_routed_experts);
    k = static_cast<double>(e.experts_per_token);
    f_e = static_cast<double>(e.expert_intermediate_size);
    const double fs = static_cast<double>(e.shared_intermediate_size > 0 ? e.shared_intermediate_size
                                                                          : e.expert_intermediate_size);
    shared_width = static_cast<double>(e.num_shared_experts) * fs;
  }
  // memory.cpp shape_of: hybrids' attention and dense-MLP matrices exist in their geometry's blocks only.
  L_attn_linears_ = L_;
  L_dense_linears_ = L_dense_;
  if (m.ssm && m.geometry.num_layers == m.num_layers) {
    L_attn_linears_ = static_cast<double>(m.geometry.attention_layers);
    L_dense_linears_ = static_cast<double>(m.geometry.dense_mlp_layers);
  }

  // Parameter groups (training_stage: "Parameters held by this GPU").
  const ParamBreakdown& P = m.params;
  attention_mlp_ = static_cast<double>(P.attention + P.mlp + m.ssm_mixer_params());  // memory.cpp dense_tp
  norms_router_ = static_cast<double>(P.norms + P.router);
  experts_ = static_cast<double>(P.experts);
  embeddings_ = static_cast<double>(P.embeddings);
  other_ = static_cast<double>(P.other - m.ssm_mixer_params());
  head_params_ = static_cast<double>(P.head);
  head_ = P.head > 0;
  tied_ = m.tied_embeddings;
  total_params_ = static_cast<double>(P.total());
  layer_params_dense_ = static_cast<double>(P.attention + P.mlp + m.ssm_mixer_params() + P.norms + P.router) / L_;
  layer_params_expert_ = L_moe_ > 0 ? static_cast<double>(P.experts) / L_moe_ : 0.0;

  // memory.cpp linears_of (same order).
  std::vector<Linear> ls;
  if (decoder_) {
    if (m.mla) {
      const MlaSpec& x = *m.mla;
      const double qk = static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim);
      if (x.q_lora_rank) {
        const double rq = static_cast<double>(*x.q_lora_rank);
        ls.push_back({kQ, h_, rq, 1, false, false});
        ls.push_back({kQ, rq, a * qk, 1, false, false});
      } else {
        ls.push_back({kQ, h_, a * qk, 1, false, false});
      }
      const double c = static_cast<double>(x.kv_lora_rank);
      ls.push_back({kK, h_, c + static_cast<double>(x.qk_rope_head_dim), 1, false, false});
      ls.push_back({kV, c, a * static_cast<double>(x.qk_nope_head_dim + x.v_head_dim), 1, false, false});
      ls.push_back({kO, v_width, h_, 1, false, false});
    } else {
      ls.push_back({kQ, h_, q_width, 1, false, false});
      ls.push_back({kK, h_, k_width, 1, false, false});
      ls.push_back({kV, h_, v_width, 1, false, false});
      ls.push_back({kO, o_in_width, h_, 1, false, false});
    }
    if (L_dense_ > 0 && f > 0) {
      if (m.gated_mlp) ls.push_back({kGate, h_, f, 1, false, true});
      ls.push_back({kUp, h_, f, 1, false, true});
      ls.push_back({kDown, f, h_, 1, false, true});
    }
    if (moe_) {
      if (m.gated_mlp) ls.push_back({kGate, h_, f_e, E, true, false});
      ls.push_back({kUp, h_, f_e, E, true, false});
      ls.push_back({kDown, f_e, h_, E, true, false});
      if (shared_width > 0) {
        if (m.gated_mlp) ls.push_back({kGate, h_, shared_width, 1, true, false});
        ls.push_back({kUp, h_, shared_width, 1, true, false});
        ls.push_back({kDown, shared_width, h_, 1, true, false});
      }
    }
  }
  const unsigned targets = target_bits(r_.lora_targets);
  const double rank = r_.lora_rank;
  // memory.cpp sum_linears, three sums at once (each in the list's order).
  for (const Linear& l : ls) {
    const double layers = l.moe_layer ? L_moe_ : (l.dense_layer ? L_dense_linears_ : L_attn_linears_);
    const bool expert = l.moe_layer && l.count > 1;
    const bool targeted = (targets & l.target) != 0;
    const double rows_cols = (l.d_in + l.d_out) * l.count * layers;
    const double adapter = (targeted ? rank * (l.d_in + l.d_out) : 0.0) * l.count * layers;
    const double adapted = (targeted ? (l.moe_layer && l.count > 1 ? 0.0 : 1.0) : 0.0) * l.count * layers;
    if (expert) {
      adafactor_expert_ += rows_cols;
      adapter_expert_ += adapter;
    } else {
      adafactor_dense_ += rows_cols;
      adapter_dense_ += adapter;
      adapted_dense_matrices_ += adapted;
    }
    if (n_products_ < static_cast<int>(products_.size())) products_[static_cast<std::size_t>(n_products_++)] = l.d_in * l.d_out;
    biggest_product_ = std::max(biggest_product_, l.d_in * l.d_out);
  }

  // memory.cpp ActivationContext / layer_activation, per token of one layer.
  if (decoder_) {
    const bool lora = r_.task == Task::lora || r_.task == Task::qlora;
    const bool pure = r_.precision == TrainPrecision::bf16_pure;
    const bool eager = r_.activation_profile == ActivationProfile::pytorch_eager;
    const bool compiled = r_.activation_profile == ActivationProfile::pytorch_compiled;
    const bool megatron = r_.activation_profile == ActivationProfile::megatron;
    const double gemm_input_bytes = megatron && r_.precision == TrainPrecision::fp8_mixed ? 1.0 : 2.0;
    const double norms_per_layer = static_cast<double>(m.norms_per_layer > 0 ? m.norms_per_layer : 2);
    const bool gemma = m.model_type.rfind("gemma", 0) == 0;
    const double norm_bytes_per_h =
        r_.activation_profile != ActivationProfile::pytorch_eager || m.norm_bias ? 2.0 : (gemma ? 8.0 : 6.0);
    const bool python_gelu = eager && m.model_type == "gpt2";
    const double adapter_bytes = pure || megatron ? 2.0 : 4.0;  // memory.cpp: Megatron's bf16 adapters
    const double seq = static_cast<double>(r_.seq_len);
    auto linear_input = [&](double w, std::initializer_list<unsigned> group) {
      if (!lora) return gemm_input_bytes * w;
      int n = 0;
      for (unsigned g : group) n += (targets & g) != 0 ? 1 : 0;
      if (n == 0) return 0.0;
      if (adapter_bytes <= 2.0) return 2.0 * w;
      if (compiled) return adapter_bytes * w;
      return adapter_bytes * w * n;
    };
    auto layer = [&](bool moe_layer, RecomputeModules modules) {
      Activation x;
      // memory.cpp layer_activation: what Megatron-Core's recompute_modules discard.
      const bool drop_attn_norm_out = m.mla && has_module(modules, RecomputeModule::layernorm);
      const bool drop_mlp_norm_out = moe_layer && has_module(modules, RecomputeModule::layernorm);
      const bool drop_dense_mlp = !moe_layer && has_module(modules, RecomputeModule::mlp);
      const bool drop_expert_act = moe_layer && has_module(modules, RecomputeModule::moe_act);
      const bool drop_mla_qkv = m.mla && has_module(modules, RecomputeModule::mla_up_proj);
      x.replicated = norms_per_layer * norm_bytes_per_h * h_ +
                     (drop_attn_norm_out ? 0.0 : linear_input(h_, {kQ, kK, kV})) +
                     (drop_mlp_norm_out || drop_dense_mlp ? 0.0 : linear_input(h_, {kGate, kUp})) +
                     (r_.dropout ? 2 * h_ : 0.0) + mla_replicated;
      const double expand = r_.kv_expanded_for_attention && !m.mla && kv > 0 ? a / kv : 1.0;
      x.split = (drop_mla_qkv ? 0.0 : 2 * q_width + 2 * (k_width * expand) + 2 * (v_width * expand)) + 2 * o_in_width;
      if (m.qk_norm) x.split += (eager ? 6.0 : 2.0) * (q_width + k_width);
      if (eager || compiled || (lora && !megatron)) x.split += linear_input(o_in_width, {kO});
      else if (megatron && !lora && gemm_input_bytes < 2.0) x.split += gemm_input_bytes * o_in_width;
      if (r_.flash_attention) {
        x.split += 4 * a;
      } else {
        x.scores = a * seq * (r_.dropout ? 5.0 : 2.0);
      }
      const double inner = m.gated_mlp ? (compiled || megatron ? 4.0 : 6.0) : (python_gelu ? 8.0 : 2.0);
      if (moe_layer) {
        // memory.cpp layer_activation: Megatron weights the experts inside the activation (4 B per routed token).
        const double weight_grad_input = megatron && m.gated_mlp ? 4.0 : 2 * h_;
        x.split += k * ((lora ? 2.0 : gemm_input_bytes) * h_ + inner * f_e +
                        (drop_expert_act ? 0.0 : linear_input(f_e, {kDown})) + weight_grad_input);
        x.split += inner * shared_width + linear_input(shared_width, {kDown});
        x.replicated += 2 * 4 * E;
      } else if (!drop_dense_mlp) {
        x.split += inner * f + linear_input(f, {kDown});
      }
      return x;
    };
    dense_act_ = layer(false, 0);
    moe_act_ = moe_ ? layer(true, 0) : dense_act_;
    // Under Recompute::selective: the recompute_modules in effect (memory.hpp).
    const RecomputeModules modules = effective_recompute_modules(Recompute::selective, r_.recompute_modules);
    dense_act_selective_ = layer(false, modules);
    moe_act_selective_ = moe_ ? layer(true, modules) : dense_act_selective_;
  }
}

double TrainingMemoryTotal::total_bytes(const ParallelLayout& layout, Recompute recompute) const {
  // memory.cpp worst_training_stage: the first stage, or the last when it needs more; with
  // --pp-layers every stage.
  double worst = stage_total(layout, recompute, 0);
  const int from = r_.pipeline_stage_layers.size() != static_cast<std::size_t>(layout.pp) ? layout.pp - 1 : 1;
  for (int i = from; i < layout.pp && layout.pp > 1; ++i) {
    const double other = stage_total(layout, recompute, i);
    if (other > worst) worst = other;
  }
  return worst;
}

double TrainingMemoryTotal::stage_total(const ParallelLayout& lay, Recompute rc, int index) const {
  const bool first = index == 0, last = index == lay.pp - 1;
  const TrainingMemoryRequest& r = r_;
  const double t = lay.tp, p = lay.pp, dp = lay.dp, ep = lay.ep;
  const double b = lay.micro_batch, seq = static_cast<double>(r.seq_len);
  const bool lora = r.task == Task::lora || r.task == Task::qlora;
  const bool qlora = r.task == Task::qlora;

  // --- Parameters held by this GPU before ZeRO sharding (TP, PP, EP splits). ---
  // memory.cpp stage_layers: the --pp-layers entry, else ceil(L / pp).
  const double layers_stage =
      decoder_ ? (r.pipeline_stage_layers.size() != static_cast<std::size_t>(lay.pp) ? std::ceil(L_ / p)
                                                  : static_cast<double>(r.pipeline_stage_layers[static_cast<std::size_t>(index)]))
               : 1.0;
  const double frac = decoder_ ? layers_stage / L_ : 1.0;
  double dense_tp = 0, dense_rep = 0, expert_gpu = 0, extra = 0;
  // memory.cpp kv_replicated_params: TP above the KV heads holds a whole KV head per GPU.
  const double kv_rep =
      decoder_ && kv_heads_ > 0 && t > kv_heads_ ? layers_stage * kv_proj_per_head_ * (1.0 - kv_heads_ / t) : 0.0;
  if (decoder_) {
    dense_tp = frac * attention_mlp_ / t + kv_rep;
    dense_rep = frac * norms_router_;
    expert_gpu = frac * experts_ / (lay.etp() * ep);
    if (first) extra += embeddings_ / t + other_;
    if (last) {
      if (head_) extra += head_params_ / t;
      else if (tied_ && !first) extra += V_ * h_ / t;
    }
  } else {
    dense_rep = total_params_;
  }
  const double dense_gpu = dense_tp + dense_rep + extra;
  const double z = lay.zero_stage;
  const double shard_dense = dp, shard_expert = lay.edp();
  auto sharded = [&](double dense, double expert, int min_stage) {
    return z >= min_stage ? dense / shard_dense + expert / shard_expert : dense + expert;
  };
  const double params_gpu = sharded(dense_gpu, expert_gpu, 3);
  const double mp_split = frac / t;
  const double expert_split = frac / (lay.etp() * ep);  // routed experts: split by etp × ep

  const TrainPrecision prec = r.precision;
  const bool mixed = is_mixed(prec), fp32 = is_fp32(prec), pure = prec == TrainPrecision::bf16_pure;
  const double act_scale = fp32 ? 2.0 : 1.0;

  double weights_gpu_bytes = 0, grads_bytes = 0, optim_bytes = 0, adapter_bytes = 0, temp_bytes = 0;
  if (!lora) {
    const double wb = fp32 ? 4.0 : (prec == TrainPrecision::fp8_mixed ? 3.0 : 2.0);
    const double gbytes = (fp32 || r.fp32_grad_accumulation) ? 4.0 : 2.0;
    double state_per_param = 0;
    const double master = mixed ? 4.0 : 0.0;
    switch (r.optimizer) {
      case Optimizer::adamw: state_per_param = pure ? 4.0 : 8.0; break;
      case Optimizer::adamw_8bit: state_per_param = 2.0 + 2.0 * 4.0 / kOptimizer8bitBlockValues; break;
      case Optimizer::sgd_momentum:
      case Optimizer::lion: state_per_param = pure ? 2.0 : 4.0; break;
      case Optimizer::adafactor: state_per_param = 0; break;
    }
    weights_gpu_bytes = wb * params_gpu;
    grads_bytes = gbytes * sharded(dense_gpu, expert_gpu, 2);
    const double opt_params = sharded(dense_gpu, expert_gpu, 1);
    const double fp32_partition = (r.fp32_grad_partition && !fp32 && z >= 1 && z <= 2) ? 4.0 * opt_params : 0.0;
    grads_bytes += fp32_partition;
    double adafactor_bytes = 0;
    if (r.optimizer == Optimizer::adafactor) {
      const double vb = pure ? 2.0 : 4.0;
      double per_gpu = vb * (adafactor_dense_ * mp_split + adafactor_expert_ * expert_split);
      if (first) per_gpu += vb * (V_ + h_);
      if (last && head_) per_gpu += vb * (V_ + h_);
      adafactor_bytes = z >= 1 ? per_gpu / dp : per_gpu;
    }
    optim_bytes = (master + state_per_param) * opt_params + adafactor_bytes;
    if (r.optimizer_in_backward) {
      double largest = decoder_ ? V_ * h_ / t : 0.0;
      for (int i = 0; i < n_products_; ++i) largest = std::max(largest, products_[static_cast<std::size_t>(i)] / t);
      grads_bytes = gbytes * largest;
    }
    if (r.optimizer_foreach && !r.optimizer_in_backward && r.optimizer != Optimizer::adamw_8bit &&
        r.optimizer != Optimizer::adafactor) {
      temp_bytes = (mixed ? 4.0 : wb) * opt_params;
    }
  } else {
    double base_bytes;
    if (qlora) {
      const double nf4 = weight_quant_bits(WeightQuant::nf4, r.qlora_double_quant) / 8.0;
      const double linear = frac * attention_mlp_ / t + kv_rep + expert_gpu;
      const double rest = dense_rep + extra;
      base_bytes = nf4 * linear + 2.0 * rest;
      if (z >= 3) base_bytes = nf4 * ((frac * attention_mlp_ / t + kv_rep) / shard_dense + expert_gpu / shard_expert) +
                               2.0 * rest / shard_dense;
    } else {
      const double wb = fp32 ? 4.0 : 2.0;
      base_bytes = wb * params_gpu;
    }
    weights_gpu_bytes = base_bytes;
    const double adapter_params = adapter_dense_ * mp_split + adapter_expert_ * expert_split;
    const double aw = pure ? 2.0 : 4.0;
    double state = 0;
    switch (r.optimizer) {
      case Optimizer::adamw: state = pure ? 4.0 : 8.0; break;
      case Optimizer::adamw_8bit: state = 2.0 + 2.0 * 4.0 / kOptimizer8bitBlockValues; break;
      case Optimizer::sgd_momentum:
      case Optimizer::lion: state = pure ? 2.0 : 4.0; break;
      case Optimizer::adafactor: state = pure ? 2.0 : 4.0; break;
    }
    const double ap_w = z >= 3 ? adapter_params / dp : adapter_params;
    const double ap_g = z >= 2 ? adapter_params / dp : adapter_params;
    const double ap_o = z >= 1 ? adapter_params / dp : adapter_params;
    adapter_bytes = aw * ap_w;
    if (r.optimizer_foreach && r.optimizer != Optimizer::adamw_8bit && r.optimizer != Optimizer::adafactor) {
      temp_bytes = aw * ap_o;
    }
    grads_bytes = aw * ap_g;
    optim_bytes = state * ap_o;
  }

  // Offload: state moves to host memory (not in the GPU total).
  if (lay.offload_optimizer || lay.offload_params) {
    optim_bytes = 0;
    grads_bytes = 0;
    temp_bytes = 0;
  }
  if (lay.offload_params) weights_gpu_bytes = 0;

  // --- Activations (this stage), logits, workspace. ---
  double act_bytes = 0, logits_bytes = 0, workspace_bytes = 0;
  if (decoder_) {
    const bool sp = lay.sequence_parallel && lay.tp > 1;
    const RecomputeModules modules = effective_recompute_modules(rc, r.recompute_modules);
    const bool keep_scores =
        rc == Recompute::none || (rc == Recompute::selective && !has_module(modules, RecomputeModule::core_attn));
    auto stored = [&](const Activation& x, bool with_scores) {
      return x.replicated / (sp ? t : 1.0) + (x.split + (with_scores ? x.scores : 0.0)) / t;
    };
    const bool selective = rc == Recompute::selective;
    const double per_tok_dense = stored(selective ? dense_act_selective_ : dense_act_, keep_scores);
    const double per_tok_moe = stored(selective ? moe_act_selective_ : moe_act_, keep_scores);
    const double per_tok_avg = (L_dense_ * per_tok_dense + L_moe_ * per_tok_moe) / L_;
    // memory.cpp stage_in_flight: pp (or in_flight_micro_batches) on the first, pp − index after.
    const double in_flight =
        first ? (lay.in_flight_micro_batches > 0 ? lay.in_flight_micro_batches : p) : static_cast<double>(lay.pp - index);
    const double interleave =
        (first && lay.virtual_stages > 1 && lay.pp > 1) ? 1.0 + (p - 1.0) / (p * lay.virtual_stages) : 1.0;
    const double tokens = seq * b;
    double per_layer_token = per_tok_avg;
    double one_layer = 0;
    if (rc == Recompute::full) {
      per_layer_token = 2.0 * h_ / (sp ? t : 1.0);
      one_layer = std::max(stored(dense_act_, true), stored(moe_act_, true)) * tokens;
    } else if (rc == Recompute::op_selective && op_selective_applies_) {
      const double op_saved = op_selective_saved_bytes_per_token(
          h_, q_width_, v_width_, f_, o_in_width_, heads_, t, sp,
          r.activation_profile == ActivationProfile::pytorch_compiled);
      per_layer_token = (L_dense_ * std::min(op_saved, per_tok_dense) + L_moe_ * per_tok_moe) / L_;
      one_layer = std::max(0.0, stored(dense_act_, true) - op_saved) * tokens;
    } else if (modules != 0) {
      one_layer = std::max(stored(dense_act_, keep_scores) - per_tok_dense,
                           moe_ ? stored(moe_act_, keep_scores) - per_tok_moe : 0.0) *
                  tokens;
    }
    double lora_inter = 0;
    if (lora) {
      const double adapter_dtype_bytes = pure || r.activation_profile == ActivationProfile::megatron ? 2.0 : 4.0;  // memory.cpp ac.adapter_bytes
      lora_inter = adapter_dtype_bytes * r.lora_rank * adapted_dense_matrices_ / L_ / t;
      if (rc == Recompute::full) lora_inter = 0;
    }
    double layer_mult = layers_stage * in_flight * interleave;
    if (r.offload_activations && layer_mult > kOffloadedActivationLayers) layer_mult = kOffloadedActivationLayers;
    act_bytes = act_scale * ((per_layer_token + lora_inter) * tokens * layer_mult + one_layer);
    // memory.cpp eager_vocab: logits per token on this GPU under eager_head_and_loss.
    const double eager_vocab = r.loss_parallel && t > 1 ? V_ / t : V_;
    if (last) {
      const double ab = fp32 ? 4.0 : 2.0;
      const bool compiled = r.activation_profile == ActivationProfile::pytorch_compiled;
      const double fp32_copies = r.activation_profile == ActivationProfile::pytorch_eager ? 3.0 : 2.0;
      if (r.eager_head_and_loss) {
        // memory.cpp: eager loss on the upcast logits + final norm + output-projection input.
        const bool vocab_parallel = r.loss_parallel && t > 1;
        const double logits_local = tokens * eager_vocab;
        const double per_logit = (vocab_parallel ? 16.0 : 12.0) + (r.logits_kept_through_backward ? ab : 0.0);
        const double head_saved = tokens * ((4.0 + ab) * h_ / (sp ? t : 1.0) + ab * h_);
        logits_bytes = logits_local * per_logit + head_saved;
      } else if (r.chunked_cross_entropy) {
        const double chunk = std::min(tokens, static_cast<double>(r.cross_entropy_chunk_tokens));
        logits_bytes = tokens * V_ / t * ab + chunk * V_ / t * (compiled ? ab : 4.0 * fp32_copies);
      } else if (compiled && r.logits_upcast_in_loss) {
        // The upcast is inside the compiled loss (memory.hpp): it saves the 16-bit logits, returns a 16-bit grad.
        logits_bytes = tokens * V_ / t * (ab + ab);
      } else {
        logits_bytes = tokens * V_ / t * (ab + 4.0 * fp32_copies);
      }
    }
    // memory.cpp: a trained head's gradient copies at the start of backward (chunked output: 2).
    const bool head_trained = last && !lora && (head_ || tied_);
    const bool gathered = z >= 3 || lay.offload_params;
    const bool chunked_output = r.chunked_cross_entropy && !r.eager_head_and_loss;
    const double head_grad_copies = head_trained ? (chunked_output ? 2.0 : 1.0) : 0.0;
    const double head_grad_bytes = ((fp32 || r.fp32_grad_accumulation) ? 4.0 : 2.0) * V_ * h_ / t;
    if (head_trained && chunked_output && !gathered) {
      logits_bytes += (head_grad_copies - (r.optimizer_in_backward ? 1.0 : 0.0)) * head_grad_bytes;
    }
    const double layer_params = layer_params_dense_ / t + (L_moe_ > 0 ? layer_params_expert_ / (lay.etp() * ep) : 0.0);
    const double gather_bytes =
        qlora ? weight_quant_bits(WeightQuant::nf4, r.qlora_double_quant) / 8.0 : (fp32 ? 4.0 : 2.0);
    double layers_ws = 0, head_unit_bytes = 0;
    if (gathered) {
      layers_ws = (lora ? 2.0 : 3.0) * gather_bytes * layer_params;
      if (last && (head_ || tied_)) {
        const double head_bytes = (fp32 ? 4.0 : 2.0) * V_ * h_ / t;
        head_unit_bytes = head_bytes * (1.0 + head_grad_copies) + gather_bytes * layer_params;
      }
    }
    const double dequant_bytes = qlora ? 2.0 * biggest_product_ / t : 0.0;
    // memory.cpp: the start of backward (A) against the last layer's backward (B) under full recompute.
    double ws_a = std::max(layers_ws, head_unit_bytes);
    if (rc == Recompute::full && last && logits_bytes > 0) {
      ws_a = head_unit_bytes > 0 ? head_unit_bytes : layers_ws;
      const double kept_logits_bytes = !r.logits_kept_through_backward ? 0.0
                                       : r.eager_head_and_loss ? tokens * eager_vocab * (fp32 ? 4.0 : 2.0)
                                                               : tokens * V_ / t * (fp32 ? 4.0 : 2.0);
      if (logits_bytes + ws_a >= act_scale * one_layer + kept_logits_bytes + layers_ws) {
        act_bytes = act_scale * ((per_layer_token + lora_inter) * tokens * layer_mult);
      } else {
        logits_bytes = kept_logits_bytes;
        ws_a = layers_ws;
      }
    }
    workspace_bytes = ws_a + dequant_bytes;
  }

  // Phases of a step and the terms memory.cpp adds (a term ≤ 0 bytes is left out, weights never).
  const double fwd_phase = weights_gpu_bytes + adapter_bytes + optim_bytes + act_bytes + logits_bytes +
                           workspace_bytes + (r.gradients_persist || r.optimizer_in_backward ? grads_bytes : 0.0);
  const double step_phase = weights_gpu_bytes + adapter_bytes + optim_bytes + grads_bytes + temp_bytes;
  const bool step_peak = step_phase > fwd_phase;
  double sum = 0;
  auto add = [&sum](double bytes) {
    if (!(bytes <= 0)) sum += bytes;
  };
  sum += weights_gpu_bytes;
  if (lora) add(adapter_bytes);
  if (step_peak || r.gradients_persist || r.optimizer_in_backward) add(grads_bytes);
  add(optim_bytes);
  if (step_peak) {
    add(temp_bytes);
  } else {
    add(act_bytes);
    add(logits_bytes);
    add(workspace_bytes);
  }
  const double dynamic = step_peak ? temp_bytes : act_bytes + logits_bytes + workspace_bytes;
  add(r.fragmentation_fraction * dynamic);
  add(r.cuda_context_bytes);
  return sum;
}

}  // namespace gpuplan
