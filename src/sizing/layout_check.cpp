#include "sizing/layout_check.hpp"

#include <fmt/core.h>

#include "util/error.hpp"

namespace gpuplan {

std::optional<std::string> kv_split_problem(const ModelArch& arch, int tp) {
  // memory.cpp validate_against_model: KV heads split over the TP ranks, or each replicated on
  // tp / kv ranks when tp > kv (vLLM, Megatron num_query_groups); one must divide the other.
  const std::int64_t kv = arch.num_kv_heads;
  const bool decoder = arch.family == ModelFamily::decoder && arch.num_layers > 0 && arch.hidden_size > 0;
  if (decoder && !arch.mla && kv > 0 && tp > 1 && (tp > kv ? tp % kv != 0 : kv % tp != 0)) {
    return Error(ErrorKind::invalid_input, "--tp",
                 fmt::format("tp {} and the {} KV heads of {} neither divide each other (no even split and no even "
                             "replication)",
                             tp, kv, arch.name),
                 fmt::format("a divisor or a multiple of {}", kv))
        .what();
  }
  return std::nullopt;
}

std::optional<std::string> serving_layout_problem(const ModelArch& arch, int tp) {
  if (tp < 1) return fmt::format("tp {} is below 1", tp);
  const bool decoder = arch.family == ModelFamily::decoder && arch.num_layers > 0 && arch.hidden_size > 0;
  if (decoder && arch.num_attention_heads > 0 && arch.num_attention_heads % tp != 0) {
    return Error(ErrorKind::invalid_input, "--tp",
                 fmt::format("tp {} does not divide the {} attention heads of {}", tp, arch.num_attention_heads,
                             arch.name),
                 fmt::format("a divisor of {}", arch.num_attention_heads))
        .what();
  }
  return kv_split_problem(arch, tp);
}

std::optional<std::string> training_layout_problem(const ModelArch& arch, const ParallelLayout& l) {
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.ep < 1 || l.micro_batch < 1 || l.virtual_stages < 1) {
    return fmt::format("degrees must be ≥ 1 (tp {} pp {} dp {} ep {} micro-batch {} virtual stages {})", l.tp, l.pp,
                       l.dp, l.ep, l.micro_batch, l.virtual_stages);
  }
  if (l.zero_stage < 0 || l.zero_stage > 3) return fmt::format("ZeRO stage {} is not 0-3", l.zero_stage);
  if ((arch.family == ModelFamily::encoder || arch.family == ModelFamily::encoder_decoder) && (l.tp > 1 || l.pp > 1)) {
    return fmt::format("tp {} pp {} on {}: encoder and encoder-decoder models are sized whole on one GPU", l.tp, l.pp,
                       arch.name);
  }
  if (arch.num_attention_heads > 0 && arch.num_attention_heads % l.tp != 0) {
    return fmt::format("tp {} does not divide the {} attention heads of {}", l.tp, arch.num_attention_heads, arch.name);
  }
  if (auto kv = kv_split_problem(arch, l.tp)) return kv;
  if (arch.num_layers > 0 && l.pp > arch.num_layers) {
    return fmt::format("pp {} exceeds the {} layers of {}", l.pp, arch.num_layers, arch.name);
  }
  if (l.ep > 1) {
    if (!arch.moe) return fmt::format("ep {} on a dense model ({})", l.ep, arch.name);
    if (arch.moe->num_routed_experts % l.ep != 0) {
      return fmt::format("ep {} does not divide the {} experts of {}", l.ep, arch.moe->num_routed_experts, arch.name);
    }
  }
  if (l.expert_tp < 0) return fmt::format("expert tp {} is negative", l.expert_tp);
  if (!l.expert_grid_divides()) {
    if (l.expert_tp > 0)
      return fmt::format("expert tp {} × ep {} does not divide tp {} × dp {}", l.etp(), l.ep, l.tp, l.dp);
    // Expert TP 1 lets the EP group span the TP ranks (Megatron-Core: etp × ep × edp = tp × dp).
    if (ParallelLayout::expert_tp_one_divides(l.tp, l.dp, l.ep))
      return fmt::format("ep {} does not divide dp {} (with expert TP 1, --expert-tp 1, the EP group spans the TP "
                         "ranks: ep {} divides tp {} × dp {})",
                         l.ep, l.dp, l.ep, l.tp, l.dp);
    return fmt::format("ep {} does not divide dp {}", l.ep, l.dp);
  }
  if (l.virtual_stages > 1 && l.pp == 1) return fmt::format("{} virtual stages need pp > 1", l.virtual_stages);
  if (l.offload_params && l.zero_stage != 3) return "parameter offload needs ZeRO-3";
  return std::nullopt;
}

}  // namespace gpuplan
