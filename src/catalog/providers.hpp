#pragma once
/// Catalog layer, providers: per-provider default billing terms (data/providers.toml, each value
/// with its source URL and the date it was seen; provenance in data/providers.SOURCES.md) and the
/// rule that combines them with an offer's own overrides.
///
/// Units as in offer.hpp BillingTerms: seconds, USD per GB-month (GB = 1e9 bytes), USD per GB,
/// GB per month, preemptions per instance-day. Unknown terms are std::nullopt.
#include <string>
#include <string_view>
#include <vector>

#include "catalog/offer.hpp"

namespace gpuplan {

struct ProviderInfo {
  std::string id;    ///< matches Offer::provider ("aws", "lambda", ...)
  std::string name;  ///< display name
  std::string url;   ///< pricing page
  BillingTerms billing;  ///< defaults; billing.sources has "field: URL (seen DATE[; note])" per known value
};

/// Parses providers.toml text (format documented at the top of data/providers.toml):
///   [providers.<id>] name = "...", url = "..."
///   [providers.<id>.billing.<term>] value = <number >= 0>, source = "<URL>", seen = "YYYY-MM-DD", note = "..."
/// Throws Error{invalid_input} with where = "file:line:col" on TOML syntax errors, unknown keys or
/// terms, wrong types, negative values, a missing source or seen date, or a malformed date.
/// Providers are returned sorted by id.
std::vector<ProviderInfo> parse_providers_toml(std::string_view text, const std::string& source);

/// The providers compiled into the binary (data/providers.toml). Parsed once.
const std::vector<ProviderInfo>& bundled_providers();

/// Provider by id in a list, or nullptr.
const ProviderInfo* find_provider(const std::vector<ProviderInfo>& providers, std::string_view id);

/// Billing terms that apply to an offer: each term from the offer's billing_override when set,
/// else from the provider (nullptr = unknown provider: only the overrides are known). `sources`
/// lists where each resulting value came from (override sources first).
BillingTerms effective_billing(const Offer& offer, const ProviderInfo* provider);

}  // namespace gpuplan
