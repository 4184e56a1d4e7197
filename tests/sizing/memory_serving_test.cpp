// Serving memory: hand calculations written in each test.
#include <gtest/gtest.h>

#include "hardware/gpu_spec.hpp"
#include "model/param_count.hpp"
#include "hand_built_models.hpp"
#include "sizing/memory.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

using testing::deepseek_v3_mla_like;
using testing::llama_like;

/// Llama-3.1-8B shape (config.json: 32 layers, 4096 hidden, 32 heads, 8 KV heads, 14336, 128256).
ModelArch llama31_8b() { return llama_like(32, 4096, 32, 8, 128, 14336, 128256); }

TEST(ServingMemory, GqaKvCacheAtLongContextIsNotOverstated) {
  // 2 · 32 layers · 8 KV heads · 128 · 131072 tokens · 2 B = 17,179,869,184 B for one sequence
  // (an MHA formula with 32 heads would say 4× that).
  ServingMemoryRequest req;
  req.context_tokens = 131072;
  EXPECT_DOUBLE_EQ(serving_memory(llama31_8b(), req).term_bytes("kv_cache"), 17179869184.0);
}

TEST(ServingMemory, QuantizedKvCacheIsHonoured) {
  ServingMemoryRequest req;
  req.context_tokens = 32768;
  req.concurrency = 16;
  const double bf16 = serving_memory(llama31_8b(), req).term_bytes("kv_cache");
  EXPECT_DOUBLE_EQ(bf16, 2.0 * 32 * 8 * 128 * 32768 * 16 * 2);
  req.kv_dtype = KvDtype::fp8;
  EXPECT_DOUBLE_EQ(serving_memory(llama31_8b(), req).term_bytes("kv_cache"), bf16 / 2);
}

TEST(ServingMemory, MlaCachesTheLatentOnly) {
  // DeepSeek-V3 shape: 61 layers, kv_lora_rank 512 + qk_rope_head_dim 64 per token per layer (MLA).
  const ModelArch m = deepseek_v3_mla_like(61);
  ServingMemoryRequest req;
  req.context_tokens = 131072;
  EXPECT_DOUBLE_EQ(serving_memory(m, req).term_bytes("kv_cache"), (512.0 + 64) * 61 * 131072 * 2);
}

TEST(ServingMemory, SlidingWindowLayersCacheTheWindowOnly) {
  // Mistral-7B-v0.1: window 4096 on all 32 layers; 8 KV heads × 128; context 32768.
  ModelArch m = llama_like(32, 4096, 32, 8, 128, 14336, 32000);
  m.sliding_window = 4096;
  m.layer_uses_sliding_window.assign(32, true);
  ServingMemoryRequest req;
  req.context_tokens = 32768;
  EXPECT_DOUBLE_EQ(serving_memory(m, req).term_bytes("kv_cache"), 2.0 * 32 * 8 * 128 * 4096 * 2);
  // Gemma-2 style: half the layers sliding → half at the window, half at the full context.
  m.layer_uses_sliding_window.assign(32, false);
  for (int i = 0; i < 32; i += 2) m.layer_uses_sliding_window[static_cast<std::size_t>(i)] = true;
  EXPECT_DOUBLE_EQ(serving_memory(m, req).term_bytes("kv_cache"),
                   2.0 * 16 * 8 * 128 * 2 * (4096.0 + 32768.0));
}

TEST(ServingMemory, WeightBitsByQuantisation) {
  const ModelArch m = llama31_8b();
  const double linear = static_cast<double>(m.params.attention + m.params.mlp);
  const double rest = static_cast<double>(m.params.embeddings + m.params.head + m.params.norms);
  ServingMemoryRequest req;
  EXPECT_DOUBLE_EQ(serving_memory(m, req).term_bytes("weights"), 2.0 * static_cast<double>(m.params.total()));
  req.quant = WeightQuant::int4;  // group-128 fp16 scales: 4.125 bits; embeddings / head stay 16-bit
  EXPECT_NEAR(serving_memory(m, req).term_bytes("weights"), linear * 4.125 / 8 + 2 * rest, 1.0);
  req.quant = WeightQuant::gguf_q8_0;  // whole file at 8.5 bits
  EXPECT_NEAR(serving_memory(m, req).term_bytes("weights"), static_cast<double>(m.params.total()) * 8.5 / 8, 1.0);
}

TEST(ServingMemory, TensorParallelSplitsWeightsAndKvHeads) {
  const ModelArch m = llama31_8b();
  ServingMemoryRequest req;
  req.context_tokens = 8192;
  const MemoryBreakdown one = serving_memory(m, req);
  req.tp = 8;
  const MemoryBreakdown eight = serving_memory(m, req);
  EXPECT_DOUBLE_EQ(eight.term_bytes("kv_cache"), one.term_bytes("kv_cache") / 8);
  // Norms are replicated, everything else is split: close to 1/8.
  EXPECT_NEAR(eight.term_bytes("weights"), one.term_bytes("weights") / 8, 1e-4 * one.term_bytes("weights"));
  // tp 16 > 8 KV heads: KV heads replicated (ceil(8/16) = 1 per GPU), warned.
  req.tp = 16;
  ModelArch wide = llama_like(32, 4096, 32, 8, 128, 14336, 128256);
  const MemoryBreakdown sixteen = serving_memory(wide, req);
  EXPECT_DOUBLE_EQ(sixteen.term_bytes("kv_cache"), 2.0 * 32 * 1 * 128 * 8192 * 2);
  EXPECT_FALSE(sixteen.warnings.empty());
  req.tp = 5;
  EXPECT_THROW(serving_memory(m, req), Error);
}

TEST(ServingMemory, MoeWeightsAreAllExperts) {
  ModelArch m = llama_like(32, 4096, 32, 8, 128, 14336, 32000);
  MoeSpec e;
  e.num_routed_experts = 8;
  e.experts_per_token = 2;
  e.expert_intermediate_size = 14336;
  e.num_moe_layers = 32;
  m.moe = e;
  m.params = count_decoder_params(m);
  ServingMemoryRequest req;
  EXPECT_DOUBLE_EQ(serving_memory(m, req).term_bytes("weights"), 2.0 * static_cast<double>(m.params.total()));
}

TEST(ServingMemory, TotalIsTheSumOfTerms) {
  ServingMemoryRequest req;
  req.context_tokens = 32768;
  req.concurrency = 8;
  const MemoryBreakdown b = serving_memory(llama31_8b(), req);
  double sum = 0;
  for (const auto& t : b.terms) sum += t.bytes;
  EXPECT_DOUBLE_EQ(b.total_bytes(), sum);
  EXPECT_GT(b.total_bytes(), b.term_bytes("weights") + b.term_bytes("kv_cache"));
}

TEST(ServingMemory, RejectsAbsurdInput) {
  ServingMemoryRequest req;
  req.concurrency = 0;
  EXPECT_THROW(serving_memory(llama31_8b(), req), Error);
  req = {};
  req.context_tokens = -1;
  EXPECT_THROW(serving_memory(llama31_8b(), req), Error);
}

TEST(GpuFit, SmallestCountFirstWithMargin) {
  const GpuCatalog& catalog = GpuCatalog::bundled();
  const ModelArch m = llama31_8b();
  ServingMemoryRequest req;
  req.context_tokens = 8192;
  const auto fits = fitting_gpus(m, req, catalog);
  ASSERT_FALSE(fits.empty());
  for (std::size_t i = 0; i < fits.size(); ++i) {
    EXPECT_LE(fits[i].per_gpu_bytes, 0.9 * fits[i].capacity_bytes);
    if (i > 0) {
      EXPECT_TRUE(fits[i - 1].gpu_count < fits[i].gpu_count ||
                  (fits[i - 1].gpu_count == fits[i].gpu_count && fits[i - 1].capacity_bytes <= fits[i].capacity_bytes));
    }
    // The count is the smallest that fits: one fewer step does not.
    if (fits[i].gpu_count > 1) {
      ServingMemoryRequest smaller = req;
      smaller.tp = fits[i].gpu_count / 2;
      EXPECT_GT(serving_memory(m, smaller).total_bytes(), 0.9 * fits[i].capacity_bytes);
    }
  }
  // ~16 GB of bf16 weights + 1 GiB KV: an 80 GB H100 holds it alone.
  const GpuSpec* h100 = catalog.try_find("H100 SXM");
  ASSERT_NE(h100, nullptr);
  bool found = false;
  for (const auto& f : fits) {
    if (f.gpu == h100) {
      found = true;
      EXPECT_EQ(f.gpu_count, 1);
    }
  }
  EXPECT_TRUE(found);
}

TEST(GpuFit, TrainingShardsWithZero3AsCountsGrow) {
  const GpuCatalog& catalog = GpuCatalog::bundled();
  const ModelArch m = llama_like(80, 8192, 64, 8, 128, 28672, 128256);  // Llama-3.1-70B shape
  TrainingMemoryRequest req;
  req.seq_len = 4096;
  req.recompute = Recompute::full;
  const auto fits = fitting_gpus(m, req, catalog);
  ASSERT_FALSE(fits.empty());
  EXPECT_EQ(fits.front().layout.zero_stage, 3);
  EXPECT_EQ(fits.front().layout.dp, fits.front().gpu_count);
  // H100 80 GB, margin 10% → 72 GB usable. Model states 16 B × 70.55e9 = 1.129e12 B, ZeRO-3 over dp:
  // at 16 GPUs 70.5 GB + layer-input checkpoints 2·8192·4096·80 = 5.4 GB + logits 4096·128256·14 = 7.4 GB
  // > 72 GB; at 32 GPUs 35.3 + 5.4 + 7.4 + one layer + gathered layers ≈ 52 GB fits.
  const GpuSpec* h100 = catalog.try_find("H100 SXM");
  ASSERT_NE(h100, nullptr);
  bool found = false;
  for (const auto& f : fits) {
    if (f.gpu == h100) {
      found = true;
      EXPECT_EQ(f.gpu_count, 32);
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace gpuplan
