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
///   TP splits weights, KV and FLOPs across tp GPUs and adds 2 all-reduces per layer per step
///     (attention output and MLP output, Shoeybi et al. 2019 §3) of tokens × h × 2 bytes over the
///     actual link (NVLink or PCIe from the ClusterSpec): latency + 2(tp−1)/tp · bytes / (link ×
///     link_efficiency); the latency is the engine's (small decode messages are latency-bound).
///   Continuous batching with chunked prefill (vLLM, SGLang, TensorRT-LLM; Agrawal et al. 2024
///     "Sarathi-Serve", arXiv:2403.02310): in steady state B/O requests finish per decode step, so
///     B·P/O prompt tokens are prefilled per step inside the same step; the step's time is
///     step_roofline_seconds(weights + KV read, decode FLOPs + those prefill FLOPs) + TP
///     communication (a soft roofline, below): step_seconds, which sets the rate. A running sequence's
///     steps carry the prompts of the other B − 1 slots' successors, (B − 1)·P/O tokens: that step is
///     its tpot (its own prompt is in its ttft), so ttft + (O − 1)·tpot ≈ O·step for long outputs and
///     rate × time per request ≈ B (Little's law). Engines without it (llama.cpp) run the prefill
///     between decode steps: step = decode step + the prefill share; tpot = the decode step.
///   ttft = the prompt's chunks (prefill_chunk_tokens minus the decode tokens of the running batch
///     per step, at least a quarter of the budget) × the step time with that chunk.
///   requests/s = B / (O × step) with continuous batching; B / (ttft + (O − 1) × tpot) without.
///   Engines (EngineProfile, engine_profile()): documented efficiency sets per engine.
#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "model/model_arch.hpp"
#include "sizing/memory.hpp"
#include "sizing/perf.hpp"

namespace gpuplan {

/// Time of one continuous-batching step (decode tokens of the running batch + prompt chunks in
/// one step) that reads `memory_seconds` worth of bytes at the achieved bandwidth and does
/// `compute_seconds` of math at the achieved peak: a soft roofline, max + min·sqrt(min/max). Far
/// from the ridge point it is the roofline max(memory, compute) (Williams et al. 2009); at the
/// ridge (memory = compute) it is their sum: a mixed step runs its prefill and decode attention
/// kernels apart from the GEMMs and, in vLLM, without the CUDA graph of decode-only steps, so the
/// weight stream does not hide the prompt's math. Chosen on published vLLM concurrency sweeps
/// (tests/data/published-serving.jsonl: with max() they were predicted up to +71% too fast,
/// with this rule within ±8%; docs/accuracy.md "Serving"). Decode-only steps keep max(): our H200
/// decode-GEMM timings follow it (tests/data/h200-decode-roofline.jsonl). Seconds.
double step_roofline_seconds(double memory_seconds, double compute_seconds) noexcept;

/// Inference engine whose kernels and scheduler the estimate assumes.
enum class ServingEngine { vllm, tensorrt_llm, sglang, llama_cpp };
std::string_view serving_engine_name(ServingEngine e) noexcept;
/// "vllm", "tensorrt-llm" (also "trtllm", "tensorrt_llm"), "sglang", "llama.cpp" (also
/// "llama_cpp", "llamacpp"); case-insensitive. Throws Error{invalid_input, where, expected list}.
ServingEngine parse_serving_engine(std::string_view s, const std::string& where);

/// Weight formats an engine cannot load (trial50 #5: planned silently): llama.cpp runs GGUF files
/// (ggml's own types: F16/BF16, Q8_0, Q4_0, Q4_K_M, Q2_K, MXFP4; llama.cpp README "Supported
/// quantization types"), not FP8, INT8, GPTQ/AWQ INT4 or bitsandbytes NF4 checkpoints;
/// TensorRT-LLM builds FP16/BF16, FP8, INT8, INT4 (AWQ/GPTQ) and FP4 engines (TensorRT-LLM docs
/// "Numerical Precision"), not bitsandbytes NF4 or GGUF. vLLM and SGLang load every format here.
/// Returns the formats the engine takes ("bf16, fp16, ...") when `quant` is not one of them.
std::optional<std::string> engine_quant_unsupported(ServingEngine engine, WeightQuant quant);

/// One engine's efficiency set. Every field is documented with its source or marked ASSUMPTION
/// in engine_profile() (serving_perf.cpp) and docs/performance-model.md.
struct EngineProfile {
  ServingEngine engine = ServingEngine::vllm;
  double decode_bw_efficiency_16bit = 0;  ///< achieved fraction of HBM bandwidth, 16-bit weights
  double decode_bw_efficiency_8bit = 0;   ///< 8-bit weights (fp8 / int8 / q8_0)
  double decode_bw_efficiency_4bit = 0;   ///< 4-bit weights (AWQ/GPTQ/NF4/Q4_K)
  double prefill_efficiency_16bit = 0;    ///< achieved fraction of the matmul peak in prefill
  double prefill_efficiency_quantized = 0;
  double decode_compute_efficiency = 0;   ///< compute-bound batched decode
  bool continuous_batching = true;        ///< prefill chunks ride in decode steps
  std::int64_t prefill_chunk_tokens = 2048;  ///< tokens per scheduler step (decode + prefill)
  double tp_allreduce_latency_seconds = 0;   ///< per all-reduce, on top of the bandwidth term
  bool fp8_tensor_cores = false;  ///< fp8 weights run W8A8 at the GPU's FP8 peak when it has one
  /// How the engine sizes its KV-cache pool. 0: from a fraction of the GPU's TOTAL memory, which
  /// the planner's fit margin stands for (vLLM gpu_memory_utilization 0.9, SGLang
  /// mem_fraction_static). > 0: this fraction of the memory still FREE after the weights and
  /// runtime buffers are loaded (TensorRT-LLM KvCacheConfig free_gpu_memory_fraction, default 0.9),
  /// so a model that nearly fills the GPU still gets 90% of the rest. Fraction in (0, 1].
  double kv_pool_free_memory_fraction = 0;
  std::string_view source;        ///< where the numbers come from
};
/// The profile of `engine`. llama_cpp takes the PerfAssumptions serving fields (calibrated on
/// llama.cpp's own benchmark table); the others are their documented sets.
EngineProfile engine_profile(ServingEngine engine, const PerfAssumptions& assumptions);

struct ServingPerfRequest {
  WeightQuant quant = WeightQuant::bf16;  ///< weight format (weight_quant_bits(); kernel efficiency)
  KvDtype kv_dtype = KvDtype::bf16;            ///< KV-cache element type
  std::int64_t prompt_tokens = 512;   ///< >= 1
  std::int64_t output_tokens = 128;   ///< >= 1
  std::int64_t concurrency = 1;       ///< sequences the server runs at once (target), >= 1
  int tp = 1;                         ///< GPUs per replica (tensor parallel), >= 1
  ServingEngine engine = ServingEngine::vllm;  ///< efficiency set and scheduler
  /// Latency targets (constraints): the estimate reports whether it meets them
  /// (ServingEstimate::meets_latency_targets); largest_batch_meeting_targets() searches the batch.
  std::optional<double> ttft_target_seconds;  ///< time to first token, <= this
  std::optional<double> tpot_target_seconds;  ///< time per output token, <= this
};

struct ServingEstimate {
  double prefill_tokens_per_s = 0;  ///< prompt tokens per second for one prompt, per replica
  double decode_tokens_per_s = 0;   ///< generated tokens per second, aggregate over the batch
  /// Time to first token: the prompt's chunks, each in a step with the running batch's decode;
  /// under continuous batching at least one steady-state step (step_seconds), which also carries
  /// the other arrivals' prompts.
  double ttft_seconds = 0;
  /// The prompt's own chunks alone (the TTFT before its floor).
  double ttft_prompt_seconds = 0;
  /// Time per output token a running sequence sees: with continuous batching the decode step at the
  /// batch carrying the prompts of the other B − 1 slots' successors, (B − 1)·P/O tokens (its own
  /// prompt is in ttft_seconds); static batching: the decode step alone (the wave's prompts are
  /// prefilled before its first token).
  double tpot_seconds = 0;
  /// The steady-state step: decode at the batch + B·P/O prompt tokens (continuous batching) or the
  /// wave's prefill share (static). Sets the rate: requests_per_s_per_replica = B / (O × step)
  /// (continuous), decode_tokens_per_s = B / step.
  double step_seconds = 0;
  /// false with output_tokens 1: no token follows the first, so tpot_seconds is the steady-state
  /// step only (it still sets the rate), not a time anyone waits between tokens; shown as null / "—".
  bool tpot_defined = true;
  std::int64_t max_concurrent_sequences = 0;  ///< KV capacity / KV bytes per sequence
  std::int64_t batch = 0;                     ///< sequences decoded together: min(concurrency, max)
  double requests_per_s_per_replica = 0;      ///< B / (O × step) continuous; B / (ttft + (O − 1) × tpot) static
  // Breakdown of one decode step.
  double weights_bytes_per_step = 0;  ///< weight bytes read per decode step, whole replica
  double kv_bytes_per_step = 0;       ///< KV bytes read per decode step for the batch
  double decode_memory_seconds = 0;   ///< (weights + KV) / achieved bandwidth
  double decode_compute_seconds = 0;  ///< batch decode FLOPs / achieved compute
  bool decode_compute_bound = false;  ///< decode_compute_seconds > decode_memory_seconds
  double prefill_tokens_per_step = 0;   ///< steady-state prompt tokens prefilled per decode step (B·P/O)
  double prefill_seconds_per_step = 0;  ///< their compute time inside each step
  /// Of them, the prompts a running sequence's steps carry: (B − 1)·P/O (continuous batching).
  double prefill_tokens_per_step_others = 0;
  double tp_comm_seconds_per_step = 0;  ///< TP all-reduces of one step (0 when tp = 1)
  double output_tokens_per_s = 0;       ///< = decode_tokens_per_s (steady state, per replica)
  bool meets_latency_targets = true;    ///< ttft/tpot within the request's targets (true if none)
  // Terms of one step as a function of its decode sequences d and prompt tokens c (the same
  // rule as tpot_seconds): step_roofline(weights + d·kv, d·decode + c·prefill) + tp_fixed +
  // tp_per_token·(d + c). Used by simulate_batch_job().
  double weights_memory_seconds = 0;          ///< weight read of one step, s
  double kv_memory_seconds_per_sequence = 0;  ///< KV read of one sequence at the mean context, s
  double decode_compute_seconds_per_sequence = 0;  ///< one sequence's decode compute, s
  double prefill_seconds_per_token = 0;       ///< one prompt token's prefill compute, s
  double tp_comm_seconds_fixed = 0;           ///< TP all-reduce latency part of one step, s
  double tp_comm_seconds_per_token = 0;       ///< TP all-reduce bandwidth part per token, s
  std::int64_t step_token_budget = 0;         ///< engine token budget per step (max_num_tokens)
  bool continuous_batching = false;           ///< the engine mixes prompt chunks into decode steps
};

/// One wave of a static-batching engine (EngineProfile::continuous_batching false) at the
/// estimate's batch, seconds: the wave's prefill (ttft_seconds) and output_tokens − 1 decode steps
/// (tpot_seconds, the decode step alone); the request rate is batch / this. One output token: the
/// wave's prefill alone.
double static_wave_seconds(const ServingEstimate& e, std::int64_t output_tokens);

/// A batch job of `requests` identical requests (P prompt, O output tokens) all queued at t = 0
/// on one replica, simulated step by step (docs/performance-model.md §3, "batch jobs"):
/// a request holds a slot from admission to its last token, so at most `batch` run (KV pool
/// reserved for P + O tokens: TensorRT-LLM's guaranteed-no-evict policy); each step decodes the
/// d sequences past their prompt and prefills c = min(pending prompt tokens, max(budget − d,
/// budget/4)) prompt tokens FIFO (chunked prefill, the same rule as ttft_seconds); a prompt
/// whose last chunk ran emits its first token in that step and then needs O − 1 decode steps;
/// freed slots are refilled from the queue at the next step (in-flight batching). Step time is
/// the step rule of the ServingEstimate terms above. Beyond kMaxSimulatedSteps the first
/// requests are simulated and the rest are timed at their rate (simulated_requests < requests).
struct BatchJobTiming {
  double seconds = 0;                    ///< wall time of the whole job on one replica
  std::int64_t steps = 0;                ///< steps simulated
  std::int64_t prefill_steps = 0;        ///< of which steps carried prompt tokens
  std::int64_t simulated_requests = 0;   ///< requests simulated (the rest extrapolated)
  double steady_state_seconds = 0;       ///< requests / requests_per_s_per_replica, for comparison
  double mean_decode_batch = 0;          ///< mean d over the steps
  /// The most sequences the replica runs at once: min(batch, requests). A job of fewer requests than
  /// the KV pool holds runs them all together, not the pool's batch (trial50 #4: 1 request showed
  /// "batch 29361").
  std::int64_t peak_running_sequences = 0;
  /// The sequences the replica's KV pool holds (the estimate's batch the job was simulated with);
  /// 0 = not recorded. Set by the planner when it re-times a job that runs fewer than that.
  std::int64_t pool_sequences = 0;
};
inline constexpr std::int64_t kMaxSimulatedSteps = 400000;
/// Throws Error{invalid_input} for requests, prompt or output tokens < 1 or batch < 1.
BatchJobTiming simulate_batch_job(const ServingEstimate& estimate, std::int64_t requests, std::int64_t prompt_tokens,
                                  std::int64_t output_tokens);
/// The requests simulate_batch_job simulates of `requests` (the rest are timed at their rate):
/// min(requests, whole waves of `batch` within kMaxSimulatedSteps). Jobs of different sizes with
/// the same count share one simulation (the planner times 1, 2, 4 ... instances from it).
std::int64_t batch_job_simulated_requests(const ServingEstimate& estimate, std::int64_t requests,
                                          std::int64_t prompt_tokens, std::int64_t output_tokens);
/// The timing of `requests` from `simulated`, the simulate_batch_job timing of exactly
/// batch_job_simulated_requests(estimate, requests, ...) requests: its seconds × requests /
/// simulated requests; steady_state_seconds for `requests`.
BatchJobTiming batch_job_scaled(const BatchJobTiming& simulated, const ServingEstimate& estimate, std::int64_t requests);

/// Decode-state bytes ONE sequence of `context_tokens` tokens holds (the capacity a sequence takes): the KV cache of
/// the layers that hold one (LayerGeometry::kv_cache_layers: a hybrid's attention blocks; gemma-3n's KV-sharing layers
/// hold none), 2·K·d·bytes per token per layer for MHA/GQA/MQA, (kv_lora_rank + qk_rope_head_dim)·bytes for MLA
/// (Pope et al. 2022 §2; DeepSeek-V2 §2.1.4), sliding-window layers at most `window` tokens; plus the 16-bit SSM state
/// of each SSM layer (ModelArch::ssm_state_elements_per_layer). Bytes per element from kv_dtype_bytes() (memory.hpp).
/// 0 for families without a decode cache (encoders, diffusion).
double decode_kv_bytes(const ModelArch& arch, KvDtype kv_dtype, std::int64_t context_tokens);

/// Bytes ONE sequence's decode step reads from that state: the KV cache read by every attention layer (its own or,
/// gemma-3n, an earlier layer's), and each SSM layer's state read and written (2×).
double decode_state_read_bytes(const ModelArch& arch, KvDtype kv_dtype, std::int64_t context_tokens);

/// Estimates one replica. kv_capacity_bytes = GPU memory left for the KV cache across the
/// replica's tp GPUs (from serving_memory()). Throws Error{invalid_input} for non-positive
/// token counts / tp / concurrency or a null cluster.gpu.
ServingEstimate estimate_serving(const ModelArch& arch, const ServingPerfRequest& request, const ClusterSpec& cluster,
                                 double kv_capacity_bytes, const PerfAssumptions& assumptions);

/// The estimate at the largest batch <= request.concurrency whose ttft and tpot meet the
/// request's targets (tpot and ttft grow with the batch). Returns the batch-1 estimate (with
/// meets_latency_targets = false) when even one sequence misses them.
ServingEstimate largest_batch_meeting_targets(const ModelArch& arch, const ServingPerfRequest& request,
                                              const ClusterSpec& cluster, double kv_capacity_bytes,
                                              const PerfAssumptions& assumptions);

/// Replicas needed to serve `target_requests_per_s` (ceil(target / requests_per_s_per_replica))
/// and at least ceil(target_concurrency / max_concurrent_sequences); >= 1. Returns 0 when the
/// estimate cannot serve a single sequence (max_concurrent_sequences == 0).
std::int64_t replicas_needed(const ServingEstimate& estimate, double target_requests_per_s,
                             std::int64_t target_concurrency);

/// Mean time a request waits for a free slot under an open-loop (Poisson) arrival rate of
/// `requests_per_s` spread over `replicas`, seconds. Each replica queues its share, rate /
/// replicas (a load balancer spreading arrivals at random; one queue shared by all replicas would
/// wait less), and its batch slots are the servers of an M/D/c queue, c = batch: each request
/// holds a slot for batch / requests_per_s_per_replica (its TTFT + (O − 1) × TPOT, Little's law),
/// and the plan's requests are alike, so the service time is deterministic. Wait = Erlang C's M/M/c wait, C(c, a) × service / (c − a) with offered load
/// a = rate × service (Kleinrock 1975, Queueing Systems I §3.5), × (1 + C_s²)/2 with C_s = 0: the
/// Allen–Cunneen approximation for M/G/c, exact for M/D/1 (Pollaczek–Khinchine: ρ / (2μ(1 − ρ))).
/// +inf when a replica's load reaches its slots' capacity (a ≥ c); 0 with no rate or an estimate
/// that serves nothing.
double queue_wait_seconds(const ServingEstimate& estimate, std::int64_t replicas, double requests_per_s);

/// The fewest replicas, at least `at_least` (replicas_needed's count), whose mean queue wait
/// (queue_wait_seconds) is at most `max_wait_seconds`; searched up to 4 × at_least + 4 (then that
/// bound). An open-loop rate needs it: replicas_needed alone lets the slots run at up to 100% of
/// their capacity, where the queue grows without bound (trial57: 1 req/s of 100k-token prompts on
/// 6 MI300X replicas, 99.8% busy).
std::int64_t replicas_for_queue_wait(const ServingEstimate& estimate, double requests_per_s, double max_wait_seconds,
                                     std::int64_t at_least);

/// Explanation lines for the estimate (same numbers as estimate_serving).
std::vector<ExplainLine> explain_serving(const ModelArch& arch, const ServingPerfRequest& request,
                                         const ClusterSpec& cluster, double kv_capacity_bytes,
                                         const PerfAssumptions& assumptions);

}  // namespace gpuplan
