// The search sizes each layout once per plan and reuses it on every cluster with as many GPUs
// (planner.cpp layouts_by_gpus: slots indexed by the search's loop positions). Whatever the
// cache does, every plan must carry the memory of ITS layout:
// the sizing layer's explaining path (training_memory) at the plan's layout is the reference.
// (A cache key that dropped the high bits of tp made tp 2, 4 and 8 share one entry when pp, dp
// and the rest matched, e.g. 2 nodes at TP 2 × DP 8 and 4 nodes at TP 4 × DP 8.)
#include <gtest/gtest.h>

#include <set>

#include "model/model_source.hpp"
#include "planner/plan_inputs.hpp"
#include "planner/planner.hpp"
#include "test_offers.hpp"

namespace gpuplan {
namespace {

using test::per_second;

Offer cluster_offer(std::string id, std::string gpu, double usd_per_hour) {
  Offer o = test::priced_offer(id, gpu, 8, usd_per_hour, IntraNodeLink::nvlink, "plan_search_cache_test.cpp");
  o.inter_node_network = InterNodeNetwork::infiniband;
  o.inter_node_bits_per_s = 3200e9;
  o.max_nodes = 32;
  o.confirmed_available_at = "2026-11-01";
  return o;
}

TEST(PlanSearchCache, EveryPlanCarriesTheMemoryOfItsOwnLayout) {
  std::size_t checked = 0;
  for (const char* preset : {"llama-3.1-70b", "qwen3-30b-a3b", "llama-3.1-8b"}) {
    ModelSource s;
    s.preset = preset;
    const ModelArch arch = resolve_model(s);
    for (Task task : {Task::full, Task::lora}) {
      for (PlanSort sort : {PlanSort::time, PlanSort::cost}) {
        PlanRequest r;
        r.model = s;
        r.task = task;
        r.tokens = 2e9;
        r.seq_len = 4096;
        r.today = "2026-11-30";
        r.max_nodes = 32;
        r.sort = sort;
        r.limit = 1000;
        r.include_flagged = true;
        // Four GPUs of different memory: the best layout of each node count differs per GPU.
        const std::vector<Offer> offers = {cluster_offer("a/h100", "NVIDIA H100 SXM", 24.0),
                                           cluster_offer("b/a100-40", "NVIDIA A100 SXM 40GB", 12.0),
                                           cluster_offer("c/a100-80", "NVIDIA A100 SXM 80GB", 14.0),
                                           cluster_offer("d/h200", "NVIDIA H200 SXM", 30.0)};
        const PlanResult res = plan(r, arch, offers, GpuCatalog::bundled(), &per_second);
        for (const Plan& p : res.plans) {
          const MemoryBreakdown m = training_memory(arch, detail::training_memory_request(r, p.layout, p.recompute, p.recompute_modules));
          EXPECT_EQ(p.per_gpu_memory_bytes, m.total_bytes())
              << preset << " " << task_name(task) << " " << p.offer_id << " × " << p.instances << " tp " << p.layout.tp
              << " pp " << p.layout.pp << " dp " << p.layout.dp << " ep " << p.layout.ep;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 40u);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// Billing terms are resolved once per provider for offers without overrides (planner.cpp
// collect_candidates). An offer of the same provider WITH an override must keep its own terms,
// whichever of the provider's offers is seen first: here p/b bills by the hour (3,600 s
// granularity and minimum) between two offers that bill by the second.
BillingTerms merged(const Offer& o) {
  BillingTerms t = o.billing_override;
  if (!t.granularity_seconds) t.granularity_seconds = 1;
  if (!t.minimum_billed_seconds) t.minimum_billed_seconds = 0;
  return t;
}

TEST(PlanBillingCache, AnOfferWithOverridesKeepsItsOwnTermsNextToItsProvidersOthers) {
  ModelSource s;
  s.preset = "llama-3.1-8b";
  const ModelArch arch = resolve_model(s);
  PlanRequest r;
  r.model = s;
  r.task = Task::lora;
  r.tokens = 1e8;
  r.seq_len = 4096;
  r.today = "2026-11-30";
  r.limit = 1000;
  r.include_flagged = true;
  std::vector<Offer> offers = {cluster_offer("p/a", "NVIDIA H100 SXM", 24.0), cluster_offer("p/b", "NVIDIA H100 SXM", 24.0),
                               cluster_offer("p/c", "NVIDIA H100 SXM", 24.0)};
  offers[1].billing_override.granularity_seconds = 3600;
  offers[1].billing_override.minimum_billed_seconds = 3600;
  offers[1].billing_override.sources.push_back("granularity_seconds: test (2026-11-30)");
  const PlanResult res = plan(r, arch, offers, GpuCatalog::bundled(), &merged);
  std::set<std::string> seen;
  for (const Plan& p : res.plans) {
    const double expected = p.offer_id == "p/b" ? 3600 : 1;
    EXPECT_EQ(p.billing.granularity_seconds, expected) << p.offer_id;
    EXPECT_EQ(p.billing.minimum_billed_seconds, p.offer_id == "p/b" ? 3600 : 0) << p.offer_id;
    seen.insert(p.offer_id);
  }
  EXPECT_EQ(seen, (std::set<std::string>{"p/a", "p/b", "p/c"}));
}

}  // namespace
}  // namespace gpuplan
