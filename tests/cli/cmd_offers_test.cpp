// `gpuplan offers`, `history` and `import`, run in-process through cli::run on a real temporary
// SQLite database pre-seeded with the hand-made fixture offers (tests/catalog/store_fixtures.hpp),
// so the bundled catalog is not imported.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "../catalog/store_fixtures.hpp"
#include "catalog/importers.hpp"
#include "catalog/sqlite_store.hpp"
#include "cli/command.hpp"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

struct RunResult {
  int rc = 0;
  std::string out;
  std::string err;
};

class OffersCli : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    dir_ = fs::temp_directory_path() / ("gpuplan-cli-offers-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "offers.sqlite").string();
    SqliteOfferStore s(db_);
    // marked as seeded with this build's bundle, so the CLI adds no bundled offers to the fixture
    ASSERT_TRUE(s.seed_if_new(bundled_catalog_key(), [] { return testing::fixture_batch(); }));
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult run(std::vector<std::string> args) {
    args.insert(args.begin(), {"gpuplan", "--db", db_});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    RunResult r;
    r.rc = cli::run(static_cast<int>(argv.size()), argv.data());
    r.out = ::testing::internal::GetCapturedStdout();
    r.err = ::testing::internal::GetCapturedStderr();
    return r;
  }

  std::string write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }

  StoreCounts counts() { return SqliteOfferStore(db_).counts(); }

  fs::path dir_;
  std::string db_;
};

// Synthetic quote (not a real price): 8 GPUs at 2.10 USD per GPU-hour = 16.80 USD/h per node.
const char* kHeader =
    "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source\n";

TEST_F(OffersCli, ImportAddsOffersAndReportsCounts) {
  const auto file = write("quotes.csv", std::string(kHeader) +
                                            "examplecloud,h100x8,us-west,H100 SXM,8,on-demand,2.10,2026-11-02,test\n");
  RunResult r = run({"import", file});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("offers: 1 added, 0 updated, 0 unchanged"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("observations: 1 added, 0 already known"), std::string::npos) << r.out;
  EXPECT_EQ(counts().offers, 8u);

  r = run({"offers", "provider=examplecloud", "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["id"], "examplecloud/h100x8/us-west");
  EXPECT_NEAR(j[0]["usd_per_hour"].get<double>(), 16.8, 1e-9);
  EXPECT_NEAR(j[0]["usd_per_gpu_hour"].get<double>(), 2.10, 1e-9);
  EXPECT_EQ(j[0]["observed_at"], "2026-11-02");

  // The same file again adds nothing.
  r = run({"import", file});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("observations: 0 added, 1 already known"), std::string::npos) << r.out;
}

TEST_F(OffersCli, MalformedFileIsAnErrorAndWritesNothing) {
  const auto before = counts();
  const auto file = write("bad.csv", std::string(kHeader) +
                                         "examplecloud,a,us,H100 SXM,8,on-demand,2.10,2026-11-02,test\n"
                                         "examplecloud,b,us,H100 SXM,eight,on-demand,2.10,2026-11-02,test\n");
  RunResult r = run({"import", file});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("bad.csv:3"), std::string::npos) << r.err;
  EXPECT_EQ(counts().offers, before.offers);
  EXPECT_EQ(counts().observations, before.observations);
}

TEST_F(OffersCli, DryRunWritesNothing) {
  const auto file = write("quotes.csv", std::string(kHeader) +
                                            "examplecloud,h100x8,us-west,H100 SXM,8,on-demand,2.10,2026-11-02,test\n");
  RunResult r = run({"import", file, "--dry-run"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("dry run (nothing written)"), std::string::npos);
  EXPECT_NE(r.out.find("offers: 1 added"), std::string::npos) << r.out;
  EXPECT_EQ(counts().offers, 7u);
}

TEST_F(OffersCli, FilterErrorPointsAtTheToken) {
  RunResult r = run({"offers", "gpus>=8", "vrm>=80"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("filter:9: unknown field \"vrm\"\n  gpus>=8 vrm>=80\n          ^^^"), std::string::npos)
      << r.err;
}

TEST_F(OffersCli, TableShowsUnknownDatesAndFlags) {
  RunResult r = run({"offers", "--include-flagged", "--sort", "price"});
  ASSERT_EQ(r.rc, 0) << r.err;
  // B's on-demand price has no date; E carries the excluding zero_price flag.
  const auto b = r.out.find("aws/p4d.24xlarge/us-east-1");
  ASSERT_NE(b, std::string::npos);
  EXPECT_NE(r.out.substr(b, r.out.find('\n', b) - b).find("unknown"), std::string::npos);
  const auto e = r.out.find("mithril/h100/us-central");
  ASSERT_NE(e, std::string::npos);
  EXPECT_NE(r.out.substr(e, r.out.find('\n', e) - e).find("FLAGGED: zero_price(excluded)"), std::string::npos);
  r = run({"offers"});
  EXPECT_EQ(r.out.find("mithril/h100/us-central"), std::string::npos);
}

TEST_F(OffersCli, CsvAndLimit) {
  // The default order puts clean dated prices first (docs/freshness.md "Order of the offer
  // list"); at 2026-11-30 with the 30-day limit the clean ones are D (2026-11-29, 2.39 per
  // GPU-hour) and A (2026-11-01, 23.92 / 8 = 2.99); C (0.35, 2026-09-01) is stale and G (4.8 / 4 =
  // 1.2) undated, so they follow. (Before the evidence order this page was C then G.)
  RunResult r = run({"offers", "--format", "csv", "--limit", "2", "--today", "2026-11-30"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3);  // header + 2 rows
  const auto d = r.out.find("\n\"runpod/h100-pcie/eu-ro-1\",");
  const auto a = r.out.find("\n\"lambda/gpu_8x_h100_sxm5/us-east-1\",");
  EXPECT_NE(d, std::string::npos) << r.out;
  EXPECT_NE(a, std::string::npos) << r.out;
  EXPECT_LT(d, a) << r.out;
  // --include-flagged: one price order, C (0.35) first; E's $0 price is excluded by zero_price
  // and shown only now, at 0 per GPU-hour, so it leads.
  r = run({"offers", "--format", "csv", "--limit", "2", "--today", "2026-11-30", "--include-flagged"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\n\"mithril/h100/us-central\","), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n\"vast/rtx4090\","), std::string::npos) << r.out;
}

// trial46: CSV is read by programs, so a numeric column holds a number or nothing ("80
// (datasheet)" was a VRAM_GB cell); the notes are columns of their own (VRAM_FROM, PRICE_KIND,
// LAST_SEEN). The fixture's runpod/h100-pcie/eu-ro-1 lists 1 × H100 PCIe at $2.39 per hour, seen
// 2026-11-29, one day before --today.
TEST_F(OffersCli, CsvCellsHoldOneValueEach) {
  const RunResult r = run({"offers", "--format", "csv", "--limit", "50", "--today", "2026-11-30", "--include-flagged"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  auto cells_of = [](const std::string& l) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (char c : l) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) { out.push_back(cur); cur.clear(); }
      else cur += c;
    }
    out.push_back(cur);
    return out;
  };
  const auto header = cells_of(line);
  std::vector<std::size_t> numeric;
  for (std::size_t i = 0; i < header.size(); ++i)
    for (const char* name : {"N", "VRAM_GB", "USD_PER_GPU_H", "USD_PER_H", "MEM_TB_S", "BILLING_SECONDS", "AGE_DAYS"})
      if (header[i] == name) numeric.push_back(i);
  ASSERT_EQ(numeric.size(), 7u) << line;
  std::size_t rows = 0;
  bool saw_runpod = false;
  while (std::getline(in, line)) {
    const auto cells = cells_of(line);
    ASSERT_EQ(cells.size(), header.size()) << line;
    for (std::size_t i : numeric) {
      if (cells[i].empty()) continue;
      std::size_t used = 0;
      (void)std::stod(cells[i], &used);
      EXPECT_EQ(used, cells[i].size()) << header[i] << " = \"" << cells[i] << "\" in " << line;
    }
    if (cells[0] == "runpod/h100-pcie/eu-ro-1") {
      saw_runpod = true;
      EXPECT_EQ(cells[2], "1");
      EXPECT_NEAR(std::stod(cells[6]), 2.39, 1e-9) << line;
      EXPECT_EQ(cells[7], "on-demand") << line;
      EXPECT_EQ(cells[16], "1") << line;  // AGE_DAYS
    }
    ++rows;
  }
  EXPECT_GT(rows, 3u);
  EXPECT_TRUE(saw_runpod) << r.out;
}

TEST_F(OffersCli, HistoryListsObservationsOldestFirst) {
  RunResult r = run({"history", "lambda/gpu_8x_h100_sxm5/us-east-1"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto undated = r.out.find("unknown");  // the undated spot observation
  const auto oct = r.out.find("2026-10-01");
  const auto nov = r.out.find("2026-11-01");
  ASSERT_NE(undated, std::string::npos) << r.out;
  ASSERT_NE(oct, std::string::npos);
  ASSERT_NE(nov, std::string::npos);
  EXPECT_LT(undated, oct);
  EXPECT_LT(oct, nov);
  r = run({"history", "no/such/offer"});
  EXPECT_EQ(r.rc, 3);
}

}  // namespace
}  // namespace gpuplan
