#include "api/serving_reference.hpp"

#include <algorithm>
#include <cmath>

#include "sizing/memory.hpp"
#include "sizing/perf.hpp"
#include "sizing/serving_perf.hpp"
#include "util/error.hpp"

namespace gpuplan::api {

std::optional<GpuServing> serve_reference_on(const ModelArch& arch, const GpuSpec& gpu, const ServingReference& ref) {
  if (!gpu.memory_bandwidth() || !gpu.dense_flops(Dtype::bf16)) return std::nullopt;
  ServingMemoryRequest m;
  m.quant = WeightQuant::bf16;
  m.kv_dtype = KvDtype::bf16;
  m.context_tokens = ref.prompt_tokens + ref.output_tokens;
  const ServingMemoryLine line = serving_memory_line(arch, m);
  const double usable = gpu.fit_memory_bytes() * (1.0 - kDefaultFitMargin);
  GpuServing out;
  if (line.one_sequence_bytes > usable || line.per_sequence_bytes <= 0) return out;  // not even one request beside the weights
  // Raw KV bytes that fit beside the weights and the fixed terms (as the planner computes them).
  const double kv_capacity = line.kv_capacity_bytes(usable);
  ServingPerfRequest sp;
  sp.quant = WeightQuant::bf16;
  sp.kv_dtype = KvDtype::bf16;
  sp.prompt_tokens = ref.prompt_tokens;
  sp.output_tokens = ref.output_tokens;
  sp.tp = 1;
  sp.engine = ServingEngine::vllm;
  const ClusterSpec cluster = make_cluster(gpu, 1, 1, 0);
  const PerfAssumptions assumptions;
  try {
    const ServingEstimate probe = estimate_serving(arch, sp, cluster, kv_capacity, assumptions);
    out.max_sequences = probe.max_concurrent_sequences;
    if (out.max_sequences < 1) return out;
    sp.concurrency = std::clamp<std::int64_t>(out.max_sequences, 1, ref.max_batch);
    const ServingEstimate est = estimate_serving(arch, sp, cluster, kv_capacity, assumptions);
    if (!std::isfinite(est.output_tokens_per_s) || est.output_tokens_per_s <= 0) return std::nullopt;
    out.batch = est.batch;
    out.output_tokens_per_s = est.output_tokens_per_s;
    out.fits = out.max_sequences >= ref.min_useful_batch;
  } catch (const Error&) {
    return std::nullopt;  // figures the estimate needs are missing
  }
  return out;
}

std::optional<double> usd_per_million_output_tokens(double usd_per_gpu_hour, double output_tokens_per_s) {
  if (!(output_tokens_per_s > 0)) return std::nullopt;
  return usd_per_gpu_hour / (output_tokens_per_s * 3600.0) * 1e6;
}

}  // namespace gpuplan::api
