#pragma once
// Offers and billing for the planner tests: one on-demand price dated 2026-11-20, per-second billing.
#include <string>

#include "catalog/offer.hpp"
#include "planner/planner.hpp"

namespace gpuplan::test {

/// Per-second billing, no minimum: totals are exactly rate × time in these tests.
inline BillingTerms per_second(const Offer& o) {
  BillingTerms t = o.billing_override;
  t.granularity_seconds = 1;
  t.minimum_billed_seconds = 0;
  return t;
}

/// `id` = provider/instance; GPU name as the catalog spells it; one on-demand price with its source.
inline Offer priced_offer(const std::string& id, const std::string& gpu, int gpus, double usd_per_hour,
                          IntraNodeLink link, const std::string& source_file) {
  Offer o;
  o.id = id;
  o.provider = id.substr(0, id.find('/'));
  o.instance_type = id;
  o.gpu_name_raw = gpu;
  o.gpu_name = gpu;
  o.gpu_count = gpus;
  o.intra_node_link = link;
  PriceObservation p;
  p.offer_id = id;
  p.kind = PriceKind::on_demand;
  p.usd_per_hour = usd_per_hour;
  p.source = SourceRef{"test", source_file, std::string("2026-11-20")};
  o.prices.push_back(p);
  return o;
}

}  // namespace gpuplan::test
