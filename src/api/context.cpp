#include "api/context.hpp"

#include <fmt/core.h>

#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan::api {

OfferStore& Context::store() const {
  std::call_once(opened_, [this] { store_ = open_store_ ? open_store_() : nullptr; });
  if (!store_) throw Error(ErrorKind::internal, "context", "no offer store configured");
  return *store_;
}

std::unique_lock<std::mutex> Context::use_store() const {
  if (store().concurrent_calls()) return std::unique_lock<std::mutex>(store_use_, std::defer_lock);
  return std::unique_lock<std::mutex>(store_use_);
}

BillingTerms Context::billing(const Offer& offer) const {
  return effective_billing(offer, find_provider(providers_, offer.provider));
}

namespace {

/// Every field of the query that changes its answer (limit included), unambiguously joined.
std::string query_key(const OfferQuery& q) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}",
                     q.cheapest_per_plan_class ? std::to_string(*q.cheapest_per_plan_class) : "-", q.filter, q.sort, q.limit ? std::to_string(*q.limit) : "-",
                     price_kind_name(q.price_kind), q.include_excluded ? 1 : 0, q.now_date, q.stale_after_days,
                     q.memory_floor ? fmt::format("{}/{}/{}/{}", q.memory_floor->cluster_bytes, q.memory_floor->multi_node,
                                                  q.memory_floor->max_nodes_assumed, q.memory_floor->slack)
                                    : std::string("-"));
}

/// Distinct queries kept (filters typed by users are many; the pages' and the usual ones few).
constexpr std::size_t kQueryCacheEntries = 256;

}  // namespace

std::string Context::sync_version_locked() const {
  std::string v = data_version();
  if (v != cached_version_) {
    query_cache_.clear();
    counts_cache_.reset();
    match_count_cache_.clear();
    cached_version_ = v;
  }
  return v;
}

std::shared_ptr<const std::vector<Offer>> Context::query_offers(const OfferQuery& q) const {
  if (!data_version_) {
    const auto lock = use_store();
    return std::make_shared<const std::vector<Offer>>(store().query(q));
  }
  const std::string key = query_key(q);
  std::string version;
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    version = sync_version_locked();
    if (auto it = query_cache_.find(key); it != query_cache_.end()) return it->second;
  }
  std::shared_ptr<const std::vector<Offer>> offers;
  {
    const auto lock = use_store();
    offers = std::make_shared<const std::vector<Offer>>(store().query(q));
  }
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (sync_version_locked() == version) {  // not stored when the data moved while querying
    if (query_cache_.size() >= kQueryCacheEntries) query_cache_.clear();
    query_cache_.emplace(key, offers);
  }
  return offers;
}

std::size_t Context::count_offers(const OfferQuery& q) const {
  if (!data_version_) {
    const auto lock = use_store();
    return store().count_matching(q);
  }
  OfferQuery key_query = q;  // the count ignores the page
  key_query.limit.reset();
  key_query.sort.clear();
  const std::string key = query_key(key_query);
  std::string version;
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    version = sync_version_locked();
    if (auto it = match_count_cache_.find(key); it != match_count_cache_.end()) return it->second;
  }
  std::size_t n = 0;
  {
    const auto lock = use_store();
    n = store().count_matching(q);
  }
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (sync_version_locked() == version) {
    if (match_count_cache_.size() >= kQueryCacheEntries) match_count_cache_.clear();
    match_count_cache_.emplace(key, n);
  }
  return n;
}

StoreCounts Context::store_counts() const {
  std::string version;
  if (data_version_) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    version = sync_version_locked();
    if (counts_cache_) return *counts_cache_;
  }
  StoreCounts c;
  {
    const auto lock = use_store();
    c = store().counts();
  }
  if (data_version_) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (sync_version_locked() == version) counts_cache_ = c;
  }
  return c;
}

const GpuSpec& gpu_from_flag(const Context& ctx, const std::string& name) {
  if (name.empty()) throw_invalid_coded("--gpu", "gpu_missing", {}, "no GPU model given", "a GPU from `gpuplan gpus`, e.g. H100-SXM5-80GB");
  if (const GpuSpec* g = ctx.gpus().try_find(name)) return *g;
  std::string near;
  for (const std::string& n : ctx.gpus().nearest_names(name, 5)) near += (near.empty() ? "" : ", ") + n;
  throw_not_found_coded("--gpu", "unknown_gpu", {{"name", name}, {"near", near}}, fmt::format("unknown GPU '{}'", name),
                        near.empty() ? std::string("a GPU from `gpuplan gpus`") : "a GPU from `gpuplan gpus`, e.g. " + near);
}

}  // namespace gpuplan::api
