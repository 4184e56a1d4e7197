// End-to-end (trial50 #2, #3, #7), through the built binary (GPUPLAN_BINARY) on the bundled
// catalog: what `gpuplan plan --task serve` warns about and suggests.
//  - a fixed cluster (--gpus) larger than the load: the replicas the load keeps busy are named and
//    the idle GPUs warned about (2 users on 16 GPUs said nothing);
//  - a batch job (--requests) that runs for years gets the `long_run` warning training gets;
//  - spot is planned for training only: a serving no-plan does not suggest spot prices, and
//    --preemptions-per-day is refused for --task serve.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;
using nlohmann::json;

class ServeWarningsE2E : public BinaryE2E<ServeWarningsE2E> {
 public:
  static constexpr const char* kName = "serve-warnings";
};

const std::string kToday = " --today 2026-12-01";

const json* warning(const json& plan, const std::string& code) {
  for (const auto& w : plan["warnings"])
    if (w["code"] == code) return &w;
  return nullptr;
}

TEST_F(ServeWarningsE2E, AFixedClusterNamesTheGpusTheLoadLeavesIdle) {
  // 2 users: each replica of TP1 serves ceil(2 / 16) = 1 sequence, so 2 replicas carry the load
  // and 16 − 2 = 14 GPUs idle.
  const json j = run_json("plan --model llama-3.1-8b --task serve --concurrency 2 --gpus 16 --tp 1 --limit 3" + kToday, 0);
  ASSERT_FALSE(j["plans"].empty()) << j.dump().substr(0, 1500);
  for (const auto& p : j["plans"]) {
    ASSERT_EQ(p["gpus_total"].get<int>(), 16) << p["offer_id"];
    const json* w = warning(p, "idle_gpus");
    ASSERT_NE(w, nullptr) << p["warnings"].dump();
    EXPECT_EQ((*w)["values"]["used_gpus"], "2") << w->dump();
    EXPECT_EQ((*w)["values"]["idle_gpus"], "14") << w->dump();
    EXPECT_NE((*w)["message"].get<std::string>().find("serves on 2 of the 16 GPUs rented (14 idle)"), std::string::npos)
        << w->dump();
  }
  // trial51: 17 users on 16 replicas (one holds 2, the others 1) leave no GPU idle, though 17 / 2
  // sequences per replica is 8.5 replicas' worth of capacity.
  const json spread = run_json("plan --model llama-3.1-8b --task serve --concurrency 17 --gpus 16 --tp 1 --limit 3" + kToday, 0);
  ASSERT_FALSE(spread["plans"].empty());
  for (const auto& p : spread["plans"]) EXPECT_EQ(warning(p, "idle_gpus"), nullptr) << p["warnings"].dump();
  // A load that keeps every replica busy: 16 replicas of one 8B sequence each, no idle GPU.
  const json full = run_json("plan --model llama-3.1-8b --task serve --concurrency 16 --gpus 16 --tp 1 --limit 3" + kToday, 0);
  ASSERT_FALSE(full["plans"].empty());
  for (const auto& p : full["plans"]) EXPECT_EQ(warning(p, "idle_gpus"), nullptr) << p["warnings"].dump();
}

TEST_F(ServeWarningsE2E, ABatchJobOfYearsIsALongRun) {
  const json j = run_json("plan --model llama-3.1-70b --task serve --requests 1e13 --limit 1" + kToday, 0);
  ASSERT_EQ(j["plans"].size(), 1u) << j.dump().substr(0, 1500);
  const json& p = j["plans"][0];
  ASSERT_GT(p["time_seconds"].get<double>(), 30 * 86400.0);
  const json* w = warning(p, "long_run");
  ASSERT_NE(w, nullptr) << p["warnings"].dump();
  // Its remedy is one that shortens a batch job: more instances while the limit allows (trial51:
  // it named --deadline, which gives no plan); at the 1024-instance limit, less work.
  const std::string text = (*w)["message"].get<std::string>();
  EXPECT_EQ(text.find("--deadline"), std::string::npos) << text;
  EXPECT_NE(text.find("more instances shorten it (" + std::to_string(p["instances"].get<int>()) + " now"),
            std::string::npos)
      << text;
  const json at_limit =
      run_json("plan --model llama-3.1-70b --task serve --requests 1e13 --limit 1 --max-nodes 1024" + kToday, 0);
  ASSERT_EQ(at_limit["plans"].size(), 1u);
  ASSERT_EQ(at_limit["plans"][0]["instances"].get<int>(), 1024);
  const json* w2 = warning(at_limit["plans"][0], "long_run");
  ASSERT_NE(w2, nullptr);
  EXPECT_NE((*w2)["message"].get<std::string>().find("at the 1024-instance limit"), std::string::npos) << (*w2)["message"];
  // A service runs as long as asked: 60 days of serving is not a long run.
  const json s = run_json("plan --model llama-3.1-8b --task serve --concurrency 10 --hours 1440 --limit 1" + kToday, 0);
  ASSERT_EQ(s["plans"].size(), 1u);
  EXPECT_EQ(warning(s["plans"][0], "long_run"), nullptr) << s["plans"][0]["warnings"].dump();
}

TEST_F(ServeWarningsE2E, ServingNeitherSuggestsNorTakesSpot) {
  const json j = run_json("plan --model llama-3.1-8b --task serve --concurrency 10 --budget 100" + kToday, 1);
  ASSERT_TRUE(j["no_plan"].is_object()) << j.dump().substr(0, 1500);
  for (const auto& c : j["no_plan"]["suggestion_codes"]) EXPECT_NE(c, "spot_prices") << j["no_plan"].dump();
  const RunResult r = run("plan --model llama-3.1-8b --task serve --concurrency 10 --preemptions-per-day 1" + kToday);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--preemptions-per-day is a training option; --task serve does not use it"), std::string::npos)
      << r.out;
}

}  // namespace
