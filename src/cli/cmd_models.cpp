// `gpuplan models [NAME] [--json]`: lists the bundled model presets, or prints one model's
// per-component parameter breakdown (a preset name, or any model flag: --config, --safetensors, --params).
// Rendering only: every number comes from the model layer (model/*.hpp).
#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.hpp"
#include "cli/common.hpp"
#include "cli/model_flags.hpp"
#include "model/model_source.hpp"
#include "model/param_count.hpp"
#include "model/presets.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

using nlohmann::json;

/// 8030261248 → "8.03B"; 124439808 → "124M".
std::string human(std::int64_t n) {
  const double v = static_cast<double>(n);
  if (v >= 1e12) return fmt::format("{:.3g}T", v / 1e12);
  if (v >= 1e9) return fmt::format("{:.3g}B", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.3g}K", v / 1e3);
  return std::to_string(n);
}

std::string sliding_text(const ModelArch& a) {
  if (!a.sliding_window) return "none";
  return fmt::format("{} on {}/{} layers", *a.sliding_window, a.num_sliding_window_layers(), a.num_layers);
}

std::string_view norm_name(NormKind k) {
  switch (k) {
    case NormKind::rms_norm: return "rms_norm";
    case NormKind::layer_norm: return "layer_norm";
    case NormKind::gemma_rms_norm: return "gemma_rms_norm";
    case NormKind::layer_norm_no_bias: return "layer_norm_no_bias";
    case NormKind::non_parametric: return "non_parametric";
  }
  return "rms_norm";
}

json breakdown_json(const ParamBreakdown& p) {
  return {{"embeddings", p.embeddings}, {"attention", p.attention}, {"mlp", p.mlp},     {"experts", p.experts},
          {"router", p.router},         {"norms", p.norms},         {"head", p.head},   {"other", p.other},
          {"active_experts", p.active_experts}, {"total", p.total()}, {"active", p.active()}};
}

json arch_json(const ModelArch& a, const PresetInfo* info) {
  auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  json j = {
      {"name", a.name},
      {"model_type", a.model_type},
      {"family", family_name(a.family)},
      {"source", a.source},
      {"total_params", a.total_params()},
      {"active_params", a.active_params()},
      {"params", breakdown_json(a.params)},
      {"num_layers", a.num_layers},
      {"hidden_size", a.hidden_size},
      {"intermediate_size", a.intermediate_size},
      {"num_attention_heads", a.num_attention_heads},
      {"num_kv_heads", a.num_kv_heads},
      {"head_dim", a.head_dim},
      {"vocab_size", a.vocab_size},
      {"attention", attention_kind_name(a.attention)},
      {"sliding_window", opt(a.sliding_window)},
      {"sliding_window_layers", a.num_sliding_window_layers()},
      {"max_position_embeddings", a.max_position_embeddings > 0 ? json(a.max_position_embeddings) : json(nullptr)},
      {"tied_embeddings", a.tied_embeddings},
      {"torch_dtype", a.torch_dtype.empty() ? json(nullptr) : json(a.torch_dtype)},
      {"mtp_params", a.mtp_params},
      {"checkpoint_bytes", opt(a.checkpoint_bytes)},
      {"notes", a.notes},
  };
  if (a.moe) {
    j["moe"] = {{"num_routed_experts", a.moe->num_routed_experts},
                {"experts_per_token", a.moe->experts_per_token},
                {"num_shared_experts", a.moe->num_shared_experts},
                {"expert_intermediate_size", a.moe->expert_intermediate_size},
                {"num_moe_layers", a.moe->num_moe_layers}};
  }
  if (a.mla) {
    j["mla"] = {{"q_lora_rank", opt(a.mla->q_lora_rank)},
                {"kv_lora_rank", a.mla->kv_lora_rank},
                {"qk_nope_head_dim", a.mla->qk_nope_head_dim},
                {"qk_rope_head_dim", a.mla->qk_rope_head_dim},
                {"v_head_dim", a.mla->v_head_dim}};
  }
  if (!a.geometry.linears.empty()) {  // the model layer's one geometry (model/geometry.hpp)
    const LayerGeometry& g = a.geometry;
    json linears = json::array();
    for (const auto& l : g.linears) {
      linears.push_back({{"name", l.name}, {"lora_target", l.lora_target}, {"role", linear_role_name(l.role)},
                         {"d_in", l.d_in}, {"d_out", l.d_out}, {"copies", l.copies}, {"active_copies", l.active_copies},
                         {"layers", l.layers}, {"bias", l.bias}, {"tied", l.tied}, {"params", l.params()}});
    }
    j["geometry"] = {{"attention_layers", g.attention_layers}, {"kv_cache_layers", g.kv_cache_layers},
                     {"dense_mlp_layers", g.dense_mlp_layers},  {"moe_layers", g.moe_layers},
                     {"ssm_layers", g.ssm_layers},              {"kv_cache_width", g.attention.kv_cache_width},
                     {"activation", mlp_activation_name(g.activation)}, {"norm", norm_name(g.norm)},
                     {"parallel_attention", g.parallel_attention}, {"linears", linears}};
  }
  if (info) {
    j["hf_id"] = info->hf_id;
    j["provenance_class"] = info->provenance_class;
    j["data_folder"] = "data/models/" + info->folder;
  }
  return j;
}

void print_list() {
  TextTable t;
  t.header = {"name", "HF id", "family", "total", "active", "layers", "hidden", "attn", "sliding window", "context"};
  t.right_align = {false, false, false, true, true, true, true, false, false, true};
  for (const auto& p : list_presets()) {
    const ModelArch a = load_preset(p.short_name);
    t.rows.push_back({p.short_name, p.hf_id, std::string(family_name(a.family)), human(a.total_params()),
                      human(a.active_params()), a.num_layers > 0 ? std::to_string(a.num_layers) : "n/a",
                      a.hidden_size > 0 ? std::to_string(a.hidden_size) : "n/a",
                      std::string(attention_kind_name(a.attention)), sliding_text(a),
                      a.max_position_embeddings > 0 ? std::to_string(a.max_position_embeddings) : "unknown"});
  }
  fmt::print("{}", t.render());
  fmt::print("{} presets (data/models, provenance in data/models/PROVENANCE.md). total/active: parameters; "
             "`gpuplan models NAME` shows the breakdown.\n",
             list_presets().size());
}

void print_one(const ModelArch& a, const PresetInfo* info) {
  TextTable shape;
  shape.header = {"field", "value"};
  auto row = [&](std::string k, std::string v) { shape.rows.push_back({std::move(k), std::move(v)}); };
  row("name", a.name);
  if (info) row("HF id", info->hf_id);
  row("source", a.source);
  row("model_type", a.model_type);
  row("family", std::string(family_name(a.family)));
  const bool transformer = a.family == ModelFamily::decoder || a.family == ModelFamily::encoder ||
                           a.family == ModelFamily::encoder_decoder;
  if (transformer || a.family == ModelFamily::state_space) {
    row("layers", std::to_string(a.num_layers));
    row("hidden", std::to_string(a.hidden_size));
    row("intermediate", std::to_string(a.intermediate_size));
    row("vocab", std::to_string(a.vocab_size));
  }
  if (transformer) {
    row("attention", fmt::format("{} ({} heads, {} KV heads, head_dim {})", attention_kind_name(a.attention), a.num_attention_heads,
                                 a.num_kv_heads, a.head_dim));
    if (a.mla) {
      row("MLA", fmt::format("kv_lora_rank {}, q_lora_rank {}, rope dim {}, v dim {}", a.mla->kv_lora_rank,
                             a.mla->q_lora_rank ? std::to_string(*a.mla->q_lora_rank) : "none", a.mla->qk_rope_head_dim,
                             a.mla->v_head_dim));
    }
    row("sliding window", sliding_text(a));
    row("context", a.max_position_embeddings > 0 ? std::to_string(a.max_position_embeddings) : "unknown");
    row("tied embeddings", a.tied_embeddings ? "yes" : "no");
  }
  if (a.moe) {
    row("MoE", fmt::format("{} routed experts (top-{}), {} shared, expert width {}, {} of {} layers MoE", a.moe->num_routed_experts,
                           a.moe->experts_per_token, a.moe->num_shared_experts, a.moe->expert_intermediate_size,
                           a.moe->num_moe_layers, a.num_layers));
  }
  if (const LayerGeometry& g = a.geometry; g.ssm_layers > 0 || (transformer && g.attention_layers != a.num_layers)) {
    row("blocks", fmt::format("{} with attention, {} with an SSM mixer, {} dense MLP, {} MoE", g.attention_layers, g.ssm_layers,
                              g.dense_mlp_layers, g.moe_layers));
  }
  if (a.diffusion) {
    const auto& d = *a.diffusion;
    if (d.num_double_stream_layers > 0) {
      row("blocks", fmt::format("{} double-stream + {} single-stream, {} heads x {}", d.num_double_stream_layers,
                                d.num_single_stream_layers, d.num_attention_heads, d.attention_head_dim));
    } else {
      std::string ch;
      for (auto c : d.block_out_channels) ch += (ch.empty() ? "" : ", ") + std::to_string(c);
      row("block channels", ch);
    }
  }
  row("checkpoint dtype", a.torch_dtype.empty() ? "unknown" : a.torch_dtype);
  if (a.checkpoint_bytes) row("checkpoint bytes", std::to_string(*a.checkpoint_bytes));
  fmt::print("{}\n", shape.render());

  TextTable t;
  t.header = {"component", "parameters", "share"};
  t.right_align = {false, true, true};
  const ParamBreakdown& p = a.params;
  const double total = static_cast<double>(p.total());
  auto add = [&](const char* name, std::int64_t v) {
    if (v == 0) return;
    t.rows.push_back({name, fmt::format("{}", v), fmt::format("{:.2f}%", 100.0 * static_cast<double>(v) / total)});
  };
  add("embeddings", p.embeddings);
  add("attention", p.attention);
  add("mlp", p.mlp);
  add("experts (all)", p.experts);
  add("router", p.router);
  add("norms", p.norms);
  add("head", p.head);
  add("other", p.other);
  t.rows.push_back({"total", fmt::format("{}", p.total()), human(p.total())});
  if (a.is_moe()) t.rows.push_back({"active per token", fmt::format("{}", p.active()), human(p.active())});
  if (a.mtp_params > 0) t.rows.push_back({"MTP module (not in total)", fmt::format("{}", a.mtp_params), human(a.mtp_params)});
  fmt::print("{}", t.render());
  for (const auto& n : a.notes) fmt::print("note: {}\n", n);
}

struct ModelsOptions {
  std::string name;
  bool json = false;
  ModelSource source;
};

GPUPLAN_REGISTER_COMMAND(Command{
    "models", "list the bundled model presets, or show one model's parameter breakdown",
    [](CLI::App& sub, GlobalOptions&) {
      auto opts = std::make_shared<ModelsOptions>();
      sub.add_option("name", opts->name, "a preset name (see the list); or use --config/--safetensors/--params");
      sub.add_flag("--json", opts->json, "print JSON (parameter counts as integers)");
      add_model_flags(sub, opts->source);
      sub.callback([opts] {
        ModelSource src = opts->source;
        if (!opts->name.empty()) {
          if (!src.preset.empty()) throw_invalid("--model", "model named twice (positional NAME and --model)", "one of them");
          src.preset = opts->name;
        }
        const bool any = !src.preset.empty() || !src.config_path.empty() || !src.safetensors_path.empty() || src.params;
        if (!any) {
          if (opts->json) {
            json arr = json::array();
            for (const auto& p : list_presets()) arr.push_back(arch_json(load_preset(p.short_name), &p));
            fmt::print("{}\n", dump_json(arr));
          } else {
            print_list();
          }
          return;
        }
        const ModelArch a = resolve_model(src);
        const PresetInfo* info = src.preset.empty() ? nullptr : find_preset(src.preset);
        if (opts->json) {
          fmt::print("{}\n", dump_json(arch_json(a, info)));
        } else {
          print_one(a, info);
        }
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
