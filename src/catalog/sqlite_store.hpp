#pragma once
/// Catalog layer: the default OfferStore, an embedded SQLite database (libsqlite3).
///
/// Schema (versioned with PRAGMA user_version; migrations run in order inside one transaction):
///   offers(id PK, provider, instance_type, region, zone, gpu_name_raw, gpu_name, gpu_count,
///          gpu_memory_bytes, vcpus, ram_bytes, local_disk_bytes, intra_node_link,
///          intra_node_link_bytes_per_s, form_factor, inter_node_network, inter_node_bits_per_s,
///          max_nodes, confirmed_available_at, billing_* overrides, billing_sources_json)
///   observations(seq PK, offer_id, kind, usd_per_hour, observed_at, dataset, locator),
///          unique on (offer_id, kind, usd_per_hour, IFNULL(observed_at,''), dataset)
///   flags(offer_id, position, rule, detail, excludes)
///   meta(key, value): "seeded" = the bundled catalog's key (bundled_catalog_key()) once imported
///   snapshots (migration 2; `gpuplan fetch`): id PK, source, url, urls_json, fetched_at,
///          content_hash, parser_version, status (accepted|rejected|unchanged), rows_read, offers,
///          observations_added, detail; index (source, fetched_at); unique (source, content_hash)
///          WHERE status = 'accepted' (two fetches of one content import once)
///   latest_prices (migration 3): (offer_id, kind) PK → seq of the latest observation,
///          usd_per_hour, usd_per_gpu_hour (= usd_per_hour / gpu_count), observed_at, dataset;
///          recomputed inside each import's transaction for the kinds it added to; indexes
///          (kind, usd_per_gpu_hour, offer_id) and (kind, usd_per_hour, offer_id) give the
///          default and price orders, so a first page reads the index, never the history
/// Per connection: WAL journal, a busy timeout (readers keep working during an import; a writer
/// waits up to the timeout, then Error{unavailable}), foreign keys on, a temp table of GPU specs
/// (bandwidth, memory family) and the SQL function gpuplan_norm used by the filter's SQL.
/// Every value reaches SQL through sqlite3_bind_*; the filter's SQL is built from a whitelist.
///
/// Errors: Error{unavailable} when the file cannot be opened or stays locked; Error{conflict}
/// when the database's user_version is newer than this binary knows; Error{invalid_input} when
/// the file is not a SQLite database.
#include <functional>
#include <memory>
#include <string>

#include "catalog/store.hpp"

namespace gpuplan {

class GpuCatalog;

/// Schema version this binary writes (the number of migrations it knows).
int sqlite_store_schema_version() noexcept;
/// Brings the SQLite store at `path` (created when absent) to schema `target_version`
/// (0..sqlite_store_schema_version()) and no further, in one transaction: for tests of upgrades
/// from an older version (SqliteOfferStore's constructor then migrates the rest). Throws
/// Error{conflict} for a store newer than target_version, as the constructor's errors otherwise.
void sqlite_store_migrate(const std::string& path, int target_version);

class SqliteOfferStore final : public OfferStore {
 public:
  /// Opens (creating when missing) the database at `path` (":memory:" works) and migrates it
  /// to the current schema. `gpus` (nullptr → bundled) must outlive the store. busy_timeout_ms:
  /// how long a statement waits for a lock before Error{unavailable}.
  explicit SqliteOfferStore(const std::string& path, const GpuCatalog* gpus = nullptr, int busy_timeout_ms = 5000);
  ~SqliteOfferStore() override;
  SqliteOfferStore(const SqliteOfferStore&) = delete;
  SqliteOfferStore& operator=(const SqliteOfferStore&) = delete;

  ImportResult import(const ImportBatch& batch) override;
  /// A streamed import in one transaction (ImportWriter): each chunk written as it comes, the
  /// store's mutex held until commit() or the writer's destruction (rollback).
  std::unique_ptr<ImportWriter> begin_import() override;
  std::vector<Offer> query(const OfferQuery& q) override;
  std::size_t count_matching(const OfferQuery& q) override;
  std::optional<Offer> get(std::string_view id) override;
  std::vector<PriceObservation> history(std::string_view offer_id) override;
  StoreCounts counts() override;
  SnapshotCommit commit_snapshot(const SnapshotRecord& record, const ImportBatch* batch) override;
  std::optional<SnapshotRecord> last_snapshot(std::string_view source, std::string_view status) override;
  std::optional<std::string> first_accepted_with_hash(std::string_view source, std::string_view content_hash) override;
  std::vector<SnapshotRecord> snapshots(std::string_view source, std::size_t limit) override;

  /// Computed inside a transaction that is rolled back: nothing is written.
  ImportResult preview_import(const ImportBatch& batch) override;
  bool seed_if_new(std::string_view seed_key, const std::function<ImportBatch()>& make_batch) override;
  /// The schema version stored in the file (PRAGMA user_version).
  int schema_version() override;
  std::uint64_t revision() override;
  std::optional<std::string> write_refusal() override;

  /// SQLite's EXPLAIN QUERY PLAN of each statement query(q) runs, in order (one line per plan
  /// step): how a query reads the tables, for tests and `docs/deployment.md`.
  std::vector<std::string> explain_query(const OfferQuery& q);
  /// Tests: the bounded read scans while latest_prices holds at most `rows` rows (default
  /// kBoundedReadScanMaxRows; 0 = always the index walks).
  void set_bounded_read_scan_max_rows(std::size_t rows);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// $XDG_DATA_HOME/gpuplan/offers.sqlite, else $HOME/.local/share/gpuplan/offers.sqlite.
/// Throws Error{unavailable} when neither variable is set.
std::string default_offer_db_path();

}  // namespace gpuplan
