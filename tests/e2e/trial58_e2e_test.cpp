// End-to-end, trial58 (a new user re-testing the stop's serving and GB300 changes): an --rps load's
// replicas are sized for its queue, and every figure the plan shows agrees with Little's law; a
// fixed cluster that runs its queue past the TTFT target says so; llama.cpp's TPOT is a decode step;
// `estimate` keeps a GB300 job of at most 72 GPUs in its NVLink domain.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"

namespace gpuplan::e2e {
namespace {

using nlohmann::json;

class Trial58E2E : public BinaryE2E<Trial58E2E> {
 public:
  static constexpr const char* kName = "trial58";
};

/// Mean wait of an M/D/c queue, c servers, offered load a Erlangs, service `service` s: Erlang B by
/// B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)); Erlang C = c·B / (c − a·(1 − B)); M/M/c wait
/// C · service / (c − a); deterministic service halves it (Allen–Cunneen).
double md_c_wait(double c, double a, double service) {
  double b = 1.0;
  for (int k = 1; k <= static_cast<int>(c); ++k) b = a * b / (k + a * b);
  const double erlang_c = c * b / (c - a * (1.0 - b));
  return 0.5 * erlang_c * service / (c - a);
}

const std::string kLongPrompts =
    "plan --model llama-3.1-8b --task serve --prompt-tokens 100000 --output-tokens 200 --today 2026-12-01 ";

// The replicas of an --rps plan that meets the default 2 s TTFT target keep the mean queue wait
// inside what the target leaves: TTFT + wait ≤ 2 s (or the wait within a tenth of the TTFT), and
// no replica's share of the load reaches its slots (offered load = rate / replicas × batch /
// (req/s per replica) < batch). Before, ceil(rate / capacity) ran 6 MI300X replicas 99.8% busy.
TEST_F(Trial58E2E, AnRpsLoadIsSizedForItsQueue) {
  const json j = run_json(kLongPrompts + "--rps 1 --limit 20", 0);
  ASSERT_FALSE(j["plans"].empty());
  int checked = 0;
  for (const json& p : j["plans"]) {
    const json& s = p["serving"];
    ASSERT_TRUE(s["queue_wait_seconds"].is_number()) << p["offer_id"];
    const double wait = s["queue_wait_seconds"].get<double>(), ttft = s["ttft_seconds"].get<double>();
    const double batch = s["batch"].get<double>(), rate = s["requests_per_s_per_replica"].get<double>();
    const double replicas = p["replicas"].get<double>();
    const double offered = 1.0 / replicas * batch / rate;
    EXPECT_LT(offered, batch) << p["offer_id"];
    EXPECT_LE(wait, std::max(2.0 - ttft, 0.1 * ttft) + 1e-9) << p["offer_id"];
    // The wait is each replica's M/D/c wait (c = batch slots, each held batch / rate seconds):
    // Erlang C by the textbook recursion, × 1/2 for deterministic service.
    EXPECT_NEAR(md_c_wait(batch, 1.0 / replicas * batch / rate, batch / rate), wait, 1e-6 + 1e-6 * wait) << p["offer_id"];
    // The fewest such replicas: one fewer waits past that budget, or cannot carry the load.
    if (replicas > 1) {
      const double fewer_offered = 1.0 / (replicas - 1) * batch / rate;
      const double fewer = fewer_offered >= batch ? INFINITY : md_c_wait(batch, fewer_offered, batch / rate);
      EXPECT_GT(fewer, std::max(2.0 - ttft, 0.1 * ttft)) << p["offer_id"];
    }
    if (p.value("recommended", false)) {
      EXPECT_LE(ttft + wait, 2.0) << p["offer_id"];
    }
    ++checked;
  }
  EXPECT_GT(checked, 5);
  // A closed-loop --concurrency load has no queue: null.
  const json c = run_json(kLongPrompts + "--concurrency 4 --limit 3", 0);
  ASSERT_FALSE(c["plans"].empty());
  EXPECT_TRUE(c["plans"][0]["serving"]["queue_wait_seconds"].is_null());
}

// A fixed cluster holds 7 replicas of batch 2 for 2 req/s of 100k-token prompts: their capacity
// carries the load (a plan, not "the load needs 8"), but the queue waits far past the 2 s target,
// so the plan misses the latency target and the warning says the wait (trial58 #3).
TEST_F(Trial58E2E, AFixedClusterRunsItsQueueAndSaysTheWait) {
  const json j = run_json(kLongPrompts + "--rps 2 --gpus 7 'gpu~b200 gpus=1' --limit 3", 0);
  ASSERT_FALSE(j["plans"].empty());
  const json& p = j["plans"][0];
  EXPECT_EQ(p["replicas"], 7) << p.dump().substr(0, 600);
  EXPECT_FALSE(p["serving"]["meets_latency_target"].get<bool>());
  EXPECT_GT(p["serving"]["queue_wait_seconds"].get<double>(), 2.0);
  bool said = false;
  for (const json& w : p["warnings"]) {
    if (w["code"] == "latency_target_missed") said = w["message"].get<std::string>().find("mean queue wait") != std::string::npos;
  }
  EXPECT_TRUE(said) << p["warnings"].dump();
}

// llama.cpp (static batching): a wave prefills its prompts (the TTFT), then decodes; TPOT is a
// decode step and the rate one wave: req/s per replica × (TTFT + (O − 1) × TPOT) = the batch
// (trial58 #2: the shown figures gave 7.76 sequences in 5 slots).
TEST_F(Trial58E2E, LlamaCppShowsAWave) {
  const json j = run_json(kLongPrompts + "--rps 1 --engine llama.cpp --limit 5", 0);
  ASSERT_FALSE(j["plans"].empty());
  for (const json& p : j["plans"]) {
    const json& s = p["serving"];
    const double held = s["requests_per_s_per_replica"].get<double>() *
                        (s["ttft_seconds"].get<double>() + 199 * s["tpot_seconds"].get<double>());
    EXPECT_NEAR(held / s["batch"].get<double>(), 1.0, 1e-9) << p["offer_id"];
    EXPECT_LT(s["tpot_seconds"].get<double>(), s["step_seconds"].get<double>()) << p["offer_id"];
  }
}

// 64 GB300 fit one NVL72 NVLink domain: estimate times them as one node of 64 by default, with no
// inter-node network to ask for (trial58 #9: 8 nodes of 8 and "a multi-node run needs the network
// speed"). H100 keeps 8 per node.
TEST_F(Trial58E2E, EstimateKeepsANvl72JobInItsDomain) {
  const json j = run_json(
      "estimate --model llama-3.1-8b --gpu GB300 --gpus 64 --task full --stack megatron --tokens 1e9", 0);
  EXPECT_EQ(j["estimate"]["gpus_per_instance"], 64) << j.dump().substr(0, 400);
  EXPECT_EQ(j["estimate"]["instances"], 1);
  const RunResult h100 = run("estimate --model llama-3.1-8b --gpu H100 --gpus 64 --task full --tokens 1e9");
  EXPECT_EQ(h100.exit_code, 2) << h100.out;  // 8 nodes of 8: the network speed is asked for
  EXPECT_NE(h100.out.find("--inter-node-gbit-per-s"), std::string::npos) << h100.out;
}

// trial60 #2: --intra-node-gb-per-s applies without --link (the datasheet's link kind at the given
// bandwidth). L40S has no NVLink: 4-GPU TP all-reduces run at 0.56 of the link (nccl #1639), so the TP
// time scales as 31.5 / 100 between the PCIe Gen4 datasheet link and a given 100 GB/s.
TEST_F(Trial58E2E, IntraNodeBandwidthAppliesWithoutLink) {
  const std::string base =
      "estimate --model llama-3.1-8b --task full --gpu L40S --gpus 4 --tp 4 --pp 1 --tokens 1e8 --micro-batch 1 "
      "--seq 2048 --ignore-memory";
  const json d = run_json(base, 0);
  const json g = run_json(base + " --intra-node-gb-per-s 100", 0);
  const double td = d["estimate"]["step"]["tp_allreduce_seconds"], tg = g["estimate"]["step"]["tp_allreduce_seconds"];
  ASSERT_GT(tg, 0);
  EXPECT_NEAR(td / tg, 100.0 / 31.5, 1e-6) << d.dump().substr(0, 300);
}

}  // namespace
}  // namespace gpuplan::e2e
