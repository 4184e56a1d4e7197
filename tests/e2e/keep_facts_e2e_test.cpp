// End-to-end regression test (issue 11, "bad input ... loses nothing"): a price quote imported for
// an offer that another import already stored, with fewer columns, used to replace the stored
// offer's facts wholesale. The exact case that showed it (2026-12-04): the bundled AWS capacity
// block `aws/p5.48xlarge capacity-block/us-east-1` (EFA 3,200 Gbit/s, up to 64 nodes, from
// aws-capacity-blocks) lost its network and node limits when a user's 9-column quote for the same
// instance was imported. Now a fact the quote does not state stays as stored; the quote's price
// is a new observation. The quote's price is invented (a test fixture, not market data).
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

class KeepFactsE2E : public BinaryE2E<KeepFactsE2E> {
 public:
  static constexpr const char* kName = "keep-facts";
  static json offer(const std::string& db, const std::string& id_filter) {
    const RunResult r = run_db(db, "offers '" + id_filter + "' --limit 5 --format json --today 2026-12-04");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_array() && j.size() == 1u) << r.out.substr(0, 2000);
    return j.is_array() && !j.empty() ? j[0] : json();
  }
};

constexpr const char* kFilter = "provider=aws instance=\"p5.48xlarge capacity-block\" region=us-east-1";

TEST_F(KeepFactsE2E, AQuoteWithFewerColumnsKeepsTheStoredNetworkAndNodeLimits) {
  const json before = offer("quote.sqlite", kFilter);
  ASSERT_EQ(before.value("id", ""), "aws/p5.48xlarge capacity-block/us-east-1") << before.dump();
  // What the bundled source stored (data/offers/sourced, aws-capacity-blocks): the test reads it
  // back rather than restating it, then checks that the quote leaves each value as it was.
  ASSERT_NE(before["inter_node_network"], "unknown") << before.dump();
  ASSERT_TRUE(before["inter_node_bits_per_s"].is_number()) << before.dump();
  ASSERT_TRUE(before["max_nodes"].is_number()) << before.dump();
  const fs::path csv = dir_ / "quote.csv";
  std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n"
                        "aws,p5.48xlarge capacity-block,us-east-1,H100 SXM,8,on-demand,40.00,2026-12-01,my quote\n";
  const RunResult imp = run_db("quote.sqlite", "import '" + csv.string() + "'");
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  // Nothing the quote states differs from the stored facts: the offer is unchanged, one
  // observation is added.
  EXPECT_NE(imp.out.find("0 added, 0 updated, 1 unchanged"), std::string::npos) << imp.out;
  EXPECT_NE(imp.out.find("observations: 1 added"), std::string::npos) << imp.out;
  const json after = offer("quote.sqlite", kFilter);
  for (const char* field : {"inter_node_network", "inter_node_bits_per_s", "max_nodes", "min_nodes", "intra_node_link",
                            "billing_granularity_seconds", "billing_minimum_billed_seconds", "gpu_memory_bytes"})
    EXPECT_EQ(after[field], before[field]) << field << "\nbefore " << before.dump() << "\nafter " << after.dump();
  // The quote is the offer's latest on-demand price (2026-12-01 is its newest observation).
  EXPECT_DOUBLE_EQ(after.value("usd_per_hour", 0.0), 40.0) << after.dump();
  EXPECT_EQ(after.value("source", ""), "user:my quote") << after.dump();

  // A quote that states a fact replaces it: the same instance with `network` ethernet and
  // 400 Gbit/s per node is stored so (the newest import's stated facts win).
  const fs::path csv2 = dir_ / "quote2.csv";
  std::ofstream(csv2) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source,"
                         "network,network_gbps\n"
                         "aws,p5.48xlarge capacity-block,us-east-1,H100 SXM,8,on-demand,41.00,2026-12-02,my quote 2,"
                         "ethernet,400\n";
  const RunResult imp2 = run_db("quote.sqlite", "import '" + csv2.string() + "'");
  ASSERT_EQ(imp2.exit_code, 0) << imp2.out;
  EXPECT_NE(imp2.out.find("0 added, 1 updated, 0 unchanged"), std::string::npos) << imp2.out;
  const json stated = offer("quote.sqlite", kFilter);
  EXPECT_EQ(stated["inter_node_network"], "ethernet") << stated.dump();
  EXPECT_DOUBLE_EQ(stated.value("inter_node_bits_per_s", 0.0), 400e9) << stated.dump();
  EXPECT_EQ(stated["max_nodes"], before["max_nodes"]) << stated.dump();  // not stated: kept
}

}  // namespace
