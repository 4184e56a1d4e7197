// Golden files for the CLI's --json documents (tests/cli/golden/*.json): the JSON the CLI prints
// is the contract the JSON API serves too (src/api), so any change to a key, a unit or a value
// shows up here as a diff. Run in-process through cli::run on a temporary SQLite database seeded
// with the hand-made fixture offers (tests/catalog/store_fixtures.hpp), so the bundled catalog's
// updates do not move the offer goldens.
//
// Every case that depends on today's date pins it with --today (offers' age_days, freshness and
// stale; the plan's price ages), so nothing is normalised away.
//
// When an output changes on purpose (a new key, a corrected formula), regenerate and review the diff:
//   GPUPLAN_UPDATE_GOLDEN=1 ./build/tests/test_cli --gtest_filter='*JsonGolden*'
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../catalog/store_fixtures.hpp"
#include "catalog/importers.hpp"
#include "catalog/sqlite_store.hpp"
#include "cli/command.hpp"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct GoldenCase {
  const char* name;
  std::vector<std::string> args;
};

class JsonGolden : public ::testing::TestWithParam<GoldenCase> {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpuplan-cli-golden-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "offers.sqlite").string();
    SqliteOfferStore s(db_);
    // marked as seeded with this build's bundle, so the CLI adds no bundled offers to the fixture
    ASSERT_TRUE(s.seed_if_new(bundled_catalog_key(), [] { return testing::fixture_batch(); }));
  }
  static void TearDownTestSuite() {
    // GPUPLAN_GOLDEN_DB_COPY=PATH keeps the fixture database, to run another binary on the same
    // offers (how the goldens were checked against the binary before the api refactor).
    if (const char* keep = std::getenv("GPUPLAN_GOLDEN_DB_COPY")) fs::copy_file(db_, keep, fs::copy_options::overwrite_existing);
    fs::remove_all(dir_);
  }

  static inline fs::path dir_;
  static inline std::string db_;
};

TEST_P(JsonGolden, MatchesGoldenFile) {
  std::vector<std::string> args = GetParam().args;
  args.insert(args.begin(), {"gpuplan", "--db", db_});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = cli::run(static_cast<int>(argv.size()), argv.data());
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(rc, 0) << err;
  json got = json::parse(out, nullptr, false);
  ASSERT_FALSE(got.is_discarded()) << out.substr(0, 500);

  const fs::path file = fs::path(GPUPLAN_SOURCE_DIR) / "tests/cli/golden" / (std::string(GetParam().name) + ".json");
  if (std::getenv("GPUPLAN_UPDATE_GOLDEN")) {
    std::ofstream(file) << got.dump(2) << "\n";
    GTEST_SKIP() << "rewrote " << file;
  }
  std::ifstream in(file);
  ASSERT_TRUE(in) << "missing golden file " << file << " (GPUPLAN_UPDATE_GOLDEN=1 writes it)";
  std::stringstream buf;
  buf << in.rdbuf();
  const json want = json::parse(buf.str());
  if (got != want) {
    const json patch = json::diff(want, got);
    FAIL() << GetParam().name << ": the output differs from " << file << " (first changes, as a JSON patch from golden to now):\n"
           << patch.dump(1).substr(0, 3000)
           << "\nIf the change is intended: GPUPLAN_UPDATE_GOLDEN=1 ./build/tests/test_cli --gtest_filter='*JsonGolden*'";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cli, JsonGolden,
    ::testing::Values(
        GoldenCase{"gpus_h100", {"gpus", "H100", "--json"}},
        GoldenCase{"gpus_list", {"gpus", "--json"}},
        GoldenCase{"models_params_7b", {"models", "--params", "7e9", "--json"}},
        GoldenCase{"models_llama_3_1_8b", {"models", "llama-3.1-8b", "--json"}},
        GoldenCase{"size_lora_70b_8gpus", {"size", "--model", "llama-3.1-70b", "--task", "lora", "--gpus", "8", "--json"}},
        GoldenCase{"size_serve_8b", {"size", "--model", "llama-3.1-8b", "--task", "serve", "--context", "8192",
                                     "--concurrency", "16", "--json"}},
        GoldenCase{"size_full_7b_zero3_explain", {"size", "--params", "7e9", "--task", "full", "--gpus", "8", "--zero", "3",
                                                  "--explain", "--json"}},
        GoldenCase{"offers_fixture_all", {"offers", "--format", "json", "--include-flagged", "--sort", "price", "--today", "2026-11-30"}},
        GoldenCase{"offers_fixture_h100", {"offers", "gpu=H100", "--format", "json", "--limit", "3", "--today", "2026-11-30"}},
        GoldenCase{"offers_fixture_group_gpu", {"offers", "--format", "json", "--group-by", "gpu", "--today", "2026-11-30"}},
        GoldenCase{"history_fixture", {"history", "lambda/gpu_8x_h100_sxm5/us-east-1", "--format", "json"}},
        // Written by the CLI before `estimate` moved onto the api layer (api/estimate.hpp): the move
        // keeps it byte-for-byte.
        GoldenCase{"estimate_8b_lora_a100x2", {"estimate", "--model", "llama-3.1-8b", "--task", "lora", "--tokens", "1e8",
                                               "--gpu", "A100 80GB", "--gpus", "2", "--json"}},
        GoldenCase{"plan_fixture_8b_lora", {"plan", "--model", "llama-3.1-8b", "--task", "lora", "--tokens", "1e8",
                                            "--today", "2026-11-30", "--limit", "3", "--json"}}),
    [](const ::testing::TestParamInfo<GoldenCase>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace gpuplan
