// Serving accuracy through the public path (issue 8: "serving throughput is 1.1–2.3× too
// optimistic"): each published vLLM concurrency-sweep row of tests/data/published-serving.jsonl
// (sources and reading in its PROVENANCE file) is asked of the built binary the way a user would,
// `gpuplan plan --task serve --concurrency C --prompt-tokens P --output-tokens O --engine vllm
// "gpu~GPU gpus=1"`, on its bundled catalog, and plan #1's requests/s or output tokens/s is
// compared with the published value. Bar: within ±15% each (issue 8's throughput bar). The
// per-case table is printed; docs/accuracy.md "Serving" keeps it.
//
// These rows were used to choose the mixed-step rule (sizing/serving_perf.hpp
// step_roofline_seconds): before it, with max(memory, compute), the RTX 4090 rows were predicted
// +2% .. +71% and the A100 C=8 row +18% (docs/accuracy.md history).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "binary_e2e.hpp"

namespace {

using nlohmann::json;

class ServingAccuracyE2E : public gpuplan::e2e::BinaryE2E<ServingAccuracyE2E> {
 public:
  static constexpr const char* kName = "serving-accuracy";
};

TEST_F(ServingAccuracyE2E, PublishedVllmSweepsWithinFifteenPercent) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/published-serving.jsonl");
  ASSERT_TRUE(in);
  std::string line;
  int n = 0;
  std::vector<std::string> outside;
  std::printf("%-30s %10s %10s %8s  %s\n", "case", "published", "predicted", "error", "unit / plan #1");
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json row = json::parse(line);
    const std::string filter = "gpu~" + row["gpu"].get<std::string>() + " gpus=1" +
                               (row["vram_filter"].get<std::string>().empty() ? "" : " " + row["vram_filter"].get<std::string>());
    const std::string args = "plan --model " + row["model"].get<std::string>() + " --task serve --engine " +
                             row["engine"].get<std::string>() + " --concurrency " + std::to_string(row["concurrency"].get<int>()) +
                             " --prompt-tokens " + std::to_string(row["prompt_tokens"].get<int>()) + " --output-tokens " +
                             std::to_string(row["output_tokens"].get<int>()) + " '" + filter + "' --limit 1";
    const json plan = run_json(args, 0);
    ASSERT_TRUE(plan["plans"].is_array() && !plan["plans"].empty()) << args << "\n" << plan.dump().substr(0, 800);
    const json& p = plan["plans"][0];
    // One GPU, one replica, the whole concurrency in its batch: the published setup.
    EXPECT_EQ(p["gpus_total"], 1) << args;
    EXPECT_EQ(p["serving"]["batch"], row["concurrency"]) << args;
    const std::string unit = row["unit"];
    const double predicted = unit == "requests/s" ? p["requests_per_s"].get<double>() : p["tokens_per_s"].get<double>();
    const double measured = row["measured"];
    const double err = predicted / measured - 1.0;
    std::printf("%-30s %10.4g %10.4g %+7.1f%%  %s / %s\n", row["id"].get<std::string>().c_str(), measured, predicted, 100 * err,
                unit.c_str(), p["gpu_name"].get<std::string>().c_str());
    if (std::fabs(err) > 0.15) outside.push_back(row["id"].get<std::string>());
    ++n;
  }
  EXPECT_EQ(n, 7);
  EXPECT_TRUE(outside.empty()) << "outside ±15%: " << ::testing::PrintToString(outside);
}

}  // namespace
