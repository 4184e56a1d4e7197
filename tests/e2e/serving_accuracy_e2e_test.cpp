// Serving accuracy through the public path (issue 8: "serving throughput is 1.1–2.3× too
// optimistic"): each published vLLM concurrency-sweep row of tests/data/published-serving.jsonl
// (sources and reading in its PROVENANCE file) is asked of the built binary the way a user would,
// `gpuplan plan --task serve --concurrency C --prompt-tokens P --output-tokens O --engine vllm
// "gpu~GPU gpus=1"`, on its bundled catalog, and plan #1's requests/s or output tokens/s is
// compared with the published value. TensorRT-LLM's offline runs (N fixed-length requests queued
// at once, TP 1–8, 70B/405B) are asked as the batch job `--requests N --tp T --quant fp8 ...`.
// Bar: within ±15% each (issue 8's throughput bar), or, for a row marked with a documented known
// gap, inside that gap's range (kGaps; docs/accuracy.md "Serving"). The per-case table is printed
// with its split (in-sample rows were looked at while changing the model, held-out ones were not)
// and the count within ±15% per split; docs/accuracy.md "Serving" keeps it.
//
// These rows were used to choose the mixed-step rule (sizing/serving_perf.hpp
// step_roofline_seconds): before it, with max(memory, compute), the RTX 4090 rows were predicted
// +2% .. +71% and the A100 C=8 row +18% (docs/accuracy.md history).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
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

/// Documented error range of a known gap (docs/accuracy.md "Serving", known gaps): a row marked
/// with one must stay inside it (an assertion, not an allow-list), every other row within ±15%.
struct GapRange {
  const char* name;
  double lo, hi;  // error = predicted / published − 1
};
constexpr GapRange kGaps[] = {
    // Fixed-length offline runs (trtllm-bench, --input-stdev 0 --output-stdev 0) at TP ≥ 2 with
    // long outputs, after the batch-job step simulation (waves staggered by chunked prefill,
    // partly empty last wave): still too fast at the largest KV-bound batches (wave9, 13 rows).
    {"lockstep_waves", 0.15, 0.47},
    // (pcie_tp, the L40S TP 4/8 rows at +25 … +54%, closed 2026-12-07: PCIe collectives now run at
    // the bus bandwidth NCCL measured on PCIe servers, PerfAssumptions::pcie_collective_efficiency_*.)
};

const GapRange* gap_of(const std::string& name) {
  for (const GapRange& g : kGaps)
    if (name == g.name) return &g;
  return nullptr;
}

std::string str_or(const json& row, const char* key, const std::string& fallback) {
  return row.contains(key) ? row[key].get<std::string>() : fallback;
}
int int_or(const json& row, const char* key, int fallback) { return row.contains(key) ? row[key].get<int>() : fallback; }

TEST_F(ServingAccuracyE2E, PublishedServingRowsWithinFifteenPercentOrTheirKnownGap) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/published-serving.jsonl");
  ASSERT_TRUE(in);
  std::string line;
  int n = 0;
  std::map<std::string, std::pair<int, int>> within_by_split;  // split -> (within ±15%, rows)
  std::vector<std::string> outside;
  std::printf("%-42s %-9s %10s %10s %8s  %-14s %s\n", "case", "split", "published", "predicted", "error", "known gap",
              "unit / plan #1");
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json row = json::parse(line);
    const int tp = int_or(row, "tp", 1), gpus = int_or(row, "gpus", 1), requests = int_or(row, "requests", 0);
    const std::string vram = row["vram_filter"].get<std::string>();
    const std::string filter = "gpu~" + row["gpu"].get<std::string>() + " gpus=" + std::to_string(gpus) + (vram.empty() ? "" : " " + vram);
    // The published setup: TP pinned, weights and KV cache as run, one instance; a closed-loop
    // sweep is --concurrency C, an offline run of N queued requests is the batch job --requests N.
    std::string args = "plan --model " + row["model"].get<std::string>() + " --task serve --engine " +
                       row["engine"].get<std::string>() + " --prompt-tokens " + std::to_string(row["prompt_tokens"].get<int>()) +
                       " --output-tokens " + std::to_string(row["output_tokens"].get<int>()) + " '" + filter + "' --limit 1";
    if (row.contains("tp")) args += " --tp " + std::to_string(tp) + " --max-nodes 1";
    if (row.contains("quant")) args += " --quant " + row["quant"].get<std::string>() + " --kv-dtype " + row["kv_dtype"].get<std::string>();
    args += requests > 0 ? " --requests " + std::to_string(requests) : " --concurrency " + std::to_string(row["concurrency"].get<int>());
    const json plan = run_json(args, 0);
    ASSERT_TRUE(plan["plans"].is_array() && !plan["plans"].empty()) << args << "\n" << plan.dump().substr(0, 800);
    const json& p = plan["plans"][0];
    EXPECT_EQ(p["gpus_total"], gpus) << args;
    EXPECT_EQ(p["layout"]["tp"], tp) << args;
    // A closed-loop row runs the whole concurrency in one batch (the published setup).
    if (requests == 0) {
      EXPECT_EQ(p["serving"]["batch"], row["concurrency"]) << args;
    }
    const std::string unit = row["unit"];
    const double predicted = unit == "requests/s" ? p["requests_per_s"].get<double>() : p["tokens_per_s"].get<double>();
    const double measured = row["measured"];
    const double err = predicted / measured - 1.0;
    const std::string split = str_or(row, "split", "in-sample"), gap = str_or(row, "known_gap", "");
    std::printf("%-42s %-9s %10.4g %10.4g %+7.1f%%  %-14s %s / %s batch %d\n", row["id"].get<std::string>().c_str(), split.c_str(),
                measured, predicted, 100 * err, gap.empty() ? "-" : gap.c_str(), unit.c_str(),
                p["gpu_name"].get<std::string>().c_str(), p["serving"]["batch"].get<int>());
    auto& [within, rows] = within_by_split[split];
    ++rows;
    if (std::fabs(err) <= 0.15) ++within;
    if (gap.empty()) {
      if (std::fabs(err) > 0.15) outside.push_back(row["id"].get<std::string>());
    } else {
      const GapRange* g = gap_of(gap);
      ASSERT_NE(g, nullptr) << "unknown known_gap '" << gap << "' in " << row["id"];
      EXPECT_TRUE(err >= g->lo && err <= g->hi) << row["id"] << ": error " << 100 * err << "% outside its known gap " << gap
                                                << " [" << 100 * g->lo << "%, " << 100 * g->hi << "%]";
    }
    ++n;
  }
  for (const auto& [split, c] : within_by_split) std::printf("%s: %d of %d within ±15%%\n", split.c_str(), c.first, c.second);
  EXPECT_EQ(n, 77);
  EXPECT_TRUE(outside.empty()) << "outside ±15% without a documented known gap: " << ::testing::PrintToString(outside);
}

}  // namespace
