#include "catalog/offer.hpp"

#include <algorithm>

namespace gpuplan {

std::string_view price_kind_name(PriceKind k) noexcept {
  switch (k) {
    case PriceKind::on_demand: return "on-demand";
    case PriceKind::spot: return "spot";
    case PriceKind::reserved_1y: return "reserved-1y";
    case PriceKind::reserved_3y: return "reserved-3y";
    case PriceKind::reserved_1m: return "reserved-1m";
    case PriceKind::reserved_1w: return "reserved-1w";
    case PriceKind::reserved_3m: return "reserved-3m";
    case PriceKind::reserved_6m: return "reserved-6m";
  }
  return "on-demand";
}

std::string_view intra_node_link_name(IntraNodeLink k) noexcept {
  switch (k) {
    case IntraNodeLink::unknown: return "unknown";
    case IntraNodeLink::pcie: return "pcie";
    case IntraNodeLink::nvlink: return "nvlink";
  }
  return "unknown";
}

std::string_view inter_node_network_name(InterNodeNetwork k) noexcept {
  switch (k) {
    case InterNodeNetwork::unknown: return "unknown";
    case InterNodeNetwork::ethernet: return "ethernet";
    case InterNodeNetwork::roce: return "roce";
    case InterNodeNetwork::infiniband: return "infiniband";
  }
  return "unknown";
}

namespace {
/// The latest-price rule (offer.hpp latest_price), one observation at a time: `p` replaces the
/// current pick when there is none, when both are undated, or when `p` is dated no earlier than a
/// dated pick or the pick is undated (later in the list wins ties).
bool replaces_latest(const PriceObservation* best, const PriceObservation& p) {
  if (best == nullptr) return true;
  const auto& a = best->source.observed_at;
  const auto& b = p.source.observed_at;
  if (!b) return !a;
  return !a || *b >= *a;
}
}  // namespace

const PriceObservation* Offer::latest_price(PriceKind kind) const {
  // Unknown dates count as oldest; among equal dates the later observation in `prices` wins
  // (prices are kept oldest first, so a later entry was recorded later).
  const PriceObservation* best = nullptr;
  for (const PriceObservation& p : prices) {
    if (p.kind == kind && replaces_latest(best, p)) best = &p;
  }
  return best;
}

std::array<const PriceObservation*, kPriceKindCount> Offer::latest_prices() const {
  // latest_price's rule for each kind at once.
  std::array<const PriceObservation*, kPriceKindCount> best{};
  for (const PriceObservation& p : prices) {
    const auto k = static_cast<std::size_t>(p.kind);
    if (k >= best.size()) continue;
    if (replaces_latest(best[k], p)) best[k] = &p;
  }
  return best;
}

bool Offer::excluded_from_ranking() const {
  return std::any_of(flags.begin(), flags.end(), [](const QualityFlag& f) { return f.excludes; });
}

}  // namespace gpuplan
