#pragma once
/// Fetch layer, sources: one small adapter per public price feed (docs/fetch.md lists them
/// with their endpoints and mappings). An adapter has two halves:
///  - download(ctx): the HTTP requests (through the shared HttpClient), returning the raw
///    documents in request order; their bodies are hashed into the snapshot's content hash;
///  - parse(docs, ctx): pure, documents → ImportBatch through the catalog's import path
///    (import_detail: resolve_gpu, add_checked_price, add_offer), so the catalog's quality
///    gates apply. Unknown prices are left out (no observation), never stored as 0.
/// Units follow offer.hpp: usd_per_hour for the whole instance, bytes, etc.
///
/// Every observation of a fetched snapshot has dataset "fetch:<source>", locator = the URL
/// (plus "#record" where a record id helps), observed_at = ctx.fetched_at.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/importers.hpp"
#include "fetch/http.hpp"

namespace gpuplan {
class GpuCatalog;
}

namespace gpuplan::fetch {

/// One downloaded document.
struct FetchedDoc {
  std::string url;   ///< the URL as requested (after --base-url)
  std::string body;
  std::string label; ///< what it is, for the parser ("price-list:us-east-1", "spot", "page")
};

/// What an adapter needs from outside. Everything is injected (no globals).
struct SourceContext {
  HttpClient* http = nullptr;
  /// --base-url: replaces scheme/host/port of every endpoint of the source (and of absolute
  /// next-page links the source returns). Empty = the provider's real host.
  std::string base_url;
  /// Environment lookup (keys); returns nullopt when unset or empty.
  std::function<std::optional<std::string>(std::string_view)> env;
  const GpuCatalog* gpus = nullptr;  ///< nullptr → bundled
  std::string fetched_at;            ///< "YYYY-MM-DDTHH:MM:SSZ" (UTC), the snapshot's time

  /// url, rebased on base_url when set.
  std::string endpoint(const std::string& url) const;
};

struct SourceInfo {
  std::string name;         ///< "aws", "azure", "skypilot/lambda", "gpuhunt/oci", ...
  std::string description;  ///< one line
  std::vector<std::string> urls;       ///< main endpoints (documentation; the adapter builds the requests)
  std::vector<std::string> key_env;    ///< environment variables it needs (empty = keyless)
  int parser_version = 1;
  /// GPU names (canonical, as in data/gpus.csv) the feed must contain; a snapshot without one
  /// of them is rejected (expected-GPU gate). Empty = no such gate.
  std::vector<std::string> expected_gpus;
  double min_request_interval_s = 0.2;  ///< per-source rate limit
  /// Days of identical content after which the feed "looks frozen" (its prices are no longer
  /// re-confirmed), unless --frozen-after-days is given. A feed that reports live availability
  /// or stock (a marketplace: vast, RunPod, Lambda, CUDO, Shadeform, Hyperstack, Verda) changes
  /// within hours, so 3 days identical is a stopped feed (kLiveFeedFrozenAfterDays); a published
  /// list-price catalog (AWS, Azure, GCP, OCI, Vultr, Scaleway, OVHcloud, SkyPilot, gpuhunt) can
  /// legitimately stay identical for weeks between price changes (kListPriceFrozenAfterDays).
  /// docs/fetch.md "Frozen feeds" has the table.
  double frozen_after_days = 30.0;
};

inline constexpr double kLiveFeedFrozenAfterDays = 3.0;
inline constexpr double kListPriceFrozenAfterDays = 30.0;

class Source {
 public:
  virtual ~Source() = default;
  virtual const SourceInfo& info() const = 0;
  /// Network half. Throws Error{unavailable} when a request fails after retries.
  virtual std::vector<FetchedDoc> download(const SourceContext& ctx) const = 0;
  /// Pure half. Throws Error{invalid_input} (where = URL or URL:line) on a malformed document.
  virtual ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const = 0;
};

/// Every source, in `gpuplan fetch --list` order.
const std::vector<std::unique_ptr<Source>>& all_sources();
/// The source with this name, or nullptr.
const Source* find_source(std::string_view name);

}  // namespace gpuplan::fetch
