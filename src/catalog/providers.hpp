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

/// Inter-node network of one instance family of a provider, as the provider documents it.
struct NetworkFact {
  std::string instance_prefix;  ///< matches Offer::instance_type case-insensitively by prefix ("standard_nd96isr_h100_v5")
  InterNodeNetwork network = InterNodeNetwork::unknown;
  double bits_per_s = 0;        ///< per node (instance), as the provider quotes it (8 x 400 Gb/s = 3.2e12)
  std::string source;           ///< "URL (seen DATE[; note])"
};

struct ProviderInfo {
  std::string id;    ///< matches Offer::provider ("aws", "lambda", ...)
  std::string name;  ///< display name
  std::string url;   ///< pricing page
  BillingTerms billing;  ///< defaults; billing.sources has "field: URL (seen DATE[; note])" per known value
  std::vector<NetworkFact> networks;  ///< [[providers.<id>.networks]]; longest matching prefix wins
};

/// Parses providers.toml text (format documented at the top of data/providers.toml):
///   [providers.<id>] name = "...", url = "..."
///   [providers.<id>.billing.<term>] value = <number >= 0>, source = "<URL>", seen = "YYYY-MM-DD", note = "..."
///   [[providers.<id>.networks]] instance_prefix = "...", network = "infiniband"|"roce"|"ethernet",
///       gbps_per_node = <number > 0>, source = "<URL>", seen = "YYYY-MM-DD", note = "..."
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

/// The network fact of `providers` that applies to `offer` (same provider id, longest
/// instance_prefix that prefixes the instance type, case-insensitive), or nullptr.
const NetworkFact* find_network_fact(const Offer& offer, const std::vector<ProviderInfo>& providers);

/// Fills the inter-node network of every offer whose network is unknown from `providers`
/// (an offer's own network, from its source, is never replaced). Returns how many were filled.
std::size_t apply_network_facts(std::vector<Offer>& offers, const std::vector<ProviderInfo>& providers);

}  // namespace gpuplan
