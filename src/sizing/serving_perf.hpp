#pragma once
/// Sizing layer: LLM serving throughput and latency for one replica (tp GPUs).
///
/// Units: seconds, tokens/s, bytes, bytes/s. Pure functions, no allocation in estimate_serving.
///
/// Model (roofline; Williams et al. 2009 "Roofline", CACM 52(4); applied to LLM inference by
/// Pope et al. 2022, arXiv:2211.05102 §2 and Kim et al. 2023 "Full Stack Optimization of
/// Transformer Inference", arXiv:2302.14017):
///   prefill (compute-bound): prompt FLOPs (flops.hpp prefill_flops) / (tp × dense 16-bit peak
///     × prefill efficiency); quantised weights are de-quantised to 16-bit for the matmuls.
///   decode step (memory-bound at small batch): bytes read per step / (tp × memory bandwidth ×
///     decode bandwidth efficiency), bytes = weight bytes (active params × bytes/param of the
///     quantisation; all of them once per step, shared by the batch) + KV bytes of every
///     running sequence at its mean context (prompt + output/2); capped below by the compute
///     time of the batch's decode FLOPs at decode_compute_efficiency.
///   batch = min(concurrency, max_concurrent_sequences), max_concurrent_sequences =
///     floor(kv_capacity_bytes / KV bytes per sequence at prompt+output tokens).
///   TP splits weights, KV and FLOPs across tp GPUs; the per-layer all-reduces are folded into
///     the efficiencies (single node NVLink assumed; PCIe TP is not modelled for serving).
///   ttft = prefill of one prompt (batch prefill is not modelled: a single request's latency),
///   tpot = decode step time at the batch; requests/s = batch / (ttft + output × tpot).
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_arch.hpp"
#include "sizing/memory.hpp"
#include "sizing/perf.hpp"

namespace gpuplan {

struct ServingPerfRequest {
  WeightQuant quant = WeightQuant::bf16;  ///< weight format (weight_quant_bits(); kernel efficiency)
  KvDtype kv_dtype = KvDtype::bf16;            ///< KV-cache element type
  std::int64_t prompt_tokens = 512;   ///< >= 1
  std::int64_t output_tokens = 128;   ///< >= 1
  std::int64_t concurrency = 1;       ///< sequences the server runs at once (target), >= 1
  int tp = 1;                         ///< GPUs per replica (tensor parallel), >= 1
};

struct ServingEstimate {
  double prefill_tokens_per_s = 0;  ///< prompt tokens per second for one prompt, per replica
  double decode_tokens_per_s = 0;   ///< generated tokens per second, aggregate over the batch
  double ttft_seconds = 0;          ///< time to first token (one prompt's prefill)
  double tpot_seconds = 0;          ///< time per output token (one decode step at the batch)
  std::int64_t max_concurrent_sequences = 0;  ///< KV capacity / KV bytes per sequence
  std::int64_t batch = 0;                     ///< sequences decoded together: min(concurrency, max)
  double requests_per_s_per_replica = 0;      ///< batch / (ttft + output_tokens × tpot)
  // Breakdown of one decode step.
  double weights_bytes_per_step = 0;  ///< weight bytes read per decode step, whole replica
  double kv_bytes_per_step = 0;       ///< KV bytes read per decode step for the batch
  double decode_memory_seconds = 0;   ///< (weights + KV) / achieved bandwidth
  double decode_compute_seconds = 0;  ///< batch decode FLOPs / achieved compute
  bool decode_compute_bound = false;  ///< decode_compute_seconds > decode_memory_seconds
};

/// KV-cache bytes a decode step reads for ONE sequence holding `context_tokens` tokens (all
/// layers): 2·L·K·d·bytes per token for MHA/GQA/MQA, (kv_lora_rank + qk_rope_head_dim)·L·bytes
/// for MLA (Pope et al. 2022 §2; DeepSeek-V2 §2.1.4); sliding-window layers read at most
/// `window` tokens. Bytes per element from kv_dtype_bytes() (memory.hpp).
double decode_kv_bytes(const ModelArch& arch, KvDtype kv_dtype, std::int64_t context_tokens);

/// Estimates one replica. kv_capacity_bytes = GPU memory left for the KV cache across the
/// replica's tp GPUs (from serving_memory()). Throws Error{invalid_input} for non-positive
/// token counts / tp / concurrency or a null cluster.gpu.
ServingEstimate estimate_serving(const ModelArch& arch, const ServingPerfRequest& request, const ClusterSpec& cluster,
                                 double kv_capacity_bytes, const PerfAssumptions& assumptions);

/// Replicas needed to serve `target_requests_per_s` (ceil(target / requests_per_s_per_replica))
/// and at least ceil(target_concurrency / max_concurrent_sequences); >= 1. Returns 0 when the
/// estimate cannot serve a single sequence (max_concurrent_sequences == 0).
std::int64_t replicas_needed(const ServingEstimate& estimate, double target_requests_per_s,
                             std::int64_t target_concurrency);

/// Explanation lines for the estimate (same numbers as estimate_serving).
std::vector<ExplainLine> explain_serving(const ModelArch& arch, const ServingPerfRequest& request,
                                         const ClusterSpec& cluster, double kv_capacity_bytes,
                                         const PerfAssumptions& assumptions);

}  // namespace gpuplan
