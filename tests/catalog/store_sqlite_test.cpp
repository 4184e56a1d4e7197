// SqliteOfferStore specifics: a real database file, schema versioning, seeding, WAL and locks.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "catalog/sqlite_store.hpp"
#include "store_fixtures.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    static int n = 0;
    path_ = fs::temp_directory_path() / ("gpuplan-store-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

/// Runs one SQL statement on its own raw connection (as another process would).
void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}

TEST(SqliteStore, PersistsAcrossReopen) {
  TempDir dir;
  const std::string db = dir.file("offers.sqlite");
  {
    SqliteOfferStore s(db);
    s.import(testing::fixture_batch());
  }
  SqliteOfferStore s(db);
  EXPECT_EQ(s.counts().offers, 7u);
  EXPECT_EQ(s.counts().observations, 11u);
  EXPECT_EQ(s.schema_version(), sqlite_store_schema_version());
}

TEST(SqliteStore, NewerSchemaIsAConflict) {
  TempDir dir;
  const std::string db = dir.file("offers.sqlite");
  { SqliteOfferStore s(db); }
  raw_exec(db, "PRAGMA user_version = " + std::to_string(sqlite_store_schema_version() + 1));
  try {
    SqliteOfferStore s(db);
    FAIL() << "expected a conflict";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::conflict);
    EXPECT_EQ(e.where(), db);
  }
}

TEST(SqliteStore, UsesWalJournal) {
  TempDir dir;
  const std::string db = dir.file("offers.sqlite");
  { SqliteOfferStore s(db); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(raw);
}

TEST(SqliteStore, SeedsOnceInTheDatabaseLife) {
  TempDir dir;
  const std::string db = dir.file("offers.sqlite");
  int calls = 0;
  auto make = [&] {
    ++calls;
    return testing::fixture_batch();
  };
  {
    SqliteOfferStore s(db);
    EXPECT_TRUE(s.seed_if_new("bundled sha256:1", make));
    EXPECT_FALSE(s.seed_if_new("bundled sha256:1", make));
  }
  SqliteOfferStore s(db);
  EXPECT_FALSE(s.seed_if_new("bundled sha256:1", make));
  EXPECT_EQ(calls, 1);  // the batch is not even built once seeded
  EXPECT_EQ(s.counts().offers, 7u);
}

TEST(SqliteStore, ReadersWorkWhileAnotherConnectionWrites) {
  TempDir dir;
  const std::string db = dir.file("offers.sqlite");
  SqliteOfferStore reader(db);
  reader.import(testing::fixture_batch());
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN IMMEDIATE; DELETE FROM flags;", nullptr, nullptr, nullptr), SQLITE_OK);
  // The uncommitted write is invisible and does not block the reader (WAL).
  OfferQuery q;
  q.include_excluded = true;
  EXPECT_EQ(reader.query(q).size(), 7u);
  EXPECT_EQ(reader.counts().excluded_offers, 2u);
  // A second writer waits for the busy timeout, then reports the lock.
  SqliteOfferStore impatient(db, nullptr, 50);
  try {
    impatient.import(testing::fixture_batch());
    FAIL() << "expected the database to be locked";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unavailable);
  }
  sqlite3_exec(writer, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
  EXPECT_EQ(impatient.import(testing::fixture_batch()).offers_unchanged, 7u);
}

// A file that is not a database is a "corrupt store" conflict (exit 4), issue 11.
TEST(SqliteStore, NotADatabaseIsACorruptStoreConflict) {
  TempDir dir;
  const std::string path = dir.file("notes.sqlite");
  std::ofstream(path) << "this is a text file, not a database, padded to more than one page of bytes "
                      << std::string(600, 'x');
  try {
    SqliteOfferStore s(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::conflict);
    EXPECT_NE(std::string(e.what()).find("corrupt store"), std::string::npos) << e.what();
  }
}

TEST(SqliteStore, DefaultPathFollowsXdg) {
  const char* old_xdg = std::getenv("XDG_DATA_HOME");
  const std::string saved = old_xdg ? old_xdg : "";
  const char* old_home = std::getenv("HOME");
  const std::string saved_home = old_home ? old_home : "";
  ::setenv("XDG_DATA_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(default_offer_db_path(), "/tmp/xdg-test/gpuplan/offers.sqlite");
  ::setenv("XDG_DATA_HOME", "", 1);
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(default_offer_db_path(), "/home/someone/.local/share/gpuplan/offers.sqlite");
  if (old_home) ::setenv("HOME", saved_home.c_str(), 1);
  if (old_xdg)
    ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_DATA_HOME");
}

// The first page (a filter, the default or price order, a limit) reads latest_prices through
// the index that gives its order: no sort of every match, no read of price history (issue 12).
TEST(SqliteStore, FirstPageWalksTheLatestPriceIndex) {
  SqliteOfferStore store(":memory:");
  store.import(testing::fixture_batch());
  OfferQuery q;
  q.filter = "gpus>=1 not stale";
  q.now_date = "2026-11-30";
  q.limit = 50;
  auto plans = store.explain_query(q);
  ASSERT_EQ(plans.size(), 2u);  // priced offers by the index, then (if the page is not full) unpriced
  EXPECT_NE(plans[0].find("latest_prices_by_gpu_hour"), std::string::npos) << plans[0];
  EXPECT_EQ(plans[0].find("B-TREE FOR ORDER BY"), std::string::npos) << plans[0];
  EXPECT_EQ(plans[0].find("observations"), std::string::npos) << plans[0];
  q.sort = "price";
  plans = store.explain_query(q);
  EXPECT_NE(plans[0].find("latest_prices_by_price"), std::string::npos) << plans[0];
  EXPECT_EQ(plans[0].find("B-TREE FOR ORDER BY"), std::string::npos) << plans[0];
  // `gpu=X and ...`: the walk of the order index, the model tested on the latest_prices row
  // before the offer is read (schema 8 dropped the per-model and per-provider indexes); no scan
  // of either table, no sort.
  q.sort = std::string(kSortPricePerGpuHour);
  q.filter = "gpu=H100 gpus>=1 not stale";
  plans = store.explain_query(q);
  EXPECT_NE(plans[0].find("latest_prices_by_gpu_hour"), std::string::npos) << plans[0];
  EXPECT_EQ(plans[0].find("latest_prices_by_gpu_name"), std::string::npos) << plans[0];
  EXPECT_EQ(plans[0].find("B-TREE FOR ORDER BY"), std::string::npos) << plans[0];
  EXPECT_EQ(plans[0].find("SCAN o"), std::string::npos) << plans[0];
  EXPECT_EQ(plans[0].find("observations"), std::string::npos) << plans[0];
  q.filter = "provider=aws or provider=gcp";
  plans = store.explain_query(q);
  EXPECT_NE(plans[0].find("latest_prices_by_gpu_hour"), std::string::npos) << plans[0];
  EXPECT_EQ(plans[0].find("B-TREE FOR ORDER BY"), std::string::npos) << plans[0];
  q.sort = "price";
  q.filter = "gpu=H100";
  plans = store.explain_query(q);
  EXPECT_NE(plans[0].find("latest_prices_by_price"), std::string::npos) << plans[0];
  EXPECT_EQ(plans[0].find("B-TREE FOR ORDER BY"), std::string::npos) << plans[0];
  // The walk returns what the filter means: every H100 offer (as many as the store counts for
  // the filter) and only those, cheapest first.
  q.filter = "gpu=H100";
  q.limit = 1000;
  const auto page = store.query(q);
  ASSERT_FALSE(page.empty());
  EXPECT_EQ(page.size(), store.count_matching(q));
  for (std::size_t i = 0; i < page.size(); ++i) {
    EXPECT_NE(page[i].gpu_name.value_or("").find("H100"), std::string::npos) << page[i].id;
    if (i > 0 && page[i].latest_price(PriceKind::on_demand) && page[i - 1].latest_price(PriceKind::on_demand)) {
      EXPECT_LE(page[i - 1].latest_price(PriceKind::on_demand)->usd_per_hour,  // q.sort is "price"
                page[i].latest_price(PriceKind::on_demand)->usd_per_hour)
          << page[i].id;
    }
  }
  // The planner's query (no filter, no limit) reads no history either.
  for (const auto& p : store.explain_query(OfferQuery{})) EXPECT_EQ(p.find("observations"), std::string::npos) << p;
}

// A store of schema version 2 (before latest_prices) upgrades with the latest prices backfilled
// from its history: the newest date wins, whatever the order the rows were written in.
TEST(SqliteStore, MigrationThreeBackfillsLatestPrices) {
  TempDir dir;
  const std::string path = dir.file("v2.sqlite");
  { SqliteOfferStore s(path); s.import(testing::fixture_batch()); }
  // Back to version 2 (without what migrations 3 and 7 add: latest_prices, offers.min_nodes), then
  // history written out of date order (a newer, then an older price).
  raw_exec(path, "DROP TABLE latest_prices; ALTER TABLE offers DROP COLUMN min_nodes; PRAGMA user_version = 2;");
  raw_exec(path, "INSERT INTO observations (offer_id, kind, usd_per_hour, observed_at, dataset, locator) VALUES "
                 "('vast/rtx4090', 'on-demand', 0.30, '2026-11-28', 'test', 'x'), "
                 "('vast/rtx4090', 'on-demand', 0.20, '2026-10-01', 'test', 'x')");
  SqliteOfferStore s(path);
  EXPECT_EQ(s.schema_version(), sqlite_store_schema_version());
  OfferQuery q;
  q.filter = "id=vast/rtx4090";
  const auto v = s.query(q);
  ASSERT_EQ(v.size(), 1u);
  ASSERT_NE(v[0].latest_price(PriceKind::on_demand), nullptr);
  EXPECT_DOUBLE_EQ(v[0].latest_price(PriceKind::on_demand)->usd_per_hour, 0.30);
  // Every offer's latest price equals the one its full history gives.
  OfferQuery all;
  all.include_excluded = true;
  for (const Offer& o : s.query(all)) {
    const auto full = s.get(o.id);
    ASSERT_TRUE(full);
    for (PriceKind k : {PriceKind::on_demand, PriceKind::spot}) {
      ASSERT_EQ(o.latest_price(k) == nullptr, full->latest_price(k) == nullptr) << o.id;
      if (o.latest_price(k)) {
        EXPECT_DOUBLE_EQ(o.latest_price(k)->usd_per_hour, full->latest_price(k)->usd_per_hour);
      }
    }
  }
}

/// Names and definitions of every index in the store (sqlite_master), as another process sees them.
std::vector<std::string> index_definitions(const std::string& path);

// Migration 5 (issues 11, 12) from a store of version 4 (then 6): offers and history written
// by version 4 survive; latest_prices becomes a rowid table with the offer's gpu_count, whose
// order indexes end with gpu_count instead of the text id; observations_by_kind is gone; the
// latest price is the newest dated one, and `gpus` filters read the upgraded table.
TEST(SqliteStore, MigratesFromThePreviousVersionKeepingData) {
  TempDir dir;
  const std::string path = dir.file("v4.sqlite");
  const int v = sqlite_store_schema_version();
  ASSERT_EQ(v, 10);
  sqlite_store_migrate(path, 4);
  raw_exec(path,
           "INSERT INTO offers (id, provider, instance_type, region, zone, gpu_name_raw, gpu_name, gpu_count, "
           "intra_node_link, form_factor, inter_node_network) VALUES "
           "('p/big/r', 'P', 'big', 'r', '', 'H100', 'NVIDIA H100 SXM', 8, 'unknown', '', 'unknown'), "
           "('p/one/r', 'P', 'one', 'r', '', 'H100', 'NVIDIA H100 SXM', 1, 'unknown', '', 'unknown');"
           "INSERT INTO observations (offer_id, kind, usd_per_hour, observed_at, dataset, locator) VALUES "
           "('p/big/r', 'on-demand', 24.0, '2026-11-01', 'test', 'x:1'), "
           "('p/big/r', 'on-demand', 20.0, '2026-10-01', 'test', 'x:2'), "
           "('p/one/r', 'on-demand', 2.0, '2026-11-01', 'test', 'x:3');"
           // latest_prices as version 4 kept it (WITHOUT ROWID, keyed by the text id)
           "INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, "
           "gpu_name, gpu_norm, provider, locator) VALUES "
           "('p/big/r', 'on-demand', 1, 24.0, 3.0, '2026-11-01', 'test', 'NVIDIA H100 SXM', 'h100', 'p', 'x:1'), "
           "('p/one/r', 'on-demand', 3, 2.0, 2.0, '2026-11-01', 'test', 'NVIDIA H100 SXM', 'h100', 'p', 'x:3');");
  SqliteOfferStore s(path);
  EXPECT_EQ(s.schema_version(), v);
  OfferQuery q;
  q.filter = "gpu=H100 gpus>=8";
  q.limit = 10;
  auto got = s.query(q);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, "p/big/r");
  ASSERT_NE(got[0].latest_price(PriceKind::on_demand), nullptr);
  EXPECT_DOUBLE_EQ(got[0].latest_price(PriceKind::on_demand)->usd_per_hour, 24.0);  // the newer date
  EXPECT_EQ(got[0].latest_price(PriceKind::on_demand)->source.locator, "x:1");
  q.filter = "gpus<8";
  got = s.query(q);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, "p/one/r");
  EXPECT_EQ(s.get("p/big/r")->prices.size(), 2u);
  const auto defs = index_definitions(path);
  auto has = [&](const std::string& text) {
    return std::any_of(defs.begin(), defs.end(), [&](const std::string& d) { return d.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("latest_prices_by_gpu_hour: CREATE INDEX latest_prices_by_gpu_hour ON latest_prices(kind, "
                  "usd_per_gpu_hour, gpu_count, gpu_norm, gpu_name, provider)"));
  EXPECT_FALSE(has("latest_prices_by_gpu_name"));  // migration 8
  EXPECT_TRUE(has("latest_prices_by_price: CREATE INDEX latest_prices_by_price ON latest_prices(kind, usd_per_hour, "
                  "gpu_count, gpu_norm, gpu_name, provider)"));
  EXPECT_FALSE(has("observations_by_kind"));
  EXPECT_FALSE(has("offer_id)"));  // no order index ends with the text id any more
  // A new import keeps gpu_count in latest_prices (read back through a `gpus` walk).
  ImportBatch b;
  Offer o = testing::base_offer("p/four/r", "P", "four", "r", "H100", "NVIDIA H100 SXM", 4, 80e9);
  o.prices.push_back(testing::obs(PriceKind::on_demand, 9.0, "2026-11-02", "test"));
  b.offers.push_back(o);
  s.import(b);
  q.filter = "gpu=H100 gpus=4";
  got = s.query(q);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, "p/four/r");
}

// Migration 6 (issue 12) from a store of the previous version: latest prices written by version 5
// get their plan class (two listings of one machine in one place share one; a 4-GPU offer has
// its own), so the bounded read keeps the cheaper of the two and the other machine.
TEST(SqliteStore, MigratesFromVersion5FillingPlanClasses) {
  TempDir dir;
  const std::string path = dir.file("v5.sqlite");
  sqlite_store_migrate(path, 5);
  raw_exec(path,
           "INSERT INTO offers (id, provider, instance_type, region, zone, gpu_name_raw, gpu_name, gpu_count, "
           "intra_node_link, form_factor, inter_node_network) VALUES "
           "('p/big/r', 'p', 'big', 'r', '', 'H100', 'NVIDIA H100 SXM', 8, 'unknown', '', 'unknown'), "
           "('p/big/r/dup', 'p', 'big', 'r', '', 'H100', 'NVIDIA H100 SXM', 8, 'unknown', '', 'unknown'), "
           "('p/four/r', 'p', 'four', 'r', '', 'H100', 'NVIDIA H100 SXM', 4, 'unknown', '', 'unknown');"
           "INSERT INTO observations (seq, offer_id, kind, usd_per_hour, observed_at, dataset, locator) VALUES "
           "(1, 'p/big/r', 'on-demand', 24.0, '2026-11-01', 'test', 'x:1'), "
           "(2, 'p/big/r/dup', 'on-demand', 20.0, '2026-11-01', 'test', 'x:2'), "
           "(3, 'p/four/r', 'on-demand', 13.0, '2026-11-01', 'test', 'x:3');"
           "INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, "
           "gpu_name, gpu_norm, provider, locator, gpu_count) VALUES "
           "('p/big/r', 'on-demand', 1, 24.0, 3.0, '2026-11-01', 'test', 'NVIDIA H100 SXM', 'h100', 'p', 'x:1', 8), "
           "('p/big/r/dup', 'on-demand', 2, 20.0, 2.5, '2026-11-01', 'test', 'NVIDIA H100 SXM', 'h100', 'p', 'x:2', 8), "
           "('p/four/r', 'on-demand', 3, 13.0, 3.25, '2026-11-01', 'test', 'NVIDIA H100 SXM', 'h100', 'p', 'x:3', 4);");
  SqliteOfferStore s(path);
  EXPECT_EQ(s.schema_version(), sqlite_store_schema_version());
  OfferQuery q;
  q.now_date = "2026-11-30";
  q.cheapest_per_plan_class = 1;
  s.set_bounded_read_scan_max_rows(0);  // the index walks read the backfilled classes
  const auto got = s.query(q);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, "p/big/r/dup");  // $2.50 per GPU-hour, the cheaper listing of the 8-GPU machine in r
  EXPECT_EQ(got[1].id, "p/four/r");
  const auto defs = index_definitions(path);
  auto has = [&](const std::string& text) {
    return std::any_of(defs.begin(), defs.end(), [&](const std::string& d) { return d.find(text) != std::string::npos; });
  };
  // Migration 10 (issue 9 trial D3): the class walks read when each price was last seen, filled
  // with its observed_at for the rows written before.
  EXPECT_TRUE(has("latest_prices_by_class_price: CREATE INDEX latest_prices_by_class_price ON latest_prices(kind, "
                  "plan_class, usd_per_hour, last_seen_at)"));
  EXPECT_TRUE(has("latest_prices_by_class_date: CREATE INDEX latest_prices_by_class_date ON latest_prices(kind, "
                  "plan_class, last_seen_at)"));
  ASSERT_NE(got[1].latest_price(PriceKind::on_demand), nullptr);
  EXPECT_EQ(got[1].latest_price(PriceKind::on_demand)->last_seen_at, "2026-11-01");
  EXPECT_TRUE(has("latest_prices_by_class_date"));
  // Migration 8 (issue 11): the per-model and per-provider order indexes are gone.
  for (const char* gone : {"latest_prices_by_gpu_name", "latest_prices_by_gpu_norm", "latest_prices_by_provider"})
    EXPECT_FALSE(has(gone)) << gone;
}

// Migration 7 (issue 9, Offer::min_nodes) on a store written by version 6: its offers and prices
// survive with no minimum (NULL) and are read as before; the upgraded store keeps a minimum
// imported after it across a reopen, and a minimum gives an offer its own plan class.
TEST(SqliteStore, MigratesFromVersion6AddingMinNodes) {
  TempDir dir;
  const std::string path = dir.file("v6.sqlite");
  sqlite_store_migrate(path, 6);
  Offer old = testing::base_offer("p/big/r", "p", "big", "r", "H100", "NVIDIA H100 SXM", 8, std::nullopt);
  raw_exec(path,
           "INSERT INTO offers (id, provider, instance_type, region, zone, gpu_name_raw, gpu_name, gpu_count, "
           "intra_node_link, form_factor, inter_node_network) VALUES "
           "('p/big/r', 'p', 'big', 'r', '', 'H100', 'NVIDIA H100 SXM', 8, 'unknown', '', 'unknown');"
           "INSERT INTO observations (seq, offer_id, kind, usd_per_hour, observed_at, dataset, locator) VALUES "
           "(1, 'p/big/r', 'on-demand', 24.0, '2026-11-01', 'test', 'x:1');"
           "INSERT INTO latest_prices (offer_id, kind, seq, usd_per_hour, usd_per_gpu_hour, observed_at, dataset, "
           "gpu_name, gpu_norm, provider, locator, gpu_count, plan_class) VALUES "
           "('p/big/r', 'on-demand', 1, 24.0, 3.0, '2026-11-01', 'test', 'NVIDIA H100 SXM', 'h100', 'p', 'x:1', 8, " +
               std::to_string(plan_class_of(old)) + ");");
  {
    SqliteOfferStore s(path);
    EXPECT_EQ(s.schema_version(), sqlite_store_schema_version());
    auto o = s.get("p/big/r");
    ASSERT_TRUE(o);
    EXPECT_EQ(o->min_nodes, std::nullopt);
    ASSERT_EQ(o->prices.size(), 1u);
    EXPECT_DOUBLE_EQ(o->prices[0].usd_per_hour, 24.0);
    OfferQuery q;
    q.filter = "id=p/big/r and price=24";
    EXPECT_EQ(s.query(q).size(), 1u);
    ImportBatch b;
    b.dataset = "test";
    Offer c = testing::base_offer("p/cluster/r", "p", "cluster", "r", "H100", "NVIDIA H100 SXM", 8, std::nullopt);
    c.inter_node_network = InterNodeNetwork::infiniband;
    c.max_nodes = 16;
    c.min_nodes = 4;
    c.prices = {testing::obs(PriceKind::reserved_1m, 16.0, "2026-11-02")};
    b.offers = {c};
    b.rows_read = 1;
    s.import(b);
    EXPECT_NE(plan_class_of(c), plan_class_of([&] {
                Offer d = c;
                d.min_nodes.reset();
                return d;
              }()));
  }
  SqliteOfferStore again(path);
  EXPECT_EQ(again.get("p/cluster/r")->min_nodes, 4);
}

std::vector<std::string> index_definitions(const std::string& path) {
  std::vector<std::string> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'index' ORDER BY name",
                               -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW)
    out.push_back(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))) + ": " +
                  reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

/// `n` new 1x H100 offers, one dated on-demand price each: $1.00 + i/1000 per hour.
ImportBatch bulk_batch(std::size_t n) {
  ImportBatch b;
  b.dataset = "test:bulk";
  for (std::size_t i = 0; i < n; ++i) {
    const std::string inst = "node-" + std::to_string(i);
    Offer o = testing::base_offer("bulkcloud/" + inst + "/r1", "bulkcloud", inst, "r1", "H100", "NVIDIA H100 SXM", 1, 80e9);
    o.prices.push_back(testing::obs(PriceKind::on_demand, 1.0 + static_cast<double>(i) / 1000.0, "2026-11-01", "test:bulk"));
    b.offers.push_back(std::move(o));
  }
  return b;
}

// Issue 11 (200,000 rows "well under 5 s"): a bulk import (>= 16,384 new offers, at least as many as
// the store holds) builds latest_prices' secondary indexes after the rows are in instead of
// inserting into 8 price-ordered B-trees per row. The store must come out with exactly the same
// indexes, answering the same first pages through them; a bulk import that fails halfway must
// leave the indexes and the rows as they were (the drop is inside the import's transaction).
TEST(SqliteStore, BulkImportRebuildsTheSameIndexes) {
  TempDir dir;
  const std::string path = dir.file("bulk.sqlite");
  { SqliteOfferStore s(path); s.import(testing::fixture_batch()); }
  const std::vector<std::string> before = index_definitions(path);
  ASSERT_GE(before.size(), 10u);  // 8 + 1 unique on latest_prices, 1 on observations, more on snapshots

  // A failing bulk import: its last offer reuses a stored id with different hardware (an error).
  ImportBatch bad = bulk_batch(20000);
  Offer clash = testing::fixture_offers().front();
  clash.gpu_count = 4;
  bad.offers.push_back(clash);
  {
    SqliteOfferStore s(path);
    EXPECT_THROW(s.import(bad), Error);
    EXPECT_EQ(s.counts().offers, 7u);
  }
  EXPECT_EQ(index_definitions(path), before);

  SqliteOfferStore s(path);
  const ImportResult r = s.import(bulk_batch(20000));
  EXPECT_EQ(r.offers_added, 20000u);
  EXPECT_EQ(index_definitions(path), before);
  // The cheapest per-GPU H100 offers come from the rebuilt index in price order: the bulk rows
  // cost $1.000, $1.001, ... per GPU-hour, below every fixture H100 price.
  OfferQuery q;
  q.filter = "gpu=H100 provider=bulkcloud";
  q.limit = 3;
  const auto v = s.query(q);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].id, "bulkcloud/node-0/r1");
  EXPECT_EQ(v[1].id, "bulkcloud/node-1/r1");
  EXPECT_EQ(v[2].id, "bulkcloud/node-2/r1");
  EXPECT_NE(s.explain_query(q)[0].find("latest_prices_by_"), std::string::npos);
}

}  // namespace
}  // namespace gpuplan
