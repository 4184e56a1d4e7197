// End-to-end: `gpuplan offers` says how many offers MATCHED the filter, not only how many the
// catalog holds ("5 of 75 matching offers shown (1603 in the catalog)"). The expected counts come
// from the binary itself: the number of rows of the same query without --limit (JSON), and the
// number of rows of the unfiltered query.
#include <gtest/gtest.h>

#include "binary_e2e.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

using e2e::RunResult;

class OffersFooterE2E : public e2e::BinaryE2E<OffersFooterE2E> {
 public:
  static constexpr const char* kName = "offers-footer";

 protected:
  static std::size_t json_rows(const std::string& args) {
    RunResult r = run("offers " + args + " --format json");
    EXPECT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_array()) << r.out.substr(0, 2000);
    return j.is_array() ? j.size() : 0;
  }
};

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
}  // namespace gpuplan
