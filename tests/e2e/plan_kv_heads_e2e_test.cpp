// End-to-end (issue 7 leftovers): the planner's search asks sizing's non-throwing layout check
// (src/sizing/layout_check.hpp) instead of catching sizing's exceptions, and the check knows the
// KV-head rule: a TP degree that can neither split nor evenly replicate the KV heads is skipped in
// the search (plan, serving plan, estimate) and is a one-line error when pinned (exit 2).
#include <gtest/gtest.h>

#include "binary_e2e.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using e2e::RunResult;

class PlanKvHeadsE2E : public e2e::BinaryE2E<PlanKvHeadsE2E> {
 public:
  static constexpr const char* kName = "kvheads";
};

// Phi-4 (data/models/microsoft__phi-4/config.json): 40 attention heads, 10 KV heads. TP 4 divides
// the attention heads but neither divides nor is a multiple of the KV heads (10 % 4 = 2,
// 4 < 10), so no framework can split or replicate the KV heads evenly: the search must skip it
// (it used to size it, and sizing's exception ended `plan` and `estimate` with exit 2).
const std::string kPhi4Full = " --model phi-4 --task full --tokens 1e9";

TEST_F(PlanKvHeadsE2E, SearchSkipsTpThatCannotSplitTheKvHeads) {
  json j = run_json("plan" + kPhi4Full + " --limit 100000 --today 2026-11-30", 0);
  ASSERT_GT(j["plans"].size(), 0u) << j.dump().substr(0, 2000);
  for (const auto& p : j["plans"]) {
    const int tp = p["layout"]["tp"].get<int>();
    EXPECT_TRUE(tp == 1 || 10 % tp == 0 || tp % 10 == 0) << "tp " << tp << " on 10 KV heads: " << p["offer_id"];
  }
  json s = run_json("plan --model phi-4 --task serve --concurrency 50 --limit 100000 --today 2026-11-30", 0);
  ASSERT_GT(s["plans"].size(), 0u);
  for (const auto& p : s["plans"]) {
    const int tp = p["layout"]["tp"].get<int>();
    EXPECT_TRUE(tp == 1 || 10 % tp == 0 || tp % 10 == 0) << "tp " << tp << ": " << p["offer_id"];
  }
  // estimate searches the same layouts on one 8-GPU node.
  json e = run_json("estimate" + kPhi4Full + " --gpu 'H100 SXM' --gpus 8", 0);
  ASSERT_TRUE(e["estimate"].is_object()) << e.dump().substr(0, 2000);
  const int tp = e["estimate"]["layout"]["tp"].get<int>();
  EXPECT_TRUE(tp == 1 || 10 % tp == 0) << tp;
}

TEST_F(PlanKvHeadsE2E, PinnedTpThatCannotSplitTheKvHeadsIsAOneLineError) {
  RunResult r = run("plan" + kPhi4Full + " --tp 4");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  EXPECT_EQ(out.find('\n'), std::string::npos) << r.out;
  EXPECT_EQ(out.rfind("gpuplan: error: --tp", 0), 0u) << r.out;
  EXPECT_NE(out.find("10 KV heads"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpuplan
