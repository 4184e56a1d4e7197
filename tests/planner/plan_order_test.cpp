// A plan depends on the offers, never on the order they come in (planner.cpp
// canonical_offer_order): the store may return them in any order (no ORDER BY the planner does
// not need), an import file in its own. The whole result — every row, its order, regions,
// collapsed offers, warnings, the recommendation, the no-plan reason — must be the same for the
// bundled catalog in its import order, reversed, and shuffled.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "catalog/importers.hpp"
#include "catalog/providers.hpp"
#include "model/model_source.hpp"
#include "planner/planner.hpp"

namespace gpuplan {
namespace {

BillingTerms billing_of(const Offer& o) { return effective_billing(o, find_provider(bundled_providers(), o.provider)); }

std::string describe(const PlanResult& res) {
  std::string out = fmt::format("total {} considered {} skipped {} layouts {} demoted {} rule {}\n", res.plans_total,
                                res.offers_considered, res.offers_skipped, res.layouts_evaluated, res.plans_demoted,
                                res.recommendation_rule);
  for (const Plan& p : res.plans) {
    out += fmt::format("{} x{} tp{} pp{} dp{} ep{} z{} mb{} rc{} ${:.17g} {:.17g}s rec{} front{} tier{} kind {}", p.offer_id,
                       p.instances, p.layout.tp, p.layout.pp, p.layout.dp, p.layout.ep, p.layout.zero_stage,
                       p.layout.micro_batch, static_cast<int>(p.recompute), p.total_usd(), p.time_seconds(),
                       p.recommended, p.on_pareto_front, p.demotion_tier, price_kind_name(p.cost.price_kind));
    for (const std::string& r : p.regions) out += " region " + r;
    for (const std::string& id : p.same_plan_offer_ids) out += " same " + id;
    for (const PlanWarning& w : p.warnings) out += fmt::format(" [{}: {}]", w.name(), w.message);
    out += "\n";
  }
  for (const PlanWarning& w : res.warnings) out += fmt::format("result [{}: {}]\n", w.name(), w.message);
  if (res.no_plan) {
    out += "no plan: " + res.no_plan->reason + "\n";
    for (const std::string& s : res.no_plan->suggestions) out += "  " + s + "\n";
  }
  return out;
}

std::vector<Offer> shuffled(std::vector<Offer> offers) {
  std::mt19937 g(7u);
  for (std::size_t i = offers.size(); i > 1; --i) std::swap(offers[i - 1], offers[g() % i]);
  return offers;
}

PlanRequest request(const char* preset, Task task, double tokens) {
  PlanRequest r;
  r.model.preset = preset;
  r.task = task;
  r.tokens = tokens;
  r.seq_len = 4096;
  r.today = "2026-11-30";
  r.limit = 200;
  return r;
}

TEST(PlanOrder, TheSamePlanWhateverTheOrderOfTheOffers) {
  const std::vector<Offer> offers = bundled_catalog().offers;
  std::vector<Offer> reversed(offers.rbegin(), offers.rend());
  const std::vector<Offer> mixed = shuffled(offers);
  std::vector<PlanRequest> requests = {request("llama-3.1-70b", Task::lora, 5e8), request("llama-3.1-8b", Task::full, 1e9),
                                       request("qwen3-30b-a3b", Task::qlora, 1e8)};
  requests.push_back(request("llama-3.1-8b", Task::lora, 1e8));
  requests.back().sort = PlanSort::time;
  requests.push_back(request("llama-3.1-8b", Task::lora, 1e8));
  requests.back().sort = PlanSort::cost;
  requests.back().include_flagged = true;
  requests.push_back(request("llama-3.1-70b", Task::full, 1e10));
  requests.back().deadline_seconds = 3600.0;  // infeasible: the no-plan reason names the closest plans
  for (const PlanRequest& r : requests) {
    const ModelArch arch = resolve_model(r.model);
    const std::string want = describe(plan(r, arch, offers, GpuCatalog::bundled(), &billing_of));
    EXPECT_EQ(describe(plan(r, arch, reversed, GpuCatalog::bundled(), &billing_of)), want) << r.model.preset;
    EXPECT_EQ(describe(plan(r, arch, mixed, GpuCatalog::bundled(), &billing_of)), want) << r.model.preset;
  }
}

}  // namespace
}  // namespace gpuplan
