#include "api/context.hpp"

#include "util/error.hpp"

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

}  // namespace gpuplan::api
