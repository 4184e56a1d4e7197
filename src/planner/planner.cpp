#include "planner/planner.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include "catalog/filter.hpp"
#include "catalog/freshness.hpp"
#include "catalog/importers.hpp"
#include "model/param_count.hpp"

#include "planner/pareto.hpp"
#include "planner/plan_inputs.hpp"
#include "sizing/diffusion_perf.hpp"
#include "sizing/layout_check.hpp"
#include "sizing/memory_total.hpp"
#include "util/calendar.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"
#include "util/text_check.hpp"

namespace gpuplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Days between the offer's last availability confirmation and --today; nullopt when the offer
/// was never confirmed, or without --today (then no age is known: a confirmation counts).
std::optional<long> confirmation_age_days(const Offer& offer, const PlanRequest& r) {
  if (!offer.confirmed_available_at || r.today.empty()) return std::nullopt;
  const auto c = date_prefix_days_since_epoch(*offer.confirmed_available_at);
  const auto t = date_prefix_days_since_epoch(r.today);
  if (!c || !t) return std::nullopt;
  return *t - *c;
}

/// The offer counts as confirmed available (docs/planner.md "Availability"): its source
/// confirmed it, at most --max-price-age (stale_after_days) before --today. An older
/// confirmation (trial9c item 3: 23 months old) is not one, for the tiebreak or the warning.
bool confirmed_available(const Offer& offer, const PlanRequest& r) {
  if (!offer.confirmed_available_at) return false;
  const auto age = confirmation_age_days(offer, r);
  return !age || static_cast<double>(*age) <= r.stale_after_days;
}

/// A hash of a double for the planner's own hash maps (none is iterated: the value never reaches
/// an output): its bits, +0.0 and −0.0 alike as they compare equal. std::hash<double> calls the
/// byte hash out of line for each key.
inline std::size_t double_hash(double v) noexcept {
  if (v == 0.0) return 0;
  std::uint64_t u = 0;
  std::memcpy(&u, &v, sizeof u);
  return static_cast<std::size_t>(u ^ (u >> 29));
}


/// A GPU configuration shared by many offers: the search result depends only on this.
struct ClusterKey {
  const GpuSpec* gpu = nullptr;
  int gpus_per_node = 0;
  int nodes = 1;
  IntraNodeLink link = IntraNodeLink::unknown;
  double intra_bytes_per_s = 0;
  double inter_bytes_per_s = 0;
  double capacity_bytes = 0;
  auto tie() const {
    return std::tie(gpu, gpus_per_node, nodes, link, intra_bytes_per_s, inter_bytes_per_s, capacity_bytes);
  }
  bool operator==(const ClusterKey& o) const { return tie() == o.tie(); }
};

/// Hash of every ClusterKey field (the doubles by value: +0.0 and −0.0 hash alike, as they
/// compare equal).
struct ClusterKeyHash {
  std::size_t operator()(const ClusterKey& k) const noexcept {
    auto bits = [](double v) {
      v += 0.0;  // −0.0 → +0.0
      std::uint64_t u = 0;
      std::memcpy(&u, &v, sizeof u);
      return u;
    };
    std::uint64_t h = reinterpret_cast<std::uintptr_t>(k.gpu) * 0x9E3779B97F4A7C15ULL;
    auto mix = [&h](std::uint64_t v) {
      h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    };
    mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.gpus_per_node)) |
        static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.nodes)) << 32);
    mix(static_cast<std::uint64_t>(k.link));
    mix(bits(k.intra_bytes_per_s));
    mix(bits(k.inter_bytes_per_s));
    mix(bits(k.capacity_bytes));
    return static_cast<std::size_t>(h);
  }
};


/// The best layout found for one cluster (or why none fits).
struct SearchOutcome {
  bool fits = false;
  ParallelLayout layout;
  Recompute recompute = Recompute::none;
  RecomputeModules recompute_modules = 0;  ///< Plan::recompute_modules
  double per_gpu_bytes = 0;
  double smallest_per_gpu_bytes = kInf;  ///< over all layouts tried
  /// training: the layout and recompute mode of smallest_per_gpu_bytes (the no-plan advice
  /// re-sizes it to see which change could make it fit)
  ParallelLayout smallest_layout;
  Recompute smallest_recompute = Recompute::none;
  RecomputeModules smallest_recompute_modules = 0;
  TrainingStepEstimate step;
  ServingEstimate serving;
  std::int64_t replicas_per_instance = 0;
  double work_seconds = kInf;  ///< per instance count 1 for serving; for training the whole run
  double images_per_hour_per_instance = 0;
  double kv_capacity_bytes = 0;
  std::int64_t global_batch_seqs = 0;  ///< training: the runnable batch of the chosen layout
  double steps = 0;                    ///< training: optimizer steps
  bool meets_latency = true;           ///< serving: TTFT/TPOT within the target (Plan::meets_latency_target)
  /// serving on --gpus / --nodes: the batch was raised above what the latency target allows so
  /// that the fixed cluster holds the load (Plan::batch_for_fixed_cluster)
  bool batch_for_fixed_cluster = false;
  /// serving, default target missed even at batch 1: the batch is the smallest that carries the
  /// load on as few replicas as the full batch (Plan::batch_smallest_for_load)
  bool batch_smallest_for_load = false;
  std::vector<ServingTpOption> tp_options;  ///< serving: the TP degrees that fit, the chosen one first
  /// batch jobs: simulate_batch_job timings by simulated request count (batch_job_simulated_requests),
  /// shared by the offers and instance counts of this cluster configuration (one plan, one thread).
  mutable std::map<std::int64_t, BatchJobTiming> batch_job_simulations;
};

/// The search result per cluster configuration, once per plan. Node-based: a Candidate keeps a
/// pointer to its outcome.
using ClusterOutcomes = std::unordered_map<ClusterKey, SearchOutcome, ClusterKeyHash>;

/// Inter-node bandwidth assumed when the offer names the network but not its speed, bits/s per
/// node. Stated in a link_assumed warning. Conservative single-NIC figures: 100 GbE, 200 Gb/s
/// RoCE, 400 Gb/s InfiniBand NDR (one NIC; 8-GPU HGX nodes usually have 8).
double assumed_inter_node_bits_per_s(InterNodeNetwork n) {
  switch (n) {
    case InterNodeNetwork::ethernet: return 100e9;
    case InterNodeNetwork::roce: return 200e9;
    case InterNodeNetwork::infiniband: return 400e9;
    case InterNodeNetwork::unknown: return 0;
  }
  return 0;
}

ClusterSpec cluster_for(const ClusterKey& key) {
  ClusterSpec c = make_cluster(*key.gpu, key.gpus_per_node, key.nodes, key.inter_bytes_per_s);
  if (key.link == IntraNodeLink::pcie) {
    c.intra_node_nvlink = false;
    c.intra_node_bytes_per_s = key.intra_bytes_per_s > 0 ? key.intra_bytes_per_s : pcie_x16_bytes_per_s(key.gpu->pcie_gen);
  } else if (key.link == IntraNodeLink::nvlink) {
    c.intra_node_nvlink = true;
    if (key.intra_bytes_per_s > 0) c.intra_node_bytes_per_s = key.intra_bytes_per_s;
  } else if (key.intra_bytes_per_s > 0) {
    // The datasheet's link kind at the bandwidth given (trial60 #2: it was ignored without --link).
    c.intra_node_bytes_per_s = key.intra_bytes_per_s;
  }
  return c;
}

std::vector<int> divisors(std::int64_t n) {
  std::vector<int> out;
  for (std::int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(static_cast<int>(d));
  }
  return out;
}

using detail::serving_memory_request;
using detail::serving_perf_request;

/// What a search needs besides the cluster: the request, the model, and per-plan caches.
/// Per-GPU memory depends on the layout only, not on the cluster: it is computed once per
/// layout per plan (layouts_by_gpus) with the lean total-only path; the
/// model figures the step time reads (FLOPs per token, parameter counts) once per recompute
/// mode (step_figures).
struct SearchContext {
  const PlanRequest& r;
  const ModelArch& arch;
  const PerfAssumptions& assumptions;
  std::int64_t global_batch = 0;  ///< requested (or default) global batch, sequences
  double tokens = 0;
  std::size_t layouts_evaluated = 0;
  std::optional<std::string> first_layout_problem;          ///< for the no-plan reason
  /// Per-GPU memory totals of this plan's training request (built on first use), and of the same
  /// request with the recipe's recompute modules (recipe_modules; the search's extra candidate).
  std::optional<TrainingMemoryTotal> memory_total, memory_total_recipe;
  /// The recipe's selective recompute modules the search tries besides the request's
  /// (search_training; 0: none tried).
  RecomputeModules recipe_modules = 0;
  /// estimate_training_step's model figures per recompute candidate (index = recompute_kind).
  std::array<std::optional<TrainingStepModelFigures>, 5> step_figures;
  std::vector<int> pps;              ///< PP candidates (pp_candidates), once per plan
  std::vector<std::vector<int>> vps; ///< VP candidates of each PP candidate (vp_candidates), once per plan
  std::vector<int> expert_divisors;  ///< divisors of the routed experts, once per plan
  std::vector<int> eps;              ///< EP candidates of the current search step (reused)
  /// The sizing of every layout the search reaches, by the cluster's GPU count and the layout's
  /// position in the search's enumeration (search_training: TP, PP, EP, micro-batch, ZeRO and
  /// recompute indices). For n GPUs in all, the layout at a position is the same whatever the
  /// GPUs per node, GPU, links, capacity or KV replication (those only decide which positions a
  /// cluster visits: TP k is 2^k, DP = n / (TP × PP), EP and micro-batches follow from DP), so
  /// each layout is sized once per plan, as a table of layouts would, without hashing a key on
  /// every visit. A slot is kLayoutUnsized until its first visit sizes the layout
  /// (size_layout), then holds its per-GPU bytes, or kLayoutNotRunnable. Per plan: nothing
  /// outlives the call.
  std::unordered_map<int, std::vector<double>> layouts_by_gpus;
  bool allow_kv_replication = false; ///< search TP > KV heads (search_cluster: only when nothing else fits)
  /// Serving with --ttft-ms / --tpot-ms: TP degrees rejected because even batch 1 misses the
  /// target, and the lowest TTFT and TPOT seen at batch 1 (the no-plan reason quotes them).
  std::size_t latency_rejects = 0;
  double best_ttft_batch1 = kInf;
  double best_tpot_batch1 = kInf;
  /// search_training: the step time in two stages per recompute candidate (index =
  /// recompute_kind), prepared at the micro-batch being searched: the bound, then the full estimate
  /// from the same compute phase for either ZeRO stage (sizing/perf.hpp TrainingStepStages),
  /// allocated once per plan.
  std::array<TrainingStepStages, 5> step_stages;
  /// search_training: the smallest DP degree skipped because the global batch has fewer
  /// sequences than DP ranks (0: none was); the no-plan reason names it (batch_below_dp).
  std::int64_t smallest_dp_over_batch = 0;
  /// The process's search memo (planner.hpp SearchMemo) and this request's physics key; nullptr:
  /// every cluster is searched.
  SearchMemo* memo = nullptr;
  const std::string* memo_key = nullptr;
  /// With a memo: the problem of each layout slot found not runnable, by (GPUs, slot index), so
  /// that a memo entry records the first problem its own search meets even where an earlier
  /// cluster of this plan sized the slot.
  std::unordered_map<std::uint64_t, std::string> slot_problems;
};

/// The search's preference for the simpler layout: an expert TP below the TP (the searched ETP 1,
/// planner.hpp search order) must finish more than `tolerance` (PlanRequest::time_tie_tolerance,
/// the recommendation's tie) sooner than a layout without it to be chosen; its work counts
/// × (1 + tolerance) in the comparison, never in the result. Modelled gains below that are within
/// the time model's error (docs/accuracy.md), and practitioners keep the plainer layout there
/// (NVIDIA's gpt-oss-120b H100 recipe: TP 1, EP 8).
double layout_preference(const ParallelLayout& l, double tolerance) {
  return l.expert_tp > 0 && l.expert_tp < l.tp ? 1.0 + tolerance : 1.0;
}

/// A layout that may be the best of its cluster for some token count (SearchMemo).
struct MemoCandidate {
  ParallelLayout layout;
  Recompute recompute = Recompute::none;
  RecomputeModules recompute_modules = 0;
  double per_gpu_bytes = 0;
  std::int64_t global_batch_seqs = 0;
  double tokens_per_step = 0;
  TrainingStepEstimate step;  ///< tokens_per_s set
};

/// One cluster's training search without the token count (SearchMemo): the candidates in search
/// order, and what the search reports besides its result.
struct TrainingMemoEntry {
  std::vector<MemoCandidate> candidates;
  double smallest_per_gpu_bytes = kInf;
  ParallelLayout smallest_layout;
  Recompute smallest_recompute = Recompute::none;
  RecomputeModules smallest_recompute_modules = 0;
  std::size_t layouts_evaluated = 0;
  std::optional<std::string> first_problem;
  std::int64_t smallest_dp_over_batch = 0;
  /// A candidate with a finite step time: the search found a layout (SearchOutcome::fits) for
  /// any token count.
  bool fits() const {
    return std::any_of(candidates.begin(), candidates.end(),
                       [](const MemoCandidate& c) { return std::isfinite(c.step.step_seconds); });
  }
  /// Keeps `c` unless an earlier candidate has at least its tokens per step and at most its
  /// step time (each × layout_preference): that one needs no more optimizer steps (ceil(T /
  /// tokens per step)) for any T, each no longer, and comes first, so `c` can never be chosen
  /// (search_training keeps the first of equal runs).
  void add(MemoCandidate c, double tolerance) {
    const double c_step = c.step.step_seconds * layout_preference(c.layout, tolerance);
    for (const MemoCandidate& d : candidates)
      if (d.tokens_per_step >= c.tokens_per_step &&
          d.step.step_seconds * layout_preference(d.layout, tolerance) <= c_step)
        return;
    candidates.push_back(std::move(c));
  }
};

constexpr std::uint64_t slot_id(int gpus, std::size_t index) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(gpus)) << 40 | static_cast<std::uint64_t>(index);
}

constexpr double kLayoutUnsized = -1.0;      ///< SearchContext::layouts_by_gpus: not yet visited
constexpr double kLayoutNotRunnable = -2.0;  ///< the model cannot take the layout (per-GPU bytes are > 0)

/// The recipe's recompute modules a training search tries (SearchContext::recipe_modules):
/// recipe_recompute_modules under --stack megatron when neither --recompute nor
/// --recompute-modules is given; 0 otherwise.
RecomputeModules searched_recipe_modules(const PlanRequest& r, const ModelArch& arch) {
  if (r.workload != PlanWorkload::training || r.stack != TrainingStack::megatron || r.pins.recompute ||
      r.recompute_modules != 0)
    return 0;
  return recipe_recompute_modules(arch);
}

/// The recompute candidates' index into SearchContext's per-candidate arrays: the Recompute
/// value (0 … 3), or 4 for selective with the recipe's modules (SearchContext::recipe_modules).
constexpr std::size_t kRecipeModulesKind = 4;
constexpr std::size_t recompute_kind(Recompute rc, bool recipe_modules) {
  return recipe_modules ? kRecipeModulesKind : static_cast<std::size_t>(rc);
}

/// The model check and the per-GPU memory of one layout (the lean total, sizing/memory_total.hpp),
/// or kLayoutNotRunnable; the first problem found is kept for the no-plan reason.
/// `recipe_modules`: sized with SearchContext::recipe_modules instead of the request's modules.
double size_layout(SearchContext& ctx, const ParallelLayout& layout, Recompute rc, bool recipe_modules,
                   std::uint64_t id) {
  if (auto problem = training_layout_problem(ctx.arch, layout)) {
    if (!ctx.first_layout_problem) ctx.first_layout_problem = *problem;
    if (ctx.memo) ctx.slot_problems.emplace(id, std::move(*problem));
    return kLayoutNotRunnable;
  }
  std::optional<TrainingMemoryTotal>& total = recipe_modules ? ctx.memory_total_recipe : ctx.memory_total;
  if (!total) {
    total.emplace(ctx.arch, detail::training_memory_request(ctx.r, layout, rc,
                                                            recipe_modules ? ctx.recipe_modules : ctx.r.recompute_modules));
  }
  return total->total_bytes(layout, rc);
}

const TrainingStepModelFigures& step_figures(SearchContext& ctx, const TrainingStepRequest& req, std::size_t kind) {
  auto& f = ctx.step_figures[kind];
  if (!f) f = training_step_model_figures(ctx.arch, req);
  return *f;
}

/// The global batch a framework runs for `dp` ranks of `micro_batch`: the largest multiple of
/// dp × micro_batch not above the requested batch, at least one micro-batch per rank
/// (Megatron-LM asserts global_batch_size % (micro_batch_size × data_parallel_size) == 0).
std::int64_t runnable_global_batch(std::int64_t requested, int dp, int micro_batch) {
  const std::int64_t unit = static_cast<std::int64_t>(dp) * micro_batch;
  return std::max(unit, requested / unit * unit);
}

/// Stacks that shard by data parallelism only (trial37 D3): the Hugging Face Trainer (with
/// accelerate/DeepSpeed ZeRO or FSDP), DeepSpeed's ZeRO-2 integration and Unsloth run no
/// Megatron-style tensor or pipeline parallelism, nor expert parallelism: TP = PP = EP = 1.
bool data_parallel_only(const std::optional<TrainingStack>& stack) {
  return stack == TrainingStack::hf || stack == TrainingStack::deepspeed || stack == TrainingStack::unsloth;
}

/// The ZeRO stage a stack runs (the search's, when --zero is not pinned): Megatron's distributed
/// optimizer 1, FSDP full shard 3, DeepSpeed's ZeRO-2 integration 2, the HF Trainer's DDP and
/// Unsloth 0 (nothing sharded).
int stack_zero_stage(TrainingStack stack) {
  switch (stack) {
    case TrainingStack::megatron: return 1;
    case TrainingStack::fsdp: return 3;
    case TrainingStack::deepspeed: return 2;
    case TrainingStack::hf:
    case TrainingStack::unsloth: return 0;
  }
  return 0;
}

std::vector<int> pp_candidates(const ModelArch& arch, const PlanRequest& r) {
  if (r.pins.pp) return {*r.pins.pp};
  if (data_parallel_only(r.stack)) return {1};
  // QLoRA runs data-parallel (one GPU, or FSDP / ZeRO-3 over the 4-bit base: bitsandbytes,
  // answer.ai's FSDP-QLoRA, torchtune's qlora recipes); Megatron-style tensor or pipeline
  // parallelism has no 4-bit base. A pinned --tp/--pp is kept (trial 7: TP2 DP4 was recommended).
  if (r.task == Task::qlora) return {1};
  // Divisors of the layer count (even stages) and powers of two (uneven stages allowed).
  std::set<int> out;
  for (int d : divisors(arch.num_layers)) out.insert(d);
  for (int p = 1; p <= arch.num_layers; p *= 2) out.insert(p);
  return {out.begin(), out.end()};
}

/// Whether `v` virtual stages split every pipeline rank's layers into whole, non-empty chunks
/// (Megatron-LM d98e8a64dd training/arguments.py: the layers divide by pp, the layers per stage by
/// v; account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split count the
/// embedding and the loss as one layer each, as NVIDIA's Qwen3-235B recipe does, 94 + 2 = 8 × 4 × 3):
/// with --pp-layers each rank's count, else L, L + 1 or L + 2 a multiple of pp with v dividing
/// the quotient. v = 1 always does.
bool virtual_stages_split_layers(const ModelArch& arch, const PlanRequest& r, int pp, int v) {
  if (v <= 1) return true;
  if (pp <= 1) return false;
  if (!r.pipeline_stage_layers.empty())
    return std::all_of(r.pipeline_stage_layers.begin(), r.pipeline_stage_layers.end(),
                       [v](int n) { return n >= v && n % v == 0; });
  for (std::int64_t counted = arch.num_layers; counted <= arch.num_layers + 2; ++counted)
    if (counted % pp == 0 && (counted / pp) % v == 0) return true;
  return false;
}

/// Virtual pipeline stages (interleaved 1F1B, Narayanan et al. 2021 §2.2.2) searched at `pp`: the
/// pinned --virtual-stages, else 1 and, under --stack megatron with pp > 1, every v ≥ 2 that
/// Megatron-LM accepts for the default split (d98e8a64dd training/arguments.py: the layers divide
/// by pp, the layers per stage by v; with --pp-layers, every rank's layers by v). The micro-batch
/// count condition (schedules.py: m a multiple of pp) is checked per micro-batch in search_training. The bubble falls as 1/v, the first stage holds (1 + (p−1)/(p·v))× the
/// activations and each micro-batch crosses v× the stage boundaries (sizing/perf.hpp, memory.hpp).
std::vector<int> vp_candidates(const ModelArch& arch, const PlanRequest& r, int pp) {
  // A pinned VP only at the PP degrees it splits into whole chunks (trial43 D1: --virtual-stages 3
  // was searched at PP 2 with 40 layers per stage); none left: no layout matches the pins.
  // With --pp-layers (Megatron-Core's pipeline_model_parallel_layout, which gives each virtual
  // stage its own count) a pinned VP is the user's layout, as NVIDIA's DeepSeek-V3 recipe runs
  // 8,…,8,5 layers at VP 2.
  if (r.pins.virtual_stages) {
    if (*r.pins.virtual_stages > 1 && r.pipeline_stage_layers.empty() &&
        !virtual_stages_split_layers(arch, r, pp, *r.pins.virtual_stages))
      return {};
    if (*r.pins.virtual_stages <= 1 && r.ep_overlap && pp > 1) return {};  // below: --ep-overlap needs VP
    return {*r.pins.virtual_stages};
  }
  // --ep-overlap at pp > 1: Megatron-Core asserts a virtual pipeline (transformer_config.py at
  // fc965dafd2: "virtual_pipeline_model_parallel_size must be specified when
  // pipeline_model_parallel_size > 1"; arguments.py turns a VP of 1 into none), whatever the stack
  // named (the switch is Megatron-Core's); VP 1 is not searched there.
  const bool vp_required = r.ep_overlap && pp > 1;
  std::vector<int> out;
  if (!vp_required) out.push_back(1);
  // Other stacks (and none given) keep one stage per rank unless pinned: the interleaved
  // schedule and its rules are Megatron's.
  if (pp <= 1 || (r.stack != TrainingStack::megatron && !vp_required)) return out;
  const auto most = static_cast<int>(r.pipeline_stage_layers.empty()
                                         ? (arch.num_layers + 2) / pp
                                         : *std::max_element(r.pipeline_stage_layers.begin(), r.pipeline_stage_layers.end()));
  for (int v = 2; v <= most; ++v)
    if (virtual_stages_split_layers(arch, r, pp, v)) out.push_back(v);
  return out;
}

/// EP degrees for `dp` into `out` (reused: no allocation per search step): the pinned one, else 1
/// and the divisors of the routed experts that divide dp (LoRA/QLoRA: 1).
/// With an expert TP `etp` below tp (0 = tp) the EP group spans the TP ranks: the divisors of
/// tp·dp/etp.
void ep_candidates(SearchContext& ctx, int tp, int dp, int etp, std::vector<int>& out) {
  const PlanRequest& r = ctx.r;
  out.clear();
  if (r.pins.ep) {
    out.push_back(*r.pins.ep);
    return;
  }
  if (!ctx.arch.moe || r.task == Task::lora || r.task == Task::qlora || data_parallel_only(r.stack)) {
    out.push_back(1);
    return;
  }
  // --ep-overlap: Megatron-Core asserts expert_model_parallel_size > 1 (transformer_config.py at
  // fc965dafd2), so EP 1 is not searched with it.
  if (!r.ep_overlap) out.push_back(1);
  if (ctx.expert_divisors.empty()) ctx.expert_divisors = divisors(ctx.arch.moe->num_routed_experts);
  int expert_ranks = dp;
  if (etp > 0 && etp != tp) {
    if ((tp * dp) % etp != 0) return;
    expert_ranks = tp * dp / etp;
  }
  for (int e : ctx.expert_divisors) {
    if (e > 1 && expert_ranks % e == 0) out.push_back(e);
  }
}

/// --mfu: step time = model FLOP per step / (GPUs × dense peak × mfu); other terms kept for show.
void apply_mfu_override(TrainingStepEstimate& est, double mfu, int gpus) {
  if (!(est.peak_flops_per_s > 0)) return;
  est.step_seconds = est.model_flop_per_step / (static_cast<double>(gpus) * est.peak_flops_per_s * mfu);
  est.mfu = mfu;
  est.hfu = est.hardware_flop_per_step / (est.step_seconds * static_cast<double>(gpus) * est.peak_flops_per_s);
}

/// Training search over layouts for one cluster (see planner.hpp). Pinned degrees are kept.
/// `collect` (SearchMemo): no pruning by the step-time bound (it reads the token count); every
/// position's first fitting layout is estimated and offered to collect->add, and the smallest
/// layout and the first problem met are recorded there; the outcome's result is then unused.
SearchOutcome search_training(SearchContext& ctx, const ClusterKey& key, TrainingMemoEntry* collect = nullptr) {
  const PlanRequest& r = ctx.r;
  const ModelArch& arch = ctx.arch;
  SearchOutcome best;
  double best_score = kInf;  // best.work_seconds × layout_preference: what a layout must beat
  // The first problem met, for the no-plan reason and (collect) the memo entry that replays it on a
  // hit; `make` builds the text only while one of them still lacks it (called in the loops below).
  const auto note_problem = [&](const auto& make) {
    const bool for_ctx = !ctx.first_layout_problem, for_collect = collect && !collect->first_problem;
    if (!for_ctx && !for_collect) return;
    std::string problem = make();
    if (for_collect) collect->first_problem = problem;
    if (for_ctx) ctx.first_layout_problem = std::move(problem);
  };
  const ClusterSpec cluster = cluster_for(key);
  const int n = key.gpus_per_node * key.nodes;
  const double usable = key.capacity_bytes * (1.0 - r.margin);
  // Candidate lists in fixed arrays: a search runs per cluster, thousands of times per plan.
  // recipe[i]: candidate i is selective recompute of the recipe's modules (ctx.recipe_modules),
  // tried after none and before the default selective (planner.hpp search order).
  std::array<Recompute, 4> recomputes = {Recompute::none, Recompute::selective, Recompute::full, Recompute::full};
  std::array<bool, 4> recipe{};
  std::size_t n_recomputes = 3;
  if (r.pins.recompute) {
    recomputes[0] = *r.pins.recompute, n_recomputes = 1;
  } else if (r.recompute_modules != 0) {
    recomputes[0] = Recompute::selective, n_recomputes = 1;  // Megatron-Core's modules are selective
  } else if (r.stack == TrainingStack::unsloth) {
    recomputes[0] = Recompute::full, n_recomputes = 1;  // Unsloth always checkpoints (offloaded)
  } else if (ctx.recipe_modules != 0) {
    recomputes = {Recompute::none, Recompute::selective, Recompute::selective, Recompute::full};
    recipe[1] = true;
    n_recomputes = 4;
  }
  // --ep-overlap: Megatron-Core asserts "disable full recomputation when enabling
  // overlap_moe_expert_parallel_comm" (transformer_config.py at fc965dafd2): full is not searched
  // (a pinned --recompute full is refused in check_request_for_model). Full is always last.
  if (r.ep_overlap && !r.pins.recompute && n_recomputes > 1 && recomputes[n_recomputes - 1] == Recompute::full)
    --n_recomputes;
  std::array<int, 32> tps{};
  std::size_t n_tps = 0;
  if (r.pins.tp) {
    tps[n_tps++] = *r.pins.tp;
  } else {
    // QLoRA and the data-parallel stacks: see pp_candidates.
    const int max_tp = r.task == Task::qlora || data_parallel_only(r.stack) ? 1 : key.gpus_per_node;
    for (int tp = 1; tp <= max_tp && n_tps < tps.size(); tp *= 2) tps[n_tps++] = tp;
  }
  if (ctx.pps.empty()) {
    ctx.pps = pp_candidates(arch, r);
    for (int pp : ctx.pps) ctx.vps.push_back(vp_candidates(arch, r, pp));
  }
  const std::vector<int>& pps = ctx.pps;
  std::size_t n_vps_max = 1;
  for (const auto& v : ctx.vps) n_vps_max = std::max(n_vps_max, v.size());
  // The sizing slots of n GPUs (SearchContext::layouts_by_gpus), indexed
  // ((((((ti·|pp| + pi)·2 + xi)·|vp| + vi)·|ep| + ei)·8 + mi)·2 + zi)·4 + ri (xi: the expert TP
  // candidate); TP outermost, so a cluster with more GPUs per node (more TP degrees) extends the
  // array without moving a slot.
  std::size_t n_eps_max = 1;
  if (!r.pins.ep && arch.moe && r.task != Task::lora && r.task != Task::qlora && !data_parallel_only(r.stack)) {
    if (ctx.expert_divisors.empty()) ctx.expert_divisors = divisors(arch.moe->num_routed_experts);
    n_eps_max = std::max<std::size_t>(1, ctx.expert_divisors.size());  // EP 1 and the divisors above 1
  }
  std::vector<double>& slots = ctx.layouts_by_gpus[n];
  const std::size_t slots_per_tp = pps.size() * 2 * n_vps_max * n_eps_max * 8 * 2 * 4;
  if (slots.size() < n_tps * slots_per_tp) slots.resize(n_tps * slots_per_tp, kLayoutUnsized);
  for (std::size_t ti = 0; ti < n_tps; ++ti) {
    const int tp = tps[ti];
    if (tp > key.gpus_per_node || key.gpus_per_node % tp != 0) continue;  // TP stays inside a node
    if (arch.num_attention_heads > 0 && arch.num_attention_heads % tp != 0) continue;
    if (!r.pins.tp && !ctx.allow_kv_replication && !arch.mla && arch.num_kv_heads > 0 && tp > arch.num_kv_heads) continue;
    for (std::size_t pi = 0; pi < pps.size(); ++pi) {
      const int pp = pps[pi];
      if (pp > arch.num_layers || n % (tp * pp) != 0) continue;
      const int dp = n / (tp * pp);
      if (r.pins.dp && *r.pins.dp != dp) continue;
      if (ctx.vps[pi].empty()) {  // a pinned VP that does not split this PP's stages (vp_candidates)
        note_problem([&] {
          return r.pins.virtual_stages && *r.pins.virtual_stages > 1
                ? fmt::format("{} virtual stages split no pipeline degree these GPUs allow into whole chunks ({} layers, + 1 "
                              "or 2 for the embedding and the loss: pp must divide them and leave a multiple of {} per "
                              "stage)",
                              *r.pins.virtual_stages, arch.num_layers, *r.pins.virtual_stages)
            : r.pins.virtual_stages
                ? fmt::format("--ep-overlap at pp {} needs 2 or more virtual stages (Megatron-Core); --virtual-stages {} "
                              "pins fewer",
                              pp, *r.pins.virtual_stages)
                : fmt::format("--ep-overlap at pp {} needs 2 or more virtual stages (Megatron-Core) and none splits the {} "
                              "layers into whole chunks there",
                              pp, arch.num_layers);
        });
        continue;
      }
      if (dp > ctx.global_batch) {  // fewer sequences per step than data-parallel ranks
        if (ctx.smallest_dp_over_batch == 0 || dp < ctx.smallest_dp_over_batch) ctx.smallest_dp_over_batch = dp;
        continue;
      }
      // ZeRO stages: the pinned one, else the stack's (--stack megatron: the distributed
      // optimizer, ZeRO-1; fsdp 3; deepspeed 2; hf and unsloth without ZeRO), else 2 and 3.
      std::array<int, 2> zero_stages = {2, 3};
      std::size_t n_zero = 2;
      if (r.stack) zero_stages[0] = stack_zero_stage(*r.stack), n_zero = 1;
      if (dp == 1) zero_stages[0] = 0, n_zero = 1;
      if (r.pins.zero_stage) zero_stages[0] = *r.pins.zero_stage, n_zero = 1;
      // Expert TP (Megatron-Core expert_tensor_parallel_size): the pinned one, else the TP (0) and,
      // under --stack megatron with TP > 1, also 1 with EP > 1: the experts whole on each GPU and
      // the EP group spanning the TP ranks, as NVIDIA's recipes run MoE models with TP (Qwen3-235B
      // on H100: TP 2, ETP 1, EP 32; tests/data/published-throughput.jsonl).
      std::array<int, 2> etps = {r.pins.expert_tp.value_or(0), 1};
      const std::size_t n_etps = !r.pins.expert_tp && tp > 1 && r.stack == TrainingStack::megatron && arch.moe &&
                                         r.task != Task::lora && r.task != Task::qlora
                                     ? 2
                                     : 1;
      for (std::size_t xi = 0; xi < n_etps; ++xi) {
        const int etp = etps[xi];
        ep_candidates(ctx, tp, dp, etp, ctx.eps);
        if (ctx.eps.empty() && r.ep_overlap && xi == 0)  // EP 1 dropped (ep_candidates) and no EP above 1 divides dp
          note_problem([&] {
            return fmt::format(
                "--ep-overlap needs expert parallelism above 1 (Megatron-Core), and no EP above 1 divides dp {} here", dp);
          });
        for (std::size_t vi = 0; vi < ctx.vps[pi].size(); ++vi) {
          const int vs = ctx.vps[pi][vi];
          for (std::size_t ei = 0; ei < ctx.eps.size(); ++ei) {
            const int ep = ctx.eps[ei];
            if (xi == 1 && ep == 1) continue;  // the searched ETP 1 comes with EP above 1 (the recipes')
            // Micro-batches: the pinned one, else powers of two dividing the per-rank batch.
            const std::int64_t per_dp = runnable_global_batch(ctx.global_batch, dp, 1) / dp;
            std::array<int, 8> mbs{};
            std::size_t n_mbs = 0;
            if (r.pins.micro_batch) {
              mbs[n_mbs++] = *r.pins.micro_batch;
            } else {
              for (int mb = 1; mb <= 64 && mb <= per_dp; mb *= 2) {
                if (per_dp % mb == 0) mbs[n_mbs++] = mb;
              }
            }
            for (std::size_t mi = 0; mi < n_mbs; ++mi) {
              const int mb = mbs[mi];
              if (static_cast<std::int64_t>(dp) * mb > ctx.global_batch) break;  // one micro-batch per rank at least
              bool any_fit_at_mb = false;
              // The step-time lower bound does not read the ZeRO stage (compute, bubble and host
              // time only): computed once per recompute mode at this micro-batch, for both stages.
              std::array<double, 5> bound_at_rc{};
              std::array<bool, 5> bound_known{};
              // The runnable batch and the optimizer steps depend on DP and the micro-batch only.
              const std::int64_t batch = runnable_global_batch(ctx.global_batch, dp, mb);
              // Megatron's interleaved schedule runs a multiple of pp micro-batches (searched VP only:
              // a pinned one is the user's).
              if (vs > 1 && !r.pins.virtual_stages && (batch / (static_cast<std::int64_t>(dp) * mb)) % pp != 0) continue;
              const double tokens_per_step = static_cast<double>(batch) * static_cast<double>(r.seq_len);
              const double steps = std::ceil(ctx.tokens / tokens_per_step);
              // One layout per micro-batch; only its ZeRO stage changes below. Nothing is built for a
              // position whose slot says it does not run or does not fit (most of them).
              ParallelLayout layout;
              layout.tp = tp;
              layout.pp = pp;
              layout.dp = dp;
              layout.ep = ep;
              layout.expert_tp = etp;
              layout.sequence_parallel = tp > 1;
              layout.micro_batch = mb;
              layout.virtual_stages = vs;
              for (std::size_t zi = 0; zi < n_zero; ++zi) {
                layout.zero_stage = zero_stages[zi];
                // --ep-overlap with ZeRO-3 (Megatron-FSDP) does not interleave: Megatron-Core asserts
                // "EP overlap 1F1B with FSDP is not supported for interleaved pipeline parallelism"
                // (pipeline_parallel/combined_1f1b.py at fc965dafd2).
                if (r.ep_overlap && layout.zero_stage == 3 && vs > 1) {
                  note_problem([] {
                    return std::string(
                        "ZeRO-3 (Megatron-FSDP) with --ep-overlap does not interleave (Megatron-Core), and --ep-overlap "
                        "at pp above 1 needs interleaved virtual stages: pp 1 only");
                  });
                  continue;
                }
                // The recipe's modules fitted: full recompute re-runs all they re-run and more, so it
                // is not tried; the default selective (another set) still is.
                bool recipe_fitted = false;
                for (std::size_t ri = 0; ri < n_recomputes; ++ri) {
                  const Recompute rc = recomputes[ri];
                  const bool by_recipe = recipe[ri];
                  if (recipe_fitted && rc == Recompute::full) break;
                  const RecomputeModules modules = by_recipe ? ctx.recipe_modules : r.recompute_modules;
                  const std::size_t kind = recompute_kind(rc, by_recipe);
                  const std::size_t slot_index =
                      ti * slots_per_tp + (((((pi * 2 + xi) * n_vps_max + vi) * n_eps_max + ei) * 8 + mi) * 2 + zi) * 4 + ri;
                  double& slot = slots[slot_index];
                  if (slot == kLayoutUnsized) slot = size_layout(ctx, layout, rc, by_recipe, slot_id(n, slot_index));
                  if (slot == kLayoutNotRunnable) {
                    if (collect && !collect->first_problem) {
                      auto p = ctx.slot_problems.find(slot_id(n, slot_index));
                      if (p != ctx.slot_problems.end()) collect->first_problem = p->second;
                    }
                    continue;
                  }
                  const double bytes = slot;
                  ++ctx.layouts_evaluated;
                  if (bytes < best.smallest_per_gpu_bytes) {
                    best.smallest_per_gpu_bytes = bytes;
                    best.smallest_layout = layout;
                    best.smallest_recompute = rc;
                    best.smallest_recompute_modules = modules;
                  }
                  if (bytes > usable) continue;
                  any_fit_at_mb = true;
                  // After the recipe's candidate the search goes on (to the default selective); after
                  // any other, it stops: a heavier recompute only adds compute.
                  recipe_fitted = recipe_fitted || by_recipe;
                  // Pruning that cannot change the result: a layout whose step-time lower bound
                  // (perf.hpp) already gives no less work than the best so far can never replace it
                  // (only a strictly shorter run does), so its full estimate is skipped. The margin
                  // (1e-9, relative) is far above the rounding by which the bound may exceed the step.
                  // A bound known from the other ZeRO stage is checked before anything is built.
                  if (!collect && !r.mfu_override && bound_known[kind] &&
                      steps * bound_at_rc[kind] * (1.0 - 1e-9) >= best_score) {
                    if (by_recipe) continue;
                    break;
                  }
                  const TrainingStepRequest step_request = detail::training_step_request(r, layout, rc, modules, batch);
                  const TrainingStepModelFigures& figures = step_figures(ctx, step_request, kind);
                  TrainingStepStages& stages = ctx.step_stages[kind];
                  if (!r.mfu_override && !bound_known[kind]) {
                    // = training_step_seconds_lower_bound(arch, step_request, cluster, ...), bit for bit
                    stages.prepare(arch, step_request, cluster, ctx.assumptions, figures);
                    bound_at_rc[kind] = stages.lower_bound_seconds();
                    bound_known[kind] = true;
                    if (!collect && steps * bound_at_rc[kind] * (1.0 - 1e-9) >= best_score) {
                      if (by_recipe) continue;
                      break;
                    }
                  }
                  // = estimate_training_step(arch, step_request, cluster, ...), bit for bit; the stages were
                  // prepared at this micro-batch and recompute candidate (bound_known), perhaps at the other
                  // ZeRO stage, which the compute phase does not read.
                  TrainingStepEstimate est = r.mfu_override
                                                 ? estimate_training_step(arch, step_request, cluster, ctx.assumptions, figures)
                                                 : stages.estimate(step_request);
                  if (r.mfu_override) apply_mfu_override(est, *r.mfu_override, n);
                  const double work = steps * est.step_seconds;
                  est.tokens_per_s = tokens_per_step / est.step_seconds;
                  if (collect) {
                    collect->add(MemoCandidate{layout, rc, modules, bytes, batch, tokens_per_step, est},
                                 r.time_tie_tolerance);
                    if (by_recipe) continue;
                    break;
                  }
                  if (const double score = work * layout_preference(layout, r.time_tie_tolerance); score < best_score) {
                    best_score = score;
                    best.fits = true;
                    best.layout = layout;
                    best.recompute = rc;
                    best.recompute_modules = modules;
                    best.per_gpu_bytes = bytes;
                    best.step = est;
                    best.work_seconds = work;
                    best.global_batch_seqs = batch;
                    best.steps = steps;
                  }
                  if (by_recipe) continue;
                  break;  // a heavier recompute only adds compute
                }
              }
              if (!any_fit_at_mb) break;  // larger micro-batches need more memory still
            }
          }
        }
      }
    }
  }
  if (collect) {
    collect->smallest_per_gpu_bytes = best.smallest_per_gpu_bytes;
    collect->smallest_layout = best.smallest_layout;
    collect->smallest_recompute = best.smallest_recompute;
    collect->smallest_recompute_modules = best.smallest_recompute_modules;
  }
  return best;
}

/// Serving search: the tensor-parallel degree per instance. Ranked (docs/planner.md "Serving: the
/// TP degree"): on --gpus / --nodes first the degrees whose replicas the fixed cluster holds, then
/// those meeting the latency target, then the fewest instances the load needs, then what an
/// instance delivers (requests/s; sequences held for --concurrency). Trial 9 #1: TP2 × 6 replicas
/// on 2 nodes was chosen over TP4 on one node, both meeting the target, because the target's
/// bonus (1e30) absorbed the rate difference in a double.
SearchOutcome search_serving(const PlanRequest& r, const ModelArch& arch, const ClusterKey& key,
                             const PerfAssumptions& assumptions, std::size_t& layouts_evaluated,
                             std::optional<std::string>& problem, SearchContext& ctx) {
  SearchOutcome best;
  const ClusterSpec cluster = cluster_for(key);
  const double usable_total = key.capacity_bytes * (1.0 - r.margin);
  const double kv_pool_fraction = engine_profile(r.engine, assumptions).kv_pool_free_memory_fraction;
  const bool serving = r.workload == PlanWorkload::serving;
  const bool user_target = r.ttft_seconds || r.tpot_seconds;
  // --nodes / --gpus: the instances the plan runs on (0: not fixed).
  const std::int64_t fixed_nodes = r.nodes_exact ? *r.nodes_exact
                                   : r.gpus_total && key.gpus_per_node > 0 ? *r.gpus_total / key.gpus_per_node
                                                                           : 0;
  struct Rank {
    bool carries = false, meets = false;
    std::int64_t instances = 0;
    double rate = 0;
  };
  auto better = [](const Rank& a, const Rank& b) {
    if (a.carries != b.carries) return a.carries;
    if (a.meets != b.meets) return a.meets;
    if (a.instances != b.instances) return a.instances < b.instances;
    return a.rate > b.rate;
  };
  // The replicas the load needs at an estimate (as assemble counts them; 0 = none carries it).
  // A fixed cluster runs whatever it holds: it carries the load when its capacity does (the queue
  // wait at its replicas is stated, not a reason for no plan).
  auto needed_replicas = [&](const ServingEstimate& e) -> std::int64_t {
    return fixed_nodes > 0 ? detail::serving_replicas_for_capacity(r, e) : detail::serving_replicas_needed(r, e);
  };
  Rank best_rank;
  bool have_best = false;
  for (int tp = 1; tp <= key.gpus_per_node; tp *= 2) {
    if (r.pins.tp && tp != *r.pins.tp) continue;
    if (arch.num_attention_heads % tp != 0 || key.gpus_per_node % tp != 0) continue;
    if (auto why = serving_layout_problem(arch, tp)) {
      // A TP degree the model cannot take (its reason goes into the no-plan answer).
      if (!problem) problem = *why;
      continue;
    }
    // The request was validated once (check_request_for_model) and the layout checked above:
    // serving_memory does not throw here.
    const ServingMemoryLine line = serving_memory_line(arch, serving_memory_request(r, tp, 1));
    const double one = line.one_sequence_bytes;
    ++layouts_evaluated;
    const double per_seq = line.per_sequence_bytes;  // per GPU, fragmentation included
    const double base = line.base_bytes;
    best.smallest_per_gpu_bytes = std::min(best.smallest_per_gpu_bytes, one);
    // The memory the engine lets weights + KV pool use per GPU: the fit margin's share of the
    // total (vLLM, SGLang, llama.cpp), or, for an engine that sizes its pool from the memory left
    // after loading (TensorRT-LLM), base + fraction × (capacity − base), never below the former
    // (sizing/serving_perf.hpp EngineProfile::kv_pool_free_memory_fraction).
    const double usable = kv_pool_fraction > 0 ? std::max(usable_total, base + kv_pool_fraction * (key.capacity_bytes - base))
                                               : usable_total;
    if (one > usable || per_seq <= 0) continue;
    // KV bytes (raw, across the replica's tp GPUs) that fit beside the weights.
    const double kv_capacity = static_cast<double>(tp) * line.kv_capacity_bytes(usable);
    ServingPerfRequest sp = serving_perf_request(r, tp, 1);
    ServingEstimate probe = estimate_serving(arch, sp, cluster, kv_capacity, assumptions);
    if (probe.max_concurrent_sequences < 1) continue;
    std::int64_t target = r.concurrency ? *r.concurrency : probe.max_concurrent_sequences;
    sp.concurrency = std::max<std::int64_t>(1, std::min(target, probe.max_concurrent_sequences));
    ServingEstimate est = estimate_serving(arch, sp, cluster, kv_capacity, assumptions);
    double bytes = serving_memory(arch, serving_memory_request(r, tp, est.batch)).total_bytes();
    while (bytes > usable && sp.concurrency > 1) {  // rounding of the KV split: step down
      sp.concurrency = std::max<std::int64_t>(1, sp.concurrency * 9 / 10);
      est = estimate_serving(arch, sp, cluster, kv_capacity, assumptions);
      bytes = serving_memory(arch, serving_memory_request(r, tp, est.batch)).total_bytes();
    }
    if (bytes > usable) continue;
    // Latency target (serving only; a batch job has none): the largest batch whose TTFT and TPOT
    // meet it. When even one sequence misses it, a target the user gave rejects the TP degree; the
    // default target marks the plan (listed, never recommended) and keeps the smallest batch that
    // carries the load (below).
    bool meets = true, smallest_batch_for_load = false;
    const ServingEstimate full = est;  // the batch memory and the request allow, before the latency target
    const double full_bytes = bytes;
    const double ttft = r.effective_ttft_seconds(), tpot = r.effective_tpot_seconds();
    if (serving) {
      if (est.ttft_seconds > ttft || est.tpot_seconds > tpot) {
        ServingPerfRequest lat = sp;
        if (std::isfinite(ttft)) lat.ttft_target_seconds = ttft;
        if (std::isfinite(tpot)) lat.tpot_target_seconds = tpot;
        const ServingEstimate lower = largest_batch_meeting_targets(arch, lat, cluster, kv_capacity, assumptions);
        if (lower.meets_latency_targets) {
          est = lower;
          bytes = serving_memory(arch, serving_memory_request(r, tp, est.batch)).total_bytes();
        } else if (r.ttft_seconds || r.tpot_seconds) {
          ++ctx.latency_rejects;
          ctx.best_ttft_batch1 = std::min(ctx.best_ttft_batch1, lower.ttft_seconds);
          ctx.best_tpot_batch1 = std::min(ctx.best_tpot_batch1, lower.tpot_seconds);
          if (!problem) {
            problem = fmt::format("TP {} on {} misses the latency target even at batch 1 (TTFT {:.0f} ms, TPOT {:.0f} ms)",
                                  tp, key.gpu->name, lower.ttft_seconds * 1e3, lower.tpot_seconds * 1e3);
          }
          continue;
        } else {
          // The default target is missed even at batch 1 (trial55 D4: 100k-token prompts on an
          // MI300X at TTFT 5.4 s at batch 12): a larger batch only lengthens TTFT and TPOT once the
          // load is carried, so run the smallest batch that needs no more replicas than the full
          // batch does (TTFT and TPOT grow with the batch; rate, the replicas' capacity, too).
          meets = false;
          const std::int64_t n_full = needed_replicas(est);
          if (n_full >= 1 && est.batch > 1) {
            ServingPerfRequest at = sp;
            std::int64_t lo = 1, hi = est.batch;  // hi carries the load with n_full replicas
            ServingEstimate chosen = est;
            while (lo < hi) {
              const std::int64_t mid = lo + (hi - lo) / 2;
              at.concurrency = mid;
              const ServingEstimate e = estimate_serving(arch, at, cluster, kv_capacity, assumptions);
              const std::int64_t n = needed_replicas(e);
              if (n >= 1 && n <= n_full && e.batch == mid) {
                hi = mid;
                chosen = e;
              } else {
                lo = mid + 1;
              }
            }
            if (chosen.batch < est.batch) {
              est = chosen;
              bytes = serving_memory(arch, serving_memory_request(r, tp, est.batch)).total_bytes();
            }
            smallest_batch_for_load = true;
          }
        }
      }
    }
    const std::int64_t replicas = key.gpus_per_node / tp;
    std::int64_t instances = 1;
    bool carries = true, raised = false;
    std::int64_t capacity_batch = est.batch;  // sequences a replica holds (the rank's capacity)
    if (serving) {
      std::int64_t n = needed_replicas(est);
      if (fixed_nodes > 0 && (n < 1 || n > fixed_nodes * replicas) && !user_target) {
        // The fixed cluster holds fewer replicas than the load needs at the latency-target batch:
        // run its replicas at the batch the load needs, if memory holds it (marked as missing the
        // default target; trial 9 #1: "--gpus 8" answered "No plan" while TP4 and TP8 fit).
        const std::int64_t held = fixed_nodes * replicas;
        ServingEstimate e = full;
        double e_bytes = full_bytes;
        if (r.concurrency) {
          const std::int64_t per = (*r.concurrency + held - 1) / held;
          if (per <= probe.max_concurrent_sequences) {
            ServingPerfRequest at = sp;
            at.concurrency = per;
            e = estimate_serving(arch, at, cluster, kv_capacity, assumptions);
            e_bytes = serving_memory(arch, serving_memory_request(r, tp, e.batch)).total_bytes();
          }
        }
        const std::int64_t ne = needed_replicas(e);
        if (ne >= 1 && ne <= held && e_bytes <= usable) {
          est = e;
          bytes = e_bytes;
          meets = est.ttft_seconds <= ttft && est.tpot_seconds <= tpot;
          raised = true;
          n = ne;
        }
      }
      capacity_batch = est.batch;
      if (fixed_nodes > 0 && r.concurrency && !raised && n >= 1 && n <= fixed_nodes * replicas) {
        // Every replica of the fixed cluster serves, so the users spread over all of them: each
        // runs ceil(users / replicas) sequences, and TTFT and TPOT are that batch's, not the full
        // batch's (trial47: 50 users on 4 replicas were timed at batch 50). The rank below keeps the
        // capacity of the full batch; only what the users see is re-timed.
        const std::int64_t held = fixed_nodes * replicas;
        const std::int64_t per = (*r.concurrency + held - 1) / held;
        if (per >= 1 && per < est.batch) {
          ServingPerfRequest at = sp;
          at.concurrency = per;
          const ServingEstimate spread = estimate_serving(arch, at, cluster, kv_capacity, assumptions);
          est = spread;
          bytes = serving_memory(arch, serving_memory_request(r, tp, est.batch)).total_bytes();
          meets = est.ttft_seconds <= ttft && est.tpot_seconds <= tpot;
          n = needed_replicas(est);
        }
      }
      instances = n > 0 ? (n + replicas - 1) / replicas : std::numeric_limits<std::int64_t>::max();
      if (fixed_nodes > 0) {
        carries = n >= 1 && n <= fixed_nodes * replicas;
        instances = fixed_nodes;
      }
    }
    best.tp_options.push_back({tp, est.batch, est.ttft_seconds, est.tpot_seconds, est.tpot_defined, meets,
                               serving ? instances : 0, carries});
    // What the instance delivers: requests/s for --rps and batch jobs, sequences held for
    // --concurrency (then requests/s).
    const double rate = r.concurrency ? static_cast<double>(capacity_batch * replicas) * 1e6 + est.requests_per_s_per_replica
                                      : est.requests_per_s_per_replica * static_cast<double>(replicas);
    const Rank rank{carries, meets, instances, rate};
    if (!have_best || better(rank, best_rank)) {
      have_best = true;
      best_rank = rank;
      best.meets_latency = meets;
      best.batch_for_fixed_cluster = raised;
      best.batch_smallest_for_load = smallest_batch_for_load && !raised;
      best.fits = true;
      best.layout = ParallelLayout{};
      best.layout.tp = tp;
      best.layout.micro_batch = static_cast<int>(std::min<std::int64_t>(est.batch, 1 << 30));
      best.per_gpu_bytes = bytes;
      best.serving = est;
      best.kv_capacity_bytes = kv_capacity;
      best.replicas_per_instance = replicas;
    }
  }
  if (best.fits) {  // the chosen degree first
    std::stable_partition(best.tp_options.begin(), best.tp_options.end(),
                          [&](const ServingTpOption& o) { return o.tp == best.layout.tp; });
  }
  return best;
}

/// Image generation: one image per GPU (data parallel), model weights must fit one GPU.
SearchOutcome search_images(const PlanRequest& r, const ModelArch& arch, const ClusterKey& key,
                            const PerfAssumptions& assumptions, std::size_t& layouts_evaluated) {
  SearchOutcome best;
  const double usable = key.capacity_bytes * (1.0 - r.margin);
  // Weights in the serving precision + CUDA context + fragmentation (serving_memory with no KV:
  // diffusion models hold no KV cache; activations of one image are small against the weights).
  // One GPU per image (tp 1): nothing the model could refuse; the request was validated once.
  const MemoryBreakdown mb = serving_memory(arch, serving_memory_request(r, 1, 1));
  const double bytes = mb.total_bytes() - mb.term_bytes("kv_cache");
  ++layouts_evaluated;
  best.smallest_per_gpu_bytes = bytes;
  if (bytes > usable) return best;
  const DiffusionRequest d = detail::diffusion_request(r, arch, key.gpus_per_node);
  DiffusionEstimate e = estimate_diffusion(arch, d, *key.gpu, assumptions);
  best.fits = true;
  best.per_gpu_bytes = bytes;
  best.images_per_hour_per_instance = e.images_per_hour;
  best.replicas_per_instance = key.gpus_per_node;
  return best;
}

std::string short_gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

/// Bytes of a full checkpoint (trainable weights + optimizer state + master copy) and of the
/// final weights to download, from the sizing layer's terms at one GPU, no sharding.
struct CheckpointSizes {
  double checkpoint_bytes = 0;
  double final_weights_bytes = 0;
};
CheckpointSizes checkpoint_sizes(const PlanRequest& r, const ModelArch& arch) {
  CheckpointSizes s;
  if (r.workload != PlanWorkload::training) {
    s.final_weights_bytes = 0;
    return s;
  }
  // One unsharded GPU: a layout every model takes; the request was validated by
  // check_request_for_model (the same request with a default layout).
  const ParallelLayout one;
  const MemoryBreakdown m = training_memory(arch, detail::training_memory_request(r, one, Recompute::full, r.recompute_modules));
  if (r.task == Task::lora || r.task == Task::qlora) {
    // The adapters and their optimizer state (the frozen base is not checkpointed).
    s.checkpoint_bytes =
        m.term_bytes("lora_adapters") + m.term_bytes("optimizer_state") + m.term_bytes("master_weights");
    // The sizing layer holds adapters in fp32 (4 B/param, memory.cpp "4 B × adapter params");
    // they are released in 16 bits: half of that term.
    s.final_weights_bytes = m.term_bytes("lora_adapters") / 2.0;
  } else {
    s.checkpoint_bytes =
        m.term_bytes("weights") + m.term_bytes("optimizer_state") + m.term_bytes("master_weights");
    s.final_weights_bytes = static_cast<double>(arch.total_params()) * 2.0;  // bf16 release
  }
  return s;
}

double dataset_bytes(const PlanRequest& r, const ModelArch& arch) {
  if (r.workload != PlanWorkload::training) return 0;
  // Pre-tokenised dataset: uint16 token ids when the vocabulary fits (< 65536), else uint32
  // (Megatron-LM indexed datasets choose the dtype the same way).
  const double bytes_per_token = arch.vocab_size > 0 && arch.vocab_size < 65536 ? 2.0 : 4.0;
  const double unique_tokens = r.dataset_tokens ? *r.dataset_tokens : r.training_tokens();
  return unique_tokens * bytes_per_token;
}

void add_warning(std::vector<PlanWarning>& w, PlanWarningCode code, std::string message) {
  w.push_back(PlanWarning{code, std::move(message), {}});
}

constexpr double kLongRunSeconds = 30.0 * kSecondsPerDay;
/// Multi-node plans finishing sooner than this are hidden (select_rows; docs/planner.md): NCCL
/// start-up, data loading and the first checkpoint alone take minutes on a cluster.
constexpr double kMinMultiNodeRunSeconds = 600;

/// The evidence of one price of an offer, one definition for ranking, marks and warnings (catalog
/// freshness tiers, catalog/freshness.hpp, with --max-price-age as the stale limit):
///   tier 0: clean — no data-quality flag, dated, at most stale_after_days old (fresh or aging);
///   tier 1: stale — dated, older than stale_after_days;
///   tier 2: undated — the source gives no date (or the price was observed after --today);
///   tier 3: flagged — a data-quality flag questions the offer's price or memory.
/// Judged per price kind (price_evidence): a plan priced at spot is judged by the date of the spot
/// observation, one at on-demand by the on-demand one (docs/planner.md "Price evidence").
enum class EvidenceReason : unsigned char { none, flagged, undated, after_today };
struct PriceEvidence {
  int tier = 0;
  EvidenceReason reason = EvidenceReason::none;  ///< none when clean or stale
  /// Days since the judged price was observed (nullopt: undated, or no --today).
  std::optional<int> age_days;
  /// Stale prices only: whole multiples of the freshness limit the price is old (age / limit,
  /// rounded down, >= 1): 52 days at 30 is 1, 191 days is 6, 925 days is 30. Older ranks lower.
  int age_steps = 0;
  int rank = 0;  ///< evidence_rank(tier, age_steps): Plan::evidence_rank
  std::string_view stale_observed_at;  ///< stale: the day observed (a view into the offer)
  std::string_view flag_rule;          ///< flagged: the rule (a view into the offer)
};
/// One rank per price evidence, lower = better: the tier, then (stale) the age in steps of the
/// freshness limit (docs/planner.md "Price evidence").
constexpr int evidence_rank(int tier, int age_steps) { return tier * 1024 + std::min(age_steps, 1023); }

/// An offer the planner can run on, with what admission learned about it.
struct AdmittedOffer {
  const Offer* offer = nullptr;
  const GpuSpec* spec = nullptr;
  /// Offer::latest_price of each kind (index = PriceKind), looked up once at admission.
  std::array<const PriceObservation*, kPriceKindCount> latest{};
  double capacity_bytes = 0;
  bool memory_mismatch = false;
  bool network_known = false;
  bool max_nodes_assumed = false;
  double inter_bits = 0;
  bool inter_assumed = false;
  /// Node counts to plan on: first_nodes, 2 × first_nodes, ... up to last_nodes (an exact
  /// --nodes / --gpus count: first = last). Two ints instead of a vector per admitted offer.
  int first_nodes = 1;
  int last_nodes = 1;
  /// The offer's min_nodes when the node counts reach it (else 0): planned on between the powers
  /// of two (next_node_count).
  int min_nodes = 0;
  /// The evidence of each price kind the offer lists (index = PriceKind; price_evidence), judged
  /// once at admission: a plan takes that of the kind it is priced at (price()).
  std::array<PriceEvidence, kPriceKindCount> evidence{};
  /// Resolved on the offer's first fitting plan; shared by every offer of the same provider
  /// without billing overrides (collect_candidates resolves those once per provider).
  std::shared_ptr<const ResolvedBilling> billing;
};

/// The node count after `n` in an offer's search: the next power of two, or the offer's minimum
/// (`min_nodes`, 0 = none) when it lies between (1, 2, 3, 4, 8 ... for a minimum of 3).
constexpr int next_node_count(int n, int min_nodes) {
  int p = 1;
  while (p <= n) p *= 2;
  return min_nodes > n && min_nodes < p ? min_nodes : p;
}

enum class SkipReason { none, unusable, no_price, no_perf_figures, tp_exceeds_node, gpus_not_multiple, nodes_unavailable, above_max_gpus };

/// Plan-wide counters and sets the stages fill.
struct PlanState {
  /// Offer ids (views into the offers, which outlive the plan) with a spot price but no known
  /// preemption rate. Appended per priced plan (consecutive repeats skipped, an offer's plans are
  /// priced together) and made unique by unique_spot_rate_unknown() before it is counted: a
  /// std::set insert per candidate plan was ~2% of a plan.
  std::vector<std::string_view> spot_rate_unknown;
  /// Those of them whose spot price is a marketplace bid (flag marketplace_bid: vast
  /// interruptible), the same way: the warning says so, a bid has no rate to publish.
  std::vector<std::string_view> spot_rate_unknown_bids;
  void unique_spot_rate_unknown() {
    for (auto* v : {&spot_rate_unknown, &spot_rate_unknown_bids}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
  }
  /// --today as days since 1970-01-01, parsed once per plan (nullopt: no or unparsable --today).
  std::optional<long> today_days;
  /// The plan's performance assumptions (materialize re-times a small batch job with them).
  const PerfAssumptions* assumptions = nullptr;
  double spot_rate_too_high = 0;  ///< the highest known spot rate (per instance-day) that no job survives
  std::set<std::string> gpus_without_perf_figures;
  double largest_gpu_bytes = 0;
  double smallest_need = kInf;
  /// Whether any cluster searched held a layout (SearchOutcome::fits). smallest_need and
  /// largest_gpu_bytes may come from different offers (a need of 160 GB on 16 small GPUs, a
  /// 279 GB GPU on one): "smallest need ≤ largest GPU" does not mean a layout fits (a trial's
  /// LoRA at --seq 1000000 was told "layouts fit ... spot without a preemption rate").
  bool any_cluster_fits = false;
  /// The cluster that came closest to fitting (the smallest need over its usable memory), for
  /// the no-plan reason when no cluster fits: its GPU, GPUs per node, need and capacity.
  struct ClosestFit {
    double ratio = kInf;
    std::string_view gpu;  ///< into the GPU catalog
    int gpus = 0;
    double need_bytes = 0, capacity_bytes = 0;
    ParallelLayout layout;  ///< training: the layout of need_bytes
    Recompute recompute{};
    RecomputeModules recompute_modules = 0;
  } closest;
  /// training: the layout of smallest_need (SearchOutcome::smallest_layout), when one was sized
  std::optional<std::tuple<ParallelLayout, Recompute, RecomputeModules>> smallest_need_layout;
  bool any_multi_node = false;
  int smallest_gpus_per_node_rejected = 0;  ///< for the --tp / --gpus errors
  std::size_t shape_rejections = 0;
  SkipReason last_shape_reason = SkipReason::none;
  int example_gpus_per_node = 0;
  /// --gpus: the GPUs per node of the offers that reached the exact-size check, and those of them
  /// dividing --gpus whose offers cannot be rented as that many nodes (for the --gpus error).
  std::set<int> exact_node_sizes;
  std::set<int> dividing_sizes_unavailable;
  /// resolve_gpu's memo: (GPU name as the offers spell it, memory figure) → spec. The names are
  /// views into the offers, which outlive the plan.
  struct GpuKey {
    std::string_view name;
    double memory_bytes = 0;
    bool has_memory = false;
    bool operator==(const GpuKey&) const = default;
  };
  struct GpuKeyHash {
    std::size_t operator()(const GpuKey& k) const noexcept {
      return std::hash<std::string_view>{}(k.name) ^ (double_hash(k.memory_bytes) * 31 + k.has_memory);
    }
  };
  std::unordered_map<GpuKey, const GpuSpec*, GpuKeyHash> gpu_by_name;
  /// The worst price-evidence tier (price_evidence) a recommended plan may have: 1 (dated,
  /// unflagged) when any plan — feasible or not — runs on such a price, else the best tier any
  /// plan has. Set by select_rows.
  int max_recommendable_tier = 3;
  /// The plans on recommendable prices that come closest to the deadline / budget, for the
  /// no_clean_plan warning (set by select_rows when none of them meets the request).
  struct Closest {
    bool set = false;
    double total_usd = 0, time_seconds = 0;
    std::string provider, instance_type;
    int nodes = 0;
  };
  Closest cheapest_recommendable, fastest_recommendable;
  /// Serving: plans meet the request but none meets the latency target (none recommended).
  bool latency_excluded_all = false;
  /// The fastest plan on fresher price evidence than the recommended one, passed over because it
  /// runs past the horizon (fresher_plan_too_long); its price's age in days when dated.
  Closest fresher_too_long;
  std::optional<int> fresher_too_long_age_days;
};

/// GpuCatalog::try_find, memoized per plan by (name, memory): the catalog repeats a few dozen
/// GPU names over thousands of offers, and name matching normalizes strings each time.
const GpuSpec* resolve_gpu(const GpuCatalog& gpus, const std::string& name, std::optional<double> memory_bytes,
                           PlanState& st) {
  const PlanState::GpuKey key{name, memory_bytes.value_or(0.0), memory_bytes.has_value()};
  auto it = st.gpu_by_name.find(key);
  if (it != st.gpu_by_name.end()) return it->second;
  const GpuSpec* spec = gpus.try_find(name, memory_bytes);
  st.gpu_by_name.emplace(key, spec);
  return spec;
}

/// The evidence of `od`, one price observation of `offer` (nullptr: none of that kind).
PriceEvidence price_evidence(const PlanRequest& r, const Offer& offer, const PriceObservation* od,
                             std::optional<long> today_days) {
  PriceEvidence ev;
  std::optional<Freshness> f;
  if (od && od->seen_at() && !r.today.empty()) {
    f = price_freshness(od, today_days, FreshnessLimits{std::min(7.0, r.stale_after_days), r.stale_after_days});
    if (f->age_days) ev.age_days = static_cast<int>(*f->age_days);
  }
  for (const QualityFlag& flag : offer.flags) {
    // A price that jumped past the fetch gate's factor is as doubtful as one far below the market
    // index: kept, but not "clean" (trial9b D2: a vast 8x H100 at 5x its last price was
    // recommended unmarked).
    if (questions_price(flag)) {  // catalog/freshness.hpp: the rules `offers` ranks flagged too
      ev.tier = 3;
      ev.reason = EvidenceReason::flagged;
      ev.flag_rule = flag.rule;
      ev.rank = evidence_rank(ev.tier, 0);
      return ev;
    }
  }
  if (!od) return ev;
  if (!od->source.observed_at) {
    ev.tier = 2;
    ev.reason = EvidenceReason::undated;
    ev.rank = evidence_rank(ev.tier, 0);
    return ev;
  }
  if (!f) return ev;
  if (ev.age_days && *ev.age_days < 0) {
    // Observed after --today: no evidence of the price on that day (a new-user trial saw
    // `--today 2025-01-01` recommend a 2026 price as clean, "-508 days ago"). Ranked with
    // undated prices; the age stays in the plan's JSON.
    ev.tier = 2;
    ev.reason = EvidenceReason::after_today;
    ev.rank = evidence_rank(ev.tier, 0);
    return ev;
  }
  if (f->tier == FreshnessTier::stale) {
    ev.tier = 1;
    ev.age_steps = std::max(1, static_cast<int>(std::floor(static_cast<double>(f->age_days.value_or(0)) / r.stale_after_days)));
    // The sentence is written on the rows only (describe_offer: stale_reason): formatting it for
    // each of thousands of offers cost ~5% of a plan.
    ev.stale_observed_at = std::string_view(*od->seen_at()).substr(0, 10);  // last seen
  }
  ev.rank = evidence_rank(ev.tier, ev.age_steps);
  return ev;
}

/// The demoted reason of a plan on that evidence (Plan::demoted_reason): "" when clean.
std::string demoted_reason_text(const PlanRequest& r, const PriceEvidence& ev) {
  switch (ev.reason) {
    case EvidenceReason::flagged: return fmt::format("flagged {}", ev.flag_rule);
    case EvidenceReason::undated: return "undated price";
    case EvidenceReason::after_today: return "price observed after --today";
    case EvidenceReason::none: break;
  }
  if (ev.tier == 1)
    return fmt::format("stale price: observed {}, {} days ago (more than {:.0f})", ev.stale_observed_at,
                       ev.age_days.value_or(0), r.stale_after_days);
  return "";
}

/// Stage 1: admit an offer (resolved GPU, a price, published figures, the shape the pins need).
SkipReason admit(const PlanRequest& r, const Offer& offer, const GpuCatalog& gpus, PlanState& st, AdmittedOffer& out) {
  const bool training = r.workload == PlanWorkload::training;
  if (offer.excluded_from_ranking() || !offer.gpu_name || offer.gpu_count < 1) return SkipReason::unusable;
  const GpuSpec* spec = resolve_gpu(gpus, *offer.gpu_name, offer.gpu_memory_bytes, st);
  if (!spec) return SkipReason::unusable;
  out.latest = offer.latest_prices();
  bool any_price = false;
  for (const PriceObservation* o : out.latest) any_price |= o && o->usd_per_hour > 0;
  if (!any_price) return SkipReason::no_price;
  // The time model needs a dense 16/32-bit peak and the memory bandwidth; gpus.csv leaves
  // figures no source publishes empty, and such offers cannot be timed (never guessed).
  if (!spec->memory_bandwidth() || !(spec->dense_flops(Dtype::bf16) || spec->dense_flops(Dtype::fp16) ||
                                     spec->dense_flops(Dtype::fp32))) {
    st.gpus_without_perf_figures.insert(spec->name);
    return SkipReason::no_perf_figures;
  }
  out.offer = &offer;
  out.spec = spec;
  // Per-GPU capacity: what the resolved GPU gives a framework, GpuSpec::fit_memory_bytes (the
  // driver-reported total, e.g. 81,559 MiB = 85.5e9 bytes on an "80 GB" H100; else the
  // datasheet's), the same figure `gpuplan size` fits against. The offer's own figure only picks
  // the GPU variant: feeds round or mix GiB and GB (a B200 listed as "180 GiB") and some list the
  // instance total as the per-GPU size, so a figure more than 15% off the datasheet is a warning.
  out.capacity_bytes = spec->fit_memory_bytes();
  if (offer.gpu_memory_bytes && std::abs(*offer.gpu_memory_bytes - spec->memory_bytes) > 0.15 * spec->memory_bytes) {
    out.memory_mismatch = true;
  }
  st.largest_gpu_bytes = std::max(st.largest_gpu_bytes, out.capacity_bytes);
  // Node counts: multi-node training only with a known inter-node network. A source that names
  // the network (e.g. AWS EFA) offers clusters; when it does not say how many nodes, up to
  // --max-nodes (or the exact --nodes / --gpus) are assumed and a warning says so.
  out.network_known = offer.inter_node_network != InterNodeNetwork::unknown;
  out.max_nodes_assumed = out.network_known && !offer.max_nodes;
  if (out.network_known && offer.max_nodes.value_or(r.max_nodes) > 1) st.any_multi_node = true;
  if (out.network_known) {
    out.inter_bits = offer.inter_node_bits_per_s.value_or(0);
    if (out.inter_bits <= 0) {
      out.inter_bits = assumed_inter_node_bits_per_s(offer.inter_node_network);
      out.inter_assumed = true;
    }
  }
  if (r.pins.tp && *r.pins.tp > offer.gpu_count) {
    st.example_gpus_per_node = offer.gpu_count;
    return SkipReason::tp_exceeds_node;
  }
  // Sold only as >= min_nodes instances (a reserved cluster): more than --max-nodes allows per
  // plan is no plan (fewer nodes used are billed as the minimum: price(), min_nodes_billed).
  if (offer.min_nodes && *offer.min_nodes > r.max_nodes) return SkipReason::nodes_unavailable;
  // --max-gpus: an instance of more GPUs than the ceiling is no plan; fewer instances below.
  if (r.max_gpus && offer.gpu_count > *r.max_gpus) return SkipReason::above_max_gpus;
  // --gpus / --nodes fix the cluster for every workload: training splits it into a layout,
  // serving and batch jobs into replicas of TP GPUs (TP within an instance), images one per GPU.
  const bool exact = r.gpus_total || r.nodes_exact;
  if (exact) {
    int nodes = r.nodes_exact.value_or(0);
    if (r.gpus_total) {
      st.exact_node_sizes.insert(offer.gpu_count);
      if (*r.gpus_total % offer.gpu_count != 0) {
        st.example_gpus_per_node = offer.gpu_count;
        return SkipReason::gpus_not_multiple;
      }
      const int from_gpus = *r.gpus_total / offer.gpu_count;
      if (r.nodes_exact && *r.nodes_exact != from_gpus) return SkipReason::gpus_not_multiple;
      nodes = from_gpus;
    }
    // Inference replicas are independent (no inter-node traffic): any number of instances, as
    // without --gpus (docs/planner.md "Serving"); training needs a known network beyond one node.
    const bool ok = !training || nodes == 1 || (out.network_known && nodes <= offer.max_nodes.value_or(nodes));
    if (!ok) {
      if (r.gpus_total) st.dividing_sizes_unavailable.insert(offer.gpu_count);
      return SkipReason::nodes_unavailable;
    }
    // --nodes N of an offer's instances above --max-gpus is no plan (trial53 #1: 2 × 8 GPUs were
    // planned under --max-gpus 8).
    if (r.max_gpus && static_cast<long long>(nodes) * offer.gpu_count > *r.max_gpus) return SkipReason::above_max_gpus;
    out.first_nodes = out.last_nodes = nodes;
  } else {
    // Training beyond one node needs a known network; a batch job's requests split over
    // independent replicas (no traffic between instances), so it too is planned on 1, 2, 4, ...
    // instances (trial46 D5: 1e13 requests were one 8×H100 for 380 days). A service's instances
    // follow its load.
    const bool counts_nodes = (training && out.network_known) || r.workload == PlanWorkload::batch_generation;
    int node_limit = counts_nodes ? std::min(r.max_nodes, offer.max_nodes.value_or(r.max_nodes)) : 1;
    if (r.max_gpus) node_limit = std::max(1, std::min(node_limit, *r.max_gpus / offer.gpu_count));
    out.first_nodes = 1;
    out.last_nodes = node_limit;
    // A minimum that is not a power of two is planned on too (next_node_count): the cluster
    // that is billed anyway, with no idle node.
    if (offer.min_nodes && *offer.min_nodes <= node_limit) out.min_nodes = *offer.min_nodes;
  }
  // Ranking by the evidence of the price (price_evidence): clean and dated within the stale
  // limit, stale, undated, flagged; once per price kind the offer lists (a plan takes that of
  // the kind it is priced at, price()).
  for (std::size_t k = 0; k < kPriceKindCount; ++k)
    if (out.latest[k]) out.evidence[k] = price_evidence(r, offer, out.latest[k], st.today_days);
  return SkipReason::none;
}

/// Serving on a fixed cluster (--gpus / --nodes) whose replicas cannot carry the load: the
/// smallest shortfall seen (for the no-plan reason: the load needs R replicas, N GPUs hold H).
struct FixedClusterLoad {
  bool set = false;
  std::int64_t replicas_needed = 0;
  std::int64_t replicas_held = 0;
  int tp = 1;
  int gpus_per_instance = 0;
  void note(std::int64_t needed, std::int64_t held, int tp_, int gpn) {
    // The offer closest to carrying the load: the smallest needed / held.
    if (set && static_cast<double>(needed) / static_cast<double>(held) >=
                   static_cast<double>(replicas_needed) / static_cast<double>(replicas_held))
      return;
    *this = FixedClusterLoad{true, needed, held, tp_, gpn};
  }
};

/// Training clusters that hold a layout but never finish: failures come faster than a checkpoint
/// write and a restart (GoodputEstimate::feasible false); the first one's goodput for the no-plan reason.
struct GoodputRejects {
  std::size_t count = 0;
  std::optional<GoodputEstimate> example;
};

/// The plan's serving figures at the batch a job actually runs, `running` sequences per replica
/// (fewer than the KV pool's batch): TTFT, TPOT, the layout's batch and the memory are that batch's.
/// Shared by the static-batching batch job (assemble) and the continuous one (materialize).
void serve_at_batch(const PlanRequest& r, const ModelArch& arch, const PerfAssumptions& a, const ClusterSpec& cluster,
                    double kv_capacity_bytes, std::int64_t running, Plan& p) {
  p.serving = estimate_serving(arch, detail::serving_perf_request(r, p.layout.tp, running), cluster, kv_capacity_bytes, a);
  p.layout.micro_batch = static_cast<int>(running);
  p.per_gpu_memory_bytes = serving_memory(arch, detail::serving_memory_request(r, p.layout.tp, running)).total_bytes();
}

/// Stage 2-4: the plan of one admitted offer on one node count, timed (no price yet), into a
/// default-constructed `p`. False when it cannot run (goodput, replicas, --max-nodes); `rejects`
/// counts the goodput ones.
/// `candidate`: only the numbers pricing and the region groups read (collect_candidates, into a
/// scratch plan reused for every candidate of the call: every field those read is written here
/// on every call, for the request's one workload); the cluster spec, the requested batch and the
/// training step estimate are left out (materialize builds the full plan of the rows).
bool assemble(const PlanRequest& request, const ModelArch& arch, const PerfAssumptions& assumptions, const AdmittedOffer& a, int nodes,
                             const ClusterKey& key, const SearchOutcome& o, const CheckpointSizes& ckpt,
                             double data_bytes, double tokens, Plan& p, FixedClusterLoad* load = nullptr,
                             bool candidate = false, GoodputRejects* rejects = nullptr) {
  const bool training = request.workload == PlanWorkload::training;
  const bool images = request.workload == PlanWorkload::image_generation;
  const bool fixed_cluster = request.gpus_total || request.nodes_exact;
  const Offer& offer = *a.offer;
  p.gpus_per_instance = offer.gpu_count;
  p.intra_node_link = offer.intra_node_link;
  p.inter_node_network = offer.inter_node_network;
  if (!candidate) p.cluster = cluster_for(key);
  p.layout = o.layout;
  p.recompute = o.recompute;
  p.recompute_modules = o.recompute_modules;
  p.per_gpu_memory_bytes = o.per_gpu_bytes;
  p.gpu_memory_capacity_bytes = a.capacity_bytes;
  p.margin = request.margin;
  p.checkpoint_bytes = ckpt.checkpoint_bytes;
  p.egress_bytes = request.egress_gb ? *request.egress_gb * kBytesPerGb : ckpt.final_weights_bytes;
  p.storage_bytes = data_bytes + ckpt.checkpoint_bytes;
  p.availability_confirmed = confirmed_available(*a.offer, request);
  if (training) {
    p.instances = nodes;
    p.global_batch_seqs = o.global_batch_seqs;
    if (!candidate) {
      p.requested_global_batch_seqs = request.effective_global_batch_seqs();
      p.training = o.step;
    }
    p.tokens_per_s = o.step.tokens_per_s;
    p.steps = o.steps;
    p.work_seconds = o.work_seconds;
    p.mfu_overridden = request.mfu_override.has_value();
    if (request.goodput_override) {
      p.goodput = fixed_goodput(p.work_seconds, *request.goodput_override);
    } else {
      GoodputRequest g;
      g.work_seconds = p.work_seconds;
      g.gpus = static_cast<std::int64_t>(nodes) * offer.gpu_count;
      g.nodes = nodes;
      g.checkpoint_bytes = ckpt.checkpoint_bytes;
      g.checkpoint_write_bytes_per_s = request.checkpoint_write_bytes_per_s;
      g.restart_seconds = request.restart_seconds;
      if (request.failures_per_gpu_hour) g.failures_per_gpu_hour = *request.failures_per_gpu_hour;
      g.evaluation_fraction = request.evaluation_fraction;
      p.goodput = estimate_goodput(g);
    }
    if (!p.goodput->feasible) {
      if (rejects) {
        ++rejects->count;
        if (!rejects->example) rejects->example = *p.goodput;
      }
      return false;
    }
    (void)tokens;
  } else if (images) {
    // One instance, or exactly the --gpus / --nodes cluster (an image per GPU on each).
    const int instances = fixed_cluster ? nodes : 1;
    p.instances = instances;
    p.replicas = o.replicas_per_instance * instances;
    p.work_seconds = request.images / (o.images_per_hour_per_instance * instances) * 3600.0;
    p.requests_per_s = o.images_per_hour_per_instance * instances / 3600.0;
    // The model's weights stay on the instance's disk for the run, as a batch job's do (trial52 #5:
    // an image job stored nothing).
    p.storage_bytes = static_cast<double>(arch.total_params()) * weight_quant_bits(request.quant) / 8.0;
  } else {
    const ServingEstimate& e = o.serving;
    std::int64_t replicas = 1;
    if (request.workload == PlanWorkload::serving) {
      // Sequences held at once: the batch each replica runs (lowered to meet a latency target),
      // not only what its KV cache holds.
      replicas = fixed_cluster ? detail::serving_replicas_for_capacity(request, e) : detail::serving_replicas_needed(request, e);
      // --max-nodes / --max-gpus below the queue's count: as many replicas as they allow, down to
      // the capacity count (the wait at those replicas is stated).
      if (!fixed_cluster && replicas > 0 && request.requests_per_s) {
        std::int64_t allowed = static_cast<std::int64_t>(request.max_nodes) * o.replicas_per_instance;
        if (request.max_gpus && offer.gpu_count > 0)
          allowed = std::min(allowed, (*request.max_gpus / static_cast<std::int64_t>(offer.gpu_count)) * o.replicas_per_instance);
        replicas = std::max(std::min(replicas, allowed), detail::serving_replicas_for_capacity(request, e));
      }
    } else {
      replicas = o.replicas_per_instance * nodes;  // batch job: every GPU of its `nodes` instances
      // No instance without a request of its own (trial47 D7: 3 requests on 4 instances), unless
      // the user fixed the cluster (--nodes / --gpus): then the idle replicas are said, not a
      // false "needs more than --max-nodes" (trial54 #2: --requests 1 --nodes 2).
      if (!fixed_cluster && request.requests &&
          static_cast<double>(o.replicas_per_instance) * (nodes - 1) >= std::ceil(*request.requests))
        return false;
    }
    if (replicas < 1) return false;
    std::int64_t instances = (replicas + o.replicas_per_instance - 1) / o.replicas_per_instance;
    if (fixed_cluster) {
      // Exactly the --gpus / --nodes cluster: every GPU serves (instances × GPUs / TP replicas);
      // a load that needs more replicas than it holds is no plan (the reason says how many).
      const std::int64_t held = static_cast<std::int64_t>(nodes) * o.replicas_per_instance;
      if (replicas > held) {
        if (load) load->note(replicas, held, o.layout.tp, offer.gpu_count);
        return false;
      }
      instances = nodes;
      replicas = held;
    } else if (instances > request.max_nodes ||
               (request.max_gpus && instances * static_cast<std::int64_t>(offer.gpu_count) > *request.max_gpus)) {
      return false;  // a service's load needs more instances than --max-nodes / --max-gpus allow
    }
    p.instances = static_cast<int>(instances);
    p.replicas = replicas;
    p.serving = e;
    p.meets_latency_target = o.meets_latency;
    p.batch_for_fixed_cluster = o.batch_for_fixed_cluster;
    p.batch_smallest_for_load = o.batch_smallest_for_load;
    if (request.workload == PlanWorkload::serving && request.requests_per_s) {
      const double wait = queue_wait_seconds(e, replicas, *request.requests_per_s);
      if (std::isfinite(wait)) p.queue_wait_seconds = wait;
      // Fewer replicas than the queue needs (a fixed cluster, --max-nodes / --max-gpus): the mean
      // wait past the TTFT target's slack misses the latency target (trial58 #3: 7 fixed replicas at
      // 97% busy wait 47 s).
      if (!(wait <= detail::serving_queue_wait_budget_seconds(request, e))) p.meets_latency_target = false;
    }
    if (!candidate && request.workload == PlanWorkload::serving) p.serving_tp_options = o.tp_options;
    p.kv_capacity_bytes = o.kv_capacity_bytes;
    // What the replicas serve: the load's own requests, not every replica's full batch (trial46 D2:
    // 50 users on 4 replicas of batch 50 were credited 4 × their tokens/s; trial47 D6: 2 req/s on 8
    // GPUs, the cluster's capacity).
    const double replicas_busy = detail::serving_replicas_busy(request, e, replicas);
    p.tokens_per_s = e.decode_tokens_per_s * replicas_busy;
    p.requests_per_s = e.requests_per_s_per_replica * replicas_busy;
    if (request.workload == PlanWorkload::serving) {
      p.work_seconds = request.hours * 3600.0;
    } else if (e.continuous_batching && e.batch > 0) {
      // Batch job: every request queued at t = 0; the busiest replica's share, step by step
      // (waves that start and finish together, staggered by chunked prefill).
      const auto per_replica = (static_cast<std::int64_t>(std::ceil(*request.requests)) + replicas - 1) / replicas;
      const std::int64_t requests_per_replica = std::max<std::int64_t>(per_replica, 1);
      const std::int64_t simulated =
          batch_job_simulated_requests(e, requests_per_replica, request.prompt_tokens, request.output_tokens);
      auto [sim, added] = o.batch_job_simulations.try_emplace(simulated);
      if (added) sim->second = simulate_batch_job(e, simulated, request.prompt_tokens, request.output_tokens);
      p.batch_job = batch_job_scaled(sim->second, e, requests_per_replica);
      p.work_seconds = p.batch_job->seconds;
      p.requests_per_s = *request.requests / p.work_seconds;
      p.tokens_per_s = p.requests_per_s * static_cast<double>(request.output_tokens);
    } else {
      // Batch job on a static-batching engine (EngineProfile::continuous_batching false: llama.cpp
      // as profiled): waves of min(requests per replica, KV-pool batch) requests, each wave its
      // prompts' prefill (TTFT) and output − 1 decode steps at that batch (static_wave_seconds,
      // which counts the prefill once: TTFT's floor is the same prefill TPOT spreads); the next wave starts
      // when it ends. The pool's steady rate timed 1 request in 65 ms against its 91 ms TPOT
      // (trial54 #1): its TTFT, TPOT and memory are now those of the batch it runs.
      const auto per_replica = (static_cast<std::int64_t>(std::ceil(*request.requests)) + replicas - 1) / replicas;
      const std::int64_t requests_per_replica = std::max<std::int64_t>(per_replica, 1);
      const std::int64_t running = std::max<std::int64_t>(1, std::min(requests_per_replica, e.batch));
      if (running < e.batch) serve_at_batch(request, arch, assumptions, cluster_for(key), o.kv_capacity_bytes, running, p);
      const ServingEstimate& at = *p.serving;
      const double waves = std::ceil(static_cast<double>(requests_per_replica) / static_cast<double>(running));
      p.work_seconds = waves * static_wave_seconds(at, request.output_tokens);
      p.requests_per_s = *request.requests / p.work_seconds;
      p.tokens_per_s = p.requests_per_s * static_cast<double>(request.output_tokens);
    }
    p.storage_bytes = static_cast<double>(arch.total_params()) * weight_quant_bits(request.quant) / 8.0;
  }
  return true;
}

/// The strings of a plan (offer identity, GPU name, billing terms, price source) and its layout
/// caveat, set only on the plans that are shown (the search keeps thousands of candidates as
/// numbers): `price_obs` = the chosen price (nullptr when unpriced, as in `estimate`). The
/// billing terms are copied only `with_billing` (the rows get theirs with their warnings, once
/// --limit has cut them).
void describe_offer(const PlanRequest& request, const ModelArch& arch, const AdmittedOffer& a,
                    const PriceObservation* price_obs, Plan& p, bool with_billing = true) {
  const Offer& offer = *a.offer;
  p.offer_id = offer.id;
  p.provider = offer.provider;
  p.instance_type = offer.instance_type;
  p.region = offer.region;
  p.regions = {offer.region};
  p.gpu_name = a.spec->name;
  // The evidence of the kind the plan is priced at (price() set the tier, rank and age from it).
  if (price_obs) p.demoted_reason = demoted_reason_text(request, a.evidence[static_cast<std::size_t>(p.cost.price_kind)]);
  if (with_billing && a.billing) p.billing = *a.billing;
  if (price_obs) {
    p.price_source = price_obs->source;
    p.price_last_seen_at = price_obs->seen_at();
  }
  // The matmul peak the time model fell back to (sizing: bf16 → fp16 → tf32 → fp32): a GPU whose
  // BF16 and FP16 tensor rates data/gpus.csv leaves unknown is timed at its TF32/FP32 peak.
  const bool fp32_training =
      request.workload == PlanWorkload::training &&
      (request.precision == TrainPrecision::fp32 || request.precision == TrainPrecision::tf32);
  if (!fp32_training && request.workload != PlanWorkload::image_generation && !a.spec->dense_flops(Dtype::bf16) &&
      !a.spec->dense_flops(Dtype::fp16)) {
    p.math_fallback = a.spec->dense_flops(Dtype::tf32) ? "tf32" : "fp32";
  }
  if (request.workload != PlanWorkload::image_generation && !arch.mla && arch.num_kv_heads > 0 &&
      p.layout.tp > arch.num_kv_heads) {
    // Per GPU, K and V projections of one head per layer instead of kv/tp heads: 2·d·h·(1 − kv/tp)
    // parameters per layer on the most loaded stage that the models count as split.
    const double d = arch.head_dim > 0 ? static_cast<double>(arch.head_dim)
                                       : static_cast<double>(arch.hidden_size) / static_cast<double>(arch.num_attention_heads);
    const double layers = std::ceil(static_cast<double>(arch.num_layers) / std::max(1, p.layout.pp));
    const double extra = 2.0 * d * static_cast<double>(arch.hidden_size) *
                         (1.0 - static_cast<double>(arch.num_kv_heads) / p.layout.tp) * layers;
    add_warning(p.warnings, PlanWarningCode::kv_heads_replicated,
                fmt::format("TP {} > {} KV heads: each KV head is replicated on {} GPUs; its K/V projections "
                            "(~{:.0f} M parameters per GPU, with their gradients and optimizer state when trained) are "
                            "counted in memory and time (the serving KV cache holds one head per GPU)",
                            p.layout.tp, arch.num_kv_heads, p.layout.tp / arch.num_kv_heads, extra / 1e6));
  }
  if (request.workload == PlanWorkload::training && arch.ssm && arch.family == ModelFamily::decoder) {
    // The memory model has no per-block activation model of SSM mixers (trial62 #9: only `size` said so).
    p.warnings.push_back(PlanWarning{
        PlanWarningCode::hybrid_activations_approximate,
        hybrid_activations_note(arch),
        {{"model", arch.name}, {"blocks", fmt::format("{}", arch.num_layers)}}});
  }
  if (request.workload == PlanWorkload::training && arch.moe && p.layout.ep == 1 && !request.moe_dispatcher &&
      request.stack == TrainingStack::megatron && a.spec != nullptr && a.spec->vendor == "NVIDIA" && !request.pins.ep) {
    // EP 1 chosen while EP layouts were timed with alltoall (trial48 #7: 8 × B200 Qwen3-30B-A3B was
    // recommended PP4 VP6 DP2 for 15.1 d; with --moe-dispatcher hybridep an EP 2 layout takes 8.8 d).
    add_warning(p.warnings, PlanWarningCode::moe_dispatcher_assumed,
                "EP 1: expert-parallel layouts were timed with Megatron-Core's alltoall dispatcher (k copies per token, a "
                "host sync per layer); with the HybridEP or DeepEP dispatcher of NVIDIA's recipes since NeMo 26.02 "
                "(--moe-dispatcher hybridep) an EP layout may be faster: plan again with it to compare");
  }
  if (request.workload == PlanWorkload::training && arch.moe && p.layout.ep > 1 && !request.moe_dispatcher &&
      request.stack == TrainingStack::megatron && a.spec != nullptr && a.spec->vendor == "NVIDIA") {
    // NVIDIA only: elsewhere HybridEP/DeepEP do not run and alltoall is what is timed (trial60 #8).
    // The dispatcher changes the MoE time most on small experts (docs/accuracy.md, disp10): the
    // same 8 × B200 Qwen3-30B-A3B recipe went from 9691 to 26695 tokens/s/GPU with HybridEP
    // (and micro-batch 1 → 4), NeMo 26.02 → 26.02.01.
    add_warning(p.warnings, PlanWarningCode::moe_dispatcher_assumed,
                fmt::format("EP {}: MoE token dispatch timed as Megatron-Core's alltoall dispatcher (k copies per token, "
                            "a host sync per layer); NVIDIA's Megatron-Bridge recipes since NeMo 26.02 run HybridEP or "
                            "DeepEP (--moe-dispatcher hybridep), up to 2.8× faster on small-expert models",
                            p.layout.ep));
  }
  if (request.workload == PlanWorkload::training && p.layout.pp > 1 && arch.num_layers % p.layout.pp != 0) {
    // Uneven stages: the memory and time models count ceil(layers / pp) on the most loaded stage.
    add_warning(p.warnings, PlanWarningCode::uneven_pipeline,
                fmt::format("{} layers over PP {}: stages of {} and fewer layers (Megatron-LM "
                            "--decoder-first/last-pipeline-num-layers); time and memory use the largest stage",
                            arch.num_layers, p.layout.pp, (arch.num_layers + p.layout.pp - 1) / p.layout.pp));
  }
}

/// The time ranking's pairwise rule (--sort time, --budget; docs/planner.md "Time ranking"):
/// a cheaper plan `c` goes ahead of a dearer plan `d` when it is no slower, when their times are
/// within the tie tolerance, or when d's speed-up is not worth its cost — each hour d saves costs
/// more than speedup_max_cost_ratio × what c spends per hour:
///   (cost_d − cost_c) / (time_c − time_d) > ratio × cost_c / time_c.
bool cheaper_goes_first(const PlanRequest& r, double time_c, double cost_c, double time_d, double cost_d) {
  if (!(cost_c < cost_d)) return false;
  if (time_c <= time_d) return true;
  if (time_c - time_d <= r.time_tie_tolerance * std::min(time_c, time_d)) return true;
  return (cost_d - cost_c) * time_c > r.speedup_max_cost_ratio * cost_c * (time_c - time_d);
}

/// Stage 5: price every kind the offer lists and keep the cheapest total (the time sort keeps
/// the fastest, ties within the tolerance to the cheaper). False when no kind can be priced.
/// `with_alternatives`: also list the other kinds in p.alternatives (the rows; a candidate keeps
/// only its total and time, so collect_candidates skips that allocation). Sets the plan's price
/// evidence (demotion_tier, evidence_rank, price_age_days) from the kind chosen (admit judged each).
const PriceObservation* price(const PlanRequest& request, const AdmittedOffer& admitted, const ResolvedBilling& billing,
                              PlanState& st, Plan& p, bool with_alternatives = true) {
  const Offer& offer = *admitted.offer;
  const bool training = request.workload == PlanWorkload::training;
  CostInputs job;
  job.work_seconds = p.goodput ? p.goodput->wall_seconds : p.work_seconds;
  job.instances = p.instances;
  job.billed_instances = offer.min_nodes.value_or(0);  // sold as >= min_nodes: the minimum is billed
  job.storage_bytes = p.storage_bytes;
  job.egress_bytes = p.egress_bytes;
  job.checkpoint_seconds =
      training ? p.checkpoint_bytes / static_cast<double>(p.instances) / request.checkpoint_write_bytes_per_s : 0;
  job.restart_seconds = request.restart_seconds;
  job.startup_seconds = request.startup_seconds;
  // At most one option per price kind: price_job's results in a fixed array (an empty optional
  // costs no CostBreakdown construction), ordered through an index array; no allocation.
  std::array<std::optional<CostBreakdown>, kPriceKindCount> costs;
  std::array<const PriceObservation*, kPriceKindCount> observed{};
  std::array<std::size_t, kPriceKindCount> option_slots{};
  std::size_t n_options = 0;
  for (PriceKind kind : kPriceKinds) {
    if (kind == PriceKind::spot && (!request.allow_spot || !training)) continue;
    const PriceObservation* obs = admitted.latest[static_cast<std::size_t>(kind)];
    if (!obs || obs->usd_per_hour <= 0) continue;
    std::optional<CostBreakdown>& c = costs[n_options];
    c = price_job(job, kind, obs->usd_per_hour, billing);
    if (c) {
      observed[n_options] = obs;
      option_slots[n_options] = n_options;
      ++n_options;
    } else if (kind == PriceKind::spot && !billing.preemptions_per_day) {
      if (st.spot_rate_unknown.empty() || st.spot_rate_unknown.back() != offer.id) {
        st.spot_rate_unknown.push_back(offer.id);
        if (std::any_of(offer.flags.begin(), offer.flags.end(),
                        [](const QualityFlag& f) { return f.rule == import_rule::kMarketplaceBid; }))
          st.spot_rate_unknown_bids.push_back(offer.id);
      }
    } else if (kind == PriceKind::spot) {
      // A known rate so high that each preemption loses more than the time between them: the
      // job never finishes on spot (the no-plan reason says so, not "no rate").
      st.spot_rate_too_high = std::max(st.spot_rate_too_high, *billing.preemptions_per_day);
    }
  }
  if (n_options == 0) return nullptr;
  auto before = [&](std::size_t ia, std::size_t ib) {
    const CostBreakdown& a = *costs[ia];
    const CostBreakdown& b = *costs[ib];
    const double ta = a.run_seconds, tb = b.run_seconds;
    const double ca = a.total_usd(), cb = b.total_usd();
    if (request.budget_usd && !request.deadline_seconds) {
      // The budget rule recommends by time: the time ranking's rule (cheaper_goes_first), then
      // the faster. Never by --sort: the price kind of a plan (and so the R mark) must not
      // change with the order the rows are listed in.
      if (cheaper_goes_first(request, ta, ca, tb, cb)) return true;
      if (cheaper_goes_first(request, tb, cb, ta, ca)) return false;
      return ta < tb;
    }
    return ca < cb;
  };
  // Insertion sort of ≤ 5 options (what std::sort does for so few; ties keep the kind order).
  for (std::size_t i = 1; i < n_options; ++i) {
    auto v = option_slots[i];
    std::size_t j = i;
    for (; j > 0 && before(v, option_slots[j - 1]); --j) option_slots[j] = option_slots[j - 1];
    option_slots[j] = v;
  }
  p.cost = *costs[option_slots[0]];
  p.usd_per_gpu_hour = p.cost.usd_per_hour / static_cast<double>(p.gpus_per_instance);
  // The plan is ranked, marked and warned about by the evidence of the kind it is priced at.
  const PriceEvidence& ev = admitted.evidence[static_cast<std::size_t>(p.cost.price_kind)];
  p.demotion_tier = ev.tier;
  p.evidence_rank = ev.rank;
  p.price_age_days = ev.age_days;
  if (with_alternatives) {
    for (std::size_t i = 1; i < n_options; ++i) p.alternatives.push_back(*costs[option_slots[i]]);
  }
  return observed[option_slots[0]];
}

/// The latency targets in force, in words, each only when set: "TTFT ≤ 500 ms and TPOT ≤ 200 ms",
/// "TPOT ≤ 50 ms" (no TTFT target: none is printed, never "≤ inf ms"). `sep` joins the two.
std::string latency_targets_text(const PlanRequest& r, std::string_view sep) {
  std::string out;
  const double ttft = r.effective_ttft_seconds(), tpot = r.effective_tpot_seconds();
  // Three significant digits ("0.001 ms", "33.3 ms", "200 ms"): whole milliseconds printed a
  // target of 0.001 ms as "≤ 0 ms" (trial46).
  auto ms = [](double seconds) {
    const double v = seconds * 1e3;
    return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
  };
  if (std::isfinite(ttft)) out = fmt::format("TTFT ≤ {} ms", ms(ttft));
  if (std::isfinite(tpot)) out += fmt::format("{}TPOT ≤ {} ms", out.empty() ? "" : sep, ms(tpot));
  return out;
}

/// Serving: why the plan's TP degree, in one sentence (Plan::serving_tp_choice): the chosen
/// degree's latency against the target and its instances, then each other degree that fits.
/// When a degree missing the default target needs fewer instances, says that the target is what
/// costs the extra instances.
std::string serving_tp_choice_text(const PlanRequest& r, const std::vector<ServingTpOption>& options) {
  if (options.empty()) return "";
  const bool fixed = r.gpus_total || r.nodes_exact;
  const std::string target = fmt::format("the {} target {}", r.ttft_seconds || r.tpot_seconds ? "given" : "default",
                                         latency_targets_text(r, ", "));
  auto lat = [](const ServingTpOption& o) {
    if (!o.tpot_defined) return fmt::format("TTFT {:.0f} ms at batch {}", o.ttft_seconds * 1e3, o.batch);
    return fmt::format("TTFT {:.0f} ms, TPOT {:.0f} ms at batch {}", o.ttft_seconds * 1e3, o.tpot_seconds * 1e3, o.batch);
  };
  auto inst = [](std::int64_t n) { return fmt::format("{} instance{}", n, n == 1 ? "" : "s"); };
  const ServingTpOption& c = options.front();
  std::string out = fmt::format("TP{} {} {} ({})", c.tp, c.meets_latency ? "meets" : "misses", target, lat(c));
  if (!fixed) out += fmt::format(" on {}", inst(c.instances_needed));
  const ServingTpOption* fewer_missing = nullptr;
  for (std::size_t i = 1; i < options.size(); ++i) {
    const ServingTpOption& o = options[i];
    out += fmt::format("; TP{} ", o.tp);
    if (fixed && !o.carries_load) {
      out += "would not hold the load on this cluster";
      continue;
    }
    if (!fixed) out += fmt::format("would need {} and ", inst(o.instances_needed));
    out += fmt::format("gives {}{}", lat(o), o.meets_latency ? "" : ", missing the target");
    if (!fixed && !o.meets_latency && c.meets_latency && o.instances_needed < c.instances_needed &&
        (!fewer_missing || o.instances_needed < fewer_missing->instances_needed))
      fewer_missing = &o;
  }
  if (fewer_missing) {
    out += fmt::format("; the latency target is what needs {} instead of {}", inst(c.instances_needed),
                       fewer_missing->instances_needed);
  }
  return out;
}

/// Training time on a vendor outside the calibration (docs/accuracy.md: every published training
/// row is an NVIDIA GPU): said on the plan and the estimate, not only in the docs (trial56 #1,
/// trial57 #4 for estimate).
void add_time_uncalibrated(const GpuSpec& spec, std::vector<PlanWarning>& w) {
  if (spec.vendor == "NVIDIA") return;
  w.push_back(PlanWarning{PlanWarningCode::time_uncalibrated,
                          fmt::format("{}: no published training throughput on {} accelerators calibrates gpuplan's "
                                      "time model; its time takes the conservative share of datasheet peak assumed "
                                      "for uncalibrated GPUs, which no {} measurement here confirms",
                                      spec.name, spec.vendor, spec.vendor),
                          {{"gpu", spec.name}, {"vendor", spec.vendor}}});
}

/// Stage 7: the caveats of one plan.
void warn(const PlanRequest& request, const AdmittedOffer& a, Plan& p) {
  const bool training = request.workload == PlanWorkload::training;
  const bool images = request.workload == PlanWorkload::image_generation;
  const Offer& offer = *a.offer;
  const GpuSpec* spec = a.spec;
  auto& w = p.warnings;
  const bool pcie = offer.intra_node_link == IntraNodeLink::pcie ||
                    (offer.intra_node_link == IntraNodeLink::unknown && !spec->has_gpu_link());
  if (pcie && offer.gpu_count > 1 && (p.layout.tp > 1 || (training && p.layout.dp * p.layout.pp >= 4))) {
    add_warning(w, PlanWarningCode::pcie_multi_gpu,
                fmt::format("{} GPUs talk over PCIe only: TP {} / DP {} traffic is slow there (estimated at PCIe speed)",
                            offer.gpu_count, p.layout.tp, p.layout.dp));
  }
  if (offer.intra_node_link == IntraNodeLink::unknown && offer.gpu_count > 1) {
    // The GPU's own link kind from the catalog (data/gpus.csv interconnect): trial 10c, an AMD
    // MI300X plan read "NVLink assumed" where its datasheet lists Infinity Fabric.
    add_warning(w, PlanWarningCode::link_assumed,
                fmt::format("intra-node link not listed: {} assumed from the GPU datasheet",
                            !spec->has_gpu_link()          ? std::string("PCIe")
                            : spec->interconnect.empty()   ? std::string("the GPU's own link")
                                                           : spec->interconnect));
  }
  if (p.instances > 1 && a.max_nodes_assumed) {
    add_warning(w, PlanWarningCode::max_nodes_assumed,
                fmt::format("the source does not say how many {} instances can be rented together: {} assumed",
                            offer.instance_type, p.instances));
  }
  // A billing minimum that dwarfs the run (trial52 #2: a quote with a 1-day minimum was plan #1 for
  // a 28-minute job at $403 against $5.66 without a word): the unused time is billed.
  if (!is_reserved(p.cost.price_kind) && p.billing.minimum_billed_seconds > 0 && p.cost.run_seconds > 0 &&
      p.billing.minimum_billed_seconds >= 2.0 * p.cost.run_seconds && p.cost.billed_seconds > 0) {
    const double ratio = p.cost.billed_seconds / p.cost.run_seconds;
    const double unused_usd = p.cost.compute_usd * (1.0 - p.cost.run_seconds / p.cost.billed_seconds);
    w.push_back(PlanWarning{
        PlanWarningCode::billing_minimum,
        fmt::format("the provider bills at least {:.1f} h per instance: the {:.1f} h run is billed {:.1f}× its length "
                    "(${:.2f} of the compute bill is time not used)",
                    p.billing.minimum_billed_seconds / 3600.0, p.cost.run_seconds / 3600.0, ratio, unused_usd),
        {{"minimum_hours", fmt::format("{:.1f}", p.billing.minimum_billed_seconds / 3600.0)},
         {"run_hours", fmt::format("{:.1f}", p.cost.run_seconds / 3600.0)},
         {"ratio", fmt::format("{:.1f}", ratio)},
         {"unused_usd", fmt::format("{:.2f}", unused_usd)}}});
  }
  if (p.cost.idle_instances > 0) {
    // Sold as a cluster of at least min_nodes (Offer::min_nodes): the idle instances are billed
    // like the others; their share of the compute bill (spot loss included) is what they cost.
    const int billed = p.cost.instances, idle = p.cost.idle_instances, used = billed - idle;
    const double idle_usd = (p.cost.compute_usd + p.cost.spot_loss_usd) * idle / static_cast<double>(billed);
    const long long idle_gpus = static_cast<long long>(idle) * p.gpus_per_instance;
    w.push_back(PlanWarning{
        PlanWarningCode::min_nodes_billed,
        fmt::format("{} is sold as at least {} instances: the job runs on {}, {} are billed ({} idle, {} GPUs, ${:.0f} "
                    "of the compute bill)",
                    offer.instance_type, billed, used, billed, idle, idle_gpus, idle_usd),
        {{"instance_type", offer.instance_type},
         {"min_nodes", fmt::format("{}", billed)},
         {"used_nodes", fmt::format("{}", used)},
         {"idle_nodes", fmt::format("{}", idle)},
         {"idle_gpus", fmt::format("{}", idle_gpus)},
         {"idle_usd", fmt::format("{:.0f}", idle_usd)}}});
  }
  if (p.instances > 1 && training && a.inter_assumed) {
    add_warning(w, PlanWarningCode::multi_node_network,
                fmt::format("{} speed not listed: {:.0f} Gb/s per node assumed",
                            inter_node_network_name(offer.inter_node_network), a.inter_bits / 1e9));
  }
  if (a.memory_mismatch) {
    add_warning(w, PlanWarningCode::memory_mismatch,
                fmt::format("offer lists {:.1f} GB per GPU, the {} datasheet {:.1f} GB: datasheet used",
                            *offer.gpu_memory_bytes / 1e9, spec->name, spec->memory_bytes / 1e9));
  }
  for (const QualityFlag& f : offer.flags) {
    if (questions_price(f))
      add_warning(w, PlanWarningCode::offer_flagged, fmt::format("data-quality flag {}: {}", f.rule, f.detail));
  }
  if (!offer.confirmed_available_at) {
    add_warning(w, PlanWarningCode::not_confirmed_available, "listed price, availability never confirmed");
  } else if (!confirmed_available(offer, request)) {
    // values: the pages' French and Thai sentence (warn_not_confirmed_available_old) fills them in.
    const std::string on = offer.confirmed_available_at->substr(0, 10);
    const long age = *confirmation_age_days(offer, request);
    w.push_back(PlanWarning{PlanWarningCode::not_confirmed_available,
                            fmt::format("availability last confirmed {}, {} days before --today (more than the {:.0f}-day "
                                        "--max-price-age)",
                                        on, age, request.stale_after_days),
                            {{"confirmed_at", on},
                             {"age_days", fmt::format("{}", age)},
                             {"max_price_age_days", fmt::format("{:.0f}", request.stale_after_days)}}});
  }
  if (!p.price_source.observed_at) {
    add_warning(w, PlanWarningCode::price_date_unknown, "the source gives no date for this price");
  } else if (p.price_age_days && *p.price_age_days < 0) {
    add_warning(w, PlanWarningCode::price_date_unknown,
                fmt::format("{} {}, after --today {}: no evidence of this price on that day",
                            p.price_last_seen_at && p.price_last_seen_at->substr(0, 10) != p.price_source.observed_at->substr(0, 10)
                                ? "last seen"
                                : "observed",
                            p.price_last_seen_at.value_or(*p.price_source.observed_at).substr(0, 10), request.today));
  } else if (!request.today.empty()) {
    auto stale = is_stale(offer, p.cost.price_kind, request.today, request.stale_after_days);
    if (stale && *stale) {
      add_warning(w, PlanWarningCode::stale_price,
                  p.price_age_days
                      ? fmt::format("price last seen {} is older than {:.0f} days ({} days old)",
                                    p.price_last_seen_at.value_or(*p.price_source.observed_at),
                                    request.stale_after_days, *p.price_age_days)
                      : fmt::format("price last seen {} is older than {:.0f} days",
                                    p.price_last_seen_at.value_or(*p.price_source.observed_at),
                                    request.stale_after_days));
    }
  }
  const double side = p.cost.storage_usd.value_or(0) + p.cost.egress_usd.value_or(0);
  if (p.total_usd() > 0 && side / p.total_usd() > 0.2) {
    add_warning(w, PlanWarningCode::egress_storage_share,
                fmt::format("storage and egress are {:.0f}% of the total", 100.0 * side / p.total_usd()));
  }
  const bool wants_bf16 =
      training ? (request.precision == TrainPrecision::bf16_mixed || request.precision == TrainPrecision::bf16_pure)
               : request.quant == WeightQuant::bf16;
  if (!p.math_fallback.empty()) {
    const Dtype used = p.math_fallback == "tf32" ? Dtype::tf32 : Dtype::fp32;
    add_warning(w, PlanWarningCode::fp32_math_fallback,
                fmt::format("{}: BF16/FP16 tensor-core rates unknown in the GPU catalog (`gpuplan gpus`); timed at its {} peak ({:.0f} "
                            "TFLOP/s), so time{} pessimistic",
                            spec->name, p.math_fallback == "tf32" ? "TF32" : "FP32",
                            spec->dense_flops(used).value_or(0) / 1e12,
                            p.serving ? ", TTFT and TPOT are" : " is"));
  }
  const bool batch_job_fewer_requests_than_replicas =
      p.serving && request.requests && std::ceil(*request.requests) < static_cast<double>(p.replicas);
  if (p.serving && (request.workload == PlanWorkload::serving || batch_job_fewer_requests_than_replicas)) {
    // Trial 9: serving an 8B model on 1 of 8 rented GPUs said nothing about the 7 others.
    // On a fixed cluster (--gpus / --nodes) every replica is placed, but the load may keep only a
    // few busy (trial50 #2: 2 users on 16 GPUs said nothing): count the replicas the load needs.
    const std::int64_t rented = static_cast<std::int64_t>(p.instances) * p.gpus_per_instance;
    // N users are spread over min(replicas, N) replicas (each timed at ceil(N / replicas)); a
    // request rate keeps ceil(rate / rate per replica) busy (trial51: 17 users on 16 replicas of
    // batch 2 were said to leave 7 GPUs idle, from 17 / 2 = 8.5 replicas' worth of capacity).
    // A batch job of fewer requests than the fixed cluster's replicas (trial54 #2: 1 request on
    // --nodes 2) keeps one replica per request busy.
    const double busy = request.concurrency ? static_cast<double>(*request.concurrency)
                        : batch_job_fewer_requests_than_replicas ? std::ceil(*request.requests)
                                                                 : detail::serving_replicas_busy(request, *p.serving, p.replicas);
    // An --rps load also keeps the replicas its queue wait needs (serving_replicas_needed): they
    // share the load, none is idle.
    const double needed = request.requests_per_s && !batch_job_fewer_requests_than_replicas
                              ? std::max(busy, static_cast<double>(detail::serving_replicas_needed(request, *p.serving)))
                              : busy;
    const std::int64_t busy_replicas =
        std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(needed - 1e-9)), 1, std::max<std::int64_t>(p.replicas, 1));
    const std::int64_t used = busy_replicas * p.layout.tp;
    if (used > 0 && used < rented) {
      w.push_back(PlanWarning{
          PlanWarningCode::idle_gpus,
          fmt::format("serves on {} of the {} GPUs rented ({} idle): {} replica{} of TP {} {} the load; an instance "
                      "with fewer GPUs costs less, or the idle ones add replicas for headroom",
                      used, rented, rented - used, busy_replicas, busy_replicas == 1 ? "" : "s", p.layout.tp,
                      busy_replicas == 1 ? "carries" : "carry"),
          {{"used_gpus", fmt::format("{}", used)},
           {"rented_gpus", fmt::format("{}", rented)},
           {"idle_gpus", fmt::format("{}", rented - used)},
           {"replicas", fmt::format("{}", busy_replicas)},
           {"tp", fmt::format("{}", p.layout.tp)}}});
    }
  }
  // FP8 weights on a GPU without FP8 tensor cores (trial46: no word on A100): weight-only W8A16,
  // as vLLM runs them (docs.vllm.ai features/quantization/fp8: "Turing/Ampere GPUs are supported
  // for W8A16 (weight-only FP8) utilizing Marlin kernels"; vllm-project/vllm#5975).
  if (p.serving && request.quant == WeightQuant::fp8 && spec && !spec->supports(Dtype::fp8)) {
    w.push_back(PlanWarning{PlanWarningCode::fp8_weight_only,
                            fmt::format("{} has no FP8 tensor cores: FP8 weights run weight-only (W8A16, vLLM's FP8 "
                                        "Marlin kernels): stored and read in 8 bits as modelled, multiplied in 16 bits "
                                        "and timed at the 16-bit peak",
                                        spec->name),
                            {{"gpu", spec->name}}});
  }
  if (training) add_time_uncalibrated(*spec, w);
  if (p.serving && !p.meets_latency_target) {
    add_warning(w, PlanWarningCode::latency_target_missed,
                fmt::format("TTFT {:.0f} ms{}{} {} batch {}{}: above the {} target ({}); not recommended",
                            p.serving->ttft_seconds * 1e3,
                            p.queue_wait_seconds && *p.queue_wait_seconds > detail::serving_queue_wait_budget_seconds(request, *p.serving)
                                ? fmt::format(" + a mean queue wait of {:.1f} s on {} replicas", *p.queue_wait_seconds, p.replicas)
                                : std::string(),
                            p.serving->tpot_defined ? fmt::format(" / TPOT {:.0f} ms", p.serving->tpot_seconds * 1e3) : std::string(),
                            p.batch_for_fixed_cluster || p.batch_smallest_for_load ? "at" : "even at", p.serving->batch,
                            p.batch_for_fixed_cluster ? " (the batch the fixed --gpus/--nodes cluster needs for the load)"
                            : p.batch_smallest_for_load
                                ? fmt::format(" (missed even at batch 1; the smallest batch that carries the load on {} "
                                              "replica{})",
                                              p.replicas, p.replicas == 1 ? "" : "s")
                                : std::string(),
                            request.ttft_seconds || request.tpot_seconds ? "given" : "default interactive",
                            latency_targets_text(request, ", ")));
  }
  if (wants_bf16 && !images && !spec->supports(Dtype::bf16) && p.math_fallback.empty()) {
    add_warning(w, PlanWarningCode::fp16_without_bf16,
                training ? fmt::format("{} has no BF16: training falls back to FP16 with loss scaling", spec->name)
                         : fmt::format("{} has no BF16: bf16 weights are served in FP16 (overflow risk for some models)",
                                       spec->name));
  }
  if (training && request.precision == TrainPrecision::fp16_mixed && spec->supports(Dtype::bf16)) {
    add_warning(w, PlanWarningCode::fp16_without_bf16, "FP16 chosen although the GPU supports BF16 (no loss scaling needed)");
  }
  if (!training && !images && !spec->is_hbm()) {
    add_warning(w, PlanWarningCode::gddr_serving,
                fmt::format("{} has {} memory ({:.0f} GB/s): decoding is bandwidth-bound", spec->name, spec->memory_type,
                            spec->memory_bandwidth_bytes_per_s / 1e9));
  }
  if (p.cost.price_kind == PriceKind::spot &&
      std::any_of(offer.flags.begin(), offer.flags.end(),
                  [](const QualityFlag& f) { return f.rule == import_rule::kMarketplaceBid; })) {
    // vast "interruptible": the price is the renter's bid (docs/freshness.md "Spot preemption rates").
    add_warning(w, PlanWarningCode::marketplace_bid,
                fmt::format("the spot price ${:.2f}/h is a marketplace bid: anyone bidding more (or an on-demand renter) "
                            "takes the machine, so it can be outbid and stopped at any time; no preemption rate is published",
                            p.cost.usd_per_hour));
  }
  if (p.cost.price_kind == PriceKind::spot) {
    for (const auto& alt : p.alternatives) {
      if (alt.price_kind == PriceKind::on_demand && alt.total_usd() < p.total_usd()) {
        add_warning(w, PlanWarningCode::spot_not_cheaper, "on-demand is cheaper after expected preemption losses");
      }
    }
  } else if (p.cost.price_kind == PriceKind::on_demand && !(request.budget_usd && !request.deadline_seconds)) {
    for (const auto& alt : p.alternatives) {
      if (alt.price_kind == PriceKind::spot && alt.usd_per_hour < p.cost.usd_per_hour) {
        add_warning(w, PlanWarningCode::spot_not_cheaper,
                    fmt::format("spot is cheaper per hour (${:.2f} vs ${:.2f}) but not after expected preemption losses",
                                alt.usd_per_hour, p.cost.usd_per_hour));
      }
    }
  }
  if (is_reserved(p.cost.price_kind)) {
    add_warning(w, PlanWarningCode::reserved_commitment,
                fmt::format("{} price: the whole term is billed ({:.0f} days)", price_kind_name(p.cost.price_kind),
                            p.cost.billed_seconds / kSecondsPerDay));
  }
  if (!p.billing.assumptions.empty()) {
    std::string all;
    for (const auto& x : p.billing.assumptions) all += (all.empty() ? "" : "; ") + x;
    add_warning(w, PlanWarningCode::billing_assumption, all);
  }
  if (training && p.global_batch_seqs != p.requested_global_batch_seqs) {
    add_warning(w, PlanWarningCode::batch_adjusted,
                fmt::format("global batch {} sequences (asked {}): a multiple of DP {} × micro-batch {}, as Megatron-LM "
                            "and DeepSpeed require",
                            p.global_batch_seqs, p.requested_global_batch_seqs, p.layout.dp, p.layout.micro_batch));
  }
  // Training, batch and image jobs end when their work is done; a service runs as long as
  // asked (--hours), so its length is no warning (trial50 #3: 1e13 requests ran 22,871 days silently).
  if (request.workload != PlanWorkload::serving && p.time_seconds() > kLongRunSeconds) {
    // Only a remedy that can shorten it (trial51: a batch job at the instance limit was told
    // "--max-nodes" and "--deadline", which gives no plan). A batch job splits over independent
    // instances up to the 1024 --max-nodes allows; an image job runs on one instance unless
    // --nodes fixes more; past the limit only less work shortens it.
    std::string remedy;
    const bool at_gpu_ceiling =
        request.max_gpus && (p.instances + 1) * static_cast<long long>(p.gpus_per_instance) > *request.max_gpus;
    if (at_gpu_ceiling) {  // trial53 #3: "more instances" under a --max-gpus that forbids them
      remedy = fmt::format("--max-gpus {} allows no more GPUs: raise it, or lighten the job", *request.max_gpus);
    } else if (training) {
      remedy = "more nodes (--max-nodes, --nodes) or --deadline shorten it";
    } else if (request.workload == PlanWorkload::image_generation) {
      remedy = p.instances < 1024 ? "a fixed cluster of more instances (--nodes) shortens it, an image per GPU on each"
                                  : "at the 1024-instance limit: split the job or render fewer images";
    } else if (p.instances < 1024) {
      remedy = p.instances >= request.max_nodes
                   ? fmt::format("more instances shorten it ({} now; --max-nodes, up to 1024)", p.instances)
                   : fmt::format("more instances shorten it ({} now; plans with more are planned up to --max-nodes {})",
                                 p.instances, request.max_nodes);
    } else {
      remedy = "at the 1024-instance limit: split the job, or lighten it (fewer requests or output tokens, lighter "
               "weights with --quant)";
    }
    add_warning(w, PlanWarningCode::long_run,
                fmt::format("runs {:.0f} days: {}", p.time_seconds() / kSecondsPerDay, remedy));
  }
  if (p.goodput && p.goodput->goodput < 0.9) {
    add_warning(w, PlanWarningCode::low_goodput,
                fmt::format("goodput {:.0f}%: {:.1f} expected failures, checkpoints every {:.0f} min", p.goodput->goodput * 100,
                            p.goodput->expected_failures, p.goodput->interval_seconds / 60));
  }
}

/// Searches one cluster, cached by the GPU configuration many offers share.
/// The best of a memo entry's candidates for `tokens`: what search_training returns for them
/// (the first of the shortest runs, work = ceil(tokens / tokens per step) × step time).
SearchOutcome pick_candidate(const TrainingMemoEntry& e, double tokens, double tolerance) {
  SearchOutcome o;
  o.smallest_per_gpu_bytes = e.smallest_per_gpu_bytes;
  o.smallest_layout = e.smallest_layout;
  o.smallest_recompute = e.smallest_recompute;
  o.smallest_recompute_modules = e.smallest_recompute_modules;
  double best_score = kInf;
  for (const MemoCandidate& c : e.candidates) {
    const double steps = std::ceil(tokens / c.tokens_per_step);
    const double work = steps * c.step.step_seconds;
    if (const double score = work * layout_preference(c.layout, tolerance); score < best_score) {
      best_score = score;
      o.fits = true;
      o.layout = c.layout;
      o.recompute = c.recompute;
      o.recompute_modules = c.recompute_modules;
      o.per_gpu_bytes = c.per_gpu_bytes;
      o.step = c.step;
      o.work_seconds = work;
      o.global_batch_seqs = c.global_batch_seqs;
      o.steps = steps;
    }
  }
  return o;
}

/// A TP above the model's KV heads exists on this node and no pin rules it out (search_cluster).
bool kv_replication_possible(const SearchContext& ctx, const ClusterKey& key) {
  return !ctx.r.pins.tp && !ctx.arch.mla && ctx.arch.num_kv_heads > 0 && key.gpus_per_node > ctx.arch.num_kv_heads;
}

}  // namespace

/// SearchMemo (planner.hpp): physics key → cluster → entry, under one mutex.
struct SearchMemo::Impl {
  std::mutex mutex;
  std::unordered_map<std::string, std::unordered_map<ClusterKey, std::shared_ptr<const TrainingMemoEntry>, ClusterKeyHash>>
      by_key;
  std::size_t entries = 0;
  std::size_t max_entries = 0;
  std::atomic<std::size_t> hits{0};

  std::shared_ptr<const TrainingMemoEntry> find(const std::string& k, const ClusterKey& c) {
    std::lock_guard lock(mutex);
    auto a = by_key.find(k);
    if (a == by_key.end()) return nullptr;
    auto b = a->second.find(c);
    if (b == a->second.end()) return nullptr;
    hits.fetch_add(1, std::memory_order_relaxed);
    return b->second;
  }
  void insert(const std::string& k, const ClusterKey& c, std::shared_ptr<const TrainingMemoEntry> e) {
    std::lock_guard lock(mutex);
    if (entries >= max_entries) {  // bounded: start over (the entries are rebuilt on use)
      by_key.clear();
      entries = 0;
    }
    if (by_key[k].emplace(c, std::move(e)).second) ++entries;
  }
};

SearchMemo::SearchMemo(std::size_t max_entries) : impl_(std::make_unique<Impl>()) {
  impl_->max_entries = std::max<std::size_t>(1, max_entries);
}
SearchMemo::~SearchMemo() = default;
std::size_t SearchMemo::size() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->entries;
}
std::size_t SearchMemo::hits() const { return impl_->hits.load(); }

namespace {

/// search_cluster's training search through the memo: the entry of (physics key, cluster), built
/// on a miss by search_training in collect mode (then again with KV replication when nothing
/// fits, as search_cluster does), its reports replayed into the plan's context as the search
/// would have made them, and its best candidate for this plan's tokens.
SearchOutcome memo_search_training(SearchContext& ctx, const ClusterKey& key) {
  SearchMemo::Impl& memo = ctx.memo->impl();
  std::shared_ptr<const TrainingMemoEntry> e = memo.find(*ctx.memo_key, key);
  if (!e) {
    // The search's reports go to the entry, not to this plan's context (replayed below).
    const std::size_t evaluated = ctx.layouts_evaluated;
    const std::int64_t dp_over_batch = ctx.smallest_dp_over_batch;
    std::optional<std::string> problem = std::move(ctx.first_layout_problem);
    ctx.first_layout_problem.reset();
    auto collect = [&](bool kv_replication, TrainingMemoEntry& out) {
      ctx.layouts_evaluated = 0;
      ctx.smallest_dp_over_batch = 0;
      ctx.allow_kv_replication = kv_replication;
      search_training(ctx, key, &out);
      out.layouts_evaluated = ctx.layouts_evaluated;
      out.smallest_dp_over_batch = ctx.smallest_dp_over_batch;
    };
    auto fresh = std::make_shared<TrainingMemoEntry>();
    collect(false, *fresh);
    if (!fresh->fits() && kv_replication_possible(ctx, key)) {
      auto second = std::make_shared<TrainingMemoEntry>();
      collect(true, *second);
      second->layouts_evaluated += fresh->layouts_evaluated;
      if (fresh->smallest_dp_over_batch > 0 &&
          (second->smallest_dp_over_batch == 0 || fresh->smallest_dp_over_batch < second->smallest_dp_over_batch))
        second->smallest_dp_over_batch = fresh->smallest_dp_over_batch;
      if (fresh->first_problem) second->first_problem = std::move(fresh->first_problem);
      fresh = std::move(second);
    }
    ctx.layouts_evaluated = evaluated;
    ctx.smallest_dp_over_batch = dp_over_batch;
    ctx.first_layout_problem = std::move(problem);
    memo.insert(*ctx.memo_key, key, fresh);
    e = std::move(fresh);
  }
  ctx.layouts_evaluated += e->layouts_evaluated;
  if (e->smallest_dp_over_batch > 0 &&
      (ctx.smallest_dp_over_batch == 0 || e->smallest_dp_over_batch < ctx.smallest_dp_over_batch))
    ctx.smallest_dp_over_batch = e->smallest_dp_over_batch;
  if (!ctx.first_layout_problem && e->first_problem) ctx.first_layout_problem = e->first_problem;
  return pick_candidate(*e, ctx.tokens, ctx.r.time_tie_tolerance);
}

const SearchOutcome& search_cluster(SearchContext& ctx, ClusterOutcomes& cache, const ClusterKey& key) {
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  SearchOutcome o;
  switch (ctx.r.workload) {
    case PlanWorkload::training:
      if (ctx.memo) {
        o = memo_search_training(ctx, key);
        break;
      }
      // TP above the model's KV heads replicates each KV head on tp / kv GPUs (vLLM, Megatron
      // num_query_groups), which the memory and step-time models do not count: such layouts are
      // searched only when no other layout of the cluster fits (and then carry a
      // kv_heads_replicated warning).
      ctx.allow_kv_replication = false;
      o = search_training(ctx, key);
      if (!o.fits && kv_replication_possible(ctx, key)) {
        ctx.allow_kv_replication = true;
        o = search_training(ctx, key);
      }
      break;
    case PlanWorkload::image_generation:
      o = search_images(ctx.r, ctx.arch, key, ctx.assumptions, ctx.layouts_evaluated);
      break;
    default:
      o = search_serving(ctx.r, ctx.arch, key, ctx.assumptions, ctx.layouts_evaluated, ctx.first_layout_problem, ctx);
      break;
  }
  return cache.emplace(key, o).first->second;
}

/// The nodes the layout search runs on: training's whole cluster; an inference search sizes one
/// instance (its replicas are independent), whatever the number of instances.
int searched_nodes(const PlanRequest& r, int nodes) { return r.workload == PlanWorkload::training ? nodes : 1; }

ClusterKey key_for(const AdmittedOffer& a, int nodes) {
  ClusterKey key;
  key.gpu = a.spec;
  key.gpus_per_node = a.offer->gpu_count;
  key.nodes = nodes;
  key.link = a.offer->intra_node_link;
  key.intra_bytes_per_s = a.offer->intra_node_link_bytes_per_s ? *a.offer->intra_node_link_bytes_per_s / 2.0 : 0;
  key.inter_bytes_per_s = nodes > 1 ? a.inter_bits / 8.0 : 0;
  key.capacity_bytes = a.capacity_bytes;
  return key;
}

/// --ep-overlap (Megatron-Core overlap_moe_expert_parallel_comm) with pins Megatron-Core refuses:
/// a one-line error, exit 2, rather than a plan that would not start. The rules are the asserts of
/// transformer_config.py __post_init__ and pipeline_parallel/combined_1f1b.py at Megatron-LM
/// fc965dafd2 (2026-08-22): no full recompute; bf16 or fp16 weights; at pp > 1 a virtual pipeline
/// (arguments.py makes a VP of 1 none); with Megatron-FSDP (ZeRO-3) no interleaving, hence pp 1;
/// EP above 1 (LoRA/QLoRA plans run EP 1). Throws Error{invalid_input} with one code per rule
/// (ep_overlap_other_stack, _lora, _full_recompute, _needs_16bit, _needs_virtual_stages,
/// _fsdp_interleaved; field: the pin in the way).
void check_ep_overlap_runs(const PlanRequest& request, const ModelArch& arch) {
  if (!request.ep_overlap || !arch.moe) return;
  // One code per Megatron-Core rule (trial45 D4: the page showed one generic sentence for all).
  const auto refuse = [](const char* field, const char* code, const std::string& message, const std::string& expected) {
    throw_invalid_coded(field, code, {{"field", field}}, message, expected);
  };
  if (request.stack && *request.stack != TrainingStack::megatron)
    refuse("--stack", "ep_overlap_other_stack",
           fmt::format("--ep-overlap sets Megatron-Core's overlap_moe_expert_parallel_comm; --stack {} is another stack",
                       training_stack_name(*request.stack)),
           "--stack megatron, no --stack, or no --ep-overlap");
  if (request.task == Task::lora || request.task == Task::qlora)
    refuse("--task", "ep_overlap_lora", "--ep-overlap applies to expert parallelism; LoRA and QLoRA plans run EP 1",
           "no --ep-overlap, or --task full or pretrain");
  if (request.pins.recompute && *request.pins.recompute == Recompute::full)
    refuse("--recompute", "ep_overlap_full_recompute",
           "--recompute full cannot run with --ep-overlap (Megatron-Core: disable full recomputation when enabling "
           "overlap_moe_expert_parallel_comm)",
           "--recompute none or selective, or no --ep-overlap");
  if (request.precision == TrainPrecision::fp32 || request.precision == TrainPrecision::tf32)
    refuse("--precision", "ep_overlap_needs_16bit",
           fmt::format("--precision {} cannot run with --ep-overlap (Megatron-Core: only supported with a bf16 or fp16 "
                       "model)",
                       train_precision_name(request.precision)),
           "--precision bf16, fp16 or fp8, or no --ep-overlap");
  const bool zero3 = request.pins.zero_stage && *request.pins.zero_stage == 3;
  if (zero3 && request.pins.virtual_stages && *request.pins.virtual_stages > 1)
    refuse("--zero", "ep_overlap_fsdp_interleaved",
           "--zero 3 (Megatron-FSDP under Megatron-Core) with --ep-overlap does not interleave (Megatron-Core: EP "
           "overlap 1F1B with FSDP is not supported for interleaved pipeline parallelism)",
           "--virtual-stages 1 and --pp 1, or --zero 1 or 2, or no --ep-overlap");
  if (!request.pins.pp || *request.pins.pp <= 1) return;
  const int pp = *request.pins.pp;
  if (zero3)
    refuse("--zero", "ep_overlap_fsdp_interleaved",
           fmt::format("--zero 3 (Megatron-FSDP under Megatron-Core) with --ep-overlap runs at pp 1 only: pp {} needs "
                       "virtual stages, which Megatron-Core does not run with FSDP and EP overlap",
                       pp),
           "--pp 1, or --zero 1 or 2, or no --ep-overlap");
  if (request.pins.virtual_stages && *request.pins.virtual_stages <= 1)
    refuse("--virtual-stages", "ep_overlap_needs_virtual_stages",
           fmt::format("--ep-overlap at pp {} needs 2 or more virtual stages (Megatron-Core asserts a virtual pipeline "
                       "when pipeline_model_parallel_size > 1)",
                       pp),
           "--virtual-stages 2 or more that split each stage's layers, or --pp 1, or no --ep-overlap");
  // The VPs the search would try at this pinned PP (with the overlap: v ≥ 2 only); none: refused.
  if (!request.pins.virtual_stages && vp_candidates(arch, request, pp).empty())
      refuse("--pp", "ep_overlap_needs_virtual_stages",
             request.pipeline_stage_layers.empty()
                 ? fmt::format("--ep-overlap at pp {} needs 2 or more virtual stages (Megatron-Core) and none splits the "
                               "{} layers of {} into whole chunks",
                               pp, arch.num_layers, arch.name)
                 : fmt::format("--ep-overlap at pp {} needs 2 or more virtual stages (Megatron-Core) and none divides "
                               "every count of --pp-layers",
                               pp),
             request.pipeline_stage_layers.empty()
                 ? "a pp that leaves an even split of the layers (+ 1 or 2 for the embedding and the loss), --pp 1, "
                   "--pp-layers with --virtual-stages N (Megatron-Core's pipeline layout), or no --ep-overlap"
                 : "--virtual-stages N to take --pp-layers as Megatron-Core's pipeline layout, counts a v of 2 or more "
                   "divides, --pp 1, or no --ep-overlap");
}

/// The does-not-fit reason's note when --ep-overlap kept full recompute out of the search (trial44
/// D5); "" otherwise.
std::string ep_overlap_fit_note(const PlanRequest& r) {
  return r.ep_overlap && !r.pins.recompute
             ? "; --ep-overlap leaves full recompute out (Megatron-Core refuses the two together)"
             : "";
}

void check_request_for_model(const PlanRequest& request, const ModelArch& arch) {
  const bool images = request.workload == PlanWorkload::image_generation;
  if (images && !arch.diffusion) {
    throw_invalid_coded("--model", "not_diffusion_model", {{"model", arch.name}},
                        fmt::format("{} is not a diffusion model", arch.name),
                        "a diffusion model (SDXL UNet or FLUX transformer) for image generation");
  }
  if (!images && arch.family != ModelFamily::decoder) {
    // What it is, not "not a decoder" (trial48: Mamba is a causal decoder, just not a transformer).
    throw_invalid_coded("--model", "not_decoder_model", {{"model", arch.name}},
                        fmt::format("{} is {}: gpuplan times transformer decoder LLMs only (size sizes its memory)", arch.name,
                                    family_description(arch.family)),
                        "a transformer decoder LLM for training, serving and batch generation");
  }
  if (request.workload != PlanWorkload::training) {
    // The serving (and image) sizing request, once: the searches then check only the layout.
    serving_memory_request(request, 1, 1).validate();
  }
  if (!images) {
    // TP pins the model cannot take at any cluster size, in training and in serving (an engine
    // shards attention heads over TP ranks, e.g. vLLM requires heads % tp == 0): a one-line error
    // rather than "no plan".
    if (request.pins.tp && arch.num_attention_heads > 0 && arch.num_attention_heads % *request.pins.tp != 0) {
      throw_invalid_coded("--tp", "tp_not_dividing_heads",
                          {{"tp", fmt::format("{}", *request.pins.tp)}, {"heads", fmt::format("{}", arch.num_attention_heads)},
                           {"model", arch.name}},
                          fmt::format("tp {} does not divide the {} attention heads of {}", *request.pins.tp,
                                      arch.num_attention_heads, arch.name),
                          fmt::format("a divisor of {}", arch.num_attention_heads));
    }
    if (request.pins.tp) {
      if (auto why = kv_split_problem(arch, *request.pins.tp)) {
        throw_invalid_coded("--tp", "tp_kv_heads_mismatch",
                            {{"tp", fmt::format("{}", *request.pins.tp)}, {"kv_heads", fmt::format("{}", arch.num_kv_heads)},
                             {"model", arch.name}},
                            fmt::format("tp {} and the {} KV heads of {} neither divide each other", *request.pins.tp,
                                        arch.num_kv_heads, arch.name),
                            fmt::format("a divisor or a multiple of {}", arch.num_kv_heads));
      }
    }
  }
  if (request.workload == PlanWorkload::training) {
    ParallelLayout l;
    detail::training_memory_request(request, l, Recompute::none, request.recompute_modules).validate();
    if (request.pins.pp && *request.pins.pp > arch.num_layers) {
      throw_invalid_coded("--pp", "pp_exceeds_layers",
                          {{"pp", fmt::format("{}", *request.pins.pp)}, {"layers", fmt::format("{}", arch.num_layers)},
                           {"model", arch.name}},
                          fmt::format("pp {} exceeds the {} layers of {}", *request.pins.pp, arch.num_layers, arch.name),
                          fmt::format("at most {}", arch.num_layers));
    }
    // A pinned VP must split each pinned stage into whole chunks (trial43 D2, D3).
    if (request.pins.virtual_stages && *request.pins.virtual_stages > 1 && request.pins.pp &&
        !data_parallel_only(request.stack)) {
      // (--pp-layers: Megatron-Core's pipeline layout gives each virtual stage its own count.)
      const int v = *request.pins.virtual_stages, pp = *request.pins.pp;
      if (pp <= 1)
        throw_invalid_coded("--virtual-stages", "virtual_stages_need_pp", {{"virtual_stages", fmt::format("{}", v)}},
                            fmt::format("{} virtual stages interleave pipeline stages: they need --pp 2 or more", v),
                            "--pp 2 or more, or --virtual-stages 1");
      if (request.pipeline_stage_layers.empty() && !virtual_stages_split_layers(arch, request, pp, v)) {
        const std::string layers = arch.num_layers % pp == 0 ? fmt::format("{}", arch.num_layers / pp)
                                                             : fmt::format("{}/{}", arch.num_layers, pp);
        throw_invalid_coded("--virtual-stages", "virtual_stages_not_dividing_layers",
                            {{"virtual_stages", fmt::format("{}", v)}, {"layers", layers}, {"model", arch.name}},
                            fmt::format("{} virtual stages do not split the layers of each pipeline stage of {} ({}) into "
                                        "whole chunks",
                                        v, arch.name, layers),
                            "a divisor of every stage's layers (Megatron-LM; the embedding and the loss may count as "
                            "layers), the layers a multiple of --pp");
      }
    }
    check_ep_overlap_runs(request, arch);
    if (!request.pipeline_stage_layers.empty()) {
      std::int64_t sum = 0;
      for (int n : request.pipeline_stage_layers) sum += n;
      if (sum != arch.num_layers)
        throw_invalid_coded("--pp-layers", "pp_layers_sum",
                            {{"sum", fmt::format("{}", sum)}, {"layers", fmt::format("{}", arch.num_layers)},
                             {"model", arch.name}},
                            fmt::format("the pipeline ranks hold {} layers; {} has {}", sum, arch.name, arch.num_layers),
                            fmt::format("{} layer counts summing to {}", request.pipeline_stage_layers.size(), arch.num_layers));
    }
    if (request.tp_comm_overlap && (arch.moe || arch.mla || arch.parallel_attention || arch.ssm ||
                                    arch.intermediate_size <= 0 || (request.pins.tp && *request.pins.tp < 2))) {
      throw_invalid_coded("--tp-comm-overlap", "tp_comm_overlap_unsupported", {{"model", arch.name}},
                          fmt::format("TP communication overlap is modelled for dense decoders with TP above 1 only ({})",
                                      arch.name),
                          "a dense MHA/GQA decoder and --tp 2 or more");
    }
    // A Megatron QLoRA plan is a layout nobody runs (sizing/memory.hpp check_stack_runs_task).
    if (request.stack) check_stack_runs_task(*request.stack, request.task);
    // A stack that shards by data parallelism only cannot run a pinned TP, PP or EP, nor the
    // Megatron-Core overlap switches (data_parallel_only).
    if (data_parallel_only(request.stack)) {
      const char* f = request.pins.tp && *request.pins.tp > 1   ? "--tp"
                      : request.pins.pp && *request.pins.pp > 1 ? "--pp"
                      : request.pins.ep && *request.pins.ep > 1 ? "--ep"
                      : request.pins.virtual_stages && *request.pins.virtual_stages > 1 ? "--virtual-stages"
                      : request.tp_comm_overlap                  ? "--tp-comm-overlap"
                      : request.ep_overlap                       ? "--ep-overlap"
                      : request.moe_dispatcher                   ? "--moe-dispatcher"
                                                                 : nullptr;
      if (f != nullptr) {
        const std::string stack(training_stack_name(*request.stack));
        throw_invalid_coded(f, "stack_layout_unsupported", {{"field", f}, {"stack", stack}},
                            fmt::format("--stack {} runs data parallelism (ZeRO/FSDP) only: no {}", stack, f),
                            fmt::format("--stack megatron or fsdp for {}, or no {}", f, f));
      }
    }
    // The MoE recipe switches change nothing on a dense model: refused, not ignored (trial37 D9).
    if (!arch.moe && (request.ep_overlap || request.moe_load_imbalance || request.moe_dispatcher)) {
      const char* f = request.ep_overlap ? "--ep-overlap" : request.moe_load_imbalance ? "--moe-imbalance" : "--moe-dispatcher";
      throw_invalid_coded(f, "moe_option_on_dense_model", {{"field", f}, {"model", arch.name}},
                          fmt::format("{} applies to mixture-of-experts models; {} is dense", f, arch.name),
                          fmt::format("no {}", f));
    }
    // A recompute module the model has no place for changes nothing: refused, not ignored.
    check_recompute_modules_apply(arch, request.recompute_modules, "--recompute-modules");
    // The EP switches with a pinned EP of 1 change nothing: refused, not ignored.
    if (arch.moe && request.pins.ep && *request.pins.ep == 1 && (request.ep_overlap || request.moe_dispatcher)) {
      const char* f = request.ep_overlap ? "--ep-overlap" : "--moe-dispatcher";
      throw_invalid_coded(f, "ep_option_without_ep", {{"field", f}},
                          fmt::format("{} applies to expert parallelism; --ep 1 has none", f),
                          fmt::format("--ep 2 or more, or no {}", f));
    }
    // Any pinned expert TP on a dense model (trial45 D1: --expert-tp 1 was taken and shown as ETP1).
    if (request.pins.expert_tp && !arch.moe)
      throw_invalid_coded("--expert-tp", "expert_tp_on_dense_model",
                          {{"etp", fmt::format("{}", *request.pins.expert_tp)}, {"model", arch.name}},
                          fmt::format("expert-tp {} on a dense model ({})", *request.pins.expert_tp, arch.name), "no --expert-tp");
    // LoRA/QLoRA plans run EP 1: an expert TP pin changes nothing there (trial45 D2).
    if (request.pins.expert_tp && arch.moe && (request.task == Task::lora || request.task == Task::qlora))
      throw_invalid_coded("--expert-tp", "ep_option_without_ep", {{"field", "--expert-tp"}},
                          "--expert-tp applies to expert parallelism; LoRA and QLoRA plans run EP 1",
                          "no --expert-tp, or --task full or pretrain");
    if (request.pins.ep && *request.pins.ep > 1) {
      if (!arch.moe)
        throw_invalid_coded("--ep", "ep_on_dense_model", {{"ep", fmt::format("{}", *request.pins.ep)}, {"model", arch.name}},
                            fmt::format("ep {} on a dense model ({})", *request.pins.ep, arch.name), "--ep 1");
      if (arch.moe->num_routed_experts % *request.pins.ep != 0) {
        throw_invalid_coded("--ep", "ep_not_dividing_experts",
                            {{"ep", fmt::format("{}", *request.pins.ep)}, {"experts", fmt::format("{}", arch.moe->num_routed_experts)}},
                            fmt::format("ep {} does not divide the {} experts", *request.pins.ep, arch.moe->num_routed_experts),
                            fmt::format("a divisor of {}", arch.moe->num_routed_experts));
      }
    }
  }
}

// ---- Stage 6: constraints and ranking ------------------------------------------------------

template <typename P>  // Plan or Candidate
bool meets(const PlanRequest& r, const P& p) {
  if (r.deadline_seconds && p.time_seconds() > *r.deadline_seconds) return false;
  if (r.budget_usd && p.total_usd() > *r.budget_usd) return false;
  return true;
}

/// The plan the time ranking puts first among `idx` (non-empty): start at the fastest (equal
/// times: the cheaper), then, while a cheaper plan goes first by cheaper_goes_first, move to the
/// fastest such plan. The cost falls at every move, so this ends. `at(i)` gives the i-th plan.
template <typename At>
std::size_t first_by_time(const PlanRequest& r, const std::vector<std::size_t>& idx, At at) {
  std::size_t best = idx.front();
  for (std::size_t i : idx) {
    const auto& p = at(i);
    const auto& b = at(best);
    if (p.time_seconds() < b.time_seconds() || (p.time_seconds() == b.time_seconds() && p.total_usd() < b.total_usd()))
      best = i;
  }
  for (;;) {
    std::size_t next = std::string::npos;
    const auto& b = at(best);
    for (std::size_t i : idx) {
      const auto& p = at(i);
      if (!cheaper_goes_first(r, p.time_seconds(), p.total_usd(), b.time_seconds(), b.total_usd())) continue;
      if (next == std::string::npos || p.time_seconds() < at(next).time_seconds() ||
          (p.time_seconds() == at(next).time_seconds() && p.total_usd() < at(next).total_usd()))
        next = i;
    }
    if (next == std::string::npos) return best;
    best = next;
  }
}

/// The cheapest-first rules' pick among `idx` (non-empty; --deadline, --sort cost): the cheapest
/// plan, except that plans costing at most cost_tie_tolerance (1%) more than it tie with it and
/// the fastest of them wins (equal times: the cheaper, then the first). `at(i)` gives the i-th plan.
template <typename At>
std::size_t cheapest_with_cost_ties(const PlanRequest& r, const std::vector<std::size_t>& idx, At at) {
  double cheapest = kInf;
  for (std::size_t i : idx) cheapest = std::min(cheapest, at(i).total_usd());
  const double tied = cheapest * (1.0 + r.cost_tie_tolerance);
  std::size_t best = std::string::npos;
  for (std::size_t i : idx) {
    const auto& p = at(i);
    if (p.total_usd() > tied) continue;
    if (best == std::string::npos || p.time_seconds() < at(best).time_seconds() ||
        (p.time_seconds() == at(best).time_seconds() && p.total_usd() < at(best).total_usd()))
      best = i;
  }
  return best;
}

/// Availability tiebreak (docs/planner.md "Availability"): when the rule picked `best`, a plan on
/// an offer never confirmed available, the cheapest plan of `idx` on a confirmed offer that costs
/// at most cost_tie_tolerance (1%) more and takes at most time_tie_tolerance (2%) longer is
/// picked instead (the offers tie on the ranking; one is known to be rentable). Else `best`.
template <typename At>
std::size_t prefer_confirmed(const PlanRequest& r, const std::vector<std::size_t>& idx, std::size_t best, At at) {
  const auto& b = at(best);
  if (b.availability_confirmed) return best;
  std::size_t pick = best;
  for (std::size_t i : idx) {
    const auto& p = at(i);
    if (!p.availability_confirmed) continue;
    if (p.total_usd() > b.total_usd() * (1.0 + r.cost_tie_tolerance)) continue;
    if (p.time_seconds() > b.time_seconds() * (1.0 + r.time_tie_tolerance)) continue;
    if (pick == best || p.total_usd() < at(pick).total_usd() ||
        (p.total_usd() == at(pick).total_usd() && p.time_seconds() < at(pick).time_seconds()))
      pick = i;
  }
  return pick;
}

/// Orders plans [b, e) (sorted by time, equal times by cost) for the time ranking
/// (docs/planner.md "Time ranking"). The pairwise rule (cheaper_goes_first) is not transitive
/// (a 2% tie chains: A ties B, B ties C, A does not tie C), so "the fastest plan the rule lets
/// go first" picked position by position could put a plan above one that the rule puts ahead of
/// it (trial: 21.5 h at $1,480 listed above 59 min at $4,108). Instead the plans are inserted
/// fastest first, each right after the last plan already placed that it does not go ahead of.
/// The result is one list (a total order) in which
///   * every adjacent pair obeys the rule: the upper plan is faster (or equal) and the lower one
///     does not go ahead of it, or the upper plan is cheaper and goes ahead by the rule;
///   * a slower plan stands above a faster one only when the rule puts it ahead of that plan.
/// O(n²) comparisons at worst, each a few flops. (Pointers: a Plan is large to move.)
void order_by_time(std::vector<Plan*>& plans, std::size_t b, std::size_t e, const PlanRequest& r) {
  std::vector<Plan*> out;
  out.reserve(e - b);
  for (std::size_t k = b; k < e; ++k) {
    const Plan& x = *plans[k];
    std::size_t pos = out.size();
    // Every placed plan is no slower than x: x goes above it only when the rule puts x ahead.
    while (pos > 0 && cheaper_goes_first(r, x.time_seconds(), x.total_usd(), out[pos - 1]->time_seconds(),
                                         out[pos - 1]->total_usd())) {
      --pos;
    }
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(pos), plans[k]);
  }
  std::copy(out.begin(), out.end(), plans.begin() + static_cast<std::ptrdiff_t>(b));
}

/// Recommendation rule (no deadline, no budget; docs/planner.md): among the plans that finish
/// within the horizon (30 days by default), the fastest plan on their cost/time Pareto front
/// whose total is at most (1 + premium) × the cheapest of them (of those whose times tie with that
/// fastest one's within time_tie_tolerance, the cheapest); when none finishes within the
/// horizon, the first plan of the time ranking (first_by_time). Index or npos.
template <typename Plans>  // std::vector<Plan> or std::vector<Candidate>
std::size_t recommend_index(const Plans& plans, const PlanRequest& r, const std::vector<std::size_t>& among) {
  if (among.empty()) return std::string::npos;
  std::vector<std::size_t> within;
  for (std::size_t i : among) {
    if (plans[i].time_seconds() <= r.recommend_horizon_seconds) within.push_back(i);
  }
  if (within.empty()) {
    return first_by_time(r, among, [&](std::size_t i) -> const auto& { return plans[i]; });
  }
  std::vector<CostTimePoint> pts;
  pts.reserve(within.size());
  for (std::size_t i : within) pts.push_back({plans[i].total_usd(), plans[i].time_seconds()});
  double cheapest = kInf;
  for (const auto& pt : pts) cheapest = std::min(cheapest, pt.cost_usd);
  std::vector<std::size_t> eligible;  // front points within the cost premium (indices into pts)
  std::size_t fastest = std::string::npos;
  for (std::size_t k : pareto_front_indices(pts)) {
    if (pts[k].cost_usd > cheapest * (1.0 + r.recommend_max_cost_premium)) continue;
    eligible.push_back(k);
    if (fastest == std::string::npos || pts[k].time_seconds < pts[fastest].time_seconds ||
        (pts[k].time_seconds == pts[fastest].time_seconds && pts[k].cost_usd < pts[fastest].cost_usd)) {
      fastest = k;
    }
  }
  if (fastest == std::string::npos) return std::string::npos;
  // A speed-up within the time ranking's tie tolerance is no speed-up: of the eligible plans whose
  // time ties with the fastest's (time_tie_tolerance, as --sort time), the cheapest is recommended
  // (trial 7: 8×B300 at $1,574 was recommended over 8×B200 at $1,259 for a run 3.3 s shorter in 11 h).
  std::size_t best = fastest;
  for (std::size_t k : eligible) {
    if (pts[k].time_seconds - pts[fastest].time_seconds > r.time_tie_tolerance * pts[fastest].time_seconds) continue;
    if (pts[k].cost_usd < pts[best].cost_usd) best = k;
  }
  return within[best];
}

/// The time a plan takes before spot loss: the steady-state work stretched by goodput (failures,
/// checkpoints, evaluation), without the spot term (checkpoints, lost work and restarts after
/// preemptions, cost.spot). Equal for the same job on the same instance, nodes and layout in
/// every region; run_seconds differs by region when spot preemption rates do.
double time_before_spot_loss_seconds(const Plan& p) { return p.goodput ? p.goodput->wall_seconds : p.work_seconds; }

/// Plans that differ only by region (or zone) are one plan shown once, listing the regions: the
/// same provider, instance type, nodes, layout, price kind and time before spot loss
/// (time_before_spot_loss_seconds) — at any price and any regional preemption rate. The groups
/// are formed over every candidate plan (select_rows), before rows are chosen, so a group's row
/// and its region list do not depend on --sort. RegionGroups numbers the groups as
/// collect_candidates meets the plans (the offers' canonical order).
class RegionGroups {
 public:
  std::size_t group_of(const Offer& offer, const Plan& p) {
    Key key{offer.provider, offer.instance_type, p.instances, p.layout.tp, p.layout.pp, p.layout.dp, p.layout.ep,
            p.layout.zero_stage, p.layout.micro_batch, static_cast<int>(p.recompute), p.recompute_modules,
            p.cost.price_kind,
            time_before_spot_loss_seconds(p)};
    // try_emplace: no node is allocated when the group exists (emplace builds one first).
    return seen_.try_emplace(key, seen_.size()).first->second;
  }
  std::size_t size() const { return seen_.size(); }

 private:
  // Views of the offers' strings: the offers outlive the planning call.
  using Key =
      std::tuple<std::string_view, std::string_view, int, int, int, int, int, int, int, int, unsigned, PriceKind, double>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      std::size_t h = std::hash<std::string_view>{}(std::get<0>(k));
      auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
      mix(std::hash<std::string_view>{}(std::get<1>(k)));
      mix(static_cast<std::size_t>(std::get<2>(k)));
      mix(static_cast<std::size_t>(std::get<3>(k)) * 31 + static_cast<std::size_t>(std::get<4>(k)));
      mix(static_cast<std::size_t>(std::get<5>(k)));
      mix(double_hash(std::get<12>(k)));
      return h;
    }
  };
  std::unordered_map<Key, std::size_t, KeyHash> seen_;
};

/// A duration in words: seconds under a minute, minutes under an hour (a trial read "deadline of
/// 0.0 h" for --deadline 1m), hours to one decimal under two days, else days.
/// A total in dollars as the warnings quote it: whole dollars from $100, cents below.
std::string usd_text(double v) { return v >= 100 ? fmt::format("${:.0f}", v) : fmt::format("${:.2f}", v); }

/// A plan's total as a warning quotes it, with its price kind when it is not on-demand
/// ("spot $86.32"): a cheaper plan named on a spot or reserved price says so.
std::string plan_total_text(const Plan& p) {
  return p.cost.price_kind == PriceKind::on_demand ? usd_text(p.total_usd())
                                                   : fmt::format("{} {}", price_kind_name(p.cost.price_kind), usd_text(p.total_usd()));
}

/// The date (YYYY-MM-DD) a plan's price was last seen (its age is counted from it), "" when undated.
std::string observed_date(const Plan& p) {
  const std::optional<std::string>& d = p.price_last_seen_at ? p.price_last_seen_at : p.price_source.observed_at;
  return d ? d->substr(0, 10) : std::string();
}

/// A price age in whole days as words: "1 day", "52 days".
std::string age_days_text(long long days) { return fmt::format("{} day{}", days, days == 1 ? "" : "s"); }

std::string days_text(double s) {
  if (s < 59.5) return fmt::format("{:.0f} s", s);
  if (s < 3570) return fmt::format("{:.0f} min", s / 60);
  if (s < 2 * 86400) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

/// A deadline a user can type that is at least `s` seconds: whole minutes below two hours, hours
/// to one decimal below two days, else days to one decimal, rounded UP (days_text rounds to
/// nearest: "0.3 h" for 0.34 h would not hold the plan). Returns {--deadline value, its seconds}:
/// e.g. 1230 s → {"21m", 1260}; 9000 s → {"2.5h", 9000}. Minutes below two hours (trial56 #4: a
/// 15-minute plan was offered "a deadline of at least 18 min (--deadline 0.3h)", and 16 min held it).
std::pair<std::string, double> deadline_at_least(double s) {
  if (s < 7200) {
    const double minutes = std::max(1.0, std::ceil(s / 60.0 - 1e-9));
    return {fmt::format("{:.0f}m", minutes), minutes * 60.0};
  }
  const bool hours = s < 2 * 86400;
  const double unit = hours ? 3600.0 : 86400.0;
  double v = std::ceil(s / unit * 10.0) / 10.0;
  for (;;) {
    const std::string text = fmt::format("{:.1f}", v);
    const double seconds = parse_decimal(text).value_or(v) * unit;  // as parse_duration_seconds reads it back
    if (seconds >= s) return {text + (hours ? "h" : "d"), seconds};
    v += 0.1;
  }
}

/// Stages 1-5 hand-off: the admitted offers and their candidate plans.
/// One offer × node count that runs and has a price, as the ranking needs it: what it costs and
/// how long it takes. Its full Plan (1.3 kB) is built again, with the same pure assemble and price,
/// only for the rows shown and the no-plan examples (materialize): thousands of full plans per call
/// cost page faults and allocation, not arithmetic.
struct Candidate {
  std::size_t offer = 0;                   ///< index into Candidates::admitted
  int nodes = 1;
  const SearchOutcome* outcome = nullptr;  ///< into Candidates::searched (node-based: stable)
  double total = 0;
  double time = 0;
  bool on_pareto_front = false;
  bool meets_latency = true;               ///< serving: within the TTFT/TPOT target (Plan::meets_latency_target)
  std::size_t region_group = 0;            ///< RegionGroups: the same plan in another region or zone
  bool availability_confirmed = false;     ///< Plan::availability_confirmed
  PriceKind price_kind = PriceKind::on_demand;  ///< the kind it is priced at (price())
  int demotion_tier = 0;                   ///< Plan::demotion_tier of that kind's price
  int evidence_rank = 0;                   ///< Plan::evidence_rank of that kind's price
  double total_usd() const { return total; }
  double time_seconds() const { return time; }
};

struct Candidates {
  std::vector<AdmittedOffer> admitted;
  std::vector<Candidate> plans;
  std::vector<std::size_t> offer_of;   ///< plans[i] runs on admitted[offer_of[i]]
  ClusterOutcomes searched;            ///< the search result per cluster configuration
  CheckpointSizes ckpt;
  double data_bytes = 0;
  double tokens = 0;
  std::size_t nodes_rejects = 0;       ///< offers that cannot be rented at the asked cluster size
  FixedClusterLoad fixed_load;         ///< serving on --gpus / --nodes: a load the cluster cannot carry
  GoodputRejects goodput_rejects;      ///< training: clusters that fit but never finish
  std::size_t region_groups = 0;       ///< Candidate::region_group < region_groups
  /// The admitted offer of each row (select_rows), by offer id (views into the offers): the
  /// per-plan warnings (stage 7) look up the few rows' offers here instead of indexing every
  /// admitted offer by id.
  std::unordered_map<std::string_view, std::size_t> row_offer;
};

/// Stage 6 hand-off to the no-plan reason: the plans that miss the deadline or the budget.
struct Infeasible {
  std::vector<std::size_t> index;      ///< into Candidates::plans
  std::vector<std::size_t> offer_of;   ///< index into Candidates::admitted
  std::vector<Plan> storage;           ///< their plans, built when the no-plan reason needs them
  std::vector<Plan*> plans;            ///< into storage
};

/// A batch job that runs fewer sequences at once than its replica's KV pool holds (fewer requests
/// per replica than the pool's batch): the TTFT, TPOT and memory shown are those of the batch it
/// runs, min(requests, pool), not the pool's (trial53 #6: 1 request showed the TPOT and KV cache of
/// batch 282). Its time, rates and cost stay the step simulation's (simulate_batch_job), which
/// already runs that batch.
void retime_small_batch_job(const PlanRequest& r, const ModelArch& arch, const PerfAssumptions& a, Plan& p) {
  if (!p.batch_job || !p.serving) return;
  const std::int64_t running = p.batch_job->peak_running_sequences;
  if (running < 1 || running >= p.serving->batch) return;
  p.batch_job->pool_sequences = p.serving->batch;
  serve_at_batch(r, arch, a, p.cluster, p.kv_capacity_bytes, running, p);
}

/// The full plan of candidate `i` (stages 2-5 again: the same inputs give the same numbers);
/// `chosen` = its price observation. `tp_choice`: write the serving TP sentence
/// (Plan::serving_tp_choice) now; the rows leave it to stage 7, which writes it for the plans
/// returned only (a formatted sentence for each of hundreds of rows, of which `limit` are shown;
/// nothing before stage 7 reads it).
Plan materialize(const PlanRequest& request, const ModelArch& arch, const Candidates& c, std::size_t i, PlanState& st,
                 const PriceObservation*& chosen, bool tp_choice = true) {
  const Candidate& k = c.plans[i];
  const AdmittedOffer& a = c.admitted[k.offer];
  Plan p;
  (void)assemble(request, arch, *st.assumptions, a, k.nodes, key_for(a, searched_nodes(request, k.nodes)), *k.outcome, c.ckpt,
                 c.data_bytes, c.tokens, p);
  retime_small_batch_job(request, arch, *st.assumptions, p);
  if (tp_choice) p.serving_tp_choice = serving_tp_choice_text(request, p.serving_tp_options);
  chosen = price(request, a, *a.billing, st, p);
  if (request.workload == PlanWorkload::image_generation) {
    p.images_per_hour = p.requests_per_s * 3600.0;
    p.usd_per_1000_images = p.total_usd() / request.images * 1000.0;
  }
  p.on_pareto_front = k.on_pareto_front;
  return p;
}

/// The planner's own order of the offers, whatever order they come in (a store's ORDER BY, an
/// import file, a test): the on-demand price per GPU-hour ascending (offers without one last),
/// then the offer id in byte order — the order `gpuplan offers` lists them in by default. Every
/// later tie (equal totals or times, the region a collapsed row shows first, the first of equal
/// plans) is decided by this order, so a plan depends on the offers, never on their order.
std::vector<const Offer*> canonical_offer_order(const std::vector<Offer>& offers) {
  struct Keyed {
    bool unpriced;
    double usd_per_gpu_hour;
    const Offer* offer;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(offers.size());
  for (const Offer& o : offers) {
    const PriceObservation* p = o.latest_price(PriceKind::on_demand);
    const bool priced = p && o.gpu_count > 0;
    keyed.push_back({!priced, priced ? p->usd_per_hour / o.gpu_count : 0.0, &o});
  }
  auto before = [](const Keyed& a, const Keyed& b) {
    if (a.unpriced != b.unpriced) return b.unpriced;
    if (a.usd_per_gpu_hour != b.usd_per_gpu_hour) return a.usd_per_gpu_hour < b.usd_per_gpu_hour;
    return a.offer->id < b.offer->id;
  };
  // Offers usually arrive in this order already (the store's default sort): then no sort.
  if (!std::is_sorted(keyed.begin(), keyed.end(), before)) std::stable_sort(keyed.begin(), keyed.end(), before);
  std::vector<const Offer*> out;
  out.reserve(keyed.size());
  for (const Keyed& k : keyed) out.push_back(k.offer);
  return out;
}

/// Stages 1-5 (admit offers, enumerate and size layouts, time, price): every offer × node count
/// that runs and has a price, built in place. Fills result's offer and layout counters; throws
/// (exit 2) for pins no offer can take.
Candidates collect_candidates(const PlanRequest& request, const ModelArch& arch, const std::vector<Offer>& offers,
                              const GpuCatalog& gpus, BillingLookup billing_of, SearchContext& ctx, PlanState& st,
                              PlanResult& result) {
  // Stages 1-5 per offer: every node count becomes a candidate plan. Stage 7 (the per-plan
  // warnings: formatted sentences) runs later, only on the plans that are shown.
  Candidates c;
  std::vector<AdmittedOffer>& admitted = c.admitted;
  admitted.reserve(offers.size());
  std::vector<Candidate>& candidates = c.plans;
  std::vector<std::size_t>& candidate_offer = c.offer_of;
  candidate_offer.reserve(offers.size());
  candidates.reserve(offers.size());
  c.ckpt = checkpoint_sizes(request, arch);
  c.data_bytes = dataset_bytes(request, arch);
  c.tokens = ctx.tokens;
  const CheckpointSizes& ckpt = c.ckpt;
  const double data_bytes = c.data_bytes;
  const double tokens = c.tokens;
  ClusterOutcomes& cache = c.searched;
  RegionGroups region_groups;
  std::unordered_map<std::string_view, std::shared_ptr<const ResolvedBilling>> billing_by_provider;  ///< views into offers
  /// Offers with billing terms of their own: one resolution per (provider, terms) (BillingLookup's
  /// contract: the terms depend on nothing else), not one per offer; many offers of a provider
  /// carry the same terms (a spot preemption band). Views into the offers.
  struct OverrideKey {
    std::string_view provider;
    const BillingTerms* terms;
  };
  struct OverrideHash {
    std::size_t operator()(const OverrideKey& k) const noexcept {
      std::size_t h = std::hash<std::string_view>{}(k.provider);
      auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
      for (const std::optional<double>* o : {&k.terms->granularity_seconds, &k.terms->minimum_billed_seconds,
                                              &k.terms->storage_usd_per_gb_month, &k.terms->egress_usd_per_gb,
                                              &k.terms->egress_free_gb_per_month, &k.terms->preemptions_per_day})
        mix(*o ? double_hash(**o) * 2 + 1 : 0);
      mix(k.terms->sources.size());
      return h;
    }
  };
  struct OverrideEq {
    bool operator()(const OverrideKey& a, const OverrideKey& b) const { return a.provider == b.provider && *a.terms == *b.terms; }
  };
  std::unordered_map<OverrideKey, std::shared_ptr<const ResolvedBilling>, OverrideHash, OverrideEq> billing_by_override;
  std::size_t tp_rejects = 0, gpus_rejects = 0;
  int reject_gpn = 0;
  int largest_tp_reject_gpn = 0;  ///< the most GPUs per node among offers a pinned TP rejected
  // Scratch for every candidate (assemble's `candidate` mode writes each field pricing and the
  // region groups read): a candidate keeps only its cost and time (materialize rebuilds the
  // plan); one 1.3 kB Plan constructed and destroyed per candidate was ~3% of a plan.
  Plan p;
  for (const Offer* offer_in_order : canonical_offer_order(offers)) {
    const Offer& offer = *offer_in_order;
    AdmittedOffer a;
    const SkipReason why = admit(request, offer, gpus, st, a);
    if (why != SkipReason::none) {
      ++result.offers_skipped;
      tp_rejects += why == SkipReason::tp_exceeds_node;
      gpus_rejects += why == SkipReason::gpus_not_multiple;
      c.nodes_rejects += why == SkipReason::nodes_unavailable;
      if (why == SkipReason::tp_exceeds_node || why == SkipReason::gpus_not_multiple) reject_gpn = st.example_gpus_per_node;
      if (why == SkipReason::tp_exceeds_node) largest_tp_reject_gpn = std::max(largest_tp_reject_gpn, offer.gpu_count);
      continue;
    }
    ++result.offers_considered;
    for (int nodes = a.first_nodes; nodes <= a.last_nodes; nodes = next_node_count(nodes, a.min_nodes)) {
      const ClusterKey key = key_for(a, searched_nodes(request, nodes));
      const SearchOutcome& o = search_cluster(ctx, cache, key);
      if (o.smallest_per_gpu_bytes < st.smallest_need) {
        st.smallest_need = o.smallest_per_gpu_bytes;
        if (request.workload == PlanWorkload::training) st.smallest_need_layout.emplace(o.smallest_layout, o.smallest_recompute,
                                                                                     o.smallest_recompute_modules);
      }
      if (!o.fits) {
        const double usable = key.capacity_bytes * (1.0 - request.margin);
        if (usable > 0 && std::isfinite(o.smallest_per_gpu_bytes) && o.smallest_per_gpu_bytes / usable < st.closest.ratio)
          st.closest = {o.smallest_per_gpu_bytes / usable, key.gpu ? std::string_view(key.gpu->name) : std::string_view(),
                        key.gpus_per_node * key.nodes, o.smallest_per_gpu_bytes, key.capacity_bytes, o.smallest_layout,
                        o.smallest_recompute, o.smallest_recompute_modules};
        continue;
      }
      st.any_cluster_fits = true;
      if (!assemble(request, arch, ctx.assumptions, a, nodes, key, o, ckpt, data_bytes, tokens, p, &c.fixed_load, /*candidate=*/true, &c.goodput_rejects))
        continue;
      if (!a.billing) {
        // Billing terms are a function of the provider and the offer's own overrides
        // (BillingLookup, planner.hpp): offers without overrides share one resolution per
        // provider instead of merging terms and writing assumption sentences per offer.
        const BillingTerms& over = offer.billing_override;
        const bool no_override = over == BillingTerms{};
        auto resolve = [&] {
          return std::make_shared<const ResolvedBilling>(
              resolve_billing(billing_of ? billing_of(offer) : offer.billing_override, request.preemptions_per_day));
        };
        if (no_override) {
          auto [it, inserted] = billing_by_provider.try_emplace(offer.provider);
          if (inserted) it->second = resolve();
          a.billing = it->second;
        } else {
          auto [it, inserted] = billing_by_override.try_emplace(OverrideKey{offer.provider, &over});
          if (inserted) it->second = resolve();
          a.billing = it->second;
        }
      }
      if (!price(request, a, *a.billing, st, p, /*with_alternatives=*/false)) continue;
      candidates.push_back(Candidate{admitted.size(), nodes, &o, p.total_usd(), p.time_seconds(), false,
                                     o.meets_latency, region_groups.group_of(offer, p),
                                     confirmed_available(offer, request), p.cost.price_kind, p.demotion_tier,
                                     p.evidence_rank});
      candidate_offer.push_back(admitted.size());
    }
    admitted.push_back(std::move(a));
  }
  result.layouts_evaluated = ctx.layouts_evaluated;
  c.region_groups = region_groups.size();
  // Pins no offer can take: a one-line error (exit 2), not "no plan".
  if (result.offers_considered == 0 && tp_rejects > 0) {
    throw_invalid_coded("--tp", "tp_exceeds_node",
                        {{"tp", fmt::format("{}", *request.pins.tp)}, {"per_node", fmt::format("{}", largest_tp_reject_gpn)}},
                        fmt::format("tp {} exceeds the GPUs per node of every offer (the largest has {})", *request.pins.tp,
                                    largest_tp_reject_gpn),
                        "tp ≤ GPUs per node (tensor parallelism stays inside a node)");
  }
  if (result.offers_considered == 0 && gpus_rejects > 0 && request.gpus_total) {
    // Say which node sizes the offers have, how N splits into those that divide it (and why
    // those offers cannot take it), and the nearest counts the others can run.
    const int n = *request.gpus_total;
    std::string sizes, splits, split_values, nearest;
    for (int g : st.exact_node_sizes) sizes += fmt::format("{}{}", sizes.empty() ? "" : ", ", g);
    for (int g : st.dividing_sizes_unavailable) {
      splits += fmt::format("{}{} × {}-GPU nodes", splits.empty() ? "" : " or ", n / g, g);
      split_values += fmt::format("{}{} × {}", split_values.empty() ? "" : ", ", n / g, g);  // nodes × GPUs per node
    }
    for (auto it = st.exact_node_sizes.rbegin(); it != st.exact_node_sizes.rend(); ++it) {
      const int g = *it;
      if (n % g == 0) continue;
      const int lower = n / g * g, upper = (n / g + 1) * g;
      nearest += fmt::format("{}{}{} on {}-GPU nodes", nearest.empty() ? "" : "; ",
                             lower > 0 ? fmt::format("--gpus {} or ", lower) : "", fmt::format("--gpus {}", upper), g);
    }
    if (request.nodes_exact && *request.nodes_exact > 0 && n % *request.nodes_exact == 0) {
      // --gpus and --nodes together fix the node size (trial 9: `--gpus 8 --nodes 2` said "8 GPUs
      // is not a multiple of the GPUs per node of any offer ... (offers have 1, 2, ..., 8 ... GPUs
      // per node)", contradicting itself): say that size and that no offer rents it that way.
      const int nodes = *request.nodes_exact, per = n / nodes;
      throw_invalid_coded(
          "--gpus", "gpus_nodes_not_rentable",
          {{"gpus", fmt::format("{}", n)}, {"nodes", fmt::format("{}", nodes)}, {"per_node", fmt::format("{}", per)},
           {"per_node_offered", sizes}},
          fmt::format("--gpus {} on --nodes {} needs {}-GPU nodes, and no offer that can run it has {}-GPU nodes "
                      "rentable as {} nodes (offers have {} GPUs per node)",
                      n, nodes, per, per, nodes, sizes),
          "one of --gpus and --nodes, or --gpus = --nodes × an offered node size");
    }
    // Codes of their own (not estimate's gpus_not_multiple_of_node, one node size): the pages word
    // the offered node sizes and the splits no offer can rent, as this sentence does.
    throw_invalid_coded(
        "--gpus", split_values.empty() ? "gpus_not_multiple_of_offered_nodes" : "gpus_split_not_rentable",
        {{"gpus", fmt::format("{}", n)}, {"per_node", fmt::format("{}", reject_gpn)}, {"per_node_offered", sizes},
         {"splits", split_values}},
        fmt::format("{} GPUs is not a multiple of the GPUs per node of any offer that can run it (offers have {} GPUs "
                    "per node{})",
                    n, sizes,
                    splits.empty() ? ""
                                   : fmt::format("; {} = {}, but those offers cannot be rented as that many nodes: no "
                                                 "known inter-node network or a lower node limit",
                                                 n, splits)),
        nearest.empty() ? std::string("a multiple of the offer's GPUs per node") : "e.g. " + nearest);
  }

  return c;
}

/// Stage 6a: the deadline and budget split the candidates; the Pareto front is marked over every
/// feasible plan; the rows are the best plan of each offer by the sort plus every front plan, each
/// with its warnings (stage 7), regions collapsed, into result.plans. Returns the infeasible plans
/// (they stay in `c`) for the no-plan reason.
Infeasible select_rows(const PlanRequest& request, const ModelArch& arch, Candidates& c, PlanState& st,
                       PlanResult& result) {
  // Stage 6: constraints, Pareto front over every plan, one row per offer (plus the front).
  // Plans stay in `candidates`; the stages below pass indices (a Plan is large to move).
  std::vector<Candidate>& candidates = c.plans;
  const std::vector<std::size_t>& candidate_offer = c.offer_of;
  const std::vector<AdmittedOffer>& admitted = c.admitted;
  Infeasible out;
  std::vector<std::size_t>& infeasible_offer = out.offer_of;
  std::vector<std::size_t> feasible;    ///< indices into candidates, in candidate order
  feasible.reserve(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (meets(request, candidates[i])) {
      feasible.push_back(i);
    } else {
      infeasible_offer.push_back(candidate_offer[i]);
      out.index.push_back(i);
    }
  }
  // One plan in several regions or zones (RegionGroups): only its representative takes part in
  // the front and the rows, whatever the sort: the best price evidence (unless
  // --include-flagged), then the cheapest, then the faster (less spot loss), then the offers'
  // canonical order (the candidates' order). The others' regions are listed on its row.
  const bool demote_evidence = !request.include_flagged;
  auto represents_before = [&](std::size_t a, std::size_t b) {
    const int ta = demote_evidence ? candidates[a].evidence_rank : 0;
    const int tb = demote_evidence ? candidates[b].evidence_rank : 0;
    if (ta != tb) return ta < tb;
    if (candidates[a].total_usd() != candidates[b].total_usd()) return candidates[a].total_usd() < candidates[b].total_usd();
    if (candidates[a].time_seconds() != candidates[b].time_seconds()) return candidates[a].time_seconds() < candidates[b].time_seconds();
    if (candidates[a].availability_confirmed != candidates[b].availability_confirmed) return candidates[a].availability_confirmed;
    return a < b;
  };
  // The feasible members of each region group, representative first, in one array (group g's
  // are members[group_start[g] .. group_start[g + 1]); a counting sort, no vector per group).
  std::vector<std::size_t> group_start(c.region_groups + 1, 0);
  for (std::size_t i : feasible) ++group_start[candidates[i].region_group + 1];
  for (std::size_t g = 0; g < c.region_groups; ++g) group_start[g + 1] += group_start[g];
  std::vector<std::size_t> members(feasible.size());
  {
    std::vector<std::size_t> fill(group_start.begin(), group_start.end() - 1);
    for (std::size_t i : feasible) members[fill[candidates[i].region_group]++] = i;
  }
  for (std::size_t g = 0; g < c.region_groups; ++g) {
    std::sort(members.begin() + static_cast<std::ptrdiff_t>(group_start[g]),
              members.begin() + static_cast<std::ptrdiff_t>(group_start[g + 1]), represents_before);
  }
  std::erase_if(feasible, [&](std::size_t i) { return members[group_start[candidates[i].region_group]] != i; });
  if (!request.deadline_seconds && !request.show_all && !request.nodes_exact && !request.gpus_total) {
    // A cluster rented for seconds is no plan (trial: 32-128 nodes × 8 MI300X for 2-5 s at
    // --startup-minutes 0): a plan on more nodes than the fewest its offer runs the job on that
    // finishes in under kMinMultiNodeRunSeconds leaves the list and the front. Not with
    // --deadline (the deadline decides), --all, or a pinned --nodes / --gpus. docs/planner.md.
    std::map<std::size_t, int> fewest;  ///< admitted offer → fewest nodes of its feasible plans
    for (std::size_t i : feasible) {
      auto [it, added] = fewest.try_emplace(candidate_offer[i], candidates[i].nodes);
      if (!added) it->second = std::min(it->second, candidates[i].nodes);
    }
    const std::size_t before = feasible.size();
    std::erase_if(feasible, [&](std::size_t i) {
      return candidates[i].nodes > fewest[candidate_offer[i]] && candidates[i].time_seconds() < kMinMultiNodeRunSeconds;
    });
    result.plans_hidden_short = before - feasible.size();
  }
  {
    // Recommendable evidence: dated, unflagged prices when any plan has one (order_rows).
    int best_any = 3;
    for (std::size_t i = 0; i < candidates.size(); ++i) best_any = std::min(best_any, candidates[i].demotion_tier);
    st.max_recommendable_tier = std::max(1, best_any);
    // The closest of them to the request, quoted when no plan on such a price meets it: the
    // cheapest (among those meeting the deadline, if any) and the fastest (among those within the
    // budget, if any).
    auto consider = [&](PlanState::Closest& best, std::size_t i, bool by_cost) {
      const Candidate& k = candidates[i];
      const bool better = !best.set || (by_cost ? k.total_usd() < best.total_usd : k.time_seconds() < best.time_seconds);
      if (!better) return;
      const AdmittedOffer& a = admitted[candidate_offer[i]];
      best = {true, k.total_usd(), k.time_seconds(), a.offer->provider, a.offer->instance_type, k.nodes};
    };
    bool any_cost = false, any_time = false;  // the second pass: any such plan when none meets the other limit
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (candidates[i].demotion_tier > st.max_recommendable_tier) continue;
        const Candidate& k = candidates[i];
        const bool in_time = !request.deadline_seconds || k.time_seconds() <= *request.deadline_seconds;
        const bool in_budget = !request.budget_usd || k.total_usd() <= *request.budget_usd;
        if (any_cost || (pass == 0 && in_time)) consider(st.cheapest_recommendable, i, true);
        if (any_time || (pass == 0 && in_budget)) consider(st.fastest_recommendable, i, false);
      }
      any_cost = !st.cheapest_recommendable.set;
      any_time = !st.fastest_recommendable.set;
      if (!any_cost && !any_time) break;
    }
  }
  // The recommended plan: chosen over every feasible plan (each region group's representative)
  // by the request's constraints only, never by --sort (the sort orders the rows; the R mark is
  // the same for --sort cost, time or none). Pool: the plans on the best price evidence present
  // (rank: tier, then a stale price's age step) among those meeting the latency target (serving);
  // none when only undated or flagged prices meet the request while dated, unflagged ones exist.
  std::size_t rec = std::string::npos;
  {
    const bool demote = !request.include_flagged;
    auto rank = [&](std::size_t i) { return demote ? candidates[i].evidence_rank : 0; };
    // The best rank among the plans that finish within the horizon (the deadline, else
    // recommend_horizon_seconds); the best rank present only when none does (trial 9 #3: an
    // imported fresh quote, alone on rank 0, was recommended for 4,044 days of one node over a
    // 12-day plan on a stale price). docs/planner.md "Price evidence".
    const double horizon = request.deadline_seconds ? *request.deadline_seconds : request.recommend_horizon_seconds;
    int best_rank = std::numeric_limits<int>::max();
    int best_rank_within = std::numeric_limits<int>::max();
    int best_tier_any = 3;
    for (std::size_t i : feasible) {
      best_tier_any = std::min(best_tier_any, demote ? candidates[i].demotion_tier : 0);
      if (!candidates[i].meets_latency) continue;
      best_rank = std::min(best_rank, rank(i));
      if (candidates[i].time_seconds() <= horizon) best_rank_within = std::min(best_rank_within, rank(i));
    }
    const int best_rank_any = best_rank;
    if (best_rank_within != std::numeric_limits<int>::max()) best_rank = best_rank_within;
    const bool blocked = demote && !feasible.empty() && best_tier_any > st.max_recommendable_tier;
    std::vector<std::size_t> pool;
    for (std::size_t i : feasible) {
      if (!blocked && candidates[i].meets_latency && rank(i) == best_rank) pool.push_back(i);
    }
    if (!pool.empty()) {
      if (!request.deadline_seconds && !request.budget_usd) {
        rec = recommend_index(candidates, request, pool);
      } else if (request.deadline_seconds) {  // with or without a budget: the cheapest (1% ties: the faster)
        rec = cheapest_with_cost_ties(request, pool, [&](std::size_t i) -> const Candidate& { return candidates[i]; });
      } else {  // a budget only: the fastest, by the time ranking's rule
        rec = first_by_time(request, pool, [&](std::size_t i) -> const Candidate& { return candidates[i]; });
      }
      if (rec != std::string::npos) {
        const std::size_t confirmed =
            prefer_confirmed(request, pool, rec, [&](std::size_t i) -> const Candidate& { return candidates[i]; });
        result.recommendation_prefers_confirmed = confirmed != rec;
        rec = confirmed;
      }
    }
    st.latency_excluded_all = !feasible.empty() && best_rank == std::numeric_limits<int>::max();
    if (rec != std::string::npos && best_rank_any < rank(rec)) {
      // A plan on fresher price evidence was passed over for running past the horizon: the
      // fastest of those, named in the fresher_plan_too_long warning.
      std::size_t f = std::string::npos;
      for (std::size_t i : feasible) {
        if (!candidates[i].meets_latency || rank(i) >= rank(rec)) continue;
        if (f == std::string::npos || candidates[i].time_seconds() < candidates[f].time_seconds()) f = i;
      }
      if (f != std::string::npos) {
        const AdmittedOffer& a = admitted[candidate_offer[f]];
        st.fresher_too_long = {true,  candidates[f].total_usd(), candidates[f].time_seconds(),
                               a.offer->provider, a.offer->instance_type, candidates[f].nodes};
        st.fresher_too_long_age_days = a.evidence[static_cast<std::size_t>(candidates[f].price_kind)].age_days;
      }
    }
  }
  {
    // Plans far slower than the answer are no alternatives (a one-node run of nine years next to
    // 256 nodes for 12 days): without --deadline (the deadline is the horizon) and without --all,
    // plans slower than max(recommend_horizon_seconds, hide_slower_than_factor × the reference)
    // leave the list and the front; the reference is the recommended plan, else the fastest.
    if (!request.deadline_seconds && !request.show_all && !feasible.empty()) {
      double ref = kInf;
      if (rec != std::string::npos) {
        ref = candidates[rec].time_seconds();
      } else {
        for (std::size_t i : feasible) ref = std::min(ref, candidates[i].time_seconds());
      }
      const double horizon = std::max(request.recommend_horizon_seconds, request.hide_slower_than_factor * ref);
      const std::size_t before = feasible.size();
      std::erase_if(feasible, [&](std::size_t i) { return i != rec && candidates[i].time_seconds() > horizon; });
      result.plans_hidden = before - feasible.size();
      if (result.plans_hidden > 0) result.hidden_slower_than_seconds = horizon;
    }
  }
  {
    // The front by evidence (unless --include-flagged): a plan is on it when no plan with a price
    // as good or better (price_evidence: clean < stale < undated < flagged) is at least as cheap
    // and as fast and better in one. So an undated offer never takes the mark from the clean plan
    // the rule recommends (the recommended plan is always on the front).
    // Ranks: the tier, then a stale price's age in steps of the freshness limit (evidence_rank);
    // a service that misses the latency target ranks after every one that meets it (the
    // recommendation's pool is the best evidence among those meeting it), so a cheaper plan at
    // TTFT 72 s never takes the mark from the plan the rule recommends within the target
    // (trial56 #5: 8×B200 recommended, not on the front; 2×A100 at $1,715 missing it was).
    const bool demote = !request.include_flagged;
    auto quality = [&](std::size_t i) {
      return (candidates[i].meets_latency ? 0 : 1 << 20) + (demote ? candidates[i].evidence_rank : 0);
    };
    std::vector<int> ranks;
    for (std::size_t i : feasible) ranks.push_back(quality(i));
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::vector<CostTimePoint> pts;
    std::vector<std::size_t> which;
    pts.reserve(feasible.size());
    which.reserve(feasible.size());
    for (int t : ranks) {
      pts.clear();
      which.clear();
      for (std::size_t i : feasible) {
        if (quality(i) > t) continue;
        pts.push_back({candidates[i].total_usd(), candidates[i].time_seconds()});
        which.push_back(i);
      }
      for (std::size_t k : pareto_front_indices(pts)) {
        if (quality(which[k]) == t) candidates[which[k]].on_pareto_front = true;
      }
    }
  }
  const PlanSort sort = result.sort_applied;
  {
    // Best per offer by the sort (recommended: the offer's own recommendation), plus every
    // front plan, so the front is the same whatever the sort.
    // An offer's candidates are consecutive (collect_candidates builds them offer by offer).
    std::vector<bool> keep(candidates.size(), false);
    std::vector<std::size_t> idx;
    for (std::size_t run = 0; run < feasible.size();) {
      idx.clear();
      const std::size_t offer = candidate_offer[feasible[run]];
      while (run < feasible.size() && candidate_offer[feasible[run]] == offer) idx.push_back(feasible[run++]);
      std::size_t best = idx.front();
      if (sort == PlanSort::recommended) {
        best = recommend_index(candidates, request, idx);
      } else if (sort == PlanSort::time) {
        best = first_by_time(request, idx, [&](std::size_t i) -> const Candidate& { return candidates[i]; });
      } else {
        best = cheapest_with_cost_ties(request, idx, [&](std::size_t i) -> const Candidate& { return candidates[i]; });
      }
      keep[best] = true;
    }
    if (rec != std::string::npos) keep[rec] = true;
    std::vector<Plan> rows;
    std::size_t n_rows = 0;
    for (std::size_t i : feasible) n_rows += keep[i] || candidates[i].on_pareto_front;
    rows.reserve(n_rows);  // a Plan is 1.3 kB: no reallocation moves
    for (std::size_t i : feasible) {
      if (keep[i] || candidates[i].on_pareto_front) {
        const PriceObservation* chosen = nullptr;
        Plan& p = rows.emplace_back(materialize(request, arch, c, i, st, chosen, /*tp_choice=*/false));
        describe_offer(request, arch, admitted[candidate_offer[i]], chosen, p, false);
        c.row_offer.emplace(admitted[candidate_offer[i]].offer->id, candidate_offer[i]);
        p.recommended = i == rec;
        // The same plan in other regions or zones, in the representative order.
        const std::size_t g = candidates[i].region_group;
        for (std::size_t j = group_start[g] + 1; j < group_start[g + 1]; ++j) {
          const Offer& other = *admitted[candidate_offer[members[j]]].offer;
          p.same_plan_offer_ids.push_back(other.id);
          if (std::find(p.regions.begin(), p.regions.end(), other.region) == p.regions.end()) p.regions.push_back(other.region);
        }
      }
    }
    result.plans = std::move(rows);
  }

  return out;
}

/// The time ranking's rule in words (--sort time and the --budget recommendation).
std::string time_rule_text(const PlanRequest& r) {
  return fmt::format(
      "(times within {:.0f}% tie, and a faster plan goes first only if each hour it saves costs at most {:.0f}× "
      "the cheaper plan's spend per hour: else the cheaper wins)",
      r.time_tie_tolerance * 100, r.speedup_max_cost_ratio);
}

/// The sequence (training: --seq; serving: prompt + output tokens) beyond the model's maximum
/// context (max_position_embeddings), as `gpuplan size` warns: the model was not trained for it
/// (RoPE scaling or fine-tuning for long context needed). nullopt when within it or unknown.
std::optional<PlanWarning> context_warning(const PlanRequest& r, const ModelArch& arch) {
  if (arch.family != ModelFamily::decoder || arch.max_position_embeddings <= 0) return std::nullopt;
  const bool training = r.workload == PlanWorkload::training;
  if (r.workload == PlanWorkload::image_generation) return std::nullopt;
  const std::int64_t tokens = training ? r.seq_len : r.prompt_tokens + r.output_tokens;
  if (tokens <= arch.max_position_embeddings) return std::nullopt;
  return PlanWarning{PlanWarningCode::seq_exceeds_context,
                     fmt::format("{} {} exceeds the model's maximum context of {} tokens (max_position_embeddings): "
                                 "it was not trained for it (RoPE scaling or long-context fine-tuning needed)",
                                 training ? "--seq" : "--prompt-tokens + --output-tokens =", tokens,
                                 arch.max_position_embeddings),
                     {}};
}

/// A no-plan answer for a sequence beyond the model's maximum context (context_warning): that is
/// the cause to say first, with both numbers, whenever the answer is about the sequence's cost —
/// memory (does_not_fit), sizing, latency, the load's replicas — not about limits the user set
/// (deadline, budget), the filter or prices. The reason found keeps its sentence after it and its
/// numbers (`values`).
void say_context_first(const PlanRequest& r, const ModelArch& arch, NoPlanReason& np) {
  static constexpr std::array<std::string_view, 8> kContextCauses = {
      "does_not_fit", "no_layout_sized", "misses_latency_target", "misses_ttft_target", "exceeds_max_nodes", "exceeds_max_gpus",
      "load_exceeds_cluster", "batch_below_dp"};
  const auto cause = std::find(kContextCauses.begin(), kContextCauses.end(), np.code);
  if (cause == kContextCauses.end()) return;
  if (!context_warning(r, arch)) return;
  const bool training = r.workload == PlanWorkload::training;
  const std::int64_t tokens = training ? r.seq_len : r.prompt_tokens + r.output_tokens;
  const std::int64_t max_ctx = arch.max_position_embeddings;
  np.reason = fmt::format("{} {} exceeds the model's maximum context of {} tokens (max_position_embeddings); at that "
                          "length {}",
                          training ? "--seq" : "--prompt-tokens + --output-tokens =", tokens, max_ctx, np.reason);
  np.code = "seq_exceeds_context";
  np.values["seq_tokens"] = static_cast<double>(tokens);
  np.values["max_context_tokens"] = static_cast<double>(max_ctx);
  np.suggestions.insert(np.suggestions.begin(),
                        training ? fmt::format("a sequence within the model's context (--seq {} or less)", max_ctx)
                                 : fmt::format("a prompt and output within the model's context (--prompt-tokens + "
                                               "--output-tokens {} or less)",
                                               max_ctx));
  np.suggestion_codes.insert(np.suggestion_codes.begin(), "seq_within_context");
}

/// Stage 6b: the recommended plan, the order (sort, then price-evidence tiers) and the counts.
void order_rows(const PlanRequest& request, const PlanState& st, PlanResult& result) {
  const PlanSort sort = result.sort_applied;
  // Recommendation (made in select_rows, whatever the sort) and order by the evidence of the
  // price (evidence_rank): clean, then stale (by age), undated and flagged, unless --include-flagged.
  const bool demote = !request.include_flagged;
  auto tier = [&](const Plan& p) { return demote ? p.evidence_rank : 0; };
  auto demoted = [&](const Plan& p) { return p.demotion_tier > 0; };
  int best_tier = 3;
  for (const Plan& p : result.plans) best_tier = std::min(best_tier, demote ? p.demotion_tier : 0);
  const Plan* recommended = nullptr;
  for (const Plan& p : result.plans) {
    if (p.recommended) recommended = &p;
  }
  if (recommended && demote) best_tier = recommended->demotion_tier;
  // Undated or flagged prices are never recommended while a plan on a dated, unflagged price
  // exists (even one that misses the deadline or budget): the rule may not rest on them then.
  const bool blocked = demote && !result.plans.empty() && best_tier > st.max_recommendable_tier;
  result.recommendation_evidence = !demote || blocked ? ""
                                   : best_tier == 0 ? "clean_dated"
                                   : best_tier == 1 ? "dated_stale"
                                   : best_tier == 2 ? "unflagged"
                                                    : "";
  const std::string evidence_words =
      !demote || blocked ? ""
      : best_tier == 0   ? " (clean prices only: dated, unflagged, at most {:.0f} days old)"
      : best_tier == 1   ? " (dated, unflagged prices only; none clean and at most {:.0f} days old gives a plan within the "
                             "horizon: the most recent ones that do)"
      : best_tier == 2   ? " (unflagged prices only; no plan has a dated one)"
                         : " (only flagged prices run this)";
  // The evidence is the best among the plans finishing within the horizon (the deadline, else
  // recommend_horizon_seconds), the best present only when none does (select_rows).
  const std::string evidence =
      fmt::format(fmt::runtime(evidence_words), request.stale_after_days) +
      (!demote || blocked || request.deadline_seconds
           ? std::string()
           : fmt::format(" (price evidence: the best within {:.0f} days)", request.recommend_horizon_seconds / kSecondsPerDay));
  const bool serving_latency = request.workload == PlanWorkload::serving;
  const std::string latency =
      serving_latency ? fmt::format(", among the plans meeting {}{}", latency_targets_text(request, " and "),
                                    request.ttft_seconds || request.tpot_seconds ? "" : " (default interactive target)")
                      : "";
  if (!request.deadline_seconds && !request.budget_usd) {
    result.recommendation_rule = fmt::format(
        "recommended: of the plans finishing within {:.0f} days, the fastest on their cost/time Pareto front costing "
        "at most {:.0f}% more than the cheapest of them, or a cheaper one within {:.0f}% of its time (none within "
        "{:.0f} days: the fastest plan){}{}",
        request.recommend_horizon_seconds / kSecondsPerDay, request.recommend_max_cost_premium * 100,
        request.time_tie_tolerance * 100, request.recommend_horizon_seconds / kSecondsPerDay, latency, evidence);
    result.recommendation_rule_code = "front";
  } else {
    result.recommendation_rule =
        request.deadline_seconds && request.budget_usd ? "recommended: the cheapest plan that meets both the deadline and the budget"
        : request.deadline_seconds                     ? "recommended: the cheapest plan that finishes by the deadline"
                                                       : "recommended: the fastest plan within the budget";
    result.recommendation_rule_code = request.deadline_seconds && request.budget_usd ? "deadline_and_budget"
                                      : request.deadline_seconds                     ? "deadline"
                                                                                     : "budget";
    result.recommendation_time_ties = !request.deadline_seconds;
    if (result.recommendation_time_ties) {
      result.recommendation_rule += " " + time_rule_text(request);
    } else {
      result.recommendation_rule += fmt::format(" (totals within {:.0f}% of the cheapest tie: the fastest of them wins)",
                                                request.cost_tie_tolerance * 100);
    }
    result.recommendation_rule += latency + evidence;
  }
  if (result.recommendation_prefers_confirmed)
    result.recommendation_rule += fmt::format(
        "; availability tiebreak: a plan on an offer its source confirmed available is recommended over an unconfirmed "
        "one when it costs at most {:.0f}% more and takes at most {:.0f}% longer",
        request.cost_tie_tolerance * 100, request.time_tie_tolerance * 100);
  if (sort == PlanSort::time) result.sort_rule = "by time to finish " + time_rule_text(request);
  if (recommended && recommended->price_age_days && *recommended->price_age_days >= 0 &&
      recommended->price_source.observed_at) {
    // The age counts from the last-seen date (trial9b D3: "observed 2026-10-25, 1 days ago" put the
    // first-seen date beside an age from the last one); the first-seen date is named as such.
    const std::string last = observed_date(*recommended), first = recommended->price_source.observed_at->substr(0, 10);
    result.recommendation_rule +=
        last == first ? fmt::format("; the recommended plan's price was observed {}, {} ago", last,
                                    age_days_text(*recommended->price_age_days))
                      : fmt::format("; the recommended plan's price was last seen {}, {} ago (first seen {})", last,
                                    age_days_text(*recommended->price_age_days), first);
  }
  if (blocked) {
    result.recommendation_rule =
        "none: every plan that meets the request rests on an undated or flagged price, and plans on dated, unflagged "
        "prices exist (see the no_clean_plan warning)";
    result.recommendation_rule_code = "none_no_clean_plan";  // pages word it (recommend_<code>)
  } else if (!recommended && st.latency_excluded_all) {
    result.recommendation_rule = fmt::format(
        "none: no plan meets the latency target ({}; see the latency_target_missed "
        "warnings; --ttft-ms / --tpot-ms set it)",
        latency_targets_text(request, ", "));
    result.recommendation_rule_code = "none_latency";
  }
  // Ordered as pointers, then moved once into that order: by tier (recommended plan first), then
  // by the sort within each tier.
  std::vector<Plan*> order;
  order.reserve(result.plans.size());
  for (Plan& p : result.plans) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(), [&](const Plan* a, const Plan* b) {
    if (a->recommended != b->recommended) return a->recommended;
    if (tier(*a) != tier(*b)) return tier(*a) < tier(*b);
    if (sort == PlanSort::time) {
      if (a->time_seconds() != b->time_seconds()) return a->time_seconds() < b->time_seconds();
      if (a->total_usd() != b->total_usd()) return a->total_usd() < b->total_usd();
    } else {
      if (a->total_usd() != b->total_usd()) return a->total_usd() < b->total_usd();
      if (a->time_seconds() != b->time_seconds()) return a->time_seconds() < b->time_seconds();
    }
    return a->availability_confirmed && !b->availability_confirmed;  // equal cost and time: confirmed first
  });
  if (sort == PlanSort::time) {
    // The time ranking's rule within each tier (order_by_time).
    for (std::size_t b = 0; b < order.size();) {
      std::size_t e = b;
      const bool rec_seg = order[b]->recommended;
      while (e < order.size() && order[e]->recommended == rec_seg && tier(*order[e]) == tier(*order[b])) ++e;
      order_by_time(order, b, e, request);
      b = e;
    }
  }
  std::vector<Plan> ordered;
  ordered.reserve(order.size());
  for (Plan* p : order) ordered.push_back(std::move(*p));
  result.plans = std::move(ordered);
  for (const Plan& p : result.plans) result.plans_demoted += demote && demoted(p);
  result.plans_total = result.plans.size();
}

/// Stage 7b: warnings about the result as a whole.
void add_result_warnings(const PlanRequest& request, const PlanState& st, PlanResult& result) {
  const bool demote = !request.include_flagged;
  // Result-level warnings.
  int best_tier = 3;
  for (const Plan& p : result.plans) best_tier = std::min(best_tier, demote ? p.demotion_tier : 0);
  if (!result.plans.empty()) {
    // Compared among the plans on the recommended plan's price evidence, by the rank the
    // ranking uses (tier, then a stale price's age step: a 925-day-old price is not compared with
    // a 52-day-old one); no recommended plan: the best rank present. A flagged $0.69 H100 is no
    // cheapest job to quote.
    int best_rank = std::numeric_limits<int>::max();
    for (const Plan& p : result.plans) best_rank = std::min(best_rank, p.evidence_rank);
    for (const Plan& p : result.plans) {
      if (p.recommended) best_rank = p.evidence_rank;
    }
    const Plan* cheapest_job = nullptr;
    const Plan* cheapest_rate = nullptr;
    for (const Plan& p : result.plans) {
      if (demote && p.evidence_rank != best_rank) continue;
      if (!cheapest_job || p.total_usd() < cheapest_job->total_usd()) cheapest_job = &p;
      if (!cheapest_rate || p.usd_per_gpu_hour < cheapest_rate->usd_per_gpu_hour) cheapest_rate = &p;
    }
    const bool same_instance = cheapest_rate->provider == cheapest_job->provider &&
                               cheapest_rate->instance_type == cheapest_job->instance_type;
    if (!same_instance && cheapest_rate->usd_per_gpu_hour < cheapest_job->usd_per_gpu_hour) {
      // With its values, so the French and Thai sentences carry the same figures (trial52 #13).
      result.warnings.push_back(PlanWarning{
          PlanWarningCode::cheapest_gpu_hour_not_cheapest_job,
          fmt::format("the cheapest GPU-hour ({} {} at ${:.2f}/GPU-h) is not the cheapest job: ${:.2f} against "
                      "${:.2f} on {} {}",
                      cheapest_rate->provider, cheapest_rate->instance_type, cheapest_rate->usd_per_gpu_hour,
                      cheapest_rate->total_usd(), cheapest_job->total_usd(), cheapest_job->provider,
                      cheapest_job->instance_type),
          {{"rate_provider", cheapest_rate->provider},
           {"rate_instance_type", cheapest_rate->instance_type},
           {"rate_usd", fmt::format("{:.2f}", cheapest_rate->usd_per_gpu_hour)},
           {"rate_job_usd", fmt::format("{:.2f}", cheapest_rate->total_usd())},
           {"job_usd", fmt::format("{:.2f}", cheapest_job->total_usd())},
           {"job_provider", cheapest_job->provider},
           {"job_instance_type", cheapest_job->instance_type}}});
    }
  }
  // The freshness rule recommends a clean price over a cheaper stale one: say by how much
  // (trial of issue 10: a fresh quote was recommended at 4.2× a 52-day-old price, unsaid). The
  // cheapest plan on a stale price (tier 1: dated, unflagged) when the recommended plan is clean
  // and costs at least 10% more.
  const Plan* rec = nullptr;
  for (const Plan& p : result.plans) {
    if (p.recommended) rec = &p;
  }
  if (demote && rec && rec->demotion_tier == 0) {
    const Plan* stale = nullptr;
    for (const Plan& p : result.plans) {
      if (p.demotion_tier == 1 && p.price_age_days && (!stale || p.total_usd() < stale->total_usd())) stale = &p;
    }
    if (stale && stale->total_usd() > 0 && rec->total_usd() >= 1.1 * stale->total_usd()) {
      const double ratio = rec->total_usd() / stale->total_usd();
      const std::string observed = observed_date(*stale);
      PlanWarning w{PlanWarningCode::cheaper_stale_plan,
                    fmt::format("the recommended plan ({} {} × {}, {}) costs {:.1f}× the cheapest plan on a stale price: {} "
                                "{} × {}, {}, price last seen {}, {} days ago (older than {:.0f} days, so ranked after; "
                                "--max-price-age {} ranks it with fresh prices)",
                                rec->provider, rec->instance_type, rec->instances, usd_text(rec->total_usd()), ratio,
                                stale->provider, stale->instance_type, stale->instances, plan_total_text(*stale), observed,
                                *stale->price_age_days, request.stale_after_days, *stale->price_age_days),
                    {{"recommended_provider", rec->provider},
                     {"recommended_instance_type", rec->instance_type},
                     {"recommended_total_usd", fmt::format("{:.2f}", rec->total_usd())},
                     {"ratio", fmt::format("{:.1f}", ratio)},
                     {"provider", stale->provider},
                     {"instance_type", stale->instance_type},
                     {"nodes", fmt::format("{}", stale->instances)},
                     {"total_usd", fmt::format("{:.2f}", stale->total_usd())},
                     {"observed_at", observed},
                     {"age_days", fmt::format("{}", *stale->price_age_days)},
                     {"max_price_age_days", fmt::format("{:.0f}", request.stale_after_days)}}};
      result.warnings.push_back(std::move(w));
    }
  }
  if (demote && rec && st.fresher_too_long.set) {
    // The recommendation passed over a plan on fresher price evidence that runs past the horizon
    // (select_rows; trial 9 #3: a fresh single-node quote for 4,044 days).
    const auto& f = st.fresher_too_long;
    const double horizon_days = request.recommend_horizon_seconds / kSecondsPerDay;
    const std::string age = st.fresher_too_long_age_days ? fmt::format("price {} days old", *st.fresher_too_long_age_days)
                                                         : std::string("undated price");
    PlanWarning w{PlanWarningCode::fresher_plan_too_long,
                  fmt::format("the recommended plan rests on an older price than {} {} × {} ({}, ${:.0f}), passed over "
                              "because it takes {}, more than the {:.0f}-day horizon",
                              f.provider, f.instance_type, f.nodes, age, f.total_usd, days_text(f.time_seconds),
                              horizon_days),
                  {{"provider", f.provider},
                   {"instance_type", f.instance_type},
                   {"nodes", fmt::format("{}", f.nodes)},
                   {"total_usd", fmt::format("{:.2f}", f.total_usd)},
                   {"days", fmt::format("{:.1f}", f.time_seconds / kSecondsPerDay)},
                   {"horizon_days", fmt::format("{:.0f}", horizon_days)}}};
    result.warnings.push_back(std::move(w));
  }
  if (demote && rec && rec->demotion_tier <= 1) {
    // The recommended plan is itself on a dated price; plans on older prices (a later 30-day age
    // step, or undated) rank after it whatever they cost (trial: a 7B pretraining plan 7× cheaper
    // on an undated price was #15, unsaid; a 192-day-old RTX 3090 price at a fifth of the
    // recommended serving cost was #123). Name the cheapest such plan of each kind, its price
    // date (or "undated") and its rank, when the recommended plan costs at least 1.1× it; flagged
    // prices (tier 3) are not quoted: a data-quality rule questions them.
    const std::string rec_date = observed_date(*rec);
    const Plan* older = nullptr;
    const Plan* undated = nullptr;
    std::size_t older_rank = 0, undated_rank = 0;
    for (std::size_t i = 0; i < result.plans.size(); ++i) {
      const Plan& p = result.plans[i];
      if (p.evidence_rank <= rec->evidence_rank || !(p.total_usd() > 0)) continue;
      if (rec->demotion_tier == 1 && p.demotion_tier == 1 && p.price_age_days &&
          (!older || p.total_usd() < older->total_usd()))
        older = &p, older_rank = i + 1;
      if (p.demotion_tier == 2 && (!undated || p.total_usd() < undated->total_usd())) undated = &p, undated_rank = i + 1;
    }
    auto common = [&](const Plan& p, std::size_t rank, double ratio) {
      return std::map<std::string, std::string>{{"recommended_provider", rec->provider},
                                                {"recommended_instance_type", rec->instance_type},
                                                {"recommended_total_usd", fmt::format("{:.2f}", rec->total_usd())},
                                                {"recommended_observed_at", rec_date},
                                                {"ratio", fmt::format("{:.1f}", ratio)},
                                                {"provider", p.provider},
                                                {"instance_type", p.instance_type},
                                                {"nodes", fmt::format("{}", p.instances)},
                                                {"total_usd", fmt::format("{:.2f}", p.total_usd())},
                                                {"price_kind", std::string(price_kind_name(p.cost.price_kind))},
                                                {"rank", fmt::format("{}", rank)}};
    };
    if (older && rec->total_usd() >= 1.1 * older->total_usd()) {
      const double ratio = rec->total_usd() / older->total_usd();
      const std::string observed = observed_date(*older);
      PlanWarning w{PlanWarningCode::cheaper_stale_plan,
                    fmt::format("the recommended plan ({} {} × {}, {}, price last seen {}) costs {:.1f}× a plan on an "
                                "older price: {} {} × {}, {}, price last seen {}, {} days ago, ranked #{} (prices rank "
                                "by age in {:.0f}-day steps; check that price before relying on it)",
                                rec->provider, rec->instance_type, rec->instances, usd_text(rec->total_usd()), rec_date, ratio,
                                older->provider, older->instance_type, older->instances, plan_total_text(*older),
                                observed, *older->price_age_days, older_rank, request.stale_after_days),
                    common(*older, older_rank, ratio)};
      w.values["observed_at"] = observed;
      w.values["age_days"] = fmt::format("{}", *older->price_age_days);
      w.values["max_price_age_days"] = fmt::format("{:.0f}", request.stale_after_days);
      result.warnings.push_back(std::move(w));
    }
    if (undated && rec->total_usd() >= 1.1 * undated->total_usd()) {
      const double ratio = rec->total_usd() / undated->total_usd();
      result.warnings.push_back(PlanWarning{
          PlanWarningCode::cheaper_undated_plan,
          fmt::format("the recommended plan ({} {} × {}, {}{}) costs {:.1f}× a plan on an undated price: {} {} × {}, {}, "
                      "ranked #{} (the source gives no date for that price; check it before relying on it)",
                      rec->provider, rec->instance_type, rec->instances, usd_text(rec->total_usd()),
                      rec_date.empty() ? std::string() : ", price last seen " + rec_date, ratio, undated->provider,
                      undated->instance_type, undated->instances, plan_total_text(*undated), undated_rank),
          common(*undated, undated_rank, ratio)});
    }
  }
  if (demote && !result.plans.empty() && best_tier > st.max_recommendable_tier) {
    // Plans meet the request only on undated or flagged prices: none is recommended; say what
    // the plans on dated, unflagged prices would need.
    std::string what;
    const auto& c = st.cheapest_recommendable;
    const auto& f = st.fastest_recommendable;
    if (request.budget_usd && c.set) {
      what = fmt::format("the cheapest ({} {} × {}) costs ${:.0f}, {:.1f}× the budget (--budget {:.0f})", c.provider,
                         c.instance_type, c.nodes, c.total_usd, c.total_usd / *request.budget_usd, std::ceil(c.total_usd));
    }
    if (request.deadline_seconds && f.set) {
      what += fmt::format("{}the fastest ({} {} × {}) takes {}, {:.1f}× the deadline (--deadline {:.0f}h)",
                          what.empty() ? "" : "; ", f.provider, f.instance_type, f.nodes, days_text(f.time_seconds),
                          f.time_seconds / *request.deadline_seconds, std::ceil(f.time_seconds / 3600.0));
    }
    add_warning(result.warnings, PlanWarningCode::no_clean_plan,
                fmt::format("no plan on a dated, unflagged price meets the {}{}{}; the {} plans listed rest on undated (?) "
                            "or flagged (!) prices and none is recommended",
                            request.deadline_seconds && request.budget_usd ? "deadline and budget"
                            : request.deadline_seconds                     ? "deadline"
                                                                           : "budget",
                            what.empty() ? "" : ": ", what, result.plans_total));
  }
  if (result.plans_demoted > 0 && demote) {
    // Every plan demoted: there is no clean plan to rank after (trial52 #12: "223 plans rank after
    // plans on clean prices" when all 223 were stale).
    const bool none_clean = result.plans_demoted >= result.plans_total;
    add_warning(result.warnings, PlanWarningCode::ranked_after_clean,
                none_clean
                    ? fmt::format("none of the {} plans rests on a clean price: each is stale (~, older than {:.0f} "
                                  "days), undated (?) or flagged (!), ranked in that order (--include-flagged ranks them "
                                  "together; --max-price-age changes the limit)",
                                  result.plans_demoted, request.stale_after_days)
                    : fmt::format("{} plans rank after plans on clean prices: stale (~, older than {:.0f} days), undated (?) "
                                  "or flagged (!) (--include-flagged ranks them together; --max-price-age changes the limit)",
                                  result.plans_demoted, request.stale_after_days));
    // The French and Thai sentence for it (warn_ranked_after_clean_none: warning_text reads "variant").
    if (none_clean) result.warnings.back().values = {{"variant", "none"}, {"plans", fmt::format("{}", result.plans_demoted)}};
  }
  if (!st.spot_rate_unknown.empty()) {
    add_warning(result.warnings, PlanWarningCode::spot_rate_unknown,
                fmt::format("{} offers list a spot price but no preemption rate: spot not planned for them "
                            "(--preemptions-per-day plans it){}",
                            st.spot_rate_unknown.size(),
                            st.spot_rate_unknown_bids.empty()
                                ? std::string()
                                : fmt::format("; {} of them are marketplace bids (vast interruptible: outbid → "
                                              "paused), for which no preemption rate is published",
                                              st.spot_rate_unknown_bids.size())));
  }
  if (!st.gpus_without_perf_figures.empty()) {
    // The sentence names four; every name is in the warning's values ("gpus", JSON), which the
    // sentence points to when it cuts the list short.
    std::string names;
    std::string all_names;
    std::size_t shown = 0;
    for (const std::string& n : st.gpus_without_perf_figures) {
      all_names += (all_names.empty() ? "" : ", ") + n;
      if (++shown <= 4) names += (names.empty() ? "" : ", ") + n;
    }
    if (shown > 4) names += fmt::format(" and {} more (all in --json: warnings[].values.gpus)", shown - 4);
    result.warnings.push_back(PlanWarning{
        PlanWarningCode::gpu_figures_unknown,
        fmt::format("skipped, no published peak FLOP/s or memory bandwidth in the GPU catalog (`gpuplan gpus`): {}", names),
        {{"gpus", all_names}, {"gpu_count", std::to_string(shown)}}});
  }
}

/// Why there is no plan, by how much the closest plans miss, and what would help.
NoPlanReason explain_no_plan(const PlanRequest& request, const PlanState& st, const Infeasible& missed,
                             const Candidates& c, const SearchContext& ctx, const PlanResult& result) {
  const bool training = request.workload == PlanWorkload::training;
  const bool images = request.workload == PlanWorkload::image_generation;
  const double tokens = ctx.tokens;
  const std::vector<Plan*>& infeasible = missed.plans;
  const std::vector<std::size_t>& infeasible_offer = missed.offer_of;
  const std::vector<AdmittedOffer>& admitted = c.admitted;
  const std::size_t nodes_rejects = c.nodes_rejects;
  {
    NoPlanReason np;
    np.largest_gpu_bytes = st.largest_gpu_bytes;
    np.smallest_per_gpu_bytes = std::isfinite(st.smallest_need) ? st.smallest_need : 0;
    np.any_multi_node_offer = st.any_multi_node;
    if (!infeasible.empty()) {
      // Plans exist but miss the deadline or the budget: by how much, and what would help.
      // Quoted from plans on dated, unflagged prices when any exists (max_recommendable_tier):
      // a flagged $0.69 H100 is no basis for "a budget of at least ...".
      const bool demote = !request.include_flagged;
      auto quotable = [&](std::size_t i) { return !demote || infeasible[i]->demotion_tier <= st.max_recommendable_tier; };
      std::size_t fastest_i = infeasible.size(), cheapest_i = infeasible.size();
      for (std::size_t i = 0; i < infeasible.size(); ++i) {
        if (!quotable(i)) continue;
        if (fastest_i == infeasible.size() || infeasible[i]->time_seconds() < infeasible[fastest_i]->time_seconds()) fastest_i = i;
        if (cheapest_i == infeasible.size() || infeasible[i]->total_usd() < infeasible[cheapest_i]->total_usd()) cheapest_i = i;
      }
      const Plan* fastest = infeasible[fastest_i];
      const Plan* cheapest = infeasible[cheapest_i];
      np.fastest = *fastest;
      np.cheapest = *cheapest;
      warn(request, admitted[infeasible_offer[fastest_i]], *np.fastest);
      warn(request, admitted[infeasible_offer[cheapest_i]], *np.cheapest);
      // When even the quoted plans rest on undated or flagged prices, say so.
      auto on_price = [&](const Plan& p) -> std::string {
        if (!demote || p.demotion_tier < 2) return "";
        if (p.demotion_tier == 2) return p.demoted_reason == "undated price" ? ", on an undated price" : ", on a " + p.demoted_reason;
        return fmt::format(", on a price {}", p.demoted_reason);
      };
      // A faster plan on a price that is not quoted (undated, flagged) is named too, so "the
      // fastest plan takes 2.0 h" does not read as false where an undated 99-minute plan exists
      // (trial57 #5); its price is not the basis of the advice.
      const Plan* fastest_any = fastest;
      for (const Plan* p : infeasible)
        if (p->time_seconds() < fastest_any->time_seconds()) fastest_any = p;
      std::string parts;
      if (request.deadline_seconds && fastest->time_seconds() > *request.deadline_seconds) {
        parts = fmt::format("the fastest plan{} ({} {} × {}{}) takes {}, {:.1f}× the deadline of {}",
                            fastest_any != fastest ? " on a dated, unflagged price" : "", fastest->provider,
                            fastest->instance_type, fastest->instances, on_price(*fastest), days_text(fastest->time_seconds()),
                            fastest->time_seconds() / *request.deadline_seconds, days_text(*request.deadline_seconds));
        if (fastest_any != fastest)
          parts += fmt::format(" (faster{}: {} {} × {} takes {})", on_price(*fastest_any), fastest_any->provider,
                               fastest_any->instance_type, fastest_any->instances, days_text(fastest_any->time_seconds()));
      }
      if (request.budget_usd && cheapest->total_usd() > *request.budget_usd) {
        // A budget under $100 keeps its cents (a trial's --budget 0.01 read "the budget of $0").
        // The cost with as many digits as the budget (a trial read "costs $2, 2.2× the budget of
        // $1.00" for $2.20): cents under $100.
        const int cents = *request.budget_usd < 100 || cheapest->total_usd() < 100 ? 2 : 0;
        parts += fmt::format("{}the cheapest plan ({} {} × {}{}) costs ${:.{}f}, {:.1f}× the budget of ${:.{}f}",
                             parts.empty() ? "" : "; ", cheapest->provider, cheapest->instance_type, cheapest->instances,
                             on_price(*cheapest), cheapest->total_usd(), cents,
                             cheapest->total_usd() / *request.budget_usd, *request.budget_usd, cents);
      }
      // The cheapest plan within the deadline and the fastest within the budget (a limit not
      // asked: every plan): raising the OTHER limit to their figures makes them meet both.
      const Plan* cheapest_in_time = nullptr;
      const Plan* fastest_in_budget = nullptr;
      for (std::size_t i = 0; i < infeasible.size(); ++i) {
        if (!quotable(i)) continue;
        const Plan& p = *infeasible[i];
        if ((!request.deadline_seconds || p.time_seconds() <= *request.deadline_seconds) &&
            (!cheapest_in_time || p.total_usd() < cheapest_in_time->total_usd()))
          cheapest_in_time = &p;
        if ((!request.budget_usd || p.total_usd() <= *request.budget_usd) &&
            (!fastest_in_budget || p.time_seconds() < fastest_in_budget->time_seconds()))
          fastest_in_budget = &p;
      }
      if (parts.empty() && request.deadline_seconds && request.budget_usd) {
        // Each limit alone can be met, never both: the cheapest plan that meets the deadline and
        // the fastest plan that meets the budget say by how much.
        parts = "no single plan meets both";
        if (cheapest_in_time)
          parts += fmt::format(": the cheapest plan within the deadline ({} {} × {}) costs ${:.0f} (budget ${:.0f})",
                               cheapest_in_time->provider, cheapest_in_time->instance_type, cheapest_in_time->instances,
                               cheapest_in_time->total_usd(), *request.budget_usd);
        if (fastest_in_budget)
          parts += fmt::format("{} the fastest plan within the budget ({} {} × {}) takes {} (deadline {})",
                               cheapest_in_time ? ";" : ":", fastest_in_budget->provider,
                               fastest_in_budget->instance_type, fastest_in_budget->instances,
                               days_text(fastest_in_budget->time_seconds()), days_text(*request.deadline_seconds));
      }
      np.code = request.deadline_seconds && request.budget_usd ? "misses_deadline_and_budget"
                : request.deadline_seconds                     ? "misses_deadline"
                                                               : "misses_budget";
      np.reason = fmt::format("{} plans fit but none meets the {}: {}", infeasible.size(),
                              request.deadline_seconds && request.budget_usd ? "deadline and budget"
                              : request.deadline_seconds                     ? "deadline"
                                                                             : "budget",
                              parts);
      // Each suggested limit holds when applied as written, keeping the other limit (docs/planner.md
      // "No plan"): the deadline is the fastest plan's within the budget, rounded up to what can be
      // typed; the budget the cheapest plan's within the deadline, rounded up to whole dollars.
      // None of them is below the limit asked (that plan would have been listed).
      if (request.deadline_seconds && fastest_in_budget) {
        const auto [text, seconds] = deadline_at_least(fastest_in_budget->time_seconds());
        np.suggestions.push_back(fmt::format("a deadline of at least {} (--deadline {})",
                                             days_text(seconds), text));
        np.suggestion_codes.push_back("deadline_at_least");
        np.values["deadline_seconds_needed"] = seconds;
      }
      if (request.budget_usd && cheapest_in_time) {
        const double usd = std::ceil(cheapest_in_time->total_usd());
        np.suggestions.push_back(fmt::format("a budget of at least ${:.0f} (--budget {:.0f})", usd, usd));
        np.suggestion_codes.push_back("budget_at_least");
        np.values["budget_usd_needed"] = usd;
      }
      if (request.deadline_seconds && request.budget_usd && !fastest_in_budget && !cheapest_in_time) {
        // No plan meets either limit: both must move; the cheapest plan's figures.
        const auto [text, seconds] = deadline_at_least(cheapest->time_seconds());
        const double usd = std::ceil(cheapest->total_usd());
        np.suggestions.push_back(fmt::format("a deadline of at least {} and a budget of at least ${:.0f} (--deadline {} "
                                             "--budget {:.0f})",
                                             days_text(seconds), usd, text, usd));
        np.suggestion_codes.push_back("deadline_and_budget_at_least");
        np.values["deadline_seconds_needed"] = seconds;
        np.values["budget_usd_needed"] = usd;
      }
      if (request.deadline_seconds && fastest->time_seconds() > *request.deadline_seconds &&
          *request.deadline_seconds <= request.startup_seconds) {
        // The start-up alone takes the deadline: no cluster size or token count can help.
        np.suggestions.push_back(fmt::format("the start-up alone takes {} (--startup-minutes {:.0f}): a deadline above it, or "
                                             "--startup-minutes 0 if the cluster is already running",
                                             days_text(request.startup_seconds), request.startup_seconds / 60.0));
        np.suggestion_codes.push_back("startup_exceeds_deadline");
        np.values["startup_minutes"] = request.startup_seconds / 60.0;
      } else if (request.deadline_seconds && fastest->time_seconds() > *request.deadline_seconds) {
        // Every plan is too slow. The start-up does not shrink with more GPUs or fewer tokens; the
        // rest is taken to scale linearly (an optimistic bound: communication does not shrink).
        const double fixed = request.startup_seconds;
        const double need = (fastest->time_seconds() - fixed) / (*request.deadline_seconds - fixed);
        if (training) {
          // More nodes only where the offer rents more than the search tried (--max-nodes below its
          // limit): the fastest plan already uses every node count up to min(--max-nodes, offer max).
          const Offer& fo = *admitted[infeasible_offer[fastest_i]].offer;
          const bool multi = fo.inter_node_network != InterNodeNetwork::unknown;
          const double offer_cap = multi ? static_cast<double>(fo.max_nodes.value_or(1024)) : 1.0;
          const double nodes_needed = std::ceil(fastest->instances * need);
          // --max-gpus is a ceiling too: nodes it kept out are worth naming with it (trial53 #15).
          const double gpus_needed = nodes_needed * static_cast<double>(fo.gpu_count);
          const bool over_max_gpus = request.max_gpus && gpus_needed > static_cast<double>(*request.max_gpus);
          const bool over_max_nodes = nodes_needed > request.max_nodes;
          if (nodes_needed <= std::min(offer_cap, 1024.0) && (over_max_nodes || over_max_gpus) && !request.gpus_total &&
              !request.nodes_exact) {
            const std::string flags =
                over_max_gpus ? fmt::format("--max-gpus {:.0f}{}", gpus_needed,
                                            over_max_nodes ? fmt::format(" --max-nodes {:.0f}", nodes_needed) : std::string())
                              : fmt::format("--max-nodes {:.0f}", nodes_needed);
            np.suggestions.push_back(fmt::format("about {:.1f}× the GPUs: {:.0f} nodes of {} ({}; {})", need,
                                                 nodes_needed, fastest->instance_type, flags,
                                                 fo.max_nodes ? fmt::format("the offer rents up to {}", *fo.max_nodes)
                                                              : std::string("if the provider rents that many: its limit "
                                                                            "is not published")));
            np.suggestion_codes.push_back("more_gpus");
            np.values["gpu_factor"] = need;
            np.values["nodes_needed"] = nodes_needed;
            if (over_max_gpus) np.values["gpus_needed"] = gpus_needed;
          } else if (request.max_gpus && !request.gpus_total && !request.nodes_exact && st.any_multi_node) {
            // The fastest offer rents one node, but --max-gpus also kept the multi-node offers small.
            np.suggestions.push_back(fmt::format("more GPUs than --max-gpus {} allows: about {:.1f}× the GPUs, on an "
                                                 "offer that rents several nodes",
                                                 *request.max_gpus, need));
            np.suggestion_codes.push_back("more_gpus_than_max");
            np.values["max_gpus"] = *request.max_gpus;
            np.values["gpu_factor"] = need;
          }
          np.suggestions.push_back(fmt::format("a token budget of at most {:.3g} tokens (--tokens)",
                                               tokens / need));
          np.suggestion_codes.push_back("fewer_tokens");
          np.values["tokens_max"] = tokens / need;
          if (request.task == Task::full) {
            np.suggestions.push_back("LoRA or QLoRA (--task lora|qlora) trains far fewer parameters");
            np.suggestion_codes.push_back("use_lora_or_qlora");
          }
        } else if (request.max_gpus && !request.gpus_total && !request.nodes_exact &&
                   2.0 * fastest->instances * fastest->gpus_per_instance > static_cast<double>(*request.max_gpus)) {
          // A batch or image job at the --max-gpus ceiling: more instances split its requests
          // (trial54 #4: only a longer deadline was named).
          np.suggestions.push_back(fmt::format("more GPUs than --max-gpus {} allows: about {:.1f}× the GPUs",
                                               *request.max_gpus, need));
          np.suggestion_codes.push_back("more_gpus_than_max");
          np.values["max_gpus"] = *request.max_gpus;
          np.values["gpu_factor"] = need;
        }
      }
      if (request.budget_usd && cheapest->total_usd() > *request.budget_usd) {
        // Every plan costs too much: fewer tokens, QLoRA, spot.
        // The start-up's rent (every node, --startup-minutes) does not shrink with the tokens: fewer
        // tokens help only when the budget is above it; the rest is taken to scale linearly.
        const double fixed_usd = cheapest->cost.usd_per_hour * cheapest->instances * request.startup_seconds / 3600.0;
        if (training && *request.budget_usd <= fixed_usd) {
          np.suggestions.push_back(fmt::format("the start-up alone costs ${:.2f} on the cheapest plan ({} × {:.0f} min, "
                                               "--startup-minutes): a budget above it",
                                               fixed_usd, cheapest->instances, request.startup_seconds / 60.0));
          np.suggestion_codes.push_back("startup_exceeds_budget");
          np.values["startup_minutes"] = request.startup_seconds / 60.0;
          np.values["startup_usd"] = fixed_usd;
          np.values["startup_instances"] = cheapest->instances;
        } else if (training) {
          const double scale = (*request.budget_usd - fixed_usd) / (cheapest->total_usd() - fixed_usd);
          np.suggestions.push_back(fmt::format("a token budget of at most {:.3g} tokens (--tokens)", tokens * scale));
          np.suggestion_codes.push_back("fewer_tokens_for_budget");
          np.values["tokens_max_for_budget"] = tokens * scale;
          if (request.task == Task::full) {
            np.suggestions.push_back("QLoRA (--task qlora) fits on fewer, cheaper GPUs");
            np.suggestion_codes.push_back("use_qlora_cheaper");
          }
        }
        if (request.allow_spot && training) {  // spot is planned for training only
          np.suggestions.push_back("spot prices (--preemptions-per-day where the rate is unknown)");
          np.suggestion_codes.push_back("spot_prices");
        }
      }
    } else if (result.offers_considered == 0) {
      np.reason = nodes_rejects > 0
                      ? "no offer can be rented at the asked cluster size (--nodes/--gpus needs a known inter-node network "
                        "and at most the offer's max nodes; an offer sold as more nodes than --max-nodes is left out)"
                      : "no offer matches: every offer was filtered out, excluded by a quality flag, unresolved or unpriced";
      np.code = nodes_rejects > 0 ? "no_offer_at_cluster_size" : "no_offer_matches";
      if (nodes_rejects > 0) {
        np.suggestions.push_back("import a quote with the network and node count (`gpuplan import`)");
        np.suggestion_codes.push_back("import_cluster_quote");
      } else {
        // Two suggestions, so that a face that cannot import (a read-only server) drops the
        // second alone (api::drop_import_suggestions).
        np.suggestions.push_back("widen the FILTER");
        np.suggestion_codes.push_back("widen_filter");
        np.suggestions.push_back("import more offers (`gpuplan import FILE`)");
        np.suggestion_codes.push_back("import_offers");
      }
    } else if (result.layouts_evaluated == 0 && training && ctx.smallest_dp_over_batch > 0 && !ctx.first_layout_problem) {
      // Every layout the cluster sizes allow has more data-parallel ranks than the global batch has
      // sequences (e.g. 641 nodes × 8 GPUs: TP ≤ 8 and PP ≤ the layers leave DP ≥ 641, above the
      // default 256 sequences of a full fine-tune): the batch, not a pinned degree, is the cause.
      // The batch is never raised (docs/planner.md "Batch rounding"): say which would run.
      const std::int64_t batch = ctx.global_batch;
      const std::int64_t dp = ctx.smallest_dp_over_batch;
      np.code = "batch_below_dp";
      np.reason = fmt::format(
          "the global batch of {} sequences{} is smaller than the smallest data-parallel degree the cluster sizes allow "
          "(DP {}): each data-parallel rank needs at least one sequence per step",
          batch,
          request.global_batch_seqs > 0 ? std::string()
                                        : fmt::format(" (the default for --task {}, at --seq {})", task_name(request.task),
                                                      request.seq_len),
          dp);
      np.values["global_batch_seqs"] = static_cast<double>(batch);
      np.values["dp_min"] = static_cast<double>(dp);
      np.suggestions.push_back(fmt::format("a global batch of at least {} sequences (--global-batch {})", dp, dp));
      np.suggestion_codes.push_back("global_batch_at_least");
      np.suggestions.push_back(
          fmt::format("fewer GPUs ({}), so that DP is at most {}",
                      request.gpus_total || request.nodes_exact ? "--gpus / --nodes" : "--max-nodes", batch));
      np.suggestion_codes.push_back("fewer_gpus_for_batch");
    } else if (result.layouts_evaluated == 0) {
      const bool pinned = request.pins.any();
      np.reason = ctx.first_layout_problem
                      ? fmt::format("no layout could be sized: {}", *ctx.first_layout_problem)
                      : pinned ? std::string("no parallel layout matches the pinned degrees on the offers' GPU counts (TP × "
                                             "PP must divide the GPUs, TP stays inside a node)")
                               : std::string("no parallel layout matches the offers' GPU counts (TP × PP must divide the "
                                             "GPUs, TP stays inside a node)");
      np.suggestions.push_back(pinned ? "change the pinned layout (--tp --pp --dp --ep) or the cluster size"
                                      : "change the cluster size (--gpus, --nodes)");
      np.code = ctx.first_layout_problem ? "no_layout_sized" : pinned ? "no_layout_matches_pinned" : "no_layout_matches";
      np.suggestion_codes.push_back(pinned ? "change_pinned_layout" : "change_cluster_size");
    } else if (np.smallest_per_gpu_bytes > np.largest_gpu_bytes * (1.0 - request.margin) ||
               (training && !st.any_cluster_fits && st.closest.gpus > 0)) {
      // A serving replica stays inside one instance: more nodes never shrink its need.
      const std::string no_network =
          st.any_multi_node || !training ? "" : ", and no offer has a known inter-node network for multi-node training";
      if (np.smallest_per_gpu_bytes > np.largest_gpu_bytes * (1.0 - request.margin)) {
        np.reason = fmt::format(
            "no layout fits: the smallest per-GPU requirement found is {} but the largest GPU offered has {} ({} usable "
            "with the {:.0f}% margin){}{}",
            short_gb(np.smallest_per_gpu_bytes), short_gb(np.largest_gpu_bytes),
            short_gb(np.largest_gpu_bytes * (1.0 - request.margin)), request.margin * 100.0, no_network,
            ep_overlap_fit_note(request));
      } else {
        // The smallest need and the largest GPU are on different offers: name the cluster that
        // came closest, with its own need and memory (its GPU count is what lowered the need).
        const auto& k = st.closest;
        np.reason = fmt::format(
            "no layout fits on any offer: the closest is {} × {}, which needs {} per GPU and has {} ({} usable with the "
            "{:.0f}% margin); the largest GPU offered ({}) needs more on the GPU counts its offers have{}",
            k.gpus, k.gpu, short_gb(k.need_bytes), short_gb(k.capacity_bytes),
            short_gb(k.capacity_bytes * (1.0 - request.margin)), request.margin * 100.0, short_gb(np.largest_gpu_bytes),
            no_network);
        np.values["closest_gpus"] = k.gpus;
        np.values["closest_need_per_gpu_bytes"] = k.need_bytes;
        np.values["closest_gpu_bytes"] = k.capacity_bytes;
      }
      np.code = "does_not_fit";
      np.values["margin"] = request.margin;
      // Which changes could make the smallest layout fit (trial 9: ZeRO-3 and an 8-bit optimizer
      // were suggested for LoRA at --seq 2000000, where activations alone exceed every GPU): the
      // terms no weight, optimizer or sharding change touches (activations, logits, workspace,
      // CUDA context, fragmentation) at the layout with the smallest requirement. When they
      // alone exceed the largest GPU's usable memory, only a shorter sequence can help; the
      // 8-bit optimizer is offered only when it saves at least 5% (AdamW's 8 B/param of fp32
      // states become 2 B: 75% of the optimizer_state term).
      bool activation_bound = false, optimizer_matters = true;
      // The layout to read the terms at: the smallest need's, or, when that need is on GPUs too
      // small for it while a larger GPU exists (the closest-cluster reason above), the closest
      // cluster's, against its own memory.
      const bool closest_case = np.values.contains("closest_gpus");
      std::optional<std::tuple<ParallelLayout, Recompute, RecomputeModules>> floor_layout = st.smallest_need_layout;
      if (closest_case) floor_layout.emplace(st.closest.layout, st.closest.recompute, st.closest.recompute_modules);
      const double floor_capacity = closest_case ? st.closest.capacity_bytes : np.largest_gpu_bytes;
      if (training && floor_layout) {
        try {
          const MemoryBreakdown m = training_memory(
              ctx.arch, detail::training_memory_request(request, std::get<0>(*floor_layout), std::get<1>(*floor_layout),
                                                       std::get<2>(*floor_layout)));
          const double floor = m.term_bytes("activations") + m.term_bytes("logits") + m.term_bytes("workspace") +
                               m.term_bytes("cuda_context") + m.term_bytes("fragmentation");
          activation_bound = floor > floor_capacity * (1.0 - request.margin);
          optimizer_matters = 0.75 * m.term_bytes("optimizer_state") >= 0.05 * m.total_bytes();
          np.values["unshardable_per_gpu_bytes"] = floor;
        } catch (const std::exception&) {
          // A layout the sizing refuses here (none expected: it was sized in the search): keep the advice.
        }
      }
      if (training && activation_bound) {
        np.suggestions.push_back(fmt::format(
            "a shorter sequence (--seq): activations, logits and workspace alone need {} per GPU at the smallest "
            "layout{}; LoRA/QLoRA, ZeRO-3 or an 8-bit optimizer cannot make it fit",
            short_gb(np.values["unshardable_per_gpu_bytes"]),
            closest_case ? " of the closest cluster, more than its GPUs hold" : ", more than any GPU offered"));
        np.suggestion_codes.push_back("shorter_sequence");
      } else if (training) {
        if (request.task == Task::full) {
          np.suggestions.push_back("fine-tune with LoRA (--task lora) or QLoRA (--task qlora)");
          np.suggestion_codes.push_back("use_lora_or_qlora");
        } else if (request.task == Task::lora) {
          np.suggestions.push_back("QLoRA (--task qlora): the frozen base in 4 bits");
          np.suggestion_codes.push_back("use_qlora");
        }
        const bool stack_without_sharding = request.stack && stack_zero_stage(*request.stack) == 0 && !request.pins.zero_stage;
        if (stack_without_sharding) {
          // --stack hf / unsloth shard nothing (plain DDP): more GPUs do not help, a sharding stack does.
          np.suggestions.push_back(fmt::format("a stack that shards the model (--stack fsdp: ZeRO-3 full shard, or "
                                               "--stack deepspeed: ZeRO-2); --stack {} keeps a whole copy on every GPU",
                                               training_stack_name(*request.stack)));
          np.suggestion_codes.push_back("stack_with_sharding");
        } else if (request.gpus_total || request.nodes_exact) {
          // The cluster is fixed (--gpus / --nodes): --max-nodes does not apply; a larger fixed
          // cluster does (a trial's --gpus 1 was told "more nodes (--max-nodes)").
          const std::string fixed = request.gpus_total ? fmt::format("--gpus {}", *request.gpus_total)
                                                       : fmt::format("--nodes {}", *request.nodes_exact);
          np.suggestions.push_back(fmt::format("more GPUs than {} so that ZeRO-3 shards further", fixed));
          np.suggestion_codes.push_back("more_gpus_than_fixed");
          np.values["gpus"] = request.gpus_total ? *request.gpus_total : 0;
        } else if (request.max_gpus && (st.closest.gpus <= 0 || 2 * st.closest.gpus > *request.max_gpus)) {
          // --max-gpus bounds the cluster: more nodes cannot be tried under it (trial53 #15). It is
          // what binds when the closest cluster could not double under it; otherwise --max-nodes
          // (or the offers) stopped the search first (trial54 #3: --max-gpus 1000 --max-nodes 2).
          np.suggestions.push_back(fmt::format("more GPUs than --max-gpus {} allows, so that ZeRO-3 shards further",
                                               *request.max_gpus));
          np.suggestion_codes.push_back("more_gpus_than_max");
          np.values["max_gpus"] = *request.max_gpus;
        } else {
          np.suggestions.push_back(st.any_multi_node ? "more nodes (--max-nodes) so that ZeRO-3 shards further"
                                                     : "ZeRO-3 over more GPUs: needs an offer with a known inter-node "
                                                       "network (import one, or set it in a user quote)");
          np.suggestion_codes.push_back(st.any_multi_node ? "more_nodes_zero3" : "zero3_needs_network");
        }
        // An 8-bit optimizer only where the request does not run one (trial54 #9).
        if (optimizer_matters && request.optimizer != Optimizer::adamw_8bit) {
          np.suggestions.push_back("a shorter sequence (--seq) or an 8-bit optimizer (--optimizer adamw_8bit)");
          np.suggestion_codes.push_back("shorter_sequence_or_8bit_optimizer");
        } else {
          np.suggestions.push_back("a shorter sequence (--seq)");
          np.suggestion_codes.push_back("shorter_sequence");
        }
      } else if (!images) {
        // Only what the request does not already use (trial51: int4 weights were told to quantise
        // to int4): 16-bit weights may go to FP8 or INT4, 8-bit ones (q8_0: 8.5 bits) to INT4, 4-bit
        // ones (q4_k_m: 4.85 bits) nowhere.
        const double weight_bits = weight_quant_bits(request.quant);
        if (weight_bits > 9.0) {
          np.suggestions.push_back("quantise the weights (--quant int4 or --quant fp8)");
          np.suggestion_codes.push_back("quantise_weights");
        } else if (weight_bits > 5.0) {
          np.suggestions.push_back("4-bit weights (--quant int4)");
          np.suggestion_codes.push_back("quantise_weights_int4");
        }
        if (kv_dtype_bytes(request.kv_dtype) > 1.5) {  // q8_0's block scales: 1.0625 B, still 8-bit
          np.suggestions.push_back("a shorter context (--prompt-tokens, --output-tokens) or an 8-bit KV cache (--kv-dtype fp8)");
          np.suggestion_codes.push_back("shorter_context_or_8bit_kv");
        } else {
          np.suggestions.push_back("a shorter context (--prompt-tokens, --output-tokens)");
          np.suggestion_codes.push_back("shorter_context");
        }
      }
    } else if (request.workload == PlanWorkload::serving && ctx.latency_rejects > 0 && c.plans.empty()) {
      // Every GPU misses the latency target the user gave, even serving one request at a time:
      // more replicas or instances cannot help (TTFT and TPOT are per request); a looser target,
      // a shorter prompt (TTFT) or fewer output tokens' weights per step (quantisation: TPOT) can.
      const bool ttft_miss = request.ttft_seconds && ctx.best_ttft_batch1 > *request.ttft_seconds;
      const bool tpot_miss = request.tpot_seconds && ctx.best_tpot_batch1 > *request.tpot_seconds;
      np.values["ttft_ms_needed"] = std::ceil(ctx.best_ttft_batch1 * 1e3);
      np.values["ttft_ms_lowest"] = ctx.best_ttft_batch1 * 1e3;  // the reason quotes these (rounded as the CLI does)
      if (request.output_tokens == 1) {  // no TPOT exists: the target is TTFT alone (ServingEstimate::tpot_defined)
        np.code = "misses_ttft_target";
        np.reason = fmt::format(
            "no offer meets the TTFT target ({}) even serving one request at a time: the lowest TTFT found is {:.0f} ms; "
            "more replicas or instances do not lower it (it is per request)",
            latency_targets_text(request, ", "), ctx.best_ttft_batch1 * 1e3);
      } else {
        np.code = "misses_latency_target";
        np.reason = fmt::format(
            "no offer meets the latency target ({}) even serving one request at a time: the lowest TTFT found is {:.0f} ms "
            "and the lowest TPOT {:.0f} ms; more replicas or instances do not lower them (they are per request)",
            latency_targets_text(request, ", "), ctx.best_ttft_batch1 * 1e3, ctx.best_tpot_batch1 * 1e3);
        np.values["tpot_ms_needed"] = std::ceil(ctx.best_tpot_batch1 * 1e3);
        np.values["tpot_ms_lowest"] = ctx.best_tpot_batch1 * 1e3;
      }
      if (ttft_miss) {
        np.suggestions.push_back(fmt::format("a TTFT target of at least {:.0f} ms (--ttft-ms {:.0f}), or a shorter prompt "
                                             "(--prompt-tokens: TTFT is the prompt's prefill)",
                                             std::ceil(ctx.best_ttft_batch1 * 1e3), std::ceil(ctx.best_ttft_batch1 * 1e3)));
        np.suggestion_codes.push_back("ttft_at_least");
      }
      if (tpot_miss && weight_quant_bits(request.quant) > 5.0) {
        np.suggestions.push_back(fmt::format("a TPOT target of at least {:.0f} ms (--tpot-ms {:.0f}), or lighter weights "
                                             "(--quant fp8 or int4: each output token reads every weight once)",
                                             std::ceil(ctx.best_tpot_batch1 * 1e3), std::ceil(ctx.best_tpot_batch1 * 1e3)));
        np.suggestion_codes.push_back("tpot_at_least");
      } else if (tpot_miss) {  // already 4-bit weights: no lighter ones to suggest
        np.suggestions.push_back(fmt::format("a TPOT target of at least {:.0f} ms (--tpot-ms {:.0f})",
                                             std::ceil(ctx.best_tpot_batch1 * 1e3), std::ceil(ctx.best_tpot_batch1 * 1e3)));
        np.suggestion_codes.push_back("tpot_at_least_only");
      }
    } else if (!training && !images && c.fixed_load.set) {
      // --gpus / --nodes fixed the cluster and its replicas cannot carry the load (the offer that
      // comes closest is quoted).
      const FixedClusterLoad& f = c.fixed_load;
      const std::int64_t gpus_held = f.replicas_held * f.tp;
      const std::int64_t gpus_needed = f.replicas_needed * f.tp;
      const std::int64_t instances_needed = (gpus_needed + f.gpus_per_instance - 1) / f.gpus_per_instance;
      np.reason = fmt::format("layouts fit, but {} GPU{} {} {} replica{} of TP {} and the load needs {} ({} GPUs)", gpus_held,
                              gpus_held == 1 ? "" : "s", gpus_held == 1 ? "holds" : "hold", f.replicas_held,
                              f.replicas_held == 1 ? "" : "s", f.tp, f.replicas_needed, gpus_needed);
      np.suggestions.push_back(fmt::format("at least {} GPUs ({} × {}-GPU instances: --gpus {}), or a lower load",
                                           instances_needed * f.gpus_per_instance, instances_needed,
                                           f.gpus_per_instance, instances_needed * f.gpus_per_instance));
      np.code = "load_exceeds_cluster";
      np.values["gpus"] = static_cast<double>(gpus_held);
      np.values["replicas_held"] = static_cast<double>(f.replicas_held);
      np.values["replicas_needed"] = static_cast<double>(f.replicas_needed);
      np.values["tp"] = f.tp;
      np.values["gpus_needed"] = static_cast<double>(instances_needed * f.gpus_per_instance);
      np.suggestion_codes.push_back("gpus_at_least");
    } else if (!training && !images && request.max_gpus) {
      // --max-gpus caps the instances before --max-nodes does on every offer it leaves (trial53 #2:
      // the reason named --max-nodes 256, which the user never set).
      np.reason = fmt::format("layouts fit, but the load needs more GPUs than --max-gpus {} allows", *request.max_gpus);
      np.suggestions.push_back("raise --max-gpus or lower the load");
      np.code = "exceeds_max_gpus";
      np.values["max_gpus"] = *request.max_gpus;
      np.suggestion_codes.push_back("raise_max_gpus");
    } else if (!training && !images) {
      np.reason = fmt::format("layouts fit, but the load needs more than --max-nodes {} instances", request.max_nodes);
      np.suggestions.push_back("raise --max-nodes or lower the load");
      np.code = "exceeds_max_nodes";
      np.values["max_nodes"] = request.max_nodes;
      np.suggestion_codes.push_back("raise_max_nodes");
    } else if (training && c.goodput_rejects.count > 0) {
      // Every cluster that holds a layout fails faster than it can checkpoint and restart (trial48:
      // --restart-seconds 1e12 and --checkpoint-write-gbps 1e-7 were told "no usable price").
      const GoodputEstimate& g = *c.goodput_rejects.example;
      const auto span = [](double sec) {
        if (sec < 120) return fmt::format("{:.0f} s", sec);
        if (sec < 7200) return fmt::format("{:.0f} min", sec / 60);
        if (sec < 2 * 86400.0) return fmt::format("{:.1f} h", sec / 3600);
        if (sec < 730 * 86400.0) return fmt::format("{:.0f} days", sec / 86400);
        return fmt::format("{:.3g} years", sec / (365.25 * 86400));
      };
      np.reason = fmt::format(
          "layouts fit, but failures come faster than the run can checkpoint and restart: the cluster fails every {} "
          "on average, and each failure costs half a checkpoint interval plus the {} restart (one checkpoint write "
          "takes {}): the run never finishes",
          span(g.mtbf_seconds), span(request.restart_seconds), span(g.checkpoint_write_seconds));
      np.suggestions.push_back("a faster checkpoint write (--checkpoint-write-gbps) or a shorter restart (--restart-seconds)");
      np.code = "goodput_infeasible";
      np.values["mtbf_hours"] = g.mtbf_seconds / 3600.0;
      np.values["restart_seconds"] = request.restart_seconds;
      np.values["checkpoint_write_seconds"] = g.checkpoint_write_seconds;
      np.suggestion_codes.push_back("faster_checkpoint_or_restart");
    } else if (st.spot_rate_unknown.empty() && st.spot_rate_too_high > 0) {
      np.reason = fmt::format(
          "layouts fit but only spot prices were left, and at {:g} preemptions per instance-day each preemption loses "
          "more than the time between preemptions (checkpoint interval and restart): the job never finishes",
          st.spot_rate_too_high);
      np.suggestions.push_back("a lower --preemptions-per-day if the rate is wrong, or on-demand or reserved offers");
      np.code = "spot_preempted_too_often";
      np.values["preemptions_per_day"] = st.spot_rate_too_high;
      np.suggestion_codes.push_back("lower_preemption_rate");
    } else {
      np.reason = "layouts fit but no price of the fitting offers could be used (spot without a preemption rate)";
      np.suggestions.push_back("give --preemptions-per-day, or allow other offers");
      np.code = "no_usable_price";
      np.suggestion_codes.push_back("give_preemption_rate");
    }
    return np;
  }
}

}  // namespace

std::string_view plan_warning_code_name(PlanWarningCode c) noexcept {
  switch (c) {
    case PlanWarningCode::pcie_multi_gpu: return "pcie_multi_gpu";
    case PlanWarningCode::link_assumed: return "link_assumed";
    case PlanWarningCode::max_nodes_assumed: return "max_nodes_assumed";
    case PlanWarningCode::multi_node_network: return "multi_node_network";
    case PlanWarningCode::memory_mismatch: return "memory_mismatch";
    case PlanWarningCode::offer_flagged: return "offer_flagged";
    case PlanWarningCode::not_confirmed_available: return "not_confirmed_available";
    case PlanWarningCode::price_date_unknown: return "price_date_unknown";
    case PlanWarningCode::stale_price: return "stale_price";
    case PlanWarningCode::egress_storage_share: return "egress_storage_share";
    case PlanWarningCode::fp16_without_bf16: return "fp16_without_bf16";
    case PlanWarningCode::latency_target_missed: return "latency_target_missed";
    case PlanWarningCode::fp32_math_fallback: return "fp32_math_fallback";
    case PlanWarningCode::seq_exceeds_context: return "seq_exceeds_context";
    case PlanWarningCode::kv_heads_replicated: return "kv_heads_replicated";
    case PlanWarningCode::cheaper_stale_plan: return "cheaper_stale_plan";
    case PlanWarningCode::cheaper_undated_plan: return "cheaper_undated_plan";
    case PlanWarningCode::lora_cheaper_than_qlora: return "lora_cheaper_than_qlora";
    case PlanWarningCode::gddr_serving: return "gddr_serving";
    case PlanWarningCode::spot_not_cheaper: return "spot_not_cheaper";
    case PlanWarningCode::marketplace_bid: return "marketplace_bid";
    case PlanWarningCode::reserved_commitment: return "reserved_commitment";
    case PlanWarningCode::billing_assumption: return "billing_assumption";
    case PlanWarningCode::batch_adjusted: return "batch_adjusted";
    case PlanWarningCode::uneven_pipeline: return "uneven_pipeline";
    case PlanWarningCode::long_run: return "long_run";
    case PlanWarningCode::low_goodput: return "low_goodput";
    case PlanWarningCode::cheapest_gpu_hour_not_cheapest_job: return "cheapest_gpu_hour_not_cheapest_job";
    case PlanWarningCode::spot_rate_unknown: return "spot_rate_unknown";
    case PlanWarningCode::gpu_figures_unknown: return "gpu_figures_unknown";
    case PlanWarningCode::ranked_after_clean: return "ranked_after_clean";
    case PlanWarningCode::no_clean_plan: return "no_clean_plan";
    case PlanWarningCode::fresher_plan_too_long: return "fresher_plan_too_long";
    case PlanWarningCode::idle_gpus: return "idle_gpus";
    case PlanWarningCode::min_nodes_billed: return "min_nodes_billed";
    case PlanWarningCode::memory_over_capacity: return "memory_over_capacity";
    case PlanWarningCode::moe_dispatcher_assumed: return "moe_dispatcher_assumed";
    case PlanWarningCode::fp8_weight_only: return "fp8_weight_only";
    case PlanWarningCode::billing_minimum: return "billing_minimum";
    case PlanWarningCode::time_uncalibrated: return "time_uncalibrated";
    case PlanWarningCode::hybrid_activations_approximate: return "hybrid_activations_approximate";
  }
  return "unknown";
}

std::optional<OfferMemoryFloor> plan_memory_floor(const PlanRequest& request, const ModelArch& arch) {
  if (request.workload == PlanWorkload::image_generation || arch.total_params() <= 0) return std::nullopt;
  const double params = static_cast<double>(arch.total_params());
  double bytes_per_weight = 2;
  OfferMemoryFloor f;
  if (request.workload == PlanWorkload::training) {
    if (request.task == Task::qlora) {
      bytes_per_weight = 0.5;
    } else if (request.precision == TrainPrecision::fp32 || request.precision == TrainPrecision::tf32) {
      bytes_per_weight = 4;
    }
    f.multi_node = true;
    int nodes = request.max_nodes;
    if (request.nodes_exact) nodes = std::max(nodes, *request.nodes_exact);
    if (request.gpus_total) nodes = std::max(nodes, *request.gpus_total);
    f.max_nodes_assumed = std::max(nodes, 1);
  } else {
    bytes_per_weight = weight_quant_bits(request.quant) / 8.0;
  }
  f.cluster_bytes = params * bytes_per_weight / (1.0 - request.margin);
  return f;
}

/// Stage 7c (QLoRA only): QLoRA's 4-bit base buys memory with time (the dequantisation overhead,
/// and data parallelism only, see pp_candidates); when the recommended plan's machine holds the
/// 16-bit model too, plain LoRA on it is often faster and cheaper (a trial of issue 7: 70B QLoRA
/// recommended 1×B200 for $189 where LoRA on that B200 finishes for less). The same offer at the
/// same GPU count is planned again with task LoRA (same tokens, pins, deadline and budget, the
/// cheapest plan); when it costs at least 5% less, the result says so with both totals and times
/// (docs/planner.md "Warnings"). Nothing is re-ranked: the user asked for QLoRA.
namespace {
void add_lora_alternative(const PlanRequest& request, const ModelArch& arch, const std::vector<Offer>& offers,
                          const GpuCatalog& gpus, BillingLookup billing_of, const PerfAssumptions& assumptions,
                          PlanResult& result) {
  const Plan* rec = nullptr;
  for (const Plan& p : result.plans) {
    if (p.recommended) rec = &p;
  }
  if (!rec) return;
  const auto offer = std::find_if(offers.begin(), offers.end(), [&](const Offer& o) { return o.id == rec->offer_id; });
  if (offer == offers.end()) return;
  PlanRequest lora = request;
  lora.task = Task::lora;
  lora.gpus_total = rec->gpus_per_instance * rec->instances;
  lora.nodes_exact.reset();
  lora.sort = PlanSort::cost;
  lora.pareto_only = false;
  lora.limit = 1;
  PlanResult alt;
  try {
    alt = plan(lora, arch, std::vector<Offer>{*offer}, gpus, billing_of, assumptions);
  } catch (const Error&) {
    return;  // a pin or option LoRA cannot take: no comparison to state
  }
  if (alt.plans.empty()) return;
  const Plan& l = alt.plans.front();
  if (!(l.total_usd() <= 0.95 * rec->total_usd())) return;
  const std::string layout = fmt::format("TP{} PP{} DP{}", l.layout.tp, l.layout.pp, l.layout.dp);
  result.warnings.push_back(PlanWarning{
      PlanWarningCode::lora_cheaper_than_qlora,
      fmt::format("16-bit LoRA fits the recommended machine too ({} {} × {}, {}): {} in {}, against {} in {} for QLoRA "
                  "(--task lora); QLoRA saves memory, not money, where the 16-bit model fits",
                  rec->provider, rec->instance_type, rec->instances, layout, usd_text(l.total_usd()), days_text(l.time_seconds()),
                  usd_text(rec->total_usd()), days_text(rec->time_seconds())),
      {{"provider", rec->provider},
       {"instance_type", rec->instance_type},
       {"nodes", fmt::format("{}", rec->instances)},
       {"lora_layout", layout},
       {"lora_total_usd", fmt::format("{:.2f}", l.total_usd())},
       {"qlora_total_usd", fmt::format("{:.2f}", rec->total_usd())},
       {"lora_hours", fmt::format("{:.1f}", l.time_seconds() / 3600)},
       {"qlora_hours", fmt::format("{:.1f}", rec->time_seconds() / 3600)}}});
}
}  // namespace

PlanResult plan(const PlanRequest& request, const ModelArch& arch, const std::vector<Offer>& offers,
                const GpuCatalog& gpus, BillingLookup billing_of, const PerfAssumptions& assumptions, SearchMemo* memo,
                const std::string& memo_key) {
  PlanResult result;
  result.model_name = arch.name;
  result.sort_applied = request.effective_sort();
  check_request_for_model(request, arch);
  if (!request.today.empty()) {
    // --today before every current price of the offers read: each price would be observed in
    // the future and its age negative (never stale). A one-line error, exit 2 (docs/planner.md
    // "Price evidence"): a typo in the year, not a plan to make.
    require_today_not_before_observations(request.today, offers, "--today");
  }
  const bool training = request.workload == PlanWorkload::training;
  const double tokens = training ? request.training_tokens() : 0;
  result.training_tokens = tokens;

  SearchContext ctx{request, arch, assumptions, 0, 0, 0, std::nullopt, std::nullopt, std::nullopt,
                    searched_recipe_modules(request, arch), {}, {}, {}, {}, {}, {}, false, 0, kInf, kInf, {}, 0,
                    nullptr, nullptr, {}};
  ctx.global_batch = training ? request.effective_global_batch_seqs() : 0;
  ctx.tokens = tokens;
  // The default global batch depends on the token budget when the budget is below it
  // (PlanRequest::effective_global_batch_seqs), so the memo's physics key carries the batch.
  const std::string memo_key_with_batch =
      memo_key.empty() ? std::string() : memo_key + "\x1fglobal_batch=" + std::to_string(ctx.global_batch);
  if (memo && !memo_key.empty()) {
    ctx.memo = memo;
    ctx.memo_key = &memo_key_with_batch;
  }
  PlanState st;
  if (!request.today.empty()) st.today_days = days_since_epoch(request.today);
  st.assumptions = &assumptions;

  Candidates c = collect_candidates(request, arch, offers, gpus, billing_of, ctx, st, result);
  Infeasible missed = select_rows(request, arch, c, st, result);
  order_rows(request, st, result);
  st.unique_spot_rate_unknown();
  add_result_warnings(request, st, result);
  if (request.task == Task::qlora && training) add_lora_alternative(request, arch, offers, gpus, billing_of, assumptions, result);
  if (auto w = context_warning(request, arch)) result.warnings.push_back(*w);
  if (request.pareto_only) {
    // The recommended plan stays (chosen by the same evidence rule as without --pareto: clean,
    // dated prices first), even when a flagged, undated or old offer dominates it on the front.
    std::erase_if(result.plans, [](const Plan& p) { return !p.on_pareto_front && !p.recommended; });
  }
  if (result.plans.size() > request.limit) result.plans.resize(request.limit);
  // Stage 7, the caveats of each plan shown (formatted sentences: only for the plans returned).
  if (!result.plans.empty()) {
    for (Plan& p : result.plans) {
      const AdmittedOffer& a = c.admitted[c.row_offer.at(p.offer_id)];
      if (a.billing) p.billing = *a.billing;
      p.serving_tp_choice = serving_tp_choice_text(request, p.serving_tp_options);  // materialize left it
      warn(request, a, p);
      // The recommendation on a node count the source does not back (max_nodes_assumed: the offer
      // names its network but not how many instances rent together) says so in its own line, not
      // only in the plan's warnings (trial: 256 × 8 MI300X on Azure for a 7B pretraining, 32 ×
      // a2-megagpu-16g for 70B LoRA at --tp 16, both on assumed capacity, recommended unsaid).
      if (p.recommended && p.instances > 1 && a.max_nodes_assumed) {
        result.recommendation_rule += fmt::format(
            "; its {} nodes are assumed: the source names {}'s network but not how many {} instances can be rented "
            "together (ask the provider; --max-nodes caps the count)",
            p.instances, p.provider, p.instance_type);
        result.recommended_nodes_assumed = true;
      }
    }
  }

  if (result.plans_total == 0) {
    missed.storage.reserve(missed.index.size());
    for (std::size_t i = 0; i < missed.index.size(); ++i) {
      const PriceObservation* chosen = nullptr;
      Plan& p = missed.storage.emplace_back(materialize(request, arch, c, missed.index[i], st, chosen));
      describe_offer(request, arch, c.admitted[missed.offer_of[i]], chosen, p);
    }
    for (Plan& p : missed.storage) missed.plans.push_back(&p);
    result.no_plan = explain_no_plan(request, st, missed, c, ctx, result);
    say_context_first(request, arch, *result.no_plan);
  }
  return result;
}

std::optional<Plan> estimate_run(const PlanRequest& request, const ModelArch& arch, const EstimateCluster& c,
                                 std::string& why, const PerfAssumptions& assumptions) {
  check_request_for_model(request, arch);
  if (request.workload != PlanWorkload::training) {
    throw_invalid_coded("--task", "estimate_training_only", {}, "estimate times training runs", "pretrain, full, lora or qlora");
  }
  if (!c.gpu) throw_invalid_coded("--gpu", "gpu_missing", {}, "no GPU given", "a GPU from `gpuplan gpus`");
  // A GPU without any FLOP/s figure in the catalog cannot be timed (trial62 #7: the MI350X, whose FLOPS cells are
  // not in the stored sources, read "no layout fits" with 259 GB usable for 38 GB).
  if (!c.gpu->dense_flops(Dtype::bf16) && !c.gpu->dense_flops(Dtype::fp16) && !c.gpu->dense_flops(Dtype::fp32))
    throw_invalid_coded("--gpu", "gpu_flops_unknown", {{"gpu", c.gpu->name}},
                        fmt::format("{}: the GPU catalog has no FLOP/s figure for it (data/gpus.csv, not in the stored "
                                    "sources), so a step cannot be timed",
                                    c.gpu->name),
                        "a GPU with published FLOP/s (`gpuplan gpus`)");
  if (c.nodes > 1 && !(c.inter_node_bytes_per_s > 0)) {
    throw_invalid_coded("--inter-node-gbit-per-s", "network_speed_missing", {}, "a multi-node run needs the network speed",
                        "Gb/s per node, e.g. 400");
  }
  if (request.pins.tp && *request.pins.tp > c.gpus_per_node) {
    throw_invalid_coded("--tp", "tp_exceeds_node",
                        {{"tp", fmt::format("{}", *request.pins.tp)}, {"per_node", fmt::format("{}", c.gpus_per_node)}},
                        fmt::format("tp {} exceeds the {} GPUs per node", *request.pins.tp, c.gpus_per_node),
                        "tp ≤ GPUs per node (tensor parallelism stays inside a node)");
  }
  Offer offer;
  offer.id = "estimate";
  offer.gpu_name = c.gpu->name;
  offer.gpu_count = c.gpus_per_node;
  offer.intra_node_link = c.link;
  if (c.intra_node_bytes_per_s > 0) offer.intra_node_link_bytes_per_s = c.intra_node_bytes_per_s * 2.0;
  AdmittedOffer a;
  a.offer = &offer;
  a.spec = c.gpu;
  a.capacity_bytes = c.gpu->fit_memory_bytes();  // as plan() and `gpuplan size`
  a.inter_bits = c.inter_node_bytes_per_s * 8.0;
  SearchContext ctx{request, arch, assumptions, 0, 0, 0, std::nullopt, std::nullopt, std::nullopt,
                    searched_recipe_modules(request, arch), {}, {}, {}, {}, {}, {}, false, 0, kInf, kInf, {}, 0,
                    nullptr, nullptr, {}};
  ctx.global_batch = request.effective_global_batch_seqs();
  ctx.tokens = request.training_tokens();
  ClusterOutcomes cache;
  const ClusterKey key = key_for(a, c.nodes);
  const SearchOutcome* found = &search_cluster(ctx, cache, key);
  // --ignore-memory: a layout the memory model rejects (a run the user knows runs) is timed
  // anyway and said not to fit. Of the layouts the pins leave, the ones closest to fitting are
  // timed: the search reruns on a GPU just large enough for the smallest requirement + 1%
  // (kIgnoreMemoryTolerance), so an unpinned search does not jump to the fastest layout of an
  // unbounded GPU (no recomputation, the largest micro-batch: trial37 D2); a fully pinned
  // layout is that one layout.
  constexpr double kIgnoreMemoryTolerance = 0.01;
  AdmittedOffer unbounded = a;
  ClusterOutcomes cache_unbounded;
  std::optional<double> over_capacity_bytes;
  if (!found->fits && request.ignore_memory && ctx.layouts_evaluated > 0) {
    over_capacity_bytes = found->smallest_per_gpu_bytes;
    unbounded.capacity_bytes = found->smallest_per_gpu_bytes * (1.0 + kIgnoreMemoryTolerance) / (1.0 - request.margin);
    found = &search_cluster(ctx, cache_unbounded, key_for(unbounded, c.nodes));
  }
  const SearchOutcome& o = *found;
  if (!o.fits) {
    why = ctx.layouts_evaluated == 0
              ? fmt::format("no layout could be sized: {}", ctx.first_layout_problem.value_or("no layout matches the pins"))
              : fmt::format("no layout fits: the smallest per-GPU requirement is {} but the {} has {} ({} usable with the "
                            "{:.0f}% margin){}",
                            short_gb(o.smallest_per_gpu_bytes), c.gpu->name, short_gb(a.capacity_bytes),
                            short_gb(a.capacity_bytes * (1 - request.margin)), request.margin * 100,
                            ep_overlap_fit_note(request));
    return std::nullopt;
  }
  std::optional<Plan> p(std::in_place);
  if (!assemble(request, arch, assumptions, a, c.nodes, key, o, checkpoint_sizes(request, arch), dataset_bytes(request, arch),
                ctx.tokens, *p)) {
    why = "failures come faster than a restart: the run cannot make progress (goodput model)";
    return std::nullopt;
  }
  describe_offer(request, arch, a, nullptr, *p);
  if (auto w = context_warning(request, arch)) p->warnings.push_back(*w);
  add_time_uncalibrated(*c.gpu, p->warnings);
  if (over_capacity_bytes) {
    p->gpu_memory_capacity_bytes = a.capacity_bytes;
    add_warning(p->warnings, PlanWarningCode::memory_over_capacity,
                fmt::format("gpuplan's memory model puts this layout at {} per GPU, above the {} usable on the {} ({} "
                            "with the {:.0f}% margin): timed as asked (--ignore-memory), the layout closest to fitting "
                            "that the pins allow",
                            short_gb(p->per_gpu_memory_bytes), short_gb(a.capacity_bytes * (1 - request.margin)),
                            c.gpu->name, short_gb(a.capacity_bytes), request.margin * 100));
    p->warnings.back().values = {{"per_gpu_gb", fmt::format("{:.1f}", p->per_gpu_memory_bytes / 1e9)},
                                 {"capacity_gb", fmt::format("{:.1f}", a.capacity_bytes / 1e9)},
                                 {"usable_gb", fmt::format("{:.1f}", a.capacity_bytes * (1 - request.margin) / 1e9)}};
  }
  p->provider.clear();
  p->instance_type.clear();
  p->regions.clear();
  // The run as plan() times it: the fixed start-up, then the goodput wall time.
  p->cost.startup_seconds = request.startup_seconds;
  p->cost.run_seconds = request.startup_seconds + (p->goodput ? p->goodput->wall_seconds : p->work_seconds);
  p->cost.instances = c.nodes;
  return p;
}

}  // namespace gpuplan
