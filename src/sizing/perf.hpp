#pragma once
/// Sizing layer: training step time = compute + exposed communication + pipeline bubble,
/// for a transformer decoder on a cluster of identical GPUs under a parallel layout.
///
/// Units: seconds, bytes, bytes/s, FLOP, FLOP/s. Pure functions; estimate_training_step does
/// not allocate (called for thousands of layouts per plan); explanations are built separately
/// by explain_training_step. docs/performance-model.md walks through the model.
///
/// Model (each term is a field of TrainingStepEstimate; step_seconds is their sum):
///   compute_seconds  = hardware FLOP per GPU per step / (dense peak FLOP/s for the precision
///                      × kernel efficiency). Hardware FLOP include recomputation
///                      (flops.hpp). Kernel efficiency = base(GPU class, precision)
///                      × matmul-size factor (hidden/TP, micro-batch × seq); see PerfAssumptions.
///                      With pipeline parallelism the step waits for the BUSIEST pipeline rank
///                      (Narayanan et al. 2021 §2.2: every 1F1B slot lasts as long as the slowest
///                      stage): its decoder layers (request.pipeline_stage_layers, or Megatron-Core's
///                      default uniform split of the pp·v chunks) plus, on the last rank, the output
///                      layer and the loss (Megatron-Core account_for_loss_in_pipeline_split false,
///                      its default), and in pretraining DeepSeek-V3's MTP module (one decoder layer,
///                      the 2h→h projection and a second pass through the shared output head;
///                      DeepSeek-V3 report §2.2, Megatron-Bridge puts it on the last stage). Layers
///                      are timed alike (their mean: layers' compute / L); the head runs at 16 bits.
///                      compute = max over ranks; pp_stage_imbalance = that / the mean rank.
///   tp_allreduce_seconds: Megatron TP (Shoeybi et al. 2019, arXiv:1909.08053 §3): per layer
///                      2 all-reduces in forward + 2 in backward (+2 when the forward is
///                      recomputed), each of s·b·h·2 bytes (16-bit activations), ring cost
///                      2(t−1)/t · bytes / link bandwidth; on the critical path (not overlapped).
///                      Over NVLink uses the GPU's link (one direction); without NVLink the PCIe
///                      bandwidth of the GPU's pcie_gen, so TP over PCIe is heavily penalised.
///   dp_allreduce_seconds: gradient all-reduce per step, ring 2(n−1)/n · gradient bytes per GPU
///                      (Patarasuk & Yuan 2009, J. Parallel Distrib. Comput. 69(2); NCCL docs
///                      "Collective operations"), hierarchical: intra-node over NVLink/PCIe and
///                      inter-node over the node's network share; the slower phase dominates
///                      (NCCL rings pipeline chunks, so time = max of the two phases).
///                      ZeRO-1/2: reduce-scatter + all-gather = same volume as all-reduce.
///   zero_allgather_seconds: ZeRO-3 / FSDP: parameter all-gather in forward and in backward +
///                      gradient reduce-scatter = 3 × (n−1)/n × param bytes = 1.5 × DP all-reduce
///                      volume (Rajbhandari et al. 2020, arXiv:1910.02054 §7.2.2), per micro-batch.
///   exposed_comm_seconds = max(0, dp_allreduce − overlap × backward compute)
///                      + max(0, zero_allgather − overlap × compute)   (overlap = comm_overlap_fraction)
///   pp_bubble_seconds = (p−1)/(v·m) × (compute + tp comm), m = micro-batches per step per
///                      pipeline, v = layout.virtual_stages (Narayanan et al. 2021, arXiv:2104.04473
///                      §2.2.1: bubble fraction (p−1)/m of ideal time; (p−1)/(m+p−1) of the step).
///   ep_alltoall_seconds: MoE expert parallel: 4 all-to-alls (dispatch+combine, fwd+bwd; +2 with
///                      full recompute) per MoE layer, each sending s·b·h·k·bytes·(ep−1)/ep per GPU
///                      (k = routed top-k; shared experts are local) over NVLink when the tp·ep group
///                      fits a node, else the off-node share over the network (max of the two),
///                      × moe_load_imbalance (Lepikhin et al. 2020, GShard §2.2). The same
///                      imbalance stretches the routed-expert share of compute_seconds.
///   EP and DP: dense parameters are all-reduced (ZeRO-3: gathered) over dp, expert parameters
///                      over the expert-data-parallel group of edp = tp·dp/(etp·ep) ranks only
///                      (never when edp = 1). Expert tensor parallelism etp (layout.expert_tp,
///                      default tp): experts split etp ways; with etp < tp the EP group spans the
///                      TP ranks (etp apart), each TP rank dispatches its own sequence-parallel
///                      tokens, the MoE layers keep only the attention's TP collectives, and the
///                      grouped GEMMs are f_e/etp wide (Megatron-Core expert_tensor_parallel_size).
///   pp_p2p_seconds:    2·v transfers per micro-batch of s·b·h·bytes/t (Narayanan et al. 2021 §4.1).
///   optimizer_seconds: bytes read+written per updated parameter (AdamW mixed precision: fp32
///                      master r/w 8 + m,v r/w 16 + grad 2 + 16-bit weight write 2 = 28 B) × params
///                      updated on the GPU (÷ dp with ZeRO ≥ 1) / (HBM bandwidth × efficiency).
///   overhead_seconds:  max(0, host time − GPU busy time), host time = micro-batches × layers per
///                      stage × (framework + LoRA) host seconds per layer (× recompute factor).
///   step_seconds = compute + tp_allreduce + ep_alltoall + pp_p2p + pp_bubble + exposed_comm
///                  + optimizer + overhead.
/// Not modelled: CPU offload (ZeRO-Offload) transfers and CPU-Adam time (offloaded updates count
/// 0 GPU time), stragglers, data loading, failures and restarts.
///   mfu = model FLOP per step (no recompute) / (step_seconds × GPUs × dense peak).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "model/model_arch.hpp"
#include "sizing/flops.hpp"
#include "sizing/memory.hpp"

namespace gpuplan {

/// PCIe x16 bandwidth, one direction, bytes/s (PCI-SIG: Gen3 ~15.75 GB/s, Gen4 ~31.5 GB/s,
/// Gen5 ~63 GB/s after 128b/130b encoding). nullopt / unknown gen -> Gen4 (the common case).
double pcie_x16_bytes_per_s(std::optional<int> pcie_gen);

/// The machines a job runs on: `nodes` × `gpus_per_node` identical GPUs.
struct ClusterSpec {
  const GpuSpec* gpu = nullptr;  ///< required; not owned
  int gpus_per_node = 8;         ///< >= 1
  int nodes = 1;                 ///< >= 1
  /// GPU-to-GPU bandwidth inside a node, per GPU, ONE direction, bytes/s
  /// (H100 SXM NVLink 4: 900 GB/s bidirectional -> 450e9; PCIe Gen4 x16 -> 31.5e9).
  double intra_node_bytes_per_s = 0;
  /// Network bandwidth per NODE, one direction, bytes/s (DGX A100: 8 × 200 Gb/s HDR = 200e9;
  /// 8 × 400 Gb/s NDR = 400e9; typical cloud Ethernet 100–400 Gb/s = 12.5e9–50e9).
  /// Irrelevant when nodes == 1. 0 with a layout whose TP/DP/PP groups cross nodes gives an
  /// infinite communication time (no known network: the planner should not offer such a plan).
  double inter_node_bytes_per_s = 0;
  bool intra_node_nvlink = true;  ///< GPUs of a node share an NVLink/NVSwitch (or xGMI) domain

  int total_gpus() const { return gpus_per_node * nodes; }
};

/// A ClusterSpec from the GPU's datasheet: intra-node = NVLink one direction
/// (gpu_link_bytes_per_s / 2) when the GPU has a link and gpus_per_node <= 8 (NVLink bridges of
/// 2-GPU PCIe cards only when gpus_per_node <= 2), else PCIe (pcie_x16_bytes_per_s).
ClusterSpec make_cluster(const GpuSpec& gpu, int gpus_per_node, int nodes, double inter_node_bytes_per_s);

/// Tunable constants of the performance model, each with its documented default and source.
struct PerfAssumptions {
  /// Kernel efficiency (fraction of dense peak reached over a whole forward/backward, incl.
  /// the memory-bound elementwise ops) in the limit of a very wide model, by GPU class.
  /// Calibrated on Megatron-LM A100 runs (Narayanan et al. 2021 Tables 1-2; Korthikanti et al.
  /// 2022 Table 5) — see docs/performance-model.md for the per-case errors.
  double base_efficiency_ampere = 0.73;
  /// Hopper (H100/H200/H800/GH200): BF16 wide-model limit. CALIBRATED (docs/accuracy.md) on
  /// the Megatron-Bridge DGX-H100 performance tables (tests/data/published-throughput.jsonl).
  double base_efficiency_hopper = 0.62;
  /// Data-centre Blackwell (B200/GB200/B300/GB300): BF16 wide-model limit, same calibration on
  /// the DGX-B200 rows. Re-fitted 2026-12-06 with the HybridEP pair below when the LM head stopped
  /// taking the hidden-width factor (least squares of the log error over the 16 in-sample rows,
  /// grid 0.53…0.57 × 200…600 × 1.5…3.5 ms: 0.60 → 0.53; docs/accuracy.md history).
  double base_efficiency_blackwell = 0.53;
  /// Consumer/workstation, AMD and other GPUs (no calibration data here: conservative).
  double base_efficiency_other = 0.50;
  /// GB300 (Grace Blackwell Ultra, NVL72): its sustained throughput relative to the Blackwell
  /// base, multiplying the kernel efficiency of its training steps (sustained_factor()). GB300 and
  /// GB200 have the same datasheet dense peaks (2.5 PFLOP/s BF16, 5 FP8 per GPU, data/gpus.csv)
  /// but GB300 runs about 1.2× GB200 at the same layout in the Megatron-Bridge tables (25.11
  /// Llama 3 8B FP8 37,556 vs 31,508; 26.06 Llama 3 70B LoRA 7,481 vs 6,206 tokens/s/GPU); its
  /// module power is 1,400 W against 1,200 W. CALIBRATED 2026-12-07: least squares of the log error
  /// over the four 25.11 DGX-GB300 rows (the first table of that system, as 25.11 was for DGX;
  /// marked in_sample in tests/data/published-throughput.jsonl), grid 1.00…1.20 by 0.01: 1.16;
  /// re-fitted jointly with moe_layer_overhead_seconds_te_graphs the same day (two of those four
  /// rows ran Transformer Engine's partial graphs): 1.16 again. The same fit on GB200's 25.11 rows (1.02)
  /// and on B300's in-sample rows (1.03) stays within 3% of 1, and those products keep the base
  /// alone (docs/accuracy.md).
  double sustained_factor_gb300 = 1.16;
  /// Eager PyTorch stacks (HF Transformers, FSDP without compile, DeepSpeed, Unsloth) relative to
  /// fused-kernel Megatron/Transformer Engine: 0.55 / 0.62, the Hopper fit on our eager H200 runs
  /// (tests/data/h200-measurements.jsonl) over the Hopper fit on Megatron-Bridge's tables.
  /// torchtitan reports +16% from torch.compile on Llama 3.1 8B (5762 → 6667 tokens/s/GPU).
  double eager_efficiency_factor = 0.89;
  /// FP8 GEMMs reach this fraction of the speed-up their datasheet peak promises over BF16
  /// (amax/scaling, casts, and a lower achieved fraction of the 2× peak). The step's gain is
  /// NOT a constant: only the FP8 share of the FLOPs (linear layers without the LM head; the
  /// attention core stays 16-bit) runs at (FP8 peak / BF16 peak) × this, so small or
  /// attention-heavy models gain less. Calibrated on the H100 FP8 rows (docs/accuracy.md).
  double fp8_gemm_relative_efficiency = 0.95;
  /// MoE routed experts: their FLOPs run at 1/(1 + expert_half_width / expert_intermediate_size) of
  /// the dense efficiency (grouped GEMMs of width f_e, token permute/unpermute, gating: memory
  /// traffic ∝ k·h per token against 6·k·h·f_e FLOPs). CALIBRATED on the in-sample MoE rows of
  /// Megatron-Bridge 25.11 (Qwen3-30B-A3B f_e 768, Qwen3-235B-A22B 1536, DeepSeek-V3 2048,
  /// gpt-oss-120b 2880; docs/accuracy.md).
  double expert_half_width = 2300;
  /// MoE: fixed time per MoE layer per micro-batch (forward + backward), independent of the GPU:
  /// dropless token dispatch synchronises the device with the host to size each all-to-all and
  /// grouped GEMM (Megatron-Core MoE "alltoall" dispatcher), and launches many small permutation
  /// kernels. CALIBRATED with expert_half_width on the same in-sample rows (median residual of the
  /// step per MoE layer per micro-batch: 4 ms). Added to compute_seconds.
  double moe_layer_overhead_seconds = 4e-3;
  /// The same two constants under the HybridEP dispatcher (MoeDispatcher::hybridep), which fuses
  /// the permutation into its dispatch/combine kernels (moe_permute_fusion_into_hybridep).
  /// CALIBRATED on the first release tables that ran HybridEP with the layout their recipe sets
  /// (NeMo 26.02 and 26.02.01, Megatron-Bridge v0.3.0 / v0.3.1: DGX-B300 and DGX-B200 Qwen3-30B-A3B
  /// and DeepSeek-V3, 7 rows): least squares of the log error over a grid of 100-unit and 0.5 ms
  /// steps, residuals −5.8% … +6.2% since the 2026-12-06 re-fit with base_efficiency_blackwell
  /// (400 → 300; docs/accuracy.md "HybridEP"); every later HybridEP row (NeMo 26.04, 26.04.01,
  /// 26.06) is held out. The routed experts at f_e 768 run 1.39× the dense time
  /// (alltoall: 3.99×); the fixed time stays near alltoall's 4 ms: HybridEP still sizes its
  /// buffers with a host sync unless a static capacity is set (Megatron-LM token_dispatcher.py,
  /// HybridEP setup_metadata), which the full-iteration CUDA graph needs (TrainingStepRequest::cuda_graph).
  double hybridep_expert_half_width = 300;
  double hybridep_moe_layer_overhead_seconds = 2.5e-3;
  /// The fixed time per MoE layer per micro-batch under Transformer Engine's partial CUDA graphs
  /// (TrainingStepRequest::cuda_graph = transformer_engine; the recipes capture attention,
  /// moe_router and moe_preprocess per layer, Megatron-Core TECudaGraphHelper): the router's and
  /// the preprocess kernels' launches leave the host, the dispatch's host sync and the expert
  /// kernels stay eager. On NVIDIA GPUs, min(this, the dispatcher's eager time): graphs never add
  /// host time, so HybridEP (2.5 ms eager) keeps 2.5 ms. CALIBRATED (2026-12-07) by least squares of
  /// the log error over the 20 in-sample rows, jointly with sustained_factor_gb300 and
  /// hybridep_moe_layer_overhead_seconds (the six in-sample rows that ran these graphs: 25.11
  /// DGX-B200 Qwen3-30B-A3B and DGX-GB300 gpt-oss-120b, alltoall; 25.11 DGX-GB300, 26.02 DGX-B300
  /// and 26.02.01 DGX-B300/B200 Qwen3-30B-A3B, HybridEP), 0.1 ms / 0.01 grid: 3.5 ms, 1.16, and the
  /// HybridEP time stays 2.5 ms. Every other row that ran these graphs is held out
  /// (docs/accuracy.md history "te-graphs").
  double moe_layer_overhead_seconds_te_graphs = 3.5e-3;
  /// Width factor: efficiency × 1/(1 + hidden_half_width / hidden). Elementwise, memory-bound
  /// work (norms, softmax, residuals, dropout) grows ∝ s·h while the matmuls grow ∝ s·h², so
  /// its share falls ∝ 1/h; fitted on Megatron GPT 1.7B (h 2304: 44% of peak) … 1T (h 25600: 52–57%).
  /// Not applied to the LM head, whose GEMMs are V (the vocabulary) wide (perf.cpp compute_phase).
  double hidden_half_width = 1500;
  /// Token factor: × 1/(1 + tokens_half_width / (micro_batch × seq)) (small GEMMs at tiny batches).
  double tokens_half_width = 128;
  /// Optimizer update: memory-bound, this fraction of HBM bandwidth.
  double optimizer_bw_efficiency = 0.7;
  /// Host-side time of an eager framework (PyTorch + HF Transformers: Python, kernel launches,
  /// per-tensor optimizer loops) per transformer layer per micro-batch, forward + backward.
  /// Kernels are launched asynchronously, so host time only shows when it exceeds the GPU time:
  /// overhead_seconds = max(0, host − GPU busy time). Calibrated on our single-GPU H200 runs of
  /// 0.1–2B-parameter models (tests/data/h200-measurements.jsonl), whose steps are host-bound
  /// (Qwen3-0.6B: 0.106 s at both 2048 and 4096 tokens per step).
  double framework_overhead_seconds_per_layer = 3.0e-3;
  /// Host time multiplier with full recompute (HF non-reentrant gradient checkpointing re-runs the
  /// forward with hooks: measured step ratio 1.67 on three host-bound models in the same runs).
  double recompute_overhead_factor = 5.0 / 3.0;
  /// Extra host time per layer per micro-batch for LoRA/QLoRA adapters (PEFT: 7 adapted matrices,
  /// dropout, two thin matmuls, scale and add each, forward + backward; same calibration runs).
  double lora_overhead_seconds_per_layer = 2.5e-3;
  /// Achieved fraction of link bandwidth in collectives (NCCL bus bandwidth ~80% of peak) over
  /// NVLink / xGMI (ClusterSpec::intra_node_nvlink).
  double link_efficiency = 0.8;
  /// The same among GPUs of a node with no NVLink between them (collective_link_efficiency()): the
  /// rings cross the PCIe switches and the CPUs' root complexes, so the bus bandwidth is what the
  /// host fabric delivers, not the x16 link. SOURCED: NVIDIA/nccl issue #1639 (2025-03-14; 8× RTX
  /// 5090 on PCIe 5.0 x16 = 63 GB/s, two Xeon 8480+): all_reduce_perf bus bandwidth at 1–8 GB
  /// messages 35 GB/s on 4 GPUs (0.56 of the link) and 28 GB/s on 8 (0.44); NCCL's maintainer there:
  /// "On PCI systems, the performance you get is usually determined by the bandwidth your CPU and
  /// memory can deliver". Groups of 2–4 GPUs take the 4-GPU value (no smaller group was published).
  double pcie_collective_efficiency_up_to_4_gpus = 0.56;
  double pcie_collective_efficiency_over_4_gpus = 0.44;
  /// Achieved fraction of the inter-node network line rate in NCCL collectives (nccl-tests on
  /// InfiniBand HDR/NDR typically reach 80–95% of line rate as bus bandwidth).
  double network_efficiency = 0.8;
  /// Fraction of DP/ZeRO communication that overlaps compute (backward for gradient
  /// all-reduce; the whole pass for ZeRO-3 prefetched all-gathers). PyTorch DDP buckets and
  /// DeepSpeed overlap_comm make it high; 1.0 = fully hidden while comm < compute.
  double comm_overlap_fraction = 0.9;
  /// QLoRA: extra compute for de-quantising NF4 weights (Dettmers et al. 2023 arXiv:2305.14314 §3)
  /// before each matmul, as a multiplier on compute time. ASSUMPTION (no measurement in this
  /// project's data): 1.3.
  double qlora_dequant_overhead = 1.3;
  /// MoE expert parallelism: tokens the busiest EP rank receives / the mean. It stretches each
  /// all-to-all and the routed-expert share of the compute. ASSUMPTION 1.2: between the
  /// forced-balance 1.0 of NVIDIA's published MoE benchmarks (Megatron-Bridge performance
  /// summary: "we force-balance the token distribution among experts") and the capacity factor
  /// 1.25 that Switch Transformer trains with (Fedus et al. 2021, arXiv:2101.03961 §2.1).
  double moe_load_imbalance = 1.2;
  /// Fraction of the EP all-to-all hidden behind compute. 0 = Megatron-Core's default (no
  /// --overlap-moe-expert-parallel-comm); DeepSeek-V3's DualPipe hides nearly all of it
  /// (DeepSeek-AI 2024, arXiv:2412.19437 §3.2.1).
  double ep_comm_overlap_fraction = 0.0;

  // Serving (serving_perf.hpp)
  /// Achieved fraction of memory bandwidth in decode, by weight bit width (llama.cpp
  /// measurements, ggml-org/llama.cpp PR #4766: F16 70–82%, Q8_0 70%, Q4_0 49%; our H200 run of
  /// the 8B weight matmuls at batch 1 streamed 77% of 4.8 TB/s, tests/data/h200-decode-roofline.jsonl).
  double decode_bw_efficiency_16bit = 0.76;
  double decode_bw_efficiency_8bit = 0.72;
  double decode_bw_efficiency_4bit = 0.52;
  /// Achieved fraction of dense fp16/bf16 peak in prefill (same source: 4090/3090 F16 79–90%,
  /// quantised 62–65% of the datasheet FP16-with-FP32-accumulate peak).
  double prefill_efficiency_16bit = 0.85;
  double prefill_efficiency_quantized = 0.64;
  /// Achieved fraction of dense 16-bit peak in batched decode once compute-bound. The weight
  /// matmuls of a decode step alone reach 0.72–0.77 on an H200 at batch ≥ 512
  /// (tests/data/h200-decode-roofline.jsonl); 0.7 leaves a little for norms/activations.
  double decode_compute_efficiency = 0.7;

  // Diffusion (diffusion_perf.hpp)
  /// Achieved fraction of dense 16-bit peak for one evaluation of a diffusion TRANSFORMER (FLUX):
  /// our H200 run of the FLUX.1-shaped forward in eager PyTorch reached 0.42 / 0.48 / 0.52 at
  /// 512² / 1024² / 1536² (tests/data/h200-flux-blocks.jsonl).
  double diffusion_transformer_efficiency = 0.48;
  /// Same for a diffusion UNet (SDXL): UNCALIBRATED assumption (no timing in this project's data:
  /// convolutions, group norms and small attention levels run less efficiently than the
  /// transformer's large matmuls); treat UNet images/hour as uncertain by up to 2×.
  double diffusion_unet_efficiency = 0.30;
};

/// The product's sustained-throughput factor on the kernel efficiency of training steps:
/// PerfAssumptions::sustained_factor_gb300 for "NVIDIA GB300 (per GPU)", 1 for every other GPU.
double sustained_factor(const GpuSpec& gpu, const PerfAssumptions& a) noexcept;

/// MoE token dispatcher of an expert-parallel run (Megatron-Core moe_token_dispatcher_type and
/// moe_flex_dispatcher_backend):
///   alltoall  Megatron-Core's AllToAll dispatcher (its default in the MoE recipes): every token
///             is permuted into one copy per chosen expert, k copies sent, (ep−1)/ep of them off
///             the GPU; separate permute/unpermute kernels and a host sync per layer.
///   deepep    the "flex" dispatcher with DeepEP (DeepSeek-AI 2025, github.com/deepseek-ai/DeepEP):
///             one copy per destination GPU within the node and one per destination node over
///             the network (RDMA), forwarded inside that node over NVLink (DeepSeek-V3 report
///             §3.2.2); kernels timed as alltoall's (the DGX-H100 Qwen3-30B-A3B row of NeMo
///             26.02 ran DeepEP at 5113 tokens/s/GPU, 25.11's alltoall 5275: no kernel gain seen).
///   hybridep  the "flex" dispatcher with NVIDIA's HybridEP (same deduplicated traffic; TMA
///             copy kernels on few SMs, permutation fused into the dispatch,
///             moe_permute_fusion_into_hybridep): its own calibrated expert-kernel constants,
///             PerfAssumptions::hybridep_*.
enum class MoeDispatcher { alltoall, deepep, hybridep };
std::string_view moe_dispatcher_name(MoeDispatcher d) noexcept;
/// "alltoall", "deepep", "hybridep". Throws Error{invalid_input, where, expected list}.
MoeDispatcher parse_moe_dispatcher(std::string_view s, const std::string& where);

/// Megatron-Core's cuda_graph_impl: none; local (per-layer graphs: the MoE host sync stays, timed
/// as none); transformer_engine (partial per-layer graphs: the MoE layer's fixed time is
/// PerfAssumptions::moe_layer_overhead_seconds_te_graphs); full_iteration (the whole step as one
/// graph). TrainingStepRequest::cuda_graph.
enum class CudaGraphImpl { none, transformer_engine, local, full_iteration };
std::string_view cuda_graph_impl_name(CudaGraphImpl g) noexcept;
/// "none", "transformer_engine", "local", "full_iteration" (any case, '-' for '_'). Throws
/// Error{invalid_input, where, expected list}.
CudaGraphImpl parse_cuda_graph_impl(std::string_view s, const std::string& where);

/// Bytes of HBM traffic per token (summed over the model's layers) of the element-wise kernels that
/// Megatron-Core's recompute_modules `modules` (memory.hpp RecomputeModule, the set in effect) re-run
/// in backward; the GEMMs they re-run are FLOPs (flops.hpp training_flops_per_token).
///   layernorm: 4h per recomputed norm (read 2h, write 2h, 16-bit): the pre-MLP norm of every MoE
///              layer and the input norm of every MLA layer;
///   moe_act:   per MoE layer, k routed copies × 2 B × (first GEMM output read: 2·f_e gated, f_e
///              plain + activation written: f_e).
/// core_attn, mla_up_proj and mlp: 0 here. Pure.
double recompute_modules_bytes_per_token(const ModelArch& arch, RecomputeModules modules);

/// Expected number of distinct groups that hold at least one of a token's k routed experts, when
/// the k experts are drawn uniformly without replacement from num_experts split evenly over
/// `groups` groups (force-balanced routing; a token's experts are distinct):
/// groups × (1 − C(E − E/groups, k) / C(E, k)). 0 for k < 1 or groups < 1; E must be a multiple of
/// groups (else the even split is approximated by E/groups rounded down).
double expected_distinct_expert_groups(std::int64_t num_experts, std::int64_t k, int groups);

/// One training step (one optimizer update over global_batch_seqs sequences).
struct TrainingStepRequest {
  TrainPrecision precision = TrainPrecision::bf16_mixed;  ///< peak dtype: bf16_* -> bf16, fp16 -> fp16, fp8 -> fp8, fp32/tf32 -> tf32
  std::int64_t seq_len = 2048;     ///< tokens per sequence, >= 1
  std::int64_t global_batch_seqs = 0;  ///< sequences per optimizer step, >= 1; split over DP ranks
  ParallelLayout layout{};         ///< tp, pp, dp, ep, zero_stage, micro_batch, ...
  Recompute recompute = Recompute::none;
  /// Megatron-Core recompute_modules under Recompute::selective (sizing/memory.hpp RecomputeModule;
  /// 0 = {core_attn}): their forward is re-run in backward (recompute_modules_flop_per_token and
  /// recompute_modules_bytes_per_token).
  RecomputeModules recompute_modules = 0;
  Task task = Task::pretrain;                   ///< full training vs LoRA/QLoRA (FLOPs, gradient volume)
  // Interleaved pipeline chunks per GPU (v) are layout.virtual_stages (1 = plain 1F1B).
  /// LoRA/QLoRA rank r: the adapters (all linear layers) are the only gradients reduced over DP.
  int lora_rank = 16;
  Optimizer optimizer = Optimizer::adamw;  ///< bytes touched by the update (optimizer_seconds)
  /// Training stack: megatron runs fused kernels (Transformer Engine, fused norms/loss) at the
  /// base efficiencies; the eager PyTorch stacks (hf, fsdp, deepspeed, unsloth) reach
  /// eager_efficiency_factor of them.
  TrainingStack stack = TrainingStack::hf;
  /// MoE: the EP dispatch/combine all-to-alls of one micro-batch run while another micro-batch
  /// computes (Megatron-Core --overlap-moe-expert-parallel-comm, Megatron-Bridge moe_a2a_overlap:
  /// merged 1F1B forward/backward of two micro-batches), so only the all-to-all time above the
  /// compute time stays on the critical path: ep_alltoall_seconds = max(0, all-to-all − compute).
  /// false = Megatron-Core's default (all-to-alls on the critical path).
  bool ep_overlap_with_compute = false;
  /// Tensor-parallel communication overlapped with the linear layers' GEMMs by Transformer Engine
  /// userbuffers (Megatron-Core tp_comm_overlap; Megatron-Bridge CommOverlapConfig, which requires
  /// sequence parallelism). With SP each layer's TP traffic is all-gathers and reduce-scatters of
  /// the s·b·h activation: forward qkv_fprop (AG), proj_fprop (RS), fc1_fprop (AG), fc2_fprop
  /// (RS); backward proj_dgrad and fc2_dgrad (AG of the output gradient) and, for the column-
  /// parallel qkv and fc1, the AG of the input for the weight gradient beside the dgrad GEMM and
  /// the RS of the input gradient beside the wgrad GEMM ("bulk"). Chunked methods (ring_exchange,
  /// pipeline) split the GEMM into tp chunks and hide the transfer behind all but one of them:
  /// exposed = max(0, c − (tp−1)/tp · g); bulk runs the transfer beside a whole GEMM: max(0, c − g);
  /// c = (tp−1)/tp · s·b·h·elem / link, g = the GEMM's FLOPs at the model's linear-layer rate.
  /// Method per GEMM: Megatron-Bridge userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192
  /// (src/megatron/bridge/training/comm_overlap.py). SM contention of the comm kernels is not
  /// modelled. Dense decoders with MHA/GQA only (Error{invalid_input, "tp_comm_overlap"} for MoE,
  /// MLA, parallel-attention or SSM models). false = TP collectives exposed (Megatron-Core default).
  bool tp_comm_overlap = false;
  /// Gradients reduced over DP in fp32 (4 B per element) instead of the training dtype:
  /// Megatron's default main_grad buffers (grad_reduce_in_fp32=True; Megatron-LM
  /// param_and_grad_buffer.py). false = the 16-bit dtype of the weights (PyTorch DDP/FSDP with
  /// bf16 gradients, Megatron with grad_reduce_in_fp32=False). fp32/tf32 training reduces 4 B anyway.
  bool grad_reduce_fp32 = false;
  /// Decoder layers held by each pipeline rank (pp entries, the sum of its virtual chunks),
  /// as a Megatron `pipeline_model_parallel_layout` lists them (e.g. Megatron-Bridge's
  /// DeepSeek-V3 pp 16: embedding + 4, 14 × 4, 1 + MTP + loss). Empty = Megatron-Core's default
  /// split (account_for_embedding/loss_in_pipeline_split false): the pp·v chunks get L/(pp·v)
  /// layers each (a remainder goes one each to the first chunks) and the last rank also holds
  /// the output layer and the loss. Megatron-Core itself refuses a remainder unless those flags
  /// are set (get_num_layers_to_build, transformer_block.py); with them (L + 2 over the chunks,
  /// one layer fewer in the first and the last chunk: Megatron-Bridge's Qwen3-235B recipe) the
  /// last rank holds exactly the layers this rule gives it, so the busiest rank is the same.
  /// Must have pp entries summing to the model's layers
  /// (Error{invalid_input, "layout.pipeline_stage_layers"}).
  std::vector<int> pipeline_stage_layers;
  /// MoE: tokens the busiest EP rank receives / the mean, ≥ 1, for this run (e.g. 1 for
  /// force-balanced routing, as NVIDIA's published benchmarks run). nullopt =
  /// PerfAssumptions::moe_load_imbalance.
  std::optional<double> moe_load_imbalance;
  /// MoE: the token dispatcher (traffic and expert-kernel constants; MoeDispatcher above).
  MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;
  /// Megatron-Core's cuda_graph_impl (CudaGraphImpl):
  ///   full_iteration: the whole training iteration is captured in one CUDA graph and replayed
  ///     (MoE layers need static shapes for it, e.g. HybridEP's moe_expert_rank_capacity_factor, as
  ///     Megatron-Bridge's Qwen3 MXFP8 recipes set in perf_recipes/qwen/common.py
  ///     _enable_hybridep_full_iteration_mxfp8): the host launches one graph per step, so the
  ///     host-side terms vanish: the MoE layers' fixed dispatch time and the framework host time
  ///     (overhead_seconds).
  ///   transformer_engine: Transformer Engine's per-layer graphs (make_graphed_callables) of the
  ///     recipes' partial scope (attention, moe_router, moe_preprocess): the router's and the
  ///     dispatcher's preprocess kernels replay as graphs, the dispatch itself stays eager with its
  ///     host sync, so an MoE layer's fixed time is PerfAssumptions::moe_layer_overhead_seconds_te_graphs,
  ///     at most the dispatcher's eager time (on NVIDIA GPUs; elsewhere timed eager).
  ///   local, none: the eager MoE layer (moe_layer_overhead_seconds / hybridep_moe_layer_overhead_seconds).
  CudaGraphImpl cuda_graph = CudaGraphImpl::none;
};

/// Breakdown of one training step. step_seconds = compute_seconds + tp_allreduce_seconds
/// + ep_alltoall_seconds + pp_p2p_seconds + pp_bubble_seconds + exposed_comm_seconds
/// + optimizer_seconds + overhead_seconds. dp_allreduce_seconds and zero_allgather_seconds
/// are the full (un-overlapped) communication times; exposed_comm_seconds is what remains
/// on the critical path after overlap.
struct TrainingStepEstimate {
  double step_seconds = 0;
  double compute_seconds = 0;         ///< hardware FLOP / (peak × kernel efficiency), per GPU of the busiest pipeline rank
  double dp_allreduce_seconds = 0;    ///< gradient all-reduce (ZeRO-0/1/2), before overlap
  double zero_allgather_seconds = 0;  ///< ZeRO-3/FSDP gathers + reduce-scatter, before overlap
  double tp_allreduce_seconds = 0;    ///< TP all-reduces, on the critical path
  double ep_alltoall_seconds = 0;     ///< MoE expert-parallel all-to-alls, on the critical path
  double pp_p2p_seconds = 0;          ///< pipeline activation/gradient transfers, on the critical path
  double optimizer_seconds = 0;       ///< optimizer update (memory-bound), on the critical path
  double overhead_seconds = 0;        ///< framework host time not hidden behind GPU work
  double pp_bubble_seconds = 0;       ///< pipeline fill/drain idle time
  double exposed_comm_seconds = 0;    ///< DP/ZeRO comm not hidden behind compute
  double kernel_efficiency = 0;       ///< fraction of peak used in compute_seconds
  double peak_flops_per_s = 0;        ///< dense peak per GPU for the precision
  double mfu = 0;                     ///< model FLOP (no recompute) / (step × GPUs × peak)
  double hfu = 0;                     ///< hardware FLOP (with recompute) / (step × GPUs × peak)
  double tokens_per_s = 0;            ///< global_batch_seqs × seq_len / step_seconds (whole cluster)
  double model_flop_per_step = 0;     ///< model FLOP per step, whole cluster (6·N·tokens + attention)
  double hardware_flop_per_step = 0;  ///< incl. recomputation, whole cluster
  std::int64_t micro_batches_per_step = 0;  ///< per pipeline: global_batch / (dp × micro_batch)
  /// Busiest pipeline rank's compute / the mean rank's (1 = balanced; pp = 1: 1). The last rank
  /// holds the output layer + loss (and DeepSeek's MTP module in pretraining) on top of its layers.
  double pp_stage_imbalance = 1;
  int pp_busiest_stage = 0;        ///< 0-based pipeline rank whose compute sets compute_seconds
};

/// Estimates one training step. Never throws for a well-formed request; requires
/// cluster.gpu != nullptr, tp·pp·dp GPUs (not checked against the cluster size: the planner
/// decides the layout), seq_len >= 1, global_batch_seqs >= 1, micro_batch >= 1.
/// A precision the GPU does not support falls back to its next supported 16-bit peak
/// (bf16 -> fp16 -> tf32 -> fp32); 0 peak gives infinite step time.
/// Throws Error{invalid_input} for nonsensical values (non-positive degrees, null gpu).
TrainingStepEstimate estimate_training_step(const ModelArch& arch, const TrainingStepRequest& request,
                                            const ClusterSpec& cluster, const PerfAssumptions& assumptions);

/// What estimate_training_step reads from the model itself: FLOPs per token (flops.hpp) and
/// parameter counts (matmul parameters per token, LoRA adapter parameters on all linear layers,
/// active routed-expert parameters). They depend on the model, seq_len, recompute, task and
/// lora_rank only — not on the layout or the cluster — and counting them walks the model's
/// LayerGeometry, so a search that times thousands of layouts computes them once per recompute
/// mode and passes them to the overload below. Same numbers as the plain call, bit for bit.
struct TrainingStepModelFigures {
  std::int64_t seq_len = 0;               ///< the request they were computed for
  Recompute recompute = Recompute::none;
  RecomputeModules recompute_modules = 0;
  Task task = Task::pretrain;
  int lora_rank = 0;
  FlopsPerToken hardware_per_token;       ///< training_flops_per_token (with recomputation)
  FlopsPerToken model_per_token;          ///< model_training_flops_per_token
  FlopsPerToken forward_per_token;        ///< forward_flops_per_token
  double matmul_params_per_token = 0;     ///< matmul_params_per_token
  double lora_adapter_params = 0;         ///< LoRA/QLoRA: r·(d_in + d_out) over all linear layers; else 0
  double active_routed_expert_params = 0; ///< MoE: routed-expert parameters a token uses; else 0
};
TrainingStepModelFigures training_step_model_figures(const ModelArch& arch, const TrainingStepRequest& request);
/// estimate_training_step with the model figures computed beforehand (for `request`'s seq_len,
/// recompute, task and LoRA rank; throws Error{invalid_input} when they were computed for another).
TrainingStepEstimate estimate_training_step(const ModelArch& arch, const TrainingStepRequest& request,
                                            const ClusterSpec& cluster, const PerfAssumptions& assumptions,
                                            const TrainingStepModelFigures& figures);

/// A lower bound of estimate_training_step(arch, request, cluster, assumptions, figures)
/// .step_seconds for a search that keeps the fastest layout: the compute time averaged over the
/// pipeline ranks (the same doubles estimate_training_step computes first; the busiest rank's is
/// never less) plus the pipeline bubble that compute alone causes, or the host time when that is
/// larger; every communication, optimizer and balance term is left out (each is ≥ 0). About a
/// quarter of the work of the full estimate. Mathematically ≤ step_seconds; the two are computed
/// in different orders, so compare with a relative margin (1e-9 covers the rounding many times
/// over). Same validation and errors as estimate_training_step.
double training_step_seconds_lower_bound(const ModelArch& arch, const TrainingStepRequest& request,
                                         const ClusterSpec& cluster, const PerfAssumptions& assumptions,
                                         const TrainingStepModelFigures& figures);

/// A layout's step time in two stages, for a search that bounds many layouts and estimates few
/// (the planner): prepare() at a request computes the compute phase once (the doubles both the
/// bound and the estimate start from), lower_bound_seconds() reads the bound from it, and
/// estimate() finishes the full estimate from it only when asked. The compute phase does not read
/// the ZeRO stage, so estimate() may be given the prepared request at another ZeRO stage (the
/// planner bounds a layout once for both stages). Bit for bit the numbers of
/// training_step_seconds_lower_bound and estimate_training_step for the same request, figures,
/// cluster and assumptions (tests/sizing/perf_lower_bound_test.cpp); the same validation and
/// errors. The arch, cluster, assumptions and figures given to prepare() must outlive the calls
/// that follow it. Reusable: prepare() again for the next layout (one allocation per object).
class TrainingStepStages {
 public:
  TrainingStepStages();
  ~TrainingStepStages();
  TrainingStepStages(TrainingStepStages&&) noexcept;
  TrainingStepStages& operator=(TrainingStepStages&&) noexcept;
  TrainingStepStages(const TrainingStepStages&) = delete;
  TrainingStepStages& operator=(const TrainingStepStages&) = delete;

  void prepare(const ModelArch& arch, const TrainingStepRequest& request, const ClusterSpec& cluster,
               const PerfAssumptions& assumptions, const TrainingStepModelFigures& figures);
  /// training_step_seconds_lower_bound of the prepared request.
  double lower_bound_seconds() const;
  /// estimate_training_step of `request`: the prepared one, or it at another ZeRO stage (nothing
  /// else may differ; throws Error{invalid_input} when the layout, batch, recompute, task,
  /// precision or sequence length differ from the prepared request's, or before prepare()).
  TrainingStepEstimate estimate(const TrainingStepRequest& request) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Kernel efficiency used for compute_seconds (exposed for explanations and tests).
double kernel_efficiency(const ModelArch& arch, const TrainingStepRequest& request, const GpuSpec& gpu,
                         const PerfAssumptions& assumptions);

// ---- communication primitives (seconds), each a pure formula ----

/// Ring all-reduce of `bytes` over n ranks at `bytes_per_s` per rank one direction:
/// 2(n−1)/n · bytes / bytes_per_s (Patarasuk & Yuan 2009). 0 when n <= 1.
double ring_allreduce_seconds(double bytes, int n, double bytes_per_s);
/// Ring all-gather (or reduce-scatter) of a `bytes` total buffer: (n−1)/n · bytes / bytes_per_s.
double ring_allgather_seconds(double bytes, int n, double bytes_per_s);
/// Hierarchical all-reduce of `bytes` per GPU over a group of `group_size` GPUs placed
/// `group_per_node` per node (the others in the node run their own groups concurrently and
/// share the node's network): max(intra-node ring phase, inter-node ring phase), where the
/// inter-node phase moves 2(N−1)/N · bytes/group_per_node per GPU over inter_node/gpus_per_node.
double hierarchical_allreduce_seconds(double bytes, int group_size, int group_per_node, const ClusterSpec& cluster,
                                      const PerfAssumptions& assumptions);
/// Achieved fraction of the intra-node link's bandwidth in a collective of `group_gpus` GPUs of one
/// node: PerfAssumptions::link_efficiency over NVLink (cluster.intra_node_nvlink), else the PCIe
/// value for the group's size (pcie_collective_efficiency_*).
double collective_link_efficiency(const ClusterSpec& cluster, int group_gpus, const PerfAssumptions& assumptions);
/// Pipeline bubble fraction of the step: (p−1)/(v·m + p−1) (Narayanan et al. 2021 §2.2).
double pipeline_bubble_fraction(int pp, std::int64_t micro_batches, int virtual_stages = 1);

/// One explanation line: a named term, its value, the formula with numbers filled in, and
/// the source of the formula.
struct ExplainLine {
  std::string term;     ///< "compute_seconds"
  double value = 0;     ///< in the unit named by `term`
  std::string formula;  ///< "1.2e18 FLOP / (8 GPUs × 312e12 FLOP/s × 0.52) = 925 s"
  std::string source;   ///< "Narayanan et al. 2021 Eq. 3"
};

/// The estimate's terms as explanation lines (same numbers as estimate_training_step).
std::vector<ExplainLine> explain_training_step(const ModelArch& arch, const TrainingStepRequest& request,
                                               const ClusterSpec& cluster, const PerfAssumptions& assumptions);

}  // namespace gpuplan
