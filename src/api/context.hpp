#pragma once
/// Application layer (api): what every use case reads from outside the request, built once at
/// each entry point (CLI start, server start) and passed down by reference, instead of
/// process-wide defaults found deep inside (architecture-review §3 item 3).
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "catalog/offer.hpp"
#include "catalog/providers.hpp"
#include "catalog/store.hpp"
#include "hardware/gpu_spec.hpp"
#include "planner/planner.hpp"

namespace gpuplan::api {

class Context {
 public:
  /// Opens the offer store; called at most once, on first use (commands that read no offers never
  /// create the database).
  using StoreOpener = std::function<std::unique_ptr<OfferStore>()>;

  /// A value that changes whenever the store's data may have changed (the server: size and
  /// modification time of the database file and its WAL). Given: query_offers() and
  /// store_counts() keep their answers until it changes (a long-running server reads the same
  /// catalog snapshot from memory instead of from SQLite on every request). Empty: no caching.
  using DataVersion = std::function<std::string()>;

  Context(const GpuCatalog& gpus, const std::vector<ProviderInfo>& providers, const Clock& clock, StoreOpener open_store,
          DataVersion data_version = {})
      : gpus_(gpus), providers_(providers), clock_(clock), open_store_(std::move(open_store)),
        data_version_(std::move(data_version)),
        search_memo_(data_version_ ? std::make_unique<SearchMemo>() : nullptr) {}

  const GpuCatalog& gpus() const { return gpus_; }
  const std::vector<ProviderInfo>& providers() const { return providers_; }
  const Clock& clock() const { return clock_; }
  /// The offer store (opened on first call; thread-safe to call, but the store itself is used by
  /// one thread at a time: callers serialise with store_mutex()).
  OfferStore& store() const;
  std::mutex& store_mutex() const { return store_use_; }
  /// Held around one use of store(): locks store_mutex() unless the store takes concurrent calls
  /// (a PostgreSQL pool: the server's threads then query in parallel, one connection each).
  std::unique_lock<std::mutex> use_store() const;
  /// The billing terms of an offer: its own overrides over its provider's terms.
  BillingTerms billing(const Offer& offer) const;

  /// The offers matching `q` (validated by the caller), shared read-only: from the snapshot
  /// cache when caching is on and the data version is unchanged, else from the store (under
  /// store_mutex()). Thread-safe.
  std::shared_ptr<const std::vector<Offer>> query_offers(const OfferQuery& q) const;
  /// store().count_matching(q): how many offers `q` matches without its limit (validated by the
  /// caller), cached like query_offers(). Thread-safe.
  std::size_t count_offers(const OfferQuery& q) const;
  /// store().counts(), cached like query_offers(). Thread-safe.
  StoreCounts store_counts() const;
  /// The current data version ("" when caching is off): part of every response-cache key.
  /// With the writes this process made (note_write), so a store whose own version cannot see
  /// them (":memory:") still moves.
  std::string data_version() const {
    return data_version_ ? data_version_() + "#w" + std::to_string(writes_.load()) : std::string();
  }
  /// Called after this process wrote to the store (the server's POST /api/import): the version
  /// moves, so every cached answer is dropped.
  void note_write() const { writes_.fetch_add(1); }
  bool caching() const { return static_cast<bool>(data_version_); }
  /// The training-search memo shared by this process's plans (planner.hpp SearchMemo), with
  /// caching only (a server); nullptr in the CLI, whose plans are one per process. It depends on
  /// the GPU catalog (its clusters point into gpus()), never on the offers.
  SearchMemo* search_memo() const { return search_memo_.get(); }

 private:
  const GpuCatalog& gpus_;
  const std::vector<ProviderInfo>& providers_;
  const Clock& clock_;
  StoreOpener open_store_;
  mutable std::once_flag opened_;
  mutable std::unique_ptr<OfferStore> store_;
  mutable std::mutex store_use_;
  DataVersion data_version_;
  std::unique_ptr<SearchMemo> search_memo_;
  mutable std::atomic<std::uint64_t> writes_{0};
  /// Snapshot cache: version seen, query key → offers, counts (all dropped on a version change).
  mutable std::mutex cache_mutex_;
  mutable std::string cached_version_;
  mutable std::map<std::string, std::shared_ptr<const std::vector<Offer>>> query_cache_;
  mutable std::optional<StoreCounts> counts_cache_;
  mutable std::map<std::string, std::size_t> match_count_cache_;  ///< query key (limit and sort dropped) → count
  /// Drops the caches when the version moved; returns the current version. cache_mutex_ held.
  std::string sync_version_locked() const;
};

/// The GPU a request's `--gpu` names, from the context's catalog. Errors: `gpu_missing` (invalid
/// input) for an empty name, `unknown_gpu` (not found) naming the GPU and the nearest catalog
/// names, both at `--gpu` (the API's field /gpu).
const GpuSpec& gpu_from_flag(const Context& ctx, const std::string& name);

}  // namespace gpuplan::api
