#include "api/plan_json.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

namespace gpuplan::api {

using nlohmann::json;

json count_json(double count) {
  if (std::isfinite(count) && std::floor(count) == count && std::abs(count) < 9.2e18)
    return json(static_cast<std::int64_t>(count));
  return json(count);
}

namespace {
json opt_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json cost_json(const CostBreakdown& c) {
  json j = {{"price_kind", price_kind_name(c.price_kind)},
            {"usd_per_hour", c.usd_per_hour},
            {"instances", c.instances},
            {"run_seconds", c.run_seconds},
            {"startup_seconds", c.startup_seconds},
            {"billed_seconds", c.billed_seconds},
            {"compute_usd", c.compute_usd},
            {"storage_usd", opt_json(c.storage_usd)},
            {"egress_usd", opt_json(c.egress_usd)},
            {"spot_loss_usd", c.spot_loss_usd},
            {"total_usd", c.total_usd()},
            {"total_is_lower_bound", c.total_is_lower_bound()}};
  if (c.spot) {
    // null MTBF: a rate of 0 preemptions a day (never preempted), as goodput's below.
    j["spot"] = {{"mtbf_seconds", std::isfinite(c.spot->mtbf_seconds) ? json(c.spot->mtbf_seconds) : json(nullptr)},
                 {"interval_seconds", c.spot->interval_seconds},
                 {"checkpoints_seconds", c.spot->checkpoints_seconds},
                 {"expected_preemptions", c.spot->expected_preemptions},
                 {"lost_work_seconds", c.spot->lost_work_seconds},
                 {"restart_seconds_total", c.spot->restart_seconds_total},
                 {"wall_seconds", c.spot->wall_seconds}};
  }
  return j;
}

}  // namespace

json warnings_json(const std::vector<PlanWarning>& ws) {
  json a = json::array();
  for (const auto& w : ws) {
    json one = {{"code", w.name()}, {"message", w.message}};
    if (!w.values.empty()) one["values"] = w.values;  // the figures the message quotes (planner.hpp)
    a.push_back(std::move(one));
  }
  return a;
}

json step_json(const TrainingStepEstimate& t) {
  return {{"step_seconds", t.step_seconds},
          {"compute_seconds", t.compute_seconds},
          {"tp_allreduce_seconds", t.tp_allreduce_seconds},
          {"ep_alltoall_seconds", t.ep_alltoall_seconds},
          {"pp_p2p_seconds", t.pp_p2p_seconds},
          {"pp_bubble_seconds", t.pp_bubble_seconds},
          {"dp_allreduce_seconds", t.dp_allreduce_seconds},
          {"zero_allgather_seconds", t.zero_allgather_seconds},
          {"exposed_comm_seconds", t.exposed_comm_seconds},
          {"optimizer_seconds", t.optimizer_seconds},
          {"overhead_seconds", t.overhead_seconds},
          {"kernel_efficiency", t.kernel_efficiency},
          {"peak_flops_per_s", t.peak_flops_per_s},
          {"model_flop_per_step", t.model_flop_per_step},
          {"tokens_per_s", t.tokens_per_s},
          {"micro_batches_per_step", t.micro_batches_per_step},
          {"mfu", t.mfu},
          {"hfu", t.hfu},
          {"pp_stage_imbalance", t.pp_stage_imbalance},
          {"pp_busiest_stage", t.pp_busiest_stage}};
}

json goodput_json(const GoodputEstimate& g) {
  return {{"goodput", g.goodput},
          {"mtbf_seconds", std::isfinite(g.mtbf_seconds) ? json(g.mtbf_seconds) : json(nullptr)},
          {"checkpoint_write_seconds", g.checkpoint_write_seconds},
          {"interval_seconds", g.interval_seconds},
          {"expected_failures", g.expected_failures},
          {"checkpoint_seconds", g.checkpoint_seconds},
          {"lost_work_seconds", g.lost_work_seconds},
          {"restart_seconds", g.restart_seconds},
          {"evaluation_seconds", g.evaluation_seconds},
          {"overhead_seconds", g.overhead_seconds()},
          {"wall_seconds", g.wall_seconds}};
}

json plan_json(const Plan& p, std::size_t rank) {
  json j = {{"rank", rank},
            {"recommended", p.recommended},
            {"offer_id", p.offer_id},
            {"provider", p.provider},
            {"instance_type", p.instance_type},
            {"region", p.region},
            {"regions", p.regions},
            {"same_plan_offer_ids", p.same_plan_offer_ids},
            {"gpu_name", p.gpu_name},
            {"gpus_per_instance", p.gpus_per_instance},
            {"instances", p.instances},
            {"gpus_total", p.gpus_per_instance * p.instances},
            {"intra_node_link", intra_node_link_name(p.intra_node_link)},
            {"inter_node_network", inter_node_network_name(p.inter_node_network)},
            {"cluster",
             {{"gpu_name", p.cluster.gpu ? p.cluster.gpu->name : std::string()},
              {"gpus_per_node", p.cluster.gpus_per_node},
              {"nodes", p.cluster.nodes},
              {"intra_node_bytes_per_s", p.cluster.intra_node_bytes_per_s},
              {"inter_node_bytes_per_s", p.cluster.inter_node_bytes_per_s},
              {"intra_node_nvlink", p.cluster.intra_node_nvlink}}},
            {"layout",
             {{"tp", p.layout.tp},
              {"pp", p.layout.pp},
              {"dp", p.layout.dp},
              {"ep", p.layout.ep},
              {"cp", 1},
              {"zero_stage", p.layout.zero_stage},
              {"micro_batch", p.layout.micro_batch},
              {"virtual_stages", p.layout.virtual_stages},
              {"recompute", recompute_name(p.recompute)},
              {"recompute_modules",
               p.recompute_modules != 0 ? json(recompute_modules_name(p.recompute_modules)) : json(nullptr)}}},
            {"global_batch_seqs", p.global_batch_seqs},
            {"requested_global_batch_seqs", p.requested_global_batch_seqs},
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
            {"demoted_reason", p.demoted_reason.empty() ? json(nullptr) : json(p.demoted_reason)},
            {"demotion_tier", p.demotion_tier},
            {"evidence_rank", p.evidence_rank},
            {"price_age_days", p.price_age_days ? json(*p.price_age_days) : json(nullptr)},
            {"math_fallback", p.math_fallback.empty() ? json(nullptr) : json(p.math_fallback)},
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
              {"observed_at", p.price_source.observed_at ? json(*p.price_source.observed_at) : json("undated")},
              {"last_seen_at", p.price_last_seen_at ? json(*p.price_last_seen_at) : json("undated")}}},
            {"warnings", warnings_json(p.warnings)},
            {"on_pareto_front", p.on_pareto_front}};
  json alts = json::array();
  for (const auto& a : p.alternatives) alts.push_back(cost_json(a));
  j["alternatives"] = std::move(alts);
  // Expert tensor parallelism when pinned below (or above) tp (--expert-tp; 0 = tp, not shown).
  if (p.layout.expert_tp > 0) j["layout"]["expert_tp"] = p.layout.expert_tp;
  if (p.training) {
    j["step"] = step_json(*p.training);
    j["mfu_overridden"] = p.mfu_overridden;
    j["gpu_hours"] = p.time_seconds() * p.gpus_per_instance * p.instances / 3600.0;
    j["tokens_per_s_per_gpu"] = p.tokens_per_s / (p.gpus_per_instance * p.instances);
  }
  if (p.goodput) j["goodput"] = goodput_json(*p.goodput);
  // A batch generation job's simulated run (sizing/serving_perf.hpp BatchJobTiming).
  if (p.batch_job) {
    const BatchJobTiming& b = *p.batch_job;
    j["batch_job"] = {{"peak_running_sequences", b.peak_running_sequences},
                      {"mean_decode_batch", b.mean_decode_batch},
                      {"steps", b.steps},
                      {"prefill_steps", b.prefill_steps},
                      {"simulated_requests", b.simulated_requests},
                      {"seconds", b.seconds},
                      {"steady_state_seconds", b.steady_state_seconds}};
  }
  if (p.serving) {
    const auto& s = *p.serving;
    // One output token: no time between tokens, null (ServingEstimate::tpot_defined).
    j["serving"] = {{"ttft_seconds", s.ttft_seconds},
                    {"tpot_seconds", s.tpot_defined ? json(s.tpot_seconds) : json(nullptr)},
                    {"step_seconds", s.step_seconds},
                    {"queue_wait_seconds", p.queue_wait_seconds ? json(*p.queue_wait_seconds) : json(nullptr)},
                    {"batch", s.batch},
                    {"max_concurrent_sequences", s.max_concurrent_sequences},
                    {"requests_per_s_per_replica", s.requests_per_s_per_replica},
                    {"meets_latency_target", p.meets_latency_target},
                    {"batch_for_fixed_cluster", p.batch_for_fixed_cluster},
                    {"batch_smallest_for_load", p.batch_smallest_for_load}};
    if (!p.serving_tp_options.empty()) {
      json options = json::array();
      for (const auto& o : p.serving_tp_options) {
        options.push_back({{"tp", o.tp},
                           {"batch", o.batch},
                           {"ttft_seconds", o.ttft_seconds},
                           {"tpot_seconds", o.tpot_defined ? json(o.tpot_seconds) : json(nullptr)},
                           {"meets_latency_target", o.meets_latency},
                           {"instances_needed", o.instances_needed},
                           {"carries_load", o.carries_load}});
      }
      j["serving"]["tp_options"] = std::move(options);
      j["serving"]["tp_choice"] = p.serving_tp_choice;
    }
  }
  if (p.images_per_hour) {
    j["images_per_hour"] = *p.images_per_hour;
    j["usd_per_1000_images"] = opt_json(p.usd_per_1000_images);
  }
  return j;
}

json training_settings_json(const PlanRequest& r) {
  json layers = nullptr;
  if (!r.pipeline_stage_layers.empty()) layers = r.pipeline_stage_layers;
  return json{{"stack", r.stack ? json(std::string(training_stack_name(*r.stack))) : json(nullptr)},
              {"ep_overlap", r.ep_overlap},
              {"tp_comm_overlap", r.tp_comm_overlap},
              {"moe_imbalance", r.moe_load_imbalance ? json(*r.moe_load_imbalance) : json(nullptr)},
              {"cuda_graph", r.cuda_graph ? json(std::string(cuda_graph_impl_name(*r.cuda_graph))) : json(nullptr)},
              {"moe_dispatcher", r.moe_dispatcher ? json(std::string(moe_dispatcher_name(*r.moe_dispatcher))) : json(nullptr)},
              {"pp_layers", layers},
              {"recompute_modules",
               r.recompute_modules != 0 ? json(recompute_modules_name(r.recompute_modules)) : json(nullptr)},
              {"grads_16bit", r.grads_16bit},
              {"ignore_memory", r.ignore_memory}};
}

json plan_result_json(const PlanRequest& r, const PlanResult& res) {
  json plans = json::array();
  for (std::size_t i = 0; i < res.plans.size(); ++i) plans.push_back(plan_json(res.plans[i], i + 1));
  json j = {{"model", res.model_name},
            {"workload", plan_workload_name(r.workload)},
            {"task", task_name(r.task)},
            {"training_tokens", count_json(res.training_tokens)},
            {"training_settings", r.workload == PlanWorkload::training ? training_settings_json(r) : json(nullptr)},
            {"sort", plan_sort_name(res.sort_applied)},
            {"recommendation_rule", res.recommendation_rule},
            {"recommended_nodes_assumed", res.recommended_nodes_assumed},
            {"sort_rule", res.sort_rule},
            {"deadline_seconds", r.deadline_seconds ? json(*r.deadline_seconds) : json(nullptr)},
            {"budget_usd", r.budget_usd ? json(*r.budget_usd) : json(nullptr)},
            {"plans_demoted", res.plans_demoted},
            {"pareto_only", r.pareto_only},
            {"plans_total", res.plans_total},
            {"plans_hidden", res.plans_hidden},
            {"plans_hidden_short", res.plans_hidden_short},
            {"hidden_slower_than_seconds", res.plans_hidden ? json(res.hidden_slower_than_seconds) : json(nullptr)},
            {"offers_considered", res.offers_considered},
            {"offers_skipped", res.offers_skipped},
            {"layouts_evaluated", res.layouts_evaluated},
            {"plans", std::move(plans)},  // moved, not copied: an rvalue in the list is moved (json_ref)
            {"warnings", warnings_json(res.warnings)}};
  if (res.no_plan) {
    // code, suggestion_codes and values let a front end word the reason in its own language
    // (web/locales no_plan_<code>, suggest_<code>); reason and suggestions are the English sentences.
    j["no_plan"] = {{"reason", res.no_plan->reason},
                    {"code", res.no_plan->code},
                    {"suggestion_codes", res.no_plan->suggestion_codes},
                    {"values", res.no_plan->values},
                    {"smallest_per_gpu_bytes", res.no_plan->smallest_per_gpu_bytes},
                    {"largest_gpu_bytes", res.no_plan->largest_gpu_bytes},
                    {"any_multi_node_offer", res.no_plan->any_multi_node_offer},
                    {"suggestions", res.no_plan->suggestions},
                    {"fastest", res.no_plan->fastest ? plan_json(*res.no_plan->fastest, 0) : json(nullptr)},
                    {"cheapest", res.no_plan->cheapest ? plan_json(*res.no_plan->cheapest, 0) : json(nullptr)}};
  } else {
    j["no_plan"] = nullptr;
  }
  return j;
}

}  // namespace gpuplan::api
