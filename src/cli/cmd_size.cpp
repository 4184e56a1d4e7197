// `gpuplan size`: per-GPU memory of training or serving a model, and which GPUs of the catalog
// hold it. Parses flags into SizingRequest (sizing/sizing_request.hpp), calls run_sizing and
// renders; every number comes from the sizing layer.
#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.hpp"
#include "cli/common.hpp"
#include "cli/model_flags.hpp"
#include "hardware/gpu_spec.hpp"
#include "model/model_source.hpp"
#include "sizing/sizing_request.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

using nlohmann::json;

struct SizeOptions {
  ModelSource source;
  SizingRequest request;
  // Defaults: sizing/workload_defaults.hpp, shared with plan and estimate.
  std::string task{task_name(workload_defaults::kTask)}, precision{train_precision_name(workload_defaults::kPrecision)};
  std::string optimizer{optimizer_name(workload_defaults::kOptimizer)}, recompute = "none";
  std::string quant{weight_quant_name(workload_defaults::kQuant)}, kv_dtype{kv_dtype_name(workload_defaults::kKvDtype)}, profile = "pytorch_eager", lora_targets = "all-linear";
  bool offload = false, offload_params = false, no_flash = false, json_out = false;
  std::optional<int> ep;
  std::optional<std::string> stack;
  std::optional<std::string> gpu;  ///< serve: report the longest context / most sequences on this GPU
  bool offload_activations = false;
};

std::vector<std::string> split_targets(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur == "all_linear" ? "all-linear" : cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

std::string gib1(double bytes) { return fmt::format("{:.1f}", bytes / 1073741824.0); }

json layout_json(const ParallelLayout& l) {
  return {{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}, {"ep", l.ep}, {"zero_stage", l.zero_stage}};
}

void render_text(const ModelArch& arch, const SizingRequest& req, const SizingResult& res) {
  const double total = res.per_gpu.total_bytes();
  fmt::print("Model: {} ({:.2f}B params, {:.2f}B active) — {}\n", arch.name, static_cast<double>(arch.total_params()) / 1e9,
             static_cast<double>(arch.active_params()) / 1e9, arch.source);
  if (req.task == Task::serve) {
    const ServingMemoryRequest s = req.serving_request();
    fmt::print("Task: serve, weights {}, KV cache {}, context {} × concurrency {}, tp {} pp {}\n",
               weight_quant_name(s.quant), kv_dtype_name(s.kv_dtype), s.context_tokens, s.concurrency, s.tp, s.pp);
  } else {
    const TrainingMemoryRequest t = req.training_request();
    fmt::print("Task: {}, {}, {}, seq {} × micro-batch {}, tp {} pp {} dp {}, ZeRO-{}, recompute {}{}\n",
               task_name(t.task), train_precision_name(t.precision), optimizer_name(t.optimizer), t.seq_len,
               t.layout.micro_batch, t.layout.tp, t.layout.pp, t.layout.dp, t.layout.zero_stage,
               recompute_name(t.recompute),
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

json render_json(const ModelArch& arch, const SizingRequest& req, const SizingResult& res) {
  const double total = res.per_gpu.total_bytes();
  json terms = json::array();
  for (const auto& t : res.per_gpu.terms) {
    terms.push_back({{"name", t.name}, {"bytes", t.bytes}, {"unit", "bytes"},
                     {"share", total > 0 ? t.bytes / total : 0.0}});
  }
  json j;
  j["model"] = {{"name", arch.name},
                {"source", arch.source},
                {"total_params", arch.total_params()},
                {"active_params", arch.active_params()}};
  if (req.task == Task::serve) {
    const ServingMemoryRequest s = req.serving_request();
    j["request"] = {{"task", "serve"},           {"quant", weight_quant_name(s.quant)},
                    {"kv_dtype", kv_dtype_name(s.kv_dtype)}, {"context_tokens", s.context_tokens},
                    {"concurrency", s.concurrency}, {"tp", s.tp},
                    {"pp", s.pp},                {"margin", req.margin}};
  } else {
    const TrainingMemoryRequest t = req.training_request();
    j["request"] = {{"task", task_name(t.task)},
                    {"precision", train_precision_name(t.precision)},
                    {"optimizer", optimizer_name(t.optimizer)},
                    {"seq_len", t.seq_len},
                    {"micro_batch", t.layout.micro_batch},
                    {"layout", layout_json(t.layout)},
                    {"recompute", recompute_name(t.recompute)},
                    {"activation_profile", activation_profile_name(t.activation_profile)},
                    {"lora_rank", t.lora_rank},
                    {"margin", req.margin}};
  }
  j["per_gpu"] = {{"terms", terms},
                  {"total_bytes", total},
                  {"phase", res.per_gpu.phase},
                  {"stage", res.per_gpu.stage},
                  {"cpu_offload_bytes", res.per_gpu.cpu_offload_bytes},
                  {"warnings", res.per_gpu.warnings}};
  json fits = json::array();
  for (const auto& f : res.fits) {
    fits.push_back({{"gpu", f.gpu->name},
                    {"gpu_count", f.gpu_count},
                    {"per_gpu_bytes", f.per_gpu_bytes},
                    {"capacity_bytes", f.capacity_bytes},
                    {"headroom_fraction", f.headroom_fraction},
                    {"layout", layout_json(f.layout)}});
  }
  j["fits"] = fits;
  j["fit_assumption"] = res.fit_assumption;
  if (!res.explanation.empty()) {
    json ex = json::array();
    for (const auto& e : res.explanation) {
      ex.push_back({{"name", e.name}, {"bytes", e.bytes}, {"formula", e.formula}, {"source", e.source}});
    }
    j["explanation"] = ex;
  }
  return j;
}

GPUPLAN_REGISTER_COMMAND(Command{
    "size", "GPU memory per GPU of training or serving a model, and which GPUs hold it",
    [](CLI::App& sub, GlobalOptions& global) {
      auto o = std::make_shared<SizeOptions>();
      add_model_flags(sub, o->source);
      SizingRequest& r = o->request;
      sub.add_option("--task", o->task, std::string(workload_defaults::kTrainTaskHelp) + " or serve")->capture_default_str();
      sub.add_option("--gpus", r.gpus, "GPUs of the workload (training: dp = gpus/(tp·pp); serving: tp = gpus/pp)");
      sub.add_option("--tp", r.tp, "tensor-parallel degree");
      sub.add_option("--pp", r.pp, "pipeline-parallel degree");
      sub.add_option("--dp", r.dp, "data-parallel degree");
      sub.add_option("--ep", o->ep, "expert-parallel degree (MoE; must divide dp)");
      sub.add_option("--margin", r.margin, "free fraction kept when matching GPUs")->capture_default_str();
      sub.add_flag("--json", o->json_out, "print JSON (every term in bytes)");
      sub.add_flag("--explain", r.explain, "print each term's formula with the numbers filled in");
      // Training.
      TrainingMemoryRequest& t = r.training;
      sub.add_option("--seq", t.seq_len, "training sequence length (tokens)")->capture_default_str();
      sub.add_option("--micro-batch", t.layout.micro_batch, "sequences per micro-batch per GPU")->capture_default_str();
      sub.add_option("--precision", o->precision, std::string(workload_defaults::kPrecisionHelp))
          ->capture_default_str();
      sub.add_option("--optimizer", o->optimizer, std::string(workload_defaults::kOptimizerHelp))
          ->capture_default_str();
      sub.add_option("--zero", t.layout.zero_stage, "ZeRO stage 0-3 (FSDP full shard = 3)")->capture_default_str();
      sub.add_flag("--sp", t.layout.sequence_parallel, "Megatron sequence parallelism (with --tp)");
      sub.add_option("--recompute", o->recompute, "activation recomputation: none, selective, full")
          ->capture_default_str();
      sub.add_option("--lora-rank", t.lora_rank, "LoRA rank r")->capture_default_str();
      sub.add_option("--lora-targets", o->lora_targets, "comma list of q,k,v,o,gate,up,down or all-linear")
          ->capture_default_str();
      sub.add_flag("--offload", o->offload, "offload optimizer state and gradients to CPU (ZeRO-Offload)");
      sub.add_flag("--offload-params", o->offload_params, "also offload parameters (needs --zero 3)");
      sub.add_flag("--no-flash", o->no_flash, "attention without FlashAttention (stores the s×s scores)");
      sub.add_flag("--chunked-ce", t.chunked_cross_entropy, "chunked cross-entropy (no full fp32 logits)");
      sub.add_option("--framework", o->profile, "activation profile: pytorch_eager or megatron")->capture_default_str();
      sub.add_option("--stack", o->stack,
                     "training stack whose defaults apply: hf, fsdp, deepspeed, megatron, unsloth (explicit flags win)");
      sub.add_flag("--offload-activations", o->offload_activations,
                   "saved activations / checkpoints offloaded to CPU memory (torchtune, Unsloth)");
      // Serving.
      ServingMemoryRequest& s = r.serving;
      sub.add_option("--context", s.context_tokens, "serve: tokens per sequence (prompt + output)")
          ->capture_default_str();
      sub.add_option("--concurrency", s.concurrency, "serve: sequences resident at once")->capture_default_str();
      sub.add_option("--quant", o->quant, "serve: " + std::string(workload_defaults::kQuantHelp))
          ->capture_default_str();
      sub.add_option("--kv-dtype", o->kv_dtype, "serve: KV cache dtype " + std::string(workload_defaults::kKvDtypeHelp))
          ->capture_default_str();
      sub.add_option("--prefill-chunk", s.prefill_chunk_tokens, "serve: tokens per prefill step")->capture_default_str();
      sub.add_option("--gpu", o->gpu, "serve: also report the longest context and most sequences that fit this GPU");
      sub.callback([o, &global, &sub] {
        SizingRequest req = o->request;
        req.task = parse_task(o->task, "--task");
        TrainingMemoryRequest& tr = req.training;
        tr.precision = parse_train_precision(o->precision, "--precision");
        tr.optimizer = parse_optimizer(o->optimizer, "--optimizer");
        tr.recompute = parse_recompute(o->recompute, "--recompute");
        tr.activation_profile = parse_activation_profile(o->profile, "--framework");
        tr.offload_activations = o->offload_activations;
        if (o->stack) {
          // The stack's defaults, then whatever the user wrote explicitly.
          const TrainingStack stack = parse_training_stack(*o->stack, "--stack");
          const TrainingMemoryRequest given = tr;
          tr.layout.tp = req.tp.value_or(1);
          apply_stack_defaults(stack, tr);
          if (sub.count("--optimizer") > 0) tr.optimizer = given.optimizer;
          if (sub.count("--recompute") > 0) tr.recompute = given.recompute;
          if (sub.count("--framework") > 0) tr.activation_profile = given.activation_profile;
          if (sub.count("--zero") > 0) tr.layout.zero_stage = given.layout.zero_stage;
          if (sub.count("--sp") > 0) tr.layout.sequence_parallel = given.layout.sequence_parallel;
          if (sub.count("--chunked-ce") > 0) tr.chunked_cross_entropy = true;
          if (sub.count("--offload-activations") > 0) tr.offload_activations = true;
          tr.layout.tp = given.layout.tp;
        }
        tr.lora_targets = split_targets(o->lora_targets);
        tr.layout.offload_optimizer = o->offload || o->offload_params;
        tr.layout.offload_params = o->offload_params;
        tr.flash_attention = !o->no_flash;
        if (o->ep) tr.layout.ep = *o->ep;
        req.serving.quant = parse_weight_quant(o->quant, "--quant");
        req.serving.kv_dtype = parse_kv_dtype(o->kv_dtype, "--kv-dtype");
        req.validate();  // before resolving the model: bad flags fail fast, nothing printed
        const ModelArch arch = resolve_model(o->source);
        const SizingResult res = run_sizing(arch, req, gpu_catalog(global));
        std::optional<ServingLimits> limits;
        const GpuSpec* limit_gpu = nullptr;
        if (o->gpu && req.task == Task::serve) {
          limit_gpu = &gpu_catalog(global).find(*o->gpu);
          limits = serving_limits(arch, req.serving_request(), limit_gpu->fit_memory_bytes(), req.margin);
        }
        if (o->json_out) {
          json j = render_json(arch, req, res);
          if (limits) {
            j["limits"] = {{"gpu", limit_gpu->name},
                           {"capacity_bytes", limit_gpu->fit_memory_bytes()},
                           {"max_context_tokens", limits->max_context_tokens},
                           {"at_concurrency", req.serving_request().concurrency},
                           {"max_concurrency", limits->max_concurrency},
                           {"at_context_tokens", req.serving_request().context_tokens}};
          }
          fmt::print("{}\n", dump_json(j));
        } else {
          render_text(arch, req, res);
          if (limits) {
            const ServingMemoryRequest sr = req.serving_request();
            fmt::print("\nOn {} ({} GiB per GPU, tp {} pp {}, {:.0f}% margin): longest context at concurrency {} = {} "
                       "tokens{}; most sequences at {} tokens = {}\n",
                       limit_gpu->name, gib1(limit_gpu->fit_memory_bytes()), sr.tp, sr.pp, 100 * req.margin, sr.concurrency,
                       limits->max_context_tokens,
                       arch.max_position_embeddings > 0 && limits->max_context_tokens == arch.max_position_embeddings
                           ? " (the model's maximum)"
                           : "",
                       sr.context_tokens, limits->max_concurrency);
          }
        }
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
