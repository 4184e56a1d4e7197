// Training-stack memory profiles (memory.hpp TrainingStack, apply_stack_defaults,
// offload_activations, fp32_grad_partition): hand calculations written here.
#include <gtest/gtest.h>

#include "model/presets.hpp"
#include "sizing/memory.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

TrainingMemoryRequest base() {
  TrainingMemoryRequest r;
  r.task = Task::full;
  r.seq_len = 4096;
  return r;
}

// DeepSpeed ZeRO-2, bf16, dp 8: 16-bit gradients sharded (2 B × N / 8) plus the fp32 gradient
// partition (4 B × N / 8).
TEST(TrainingStack, DeepSpeedZero2AddsTheFp32GradientPartition) {
  const ModelArch arch = load_preset("llama-3.1-8b");
  TrainingMemoryRequest r = base();
  r.layout.dp = 8;
  apply_stack_defaults(TrainingStack::deepspeed, r);
  EXPECT_EQ(r.layout.zero_stage, 2);
  const double n = static_cast<double>(arch.params.total());
  const MemoryBreakdown m = training_memory(arch, r);
  EXPECT_NEAR(m.term_bytes("gradients"), 2.0 * n / 8 + 4.0 * n / 8, 1e-6 * n);
  // Without the partition (plain ZeRO-2 accounting): 2 B × N / 8.
  r.fp32_grad_partition = false;
  EXPECT_NEAR(training_memory(arch, r).term_bytes("gradients"), 2.0 * n / 8, 1e-6 * n);
}

// Offloaded activation checkpointing: with full recompute the GPU keeps the layer inputs of
// kOffloadedActivationLayers layers (2h B per token each) instead of all 32; the rest is host memory.
TEST(TrainingStack, OffloadedCheckpointsKeepTwoLayersOnTheGpu) {
  const ModelArch arch = load_preset("llama-3.1-8b");  // 32 layers, h 4096
  TrainingMemoryRequest r = base();
  r.recompute = Recompute::full;
  const double on = training_memory(arch, r).term_bytes("activations");
  r.offload_activations = true;
  const MemoryBreakdown off = training_memory(arch, r);
  const double per_layer = 2.0 * 4096.0 * 4096.0;  // 2h B per token × 4096 tokens
  EXPECT_NEAR(on - off.term_bytes("activations"), (32.0 - 2.0) * per_layer, 1.0);
  EXPECT_GE(off.cpu_offload_bytes, (32.0 - 2.0) * per_layer);
}

// Unsloth's defaults (chunked CE, offloaded checkpoints, 8-bit AdamW) cut the HF default's
// memory several times at long context: the "longest context that fits" moves accordingly.
TEST(TrainingStack, UnslothDefaultsVersusHfDefaults) {
  const ModelArch arch = load_preset("llama-3.1-8b");
  TrainingMemoryRequest hf = base(), un = base();
  hf.task = un.task = Task::lora;
  hf.seq_len = un.seq_len = 16384;
  apply_stack_defaults(TrainingStack::hf, hf);
  apply_stack_defaults(TrainingStack::unsloth, un);
  EXPECT_TRUE(un.chunked_cross_entropy);
  EXPECT_TRUE(un.offload_activations);
  EXPECT_EQ(un.recompute, Recompute::full);
  EXPECT_EQ(un.optimizer, Optimizer::adamw_8bit);
  const double m_hf = training_memory(arch, hf).total_bytes();
  const double m_un = training_memory(arch, un).total_bytes();
  EXPECT_GT(m_hf, 3.0 * m_un);
  // logits: HF keeps 16384 × 128256 × (2 + 3×4) B; chunked keeps the 16-bit logits + one chunk.
  EXPECT_NEAR(training_memory(arch, hf).term_bytes("logits"), 16384.0 * 128256.0 * 14.0, 1e3);
}

TEST(TrainingStack, MegatronDefaults) {
  TrainingMemoryRequest r = base();
  r.layout.tp = 4;
  apply_stack_defaults(TrainingStack::megatron, r);
  EXPECT_EQ(r.activation_profile, ActivationProfile::megatron);
  EXPECT_TRUE(r.fp32_grad_accumulation);
  EXPECT_EQ(r.layout.zero_stage, 1);
  EXPECT_TRUE(r.layout.sequence_parallel);
}

TEST(TrainingStack, Names) {
  EXPECT_EQ(parse_training_stack("DeepSpeed", "--stack"), TrainingStack::deepspeed);
  EXPECT_EQ(parse_training_stack("transformers", "--stack"), TrainingStack::hf);
  EXPECT_THROW(parse_training_stack("colossal", "--stack"), Error);
}

}  // namespace
}  // namespace gpuplan
