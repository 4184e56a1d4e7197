#pragma once
/// One geometry per model: the list of a model's weight matrices and other parameter tensors,
/// computed once from a ModelArch (build_layer_geometry) and read by every consumer (parameter
/// counting here; memory, FLOPs, LoRA adapter size and step time in the sizing layer), so that they
/// cannot derive the shape four different ways.
///
/// Shapes are element counts, never bytes. A LinearFamily is one kind of matrix y = x·W (+ b) with
/// W ∈ R^{d_in × d_out}, held `copies` times by each of `layers` layers (routed experts: copies = E,
/// active_copies = top-k). Its parameters are layers · copies · (d_in·d_out + bias·d_out).
/// Everything that is not a matrix multiply (embedding tables, norms, attention sinks, SSM conv /
/// A_log / D, biases of fused blocks) is a ParamTensor of `elements` per layer × `layers`.
///
///   parameters(model) = Σ_linears params() + Σ_tensors elements · layers   (count_params(geometry))
///
/// The LM head is a LinearFamily (role head) so its matmul is visible to FLOPs; when tied to the token
/// embedding it has `tied` = true and no parameters of its own.
/// LoRA target names are the generic ones the sizing layer accepts (--lora-targets): q, k, v, o, gate,
/// up, down; matrices that LoRA does not adapt by default (router, LM head, SSM projections, embedding
/// projections) have an empty target. Fused checkpoint modules (GPT-2 c_attn, Falcon/GPT-NeoX
/// query_key_value, Phi-3 gate_up_proj) are listed as their parts with `fused_into` naming the module.
#include <cstdint>
#include <string>
#include <vector>

namespace gpuplan {

struct ModelArch;

/// Which ParamBreakdown field a tensor's parameters are reported in.
enum class ParamBucket { embeddings, attention, mlp, experts, router, norms, head, other };

/// What a matrix does in its layer.
enum class LinearRole {
  attention,      ///< q/k/v/o projections, MLA down/up projections
  mlp,            ///< dense feed-forward
  shared_expert,  ///< always-active expert of an MoE layer (DeepSeek, Llama 4, Qwen2-MoE)
  routed_expert,  ///< routed experts of an MoE layer (copies = E, active_copies = top-k)
  router,         ///< MoE gate (and Qwen2-MoE shared_expert_gate)
  ssm,            ///< Mamba mixer projections (in_proj, x_proj, dt_proj, out_proj)
  projection,     ///< embedding-width projections outside the layers (OPT project_in/out)
  head,           ///< LM head (h → vocab)
};

/// Feed-forward activation as the config's hidden_act names it. Gated kinds have 3 matrices.
enum class MlpActivation {
  swiglu,       ///< SiLU-gated (llama, mistral, qwen: hidden_act "silu" with gate_proj), Shazeer 2020
  geglu,        ///< GELU-gated (gemma: "gelu_pytorch_tanh" with gate_proj)
  gelu,         ///< plain GELU (falcon, opt "relu" aside, bert, gpt-neox, starcoder2)
  gelu_python,  ///< GPT-2 "gelu_new" written in Python: its eager backward keeps ~4 intermediates
  relu,         ///< plain ReLU (OPT, T5 v1.0)
  squared_relu, ///< plain ReLU² (Nemotron-H, Primer)
  silu,         ///< plain SiLU without a gate
  none,         ///< no MLP (Mamba)
};

/// Normalisation layer kind.
enum class NormKind {
  rms_norm,        ///< RMSNorm: weight only (h)
  layer_norm,      ///< LayerNorm with bias (2h)
  gemma_rms_norm,  ///< Gemma's RMSNorm computed in fp32 with (1 + w): eager PyTorch saves fp32 copies
  layer_norm_no_bias,  ///< LayerNorm without bias (MPT no_bias): weight only, h
  non_parametric,  ///< LayerNorm without weight or bias (OLMo-1 OlmoLayerNorm): 0 parameters
};

struct LinearFamily {
  std::string name;         ///< checkpoint module name ("self_attn.q_proj", "mlp.experts.down_proj")
  std::string lora_target;  ///< q, k, v, o, gate, up, down; "" = not a default LoRA target
  std::string fused_into;   ///< fused checkpoint module ("query_key_value"); "" when stored separately
  LinearRole role = LinearRole::attention;
  ParamBucket bucket = ParamBucket::attention;
  std::int64_t d_in = 0;
  std::int64_t d_out = 0;
  std::int64_t copies = 1;         ///< per holding layer (routed experts: E)
  std::int64_t active_copies = 1;  ///< used by one token (routed experts: top-k; else = copies)
  std::int64_t layers = 1;         ///< how many layers hold it (1 for head / projections)
  bool bias = false;               ///< d_out bias elements per copy
  bool tied = false;               ///< shares the weights of another tensor (tied LM head): no own params

  std::int64_t params_per_copy() const { return tied ? 0 : d_in * d_out + (bias ? d_out : 0); }
  std::int64_t params() const { return layers * copies * params_per_copy(); }
  std::int64_t active_params() const { return layers * active_copies * params_per_copy(); }
  /// Multiply-accumulates per token for one pass through every layer that holds it (active copies).
  std::int64_t macs_per_token() const { return layers * active_copies * d_in * d_out; }
};

struct ParamTensor {
  std::string name;               ///< "embed_tokens", "input_layernorm", "self_attn.sinks", "mixer.A_log"
  ParamBucket bucket = ParamBucket::other;
  std::int64_t elements = 0;      ///< per holding layer
  std::int64_t layers = 1;

  std::int64_t params() const { return elements * layers; }
};

/// Attention widths of the (first) attention layout. Elements per token.
struct AttentionGeometry {
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t q_width = 0;     ///< heads·head_dim (MLA: heads·(nope + rope))
  std::int64_t k_width = 0;     ///< kv_heads·head_dim (MLA: heads·(nope + rope), after the up-projection)
  std::int64_t v_width = 0;     ///< kv_heads·head_dim (MLA: heads·v_head_dim)
  std::int64_t o_in_width = 0;  ///< input width of the output projection (= v heads · v width)
  /// Elements one token stores in the KV cache per attention layer: 2·kv_heads·head_dim, MLA
  /// kv_lora_rank + qk_rope_head_dim (DeepSeek-V2 §2.1.2). 0 for layers that reuse another layer's
  /// cache (gemma-3n KV sharing) is expressed by kv_cache_layers < attention layers.
  std::int64_t kv_cache_width = 0;
};

struct LayerGeometry {
  std::vector<LinearFamily> linears;
  std::vector<ParamTensor> tensors;
  AttentionGeometry attention;

  std::int64_t num_layers = 0;        ///< blocks (decoder + encoder for encoder-decoder models)
  std::int64_t attention_layers = 0;  ///< blocks with self-attention (hybrids: fewer than num_layers)
  std::int64_t kv_cache_layers = 0;   ///< attention layers that keep their own KV cache
  std::int64_t dense_mlp_layers = 0;  ///< blocks with a dense MLP
  std::int64_t moe_layers = 0;        ///< blocks with routed experts
  std::int64_t ssm_layers = 0;        ///< blocks with an SSM mixer (Mamba / hybrids)
  std::int64_t mlp_width = 0;         ///< dense MLP width (intermediate_size)
  std::int64_t expert_width = 0;      ///< routed expert width
  std::int64_t shared_expert_width = 0;  ///< width of all shared experts together (n_shared · width)
  std::int64_t num_experts = 0, experts_per_token = 0;
  MlpActivation activation = MlpActivation::swiglu;
  bool gated_mlp = true;              ///< activation is SwiGLU / GeGLU (3 matrices)
  NormKind norm = NormKind::rms_norm;
  std::int64_t norms_per_layer = 2;   ///< hidden-width norms per block (Gemma 2/3: 4, Falcon-7B: 1)
  std::int64_t norm_width = 0;        ///< hidden size
  bool qk_norm = false;               ///< per-head q/k norms (Qwen3, Gemma 3, OLMo 2 (full width))
  bool parallel_attention = false;    ///< attention and MLP read the same input (Falcon, GPT-J, GPT-NeoX, Phi-2)
  bool tied_embeddings = false;

  /// Σ params of the matrices with this role (all layers, all copies).
  std::int64_t linear_params(LinearRole role) const;
  /// LoRA adapter parameters for rank r on the matrices whose lora_target is in `targets`
  /// ("all_linear"/"all-linear" = every matrix with a target): r·(d_in + d_out) per adapted copy
  /// [Hu et al. 2021, arXiv:2106.09685 §4]. Routed experts count all E copies.
  std::int64_t lora_params(std::int64_t rank, const std::vector<std::string>& targets) const;
  /// The largest rank an adapter on those matrices can use: the largest min(d_in, d_out) among
  /// them (B·A of rank r on a d_in × d_out matrix has rank at most min(d_in, d_out)); 0 when
  /// `targets` adapts none.
  std::int64_t max_lora_rank(const std::vector<std::string>& targets) const;
};

/// Builds the geometry of a decoder / state-space model from its shape fields. Pure.
/// Diffusion models (counted by their own readers) get an empty geometry.
/// Throws Error{internal} when a required shape field is not positive.
LayerGeometry build_layer_geometry(const ModelArch& arch);

std::string_view linear_role_name(LinearRole role);
std::string_view mlp_activation_name(MlpActivation a);
/// From a config's hidden_act / activation_function string and whether the MLP is gated:
/// "silu"/"swish" gated → swiglu; "gelu*" gated → geglu; "gelu_new" plain → gelu_python; ...
/// Unknown strings map to the gated/plain default (swiglu / gelu).
MlpActivation mlp_activation_from(std::string_view hidden_act, bool gated);

}  // namespace gpuplan
