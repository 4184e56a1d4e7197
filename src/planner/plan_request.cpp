#include "planner/plan_request.hpp"

#include <fmt/core.h>

#include <chrono>

#include <cmath>
#include <tuple>
#include <limits>
#include <exception>
#include <string>

#include "util/calendar.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"
#include "util/error_code.hpp"

namespace gpuplan {

std::string_view plan_workload_name(PlanWorkload w) noexcept {
  switch (w) {
    case PlanWorkload::training: return "training";
    case PlanWorkload::serving: return "serving";
    case PlanWorkload::batch_generation: return "batch_generation";
    case PlanWorkload::image_generation: return "image_generation";
  }
  return "training";
}

std::string_view plan_sort_name(PlanSort s) noexcept {
  switch (s) {
    case PlanSort::recommended: return "recommended";
    case PlanSort::cost: return "cost";
    case PlanSort::time: return "time";
  }
  return "recommended";
}

double parse_duration_seconds(std::string_view text, const std::string& flag, double bare_unit_seconds) {
  const std::string expected = "a positive duration such as 72h, 30d, 2w, 90m or 3600s";
  std::string t(text);
  if (t.empty()) throw_invalid_coded(flag, "not_duration", {{"value", ""}}, "empty duration", expected);
  double unit = bare_unit_seconds;  // a bare number
  const char last = t.back();
  if (last == 's' || last == 'm' || last == 'h' || last == 'd' || last == 'w') {
    unit = last == 's' ? 1.0 : last == 'm' ? 60.0 : last == 'h' ? 3600.0 : last == 'd' ? 86400.0 : 604800.0;
    t.pop_back();
  }
  // Decimal only (issue 11, util/text_check.hpp parse_decimal): stod also read hex ("0x10h" was
  // 16 hours), hex floats, "infinity" and leading spaces.
  const std::optional<double> parsed = parse_decimal(t);
  if (!parsed)
    throw_invalid_coded(flag, "not_duration", {{"value", std::string(text)}}, fmt::format("'{}' is not a duration", text), expected);
  const double v = *parsed;
  if (!(v > 0)) throw_invalid_coded(flag, "not_positive", {{"value", std::string(text)}}, fmt::format("'{}' is not positive", text), expected);
  return v * unit;
}

double PlanRequest::effective_ttft_seconds() const {
  if (ttft_seconds) return *ttft_seconds;
  return tpot_seconds ? std::numeric_limits<double>::infinity() : kDefaultTtftSeconds;
}
double PlanRequest::effective_tpot_seconds() const {
  if (tpot_seconds) return *tpot_seconds;
  // One output token: nothing follows the first token, so no time per output token to bound
  // (trial54 #10: the default 200 ms capped the batch of a one-token service by its step time).
  if (output_tokens == 1) return std::numeric_limits<double>::infinity();
  return ttft_seconds ? std::numeric_limits<double>::infinity() : kDefaultTpotSeconds;
}

PlanSort PlanRequest::effective_sort() const {
  if (sort != PlanSort::recommended) return sort;
  if (deadline_seconds) return PlanSort::cost;
  if (budget_usd) return PlanSort::time;
  return PlanSort::recommended;
}

namespace {
void require_positive(double v, const char* flag) {
  if (!(v > 0) || !std::isfinite(v))
    throw_invalid_coded(flag, "not_positive", {{"value", fmt::format("{}", v)}}, fmt::format("{} is not a positive number", v),
                        "a number > 0");
}
bool is_iso_date(const std::string& s) { return is_calendar_date(s); }  // 2026-02-30 is not one (issue 11)
/// Upper bounds that catch typos (1e30 tokens) rather than limit real jobs: each is orders of
/// magnitude above the largest published runs (Llama 3: 15.6e12 tokens, Meta 2024).
constexpr double kMaxTrainingTokens = 1e16;
constexpr double kMaxRequests = 1e13;
constexpr double kMaxImages = 1e12;
/// The largest image side planned, pixels: 8× the 1024-px native resolution of SDXL and FLUX.1
/// (their model cards), room for high-resolution outputs; beyond it no served diffusion model
/// generates in one pass, and the time and memory models (latent tokens ∝ pixels) are not meant for it.
constexpr std::int64_t kMaxImageSidePixels = 8192;
/// The most denoising steps planned per image: the 1000 noise levels a diffusion model is trained
/// on (DDPM, Ho et al. 2020 §4: T = 1000; diffusers' schedulers default num_train_timesteps = 1000).
/// More sampling steps than trained timesteps only repeat timesteps: diffusers' DDIMScheduler and
/// DDPMScheduler.set_timesteps refuse them ("`num_inference_steps` ... cannot be larger than
/// `self.config.train_timesteps`"). Typical runs take 20-50 (SDXL), 1-4 (FLUX.1-schnell).
constexpr std::int64_t kMaxDenoisingSteps = 1000;
constexpr double kMaxHours = 87600;  // ten years
constexpr double kMaxRequestsPerS = 1e7;
constexpr std::int64_t kMaxConcurrency = 100000000;
constexpr std::int64_t kMaxRequestTokens = 100000000;  ///< prompt or output tokens: the sizing's largest context

/// A count or bound as an error shows it: a whole number with every digit ("9007199254740992",
/// "10000000000000"), as the integer fields' errors show theirs; "{:g}" showed "9.0072e+15" and
/// "1e+13" (issue 11). Other values in fmt's shortest form ("0.5").
std::string shown(double v) {
  if (std::isfinite(v) && std::floor(v) == v && std::abs(v) < 1e18) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

void require_at_most(double v, double max, const char* flag) {
  if (v > max)
    throw_invalid_coded(flag, "too_large", {{"value", shown(v)}, {"max", shown(max)}},
                        fmt::format("{} is implausibly large", shown(v)), fmt::format("at most {}", shown(max)));
}
}  // namespace

void PlanRequest::validate() const {
  model.validate();
  switch (workload) {
    case PlanWorkload::training:
      if (task == Task::serve)
        throw_invalid_coded("--task", "serve_not_training", {}, "serve is not a training task", "pretrain, full, lora or qlora");
      if (tokens && dataset_tokens)
        throw_invalid_coded("--tokens", "both_given", {{"a_field", "tokens"}, {"b_field", "dataset_tokens"}},
                            "both --tokens and --dataset-tokens given", "one of them");
      if (!tokens && !dataset_tokens) {
        throw_invalid_coded("--tokens", "tokens_missing", {}, "a training plan needs a token budget",
                            "--tokens N or --dataset-tokens N [--epochs E]");
      }
      // Serving fields on a training task were ignored without a word (a trial: `--task lora
      // --tpot-ms 50` planned as if it had not been given).
      for (const auto& [given, flag, name] : {std::tuple{requests_per_s.has_value(), "--rps", "rps"},
                                             std::tuple{concurrency.has_value(), "--concurrency", "concurrency"},
                                             std::tuple{ttft_seconds.has_value(), "--ttft-ms", "ttft_ms"},
                                             std::tuple{tpot_seconds.has_value(), "--tpot-ms", "tpot_ms"}})
        if (given)
          throw_invalid_coded(flag, "serving_only_field", {{"a_field", name}},
                              fmt::format("{} applies to serving (--task serve), not to a training task", flag),
                              "no serving field with pretrain, full, lora or qlora");
      if (tokens) require_positive(*tokens, "--tokens");
      if (dataset_tokens) require_positive(*dataset_tokens, "--dataset-tokens");
      // A token budget is a count: 0.5 or 1e-3 tokens is a typo, never a job (a trial planned a
      // 12-minute run for --tokens 0.5).
      for (const auto& [v, flag] : {std::pair{tokens, "--tokens"}, std::pair{dataset_tokens, "--dataset-tokens"}})
        if (v && *v < 1)
          throw_invalid_coded(flag, "number_out_of_range", {{"value", fmt::format("{}", *v)}, {"range", "[1, 1e16]"}},
                              fmt::format("{} tokens is less than one token", *v), "a token count ≥ 1 (5e8, 500M)");
      require_positive(epochs, "--epochs");
      // Too many passes over a dataset of a plausible size: --epochs is at fault, and its range
      // follows from the dataset (a trial's --epochs 1e9 blamed --dataset-tokens, which was 1e8).
      if (!tokens && *dataset_tokens <= kMaxTrainingTokens && training_tokens() > kMaxTrainingTokens) {
        const double max_epochs = kMaxTrainingTokens / *dataset_tokens;
        throw_invalid_coded("--epochs", "too_large", {{"value", fmt::format("{:g}", epochs)}, {"max", fmt::format("{:g}", max_epochs)}},
                            fmt::format("{:g} epochs × {} dataset tokens = {} tokens is implausibly large", epochs,
                                        shown(*dataset_tokens), shown(training_tokens())),
                            fmt::format("at most {:g} epochs of {} tokens ({} tokens in all)", max_epochs, shown(*dataset_tokens),
                                        shown(kMaxTrainingTokens)));
      }
      require_at_most(training_tokens(), kMaxTrainingTokens, tokens ? "--tokens" : "--dataset-tokens");
      if (seq_len < 1) throw_invalid_coded("--seq", "not_positive", {{"value", fmt::format("{}", seq_len)}}, fmt::format("{} is not a positive integer", seq_len), "an integer ≥ 1");
      if (global_batch_seqs < 0) throw_invalid_coded("--global-batch", "negative", {{"value", fmt::format("{}", global_batch_seqs)}}, fmt::format("{} is negative", global_batch_seqs), "an integer ≥ 1 (0 = default)");
      // One step larger than the whole budget is not a training run (issue 11).
      if (global_batch_seqs > 0 &&
          static_cast<double>(global_batch_seqs) * static_cast<double>(seq_len) > training_tokens())
        throw_invalid_coded("--global-batch", "global_batch_exceeds_tokens",
                            {{"sequences", fmt::format("{}", global_batch_seqs)},
                             {"seq", fmt::format("{}", seq_len)},
                             {"step_tokens", shown(static_cast<double>(global_batch_seqs) * static_cast<double>(seq_len))},
                             {"tokens", shown(training_tokens())},
                             {"max", fmt::format("{}", static_cast<long long>(training_tokens() / static_cast<double>(seq_len)))}},
                            fmt::format("{} sequences × {} tokens = {} tokens per step exceeds the token budget {}",
                                        global_batch_seqs, seq_len,
                                        shown(static_cast<double>(global_batch_seqs) * static_cast<double>(seq_len)),
                                        shown(training_tokens())),
                            "a global batch of at most --tokens / --seq sequences");
      // The default global batch shrinks to the budget (effective_global_batch_seqs), but not below
      // one sequence: a budget shorter than one sequence is not a training run.
      // (A --seq beyond its own range, kMaxTrainingSeqLenTokens, is refused at --seq by the sizing's check.)
      if (global_batch_seqs == 0 && seq_len <= kMaxTrainingSeqLenTokens && training_tokens() < static_cast<double>(seq_len))
        throw_invalid_coded(tokens ? "--tokens" : "--dataset-tokens", "tokens_below_one_sequence",
                            {{"tokens", shown(training_tokens())}, {"seq", fmt::format("{}", seq_len)}},
                            fmt::format("the token budget {} is smaller than one sequence of {} tokens (--seq)",
                                        shown(training_tokens()), seq_len),
                            "a budget of at least one sequence, or a shorter --seq");
      if (lora_rank < 1) throw_invalid_coded("--lora-rank", "not_positive", {{"value", fmt::format("{}", lora_rank)}}, fmt::format("{} is not a positive integer", lora_rank), "an integer ≥ 1");
      break;
    case PlanWorkload::serving:
      if (requests_per_s && concurrency)
        throw_invalid_coded("--rps", "both_given", {{"a_field", "rps"}, {"b_field", "concurrency"}},
                            "both --rps and --concurrency given", "one of them");
      if (!requests_per_s && !concurrency)
        throw_invalid_coded("--rps", "load_missing", {}, "a serving plan needs a load", "--rps R or --concurrency N");
      if (requests_per_s) require_positive(*requests_per_s, "--rps");
      if (ttft_seconds) require_positive(*ttft_seconds, "--ttft-ms");
      if (tpot_seconds) require_positive(*tpot_seconds, "--tpot-ms");
      if (concurrency && *concurrency < 1) throw_invalid_coded("--concurrency", "not_positive", {{"value", fmt::format("{}", *concurrency)}}, fmt::format("{} is not a positive integer", *concurrency), "an integer ≥ 1");
      require_positive(hours, "--hours");
      require_at_most(hours, kMaxHours, "--hours");
      if (requests_per_s) require_at_most(*requests_per_s, kMaxRequestsPerS, "--rps");
      // Compared as integers: through a double, 9007199254740993 was echoed as "9.0072e+15" (trial11).
      if (concurrency && *concurrency > kMaxConcurrency)
        throw_invalid_coded("--concurrency", "too_large", {{"value", fmt::format("{}", *concurrency)}, {"max", fmt::format("{}", kMaxConcurrency)}},
                            fmt::format("{} is implausibly large", *concurrency), fmt::format("at most {}", kMaxConcurrency));
      break;
    case PlanWorkload::batch_generation:
      if (!requests)
        throw_invalid_coded("--requests", "requests_missing", {}, "a batch generation plan needs a request count", "--requests N");
      require_positive(*requests, "--requests");
      require_at_most(*requests, kMaxRequests, "--requests");
      // Requests are whole (trial47: 1.5 was planned, 2.5 as "3 requests per replica").
      if (*requests != std::floor(*requests))
        throw_invalid_coded("--requests", "not_integer", {{"value", fmt::format("{}", *requests)}},
                            fmt::format("{} is not a whole number of requests", *requests), "a whole number ≥ 1");
      break;
    case PlanWorkload::image_generation:
      if (image_width < 64 || image_height < 64) throw_invalid_coded(image_width < 64 ? "--width" : "--height", "image_side_too_small", {{"value", fmt::format("{}", std::min(image_width, image_height))}, {"min", "64"}}, fmt::format("{} pixels is below the smallest side, 64 pixels", std::min(image_width, image_height)), "≥ 64 pixels");
      // A side above kMaxImageSidePixels: a trial's --width 1e9 was planned as a 1.2-billion-year job.
      if (image_width > kMaxImageSidePixels || image_height > kMaxImageSidePixels) {
        const bool w = image_width > kMaxImageSidePixels;
        throw_invalid_coded(w ? "--width" : "--height", "integer_out_of_range",
                            {{"value", fmt::format("{}", w ? image_width : image_height)}, {"min", "64"}, {"max", fmt::format("{}", kMaxImageSidePixels)}},
                            fmt::format("{} pixels is out of range", w ? image_width : image_height), fmt::format("an integer in [64, {}] pixels", kMaxImageSidePixels));
      }
      if (denoising_steps < 1) throw_invalid_coded("--steps", "not_positive", {{"value", fmt::format("{}", denoising_steps)}}, fmt::format("{} is not a positive integer", denoising_steps), "an integer ≥ 1");
      if (denoising_steps > kMaxDenoisingSteps)  // a trial's --steps 9007199254740993 was planned
        throw_invalid_coded("--steps", "integer_out_of_range",
                            {{"value", fmt::format("{}", denoising_steps)}, {"min", "1"}, {"max", fmt::format("{}", kMaxDenoisingSteps)}},
                            fmt::format("{} is out of range", denoising_steps),
                            fmt::format("an integer in [1, {}] (the 1000 noise levels a diffusion model is trained on)", kMaxDenoisingSteps));
      if (std::isfinite(images) && images != std::floor(images))  // a trial's --images 0.5 was planned
        throw_invalid_coded("--images", "not_integer", {{"value", fmt::format("{}", images)}}, fmt::format("{} is not a whole number of images", images), "a whole number ≥ 1");
      require_positive(images, "--images");
      require_at_most(images, kMaxImages, "--images");
      break;
  }
  if (workload == PlanWorkload::serving || workload == PlanWorkload::batch_generation) {
    if (prompt_tokens < 1) throw_invalid_coded("--prompt-tokens", "not_positive", {{"value", fmt::format("{}", prompt_tokens)}}, fmt::format("{} is not a positive integer", prompt_tokens), "an integer ≥ 1");
    if (output_tokens < 1) throw_invalid_coded("--output-tokens", "not_positive", {{"value", fmt::format("{}", output_tokens)}}, fmt::format("{} is not a positive integer", output_tokens), "an integer ≥ 1");
    // A TPOT target on one-token replies bounds nothing a user waits for (trial54 #10).
    if (tpot_seconds && output_tokens == 1)
      throw_invalid_coded("--tpot-ms", "tpot_needs_two_output_tokens", {},
                          "--output-tokens 1 has no time between output tokens to bound",
                          "--ttft-ms for one-token replies, or --output-tokens ≥ 2");
    // Each within the sizing's context range (sizing/memory.cpp, [1, 1e8] tokens): the sum was
    // refused at --context, a flag plan does not have, as "context length 9007199254741993" (trial11).
    for (const auto& [v, flag] : {std::pair{prompt_tokens, "--prompt-tokens"}, std::pair{output_tokens, "--output-tokens"}})
      if (v > kMaxRequestTokens)
        throw_invalid_coded(flag, "integer_out_of_range", {{"value", fmt::format("{}", v)}, {"min", "1"}, {"max", fmt::format("{}", kMaxRequestTokens)}},
                            fmt::format("{} is out of range", v), fmt::format("an integer in [1, {}]", kMaxRequestTokens));
    // Their sum is the sequence (the KV cache's context): within the same range, refused at the
    // prompt (trial46: 1e8 + 1 was refused at --context, a flag plan does not have).
    if (prompt_tokens + output_tokens > kMaxRequestTokens) {
      const auto max_prompt = kMaxRequestTokens - output_tokens;
      // No room left for any prompt: the output is what is too long (trial48: --output-tokens 1e8
      // was refused at --prompt-tokens, "an integer in [1, 0]").
      if (max_prompt < 1)
        throw_invalid_coded("--output-tokens", "integer_out_of_range",
                            {{"value", fmt::format("{}", output_tokens)}, {"min", "1"}, {"max", fmt::format("{}", kMaxRequestTokens - 1)}},
                            fmt::format("{} is out of range: a request's prompt (at least 1 token) + output tokens are at most {}",
                                        output_tokens, kMaxRequestTokens),
                            fmt::format("an integer in [1, {}]", kMaxRequestTokens - 1));
      throw_invalid_coded("--prompt-tokens", "integer_out_of_range",
                          {{"value", fmt::format("{}", prompt_tokens)}, {"min", "1"}, {"max", fmt::format("{}", max_prompt)}},
                          fmt::format("{} is out of range: a request's prompt + output tokens ({} + {}) are at most {}",
                                      prompt_tokens, prompt_tokens, output_tokens, kMaxRequestTokens),
                          fmt::format("an integer in [1, {}] with --output-tokens {}", max_prompt, output_tokens));
    }
  }
  if (!(margin >= 0 && margin < 1)) throw_invalid_coded("--margin", "number_out_of_range", {{"value", fmt::format("{}", margin)}, {"range", "[0, 1)"}}, fmt::format("{} is outside [0, 1)", margin), "a fraction in [0, 1)");
  if (max_nodes < 1 || max_nodes > 1024) throw_invalid_coded("--max-nodes", "integer_out_of_range", {{"value", fmt::format("{}", max_nodes)}, {"min", "1"}, {"max", "1024"}}, fmt::format("{} is out of range", max_nodes), "an integer in [1, 1024]");
  if (max_gpus && (*max_gpus < 1 || *max_gpus > 1048576))
    throw_invalid_coded("--max-gpus", "integer_out_of_range", {{"value", fmt::format("{}", *max_gpus)}, {"min", "1"}, {"max", "1048576"}},
                        fmt::format("{} is out of range", *max_gpus), "an integer in [1, 1048576]");
  if (max_gpus && gpus_total && *gpus_total > *max_gpus)
    throw_invalid_coded("--gpus", "integer_out_of_range",
                        {{"value", fmt::format("{}", *gpus_total)}, {"min", "1"}, {"max", fmt::format("{}", *max_gpus)}},
                        fmt::format("{} GPUs exceed --max-gpus {}", *gpus_total, *max_gpus),
                        fmt::format("at most --max-gpus ({}) GPUs, or a larger --max-gpus", *max_gpus));
  if (limit < 1) throw_invalid_coded("--limit", "not_positive", {{"value", fmt::format("{}", limit)}}, fmt::format("{} is not a positive integer", limit), "an integer ≥ 1");
  // 0 is a measured rate ("this spot pool did not preempt"), as the import accepts for an offer:
  // spot with no loss. An instance preempted more than once a minute runs nothing (the import's
  // bound, too).
  if (preemptions_per_day && !(*preemptions_per_day >= 0 && *preemptions_per_day <= 1440)) {
    throw_invalid_coded("--preemptions-per-day", "number_out_of_range",
                        {{"value", fmt::format("{}", *preemptions_per_day)}, {"range", "[0, 1440]"}},
                        fmt::format("{} is out of range", *preemptions_per_day),
                        "a rate per instance-day in [0, 1440] (at most one a minute; 0: never preempted)");
  }
  if (egress_gb && !(*egress_gb >= 0)) throw_invalid_coded("--egress-gb", "negative", {{"value", fmt::format("{}", *egress_gb)}}, fmt::format("{} is negative", *egress_gb), "a number ≥ 0");
  // 1e9 GB (an exabyte) is far beyond any download after a run; a trial's 1e300 was accepted.
  if (egress_gb) require_at_most(*egress_gb, 1e9, "--egress-gb");
  require_positive(checkpoint_write_bytes_per_s, "--checkpoint-write-gbps");
  if (!(restart_seconds >= 0)) throw_invalid_coded("--restart-seconds", "negative", {{"value", fmt::format("{}", restart_seconds)}}, fmt::format("{} is negative", restart_seconds), "a number ≥ 0");
  // A week: beyond any restart or cluster start-up (trial48: --startup-minutes 1e12 planned 694
  // million days without a word, --restart-seconds 1e12 ended in a wrong no-plan reason).
  require_at_most(restart_seconds, 7 * 86400.0, "--restart-seconds");
  if (!(startup_seconds >= 0) || !std::isfinite(startup_seconds)) {
    throw_invalid_coded("--startup-minutes", "negative", {{"value", fmt::format("{}", startup_seconds / 60.0)}},
                        fmt::format("{} minutes is not a duration (negative or not finite)", startup_seconds / 60.0), "a number of minutes ≥ 0");
  }
  require_at_most(startup_seconds / 60.0, 7 * 1440.0, "--startup-minutes");
  if (deadline_seconds) require_positive(*deadline_seconds, "--deadline");
  // Ten years, as --hours (trial56 #10: --deadline 1e30d was taken as 8.64e34 s).
  if (deadline_seconds && *deadline_seconds > kMaxHours * 3600.0)
    throw_invalid_coded("--deadline", "deadline_too_large",
                        {{"days", fmt::format("{:.6g}", *deadline_seconds / 86400.0)}, {"max_days", "3650"}},
                        fmt::format("{:.6g} days is implausibly long", *deadline_seconds / 86400.0),
                        "at most 3650 days (ten years)");
  if (budget_usd) require_positive(*budget_usd, "--budget");
  if (budget_usd) require_at_most(*budget_usd, kMaxBudgetUsd, "--budget");
  if (gpus_total && *gpus_total < 1) throw_invalid_coded("--gpus", "not_positive", {{"value", fmt::format("{}", *gpus_total)}}, fmt::format("{} is not a positive integer", *gpus_total), "an integer ≥ 1");
  if (gpus_total && *gpus_total > kMaxGpusTotal) throw_invalid_coded("--gpus", "too_large", {{"value", fmt::format("{}", *gpus_total)}, {"max", fmt::format("{}", kMaxGpusTotal)}}, fmt::format("{} GPUs is more than any cluster the planner sizes", *gpus_total), fmt::format("at most {}", kMaxGpusTotal));
  if (nodes_exact && (*nodes_exact < 1 || *nodes_exact > kMaxNodesExact)) {
    throw_invalid_coded("--nodes", "integer_out_of_range", {{"value", fmt::format("{}", *nodes_exact)}, {"min", "1"}, {"max", fmt::format("{}", kMaxNodesExact)}}, fmt::format("{} is out of range", *nodes_exact), fmt::format("an integer in [1, {}]", kMaxNodesExact));
  }
  if (nodes_exact && gpus_total && *gpus_total % *nodes_exact != 0) {
    throw_invalid_coded("--gpus", "gpus_not_split_over_nodes",
                        {{"gpus", fmt::format("{}", *gpus_total)}, {"nodes", fmt::format("{}", *nodes_exact)}},
                        fmt::format("{} GPUs do not split evenly over {} nodes", *gpus_total, *nodes_exact),
                        "--gpus a multiple of --nodes");
  }
  auto pin = [](const std::optional<int>& v, const char* flag, int lo, int hi) {
    if (v && (*v < lo || *v > hi))
      throw_invalid_coded(flag, "integer_out_of_range",
                          {{"value", fmt::format("{}", *v)}, {"min", fmt::format("{}", lo)}, {"max", fmt::format("{}", hi)}},
                          fmt::format("{} is out of range", *v), fmt::format("an integer in [{}, {}]", lo, hi));
  };
  pin(pins.tp, "--tp", 1, kMaxParallelDegree);
  pin(pins.pp, "--pp", 1, kMaxParallelDegree);
  pin(pins.dp, "--dp", 1, kMaxDataParallel);
  pin(pins.ep, "--ep", 1, kMaxParallelDegree);
  pin(pins.cp, "--cp", 1, 1);  // context parallelism is not modelled: only 1 is accepted
  pin(pins.zero_stage, "--zero", 0, 3);
  pin(pins.micro_batch, "--micro-batch", 1, kMaxPinnedMicroBatch);
  pin(pins.virtual_stages, "--virtual-stages", 1, kMaxParallelDegree);
  pin(pins.expert_tp, "--expert-tp", 1, kMaxParallelDegree);
  if (moe_load_imbalance && !(*moe_load_imbalance >= 1.0 && *moe_load_imbalance <= 8.0))
    throw_invalid_coded("--moe-imbalance", "number_out_of_range",
                        {{"value", fmt::format("{}", *moe_load_imbalance)}, {"range", "[1, 8]"}},
                        fmt::format("{} is out of range", *moe_load_imbalance), "a number in [1, 8]");
  if (!pipeline_stage_layers.empty()) {
    if (!pins.pp)
      throw_invalid_coded("--pp-layers", "pp_layers_needs_pp", {}, "--pp-layers needs --pp",
                          "--pp P with P entries in --pp-layers");
    if (static_cast<int>(pipeline_stage_layers.size()) != *pins.pp)
      throw_invalid_coded("--pp-layers", "pp_layers_count",
                          {{"count", fmt::format("{}", pipeline_stage_layers.size())}, {"pp", fmt::format("{}", *pins.pp)}},
                          fmt::format("{} entries for pp {}", pipeline_stage_layers.size(), *pins.pp),
                          fmt::format("{} comma-separated layer counts", *pins.pp));
    for (int n : pipeline_stage_layers)
      if (n < 0 || n > 100000)
        throw_invalid_coded("--pp-layers", "integer_out_of_range",
                            {{"value", fmt::format("{}", n)}, {"min", "0"}, {"max", "100000"}},
                            fmt::format("{} is out of range", n), "an integer in [0, 100000]");
  }
  if (workload != PlanWorkload::training) {
    const char* f = stack ? "--stack" : ep_overlap ? "--ep-overlap" : tp_comm_overlap ? "--tp-comm-overlap"
                    : moe_load_imbalance ? "--moe-imbalance" : !pipeline_stage_layers.empty() ? "--pp-layers"
                    : grads_16bit ? "--grads-16bit" : moe_dispatcher ? "--moe-dispatcher" : cuda_graph ? "--cuda-graph"
                    : recompute_modules != 0 ? "--recompute-modules" : nullptr;
    if (f != nullptr)
      throw_invalid_coded(f, "training_option_only", {{"field", f}}, fmt::format("{} applies to training only", f),
                          "a training task (pretrain, full, lora, qlora)");
  }
  if (workload == PlanWorkload::training && cuda_graph && stack != TrainingStack::megatron)
    throw_invalid_coded("--cuda-graph", "cuda_graph_needs_megatron", {},
                        "--cuda-graph sets Megatron-Core's cuda_graph_impl: it needs --stack megatron",
                        fmt::format("--stack megatron --cuda-graph {}, or no --cuda-graph", cuda_graph_impl_name(*cuda_graph)));
  if (workload == PlanWorkload::training)
    check_recompute_modules_mode(recompute_modules, stack == TrainingStack::megatron, pins.recompute);
  // The DeepEP/HybridEP constants were fitted on Megatron-Core's flex dispatcher (trial40 D3).
  if (workload == PlanWorkload::training && moe_dispatcher && stack != TrainingStack::megatron)
    throw_invalid_coded("--moe-dispatcher", "moe_dispatcher_needs_megatron", {},
                        "--moe-dispatcher sets Megatron-Core's MoE token dispatcher: it needs --stack megatron",
                        "--stack megatron --moe-dispatcher hybridep, or no --moe-dispatcher");
  // The other stacks already keep 16-bit gradients (DeepSpeed's fp32 partition is its optimizer's,
  // not the gradient buffer): the flag would change nothing there, so it is refused, not ignored.
  if (workload == PlanWorkload::training && grads_16bit && stack != TrainingStack::megatron)
    throw_invalid_coded("--grads-16bit", "grads_16bit_needs_megatron", {},
                        "--grads-16bit sets Megatron's grad_reduce_in_fp32=False: it needs --stack megatron",
                        "--stack megatron --grads-16bit, or no --grads-16bit");
  if (pins.any() && workload != PlanWorkload::training && (pins.pp || pins.dp || pins.ep || pins.zero_stage ||
                                                           pins.micro_batch || pins.recompute || pins.virtual_stages ||
                                                           pins.expert_tp)) {
    throw_invalid_coded(pins.pp ? "--pp" : pins.dp ? "--dp" : pins.ep ? "--ep" : pins.zero_stage ? "--zero" : pins.micro_batch ? "--micro-batch" : pins.recompute ? "--recompute" : pins.virtual_stages ? "--virtual-stages" : "--expert-tp",
                        "layout_training_only", {}, "layout flags other than --tp apply to training only",
                        "a training task (pretrain, full, lora, qlora)");
  }
  // The expert grid (Megatron-Core: etp × ep × edp over each stage's tp × dp ranks) must divide
  // the stage's ranks. With --expert-tp pinned this is checked here, at --expert-tp, wherever the
  // pins and --gpus fix tp × dp (or bound it by --gpus), so that an impossible grid is a usage
  // error (exit 2) and not a search that finds no layout.
  if (pins.expert_tp) {
    const int etp = *pins.expert_tp, ep = pins.ep.value_or(1);
    std::optional<int> dp = pins.dp;
    if (!dp && gpus_total && pins.tp && pins.pp && *gpus_total % (*pins.tp * *pins.pp) == 0)
      dp = *gpus_total / (*pins.tp * *pins.pp);
    const bool known = pins.tp && dp;
    const long long ranks = known ? static_cast<long long>(*pins.tp) * *dp : gpus_total.value_or(0);
    if (etp >= 1 && ep >= 1 && ranks > 0 && ranks % (static_cast<long long>(etp) * ep) != 0)
    {
      if (known)
        throw_invalid_coded("--expert-tp", "expert_grid_not_dividing",
                            {{"etp", fmt::format("{}", etp)}, {"ep", fmt::format("{}", ep)},
                             {"tp", fmt::format("{}", *pins.tp)}, {"dp", fmt::format("{}", *dp)}},
                            fmt::format("expert tp {} × ep {} does not divide tp {} × dp {}", etp, ep, *pins.tp, *dp),
                            "--expert-tp × --ep dividing tp × dp");
      throw_invalid_coded("--expert-tp", "expert_grid_not_dividing_gpus",
                          {{"etp", fmt::format("{}", etp)}, {"ep", fmt::format("{}", ep)}, {"gpus", fmt::format("{}", ranks)}},
                          fmt::format("expert tp {} × ep {} does not divide the {} GPUs (tp × dp divides them)", etp, ep, ranks),
                          "--expert-tp × --ep dividing --gpus");
    }
  } else if (pins.ep && pins.dp && *pins.dp % *pins.ep != 0) {
    const bool etp1_fits = pins.tp && ParallelLayout::expert_tp_one_divides(*pins.tp, *pins.dp, *pins.ep);
    throw_invalid_coded("--ep", "ep_not_dividing_dp", {{"ep", fmt::format("{}", *pins.ep)}, {"dp", fmt::format("{}", *pins.dp)}},
                        fmt::format("ep {} does not divide dp {}", *pins.ep, *pins.dp),
                        etp1_fits ? fmt::format("ep dividing dp, or --expert-tp 1, with which the EP group spans the TP ranks "
                                                "and ep {} divides tp {} × dp {}",
                                                *pins.ep, *pins.tp, *pins.dp)
                                  : std::string("ep dividing dp"));
  }
  if (gpus_total && pins.tp && pins.pp && pins.dp && *pins.tp * *pins.pp * *pins.dp != *gpus_total) {
    throw_invalid_coded("--gpus", "gpus_not_equal_layout",
                        {{"layout", fmt::format("tp {} × pp {} × dp {}", *pins.tp, *pins.pp, *pins.dp)},
                         {"product", fmt::format("{}", *pins.tp * *pins.pp * *pins.dp)},
                         {"gpus", fmt::format("{}", *gpus_total)}},
                        fmt::format("tp {} × pp {} × dp {} = {} GPUs, not {}", *pins.tp, *pins.pp, *pins.dp,
                                    *pins.tp * *pins.pp * *pins.dp, *gpus_total),
                        "--tp × --pp × --dp equal to --gpus");
  }
  if (gpus_total) {
    int fixed = pins.tp.value_or(1) * pins.pp.value_or(1) * pins.dp.value_or(1);
    if (*gpus_total % fixed != 0) {
      throw_invalid_coded("--gpus", "gpus_not_multiple_of_pins",
                          {{"gpus", fmt::format("{}", *gpus_total)}, {"product", fmt::format("{}", fixed)},
                           {"layout", fmt::format("tp {} × pp {} × dp {}", pins.tp.value_or(1), pins.pp.value_or(1), pins.dp.value_or(1))}},
                          fmt::format("{} GPUs are not a multiple of the pinned degrees' product {}", *gpus_total, fixed),
                          "--gpus a multiple of --tp × --pp × --dp");
    }
  }
  if (mfu_override && !(*mfu_override > 0 && *mfu_override <= 1)) {
    throw_invalid_coded("--mfu", "number_out_of_range", {{"value", fmt::format("{}", *mfu_override)}, {"range", "(0, 1]"}}, fmt::format("{} is outside (0, 1]", *mfu_override), "a fraction in (0, 1]");
  }
  if (goodput_override && !(*goodput_override > 0 && *goodput_override <= 1)) {
    throw_invalid_coded("--goodput", "number_out_of_range", {{"value", fmt::format("{}", *goodput_override)}, {"range", "(0, 1]"}}, fmt::format("{} is outside (0, 1]", *goodput_override), "a fraction in (0, 1]");
  }
  if (!(evaluation_fraction >= 0 && evaluation_fraction <= 10)) {
    throw_invalid_coded("--eval-fraction", "number_out_of_range", {{"value", fmt::format("{}", evaluation_fraction)}, {"range", "[0, 10]"}}, fmt::format("{} is outside [0, 10]", evaluation_fraction), "a fraction in [0, 10]");
  }
  if (failures_per_gpu_hour && !(*failures_per_gpu_hour >= 0 && *failures_per_gpu_hour < 1)) {
    throw_invalid_coded("--failures-per-gpu-hour", "number_out_of_range", {{"value", fmt::format("{}", *failures_per_gpu_hour)}, {"range", "[0, 1)"}}, fmt::format("{} is outside [0, 1)", *failures_per_gpu_hour), "a rate in [0, 1)");
  }
  if (!(time_tie_tolerance >= 0 && time_tie_tolerance < 1)) throw_invalid_coded("--time-tolerance", "number_out_of_range", {{"value", fmt::format("{}", time_tie_tolerance)}, {"range", "[0, 1)"}}, fmt::format("{} is outside [0, 1)", time_tie_tolerance), "a fraction in [0, 1)");
  if (!(speedup_max_cost_ratio >= 0)) throw_invalid_coded("--speedup-cost-ratio", "negative", {{"value", fmt::format("{}", speedup_max_cost_ratio)}}, fmt::format("{} is negative", speedup_max_cost_ratio), "a ratio ≥ 0");
  if (!(recommend_max_cost_premium >= 0)) throw_invalid_coded("--premium", "negative", {{"value", fmt::format("{}", recommend_max_cost_premium)}}, fmt::format("{} is negative", recommend_max_cost_premium), "a fraction ≥ 0");
  if (!today.empty() && !is_iso_date(today))
    throw_invalid_coded("--today", "not_a_date", {{"value", today}}, fmt::format("\"{}\" is not a date", today),
                        "a date YYYY-MM-DD");
  if (before_earliest_date(today))
    throw_invalid_coded("--today", "date_before_earliest", {{"value", today}, {"earliest", std::string(kEarliestDate)}},
                        fmt::format("\"{}\" is before {}, the earliest date accepted", today, kEarliestDate),
                        fmt::format("a date from {} on (no cloud GPU offer is older)", kEarliestDate));
  require_positive(stale_after_days, "--max-price-age");
}

double PlanRequest::training_tokens() const {
  if (tokens) return *tokens;
  return dataset_tokens.value_or(0) * epochs;
}

std::int64_t PlanRequest::effective_global_batch_seqs() const {
  if (global_batch_seqs > 0) return global_batch_seqs;
  double target_tokens = 131072.0;  // 128 Ki tokens (LoRA / QLoRA)
  if (task == Task::pretrain) target_tokens = 4194304.0;  // 4 Mi tokens
  if (task == Task::full) target_tokens = 1048576.0;      // 1 Mi tokens
  // Never a step larger than the whole budget (issue 11; validate refuses a budget below one
  // sequence): 1,000 tokens at --seq 4096 had been planned as one step of 256 × 4096 tokens.
  if (workload == PlanWorkload::training) target_tokens = std::min(target_tokens, training_tokens());
  double seqs = target_tokens / static_cast<double>(seq_len);
  std::int64_t p = 1;
  while (static_cast<double>(p * 2) <= seqs) p *= 2;
  return p;
}

}  // namespace gpuplan
