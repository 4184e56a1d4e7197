#include "sizing/serving_perf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <limits>

#include "sizing/flops.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double safe_div(double a, double b) { return b > 0 ? a / b : (a > 0 ? kInf : 0.0); }

/// Dense 16-bit peak (prefill and decode run 16-bit matmuls; quantised weights are de-quantised).
double peak16(const GpuSpec& gpu) {
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::tf32, Dtype::fp32})
    if (auto f = gpu.dense_flops(d); f && *f > 0) return *f;
  return 0;
}

double decode_bw_efficiency(WeightQuant q, const EngineProfile& p) {
  const double bits = weight_quant_bits(q);
  if (bits >= 16) return p.decode_bw_efficiency_16bit;
  if (bits >= 8) return p.decode_bw_efficiency_8bit;
  return p.decode_bw_efficiency_4bit;
}

double prefill_efficiency(WeightQuant q, const EngineProfile& p) {
  return weight_quant_bits(q) >= 16 ? p.prefill_efficiency_16bit : p.prefill_efficiency_quantized;
}

void validate(const ServingPerfRequest& r, const ClusterSpec& c) {
  if (c.gpu == nullptr) throw_invalid("cluster.gpu", "no GPU given", "a GPU from the catalog");
  if (r.prompt_tokens < 1) throw_invalid("prompt_tokens", fmt::format("{} is not a positive integer", r.prompt_tokens), "an integer >= 1");
  if (r.output_tokens < 1) throw_invalid("output_tokens", fmt::format("{} is not a positive integer", r.output_tokens), "an integer >= 1");
  if (r.concurrency < 1) throw_invalid("concurrency", fmt::format("{} is not a positive integer", r.concurrency), "an integer >= 1");
  if (r.tp < 1) throw_invalid("tp", fmt::format("{} is not a positive integer", r.tp), "an integer >= 1");
  if (r.ttft_target_seconds && !(*r.ttft_target_seconds > 0))
    throw_invalid("ttft_target_seconds", fmt::format("{} s is not a positive time", *r.ttft_target_seconds), "a time > 0");
  if (r.tpot_target_seconds && !(*r.tpot_target_seconds > 0))
    throw_invalid("tpot_target_seconds", fmt::format("{} s is not a positive time", *r.tpot_target_seconds), "a time > 0");
}

struct Work {
  ServingEstimate e;
  EngineProfile profile;
  double peak = 0;          ///< matmul peak of the replica used for prefill
  double peak_decode = 0;   ///< 16-bit peak of the replica used for decode compute
  double bandwidth = 0;
  double bw_eff = 0;
  double prefill_eff = 0;
  double prefill_flop = 0;
  double prefill_flop_per_token = 0;
  double prefill_compute_seconds = 0;
  double prefill_memory_seconds = 0;
  double kv_bytes_per_sequence_max = 0;
  double mean_context = 0;
  double expert_read_fraction = 1;
  double decode_flop_per_token = 0;
  double link_bytes_per_s = 0;
  double link_efficiency = 0;  ///< achieved fraction of link_bytes_per_s in the TP all-reduces
  double chunk_tokens = 0;     ///< prompt tokens per step while this prompt is prefilled
  double ttft_steps = 0;
  double ttft_chunk_seconds = 0;  ///< ttft_steps × the step of the running batch's decode + this prompt's chunk
  double ttft_floor_seconds = 0;  ///< continuous: one steady-state step; static: the wave's B·P prompt tokens
};

/// TP all-reduces of one step processing `tokens` tokens: 2 per layer (Megatron §3).
double tp_comm_seconds(const ModelArch& arch, int tp, double tokens, double link_bytes_per_s, double link_efficiency,
                       const EngineProfile& p) {
  if (tp <= 1) return 0;
  const double bytes = tokens * static_cast<double>(arch.hidden_size) * 2.0;
  const double per = p.tp_allreduce_latency_seconds + ring_allreduce_seconds(bytes, tp, link_bytes_per_s * link_efficiency);
  return arch.tp_sublayers() * per;  // one all-reduce per attention / MLP (or SSM mixer) block
}

Work compute_work(const ModelArch& arch, const ServingPerfRequest& r, const ClusterSpec& c, double kv_capacity_bytes,
                  const PerfAssumptions& a) {
  validate(r, c);
  Work w;
  ServingEstimate& e = w.e;
  const GpuSpec& gpu = *c.gpu;
  w.profile = engine_profile(r.engine, a);
  const EngineProfile& pr = w.profile;
  const double tp = r.tp;
  w.peak_decode = peak16(gpu) * tp;
  w.peak = w.peak_decode;
  // FP8 weights on an engine with FP8 kernels and a GPU with an FP8 peak: W8A8 prefill GEMMs.
  if (r.quant == WeightQuant::fp8 && pr.fp8_tensor_cores) {
    if (auto f8 = gpu.dense_flops(Dtype::fp8); f8 && *f8 > 0) w.peak = *f8 * tp;
  }
  // The decode GEMMs of a W8A8 checkpoint run the same FP8 kernels as its prefill (activations
  // quantised per token): the batch's decode compute is at the FP8 peak too.
  w.peak_decode = w.peak;
  w.bandwidth = gpu.memory_bandwidth_bytes_per_s * tp;
  w.bw_eff = decode_bw_efficiency(r.quant, pr);
  w.prefill_eff = prefill_efficiency(r.quant, pr);
  w.link_bytes_per_s = r.tp <= c.gpus_per_node ? c.intra_node_bytes_per_s
                                               : safe_div(c.inter_node_bytes_per_s, c.gpus_per_node);
  w.link_efficiency = r.tp <= c.gpus_per_node ? collective_link_efficiency(c, r.tp, a) : a.link_efficiency;
  const double bytes_per_param = weight_quant_bits(r.quant) / 8.0;

  // Capacity.
  const std::int64_t max_context = r.prompt_tokens + r.output_tokens;
  w.kv_bytes_per_sequence_max = decode_kv_bytes(arch, r.kv_dtype, max_context);
  if (w.kv_bytes_per_sequence_max > 0) {
    const double n = std::floor(std::max(kv_capacity_bytes, 0.0) / w.kv_bytes_per_sequence_max);
    e.max_concurrent_sequences = n > 1e15 ? std::int64_t{1000000000000000} : static_cast<std::int64_t>(n);
  } else {
    e.max_concurrent_sequences = r.concurrency;  // no KV cache (SSM): capacity is not the limit
  }
  e.batch = std::min(r.concurrency, e.max_concurrent_sequences);
  const double batch = static_cast<double>(e.batch);
  const double P = static_cast<double>(r.prompt_tokens), O = static_cast<double>(r.output_tokens);

  // Prefill of one prompt on an idle replica: compute-bound, never faster than one weight read.
  const double all_weights = static_cast<double>(arch.params.total()) * bytes_per_param;
  w.prefill_flop = prefill_flops(arch, r.prompt_tokens);
  w.prefill_flop_per_token = w.prefill_flop / P;
  w.prefill_compute_seconds = safe_div(w.prefill_flop, w.peak * w.prefill_eff);
  w.prefill_memory_seconds = safe_div(all_weights, w.bandwidth * w.bw_eff);

  // Decode step at the batch. MoE: the batch touches 1 − (1 − k/E)^B of each layer's experts.
  double weight_params = static_cast<double>(arch.params.total());
  if (arch.moe && arch.moe->num_routed_experts > 0 && arch.params.experts > 0) {
    const double k_over_e =
        static_cast<double>(arch.moe->experts_per_token) / static_cast<double>(arch.moe->num_routed_experts);
    w.expert_read_fraction = 1.0 - std::pow(1.0 - std::clamp(k_over_e, 0.0, 1.0), std::max(batch, 1.0));
    weight_params -= static_cast<double>(arch.params.experts) * (1.0 - w.expert_read_fraction);
  }
  // Embedding rows are gathered, not read whole: exclude the embedding tables (the token table, position tables,
  // gemma-3n's per-layer table); a tied token table is read whole as the LM head, V·h (width embedding_width if set).
  const double head_width = static_cast<double>(arch.embedding_width > 0 ? arch.embedding_width : arch.hidden_size);
  const double tied_head = arch.tied_embeddings ? static_cast<double>(arch.vocab_size) * head_width : 0.0;
  weight_params -= std::max(0.0, static_cast<double>(arch.params.embeddings) - tied_head);
  e.weights_bytes_per_step = weight_params * bytes_per_param;
  w.mean_context = P + O / 2.0;
  const auto mean_ctx = static_cast<std::int64_t>(std::llround(w.mean_context));
  e.kv_bytes_per_step = batch * decode_state_read_bytes(arch, r.kv_dtype, mean_ctx);
  e.decode_memory_seconds = safe_div(e.weights_bytes_per_step + e.kv_bytes_per_step, w.bandwidth * w.bw_eff);
  w.decode_flop_per_token = inference_flops_per_token(arch, mean_ctx).total_flop;
  e.decode_compute_seconds = safe_div(batch * w.decode_flop_per_token, w.peak_decode * pr.decode_compute_efficiency);
  e.decode_compute_bound = e.decode_compute_seconds > e.decode_memory_seconds;

  // Steady state: B/O requests finish per step, so B·P/O prompt tokens are prefilled per step.
  e.prefill_tokens_per_step = batch * P / O;
  e.prefill_seconds_per_step = safe_div(e.prefill_tokens_per_step * w.prefill_flop_per_token, w.peak * w.prefill_eff);
  e.tp_comm_seconds_per_step = tp_comm_seconds(arch, r.tp, batch + e.prefill_tokens_per_step, w.link_bytes_per_s, w.link_efficiency, pr);
  // A continuous-batching step mixes the running batch's decode tokens with prompt chunks
  // (attention kernels apart from the GEMMs, no CUDA graph for mixed batches in vLLM): the soft
  // roofline. A decode-only step (llama.cpp, which prefills between steps) is GEMM-bound like our
  // H200 decode timings: the roofline max (tests/data/h200-decode-roofline.jsonl).
  if (pr.continuous_batching) {
    e.step_seconds = step_roofline_seconds(e.decode_memory_seconds, e.decode_compute_seconds + e.prefill_seconds_per_step) +
                     e.tp_comm_seconds_per_step;
    // What a running sequence waits between its tokens: its steps carry the prompts of the other
    // B − 1 slots' successors, (B − 1)·P/O tokens per step, not its own (prefilled before its first
    // token, in ttft). Then residence = ttft + (O − 1)·tpot ≈ P·t_p + O·d + (B − 1)·P·t_p = O·step for
    // long outputs, and Little's law gives rate × residence ≈ B, the batch (trial57 #2: at batch 1 the step's whole
    // prefill share was shown as time between tokens, 30 ms against a 4 ms decode step).
    e.prefill_tokens_per_step_others = std::max(batch - 1.0, 0.0) * P / O;
    const double others_prefill =
        safe_div(e.prefill_tokens_per_step_others * w.prefill_flop_per_token, w.peak * w.prefill_eff);
    e.tpot_seconds = step_roofline_seconds(e.decode_memory_seconds, e.decode_compute_seconds + others_prefill) +
                     tp_comm_seconds(arch, r.tp, batch + e.prefill_tokens_per_step_others, w.link_bytes_per_s, w.link_efficiency, pr);
  } else {
    // Static batching (llama.cpp as profiled): the step with the wave's prefill share sets the rate
    // (static_wave_seconds uses the same figure).
    e.step_seconds = std::max(e.decode_memory_seconds, e.decode_compute_seconds) + e.prefill_seconds_per_step +
                     e.tp_comm_seconds_per_step;
    // Its wave's prompts were all prefilled before its first token (in ttft_seconds), so a running
    // sequence waits a decode step between tokens.
    e.prefill_tokens_per_step_others = 0;
    e.tpot_seconds = std::max(e.decode_memory_seconds, e.decode_compute_seconds) + e.tp_comm_seconds_per_step;
  }
  e.tpot_defined = r.output_tokens > 1;
  e.decode_tokens_per_s = e.batch > 0 ? safe_div(batch, e.step_seconds) : 0.0;
  e.weights_memory_seconds = safe_div(e.weights_bytes_per_step, w.bandwidth * w.bw_eff);
  e.kv_memory_seconds_per_sequence =
      safe_div(decode_state_read_bytes(arch, r.kv_dtype, mean_ctx), w.bandwidth * w.bw_eff);
  e.decode_compute_seconds_per_sequence = safe_div(w.decode_flop_per_token, w.peak_decode * pr.decode_compute_efficiency);
  e.prefill_seconds_per_token = safe_div(w.prefill_flop_per_token, w.peak * w.prefill_eff);
  e.tp_comm_seconds_fixed = tp_comm_seconds(arch, r.tp, 0.0, w.link_bytes_per_s, w.link_efficiency, pr);
  e.tp_comm_seconds_per_token = tp_comm_seconds(arch, r.tp, 1.0, w.link_bytes_per_s, w.link_efficiency, pr) - e.tp_comm_seconds_fixed;
  e.step_token_budget = std::max<std::int64_t>(pr.prefill_chunk_tokens, 1);
  e.continuous_batching = pr.continuous_batching;
  e.output_tokens_per_s = e.decode_tokens_per_s;

  // Time to first token: the prompt's chunks, each in a step shared with the running batch.
  const double budget = static_cast<double>(std::max<std::int64_t>(pr.prefill_chunk_tokens, 1));
  const double others = std::max(0.0, batch - 1.0);
  w.chunk_tokens = std::min(P, std::max(budget - others, budget / 4.0));
  w.ttft_steps = std::ceil(P / w.chunk_tokens);
  const double chunk_compute = safe_div(w.chunk_tokens * w.prefill_flop_per_token, w.peak * w.prefill_eff);
  const double others_compute = e.batch > 0 ? e.decode_compute_seconds * others / batch : 0.0;
  const double others_memory = others > 0 ? e.decode_memory_seconds : w.prefill_memory_seconds;
  // The prompt's chunk is far from the ridge point (2,048 tokens, or llama.cpp's 512, against a
  // weight read): the roofline max, as llama.cpp's prefill rows were calibrated with.
  const double step_with_chunk =
      std::max(std::max(others_memory, w.prefill_memory_seconds), others_compute + chunk_compute) +
      tp_comm_seconds(arch, r.tp, others + w.chunk_tokens, w.link_bytes_per_s, w.link_efficiency, pr);
  w.ttft_chunk_seconds = w.ttft_steps * step_with_chunk;
  // Continuous batching: the prompt's last chunk is computed in a steady-state step, which also
  // carries the B·P/O prompt tokens of the other arrivals (the step TPOT times), so the first
  // token never comes sooner than one such step. It binds where prompts outweigh the decode
  // (trial54 #10: one output token, 198 sequences, was 82 ms against a 13.9 s step). Static
  // batching (llama.cpp as profiled): a wave's B prompts are all prefilled before its first
  // decode step, B·P prompt tokens = O × the per-step prefill (trial55 D1/D2: one output token at
  // batch 198 showed 250 ms for a 9.8 s wave). The rates below keep the one-prompt chunk time.
  w.ttft_floor_seconds = pr.continuous_batching ? e.step_seconds : O * e.prefill_seconds_per_step;
  e.ttft_seconds = std::max(w.ttft_chunk_seconds, w.ttft_floor_seconds);
  e.ttft_prompt_seconds = w.ttft_chunk_seconds;
  e.prefill_tokens_per_s = safe_div(P, w.ttft_chunk_seconds);

  if (e.batch > 0) {
    // Static batching: a wave of B requests, its prompts' prefill (TTFT) then O − 1 decode steps
    // (static_wave_seconds). Until 2026-12-07 B / (one prompt's chunks + O × step), which counted one
    // prompt twice (trial58 #2).
    e.requests_per_s_per_replica = pr.continuous_batching
                                       ? safe_div(batch, O * e.step_seconds)
                                       : safe_div(batch, e.ttft_seconds + (O - 1.0) * e.tpot_seconds);
  }
  e.meets_latency_targets = (!r.ttft_target_seconds || e.ttft_seconds <= *r.ttft_target_seconds) &&
                            (!r.tpot_target_seconds || !e.tpot_defined || e.tpot_seconds <= *r.tpot_target_seconds);
  return w;
}

std::string si(double v, const char* unit) {
  if (!std::isfinite(v)) return fmt::format("inf {}", unit);
  return fmt::format("{:.4g} {}", v, unit);
}

}  // namespace

double step_roofline_seconds(double memory_seconds, double compute_seconds) noexcept {
  const double hi = std::max(memory_seconds, compute_seconds);
  const double lo = std::min(memory_seconds, compute_seconds);
  if (!(hi > 0) || !std::isfinite(hi)) return hi;
  return hi + lo * std::sqrt(lo / hi);
}

std::string_view serving_engine_name(ServingEngine e) noexcept {
  switch (e) {
    case ServingEngine::vllm: return "vllm";
    case ServingEngine::tensorrt_llm: return "tensorrt-llm";
    case ServingEngine::sglang: return "sglang";
    case ServingEngine::llama_cpp: return "llama.cpp";
  }
  return "vllm";
}

std::optional<std::string> engine_quant_unsupported(ServingEngine engine, WeightQuant quant) {
  static constexpr WeightQuant kAll[] = {WeightQuant::bf16,      WeightQuant::fp16,        WeightQuant::fp8,
                                         WeightQuant::int8,      WeightQuant::int4,        WeightQuant::nf4,
                                         WeightQuant::gguf_q4_k_m, WeightQuant::gguf_q8_0, WeightQuant::gguf_q4_0,
                                         WeightQuant::gguf_q2_k, WeightQuant::mxfp4};
  auto takes = [engine](WeightQuant q) {
    switch (engine) {
      case ServingEngine::llama_cpp:
        return q != WeightQuant::fp8 && q != WeightQuant::int8 && q != WeightQuant::int4 && q != WeightQuant::nf4;
      case ServingEngine::tensorrt_llm:
        return q != WeightQuant::nf4 && q != WeightQuant::gguf_q4_k_m && q != WeightQuant::gguf_q8_0 &&
               q != WeightQuant::gguf_q4_0 && q != WeightQuant::gguf_q2_k;
      case ServingEngine::vllm:
      case ServingEngine::sglang: return true;
    }
    return true;
  };
  if (takes(quant)) return std::nullopt;
  std::string list;
  for (WeightQuant q : kAll)
    if (takes(q)) list += (list.empty() ? "" : ", ") + std::string(weight_quant_name(q));
  return list;
}

ServingEngine parse_serving_engine(std::string_view s, const std::string& where) {
  std::string k;
  for (char ch : s) {
    if (ch == '-' || ch == '_' || ch == '.') continue;
    k += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  if (k == "vllm") return ServingEngine::vllm;
  if (k == "tensorrtllm" || k == "trtllm") return ServingEngine::tensorrt_llm;
  if (k == "sglang") return ServingEngine::sglang;
  if (k == "llamacpp") return ServingEngine::llama_cpp;
  throw_invalid_coded(where, "unknown_choice", {{"value", std::string(s)}, {"allowed", "vllm, tensorrt-llm, sglang, llama.cpp"}},
                      fmt::format("unknown engine '{}'", s), "vllm, tensorrt-llm, sglang or llama.cpp");
}

EngineProfile engine_profile(ServingEngine engine, const PerfAssumptions& a) {
  EngineProfile p;
  p.engine = engine;
  switch (engine) {
    case ServingEngine::llama_cpp:
      // Calibrated on llama.cpp's own table (ggml-org/llama.cpp PR #4766, tests/data/ground-truth-dev.jsonl):
      // the PerfAssumptions serving fields. No continuous batching of prefill into decode steps
      // (the server's slots decode together, prompts are processed between steps); layer split
      // across GPUs rather than Megatron TP: ASSUMPTION 50 µs per cross-GPU sync.
      p.decode_bw_efficiency_16bit = a.decode_bw_efficiency_16bit;
      p.decode_bw_efficiency_8bit = a.decode_bw_efficiency_8bit;
      p.decode_bw_efficiency_4bit = a.decode_bw_efficiency_4bit;
      p.prefill_efficiency_16bit = a.prefill_efficiency_16bit;
      p.prefill_efficiency_quantized = a.prefill_efficiency_quantized;
      p.decode_compute_efficiency = a.decode_compute_efficiency;
      p.continuous_batching = false;
      p.prefill_chunk_tokens = 512;  // llama-server default --ubatch-size
      p.tp_allreduce_latency_seconds = 50e-6;
      p.fp8_tensor_cores = false;
      p.source = "llama.cpp PR #4766 table (calibrated); llama-server defaults";
      break;
    case ServingEngine::vllm:
    case ServingEngine::sglang:
      // 16-bit decode: cuBLAS GEMMs as in our H200 run (77% of HBM bandwidth at batch 1,
      // tests/data/h200-decode-roofline.jsonl) → a.decode_bw_efficiency_16bit. 4-bit: Marlin
      // kernels reach close to the ideal 4× over FP16 at small batch (Frantar et al. 2024,
      // arXiv:2408.11743 Fig. 1) → ASSUMPTION 0.68. 8-bit fp8 W8A8: ASSUMPTION 0.72.
      // Prefill: ASSUMPTION 0.60 of the dense peak on data-centre GPUs (the 0.85 llama.cpp reaches on
      // consumer cards is against a much lower peak). Custom all-reduce kernel for small
      // messages: ASSUMPTION 10 µs per all-reduce on NVLink. vLLM chunked-prefill token budget
      // 2048 (vLLM docs, "Optimization and Tuning": max_num_batched_tokens default for online
      // serving); SGLang chunked_prefill_size 8192 on 80 GB-class GPUs (sglang server_args).
      p.decode_bw_efficiency_16bit = a.decode_bw_efficiency_16bit;
      p.decode_bw_efficiency_8bit = 0.72;
      p.decode_bw_efficiency_4bit = 0.68;
      p.prefill_efficiency_16bit = 0.60;
      p.prefill_efficiency_quantized = 0.50;
      p.decode_compute_efficiency = a.decode_compute_efficiency;
      p.continuous_batching = true;
      p.prefill_chunk_tokens = engine == ServingEngine::vllm ? 2048 : 8192;
      p.tp_allreduce_latency_seconds = 10e-6;
      p.fp8_tensor_cores = true;
      p.source = engine == ServingEngine::vllm ? "vLLM: documented defaults; efficiencies partly ASSUMED"
                                               : "SGLang: documented defaults; efficiencies partly ASSUMED";
      break;
    case ServingEngine::tensorrt_llm:
      // Fused attention/GEMM plugins and in-flight batching: ASSUMPTION +5% bandwidth and prefill
      // efficiency over vLLM's set; max_num_tokens 8192 (trtllm-serve default); 8 µs all-reduce.
      p.decode_bw_efficiency_16bit = std::min(0.9, a.decode_bw_efficiency_16bit * 1.05);
      p.decode_bw_efficiency_8bit = 0.76;
      p.decode_bw_efficiency_4bit = 0.70;
      p.prefill_efficiency_16bit = 0.63;
      p.prefill_efficiency_quantized = 0.53;
      p.decode_compute_efficiency = a.decode_compute_efficiency;
      p.continuous_batching = true;
      p.prefill_chunk_tokens = 8192;
      p.tp_allreduce_latency_seconds = 8e-6;
      p.fp8_tensor_cores = true;
      // KV pool = free_gpu_memory_fraction (default 0.9) × the memory free after the weights and
      // runtime buffers (TensorRT-LLM docs, KvCacheConfig.free_gpu_memory_fraction; perf-overview:
      // "kv_cache_free_gpu_mem_fraction", 0.90 default, 0.95 in most published runs).
      p.kv_pool_free_memory_fraction = 0.9;
      p.source = "TensorRT-LLM: documented defaults; efficiencies ASSUMED relative to vLLM";
      break;
  }
  return p;
}

ServingEstimate largest_batch_meeting_targets(const ModelArch& arch, const ServingPerfRequest& request,
                                              const ClusterSpec& cluster, double kv_capacity_bytes,
                                              const PerfAssumptions& assumptions) {
  ServingPerfRequest r = request;
  r.concurrency = 1;
  ServingEstimate best = compute_work(arch, r, cluster, kv_capacity_bytes, assumptions).e;
  if (!best.meets_latency_targets) return best;
  std::int64_t lo = 1, hi = request.concurrency;  // lo meets; find the largest that meets
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    r.concurrency = mid;
    const ServingEstimate e = compute_work(arch, r, cluster, kv_capacity_bytes, assumptions).e;
    if (e.meets_latency_targets) {
      lo = mid;
      best = e;
    } else {
      hi = mid - 1;
    }
  }
  return best;
}

BatchJobTiming simulate_batch_job(const ServingEstimate& e, std::int64_t requests, std::int64_t prompt_tokens,
                                  std::int64_t output_tokens) {
  if (requests < 1 || prompt_tokens < 1 || output_tokens < 1 || e.batch < 1)
    throw_invalid("batch_job", fmt::format("requests {}, prompt {}, output {}, batch {}", requests, prompt_tokens,
                                           output_tokens, e.batch),
                  "each >= 1");
  BatchJobTiming t;
  const std::int64_t B = e.batch, P = prompt_tokens, O = output_tokens;
  const double budget = static_cast<double>(std::max<std::int64_t>(e.step_token_budget, 1));
  const std::int64_t n = batch_job_simulated_requests(e, requests, prompt_tokens, output_tokens);
  t.simulated_requests = n;
  auto step_seconds = [&](double d, double c) {
    const double mem = e.weights_memory_seconds + d * e.kv_memory_seconds_per_sequence;
    const double comp = d * e.decode_compute_seconds_per_sequence + c * e.prefill_seconds_per_token;
    return step_roofline_seconds(mem, comp) + e.tp_comm_seconds_fixed + e.tp_comm_seconds_per_token * (d + c);
  };
  std::int64_t queued = n, running = 0, done = 0;
  std::int64_t pending = 0;       // admitted requests whose prompt is not fully prefilled (FIFO)
  std::int64_t head_left = 0;     // prompt tokens left of the first pending request
  std::int64_t decoding = 0;      // requests past their prompt
  std::deque<std::pair<std::int64_t, std::int64_t>> cohorts;  // (step of their last token, count)
  double seconds = 0, decode_sum = 0;
  std::int64_t step = 0;
  while (done < n) {
    const std::int64_t admit = std::min(queued, B - running);  // freed slots refilled (in-flight batching)
    if (admit > 0) {
      if (pending == 0) head_left = P;
      pending += admit;
      queued -= admit;
      running += admit;
    }
    const double d = static_cast<double>(decoding);
    const double room = std::max(budget - d, budget / 4.0);
    std::int64_t c = 0, finished_prefill = 0;
    if (pending > 0) {
      const auto room_tokens = static_cast<std::int64_t>(room);
      const std::int64_t total = head_left + (pending - 1) * P;
      c = std::min(total, std::max<std::int64_t>(room_tokens, 1));
      std::int64_t left = c;
      if (left >= head_left) {
        left -= head_left;
        finished_prefill = 1 + std::min(pending - 1, left / P);
        left -= (finished_prefill - 1) * P;
        head_left = finished_prefill < pending ? P - left : 0;
      } else {
        head_left -= left;
      }
      pending -= finished_prefill;
      ++t.prefill_steps;
    }
    seconds += step_seconds(d, static_cast<double>(c));
    decode_sum += d;
    if (finished_prefill > 0) {  // first token in this step; O − 1 decode steps follow
      cohorts.emplace_back(step + O - 1, finished_prefill);
      decoding += finished_prefill;
    }
    while (!cohorts.empty() && cohorts.front().first <= step) {
      decoding -= cohorts.front().second;
      running -= cohorts.front().second;
      done += cohorts.front().second;
      cohorts.pop_front();
    }
    ++step;
  }
  t.steps = step;
  t.mean_decode_batch = step > 0 ? decode_sum / static_cast<double>(step) : 0;
  t.seconds = seconds;
  return batch_job_scaled(t, e, requests);
}

std::int64_t batch_job_simulated_requests(const ServingEstimate& e, std::int64_t requests, std::int64_t prompt_tokens,
                                          std::int64_t output_tokens) {
  const std::int64_t B = std::max<std::int64_t>(e.batch, 1);
  const double budget = static_cast<double>(std::max<std::int64_t>(e.step_token_budget, 1));
  // Steps per request ~ O plus its share of prefill steps; simulate whole requests within the cap.
  const double steps_per_wave =
      static_cast<double>(output_tokens) + std::ceil(static_cast<double>(B) * static_cast<double>(prompt_tokens) / budget);
  const double waves_cap = std::max(1.0, std::floor(static_cast<double>(kMaxSimulatedSteps) / steps_per_wave));
  return std::min<std::int64_t>(requests, static_cast<std::int64_t>(waves_cap) * B);
}

BatchJobTiming batch_job_scaled(const BatchJobTiming& simulated, const ServingEstimate& e, std::int64_t requests) {
  BatchJobTiming t = simulated;
  t.seconds = simulated.seconds * static_cast<double>(requests) / static_cast<double>(std::max<std::int64_t>(simulated.simulated_requests, 1));
  t.steady_state_seconds = safe_div(static_cast<double>(requests), e.requests_per_s_per_replica);
  t.peak_running_sequences = std::min<std::int64_t>(std::max<std::int64_t>(e.batch, 1), std::max<std::int64_t>(requests, 1));
  return t;
}

namespace {

/// KV bytes per token per attention layer (MLA: the latent; else K and V of every KV head); 0 without attention.
double kv_bytes_per_token_per_layer(const ModelArch& arch, KvDtype kv_dtype) {
  if (arch.num_attention_heads <= 0 && !arch.mla) return 0;
  const double bytes = kv_dtype_bytes(kv_dtype);
  if (arch.mla) return static_cast<double>(arch.mla->kv_lora_rank + arch.mla->qk_rope_head_dim) * bytes;
  const double kv_heads = static_cast<double>(arch.num_kv_heads > 0 ? arch.num_kv_heads : arch.num_attention_heads);
  double d = static_cast<double>(arch.head_dim);
  if (d <= 0 && arch.num_attention_heads > 0)
    d = static_cast<double>(arch.hidden_size) / static_cast<double>(arch.num_attention_heads);
  return 2.0 * kv_heads * d * bytes;
}

/// KV bytes of one sequence of `context_tokens` over `layers` attention layers of which `windowed` keep only the
/// sliding window.
double kv_bytes_over(const ModelArch& arch, KvDtype kv_dtype, std::int64_t context_tokens, std::int64_t layers,
                     std::int64_t windowed) {
  const std::int64_t ctx = std::max<std::int64_t>(context_tokens, 0);
  const std::int64_t win_ctx = arch.sliding_window ? std::min(ctx, *arch.sliding_window) : ctx;
  windowed = std::clamp<std::int64_t>(windowed, 0, layers);
  return kv_bytes_per_token_per_layer(arch, kv_dtype) *
         (static_cast<double>(layers - windowed) * static_cast<double>(ctx) +
          static_cast<double>(windowed) * static_cast<double>(win_ctx));
}

/// 16-bit SSM decode state of one sequence over the model's SSM layers (ModelArch::ssm_state_elements_per_layer).
double ssm_state_bytes(const ModelArch& arch) {
  const LayerGeometry* g = current_geometry(arch);
  const double layers = g ? static_cast<double>(g->ssm_layers) : (arch.ssm ? static_cast<double>(arch.num_layers) : 0.0);
  return 2.0 * layers * arch.ssm_state_elements_per_layer();
}

}  // namespace

double decode_kv_bytes(const ModelArch& arch, KvDtype kv_dtype, std::int64_t context_tokens) {
  if ((arch.family != ModelFamily::decoder && arch.family != ModelFamily::state_space) || arch.num_layers <= 0) return 0;
  // The layers that hold a cache: a hybrid's attention blocks, not gemma-3n's KV-sharing layers (kv_cache_layers).
  const LayerGeometry* g = current_geometry(arch);
  const std::int64_t kv_layers = g ? g->kv_cache_layers : (arch.ssm ? 0 : arch.num_layers);
  std::int64_t windowed = 0;
  if (arch.sliding_window)
    windowed = arch.layer_uses_sliding_window.empty() ? kv_layers : arch.sliding_window_layers_among_first(kv_layers);
  return kv_bytes_over(arch, kv_dtype, context_tokens, kv_layers, windowed) + ssm_state_bytes(arch);
}

double decode_state_read_bytes(const ModelArch& arch, KvDtype kv_dtype, std::int64_t context_tokens) {
  if ((arch.family != ModelFamily::decoder && arch.family != ModelFamily::state_space) || arch.num_layers <= 0) return 0;
  // Every attention layer reads a cache, its own or (gemma-3n) an earlier layer's; an SSM layer reads and writes its state.
  const LayerGeometry* g = current_geometry(arch);
  const std::int64_t layers = g ? g->attention_layers : (arch.ssm ? 0 : arch.num_layers);
  std::int64_t windowed = 0;
  if (arch.sliding_window)
    windowed = arch.layer_uses_sliding_window.empty() ? layers : std::min(layers, arch.num_sliding_window_layers());
  return kv_bytes_over(arch, kv_dtype, context_tokens, layers, windowed) + 2.0 * ssm_state_bytes(arch);
}

double static_wave_seconds(const ServingEstimate& e, std::int64_t output_tokens) {
  const double decode_steps = static_cast<double>(std::max<std::int64_t>(output_tokens - 1, 0));
  // The wave's prompts are prefilled first (its TTFT), then O − 1 decode steps of the batch (its TPOT).
  return e.ttft_seconds + decode_steps * e.tpot_seconds;
}

ServingEstimate estimate_serving(const ModelArch& arch, const ServingPerfRequest& request, const ClusterSpec& cluster,
                                 double kv_capacity_bytes, const PerfAssumptions& assumptions) {
  return compute_work(arch, request, cluster, kv_capacity_bytes, assumptions).e;
}

std::int64_t replicas_needed(const ServingEstimate& estimate, double target_requests_per_s,
                             std::int64_t target_concurrency) {
  if (estimate.max_concurrent_sequences <= 0 || estimate.requests_per_s_per_replica <= 0) return 0;
  double n = 1;
  if (target_requests_per_s > 0) n = std::max(n, std::ceil(target_requests_per_s / estimate.requests_per_s_per_replica));
  if (target_concurrency > 0)
    n = std::max(n, std::ceil(static_cast<double>(target_concurrency) /
                              static_cast<double>(estimate.max_concurrent_sequences)));
  return static_cast<std::int64_t>(n);
}

double queue_wait_seconds(const ServingEstimate& e, std::int64_t replicas, double requests_per_s) {
  if (!(requests_per_s > 0) || e.batch <= 0 || !(e.requests_per_s_per_replica > 0) || replicas <= 0) return 0.0;
  // Each replica queues its own share of the arrivals (a load balancer that spreads them at random):
  // an M/D/B queue per replica at rate / replicas. One queue shared by all replicas would wait less.
  const double servers = static_cast<double>(e.batch);
  const double service = static_cast<double>(e.batch) / e.requests_per_s_per_replica;  // seconds a request holds a slot
  const double a = requests_per_s / static_cast<double>(replicas) * service;           // offered load, Erlangs
  if (!(a < servers)) return std::numeric_limits<double>::infinity();
  // Erlang B as 1 / Σ_{j=0..n} n!/((n−j)!·a^j): terms t_j = t_{j−1}·(n − j + 1)/a, the Poisson
  // probabilities below n relative to P(n). Once the sum passes 1e250, B is below 1e-250: no wait.
  const auto n = static_cast<std::int64_t>(servers);
  double sum = 1.0, term = 1.0;
  for (std::int64_t j = 1; j <= n; ++j) {
    term *= static_cast<double>(n - j + 1) / a;
    sum += term;
    if (sum > 1e250) return 0.0;
    if (term < 1e-18 * sum && static_cast<double>(n - j) < a) break;  // past the mode, the rest is negligible
  }
  const double erlang_b = 1.0 / sum;
  const double rho = a / servers;
  const double erlang_c = erlang_b / (1.0 - rho * (1.0 - erlang_b));
  return 0.5 * erlang_c * service / (servers - a);
}

std::int64_t replicas_for_queue_wait(const ServingEstimate& e, double requests_per_s, double max_wait_seconds,
                                     std::int64_t at_least) {
  if (at_least <= 0 || !(requests_per_s > 0)) return at_least;
  const std::int64_t bound = 4 * at_least + 4;
  for (std::int64_t c = at_least; c < bound; ++c) {
    if (queue_wait_seconds(e, c, requests_per_s) <= max_wait_seconds) return c;
  }
  return bound;
}

std::vector<ExplainLine> explain_serving(const ModelArch& arch, const ServingPerfRequest& r, const ClusterSpec& c,
                                         double kv_capacity_bytes, const PerfAssumptions& a) {
  const Work w = compute_work(arch, r, c, kv_capacity_bytes, a);
  const ServingEstimate& e = w.e;
  std::vector<ExplainLine> out;
  out.push_back({"max_concurrent_sequences", static_cast<double>(e.max_concurrent_sequences),
                 fmt::format("floor({} KV capacity / {} per sequence at {} tokens) = {}; batch = min(concurrency {}, "
                             "that) = {}",
                             si(kv_capacity_bytes, "B"), si(w.kv_bytes_per_sequence_max, "B"),
                             r.prompt_tokens + r.output_tokens, e.max_concurrent_sequences, r.concurrency, e.batch),
                 arch.ssm ? "KV cache 2·L·K·d·bytes per token of the attention blocks (Pope et al. 2022 §2) + the SSM "
                            "state of the Mamba blocks (HF Mamba/Mamba2 cache: conv and SSM states)"
                          : "KV cache 2·L·K·d·bytes per token (Pope et al. 2022 §2); MLA (DeepSeek-V2 §2.1.4)"});
  out.push_back({"ttft_seconds", e.ttft_seconds,
                 fmt::format("{} steps of {:.0f} prompt tokens (engine {} token budget {} minus the running batch) × "
                             "max(weights/KV read, batch decode + chunk compute at {} × {:.2f}) = {}",
                             w.ttft_steps, w.chunk_tokens, serving_engine_name(w.profile.engine),
                             w.profile.prefill_chunk_tokens, si(w.peak, "FLOP/s"), w.prefill_eff,
                             si(w.ttft_chunk_seconds, "s")) +
                     (e.ttft_seconds > w.ttft_chunk_seconds
                          ? (w.profile.continuous_batching
                                 ? fmt::format("; at least one steady-state step of {} = {}", si(e.step_seconds, "s"),
                                               si(e.ttft_seconds, "s"))
                                 : fmt::format("; at least the wave's prefill, {} sequences × {} prompt tokens × {} = {}",
                                               e.batch, r.prompt_tokens, si(e.prefill_seconds_per_token, "s"),
                                               si(e.ttft_seconds, "s")))
                          : std::string()),
                 "chunked prefill (Agrawal et al. 2024, Sarathi-Serve arXiv:2403.02310); roofline (Williams et al. "
                 "2009)"});
  out.push_back({"decode_memory_seconds", e.decode_memory_seconds,
                 fmt::format("(weights {} + KV {} for {} sequences at mean context {:.0f}{}) / ({} × {:.2f}) = {}",
                             si(e.weights_bytes_per_step, "B"), si(e.kv_bytes_per_step, "B"), e.batch, w.mean_context,
                             arch.ssm ? fmt::format(", SSM state {} per sequence read and written",
                                                    si(2.0 * ssm_state_bytes(arch), "B"))
                                      : std::string(),
                             si(w.bandwidth, "B/s"), w.bw_eff, si(e.decode_memory_seconds, "s")),
                 "decode is memory-bound at small batch (Pope et al. 2022 §3; Kim et al. 2023); efficiency "
                 "calibrated on llama.cpp tg128 (PR #4766)"});
  out.push_back({"decode_compute_seconds", e.decode_compute_seconds,
                 fmt::format("{} sequences × {} / ({} × {:.2f}) = {}", e.batch, si(w.decode_flop_per_token, "FLOP"),
                             si(w.peak, "FLOP/s"), a.decode_compute_efficiency, si(e.decode_compute_seconds, "s")),
                 "2·N_active + attention per generated token (gpuplan FLOP model)"});
  out.push_back({"prefill_seconds_per_step", e.prefill_seconds_per_step,
                 fmt::format("{} sequences × {} prompt / {} output = {:.1f} prompt tokens per step × {} / ({} × {:.2f}) = {}",
                             e.batch, r.prompt_tokens, r.output_tokens, e.prefill_tokens_per_step,
                             si(w.prefill_flop_per_token, "FLOP"), si(w.peak, "FLOP/s"), w.prefill_eff,
                             si(e.prefill_seconds_per_step, "s")),
                 "steady state of continuous batching: B/O requests finish per step and their successors' prompts "
                 "are prefilled in the same steps (Sarathi-Serve)"});
  out.push_back({"tp_comm_seconds_per_step", e.tp_comm_seconds_per_step,
                 r.tp > 1 ? fmt::format("2 × {} layers × ({} latency + 2({}−1)/{} × {:.0f} tokens × h {} × 2 B / ({} × {:.2f})) = {}",
                                        arch.num_layers, si(w.profile.tp_allreduce_latency_seconds, "s"), r.tp, r.tp,
                                        static_cast<double>(e.batch) + e.prefill_tokens_per_step, arch.hidden_size,
                                        si(w.link_bytes_per_s, "B/s"), w.link_efficiency, si(e.tp_comm_seconds_per_step, "s"))
                          : std::string("tp = 1: no all-reduces"),
                 std::string("Megatron TP: 2 all-reduces per layer (Shoeybi et al. 2019 §3); ring 2(n−1)/n (Patarasuk & Yuan 2009)") +
                     (r.tp > 1 && r.tp <= c.gpus_per_node && !c.intra_node_nvlink
                          ? "; PCIe collectives: NCCL bus bandwidth of 4 / 8 PCIe GPUs (NVIDIA/nccl issue #1639)"
                          : "")});
  out.push_back({"step_seconds", e.step_seconds,
                 (w.profile.continuous_batching
                      ? fmt::format("soft roofline(memory {}, compute {} + prefill {})", si(e.decode_memory_seconds, "s"),
                                    si(e.decode_compute_seconds, "s"), si(e.prefill_seconds_per_step, "s"))
                      : fmt::format("max(memory {}, compute {}) + prefill {}", si(e.decode_memory_seconds, "s"),
                                    si(e.decode_compute_seconds, "s"), si(e.prefill_seconds_per_step, "s"))) +
                     fmt::format(" + TP {} = {}; {:.4g} tokens/s aggregate", si(e.tp_comm_seconds_per_step, "s"),
                                 si(e.step_seconds, "s"), e.decode_tokens_per_s) +
                     (e.tpot_defined ? "" : "; one output token: the steady-state step, not a time between tokens"),
                 "roofline (Williams et al. 2009) of the steady-state decode + prefill step"});
  // One output token: no time between tokens (ServingEstimate::tpot_defined).
  if (e.tpot_defined) {
    const std::int64_t others = std::max<std::int64_t>(e.batch - 1, 0);
    const double others_prefill = e.prefill_tokens_per_step_others * e.prefill_seconds_per_token;
    out.push_back({"tpot_seconds", e.tpot_seconds,
                   w.profile.continuous_batching
                       ? fmt::format("{} other slots × {} prompt / {} output = {:.1f} prompt tokens per step (its own "
                                     "prompt: in the TTFT); soft roofline(memory {}, compute {} + prefill {}) + TP {} = {}",
                                     others, r.prompt_tokens, r.output_tokens, e.prefill_tokens_per_step_others,
                                     si(e.decode_memory_seconds, "s"), si(e.decode_compute_seconds, "s"),
                                     si(others_prefill, "s"),
                                     si(std::max(0.0, e.tpot_seconds - step_roofline_seconds(
                                                                         e.decode_memory_seconds,
                                                                         e.decode_compute_seconds + others_prefill)),
                                        "s"),
                                     si(e.tpot_seconds, "s"))
                       : fmt::format("max(memory {}, compute {}) + TP {} = {}: a decode step (the wave's prompts "
                                     "were prefilled before its first token)",
                                     si(e.decode_memory_seconds, "s"), si(e.decode_compute_seconds, "s"),
                                     si(e.tp_comm_seconds_per_step, "s"), si(e.tpot_seconds, "s")),
                   w.profile.continuous_batching
                       ? "Little's law: TTFT + (O − 1) × TPOT ≈ O × step for long outputs; rate × time per request ≈ batch"
                       : "static batching: the wave's prefill, then decode steps"});
  }
  out.push_back({"requests_per_s_per_replica", e.requests_per_s_per_replica,
                 w.profile.continuous_batching
                     ? fmt::format("{} / ({} × {}) = {:.4g}", e.batch, r.output_tokens, si(e.step_seconds, "s"),
                                   e.requests_per_s_per_replica)
                     : fmt::format("{} / (TTFT {} + {} × TPOT {}) = {:.4g}", e.batch, si(e.ttft_seconds, "s"),
                                   r.output_tokens - 1, si(e.tpot_seconds, "s"), e.requests_per_s_per_replica),
                 "Little's law: concurrency / time per request"});
  return out;
}

}  // namespace gpuplan
