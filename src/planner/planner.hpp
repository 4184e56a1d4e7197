#pragma once
/// Planner layer: for every offer, every node count and every parallel layout, keep the layouts
/// that fit per-GPU memory with the margin, estimate time with the sizing layer, price the run
/// with the total-cost model (cost.hpp), keep the best per offer, rank, mark the Pareto front
/// and name the common mistakes as warnings. docs/planner.md walks through it.
///
/// Pure: offers, GPU specs and the model come in as values; the DB, files and clock stay at
/// the CLI/server edge. "No offer can run this" is a value (PlanResult::no_plan), not an error.
///
/// Search (training), per (GPU model, GPUs per node, nodes, links) — cached, since many offers
/// share one GPU configuration:
///   TP: powers of two ≤ GPUs per node dividing the attention heads (TP stays inside a node);
///   PP: divisors of the layer count; DP = GPUs / (TP·PP), must divide the global batch;
///   ZeRO: 0 when DP = 1, else 2 then 3 (ZeRO-1/2 move the same bytes as plain DP, so stage 2
///   dominates 0 and 1; ZeRO-3 only when 2 does not fit);
///   micro-batch: powers of two dividing global batch / DP;
///   recompute: none, then selective, then full — the first that fits (each adds compute).
///   Nodes: 1, then 2, 4, ... ≤ min(--max-nodes, offer max_nodes), only where the offer has a
///   known inter-node network.
/// Serving: TP powers of two ≤ GPUs per node dividing the heads; replicas per instance =
/// GPUs / TP; instances = ceil(replicas needed / replicas per instance) ≤ --max-nodes.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/offer.hpp"
#include "hardware/gpu_spec.hpp"
#include "model/model_arch.hpp"
#include "planner/cost.hpp"
#include "planner/plan_request.hpp"
#include "sizing/memory.hpp"
#include "sizing/perf.hpp"
#include "sizing/serving_perf.hpp"

namespace gpuplan {

/// A named common mistake or caveat that applies to a plan (or to the whole result).
struct PlanWarning {
  /// Stable code: pcie_multi_gpu, multi_node_network, not_confirmed_available, stale_price,
  /// price_date_unknown, egress_storage_share, fp16_without_bf16, gddr_serving,
  /// cheapest_gpu_hour_not_cheapest_job, billing_assumption, spot_not_cheaper,
  /// link_assumed, reserved_commitment, max_nodes_assumed, gpu_figures_unknown, offer_flagged.
  std::string code;
  std::string message;  ///< one plain sentence
};

/// One way to run the job: an offer × instance count × layout, priced.
struct Plan {
  // Offer
  std::string offer_id;
  std::string provider;
  std::string instance_type;
  std::string region;
  std::string gpu_name;            ///< canonical GpuSpec name
  int gpus_per_instance = 0;
  int instances = 1;               ///< nodes (training) or serving instances
  IntraNodeLink intra_node_link = IntraNodeLink::unknown;
  InterNodeNetwork inter_node_network = InterNodeNetwork::unknown;
  /// The cluster the time estimate used (GPU, GPUs per node, nodes, link bandwidths), so that
  /// explain_plan recomputes exactly the plan's numbers.
  ClusterSpec cluster;

  // Layout and fit
  ParallelLayout layout;           ///< training: tp/pp/dp/zero/micro-batch; serving: tp (per replica)
  Recompute recompute = Recompute::none;
  std::int64_t global_batch_seqs = 0;  ///< training
  std::int64_t replicas = 0;           ///< serving: model replicas in total
  double per_gpu_memory_bytes = 0;     ///< requirement of the most loaded GPU
  double gpu_memory_capacity_bytes = 0;
  double margin = 0;                   ///< the fit margin used: per_gpu ≤ capacity × (1 − margin)

  // Time
  double tokens_per_s = 0;         ///< training: trained tokens/s; serving: generated tokens/s, all replicas
  double work_seconds = 0;         ///< time to finish without preemption (serving: the duration)
  double steps = 0;                ///< training: optimizer steps
  std::optional<TrainingStepEstimate> training;
  std::optional<ServingEstimate> serving;
  double kv_capacity_bytes = 0;    ///< serving: KV-cache bytes that fit beside the weights, per replica
  double requests_per_s = 0;       ///< serving capacity, all replicas (images: images/s)
  std::optional<double> images_per_hour;      ///< image generation, the whole plan
  std::optional<double> usd_per_1000_images;  ///< image generation: total / images × 1000

  // Cost
  CostBreakdown cost;                      ///< the chosen price kind (cheapest total)
  std::vector<CostBreakdown> alternatives; ///< the other price kinds with a price, cheapest first
  SourceRef price_source;                  ///< of the chosen price
  ResolvedBilling billing;
  double storage_bytes = 0;                ///< dataset + checkpoint kept during the run
  double egress_bytes = 0;
  double checkpoint_bytes = 0;
  double usd_per_gpu_hour = 0;             ///< chosen price / gpus_per_instance

  std::vector<PlanWarning> warnings;
  bool on_pareto_front = false;
  /// Offers collapsed into this plan: the same provider, instance type and region (other
  /// availability zones) at the same price with the same plan. Empty when none.
  std::vector<std::string> same_plan_offer_ids;

  double time_seconds() const { return cost.run_seconds; }
  double total_usd() const { return cost.total_usd(); }
};

/// Why nothing fits, and what would make it fit.
struct NoPlanReason {
  std::string reason;                  ///< one sentence
  double smallest_per_gpu_bytes = 0;   ///< smallest per-GPU requirement seen over all layouts tried
  double largest_gpu_bytes = 0;        ///< largest GPU memory among the offers considered
  bool any_multi_node_offer = false;   ///< an offer with a known inter-node network exists
  std::vector<std::string> suggestions;  ///< "use QLoRA", "ZeRO-3 over more nodes", "quantise to int4", ...
};

struct PlanResult {
  std::vector<Plan> plans;         ///< best per offer, sorted by request.sort, Pareto-marked, limited
  std::size_t plans_total = 0;     ///< before --limit / --pareto
  std::size_t offers_considered = 0;
  std::size_t offers_skipped = 0;  ///< excluded by quality flags, unresolved GPU, no price, or GPU figures unpublished
  std::size_t layouts_evaluated = 0;
  std::vector<PlanWarning> warnings;  ///< about the result as a whole
  std::optional<NoPlanReason> no_plan;  ///< set when plans is empty
  std::string model_name;
  double training_tokens = 0;
};

/// Plans the request on the offers. `arch` = resolve_model(request.model) (done at the edge),
/// `billing_of(offer)` gives the merged billing terms (provider defaults + overrides; the CLI
/// passes catalog's effective_billing). request.validate() must have passed.
/// Throws Error{invalid_input} only for a request the model cannot take at all (e.g. image
/// generation on a decoder model).
using BillingLookup = BillingTerms (*)(const Offer&);
PlanResult plan(const PlanRequest& request, const ModelArch& arch, const std::vector<Offer>& offers,
                const GpuCatalog& gpus, BillingLookup billing_of, const PerfAssumptions& assumptions = {});

/// One explained number of a plan: name, value, unit, the formula with numbers, and its source.
struct PlanExplainLine {
  std::string term;
  double value = 0;
  std::string unit;
  std::string formula;
  std::string source;
};
/// Every number of `p` with its formula: memory terms (sizing), step time terms (perf), the
/// time to finish, and each cost part (cost.hpp), in that order.
std::vector<PlanExplainLine> explain_plan(const PlanRequest& request, const ModelArch& arch, const Plan& p,
                                          const GpuCatalog& gpus, const PerfAssumptions& assumptions = {});

}  // namespace gpuplan
