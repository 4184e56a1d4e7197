// Price age, freshness tiers and per-group price statistics (freshness.hpp).
#include "catalog/freshness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "catalog/filter.hpp"
#include "catalog/importers.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {

std::string_view freshness_tier_name(FreshnessTier t) noexcept {
  switch (t) {
    case FreshnessTier::fresh: return "fresh";
    case FreshnessTier::aging: return "aging";
    case FreshnessTier::stale: return "stale";
    case FreshnessTier::undated: return "undated";
  }
  return "undated";
}

void FreshnessLimits::validate() const {
  if (!std::isfinite(fresh_max_days) || fresh_max_days < 0)
    throw_invalid_coded("fresh_max_days", "negative", {{"value", fmt::format("{}", fresh_max_days)}},
                        fmt::format("{} is not a valid number of days", fresh_max_days), "a non-negative number of days");
  if (!std::isfinite(stale_after_days) || stale_after_days < 0)
    throw_invalid_coded("stale_after_days", "negative", {{"value", fmt::format("{}", stale_after_days)}},
                        fmt::format("{} is not a valid number of days", stale_after_days), "a non-negative number of days");
  if (fresh_max_days > stale_after_days)
    throw_invalid_coded("fresh_max_days", "fresh_above_stale",
                        {{"fresh", fmt::format("{:g}", fresh_max_days)}, {"stale", fmt::format("{:g}", stale_after_days)}},
                        fmt::format("fresh limit {:g} days is above the stale limit {:g} days", fresh_max_days,
                                    stale_after_days),
                        "fresh days <= stale days");
}

Freshness price_freshness(const PriceObservation* price, std::string_view now_date, const FreshnessLimits& limits) {
  if (price == nullptr || !price->seen_at() || now_date.empty()) return Freshness{};
  return price_freshness(price, days_since_epoch(now_date), limits);
}

Freshness price_freshness(const PriceObservation* price, std::optional<long> now, const FreshnessLimits& limits) {
  Freshness f;
  if (price == nullptr || !price->seen_at() || !now) return f;
  const auto seen = days_since_epoch(*price->seen_at());  // the last time the price was seen
  if (!seen) return f;
  const long age = *now - *seen;
  f.age_days = age;
  const auto a = static_cast<double>(age);
  f.tier = a > limits.stale_after_days ? FreshnessTier::stale
           : a > limits.fresh_max_days ? FreshnessTier::aging
                                       : FreshnessTier::fresh;
  return f;
}

std::string_view evidence_tier_name(EvidenceTier t) noexcept {
  switch (t) {
    case EvidenceTier::clean: return "clean";
    case EvidenceTier::stale: return "stale";
    case EvidenceTier::undated: return "undated";
    case EvidenceTier::flagged: return "flagged";
  }
  return "undated";
}

const std::vector<std::string_view>& price_questioning_rules() {
  // price_jump as the planner ranks it (trial9c: a vast 8x H100 moved from $16 to $80/h listed first
  // in `offers` as "clean" and counted in its group's max while `plan` marked it "!").
  static const std::vector<std::string_view> rules = {import_rule::kBelowMarketIndex, import_rule::kGpuMemoryMismatch,
                                                      import_rule::kPriceJump};
  return rules;
}

bool questions_price(const QualityFlag& flag) {
  if (flag.excludes) return false;
  const auto& rules = price_questioning_rules();
  return std::find(rules.begin(), rules.end(), flag.rule) != rules.end();
}

EvidenceTier price_evidence_tier(const Offer& offer, PriceKind kind, std::string_view now_date, double stale_after_days) {
  if (std::any_of(offer.flags.begin(), offer.flags.end(), questions_price)) return EvidenceTier::flagged;
  const PriceObservation* p = offer.latest_price(kind);
  if (p == nullptr || !p->seen_at()) return EvidenceTier::undated;
  if (now_date.empty()) return EvidenceTier::clean;
  const std::string day = p->seen_at()->substr(0, 10);  // the last time the price was seen
  if (day > now_date.substr(0, 10)) return EvidenceTier::undated;  // observed after "today": no evidence on that day
  const auto cutoff = earliest_unstale_date(now_date, stale_after_days);
  if (cutoff && day < *cutoff) return EvidenceTier::stale;
  return EvidenceTier::clean;
}

std::optional<std::string> earliest_unstale_date(std::string_view now_date, double stale_after_days) {
  const auto now = days_since_epoch(now_date);
  if (!now || !std::isfinite(stale_after_days)) return std::nullopt;
  // Days from 0001-01-01 to 1970-01-01: a longer limit leaves nothing stale (and no year 0 to write).
  constexpr double kDaysSinceYearOne = 719162;
  if (std::floor(stale_after_days) >= static_cast<double>(*now) + kDaysSinceYearOne) return std::string("0001-01-01");
  namespace chr = std::chrono;
  const chr::sys_days day{chr::days{*now - static_cast<long>(std::floor(stale_after_days))}};
  const chr::year_month_day ymd{day};
  return fmt::format("{:04d}-{:02d}-{:02d}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

std::optional<OfferGroupKey> parse_offer_group_key(std::string_view name) noexcept {
  if (name == "gpu") return OfferGroupKey::gpu;
  if (name == "provider") return OfferGroupKey::provider;
  return std::nullopt;
}

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<OfferGroupStats> group_offer_prices(const std::vector<Offer>& offers, OfferGroupKey key, PriceKind kind,
                                                bool leave_out_flagged) {
  struct Acc {
    OfferGroupStats stats;
    std::vector<double> per_gpu;
    std::set<std::string> others;
  };
  std::map<std::string, Acc> groups;
  for (const Offer& o : offers) {
    const std::string gpu = o.gpu_name.value_or(o.gpu_name_raw + " (unresolved)");
    const std::string k = key == OfferGroupKey::gpu ? gpu : o.provider;
    Acc& acc = groups[k];
    acc.stats.key = k;
    ++acc.stats.offers;
    acc.others.insert(key == OfferGroupKey::gpu ? o.provider : gpu);
    const PriceObservation* p = o.latest_price(kind);
    if (p == nullptr || o.gpu_count <= 0) continue;
    if (leave_out_flagged && std::any_of(o.flags.begin(), o.flags.end(), questions_price)) {
      ++acc.stats.flagged_offers;
      continue;
    }
    ++acc.stats.priced_offers;
    acc.per_gpu.push_back(p->usd_per_hour / o.gpu_count);
    if (p->source.observed_at) {
      ++acc.stats.dated_offers;
      const std::string d = p->source.observed_at->substr(0, 10);
      if (!acc.stats.newest_observed_at || d > *acc.stats.newest_observed_at) acc.stats.newest_observed_at = d;
    }
    if (p->seen_at()) {
      const std::string d = p->seen_at()->substr(0, 10);
      if (!acc.stats.newest_last_seen_at || d > *acc.stats.newest_last_seen_at) acc.stats.newest_last_seen_at = d;
    }
  }
  std::vector<OfferGroupStats> out;
  for (auto& [k, acc] : groups) {
    OfferGroupStats s = acc.stats;
    s.providers = acc.others.size();
    if (!acc.per_gpu.empty()) {
      s.min_usd_per_gpu_hour = *std::min_element(acc.per_gpu.begin(), acc.per_gpu.end());
      s.max_usd_per_gpu_hour = *std::max_element(acc.per_gpu.begin(), acc.per_gpu.end());
      s.median_usd_per_gpu_hour = median(acc.per_gpu);
    }
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const OfferGroupStats& a, const OfferGroupStats& b) {
    if (a.median_usd_per_gpu_hour.has_value() != b.median_usd_per_gpu_hour.has_value())
      return a.median_usd_per_gpu_hour.has_value();
    if (a.median_usd_per_gpu_hour && *a.median_usd_per_gpu_hour != *b.median_usd_per_gpu_hour)
      return *a.median_usd_per_gpu_hour < *b.median_usd_per_gpu_hour;
    return a.key < b.key;
  });
  return out;
}

void require_today_not_before_observations(std::string_view today, const std::vector<Offer>& offers,
                                           const std::string& where) {
  if (today.empty()) return;
  std::string earliest;
  for (const Offer& o : offers) {
    for (const PriceObservation& p : o.prices) {
      if (!p.source.observed_at || p.source.observed_at->size() < 10) continue;
      const std::string_view day = std::string_view(*p.source.observed_at).substr(0, 10);
      if (earliest.empty() || day < earliest) earliest = day;
    }
  }
  if (!earliest.empty() && today < earliest) {
    throw_invalid_coded(where, "today_before_observations", {{"today", std::string(today)}, {"earliest", earliest}},
                        fmt::format("{} is before every price observation of the offers read (the earliest is {})",
                                    today, earliest),
                        fmt::format("a date on or after {} (the prices' observation dates)", earliest));
  }
}

}  // namespace gpuplan
