#pragma once
/// Application layer (api): the `size` use case — per-GPU memory of training or serving a model
/// and the GPUs of the catalog that hold it. One input struct filled by the CLI's flags and the
/// API's JSON body through size_fields(); one result; one JSON writer (the `gpuplan size --json`
/// document, also the body of POST /api/size).
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "api/context.hpp"
#include "api/fields.hpp"
#include "model/model_arch.hpp"
#include "model/model_source.hpp"
#include "sizing/memory.hpp"
#include "sizing/sizing_request.hpp"
#include "sizing/workload_defaults.hpp"

namespace gpuplan::api {

/// The request as both faces give it (names as the CLI's flags; enums as text until run_size).
/// Defaults: sizing/workload_defaults.hpp (the same as plan and estimate). The fields a training
/// stack also sets are optional: set = given explicitly, which wins over the stack's default.
struct SizeInput {
  ModelSource source;
  SizingRequest request;  ///< numeric options (gpus, tp, seq, ...) set directly
  std::string task{task_name(workload_defaults::kTask)};
  std::string precision{train_precision_name(workload_defaults::kPrecision)};
  std::string quant{weight_quant_name(workload_defaults::kQuant)};
  std::string kv_dtype{kv_dtype_name(workload_defaults::kKvDtype)};
  std::string lora_targets = "all-linear";
  std::optional<std::string> optimizer, recompute, framework;  ///< default adamw, none, pytorch_eager (or pytorch_compiled, megatron)
  std::optional<int> zero;
  std::optional<bool> sp, chunked_ce, offload_activations;
  std::optional<std::string> stack;  ///< hf, fsdp, deepspeed, megatron, unsloth (sizing/memory.hpp)
  std::optional<std::string> gpu;    ///< serve: the longest context / most sequences on this GPU
  bool offload = false, offload_params = false, no_flash = false;
  std::optional<int> ep;
  std::set<std::string> given;  ///< the fields given (api::note_given): a field of another task is refused
};

std::span<const FieldDef<SizeInput>> size_fields();

struct SizeOutput {
  ModelArch arch;
  SizingRequest request;  ///< resolved (enums parsed)
  SizingResult result;
  const GpuSpec* limits_gpu = nullptr;  ///< set with `limits` or `training_limits` (with gpu)
  std::optional<ServingLimits> limits;   ///< serve with gpu
  std::optional<TrainingLimits> training_limits;  ///< a training task with gpu
};

/// Parses the enums, validates (before reading the model: bad options fail fast), resolves the
/// model and sizes it against ctx.gpus(). Throws Error naming the CLI flag of the bad field.
SizeOutput run_size(const SizeInput& in, const Context& ctx);

nlohmann::json to_json(const SizeOutput& out);

/// A stable code for one of the sizing layer's warnings (sizing/memory.cpp writes them as English
/// sentences with numbers): "activations_not_modelled", "zero_without_dp", "kv_heads_replicated",
/// "uneven_pipeline", "fp8_activations", "beyond_max_position", "mla_kv_not_split"; "" for a
/// sentence it does not know. The pages show each code's text in the reader's language.
std::string_view sizing_warning_code(std::string_view message);

/// One change to a size request that makes it fit, and the smallest fit it then has.
struct SizeAlternative {
  std::string field;     ///< the request field changed ("quant", "task", "recompute", "seq", "context", "concurrency")
  nlohmann::json value;  ///< its new value
  nlohmann::json fit;    ///< the first entry of that request's "fits" (to_json(SizeOutput)["fits"][0])
};

/// When `body` (a size request, as POST /api/size takes it) fits no GPU: the single changes a
/// practitioner would try, each sized again, keeping those that then fit somewhere — serving:
/// 4-bit (int4) or fp8 weights, an fp8 KV cache, a quarter of the context, one sequence at a
/// time; training: QLoRA instead of LoRA/full, full recomputation (gradient checkpointing), a
/// quarter of the sequence length. Empty when the request fits, or nothing tried fits.
std::vector<SizeAlternative> size_alternatives(const nlohmann::json& body, const Context& ctx);

}  // namespace gpuplan::api
