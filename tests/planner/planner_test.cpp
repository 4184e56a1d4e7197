// plan(): search, pricing and warnings on hand-made offers. Expected money values are hand
// calculations from the offer's price and billing terms (written next to each check); time
// estimates come from the sizing layer and are only checked for consistency (invariants).
#include "planner/planner.hpp"

#include <gtest/gtest.h>

#include <set>

#include <algorithm>
#include <cmath>

#include "model/model_source.hpp"
#include "planner/pareto.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

Offer make_offer(std::string id, std::string gpu, int count, double usd_per_hour, IntraNodeLink link) {
  Offer o;
  o.id = id;
  o.provider = id.substr(0, id.find('/'));
  o.instance_type = id;
  o.gpu_name_raw = gpu;
  o.gpu_name = gpu;
  o.gpu_count = count;
  o.intra_node_link = link;
  o.confirmed_available_at = "2026-11-01";
  PriceObservation p;
  p.offer_id = id;
  p.kind = PriceKind::on_demand;
  p.usd_per_hour = usd_per_hour;
  p.source = SourceRef{"test", "planner_test.cpp", std::string("2026-11-20")};
  o.prices.push_back(p);
  return o;
}

void add_spot(Offer& o, double usd_per_hour) {
  PriceObservation p;
  p.offer_id = o.id;
  p.kind = PriceKind::spot;
  p.usd_per_hour = usd_per_hour;
  p.source = SourceRef{"test", "planner_test.cpp", std::string("2026-11-20")};
  o.prices.push_back(p);
}

BillingTerms per_second(const Offer& o) {
  BillingTerms t = o.billing_override;
  if (!t.granularity_seconds) t.granularity_seconds = 1;
  if (!t.minimum_billed_seconds) t.minimum_billed_seconds = 0;
  t.storage_usd_per_gb_month = 0.10;
  t.egress_usd_per_gb = 0.0;
  t.egress_free_gb_per_month = 0;
  return t;
}

ModelArch llama_8b() {
  ModelSource s;
  s.preset = "llama-3.1-8b";
  return resolve_model(s);
}

PlanRequest lora_request(double tokens) {
  PlanRequest r;
  r.model.preset = "llama-3.1-8b";
  r.task = Task::lora;
  r.workload = PlanWorkload::training;
  r.tokens = tokens;
  r.seq_len = 2048;
  r.today = "2026-11-30";
  return r;
}

TEST(PlanRequestValidate, RejectsMissingBudgetAndBadNumbers) {
  PlanRequest r = lora_request(1e6);
  r.tokens.reset();
  EXPECT_THROW(r.validate(), Error);
  r = lora_request(1e6);
  r.margin = 1.0;
  EXPECT_THROW(r.validate(), Error);
  r = lora_request(1e6);
  r.workload = PlanWorkload::serving;
  r.task = Task::serve;
  EXPECT_THROW(r.validate(), Error);  // neither --rps nor --concurrency
  r.concurrency = 10;
  EXPECT_NO_THROW(r.validate());
  r = lora_request(1e6);
  r.today = "30/11/2026";
  EXPECT_THROW(r.validate(), Error);
}

TEST(PlanRequestValidate, RejectsImplausiblyLargeBudgets) {
  // 1e16 tokens is ~640× Llama 3's 15.6e12: anything above is a typo, not a job.
  EXPECT_NO_THROW(lora_request(1e16).validate());
  EXPECT_THROW(lora_request(1e30).validate(), Error);
}

TEST(PlanRequest, DefaultGlobalBatchIsPowerOfTwoOfSequences) {
  PlanRequest r = lora_request(1e6);
  r.seq_len = 4096;
  // LoRA: 128 Ki tokens / 4096 = 32 sequences.
  EXPECT_EQ(r.effective_global_batch_seqs(), 32);
  r.task = Task::pretrain;
  // 4 Mi tokens would be 1024 sequences, but the budget is 1e6 tokens: 1e6 / 4096 = 244.1
  // sequences, whose largest power of two is 128 (never a step above the budget, issue 11).
  EXPECT_EQ(r.effective_global_batch_seqs(), 128);
  r.tokens = 1e9;  // 4 Mi tokens / 4096 = 1024 sequences.
  EXPECT_EQ(r.effective_global_batch_seqs(), 1024);
  r.tokens = 1e6;
  r.dataset_tokens = 1e9;
  r.tokens.reset();
  r.epochs = 3;
  EXPECT_DOUBLE_EQ(r.training_tokens(), 3e9);
}

TEST(Plan, EveryPlanFitsAndPartsAddUp) {
  const ModelArch arch = llama_8b();
  std::vector<Offer> offers = {make_offer("a/h100x8", "NVIDIA H100 SXM", 8, 24.0, IntraNodeLink::nvlink),
                               make_offer("b/a100x1", "NVIDIA A100 SXM 80GB", 1, 1.5, IntraNodeLink::unknown),
                               make_offer("c/l4x1", "NVIDIA L4", 1, 0.8, IntraNodeLink::unknown)};
  PlanRequest r = lora_request(2e7);
  PlanResult res = plan(r, arch, offers, GpuCatalog::bundled(), &per_second);
  ASSERT_FALSE(res.no_plan.has_value()) << res.no_plan->reason;
  ASSERT_GE(res.plans.size(), 2u);
  EXPECT_EQ(res.offers_considered, 3u);
  EXPECT_GT(res.layouts_evaluated, 0u);
  for (const Plan& p : res.plans) {
    EXPECT_LE(p.per_gpu_memory_bytes, p.gpu_memory_capacity_bytes * (1 - r.margin)) << p.offer_id;
    EXPECT_EQ(p.layout.tp * p.layout.pp * p.layout.dp, p.gpus_per_instance * p.instances);
    // Per-second billing, no minimum: billed = ceil(run) s.
    EXPECT_DOUBLE_EQ(p.cost.billed_seconds, std::ceil(p.cost.run_seconds));
    EXPECT_NEAR(p.cost.compute_usd, p.instances * p.cost.usd_per_hour * p.cost.billed_seconds / 3600.0, 1e-9);
    EXPECT_NEAR(p.total_usd(),
                p.cost.compute_usd + p.cost.storage_usd.value_or(0) + p.cost.egress_usd.value_or(0) + p.cost.spot_loss_usd,
                1e-9);
    // time = steps × step_seconds; tokens/s × time ≥ the token budget.
    ASSERT_TRUE(p.training.has_value());
    EXPECT_NEAR(p.work_seconds, p.steps * p.training->step_seconds, 1e-6 * p.work_seconds);
    EXPECT_GE(p.tokens_per_s * p.work_seconds * (1 + 1e-9), 2e7);
  }
  // Sorted by cost.
  for (std::size_t i = 1; i < res.plans.size(); ++i) EXPECT_LE(res.plans[i - 1].total_usd(), res.plans[i].total_usd());
}

TEST(Plan, MinimumBilledTimeMakesCheapRateNotCheapestJob) {
  const ModelArch arch = llama_8b();
  // A: $1/GPU-h but billed by the hour with a 1 h minimum; B: $2/GPU-h per second.
  Offer a = make_offer("a/h100x8", "NVIDIA H100 SXM", 8, 8.0, IntraNodeLink::nvlink);
  a.billing_override.granularity_seconds = 3600;
  a.billing_override.minimum_billed_seconds = 3600;
  Offer b = make_offer("b/h100x1", "NVIDIA H100 SXM", 1, 2.0, IntraNodeLink::unknown);
  PlanRequest r = lora_request(1e6);  // a short job: minutes, well under an hour
  PlanResult res = plan(r, arch, {a, b}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(res.plans.size(), 2u);
  const Plan& pa = res.plans[0].offer_id == "a/h100x8" ? res.plans[0] : res.plans[1];
  ASSERT_LT(pa.cost.run_seconds, 3600);
  // The whole first hour is billed: 1 instance × $8/h × 3600 s / 3600 = $8.00.
  EXPECT_DOUBLE_EQ(pa.cost.billed_seconds, 3600);
  EXPECT_NEAR(pa.cost.compute_usd, 8.0, 1e-9);
  EXPECT_EQ(res.plans[0].offer_id, "b/h100x1");
  ASSERT_FALSE(res.warnings.empty());
  EXPECT_EQ(res.warnings[0].name(), "cheapest_gpu_hour_not_cheapest_job");
}

TEST(Plan, SpotChosenOnlyWhenCheaperAfterLosses) {
  const ModelArch arch = llama_8b();
  Offer o = make_offer("s/h100x1", "NVIDIA H100 SXM", 1, 4.0, IntraNodeLink::unknown);
  add_spot(o, 1.0);
  PlanRequest r = lora_request(2e8);
  r.preemptions_per_day = 1;
  PlanResult calm = plan(r, arch, {o}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(calm.plans.size(), 1u);
  EXPECT_EQ(calm.plans[0].cost.price_kind, PriceKind::spot);
  ASSERT_TRUE(calm.plans[0].cost.spot.has_value());
  EXPECT_GT(calm.plans[0].cost.spot_loss_usd, 0);
  // The run is longer than the uninterrupted work (after the hardware-failure goodput terms,
  // sizing/goodput.hpp) by exactly the spot overhead, after the fixed start-up (600 s default).
  ASSERT_TRUE(calm.plans[0].goodput.has_value());
  EXPECT_EQ(calm.plans[0].cost.startup_seconds, 600.0);
  EXPECT_NEAR(calm.plans[0].cost.run_seconds,
              600.0 + calm.plans[0].goodput->wall_seconds + calm.plans[0].cost.spot->extra_seconds(),
              1e-6 * calm.plans[0].cost.run_seconds);
  // At a very high preemption rate spot either cannot finish or costs more: on-demand wins.
  r.preemptions_per_day = 500;
  PlanResult stormy = plan(r, arch, {o}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(stormy.plans.size(), 1u);
  EXPECT_EQ(stormy.plans[0].cost.price_kind, PriceKind::on_demand);
}

// small11 #2: `--preemptions-per-day 0` was refused ("not a positive number") while the import
// accepts a rate of 0 for an offer. 0 is a known rate (the pool did not preempt): validate
// accepts it and the planner prices spot with no loss, the run being the work alone.
TEST(Plan, ZeroPreemptionRateIsSpotWithoutLoss) {
  const ModelArch arch = llama_8b();
  Offer o = make_offer("s/h100x1", "NVIDIA H100 SXM", 1, 4.0, IntraNodeLink::unknown);
  add_spot(o, 1.0);
  PlanRequest r = lora_request(2e8);
  r.preemptions_per_day = 0;
  EXPECT_NO_THROW(r.validate());
  const PlanResult res = plan(r, arch, {o}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(res.plans.size(), 1u);
  const Plan& p = res.plans[0];
  EXPECT_EQ(p.cost.price_kind, PriceKind::spot);  // $1/h with no loss beats $4/h on-demand
  ASSERT_TRUE(p.cost.spot.has_value());
  EXPECT_DOUBLE_EQ(p.cost.spot_loss_usd, 0);
  ASSERT_TRUE(p.goodput.has_value());
  // Run = start-up 600 s + the goodput wall time, nothing added for preemption.
  EXPECT_NEAR(p.cost.run_seconds, 600.0 + p.goodput->wall_seconds, 1e-9 * p.cost.run_seconds);
  r.preemptions_per_day = -1;
  EXPECT_THROW(r.validate(), Error);
}

// A plan is judged by the date of the price kind it is priced at (docs/planner.md "Price
// evidence"): an offer whose on-demand price is dated and fresh but whose spot price is undated
// was marked and ranked clean when planned at spot (the evidence came from the on-demand price).
bool has_warning(const Plan& p, PlanWarningCode code) {
  return std::any_of(p.warnings.begin(), p.warnings.end(), [&](const PlanWarning& w) { return w.code == code; });
}

TEST(Plan, PriceEvidenceFollowsThePriceKindPlanned) {
  const ModelArch arch = llama_8b();
  // On-demand $4/h observed 2026-11-20, spot $1/h with no date; --today 2026-11-30.
  Offer od_dated = make_offer("a/h100x1", "NVIDIA H100 SXM", 1, 4.0, IntraNodeLink::unknown);
  add_spot(od_dated, 1.0);
  od_dated.prices.back().source.observed_at.reset();
  // The reverse: on-demand $4/h undated, spot $1/h observed 2026-11-20.
  Offer spot_dated = make_offer("b/h100x1", "NVIDIA H100 SXM", 1, 4.0, IntraNodeLink::unknown);
  spot_dated.prices.back().source.observed_at.reset();
  add_spot(spot_dated, 1.0);
  PlanRequest r = lora_request(2e8);
  r.preemptions_per_day = 0;  // spot without loss: $1/h beats $4/h, so spot is the kind planned
  for (const Offer* o : {&od_dated, &spot_dated}) {
    const bool spot_has_date = o == &spot_dated;
    SCOPED_TRACE(o->id);
    r.allow_spot = true;
    const PlanResult at_spot = plan(r, arch, {*o}, GpuCatalog::bundled(), &per_second);
    ASSERT_EQ(at_spot.plans.size(), 1u);
    const Plan& s = at_spot.plans[0];
    EXPECT_EQ(s.cost.price_kind, PriceKind::spot);
    // Spot dated 2026-11-20 at --today 2026-11-30: 10 days old, within 30: tier 0 (clean), rank 0.
    // Spot undated: tier 2, rank 2 × 1024 = 2048, the price_date_unknown warning, no age.
    EXPECT_EQ(s.demotion_tier, spot_has_date ? 0 : 2);
    EXPECT_EQ(s.evidence_rank, spot_has_date ? 0 : 2048);
    EXPECT_EQ(s.demoted_reason, spot_has_date ? "" : "undated price");
    EXPECT_EQ(s.price_age_days, spot_has_date ? std::optional<int>(10) : std::nullopt);
    EXPECT_EQ(has_warning(s, PlanWarningCode::price_date_unknown), !spot_has_date);
    // --no-spot: planned at on-demand, judged by the on-demand date (the other way round).
    r.allow_spot = false;
    const PlanResult at_od = plan(r, arch, {*o}, GpuCatalog::bundled(), &per_second);
    ASSERT_EQ(at_od.plans.size(), 1u);
    const Plan& d = at_od.plans[0];
    EXPECT_EQ(d.cost.price_kind, PriceKind::on_demand);
    EXPECT_EQ(d.demotion_tier, spot_has_date ? 2 : 0);
    EXPECT_EQ(d.evidence_rank, spot_has_date ? 2048 : 0);
    EXPECT_EQ(d.demoted_reason, spot_has_date ? "undated price" : "");
    EXPECT_EQ(d.price_age_days, spot_has_date ? std::nullopt : std::optional<int>(10));
    EXPECT_EQ(has_warning(d, PlanWarningCode::price_date_unknown), spot_has_date);
  }
  // Ranking: the offer planned at its undated $1/h spot price is cheaper than a clean $3/h
  // on-demand offer of the same GPU (same layout and time: a third of the compute), but the
  // recommendation goes to the clean plan; the undated one is listed after it.
  r.allow_spot = true;
  Offer clean = make_offer("c/h100x1", "NVIDIA H100 SXM", 1, 3.0, IntraNodeLink::unknown);
  const PlanResult both = plan(r, arch, {od_dated, clean}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(both.plans.size(), 2u);
  EXPECT_EQ(both.plans[0].offer_id, "c/h100x1");
  EXPECT_TRUE(both.plans[0].recommended);
  EXPECT_EQ(both.plans[1].offer_id, "a/h100x1");
  EXPECT_EQ(both.plans[1].cost.price_kind, PriceKind::spot);
  EXPECT_EQ(both.plans[1].demotion_tier, 2);
  EXPECT_LT(both.plans[1].total_usd(), both.plans[0].total_usd());
}

TEST(Plan, PcieMultiGpuWarning) {
  const ModelArch arch = llama_8b();
  Offer o = make_offer("p/l4x8", "NVIDIA L4", 8, 6.0, IntraNodeLink::pcie);
  PlanRequest r = lora_request(2e7);
  PlanResult res = plan(r, arch, {o}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(res.plans.size(), 1u);
  const auto& w = res.plans[0].warnings;
  EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](const PlanWarning& x) { return x.code == PlanWarningCode::pcie_multi_gpu; }));
}

TEST(Plan, SkipsExcludedUnresolvedAndUnpriced) {
  const ModelArch arch = llama_8b();
  Offer excluded = make_offer("x/h100", "NVIDIA H100 SXM", 1, 2.0, IntraNodeLink::unknown);
  excluded.flags.push_back(QualityFlag{"zero_price", "test", true});
  Offer unresolved = make_offer("y/mystery", "Mystery GPU 9000", 1, 2.0, IntraNodeLink::unknown);
  unresolved.gpu_name.reset();
  Offer unpriced = make_offer("z/h100", "NVIDIA H100 SXM", 1, 2.0, IntraNodeLink::unknown);
  unpriced.prices.clear();
  PlanResult res = plan(lora_request(1e6), arch, {excluded, unresolved, unpriced}, GpuCatalog::bundled(), &per_second);
  EXPECT_EQ(res.offers_skipped, 3u);
  EXPECT_TRUE(res.plans.empty());
  ASSERT_TRUE(res.no_plan.has_value());
}

TEST(Plan, NoFitExplainsLargestGpuAndMissingMultiNode) {
  ModelSource s;
  s.preset = "llama-3.1-70b";
  const ModelArch arch = resolve_model(s);
  // 70B full fine-tune: 16 bytes/param × 70.6e9 = 1.13 TB of weights+grads+optimizer alone;
  // over 1 × 24 GB GPU this cannot fit in any layout, and no offer is multi-node.
  Offer o = make_offer("c/l4", "NVIDIA L4", 1, 0.8, IntraNodeLink::unknown);
  PlanRequest r = lora_request(1e9);
  r.model.preset = "llama-3.1-70b";
  r.task = Task::full;
  PlanResult res = plan(r, arch, {o}, GpuCatalog::bundled(), &per_second);
  ASSERT_TRUE(res.no_plan.has_value());
  EXPECT_FALSE(res.no_plan->any_multi_node_offer);
  EXPECT_GT(res.no_plan->smallest_per_gpu_bytes, res.no_plan->largest_gpu_bytes);
  EXPECT_NE(res.no_plan->reason.find("inter-node network"), std::string::npos) << res.no_plan->reason;
  EXPECT_FALSE(res.no_plan->suggestions.empty());
}

TEST(Plan, MultiNodeOnlyWithKnownNetwork) {
  ModelSource s;
  s.preset = "llama-3.1-70b";
  const ModelArch arch = resolve_model(s);
  PlanRequest r = lora_request(1e9);
  r.task = Task::full;
  Offer single = make_offer("n/h100x8", "NVIDIA H100 SXM", 8, 24.0, IntraNodeLink::nvlink);
  single.max_nodes = 16;  // but no known network: single node only
  Offer cluster = single;
  cluster.id = "m/h100x8";
  cluster.provider = "m";
  cluster.inter_node_network = InterNodeNetwork::infiniband;
  cluster.inter_node_bits_per_s = 3200e9;
  PlanResult res = plan(r, arch, {single, cluster}, GpuCatalog::bundled(), &per_second);
  for (const Plan& p : res.plans) {
    if (p.offer_id == "n/h100x8") {
      EXPECT_EQ(p.instances, 1);
    }
    EXPECT_LE(p.per_gpu_memory_bytes, p.gpu_memory_capacity_bytes * (1 - r.margin));
  }
  // 70B full fine-tune needs ≥ 16 B/param × 70.6e9 / 0.9 / 80e9 ≈ 15.7 GPUs' memory for the
  // model states alone: the single 8-GPU node cannot hold it; the InfiniBand cluster can.
  // (Several node counts of the cluster may be listed: the best one and the other Pareto-front plans.)
  ASSERT_GE(res.plans.size(), 1u);
  for (const Plan& p : res.plans) {
    EXPECT_EQ(p.offer_id, "m/h100x8");
    EXPECT_GE(p.instances, 2);
  }
}

// Issue 9: an 8×H100 cluster sold only as >= 4 nodes (Offer::min_nodes) at $2/GPU-h on a 1-month
// commitment ($16/h per node). Hand calculation for a job pinned to 2 nodes (--nodes 2): 4 nodes
// are billed for the whole 730-hour term = 4 × $16 × 730 h = $46,720, of which the 2 idle nodes
// are half ($23,360), and the plan says so.
Offer reserved_cluster(int min_nodes, int max_nodes) {
  Offer o = make_offer("rc/h100x8", "NVIDIA H100 SXM", 8, 16.0, IntraNodeLink::nvlink);
  o.prices[0].kind = PriceKind::reserved_1m;
  o.inter_node_network = InterNodeNetwork::infiniband;
  o.inter_node_bits_per_s = 3200e9;
  o.max_nodes = max_nodes;
  o.min_nodes = min_nodes;
  return o;
}

TEST(Plan, MinNodesBillsTheMinimumWhenTheJobUsesFewer) {
  const ModelArch arch = llama_8b();
  PlanRequest r = lora_request(2e7);  // hours of work: well inside one 730-hour term
  r.nodes_exact = 2;
  PlanResult res = plan(r, arch, {reserved_cluster(4, 16)}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(res.plans.size(), 1u);
  const Plan& p = res.plans[0];
  EXPECT_EQ(p.instances, 2);  // the job runs on the 2 nodes asked
  EXPECT_EQ(p.cost.price_kind, PriceKind::reserved_1m);
  EXPECT_EQ(p.cost.instances, 4);
  EXPECT_EQ(p.cost.idle_instances, 2);
  EXPECT_NEAR(p.cost.compute_usd, 4 * 16.0 * 730.0, 1e-6);
  const PlanWarning* w = nullptr;
  for (const PlanWarning& x : p.warnings)
    if (x.code == PlanWarningCode::min_nodes_billed) w = &x;
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->values.at("min_nodes"), "4");
  EXPECT_EQ(w->values.at("used_nodes"), "2");
  EXPECT_EQ(w->values.at("idle_nodes"), "2");
  EXPECT_EQ(w->values.at("idle_gpus"), "16");
  EXPECT_EQ(w->values.at("idle_usd"), "23360");
  // On the minimum itself nothing is idle and nothing is said: 4 × $16 × 730 h again.
  r.nodes_exact = 4;
  res = plan(r, arch, {reserved_cluster(4, 16)}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(res.plans.size(), 1u);
  EXPECT_EQ(res.plans[0].cost.idle_instances, 0);
  EXPECT_NEAR(res.plans[0].cost.compute_usd, 4 * 16.0 * 730.0, 1e-6);
  for (const PlanWarning& x : res.plans[0].warnings) EXPECT_NE(x.code, PlanWarningCode::min_nodes_billed);
}

// Without pinned nodes no plan rents fewer than the minimum, and a minimum of 3 (not a power of
// two) is planned on: its plan bills 3 × $16 × 730 h = $35,040 with no idle node.
TEST(Plan, NoPlanRentsFewerThanTheMinimum) {
  const ModelArch arch = llama_8b();
  PlanRequest r = lora_request(2e7);
  r.sort = PlanSort::cost;
  PlanResult res = plan(r, arch, {reserved_cluster(3, 16)}, GpuCatalog::bundled(), &per_second);
  ASSERT_FALSE(res.plans.empty());
  bool three = false;
  for (const Plan& p : res.plans) {
    EXPECT_GE(p.cost.instances, 3) << p.instances;
    EXPECT_EQ(p.cost.idle_instances, std::max(0, 3 - p.instances));
    if (p.instances == 3) {
      three = true;
      EXPECT_NEAR(p.cost.compute_usd, 3 * 16.0 * 730.0, 1e-6);
    }
  }
  // Every node count up to 3 bills 3 nodes for one term ($35,040), 4 and more bill more: the
  // 3-node plan is as cheap as the 1- and 2-node ones and faster, so it is on the Pareto front
  // (every front plan is a row) and is the cheapest row's compute bill.
  EXPECT_TRUE(three);
  EXPECT_NEAR(res.plans[0].cost.compute_usd, 3 * 16.0 * 730.0, 1e-6);
  // A minimum above --max-nodes is no plan: the offer cannot be rented within the cap.
  r.max_nodes = 2;
  res = plan(r, arch, {reserved_cluster(3, 16)}, GpuCatalog::bundled(), &per_second);
  EXPECT_TRUE(res.plans.empty());
  ASSERT_TRUE(res.no_plan.has_value());
}

TEST(Plan, ServingReplicasCoverConcurrency) {
  const ModelArch arch = llama_8b();
  Offer o = make_offer("v/h100x8", "NVIDIA H100 SXM", 8, 24.0, IntraNodeLink::nvlink);
  PlanRequest r;
  r.model.preset = "llama-3.1-8b";
  r.task = Task::serve;
  r.workload = PlanWorkload::serving;
  r.concurrency = 100;
  r.hours = 10;
  PlanResult res = plan(r, arch, {o}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(res.plans.size(), 1u);
  const Plan& p = res.plans[0];
  ASSERT_TRUE(p.serving.has_value());
  EXPECT_GE(p.replicas * p.serving->batch, 100);
  // 10 h + the 10-minute start-up, on-demand per-second billing: instances × $24/h × (10 + 1/6) h.
  EXPECT_NEAR(p.cost.compute_usd, p.instances * 24.0 * (10 + 600.0 / 3600.0), 1e-9);
  EXPECT_LE(p.per_gpu_memory_bytes, p.gpu_memory_capacity_bytes * (1 - r.margin));
}

TEST(Plan, ParetoFlagsMatchDefinition) {
  const ModelArch arch = llama_8b();
  std::vector<Offer> offers = {make_offer("a/h100x8", "NVIDIA H100 SXM", 8, 24.0, IntraNodeLink::nvlink),
                               make_offer("b/h100x1", "NVIDIA H100 SXM", 1, 3.0, IntraNodeLink::unknown),
                               make_offer("c/a100x1", "NVIDIA A100 SXM 80GB", 1, 1.2, IntraNodeLink::unknown),
                               make_offer("d/a100x1", "NVIDIA A100 SXM 80GB", 1, 1.9, IntraNodeLink::unknown)};
  PlanResult res = plan(lora_request(5e7), arch, offers, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(res.plans.size(), 4u);
  for (const Plan& p : res.plans) {
    bool dominated = false;
    for (const Plan& q : res.plans) {
      dominated |= dominates({q.total_usd(), q.time_seconds()}, {p.total_usd(), p.time_seconds()});
    }
    EXPECT_EQ(p.on_pareto_front, !dominated) << p.offer_id;
  }
  // d is the same machine as c at a higher price: dominated.
  for (const Plan& p : res.plans) {
    if (p.offer_id == "d/a100x1") {
      EXPECT_FALSE(p.on_pareto_front);
    }
  }
}

TEST(ExplainPlan, CostLinesRepeatThePlanNumbers) {
  const ModelArch arch = llama_8b();
  Offer o = make_offer("b/h100x1", "NVIDIA H100 SXM", 1, 2.0, IntraNodeLink::unknown);
  PlanRequest r = lora_request(1e7);
  PlanResult res = plan(r, arch, {o}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(res.plans.size(), 1u);
  auto lines = explain_plan(r, arch, res.plans[0], GpuCatalog::bundled());
  auto find = [&](const std::string& term) {
    auto it = std::find_if(lines.begin(), lines.end(), [&](const PlanExplainLine& l) { return l.term == term; });
    return it == lines.end() ? std::nan("") : it->value;
  };
  EXPECT_DOUBLE_EQ(find("cost.total_usd"), res.plans[0].total_usd());
  EXPECT_DOUBLE_EQ(find("cost.compute_usd"), res.plans[0].cost.compute_usd);
  EXPECT_DOUBLE_EQ(find("per_gpu_memory_bytes"), res.plans[0].per_gpu_memory_bytes);
  EXPECT_DOUBLE_EQ(find("work_seconds"), res.plans[0].work_seconds);
}


// ---- Regression tests for the defects of issue 7 ----

TEST(PlanDefects, CheapestGpuHourNeverComparesAnInstanceWithItself) {
  const ModelArch arch = llama_8b();
  // The same instance type in two regions: hourly billing with a 1 h minimum at $1/GPU-h in one,
  // per-second at $2/GPU-h in the other. The old warning named the instance against itself.
  Offer a = make_offer("p/h100x1", "NVIDIA H100 SXM", 1, 1.0, IntraNodeLink::unknown);
  a.region = "east";
  a.id = "p/h100x1/east";
  a.billing_override.granularity_seconds = 3600;
  a.billing_override.minimum_billed_seconds = 3600;
  Offer b = make_offer("p/h100x1", "NVIDIA H100 SXM", 1, 2.0, IntraNodeLink::unknown);
  b.region = "west";
  b.id = "p/h100x1/west";
  PlanResult res = plan(lora_request(1e6), arch, {a, b}, GpuCatalog::bundled(), &per_second);
  // The two regions differ only by region (and price): one row, the cheaper region's, listing both.
  ASSERT_EQ(res.plans.size(), 1u);
  ASSERT_EQ(res.plans[0].regions.size(), 2u);
  EXPECT_EQ(res.plans[0].region, res.plans[0].regions[0]);
  for (const auto& w : res.warnings) EXPECT_NE(w.code, PlanWarningCode::cheapest_gpu_hour_not_cheapest_job) << w.message;
}

TEST(PlanDefects, ServingBf16OnGpuWithoutBf16Warns) {
  const ModelArch arch = llama_8b();
  Offer o = make_offer("v/v100x8", "NVIDIA V100 SXM2 32GB", 8, 8.0, IntraNodeLink::nvlink);
  PlanRequest r;
  r.model.preset = "llama-3.1-8b";
  r.task = Task::serve;
  r.workload = PlanWorkload::serving;
  r.concurrency = 8;
  r.hours = 1;
  PlanResult res = plan(r, arch, {o}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(res.plans.size(), 1u) << (res.no_plan ? res.no_plan->reason : "");
  const auto& w = res.plans[0].warnings;
  EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](const PlanWarning& x) { return x.code == PlanWarningCode::fp16_without_bf16; }));
}

TEST(PlanDefects, ReservedOnlyOfferIsPlanned) {
  const ModelArch arch = llama_8b();
  Offer o = make_offer("q/h100x8", "NVIDIA H100 SXM", 8, 16.8, IntraNodeLink::nvlink);
  o.prices[0].kind = PriceKind::reserved_1y;
  PlanResult res = plan(lora_request(1e8), arch, {o}, GpuCatalog::bundled(), &per_second);
  ASSERT_EQ(res.plans.size(), 1u) << (res.no_plan ? res.no_plan->reason : "");
  EXPECT_EQ(res.plans[0].cost.price_kind, PriceKind::reserved_1y);
  // The whole one-year term is billed: 8760 h × $16.80 = $147,168 (reserved_term_seconds).
  EXPECT_NEAR(res.plans[0].cost.compute_usd, 16.8 * reserved_term_seconds(PriceKind::reserved_1y) / 3600, 1e-6);
}

TEST(PlanDefects, NoPlanReasonNamesTheRealCauseWhenNothingCouldBeSized) {
  // Old defect: "layouts fit but none could be priced" printed next to "0 layouts evaluated".
  const ModelArch arch = llama_8b();
  Offer o = make_offer("v/h100x8", "NVIDIA H100 SXM", 8, 24.0, IntraNodeLink::nvlink);
  PlanRequest r = lora_request(1e8);
  r.pins.pp = 3;  // 3 does not divide the 8 GPUs of the only offer: no layout exists
  PlanResult res = plan(r, arch, {o}, GpuCatalog::bundled(), &per_second);
  ASSERT_TRUE(res.no_plan.has_value());
  EXPECT_EQ(res.layouts_evaluated, 0u);
  EXPECT_EQ(res.no_plan->reason.find("fit"), std::string::npos) << res.no_plan->reason;
  EXPECT_NE(res.no_plan->reason.find("no parallel layout matches"), std::string::npos) << res.no_plan->reason;
}

TEST(PlanDefects, ParetoFrontSameWhateverTheSort) {
  ModelSource s;
  s.preset = "llama-3.1-70b";
  const ModelArch arch = resolve_model(s);
  PlanRequest r = lora_request(1e9);
  r.task = Task::full;
  r.limit = 1000;
  Offer cluster = make_offer("m/h100x8", "NVIDIA H100 SXM", 8, 24.0, IntraNodeLink::nvlink);
  cluster.inter_node_network = InterNodeNetwork::infiniband;
  cluster.inter_node_bits_per_s = 3200e9;
  cluster.max_nodes = 32;
  Offer other = make_offer("n/h200x8", "NVIDIA H200 SXM", 8, 30.0, IntraNodeLink::nvlink);
  auto front = [&](PlanSort sort) {
    r.sort = sort;
    r.pareto_only = true;
    std::set<std::pair<std::string, int>> out;
    for (const Plan& p : plan(r, arch, {cluster, other}, GpuCatalog::bundled(), &per_second).plans) {
      out.emplace(p.offer_id, p.instances);
    }
    return out;
  };
  const auto by_cost = front(PlanSort::cost);
  EXPECT_GE(by_cost.size(), 2u);  // several node counts of the cluster are non-dominated
  EXPECT_EQ(by_cost, front(PlanSort::time));
  EXPECT_EQ(by_cost, front(PlanSort::recommended));
}

}  // namespace
}  // namespace gpuplan
