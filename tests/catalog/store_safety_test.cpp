// Issue 11: the store never writes where it should not, a damaged store is a "corrupt store"
// error (exit 4), and --dry-run never waits for the write lock.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "catalog/importers.hpp"
#include "catalog/open_store.hpp"
#include "catalog/sqlite_store.hpp"
#include "hardware/gpu_spec.hpp"
#include "store_fixtures.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

class StoreSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuplan-store-safety-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& n) const { return (dir_ / n).string(); }
  fs::path dir_;
};

sqlite3* raw_open(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  return db;
}
void raw_exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
}
std::vector<std::string> tables(const std::string& path) {
  sqlite3* db = raw_open(path);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master ORDER BY name", -1, &s, nullptr);
  std::vector<std::string> out;
  while (sqlite3_step(s) == SQLITE_ROW) out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

/// The CLI's way in: open_store on a path (a plain path is SQLite), seeding a new store.
void open_offer_store(const std::string& path) {
  const SystemClock clock;
  (void)open_store(path, StoreContext{GpuCatalog::bundled(), clock});
}

ErrorKind kind_of(const std::function<void()>& f, std::string* what = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (what) *what = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return ErrorKind::internal;
}

TEST_F(StoreSafety, UnrelatedSqliteFileIsRefusedAndLeftUntouched) {
  // The issue: --db on an unrelated SQLite file added gpuplan's tables and 1,603 offers to it.
  const std::string p = file("notes.sqlite");
  sqlite3* db = raw_open(p);
  raw_exec(db, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')");
  sqlite3_close(db);
  const auto size_before = fs::file_size(p);
  std::string what;
  EXPECT_EQ(kind_of([&] { open_offer_store(p); }, &what), ErrorKind::conflict);
  EXPECT_NE(what.find("not a gpuplan store"), std::string::npos) << what;
  EXPECT_EQ(tables(p), std::vector<std::string>{"notes"});
  EXPECT_EQ(fs::file_size(p), size_before);
}

TEST_F(StoreSafety, ForeignApplicationIdIsRefused) {
  const std::string p = file("other-app.sqlite");
  sqlite3* db = raw_open(p);
  raw_exec(db, "PRAGMA application_id = 1234");
  sqlite3_close(db);
  EXPECT_EQ(kind_of([&] { SqliteOfferStore s(p); }), ErrorKind::conflict);
}

TEST_F(StoreSafety, StoreOfAnOlderGpuplanIsAcceptedAndMarked) {
  const std::string p = file("old.sqlite");
  {
    SqliteOfferStore s(p);
    s.import(testing::fixture_batch());
  }
  sqlite3* db = raw_open(p);
  raw_exec(db, "PRAGMA application_id = 0");  // as written before application ids
  sqlite3_close(db);
  SqliteOfferStore s(p);
  EXPECT_EQ(s.counts().offers, 7u);
}

// Found in a new-user trial: a default store created by an older gpuplan kept that build's
// bundled catalog for ever (its seed mark said only "seeded"), so a newer gpuplan showed old
// offer counts and prices. A store whose mark names other bundled data takes this build's
// bundle once, through the same import; its own rows stay.
TEST_F(StoreSafety, StoreSeededByAnOlderBundleTakesTheCurrentBundleOnce) {
  const std::string p = file("seeded-by-older.sqlite");
  {
    SqliteOfferStore s(p);
    // the mark's value before bundled_catalog_key(): the batch's dataset, "bundled"
    ASSERT_TRUE(s.seed_if_new("bundled", [] { return testing::fixture_batch(); }));
  }
  open_offer_store(p);
  std::set<std::string> ids;
  for (const Offer& o : testing::fixture_batch().offers) ids.insert(o.id);
  for (const Offer& o : bundled_catalog().offers) ids.insert(o.id);
  std::uint64_t revision = 0;
  StoreCounts counts;
  {
    SqliteOfferStore s(p);
    counts = s.counts();
    EXPECT_EQ(counts.offers, ids.size());
    revision = s.revision();
  }
  sqlite3* db = raw_open(p);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'seeded'", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))), bundled_catalog_key());
  sqlite3_finalize(st);
  sqlite3_close(db);
  open_offer_store(p);  // same build, same bundle: nothing is imported again
  SqliteOfferStore s(p);
  EXPECT_EQ(s.revision(), revision);
  EXPECT_EQ(s.counts().observations, counts.observations);
}

TEST_F(StoreSafety, GarbageFileIsACorruptStoreError) {
  const std::string p = file("garbage.sqlite");
  std::ofstream(p) << std::string(8192, 'x');
  std::string what;
  EXPECT_EQ(kind_of([&] { SqliteOfferStore s(p); }, &what), ErrorKind::conflict);
  EXPECT_NE(what.find("corrupt store"), std::string::npos) << what;
}

TEST_F(StoreSafety, DamagedPagesAreACorruptStoreErrorNotInternal) {
  const std::string p = file("damaged.sqlite");
  {
    SqliteOfferStore s(p);
    s.import(testing::fixture_batch());
  }
  const auto size = fs::file_size(p);
  ASSERT_GT(size, 8192u);
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);  // every page after the first (the header and sqlite_master stay)
    const std::string junk(size - 4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  std::string what;
  const ErrorKind k = kind_of(
      [&] {
        SqliteOfferStore s(p);
        (void)s.query(OfferQuery{});
      },
      &what);
  EXPECT_EQ(k, ErrorKind::conflict) << what;
}

TEST_F(StoreSafety, MissingFolderIsNotCreated) {
  // The issue: --db /nonexistent/dir/x.sqlite created the directory.
  const fs::path p = dir_ / "nonexistent" / "dir" / "x.sqlite";
  std::string what;
  EXPECT_EQ(kind_of([&] { open_offer_store(p.string()); }, &what), ErrorKind::not_found);
  EXPECT_NE(what.find("does not exist"), std::string::npos) << what;
  EXPECT_FALSE(fs::exists(dir_ / "nonexistent"));
}

TEST_F(StoreSafety, RelativeXdgDataHomeIsIgnored) {
  const char* old_xdg = std::getenv("XDG_DATA_HOME");
  const char* old_home = std::getenv("HOME");
  const std::string keep_xdg = old_xdg ? old_xdg : "", keep_home = old_home ? old_home : "";
  ::setenv("XDG_DATA_HOME", "relative/data", 1);
  ::setenv("HOME", dir_.c_str(), 1);
  EXPECT_EQ(default_offer_db_path(), (dir_ / ".local" / "share" / "gpuplan" / "offers.sqlite").string());
  ::setenv("XDG_DATA_HOME", (dir_ / "xdg").c_str(), 1);
  EXPECT_EQ(default_offer_db_path(), (dir_ / "xdg" / "gpuplan" / "offers.sqlite").string());
  if (old_xdg) ::setenv("XDG_DATA_HOME", keep_xdg.c_str(), 1); else ::unsetenv("XDG_DATA_HOME");
  if (old_home) ::setenv("HOME", keep_home.c_str(), 1); else ::unsetenv("HOME");
}

TEST_F(StoreSafety, DryRunDoesNotWaitForTheWriteLock) {
  const std::string p = file("locked.sqlite");
  SqliteOfferStore store(p, nullptr, /*busy_timeout_ms=*/600000);  // a waiting preview would hang the test
  store.import(testing::fixture_batch());
  sqlite3* writer = raw_open(p);
  raw_exec(writer, "BEGIN IMMEDIATE; DELETE FROM flags;");  // another import holds the write lock
  const ImportResult r = store.preview_import(testing::fixture_batch());
  EXPECT_EQ(r.offers_unchanged, 7u);
  EXPECT_EQ(r.observations_added, 0u);
  EXPECT_EQ(r.observations_already_known, 11u);
  raw_exec(writer, "ROLLBACK");
  sqlite3_close(writer);
}

}  // namespace
}  // namespace gpuplan
