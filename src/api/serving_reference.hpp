#pragma once
/// Application layer (api): the serving comparison's reference workload (the /generative-ai
/// page's cost per million output tokens). One model served on ONE GPU of each kind, so cards
/// compare on what a practitioner would rent them for:
///   Llama 3.1 8B, BF16 weights and KV cache, vLLM, 1,000 prompt + 250 output tokens per request
///   (the plan command's serving defaults, sizing/workload_defaults.hpp), as many requests at
///   once as the KV cache holds, at most 256 (vLLM's default --max-num-seqs).
/// A GPU "fits" when, besides the weights, its KV cache holds at least 16 such requests at once
/// (a useful continuous batch); a card that only loads the weights, or holds a handful of
/// sequences, is not a serving card for this model and must not lead the table.
/// Throughput: sizing/serving_perf.hpp estimate_serving() (roofline, continuous batching), with
/// the KV capacity computed as the planner does (GPU capacity × (1 − fit margin) − weights and
/// fixed terms, serving_memory()).
/// Cost: usd_per_million_output_tokens = usd_per_gpu_hour / (output tokens/s × 3600) × 1e6.
#include <cstdint>
#include <optional>
#include <string>

#include "hardware/gpu_spec.hpp"
#include "model/model_arch.hpp"

namespace gpuplan::api {

struct ServingReference {
  std::string model = "llama-3.1-8b";
  std::int64_t prompt_tokens = 1000;
  std::int64_t output_tokens = 250;
  std::int64_t max_batch = 256;        ///< vLLM --max-num-seqs default
  std::int64_t min_useful_batch = 16;  ///< fewer requests at once: the card does not "fit"
};

struct GpuServing {
  bool fits = false;                 ///< max_sequences >= min_useful_batch
  std::int64_t max_sequences = 0;    ///< requests of prompt+output tokens the KV cache holds
  std::int64_t batch = 0;            ///< requests decoded together: min(max_sequences, max_batch)
  double output_tokens_per_s = 0;    ///< at that batch, one GPU
};

/// The reference workload on one GPU of `gpu`; nullopt when the GPU lacks the published figures
/// (memory bandwidth, BF16 peak) the estimate needs. `arch` = the reference model, resolved.
std::optional<GpuServing> serve_reference_on(const ModelArch& arch, const GpuSpec& gpu, const ServingReference& ref);

/// usd_per_gpu_hour / (output_tokens_per_s × 3600) × 1e6; nullopt when tokens/s is not positive.
std::optional<double> usd_per_million_output_tokens(double usd_per_gpu_hour, double output_tokens_per_s);

}  // namespace gpuplan::api
