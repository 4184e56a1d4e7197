#pragma once
// Hand-built architectures shared by the sizing tests (shapes written from the configs).
#include <cstdint>

#include "model/model_arch.hpp"
#include "model/param_count.hpp"

namespace gpuplan::testing {

/// Llama-style decoder built by hand (RMSNorm, gated MLP, RoPE, untied head unless said).
inline ModelArch llama_like(std::int64_t L, std::int64_t h, std::int64_t heads, std::int64_t kv,
                            std::int64_t head_dim, std::int64_t ffn, std::int64_t vocab, bool tied = false) {
  ModelArch m;
  m.name = "hand-built";
  m.model_type = "llama";
  m.num_layers = L;
  m.hidden_size = h;
  m.num_attention_heads = heads;
  m.num_kv_heads = kv;
  m.head_dim = head_dim;
  m.intermediate_size = ffn;
  m.vocab_size = vocab;
  m.tied_embeddings = tied;
  m.params = count_decoder_params(m);
  return m;
}

/// DeepSeek-V3-shaped dense MLA decoder of `L` layers (h 7168, 128 heads, q_lora_rank 1536,
/// kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128, MLP 18432, vocabulary 129280), no experts.
inline ModelArch deepseek_v3_mla_like(std::int64_t L) {
  ModelArch m = llama_like(L, 7168, 128, 128, 128, 18432, 129280);
  MlaSpec mla;
  mla.q_lora_rank = 1536;
  mla.kv_lora_rank = 512;
  mla.qk_nope_head_dim = 128;
  mla.qk_rope_head_dim = 64;
  mla.v_head_dim = 128;
  m.mla = mla;
  m.params = count_decoder_params(m);
  return m;
}

}  // namespace gpuplan::testing
