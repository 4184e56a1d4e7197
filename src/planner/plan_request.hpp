#pragma once
/// Planner layer: the one request struct of `gpuplan plan` (STYLE.md §6). The CLI and the server
/// fill it; validate() checks it; plan() (planner.hpp) answers it.
///
/// Units: tokens, seconds, bytes (GB = 1e9), USD, requests/s. Every field states its default.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "model/model_source.hpp"
#include "sizing/memory.hpp"

namespace gpuplan {

/// What to plan. Training tasks reuse sizing's Task; serving splits into a service for a
/// duration and a batch generation job; image generation uses a diffusion model.
enum class PlanWorkload {
  training,          ///< pretrain / full / lora / qlora for a token budget
  serving,           ///< serve at --rps or --concurrency for --hours
  batch_generation,  ///< generate --requests completions as fast/cheap as possible
  image_generation,  ///< diffusion: --images at --width × --height, --steps
};
std::string_view plan_workload_name(PlanWorkload w) noexcept;  ///< "training", "serving", ...

/// Ranking of the printed plans.
enum class PlanSort { cost, time };

struct PlanRequest {
  // ---- model ----
  ModelSource model;  ///< where the architecture comes from (resolved at the edge: resolve_model)
  /// sizing Task: pretrain, full, lora, qlora, or serve (serving / batch / images). Default lora.
  Task task = Task::lora;
  PlanWorkload workload = PlanWorkload::training;

  // ---- training (workload == training) ----
  std::optional<double> tokens;          ///< --tokens: tokens to train on in total (e.g. 2e12)
  std::optional<double> dataset_tokens;  ///< --dataset-tokens: tokens in the dataset (× epochs)
  double epochs = 1;                     ///< --epochs, > 0, used with dataset_tokens
  std::int64_t seq_len = 4096;           ///< --seq: tokens per sequence
  /// --global-batch: sequences per optimizer step; 0 = default: 4 Mi tokens for pretrain
  /// (Llama 2/3 used 4M tokens per step), 1 Mi tokens for full fine-tunes, 128 Ki for LoRA/QLoRA,
  /// rounded to a power of two of sequences (≥ 1).
  std::int64_t global_batch_seqs = 0;
  TrainPrecision precision = TrainPrecision::bf16_mixed;  ///< --precision
  Optimizer optimizer = Optimizer::adamw;                 ///< --optimizer
  int lora_rank = 16;                                     ///< --lora-rank

  // ---- serving / batch generation ----
  WeightQuant quant = WeightQuant::bf16;  ///< --quant
  KvDtype kv_dtype = KvDtype::bf16;       ///< --kv-dtype
  std::int64_t prompt_tokens = 1000;      ///< --prompt-tokens per request
  std::int64_t output_tokens = 250;       ///< --output-tokens per request
  std::optional<double> requests_per_s;   ///< --rps target load (serving)
  std::optional<std::int64_t> concurrency;  ///< --concurrency: users/sequences served at once (serving)
  double hours = 720;                     ///< --hours the service runs (serving), default 30 days
  std::optional<double> requests;         ///< --requests in a batch generation job

  // ---- image generation ----
  std::int64_t image_width = 1024;   ///< --width, pixels
  std::int64_t image_height = 1024;  ///< --height, pixels
  std::int64_t denoising_steps = 30; ///< --steps
  double images = 1000;              ///< --images to generate

  // ---- search ----
  std::string filter;             ///< FILTER in the offers language (applied by the store at the edge)
  int max_nodes = 64;             ///< --max-nodes: most instances per plan (multi-node training needs a known network)
  double margin = kDefaultFitMargin;  ///< --margin: fits when per-GPU bytes ≤ (1 − margin) × capacity
  bool allow_spot = true;         ///< --no-spot clears it: plan on-demand/reserved only

  // ---- cost ----
  std::optional<double> preemptions_per_day;  ///< --preemptions-per-day (spot); default: provider's
  std::optional<double> egress_gb;            ///< --egress-gb downloaded at the end; default: final weights
  /// Checkpoint write rate per instance, bytes/s (assumption: 1 GB/s, a network-disk write rate;
  /// e.g. AWS gp3 up to 1 GB/s, https://aws.amazon.com/ebs/general-purpose/). Used for spot.
  double checkpoint_write_bytes_per_s = 1e9;
  /// Time to get going again after a preemption, s (assumption: 10 minutes to get a new
  /// instance, start the container and load the checkpoint).
  double restart_seconds = 600;
  /// Today's date "YYYY-MM-DD" (injected clock, STYLE.md §4); empty = staleness unknown.
  std::string today;
  double stale_after_days = 30;   ///< a price observed longer ago than this is stale

  // ---- output ----
  PlanSort sort = PlanSort::cost;  ///< --sort
  bool pareto_only = false;        ///< --pareto
  std::size_t limit = 10;          ///< --limit, ≥ 1

  /// Throws Error{invalid_input} with where = the flag and what is expected: model source
  /// (ModelSource::validate), a training task without --tokens or --dataset-tokens, both given,
  /// non-positive numbers, serving without --rps or --concurrency (or with both), batch without
  /// --requests, margin ∉ [0, 1), max_nodes ∉ [1, 1024], limit = 0, today not YYYY-MM-DD.
  void validate() const;

  /// Tokens to train on: tokens, or dataset_tokens × epochs. Only for training (after validate).
  double training_tokens() const;
  /// The global batch in sequences (default rule above).
  std::int64_t effective_global_batch_seqs() const;
};

}  // namespace gpuplan
