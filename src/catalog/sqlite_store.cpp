#include "catalog/sqlite_store.hpp"
#include "catalog/store_validate.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "catalog/filter_sql.hpp"
#include "catalog/freshness.hpp"
#include "catalog/import_detail.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

// ---------------------------------------------------------------------------------------------
// Thin RAII wrapper over libsqlite3.

[[noreturn]] void throw_sqlite(sqlite3* db, int rc, const std::string& where) {
  const std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int primary = rc & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
    throw Error(ErrorKind::unavailable, where, "database is locked: " + msg, "retry when the other writer is done");
  if (primary == SQLITE_CANTOPEN || primary == SQLITE_PERM || primary == SQLITE_READONLY)
    throw Error(ErrorKind::unavailable, where, "cannot open or write the database: " + msg,
                "a writable path (set it with --db)");
  if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT)
    throw Error(ErrorKind::conflict, where, "corrupt store (damaged, or not a SQLite database): " + msg,
                "a gpuplan offer database: restore it from a backup, or use a new path with --db");
  throw Error(ErrorKind::internal, where, "SQLite error: " + msg);
}

class Stmt {
 public:
  Stmt(sqlite3* db, std::string_view sql, std::string where) : db_(db), where_(std::move(where)) {
    int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK) throw_sqlite(db, rc, where_);
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, std::string_view s) {
    check(sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()),
                            borrow_text_ ? SQLITE_STATIC : SQLITE_TRANSIENT));
    return *this;
  }
  /// From now on text is bound without a copy (SQLITE_STATIC): the caller keeps every bound
  /// string alive until the statement's reset() (which clears the bindings). For the import's
  /// per-row statements, whose texts are the batch's own strings (a copy per bound text was a
  /// malloc and a free per cell: issue 11).
  Stmt& borrow_text() {
    borrow_text_ = true;
    return *this;
  }
  Stmt& bind(int i, double v) {
    check(sqlite3_bind_double(stmt_, i, v));
    return *this;
  }
  Stmt& bind_int(int i, std::int64_t v) {
    check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Stmt& bind_null(int i) {
    check(sqlite3_bind_null(stmt_, i));
    return *this;
  }
  Stmt& bind(int i, const std::optional<double>& v) { return v ? bind(i, *v) : bind_null(i); }
  Stmt& bind(int i, const std::optional<std::string>& v) { return v ? bind(i, std::string_view(*v)) : bind_null(i); }
  Stmt& bind(int i, const std::optional<int>& v) { return v ? bind_int(i, *v) : bind_null(i); }
  Stmt& bind(int i, const SqlValue& v) {
    if (const double* d = std::get_if<double>(&v)) return bind(i, *d);
    return bind(i, std::string_view(std::get<std::string>(v)));
  }

  /// True when a row is available.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw_sqlite(db_, rc, where_);
  }
  void run() {
    while (step()) {
    }
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  bool is_null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
  std::string text(int c) const {
    const unsigned char* p = sqlite3_column_text(stmt_, c);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c)))
             : std::string();
  }
  std::optional<std::string> opt_text(int c) const {
    if (is_null(c)) return std::nullopt;
    return text(c);
  }
  double real(int c) const { return sqlite3_column_double(stmt_, c); }
  std::optional<double> opt_real(int c) const {
    if (is_null(c)) return std::nullopt;
    return real(c);
  }
  std::int64_t integer(int c) const { return sqlite3_column_int64(stmt_, c); }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) throw_sqlite(db_, rc, where_);
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string where_;
  bool borrow_text_ = false;
};

void exec(sqlite3* db, const char* sql, const std::string& where) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    sqlite3_free(err);
    throw_sqlite(db, rc, where);
  }
}

/// Schema migrations: entry i brings user_version i to i+1. Append only; never edit a shipped one.
const std::vector<const char*>& migrations() {
  static const std::vector<const char*> m = {
      R"sql(
CREATE TABLE offers (
  id TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  instance_type TEXT NOT NULL,
  region TEXT NOT NULL,
  zone TEXT NOT NULL,
  gpu_name_raw TEXT NOT NULL,
  gpu_name TEXT,
  gpu_count INTEGER NOT NULL,
  gpu_memory_bytes REAL,
  vcpus REAL,
  ram_bytes REAL,
  local_disk_bytes REAL,
  intra_node_link TEXT NOT NULL,
  intra_node_link_bytes_per_s REAL,
  form_factor TEXT NOT NULL,
  inter_node_network TEXT NOT NULL,
  inter_node_bits_per_s REAL,
  max_nodes INTEGER,
  confirmed_available_at TEXT,
  billing_granularity_seconds REAL,
  billing_minimum_billed_seconds REAL,
  billing_storage_usd_per_gb_month REAL,
  billing_egress_usd_per_gb REAL,
  billing_egress_free_gb_per_month REAL,
  billing_preemptions_per_day REAL,
  billing_sources_json TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE observations (
  seq INTEGER PRIMARY KEY,
  offer_id TEXT NOT NULL REFERENCES offers(id),
  kind TEXT NOT NULL,
  usd_per_hour REAL NOT NULL,
  observed_at TEXT,
  dataset TEXT NOT NULL,
  locator TEXT NOT NULL
);
CREATE UNIQUE INDEX observations_identity
  ON observations(offer_id, kind, usd_per_hour, IFNULL(observed_at, ''), dataset);
CREATE INDEX observations_by_kind ON observations(kind, offer_id);
CREATE TABLE flags (
  offer_id TEXT NOT NULL REFERENCES offers(id),
  position INTEGER NOT NULL,
  rule TEXT NOT NULL,
  detail TEXT NOT NULL,
  excludes INTEGER NOT NULL,
  PRIMARY KEY (offer_id, position)
);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql",
      // 2: snapshot log of `gpuplan fetch` (src/fetch/). One row per fetch of a source; an
      // accepted (source, content_hash) is stored once, so two fetches at once add nothing twice.
      R"sql(
CREATE TABLE snapshots (
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL,
  url TEXT NOT NULL,
  urls_json TEXT NOT NULL DEFAULT '[]',
  fetched_at TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  parser_version INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('accepted', 'rejected', 'unchanged')),
  rows_read INTEGER NOT NULL,
  offers INTEGER NOT NULL,
  observations_added INTEGER NOT NULL,
  detail TEXT NOT NULL
);
CREATE INDEX snapshots_by_source ON snapshots(source, fetched_at);
CREATE UNIQUE INDEX snapshots_accepted_once ON snapshots(source, content_hash) WHERE status = 'accepted';
)sql",
      // 3: the latest price of each offer and kind, maintained by every import in its own
      // transaction (kRefreshLatestSql), so reads never scan price history (issue 12). The
      // query's sort keys are columns here, indexed with the kind and the id tie-break, so the
      // first page (filter, ORDER BY price, LIMIT n) walks an index. Backfilled from history.
      R"sql(
CREATE TABLE latest_prices (
  offer_id TEXT NOT NULL REFERENCES offers(id),
  kind TEXT NOT NULL,
  seq INTEGER NOT NULL REFERENCES observations(seq),
  usd_per_hour REAL NOT NULL,
  usd_per_gpu_hour REAL,
  observed_at TEXT,
  dataset TEXT NOT NULL,
  gpu_name TEXT,
  gpu_norm TEXT NOT NULL,
  PRIMARY KEY (offer_id, kind)
) WITHOUT ROWID;
CREATE INDEX latest_prices_by_gpu_hour ON latest_prices(kind, usd_per_gpu_hour, offer_id);
CREATE INDEX latest_prices_by_price ON latest_prices(kind, usd_per_hour, offer_id);
CREATE INDEX latest_prices_by_gpu_name ON latest_prices(kind, gpu_name, usd_per_gpu_hour, offer_id);
CREATE INDEX latest_prices_by_gpu_norm ON latest_prices(kind, gpu_norm, usd_per_gpu_hour, offer_id);
INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, gpu_name, gpu_norm)
  SELECT offer_id, kind, seq, usd_per_hour, usd_per_hour / NULLIF(gpu_count, 0), observed_at, dataset, gpu_name,
         gpuplan_norm(gpu_name_raw)
  FROM (SELECT x.offer_id, x.kind, x.seq, x.usd_per_hour, x.observed_at, x.dataset, o.gpu_count, o.gpu_name,
               o.gpu_name_raw, row_number() OVER (PARTITION BY x.offer_id, x.kind
                 ORDER BY (x.observed_at IS NULL), x.observed_at DESC, x.seq DESC) AS rn
        FROM observations x JOIN offers o ON o.id = x.offer_id)
  WHERE rn = 1;
)sql",
      // 4: latest_prices also keyed by provider (lower-cased as the filter compares it), and the
      // per-model and per-provider walks for the price order too, so first pages of `gpu=`,
      // `provider=` (and or-lists of them) read one short index range per value. The table is
      // rebuilt from history (the same rule as migration 3).
      R"sql(
DELETE FROM latest_prices;
ALTER TABLE latest_prices ADD COLUMN provider TEXT;
ALTER TABLE latest_prices ADD COLUMN locator TEXT NOT NULL DEFAULT '';
CREATE INDEX latest_prices_by_provider ON latest_prices(kind, provider, usd_per_gpu_hour, offer_id);
CREATE INDEX latest_prices_by_gpu_name_price ON latest_prices(kind, gpu_name, usd_per_hour, offer_id);
CREATE INDEX latest_prices_by_gpu_norm_price ON latest_prices(kind, gpu_norm, usd_per_hour, offer_id);
CREATE INDEX latest_prices_by_provider_price ON latest_prices(kind, provider, usd_per_hour, offer_id);
INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, gpu_name, gpu_norm,
                           provider, locator)
  SELECT offer_id, kind, seq, usd_per_hour, usd_per_hour / NULLIF(gpu_count, 0), observed_at, dataset, gpu_name,
         gpuplan_norm(gpu_name_raw), lower(provider), locator
  FROM (SELECT x.offer_id, x.kind, x.seq, x.usd_per_hour, x.observed_at, x.dataset, x.locator, o.gpu_count, o.gpu_name,
               o.gpu_name_raw, o.provider, row_number() OVER (PARTITION BY x.offer_id, x.kind
                 ORDER BY (x.observed_at IS NULL), x.observed_at DESC, x.seq DESC) AS rn
        FROM observations x JOIN offers o ON o.id = x.offer_id)
  WHERE rn = 1;
)sql",
      // 5: latest_prices cheaper to keep and to walk (issues 11 and 12). A rowid table (its
      // UNIQUE (offer_id, kind) replaces the WITHOUT ROWID primary key), so its 8 order indexes
      // carry an integer row key instead of the offer's text id: entries a third to a half
      // narrower, and the order's id tie-break is sorted per price (SQLite's "RIGHT PART OF ORDER
      // BY" sorter) instead of being stored 8 times. The offer's gpu_count is a column and ends
      // each order index, so `gpus OP N` (filter_sql.hpp gpu_count_bounds) is checked on the index
      // entry before the offer is read. observations_by_kind (kind, offer_id) is dropped: no
      // statement reads observations by kind since latest_prices exists. Rebuilt from history by
      // migration 3's rule (as migration 4 did).
      R"sql(
CREATE TABLE latest_prices_v5 (
  offer_id TEXT NOT NULL REFERENCES offers(id),
  kind TEXT NOT NULL,
  seq INTEGER NOT NULL REFERENCES observations(seq),
  usd_per_hour REAL NOT NULL,
  usd_per_gpu_hour REAL,
  observed_at TEXT,
  dataset TEXT NOT NULL,
  gpu_name TEXT,
  gpu_norm TEXT NOT NULL,
  provider TEXT,
  locator TEXT NOT NULL DEFAULT '',
  gpu_count INTEGER NOT NULL,
  UNIQUE (offer_id, kind)
);
INSERT INTO latest_prices_v5 (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, gpu_name,
                              gpu_norm, provider, locator, gpu_count)
  SELECT offer_id, kind, seq, usd_per_hour, usd_per_hour / NULLIF(gpu_count, 0), observed_at, dataset, gpu_name,
         gpuplan_norm(gpu_name_raw), lower(provider), locator, gpu_count
  FROM (SELECT x.offer_id, x.kind, x.seq, x.usd_per_hour, x.observed_at, x.dataset, x.locator, o.gpu_count, o.gpu_name,
               o.gpu_name_raw, o.provider, row_number() OVER (PARTITION BY x.offer_id, x.kind
                 ORDER BY (x.observed_at IS NULL), x.observed_at DESC, x.seq DESC) AS rn
        FROM observations x JOIN offers o ON o.id = x.offer_id)
  WHERE rn = 1
  ORDER BY offer_id, kind;
DROP TABLE latest_prices;
ALTER TABLE latest_prices_v5 RENAME TO latest_prices;
CREATE INDEX latest_prices_by_gpu_hour ON latest_prices(kind, usd_per_gpu_hour, gpu_count);
CREATE INDEX latest_prices_by_price ON latest_prices(kind, usd_per_hour, gpu_count);
CREATE INDEX latest_prices_by_gpu_name ON latest_prices(kind, gpu_name, usd_per_gpu_hour, gpu_count);
CREATE INDEX latest_prices_by_gpu_norm ON latest_prices(kind, gpu_norm, usd_per_gpu_hour, gpu_count);
CREATE INDEX latest_prices_by_provider ON latest_prices(kind, provider, usd_per_gpu_hour, gpu_count);
CREATE INDEX latest_prices_by_gpu_name_price ON latest_prices(kind, gpu_name, usd_per_hour, gpu_count);
CREATE INDEX latest_prices_by_gpu_norm_price ON latest_prices(kind, gpu_norm, usd_per_hour, gpu_count);
CREATE INDEX latest_prices_by_provider_price ON latest_prices(kind, provider, usd_per_hour, gpu_count);
DROP INDEX IF EXISTS observations_by_kind;
)sql",
      // 6: the plan class of each latest price (store.hpp plan_class_of: a hash of the offer's
      // facts the planner reads, computed in C++ and written by every import), and the walks of
      // the planner's bounded read (issue 12): per kind and class by price (the K cheapest), and
      // by date (does a class hold clean-dated, stale or undated prices). Filled for existing rows
      // by backfill_plan_class right after this migration, in its transaction.
      R"sql(
ALTER TABLE latest_prices ADD COLUMN plan_class INTEGER;
CREATE INDEX latest_prices_by_class_price ON latest_prices(kind, plan_class, usd_per_hour, observed_at);
CREATE INDEX latest_prices_by_class_date ON latest_prices(kind, plan_class, observed_at);
)sql",
      // 7: the fewest nodes an offer is sold as (Offer::min_nodes: reserved clusters sold as >= N
      // nodes); NULL = no minimum known. Existing offers keep NULL; their plan classes do not
      // change (plan_class_of adds the field only when set).
      R"sql(
ALTER TABLE offers ADD COLUMN min_nodes INTEGER;
)sql",
      // 8: 4 secondary indexes on latest_prices instead of 10 (issue 11: a bulk import rebuilds
      // every one, about 0.35 s each at 200,000 rows). The 6 per-model and per-provider order
      // indexes of migration 4 (kind, gpu_name / gpu_norm / provider, price, gpu_count) are
      // dropped; the 2 order indexes carry the offer's gpu_norm, gpu_name and provider after
      // gpu_count instead, so a first page filtered by model or provider walks the order index
      // of its sort and tests the model or provider on the index entry (query_sql's key test;
      // SQLite reads the row only for entries that pass). Measured both sides in
      // docs/import-format.md.
      R"sql(
DROP INDEX IF EXISTS latest_prices_by_gpu_name;
DROP INDEX IF EXISTS latest_prices_by_gpu_norm;
DROP INDEX IF EXISTS latest_prices_by_provider;
DROP INDEX IF EXISTS latest_prices_by_gpu_name_price;
DROP INDEX IF EXISTS latest_prices_by_gpu_norm_price;
DROP INDEX IF EXISTS latest_prices_by_provider_price;
DROP INDEX IF EXISTS latest_prices_by_gpu_hour;
DROP INDEX IF EXISTS latest_prices_by_price;
CREATE INDEX latest_prices_by_gpu_hour ON latest_prices(kind, usd_per_gpu_hour, gpu_count, gpu_norm, gpu_name, provider);
CREATE INDEX latest_prices_by_price ON latest_prices(kind, usd_per_hour, gpu_count, gpu_norm, gpu_name, provider);
)sql",
      // 9: a source's content may be accepted again after another content (a price that goes
      // back to an earlier value, issue 9 trial D1): the unique index on accepted (source,
      // content_hash) of migration 2 is dropped. "Unchanged" means the same hash as the LAST
      // accepted snapshot of the source, checked inside the write transaction
      // (commit_snapshot), which still keeps two fetches at once from importing twice.
      R"sql(
DROP INDEX IF EXISTS snapshots_accepted_once;
CREATE INDEX IF NOT EXISTS snapshots_by_source_status ON snapshots(source, status, fetched_at);
)sql",
      // 10: when each latest price was last seen (issue 9 trial D3, docs/fetch.md "Seen again"):
      // a fetch that finds the same price again (an unchanged snapshot, or an accepted one with
      // this offer at this price) sets last_seen_at instead of adding an observation; a new
      // latest observation starts it at its observed_at. Age, tier and stale read it, so the
      // bounded read's two class indexes are rebuilt on it. Not derivable from the history
      // (observations stay as they were); filled with observed_at for existing rows.
      R"sql(
ALTER TABLE latest_prices ADD COLUMN last_seen_at TEXT;
UPDATE latest_prices SET last_seen_at = observed_at;
DROP INDEX IF EXISTS latest_prices_by_class_price;
DROP INDEX IF EXISTS latest_prices_by_class_date;
CREATE INDEX latest_prices_by_class_price ON latest_prices(kind, plan_class, usd_per_hour, last_seen_at);
CREATE INDEX latest_prices_by_class_date ON latest_prices(kind, plan_class, last_seen_at);
)sql",
  };
  return m;
}

/// The offers columns as migration 6 left them (before min_nodes, migration 7): migration 6's
/// data step (backfill_plan_class) runs on stores without min_nodes, so it reads these and a NULL
/// in its place (column 26, read_offer: no minimum).
#define GPUPLAN_OFFER_COLUMNS_V6 \
    "o.id, o.provider, o.instance_type, o.region, o.zone, o.gpu_name_raw, o.gpu_name, o.gpu_count, " \
    "o.gpu_memory_bytes, o.vcpus, o.ram_bytes, o.local_disk_bytes, o.intra_node_link, " \
    "o.intra_node_link_bytes_per_s, o.form_factor, o.inter_node_network, o.inter_node_bits_per_s, o.max_nodes, " \
    "o.confirmed_available_at, o.billing_granularity_seconds, o.billing_minimum_billed_seconds, " \
    "o.billing_storage_usd_per_gb_month, o.billing_egress_usd_per_gb, o.billing_egress_free_gb_per_month, " \
    "o.billing_preemptions_per_day, o.billing_sources_json"
constexpr const char* kOfferColumnsV6 = GPUPLAN_OFFER_COLUMNS_V6 ", NULL";
constexpr const char* kOfferColumns = GPUPLAN_OFFER_COLUMNS_V6 ", o.min_nodes";
#undef GPUPLAN_OFFER_COLUMNS_V6

IntraNodeLink parse_link(const std::string& s) {
  for (IntraNodeLink k : {IntraNodeLink::pcie, IntraNodeLink::nvlink})
    if (intra_node_link_name(k) == s) return k;
  return IntraNodeLink::unknown;
}
InterNodeNetwork parse_network(const std::string& s) {
  for (InterNodeNetwork k : {InterNodeNetwork::ethernet, InterNodeNetwork::roce, InterNodeNetwork::infiniband})
    if (inter_node_network_name(k) == s) return k;
  return InterNodeNetwork::unknown;
}
std::optional<PriceKind> parse_kind(const std::string& s) {
  for (PriceKind k : kPriceKinds)
    if (price_kind_name(k) == s) return k;
  return std::nullopt;
}

Offer read_offer(const Stmt& s) {
  Offer o;
  o.id = s.text(0);
  o.provider = s.text(1);
  o.instance_type = s.text(2);
  o.region = s.text(3);
  o.zone = s.text(4);
  o.gpu_name_raw = s.text(5);
  o.gpu_name = s.opt_text(6);
  o.gpu_count = static_cast<int>(s.integer(7));
  o.gpu_memory_bytes = s.opt_real(8);
  o.vcpus = s.opt_real(9);
  o.ram_bytes = s.opt_real(10);
  o.local_disk_bytes = s.opt_real(11);
  o.intra_node_link = parse_link(s.text(12));
  o.intra_node_link_bytes_per_s = s.opt_real(13);
  o.form_factor = s.text(14);
  o.inter_node_network = parse_network(s.text(15));
  o.inter_node_bits_per_s = s.opt_real(16);
  if (!s.is_null(17)) o.max_nodes = static_cast<int>(s.integer(17));
  o.confirmed_available_at = s.opt_text(18);
  o.billing_override.granularity_seconds = s.opt_real(19);
  o.billing_override.minimum_billed_seconds = s.opt_real(20);
  o.billing_override.storage_usd_per_gb_month = s.opt_real(21);
  o.billing_override.egress_usd_per_gb = s.opt_real(22);
  o.billing_override.egress_free_gb_per_month = s.opt_real(23);
  o.billing_override.preemptions_per_day = s.opt_real(24);
  if (!s.is_null(26)) o.min_nodes = static_cast<int>(s.integer(26));
  try {
    o.billing_override.sources = nlohmann::json::parse(s.text(25)).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception&) {
    throw Error(ErrorKind::conflict, "offer " + o.id, "corrupt store: billing_sources_json is not a list of strings",
                "a gpuplan offer database written by gpuplan");
  }
  return o;
}

void sqlite_norm(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (argc != 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  const unsigned char* p = sqlite3_value_text(argv[0]);
  const int n = sqlite3_value_bytes(argv[0]);
  const std::string out = norm_gpu_name(std::string_view(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)));
  sqlite3_result_text(ctx, out.data(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
}

std::string sort_sql(std::string_view sort) {
  if (sort == kSortBandwidth)
    return "(SELECT s.memory_bandwidth_bytes_per_s FROM gpuplan_specs s WHERE s.name = o.gpu_name)";
  if (sort == kSortPrice) return "lp.usd_per_hour";
  if (sort == kSortPricePerVramGb)  // per GPU: the offer's memory, else its GPU model's (store.cpp)
    return "(lp.usd_per_hour / NULLIF(o.gpu_count * COALESCE(o.gpu_memory_bytes, (SELECT s.memory_bytes FROM gpuplan_specs s "
           "WHERE s.name = o.gpu_name)) / 1e9, 0))";
  return "lp.usd_per_gpu_hour";  // usd_per_hour / NULLIF(gpu_count, 0), kept by kRefreshLatestSql
}

/// The sort key as a column of latest_prices (indexed with the kind and the id), or nullptr for
/// the sorts computed per row (bandwidth from the GPU spec, price per VRAM GB).
const char* indexed_sort_column(std::string_view sort) {
  if (sort == kSortPrice) return "lp.usd_per_hour";
  if (sort == kSortPricePerGpuHour) return "lp.usd_per_gpu_hour";
  return nullptr;
}

/// The latest observation of the query's kind per offer (all NULL without one), under the names
/// the filter's SQL reads (filter_sql.hpp): one primary-key probe of latest_prices per offer.
constexpr const char* kLatestPriceJoin = " LEFT JOIN latest_prices lp ON lp.offer_id = o.id AND lp.kind = ?1 ";

/// Recomputes latest_prices for one offer and kind from its observations (Offer::latest_price's
/// rule: unknown dates oldest, then the newest date, ties to the latest inserted). Run in the
/// import's transaction after the offer's observations are written; reads only that offer's
/// rows of that kind (the observations_identity index).
constexpr const char* kRefreshLatestSql =
    "INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, gpu_name, "
    "gpu_norm, provider, locator, gpu_count, plan_class, last_seen_at) SELECT x.offer_id, x.kind, x.seq, x.usd_per_hour, "
    "x.usd_per_hour / NULLIF(o.gpu_count, 0), x.observed_at, x.dataset, o.gpu_name, gpuplan_norm(o.gpu_name_raw), "
    "lower(o.provider), x.locator, o.gpu_count, ?3, x.observed_at FROM observations x "
    "JOIN offers o "
    "ON o.id = x.offer_id WHERE x.offer_id = ?1 AND x.kind = ?2 "
    "ORDER BY (x.observed_at IS NULL), x.observed_at DESC, x.seq DESC LIMIT 1 "
    "ON CONFLICT (offer_id, kind) DO UPDATE SET seq = excluded.seq, usd_per_hour = excluded.usd_per_hour, "
    "usd_per_gpu_hour = excluded.usd_per_gpu_hour, observed_at = excluded.observed_at, dataset = excluded.dataset, "
    "gpu_name = excluded.gpu_name, gpu_norm = excluded.gpu_norm, provider = excluded.provider, locator = excluded.locator, "
    "gpu_count = excluded.gpu_count, plan_class = excluded.plan_class, "
    "last_seen_at = CASE WHEN seq = excluded.seq THEN last_seen_at ELSE excluded.last_seen_at END "
    "WHERE seq <> excluded.seq OR usd_per_gpu_hour IS NOT excluded.usd_per_gpu_hour "
    "OR gpu_name IS NOT excluded.gpu_name OR gpu_norm <> excluded.gpu_norm OR provider IS NOT excluded.provider "
    "OR gpu_count <> excluded.gpu_count OR plan_class IS NOT excluded.plan_class";

/// Migration 6's data: latest_prices.plan_class of every stored offer (plan_class_of over its
/// facts and flags), in the migration's transaction.
void backfill_plan_class(sqlite3* db, const std::string& path) {
  Stmt offers(db, std::string("SELECT ") + kOfferColumnsV6 + " FROM offers o ORDER BY o.id", path);
  Stmt flags(db, "SELECT offer_id, rule, detail, excludes FROM flags ORDER BY offer_id, position", path);
  Stmt update(db, "UPDATE latest_prices SET plan_class = ?1 WHERE offer_id = ?2", path);
  bool flag_row = flags.step();
  while (offers.step()) {
    Offer o = read_offer(offers);
    while (flag_row && flags.text(0) < o.id) flag_row = flags.step();
    while (flag_row && flags.text(0) == o.id) {
      o.flags.push_back(QualityFlag{flags.text(1), flags.text(2), flags.integer(3) != 0});
      flag_row = flags.step();
    }
    update.bind_int(1, plan_class_of(o));
    update.bind(2, std::string_view(o.id));
    update.run();
    update.reset();
  }
}

/// Runs migration `i` (user_version i → i + 1) and its data step, if any.
void apply_migration(sqlite3* db, int i, const std::string& path) {
  exec(db, migrations()[static_cast<std::size_t>(i)], path);
  if (i == 5) backfill_plan_class(db, path);
}

}  // namespace

/// A 64-bit digest (FNV-1a) of everything same_offer_facts compares, for a streamed import's
/// count of an offer spread over several chunks (ImportState::Written): equal facts give equal
/// digests; unequal facts the same one with probability ~2^-64 (then counted unchanged).
static std::uint64_t facts_digest(const Offer& o) {
  std::uint64_t h = 14695981039346656037ULL;
  auto bytes = [&](const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ULL;
  };
  auto text = [&](std::string_view t) {
    const std::size_t n = t.size();
    bytes(&n, sizeof n);
    bytes(t.data(), n);
  };
  auto num = [&](std::optional<double> v) {
    const unsigned char has = v.has_value() ? 1 : 0;
    bytes(&has, 1);
    const double d = v && *v != 0 ? *v : 0.0;  // -0.0 == 0.0 for same_offer_facts
    bytes(&d, sizeof d);
  };
  auto opt_text = [&](const std::optional<std::string>& t) {
    num(t ? std::optional<double>(1) : std::nullopt);
    if (t) text(*t);
  };
  text(o.id);
  text(o.provider);
  text(o.instance_type);
  text(o.region);
  text(o.zone);
  text(o.gpu_name_raw);
  opt_text(o.gpu_name);
  num(o.gpu_count);
  num(o.gpu_memory_bytes);
  num(o.vcpus);
  num(o.ram_bytes);
  num(o.local_disk_bytes);
  num(static_cast<double>(o.intra_node_link));
  num(o.intra_node_link_bytes_per_s);
  text(o.form_factor);
  num(static_cast<double>(o.inter_node_network));
  num(o.inter_node_bits_per_s);
  num(o.max_nodes ? std::optional<double>(*o.max_nodes) : std::nullopt);
  num(o.min_nodes ? std::optional<double>(*o.min_nodes) : std::nullopt);
  opt_text(o.confirmed_available_at);
  const BillingTerms& b = o.billing_override;
  num(b.granularity_seconds);
  num(b.minimum_billed_seconds);
  num(b.storage_usd_per_gb_month);
  num(b.egress_usd_per_gb);
  num(b.egress_free_gb_per_month);
  num(b.preemptions_per_day);
  num(static_cast<double>(b.sources.size()));
  for (const std::string& src : b.sources) text(src);
  num(static_cast<double>(o.flags.size()));
  for (const QualityFlag& f : o.flags) {
    text(f.rule);
    text(f.detail);
    num(f.excludes ? 1 : 0);
  }
  return h;
}

/// SQLite header field "application_id" of a gpuplan store: "GPUP" in ASCII.
constexpr int kApplicationId = 0x47505550;

struct SqliteOfferStore::Impl {
  std::mutex mu;  ///< one call at a time on the connection (the store is shared by server threads)
  sqlite3* db = nullptr;
  std::string path;
  const GpuCatalog* gpus = nullptr;
  std::size_t bounded_scan_max_rows = kBoundedReadScanMaxRows;

  /// True when latest_prices holds at most `n` rows (reads at most n + 1 index entries).
  bool latest_rows_at_most(std::size_t n) {
    Stmt s(db, "SELECT count(*) FROM (SELECT 1 FROM latest_prices LIMIT ?1)", path);
    s.bind_int(1, static_cast<std::int64_t>(n) + 1);
    s.step();
    return static_cast<std::size_t>(s.integer(0)) <= n;
  }

  ~Impl() {
    if (db) sqlite3_close_v2(db);
  }

  void begin_immediate() { exec(db, "BEGIN IMMEDIATE", path); }
  void commit() { exec(db, "COMMIT", path); }
  void rollback() noexcept { sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr); }

  template <typename F>
  auto in_transaction(F&& f) {
    begin_immediate();
    try {
      auto r = f();
      commit();
      return r;
    } catch (...) {
      rollback();
      throw;
    }
  }

  int user_version() {
    Stmt s(db, "PRAGMA user_version", path);
    s.step();
    return static_cast<int>(s.integer(0));
  }

  int application_id() {
    Stmt s(db, "PRAGMA application_id", path);
    s.step();
    return static_cast<int>(s.integer(0));
  }

  /// Refuses a database that is not a gpuplan store before anything is written to it (issue
  /// 11: `--db` on an unrelated SQLite file added gpuplan's tables to it). Accepted: our
  /// application_id; an empty database; a store of an older gpuplan (application_id 0, a
  /// schema version, and the tables offers, observations, flags and meta).
  void check_is_gpuplan_store() {
    const int app = application_id();
    if (app == kApplicationId) return;
    std::vector<std::string> names;
    {
      Stmt s(db, "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name", path);
      while (s.step()) names.push_back(s.text(0));
    }
    const int version = user_version();
    if (app == 0 && names.empty() && version == 0) return;  // new or empty
    auto has = [&](std::string_view n) { return std::find(names.begin(), names.end(), n) != names.end(); };
    if (app == 0 && version >= 1 && has("offers") && has("observations") && has("flags") && has("meta")) return;
    throw Error(ErrorKind::conflict, path,
                app != 0 ? fmt::format("not a gpuplan store (SQLite application_id {:#x}, gpuplan's is {:#x})", app,
                                       kApplicationId)
                         : names.empty()
                             ? fmt::format("not a gpuplan store (no tables, but SQLite user_version {} set by another program)", version)
                             : fmt::format("not a gpuplan store ({} tables or indexes that are not gpuplan's schema)", names.size()),
                "a gpuplan offer database, or the path of a new file (nothing was written)");
  }

  void migrate() {
    const int known = static_cast<int>(migrations().size());
    auto too_new = [&](int v) {
      throw Error(ErrorKind::conflict, path,
                  fmt::format("database schema version {} is newer than this gpuplan knows ({})", v, known),
                  "a newer gpuplan, or a different --db");
    };
    int v = user_version();
    if (v > known) too_new(v);
    if (v == known && application_id() == kApplicationId) return;
    in_transaction([&] {
      int cur = user_version();  // re-read under the write lock: another process may have migrated
      if (cur > known) too_new(cur);
      for (int i = cur; i < known; ++i) apply_migration(db, i, path);
      // PRAGMA takes no bound parameters; `known` and the id are constants of this binary.
      exec(db, fmt::format("PRAGMA user_version = {}", known).c_str(), path);
      exec(db, fmt::format("PRAGMA application_id = {}", kApplicationId).c_str(), path);
      return 0;
    });
  }

  void load_specs() {
    exec(db,
         "CREATE TEMP TABLE IF NOT EXISTS gpuplan_specs (name TEXT PRIMARY KEY, memory_bandwidth_bytes_per_s REAL, "
         "memtype TEXT, memory_bytes REAL); DELETE FROM temp.gpuplan_specs;",
         path);
    Stmt ins(db, "INSERT OR REPLACE INTO temp.gpuplan_specs VALUES (?, ?, ?, ?)", path);
    for (const GpuSpec& s : gpus->gpus()) {
      ins.bind(1, std::string_view(s.name));
      if (s.memory_bandwidth_bytes_per_s > 0)
        ins.bind(2, s.memory_bandwidth_bytes_per_s);
      else
        ins.bind_null(2);
      ins.bind(3, std::string_view(memory_family(s)));
      ins.bind(4, s.memory_bytes);
      ins.run();
      ins.reset();
    }
  }

  static constexpr const char* kObservationsSql =
      "SELECT x.kind, x.usd_per_hour, x.observed_at, x.dataset, x.locator, l.last_seen_at FROM observations x "
      "LEFT JOIN latest_prices l ON l.offer_id = x.offer_id AND l.kind = x.kind AND l.seq = x.seq "
      "WHERE x.offer_id = ? ORDER BY (x.observed_at IS NOT NULL), x.observed_at, x.seq";
  static constexpr const char* kFlagsSql = "SELECT rule, detail, excludes FROM flags WHERE offer_id = ? ORDER BY position";

  /// One observation from the columns kind, usd_per_hour, observed_at, dataset, locator,
  /// starting at column `first` of the current row.
  PriceObservation read_observation(Stmt& s, int first, const std::string& offer_id) const {
    PriceObservation p;
    p.offer_id = offer_id;
    auto kind = parse_kind(s.text(first));
    if (!kind)
      throw Error(ErrorKind::conflict, path, "corrupt store: unknown price kind \"" + s.text(first) + "\"",
                  "a gpuplan offer database written by gpuplan");
    p.kind = *kind;
    p.usd_per_hour = s.real(first + 1);
    p.source.observed_at = s.opt_text(first + 2);
    p.source.dataset = s.text(first + 3);
    p.source.locator = s.text(first + 4);
    p.last_seen_at = s.opt_text(first + 5);
    return p;
  }

  /// Every observation of one offer (kObservationsSql order).
  void load_observations(Offer& o) {
    Stmt s(db, kObservationsSql, path);
    s.bind(1, std::string_view(o.id));
    while (s.step()) o.prices.push_back(read_observation(s, 0, o.id));
  }

  /// Flags and observations (the latest of each kind, or all) of many offers in one statement
  /// each: the ids go in as one JSON array (json_each), rows come back ordered by offer and, per
  /// offer, as kFlagsSql / kObservationsSql order them. (One statement per offer and table made
  /// the planner's read of the bundled catalog 53 M of its 184 M instructions: issue 7.)
  void load_details(std::vector<Offer>& offers, bool all_observations) {
    if (offers.empty()) return;
    std::unordered_map<std::string_view, Offer*> by_id;
    by_id.reserve(offers.size());
    nlohmann::json ids = nlohmann::json::array();
    for (Offer& o : offers) {
      by_id.emplace(o.id, &o);
      ids.push_back(o.id);
    }
    const std::string arr = ids.dump();
    Stmt f(db,
           "SELECT offer_id, rule, detail, excludes FROM flags WHERE offer_id IN (SELECT value FROM json_each(?1)) "
           "ORDER BY offer_id, position",
           path);
    f.bind(1, std::string_view(arr));
    while (f.step()) {
      auto it = by_id.find(f.text(0));
      if (it != by_id.end()) it->second->flags.push_back(QualityFlag{f.text(1), f.text(2), f.integer(3) != 0});
    }
    Stmt s(db,
           std::string(all_observations
                           ? "SELECT x.offer_id, x.kind, x.usd_per_hour, x.observed_at, x.dataset, x.locator, "
                             "l.last_seen_at FROM observations x LEFT JOIN latest_prices l ON l.offer_id = x.offer_id "
                             "AND l.kind = x.kind AND l.seq = x.seq"
                           : "SELECT x.offer_id, x.kind, x.usd_per_hour, x.observed_at, x.dataset, x.locator, "
                             "x.last_seen_at FROM latest_prices x") +
               " WHERE x.offer_id IN (SELECT value FROM json_each(?1)) "
               "ORDER BY x.offer_id, (x.observed_at IS NOT NULL), x.observed_at, x.seq",
           path);
    s.bind(1, std::string_view(arr));
    while (s.step()) {
      auto it = by_id.find(s.text(0));
      if (it != by_id.end()) it->second->prices.push_back(read_observation(s, 1, it->second->id));
    }
  }

  void load_flags(Offer& o, Stmt& s) {
    s.reset();
    s.bind(1, std::string_view(o.id));
    while (s.step()) o.flags.push_back(QualityFlag{s.text(0), s.text(1), s.integer(2) != 0});
  }
  void load_flags(Offer& o) {
    Stmt s(db, kFlagsSql, path);
    load_flags(o, s);
  }

  /// The two statements load_facts runs, prepared once per import (re-preparing them per offer
  /// made a 200,000-row import spend most of its time in SQLite's parser: issue 11).
  struct FactsStatements {
    Stmt offer;
    Stmt flags;
    FactsStatements(sqlite3* db, const std::string& path)
        : offer(db, std::string("SELECT ") + kOfferColumns + " FROM offers o WHERE o.id = ?", path),
          flags(db, kFlagsSql, path) {}
  };

  std::optional<Offer> load_facts(std::string_view id, FactsStatements& st) {
    st.offer.reset();
    st.offer.bind(1, id);
    if (!st.offer.step()) return std::nullopt;
    Offer o = read_offer(st.offer);
    st.offer.reset();
    load_flags(o, st.flags);
    st.flags.reset();
    return o;
  }
  std::optional<Offer> load_facts(std::string_view id) {
    FactsStatements st(db, path);
    return load_facts(id, st);
  }

  /// OfferQuery::cheapest_per_plan_class (issue 12), in the caller's read transaction. Per price
  /// kind, one statement lists the classes by a skip scan of latest_prices_by_class_date (one
  /// seek per class), each with its oldest and newest price dates (does it hold clean-dated and
  /// other prices) and whether one of its offers passes the excluded flags, the memory floor and
  /// a filter on class facts (the same for every offer of the class); then per class kept at
  /// most two walks of latest_prices_by_class_price in price order, clean-dated and other, each
  /// stopped after K rows and the ties of the K-th, a filter on per-offer fields (price, id, ...)
  /// checked inside. Cost: classes × (K + rows the filter rejects), not offers.
  std::vector<Offer> bounded_query(const OfferQuery& q) {
    const std::size_t k = *q.cheapest_per_plan_class;
    const Filter filter = Filter::parse(q.filter);
    const FilterContext fctx = q.filter_context(gpus);
    const bool class_level = filter.reads_only_plan_class_facts();
    const CleanDateWindow win = clean_date_window(q.now_date, q.stale_after_days);
    // ?1 walked kind, ?2 query kind, ?3 include_excluded, ?4 has floor, ?5 multi-node, ?6 nodes
    // assumed, ?7 slack, ?8 cluster bytes (passes_memory_floor's arithmetic, in its order), ?9..
    // a filter on class facts.
    SqlWhere class_where;
    if (class_level && !filter.empty()) class_where = compile_filter_sql(filter, fctx, SqlDialect::sqlite, 9);
    Stmt classes(db,
                 "WITH RECURSIVE c(pc) AS (SELECT (SELECT plan_class FROM latest_prices WHERE kind = ?1 AND plan_class "
                 "IS NOT NULL ORDER BY plan_class LIMIT 1) UNION ALL SELECT (SELECT plan_class FROM latest_prices "
                 "WHERE kind = ?1 AND plan_class > c.pc ORDER BY plan_class LIMIT 1) FROM c WHERE c.pc IS NOT NULL) "
                 "SELECT pc, oldest, newest, EXISTS (SELECT 1 FROM offers o LEFT JOIN latest_prices lp ON lp.offer_id = "
                 "o.id AND lp.kind = ?2 WHERE o.id = rep AND (?3 OR NOT EXISTS (SELECT 1 FROM flags f WHERE f.offer_id = "
                 "o.id AND f.excludes = 1)) AND (NOT ?4 OR o.gpu_memory_bytes IS NULL OR o.gpu_count < 1 OR "
                 "o.gpu_memory_bytes * o.gpu_count * max(CASE WHEN ?5 AND o.inter_node_network <> 'unknown' THEN "
                 "coalesce(o.max_nodes, ?6) ELSE 1 END, 1.0) * ?7 >= ?8)" +
                     (class_where.sql.empty() ? std::string() : " AND (" + class_where.sql + ")") +
                     ") FROM (SELECT c.pc AS pc, (SELECT offer_id FROM latest_prices WHERE kind = ?1 AND plan_class = "
                     "c.pc LIMIT 1) AS rep, (SELECT last_seen_at FROM latest_prices WHERE kind = ?1 AND plan_class = "
                     "c.pc ORDER BY last_seen_at LIMIT 1) AS oldest, (SELECT last_seen_at FROM latest_prices WHERE "
                     "kind = ?1 AND plan_class = c.pc ORDER BY last_seen_at DESC LIMIT 1) AS newest FROM c WHERE c.pc IS "
                     "NOT NULL)",
                 path);
    SqlWhere where;
    if (!class_level) where = compile_filter_sql(filter, fctx, SqlDialect::sqlite, 6);
    const std::string from =
        std::string("SELECT w.offer_id, w.usd_per_hour FROM latest_prices w INDEXED BY latest_prices_by_class_price ") +
        (class_level ? std::string() : std::string("CROSS JOIN offers o ON o.id = w.offer_id") + kLatestPriceJoin) +
        "WHERE w.kind = ?2 AND w.plan_class = ?3 AND ";
    const std::string tail = (class_level ? std::string() : " AND (" + where.sql + ")") + " ORDER BY w.usd_per_hour";
    Stmt clean(db, from + "w.last_seen_at >= ?4 AND w.last_seen_at < ?5" + tail, path);
    Stmt other(db, from + "(w.last_seen_at IS NULL OR w.last_seen_at < ?4 OR w.last_seen_at >= ?5)" + tail, path);
    std::unordered_set<std::string> ids;
    auto walk = [&](Stmt& st, PriceKind kind, std::int64_t pc) {
      st.reset();
      st.bind(1, price_kind_name(q.price_kind));
      st.bind(2, price_kind_name(kind));
      st.bind_int(3, pc);
      st.bind(4, std::string_view(win.lo));
      st.bind(5, std::string_view(win.hi));
      int i = 6;
      for (const SqlValue& v : where.params) st.bind(i++, v);
      std::size_t n = 0;
      double kth = 0;
      while (st.step()) {
        const double price = st.real(1);
        if (n >= k && price != kth) break;  // the K cheapest, and the ties of the K-th
        if (++n == k) kth = price;
        ids.insert(st.text(0));
      }
      st.reset();
    };
    const OfferMemoryFloor floor = q.memory_floor.value_or(OfferMemoryFloor{});
    for (PriceKind kind : kPriceKinds) {
      struct Cls {
        std::int64_t pc = 0;
        std::optional<std::string> oldest, newest;  // oldest is nullopt when an undated price exists
      };
      std::vector<Cls> list;
      classes.reset();
      classes.bind(1, price_kind_name(kind));
      classes.bind(2, price_kind_name(q.price_kind));
      classes.bind_int(3, q.include_excluded ? 1 : 0);
      classes.bind_int(4, q.memory_floor ? 1 : 0);
      classes.bind_int(5, floor.multi_node ? 1 : 0);
      classes.bind_int(6, floor.max_nodes_assumed);
      classes.bind(7, floor.slack);
      classes.bind(8, floor.cluster_bytes);
      int i = 9;
      for (const SqlValue& v : class_where.params) classes.bind(i++, v);
      while (classes.step())
        if (classes.integer(3) != 0) list.push_back({classes.integer(0), classes.opt_text(1), classes.opt_text(2)});
      classes.reset();
      for (const Cls& c : list) {
        if (c.newest && *c.newest >= win.lo) walk(clean, kind, c.pc);
        if (!c.oldest || *c.oldest < win.lo || (c.newest && *c.newest >= win.hi)) walk(other, kind, c.pc);
      }
    }
    std::vector<Offer> out;
    if (ids.empty()) return out;
    const std::string arr = nlohmann::json(std::vector<std::string>(ids.begin(), ids.end())).dump();
    Stmt s(db, std::string("SELECT ") + kOfferColumns + " FROM offers o WHERE o.id IN (SELECT value FROM json_each(?1))",
           path);
    s.bind(1, std::string_view(arr));
    while (s.step()) out.push_back(read_offer(s));
    load_details(out, q.all_observations);
    sort_offers_like_query(out, q, gpus ? *gpus : GpuCatalog::bundled());
    return out;
  }

  /// What import_unlocked would report, by reads only.
  ImportResult preview_unlocked(const ImportBatch& batch) {
    ImportResult r;
    Stmt known(db,
               "SELECT 1 FROM observations WHERE offer_id = ? AND kind = ? AND usd_per_hour = ? "
               "AND IFNULL(observed_at, '') = ? AND dataset = ?",
               path);
    FactsStatements facts(db, path);
    for (const Offer& o : batch.offers) {
      std::optional<Offer> old = load_facts(o.id, facts);
      if (old) check_stored_hardware(*old, o);
      if (!old) {
        ++r.offers_added;
      } else {
        Offer filled = o;  // as write_chunk compares: facts the import does not state stay stored
        filled.prices.clear();
        keep_known_facts(filled, *old);
        if (same_offer_facts(*old, filled)) ++r.offers_unchanged;
        else ++r.offers_updated;
      }
      for (const PriceObservation& p : o.prices) {
        known.reset();
        known.bind(1, std::string_view(o.id));
        known.bind(2, price_kind_name(p.kind));
        known.bind(3, p.usd_per_hour);
        known.bind(4, std::string_view(p.source.observed_at ? *p.source.observed_at : std::string()));
        known.bind(5, std::string_view(p.source.dataset));
        if (known.step()) ++r.observations_already_known;
        else ++r.observations_added;
      }
    }
    return r;
  }

  /// Bulk loads (issue 11: 200,000 new rows "well under 5 s"): every new offer's latest price
  /// lands in latest_prices' secondary indexes (8, ordered by price, GPU and provider), i.e. at
  /// random B-tree positions, and those inserts were most of a large import's time. When the
  /// batch is large (>= kBulkIndexRebuildMinOffers offers) and at least as large as the table
  /// already is, the non-unique secondary indexes of latest_prices and observations are dropped
  /// inside the import's transaction and rebuilt from their stored definitions
  /// (sqlite_master.sql) after the rows are in: one sort each. Unique indexes stay (they decide
  /// INSERT OR IGNORE). DDL is transactional in SQLite: a failed or killed import rolls the drop
  /// back with everything else, and readers in WAL mode keep seeing the indexed old state.
  /// One chunk of a streamed import (ingest.hpp kIngestChunkRows): a file whose first chunk is
  /// full already brings that many offers, so the indexes go before its first row is written.
  static constexpr std::size_t kBulkIndexRebuildMinOffers = 16384;

  /// The statements of one import, prepared once for all its chunks (re-preparing per offer or
  /// per chunk costs SQLite's parser: issue 11). Every text bound is the batch's own (or a local
  /// that outlives the statement's run()).
  static constexpr const char* kInsertOfferSql =
      "INSERT INTO offers (id, provider, instance_type, region, zone, gpu_name_raw, gpu_name, gpu_count, "
      "gpu_memory_bytes, vcpus, ram_bytes, local_disk_bytes, intra_node_link, intra_node_link_bytes_per_s, "
      "form_factor, inter_node_network, inter_node_bits_per_s, max_nodes, confirmed_available_at, "
      "billing_granularity_seconds, billing_minimum_billed_seconds, billing_storage_usd_per_gb_month, "
      "billing_egress_usd_per_gb, billing_egress_free_gb_per_month, billing_preemptions_per_day, "
      "billing_sources_json, min_nodes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

  struct ImportStatements {
    Stmt upsert;
    /// The offer row of an id not stored yet, or nothing (changes() tells): a new offer is
    /// written without first probing for it (one index seek per row fewer: issue 11).
    Stmt insert_new;
    Stmt del_flags;
    Stmt ins_flag;
    Stmt ins_obs;
    Stmt refresh;
    /// A new offer's latest price per kind is known from the rows just inserted (the rule of
    /// kRefreshLatestSql applied here: undated oldest, then the newest date, ties to the higher
    /// seq), so it is written without reading observations back: bulk imports of new offers
    /// (issue 11: 200,000 rows) pay one insert, not a query, a sort and an upsert.
    Stmt ins_latest;
    /// The seq of an observation by its identity (streamed imports: was an ignored row known
    /// before this import, or written by an earlier chunk of it?).
    Stmt obs_seq;
    /// The first locator this import wrote for an offer (the earlier row of a hardware conflict).
    Stmt first_locator;
    FactsStatements facts;
    ImportStatements(sqlite3* db, const std::string& path)
        : upsert(db,
                 std::string(kInsertOfferSql) +
                     " ON CONFLICT(id) DO UPDATE SET provider=excluded.provider, instance_type=excluded.instance_type, "
                "region=excluded.region, zone=excluded.zone, gpu_name_raw=excluded.gpu_name_raw, "
                "gpu_name=excluded.gpu_name, gpu_count=excluded.gpu_count, "
                "gpu_memory_bytes=excluded.gpu_memory_bytes, vcpus=excluded.vcpus, ram_bytes=excluded.ram_bytes, "
                "local_disk_bytes=excluded.local_disk_bytes, intra_node_link=excluded.intra_node_link, "
                "intra_node_link_bytes_per_s=excluded.intra_node_link_bytes_per_s, "
                "form_factor=excluded.form_factor, inter_node_network=excluded.inter_node_network, "
                "inter_node_bits_per_s=excluded.inter_node_bits_per_s, max_nodes=excluded.max_nodes, "
                "confirmed_available_at=excluded.confirmed_available_at, "
                "billing_granularity_seconds=excluded.billing_granularity_seconds, "
                "billing_minimum_billed_seconds=excluded.billing_minimum_billed_seconds, "
                "billing_storage_usd_per_gb_month=excluded.billing_storage_usd_per_gb_month, "
                "billing_egress_usd_per_gb=excluded.billing_egress_usd_per_gb, "
                "billing_egress_free_gb_per_month=excluded.billing_egress_free_gb_per_month, "
                "billing_preemptions_per_day=excluded.billing_preemptions_per_day, "
                "billing_sources_json=excluded.billing_sources_json, min_nodes=excluded.min_nodes",
                 path),
          insert_new(db, std::string(kInsertOfferSql) + " ON CONFLICT(id) DO NOTHING", path),
          del_flags(db, "DELETE FROM flags WHERE offer_id = ?", path),
          ins_flag(db, "INSERT INTO flags (offer_id, position, rule, detail, excludes) VALUES (?, ?, ?, ?, ?)", path),
          ins_obs(db,
                  "INSERT OR IGNORE INTO observations (offer_id, kind, usd_per_hour, observed_at, dataset, locator) "
                  "VALUES (?, ?, ?, ?, ?, ?)",
                  path),
          refresh(db, kRefreshLatestSql, path),
          ins_latest(db,
                     "INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, "
                     "dataset, gpu_name, gpu_norm, provider, locator, gpu_count, plan_class, last_seen_at) VALUES (?, "
                     "?, ?, ?, ?, ?6, ?, ?, gpuplan_norm(?), lower(?), ?, ?, ?, ?6)",
                     path),
          obs_seq(db,
                  "SELECT seq FROM observations WHERE offer_id = ? AND kind = ? AND usd_per_hour = ? "
                  "AND IFNULL(observed_at, '') = ? AND dataset = ?",
                  path),
          first_locator(db, "SELECT locator FROM observations WHERE offer_id = ? AND seq > ? ORDER BY seq LIMIT 1",
                        path),
          facts(db, path) {
      upsert.borrow_text();
      insert_new.borrow_text();
      del_flags.borrow_text();
      ins_flag.borrow_text();
      ins_obs.borrow_text();
      refresh.borrow_text();
      ins_latest.borrow_text();
      obs_seq.borrow_text();
      first_locator.borrow_text();
    }
  };

  /// One import's state across its chunks (import(): one chunk; ImportWriter: many).
  struct ImportState {
    ImportResult result;
    /// Streamed imports: the ids this import wrote, so that an id in a later chunk is merged
    /// with what an earlier chunk wrote (and counted once). The compact per-id index that
    /// replaces holding the whole batch (issue 11): an id string per offer, no rows.
    bool streamed = false;
    /// How the import counted an id it wrote; for an id stored before the import, a digest of
    /// its stored facts, so that a later chunk's merge can tell unchanged from updated.
    struct Written {
      enum class Was : std::uint8_t { added, unchanged, updated } was = Was::added;
      std::uint64_t before_digest = 0;
    };
    std::unordered_map<std::string, Written> written;
    std::int64_t seq_before = 0;              ///< largest observation seq before the import
    std::size_t latest_rows_before = 0;       ///< rows of latest_prices before the import
    std::size_t offers_seen = 0;              ///< offers of the chunks written so far (with repeats)
    bool indexes_dropped = false;
    std::vector<std::string> rebuild;         ///< CREATE INDEX statements of dropped indexes
  };

  ImportState begin_import_state(bool streamed) {
    ImportState s;
    s.streamed = streamed;
    {
      Stmt count(db, "SELECT count(*) FROM latest_prices", path);
      count.step();
      s.latest_rows_before = static_cast<std::size_t>(count.integer(0));
    }
    if (streamed) {
      Stmt seq(db, "SELECT IFNULL(MAX(seq), 0) FROM observations", path);
      seq.step();
      s.seq_before = seq.integer(0);
    }
    return s;
  }

  /// Bulk loads (issue 11: 200,000 new rows "well under 5 s"): every new offer's latest price
  /// lands in latest_prices' secondary indexes (8, ordered by price, GPU and provider), i.e. at
  /// random B-tree positions, and those inserts were most of a large import's time. Once the
  /// import has written (or is about to write) >= kBulkIndexRebuildMinOffers offers and at least
  /// as many as latest_prices held before it, the non-unique secondary indexes of latest_prices
  /// and observations are dropped inside the import's transaction and rebuilt from their stored
  /// definitions (sqlite_master.sql) at the end: one sort each. A batch small next to the store
  /// keeps them (rebuilding 8 indexes of a large table would cost more than its inserts). Unique
  /// indexes stay (they decide INSERT OR IGNORE). DDL is transactional in SQLite: a failed or
  /// killed import rolls the drop back with everything else, and readers in WAL mode keep
  /// seeing the indexed old state.
  void maybe_drop_indexes(ImportState& s, std::size_t offers_after_chunk) {
    if (s.indexes_dropped || offers_after_chunk < kBulkIndexRebuildMinOffers) return;
    if (s.latest_rows_before > offers_after_chunk) return;
    s.indexes_dropped = true;
    std::vector<std::pair<std::string, std::string>> found;  // name, CREATE INDEX statement
    {
      Stmt q(db,
             "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('latest_prices', "
             "'observations') AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%' ORDER BY name",
             path);
      while (q.step()) found.emplace_back(q.text(0), q.text(1));
    }
    for (auto& [name, sql] : found) {
      std::string quoted = "\"";  // an identifier from our own schema, quoted as SQL says
      for (char c : name) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      exec(db, ("DROP INDEX " + quoted + "\"").c_str(), path);
      s.rebuild.push_back(std::move(sql));
    }
  }

  /// The end of an import, inside its transaction: dropped indexes rebuilt, revision raised.
  void finish_import(ImportState& s) {
    for (const std::string& sql : s.rebuild) exec(db, sql.c_str(), path);
    s.rebuild.clear();
    exec(db,
         "INSERT INTO meta (key, value) VALUES ('revision', '1') ON CONFLICT (key) DO UPDATE SET "
         "value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
         path);
  }

  ImportResult import_unlocked(const ImportBatch& batch) {
    ImportStatements st(db, path);
    ImportState s = begin_import_state(false);
    write_chunk(batch, st, s);
    finish_import(s);
    return s.result;
  }

  /// Writes the offer's row and flags. only_if_new: INSERT ... DO NOTHING for an id that may
  /// be stored; returns false (nothing written) when it was.
  bool upsert_facts(const Offer& o, bool had_flags, ImportStatements& st, bool only_if_new = false) {
    Stmt& upsert = only_if_new ? st.insert_new : st.upsert;
    int i = 0;
    auto b = [&](const auto& v) { upsert.bind(++i, v); };
    b(std::string_view(o.id));
    b(std::string_view(o.provider));
    b(std::string_view(o.instance_type));
    b(std::string_view(o.region));
    b(std::string_view(o.zone));
    b(std::string_view(o.gpu_name_raw));
    b(o.gpu_name);
    upsert.bind_int(++i, o.gpu_count);
    b(o.gpu_memory_bytes);
    b(o.vcpus);
    b(o.ram_bytes);
    b(o.local_disk_bytes);
    b(intra_node_link_name(o.intra_node_link));
    b(o.intra_node_link_bytes_per_s);
    b(std::string_view(o.form_factor));
    b(inter_node_network_name(o.inter_node_network));
    b(o.inter_node_bits_per_s);
    b(o.max_nodes);
    b(o.confirmed_available_at);
    const BillingTerms& bt = o.billing_override;
    b(bt.granularity_seconds);
    b(bt.minimum_billed_seconds);
    b(bt.storage_usd_per_gb_month);
    b(bt.egress_usd_per_gb);
    b(bt.egress_free_gb_per_month);
    b(bt.preemptions_per_day);
    const std::string sources_json = bt.sources.empty() ? std::string("[]") : nlohmann::json(bt.sources).dump();
    b(std::string_view(sources_json));
    b(o.min_nodes);
    upsert.run();
    upsert.reset();
    if (only_if_new && sqlite3_changes(db) == 0) return false;
    if (had_flags) {  // a new offer has no stored flags
      st.del_flags.bind(1, std::string_view(o.id));
      st.del_flags.run();
      st.del_flags.reset();
    }
    for (std::size_t k = 0; k < o.flags.size(); ++k) {
      const QualityFlag& f = o.flags[k];
      st.ins_flag.bind(1, std::string_view(o.id));
      st.ins_flag.bind_int(2, static_cast<std::int64_t>(k));
      st.ins_flag.bind(3, std::string_view(f.rule));
      st.ins_flag.bind(4, std::string_view(f.detail));
      st.ins_flag.bind_int(5, f.excludes ? 1 : 0);
      st.ins_flag.run();
      st.ins_flag.reset();
    }
    return true;
  }

  /// The seq of a stored observation with p's identity (0 when none).
  std::int64_t observation_seq(const std::string& offer_id, const PriceObservation& p, ImportStatements& st) {
    st.obs_seq.bind(1, std::string_view(offer_id));
    st.obs_seq.bind(2, price_kind_name(p.kind));
    st.obs_seq.bind(3, p.usd_per_hour);
    st.obs_seq.bind(4, std::string_view(p.source.observed_at ? *p.source.observed_at : std::string_view()));
    st.obs_seq.bind(5, std::string_view(p.source.dataset));
    const std::int64_t seq = st.obs_seq.step() ? st.obs_seq.integer(0) : 0;
    st.obs_seq.reset();
    return seq;
  }

  /// An offer whose id an earlier chunk of this (streamed) import wrote: merged with it as
  /// merge_batch merges two rows of one batch. The id is counted once (an offer stored before
  /// the import: unchanged or updated by the merged facts against the stored ones); an
  /// observation identical to one this import wrote is not counted again (one observation).
  void merge_into_written(const Offer& o, ImportState::Written& w, ImportStatements& st, ImportState& s) {
    std::optional<Offer> cur = load_facts(o.id, st.facts);
    if (!cur) throw Error(ErrorKind::internal, path, "offer " + o.id + " written by this import is missing");
    if (!import_detail::same_machine(*cur, o)) {
      Offer earlier = *cur;  // with the first row of this import, for the message's "at file:line"
      st.first_locator.bind(1, std::string_view(o.id));
      st.first_locator.bind_int(2, s.seq_before);
      if (st.first_locator.step())
        earlier.prices.push_back(PriceObservation{o.id, PriceKind::on_demand, 0, SourceRef{"", st.first_locator.text(0), {}}, std::nullopt});
      st.first_locator.reset();
      import_detail::check_same_hardware(earlier, o);
    }
    Offer merged = *cur;
    Offer incoming_facts = o;
    incoming_facts.prices.clear();
    import_detail::merge_offer_facts(merged, std::move(incoming_facts));
    std::array<bool, kPriceKindCount> refresh_kind{};
    if (!same_offer_facts(*cur, merged)) {
      upsert_facts(merged, true, st);
      refresh_kind.fill(true);
      if (w.was != ImportState::Written::Was::added) {
        using Was = ImportState::Written::Was;
        const Was now = facts_digest(merged) == w.before_digest ? Was::unchanged : Was::updated;
        if (now != w.was) {
          (w.was == Was::updated ? s.result.offers_updated : s.result.offers_unchanged) -= 1;
          (now == Was::updated ? s.result.offers_updated : s.result.offers_unchanged) += 1;
          w.was = now;
        }
      }
    }
    for (const PriceObservation& p : o.prices) {
      if (insert_observation(o.id, p, st)) {
        ++s.result.observations_added;
        refresh_kind[static_cast<std::size_t>(p.kind)] = true;
      } else if (observation_seq(o.id, p, st) <= s.seq_before) {
        ++s.result.observations_already_known;
      }
    }
    const std::int64_t cls = plan_class_of(merged);
    for (PriceKind k : kPriceKinds) {
      if (!refresh_kind[static_cast<std::size_t>(k)]) continue;
      st.refresh.bind(1, std::string_view(o.id));
      st.refresh.bind(2, price_kind_name(k));
      st.refresh.bind_int(3, cls);
      st.refresh.run();
      st.refresh.reset();
    }
  }

  /// INSERT OR IGNORE of one observation; true when it was new.
  bool insert_observation(const std::string& offer_id, const PriceObservation& p, ImportStatements& st) {
    st.ins_obs.bind(1, std::string_view(offer_id));
    st.ins_obs.bind(2, price_kind_name(p.kind));
    st.ins_obs.bind(3, p.usd_per_hour);
    st.ins_obs.bind(4, p.source.observed_at);
    st.ins_obs.bind(5, std::string_view(p.source.dataset));
    st.ins_obs.bind(6, std::string_view(p.source.locator));
    st.ins_obs.run();
    st.ins_obs.reset();
    return sqlite3_changes(db) > 0;
  }

  /// Writes one batch (the whole import, or one chunk of a streamed one).
  void write_chunk(const ImportBatch& batch, ImportStatements& st, ImportState& s) {
    s.offers_seen += batch.offers.size();
    maybe_drop_indexes(s, s.offers_seen);
    ImportResult& r = s.result;
    // Written in id order (byte order, as the text keys are compared): the offers' id index,
    // observations_identity (offer_id first) and latest_prices' (offer_id, kind) are then filled
    // left to right instead of at random B-tree pages (issue 11: a 200,000-row import). Within
    // an offer its observations keep their order (seq breaks ties between equal dates).
    std::vector<const Offer*> in_id_order;
    in_id_order.reserve(batch.offers.size());
    for (const Offer& o : batch.offers) in_id_order.push_back(&o);
    std::sort(in_id_order.begin(), in_id_order.end(), [](const Offer* a, const Offer* b) { return a->id < b->id; });
    for (const Offer* op : in_id_order) {
      ImportState::Written* w = nullptr;
      if (s.streamed) {
        auto [it, first] = s.written.try_emplace(op->id);
        if (!first) {
          merge_into_written(*op, it->second, st, s);
          continue;
        }
        w = &it->second;
      }
      // A new id is written at once; a stored one is read, checked and compared first.
      const bool is_new = upsert_facts(*op, false, st, /*only_if_new=*/true);
      std::optional<Offer> old;
      std::optional<Offer> filled;  // a stored offer's facts this import does not state stay stored
      if (!is_new) {
        old = load_facts(op->id, st.facts);
        if (!old) throw Error(ErrorKind::internal, path, "offer " + op->id + " is stored and missing");
        check_stored_hardware(*old, *op);
        filled = *op;
        keep_known_facts(*filled, *old);
      }
      const Offer& o = filled ? *filled : *op;
      const bool facts_changed = old && !same_offer_facts(*old, o);
      if (w != nullptr && old) {
        w->was = facts_changed ? ImportState::Written::Was::updated : ImportState::Written::Was::unchanged;
        w->before_digest = facts_digest(*old);
      }
      // Kinds whose latest price must be recomputed: those with a new observation, and every
      // kind when stored facts changed (the per-GPU price reads gpu_count).
      std::array<bool, kPriceKindCount> refresh_kind{};
      if (facts_changed) refresh_kind.fill(true);
      if (!old) {
        ++r.offers_added;
      } else if (!facts_changed) {
        ++r.offers_unchanged;
      } else {
        ++r.offers_updated;
      }
      if (facts_changed) upsert_facts(o, true, st);
      struct Newest {
        const PriceObservation* obs = nullptr;
        std::int64_t seq = 0;
      };
      std::array<Newest, kPriceKindCount> newest{};  // per kind, among the rows inserted now (new offers only)
      for (const PriceObservation& p : o.prices) {
        if (insert_observation(o.id, p, st)) {
          ++r.observations_added;
          refresh_kind[static_cast<std::size_t>(p.kind)] = true;
          Newest& n = newest[static_cast<std::size_t>(p.kind)];
          const std::int64_t seq = sqlite3_last_insert_rowid(db);
          const auto& d = p.source.observed_at;
          const bool newer = n.obs == nullptr || (d.has_value() && !n.obs->source.observed_at.has_value()) ||
                             (d.has_value() == n.obs->source.observed_at.has_value() &&
                              (!d.has_value() || *d >= *n.obs->source.observed_at));  // equal dates: higher seq
          if (newer) n = Newest{&p, seq};
        } else {
          ++r.observations_already_known;
        }
      }
      const std::int64_t cls = plan_class_of(o);
      for (PriceKind k : kPriceKinds) {
        if (!refresh_kind[static_cast<std::size_t>(k)]) continue;
        if (!old) {
          const Newest& n = newest[static_cast<std::size_t>(k)];
          Stmt& ins_latest = st.ins_latest;
          ins_latest.bind(1, std::string_view(o.id));
          ins_latest.bind(2, price_kind_name(k));
          ins_latest.bind_int(3, n.seq);
          ins_latest.bind(4, n.obs->usd_per_hour);
          if (o.gpu_count != 0) {
            ins_latest.bind(5, n.obs->usd_per_hour / static_cast<double>(o.gpu_count));
          } else {
            ins_latest.bind_null(5);
          }
          ins_latest.bind(6, n.obs->source.observed_at);
          ins_latest.bind(7, std::string_view(n.obs->source.dataset));
          ins_latest.bind(8, o.gpu_name);
          ins_latest.bind(9, std::string_view(o.gpu_name_raw));
          ins_latest.bind(10, std::string_view(o.provider));
          ins_latest.bind(11, std::string_view(n.obs->source.locator));
          ins_latest.bind_int(12, o.gpu_count);
          ins_latest.bind_int(13, cls);
          ins_latest.run();
          ins_latest.reset();
          continue;
        }
        st.refresh.bind(1, std::string_view(o.id));
        st.refresh.bind(2, price_kind_name(k));
        st.refresh.bind_int(3, cls);
        st.refresh.run();
        st.refresh.reset();
      }
    }
  }

  class Writer;

  static constexpr const char* kSnapshotColumns =
      "id, source, url, urls_json, fetched_at, content_hash, parser_version, status, rows_read, offers, "
      "observations_added, detail";

  static SnapshotRecord read_snapshot(const Stmt& s) {
    SnapshotRecord r;
    r.id = s.integer(0);
    r.source = s.text(1);
    r.url = s.text(2);
    r.urls = nlohmann::json::parse(s.text(3)).get<std::vector<std::string>>();
    r.fetched_at = s.text(4);
    r.content_hash = s.text(5);
    r.parser_version = static_cast<int>(s.integer(6));
    r.status = s.text(7);
    r.rows_read = static_cast<std::size_t>(s.integer(8));
    r.offers = static_cast<std::size_t>(s.integer(9));
    r.observations_added = static_cast<std::size_t>(s.integer(10));
    r.detail = s.text(11);
    return r;
  }

  /// True when the newest accepted snapshot of `source` (by fetched_at, then id) has `hash`.
  /// A snapshot's prices seen again (ImportBatch::seen_again) and, when its batch is not imported
  /// (`confirm_offers`: an unchanged snapshot), the availability its offers still report, in the
  /// caller's transaction (docs/fetch.md "Seen again"). A latest price changes only while it is
  /// still that price from that dataset and was last seen earlier; confirmed_available_at only
  /// when already set and earlier. Raises the revision when anything changed.
  void apply_seen_again(const ImportBatch& batch, bool confirm_offers) {
    std::size_t changed = 0;
    Stmt seen(db,
              "UPDATE latest_prices SET last_seen_at = ?5 WHERE offer_id = ?1 AND kind = ?2 AND usd_per_hour = ?3 "
              "AND dataset = ?4 AND last_seen_at IS NOT NULL AND last_seen_at < ?5",
              path);
    for (const PriceSeenAgain& a : batch.seen_again) {
      seen.reset();
      seen.bind(1, std::string_view(a.offer_id));
      seen.bind(2, price_kind_name(a.kind));
      seen.bind(3, a.usd_per_hour);
      seen.bind(4, std::string_view(a.dataset));
      seen.bind(5, std::string_view(a.seen_at));
      seen.run();
      changed += static_cast<std::size_t>(sqlite3_changes(db));
    }
    if (confirm_offers) {
      Stmt confirm(db,
                   "UPDATE offers SET confirmed_available_at = ?2 WHERE id = ?1 AND confirmed_available_at IS NOT NULL "
                   "AND confirmed_available_at < ?2",
                   path);
      for (const Offer& o : batch.offers) {
        if (!o.confirmed_available_at) continue;
        confirm.reset();
        confirm.bind(1, std::string_view(o.id));
        confirm.bind(2, std::string_view(*o.confirmed_available_at));
        confirm.run();
        changed += static_cast<std::size_t>(sqlite3_changes(db));
      }
    }
    if (changed > 0)
      exec(db,
           "INSERT INTO meta (key, value) VALUES ('revision', '1') ON CONFLICT (key) DO UPDATE SET "
           "value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
           path);
  }

  /// Whether the source's last accepted snapshot has this content read by this parser version (a
  /// newer parser re-reads the same content: it is not "unchanged").
  bool last_accepted_has(std::string_view source, std::string_view hash, std::int64_t parser_version) {
    Stmt s(db,
           "SELECT content_hash, parser_version FROM snapshots WHERE source = ? AND status = 'accepted' "
           "ORDER BY fetched_at DESC, id DESC LIMIT 1",
           path);
    s.bind(1, source);
    return s.step() && s.text(0) == hash && s.integer(1) == parser_version;
  }

  std::int64_t insert_snapshot(const SnapshotRecord& r) {
    Stmt s(db,
           "INSERT INTO snapshots (source, url, urls_json, fetched_at, content_hash, parser_version, status, "
           "rows_read, offers, observations_added, detail) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
           path);
    const std::string urls = nlohmann::json(r.urls).dump();
    s.bind(1, std::string_view(r.source));
    s.bind(2, std::string_view(r.url));
    s.bind(3, std::string_view(urls));
    s.bind(4, std::string_view(r.fetched_at));
    s.bind(5, std::string_view(r.content_hash));
    s.bind_int(6, r.parser_version);
    s.bind(7, std::string_view(r.status));
    s.bind_int(8, static_cast<std::int64_t>(r.rows_read));
    s.bind_int(9, static_cast<std::int64_t>(r.offers));
    s.bind_int(10, static_cast<std::int64_t>(r.observations_added));
    s.bind(11, std::string_view(r.detail));
    s.run();
    return sqlite3_last_insert_rowid(db);
  }
};

int sqlite_store_schema_version() noexcept { return static_cast<int>(migrations().size()); }

void sqlite_store_migrate(const std::string& path, int target_version) {
  const int known = static_cast<int>(migrations().size());
  if (target_version < 0 || target_version > known)
    throw Error(ErrorKind::invalid_input, "target_version", fmt::format("{} is not a schema version", target_version),
                fmt::format("0..{}", known));
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> owned(db, sqlite3_close_v2);
  if (rc != SQLITE_OK) throw_sqlite(db, rc, path);
  rc = sqlite3_create_function_v2(db, "gpuplan_norm", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, sqlite_norm,
                                  nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) throw_sqlite(db, rc, path);
  exec(db, "BEGIN IMMEDIATE", path);
  try {
    Stmt v(db, "PRAGMA user_version", path);
    v.step();
    const int cur = static_cast<int>(v.integer(0));
    v.reset();
    if (cur > target_version)
      throw Error(ErrorKind::conflict, path, fmt::format("schema version {} is past {}", cur, target_version),
                  "an older store");
    for (int i = cur; i < target_version; ++i) apply_migration(db, i, path);
    exec(db, fmt::format("PRAGMA user_version = {}", target_version).c_str(), path);
    exec(db, fmt::format("PRAGMA application_id = {}", kApplicationId).c_str(), path);
    exec(db, "COMMIT", path);
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

namespace {

/// SQLite's memory statistics off (SQLITE_CONFIG_MEMSTATUS 0), once per process, before its first
/// connection: with them on, every sqlite3_malloc and sqlite3_free takes a global mutex to count
/// bytes, about 4 % of the instructions of a large import's writer thread (issue 11; callgrind on
/// bench/import_rows.sh's first 20,000 rows: 2.05 G to 1.96 G). gpuplan reads none of them
/// (sqlite3_memory_used, heap limits). sqlite3_config works only before SQLite is initialised:
/// this runs before every sqlite3_open_v2 of this file, which is gpuplan's only one, so it is
/// the first SQLite call of the process; were SQLite initialised already, SQLITE_MISUSE leaves
/// the statistics on and nothing else changes.
void sqlite_memory_statistics_off() {
  static std::once_flag once;
  std::call_once(once, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace

SqliteOfferStore::SqliteOfferStore(const std::string& path, const GpuCatalog* gpus, int busy_timeout_ms)
    : impl_(std::make_unique<Impl>()) {
  sqlite_memory_statistics_off();
  impl_->path = path;
  impl_->gpus = gpus ? gpus : &GpuCatalog::bundled();
  int rc = sqlite3_open_v2(path.c_str(), &impl_->db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,  // calls are serialised by Impl::mu
                           nullptr);
  if (rc != SQLITE_OK) throw_sqlite(impl_->db, rc, path);
  sqlite3_busy_timeout(impl_->db, busy_timeout_ms);
  sqlite3* db = impl_->db;
  impl_->check_is_gpuplan_store();  // before anything (even the WAL switch) writes to the file
  {
    Stmt s(db, "PRAGMA journal_mode = WAL", path);  // returns the mode; ":memory:" stays "memory"
    s.step();
  }
  exec(db, "PRAGMA foreign_keys = ON", path);
  exec(db, "PRAGMA cache_size = -65536", path);
  rc = sqlite3_create_function_v2(db, "gpuplan_norm", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, sqlite_norm,
                                  nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) throw_sqlite(db, rc, path);
  impl_->migrate();
  impl_->load_specs();
}

SqliteOfferStore::~SqliteOfferStore() = default;

int SqliteOfferStore::schema_version() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->user_version();
}



ImportResult SqliteOfferStore::import(const ImportBatch& batch) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  validate_batch(batch);
  return impl_->in_transaction([&] { return impl_->import_unlocked(batch); });
}

/// The streamed import of SqliteOfferStore: one BEGIN IMMEDIATE transaction held (with the
/// store's mutex) from begin_import() to commit() or destruction (rollback).
class SqliteOfferStore::Impl::Writer final : public ImportWriter {
 public:
  explicit Writer(Impl& impl) : impl_(impl), lock_(impl.mu) {
    impl_.begin_immediate();
    open_ = true;
    try {
      st_ = std::make_unique<ImportStatements>(impl_.db, impl_.path);
      state_ = impl_.begin_import_state(true);
    } catch (...) {
      st_.reset();
      impl_.rollback();
      open_ = false;
      throw;
    }
  }
  ~Writer() override {
    if (!open_) return;
    st_.reset();  // statements finalized before the rollback
    impl_.rollback();
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void write(const ImportBatch& chunk) override {
    if (!open_) throw Error(ErrorKind::internal, impl_.path, "import already committed or failed");
    validate_batch(chunk);
    impl_.write_chunk(chunk, *st_, state_);
  }
  ImportResult commit() override {
    if (!open_) throw Error(ErrorKind::internal, impl_.path, "import already committed or failed");
    impl_.finish_import(state_);
    st_.reset();
    impl_.commit();
    open_ = false;
    return state_.result;
  }
  std::size_t offers_written() const override { return state_.written.size(); }

 private:
  Impl& impl_;
  std::unique_lock<std::mutex> lock_;
  bool open_ = false;
  std::unique_ptr<ImportStatements> st_;
  ImportState state_;
};

std::unique_ptr<ImportWriter> SqliteOfferStore::begin_import() { return std::make_unique<Impl::Writer>(*impl_); }

ImportResult SqliteOfferStore::preview_import(const ImportBatch& batch) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  validate_batch(batch);
  // Reads only, in one deferred (read) transaction: in WAL mode it never waits for a writer's
  // lock, so `import --dry-run` answers while another import runs (issue 11).
  exec(impl_->db, "BEGIN", impl_->path);
  try {
    ImportResult r = impl_->preview_unlocked(batch);
    exec(impl_->db, "COMMIT", impl_->path);
    return r;
  } catch (...) {
    impl_->rollback();
    throw;
  }
}

bool SqliteOfferStore::seed_if_new(std::string_view seed_key, const std::function<ImportBatch()>& make_batch) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto seeded = [&] {  // the mark names this seed_key
    Stmt s(impl_->db, "SELECT 1 FROM meta WHERE key = ? AND value = ?", impl_->path);
    s.bind(1, std::string_view("seeded"));
    s.bind(2, seed_key);
    return s.step();
  };
  if (seeded()) return false;
  ImportBatch batch = make_batch();  // parse outside the write lock
  validate_batch(batch);
  return impl_->in_transaction([&] {
    if (seeded()) return false;
    impl_->import_unlocked(batch);
    Stmt s(impl_->db, "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
           impl_->path);
    s.bind(1, std::string_view("seeded"));
    s.bind(2, seed_key);
    s.run();
    return true;
  });
}

namespace {

/// The statements query() runs, in order. Each binds ?1 the price kind, ?2 include_excluded,
/// ?3.. the filter's values, then its `extra` values, then the limit (what is left of it; -1 =
/// none) as the last number.
struct QueryStatement {
  std::string sql;
  std::vector<SqlValue> extra;
  SqlWhere where;  ///< the filter's clause and values as this statement compiled them
};
struct QuerySql {
  std::vector<QueryStatement> statements;
};

/// The evidence tier (catalog/freshness.hpp price_evidence_tier) of the joined latest price `lp`
/// (NULL when the offer has none of the kind: undated) as an SQL expression; its values are bound
/// from ?n on and appended to `extra`.
std::string evidence_tier_sql(const OfferQuery& q, int& n, std::vector<SqlValue>& extra) {
  std::string rules;
  for (std::string_view r : price_questioning_rules()) {
    rules += (rules.empty() ? "?" : ", ?") + std::to_string(n++);
    extra.emplace_back(std::string(r));
  }
  std::string s = "(CASE WHEN EXISTS (SELECT 1 FROM flags f WHERE f.offer_id = o.id AND f.excludes = 0 AND f.rule IN (" +
                  rules + ")) THEN 3 WHEN lp.last_seen_at IS NULL THEN 2";
  if (const auto cutoff = earliest_unstale_date(q.now_date, q.stale_after_days)) {
    s += fmt::format(" WHEN substr(lp.last_seen_at, 1, 10) > ?{} THEN 2", n++);
    extra.emplace_back(q.now_date.substr(0, 10));
    s += fmt::format(" WHEN substr(lp.last_seen_at, 1, 10) < ?{} THEN 1", n++);
    extra.emplace_back(*cutoff);
  }
  return s + " ELSE 0 END)";
}

QuerySql query_sql(const OfferQuery& q, const GpuCatalog* gpus) {
  validate_query_options(q);  // q.validate() less its filter parse: the filter is parsed once, here
  const Filter filter = Filter::parse(q.filter);
  QuerySql out;
  const FilterContext fctx = q.filter_context(gpus);
  const SqlWhere full = compile_filter_sql(filter, fctx, SqlDialect::sqlite, 3);
  const std::string where = "(" + full.sql + ")";
  const int first_extra = 3 + static_cast<int>(full.params.size());
  const std::string key = sort_sql(q.sort);
  const std::string excluded =
      " AND (?2 OR NOT EXISTS (SELECT 1 FROM flags f WHERE f.offer_id = o.id AND f.excludes = 1))";
  auto limit = [](int n) { return fmt::format(" LIMIT ?{}", n); };
  const char* col = indexed_sort_column(q.sort);
  if (col == nullptr || (q.evidence_first && !q.limit)) {
    // One statement sorted whole: the sorts computed per row, and every match in evidence order
    // (no limit to stop a walk at).
    QueryStatement st{"", {}, full};
    int n = first_extra;
    const std::string tier = q.evidence_first ? evidence_tier_sql(q, n, st.extra) + ", " : "";
    st.sql = std::string("SELECT ") + kOfferColumns + " FROM offers o" + kLatestPriceJoin + "WHERE " + where + excluded +
             " ORDER BY (" + key + ") IS NULL, " + tier + key + (offer_sort_descending(q.sort) ? " DESC" : "") +
             ", o.id" + limit(n);
    out.statements.push_back(std::move(st));
    return out;
  }
  // Two steps with the order ((key) IS NULL, key, id) of one statement: (1) offers with a sort
  // key, in the order of an index of latest_prices, so the first page walks the index and stops
  // after `limit` matches; (2) only when (1) did not fill the limit, offers without a key (no
  // price of the kind), by id. CROSS JOIN keeps latest_prices the outer loop (SQLite's hint).
  // With evidence_first, step (1) is one walk per evidence tier, best first, each with the tier
  // as a condition (the first page is usually filled by clean prices), and (2) orders by tier.
  // The filter's `gpus OP N` conjuncts repeated on lp.gpu_count (the last column of every order
  // index, migration 5): rows of other GPU counts are skipped on the index entry, before the
  // offer is read. Implied by the filter's own clause, so the result is the same.
  const auto counts = gpu_count_bounds(filter);
  auto count_terms = [&](int& n, std::vector<SqlValue>& extra) {
    std::string t;
    for (const auto& [op, v] : counts) {
      t += fmt::format("lp.gpu_count {} ?{} AND ", op, n++);
      extra.emplace_back(v);
    }
    return t;
  };
  // "(tier) = T AND " for the walk of tier T; "" without evidence_first.
  auto tier_term = [&](int tier, int& n, std::vector<SqlValue>& extra) {
    return tier < 0 ? std::string() : evidence_tier_sql(q, n, extra) + fmt::format(" = {} AND ", tier);
  };
  const std::vector<int> tiers = q.evidence_first ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{-1};
  const std::string from = std::string("SELECT ") + kOfferColumns + ", " + col + " AS sort_key, lp.offer_id AS sort_id"
                           " FROM latest_prices lp CROSS JOIN offers o ON o.id = lp.offer_id WHERE lp.kind = ?1 AND " +
                           col + " IS NOT NULL AND ";
  // The order indexes give the sort key; SQLite sorts each run of equal keys by id (RIGHT PART
  // OF ORDER BY) and stops at the limit.
  const std::string order = excluded + " ORDER BY " + col + ", lp.offer_id";
  const auto keys = index_candidates(filter, gpus ? *gpus : GpuCatalog::bundled());
  for (int tier : tiers) {
    if (keys) {
      // `gpu=X and ...` / `provider=X and ...`: the walk of the sort's order index, with the
      // model or provider tested on its entry (gpu_norm, gpu_name, provider end the order
      // indexes since migration 8, kept equal to the offer's) before the row or the offer is
      // read. The conjunct that gave the keys is that test (compiled as TRUE in the filter).
      // Until schema 8 each value had its own (kind, value, price) index walk; those 6 indexes
      // cost a bulk import more than they saved a read (migration 8, docs/import-format.md).
      QueryStatement st;
      st.where = compile_filter_sql(filter, fctx, SqlDialect::sqlite, 3, keys->conjunct);
      int n = 3 + static_cast<int>(st.where.params.size());
      const std::string bounds = count_terms(n, st.extra) + tier_term(tier, n, st.extra);
      std::string key_test;
      for (const auto& [column, value] : keys->keys) {
        key_test += fmt::format("{}lp.{} = ?{}", key_test.empty() ? "(" : " OR ", column, n++);
        st.extra.emplace_back(value);
      }
      key_test += ") AND ";
      st.sql = from + bounds + key_test + "(" + st.where.sql + ")" + order + limit(n);
      out.statements.push_back(std::move(st));
    } else {
      QueryStatement st;
      int n = first_extra;
      const std::string bounds = count_terms(n, st.extra) + tier_term(tier, n, st.extra);
      st.sql = from + bounds + where + order + limit(n);
      st.where = full;
      out.statements.push_back(std::move(st));
    }
  }
  QueryStatement unpriced{"", {}, full};
  int n = first_extra;
  const std::string tier = q.evidence_first ? evidence_tier_sql(q, n, unpriced.extra) + ", " : "";
  unpriced.sql = std::string("SELECT ") + kOfferColumns + " FROM offers o" + kLatestPriceJoin + "WHERE " + col +
                 " IS NULL AND " + where + excluded + " ORDER BY " + tier + "o.id" + limit(n);
  out.statements.push_back(std::move(unpriced));
  return out;
}

void bind_query(Stmt& s, const OfferQuery& q, const QueryStatement& st, std::size_t already) {
  int i = 1;
  s.bind(i++, price_kind_name(q.price_kind));
  s.bind_int(i++, q.include_excluded ? 1 : 0);
  for (const SqlValue& v : st.where.params) s.bind(i++, v);
  for (const SqlValue& v : st.extra) s.bind(i++, v);
  s.bind_int(i++, q.limit ? static_cast<std::int64_t>(*q.limit - already) : -1);
}

}  // namespace

std::size_t SqliteOfferStore::count_matching(const OfferQuery& q) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  q.validate();
  const SqlWhere where = compile_filter_sql(Filter::parse(q.filter), q.filter_context(impl_->gpus), SqlDialect::sqlite, 3);
  // The WHERE of query_sql's single statement (same parameters ?1 kind, ?2 include_excluded,
  // ?3.. the filter's values), counted.
  Stmt s(impl_->db,
         std::string("SELECT count(*) FROM offers o") + kLatestPriceJoin + "WHERE (" + where.sql +
             ") AND (?2 OR NOT EXISTS (SELECT 1 FROM flags f WHERE f.offer_id = o.id AND f.excludes = 1))",
         impl_->path);
  int i = 1;
  s.bind(i++, price_kind_name(q.price_kind));
  s.bind_int(i++, q.include_excluded ? 1 : 0);
  for (const SqlValue& v : where.params) s.bind(i++, v);
  s.step();
  return static_cast<std::size_t>(s.integer(0));
}

void SqliteOfferStore::set_bounded_read_scan_max_rows(std::size_t rows) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->bounded_scan_max_rows = rows;
}

std::vector<std::string> SqliteOfferStore::explain_query(const OfferQuery& q) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const QuerySql sql = query_sql(q, impl_->gpus);
  std::vector<std::string> out;
  for (const QueryStatement& st : sql.statements) {
    Stmt s(impl_->db, "EXPLAIN QUERY PLAN " + st.sql, impl_->path);
    bind_query(s, q, st, 0);
    std::string plan;
    while (s.step()) plan += s.text(3) + "\n";
    out.push_back(plan);
  }
  return out;
}

std::vector<Offer> SqliteOfferStore::query(const OfferQuery& q) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const QuerySql sql = query_sql(q, impl_->gpus);
  // Read under one snapshot so offers and their observations agree while an import runs.
  exec(impl_->db, "BEGIN", impl_->path);
  try {
    const bool walk = q.cheapest_per_plan_class && !impl_->latest_rows_at_most(impl_->bounded_scan_max_rows);
    if (walk) {
      std::vector<Offer> out = impl_->bounded_query(q);
      exec(impl_->db, "COMMIT", impl_->path);
      return out;
    }
    std::vector<Offer> out;
    for (const QueryStatement& st : sql.statements) {
      if (q.limit && out.size() >= *q.limit) break;
      Stmt s(impl_->db, st.sql, impl_->path);
      bind_query(s, q, st, out.size());
      while (s.step()) out.push_back(read_offer(s));
    }
    if (q.memory_floor) std::erase_if(out, [&](const Offer& o) { return !passes_memory_floor(o, *q.memory_floor); });
    impl_->load_details(out, q.all_observations);
    exec(impl_->db, "COMMIT", impl_->path);
    if (q.cheapest_per_plan_class)  // a small store: the bounded read's rule over every match
      out = select_cheapest_per_plan_class(std::move(out), *q.cheapest_per_plan_class,
                                           clean_date_window(q.now_date, q.stale_after_days));
    return out;
  } catch (...) {
    impl_->rollback();
    throw;
  }
}

std::optional<Offer> SqliteOfferStore::get(std::string_view id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  exec(impl_->db, "BEGIN", impl_->path);
  try {
    std::optional<Offer> o = impl_->load_facts(id);
    if (o) impl_->load_observations(*o);
    exec(impl_->db, "COMMIT", impl_->path);
    return o;
  } catch (...) {
    impl_->rollback();
    throw;
  }
}

std::vector<PriceObservation> SqliteOfferStore::history(std::string_view offer_id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Offer o;
  o.id = std::string(offer_id);
  impl_->load_observations(o);
  return o.prices;
}

std::uint64_t SqliteOfferStore::revision() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Stmt s(impl_->db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'revision'", impl_->path);
  return s.step() ? static_cast<std::uint64_t>(s.integer(0)) : 0;
}

std::optional<std::string> SqliteOfferStore::write_refusal() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (sqlite3_db_readonly(impl_->db, "main") == 1)
    return "the SQLite database " + impl_->path + " is open read-only (no write permission on the file)";
  return std::nullopt;
}

StoreCounts SqliteOfferStore::counts() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Stmt s(impl_->db,
         "SELECT (SELECT count(*) FROM offers), (SELECT count(*) FROM observations), "
         "(SELECT count(DISTINCT offer_id) FROM flags WHERE excludes = 1)",
         impl_->path);
  s.step();
  StoreCounts c;
  c.offers = static_cast<std::size_t>(s.integer(0));
  c.observations = static_cast<std::size_t>(s.integer(1));
  c.excluded_offers = static_cast<std::size_t>(s.integer(2));
  return c;
}

SnapshotCommit SqliteOfferStore::commit_snapshot(const SnapshotRecord& record, const ImportBatch* batch) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (batch != nullptr) validate_batch(*batch);
  return impl_->in_transaction([&] {
    SnapshotCommit c;
    c.record = record;
    if (record.status == "accepted" && impl_->last_accepted_has(record.source, record.content_hash, record.parser_version)) {
      // Another fetch (maybe running at the same time) already stored this content as the
      // source's latest: nothing to import (an earlier content seen again is imported).
      c.already_accepted = true;
      c.record.status = "unchanged";
      c.record.observations_added = 0;
      c.record.detail = kAlreadyAcceptedDetail;
    } else if (record.status == "accepted" && batch != nullptr) {
      c.import = impl_->import_unlocked(*batch);
      c.record.observations_added = c.import.observations_added;
    }
    if (batch != nullptr && c.record.status != "rejected")
      impl_->apply_seen_again(*batch, c.record.status == "unchanged");
    c.record.id = impl_->insert_snapshot(c.record);
    return c;
  });
}

std::optional<SnapshotRecord> SqliteOfferStore::last_snapshot(std::string_view source, std::string_view status) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Stmt s(impl_->db,
         std::string("SELECT ") + Impl::kSnapshotColumns +
             " FROM snapshots WHERE source = ? AND status = ? ORDER BY fetched_at DESC, id DESC LIMIT 1",
         impl_->path);
  s.bind(1, source);
  s.bind(2, status);
  if (!s.step()) return std::nullopt;
  return Impl::read_snapshot(s);
}

std::optional<std::string> SqliteOfferStore::first_accepted_with_hash(std::string_view source,
                                                                      std::string_view content_hash) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Stmt s(impl_->db,
         "SELECT min(fetched_at) FROM snapshots WHERE source = ? AND content_hash = ? AND status = 'accepted'",
         impl_->path);
  s.bind(1, source);
  s.bind(2, content_hash);
  if (!s.step()) return std::nullopt;
  return s.opt_text(0);
}

std::vector<SnapshotRecord> SqliteOfferStore::snapshots(std::string_view source, std::size_t limit) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Stmt s(impl_->db,
         std::string("SELECT ") + Impl::kSnapshotColumns +
             " FROM snapshots WHERE (? = '' OR source = ?) ORDER BY fetched_at DESC, id DESC LIMIT ?",
         impl_->path);
  s.bind(1, source);
  s.bind(2, source);
  s.bind_int(3, static_cast<std::int64_t>(limit));
  std::vector<SnapshotRecord> out;
  while (s.step()) out.push_back(Impl::read_snapshot(s));
  return out;
}

std::string default_offer_db_path() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  // XDG Base Directory spec: "All paths set in these environment variables must be absolute.
  // If an implementation encounters a relative path in any of these variables it should
  // consider the path invalid and ignore it."
  if (xdg && *xdg == '/') return (std::filesystem::path(xdg) / "gpuplan" / "offers.sqlite").string();
  const char* home = std::getenv("HOME");
  if (home && *home) return (std::filesystem::path(home) / ".local" / "share" / "gpuplan" / "offers.sqlite").string();
  throw Error(ErrorKind::unavailable, "--db", "neither XDG_DATA_HOME nor HOME is set", "a database path given with --db");
}

}  // namespace gpuplan
