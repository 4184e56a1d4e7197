#pragma once
/// Catalog layer: the shared OfferStore on PostgreSQL (libpqxx 6.4 over libpq), for many
/// `gpuplan serve` processes and one scheduled fetcher on one catalog (docs/deployment.md).
/// Semantics are store.hpp's; the contract and filter-parity suites run against it.
///
/// Schema (migrations numbered as SQLite's, sqlite_store.cpp; version in gpuplan_schema):
///   offers(id text PK, ..., gpu_count integer, *_bytes/_per_s double precision,
///          billing_storage_usd_per_gb_month / billing_egress_usd_per_gb numeric (money),
///          billing_sources_json jsonb)
///   observations(seq bigserial PK, offer_id → offers, kind, usd_per_hour numeric (money),
///          observed_at timestamptz (the instant, NULL when undated or unparsable),
///          observed_at_text text (as the source wrote it: what the store returns, and what the
///          filter's `observed`/`stale` read, as in the other stores), dataset, locator),
///          unique on (offer_id, kind, usd_per_hour, COALESCE(observed_at_text, ''), dataset)
///   flags(offer_id, position, rule, detail, excludes boolean), meta(key, value)
///   snapshots(id bigserial, source, url, urls_json jsonb, fetched_at timestamptz, content_hash,
///          parser_version, status, rows_read, offers, observations_added, detail): the fetch
///          log (migration 2); an accepted (source, content_hash) is stored once
///   latest_prices(offer_id, kind) PK → seq, usd_per_hour / usd_per_gpu_hour double precision,
///          observed_at (text), dataset: the latest observation of each offer and kind
///          (migration 3), recomputed in each import's transaction for the kinds it added to
/// Indexes serve the filter's common predicates and the default orders: latest_prices by (kind,
/// usd_per_gpu_hour | usd_per_hour, offer_id COLLATE "C") (a first page walks one of them and
/// stops at the limit); observations by (offer_id, kind, date desc, seq desc) (the refresh's
/// probe); offers by gpu_name, provider, gpu_count, lower(region) and gpuplan_norm(gpu_name_raw);
/// flags by offer. Reads never scan price history.
///
/// Concurrency: a pool of `connections` connections (one per server thread; a caller waits for a
/// free one). Each import, preview and seed is one transaction holding a transaction-level
/// advisory lock (pg_advisory_xact_lock; a writer waits up to 10 min for another), so two fetchers or importers never interleave and a
/// killed process leaves nothing half-written. Migrations run under a session advisory lock:
/// two processes starting on an empty database migrate once. Reads run at REPEATABLE READ so
/// offers, flags and observations of one query agree while an import commits.
/// Fixed statements are prepared once per connection; filter queries are prepared per
/// distinct SQL text on each connection (a bounded cache).
///
/// Errors: Error{unavailable} when the server cannot be reached, the connection drops (the
/// broken connection is replaced on the next call, so a server keeps serving), or a lock waits
/// past lock_timeout_ms; Error{conflict} when the database's schema version is newer than this
/// binary's (exit 4); Error{internal} for other SQL errors.
#include <cstddef>
#include <memory>
#include <string>

#include "catalog/store.hpp"

namespace gpuplan {

class GpuCatalog;

/// Schema version this binary writes (= sqlite_store_schema_version(): same numbering).
int pg_store_schema_version() noexcept;

/// Migrates the database at `conninfo` to `target_version` (0..pg_store_schema_version()) and
/// no further, under the migration lock: for tests of upgrades from an older version and for
/// operators who migrate before rolling out servers. Throws as PgOfferStore's constructor.
void pg_store_migrate(const std::string& conninfo, int target_version);

struct PgStoreOptions {
  std::size_t connections = 1;   ///< pool size; at least 1
  int lock_timeout_ms = 5000;    ///< a statement waiting on a lock longer than this → Error{unavailable}
};

class PgOfferStore final : public OfferStore {
 public:
  /// Connects (`conninfo`: a libpq URI or keyword/value string), migrates under an advisory
  /// lock, and opens the pool. `gpus` must outlive the store.
  PgOfferStore(const std::string& conninfo, const GpuCatalog& gpus, const PgStoreOptions& opts = {});
  ~PgOfferStore() override;
  PgOfferStore(const PgOfferStore&) = delete;
  PgOfferStore& operator=(const PgOfferStore&) = delete;

  ImportResult import(const ImportBatch& batch) override;
  std::vector<Offer> query(const OfferQuery& q) override;
  std::size_t count_matching(const OfferQuery& q) override;
  std::optional<Offer> get(std::string_view id) override;
  std::vector<PriceObservation> history(std::string_view offer_id) override;
  StoreCounts counts() override;
  ImportResult preview_import(const ImportBatch& batch) override;
  bool seed_if_new(std::string_view seed_key, const std::function<ImportBatch()>& make_batch) override;
  int schema_version() override;
  std::uint64_t revision() override;
  std::optional<std::string> write_refusal() override;

  /// PostgreSQL's EXPLAIN of each statement query(q) runs, in order (the plan's lines joined
  /// by newlines): how a query reads the tables, for tests and `docs/deployment.md`.
  std::vector<std::string> explain_query(const OfferQuery& q);
  /// Tests: the bounded read scans while latest_prices holds at most `rows` rows (default
  /// kBoundedReadScanMaxRows; 0 = always the index walks).
  void set_bounded_read_scan_max_rows(std::size_t rows);
  bool concurrent_calls() const noexcept override { return true; }  ///< a connection pool
  SnapshotCommit commit_snapshot(const SnapshotRecord& record, const ImportBatch* batch) override;
  std::optional<SnapshotRecord> last_snapshot(std::string_view source, std::string_view status) override;
  std::optional<std::string> first_accepted_with_hash(std::string_view source, std::string_view content_hash) override;
  std::vector<SnapshotRecord> snapshots(std::string_view source, std::size_t limit) override;

 private:
  friend void pg_store_migrate(const std::string& conninfo, int target_version);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuplan
