// End-to-end regression test for a defect the seventh new-user trial found (issue 7, the first
// answer): the recommendation rule ("of the plans finishing within 30 days, the fastest on their
// cost/time Pareto front costing at most 25% more than the cheapest") recommended 8×B300 at
// $1,574 over 8×B200 at $1,259 for a 70B LoRA run 3.3 s shorter in 11 h: a speed-up of 0.008%
// bought for 25% more money. A speed-up within the time ranking's tie tolerance (2%,
// docs/planner.md) is no speed-up, so the cheaper plan is recommended.
// Through the built binary (GPUPLAN_BINARY) on a two-row imported catalog: one 8×B200 and one
// 8×B300 node of one provider (fixture prices, not market data: the B300 at 1.2× the B200's
// $/GPU-h, inside the 25% cap). The test first checks the premise from the JSON itself (times tie
// within 2%, the B300 is faster and dearer within 25%), then the recommendation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;
using nlohmann::json;
namespace fs = std::filesystem;

class RecommendTiesE2E : public BinaryE2E<RecommendTiesE2E> {
 public:
  static constexpr const char* kName = "recommend-ties";
};

TEST_F(RecommendTiesE2E, RecommendationTakesTheCheaperOfTiedTimes) {
  const fs::path csv = dir_ / "ties.csv";
  std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,"
                        "interconnect,max_nodes\n"
                        "tieco,hgx-b200-8x,us-east,B200,8,on-demand,4.00,2026-11-20,test fixture,nvlink,1\n"
                        "tieco,hgx-b300-8x,us-east,B300,8,on-demand,4.80,2026-11-20,test fixture,nvlink,1\n";
  const RunResult imp = run("import '" + csv.string() + "'");
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  const RunResult r =
      run("plan --model llama-3.1-70b --task lora --tokens 1e9 'provider=tieco' --today 2026-11-30 --limit 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
  // The best (fastest) plan of each instance type, and the recommended plan.
  const json* fastest_b200 = nullptr;
  const json* fastest_b300 = nullptr;
  const json* recommended = nullptr;
  for (const json& p : j["plans"]) {
    const json** slot = p["instance_type"] == "hgx-b200-8x" ? &fastest_b200 : &fastest_b300;
    if (*slot == nullptr || p["time_seconds"].get<double>() < (**slot)["time_seconds"].get<double>()) *slot = &p;
    if (p["recommended"].get<bool>()) recommended = &p;
  }
  ASSERT_NE(fastest_b200, nullptr) << r.out.substr(0, 2000);
  ASSERT_NE(fastest_b300, nullptr) << r.out.substr(0, 2000);
  ASSERT_NE(recommended, nullptr) << r.out.substr(0, 2000);
  const double t200 = (*fastest_b200)["time_seconds"].get<double>();
  const double t300 = (*fastest_b300)["time_seconds"].get<double>();
  const double c200 = (*fastest_b200)["total_usd"].get<double>();
  const double c300 = (*fastest_b300)["total_usd"].get<double>();
  // Premise: the B300 plan is faster, but by less than 2%, and dearer by at most 25%.
  ASSERT_LT(t300, t200);
  ASSERT_LE(t200 - t300, 0.02 * t300) << t200 << " vs " << t300;
  ASSERT_GT(c300, c200);
  ASSERT_LE(c300, 1.25 * c200) << c300 << " vs " << c200;
  // The rule: the cheaper of the tied plans.
  EXPECT_EQ((*recommended)["instance_type"], "hgx-b200-8x") << recommended->dump().substr(0, 600);
  EXPECT_NE(j["recommendation_rule"].get<std::string>().find("or a cheaper one within 2% of its time"), std::string::npos)
      << j["recommendation_rule"];
}

// Trial 7 also saw QLoRA of 70B recommended as TP2 PP1 DP4 on 8×B200: QLoRA stacks (bitsandbytes
// with PEFT, answer.ai's FSDP-QLoRA, torchtune's qlora recipes) run one GPU or FSDP / ZeRO-3 over
// the 4-bit base, never Megatron-style tensor or pipeline parallelism. Unpinned, every QLoRA plan is
// TP 1 PP 1 (on the bundled catalog); a pinned --tp is still kept.
TEST_F(RecommendTiesE2E, QloraSearchesDataParallelOnly) {
  const RunResult r = run("plan --model llama-3.1-70b --task qlora --tokens 2e8 --today 2026-11-30 --limit 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
  ASSERT_FALSE(j["plans"].empty());
  bool multi_gpu = false;
  for (const json& p : j["plans"]) {
    EXPECT_EQ(p["layout"]["tp"].get<int>(), 1) << p["offer_id"];
    EXPECT_EQ(p["layout"]["pp"].get<int>(), 1) << p["offer_id"];
    if (p["gpus_total"].get<int>() > 1) multi_gpu = true;
  }
  EXPECT_TRUE(multi_gpu) << "multi-GPU QLoRA plans exist (data parallel)";
  const RunResult pinned = run(
      "plan --model llama-3.1-70b --task qlora --tokens 2e8 --tp 2 'gpus>=8' --today 2026-11-30 --limit 3 --json");
  ASSERT_EQ(pinned.exit_code, 0) << pinned.out.substr(0, 2000);
  const json jp = json::parse(pinned.out, nullptr, false);
  ASSERT_FALSE(jp.is_discarded());
  ASSERT_FALSE(jp["plans"].empty());
  for (const json& p : jp["plans"]) EXPECT_EQ(p["layout"]["tp"].get<int>(), 2);
}

}  // namespace
