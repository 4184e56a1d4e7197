#pragma once
/// Planner layer, total-cost model: what a run costs beyond "hours × price".
///
/// All functions are pure. Units: seconds, bytes (GB = 1e9 bytes), USD. Unknown billing terms
/// are never invented: resolve_billing() fills them with a stated ASSUMPTION and returns the
/// assumption text so the plan can warn about it.
///
/// Terms (each a named part of CostBreakdown, which adds up to total_usd):
///  - compute: instances × usd_per_hour × billed_seconds / 3600, where billed_seconds is the run
///    time rounded UP to the provider's billing granularity and at least its minimum.
///  - storage: (dataset + checkpoint) bytes / 1e9 × usd_per_gb_month × run_seconds / kSecondsPerMonth.
///  - egress: max(0, egress_gb − free_gb) × usd_per_gb (the free allowance counted once: the
///    download happens in one month).
///  - spot loss: the spot run's extra billed time from checkpoints, lost work and restarts (Young
///    1974, Daly 2006; see spot_overhead()), priced at the spot rate.
#include <optional>
#include <string>
#include <vector>

#include "catalog/offer.hpp"

namespace gpuplan {

/// Seconds in a billing month: 730 hours (365 × 24 / 12), the convention AWS, GCP and Azure use
/// to prorate per-GB-month storage prices (e.g. https://aws.amazon.com/ebs/pricing/ examples).
inline constexpr double kSecondsPerMonth = 730.0 * 3600.0;
inline constexpr double kSecondsPerDay = 86400.0;
inline constexpr double kBytesPerGb = 1e9;

/// Billed time of one instance: the run time rounded up to a multiple of `granularity_seconds`
/// (> 0), and at least `minimum_billed_seconds`. Example: 61 s at 60 s granularity → 120 s.
/// A run of 0 s bills the minimum. Preconditions (asserted): run ≥ 0, granularity > 0, minimum ≥ 0.
double billed_seconds(double run_seconds, double granularity_seconds, double minimum_billed_seconds);

/// Young/Daly optimal checkpoint interval τ = √(2·C·M) for checkpoint time C and mean time
/// between failures M (Young 1974, "A first order approximation to the optimum checkpoint
/// interval", CACM 17(9) eq. 3; Daly 2006, FGCS 22(3) eq. 20 first-order term).
/// Example: C = 300 s, M = 1 day → √(2·300·86400) = 7200 s.
double young_daly_interval_seconds(double checkpoint_seconds, double mtbf_seconds);

/// The expected extra wall time of a run of `work_seconds` on capacity that is preempted on
/// average every `mtbf_seconds`, checkpointing every τ (Young/Daly) and restarting after each
/// preemption. First-order model (Daly 2006 §3):
///   wall = work + checkpoints + preemptions × (τ/2 + restart)
///   checkpoints_seconds = (work / τ) × checkpoint_seconds
///   expected_preemptions = wall / M   (preemptions happen during the whole wall time)
/// which solves to wall = (work + checkpoints) / (1 − (τ/2 + restart)/M).
/// `feasible` is false (and the other terms 0) when (τ/2 + restart) ≥ M: the run would never
/// finish in expectation.
struct SpotOverhead {
  bool feasible = true;
  double mtbf_seconds = 0;
  double interval_seconds = 0;       ///< τ, Young/Daly
  double checkpoints_seconds = 0;    ///< time spent writing checkpoints
  double expected_preemptions = 0;
  double lost_work_seconds = 0;      ///< expected_preemptions × τ/2
  double restart_seconds_total = 0;  ///< expected_preemptions × restart_seconds
  double wall_seconds = 0;           ///< work + checkpoints + lost work + restarts
  double extra_seconds() const { return checkpoints_seconds + lost_work_seconds + restart_seconds_total; }
};
/// Preconditions (asserted): work ≥ 0, checkpoint > 0, restart ≥ 0, preemptions_per_day ≥ 0.
/// A rate of 0 (a pool that did not preempt) is no loss: wall = work, MTBF infinite, interval 0.
SpotOverhead spot_overhead(double work_seconds, double checkpoint_seconds, double restart_seconds,
                           double preemptions_per_day);

/// Billing terms with every unknown filled by a stated assumption.
struct ResolvedBilling {
  double granularity_seconds = 1;
  double minimum_billed_seconds = 0;
  std::optional<double> storage_usd_per_gb_month;  ///< nullopt: unknown, storage cost not counted
  std::optional<double> egress_usd_per_gb;         ///< nullopt: unknown, egress cost not counted
  double egress_free_gb = 0;
  std::optional<double> preemptions_per_day;       ///< spot only; nullopt = unknown
  /// One plain sentence per assumption made ("billing granularity unknown: per-second billing assumed").
  std::vector<std::string> assumptions;
  std::vector<std::string> sources;  ///< BillingTerms::sources carried through
};

/// Resolves merged BillingTerms (provider defaults + offer overrides, see catalog/providers.hpp).
/// Assumptions for unknown values (stated in `assumptions`, never silent):
///  - granularity unknown → 1 s (per-second billing assumed); minimum unknown → 0 s;
///  - storage price unknown → not counted (the plan shows storage "unknown");
///  - egress price unknown → not counted ("unknown"); free allowance unknown → 0 GB.
/// `preemptions_per_day_override` (the --preemptions-per-day flag) replaces the provider's rate.
ResolvedBilling resolve_billing(const BillingTerms& terms, std::optional<double> preemptions_per_day_override);

/// One priced way to run a job on an offer (one price kind).
struct CostBreakdown {
  PriceKind price_kind = PriceKind::on_demand;
  double usd_per_hour = 0;          ///< per instance
  int instances = 1;                ///< instances billed (CostInputs: max(instances, billed_instances))
  /// Of `instances`, those billed only because the offer is sold as at least that many
  /// (Offer::min_nodes) while the job runs on fewer: billed and idle. 0 = every billed instance runs.
  int idle_instances = 0;
  double run_seconds = 0;           ///< wall time of the job, including spot overhead and start-up
  /// The fixed start-up of the run included in run_seconds and billed on every instance (cluster
  /// start, container and weights load, first checkpoint: PlanRequest::startup_seconds).
  double startup_seconds = 0;
  double billed_seconds = 0;        ///< per instance, after rounding / minimum / reserved term
  double compute_usd = 0;           ///< instances × usd_per_hour × billed_seconds / 3600, without spot loss
  std::optional<double> storage_usd;  ///< nullopt = storage price unknown
  std::optional<double> egress_usd;   ///< nullopt = egress price unknown
  double spot_loss_usd = 0;         ///< the part of the spot compute bill caused by preemption overhead
  std::optional<SpotOverhead> spot; ///< set for spot pricing
  double total_usd() const { return compute_usd + storage_usd.value_or(0) + egress_usd.value_or(0) + spot_loss_usd; }
  /// True when a part is unknown (storage or egress price not published): total_usd() then counts
  /// only the known parts and is a lower bound ("≥" in the table, `total_is_lower_bound` in JSON).
  bool total_is_lower_bound() const { return !storage_usd || !egress_usd; }
};

/// What the cost model needs from the job.
struct CostInputs {
  double work_seconds = 0;          ///< time to finish without interruptions
  int instances = 1;                ///< instances the job runs on
  /// Instances billed when more than `instances`: the offer's minimum (Offer::min_nodes, a
  /// reserved cluster sold as >= N nodes). 0 (or <= instances) = the instances the job runs on.
  /// The idle ones are billed like the others (every term, reserved whole terms included) but do
  /// not add spot preemptions: a preempted idle node does not stop the job.
  int billed_instances = 0;
  double storage_bytes = 0;         ///< dataset + checkpoints kept during the run
  double egress_bytes = 0;          ///< downloaded at the end (final weights, or --egress-gb)
  double checkpoint_seconds = 0;    ///< time to write one checkpoint (spot)
  double restart_seconds = 0;       ///< time to restart after a preemption (spot)
  /// Fixed time per run before the first step, on every instance (PlanRequest::startup_seconds):
  /// added to the wall time and billed (not subject to preemption: counted once).
  double startup_seconds = 0;
};

/// Prices one job at one price kind. The run is startup_seconds + the work (spot: + its overhead);
/// compute on max(instances, billed_instances) instances: billed = billed_seconds(run, granularity, minimum);
/// for reserved kinds the commitment term (1 week of 7 days, 1, 3 or 6 months of 730 h, 1 or 3 years of
/// 365 days) is billed whole:
/// billed = ceil(wall / term) × term. For spot the wall time is spot_overhead().wall_seconds and
/// compute_usd covers the uninterrupted work's billed time, spot_loss_usd the rest, so that
/// compute_usd + spot_loss_usd = instances × price × billed(wall) / 3600.
/// Returns nullopt for spot when the preemption rate is unknown or the run is infeasible.
std::optional<CostBreakdown> price_job(const CostInputs& job, PriceKind kind, double usd_per_hour,
                                       const ResolvedBilling& billing);

/// Commitment term of a reserved price kind in seconds (7-day weeks, 730-hour months, 365-day years); 0 for
/// on-demand/spot.
double reserved_term_seconds(PriceKind kind);

}  // namespace gpuplan
