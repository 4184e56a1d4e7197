// Issue 8's throughput bar through the public path: every published training run of
// tests/data/published-throughput.jsonl (Megatron-Bridge performance tables, torchtitan
// benchmarks; sources and recipes per row in tests/data/published-throughput.PROVENANCE.md) is
// timed by the built `gpuplan estimate` with the flags a user would type to describe that run:
//   --model --task --gpu --gpus --gpus-per-node --inter-node-gbit-per-s --precision --seq
//   --global-batch --tp --pp --dp --ep --micro-batch --virtual-stages --zero --recompute --stack
//   and, where the recipe sets them, --expert-tp --ep-overlap --tp-comm-overlap --pp-layers
//   --moe-dispatcher --cuda-graph --recompute-modules;
//   --grads-16bit on the Megatron-Bridge rows (every perf config of the tables' commits sets
//   grad_reduce_in_fp32 = False: scripts/performance/configs/*/…_llm_{pretrain,finetune}.py at
//   97ad8cc6f, c0b9a0003, 17a381f95, 63b08b397);
//   --moe-imbalance 1 on the Megatron-Bridge MoE rows ("we force-balance the token distribution
//   among experts", moe_router_force_load_balancing in every MoE recipe of the tables);
//   --ignore-memory: each published layout ran on its GPU, so it is timed even where gpuplan's
//   memory model says it does not fit; that disagreement is counted and printed separately (a
//   published layout that gpuplan says does not fit is a memory over-estimate, docs/accuracy.md).
// The per-row table (published, predicted, error, layout, step terms, memory ÷ capacity) is
// printed for docs/accuracy.md (scripts/regen-accuracy-doc.py, section 1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "binary_e2e.hpp"

namespace gpuplan::e2e {
namespace {

using nlohmann::json;

class ThroughputPublishedE2E : public BinaryE2E<ThroughputPublishedE2E> {
 public:
  static constexpr const char* kName = "throughput-published";
};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

/// "tp1 pp8 vp4 dp16 ep32 etp1 mb1 zero1 none" from the estimate's layout.
std::string layout_text(const json& l) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "tp%d pp%d vp%d dp%d ep%d%s mb%d zero%d %s", l["tp"].get<int>(), l["pp"].get<int>(),
                l["virtual_stages"].get<int>(), l["dp"].get<int>(), l["ep"].get<int>(),
                l.value("expert_tp", 0) > 0 ? (" etp" + std::to_string(l["expert_tp"].get<int>())).c_str() : "",
                l["micro_batch"].get<int>(), l["zero_stage"].get<int>(), l["recompute"].get<std::string>().c_str());
  return buf;
}

/// The `gpuplan estimate` arguments that describe the published run `j`.
std::string estimate_args(const json& j) {
  const json& l = j["layout"];
  const int gpus = j["gpus"];
  const int tp = l["tp"], pp = l["pp"];
  const std::string id = j["id"];
  const bool megatron = id.rfind("mb", 0) == 0;
  const std::string task = j.value("task", std::string("pretrain"));
  const std::string rc = j["recompute"];
  std::string a = "estimate --model " + quoted(j["model"].get<std::string>()) +
                  " --task " + (task == "sft" ? std::string("full") : task) +
                  " --gpu " + quoted(j["gpu"].get<std::string>()) + " --gpus " + std::to_string(gpus) +
                  " --gpus-per-node " + std::to_string(std::min(j["gpus_per_node"].get<int>(), gpus)) +
                  " --inter-node-gbit-per-s " + number(j["inter_node_bytes_per_s"].get<double>() * 8 / 1e9) +
                  " --precision " + (j["precision"] == "fp8" ? "fp8_mixed" : "bf16_mixed") +
                  " --seq " + std::to_string(l["seq_len"].get<int>()) +
                  " --global-batch " + std::to_string(l["global_batch"].get<int>()) +
                  " --tp " + std::to_string(tp) + " --pp " + std::to_string(pp) +
                  " --dp " + std::to_string(gpus / (tp * pp)) + " --ep " + std::to_string(l["ep"].get<int>()) +
                  " --micro-batch " + std::to_string(l["micro_batch"].get<int>()) +
                  " --virtual-stages " + std::to_string(l["vp"].get<int>()) +
                  // Megatron's distributed optimizer = ZeRO-1; FSDP (Megatron-FSDP, torchtitan) = ZeRO-3.
                  " --zero " + (l["fsdp"].get<bool>() ? "3" : "1") +
                  " --recompute " + (rc.rfind("full", 0) == 0 ? "full" : rc.rfind("selective", 0) == 0 ? "selective" : "none") +
                  " --stack " + (megatron ? "megatron" : "fsdp") +
                  // A training budget of 100 steps: the tokens do not change the step time.
                  " --tokens " + std::to_string(static_cast<long long>(l["global_batch"].get<int>()) * l["seq_len"].get<int>() * 100) +
                  " --ignore-memory";
  if (task == "lora") a += " --lora-rank " + std::to_string(j["lora_rank"].get<int>());
  if (megatron) a += " --grads-16bit";
  // Every MoE row of the tables runs with EP > 1 (the dense Llama rows with EP 1, where an MoE
  // switch is refused).
  if (megatron && l["ep"].get<int>() > 1) a += " --moe-imbalance 1";
  if (l.value("etp", 0) > 0) a += " --expert-tp " + std::to_string(l["etp"].get<int>());
  if (l.value("moe_a2a_overlap", false)) a += " --ep-overlap";
  if (l.value("tp_comm_overlap", false)) a += " --tp-comm-overlap";
  // The recipe's MoE token dispatcher and CUDA-graph mode (moe_token_dispatcher_type /
  // moe_flex_dispatcher_backend, cuda_graph_impl at the release's tag; PROVENANCE per row).
  if (l.contains("moe_dispatcher")) a += " --moe-dispatcher " + l["moe_dispatcher"].get<std::string>();
  if (l.contains("cuda_graph")) a += " --cuda-graph " + l["cuda_graph"].get<std::string>();
  // The recipe's selective recompute modules (recompute_modules at the release's tag).
  if (l.contains("recompute_modules")) {
    std::string list;
    for (const auto& m : l["recompute_modules"]) list += (list.empty() ? "" : ",") + m.get<std::string>();
    a += " --recompute-modules " + list;
  }
  if (l.contains("pp_stage_layers")) {
    std::string list;
    for (int n : l["pp_stage_layers"]) list += (list.empty() ? "" : ",") + std::to_string(n);
    a += " --pp-layers " + list;
  }
  return a;
}

TEST_F(ThroughputPublishedE2E, FrameworkTablesThroughTheBinary) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/published-throughput.jsonl");
  ASSERT_TRUE(in) << "tests/data/published-throughput.jsonl missing";
  std::string line;
  int n = 0, ok = 0, in_n = 0, in_ok = 0, out_n = 0, out_ok = 0, first_n = 0, first_ok = 0, added_n = 0, added_ok = 0;
  int nvl72_n = 0, nvl72_ok = 0;  // the GB200/GB300 rows of one NVL72 NVLink domain (added 2026-12-06, gb-nvl72)
  int fits = 0;
  int hybridep_held_n = 0, hybridep_held_ok = 0;
  std::vector<std::string> wild_first, not_fitting;
  std::printf("| case | sample | published tok/s/GPU | predicted | error | memory ÷ GPU | layout and terms |\n"
              "|---|---|---:|---:|---:|---:|---|\n");
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json j = json::parse(line);
    const std::string id = j["id"];
    const std::string args = estimate_args(j);
    const RunResult r = run(args + " --json");
    ASSERT_EQ(r.exit_code, 0) << id << ": gpuplan " << args << "\n" << r.out.substr(0, 2000);
    const json out = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(out.is_discarded()) << id << "\n" << r.out.substr(0, 2000);
    const json& e = out["estimate"];
    ASSERT_TRUE(e.is_object()) << id << ": " << r.out.substr(0, 2000);
    const int gpus = j["gpus"];
    const double predicted = e["tokens_per_s"].get<double>() / gpus;
    const double published = j["measured"];
    const double err = predicted / published - 1.0;
    const bool within = std::fabs(err) <= 0.15;
    const double memory_ratio = e["per_gpu_memory_bytes"].get<double>() / e["gpu_memory_capacity_bytes"].get<double>();
    const bool fit = memory_ratio <= 1.0;
    fits += fit;
    if (!fit) not_fitting.push_back(id);
    const bool in_sample = j.value("in_sample", id.rfind("mb2511", 0) == 0);
    const bool added = j.contains("added");
    ++n;
    ok += within;
    (in_sample ? in_n : out_n) += 1;
    (in_sample ? in_ok : out_ok) += within;
    const bool nvl72 = added && j["added"].get<std::string>().find("gb-nvl72") != std::string::npos;
    (nvl72 ? nvl72_n : added ? added_n : first_n) += 1;
    (nvl72 ? nvl72_ok : added ? added_ok : first_ok) += within;
    if (!added && std::fabs(err) > 0.40) wild_first.push_back(id);
    if (j["layout"].value("moe_dispatcher", std::string()) == "hybridep" && !in_sample) {
      ++hybridep_held_n;
      hybridep_held_ok += within;
    }
    const json& t = e["step"];
    const json& l = j["layout"];
    const std::string flags = std::string(l.value("moe_a2a_overlap", false) ? " a2a-overlap" : "") +
                              (l.contains("moe_dispatcher") ? " " + l["moe_dispatcher"].get<std::string>() : "") +
                              (l.value("cuda_graph", std::string()) == "full_iteration"       ? " full-graph"
                               : l.value("cuda_graph", std::string()) == "transformer_engine" ? " te-graphs"
                                                                                               : "") +
                              (l.value("tp_comm_overlap", false) ? " tp-overlap" : "") + " " + j["precision"].get<std::string>();
    const double comm = t["exposed_comm_seconds"].get<double>() + t["tp_allreduce_seconds"].get<double>() +
                        t["pp_p2p_seconds"].get<double>();
    std::string busiest;
    if (l["pp"].get<int>() > 1) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "; busiest rank %d × %.3f", t["pp_busiest_stage"].get<int>(),
                    t["pp_stage_imbalance"].get<double>());
      busiest = buf;
    }
    std::printf("| %s | %s | %.0f | %.0f | %+.1f%% | %.2f | %s%s; compute %.2fs ep %.2fs bubble %.2fs comm %.2fs MFU %.0f%%%s |\n",
                id.c_str(), in_sample ? "in" : "out", published, predicted, 100 * err, memory_ratio,
                layout_text(e["layout"]).c_str(), flags.c_str(), t["compute_seconds"].get<double>(),
                t["ep_alltoall_seconds"].get<double>(), t["pp_bubble_seconds"].get<double>(), comm,
                100 * t["mfu"].get<double>(), busiest.c_str());
  }
  std::printf("within ±15%%: %d of %d (in-sample %d/%d, out-of-sample %d/%d)\n", ok, n, in_ok, in_n, out_ok, out_n);
  std::printf("within ±15%%, by origin: the %d rows of 2026-12-01: %d; the %d rows added 2026-12-04 (bench8): %d; "
              "the %d GB200/GB300 NVL72 rows added 2026-12-06 (gb-nvl72): %d\n",
              first_n, first_ok, added_n, added_ok, nvl72_n, nvl72_ok);
  std::printf("HybridEP rows held out of the hybridep_* calibration: %d of %d within ±15%%\n", hybridep_held_ok,
              hybridep_held_n);
  std::string over;
  for (const std::string& id : not_fitting) over += (over.empty() ? "" : ", ") + id;
  std::printf("memory: %d of %d published layouts fit gpuplan's memory model on their GPU (all %d ran); the %zu over: %s\n",
              fits, n, n, not_fitting.size(), over.c_str());
  std::printf("issue 8 bar (>= 80%% within ±15%%): %s\n", ok >= static_cast<int>(std::ceil(0.8 * n)) ? "met" : "NOT met");
  ASSERT_EQ(n, 126);
  // Regression guards at the level reached (not the bar): the 18 rows of 2026-12-01 at
  // 12 of 18 within ±15% (13 until 2026-12-05, when the 26.02 DGX-H100 Qwen3-30B-A3B row got its
  // recipe's DeepEP dispatcher and all-to-all overlap: +8.5% → +18.6%) and none beyond ±40%; the
  // 66 DGX / torchtitan rows at 52 of 66 (34 before the recipes' MoE dispatchers, 2026-12-05; 48
  // before the LM head under a fused cross-entropy and the Blackwell re-fit, 2026-12-06).
  EXPECT_GE(first_ok, 12);
  EXPECT_TRUE(wild_first.empty()) << ::testing::PrintToString(wild_first);
  EXPECT_EQ(n - nvl72_n, 66);
  EXPECT_GE(ok - nvl72_ok, 52);
  // The 60 NVL72 rows (held out: no constant was chosen on them), at the level they came in at:
  // 39 of 60 within ±15% (docs/accuracy.md "GB200 / GB300").
  EXPECT_EQ(nvl72_n, 60);
  EXPECT_GE(nvl72_ok, 39);
  // Memory, guarded at the level reached: 52 of the 66 DGX / torchtitan layouts fit (42 before the
  // recipes' --recompute-modules, 2026-12-05) and 29 of the 60 NVL72 ones (CPU activation
  // offloading, paged stashes and full-iteration graphs of their recipes are not modelled).
  EXPECT_GE(fits, 81);
}

}  // namespace
}  // namespace gpuplan::e2e
