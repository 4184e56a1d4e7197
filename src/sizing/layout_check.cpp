#include "sizing/layout_check.hpp"

#include <fmt/core.h>

namespace gpuplan {

std::optional<std::string> training_layout_problem(const ModelArch& arch, const ParallelLayout& l) {
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.ep < 1 || l.micro_batch < 1 || l.virtual_stages < 1) {
    return fmt::format("degrees must be ≥ 1 (tp {} pp {} dp {} ep {} micro-batch {} virtual stages {})", l.tp, l.pp,
                       l.dp, l.ep, l.micro_batch, l.virtual_stages);
  }
  if (l.zero_stage < 0 || l.zero_stage > 3) return fmt::format("ZeRO stage {} is not 0-3", l.zero_stage);
  if (arch.num_attention_heads > 0 && arch.num_attention_heads % l.tp != 0) {
    return fmt::format("tp {} does not divide the {} attention heads of {}", l.tp, arch.num_attention_heads, arch.name);
  }
  if (arch.num_layers > 0 && l.pp > arch.num_layers) {
    return fmt::format("pp {} exceeds the {} layers of {}", l.pp, arch.num_layers, arch.name);
  }
  if (l.ep > 1) {
    if (!arch.moe) return fmt::format("ep {} on a dense model ({})", l.ep, arch.name);
    if (arch.moe->num_routed_experts % l.ep != 0) {
      return fmt::format("ep {} does not divide the {} experts of {}", l.ep, arch.moe->num_routed_experts, arch.name);
    }
  }
  if (l.dp % l.ep != 0) return fmt::format("ep {} does not divide dp {}", l.ep, l.dp);
  if (l.virtual_stages > 1 && l.pp == 1) return fmt::format("{} virtual stages need pp > 1", l.virtual_stages);
  if (l.offload_params && l.zero_stage != 3) return "parameter offload needs ZeRO-3";
  return std::nullopt;
}

}  // namespace gpuplan
