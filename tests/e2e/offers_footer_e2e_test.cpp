// End-to-end: `gpuplan offers` says how many offers MATCHED the filter, not only how many the
// catalog holds ("5 of 75 matching offers shown (1603 in the catalog)"). The expected counts come
// from the binary itself: the number of rows of the same query without --limit (JSON), and the
// number of rows of the unfiltered query.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;
  std::string out;
};

class OffersFooterE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpuplan-e2e-offers-footer-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static RunResult run(const std::string& args) {
    const std::string cmd = "XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" +
                            (dir_ / "offers.sqlite").string() + "' " + args + " 2>&1";
    RunResult r;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (!pipe) return r;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
    const int status = ::pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
  }
  static std::size_t json_rows(const std::string& args) {
    RunResult r = run("offers " + args + " --format json");
    EXPECT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_array()) << r.out.substr(0, 2000);
    return j.is_array() ? j.size() : 0;
  }
  static fs::path dir_;
};
fs::path OffersFooterE2E::dir_;

TEST_F(OffersFooterE2E, FooterCountsTheMatchingOffers) {
  const std::size_t matching = json_rows("gpu=H100");
  const std::size_t all = json_rows("--include-flagged");
  ASSERT_GT(matching, 5u);
  ASSERT_LT(matching, all);

  RunResult r = run("offers gpu=H100 --limit 5");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"((\d+) of (\d+) matching offers shown \((\d+) in the catalog\))")))
      << r.out;
  EXPECT_EQ(std::stoul(m[1].str()), 5u);
  EXPECT_EQ(std::stoul(m[2].str()), matching);
  EXPECT_EQ(std::stoul(m[3].str()), all);
}

TEST_F(OffersFooterE2E, LimitKeepsTheSortedHead) {
  // --limit cuts the sorted list: the first 5 rows of the unlimited query.
  RunResult lim = run("offers gpu=H100 --limit 5 --format json");
  RunResult full = run("offers gpu=H100 --format json");
  ASSERT_EQ(lim.exit_code, 0) << lim.out;
  ASSERT_EQ(full.exit_code, 0) << full.out;
  const auto a = nlohmann::json::parse(lim.out);
  const auto b = nlohmann::json::parse(full.out);
  ASSERT_EQ(a.size(), 5u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i]["id"], b[i]["id"]) << i;
}

}  // namespace
