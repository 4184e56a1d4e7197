// End-to-end regressions of the import defects a new-user trial found (robust11, issue 11), each
// with the exact input the trial typed, through the real binary:
//  * #16 two different prices for one offer, price kind and observed_at in one file were both
//    stored, and the later row silently became the offer's price: now refused at the later row,
//    naming the earlier row and both prices (USD per instance-hour), nothing written.
//  * #17 `gpu_count` written as `four` said "expected: a decimal number such as 12.5"; a
//    header-only CSV "imported" 0 rows with exit 0 and changed the store's files (its revision
//    was raised): now "no rows", exit 2, and the store's files byte for byte as before.
// Every refusal is one line on stderr, exit 2 (README "Exit codes": invalid input). The quote rows
// are test values, not market data.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "binary_e2e.hpp"

namespace {

namespace fs = std::filesystem;
using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;

class ImportTrialE2E : public BinaryE2E<ImportTrialE2E> {
 public:
  static constexpr const char* kName = "import-trial";

 protected:
  static std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  /// The store's files (database and WAL) as bytes: "absent" when a file does not exist.
  static std::string store_bytes() {
    std::string all;
    for (const std::string suffix : {"", "-wal"}) {
      const fs::path p = dir_ / ("offers.sqlite" + suffix);
      std::ifstream in(p, std::ios::binary);
      all += suffix + (in ? std::string(std::istreambuf_iterator<char>(in), {}) : std::string("absent")) + "\x1e";
    }
    return all;
  }
  /// meta.revision read from the database file alone (immutable: no -wal or -shm file is created,
  /// which a plain read-only open leaves behind; gpuplan checkpoints its WAL when it exits).
  static std::string revision() {
    sqlite3* db = nullptr;
    std::string out = "unreadable";
    const std::string uri = "file:" + (dir_ / "offers.sqlite").string() + "?immutable=1";
    if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) == SQLITE_OK) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'revision'", -1, &st, nullptr) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW)
        out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return out;
  }
  /// A refused import: exit 2, exactly the one line expected, the store's files unchanged.
  static void expect_refused_unchanged(const std::string& args, const std::string& line) {
    ASSERT_EQ(run("offers --limit 1").exit_code, 0);  // the store exists (seeded) before
    const std::string rev = revision();
    ASSERT_NE(rev, "unreadable");
    const std::string bytes = store_bytes();
    const RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out, line + "\n") << args;
    EXPECT_EQ(revision(), rev) << args;
    EXPECT_TRUE(store_bytes() == bytes) << args << ": the store's files changed";
  }
};

constexpr const char* kHeader = "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source\n";

TEST_F(ImportTrialE2E, TwoPricesForOneQuoteInOneFileAreRefusedWithBothRows) {
  // The trial's file: one offer, on-demand, 2026-11-02, at $2.10 and at $2.50 per GPU-hour.
  // Whole instance (8 GPUs): 2.10 × 8 = 16.8 and 2.50 × 8 = 20 USD/h.
  const std::string csv = write("dup.csv", std::string(kHeader) +
                                               "acme,h100-8x,us,H100 SXM,8,on-demand,2.10,2026-11-02,q1\n"
                                               "acme,h100-8x,us,H100 SXM,8,on-demand,2.50,2026-11-02,q1\n");
  const std::string expected_tail =
      " (two prices for one quote) (expected: one price per offer, price_kind and observed_at in a file: correct the "
      "wrong row, or give each price the time it was seen (observed_at YYYY-MM-DDTHH:MM:SSZ))";
  expect_refused_unchanged("import '" + csv + "'", "gpuplan: error: " + csv +
                                                       ":3: offer acme/h100-8x/us on-demand observed_at 2026-11-02: "
                                                       "20 USD/h here and 16.8 USD/h at " + csv + ":2" + expected_tail);
  // The dry run says the same (it reads the same file).
  const RunResult dry = run("import --dry-run '" + csv + "'");
  EXPECT_EQ(dry.exit_code, 2) << dry.out;
  EXPECT_NE(dry.out.find(csv + ":3: offer acme/h100-8x/us"), std::string::npos) << dry.out;
  // JSON: the later offer's price field, the earlier offer's pointer. Undated prices count too.
  const std::string js = write("dup.json", R"({"offers": [
    {"provider": "acme", "instance_type": "h100-8x", "region": "eu", "gpu": "H100 SXM", "gpu_count": 8, "price_kind": "spot",
     "usd_per_hour": 10, "observed_at": "unknown", "source": "q1"},
    {"provider": "acme", "instance_type": "h100-8x", "region": "eu", "gpu": "H100 SXM", "gpu_count": 8, "price_kind": "spot",
     "usd_per_hour": 12, "observed_at": "unknown", "source": "q2"}]})");
  expect_refused_unchanged("import '" + js + "'", "gpuplan: error: " + js +
                                                      ": /offers/1/usd_per_hour: offer acme/h100-8x/eu spot observed_at "
                                                      "unknown: 12 USD/h here and 10 USD/h at " + js + ": /offers/0" +
                                                      expected_tail);
  EXPECT_EQ(run("offers 'provider=acme' --json").out.find("h100-8x"), std::string::npos);
  // One price per day is a price history, not a contradiction: both rows imported.
  const std::string days = write("days.csv", std::string(kHeader) +
                                                 "acme,h100-8x,us,H100 SXM,8,on-demand,2.10,2026-11-02,q1\n"
                                                 "acme,h100-8x,us,H100 SXM,8,on-demand,2.50,2026-11-03,q1\n");
  const RunResult ok = run("import '" + days + "'");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("observations: 2 added"), std::string::npos) << ok.out;
}

TEST_F(ImportTrialE2E, ACountWrittenAsAWordSaysWhatACountIs) {
  const std::string csv = write("four.csv", std::string(kHeader) + "acme,h100-4x,us,H100 SXM,four,on-demand,2.10,2026-11-02,q1\n");
  expect_refused_unchanged("import '" + csv + "'",
                           "gpuplan: error: " + csv +
                               ":2: column gpu_count: 'four' is not a GPU count (expected: a whole number from 1 to "
                               "1000000 such as 8 or 8.0)");
  // max_nodes is a count too (it said "max_nodes is not a whole number >= 1" for 2.5 and "a
  // decimal number such as 12.5" for a word).
  const std::string nodes = write("nodes.csv", "provider,instance_type,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source,max_nodes\n"
                                               "acme,h100-8x,H100 SXM,8,on-demand,20,2026-11-02,q1,four\n");
  expect_refused_unchanged("import '" + nodes + "'",
                           "gpuplan: error: " + nodes +
                               ":2: column max_nodes: 'four' is not a node count (expected: a whole number from 1 to "
                               "1000000 such as 8 or 8.0)");
}

TEST_F(ImportTrialE2E, AHeaderOnlyFileIsNoRowsAndWritesNothing) {
  const std::string csv = write("empty.csv", kHeader);
  const std::string line = "gpuplan: error: " + csv +
                           ": no rows: the file holds no offer (a header alone, or an empty offers list); nothing was "
                           "imported (expected: at least one offer row (docs/import-format.md))";
  expect_refused_unchanged("import '" + csv + "'", line);
  expect_refused_unchanged("import --dry-run '" + csv + "'", line);
  const std::string js = write("empty.json", R"({"format": "gpuplan-offers/1", "offers": []})");
  expect_refused_unchanged("import '" + js + "'",
                           "gpuplan: error: " + js +
                               ": no rows: the file holds no offer (a header alone, or an empty offers list); nothing "
                               "was imported (expected: at least one offer row (docs/import-format.md))");
}

}  // namespace
