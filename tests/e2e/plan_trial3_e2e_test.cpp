// End-to-end regression tests for the leftovers of issue 7 that a third new-user trial of
// `gpuplan plan` found on the bundled catalog, through the built binary (GPUPLAN_BINARY):
//   1. serving: README's example recommended an RTX PRO 6000 plan at ~0.8 s per output token,
//      timed at the GPU's FP32 peak (its BF16/FP16 rates are unknown) without saying so;
//   2. the R mark moved with --sort (an explicit sort chose the recommendation and the price kind);
//   3. a 925-day-old price was recommended: stale prices were one tier, whatever their age;
//   4. --gpus 16 chose TP16 for a model with 8 KV heads (replication the models do not count);
//   5. plan and estimate said nothing when --seq exceeds the model's maximum context (size warns).
// Dates: every run passes --today 2026-12-01; the bundled catalog's dated prices are from
// 2026-10-10, 2026-05-24, 2024-05-20 (FSDL) and earlier (data/offers); the rest are undated.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;
using nlohmann::json;

class PlanTrial3E2E : public BinaryE2E<PlanTrial3E2E> {
 public:
  static constexpr const char* kName = "plan-trial3";
};

const std::string kToday = " --today 2026-12-01";
const std::string kLora70 = "plan --model llama-3.1-70b --task lora --tokens 5e8" + kToday;
// README's serving example.
const std::string kServe70 = "plan --model llama-3.1-70b --task serve --quant int4 --concurrency 100 --hours 720" + kToday;

// The default interactive target: MLPerf Inference's Llama-2-70B Server scenario latency
// constraints (mlcommons/inference loadgen/mlperf.conf: llama2-70b.Server.ttft_latency = 2000,
// llama2-70b.Server.tpot_latency = 200, milliseconds, at the 99th percentile).
constexpr double kMlperfTtftSeconds = 2.0;
constexpr double kMlperfTpotSeconds = 0.2;

bool has_warning(const json& warnings, const std::string& code) {
  for (const auto& w : warnings) {
    if (w["code"] == code) return true;
  }
  return false;
}
std::string warning_text(const json& warnings, const std::string& code) {
  for (const auto& w : warnings) {
    if (w["code"] == code) return w["message"].get<std::string>();
  }
  return "";
}
const json* recommended(const json& j) {
  for (const auto& p : j["plans"]) {
    if (p["recommended"].get<bool>()) return &p;
  }
  return nullptr;
}

// ---- 1. serving latency: a default interactive target, --ttft-ms / --tpot-ms, FP32 labelled ----

TEST_F(PlanTrial3E2E, ServingRecommendsAPlanWithinTheDefaultLatencyTarget) {
  const json j = run_json(kServe70 + " --limit 100000", 0);
  const json* r = recommended(j);
  ASSERT_NE(r, nullptr) << j["recommendation_rule"];
  // The recommended plan meets MLPerf's interactive target (the trial's was 0.795 s per token).
  EXPECT_LE((*r)["serving"]["ttft_seconds"].get<double>(), kMlperfTtftSeconds) << (*r)["offer_id"];
  EXPECT_LE((*r)["serving"]["tpot_seconds"].get<double>(), kMlperfTpotSeconds) << (*r)["offer_id"];
  EXPECT_TRUE((*r)["serving"]["meets_latency_target"].get<bool>());
  EXPECT_NE(j["recommendation_rule"].get<std::string>().find("TTFT ≤ 2000 ms and TPOT ≤ 200 ms (default interactive target)"),
            std::string::npos)
      << j["recommendation_rule"];
  std::size_t missing = 0, fp32 = 0;
  for (const auto& p : j["plans"]) {
    const json& s = p["serving"];
    const bool misses = s["ttft_seconds"].get<double>() > kMlperfTtftSeconds * (1 + 1e-12) ||
                        s["tpot_seconds"].get<double>() > kMlperfTpotSeconds * (1 + 1e-12);
    // Listed, warned and never recommended when it misses the default target.
    EXPECT_EQ(has_warning(p["warnings"], "latency_target_missed"), misses) << p["offer_id"];
    EXPECT_EQ(s["meets_latency_target"].get<bool>(), !misses) << p["offer_id"];
    if (misses) {
      EXPECT_FALSE(p["recommended"].get<bool>()) << p["offer_id"];
    }
    missing += misses;
    // Every plan still holds the 100 users: replicas × batch ≥ 100 (the batch is lowered to
    // meet the target, so more replicas are needed).
    EXPECT_GE(p["replicas"].get<long long>() * s["batch"].get<long long>(), 100) << p["offer_id"];
    // The FP32 fallback is labelled: data/gpus.csv gives the RTX PRO 6000 Blackwell an FP32
    // peak (125 TFLOP/s) but no BF16/FP16 tensor rate, so it is timed at FP32 and says so.
    if (p["gpu_name"] == "NVIDIA RTX PRO 6000 Blackwell") {
      EXPECT_EQ(p["math_fallback"], "fp32") << p["offer_id"];
    }
    if (!p["math_fallback"].is_null()) {
      ++fp32;
      const std::string w = warning_text(p["warnings"], "fp32_math_fallback");
      EXPECT_NE(w.find("BF16/FP16 tensor-core rates unknown"), std::string::npos) << p["offer_id"] << ": " << w;
    }
  }
  EXPECT_GT(missing, 0u);  // the trial's RTX PRO 6000 plan (TPOT 0.795 s at batch 75) is one of them
  EXPECT_GT(fp32, 0u);
  // The table labels it in the layout cell (kept at any width): "fp32!".
  const RunResult t = run("plan 'gpu~\"RTX PRO 6000\"' --model llama-3.1-70b --task serve --quant int4 --concurrency 100" +
                          kToday);
  ASSERT_EQ(t.exit_code, 0) << t.out;
  std::istringstream lines(t.out);
  std::string line;
  std::size_t rows = 0;
  const std::regex row(R"(^\s*[0-9]+[*R~?!]*\s{2})");
  while (std::getline(lines, line)) {
    if (!std::regex_search(line, row)) continue;
    ++rows;
    EXPECT_NE(line.find("fp32!"), std::string::npos) << line;
  }
  EXPECT_GT(rows, 0u) << t.out;
  EXPECT_NE(t.out.find("[fp32_math_fallback]"), std::string::npos) << t.out;
}

TEST_F(PlanTrial3E2E, GivenLatencyTargetsFilterThePlans) {
  // --tpot-ms 50 --ttft-ms 1000: a constraint, every listed plan meets it (the batch per replica
  // is lowered until it does; a GPU that misses even at batch 1 is not listed).
  const json j = run_json(kServe70 + " --tpot-ms 50 --ttft-ms 1000 --limit 100000", 0);
  ASSERT_FALSE(j["plans"].empty());
  for (const auto& p : j["plans"]) {
    EXPECT_LE(p["serving"]["tpot_seconds"].get<double>(), 0.050 * (1 + 1e-12)) << p["offer_id"];
    EXPECT_LE(p["serving"]["ttft_seconds"].get<double>(), 1.000 * (1 + 1e-12)) << p["offer_id"];
    EXPECT_GE(p["replicas"].get<long long>() * p["serving"]["batch"].get<long long>(), 100) << p["offer_id"];
    EXPECT_FALSE(has_warning(p["warnings"], "latency_target_missed")) << p["offer_id"];
  }
  EXPECT_NE(recommended(j), nullptr);
  // Bad input: a clear one-line error, exit 2.
  for (const char* bad : {" --tpot-ms 0", " --ttft-ms -5"}) {
    const RunResult r = run(kServe70 + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_EQ(r.out.rfind("gpuplan: error: ", 0), 0u) << r.out;
  }
}

// ---- 2. the R mark does not depend on --sort --------------------------------------------------

TEST_F(PlanTrial3E2E, RecommendedPlanIsTheSameWhateverTheSort) {
  for (const std::string& args : {kLora70, kLora70 + " --gpus 16", kLora70 + " --deadline 2d",
                                  "plan --model llama-3.1-8b --task lora --tokens 5e9 --budget 300" + kToday, kServe70}) {
    std::set<std::string> picks;
    for (const char* sort : {"", " --sort cost", " --sort time", " --sort recommended"}) {
      const json j = run_json(args + sort, 0);
      const json* r = recommended(j);
      ASSERT_NE(r, nullptr) << args << sort;
      picks.insert((*r)["offer_id"].get<std::string>() + " ×" + std::to_string((*r)["instances"].get<int>()) + " " +
                   (*r)["layout"].dump() + " " + (*r)["cost"]["price_kind"].get<std::string>() + " $" +
                   std::to_string((*r)["total_usd"].get<double>()));
      // The recommended plan is listed first whatever the sort.
      EXPECT_TRUE(j["plans"][0]["recommended"].get<bool>()) << args << sort;
    }
    EXPECT_EQ(picks.size(), 1u) << args << ": " << json(picks).dump();
  }
}

// ---- 3. stale prices rank by age; the age is said -------------------------------------------

TEST_F(PlanTrial3E2E, StalePricesRankByAgeAndTheRecommendationSaysTheAge) {
  // Ages at --today 2026-12-01, by hand: 2026-10-10 → 21 + 30 + 1 = 52 days; 2026-05-24 → 7 + 30
  // + 31 + 31 + 30 + 31 + 30 + 1 = 191 days; 2024-05-20 → 191 + 4 + 366 + 364 = 925 days. Ranked
  // in steps of --max-price-age (30 days): 52 → 1, 191 → 6, 925 → 30 (docs/planner.md).
  const std::map<std::string, int> age = {{"2026-10-10", 52}, {"2026-05-24", 191}, {"2024-05-20", 925}};
  const json j = run_json(kLora70 + " --limit 100000", 0);
  const json* r = recommended(j);
  ASSERT_NE(r, nullptr);
  int youngest_dated_unflagged = 1 << 30;
  for (const auto& p : j["plans"]) {
    const std::string date = p["price_source"]["observed_at"].get<std::string>().substr(0, 10);
    if (age.count(date)) {
      EXPECT_EQ(p["price_age_days"], age.at(date)) << p["offer_id"] << " " << date;
    }
    if (p["demotion_tier"].get<int>() <= 1 && !p["price_age_days"].is_null()) {
      youngest_dated_unflagged = std::min(youngest_dated_unflagged, p["price_age_days"].get<int>());
    }
  }
  // Never a price older than the limit while a fresher one runs the job: the recommended price
  // is in the youngest 30-day step of the dated, unflagged prices (here 52 days).
  EXPECT_EQ((*r)["price_age_days"].get<int>() / 30, youngest_dated_unflagged / 30) << (*r)["offer_id"];
  EXPECT_EQ((*r)["price_age_days"], 52);
  // The recommendation line says the age.
  EXPECT_NE(j["recommendation_rule"].get<std::string>().find("the recommended plan's price was observed 2026-10-10, 52 days ago"),
            std::string::npos)
      << j["recommendation_rule"];
  // The stale rows are ordered by age step: after the recommended row, a 52-day price never
  // follows a 191-day one (within the stale tier).
  int last_step = 0;
  for (std::size_t i = 1; i < j["plans"].size(); ++i) {
    const json& p = j["plans"][i];
    if (p["demotion_tier"] != 1) continue;
    const int step = p["price_age_days"].get<int>() / 30;
    EXPECT_GE(step, last_step) << p["offer_id"];
    last_step = step;
  }
  // The stale warning says the age too.
  EXPECT_NE(warning_text((*r)["warnings"], "stale_price").find("(52 days old)"), std::string::npos)
      << (*r)["warnings"].dump();
  // The 925-day-old FSDL prices are never recommended, whatever the workload.
  for (const std::string& args : {kLora70, kServe70, "plan --model llama-3.1-8b --task lora --tokens 5e9" + kToday,
                                  "plan --model llama-3.1-8b --task lora --tokens 5e9 --budget 300" + kToday}) {
    const json k = run_json(args, 0);
    const json* rk = recommended(k);
    ASSERT_NE(rk, nullptr) << args;
    EXPECT_LT((*rk)["price_age_days"].get<int>(), 925) << args << " " << (*rk)["offer_id"];
  }
}

// ---- 4. TP above the model's KV heads --------------------------------------------------------

TEST_F(PlanTrial3E2E, TensorParallelAboveKvHeadsOnlyWhenPinned) {
  // Llama 3.1 70B has 8 KV heads (data/models/meta-llama__Llama-3.1-70B/config.json). TP16 on a
  // 16-GPU node replicates each KV head on 2 GPUs, which the memory and time models do not count:
  // the search prefers layouts with TP ≤ 8 when one fits (the 16×A100 a2-megagpu-16g still runs).
  const json j = run_json(kLora70 + " --gpus 16 --limit 100000", 0);
  bool sixteen = false;
  for (const auto& p : j["plans"]) {
    EXPECT_LE(p["layout"]["tp"].get<int>(), 8) << p["offer_id"];
    EXPECT_FALSE(has_warning(p["warnings"], "kv_heads_replicated")) << p["offer_id"];
    sixteen |= p["gpus_per_instance"] == 16;
  }
  EXPECT_TRUE(sixteen) << "a 16-GPU instance must still be planned (with TP ≤ 8)";
  // Pinned --tp 16: kept, and the replication is said with its size, by hand: per GPU K and V of
  // one head per layer instead of 8/16: 2 × head_dim 128 × hidden 8192 × (1 − 8/16) × 80 layers
  // = 83,886,080 parameters ≈ 84 M.
  const json k = run_json(kLora70 + " --gpus 16 --tp 16", 0);
  ASSERT_FALSE(k["plans"].empty());
  for (const auto& p : k["plans"]) {
    EXPECT_EQ(p["layout"]["tp"], 16);
    const std::string w = warning_text(p["warnings"], "kv_heads_replicated");
    EXPECT_NE(w.find("TP 16 > 8 KV heads: each KV head is replicated on 2 GPUs"), std::string::npos) << w;
    EXPECT_NE(w.find("~84 M parameters per GPU"), std::string::npos) << w;
  }
}

// ---- 5. --seq beyond the model's maximum context ---------------------------------------------

TEST_F(PlanTrial3E2E, SeqBeyondMaxContextWarnsOnPlanAndEstimateAsOnSize) {
  // Llama 3.1 8B: max_position_embeddings 131072 (its config.json); --seq 200000 exceeds it.
  const std::string want = "--seq 200000 exceeds the model's maximum context of 131072 tokens";
  const json p = run_json("plan --model llama-3.1-8b --task lora --tokens 1e8 --seq 200000" + kToday, 0);
  EXPECT_NE(warning_text(p["warnings"], "seq_exceeds_context").find(want), std::string::npos) << p["warnings"].dump();
  const json e = run_json("estimate --model llama-3.1-8b --task lora --tokens 1e8 --seq 200000 --gpu H100 --gpus 8", 0);
  ASSERT_TRUE(e["estimate"].is_object()) << e.dump().substr(0, 500);
  EXPECT_NE(warning_text(e["estimate"]["warnings"], "seq_exceeds_context").find(want), std::string::npos)
      << e["estimate"]["warnings"].dump();
  const RunResult s = run("size --model llama-3.1-8b --task lora --seq 200000");
  EXPECT_NE(s.out.find("exceeds the model's max_position_embeddings 131072"), std::string::npos) << s.out;
  // Within the context: no warning.
  const json q = run_json("plan --model llama-3.1-8b --task lora --tokens 1e8 --seq 131072" + kToday, 0);
  EXPECT_FALSE(has_warning(q["warnings"], "seq_exceeds_context"));
}

}  // namespace

// New-user trial (stop 18): `plan ... --today 2025-01-01` recommended a price observed on
// 2026-05-24 as clean, "observed 2026-05-24, -508 days ago". A price observed after --today is
// no evidence of the price on that day: it ranks with undated prices (demotion tier 2), and the
// recommendation line never states a negative age. At --today 2025-01-01 some bundled prices
// are older (the 2024-05-20 FSDL rows) and many are newer.
TEST_F(PlanTrial3E2E, PricesObservedAfterTodayAreNeverClean) {
  const json j = run_json("plan --model llama-3.1-8b --task lora --tokens 5e8 --today 2025-01-01 --limit 100000", 0);
  int after_today = 0;
  for (const auto& p : j["plans"]) {
    if (p["price_age_days"].is_null() || p["price_age_days"].get<int>() >= 0) continue;
    ++after_today;
    EXPECT_GE(p["demotion_tier"].get<int>(), 2) << p["offer_id"] << " " << p["price_source"]["observed_at"];
  }
  EXPECT_GT(after_today, 0) << "no bundled price is dated after 2025-01-01 any more";
  const json* r = recommended(j);
  if (r != nullptr && !(*r)["price_age_days"].is_null()) {
    EXPECT_GE((*r)["price_age_days"].get<int>(), 0);
  }
  const std::string rule = j["recommendation_rule"].get<std::string>();
  const auto ago = rule.find(" days ago");
  if (ago != std::string::npos) {
    const auto comma = rule.rfind(", ", ago);
    ASSERT_NE(comma, std::string::npos) << rule;
    EXPECT_NE(rule[comma + 2], '-') << rule;  // "observed 2026-05-24, -508 days ago" no more
  }
}
