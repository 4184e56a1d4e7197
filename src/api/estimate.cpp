#include "api/estimate.hpp"

#include <fmt/ranges.h>

#include <fmt/core.h>

#include <algorithm>

#include "api/model_fields.hpp"
#include "api/plan_json.hpp"
#include "api/training_fields.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan::api {

using nlohmann::json;

namespace {

ModelSource& estimate_model(EstimateInput& in) { return in.request.model; }

std::vector<FieldDef<EstimateInput>> build_fields() {
  using In = EstimateInput;
  std::vector<FieldDef<In>> f = model_fields<In, &estimate_model>();
  for (auto& d : training_run_fields<In>()) f.push_back(std::move(d));
  for (auto& d : training_layout_fields<In>()) f.push_back(std::move(d));
  std::vector<FieldDef<In>> rest = {
      {{"task", "--task", FieldType::string, FieldFace::both, workload_defaults::kTrainTaskHelp},
       [](In& in, const json& v) { in.task = v.get<std::string>(); }},
      {{"gpu", "--gpu", FieldType::string, FieldFace::both,
        "GPU model, e.g. H100-SXM5-80GB or 'A100 80GB' (see gpuplan gpus); required"},
       [](In& in, const json& v) { in.gpu = v.get<std::string>(); }},
      {{"gpus", "--gpus", FieldType::integer, FieldFace::both, "GPUs in total"},
       [](In& in, const json& v) { in.gpus = json_as<int>(v); }},
      {{"nodes", "--nodes", FieldType::integer, FieldFace::both, "nodes (default: GPUs / GPUs per node)"},
       [](In& in, const json& v) { in.nodes = json_as<int>(v); }},
      {{"gpus_per_node", "--gpus-per-node", FieldType::integer, FieldFace::both,
        "GPUs per node (default 8, or gpus when fewer; GB200/GB300 NVL72: gpus up to 72, one NVLink domain)"},
       [](In& in, const json& v) { in.gpus_per_node = json_as<int>(v); }},
      {{"link", "--link", FieldType::string, FieldFace::both, "intra-node link: nvlink, pcie or datasheet (default)"},
       [](In& in, const json& v) { in.link = v.get<std::string>(); }},
      {{"intra_node_gb_per_s", "--intra-node-gb-per-s", FieldType::number, FieldFace::both,
        "GPU-to-GPU bandwidth per GPU, one direction, GB/s (0 = datasheet)"},
       [](In& in, const json& v) { in.intra_node_gb_per_s = v.get<double>(); }},
      {{"inter_node_gbit_per_s", "--inter-node-gbit-per-s", FieldType::number, FieldFace::both,
        "network per node, one direction, Gb/s (needed for more than one node; e.g. 3200 for 8 × 400G IB)"},
       [](In& in, const json& v) { in.inter_node_gbit_per_s = v.get<double>(); }},
      {{"explain", "--explain", FieldType::boolean, FieldFace::both, "every number with its formula"},
       [](In& in, const json& v) { in.explain = v.get<bool>(); }},
      {{"ignore_memory", "--ignore-memory", FieldType::boolean, FieldFace::both,
        "time the layout even if gpuplan's memory model says it does not fit (warned: memory_over_capacity)"},
       [](In& in, const json& v) { in.request.ignore_memory = v.get<bool>(); }},
  };
  f.insert(f.end(), rest.begin(), rest.end());
  return f;
}

}  // namespace

std::span<const FieldDef<EstimateInput>> estimate_fields() {
  static const std::vector<FieldDef<EstimateInput>> fields = build_fields();
  return fields;
}

EstimateOutput run_estimate(const EstimateInput& in, const Context& ctx) {
  EstimateOutput out;
  out.explain = in.explain;
  PlanRequest& req = out.request;
  req = in.request;
  req.task = parse_task(in.task, "--task");
  if (req.task == Task::serve) throw_invalid_coded("--task", "estimate_training_only", {},
                        // The message said only "serve" (trial of issue 10): it says why, as estimate_run's does.
                        "estimate times training runs, not serve (serving is planned by plan with task serve)",
                        "pretrain, full, lora or qlora (estimate times training)");
  req.workload = PlanWorkload::training;
  check_fields_for_task(in.given, estimate_fields(), in.task);  // e.g. --lora-rank with --task full
  check_epochs_with_tokens(in.given);
  if (!in.precision.empty() || in.given.contains("precision")) req.precision = parse_train_precision(in.precision, "--precision");
  if (!in.optimizer.empty() || in.given.contains("optimizer")) req.optimizer = parse_optimizer(in.optimizer, "--optimizer");
  else if (req.stack) req.optimizer = stack_default_optimizer(*req.stack);  // Unsloth: 8-bit AdamW
  if (!in.recompute.empty() || in.given.contains("recompute")) req.pins.recompute = parse_recompute(in.recompute, "--recompute");
  if (in.gpu.empty()) (void)gpu_from_flag(ctx, in.gpu);  // gpu_missing, before the cluster size
  if (!in.gpus && !in.nodes) throw_invalid_coded("--gpus", "cluster_size_missing", {}, "no cluster size", "--gpus N (and/or --nodes N)");
  EstimateCluster c;
  c.gpu = &gpu_from_flag(ctx, in.gpu);
  // The sizes the user typed are checked before the defaults derived from them (issue 11:
  // `--gpus 0` was reported as "--gpus-per-node: 0", a flag not typed).
  if (in.gpus && *in.gpus < 1) throw_invalid_coded("--gpus", "not_positive", {{"value", fmt::format("{}", *in.gpus)}}, fmt::format("{} is not a positive integer", *in.gpus), "an integer ≥ 1");
  if (in.nodes && *in.nodes < 1) throw_invalid_coded("--nodes", "not_positive", {{"value", fmt::format("{}", *in.nodes)}}, fmt::format("{} is not a positive integer", *in.nodes), "an integer ≥ 1");
  // Default: 8 (an HGX/DGX node), or the GPUs when fewer; a GPU whose NVLink domain spans more than 8
  // (GB200/GB300 NVL72: 72) keeps a job that fits the domain in it, one node of --gpus (trial58 #9:
  // 64 GB300 were split into 8 nodes of 8 and asked for an inter-node network).
  const int domain = c.gpu->nvlink_domain_gpus.value_or(8);
  int gpn = in.gpus_per_node.value_or(!in.gpus ? 8 : domain > 8 && *in.gpus <= domain ? *in.gpus : std::min(8, *in.gpus));
  if (gpn < 1) throw_invalid_coded("--gpus-per-node", "not_positive", {{"value", fmt::format("{}", gpn)}}, fmt::format("{} is not a positive integer", gpn), "an integer ≥ 1");
  int nodes = in.nodes.value_or(0);
  if (in.gpus) {
    if (*in.gpus < 1) throw_invalid_coded("--gpus", "not_positive", {{"value", fmt::format("{}", *in.gpus)}}, fmt::format("{} is not a positive integer", *in.gpus), "an integer ≥ 1");
    if (in.nodes && !in.gpus_per_node) {
      if (*in.nodes < 1) throw_invalid_coded("--nodes", "not_positive", {{"value", fmt::format("{}", *in.nodes)}}, fmt::format("{} is not a positive integer", *in.nodes), "an integer ≥ 1");
      if (*in.gpus % *in.nodes != 0) {
        throw_invalid_coded("--gpus", "gpus_not_split_over_nodes",
                            {{"gpus", fmt::format("{}", *in.gpus)}, {"nodes", fmt::format("{}", *in.nodes)}},
                            fmt::format("{} GPUs over {} nodes", *in.gpus, *in.nodes), "a multiple of --nodes");
      }
      gpn = *in.gpus / *in.nodes;
    }
    if (*in.gpus % gpn != 0) {
      throw_invalid_coded("--gpus", "gpus_not_multiple_of_node",
                          {{"gpus", fmt::format("{}", *in.gpus)}, {"per_node", fmt::format("{}", gpn)}},
                          fmt::format("{} is not a multiple of {} GPUs per node", *in.gpus, gpn),
                          "a multiple of --gpus-per-node");
    }
    if (in.nodes && *in.nodes * gpn != *in.gpus) {
      throw_invalid_coded("--nodes", "gpus_not_equal_layout",
                          {{"layout", fmt::format("{} × {}", *in.nodes, gpn)}, {"product", fmt::format("{}", *in.nodes * gpn)},
                           {"gpus", fmt::format("{}", *in.gpus)}},
                          fmt::format("{} nodes × {} GPUs ≠ {}", *in.nodes, gpn, *in.gpus), "nodes × GPUs per node = --gpus");
    }
    nodes = *in.gpus / gpn;
    req.gpus_total = *in.gpus;
    // --gpus alone: a node count beyond the planner's range is the GPU count's fault (a trial's
    // `estimate --gpus 1000000` was refused as "--nodes: 125000", a flag it never typed).
    constexpr int kMaxNodes = PlanRequest::kMaxNodesExact;
    if (!in.nodes && nodes > kMaxNodes)
      throw_invalid_coded("--gpus", "integer_out_of_range",
                          {{"value", fmt::format("{}", *in.gpus)}, {"min", "1"}, {"max", fmt::format("{}", std::int64_t{kMaxNodes} * gpn)}},
                          fmt::format("{} GPUs are {} nodes of {}", *in.gpus, nodes, gpn),
                          fmt::format("an integer in [1, {}] (at most {} nodes of {} GPUs)", std::int64_t{kMaxNodes} * gpn, kMaxNodes, gpn));
  }
  if (nodes < 1)
    throw_invalid_coded("--nodes", "not_positive", {{"value", fmt::format("{}", nodes)}}, fmt::format("{} is not a positive integer", nodes), "an integer ≥ 1");
  req.nodes_exact = nodes;
  c.gpus_per_node = gpn;
  c.nodes = nodes;
  if (in.link == "nvlink") {
    // The datasheet says the card has no GPU link at all (L40S, RTX 4090: "none (PCIe only)"): NVLink
    // there is a typo, not a server variant (trial60 #5: it was timed as NVLink over the PCIe bandwidth).
    if (c.gpu->interconnect.rfind("none", 0) == 0)
      throw_invalid_coded("--link", "gpu_has_no_nvlink", {{"gpu", c.gpu->name}, {"interconnect", c.gpu->interconnect}},
                          fmt::format("nvlink, but the {} has no GPU link (datasheet: {})", c.gpu->name, c.gpu->interconnect),
                          "--link pcie or datasheet for this GPU");
    // A bridge joins a pair of cards (nvlink_domain_gpus 2): more GPUs per node reach each other over PCIe (trial61 #9).
    const int link_domain = c.gpu->gpu_link_domain();
    if (gpn > link_domain)
      throw_invalid_coded("--link", "gpu_link_domain_exceeded",
                          {{"gpu", c.gpu->name}, {"domain", fmt::format("{}", link_domain)}, {"per_node", fmt::format("{}", gpn)}},
                          fmt::format("nvlink, but the {}'s GPU link joins {} GPUs and a node has {}", c.gpu->name, link_domain, gpn),
                          fmt::format("--link datasheet (pairs over the bridge, the rest over PCIe), or --gpus-per-node {}",
                                      link_domain));
    if (!c.gpu->has_gpu_link() && !(in.intra_node_gb_per_s > 0))
      throw_invalid_coded("--link", "gpu_link_bandwidth_unknown", {{"gpu", c.gpu->name}},
                          fmt::format("nvlink, but the datasheet gives no GPU-link bandwidth for the {}", c.gpu->name),
                          "--intra-node-gb-per-s with the link's bandwidth, or --link datasheet");
    c.link = IntraNodeLink::nvlink;
  } else if (in.link == "pcie") {
    c.link = IntraNodeLink::pcie;
  } else if (in.link != "datasheet") {
    throw_invalid_coded("--link", "unknown_choice", {{"value", in.link}, {"allowed", "nvlink, pcie, datasheet"}},
                        fmt::format("unknown link '{}'", in.link), "nvlink, pcie or datasheet (lower case)");
  }
  if (in.intra_node_gb_per_s < 0)
    throw_invalid_coded("--intra-node-gb-per-s", "negative", {{"value", fmt::format("{}", in.intra_node_gb_per_s)}}, fmt::format("{} is negative", in.intra_node_gb_per_s), "GB/s ≥ 0");
  if (in.inter_node_gbit_per_s < 0)
    throw_invalid_coded("--inter-node-gbit-per-s", "negative", {{"value", fmt::format("{}", in.inter_node_gbit_per_s)}}, fmt::format("{} is negative", in.inter_node_gbit_per_s),
                        "Gb/s ≥ 0");
  c.intra_node_bytes_per_s = in.intra_node_gb_per_s * 1e9;
  c.inter_node_bytes_per_s = in.inter_node_gbit_per_s * 1e9 / 8.0;
  req.validate();
  out.arch = resolve_model(req.model);
  out.plan = estimate_run(req, out.arch, c, out.no_fit);
  if (!out.plan && out.no_fit.rfind("no layout fits", 0) == 0) {
    std::string ignored;
    // The longest sequence that fits, halving from the one asked (down to 256 tokens).
    for (std::int64_t seq = req.seq_len / 2; seq >= 256; seq /= 2) {
      PlanRequest r = req;
      r.seq_len = seq;
      if (r.training_tokens() < static_cast<double>(seq)) break;
      if (const auto p = estimate_run(r, out.arch, c, ignored)) {
        out.fits_with.push_back({fmt::format("--seq {}", seq), p->per_gpu_memory_bytes});
        break;
      }
    }
    if (req.task == Task::lora || req.task == Task::full) {
      PlanRequest r = req;
      r.task = Task::qlora;
      try {
        r.validate();
        if (const auto p = estimate_run(r, out.arch, c, ignored))
          out.fits_with.push_back({"--task qlora", p->per_gpu_memory_bytes});
      } catch (const Error&) {
        // A request QLoRA does not take (a precision it refuses): not offered.
      }
    }
  }
  if (out.plan && in.explain) out.explain_lines = explain_plan(req, out.arch, *out.plan, ctx.gpus());
  return out;
}

std::string training_settings_text(const PlanRequest& r) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (r.stack) add(fmt::format("stack {}", training_stack_name(*r.stack)));
  if (r.ep_overlap) add("EP all-to-all overlapped");
  if (r.tp_comm_overlap) add("TP comm overlapped");
  if (r.moe_load_imbalance) add(fmt::format("MoE imbalance {:g}", *r.moe_load_imbalance));
  if (r.cuda_graph) add(fmt::format("CUDA graph {}", cuda_graph_impl_name(*r.cuda_graph)));
  if (r.moe_dispatcher) add(fmt::format("MoE dispatcher {}", moe_dispatcher_name(*r.moe_dispatcher)));
  if (!r.pipeline_stage_layers.empty()) add(fmt::format("PP layers {}", fmt::join(r.pipeline_stage_layers, ",")));
  if (r.recompute_modules != 0) add(fmt::format("recompute modules {}", recompute_modules_name(r.recompute_modules)));
  if (r.grads_16bit) add("16-bit gradients");
  return out;
}

RecomputeModules searched_recompute_modules(const PlanRequest& r, const std::vector<Plan>& plans) {
  if (r.workload != PlanWorkload::training || r.recompute_modules != 0) return 0;
  for (const Plan& p : plans)
    if (p.recompute_modules != 0) return p.recompute_modules;
  return 0;
}

std::string searched_recompute_modules_text(const PlanRequest& r, RecomputeModules chosen) {
  if (chosen == 0 || r.recompute_modules != 0) return {};
  return fmt::format(
      "rc:{} = chosen by the search: Megatron-Core selective recompute of those modules (recompute_modules), "
      "the set NVIDIA's Megatron-Bridge recipes give {}; --recompute or --recompute-modules pins another.",
      recompute_modules_name(chosen),
      has_module(chosen, RecomputeModule::mla_up_proj) ? "DeepSeek-V3 and gpuplan tries for MLA models"
                                                       : "gpt-oss and gpuplan tries for MoE models");
}

json to_json(const EstimateOutput& out) {
  if (!out.plan) {
    json fits_with = json::array();
    for (const auto& f : out.fits_with) fits_with.push_back({{"flags", f.flags}, {"per_gpu_bytes", f.per_gpu_bytes}});
    return json{{"model", out.arch.name}, {"estimate", nullptr}, {"no_fit", out.no_fit}, {"fits_with", fits_with}};
  }
  json j = {{"model", out.arch.name},
            {"task", task_name(out.request.task)},
            {"training_tokens", count_json(out.request.training_tokens())},
            {"training_settings", training_settings_json(out.request)},
            {"estimate", plan_json(*out.plan, 1)}};
  if (out.explain) {
    json a = json::array();
    for (const auto& l : out.explain_lines) {
      if (l.term.rfind("cost.", 0) == 0) continue;
      a.push_back({{"term", l.term}, {"value", l.value}, {"unit", l.unit}, {"formula", l.formula}, {"source", l.source}});
    }
    j["explain"] = a;
  }
  return j;
}

LayoutAbbreviations layout_abbreviations(const std::vector<Plan>& plans) {
  LayoutAbbreviations a;
  for (const Plan& p : plans) {
    if (!p.training) continue;
    a.training = true;
    a.vp = a.vp || p.layout.virtual_stages > 1;
    a.ep = a.ep || p.layout.ep > 1;
    a.etp = a.etp || (p.layout.expert_tp > 0 && p.layout.expert_tp != p.layout.tp);
    a.rc = a.rc || p.recompute != Recompute::none;
    a.modules = a.modules || (p.recompute != Recompute::none && p.recompute_modules != 0);
  }
  return a;
}

std::string layout_legend_text(const LayoutAbbreviations& a) {
  if (!a.training) return "";
  std::string out = "Layout: TP tensor, PP pipeline";
  if (a.vp) out += ", VP virtual stages per pipeline rank (interleaved 1F1B)";
  out += ", DP data";
  if (a.ep) out += ", EP expert";
  if (a.etp) out += ", ETP expert tensor";
  out += " parallel degrees; Z ZeRO stage; mb micro-batch";
  if (a.rc)
    out += a.modules ? "; rc: activation recompute (full, selective, or the Megatron-Core modules named)"
                     : "; rc: activation recompute (full or selective)";
  return out + ".";
}

}  // namespace gpuplan::api
