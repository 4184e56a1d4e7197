#include "catalog/ingest.hpp"

#include <string_view>
#include <unordered_set>
#include <vector>

#include "catalog/importers.hpp"

namespace gpuplan {

void apply_quality_gates(ImportBatch& batch, std::string_view today) {
  validate_batch(batch);
  check_no_future_dates(batch, today);
  flag_prices_below_market_index(batch);
}

namespace {

/// Steps 1-3 of ingest.hpp, step 3 against the store's market-index series too.
void gate_against_store(OfferStore& store, ImportBatch& batch, std::string_view today) {
  validate_batch(batch);
  check_no_future_dates(batch, today);
  // The market-index gate reads the index pseudo-offers (provider "index:*"): those of the
  // batch plus the store's, appended for the check only and removed before writing.
  OfferQuery q;
  q.filter = "provider~\"index:\"";
  q.include_excluded = true;
  std::vector<Offer> stored_index = store.query(q);
  const std::size_t original = batch.offers.size();
  if (!stored_index.empty()) {
    std::unordered_set<std::string_view> in_batch;  // views into the batch's ids, no copies
    in_batch.reserve(batch.offers.size());
    for (const Offer& o : batch.offers) in_batch.insert(o.id);
    std::vector<Offer> extra;
    for (Offer& o : stored_index)
      if (!in_batch.count(o.id)) extra.push_back(std::move(o));
    for (Offer& o : extra) batch.offers.push_back(std::move(o));
  }
  try {
    flag_prices_below_market_index(batch);
  } catch (...) {
    batch.offers.erase(batch.offers.begin() + static_cast<std::ptrdiff_t>(original), batch.offers.end());
    throw;
  }
  batch.offers.erase(batch.offers.begin() + static_cast<std::ptrdiff_t>(original), batch.offers.end());
}

}  // namespace

ImportResult ingest(OfferStore& store, ImportBatch& batch, const IngestOptions& opts) {
  gate_against_store(store, batch, opts.today);
  return opts.dry_run ? store.preview_import(batch) : store.import(batch);
}

SnapshotCommit ingest_snapshot(OfferStore& store, const SnapshotRecord& record, ImportBatch* batch,
                               std::string_view today) {
  if (batch != nullptr && record.status == "accepted") gate_against_store(store, *batch, today);
  return store.commit_snapshot(record, batch);
}

}  // namespace gpuplan
