// End-to-end for issue 11 ("bad input never crashes, never corrupts, never poisons"): the
// built binary on the exact inputs of the issue; exit codes 2 (bad input), 3 (not found),
// 4 (conflict: not a gpuplan store / corrupt store), never a signal or 70. Plus the kept
// crash-and-restart test: `gpuplan import` killed (SIGKILL) at random points leaves the store
// intact and either as before or fully imported.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;  ///< -1: killed by a signal
  int signal = 0;
  std::string out;
};

class RobustE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpuplan-e2e-robust-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "offers.sqlite").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  /// Runs gpuplan with args (shell-quoted by the caller) against this test's --db.
  CliRun run(const std::string& args, bool with_db = true) const {
    const std::string cmd = "XDG_DATA_HOME='" + dir_.string() + "' timeout 60 '" + std::string(GPUPLAN_BINARY) + "' " +
                            (with_db ? "--db '" + db_ + "' " : "") + args + " 2>&1";
    CliRun r;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (!pipe) return r;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
    const int status = ::pclose(pipe);
    if (WIFEXITED(status)) {
      r.exit_code = WEXITSTATUS(status);
      // `sh -c` reports a child killed by signal N as 128+N
      if (r.exit_code > 128 && r.exit_code < 160) r.signal = r.exit_code - 128;
    }
    return r;
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  fs::path dir_;
  std::string db_;
};

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

const std::string kHeader = "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n";

TEST_F(RobustE2E, TenThousandNestedParenthesesExit2) {
  // SIGSEGV before (offers and plan).
  const std::string q = repeat("(", 10000) + "gpus>=8" + repeat(")", 10000);
  const CliRun r = run("offers '" + q + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out.substr(0, 500);
  EXPECT_NE(r.out.find("gpuplan: error: filter:17:"), std::string::npos) << r.out.substr(0, 500);
}

TEST_F(RobustE2E, GeneratedLongFiltersNeverReachSqliteLimits) {
  // ~90 or-ed, 100 and-ed: "SQLite error: parser stack overflow" (exit 70) before; now they run.
  std::string ors = "region~us-";
  for (int i = 1; i < 90; ++i) ors += " or region~us-";
  std::string ands = "price<1000";
  for (int i = 1; i < 100; ++i) ands += " and price<1000";
  EXPECT_EQ(run("offers --limit 1 '" + ors + "'").exit_code, 0);
  EXPECT_EQ(run("offers --limit 1 '" + ands + "'").exit_code, 0);
  // 45 nots: refused at the 17th "not" with the filter named, not the database.
  const CliRun r = run("offers '" + repeat("not ", 45) + "spot'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("filter:65:"), std::string::npos) << r.out;
}

TEST_F(RobustE2E, ImpossibleDatesAndNegativeLimitAreBadInput) {
  EXPECT_EQ(run("offers 'observed>=2026-02-30'").exit_code, 2);
  EXPECT_EQ(run("offers --limit -1").exit_code, 2);
  EXPECT_EQ(run("plan --model llama-3.1-70b --task lora --tokens 5e8 --today 2026-02-30").exit_code, 2);
}

TEST_F(RobustE2E, DevZeroAndFifoAreRefusedQuickly) {
  const CliRun z = run("import /dev/zero");
  EXPECT_EQ(z.exit_code, 2) << z.out;
  const std::string fifo = (dir_ / "pipe.csv").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const CliRun f = run("import '" + fifo + "'");  // hung before (timeout 60 would give 124)
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_NE(f.out.find("FIFO"), std::string::npos) << f.out;
}

TEST_F(RobustE2E, InvalidUtf8AndNulAreRejectedAndNothingIsWritten) {
  ASSERT_EQ(run("offers --limit 1").exit_code, 0);  // seeds the store
  const std::string bad = write("bad.csv", kHeader + "lambda,gpu_1x_h100\xff,us-east-1,H100 SXM,1,on-demand,2.49,2025-06-01,web\n");
  CliRun r = run("import '" + bad + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("bad.csv:2:19:"), std::string::npos) << r.out;
  const std::string nul = write("nul.csv", kHeader + "lambda,gpu" + std::string(1, '\0') + ",us-east-1,H100 SXM,1,on-demand,2.49,2025-06-01,web\n");
  r = run("import '" + nul + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  r = run("offers --format json 'provider=lambda'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("gpu_1x_h100\xff"), std::string::npos);
}

TEST_F(RobustE2E, JsonOutputOverAPoisonedStoreNeverFails) {
  // A store poisoned before this fix (an invalid UTF-8 byte stored by an older import):
  // `offers --format json` exited 70 for the whole catalog.
  ASSERT_EQ(run("offers --limit 1").exit_code, 0);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
  // A raw 0xFF byte in a text column (char(255) would be the valid U+00FF).
  ASSERT_EQ(sqlite3_exec(db, "UPDATE offers SET provider = CAST(provider || X'FF' AS TEXT) WHERE rowid IN (SELECT rowid FROM offers LIMIT 3)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const CliRun r = run("offers --format json --include-flagged");
  EXPECT_EQ(r.exit_code, 0) << r.out.substr(0, 500);
  EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded());
}

TEST_F(RobustE2E, UnrelatedSqliteFileIsRefusedWithExit4) {
  const std::string p = (dir_ / "notes.sqlite").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE notes(body TEXT)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const CliRun r = run("--db '" + p + "' offers", false);
  EXPECT_EQ(r.exit_code, 4) << r.out;
  const CliRun m = run("--db '" + (dir_ / "nonexistent" / "dir" / "x.sqlite").string() + "' offers", false);
  EXPECT_EQ(m.exit_code, 3) << m.out;
  EXPECT_FALSE(fs::exists(dir_ / "nonexistent"));
}

// trial11's wording faults: an empty file read "cannot tell the offer file's format"; a CSV date
// error did not name its column ("i_conf.csv:2: '2026-02-30' is not a date" for
// confirmed_available_at); a SQLite file with no tables and another program's user_version said
// "0 tables or indexes that are not gpuplan's schema".
TEST_F(RobustE2E, EmptyFilesDatesAndForeignStoresAreNamedPlainly) {
  const std::string empty = write("empty.csv", "");
  CliRun r = run("import '" + empty + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("empty.csv: the file is empty"), std::string::npos) << r.out;
  const std::string blank_json = write("blank.json", "  \n\t \n");  // trial11b: "unexpected end of input"
  r = run("import '" + blank_json + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("blank.json: the file is empty"), std::string::npos) << r.out;
  const std::string conf = write("conf.csv", "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,"
                                             "source,confirmed_available_at\n"
                                             "myco,c,us,H100 SXM,8,on-demand,10,2026-11-01,q,2026-02-30\n");
  r = run("import '" + conf + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("conf.csv:2: confirmed_available_at '2026-02-30' is not a date"), std::string::npos) << r.out;
  const std::string p = (dir_ / "versioned.sqlite").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 3", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  r = run("--db '" + p + "' offers", false);
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("not a gpuplan store (no tables, but SQLite user_version 3 set by another program)"),
            std::string::npos)
      << r.out;
}

TEST_F(RobustE2E, ConflictingHardwareUnderOneIdIsAnError) {
  const std::string f = write("mix.csv", kHeader + "lambda,gpu_big,us-east-1,H100 SXM,8,on-demand,23.92,2025-06-01,web\n"
                                                   "lambda,gpu_big,us-east-1,A100 SXM4 80GB,4,on-demand,5.16,2025-06-01,web\n");
  const CliRun r = run("import '" + f + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("mix.csv:3"), std::string::npos) << r.out;
}

TEST_F(RobustE2E, BrokenJsonIsReportedWithItsPosition) {
  const std::string f = write("quotes.json", "{\n  \"format\": \"gpuplan-offers/1\",\n  \"x\": [1,\n");
  const CliRun r = run("import '" + f + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("quotes.json:4:1"), std::string::npos) << r.out;
}

// --- crash and restart -----------------------------------------------------------------------

std::size_t count_offers(const std::string& db_path, std::string* integrity) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return 0;
  auto one = [&](const char* sql) {
    sqlite3_stmt* s = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
      out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return out;
  };
  *integrity = one("PRAGMA integrity_check");
  const std::string n = one("SELECT count(*) FROM offers");
  sqlite3_close(db);
  return n.empty() ? 0 : std::stoul(n);
}

TEST_F(RobustE2E, KilledImportsLeaveTheStoreIntactAndAllOrNothing) {
  ASSERT_EQ(run("offers --limit 1").exit_code, 0);  // seeded before the kills
  std::string integrity;
  const std::size_t base = count_offers(db_, &integrity);
  ASSERT_EQ(integrity, "ok");
  constexpr int kRows = 20000;
  std::string body = kHeader;
  for (int i = 0; i < kRows; ++i)
    body += "crashco,node-" + std::to_string(i) + ",eu-1,H100 SXM,8,on-demand,20.5,2025-06-01,crash test\n";
  const std::string file = write("big.csv", body);

  auto spawn_import = [&]() -> pid_t {
    const std::string bin = GPUPLAN_BINARY;
    std::vector<std::string> args = {bin, "--db", db_, "import", file};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? pid : -1;
  };

  // How long a whole import takes here, in a throw-away copy of the seeded store.
  const auto t0 = std::chrono::steady_clock::now();
  {
    const std::string keep = db_;
    db_ = (dir_ / "timing.sqlite").string();
    fs::copy_file(keep, db_);
    const pid_t pid = spawn_import();
    ASSERT_GT(pid, 0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    db_ = keep;
  }
  const double full_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const unsigned seed = static_cast<unsigned>(std::random_device{}());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> at(0.0, full_s);
  constexpr int kKills = 8;
  int killed_mid_run = 0;
  for (int k = 0; k < kKills; ++k) {
    const pid_t pid = spawn_import();
    ASSERT_GT(pid, 0);
    const double delay = at(rng);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) ++killed_mid_run;
    const std::size_t n = count_offers(db_, &integrity);
    EXPECT_EQ(integrity, "ok") << "seed " << seed << " kill " << k << " at " << delay << " s";
    EXPECT_TRUE(n == base || n == base + kRows) << "seed " << seed << " kill " << k << " at " << delay << " s: " << n;
    if (n == base + kRows) break;  // a kill after the commit: the rest is the restart below
  }
  // Restart: the import completes (or finds everything already there) and the store is whole.
  const CliRun r = run("import '" + file + "'");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(count_offers(db_, &integrity), base + kRows);
  EXPECT_EQ(integrity, "ok");
  RecordProperty("kills_mid_run", killed_mid_run);
}

}  // namespace

// --- robust5: filter values, --db "", the flag named in errors (issue 11) ---------------------

TEST_F(RobustE2E, NegativeSizesAndFractionalCountsInAFilterAreBadInput) {
  // Both were accepted before (and matched everything / nothing).
  const CliRun neg = run("offers 'vram>=-80GB'");
  EXPECT_EQ(neg.exit_code, 2) << neg.out;
  // The value token starts at byte 7 (1-based: "vram>=" is 6 bytes).
  EXPECT_NE(neg.out.find("gpuplan: error: filter:7: \"-80GB\" is negative"), std::string::npos) << neg.out;
  EXPECT_NE(neg.out.find("expected: a number >= 0"), std::string::npos) << neg.out;
  const CliRun frac = run("offers 'gpus>=8.5'");
  EXPECT_EQ(frac.exit_code, 2) << frac.out;
  EXPECT_NE(frac.out.find("gpuplan: error: filter:7: \"8.5\" is not a whole number"), std::string::npos) << frac.out;
  const CliRun price = run("offers 'price<=-1'");
  EXPECT_EQ(price.exit_code, 2) << price.out;
  EXPECT_NE(price.out.find("filter:8:"), std::string::npos) << price.out;
  // Still accepted: zero, and a whole count written with an exponent (1e1 = 10).
  EXPECT_EQ(run("offers --limit 1 'price>=0 and gpus>=1e1'").exit_code, 0);
}

TEST_F(RobustE2E, VramInGibDoesNotDropEightyGbH100s) {
  // Rule (docs/filter-language.md): GPU memory is compared in the unit it is stated in, so
  // 80GiB names the stated "80 GB" (80e9 bytes as stored), like 80GB. Before, 80GiB meant
  // 85.9e9 bytes and every "80 GB" H100 was dropped. Row 1 states 80 GB; row 2 states nothing
  // (the GPU's datasheet 80 GB is used); row 3 is a 40 GB A100.
  const std::string csv = write(
      "h100.csv",
      "provider,instance_type,region,gpu,gpu_count,gpu_memory_gb,price_kind,usd_per_hour,observed_at,source\n"
      "gibcloud,h100-stated,r1,H100 SXM,8,80,on-demand,20,2026-11-01,quote\n"
      "gibcloud,h100-datasheet,r1,H100 SXM,8,,on-demand,21,2026-11-01,quote\n"
      "gibcloud,a100-40,r1,A100 SXM4 40GB,8,40,on-demand,9,2026-11-01,quote\n");
  ASSERT_EQ(run("import '" + csv + "'").exit_code, 0);
  auto ids = [&](const std::string& filter) {
    const CliRun r = run("offers --limit 0 --format csv 'provider=gibcloud and " + filter + "'");
    EXPECT_EQ(r.exit_code, 0) << filter << "\n" << r.out;
    int h100 = 0, a100 = 0;
    for (std::size_t p = 0; (p = r.out.find("gibcloud/", p)) != std::string::npos; ++p) {
      if (r.out.compare(p, 13, "gibcloud/h100") == 0) ++h100;
      if (r.out.compare(p, 13, "gibcloud/a100") == 0) ++a100;
    }
    return std::make_pair(h100, a100);
  };
  EXPECT_EQ(ids("vram>=80GiB"), std::make_pair(2, 0));
  EXPECT_EQ(ids("vram>=80GB"), std::make_pair(2, 0));
  EXPECT_EQ(ids("vram>80GiB"), std::make_pair(0, 0));     // 80e9 > 80e9 is false
  EXPECT_EQ(ids("vram<=40GiB"), std::make_pair(0, 1));     // 40GiB is the stated 40 GB
  EXPECT_EQ(ids("vram>=40960MiB"), std::make_pair(2, 0));  // 40960 MiB read as 40960 MB = 40.96 GB > 40 GB
  EXPECT_EQ(ids("total_vram>=640GiB"), std::make_pair(2, 0));  // 8 x 80 GB
}

TEST_F(RobustE2E, EmptyDbPathIsAnErrorNotTheDefaultStore) {
  // `--db ""` (an unset shell variable) used the default store silently.
  const CliRun r = run("--db '' offers --limit 1", /*with_db=*/false);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("gpuplan: error: --db: empty path"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "gpuplan" / "offers.sqlite"));  // the default store was not created
}

TEST_F(RobustE2E, ErrorsNameTheFlagTheUserTyped) {
  // "--gpus-per-node: 0" before (a default derived from --gpus).
  const CliRun g = run("estimate --model llama-3-8b --task lora --tokens 1e9 --gpu H100-SXM5-80GB --gpus 0");
  EXPECT_EQ(g.exit_code, 2) << g.out;
  EXPECT_NE(g.out.find("gpuplan: error: --gpus: 0"), std::string::npos) << g.out;
  // "--max-price-age: -1 ..." before: --stale-days is its alias.
  const CliRun s = run("plan --model llama-3-8b --task lora --tokens 1e9 --stale-days -1");
  EXPECT_EQ(s.exit_code, 2) << s.out;
  EXPECT_NE(s.out.find("gpuplan: error: --stale-days: -1 is not a positive number"), std::string::npos) << s.out;
  const CliRun m = run("plan --model llama-3-8b --task lora --tokens 1e9 --max-price-age -1");
  EXPECT_EQ(m.exit_code, 2) << m.out;
  EXPECT_NE(m.out.find("gpuplan: error: --max-price-age:"), std::string::npos) << m.out;
}
