#pragma once
/// The model-choosing fields shared by the size, plan and models requests (one name each):
/// model, config, safetensors, params, layers, hidden, heads, kv_heads, vocab, intermediate, mlp.
/// config and safetensors read local files: CLI only.
#include <vector>

#include "api/fields.hpp"
#include "model/model_source.hpp"

namespace gpuplan::api {

/// Get returns the input's ModelSource.
template <class In, ModelSource& (*Get)(In&)>
std::vector<FieldDef<In>> model_fields() {
  using nlohmann::json;
  return {
      {{"model", "--model", FieldType::string, FieldFace::both,
        "a bundled model preset (see GET /api/models, `gpuplan models`), e.g. llama-3.1-8b"},
       [](In& in, const json& v) { Get(in).preset = v.get<std::string>(); }},
      {{"config", "--config", FieldType::string, FieldFace::cli_only, "a Hugging Face config.json"},
       [](In& in, const json& v) { Get(in).config_path = v.get<std::string>(); }},
      {{"safetensors", "--safetensors", FieldType::string, FieldFace::cli_only,
        "a .safetensors file, a model.safetensors.index.json / pytorch_model.bin.index.json, or a folder holding one"},
       [](In& in, const json& v) { Get(in).safetensors_path = v.get<std::string>(); }},
      {{"params", "--params", FieldType::count, FieldFace::both,
        "total parameters of a synthetic dense decoder: 7e9, 7B, 124M, 1.5T"},
       [](In& in, const json& v) { Get(in).params = count_value(v); }},
      {{"layers", "--layers", FieldType::integer, FieldFace::both, "with params: number of decoder layers"},
       [](In& in, const json& v) { Get(in).layers = json_as<std::int64_t>(v); }},
      {{"hidden", "--hidden", FieldType::integer, FieldFace::both, "with params: hidden size"},
       [](In& in, const json& v) { Get(in).hidden = json_as<std::int64_t>(v); }},
      {{"heads", "--heads", FieldType::integer, FieldFace::both, "with params: attention heads (default hidden/128)"},
       [](In& in, const json& v) { Get(in).heads = json_as<std::int64_t>(v); }},
      {{"kv_heads", "--kv-heads", FieldType::integer, FieldFace::both, "with params: key-value heads (GQA; default = heads)"},
       [](In& in, const json& v) { Get(in).kv_heads = json_as<std::int64_t>(v); }},
      {{"vocab", "--vocab", FieldType::integer, FieldFace::both, "with params: vocabulary size (default 32000)"},
       [](In& in, const json& v) { Get(in).vocab = json_as<std::int64_t>(v); }},
      {{"intermediate", "--intermediate", FieldType::integer, FieldFace::both, "with params: MLP intermediate size"},
       [](In& in, const json& v) { Get(in).intermediate = json_as<std::int64_t>(v); }},
      {{"mlp", "--mlp", FieldType::string, FieldFace::both, "with params: gated (SwiGLU, default) or plain (2-matrix GELU MLP)"},
       [](In& in, const json& v) {
         const std::string k = v.get<std::string>();
         if (k != "plain" && k != "gated")
           throw_invalid_coded("", "unknown_choice", {{"value", k}, {"allowed", "plain, gated"}}, "unknown MLP kind '" + k + "'",
                               "plain or gated");
         Get(in).plain_mlp = k == "plain";
       }},
  };
}

}  // namespace gpuplan::api
