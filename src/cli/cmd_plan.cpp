// `gpuplan plan [FILTER] --model M --task T ...`: the main job. Parses flags into a PlanRequest,
// reads the offers from the store (the only IO), calls planner::plan() and renders the plans as a
// table, JSON, or one plan's explanation. Computes no numbers itself (STYLE.md §1).
//
// Exit codes: 0 plans printed; 1 no offer can run the workload (the reason and what would make
// it fit are printed: an answer, like grep's "no match", not an error); 2-5/70 errors (error.hpp).
#include <fmt/core.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "catalog/providers.hpp"
#include "catalog/open_store.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "cli/model_flags.hpp"
#include "cli/plan_render.hpp"
#include "hardware/gpu_spec.hpp"
#include "model/model_source.hpp"
#include "planner/planner.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

using nlohmann::json;

/// Exit code when no offer can run the workload (documented in docs/planner.md).
constexpr int kExitNoPlan = 1;

struct PlanOptions {
  PlanRequest request;
  std::string task{task_name(workload_defaults::kTask)};  // sizing/workload_defaults.hpp
  std::string precision, optimizer, quant, kv_dtype, sort = "recommended";
  std::string deadline, max_price_age, recompute;
  bool json = false;
  std::optional<std::size_t> explain;
};

BillingTerms billing_of(const Offer& offer) {
  return effective_billing(offer, find_provider(bundled_providers(), offer.provider));
}

json result_json(const PlanRequest& r, const PlanResult& res) { return api::plan_result_json(r, res); }

std::string short_gpu(const std::string& name) {
  return name.rfind("NVIDIA ", 0) == 0 ? name.substr(7) : name;
}

std::string price_date(const Plan& p) { return p.price_source.observed_at.value_or("undated"); }

void print_warning_line(const std::string& prefix, const PlanWarning& w, int width) {
  fmt::print("{}", wrap_text(fmt::format("{}[{}] {}", prefix, w.name(), w.message), width, "      "));
}

void print_table(const PlanRequest& r, const PlanResult& res) {
  const bool training = r.workload == PlanWorkload::training;
  const bool images = r.workload == PlanWorkload::image_generation;
  const int width = terminal_columns();
  TextTable t;
  t.header = {"#", "provider", "instance", "n", "GPU", "layout", "mem/GPU", training ? "tok/s" : (images ? "img/h" : "tok/s"),
              "time", "total", "$/h", "price date", "regions"};
  t.right_align = {true, false, false, true, false, false, true, true, true, true, true, false, false};
  for (std::size_t i = 0; i < res.plans.size(); ++i) {
    const Plan& p = res.plans[i];
    std::string regions = p.regions.empty() || p.regions.front().empty() ? std::string("-") : p.regions.front();
    if (p.regions.size() > 1) regions += fmt::format(" +{}", p.regions.size() - 1);
    t.rows.push_back({fmt::format("{}{}{}", i + 1, p.on_pareto_front ? "*" : "", p.recommended ? "R" : ""),
                      clip(p.provider, 12), clip(p.instance_type, 24), fmt::format("{}", p.instances),
                      fmt::format("{}×{}", p.gpus_per_instance, clip(short_gpu(p.gpu_name), 13)), layout_text(p),
                      fmt::format("{:.0f}/{:.0f}G", p.per_gpu_memory_bytes / 1e9, p.gpu_memory_capacity_bytes / 1e9),
                      images ? rate_text(p.images_per_hour.value_or(0)) : rate_text(p.tokens_per_s),
                      duration_text(p.time_seconds()), (p.cost.total_is_lower_bound() ? "≥" : "") + usd_text(p.total_usd()),
                      fmt::format("{:.2f}{}", p.cost.usd_per_hour,
                                  p.cost.price_kind == PriceKind::on_demand ? "" :
                                  p.cost.price_kind == PriceKind::spot ? " s" : " r"),
                      price_date(p) + (p.demotion_tier == 2 && !r.include_flagged ? "!" : ""), clip(regions, 14)});
  }
  // Fit the terminal: drop columns from the right end of the least needed ones.
  std::string table = t.render();
  auto widest = [](const std::string& s) {
    std::size_t w = 0, cur = 0;
    for (unsigned char c : s) {
      if (c == '\n') { w = std::max(w, cur); cur = 0; }
      else if ((c & 0xC0) != 0x80) ++cur;
    }
    return std::max(w, cur);
  };
  for (std::size_t drop : {6u, 10u, 6u}) {  // mem/GPU, then price date, then tok/s
    if (widest(table) <= static_cast<std::size_t>(width)) break;
    t.header.erase(t.header.begin() + static_cast<std::ptrdiff_t>(drop));
    t.right_align.erase(t.right_align.begin() + static_cast<std::ptrdiff_t>(drop));
    for (auto& row : t.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(drop));
    table = t.render();
  }
  // Still too wide: clip the instance, regions, provider and GPU cells (details in --json).
  auto cell_width = [](const std::string& c) {
    std::size_t n = 0;
    for (unsigned char ch : c) n += (ch & 0xC0) != 0x80;
    return n;
  };
  const std::size_t last = t.header.size() - 1;
  for (std::size_t col : {std::size_t{2}, last, std::size_t{1}, std::size_t{4}}) {
    const std::size_t w = widest(table);
    if (w <= static_cast<std::size_t>(width)) break;
    std::size_t colw = cell_width(t.header[col]);
    for (const auto& row : t.rows) colw = std::max(colw, cell_width(row[col]));
    const std::size_t target = std::max<std::size_t>(8, colw > w - width ? colw - (w - width) : 8);
    for (auto& row : t.rows) row[col] = clip(row[col], target);
    table = t.render();
  }
  fmt::print("{}", table);
  std::string footer = fmt::format(
      "{} of {} plans ({} offers considered, {} skipped, {} layouts). * = cost/time Pareto front; R = recommended "
      "({}); sorted by {}. $/h per instance (s spot, r reserved); prices flagged (!), undated or older than "
      "--max-price-age rank after clean ones. ≥ = storage or egress price unknown. Details: --explain N, --json.",
      res.plans.size(), res.plans_total, res.offers_considered, res.offers_skipped, res.layouts_evaluated,
      res.recommendation_rule.empty() ? "none" : res.recommendation_rule.substr(res.recommendation_rule.find(':') + 2),
      res.sort_applied == PlanSort::recommended ? "recommended, then total cost"
      : res.sort_applied == PlanSort::cost      ? "total cost"
                                                : "time to finish");
  fmt::print("{}", wrap_text(footer, width, ""));
  if (images) {
    for (std::size_t i = 0; i < res.plans.size(); ++i) {
      fmt::print("  #{}: {} per 1,000 images\n", i + 1,
                 res.plans[i].usd_per_1000_images ? usd_text(*res.plans[i].usd_per_1000_images) : "unknown");
    }
  }
  for (std::size_t i = 0; i < res.plans.size(); ++i) {
    for (const auto& w : res.plans[i].warnings) {
      if (w.code == PlanWarningCode::billing_assumption || w.code == PlanWarningCode::price_date_unknown ||
          w.code == PlanWarningCode::not_confirmed_available || w.code == PlanWarningCode::link_assumed)
        continue;
      print_warning_line(fmt::format("  #{} ", i + 1), w, width);
    }
  }
  std::size_t undated = 0, unconfirmed = 0, assumed = 0, link = 0;
  for (const auto& p : res.plans) {
    for (const auto& w : p.warnings) {
      undated += w.code == PlanWarningCode::price_date_unknown;
      unconfirmed += w.code == PlanWarningCode::not_confirmed_available;
      assumed += w.code == PlanWarningCode::billing_assumption;
      link += w.code == PlanWarningCode::link_assumed;
    }
  }
  auto summary = [&](std::size_t n, PlanWarningCode c, const char* what) {
    if (n) print_warning_line("  ", PlanWarning{c, fmt::format("{} plans {}", n, what)}, width);
  };
  summary(undated, PlanWarningCode::price_date_unknown, "have prices whose source gives no date");
  summary(unconfirmed, PlanWarningCode::not_confirmed_available, "use listed prices never confirmed available");
  summary(assumed, PlanWarningCode::billing_assumption, "assume unknown billing terms (see --explain N)");
  summary(link, PlanWarningCode::link_assumed, "assume the intra-node link from the GPU datasheet");
  for (const auto& w : res.warnings) print_warning_line("", w, width);
}

void print_no_plan(const PlanResult& res) {
  const NoPlanReason& np = *res.no_plan;
  const int width = terminal_columns();
  fmt::print("{}", wrap_text(fmt::format("No plan: {}", np.reason), width, "  "));
  for (const auto& s : np.suggestions) fmt::print("{}", wrap_text(fmt::format("  would help: {}", s), width, "    "));
  fmt::print("({} offers considered, {} skipped, {} layouts evaluated)\n", res.offers_considered, res.offers_skipped,
             res.layouts_evaluated);
  for (const auto& w : res.warnings) print_warning_line("", w, width);
}

void print_explain(const PlanResult& res, const std::vector<PlanExplainLine>& lines, std::size_t n) {
  const Plan& p = res.plans[n - 1];
  fmt::print("Plan {}: {} {} × {} ({}×{}), {} ${:.4f}/h ({}, {})\n", n, p.provider, p.instance_type, p.instances,
             p.gpus_per_instance, p.gpu_name, price_kind_name(p.cost.price_kind), p.cost.usd_per_hour,
             p.price_source.dataset, price_date(p));
  TextTable t;
  t.header = {"term", "value", "unit", "formula", "source"};
  t.right_align = {false, true, false, false, false};
  for (const auto& l : lines) t.rows.push_back({l.term, fmt::format("{:.6g}", l.value), l.unit, l.formula, l.source});
  fmt::print("{}", t.render());
  for (const auto& w : p.warnings) fmt::print("warning [{}]: {}\n", w.name(), w.message);
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
      sub.add_option("--precision", o->precision, std::string(workload_defaults::kPrecisionHelp));
      sub.add_option("--optimizer", o->optimizer, std::string(workload_defaults::kOptimizerHelp));
      sub.add_option("--lora-rank", r.lora_rank, "LoRA rank r")->capture_default_str();
      sub.add_option("--quant", o->quant, "served weights: " + std::string(workload_defaults::kQuantHelp));
      sub.add_option("--kv-dtype", o->kv_dtype, "KV cache: " + std::string(workload_defaults::kKvDtypeHelp));
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
      sub.add_option("--deadline", o->deadline, "only plans that finish within DURATION (72h, 30d, 2w), cheapest first");
      sub.add_option_function<double>("--budget", [&r](const double& v) { r.budget_usd = v; },
                                      "only plans whose total is within USD, fastest first");
      sub.add_option_function<int>("--gpus", [&r](const int& v) { r.gpus_total = v; },
                                   "training: exactly N GPUs (a multiple of the offer's GPUs per node)");
      sub.add_option_function<int>("--nodes", [&r](const int& v) { r.nodes_exact = v; }, "training: exactly N nodes");
      sub.add_option_function<int>("--tp", [&r](const int& v) { r.pins.tp = v; }, "pin the tensor-parallel degree");
      sub.add_option_function<int>("--pp", [&r](const int& v) { r.pins.pp = v; },
                                   "pin the pipeline-parallel degree (uneven stages allowed)");
      sub.add_option_function<int>("--dp", [&r](const int& v) { r.pins.dp = v; }, "pin the data-parallel degree");
      sub.add_option_function<int>("--ep", [&r](const int& v) { r.pins.ep = v; }, "pin the expert-parallel degree (MoE; must divide dp)");
      sub.add_option_function<int>("--cp", [&r](const int& v) { r.pins.cp = v; }, "context-parallel degree (only 1: not modelled)");
      sub.add_option_function<int>("--zero", [&r](const int& v) { r.pins.zero_stage = v; }, "pin the ZeRO stage 0-3 (FSDP full shard = 3)");
      sub.add_option_function<int>("--micro-batch", [&r](const int& v) { r.pins.micro_batch = v; },
                                   "pin the sequences per micro-batch per GPU");
      sub.add_option("--recompute", o->recompute, "pin activation recomputation: none, selective, full");
      sub.add_option_function<int>("--virtual-stages", [&r](const int& v) { r.pins.virtual_stages = v; },
                                   "interleaved pipeline chunks per GPU");
      sub.add_option_function<double>("--mfu", [&r](const double& v) { r.mfu_override = v; },
                                      "override: step time = model FLOP / (GPUs × peak × MFU)");
      sub.add_option_function<double>("--goodput", [&r](const double& v) { r.goodput_override = v; },
                                      "fixed goodput fraction instead of the failure/checkpoint model");
      sub.add_option("--eval-fraction", r.evaluation_fraction, "evaluation pauses as a fraction of training time")
          ->capture_default_str();
      sub.add_option_function<double>("--failures-per-gpu-hour", [&r](const double& v) { r.failures_per_gpu_hour = v; },
                                      "hardware failure rate (default 1.97e-5: Llama 3, Dubey et al. 2024 §3.3.4)");
      sub.add_option("--max-price-age", o->max_price_age,
                     "prices older than this (days, or 90d/12w) rank after fresh ones (default 90)");
      sub.add_flag("--include-flagged", r.include_flagged, "rank flagged, undated and old prices like the others");
      sub.add_option("--sort", o->sort, "recommended, cost or time")->capture_default_str();
      sub.add_flag("--pareto", r.pareto_only, "only plans on the cost/time Pareto front");
      sub.add_option("--limit", r.limit, "plans printed")->capture_default_str()->check(non_negative_count());
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
        } else if (o->sort == "recommended") {
          req.sort = PlanSort::recommended;
        } else {
          throw_invalid("--sort", o->sort, "recommended, cost or time");
        }
        if (!o->deadline.empty()) req.deadline_seconds = parse_duration_seconds(o->deadline, "--deadline");
        if (!o->max_price_age.empty()) {
          const std::string& a = o->max_price_age;
          const bool bare = a.find_first_not_of("0123456789.") == std::string::npos;
          req.max_price_age_days = parse_duration_seconds(bare ? a + "d" : a, "--max-price-age") / 86400.0;
        }
        if (!o->recompute.empty()) req.pins.recompute = parse_recompute(o->recompute, "--recompute");
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
            fmt::print("{}\n", dump_json(json{{"plan", plan_json(res.plans[*o->explain - 1], *o->explain)}, {"explain", a}}));
          } else {
            print_explain(res, lines, *o->explain);
          }
          return;
        }
        if (o->json) {
          fmt::print("{}\n", dump_json(result_json(req, res)));
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
