#include "model/param_count.hpp"

#include <fmt/core.h>

#include "util/error.hpp"

namespace gpuplan {
namespace {

std::int64_t& bucket_of(ParamBreakdown& p, ParamBucket b) {
  switch (b) {
    case ParamBucket::embeddings: return p.embeddings;
    case ParamBucket::attention: return p.attention;
    case ParamBucket::mlp: return p.mlp;
    case ParamBucket::experts: return p.experts;
    case ParamBucket::router: return p.router;
    case ParamBucket::norms: return p.norms;
    case ParamBucket::head: return p.head;
    case ParamBucket::other: return p.other;
  }
  return p.other;
}

}  // namespace

ParamBreakdown count_params(const LayerGeometry& g) {
  ParamBreakdown p;
  for (const auto& l : g.linears) {
    bucket_of(p, l.bucket) += l.params();
    if (l.role == LinearRole::routed_expert) p.active_experts += l.active_params();
  }
  for (const auto& t : g.tensors) bucket_of(p, t.bucket) += t.params();
  return p;
}

ParamBreakdown count_decoder_params(const ModelArch& a) { return count_params(build_layer_geometry(a)); }

void finalize_arch(ModelArch& a, const ParamBreakdown& outside) {
  a.geometry = build_layer_geometry(a);
  ParamBreakdown p = count_params(a.geometry);
  p.embeddings += outside.embeddings;
  p.attention += outside.attention;
  p.mlp += outside.mlp;
  p.experts += outside.experts;
  p.router += outside.router;
  p.norms += outside.norms;
  p.head += outside.head;
  p.other += outside.other;
  a.params = p;
  a.attention = attention_kind(a);
}

AttentionKind attention_kind(const ModelArch& a) {
  if (a.mla) return AttentionKind::mla;
  const bool attends = a.family == ModelFamily::decoder || a.family == ModelFamily::encoder ||
                       a.family == ModelFamily::encoder_decoder;
  if (!attends || a.num_attention_heads <= 0 || a.attention_layers.value_or(1) == 0) {
    return AttentionKind::none;
  }
  if (a.num_kv_heads == 1 && a.num_attention_heads > 1) return AttentionKind::mqa;
  if (a.num_kv_heads > 0 && a.num_kv_heads < a.num_attention_heads) return AttentionKind::gqa;
  return AttentionKind::mha;
}

std::string_view attention_kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::mha: return "MHA";
    case AttentionKind::gqa: return "GQA";
    case AttentionKind::mqa: return "MQA";
    case AttentionKind::mla: return "MLA";
    case AttentionKind::none: return "none";
  }
  return "none";
}

std::string_view family_name(ModelFamily family) {
  switch (family) {
    case ModelFamily::decoder: return "decoder";
    case ModelFamily::diffusion_unet: return "diffusion_unet";
    case ModelFamily::diffusion_transformer: return "diffusion_transformer";
    case ModelFamily::state_space: return "state_space";
    case ModelFamily::encoder: return "encoder";
    case ModelFamily::encoder_decoder: return "encoder_decoder";
  }
  return "decoder";
}

std::string_view family_description(ModelFamily family) {
  switch (family) {
    case ModelFamily::decoder: return "a transformer decoder";
    case ModelFamily::state_space: return "a state-space (Mamba) model, not a transformer";
    case ModelFamily::encoder: return "an encoder (BERT-style) model";
    case ModelFamily::encoder_decoder: return "an encoder-decoder (T5-style) model";
    case ModelFamily::diffusion_unet:
    case ModelFamily::diffusion_transformer: return "a diffusion model";
  }
  return "a transformer decoder";
}

}  // namespace gpuplan
