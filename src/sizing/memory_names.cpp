// Names, parsers and per-format constants of the memory-model vocabulary (memory.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <utility>

#include "sizing/memory.hpp"
#include "sizing/perf.hpp"
#include "sizing/workload_defaults.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"
#include "util/text_check.hpp"

namespace gpuplan {
namespace {

std::string normalise(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += (l == '-' || l == ' ') ? '_' : l;
  }
  return out;
}

template <typename E, std::size_t N>
E parse_enum(std::string_view text, const std::string& where, const std::array<std::pair<const char*, E>, N>& table,
             std::string_view (*name_of)(E) noexcept, std::initializer_list<E> canonical,
             std::string_view allowed_text = {}) {
  const std::string key = normalise(text);
  for (const auto& [name, value] : table) {
    if (key == name) return value;
  }
  std::string expected = "one of ";
  bool first = true;
  for (E e : canonical) {
    if (!first) expected += ", ";
    expected += name_of(e);
    first = false;
  }
  // The list as the flag's help writes it, where the help names aliases (--quant: "q4_k_m ... (gguf_
  // prefix optional)"), so that help, error and form agree (trial51).
  if (!allowed_text.empty()) expected = "one of " + std::string(allowed_text);
  const std::string shown = echo_clip(text);
  throw_invalid_coded(where, "unknown_choice", {{"value", shown}, {"allowed", expected.substr(7)}},
                      "unknown value '" + shown + "'", expected);
}

}  // namespace

std::string_view task_name(Task t) noexcept {
  switch (t) {
    case Task::pretrain: return "pretrain";
    case Task::full: return "full";
    case Task::lora: return "lora";
    case Task::qlora: return "qlora";
    case Task::serve: return "serve";
  }
  return "?";
}

std::string_view train_precision_name(TrainPrecision p) noexcept {
  switch (p) {
    case TrainPrecision::fp32: return "fp32";
    case TrainPrecision::tf32: return "tf32";
    case TrainPrecision::bf16_mixed: return "bf16_mixed";
    case TrainPrecision::bf16_pure: return "bf16_pure";
    case TrainPrecision::fp16_mixed: return "fp16_mixed";
    case TrainPrecision::fp8_mixed: return "fp8_mixed";
  }
  return "?";
}

std::string_view optimizer_name(Optimizer o) noexcept {
  switch (o) {
    case Optimizer::adamw: return "adamw";
    case Optimizer::adamw_8bit: return "adamw_8bit";
    case Optimizer::sgd_momentum: return "sgd_momentum";
    case Optimizer::adafactor: return "adafactor";
    case Optimizer::lion: return "lion";
  }
  return "?";
}

std::string_view recompute_name(Recompute r) noexcept {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
    case Recompute::op_selective: return "op-selective";
  }
  return "?";
}

namespace {
constexpr std::array<std::pair<const char*, RecomputeModule>, 5> kRecomputeModules = {{
    {"core_attn", RecomputeModule::core_attn},
    {"layernorm", RecomputeModule::layernorm},
    {"moe_act", RecomputeModule::moe_act},
    {"mla_up_proj", RecomputeModule::mla_up_proj},
    {"mlp", RecomputeModule::mlp},
}};
std::string_view recompute_module_name(RecomputeModule m) noexcept {
  for (const auto& [name, value] : kRecomputeModules)
    if (value == m) return name;
  return "?";
}
}  // namespace

std::string recompute_modules_name(RecomputeModules set) {
  std::string out;
  for (const auto& [name, value] : kRecomputeModules) {
    if (!has_module(set, value)) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

RecomputeModules parse_recompute_modules(std::string_view s, const std::string& where) {
  RecomputeModules set = 0;
  std::size_t i = 0;
  while (true) {
    const std::size_t comma = s.find(',', i);
    std::string_view item = s.substr(i, comma == std::string_view::npos ? std::string_view::npos : comma - i);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())) != 0) item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back())) != 0) item.remove_suffix(1);
    if (item.empty())
      throw_invalid_coded(where, "unknown_choice",
                          {{"value", ""}, {"allowed", "core_attn, layernorm, moe_act, mla_up_proj, mlp"}},
                          "empty module name (a trailing or doubled comma?)",
                          "module names separated by single commas, e.g. layernorm,moe_act");
    // Megatron-Core modules gpuplan does not size: named as such, not as unknown (trial41 D3).
    static constexpr std::array<const char*, 7> kNotModelled = {"moe", "shared_experts", "gdn_norm_out", "gdp_in_proj",
                                                                "gdp_qkv", "mhc", "moe_layer"};
    const std::string key = normalise(item);
    for (const char* name : kNotModelled)
      if (key == name)
        throw_invalid_coded(where, "recompute_module_not_modelled", {{"module", key}},
                            fmt::format("recompute module {} is Megatron-Core's, but gpuplan does not size it", key),
                            "core_attn, layernorm, moe_act, mla_up_proj or mlp; for the whole MoE layer, --recompute full");
    set |= static_cast<unsigned>(parse_enum(item, where, kRecomputeModules, &recompute_module_name,
                                            {RecomputeModule::core_attn, RecomputeModule::layernorm,
                                             RecomputeModule::moe_act, RecomputeModule::mla_up_proj,
                                             RecomputeModule::mlp}));
    if (comma == std::string_view::npos) break;
    i = comma + 1;
  }
  return set;
}

void check_recompute_modules_mode(RecomputeModules set, bool megatron, std::optional<Recompute> pinned) {
  if (set == 0) return;
  if (!megatron)
    throw_invalid_coded("--recompute-modules", "recompute_modules_needs_megatron", {},
                        "--recompute-modules sets Megatron-Core's recompute_modules: it needs --stack megatron",
                        "--stack megatron with the same --recompute-modules, or no --recompute-modules");
  if (pinned && *pinned != Recompute::selective)
    throw_invalid_coded("--recompute-modules", "recompute_modules_needs_selective",
                        {{"recompute", std::string(recompute_name(*pinned))}},
                        fmt::format("--recompute-modules is Megatron-Core's selective recompute; --recompute {} is "
                                    "another mode",
                                    recompute_name(*pinned)),
                        "--recompute selective (or no --recompute) with --recompute-modules");
}

void check_recompute_modules_apply(const ModelArch& arch, RecomputeModules set, const std::string& where) {
  if (set == 0) return;
  // A config may declare experts and route no layer to them (DeepSeek's first_k_dense_replace =
  // num_hidden_layers: trial42 D4): MoE layers, not the MoE block, decide.
  const bool moe_layers = arch.moe && arch.moe->num_moe_layers > 0;
  const bool dense_layers = !moe_layers || arch.moe->num_moe_layers < arch.num_layers;
  const char* missing = has_module(set, RecomputeModule::moe_act) && !moe_layers                ? "moe_act"
                        : has_module(set, RecomputeModule::mla_up_proj) && !arch.mla            ? "mla_up_proj"
                        : has_module(set, RecomputeModule::mlp) && !dense_layers                ? "mlp"
                        : has_module(set, RecomputeModule::layernorm) && !moe_layers && !arch.mla ? "layernorm"
                                                                                                : nullptr;
  if (missing != nullptr)
    throw_invalid_coded(where, "recompute_module_not_in_model", {{"module", missing}, {"model", arch.name}},
                        fmt::format("recompute module {} has nothing to recompute in {}", missing, arch.name),
                        "moe_act: MoE models; mla_up_proj: MLA models; mlp: models with dense MLP layers; "
                        "layernorm: MoE or MLA models (other layers fuse the norm into the next GEMM)");
}

RecomputeModules recipe_recompute_modules(const ModelArch& arch) noexcept {
  if (arch.mla) return static_cast<unsigned>(RecomputeModule::mla_up_proj);
  if (arch.moe && arch.moe->num_moe_layers > 0)
    return static_cast<unsigned>(RecomputeModule::layernorm) | static_cast<unsigned>(RecomputeModule::moe_act);
  return 0;
}

std::string_view weight_quant_name(WeightQuant q) noexcept {
  switch (q) {
    case WeightQuant::bf16: return "bf16";
    case WeightQuant::fp16: return "fp16";
    case WeightQuant::fp8: return "fp8";
    case WeightQuant::int8: return "int8";
    case WeightQuant::int4: return "int4";
    case WeightQuant::nf4: return "nf4";
    case WeightQuant::gguf_q4_k_m: return "gguf_q4_k_m";
    case WeightQuant::gguf_q8_0: return "gguf_q8_0";
    case WeightQuant::gguf_q4_0: return "gguf_q4_0";
    case WeightQuant::gguf_q2_k: return "gguf_q2_k";
    case WeightQuant::mxfp4: return "mxfp4";
  }
  return "?";
}

std::string_view kv_dtype_name(KvDtype k) noexcept {
  switch (k) {
    case KvDtype::bf16: return "bf16";
    case KvDtype::fp16: return "fp16";
    case KvDtype::fp8: return "fp8";
    case KvDtype::int8: return "int8";
    case KvDtype::int4: return "int4";
    case KvDtype::q8_0: return "q8_0";
  }
  return "?";
}

Task parse_task(std::string_view s, const std::string& where) {
  static constexpr std::array<std::pair<const char*, Task>, 10> kTable = {{
      {"pretrain", Task::pretrain}, {"pretraining", Task::pretrain}, {"full", Task::full},
      {"full_ft", Task::full}, {"fft", Task::full}, {"finetune", Task::full},
      {"lora", Task::lora}, {"qlora", Task::qlora}, {"serve", Task::serve}, {"inference", Task::serve},
  }};
  return parse_enum(s, where, kTable, &task_name, {Task::pretrain, Task::full, Task::lora, Task::qlora, Task::serve});
}

TrainPrecision parse_train_precision(std::string_view s, const std::string& where) {
  static constexpr std::array<std::pair<const char*, TrainPrecision>, 11> kTable = {{
      {"fp32", TrainPrecision::fp32}, {"float32", TrainPrecision::fp32}, {"tf32", TrainPrecision::tf32},
      {"bf16_mixed", TrainPrecision::bf16_mixed}, {"bf16", TrainPrecision::bf16_mixed},
      {"amp_bf16", TrainPrecision::bf16_mixed}, {"bf16_pure", TrainPrecision::bf16_pure},
      {"fp16_mixed", TrainPrecision::fp16_mixed}, {"fp16", TrainPrecision::fp16_mixed},
      {"fp8_mixed", TrainPrecision::fp8_mixed}, {"fp8", TrainPrecision::fp8_mixed},
  }};
  return parse_enum(s, where, kTable, &train_precision_name,
                    {TrainPrecision::fp32, TrainPrecision::tf32, TrainPrecision::bf16_mixed, TrainPrecision::bf16_pure,
                     TrainPrecision::fp16_mixed, TrainPrecision::fp8_mixed});
}

Optimizer parse_optimizer(std::string_view s, const std::string& where) {
  static constexpr std::array<std::pair<const char*, Optimizer>, 10> kTable = {{
      {"adamw", Optimizer::adamw}, {"adam", Optimizer::adamw}, {"adamw_8bit", Optimizer::adamw_8bit},
      {"adam_8bit", Optimizer::adamw_8bit}, {"adamw8bit", Optimizer::adamw_8bit},
      {"sgd_momentum", Optimizer::sgd_momentum}, {"sgd", Optimizer::sgd_momentum},
      {"adafactor", Optimizer::adafactor}, {"lion", Optimizer::lion}, {"paged_adamw_8bit", Optimizer::adamw_8bit},
  }};
  return parse_enum(s, where, kTable, &optimizer_name,
                    {Optimizer::adamw, Optimizer::adamw_8bit, Optimizer::sgd_momentum, Optimizer::adafactor,
                     Optimizer::lion});
}

Recompute parse_recompute(std::string_view s, const std::string& where) {
  static constexpr std::array<std::pair<const char*, Recompute>, 8> kTable = {{
      {"none", Recompute::none}, {"off", Recompute::none}, {"selective", Recompute::selective},
      {"full", Recompute::full}, {"on", Recompute::full}, {"checkpointing", Recompute::full},
      {"op-selective", Recompute::op_selective}, {"op_selective", Recompute::op_selective},
  }};
  return parse_enum(s, where, kTable, &recompute_name, {Recompute::none, Recompute::selective, Recompute::full, Recompute::op_selective});
}

WeightQuant parse_weight_quant(std::string_view s, const std::string& where) {
  static constexpr std::array<std::pair<const char*, WeightQuant>, 22> kTable = {{
      {"bf16", WeightQuant::bf16}, {"bfloat16", WeightQuant::bf16}, {"fp16", WeightQuant::fp16},
      {"float16", WeightQuant::fp16}, {"fp8", WeightQuant::fp8}, {"fp8_e4m3", WeightQuant::fp8},
      {"int8", WeightQuant::int8}, {"w8a8", WeightQuant::int8}, {"int4", WeightQuant::int4},
      {"awq", WeightQuant::int4}, {"gptq", WeightQuant::int4}, {"nf4", WeightQuant::nf4},
      {"gguf_q4_k_m", WeightQuant::gguf_q4_k_m}, {"q4_k_m", WeightQuant::gguf_q4_k_m},
      {"gguf_q8_0", WeightQuant::gguf_q8_0}, {"q8_0", WeightQuant::gguf_q8_0}, {"w4a16", WeightQuant::int4},
      {"gguf_q4_0", WeightQuant::gguf_q4_0}, {"q4_0", WeightQuant::gguf_q4_0}, {"gguf_q2_k", WeightQuant::gguf_q2_k},
      {"q2_k", WeightQuant::gguf_q2_k}, {"mxfp4", WeightQuant::mxfp4},
  }};
  return parse_enum(s, where, kTable, &weight_quant_name,
                    {WeightQuant::bf16, WeightQuant::fp16, WeightQuant::fp8, WeightQuant::int8, WeightQuant::int4,
                     WeightQuant::nf4, WeightQuant::gguf_q4_k_m, WeightQuant::gguf_q8_0, WeightQuant::gguf_q4_0,
                     WeightQuant::gguf_q2_k, WeightQuant::mxfp4},
                    workload_defaults::kQuantHelp);
}

KvDtype parse_kv_dtype(std::string_view s, const std::string& where) {
  static constexpr std::array<std::pair<const char*, KvDtype>, 10> kTable = {{
      {"bf16", KvDtype::bf16}, {"bfloat16", KvDtype::bf16}, {"auto", KvDtype::bf16}, {"fp16", KvDtype::fp16},
      {"fp8", KvDtype::fp8}, {"fp8_e4m3", KvDtype::fp8}, {"fp8_e5m2", KvDtype::fp8}, {"int8", KvDtype::int8},
      {"int4", KvDtype::int4}, {"q8_0", KvDtype::q8_0},
  }};
  return parse_enum(s, where, kTable, &kv_dtype_name,
                    {KvDtype::bf16, KvDtype::fp16, KvDtype::fp8, KvDtype::int8, KvDtype::int4, KvDtype::q8_0});
}

std::string_view activation_profile_name(ActivationProfile p) noexcept {
  switch (p) {
    case ActivationProfile::pytorch_eager: return "pytorch_eager";
    case ActivationProfile::megatron: return "megatron";
    case ActivationProfile::pytorch_compiled: return "pytorch_compiled";
  }
  return "?";
}

ActivationProfile parse_activation_profile(std::string_view s, const std::string& where) {
  static constexpr std::array<std::pair<const char*, ActivationProfile>, 9> kTable = {{
      {"pytorch_eager", ActivationProfile::pytorch_eager}, {"pytorch", ActivationProfile::pytorch_eager},
      {"hf", ActivationProfile::pytorch_eager}, {"transformers", ActivationProfile::pytorch_eager},
      {"torchtune", ActivationProfile::pytorch_eager}, {"megatron", ActivationProfile::megatron},
      {"pytorch_compiled", ActivationProfile::pytorch_compiled}, {"compiled", ActivationProfile::pytorch_compiled},
      {"torch_compile", ActivationProfile::pytorch_compiled},
  }};
  return parse_enum(s, where, kTable, &activation_profile_name,
                    {ActivationProfile::pytorch_eager, ActivationProfile::megatron, ActivationProfile::pytorch_compiled});
}

std::string_view training_stack_name(TrainingStack s) noexcept {
  switch (s) {
    case TrainingStack::hf: return "hf";
    case TrainingStack::fsdp: return "fsdp";
    case TrainingStack::deepspeed: return "deepspeed";
    case TrainingStack::megatron: return "megatron";
    case TrainingStack::unsloth: return "unsloth";
  }
  return "?";
}

TrainingStack parse_training_stack(std::string_view s, const std::string& where) {
  static constexpr std::array<std::pair<const char*, TrainingStack>, 6> kTable = {{
      {"hf", TrainingStack::hf}, {"transformers", TrainingStack::hf}, {"fsdp", TrainingStack::fsdp},
      {"deepspeed", TrainingStack::deepspeed}, {"megatron", TrainingStack::megatron},
      {"unsloth", TrainingStack::unsloth},
  }};
  return parse_enum(s, where, kTable, &training_stack_name,
                    {TrainingStack::hf, TrainingStack::fsdp, TrainingStack::deepspeed, TrainingStack::megatron,
                     TrainingStack::unsloth});
}

void check_stack_runs_task(TrainingStack stack, Task task) {
  if (task == Task::qlora && stack == TrainingStack::megatron)
    throw_invalid_coded("--stack", "qlora_stack_unsupported", {{"stack", "megatron"}},
                        "--task qlora needs bitsandbytes NF4 base weights, which Megatron-Core / Megatron-Bridge do not run",
                        "--stack hf, unsloth, fsdp or deepspeed for QLoRA, or --task lora with --stack megatron");
}

std::string_view moe_dispatcher_name(MoeDispatcher d) noexcept {
  switch (d) {
    case MoeDispatcher::alltoall: return "alltoall";
    case MoeDispatcher::deepep: return "deepep";
    case MoeDispatcher::hybridep: return "hybridep";
  }
  return "?";
}

MoeDispatcher parse_moe_dispatcher(std::string_view s, const std::string& where) {
  static constexpr std::array<std::pair<const char*, MoeDispatcher>, 3> kTable = {{
      {"alltoall", MoeDispatcher::alltoall}, {"deepep", MoeDispatcher::deepep}, {"hybridep", MoeDispatcher::hybridep},
  }};
  return parse_enum(s, where, kTable, &moe_dispatcher_name,
                    {MoeDispatcher::alltoall, MoeDispatcher::deepep, MoeDispatcher::hybridep});
}

std::string_view cuda_graph_impl_name(CudaGraphImpl g) noexcept {
  switch (g) {
    case CudaGraphImpl::none: return "none";
    case CudaGraphImpl::transformer_engine: return "transformer_engine";
    case CudaGraphImpl::local: return "local";
    case CudaGraphImpl::full_iteration: return "full_iteration";
  }
  return "?";
}

CudaGraphImpl parse_cuda_graph_impl(std::string_view s, const std::string& where) {
  static constexpr std::array<std::pair<const char*, CudaGraphImpl>, 4> kTable = {{
      {"none", CudaGraphImpl::none}, {"transformer_engine", CudaGraphImpl::transformer_engine},
      {"local", CudaGraphImpl::local}, {"full_iteration", CudaGraphImpl::full_iteration},
  }};
  return parse_enum(s, where, kTable, &cuda_graph_impl_name,
                    {CudaGraphImpl::none, CudaGraphImpl::transformer_engine, CudaGraphImpl::local,
                     CudaGraphImpl::full_iteration});
}

void apply_stack_defaults(TrainingStack stack, TrainingMemoryRequest& r) {
  r.activation_profile = ActivationProfile::pytorch_eager;
  r.optimizer_foreach = false;
  r.chunked_cross_entropy = false;
  r.offload_activations = false;
  r.fp32_grad_partition = false;
  r.fp32_grad_accumulation = false;
  switch (stack) {
    case TrainingStack::hf:
      r.optimizer_foreach = true;  // torch.optim.AdamW picks foreach on CUDA
      break;
    case TrainingStack::fsdp:
      r.optimizer_foreach = true;
      r.layout.zero_stage = 3;
      break;
    case TrainingStack::deepspeed:
      r.layout.zero_stage = 2;
      r.fp32_grad_partition = true;
      break;
    case TrainingStack::megatron:
      r.activation_profile = ActivationProfile::megatron;
      r.fp32_grad_accumulation = true;
      r.layout.zero_stage = 1;
      r.layout.sequence_parallel = r.layout.tp > 1;
      break;
    case TrainingStack::unsloth:
      r.chunked_cross_entropy = true;
      r.offload_activations = true;
      r.recompute = Recompute::full;
      r.optimizer = stack_default_optimizer(stack);
      break;
  }
}

Optimizer stack_default_optimizer(TrainingStack stack) noexcept {
  return stack == TrainingStack::unsloth ? Optimizer::adamw_8bit : Optimizer::adamw;
}

double weight_quant_bits(WeightQuant q, bool double_quant) noexcept {
  switch (q) {
    case WeightQuant::bf16:
    case WeightQuant::fp16: return 16.0;
    case WeightQuant::fp8:
    case WeightQuant::int8: return 8.0;
    case WeightQuant::int4: return 4.0 + 16.0 / 128.0;  // [GPTQ]/[AWQ] fp16 scale per group of 128
    case WeightQuant::nf4:
      // [QLoRA §3]: block 64 fp32 absmax = 32/64 = 0.5 bits; double quant: 8/64 + 32/(64·256) = 0.127.
      return double_quant ? 4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0) : 4.0 + 32.0 / 64.0;
    case WeightQuant::gguf_q4_k_m: return 4.85;  // [GGUF] file-average of the Q4_K/Q6_K mix
    case WeightQuant::gguf_q8_0: return 8.0 + 16.0 / 32.0;  // [GGUF] block_q8_0: 32 int8 + fp16 d
    case WeightQuant::gguf_q4_0: return 18.0 * 8.0 / 32.0;  // [GGUF] block_q4_0: fp16 d + 16 B nibbles per 32
    case WeightQuant::gguf_q2_k: return 84.0 * 8.0 / 256.0; // [GGUF] block_q2_K: 16 + 64 + 2 + 2 B per 256
    case WeightQuant::mxfp4: return 4.0 + 8.0 / 32.0;       // [MX] 32 E2M1 + one E8M0 scale
  }
  return 16.0;
}

double kv_dtype_bytes(KvDtype k) noexcept {
  switch (k) {
    case KvDtype::bf16:
    case KvDtype::fp16: return 2.0;
    case KvDtype::fp8:
    case KvDtype::int8: return 1.0;
    case KvDtype::int4: return (4.0 + 16.0 / 128.0) / 8.0;
    case KvDtype::q8_0: return 34.0 / 32.0;  // [GGUF] block_q8_0: 32 int8 + fp16 scale
  }
  return 2.0;
}

}  // namespace gpuplan
