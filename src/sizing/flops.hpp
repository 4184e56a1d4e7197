#pragma once
/// Sizing layer: floating-point operations per token of a transformer decoder, derived from
/// its shape (ModelArch), for training (forward + backward [+ recompute]) and inference.
///
/// Units: FLOP (one multiply-add = 2 FLOP), per token. Pure functions, no allocation.
///
/// Derivation (Kaplan et al. 2020, arXiv:2001.08361, Table 1; Narayanan et al. 2021,
/// arXiv:2104.04473, §5.1 / Appendix, Eq. 3):
///   forward weight matmuls  = 2 · N_matmul per token, where
///       N_matmul = active parameters − embeddings − norms (+ LM head weights when tied).
///     Embedding lookups are gathers, not matmuls, so they are excluded; the LM head (h·V)
///     IS a matmul and is included (also when tied to the input embedding). Norm weights and
///     biases are elementwise (negligible) and excluded. For MoE only the top-k routed experts
///     a token uses count (ParamBreakdown::active()); the router matmul (h·E) is included.
///   forward attention scores = per attention layer 2·2·s_eff·(H·d_qk)  [Q·Kᵀ and A·V],
///     s_eff = the average number of keys a query attends to. Causal masking: a query at
///     position i sees i keys, so s_eff = (s+1)/2 ≈ s/2 — DOCUMENTED CHOICE: we count the causal
///     half (what FlashAttention executes); Megatron's papers count the full s (their
///     "1 + s/6h" term), which is ~1–3% more at s = 2048. Sliding-window layers use
///     min(s_eff, window). MLA uses d_qk = qk_nope + qk_rope for scores and v_head_dim for A·V.
///   backward = 2 × forward (gradients w.r.t. activations and w.r.t. weights; Kaplan Table 1).
///   full recompute re-runs the forward once more: 4 × forward = 8·N instead of 6·N
///     (Narayanan et al. 2021 Eq. 3 uses this 4-pass count). Selective recompute re-runs only
///     the attention-score part (Korthikanti et al. 2022, arXiv:2205.05198 §5).
///   LoRA / QLoRA (frozen base weights): backward still computes activation gradients through
///     every frozen matmul (1 × forward) but no weight gradients for them: 2·N (fwd) + 2·N
///     (activation grads) = 4·N per token instead of 6·N (Hu et al. 2021, arXiv:2106.09685 §4
///     reports ~25% faster training than full fine-tuning for GPT-3, consistent with 4/6 of
///     the matmul work plus fixed overheads). The adapters' own FLOPs (rank r ≪ h) are neglected.
/// Non-decoder families (diffusion, SSM): the matmul term uses 2·N_active; attention is 0
/// (use diffusion_perf.hpp for diffusion models).
#include <cstdint>

#include "model/model_arch.hpp"
#include "sizing/memory.hpp"

namespace gpuplan {

/// FLOPs per token, split into named terms: total_flop = dense_matmul_flop + attention_flop.
struct FlopsPerToken {
  double dense_matmul_flop = 0;  ///< weight matmuls incl. LM head, excl. embeddings/norms
  double attention_flop = 0;     ///< Q·Kᵀ and A·V (causal half, sliding window capped)
  double total_flop = 0;
};

/// The model's LayerGeometry when it matches the model (non-empty, same layer count and the same
/// parameter total as arch.params — i.e. not left stale by a shape edit without finalize_arch()),
/// else nullptr (callers then derive from the shape fields).
const LayerGeometry* current_geometry(const ModelArch& arch);

/// Weight-matmul parameters of one token's forward pass (see header comment): read from the
/// model's LayerGeometry (Σ layers · active copies · d_in · d_out over its matrices, the tied LM
/// head included, biases excluded); without a geometry, active params minus embeddings and norms,
/// plus the LM head when it is tied to the embeddings.
double matmul_params_per_token(const ModelArch& arch);

/// Forward pass FLOPs per token for a sequence of `seq_len` tokens processed together
/// (training, prefill): 2·N_matmul + attention at s_eff = (seq_len+1)/2 (causal).
/// seq_len <= 0 is treated as 1.
FlopsPerToken forward_flops_per_token(const ModelArch& arch, std::int64_t seq_len);

/// FLOPs the hardware executes per trained token: forward × (3 full training, 2 with frozen
/// base weights [LoRA/QLoRA]) + recomputation (full: + 1 forward; selective: + attention
/// forward; none: + 0). `task` distinguishes full training from LoRA/QLoRA.
/// Under Recompute::selective, `modules` are Megatron-Core's recompute_modules (memory.hpp
/// RecomputeModule; 0 = {core_attn}): core_attn re-runs the attention core forward, mla_up_proj the
/// MLA up projections (q_b_proj, kv_b_proj: 2·d_in·d_out per token and MLA layer), mlp the dense
/// MLP GEMMs (2·d_in·d_out per matrix and dense layer); layernorm and moe_act re-run element-wise
/// kernels only (no matmul FLOPs; their memory traffic is perf.hpp's recompute_modules_bytes_per_token).
FlopsPerToken training_flops_per_token(const ModelArch& arch, std::int64_t seq_len, Recompute recompute,
                                       Task task, RecomputeModules modules = 0);

/// "Model FLOPs" per token used for MFU (Chowdhery et al. 2022, PaLM, Appendix B): the
/// training FLOPs WITHOUT recomputation (3 × forward, or 2 × forward for LoRA/QLoRA).
FlopsPerToken model_training_flops_per_token(const ModelArch& arch, std::int64_t seq_len, Task task);

/// FLOPs to generate ONE token at decode time when the sequence already holds
/// `context_tokens` tokens (KV cache): 2·N_matmul + attention over min(context, window) keys.
FlopsPerToken inference_flops_per_token(const ModelArch& arch, std::int64_t context_tokens);

/// Total FLOPs to prefill a prompt of `prompt_tokens` tokens (= forward_flops_per_token ×
/// prompt_tokens).
double prefill_flops(const ModelArch& arch, std::int64_t prompt_tokens);

}  // namespace gpuplan
