#pragma once
/// Sizing layer: can a model take a parallel layout at all? A non-throwing check for searches
/// (the planner asks it before sizing each layout instead of catching training_memory's
/// exceptions). Same rules as training_memory's model checks (memory.cpp validate_against_model)
/// plus the layout's own consistency (TrainingMemoryRequest::validate), so a layout this check
/// accepts never makes training_memory or estimate_training_step throw for the layout's sake.
#include <optional>
#include <string>

#include "model/model_arch.hpp"
#include "sizing/memory.hpp"

namespace gpuplan {

/// Why `arch` cannot be trained with `layout` (one sentence), or nullopt when it can:
/// degrees < 1; tp ∤ attention heads; tp and the KV heads neither dividing the other (kv_split_problem); pp > layers; ep > 1 on a dense model; ep ∤ routed experts;
/// ep ∤ dp; zero_stage ∉ [0, 3]; micro_batch < 1; virtual_stages > 1 with pp = 1;
/// parameter offload without ZeRO-3. Uneven pipeline stages (pp ∤ layers) are allowed:
/// memory and time count ceil(layers / pp) layers on the most loaded stage.
std::optional<std::string> training_layout_problem(const ModelArch& arch, const ParallelLayout& layout);

/// Tensor parallelism over a decoder's KV heads: they are split over the TP ranks (tp divides kv)
/// or each is replicated on tp / kv ranks (kv divides tp); otherwise the layout cannot run.
/// The message is the one training_memory / serving_memory throw for it (Error::what()).
std::optional<std::string> kv_split_problem(const ModelArch& arch, int tp);

/// Why `arch` cannot be served at tensor-parallel degree `tp` (tp ∤ attention heads, the KV-head
/// split above), or nullopt: serving_memory's model checks for one pipeline stage, not thrown.
std::optional<std::string> serving_layout_problem(const ModelArch& arch, int tp);

}  // namespace gpuplan
