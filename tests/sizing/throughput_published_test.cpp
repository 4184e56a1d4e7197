// Training throughput against published framework benchmark tables
// (tests/data/published-throughput.jsonl; sources and conditions in its PROVENANCE file).
// Each row is run through the same request structs the planner and CLI build
// (TrainingStepRequest + make_cluster with the bundled catalog GPU), with the layout the table
// gives. The per-case error table is printed (and copied into docs/accuracy.md).
//
// In-sample / out-of-sample: base_efficiency_hopper, base_efficiency_blackwell,
// fp8_gemm_relative_efficiency and the two MoE terms were chosen looking at the 25.11 rows
// (`mb2511-*`, in-sample) except mb2511-h100-qwen3-235b (not evaluable then: its expert-TP layout was
// not modelled; marked "in_sample": false); the 26.02 rows (`mb2602-*`, other batch sizes and
// layouts) and the torchtitan A100 rows were not looked at while choosing them (out-of-sample).
// The two H100 Qwen3-235B rows run with the recipe's expert tensor parallel 1 and EP all-to-all
// overlap (no new constant). The bar of issue 8 is ≥ 80% of the cases within ±15%.
// Pipeline stages (2026-12-01, physics3): compute is the busiest pipeline rank's — the last rank
// holds the output layer + loss (and DeepSeek-V3's MTP module) on top of its layers; the
// DeepSeek-V3 row runs the recipe's published layout (layout.pp_stage_layers). No constant was
// changed: DeepSeek-V3 went +27.7% → +5.4% and H100 Qwen3-30B +22.5% → +18.4%, but the rows whose
// recipes leave Megatron's default split (gpt-oss-120b pp 4 with a 201k vocabulary, Llama 3 70B
// pp 8) moved down by 10–14 points: the in-sample MoE / Hopper constants had been fitted without
// the stage imbalance (docs/accuracy.md). The model now reaches 13 of 18 (72%), so the test
// asserts that level (≥ 70%) — a regression guard, not the bar — and every case within ±40%.
// 2026-12-04 (bench8): 48 out-of-sample rows from the same sources' later releases (Megatron-Bridge
// 26.02 … 26.06, torchtitan's H200 WhiteFiber page), chosen by the inclusion rule in the PROVENANCE
// file before any prediction was looked at; no constant changed. Whole set 33 of 66 within ±15%.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "model/presets.hpp"
#include "sizing/perf.hpp"

namespace gpuplan {
namespace {

struct Row {
  std::string id;
  double published = 0;
  double predicted = 0;
  bool in_sample = false;
  bool added_bench8 = false;  ///< one of the out-of-sample rows added 2026-12-04 (bench8)
  std::string note;
};

Row evaluate(const nlohmann::json& j) {
  Row row;
  row.id = j["id"];
  row.published = j["measured"];
  // In-sample = the 25.11 rows the constants were chosen on; a row may say otherwise ("in_sample":
  // false: the H100 Qwen3-235B row was not evaluable then, so it did not inform any constant).
  row.in_sample = j.value("in_sample", row.id.rfind("mb2511-", 0) == 0);
  row.added_bench8 = j.contains("added");
  const ModelArch arch = load_preset(j["model"].get<std::string>());
  const GpuSpec& gpu = GpuCatalog::bundled().find(j["gpu"].get<std::string>());
  const auto& l = j["layout"];
  const int gpus = j["gpus"];
  TrainingStepRequest r;
  // Pre-training unless the row says otherwise: Megatron-Bridge's SFT rows train every weight
  // (Task::full), its LoRA rows train adapters of rank lora_rank on every linear layer.
  const std::string task = j.value("task", std::string("pretrain"));
  r.task = task == "lora" ? Task::lora : task == "sft" ? Task::full : Task::pretrain;
  if (r.task == Task::lora) r.lora_rank = j["lora_rank"];
  r.stack = row.id.rfind("mb", 0) == 0 ? TrainingStack::megatron : TrainingStack::fsdp;
  const std::string prec = j["precision"];
  r.precision = prec == "fp8" ? TrainPrecision::fp8_mixed : TrainPrecision::bf16_mixed;
  r.seq_len = l["seq_len"];
  r.global_batch_seqs = l["global_batch"];
  r.layout.tp = l["tp"];
  r.layout.pp = l["pp"];
  r.layout.dp = gpus / (r.layout.tp * r.layout.pp);
  r.layout.ep = l["ep"];
  // Expert tensor parallelism as the recipe sets it (absent: Megatron-Core's default, = tp).
  r.layout.expert_tp = l.value("etp", 0);
  // The recipe overlaps the EP all-to-alls with another micro-batch's compute (moe_a2a_overlap).
  r.ep_overlap_with_compute = l.value("moe_a2a_overlap", false);
  // The recipe overlaps TP all-gathers / reduce-scatters with the GEMMs (userbuffers, tp_comm_overlap).
  r.tp_comm_overlap = l.value("tp_comm_overlap", false);
  // Decoder layers per pipeline rank when the recipe sets a pipeline layout (DeepSeek-V3:
  // embedding + 4 | 14 × 4 | 1 + MTP + loss); absent = Megatron-Core's default uniform split.
  if (l.contains("pp_stage_layers")) r.pipeline_stage_layers = l["pp_stage_layers"].get<std::vector<int>>();
  r.layout.micro_batch = l["micro_batch"];
  r.layout.virtual_stages = l["vp"];
  r.layout.sequence_parallel = r.layout.tp > 1;
  // Megatron's distributed optimizer = ZeRO-1; FSDP = ZeRO-3.
  r.layout.zero_stage = l["fsdp"].get<bool>() ? 3 : 1;
  const std::string rc = j["recompute"];
  r.recompute = rc.rfind("full", 0) == 0 ? Recompute::full
                : rc.rfind("selective", 0) == 0 ? Recompute::selective
                                                : Recompute::none;
  const int per_node = j["gpus_per_node"];
  const ClusterSpec cluster =
      make_cluster(gpu, std::min(per_node, gpus), std::max(1, gpus / per_node), j["inter_node_bytes_per_s"]);
  PerfAssumptions a;
  // Megatron-Bridge: "we force-balance the token distribution among experts".
  if (row.id.rfind("mb", 0) == 0) a.moe_load_imbalance = 1.0;
  const TrainingStepEstimate e = estimate_training_step(arch, r, cluster, a);
  row.predicted = e.tokens_per_s / gpus;
  row.note = fmt::format("{}tp{} pp{} vp{} dp{} ep{}{}{}{} mb{} {}; compute {:.2f}s ep {:.2f}s bubble {:.2f}s comm {:.2f}s MFU {:.0f}%",
                         task == "pretrain" ? std::string() : task + " ", r.layout.tp, r.layout.pp, r.layout.virtual_stages, r.layout.dp, r.layout.ep,
                         r.layout.expert_tp > 0 ? fmt::format(" etp{}", r.layout.expert_tp) : std::string(),
                         r.ep_overlap_with_compute ? " a2a-overlap" : "",
                         r.tp_comm_overlap ? " tp-overlap" : "",
                         r.layout.micro_batch, prec, e.compute_seconds, e.ep_alltoall_seconds, e.pp_bubble_seconds,
                         e.exposed_comm_seconds + e.tp_allreduce_seconds + e.pp_p2p_seconds, 100 * e.mfu);
  if (r.layout.pp > 1 || e.pp_stage_imbalance != 1.0)
    row.note += fmt::format("; busiest rank {} × {:.3f}", e.pp_busiest_stage, e.pp_stage_imbalance);
  return row;
}

TEST(ThroughputPublished, FrameworkTablesWithinBars) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/published-throughput.jsonl");
  ASSERT_TRUE(in) << "tests/data/published-throughput.jsonl missing";
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) rows.push_back(evaluate(nlohmann::json::parse(line)));
  }
  ASSERT_EQ(rows.size(), 66u);
  int within15 = 0, in_n = 0, in_ok = 0, out_n = 0, out_ok = 0;
  int first_n = 0, first_ok = 0, added_n = 0, added_ok = 0;
  std::vector<std::string> wild_first, wild_added;
  std::printf("| case | sample | published tok/s/GPU | predicted | error | layout and terms |\n|---|---|---:|---:|---:|---|\n");
  for (const Row& r : rows) {
    const double err = r.predicted / r.published - 1.0;
    const bool ok = std::fabs(err) <= 0.15;
    within15 += ok;
    (r.in_sample ? in_n : out_n) += 1;
    (r.in_sample ? in_ok : out_ok) += ok;
    (r.added_bench8 ? added_n : first_n) += 1;
    (r.added_bench8 ? added_ok : first_ok) += ok;
    if (std::fabs(err) > 0.40) (r.added_bench8 ? wild_added : wild_first).push_back(r.id);
    std::printf("| %s | %s | %.0f | %.0f | %+.1f%% | %s |\n", r.id.c_str(), r.in_sample ? "in" : "out", r.published,
                r.predicted, 100 * err, r.note.c_str());
  }
  const int evaluated = in_n + out_n;
  std::printf("within ±15%%: %d of %d (in-sample %d/%d, out-of-sample %d/%d)\n", within15, evaluated, in_ok, in_n,
              out_ok, out_n);
  std::printf("within ±15%%, by origin: the 18 rows of 2026-12-01: %d of %d within ±15%%; the %d out-of-sample rows added 2026-12-04 (bench8): "
              "%d of %d; outside ±40%%: %zu of the added rows %s\n",
              first_ok, first_n, added_n, added_ok, added_n, wild_added.size(),
              ::testing::PrintToString(wild_added).c_str());
  std::printf("issue 8 bar (>= 80%% within ±15%%): %s\n",
              within15 >= static_cast<int>(std::ceil(0.8 * static_cast<double>(evaluated))) ? "met" : "NOT met");
  // Regression guards, not the bar. The 18 rows transcribed on 2026-12-01: 13 of 18 (72%)
  // within ±15% and every one within ±40% since physics3, asserted at that level (≥ 70%). The
  // out-of-sample rows added by bench8 (the same tables' later releases, docs/accuracy.md) bring the
  // whole set to 33 of 66 (50%): asserted at that level (≥ 50%); their misses, those beyond ±40%
  // included, are printed above and counted as misses, none is excused.
  EXPECT_GE(first_ok, static_cast<int>(std::ceil(0.70 * static_cast<double>(first_n))));
  EXPECT_TRUE(wild_first.empty()) << "2026-12-01 cases outside ±40%: " << ::testing::PrintToString(wild_first);
  EXPECT_GE(within15, static_cast<int>(std::ceil(0.50 * static_cast<double>(evaluated))));
}

}  // namespace
}  // namespace gpuplan
