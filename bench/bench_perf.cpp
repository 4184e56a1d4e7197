// Speed of the performance model's hot functions (the planner calls them for thousands of
// layouts per plan): one training-step estimate, one serving estimate, one FLOPs-per-token.
// The explain_* functions build strings and are not on the hot path (benchmarked for contrast).
#include <benchmark/benchmark.h>

#include "hardware/gpu_spec.hpp"
#include "model/presets.hpp"
#include "sizing/flops.hpp"
#include "sizing/perf.hpp"
#include "sizing/serving_perf.hpp"

namespace {

using namespace gpuplan;

const ModelArch& llama70b() {
  static const ModelArch a = load_preset("llama-3.1-70b");
  return a;
}

const GpuSpec& h100() { return GpuCatalog::bundled().find("H100 SXM"); }

TrainingStepRequest request() {
  TrainingStepRequest r;
  r.seq_len = 4096;
  r.global_batch_seqs = 512;
  r.layout.tp = 8;
  r.layout.pp = 4;
  r.layout.dp = 8;
  r.layout.zero_stage = 1;
  r.recompute = Recompute::selective;
  return r;
}

void BM_EstimateTrainingStep(benchmark::State& state) {
  const ClusterSpec c = make_cluster(h100(), 8, 32, 400e9);
  const TrainingStepRequest r = request();
  const PerfAssumptions a;
  for (auto _ : state) benchmark::DoNotOptimize(estimate_training_step(llama70b(), r, c, a));
}
BENCHMARK(BM_EstimateTrainingStep);

void BM_ExplainTrainingStep(benchmark::State& state) {
  const ClusterSpec c = make_cluster(h100(), 8, 32, 400e9);
  const TrainingStepRequest r = request();
  const PerfAssumptions a;
  for (auto _ : state) benchmark::DoNotOptimize(explain_training_step(llama70b(), r, c, a));
}
BENCHMARK(BM_ExplainTrainingStep);

void BM_EstimateServing(benchmark::State& state) {
  const ClusterSpec c = make_cluster(h100(), 8, 1, 0);
  ServingPerfRequest r;
  r.tp = 8;
  r.concurrency = 64;
  r.prompt_tokens = 2048;
  r.output_tokens = 512;
  const PerfAssumptions a;
  for (auto _ : state) benchmark::DoNotOptimize(estimate_serving(llama70b(), r, c, 200e9, a));
}
BENCHMARK(BM_EstimateServing);

void BM_TrainingFlopsPerToken(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(training_flops_per_token(llama70b(), 4096, Recompute::full, Task::pretrain));
}
BENCHMARK(BM_TrainingFlopsPerToken);

}  // namespace

BENCHMARK_MAIN();
