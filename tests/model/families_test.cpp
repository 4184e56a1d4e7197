// Family-specific layouts on tiny configs, each with the expected count derived in the comments.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/hf_config.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;

// Gemma 3 multimodal config: the text model is nested under text_config; vision_config is counted in other.
// Text, h = 8, L = 6, H = 2, K = 1, head_dim 4, I = 16, V = 10, tied (Gemma default):
//   attention/layer 64 + 32 + 32 + 64 = 192 → 1152; MLP/layer 384 → 2304
//   norms: 4 per layer × 8 = 32 + q/k norms 2·4 = 8 → 40/layer → 240, + final 8 → 248; embeddings 80
//   text total 1152 + 2304 + 248 + 80 = 3784
// Vision (generic ViT), h_v = 4, I_v = 8, L_v = 1, patch 2, image 4, 3 channels:
//   patch conv 3·2·2·4 + 4 = 52; positions (4/2)²·4 = 16; layer 4·(16 + 4) + 4·8 + 8 + 8·4 + 4 + 4·4 = 172;
//   post norm 8; projector 4·8 = 32 → 280 in other. Total 4064.
// Sliding: sliding_window_pattern 6 → layers 0..4 local, layer 5 global.
TEST(Families, Gemma3NestedTextConfigAndVisionTower) {
  const json c = json::parse(R"({"model_type": "gemma3", "torch_dtype": "bfloat16",
    "text_config": {"model_type": "gemma3_text", "hidden_size": 8, "num_hidden_layers": 6, "num_attention_heads": 2,
      "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 16, "vocab_size": 10, "sliding_window": 512,
      "sliding_window_pattern": 6},
    "vision_config": {"hidden_size": 4, "intermediate_size": 8, "num_hidden_layers": 1, "patch_size": 2, "image_size": 4}})");
  const ModelArch a = parse_hf_config(c, "gemma3.json");
  EXPECT_EQ(a.params.other, 280);
  EXPECT_EQ(a.total_params() - a.params.other, 3784);
  EXPECT_EQ(a.torch_dtype, "bfloat16");
  EXPECT_EQ(a.sliding_window, 512);
  EXPECT_EQ(a.num_sliding_window_layers(), 5);
  EXPECT_FALSE(a.layer_uses_sliding_window[5]);
  ASSERT_FALSE(a.notes.empty());
}

// Falcon-40B-style new_decoder_architecture: K = num_kv_heads = 2 (GQA), two LayerNorms per layer (ln_attn,
// ln_mlp), no biases, plain MLP 4h. h = 8, H = 4 (head_dim 2), L = 1, V = 10, tied:
//   query_key_value 8·(4 + 2·2)·2 = 128, dense 64 → 192; MLP 8·32 + 32·8 = 512;
//   norms 2 × 16 + ln_f 16 = 48; embeddings 80 → 832
TEST(Families, FalconNewDecoderArchitecture) {
  const json c = json::parse(R"({"model_type": "falcon", "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 4,
    "num_kv_heads": 2, "new_decoder_architecture": true, "parallel_attn": true, "bias": false, "vocab_size": 10})");
  const ModelArch a = parse_hf_config(c, "falcon.json");
  EXPECT_EQ(a.num_kv_heads, 2);
  EXPECT_EQ(a.attention, AttentionKind::gqa);
  EXPECT_EQ(a.params.attention, 192);
  EXPECT_EQ(a.params.mlp, 512);
  EXPECT_EQ(a.params.norms, 48);
  EXPECT_EQ(a.total_params(), 832);
}

// OPT with word_embed_proj_dim (p = 4) != hidden (8) (the opt-350m layout): embed_tokens V·p = 40,
// positions (16 + 2)·8 = 144, project_in + project_out 2·4·8 = 64 (other); layer L = 1:
//   q/k/v/o with bias 4·(64 + 8) = 288; fc1 8·32 + 32, fc2 32·8 + 8 → 552; 2 LayerNorms 32;
//   final LayerNorm dropped (do_layer_norm_before false) → total 40 + 144 + 64 + 288 + 552 + 32 = 1120
TEST(Families, OptProjection) {
  const json c = json::parse(R"({"model_type": "opt", "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
    "ffn_dim": 32, "max_position_embeddings": 16, "vocab_size": 10, "word_embed_proj_dim": 4, "do_layer_norm_before": false})");
  const ModelArch a = parse_hf_config(c, "opt.json");
  EXPECT_EQ(a.params.embeddings, 184);
  EXPECT_EQ(a.params.other, 64);
  EXPECT_EQ(a.params.head, 0);
  EXPECT_EQ(a.total_params(), 1120);
}

// BLOOM: per layer 12h² + 13h, plus word_embeddings_layernorm 2h and ln_f 2h, ALiBi, tied.
// h = 8, L = 2, V = 10: 2·(768 + 104) = 1744; embeddings 80; extra norms 32 → 1856
TEST(Families, BloomLayout) {
  const json c = json::parse(R"({"model_type": "bloom", "n_embed": 8, "n_layer": 2, "num_attention_heads": 2, "vocab_size": 10})");
  const ModelArch a = parse_hf_config(c, "bloom.json");
  EXPECT_EQ(a.total_params(), 1856);
  EXPECT_EQ(a.position_encoding, PositionEncoding::alibi);
}

// gpt-oss per layer, h = 8, H = 2, K = 1, head_dim 4, E = 2 experts of width 4, top-1, V = 10, L = 2:
//   attention with biases: q 32+8... = (8·8 + 8) + 2·(8·4 + 4) + (8·8 + 8) = 72 + 72 + 72 = 216, + sinks 2 → 218
//   expert: gate_up 8·8 + 8, down 4·8 + 8 → 112; 2 experts 224; router 8·2 + 2 = 18
//   per layer 218 + 224 + 18 + norms 16 = 476; × 2 = 952; final norm 8; embeddings 80 + head 80 → 1120
//   active: 1120 − 448 + 2·112 = 896
TEST(Families, GptOssBiasesAndSinks) {
  const json c = json::parse(R"({"model_type": "gpt_oss", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
    "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 4, "num_local_experts": 2, "num_experts_per_tok": 1,
    "vocab_size": 10, "sliding_window": 16, "layer_types": ["sliding_attention", "full_attention"]})");
  const ModelArch a = parse_hf_config(c, "oss.json");
  EXPECT_EQ(a.params.attention, 2 * 218);
  EXPECT_EQ(a.params.experts, 448);
  EXPECT_EQ(a.params.router, 36);
  EXPECT_EQ(a.total_params(), 1120);
  EXPECT_EQ(a.active_params(), 896);
  EXPECT_EQ(a.num_sliding_window_layers(), 1);
}

// Qwen2-MoE on the tiny llama shape (h 8, L 2, H 2, K 1, head_dim 4, V 10, untied): 4 experts of width 4, top-2,
// a shared expert of width 8 with its sigmoid gate Linear(h, 1):
//   attention 2·192 + q/k/v biases 2·(8 + 4 + 4) = 416; experts 2·4·(3·8·4) = 768 (active 2·2·96 = 384)
//   shared 2·3·8·8 = 384 (mlp); router 2·(8·4) + gates 2·8 = 80; norms 40; embeddings 80; head 80
//   total 1848, active 1848 − 768 + 384 = 1464.
// With mlp_only_layers [0]: layer 0 dense (3·8·16 = 384), one MoE layer: mlp 384 + 192, experts 384, router 40
//   → 416 + 576 + 384 + 40 + 40 + 160 = 1616.
TEST(Families, Qwen2MoeSharedExpertAndMlpOnlyLayers) {
  json c = json::parse(R"({"model_type": "qwen2_moe", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
    "num_key_value_heads": 1, "intermediate_size": 16, "vocab_size": 10, "num_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 4, "shared_expert_intermediate_size": 8, "decoder_sparse_step": 1, "mlp_only_layers": []})");
  ModelArch a = parse_hf_config(c, "qwen2moe.json");
  EXPECT_EQ(a.params.attention, 416);
  EXPECT_EQ(a.params.mlp, 384);
  EXPECT_EQ(a.params.router, 80);
  EXPECT_EQ(a.total_params(), 1848);
  EXPECT_EQ(a.active_params(), 1464);
  c["mlp_only_layers"] = {0};
  a = parse_hf_config(c, "qwen2moe.json");
  EXPECT_EQ(a.moe->num_moe_layers, 1);
  EXPECT_EQ(a.total_params(), 1616);
}

// layer_types entries must be known and one per layer.
TEST(Families, LayerTypesValidated) {
  json c = json::parse(R"({"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
    "intermediate_size": 16, "vocab_size": 10, "sliding_window": 4, "layer_types": ["sliding_attention"]})");
  try {
    parse_hf_config(c, "cfg.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "cfg.json: layer_types");
  }
  c["layer_types"] = {"sliding_attention", "banana"};
  try {
    parse_hf_config(c, "cfg.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "cfg.json: layer_types[1]");
  }
}

}  // namespace
}  // namespace gpuplan
