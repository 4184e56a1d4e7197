#include "sizing/perf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string_view>

#include "util/error.hpp"

namespace gpuplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double safe_div(double a, double b) { return b > 0 ? a / b : (a > 0 ? kInf : 0.0); }

/// The run's MoE load imbalance: the request's (--moe-imbalance), else the assumption.
double moe_imbalance(const TrainingStepRequest& r, const PerfAssumptions& a) {
  return r.moe_load_imbalance.value_or(a.moe_load_imbalance);
}

bool frozen_base(Task task) { return task == Task::lora || task == Task::qlora; }

/// NVIDIA-only kernels (DeepEP/HybridEP, Transformer Engine's CUDA graphs) run on this cluster; a
/// cluster without a GPU spec is taken as NVIDIA.
bool nvidia_cluster(const ClusterSpec& c) { return c.gpu == nullptr || c.gpu->vendor == "NVIDIA"; }

/// The dispatcher that runs: DeepEP/HybridEP only dispatch across EP ranks (Megatron-Core's flex
/// dispatcher needs tp·ep > 1; with EP 1 nothing leaves the GPU and the local permutation is
/// alltoall's) and only on NVIDIA GPUs (NVSHMEM / NVLink kernels); elsewhere alltoall.
MoeDispatcher effective_dispatcher(const TrainingStepRequest& r, const ClusterSpec& c) {
  if (r.moe_dispatcher == MoeDispatcher::alltoall || r.layout.ep <= 1) return MoeDispatcher::alltoall;
  if (!nvidia_cluster(c)) return MoeDispatcher::alltoall;
  return r.moe_dispatcher;
}

/// The CUDA-graph mode that runs: the request's on NVIDIA GPUs; elsewhere eager (none). Megatron-Core's
/// full-iteration and Transformer Engine graphs are timed from NVIDIA runs only (docs/accuracy.md); one rule
/// for every mode (trial60 #7: full_iteration was applied on an MI300X while transformer_engine was not).
CudaGraphImpl effective_cuda_graph(const TrainingStepRequest& r, const ClusterSpec& c) {
  return nvidia_cluster(c) ? r.cuda_graph : CudaGraphImpl::none;
}

/// The explain line's words for the graph mode: what runs, or what was asked and is run eager instead.
std::string_view cuda_graph_phrase(const TrainingStepRequest& r, const ClusterSpec& c) {
  const bool runs = effective_cuda_graph(r, c) == r.cuda_graph;
  switch (r.cuda_graph) {
    case CudaGraphImpl::full_iteration:
      return runs ? ", full-iteration CUDA graph" : ", full-iteration CUDA graph asked: eager on a non-NVIDIA GPU";
    case CudaGraphImpl::transformer_engine:
      return runs ? ", Transformer Engine partial CUDA graphs"
                  : ", Transformer Engine partial CUDA graphs asked: eager on a non-NVIDIA GPU";
    case CudaGraphImpl::none:
    case CudaGraphImpl::local: break;
  }
  return "";
}

/// Fixed host time per MoE layer per micro-batch (forward + backward) of the run's CUDA-graph mode
/// and dispatcher (PerfAssumptions moe_layer_overhead_seconds*, TrainingStepRequest::cuda_graph).
double moe_layer_overhead_seconds(const TrainingStepRequest& r, const ClusterSpec& c, const PerfAssumptions& a) {
  const double eager = effective_dispatcher(r, c) == MoeDispatcher::hybridep ? a.hybridep_moe_layer_overhead_seconds
                                                                             : a.moe_layer_overhead_seconds;
  switch (effective_cuda_graph(r, c)) {
    case CudaGraphImpl::full_iteration: return 0.0;
    case CudaGraphImpl::transformer_engine:
      // Graphs only take launches off the host: never more than the eager layer's time (trial60 #1).
      return std::min(a.moe_layer_overhead_seconds_te_graphs, eager);
    case CudaGraphImpl::none:
    case CudaGraphImpl::local: break;
  }
  return eager;
}

Dtype requested_dtype(TrainPrecision p) {
  switch (p) {
    case TrainPrecision::bf16_mixed:
    case TrainPrecision::bf16_pure: return Dtype::bf16;
    case TrainPrecision::fp16_mixed: return Dtype::fp16;
    case TrainPrecision::fp8_mixed: return Dtype::fp8;
    case TrainPrecision::fp32:
    case TrainPrecision::tf32: return Dtype::tf32;
  }
  return Dtype::bf16;
}

/// Bytes of one activation / gradient element exchanged between GPUs.
double comm_element_bytes(TrainPrecision p) {
  return (p == TrainPrecision::fp32 || p == TrainPrecision::tf32) ? 4.0 : 2.0;
}

/// The peak used and the dtype it belongs to, with the documented fallback chain.
struct Peak {
  double flops_per_s = 0;
  Dtype dtype = Dtype::bf16;
};

Peak peak_for(const GpuSpec& gpu, Dtype wanted) {
  static constexpr Dtype kChainFp8[] = {Dtype::fp8, Dtype::bf16, Dtype::fp16, Dtype::tf32, Dtype::fp32};
  static constexpr Dtype kChainBf16[] = {Dtype::bf16, Dtype::fp16, Dtype::tf32, Dtype::fp32, Dtype::fp32};
  static constexpr Dtype kChainFp16[] = {Dtype::fp16, Dtype::bf16, Dtype::tf32, Dtype::fp32, Dtype::fp32};
  static constexpr Dtype kChainTf32[] = {Dtype::tf32, Dtype::fp32, Dtype::fp32, Dtype::fp32, Dtype::fp32};
  const Dtype* chain = kChainBf16;
  if (wanted == Dtype::fp8) chain = kChainFp8;
  else if (wanted == Dtype::fp16) chain = kChainFp16;
  else if (wanted == Dtype::tf32 || wanted == Dtype::fp32) chain = kChainTf32;
  for (int i = 0; i < 5; ++i) {
    if (auto f = gpu.dense_flops(chain[i]); f && *f > 0) return {*f, chain[i]};
  }
  return {0.0, wanted};
}

enum class GpuClass { ampere_datacenter, hopper, blackwell, other };

GpuClass gpu_class(const GpuSpec& gpu) {
  // string_view comparisons: the length first, then the bytes (the planner asks this for every
  // step-time estimate; std::string == const char* measured the literal and compared each time).
  const std::string_view vendor = gpu.vendor, architecture = gpu.architecture;
  if (vendor == std::string_view("NVIDIA")) {
    if (architecture == std::string_view("Hopper")) return GpuClass::hopper;
    // Data-centre Blackwell (B200/GB200, B300/GB300); the GB202 workstation/consumer parts are "other".
    if (architecture.starts_with("Blackwell") && gpu.is_hbm()) return GpuClass::blackwell;
    if (architecture == std::string_view("Ampere") && gpu.is_hbm()) return GpuClass::ampere_datacenter;
  }
  return GpuClass::other;
}

double base_efficiency(const GpuSpec& gpu, const PerfAssumptions& a) {
  switch (gpu_class(gpu)) {
    case GpuClass::ampere_datacenter: return a.base_efficiency_ampere;
    case GpuClass::hopper: return a.base_efficiency_hopper;
    case GpuClass::blackwell: return a.base_efficiency_blackwell;
    case GpuClass::other: return a.base_efficiency_other;
  }
  return a.base_efficiency_other;
}

/// Trainable parameters (whose gradients are reduced over DP) for LoRA on all linear layers
/// (q, k, v, o, gate, up, down; routed experts' copies included), rank r: r·(d_in + d_out) per
/// adapted matrix [Hu et al. 2021 §4], read from the model's LayerGeometry (the same list memory
/// and parameter counting use). Models without a geometry (diffusion) fall back to the shape.
double lora_adapter_params(const ModelArch& arch, int rank) {
  if (const LayerGeometry* g = current_geometry(arch)) {
    static const std::vector<std::string> kAll = {"all-linear"};
    return static_cast<double>(g->lora_params(rank, kAll));
  }
  const double r = rank;
  const double h = static_cast<double>(arch.hidden_size);
  const double d = arch.head_dim > 0 ? static_cast<double>(arch.head_dim)
                                     : safe_div(h, static_cast<double>(std::max<std::int64_t>(arch.num_attention_heads, 1)));
  const double q = static_cast<double>(arch.num_attention_heads) * d;
  const double kv = static_cast<double>(arch.num_kv_heads > 0 ? arch.num_kv_heads : arch.num_attention_heads) * d;
  const double inter = static_cast<double>(arch.intermediate_size);
  const double mlp_mats = arch.gated_mlp ? 3.0 : 2.0;
  const double per_layer = r * ((h + q) + 2.0 * (h + kv) + (q + h)) + mlp_mats * r * (h + inter);
  return per_layer * static_cast<double>(arch.num_layers);
}

/// Active routed-expert parameters per token (top-k copies), from the geometry when present.
double active_routed_expert_params(const ModelArch& arch) {
  if (const LayerGeometry* g = current_geometry(arch)) {
    double sum = 0;
    for (const LinearFamily& f : g->linears)
      if (f.role == LinearRole::routed_expert) sum += static_cast<double>(f.active_params());
    return sum;
  }
  if (!arch.moe || arch.moe->num_routed_experts <= 0) return 0;
  return static_cast<double>(arch.params.experts) * static_cast<double>(arch.moe->experts_per_token) /
         static_cast<double>(arch.moe->num_routed_experts);
}

/// Everything estimate_training_step and explain_training_step share.
struct Work {
  double kv_replication_flop_per_gpu = 0;  ///< TP > KV heads: replicated K/V projection FLOP per GPU per step
  TrainingStepEstimate e;
  Peak peak;
  FlopsPerToken hw_per_token;
  FlopsPerToken model_per_token;
  double tokens_per_step = 0;
  int gpus = 1;
  double grad_bytes_per_gpu = 0;   ///< gradients reduced over DP per GPU
  double param_bytes_per_gpu = 0;  ///< ZeRO-3 gathered parameter bytes per GPU (its shard × dp)
  int dp_per_node = 1;
  double tp_bytes = 0;             ///< one TP all-reduce message
  double tp_link_bytes_per_s = 0;
  double tp_collectives_per_layer = 0;  ///< per layer: 2 per TP sub-block (+1 recomputed), ModelArch::tp_sublayers
  double tp_collectives = 0;            ///< per micro-batch on the stage, after the MoE layers' expert halves (etp < tp)
  double tp_unoverlapped_seconds = 0;   ///< TP all-reduces before userbuffers overlap (tp_comm_overlap)
  double tp_half_collective_seconds = 0;  ///< one all-gather / reduce-scatter of s·b·h (tp_comm_overlap)
  double tp_exposed_per_layer_seconds = 0;  ///< exposed TP time per layer per micro-batch (tp_comm_overlap)
  double ep_bytes = 0;                  ///< bytes one GPU sends in one all-to-all
  double ep_alltoall_each_seconds = 0;  ///< one all-to-all incl. load imbalance
  double ep_off_node_fraction = 0;      ///< share of the all-to-all bytes that cross nodes
  double ep_dedup_gpu_copies = 0;      ///< deepep/hybridep: expected GPUs a token's experts sit on
  double ep_dedup_node_copies = 0;     ///< deepep/hybridep: expected nodes a token's experts sit on
  double ep_tokens = 0;                ///< tokens one GPU dispatches per all-to-all
  int ep_collectives_per_layer = 0;
  double ep_alltoall_unoverlapped_seconds = 0;  ///< before overlap with compute (ep_overlap_with_compute)
  double moe_layers_per_stage = 0;
  double expert_flop_share = 0;         ///< routed-expert share of the hardware FLOPs
  double expert_slowdown = 1;           ///< their time relative to dense matmuls
  double moe_fixed_seconds = 0;         ///< fixed dispatch time of the MoE layers (in compute_seconds)
  int edp = 1;                          ///< expert-data-parallel degree dp/ep
  int edp_per_node = 1;
  double expert_grad_bytes_per_gpu = 0;
  double expert_param_bytes_per_gpu = 0;
  double layers_per_stage = 0;
  double backward_fraction = 0;
  double exposed_dp = 0;
  double exposed_zero = 0;
  double dp_window_seconds = 0;          ///< compute the gradient all-reduce overlaps (0: not overlapped)
  double zero_window_seconds = 0;        ///< compute per micro-batch the ZeRO-3 gathers overlap
  double zero_per_micro_batch_seconds = 0;  ///< ZeRO-3 communication per micro-batch
  double optimizer_bytes_per_param = 0;
  double updated_params_per_gpu = 0;
  double updated_expert_params_per_gpu = 0;  ///< of which experts (sharded over edp under ZeRO ≥ 1)
  double host_seconds = 0;
  double fp8_flop_share = 0;  ///< hardware FLOPs run in FP8 (linear layers except the LM head)
  double fp8_speedup = 1;     ///< FP8 GEMM speed / 16-bit GEMM speed
  double mean_stage_compute_seconds = 0;  ///< compute per GPU if the pipeline ranks were balanced
  double head_seconds = 0;                ///< output layer + loss on the last pipeline rank
  double mtp_seconds = 0;                 ///< DeepSeek MTP module on the last rank (pretraining)
  double seconds_per_layer = 0;           ///< one decoder layer's compute on its rank
  int busiest_stage_layers = 0;           ///< decoder layers on the busiest rank
  double eff16 = 0;                       ///< kernel_efficiency at the 16-bit peak (before the FP8 factor)
  double eff_head = 0;                    ///< the LM head's efficiency: eff16 without the hidden-width factor
  double head_flop_share = 0;             ///< hardware FLOPs of the LM head (V·h GEMMs), of the total
  double head_saved_seconds = 0;          ///< compute time the head's own efficiency takes off (per GPU)
  double recompute_bytes_per_token = 0;   ///< recompute_modules_bytes_per_token of the request
  double recompute_bytes_seconds = 0;     ///< their HBM time per GPU (in compute_seconds)
  double hw_per_gpu = 0;                  ///< hardware FLOP per GPU per step (mean over ranks)
};

/// Decoder layers on pipeline rank `d` of `pp`: the request's pipeline_stage_layers, or
/// Megatron-Core's default uniform split of the pp·v chunks (chunk c holds L/(pp·v) layers, the
/// remainder one each to the first chunks; rank d holds chunks d, d+pp, ..., d+(v−1)·pp).
int stage_layers(const TrainingStepRequest& r, std::int64_t num_layers, int d) {
  if (!r.pipeline_stage_layers.empty()) return r.pipeline_stage_layers[static_cast<std::size_t>(d)];
  const std::int64_t pp = std::max(r.layout.pp, 1);
  const std::int64_t chunks = pp * std::max(r.layout.virtual_stages, 1);
  const std::int64_t base = num_layers / chunks, rem = num_layers % chunks;
  std::int64_t n = 0;
  for (std::int64_t c = d; c < chunks; c += pp) n += base + (c < rem ? 1 : 0);
  return static_cast<int>(n);
}

/// Share of the hardware FLOPs in the LM head's V·h GEMMs (forward, both backward GEMMs).
double head_flop_share(const ModelArch& arch, const FlopsPerToken& hw, double matmul) {
  if (matmul <= 0 || hw.total_flop <= 0) return 0;
  const double head = static_cast<double>(arch.vocab_size) * static_cast<double>(arch.hidden_size);
  return std::clamp(head / matmul, 0.0, 1.0) * hw.dense_matmul_flop / hw.total_flop;
}

/// Share of the hardware FLOPs that FP8 training runs in FP8: the linear layers' matmuls
/// without the LM head (Transformer Engine keeps the output layer and the attention core in
/// 16 bits; NVIDIA TE docs "Using FP8 with Transformer Engine").
double fp8_flop_share(const ModelArch& arch, const FlopsPerToken& hw, double matmul) {
  if (matmul <= 0 || hw.total_flop <= 0) return 0;
  // The linear layers' matmuls: every matmul FLOP but the head's.
  return hw.dense_matmul_flop / hw.total_flop - head_flop_share(arch, hw, matmul);
}

/// Bytes read + written per updated parameter by one optimizer step (see perf.hpp).
double optimizer_update_bytes(TrainPrecision p, Optimizer o, double grad_bytes) {
  const bool pure16 = p == TrainPrecision::bf16_pure;
  const bool fp32 = p == TrainPrecision::fp32 || p == TrainPrecision::tf32;
  const double state_bytes = pure16 ? 2.0 : 4.0;  // per optimizer state element
  double states = 0;
  switch (o) {
    case Optimizer::adamw: states = 2 * state_bytes; break;
    case Optimizer::adamw_8bit: states = 2.0; break;
    case Optimizer::sgd_momentum:
    case Optimizer::lion: states = state_bytes; break;
    case Optimizer::adafactor: states = 0.0; break;  // factored: rows + cols, negligible
  }
  const double master_rw = (pure16 || fp32) ? 0.0 : 8.0;   // fp32 master read + write
  const double weight_rw = fp32 ? 8.0 : (pure16 ? 4.0 : 2.0);  // mixed: only the 16-bit copy is written
  return 2.0 * states + master_rw + weight_rw + grad_bytes;
}

void validate(const TrainingStepRequest& r, const ClusterSpec& c) {
  if (c.gpu == nullptr) throw_invalid("cluster.gpu", "no GPU given", "a GPU from the catalog");
  if (c.gpus_per_node < 1 || c.nodes < 1)
    throw_invalid("cluster", fmt::format("{} GPUs per node × {} nodes", c.gpus_per_node, c.nodes),
                  "at least 1 GPU per node and 1 node");
  const ParallelLayout& l = r.layout;
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.ep < 1)
    throw_invalid("--tp/--pp/--dp/--ep", fmt::format("a parallel degree below 1 (tp {} pp {} dp {} ep {})", l.tp, l.pp, l.dp, l.ep),
                  "degrees >= 1");
  if (l.micro_batch < 1) throw_invalid("--micro-batch", fmt::format("{} is not a positive integer", l.micro_batch), "an integer >= 1");
  if (l.zero_stage < 0 || l.zero_stage > 3)
    throw_invalid("--zero-stage", fmt::format("{} is not a ZeRO stage", l.zero_stage), "0, 1, 2 or 3");
  if (r.seq_len < 1) throw_invalid("--seq", fmt::format("{} is not a positive integer", r.seq_len), "an integer >= 1");
  if (r.global_batch_seqs < 1)
    throw_invalid("--global-batch", fmt::format("{} is not a positive integer", r.global_batch_seqs), "an integer >= 1");
}

/// pipeline_stage_layers: empty, or pp non-negative counts summing to the model's layers.
void validate_tp_comm_overlap(const ModelArch& arch, const TrainingStepRequest& r) {
  if (!r.tp_comm_overlap) return;
  if (arch.moe || arch.mla || arch.parallel_attention || arch.ssm || arch.hidden_size <= 0 ||
      arch.num_attention_heads <= 0 || arch.intermediate_size <= 0)
    throw_invalid("tp_comm_overlap", fmt::format("{} is not a dense MHA/GQA decoder", arch.name),
                  "a dense decoder (userbuffers overlap is modelled for attention + dense MLP layers only)");
}

void validate_stage_layers(const ModelArch& arch, const TrainingStepRequest& r) {
  const auto& v = r.pipeline_stage_layers;
  if (v.empty()) return;
  std::int64_t sum = 0;
  bool negative = false;
  for (int n : v) {
    sum += n;
    negative = negative || n < 0;
  }
  if (static_cast<int>(v.size()) != r.layout.pp || negative || sum != arch.num_layers)
    throw_invalid("layout.pipeline_stage_layers",
                  fmt::format("{} entries summing to {} (pp {}, {} has {} layers)", v.size(), sum, r.layout.pp,
                              arch.name, arch.num_layers),
                  fmt::format("{} non-negative layer counts summing to {}", r.layout.pp, arch.num_layers));
}

/// Expert parallelism needs a MoE model whose routed experts and dp both split into ep parts.
void validate_expert_parallel(const ModelArch& arch, const ParallelLayout& l) {
  if (l.ep <= 1 && (l.expert_tp == 0 || !arch.moe)) return;
  if (l.ep > 1 && (!arch.moe || arch.moe->num_routed_experts <= 0))
    throw_invalid("layout.ep", fmt::format("ep {} on a dense model ({})", l.ep, arch.name), "ep 1 for a dense model");
  if (arch.moe && arch.moe->num_routed_experts > 0 && arch.moe->num_routed_experts % l.ep != 0)
    throw_invalid("layout.ep", fmt::format("ep {} does not divide the {} routed experts of {}", l.ep,
                                           arch.moe->num_routed_experts, arch.name),
                  fmt::format("a divisor of {}", arch.moe->num_routed_experts));
  if (l.expert_tp < 0) throw_invalid("layout.expert_tp", fmt::format("{} is negative", l.expert_tp), "0 (= tp) or a degree >= 1");
  if (!l.expert_grid_divides())
    throw_invalid("layout.ep",
                  l.expert_tp > 0 ? fmt::format("expert tp {} × ep {} does not divide tp {} × dp {}", l.etp(), l.ep,
                                                l.tp, l.dp)
                                  : fmt::format("ep {} does not divide dp {}", l.ep, l.dp),
                  "etp × ep dividing tp × dp (experts are sharded within a stage's GPUs; etp defaults to tp)");
}

/// Phase 1 of compute_work: validation, FLOPs and the compute time per GPU averaged over the
/// pipeline ranks (FP8, replicated KV heads, QLoRA and routed-expert factors included), before
/// any communication term and the pipeline-stage balance. compute_work continues from it, and
/// training_step_seconds_lower_bound stops after it: both read the very same doubles.
void compute_phase(Work& w, const ModelArch& arch, const TrainingStepRequest& r, const ClusterSpec& c,
                   const PerfAssumptions& a, const TrainingStepModelFigures& fig) {
  validate(r, c);
  validate_expert_parallel(arch, r.layout);
  validate_stage_layers(arch, r);
  validate_tp_comm_overlap(arch, r);
  const GpuSpec& gpu = *c.gpu;
  const ParallelLayout& l = r.layout;
  TrainingStepEstimate& e = w.e;
  w.gpus = l.tp * l.pp * l.dp;
  const double tp = l.tp, pp = l.pp;

  // Micro-batches per pipeline per step.
  const std::int64_t per_dp = std::max<std::int64_t>(r.global_batch_seqs / l.dp, 1);
  const std::int64_t m = std::max<std::int64_t>((per_dp + l.micro_batch - 1) / l.micro_batch, 1);
  e.micro_batches_per_step = m;
  const double md = static_cast<double>(m);
  w.tokens_per_step = static_cast<double>(r.global_batch_seqs) * static_cast<double>(r.seq_len);

  // FLOPs.
  w.hw_per_token = fig.hardware_per_token;
  w.model_per_token = fig.model_per_token;
  e.hardware_flop_per_step = w.hw_per_token.total_flop * w.tokens_per_step;
  e.model_flop_per_step = w.model_per_token.total_flop * w.tokens_per_step;
  const FlopsPerToken& fwd = fig.forward_per_token;
  w.backward_fraction = fwd.total_flop > 0 ? 1.0 - fwd.total_flop / w.hw_per_token.total_flop : 0.0;

  // Compute.
  // FP8 runs only the linear layers' GEMMs in FP8 (Transformer Engine; torchao float8): the
  // attention core, the LM head, norms and the rest stay 16-bit. Their time is the 16-bit time
  // with the FP8 share sped up by (FP8 peak / 16-bit peak) × fp8_gemm_relative_efficiency.
  const Dtype wanted = requested_dtype(r.precision);
  w.peak = peak_for(gpu, wanted == Dtype::fp8 ? Dtype::bf16 : wanted);
  e.peak_flops_per_s = w.peak.flops_per_s;
  const double eff16 = kernel_efficiency(arch, r, gpu, a);
  w.eff16 = eff16;
  const Peak p8 = wanted == Dtype::fp8 ? peak_for(gpu, Dtype::fp8) : Peak{};
  double time_factor = 1.0;
  if (p8.dtype == Dtype::fp8 && p8.flops_per_s > w.peak.flops_per_s && w.peak.flops_per_s > 0) {
    w.fp8_flop_share = fp8_flop_share(arch, w.hw_per_token, fig.matmul_params_per_token);
    w.fp8_speedup = p8.flops_per_s / w.peak.flops_per_s * a.fp8_gemm_relative_efficiency;
    time_factor = (1.0 - w.fp8_flop_share) + w.fp8_flop_share / std::max(w.fp8_speedup, 1e-9);
  }
  e.kernel_efficiency = eff16 / time_factor;  // effective, against the 16-bit peak
  const double hw_per_gpu = e.hardware_flop_per_step / static_cast<double>(w.gpus);
  w.hw_per_gpu = hw_per_gpu;
  e.compute_seconds = safe_div(hw_per_gpu, w.peak.flops_per_s * e.kernel_efficiency);
  // TP above the KV heads: every GPU projects a whole KV head (replicated on tp / kv GPUs; memory
  // counts its weights, memory.cpp kv_replicated_params), 2 FLOP × 2·head_dim·hidden·(1 − kv/tp)
  // more forward work per token and layer than the even split, for the tokens of its DP replica
  // and the layers of its stage (mean), scaled from forward to the step as the rest is.
  if (!arch.mla && arch.num_kv_heads > 0 && tp > static_cast<double>(arch.num_kv_heads) && arch.num_layers > 0 &&
      fwd.total_flop > 0 && arch.num_attention_heads > 0) {
    const double hid = static_cast<double>(arch.hidden_size);
    const double hd = arch.head_dim > 0 ? static_cast<double>(arch.head_dim)
                                        : hid / static_cast<double>(arch.num_attention_heads);
    const double per_token = static_cast<double>(arch.num_layers) / pp * 4.0 * hd * hid *
                             (1.0 - static_cast<double>(arch.num_kv_heads) / tp);
    const double extra = w.tokens_per_step / static_cast<double>(l.dp) * per_token *
                         (w.hw_per_token.total_flop / fwd.total_flop);
    w.kv_replication_flop_per_gpu = extra;
    e.compute_seconds += safe_div(extra, w.peak.flops_per_s * e.kernel_efficiency);
  }
  if (r.task == Task::qlora) e.compute_seconds *= a.qlora_dequant_overhead;
  // Routed experts: grouped GEMMs of width f_e plus the per-routed-token permute/unpermute and
  // gating traffic (∝ k·h bytes against 6·k·h·f_e FLOPs) run below the dense efficiency by
  // 1/(1 + expert_half_width / f_e); the slowest EP rank also does moe_load_imbalance × the mean.
  if (arch.moe && arch.moe->num_routed_experts > 0 && arch.moe->expert_intermediate_size > 0) {
    const double matmul = fig.matmul_params_per_token;
    const MoeSpec& moe = *arch.moe;
    const double active_expert = fig.active_routed_expert_params;
    w.expert_flop_share = matmul > 0 ? std::clamp(active_expert / matmul, 0.0, 1.0) * w.hw_per_token.dense_matmul_flop /
                                           std::max(w.hw_per_token.total_flop, 1.0)
                                     : 0.0;
    // The grouped GEMMs of one GPU are f_e / etp wide (expert tensor parallelism splits them).
    const bool hybridep = effective_dispatcher(r, c) == MoeDispatcher::hybridep;
    const double half_width = hybridep ? a.hybridep_expert_half_width : a.expert_half_width;
    const double layer_overhead = moe_layer_overhead_seconds(r, c, a);
    w.expert_slowdown = (1.0 + half_width * static_cast<double>(l.etp()) /
                                   static_cast<double>(moe.expert_intermediate_size)) *
                        (l.ep > 1 ? std::max(moe_imbalance(r, a), 1.0) : 1.0);
    const double factor = (1.0 - w.expert_flop_share) + w.expert_flop_share * w.expert_slowdown;
    // Dropless token dispatch: a fixed, GPU-independent time per MoE layer per micro-batch.
    w.moe_fixed_seconds = md * std::ceil(static_cast<double>(moe.num_moe_layers) / pp) * layer_overhead;
    const double scaled = e.compute_seconds * factor;
    e.compute_seconds = scaled + w.moe_fixed_seconds;
    e.kernel_efficiency = safe_div(e.kernel_efficiency * (e.compute_seconds > 0 ? scaled / e.compute_seconds : 1.0),
                                   factor);
  }
  // The LM head under a fused cross-entropy: its GEMMs are tokens × h × V with V the vocabulary
  // (32k–256k), so they keep the tile efficiency the 1/(1 + hidden_half_width/h) factor takes from
  // GEMMs whose every dimension scales with h, and the loss's element-wise work (∝ s·V against the
  // GEMMs' s·h·V: the same 1/h share as a layer's norms and activations) is one fused kernel:
  // Megatron-Bridge's GPTModelProvider sets cross_entropy_loss_fusion = True and its performance
  // scripts cross_entropy_fusion_impl = "te" (gpt_provider.py, scripts/performance/utils/
  // overrides.py at 067f987df). Eager stacks upcast the logits to fp32 and run an unfused
  // cross-entropy (transformers loss_utils ForCausalLMLoss; torchtitan likewise), so their head keeps
  // the factor, as our H200 runs of 2–4-layer models, where the head is a third of the FLOPs, show
  // (tests/data/h200-measurements.jsonl). Under fusion the head runs at eff16 without the factor and
  // stays 16-bit under FP8 (fp8_flop_share). Its time in compute_seconds above is at eff16: take
  // off the difference, and keep kernel_efficiency the effective figure of the whole step.
  w.head_flop_share = head_flop_share(arch, w.hw_per_token, fig.matmul_params_per_token);
  w.eff_head = arch.hidden_size > 0 && r.stack == TrainingStack::megatron
                   ? eff16 * (1.0 + a.hidden_half_width / static_cast<double>(arch.hidden_size))
                   : eff16;
  if (w.head_flop_share > 0 && w.eff_head > eff16 && e.compute_seconds > 0) {
    double saved = w.head_flop_share * hw_per_gpu / w.peak.flops_per_s * (1.0 / eff16 - 1.0 / w.eff_head);
    if (r.task == Task::qlora) saved *= a.qlora_dequant_overhead;
    saved = std::min(saved, 0.5 * e.compute_seconds);
    w.head_saved_seconds = saved;
    e.kernel_efficiency *= e.compute_seconds / (e.compute_seconds - saved);
    e.compute_seconds -= saved;
  }
  // Megatron-Core recompute_modules layernorm / moe_act: element-wise kernels re-run in backward,
  // memory-bound (recompute_modules_bytes_per_token) at the optimizer's fraction of HBM bandwidth,
  // spread over the GPUs as the FLOPs are. Per-layer work: the pipeline split below shares it out.
  w.recompute_bytes_per_token =
      recompute_modules_bytes_per_token(arch, effective_recompute_modules(r.recompute, r.recompute_modules));
  if (w.recompute_bytes_per_token > 0) {
    w.recompute_bytes_seconds = safe_div(w.tokens_per_step * w.recompute_bytes_per_token / static_cast<double>(w.gpus),
                                         gpu.memory_bandwidth_bytes_per_s * a.optimizer_bw_efficiency);
    e.compute_seconds += w.recompute_bytes_seconds;
  }

}

/// Phase 2 of compute_work: every term after the compute phase, into `w` as compute_phase left
/// it for the same request (or the request at another ZeRO stage: compute_phase does not read it).
void finish_work(Work& w, const ModelArch& arch, const TrainingStepRequest& r, const ClusterSpec& c,
                 const PerfAssumptions& a, const TrainingStepModelFigures& fig) {
  const GpuSpec& gpu = *c.gpu;
  const ParallelLayout& l = r.layout;
  TrainingStepEstimate& e = w.e;
  const double tp = l.tp, pp = l.pp;
  const int v = std::max(l.virtual_stages, 1);
  const double md = static_cast<double>(e.micro_batches_per_step);
  const double eff16 = w.eff16;
  const double hw_per_gpu = w.hw_per_gpu;

  const double elem = comm_element_bytes(r.precision);
  const double h = static_cast<double>(arch.hidden_size);
  const double s = static_cast<double>(r.seq_len);
  const double b = l.micro_batch;
  const double per_gpu_net = safe_div(c.inter_node_bytes_per_s, c.gpus_per_node) * a.network_efficiency;
  // Intra-node bandwidth of a collective among `n` GPUs of a node (PCIe: less than the link).
  const auto intra_for = [&](int n) { return c.intra_node_bytes_per_s * collective_link_efficiency(c, n, a); };
  w.layers_per_stage = std::ceil(static_cast<double>(arch.num_layers) / pp);

  // Tensor parallel all-reduces (Megatron §3): 2 fwd + 2 bwd (+2 recomputed fwd) per layer.
  if (l.tp > 1 && arch.hidden_size > 0) {
    w.tp_bytes = s * b * h * elem;
    w.tp_link_bytes_per_s = l.tp <= c.gpus_per_node ? intra_for(l.tp) : per_gpu_net;
    // One all-reduce forward and one backward per sub-block (attention, MLP; a hybrid's SSM mixer), plus the
    // recomputed forward's under full recompute: 4 (6) per transformer layer.
    const double sub_blocks_per_layer = arch.tp_sublayers() / std::max(1.0, static_cast<double>(arch.num_layers));
    w.tp_collectives_per_layer = sub_blocks_per_layer * (2.0 + (r.recompute == Recompute::full ? 1.0 : 0.0));
    // MoE layers whose experts are not tensor-parallel (etp < tp: Megatron-Core with
    // expert_tensor_parallel_size 1 dispatches the sequence-parallel tokens of each TP rank
    // straight to the EP ranks) keep only the attention's half of the TP collectives.
    double collectives = w.layers_per_stage * w.tp_collectives_per_layer;
    if (arch.moe && l.etp() < l.tp) {
      const double moe_layers = std::ceil(static_cast<double>(arch.moe->num_moe_layers) / pp);
      collectives -= std::min(moe_layers, w.layers_per_stage) * (2.0 + (r.recompute == Recompute::full ? 1.0 : 0.0));
    }
    w.tp_collectives = collectives;
    e.tp_allreduce_seconds = md * collectives * ring_allreduce_seconds(w.tp_bytes, l.tp, w.tp_link_bytes_per_s);
  }

  // Expert-parallel all-to-all: dispatch + combine, forward and backward (+ the recomputed
  // forward), per MoE layer. Each GPU sends its tokens' top-k hidden states to the EP ranks that
  // hold the chosen experts and receives them back; (ep−1)/ep of them leave the GPU. EP ranks are
  // tp apart (Megatron-Core rank order tp → ep → dp), so an EP group of tp·ep ≤ gpus_per_node
  // GPUs stays on NVLink; otherwise the off-node share crosses the network concurrently.
  // Shared experts run locally on every rank (no dispatch). The slowest rank receives
  // moe_load_imbalance × the mean (also on its expert GEMMs, below).
  if (arch.moe && l.ep > 1 && arch.hidden_size > 0) {
    const double k = static_cast<double>(std::max<std::int64_t>(arch.moe->experts_per_token, 1));
    const MoeSpec& moe = *arch.moe;
    // Tokens a GPU dispatches: its sequence-parallel shard, or, without SP, the tp/etp split
    // of the micro-batch among the expert-TP groups of the tp ranks.
    const double tokens = s * b / (l.sequence_parallel ? tp : tp / static_cast<double>(l.etp()));
    w.ep_tokens = tokens;
    // Expert grid rank order etp → ep → edp: EP ranks are etp apart.
    const int ep_per_node = std::clamp(c.gpus_per_node / std::max(l.etp(), 1), 1, l.ep);
    double t_intra = 0, t_inter = 0, off_node = 0;
    if (effective_dispatcher(r, c) == MoeDispatcher::alltoall) {
      // k copies per token, one per chosen expert; (ep−1)/ep leave the GPU.
      w.ep_bytes = tokens * h * k * elem * (l.ep - 1.0) / l.ep;
      off_node = l.ep > 1 ? static_cast<double>(l.ep - ep_per_node) / (l.ep - 1.0) : 0.0;
      t_intra = safe_div(w.ep_bytes * (1.0 - off_node), intra_for(std::min(l.ep, c.gpus_per_node)));
      t_inter = off_node > 0 ? safe_div(w.ep_bytes * off_node, per_gpu_net) : 0.0;
    } else {
      // DeepEP / HybridEP: a token crosses the network once per other node that holds one of its
      // experts, and NVLink once per other GPU of a node (its own or the node it was forwarded to)
      // that holds one: distinct groups under uniform routing (expected_distinct_expert_groups).
      const int ep_nodes = (l.ep + ep_per_node - 1) / ep_per_node;
      const std::int64_t experts = moe.num_routed_experts;
      const double gpus_hit = expected_distinct_expert_groups(experts, moe.experts_per_token, l.ep);
      const double nodes_hit = expected_distinct_expert_groups(experts, moe.experts_per_token, ep_nodes);
      // Per token: one network copy to each other node hit (ep_nodes − 1 of ep_nodes), and in
      // each node one NVLink copy to each GPU hit other than the one holding or receiving the
      // token (ep_per_node − 1 of ep_per_node): DeepSeek-V3 report §3.2.2 (IB then NVLink).
      const double inter_copies = nodes_hit * (ep_nodes - 1.0) / ep_nodes;
      const double nvlink_copies = gpus_hit * (ep_per_node - 1.0) / ep_per_node;
      w.ep_dedup_gpu_copies = gpus_hit;
      w.ep_dedup_node_copies = nodes_hit;
      const double intra_bytes = tokens * h * elem * nvlink_copies;
      const double inter_bytes = tokens * h * elem * inter_copies;
      w.ep_bytes = intra_bytes + inter_bytes;
      off_node = w.ep_bytes > 0 ? inter_bytes / w.ep_bytes : 0.0;
      t_intra = safe_div(intra_bytes, intra_for(std::min(l.ep, c.gpus_per_node)));
      t_inter = inter_bytes > 0 ? safe_div(inter_bytes, per_gpu_net) : 0.0;
    }
    w.ep_alltoall_each_seconds = std::max(t_intra, t_inter) * moe_imbalance(r, a);
    w.ep_off_node_fraction = off_node;
    w.ep_collectives_per_layer = 4 + (r.recompute == Recompute::full ? 2 : 0);
    w.moe_layers_per_stage = std::ceil(static_cast<double>(arch.moe->num_moe_layers) / pp);
    e.ep_alltoall_seconds = md * w.moe_layers_per_stage * w.ep_collectives_per_layer * w.ep_alltoall_each_seconds *
                            (1.0 - a.ep_comm_overlap_fraction);
  }
  // Pipeline stage balance (perf.hpp): every 1F1B slot lasts as long as the busiest rank. The
  // compute above is the mean over the pp ranks; split it into decoder layers (timed alike) and
  // the output layer + loss (16-bit matmul V·h, outside the FP8 and expert factors), which the last
  // rank holds on top of its layers (Megatron-Core account_for_loss_in_pipeline_split = false).
  // Pretraining a model with an MTP module (DeepSeek-V3 §2.2) adds, on the last rank, one decoder
  // layer, the 2h→h projection and a second pass through the shared output head.
  w.mean_stage_compute_seconds = e.compute_seconds;
  e.pp_stage_imbalance = 1;
  if (arch.num_layers > 0 && arch.hidden_size > 0) {
    const double L = static_cast<double>(arch.num_layers);
    const double mean = e.compute_seconds - w.moe_fixed_seconds;  // per GPU, averaged over ranks
    double head_mean = safe_div(w.head_flop_share * hw_per_gpu, w.peak.flops_per_s * w.eff_head);
    if (r.task == Task::qlora) head_mean *= a.qlora_dequant_overhead;
    head_mean = std::min(head_mean, mean);
    w.head_seconds = head_mean * pp;
    w.seconds_per_layer = (mean - head_mean) * pp / L;
    if (r.task == Task::pretrain && arch.mtp_layers > 0) {
      const double vocab = std::max(static_cast<double>(arch.vocab_size), 1.0);
      w.mtp_seconds = static_cast<double>(arch.mtp_layers) * (w.seconds_per_layer + w.head_seconds * (1.0 + 2.0 * h / vocab));
    }
    double busiest = -1;
    auto consider_stage = [&](int d) {
      const int n = stage_layers(r, arch.num_layers, d);
      const double t = n * w.seconds_per_layer + (d == l.pp - 1 ? w.head_seconds + w.mtp_seconds : 0.0);
      if (t > busiest) {
        busiest = t;
        e.pp_busiest_stage = d;
        w.busiest_stage_layers = n;
      }
    };
    if (r.pipeline_stage_layers.empty()) {
      // Megatron-Core's default split gives rank d no more layers than rank d − 1 (chunk c gets
      // L/(pp·v), the remainder one each to the first chunks), and seconds_per_layer ≥ 0: of the
      // ranks before the last, rank 0 is the first busiest, so only it and the last rank (which
      // adds the output layer and loss) can be — the same rank and time as trying every rank.
      consider_stage(0);
      if (l.pp > 1) consider_stage(l.pp - 1);
    } else {
      for (int d = 0; d < l.pp; ++d) consider_stage(d);
    }
    const double balanced = mean + w.mtp_seconds / pp;
    // One rank is its own mean: exactly 1, not 1 + rounding (trial54 #7 printed "× 1.000").
    if (l.pp == 1) busiest = balanced;
    e.pp_stage_imbalance = balanced > 0 && l.pp > 1 ? busiest / balanced : 1.0;
    w.mean_stage_compute_seconds = balanced + w.moe_fixed_seconds;
    e.compute_seconds = busiest + w.moe_fixed_seconds;
  }

  // TP communication overlapped with the GEMMs by userbuffers (perf.hpp tp_comm_overlap): per
  // layer and micro-batch, 6 chunked transfers (hidden behind (tp−1)/tp of their GEMM) and 4 bulk
  // ones (beside a whole GEMM), each an all-gather / reduce-scatter of s·b·h; full recompute
  // repeats the 4 forward ones. GEMM time: FLOPs / (16-bit peak × eff16 × FP8 speed-up).
  if (r.tp_comm_overlap && l.tp > 1 && e.tp_allreduce_seconds > 0) {
    const double hd = arch.head_dim > 0 ? static_cast<double>(arch.head_dim)
                                        : h / static_cast<double>(arch.num_attention_heads);
    const double q = static_cast<double>(arch.num_attention_heads) * hd;
    const double kv = static_cast<double>(arch.num_kv_heads > 0 ? arch.num_kv_heads : arch.num_attention_heads) * hd;
    const double inter = static_cast<double>(arch.intermediate_size);
    const double tokens = s * b;
    const double rate = w.peak.flops_per_s * eff16 * (w.fp8_flop_share > 0 ? w.fp8_speedup : 1.0);
    const double g_qkv = safe_div(2.0 * tokens * h * (q + 2.0 * kv) / tp, rate);
    const double g_proj = safe_div(2.0 * tokens * q * h / tp, rate);
    const double g_fc1 = safe_div(2.0 * tokens * h * inter * (arch.gated_mlp ? 2.0 : 1.0) / tp, rate);
    const double g_fc2 = safe_div(2.0 * tokens * inter * h / tp, rate);
    const double c_one = ring_allgather_seconds(w.tp_bytes, l.tp, w.tp_link_bytes_per_s);
    const double hidden_share = (tp - 1.0) / tp;
    auto chunked = [&](double g) { return std::max(0.0, c_one - hidden_share * g); };
    auto bulk = [&](double g) { return std::max(0.0, c_one - g); };
    const double forward = chunked(g_qkv) + chunked(g_proj) + chunked(g_fc1) + chunked(g_fc2);
    const double backward = chunked(g_proj) + chunked(g_fc2) + 2.0 * bulk(g_qkv) + 2.0 * bulk(g_fc1);
    w.tp_half_collective_seconds = c_one;
    w.tp_exposed_per_layer_seconds = forward * (r.recompute == Recompute::full ? 2.0 : 1.0) + backward;
    w.tp_unoverlapped_seconds = e.tp_allreduce_seconds;
    e.tp_allreduce_seconds = md * w.layers_per_stage * w.tp_exposed_per_layer_seconds;
  }

  // EP all-to-all overlapped with another micro-batch's compute: only the excess stays exposed.
  if (r.ep_overlap_with_compute && e.ep_alltoall_seconds > 0) {
    w.ep_alltoall_unoverlapped_seconds = e.ep_alltoall_seconds;
    e.ep_alltoall_seconds = std::max(0.0, e.ep_alltoall_seconds - e.compute_seconds);
  }

  // Pipeline point-to-point: activations forward, gradients backward, scatter/gather over TP
  // (Narayanan et al. 2021 §4.1): s·b·h·bytes / t per transfer.
  if (l.pp > 1) {
    const bool stages_cross_nodes = c.nodes > 1 && l.tp * l.dp >= c.gpus_per_node;
    const double bw = stages_cross_nodes ? per_gpu_net : intra_for(2);  // one send between two GPUs
    e.pp_p2p_seconds = md * 2.0 * v * safe_div(s * b * h * elem / tp, bw);
  }

  // Data parallel. Placement: TP ranks innermost, then EP, then DP, then PP (Megatron-Core order).
  // Dense (non-expert) parameters are replicated over the dp ranks; expert parameters are split
  // by etp·ep and replicated only over the expert-data-parallel group of edp = tp·dp/(etp·ep)
  // ranks (etp·ep apart; = dp/ep when etp = tp), so their gradients are reduced — and under
  // ZeRO-3 their shards gathered — in that group only. edp == 1: experts are never gathered nor
  // all-reduced.
  w.dp_per_node = l.tp >= c.gpus_per_node ? 1 : std::max(1, std::min(l.dp, c.gpus_per_node / l.tp));
  const int edp = l.edp();
  w.edp = edp;
  const int expert_group = l.etp() * l.ep;  // edp ranks are etp·ep apart
  w.edp_per_node = expert_group >= c.gpus_per_node ? 1 : std::max(1, std::min(edp, c.gpus_per_node / expert_group));
  const double total_params = static_cast<double>(arch.params.total());
  const double expert_params = static_cast<double>(arch.params.experts);
  const double dense_per_gpu = (total_params - expert_params) / (tp * pp);
  const double expert_per_gpu = expert_params / (static_cast<double>(l.etp()) * pp * l.ep);
  const double params_per_gpu = dense_per_gpu + expert_per_gpu;
  const bool lora_task = frozen_base(r.task);
  const double trainable_dense = lora_task ? fig.lora_adapter_params / (tp * pp) : dense_per_gpu;
  const double trainable_expert = lora_task ? 0.0 : expert_per_gpu;
  const double trainable_per_gpu = trainable_dense + trainable_expert;
  // Gradients are reduced in their buffer's dtype: fp32 under Megatron's default main_grad
  // (grad_reduce_fp32), else the training dtype.
  const double grad_elem = r.grad_reduce_fp32 ? 4.0 : elem;
  w.grad_bytes_per_gpu = trainable_per_gpu * grad_elem;
  w.expert_grad_bytes_per_gpu = trainable_expert * grad_elem;
  auto grad_allreduce = [&] {
    return hierarchical_allreduce_seconds(trainable_dense * grad_elem, l.dp, w.dp_per_node, c, a) +
           hierarchical_allreduce_seconds(trainable_expert * grad_elem, edp, w.edp_per_node, c, a);
  };
  if (l.dp > 1) {
    if (l.zero_stage < 3) {
      e.dp_allreduce_seconds = grad_allreduce();
      // Gradient accumulation reduces once, during the last micro-batch's backward.
      const double window = e.compute_seconds / md * w.backward_fraction;
      w.dp_window_seconds = window;
      w.exposed_dp = std::max(0.0, e.dp_allreduce_seconds - a.comm_overlap_fraction * window);
    } else {
      // ZeRO-3 / FSDP: gather fwd + gather bwd (+ reduce-scatter of gradients) per micro-batch.
      double weight_bytes = elem;
      if (r.task == Task::qlora) weight_bytes = weight_quant_bits(WeightQuant::nf4) / 8.0;
      w.param_bytes_per_gpu = params_per_gpu * weight_bytes;
      w.expert_param_bytes_per_gpu = expert_per_gpu * weight_bytes;
      const double ar = hierarchical_allreduce_seconds(dense_per_gpu * weight_bytes, l.dp, w.dp_per_node, c, a) +
                        hierarchical_allreduce_seconds(expert_per_gpu * weight_bytes, edp, w.edp_per_node, c, a);
      // all-reduce = 2 × all-gather volume: gathers fwd+bwd = 1 all-reduce; + reduce-scatter = 1.5.
      const double per_micro_batch = lora_task ? ar : 1.5 * ar;
      e.zero_allgather_seconds = md * per_micro_batch;
      const double window = e.compute_seconds / md;
      w.zero_window_seconds = window;
      w.zero_per_micro_batch_seconds = per_micro_batch;
      w.exposed_zero = md * std::max(0.0, per_micro_batch - a.comm_overlap_fraction * window);
      if (lora_task) {
        e.dp_allreduce_seconds = grad_allreduce();
        w.exposed_dp = e.dp_allreduce_seconds;  // tiny adapters: not worth overlapping
      }
    }
  }
  e.exposed_comm_seconds = w.exposed_dp + w.exposed_zero;

  // Optimizer update, memory-bound.
  if (!r.layout.offload_optimizer) {
    w.optimizer_bytes_per_param = optimizer_update_bytes(r.precision, r.optimizer, grad_elem);
    // ZeRO ≥ 1 shards the optimizer over the data-parallel ranks that hold the same parameters:
    // the dense ones over dp, the experts over their expert-data-parallel group (edp; Megatron's
    // distributed optimizer keeps a separate expert group), as the memory model counts them.
    w.updated_expert_params_per_gpu =
        l.zero_stage >= 1 ? trainable_expert / static_cast<double>(std::max(edp, 1)) : trainable_expert;
    w.updated_params_per_gpu =
        (l.zero_stage >= 1 ? trainable_dense / static_cast<double>(l.dp) : trainable_dense) + w.updated_expert_params_per_gpu;
    e.optimizer_seconds = safe_div(w.updated_params_per_gpu * w.optimizer_bytes_per_param,
                                   gpu.memory_bandwidth_bytes_per_s * a.optimizer_bw_efficiency);
  }

  // Pipeline bubble: (p−1)/(v·m) of the ideal (bubble-free) time (Narayanan et al. 2021 §2.2).
  if (l.pp > 1) {
    const double ideal = e.compute_seconds + e.tp_allreduce_seconds + e.ep_alltoall_seconds;
    e.pp_bubble_seconds = ideal * (pp - 1.0) / (v * md);
  }

  // Framework host time per layer per micro-batch; only the part above the GPU's busy time shows.
  {
    double per_layer = a.framework_overhead_seconds_per_layer;
    if (frozen_base(r.task)) per_layer += a.lora_overhead_seconds_per_layer;
    if (r.recompute == Recompute::full) per_layer *= a.recompute_overhead_factor;
    w.host_seconds = effective_cuda_graph(r, c) == CudaGraphImpl::full_iteration ? 0.0 : md * w.layers_per_stage * per_layer;
    const double gpu_busy = e.compute_seconds + e.tp_allreduce_seconds + e.ep_alltoall_seconds + e.pp_p2p_seconds +
                            e.pp_bubble_seconds + e.exposed_comm_seconds + e.optimizer_seconds;
    e.overhead_seconds = std::max(0.0, w.host_seconds - gpu_busy);
  }

  e.step_seconds = e.compute_seconds + e.tp_allreduce_seconds + e.ep_alltoall_seconds + e.pp_p2p_seconds +
                   e.pp_bubble_seconds + e.exposed_comm_seconds + e.optimizer_seconds + e.overhead_seconds;
  const double cluster_peak = e.step_seconds * static_cast<double>(w.gpus) * w.peak.flops_per_s;
  e.mfu = safe_div(e.model_flop_per_step, cluster_peak);
  e.hfu = safe_div(e.hardware_flop_per_step, cluster_peak);
  e.tokens_per_s = safe_div(w.tokens_per_step, e.step_seconds);
}

Work compute_work(const ModelArch& arch, const TrainingStepRequest& r, const ClusterSpec& c,
                  const PerfAssumptions& a, const TrainingStepModelFigures& fig) {
  Work w;
  compute_phase(w, arch, r, c, a, fig);
  finish_work(w, arch, r, c, a, fig);
  return w;
}

/// training_step_seconds_lower_bound from the compute phase of `request`.
double lower_bound_from(const Work& w, const ModelArch& arch, const TrainingStepRequest& request,
                        const PerfAssumptions& a) {
  const ParallelLayout& l = request.layout;
  // compute_seconds ends at the busiest rank's compute (≥ the mean, which compute_phase gives),
  // and every other term of step_seconds is ≥ 0; the bubble is (compute + TP + EP) × (p−1)/(v·m)
  // ≥ compute × (p−1)/(v·m). step_seconds = max(GPU busy time, host time) ≥ the host time.
  const double compute = w.e.compute_seconds;
  const double md = static_cast<double>(w.e.micro_batches_per_step);
  const double v = std::max(l.virtual_stages, 1);
  const double bubble = l.pp > 1 ? compute * (l.pp - 1.0) / (v * md) : 0.0;
  double per_layer = a.framework_overhead_seconds_per_layer;
  if (frozen_base(request.task)) per_layer += a.lora_overhead_seconds_per_layer;
  if (request.recompute == Recompute::full) per_layer *= a.recompute_overhead_factor;
  const double host = md * std::ceil(static_cast<double>(arch.num_layers) / static_cast<double>(l.pp)) * per_layer;
  return std::max(compute + bubble, host);
}

/// The two requests differ at most in the ZeRO stage.
bool same_but_zero_stage(const TrainingStepRequest& x, const TrainingStepRequest& y) {
  const ParallelLayout& a = x.layout;
  const ParallelLayout& b = y.layout;
  return a.tp == b.tp && a.pp == b.pp && a.dp == b.dp && a.ep == b.ep && a.expert_tp == b.expert_tp &&
         a.sequence_parallel == b.sequence_parallel && a.micro_batch == b.micro_batch &&
         a.in_flight_micro_batches == b.in_flight_micro_batches && a.virtual_stages == b.virtual_stages &&
         a.offload_optimizer == b.offload_optimizer && a.offload_params == b.offload_params &&
         x.precision == y.precision && x.seq_len == y.seq_len && x.global_batch_seqs == y.global_batch_seqs &&
         x.recompute == y.recompute && x.recompute_modules == y.recompute_modules && x.task == y.task &&
         x.lora_rank == y.lora_rank && x.optimizer == y.optimizer &&
         x.stack == y.stack && x.ep_overlap_with_compute == y.ep_overlap_with_compute &&
         x.tp_comm_overlap == y.tp_comm_overlap && x.grad_reduce_fp32 == y.grad_reduce_fp32 &&
         x.pipeline_stage_layers == y.pipeline_stage_layers && x.moe_load_imbalance == y.moe_load_imbalance &&
         x.moe_dispatcher == y.moe_dispatcher && x.cuda_graph == y.cuda_graph;
}

void check_figures(const TrainingStepRequest& request, const TrainingStepModelFigures& figures) {
  if (figures.seq_len != request.seq_len || figures.recompute != request.recompute || figures.task != request.task ||
      figures.recompute_modules != request.recompute_modules ||
      (frozen_base(request.task) && figures.lora_rank != request.lora_rank)) {
    throw_invalid("figures", "model figures computed for another sequence length, recompute, task or LoRA rank",
                  "training_step_model_figures(arch, request) of this request");
  }
}

std::string si(double v, const char* unit) {
  if (!std::isfinite(v)) return fmt::format("inf {}", unit);
  return fmt::format("{:.4g} {}", v, unit);
}

/// The node's GPU-to-GPU link by its vendor's name: NVLink, Infinity Fabric (AMD), ICI (Google TPU), else "GPU link";
/// PCIe without one.
std::string_view intra_link_name(const ClusterSpec& c) {
  if (!c.intra_node_nvlink) return "PCIe";
  if (c.gpu == nullptr || c.gpu->vendor == "NVIDIA") return "NVLink";
  if (c.gpu->vendor == "AMD") return "Infinity Fabric";
  if (c.gpu->vendor == "Google") return "ICI";
  return "GPU link";
}

/// "80% of the link: NVLink 450 GB/s": the share of the node's GPU link a collective among `group_gpus` runs at.
std::string link_share_text(const ClusterSpec& c, int group_gpus, const PerfAssumptions& a) {
  return fmt::format("{:.0f}% of the link: {} {}", 100.0 * collective_link_efficiency(c, group_gpus, a),
                     intra_link_name(c), si(c.intra_node_bytes_per_s, "B/s"));
}

/// "90% of the network: 50 GB/s per node ÷ 8 GPUs": the per-GPU share of the inter-node network.
std::string network_share_text(const ClusterSpec& c, const PerfAssumptions& a) {
  return fmt::format("{:.0f}% of the network: {} per node ÷ {} GPUs", 100.0 * a.network_efficiency,
                     si(c.inter_node_bytes_per_s, "B/s"), c.gpus_per_node);
}

/// "8 per node: 2(n−1)/n × bytes at 35 GB/s (56% of the link: PCIe 63 GB/s); across nodes: 2(n−1)/n × bytes/8 over
/// 4 nodes at 5 GB/s per GPU (...); the slower phase sets it": the two phases of hierarchical_allreduce_seconds for a group of `group` GPUs, `per_node` of
/// them in a node.
std::string allreduce_path_text(const ClusterSpec& c, int group, int per_node, const PerfAssumptions& a) {
  const int g = std::clamp(per_node, 1, std::max(group, 1));
  std::string out = g > 1 ? fmt::format("{} per node: 2(n−1)/n × bytes at {} ({})", g,
                                        si(c.intra_node_bytes_per_s * collective_link_efficiency(c, g, a), "B/s"),
                                        link_share_text(c, g, a))
                          : std::string("1 per node");
  if (group > g)
    out += fmt::format("; across nodes: 2(n−1)/n × bytes/{} over {} nodes at {} per GPU ({}); the slower phase sets it",
                       g, (group + g - 1) / g,
                       si(safe_div(c.inter_node_bytes_per_s, c.gpus_per_node) * a.network_efficiency, "B/s"),
                       network_share_text(c, a));
  return out;
}



}  // namespace

double pcie_x16_bytes_per_s(std::optional<int> pcie_gen) {
  if (!pcie_gen) return 31.5e9;
  switch (*pcie_gen) {
    case 3: return 15.75e9;
    case 4: return 31.5e9;
    case 5: return 63.0e9;
    case 6: return 121.0e9;
    default: return *pcie_gen < 3 ? 8.0e9 : 31.5e9;
  }
}

ClusterSpec make_cluster(const GpuSpec& gpu, int gpus_per_node, int nodes, double inter_node_bytes_per_s) {
  ClusterSpec c;
  c.gpu = &gpu;
  c.gpus_per_node = gpus_per_node;
  c.nodes = nodes;
  c.inter_node_bytes_per_s = inter_node_bytes_per_s;
  // The link domain from gpus.csv (nvlink_domain_gpus: bridges join 2 cards, HGX 8, NVL72 72).
  const bool nvlink = gpu.gpu_link_spans(gpus_per_node);
  c.intra_node_nvlink = nvlink;
  c.intra_node_bytes_per_s = nvlink ? gpu.gpu_link_bytes_per_s / 2.0 : pcie_x16_bytes_per_s(gpu.pcie_gen);
  return c;
}

double sustained_factor(const GpuSpec& gpu, const PerfAssumptions& a) noexcept {
  return gpu.name == std::string_view("NVIDIA GB300 (per GPU)") ? a.sustained_factor_gb300 : 1.0;
}

double kernel_efficiency(const ModelArch& arch, const TrainingStepRequest& request, const GpuSpec& gpu,
                         const PerfAssumptions& a) {
  double eff = base_efficiency(gpu, a) * sustained_factor(gpu, a);
  if (request.stack != TrainingStack::megatron) eff *= a.eager_efficiency_factor;
  if (arch.hidden_size > 0) eff /= 1.0 + a.hidden_half_width / static_cast<double>(arch.hidden_size);
  const double tokens = static_cast<double>(std::max(request.layout.micro_batch, 1)) *
                        static_cast<double>(std::max<std::int64_t>(request.seq_len, 1));
  eff /= 1.0 + a.tokens_half_width / tokens;
  return eff;
}

double recompute_modules_bytes_per_token(const ModelArch& arch, RecomputeModules modules) {
  if (modules == 0 || arch.hidden_size <= 0) return 0.0;
  const double h = static_cast<double>(arch.hidden_size);
  const double moe_layers = arch.moe ? static_cast<double>(arch.moe->num_moe_layers) : 0.0;
  double bytes = 0;
  if (has_module(modules, RecomputeModule::layernorm)) {
    // Read 2h, write 2h per recomputed norm: the pre-MLP norm of each MoE layer, the input norm of
    // each MLA layer (memory.hpp RecomputeModule::layernorm).
    const double norms = moe_layers + (arch.mla ? static_cast<double>(arch.num_layers) : 0.0);
    bytes += norms * 4.0 * h;
  }
  if (has_module(modules, RecomputeModule::moe_act) && arch.moe && arch.moe->expert_intermediate_size > 0) {
    // Per routed token: read the first expert GEMM's output (2·f_e gated, f_e plain; 2 B each) and
    // write the activation (f_e, 2 B).
    const double f_e = static_cast<double>(arch.moe->expert_intermediate_size);
    const double in = arch.gated_mlp ? 2.0 * f_e : f_e;
    bytes += moe_layers * static_cast<double>(arch.moe->experts_per_token) * 2.0 * (in + f_e);
  }
  return bytes;
}

double expected_distinct_expert_groups(std::int64_t num_experts, std::int64_t k, int groups) {
  if (k < 1 || groups < 1 || num_experts < 1) return 0.0;
  if (groups == 1) return 1.0;
  const std::int64_t per_group = num_experts / groups;
  // P(a group holds none of the k) = C(E − E/g, k) / C(E, k) = Π_{i<k} (E − E/g − i) / (E − i).
  double none = 1.0;
  for (std::int64_t i = 0; i < k && i < num_experts; ++i) {
    const double num = static_cast<double>(num_experts - per_group - i);
    if (num <= 0) { none = 0.0; break; }
    none *= num / static_cast<double>(num_experts - i);
  }
  return groups * (1.0 - none);
}

double ring_allreduce_seconds(double bytes, int n, double bytes_per_s) {
  if (n <= 1 || bytes <= 0) return 0;
  return safe_div(2.0 * (n - 1.0) / n * bytes, bytes_per_s);
}

double ring_allgather_seconds(double bytes, int n, double bytes_per_s) {
  if (n <= 1 || bytes <= 0) return 0;
  return safe_div((n - 1.0) / n * bytes, bytes_per_s);
}

double collective_link_efficiency(const ClusterSpec& cluster, int group_gpus, const PerfAssumptions& a) {
  if (cluster.intra_node_nvlink) return a.link_efficiency;
  return group_gpus <= 4 ? a.pcie_collective_efficiency_up_to_4_gpus : a.pcie_collective_efficiency_over_4_gpus;
}

double hierarchical_allreduce_seconds(double bytes, int group_size, int group_per_node, const ClusterSpec& cluster,
                                      const PerfAssumptions& a) {
  if (group_size <= 1 || bytes <= 0) return 0;
  const int g = std::clamp(group_per_node, 1, group_size);
  const int nodes = (group_size + g - 1) / g;
  const double intra =
      g > 1 ? ring_allreduce_seconds(bytes, g, cluster.intra_node_bytes_per_s * collective_link_efficiency(cluster, g, a)) : 0;
  double inter = 0;
  if (nodes > 1) {
    const double per_gpu = safe_div(cluster.inter_node_bytes_per_s, std::max(cluster.gpus_per_node, 1)) *
                           a.network_efficiency;
    inter = ring_allreduce_seconds(bytes / g, nodes, per_gpu);
  }
  return std::max(intra, inter);
}

double pipeline_bubble_fraction(int pp, std::int64_t micro_batches, int virtual_stages) {
  if (pp <= 1) return 0;
  const double v = std::max(virtual_stages, 1);
  const double m = static_cast<double>(std::max<std::int64_t>(micro_batches, 1));
  return (pp - 1.0) / (v * m + pp - 1.0);
}

TrainingStepModelFigures training_step_model_figures(const ModelArch& arch, const TrainingStepRequest& r) {
  TrainingStepModelFigures f;
  f.seq_len = r.seq_len;
  f.recompute = r.recompute;
  f.task = r.task;
  f.lora_rank = r.lora_rank;
  f.recompute_modules = r.recompute_modules;
  f.hardware_per_token = training_flops_per_token(arch, r.seq_len, r.recompute, r.task, r.recompute_modules);
  f.model_per_token = model_training_flops_per_token(arch, r.seq_len, r.task);
  f.forward_per_token = forward_flops_per_token(arch, r.seq_len);
  f.matmul_params_per_token = matmul_params_per_token(arch);
  if (frozen_base(r.task)) f.lora_adapter_params = lora_adapter_params(arch, r.lora_rank);
  if (arch.moe) f.active_routed_expert_params = active_routed_expert_params(arch);
  return f;
}

TrainingStepEstimate estimate_training_step(const ModelArch& arch, const TrainingStepRequest& request,
                                            const ClusterSpec& cluster, const PerfAssumptions& assumptions) {
  return compute_work(arch, request, cluster, assumptions, training_step_model_figures(arch, request)).e;
}

TrainingStepEstimate estimate_training_step(const ModelArch& arch, const TrainingStepRequest& request,
                                            const ClusterSpec& cluster, const PerfAssumptions& assumptions,
                                            const TrainingStepModelFigures& figures) {
  check_figures(request, figures);
  return compute_work(arch, request, cluster, assumptions, figures).e;
}

double training_step_seconds_lower_bound(const ModelArch& arch, const TrainingStepRequest& request,
                                         const ClusterSpec& cluster, const PerfAssumptions& a,
                                         const TrainingStepModelFigures& figures) {
  check_figures(request, figures);
  Work w;
  compute_phase(w, arch, request, cluster, a, figures);
  return lower_bound_from(w, arch, request, a);
}

struct TrainingStepStages::State {
  Work phase;
  TrainingStepRequest request;
  const ModelArch* arch = nullptr;
  const ClusterSpec* cluster = nullptr;
  const PerfAssumptions* assumptions = nullptr;
  const TrainingStepModelFigures* figures = nullptr;
};

TrainingStepStages::TrainingStepStages() : state_(std::make_unique<State>()) {}
TrainingStepStages::~TrainingStepStages() = default;
TrainingStepStages::TrainingStepStages(TrainingStepStages&&) noexcept = default;
TrainingStepStages& TrainingStepStages::operator=(TrainingStepStages&&) noexcept = default;

void TrainingStepStages::prepare(const ModelArch& arch, const TrainingStepRequest& request, const ClusterSpec& cluster,
                                 const PerfAssumptions& assumptions, const TrainingStepModelFigures& figures) {
  if (!state_) state_ = std::make_unique<State>();
  State& s = *state_;
  s.arch = nullptr;  // not prepared until the phase is computed (it may throw)
  check_figures(request, figures);
  std::destroy_at(&s.phase);  // back to its defaults in place (an assignment from Work{} copied 1 kB)
  std::construct_at(&s.phase);
  compute_phase(s.phase, arch, request, cluster, assumptions, figures);
  s.request = request;
  s.arch = &arch;
  s.cluster = &cluster;
  s.assumptions = &assumptions;
  s.figures = &figures;
}

double TrainingStepStages::lower_bound_seconds() const {
  if (!state_ || !state_->arch) throw_invalid("TrainingStepStages", "not prepared", "prepare() first");
  return lower_bound_from(state_->phase, *state_->arch, state_->request, *state_->assumptions);
}

TrainingStepEstimate TrainingStepStages::estimate(const TrainingStepRequest& request) const {
  if (!state_ || !state_->arch) throw_invalid("TrainingStepStages", "not prepared", "prepare() first");
  const State& s = *state_;
  if (!same_but_zero_stage(request, s.request))
    throw_invalid("TrainingStepStages", "a request that differs from the prepared one in more than the ZeRO stage",
                  "the prepared request, at any ZeRO stage");
  validate(request, *s.cluster);  // the ZeRO stage's range (the rest was validated by prepare)
  Work w = s.phase;
  finish_work(w, *s.arch, request, *s.cluster, *s.assumptions, *s.figures);
  return w.e;
}

std::vector<ExplainLine> explain_training_step(const ModelArch& arch, const TrainingStepRequest& r,
                                               const ClusterSpec& c, const PerfAssumptions& a) {
  const Work w = compute_work(arch, r, c, a, training_step_model_figures(arch, r));
  const TrainingStepEstimate& e = w.e;
  const ParallelLayout& l = r.layout;
  const MoeDispatcher disp = effective_dispatcher(r, c);
  std::vector<ExplainLine> out;
  const double md = static_cast<double>(e.micro_batches_per_step);
  out.push_back({"hardware_flop_per_step", e.hardware_flop_per_step,
                 fmt::format("({} matmul + {} attention) FLOP/token × {} tokens = {}",
                             si(w.hw_per_token.dense_matmul_flop, "FLOP"), si(w.hw_per_token.attention_flop, "FLOP"),
                             si(w.tokens_per_step, ""), si(e.hardware_flop_per_step, "FLOP")),
                 "6·N per token (Kaplan et al. 2020 Table 1) + attention; full recompute 8·N (Narayanan et al. "
                 "2021 Eq. 3); LoRA 4·N; gpuplan FLOP model"});
  // With the recompute_modules' HBM term and a busiest-rank factor, the sum is in brackets.
  const bool bracket = w.recompute_bytes_seconds > 0 && e.pp_stage_imbalance != 1.0;
  out.push_back({"compute_seconds", e.compute_seconds,
                 fmt::format("{}{} / ({} {} × {} ({}) × efficiency {:.3f}){}{}{}{} = {}", bracket ? "[" : "",
                             si(e.hardware_flop_per_step, "FLOP"),
                             w.gpus, w.gpus == 1 ? "GPU" : "GPUs", si(w.peak.flops_per_s, "FLOP/s"), dtype_name(w.peak.dtype), e.kernel_efficiency,
                             w.kv_replication_flop_per_gpu > 0
                                 ? fmt::format(" + {} per GPU of replicated K/V projections (TP {} > {} KV heads) / "
                                               "(peak × efficiency)",
                                               si(w.kv_replication_flop_per_gpu, "FLOP"), l.tp, arch.num_kv_heads)
                                 : std::string(),
                             r.task == Task::qlora ? fmt::format(" × QLoRA de-quantisation {:.2f}", a.qlora_dequant_overhead)
                                                   : std::string(),
                             w.recompute_bytes_seconds > 0
                                 ? fmt::format(" + recompute_modules {} element-wise {} B/token × {} tokens / {} GPUs / "
                                               "({} × {:.2f}) = {}",
                                               recompute_modules_name(effective_recompute_modules(r.recompute, r.recompute_modules)),
                                               w.recompute_bytes_per_token, w.tokens_per_step, w.gpus,
                                               si(c.gpu->memory_bandwidth_bytes_per_s, "B/s"), a.optimizer_bw_efficiency,
                                               si(w.recompute_bytes_seconds, "s")) +
                                       (bracket ? "]" : "")
                                 : std::string(),
                             e.pp_stage_imbalance != 1.0
                                 ? fmt::format(" × busiest pipeline rank {:.3f}", e.pp_stage_imbalance)
                                 : std::string(),
                             si(e.compute_seconds, "s")),
                 // trial54 #5/#6: the layers' efficiency is printed, the stack factor named for what it
                 // is, and the head's saving said to be the mean rank's (the busiest rank's is larger
                 // when it holds the head: the pipeline line shows it).
                 fmt::format("kernel efficiency = base(GPU generation){} × ({} {:.2f}) × 1/(1+{}/h) × "
                             "1/(1+{}/(b·s)){}{}{}; calibrated on Megatron-LM (Narayanan et al. 2021 Table 1) and "
                             "Megatron-Bridge tables; docs/accuracy.md",
                             sustained_factor(*c.gpu, a) != 1.0
                                 ? fmt::format(" × {} sustained {:.2f}", c.gpu->name, sustained_factor(*c.gpu, a))
                                 : std::string(),
                             r.stack == TrainingStack::megatron ? "fused kernels" : "eager stack",
                             r.stack == TrainingStack::megatron ? 1.0 : a.eager_efficiency_factor, a.hidden_half_width,
                             a.tokens_half_width,
                             w.head_saved_seconds > 0
                                 ? fmt::format(" = {:.3f} for the layers; the LM head ({:.1f}% of the FLOPs: V·h GEMMs, "
                                               "fused cross-entropy) at {:.3f} without the width factor, {} less compute "
                                               "per GPU on the mean rank; the efficiency above is the FLOP-weighted one",
                                               w.eff16, 100 * w.head_flop_share, w.eff_head,
                                               si(w.head_saved_seconds, "s"))
                                 : std::string(),
                             w.fp8_flop_share > 0
                                 ? fmt::format("; FP8 on {:.0f}% of the FLOPs at {:.2f}× the 16-bit speed",
                                               100 * w.fp8_flop_share, w.fp8_speedup)
                                 : std::string(),
                             w.expert_flop_share > 0
                                 ? fmt::format("; routed experts ({:.0f}% of the FLOPs) × {:.2f} slower + {} fixed "
                                               "dispatch time (dispatcher {}: 1 + {:g}/f_e, {:g} ms per MoE layer "
                                               "per micro-batch{})",
                                               100 * w.expert_flop_share, w.expert_slowdown,
                                               si(w.moe_fixed_seconds, "s"), moe_dispatcher_name(disp),
                                               disp == MoeDispatcher::hybridep ? a.hybridep_expert_half_width
                                                                                           : a.expert_half_width,
                                               1e3 * moe_layer_overhead_seconds(r, c, a),
                                               cuda_graph_phrase(r, c))
                                 : std::string())});
  if (l.pp > 1 || w.mtp_seconds > 0) {
    out.push_back({"pp_stage_imbalance", e.pp_stage_imbalance,
                   fmt::format("busiest pipeline rank {} of {}: {} layers × {} + {}{} = {} vs the mean rank {} → × {:.3f}",
                               e.pp_busiest_stage, l.pp, w.busiest_stage_layers, si(w.seconds_per_layer, "s"),
                               e.pp_busiest_stage == l.pp - 1 ? fmt::format("output layer + loss {}", si(w.head_seconds, "s"))
                                                              : std::string("no output layer"),
                               e.pp_busiest_stage == l.pp - 1 && w.mtp_seconds > 0
                                   ? fmt::format(" + MTP {}", si(w.mtp_seconds, "s"))
                                   : std::string(),
                               si(e.compute_seconds - w.moe_fixed_seconds, "s"),
                               si(w.mean_stage_compute_seconds - w.moe_fixed_seconds, "s"), e.pp_stage_imbalance),
                   "1F1B slots last as long as the slowest stage (Narayanan et al. 2021 §2.2); Megatron-Core puts the "
                   "output layer and loss on the last stage (account_for_loss_in_pipeline_split = false) and "
                   "Megatron-Bridge the DeepSeek-V3 MTP module too (DeepSeek-V3 report §2.2)"});
  }
  if (r.tp_comm_overlap && w.tp_unoverlapped_seconds > 0)
    out.push_back({"tp_allreduce_seconds", e.tp_allreduce_seconds,
                   fmt::format("userbuffers overlap: {} micro-batches × {} layers × {} exposed per layer (each "
                               "all-gather / reduce-scatter {}, hidden behind (tp−1)/tp of its GEMM, or all of it "
                               "beside a bulk one) = {} (unoverlapped all-reduces {})",
                               md, w.layers_per_stage, si(w.tp_exposed_per_layer_seconds, "s"),
                               si(w.tp_half_collective_seconds, "s"), si(e.tp_allreduce_seconds, "s"),
                               si(w.tp_unoverlapped_seconds, "s")),
                   "Megatron-Core tp_comm_overlap with Transformer Engine userbuffers; methods per GEMM from "
                   "Megatron-Bridge userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192 (training/comm_overlap.py)"});
  else
  out.push_back({"tp_allreduce_seconds", e.tp_allreduce_seconds,
                 l.tp > 1 ? fmt::format("{} micro-batches × {:.4g} all-reduces ({} layers × {:.4g}{}) × 2({}−1)/{} × {} / {} ({}) = {}", md,
                                        w.tp_collectives, w.layers_per_stage, w.tp_collectives_per_layer,
                                        w.tp_collectives < w.layers_per_stage * w.tp_collectives_per_layer - 1e-9
                                            ? fmt::format("; less the expert half of {:.4g} MoE layers (etp {} < tp)",
                                                          (w.layers_per_stage * w.tp_collectives_per_layer - w.tp_collectives) /
                                                              (2.0 + (r.recompute == Recompute::full ? 1.0 : 0.0)),
                                                          l.etp())
                                            : std::string(),
                                        l.tp, l.tp, si(w.tp_bytes, "B"),
                                        si(w.tp_link_bytes_per_s, "B/s"),
                                        l.tp <= c.gpus_per_node ? link_share_text(c, l.tp, a) : network_share_text(c, a),
                                        si(e.tp_allreduce_seconds, "s"))
                          : std::string("tp = 1: no tensor-parallel communication"),
                 c.intra_node_nvlink || l.tp <= 1 || l.tp > c.gpus_per_node
                     ? "Megatron-LM TP: 2 all-reduces forward + 2 backward per layer (Shoeybi et al. 2019 §3); ring "
                       "2(n−1)/n (Patarasuk & Yuan 2009)"
                     : "Megatron-LM TP: 2 all-reduces forward + 2 backward per layer (Shoeybi et al. 2019 §3); ring "
                       "2(n−1)/n (Patarasuk & Yuan 2009); PCIe collectives: NCCL bus bandwidth of 4 / 8 PCIe GPUs "
                       "(NVIDIA/nccl issue #1639)"});
  out.push_back({"ep_alltoall_seconds", e.ep_alltoall_seconds,
                 arch.moe && l.ep > 1
                     ? fmt::format("{} micro-batches × {} MoE layers × {} all-to-alls × ({} sent per GPU = {}; {:.0f}% "
                                   "off-node{}; each all-to-all {}: the on-node share over {} ({}){}) × load imbalance "
                                   "{:.2f}{}{} = {}",
                                   md, w.moe_layers_per_stage, w.ep_collectives_per_layer, si(w.ep_bytes, "B"),
                                   disp == MoeDispatcher::alltoall
                                       ? fmt::format("tokens {} × h {} × top-{} × {} B × (ep {}−1)/ep", w.ep_tokens,
                                                     arch.hidden_size, arch.moe->experts_per_token,
                                                     comm_element_bytes(r.precision), l.ep)
                                       : fmt::format("{} dispatcher: tokens {} × h {} × {} B × (network copies {:.2f} + "
                                                     "NVLink copies {:.2f}): a token's top-{} of {} experts sit on {:.2f} "
                                                     "of ep {} GPUs and {:.2f} nodes on average",
                                                     moe_dispatcher_name(disp), w.ep_tokens, arch.hidden_size,
                                                     comm_element_bytes(r.precision),
                                                     w.ep_bytes > 0 ? w.ep_off_node_fraction * w.ep_bytes /
                                                                          (static_cast<double>(arch.hidden_size) *
                                                                           comm_element_bytes(r.precision) * w.ep_tokens)
                                                                    : 0.0,
                                                     w.ep_bytes > 0 ? (1.0 - w.ep_off_node_fraction) * w.ep_bytes /
                                                                          (static_cast<double>(arch.hidden_size) *
                                                                           comm_element_bytes(r.precision) * w.ep_tokens)
                                                                    : 0.0,
                                                     arch.moe->experts_per_token, arch.moe->num_routed_experts,
                                                     w.ep_dedup_gpu_copies, l.ep, w.ep_dedup_node_copies),
                                   100.0 * w.ep_off_node_fraction,
                                   disp != r.moe_dispatcher
                                       ? fmt::format("; {} asked, alltoall timed: {}", moe_dispatcher_name(r.moe_dispatcher),
                                                     l.ep <= 1 ? "no EP" : "DeepEP/HybridEP run on NVIDIA GPUs only")
                                       : std::string(),
                                   si(w.ep_alltoall_each_seconds / std::max(moe_imbalance(r, a), 1e-12), "s"),
                                   si(c.intra_node_bytes_per_s * collective_link_efficiency(c, std::min(l.ep, c.gpus_per_node), a), "B/s"),
                                   link_share_text(c, std::min(l.ep, c.gpus_per_node), a),
                                   w.ep_off_node_fraction > 0
                                       ? fmt::format(" and the off-node share over {} per GPU ({}) run together, the "
                                                     "slower sets it",
                                                     si(c.gpus_per_node > 0 ? c.inter_node_bytes_per_s / c.gpus_per_node *
                                                                                  a.network_efficiency
                                                                            : 0.0,
                                                        "B/s"),
                                                     network_share_text(c, a))
                                       : std::string(),
                                   moe_imbalance(r, a),
                                   a.ep_comm_overlap_fraction > 0
                                       ? fmt::format(" × (1 − overlap {:.2f})", a.ep_comm_overlap_fraction)
                                       : std::string(),
                                   r.ep_overlap_with_compute
                                       ? fmt::format(" = {}, overlapped with compute {} → exposed",
                                                     si(w.ep_alltoall_unoverlapped_seconds, "s"),
                                                     si(e.compute_seconds, "s"))
                                       : std::string(),
                                   si(e.ep_alltoall_seconds, "s"))
                     : std::string("no expert parallelism"),
                 disp == MoeDispatcher::alltoall
                     ? fmt::format("GShard dispatch/combine all-to-all (Lepikhin et al. 2020 arXiv:2006.16668 §2.2), fwd + "
                                   "bwd; intra-node over {}, off-node share over the network; experts' grads reduced over "
                                   "dp/ep only{}",
                                   intra_link_name(c),
                                   c.intra_node_nvlink ? ""
                                                       : "; PCIe collectives: NCCL bus bandwidth of 4 / 8 PCIe GPUs "
                                                         "(NVIDIA/nccl issue #1639)")
                     : "DeepEP/HybridEP deduplicated dispatch/combine, fwd + bwd: one network copy per other node, "
                       "forwarded over NVLink (DeepSeek-V3 report arXiv:2412.19437 §3.2.2); uniform routing: "
                       "P(group holds none of k) = C(E − E/g, k)/C(E, k); experts' grads reduced over dp/ep only"});
  out.push_back({"pp_p2p_seconds", e.pp_p2p_seconds,
                 l.pp > 1 ? fmt::format("{} micro-batches × 2 × {} chunks × s·b·h·bytes/tp = {}", md,
                                        std::max(l.virtual_stages, 1), si(e.pp_p2p_seconds, "s"))
                          : std::string("pp = 1: no pipeline transfers"),
                 "Narayanan et al. 2021 §4.1 (scatter/gather over TP ranks)"});
  out.push_back({"pp_bubble_seconds", e.pp_bubble_seconds,
                 l.pp > 1 ? fmt::format("(compute + TP + EP) × (p−1)/(v·m) = ({}−1)/({}·{}) → bubble fraction {:.3f} = {}",
                                        l.pp, std::max(l.virtual_stages, 1), md,
                                        pipeline_bubble_fraction(l.pp, e.micro_batches_per_step, l.virtual_stages),
                                        si(e.pp_bubble_seconds, "s"))
                          : std::string("pp = 1: no pipeline bubble"),
                 "Narayanan et al. 2021 §2.2.1 (1F1B) and §2.2.2 (interleaved)"});
  // Under ZeRO-3 the gradients are reduce-scattered inside the gather term (full training); LoRA's adapters are
  // all-reduced as below.
  const bool grads_in_gather = l.zero_stage == 3 && l.dp > 1 && !frozen_base(r.task);
  out.push_back({"dp_allreduce_seconds", e.dp_allreduce_seconds,
                 grads_in_gather ? std::string("ZeRO-3: the gradients are reduce-scattered within the ZeRO-3 gather term")
                 : l.dp > 1 ? fmt::format("ring all-reduce of {} gradients per GPU over dp {} ({}){} = {}",
                                        si(w.grad_bytes_per_gpu - w.expert_grad_bytes_per_gpu, "B"), l.dp,
                                        allreduce_path_text(c, l.dp, w.dp_per_node, a),
                                        w.expert_grad_bytes_per_gpu > 0
                                            ? (w.edp > 1 ? fmt::format(" + {} expert gradients over edp {} ({})",
                                                                       si(w.expert_grad_bytes_per_gpu, "B"), w.edp,
                                                                       allreduce_path_text(c, w.edp, w.edp_per_node, a))
                                                         : fmt::format(" (expert gradients {}: edp 1, not reduced)",
                                                                       si(w.expert_grad_bytes_per_gpu, "B")))
                                            : std::string(),
                                        si(e.dp_allreduce_seconds, "s"))
                          : std::string("dp = 1: no gradient all-reduce"),
                 c.intra_node_nvlink
                     ? "ring 2(n−1)/n · bytes (Patarasuk & Yuan 2009; NCCL); hierarchical, slower phase dominates"
                     : "ring 2(n−1)/n · bytes (Patarasuk & Yuan 2009; NCCL); hierarchical, slower phase dominates; "
                       "PCIe collectives: NCCL bus bandwidth of 4 / 8 PCIe GPUs (NVIDIA/nccl issue #1639)"});
  out.push_back({"zero_allgather_seconds", e.zero_allgather_seconds,
                 l.zero_stage == 3 && l.dp > 1
                     ? fmt::format("{} micro-batches × {} × (all-reduce of {} dense parameters per GPU over dp {} ({}){}) "
                                   "= {}",
                                   md, frozen_base(r.task) ? "1 (gathers forward + backward, frozen base)"
                                                           : "1.5 (gathers forward + backward + gradient reduce-scatter)",
                                   si(w.param_bytes_per_gpu - w.expert_param_bytes_per_gpu, "B"), l.dp,
                                   allreduce_path_text(c, l.dp, w.dp_per_node, a),
                                   w.expert_param_bytes_per_gpu > 0 && w.edp > 1
                                       ? fmt::format(" + all-reduce of {} expert parameters over edp {} ({})",
                                                     si(w.expert_param_bytes_per_gpu, "B"), w.edp,
                                                     allreduce_path_text(c, w.edp, w.edp_per_node, a))
                                       : std::string(),
                                   si(e.zero_allgather_seconds, "s"))
                     : l.zero_stage == 3 ? std::string("ZeRO-3 with dp = 1: one shard holds everything, nothing gathered")
                                         : std::string("ZeRO stage < 3: parameters not gathered"),
                 "ZeRO-3 = 1.5 × DP volume (Rajbhandari et al. 2020 §7.2.2)"});
  // The arithmetic itself (a trial read "overlapping 90%" as "10% of it left" and missed the
  // ZeRO share): communication is hidden up to comm_overlap_fraction × the compute it overlaps;
  // only the excess shows. exposed = DP part + ZeRO part.
  const std::string dp_part =
      e.dp_allreduce_seconds <= 0 ? std::string("DP: 0 s")
      : w.dp_window_seconds > 0
          ? fmt::format("DP: max(0, {} − {:.2f} × {} backward of the last micro-batch) = {}", si(e.dp_allreduce_seconds, "s"),
                        a.comm_overlap_fraction, si(w.dp_window_seconds, "s"), si(w.exposed_dp, "s"))
          : fmt::format("DP: {} (LoRA adapters' gradients, after the last backward: not overlapped) = {}",
                        si(e.dp_allreduce_seconds, "s"), si(w.exposed_dp, "s"));
  const std::string zero_part =
      e.zero_allgather_seconds <= 0
          ? std::string("ZeRO-3: 0 s")
          : fmt::format("ZeRO-3: {} micro-batches × max(0, {} − {:.2f} × {} compute per micro-batch) = {}", md,
                        si(w.zero_per_micro_batch_seconds, "s"), a.comm_overlap_fraction, si(w.zero_window_seconds, "s"),
                        si(w.exposed_zero, "s"));
  out.push_back({"exposed_comm_seconds", e.exposed_comm_seconds,
                 fmt::format("{}; {}; exposed = {} + {} = {} (communication hides behind up to {:.0f}% of the compute "
                             "it overlaps; only the excess adds to the step)",
                             dp_part, zero_part, si(w.exposed_dp, "s"), si(w.exposed_zero, "s"),
                             si(e.exposed_comm_seconds, "s"), 100.0 * a.comm_overlap_fraction),
                 "share of communication hidden behind compute (PyTorch DDP gradient buckets, Li et al. 2020 arXiv:2006.15704; DeepSpeed "
                 "overlap_comm)"});
  out.push_back({"optimizer_seconds", e.optimizer_seconds,
                 l.offload_optimizer
                     ? std::string("optimizer offloaded to the CPU: its time is not modelled (0 on the GPU)")
                     : fmt::format("{} params{} × {} B read+written / ({} × {:.2f}) = {}", si(w.updated_params_per_gpu, ""),
                                   w.updated_expert_params_per_gpu > 0
                                       ? fmt::format(" (dense {}{} + experts {}{})",
                                                     si(w.updated_params_per_gpu - w.updated_expert_params_per_gpu, ""),
                                                     l.zero_stage >= 1 ? fmt::format(" over dp {}", l.dp) : "",
                                                     si(w.updated_expert_params_per_gpu, ""),
                                                     l.zero_stage >= 1 ? fmt::format(" over edp {}", w.edp) : "")
                                       : "",
                                   w.optimizer_bytes_per_param, si(c.gpu->memory_bandwidth_bytes_per_s, "B/s"),
                                   a.optimizer_bw_efficiency, si(e.optimizer_seconds, "s")),
                 "element-wise update, memory-bound (AdamW: Loshchilov & Hutter 2019; states per ZeRO §3.1)"});
  out.push_back({"overhead_seconds", e.overhead_seconds,
                 effective_cuda_graph(r, c) == CudaGraphImpl::full_iteration
                     ? std::string("full-iteration CUDA graph: the host launches one graph per step, no per-layer host "
                                   "time (and no MoE dispatch sync)")
                     : fmt::format("max(0, host {} micro-batches × {} layers × ({} s{}){} − GPU busy) = {}", md,
                             w.layers_per_stage, a.framework_overhead_seconds_per_layer,
                             frozen_base(r.task) ? fmt::format(" + {} s LoRA", a.lora_overhead_seconds_per_layer)
                                                 : std::string(),
                             r.recompute == Recompute::full ? fmt::format(" × {:.2f} recompute", a.recompute_overhead_factor)
                                                            : std::string(),
                             si(e.overhead_seconds, "s")),
                 "eager PyTorch host time, hidden while the GPU is busy; calibrated on our H200 runs "
                 "(docs/accuracy.md)"});
  out.push_back({"step_seconds", e.step_seconds,
                 fmt::format("compute {} + TP {} + EP {} + PP p2p {} + bubble {} + exposed comm {} + optimizer {} + "
                             "overhead {} = {} (MFU {:.1f}%)",
                             si(e.compute_seconds, "s"), si(e.tp_allreduce_seconds, "s"),
                             si(e.ep_alltoall_seconds, "s"), si(e.pp_p2p_seconds, "s"), si(e.pp_bubble_seconds, "s"),
                             si(e.exposed_comm_seconds, "s"), si(e.optimizer_seconds, "s"), si(e.overhead_seconds, "s"),
                             si(e.step_seconds, "s"), 100.0 * e.mfu),
                 "sum of the terms above; MFU as in PaLM (Chowdhery et al. 2022 App. B)"});
  return out;
}

}  // namespace gpuplan
