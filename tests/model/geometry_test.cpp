// The layer geometry (geometry.hpp): one list of matrices per model, checked by hand on tiny configs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/hf_config.hpp"
#include "model/param_count.hpp"
#include "model/model_source.hpp"
#include "model/presets.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;

const LinearFamily* find(const LayerGeometry& g, const std::string& name) {
  for (const auto& l : g.linears) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

// Tiny llama: h 8, L 2, H 2, K 1, head_dim 4, I 16, V 10, untied.
json tiny_llama() {
  return json::parse(R"({"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
      "num_key_value_heads": 1, "intermediate_size": 16, "vocab_size": 10, "tie_word_embeddings": false,
      "hidden_act": "silu"})");
}

TEST(Geometry, TinyLlamaMatricesAndWidths) {
  const ModelArch a = parse_hf_config(tiny_llama(), "tiny.json");
  const LayerGeometry& g = a.geometry;
  // q 8→8, k 8→4, v 8→4, o 8→8, gate/up 8→16, down 16→8, lm_head 8→10.
  ASSERT_EQ(g.linears.size(), 8u);
  ASSERT_NE(find(g, "self_attn.k_proj"), nullptr);
  EXPECT_EQ(find(g, "self_attn.k_proj")->d_out, 4);
  EXPECT_EQ(find(g, "self_attn.k_proj")->layers, 2);
  EXPECT_EQ(find(g, "mlp.down_proj")->d_in, 16);
  EXPECT_EQ(find(g, "lm_head")->d_out, 10);
  EXPECT_EQ(g.attention.q_width, 8);
  EXPECT_EQ(g.attention.k_width, 4);
  EXPECT_EQ(g.attention.o_in_width, 8);
  EXPECT_EQ(g.attention.kv_cache_width, 8);  // 2 · 1 KV head · 4
  EXPECT_EQ(g.attention_layers, 2);
  EXPECT_EQ(g.dense_mlp_layers, 2);
  EXPECT_EQ(g.moe_layers, 0);
  EXPECT_EQ(g.activation, MlpActivation::swiglu);
  EXPECT_EQ(g.norm, NormKind::rms_norm);
  // The breakdown is the geometry's sum (hand total 1352 in hand_calc_test.cpp).
  EXPECT_EQ(count_params(g).total(), 1352);
  EXPECT_EQ(a.total_params(), 1352);
}

// LoRA rank 2 on all linear targets, r·(d_in + d_out) per matrix per layer:
//   q 2·(8+8) = 32, k 2·(8+4) = 24, v 24, o 32, gate 2·(8+16) = 48, up 48, down 48 → 256 per layer, × 2 = 512.
// q and v only: (32 + 24) · 2 = 112. The LM head is not a default target.
TEST(Geometry, LoraAdapterParameters) {
  const ModelArch a = parse_hf_config(tiny_llama(), "tiny.json");
  EXPECT_EQ(a.geometry.lora_params(2, {"all_linear"}), 512);
  EXPECT_EQ(a.geometry.lora_params(2, {"q", "v"}), 112);
}

// Mixtral-style MoE on the tiny shape: 4 experts of width 4, top-2. Routed matrices carry copies 4, active 2;
// the router is h→E = 8→4. LoRA rank 1 on "up": 2 layers · 4 copies · (8 + 4) = 96.
TEST(Geometry, MoeCopiesAndRouter) {
  json c = tiny_llama();
  c["model_type"] = "mixtral";
  c["num_local_experts"] = 4;
  c["num_experts_per_tok"] = 2;
  c["intermediate_size"] = 4;
  const ModelArch a = parse_hf_config(c, "moe.json");
  const LinearFamily* up = find(a.geometry, "mlp.experts.up_proj");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->copies, 4);
  EXPECT_EQ(up->active_copies, 2);
  EXPECT_EQ(up->role, LinearRole::routed_expert);
  EXPECT_EQ(find(a.geometry, "mlp.gate")->d_out, 4);
  EXPECT_EQ(a.geometry.moe_layers, 2);
  EXPECT_EQ(a.geometry.dense_mlp_layers, 0);
  EXPECT_EQ(a.geometry.lora_params(1, {"up"}), 96);
  // Experts: 2 layers · 4 · 3·8·4 = 768; active 2 · 2 · 96 = 384.
  EXPECT_EQ(a.params.experts, 768);
  EXPECT_EQ(a.params.active_experts, 384);
}

// DeepSeek-V3 MLA: KV cache per token per layer = kv_lora_rank 512 + qk_rope_head_dim 64 = 576 elements
// (DeepSeek-V2 paper §2.1.2); q width 128 heads · (128 + 64) = 24576; o input 128 · 128 = 16384.
TEST(Geometry, DeepSeekV3Mla) {
  const ModelArch a = load_preset("deepseek-v3");
  EXPECT_EQ(a.geometry.attention.kv_cache_width, 576);
  EXPECT_EQ(a.geometry.attention.q_width, 24576);
  EXPECT_EQ(a.geometry.attention.o_in_width, 16384);
  EXPECT_EQ(a.geometry.moe_layers, 58);  // 61 layers, first 3 dense
  EXPECT_EQ(a.geometry.dense_mlp_layers, 3);
  EXPECT_EQ(a.geometry.shared_expert_width, 2048);
  EXPECT_EQ(count_params(a.geometry).total(), a.total_params());
}

// GPT-2's "gelu_new" is Python code in transformers (NewGELUActivation), LayerNorm with bias, learned positions.
TEST(Geometry, Gpt2ActivationAndNorm) {
  const ModelArch a = load_preset("gpt2");
  EXPECT_EQ(a.geometry.activation, MlpActivation::gelu_python);
  EXPECT_EQ(a.geometry.norm, NormKind::layer_norm);
  EXPECT_FALSE(a.geometry.gated_mlp);
  EXPECT_TRUE(find(a.geometry, "lm_head")->tied);
}

// Mamba: no attention, no MLP; the mixer is SSM matrices in every layer.
TEST(Geometry, MambaHasNoAttention) {
  const ModelArch a = load_preset("mamba-2.8b");
  EXPECT_EQ(a.geometry.attention_layers, 0);
  EXPECT_EQ(a.geometry.dense_mlp_layers, 0);
  EXPECT_EQ(a.geometry.ssm_layers, 64);
  EXPECT_EQ(a.geometry.activation, MlpActivation::none);
  EXPECT_EQ(a.attention, AttentionKind::none);
}

// --params with --mlp plain: up + down only. 32 layers, h 4096, I 16384, V 32000, MHA, untied:
//   per layer attention 4·4096² = 67,108,864 + MLP 2·4096·16384 = 134,217,728 → × 32 = 6,442,450,944
//   norms 32·2·4096 + 4096 = 266,240; embeddings + head 2·32000·4096 = 262,144,000 → 6,704,861,184;
//   the rest of 7e9 (295,138,816) is in other.
TEST(Geometry, SyntheticPlainMlp) {
  ModelSource src;
  src.params = 7e9;
  src.layers = 32;
  src.hidden = 4096;
  src.intermediate = 16384;
  src.plain_mlp = true;
  src.validate();
  const ModelArch a = resolve_model(src);
  EXPECT_FALSE(a.gated_mlp);
  EXPECT_EQ(a.geometry.activation, MlpActivation::gelu);
  EXPECT_EQ(a.params.mlp, 32LL * 2 * 4096 * 16384);
  EXPECT_EQ(a.params.other, 295'138'816);
  EXPECT_EQ(a.total_params(), 7'000'000'000);
  // --mlp without --params is an error naming the flag.
  ModelSource bad;
  bad.preset = "gpt2";
  bad.plain_mlp = true;
  try {
    bad.validate();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "--mlp");
  }
}

}  // namespace
}  // namespace gpuplan
