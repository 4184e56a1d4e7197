#pragma once
/// Catalog layer, data model: what can be rented, for how much, with what topology, and where
/// each fact came from and when. Prices are observations, never overwritten.
///
/// Units: bytes, bytes/s, bit/s for networks (as providers quote Gb/s), USD per hour for the
/// whole instance (all its GPUs), seconds. Unknown values are std::nullopt and shown as "unknown".
/// Dates are ISO-8601 strings "YYYY-MM-DD" (or full timestamps "YYYY-MM-DDTHH:MM:SSZ").
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

/// How a price is bought. Reserved kinds commit to a term that is billed whole
/// (planner/cost.hpp `reserved_term_seconds`): reserved_1w = one week of 7 days (weekly-billed
/// commitments: RunPod `oneWeekPrice`), reserved_1m = one month of 730 h (the monthly plans of
/// OVHcloud and others, priced per month and stored as month price / 730 h), reserved_3m and
/// reserved_6m = 3 and 6 such months (RunPod's 3- and 6-month savings plans), reserved_1y and
/// reserved_3y = 1 and 3 years of 365 days. Prices are always USD per hour of the term.
/// New kinds go at the end (stored by name, indexed by value).
enum class PriceKind { on_demand, spot, reserved_1y, reserved_3y, reserved_1m, reserved_1w, reserved_3m, reserved_6m };
/// "on-demand", "spot", "reserved-1y", "reserved-3y", "reserved-1m", "reserved-1w", "reserved-3m", "reserved-6m"
std::string_view price_kind_name(PriceKind k) noexcept;
/// Every price kind, in enum order (loops over kinds, arrays indexed by kind).
inline constexpr PriceKind kPriceKinds[] = {PriceKind::on_demand,   PriceKind::spot,        PriceKind::reserved_1y,
                                            PriceKind::reserved_3y, PriceKind::reserved_1m, PriceKind::reserved_1w,
                                            PriceKind::reserved_3m, PriceKind::reserved_6m};
inline constexpr std::size_t kPriceKindCount = std::size(kPriceKinds);
/// True for the kinds that commit to a term (reserved-1w, -1m, -3m, -6m, -1y, -3y).
constexpr bool is_reserved(PriceKind k) noexcept { return k != PriceKind::on_demand && k != PriceKind::spot; }

/// GPU-to-GPU link inside one instance.
enum class IntraNodeLink { unknown, pcie, nvlink };
std::string_view intra_node_link_name(IntraNodeLink k) noexcept;  ///< "unknown", "pcie", "nvlink"

/// Network between instances (nodes) for multi-node jobs.
enum class InterNodeNetwork { unknown, ethernet, roce, infiniband };
std::string_view inter_node_network_name(InterNodeNetwork k) noexcept;

/// Where a fact came from: a dataset (repository + file + commit, or a URL) and when it was seen.
struct SourceRef {
  std::string dataset;   ///< short id of the feed: "skypilot-catalog/v8/lambda", "tardellirs", "user:quotes.csv"
  std::string locator;   ///< repository@commit:path, or URL, or local file path (+ ":line")
  std::optional<std::string> observed_at;  ///< date the price was seen; nullopt = unknown (never invented)
};

/// One observed price of an offer.
struct PriceObservation {
  std::string offer_id;
  PriceKind kind = PriceKind::on_demand;
  double usd_per_hour = 0;  ///< whole instance (all gpu_count GPUs), USD per hour
  SourceRef source;
  /// The last time the source gave this same price (docs/fetch.md "Seen again"): on an offer's
  /// latest price of a kind as a store returns it, the fetched-at time of the newest snapshot of
  /// the same source (dataset) that still listed the offer at this price (source.observed_at until
  /// a later snapshot confirms it; a price from a bundled or imported file keeps its observed_at).
  /// nullopt on older observations of the history, and when undated. Not part of the identity.
  std::optional<std::string> last_seen_at;
  /// When the price was last seen: last_seen_at, else source.observed_at. Age, freshness tier,
  /// stale and the planner's price evidence read this date; source.observed_at is the first seen.
  const std::optional<std::string>& seen_at() const noexcept { return last_seen_at ? last_seen_at : source.observed_at; }
};

/// Billing terms. Provider defaults live in data/providers.toml (each value with a source URL
/// and date); an offer may override any of them. nullopt = unknown.
struct BillingTerms {
  std::optional<double> granularity_seconds;       ///< billed time is rounded up to a multiple of this
  std::optional<double> minimum_billed_seconds;    ///< at least this much is billed per instance start
  std::optional<double> storage_usd_per_gb_month;  ///< persistent storage (GB = 1e9 bytes)
  std::optional<double> egress_usd_per_gb;         ///< internet egress after the free allowance
  std::optional<double> egress_free_gb_per_month;  ///< free egress allowance
  std::optional<double> preemptions_per_day;       ///< expected spot preemptions per instance-day
  std::vector<std::string> sources;                ///< "field: URL (date)" for each known value
  /// Field by field; `BillingTerms{}` is "no term known" (every field is compared: a new field
  /// is compared without touching the callers).
  bool operator==(const BillingTerms&) const = default;
};

/// Quality flags raised by the importers (data-quality gates). An offer or observation with a
/// flag whose `excludes` is true is kept in the store but left out of rankings.
struct QualityFlag {
  std::string rule;    ///< "zero_price", "memory_unit", "bid_floor_price", "no_on_demand_price", "unresolved_gpu", ...
  std::string detail;  ///< plain words: what was seen and what was done
  bool excludes = false;
  bool operator==(const QualityFlag&) const = default;
};

struct Offer {
  std::string id;              ///< stable key: "provider/instance_type/region" (lower-case)
  std::string provider;        ///< "lambda", "aws", "runpod", ...
  std::string instance_type;   ///< provider SKU
  std::string region;          ///< may be empty when the source has none
  std::string zone;

  std::string gpu_name_raw;            ///< as the source wrote it
  std::optional<std::string> gpu_name; ///< canonical GpuSpec name, nullopt when unresolved (kept and reported)
  int gpu_count = 0;
  std::optional<double> gpu_memory_bytes;  ///< per GPU, after unit correction
  std::optional<double> vcpus;
  std::optional<double> ram_bytes;
  std::optional<double> local_disk_bytes;

  IntraNodeLink intra_node_link = IntraNodeLink::unknown;
  std::optional<double> intra_node_link_bytes_per_s;  ///< per GPU, bidirectional (as GpuSpec)
  std::string form_factor;                            ///< "SXM", "PCIe", "" = unknown
  InterNodeNetwork inter_node_network = InterNodeNetwork::unknown;
  std::optional<double> inter_node_bits_per_s;        ///< per node
  std::optional<int> max_nodes;                       ///< nodes offered together; nullopt = unknown (single node assumed)
  /// The fewest nodes (instances) the offer is sold as: a reserved cluster or capacity block
  /// rented only as >= N nodes (nullopt = no minimum known: one node can be rented). It is a
  /// property of how the offer is sold and applies to every price kind of the offer (a provider
  /// that sells single nodes on demand and clusters of N reserved lists them as two offers,
  /// two instance types). 1 <= min_nodes <= max_nodes (when both are known). The planner bills
  /// at least min_nodes instances and says which are idle (planner.hpp min_nodes_billed).
  std::optional<int> min_nodes;

  std::optional<std::string> confirmed_available_at;  ///< nullopt = only listed, never confirmed
  BillingTerms billing_override;                      ///< values set here override the provider's
  std::vector<QualityFlag> flags;
  std::vector<PriceObservation> prices;               ///< all observations, oldest first

  /// Latest observation of a kind (by observed_at, unknown dates oldest), or nullptr.
  const PriceObservation* latest_price(PriceKind kind) const;
  /// latest_price of every kind (index = PriceKind) in one pass over the observations.
  std::array<const PriceObservation*, kPriceKindCount> latest_prices() const;
  bool excluded_from_ranking() const;
};

}  // namespace gpuplan
