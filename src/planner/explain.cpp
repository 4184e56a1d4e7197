// explain_plan(): every number of a plan with its formula (planner.hpp).
#include <fmt/core.h>

#include <cmath>

#include "planner/plan_inputs.hpp"
#include "planner/planner.hpp"
#include "sizing/diffusion_perf.hpp"

namespace gpuplan {
namespace {

/// "1 node", "2 nodes": a count with its noun in the number it takes (trial 10c: "1 nœuds",
/// "1 instances", "1 GPUs" on the pages, which translate the noun phrase by phrase).
std::string counted(long long n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

void add(std::vector<PlanExplainLine>& out, std::string term, double value, std::string unit, std::string formula,
         std::string source) {
  out.push_back(PlanExplainLine{std::move(term), value, std::move(unit), std::move(formula), std::move(source)});
}

/// The billing term's own source ("storage_usd_per_gb_month: URL (seen DATE; ...)", BillingTerms::
/// sources) after `what`, or `what` alone when none is recorded (trial52 #4: the storage and egress
/// lines named no source while the compute line named its feed and date).
/// Only the address and the date it was seen are quoted (the source's own words stay in --json's
/// billing.sources: a page would translate them as if they were gpuplan's).
std::string term_source(const ResolvedBilling& b, std::string_view field, std::string what) {
  for (const auto& s : b.sources) {
    if (s.rfind(std::string(field) + ": ", 0) != 0) continue;
    const std::string rest = s.substr(field.size() + 2);
    const std::size_t paren = rest.find(" (");
    std::string out = what + " (" + rest.substr(0, paren);
    if (paren != std::string::npos) {
      const std::size_t seen = rest.find("seen ", paren);
      if (seen != std::string::npos) out += ", seen " + rest.substr(seen + 5, 10);
    }
    return out + ")";
  }
  return what;
}

void explain_cost(std::vector<PlanExplainLine>& out, const Plan& p, const CostBreakdown& c, const std::string& prefix) {
  const ResolvedBilling& b = p.billing;
  // The run the billing rounds: the fixed start-up before the first step, then the work
  // (training: goodput.wall_seconds; spot: with its overhead). Trial 9: --explain went from
  // goodput.wall_seconds to a billed time 600 s longer without a term for the difference.
  add(out, prefix + "startup_seconds", c.startup_seconds, "s",
      fmt::format("--startup-minutes {:g} × 60: cluster start, container and weights load before the first step",
                  c.startup_seconds / 60.0),
      "assumption (start-up minutes input), billed on every instance");
  add(out, prefix + "run_seconds", c.run_seconds, "s",
      fmt::format("start-up {:.0f} s + {} {:.0f} s", c.startup_seconds,
                  // The quantity's name, not its term key (trial 10 D5: "goodput.wall_seconds" was shown as text).
                  c.spot ? "work with spot overhead" : p.goodput ? "wall time" : "work time",
                  c.run_seconds - c.startup_seconds),
      "gpuplan cost model");
  add(out, prefix + "billed_seconds", c.billed_seconds, "s",
      is_reserved(c.price_kind)
          ? fmt::format("ceil({:.0f} s / term {:.0f} s) × term", c.run_seconds, reserved_term_seconds(c.price_kind))
          // The run time to the millisecond: at 1 s granularity "ceil(117673.0 s / 1 s)" read as
          // billing a second too many (trial52 #11; the run was 117673.024 s).
          : fmt::format("max(ceil({:.3f} s / {:.0f} s) × {:.0f} s, minimum {:.0f} s)", c.run_seconds,
                        b.granularity_seconds, b.granularity_seconds, b.minimum_billed_seconds),
      // The terms' own addresses where recorded (trial53 #11: the line named no source).
      term_source(b, "minimum_billed_seconds", term_source(b, "granularity_seconds", "provider billing terms")) +
          " (gpuplan billing rule)");
  if (c.spot && !std::isfinite(c.spot->mtbf_seconds)) {
    // A rate of 0 preemptions per instance-day (planner/cost.hpp spot_overhead): nothing lost.
    add(out, prefix + "spot_extra_seconds", 0.0, "s",
        "0 preemptions per instance-day: no preemption, so no lost work, restart or checkpoint against one",
        "gpuplan spot model (a rate of 0)");
  } else if (c.spot) {
    const SpotOverhead& s = *c.spot;
    add(out, prefix + "spot_interval_seconds", s.interval_seconds, "s",
        fmt::format("sqrt(2 × checkpoint {:.1f} s × MTBF {:.0f} s)", s.interval_seconds * s.interval_seconds /
                                                                             (2.0 * s.mtbf_seconds),
                    s.mtbf_seconds),
        "Young 1974 eq. 3; Daly 2006");
    add(out, prefix + "spot_expected_preemptions", s.expected_preemptions, "",
        fmt::format("wall {:.0f} s / MTBF {:.0f} s (MTBF = 86400 s / ({:.4g} per instance-day × {}))",
                    s.wall_seconds, s.mtbf_seconds,
                    86400.0 / (s.mtbf_seconds * static_cast<double>(c.instances - c.idle_instances)),
                    counted(c.instances - c.idle_instances, "instance", "instances")),
        "Daly 2006 §3 (first order); any instance's preemption stops a synchronous job");
    add(out, prefix + "spot_extra_seconds", s.extra_seconds(), "s",
        fmt::format("checkpoints {:.0f} s + lost work {:.0f} s (preemptions × τ/2) + restarts {:.0f} s",
                    s.checkpoints_seconds, s.lost_work_seconds, s.restart_seconds_total),
        "Daly 2006 §3 (first order)");
  }
  add(out, prefix + "compute_usd", c.compute_usd, "USD",
      fmt::format("{}{} × ${:.4f}/h × billed {:.0f} s / 3600{}", counted(c.instances, "instance", "instances"),
                  c.idle_instances > 0 ? fmt::format(" (the offer's minimum; {} of them idle)", c.idle_instances) : "",
                  c.usd_per_hour,
                  c.spot ? c.billed_seconds - c.spot_loss_usd * 3600.0 / (c.usd_per_hour * c.instances) : c.billed_seconds,
                  c.spot ? " (uninterrupted work)" : ""),
      std::string("price: ") + std::string(price_kind_name(c.price_kind)));
  if (c.spot) {
    add(out, prefix + "spot_loss_usd", c.spot_loss_usd, "USD",
        fmt::format("{} × ${:.4f}/h × (billed wall − billed work) / 3600", c.instances, c.usd_per_hour),
        "Young/Daly overhead priced at the spot rate");
  }
  if (c.storage_usd) {
    add(out, prefix + "storage_usd", *c.storage_usd, "USD",
        fmt::format("{:.1f} GB × ${:.4f}/GB-month × {:.0f} s / {:.0f} s per month", p.storage_bytes / 1e9,
                    *b.storage_usd_per_gb_month, c.run_seconds, kSecondsPerMonth),
        term_source(b, "storage_usd_per_gb_month", "provider storage price") + "; 730 h per month");
  } else {
    add(out, prefix + "storage_usd", 0, "USD", "storage price unknown: not counted", "");
  }
  if (c.egress_usd) {
    add(out, prefix + "egress_usd", *c.egress_usd, "USD",
        fmt::format("max(0, {:.1f} GB − {:.0f} GB free) × ${:.4f}/GB", p.egress_bytes / 1e9, b.egress_free_gb,
                    *b.egress_usd_per_gb),
        term_source(b, "egress_usd_per_gb", "provider egress price") +
            (b.egress_free_gb > 0 ? "; " + term_source(b, "egress_free_gb_per_month", "free allowance") : std::string()));
  } else {
    add(out, prefix + "egress_usd", 0, "USD", "egress price unknown: not counted", "");
  }
  add(out, prefix + "total_usd", c.total_usd(), "USD", "compute + storage + egress + spot loss", "");
}

}  // namespace

std::vector<PlanExplainLine> explain_plan(const PlanRequest& request, const ModelArch& arch, const Plan& p,
                                          const GpuCatalog& gpus, const PerfAssumptions& assumptions) {
  std::vector<PlanExplainLine> out;
  const GpuSpec* spec = gpus.try_find(p.gpu_name);
  add(out, "gpu_memory_capacity_bytes", p.gpu_memory_capacity_bytes, "bytes",
      fmt::format("{} per GPU, usable {:.1f} GB with the {:.0f}% margin", p.gpu_name,
                  p.gpu_memory_capacity_bytes * (1 - p.margin) / 1e9, p.margin * 100),
      "the offer’s listing, else the GPU datasheet");
  if (p.training && spec) {
    const TrainingMemoryRequest m = detail::training_memory_request(request, p.layout, p.recompute, p.recompute_modules);
    for (const auto& t : explain_training_memory(arch, m)) add(out, "memory." + t.name, t.bytes, "bytes", t.formula, t.source);
    add(out, "per_gpu_memory_bytes", p.per_gpu_memory_bytes, "bytes", "sum of the memory terms above", "gpuplan memory model");
    const TrainingStepRequest s = detail::training_step_request(request, p.layout, p.recompute, p.recompute_modules,
                                                                   p.global_batch_seqs);
    for (const auto& l : explain_training_step(arch, s, p.cluster, assumptions)) add(out, "step." + l.term, l.value, "", l.formula, l.source);
    add(out, "steps", p.steps, "",
        fmt::format("ceil({:.4g} tokens / ({} sequences × {} tokens))", request.training_tokens(), p.global_batch_seqs,
                    request.seq_len),
        "");
    add(out, "tokens_per_s", p.tokens_per_s, "tokens/s",
        fmt::format("{} × {} tokens / {:.3f} s per step", p.global_batch_seqs, request.seq_len, p.training->step_seconds),
        p.global_batch_seqs != p.requested_global_batch_seqs
            ? fmt::format("global batch rounded from {} to a multiple of DP × micro-batch", p.requested_global_batch_seqs)
            : "");
    if (p.mfu_overridden) {
      add(out, "step.step_seconds_mfu_override", p.training->step_seconds, "s",
          fmt::format("model FLOP {:.4g} / ({} × peak {:.4g} FLOP/s × MFU {:.3f})", p.training->model_flop_per_step,
                      counted(p.cluster.total_gpus(), "GPU", "GPUs"), p.training->peak_flops_per_s, p.training->mfu),
          "--mfu replaces the modelled step time");
    }
    add(out, "work_seconds", p.work_seconds, "s",
        fmt::format("{:.0f} steps × {:.3f} s per step", p.steps, p.training->step_seconds), "");
    if (p.goodput) {
      const GoodputEstimate& g = *p.goodput;
      const std::string src = "gpuplan goodput model: Llama 3 §3.3.4 failure rate; Young 1974 / Daly 2006 interval";
      add(out, "goodput.mtbf_seconds", g.mtbf_seconds, "s",
          fmt::format("1 / (failures per GPU-hour × {}) × 3600", counted(p.cluster.total_gpus(), "GPU", "GPUs")), src);
      add(out, "goodput.checkpoint_write_seconds", g.checkpoint_write_seconds, "s",
          fmt::format("{:.1f} GB / ({} × {:.2f} GB/s)", p.checkpoint_bytes / 1e9, counted(p.instances, "node", "nodes"),
                      request.checkpoint_write_bytes_per_s / 1e9),
          src);
      add(out, "goodput.interval_seconds", g.interval_seconds, "s",
          fmt::format("sqrt(2 × {:.1f} s × {:.0f} s)", g.checkpoint_write_seconds, g.mtbf_seconds), src);
      add(out, "goodput.expected_failures", g.expected_failures, "", fmt::format("wall {:.0f} s / MTBF", g.wall_seconds), src);
      add(out, "goodput.checkpoint_seconds", g.checkpoint_seconds, "s", "work × C / τ", src);
      add(out, "goodput.lost_work_seconds", g.lost_work_seconds, "s", "failures × τ / 2", src);
      add(out, "goodput.restart_seconds", g.restart_seconds, "s",
          fmt::format("failures × {:.0f} s", request.restart_seconds), src);
      add(out, "goodput.evaluation_seconds", g.evaluation_seconds, "s",
          fmt::format("work × {:.3f} (--eval-fraction)", request.evaluation_fraction), src);
      add(out, "goodput.wall_seconds", g.wall_seconds, "s", "work + the goodput terms above", src);
      add(out, "goodput", g.goodput, "", "work / wall", src);
    }
  } else if (p.serving && spec) {
    const ServingMemoryRequest m = detail::serving_memory_request(request, p.layout.tp, p.serving->batch);
    for (const auto& t : explain_serving_memory(arch, m)) add(out, "memory." + t.name, t.bytes, "bytes", t.formula, t.source);
    add(out, "per_gpu_memory_bytes", p.per_gpu_memory_bytes, "bytes", "sum of the memory terms above", "gpuplan memory model");
    const ServingPerfRequest sp = detail::serving_perf_request(request, p.layout.tp, p.serving->batch);
    const double kv_capacity = p.kv_capacity_bytes;
    for (const auto& l : explain_serving(arch, sp, p.cluster, kv_capacity, assumptions)) add(out, "serving." + l.term, l.value, "", l.formula, l.source);
    {
      const std::string load =
          request.requests_per_s
              ? fmt::format("ceil({:.3g} req/s / {:.3g} req/s per replica) = {}; fewest replicas whose mean "
                            "queue wait is at most {:.3g} s: {}",
                            *request.requests_per_s, p.serving->requests_per_s_per_replica,
                            replicas_needed(*p.serving, *request.requests_per_s, 0),
                            detail::serving_queue_wait_budget_seconds(request, *p.serving),
                            detail::serving_replicas_needed(request, *p.serving))
          : request.concurrency
              ? fmt::format("ceil({} users / {} sequences per replica)", *request.concurrency, p.serving->batch)
              // A batch job (trial47 D8: "ceil(0 users / ...)"): every GPU of its instances.
              : fmt::format("{} instance{} × {} GPU{} / TP {}; {:.0f} requests split evenly", p.instances,
                            p.instances == 1 ? "" : "s", p.gpus_per_instance, p.gpus_per_instance == 1 ? "" : "s",
                            p.layout.tp, request.requests.value_or(0));
      // --gpus / --nodes fix the cluster: every GPU serves, whatever the load needs.
      const bool fixed_cluster = request.gpus_total || request.nodes_exact;
      add(out, "replicas", static_cast<double>(p.replicas), "",
          fixed_cluster ? fmt::format("{} instance{} × {} GPU{} / TP {} (fixed cluster; load needs {})", p.instances,
                                      p.instances == 1 ? "" : "s", p.gpus_per_instance, p.gpus_per_instance == 1 ? "" : "s",
                                      p.layout.tp, load)
                        : load,
          "gpuplan serving model");
      if (request.requests_per_s) {
        const double wait = queue_wait_seconds(*p.serving, p.replicas, *request.requests_per_s);
        const double service = static_cast<double>(p.serving->batch) / p.serving->requests_per_s_per_replica;
        const double offered = *request.requests_per_s / static_cast<double>(p.replicas) * service;
        // Busy share floored to 0.1% (99.98% is not "100.0%": trial58 #4).
        const double busy_pct = std::floor(1000.0 * offered / static_cast<double>(p.serving->batch)) / 10.0;
        add(out, "serving.queue_wait_seconds", wait, "s",
            fmt::format("{} slots per replica (batch); slot time {:.4g} s = batch / req/s per replica; offered load "
                        "{:.4g} req/s / {} × {:.4g} s = {:.4g} slots busy ({:.1f}%): mean queue wait before the first "
                        "token, each replica queueing its share",
                        p.serving->batch, service, *request.requests_per_s, p.replicas, service, offered, busy_pct),
            "Erlang C (M/M/c, Kleinrock 1975 §3.5) × 1/2 for deterministic service (Allen–Cunneen; exact for M/D/1)");
      }
      // The replicas' worth the load keeps busy (the search's own rule), when below the replicas.
      if (const double busy = detail::serving_replicas_busy(request, *p.serving, p.replicas);
          busy < static_cast<double>(p.replicas)) {
        add(out, "replicas_busy", busy, "",
            request.concurrency
                ? fmt::format("{} users / {} sequences per replica: tokens/s and req/s follow these users, not each "
                              "replica's full batch",
                              *request.concurrency, p.serving->batch)
                : fmt::format("{:.4g} req/s / {:.4g} req/s per replica: tokens/s and req/s follow this load, not each "
                              "replica's capacity",
                              request.requests_per_s.value_or(0), p.serving->requests_per_s_per_replica),
            request.concurrency ? "Little's law: concurrency / time per request" : "gpuplan serving model");
      }
    }
    if (!p.serving_tp_choice.empty()) {
      add(out, "serving.tp_choice", p.layout.tp, "", p.serving_tp_choice,
          "gpuplan serving search: fixed cluster holds the load, then the latency target, then the fewest instances");
    }
    add(out, "instances", p.instances, "",
        fmt::format("ceil({} / ({} / TP {}))", counted(p.replicas, "replica", "replicas"),
                    counted(p.gpus_per_instance, "GPU", "GPUs"), p.layout.tp), "");
    if (p.batch_job) {
      const BatchJobTiming& j = *p.batch_job;
      const std::int64_t per_replica =
          (static_cast<std::int64_t>(std::ceil(request.requests.value_or(0))) + p.replicas - 1) / p.replicas;
      add(out, "batch_job.steps", static_cast<double>(j.steps), "",
          fmt::format("{} requests per replica queued at t = 0, at most {} running (min(requests, the {} sequences "
                      "the KV pool holds at {} + {} tokens)); each step decodes d running sequences and prefills min(pending prompt tokens, max({} − d, {}/4)) "
                      "FIFO; a request emits its first token with its prompt's last chunk and leaves {} steps later, its "
                      "slot refilled next step: {} steps, {} with prompt chunks, mean d {:.1f}{}",
                      per_replica, j.peak_running_sequences, j.pool_sequences > 0 ? j.pool_sequences : p.serving->batch,
                      request.prompt_tokens,
                      request.output_tokens,
                      p.serving->step_token_budget, p.serving->step_token_budget, request.output_tokens - 1, j.steps,
                      j.prefill_steps, j.mean_decode_batch,
                      j.simulated_requests < per_replica
                          ? fmt::format(" (first {} requests simulated, the rest at their rate)", j.simulated_requests)
                          : std::string()),
          "in-flight batching with chunked prefill (Sarathi-Serve arXiv:2403.02310; TensorRT-LLM "
          "trtllm-bench throughput: all requests queued at once)");
      add(out, "work_seconds", p.work_seconds, "s",
          fmt::format("sum over the steps of roofline(weights {:.4g} s + d × KV {:.4g} s, d × decode {:.4g} s + c × "
                      "prefill {:.4g} s) + TP ({:.4g} s + (d + c) × {:.4g} s) = {:.4g} s (at the pool's steady rate {:.4g} s); "
                      "{:.4g} requests / that = {:.3g} req/s",
                      p.serving->weights_memory_seconds, p.serving->kv_memory_seconds_per_sequence,
                      p.serving->decode_compute_seconds_per_sequence, p.serving->prefill_seconds_per_token,
                      p.serving->tp_comm_seconds_fixed, p.serving->tp_comm_seconds_per_token, j.seconds,
                      j.steady_state_seconds, request.requests.value_or(0), p.requests_per_s),
          "step rule of docs/performance-model.md §3, per step");
    } else {
      add(out, "work_seconds", p.work_seconds, "s",
          request.workload == PlanWorkload::serving
              ? fmt::format("{:.0f} h × 3600", request.hours)
          // A static-batching batch job (planner.cpp assemble): waves of the batch it runs.
          : p.serving && p.replicas > 0
              ? fmt::format("ceil({} requests per replica / batch {}) waves × (TTFT {:.4g} s + {} × TPOT {:.4g} s) = {:.4g} s",
                            (static_cast<std::int64_t>(std::ceil(request.requests.value_or(0))) + p.replicas - 1) / p.replicas,
                            p.serving->batch, p.serving->ttft_seconds, request.output_tokens - 1, p.serving->tpot_seconds,
                            p.work_seconds)
              : fmt::format("{:.4g} requests / {:.3g} req/s", request.requests.value_or(0), p.requests_per_s),
          "");
    }
  } else if (spec) {
    add(out, "per_gpu_memory_bytes", p.per_gpu_memory_bytes, "bytes", "weights + CUDA context + fragmentation", "gpuplan memory model");
    const DiffusionRequest d = detail::diffusion_request(request, arch, p.gpus_per_instance);
    for (const auto& l : explain_diffusion(arch, d, *spec, assumptions)) add(out, "images." + l.term, l.value, "", l.formula, l.source);
    add(out, "work_seconds", p.work_seconds, "s",
        fmt::format("{:.4g} images / {:.1f} images per hour × 3600", request.images, p.requests_per_s * 3600), "");
  }
  // What is stored and downloaded, with its own inputs (trial52 #4/#5: "dataset + checkpoint 112.4
  // GB" gave no size for the dataset, and a generation job's 0 B of egress read "the final weights").
  if (request.workload == PlanWorkload::training) {
    const double data = p.storage_bytes - p.checkpoint_bytes;
    const double per_token = arch.vocab_size > 0 && arch.vocab_size < 65536 ? 2.0 : 4.0;
    add(out, "storage_bytes", p.storage_bytes, "bytes",
        fmt::format("dataset {:.1f} GB ({:.4g} tokens × {:.0f} B per token id: uint{}, vocabulary {}) + checkpoint "
                    "{:.1f} GB",
                    data / 1e9, data / per_token, per_token, per_token == 2.0 ? 16 : 32, arch.vocab_size,
                    p.checkpoint_bytes / 1e9),
        "pre-tokenised dataset (Megatron-LM indexed dataset dtype: uint16 below 65,536 tokens in the vocabulary); "
        "checkpoint = weights + master weights + optimizer state");
    const bool adapters = request.task == Task::lora || request.task == Task::qlora;  // trial53 #5
    add(out, "egress_bytes", p.egress_bytes, "bytes",
        request.egress_gb ? fmt::format("--egress-gb {}", *request.egress_gb)
        : adapters ? fmt::format("the LoRA adapter: {:.4g} params × 2 B (bf16) (the frozen base is not downloaded)",
                                 p.egress_bytes / 2.0)
                   : fmt::format("the final weights: {:.4g} params × 2 B (bf16)", static_cast<double>(arch.total_params())),
        "");
  } else {
    add(out, "storage_bytes", p.storage_bytes, "bytes",
        fmt::format("the served weights: {:.4g} params × {:g} bits / 8", static_cast<double>(arch.total_params()),
                    weight_quant_bits(request.quant)),
        "");
    add(out, "egress_bytes", p.egress_bytes, "bytes",
        request.egress_gb ? fmt::format("--egress-gb {}", *request.egress_gb)
                          : std::string("generated outputs not counted (--egress-gb adds them)"),
        "");
  }
  explain_cost(out, p, p.cost, "cost.");
  for (const auto& alt : p.alternatives) {
    explain_cost(out, p, alt, fmt::format("alternative.{}.", price_kind_name(alt.price_kind)));
  }
  return out;
}

}  // namespace gpuplan
