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

namespace gpuplan {

enum class ModelFamily {
  decoder,                ///< autoregressive transformer decoder (LLM)
  diffusion_unet,         ///< SDXL-style UNet (diffusers UNet2DConditionModel)
  diffusion_transformer,  ///< FLUX-style MMDiT (diffusers FluxTransformer2DModel)
  state_space,            ///< Mamba-style SSM (parameters counted; no attention / KV cache)
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
};

/// Multi-head latent attention (DeepSeek-V2/V3, arXiv:2405.04434 §2.1).
struct MlaSpec {
  std::optional<std::int64_t> q_lora_rank;  ///< nullopt = queries not compressed
  std::int64_t kv_lora_rank = 0;            ///< d_c: compressed KV latent width (cached)
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;        ///< d_h^R: decoupled RoPE key width (cached)
  std::int64_t v_head_dim = 0;
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

  bool is_moe() const { return moe.has_value(); }
  std::int64_t total_params() const { return params.total(); }
  std::int64_t active_params() const { return params.active(); }
};

}  // namespace gpuplan
