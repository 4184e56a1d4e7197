// End-to-end regression tests for two page defects a new-user trial of issue 10 found
// (2026-12-04), through a running `gpuplan serve` on the bundled catalog:
// - a page URL typed with '=' inside a value (`/offers?q=gpus>=8`) lost everything up to the last
//   '=' (cpp-httplib's own query reading): the filter became "8" and the page answered 400;
// - `/offers?group_by=gpu` counted only the rows the page lists (at most 300), not every offer;
// - a second `gpuplan serve` on the same address bound too (SO_REUSEPORT) and took half the
//   connections.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "binary_e2e.hpp"
#include "serve_process.hpp"

namespace {

class PagesQueryE2E : public gpuplan::e2e::ServedBinaryE2E<PagesQueryE2E> {
 public:
  static constexpr const char* kName = "pages-query";
  static httplib::Result get(const std::string& path) {
    static httplib::Client c("127.0.0.1", server().port);
    c.set_read_timeout(120, 0);
    return c.Get(path);
  }
};

TEST_F(PagesQueryE2E, AValueWithAnEqualsSignIsReadWhole) {
  auto r = get("/offers?q=gpus>=8&today=2026-11-30");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body.substr(0, 400);
  EXPECT_NE(r->body.find("value=\"gpus&gt;=8\""), std::string::npos);  // the filter box shows what was typed
  auto p = get("/plan?model=llama-3.1-70b&task=lora&tokens=5e8&filter=gpus>=8&today=2026-11-30");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 200) << p->body.substr(0, 400);
  // '=' inside the model name is the model's text, not a split: an unknown model, named whole.
  auto m = get("/plan?model=a=b&task=lora&tokens=1e8");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("a=b"), std::string::npos);
}

TEST_F(PagesQueryE2E, GroupsCountEveryMatchingOfferAsTheApiDoes) {
  auto api = get("/api/offers?group_by=gpu&today=2026-11-30");
  ASSERT_TRUE(api && api->status == 200);
  const nlohmann::json groups = nlohmann::json::parse(api->body);
  auto page = get("/offers?group_by=gpu&today=2026-11-30");
  ASSERT_TRUE(page && page->status == 200);
  std::size_t checked = 0;
  for (const auto& g : groups) {
    const std::string gpu = g.value("gpu", std::string());
    if (gpu.empty() || g["offers"].get<int>() < 50) continue;  // the large groups: the page lists at most 300 rows
    const std::regex cell(std::regex_replace(gpu, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                          R"(</td><td class="num">([0-9]+)</td>)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(page->body, m, cell)) << gpu;
    EXPECT_EQ(std::stoi(m[1]), g["offers"].get<int>()) << gpu;
    ++checked;
  }
  EXPECT_GE(checked, 2u);
}

TEST_F(PagesQueryE2E, ASecondServerOnTheSameAddressFailsToListen) {
  const std::string port = std::to_string(server().port);
  const gpuplan::e2e::RunResult r =
      run_shell("timeout 20 '" + std::string(GPUPLAN_BINARY) + "' --db '" + (dir_ / "second.sqlite").string() +
                "' serve --listen 127.0.0.1:" + port + " 2>&1");
  EXPECT_EQ(r.exit_code, 5) << r.out;  // 124 would mean it bound and served
  EXPECT_NE(r.out.find("--listen: cannot listen on 127.0.0.1:" + port), std::string::npos) << r.out;
}

}  // namespace
