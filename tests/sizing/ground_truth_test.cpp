// Accuracy of the memory model against published measurements and paper figures
// (tests/data/ground-truth-dev.jsonl, sources per row) and our own H200 measurements
// (tests/data/h200-measurements.jsonl, provenance in h200-measurements.PROVENANCE.md), and, as
// out-of-sample evidence whose misses are printed and counted but do not fail the test, torchtitan's
// benchmark pages (tests/data/torchtitan-memory.jsonl, torchtitan-memory.PROVENANCE.md).
//
// Every train_memory / infer_memory row is either mapped to a ModelArch + request here (and must
// be within its bar: 1% for rows flagged `analytic`, 15% for measurements) or is on the
// known-gap list below with the reason and its documented error range. The test prints the error of every case.
#include <gtest/gtest.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "model/hf_config.hpp"
#include "model/param_count.hpp"
#include "sizing/memory.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;
constexpr double kGiB = 1073741824.0;

/// GPUPLAN_GT_VERBOSE=1 prints every case's breakdown.
void maybe_print(const std::string& id, const MemoryBreakdown& out) {
  if (std::getenv("GPUPLAN_GT_VERBOSE") == nullptr) return;
  std::string line = id + " [" + out.phase + "]:";
  for (const auto& t : out.terms) line += fmt::format(" {}={:.2f}G", t.name, t.bytes / kGiB);
  std::cout << line << "\n";
}

std::vector<json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<json> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) rows.push_back(json::parse(line));
  }
  return rows;
}

/// Architecture from the project's bundled config (data/models/<folder>/config.json) with overrides.
ModelArch arch_from_data(const std::string& folder, const json& overrides) {
  const std::string path = std::string(GPUPLAN_SOURCE_DIR) + "/data/models/" + folder + "/config.json";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  json cfg = json::parse(ss.str());
  for (auto it = overrides.begin(); it != overrides.end(); ++it) cfg[it.key()] = it.value();
  ModelArch a = parse_hf_config(cfg, folder);
  a.name = folder;
  return a;
}

/// GPT-3-style decoder as Korthikanti et al. 2022 Table 3 describe it: MHA, 4h GeLU MLP, LayerNorm,
/// learned positions, vocabulary 51200 (Megatron GPT).
ModelArch gpt_arch(const std::string& name, std::int64_t L, std::int64_t h, std::int64_t a) {
  ModelArch m;
  m.name = name;
  m.model_type = "gpt2";
  m.num_layers = L;
  m.hidden_size = h;
  m.num_attention_heads = a;
  m.num_kv_heads = a;
  m.head_dim = h / a;
  m.intermediate_size = 4 * h;
  m.vocab_size = 51200;
  m.gated_mlp = false;
  m.norm_bias = true;
  m.attention_bias = true;
  m.mlp_bias = true;
  m.attention_output_bias = true;
  m.tied_embeddings = true;
  m.position_encoding = PositionEncoding::learned;
  m.learned_positions = 2048;
  m.params = count_decoder_params(m);
  return m;
}

/// Encoder-decoder T5 v1.1 / mT5 counted as a stack of enc+dec layers with gated-GeLU MLPs and the
/// decoder's cross-attention added to the attention parameters (T5 paper, Raffel et al. 2020 §3.1;
/// shapes from the published configs: T0_3B = T5-XL-LM-adapt d_model 2048, d_ff 5120, 32 heads × 64,
/// 24+24 layers, vocab 32128; mt0-xxl = mT5-XXL d_model 4096, d_ff 10240, 64 heads × 64, 24+24, vocab 250112).
ModelArch t5_arch(const std::string& name, std::int64_t d_model, std::int64_t d_ff, std::int64_t heads,
                  std::int64_t layers_each, std::int64_t vocab) {
  ModelArch m;
  m.name = name;
  m.model_type = "t5";
  m.num_layers = 2 * layers_each;
  m.hidden_size = d_model;
  m.num_attention_heads = heads;
  m.num_kv_heads = heads;
  m.head_dim = 64;
  m.intermediate_size = d_ff;
  m.vocab_size = vocab;
  m.gated_mlp = true;
  m.tied_embeddings = false;
  m.params = count_decoder_params(m);
  m.params.attention += layers_each * 4 * d_model * heads * 64;  // decoder cross-attention
  return m;
}

/// BLOOM-7b1 (bigscience/bloom-7b1 config: 30 layers, 4096 hidden, 32 heads, vocab 250880, 4h GeLU MLP,
/// LayerNorm with bias, ALiBi, tied embeddings, embedding LayerNorm).
ModelArch bloom_7b1() {
  ModelArch m;
  m.name = "bloomz-7b1";
  m.model_type = "bloom";
  m.num_layers = 30;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_kv_heads = 32;
  m.head_dim = 128;
  m.intermediate_size = 4 * 4096;
  m.vocab_size = 250880;
  m.gated_mlp = false;
  m.norm_bias = true;
  m.attention_bias = true;
  m.mlp_bias = true;
  m.attention_output_bias = true;
  m.tied_embeddings = true;
  m.position_encoding = PositionEncoding::alibi;
  m.params = count_decoder_params(m);
  return m;
}

double to_bytes(double value, const std::string& unit) {
  if (unit.rfind("GiB", 0) == 0) return value * kGiB;
  if (unit.rfind("GB", 0) == 0) return value * 1e9;
  if (unit.rfind("MB", 0) == 0) return value * 1048576.0;  // accelerate prints MiB as "MB"
  ADD_FAILURE() << "unknown unit " << unit;
  return value;
}

enum class Compare {
  total,        ///< |predicted / measured − 1| ≤ tolerance
  activations,  ///< same, on the activations term
  weights,      ///< same, on the weights term
  lower_bound,  ///< measured activations unknown: model states + context must be ≤ measured and ≥ (1 − tol) × measured
  fits_under,   ///< predicted ≤ measured (a "fits in X GB" claim)
  exceeds,      ///< predicted > measured (an out-of-memory report)
};

struct Case {
  std::string id;
  double predicted = 0;
  double measured = 0;
  double tolerance = 0.15;
  Compare compare = Compare::total;
  std::string assumption;
  /// A row added as out-of-sample evidence (bench8): judged and printed like the others, but a miss
  /// is reported and counted ("MISS (out of sample)"), not a test failure — the file's regression
  /// guard is its count within ±10%, asserted in the TEST.
  bool out_of_sample = false;
};

/// Known gaps: rows that miss their bar, with the reason and the documented error RANGE
/// (predicted / measured − 1) the model produces for them; a mapped row on this list must stay
/// inside its range (so the list cannot pass at any error). Rows that cannot be mapped at all
/// (range 0..0: the sequence length is not published) are reported, not evaluated.
struct Gap {
  double lo, hi;
  std::string reason;
};
const std::map<std::string, Gap>& allow_list() {
  static const std::map<std::string, Gap> kList = {
      {"tt-l31-405b-qlora-8xa100",
       {0.15, 0.30, "batch ambiguous (README table 2 vs the recipe's batch 1); the recipe (405B_qlora.yaml at 30b8519e8: "
                  "unchunked nn.CrossEntropyLoss, as mapped) does not offload activations, so that is not the cause"}},
      {"tt-l32-3b-baseline",
       {0.25, 0.45, "unpacked Alpaca samples: the real sequence lengths are not published"}},
      {"tt-l2-7b-lora-qv-r8", {0, 0, "sequence length = unpacked Alpaca samples, not published"}},
      {"tt-l2-7b-qlora", {0, 0, "sequence length = unpacked Alpaca samples, not published"}},
      {"tt-l2-7b-lora-all-r64", {0, 0, "sequence length = unpacked Alpaca samples, not published"}},
      {"peft-t0-3b-lora-ds-offload",
       {3.50, 4.00, "DeepSpeed config (ZeRO stage, what is offloaded) not published"}},
      {"peft-mt0xxl-lora-ds",
       {8.00, 8.80, "DeepSpeed config (ZeRO stage, what is offloaded) not published"}},
      {"peft-bloomz7b1-lora-ds",
       {5.00, 5.60, "DeepSpeed config (ZeRO stage, what is offloaded) not published"}},
  };
  return kList;
}

// ---- H200 rows ---------------------------------------------------------------------------------

std::optional<Case> map_h200(const json& r) {
  const std::string kind = r.at("kind");
  if (kind != "train_memory" && kind != "infer_memory") return std::nullopt;
  ModelArch arch = arch_from_data(r.at("model"), r.value("config_overrides", json::object()));
  const json& m = r.at("measured");
  Case c;
  c.id = r.at("id");
  // Peak allocated (torch.cuda.max_memory_allocated) vs our allocated terms: the total less the CUDA
  // context and the fragmentation allowance (reserved − allocated is printed separately).
  c.measured = m.at("peak_allocated_bytes").get<double>() + r.value("base_allocated_bytes", 0.0);
  const double reserved = m.at("peak_reserved_bytes").get<double>();
  const std::int64_t b = r.at("micro_batch"), s = r.at("seq_len");
  const std::string task = r.at("task");
  double predicted_total = 0, context = 0, frag = 0;
  if (task == "serve") {
    ServingMemoryRequest q;
    q.context_tokens = s;
    q.concurrency = b;
    q.prefill_chunk_tokens = b * s;  // HF generate prefills the whole batch at once
    const MemoryBreakdown out = serving_memory(arch, q);
    maybe_print(c.id, out);
    predicted_total = out.total_bytes();
    context = q.cuda_context_bytes;
    frag = out.term_bytes("fragmentation");
    // The KV cache formula is exact for these rows (PROVENANCE.md hand check 2).
    EXPECT_NEAR(out.term_bytes("kv_cache"), m.at("kv_cache_bytes").get<double>(),
                0.001 * m.at("kv_cache_bytes").get<double>())
        << c.id;
    c.assumption = "bf16 weights + KV, prefill of b·s tokens";
  } else {
    TrainingMemoryRequest q;
    q.seq_len = s;
    q.layout.micro_batch = static_cast<int>(b);
    q.recompute = r.at("gradient_checkpointing").get<bool>() ? Recompute::full : Recompute::none;
    q.flash_attention = true;           // SDPA flash backend
    q.gradients_persist = false;        // one micro-batch per step, zero_grad(set_to_none=True)
    q.optimizer_foreach = true;         // torch.optim.AdamW default on CUDA
    // measure_memory.py keeps `out = model(...)` through `out.loss.backward()`: the 16-bit logits stay.
    q.logits_kept_through_backward = true;
    q.dropout = arch.model_type == "gpt2";  // gpt2 keeps its config dropout 0.1; others 0
    // Rows measured with every decoder layer compiled (measure_memory.py --compile, as Accelerate's
    // regional compilation or torchtune's per-layer compile): the torch.compile activation profile
    // for the layers. Their LM head and loss stay eager (HF's loss upcasts the logits), so below the
    // logits term is the eager profile's, not the compiled loss's.
    const bool compiled_layers = r.value("compiled", false);
    if (compiled_layers) q.activation_profile = ActivationProfile::pytorch_compiled;
    if (task == "full") {
      q.task = Task::full;
      q.precision = TrainPrecision::bf16_pure;  // bf16 weights/grads/AdamW states, no master
    } else {
      q.task = Task::lora;
      q.precision = TrainPrecision::bf16_mixed;  // frozen bf16 base, fp32 adapters + states
      q.lora_rank = r.at("lora").at("r");
    }
    const MemoryBreakdown out = training_memory(arch, q);
    maybe_print(c.id, out);
    predicted_total = out.total_bytes();
    context = q.cuda_context_bytes;
    frag = out.term_bytes("fragmentation");
    if (compiled_layers) {
      TrainingMemoryRequest eager_loss = q;
      eager_loss.activation_profile = ActivationProfile::pytorch_eager;
      const MemoryBreakdown e = training_memory(arch, eager_loss);
      if (out.phase == "forward/backward") {
        predicted_total += e.term_bytes("logits") - out.term_bytes("logits");
      } else if (e.phase != out.phase) {
        ADD_FAILURE() << c.id << ": compiled peak phase " << out.phase << ", eager-loss peak phase " << e.phase
                      << ": the logits swap below would not hold";
      }
    }
    // Model states are exact (PROVENANCE.md hand checks 1 and 3).
    if (task == "full") {
      EXPECT_NEAR(out.term_bytes("optimizer_state"), m.at("optimizer_state_bytes_direct").get<double>(),
                  0.01 * m.at("optimizer_state_bytes_direct").get<double>())
          << c.id;
    }
    c.assumption = fmt::format("{} ({}{})", out.phase, task == "full" ? "pure bf16 AdamW" : "LoRA r16 fp32 adapters",
                               compiled_layers ? ", compiled layers, eager loss" : "");
  }
  c.predicted = predicted_total - context - frag;  // torch's counters exclude the CUDA context
  c.assumption += fmt::format("; reserved {:.2f}G vs total−context {:.2f}G: {:+.1f}%", reserved / kGiB,
                              (predicted_total - context) / kGiB, 100.0 * ((predicted_total - context) / reserved - 1));
  return c;
}

// ---- ground-truth-dev rows ---------------------------------------------------------------------

std::optional<Case> map_dev(const json& r) {
  const std::string id = r.at("id");
  const std::string kind = r.at("kind");
  if (kind != "train_memory" && kind != "infer_memory") return std::nullopt;
  const json& meas = r.at("measured");
  Case c;
  c.id = id;
  if (meas.at("value").is_number()) c.measured = to_bytes(meas.at("value").get<double>(), meas.at("unit"));

  // Korthikanti et al. 2022 Figure 1: activation memory per GPU, analytic (1% bar).
  if (id.rfind("korth-", 0) == 0) {
    const json& mo = r.at("model");
    const json& cf = r.at("config");
    ModelArch a = gpt_arch(mo.at("name"), mo.at("layers"), mo.at("hidden"), mo.at("heads"));
    TrainingMemoryRequest q;
    q.activation_profile = ActivationProfile::megatron;
    q.precision = TrainPrecision::fp16_mixed;
    q.optimizer_foreach = false;  // Megatron's fused Adam: no step temporary
    q.dropout = true;
    q.flash_attention = false;
    q.seq_len = cf.at("seq_len");
    q.layout.micro_batch = cf.at("micro_batch");
    q.layout.tp = cf.at("tp");
    q.layout.pp = cf.at("pp");
    q.layout.virtual_stages = cf.at("pipeline_interleaving");
    q.layout.sequence_parallel = cf.at("sequence_parallel");
    q.recompute = cf.at("recompute") == "selective" ? Recompute::selective : Recompute::none;
    const MemoryBreakdown out = training_memory(a, q);
    maybe_print(c.id, out);
    c.predicted = out.term_bytes("activations");
    c.compare = Compare::activations;
    c.tolerance = 0.01;
    c.assumption = "activations term, Megatron profile, dropout, no FlashAttention";
    return c;
  }

  auto llama = [](const char* folder) { return arch_from_data(folder, json::object()); };

  // torchtune README tables (bf16, AdamW unless stated, packed sequences).
  if (id.rfind("tt-", 0) == 0) {
    const json& cf = r.at("config");
    TrainingMemoryRequest q;
    q.precision = TrainPrecision::bf16_pure;  // torchtune trains the whole model (incl. adapters) in bf16
    q.gradients_persist = false;
    q.optimizer_foreach = false;  // torchtune recipes use fused AdamW (no foreach temporary)
    q.seq_len = cf.value("seq_len", 2048);
    q.layout.micro_batch = cf.value("batch", 1);
    q.chunked_cross_entropy = true;  // CEWithChunkedOutputLoss (torchtune llama3.x recipes)
    q.cross_entropy_chunk_tokens = q.seq_len * q.layout.micro_batch / 8;  // 8 chunks
    // torchtune's MultiHeadAttention copies K and V to the query heads before attention (memory.hpp
    // kv_expanded_for_attention; torchtune/modules/attention.py at 30b8519e8 and 1814feb17, the README
    // tables' commits).
    q.kv_expanded_for_attention = true;
    ModelArch a;
    const std::string method = cf.value("method", "");
    if (id.rfind("tt-l31-8b", 0) == 0) a = llama("meta-llama__Llama-3.1-8B");
    else if (id.rfind("tt-l31-70b", 0) == 0) a = llama("meta-llama__Llama-3.1-70B");
    else if (id.rfind("tt-l31-405b", 0) == 0) a = llama("meta-llama__Llama-3.1-405B");
    else if (id.rfind("tt-l32-3b", 0) == 0) a = llama("meta-llama__Llama-3.2-3B-Instruct");
    else return std::nullopt;
    q.task = method == "lora" ? Task::lora : method == "qlora" ? Task::qlora : Task::full;
    if (q.task != Task::full) {
      q.lora_rank = cf.value("lora_rank", 8);
      q.lora_targets = {"q", "v", "o", "gate", "up", "down"};  // q,v,output_proj + MLP (torchtune defaults)
      q.recompute = Recompute::full;
    }
    // The Llama 3.1 rows ran the recipes as they were at the table's commit (30b8519e8, 2024-09-24);
    // their LoRA targets changed to q,v,output_proj + MLP only in e137afeba (2024-11-07, "update configs"):
    // recipes/configs/llama3_1/8B_lora_single_device.yaml lora_attn_modules [q_proj, v_proj], no MLP;
    // 8B_qlora_single_device.yaml and 405B_qlora.yaml [q_proj, v_proj, k_proj, output_proj] + MLP;
    // 70B_lora.yaml [q_proj, k_proj, v_proj], no MLP.
    if (id == "tt-l31-8b-lora-4090" || id == "tt-l31-8b-lora-a6000") q.lora_targets = {"q", "v"};
    if (id == "tt-l31-8b-qlora-4090" || id == "tt-l31-405b-qlora-8xa100")
      q.lora_targets = {"q", "k", "v", "o", "gate", "up", "down"};
    if (id == "tt-l31-70b-lora-8xa100") q.lora_targets = {"q", "k", "v"};
    // 405B_qlora.yaml at 30b8519e8: loss torch.nn.CrossEntropyLoss (unchunked; CEWithChunkedOutputLoss
    // only from df5063775, 2024-12-13).
    if (id == "tt-l31-405b-qlora-8xa100") q.chunked_cross_entropy = false;
    if (cf.value("fsdp", false)) {
      q.layout.dp = 8;
      q.layout.zero_stage = 3;
      q.gradients_persist = true;
      q.recompute = Recompute::full;
    }
    if (cf.value("fsdp_cpu_offload", false)) {
      q.layout.offload_params = true;
      q.layout.offload_optimizer = true;
    }
    if (id == "tt-l31-8b-lora-4090" || id == "tt-l31-8b-qlora-4090") q.recompute = Recompute::full;
    // The rows' published config (README table; recipe 8B_full_single_device.yaml at 30b8519e8, both
    // cards): optimizer_in_bwd=True, bitsandbytes PagedAdamW8bit, activation checkpointing on.
    bool paged_optimizer = false;
    if (id == "tt-l31-8b-full-4090" || id == "tt-l31-8b-full-a6000") {
      q.recompute = Recompute::full;
      q.optimizer_in_backward = true;
      q.optimizer = Optimizer::adamw_8bit;
      paged_optimizer = true;
    }
    // Assumption (printed): the two A6000 rows ran without activation checkpointing. The README does
    // not say so; the recipes turn it on, yet each A6000 row measures about twice its 4090 twin of the
    // same recipe (30.3 vs 16.2 GiB LoRA, 37.4 vs 18.9 GiB full) at higher tokens/s (4699 vs 3083,
    // 2579 vs 1650) on a card of similar dense bf16 rate (data/gpus.csv: 154.8 vs 165.2 TFLOPS): consistent
    // with no recompute on the 48 GB card.
    if (id == "tt-l31-8b-lora-a6000" || id == "tt-l31-8b-full-a6000") q.recompute = Recompute::none;
    // torch.compile (the recipes' `compile: True`: each TransformerSelfAttentionLayer and the loss
    // compiled; torchtune training/_compile.py and the recipes' loss set-up): the rows say so.
    if (cf.value("compile", false)) q.activation_profile = ActivationProfile::pytorch_compiled;
    if (id.rfind("tt-l32-3b", 0) == 0) {
      // Cumulative optimisation stack (torchtune README 'Optimization flags').
      const std::string step = id.substr(std::string("tt-l32-3b-").size());
      // Every row from '+ compile' on is compiled (the table is cumulative).
      if (step != "baseline" && step != "packed") q.activation_profile = ActivationProfile::pytorch_compiled;
      q.chunked_cross_entropy = step != "packed" && step != "compile" && step != "baseline";
      q.recompute = (step == "packed" || step == "compile" || step == "chunked-ce") ? Recompute::none
                                                                                     : Recompute::full;
      q.optimizer_in_backward = step == "optimizer-step-in-backward" || step == "activation-offloading" ||
                                step == "8-bit-adamw";
      if (step == "8-bit-adamw") q.optimizer = Optimizer::adamw_8bit;
      // '+ activation offloading' and every later row of the cumulative table (the LoRA/QLoRA
      // rows drop only optimizer_in_bwd and 8-bit AdamW): enable_activation_offloading.
      q.offload_activations = step == "activation-offloading" || step == "8-bit-adamw" || step == "lora" ||
                              step == "qlora";
      if (step == "lora" || step == "qlora") {
        // The configs the README's command names (llama3_2/3B_qlora_single_device.yaml, and
        // 3B_lora_single_device.yaml, at 1814feb17, the table's commit, and unchanged since d002d45e3):
        // lora_rank 64 on q_proj, v_proj, output_proj with apply_lora_to_mlp: True.
        q.lora_rank = 64;
        q.lora_targets = {"q", "v", "o", "gate", "up", "down"};
      }
    }
    const MemoryBreakdown out = training_memory(a, q);
    maybe_print(c.id, out);
    // torchtune logs torch.cuda memory stats (no CUDA context, no reserve slack).
    c.predicted = out.total_bytes() - q.cuda_context_bytes - out.term_bytes("fragmentation");
    // bitsandbytes paged optimizers allocate their state with cudaMallocManaged (CUDA unified memory,
    // bitsandbytes docs "Paged optimizers"), outside PyTorch's caching allocator, so torch.cuda's
    // peak statistics that torchtune prints do not contain it (the driver pages it to host memory
    // under pressure). The measurement-method mapping, like the context and slack above.
    if (paged_optimizer) c.predicted -= out.term_bytes("optimizer_state");
    c.assumption = fmt::format("{} rank {}, recompute {}, chunked CE {}{}{}, {}", task_name(q.task), q.lora_rank,
                               recompute_name(q.recompute), q.chunked_cross_entropy,
                               q.activation_profile == ActivationProfile::pytorch_compiled ? ", torch.compile" : "",
                               q.offload_activations ? ", activations offloaded" : "", out.phase);
    if (paged_optimizer) c.assumption += "; optimizer in backward, paged 8-bit AdamW state (CUDA managed memory) not in torch.cuda's peak";
    if (q.task != Task::full) c.assumption += "; LoRA on " + fmt::format("{}", fmt::join(q.lora_targets, ","));
    if (id == "tt-l31-8b-lora-a6000" || id == "tt-l31-8b-full-a6000")
      c.assumption += "; activation checkpointing assumed off (not published; the recipe turns it on)";
    return c;
  }

  // PEFT README (A100 80GB, fp32; batch and sequence length not published, so only the model states,
  // CUDA context and allocator allowance are sized: they must not exceed the measurement and must be
  // within 15% below it). transformers' AdamW of 2023 (no foreach temporary), grads kept between steps
  // (zero_grad without set_to_none, torch < 2.0). "GPU memory" read as nvidia-smi (context included).
  // "OOM" rows: the lower bound itself must exceed the 80 GB card.
  if (id.rfind("peft-", 0) == 0) {
    ModelArch a;
    if (id.find("t0-3b") != std::string::npos) a = t5_arch("T0_3B", 2048, 5120, 32, 24, 32128);
    else if (id.find("mt0xxl") != std::string::npos) a = t5_arch("mt0-xxl", 4096, 10240, 64, 24, 250112);
    else a = bloom_7b1();
    TrainingMemoryRequest q;
    q.precision = TrainPrecision::fp32;
    q.seq_len = 1;  // batch and length not published: size the model states + context only (a lower bound)
    q.layout.micro_batch = 1;
    q.optimizer_foreach = false;
    q.gradients_persist = true;
    const std::string method = r.at("config").at("method");
    if (method == "lora") {
      q.task = Task::lora;
      q.lora_rank = 8;
      q.lora_targets = a.model_type == "t5" ? std::vector<std::string>{"q", "v"}
                                            : std::vector<std::string>{"q", "k", "v"};
    } else {
      q.task = Task::full;
    }
    const MemoryBreakdown out = training_memory(a, q);
    maybe_print(c.id, out);
    c.predicted = out.total_bytes();
    c.compare = Compare::lower_bound;
    c.assumption = fmt::format("fp32 {}, activations unknown: model states + context + allowance as lower bound", method);
    if (!meas.at("value").is_number()) {  // "OOM" on an 80 GB A100
      c.compare = Compare::exceeds;
      c.measured = 80e9;
    }
    return c;
  }

  // QLoRA abstract: LLaMA-65B fine-tunes within 48 GB (NF4 + double quant + paged optimizer, r=64 on
  // all linear layers, bf16 adapters per the QLoRA code, gradient checkpointing, batch 1 × 512 tokens).
  if (id == "qlora-65b-48gb") {
    ModelArch a;
    a.name = "LLaMA-65B";
    a.model_type = "llama";
    a.num_layers = 80;
    a.hidden_size = 8192;
    a.num_attention_heads = 64;
    a.num_kv_heads = 64;
    a.head_dim = 128;
    a.intermediate_size = 22016;
    a.vocab_size = 32000;
    a.params = count_decoder_params(a);
    TrainingMemoryRequest q;
    q.task = Task::qlora;
    q.precision = TrainPrecision::bf16_pure;
    q.lora_rank = 64;
    q.seq_len = 512;
    q.recompute = Recompute::full;
    q.gradients_persist = false;
    q.optimizer_foreach = false;  // paged AdamW (bitsandbytes kernels)
    const MemoryBreakdown out = training_memory(a, q);
    maybe_print(c.id, out);
    c.predicted = out.total_bytes();
    c.compare = Compare::fits_under;
    c.measured = 48e9;
    c.assumption = "QLoRA r64 all-linear, b1 s512, gc";
    return c;
  }

  // HF Accelerate model-size estimator: bert-base-cased, fp32 load = 4 B/param. BERT-base-cased:
  // 12 layers, 768 hidden, 12 heads, 3072 GeLU MLP, vocab 28996, 512 positions + 2 token types, pooler.
  if (id == "accel-bert-base-cased-load") {
    ModelArch a;
    a.name = "bert-base-cased";
    a.model_type = "bert";
    a.num_layers = 12;
    a.hidden_size = 768;
    a.num_attention_heads = 12;
    a.num_kv_heads = 12;
    a.head_dim = 64;
    a.intermediate_size = 3072;
    a.vocab_size = 28996;
    a.gated_mlp = false;
    a.norm_bias = true;
    a.attention_bias = a.mlp_bias = a.attention_output_bias = true;
    a.tied_embeddings = true;
    a.position_encoding = PositionEncoding::learned;
    a.learned_positions = 512;
    a.params = count_decoder_params(a);
    a.params.embeddings += 2 * 768;     // token-type embeddings
    a.params.other += 768 * 768 + 768;  // pooler
    TrainingMemoryRequest q;
    q.precision = TrainPrecision::fp32;
    const MemoryBreakdown out = training_memory(a, q);
    maybe_print(c.id, out);
    c.predicted = out.term_bytes("weights");
    c.compare = Compare::weights;
    c.assumption = "weights term at fp32";
    return c;
  }
  return std::nullopt;
}

// ---- ground-truth-sizing rows (our additions from published tables, sources in each row) --------

std::optional<Case> map_own(const json& r) {
  const std::string id = r.at("id");
  if (id.rfind("zero-f1-", 0) != 0) return std::nullopt;
  // ZeRO Figure 1: model states of a Ψ-parameter model, fp16 mixed Adam (K = 12), N_d = 64.
  ModelArch m;
  m.name = "zero-figure-1";
  m.family = ModelFamily::diffusion_transformer;  // no layer shape: the figure sizes model states only
  m.params.other = static_cast<std::int64_t>(r.at("model").at("params").get<double>());
  TrainingMemoryRequest q;
  q.precision = TrainPrecision::fp16_mixed;
  q.layout.dp = r.at("config").at("dp");
  q.layout.zero_stage = r.at("config").at("zero_stage");
  const MemoryBreakdown out = training_memory(m, q);
  Case c;
  c.id = id;
  c.measured = to_bytes(r.at("measured").at("value").get<double>(), r.at("measured").at("unit"));
  c.predicted = out.term_bytes("weights") + out.term_bytes("gradients") + out.term_bytes("optimizer_state");
  // Analytic: 1%, or the figure's printed rounding (one decimal of GB) where that is larger.
  c.tolerance = std::max(0.01, 0.05e9 / c.measured);
  c.assumption = "weights + gradients + optimizer_state";
  return c;
}

// ---- torchtitan benchmark pages (tests/data/torchtitan-memory.jsonl, out of sample) ---------------

/// torchtitan's "Memory(GiB)" is max_reserved: torch.cuda.memory_stats() `reserved_bytes.all.peak`
/// (torchtitan/metrics.py at 9dec370, torchtitan/components/metrics.py at e7c0cae; the `memory:` log
/// line prints max_reserved_gib). Reserved includes the caching allocator's slack, so it is compared
/// with the model's total less the CUDA context (the fragmentation allowance stays in), as the H200
/// rows' reserved figures are (map_h200).
std::optional<Case> map_torchtitan(const json& r) {
  Case c;
  c.id = r.at("id");
  const json& l = r.at("layout");
  const ModelArch a = arch_from_data(r.at("model"), json::object());
  TrainingMemoryRequest q;
  q.task = Task::pretrain;
  // FSDP2 MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32): fp32 sharded parameters, fp32
  // sharded gradients and AdamW states = 16 B/param over the shard group, as bf16_mixed under ZeRO-3
  // (2 + 2 + 4 + 8); layers gathered in bf16 for compute.
  q.precision = TrainPrecision::bf16_mixed;
  q.layout.tp = l.at("tp");
  q.layout.pp = l.at("pp");
  q.layout.dp = l.at("fsdp");
  q.layout.zero_stage = 3;
  q.layout.sequence_parallel = q.layout.tp > 1;  // torchtitan's TP plan shards the norms' activations (SequenceParallel)
  q.layout.micro_batch = l.at("local_batch");
  q.seq_len = l.at("seq_len");
  q.flash_attention = true;         // SDPA flash backend
  q.gradients_persist = false;      // optimizers.zero_grad() each step, one micro-batch
  q.optimizer_foreach = r.at("optimizer_foreach");  // 9dec370: foreach unless --optimizer.fused; e7c0cae: fused
  q.logits_kept_through_backward = false;  // train.py: `del pred` before loss.backward()
  // The final norm, output projection and loss run eagerly (memory.hpp eager_head_and_loss) unless the loss is
  // compiled: at 9dec370 never (train.py: `loss_fn = torch.compile(loss_fn)` commented out, "compiling loss
  // function causes CUDA errors"; apply_compile compiles each TransformerBlock only); at e7c0cae when compile is
  // on (torchtitan/components/loss.py build_cross_entropy_loss), kept on the activation profile's accounting.
  const std::string commit = r.at("torchtitan_commit");
  q.eager_head_and_loss = commit.rfind("9dec370", 0) == 0 || !r.at("compile").get<bool>();
  // Vocabulary-parallel loss with TP: parallel_dims.py loss_parallel_enabled = tp > 1 and not
  // --training.disable_loss_parallel (set neither on the page nor in train_configs/llama3_70b.toml).
  q.loss_parallel = q.layout.tp > 1;
  const std::string rc = r.at("recompute");
  // "selective_op": torchtitan's per-op SAC (the _save_list policy at the named commit): Recompute::op_selective.
  q.recompute = rc == "full" ? Recompute::full : rc == "selective_op" ? Recompute::op_selective : Recompute::selective;
  if (r.at("compile").get<bool>()) q.activation_profile = ActivationProfile::pytorch_compiled;
  // e7c0cae: the compiled loss upcasts the bf16 logits itself (torchtitan/components/loss.py, build_cross_entropy_loss).
  q.logits_upcast_in_loss = r.value("logits_upcast_in_loss", false);
  const MemoryBreakdown out = training_memory(a, q);
  maybe_print(c.id, out);
  c.measured = to_bytes(r.at("measured").at("value").get<double>(), r.at("measured").at("unit"));
  c.predicted = out.total_bytes() - q.cuda_context_bytes;
  c.out_of_sample = r.value("sample", std::string()) == "out";
  c.assumption = fmt::format("reserved vs total−context; fsdp {} tp {} b{} s{}, recompute {}{}{}{}, {}", q.layout.dp,
                             q.layout.tp, q.layout.micro_batch, q.seq_len, rc,
                             r.at("compile").get<bool>()
                                 ? (q.logits_upcast_in_loss ? ", torch.compile (loss too, upcasting inside)"
                                    : q.eager_head_and_loss ? ", torch.compile (blocks only; eager loss)"
                                                            : ", torch.compile")
                                 : "",
                             r.at("float8").get<bool>() ? ", float8 linears (not modelled)" : "",
                             r.value("note", std::string()).find("async TP") != std::string::npos ? ", async TP (not modelled)" : "",
                             out.phase);
  return c;
}

struct Outcome {
  Case c;
  double error = 0;
  bool pass = false;
};

Outcome judge(const Case& c) {
  Outcome o{c, 0, false};
  switch (c.compare) {
    case Compare::fits_under:
      o.error = c.predicted / c.measured - 1.0;
      o.pass = c.predicted <= c.measured;
      break;
    case Compare::exceeds:
      o.error = c.predicted / c.measured - 1.0;
      o.pass = c.predicted > c.measured;
      break;
    case Compare::lower_bound:
      o.error = c.predicted / c.measured - 1.0;
      o.pass = o.error <= 0.0 && o.error >= -c.tolerance;
      break;
    default:
      o.error = c.predicted / c.measured - 1.0;
      o.pass = std::fabs(o.error) <= c.tolerance;
  }
  return o;
}

/// Returns the number of measured cases within ±10%.
int run_file(const std::string& file, const std::function<std::optional<Case>(const json&)>& map) {
  const auto rows = read_jsonl(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/" + file);
  // ±10% is counted over the rows that publish a number; an "OOM" or "fits in X GB" row is a claim
  // (predicted above / below the card), judged pass/fail and counted apart — its ratio to the
  // card's size is not an error.
  int mapped = 0, failed = 0, within10 = 0, claims = 0, claims_hold = 0, out_misses = 0;
  std::string report = fmt::format("\n{:<44} {:>10} {:>10} {:>8}  {}\n", "case", "measured", "predicted", "error",
                                   "status / assumption");
  for (const auto& r : rows) {
    const std::string kind = r.at("kind");
    if (kind != "train_memory" && kind != "infer_memory") continue;
    const std::string id = r.at("id");
    const auto allowed = allow_list().find(id);
    std::optional<Case> c;
    try {
      c = map(r);
    } catch (const std::exception& e) {
      ADD_FAILURE() << id << ": " << e.what();
      continue;
    }
    if (!c) {
      if (allowed == allow_list().end()) {
        ADD_FAILURE() << id << ": not mapped and not on the allow-list";
      } else {
        report += fmt::format("{:<44} {:>10} {:>10} {:>8}  NOT EVALUATED (known gap): {}\n", id, "", "", "",
                              allowed->second.reason);
      }
      continue;
    }
    ++mapped;
    const Outcome o = judge(*c);
    const bool in_gap_range = allowed != allow_list().end() && o.error >= allowed->second.lo && o.error <= allowed->second.hi;
    std::string status = o.pass ? "ok"
                         : allowed != allow_list().end()
                             ? fmt::format("KNOWN GAP {} its range {:+.0f}%..{:+.0f}%: {}",
                                           in_gap_range ? "within" : "OUTSIDE", 100 * allowed->second.lo,
                                           100 * allowed->second.hi, allowed->second.reason)
                         : c->out_of_sample ? "MISS (out of sample)"
                                            : "MISS";
    const bool claim = c->compare == Compare::exceeds || c->compare == Compare::fits_under;
    if (claim) {
      ++claims;
      claims_hold += o.pass ? 1 : 0;
    } else {
      within10 += std::fabs(o.error) <= 0.10 ? 1 : 0;
    }
    report += fmt::format("{:<44} {:>9.2f}G {:>9.2f}G {:>+7.1f}%  {} ({})\n", id, c->measured / kGiB,
                          c->predicted / kGiB, 100.0 * o.error, status, c->assumption);
    if (!o.pass && !in_gap_range && c->out_of_sample) {
      ++out_misses;
    } else if (!o.pass && !in_gap_range) {
      ++failed;
      ADD_FAILURE() << id << ": predicted " << c->predicted / kGiB << " GiB vs measured " << c->measured / kGiB
                    << " GiB (" << 100.0 * o.error << "%, bar " << 100.0 * c->tolerance << "%)";
    }
  }
  std::cout << report
            << fmt::format("{}: {} cases mapped, {} outside the bar{}; {} of {} measured cases within ±10% (issue 8 "
                           "bar: ≥ 90%); {} of {} OOM / fits-under claims hold\n",
                           file, mapped, failed,
                           out_misses > 0 ? fmt::format(" (+ {} out-of-sample misses)", out_misses) : std::string(),
                           within10, mapped - claims, claims_hold, claims);
  EXPECT_GT(mapped, 0);
  return within10;
}

TEST(GroundTruth, PublishedMemoryCasesWithinBar) { run_file("ground-truth-dev.jsonl", map_dev); }

TEST(GroundTruth, OwnPublishedCasesWithinBar) { run_file("ground-truth-sizing.jsonl", map_own); }

TEST(GroundTruth, H200MeasurementsWithinBar) { run_file("h200-measurements.jsonl", map_h200); }

// torchtitan's benchmark pages (H100 96 GB and H200), added 2026-12-04 (bench8) as out-of-sample rows:
// misses are printed and counted, not excused; the test fails when a row does not map or throws.
// No level is asserted: the first evaluation reached 0 of 11 within ±10% (docs/accuracy.md).
TEST(GroundTruth, TorchtitanMemoryOutOfSample) { run_file("torchtitan-memory.jsonl", map_torchtitan); }

TEST(GroundTruth, H200CompiledMeasurementsWithinBar) { run_file("h200-compiled.jsonl", map_h200); }

// The eager cases of the same shapes, measured in the same call (their peaks repeat the 2026-11-30 rows).
TEST(GroundTruth, H200CompiledEagerTwinsWithinBar) { run_file("h200-compiled-eager-twins.jsonl", map_h200); }

}  // namespace
}  // namespace gpuplan
