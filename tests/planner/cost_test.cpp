// Total-cost model: expectations are hand calculations written next to each check.
#include "planner/cost.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuplan {
namespace {

TEST(BilledSeconds, RoundsUpToGranularity) {
  // 61 s on a 60 s granularity: ceil(61/60) = 2 units = 120 s.
  EXPECT_DOUBLE_EQ(billed_seconds(61, 60, 0), 120);
  // Exactly 60 s stays one unit.
  EXPECT_DOUBLE_EQ(billed_seconds(60, 60, 0), 60);
  // Hourly billing: 1.5 h → 2 h = 7200 s.
  EXPECT_DOUBLE_EQ(billed_seconds(5400, 3600, 0), 7200);
  // Per-second billing: 61.2 s → 62 s.
  EXPECT_DOUBLE_EQ(billed_seconds(61.2, 1, 0), 62);
}

TEST(BilledSeconds, AppliesMinimum) {
  // 30 s of per-second billing with a 60 s minimum bills 60 s (AWS Linux per-second billing rule).
  EXPECT_DOUBLE_EQ(billed_seconds(30, 1, 60), 60);
  // The minimum does not matter once exceeded: 90 s → 90 s.
  EXPECT_DOUBLE_EQ(billed_seconds(90, 1, 60), 90);
  EXPECT_DOUBLE_EQ(billed_seconds(0, 60, 600), 600);
}

TEST(YoungDaly, HandCalculation) {
  // sqrt(2 * 300 * 86400) = sqrt(51,840,000) = 7200 s.
  EXPECT_DOUBLE_EQ(young_daly_interval_seconds(300, 86400), 7200);
}

TEST(SpotOverhead, FirstOrderModel) {
  // 1 preemption/day → M = 86400 s; C = 300 s → τ = 7200 s; restart R = 600 s.
  // work W = 72000 s: checkpoints = W/τ·C = 10·300 = 3000 s.
  // loss per preemption = τ/2 + R = 3600 + 600 = 4200 s.
  // wall = (72000 + 3000) / (1 − 4200/86400) = 75000 / 0.951388... = 78832.1168 s.
  SpotOverhead s = spot_overhead(72000, 300, 600, 1.0);
  ASSERT_TRUE(s.feasible);
  EXPECT_DOUBLE_EQ(s.interval_seconds, 7200);
  EXPECT_DOUBLE_EQ(s.checkpoints_seconds, 3000);
  const double wall = 75000.0 / (1.0 - 4200.0 / 86400.0);
  EXPECT_NEAR(s.wall_seconds, wall, 1e-6);
  EXPECT_NEAR(s.expected_preemptions, wall / 86400.0, 1e-12);
  // The parts add up: wall = work + checkpoints + lost work + restarts.
  EXPECT_NEAR(72000 + s.extra_seconds(), s.wall_seconds, 1e-6);
}

TEST(SpotOverhead, InfeasibleWhenLossExceedsMtbf) {
  // 100 preemptions/day → M = 864 s; C = 300 s → τ = sqrt(2·300·864) = 720 s; τ/2 + R = 360 + 600 > 864.
  EXPECT_FALSE(spot_overhead(3600, 300, 600, 100).feasible);
}

TEST(ResolveBilling, UnknownTermsBecomeStatedAssumptions) {
  BillingTerms t;  // everything unknown
  ResolvedBilling r = resolve_billing(t, std::nullopt);
  EXPECT_DOUBLE_EQ(r.granularity_seconds, 1);
  EXPECT_DOUBLE_EQ(r.minimum_billed_seconds, 0);
  EXPECT_FALSE(r.storage_usd_per_gb_month.has_value());
  EXPECT_FALSE(r.egress_usd_per_gb.has_value());
  EXPECT_FALSE(r.preemptions_per_day.has_value());
  ASSERT_EQ(r.assumptions.size(), 4u);
  EXPECT_EQ(r.assumptions[0], "billing granularity unknown: per-second billing assumed");
}

TEST(ResolveBilling, OverrideOfPreemptionRateWins) {
  BillingTerms t;
  t.preemptions_per_day = 0.5;
  EXPECT_DOUBLE_EQ(*resolve_billing(t, 3.0).preemptions_per_day, 3.0);
  EXPECT_DOUBLE_EQ(*resolve_billing(t, std::nullopt).preemptions_per_day, 0.5);
}

ResolvedBilling known_billing() {
  BillingTerms t;
  t.granularity_seconds = 60;
  t.minimum_billed_seconds = 60;
  t.storage_usd_per_gb_month = 0.10;
  t.egress_usd_per_gb = 0.09;
  t.egress_free_gb_per_month = 100;
  t.preemptions_per_day = 1;
  return resolve_billing(t, std::nullopt);
}

TEST(PriceJob, OnDemandPartsHandCalculated) {
  CostInputs job;
  job.work_seconds = 3601;  // 1 h + 1 s → 61 minutes billed at 60 s granularity = 3660 s
  job.instances = 2;
  job.storage_bytes = 730e9;  // 730 GB for 3660/(730·3600) of a month
  job.egress_bytes = 240e9;   // 240 GB − 100 GB free = 140 GB
  auto c = price_job(job, PriceKind::on_demand, 10.0, known_billing());
  ASSERT_TRUE(c.has_value());
  EXPECT_DOUBLE_EQ(c->billed_seconds, 3660);
  // compute: 2 × $10/h × 3660 s / 3600 = $20.3333...
  EXPECT_NEAR(c->compute_usd, 2 * 10.0 * 3660 / 3600, 1e-9);
  // storage: 730 GB × $0.10/GB-month × 3601 s / (730 × 3600 s) = $0.1000277...
  EXPECT_NEAR(*c->storage_usd, 730 * 0.10 * 3601.0 / (730 * 3600.0), 1e-12);
  // egress: 140 GB × $0.09 = $12.60
  EXPECT_NEAR(*c->egress_usd, 12.6, 1e-12);
  EXPECT_DOUBLE_EQ(c->spot_loss_usd, 0);
  EXPECT_NEAR(c->total_usd(), c->compute_usd + *c->storage_usd + *c->egress_usd, 1e-12);
}

TEST(PriceJob, SpotSplitsComputeAndLoss) {
  CostInputs job;
  job.work_seconds = 72000;
  job.checkpoint_seconds = 300;
  job.restart_seconds = 600;
  auto c = price_job(job, PriceKind::spot, 4.0, known_billing());
  ASSERT_TRUE(c.has_value());
  // Uninterrupted work 72000 s (a multiple of 60) costs $4/h × 20 h = $80.
  EXPECT_NEAR(c->compute_usd, 80.0, 1e-9);
  // Wall 78832.1168 s → billed ceil(/60)·60 = 78840 s; total compute 4 × 78840/3600 = $87.60.
  EXPECT_NEAR(c->compute_usd + c->spot_loss_usd, 4.0 * 78840 / 3600, 1e-9);
  EXPECT_NEAR(c->spot_loss_usd, 7.6, 1e-9);
}

TEST(PriceJob, SpotUnknownRateGivesNoPrice) {
  CostInputs job;
  job.work_seconds = 3600;
  job.checkpoint_seconds = 60;
  EXPECT_FALSE(price_job(job, PriceKind::spot, 1.0, resolve_billing(BillingTerms{}, std::nullopt)).has_value());
}

// Issue (small11 #2): a rate of 0 preemptions a day ("this spot pool did not preempt", which the
// import accepts) is a known rate with no loss, not an unknown one: the spot run is the work.
TEST(SpotOverhead, ZeroRateLosesNothing) {
  const SpotOverhead s = spot_overhead(72000, 300, 600, 0.0);
  EXPECT_TRUE(s.feasible);
  EXPECT_DOUBLE_EQ(s.wall_seconds, 72000);  // no checkpoint against preemption, no loss, no restart
  EXPECT_DOUBLE_EQ(s.extra_seconds(), 0);
  EXPECT_DOUBLE_EQ(s.expected_preemptions, 0);
  EXPECT_TRUE(std::isinf(s.mtbf_seconds));
}

TEST(PriceJob, SpotAtZeroRateCostsTheWorkOnly) {
  CostInputs job;
  job.work_seconds = 72000;
  job.checkpoint_seconds = 300;
  job.restart_seconds = 600;
  job.instances = 2;
  BillingTerms t;
  t.granularity_seconds = 60;
  const auto c = price_job(job, PriceKind::spot, 4.0, resolve_billing(t, 0.0));  // --preemptions-per-day 0
  ASSERT_TRUE(c.has_value());
  // 2 instances × $4/h × 20 h (72000 s, a multiple of 60) = $160, nothing lost to preemption.
  EXPECT_NEAR(c->compute_usd, 160.0, 1e-9);
  EXPECT_DOUBLE_EQ(c->spot_loss_usd, 0);
  EXPECT_DOUBLE_EQ(c->run_seconds, 72000);
}

TEST(PriceJob, ReservedBillsTheWholeTerm) {
  CostInputs job;
  job.work_seconds = 30 * kSecondsPerDay;  // one month of a 1-year commitment
  auto c = price_job(job, PriceKind::reserved_1y, 1.0, known_billing());
  ASSERT_TRUE(c.has_value());
  // $1/h × 8760 h = $8760 whatever the run length below a year.
  EXPECT_NEAR(c->compute_usd, 8760.0, 1e-6);
}

TEST(PriceJob, MonthlyPlanBillsWholeMonthsOf730Hours) {
  CostInputs job;
  job.work_seconds = 45 * kSecondsPerDay;  // 1,080 h: one month and a half
  auto c = price_job(job, PriceKind::reserved_1m, 2.0, known_billing());
  ASSERT_TRUE(c.has_value());
  // ceil(1080 h / 730 h) = 2 months: $2/h × 2 × 730 h = $2,920 (a monthly price of $1,460 per month).
  EXPECT_NEAR(c->compute_usd, 2920.0, 1e-6);
  EXPECT_DOUBLE_EQ(reserved_term_seconds(PriceKind::reserved_1m), 730.0 * 3600.0);
}

// Week, 3-month and 6-month commitments (RunPod savings plans) bill their whole term.
TEST(PriceJob, WeekThreeAndSixMonthTermsBillTheWholeTerm) {
  CostInputs job;
  job.work_seconds = 3 * kSecondsPerDay;  // a 3-day run
  // 1 week: $2/h × 168 h = $336.
  auto w = price_job(job, PriceKind::reserved_1w, 2.0, known_billing());
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->compute_usd, 336.0, 1e-6);
  EXPECT_NEAR(w->billed_seconds, 168.0 * 3600.0, 1e-6);
  // 3 months: $2/h × 3 × 730 h = $4,380.
  auto m3 = price_job(job, PriceKind::reserved_3m, 2.0, known_billing());
  ASSERT_TRUE(m3.has_value());
  EXPECT_NEAR(m3->compute_usd, 4380.0, 1e-6);
  // 6 months: $2/h × 6 × 730 h = $8,760; a 200-day run (4,800 h) needs 2 terms: 2 × 4,380 h × $2 = $17,520.
  auto m6 = price_job(job, PriceKind::reserved_6m, 2.0, known_billing());
  ASSERT_TRUE(m6.has_value());
  EXPECT_NEAR(m6->compute_usd, 8760.0, 1e-6);
  job.work_seconds = 200 * kSecondsPerDay;
  auto m6b = price_job(job, PriceKind::reserved_6m, 2.0, known_billing());
  ASSERT_TRUE(m6b.has_value());
  EXPECT_NEAR(m6b->compute_usd, 17520.0, 1e-6);
}

// An offer sold as at least 4 instances (Offer::min_nodes) and a job on 2: 4 are billed, 2 idle.
TEST(PriceJob, AMinimumAboveTheJobsInstancesBillsTheMinimum) {
  CostInputs job;
  job.work_seconds = 10 * 3600.0;  // a 10-hour run inside one month
  job.instances = 2;
  job.billed_instances = 4;
  auto c = price_job(job, PriceKind::reserved_1m, 16.0, known_billing());
  ASSERT_TRUE(c.has_value());
  // 4 instances × $16/h × 730 h = $46,720 (not 2 × $16 × 730 = $23,360).
  EXPECT_NEAR(c->compute_usd, 46720.0, 1e-6);
  EXPECT_EQ(c->instances, 4);
  EXPECT_EQ(c->idle_instances, 2);
  // A minimum at or below the job's instances changes nothing: 8 instances × $16/h × 730 h.
  job.instances = 8;
  auto d = price_job(job, PriceKind::reserved_1m, 16.0, known_billing());
  ASSERT_TRUE(d.has_value());
  EXPECT_NEAR(d->compute_usd, 8 * 16.0 * 730.0, 1e-6);
  EXPECT_EQ(d->instances, 8);
  EXPECT_EQ(d->idle_instances, 0);
}

// Spot on a minimum: the idle instances are billed but their preemptions do not stop the job,
// so the cluster MTBF is that of the 1 running instance: 1 day / (1 × 2 per day) = 43,200 s.
TEST(PriceJob, IdleInstancesOfAMinimumAddNoSpotPreemptions) {
  CostInputs job;
  job.work_seconds = 3600;
  job.checkpoint_seconds = 60;
  job.restart_seconds = 120;
  job.instances = 1;
  job.billed_instances = 3;
  auto c = price_job(job, PriceKind::spot, 1.0, resolve_billing(BillingTerms{}, 2.0));
  ASSERT_TRUE(c.has_value());
  ASSERT_TRUE(c->spot.has_value());
  EXPECT_NEAR(c->spot->mtbf_seconds, 43200.0, 1e-6);
  EXPECT_EQ(c->instances, 3);
  // Per-second billing: compute + spot loss = 3 instances × $1/h × wall / 3600.
  EXPECT_NEAR(c->compute_usd + c->spot_loss_usd, 3.0 * c->billed_seconds / 3600.0, 1e-9);
}

}  // namespace
}  // namespace gpuplan
