#pragma once
/// Model layer: architectures read from Hugging Face config.json files, safetensors
/// headers/indexes, bundled presets or bare sizes; exact parameter counting.
///
/// Shapes are element counts (parameters), never bytes: bytes depend on the precision chosen
/// by the sizing layer. All counts are int64.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/geometry.hpp"

namespace gpuplan {

enum class ModelFamily {
  decoder,                ///< autoregressive transformer decoder (LLM)
  diffusion_unet,         ///< SDXL-style UNet (diffusers UNet2DConditionModel)
  diffusion_transformer,  ///< FLUX-style MMDiT (diffusers FluxTransformer2DModel)
  state_space,            ///< Mamba-style SSM (parameters counted; no attention / KV cache)
  encoder,                ///< bidirectional encoder (BERT): no causal KV cache, no LM head
  encoder_decoder,        ///< T5-style: num_layers = encoder + decoder blocks; decoder has cross-attention
};

/// Mixture-of-experts layout (Mixtral, Qwen3-MoE, DeepSeek-V3, gpt-oss, Llama 4).
struct MoeSpec {
  std::int64_t num_routed_experts = 0;       ///< experts per MoE layer (n_routed_experts / num_local_experts)
  std::int64_t experts_per_token = 0;        ///< top-k routed experts active per token
  std::int64_t num_shared_experts = 0;       ///< always-active shared experts (DeepSeek, Llama 4)
  std::int64_t expert_intermediate_size = 0; ///< FFN width of one expert
  std::int64_t shared_intermediate_size = 0; ///< FFN width of one shared expert (0 = same as expert)
  std::int64_t first_dense_layers = 0;       ///< first k layers use a dense MLP (DeepSeek first_k_dense_replace)
  std::int64_t moe_layer_interval = 1;       ///< every n-th layer is MoE (Llama 4 interleave_moe_layer_step)
  std::int64_t num_moe_layers = 0;           ///< derived: how many of the layers are MoE
  bool router_bias = false;   ///< router has a bias / score-correction bias of size E (gpt-oss, DeepSeek-V3)
  bool shared_expert_gate = false;  ///< Qwen2-MoE shared_expert_gate Linear(h, 1) per MoE layer (counted in router)
  bool expert_bias = false;   ///< each expert's projections carry biases (gpt-oss)
};

/// Multi-head latent attention (DeepSeek-V2/V3, arXiv:2405.04434 §2.1).
struct MlaSpec {
  std::optional<std::int64_t> q_lora_rank;  ///< nullopt = queries not compressed
  std::int64_t kv_lora_rank = 0;            ///< d_c: compressed KV latent width (cached)
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;        ///< d_h^R: decoupled RoPE key width (cached)
  std::int64_t v_head_dim = 0;
};

/// Attention layout, derived from the head counts (see attention_kind()).
enum class AttentionKind {
  none,  ///< no attention (Mamba) or not a decoder
  mha,   ///< multi-head: num_kv_heads == num_attention_heads (Vaswani et al. 2017)
  gqa,   ///< grouped-query: 1 < num_kv_heads < num_attention_heads (Ainslie et al. 2023, arXiv:2305.13245)
  mqa,   ///< multi-query: num_kv_heads == 1 (Shazeer 2019, arXiv:1911.02150)
  mla,   ///< multi-head latent attention (DeepSeek-V2, arXiv:2405.04434)
};

/// How token positions enter the model (decides whether position embeddings hold parameters).
enum class PositionEncoding {
  rope,     ///< rotary (no parameters)
  learned,  ///< learned absolute position table (GPT-2, OPT): parameters in `embeddings`
  alibi,    ///< ALiBi linear biases (BLOOM, some Falcon): no parameters
  none,     ///< Mamba / diffusion: not applicable
};

/// Mamba selective-state-space shape (Gu & Dao 2023, arXiv:2312.00752; HF MambaConfig).
struct SsmSpec {
  std::int64_t state_size = 0;      ///< N: SSM state width per channel (d_state)
  std::int64_t conv_kernel = 0;     ///< depthwise causal conv width (d_conv)
  std::int64_t expand = 0;          ///< inner width = expand * hidden (= intermediate_size)
  std::int64_t time_step_rank = 0;  ///< rank of the delta (dt) projection
  /// Channels of the causal conv (and of its decode cache): Mamba-1 the inner width (0 = expand · hidden), Mamba-2
  /// inner + 2 · n_groups · state_size (x, B and C go through the conv; HF Mamba2 / NemotronH conv_dim).
  std::int64_t conv_channels = 0;
};

/// Shape fields a FLOPs / activation estimate of a diffusion model needs (diffusers configs).
struct DiffusionSpec {
  std::string class_name;                  ///< "UNet2DConditionModel" / "FluxTransformer2DModel"
  std::int64_t in_channels = 0;            ///< latent channels in (UNet: 4; FLUX: 64 = 16 ch x 2x2 patch)
  std::int64_t out_channels = 0;
  // FLUX (FluxTransformer2DModel)
  std::int64_t num_double_stream_layers = 0;  ///< config num_layers (MMDiT blocks, joint text+image)
  std::int64_t num_single_stream_layers = 0;  ///< config num_single_layers
  std::int64_t num_attention_heads = 0;
  std::int64_t attention_head_dim = 0;        ///< FLUX: per-head width; inner dim = heads * head_dim
  std::int64_t inner_dim = 0;                 ///< FLUX: heads * attention_head_dim (3072)
  std::int64_t joint_attention_dim = 0;       ///< FLUX: T5 text-embedding width (4096)
  std::int64_t pooled_projection_dim = 0;     ///< FLUX: CLIP pooled width (768)
  bool guidance_embeds = false;               ///< FLUX-dev style guidance embedder present
  // UNet (UNet2DConditionModel)
  std::vector<std::int64_t> block_out_channels;            ///< per resolution level (320, 640, 1280)
  std::vector<std::int64_t> transformer_layers_per_block;  ///< per down level (1, 2, 10)
  std::vector<std::int64_t> unet_attention_head_dim;       ///< per level, as the config names it (heads for SDXL)
  std::vector<std::string> down_block_types;
  std::vector<std::string> up_block_types;
  std::int64_t layers_per_block = 0;
  std::int64_t cross_attention_dim = 0;  ///< text-encoder width the cross-attention reads (2048)
  std::int64_t sample_size = 0;          ///< latent side in pixels of the latent (128 -> 1024 px image)
};

/// Parameter count by component. total() = sum of all fields; active_per_token counts
/// only the routed experts a token uses (top-k) for MoE models (= total for dense models).
struct ParamBreakdown {
  std::int64_t embeddings = 0;  ///< token (+ position) embeddings
  std::int64_t attention = 0;   ///< q/k/v/o projections (+ biases), MLA down/up projections and their norms
  std::int64_t mlp = 0;         ///< dense MLP layers (+ shared experts)
  std::int64_t experts = 0;     ///< routed experts, all of them
  std::int64_t router = 0;      ///< MoE gate/router weights (+ bias)
  std::int64_t norms = 0;       ///< layer norms / RMS norms (incl. final norm)
  std::int64_t head = 0;        ///< LM head when not tied to the embeddings
  std::int64_t other = 0;       ///< components outside the above (diffusion blocks, SSM mixers, ...)
  std::int64_t active_experts = 0;  ///< routed-expert parameters a token uses (top-k of experts)

  std::int64_t total() const { return embeddings + attention + mlp + experts + router + norms + head + other; }
  /// Parameters used for one token: total minus the routed experts it does not use.
  std::int64_t active() const { return total() - experts + active_experts; }
};

struct ModelArch {
  std::string name;        ///< preset short name or config path
  std::string model_type;  ///< config.json model_type ("llama", "qwen3_moe", ...)
  std::string source;      ///< where the architecture came from (preset + provenance, file path, "--params")
  ModelFamily family = ModelFamily::decoder;

  // Decoder shape (0 where not applicable, e.g. diffusion).
  std::int64_t num_layers = 0;
  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;     ///< dense MLP width
  std::int64_t num_attention_heads = 0;
  std::int64_t num_kv_heads = 0;          ///< GQA/MQA key-value heads (= heads for MHA)
  std::int64_t head_dim = 0;              ///< per-head width (may differ from hidden/heads, e.g. Gemma, Qwen3)
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;
  bool tied_embeddings = false;
  bool gated_mlp = true;                  ///< SwiGLU/GeGLU (3 matrices) vs plain 2-matrix MLP
  bool attention_bias = false;            ///< q/k/v (and o where the family has it) biases
  bool mlp_bias = false;
  /// Sliding-window attention: window in tokens, and which layers use it
  /// (all layers for Mistral v0.1; alternate layers for Gemma 2; 5 of 6 for Gemma 3).
  std::optional<std::int64_t> sliding_window;
  std::vector<bool> layer_uses_sliding_window;  ///< size num_layers when sliding_window is set
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  std::string torch_dtype;                ///< dtype the checkpoint is published in ("bfloat16"), may be empty

  ParamBreakdown params;                  ///< exact parameter counts (filled by the readers)

  // Added by the model layer (additive to the contract above).
  bool attention_output_bias = false;     ///< o_proj bias (llama attention_bias, gpt-oss, GPT-2, OPT, BLOOM)
  std::int64_t norms_per_layer = 2;       ///< norms per decoder layer (Gemma 2/3: 4; Falcon-7B parallel: 1)
  bool norm_bias = false;                 ///< LayerNorm with bias (2h per norm) vs RMSNorm (h)
  bool final_norm = true;                 ///< a norm after the last layer
  bool qk_norm = false;                   ///< RMSNorm on q and k per head (Qwen3, Gemma 3): 2*head_dim per layer
  std::int64_t learned_positions = 0;     ///< rows of a learned position table (GPT-2: n_positions; OPT: max+2)
  AttentionKind attention = AttentionKind::none;  ///< derived from heads / MLA (see attention_kind())
  PositionEncoding position_encoding = PositionEncoding::rope;
  bool parallel_attention = false;        ///< attention and MLP read the same input (Falcon, GPT-J style)
  std::optional<SsmSpec> ssm;             ///< Mamba models
  std::optional<DiffusionSpec> diffusion; ///< SDXL UNet / FLUX transformer
  /// DeepSeek-V3 multi-token-prediction module (num_nextn_predict_layers): NOT in `params`
  /// (the published 671B excludes it); its parameter count is reported here, 0 when none.
  std::int64_t mtp_layers = 0;
  std::int64_t mtp_params = 0;
  /// Exact weight bytes of the published checkpoint when read from an index (total_size) or a
  /// safetensors header; nullopt when the architecture came from a config only.
  std::optional<std::int64_t> checkpoint_bytes;
  /// Counting notes shown to users ("vision tower counted in other", "MTP module excluded").
  std::vector<std::string> notes;

  // Geometry inputs (see geometry.hpp); the readers fill them, build_layer_geometry() reads them.
  std::string hidden_act;                 ///< config hidden_act / activation_function ("silu", "gelu_new"); may be empty
  NormKind norm_kind = NormKind::rms_norm;  ///< set together with norm_bias (layer_norm ⇔ norm_bias)
  /// Width of the token-embedding table and LM head when it differs from hidden_size (OPT
  /// word_embed_proj_dim; the project_in/out matrices are extra linears); 0 = hidden_size.
  std::int64_t embedding_width = 0;
  /// Blocks with self-attention / with a dense MLP when not every block has them (hybrid SSM models,
  /// attention-free Mamba); nullopt = num_layers (dense MLP: num_layers − MoE layers).
  std::optional<std::int64_t> attention_layers;
  std::optional<std::int64_t> dense_mlp_layers;
  std::optional<std::int64_t> kv_cache_layers;  ///< nullopt = attention_layers (gemma-3n shares caches)
  bool qk_norm_full_width = false;        ///< q/k norms over all heads (OLMo 2: H·d and K·d) instead of per head
  bool lm_head_bias = false;
  bool has_lm_head = true;                ///< false for encoders counted without a task head (BertModel)              ///< LM head with a vocab-size bias (Phi-2)
  /// Family-specific matrices and tensors beyond the common decoder block (attention sinks, Mamba mixers,
  /// cross-attention, OPT projections, BERT pooler, vision tower); build_layer_geometry() appends them.
  std::vector<LinearFamily> extra_linears;
  std::vector<ParamTensor> extra_tensors;
  /// The geometry computed once from the fields above (parse_hf_config / presets / resolve_model fill it;
  /// call finalize_arch() after changing the shape). Empty for diffusion models.
  LayerGeometry geometry;

  bool is_moe() const { return moe.has_value(); }
  /// Number of layers that use sliding-window attention (0 when none).
  std::int64_t num_sliding_window_layers() const {
    std::int64_t n = 0;
    for (bool b : layer_uses_sliding_window) n += b ? 1 : 0;
    return n;
  }
  /// Tensor-parallel sub-blocks: the mixers and feed-forwards, each ending in a row-parallel matrix whose output is
  /// all-reduced once in the forward pass (Megatron-LM TP, Shoeybi et al. 2019 §3): 2 per transformer layer; a hybrid's
  /// own count from its geometry (Jamba: a mixer and a feed-forward per layer, 2·L; Nemotron-H: one mixer per block, L).
  double tp_sublayers() const {
    if (ssm && geometry.num_layers == num_layers)
      return static_cast<double>(geometry.attention_layers + geometry.ssm_layers + geometry.dense_mlp_layers +
                                 geometry.moe_layers);
    return 2.0 * static_cast<double>(num_layers);
  }
  /// Elements of one SSM layer's decode state per sequence: the conv cache conv_channels × d_conv plus the SSM state
  /// d_inner × d_state (HF MambaCache / Mamba2 cache: conv_states [conv_channels, d_conv], ssm_states [d_inner,
  /// d_state] as heads × head_dim × d_state). 0 without an SSM.
  double ssm_state_elements_per_layer() const {
    if (!ssm) return 0;
    const double inner = static_cast<double>(ssm->expand) * static_cast<double>(hidden_size);
    const double conv = ssm->conv_channels > 0 ? static_cast<double>(ssm->conv_channels) : inner;
    return conv * static_cast<double>(ssm->conv_kernel) + inner * static_cast<double>(ssm->state_size);
  }
  /// Sliding-window layers among the first `kv_layers` (the layers that hold a KV cache: gemma-3n's last
  /// num_kv_shared_layers read an earlier layer's cache and hold none).
  std::int64_t sliding_window_layers_among_first(std::int64_t kv_layers) const {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < layer_uses_sliding_window.size() && static_cast<std::int64_t>(i) < kv_layers; ++i)
      n += layer_uses_sliding_window[i] ? 1 : 0;
    return n;
  }
  std::int64_t total_params() const { return params.total(); }
  /// Parameters of the SSM (Mamba) mixers: the readers count them in params.other (Mamba, Jamba, Nemotron-H hold
  /// nothing else there); they are per-layer weights (in_proj/out_proj and the small conv/state tensors), split by
  /// TP and across pipeline stages like the attention and MLP matrices. 0 without an SSM.
  std::int64_t ssm_mixer_params() const { return ssm ? params.other : 0; }
  std::int64_t active_params() const { return params.active(); }
};

}  // namespace gpuplan
