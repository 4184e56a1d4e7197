// `gpuplan models [NAME] [--json]`: lists the bundled model presets, or prints one model's
// per-component parameter breakdown (a preset name, or any model flag: --config, --safetensors, --params).
// Rendering only: every number comes from the model layer (model/*.hpp).
#include <fmt/core.h>

#include <memory>
#include <string>

#include "api/catalog_reads.hpp"
#include "cli/api_flags.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "model/model_source.hpp"
#include "model/param_count.hpp"
#include "model/presets.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {


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
  if (a.family == ModelFamily::decoder || a.family == ModelFamily::state_space) {
    row("layers", std::to_string(a.num_layers));
    row("hidden", std::to_string(a.hidden_size));
    row("intermediate", std::to_string(a.intermediate_size));
    row("vocab", std::to_string(a.vocab_size));
  }
  if (a.family == ModelFamily::decoder) {
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

GPUPLAN_REGISTER_COMMAND(Command{
    "models", "list the bundled model presets, or show one model's parameter breakdown",
    [](CLI::App& sub, GlobalOptions& global) {
      auto in = std::make_shared<api::ModelsInput>();
      auto json_out = std::make_shared<bool>(false);
      add_api_flags(sub, in, api::models_fields());
      sub.add_flag("--json", *json_out, "print JSON (parameter counts as integers)");
      sub.callback([in, json_out, &global] {
        const api::Context ctx = make_context(global);
        const api::ModelsOutput out = api::run_models(*in, ctx);
        if (*json_out) {
          fmt::print("{}\n", dump_json(api::to_json(out)));
        } else if (!out.single) {
          print_list();
        } else {
          print_one(out.models.front().arch, out.models.front().preset);
        }
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
