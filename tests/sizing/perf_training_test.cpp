// Training step time and communication (perf.hpp): hand calculations written out here,
// the terms adding up, and monotonicity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/param_count.hpp"
#include "sizing/perf.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

GpuSpec a100_like() {
  // NVIDIA A100 SXM4 80GB datasheet: 312 TFLOPS dense BF16/FP16, 156 TF32, 2039 GB/s HBM2e,
  // NVLink 3 600 GB/s bidirectional (300 GB/s each way), PCIe Gen4.
  GpuSpec g;
  g.name = "A100 SXM 80GB";
  g.vendor = "NVIDIA";
  g.architecture = "Ampere";
  g.memory_type = "HBM2e";
  g.memory_bytes = 80e9;
  g.memory_bandwidth_bytes_per_s = 2039e9;
  g.dense_flops_per_s[static_cast<std::size_t>(Dtype::bf16)] = 312e12;
  g.dense_flops_per_s[static_cast<std::size_t>(Dtype::fp16)] = 312e12;
  g.dense_flops_per_s[static_cast<std::size_t>(Dtype::tf32)] = 156e12;
  g.gpu_link_bytes_per_s = 600e9;
  g.interconnect = "NVLink 3";
  g.pcie_gen = 4;
  return g;
}

ModelArch gpt(std::int64_t layers, std::int64_t hidden, std::int64_t vocab) {
  ModelArch a;
  a.name = "gpt";
  a.num_layers = layers;
  a.hidden_size = hidden;
  a.intermediate_size = 4 * hidden;
  a.num_attention_heads = hidden / 128;
  a.num_kv_heads = a.num_attention_heads;
  a.head_dim = 128;
  a.vocab_size = vocab;
  a.max_position_embeddings = 2048;
  a.tied_embeddings = true;
  a.gated_mlp = false;
  a.position_encoding = PositionEncoding::learned;
  a.attention = AttentionKind::mha;
  a.params = count_decoder_params(a);
  return a;
}

/// Assumptions with the size factors switched off and no overlap, so hand calculations are short.
PerfAssumptions plain() {
  PerfAssumptions a;
  a.hidden_half_width = 0;
  a.tokens_half_width = 0;
  a.comm_overlap_fraction = 0;
  a.framework_overhead_seconds_per_layer = 0;
  a.lora_overhead_seconds_per_layer = 0;
  a.eager_efficiency_factor = 1;  // base efficiency as calibrated (Megatron)
  return a;
}

TrainingStepRequest request(int tp, int pp, int dp, std::int64_t global_batch, int mb = 1) {
  TrainingStepRequest r;
  r.precision = TrainPrecision::bf16_mixed;
  r.seq_len = 2048;
  r.global_batch_seqs = global_batch;
  r.layout.tp = tp;
  r.layout.pp = pp;
  r.layout.dp = dp;
  r.layout.micro_batch = mb;
  return r;
}

TEST(PerfComm, RingAllReduceOneGigabyteOnEightGpus) {
  // 2(n−1)/n · bytes / bandwidth = 2·7/8 · 1e9 / 300e9 = 5.8333 ms.
  EXPECT_NEAR(ring_allreduce_seconds(1e9, 8, 300e9), 1.75e9 / 300e9, 1e-12);
  EXPECT_NEAR(ring_allgather_seconds(1e9, 8, 300e9), 0.875e9 / 300e9, 1e-12);
  EXPECT_EQ(ring_allreduce_seconds(1e9, 1, 300e9), 0.0);
}

TEST(PerfComm, PipelineBubble) {
  // Narayanan et al. 2021 §2.2: (p−1)/(m+p−1); p = 4, m = 8 → 3/11; interleaved v = 2 → 3/19.
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(4, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(4, 8, 2), 3.0 / 19.0);
  EXPECT_EQ(pipeline_bubble_fraction(1, 8), 0.0);
}

TEST(PerfComm, HierarchicalAllReduceSlowerPhaseDominates) {
  const GpuSpec gpu = a100_like();
  // 2 nodes × 8 GPUs, 100 GB/s network per node; one 16-GPU group, 8 per node; efficiencies 1.
  const ClusterSpec c = make_cluster(gpu, 8, 2, 100e9);
  PerfAssumptions a;
  a.link_efficiency = 1;
  a.network_efficiency = 1;
  const double s = 8e9;
  const double intra = 2.0 * 7 / 8 * s / 300e9;                 // NVLink ring inside the node
  const double inter = 2.0 * 1 / 2 * (s / 8) / (100e9 / 8);     // each GPU's 1/8 shard across 2 nodes
  EXPECT_NEAR(hierarchical_allreduce_seconds(s, 16, 8, c, a), std::max(intra, inter), 1e-9);
  EXPECT_GT(inter, intra);  // the network is the slower link here
  // Inside one node: just the NVLink ring.
  EXPECT_NEAR(hierarchical_allreduce_seconds(s, 8, 8, c, a), intra, 1e-9);
}

// Collectives among GPUs with no NVLink run at the bus bandwidth NCCL measured on PCIe servers
// (NVIDIA/nccl issue #1639: 35 GB/s on 4 and 28 GB/s on 8 RTX 5090 over 63 GB/s PCIe 5.0 x16 links,
// i.e. 0.56 and 0.44 of the link), not at NVLink's 80%: a hierarchical all-reduce inside one
// 8-GPU PCIe node of 8e9 B takes 2 × 7/8 × 8e9 / (31.5e9 × 0.44) s; a 4-GPU group 2 × 3/4 × 8e9 /
// (31.5e9 × 0.56) s; NVLink keeps link_efficiency.
TEST(PerfComm, PcieCollectivesRunAtTheMeasuredBusBandwidth) {
  const GpuSpec gpu = a100_like();
  GpuSpec pcie = gpu;
  pcie.gpu_link_bytes_per_s = 0;
  const ClusterSpec p = make_cluster(pcie, 8, 1, 0);
  const ClusterSpec n = make_cluster(gpu, 8, 1, 0);
  const PerfAssumptions a;
  EXPECT_DOUBLE_EQ(collective_link_efficiency(p, 8, a), 0.44);  // 28 / 63 = 0.444, two digits
  EXPECT_DOUBLE_EQ(collective_link_efficiency(p, 4, a), 0.56);
  EXPECT_DOUBLE_EQ(collective_link_efficiency(p, 2, a), 0.56);
  EXPECT_DOUBLE_EQ(collective_link_efficiency(n, 8, a), a.link_efficiency);
  EXPECT_NEAR(hierarchical_allreduce_seconds(8e9, 8, 8, p, a), 2.0 * 7 / 8 * 8e9 / (31.5e9 * 0.44), 1e-9);
  EXPECT_NEAR(hierarchical_allreduce_seconds(8e9, 4, 4, p, a), 2.0 * 3 / 4 * 8e9 / (31.5e9 * 0.56), 1e-9);
  EXPECT_NEAR(hierarchical_allreduce_seconds(8e9, 8, 8, n, a), 2.0 * 7 / 8 * 8e9 / (300e9 * 0.8), 1e-9);
}

TEST(PerfCluster, MakeClusterUsesNvlinkOrPcie) {
  const GpuSpec gpu = a100_like();
  const ClusterSpec c = make_cluster(gpu, 8, 1, 0);
  EXPECT_TRUE(c.intra_node_nvlink);
  EXPECT_DOUBLE_EQ(c.intra_node_bytes_per_s, 300e9);  // 600 GB/s bidirectional → 300 each way
  GpuSpec pcie = gpu;
  pcie.gpu_link_bytes_per_s = 0;
  const ClusterSpec p = make_cluster(pcie, 8, 1, 0);
  EXPECT_FALSE(p.intra_node_nvlink);
  EXPECT_DOUBLE_EQ(p.intra_node_bytes_per_s, 31.5e9);  // PCIe Gen4 x16
  GpuSpec bridged = gpu;
  bridged.interconnect = "NVLink 3 bridge (2-GPU)";
  EXPECT_TRUE(make_cluster(bridged, 2, 1, 0).intra_node_nvlink);
  EXPECT_FALSE(make_cluster(bridged, 4, 1, 0).intra_node_nvlink);  // a bridge pairs only 2 GPUs
}

TEST(PerfTraining, ComputeIsFlopsOverPeakTimesEfficiency) {
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(24, 2048, 51200);
  const PerfAssumptions a = plain();
  const TrainingStepRequest r = request(1, 1, 1, 8);
  const TrainingStepEstimate e = estimate_training_step(arch, r, make_cluster(gpu, 1, 1, 0), a);
  // Hand: tokens = 8 × 2048; FLOP = tokens × (6·N_matmul + 3·4·L·h·(s+1)/2); one GPU at
  // 312e12 × 0.73 (Ampere base efficiency, size factors off).
  const double n = 12.0 * 24 * 2048 * 2048 + 51200.0 * 2048;
  const double flop = 8 * 2048 * (6 * n + 3 * 4 * 24 * 2048 * 2049.0 / 2);
  EXPECT_NEAR(e.hardware_flop_per_step, flop, flop * 1e-3);  // biases: < 0.1%
  EXPECT_NEAR(e.compute_seconds, e.hardware_flop_per_step / (312e12 * 0.73), 1e-9);
  // Optimizer: AdamW mixed precision touches 28 B per parameter at 2039 GB/s × 0.7.
  EXPECT_NEAR(e.optimizer_seconds, static_cast<double>(arch.params.total()) * 28 / (2039e9 * 0.7), 1e-9);
  EXPECT_NEAR(e.step_seconds, e.compute_seconds + e.optimizer_seconds, 1e-12);
  EXPECT_NEAR(e.mfu, e.model_flop_per_step / (e.step_seconds * 312e12), 1e-12);
  EXPECT_NEAR(e.tokens_per_s, 8 * 2048 / e.step_seconds, 1e-6);
}

TEST(PerfTraining, TensorParallelAllReducesPerLayer) {
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(24, 4096, 51200);
  const PerfAssumptions a = plain();
  const TrainingStepRequest r = request(8, 1, 1, 4);
  const TrainingStepEstimate e = estimate_training_step(arch, r, make_cluster(gpu, 8, 1, 0), a);
  // Megatron: 4 all-reduces per layer (2 fwd + 2 bwd) of s·b·h·2 bytes, ring over 8 GPUs at
  // 300 GB/s × 0.8; 4 micro-batches of 1 sequence, 24 layers.
  const double bytes = 2048.0 * 1 * 4096 * 2;
  const double one = 2.0 * 7 / 8 * bytes / (300e9 * 0.8);
  EXPECT_NEAR(e.tp_allreduce_seconds, 4 * 24 * 4 * one, 1e-9);
  // Full recompute re-runs the forward: 6 per layer.
  TrainingStepRequest rc = r;
  rc.recompute = Recompute::full;
  EXPECT_NEAR(estimate_training_step(arch, rc, make_cluster(gpu, 8, 1, 0), a).tp_allreduce_seconds,
              4 * 24 * 6 * one, 1e-9);
}

TEST(PerfTraining, TensorParallelOverPcieIsSlowerThanNvlink) {
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(32, 4096, 51200);
  const TrainingStepRequest r = request(8, 1, 1, 8);
  ClusterSpec nvlink = make_cluster(gpu, 8, 1, 0);
  ClusterSpec pcie = nvlink;
  pcie.intra_node_nvlink = false;
  pcie.intra_node_bytes_per_s = pcie_x16_bytes_per_s(4);
  const TrainingStepEstimate en = estimate_training_step(arch, r, nvlink, PerfAssumptions{});
  const TrainingStepEstimate ep = estimate_training_step(arch, r, pcie, PerfAssumptions{});
  // NVLink at 80% of 300 GB/s against PCIe Gen4 x16 at 0.44 of 31.5 GB/s (8 PCIe GPUs, nccl #1639).
  EXPECT_NEAR(ep.tp_allreduce_seconds / en.tp_allreduce_seconds, (300e9 * 0.8) / (31.5e9 * 0.44), 1e-9);
  EXPECT_GT(ep.step_seconds, 1.5 * en.step_seconds);
}

TEST(PerfTraining, ZeroThreeMovesOneAndAHalfTimesTheDpVolume) {
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(24, 2048, 51200);
  const ClusterSpec c = make_cluster(gpu, 8, 1, 0);
  TrainingStepRequest r = request(1, 1, 8, 8);  // one micro-batch per GPU
  const TrainingStepEstimate z0 = estimate_training_step(arch, r, c, plain());
  r.layout.zero_stage = 3;
  const TrainingStepEstimate z3 = estimate_training_step(arch, r, c, plain());
  // Rajbhandari et al. 2020 §7.2.2: ZeRO-3 = 1.5 × the all-reduce volume (16-bit params and grads).
  EXPECT_NEAR(z3.zero_allgather_seconds, 1.5 * z0.dp_allreduce_seconds, 1e-12);
  EXPECT_EQ(z3.dp_allreduce_seconds, 0.0);
  // DP gradient all-reduce by hand: 2·7/8 × 2 B × N / (300 GB/s × 0.8).
  EXPECT_NEAR(z0.dp_allreduce_seconds, 2.0 * 7 / 8 * 2 * static_cast<double>(arch.params.total()) / 240e9, 1e-9);
  // With no overlap the whole gather is exposed.
  EXPECT_NEAR(z3.exposed_comm_seconds, z3.zero_allgather_seconds, 1e-12);
}

TEST(PerfTraining, OverlapHidesGradientAllReduceBehindBackward) {
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(24, 2048, 51200);
  const ClusterSpec c = make_cluster(gpu, 8, 1, 0);
  const TrainingStepRequest r = request(1, 1, 8, 64);
  PerfAssumptions none = plain();
  PerfAssumptions full = plain();
  full.comm_overlap_fraction = 1.0;
  const TrainingStepEstimate e0 = estimate_training_step(arch, r, c, none);
  const TrainingStepEstimate e1 = estimate_training_step(arch, r, c, full);
  EXPECT_DOUBLE_EQ(e0.exposed_comm_seconds, e0.dp_allreduce_seconds);
  // Window = backward of the last micro-batch: compute / m × (1 − forward/total).
  const double window = e1.compute_seconds / static_cast<double>(e1.micro_batches_per_step) * (2.0 / 3.0);
  EXPECT_NEAR(e1.exposed_comm_seconds, std::max(0.0, e1.dp_allreduce_seconds - window), 1e-4 * window);
}

TEST(PerfTraining, PipelineBubbleAndTermsAddUp) {
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(32, 4096, 51200);
  const TrainingStepRequest r = request(2, 4, 2, 16);  // m = 16 / 2 = 8 micro-batches, p = 4
  const TrainingStepEstimate e = estimate_training_step(arch, r, make_cluster(gpu, 8, 2, 200e9), PerfAssumptions{});
  EXPECT_EQ(e.micro_batches_per_step, 8);
  // Bubble = ideal × (p−1)/m, i.e. (p−1)/(m+p−1) = 3/11 of (ideal + bubble).
  const double ideal = e.compute_seconds + e.tp_allreduce_seconds + e.ep_alltoall_seconds;
  EXPECT_NEAR(e.pp_bubble_seconds / (ideal + e.pp_bubble_seconds), 3.0 / 11.0, 1e-12);
  EXPECT_NEAR(e.step_seconds,
              e.compute_seconds + e.tp_allreduce_seconds + e.ep_alltoall_seconds + e.pp_p2p_seconds +
                  e.pp_bubble_seconds + e.exposed_comm_seconds + e.optimizer_seconds + e.overhead_seconds,
              1e-12);
  // Host overhead 8 micro-batches × 8 layers × 3 ms = 0.19 s is hidden behind seconds of GPU work.
  EXPECT_EQ(e.overhead_seconds, 0.0);
  // The explanation carries the same numbers.
  const auto lines = explain_training_step(arch, r, make_cluster(gpu, 8, 2, 200e9), PerfAssumptions{});
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().term, "step_seconds");
  EXPECT_DOUBLE_EQ(lines.back().value, e.step_seconds);
  for (const auto& line : lines) EXPECT_FALSE(line.source.empty()) << line.term;
}

TEST(PerfTraining, LastPipelineStageHoldsTheOutputLayer) {
  // 24 layers of h 2048 (GPT shape: 12·h² matmul parameters per layer) and a 51200-token tied
  // head, pp 4 (Megatron-Core's default split: 6 layers per rank, the output layer + loss on
  // rank 3). Hand calculation per token (forward; training × 3 on both sides, so it cancels):
  //   layer = 2·12·h² + attention 4·h·(s+1)/2; head = 2·V·h.
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(24, 2048, 51200);
  const PerfAssumptions a = plain();
  const double h = 2048, s = 2048, V = 51200;
  const double layer = 2 * 12 * h * h + 4 * h * (s + 1) / 2;
  const double head = 2 * V * h;
  const TrainingStepRequest r = request(1, 4, 1, 8);
  const TrainingStepEstimate e = estimate_training_step(arch, r, make_cluster(gpu, 4, 1, 0), a);
  // Busiest = last rank: 6 layers + head; mean rank = (24 layers + head) / 4.
  const double expected = (6 * layer + head) / ((24 * layer + head) / 4);
  EXPECT_NEAR(e.pp_stage_imbalance, expected, 2e-3);  // biases and norms: < 0.2%
  EXPECT_EQ(e.pp_busiest_stage, 3);
  // compute = the busiest rank's FLOPs at the balanced efficiency: whole-model FLOPs / 4 × ratio.
  EXPECT_NEAR(e.compute_seconds, e.hardware_flop_per_step / 4 / (312e12 * 0.73) * e.pp_stage_imbalance, 1e-9);
  // pp 1: nothing to balance.
  EXPECT_EQ(estimate_training_step(arch, request(1, 1, 1, 8), make_cluster(gpu, 1, 1, 0), a).pp_stage_imbalance, 1.0);
  // An explicit layout that gives the last rank 3 layers: the busiest rank is a 7-layer one
  // when 7 layers outweigh 3 layers + the head (7·layer > 3·layer + head here: head ≈ 2.1 layers).
  TrainingStepRequest uneven = r;
  uneven.pipeline_stage_layers = {7, 7, 7, 3};
  const TrainingStepEstimate u = estimate_training_step(arch, uneven, make_cluster(gpu, 4, 1, 0), a);
  EXPECT_NEAR(u.pp_stage_imbalance, 7 * layer / ((24 * layer + head) / 4), 2e-3);
  EXPECT_EQ(u.pp_busiest_stage, 0);
  EXPECT_LT(u.compute_seconds, e.compute_seconds);
  // Bad layouts: wrong length, wrong sum, negative entries.
  for (const std::vector<int>& bad : {std::vector<int>{12, 12}, std::vector<int>{6, 6, 6, 5}, std::vector<int>{13, 6, 6, -1}}) {
    TrainingStepRequest b = r;
    b.pipeline_stage_layers = bad;
    EXPECT_THROW(estimate_training_step(arch, b, make_cluster(gpu, 4, 1, 0), a), Error);
  }
}

TEST(PerfTraining, LmHeadRunsWithoutTheHiddenWidthFactor) {
  // The output layer's GEMMs are tokens × h × V with V = 51200: the 1/(1 + hidden_half_width/h)
  // factor (GEMMs whose every dimension scales with h, and per-layer element-wise work) is not
  // applied to them. Same model as LastPipelineStageHoldsTheOutputLayer, with that factor on:
  // layers at 0.73 / (1 + 1500/2048), the head at 0.73 (Ampere base, Megatron stack).
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(24, 2048, 51200);
  PerfAssumptions a = plain();
  a.hidden_half_width = 1500;
  const double h = 2048, s = 2048, V = 51200;
  const double layer = 2 * 12 * h * h + 4 * h * (s + 1) / 2;
  const double head = 2 * V * h;
  const double eff_layer = 0.73 / (1 + 1500 / h), eff_head = 0.73;
  for (int pp : {1, 4}) {
    TrainingStepRequest r = request(1, pp, 1, 8);
    r.stack = TrainingStack::megatron;
    const TrainingStepEstimate e = estimate_training_step(arch, r, make_cluster(gpu, pp, 1, 0), a);
    if (pp == 1) {
      EXPECT_EQ(e.pp_stage_imbalance, 1.0);  // exactly (trial54 #7 printed "× 1.000")
    }
    // Hardware FLOPs per step spread as the forward FLOPs per token are (× 3 for training on both).
    const double per_flop = e.hardware_flop_per_step / (24 * layer + head) / 312e12;
    const double busiest = per_flop * ((24.0 / pp) * layer / eff_layer + head / eff_head);
    EXPECT_NEAR(e.compute_seconds / busiest, 1.0, 2e-3) << "pp " << pp;  // biases and norms: < 0.2%
    // The head at the layers' efficiency would have taken head × (1/eff_layer − 1/eff_head) longer.
    const double at_layer_eff = per_flop * ((24.0 / pp) * layer + head) / eff_layer;
    EXPECT_NEAR(at_layer_eff - e.compute_seconds, per_flop * head * (1 / eff_layer - 1 / eff_head),
                2e-3 * e.compute_seconds)
        << "pp " << pp;
    // An eager stack (Hugging Face here; plain() sets its efficiency factor to 1) computes the loss
    // unfused in fp32: its head keeps the factor, the whole step at the layers' efficiency.
    r.stack = TrainingStack::hf;
    const TrainingStepEstimate eager = estimate_training_step(arch, r, make_cluster(gpu, pp, 1, 0), a);
    EXPECT_NEAR(eager.compute_seconds / at_layer_eff, 1.0, 2e-3) << "pp " << pp;
  }
}

TEST(PerfTraining, AccountForEmbeddingAndLossSplitLeavesTheLastRankAsTheDefaultRule) {
  // Megatron-Bridge's Qwen3-235B-A22B recipe sets account_for_embedding_in_pipeline_split and
  // account_for_loss_in_pipeline_split (src/megatron/bridge/recipes/qwen/qwen3_moe.py at 1c43b3928,
  // the 25.11 release, and c0b9a0003, the 26.02 summary). Megatron-Core's get_num_layers_to_build
  // (megatron/core/transformer/transformer_block.py) then splits L + 2 = 94 + 2 = 96 "layers" over
  // pp·v = 8·4 = 32 chunks of 3 and removes one from the first chunk (embedding) and one from the
  // last (loss): per rank {11, 12, 12, 12, 12, 12, 12, 11}. The default rule gpuplan uses without a
  // layout (94 over 32 chunks: 30 chunks of 3, the last two of 2) gives {12, 12, 12, 12, 12, 12, 11, 11}:
  // the last rank holds 11 layers + the output layer in both, so the busiest rank and the step agree.
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(94, 2048, 51200);
  const PerfAssumptions a = plain();
  TrainingStepRequest r = request(1, 8, 1, 64);
  r.layout.virtual_stages = 4;
  const ClusterSpec c = make_cluster(gpu, 8, 1, 0);
  const TrainingStepEstimate by_rule = estimate_training_step(arch, r, c, a);
  TrainingStepRequest flags = r;
  flags.pipeline_stage_layers = {11, 12, 12, 12, 12, 12, 12, 11};
  const TrainingStepEstimate by_flags = estimate_training_step(arch, flags, c, a);
  EXPECT_EQ(by_rule.pp_busiest_stage, 7);
  EXPECT_EQ(by_flags.pp_busiest_stage, 7);
  EXPECT_DOUBLE_EQ(by_flags.compute_seconds, by_rule.compute_seconds);
  EXPECT_DOUBLE_EQ(by_flags.step_seconds, by_rule.step_seconds);
  // Busiest / mean = (11 layers + head) / ((94 layers + head) / 8), per token forward as above.
  const double h = 2048, s = 2048, V = 51200;
  const double layer = 2 * 12 * h * h + 4 * h * (s + 1) / 2;
  const double head = 2 * V * h;
  EXPECT_NEAR(by_rule.pp_stage_imbalance, (11 * layer + head) / ((94 * layer + head) / 8), 2e-3);
}

TEST(PerfTraining, UserbuffersTpOverlapHidesEachTransferBehindItsGemm) {
  // Megatron-Core tp_comm_overlap with Transformer Engine userbuffers, methods per GEMM as in
  // Megatron-Bridge userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192 (training/comm_overlap.py at
  // 97ad8cc6f, unchanged to 63b08b397): ring_exchange for qkv/fc1/proj/fc2 fprop and proj/fc2 dgrad
  // (the GEMM runs in tp chunks, the transfer hides behind all but the first: exposed
  // max(0, c − (tp−1)/tp·g)), bulk for qkv/fc1 dgrad (AG of the input) and wgrad (RS of the input
  // gradient), beside one whole GEMM: max(0, c − g). Each transfer is an all-gather or
  // reduce-scatter of s·b·h 16-bit values: c = (tp−1)/tp · bytes / link.
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(32, 4096, 51200);  // MHA, plain 2-matrix MLP of 4h
  PerfAssumptions a = plain();
  a.link_efficiency = 1.0;
  TrainingStepRequest r = request(4, 1, 1, 8);  // tp 4, 8 micro-batches of 1 × 2048 tokens
  r.layout.sequence_parallel = true;
  ClusterSpec c = make_cluster(gpu, 4, 1, 0);
  c.intra_node_bytes_per_s = 100e9;  // slow enough that the proj transfers outlast (tp−1)/tp of their GEMM
  const TrainingStepEstimate exposed = estimate_training_step(arch, r, c, a);
  r.tp_comm_overlap = true;
  const TrainingStepEstimate overlapped = estimate_training_step(arch, r, c, a);

  const double s = 2048, h = 4096, tp = 4, md = 8, layers = 32;
  const double transfer = (tp - 1) / tp * (s * h * 2.0) / 100e9;  // 0.12583 ms
  // Unoverlapped: 4 all-reduces per layer of 2(tp−1)/tp · bytes = 2 transfers each.
  EXPECT_NEAR(exposed.tp_allreduce_seconds, md * layers * 4 * 2 * transfer, 1e-9);
  // GEMMs per GPU per micro-batch at the 16-bit rate (bf16: no FP8 factor).
  const double rate = 312e12 * kernel_efficiency(arch, r, gpu, a);
  const double g_qkv = 2 * s * h * 3 * h / tp / rate, g_proj = 2 * s * h * h / tp / rate;
  const double g_fc = 2 * s * h * 4 * h / tp / rate;  // fc1 and fc2 alike (non-gated 4h)
  auto chunked = [&](double g) { return std::max(0.0, transfer - 0.75 * g); };
  auto bulk = [&](double g) { return std::max(0.0, transfer - g); };
  const double per_layer = chunked(g_qkv) + chunked(g_proj) + chunked(g_fc) + chunked(g_fc)  // forward
                           + chunked(g_proj) + chunked(g_fc) + 2 * bulk(g_qkv) + 2 * bulk(g_fc);  // backward
  EXPECT_GT(chunked(g_proj), 0.0);  // the proj transfers outlast 3/4 of their GEMM on this link
  EXPECT_DOUBLE_EQ(bulk(g_qkv), 0.0);  // the qkv GEMM (3× proj) hides its bulk transfers
  EXPECT_NEAR(overlapped.tp_allreduce_seconds, md * layers * per_layer, 1e-9);
  EXPECT_LT(overlapped.tp_allreduce_seconds, 0.5 * exposed.tp_allreduce_seconds);
  // On a link slower than every GEMM nothing hides, and the 10 transfers of the SP layer (the
  // backward re-gathers the qkv / fc1 inputs) exceed the 4 all-reduces' 8.
  c.intra_node_bytes_per_s = 1e9;
  const double slow = (tp - 1) / tp * (s * h * 2.0) / 1e9;
  const TrainingStepEstimate slow_link = estimate_training_step(arch, r, c, a);
  // Chunked: qkv, proj, fc1, fc2 fprop and proj, fc2 dgrad; bulk: qkv and fc1 dgrad and wgrad.
  const double slow_exposed = 6 * slow - 0.75 * (g_qkv + 2 * g_proj + 3 * g_fc);
  const double slow_bulk = 4 * slow - 2 * g_qkv - 2 * g_fc;
  EXPECT_GT(slow - g_fc, 0.0);  // every transfer outlasts every GEMM at 1 GB/s
  EXPECT_NEAR(slow_link.tp_allreduce_seconds, md * layers * (slow_exposed + slow_bulk), 1e-9);
  EXPECT_DOUBLE_EQ(overlapped.compute_seconds, exposed.compute_seconds);
  EXPECT_NEAR(exposed.step_seconds - overlapped.step_seconds,
              exposed.tp_allreduce_seconds - overlapped.tp_allreduce_seconds, 1e-9);
}

TEST(PerfTraining, UserbuffersTpOverlapIsRefusedForMoeModels) {
  const GpuSpec gpu = a100_like();
  ModelArch arch = gpt(8, 2048, 51200);
  arch.moe = MoeSpec{};
  arch.moe->num_routed_experts = 8;
  arch.moe->experts_per_token = 2;
  arch.moe->expert_intermediate_size = 1024;
  arch.moe->num_moe_layers = 8;
  TrainingStepRequest r = request(2, 1, 4, 64);
  r.tp_comm_overlap = true;
  EXPECT_THROW(estimate_training_step(arch, r, make_cluster(gpu, 8, 1, 0), PerfAssumptions{}), Error);
}

// ZeRO-1 shards the optimizer over the ranks that hold the same parameters: the dense ones over
// dp, the experts over their expert-data-parallel group (dp / ep at etp = tp). Before, the experts
// were divided by dp too: gpt-oss-120b at EP 8 on 64 B200s updated 0.26 B parameters per GPU
// instead of 1.85 B (the 20.4 GiB of optimizer state the memory model holds).
TEST(PerfTraining, ExpertOptimizerStateIsShardedOverTheExpertDataParallelGroup) {
  const GpuSpec gpu = a100_like();
  ModelArch arch = gpt(8, 2048, 51200);
  arch.moe = MoeSpec{};
  arch.moe->num_routed_experts = 8;
  arch.moe->experts_per_token = 2;
  arch.moe->expert_intermediate_size = 1024;
  arch.moe->num_moe_layers = 8;
  arch.params = count_decoder_params(arch);
  ASSERT_GT(arch.params.experts, 0);
  TrainingStepRequest r = request(1, 1, 16, 64);
  r.layout.ep = 4;
  r.layout.zero_stage = 1;
  const TrainingStepEstimate e = estimate_training_step(arch, r, make_cluster(gpu, 8, 2, 200e9), plain());
  // Hand: dense / dp 16 + experts / ep 4 / edp 4 (= dp / ep), 28 B each (AdamW, bf16 mixed).
  const double dense = static_cast<double>(arch.params.total() - arch.params.experts);
  const double experts = static_cast<double>(arch.params.experts);
  EXPECT_NEAR(e.optimizer_seconds, (dense / 16 + experts / 4 / 4) * 28 / (2039e9 * 0.7), 1e-12);
  r.layout.zero_stage = 0;  // no sharding: every parameter this GPU holds
  const TrainingStepEstimate z0 = estimate_training_step(arch, r, make_cluster(gpu, 8, 2, 200e9), plain());
  EXPECT_NEAR(z0.optimizer_seconds, (dense + experts / 4) * 28 / (2039e9 * 0.7), 1e-12);
}

TEST(PerfTraining, MoreDataParallelGpusNeverSlowCompute) {
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(32, 4096, 51200);
  double previous_compute = 1e300, previous_tokens_per_s = 0;
  for (int dp : {1, 2, 4, 8, 16, 32}) {
    const TrainingStepRequest r = request(1, 1, dp, 256);
    const int nodes = std::max(1, dp / 8);
    const TrainingStepEstimate e =
        estimate_training_step(arch, r, make_cluster(gpu, std::min(dp, 8), nodes, 200e9), PerfAssumptions{});
    EXPECT_LT(e.compute_seconds, previous_compute) << "dp " << dp;
    EXPECT_GT(e.tokens_per_s, previous_tokens_per_s) << "dp " << dp;
    previous_compute = e.compute_seconds;
    previous_tokens_per_s = e.tokens_per_s;
  }
}

TEST(PerfTraining, LoraReducesComputeAndGradientTraffic) {
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(32, 4096, 51200);
  TrainingStepRequest r = request(1, 1, 8, 64);
  const ClusterSpec c = make_cluster(gpu, 8, 1, 0);
  const TrainingStepEstimate full = estimate_training_step(arch, r, c, PerfAssumptions{});
  r.task = Task::lora;
  const TrainingStepEstimate lora = estimate_training_step(arch, r, c, PerfAssumptions{});
  r.task = Task::qlora;
  const TrainingStepEstimate qlora = estimate_training_step(arch, r, c, PerfAssumptions{});
  EXPECT_LT(lora.compute_seconds, full.compute_seconds);
  EXPECT_LT(lora.dp_allreduce_seconds, 0.02 * full.dp_allreduce_seconds);  // adapters ≪ weights
  EXPECT_NEAR(qlora.compute_seconds, 1.3 * lora.compute_seconds, 1e-9);    // documented de-quantisation cost
}

TEST(PerfTraining, HostOverheadShowsOnlyWhenItExceedsGpuTime) {
  const GpuSpec gpu = a100_like();
  const ModelArch tiny = gpt(12, 256, 1000);  // a few MFLOP per token: host-bound
  PerfAssumptions a;
  TrainingStepRequest r = request(1, 1, 1, 1);
  r.seq_len = 128;
  const TrainingStepEstimate e = estimate_training_step(tiny, r, make_cluster(gpu, 1, 1, 0), a);
  // Host: 1 micro-batch × 12 layers × 3 ms = 36 ms; the step is that, whatever the GPU time below it.
  EXPECT_NEAR(e.step_seconds, 12 * 3e-3, 1e-12);
  EXPECT_NEAR(e.overhead_seconds, 12 * 3e-3 - (e.compute_seconds + e.optimizer_seconds), 1e-12);
  r.task = Task::lora;
  r.recompute = Recompute::full;
  // LoRA adds 2.5 ms per layer; recompute multiplies by 5/3.
  EXPECT_NEAR(estimate_training_step(tiny, r, make_cluster(gpu, 1, 1, 0), a).step_seconds, 12 * 5.5e-3 * 5 / 3, 1e-12);
}

TEST(PerfTraining, RejectsNonsense) {
  const GpuSpec gpu = a100_like();
  const ModelArch arch = gpt(4, 512, 1000);
  TrainingStepRequest r = request(0, 1, 1, 8);
  EXPECT_THROW(estimate_training_step(arch, r, make_cluster(gpu, 8, 1, 0), PerfAssumptions{}), Error);
  r = request(1, 1, 1, 0);
  EXPECT_THROW(estimate_training_step(arch, r, make_cluster(gpu, 8, 1, 0), PerfAssumptions{}), Error);
  r = request(1, 1, 1, 8);
  ClusterSpec no_gpu;
  EXPECT_THROW(estimate_training_step(arch, r, no_gpu, PerfAssumptions{}), Error);
}

TEST(PerfTraining, Fp8UsesFp8PeakOnlyWhereSupported) {
  GpuSpec gpu = a100_like();  // no fp8 on A100: runs at the bf16 peak
  const ModelArch arch = gpt(8, 2048, 32000);
  TrainingStepRequest r = request(1, 1, 1, 8);
  r.stack = TrainingStack::megatron;  // fused cross-entropy: the head without the width factor
  r.precision = TrainPrecision::fp8_mixed;
  const PerfAssumptions a;
  const TrainingStepEstimate none = estimate_training_step(arch, r, make_cluster(gpu, 1, 1, 0), a);
  EXPECT_DOUBLE_EQ(none.peak_flops_per_s, 312e12);
  r.precision = TrainPrecision::bf16_mixed;
  const TrainingStepEstimate bf16 = estimate_training_step(arch, r, make_cluster(gpu, 1, 1, 0), a);
  EXPECT_DOUBLE_EQ(none.compute_seconds, bf16.compute_seconds);
  // With an FP8 peak of 2× BF16: MFU stays against the 16-bit peak; only the linear layers'
  // share f of the FLOPs (not the LM head, not attention) speeds up, by 2 × 0.95. The LM head
  // (share f_head) runs at the layers' efficiency without the 1/(1 + 1500/h) factor, so with
  // T = FLOPs / peak: t16 = T·(1 − f_head)/eff + T·f_head/eff_head, and FP8 takes
  // T·f/eff × (1 − 1/1.9) off it.
  gpu.dense_flops_per_s[static_cast<std::size_t>(Dtype::fp8)] = 624e12;
  r.precision = TrainPrecision::fp8_mixed;
  const TrainingStepEstimate fp8 = estimate_training_step(arch, r, make_cluster(gpu, 1, 1, 0), a);
  EXPECT_DOUBLE_EQ(fp8.peak_flops_per_s, 312e12);
  const FlopsPerToken hw = training_flops_per_token(arch, 2048, Recompute::none, Task::pretrain);
  const double matmul = matmul_params_per_token(arch);
  const double f = (matmul - 32000.0 * 2048.0) / matmul * hw.dense_matmul_flop / hw.total_flop;
  const double f_head = 32000.0 * 2048.0 / matmul * hw.dense_matmul_flop / hw.total_flop;
  const double T = bf16.hardware_flop_per_step / 312e12;
  const double eff = kernel_efficiency(arch, r, gpu, a);
  const double eff_head = eff * (1 + a.hidden_half_width / 2048.0);
  EXPECT_NEAR(bf16.compute_seconds, T * (1 - f_head) / eff + T * f_head / eff_head, 1e-12);
  EXPECT_NEAR(fp8.compute_seconds,
              bf16.compute_seconds - T * f / eff * (1 - 1 / (2.0 * a.fp8_gemm_relative_efficiency)), 1e-12);
  EXPECT_GT(f, 0.5);
  EXPECT_LT(f, 0.95);
}

TEST(PerfTraining, Gb300SustainsItsCalibratedFactorOverGb200) {
  // GB300 and GB200 share their datasheet dense peaks (2.5 PFLOP/s BF16 per GPU, data/gpus.csv);
  // the Megatron-Bridge tables run GB300 ≈ 1.2× GB200 at the same layout, so GB300's kernel
  // efficiency carries PerfAssumptions::sustained_factor_gb300 (fitted on the 25.11 DGX-GB300 rows).
  // Two specs that differ only in their names: one GPU, no communication, compute-bound, so the
  // compute time is FLOPs / (peak × efficiency) and the ratio is the factor itself.
  GpuSpec gb200 = a100_like();
  gb200.name = "NVIDIA GB200 (per GPU)";
  gb200.architecture = "Blackwell";
  gb200.memory_type = "HBM3e";
  gb200.dense_flops_per_s[static_cast<std::size_t>(Dtype::bf16)] = 2500e12;
  GpuSpec gb300 = gb200;
  gb300.name = "NVIDIA GB300 (per GPU)";
  gb300.architecture = "Blackwell Ultra";
  const ModelArch arch = gpt(24, 2048, 51200);
  PerfAssumptions a = plain();
  a.sustained_factor_gb300 = 1.25;  // a value of the test's own, so the ratio is not the default's
  TrainingStepRequest r = request(1, 1, 1, 8);
  r.stack = TrainingStack::megatron;
  const TrainingStepEstimate e200 = estimate_training_step(arch, r, make_cluster(gb200, 1, 1, 0), a);
  const TrainingStepEstimate e300 = estimate_training_step(arch, r, make_cluster(gb300, 1, 1, 0), a);
  EXPECT_NEAR(e200.compute_seconds / e300.compute_seconds, 1.25, 1e-9);
  EXPECT_DOUBLE_EQ(e300.hardware_flop_per_step, e200.hardware_flop_per_step);
  EXPECT_EQ(sustained_factor(gb200, a), 1.0);
  EXPECT_EQ(sustained_factor(gb300, a), 1.25);
  EXPECT_EQ(sustained_factor(gb300, PerfAssumptions{}), 1.16);
  // The explanation names the factor for GB300 and not for GB200.
  auto efficiency_line = [&](const GpuSpec& gpu) {
    for (const auto& line : explain_training_step(arch, r, make_cluster(gpu, 1, 1, 0), a))
      if (line.source.find("kernel efficiency = base(GPU generation)") != std::string::npos) return line.source;
    return std::string();
  };
  EXPECT_NE(efficiency_line(gb300).find("× NVIDIA GB300 (per GPU) sustained 1.25"), std::string::npos)
      << efficiency_line(gb300);
  EXPECT_EQ(efficiency_line(gb200).find("sustained"), std::string::npos) << efficiency_line(gb200);
}

}  // namespace
}  // namespace gpuplan
