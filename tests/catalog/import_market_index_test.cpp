// flag_prices_below_market_index: hand-made batches with the arithmetic written here.
#include <gtest/gtest.h>

#include "catalog/importers.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

Offer offer(std::string id, std::string provider, int gpus, double usd_per_hour, std::optional<std::string> date) {
  Offer o;
  o.id = id;
  o.provider = std::move(provider);
  o.gpu_name = "NVIDIA H100 SXM";
  o.gpu_count = gpus;
  o.prices.push_back(PriceObservation{id, PriceKind::on_demand, usd_per_hour, SourceRef{"t", "t.csv:1", date}, std::nullopt});
  return o;
}

bool flagged(const Offer& o) {
  for (const auto& f : o.flags)
    if (f.rule == import_rule::kBelowMarketIndex) return !f.excludes;
  return false;
}

TEST(BelowMarketIndex, FlagsUnderHalfTheLowestLatestSeries) {
  ImportBatch b;
  // Index series for H100: the latest date's lowest is 2.50 $/GPU-h (older 9.00 is ignored).
  b.offers.push_back(offer("index:marketplace/h100/", "index:marketplace", 1, 2.50, "2026-10-05"));
  b.offers.push_back(offer("index:neocloud/h100/", "index:neocloud", 1, 4.02, "2026-10-05"));
  b.offers.back().prices.push_back(
      PriceObservation{"x", PriceKind::on_demand, 9.00, SourceRef{"t", "t.csv:2", std::string("2026-09-29")}, std::nullopt});
  // 8 GPUs at $5.52/h = $0.69/GPU-h < 0.5 × 2.50 = 1.25: flagged, not excluded.
  b.offers.push_back(offer("cheap/8x", "cheap", 8, 5.52, std::nullopt));
  // $1.29/GPU-h ≥ 1.25: not flagged.
  b.offers.push_back(offer("fair/1x", "fair", 1, 1.29, std::nullopt));
  EXPECT_EQ(flag_prices_below_market_index(b), 1u);
  EXPECT_TRUE(flagged(b.offers[2]));
  EXPECT_FALSE(b.offers[2].excluded_from_ranking());
  EXPECT_FALSE(flagged(b.offers[3]));
  EXPECT_FALSE(flagged(b.offers[0]));  // index series themselves are never compared
  ASSERT_EQ(b.issues.size(), 1u);
  EXPECT_EQ(b.issues[0].rule, "below_market_index");
}

TEST(FutureDates, AnObservationAfterTodayIsAnError) {
  ImportBatch b;
  b.offers.push_back(offer("p/i", "p", 1, 2.0, "2026-12-01"));
  EXPECT_NO_THROW(check_no_future_dates(b, "2026-12-01"));  // today itself is fine
  try {
    check_no_future_dates(b, "2026-11-30");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "t.csv:1");
    EXPECT_NE(std::string(e.what()).find("after today"), std::string::npos);
  }
}

// By the UTC day of the instant (trial46): 01:00 at +14:00 on the 7th is 11:00 UTC on the 6th
// (today: accepted; it was refused by its local date); 23:30 at −12:00 on the 6th is 11:30 UTC on
// the 7th (tomorrow: refused; it was accepted).
TEST(FutureDates, AnObservationIsPlacedByItsUtcDay) {
  ImportBatch kiribati;
  kiribati.offers.push_back(offer("p/i", "p", 1, 2.0, "2026-12-07T01:00:00+14:00"));
  EXPECT_NO_THROW(check_no_future_dates(kiribati, "2026-12-06"));
  ImportBatch baker;
  baker.offers.push_back(offer("p/i", "p", 1, 2.0, "2026-12-06T23:30:00-12:00"));
  EXPECT_THROW(check_no_future_dates(baker, "2026-12-06"), Error);
  EXPECT_NO_THROW(check_no_future_dates(baker, "2026-12-07"));
}

TEST(BelowMarketIndex, NothingWithoutAnIndex) {
  ImportBatch b;
  b.offers.push_back(offer("cheap/8x", "cheap", 8, 0.08, std::nullopt));
  EXPECT_EQ(flag_prices_below_market_index(b), 0u);
}

}  // namespace
}  // namespace gpuplan
