#pragma once
/// The training fields the plan and estimate requests share (one row each, one name, one setter):
/// the run (tokens, dataset_tokens, epochs, seq, global_batch, precision, optimizer, lora_rank),
/// the pinned layout (tp, pp, dp, ep, cp, zero, micro_batch, recompute, virtual_stages,
/// expert_tp), the training stack and its recipe switches (stack, ep_overlap, tp_comm_overlap,
/// moe_imbalance, pp_layers) and the
/// time model's overrides (mfu, goodput, eval_fraction, failures_per_gpu_hour,
/// checkpoint_write_gbps, restart_seconds, margin). `In` has a PlanRequest `request` and the
/// strings `precision`, `optimizer` and `recompute` (parsed by its use case).
#include <fmt/core.h>

#include <charconv>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "api/fields.hpp"
#include "util/error_code.hpp"
#include "sizing/memory.hpp"
#include "sizing/perf.hpp"
#include "sizing/workload_defaults.hpp"

namespace gpuplan::api {

/// --epochs multiplies --dataset-tokens: given with --tokens (and no --dataset-tokens) it would be
/// ignored without a word (issue 11), so it is refused as both_given at --epochs. Both token
/// fields given are PlanRequest::validate's both_given at --tokens.
inline void check_epochs_with_tokens(const std::set<std::string>& given) {
  if (given.contains("epochs") && given.contains("tokens") && !given.contains("dataset_tokens"))
    throw_invalid_coded("--epochs", "both_given", {{"a_field", "tokens"}, {"b_field", "epochs"}},
                        "both --tokens and --epochs given: --epochs multiplies --dataset-tokens, --tokens is the total",
                        "--tokens N alone, or --dataset-tokens N --epochs E");
}

/// "5,4,4,3" → {5, 4, 4, 3}: whole numbers separated by commas (spaces allowed). Throws
/// Error{invalid_input} at --pp-layers (not_integer) for anything else.
inline std::vector<int> parse_stage_layers(const std::string& text) {
  std::vector<int> out;
  std::size_t i = 0;
  while (true) {
    const std::size_t comma = text.find(',', i);
    std::string item = text.substr(i, comma == std::string::npos ? std::string::npos : comma - i);
    const auto first = item.find_first_not_of(' ');
    const auto last = item.find_last_not_of(' ');
    item = first == std::string::npos ? std::string() : item.substr(first, last - first + 1);
    int value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size())
      throw_invalid_coded("--pp-layers", "not_integer", {{"value", item}},
                          fmt::format("“{}” is not a whole number", item), "whole numbers separated by commas, e.g. 5,4,4,3");
    out.push_back(value);
    if (comma == std::string::npos) break;
    i = comma + 1;
  }
  return out;
}

template <class In>
std::vector<FieldDef<In>> training_run_fields() {
  using nlohmann::json;
  return {
      {{"tokens", "--tokens", FieldType::count, FieldFace::both, "tokens to train on (2e12, 500M)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.tokens = count_value(v); }},
      {{"dataset_tokens", "--dataset-tokens", FieldType::count, FieldFace::both, "tokens in the dataset (× epochs)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.dataset_tokens = count_value(v); }},
      {{"epochs", "--epochs", FieldType::number, FieldFace::both, "passes over dataset_tokens (default 1)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.epochs = v.get<double>(); }},
      {{"seq", "--seq", FieldType::integer, FieldFace::both, "tokens per training sequence (default 4096)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.seq_len = json_at_most<std::int64_t>(v, 1, kMaxTrainingSeqLenTokens); }},
      {{"global_batch", "--global-batch", FieldType::integer, FieldFace::both,
        "sequences per optimizer step (0 = default by task)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.global_batch_seqs = json_as<std::int64_t>(v); }},
      {{"precision", "--precision", FieldType::string, FieldFace::both, workload_defaults::kPrecisionHelp, {}, task_bits::training},
       [](In& in, const json& v) { in.precision = v.get<std::string>(); }},
      {{"optimizer", "--optimizer", FieldType::string, FieldFace::both, workload_defaults::kOptimizerHelp, {}, task_bits::training},
       [](In& in, const json& v) { in.optimizer = v.get<std::string>(); }},
      {{"lora_rank", "--lora-rank", FieldType::integer, FieldFace::both, "LoRA rank r (default 16)", {}, task_bits::lora_family},
       [](In& in, const json& v) { in.request.lora_rank = json_at_most<int>(v, 1, kMaxLoraRank); }},
  };
}

template <class In>
std::vector<FieldDef<In>> training_layout_fields() {
  using nlohmann::json;
  return {
      {{"tp", "--tp", FieldType::integer, FieldFace::both, "pin the tensor-parallel degree (else searched)", {}, task_bits::training | task_bits::serve},
       [](In& in, const json& v) { in.request.pins.tp = json_at_most<int>(v, 1, kMaxParallelDegree); }},
      {{"pp", "--pp", FieldType::integer, FieldFace::both, "pin the pipeline-parallel degree (uneven stages allowed; else searched)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.pins.pp = json_at_most<int>(v, 1, kMaxParallelDegree); }},
      {{"dp", "--dp", FieldType::integer, FieldFace::both, "pin the data-parallel degree (else searched)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.pins.dp = json_at_most<int>(v, 1, kMaxDataParallel); }},
      {{"ep", "--ep", FieldType::integer, FieldFace::both, "pin the expert-parallel degree (MoE; ep × expert-tp divides tp × dp)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.pins.ep = json_at_most<int>(v, 1, kMaxParallelDegree); }},
      {{"cp", "--cp", FieldType::integer, FieldFace::both, "context-parallel degree (only 1: not modelled)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.pins.cp = json_at_most<int>(v, 1, 1); }},
      {{"zero", "--zero", FieldType::integer, FieldFace::both, "pin the ZeRO stage 0-3 (FSDP full shard = 3)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.pins.zero_stage = json_at_most<int>(v, 0, 3); }},
      {{"micro_batch", "--micro-batch", FieldType::integer, FieldFace::both, "pin the sequences per micro-batch per GPU", {}, task_bits::training},
       [](In& in, const json& v) { in.request.pins.micro_batch = json_at_most<int>(v, 1, kMaxPinnedMicroBatch); }},
      {{"recompute", "--recompute", FieldType::string, FieldFace::both,
        "pin activation recomputation: none, selective, full, op-selective (else searched; with --stack megatron on "
        "an MoE or MLA model the search also tries the recipes' recompute modules)",
        {}, task_bits::training},
       [](In& in, const json& v) { in.recompute = v.get<std::string>(); }},
      {{"virtual_stages", "--virtual-stages", FieldType::integer, FieldFace::both, "pin the interleaved pipeline chunks per GPU (else 1; searched with --stack megatron, and with --ep-overlap at pp above 1, where 1 is not)", {},
        task_bits::training},
       [](In& in, const json& v) { in.request.pins.virtual_stages = json_at_most<int>(v, 1, kMaxParallelDegree); }},
      {{"expert_tp", "--expert-tp", FieldType::integer, FieldFace::both,
        "pin the expert tensor-parallel degree (MoE; else tp, and with --stack megatron at tp > 1 also 1 with ep > 1 where it is more than 2% faster; below tp, ep divides tp·dp/expert-tp)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.pins.expert_tp = json_at_most<int>(v, 1, kMaxParallelDegree); }},
      {{"stack", "--stack", FieldType::string, FieldFace::both,
        "training stack: hf, fsdp, deepspeed, megatron or unsloth; sets what that stack does by default: activation memory, "
        "gradient buffers, ZeRO stage (megatron 1, deepspeed 2, fsdp 3), fused (megatron) or eager kernels",
        {}, task_bits::training},
       [](In& in, const json& v) { in.request.stack = parse_training_stack(v.get<std::string>(), "--stack"); }},
      {{"ep_overlap", "--ep-overlap", FieldType::boolean, FieldFace::both,
        "MoE: EP all-to-alls overlapped with another micro-batch's compute (Megatron-Core overlap_moe_expert_parallel_comm; "
        "as Megatron-Core: EP > 1, no full recompute, virtual stages at pp > 1, no interleaving with zero 3)",
        {}, task_bits::training},
       [](In& in, const json& v) { in.request.ep_overlap = v.get<bool>(); }},
      {{"tp_comm_overlap", "--tp-comm-overlap", FieldType::boolean, FieldFace::both,
        "TP collectives overlapped with the GEMMs (Transformer Engine userbuffers; dense models, tp ≥ 2)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.tp_comm_overlap = v.get<bool>(); }},
      {{"grads_16bit", "--grads-16bit", FieldType::boolean, FieldFace::both,
        "megatron: gradients kept and reduced in bf16, not fp32 (grad_reduce_in_fp32=False, as NVIDIA's recipes set)",
        {}, task_bits::training},
       [](In& in, const json& v) { in.request.grads_16bit = v.get<bool>(); }},
      {{"moe_dispatcher", "--moe-dispatcher", FieldType::string, FieldFace::both,
        "megatron, MoE: token dispatcher alltoall (default, as the Megatron-Bridge MoE models set), deepep or hybridep "
        "(deduplicated: one network copy per node, NVLink inside it; NVIDIA GPUs and EP > 1, else timed as alltoall)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.moe_dispatcher = parse_moe_dispatcher(v.get<std::string>(), "--moe-dispatcher"); }},
      {{"cuda_graph", "--cuda-graph", FieldType::string, FieldFace::both,
        "megatron: cuda_graph_impl none, local (per-layer graphs, timed as none; a recipe's local with cuda_graph_scope "
        "full_iteration is one graph per step: give full_iteration), transformer_engine (partial graphs of "
        "attention, router and dispatch preprocess: a shorter alltoall/DeepEP dispatch time, never longer) or full_iteration "
        "(one graph per step: no host time, no MoE dispatch sync); timed on NVIDIA GPUs, elsewhere eager", {}, task_bits::training},
       [](In& in, const json& v) { in.request.cuda_graph = parse_cuda_graph_impl(v.get<std::string>(), "--cuda-graph"); }},
      {{"moe_imbalance", "--moe-imbalance", FieldType::number, FieldFace::both,
        "MoE: busiest EP rank's tokens / the mean, 1-8 (default 1.2; 1 = force-balanced routing)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.moe_load_imbalance = v.get<double>(); }},
      {{"recompute_modules", "--recompute-modules", FieldType::string, FieldFace::both,
        "megatron: selective recompute modules, comma-separated: core_attn, layernorm, moe_act, mla_up_proj, mlp "
        "(Megatron-Core recompute_modules; the list replaces the default core_attn; pins --recompute selective)",
        {}, task_bits::training},
       [](In& in, const json& v) {
         in.request.recompute_modules = parse_recompute_modules(v.get<std::string>(), "--recompute-modules");
       }},
      {{"pp_layers", "--pp-layers", FieldType::string, FieldFace::both,
        "decoder layers per pipeline rank, comma-separated (e.g. 5,4,4,3; needs --pp; default: even split)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.pipeline_stage_layers = parse_stage_layers(v.get<std::string>()); }},
      {{"mfu", "--mfu", FieldType::number, FieldFace::both, "override: step time = model FLOP / (GPUs × peak × MFU)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.mfu_override = v.get<double>(); }},
      {{"goodput", "--goodput", FieldType::number, FieldFace::both,
        "fixed goodput fraction instead of the failure/checkpoint model", {}, task_bits::training},
       [](In& in, const json& v) { in.request.goodput_override = v.get<double>(); }},
      {{"eval_fraction", "--eval-fraction", FieldType::number, FieldFace::both,
        "evaluation pauses as a fraction of training time", {}, task_bits::training},
       [](In& in, const json& v) { in.request.evaluation_fraction = v.get<double>(); }},
      {{"failures_per_gpu_hour", "--failures-per-gpu-hour", FieldType::number, FieldFace::both,
        "hardware failure rate (default 1.97e-5: Llama 3, Dubey et al. 2024 §3.3.4)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.failures_per_gpu_hour = v.get<double>(); }},
      {{"checkpoint_write_gbps", "--checkpoint-write-gbps", FieldType::number, FieldFace::both,
        "checkpoint write rate per instance (node), GB/s (default 1)", {}, task_bits::training},
       [](In& in, const json& v) {
         // The rate as typed in the error (trial49: "-1000000000 is not a positive number" for -1,
         // "inf" for 1e300): 1 kB/s to 10 TB/s per node, a typo catcher around any real storage.
         const double gbps = v.get<double>();
         if (!(gbps >= 1e-6 && gbps <= 1e4))
           throw_invalid_coded("", "number_out_of_range", {{"value", field_value_text(v)}, {"range", "[0.000001, 10000]"}},
                               fmt::format("{} is outside [0.000001, 10000]", field_value_text(v)),
                               "GB/s per node from 0.000001 (1 kB/s) to 10000");
         in.request.checkpoint_write_bytes_per_s = gbps * 1e9;
       }},
      {{"restart_seconds", "--restart-seconds", FieldType::number, FieldFace::both,
        "time to restart after a failure or a preemption"},
       [](In& in, const json& v) { in.request.restart_seconds = v.get<double>(); }},
      {{"startup_minutes", "--startup-minutes", FieldType::number, FieldFace::both,
        "fixed start-up of every run, timed once and billed on every node: cluster start, container and weights "
        "load, first checkpoint (default 10)"},
       [](In& in, const json& v) { in.request.startup_seconds = v.get<double>() * 60.0; }},
      {{"margin", "--margin", FieldType::number, FieldFace::both, "memory margin: fits when used ≤ (1 − margin) × capacity"},
       [](In& in, const json& v) { in.request.margin = v.get<double>(); }},
  };
}

}  // namespace gpuplan::api
