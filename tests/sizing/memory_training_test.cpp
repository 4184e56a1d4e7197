// Training memory: each expectation is a hand calculation written here or a paper's figure.
#include <gtest/gtest.h>

#include <cmath>

#include "model/param_count.hpp"
#include "hand_built_models.hpp"
#include "sizing/memory.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {
namespace {

using testing::deepseek_v3_mla_like;
using testing::llama_like;

/// GPT-3-style (MHA, 4h GeLU MLP, LayerNorm) as in Korthikanti et al. 2022.
ModelArch gpt_like(std::int64_t L, std::int64_t h, std::int64_t a, std::int64_t vocab = 51200) {
  ModelArch m;
  m.name = "gpt";
  m.model_type = "gpt2";
  m.num_layers = L;
  m.hidden_size = h;
  m.num_attention_heads = a;
  m.num_kv_heads = a;
  m.head_dim = h / a;
  m.intermediate_size = 4 * h;
  m.vocab_size = vocab;
  m.gated_mlp = false;
  m.norm_bias = true;
  m.tied_embeddings = true;
  m.position_encoding = PositionEncoding::learned;
  m.learned_positions = 2048;
  m.params = count_decoder_params(m);
  return m;
}

/// A model whose parameters are all in `other` (no activation model): isolates the model states.
ModelArch states_only(double params) {
  ModelArch m;
  m.name = "states";
  m.family = ModelFamily::diffusion_transformer;
  m.params.other = static_cast<std::int64_t>(params);
  return m;
}

double model_states(const MemoryBreakdown& b) {
  return b.term_bytes("weights") + b.term_bytes("gradients") + b.term_bytes("optimizer_state");
}

TEST(TrainingMemory, ZeroPaperFigure1ModelStates) {
  // ZeRO (Rajbhandari et al. 2020) Figure 1: Ψ = 7.5B, N_d = 64, K = 12:
  // baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB per device.
  TrainingMemoryRequest req;
  req.precision = TrainPrecision::fp16_mixed;
  req.optimizer_foreach = false;
  req.layout.dp = 64;
  const ModelArch m = states_only(7.5e9);
  const double expected[4] = {120e9, 31.4e9, 16.6e9, 1.9e9};
  for (int stage = 0; stage <= 3; ++stage) {
    req.layout.zero_stage = stage;
    EXPECT_NEAR(model_states(training_memory(m, req)), expected[stage], 0.05e9) << "stage " << stage;
  }
}

TEST(TrainingMemory, OptimizerStateBytesPerParam) {
  const ModelArch m = states_only(1e9);
  TrainingMemoryRequest req;
  req.optimizer_foreach = false;
  // bf16 mixed AdamW: 4 (fp32 master) + 8 (m, v) = 12 B/param.
  EXPECT_DOUBLE_EQ(training_memory(m, req).term_bytes("optimizer_state"), 12e9);
  // 8-bit AdamW (Dettmers et al. 2021): master 4 + m, v codes 1 + 1 + one fp32 absmax per 256-value block
  // of each (bitsandbytes ≥ 0.44.0 Optimizer2State.init_state, torchao AdamW8bit block_size=256):
  // 4 + 2 + 2·4/256 = 6.03125 B/param.
  req.optimizer = Optimizer::adamw_8bit;
  EXPECT_NEAR(training_memory(m, req).term_bytes("optimizer_state"), 6.03125e9, 1e3);
  // Lion / SGD momentum: one fp32 state + master = 8 B/param.
  req.optimizer = Optimizer::lion;
  EXPECT_DOUBLE_EQ(training_memory(m, req).term_bytes("optimizer_state"), 8e9);
  // Pure bf16 AdamW: states in bf16, no master = 4 B/param (torch.optim zeros_like(p)).
  req.optimizer = Optimizer::adamw;
  req.precision = TrainPrecision::bf16_pure;
  EXPECT_DOUBLE_EQ(training_memory(m, req).term_bytes("optimizer_state"), 4e9);
  // fp32 AdamW: weights 4 + grads 4 + m, v 8 = 16 B/param.
  req.precision = TrainPrecision::fp32;
  EXPECT_DOUBLE_EQ(model_states(training_memory(m, req)), 16e9);
}

TEST(TrainingMemory, TotalIsTheSumOfTheTermsNotTheMax) {
  // Estimator bug to avoid: reporting the largest term instead of the sum.
  const ModelArch m = llama_like(32, 4096, 32, 8, 128, 14336, 128256);
  TrainingMemoryRequest req;
  const MemoryBreakdown b = training_memory(m, req);
  double sum = 0, largest = 0;
  for (const auto& t : b.terms) {
    sum += t.bytes;
    largest = std::max(largest, t.bytes);
  }
  EXPECT_DOUBLE_EQ(b.total_bytes(), sum);
  EXPECT_GT(b.total_bytes(), 1.5 * largest);
  EXPECT_GT(b.term_bytes("weights"), 0);
  EXPECT_GT(b.term_bytes("activations"), 0);
}

TEST(TrainingMemory, KorthikantiEquation1ForGpt3Shape) {
  // One GPT-3-175B layer (h 12288, a 96, s 2048, b 1), Megatron profile with dropout and no
  // FlashAttention: s·b·h·(34 + 5·a·s/h) bytes (Korthikanti et al. 2022 Eq. 1).
  const ModelArch m = gpt_like(1, 12288, 96);
  TrainingMemoryRequest req;
  req.activation_profile = ActivationProfile::megatron;
  req.dropout = true;
  req.flash_attention = false;
  req.optimizer_foreach = false;
  const double s = 2048, b = 1, h = 12288, a = 96;
  const double eq1 = s * b * h * (34 + 5 * a * s / h);
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), eq1, 1e-9 * eq1);
  // Selective recompute drops the 5as/h term (Table 2): 34 sbh.
  req.recompute = Recompute::selective;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), 34 * s * b * h, 1.0);
  // FlashAttention likewise stores no s×s scores: 34 sbh + the fp32 logsumexp (4·a·s·b).
  req.recompute = Recompute::none;
  req.flash_attention = true;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), 34 * s * b * h + 4 * a * s * b, 1.0);
}

TEST(TrainingMemory, TensorAndSequenceParallelSplitActivations) {
  // Eq. 2: TP without SP keeps 10 sbh replicated: sbh(10 + 24/t + 5as/(ht)); with SP all / t.
  const ModelArch m = gpt_like(1, 12288, 96);
  TrainingMemoryRequest req;
  req.activation_profile = ActivationProfile::megatron;
  req.dropout = true;
  req.flash_attention = false;
  req.optimizer_foreach = false;
  req.layout.tp = 8;
  const double s = 2048, h = 12288, a = 96, t = 8;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), s * h * (10 + 24 / t + 5 * a * s / (h * t)), 1.0);
  req.layout.sequence_parallel = true;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), s * h * (34 + 5 * a * s / h) / t, 1.0);
}

TEST(TrainingMemory, FullRecomputeKeepsLayerInputsPlusOneLayer) {
  const ModelArch m = gpt_like(24, 2048, 16);
  TrainingMemoryRequest req;
  req.activation_profile = ActivationProfile::megatron;
  req.dropout = true;
  req.flash_attention = false;
  req.optimizer_foreach = false;
  req.recompute = Recompute::full;
  const double s = 2048, h = 2048, a = 16, L = 24;
  const double checkpoints = 2 * s * h * L, one_layer = s * h * (34 + 5 * a * s / h);
  // The recomputed layer is rebuilt when its backward starts, after the loss's backward has freed the
  // logits (Megatron: s·V·(2 + 4 + 4) B). Vocabulary 51,200: logits 1.05 GB > one layer 0.48 GB, so the peak
  // is the start of backward: the checkpoints + the logits.
  const double logits = s * 51200 * 10;
  ASSERT_GT(logits, one_layer);
  MemoryBreakdown out = training_memory(m, req);
  EXPECT_NEAR(out.term_bytes("activations"), checkpoints, 1.0);
  EXPECT_NEAR(out.term_bytes("logits"), logits, 1.0);
  // Vocabulary 1,024: logits 21 MB < one layer: the peak is the last layer's recompute (Korthikanti's
  // checkpoints + one layer), and no logits remain (the loop holds none).
  out = training_memory(gpt_like(24, 2048, 16, 1024), req);
  EXPECT_NEAR(out.term_bytes("activations"), checkpoints + one_layer, 1.0);
  EXPECT_DOUBLE_EQ(out.term_bytes("logits"), 0.0);
  // A loop that keeps the returned 16-bit logits through backward (scripts/measure/measure_memory.py).
  req.logits_kept_through_backward = true;
  out = training_memory(gpt_like(24, 2048, 16, 1024), req);
  EXPECT_NEAR(out.term_bytes("activations"), checkpoints + one_layer, 1.0);
  EXPECT_NEAR(out.term_bytes("logits"), s * 1024 * 2, 1e-6);
}

TEST(TrainingMemory, MegatronFusedSwigluAndTransformerEngineFp8Inputs) {
  // One Llama-3-8B layer (h 4096, 32 heads, 8 KV heads of 128, f 14336), Megatron profile,
  // FlashAttention, no dropout, s 4096, b 1. Per token, by hand:
  //   norm inputs 2 × 2h + the qkv input 2h + the fc1 input 2h                 =  8h = 32768
  //   Q, K, V, attention output 2·(4096 + 1024 + 1024 + 4096)                  =       20480
  //   logsumexp 4 B × 32 heads                                                 =         128
  //   fused SwiGLU: its input gate ‖ up (2 × 2f; fused_bias_swiglu.py saves only it) = 4f = 57344
  //   the fc2 (down) input 2f                                                  =       28672
  //   total 139392 B.
  // Under Transformer Engine FP8 the GEMM inputs kept for the weight gradient are the 8-bit
  // copies (linear.py: saved_inputmat is the quantized input): qkv and fc1 inputs h each, fc2
  // input f, and the out-projection's own 8-bit copy of the attention output (+4096):
  //   139392 − 4096 − 4096 − 14336 + 4096 = 120960 B.
  const ModelArch m = llama_like(1, 4096, 32, 8, 128, 14336, 128256);
  TrainingMemoryRequest req;
  req.activation_profile = ActivationProfile::megatron;
  req.optimizer_foreach = false;
  req.seq_len = 4096;
  const double s = 4096;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), s * 139392, 1.0);
  req.precision = TrainPrecision::fp8_mixed;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), s * 120960, 1.0);
  // LoRA (rank 16 on all 7 matrices) in Megatron: the frozen TE layers save no input
  // (linear.py: backward_needs_input = weight.requires_grad) and the bf16 adapters save the very
  // tensors the layers got (no cast): the same 139392 B (FP8 or not: the adapters compute in
  // bf16) + x·A, 2 B × 16 × 7 = 224 B.
  req.task = Task::lora;
  req.lora_rank = 16;
  req.lora_targets = {"q", "k", "v", "o", "gate", "up", "down"};
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), s * (139392 + 224), 1.0);
  req.precision = TrainPrecision::bf16_mixed;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), s * (139392 + 224), 1.0);
}

/// A Mixtral-8x7B-shaped MoE decoder of `layers` layers (h 4096, 32 heads, 8 KV heads of 128,
/// top-2 of 8 experts of width 14336, vocabulary 32000), every layer an MoE layer.
ModelArch mixtral_like(int layers) {
  ModelArch m = llama_like(layers, 4096, 32, 8, 128, 14336, 32000);
  MoeSpec e;
  e.num_routed_experts = 8;
  e.experts_per_token = 2;
  e.expert_intermediate_size = 14336;
  e.num_moe_layers = layers;
  m.moe = e;
  m.params = count_decoder_params(m);
  return m;
}

TEST(TrainingMemory, MegatronMoeWeightsTheExpertsInsideTheActivation) {
  // One Mixtral-shaped MoE layer (h 4096, 32 heads, 8 KV heads of 128, top-2 of 8 experts of f_e
  // 14336), Megatron profile, bf16, s 4096, b 1. Per token, by hand:
  //   norm inputs 2 × 2h + the qkv input 2h + the router/fc1 input 2h            =  8h = 32768
  //   Q, K, V, attention output 2·(4096 + 1024 + 1024 + 4096) + logsumexp 4 × 32  =       20608
  //   router logits + probabilities, fp32: 2 × 4 × 8                            =          64
  //   per routed token (× 2): gathered fc1 input 2h, fused weighted SwiGLU input 4f_e,
  //     fc2 input 2f_e, and the routing weight, fp32 4 B (Megatron-Core applies it inside the
  //     activation, WeightedSwiGLUFunction saves input and weights; Megatron-LM 2659630721):
  //     2 × (8192 + 57344 + 28672 + 4)                                         =      188424
  //   total 241864 B. HF (eager) instead weights the expert output after fc2 and saves it (2h):
  //   the profile difference on that term alone is 2 × (2h − 4) = 16376 B.
  const ModelArch m = mixtral_like(1);
  TrainingMemoryRequest req;
  req.activation_profile = ActivationProfile::megatron;
  req.optimizer_foreach = false;
  req.seq_len = 4096;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), 4096.0 * 241864, 1.0);
}

TEST(TrainingMemory, MegatronRecomputeModulesDropWhatTheyDiscard) {
  // Four Mixtral-shaped MoE layers, Megatron profile, bf16, s 4096, b 1; per token of a layer
  // 241864 B without recomputation (hand count in the test above). Megatron-Core's selective
  // recompute with recompute_modules layernorm + moe_act (output-discarding checkpoints,
  // transformer_layer.py / experts.py at Megatron-LM d98e8a64dd) drops, per token of a layer:
  //   layernorm: the pre-MLP norm's output, the router's and the dispatch's input, 2h = 8192
  //   moe_act:   the fc2 input of each routed copy, 2 × 2f_e = 2 × 28672            = 57344
  // so 241864 − 65536 = 176328 B are kept per layer, and the layer being back-propagated
  // holds its 65536 B again: 4096 × (4 × 176328 + 65536).
  const ModelArch m = mixtral_like(4);
  TrainingMemoryRequest req;
  req.activation_profile = ActivationProfile::megatron;
  req.optimizer_foreach = false;
  req.seq_len = 4096;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), 4096.0 * 4 * 241864, 1.0);
  req.recompute = Recompute::selective;  // Megatron-Core's default module list, {core_attn}
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), 4096.0 * 4 * 241864, 1.0);
  req.recompute_modules = static_cast<unsigned>(RecomputeModule::layernorm) | static_cast<unsigned>(RecomputeModule::moe_act);
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), 4096.0 * (4 * 176328 + 65536), 1.0);
  // Under another recompute mode the modules do not apply.
  req.recompute = Recompute::none;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), 4096.0 * 4 * 241864, 1.0);
}

TEST(TrainingMemory, MegatronRecomputeModulesOnMlaLayers) {
  // Eight DeepSeek-V3-shaped dense MLA layers (h 7168, 128 heads, q_lora 1536, kv_lora 512,
  // nope 128, rope 64, v 128; dense MLP 18432), Megatron profile, bf16, s 4096, b 1.
  // mla_up_proj discards Q, K, V as the attention core reads them (multi_latent_attention.py
  // qkv_up_checkpoint): 2 × (128·192 + 128·192 + 128·128) = 131072 B per token of a layer;
  // layernorm the input norm's output (MLA layers keep it separate from the down projections):
  // 2h = 14336; mlp the dense MLP's saved tensors: fc1 input 2h + SwiGLU input 4f + fc2 input 2f
  // = 14336 + 73728 + 36864 = 124928. Each: 7 layers' worth fewer (8 dropped, one held again).
  const ModelArch m = deepseek_v3_mla_like(8);
  TrainingMemoryRequest req;
  req.activation_profile = ActivationProfile::megatron;
  req.optimizer_foreach = false;
  req.seq_len = 4096;
  req.recompute = Recompute::selective;
  const double base = training_memory(m, req).term_bytes("activations");
  auto with = [&](RecomputeModule mod) {
    req.recompute_modules = static_cast<unsigned>(mod);
    return training_memory(m, req).term_bytes("activations");
  };
  EXPECT_NEAR(base - with(RecomputeModule::mla_up_proj), 4096.0 * 7 * 131072, 1.0);
  EXPECT_NEAR(base - with(RecomputeModule::layernorm), 4096.0 * 7 * 14336, 1.0);
  EXPECT_NEAR(base - with(RecomputeModule::mlp), 4096.0 * 7 * 124928, 1.0);
}

// trial42 D4: a DeepSeek-shaped config whose first_k_dense_replace covers every layer declares
// experts and routes no layer to them: the MoE layers, not the MoE block, decide what moe_act and
// layernorm have to recompute, and which set the planner tries (recipe_recompute_modules).
TEST(TrainingMemory, RecomputeModulesFollowTheMoeLayersNotTheMoeBlock) {
  ModelArch m = deepseek_v3_mla_like(4);
  MoeSpec moe;
  moe.num_routed_experts = 256;
  moe.experts_per_token = 8;
  moe.expert_intermediate_size = 2048;
  moe.first_dense_layers = 4;
  moe.num_moe_layers = 0;
  m.moe = moe;
  const auto moe_act = static_cast<unsigned>(RecomputeModule::moe_act);
  const auto layernorm = static_cast<unsigned>(RecomputeModule::layernorm);
  try {
    check_recompute_modules_apply(m, moe_act, "--recompute-modules");
    ADD_FAILURE() << "moe_act accepted without MoE layers";
  } catch (const CodedError& e) {
    EXPECT_EQ(e.where(), "--recompute-modules");
    EXPECT_EQ(e.code, "recompute_module_not_in_model");
  }
  EXPECT_NO_THROW(check_recompute_modules_apply(m, layernorm, "--recompute-modules"));  // the MLA input norm
  EXPECT_EQ(recipe_recompute_modules(m), static_cast<unsigned>(RecomputeModule::mla_up_proj));
  m.mla.reset();
  EXPECT_THROW(check_recompute_modules_apply(m, layernorm, "--recompute-modules"), Error);
  EXPECT_EQ(recipe_recompute_modules(m), 0u);
  m.moe->first_dense_layers = 0;
  m.moe->num_moe_layers = 4;
  EXPECT_NO_THROW(check_recompute_modules_apply(m, moe_act | layernorm, "--recompute-modules"));
  EXPECT_EQ(recipe_recompute_modules(m), moe_act | layernorm);
}

TEST(TrainingMemory, FirstPipelineStageHoldsPMicroBatches) {
  // 1F1B: the first stage holds p micro-batches of L/p layers = L layers' worth (Korthikanti §4.2.3).
  const ModelArch m = gpt_like(32, 2048, 16);
  TrainingMemoryRequest req;
  req.activation_profile = ActivationProfile::megatron;
  req.optimizer_foreach = false;
  const double one = training_memory(m, req).term_bytes("activations");
  req.layout.pp = 4;
  const MemoryBreakdown b = training_memory(m, req);
  EXPECT_NEAR(b.term_bytes("activations"), one, 1e-9 * one);
  EXPECT_EQ(b.stage, "pipeline stage 1 of 4 (first)");
  // Interleaved (m = 2): × (1 + (p − 1)/(p·m)) = 1.375.
  req.layout.virtual_stages = 2;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), one * 1.375, 1e-9 * one);
}

TEST(TrainingMemory, MoeStoresAllExpertsButActivatesTopK) {
  // Estimator bug to avoid: sizing MoE weights by the active parameters.
  ModelArch m = mixtral_like(32);  // Mixtral-8x7B shape: 46.7B total, 12.9B active
  ASSERT_GT(m.params.total(), 3 * m.params.active());
  TrainingMemoryRequest req;
  req.precision = TrainPrecision::bf16_pure;
  req.optimizer_foreach = false;
  EXPECT_NEAR(training_memory(m, req).term_bytes("weights"), 2.0 * static_cast<double>(m.params.total()), 1.0);
  // Expert parallelism divides the expert weights: ep 8 within dp 8.
  req.layout.dp = 8;
  req.layout.ep = 8;
  const double expected = 2.0 * (static_cast<double>(m.params.total() - m.params.experts) +
                                 static_cast<double>(m.params.experts) / 8);
  EXPECT_NEAR(training_memory(m, req).term_bytes("weights"), expected, 1.0);
}

TEST(TrainingMemory, LoraAdapterCountMatchesHandCount) {
  // Qwen3-0.6B shape (h 1024, 16×128 q, 8×128 kv, ffn 3072, 28 layers), r = 16 on all linear:
  // 16·[(1024+2048) + 2·(1024+1024) + (2048+1024) + 2·(1024+3072) + (3072+1024)] · 28 = 10,092,544.
  const ModelArch m = llama_like(28, 1024, 16, 8, 128, 3072, 151936, true);
  TrainingMemoryRequest req;
  req.task = Task::lora;
  const MemoryBreakdown b = training_memory(m, req);
  EXPECT_DOUBLE_EQ(b.term_bytes("lora_adapters"), 4.0 * 10092544);  // fp32 adapters
  EXPECT_DOUBLE_EQ(b.term_bytes("optimizer_state"), 8.0 * 10092544);
  EXPECT_DOUBLE_EQ(b.term_bytes("weights"), 2.0 * static_cast<double>(m.params.total()));  // frozen bf16 base
}

TEST(TrainingMemory, QloraStoresNf4WithDoubleQuant) {
  const ModelArch m = llama_like(32, 4096, 32, 8, 128, 14336, 128256);
  TrainingMemoryRequest req;
  req.task = Task::qlora;
  const double linear = static_cast<double>(m.params.attention + m.params.mlp);
  const double rest = static_cast<double>(m.params.embeddings + m.params.head + m.params.norms);
  // NF4 4 bits + double-quant constants 8/64 + 32/(64·256) = 0.127 bits (QLoRA §3); the rest bf16.
  const double bits = 4.0 + 8.0 / 64 + 32.0 / (64 * 256);
  EXPECT_NEAR(training_memory(m, req).term_bytes("weights"), linear * bits / 8 + 2 * rest, 1.0);
  req.qlora_double_quant = false;  // fp32 absmax per 64: 0.5 bits
  EXPECT_NEAR(training_memory(m, req).term_bytes("weights"), linear * 4.5 / 8 + 2 * rest, 1.0);
}

TEST(TrainingMemory, OffloadMovesStatesToHost) {
  const ModelArch m = states_only(1e9);
  TrainingMemoryRequest req;
  req.optimizer_foreach = false;
  req.layout.offload_optimizer = true;
  const MemoryBreakdown b = training_memory(m, req);
  EXPECT_EQ(b.term_bytes("optimizer_state"), 0);
  EXPECT_EQ(b.term_bytes("gradients"), 0);
  EXPECT_DOUBLE_EQ(b.cpu_offload_bytes, 12e9 + 2e9);
  EXPECT_DOUBLE_EQ(b.term_bytes("weights"), 2e9);
}

TEST(TrainingMemory, OptimizerStepPeakWithForeachTemporary) {
  // H200 hand check (tests/data/h200-measurements.PROVENANCE.md §1): pure bf16 foreach AdamW peaks at
  // 10 B/param in the step (weights 2 + grads 2 + states 4 + temporary 2) when activations are small.
  const ModelArch m = states_only(1e9);
  TrainingMemoryRequest req;
  req.precision = TrainPrecision::bf16_pure;
  req.optimizer_foreach = true;
  req.fragmentation_fraction = 0;
  req.cuda_context_bytes = 0;
  const MemoryBreakdown b = training_memory(m, req);
  EXPECT_EQ(b.phase, "optimizer step");
  EXPECT_DOUBLE_EQ(b.total_bytes(), 10e9);
}

TEST(TrainingMemory, ValidationErrorsAndWarnings) {
  const ModelArch m = llama_like(32, 4096, 32, 8, 128, 14336, 128256);
  TrainingMemoryRequest req;
  req.task = Task::qlora;
  req.precision = TrainPrecision::fp32;
  EXPECT_THROW(training_memory(m, req), Error);  // QLoRA computes in 16 bits
  req = {};
  req.layout.tp = 3;  // 32 heads
  try {
    training_memory(m, req);
    ADD_FAILURE() << "tp 3 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "--tp");
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
  }
  req = {};
  req.seq_len = -5;
  EXPECT_THROW(training_memory(m, req), Error);
  req = {};
  req.layout.zero_stage = 3;
  const MemoryBreakdown b = training_memory(m, req);
  ASSERT_FALSE(b.warnings.empty());
  EXPECT_NE(b.warnings[0].find("ZeRO-3 with dp = 1"), std::string::npos);
  req = {};
  req.layout.pp = 64;  // more stages than layers
  EXPECT_THROW(training_memory(m, req), Error);
}

TEST(TrainingMemory, ExplanationsMatchTheBreakdown) {
  const ModelArch m = llama_like(32, 4096, 32, 8, 128, 14336, 128256);
  TrainingMemoryRequest req;
  req.layout.dp = 8;
  req.layout.zero_stage = 3;
  const MemoryBreakdown b = training_memory(m, req);
  const auto ex = explain_training_memory(m, req);
  ASSERT_EQ(ex.size(), b.terms.size());
  for (std::size_t i = 0; i < ex.size(); ++i) {
    EXPECT_EQ(ex[i].name, b.terms[i].name);
    EXPECT_DOUBLE_EQ(ex[i].bytes, b.terms[i].bytes);
    EXPECT_FALSE(ex[i].formula.empty());
    EXPECT_FALSE(ex[i].source.empty());
  }
}

TEST(TrainingMemory, TorchCompileSavedTensorsHandCount) {
  // One Llama-style layer: h 64, 4 heads × 16, 2 KV heads (k = v = 32 wide), SwiGLU f 128, vocab 256;
  // s 32, b 1, bf16, FlashAttention (fp32 logsumexp 4 B per head).
  const ModelArch m = llama_like(1, 64, 4, 2, 16, 128, 256);
  TrainingMemoryRequest req;
  req.optimizer_foreach = false;
  req.seq_len = 32;
  const double tokens = 32, h = 64, q = 64, kv = 32, f = 128, a = 4, V = 256;
  // Saved per token under torch.compile (AOTAutograd min-cut partitioner, see ActivationProfile):
  //   each RMSNorm's 16-bit input 2h (×2: the layer input and the residual after attention),
  //   the normed inputs of q/k/v and gate/up 2h + 2h (read by the weight-gradient mm),
  //   Q, K, V as attention reads them, its output, o_proj's contiguous copy: 2(q + 2kv) + 2q + 2q,
  //   the logsumexp 4a, gate and up outputs 2f + 2f, the gate·up product 2f (silu(gate) recomputed).
  const double compiled = 2 * 2 * h + 2 * h + 2 * h + 2 * (q + 2 * kv) + 2 * q + 2 * q + 4 * a + 6 * f;
  // Eager: fp32 norm inputs 6h each, silu output 2f more.
  const double eager = 2 * 6 * h + 2 * h + 2 * h + 2 * (q + 2 * kv) + 2 * q + 2 * q + 4 * a + 8 * f;
  ASSERT_EQ(compiled, 1808.0);
  ASSERT_EQ(eager, 2576.0);
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), eager * tokens, 1e-6);
  req.activation_profile = ActivationProfile::pytorch_compiled;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), compiled * tokens, 1e-6);
  // Compiled loss, unchunked: 16-bit logits + the fp32 logits it was given + their fp32 grad (2 + 4 + 4 B).
  EXPECT_NEAR(training_memory(m, req).term_bytes("logits"), tokens * V * 10, 1e-6);
  // Chunked (8-token chunks): all 16-bit logits + one chunk's 16-bit grad (eager: + 3 fp32 copies of the chunk),
  // + the trained head's gradient twice (the output layer's input buffer + one chunk's V×h product, 2 B each:
  // 2 · 2 · 256 · 64 = 65,536 B).
  req.chunked_cross_entropy = true;
  req.cross_entropy_chunk_tokens = 8;
  const double head_grads = 2 * 2 * V * h;
  ASSERT_EQ(head_grads, 65536.0);
  EXPECT_NEAR(training_memory(m, req).term_bytes("logits"), tokens * V * 2 + 8 * V * 2 + head_grads, 1e-6);
  req.activation_profile = ActivationProfile::pytorch_eager;
  EXPECT_NEAR(training_memory(m, req).term_bytes("logits"), tokens * V * 2 + 8 * V * 12 + head_grads, 1e-6);
  // optimizer_in_backward: one of the two copies is the gradient term already.
  req.optimizer_in_backward = true;
  EXPECT_NEAR(training_memory(m, req).term_bytes("logits"), tokens * V * 2 + 8 * V * 12 + head_grads / 2, 1e-6);
  req.optimizer_in_backward = false;
  // LoRA on q, k, v with fp32 adapters (PEFT casts each adapted input): eager saves three fp32 copies of the
  // normed input, compiled one (the joint graph is CSE'd); frozen o, gate, up, down save no input.
  req.chunked_cross_entropy = false;
  req.task = Task::lora;
  req.lora_rank = 16;
  req.lora_targets = {"q", "k", "v"};
  const double x_a = 4.0 * 16 * 3;  // x·A, r fp32 values per adapted matrix
  const double lora_compiled = 2 * 2 * h + 4 * h + 2 * (q + 2 * kv) + 2 * q + 4 * a + 4 * f + x_a;
  const double lora_eager = 2 * 6 * h + 3 * 4 * h + 2 * (q + 2 * kv) + 2 * q + 4 * a + 6 * f + x_a;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), lora_eager * tokens, 1e-6);
  req.activation_profile = ActivationProfile::pytorch_compiled;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), lora_compiled * tokens, 1e-6);
  EXPECT_EQ(parse_activation_profile("compiled", "--framework"), ActivationProfile::pytorch_compiled);
  EXPECT_EQ(activation_profile_name(ActivationProfile::pytorch_compiled), "pytorch_compiled");
}

TEST(TrainingMemory, TorchtuneLoraOnQvSavesNoMlpOrOutProjInputs) {
  // torchtune's llama3_1/8B_lora_single_device.yaml at 30b8519e8 (the README memory table's commit)
  // adapts q_proj and v_proj only (apply_lora_to_mlp: False); adapters train in bf16 (bf16_pure), so an
  // adapted input is saved once in 16 bits. The layer of TorchCompileSavedTensorsHandCount, compiled,
  // no recompute, rank 8. Saved per token:
  //   q, v: norm inputs 2·2h + the q/k/v input 2h + Q, K, V 2(q + 2kv) + attention output 2q + logsumexp 4a
  //         + gate and up outputs 4f (a frozen down_proj saves no input; a frozen o_proj no copy) + x·A 2·r·2;
  //   q, v, o + MLP (the configs from e137afeba on): + the gate/up input 2h + o_proj's copy 2q
  //         + the down-projection input 2f + x·A of 4 more adapters 2·r·4.
  const ModelArch m = llama_like(1, 64, 4, 2, 16, 128, 256);
  TrainingMemoryRequest req;
  req.optimizer_foreach = false;
  req.seq_len = 32;
  req.task = Task::lora;
  req.precision = TrainPrecision::bf16_pure;
  req.lora_rank = 8;
  req.activation_profile = ActivationProfile::pytorch_compiled;
  const double tokens = 32, h = 64, q = 64, kv = 32, f = 128, a = 4, r = 8;
  const double qv = 2 * 2 * h + 2 * h + 2 * (q + 2 * kv) + 2 * q + 4 * a + 4 * f + 2 * r * 2;
  const double all = qv + 2 * h + 2 * q + 2 * f + 2 * r * 4;
  ASSERT_EQ(qv, 1328.0);
  ASSERT_EQ(all, 1904.0);
  req.lora_targets = {"q", "v"};
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), qv * tokens, 1e-6);
  req.lora_targets = {"q", "v", "o", "gate", "up", "down"};
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), all * tokens, 1e-6);
}

TEST(TrainingMemory, TorchtuneGqaSavesKvAtQueryWidth) {
  // The layer of TorchCompileSavedTensorsHandCount: 4 query heads × 16 (q = 64), 2 KV heads (k = v = 32).
  // torchtune copies K and V to the 4 query heads before attention (kv_expanded_for_attention), so
  // attention saves them 64 wide: 2·(q − k) + 2·(q − v) = 2·32 + 2·32 = 128 B more per token, eager or
  // compiled (the copy is a clone the attention backward reads; the partitioner keeps it).
  const ModelArch m = llama_like(1, 64, 4, 2, 16, 128, 256);
  TrainingMemoryRequest req;
  req.optimizer_foreach = false;
  req.seq_len = 32;
  const double tokens = 32, extra = 2 * (64 - 32) + 2 * (64 - 32);
  ASSERT_EQ(extra, 128.0);
  for (const ActivationProfile p : {ActivationProfile::pytorch_eager, ActivationProfile::pytorch_compiled}) {
    req.activation_profile = p;
    req.kv_expanded_for_attention = false;
    const double grouped = training_memory(m, req).term_bytes("activations");
    req.kv_expanded_for_attention = true;
    EXPECT_NEAR(training_memory(m, req).term_bytes("activations") - grouped, extra * tokens, 1e-6)
        << activation_profile_name(p);
  }
  // Eager total, by hand: 2576 B per token (TorchCompileSavedTensorsHandCount) + 128.
  req.activation_profile = ActivationProfile::pytorch_eager;
  EXPECT_NEAR(training_memory(m, req).term_bytes("activations"), (2576.0 + 128.0) * tokens, 1e-6);
  // Multi-head attention (kv = heads): nothing to copy.
  const ModelArch mha = llama_like(1, 64, 4, 4, 16, 128, 256);
  req.kv_expanded_for_attention = false;
  const double mha_grouped = training_memory(mha, req).term_bytes("activations");
  req.kv_expanded_for_attention = true;
  EXPECT_DOUBLE_EQ(training_memory(mha, req).term_bytes("activations"), mha_grouped);
}

TEST(TrainingMemory, FsdpOutputLayerUnitAtTheStartOfBackward) {
  // Two Llama-style layers, h 64, 4 heads × 16, 2 KV heads, SwiGLU f 128, untied head of a 4096 vocabulary:
  // the head (4096 × 64 = 262,144 params) is larger than a layer. Per layer: attention 64·64 + 2·64·32 +
  // 64·64 = 12,288, MLP 3·64·128 = 24,576; norms 2·64 per layer + the final 64, spread over the 2 layers:
  // (2·36,864 + 320) / 2 = 37,024 params gathered per layer (FSDP, bf16: 2 B).
  const ModelArch m = llama_like(2, 64, 4, 2, 16, 128, 4096);
  ASSERT_EQ(m.params.attention + m.params.mlp, 2 * 36864);
  ASSERT_EQ(m.params.norms, 320);
  TrainingMemoryRequest req;
  req.optimizer_foreach = false;
  req.seq_len = 32;
  req.layout.dp = 8;
  req.layout.zero_stage = 3;
  const double layer = 37024, head = 4096.0 * 64;
  // Full fine-tune: max(3 layers, head gathered + its unsharded gradient + the last layer prefetched).
  const double layers3 = 3 * 2 * layer, head_unit = 2 * 2 * head + 2 * layer;
  ASSERT_EQ(layers3, 222144.0);
  ASSERT_EQ(head_unit, 1122624.0);
  EXPECT_DOUBLE_EQ(training_memory(m, req).term_bytes("workspace"), head_unit);
  // LoRA (frozen head, no gradient): max(2 layers, head + the last layer).
  req.task = Task::lora;
  EXPECT_DOUBLE_EQ(training_memory(m, req).term_bytes("workspace"), 2 * head + 2 * layer);
  // Chunked output: the head's gradient twice (input buffer + one chunk's product): 3 head copies + a layer.
  req.chunked_cross_entropy = true;
  req.task = Task::full;
  EXPECT_DOUBLE_EQ(training_memory(m, req).term_bytes("workspace"), 3 * 2 * head + 2 * layer);
  req.chunked_cross_entropy = false;
  // A small vocabulary (head 256 × 64 = 16,384 params, smaller than a layer): the 3-layer rule stands.
  const ModelArch small = llama_like(2, 64, 4, 2, 16, 128, 256);
  req.task = Task::full;
  EXPECT_DOUBLE_EQ(training_memory(small, req).term_bytes("workspace"), layers3);
}

TEST(MemoryNames, ParseAndNameRoundTrip) {
  EXPECT_EQ(parse_task("FFT", "--task"), Task::full);
  EXPECT_EQ(parse_weight_quant("q4_k_m", "--quant"), WeightQuant::gguf_q4_k_m);
  EXPECT_EQ(parse_kv_dtype("fp8-e4m3", "--kv-dtype"), KvDtype::fp8);
  EXPECT_EQ(parse_optimizer(optimizer_name(Optimizer::adafactor), "--optimizer"), Optimizer::adafactor);
  EXPECT_THROW(parse_train_precision("fp12", "--precision"), Error);
  EXPECT_DOUBLE_EQ(weight_quant_bits(WeightQuant::int4), 4.125);     // 4 + 16/128
  EXPECT_DOUBLE_EQ(weight_quant_bits(WeightQuant::gguf_q8_0), 8.5);  // 32 int8 + fp16 scale per 32
}

TEST(TrainingMemory, CompiledLossUpcastingInsideKeeps16BitLogitsAndGrad) {
  // torchtitan at e7c0cae (torchtitan/components/loss.py): cross_entropy(pred.flatten(0, 1).float(), labels) is
  // torch.compile'd with training.compile, and the model returns bf16 logits (FSDP2 param_dtype bf16, no output
  // cast). The compiled loss saves its bf16 input and per-token reductions; its backward returns the gradient in
  // the input's dtype. One Llama-style layer, vocabulary 256, s 32, b 1, bf16: per token per vocabulary entry
  // 2 (logits) + 2 (their grad) = 4 B, against 2 + 4 + 4 = 10 B when the model upcasts (torchtune).
  const ModelArch m = llama_like(1, 64, 4, 2, 16, 128, 256);
  TrainingMemoryRequest req;
  req.optimizer_foreach = false;
  req.seq_len = 32;
  req.activation_profile = ActivationProfile::pytorch_compiled;
  const double tokens = 32, V = 256;
  EXPECT_NEAR(training_memory(m, req).term_bytes("logits"), tokens * V * 10, 1e-6);
  req.logits_upcast_in_loss = true;
  EXPECT_NEAR(training_memory(m, req).term_bytes("logits"), tokens * V * 4, 1e-6);
  // The H200 WhiteFiber rows' size (Llama 3.1 8B vocabulary 128,256, b 2 × s 8192): 16,384 × 128,256 × 4 B.
  const ModelArch l8 = llama_like(1, 64, 4, 2, 16, 128, 128256);
  req.seq_len = 8192;
  req.layout.micro_batch = 2;
  EXPECT_NEAR(training_memory(l8, req).term_bytes("logits"), 8405385216.0, 1.0);
  req.seq_len = 32;
  req.layout.micro_batch = 1;
  // Eager losses are not affected (log-softmax saved in fp32 + two fp32 grads beside the 16-bit logits: 14 B),
  // nor chunked ones (already upcast per chunk inside the loss).
  req.activation_profile = ActivationProfile::pytorch_eager;
  EXPECT_NEAR(training_memory(m, req).term_bytes("logits"), tokens * V * 14, 1e-6);
  req.activation_profile = ActivationProfile::pytorch_compiled;
  req.chunked_cross_entropy = true;
  req.cross_entropy_chunk_tokens = 8;
  const double head_grads = 2 * 2 * V * 64;  // the trained head's gradient twice (TorchCompileSavedTensorsHandCount)
  EXPECT_NEAR(training_memory(m, req).term_bytes("logits"), tokens * V * 2 + 8 * V * 2 + head_grads, 1e-6);
}

TEST(TrainingMemory, TorchtitanOpSelectiveKeepsTheSaveListOutputsPerLayer) {
  // torchtitan per-op SAC (_save_list, parallelize_llama.py at 9dec370 and e7c0cae): per layer the odd aten.mm
  // calls are saved (wq, wv, w1, w2 of wq wk wv wo w1 w3 w2), the SDPA flash output and its fp32 logsumexp;
  // torch.utils.checkpoint keeps the layer input. Llama 3.1 8B (h 4096, 32 heads, 8 KV heads × 128, f 14336),
  // bf16, no TP, bytes per token per layer:
  //   input 2·4096 = 8192, wq 2·4096 = 8192, wv 2·1024 = 2048, w1 2·14336 = 28672, w2 2·4096 = 8192,
  //   SDPA output 2·4096 = 8192, logsumexp 4·32 = 128  → 63,616 B.
  // The layer count's difference isolates the per-layer term (the recomputed layer is counted once in both).
  const double per_token_layer = 8192 + 8192 + 2048 + 28672 + 8192 + 8192 + 128;
  ASSERT_DOUBLE_EQ(per_token_layer, 63616.0);
  TrainingMemoryRequest req;
  req.activation_profile = ActivationProfile::pytorch_eager;
  req.flash_attention = true;
  req.optimizer_foreach = false;
  req.recompute = Recompute::op_selective;
  req.seq_len = 8192;
  const auto acts = [&](std::int64_t L) {
    return training_memory(llama_like(L, 4096, 32, 8, 128, 14336, 1024), req).term_bytes("activations");
  };
  const double op32 = acts(32), op16 = acts(16);
  EXPECT_NEAR(op32 - op16, 16 * 8192 * per_token_layer, 1.0);
  // Fewer bytes than no recompute, more than full recompute's layer input (2h per token per layer).
  req.recompute = Recompute::none;
  EXPECT_LT(op32, acts(32));
  EXPECT_GT(op32 - op16, 16 * 8192 * 2 * 4096.0);
  EXPECT_EQ(parse_recompute("op-selective", "--recompute"), Recompute::op_selective);
  EXPECT_EQ(recompute_name(Recompute::op_selective), "op-selective");
}

TEST(TrainingMemory, CompiledOpSelectiveDoesNotKeepTheOutputsNoBackwardReads) {
  // Under torch.compile the SAC policy's MUST_SAVE tags only ban recompute in the min-cut partitioner
  // (partitioners.py should_ban_recomputation); saved values are what the backward reads. w2's output feeds only
  // the residual add (whose backward reads no input), so the compiled block does not keep it; eager SAC caches
  // every MUST_SAVE output. Llama 3.1 8B, no TP, per token per layer: eager 63,616 B (test above) − w2 2·4096 =
  // 55,424 B. The recomputed layer (counted once) is what autograd saves in a plain layer less the kept set.
  const double eager_layer = 8192 + 8192 + 2048 + 28672 + 8192 + 8192 + 128;
  const double compiled_layer = eager_layer - 2 * 4096;
  ASSERT_DOUBLE_EQ(compiled_layer, 55424.0);
  TrainingMemoryRequest req;
  req.activation_profile = ActivationProfile::pytorch_compiled;
  req.flash_attention = true;
  req.optimizer_foreach = false;
  req.recompute = Recompute::op_selective;
  req.seq_len = 8192;
  const auto acts = [&](std::int64_t L) {
    return training_memory(llama_like(L, 4096, 32, 8, 128, 14336, 1024), req).term_bytes("activations");
  };
  EXPECT_NEAR(acts(32) - acts(16), 16 * 8192 * compiled_layer, 1.0);
  // The shared formula, eager and compiled, and with TP 4 + sequence parallelism (bytes per token per layer):
  // eager 2h/4 + (2·4096 + 2·1024 + 2·14336 + 2·4096 + 4·32)/4 + 2h + 2·2h/4 = 2048 + 11808 + 8192 + 4096 = 26,144;
  // compiled drops w2's output (8192) and its reduce_scatter (2048): 15,904.
  EXPECT_DOUBLE_EQ(op_selective_saved_bytes_per_token(4096, 4096, 1024, 14336, 4096, 32, 1, false, false), eager_layer);
  EXPECT_DOUBLE_EQ(op_selective_saved_bytes_per_token(4096, 4096, 1024, 14336, 4096, 32, 1, false, true), compiled_layer);
  EXPECT_DOUBLE_EQ(op_selective_saved_bytes_per_token(4096, 4096, 1024, 14336, 4096, 32, 4, true, false), 26144.0);
  EXPECT_DOUBLE_EQ(op_selective_saved_bytes_per_token(4096, 4096, 1024, 14336, 4096, 32, 4, true, true), 15904.0);
  // The explanation names the mode, not the no-recompute breakdown.
  const auto ex = explain_training_memory(llama_like(32, 4096, 32, 8, 128, 14336, 1024), req);
  bool named = false;
  for (const auto& t : ex)
    if (t.name == "activations") named = t.formula.find("per-op selective recompute") != std::string::npos &&
                                         t.formula.find("w2's output not kept") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(TrainingMemory, TorchtitanEagerHeadAndLossCountsTheUpcastLossAndTheFinalNorm) {
  // torchtitan at 9dec370 (memory.hpp eager_head_and_loss): cross_entropy(pred.flatten(0, 1).float(), labels) runs
  // eagerly, `del pred` before backward. Start of backward, per logit: saved fp32 log-softmax 4 + nll_loss grad 4
  // + log-softmax grad 4 = 12 B; the final RMSNorm keeps its fp32 input (4h) and normalised bf16 values (2h), the
  // output projection its bf16 input (2h).
  // (1) Llama 3.1 8B shape, no TP, b1 s32768 (torchtitan Table 2's FSDP 8 row), full recompute:
  //     32768 × 128256 × 12 = 50,432,311,296 B; norm + head input 32768 × (6 + 2)·4096 = 1,073,741,824 B.
  TrainingMemoryRequest req;
  req.task = Task::pretrain;
  req.activation_profile = ActivationProfile::pytorch_compiled;
  req.recompute = Recompute::full;
  req.flash_attention = true;
  req.gradients_persist = false;
  req.layout.dp = 8;
  req.layout.zero_stage = 3;
  req.seq_len = 32768;
  req.eager_head_and_loss = true;
  const ModelArch l8 = llama_like(32, 4096, 32, 8, 128, 14336, 128256);
  EXPECT_NEAR(training_memory(l8, req).term_bytes("logits"), 50432311296.0 + 1073741824.0, 1.0);
  // Kept 16-bit logits add 2 B per logit: 32768 × 128256 × 2 = 8,405,385,216 B.
  req.logits_kept_through_backward = true;
  EXPECT_NEAR(training_memory(l8, req).term_bytes("logits"), 50432311296.0 + 8405385216.0 + 1073741824.0, 1.0);
  req.logits_kept_through_backward = false;
  // Without the flag the compiled profile's loss stays (16-bit logits + fp32 logits + fp32 grad, 2 + 4 + 4 B).
  req.eager_head_and_loss = false;
  EXPECT_NEAR(training_memory(l8, req).term_bytes("logits"), 32768.0 * 128256 * 10, 1.0);
  // (2) Llama 3.1 70B shape, TP 8 with sequence parallel, b16 s8192 (Table 4): 131,072 tokens.
  //     loss_parallel: logits stay V/8 = 16,032 per token; the fused nll + log-softmax backward holds the saved
  //     x, zeros_like(x), exp(x) and their sum (then the sum and its product): 16 B per logit:
  //     131072 × 16032 × 16 = 33,621,540,864 B; final norm 6·8192/8 = 6,144 B per token (sequence-sharded),
  //     output-projection input gathered over the sequence 2·8192 = 16,384 B per token:
  //     131072 × 22528 = 2,952,790,016 B.
  req.eager_head_and_loss = true;
  req.loss_parallel = true;
  req.layout.tp = 8;
  req.layout.dp = 32;
  req.layout.sequence_parallel = true;
  req.layout.micro_batch = 16;
  req.seq_len = 8192;
  const ModelArch l70 = llama_like(80, 8192, 64, 8, 128, 28672, 128256);
  EXPECT_NEAR(training_memory(l70, req).term_bytes("logits"), 33621540864.0 + 2952790016.0, 1.0);
  // Without loss_parallel the output projection gathers the whole vocabulary: 131072 × 128256 × 12 B.
  req.loss_parallel = false;
  EXPECT_NEAR(training_memory(l70, req).term_bytes("logits"), 131072.0 * 128256 * 12 + 2952790016.0, 1.0);
}

}  // namespace
}  // namespace gpuplan
