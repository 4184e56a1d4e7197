#include "catalog/ingest.hpp"

#include <map>
#include <memory>
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

/// The store's market-index pseudo-offers (provider "index:*").
std::vector<Offer> stored_index_series(OfferStore& store) {
  OfferQuery q;
  q.filter = "provider~\"index:\"";
  q.include_excluded = true;
  return store.query(q);
}

/// Steps 1-3 of ingest.hpp, step 3 against the store's market-index series too (read beside
/// the batch's own: the batch is not grown and shrunk per chunk).
void gate_against_index(ImportBatch& batch, const std::vector<Offer>& stored_index, std::string_view today) {
  validate_batch(batch);
  check_no_future_dates(batch, today);
  flag_prices_below_market_index(batch, stored_index);
}

void gate_against_store(OfferStore& store, ImportBatch& batch, std::string_view today) {
  gate_against_index(batch, stored_index_series(store), today);
}

}  // namespace

FileImport ingest_file(OfferStore& store, const std::string& path, std::optional<ImportFormat> format,
                       const IngestOptions& opts, std::size_t chunk_rows) {
  FileImport out;
  if (opts.dry_run) {
    ImportBatch batch = import_file(path, format);
    out.result = ingest(store, batch, opts);
    out.rows_read = batch.rows_read;
    out.offers = batch.offers.size();
    out.summary = batch.summary();
    return out;
  }
  const std::vector<Offer> stored_index = stored_index_series(store);  // before the writer locks the store
  std::map<std::string, ImportRuleCount> counts;
  std::unique_ptr<ImportWriter> writer = store.begin_import();
  import_file_chunks(path, format, chunk_rows, [&](ImportBatch& chunk) {
    gate_against_index(chunk, stored_index, opts.today);
    writer->write(chunk);
    out.rows_read += chunk.rows_read;
    for (const ImportRuleCount& c : chunk.summary()) {
      ImportRuleCount& t = counts[c.rule];
      t.rule = c.rule;
      t.rejected += c.rejected;
      t.flagged += c.flagged;
    }
  });
  out.offers = writer->offers_written();
  out.result = writer->commit();
  for (auto& [rule, c] : counts) out.summary.push_back(std::move(c));
  return out;
}

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
