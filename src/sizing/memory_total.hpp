#pragma once
/// Sizing layer: the per-GPU training memory TOTAL only, for searches that size thousands of
/// layouts (the planner). It returns exactly training_memory(arch, req).total_bytes() — the same
/// double, bit for bit — without the explaining path's named terms, phase/stage strings,
/// warnings, std::function formulas or any heap allocation per call. Everything that depends on
/// the model and the request but not on the layout is computed once, at construction: the
/// model's shape, the parameter groups, the linear-layer families (largest matrices, Adafactor
/// rows + cols), the LoRA target set (resolved once into flags instead of string comparisons
/// per matrix), the adapter parameter sums and the per-layer activation bytes per token.
///
/// Units: bytes per GPU (the most loaded pipeline stage), as memory.hpp. The formulas and their
/// sources are those of memory.cpp (training_stage), repeated here term by term in the same
/// floating-point order; tests/sizing/memory_total_test.cpp checks exact equality with
/// training_memory over many layouts (TP/PP/DP/EP/ZeRO/recompute/offload) × tasks (full, LoRA,
/// QLoRA) × precisions × optimizers × bundled models (dense, GQA, MLA, MoE). A change to a
/// memory.cpp training formula must be made here too; that test fails until it is.
///
/// Keep using training_memory / explain_training_memory for what is printed (`size`, a plan's
/// --explain): the lean path names nothing.
#include <array>

#include "model/model_arch.hpp"
#include "sizing/memory.hpp"

namespace gpuplan {

class TrainingMemoryTotal {
 public:
  /// `request`: every field but layout and recompute is kept for total_bytes(). Throws what
  /// training_memory(arch, request) throws for the request itself (Error{invalid_input}).
  TrainingMemoryTotal(const ModelArch& arch, const TrainingMemoryRequest& request);

  /// training_memory(arch, request with `layout` and `recompute`).total_bytes(), for a layout
  /// that training_layout_problem (layout_check.hpp) accepts; such a layout is not re-checked
  /// here (the caller checks once per layout). Pure, no allocation.
  double total_bytes(const ParallelLayout& layout, Recompute recompute) const;

 private:
  struct Activation {
    double replicated = 0, split = 0, scores = 0;
  };
  double stage_total(const ParallelLayout& lay, Recompute rc, int index) const;  ///< stage index 0 … pp − 1

  TrainingMemoryRequest r_;  ///< layout and recompute ignored
  // Model shape (memory.cpp Shape).
  bool decoder_ = false, moe_ = false, tied_ = false, head_ = false;
  double h_ = 0, L_ = 0, V_ = 0, L_moe_ = 0, L_dense_ = 0;
  double L_attn_linears_ = 0, L_dense_linears_ = 0;  ///< memory.cpp Shape: the layers holding those matrices
  double kv_heads_ = 0, kv_proj_per_head_ = 0;  ///< TP > KV heads: replicated K/V (memory.cpp kv_replicated_params)
  // Parameter groups, as doubles (memory.cpp static_casts of the int64 sums).
  double attention_mlp_ = 0, norms_router_ = 0, experts_ = 0, embeddings_ = 0, other_ = 0, head_params_ = 0;
  double total_params_ = 0, layer_params_dense_ = 0, layer_params_expert_ = 0;
  // Linear families (layout-independent sums and extremes).
  std::array<double, 16> products_{};  ///< d_in × d_out of each family (optimizer in backward)
  int n_products_ = 0;
  double biggest_product_ = 0;         ///< largest d_in × d_out (QLoRA dequantisation buffer)
  double adafactor_dense_ = 0, adafactor_expert_ = 0;  ///< Σ (d_in + d_out) × copies × layers
  double adapter_dense_ = 0, adapter_expert_ = 0;      ///< Σ r·(d_in + d_out) of targeted matrices
  double adapted_dense_matrices_ = 0;                  ///< targeted non-expert matrices × layers
  // Per-layer activation bytes per token (layout-independent), dense and MoE layers.
  Activation dense_act_, moe_act_;
  /// The same under Recompute::selective, without what the request's recompute_modules discard.
  Activation dense_act_selective_, moe_act_selective_;
  // Recompute::op_selective (memory.hpp op_selective_saved_bytes_per_token): the widths it reads; MLA excluded.
  bool op_selective_applies_ = false;
  double heads_ = 0, q_width_ = 0, v_width_ = 0, f_ = 0, o_in_width_ = 0;
};

}  // namespace gpuplan
