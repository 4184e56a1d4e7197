#pragma once
/// Planner layer: the one request struct of `gpuplan plan` (STYLE.md §6). The CLI and the server
/// fill it; validate() checks it; plan() (planner.hpp) answers it.
///
/// Units: tokens, seconds, bytes (GB = 1e9), USD, requests/s. Every field states its default.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_source.hpp"
#include "sizing/memory.hpp"
#include "sizing/serving_perf.hpp"
#include "sizing/workload_defaults.hpp"

namespace gpuplan {

/// The largest --micro-batch a plan may pin (PlanRequest::validate; `size` accepts kMaxMicroBatchSeqs).
inline constexpr int kMaxPinnedMicroBatch = 65536;

/// What to plan. Training tasks reuse sizing's Task; serving splits into a service for a
/// duration and a batch generation job; image generation uses a diffusion model.
enum class PlanWorkload {
  training,          ///< pretrain / full / lora / qlora for a token budget
  serving,           ///< serve at --rps or --concurrency for --hours
  batch_generation,  ///< generate --requests completions as fast/cheap as possible
  image_generation,  ///< diffusion: --images at --width × --height, --steps
};
std::string_view plan_workload_name(PlanWorkload w) noexcept;  ///< "training", "serving", ...

/// Ranking of the printed plans. `recommended` (the default): with --deadline or with both
/// --deadline and --budget, cheapest first; with --budget only, fastest first; with neither,
/// the recommended plan (recommendation rule, docs/planner.md) first, then by cost.
enum class PlanSort { recommended, cost, time };
std::string_view plan_sort_name(PlanSort s) noexcept;  ///< "recommended", "cost", "time"

/// Layout degrees the user pinned (the flags of `gpuplan size`: --tp --pp --dp --ep --cp --zero
/// --micro-batch --recompute --virtual-stages). nullopt = searched. A pinned value is kept in
/// every plan; offers that cannot take it are skipped.
struct LayoutPins {
  std::optional<int> tp, pp, dp, ep;
  std::optional<int> cp;               ///< context parallelism: only 1 (not modelled yet)
  std::optional<int> zero_stage;       ///< 0..3
  std::optional<int> micro_batch;      ///< sequences per micro-batch per GPU
  std::optional<int> virtual_stages;   ///< interleaved pipeline chunks per GPU
  std::optional<Recompute> recompute;
  /// --expert-tp: expert tensor-parallel degree (MoE; Megatron-Core expert_tensor_parallel_size).
  /// Unset = tp (Megatron-Core's default). With expert_tp < tp the EP group spans the TP ranks, so
  /// ep must divide tp·dp/expert_tp (not dp).
  std::optional<int> expert_tp;
  bool any() const {
    return tp || pp || dp || ep || cp || zero_stage || micro_batch || virtual_stages || recompute || expert_tp;
  }
};

/// Parses a duration "72h", "30d", "2w", "90m", "3600s" or a bare number of `bare_unit_seconds`
/// (hours by default; --max-price-age: days) into seconds. Throws Error{invalid_input} (where =
/// `flag`, the text as typed) for anything else, zero or negative.
double parse_duration_seconds(std::string_view text, const std::string& flag, double bare_unit_seconds = 3600.0);

struct PlanRequest {
  // ---- model ----
  ModelSource model;  ///< where the architecture comes from (resolved at the edge: resolve_model)
  /// sizing Task: pretrain, full, lora, qlora, or serve (serving / batch / images). Default lora.
  Task task = workload_defaults::kTask;
  PlanWorkload workload = PlanWorkload::training;

  // ---- training (workload == training) ----
  std::optional<double> tokens;          ///< --tokens: tokens to train on in total (e.g. 2e12)
  std::optional<double> dataset_tokens;  ///< --dataset-tokens: tokens in the dataset (× epochs)
  double epochs = 1;                     ///< --epochs, > 0, used with dataset_tokens
  std::int64_t seq_len = workload_defaults::kSeqLen;           ///< --seq: tokens per sequence
  /// --global-batch: sequences per optimizer step; 0 = default: 4 Mi tokens for pretrain
  /// (Llama 2/3 used 4M tokens per step), 1 Mi tokens for full fine-tunes, 128 Ki for LoRA/QLoRA,
  /// rounded to a power of two of sequences (≥ 1).
  std::int64_t global_batch_seqs = 0;
  TrainPrecision precision = workload_defaults::kPrecision;  ///< --precision
  Optimizer optimizer = workload_defaults::kOptimizer;                 ///< --optimizer
  int lora_rank = workload_defaults::kLoraRank;                                     ///< --lora-rank
  /// --stack: the training stack (sizing/memory.hpp TrainingStack). It sets the memory behaviour
  /// (apply_stack_defaults: activation profile, fp32 gradient partition/accumulation, chunked
  /// cross-entropy, offloaded checkpoints), the ZeRO stage searched when --zero is not pinned
  /// (megatron: the distributed optimizer = 1; fsdp 3; deepspeed 2; hf and unsloth: 2 and 3),
  /// unsloth's full recompute, the parallelism searched (hf, deepspeed and unsloth shard by data
  /// parallelism only: TP = PP = EP = 1, a pinned --tp/--pp/--ep above 1 is refused as
  /// stack_layout_unsupported), and the kernel efficiency of the step (megatron: fused kernels at
  /// the base efficiencies; the others eager, sizing/perf.hpp eager_efficiency_factor).
  /// nullopt = hf for the step time and the memory defaults of TrainingMemoryRequest.
  std::optional<TrainingStack> stack;
  /// --ep-overlap: the EP all-to-alls of one micro-batch overlap another's compute (Megatron-Core
  /// --overlap-moe-expert-parallel-comm; TrainingStepRequest::ep_overlap_with_compute).
  bool ep_overlap = false;
  /// --tp-comm-overlap: TP collectives overlapped with the GEMMs (Transformer Engine userbuffers;
  /// TrainingStepRequest::tp_comm_overlap). Dense MHA/GQA decoders with TP > 1 only.
  bool tp_comm_overlap = false;
  /// --grads-16bit (needs --stack megatron): gradient buffers, their accumulation and their DP
  /// reduce in the parameters' 16-bit dtype (Megatron grad_reduce_in_fp32=False, which every
  /// Megatron-Bridge performance recipe sets: scripts/performance/configs/*/…_llm_pretrain.py at
  /// 97ad8cc6f through 63b08b397). false = the stack's default: Megatron keeps main_grad in fp32
  /// (4 B/param; Megatron-LM param_and_grad_buffer.py: grad_dtype = torch.float if
  /// grad_reduce_in_fp32 else param dtype; Megatron-Bridge mixed_precision.py bf16_mixed sets it true).
  bool grads_16bit = false;
  /// --moe-imbalance: tokens the busiest EP rank receives / the mean, ≥ 1 (default
  /// PerfAssumptions::moe_load_imbalance = 1.2; 1 = force-balanced routing, as NVIDIA's published
  /// MoE benchmarks run).
  std::optional<double> moe_load_imbalance;
  /// --moe-dispatcher: the MoE token dispatcher (alltoall, deepep, hybridep; sizing/perf.hpp
  /// MoeDispatcher). nullopt = alltoall, Megatron-Core's default in its MoE recipes. MoE models on a
  /// stack that runs EP only (refused on dense models and on hf/deepspeed/unsloth).
  std::optional<MoeDispatcher> moe_dispatcher;
  /// --cuda-graph: Megatron-Core's cuda_graph_impl: none (default), local (per-layer graphs: timed
  /// as none, the MoE host sync stays), transformer_engine (Transformer Engine's partial graphs of
  /// attention, router and dispatch preprocess: a shorter fixed time per MoE layer),
  /// full_iteration (the whole step replayed as one graph); TrainingStepRequest::cuda_graph.
  /// Needs --stack megatron.
  std::optional<CudaGraphImpl> cuda_graph;
  /// --recompute-modules: Megatron-Core's selective recompute modules (sizing/memory.hpp
  /// RecomputeModule: core_attn, layernorm, moe_act, mla_up_proj, mlp; 0 = not given). Needs
  /// --stack megatron and selective recompute: given alone it pins --recompute selective.
  RecomputeModules recompute_modules = 0;
  /// --pp-layers: decoder layers held by each pipeline rank (pp entries summing to the model's
  /// layers; TrainingStepRequest::pipeline_stage_layers). Needs --pp. Empty = Megatron-Core's
  /// uniform split.
  std::vector<int> pipeline_stage_layers;
  /// --ignore-memory (estimate only): time the layout even when gpuplan's memory model says it does
  /// not fit (a run the user knows runs); the estimate carries the memory_over_capacity warning.
  bool ignore_memory = false;

  // ---- serving / batch generation ----
  WeightQuant quant = workload_defaults::kQuant;  ///< --quant
  KvDtype kv_dtype = workload_defaults::kKvDtype;       ///< --kv-dtype
  std::int64_t prompt_tokens = 1000;      ///< --prompt-tokens per request
  std::int64_t output_tokens = 250;       ///< --output-tokens per request
  /// --engine: the serving engine whose documented efficiency set and scheduler the throughput
  /// assumes (sizing/serving_perf.hpp engine_profile(); docs/performance-model.md §3).
  ServingEngine engine = ServingEngine::vllm;
  std::optional<double> requests_per_s;   ///< --rps target load (serving)
  std::optional<std::int64_t> concurrency;  ///< --concurrency: users/sequences served at once (serving)
  /// --ttft-ms / --tpot-ms (seconds here, > 0): latency constraints for serving (--rps /
  /// --concurrency): only plans whose time to first token / time per output token stay within
  /// them are listed, the batch per replica is lowered to meet them. Unset: the default
  /// interactive target (kDefaultTtftSeconds / kDefaultTpotSeconds) is used for the
  /// recommendation only (plans missing it are listed, warned, never recommended).
  std::optional<double> ttft_seconds;
  std::optional<double> tpot_seconds;
  /// The default interactive target: MLPerf Inference's Llama-2-70B Server scenario latency
  /// constraints, TTFT 2000 ms and TPOT 200 ms at the 99th percentile (mlcommons/inference
  /// loadgen/mlperf.conf, `llama2-70b.Server.ttft_latency = 2000`, `tpot_latency = 200`).
  static constexpr double kDefaultTtftSeconds = 2.0;
  static constexpr double kDefaultTpotSeconds = 0.2;
  /// The targets in force for serving: the given ones, else (when neither is given) the defaults.
  /// When only one is given the other is unconstrained (infinity).
  double effective_ttft_seconds() const;
  double effective_tpot_seconds() const;
  double hours = 720;                     ///< --hours the service runs (serving), default 30 days
  std::optional<double> requests;         ///< --requests in a batch generation job

  // ---- image generation ----
  std::int64_t image_width = 1024;   ///< --width, pixels
  std::int64_t image_height = 1024;  ///< --height, pixels
  std::int64_t denoising_steps = 30; ///< --steps
  double images = 1000;              ///< --images to generate

  // ---- search ----
  std::string filter;             ///< FILTER in the offers language (applied by the store at the edge)
  int max_nodes = 256;            ///< --max-nodes: most instances per plan (multi-node training needs a known network)
  /// --max-gpus: most GPUs per plan, all its instances together (instances of more GPUs are left
  /// out, and no more instances than the ceiling holds); nullopt = no ceiling. [1, 1048576].
  std::optional<int> max_gpus;
  double margin = kDefaultFitMargin;  ///< --margin: fits when per-GPU bytes ≤ (1 − margin) × capacity
  bool allow_spot = true;         ///< --no-spot clears it: plan on-demand/reserved only

  // ---- constraints (issue 7) ----
  std::optional<double> deadline_seconds;  ///< --deadline: only plans that finish within it, > 0
  std::optional<double> budget_usd;        ///< --budget: only plans whose total is within it, > 0, ≤ kMaxBudgetUsd
  std::optional<int> gpus_total;           ///< --gpus: exactly this many GPUs (a multiple of GPUs per node)
  std::optional<int> nodes_exact;          ///< --nodes: exactly this many nodes (instances)
  /// Ranges validate() enforces on gpus_total and nodes_exact (estimate's --gpus check uses the
  /// node cap too): far beyond any cluster on offer, small enough for int arithmetic.
  static constexpr int kMaxGpusTotal = 1'000'000;
  /// The largest budget planned, USD: a typo catcher (a trial's assistant planned "$10^30"), a
  /// trillion dollars, orders of magnitude above any GPU rental bill. `--budget`, the API's
  /// `budget` and the assistant's budget refuse more (code too_large / question_budget_too_large).
  static constexpr double kMaxBudgetUsd = 1e12;
  static constexpr int kMaxNodesExact = 100'000;
  LayoutPins pins;                         ///< --tp --pp --dp --ep --cp --zero --micro-batch --recompute --virtual-stages
  /// --mfu: replace the modelled step time by model FLOP / (GPUs × dense peak × mfu), (0, 1].
  std::optional<double> mfu_override;
  /// --goodput: a fixed goodput fraction (0, 1] instead of the failure/checkpoint model (sizing/goodput.hpp).
  std::optional<double> goodput_override;
  double evaluation_fraction = 0;          ///< --eval-fraction: evaluation pauses / work time, ≥ 0
  /// --failures-per-gpu-hour: hardware failure rate (default: Llama 3 §3.3.4, sizing/goodput.hpp).
  std::optional<double> failures_per_gpu_hour;
  /// Recommendation rule (no deadline, no budget): among plans within recommend_horizon_seconds,
  /// the fastest plan on their cost/time Pareto front whose total is at most (1 + this) × the
  /// cheapest of them. 0.25 = 25% more money.
  double recommend_max_cost_premium = 0.25;
  /// Recommendation rule: only plans finishing within this many seconds compete on cost (30
  /// days: beyond a month a job is usually split or given more GPUs); when none does, the
  /// fastest plan is recommended.
  double recommend_horizon_seconds = 30.0 * 86400.0;
  /// --sort time (and --budget): plans whose times differ by at most this fraction count as tied;
  /// the cheaper wins.
  double time_tie_tolerance = 0.02;
  /// --deadline (the cheapest-first rules, and --sort cost): plans whose totals differ by at most
  /// this fraction of the cheaper count as tied in cost; the faster wins (4 nodes at $158.88 do
  /// not beat 16 nodes at $158.93 that finish 4× sooner). docs/planner.md.
  double cost_tie_tolerance = 0.01;
  /// Plans slower than max(recommend_horizon_seconds, this × the reference plan's time) are hidden
  /// from the list and the Pareto front unless show_all (--all): the reference is the recommended
  /// plan (none: the fastest plan listed). No effect with --deadline (the deadline is the horizon).
  /// 4: a plan taking four times as long as the answer, and over a month, is no alternative a
  /// practitioner weighs (one node for 9 years next to 256 nodes for 12 days). docs/planner.md.
  double hide_slower_than_factor = 4.0;
  bool show_all = false;                   ///< --all: list the plans the horizon hides
  /// --sort time (and --budget): a faster plan goes ahead of a cheaper one only when each hour it
  /// saves costs at most this many times what the cheaper plan spends per hour:
  ///   (cost_fast − cost_slow) / (time_slow − time_fast) ≤ this × cost_slow / time_slow.
  /// 3 = twice the GPUs must bring at least a 1.25× speed-up (62.5% scaling efficiency); 64
  /// nodes for +92% cost and −4% time (23×) never beat 32 nodes. docs/planner.md.
  double speedup_max_cost_ratio = 3.0;
  bool include_flagged = false;            ///< --include-flagged: rank such offers like the others

  // ---- cost ----
  std::optional<double> preemptions_per_day;  ///< --preemptions-per-day (spot); default: provider's
  std::optional<double> egress_gb;            ///< --egress-gb downloaded at the end; default: final weights
  /// Checkpoint write rate per instance, bytes/s (assumption: 1 GB/s, a network-disk write rate;
  /// e.g. AWS gp3 up to 1 GB/s, https://aws.amazon.com/ebs/general-purpose/). Used for spot.
  double checkpoint_write_bytes_per_s = 1e9;
  /// Time to get going again after a preemption, s (assumption: 10 minutes to get a new
  /// instance, start the container and load the checkpoint).
  double restart_seconds = 600;
  /// --startup-minutes (seconds here, ≥ 0): the fixed time of every run before its first step —
  /// the cluster start (instances booted and networked), the container pulled and started, the
  /// weights and data loaded, and (training) the first checkpoint written — timed once per run and
  /// billed on every instance (CostInputs::startup_seconds). ASSUMPTION, not a measurement: 10
  /// minutes, the same figure as restart_seconds (a restart does the same: get instances, start
  /// the container, load the state). With it a small job costs at least instances × 10 minutes,
  /// so 128 nodes for a 16-second job are never the answer (docs/planner.md "Start-up").
  double startup_seconds = 600;
  /// Today's date "YYYY-MM-DD" (injected clock, STYLE.md §4); empty = staleness unknown.
  std::string today;
  /// --max-price-age (alias --stale-days): a price observed more than this many days ago is
  /// stale — warned (`stale_price`) and ranked after fresher ones. The one freshness limit of
  /// the planner, the catalog's (catalog/freshness.hpp: fresh ≤ 7 d, aging ≤ 30 d, stale above,
  /// undated). Default 30 days.
  double stale_after_days = 30;

  // ---- output ----
  PlanSort sort = PlanSort::recommended;  ///< --sort recommended|cost|time
  bool pareto_only = false;        ///< --pareto
  std::size_t limit = 10;          ///< --limit, ≥ 1

  /// The sort actually applied: `sort`, or for `recommended` with --deadline → cost, with
  /// --budget only → time.
  PlanSort effective_sort() const;

  /// Throws Error{invalid_input} with where = the flag and what is expected: model source
  /// (ModelSource::validate), a training task without --tokens or --dataset-tokens, both given,
  /// non-positive numbers, serving without --rps or --concurrency (or with both), batch without
  /// --requests, margin ∉ [0, 1), max_nodes ∉ [1, 1024], limit = 0, today not YYYY-MM-DD.
  void validate() const;

  /// Tokens to train on: tokens, or dataset_tokens × epochs. Only for training (after validate).
  double training_tokens() const;
  /// The global batch in sequences (default rule above).
  std::int64_t effective_global_batch_seqs() const;
};

}  // namespace gpuplan
