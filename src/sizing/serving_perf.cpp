#include "sizing/serving_perf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sizing/flops.hpp"
#include "util/error.hpp"

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

double decode_bw_efficiency(WeightQuant q, const PerfAssumptions& a) {
  const double bits = weight_quant_bits(q);
  if (bits >= 16) return a.decode_bw_efficiency_16bit;
  if (bits >= 8) return a.decode_bw_efficiency_8bit;
  return a.decode_bw_efficiency_4bit;
}

double prefill_efficiency(WeightQuant q, const PerfAssumptions& a) {
  return weight_quant_bits(q) >= 16 ? a.prefill_efficiency_16bit : a.prefill_efficiency_quantized;
}

void validate(const ServingPerfRequest& r, const ClusterSpec& c) {
  if (c.gpu == nullptr) throw_invalid("cluster.gpu", "no GPU given", "a GPU from the catalog");
  if (r.prompt_tokens < 1) throw_invalid("--prompt-tokens", fmt::format("{}", r.prompt_tokens), "an integer >= 1");
  if (r.output_tokens < 1) throw_invalid("--output-tokens", fmt::format("{}", r.output_tokens), "an integer >= 1");
  if (r.concurrency < 1) throw_invalid("--concurrency", fmt::format("{}", r.concurrency), "an integer >= 1");
  if (r.tp < 1) throw_invalid("--tp", fmt::format("{}", r.tp), "an integer >= 1");
}

struct Work {
  ServingEstimate e;
  double peak = 0;
  double bandwidth = 0;
  double bw_eff = 0;
  double prefill_eff = 0;
  double prefill_flop = 0;
  double prefill_compute_seconds = 0;
  double prefill_memory_seconds = 0;
  double kv_bytes_per_sequence_max = 0;
  double mean_context = 0;
  double expert_read_fraction = 1;
  double decode_flop_per_token = 0;
};

Work compute_work(const ModelArch& arch, const ServingPerfRequest& r, const ClusterSpec& c, double kv_capacity_bytes,
                  const PerfAssumptions& a) {
  validate(r, c);
  Work w;
  ServingEstimate& e = w.e;
  const GpuSpec& gpu = *c.gpu;
  const double tp = r.tp;
  w.peak = peak16(gpu) * tp;
  w.bandwidth = gpu.memory_bandwidth_bytes_per_s * tp;
  w.bw_eff = decode_bw_efficiency(r.quant, a);
  w.prefill_eff = prefill_efficiency(r.quant, a);
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

  // Prefill of one prompt: compute-bound, but never faster than reading the weights once.
  const double all_weights = static_cast<double>(arch.params.total()) * bytes_per_param;
  w.prefill_flop = prefill_flops(arch, r.prompt_tokens);
  w.prefill_compute_seconds = safe_div(w.prefill_flop, w.peak * w.prefill_eff);
  w.prefill_memory_seconds = safe_div(all_weights, w.bandwidth * w.bw_eff);
  e.ttft_seconds = std::max(w.prefill_compute_seconds, w.prefill_memory_seconds);
  e.prefill_tokens_per_s = safe_div(static_cast<double>(r.prompt_tokens), e.ttft_seconds);

  // Decode step at the batch. MoE: the batch touches 1 − (1 − k/E)^B of each layer's experts.
  double weight_params = static_cast<double>(arch.params.total());
  if (arch.moe && arch.moe->num_routed_experts > 0 && arch.params.experts > 0) {
    const double k_over_e =
        static_cast<double>(arch.moe->experts_per_token) / static_cast<double>(arch.moe->num_routed_experts);
    w.expert_read_fraction = 1.0 - std::pow(1.0 - std::clamp(k_over_e, 0.0, 1.0), std::max(batch, 1.0));
    weight_params -= static_cast<double>(arch.params.experts) * (1.0 - w.expert_read_fraction);
  }
  // Embedding rows are gathered, not read whole: exclude the input embedding table unless tied.
  if (!arch.tied_embeddings) weight_params -= static_cast<double>(arch.params.embeddings);
  e.weights_bytes_per_step = weight_params * bytes_per_param;
  w.mean_context = static_cast<double>(r.prompt_tokens) + static_cast<double>(r.output_tokens) / 2.0;
  const auto mean_ctx = static_cast<std::int64_t>(std::llround(w.mean_context));
  e.kv_bytes_per_step = batch * decode_kv_bytes(arch, r.kv_dtype, mean_ctx);
  e.decode_memory_seconds = safe_div(e.weights_bytes_per_step + e.kv_bytes_per_step, w.bandwidth * w.bw_eff);
  w.decode_flop_per_token = inference_flops_per_token(arch, mean_ctx).total_flop;
  e.decode_compute_seconds = safe_div(batch * w.decode_flop_per_token, w.peak * a.decode_compute_efficiency);
  e.decode_compute_bound = e.decode_compute_seconds > e.decode_memory_seconds;
  e.tpot_seconds = std::max(e.decode_memory_seconds, e.decode_compute_seconds);
  e.decode_tokens_per_s = e.batch > 0 ? safe_div(batch, e.tpot_seconds) : 0.0;
  const double request_seconds = e.ttft_seconds + static_cast<double>(r.output_tokens) * e.tpot_seconds;
  e.requests_per_s_per_replica = e.batch > 0 ? safe_div(batch, request_seconds) : 0.0;
  return w;
}

std::string si(double v, const char* unit) {
  if (!std::isfinite(v)) return fmt::format("inf {}", unit);
  return fmt::format("{:.4g} {}", v, unit);
}

}  // namespace

double decode_kv_bytes(const ModelArch& arch, KvDtype kv_dtype, std::int64_t context_tokens) {
  if (arch.family != ModelFamily::decoder || arch.ssm.has_value() || arch.num_layers <= 0) return 0;
  const double bytes = kv_dtype_bytes(kv_dtype);
  double per_token_per_layer = 0;
  if (arch.mla) {
    per_token_per_layer = static_cast<double>(arch.mla->kv_lora_rank + arch.mla->qk_rope_head_dim) * bytes;
  } else {
    const double kv_heads = static_cast<double>(arch.num_kv_heads > 0 ? arch.num_kv_heads : arch.num_attention_heads);
    double d = static_cast<double>(arch.head_dim);
    if (d <= 0 && arch.num_attention_heads > 0)
      d = static_cast<double>(arch.hidden_size) / static_cast<double>(arch.num_attention_heads);
    per_token_per_layer = 2.0 * kv_heads * d * bytes;
  }
  const std::int64_t ctx = std::max<std::int64_t>(context_tokens, 0);
  std::int64_t windowed = 0;
  if (arch.sliding_window)
    windowed = arch.layer_uses_sliding_window.empty() ? arch.num_layers : arch.num_sliding_window_layers();
  const std::int64_t full = arch.num_layers - windowed;
  const std::int64_t win_ctx = arch.sliding_window ? std::min(ctx, *arch.sliding_window) : ctx;
  return per_token_per_layer * (static_cast<double>(full) * static_cast<double>(ctx) +
                                static_cast<double>(windowed) * static_cast<double>(win_ctx));
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
                 "KV cache 2·L·K·d·bytes per token (Pope et al. 2022 §2); MLA (DeepSeek-V2 §2.1.4)"});
  out.push_back({"ttft_seconds", e.ttft_seconds,
                 fmt::format("max(compute {} / ({} × {:.2f}) = {}, weights read once {}) = {}", si(w.prefill_flop, "FLOP"),
                             si(w.peak, "FLOP/s"), w.prefill_eff, si(w.prefill_compute_seconds, "s"),
                             si(w.prefill_memory_seconds, "s"), si(e.ttft_seconds, "s")),
                 "prefill is compute-bound (roofline, Williams et al. 2009); efficiency calibrated on llama.cpp pp512 "
                 "(ggml-org/llama.cpp PR #4766)"});
  out.push_back({"decode_memory_seconds", e.decode_memory_seconds,
                 fmt::format("(weights {} + KV {} for {} sequences at mean context {:.0f}) / ({} × {:.2f}) = {}",
                             si(e.weights_bytes_per_step, "B"), si(e.kv_bytes_per_step, "B"), e.batch, w.mean_context,
                             si(w.bandwidth, "B/s"), w.bw_eff, si(e.decode_memory_seconds, "s")),
                 "decode is memory-bound at small batch (Pope et al. 2022 §3; Kim et al. 2023); efficiency "
                 "calibrated on llama.cpp tg128 (PR #4766)"});
  out.push_back({"decode_compute_seconds", e.decode_compute_seconds,
                 fmt::format("{} sequences × {} / ({} × {:.2f}) = {}", e.batch, si(w.decode_flop_per_token, "FLOP"),
                             si(w.peak, "FLOP/s"), a.decode_compute_efficiency, si(e.decode_compute_seconds, "s")),
                 "2·N_active + attention per generated token (flops.hpp)"});
  out.push_back({"tpot_seconds", e.tpot_seconds,
                 fmt::format("max(memory {}, compute {}) = {} ({}-bound); {:.4g} tokens/s aggregate",
                             si(e.decode_memory_seconds, "s"), si(e.decode_compute_seconds, "s"),
                             si(e.tpot_seconds, "s"), e.decode_compute_bound ? "compute" : "memory",
                             e.decode_tokens_per_s),
                 "roofline (Williams et al. 2009)"});
  out.push_back({"requests_per_s_per_replica", e.requests_per_s_per_replica,
                 fmt::format("{} / ({} + {} × {}) = {:.4g}", e.batch, si(e.ttft_seconds, "s"), r.output_tokens,
                             si(e.tpot_seconds, "s"), e.requests_per_s_per_replica),
                 "Little's law: concurrency / time per request"});
  return out;
}

}  // namespace gpuplan
