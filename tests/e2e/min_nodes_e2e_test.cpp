// End-to-end tests of offers sold only as clusters of a minimum size (issue 9, "reserved
// clusters and capacity blocks ... with their term and minimum size"), through the built binary
// on small imported catalogs: the `min_nodes` import column, the offers listing (table and JSON),
// and plans that bill the minimum when the job runs on fewer nodes, with the warning naming the
// idle capacity paid. Terms (docs/import-format.md): a month of 730 h.
// The fixture prices are invented (test fixtures, not market data).
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

class MinNodesE2E : public BinaryE2E<MinNodesE2E> {
 public:
  static constexpr const char* kName = "min-nodes";
  static RunResult import_rows(const std::string& db, const std::string& rows) {
    const fs::path csv = dir_ / (db + ".csv");
    std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,"
                          "interconnect,network,network_gbps,max_nodes,min_nodes\n"
                       << rows;
    return run_db(db, "import '" + csv.string() + "'");
  }
  /// 8×H100 nodes at $2/GPU-h (= $16/h per node) on a one-month commitment, sold only as 4 to 16
  /// nodes.
  static constexpr const char* kCluster =
      "examplecloud,hgx-h100-8x-cluster,us-west,H100 SXM,8,reserved-1m,2.00,2026-11-02,test fixture,nvlink,infiniband,"
      "3200,16,4\n";
};

// A LoRA run of 2e7 tokens pinned to 2 nodes lasts hours; the offer is sold as at least 4 nodes,
// so the bill is 4 nodes × 8 GPUs × 730 h × $2/GPU-h = $46,720 (not 2 × 8 × 730 × 2 = $23,360),
// and the warning names the 2 idle nodes (16 GPUs, $23,360 of it).
TEST_F(MinNodesE2E, AJobOnFewerNodesIsBilledTheMinimumWithAWarning) {
  const RunResult imp = import_rows("fewer.sqlite", kCluster);
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  const std::string args =
      "plan --model llama-3.1-8b --task lora --tokens 2e7 --nodes 2 'provider=examplecloud' --today 2026-11-30";
  const RunResult r = run_db("fewer.sqlite", args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
  ASSERT_EQ(j["plans"].size(), 1u) << r.out.substr(0, 2000);
  const json& p = j["plans"][0];
  const json& cost = p["cost"];
  EXPECT_EQ(cost["price_kind"], "reserved-1m");
  EXPECT_EQ(cost["instances"], 4);
  EXPECT_LT(cost["run_seconds"].get<double>(), 24 * 3600.0);  // hours of work, not the term
  EXPECT_NEAR(cost["billed_seconds"].get<double>(), 730.0 * 3600.0, 1e-6);
  EXPECT_NEAR(cost["compute_usd"].get<double>(), 4 * 8 * 730.0 * 2.0, 1e-6);
  const json* w = nullptr;
  for (const json& x : p["warnings"])
    if (x["code"] == "min_nodes_billed") w = &x;
  ASSERT_NE(w, nullptr) << p["warnings"].dump();
  EXPECT_EQ((*w)["values"]["min_nodes"], "4");
  EXPECT_EQ((*w)["values"]["used_nodes"], "2");
  EXPECT_EQ((*w)["values"]["idle_nodes"], "2");
  EXPECT_EQ((*w)["values"]["idle_gpus"], "16");
  EXPECT_EQ((*w)["values"]["idle_usd"], "23360");
  // The printed plan says it in words (the table wraps long lines: whitespace runs read as one space).
  const RunResult t = run_db("fewer.sqlite", args);
  ASSERT_EQ(t.exit_code, 0) << t.out.substr(0, 2000);
  std::string flat;
  for (char ch : t.out) {
    const bool space = ch == ' ' || ch == '\n';
    if (!space || flat.empty() || flat.back() != ' ') flat += space ? ' ' : ch;
  }
  EXPECT_NE(flat.find("hgx-h100-8x-cluster is sold as at least 4 instances: the job runs on 2, 4 are billed (2 idle, "
                       "16 GPUs, $23360 of the compute bill)"),
            std::string::npos)
      << t.out;
}

// Unpinned, no plan of the offer bills fewer than 4 nodes; the listing shows the node range.
TEST_F(MinNodesE2E, NoPlanBillsFewerThanTheMinimumAndOffersShowIt) {
  const RunResult imp = import_rows("free.sqlite", kCluster);
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  const RunResult r = run_db("free.sqlite",
                             "plan --model llama-3.1-8b --task lora --tokens 2e7 'provider=examplecloud' "
                             "--today 2026-11-30 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
  ASSERT_FALSE(j["plans"].empty()) << r.out.substr(0, 2000);
  for (const json& p : j["plans"]) EXPECT_GE(p["cost"]["instances"].get<int>(), 4) << p["cost"].dump();

  const RunResult o = run_db("free.sqlite", "offers 'provider=examplecloud' --price-kind reserved-1m --format json");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const json oj = json::parse(o.out, nullptr, false);
  ASSERT_TRUE(oj.is_array()) << o.out;
  ASSERT_EQ(oj.size(), 1u) << o.out;
  EXPECT_EQ(oj[0]["min_nodes"], 4);
  EXPECT_EQ(oj[0]["max_nodes"], 16);
  const RunResult table = run_db("free.sqlite", "offers 'provider=examplecloud' --price-kind reserved-1m");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("NODES"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("4-16"), std::string::npos) << table.out;
}

// A minimum above the maximum cannot be rented: refused at file:line naming the column, nothing
// written.
TEST_F(MinNodesE2E, AMinimumAboveTheMaximumIsRefusedAtItsLine) {
  const RunResult imp = import_rows(
      "bad.sqlite", "examplecloud,hgx-h100-8x-cluster,us-west,H100 SXM,8,reserved-1m,2.00,2026-11-02,test fixture,"
                    "nvlink,infiniband,3200,4,8\n");
  EXPECT_EQ(imp.exit_code, 2) << imp.out;
  EXPECT_NE(imp.out.find("bad.sqlite.csv:2"), std::string::npos) << imp.out;
  EXPECT_NE(imp.out.find("min_nodes"), std::string::npos) << imp.out;
  const RunResult o = run_db("bad.sqlite", "offers 'provider=examplecloud' --price-kind reserved-1m --format json");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_EQ(json::parse(o.out, nullptr, false), json::array()) << o.out;
}

}  // namespace
