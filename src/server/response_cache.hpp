#pragma once
/// Server layer: a bounded, thread-safe map from a request key to a finished response body.
///
/// Every answer of the server is a pure function of (the request, the catalog's data version,
/// today's date): keys are built with key() from those three, so a cached answer is never served
/// after an import changed the store or after midnight UTC. Only successful answers are stored.
/// When full, the map is cleared (simple and bounded; the hot keys come back on the next hit).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "api/context.hpp"

namespace gpuplan::server {

struct CachedResponse {
  std::string body;
  std::string content_type;
  std::string etag;              ///< catalog reads
  std::string content_language;  ///< pages
};

class ResponseCache {
 public:
  explicit ResponseCache(std::size_t max_entries) : max_entries_(max_entries) {}

  /// "" when the context does not cache (no data version): callers then skip the cache.
  static std::string key(const api::Context& ctx, std::string_view request) {
    if (!ctx.caching()) return {};
    std::string k = ctx.data_version();
    k += '\x1f';
    k += ctx.clock().today();
    k += '\x1f';
    k += request;
    return k;
  }

  std::shared_ptr<const CachedResponse> get(const std::string& key) const {
    if (key.empty()) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second;
  }

  void put(const std::string& key, CachedResponse response) {
    if (key.empty()) return;
    auto value = std::make_shared<const CachedResponse>(std::move(response));
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= max_entries_) entries_.clear();
    entries_[key] = std::move(value);
  }

 private:
  std::size_t max_entries_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const CachedResponse>> entries_;
};

}  // namespace gpuplan::server
