// Hand calculations of tiny configs written here, so every term of the counting formula is exercised
// with numbers small enough to check on paper.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/hf_config.hpp"
#include "model/param_count.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;

json tiny_llama() {
  return json::parse(R"({"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
      "num_key_value_heads": 1, "intermediate_size": 16, "vocab_size": 10, "tie_word_embeddings": false,
      "max_position_embeddings": 64, "torch_dtype": "bfloat16"})");
}

// 2-layer llama, h = 8, H = 2, K = 1 (MQA), head_dim = h/H = 4, I = 16, V = 10, untied:
//   attention/layer: q 8·(2·4) = 64, k 8·(1·4) = 32, v 32, o (2·4)·8 = 64  → 192; × 2 layers = 384
//   MLP/layer: gate 8·16 + up 8·16 + down 16·8 = 384;                      × 2 layers = 768
//   norms: 2 RMSNorms × 8 per layer = 16; × 2 = 32; + final norm 8       → 40
//   embeddings 10·8 = 80; lm_head 10·8 = 80
//   total 384 + 768 + 40 + 80 + 80 = 1352
TEST(HandCalculation, TwoLayerLlamaHidden8) {
  const ModelArch a = parse_hf_config(tiny_llama(), "tiny.json");
  EXPECT_EQ(a.params.attention, 384);
  EXPECT_EQ(a.params.mlp, 768);
  EXPECT_EQ(a.params.norms, 40);
  EXPECT_EQ(a.params.embeddings, 80);
  EXPECT_EQ(a.params.head, 80);
  EXPECT_EQ(a.params.other, 0);
  EXPECT_EQ(a.total_params(), 1352);
  EXPECT_EQ(a.active_params(), 1352);
  EXPECT_EQ(a.head_dim, 4);
  EXPECT_EQ(a.num_kv_heads, 1);
  EXPECT_EQ(a.attention, AttentionKind::mqa);
  EXPECT_EQ(a.torch_dtype, "bfloat16");
  EXPECT_EQ(a.max_position_embeddings, 64);
}

// Same with tie_word_embeddings: the head shares the embedding matrix → 1352 − 80 = 1272.
// With attention_bias (llama: q/k/v/o all biased): + q 8 + k 4 + v 4 + o 8 = 24 per layer → 1272 + 48 = 1320.
TEST(HandCalculation, TiedEmbeddingsAndAttentionBias) {
  json c = tiny_llama();
  c["tie_word_embeddings"] = true;
  EXPECT_EQ(parse_hf_config(c, "tiny.json").total_params(), 1272);
  c["attention_bias"] = true;
  EXPECT_EQ(parse_hf_config(c, "tiny.json").total_params(), 1320);
}

// Qwen2 has q/k/v biases but no o_proj bias: (8 + 4 + 4) · 2 layers = 32 more than the untied llama → 1384.
TEST(HandCalculation, Qwen2QkvBiasOnly) {
  json c = tiny_llama();
  c["model_type"] = "qwen2";
  EXPECT_EQ(parse_hf_config(c, "tiny.json").total_params(), 1352 + 32);
}

// Qwen3 adds q_norm and k_norm of head_dim = 4 each per layer: 2 · 4 · 2 = 16 → 1368.
TEST(HandCalculation, Qwen3QkNorm) {
  json c = tiny_llama();
  c["model_type"] = "qwen3";
  EXPECT_EQ(parse_hf_config(c, "tiny.json").total_params(), 1352 + 16);
}

// Mixtral-style MoE on the tiny llama: 4 experts of width 16, top-2, router h·E = 32 per layer.
//   experts/layer 4 · 384 = 1536; × 2 = 3072 (active: 2 · 384 · 2 = 1536); router 2 · 32 = 64
//   total = 384 (attn) + 3072 + 64 + 40 + 80 + 80 = 3720; active = 3720 − 3072 + 1536 = 2184
TEST(HandCalculation, TinyMixtral) {
  json c = tiny_llama();
  c["model_type"] = "mixtral";
  c["num_local_experts"] = 4;
  c["num_experts_per_tok"] = 2;
  const ModelArch a = parse_hf_config(c, "tiny.json");
  ASSERT_TRUE(a.moe);
  EXPECT_EQ(a.moe->num_moe_layers, 2);
  EXPECT_EQ(a.params.mlp, 0);
  EXPECT_EQ(a.params.experts, 3072);
  EXPECT_EQ(a.params.router, 64);
  EXPECT_EQ(a.params.active_experts, 1536);
  EXPECT_EQ(a.total_params(), 3720);
  EXPECT_EQ(a.active_params(), 2184);
}

// Tiny DeepSeek-V3 (MLA + MoE), h = 8, L = 2, H = 2, q_lora 4, kv_lora 4, nope 2, rope 2, v 2,
// first_k_dense_replace 1 (layer 0 dense, I = 16), layer 1 MoE: 4 experts × width 4, 1 shared, top-1, noaux_tc.
//   MLA/layer: q_a 8·4 = 32, q_a_norm 4, q_b 4·2·(2+2) = 32, kv_a 8·(4+2) = 48, kv_a_norm 4,
//              kv_b 4·2·(2+2) = 32, o 2·2·8 = 32 → 184; × 2 = 368
//   dense MLP layer 0: 3·8·16 = 384; shared expert layer 1: 3·8·4 = 96 → mlp 480
//   experts: 4 · 96 = 384; active 1 · 96; router 8·4 + 4 (e_score_correction_bias) = 36
//   norms 2·8·2 + 8 = 40; embeddings 10·8 = 80; head 80
//   total 368 + 480 + 384 + 36 + 40 + 80 + 80 = 1468; active 1468 − 384 + 96 = 1180
//   MTP (1 layer): the MoE layer without embeddings/final norm (184 + 96 + 384 + 36 + 16 = 716)
//   + enorm 8 + hnorm 8 + eh_proj 2·8·8 = 128 + shared_head norm 8 + embed/head copies 160 → 1028
TEST(HandCalculation, TinyDeepSeekV3) {
  const json c = json::parse(R"({"model_type": "deepseek_v3", "hidden_size": 8, "num_hidden_layers": 2,
      "num_attention_heads": 2, "num_key_value_heads": 2, "intermediate_size": 16, "vocab_size": 10,
      "q_lora_rank": 4, "kv_lora_rank": 4, "qk_nope_head_dim": 2, "qk_rope_head_dim": 2, "v_head_dim": 2,
      "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 1, "moe_intermediate_size": 4,
      "first_k_dense_replace": 1, "moe_layer_freq": 1, "topk_method": "noaux_tc", "num_nextn_predict_layers": 1,
      "tie_word_embeddings": false})");
  const ModelArch a = parse_hf_config(c, "tiny.json");
  EXPECT_EQ(a.attention, AttentionKind::mla);
  EXPECT_EQ(a.params.attention, 368);
  EXPECT_EQ(a.params.mlp, 480);
  EXPECT_EQ(a.params.experts, 384);
  EXPECT_EQ(a.params.router, 36);
  EXPECT_EQ(a.total_params(), 1468);
  EXPECT_EQ(a.active_params(), 1180);
  EXPECT_EQ(a.moe->num_moe_layers, 1);
  EXPECT_EQ(a.mtp_params, 1028);
}

// GPT-2 shape, h = 8, L = 2, heads 2, V = 10, n_positions 16, n_inner null (→ 4h = 32), tied:
//   per layer: ln_1 16, c_attn 8·24 + 24 = 216, c_proj 64 + 8 = 72, ln_2 16, c_fc 8·32 + 32 = 288,
//              mlp c_proj 32·8 + 8 = 264 → 872 (= 12h² + 13h = 768 + 104); × 2 = 1744
//   wte 80 + wpe 16·8 = 128 + ln_f 16 → 1744 + 224 = 1968
TEST(HandCalculation, TinyGpt2) {
  const json c = json::parse(R"({"model_type": "gpt2", "n_embd": 8, "n_layer": 2, "n_head": 2, "vocab_size": 10,
      "n_positions": 16, "n_inner": null})");
  const ModelArch a = parse_hf_config(c, "tiny.json");
  EXPECT_EQ(a.total_params(), 1968);
  EXPECT_EQ(a.position_encoding, PositionEncoding::learned);
  EXPECT_EQ(a.max_position_embeddings, 16);
  EXPECT_FALSE(a.gated_mlp);
}

// Mamba, h = 4, L = 1, I = 8 (expand 2), N = 2, conv 3, dt rank 1, V = 10, tied:
//   in_proj 4·16 = 64, conv1d 8·3 + 8 = 32, x_proj 8·(1 + 4) = 40, dt_proj 1·8 + 8 = 16, A_log 8·2 = 16,
//   D 8, out_proj 8·4 = 32 → 208 (other); norms 4 + final 4 = 8; embeddings 40 → total 256
TEST(HandCalculation, TinyMamba) {
  const json c = json::parse(R"({"model_type": "mamba", "hidden_size": 4, "num_hidden_layers": 1, "vocab_size": 10,
      "state_size": 2, "conv_kernel": 3, "expand": 2, "intermediate_size": 8, "time_step_rank": 1,
      "use_bias": false, "use_conv_bias": true})");
  const ModelArch a = parse_hf_config(c, "tiny.json");
  EXPECT_EQ(a.family, ModelFamily::state_space);
  EXPECT_EQ(a.params.other, 208);
  EXPECT_EQ(a.total_params(), 256);
  EXPECT_EQ(a.attention, AttentionKind::none);
}

}  // namespace
}  // namespace gpuplan
