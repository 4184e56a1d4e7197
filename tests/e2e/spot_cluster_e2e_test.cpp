// End-to-end regression test for a defect the sixth new-user trial found (issue 7, cost model):
// a spot plan on 16 instances was priced with the MTBF of one instance. A synchronous job stops
// when ANY of its instances is preempted, so with independent interruptions at r per
// instance-day (the unit of `preemptions_per_day` in docs/import-format.md and of
// --preemptions-per-day) the cluster's MTBF is 1 day / (instances × r): 16 instances at
// 1 per instance-day see one preemption every 86,400 / 16 = 5,400 s, not every 86,400 s.
// Through the built binary (GPUPLAN_BINARY) on a one-row imported catalog; the row's price and
// terms are a test fixture, not market data.
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

class SpotClusterE2E : public BinaryE2E<SpotClusterE2E> {
 public:
  static constexpr const char* kName = "spot-cluster";
  static RunResult run_spot(const std::string& args) { return run_db("spot.sqlite", args); }
};

// One 8×H100 node type on InfiniBand, up to 16 nodes, spot only at $2/GPU-h, 1 preemption per
// instance-day (fixture values).
TEST_F(SpotClusterE2E, PreemptionRateScalesWithTheInstancesOfTheJob) {
  const fs::path csv = dir_ / "spot.csv";
  std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,"
                        "interconnect,network,network_gbps,max_nodes,preemptions_per_day\n"
                        "spotcloud,hgx-h100-8x,us-west,H100 SXM,8,spot,2.00,2026-11-02,test fixture,nvlink,infiniband,"
                        "3200,16,1\n";
  const RunResult imp = run_spot("import '" + csv.string() + "'");
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  for (const int instances : {1, 2, 16}) {
    const RunResult r = run_spot("plan --model llama-3.1-8b --task full --tokens 1e10 --gpus " + std::to_string(8 * instances) +
                               " 'provider=spotcloud' --today 2026-11-30 --limit 1 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
    const json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
    ASSERT_FALSE(j["plans"].empty()) << r.out.substr(0, 2000);
    const json& p = j["plans"][0];
    ASSERT_EQ(p["instances"].get<int>(), instances);
    const json& c = p["cost"];
    ASSERT_EQ(c["price_kind"], "spot");
    const json& s = c["spot"];
    // MTBF of the job = 86,400 s / (1 per instance-day × instances).
    EXPECT_DOUBLE_EQ(s["mtbf_seconds"].get<double>(), 86400.0 / instances) << instances << " instances";
    // Daly's first order: expected preemptions = wall / MTBF.
    EXPECT_NEAR(s["expected_preemptions"].get<double>(), s["wall_seconds"].get<double>() / (86400.0 / instances), 1e-9);
  }
}

// trial9d D4: the AWS Spot Advisor band of an offer reached only `plan --json`; `offers --format
// json` now shows its preemptions_per_day and where it comes from. The bundled band of
// p5.48xlarge in us-east-2 is "5-10%" (data/offers/aws-spot-advisor), planned at the band's upper
// edge: 11% of instances per trailing month / 30 days = 0.0036667 per instance-day.
TEST_F(SpotClusterE2E, OffersShowTheSpotBandThePlanUses) {
  const RunResult r = run_db("bundled.sqlite", "offers 'provider=aws instance=p5.48xlarge region=us-east-2' --price-kind spot "
                                                "--format json --limit 5");
  ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
  const json rows = j.is_array() ? j : j.at("offers");
  ASSERT_FALSE(rows.empty()) << r.out.substr(0, 2000);
  int with_spot = 0;
  for (const json& o : rows) {
    if (o.at("usd_per_hour").is_null()) continue;  // listed without a spot price (another source's row): no band
    ++with_spot;
    ASSERT_TRUE(o.at("preemptions_per_day").is_number()) << o.dump();
    EXPECT_NEAR(o["preemptions_per_day"].get<double>(), 0.11 / 30.0, 1e-12) << o.dump();
    bool cited = false;
    for (const json& src : o.at("billing_sources"))
      cited |= src.get<std::string>().find("preemptions_per_day: AWS Spot Instance Advisor") == 0 &&
               src.get<std::string>().find("5-10%") != std::string::npos;
    EXPECT_TRUE(cited) << o.dump();
  }
  EXPECT_GE(with_spot, 1) << r.out.substr(0, 2000);
}

}  // namespace
