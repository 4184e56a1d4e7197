// Calibration of the performance model (perf.hpp, serving_perf.hpp) against the published
// throughput figures in tests/data/ground-truth-dev.jsonl (kinds train_throughput,
// time_to_train, infer_throughput). Every such row is evaluated (or listed in kNotEvaluable
// with the reason); the error per case is printed; a case must be within ±kTolerance of the
// published value, or — a known gap in kKnownGaps — within its documented error range. Layout details a source does not give are
// ASSUMPTIONS written next to each case below (and in docs/performance-model.md).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "hardware/gpu_spec.hpp"
#include "model/param_count.hpp"
#include "model/presets.hpp"
#include "sizing/perf.hpp"
#include "sizing/serving_perf.hpp"

namespace gpuplan {
namespace {

constexpr double kTolerance = 0.25;

/// Known gaps: cases outside the ±25% bar, each with the reason and the error RANGE the model is
/// documented to produce for it (docs/accuracy.md). The test asserts the error stays inside the
/// range: a gap that grows, shrinks past it or flips sign fails, so the list cannot hide a change.
struct KnownGap {
  double lo, hi;  ///< predicted / published − 1
  const char* reason;
};
const char* const kZero3Reason =
    "DeepSpeed ZeRO-3 as run in 2021 (Narayanan et al. 2021 Table 2) lost half its per-GPU throughput each time "
    "the GPUs doubled at a fixed batch (174B: 144 -> 88 -> 44 TFLOP/s), i.e. its parameter gathers ran at ~1/8 of "
    "the NCCL ring/hierarchical bandwidth the model assumes (8 x 200 Gb/s per DGX node). Calibrating to it would "
    "make single-node FSDP/ZeRO-3 (today's common fine-tuning layout) 5-8x too slow, so the model keeps NCCL "
    "bandwidths and over-predicts these rows.";
const std::map<std::string, KnownGap> kKnownGaps = {
    {"mlm-sc21-t2-zero3-174b-384", {0.25, 0.60, kZero3Reason}},
    {"mlm-sc21-t2-zero3-174b-768", {0.90, 1.60, kZero3Reason}},
    {"mlm-sc21-t2-zero3-174b-1536", {2.80, 4.00, kZero3Reason}},
    {"mlm-sc21-t2-zero3-529b-640", {0.35, 0.75, kZero3Reason}},
    {"mlm-sc21-t2-zero3-529b-1120", {0.80, 1.40, kZero3Reason}},
    {"mlm-sc21-t2-zero3-529b-2240", {2.80, 4.00, kZero3Reason}},
    {"opt-175b-gpuh",
     {-0.60, -0.40,
      "LLaMA Table 15 restates OPT's whole run (809k GPU-h) incl. restarts and loss-divergence rollbacks "
      "(Zhang et al. 2022 §2.5 logbook: 35+ restarts); at the 147 TFLOP/s/GPU OPT itself reports, "
      "6·N·180e9 tokens needs only ~357k GPU-h. The step model predicts uninterrupted training (failures "
      "and restarts are the planner's goodput terms, src/sizing/goodput.*)."}},
};

/// Rows that cannot be evaluated at all.
const std::map<std::string, std::string> kNotEvaluable = {};

struct Prediction {
  double value = 0;
  std::string note;
};

/// Megatron-style GPT (Narayanan et al. 2021 §5.1): learned positions, tied embeddings, 4h
/// GeLU MLP with biases, LayerNorm; heads given or h/128 (attention FLOPs depend on h only).
ModelArch gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t vocab, std::int64_t seq,
              std::int64_t ffn = 0) {
  ModelArch a;
  a.name = "gpt";
  a.model_type = "gpt2";
  a.family = ModelFamily::decoder;
  a.num_layers = layers;
  a.hidden_size = hidden;
  a.intermediate_size = ffn > 0 ? ffn : 4 * hidden;
  a.num_attention_heads = heads > 0 ? heads : hidden / 128;
  a.num_kv_heads = a.num_attention_heads;
  a.head_dim = hidden / a.num_attention_heads;
  a.vocab_size = vocab;
  a.max_position_embeddings = seq;
  a.tied_embeddings = true;
  a.gated_mlp = false;
  a.attention_bias = true;
  a.mlp_bias = true;
  a.position_encoding = PositionEncoding::learned;
  a.attention = AttentionKind::mha;
  a.params = count_decoder_params(a);
  return a;
}

/// LLaMA-1 (Touvron et al. 2023 Table 2; FFN widths from the released configs: 11008, 13824,
/// 17920, 22016): SwiGLU, RoPE, untied head, vocab 32000.
ModelArch llama1(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t ffn) {
  ModelArch a;
  a.name = "llama1";
  a.model_type = "llama";
  a.num_layers = layers;
  a.hidden_size = hidden;
  a.intermediate_size = ffn;
  a.num_attention_heads = heads;
  a.num_kv_heads = heads;
  a.head_dim = hidden / heads;
  a.vocab_size = 32000;
  a.max_position_embeddings = 2048;
  a.tied_embeddings = false;
  a.gated_mlp = true;
  a.attention = AttentionKind::mha;
  a.params = count_decoder_params(a);
  return a;
}

/// GPU figures from the datasheets (the same values as data/gpus.csv, written here so the
/// calibration does not move when the catalog is edited): NVIDIA A100 datasheet (SXM4 80GB:
/// 312 TFLOPS dense BF16/FP16, 2039 GB/s, NVLink 3 600 GB/s bidirectional, PCIe Gen4);
/// RTX 4090 (Ada whitepaper: 165.2 TFLOPS FP16 with FP32 accumulate, 1008 GB/s);
/// RTX 3090 (GA102 whitepaper: 71 TFLOPS FP16 with FP32 accumulate, 936 GB/s).
GpuSpec make_gpu(const char* name, const char* arch, const char* memory_type, double tflops16, double bw_gbps,
                 double link_gbps) {
  GpuSpec g;
  g.name = name;
  g.vendor = "NVIDIA";
  g.architecture = arch;
  g.memory_type = memory_type;
  g.memory_bandwidth_bytes_per_s = bw_gbps * 1e9;
  g.dense_flops_per_s[static_cast<std::size_t>(Dtype::bf16)] = tflops16 * 1e12;
  g.dense_flops_per_s[static_cast<std::size_t>(Dtype::fp16)] = tflops16 * 1e12;
  g.gpu_link_bytes_per_s = link_gbps * 1e9;
  g.interconnect = link_gbps > 0 ? "NVLink" : "none (PCIe only)";
  g.pcie_gen = 4;
  return g;
}
const GpuSpec& a100() {
  static const GpuSpec g = make_gpu("A100 SXM 80GB", "Ampere", "HBM2e", 312, 2039, 600);
  return g;
}
const GpuSpec& gpu_by_name(const std::string& name) {
  static const GpuSpec rtx4090 = make_gpu("RTX 4090", "Ada Lovelace", "GDDR6X", 165.2, 1008, 0);
  static const GpuSpec rtx3090 = make_gpu("RTX 3090", "Ampere", "GDDR6X", 71, 936, 0);
  if (name == "RTX 4090") return rtx4090;
  if (name == "RTX 3090") return rtx3090;
  throw std::runtime_error("no datasheet figures in this test for " + name);
}

/// Selene / DGX A100 SuperPOD: 8 GPUs per node on NVSwitch, 8 × 200 Gb/s HDR InfiniBand
/// compute ports per node = 200e9 bytes/s per node one direction (NVIDIA DGX A100 datasheet).
/// Meta RSC (LLaMA) and Azure NDm A100 v4 (OPT) use the same 8 × 200 Gb/s per node.
ClusterSpec dgx_a100_cluster(int gpus) {
  const int nodes = std::max(1, gpus / 8);
  return make_cluster(a100(), std::min(gpus, 8), nodes, 200e9);
}

/// Megatron's FLOP count per iteration incl. recompute (Narayanan et al. 2021 Eq. 3):
/// 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)).
double megatron_flop(double batch, double s, double l, double h, double v) {
  return 96.0 * batch * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
}

TrainingStepRequest train_request(std::int64_t seq, std::int64_t global_batch, int tp, int pp, int dp, int mb,
                                  Recompute rc, TrainPrecision prec = TrainPrecision::fp16_mixed) {
  TrainingStepRequest r;
  r.precision = prec;
  r.seq_len = seq;
  r.global_batch_seqs = global_batch;
  r.layout.tp = tp;
  r.layout.pp = pp;
  r.layout.dp = dp;
  r.layout.micro_batch = mb;
  r.recompute = rc;
  r.task = Task::pretrain;
  r.stack = TrainingStack::megatron;  // Megatron-LM / Megatron-DeepSpeed / metaseq fused kernels
  return r;
}

/// Predicted Megatron-formula TFLOP/s per GPU for a GPT layout.
Prediction megatron_tflops(const nlohmann::json& row, int tp, int pp, int dp, int mb, int zero_stage,
                           const std::string& assumption) {
  const auto& m = row["model"];
  const auto& c = row["config"];
  const std::int64_t layers = m["layers"], hidden = m["hidden"];
  const std::int64_t heads = m.contains("heads") ? m["heads"].get<std::int64_t>() : 0;
  const std::int64_t vocab = m.contains("vocab") ? m["vocab"].get<std::int64_t>() : 51200;
  const std::int64_t seq = c["seq_len"], batch = c["global_batch_seqs"];
  const ModelArch arch = gpt(layers, hidden, heads, vocab, seq);
  TrainingStepRequest r = train_request(seq, batch, tp, pp, dp, mb, Recompute::full);
  r.layout.zero_stage = zero_stage;
  const int gpus = tp * pp * dp;
  const TrainingStepEstimate e = estimate_training_step(arch, r, dgx_a100_cluster(gpus), PerfAssumptions{});
  const double flop = megatron_flop(static_cast<double>(batch), static_cast<double>(seq),
                                    static_cast<double>(layers), static_cast<double>(hidden),
                                    static_cast<double>(vocab));
  return {flop / (e.step_seconds * gpus) / 1e12,
          fmt::format("{} | step {:.2f}s = compute {:.2f} + tp {:.2f} + bubble {:.2f} + p2p {:.2f} + comm {:.2f}",
                      assumption, e.step_seconds, e.compute_seconds, e.tp_allreduce_seconds, e.pp_bubble_seconds,
                      e.pp_p2p_seconds, e.exposed_comm_seconds)};
}

Prediction korthikanti(const nlohmann::json& row) {
  const auto& m = row["model"];
  const auto& c = row["config"];
  const ModelArch arch = gpt(m["layers"], m["hidden"], m["heads"], m["vocab"], m["seq_len"], m["ffn"]);
  const bool selective = c["recompute"].get<std::string>().rfind("selective", 0) == 0;
  TrainingStepRequest r = train_request(c["seq_len"], c["global_batch_seqs"], c["tp"], c["pp"], c["dp"],
                                        c["micro_batch"], selective ? Recompute::selective : Recompute::full);
  r.layout.sequence_parallel = c["sequence_parallel"];
  r.layout.virtual_stages = c["pipeline_interleaving"];
  const int gpus = r.layout.gpus();
  const TrainingStepEstimate e = estimate_training_step(arch, r, dgx_a100_cluster(gpus), PerfAssumptions{});
  return {e.step_seconds, fmt::format("compute {:.2f} + tp {:.2f} + bubble {:.2f} + p2p {:.2f}; MFU {:.1f}%",
                                      e.compute_seconds, e.tp_allreduce_seconds, e.pp_bubble_seconds,
                                      e.pp_p2p_seconds, 100 * e.mfu)};
}

/// LLaMA-1 layout (not published beyond "model and sequence parallelism", 2048 GPUs for 65B,
/// 4M-token batches): ASSUMED tp = smallest power of two ≤ 8 with 16-bit weights + gradients
/// ≤ 40 GB per GPU (7B→1, 13B→2, 33B→4, 65B→8), dp = 256 (so 65B uses the paper's 2048 GPUs),
/// ZeRO-1, micro-batch 1, 2048 sequences of 2048 tokens per step, selective recompute
/// (LLaMA §2.4 saves the expensive activations and recomputes the cheap ones), bf16.
TrainingStepEstimate llama1_step(std::int64_t params_b_x10, int& gpus) {
  ModelArch arch;
  int tp = 1;
  switch (params_b_x10) {
    case 67: arch = llama1(32, 4096, 32, 11008); tp = 1; break;
    case 130: arch = llama1(40, 5120, 40, 13824); tp = 2; break;
    case 325: arch = llama1(60, 6656, 52, 17920); tp = 4; break;
    default: arch = llama1(80, 8192, 64, 22016); tp = 8; break;
  }
  TrainingStepRequest r = train_request(2048, 2048, tp, 1, 256, 1, Recompute::selective, TrainPrecision::bf16_mixed);
  r.layout.zero_stage = 1;
  r.layout.sequence_parallel = true;
  gpus = r.layout.gpus();
  return estimate_training_step(arch, r, dgx_a100_cluster(gpus), PerfAssumptions{});
}

Prediction predict(const nlohmann::json& row) {
  const std::string id = row["id"];
  const auto& c = row["config"];
  if (id.rfind("mlm-sc21-t1-", 0) == 0) {
    // Narayanan et al. 2021 Table 1: model-parallel size = tp·pp with tp = min(8, mp) (the paper
    // keeps TP within a DGX node), micro-batch ASSUMED 1, no interleaving assumed.
    const int mp = c["model_parallel_size(tp*pp)"];
    const int tp = std::min(8, mp);
    return megatron_tflops(row, tp, mp / tp, c["dp"], 1, 0, fmt::format("tp {} pp {} mb 1 (assumed)", tp, mp / tp));
  }
  if (id.rfind("mlm-sc21-t2-zero3-", 0) == 0)
    return megatron_tflops(row, 1, 1, c["dp"], c["micro_batch"], 3, "ZeRO-3, no model parallelism");
  if (id.rfind("mlm-sc21-t2-ptd-", 0) == 0)
    return megatron_tflops(row, c["tp"], c["pp"], c["dp"], c["micro_batch"], 0, "PTD-P as given");
  if (id.rfind("korth-t5-", 0) == 0) return korthikanti(row);
  if (id == "korth-abstract-530b-2240") {
    // ASSUMED layout: the 530B row of Korthikanti Table 5 (tp 8, pp 35, interleaving 3, mb 1)
    // scaled to the abstract's 2240 GPUs with dp 8 and a 2240-sequence batch (as in SC21 Table 2).
    const ModelArch arch = gpt(105, 20480, 128, 51200, 2048, 81920);
    TrainingStepRequest r = train_request(2048, 2240, 8, 35, 8, 1, Recompute::selective);
    r.layout.sequence_parallel = true;
    r.layout.virtual_stages = 3;
    const TrainingStepEstimate e = estimate_training_step(arch, r, dgx_a100_cluster(2240), PerfAssumptions{});
    return {100.0 * e.mfu, "tp 8 pp 35 dp 8 v 3 (assumed from Table 5), selective + SP"};
  }
  if (id == "llama1-65B-tps") {
    int gpus = 0;
    const TrainingStepEstimate e = llama1_step(652, gpus);
    return {e.tokens_per_s / gpus, fmt::format("tp 8 dp 256 ZeRO-1 (assumed); MFU {:.1f}%", 100 * e.mfu)};
  }
  if (id.rfind("llama1-", 0) == 0) {
    const double params_b = row["model"]["params_b"];
    int gpus = 0;
    const TrainingStepEstimate e = llama1_step(std::llround(params_b * 10), gpus);
    const double tokens = c["train_tokens"];
    return {tokens / e.tokens_per_s * gpus / 3600.0,
            fmt::format("{} GPUs (assumed layout); MFU {:.1f}%", gpus, 100 * e.mfu)};
  }
  if (id == "opt-175b-gpuh") {
    // OPT-175B (Zhang et al. 2022 §2.2-2.3): 96 layers, h 12288, 96 heads, vocab 50272, 992 A100
    // 80GB, 180B tokens, 2M-token batches (~1024 seqs), Megatron TP 8 + FSDP. ASSUMED: dp 124,
    // ZeRO-3 (FSDP), one micro-batch of 8 sequences per step (no gradient accumulation, so the
    // parameters are gathered once per step), full activation recompute.
    const ModelArch arch = gpt(96, 12288, 96, 50272, 2048);
    TrainingStepRequest r = train_request(2048, 992, 8, 1, 124, 8, Recompute::full);
    r.layout.zero_stage = 3;
    const TrainingStepEstimate e = estimate_training_step(arch, r, dgx_a100_cluster(992), PerfAssumptions{});
    return {180e9 / e.tokens_per_s * 992 / 3600.0, fmt::format("MFU {:.1f}%", 100 * e.mfu)};
  }
  if (id == "bloom-175b-gpuh") {
    // BLOOM-176B (BigScience 2022, arXiv:2211.05100 §3.4-3.5): 384 A100 80GB on 48 nodes,
    // tp 4, pp 12, dp 8, ZeRO-1, bf16, global batch 2048 seqs of 2048, 366B tokens.
    // ASSUMED: micro-batch 2, full recompute; inter-node 4 × 100 Gb/s Omni-Path per node
    // (Jean Zay A100 partition) = 50e9 bytes/s.
    const ModelArch arch = load_preset("bloom");
    TrainingStepRequest r = train_request(2048, 2048, 4, 12, 8, 2, Recompute::full, TrainPrecision::bf16_mixed);
    r.layout.zero_stage = 1;
    const ClusterSpec cluster = make_cluster(a100(), 8, 48, 50e9);
    const TrainingStepEstimate e = estimate_training_step(arch, r, cluster, PerfAssumptions{});
    return {366e9 / e.tokens_per_s * 384 / 3600.0, fmt::format("MFU {:.1f}%", 100 * e.mfu)};
  }
  if (row["kind"] == "infer_throughput") {
    // llama.cpp llama-bench, LLaMA-2-7B-shaped model (codellama-7b: same shape, vocab 32016),
    // Q4_0 (4.5 bits/weight) is modelled as int4 (4.125 bits): the enum has no Q4_0;
    // one GPU. tg128 = decode at batch 1 (context 1..128), pp512 = prefill of 512 tokens.
    ModelArch arch = load_preset("llama-2-7b");
    const GpuSpec& gpu = gpu_by_name(row["hardware"]["gpu"].get<std::string>());
    const std::string prec = c["precision"];
    ServingPerfRequest q;
    q.quant = prec == "F16" ? WeightQuant::fp16 : prec == "Q8_0" ? WeightQuant::gguf_q8_0 : WeightQuant::int4;
    q.kv_dtype = KvDtype::fp16;
    q.concurrency = 1;
    q.engine = ServingEngine::llama_cpp;
    const std::string test = c["test"];
    q.prompt_tokens = test == "pp512" ? 512 : 1;
    q.output_tokens = test == "tg128" ? 128 : 1;
    const ServingEstimate s = estimate_serving(arch, q, make_cluster(gpu, 1, 1, 0), 8e9, PerfAssumptions{});
    if (test == "pp512") return {s.prefill_tokens_per_s, "prefill, compute-bound"};
    return {s.decode_tokens_per_s, fmt::format("decode: {:.3g} B weights + {:.3g} B KV per step",
                                               s.weights_bytes_per_step, s.kv_bytes_per_step)};
  }
  throw std::runtime_error("no evaluation rule for " + id);
}

TEST(ThroughputGroundTruth, EveryPublishedCaseWithinToleranceOrAllowListed) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/ground-truth-dev.jsonl");
  ASSERT_TRUE(in) << "tests/data/ground-truth-dev.jsonl missing";
  const std::set<std::string> kinds = {"train_throughput", "time_to_train", "infer_throughput"};
  std::string line;
  int evaluated = 0, within = 0, listed = 0;
  double sum_abs = 0, sum_abs_unlisted = 0;
  std::vector<std::string> unexpected;
  std::printf("%-32s %12s %12s %8s  %s\n", "case", "published", "predicted", "error", "notes");
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto row = nlohmann::json::parse(line);
    if (!kinds.count(row["kind"].get<std::string>())) continue;
    const std::string id = row["id"];
    if (kNotEvaluable.count(id)) {
      std::printf("%-32s not evaluable: %s\n", id.c_str(), kNotEvaluable.at(id).c_str());
      continue;
    }
    const double published = row["measured"]["value"];
    const Prediction p = predict(row);
    const double err = p.value / published - 1.0;
    ++evaluated;
    sum_abs += std::fabs(err);
    const auto gap = kKnownGaps.find(id);
    if (gap != kKnownGaps.end()) ++listed;
    else sum_abs_unlisted += std::fabs(err);
    const bool ok = gap != kKnownGaps.end() ? (err >= gap->second.lo && err <= gap->second.hi)
                                            : std::fabs(err) <= kTolerance;
    within += std::fabs(err) <= kTolerance ? 1 : 0;
    std::printf("%-32s %12.4g %12.4g %+7.1f%%  %s [%s]%s\n", id.c_str(), published, p.value, 100 * err,
                row["measured"]["unit"].get<std::string>().c_str(), p.note.c_str(),
                gap != kKnownGaps.end()
                    ? fmt::format("  KNOWN GAP (documented range {:+.0f}%..{:+.0f}%){}", 100 * gap->second.lo,
                                  100 * gap->second.hi, ok ? "" : " OUTSIDE IT")
                          .c_str()
                    : (ok ? "" : "  MISS"));
    if (!ok) unexpected.push_back(id);
  }
  std::printf("%d cases, %d within ±%.0f%%, mean |error| %.1f%% (%.1f%% over the %d cases that are not known gaps)\n",
              evaluated, within, 100 * kTolerance, evaluated ? 100 * sum_abs / evaluated : 0.0,
              evaluated > listed ? 100 * sum_abs_unlisted / (evaluated - listed) : 0.0, evaluated - listed);
  EXPECT_GE(evaluated, 40);
  EXPECT_TRUE(unexpected.empty()) << "cases outside ±25% (known gaps: outside their documented range): "
                                  << ::testing::PrintToString(unexpected);
}

// Our own H200 measurement (tests/data/h200-decode-roofline.PROVENANCE.md): the weight matmuls
// of one Llama-3.1-8B decode step at batch B, against the serving model's decode step for the
// same model at a context of ~1 token (KV reads negligible). H200 SXM datasheet: 4.8 TB/s HBM3e,
// 989.4 TFLOPS dense BF16.
TEST(ThroughputGroundTruth, H200DecodeRoofline) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/h200-decode-roofline.jsonl");
  ASSERT_TRUE(in);
  GpuSpec h200 = make_gpu("H200 SXM", "Hopper", "HBM3e", 989.4, 4800, 900);
  const ModelArch arch = load_preset("llama-3.1-8b");
  // Near the ridge point (B = 128) the max(memory, compute) roofline is optimistic: the GEMMs
  // are neither bandwidth- nor compute-saturated. A known gap with its documented range.
  const std::map<std::string, KnownGap> gaps = {
      {"llama3.1-8b-matmuls-b128", {-0.45, -0.25, "ridge point: roofline max(memory, compute) optimistic"}}};
  std::string line;
  int n = 0;
  std::vector<std::string> unexpected;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    if (!row.contains("batch")) continue;
    ServingPerfRequest q;
    q.prompt_tokens = 1;
    q.output_tokens = 1;
    q.concurrency = row["batch"];
    const ServingEstimate e = estimate_serving(arch, q, make_cluster(h200, 1, 1, 0), 1e12, PerfAssumptions{});
    // The measurement times the decode matmuls alone: compare the decode-only roofline (without
    // the steady-state prefill share the serving estimate adds to each step).
    const double decode = std::max(e.decode_memory_seconds, e.decode_compute_seconds);
    const double measured = row["seconds_median"];
    const double err = decode / measured - 1.0;
    const std::string id = row["id"];
    const auto gap = gaps.find(id);
    const bool ok = gap != gaps.end() ? err >= gap->second.lo && err <= gap->second.hi : std::fabs(err) <= kTolerance;
    std::printf("%-28s measured %.4f s predicted %.4f s %+6.1f%% (%s-bound)%s\n", id.c_str(), measured, decode,
                100 * err, e.decode_compute_bound ? "compute" : "memory",
                gap != gaps.end() ? (ok ? "  KNOWN GAP (within its range)" : "  KNOWN GAP OUTSIDE ITS RANGE")
                                  : (ok ? "" : "  MISS"));
    if (!ok) unexpected.push_back(id);
    ++n;
  }
  EXPECT_EQ(n, 13);
  EXPECT_TRUE(unexpected.empty()) << ::testing::PrintToString(unexpected);
}

// Single-GPU step times measured on an H200 by this project (tests/data/h200-measurements.jsonl,
// PROVENANCE beside it): small or layer-cut models in Hugging Face eager PyTorch, pure bf16,
// AdamW, no data loading. These steps are dominated by host/launch overhead, which the model
// carries as framework_overhead_seconds_per_layer and lora_overhead_seconds_per_layer
// (calibrated on these rows). Same ±25% bar; misses listed with the reason.
TEST(ThroughputGroundTruth, H200SingleGpuStepTimes) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/h200-measurements.jsonl");
  ASSERT_TRUE(in);
  const GpuSpec h200 = make_gpu("H200 SXM", "Hopper", "HBM3e", 989.4, 4800, 900);
  const char* const moe = "HF eager MoE blocks loop over the experts in Python (128 experts for Qwen3-30B-A3B, 8 for "
                          "Mixtral): per-expert launch overhead the per-layer overhead term does not scale with";
  const char* const balance =
      "host time and GPU time are nearly equal here; the model takes max(host, GPU) (perfect overlap of "
      "asynchronous launches), while near the balance point the measured step lies between max and sum";
  const char* const gpt2 =
      "GPT-2's layers launch fewer, smaller kernels (plain MLP, fused Conv1D q/k/v, no RoPE): ~2.3 ms of host "
      "time per layer against the 3 ms fitted on Llama/Qwen layers";
  const std::map<std::string, KnownGap> gaps = {
      {"h200-mixtral-8x7b-L1-full-b1-s2048-time", {-0.35, -0.25, moe}},
      {"h200-llama3.2-1b-full-b1-s2048-gc-time", {-0.35, -0.20, balance}},
      {"h200-llama3.2-1b-lora-b4-s1024-time", {-0.35, -0.20, balance}},
      {"h200-gpt2-full-b4-s1024-time", {0.20, 0.35, gpt2}},
      {"h200-gpt2-full-b4-s1024-gc-time", {0.20, 0.35, gpt2}},
  };
  constexpr double kFastBar = -kTolerance, kSlowBar = kTolerance;
  std::string line;
  int n = 0;
  std::vector<std::string> unexpected;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    if (row["kind"] != "train_step_time") continue;
    const auto& sa = row["arch"];
    ModelArch arch = load_preset(row["model"].get<std::string>());
    arch.num_layers = sa["num_hidden_layers"];
    if (!arch.layer_uses_sliding_window.empty())
      arch.layer_uses_sliding_window.resize(static_cast<std::size_t>(arch.num_layers));
    if (arch.moe) arch.moe->num_moe_layers = arch.num_layers;
    arch.params = count_decoder_params(arch);
    TrainingStepRequest r;
    r.precision = TrainPrecision::bf16_pure;
    r.seq_len = row["seq_len"];
    r.global_batch_seqs = row["micro_batch"];
    r.layout.micro_batch = row["micro_batch"];
    r.recompute = row["gradient_checkpointing"].get<bool>() ? Recompute::full : Recompute::none;
    r.task = row["task"] == "lora" ? Task::lora : Task::full;
    const TrainingStepEstimate e = estimate_training_step(arch, r, make_cluster(h200, 1, 1, 0), PerfAssumptions{});
    const double measured = row["measured"]["step_seconds_median"];
    const double err = e.step_seconds / measured - 1.0;
    const std::string id = row["id"];
    const auto gap = gaps.find(id);
    const bool ok = gap != gaps.end() ? err >= gap->second.lo && err <= gap->second.hi
                                      : err >= kFastBar && err <= kSlowBar;
    std::printf("%-44s measured %.4f s predicted %.4f s %+6.1f%% (compute %.4f + optimizer %.4f + overhead %.4f)%s\n",
                id.c_str(), measured, e.step_seconds, 100 * err, e.compute_seconds, e.optimizer_seconds,
                e.overhead_seconds,
                gap != gaps.end() ? (ok ? "  KNOWN GAP (within its range)" : "  KNOWN GAP OUTSIDE ITS RANGE")
                                  : (ok ? "" : "  MISS"));
    if (!ok) unexpected.push_back(id);
    ++n;
  }
  EXPECT_EQ(n, 19);
  EXPECT_TRUE(unexpected.empty()) << ::testing::PrintToString(unexpected);
}

}  // namespace
}  // namespace gpuplan
