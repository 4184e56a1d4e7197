#pragma once
/// Sizing layer: GPU memory of training and serving a model, per GPU, as a breakdown of named
/// terms that ADD UP to the total (never a max of terms).
///
/// Units: bytes (SI inside the engine; GiB = 2^30 only when printing). Token counts and layer
/// counts are int64. Every function here is pure: no IO, no global state.
///
/// Sources of the formulas (each term's explanation repeats the one it uses):
///  [ZeRO]   Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion
///           Parameter Models", arXiv:1910.02054 §3.1 (mixed-precision Adam = 2Ψ + 2Ψ + KΨ with
///           K = 12, i.e. 16 bytes/param) and §5.1 / Fig. 1 (stage 1 divides the optimizer state,
///           stage 2 also the gradients, stage 3 also the parameters by the DP degree N_d).
///  [Korth]  Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
///           Models", arXiv:2205.05198 §4.1 Eq. 1 (sbh(34 + 5as/h) bytes per layer, 16-bit,
///           with dropout), Eq. 2 (TP without SP: sbh(10 + 24/t + 5as/(ht))), Eq. 3-4 / Table 2
///           (TP+SP: /t; selective recompute drops the 5as/h term; full recompute 2sbh per
///           layer), §4.2.3 (first pipeline stage holds p micro-batches of L/p layers; the
///           interleaved schedule multiplies by 1 + (p-1)/(p·m)).
///  [FA]     Dao et al. 2022, "FlashAttention", arXiv:2205.14135 §3.1: the s×s attention matrix is
///           never stored, only the output and the softmax statistics (logsumexp, fp32, per row).
///  [8bit]   Dettmers et al. 2021, "8-bit Optimizers via Block-wise Quantization",
///           arXiv:2110.02861 §2: Adam's two states in 8 bits (2 bytes/param) + block constants.
///  [Adafac] Shazeer & Stern 2018, "Adafactor", arXiv:1804.04235 §3: factored second moment,
///           rows + cols values per matrix; no first moment by default (β1 = 0).
///  [Lion]   Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms", arXiv:2302.06675
///           §2: one momentum state.
///  [LoRA]   Hu et al. 2021, arXiv:2106.09685 §4: ΔW = BA, A ∈ R^{r×k}, B ∈ R^{d×r}:
///           r·(d_in + d_out) trainable parameters per adapted matrix.
///  [QLoRA]  Dettmers et al. 2023, "QLoRA", arXiv:2305.14314 §3: NF4 with block 64 absmax
///           (32 bits / 64 = 0.5 bits/param), double quantisation lowers the constants to
///           8/64 + 32/(64·256) = 0.127 bits/param.
///  [GGUF]   ggml-org/llama.cpp ggml/src/ggml-common.h block layouts: Q8_0 = 32 int8 + one fp16
///           scale per 32 weights = 8.5 bits/weight; Q4_K = 4.5 bpw, Q6_K = 6.5625 bpw; the
///           Q4_K_M mix (Q4_K with Q6_K for attn_v / ffn_down halves and the output) averages
///           ≈ 4.85 bpw (tools/quantize README table, Llama-3.1-8B: 4.89 bpw; we use 4.85).
///           block_q4_0 = fp16 d + 16 bytes of nibbles per 32 weights = 18 B / 32 = 4.5 bpw;
///           block_q2_K = scales[16] + qs[64] + fp16 d + fp16 dmin per 256 weights = 84 B / 256 = 2.625 bpw.
///  [MX]     OCP Microscaling Formats (MX) v1.0 §5: MXFP4 = 32 FP4 (E2M1) elements sharing one 8-bit E8M0
///           scale = 4 + 8/32 = 4.25 bits/element (ggml block_mxfp4: 1 + 16 bytes per 32).
///  [GPTQ]   Frantar et al. 2022, arXiv:2210.17323 / AWQ (Lin et al. 2023, arXiv:2306.00978):
///           int4 with one fp16 scale per group of 128 → 4 + 16/128 = 4.125 bits/weight.
///  [KV]     Pope et al. 2022, "Efficiently Scaling Transformer Inference", arXiv:2211.05102
///           §2: KV cache = 2 · layers · kv_heads · head_dim · tokens · bytes (GQA/MQA
///           shrink kv_heads); [MLA] DeepSeek-V2 arXiv:2405.04434 §2.1.4, Table 1: MLA caches
///           (d_c + d_h^R) = kv_lora_rank + qk_rope_head_dim values per layer per token.
///  [Torch]  CUDA context: PyTorch "CUDA semantics" notes / HF Transformers "Model training
///           anatomy" (docs: the CUDA kernels alone take 1-2 GB; with CUDA ≥ 11.7 lazy module
///           loading it is ≈ 0.3-0.6 GiB on Hopper). Default 0.75 GiB (see kDefault...).
///  [Alloc]  PyTorch caching allocator reserves more than it allocates (block rounding, split
///           blocks). The slack scales with what is allocated and freed every step (activations,
///           logits, workspace, optimizer temporaries), not with the model states: over our 27
///           H200 cases (tests/data/h200-measurements.jsonl) (reserved − allocated) / dynamic
///           allocations is 0.01-0.64 (gpt2 serving 1.19), median 0.14, mean 0.27; default 0.20.
///
/// Errors: validate() and the sizing functions throw gpuplan::Error{invalid_input} for
/// impossible requests (non-positive sizes, tp not dividing the heads, QLoRA with fp32...).
/// Soft problems (ZeRO-3 on one GPU, more TP than KV heads) are warnings in the breakdown.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_arch.hpp"

namespace gpuplan {

class GpuCatalog;
struct GpuSpec;

// ---------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------

/// What the GPUs do with the model.
enum class Task {
  pretrain,  ///< training from scratch: full weights, gradients, optimizer state
  full,      ///< full fine-tuning: same memory as pretrain
  lora,      ///< LoRA: frozen 16-bit base + trainable adapters [LoRA]
  qlora,     ///< QLoRA: frozen NF4 base + trainable adapters [QLoRA]
  serve,     ///< inference serving: weights + KV cache
};

/// Training numerics: what the weights, gradients and master copy are stored in.
enum class TrainPrecision {
  fp32,        ///< weights/grads fp32 (4+4 bytes), no master copy
  tf32,        ///< as fp32 for storage (TF32 is a matmul mode)
  bf16_mixed,  ///< bf16 weights+grads (2+2) + fp32 master weights (4) [ZeRO §3.1]
  bf16_pure,   ///< bf16 weights+grads, optimizer states in bf16 too, no master copy
               ///< (torch.optim keeps state in the parameter dtype)
  fp16_mixed,  ///< fp16 weights+grads + fp32 master (as in the ZeRO paper)
  fp8_mixed,   ///< Transformer-Engine FP8: bf16 weights + an fp8 copy (1 byte) + fp32 master;
               ///< activations counted in 16 bits (conservative)
};

enum class Optimizer {
  adamw,         ///< two fp32 states (m, v): 8 bytes/param (+4 master when mixed) [ZeRO]
  adamw_8bit,    ///< block-wise 8-bit m, v: 2 bytes/param [8bit]
  sgd_momentum,  ///< one momentum state
  adafactor,     ///< factored second moment: 4·(rows + cols) bytes per matrix [Adafac]
  lion,          ///< one momentum state [Lion]
};

/// Activation recomputation (gradient checkpointing) [Korth §5].
enum class Recompute {
  none,       ///< keep every activation
  selective,  ///< recompute the attention core (drops the 5as/h term)
  full,       ///< keep only each layer's input (2sbh) and recompute the layer in backward
  /// torchtitan's per-op selective AC (activation_checkpoint.mode "selective", selective_ac_option "op";
  /// _save_list in parallelize_llama.py, torchtitan 9dec370 / e7c0cae): torch.utils.checkpoint keeps the layer
  /// input; the policy MUST_SAVEs the outputs of aten.mm (odd-numbered calls only: per Llama layer wq, wv, w1,
  /// w2 of wq wk wv wo w1 w3 w2), the SDPA flash/efficient outputs (output + fp32 logsumexp) and
  /// reduce_scatter; everything else (norms, RoPE, SiLU, the other mm outputs) is recomputed in backward.
  /// Dense Llama per token per layer, 16-bit, no TP: 2h + 2·q + 2·v + 2·o + 4·a + 2f + 2h bytes.
  op_selective,
};

/// Megatron-Core's selective recompute modules (TransformerConfig.recompute_modules with
/// recompute_granularity "selective", Megatron-LM d98e8a64dd transformer_config.py), as bits of a
/// set (RecomputeModules). They apply under Recompute::selective only; an empty set there means
/// Megatron-Core's default, {core_attn}. What each one stops saving, per token of a layer:
///   core_attn   the attention core is re-run in backward (with FlashAttention nothing more is
///               dropped: its scores are never stored; without, the s×s scores);
///   layernorm   output-discarding checkpoint of the separate norms: the pre-MLP norm of MoE
///               layers (its output, the router's and the dispatch's input) and, in MLA layers,
///               the input norm (the down projections' input). Other attention layers fuse the
///               input norm into the QKV GEMM (TE LayerNormLinear): nothing to drop there.
///               Under FP8 the linear keeps a reference to the original input
///               (set_save_original_input), so the quantized copy goes too;
///   moe_act     output-discarding checkpoint of the routed experts' activation: the second
///               expert GEMM's input (k·f_e per token) is recomputed from the first one's output;
///   mla_up_proj output-discarding checkpoint of the MLA up projections + RoPE: Q, K, V as the
///               attention core reads them (multi_latent_attention.py qkv_up_checkpoint);
///   mlp         normal checkpoint of the dense MLP (not MoE layers): its input is kept, its
///               GEMM inputs and intermediates are not.
/// The recomputation costs time: sizing/perf.hpp recompute_modules_* terms.
enum class RecomputeModule : unsigned {
  core_attn = 1u << 0,
  layernorm = 1u << 1,
  moe_act = 1u << 2,
  mla_up_proj = 1u << 3,
  mlp = 1u << 4,
};
/// A set of RecomputeModule bits; 0 = none given.
using RecomputeModules = unsigned;
constexpr bool has_module(RecomputeModules set, RecomputeModule m) noexcept {
  return (set & static_cast<unsigned>(m)) != 0;
}
/// The set in effect: `set` under Recompute::selective (Megatron-Core's default {core_attn} when
/// empty), none under the other modes.
constexpr RecomputeModules effective_recompute_modules(Recompute r, RecomputeModules set) noexcept {
  if (r != Recompute::selective) return 0;
  return set != 0 ? set : static_cast<unsigned>(RecomputeModule::core_attn);
}
/// "layernorm,moe_act" (Megatron-Core's names, in the enum's order); "" for the empty set.
std::string recompute_modules_name(RecomputeModules set);
/// Comma-separated Megatron-Core module names (spaces allowed, case-insensitive, '-' = '_'), at
/// least one. Throws Error{invalid_input, where} (unknown_choice, with the list) for anything else.
RecomputeModules parse_recompute_modules(std::string_view s, const std::string& where);

/// Refuses a non-empty `set` outside Megatron-Core's selective recompute (Error{invalid_input} at
/// --recompute-modules): recompute_modules_needs_megatron when the run is not Megatron's
/// (`megatron` false), recompute_modules_needs_selective when `pinned` is another recompute mode.
/// The one check plan, estimate and size apply.
void check_recompute_modules_mode(RecomputeModules set, bool megatron, std::optional<Recompute> pinned);
/// Refuses a module the model has nothing for (Error{invalid_input} at `where`, code
/// recompute_module_not_in_model with {module, model}): moe_act without routed experts,
/// mla_up_proj without MLA, mlp without a dense-MLP layer, layernorm without an MoE or MLA layer
/// (other layers fuse the norm into the next GEMM). Megatron-Core itself refuses the first two.
void check_recompute_modules_apply(const ModelArch& arch, RecomputeModules set, const std::string& where);
/// The selective recompute modules NVIDIA's Megatron-Bridge recipes set for a model like `arch`:
/// {mla_up_proj} for a model with MLA layers (DEEPSEEK_V3_PRETRAIN_CONFIG_B200/B300_FP8_MX_V2,
/// v0.3.0 … v0.5.0), else {layernorm, moe_act} for a model with routed experts
/// (GPT_OSS_120B_PRETRAIN_CONFIG_H100/B200_BF16_V2, v0.3.0 … v0.4.2); 0 for a dense model (the Llama recipes
/// of those tables recompute nothing). Each row's tag and config: tests/data/published-throughput.jsonl
/// recipe_at_release (its PROVENANCE file). The planner tries this set under --stack
/// megatron when neither a recompute mode nor modules are given (planner.hpp search order).
RecomputeModules recipe_recompute_modules(const ModelArch& arch) noexcept;

/// Storage format of served (or QLoRA-frozen) weights; bits per weight documented per value.
enum class WeightQuant {
  bf16,         ///< 16 bits
  fp16,         ///< 16 bits
  fp8,          ///< 8 bits (per-tensor/per-channel scales: negligible)
  int8,         ///< 8 bits (per-channel scales: negligible; LLM.int8 / W8A8)
  int4,         ///< 4 + 16/128 = 4.125 bits (fp16 scale per group of 128) [GPTQ]
  nf4,          ///< 4 + 0.127 bits with double quantisation, 4.5 without [QLoRA §3]
  gguf_q4_k_m,  ///< ≈ 4.85 bits averaged over the whole file [GGUF]
  gguf_q8_0,    ///< 8.5 bits (32 int8 + fp16 scale per block) [GGUF]
  gguf_q4_0,    ///< 4.5 bits (32 4-bit + fp16 scale per block) [GGUF]
  gguf_q2_k,    ///< 2.625 bits (84 bytes per 256-weight super-block) [GGUF]
  mxfp4,        ///< 4.25 bits (32 E2M1 + one E8M0 scale per block) [MX] (gpt-oss stores its experts so)
};

/// Storage format of the KV cache.
enum class KvDtype {
  bf16,  ///< 2 bytes
  fp16,  ///< 2 bytes
  fp8,   ///< 1 byte (vLLM --kv-cache-dtype fp8)
  int8,  ///< 1 byte
  int4,  ///< 4 + 16/128 bits (fp16 scale per 128 values)
  q8_0,  ///< 34 bytes per 32 values = 1.0625 bytes (llama.cpp --cache-type-k/v q8_0, block_q8_0) [GGUF]
};

/// Names as used on the command line and in JSON ("bf16_mixed", "adamw_8bit", ...).
std::string_view task_name(Task t) noexcept;
std::string_view train_precision_name(TrainPrecision p) noexcept;
std::string_view optimizer_name(Optimizer o) noexcept;
std::string_view recompute_name(Recompute r) noexcept;
std::string_view weight_quant_name(WeightQuant q) noexcept;
std::string_view kv_dtype_name(KvDtype k) noexcept;

/// Parsers accept the names above plus common aliases ("fft"/"full_ft" → full, "bf16" →
/// bf16_mixed, "adam" → adamw, "q4_k_m" → gguf_q4_k_m, "awq"/"gptq" → int4, "fp8_e4m3" → fp8,
/// case-insensitive, '-' = '_'). Throw Error{invalid_input, where, expected = the list}.
Task parse_task(std::string_view s, const std::string& where);
TrainPrecision parse_train_precision(std::string_view s, const std::string& where);
Optimizer parse_optimizer(std::string_view s, const std::string& where);
Recompute parse_recompute(std::string_view s, const std::string& where);
WeightQuant parse_weight_quant(std::string_view s, const std::string& where);
KvDtype parse_kv_dtype(std::string_view s, const std::string& where);

/// Bits per weight of a storage format (see WeightQuant). For nf4 `double_quant` selects
/// 4.127 (true) or 4.5 (false) [QLoRA §3]; other formats ignore it.
double weight_quant_bits(WeightQuant q, bool double_quant = true) noexcept;
/// Bytes per cached K or V element.
double kv_dtype_bytes(KvDtype k) noexcept;

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/// Whose saved tensors the activation model counts (the same network saves different tensors
/// in different implementations; see docs/sizing.md for the per-tensor list).
enum class ActivationProfile {
  /// PyTorch eager modules as in HF Transformers / PEFT / torchtune: RMSNorm upcasts to fp32 and
  /// saves the fp32 input (6h per norm; Gemma 8h), o_proj saves a contiguous copy of the SDPA
  /// output, the loss upcasts the logits to fp32 (2 + 4 + 4 + 4 B per vocabulary entry at the
  /// start of backward), PEFT casts each adapted matrix's input to the adapter dtype (fp32).
  pytorch_eager,
  /// Megatron-LM fused kernels as counted by Korthikanti et al. 2022 Eq. 1 (2h per norm,
  /// 2 + 4 + 4 B per vocabulary entry). Reproduces the paper's Table 2 / Figure 1.
  megatron,
  /// The same PyTorch modules under torch.compile (torchtune `compile: True`: each decoder layer
  /// and the loss compiled). AOTAutograd's min-cut partitioner (torch/_functorch/partitioners.py,
  /// solve_min_cut / should_ban_recomputation with the default config) saves only what it may
  /// not recompute: outputs of mm / attention (compute-intensive), reductions whose output is 4x
  /// smaller than their input (RMSNorm's rstd, the loss's max and log-sum-exp), and pointwise
  /// results a backward mm reads (is_materialized_backwards: the normed block inputs, the o_proj
  /// contiguous copy, SwiGLU's gate·up product). Pointwise results only pointwise backward ops
  /// read are recomputed. Per layer this drops, from the eager list: the fp32 norm input (each norm
  /// keeps its 16-bit input: 2h), SwiGLU's silu output (gated MLP 4f + 2f) and gelu_new's
  /// Python intermediates; PEFT's fp32 input casts of one input are one tensor (the joint graph is
  /// CSE'd). The compiled loss saves its input logits and per-token reductions only: with chunks
  /// (torchtune compiles compute_cross_entropy, which upcasts inside) the gradient of one chunk in
  /// the logits' dtype; unchunked (torchtune upcasts in the model, outside the compiled loss) the
  /// fp32 logits it was given and their fp32 gradient (2 + 4 + 4 B per vocabulary entry); when the
  /// loss upcasts inside (torchtitan, logits_upcast_in_loss) the 16-bit logits and their 16-bit grad (2 + 2 B).
  pytorch_compiled,
};
std::string_view activation_profile_name(ActivationProfile p) noexcept;
ActivationProfile parse_activation_profile(std::string_view s, const std::string& where);

/// Layers of saved activations that stay on the GPU with offload_activations (current + prefetch).
inline constexpr double kOffloadedActivationLayers = 2.0;
/// Values per quantisation block of blockwise 8-bit optimizer states: each block of each state
/// (AdamW: m and v, uint8 codes) keeps one fp32 absmax, so 8-bit AdamW holds 2 + 2·4/256 B per
/// parameter. bitsandbytes Optimizer2State.init_state (bitsandbytes/optim/optimizer.py) uses
/// blocks of 256 since 0.44.0 (commit aa57bd89, "Change 8bit optimizer blocksize 2048->256",
/// 2024-09-20; 2048 before); torchao's AdamW8bit defaults to block_size=256
/// (torchao/prototype/low_bit_optim/adam.py at 0d7edae96). The 256 shared quantile-map values
/// per optimizer (bitsandbytes name2qmap) and the fp32 states of tensors under 4,096 values
/// (min_8bit_size: norm weights) are not counted (kilobytes).
inline constexpr double kOptimizer8bitBlockValues = 256.0;

/// The training stack whose memory behaviour the request follows by default (`--stack`).
/// apply_stack_defaults() sets what each stack does out of the box:
///   hf        HF Transformers Trainer (+ PEFT): eager PyTorch activations, torch.optim AdamW
///             foreach step temporary, full logits in fp32, no ZeRO.
///   fsdp      PyTorch FSDP2 (torchtitan, accelerate FSDP): ZeRO-3-equivalent full shard, eager
///             activations, foreach AdamW.
///   deepspeed DeepSpeed ZeRO-2 (the common HF integration config): fused Adam, fp32 gradient
///             partition (fp32_grad_partition).
///   megatron  Megatron-LM / Megatron-Core: fused kernels (ActivationProfile::megatron),
///             distributed optimizer (ZeRO-1), fp32 main_grad accumulation (Megatron-Core's default
///             grad_reduce_in_fp32; the planner's --grads-16bit turns it off), sequence parallel
///             with TP, fused Adam.
///   unsloth   Unsloth: chunked (fused) cross-entropy, CPU-offloaded gradient checkpointing
///             (recompute full + offload_activations), 8-bit AdamW (its notebooks' default).
enum class TrainingStack { hf, fsdp, deepspeed, megatron, unsloth };
std::string_view training_stack_name(TrainingStack s) noexcept;
/// "hf" (also "transformers"), "fsdp", "deepspeed", "megatron", "unsloth". Throws
/// Error{invalid_input, where, expected list}.
TrainingStack parse_training_stack(std::string_view s, const std::string& where);
/// Refuses a task the stack does not run: QLoRA (bitsandbytes NF4 base weights) on megatron —
/// Megatron-Bridge lists QLoRA under "Future Enhancements" and does not install bitsandbytes
/// (src/megatron/bridge/models/README.md, docker/common/fw_pyproject.toml at 067f987df).
/// Throws Error{invalid_input, "--stack", code qlora_stack_unsupported}.
void check_stack_runs_task(TrainingStack stack, Task task);
struct TrainingMemoryRequest;
/// Overwrites the stack-controlled fields of `r` with the stack's defaults (listed above).
/// Callers apply explicit user choices afterwards.
void apply_stack_defaults(TrainingStack stack, TrainingMemoryRequest& r);
/// The optimizer a stack uses out of the box (apply_stack_defaults): Unsloth 8-bit AdamW, the
/// others AdamW.
Optimizer stack_default_optimizer(TrainingStack stack) noexcept;

/// Defaults shared by training and serving (documented above, [Torch] and [Alloc]).
/// Bytes per token per dense decoder layer that torchtitan's per-op selective activation
/// checkpointing keeps (Recompute::op_selective; _save_list in parallelize_llama.py at 9dec370 /
/// e7c0cae), 16-bit activations, `tp` tensor-parallel ranks:
///   the checkpointed layer input 2h (/tp with sequence parallelism);
///   the odd aten.mm outputs wq (2·q_width), wv (2·v_width), w1 (2·f) and the SDPA output
///   (2·o_in_width) with its fp32 logsumexp (4·heads), column-parallel (/tp);
///   eager: w2's mm output (2h, the row-parallel partial sum, full width) and with TP the
///   reduce_scatter outputs of wo and w2 (2h/tp each).
/// `compiled` (torch.compile over the checkpointed block, ActivationProfile::pytorch_compiled):
/// the policy's MUST_SAVE tags only ban those ops from recompute in the min-cut partitioner
/// (torch/_functorch/partitioners.py should_ban_recomputation); saved values are the cut between
/// the forward and what the backward reads, so an output no backward reads is never kept. w2's
/// output and its reduce_scatter only feed the residual add, whose backward reads no input:
/// eager SAC caches them (torch/utils/checkpoint.py _CachingTorchDispatchMode stores every
/// MUST_SAVE output), the compiled block does not (−2h, and −2h/tp with TP).
/// Pure; every width in elements, result in bytes.
double op_selective_saved_bytes_per_token(double h, double q_width, double v_width, double f, double o_in_width,
                                          double heads, double tp, bool sequence_parallel, bool compiled);

/// Longest training sequence a request may ask for (tokens): TrainingMemoryRequest::validate refuses
/// --seq above it (integer_out_of_range); 10^7 tokens is beyond every published context length.
inline constexpr std::int64_t kMaxTrainingSeqLenTokens = 10'000'000;
/// Ranges of the layout integers TrainingMemoryRequest::validate (and the planner's pins) accept;
/// the API's field readers quote them for values too large to read (api/fields.hpp json_at_most).
inline constexpr int kMaxParallelDegree = 1024;        ///< tp, pp, ep, virtual stages, expert tp
inline constexpr int kMaxDataParallel = 1'000'000;     ///< dp
inline constexpr int kMaxMicroBatchSeqs = 1'000'000;   ///< sequences per micro-batch (size)
inline constexpr int kMaxLoraRank = 65536;             ///< LoRA rank r
inline constexpr double kDefaultCudaContextBytes = 0.75 * 1073741824.0;  ///< 0.75 GiB per GPU
inline constexpr double kDefaultFragmentationFraction = 0.20;            ///< of the per-step allocations
inline constexpr double kDefaultFitMargin = 0.10;  ///< requirement ≤ (1 − margin) × capacity

/// How the model is split across GPUs (Megatron-LM / DeepSpeed conventions).
/// gpus() = tp · pp · dp. Expert parallelism is carved out of DP (Megatron-Core): ep must
/// divide dp; expert weights are divided by tp · ep and ZeRO-sharded over dp / ep.
struct ParallelLayout {
  int tp = 1;              ///< tensor-parallel degree t
  int pp = 1;              ///< pipeline-parallel degree p
  int dp = 1;              ///< data-parallel degree N_d
  int ep = 1;              ///< expert-parallel degree (MoE only)
  /// Expert tensor-parallel degree (Megatron-Core expert_tensor_parallel_size): how many GPUs
  /// split each routed expert's matrices. 0 = tp (Megatron-Core's default when unset). The
  /// MoE layers regroup the tp·dp GPUs of a pipeline stage as etp × ep × edp (rank order
  /// etp → ep → edp), so EP may span the TP ranks (etp 1 < tp); the attention and dense parts
  /// keep tp × dp. Needs tp·dp divisible by etp·ep (Megatron-Core: world size divisible by
  /// pp·etp·ep; NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/qwen/
  /// qwen3_workload_base_configs.py runs Qwen3-235B on H100 as tp 2, ep 32, etp 1).
  int expert_tp = 0;
  int zero_stage = 0;      ///< 0-3 [ZeRO]; FSDP full shard = 3, FSDP SHARD_GRAD_OP = 2
  bool sequence_parallel = false;  ///< Megatron SP: norms/dropout activations also split by t
  int micro_batch = 1;     ///< b: sequences per micro-batch per GPU
  int in_flight_micro_batches = 0;  ///< micro-batches whose activations the first stage holds; 0 = pp (1F1B)
  int virtual_stages = 1;  ///< m: interleaved-schedule model chunks per GPU [Korth §4.2.3]
  bool offload_optimizer = false;  ///< ZeRO-Offload / FSDP CPU offload: optimizer state (and fp32 master) on CPU
  bool offload_params = false;     ///< ZeRO-Infinity / FSDP CPU offload of parameters (+ gradients)
  int gpus() const { return tp * pp * dp; }
  /// The expert tensor-parallel degree in force (expert_tp, or tp when 0).
  int etp() const { return expert_tp > 0 ? expert_tp : tp; }
  /// Whether the tp·dp GPUs of a stage split into etp × ep × edp (the expert layout exists).
  /// Whether expert TP 1 makes ep divide where etp = tp does not: tp > 1 and ep divides tp × dp
  /// (the EP group then spans the TP ranks); said in the errors of an EP not dividing DP.
  static bool expert_tp_one_divides(int tp, int dp, int ep) {
    return tp > 1 && ep > 0 && (static_cast<long long>(tp) * dp) % ep == 0;
  }
  bool expert_grid_divides() const {
    const long long ranks = static_cast<long long>(tp) * dp, grid = static_cast<long long>(etp()) * ep;
    return grid > 0 && ranks % grid == 0;
  }
  /// Expert-data-parallel degree: replicas of each expert shard, tp·dp / (etp·ep) (= dp/ep when
  /// etp = tp). Expert gradients are reduced, and under ZeRO their states sharded, over these.
  int edp() const { return expert_grid_divides() ? (tp * dp) / (etp() * ep) : 1; }
};

/// One training configuration. seq_len and layout.micro_batch give the tokens per micro-batch.
struct TrainingMemoryRequest {
  Task task = Task::full;  ///< pretrain, full, lora or qlora (serve is rejected)
  TrainPrecision precision = TrainPrecision::bf16_mixed;
  Optimizer optimizer = Optimizer::adamw;
  std::int64_t seq_len = 2048;  ///< s, tokens per sequence
  ParallelLayout layout;
  /// Decoder layers held by each pipeline rank (layout.pp entries summing to the model's layers;
  /// the planner's --pp-layers, TrainingStepRequest::pipeline_stage_layers). Empty = ceil(L/pp)
  /// per rank, and only the first and the last rank are sized (the middle ones hold fewer
  /// micro-batches). Given: every rank i is sized with its own layers and, under 1F1B, pp − i
  /// micro-batches in flight (the first rank: in_flight_micro_batches when set), and the largest
  /// is reported. A list whose length is not layout.pp is not used (the planner refuses such a
  /// --pp-layers as pp_layers_count; its internal layouts at another pp fall back to the split).
  std::vector<int> pipeline_stage_layers;
  Recompute recompute = Recompute::none;
  /// Megatron-Core recompute_modules under Recompute::selective (RecomputeModule; 0 = {core_attn}).
  RecomputeModules recompute_modules = 0;
  bool flash_attention = true;   ///< [FA]: no s×s attention matrices stored
  bool dropout = false;          ///< dropout masks stored (Korthikanti counts them; Llama-style LLMs train without)
  ActivationProfile activation_profile = ActivationProfile::pytorch_eager;
  /// Gradients are held during forward/backward (gradient accumulation over micro-batches, DDP
  /// buckets, Megatron main_grad, FSDP sharded grads). false = a single-GPU loop with one
  /// micro-batch per step and zero_grad(set_to_none=True): the forward/backward peak holds no
  /// gradients (they only coexist with the optimizer step).
  bool gradients_persist = true;
  /// torch.optim foreach implementation (PyTorch's default on CUDA when fused is not asked for):
  /// the step allocates one parameter-sized temporary in the optimizer's dtype (measured:
  /// tests/data/h200-measurements). false = fused optimizer (Megatron, DeepSpeed, fused=True).
  bool optimizer_foreach = false;
  /// The optimizer steps each parameter as soon as its gradient is ready (torchtune
  /// optimizer_in_bwd, PyTorch register_post_accumulate_grad_hook): only one parameter's
  /// gradient exists at a time (the largest matrix is counted) and there is no separate step peak.
  bool optimizer_in_backward = false;
  bool fp32_grad_accumulation = false;  ///< gradients kept in fp32 (Megatron main_grad: 4 B/param, 18 B/param total)
  bool chunked_cross_entropy = false;  ///< loss computed in chunks: no full-vocabulary fp32 copies
  /// Saved activations (with full recompute: the layer-input checkpoints) are copied to CPU
  /// memory as the forward proceeds and brought back for the backward (torchtune
  /// enable_activation_offloading, Unsloth "unsloth" gradient checkpointing): the GPU keeps
  /// kOffloadedActivationLayers layers' worth (the one in use and the one being transferred).
  bool offload_activations = false;
  /// DeepSpeed ZeRO-1/2 with bf16/fp16: the optimizer keeps an fp32 gradient accumulation
  /// partition of 4 B per parameter / dp beside the 16-bit gradients (DeepSpeed
  /// bf16_optimizer / stage_1_and_2 `single_partition_of_fp32_groups` gradients).
  bool fp32_grad_partition = false;
  std::int64_t cross_entropy_chunk_tokens = 1024;  ///< tokens per chunk when chunked
  /// GQA models: the framework copies K and V to the query heads before attention, so attention
  /// saves them at q width (2·q B per token each instead of 2·kv_heads·head_dim). torchtune's
  /// MultiHeadAttention does (torchtune/modules/attention.py, `k.expand(...)` + `reshape`, v0.3
  /// 30b8519e8; `unsqueeze(2).expand(...).flatten(1, 2)` from 1814feb17 to bd2a0fc7c), eager or
  /// compiled: the copy is an aten.clone read by the attention backward, which torch.compile's
  /// partitioner keeps (ban_if_materialized_backward). false = attention reads the kv heads as
  /// they are (SDPA enable_gqa, FlashAttention; Hugging Face transformers' sdpa_attention_forward
  /// when it passes no mask, use_gqa_in_sdpa).
  bool kv_expanded_for_attention = false;
  /// The training loop still holds the model's returned 16-bit logits while backward runs (a loop
  /// that keeps `out = model(...)` and calls `out.loss.backward()`, as scripts/measure/
  /// measure_memory.py does). false: they are dropped before backward (torchtune's recipes
  /// `del logits`; Hugging Face Trainer.compute_loss returns the loss only). Matters with full
  /// recompute, whose recomputed layer comes after the loss's own tensors are freed.
  bool logits_kept_through_backward = false;
  /// The loss function casts the 16-bit logits to fp32 itself, and the model returns them in 16 bits
  /// (torchtitan: torchtitan/components/loss.py at e7c0cae, `cross_entropy(pred.flatten(0, 1).float(), ...)`,
  /// torch.compile'd by build_cross_entropy_loss when training.compile is set). Read only with
  /// ActivationProfile::pytorch_compiled and an unchunked loss: the compiled loss saves the 16-bit
  /// logits it was given (its input) and per-token reductions, and its backward returns their gradient
  /// in the input's dtype — 2 + 2 B per vocabulary entry instead of the 2 + 4 + 4 of fp32 logits
  /// upcast in the model (torchtune). Eager losses and chunked losses are counted as without it.
  bool logits_upcast_in_loss = false;
  /// The final norm, the output projection and the loss run eagerly on the 16-bit logits, outside any
  /// compiled layer, and the loop drops the logits before backward: torchtitan at 9dec370 compiles each
  /// TransformerBlock only (torchtitan/parallelisms/parallelize_llama.py apply_compile) and leaves its loss
  /// eager (train.py loss_fn = cross_entropy(pred.flatten(0, 1).float(), labels), "compiling loss function
  /// causes CUDA errors, turning off for now"; `del pred` before loss.backward()). Counted at the start of
  /// backward, per token, with n = V/t logits per token under loss_parallel (else V) and B = 2 (4 in fp32):
  ///   loss: the saved fp32 log-softmax + the nll_loss gradient (aten nll_loss_backward: a zeroed fp32 [N, V])
  ///     + the log-softmax gradient (_log_softmax_backward_data: a new one) = 12·n B; with loss_parallel 16·n B
  ///     (torch/distributed/tensor/parallel/loss.py _nll_loss_and_log_softmax_backward: zeros_like(x),
  ///     exp(x), their sum and its product with the gradient, while the saved x lives: the sum and one of the
  ///     others at a time, 4 + 4 + 4 + 4); + B·n when logits_kept_through_backward;
  ///   final RMSNorm (torchtitan/models/norms.py RMSNorm, eager): the fp32 input (4h, saved by pow and mul)
  ///     and the normalised values in B (saved by the weight multiply), /t under sequence parallel;
  ///   output projection: its input (B·h), gathered over the sequence under TP (ColwiseParallel
  ///     input_layouts Shard(1) → Replicate), not /t.
  /// Replaces the activation profile's loss accounting (chunked_cross_entropy and logits_upcast_in_loss are not
  /// read); false: the profile's.
  bool eager_head_and_loss = false;
  /// TP's vocabulary-parallel loss (torch.distributed.tensor.parallel.loss_parallel): the logits stay sharded
  /// over the vocabulary; torchtitan enables it whenever tp > 1 unless --training.disable_loss_parallel
  /// (parallel_dims.py loss_parallel_enabled at 9dec370). Read with eager_head_and_loss and tp > 1 only:
  /// without it the output projection gathers the whole vocabulary on every TP rank (V, not V/t).
  bool loss_parallel = false;
  int lora_rank = 16;            ///< r
  /// Adapted matrices: any of q, k, v, o, gate, up, down (MoE experts' gate/up/down included),
  /// or "all-linear" (= all seven). Default all-linear.
  std::vector<std::string> lora_targets = {"q", "k", "v", "o", "gate", "up", "down"};
  bool qlora_double_quant = true;  ///< [QLoRA §3]: 0.127 vs 0.5 bits/param of constants
  double cuda_context_bytes = kDefaultCudaContextBytes;       ///< per GPU, [Torch]
  double fragmentation_fraction = kDefaultFragmentationFraction;  ///< × per-step allocations, [Alloc]
  /// Throws Error{invalid_input} (where = the field, e.g. "--tp") for impossible values:
  /// non-positive sizes, zero_stage ∉ [0,3], task == serve, QLoRA with fp32/tf32, ep ∤ dp.
  void validate() const;
};

/// One serving configuration: `concurrency` sequences of `context_tokens` each in the KV cache.
struct ServingMemoryRequest {
  WeightQuant quant = WeightQuant::bf16;
  KvDtype kv_dtype = KvDtype::bf16;
  std::int64_t context_tokens = 4096;   ///< prompt + generated tokens per sequence
  std::int64_t concurrency = 1;         ///< sequences resident at once
  int tp = 1;                            ///< tensor parallel: splits weights and KV heads
  int pp = 1;                            ///< pipeline parallel: splits layers
  std::int64_t prefill_chunk_tokens = 2048;  ///< tokens per prefill step (vLLM chunked prefill)
  double cuda_context_bytes = kDefaultCudaContextBytes;
  double fragmentation_fraction = kDefaultFragmentationFraction;
  /// Throws Error{invalid_input} for non-positive sizes.
  void validate() const;
};

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

/// One named memory term on one GPU. Names used: weights, gradients, optimizer_state (incl. the
/// fp32 master copy), optimizer_step_temp, activations, logits, kv_cache, lora_adapters,
/// workspace, cuda_context, fragmentation.
struct MemoryTerm {
  std::string name;
  double bytes = 0;
};

/// Per-GPU memory of the most loaded GPU; terms add up to total_bytes().
struct MemoryBreakdown {
  std::vector<MemoryTerm> terms;
  std::vector<std::string> warnings;
  double cpu_offload_bytes = 0;  ///< host (CPU) memory per GPU holding offloaded state; not in total
  std::string stage;             ///< which GPU the breakdown is for ("pipeline stage 0 of 4"), empty if pp = 1
  /// Training: the moment of the step the breakdown describes, "forward/backward" or
  /// "optimizer step" (whichever needs more; each phase's terms add up). Empty for serving.
  std::string phase;
  double total_bytes() const;
  /// Bytes of the named term, 0 when absent.
  double term_bytes(std::string_view name) const;
};

/// Training memory per GPU (the most loaded pipeline stage). Throws Error{invalid_input} for
/// invalid requests and for layouts the model cannot take (tp ∤ attention heads, pp > layers).
/// The warning of a hybrid SSM model's training memory (Jamba, Nemotron-H): each block's activations are counted as a
/// transformer layer's. `size` shows it among its warnings, `plan` and `estimate` as hybrid_activations_approximate.
std::string hybrid_activations_note(const ModelArch& m);

MemoryBreakdown training_memory(const ModelArch& arch, const TrainingMemoryRequest& req);

/// Serving memory per GPU. Throws Error{invalid_input} for invalid requests / tp ∤ heads.
MemoryBreakdown serving_memory(const ModelArch& arch, const ServingMemoryRequest& req);

/// serving_memory as a line in the sequences a replica holds, per GPU:
///   total(n) = base_bytes + n × per_sequence_bytes   for n ≥ saturated_concurrency,
/// with per_sequence_bytes = one sequence's KV cache (kv_per_sequence_bytes, at req.context_tokens)
/// + its sampler logits + their fragmentation share. It is read from serving_memory at
/// n0 = max(1, ceil(prefill_chunk_tokens / context_tokens)) and n0 + 1, where the workspace's
/// prefill chunk (min(chunk, context × n)) no longer grows: differencing n = 1 and 2 below that
/// point charged the chunk's growth to every sequence (trial50 #1: 227 instead of 361 sequences of
/// 1250 tokens for an 8B model on an H100). one_sequence_bytes = total(1), the fit check.
/// req.concurrency is ignored. Throws as serving_memory.
struct ServingMemoryLine {
  double one_sequence_bytes = 0;
  double base_bytes = 0;
  double per_sequence_bytes = 0;
  double kv_per_sequence_bytes = 0;
  /// Raw KV-cache bytes (per GPU) that fit in `usable_bytes` per GPU beside the rest: the
  /// sequences' share kv_per_sequence / per_sequence of usable − base; 0 when nothing fits.
  double kv_capacity_bytes(double usable_bytes) const;
};
ServingMemoryLine serving_memory_line(const ModelArch& arch, ServingMemoryRequest req);

/// A term's formula with the numbers filled in, and the source it comes from.
struct TermExplanation {
  std::string name;
  double bytes = 0;
  std::string formula;  ///< e.g. "2 B × 8.03e9 params / (tp 1 × pp 1) = 16.06 GB"
  std::string source;   ///< e.g. "ZeRO (Rajbhandari et al. 2020) §3.1"
};

/// Same numbers as training_memory / serving_memory, one explanation per term (same order).
/// Builds strings: call only when the user asked to see the formulas.
std::vector<TermExplanation> explain_training_memory(const ModelArch& arch, const TrainingMemoryRequest& req);
std::vector<TermExplanation> explain_serving_memory(const ModelArch& arch, const ServingMemoryRequest& req);

// ---------------------------------------------------------------------------------------------
// Fit against the GPU catalog
// ---------------------------------------------------------------------------------------------

/// The smallest count of one GPU model that holds the workload with the margin.
struct GpuFit {
  const GpuSpec* gpu = nullptr;  ///< points into the catalog passed in
  int gpu_count = 0;
  double per_gpu_bytes = 0;      ///< requirement per GPU at that count
  double capacity_bytes = 0;     ///< GpuSpec::memory_bytes
  double headroom_fraction = 0;  ///< 1 − per_gpu_bytes / capacity_bytes
  ParallelLayout layout;         ///< layout assumed at that count (training); tp/pp in serving
};

struct FitOptions {
  double margin = kDefaultFitMargin;  ///< fits when per_gpu_bytes ≤ (1 − margin) × capacity
  /// Counts tried, ascending. Counts above 8 are only tried for GPUs with a GPU-GPU link
  /// (multi-node training/serving of PCIe-only cards is not offered).
  std::vector<int> counts = {1, 2, 4, 8, 16, 32, 64};
};

/// Training: for each GPU of the catalog, the smallest count N that fits. Assumption at count
/// N: the request's tp and pp are kept (N must be a multiple of tp·pp), dp = N / (tp·pp), and
/// the weights/gradients/optimizer state are sharded over dp with the request's ZeRO stage, or
/// ZeRO-3 / FSDP full shard when the request says 0 and dp > 1 (see fit_assumption()).
/// Sorted by count, then by capacity. GPUs that never fit are absent.
std::vector<GpuFit> fitting_gpus(const ModelArch& arch, const TrainingMemoryRequest& req,
                                 const GpuCatalog& catalog, const FitOptions& options = {});
/// Serving: count N = tp · pp with tp = N / pp (N must be a multiple of pp and tp must divide
/// the attention heads). Same ordering.
std::vector<GpuFit> fitting_gpus(const ModelArch& arch, const ServingMemoryRequest& req,
                                 const GpuCatalog& catalog, const FitOptions& options = {});
/// Serving limits on one GPU of `capacity_bytes` (per GPU, before the margin) at the request's
/// tp/pp: the longest context_tokens per sequence at the request's concurrency, and the most
/// sequences at the request's context_tokens, whose per-GPU total ≤ (1 − margin) × capacity.
/// 0 when not even 1 token / 1 sequence fits (the weights alone do not). Searches up to
/// `max_tokens` (capped at the model's max_position_embeddings) / `max_sequences`. Throws what serving_memory() throws for the request itself.
struct ServingLimits {
  std::int64_t max_context_tokens = 0;  ///< at req.concurrency
  std::int64_t max_concurrency = 0;     ///< at req.context_tokens
};
ServingLimits serving_limits(const ModelArch& arch, const ServingMemoryRequest& req, double capacity_bytes,
                             double margin = kDefaultFitMargin, std::int64_t max_tokens = 10'000'000,
                             std::int64_t max_sequences = 100'000);

/// Training limits on one GPU of `capacity_bytes` (per GPU, before the margin) at the request's
/// layout, precision, recompute and stack: the longest seq_len per sequence at the request's
/// micro-batch, and the largest micro-batch at the request's seq_len, whose per-GPU peak
/// (training_memory) ≤ (1 − margin) × capacity. 0 when not even 1 token / 1 sequence fits (the
/// weights and optimizer state alone do not). Searches seq_len up to `max_tokens` (not capped at
/// the model's max_position_embeddings: a fine-tune may extend the context) and the micro-batch
/// up to `max_micro_batch`. Throws what training_memory() throws for the request itself.
struct TrainingLimits {
  std::int64_t max_seq_len = 0;      ///< at req.layout.micro_batch
  std::int64_t max_micro_batch = 0;  ///< at req.seq_len
};
TrainingLimits training_limits(const ModelArch& arch, const TrainingMemoryRequest& req, double capacity_bytes,
                               double margin = kDefaultFitMargin, std::int64_t max_tokens = 10'000'000,
                               std::int64_t max_micro_batch = 100'000);

/// One sentence stating the sharding assumption fitting_gpus makes for this request.
std::string fit_assumption(const TrainingMemoryRequest& req);
std::string fit_assumption(const ServingMemoryRequest& req);

}  // namespace gpuplan
