#pragma once
/// Application layer (api): what every use case reads from outside the request, built once at
/// each entry point (CLI start, server start) and passed down by reference, instead of
/// process-wide defaults found deep inside (architecture-review §3 item 3).
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "catalog/offer.hpp"
#include "catalog/providers.hpp"
#include "catalog/store.hpp"
#include "hardware/gpu_spec.hpp"

namespace gpuplan::api {

class Context {
 public:
  /// Opens the offer store; called at most once, on first use (commands that read no offers never
  /// create the database).
  using StoreOpener = std::function<std::unique_ptr<OfferStore>()>;

  Context(const GpuCatalog& gpus, const std::vector<ProviderInfo>& providers, const Clock& clock, StoreOpener open_store)
      : gpus_(gpus), providers_(providers), clock_(clock), open_store_(std::move(open_store)) {}

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

 private:
  const GpuCatalog& gpus_;
  const std::vector<ProviderInfo>& providers_;
  const Clock& clock_;
  StoreOpener open_store_;
  mutable std::once_flag opened_;
  mutable std::unique_ptr<OfferStore> store_;
  mutable std::mutex store_use_;
};

}  // namespace gpuplan::api
