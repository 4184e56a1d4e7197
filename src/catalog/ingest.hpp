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
#include <optional>
#include <string>
#include <vector>
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

/// What a streamed file import did (ingest_file).
struct FileImport {
  ImportResult result;
  std::size_t rows_read = 0;               ///< data rows (or records) of the file
  std::size_t offers = 0;                  ///< distinct offer ids in the file
  std::vector<ImportRuleCount> summary;    ///< per-rule rejected/flagged counts (ImportBatch::summary)
};

/// Rows per chunk of ingest_file (about 2 KB of memory per row while a chunk is held).
inline constexpr std::size_t kIngestChunkRows = 16384;

/// `gpuplan import FILE` (issue 11: linear time, bounded memory): reads the file in chunks of
/// `chunk_rows` rows (import_file_chunks), applies the gates above to each chunk (the market-index
/// series read from the store once, before writing) and writes it into ONE open import
/// (OfferStore::begin_import), committed after the last chunk: all or nothing, a row error or a
/// gate anywhere in the file writes nothing. Memory: a chunk, the ids seen (the store's writer)
/// and the per-rule counts; the issues themselves are counted and dropped. An offer repeated in
/// two chunks is merged as in one batch, except that the below-market-index gate reads each
/// chunk's latest price (a flag, never an exclusion). With opts.dry_run the file is read whole
/// and previewed (ingest() of import_file's batch: memory as before, nothing written).
/// A file without any offer (a header alone, `{"offers": []}`, only CPU rows) is
/// Error{invalid_input} at the file ("no rows" / "no offers"), dry run or not: nothing written.
FileImport ingest_file(OfferStore& store, const std::string& path, std::optional<ImportFormat> format,
                       const IngestOptions& opts, std::size_t chunk_rows = kIngestChunkRows);

/// Seen again (docs/fetch.md): moves each observation of `batch` whose price equals the stored
/// latest price of its offer and kind from the same dataset, observed earlier, to
/// batch.seen_again (a price re-confirmed by a later fetch is not a new observation: history
/// gets one observation per price change, and commit_snapshot sets that price's last_seen_at).
void split_seen_again(OfferStore& store, ImportBatch& batch);

/// The fetchers' write: for an accepted snapshot with a batch, the gates above (today: the
/// snapshot's fetch date); for an accepted or unchanged one with a batch, split_seen_again; then
/// OfferStore::commit_snapshot (record, batch and the prices seen again in one transaction).
/// A rejected record, or one without a batch, is logged as it is.
SnapshotCommit ingest_snapshot(OfferStore& store, const SnapshotRecord& record, ImportBatch* batch,
                               std::string_view today);

/// Steps 1-3 above without the store's index series (for the seed of an empty store).
void apply_quality_gates(ImportBatch& batch, std::string_view today);

}  // namespace gpuplan
