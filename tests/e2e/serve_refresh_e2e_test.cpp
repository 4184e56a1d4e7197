// End-to-end: `gpuplan serve --refresh-every` (issue 9, scheduling) runs the same fetch as
// `gpuplan fetch` on a schedule inside the serving process. The source (skypilot/lambda) is a
// loopback server in this test (--base-url); its reply is written in SkyPilot's vms.csv layout
// with invented prices. The test lowers the one-minute floor with the hidden
// --refresh-min-interval (docs/fetch.md) so two scheduled runs take seconds.
#include <gtest/gtest.h>
#include <httplib.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "serve_process.hpp"

namespace gpuplan::e2e {
namespace {

using json = nlohmann::json;

class ServeRefreshE2E : public BinaryE2E<ServeRefreshE2E> {
 public:
  static constexpr const char* kName = "serve-refresh";
};

/// SkyPilot catalog v8 vms.csv (header and GpuInfo as the catalog writes them); one A10 row in
/// a region no bundled row uses, at an invented price.
std::string vms_csv(const std::string& price) {
  return "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,GpuInfo\n"
         "gpu_1x_a10,A10,1.0,30.0,200.0," + price + ",,zz-test-1,\"{'Gpus': [{'Name': 'A10', 'Manufacturer': 'NVIDIA', "
         "'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 24576}}], 'TotalGpuMemoryInMiB': 24576}\"\n";
}

/// The on-demand price /api/offers shows for the test's offer (region zz-test-1), or -1.
double served_price(int port) {
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/api/offers?q=region%3Dzz-test-1&limit=10");
  if (!r || r->status != 200) return -2;
  const json j = json::parse(r->body, nullptr, false);
  if (j.is_discarded()) return -3;
  for (const json& o : j)
    if (o.value("id", "") == "lambda/gpu_1x_a10/zz-test-1" && o.contains("usd_per_hour") && o["usd_per_hour"].is_number())
      return o["usd_per_hour"].get<double>();
  return -1;
}

double wait_for_price(int port, double want, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  double got = served_price(port);
  while (got != want && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    got = served_price(port);
  }
  return got;
}

TEST_F(ServeRefreshE2E, ScheduledRefreshShowsNewPricesWithoutRestart) {
  // The loopback source: holds its first reply until the test has read /api/offers before any
  // refresh (so "before" is not a race with the first run, which comes at once on a store with
  // no snapshot), then serves `body`.
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  int requests = 0;
  std::string body = vms_csv("0.61");
  httplib::Server source;
  source.Get("/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv",
             [&](const httplib::Request&, httplib::Response& res) {
               std::unique_lock<std::mutex> lock(mu);
               cv.wait(lock, [&] { return release; });
               ++requests;
               res.set_content(body, "text/csv");
             });
  const int source_port = source.bind_to_any_port("127.0.0.1");
  std::thread source_thread([&] { source.listen_after_bind(); });
  while (!source.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  ServeOptions o;
  o.db = (dir_ / "refresh.sqlite").string();
  o.home = dir_;
  o.write_token = "";
  o.extra_args = {"--refresh-every", "2s", "--refresh-min-interval", "1s", "--refresh-sources", "skypilot/lambda",
                  "--base-url", "http://127.0.0.1:" + std::to_string(source_port)};
  ServeProcess s = start_serve(o);
  ASSERT_GT(s.port, 0) << s.first_line;

  // Before any refresh: the offer is not in the bundled catalog.
  EXPECT_EQ(served_price(s.port), -1.0);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  // First run: 0.61 USD/h served by the same process (no restart).
  EXPECT_EQ(wait_for_price(s.port, 0.61, std::chrono::seconds(30)), 0.61);
  // The source's price changes; a later scheduled run brings it in.
  {
    std::lock_guard<std::mutex> lock(mu);
    body = vms_csv("0.67");
  }
  EXPECT_EQ(wait_for_price(s.port, 0.67, std::chrono::seconds(30)), 0.67);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_GE(requests, 2);
  }
  // History keeps both observations (the refresh adds, never overwrites).
  {
    httplib::Client c("127.0.0.1", s.port);
    auto r = c.Get("/api/offers/" + httplib::detail::encode_query_param("lambda/gpu_1x_a10/zz-test-1") + "/history");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_NE(r->body.find("0.61"), std::string::npos) << r->body;
    EXPECT_NE(r->body.find("0.67"), std::string::npos) << r->body;
  }
  // SIGTERM stops the server and the refresh thread promptly (exit 0).
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(stop_serve(s), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  source.stop();
  source_thread.join();
}

TEST_F(ServeRefreshE2E, StopsPromptlyWhileATransferHangs) {
  // A source that never answers (within the test): SIGTERM must not wait for curl's timeout.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  httplib::Server source;
  source.Get("/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv",
             [&](const httplib::Request&, httplib::Response& res) {
               std::unique_lock<std::mutex> lock(mu);
               cv.wait_for(lock, std::chrono::seconds(60), [&] { return done; });
               res.status = 503;
             });
  const int source_port = source.bind_to_any_port("127.0.0.1");
  std::thread source_thread([&] { source.listen_after_bind(); });
  while (!source.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ServeOptions o;
  o.db = (dir_ / "hang.sqlite").string();
  o.home = dir_;
  o.write_token = "";
  o.stderr_too = true;
  o.extra_args = {"--refresh-every", "1h", "--refresh-sources", "skypilot/lambda", "--base-url",
                  "http://127.0.0.1:" + std::to_string(source_port)};
  ServeProcess s = start_serve(o);
  ASSERT_GT(s.port, 0) << s.first_line;
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the first run (at once: no snapshot yet) is in flight
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(s.pid, SIGTERM);
  std::string log;
  std::array<char, 1024> buf{};
  while (std::fgets(buf.data(), buf.size(), s.out) != nullptr) log += buf.data();  // until the child exits
  s.port = 0;  // already signalled
  EXPECT_EQ(stop_serve(s), 0) << log;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << log;  // curl's own timeout is 120 s
  // The cut download is reported as cancelled, not as a failed source (nothing recorded for it).
  EXPECT_NE(log.find("refresh: skypilot/lambda cancelled"), std::string::npos) << log;
  EXPECT_EQ(log.find("skypilot/lambda failed"), std::string::npos) << log;
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  source.stop();
  source_thread.join();
}

TEST_F(ServeRefreshE2E, BadScheduleFlagsAreClearErrors) {
  auto start_with = [&](std::vector<std::string> args) {
    ServeOptions o;
    o.db = (dir_ / "flags.sqlite").string();
    o.home = dir_;
    o.write_token = "";
    o.stderr_too = true;
    o.extra_args = std::move(args);
    ServeProcess s = start_serve(o);
    const std::string line = s.first_line;
    const int code = stop_serve(s);
    return std::make_pair(code, line);
  };
  auto [code, line] = start_with({"--refresh-every", "30s"});
  EXPECT_EQ(code, 2) << line;
  EXPECT_NE(line.find("--refresh-every"), std::string::npos) << line;
  EXPECT_NE(line.find("minimum of 60 s"), std::string::npos) << line;
  std::tie(code, line) = start_with({"--refresh-every", "6h", "--refresh-sources", "nope"});
  EXPECT_EQ(code, 3) << line;
  EXPECT_NE(line.find("nope"), std::string::npos) << line;
  std::tie(code, line) = start_with({"--refresh-sources", "aws"});
  EXPECT_EQ(code, 2) << line;
  EXPECT_NE(line.find("--refresh-every"), std::string::npos) << line;
  // trial9c item 6: serve takes the refresh's --frozen-after-days (default: each source's own).
  std::tie(code, line) = start_with({"--frozen-after-days", "5"});
  EXPECT_EQ(code, 2) << line;
  EXPECT_NE(line.find("--frozen-after-days"), std::string::npos) << line;
  EXPECT_NE(line.find("given without --refresh-every"), std::string::npos) << line;
  std::tie(code, line) = start_with({"--refresh-every", "6h", "--frozen-after-days", "-1"});
  EXPECT_EQ(code, 2) << line;
  EXPECT_NE(line.find("--frozen-after-days"), std::string::npos) << line;
  EXPECT_NE(line.find("days must not be negative"), std::string::npos) << line;
  {
    ServeOptions o;
    o.db = (dir_ / "frozen.sqlite").string();
    o.home = dir_;
    o.write_token = "";
    o.extra_args = {"--refresh-every", "6h", "--refresh-sources", "skypilot/lambda", "--base-url", "http://127.0.0.1:9",
                    "--frozen-after-days", "30"};
    ServeProcess s = start_serve(o);
    EXPECT_GT(s.port, 0) << s.first_line;  // accepted: the server listens
    EXPECT_EQ(stop_serve(s), 0);
  }
}

}  // namespace
}  // namespace gpuplan::e2e
