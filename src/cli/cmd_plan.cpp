// `gpuplan plan [FILTER] --model M --task T ...`: the main job. Parses flags into a PlanRequest,
// reads the offers from the store (the only IO), calls planner::plan() and renders the plans as a
// table, JSON, or one plan's explanation. Computes no numbers itself (STYLE.md §1).
//
// Exit codes: 0 plans printed; 1 no offer can run the workload (the reason and what would make
// it fit are printed: an answer, like grep's "no match", not an error); 2-5/70 errors (error.hpp).
#include <fmt/core.h>

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "catalog/providers.hpp"
#include "catalog/open_store.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "cli/model_flags.hpp"
#include "hardware/gpu_spec.hpp"
#include "model/model_source.hpp"
#include "planner/planner.hpp"
#include "util/error.hpp"

namespace gpuplan::cli {
namespace {

using nlohmann::json;

/// Exit code when no offer can run the workload (documented in docs/planner.md).
constexpr int kExitNoPlan = 1;

struct PlanOptions {
  PlanRequest request;
  std::string task = "lora";
  std::string precision, optimizer, quant, kv_dtype, sort = "cost";
  bool json = false;
  std::optional<std::size_t> explain;
};

BillingTerms billing_of(const Offer& offer) {
  return effective_billing(offer, find_provider(bundled_providers(), offer.provider));
}

std::string duration_text(double s) {
  if (!std::isfinite(s)) return "never";
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 2 * 3600) return fmt::format("{:.0f} min", s / 60);
  if (s < 2 * 86400) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} d", s / 86400);
}
std::string usd(double v) { return v >= 100 ? fmt::format("${:.0f}", v) : fmt::format("${:.2f}", v); }
std::string usd_opt(const std::optional<double>& v) { return v ? usd(*v) : "unknown"; }
std::string rate_text(double v) {
  if (v >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.1f}", v);
}

std::string layout_text(const Plan& p) {
  if (p.training) {
    return fmt::format("TP{} PP{} DP{} Z{} mb{}{}", p.layout.tp, p.layout.pp, p.layout.dp, p.layout.zero_stage,
                       p.layout.micro_batch,
                       p.recompute == Recompute::none ? "" : fmt::format(" rc:{}", recompute_name(p.recompute)));
  }
  if (p.serving) return fmt::format("TP{} ×{} replicas, batch {}", p.layout.tp, p.replicas, p.serving->batch);
  return fmt::format("{} GPUs × 1 image", p.gpus_per_instance);
}

std::string price_text(const Plan& p) {
  return fmt::format("{} {} ({}, {})", price_kind_name(p.cost.price_kind), usd(p.cost.usd_per_hour) + "/h",
                     p.price_source.dataset, p.price_source.observed_at.value_or("unknown"));
}

json opt_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json cost_json(const CostBreakdown& c) {
  json j = {{"price_kind", price_kind_name(c.price_kind)},
            {"usd_per_hour", c.usd_per_hour},
            {"instances", c.instances},
            {"run_seconds", c.run_seconds},
            {"billed_seconds", c.billed_seconds},
            {"compute_usd", c.compute_usd},
            {"storage_usd", opt_json(c.storage_usd)},
            {"egress_usd", opt_json(c.egress_usd)},
            {"spot_loss_usd", c.spot_loss_usd},
            {"total_usd", c.total_usd()},
            {"total_is_lower_bound", c.total_is_lower_bound()}};
  if (c.spot) {
    j["spot"] = {{"mtbf_seconds", c.spot->mtbf_seconds},
                 {"interval_seconds", c.spot->interval_seconds},
                 {"checkpoints_seconds", c.spot->checkpoints_seconds},
                 {"expected_preemptions", c.spot->expected_preemptions},
                 {"lost_work_seconds", c.spot->lost_work_seconds},
                 {"restart_seconds_total", c.spot->restart_seconds_total},
                 {"wall_seconds", c.spot->wall_seconds}};
  }
  return j;
}

json warnings_json(const std::vector<PlanWarning>& ws) {
  json a = json::array();
  for (const auto& w : ws) a.push_back({{"code", w.code}, {"message", w.message}});
  return a;
}

json plan_json(const Plan& p, std::size_t rank) {
  json j = {{"rank", rank},
            {"offer_id", p.offer_id},
            {"provider", p.provider},
            {"instance_type", p.instance_type},
            {"region", p.region},
            {"same_plan_offer_ids", p.same_plan_offer_ids},
            {"gpu_name", p.gpu_name},
            {"gpus_per_instance", p.gpus_per_instance},
            {"instances", p.instances},
            {"intra_node_link", intra_node_link_name(p.intra_node_link)},
            {"inter_node_network", inter_node_network_name(p.inter_node_network)},
            {"layout",
             {{"tp", p.layout.tp},
              {"pp", p.layout.pp},
              {"dp", p.layout.dp},
              {"zero_stage", p.layout.zero_stage},
              {"micro_batch", p.layout.micro_batch},
              {"recompute", recompute_name(p.recompute)}}},
            {"global_batch_seqs", p.global_batch_seqs},
            {"replicas", p.replicas},
            {"per_gpu_memory_bytes", p.per_gpu_memory_bytes},
            {"gpu_memory_capacity_bytes", p.gpu_memory_capacity_bytes},
            {"margin", p.margin},
            {"tokens_per_s", p.tokens_per_s},
            {"requests_per_s", p.requests_per_s},
            {"work_seconds", p.work_seconds},
            {"time_seconds", p.time_seconds()},
            {"steps", p.steps},
            {"usd_per_gpu_hour", p.usd_per_gpu_hour},
            {"storage_bytes", p.storage_bytes},
            {"egress_bytes", p.egress_bytes},
            {"checkpoint_bytes", p.checkpoint_bytes},
            {"cost", cost_json(p.cost)},
            {"total_usd", p.total_usd()},
            {"billing",
             {{"granularity_seconds", p.billing.granularity_seconds},
              {"minimum_billed_seconds", p.billing.minimum_billed_seconds},
              {"storage_usd_per_gb_month", opt_json(p.billing.storage_usd_per_gb_month)},
              {"egress_usd_per_gb", opt_json(p.billing.egress_usd_per_gb)},
              {"egress_free_gb", p.billing.egress_free_gb},
              {"preemptions_per_day", opt_json(p.billing.preemptions_per_day)},
              {"assumptions", p.billing.assumptions},
              {"sources", p.billing.sources}}},
            {"price_source",
             {{"dataset", p.price_source.dataset},
              {"locator", p.price_source.locator},
              {"observed_at", p.price_source.observed_at ? json(*p.price_source.observed_at) : json("unknown")}}},
            {"warnings", warnings_json(p.warnings)},
            {"on_pareto_front", p.on_pareto_front}};
  json alts = json::array();
  for (const auto& a : p.alternatives) alts.push_back(cost_json(a));
  j["alternatives"] = alts;
  if (p.training) {
    const auto& t = *p.training;
    j["step"] = {{"step_seconds", t.step_seconds},       {"compute_seconds", t.compute_seconds},
                 {"tp_allreduce_seconds", t.tp_allreduce_seconds}, {"pp_bubble_seconds", t.pp_bubble_seconds},
                 {"exposed_comm_seconds", t.exposed_comm_seconds}, {"mfu", t.mfu}};
  }
  if (p.serving) {
    const auto& s = *p.serving;
    j["serving"] = {{"ttft_seconds", s.ttft_seconds},
                    {"tpot_seconds", s.tpot_seconds},
                    {"batch", s.batch},
                    {"max_concurrent_sequences", s.max_concurrent_sequences},
                    {"requests_per_s_per_replica", s.requests_per_s_per_replica}};
  }
  if (p.images_per_hour) {
    j["images_per_hour"] = *p.images_per_hour;
    j["usd_per_1000_images"] = opt_json(p.usd_per_1000_images);
  }
  return j;
}

json result_json(const PlanRequest& r, const PlanResult& res) {
  json plans = json::array();
  for (std::size_t i = 0; i < res.plans.size(); ++i) plans.push_back(plan_json(res.plans[i], i + 1));
  json j = {{"model", res.model_name},
            {"workload", plan_workload_name(r.workload)},
            {"task", task_name(r.task)},
            {"training_tokens", res.training_tokens},
            {"sort", r.sort == PlanSort::cost ? "cost" : "time"},
            {"pareto_only", r.pareto_only},
            {"plans_total", res.plans_total},
            {"offers_considered", res.offers_considered},
            {"offers_skipped", res.offers_skipped},
            {"layouts_evaluated", res.layouts_evaluated},
            {"plans", plans},
            {"warnings", warnings_json(res.warnings)}};
  if (res.no_plan) {
    j["no_plan"] = {{"reason", res.no_plan->reason},
                    {"smallest_per_gpu_bytes", res.no_plan->smallest_per_gpu_bytes},
                    {"largest_gpu_bytes", res.no_plan->largest_gpu_bytes},
                    {"any_multi_node_offer", res.no_plan->any_multi_node_offer},
                    {"suggestions", res.no_plan->suggestions}};
  } else {
    j["no_plan"] = nullptr;
  }
  return j;
}

void print_table(const PlanRequest& r, const PlanResult& res) {
  const bool training = r.workload == PlanWorkload::training;
  const bool images = r.workload == PlanWorkload::image_generation;
  TextTable t;
  t.header = {"#", "provider", "region", "instance × count", "GPU", "layout", "mem/GPU", training ? "tokens/s" : (images ? "img/h" : "tok/s"),
              "time", "total", "compute", "storage", "egress", "spot loss", "price (source, date)"};
  t.right_align = {true, false, false, false, false, false, true, true, true, true, true, true, true, true, false};
  for (std::size_t i = 0; i < res.plans.size(); ++i) {
    const Plan& p = res.plans[i];
    t.rows.push_back({fmt::format("{}{}", i + 1, p.on_pareto_front ? "*" : ""), p.provider,
                      (p.region.empty() ? std::string("-") : p.region) +
                          (p.same_plan_offer_ids.empty()
                               ? std::string()
                               : fmt::format(" (+{} zones)", p.same_plan_offer_ids.size())),
                      fmt::format("{} × {}", p.instance_type, p.instances), fmt::format("{}×{}", p.gpus_per_instance, p.gpu_name),
                      layout_text(p),
                      fmt::format("{:.1f}/{:.0f} GB", p.per_gpu_memory_bytes / 1e9, p.gpu_memory_capacity_bytes / 1e9),
                      images ? rate_text(p.images_per_hour.value_or(0)) : rate_text(p.tokens_per_s),
                      duration_text(p.time_seconds()), (p.cost.total_is_lower_bound() ? "≥" : "") + usd(p.total_usd()), usd(p.cost.compute_usd),
                      usd_opt(p.cost.storage_usd), usd_opt(p.cost.egress_usd),
                      p.cost.price_kind == PriceKind::spot ? usd(p.cost.spot_loss_usd) : "-", price_text(p)});
  }
  fmt::print("{}", t.render());
  fmt::print("{} of {} plans ({} offers considered, {} skipped, {} layouts evaluated); * = on the cost/time Pareto front; "
             "sorted by {}. Memory in GB (1e9 bytes). ≥ = a lower bound: storage or egress price unknown, not counted.\n",
             res.plans.size(), res.plans_total, res.offers_considered, res.offers_skipped, res.layouts_evaluated,
             r.sort == PlanSort::cost ? "total cost" : "time to finish");
  if (images) {
    for (std::size_t i = 0; i < res.plans.size(); ++i) {
      fmt::print("  #{}: {} per 1,000 images\n", i + 1, usd_opt(res.plans[i].usd_per_1000_images));
    }
  }
  for (std::size_t i = 0; i < res.plans.size(); ++i) {
    for (const auto& w : res.plans[i].warnings) {
      if (w.code == "billing_assumption" || w.code == "price_date_unknown" || w.code == "not_confirmed_available") continue;
      fmt::print("  #{} warning [{}]: {}\n", i + 1, w.code, w.message);
    }
  }
  std::size_t undated = 0, unconfirmed = 0, assumed = 0;
  for (const auto& p : res.plans) {
    for (const auto& w : p.warnings) {
      undated += w.code == "price_date_unknown";
      unconfirmed += w.code == "not_confirmed_available";
      assumed += w.code == "billing_assumption";
    }
  }
  if (undated) fmt::print("  warning [price_date_unknown]: {} plans have prices whose source gives no date\n", undated);
  if (unconfirmed) fmt::print("  warning [not_confirmed_available]: {} plans use listed prices never confirmed available\n", unconfirmed);
  if (assumed) fmt::print("  warning [billing_assumption]: {} plans assume unknown billing terms (see --explain N or --json)\n", assumed);
  for (const auto& w : res.warnings) fmt::print("warning [{}]: {}\n", w.code, w.message);
}

void print_no_plan(const PlanResult& res) {
  const NoPlanReason& np = *res.no_plan;
  fmt::print("No plan: {}\n", np.reason);
  for (const auto& s : np.suggestions) fmt::print("  might fit with: {}\n", s);
  fmt::print("({} offers considered, {} skipped, {} layouts evaluated)\n", res.offers_considered, res.offers_skipped,
             res.layouts_evaluated);
  for (const auto& w : res.warnings) fmt::print("warning [{}]: {}\n", w.code, w.message);
}

void print_explain(const PlanResult& res, const std::vector<PlanExplainLine>& lines, std::size_t n) {
  const Plan& p = res.plans[n - 1];
  fmt::print("Plan {}: {} {} × {} ({}×{}), price {}\n", n, p.provider, p.instance_type, p.instances, p.gpus_per_instance,
             p.gpu_name, price_text(p));
  TextTable t;
  t.header = {"term", "value", "unit", "formula", "source"};
  t.right_align = {false, true, false, false, false};
  for (const auto& l : lines) t.rows.push_back({l.term, fmt::format("{:.6g}", l.value), l.unit, l.formula, l.source});
  fmt::print("{}", t.render());
  for (const auto& w : p.warnings) fmt::print("warning [{}]: {}\n", w.code, w.message);
}

GPUPLAN_REGISTER_COMMAND(Command{
    "plan", "plan the cheapest (or fastest) way to finish a training, serving or image job on the offers",
    [](CLI::App& sub, GlobalOptions& global) {
      auto o = std::make_shared<PlanOptions>();
      PlanRequest& r = o->request;
      add_model_flags(sub, r.model);
      sub.add_option("filter", r.filter, "FILTER in the offers language, e.g. 'gpu=H100 gpus>=8' (see gpuplan offers --help)");
      sub.add_option("--task", o->task, "pretrain, full, lora, qlora, serve (with --rps/--concurrency, or --requests for a batch job), images")
          ->capture_default_str();
      sub.add_option_function<double>("--tokens", [&r](const double& v) { r.tokens = v; }, "tokens to train on (2e12)");
      sub.add_option_function<double>("--dataset-tokens", [&r](const double& v) { r.dataset_tokens = v; }, "tokens in the dataset (× --epochs)");
      sub.add_option("--epochs", r.epochs, "passes over --dataset-tokens")->capture_default_str();
      sub.add_option("--seq", r.seq_len, "tokens per training sequence")->capture_default_str();
      sub.add_option("--global-batch", r.global_batch_seqs, "sequences per optimizer step (0 = default by task)")->capture_default_str();
      sub.add_option("--precision", o->precision, "bf16 (default), fp16, fp8, fp32, bf16_pure");
      sub.add_option("--optimizer", o->optimizer, "adamw (default), adamw_8bit, sgd_momentum, adafactor, lion");
      sub.add_option("--lora-rank", r.lora_rank, "LoRA rank r")->capture_default_str();
      sub.add_option("--quant", o->quant, "served weights: bf16 (default), fp16, fp8, int8, int4, nf4, q4_k_m, q8_0");
      sub.add_option("--kv-dtype", o->kv_dtype, "KV cache: bf16 (default), fp16, fp8, int8, int4");
      sub.add_option("--prompt-tokens", r.prompt_tokens, "prompt tokens per request")->capture_default_str();
      sub.add_option("--output-tokens", r.output_tokens, "generated tokens per request")->capture_default_str();
      sub.add_option_function<double>("--rps", [&r](const double& v) { r.requests_per_s = v; }, "serving: target requests per second");
      sub.add_option_function<std::int64_t>("--concurrency", [&r](const std::int64_t& v) { r.concurrency = v; },
                                            "serving: users (sequences) served at once");
      sub.add_option("--hours", r.hours, "serving: hours the service runs")->capture_default_str();
      sub.add_option_function<double>("--requests", [&r](const double& v) { r.requests = v; }, "batch generation: requests to complete");
      sub.add_option("--width", r.image_width, "images: width in pixels")->capture_default_str();
      sub.add_option("--height", r.image_height, "images: height in pixels")->capture_default_str();
      sub.add_option("--steps", r.denoising_steps, "images: denoising steps")->capture_default_str();
      sub.add_option("--images", r.images, "images: how many to generate")->capture_default_str();
      sub.add_option("--max-nodes", r.max_nodes, "most instances per plan")->capture_default_str();
      sub.add_option("--margin", r.margin, "memory margin: fits when used ≤ (1 − margin) × capacity")->capture_default_str();
      sub.add_flag("--no-spot", [&r](std::int64_t) { r.allow_spot = false; }, "plan on-demand and reserved prices only");
      sub.add_option_function<double>("--preemptions-per-day", [&r](const double& v) { r.preemptions_per_day = v; },
                                      "spot preemption rate (default: the provider's, with source)");
      sub.add_option_function<double>("--egress-gb", [&r](const double& v) { r.egress_gb = v; },
                                      "GB downloaded at the end (default: the final weights)");
      sub.add_option_function<double>("--checkpoint-write-gbps", [&r](const double& v) { r.checkpoint_write_bytes_per_s = v * 1e9; },
                                      "checkpoint write rate per instance, GB/s (default 1)");
      sub.add_option("--restart-seconds", r.restart_seconds, "time to restart after a preemption")->capture_default_str();
      sub.add_option("--today", r.today, "today's date YYYY-MM-DD for staleness (default: the system clock, UTC)");
      sub.add_option("--stale-days", r.stale_after_days, "a price older than this many days is stale")->capture_default_str();
      sub.add_option("--sort", o->sort, "cost or time")->capture_default_str();
      sub.add_flag("--pareto", r.pareto_only, "only plans on the cost/time Pareto front");
      sub.add_option("--limit", r.limit, "plans printed")->capture_default_str();
      sub.add_flag("--json", o->json, "print JSON (SI units: bytes, seconds, USD)");
      sub.add_option_function<std::size_t>("--explain", [o](const std::size_t& n) { o->explain = n; },
                                           "print every number of plan N with its formula");
      sub.callback([o, &global] {
        PlanRequest& req = o->request;
        if (o->task == "images" || o->task == "image") {
          req.workload = PlanWorkload::image_generation;
          req.task = Task::serve;
        } else {
          req.task = parse_task(o->task, "--task");
          if (req.task == Task::serve) {
            req.workload = req.requests ? PlanWorkload::batch_generation : PlanWorkload::serving;
          } else {
            req.workload = PlanWorkload::training;
          }
        }
        if (!o->precision.empty()) req.precision = parse_train_precision(o->precision, "--precision");
        if (!o->optimizer.empty()) req.optimizer = parse_optimizer(o->optimizer, "--optimizer");
        if (!o->quant.empty()) req.quant = parse_weight_quant(o->quant, "--quant");
        if (!o->kv_dtype.empty()) req.kv_dtype = parse_kv_dtype(o->kv_dtype, "--kv-dtype");
        if (o->sort == "cost") {
          req.sort = PlanSort::cost;
        } else if (o->sort == "time") {
          req.sort = PlanSort::time;
        } else {
          throw_invalid("--sort", o->sort, "cost or time");
        }
        if (req.today.empty()) req.today = SystemClock().today();
        if (o->explain && *o->explain == 0) throw_invalid("--explain", "0", "a plan number ≥ 1");
        if (o->explain && *o->explain > req.limit) req.limit = *o->explain;
        req.validate();

        const ModelArch arch = resolve_model(req.model);  // IO at the edge
        const GpuCatalog& gpus = gpu_catalog(global);
        auto store = open_store(global.db_path, StoreContext{gpus, SystemClock()});
        OfferQuery q;
        q.filter = req.filter;
        q.now_date = req.today;
        q.stale_after_days = req.stale_after_days;
        const std::vector<Offer> offers = store->query(q);

        const PlanResult res = plan(req, arch, offers, gpus, &billing_of);
        if (o->explain) {
          if (*o->explain > res.plans.size()) {
            throw_invalid("--explain", fmt::format("plan {} does not exist ({} plans)", *o->explain, res.plans.size()),
                          fmt::format("a plan number in [1, {}]", res.plans.size()));
          }
          const auto lines = explain_plan(req, arch, res.plans[*o->explain - 1], gpus);
          if (o->json) {
            json a = json::array();
            for (const auto& l : lines) {
              a.push_back({{"term", l.term}, {"value", l.value}, {"unit", l.unit}, {"formula", l.formula}, {"source", l.source}});
            }
            fmt::print("{}\n", json{{"plan", plan_json(res.plans[*o->explain - 1], *o->explain)}, {"explain", a}}.dump(2));
          } else {
            print_explain(res, lines, *o->explain);
          }
          return;
        }
        if (o->json) {
          fmt::print("{}\n", result_json(req, res).dump(2));
        } else if (res.no_plan) {
          print_no_plan(res);
        } else {
          print_table(req, res);
        }
        if (res.no_plan) global.exit_code = kExitNoPlan;
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
