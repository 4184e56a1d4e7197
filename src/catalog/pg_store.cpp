#include "catalog/pg_store.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <algorithm>
#include <atomic>
#include <array>
#include <condition_variable>
#include <mutex>
#include <unordered_map>

#include "catalog/filter_sql.hpp"
#include "catalog/freshness.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

/// Advisory lock keys (one 64-bit namespace per database; "gpup" + a number).
constexpr long long kMigrateLockKey = 0x6770757000000001LL;
constexpr long long kWriteLockKey = 0x6770757000000002LL;
/// How long a writer waits for another writer's transaction (seconds).
constexpr int kWriterWaitSeconds = 600;

/// Schema migrations: entry i brings version i to i+1, numbered as sqlite_store.cpp's
/// migrations (the same change, in PostgreSQL's types). Append only; never edit a shipped one.
const std::vector<const char*>& migrations() {
  static const std::vector<const char*> m = {
      // 1: offers, observations, flags, meta (SQLite migration 1).
      R"sql(
CREATE FUNCTION gpuplan_norm(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT lower(regexp_replace(t, '[^A-Za-z0-9]', '', 'g')) $$;
CREATE FUNCTION gpuplan_try_timestamptz(t text) RETURNS timestamptz LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN t::timestamptz;
EXCEPTION WHEN others THEN
  RETURN NULL;
END $$;
CREATE TABLE offers (
  id text PRIMARY KEY,
  provider text NOT NULL,
  instance_type text NOT NULL,
  region text NOT NULL,
  zone text NOT NULL,
  gpu_name_raw text NOT NULL,
  gpu_name text,
  gpu_count integer NOT NULL,
  gpu_memory_bytes double precision,
  vcpus double precision,
  ram_bytes double precision,
  local_disk_bytes double precision,
  intra_node_link text NOT NULL,
  intra_node_link_bytes_per_s double precision,
  form_factor text NOT NULL,
  inter_node_network text NOT NULL,
  inter_node_bits_per_s double precision,
  max_nodes integer,
  confirmed_available_at text,
  billing_granularity_seconds double precision,
  billing_minimum_billed_seconds double precision,
  billing_storage_usd_per_gb_month numeric,
  billing_egress_usd_per_gb numeric,
  billing_egress_free_gb_per_month double precision,
  billing_preemptions_per_day double precision,
  billing_sources_json jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX offers_gpu_name ON offers (gpu_name);
CREATE INDEX offers_gpu_norm ON offers (gpuplan_norm(gpu_name_raw));
CREATE INDEX offers_provider ON offers (lower(provider));
CREATE INDEX offers_region ON offers (lower(region));
CREATE INDEX offers_gpu_count ON offers (gpu_count);
CREATE TABLE observations (
  seq bigserial PRIMARY KEY,
  offer_id text NOT NULL REFERENCES offers(id),
  kind text NOT NULL,
  usd_per_hour numeric NOT NULL,
  observed_at timestamptz,
  observed_at_text text,
  dataset text NOT NULL,
  locator text NOT NULL
);
CREATE UNIQUE INDEX observations_identity
  ON observations (offer_id, kind, usd_per_hour, COALESCE(observed_at_text, ''), dataset);
CREATE INDEX observations_latest
  ON observations (offer_id, kind, (observed_at_text IS NULL), observed_at_text COLLATE "C" DESC, seq DESC);
CREATE INDEX observations_by_kind ON observations (kind, offer_id);
CREATE TABLE flags (
  offer_id text NOT NULL REFERENCES offers(id),
  position integer NOT NULL,
  rule text NOT NULL,
  detail text NOT NULL,
  excludes boolean NOT NULL,
  PRIMARY KEY (offer_id, position)
);
CREATE INDEX flags_excluding ON flags (offer_id) WHERE excludes;
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
)sql",
      // 2: snapshot log of `gpuplan fetch` (SQLite migration 2). An accepted (source,
      // content_hash) is stored once, so two fetches at once add nothing twice.
      R"sql(
CREATE TABLE snapshots (
  id bigserial PRIMARY KEY,
  source text NOT NULL,
  url text NOT NULL,
  urls_json jsonb NOT NULL DEFAULT '[]',
  fetched_at timestamptz NOT NULL,
  content_hash text NOT NULL,
  parser_version integer NOT NULL,
  status text NOT NULL CHECK (status IN ('accepted', 'rejected', 'unchanged')),
  rows_read bigint NOT NULL,
  offers bigint NOT NULL,
  observations_added bigint NOT NULL,
  detail text NOT NULL
);
CREATE INDEX snapshots_by_source ON snapshots (source, fetched_at);
CREATE UNIQUE INDEX snapshots_accepted_once ON snapshots (source, content_hash) WHERE status = 'accepted';
)sql",
      // 3: the latest price of each offer and kind (SQLite migration 3), maintained by every
      // import in its transaction (kRefreshLatestSql) so reads never scan price history; the
      // sort keys indexed with the kind and the byte-order id tie-break. Backfilled from history.
      R"sql(
CREATE TABLE latest_prices (
  offer_id text NOT NULL REFERENCES offers(id),
  kind text NOT NULL,
  seq bigint NOT NULL REFERENCES observations(seq),
  usd_per_hour double precision NOT NULL,
  usd_per_gpu_hour double precision,
  observed_at text,
  dataset text NOT NULL,
  gpu_name text,
  gpu_norm text NOT NULL,
  PRIMARY KEY (offer_id, kind)
);
CREATE INDEX latest_prices_by_gpu_hour ON latest_prices (kind, usd_per_gpu_hour, offer_id COLLATE "C");
CREATE INDEX latest_prices_by_price ON latest_prices (kind, usd_per_hour, offer_id COLLATE "C");
CREATE INDEX latest_prices_by_gpu_name ON latest_prices (kind, gpu_name, usd_per_gpu_hour, offer_id COLLATE "C");
CREATE INDEX latest_prices_by_gpu_norm ON latest_prices (kind, gpu_norm, usd_per_gpu_hour, offer_id COLLATE "C");
INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, gpu_name, gpu_norm)
  SELECT DISTINCT ON (x.offer_id, x.kind) x.offer_id, x.kind, x.seq, x.usd_per_hour::float8,
         x.usd_per_hour::float8 / NULLIF(o.gpu_count, 0), x.observed_at_text, x.dataset, o.gpu_name,
         gpuplan_norm(o.gpu_name_raw)
  FROM observations x JOIN offers o ON o.id = x.offer_id
  ORDER BY x.offer_id, x.kind, (x.observed_at_text IS NULL), x.observed_at_text COLLATE "C" DESC, x.seq DESC;
ANALYZE latest_prices;
)sql",
      // 4: latest_prices keyed by provider too, and the per-model / per-provider walks for the
      // price order (SQLite migration 4); rebuilt from history by migration 3's rule.
      R"sql(
DELETE FROM latest_prices;
ALTER TABLE latest_prices ADD COLUMN provider text;
ALTER TABLE latest_prices ADD COLUMN locator text NOT NULL DEFAULT '';
CREATE INDEX latest_prices_by_provider ON latest_prices (kind, provider, usd_per_gpu_hour, offer_id COLLATE "C");
CREATE INDEX latest_prices_by_gpu_name_price ON latest_prices (kind, gpu_name, usd_per_hour, offer_id COLLATE "C");
CREATE INDEX latest_prices_by_gpu_norm_price ON latest_prices (kind, gpu_norm, usd_per_hour, offer_id COLLATE "C");
CREATE INDEX latest_prices_by_provider_price ON latest_prices (kind, provider, usd_per_hour, offer_id COLLATE "C");
INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, gpu_name, gpu_norm,
                           provider, locator)
  SELECT DISTINCT ON (x.offer_id, x.kind) x.offer_id, x.kind, x.seq, x.usd_per_hour::float8,
         x.usd_per_hour::float8 / NULLIF(o.gpu_count, 0), x.observed_at_text, x.dataset, o.gpu_name,
         gpuplan_norm(o.gpu_name_raw), lower(o.provider), x.locator
  FROM observations x JOIN offers o ON o.id = x.offer_id
  ORDER BY x.offer_id, x.kind, (x.observed_at_text IS NULL), x.observed_at_text COLLATE "C" DESC, x.seq DESC;
ANALYZE latest_prices;
)sql",
      // 5: latest_prices keeps the offer's gpu_count (rebuilt from history by migration 3's rule,
      // as migration 4 did), and its order indexes carry it (INCLUDE),
      // so `gpus OP N` (filter_sql.hpp gpu_count_bounds) is checked on the index entry before
      // the offer is read (issue 12: `gpu=H100 gpus>=8` at 100x); observations_by_kind is
      // dropped (no statement reads observations by kind since latest_prices). SQLite's
      // migration 5 also turns its latest_prices into a rowid table whose order indexes hold an
      // integer row key; here index entries point at heap tuples already, and the text id stays
      // in them as the order's tie-break (index-only walks in the full order).
      R"sql(
DELETE FROM latest_prices;
ALTER TABLE latest_prices ADD COLUMN gpu_count integer NOT NULL;
DROP INDEX latest_prices_by_gpu_hour;
DROP INDEX latest_prices_by_price;
DROP INDEX latest_prices_by_gpu_name;
DROP INDEX latest_prices_by_gpu_norm;
DROP INDEX latest_prices_by_provider;
DROP INDEX latest_prices_by_gpu_name_price;
DROP INDEX latest_prices_by_gpu_norm_price;
DROP INDEX latest_prices_by_provider_price;
CREATE INDEX latest_prices_by_gpu_hour ON latest_prices (kind, usd_per_gpu_hour, offer_id COLLATE "C") INCLUDE (gpu_count);
CREATE INDEX latest_prices_by_price ON latest_prices (kind, usd_per_hour, offer_id COLLATE "C") INCLUDE (gpu_count);
CREATE INDEX latest_prices_by_gpu_name ON latest_prices (kind, gpu_name, usd_per_gpu_hour, offer_id COLLATE "C")
  INCLUDE (gpu_count);
CREATE INDEX latest_prices_by_gpu_norm ON latest_prices (kind, gpu_norm, usd_per_gpu_hour, offer_id COLLATE "C")
  INCLUDE (gpu_count);
CREATE INDEX latest_prices_by_provider ON latest_prices (kind, provider, usd_per_gpu_hour, offer_id COLLATE "C")
  INCLUDE (gpu_count);
CREATE INDEX latest_prices_by_gpu_name_price ON latest_prices (kind, gpu_name, usd_per_hour, offer_id COLLATE "C")
  INCLUDE (gpu_count);
CREATE INDEX latest_prices_by_gpu_norm_price ON latest_prices (kind, gpu_norm, usd_per_hour, offer_id COLLATE "C")
  INCLUDE (gpu_count);
CREATE INDEX latest_prices_by_provider_price ON latest_prices (kind, provider, usd_per_hour, offer_id COLLATE "C")
  INCLUDE (gpu_count);
DROP INDEX IF EXISTS observations_by_kind;
INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, gpu_name, gpu_norm,
                           provider, locator, gpu_count)
  SELECT DISTINCT ON (x.offer_id, x.kind) x.offer_id, x.kind, x.seq, x.usd_per_hour::float8,
         x.usd_per_hour::float8 / NULLIF(o.gpu_count, 0), x.observed_at_text, x.dataset, o.gpu_name,
         gpuplan_norm(o.gpu_name_raw), lower(o.provider), x.locator, o.gpu_count
  FROM observations x JOIN offers o ON o.id = x.offer_id
  ORDER BY x.offer_id, x.kind, (x.observed_at_text IS NULL), x.observed_at_text COLLATE "C" DESC, x.seq DESC;
ANALYZE latest_prices;
)sql",
      // 6: the plan class of each latest price and the bounded read's two walks (SQLite
      // migration 6): per kind and class by price, and by date (NULLS FIRST, as SQLite orders an
      // undated price). Filled for existing rows by backfill_plan_class in this transaction.
      R"sql(
ALTER TABLE latest_prices ADD COLUMN plan_class bigint;
CREATE INDEX latest_prices_by_class_price ON latest_prices (kind, plan_class, usd_per_hour) INCLUDE (observed_at);
CREATE INDEX latest_prices_by_class_date ON latest_prices (kind, plan_class, observed_at COLLATE "C" NULLS FIRST);
)sql",
      // 7: the fewest nodes an offer is sold as (SQLite migration 7, Offer::min_nodes); NULL = no
      // minimum known. Existing offers keep NULL and their plan classes.
      R"sql(
ALTER TABLE offers ADD COLUMN min_nodes integer;
)sql",
      // 8: 4 secondary indexes on latest_prices instead of 10 (SQLite migration 8, issue 11:
      // every bulk import pays for each): the 6 per-model and per-provider order indexes
      // dropped, the 2 order indexes INCLUDE the offer's gpu_norm, gpu_name and provider too, so
      // a first page filtered by model or provider walks the order index of its sort and tests
      // them there (query_sql's key test).
      R"sql(
DROP INDEX IF EXISTS latest_prices_by_gpu_name;
DROP INDEX IF EXISTS latest_prices_by_gpu_norm;
DROP INDEX IF EXISTS latest_prices_by_provider;
DROP INDEX IF EXISTS latest_prices_by_gpu_name_price;
DROP INDEX IF EXISTS latest_prices_by_gpu_norm_price;
DROP INDEX IF EXISTS latest_prices_by_provider_price;
DROP INDEX IF EXISTS latest_prices_by_gpu_hour;
DROP INDEX IF EXISTS latest_prices_by_price;
CREATE INDEX latest_prices_by_gpu_hour ON latest_prices (kind, usd_per_gpu_hour, offer_id COLLATE "C")
  INCLUDE (gpu_count, gpu_norm, gpu_name, provider);
CREATE INDEX latest_prices_by_price ON latest_prices (kind, usd_per_hour, offer_id COLLATE "C")
  INCLUDE (gpu_count, gpu_norm, gpu_name, provider);
)sql",
      // 9: an earlier content may be accepted again (SQLite migration 9, issue 9 trial D1): no
      // unique index on accepted (source, content_hash); commit_snapshot compares with the last
      // accepted snapshot of the source under the write lock.
      R"sql(
DROP INDEX IF EXISTS snapshots_accepted_once;
CREATE INDEX IF NOT EXISTS snapshots_by_source_status ON snapshots (source, status, fetched_at);
)sql",
      // 10: when each latest price was last seen (SQLite migration 10, issue 9 trial D3,
      // docs/fetch.md "Seen again"): set by a fetch that finds the same price again; age, tier
      // and stale read it, so the bounded read's class indexes are rebuilt on it. Filled with
      // observed_at for existing rows.
      R"sql(
ALTER TABLE latest_prices ADD COLUMN last_seen_at text;
UPDATE latest_prices SET last_seen_at = observed_at;
DROP INDEX IF EXISTS latest_prices_by_class_price;
DROP INDEX IF EXISTS latest_prices_by_class_date;
CREATE INDEX latest_prices_by_class_price ON latest_prices (kind, plan_class, usd_per_hour) INCLUDE (last_seen_at);
CREATE INDEX latest_prices_by_class_date ON latest_prices (kind, plan_class, last_seen_at COLLATE "C" NULLS FIRST);
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
    "o.billing_storage_usd_per_gb_month::float8, o.billing_egress_usd_per_gb::float8, " \
    "o.billing_egress_free_gb_per_month, o.billing_preemptions_per_day, o.billing_sources_json::text"
constexpr const char* kOfferColumnsV6 = GPUPLAN_OFFER_COLUMNS_V6 ", NULL";
constexpr const char* kOfferColumns = GPUPLAN_OFFER_COLUMNS_V6 ", o.min_nodes";
#undef GPUPLAN_OFFER_COLUMNS_V6

/// Observations of many offers, oldest first per offer (unknown dates first, then insertion).
constexpr const char* kAllObservationsSql =
    "SELECT x.offer_id, x.kind, x.usd_per_hour::float8, x.observed_at_text, x.dataset, x.locator, l.last_seen_at "
    "FROM observations x LEFT JOIN latest_prices l ON l.offer_id = x.offer_id AND l.kind = x.kind AND l.seq = x.seq "
    "WHERE x.offer_id = ANY($1::text[]) "
    "ORDER BY x.offer_id, (x.observed_at_text IS NOT NULL), x.observed_at_text COLLATE \"C\", x.seq";
/// The latest observation of each kind of many offers (latest_prices holds their copies), same order.
constexpr const char* kLatestObservationsSql =
    "SELECT offer_id, kind, usd_per_hour, observed_at, dataset, locator, last_seen_at FROM latest_prices "
    "WHERE offer_id = ANY($1::text[]) ORDER BY offer_id, (observed_at IS NOT NULL), observed_at COLLATE \"C\", seq";
/// Recomputes latest_prices for one offer ($1) and kind ($2) from its observations
/// (Offer::latest_price's rule: unknown dates oldest, then the newest date, ties to the latest
/// inserted): one probe of observations_latest, in the import's transaction.
constexpr const char* kRefreshLatestSql =
    "INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, gpu_name, "
    "gpu_norm, provider, locator, gpu_count, plan_class, last_seen_at) SELECT x.offer_id, x.kind, x.seq, "
    "x.usd_per_hour::float8, x.usd_per_hour::float8 / NULLIF(o.gpu_count, 0), x.observed_at_text, x.dataset, "
    "o.gpu_name, gpuplan_norm(o.gpu_name_raw), lower(o.provider), x.locator, o.gpu_count, $3::bigint, "
    "x.observed_at_text FROM observations x "
    "JOIN offers o ON o.id = x.offer_id "
    "WHERE x.offer_id = $1 AND x.kind = $2 "
    "ORDER BY (x.observed_at_text IS NULL), x.observed_at_text COLLATE \"C\" DESC, x.seq DESC LIMIT 1 "
    "ON CONFLICT (offer_id, kind) DO UPDATE SET seq = excluded.seq, usd_per_hour = excluded.usd_per_hour, "
    "usd_per_gpu_hour = excluded.usd_per_gpu_hour, observed_at = excluded.observed_at, dataset = excluded.dataset, "
    "gpu_name = excluded.gpu_name, gpu_norm = excluded.gpu_norm, provider = excluded.provider, locator = excluded.locator, "
    "gpu_count = excluded.gpu_count, plan_class = excluded.plan_class, last_seen_at = CASE WHEN "
    "latest_prices.seq = excluded.seq THEN latest_prices.last_seen_at ELSE excluded.last_seen_at END "
    "WHERE latest_prices.seq <> excluded.seq OR latest_prices.gpu_count <> excluded.gpu_count "
    "OR latest_prices.plan_class IS DISTINCT FROM excluded.plan_class "
    "OR latest_prices.usd_per_gpu_hour IS DISTINCT FROM excluded.usd_per_gpu_hour "
    "OR latest_prices.gpu_name IS DISTINCT FROM excluded.gpu_name OR latest_prices.gpu_norm <> excluded.gpu_norm "
    "OR latest_prices.provider IS DISTINCT FROM excluded.provider";
constexpr const char* kFlagsSql =
    "SELECT offer_id, rule, detail, excludes FROM flags WHERE offer_id = ANY($1::text[]) ORDER BY offer_id, position";
constexpr const char* kUpsertSql =
    "INSERT INTO offers (id, provider, instance_type, region, zone, gpu_name_raw, gpu_name, gpu_count, "
    "gpu_memory_bytes, vcpus, ram_bytes, local_disk_bytes, intra_node_link, intra_node_link_bytes_per_s, "
    "form_factor, inter_node_network, inter_node_bits_per_s, max_nodes, confirmed_available_at, "
    "billing_granularity_seconds, billing_minimum_billed_seconds, billing_storage_usd_per_gb_month, "
    "billing_egress_usd_per_gb, billing_egress_free_gb_per_month, billing_preemptions_per_day, "
    "billing_sources_json, min_nodes) VALUES ($1,$2,$3,$4,$5,$6,$7,$8::integer,$9::float8,$10::float8,$11::float8,"
    "$12::float8,$13,$14::float8,$15,$16,$17::float8,$18::integer,$19,$20::float8,$21::float8,$22::numeric,$23::numeric,"
    "$24::float8,$25::float8,$26::jsonb,$27::integer) "
    "ON CONFLICT (id) DO UPDATE SET provider=excluded.provider, instance_type=excluded.instance_type, "
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
    "billing_sources_json=excluded.billing_sources_json, min_nodes=excluded.min_nodes";
constexpr const char* kInsertObservationSql =
    "INSERT INTO observations (offer_id, kind, usd_per_hour, observed_at, observed_at_text, dataset, locator) "
    "VALUES ($1, $2, $3::numeric, gpuplan_try_timestamptz($4), $4, $5, $6) ON CONFLICT DO NOTHING";

/// Snapshot columns; fetched_at rendered back as "YYYY-MM-DDTHH:MM:SSZ" (UTC).
constexpr const char* kSnapshotColumns =
    "id, source, url, urls_json::text, to_char(fetched_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
    "content_hash, parser_version, status, rows_read, offers, observations_added, detail";

SnapshotRecord read_snapshot(const pqxx::row& r) {
  SnapshotRecord s;
  s.id = r[0].as<std::int64_t>();
  s.source = r[1].as<std::string>();
  s.url = r[2].as<std::string>();
  s.urls = nlohmann::json::parse(r[3].as<std::string>()).get<std::vector<std::string>>();
  s.fetched_at = r[4].as<std::string>();
  s.content_hash = r[5].as<std::string>();
  s.parser_version = r[6].as<int>();
  s.status = r[7].as<std::string>();
  s.rows_read = r[8].as<std::size_t>();
  s.offers = r[9].as<std::size_t>();
  s.observations_added = r[10].as<std::size_t>();
  s.detail = r[11].as<std::string>();
  return s;
}

/// One parameter as libpq text (nullopt = SQL NULL).
using Param = std::optional<std::string>;
Param p_text(std::string_view s) { return std::string(s); }
Param p_text(const std::string& s) { return s; }
Param p_text(const char* s) { return std::string(s); }
Param p_text(const std::optional<std::string>& s) { return s; }
/// Shortest text that reads back as the same double (fmt's "{}").
Param p_num(double v) { return fmt::format("{}", v); }
Param p_num(const std::optional<double>& v) { return v ? p_num(*v) : Param{}; }
Param p_int(std::int64_t v) { return std::to_string(v); }
Param p_int(const std::optional<int>& v) { return v ? p_int(*v) : Param{}; }

/// A PostgreSQL text[] literal: {"a","b"} with \ and " escaped.
std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

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
PriceKind parse_kind(const std::string& s, const std::string& where) {
  for (PriceKind k : kPriceKinds)
    if (price_kind_name(k) == s) return k;
  throw Error(ErrorKind::invalid_input, where, "unknown price kind \"" + s + "\" in database");
}

std::optional<std::string> opt_text(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<std::string>();
}
std::optional<double> opt_real(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<double>();
}

Offer read_offer(const pqxx::row& r) {
  Offer o;
  o.id = r[0].as<std::string>();
  o.provider = r[1].as<std::string>();
  o.instance_type = r[2].as<std::string>();
  o.region = r[3].as<std::string>();
  o.zone = r[4].as<std::string>();
  o.gpu_name_raw = r[5].as<std::string>();
  o.gpu_name = opt_text(r[6]);
  o.gpu_count = r[7].as<int>();
  o.gpu_memory_bytes = opt_real(r[8]);
  o.vcpus = opt_real(r[9]);
  o.ram_bytes = opt_real(r[10]);
  o.local_disk_bytes = opt_real(r[11]);
  o.intra_node_link = parse_link(r[12].as<std::string>());
  o.intra_node_link_bytes_per_s = opt_real(r[13]);
  o.form_factor = r[14].as<std::string>();
  o.inter_node_network = parse_network(r[15].as<std::string>());
  o.inter_node_bits_per_s = opt_real(r[16]);
  if (!r[17].is_null()) o.max_nodes = r[17].as<int>();
  o.confirmed_available_at = opt_text(r[18]);
  o.billing_override.granularity_seconds = opt_real(r[19]);
  o.billing_override.minimum_billed_seconds = opt_real(r[20]);
  o.billing_override.storage_usd_per_gb_month = opt_real(r[21]);
  o.billing_override.egress_usd_per_gb = opt_real(r[22]);
  o.billing_override.egress_free_gb_per_month = opt_real(r[23]);
  o.billing_override.preemptions_per_day = opt_real(r[24]);
  o.billing_override.sources = nlohmann::json::parse(r[25].as<std::string>()).get<std::vector<std::string>>();
  if (!r[26].is_null()) o.min_nodes = r[26].as<int>();
  return o;
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

/// The latest observation of the query's kind ($1) per offer (all NULL without one), under the
/// names the filter's SQL reads (filter_sql.hpp): one primary-key probe of latest_prices.
constexpr const char* kLatestPriceJoin = " LEFT JOIN latest_prices lp ON lp.offer_id = o.id AND lp.kind = $1::text ";

/// Maps a libpqxx exception to a gpuplan Error (see pg_store.hpp).
[[noreturn]] void rethrow_pg(const std::string& where) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const pqxx::broken_connection& e) {
    throw Error(ErrorKind::unavailable, where, std::string("connection to PostgreSQL lost: ") + e.what(),
                "retry; the next request opens a new connection");
  } catch (const pqxx::sql_error& e) {
    const std::string state = e.sqlstate();
    if (state == "55P03" || state == "57014" || state == "40001" || state == "40P01" || state.rfind("08", 0) == 0 ||
        state.rfind("57P", 0) == 0)
      throw Error(ErrorKind::unavailable, where, std::string("PostgreSQL: ") + e.what(),
                  "retry when the other writer is done or the server is back");
    throw Error(ErrorKind::internal, where, std::string("PostgreSQL error: ") + e.what());
  } catch (const pqxx::failure& e) {
    throw Error(ErrorKind::unavailable, where, std::string("PostgreSQL: ") + e.what(), "a reachable database");
  }
}

}  // namespace

int pg_store_schema_version() noexcept { return static_cast<int>(migrations().size()); }

struct PgOfferStore::Impl {
  std::string conninfo;
  std::string where;  ///< conninfo without a password, for error messages
  const GpuCatalog* gpus = nullptr;
  std::atomic<std::size_t> bounded_scan_max_rows{kBoundedReadScanMaxRows};
  PgStoreOptions opts;

  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::unique_ptr<pqxx::connection>> idle;
  std::size_t open = 0;  ///< connections in use or idle
  /// Filter statements prepared per connection: SQL text → statement name.
  std::unordered_map<const pqxx::connection*, std::unordered_map<std::string, std::string>> prepared;

  std::unique_ptr<pqxx::connection> connect() {
    std::unique_ptr<pqxx::connection> c;
    try {
      c = std::make_unique<pqxx::connection>(conninfo);
    } catch (const pqxx::broken_connection& e) {
      // Never connected (server down, wrong host or port, refused login): say so in one line,
      // not "connection lost" (trial of issue 10). libpq's text spans lines: the first is kept.
      std::string why = e.what();
      why = why.substr(0, why.find('\n'));
      while (!why.empty() && (why.back() == ' ' || why.back() == '\r')) why.pop_back();
      throw Error(ErrorKind::unavailable, where, "cannot connect to PostgreSQL: " + why,
                  "a running PostgreSQL server at that address that accepts this user (docs/deployment.md)");
    }
    {
    pqxx::nontransaction n(*c);
    n.exec("SET TimeZone = 'UTC'");
    n.exec(fmt::format("SET lock_timeout = {}", std::max(1, opts.lock_timeout_ms)));  // a constant of ours
    n.exec("CREATE TEMP TABLE IF NOT EXISTS gpuplan_specs (name text PRIMARY KEY, "
           "memory_bandwidth_bytes_per_s double precision, memtype text, memory_bytes double precision)");
    n.exec("TRUNCATE gpuplan_specs");
    std::vector<std::string> names, memtypes, memories;
    std::vector<Param> bandwidths;
    for (const GpuSpec& s : gpus->gpus()) {
      names.push_back(s.name);
      memories.push_back(*p_num(s.memory_bytes));  // > 0 for every spec (gpu_spec.hpp)
      memtypes.push_back(memory_family(s));
      bandwidths.push_back(s.memory_bandwidth_bytes_per_s > 0 ? p_num(s.memory_bandwidth_bytes_per_s) : Param{});
    }
    std::vector<std::string> bw_text;
    for (const Param& b : bandwidths) bw_text.push_back(b ? *b : "");
    n.exec_params(
        "INSERT INTO gpuplan_specs SELECT n, NULLIF(b, '')::float8, m, g::float8 "
        "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS t(n, b, m, g) ON CONFLICT (name) DO NOTHING",
        text_array(names), text_array(bw_text), text_array(memtypes), text_array(memories));
    }
    c->prepare("facts", std::string("SELECT ") + kOfferColumns + " FROM offers o WHERE o.id = $1");
    c->prepare("flags", kFlagsSql);
    c->prepare("all_observations", kAllObservationsSql);
    c->prepare("latest_observations", kLatestObservationsSql);
    c->prepare("upsert", kUpsertSql);
    c->prepare("del_flags", "DELETE FROM flags WHERE offer_id = $1");
    c->prepare("ins_flag", "INSERT INTO flags (offer_id, position, rule, detail, excludes) VALUES ($1, $2::integer, "
                           "$3, $4, $5::boolean)");
    c->prepare("ins_obs", kInsertObservationSql);
    c->prepare("refresh_latest", kRefreshLatestSql);
    return c;
  }

  /// A pooled connection; returned to the pool on destruction unless marked broken.
  class Lease {
   public:
    Lease(Impl& impl, std::unique_ptr<pqxx::connection> c) : impl_(impl), c_(std::move(c)) {}
    ~Lease() { impl_.release(std::move(c_), broken_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    pqxx::connection& operator*() { return *c_; }
    void mark_broken() { broken_ = true; }

   private:
    Impl& impl_;
    std::unique_ptr<pqxx::connection> c_;
    bool broken_ = false;
  };

  /// False when the server closed an idle connection (restart, pg_terminate_backend, idle
  /// timeout of a proxy): reads what the socket holds without waiting, no round trip.
  static bool still_open(pqxx::connection& c) {
    try {
      c.get_notifs();  // consumes a pending FATAL message...
      c.get_notifs();  // ...then sees the end of the stream
    } catch (const std::exception&) {
      return false;
    }
    return c.is_open();
  }

  Lease acquire() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return !idle.empty() || open < opts.connections; });
      if (idle.empty()) break;
      auto c = std::move(idle.back());
      idle.pop_back();
      lock.unlock();
      if (still_open(*c)) return Lease(*this, std::move(c));
      lock.lock();  // dropped while idle: replace it before use (the caller never sees it)
      prepared.erase(c.get());
      --open;
    }
    ++open;
    lock.unlock();
    try {
      return Lease(*this, connect());
    } catch (...) {
      {
        std::lock_guard<std::mutex> g(mu);
        --open;
      }
      cv.notify_one();
      rethrow_pg(where);
    }
  }

  void release(std::unique_ptr<pqxx::connection> c, bool broken) {
    {
      std::lock_guard<std::mutex> g(mu);
      if (broken || !c || !c->is_open()) {
        if (c) prepared.erase(c.get());
        --open;
      } else {
        idle.push_back(std::move(c));
      }
    }
    cv.notify_one();
  }

  /// Runs f(connection) with a pooled connection, mapping errors; a connection that failed at
  /// the connection level is dropped (the next call opens a new one).
  template <typename F>
  auto with_connection(F&& f) {
    Lease lease = acquire();
    try {
      return f(*lease);
    } catch (const pqxx::broken_connection&) {
      lease.mark_broken();
      rethrow_pg(where);
    } catch (const pqxx::sql_error& e) {
      const std::string s = e.sqlstate();
      if (s.rfind("08", 0) == 0 || s.rfind("57P", 0) == 0) lease.mark_broken();
      rethrow_pg(where);
    } catch (const pqxx::failure&) {
      lease.mark_broken();
      rethrow_pg(where);
    }
  }

  static constexpr std::size_t kMaxPreparedPerConnection = 256;

  /// Names of prepared statements for `sqls` on `c`, all valid together until the next call on `c`
  /// (prepared on first use; at most kMaxPreparedPerConnection per connection: when the new ones would not fit, the cache
  /// restarts before any of them is prepared, so a query's statements never lose one another).
  std::vector<std::string> prepared_names(pqxx::connection& c, const std::vector<std::string>& sqls) {
    std::unordered_map<std::string, std::string>* m = nullptr;
    {
      std::lock_guard<std::mutex> g(mu);
      m = &prepared[&c];
    }
    std::size_t missing = 0;
    for (const std::string& sql : sqls) missing += m->contains(sql) ? 0 : 1;
    if (missing > 0 && m->size() + missing > kMaxPreparedPerConnection) {
      for (const auto& [text, name] : *m) c.unprepare(name);
      m->clear();
    }
    static std::atomic<unsigned long> counter{0};
    std::vector<std::string> names;
    names.reserve(sqls.size());
    for (const std::string& sql : sqls) {
      auto it = m->find(sql);
      if (it == m->end()) {
        const std::string name = fmt::format("q{}", ++counter);
        c.prepare(name, sql);
        it = m->emplace(sql, name).first;
      }
      names.push_back(it->second);
    }
    return names;
  }
  std::string prepared_name(pqxx::connection& c, const std::string& sql) { return prepared_names(c, {sql}).front(); }

  /// OfferQuery::cheapest_per_plan_class (issue 12; sqlite_store.cpp bounded_query's rule), in
  /// two statements whatever the catalog's size, then the offers read: (1) every (kind, class) by
  /// a recursive skip scan of latest_prices_by_class_date, each with its oldest and newest price
  /// dates and whether one of its offers passes the excluded flags, the memory floor and a filter
  /// on class facts (the same for every offer of the class); (2) per kept (kind, class, clean or
  /// other) one LATERAL walk of latest_prices_by_class_price in price order, FETCH FIRST K ROWS
  /// WITH TIES, a filter on per-offer fields inside the walk.
  std::vector<Offer> bounded_query(pqxx::connection& c, pqxx::transaction_base& t, const OfferQuery& q) {
    const Filter filter = Filter::parse(q.filter);
    const FilterContext fctx = q.filter_context(gpus);
    const bool class_level = filter.reads_only_plan_class_facts();
    const CleanDateWindow win = clean_date_window(q.now_date, q.stale_after_days);
    auto add_params = [](std::vector<Param>& p, const SqlWhere& w) {
      for (const SqlValue& v : w.params) {
        if (const double* d = std::get_if<double>(&v))
          p.push_back(p_num(*d));
        else
          p.push_back(std::get<std::string>(v));
      }
    };
    // $1 query kind, $2 include_excluded, $3 has floor, $4 multi-node, $5 nodes assumed, $6 slack,
    // $7 cluster bytes (passes_memory_floor's arithmetic, in its order), $8.. a class-level filter.
    SqlWhere class_where;
    if (class_level && !filter.empty()) class_where = compile_filter_sql(filter, fctx, SqlDialect::postgresql, 8);
    const std::string classes_sql =
        "WITH RECURSIVE c(kind, pc) AS ((SELECT kind, plan_class FROM latest_prices WHERE plan_class IS NOT NULL "
        "ORDER BY kind, plan_class LIMIT 1) UNION ALL SELECT n.kind, n.plan_class FROM c CROSS JOIN LATERAL (SELECT "
        "kind, plan_class FROM latest_prices WHERE (kind, plan_class) > (c.kind, c.pc) AND plan_class IS NOT NULL "
        "ORDER BY kind, plan_class LIMIT 1) n) "
        "SELECT c.kind, c.pc, (SELECT last_seen_at FROM latest_prices WHERE kind = c.kind AND plan_class = c.pc ORDER "
        "BY last_seen_at COLLATE \"C\" NULLS FIRST LIMIT 1), (SELECT last_seen_at FROM latest_prices WHERE kind = "
        "c.kind AND plan_class = c.pc ORDER BY last_seen_at COLLATE \"C\" DESC NULLS LAST LIMIT 1) FROM c WHERE EXISTS "
        "(SELECT 1 FROM offers o LEFT JOIN latest_prices lp ON lp.offer_id = o.id AND lp.kind = $1::text WHERE o.id = "
        "(SELECT offer_id FROM latest_prices WHERE kind = c.kind AND plan_class = c.pc LIMIT 1) AND ($2::boolean OR "
        "NOT EXISTS (SELECT 1 FROM flags f WHERE f.offer_id = o.id AND f.excludes)) AND (NOT $3::boolean OR "
        "o.gpu_memory_bytes IS NULL OR o.gpu_count < 1 OR o.gpu_memory_bytes * o.gpu_count * GREATEST(CASE WHEN "
        "$4::boolean AND o.inter_node_network <> 'unknown' THEN COALESCE(o.max_nodes, $5::integer) ELSE 1 END, 1)::float8 "
        "* $6::float8 >= $7::float8)" +
        (class_where.sql.empty() ? std::string() : " AND (" + class_where.sql + ")") + ")";
    const OfferMemoryFloor floor = q.memory_floor.value_or(OfferMemoryFloor{});
    std::vector<Param> cp = {p_text(price_kind_name(q.price_kind)), p_text(q.include_excluded ? "true" : "false"),
                             p_text(q.memory_floor ? "true" : "false"), p_text(floor.multi_node ? "true" : "false"),
                             p_int(floor.max_nodes_assumed), p_num(floor.slack), p_num(floor.cluster_bytes)};
    add_params(cp, class_where);
    std::vector<std::string> kinds, classes, parts;
    for (const auto& r : t.exec_prepared(prepared_name(c, classes_sql), pqxx::prepare::make_dynamic_params(cp))) {
      const std::optional<std::string> oldest = opt_text(r[2]), newest = opt_text(r[3]);
      auto add = [&](int part) {
        kinds.push_back(r[0].as<std::string>());
        classes.push_back(r[1].as<std::string>());
        parts.push_back(std::to_string(part));
      };
      if (newest && *newest >= win.lo) add(0);
      if (!oldest || *oldest < win.lo || (newest && *newest >= win.hi)) add(1);
    }
    std::vector<Offer> out;
    if (kinds.empty()) return out;
    SqlWhere fwhere;
    if (!class_level) fwhere = compile_filter_sql(filter, fctx, SqlDialect::postgresql, 8);
    const std::string sql =
        std::string("SELECT DISTINCT x.offer_id FROM unnest($1::text[], $2::bigint[], $3::int[]) AS c(kind, pc, part) "
                    "CROSS JOIN LATERAL (SELECT w.offer_id FROM latest_prices w ") +
        (class_level ? std::string()
                     : std::string("JOIN offers o ON o.id = w.offer_id LEFT JOIN latest_prices lp ON lp.offer_id = o.id "
                                   "AND lp.kind = $7::text ")) +
        "WHERE w.kind = c.kind AND w.plan_class = c.pc AND CASE WHEN c.part = 0 THEN (w.last_seen_at COLLATE \"C\" >= "
        "$4::text AND w.last_seen_at COLLATE \"C\" < $5::text) ELSE (w.last_seen_at IS NULL OR w.last_seen_at COLLATE "
        "\"C\" < $4::text OR w.last_seen_at COLLATE \"C\" >= $5::text) END" +
        (class_level ? std::string() : " AND (" + fwhere.sql + ")") +
        " ORDER BY w.usd_per_hour FETCH FIRST ($6::bigint) ROWS WITH TIES) x";
    std::string class_arr = "{", part_arr = "{";
    for (std::size_t i = 0; i < classes.size(); ++i) {
      class_arr += (i ? "," : "") + classes[i];
      part_arr += (i ? "," : "") + parts[i];
    }
    std::vector<Param> p = {p_text(text_array(kinds)), p_text(class_arr + "}"), p_text(part_arr + "}"), p_text(win.lo),
                            p_text(win.hi), p_int(static_cast<std::int64_t>(*q.cheapest_per_plan_class))};
    if (!class_level) {
      p.push_back(p_text(price_kind_name(q.price_kind)));
      add_params(p, fwhere);
    }
    std::vector<std::string> ids;
    for (const auto& r : t.exec_prepared(prepared_name(c, sql), pqxx::prepare::make_dynamic_params(p)))
      ids.push_back(r[0].as<std::string>());
    if (ids.empty()) return out;
    for (const auto& r : t.exec_prepared(prepared_name(c, std::string("SELECT ") + kOfferColumns +
                                                              " FROM offers o WHERE o.id = ANY($1::text[])"),
                                         text_array(ids)))
      out.push_back(read_offer(r));
    load_details(t, out, q.all_observations, true);
    sort_offers_like_query(out, q, gpus ? *gpus : GpuCatalog::bundled());
    return out;
  }

  /// Migration 6's data: latest_prices.plan_class of every stored offer (plan_class_of over its
  /// facts and flags), in the migration's transaction.
  static void backfill_plan_class(pqxx::transaction_base& t) {
    std::vector<Offer> offers;
    for (const auto& r : t.exec(std::string("SELECT ") + kOfferColumnsV6 + " FROM offers o ORDER BY o.id COLLATE \"C\""))
      offers.push_back(read_offer(r));
    std::unordered_map<std::string, Offer*> by_id;
    for (Offer& o : offers) by_id[o.id] = &o;
    for (const auto& r : t.exec("SELECT offer_id, rule, detail, excludes FROM flags ORDER BY offer_id, position"))
      if (auto it = by_id.find(r[0].as<std::string>()); it != by_id.end())
        it->second->flags.push_back(QualityFlag{r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<bool>()});
    constexpr std::size_t kChunk = 20000;
    for (std::size_t i = 0; i < offers.size(); i += kChunk) {
      std::vector<std::string> ids;
      std::string classes = "{";
      for (std::size_t j = i; j < std::min(offers.size(), i + kChunk); ++j) {
        ids.push_back(offers[j].id);
        classes += (j == i ? "" : ",") + std::to_string(plan_class_of(offers[j]));
      }
      classes += "}";
      t.exec_params("UPDATE latest_prices lp SET plan_class = v.pc FROM unnest($1::text[], $2::bigint[]) AS v(id, pc) "
                    "WHERE lp.offer_id = v.id",
                    text_array(ids), classes);
    }
    t.exec("ANALYZE latest_prices");
  }

  /// Brings the schema to `target` (≤ the versions this binary knows) under the migration lock.
  void migrate(int target) {
    with_connection([&](pqxx::connection& c) {
      const int known = static_cast<int>(migrations().size());
      {
        pqxx::nontransaction n(c);
        n.exec_params("SELECT pg_advisory_lock($1::bigint)", kMigrateLockKey);
      }
      try {
        pqxx::work w(c);
        w.exec("CREATE TABLE IF NOT EXISTS gpuplan_schema (version integer NOT NULL)");
        pqxx::result r = w.exec("SELECT version FROM gpuplan_schema");
        int v = r.empty() ? 0 : r[0][0].as<int>();
        if (r.empty()) w.exec("INSERT INTO gpuplan_schema (version) VALUES (0)");
        if (v > known)
          throw Error(ErrorKind::conflict, where,
                      fmt::format("database schema version {} is newer than this gpuplan knows ({})", v, known),
                      "a newer gpuplan, or a different --db");
        for (int i = v; i < target; ++i) {
          w.exec(migrations()[static_cast<std::size_t>(i)]);
          if (i == 5) backfill_plan_class(w);
        }
        if (v < target) w.exec_params("UPDATE gpuplan_schema SET version = $1::integer", target);
        w.commit();
      } catch (...) {
        try {
          pqxx::nontransaction u(c);
          u.exec_params("SELECT pg_advisory_unlock($1::bigint)", kMigrateLockKey);
        } catch (...) {
        }
        throw;
      }
      {
        pqxx::nontransaction u(c);
        u.exec_params("SELECT pg_advisory_unlock($1::bigint)", kMigrateLockKey);
      }
      return 0;
    });
  }

  /// Fills flags and observations of `offers` (two queries whatever their number).
  void load_details(pqxx::transaction_base& t, std::vector<Offer>& offers, bool all_observations, bool with_flags) {
    if (offers.empty()) return;
    std::vector<std::string> ids;
    std::unordered_map<std::string, Offer*> by_id;
    for (Offer& o : offers) {
      ids.push_back(o.id);
      by_id[o.id] = &o;
    }
    const std::string arr = text_array(ids);
    if (with_flags) {
      for (const auto& r : t.exec_prepared("flags", arr))
        by_id.at(r[0].as<std::string>())
            ->flags.push_back(QualityFlag{r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<bool>()});
    }
    for (const auto& r : t.exec_prepared(all_observations ? "all_observations" : "latest_observations", arr)) {
      PriceObservation p;
      p.offer_id = r[0].as<std::string>();
      p.kind = parse_kind(r[1].as<std::string>(), where);
      p.usd_per_hour = r[2].as<double>();
      p.source.observed_at = opt_text(r[3]);
      p.source.dataset = r[4].as<std::string>();
      p.source.locator = r[5].as<std::string>();
      p.last_seen_at = opt_text(r[6]);
      by_id.at(p.offer_id)->prices.push_back(std::move(p));
    }
  }

  std::optional<Offer> load_facts(pqxx::transaction_base& t, std::string_view id) {
    pqxx::result r = t.exec_prepared("facts", std::string(id));
    if (r.empty()) return std::nullopt;
    std::vector<Offer> one{read_offer(r[0])};
    pqxx::result f = t.exec_prepared("flags", text_array({one[0].id}));
    for (const auto& row : f)
      one[0].flags.push_back(QualityFlag{row[1].as<std::string>(), row[2].as<std::string>(), row[3].as<bool>()});
    return std::move(one[0]);
  }

  /// Takes the write lock for this transaction. A writer waits for another writer's whole import
  /// (minutes for a large snapshot), not lock_timeout, which keeps guarding row locks.
  static void lock_writes(pqxx::transaction_base& t) {
    t.exec(fmt::format("SET LOCAL lock_timeout = '{}s'", kWriterWaitSeconds));  // a constant of ours
    t.exec_params("SELECT pg_advisory_xact_lock($1::bigint)", kWriteLockKey);
  }

  /// SqliteOfferStore's apply_seen_again: a snapshot's prices seen again and, for an unchanged
  /// snapshot (`confirm_offers`), the availability its offers still report, in `t`; the revision
  /// raised when anything changed.
  static void apply_seen_again(pqxx::transaction_base& t, const ImportBatch& batch, bool confirm_offers) {
    std::size_t changed = 0;
    for (const PriceSeenAgain& a : batch.seen_again)
      changed += static_cast<std::size_t>(
          t.exec_params("UPDATE latest_prices SET last_seen_at = $5 WHERE offer_id = $1 AND kind = $2 AND "
                        "usd_per_hour = $3::float8 AND dataset = $4 AND last_seen_at IS NOT NULL AND "
                        "last_seen_at COLLATE \"C\" < $5::text",
                        a.offer_id, std::string(price_kind_name(a.kind)), a.usd_per_hour, a.dataset, a.seen_at)
              .affected_rows());
    if (confirm_offers)
      for (const Offer& o : batch.offers)
        if (o.confirmed_available_at)
          changed += static_cast<std::size_t>(
              t.exec_params("UPDATE offers SET confirmed_available_at = $2 WHERE id = $1 AND confirmed_available_at "
                            "IS NOT NULL AND confirmed_available_at COLLATE \"C\" < $2::text",
                            o.id, *o.confirmed_available_at)
                  .affected_rows());
    if (changed > 0)
      t.exec("INSERT INTO meta (key, value) VALUES ('revision', '1') ON CONFLICT (key) DO UPDATE SET "
             "value = (meta.value::bigint + 1)::text");
  }

  ImportResult import_in(pqxx::transaction_base& t, const ImportBatch& batch) {
    lock_writes(t);
    ImportResult r;
    for (const Offer& in : batch.offers) {
      std::optional<Offer> old = load_facts(t, in.id);
      if (old) check_stored_hardware(*old, in);  // throws: the transaction rolls back
      // A fact this import does not state stays as stored (keep_known_facts).
      std::optional<Offer> filled;
      if (old) {
        filled = in;
        keep_known_facts(*filled, *old);
      }
      const Offer& o = filled ? *filled : in;
      // Kinds whose latest price must be recomputed: those with a new observation, and every
      // kind when stored facts changed (the per-GPU price reads gpu_count).
      std::array<bool, kPriceKindCount> refresh_kind{};
      if (old && !same_offer_facts(*old, o)) refresh_kind.fill(true);
      if (!old)
        ++r.offers_added;
      else if (same_offer_facts(*old, o))
        ++r.offers_unchanged;
      else
        ++r.offers_updated;
      if (!old || !same_offer_facts(*old, o)) {
        const BillingTerms& bt = o.billing_override;
        std::vector<Param> v = {
            p_text(o.id), p_text(o.provider), p_text(o.instance_type), p_text(o.region), p_text(o.zone),
            p_text(o.gpu_name_raw), p_text(o.gpu_name), p_int(o.gpu_count), p_num(o.gpu_memory_bytes),
            p_num(o.vcpus), p_num(o.ram_bytes), p_num(o.local_disk_bytes),
            p_text(intra_node_link_name(o.intra_node_link)), p_num(o.intra_node_link_bytes_per_s),
            p_text(o.form_factor), p_text(inter_node_network_name(o.inter_node_network)),
            p_num(o.inter_node_bits_per_s), p_int(o.max_nodes), p_text(o.confirmed_available_at),
            p_num(bt.granularity_seconds), p_num(bt.minimum_billed_seconds), p_num(bt.storage_usd_per_gb_month),
            p_num(bt.egress_usd_per_gb), p_num(bt.egress_free_gb_per_month), p_num(bt.preemptions_per_day),
            p_text(nlohmann::json(bt.sources).dump()), p_int(o.min_nodes)};
        t.exec_prepared("upsert", pqxx::prepare::make_dynamic_params(v));
        t.exec_prepared("del_flags", o.id);
        for (std::size_t k = 0; k < o.flags.size(); ++k) {
          const QualityFlag& f = o.flags[k];
          t.exec_prepared("ins_flag", o.id, static_cast<long long>(k), f.rule, f.detail, f.excludes ? "true" : "false");
        }
      }
      for (const PriceObservation& p : o.prices) {
        std::vector<Param> v = {p_text(o.id),
                                p_text(price_kind_name(p.kind)),
                                p_num(p.usd_per_hour),
                                p_text(p.source.observed_at),
                                p_text(p.source.dataset),
                                p_text(p.source.locator)};
        pqxx::result res = t.exec_prepared("ins_obs", pqxx::prepare::make_dynamic_params(v));
        if (res.affected_rows() > 0) {
          ++r.observations_added;
          refresh_kind[static_cast<std::size_t>(p.kind)] = true;
        } else {
          ++r.observations_already_known;
        }
      }
      const std::int64_t cls = plan_class_of(o);
      for (PriceKind k : kPriceKinds)
        if (refresh_kind[static_cast<std::size_t>(k)])
          t.exec_prepared("refresh_latest", o.id, std::string(price_kind_name(k)), cls);
    }
    t.exec("INSERT INTO meta (key, value) VALUES ('revision', '1') ON CONFLICT (key) DO UPDATE SET "
           "value = (meta.value::bigint + 1)::text");
    return r;
  }
};

PgOfferStore::PgOfferStore(const std::string& conninfo, const GpuCatalog& gpus, const PgStoreOptions& opts)
    : impl_(std::make_unique<Impl>()) {
  impl_->conninfo = conninfo;
  // Never print a password: keep the scheme and host part only.
  std::string shown = conninfo;
  if (const auto at = shown.find('@'); at != std::string::npos) {
    const auto scheme = shown.find("://");
    if (scheme != std::string::npos && scheme < at) shown = shown.substr(0, scheme + 3) + "…" + shown.substr(at);
  }
  if (const auto pw = shown.find("password="); pw != std::string::npos) shown = shown.substr(0, pw) + "password=…";
  impl_->where = shown;
  impl_->gpus = &gpus;
  impl_->opts = opts;
  if (impl_->opts.connections == 0) impl_->opts.connections = 1;
  impl_->migrate(pg_store_schema_version());
}

void pg_store_migrate(const std::string& conninfo, int target_version) {
  if (target_version < 0 || target_version > pg_store_schema_version())
    throw_invalid("target_version", fmt::format("schema version {} is unknown", target_version),
                  fmt::format("0..{}", pg_store_schema_version()));
  PgOfferStore::Impl impl;
  impl.conninfo = conninfo;
  impl.where = "PostgreSQL";
  impl.gpus = &GpuCatalog::bundled();
  impl.migrate(target_version);
}

PgOfferStore::~PgOfferStore() = default;

int PgOfferStore::schema_version() {
  return impl_->with_connection([&](pqxx::connection& c) {
    pqxx::read_transaction t(c);
    return t.exec("SELECT version FROM gpuplan_schema")[0][0].as<int>();
  });
}

ImportResult PgOfferStore::import(const ImportBatch& batch) {
  validate_batch(batch);
  return impl_->with_connection([&](pqxx::connection& c) {
    pqxx::work w(c);
    ImportResult r = impl_->import_in(w, batch);
    w.commit();
    return r;
  });
}

ImportResult PgOfferStore::preview_import(const ImportBatch& batch) {
  validate_batch(batch);
  return impl_->with_connection([&](pqxx::connection& c) {
    pqxx::work w(c);
    ImportResult r = impl_->import_in(w, batch);
    w.abort();
    return r;
  });
}

bool PgOfferStore::seed_if_new(std::string_view seed_key, const std::function<ImportBatch()>& make_batch) {
  auto seeded = [&](pqxx::transaction_base& t) {  // the mark names this seed_key
    return !t.exec_params("SELECT 1 FROM meta WHERE key = $1 AND value = $2", "seeded", std::string(seed_key)).empty();
  };
  const bool done = impl_->with_connection([&](pqxx::connection& c) {
    pqxx::read_transaction t(c);
    return seeded(t);
  });
  if (done) return false;
  ImportBatch batch = make_batch();  // parse outside the lock
  validate_batch(batch);
  return impl_->with_connection([&](pqxx::connection& c) {
    pqxx::work w(c);
    impl_->lock_writes(w);
    if (seeded(w)) return false;
    impl_->import_in(w, batch);
    w.exec_params("INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                  "seeded", std::string(seed_key));
    w.commit();
    return true;
  });
}

namespace {

/// The statements query() runs, in order. Each takes $1 the price kind, $2 include_excluded,
/// $3.. the filter's values, then its `extra` values, then the limit (what is left of it) as the
/// last number when there is one: no LIMIT clause otherwise, so each case gets its own
/// prepared plan.
struct QueryStatement {
  std::string sql;
  std::vector<std::string> extra;
  std::vector<Param> params;  ///< $1, $2 and the filter's values as this statement compiled them
};
struct QuerySql {
  std::vector<QueryStatement> statements;
};

/// $1 the price kind, $2 include_excluded, then the filter's values as `where` compiled them:
/// the parameters every statement of query_sql and count_matching starts with.
std::vector<Param> query_params(const OfferQuery& q, const SqlWhere& where) {
  std::vector<Param> p = {p_text(price_kind_name(q.price_kind)), p_text(q.include_excluded ? "true" : "false")};
  for (const SqlValue& v : where.params) {
    if (const double* d = std::get_if<double>(&v))
      p.push_back(p_num(*d));
    else
      p.push_back(std::get<std::string>(v));
  }
  return p;
}

/// The evidence tier (catalog/freshness.hpp price_evidence_tier) of the joined latest price `lp`
/// (NULL when the offer has none of the kind: undated) as an SQL expression; its values are bound
/// from $n on and appended to `params` (see SqliteOfferStore's evidence_tier_sql).
std::string evidence_tier_sql(const OfferQuery& q, int& n, std::vector<Param>& params) {
  std::string rules;
  for (std::string_view r : price_questioning_rules()) {
    rules += fmt::format("{}${}::text", rules.empty() ? "" : ", ", n++);
    params.push_back(p_text(r));
  }
  std::string s = "(CASE WHEN EXISTS (SELECT 1 FROM flags f WHERE f.offer_id = o.id AND NOT f.excludes AND f.rule IN (" +
                  rules + ")) THEN 3 WHEN lp.last_seen_at IS NULL THEN 2";
  if (const auto cutoff = earliest_unstale_date(q.now_date, q.stale_after_days)) {
    s += fmt::format(" WHEN substr(lp.last_seen_at, 1, 10) COLLATE \"C\" > ${}::text THEN 2", n++);
    params.push_back(p_text(q.now_date.substr(0, 10)));
    s += fmt::format(" WHEN substr(lp.last_seen_at, 1, 10) COLLATE \"C\" < ${}::text THEN 1", n++);
    params.push_back(p_text(*cutoff));
  }
  return s + " ELSE 0 END)";
}

QuerySql query_sql(const OfferQuery& q, const GpuCatalog* gpus) {
  q.validate();
  const Filter filter = Filter::parse(q.filter);
  const SqlWhere where_sql = compile_filter_sql(filter, q.filter_context(gpus), SqlDialect::postgresql, 3);
  const std::string where = "(" + where_sql.sql + ")";
  const int first_extra = 3 + static_cast<int>(where_sql.params.size());
  const std::string key = sort_sql(q.sort);
  const std::string excluded =
      " AND ($2::boolean OR NOT EXISTS (SELECT 1 FROM flags f WHERE f.offer_id = o.id AND f.excludes))";
  auto limit = [&](int n) { return q.limit ? fmt::format(" LIMIT ${}::bigint", n) : std::string(); };
  QuerySql out;
  auto params_of = [&](const SqlWhere& w) { return query_params(q, w); };
  const std::vector<Param> full = params_of(where_sql);
  const char* col = indexed_sort_column(q.sort);
  if (col == nullptr || (q.evidence_first && !q.limit)) {
    // One statement sorted whole (see SqliteOfferStore::query).
    QueryStatement st{"", {}, full};
    int n = first_extra;
    const std::string tier = q.evidence_first ? evidence_tier_sql(q, n, st.params) + ", " : "";
    st.sql = std::string("SELECT ") + kOfferColumns + " FROM offers o" + kLatestPriceJoin + "WHERE " + where + excluded +
             " ORDER BY (" + key + ") IS NULL, " + tier + key + (offer_sort_descending(q.sort) ? " DESC" : "") +
             ", o.id COLLATE \"C\"" + limit(n);
    out.statements.push_back(std::move(st));
    return out;
  }
  // Two steps with the order ((key) IS NULL, key, id) of one statement (see SqliteOfferStore::
  // query): (1) offers with a sort key in the order of an index of latest_prices (..., key,
  // offer_id COLLATE "C"), so a first page can walk the index and stop after `limit` matches
  // (with evidence_first: one walk per evidence tier, best first); (2) only when (1) did not
  // fill the limit, offers without a key, by (tier and) id.
  const std::string from = std::string("SELECT ") + kOfferColumns + ", " + col + " AS sort_key, lp.offer_id AS sort_id"
                           " FROM latest_prices lp JOIN offers o ON o.id = lp.offer_id WHERE lp.kind = $1::text AND " +
                           col + " IS NOT NULL AND ";
  const std::string order = excluded + " ORDER BY " + col + ", lp.offer_id COLLATE \"C\"";
  // The filter's `gpus OP N` conjuncts repeated on lp.gpu_count (INCLUDEd in every order index,
  // migration 5): checked on the index entry, before the offer is read; implied by the filter.
  const auto counts = gpu_count_bounds(filter);
  auto count_terms = [&](int& n, std::vector<Param>& params) {
    std::string t;
    for (const auto& [op, v] : counts) {
      t += fmt::format("lp.gpu_count {} ${}::float8 AND ", op, n++);
      params.push_back(p_num(v));
    }
    return t;
  };
  auto tier_term = [&](int tier, int& n, std::vector<Param>& params) {
    return tier < 0 ? std::string() : evidence_tier_sql(q, n, params) + fmt::format(" = {} AND ", tier);
  };
  const std::vector<int> tiers = q.evidence_first ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{-1};
  const auto keys = index_candidates(filter, gpus ? *gpus : GpuCatalog::bundled());
  for (int tier : tiers) {
    if (keys) {
      // `gpu=X and ...` / `provider=X and ...`: the walk of the sort's order index with the
      // model or provider tested on the latest_prices row, the keys' conjunct compiled as TRUE
      // (see SqliteOfferStore::query; per-value indexes until schema 8).
      QueryStatement st;
      const SqlWhere branch_where =
          compile_filter_sql(filter, q.filter_context(gpus), SqlDialect::postgresql, 3, keys->conjunct);
      st.params = params_of(branch_where);
      int n = 3 + static_cast<int>(branch_where.params.size());
      const std::string bounds = count_terms(n, st.params) + tier_term(tier, n, st.params);
      std::string key_test;
      for (const auto& [column, value] : keys->keys) {
        key_test += fmt::format("{}lp.{} = ${}::text", key_test.empty() ? "(" : " OR ", column, n++);
        st.extra.push_back(value);
      }
      key_test += ") AND ";
      st.sql = from + bounds + key_test + "(" + branch_where.sql + ")" + order + limit(n);
      out.statements.push_back(std::move(st));
    } else {
      QueryStatement st;
      st.params = full;
      int n = first_extra;
      const std::string bounds = count_terms(n, st.params) + tier_term(tier, n, st.params);
      st.sql = from + bounds + where + order + limit(n);
      out.statements.push_back(std::move(st));
    }
  }
  QueryStatement unpriced{"", {}, full};
  int n = first_extra;
  const std::string tier = q.evidence_first ? evidence_tier_sql(q, n, unpriced.params) + ", " : "";
  unpriced.sql = std::string("SELECT ") + kOfferColumns + " FROM offers o" + kLatestPriceJoin + "WHERE " + col +
                 " IS NULL AND " + where + excluded + " ORDER BY " + tier + "o.id COLLATE \"C\"" + limit(n);
  out.statements.push_back(std::move(unpriced));
  return out;
}

/// The parameters of one statement of query_sql, `already` offers into the limit.
std::vector<Param> statement_params(const QueryStatement& st, const OfferQuery& q, std::size_t already) {
  std::vector<Param> p = st.params;
  for (const std::string& v : st.extra) p.push_back(v);
  if (q.limit) p.push_back(p_int(static_cast<std::int64_t>(*q.limit - already)));
  return p;
}

}  // namespace

std::size_t PgOfferStore::count_matching(const OfferQuery& q) {
  q.validate();
  const SqlWhere where =
      compile_filter_sql(Filter::parse(q.filter), q.filter_context(impl_->gpus), SqlDialect::postgresql, 3);
  // The WHERE of query_sql's single statement (same parameters), counted.
  const std::string sql = std::string("SELECT count(*) FROM offers o") + kLatestPriceJoin + "WHERE (" + where.sql +
                          ") AND ($2::boolean OR NOT EXISTS (SELECT 1 FROM flags f WHERE f.offer_id = o.id AND "
                          "f.excludes))";
  const std::vector<Param> p = query_params(q, where);
  return impl_->with_connection([&](pqxx::connection& c) {
    const std::string name = impl_->prepared_name(c, sql);
    pqxx::read_transaction t(c);
    const auto r = t.exec_prepared1(name, pqxx::prepare::make_dynamic_params(p));
    t.commit();
    return static_cast<std::size_t>(r[0].as<long long>());
  });
}

std::vector<std::string> PgOfferStore::explain_query(const OfferQuery& q) {
  const QuerySql sql = query_sql(q, impl_->gpus);
  return impl_->with_connection([&](pqxx::connection& c) {
    std::vector<std::string> texts;
    for (const QueryStatement& st : sql.statements) texts.push_back("EXPLAIN " + st.sql);
    const std::vector<std::string> names = impl_->prepared_names(c, texts);
    pqxx::read_transaction t(c);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::string plan;
      for (const auto& r :
           t.exec_prepared(names[i], pqxx::prepare::make_dynamic_params(statement_params(sql.statements[i], q, 0))))
        plan += r[0].as<std::string>() + "\n";
      out.push_back(plan);
    }
    return out;
  });
}

std::vector<Offer> PgOfferStore::query(const OfferQuery& q) {
  const QuerySql sql = query_sql(q, impl_->gpus);
  return impl_->with_connection([&](pqxx::connection& c) {
    std::vector<std::string> texts;
    for (const QueryStatement& st : sql.statements) texts.push_back(st.sql);
    const std::vector<std::string> names = impl_->prepared_names(c, texts);
    pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> t(c);
    if (q.cheapest_per_plan_class) {
      // A small store is read whole and the bound applied to it (kBoundedReadScanMaxRows).
      const std::size_t n = impl_->bounded_scan_max_rows.load();
      const auto rows = t.exec_params1("SELECT count(*) FROM (SELECT 1 FROM latest_prices LIMIT $1) x",
                                       static_cast<std::int64_t>(n) + 1)[0].as<std::size_t>();
      if (rows > n) {
        std::vector<Offer> out = impl_->bounded_query(c, t, q);
        t.commit();
        return out;
      }
    }
    std::vector<Offer> out;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (q.limit && out.size() >= *q.limit) break;
      const std::vector<Param> p = statement_params(sql.statements[i], q, out.size());
      for (const auto& r : t.exec_prepared(names[i], pqxx::prepare::make_dynamic_params(p))) out.push_back(read_offer(r));
    }
    if (q.memory_floor) std::erase_if(out, [&](const Offer& o) { return !passes_memory_floor(o, *q.memory_floor); });
    impl_->load_details(t, out, q.all_observations, true);
    t.commit();
    if (q.cheapest_per_plan_class)  // a small store: the bounded read's rule over every match
      out = select_cheapest_per_plan_class(std::move(out), *q.cheapest_per_plan_class,
                                           clean_date_window(q.now_date, q.stale_after_days));
    return out;
  });
}

void PgOfferStore::set_bounded_read_scan_max_rows(std::size_t rows) { impl_->bounded_scan_max_rows = rows; }

std::optional<Offer> PgOfferStore::get(std::string_view id) {
  return impl_->with_connection([&](pqxx::connection& c) -> std::optional<Offer> {
    pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> t(c);
    std::optional<Offer> o = impl_->load_facts(t, id);
    if (!o) return std::nullopt;
    std::vector<Offer> one{std::move(*o)};
    impl_->load_details(t, one, true, false);
    t.commit();
    return std::move(one[0]);
  });
}

std::vector<PriceObservation> PgOfferStore::history(std::string_view offer_id) {
  return impl_->with_connection([&](pqxx::connection& c) {
    pqxx::read_transaction t(c);
    std::vector<Offer> one(1);
    one[0].id = std::string(offer_id);
    impl_->load_details(t, one, true, false);
    return one[0].prices;
  });
}

SnapshotCommit PgOfferStore::commit_snapshot(const SnapshotRecord& record, const ImportBatch* batch) {
  if (batch != nullptr) validate_batch(*batch);
  return impl_->with_connection([&](pqxx::connection& c) {
    pqxx::work w(c);
    impl_->lock_writes(w);
    SnapshotCommit out;
    out.record = record;
    // Unchanged = the same content as the LAST accepted snapshot of the source (read under the
    // write lock, so two fetches at once import once); an earlier content seen again is new.
    bool accepted_exists = false;
    if (record.status == "accepted") {
      const pqxx::result last = w.exec_params(
          "SELECT content_hash, parser_version FROM snapshots WHERE source = $1 AND status = 'accepted' "
          "ORDER BY fetched_at DESC, id DESC LIMIT 1",
          record.source);
      // A newer parser re-reads the same content: not "unchanged".
      accepted_exists = !last.empty() && last[0][0].as<std::string>() == record.content_hash &&
                        last[0][1].as<std::int64_t>() == record.parser_version;
    }
    if (accepted_exists) {
      out.already_accepted = true;
      out.record.status = "unchanged";
      out.record.observations_added = 0;
      out.record.detail = kAlreadyAcceptedDetail;
    } else if (record.status == "accepted" && batch != nullptr) {
      out.import = impl_->import_in(w, *batch);
      out.record.observations_added = out.import.observations_added;
    }
    if (batch != nullptr && out.record.status != "rejected")
      Impl::apply_seen_again(w, *batch, out.record.status == "unchanged");
    const SnapshotRecord& r = out.record;
    out.record.id =
        w.exec_params("INSERT INTO snapshots (source, url, urls_json, fetched_at, content_hash, parser_version, status, "
                      "rows_read, offers, observations_added, detail) VALUES ($1, $2, $3::jsonb, $4::timestamptz, $5, "
                      "$6::integer, $7, $8::bigint, $9::bigint, $10::bigint, $11) RETURNING id",
                      r.source, r.url, nlohmann::json(r.urls).dump(), r.fetched_at, r.content_hash, r.parser_version,
                      r.status, static_cast<long long>(r.rows_read), static_cast<long long>(r.offers),
                      static_cast<long long>(r.observations_added), r.detail)[0][0]
            .as<std::int64_t>();
    w.commit();
    return out;
  });
}

std::optional<SnapshotRecord> PgOfferStore::last_snapshot(std::string_view source, std::string_view status) {
  return impl_->with_connection([&](pqxx::connection& c) -> std::optional<SnapshotRecord> {
    pqxx::read_transaction t(c);
    pqxx::result r = t.exec_params(std::string("SELECT ") + kSnapshotColumns +
                                       " FROM snapshots WHERE source = $1 AND status = $2 "
                                       "ORDER BY fetched_at DESC, id DESC LIMIT 1",
                                   std::string(source), std::string(status));
    if (r.empty()) return std::nullopt;
    return read_snapshot(r[0]);
  });
}

std::optional<std::string> PgOfferStore::first_accepted_with_hash(std::string_view source,
                                                                  std::string_view content_hash) {
  return impl_->with_connection([&](pqxx::connection& c) -> std::optional<std::string> {
    pqxx::read_transaction t(c);
    pqxx::result r = t.exec_params(
        "SELECT to_char(min(fetched_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM snapshots "
        "WHERE source = $1 AND content_hash = $2 AND status = 'accepted'",
        std::string(source), std::string(content_hash));
    return opt_text(r[0][0]);
  });
}

std::vector<SnapshotRecord> PgOfferStore::snapshots(std::string_view source, std::size_t limit) {
  return impl_->with_connection([&](pqxx::connection& c) {
    pqxx::read_transaction t(c);
    std::vector<SnapshotRecord> out;
    for (const auto& r : t.exec_params(std::string("SELECT ") + kSnapshotColumns +
                                           " FROM snapshots WHERE ($1 = '' OR source = $1) "
                                           "ORDER BY fetched_at DESC, id DESC LIMIT $2::bigint",
                                       std::string(source), static_cast<long long>(limit)))
      out.push_back(read_snapshot(r));
    return out;
  });
}

std::uint64_t PgOfferStore::revision() {
  return impl_->with_connection([&](pqxx::connection& c) {
    pqxx::read_transaction t(c);
    const pqxx::result r = t.exec("SELECT value::bigint FROM meta WHERE key = 'revision'");
    return r.empty() ? std::uint64_t{0} : r[0][0].as<std::uint64_t>();
  });
}

std::optional<std::string> PgOfferStore::write_refusal() {
  return impl_->with_connection([&](pqxx::connection& c) -> std::optional<std::string> {
    pqxx::read_transaction t(c);  // BEGIN READ ONLY: so the session default is read, not transaction_read_only
    const pqxx::row r = t.exec1(
        "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only') = 'on', "
        "has_table_privilege('snapshots', 'INSERT') AND has_table_privilege('observations', 'INSERT') "
        "AND has_table_privilege('offers', 'INSERT') AND has_table_privilege('offers', 'UPDATE')");
    if (r[0].as<bool>()) return std::string("the PostgreSQL server is a standby (read-only replica)");
    if (r[1].as<bool>()) return std::string("the PostgreSQL session is read-only (default_transaction_read_only)");
    if (!r[2].as<bool>())
      return std::string("the PostgreSQL user may not INSERT/UPDATE the offers, observations and snapshots tables");
    return std::nullopt;
  });
}

StoreCounts PgOfferStore::counts() {
  return impl_->with_connection([&](pqxx::connection& c) {
    pqxx::read_transaction t(c);
    pqxx::row r = t.exec1(
        "SELECT (SELECT count(*) FROM offers), (SELECT count(*) FROM observations), "
        "(SELECT count(DISTINCT offer_id) FROM flags WHERE excludes)");
    StoreCounts s;
    s.offers = r[0].as<std::size_t>();
    s.observations = r[1].as<std::size_t>();
    s.excluded_offers = r[2].as<std::size_t>();
    return s;
  });
}

}  // namespace gpuplan
