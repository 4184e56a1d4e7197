#pragma once
/// Catalog layer: how old a price is, its freshness tier, and per-group price statistics
/// ("H100: 143 offers, $1.49 / $2.99 / $12.29 per GPU-hour") as price-comparison sites show them.
/// Pure functions; the date of "now" is passed in (an injected clock), never read here.
///
/// Tiers (limits in days, configurable per call; defaults documented in docs/freshness.md):
///   fresh   : age <= fresh_max_days           (default 7: a week-old list price is current)
///   aging   : fresh_max_days < age <= stale_after_days  (default 30, the same limit as the
///             `stale` filter field and `--stale-days`)
///   stale   : age > stale_after_days
///   undated : the source gave no date (never guessed), or no price of that kind
/// Age is whole days between the observation's date (first 10 characters, YYYY-MM-DD) and now.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/offer.hpp"

namespace gpuplan {

enum class FreshnessTier { fresh, aging, stale, undated };
std::string_view freshness_tier_name(FreshnessTier t) noexcept;  ///< "fresh", "aging", "stale", "undated"

struct FreshnessLimits {
  double fresh_max_days = 7;     ///< days; a price at most this old is fresh
  double stale_after_days = 30;  ///< days; a price strictly older is stale
  /// Throws Error{invalid_input} (where "fresh_max_days"/"stale_after_days") unless
  /// 0 <= fresh_max_days <= stale_after_days and both are finite.
  void validate() const;
};

struct Freshness {
  FreshnessTier tier = FreshnessTier::undated;
  std::optional<long> age_days;  ///< nullopt when undated; negative never (future dates are refused at import)
};

/// Freshness of one observation at `now_date` ("YYYY-MM-DD"); undated when `price` is null,
/// has no observed_at, or either date does not parse.
Freshness price_freshness(const PriceObservation* price, std::string_view now_date, const FreshnessLimits& limits);

/// "Today" before every dated price observation of `offers` (each age would be negative, every
/// price "fresh"): a typo in the year, not a date to compute ages at. Throws CodedError
/// {invalid_input, where, "today_before_observations", {today, earliest}} (util/error_code.hpp);
/// nothing when `today` is empty or no observation is dated. Shared by `plan` and `offers`.
void require_today_not_before_observations(std::string_view today, const std::vector<Offer>& offers,
                                           const std::string& where);

/// What an offer is grouped by in price statistics.
enum class OfferGroupKey { gpu, provider };
/// "gpu" / "provider" → key; nullopt otherwise.
std::optional<OfferGroupKey> parse_offer_group_key(std::string_view name) noexcept;

/// Price statistics of one group (USD per GPU-hour of each offer's latest price of the kind).
struct OfferGroupStats {
  std::string key;                        ///< canonical GPU name (unresolved: raw name + " (unresolved)") or provider id
  std::size_t offers = 0;                 ///< offers in the group, priced or not
  std::size_t priced_offers = 0;          ///< offers with a price of the kind (the statistics' sample)
  std::size_t providers = 0;              ///< distinct providers (gpu grouping) or GPUs (provider grouping)
  std::size_t dated_offers = 0;           ///< priced offers whose price has a known date
  std::optional<double> min_usd_per_gpu_hour;
  std::optional<double> median_usd_per_gpu_hour;  ///< middle value; mean of the two middle values for an even count
  std::optional<double> max_usd_per_gpu_hour;
  std::optional<std::string> newest_observed_at;  ///< latest known observation date among the group's prices
};

/// Groups `offers` by `key` and computes the statistics per group. Order: groups with prices by
/// median ascending (ties by key), then unpriced groups by key.
std::vector<OfferGroupStats> group_offer_prices(const std::vector<Offer>& offers, OfferGroupKey key, PriceKind kind);

/// Median of `values` (sorted copy); nullopt for an empty list.
std::optional<double> median(std::vector<double> values);

}  // namespace gpuplan
