// Families added with the layer geometry: hand calculations on tiny configs (every term written out) and the
// published parameter counts of real models whose shape is written here field by field from their config.json.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/hf_config.hpp"
#include "model/param_count.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;

ModelArch parse(const json& c) { return parse_hf_config(c, "tiny.json"); }

// Tiny shape used below: h 8, L 2, H 2 (head_dim 4), I 16, V 10.
// GPT-NeoX, untied, biases, parallel residual: per layer query_key_value 8·24 + 24 = 216, dense 64 + 8 = 72,
// dense_h_to_4h 8·16 + 16 = 144, dense_4h_to_h 16·8 + 8 = 136, two LayerNorms 2·16 = 32 → 600; × 2 = 1200;
// final LayerNorm 16, embed_in 80, embed_out 80 → 1376.
TEST(NewFamilies, GptNeoxHandCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "gpt_neox", "hidden_size": 8, "num_hidden_layers": 2,
      "num_attention_heads": 2, "intermediate_size": 16, "vocab_size": 10, "use_parallel_residual": true})"));
  EXPECT_EQ(a.params.attention, 576);
  EXPECT_EQ(a.params.mlp, 560);
  EXPECT_EQ(a.params.norms, 80);
  EXPECT_EQ(a.total_params(), 1376);
  EXPECT_TRUE(a.geometry.parallel_attention);
  EXPECT_EQ(a.geometry.norm, NormKind::layer_norm);
  EXPECT_EQ(a.geometry.activation, MlpActivation::gelu);
}

// Pythia model card ("exact parameter counts"): Pythia-160M 162,322,944 and Pythia-1B 1,011,781,632.
// Shapes (config.json): 160M h 768, 12 layers, 12 heads, I 3072; 1B h 2048, 16 layers, 8 heads, I 8192; V 50304.
TEST(NewFamilies, PythiaPublishedExactCounts) {
  json c = json::parse(R"({"model_type": "gpt_neox", "hidden_size": 768, "num_hidden_layers": 12,
      "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 50304, "tie_word_embeddings": false,
      "hidden_act": "gelu", "use_parallel_residual": true, "max_position_embeddings": 2048})");
  EXPECT_EQ(parse(c).total_params(), 162'322'944);
  c["hidden_size"] = 2048;
  c["num_hidden_layers"] = 16;
  c["num_attention_heads"] = 8;
  c["intermediate_size"] = 8192;
  EXPECT_EQ(parse(c).total_params(), 1'011'781'632);
}

// Phi: like the NeoX layer but ONE LayerNorm per layer (16) and an lm_head bias (10):
// per layer 216 + 72 + 144 + 136 + 16 = 584; × 2 = 1168; + final 16 + embed 80 + head 80 + 10 → 1354.
TEST(NewFamilies, PhiHandCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "phi", "hidden_size": 8, "num_hidden_layers": 2,
      "num_attention_heads": 2, "intermediate_size": 16, "vocab_size": 10, "hidden_act": "gelu_new"})"));
  EXPECT_EQ(a.params.head, 90);
  EXPECT_EQ(a.total_params(), 1354);
  EXPECT_EQ(a.geometry.activation, MlpActivation::gelu_python);
}

// GPT-BigCode with multi_query: c_attn 8 → 8 + 2·4: q 8·8 + 8 = 72, k 8·4 + 4 = 36, v 36, c_proj 72 → 216;
// MLP 280; ln_1 + ln_2 32 → 528; × 2 = 1056; ln_f 16, wte 80, wpe 4·8 = 32, tied head → 1184.
TEST(NewFamilies, GptBigcodeMqaHandCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "gpt_bigcode", "n_embd": 8, "n_layer": 2, "n_head": 2,
      "n_inner": 16, "n_positions": 4, "vocab_size": 10, "multi_query": true})"));
  EXPECT_EQ(a.total_params(), 1184);
  EXPECT_EQ(a.num_kv_heads, 1);
  EXPECT_EQ(a.attention, AttentionKind::mqa);
  EXPECT_EQ(a.geometry.attention.kv_cache_width, 8);  // 2 · 1 · 4
}

// StarCoder (bigcode/starcoder, 15.5B in its model card): n_embd 6144, 40 layers, 48 heads, MQA, n_inner 24576,
// n_positions 8192, vocab 49152. Per layer: c_attn 6144·6400 + 6400, c_proj 6144² + 6144, MLP 2·6144·24576 + 24576
// + 6144, 2 LayerNorms 24576 → 379,128,064; × 40 = 15,165,122,560; + wte 301,989,888 + wpe 50,331,648 + ln_f 12,288
// = 15,517,456,384.
TEST(NewFamilies, StarCoderPublishedCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "gpt_bigcode", "n_embd": 6144, "n_layer": 40, "n_head": 48,
      "n_inner": 24576, "n_positions": 8192, "vocab_size": 49152, "multi_query": true})"));
  EXPECT_EQ(a.total_params(), 15'517'456'384);
  EXPECT_NEAR(static_cast<double>(a.total_params()), 15.5e9, 0.05e9);
}

// StarCoder2, GQA (1 KV head), tied by default, biases: attention 72 + 36 + 36 + 72 = 216, MLP 280, norms 32 →
// 528 × 2 = 1056; final 16; embed 80 → 1152. Sliding window on every layer.
TEST(NewFamilies, Starcoder2HandCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "starcoder2", "hidden_size": 8, "num_hidden_layers": 2,
      "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 16, "vocab_size": 10,
      "sliding_window": 4, "use_bias": true})"));
  EXPECT_EQ(a.total_params(), 1152);
  EXPECT_EQ(a.num_sliding_window_layers(), 2);
}

// MPT, no_bias: Wqkv 8·24 + out_proj 64 = 256, up/down 2·8·16 = 256, 2 bias-free LayerNorms 16 → 528 × 2 = 1056;
// norm_f 8, wte 80 (tied) → 1144.
TEST(NewFamilies, MptHandCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "mpt", "d_model": 8, "n_layers": 2, "n_heads": 2,
      "expansion_ratio": 2, "vocab_size": 10, "max_seq_len": 64, "no_bias": true, "attn_config": {"alibi": true}})"));
  EXPECT_EQ(a.total_params(), 1144);
  EXPECT_EQ(a.position_encoding, PositionEncoding::alibi);
}

// MPT-7B (model card: 6.7B; the count is 6.65B, the card rounds up): d_model 4096, 32 layers, 32 heads, vocab 50432:
// per layer 12·4096² + 2·4096 = 201,334,784; × 32 = 6,442,713,088; + wte 206,569,472 + norm_f 4096 = 6,649,286,656.
TEST(NewFamilies, Mpt7bPublishedCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "mpt", "d_model": 4096, "n_layers": 32, "n_heads": 32,
      "expansion_ratio": 4, "vocab_size": 50432, "max_seq_len": 2048, "no_bias": true, "attn_config": {"alibi": true}})"));
  EXPECT_EQ(a.total_params(), 6'649'286'656);
  EXPECT_NEAR(static_cast<double>(a.total_params()), 6.7e9, 0.01 * 6.7e9);
}

json tiny_llama_like(const char* type) {
  json c = json::parse(R"({"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
      "intermediate_size": 16, "vocab_size": 10, "tie_word_embeddings": false})");
  c["model_type"] = type;
  return c;
}

// OLMo (1): the tiny llama (1352, hand_calc_test.cpp) without its 40 norm parameters (non-parametric LayerNorm) → 1312.
// OLMo 2: + q_norm 2·4 = 8 and k_norm 1·4 = 4 per layer (full width) → 1352 + 24 = 1376.
// SmolLM3: llama with tied embeddings by default → 1352 − 80 = 1272.
TEST(NewFamilies, OlmoAndSmolLm3HandCounts) {
  EXPECT_EQ(parse(tiny_llama_like("olmo")).total_params(), 1312);
  EXPECT_EQ(parse(tiny_llama_like("olmo")).geometry.norm, NormKind::non_parametric);
  EXPECT_EQ(parse(tiny_llama_like("olmo2")).total_params(), 1376);
  json s = tiny_llama_like("smollm3");
  s.erase("tie_word_embeddings");
  EXPECT_EQ(parse(s).total_params(), 1272);
}

// BERT (BertModel + pooler): per layer q/k/v/o 4·72 = 288, 2 LayerNorms 32, MLP 280 → 600 × 2 = 1200;
// word 80 + position 6·8 = 48 + token_type 2·8 = 16, embeddings LayerNorm 16, pooler 72 → 1432. No LM head.
TEST(NewFamilies, BertHandCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 2,
      "num_attention_heads": 2, "intermediate_size": 16, "vocab_size": 10, "max_position_embeddings": 6,
      "type_vocab_size": 2})"));
  EXPECT_EQ(a.total_params(), 1432);
  EXPECT_EQ(a.params.head, 0);
  EXPECT_EQ(a.family, ModelFamily::encoder);
  EXPECT_EQ(a.geometry.kv_cache_layers, 0);
}

// bert-base-uncased: 110M in the BERT paper (Devlin et al. 2019 §3); exact: embeddings 23,440,896 + 393,216 +
// 1,536 + LayerNorm 1,536; 12 layers × 7,087,872 = 85,054,464; pooler 590,592 → 109,482,240.
TEST(NewFamilies, BertBasePublishedCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12,
      "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 30522, "max_position_embeddings": 512,
      "type_vocab_size": 2, "hidden_act": "gelu"})"));
  EXPECT_EQ(a.total_params(), 109'482'240);
  EXPECT_NEAR(static_cast<double>(a.total_params()), 110e6, 0.005 * 110e6);  // 0.47% under "110M"
}

// T5 (relu, tied), 1 encoder + 1 decoder block: shared 80; encoder block attention 4·8·8 = 256, FF 2·8·16 = 256,
// 2 norms 16 → 528; decoder block self 256 + cross 256 + FF 256 + 3 norms 24 → 792; relative_attention_bias 4·2 per
// stack (16); final norms 2·8 → 80 + 528 + 792 + 16 + 16 = 1432.
TEST(NewFamilies, T5HandCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "t5", "d_model": 8, "d_kv": 4, "num_heads": 2, "d_ff": 16,
      "num_layers": 1, "num_decoder_layers": 1, "vocab_size": 10, "relative_attention_num_buckets": 4,
      "feed_forward_proj": "relu"})"));
  EXPECT_EQ(a.total_params(), 1432);
  EXPECT_EQ(a.family, ModelFamily::encoder_decoder);
  EXPECT_EQ(a.num_layers, 2);
  EXPECT_EQ(a.geometry.kv_cache_layers, 1);
  EXPECT_EQ(a.geometry.activation, MlpActivation::relu);
}

// t5-base: 220M in the T5 paper (Raffel et al. 2020 §3.7); exact 222,903,552: shared 32128·768 = 24,674,304;
// encoder 12 × 7,079,424 + 384 + 768; decoder 12 × 9,439,488 + 384 + 768.
TEST(NewFamilies, T5BasePublishedCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "t5", "d_model": 768, "d_kv": 64, "num_heads": 12,
      "d_ff": 3072, "num_layers": 12, "num_decoder_layers": 12, "vocab_size": 32128,
      "relative_attention_num_buckets": 32, "feed_forward_proj": "relu"})"));
  EXPECT_EQ(a.total_params(), 222'903'552);
  EXPECT_NEAR(static_cast<double>(a.total_params()), 220e6, 0.015 * 220e6);
}

// Jamba, 4 blocks, attention in blocks 1 and 3 (period 2, offset 1), Mamba in 0 and 2; MoE (2 experts, top-1) in
// 1 and 3, dense MLP in 0 and 2; Mamba d_state 2, d_conv 2, expand 2 (I_m 16), dt_rank auto = ceil(8/16) = 1.
//   attention 2 × 192 = 384
//   Mamba block: in_proj 8·32 = 256, conv 16·2 + 16 = 48, x_proj 16·5 = 80, dt_proj 16 + 16 = 32, A_log + D 32 + 16
//     = 48, out_proj 128, dt/B/C norms 1 + 2 + 2 = 5 → 597; × 2 = 1194
//   experts 2 layers × 2 × 384 = 1536 (active 768); router 2 × 16 = 32; dense MLP 2 × 384 = 768
//   norms 2·8·4 + 8 = 72; embeddings 80 + head 80
//   total 4146, active 4146 − 1536 + 768 = 3378.
TEST(NewFamilies, JambaHybridHandCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "jamba", "hidden_size": 8, "num_hidden_layers": 4,
      "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 16, "vocab_size": 10,
      "attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 2, "expert_layer_offset": 1,
      "num_experts": 2, "num_experts_per_tok": 1, "mamba_d_state": 2, "mamba_d_conv": 2, "mamba_expand": 2,
      "mamba_dt_rank": "auto", "mamba_conv_bias": true, "mamba_proj_bias": false})"));
  EXPECT_EQ(a.total_params(), 4146);
  EXPECT_EQ(a.active_params(), 3378);
  EXPECT_EQ(a.geometry.attention_layers, 2);
  EXPECT_EQ(a.geometry.kv_cache_layers, 2);
  EXPECT_EQ(a.geometry.ssm_layers, 2);
  EXPECT_EQ(a.geometry.moe_layers, 2);
  EXPECT_EQ(a.geometry.dense_mlp_layers, 2);
}

// Jamba-v0.1 (AI21 model card: 52B total, 12B active): h 4096, 32 layers, 32 heads / 8 KV, I 14336, 16 experts top-2,
// vocab 65536, defaults for the periods and Mamba sizes → 51,570,323,328 total, 12,110,311,296 active.
TEST(NewFamilies, JambaV01PublishedCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "jamba", "hidden_size": 4096, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 65536,
      "attn_layer_period": 8, "attn_layer_offset": 4, "expert_layer_period": 2, "expert_layer_offset": 1,
      "num_experts": 16, "num_experts_per_tok": 2, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2,
      "mamba_dt_rank": 256, "mamba_conv_bias": true, "mamba_proj_bias": false, "tie_word_embeddings": false})"));
  EXPECT_EQ(a.total_params(), 51'570'323'328);
  EXPECT_EQ(a.active_params(), 12'110'311'296);
  EXPECT_NEAR(static_cast<double>(a.total_params()), 52e9, 0.5e9);
  EXPECT_NEAR(static_cast<double>(a.active_params()), 12e9, 0.5e9);
}

// Nemotron-H, tiny: h 8, pattern "M*-" (a Mamba-2, an attention and an MLP block), 2 heads / 1 KV head of 4,
// Mamba-2 2 heads × 8 = I 16, 1 group, state 2, conv 2, MLP 16 (relu², no gate), V 10, untied.
//   M: conv_dim 16 + 2·1·2 = 20; in_proj 8·(2·16 + 2·2 + 2 = 38) = 304; conv1d 20·2 + 20 = 60; dt_bias + A_log + D
//      3·2 = 6; gated norm 16; out_proj 16·8 = 128; block norm 8 → 522;
//   *: q 8·8 = 64, k 8·4 = 32, v 32, o 64, norm 8 → 200;   -: up 8·16 + down 16·8 = 256, norm 8 → 264;
//   embeddings 80 + lm_head 80 + norm_f 8 → 1154.
TEST(NewFamilies, NemotronHHybridHandCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "nemotron_h", "hidden_size": 8, "num_hidden_layers": 3,
      "hybrid_override_pattern": "M*-", "num_attention_heads": 2, "num_key_value_heads": 1, "attention_head_dim": 4,
      "mamba_num_heads": 2, "mamba_head_dim": 8, "n_groups": 1, "ssm_state_size": 2, "conv_kernel": 2,
      "intermediate_size": 16, "mlp_hidden_act": "relu2", "vocab_size": 10, "tie_word_embeddings": false})"));
  EXPECT_EQ(a.total_params(), 1154);
  EXPECT_EQ(a.geometry.attention_layers, 1);
  EXPECT_EQ(a.geometry.kv_cache_layers, 1);
  EXPECT_EQ(a.geometry.ssm_layers, 1);
  EXPECT_EQ(a.geometry.dense_mlp_layers, 1);
  EXPECT_FALSE(a.gated_mlp);
}

// Gemma 3n, the E4B shape: every field as Gemma3nTextConfig's defaults give it (transformers
// configuration_gemma3n.py, "gemma3n_text-E4B style"); no published config.json of gemma-3n is in the stored corpora.
// Hand calculation from modeling_gemma3n.py, h 2048, L 35, 8 heads / 2 KV heads of 256, I 16384, V 262400, V_p 262144,
// p 256, n 4 AltUp streams, LAuReL rank 64:
//   per layer: q 2048·2048 + k, v 2048·512 each + o 2048·2048 = 10,485,760, q/k norms 512; GeGLU 3·2048·16384 =
//   100,663,296; 5 RMSNorms 10,240; AltUp 2·2048 (router_norm, correct_output_scale) + 4·4 + 4³ + 2048·4 = 12,368;
//   LAuReL 2·2048·64 + 2048 = 264,192; per-layer input gate + projection 2·2048·256 = 1,048,576 → 112,484,944; × 35 =
//   3,936,973,040;
//   model: embed_tokens 262400·2048 = 537,395,200 (tied head); embed_tokens_per_layer 262144·35·256 = 2,348,810,240;
//   per_layer_model_projection 2048·8960 = 18,350,080; per_layer_projection_norm 256; AltUp projections 2·3·2048² =
//   25,165,824; norm 2048 → 6,866,696,688.
// KV: the last 15 layers read the cache of layers 18 (sliding) and 19 (full): 20 layers hold one, 4 full + 16 sliding.
TEST(NewFamilies, Gemma3nE4BShapeHandCount) {
  const ModelArch a = parse(json::parse(R"({"model_type": "gemma3n_text", "vocab_size": 262400, "hidden_size": 2048,
      "intermediate_size": 16384, "num_hidden_layers": 35, "num_attention_heads": 8, "num_key_value_heads": 2,
      "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 32768, "sliding_window": 512,
      "vocab_size_per_layer_input": 262144, "hidden_size_per_layer_input": 256, "altup_num_inputs": 4,
      "num_kv_shared_layers": 15, "laurel_rank": 64})"));
  EXPECT_EQ(a.total_params(), 35LL * 112'484'944 + 537'395'200 + 2'348'810'240 + 18'350'080 + 256 + 25'165'824 + 2048);
  EXPECT_EQ(a.total_params(), 6'866'696'688);
  EXPECT_EQ(a.params.embeddings, 537'395'200 + 2'348'810'240);
  EXPECT_EQ(a.geometry.kv_cache_layers, 20);
  EXPECT_EQ(a.num_sliding_window_layers(), 28);
  EXPECT_EQ(a.sliding_window_layers_among_first(20), 16);
  // The multimodal wrapper reads text_config (its vision and audio towers are not counted, and say so).
  const ModelArch m = parse(json{{"model_type", "gemma3n"}, {"text_config", json::parse(R"({"vocab_size": 262400,
      "hidden_size": 2048, "intermediate_size": 16384, "num_hidden_layers": 35, "num_attention_heads": 8,
      "num_key_value_heads": 2, "head_dim": 256})")}});
  EXPECT_EQ(m.total_params(), a.total_params());
  EXPECT_FALSE(m.notes.empty());
}

// Per-layer MLP widths (MatFormer slices): intermediate_size as a list. Tiny: h 8, L 3, widths [16, 16, 32], 2 heads /
// 1 KV head of 4, V 10, V_p 6, p 2, n 2, r 2, no shared KV layers. Per layer without the MLP: q 8·8 = 64 + k 8·4 = 32
// + v 32 + o 64 = 192, q/k norms 8, 5 norms 40, AltUp 2·8 + 2·2 + 2³ + 8·2 = 44, LAuReL 2·8·2 + 8 = 40, per-layer
// input 2·8·2 = 32 → 356; MLPs 2 · 3·8·16 + 3·8·32 = 768 + 768 = 1,536; model: embed 80, per-layer table 6·3·2 = 36,
// projection 8·6 = 48, its norm 2, AltUp projections 2·1·64 = 128, norm 8 → 3·356 + 1,536 + 302 = 2,906.
TEST(NewFamilies, Gemma3nPerLayerMlpWidths) {
  const ModelArch a = parse(json::parse(R"({"model_type": "gemma3n_text", "vocab_size": 10, "hidden_size": 8,
      "intermediate_size": [16, 16, 32], "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1,
      "head_dim": 4, "vocab_size_per_layer_input": 6, "hidden_size_per_layer_input": 2, "altup_num_inputs": 2,
      "laurel_rank": 2, "num_kv_shared_layers": 0})"));
  EXPECT_EQ(a.total_params(), 2906);
  EXPECT_EQ(a.geometry.kv_cache_layers, 3);
  json bad = json::parse(R"({"model_type": "gemma3n_text", "vocab_size": 10, "hidden_size": 8, "intermediate_size": [16, 16],
      "num_hidden_layers": 3, "num_attention_heads": 2, "head_dim": 4})");
  try {
    parse(bad);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "tiny.json: intermediate_size");
  }
  bad["intermediate_size"] = 16;
  bad["num_kv_shared_layers"] = 3;  // every layer shared: no layer produces the cache
  EXPECT_THROW(parse(bad), Error);
}

// transformers saves configs with Python's json module, which writes Infinity / NaN (Nemotron-H's
// "time_step_limit": [0.0, Infinity]): read as null, positions kept; a real syntax error after it is still placed.
TEST(NewFamilies, PythonFloatConstantsReadAsNull) {
  const std::string text = R"({"model_type": "mamba", "hidden_size": 8, "num_hidden_layers": 1, "vocab_size": 10,
  "state_size": 2, "conv_kernel": 2, "time_step_rank": 1, "time_step_limit": [0.0, Infinity], "x": -Infinity, "y": NaN, "s": "Infinity"})";
  const ModelArch a = parse_hf_config_text(text, "py.json");
  EXPECT_GT(a.total_params(), 0);
  // A required field written as NaN is present but has no value: said so, not "missing".
  try {
    (void)parse_hf_config_text(R"({"model_type": "mamba", "hidden_size": NaN, "num_hidden_layers": 1, "vocab_size": 10,
      "state_size": 2, "conv_kernel": 2})", "py.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "py.json: hidden_size");
    EXPECT_NE(std::string(e.what()).find("NaN"), std::string::npos) << e.what();
  }
  try {
    (void)parse_hf_config_text(R"({"model_type": "mamba", "t": [0.0, Infinity], oops})", "py.json");
    FAIL() << "expected a syntax error";
  } catch (const Error& e) {
    EXPECT_NE(e.where().find("py.json:1:"), std::string::npos) << e.where();
    EXPECT_NE(e.where().find(":1:47"), std::string::npos) << e.where() << " " << e.what();  // column of "oops" as written
  }
}

TEST(NewFamilies, BadConfigsGiveClearErrors) {
  json t5 = json::parse(R"({"model_type": "t5", "d_model": 8, "d_kv": 4, "num_heads": 2, "d_ff": 16, "num_layers": 1,
      "vocab_size": 10, "feed_forward_proj": "swish"})");
  try {
    parse(t5);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "tiny.json: feed_forward_proj");
  }
  json jamba = json::parse(R"({"model_type": "jamba", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
      "intermediate_size": 16, "vocab_size": 10, "num_experts": 2, "num_experts_per_tok": 3})");
  EXPECT_THROW(parse(jamba), Error);
  json mpt = json::parse(R"({"model_type": "mpt", "d_model": 8, "n_layers": 2, "n_heads": 3, "vocab_size": 10})");
  EXPECT_THROW(parse(mpt), Error);  // 3 heads do not divide 8
  json bigcode = json::parse(R"({"model_type": "gpt_bigcode", "n_embd": 8, "n_layer": 2, "n_head": 2, "vocab_size": 10})");
  EXPECT_THROW(parse(bigcode), Error);  // n_positions missing
  json nemotron = json::parse(R"({"model_type": "nemotron_h", "hidden_size": 8, "num_hidden_layers": 3,
      "hybrid_override_pattern": "M*E", "num_attention_heads": 2, "mamba_num_heads": 2, "mamba_head_dim": 8,
      "ssm_state_size": 2, "intermediate_size": 16, "vocab_size": 10})");
  try {
    parse(nemotron);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "tiny.json: hybrid_override_pattern");
    EXPECT_NE(std::string(e.what()).find("MoE block"), std::string::npos) << e.what();
  }
  nemotron["hybrid_override_pattern"] = "M*";  // 2 characters for 3 layers
  EXPECT_THROW(parse(nemotron), Error);
}

}  // namespace
}  // namespace gpuplan
