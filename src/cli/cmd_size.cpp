// `gpuplan size`: per-GPU memory of training or serving a model, and which GPUs of the catalog
// hold it. Thin over the api layer (api/size.hpp): the flags come from api::size_fields() (the
// fields of POST /api/size), api::run_size computes, api::to_json is the --json document; this
// file only renders text. Every number comes from the sizing layer.
#include <fmt/core.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/size.hpp"
#include "cli/api_flags.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "hardware/gpu_spec.hpp"
#include "model/model_source.hpp"
#include "sizing/sizing_request.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

std::string gib1(double bytes) { return fmt::format("{:.1f}", bytes / 1073741824.0); }

/// `before_fits`: printed between the breakdown and the table of GPUs that hold it (the answer for
/// --gpu NAME, which was the last line after a hundred rows of other GPUs: trial56 #13).
void render_text(const ModelArch& arch, const SizingRequest& req, const SizingResult& res,
                 const std::function<void()>& before_fits) {
  const double total = res.per_gpu.total_bytes();
  fmt::print("Model: {} ({:.2f}B params, {:.2f}B active) — {}\n", arch.name, static_cast<double>(arch.total_params()) / 1e9,
             static_cast<double>(arch.active_params()) / 1e9, arch.source);
  if (req.task == Task::serve) {
    const ServingMemoryRequest s = req.serving_request();
    fmt::print("Task: serve, weights {}, KV cache {}, context {} × concurrency {}, tp {} pp {}\n",
               weight_quant_name(s.quant), kv_dtype_name(s.kv_dtype), s.context_tokens, s.concurrency, s.tp, s.pp);
  } else {
    const TrainingMemoryRequest t = req.training_request();
    fmt::print("Task: {}, {}, {}, seq {} × micro-batch {}, tp {} pp {} dp {}, ZeRO-{}, recompute {}{}{}\n",
               task_name(t.task), train_precision_name(t.precision), optimizer_name(t.optimizer), t.seq_len,
               t.layout.micro_batch, t.layout.tp, t.layout.pp, t.layout.dp, t.layout.zero_stage,
               recompute_name(t.recompute),
               t.recompute_modules != 0 ? fmt::format(" (modules {})", recompute_modules_name(t.recompute_modules)) : "",
               t.task == Task::lora || t.task == Task::qlora ? fmt::format(", LoRA rank {}", t.lora_rank) : "");
  }
  std::string where = res.per_gpu.stage.empty() ? "" : ", " + res.per_gpu.stage;
  std::string phase = res.per_gpu.phase.empty() ? "" : " at the " + res.per_gpu.phase + " peak";
  fmt::print("\nMemory per GPU{}{} (GiB = 2^30 bytes):\n", phase, where);
  TextTable table;
  table.header = {"term", "GiB", "share"};
  table.right_align = {false, true, true};
  for (const auto& t : res.per_gpu.terms) {
    table.rows.push_back({t.name, gib1(t.bytes), fmt::format("{:.1f}%", total > 0 ? 100.0 * t.bytes / total : 0.0)});
  }
  table.rows.push_back({"total", gib1(total), "100.0%"});
  fmt::print("{}", table.render());
  if (res.per_gpu.cpu_offload_bytes > 0) {
    fmt::print("Host (CPU) memory per GPU for offloaded state: {} GiB (not in the total)\n",
               gib1(res.per_gpu.cpu_offload_bytes));
  }
  for (const auto& w : res.per_gpu.warnings) fmt::print("warning: {}\n", w);
  if (!res.explanation.empty()) {
    fmt::print("\nFormulas:\n");
    for (const auto& e : res.explanation) {
      fmt::print("  {}: {}\n      source: {}\n", e.name, e.formula, e.source);
    }
  }
  before_fits();
  fmt::print("\nGPUs that hold it with a {:.0f}% margin (requirement ≤ {:.0f}% of capacity), smallest count first.\n",
             100 * req.margin, 100 * (1 - req.margin));
  fmt::print("Assumption: {}.\n", res.fit_assumption);
  if (res.fits.empty()) {
    fmt::print("No GPU in the catalog holds it at the counts tried.\n");
    if (req.task != Task::serve && req.training.recompute == Recompute::none) {
      fmt::print("hint: activations are not sharded by data parallelism; try --recompute full or a smaller --seq.\n");
    }
    return;
  }
  TextTable fits;
  fits.header = {"GPU", "count", "per GPU GiB", "capacity GiB", "headroom", "layout"};
  fits.right_align = {false, true, true, true, true, false};
  for (const auto& f : res.fits) {
    const std::string layout = req.task == Task::serve
                                   ? fmt::format("tp {} pp {}", f.layout.tp, f.layout.pp)
                                   : fmt::format("tp {} pp {} dp {} ZeRO-{}", f.layout.tp, f.layout.pp, f.layout.dp,
                                                 f.layout.zero_stage);
    fits.rows.push_back({f.gpu->name, std::to_string(f.gpu_count), gib1(f.per_gpu_bytes),
                         gib1(f.capacity_bytes),
                         fmt::format("{:.0f}%", 100 * f.headroom_fraction), layout});
  }
  fmt::print("{}", fits.render());
}

void print_gpu_limits(const api::SizeOutput& out) {
  if (out.limits) {
    const ServingMemoryRequest sr = out.request.serving_request();
    const GpuSpec& g = *out.limits_gpu;
    const double usable = g.fit_memory_bytes() * (1.0 - out.request.margin);
    const double fixed = out.result.per_gpu.term_bytes("weights") + out.result.per_gpu.term_bytes("cuda_context");
    if (out.limits->max_context_tokens == 0 && out.limits->max_concurrency == 0 && fixed > usable) {
      // trial50 #6: "longest context = 0 tokens" with no reason.
      fmt::print("\nOn {} ({} GiB per GPU, tp {} pp {}, {:.0f}% margin): nothing fits: the weights and CUDA context "
                 "alone take {} GiB per GPU of the {} GiB usable (more GPUs with --tp, or fewer bits with --quant)\n",
                 g.name, gib1(g.fit_memory_bytes()), sr.tp, sr.pp, 100 * out.request.margin, gib1(fixed), gib1(usable));
    } else {
      fmt::print("\nOn {} ({} GiB per GPU, tp {} pp {}, {:.0f}% margin): longest context at concurrency {} = {} "
                 "tokens{}; most sequences at {} tokens = {}\n",
                 g.name, gib1(g.fit_memory_bytes()), sr.tp, sr.pp, 100 * out.request.margin, sr.concurrency,
                 out.limits->max_context_tokens,
                 out.arch.max_position_embeddings > 0 && out.limits->max_context_tokens == out.arch.max_position_embeddings
                     ? " (the model's maximum)"
                     : "",
                 sr.context_tokens, out.limits->max_concurrency);
    }
  }
  if (out.training_limits) {
    const TrainingMemoryRequest tr = out.request.training_request();
    const GpuSpec& g = *out.limits_gpu;
    const TrainingLimits& l = *out.training_limits;
    fmt::print("\nOn {} ({} GiB per GPU, layout as above, {:.0f}% margin): longest sequence at micro-batch {} = {}; "
               "largest micro-batch at {} tokens = {}{}\n",
               g.name, gib1(g.fit_memory_bytes()), 100 * out.request.margin, tr.layout.micro_batch,
               l.max_seq_len == 0 ? std::string("none fits (not even 1 token)") : fmt::format("{} tokens", l.max_seq_len),
               tr.seq_len, l.max_micro_batch == 0 ? std::string("none fits") : std::to_string(l.max_micro_batch),
               out.arch.max_position_embeddings > 0 && l.max_seq_len > out.arch.max_position_embeddings
                   ? fmt::format(" (past the model's {} positions: RoPE scaling or long-context training)",
                                 out.arch.max_position_embeddings)
                   : "");
  }
}

GPUPLAN_REGISTER_COMMAND(Command{
    "size", "GPU memory per GPU of training or serving a model, and which GPUs hold it",
    [](CLI::App& sub, GlobalOptions& global) {
      auto in = std::make_shared<api::SizeInput>();
      auto json_out = std::make_shared<bool>(false);
      add_api_flags(sub, in, api::size_fields());
      sub.add_flag("--json", *json_out, "print JSON (every term in bytes)");
      sub.callback([in, json_out, &global] {
        const api::Context ctx = make_context(global);
        const api::SizeOutput out = api::run_size(*in, ctx);
        if (*json_out) {
          fmt::print("{}\n", dump_json(api::to_json(out)));
          return;
        }
        render_text(out.arch, out.request, out.result, [&] { print_gpu_limits(out); });
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
