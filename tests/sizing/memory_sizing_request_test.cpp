// SizingRequest: flag resolution and validation (the struct `gpuplan size` and the server fill).
#include <gtest/gtest.h>

#include "hardware/gpu_spec.hpp"
#include "model/param_count.hpp"
#include "sizing/sizing_request.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

std::string where_of(const SizingRequest& r) {
  try {
    r.validate();
  } catch (const Error& e) {
    return e.where();
  }
  return "";
}

TEST(SizingRequest, GpusResolveToDataParallelForTraining) {
  SizingRequest r;
  r.gpus = 8;
  r.tp = 2;
  const TrainingMemoryRequest t = r.training_request();
  EXPECT_EQ(t.layout.tp, 2);
  EXPECT_EQ(t.layout.dp, 4);
  EXPECT_EQ(t.layout.gpus(), 8);
}

TEST(SizingRequest, GpusResolveToTensorParallelForServing) {
  SizingRequest r;
  r.task = Task::serve;
  r.gpus = 4;
  const ServingMemoryRequest s = r.serving_request();
  EXPECT_EQ(s.tp, 4);
  EXPECT_EQ(s.pp, 1);
}

TEST(SizingRequest, ContradictionsNameTheFlag) {
  SizingRequest r;
  r.gpus = 6;
  r.tp = 4;
  EXPECT_EQ(where_of(r), "--gpus");
  r = {};
  r.gpus = 8;
  r.tp = 2;
  r.dp = 2;  // 2 × 1 × 2 ≠ 8
  EXPECT_EQ(where_of(r), "--gpus");
  r = {};
  r.margin = 1.5;
  EXPECT_EQ(where_of(r), "--margin");
  r = {};
  r.task = Task::qlora;
  r.training.precision = TrainPrecision::fp32;
  EXPECT_EQ(where_of(r), "--precision");
  r = {};
  r.training.seq_len = 0;
  EXPECT_EQ(where_of(r), "--seq");
  r = {};
  r.task = Task::serve;
  r.serving.concurrency = -3;
  EXPECT_EQ(where_of(r), "--concurrency");
  r = {};
  r.tp = 0;
  EXPECT_EQ(where_of(r), "--tp");
}

TEST(SizingRequest, RunSizingReturnsBreakdownFitsAndExplanation) {
  ModelArch m;
  m.name = "llama-like-8b";
  m.model_type = "llama";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 14336;
  m.vocab_size = 128256;
  m.params = count_decoder_params(m);
  SizingRequest r;
  r.task = Task::serve;
  r.serving.context_tokens = 8192;
  r.explain = true;
  const SizingResult res = run_sizing(m, r, GpuCatalog::bundled());
  EXPECT_GT(res.per_gpu.total_bytes(), 2.0 * static_cast<double>(m.params.total()));
  EXPECT_EQ(res.explanation.size(), res.per_gpu.terms.size());
  EXPECT_FALSE(res.fits.empty());
  EXPECT_FALSE(res.fit_assumption.empty());
}

}  // namespace
}  // namespace gpuplan
