// End-to-end: runs the built `gpuplan offers` (GPUPLAN_BINARY) on the bundled catalog (a fresh
// temporary --db, seeded on first use) and checks, through the public path only:
//   - every row carries its price's age and freshness tier, computed from the observation date
//     and --today with the documented limits (--fresh-days, --stale-days);
//   - `--group-by gpu` / `provider` report, per group, the number of offers and the min / median /
//     max USD per GPU-hour of exactly the rows the same filter lists without grouping (the median
//     recomputed here by hand from those rows).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class OffersE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpuplan-e2e-offers-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  static std::pair<int, std::string> run(const std::string& args) {
    const std::string cmd = "XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" +
                            (dir_ / "offers.sqlite").string() + "' offers " + args + " 2>&1";
    std::string out;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (!pipe) return {-1, out};
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    const int status = ::pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }

  static json run_json(const std::string& args) {
    auto [rc, out] = run(args + " --format json");
    EXPECT_EQ(rc, 0) << out.substr(0, 2000);
    json j = json::parse(out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out.substr(0, 2000);
    return j;
  }

  static fs::path dir_;
};

fs::path OffersE2E::dir_;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

TEST_F(OffersE2E, EveryRowShowsAgeAndFreshnessTier) {
  // The ewyluda observation file was collected on 2026-10-10: 51 days before 2026-11-30.
  const json rows = run_json("source=ewyluda-observations --today 2026-11-30");
  ASSERT_GT(rows.size(), 100u);
  for (const json& r : rows) {
    ASSERT_EQ(r["observed_at"].get<std::string>().substr(0, 10), "2026-10-10") << r["id"];
    EXPECT_EQ(r["age_days"].get<int>(), 51) << r["id"];
    EXPECT_EQ(r["freshness"], "stale") << r["id"];  // default: stale after 30 days
  }
  // Limits are configurable: 51 days is aging under a 60-day stale limit, fresh under a 60-day fresh limit.
  for (const json& r : run_json("source=ewyluda-observations --today 2026-11-30 --stale-days 60"))
    EXPECT_EQ(r["freshness"], "aging") << r["id"];
  for (const json& r : run_json("source=ewyluda-observations --today 2026-11-30 --fresh-days 60 --stale-days 90"))
    EXPECT_EQ(r["freshness"], "fresh") << r["id"];
  // Undated sources stay undated with an unknown age, never a guessed one (SkyPilot's Lambda file).
  const json lambda = run_json("source=skypilot-catalog/v8/lambda --today 2026-11-30 --limit 20");
  ASSERT_GT(lambda.size(), 0u);
  for (const json& r : lambda) {
    EXPECT_TRUE(r["age_days"].is_null()) << r["id"];
    EXPECT_EQ(r["freshness"], "undated") << r["id"];
  }
  // FSDL rows carry the day their price was published (2022-08-05 .. 2025-04-22, PROVENANCE.md §9):
  // at least 585 days before 2026-11-30, so stale.
  const json fsdl = run_json("source=fsdl-cloud-gpus --today 2026-11-30 --limit 20");
  ASSERT_GT(fsdl.size(), 0u);
  for (const json& r : fsdl) {
    ASSERT_TRUE(r["age_days"].is_number()) << r["id"];
    EXPECT_GE(r["age_days"].get<int>(), 585) << r["id"];
    EXPECT_EQ(r["freshness"], "stale") << r["id"];
  }
  // The table shows the two columns.
  auto [rc, table] = run("source=ewyluda-observations --today 2026-11-30 --limit 3");
  EXPECT_EQ(rc, 0) << table;
  EXPECT_NE(table.find("AGE"), std::string::npos) << table;
  EXPECT_NE(table.find("FRESHNESS"), std::string::npos) << table;
  EXPECT_NE(table.find("51 d"), std::string::npos) << table;
  // Inconsistent limits are refused with the documented one-line error, exit 2.
  auto [bad_rc, bad] = run("--fresh-days 40 --stale-days 30");
  EXPECT_EQ(bad_rc, 2) << bad;
  EXPECT_NE(bad.find("gpuplan: error: --fresh-days"), std::string::npos) << bad;
}

TEST_F(OffersE2E, GroupByGpuMatchesTheListedRows) {
  const std::string filter = "'gpus>=8' --today 2026-11-30";
  const json list = run_json(filter);
  ASSERT_GT(list.size(), 20u);
  std::map<std::string, std::vector<double>> per_gpu;
  std::map<std::string, std::size_t> count, flagged;
  std::size_t flagged_total = 0;
  for (const json& r : list) {
    const std::string gpu = r["gpu_name"].is_null() ? r["gpu_name_raw"].get<std::string>() + " (unresolved)"
                                                    : r["gpu_name"].get<std::string>();
    ++count[gpu];
    if (r["usd_per_gpu_hour"].is_null()) continue;
    // Prices a flag questions (evidence "flagged") are left out of the statistics by default
    // (docs/freshness.md) and counted apart.
    if (r["evidence"] == "flagged") {
      ++flagged[gpu];
      ++flagged_total;
      continue;
    }
    per_gpu[gpu].push_back(r["usd_per_gpu_hour"].get<double>());
  }
  EXPECT_GT(flagged_total, 0u);  // the bundled 8-GPU offers include below_market_index prices
  const json groups = run_json(filter + " --group-by gpu");
  ASSERT_EQ(groups.size(), count.size());
  double last_median = 0;
  for (const json& g : groups) {
    const std::string gpu = g["gpu"];
    SCOPED_TRACE(gpu);
    EXPECT_EQ(g["offers"].get<std::size_t>(), count[gpu]);
    const auto& prices = per_gpu[gpu];
    EXPECT_EQ(g["priced_offers"].get<std::size_t>(), prices.size());
    EXPECT_EQ(g["flagged_offers"].get<std::size_t>(), flagged[gpu]);
    if (prices.empty()) continue;
    EXPECT_NEAR(g["min_usd_per_gpu_hour"].get<double>(), *std::min_element(prices.begin(), prices.end()), 1e-9);
    EXPECT_NEAR(g["max_usd_per_gpu_hour"].get<double>(), *std::max_element(prices.begin(), prices.end()), 1e-9);
    const double med = g["median_usd_per_gpu_hour"].get<double>();
    EXPECT_NEAR(med, median_of(prices), 1e-9);
    EXPECT_GE(med, last_median);  // groups ordered by median
    last_median = med;
  }
}

TEST_F(OffersE2E, GroupByProviderCountsEveryOffer) {
  const json list = run_json("--today 2026-11-30");
  const json groups = run_json("--today 2026-11-30 --group-by provider");
  std::size_t total = 0;
  for (const json& g : groups) total += g["offers"].get<std::size_t>();
  EXPECT_EQ(total, list.size());
  auto [rc, table] = run("--group-by provider --today 2026-11-30 --limit 5");
  EXPECT_EQ(rc, 0) << table;
  EXPECT_NE(table.find("MEDIAN_USD_PER_GPU_H"), std::string::npos) << table;
  auto [bad_rc, bad] = run("--group-by region");
  EXPECT_EQ(bad_rc, 2) << bad;
  EXPECT_NE(bad.find("gpuplan: error: --group-by"), std::string::npos) << bad;
}

}  // namespace

// New-user trial: `vram>=` left out every offer whose row gives no memory although its GPU model
// is known (Azure's H200 and H100 rows carry no memory column), while `plan` sized those same
// offers on the model's datasheet memory. The filter now reads the row's memory, else the
// resolved model's: the H200's datasheet memory is 141 GB (NVIDIA H200 datasheet; data/gpus.csv),
// so every H200 offer passes `vram>=100GB`, and one whose row states no memory never passes
// `vram>=150GB`.
TEST_F(OffersE2E, VramFallsBackToTheGpuModelsMemoryWhenTheRowHasNone) {
  const json all_h200 = run_json("'gpu=H200' --include-flagged --limit 100000");
  std::size_t without_row_memory = 0;
  for (const json& r : all_h200)
    if (r["gpu_memory_source"] == "datasheet") {  // the row states none: the datasheet's 141 GB is shown
      ++without_row_memory;
      EXPECT_DOUBLE_EQ(r["gpu_memory_bytes"].get<double>(), 141e9) << r["id"];
    }
  ASSERT_GT(without_row_memory, 0u) << "the bundled catalog no longer has an H200 row without memory";
  const json big = run_json("'gpu=H200 vram>=100GB' --include-flagged --limit 100000");
  EXPECT_EQ(big.size(), all_h200.size());
  const json total = run_json("'gpu=H200 gpus=8 total_vram>=1000GB' --include-flagged --limit 100000");
  const json eight = run_json("'gpu=H200 gpus=8' --include-flagged --limit 100000");
  EXPECT_EQ(total.size(), eight.size());  // 8 × 141 GB = 1,128 GB
  // rows that state their own memory keep it (some SkyPilot rows write 141 GiB as 151.4 GB);
  // a row without one is 141 GB and never passes 150 GB
  const json over = run_json("'gpu=H200 vram>=150GB' --include-flagged --limit 100000");
  for (const json& r : over) {
    ASSERT_EQ(r["gpu_memory_source"], "offer") << r["id"];
    EXPECT_GE(r["gpu_memory_bytes"].get<double>(), 150e9) << r["id"];
  }
  // the per-VRAM-GB sort ranks them too, on the same memory: USD per hour / (GPUs × GB), with
  // 141 GB per GPU where the row says nothing; priced rows come in non-decreasing order
  const json sorted = run_json("'gpu=H200' --include-flagged --limit 100000 --sort price_per_vram_gb");
  ASSERT_EQ(sorted.size(), all_h200.size());
  double last = 0;
  std::size_t priced = 0;
  for (const json& r : sorted) {
    if (r["usd_per_hour"].is_null()) continue;
    const double gb = r["gpu_memory_source"] == "offer" ? r["gpu_memory_bytes"].get<double>() / 1e9 : 141.0;
    const double key = r["usd_per_hour"].get<double>() / (r["gpu_count"].get<double>() * gb);
    EXPECT_GE(key, last - 1e-12) << r["id"];
    last = key;
    ++priced;
  }
  EXPECT_GT(priced, 0u);
}

// New-user trial: `offers --today` took 2026-02-30, 2027-02-29, 2026-11-31 and a timestamp,
// echoed them and computed ages from them, while `plan --today` refused the same values (and
// docs/import-format.md says 2026-02-30 is not a date). Each is now the one-line date error.
TEST_F(OffersE2E, TodayMustBeACalendarDay) {
  for (const std::string bad : {"2026-02-30", "2027-02-29", "2026-11-31", "2026-12-01T00:00"}) {
    auto [rc, out] = run("--today " + bad + " --limit 1");
    EXPECT_EQ(rc, 2) << bad << ": " << out;
    EXPECT_NE(out.find("gpuplan: error: --today"), std::string::npos) << bad << ": " << out;
  }
  auto [rc, out] = run("--today 2028-02-29 --limit 1");  // a leap day is a day
  EXPECT_EQ(rc, 0) << out;
}
