#include "api/plan.hpp"

#include <fmt/core.h>

#include <cmath>
#include <limits>

#include "api/model_fields.hpp"
#include "api/plan_json.hpp"
#include "api/training_fields.hpp"
#include "catalog/providers.hpp"
#include "sizing/workload_defaults.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan::api {

namespace {
/// An integer field with its accepted range: a whole number outside it says so and gives the
/// range (a trial's --max-nodes 99999999999 read "far outside the field's range", no range).
/// The ranges are PlanRequest::validate's (docs/planner.md), which checks them again.
int int_in_range(const nlohmann::json& v, int lo, int hi) {
  const double d = v.get<double>();
  if (d < lo || d > hi) {
    throw_invalid_coded("", "integer_out_of_range",
                        {{"value", field_value_text(v)}, {"min", fmt::format("{}", lo)}, {"max", fmt::format("{}", hi)}},
                        // The range once, in the expected part (not "accepted 1 to 1024 (expected: an integer in [1, 1024])").
                        fmt::format("{} is out of range", field_value_text(v)),
                        fmt::format("an integer in [{}, {}]", lo, hi));
  }
  return static_cast<int>(d);
}

/// A latency in milliseconds (ttft_ms, tpot_ms), checked here in the unit typed: the request holds
/// seconds, and its own check echoed "-0.005" for a typed `--tpot-ms -5` (issue 11).
double positive_ms(const nlohmann::json& v) {
  const double ms = v.get<double>();
  if (!(ms > 0))
    throw_invalid_coded("", "not_positive", {{"value", field_value_text(v)}},
                        fmt::format("{} ms is not a positive time", field_value_text(v)),
                        "a number of milliseconds > 0, e.g. 200");
  return ms;
}
}  // namespace

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
  for (auto& d : training_run_fields<In>()) f.push_back(std::move(d));
  for (auto& d : training_layout_fields<In>()) f.push_back(std::move(d));
  // The choices as --help, the errors (sizing/memory_names.cpp) and the size command list them;
  // static: FieldInfo::help is a view.
  static const std::string kQuantFieldHelp = "served weights: " + std::string(workload_defaults::kQuantHelp);
  static const std::string kKvFieldHelp = "KV cache: " + std::string(workload_defaults::kKvDtypeHelp);
  std::vector<FieldDef<In>> rest = {
      {{"filter", "", FieldType::string, FieldFace::both,
        "offers to plan on, in the offers filter language, e.g. 'gpu=H100 gpus>=8'"},
       [](In& in, const json& v) { in.request.filter = v.get<std::string>(); }},
      {{"task", "--task", FieldType::string, FieldFace::both,
        "pretrain, full, lora (default), qlora, serve (with rps/concurrency, or requests for a batch job), images"},
       [](In& in, const json& v) { in.task = v.get<std::string>(); }},
      {{"quant", "--quant", FieldType::string, FieldFace::both,
        kQuantFieldHelp, {}, task_bits::serve | task_bits::images},
       [](In& in, const json& v) { in.quant = v.get<std::string>(); }},
      {{"kv_dtype", "--kv-dtype", FieldType::string, FieldFace::both, kKvFieldHelp, {}, task_bits::serve},
       [](In& in, const json& v) { in.kv_dtype = v.get<std::string>(); }},
      {{"engine", "--engine", FieldType::string, FieldFace::both,
        "serving engine whose efficiency set is assumed: vllm (default), tensorrt-llm, sglang, llama.cpp", {}, task_bits::serve},
       [](In& in, const json& v) { in.engine = v.get<std::string>(); }},
      {{"prompt_tokens", "--prompt-tokens", FieldType::integer, FieldFace::both, "prompt tokens per request (default 1000)", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.prompt_tokens = json_as<std::int64_t>(v); }},
      {{"output_tokens", "--output-tokens", FieldType::integer, FieldFace::both, "generated tokens per request (default 250)", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.output_tokens = json_as<std::int64_t>(v); }},
      {{"rps", "--rps", FieldType::number, FieldFace::both, "serving: target requests per second", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.requests_per_s = v.get<double>(); }},
      {{"concurrency", "--concurrency", FieldType::integer, FieldFace::both, "serving: users (sequences) served at once", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.concurrency = json_as<std::int64_t>(v); }},
      {{"ttft_ms", "--ttft-ms", FieldType::number, FieldFace::both,
        "serving: time to first token at most this many ms (default target 2000 with tpot_ms 200, MLPerf Llama-2-70B server)", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.ttft_seconds = positive_ms(v) / 1e3; }},
      {{"tpot_ms", "--tpot-ms", FieldType::number, FieldFace::both,
        "serving: time per output token at most this many ms (default target 200)", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.tpot_seconds = positive_ms(v) / 1e3; }},
      {{"hours", "--hours", FieldType::number, FieldFace::both, "serving: hours the service runs (default 720)", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.hours = v.get<double>(); }},
      {{"requests", "--requests", FieldType::count, FieldFace::both, "batch generation: requests to complete", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.requests = count_value(v); }},
      {{"width", "--width", FieldType::integer, FieldFace::both, "images: width in pixels (default 1024)", {}, task_bits::images},
       [](In& in, const json& v) { in.request.image_width = json_as<std::int64_t>(v); }},
      {{"height", "--height", FieldType::integer, FieldFace::both, "images: height in pixels (default 1024)", {}, task_bits::images},
       [](In& in, const json& v) { in.request.image_height = json_as<std::int64_t>(v); }},
      {{"steps", "--steps", FieldType::integer, FieldFace::both, "images: denoising steps (default 30; 1-1000: the noise levels a diffusion model is trained on, DDPM T = 1000)", {}, task_bits::images},
       [](In& in, const json& v) { in.request.denoising_steps = json_as<decltype(in.request.denoising_steps)>(v); }},
      {{"images", "--images", FieldType::count, FieldFace::both, "images: how many to generate", {}, task_bits::images},
       [](In& in, const json& v) { in.request.images = static_cast<decltype(in.request.images)>(count_value(v)); }},
      {{"max_nodes", "--max-nodes", FieldType::integer, FieldFace::both, "most instances per plan"},
       [](In& in, const json& v) { in.request.max_nodes = int_in_range(v, 1, 1024); }},
      {{"max_gpus", "--max-gpus", FieldType::integer, FieldFace::both,
        "most GPUs per plan, all instances together (\"at most 8 GPUs\")"},
       [](In& in, const json& v) { in.request.max_gpus = int_in_range(v, 1, 1048576); }},
      {{"no_spot", "--no-spot", FieldType::boolean, FieldFace::both, "plan on-demand and reserved prices only"},
       [](In& in, const json& v) { in.request.allow_spot = !v.get<bool>(); }},
      {{"preemptions_per_day", "--preemptions-per-day", FieldType::number, FieldFace::both,
        "spot preemptions per instance per day (default: the provider's, with source); a job on N instances sees N times as many "
        "(spot is planned for training only)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.preemptions_per_day = v.get<double>(); }},
      {{"egress_gb", "--egress-gb", FieldType::number, FieldFace::both, "GB downloaded at the end (default: the final weights)"},
       [](In& in, const json& v) { in.request.egress_gb = v.get<double>(); }},
      {{"today", "--today", FieldType::string, FieldFace::both,
        "today's date YYYY-MM-DD for staleness (default: the system clock, UTC)"},
       [](In& in, const json& v) { in.request.today = v.get<std::string>(); }},
      {{"stale_days", "--stale-days", FieldType::number, FieldFace::both,
        "the same limit as --max-price-age, in days (default 30)", "max_price_age"},
       [](In& in, const json& v) {
         // Checked here, under the name typed: the request's own check names --max-price-age,
         // which the user did not type (issue 11).
         const double d = v.get<double>();
         if (!(d > 0) || !std::isfinite(d))
           throw_invalid_coded("", "not_positive", {{"value", fmt::format("{}", d)}},
                               fmt::format("{} is not a positive number", d), "a number > 0");
         in.request.stale_after_days = d;
       }},
      {{"deadline", "--deadline", FieldType::duration, FieldFace::both,
        "only plans that finish within DURATION (72h, 30d, 2w; a bare number is hours), cheapest first"},
       [](In& in, const json& v) { in.deadline = duration_text(v); }},
      {{"budget", "--budget", FieldType::number, FieldFace::both, "only plans whose total is within USD, fastest first"},
       [](In& in, const json& v) { in.request.budget_usd = v.get<double>(); }},
      {{"gpus", "--gpus", FieldType::integer, FieldFace::both,
        "training: exactly N GPUs (a multiple of the offer's GPUs per node)"},
       [](In& in, const json& v) { in.request.gpus_total = v.get<double>() > 1e6 ? int_in_range(v, 1, 1'000'000) : json_as<int>(v); }},
      {{"nodes", "--nodes", FieldType::integer, FieldFace::both, "training: exactly N nodes"},
       [](In& in, const json& v) { in.request.nodes_exact = int_in_range(v, 1, 100'000); }},
      {{"max_price_age", "--max-price-age", FieldType::duration, FieldFace::both,
        "a price older than this (a bare number is days, or 30d/4w) is stale: warned and ranked after fresher ones (default 30)"},
       [](In& in, const json& v) { in.max_price_age = duration_text(v); }},
      {{"include_flagged", "--include-flagged", FieldType::boolean, FieldFace::both,
        "rank flagged, undated and old prices like the others"},
       [](In& in, const json& v) { in.request.include_flagged = v.get<bool>(); }},
      {{"all", "--all", FieldType::boolean, FieldFace::both,
        "also list plans slower than 30 days and 4× the recommended plan's time (hidden by default)"},
       [](In& in, const json& v) { in.request.show_all = v.get<bool>(); }},
      {{"sort", "--sort", FieldType::string, FieldFace::both, "recommended (default), cost or time"},
       [](In& in, const json& v) { in.sort = v.get<std::string>(); }},
      {{"pareto", "--pareto", FieldType::boolean, FieldFace::both, "only plans on the cost/time Pareto front"},
       [](In& in, const json& v) { in.request.pareto_only = v.get<bool>(); }},
      {{"limit", "--limit", FieldType::integer, FieldFace::both, "plans returned (default 10; 0 = all)"},
       [](In& in, const json& v) {
         // As `offers --limit`: a negative limit is refused with the accepted range (a trial's
         // `plan --limit -1` read "far outside the field's range", no range).
         if (v.get<double>() < 0)
           throw_invalid_coded("", "negative", {{"value", field_value_text(v)}}, fmt::format("{} is negative", field_value_text(v)), "an integer ≥ 0");
         if (v.get<double>() > 1e9)
           throw_invalid_coded("", "integer_out_of_range", {{"value", field_value_text(v)}, {"min", "0"}, {"max", "1000000000"}},
                               fmt::format("{} is out of range", field_value_text(v)), "an integer in [0, 1000000000] (0 = all)");
         in.request.limit = json_as<decltype(in.request.limit)>(v);
       }},
      {{"explain", "--explain", FieldType::integer, FieldFace::both, "every number of plan N with its formula"},
       // A plan number, 1 to the plans listed (trial48: -1 read "far outside the field's range").
       // (0 has its own message below: plans are numbered from 1).
       [](In& in, const json& v) {
         in.explain = v.get<double>() == 0 ? 0 : static_cast<std::size_t>(int_in_range(v, 1, 1'000'000));
       }},
      {{"all_offers", "--all-offers", FieldType::boolean, FieldFace::both,
        "plan on every matching offer (default: the cheapest of each machine, place and price evidence; the others never rank ahead of it)"},
       [](In& in, const json& v) { in.all_offers = v.get<bool>(); }},
  };
  f.insert(f.end(), rest.begin(), rest.end());
  return f;
}

}  // namespace

std::span<const FieldDef<PlanInput>> plan_fields() {
  static const std::vector<FieldDef<PlanInput>> fields = build_fields();
  return fields;
}

std::string search_memo_key(const nlohmann::json& body) {
  if (!body.is_object()) return {};
  nlohmann::json k = body;
  for (const char* f : {"tokens", "dataset_tokens", "epochs", "filter", "today", "stale_days", "max_price_age",
                        "include_flagged", "all", "no_spot", "preemptions_per_day", "deadline", "budget", "sort",
                        "pareto", "limit", "explain", "all_offers", "egress_gb", "hours"})
    k.erase(f);
  return k.dump();
}

void drop_import_suggestions(PlanOutput& out) {
  if (!out.result.no_plan) return;
  NoPlanReason& np = *out.result.no_plan;
  std::vector<std::string> suggestions, codes;
  for (std::size_t i = 0; i < np.suggestions.size(); ++i) {
    const std::string code = i < np.suggestion_codes.size() ? np.suggestion_codes[i] : std::string();
    if (code == "import_offers" || code == "import_cluster_quote") continue;
    suggestions.push_back(std::move(np.suggestions[i]));
    if (i < np.suggestion_codes.size()) codes.push_back(code);
  }
  np.suggestions = std::move(suggestions);
  np.suggestion_codes = std::move(codes);
}

PlanOutput run_plan(const PlanInput& in, const Context& ctx) {
  PlanOutput out;
  PlanRequest& req = out.request;
  req = in.request;
  if (in.task == "images" || in.task == "image") {
    req.workload = PlanWorkload::image_generation;
    req.task = Task::serve;
  } else {
    try {
      req.task = parse_task(in.task, "--task");
    } catch (const Error& e) {
      // plan also takes the image-generation task, which parse_task (sizing) does not know.
      const ErrorCode* c = error_code_of(e);
      if (c == nullptr || c->code != "unknown_choice") throw;
      std::map<std::string, std::string> values = c->values;
      values["allowed"] += ", images";
      throw_invalid_coded(e.where(), c->code, std::move(values), e.message(), e.expected() + ", images");
    }
    if (req.task == Task::serve) {
      req.workload = req.requests ? PlanWorkload::batch_generation : PlanWorkload::serving;
    } else {
      req.workload = PlanWorkload::training;
    }
  }
  // A field the task does not read is an error, not ignored (`--task lora --quant int4`).
  check_fields_for_task(in.given, plan_fields(), in.task);
  // Within --task serve: a batch job (--requests) is timed to finish all its requests; the fields
  // of a service over time (its load, latency targets, hours) would be ignored (trial46 D3: --tpot-ms
  // with --requests planned as if not given). A service runs for --hours, so a deadline has nothing
  // to bound (trial46 D10: the no-plan advice offered a longer --deadline).
  if (req.workload == PlanWorkload::batch_generation) {
    for (const auto& [name, flag] : {std::pair{"rps", "--rps"}, std::pair{"concurrency", "--concurrency"},
                                     std::pair{"ttft_ms", "--ttft-ms"}, std::pair{"tpot_ms", "--tpot-ms"},
                                     std::pair{"hours", "--hours"}})
      if (in.given.contains(name))
        throw_invalid_coded(flag, "batch_job_field", {{"a_field", name}},
                            fmt::format("{} does not apply to a batch job (--requests): it is timed to finish all its "
                                        "requests, not to serve users over time",
                                        flag),
                            "--requests alone (with --prompt-tokens, --output-tokens, --deadline, --budget), or no "
                            "--requests to plan a service");
  }
  // --nodes fixes the cluster; a --max-nodes below it cannot hold (trial47: 3 nodes were planned
  // under --max-nodes 2 without a word).
  if (in.given.contains("nodes") && in.given.contains("max_nodes") && req.nodes_exact && *req.nodes_exact > req.max_nodes)
    throw_invalid_coded("--nodes", "integer_out_of_range",
                        {{"value", fmt::format("{}", *req.nodes_exact)}, {"min", "1"}, {"max", fmt::format("{}", req.max_nodes)}},
                        fmt::format("{} nodes exceed --max-nodes {}", *req.nodes_exact, req.max_nodes),
                        fmt::format("at most --max-nodes ({}) nodes, or a larger --max-nodes", req.max_nodes));
  if (req.workload == PlanWorkload::serving && in.given.contains("deadline"))
    throw_invalid_coded("--deadline", "deadline_on_service", {},
                        "a service runs for its --hours; a deadline applies to a job that finishes (training, a batch "
                        "of --requests, images)",
                        "--hours H for the service's length, or --requests N for a batch job with a deadline");
  check_epochs_with_tokens(in.given);
  if (!in.precision.empty() || in.given.contains("precision")) req.precision = parse_train_precision(in.precision, "--precision");
  if (!in.optimizer.empty() || in.given.contains("optimizer")) req.optimizer = parse_optimizer(in.optimizer, "--optimizer");
  else if (req.stack) req.optimizer = stack_default_optimizer(*req.stack);  // Unsloth: 8-bit AdamW
  if (!in.quant.empty() || in.given.contains("quant")) req.quant = parse_weight_quant(in.quant, "--quant");
  if (!in.kv_dtype.empty() || in.given.contains("kv_dtype")) req.kv_dtype = parse_kv_dtype(in.kv_dtype, "--kv-dtype");
  if (!in.engine.empty() || in.given.contains("engine")) req.engine = parse_serving_engine(in.engine, "--engine");
  if (const auto takes = engine_quant_unsupported(req.engine, req.quant))
    throw_invalid_coded(in.given.contains("quant") ? "--quant" : "--engine", "engine_quant_unsupported",
                        {{"engine", std::string(serving_engine_name(req.engine))},
                         {"quant", std::string(weight_quant_name(req.quant))},
                         {"allowed", *takes}},
                        fmt::format("{} does not load {} weights", serving_engine_name(req.engine), weight_quant_name(req.quant)),
                        fmt::format("--quant one of {} with --engine {}, or another --engine", *takes,
                                    serving_engine_name(req.engine)));
  if (in.sort == "cost") {
    req.sort = PlanSort::cost;
  } else if (in.sort == "time") {
    req.sort = PlanSort::time;
  } else if (in.sort == "recommended") {
    req.sort = PlanSort::recommended;
  } else {
    throw_invalid_coded("--sort", "unknown_choice", {{"value", in.sort}, {"allowed", "recommended, cost, time"}},
                        fmt::format("unknown sort '{}'", in.sort), "recommended, cost or time");
  }
  if (!in.deadline.empty()) req.deadline_seconds = parse_duration_seconds(in.deadline, "--deadline");
  // A bare number is days (echoed as typed: "'0' is not positive", not "'0d'", trial46).
  if (!in.max_price_age.empty()) req.stale_after_days = parse_duration_seconds(in.max_price_age, "--max-price-age", 86400.0) / 86400.0;
  if (!in.recompute.empty() || in.given.contains("recompute")) req.pins.recompute = parse_recompute(in.recompute, "--recompute");
  if (req.today.empty()) req.today = ctx.clock().today();
  if (in.explain && *in.explain == 0) {
    // A message of its own (a trial's {"explain":0} read only "0").
    throw_invalid_coded("--explain", "not_positive", {{"value", "0"}}, "0 is not a plan number: plans are numbered from 1",
                        "a plan number ≥ 1");
  }
  // --limit 0 = every plan, as `offers --limit 0` (trial of issue 10: one meaning in both).
  if (req.limit == 0) req.limit = std::numeric_limits<std::size_t>::max();
  if (in.explain && *in.explain > req.limit) req.limit = *in.explain;
  req.validate();

  out.arch = resolve_model(req.model);
  OfferQuery q;
  q.filter = req.filter;
  q.now_date = req.today;
  q.stale_after_days = req.stale_after_days;
  // Only offers that can hold the model's weights at all (planner.hpp plan_memory_floor): the
  // read and the search then scale with the offers that matter, not the catalog.
  q.memory_floor = plan_memory_floor(req, out.arch);
  // The bounded read (kPlanOffersPerClass): the cheapest offers of each plan class, so the read
  // and the search scale with the catalog's distinct machines, not its copies across regions.
  if (!in.all_offers) q.cheapest_per_plan_class = kPlanOffersPerClass;
  std::shared_ptr<const std::vector<Offer>> offers = ctx.query_offers(q);
  // The memo only for a model the request itself determines (a preset or a synthetic shape): a
  // config or safetensors file could change between requests under the same key.
  SearchMemo* memo = !in.search_memo_key.empty() && req.model.config_path.empty() && req.model.safetensors_path.empty()
                         ? ctx.search_memo()
                         : nullptr;
  out.result = plan(req, out.arch, *offers, ctx.gpus(), &bundled_billing_of, {}, memo, in.search_memo_key);
  if (out.result.no_plan && q.memory_floor) {
    // No plan: the reason (the largest GPU offered, the offers skipped) is stated over every
    // matching offer, as without the floor (a rare path: twice the work).
    // "Offers considered" keeps one definition in both answers (trial of issue 10: the no-plan
    // answer counted 2250 where the plan answer of the same request counted 1249): the offers
    // matching the filter that can hold the model's weights (the floor) and that the planner
    // admitted; "skipped" those of them it left out (docs/planner.md).
    const std::size_t considered = out.result.offers_considered, skipped = out.result.offers_skipped;
    q.memory_floor.reset();
    offers = ctx.query_offers(q);
    out.result = plan(req, out.arch, *offers, ctx.gpus(), &bundled_billing_of, {}, memo, in.search_memo_key);
    out.result.offers_considered = considered;
    out.result.offers_skipped = skipped;
  }
  if (in.explain) {
    if (*in.explain > out.result.plans.size()) {
      throw_invalid_coded("--explain", "plan_does_not_exist",
                          {{"rank", fmt::format("{}", *in.explain)}, {"count", fmt::format("{}", out.result.plans.size())}},
                          fmt::format("plan {} does not exist ({} plans)", *in.explain, out.result.plans.size()),
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
  return plan_result_json(out.request, out.result);
}

}  // namespace gpuplan::api
