#pragma once
/// Application layer (api): the `size` use case — per-GPU memory of training or serving a model
/// and the GPUs of the catalog that hold it. One input struct filled by the CLI's flags and the
/// API's JSON body through size_fields(); one result; one JSON writer (the `gpuplan size --json`
/// document, also the body of POST /api/size).
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "api/context.hpp"
#include "api/fields.hpp"
#include "model/model_arch.hpp"
#include "model/model_source.hpp"
#include "sizing/sizing_request.hpp"

namespace gpuplan::api {

/// The request as both faces give it (names as the CLI's flags; enums as text until run_size).
struct SizeInput {
  ModelSource source;
  SizingRequest request;  ///< numeric options (gpus, tp, seq, ...) set directly
  std::string task = "full", precision = "bf16_mixed", optimizer = "adamw", recompute = "none";
  std::string quant = "bf16", kv_dtype = "bf16", framework = "pytorch_eager", lora_targets = "all-linear";
  bool offload = false, offload_params = false, no_flash = false;
  std::optional<int> ep;
};

std::span<const FieldDef<SizeInput>> size_fields();

struct SizeOutput {
  ModelArch arch;
  SizingRequest request;  ///< resolved (enums parsed)
  SizingResult result;
};

/// Parses the enums, validates (before reading the model: bad options fail fast), resolves the
/// model and sizes it against ctx.gpus(). Throws Error naming the CLI flag of the bad field.
SizeOutput run_size(const SizeInput& in, const Context& ctx);

nlohmann::json to_json(const SizeOutput& out);

}  // namespace gpuplan::api
