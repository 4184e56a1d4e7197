// End-to-end: a plan is ranked, marked and warned about by the date of the price kind it is
// priced at (docs/planner.md "Price evidence"), through the built binary (GPUPLAN_BINARY) with two
// imported offers. Before, the evidence came from the on-demand price whatever the kind planned:
// a plan at an undated spot price was marked clean because the offer's on-demand price was dated.
// Expected values are worked out below from the imported rows.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;
using nlohmann::json;

/// Two single-H100 SXM offers at the same prices, on-demand $4/h and spot $1/h: `oddated` has a
/// dated on-demand price (2026-11-25) and an undated spot price; `spotdated` the reverse.
const char* kOffers =
    "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n"
    "oddated,1xh100,us-east,H100 SXM,1,on-demand,4,2026-11-25,quote A\n"
    "oddated,1xh100,us-east,H100 SXM,1,spot,1,unknown,quote A (spot)\n"
    "spotdated,1xh100,us-east,H100 SXM,1,on-demand,4,unknown,quote B\n"
    "spotdated,1xh100,us-east,H100 SXM,1,spot,1,2026-11-25,quote B (spot)\n";

/// A LoRA run of 2e8 tokens on these two offers only; --preemptions-per-day 0 prices spot
/// without loss, so spot ($1/h) is cheaper than on-demand ($4/h) for the same run on both.
const std::string kArgs =
    "plan --model llama-3.1-8b --task lora --tokens 2e8 --preemptions-per-day 0 --today 2026-12-02 "
    "\"provider=oddated or provider=spotdated\"";

class PlanEvidenceKindE2E : public BinaryE2E<PlanEvidenceKindE2E> {
 public:
  static constexpr const char* kName = "plan_evidence_kind";
  static std::string db() { return store_with_import("kinds.sqlite", kOffers); }
};

const json* plan_of(const json& j, const std::string& provider) {
  for (const json& p : j["plans"])
    if (p["provider"] == provider) return &p;
  return nullptr;
}

bool has_warning(const json& plan, const std::string& code) {
  for (const json& w : plan["warnings"])
    if (w["code"] == code) return true;
  return false;
}

/// The table row (after the header and the dashes) naming `provider`, "" when none.
std::string row_of(const std::string& table, const std::string& provider) {
  std::istringstream lines(table);
  std::string line;
  while (std::getline(lines, line))
    if (line.find(provider) != std::string::npos && line.find("1xh100") != std::string::npos) return line;
  return "";
}

// Both plans run at spot. 2026-11-25 to --today 2026-12-02 is 7 days, within the 30-day limit:
// spotdated's spot price is clean (tier 0, rank 0, age 7); oddated's spot price has no date
// (tier 2, rank 2 × 1024 = 2048, mark "?", warning price_date_unknown). Same prices and GPU, so
// the same total: the recommendation goes to the clean one, spotdated (it went to oddated before).
TEST_F(PlanEvidenceKindE2E, AtSpotTheSpotDateDecides) {
  const json j = json_of(run_db(db(), kArgs + " --json"));
  ASSERT_TRUE(j.contains("plans")) << j.dump().substr(0, 800);
  const json* od = plan_of(j, "oddated");
  const json* sp = plan_of(j, "spotdated");
  ASSERT_NE(od, nullptr) << j.dump().substr(0, 800);
  ASSERT_NE(sp, nullptr) << j.dump().substr(0, 800);
  EXPECT_EQ((*od)["cost"]["price_kind"], "spot");
  EXPECT_EQ((*sp)["cost"]["price_kind"], "spot");
  EXPECT_EQ((*od)["total_usd"], (*sp)["total_usd"]);
  EXPECT_EQ((*sp)["demotion_tier"], 0);
  EXPECT_EQ((*sp)["evidence_rank"], 0);
  EXPECT_EQ((*sp)["price_age_days"], 7);
  EXPECT_EQ((*sp)["recommended"], true);
  EXPECT_FALSE(has_warning(*sp, "price_date_unknown"));
  EXPECT_EQ((*od)["demotion_tier"], 2);
  EXPECT_EQ((*od)["evidence_rank"], 2048);
  EXPECT_EQ((*od)["recommended"], false);
  EXPECT_TRUE(has_warning(*od, "price_date_unknown"));
  EXPECT_EQ(j["plans"][0]["provider"], "spotdated");  // the clean plan ranks first

  const RunResult t = run_db(db(), kArgs);
  ASSERT_EQ(t.exit_code, 0) << t.out;
  const std::string sp_row = row_of(t.out, "spotdated"), od_row = row_of(t.out, "oddated");
  ASSERT_FALSE(sp_row.empty()) << t.out;
  ASSERT_FALSE(od_row.empty()) << t.out;
  EXPECT_NE(sp_row.substr(0, 6).find('R'), std::string::npos) << sp_row;
  EXPECT_EQ(sp_row.substr(0, 6).find('?'), std::string::npos) << sp_row;
  EXPECT_NE(od_row.substr(0, 6).find('?'), std::string::npos) << od_row;
}

// --no-spot: both plans run at on-demand, judged by the on-demand dates, the other way round.
TEST_F(PlanEvidenceKindE2E, AtOnDemandTheOnDemandDateDecides) {
  const json j = json_of(run_db(db(), kArgs + " --no-spot --json"));
  ASSERT_TRUE(j.contains("plans")) << j.dump().substr(0, 800);
  const json* od = plan_of(j, "oddated");
  const json* sp = plan_of(j, "spotdated");
  ASSERT_NE(od, nullptr);
  ASSERT_NE(sp, nullptr);
  EXPECT_EQ((*od)["cost"]["price_kind"], "on-demand");
  EXPECT_EQ((*sp)["cost"]["price_kind"], "on-demand");
  EXPECT_EQ((*od)["demotion_tier"], 0);
  EXPECT_EQ((*od)["price_age_days"], 7);
  EXPECT_EQ((*od)["recommended"], true);
  EXPECT_FALSE(has_warning(*od, "price_date_unknown"));
  EXPECT_EQ((*sp)["demotion_tier"], 2);
  EXPECT_EQ((*sp)["evidence_rank"], 2048);
  EXPECT_TRUE(has_warning(*sp, "price_date_unknown"));

  const RunResult t = run_db(db(), kArgs + " --no-spot");
  ASSERT_EQ(t.exit_code, 0) << t.out;
  const std::string sp_row = row_of(t.out, "spotdated"), od_row = row_of(t.out, "oddated");
  ASSERT_FALSE(od_row.empty()) << t.out;
  ASSERT_FALSE(sp_row.empty()) << t.out;
  EXPECT_NE(od_row.substr(0, 6).find('R'), std::string::npos) << od_row;
  EXPECT_NE(sp_row.substr(0, 6).find('?'), std::string::npos) << sp_row;
}

}  // namespace
