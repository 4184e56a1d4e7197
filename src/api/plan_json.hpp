#pragma once
/// Application layer (api): the one JSON writer of plans, shared by `gpuplan plan --json`,
/// `gpuplan estimate --json` and POST /api/plan (SI units: bytes, seconds, USD). Writes what the
/// planner computed; computes no numbers beyond unit conversions (STYLE.md §1).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <vector>

#include "planner/planner.hpp"

namespace gpuplan::api {

nlohmann::json plan_json(const Plan& p, std::size_t rank);  ///< one plan; rank 1-based (0 = not ranked)
nlohmann::json step_json(const TrainingStepEstimate& t);
nlohmann::json goodput_json(const GoodputEstimate& g);
nlohmann::json warnings_json(const std::vector<PlanWarning>& warnings);
/// A count (training tokens) as JSON: a whole number below 2^63 as a JSON integer, every digit
/// written (a double was written 9.007199254740992e+15, 1e+16, 100000000.0: issue 11); a
/// fraction (1.5 epochs × 3 tokens) as a number.
nlohmann::json count_json(double count);
/// The training stack and recipe switches the request set, as the plan's and the estimate's JSON
/// report them ("training_settings": stack or null, ep_overlap, tp_comm_overlap, moe_imbalance or
/// null = the default 1.2, cuda_graph, moe_dispatcher, pp_layers or null = even split,
/// recompute_modules or null, grads_16bit, ignore_memory).
nlohmann::json training_settings_json(const PlanRequest& r);
/// The whole answer: request echo (workload, sort, deadline, budget, training_settings (null when
/// serving)), plans, no_plan.
nlohmann::json plan_result_json(const PlanRequest& r, const PlanResult& res);

}  // namespace gpuplan::api
