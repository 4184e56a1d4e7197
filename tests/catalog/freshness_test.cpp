// Price age, freshness tiers and per-group price statistics (catalog/freshness.hpp).
// Expected values are hand calculations written next to each check; prices and dates are
// synthetic test inputs (store_fixtures.hpp helpers), not market data.
#include "catalog/freshness.hpp"

#include <gtest/gtest.h>

#include "store_fixtures.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

using testing::base_offer;
using testing::obs;

TEST(Freshness, TiersAtTheDefaultLimits) {
  const FreshnessLimits lim;  // fresh <= 7 days, stale > 30 days
  const PriceObservation today = obs(PriceKind::on_demand, 1, "2026-11-30");
  const PriceObservation week = obs(PriceKind::on_demand, 1, "2026-11-23");       // 7 days: still fresh
  const PriceObservation eight = obs(PriceKind::on_demand, 1, "2026-11-22");      // 8 days: aging
  const PriceObservation month = obs(PriceKind::on_demand, 1, "2026-10-31");      // 30 days: aging
  const PriceObservation old = obs(PriceKind::on_demand, 1, "2026-10-30T23:00:00Z");  // 31 days: stale
  const PriceObservation undated = obs(PriceKind::on_demand, 1, std::nullopt);

  EXPECT_EQ(price_freshness(&today, "2026-11-30", lim).tier, FreshnessTier::fresh);
  EXPECT_EQ(price_freshness(&today, "2026-11-30", lim).age_days, 0);
  EXPECT_EQ(price_freshness(&week, "2026-11-30", lim).tier, FreshnessTier::fresh);
  EXPECT_EQ(price_freshness(&eight, "2026-11-30", lim).tier, FreshnessTier::aging);
  EXPECT_EQ(price_freshness(&eight, "2026-11-30", lim).age_days, 8);
  EXPECT_EQ(price_freshness(&month, "2026-11-30", lim).tier, FreshnessTier::aging);
  EXPECT_EQ(price_freshness(&old, "2026-11-30", lim).tier, FreshnessTier::stale);
  EXPECT_EQ(price_freshness(&old, "2026-11-30", lim).age_days, 31);
  EXPECT_EQ(price_freshness(&undated, "2026-11-30", lim).tier, FreshnessTier::undated);
  EXPECT_FALSE(price_freshness(&undated, "2026-11-30", lim).age_days.has_value());
  EXPECT_EQ(price_freshness(nullptr, "2026-11-30", lim).tier, FreshnessTier::undated);
  EXPECT_EQ(price_freshness(&today, "", lim).tier, FreshnessTier::undated);  // no clock: never guessed
}

TEST(Freshness, LimitsAreConfigurableAndChecked) {
  const PriceObservation p = obs(PriceKind::on_demand, 1, "2026-11-20");  // 10 days before 2026-11-30
  EXPECT_EQ(price_freshness(&p, "2026-11-30", FreshnessLimits{14, 60}).tier, FreshnessTier::fresh);
  EXPECT_EQ(price_freshness(&p, "2026-11-30", FreshnessLimits{1, 5}).tier, FreshnessTier::stale);
  EXPECT_THROW((FreshnessLimits{10, 5}.validate()), Error);
  EXPECT_THROW((FreshnessLimits{-1, 5}.validate()), Error);
  EXPECT_NO_THROW((FreshnessLimits{5, 5}.validate()));
}

TEST(Freshness, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);  // (2 + 3) / 2
  EXPECT_FALSE(median({}).has_value());
}

TEST(Freshness, GroupsByGpuWithMinMedianMaxPerGpuHour) {
  std::vector<Offer> v;
  {  // 8 x H100 at $24/h -> $3.00 per GPU-hour
    Offer o = base_offer("a/h8/r", "a", "h8", "r", "H100", "NVIDIA H100 SXM", 8, 80e9);
    o.prices = {obs(PriceKind::on_demand, 24, "2026-11-01")};
    v.push_back(o);
  }
  {  // 1 x H100 at $2/h -> $2.00; dated later
    Offer o = base_offer("b/h1/r", "b", "h1", "r", "H100", "NVIDIA H100 SXM", 1, 80e9);
    o.prices = {obs(PriceKind::on_demand, 2, "2026-11-20")};
    v.push_back(o);
  }
  {  // 2 x H100 at $9/h -> $4.50; undated
    Offer o = base_offer("b/h2/r", "b", "h2", "r", "H100", "NVIDIA H100 SXM", 2, 80e9);
    o.prices = {obs(PriceKind::on_demand, 9, std::nullopt)};
    v.push_back(o);
  }
  {  // H100 with only a spot price: counted, not priced (on-demand statistics)
    Offer o = base_offer("c/h1s/r", "c", "h1s", "r", "H100", "NVIDIA H100 SXM", 1, 80e9);
    o.prices = {obs(PriceKind::spot, 1, "2026-11-20")};
    v.push_back(o);
  }
  {  // 4 x L4 at $3.20/h -> $0.80
    Offer o = base_offer("a/l4/r", "a", "l4", "r", "L4", "NVIDIA L4", 4, 24e9);
    o.prices = {obs(PriceKind::on_demand, 3.2, "2026-11-02")};
    v.push_back(o);
  }
  const auto g = group_offer_prices(v, OfferGroupKey::gpu, PriceKind::on_demand);
  ASSERT_EQ(g.size(), 2u);
  // L4 first (median 0.80 < 3.00).
  EXPECT_EQ(g[0].key, "NVIDIA L4");
  EXPECT_EQ(g[0].offers, 1u);
  EXPECT_DOUBLE_EQ(*g[0].median_usd_per_gpu_hour, 0.8);
  EXPECT_EQ(g[1].key, "NVIDIA H100 SXM");
  EXPECT_EQ(g[1].offers, 4u);
  EXPECT_EQ(g[1].priced_offers, 3u);
  EXPECT_EQ(g[1].providers, 3u);      // a, b, c
  EXPECT_EQ(g[1].dated_offers, 2u);   // the $4.50 price is undated
  EXPECT_DOUBLE_EQ(*g[1].min_usd_per_gpu_hour, 2.0);
  EXPECT_DOUBLE_EQ(*g[1].median_usd_per_gpu_hour, 3.0);  // {2.00, 3.00, 4.50}
  EXPECT_DOUBLE_EQ(*g[1].max_usd_per_gpu_hour, 4.5);
  EXPECT_EQ(g[1].newest_observed_at, "2026-11-20");

  const auto bp = group_offer_prices(v, OfferGroupKey::provider, PriceKind::on_demand);
  ASSERT_EQ(bp.size(), 3u);
  // a: {3.00, 0.80} -> median 1.90; b: {2.00, 4.50} -> 3.25; c: unpriced, last.
  EXPECT_EQ(bp[0].key, "a");
  EXPECT_DOUBLE_EQ(*bp[0].median_usd_per_gpu_hour, 1.9);
  EXPECT_EQ(bp[0].providers, 2u);  // two GPUs
  EXPECT_EQ(bp[1].key, "b");
  EXPECT_DOUBLE_EQ(*bp[1].median_usd_per_gpu_hour, 3.25);
  EXPECT_EQ(bp[2].key, "c");
  EXPECT_FALSE(bp[2].median_usd_per_gpu_hour.has_value());
}

// The earliest date that is not stale: today minus floor(limit) days (a date is stale when its
// age in whole days is above the limit). Hand calculations: 2026-12-01 - 30 = 2026-11-01;
// 2024-03-01 - 1 = 2024-02-29 (2024 is a leap year); 2026-01-15 - 30.9 → floor 30 → 2025-12-16.
TEST(Freshness, EarliestUnstaleDate) {
  EXPECT_EQ(earliest_unstale_date("2026-12-01", 30), "2026-11-01");
  EXPECT_EQ(earliest_unstale_date("2024-03-01", 1), "2024-02-29");
  EXPECT_EQ(earliest_unstale_date("2026-01-15", 30.9), "2025-12-16");
  EXPECT_EQ(earliest_unstale_date("2026-12-01", 0), "2026-12-01");
  EXPECT_EQ(earliest_unstale_date("2026-12-01", 1e12), "0001-01-01");  // nothing is stale
  EXPECT_FALSE(earliest_unstale_date("", 30).has_value());
  // Agrees with price_freshness at the edge: 2026-11-01 is 30 days before 2026-12-01 (aging),
  // 2026-10-31 is 31 days (stale).
  const PriceObservation edge = obs(PriceKind::on_demand, 1, "2026-11-01");
  const PriceObservation past = obs(PriceKind::on_demand, 1, "2026-10-31");
  EXPECT_EQ(price_freshness(&edge, "2026-12-01", FreshnessLimits{}).tier, FreshnessTier::aging);
  EXPECT_EQ(price_freshness(&past, "2026-12-01", FreshnessLimits{}).tier, FreshnessTier::stale);
}

TEST(Freshness, EvidenceTiers) {
  Offer o = base_offer("a/h/r", "a", "h", "r", "H100", "NVIDIA H100 SXM", 8, 80e9);
  const auto tier = [&](std::string_view today) { return price_evidence_tier(o, PriceKind::on_demand, today, 30); };
  EXPECT_EQ(tier("2026-12-01"), EvidenceTier::undated);  // no on-demand price
  o.prices = {obs(PriceKind::on_demand, 20, "2026-11-01T10:00:00Z")};
  EXPECT_EQ(tier("2026-12-01"), EvidenceTier::clean);    // 30 days
  EXPECT_EQ(tier("2026-12-02"), EvidenceTier::stale);    // 31 days
  EXPECT_EQ(tier("2026-10-31"), EvidenceTier::undated);  // observed after "today"
  EXPECT_EQ(tier(""), EvidenceTier::clean);              // no today: nothing stale
  o.flags.push_back({"memory_unit", "corrected", false});
  EXPECT_EQ(tier("2026-12-01"), EvidenceTier::clean);  // a flag that does not question the price
  o.flags.push_back({"gpu_memory_mismatch", "the source says less", true});
  EXPECT_EQ(tier("2026-12-01"), EvidenceTier::clean);  // excluding: hidden, not ranked flagged
  o.flags.push_back({"below_market_index", "under half the index", false});
  EXPECT_EQ(tier("2026-12-01"), EvidenceTier::flagged);
  EXPECT_EQ(evidence_tier_name(EvidenceTier::flagged), "flagged");
}

// --group-by without --include-flagged: a price a flag questions is counted apart, not in the
// statistics. Two H100 offers: $16/8 = $2.00 clean, $4/8 = $0.50 flagged below_market_index.
TEST(Freshness, GroupStatisticsLeaveFlaggedPricesOut) {
  std::vector<Offer> v;
  Offer a = base_offer("a/h/r", "a", "h", "r", "H100", "NVIDIA H100 SXM", 8, 80e9);
  a.prices = {obs(PriceKind::on_demand, 16, "2026-11-20")};
  Offer b = base_offer("b/h/r", "b", "h", "r", "H100", "NVIDIA H100 SXM", 8, 80e9);
  b.prices = {obs(PriceKind::on_demand, 4, "2024-05-20")};
  b.flags.push_back({"below_market_index", "under half the index", false});
  v = {a, b};
  const auto all = group_offer_prices(v, OfferGroupKey::gpu, PriceKind::on_demand);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_DOUBLE_EQ(*all[0].min_usd_per_gpu_hour, 0.5);
  EXPECT_DOUBLE_EQ(*all[0].median_usd_per_gpu_hour, 1.25);  // (0.50 + 2.00) / 2
  EXPECT_EQ(all[0].flagged_offers, 0u);
  const auto clean = group_offer_prices(v, OfferGroupKey::gpu, PriceKind::on_demand, true);
  ASSERT_EQ(clean.size(), 1u);
  EXPECT_EQ(clean[0].offers, 2u);
  EXPECT_EQ(clean[0].priced_offers, 1u);
  EXPECT_EQ(clean[0].flagged_offers, 1u);
  EXPECT_DOUBLE_EQ(*clean[0].min_usd_per_gpu_hour, 2.0);
  EXPECT_DOUBLE_EQ(*clean[0].median_usd_per_gpu_hour, 2.0);
  EXPECT_EQ(clean[0].newest_observed_at, "2026-11-20");
}

// trial9b D6: the group's newest date was the newest first-seen date, while ages and tiers count
// from the last-seen one. A price first seen 2026-10-25 and seen again 2026-12-03, and one first
// (and last) seen 2026-11-20: newest first seen 2026-11-20, newest last seen 2026-12-03.
TEST(Freshness, GroupNewestLastSeenIsTheDateAgesCountFrom) {
  std::vector<Offer> v;
  {
    Offer o = base_offer("a/h1/r", "a", "h1", "r", "H100", "NVIDIA H100 SXM", 1, 80e9);
    o.prices = {obs(PriceKind::on_demand, 2, "2026-10-25T06:00:00Z")};
    o.prices[0].last_seen_at = "2026-12-03T06:00:00Z";
    v.push_back(o);
  }
  {
    Offer o = base_offer("b/h1/r", "b", "h1", "r", "H100", "NVIDIA H100 SXM", 1, 80e9);
    o.prices = {obs(PriceKind::on_demand, 3, "2026-11-20")};
    v.push_back(o);
  }
  const auto g = group_offer_prices(v, OfferGroupKey::gpu, PriceKind::on_demand);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].newest_observed_at, "2026-11-20");
  EXPECT_EQ(g[0].newest_last_seen_at, "2026-12-03");
}

TEST(Freshness, GroupKeyNames) {
  EXPECT_EQ(parse_offer_group_key("gpu"), OfferGroupKey::gpu);
  EXPECT_EQ(parse_offer_group_key("provider"), OfferGroupKey::provider);
  EXPECT_FALSE(parse_offer_group_key("region").has_value());
}

}  // namespace
}  // namespace gpuplan
