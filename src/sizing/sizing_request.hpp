#pragma once
/// One sizing operation as the CLI (`gpuplan size`) and the server fill it (STYLE.md §6):
/// the task and its options, the GPU count / parallel degrees, the fit margin. validate()
/// checks it; run_sizing() returns the per-GPU breakdown and the GPUs of the catalog that hold it.
#include <optional>
#include <string>
#include <vector>

#include "sizing/memory.hpp"
#include "sizing/workload_defaults.hpp"

namespace gpuplan {

struct SizingRequest {
  Task task = workload_defaults::kTask;  ///< defaults: sizing/workload_defaults.hpp (shared with plan)
  /// Training options (task pretrain/full/lora/qlora). Its task and layout.tp/pp/dp are
  /// overwritten from the fields below by training_request().
  TrainingMemoryRequest training = workload_defaults::default_training_memory_request();
  /// Serving options (task serve). Its tp/pp are overwritten by serving_request().
  ServingMemoryRequest serving = workload_defaults::default_serving_memory_request();
  /// --gpus: GPUs of the workload. Training: dp = gpus / (tp·pp) unless --dp is given;
  /// serving: tp = gpus / pp unless --tp is given. Unset = tp·pp·dp (1 by default).
  std::optional<int> gpus;
  std::optional<int> tp;  ///< --tp (default 1, or gpus / pp when serving)
  std::optional<int> pp;  ///< --pp (default 1)
  std::optional<int> dp;  ///< --dp (default gpus / (tp·pp), else 1)
  double margin = kDefaultFitMargin;  ///< --margin: fits when requirement ≤ (1 − margin) × capacity
  bool explain = false;               ///< --explain: also return each term's formula

  /// Throws Error{invalid_input, "--flag"} for out-of-range values and contradictions
  /// (--gpus not a multiple of tp·pp, --gpus ≠ tp·pp·dp, margin ∉ [0, 1), the task's own checks).
  void validate() const;
  /// The training request with the task and the resolved layout (validate() first).
  TrainingMemoryRequest training_request() const;
  /// The serving request with the resolved tp / pp.
  ServingMemoryRequest serving_request() const;
};

struct SizingResult {
  MemoryBreakdown per_gpu;                   ///< at the requested layout
  std::vector<TermExplanation> explanation;  ///< filled when request.explain
  std::vector<GpuFit> fits;                  ///< smallest count per catalog GPU, smallest first
  std::string fit_assumption;                ///< the sharding assumed when re-sizing for each count
};

/// Sizes `arch` for `request` (validated here) and matches it against `catalog`.
/// Throws what validate() and training_memory() / serving_memory() throw.
SizingResult run_sizing(const ModelArch& arch, const SizingRequest& request, const GpuCatalog& catalog);

}  // namespace gpuplan
