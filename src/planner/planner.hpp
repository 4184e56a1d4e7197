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
///   VP (--stack megatron, PP > 1): 1 and the v Megatron-LM accepts (vp_candidates);
///   ZeRO: 0 when DP = 1, else 2 then 3 (ZeRO-1/2 move the same bytes as plain DP, so stage 2
///   dominates 0 and 1; ZeRO-3 only when 2 does not fit);
///   micro-batch: powers of two dividing global batch / DP;
///   recompute: none, then selective, then full — the first that fits (each adds compute); with
///   --stack megatron and an MoE or MLA model (no mode or modules given), Megatron-Core's
///   selective recompute of the modules NVIDIA's recipes use for such models (layernorm and
///   moe_act, mla_up_proj; recipe_recompute_modules) is tried after none, then the default
///   selective beside it; full only when neither fits.
///   Nodes: 1, then 2, 4, ... ≤ min(--max-nodes, offer max_nodes), only where the offer has a
///   known inter-node network.
/// Serving: TP powers of two ≤ GPUs per node dividing the heads; replicas per instance =
/// GPUs / TP; instances = ceil(replicas needed / replicas per instance) ≤ --max-nodes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/offer.hpp"
#include "catalog/store.hpp"
#include "hardware/gpu_spec.hpp"
#include "model/model_arch.hpp"
#include "planner/cost.hpp"
#include "planner/plan_request.hpp"
#include "sizing/memory.hpp"
#include "sizing/goodput.hpp"
#include "sizing/perf.hpp"
#include "sizing/serving_perf.hpp"

namespace gpuplan {

/// Stable warning codes; plan_warning_code_name gives the snake_case name the CLI and the JSON
/// show (one row per code in kPlanWarningCodes, planner.cpp).
enum class PlanWarningCode {
  pcie_multi_gpu,          ///< multi-GPU layout over PCIe only
  link_assumed,            ///< intra-node link not listed: assumed from the datasheet
  max_nodes_assumed,       ///< the source does not say how many instances can be rented together
  multi_node_network,      ///< inter-node network speed not listed: assumed
  memory_mismatch,         ///< offer's GPU memory differs from the datasheet: datasheet used
  offer_flagged,           ///< a data-quality flag questions the price or the memory
  not_confirmed_available, ///< listed price, availability never confirmed
  price_date_unknown,      ///< undated price
  stale_price,             ///< price older than --stale-days
  egress_storage_share,    ///< storage + egress > 20% of the total
  fp16_without_bf16,       ///< BF16 asked on a GPU without BF16 (or FP16 where BF16 exists)
  gddr_serving,            ///< serving on GDDR memory: bandwidth-bound decode
  spot_not_cheaper,        ///< spot loses after expected preemptions
  marketplace_bid,         ///< the spot price is a marketplace bid (vast interruptible): outbid = stopped
  reserved_commitment,     ///< a reserved price bills the whole term
  billing_assumption,      ///< unknown billing terms assumed
  batch_adjusted,          ///< the global batch was rounded to a multiple of DP × micro-batch
  uneven_pipeline,         ///< pipeline stages hold different layer counts
  long_run,                ///< the plan runs for more than 30 days
  low_goodput,             ///< failures and checkpoints cost more than 10% of the run
  cheapest_gpu_hour_not_cheapest_job,  ///< result-level
  spot_rate_unknown,       ///< result-level
  gpu_figures_unknown,     ///< result-level
  ranked_after_clean,      ///< result-level: flagged / stale / undated offers ranked after clean ones
  /// result-level: only plans on undated or flagged prices meet the deadline/budget while plans on
  /// dated, unflagged prices exist: none is recommended; what those would need is quoted
  no_clean_plan,
  /// serving: TTFT or TPOT above the (default or given) latency target at every batch (plan not recommended)
  latency_target_missed,
  /// the GPU's BF16/FP16 tensor-core peak is unknown (data/gpus.csv): the FP32 peak was used
  fp32_math_fallback,
  /// --seq (or prompt + output tokens) exceeds the model's maximum context
  seq_exceeds_context,
  /// TP larger than the model's KV heads: each KV head is replicated on TP / kv_heads GPUs
  kv_heads_replicated,
  /// result-level: the recommended plan (on a clean price) costs at least 10% more than a plan on
  /// a stale price (dated, unflagged, older than --max-price-age) ranked after it; names that
  /// plan, its price age and the cost ratio (values: docs/planner.md "Price evidence")
  cheaper_stale_plan,
  /// result-level: the recommended plan (on a dated, unflagged price) costs at least 10% more
  /// than a plan on an undated price ranked after it; names that plan, its rank and the ratio
  cheaper_undated_plan,
  /// result-level, QLoRA only: 16-bit LoRA fits the recommended plan's machine (same offer, same
  /// GPU count) and costs at least 5% less there; quotes both totals and times
  lora_cheaper_than_qlora,
  /// result-level: the recommended plan rests on older price evidence (stale, undated) than a
  /// plan passed over because it runs past the recommendation horizon (30 days, or the deadline);
  /// names that plan and its time (values: docs/planner.md "Price evidence")
  fresher_plan_too_long,
  /// serving: the replicas the load needs use fewer GPUs than the instances rented; says how many
  /// are idle (values: used_gpus, rented_gpus, idle_gpus, replicas, tp)
  idle_gpus,
  /// the offer is sold as at least min_nodes instances (a reserved cluster) and the job runs on
  /// fewer: the minimum is billed; names the idle instances and their cost (values: min_nodes,
  /// used_nodes, idle_nodes, idle_gpus, idle_usd)
  min_nodes_billed,
  /// estimate --ignore-memory: gpuplan's memory model puts the timed layout above the GPU's
  /// capacity (with the margin); it was timed as asked (values: per_gpu_gb, capacity_gb, usable_gb)
  memory_over_capacity,
  /// training an MoE model with EP > 1 and no --moe-dispatcher: timed with Megatron-Core's alltoall
  /// dispatcher; the deduplicating DeepEP/HybridEP dispatchers of NVIDIA's recent recipes are faster
  /// (values: ep)
  moe_dispatcher_assumed,
  /// serving or a batch job with --quant fp8 on a GPU without FP8 tensor cores (no FP8 peak in the
  /// catalog: Ampere, Turing): engines run FP8 checkpoints there weight-only (W8A16, vLLM's FP8
  /// Marlin kernels), so the weights and their reads are 8-bit but the matmuls run and are timed at
  /// the 16-bit peak (values: gpu)
  fp8_weight_only,
  /// the provider's minimum billed time is at least twice the run (a 1-day minimum on a 28-minute
  /// job bills 51×): names the run, the minimum and the compute bill of the time not used
  /// (values: run_hours, minimum_hours, ratio, unused_usd)
  billing_minimum,
  /// training on a GPU whose vendor has no published training throughput in gpuplan's calibration
  /// (AMD, Intel, ...): the time uses the conservative efficiency of uncalibrated GPUs and the
  /// vendor's builds of the stack (values: gpu, vendor). Trial56 #1: an MI300X was plan #1 for
  /// most 7-8B LoRA jobs with no word that its speed is not calibrated.
  time_uncalibrated,
  /// training a hybrid SSM model (Jamba, Nemotron-H): each block's activations are counted as a transformer layer's
  /// (values: model, blocks)
  hybrid_activations_approximate,
};
std::string_view plan_warning_code_name(PlanWarningCode c) noexcept;

/// A named common mistake or caveat that applies to a plan (or to the whole result).
struct PlanWarning {
  PlanWarningCode code = PlanWarningCode::billing_assumption;
  std::string message;  ///< one plain sentence
  /// The figures the sentence quotes, by name (units in names: `_usd`, `_days`), for front ends
  /// that word it themselves (web/locales warn_CODE); empty for most codes.
  std::map<std::string, std::string> values;
  std::string_view name() const noexcept { return plan_warning_code_name(code); }
};

/// Serving: one tensor-parallel degree the search weighed for an instance (Plan::serving_tp_options).
struct ServingTpOption {
  int tp = 1;
  std::int64_t batch = 0;          ///< sequences per replica at the evaluated point
  double ttft_seconds = 0;         ///< at that batch
  double tpot_seconds = 0;         ///< at that batch
  bool tpot_defined = true;        ///< false with one output token (ServingEstimate::tpot_defined)
  bool meets_latency = true;       ///< TTFT and TPOT within the (default or given) target
  std::int64_t instances_needed = 0;  ///< instances the load needs at this TP (serving; 0 = a batch job)
  bool carries_load = true;        ///< --gpus / --nodes: the fixed cluster holds the replicas the load needs
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
  /// Megatron-Core's selective recompute modules (memory.hpp RecomputeModule) under
  /// Recompute::selective: the request's --recompute-modules, or the set the search chose for a
  /// --stack megatron MoE/MLA model (planner_search_recompute_modules); 0 = Megatron-Core's default
  /// {core_attn}, or not Megatron.
  RecomputeModules recompute_modules = 0;
  std::int64_t global_batch_seqs = 0;  ///< training
  std::int64_t replicas = 0;           ///< serving: model replicas in total
  double per_gpu_memory_bytes = 0;     ///< requirement of the most loaded GPU
  double gpu_memory_capacity_bytes = 0;
  double margin = 0;                   ///< the fit margin used: per_gpu ≤ capacity × (1 − margin)

  // Time
  double tokens_per_s = 0;         ///< training: trained tokens/s; serving: generated tokens/s, all replicas
  double work_seconds = 0;         ///< time to finish without preemption (serving: the duration)
  double steps = 0;                ///< training: optimizer steps
  std::int64_t requested_global_batch_seqs = 0;  ///< training: the batch asked for (before rounding to DP)
  /// Training: failures, checkpoints and evaluation on top of work_seconds (sizing/goodput.hpp);
  /// cost.run_seconds starts from goodput->wall_seconds.
  std::optional<GoodputEstimate> goodput;
  bool mfu_overridden = false;     ///< --mfu replaced the modelled step time
  std::optional<TrainingStepEstimate> training;
  std::optional<ServingEstimate> serving;
  /// Batch job (--requests) on a continuous-batching engine: the step simulation of the busiest
  /// replica's share (simulate_batch_job); work_seconds, requests_per_s and tokens_per_s come from it.
  std::optional<BatchJobTiming> batch_job;
  /// Serving: every TP degree that fits the instance's memory, the chosen one first, and why it
  /// was chosen in one sentence (docs/planner.md "Serving: the TP degree"); empty otherwise.
  std::vector<ServingTpOption> serving_tp_options;
  std::string serving_tp_choice;
  /// Serving (--rps / --concurrency): TTFT and TPOT within the request's target
  /// (PlanRequest::effective_ttft_seconds / effective_tpot_seconds). A plan that misses the
  /// default target is listed with a latency_target_missed warning but never recommended; one
  /// that misses a target the user gave is not listed. True for other workloads.
  bool meets_latency_target = true;
  /// serving on --gpus / --nodes: the batch was raised above what the latency target allows so
  /// that the fixed cluster holds the load (then meets_latency_target is usually false)
  bool batch_for_fixed_cluster = false;
  /// serving, default target missed even at batch 1: a larger batch only lengthens TTFT and TPOT,
  /// so the batch is the smallest that carries the load on as few replicas as the largest batch
  /// memory holds (trial55 D4)
  bool batch_smallest_for_load = false;
  /// --rps service: the mean wait for a free slot at the plan's replicas (queue_wait_seconds, M/D/c),
  /// seconds; unset for other loads.
  std::optional<double> queue_wait_seconds;
  /// The matmul precision the time model used when the asked one has no published peak for this
  /// GPU ("fp32" when the GPU's BF16/FP16 tensor rates are unknown in data/gpus.csv and its FP32
  /// peak is used: times are pessimistic); empty when the asked precision's peak is known.
  std::string math_fallback;
  double kv_capacity_bytes = 0;    ///< serving: KV-cache bytes that fit beside the weights, per replica
  double requests_per_s = 0;       ///< serving capacity, all replicas (images: images/s)
  std::optional<double> images_per_hour;      ///< image generation, the whole plan
  std::optional<double> usd_per_1000_images;  ///< image generation: total / images × 1000

  // Cost
  CostBreakdown cost;                      ///< the chosen price kind (cheapest total)
  std::vector<CostBreakdown> alternatives; ///< the other price kinds with a price, cheapest first
  SourceRef price_source;                  ///< of the chosen price
  /// When the chosen price was last seen (PriceObservation::seen_at: a later fetch that found the
  /// same price, else price_source.observed_at); what its age and staleness are judged by.
  std::optional<std::string> price_last_seen_at;
  ResolvedBilling billing;
  double storage_bytes = 0;                ///< dataset + checkpoint kept during the run
  double egress_bytes = 0;
  double checkpoint_bytes = 0;
  double usd_per_gpu_hour = 0;             ///< chosen price / gpus_per_instance

  std::vector<PlanWarning> warnings;
  bool on_pareto_front = false;
  bool recommended = false;        ///< the plan the recommendation rule picks (result.recommendation_rule)
  /// Why the plan ranks after clean, dated offers ("flagged: below_market_index", "undated
  /// price", "price 120 days old"); empty = clean. Ignored for ranking with --include-flagged.
  std::string demoted_reason;
  /// The evidence of the offer's price (one definition, docs/planner.md "Price evidence"):
  /// 0 clean (unflagged, dated, at most --max-price-age old: fresh or aging); 1 stale (dated,
  /// older); 2 undated; 3 a data-quality flag questions the price or memory. Plans rank by tier
  /// first (unless --include-flagged); the table marks 1-3 with ~ ? ! in every layout.
  int demotion_tier = 0;
  /// The rank plans are ordered and recommended by (unless --include-flagged), lower = better:
  /// the tier, then for stale prices their age in whole steps of --max-price-age (52 days old at
  /// 30 ranks ahead of 191 days old, which ranks ahead of 925 days old). docs/planner.md.
  int evidence_rank = 0;
  /// The offer's source confirmed it available (Offer::confirmed_available_at); plans without it
  /// carry the not_confirmed_available warning. Ties (docs/planner.md "Availability") go to it.
  bool availability_confirmed = false;
  /// Days since the plan's price was observed (nullopt: undated, or no --today).
  std::optional<int> price_age_days;
  /// Every region where this plan runs (same provider, instance, nodes, layout, price kind and
  /// time before spot loss; prices, price evidence and spot preemption rates may differ), this
  /// plan's first: the row is the group's representative whatever --sort (best price evidence,
  /// then cheapest, then fastest, then the offers' order), the others follow in that order.
  /// Size 1 when nothing was collapsed. docs/planner.md "Regions".
  std::vector<std::string> regions;
  /// The offers collapsed into this plan (other regions or zones of the same plan), in the order
  /// of `regions`. Empty when none.
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
  /// Stable id of `reason`, for front ends that word it themselves: misses_deadline, misses_budget,
  /// misses_deadline_and_budget, no_offer_at_cluster_size, no_offer_matches, no_layout_sized,
  /// no_layout_matches_pinned, no_layout_matches (nothing pinned), batch_below_dp (every layout
  /// has more DP ranks than the global batch has sequences), does_not_fit, exceeds_max_nodes,
  /// no_usable_price, misses_latency_target, misses_ttft_target (one output token: no TPOT), load_exceeds_cluster, spot_preempted_too_often, goodput_infeasible;
  /// seq_exceeds_context: the sequence (serving: prompt + output) exceeds the model's maximum
  /// context and the answer is one the length causes (memory, sizing, latency, load) — said first,
  /// the reason found after it.
  std::string code;
  /// One stable id per entry of `suggestions`, same order (e.g. "deadline_at_least", "use_qlora").
  std::vector<std::string> suggestion_codes;
  /// The numbers the reason and suggestions quote, by name (units in names): deadline_seconds_needed,
  /// budget_usd_needed, gpu_factor, nodes_needed, tokens_max, max_nodes, margin; batch_below_dp:
  /// global_batch_seqs, dp_min; seq_exceeds_context: seq_tokens, max_context_tokens.
  std::map<std::string, double> values;
  /// Set when plans exist but none meets --deadline / --budget: the fastest and the cheapest of
  /// them (how far they miss is in `reason`).
  std::optional<Plan> fastest;
  std::optional<Plan> cheapest;
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
  PlanSort sort_applied = PlanSort::recommended;  ///< request.effective_sort()
  std::string recommendation_rule;  ///< one sentence: how the plan marked `recommended` was chosen
  /// The recommended plan runs on more than one node of an offer whose source does not say how
  /// many instances can be rented together (its max_nodes_assumed warning): the node count is an
  /// assumption; recommendation_rule says so.
  bool recommended_nodes_assumed = false;
  /// The same rule for front ends that word it themselves (web/locales recommend_<code>):
  /// "front" (no deadline, no budget: the Pareto-front rule with the request's horizon and cost
  /// premium), "deadline", "budget", "deadline_and_budget", "fastest", "cheapest"; when no plan is
  /// recommended: "none_no_clean_plan" (only undated/flagged prices meet the request) or
  /// "none_latency" (no plan meets the latency target); "" = none.
  std::string recommendation_rule_code;
  /// Prices the rule was applied to: "clean_dated" (dated, unflagged, within the freshness
  /// limit), "dated_stale" (dated and unflagged, but every one older than the limit),
  /// "unflagged" (unflagged, some undated) or "" (every price).
  std::string recommendation_evidence;
  /// The rule's pick was on an offer never confirmed available and a plan on a confirmed offer
  /// (same price evidence) cost at most cost_tie_tolerance more and took at most
  /// time_tie_tolerance longer: that one was recommended instead (recommendation_rule says so).
  bool recommendation_prefers_confirmed = false;
  bool recommendation_time_ties = false;  ///< the budget rule: times within time_tie_tolerance tie
  /// --sort time: the time ranking's rule in words ("by time to finish (times within 2% tie, ...)");
  /// empty for the other sorts. The sort orders the rows only: the R mark never depends on it.
  std::string sort_rule;
  std::size_t plans_demoted = 0;    ///< plans ranked after clean ones (stale, undated or flagged); 0 with --include-flagged
  /// Plans (one per region group) left out of the list and the Pareto front because they take
  /// longer than hidden_slower_than_seconds = max(30 days, 4 × the recommended plan's time)
  /// (PlanRequest::hide_slower_than_factor); 0 with --deadline or --all (show_all).
  std::size_t plans_hidden = 0;
  double hidden_slower_than_seconds = 0;  ///< the horizon applied when plans_hidden > 0
  /// Plans left out because they rent more nodes than their offer's fewest for the job and finish
  /// in under 10 minutes (a cluster rented for seconds); 0 with --deadline, --all, --nodes or --gpus.
  std::size_t plans_hidden_short = 0;
};

/// The store read's memory floor for `request` (OfferQuery::memory_floor): every layout keeps the
/// model's weights somewhere in GPU memory — sharded by TP, PP or ZeRO-3, their sum is the whole —
/// so an offer whose GPUs, over the most nodes it can be rented as, cannot hold the weights
/// within the fit margin cannot run the job: params × bytes per weight (training: 2 for 16-bit
/// and fp8 mixed precision, 4 for fp32/tf32, 0.5 for QLoRA's NF4 base; serving: the --quant
/// bits) / (1 − margin). Training counts up to --max-nodes (or --nodes / --gpus) nodes of offers
/// with a known network; serving one instance (a replica stays in one). Image generation: none.
/// A necessary condition only: the planner still sizes every offer that passes.
std::optional<OfferMemoryFloor> plan_memory_floor(const PlanRequest& request, const ModelArch& arch);

/// Plans the request on the offers. `arch` = resolve_model(request.model) (done at the edge),
/// `billing_of(offer)` gives the merged billing terms (provider defaults + overrides; the CLI
/// passes catalog's effective_billing); it must depend only on the offer's provider and its
/// billing_override (offers of one provider without overrides share one call). request.validate() must have passed.
/// Throws Error{invalid_input} only for a request the model cannot take at all (e.g. image
/// generation on a decoder model).
using BillingLookup = BillingTerms (*)(const Offer&);

/// A memo of training layout searches shared by the plans of one process (`gpuplan serve`),
/// docs/planner.md "Search memo". A training search depends on the request's physics (model,
/// task, precision, sequence, batch, pins, margin...), the cluster (GPU, GPUs per node, nodes,
/// links, capacity) and — only through the rounding up of optimizer steps — the token count. The
/// memo keeps, per (physics key, cluster), every layout that can still be the best for some
/// token count (the first fitting recompute mode of each TP/PP/EP/micro-batch/ZeRO position; a
/// position is dropped only when an earlier one has at least its tokens per step and at most its
/// step time, so it can never win), plus what the search reports besides its result (layouts
/// evaluated, the first layout problem, the smallest DP above the batch). A plan then picks the
/// best for its own tokens: the same answer, byte for byte, as searching again.
/// `physics_key` must determine every search input but the tokens and the cluster; the caller
/// builds it (api::run_plan: the request body without the fields that only choose offers, price
/// or present). Thread-safe; bounded (max_entries clusters in all: when full it starts over).
class SearchMemo {
 public:
  explicit SearchMemo(std::size_t max_entries = 20000);
  ~SearchMemo();
  SearchMemo(const SearchMemo&) = delete;
  SearchMemo& operator=(const SearchMemo&) = delete;
  struct Impl;
  Impl& impl() { return *impl_; }
  /// Clusters memoized now, and plans' searches answered from the memo since the start.
  std::size_t size() const;
  std::size_t hits() const;

 private:
  std::unique_ptr<Impl> impl_;
};

/// `memo`/`memo_key`: see SearchMemo (nullptr: search every cluster; the CLI's one-shot plans).
PlanResult plan(const PlanRequest& request, const ModelArch& arch, const std::vector<Offer>& offers,
                const GpuCatalog& gpus, BillingLookup billing_of, const PerfAssumptions& assumptions = {},
                SearchMemo* memo = nullptr, const std::string& memo_key = {});

/// `gpuplan estimate`: times a run the user specifies (GPU × nodes × GPUs per node, layout pins)
/// without the catalog, with the same search, step-time and goodput code as plan() — for the
/// same cluster and layout the numbers are equal. No price: Plan::cost is empty except
/// run_seconds (= goodput wall time). The best layout of the cluster when pins leave freedom.
/// Returns nullopt with `why` set when no layout fits; throws Error{invalid_input} for a
/// request the model cannot take.
struct EstimateCluster {
  const GpuSpec* gpu = nullptr;
  int gpus_per_node = 8;
  int nodes = 1;
  IntraNodeLink link = IntraNodeLink::unknown;  ///< unknown = from the datasheet
  double intra_node_bytes_per_s = 0;            ///< one direction per GPU; 0 = datasheet
  double inter_node_bytes_per_s = 0;            ///< per node one direction; required when nodes > 1
};
std::optional<Plan> estimate_run(const PlanRequest& request, const ModelArch& arch, const EstimateCluster& cluster,
                                 std::string& why, const PerfAssumptions& assumptions = {});

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
