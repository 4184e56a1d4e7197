#pragma once
/// Catalog layer: the one write path into an OfferStore. The CLI's `import`, the first-run
/// seed, the fetchers and the server all call ingest(), so every data-quality gate runs on
/// every write:
///   1. validate_batch (ids, observation owners, finite non-negative prices);
///   2. check_no_future_dates against the injected clock (a future price would stay "latest");
///   3. flag_prices_below_market_index against the market-index series in the batch AND those
///      already in the store (so a user file is checked against the bundled index too).
/// The importers' own row gates (unit checks, zero prices, unresolved GPUs) ran when the batch
/// was parsed. Then the batch is written as one transaction (or previewed: nothing written).
#include <string>
#include <string_view>

#include "catalog/store.hpp"

namespace gpuplan {

struct IngestOptions {
  std::string today;     ///< "YYYY-MM-DD" from the caller's clock
  bool dry_run = false;  ///< preview_import: report what would change, write nothing
};

/// Applies the gates to `batch` (flags added in place, ImportIssues appended), then imports it.
/// Throws as the gates and OfferStore::import; nothing is written then.
ImportResult ingest(OfferStore& store, ImportBatch& batch, const IngestOptions& opts);

/// The fetchers' write: for an accepted snapshot with a batch, the gates above (today: the
/// snapshot's fetch date), then OfferStore::commit_snapshot (record and batch in one
/// transaction). Rejected/unchanged records are logged as they are.
SnapshotCommit ingest_snapshot(OfferStore& store, const SnapshotRecord& record, ImportBatch* batch,
                               std::string_view today);

/// Steps 1-3 above without the store's index series (for the seed of an empty store).
void apply_quality_gates(ImportBatch& batch, std::string_view today);

}  // namespace gpuplan
