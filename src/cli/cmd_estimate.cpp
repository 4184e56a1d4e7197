// `gpuplan estimate --model M --task T --gpu G --gpus N [layout] --tokens T`: times a training
// run the user specifies (GPU model × count × layout) without the offer catalog. The same
// search, step-time and goodput code as `gpuplan plan` (planner::estimate_run), so the numbers
// for the same cluster and layout are equal. No price. Computes no numbers itself.
//
// Exit codes: 0 estimated; 1 no layout fits the memory (the reason is printed); 2 bad input.
#include <fmt/core.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.hpp"
#include "cli/common.hpp"
#include "cli/model_flags.hpp"
#include "cli/plan_render.hpp"
#include "hardware/gpu_spec.hpp"
#include "model/model_source.hpp"
#include "planner/planner.hpp"
#include "util/error.hpp"

namespace gpuplan::cli {
namespace {

using nlohmann::json;

struct EstimateOptions {
  PlanRequest request;
  std::string task{task_name(workload_defaults::kTask)};  // sizing/workload_defaults.hpp
  std::string precision, optimizer, recompute, gpu, link = "datasheet";
  std::optional<int> gpus, gpus_per_node, nodes;
  double intra_node_gb_per_s = 0;
  double inter_node_gbit_per_s = 0;
  bool json = false;
  bool explain = false;
};

void print_text(const PlanRequest& r, const Plan& p, const std::vector<PlanExplainLine>* lines) {
  const TrainingStepEstimate& t = *p.training;
  const int gpus = p.gpus_per_instance * p.instances;
  fmt::print("{} × {} ({} node{} × {}), {}, global batch {} × {} tokens{}\n", gpus, p.gpu_name, p.instances,
             p.instances == 1 ? "" : "s", p.gpus_per_instance, layout_text(p), p.global_batch_seqs, r.seq_len,
             p.global_batch_seqs != p.requested_global_batch_seqs
                 ? fmt::format(" (asked {}: rounded to a multiple of DP × micro-batch)", p.requested_global_batch_seqs)
                 : "");
  fmt::print("memory per GPU {:.1f} of {:.1f} GB\n", p.per_gpu_memory_bytes / 1e9, p.gpu_memory_capacity_bytes / 1e9);
  TextTable tt;
  tt.header = {"step term", "seconds", "share"};
  tt.right_align = {false, true, true};
  auto row = [&](const char* name, double v) {
    tt.rows.push_back({name, fmt::format("{:.4f}", v), fmt::format("{:.1f}%", 100.0 * v / t.step_seconds)});
  };
  if (p.mfu_overridden) {
    row("step (from --mfu)", t.step_seconds);
  } else {
    row("compute", t.compute_seconds);
    row("tp all-reduce", t.tp_allreduce_seconds);
    row("ep all-to-all", t.ep_alltoall_seconds);
    row("pp send/recv", t.pp_p2p_seconds);
    row("pp bubble", t.pp_bubble_seconds);
    row("exposed dp/zero comm", t.exposed_comm_seconds);
    row("optimizer", t.optimizer_seconds);
    row("host overhead", t.overhead_seconds);
    row("step", t.step_seconds);
  }
  fmt::print("{}", tt.render());
  fmt::print("tokens/s {} ({} per GPU), MFU {:.1f}%, {:.0f} steps\n", rate_text(p.tokens_per_s),
             rate_text(p.tokens_per_s / gpus), t.mfu * 100, p.steps);
  const GoodputEstimate& g = *p.goodput;
  fmt::print("steady-state time {}; goodput {:.1f}% (checkpoints {}, lost work {}, restarts {}, evaluation {}; "
             "{:.1f} expected failures)\n",
             duration_text(p.work_seconds), g.goodput * 100, duration_text(g.checkpoint_seconds),
             duration_text(g.lost_work_seconds), duration_text(g.restart_seconds), duration_text(g.evaluation_seconds),
             g.expected_failures);
  fmt::print("time to finish {}, {:.0f} GPU-hours\n", duration_text(g.wall_seconds), g.wall_seconds * gpus / 3600.0);
  for (const auto& w : p.warnings) {
    if (w.code == PlanWarningCode::price_date_unknown || w.code == PlanWarningCode::not_confirmed_available) continue;
    fmt::print("{}", wrap_text(fmt::format("warning [{}] {}", w.name(), w.message), terminal_columns(), "  "));
  }
  if (lines) {
    TextTable e;
    e.header = {"term", "value", "unit", "formula", "source"};
    e.right_align = {false, true, false, false, false};
    for (const auto& l : *lines) {
      if (l.term.rfind("cost.", 0) == 0 || l.term == "storage_bytes" || l.term == "egress_bytes") continue;
      e.rows.push_back({l.term, fmt::format("{:.6g}", l.value), l.unit, l.formula, l.source});
    }
    fmt::print("{}", e.render());
  }
}

GPUPLAN_REGISTER_COMMAND(Command{
    "estimate", "time a training run you specify (GPU × count × layout) without the catalog: step time, MFU, time, GPU-hours",
    [](CLI::App& sub, GlobalOptions& global) {
      auto o = std::make_shared<EstimateOptions>();
      PlanRequest& r = o->request;
      add_model_flags(sub, r.model);
      sub.add_option("--task", o->task, std::string(workload_defaults::kTrainTaskHelp))->capture_default_str();
      sub.add_option_function<double>("--tokens", [&r](const double& v) { r.tokens = v; }, "tokens to train on (2e12)");
      sub.add_option_function<double>("--dataset-tokens", [&r](const double& v) { r.dataset_tokens = v; },
                                      "tokens in the dataset (× --epochs)");
      sub.add_option("--epochs", r.epochs, "passes over --dataset-tokens")->capture_default_str();
      sub.add_option("--seq", r.seq_len, "tokens per training sequence")->capture_default_str();
      sub.add_option("--global-batch", r.global_batch_seqs, "sequences per optimizer step (0 = default by task)")
          ->capture_default_str();
      sub.add_option("--precision", o->precision, std::string(workload_defaults::kPrecisionHelp));
      sub.add_option("--optimizer", o->optimizer, std::string(workload_defaults::kOptimizerHelp));
      sub.add_option("--lora-rank", r.lora_rank, "LoRA rank r")->capture_default_str();
      sub.add_option("--gpu", o->gpu, "GPU model, e.g. H100-SXM5-80GB or 'A100 80GB' (see gpuplan gpus)")->required();
      sub.add_option_function<int>("--gpus", [o](const int& v) { o->gpus = v; }, "GPUs in total");
      sub.add_option_function<int>("--nodes", [o](const int& v) { o->nodes = v; }, "nodes (default: GPUs / GPUs per node)");
      sub.add_option_function<int>("--gpus-per-node", [o](const int& v) { o->gpus_per_node = v; },
                                   "GPUs per node (default 8, or --gpus when fewer)");
      sub.add_option("--link", o->link, "intra-node link: nvlink, pcie or datasheet")->capture_default_str();
      sub.add_option("--intra-node-gb-per-s", o->intra_node_gb_per_s,
                     "GPU-to-GPU bandwidth per GPU, one direction, GB/s (0 = datasheet)");
      sub.add_option("--inter-node-gbit-per-s", o->inter_node_gbit_per_s,
                     "network per node, one direction, Gb/s (needed for more than one node; e.g. 3200 for 8 × 400G IB)");
      sub.add_option_function<int>("--tp", [&r](const int& v) { r.pins.tp = v; }, "tensor-parallel degree (else searched)");
      sub.add_option_function<int>("--pp", [&r](const int& v) { r.pins.pp = v; }, "pipeline-parallel degree (else searched)");
      sub.add_option_function<int>("--dp", [&r](const int& v) { r.pins.dp = v; }, "data-parallel degree (else searched)");
      sub.add_option_function<int>("--ep", [&r](const int& v) { r.pins.ep = v; }, "expert-parallel degree (MoE)");
      sub.add_option_function<int>("--cp", [&r](const int& v) { r.pins.cp = v; }, "context-parallel degree (only 1)");
      sub.add_option_function<int>("--zero", [&r](const int& v) { r.pins.zero_stage = v; }, "ZeRO stage 0-3");
      sub.add_option_function<int>("--micro-batch", [&r](const int& v) { r.pins.micro_batch = v; }, "sequences per micro-batch");
      sub.add_option("--recompute", o->recompute, "none, selective, full (else searched)");
      sub.add_option_function<int>("--virtual-stages", [&r](const int& v) { r.pins.virtual_stages = v; },
                                   "interleaved pipeline chunks per GPU");
      sub.add_option_function<double>("--mfu", [&r](const double& v) { r.mfu_override = v; },
                                      "override: step time = model FLOP / (GPUs × peak × MFU)");
      sub.add_option_function<double>("--goodput", [&r](const double& v) { r.goodput_override = v; },
                                      "fixed goodput fraction instead of the failure/checkpoint model");
      sub.add_option("--eval-fraction", r.evaluation_fraction, "evaluation pauses / training time")->capture_default_str();
      sub.add_option_function<double>("--failures-per-gpu-hour", [&r](const double& v) { r.failures_per_gpu_hour = v; },
                                      "hardware failure rate (default: Llama 3 §3.3.4)");
      sub.add_option_function<double>("--checkpoint-write-gbps", [&r](const double& v) { r.checkpoint_write_bytes_per_s = v * 1e9; },
                                      "checkpoint write rate per node, GB/s (default 1)");
      sub.add_option("--restart-seconds", r.restart_seconds, "time to restart after a failure")->capture_default_str();
      sub.add_option("--margin", r.margin, "memory margin")->capture_default_str();
      sub.add_flag("--json", o->json, "print JSON (SI units)");
      sub.add_flag("--explain", o->explain, "print every number with its formula");
      sub.callback([o, &global] {
        PlanRequest& req = o->request;
        req.task = parse_task(o->task, "--task");
        if (req.task == Task::serve) throw_invalid("--task", "serve", "pretrain, full, lora or qlora (estimate times training)");
        req.workload = PlanWorkload::training;
        if (!o->precision.empty()) req.precision = parse_train_precision(o->precision, "--precision");
        if (!o->optimizer.empty()) req.optimizer = parse_optimizer(o->optimizer, "--optimizer");
        if (!o->recompute.empty()) req.pins.recompute = parse_recompute(o->recompute, "--recompute");
        if (!o->gpus && !o->nodes) throw_invalid("--gpus", "no cluster size", "--gpus N (and/or --nodes N)");
        EstimateCluster c;
        const GpuCatalog& gpus = gpu_catalog(global);
        c.gpu = gpus.try_find(o->gpu);
        if (!c.gpu) throw Error(ErrorKind::not_found, "--gpu", fmt::format("unknown GPU '{}'", o->gpu), "a GPU from `gpuplan gpus`");
        int gpn = o->gpus_per_node.value_or(o->gpus ? std::min(8, *o->gpus) : 8);
        if (gpn < 1) throw_invalid("--gpus-per-node", fmt::format("{}", gpn), "an integer ≥ 1");
        int nodes = o->nodes.value_or(0);
        if (o->gpus) {
          if (*o->gpus < 1) throw_invalid("--gpus", fmt::format("{}", *o->gpus), "an integer ≥ 1");
          if (o->nodes && !o->gpus_per_node) {
            if (*o->gpus % *o->nodes != 0) {
              throw_invalid("--gpus", fmt::format("{} GPUs over {} nodes", *o->gpus, *o->nodes), "a multiple of --nodes");
            }
            gpn = *o->gpus / *o->nodes;
          }
          if (*o->gpus % gpn != 0) {
            throw_invalid("--gpus", fmt::format("{} is not a multiple of {} GPUs per node", *o->gpus, gpn),
                          "a multiple of --gpus-per-node");
          }
          if (o->nodes && *o->nodes * gpn != *o->gpus) {
            throw_invalid("--nodes", fmt::format("{} nodes × {} GPUs ≠ {}", *o->nodes, gpn, *o->gpus), "nodes × GPUs per node = --gpus");
          }
          nodes = *o->gpus / gpn;
          req.gpus_total = *o->gpus;
        }
        if (nodes < 1) throw_invalid("--nodes", fmt::format("{}", nodes), "an integer ≥ 1");
        req.nodes_exact = nodes;
        c.gpus_per_node = gpn;
        c.nodes = nodes;
        if (o->link == "nvlink") {
          c.link = IntraNodeLink::nvlink;
        } else if (o->link == "pcie") {
          c.link = IntraNodeLink::pcie;
        } else if (o->link != "datasheet") {
          throw_invalid("--link", o->link, "nvlink, pcie or datasheet");
        }
        if (o->intra_node_gb_per_s < 0) throw_invalid("--intra-node-gb-per-s", "negative", "GB/s ≥ 0");
        if (o->inter_node_gbit_per_s < 0) throw_invalid("--inter-node-gbit-per-s", "negative", "Gb/s ≥ 0");
        c.intra_node_bytes_per_s = o->intra_node_gb_per_s * 1e9;
        c.inter_node_bytes_per_s = o->inter_node_gbit_per_s * 1e9 / 8.0;
        req.validate();
        const ModelArch arch = resolve_model(req.model);
        std::string why;
        const std::optional<Plan> p = estimate_run(req, arch, c, why);
        if (!p) {
          if (o->json) {
            fmt::print("{}\n", json{{"model", arch.name}, {"estimate", nullptr}, {"no_fit", why}}.dump(2));
          } else {
            fmt::print("No fit: {}\n", why);
          }
          global.exit_code = 1;
          return;
        }
        std::vector<PlanExplainLine> lines;
        if (o->explain) lines = explain_plan(req, arch, *p, gpus);
        if (o->json) {
          json j = {{"model", arch.name}, {"task", task_name(req.task)}, {"training_tokens", req.training_tokens()},
                    {"estimate", plan_json(*p, 1)}};
          if (o->explain) {
            json a = json::array();
            for (const auto& l : lines) {
              if (l.term.rfind("cost.", 0) == 0) continue;
              a.push_back({{"term", l.term}, {"value", l.value}, {"unit", l.unit}, {"formula", l.formula}, {"source", l.source}});
            }
            j["explain"] = a;
          }
          fmt::print("{}\n", j.dump(2));
        } else {
          print_text(req, *p, o->explain ? &lines : nullptr);
        }
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
