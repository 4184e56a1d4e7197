// End-to-end (the built binary, a throw-away store seeded with the bundled catalog): `gpuplan
// offers` lists prices in the planner's evidence order by default (docs/freshness.md "Order of the
// offer list"): clean dated prices within --max-price-age first, then stale, undated, and prices a
// flag questions; --include-flagged gives one plain price order. A small quote file is imported:
// four 8 x H100 SXM offers of an invented provider (SYNTHETIC prices and dates, not market data):
//   clean    $3.10/GPU-h observed 2026-11-20 (11 days before --today 2026-12-01)
//   stale    $2.40/GPU-h observed 2026-09-01 (91 days)
//   undated  $2.20/GPU-h observed unknown
//   cheapold $0.60/GPU-h observed 2024-05-20: under half the lowest non-spot H100 index series
//            of the bundled ewyluda index (marketplace $2.50 on 2026-10-05, half = $1.25), so the
//            import flags it below_market_index (docs/freshness.md), and 925 days old.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "binary_e2e.hpp"

namespace gpuplan::e2e {
namespace {

using nlohmann::json;

class OffersEvidenceE2E : public BinaryE2E<OffersEvidenceE2E> {
 public:
  static constexpr const char* kName = "offers-evidence";

 protected:
  static void SetUpTestSuite() {
    BinaryE2E<OffersEvidenceE2E>::SetUpTestSuite();
    const auto csv = dir_ / "quotes.csv";
    std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source\n"
                          "e2eq,clean,r,H100 SXM,8,on-demand,3.10,2026-11-20,e2e fixture\n"
                          "e2eq,stale,r,H100 SXM,8,on-demand,2.40,2026-09-01,e2e fixture\n"
                          "e2eq,undated,r,H100 SXM,8,on-demand,2.20,unknown,e2e fixture\n"
                          "e2eq,cheapold,r,H100 SXM,8,on-demand,0.60,2024-05-20,e2e fixture\n";
    const RunResult r = run("import '" + csv.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    // The reserved-only quote of docs/import-format.md "CSV example", as written there.
    const auto reserved = dir_ / "reserved.csv";
    std::ofstream(reserved)
        << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,interconnect,"
           "network,network_gbps,max_nodes,billing_granularity_seconds,billing_minimum_seconds\n"
           "examplecloud,hgx-h100-8x-reserved,us-west,H100 SXM,8,reserved-1y,2.10,2026-11-02,sales quote #1234 "
           "(email),nvlink,infiniband,3200,32,3600,2592000\n";
    const RunResult rr = run("import '" + reserved.string() + "'");
    ASSERT_EQ(rr.exit_code, 0) << rr.out;
  }

  static json offers(const std::string& args) {
    const RunResult r = run("offers " + args + " --format json");
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out.substr(0, 2000);
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << args << "\n" << r.out.substr(0, 2000);
    return j;
  }
  static std::vector<std::string> instances(const json& rows) {
    std::vector<std::string> out;
    for (const json& r : rows) out.push_back(r["instance_type"].get<std::string>());
    return out;
  }
};

TEST_F(OffersEvidenceE2E, FlaggedCheapStaleRowDoesNotLeadByDefault) {
  const json rows = offers("provider=e2eq --today 2026-12-01");
  EXPECT_EQ(instances(rows), (std::vector<std::string>{"clean", "stale", "undated", "cheapold"}));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["evidence"], "clean");
  EXPECT_EQ(rows[1]["evidence"], "stale");
  EXPECT_EQ(rows[2]["evidence"], "undated");
  EXPECT_EQ(rows[3]["evidence"], "flagged");
  bool below = false;
  for (const json& f : rows[3]["flags"]) below |= f["rule"] == "below_market_index";
  EXPECT_TRUE(below) << rows[3].dump();
  // The same first page (limit 1) is the clean row.
  EXPECT_EQ(instances(offers("provider=e2eq --today 2026-12-01 --limit 1")), std::vector<std::string>{"clean"});
}

TEST_F(OffersEvidenceE2E, IncludeFlaggedListsOnePriceOrder) {
  // $0.60 < $2.20 < $2.40 < $3.10 per GPU-hour.
  EXPECT_EQ(instances(offers("provider=e2eq --today 2026-12-01 --include-flagged")),
            (std::vector<std::string>{"cheapold", "undated", "stale", "clean"}));
}

TEST_F(OffersEvidenceE2E, MaxPriceAgeMovesTheStaleLimit) {
  // 100 days: the 91-day-old price is clean, and cheaper than the 11-day-old one.
  EXPECT_EQ(instances(offers("provider=e2eq --today 2026-12-01 --max-price-age 100d")),
            (std::vector<std::string>{"stale", "clean", "undated", "cheapold"}));
  const RunResult bad = run("offers provider=e2eq --max-price-age soon");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--max-price-age"), std::string::npos) << bad.out;
}

TEST_F(OffersEvidenceE2E, GroupByLeavesFlaggedPricesOutOfTheStatistics) {
  // Default: {2.20, 2.40, 3.10}: min 2.20, median 2.40, max 3.10; one flagged price counted apart.
  json g = offers("provider=e2eq --today 2026-12-01 --group-by gpu");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0]["offers"], 4);
  EXPECT_EQ(g[0]["priced_offers"], 3);
  EXPECT_EQ(g[0]["flagged_offers"], 1);
  EXPECT_NEAR(g[0]["min_usd_per_gpu_hour"].get<double>(), 2.20, 1e-9);
  EXPECT_NEAR(g[0]["median_usd_per_gpu_hour"].get<double>(), 2.40, 1e-9);
  EXPECT_NEAR(g[0]["max_usd_per_gpu_hour"].get<double>(), 3.10, 1e-9);
  // --include-flagged: {0.60, 2.20, 2.40, 3.10}: min 0.60, median (2.20 + 2.40) / 2 = 2.30.
  g = offers("provider=e2eq --today 2026-12-01 --group-by gpu --include-flagged");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0]["priced_offers"], 4);
  EXPECT_EQ(g[0]["flagged_offers"], 0);
  EXPECT_NEAR(g[0]["min_usd_per_gpu_hour"].get<double>(), 0.60, 1e-9);
  EXPECT_NEAR(g[0]["median_usd_per_gpu_hour"].get<double>(), 2.30, 1e-9);
}

// The whole catalog (bundled + the quotes): rows never go back to a better evidence tier, so no
// flagged or stale price comes before a cleaner one.
TEST_F(OffersEvidenceE2E, WholeListingIsInEvidenceOrder) {
  const json rows = offers("--limit 0 --today 2026-12-01");
  ASSERT_GT(rows.size(), 1000u);
  const std::vector<std::string> order = {"clean", "stale", "undated", "flagged"};
  auto rank = [&](const json& r) {
    return std::find(order.begin(), order.end(), r["evidence"].get<std::string>()) - order.begin();
  };
  std::size_t flagged = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i]["usd_per_gpu_hour"].is_null()) break;  // offers without a price of the kind come last
    EXPECT_LE(rank(rows[i - 1]), rank(rows[i])) << rows[i - 1]["id"] << " before " << rows[i]["id"];
    flagged += rows[i]["evidence"] == "flagged";
  }
  EXPECT_GT(flagged, 0u);  // the bundled catalog has below_market_index rows: the check can fail
  EXPECT_EQ(rows[0]["evidence"], "clean") << rows[0].dump();
}

// Item 2 of issue 9: a reserved-only quote shows its reserved price with the term, source and date
// in the default (on-demand) list, and --price-kind lists reserved prices. $2.10/GPU-h × 8 GPUs =
// $16.80/h; observed 2026-11-02, 29 days before 2026-12-01.
TEST_F(OffersEvidenceE2E, ReservedOnlyQuoteShowsItsReservedPrice) {
  json rows = offers("provider=examplecloud --today 2026-12-01");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["price_kind"], "on-demand");
  EXPECT_TRUE(rows[0]["usd_per_hour"].is_null());  // no on-demand price: never made up
  const json& other = rows[0]["other_price"];
  ASSERT_TRUE(other.is_object()) << rows[0].dump();
  EXPECT_EQ(other["price_kind"], "reserved-1y");
  EXPECT_NEAR(other["usd_per_hour"].get<double>(), 16.80, 1e-9);
  EXPECT_NEAR(other["usd_per_gpu_hour"].get<double>(), 2.10, 1e-9);
  EXPECT_EQ(other["source"], "user:sales quote #1234 (email)");  // user quotes' dataset is "user:" + source
  EXPECT_EQ(other["observed_at"], "2026-11-02");
  EXPECT_EQ(other["age_days"], 29);
  // The table: price cells marked with the term, the quote's source and date (no "unknown").
  const RunResult t = run("offers provider=examplecloud --today 2026-12-01");
  ASSERT_EQ(t.exit_code, 0) << t.out;
  EXPECT_NE(t.out.find("2.100 reserved-1y"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("16.800 reserved-1y"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("sales quote #1234 (email)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("2026-11-02"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("--price-kind"), std::string::npos) << t.out;

  // --price-kind reserved-1y lists, sorts and dates the 1-year price itself.
  rows = offers("provider=examplecloud --today 2026-12-01 --price-kind reserved-1y");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["price_kind"], "reserved-1y");
  EXPECT_NEAR(rows[0]["usd_per_hour"].get<double>(), 16.80, 1e-9);
  EXPECT_EQ(rows[0]["observed_at"], "2026-11-02");
  EXPECT_EQ(rows[0]["evidence"], "clean");
  EXPECT_TRUE(rows[0]["other_price"].is_null());
  // The filter field `reserved`: offers with a reserved price of any term.
  EXPECT_EQ(offers("provider=examplecloud reserved").size(), 1u);
  EXPECT_EQ(offers("provider=examplecloud not reserved").size(), 0u);
  EXPECT_EQ(offers("provider=e2eq reserved").size(), 0u);  // on-demand quotes only
  // The bundled 1-year prices (GCP committed use, Azure savings plan) are listed as such; an
  // offer whose reserved price has another term (reserved-3y only) shows that one as other_price.
  rows = offers("reserved --price-kind reserved-1y --limit 0 --today 2026-12-01");
  std::size_t one_year = 0;
  for (const json& r : rows) {
    EXPECT_EQ(r["price_kind"], "reserved-1y");
    if (r["usd_per_hour"].is_number()) {
      ++one_year;
    } else {
      ASSERT_TRUE(r["other_price"].is_object()) << r["id"];
      EXPECT_NE(r["other_price"]["price_kind"], "reserved-1y") << r["id"];
    }
  }
  EXPECT_GT(one_year, 10u);
  // Bad input: one line, exit 2, naming the option and the kinds.
  RunResult bad = run("offers --price-kind weekly");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--price-kind"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("reserved-1y"), std::string::npos) << bad.out;
  bad = run("offers --spot --price-kind reserved-1y");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

}  // namespace
}  // namespace gpuplan::e2e
