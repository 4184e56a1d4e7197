// FLOPs per token (flops.hpp) against hand calculations and the published formulas they
// come from (Kaplan et al. 2020 Table 1; Narayanan et al. 2021 Eq. 3).
#include <gtest/gtest.h>

#include "model/param_count.hpp"
#include "model/presets.hpp"
#include "sizing/flops.hpp"

namespace gpuplan {
namespace {

/// GPT-3 175B (Brown et al. 2020 Table 2.1): 96 layers, d_model 12288, 96 heads, 4h MLP,
/// vocab 50257, context 2048, learned positions, tied embeddings, biases.
ModelArch gpt3_175b() {
  ModelArch a;
  a.name = "gpt3-175b";
  a.num_layers = 96;
  a.hidden_size = 12288;
  a.intermediate_size = 4 * 12288;
  a.num_attention_heads = 96;
  a.num_kv_heads = 96;
  a.head_dim = 128;
  a.vocab_size = 50257;
  a.max_position_embeddings = 2048;
  a.tied_embeddings = true;
  a.gated_mlp = false;
  a.attention_bias = true;
  a.mlp_bias = true;
  a.position_encoding = PositionEncoding::learned;
  a.attention = AttentionKind::mha;
  a.params = count_decoder_params(a);
  return a;
}

TEST(PerfFlops, Gpt3MatmulParamsAre12Lh2PlusLmHead) {
  const ModelArch a = gpt3_175b();
  // 12·L·h² weights (4h² attention + 8h² MLP) + V·h LM head (tied: the embedding matrix is reused
  // as a matmul); biases add ~13·h per layer (< 0.01%).
  const double l = 96, h = 12288, v = 50257;
  const double hand = 12 * l * h * h + v * h;
  EXPECT_NEAR(matmul_params_per_token(a), hand, hand * 1e-4);
  // And it is ~175B: N_matmul = 174.6e9 (Narayanan et al. 2021 Table 2 "174.6B").
  EXPECT_NEAR(matmul_params_per_token(a), 174.6e9, 0.3e9);
}

TEST(PerfFlops, TrainingIsSixNPlusCausalAttention) {
  const ModelArch a = gpt3_175b();
  const double l = 96, h = 12288, s = 2048;
  const double n = matmul_params_per_token(a);
  const FlopsPerToken f = training_flops_per_token(a, 2048, Recompute::none, Task::pretrain);
  // Kaplan et al. 2020 Table 1: C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn, training = 3 × forward.
  // We count the causal half of the scores: mean keys per query (s+1)/2, and both Q·Kᵀ and A·V:
  // attention forward per token = L · 4 · h · (s+1)/2.
  EXPECT_DOUBLE_EQ(f.dense_matmul_flop, 6 * n);
  EXPECT_NEAR(f.attention_flop, 3 * l * 4 * h * (s + 1) / 2, 1.0);
  EXPECT_DOUBLE_EQ(f.total_flop, f.dense_matmul_flop + f.attention_flop);
  // Narayanan et al. 2021 Eq. 3 without recompute (72 instead of 96): per token
  // 72·l·h²·(1 + s/(6h) + V/(12·l·h)) counts the FULL s×s scores; ours = that − 6·l·h·(s−1).
  const double v = 50257;
  const double narayanan = 72 * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
  EXPECT_NEAR(f.total_flop, narayanan - 6 * l * h * (s - 1), narayanan * 1e-4);
}

TEST(PerfFlops, FullRecomputeIsEightN) {
  const ModelArch a = gpt3_175b();
  const FlopsPerToken none = training_flops_per_token(a, 2048, Recompute::none, Task::pretrain);
  const FlopsPerToken full = training_flops_per_token(a, 2048, Recompute::full, Task::pretrain);
  const FlopsPerToken sel = training_flops_per_token(a, 2048, Recompute::selective, Task::pretrain);
  const FlopsPerToken fwd = forward_flops_per_token(a, 2048);
  // Full recompute = 4 passes: 8·N instead of 6·N.
  EXPECT_DOUBLE_EQ(full.dense_matmul_flop, 8 * matmul_params_per_token(a));
  EXPECT_DOUBLE_EQ(full.total_flop, 4 * fwd.total_flop);
  // Selective recompute re-runs only the attention core (Korthikanti et al. 2022 §5).
  EXPECT_DOUBLE_EQ(sel.dense_matmul_flop, none.dense_matmul_flop);
  EXPECT_DOUBLE_EQ(sel.attention_flop, none.attention_flop + fwd.attention_flop);
  // Model FLOPs (for MFU) never include recomputation.
  EXPECT_DOUBLE_EQ(model_training_flops_per_token(a, 2048, Task::pretrain).total_flop, none.total_flop);
}

TEST(PerfFlops, LoraSkipsWeightGradients) {
  const ModelArch a = gpt3_175b();
  const FlopsPerToken full = training_flops_per_token(a, 2048, Recompute::none, Task::full);
  const FlopsPerToken lora = training_flops_per_token(a, 2048, Recompute::none, Task::lora);
  const FlopsPerToken qlora = training_flops_per_token(a, 2048, Recompute::none, Task::qlora);
  // 2N forward + 2N activation gradients = 4N; attention core backward is unchanged.
  EXPECT_DOUBLE_EQ(lora.dense_matmul_flop, 4 * matmul_params_per_token(a));
  EXPECT_DOUBLE_EQ(lora.attention_flop, full.attention_flop);
  EXPECT_DOUBLE_EQ(qlora.total_flop, lora.total_flop);
}

TEST(PerfFlops, MegatronRecomputeModulesRerunTheirForwardGemms) {
  // Megatron-Core selective recompute_modules (memory.hpp RecomputeModule) on DeepSeek-V3
  // (data/models: 61 layers, 3 dense, h 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512,
  // qk_nope 128, qk_rope 64, v 128, dense MLP 18432). Against {core_attn} alone, per token:
  //   mla_up_proj re-runs q_b_proj (1536 → 128·192) and kv_b_proj (512 → 128·(128+128)) forward
  //     in all 61 layers: 61 × 2 × (1536·24576 + 512·32768) = 61 × 109051904 FLOP;
  //   mlp re-runs the 3 dense layers' gate, up, down: 3 × 2 × 3 × 7168·18432 FLOP;
  //   layernorm and moe_act run no GEMM (element-wise: perf.hpp recompute_modules_bytes_per_token);
  //   without core_attn the attention core is not re-run.
  const ModelArch a = load_preset("deepseek-v3");
  const auto core = static_cast<unsigned>(RecomputeModule::core_attn);
  const auto mla_up = static_cast<unsigned>(RecomputeModule::mla_up_proj);
  const auto mlp = static_cast<unsigned>(RecomputeModule::mlp);
  const auto norm = static_cast<unsigned>(RecomputeModule::layernorm) | static_cast<unsigned>(RecomputeModule::moe_act);
  const FlopsPerToken base = training_flops_per_token(a, 4096, Recompute::selective, Task::pretrain, core);
  EXPECT_EQ(training_flops_per_token(a, 4096, Recompute::selective, Task::pretrain, 0).total_flop, base.total_flop);
  EXPECT_NEAR(training_flops_per_token(a, 4096, Recompute::selective, Task::pretrain, core | mla_up).dense_matmul_flop -
                  base.dense_matmul_flop,
              61.0 * 109051904, 1.0);
  EXPECT_NEAR(training_flops_per_token(a, 4096, Recompute::selective, Task::pretrain, core | mlp).dense_matmul_flop -
                  base.dense_matmul_flop,
              3.0 * 2 * 3 * 7168.0 * 18432, 1.0);
  EXPECT_EQ(training_flops_per_token(a, 4096, Recompute::selective, Task::pretrain, core | norm).total_flop,
            base.total_flop);
  const FlopsPerToken fwd = forward_flops_per_token(a, 4096);
  EXPECT_NEAR(base.attention_flop - training_flops_per_token(a, 4096, Recompute::selective, Task::pretrain, mla_up).attention_flop,
              fwd.attention_flop, 1e-6 * fwd.attention_flop);
  // Under another recompute mode the modules do not apply.
  EXPECT_EQ(training_flops_per_token(a, 4096, Recompute::none, Task::pretrain, mla_up).total_flop,
            training_flops_per_token(a, 4096, Recompute::none, Task::pretrain).total_flop);
}

TEST(PerfFlops, RecomputedMlpOfAShapeOnlyModelIsCharged) {
  // A model described by its shape only (--params/--layers/--hidden, no geometry; trial41 D1: its
  // mlp recompute was free): 32 dense layers of a gated MLP 4096 → 11008: 32 × 2 × 3 × 4096·11008.
  ModelArch a = gpt3_175b();
  a.name = "shape-only";
  a.num_layers = 32;
  a.hidden_size = 4096;
  a.num_attention_heads = 32;
  a.num_kv_heads = 32;
  a.intermediate_size = 11008;
  a.gated_mlp = true;
  a.params = count_decoder_params(a);
  ASSERT_EQ(current_geometry(a), nullptr);
  const auto core = static_cast<unsigned>(RecomputeModule::core_attn);
  const auto mlp = static_cast<unsigned>(RecomputeModule::mlp);
  EXPECT_NEAR(training_flops_per_token(a, 4096, Recompute::selective, Task::pretrain, core | mlp).dense_matmul_flop -
                  training_flops_per_token(a, 4096, Recompute::selective, Task::pretrain, core).dense_matmul_flop,
              32.0 * 2 * 3 * 4096 * 11008, 1.0);
}

TEST(PerfFlops, InferenceIsTwoNPlusAttentionOverContext) {
  const ModelArch a = load_preset("llama-2-7b");
  // Llama-2-7B: 32 layers, 32 heads × 128; decode at context c attends to c keys:
  // 4 · L · H · d · c FLOP (Q·Kᵀ and A·V), + 2·N_matmul.
  const double c = 4096;
  const FlopsPerToken f = inference_flops_per_token(a, 4096);
  EXPECT_DOUBLE_EQ(f.attention_flop, 4.0 * 32 * 32 * 128 * c);
  EXPECT_DOUBLE_EQ(f.dense_matmul_flop, 2 * matmul_params_per_token(a));
  // Untied: N_matmul = total − embeddings − norms ≈ 6.74e9 − 0.131e9 (Touvron et al. 2023: 6.74B).
  EXPECT_NEAR(matmul_params_per_token(a), 6.74e9 - 32000.0 * 4096, 0.01e9);
  // Prefill of p tokens = p × forward per token at s = p.
  EXPECT_DOUBLE_EQ(prefill_flops(a, 512), 512 * forward_flops_per_token(a, 512).total_flop);
}

TEST(PerfFlops, GqaDoesNotChangeAttentionFlops) {
  ModelArch mha = load_preset("llama-2-7b");
  ModelArch gqa = mha;
  gqa.num_kv_heads = 8;  // fewer K/V heads: fewer projection weights, same score FLOPs per query head
  EXPECT_DOUBLE_EQ(forward_flops_per_token(mha, 2048).attention_flop,
                   forward_flops_per_token(gqa, 2048).attention_flop);
}

TEST(PerfFlops, SlidingWindowCapsKeysPerQuery) {
  ModelArch a = load_preset("llama-2-7b");
  const double s = 8192, w = 4096;
  const double full = forward_flops_per_token(a, 8192).attention_flop;
  a.sliding_window = 4096;
  a.layer_uses_sliding_window.assign(32, true);
  // Query i (1-based) sees min(i, w) keys: mean = (w(w+1)/2 + (s−w)·w)/s.
  const double mean_keys = (w * (w + 1) / 2 + (s - w) * w) / s;
  EXPECT_NEAR(forward_flops_per_token(a, 8192).attention_flop, 4.0 * 32 * 32 * 128 * mean_keys, 1.0);
  EXPECT_LT(forward_flops_per_token(a, 8192).attention_flop, full);
  // Half the layers windowed: halfway between.
  for (std::size_t i = 0; i < 32; i += 2) a.layer_uses_sliding_window[i] = false;
  EXPECT_NEAR(forward_flops_per_token(a, 8192).attention_flop,
              16.0 * 4 * 32 * 128 * ((s + 1) / 2) + 16.0 * 4 * 32 * 128 * mean_keys, 1.0);
}

TEST(PerfFlops, GptOss120bWindowedLayersAttendTo128Keys) {
  // openai/gpt-oss-120b config.json (data/models/openai__gpt-oss-120b): 36 layers whose
  // layer_types alternate sliding_attention / full_attention (18 each), sliding_window 128,
  // 64 query heads × head_dim 64 (Q·Kᵀ and A·V widths 4096 each), hidden 2880, 8 KV heads,
  // 128 experts of width 2880 (gate+up 2880→5760, down 2880→2880), top-4, vocabulary 201088.
  const ModelArch a = load_preset("gpt-oss-120b");
  ASSERT_EQ(a.num_layers, 36);
  ASSERT_EQ(a.sliding_window, 128);
  ASSERT_EQ(a.num_sliding_window_layers(), 18);
  const double s = 4096, w = 128, per_key = 2.0 * 4096 + 2.0 * 4096;
  const double full_keys = (s + 1) / 2;                           // 2048.5
  const double window_keys = (w * (w + 1) / 2 + (s - w) * w) / s;  // 516160 / 4096 = 126.015625
  EXPECT_DOUBLE_EQ(window_keys, 126.015625);
  const double attention = per_key * (18 * full_keys + 18 * window_keys);  // 6.41e8 per token
  EXPECT_NEAR(forward_flops_per_token(a, 4096).attention_flop, attention, 1.0);
  // Full attention on every layer would be 36 × 2048.5 keys: 1.88 × what the windows leave.
  EXPECT_NEAR(per_key * 36 * full_keys / attention, 1.884, 1e-3);
  // Training: forward + backward = 3 × the forward attention.
  EXPECT_NEAR(model_training_flops_per_token(a, 4096, Task::pretrain).attention_flop, 3 * attention, 3.0);
  // Matmul weights per token: per layer q 2880·4096 + k, v 2·2880·512 + o 4096·2880 + router
  // 2880·128 + 4 active experts × (2880·5760 + 2880·2880) = 126,443,520; × 36 + head 2880·201088.
  const double per_layer = 2880.0 * 4096 + 2 * 2880.0 * 512 + 4096.0 * 2880 + 2880.0 * 128 +
                           4 * (2880.0 * 5760 + 2880.0 * 2880);
  EXPECT_DOUBLE_EQ(per_layer, 126443520.0);
  EXPECT_NEAR(matmul_params_per_token(a), 36 * per_layer + 2880.0 * 201088, 1.0);
}

TEST(PerfFlops, MoeCountsOnlyActiveExperts) {
  const ModelArch a = load_preset("mixtral-8x7b");
  // Mixtral 8x7B: 46.7B total, 12.9B active per token incl. embeddings (Jiang et al. 2024 §2);
  // without the 2 × 32000 × 4096 = 0.26B embedding + head... the head IS a matmul: only the
  // input embedding (0.13B) and norms drop out.
  EXPECT_NEAR(matmul_params_per_token(a), 12.9e9 - 32000.0 * 4096, 0.1e9);
  EXPECT_LT(matmul_params_per_token(a), 0.3 * static_cast<double>(a.total_params()));
}

}  // namespace
}  // namespace gpuplan
