#pragma once
/// Application layer (api): the `plan` use case — the cheapest (or fastest) way to finish a
/// training, serving or image job on the offers. Input filled by the CLI's flags and the API's
/// JSON body through plan_fields(); result; one JSON writer (`gpuplan plan --json` and the body of
/// POST /api/plan).
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "api/context.hpp"
#include "api/fields.hpp"
#include "api/plan_json.hpp"
#include "model/model_arch.hpp"
#include "planner/planner.hpp"

namespace gpuplan::api {

struct PlanInput {
  PlanRequest request;  ///< numeric options set directly; enums below as text until run_plan
  std::string task = "lora";
  std::string precision, optimizer, quant, kv_dtype, sort = "recommended";
  std::string engine;  ///< --engine (serving): vllm (default), tensorrt-llm, sglang, llama.cpp
  std::string deadline, max_price_age, recompute;  ///< parsed in run_plan, like the CLI
  std::optional<std::size_t> explain;  ///< plan number to explain (1-based)
  std::set<std::string> given;  ///< the fields given (api::note_given): a field of another task is refused
  /// --all-offers: plan on every matching offer instead of the bounded read (kPlanOffersPerClass).
  bool all_offers = false;
  /// The physics key of the request for the context's search memo (search_memo_key; empty: no
  /// memo). Set by the server from the request body.
  std::string search_memo_key;
};

/// The key of a plan request for planner.hpp's SearchMemo: the canonical body (keys sorted, as
/// api::parse_json_strict reads it) without the fields that never enter a training layout search
/// — the tokens (the memo keeps them out by design), the offers' filter and price evidence
/// (filter, today, stale_days, max_price_age, include_flagged, all, no_spot,
/// preemptions_per_day), the selection and presentation (deadline, budget, sort, pareto, limit,
/// explain, all_offers), egress and serving hours. Every other field stays in the key, so a new
/// field can only make the memo miss, never answer for another request.
std::string search_memo_key(const nlohmann::json& body);

/// The planner's bounded read (issue 12, docs/planner.md "Bounded read"): per price kind and
/// plan class (catalog plan_class_of: one machine in one place) the cheapest clean-dated offer
/// and the cheapest other one, with ties (OfferQuery::cheapest_per_plan_class = 1). The others
/// of a class are the same row at a higher price with the same price evidence: they never rank
/// ahead of the one kept. The bundled catalog has one offer per class and kind (nothing is left
/// out); a catalog that lists machines many times (feeds, resellers, bench_store_scale's copies)
/// is read at the size of its distinct machines and places.
inline constexpr std::size_t kPlanOffersPerClass = 1;

std::span<const FieldDef<PlanInput>> plan_fields();

struct PlanOutput {
  PlanRequest request;  ///< resolved
  ModelArch arch;
  PlanResult result;
  std::optional<std::size_t> explain;      ///< the plan explained, when asked
  std::vector<PlanExplainLine> explain_lines;
};

/// Resolves the enums and the model, reads the offers matching the request's filter from
/// ctx.store() (today from ctx.clock() unless given) and plans. Throws Error naming the flag.
PlanOutput run_plan(const PlanInput& in, const Context& ctx);

/// For a face that cannot import (a read-only server: no write token, so no POST /api/import for
/// any client): drops the no-plan suggestions that send the reader to an import (codes
/// import_offers, import_cluster_quote), with their codes. The others stay, in order.
void drop_import_suggestions(PlanOutput& out);

/// `gpuplan plan --json`: {"plan", "explain"} when explain was asked, else the whole result.
nlohmann::json to_json(const PlanOutput& out);

}  // namespace gpuplan::api
