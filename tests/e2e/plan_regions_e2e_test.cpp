// End-to-end: one spot plan in two regions with different preemption rates is one row, and the
// row (and its region list) does not depend on --sort (issue 7 "Rows that differ only by region
// or zone collapse"; docs/planner.md "Regions"). Through the built binary (GPUPLAN_BINARY) on a
// fixture catalog imported into the suite's own store.
//
// Fixture: examplecloud h100-8x-spot, 8 × H100 SXM, spot at $2.00/GPU-h in us-east and us-west,
// preempted 3 times a day in us-east and 0.5 in us-west (per-offer preemptions_per_day, as AWS
// publishes interruption frequencies per region). The same job takes the same time before spot
// loss in both regions, and longer in us-east (Daly 2006: more preemptions → more lost work and
// restarts), so before this rule the two regions stayed two rows, and the region list attached to
// whichever row the sort printed first (a 2-node row under --sort cost, a 4-node row under time).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;
using nlohmann::json;
namespace fs = std::filesystem;

class PlanRegionsE2E : public BinaryE2E<PlanRegionsE2E> {
 public:
  static constexpr const char* kName = "plan-regions";
  static void SetUpTestSuite() {
    BinaryE2E<PlanRegionsE2E>::SetUpTestSuite();
    const fs::path csv = dir_ / "spot.csv";
    std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,"
                          "interconnect,network,network_gbps,max_nodes,preemptions_per_day\n"
                          "examplecloud,h100-8x-spot,us-east,H100 SXM,8,spot,2.00,2026-11-20,test fixture,nvlink,"
                          "infiniband,3200,4,3\n"
                          "examplecloud,h100-8x-spot,us-west,H100 SXM,8,spot,2.00,2026-11-20,test fixture,nvlink,"
                          "infiniband,3200,4,0.5\n";
    imported_ = run("import '" + csv.string() + "'");
  }
  static inline RunResult imported_;
};

const std::string kPlan =
    "plan --model llama-3.1-70b --task lora --tokens 5e8 --today 2026-12-01 --limit 50 'provider=examplecloud'";

std::string layout_key(const json& p) { return std::to_string(p["instances"].get<int>()) + "|" + p["layout"].dump(); }

TEST_F(PlanRegionsE2E, SpotPlanInTwoRegionsIsOneRowWhateverTheSort) {
  ASSERT_EQ(imported_.exit_code, 0) << imported_.out;
  // Each region alone: the same plans (nodes × layout), the same time before spot loss (goodput
  // wall time), a longer run and a higher total in us-east (6× the preemption rate).
  const json east = run_json(kPlan + " 'region=us-east'", 0);
  const json west = run_json(kPlan + " 'region=us-west'", 0);
  std::map<std::string, json> east_by, west_by;
  for (const auto& p : east["plans"]) east_by[layout_key(p)] = p;
  for (const auto& p : west["plans"]) west_by[layout_key(p)] = p;
  ASSERT_FALSE(west_by.empty());
  for (const auto& [k, w] : west_by) {
    ASSERT_TRUE(east_by.count(k)) << k;
    const json& e = east_by[k];
    ASSERT_EQ(w["cost"]["price_kind"], "spot");
    ASSERT_EQ(e["cost"]["price_kind"], "spot");
    EXPECT_DOUBLE_EQ(w["goodput"]["wall_seconds"].get<double>(), e["goodput"]["wall_seconds"].get<double>()) << k;
    EXPECT_GT(e["time_seconds"].get<double>(), w["time_seconds"].get<double>()) << k;
    EXPECT_GT(e["total_usd"].get<double>(), w["total_usd"].get<double>()) << k;
  }

  // Both regions: one row per plan, the cheaper region's (us-west) listing us-east too, with the
  // same rows and region lists under every sort.
  std::map<std::string, std::vector<std::string>> first_regions;
  for (const char* sort : {"cost", "time", "recommended"}) {
    const json j = run_json(kPlan + " --sort " + sort, 0);
    std::map<std::string, std::vector<std::string>> regions;
    for (const auto& p : j["plans"]) {
      const std::string k = layout_key(p);
      EXPECT_TRUE(regions.emplace(k, p["regions"].get<std::vector<std::string>>()).second) << sort << ": duplicate " << k;
      EXPECT_EQ(p["offer_id"], "examplecloud/h100-8x-spot/us-west") << sort << " " << k;
      EXPECT_EQ(p["regions"], json({"us-west", "us-east"})) << sort << " " << k;
      EXPECT_EQ(p["same_plan_offer_ids"], json({"examplecloud/h100-8x-spot/us-east"})) << sort << " " << k;
      ASSERT_TRUE(west_by.count(k)) << k;
      EXPECT_DOUBLE_EQ(p["total_usd"].get<double>(), west_by[k]["total_usd"].get<double>()) << sort << " " << k;
      EXPECT_DOUBLE_EQ(p["time_seconds"].get<double>(), west_by[k]["time_seconds"].get<double>()) << sort << " " << k;
    }
    EXPECT_EQ(regions.size(), west_by.size()) << sort;
    if (first_regions.empty()) {
      first_regions = regions;
    } else {
      EXPECT_EQ(regions, first_regions) << sort;
    }
  }
}

TEST_F(PlanRegionsE2E, TableListsTheOtherRegionOnEveryRow) {
  ASSERT_EQ(imported_.exit_code, 0) << imported_.out;
  for (const char* sort : {"cost", "time"}) {
    const RunResult r = run(kPlan + " --sort " + sort);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::size_t rows = 0, listed = 0;
    for (std::size_t at = r.out.find("h100-8x-spot"); at != std::string::npos; at = r.out.find("h100-8x-spot", at + 1)) {
      const std::size_t eol = r.out.find('\n', at);
      const std::string line = r.out.substr(at, eol - at);
      ++rows;
      listed += line.find("us-west +1") != std::string::npos;
    }
    EXPECT_GE(rows, 2u) << r.out;
    EXPECT_EQ(listed, rows) << sort << "\n" << r.out;
  }
}

}  // namespace
