#pragma once
/// Application layer (api): the `estimate` use case — times a training run the caller specifies
/// (GPU model × count × layout) without the offer catalog, with the same search, step-time and
/// goodput code as `plan` (planner::estimate_run). Input filled by the CLI's flags and the API's
/// JSON body through estimate_fields(); one JSON writer (`gpuplan estimate --json` and the body of
/// POST /api/estimate). No price.
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "api/context.hpp"
#include "api/fields.hpp"
#include "model/model_arch.hpp"
#include "planner/planner.hpp"

namespace gpuplan::api {

struct EstimateInput {
  PlanRequest request;  ///< numeric options set directly; enums below as text until run_estimate
  std::string task{task_name(workload_defaults::kTask)};  ///< sizing/workload_defaults.hpp
  std::string precision, optimizer, recompute, gpu, link = "datasheet";
  std::optional<int> gpus, gpus_per_node, nodes;
  double intra_node_gb_per_s = 0;    ///< GB/s per GPU, one direction; 0 = datasheet
  double inter_node_gbit_per_s = 0;  ///< Gb/s per node, one direction
  bool explain = false;
  std::set<std::string> given;  ///< the fields given (api::note_given): a field of another task is refused
};

std::span<const FieldDef<EstimateInput>> estimate_fields();

struct EstimateOutput {
  PlanRequest request;  ///< resolved
  ModelArch arch;
  std::optional<Plan> plan;  ///< nullopt: no layout fits the memory (no_fit says why)
  std::string no_fit;
  /// No layout fits: single changes that, timed again on the same GPUs, do fit (trial56 #12: an
  /// 8B LoRA on one RTX 4090 was offered only --ignore-memory, and --seq 2048 fits): the longest
  /// halved --seq that fits, then QLoRA instead of LoRA or full fine-tuning. Each: the flags to
  /// add and the per-GPU bytes it then needs.
  struct FitsWith {
    std::string flags;
    double per_gpu_bytes = 0;
  };
  std::vector<FitsWith> fits_with;
  bool explain = false;
  std::vector<PlanExplainLine> explain_lines;
};

/// Resolves the cluster (gpu from ctx.gpus(), gpus/nodes/gpus_per_node), the enums and the model
/// and times the run. Throws Error naming the CLI flag (where "--gpus", "--gpu", ...).
EstimateOutput run_estimate(const EstimateInput& in, const Context& ctx);

/// `gpuplan estimate --json`: {"model", "task", "training_tokens", "estimate": plan JSON
/// (api/plan_json.hpp), "explain" when asked}, or {"model", "estimate": null, "no_fit": reason}.
nlohmann::json to_json(const EstimateOutput& out);
/// The training settings (api/plan_json.hpp training_settings_json) as one line for the text
/// output ("stack megatron, MoE imbalance 1, 16-bit gradients");
/// empty when none is set.
std::string training_settings_text(const PlanRequest& r);
/// What "rc:<modules>" in a plan's layout means when the search chose the modules (the request
/// gave neither --recompute nor --recompute-modules; planner.hpp search order): one sentence,
/// ending with a full stop; empty when `chosen` is 0 or the request gave the modules.
std::string searched_recompute_modules_text(const PlanRequest& r, RecomputeModules chosen);
/// The recompute modules the search chose for the first of `plans` that has any, when the request
/// gave none (what a plan list's "rc:<modules>" note explains: the CLI's footer, the plan page); 0
/// otherwise.
RecomputeModules searched_recompute_modules(const PlanRequest& r, const std::vector<Plan>& plans);

/// Which layout abbreviations the training plans of a list show (the CLI's layout text and the
/// page's layout cell): TP, PP, DP, Z and mb always; VP, EP, ETP and rc: only where a plan has them.
struct LayoutAbbreviations {
  bool training = false;  ///< some plan is a training plan (else no legend)
  bool vp = false;        ///< virtual stages > 1
  bool ep = false;        ///< expert parallelism > 1
  bool etp = false;       ///< expert TP set and not the TP
  bool rc = false;        ///< a recompute mode other than none
  bool modules = false;   ///< Megatron-Core recompute modules named
};
LayoutAbbreviations layout_abbreviations(const std::vector<Plan>& plans);
/// The English legend of those abbreviations, one sentence ending with a full stop ("Layout: TP
/// tensor, PP pipeline, DP data parallel degrees; Z ZeRO stage; mb micro-batch."); "" when no plan
/// is a training plan. The pages use the locale keys layout_legend* with the same parts.
std::string layout_legend_text(const LayoutAbbreviations& a);

}  // namespace gpuplan::api
