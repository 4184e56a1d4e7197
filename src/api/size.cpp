#include "api/size.hpp"

#include "api/model_fields.hpp"
#include "model/param_count.hpp"
#include "util/error.hpp"

namespace gpuplan::api {

using nlohmann::json;

namespace {
ModelSource& size_model(SizeInput& in) { return in.source; }
}  // namespace

namespace {

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

std::vector<FieldDef<SizeInput>> build_fields() {
  using In = SizeInput;
  std::vector<FieldDef<In>> f = model_fields<In, &size_model>();
  std::vector<FieldDef<In>> rest = {
      {{"task", "--task", FieldType::string, FieldFace::both, "pretrain, full, lora (default), qlora or serve"},
       [](In& in, const json& v) { in.task = v.get<std::string>(); }},
      {{"gpus", "--gpus", FieldType::integer, FieldFace::both,
        "GPUs of the workload (training: dp = gpus/(tp·pp); serving: tp = gpus/pp)", {}, task_bits::training | task_bits::serve},
       [](In& in, const json& v) { in.request.gpus = json_as<int>(v); }},
      {{"tp", "--tp", FieldType::integer, FieldFace::both, "tensor-parallel degree", {}, task_bits::training | task_bits::serve},
       [](In& in, const json& v) { in.request.tp = json_at_most<int>(v, 1, kMaxParallelDegree); }},
      {{"pp", "--pp", FieldType::integer, FieldFace::both, "pipeline-parallel degree", {}, task_bits::training | task_bits::serve},
       [](In& in, const json& v) { in.request.pp = json_at_most<int>(v, 1, kMaxParallelDegree); }},
      {{"dp", "--dp", FieldType::integer, FieldFace::both, "data-parallel degree", {}, task_bits::training},
       [](In& in, const json& v) { in.request.dp = json_at_most<int>(v, 1, kMaxDataParallel); }},
      {{"ep", "--ep", FieldType::integer, FieldFace::both, "expert-parallel degree (MoE; must divide the experts, and dp unless --expert-tp says otherwise)", {}, task_bits::training},
       [](In& in, const json& v) { in.ep = json_at_most<int>(v, 1, kMaxParallelDegree); }},
      {{"expert_tp", "--expert-tp", FieldType::integer, FieldFace::both,
        "expert tensor-parallel degree (MoE; default = tp; etp × ep must divide tp × dp, e.g. tp 2, ep 32, etp 1)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.training.layout.expert_tp = json_at_most<int>(v, 0, kMaxParallelDegree); }},
      {{"margin", "--margin", FieldType::number, FieldFace::both, "free fraction kept when matching GPUs (default 0.1)"},
       [](In& in, const json& v) { in.request.margin = v.get<double>(); }},
      {{"explain", "--explain", FieldType::boolean, FieldFace::both, "also return each term's formula with the numbers filled in"},
       [](In& in, const json& v) { in.request.explain = v.get<bool>(); }},
      {{"seq", "--seq", FieldType::integer, FieldFace::both, "training sequence length (tokens; default 4096)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.training.seq_len = json_at_most<std::int64_t>(v, 1, kMaxTrainingSeqLenTokens); }},
      {{"micro_batch", "--micro-batch", FieldType::integer, FieldFace::both, "sequences per micro-batch per GPU (default 1)", {}, task_bits::training},
       [](In& in, const json& v) { in.request.training.layout.micro_batch = json_at_most<int>(v, 1, kMaxMicroBatchSeqs); }},
      {{"precision", "--precision", FieldType::string, FieldFace::both, workload_defaults::kPrecisionHelp, {}, task_bits::training},
       [](In& in, const json& v) { in.precision = v.get<std::string>(); }},
      {{"optimizer", "--optimizer", FieldType::string, FieldFace::both, workload_defaults::kOptimizerHelp, {}, task_bits::training},
       [](In& in, const json& v) { in.optimizer = v.get<std::string>(); }},
      {{"zero", "--zero", FieldType::integer, FieldFace::both, "ZeRO stage 0-3 (FSDP full shard = 3; default 0)", {}, task_bits::training},
       [](In& in, const json& v) { in.zero = json_at_most<int>(v, 0, 3); }},
      {{"sp", "--sp", FieldType::boolean, FieldFace::both, "Megatron sequence parallelism (with tp)", {}, task_bits::training},
       [](In& in, const json& v) { in.sp = v.get<bool>(); }},
      {{"recompute", "--recompute", FieldType::string, FieldFace::both, "activation recomputation: none (default), selective, full, op-selective (torchtitan per-op SAC)", {}, task_bits::training},
       [](In& in, const json& v) { in.recompute = v.get<std::string>(); }},
      {{"recompute_modules", "--recompute-modules", FieldType::string, FieldFace::both,
        "megatron: selective recompute modules, comma-separated: core_attn, layernorm, moe_act, mla_up_proj, mlp "
        "(Megatron-Core recompute_modules; the list replaces the default core_attn; sets --recompute selective)",
        {}, task_bits::training},
       [](In& in, const json& v) {
         in.request.training.recompute_modules = parse_recompute_modules(v.get<std::string>(), "--recompute-modules");
       }},
      {{"lora_rank", "--lora-rank", FieldType::integer, FieldFace::both, "LoRA rank r (default 16)", {}, task_bits::lora_family},
       [](In& in, const json& v) { in.request.training.lora_rank = json_at_most<int>(v, 1, kMaxLoraRank); }},
      {{"lora_targets", "--lora-targets", FieldType::string, FieldFace::both,
        "comma list of q,k,v,o,gate,up,down or all-linear (default)", {}, task_bits::lora_family},
       [](In& in, const json& v) { in.lora_targets = v.get<std::string>(); }},
      {{"offload", "--offload", FieldType::boolean, FieldFace::both,
        "offload optimizer state and gradients to CPU (ZeRO-Offload)", {}, task_bits::training},
       [](In& in, const json& v) { in.offload = v.get<bool>(); }},
      {{"offload_params", "--offload-params", FieldType::boolean, FieldFace::both, "also offload parameters (needs zero 3)", {}, task_bits::training},
       [](In& in, const json& v) { in.offload_params = v.get<bool>(); }},
      {{"no_flash", "--no-flash", FieldType::boolean, FieldFace::both, "attention without FlashAttention (stores the s×s scores)", {}, task_bits::training},
       [](In& in, const json& v) { in.no_flash = v.get<bool>(); }},
      {{"chunked_ce", "--chunked-ce", FieldType::boolean, FieldFace::both, "chunked cross-entropy (no full fp32 logits)", {}, task_bits::training},
       [](In& in, const json& v) { in.chunked_ce = v.get<bool>(); }},
      {{"framework", "--framework", FieldType::string, FieldFace::both, "activation profile: pytorch_eager (default), pytorch_compiled (torch.compile) or megatron", {}, task_bits::training},
       [](In& in, const json& v) { in.framework = v.get<std::string>(); }},
      {{"stack", "--stack", FieldType::string, FieldFace::both,
        "training stack whose defaults apply: hf, fsdp, deepspeed, megatron, unsloth (explicit fields win)", {}, task_bits::training},
       [](In& in, const json& v) { in.stack = v.get<std::string>(); }},
      {{"offload_activations", "--offload-activations", FieldType::boolean, FieldFace::both,
        "saved activations / checkpoints offloaded to CPU memory (torchtune, Unsloth)", {}, task_bits::training},
       [](In& in, const json& v) { in.offload_activations = v.get<bool>(); }},
      {{"context", "--context", FieldType::integer, FieldFace::both, "serve: tokens per sequence (prompt + output; default 4096)", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.serving.context_tokens = json_as<std::int64_t>(v); }},
      {{"concurrency", "--concurrency", FieldType::integer, FieldFace::both, "serve: sequences resident at once (default 1)", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.serving.concurrency = json_as<std::int64_t>(v); }},
      {{"quant", "--quant", FieldType::string, FieldFace::both, "serve: weights bf16 (default), fp16, fp8, int8, int4 (= awq, gptq), nf4, q4_k_m, q8_0, q4_0, q2_k, mxfp4 (gguf_ prefix optional)", {}, task_bits::serve},
       [](In& in, const json& v) { in.quant = v.get<std::string>(); }},
      {{"kv_dtype", "--kv-dtype", FieldType::string, FieldFace::both, "serve: KV cache dtype bf16 (default), fp16, fp8, int8, int4, q8_0", {}, task_bits::serve},
       [](In& in, const json& v) { in.kv_dtype = v.get<std::string>(); }},
      {{"prefill_chunk", "--prefill-chunk", FieldType::integer, FieldFace::both, "serve: tokens per prefill step (default 2048)", {}, task_bits::serve},
       [](In& in, const json& v) { in.request.serving.prefill_chunk_tokens = json_as<std::int64_t>(v); }},
      {{"gpu", "--gpu", FieldType::string, FieldFace::both,
        "also report what fits this GPU: serve, the longest context and most sequences; training, the longest "
        "sequence and largest micro-batch at the layout given", {}, task_bits::serve | task_bits::training},
       [](In& in, const json& v) { in.gpu = v.get<std::string>(); }},
  };
  f.insert(f.end(), rest.begin(), rest.end());
  return f;
}

json layout_json(const ParallelLayout& l) {
  json j = {{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}, {"ep", l.ep}, {"zero_stage", l.zero_stage}};
  if (l.expert_tp > 0) j["expert_tp"] = l.expert_tp;
  return j;
}

}  // namespace

std::span<const FieldDef<SizeInput>> size_fields() {
  static const std::vector<FieldDef<SizeInput>> fields = build_fields();
  return fields;
}

SizeOutput run_size(const SizeInput& in, const Context& ctx) {
  SizingRequest req = in.request;
  req.task = parse_task(in.task, "--task");
  check_fields_for_task(in.given, size_fields(), in.task);  // a field the task does not read is an error, not ignored
  TrainingMemoryRequest& tr = req.training;
  tr.precision = parse_train_precision(in.precision, "--precision");
  if (in.optimizer) tr.optimizer = parse_optimizer(*in.optimizer, "--optimizer");
  tr.recompute = parse_recompute(in.recompute.value_or("none"), "--recompute");
  tr.activation_profile = parse_activation_profile(in.framework.value_or("pytorch_eager"), "--framework");
  if (in.zero) tr.layout.zero_stage = *in.zero;
  if (in.sp) tr.layout.sequence_parallel = *in.sp;
  if (in.chunked_ce) tr.chunked_cross_entropy = *in.chunked_ce;
  if (in.offload_activations) tr.offload_activations = *in.offload_activations;
  if (in.stack) {
    // The stack's defaults, then whatever the request gave explicitly.
    const TrainingStack stack = parse_training_stack(*in.stack, "--stack");
    check_stack_runs_task(stack, req.task);
    const TrainingMemoryRequest given = tr;
    tr.layout.tp = req.tp.value_or(1);
    apply_stack_defaults(stack, tr);
    if (in.optimizer) tr.optimizer = given.optimizer;
    if (in.recompute) tr.recompute = given.recompute;
    if (in.framework) tr.activation_profile = given.activation_profile;
    if (in.zero) tr.layout.zero_stage = given.layout.zero_stage;
    if (in.sp) tr.layout.sequence_parallel = given.layout.sequence_parallel;
    if (in.chunked_ce) tr.chunked_cross_entropy = given.chunked_cross_entropy;
    if (in.offload_activations) tr.offload_activations = given.offload_activations;
    tr.layout.tp = given.layout.tp;
  }
  // Megatron-Core's recompute_modules: the megatron profile (--stack or --framework megatron), under
  // selective recompute, which they set when --recompute is not given (as plan and estimate do).
  if (tr.recompute_modules != 0) {
    check_recompute_modules_mode(tr.recompute_modules, tr.activation_profile == ActivationProfile::megatron,
                                 in.recompute ? std::optional<Recompute>(tr.recompute) : std::nullopt);
    tr.recompute = Recompute::selective;
  }
  tr.lora_targets = split_targets(in.lora_targets);
  tr.layout.offload_optimizer = in.offload || in.offload_params;
  tr.layout.offload_params = in.offload_params;
  tr.flash_attention = !in.no_flash;
  if (in.ep) tr.layout.ep = *in.ep;
  req.serving.quant = parse_weight_quant(in.quant, "--quant");
  req.serving.kv_dtype = parse_kv_dtype(in.kv_dtype, "--kv-dtype");
  req.validate();  // before resolving the model: bad options fail fast
  const GpuSpec* limits_gpu = in.gpu ? &gpu_from_flag(ctx, *in.gpu) : nullptr;  // named at --gpu (trial46 D9)
  ModelArch arch = resolve_model(in.source);
  check_recompute_modules_apply(arch, req.training.recompute_modules, "--recompute-modules");
  SizingResult res = run_sizing(arch, req, ctx.gpus());
  SizeOutput out{std::move(arch), std::move(req), std::move(res), nullptr, std::nullopt, std::nullopt};
  const bool serve = out.request.task == Task::serve;
  if (in.gpu && out.arch.family != ModelFamily::decoder) {
    // What fits a GPU follows a transformer decoder's KV cache (serving) or activations (training), which other
    // families do not have here: the limits would read the search's caps (trial50 #6: a Mamba model's 10,000,000
    // tokens and 100,000 sequences; trial62 #2: an encoder's training limits).
    throw_invalid_coded("--gpu", "not_decoder_model", {{"model", out.arch.name}},
                        fmt::format("{} is {}: {}", out.arch.name, family_description(out.arch.family),
                                    serve ? "the longest context and the most sequences on a GPU are a transformer "
                                            "decoder's KV cache"
                                          : "the longest sequence and the largest micro-batch on a GPU follow a "
                                            "transformer decoder's activations, which gpuplan models for decoders only"),
                        fmt::format("a transformer decoder LLM, or size without --gpu (its fit table sizes the {})",
                                    serve ? "weights" : "weights and states"));
  }
  if (in.gpu && serve) {
    out.limits_gpu = limits_gpu;
    out.limits = serving_limits(out.arch, out.request.serving_request(), out.limits_gpu->fit_memory_bytes(), out.request.margin);
  } else if (in.gpu) {
    // trial46: the longest sequence a fine-tune fits on a given GPU (issue 8: "the longest context
    // that fits") was only found by trying --seq values by hand.
    out.limits_gpu = limits_gpu;
    out.training_limits = training_limits(out.arch, out.request.training_request(), out.limits_gpu->fit_memory_bytes(),
                                          out.request.margin);
  }
  return out;
}

json to_json(const SizeOutput& out) {
  const ModelArch& arch = out.arch;
  const SizingRequest& req = out.request;
  const SizingResult& res = out.result;
  const double total = res.per_gpu.total_bytes();
  json terms = json::array();
  for (const auto& t : res.per_gpu.terms) {
    terms.push_back({{"name", t.name}, {"bytes", t.bytes}, {"unit", "bytes"}, {"share", total > 0 ? t.bytes / total : 0.0}});
  }
  json j;
  j["model"] = {{"name", arch.name},
                {"source", arch.source},
                {"total_params", arch.total_params()},
                {"active_params", arch.active_params()}};
  if (req.task == Task::serve) {
    const ServingMemoryRequest s = req.serving_request();
    j["request"] = {{"task", "serve"},
                    {"quant", weight_quant_name(s.quant)},
                    {"kv_dtype", kv_dtype_name(s.kv_dtype)},
                    {"context_tokens", s.context_tokens},
                    {"concurrency", s.concurrency},
                    {"tp", s.tp},
                    {"pp", s.pp},
                    {"margin", req.margin}};
  } else {
    const TrainingMemoryRequest t = req.training_request();
    j["request"] = {{"task", task_name(t.task)},
                    {"precision", train_precision_name(t.precision)},
                    {"optimizer", optimizer_name(t.optimizer)},
                    {"seq_len", t.seq_len},
                    {"micro_batch", t.layout.micro_batch},
                    {"layout", layout_json(t.layout)},
                    {"recompute", recompute_name(t.recompute)},
                    {"recompute_modules",
                     t.recompute_modules != 0 ? json(recompute_modules_name(t.recompute_modules)) : json(nullptr)},
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
  if (out.limits) {
    j["limits"] = {{"gpu", out.limits_gpu->name},
                   {"capacity_bytes", out.limits_gpu->fit_memory_bytes()},
                   {"max_context_tokens", out.limits->max_context_tokens},
                   {"at_concurrency", req.serving_request().concurrency},
                   {"max_concurrency", out.limits->max_concurrency},
                   {"at_context_tokens", req.serving_request().context_tokens}};
  }
  if (out.training_limits) {
    const TrainingMemoryRequest t = req.training_request();
    j["limits"] = {{"gpu", out.limits_gpu->name},
                   {"capacity_bytes", out.limits_gpu->fit_memory_bytes()},
                   {"max_seq_len", out.training_limits->max_seq_len},
                   {"at_micro_batch", t.layout.micro_batch},
                   {"max_micro_batch", out.training_limits->max_micro_batch},
                   {"at_seq_len", t.seq_len}};
  }
  return j;
}

std::string_view sizing_warning_code(std::string_view m) {
  // The sentences' fixed parts (sizing/memory.cpp), most specific first.
  static constexpr std::pair<std::string_view, std::string_view> kCodes[] = {
      {"activation memory of", "activations_not_modelled"},
      {"with dp = 1 shards nothing", "zero_without_dp"},
      {"KV heads: KV", "kv_heads_replicated"},
      {"do not split evenly over pp", "uneven_pipeline"},
      {"fp8: activations counted in 16 bits", "fp8_activations"},
      {"exceeds the model's max_position_embeddings", "beyond_max_position"},
      {"learned positions (max_position_embeddings)", "beyond_learned_positions"},
      {"activations of each of its", "hybrid_activations_approximate"},
      {"MLA latent KV cache is not split by TP", "mla_kv_not_split"},
  };
  for (const auto& [part, code] : kCodes)
    if (m.find(part) != std::string_view::npos) return code;
  return {};
}

std::vector<SizeAlternative> size_alternatives(const json& body, const Context& ctx) {
  auto size_of = [&ctx](const json& b) {
    SizeInput in;
    read_fields(in, b, size_fields());
    return to_json(run_size(in, ctx));
  };
  const json base = size_of(body);
  if (!base["fits"].empty()) return {};
  const json& r = base["request"];
  std::vector<std::pair<std::string, json>> changes;
  if (r["task"] == "serve") {
    const std::string quant = r["quant"];
    if (quant != "int4" && quant != "nf4" && quant.find("q4") == std::string::npos && quant != "q2_k" && quant != "mxfp4")
      changes.emplace_back("quant", "int4");
    if (quant == "bf16" || quant == "fp16") changes.emplace_back("quant", "fp8");
    if (r["kv_dtype"] == "bf16" || r["kv_dtype"] == "fp16") changes.emplace_back("kv_dtype", "fp8");
    if (r["context_tokens"].get<std::int64_t>() >= 1024) changes.emplace_back("context", r["context_tokens"].get<std::int64_t>() / 4);
    if (r["concurrency"].get<std::int64_t>() > 1) changes.emplace_back("concurrency", 1);
  } else {
    if (r["task"] == "lora" || r["task"] == "full") changes.emplace_back("task", "qlora");
    if (r["recompute"] == "none") changes.emplace_back("recompute", "full");
    if (r["seq_len"].get<std::int64_t>() >= 1024) changes.emplace_back("seq", r["seq_len"].get<std::int64_t>() / 4);
  }
  std::vector<SizeAlternative> out;
  for (auto& [field, value] : changes) {
    json b = body;
    b[field] = value;
    try {
      const json s = size_of(b);
      if (!s["fits"].empty()) out.push_back({field, value, s["fits"][0]});
    } catch (const Error&) {
      // A change this request cannot take (e.g. QLoRA with fp32): not an alternative.
    }
  }
  return out;
}

}  // namespace gpuplan::api
