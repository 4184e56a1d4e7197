#include "planner/cost.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace gpuplan {

double billed_seconds(double run_seconds, double granularity_seconds, double minimum_billed_seconds) {
  assert(run_seconds >= 0 && granularity_seconds > 0 && minimum_billed_seconds >= 0);
  // Guard against 60.000000001 → 120 from float noise: treat values within 1e-9 relative as exact.
  double units = run_seconds / granularity_seconds;
  double rounded = std::round(units);
  if (std::abs(units - rounded) <= 1e-9 * std::max(1.0, units)) units = rounded;
  double billed = std::ceil(units) * granularity_seconds;
  return std::max(billed, minimum_billed_seconds);
}

double young_daly_interval_seconds(double checkpoint_seconds, double mtbf_seconds) {
  assert(checkpoint_seconds > 0 && mtbf_seconds > 0);
  return std::sqrt(2.0 * checkpoint_seconds * mtbf_seconds);
}

SpotOverhead spot_overhead(double work_seconds, double checkpoint_seconds, double restart_seconds,
                           double preemptions_per_day) {
  assert(work_seconds >= 0 && checkpoint_seconds > 0 && restart_seconds >= 0 && preemptions_per_day >= 0);
  SpotOverhead s;
  if (preemptions_per_day == 0) {
    // A pool that did not preempt (a measured rate of 0, which the import accepts too): no
    // preemption, so nothing is lost and no checkpoint is written against one; the MTBF is
    // infinite (as sizing/goodput.cpp's for a failure rate of 0).
    s.mtbf_seconds = std::numeric_limits<double>::infinity();
    s.wall_seconds = work_seconds;
    return s;
  }
  s.mtbf_seconds = kSecondsPerDay / preemptions_per_day;
  s.interval_seconds = young_daly_interval_seconds(checkpoint_seconds, s.mtbf_seconds);
  double loss_per_preemption = s.interval_seconds / 2.0 + restart_seconds;
  if (loss_per_preemption >= s.mtbf_seconds) {
    s.feasible = false;
    return s;
  }
  s.checkpoints_seconds = work_seconds / s.interval_seconds * checkpoint_seconds;
  s.wall_seconds = (work_seconds + s.checkpoints_seconds) / (1.0 - loss_per_preemption / s.mtbf_seconds);
  s.expected_preemptions = s.wall_seconds / s.mtbf_seconds;
  s.lost_work_seconds = s.expected_preemptions * s.interval_seconds / 2.0;
  s.restart_seconds_total = s.expected_preemptions * restart_seconds;
  return s;
}

ResolvedBilling resolve_billing(const BillingTerms& terms, std::optional<double> preemptions_per_day_override) {
  ResolvedBilling r;
  r.sources = terms.sources;
  if (terms.granularity_seconds && *terms.granularity_seconds > 0) {
    r.granularity_seconds = *terms.granularity_seconds;
  } else {
    r.granularity_seconds = 1;
    r.assumptions.emplace_back("billing granularity unknown: per-second billing assumed");
  }
  if (terms.minimum_billed_seconds) {
    r.minimum_billed_seconds = std::max(0.0, *terms.minimum_billed_seconds);
  } else {
    r.minimum_billed_seconds = 0;
    r.assumptions.emplace_back("minimum billed time unknown: no minimum assumed");
  }
  r.storage_usd_per_gb_month = terms.storage_usd_per_gb_month;
  if (!r.storage_usd_per_gb_month) r.assumptions.emplace_back("storage price unknown: storage cost not counted");
  r.egress_usd_per_gb = terms.egress_usd_per_gb;
  if (!r.egress_usd_per_gb) r.assumptions.emplace_back("egress price unknown: egress cost not counted");
  if (terms.egress_free_gb_per_month) {
    r.egress_free_gb = std::max(0.0, *terms.egress_free_gb_per_month);
  } else if (r.egress_usd_per_gb) {
    r.assumptions.emplace_back("free egress allowance unknown: 0 GB assumed");
  }
  if (preemptions_per_day_override) {
    r.preemptions_per_day = preemptions_per_day_override;
  } else {
    r.preemptions_per_day = terms.preemptions_per_day;
  }
  return r;
}

double reserved_term_seconds(PriceKind kind) {
  switch (kind) {
    case PriceKind::reserved_1y: return 365.0 * kSecondsPerDay;
    case PriceKind::reserved_3y: return 3.0 * 365.0 * kSecondsPerDay;
    case PriceKind::reserved_1m: return 730.0 * 3600.0;  // 8,760 h / 12: the month monthly prices are quoted for
    case PriceKind::reserved_1w: return 7.0 * kSecondsPerDay;
    case PriceKind::reserved_3m: return 3.0 * 730.0 * 3600.0;
    case PriceKind::reserved_6m: return 6.0 * 730.0 * 3600.0;
    case PriceKind::on_demand:
    case PriceKind::spot: return 0;
  }
  return 0;
}

std::optional<CostBreakdown> price_job(const CostInputs& job, PriceKind kind, double usd_per_hour,
                                       const ResolvedBilling& billing) {
  CostBreakdown c;
  c.price_kind = kind;
  c.usd_per_hour = usd_per_hour;
  c.instances = std::max(job.instances, job.billed_instances);
  c.idle_instances = c.instances - job.instances;
  c.startup_seconds = std::max(0.0, job.startup_seconds);
  const double startup = c.startup_seconds;
  const double instances = static_cast<double>(job.instances);        // running: preemptions
  const double billed_instances = static_cast<double>(c.instances);  // billed: the compute bill
  auto compute = [&](double billed) { return billed_instances * usd_per_hour * billed / 3600.0; };

  if (kind == PriceKind::spot) {
    // nullopt is an unknown rate (no spot plan); 0 a known one with no preemption (no loss).
    if (!billing.preemptions_per_day || *billing.preemptions_per_day < 0 || job.checkpoint_seconds <= 0) {
      return std::nullopt;
    }
    // A synchronous job stops when any of its instances is preempted: with independent
    // interruptions at r per instance-day, the cluster sees instances × r per day, and its
    // MTBF is 1 day / (instances × r) (the rate the catalog and --preemptions-per-day give is
    // per instance; docs/planner.md "Cost").
    SpotOverhead s = spot_overhead(job.work_seconds, job.checkpoint_seconds, job.restart_seconds,
                                   *billing.preemptions_per_day * instances);
    if (!s.feasible) return std::nullopt;
    c.run_seconds = startup + s.wall_seconds;
    c.billed_seconds = billed_seconds(c.run_seconds, billing.granularity_seconds, billing.minimum_billed_seconds);
    double billed_work =
        billed_seconds(startup + job.work_seconds, billing.granularity_seconds, billing.minimum_billed_seconds);
    billed_work = std::min(billed_work, c.billed_seconds);
    c.compute_usd = compute(billed_work);
    c.spot_loss_usd = compute(c.billed_seconds) - c.compute_usd;
    c.spot = s;
  } else {
    c.run_seconds = startup + job.work_seconds;
    double term = reserved_term_seconds(kind);
    if (term > 0) {
      c.billed_seconds = std::max(1.0, std::ceil(c.run_seconds / term)) * term;
    } else {
      c.billed_seconds = billed_seconds(c.run_seconds, billing.granularity_seconds, billing.minimum_billed_seconds);
    }
    c.compute_usd = compute(c.billed_seconds);
  }
  if (billing.storage_usd_per_gb_month) {
    c.storage_usd = job.storage_bytes / kBytesPerGb * *billing.storage_usd_per_gb_month * c.run_seconds / kSecondsPerMonth;
  }
  if (billing.egress_usd_per_gb) {
    double gb = std::max(0.0, job.egress_bytes / kBytesPerGb - billing.egress_free_gb);
    c.egress_usd = gb * *billing.egress_usd_per_gb;
  }
  return c;
}

}  // namespace gpuplan
