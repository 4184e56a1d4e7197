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
/// Age is whole days between the date the price was last seen (PriceObservation::seen_at: a later
/// fetch that found the same price again, else the observation's date; first 10 characters,
/// YYYY-MM-DD) and now.
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
/// The same with "now" already parsed: days since 1970-01-01 (days_since_epoch of now_date;
/// nullopt = undated, as an unparsable now_date). A caller judging many prices at one date
/// parses that date once.
Freshness price_freshness(const PriceObservation* price, std::optional<long> now_days, const FreshnessLimits& limits);

/// "Today" before every dated price observation of `offers` (each age would be negative, every
/// price "fresh"): a typo in the year, not a date to compute ages at. Throws CodedError
/// {invalid_input, where, "today_before_observations", {today, earliest}} (util/error_code.hpp);
/// nothing when `today` is empty or no observation is dated. Shared by `plan` and `offers`.
void require_today_not_before_observations(std::string_view today, const std::vector<Offer>& offers,
                                           const std::string& where);

/// The evidence behind an offer's listed price, the planner's ranking of prices (docs/planner.md
/// "Price evidence", docs/freshness.md "Order of the offer list"): lower is better.
///   clean   (0): no flag questions the price, dated, at most stale_after_days old, not after now;
///   stale   (1): dated, older than stale_after_days (not flagged);
///   undated (2): no price of the kind, no date from the source, or observed after now_date;
///   flagged (3): a non-excluding `below_market_index`, `gpu_memory_mismatch` or `price_jump` flag
///                questions it (price_questioning_rules()).
enum class EvidenceTier { clean = 0, stale = 1, undated = 2, flagged = 3 };
std::string_view evidence_tier_name(EvidenceTier t) noexcept;  ///< "clean", "stale", "undated", "flagged"
/// The flag rules that question an offer's price without excluding it (tier flagged).
const std::vector<std::string_view>& price_questioning_rules();
/// True when `flag` puts its offer in the flagged tier (a price_questioning_rules() rule that does
/// not exclude the offer).
bool questions_price(const QualityFlag& flag);
/// Tier of `offer`'s latest price of `kind` at `now_date` ("YYYY-MM-DD"; "" = nothing is stale or
/// in the future). Stale means age > stale_after_days in whole days (price_freshness's rule).
EvidenceTier price_evidence_tier(const Offer& offer, PriceKind kind, std::string_view now_date, double stale_after_days);
/// The earliest observation date ("YYYY-MM-DD") that is not stale at `now_date`: now_date minus
/// floor(stale_after_days) days (a date D is stale iff D < this). nullopt when now_date is empty
/// or not a date. The stores compare the price's date prefix with it in SQL.
std::optional<std::string> earliest_unstale_date(std::string_view now_date, double stale_after_days);

/// What an offer is grouped by in price statistics.
enum class OfferGroupKey { gpu, provider };
/// "gpu" / "provider" → key; nullopt otherwise.
std::optional<OfferGroupKey> parse_offer_group_key(std::string_view name) noexcept;

/// Price statistics of one group (USD per GPU-hour of each offer's latest price of the kind).
struct OfferGroupStats {
  std::string key;                        ///< canonical GPU name (unresolved: raw name + " (unresolved)") or provider id
  std::size_t offers = 0;                 ///< offers in the group, priced or not
  std::size_t priced_offers = 0;          ///< offers with a price of the kind (the statistics' sample)
  /// Offers with a price of the kind that a flag questions (questions_price), left out of the
  /// sample when group_offer_prices' leave_out_flagged (then not in priced_offers either).
  std::size_t flagged_offers = 0;
  std::size_t providers = 0;              ///< distinct providers (gpu grouping) or GPUs (provider grouping)
  std::size_t dated_offers = 0;           ///< priced offers whose price has a known date
  std::optional<double> min_usd_per_gpu_hour;
  std::optional<double> median_usd_per_gpu_hour;  ///< middle value; mean of the two middle values for an even count
  std::optional<double> max_usd_per_gpu_hour;
  std::optional<std::string> newest_observed_at;  ///< latest first-seen date (observed_at, YYYY-MM-DD) among the group's prices
  /// Latest last-seen date (PriceObservation::seen_at, YYYY-MM-DD) among the group's prices: the
  /// date a price's age and freshness count from (trial9b D6: NEWEST_OBSERVED showed first-seen dates).
  std::optional<std::string> newest_last_seen_at;
};

/// Groups `offers` by `key` and computes the statistics per group. Order: groups with prices by
/// median ascending (ties by key), then unpriced groups by key. `leave_out_flagged`: prices a flag
/// questions (tier flagged) are counted in flagged_offers, not in the statistics.
std::vector<OfferGroupStats> group_offer_prices(const std::vector<Offer>& offers, OfferGroupKey key, PriceKind kind,
                                                bool leave_out_flagged = false);

/// Median of `values` (sorted copy); nullopt for an empty list.
std::optional<double> median(std::vector<double> values);

}  // namespace gpuplan
