#include "api/plan.hpp"

#include <fmt/core.h>

#include "api/model_fields.hpp"
#include "catalog/providers.hpp"
#include "util/error.hpp"

namespace gpuplan::api {

using nlohmann::json;

namespace {
ModelSource& plan_model(PlanInput& in) { return in.request.model; }
}  // namespace

namespace {

BillingTerms bundled_billing_of(const Offer& offer) {
  return effective_billing(offer, find_provider(bundled_providers(), offer.provider));
}

std::vector<FieldDef<PlanInput>> build_fields() {
  using In = PlanInput;
  std::vector<FieldDef<In>> f = model_fields<In, &plan_model>();
  std::vector<FieldDef<In>> rest = {
      {{"filter", "", FieldType::string, FieldFace::both,
        "offers to plan on, in the offers filter language, e.g. 'gpu=H100 gpus>=8'"},
       [](In& in, const json& v) { in.request.filter = v.get<std::string>(); }},
      {{"task", "--task", FieldType::string, FieldFace::both,
        "pretrain, full, lora (default), qlora, serve (with rps/concurrency, or requests for a batch job), images"},
       [](In& in, const json& v) { in.task = v.get<std::string>(); }},
      {{"tokens", "--tokens", FieldType::count, FieldFace::both, "tokens to train on (2e12, 500M)"},
       [](In& in, const json& v) { in.request.tokens = count_value(v); }},
      {{"dataset_tokens", "--dataset-tokens", FieldType::count, FieldFace::both, "tokens in the dataset (× epochs)"},
       [](In& in, const json& v) { in.request.dataset_tokens = count_value(v); }},
      {{"epochs", "--epochs", FieldType::number, FieldFace::both, "passes over dataset_tokens (default 1)"},
       [](In& in, const json& v) { in.request.epochs = v.get<double>(); }},
      {{"seq", "--seq", FieldType::integer, FieldFace::both, "tokens per training sequence (default 4096)"},
       [](In& in, const json& v) { in.request.seq_len = json_as<std::int64_t>(v); }},
      {{"global_batch", "--global-batch", FieldType::integer, FieldFace::both,
        "sequences per optimizer step (0 = default by task)"},
       [](In& in, const json& v) { in.request.global_batch_seqs = json_as<std::int64_t>(v); }},
      {{"precision", "--precision", FieldType::string, FieldFace::both, "bf16 (default), fp16, fp8, fp32, bf16_pure"},
       [](In& in, const json& v) { in.precision = v.get<std::string>(); }},
      {{"optimizer", "--optimizer", FieldType::string, FieldFace::both, "adamw (default), adamw_8bit, sgd_momentum, adafactor, lion"},
       [](In& in, const json& v) { in.optimizer = v.get<std::string>(); }},
      {{"lora_rank", "--lora-rank", FieldType::integer, FieldFace::both, "LoRA rank r (default 16)"},
       [](In& in, const json& v) { in.request.lora_rank = json_as<int>(v); }},
      {{"quant", "--quant", FieldType::string, FieldFace::both,
        "served weights: bf16 (default), fp16, fp8, int8, int4, nf4, q4_k_m, q8_0"},
       [](In& in, const json& v) { in.quant = v.get<std::string>(); }},
      {{"kv_dtype", "--kv-dtype", FieldType::string, FieldFace::both, "KV cache: bf16 (default), fp16, fp8, int8, int4"},
       [](In& in, const json& v) { in.kv_dtype = v.get<std::string>(); }},
      {{"prompt_tokens", "--prompt-tokens", FieldType::integer, FieldFace::both, "prompt tokens per request (default 1000)"},
       [](In& in, const json& v) { in.request.prompt_tokens = json_as<std::int64_t>(v); }},
      {{"output_tokens", "--output-tokens", FieldType::integer, FieldFace::both, "generated tokens per request (default 250)"},
       [](In& in, const json& v) { in.request.output_tokens = json_as<std::int64_t>(v); }},
      {{"rps", "--rps", FieldType::number, FieldFace::both, "serving: target requests per second"},
       [](In& in, const json& v) { in.request.requests_per_s = v.get<double>(); }},
      {{"concurrency", "--concurrency", FieldType::integer, FieldFace::both, "serving: users (sequences) served at once"},
       [](In& in, const json& v) { in.request.concurrency = json_as<std::int64_t>(v); }},
      {{"hours", "--hours", FieldType::number, FieldFace::both, "serving: hours the service runs (default 720)"},
       [](In& in, const json& v) { in.request.hours = v.get<double>(); }},
      {{"requests", "--requests", FieldType::count, FieldFace::both, "batch generation: requests to complete"},
       [](In& in, const json& v) { in.request.requests = count_value(v); }},
      {{"width", "--width", FieldType::integer, FieldFace::both, "images: width in pixels (default 1024)"},
       [](In& in, const json& v) { in.request.image_width = json_as<std::int64_t>(v); }},
      {{"height", "--height", FieldType::integer, FieldFace::both, "images: height in pixels (default 1024)"},
       [](In& in, const json& v) { in.request.image_height = json_as<std::int64_t>(v); }},
      {{"steps", "--steps", FieldType::integer, FieldFace::both, "images: denoising steps"},
       [](In& in, const json& v) { in.request.denoising_steps = json_as<decltype(in.request.denoising_steps)>(v); }},
      {{"images", "--images", FieldType::count, FieldFace::both, "images: how many to generate"},
       [](In& in, const json& v) { in.request.images = static_cast<decltype(in.request.images)>(count_value(v)); }},
      {{"max_nodes", "--max-nodes", FieldType::integer, FieldFace::both, "most instances per plan"},
       [](In& in, const json& v) { in.request.max_nodes = json_as<decltype(in.request.max_nodes)>(v); }},
      {{"margin", "--margin", FieldType::number, FieldFace::both, "memory margin: fits when used ≤ (1 − margin) × capacity"},
       [](In& in, const json& v) { in.request.margin = v.get<double>(); }},
      {{"no_spot", "--no-spot", FieldType::boolean, FieldFace::both, "plan on-demand and reserved prices only"},
       [](In& in, const json& v) { in.request.allow_spot = !v.get<bool>(); }},
      {{"preemptions_per_day", "--preemptions-per-day", FieldType::number, FieldFace::both,
        "spot preemption rate (default: the provider's, with source)"},
       [](In& in, const json& v) { in.request.preemptions_per_day = v.get<double>(); }},
      {{"egress_gb", "--egress-gb", FieldType::number, FieldFace::both, "GB downloaded at the end (default: the final weights)"},
       [](In& in, const json& v) { in.request.egress_gb = v.get<double>(); }},
      {{"checkpoint_write_gbps", "--checkpoint-write-gbps", FieldType::number, FieldFace::both,
        "checkpoint write rate per instance, GB/s (default 1)"},
       [](In& in, const json& v) { in.request.checkpoint_write_bytes_per_s = v.get<double>() * 1e9; }},
      {{"restart_seconds", "--restart-seconds", FieldType::number, FieldFace::both, "time to restart after a preemption"},
       [](In& in, const json& v) { in.request.restart_seconds = v.get<double>(); }},
      {{"today", "--today", FieldType::string, FieldFace::both,
        "today's date YYYY-MM-DD for staleness (default: the system clock, UTC)"},
       [](In& in, const json& v) { in.request.today = v.get<std::string>(); }},
      {{"stale_days", "--stale-days", FieldType::number, FieldFace::both, "a price older than this many days is stale"},
       [](In& in, const json& v) { in.request.stale_after_days = v.get<double>(); }},
      {{"sort", "--sort", FieldType::string, FieldFace::both, "cost (default) or time"},
       [](In& in, const json& v) { in.sort = v.get<std::string>(); }},
      {{"pareto", "--pareto", FieldType::boolean, FieldFace::both, "only plans on the cost/time Pareto front"},
       [](In& in, const json& v) { in.request.pareto_only = v.get<bool>(); }},
      {{"limit", "--limit", FieldType::integer, FieldFace::both, "plans returned (default 10)"},
       [](In& in, const json& v) { in.request.limit = json_as<decltype(in.request.limit)>(v); }},
      {{"explain", "--explain", FieldType::integer, FieldFace::both, "every number of plan N with its formula"},
       [](In& in, const json& v) { in.explain = json_as<std::size_t>(v); }},
  };
  f.insert(f.end(), rest.begin(), rest.end());
  return f;
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

}  // namespace

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

namespace {
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

}  // namespace

std::span<const FieldDef<PlanInput>> plan_fields() {
  static const std::vector<FieldDef<PlanInput>> fields = build_fields();
  return fields;
}

PlanOutput run_plan(const PlanInput& in, const Context& ctx) {
  PlanOutput out;
  PlanRequest& req = out.request;
  req = in.request;
  if (in.task == "images" || in.task == "image") {
    req.workload = PlanWorkload::image_generation;
    req.task = Task::serve;
  } else {
    req.task = parse_task(in.task, "--task");
    if (req.task == Task::serve) {
      req.workload = req.requests ? PlanWorkload::batch_generation : PlanWorkload::serving;
    } else {
      req.workload = PlanWorkload::training;
    }
  }
  if (!in.precision.empty()) req.precision = parse_train_precision(in.precision, "--precision");
  if (!in.optimizer.empty()) req.optimizer = parse_optimizer(in.optimizer, "--optimizer");
  if (!in.quant.empty()) req.quant = parse_weight_quant(in.quant, "--quant");
  if (!in.kv_dtype.empty()) req.kv_dtype = parse_kv_dtype(in.kv_dtype, "--kv-dtype");
  if (in.sort == "cost") {
    req.sort = PlanSort::cost;
  } else if (in.sort == "time") {
    req.sort = PlanSort::time;
  } else {
    throw_invalid("--sort", in.sort, "cost or time");
  }
  if (req.today.empty()) req.today = ctx.clock().today();
  if (in.explain && *in.explain == 0) throw_invalid("--explain", "0", "a plan number ≥ 1");
  if (in.explain && *in.explain > req.limit) req.limit = *in.explain;
  req.validate();

  out.arch = resolve_model(req.model);
  OfferQuery q;
  q.filter = req.filter;
  q.now_date = req.today;
  q.stale_after_days = req.stale_after_days;
  std::vector<Offer> offers;
  {
    std::lock_guard<std::mutex> lock(ctx.store_mutex());
    offers = ctx.store().query(q);
  }
  out.result = plan(req, out.arch, offers, ctx.gpus(), &bundled_billing_of);
  if (in.explain) {
    if (*in.explain > out.result.plans.size()) {
      throw_invalid("--explain", fmt::format("plan {} does not exist ({} plans)", *in.explain, out.result.plans.size()),
                    fmt::format("a plan number in [1, {}]", out.result.plans.size()));
    }
    out.explain = in.explain;
    out.explain_lines = explain_plan(req, out.arch, out.result.plans[*in.explain - 1], ctx.gpus());
  }
  return out;
}

json to_json(const PlanOutput& out) {
  if (out.explain) {
    json a = json::array();
    for (const auto& l : out.explain_lines) {
      a.push_back({{"term", l.term}, {"value", l.value}, {"unit", l.unit}, {"formula", l.formula}, {"source", l.source}});
    }
    return json{{"plan", plan_json(out.result.plans[*out.explain - 1], *out.explain)}, {"explain", a}};
  }
  return result_json(out.request, out.result);
}

}  // namespace gpuplan::api
