// End-to-end (issue 9, fetcher failures): the built `gpuplan fetch SOURCE --base-url` against a
// loopback server in this test that serves the recorded replies (tests/data/fetch: documented
// layouts, invented values) and injects one fault on one endpoint: 429 then success, HTTP 500,
// a reply slower than --timeout, a body cut short. For AWS (the per-region price list), Azure
// (the fault on the second page, reached through the rebased absolute NextPageLink) and vast.
// Each failure must fail that source alone (exit 1, its row "failed", the other source in the
// same run accepted) and write nothing for it; 429 then success is accepted. No test touches
// the internet.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;
using nlohmann::json;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/fetch/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

enum class Fault { none, once_429, always_500, slow, truncated };

/// The loopback provider: every endpoint the four sources use; `fault` applies to the requests
/// `faulty(path, request)` selects.
class Provider {
 public:
  Provider() {
    auto route = [this](const std::string& key, std::string body, std::string type) {
      return [this, key, body = std::move(body), type = std::move(type)](const httplib::Request&,
                                                                          httplib::Response& res) {
        answer(key, body, type, res);
      };
    };
    server_.Get("/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv",
                route("aws", fixture("aws-price-list.csv"), "text/csv"));
    server_.Get("/spot.json", route("aws-spot", fixture("aws-spot.json"), "application/json"));
    server_.Get("/spot-advisor-data.json", route("aws-advisor", fixture("aws-spot-advisor.json"), "application/json"));
    const std::string page1 = fixture("azure-page1.json"), page2 = fixture("azure-page2.json");
    server_.Get("/api/retail/prices", [this, page1, page2](const httplib::Request& req, httplib::Response& res) {
      if (req.has_param("$skip")) answer("azure-page2", page2, "application/json", res);
      else answer("azure-page1", page1, "application/json", res);
    });
    server_.Post("/api/v0/bundles/", route("vast", fixture("vast-bundles.json"), "application/json"));
    server_.Get("/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv",
                route("lambda", fixture("skypilot-lambda-vms.csv"), "text/csv"));
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Provider() {
    server_.stop();
    thread_.join();
  }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void inject(const std::string& key, Fault f) {
    std::lock_guard<std::mutex> lock(mu_);
    key_ = key;
    fault_ = f;
    hits_ = 0;
  }
  int hits() {
    std::lock_guard<std::mutex> lock(mu_);
    return hits_;
  }

 private:
  void answer(const std::string& key, const std::string& body, const std::string& type, httplib::Response& res) {
    Fault f = Fault::none;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (key == key_) {
        ++hits_;
        f = fault_;
        if (f == Fault::once_429 && hits_ > 1) f = Fault::none;
      }
    }
    switch (f) {
      case Fault::none:
        res.set_content(body, type);
        return;
      case Fault::once_429:
        res.status = 429;
        res.set_header("Retry-After", "1");
        res.set_content("Too Many Requests", "text/plain");
        return;
      case Fault::always_500:
        res.status = 500;
        res.set_content("internal error", "text/plain");
        return;
      case Fault::slow:
        std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // the runs use --timeout 1
        res.set_content(body, type);
        return;
      case Fault::truncated: {
        const std::string half = body.substr(0, body.size() / 2);
        res.set_content_provider(body.size(), type, [half](size_t offset, size_t, httplib::DataSink& sink) {
          if (offset == 0) {
            sink.write(half.data(), half.size());
            return true;
          }
          return false;  // the connection closes with half the announced length sent
        });
        return;
      }
    }
  }
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::string key_;
  Fault fault_ = Fault::none;
  int hits_ = 0;
};

class FetchFailuresE2E : public BinaryE2E<FetchFailuresE2E> {
 public:
  static constexpr const char* kName = "fetch-failures";

 protected:
  /// `gpuplan fetch SOURCE skypilot/lambda` on the store `db`, AWS limited to us-east-1.
  static RunResult fetch(const std::string& db, const std::string& source, const Provider& p, const std::string& flags) {
    return run_shell("GPUPLAN_AWS_REGIONS=us-east-1 XDG_DATA_HOME='" + dir_.string() + "' '" + GPUPLAN_BINARY +
                     "' --db '" + (dir_ / db).string() + "' fetch " + source + " skypilot/lambda --base-url " +
                     p.base() + " " + flags + " 2>&1");
  }
  /// Observations of `offer_id` that came from `fetch:SOURCE`.
  static int fetched_observations(const std::string& db, const std::string& offer_id, const std::string& source) {
    const RunResult h = run_db(db, "history '" + offer_id + "' --format json");
    if (h.exit_code != 0) return 0;  // no such offer: nothing written
    const json j = json::parse(h.out, nullptr, false);
    int n = 0;
    const json& obs = j.contains("observations") ? j["observations"] : j;
    for (const json& o : obs) n += o.dump().find("fetch:" + source) != std::string::npos;
    return n;
  }
  /// The STATUS cell of `source`'s row in the fetch table ("" when absent).
  static std::string status_of(const std::string& out, const std::string& source) {
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind(source + " ", 0) != 0) continue;
      std::istringstream cells(line);
      std::string name, status;
      cells >> name >> status;
      return status;
    }
    return "";
  }

  /// The four faults on `key`, for `source`; `offer_id` is an offer the source's recorded reply holds.
  void check_source(const std::string& source, const std::string& key, const std::string& offer_id) {
    Provider p;
    const std::string db = source + ".sqlite";
    struct Case {
      Fault fault;
      const char* flags;
      const char* says;
      int hits;  // requests the faulty endpoint got (attempts)
    };
    const Case failing[] = {
        {Fault::always_500, "--retries 2", "HTTP 500", 2},
        {Fault::slow, "--retries 1 --timeout 1", "timed out", 1},
        {Fault::truncated, "--retries 1", "", 1},
    };
    for (const Case& c : failing) {
      p.inject(key, c.fault);
      const RunResult r = fetch(db, source, p, c.flags);
      SCOPED_TRACE(source + " " + c.flags);
      EXPECT_EQ(r.exit_code, 1) << r.out;
      EXPECT_EQ(status_of(r.out, source), "failed") << r.out;
      const std::string other = status_of(r.out, "skypilot/lambda");
      EXPECT_TRUE(other == "accepted" || other == "unchanged") << r.out;  // only that source failed
      if (*c.says) {
        EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
      }
      EXPECT_EQ(p.hits(), c.hits) << r.out;
      EXPECT_EQ(fetched_observations(db, offer_id, source), 0) << "nothing written for " << source;
    }
    // 429 with Retry-After: 1, then the reply: accepted, the offer's observation written.
    p.inject(key, Fault::once_429);
    const RunResult ok = fetch(db, source, p, "--retries 3");
    EXPECT_EQ(ok.exit_code, 0) << ok.out;
    EXPECT_EQ(status_of(ok.out, source), "accepted") << ok.out;
    EXPECT_EQ(p.hits(), 2) << ok.out;
    EXPECT_GE(fetched_observations(db, offer_id, source), 1) << ok.out;
  }
};

TEST_F(FetchFailuresE2E, AwsPriceListFailuresRejectOnlyAws) {
  check_source("aws", "aws", "aws/g5.xlarge/us-east-1");
}

TEST_F(FetchFailuresE2E, AzureSecondPageFailuresRejectTheWholeAzureSnapshot) {
  // Page 1 (which holds this offer) is served each time: a failure on page 2 must still write nothing.
  check_source("azure", "azure-page2", "azure/standard_nd96isr_h100_v5/eastus");
}

TEST_F(FetchFailuresE2E, VastFailuresRejectOnlyVast) {
  check_source("vast", "vast", "vast/2x rtx 4090/no");
}

TEST_F(FetchFailuresE2E, KeyedSourcesSayWhatTheyNeed) {
  // Every keyed source has an adapter; without its variable(s) it is skipped, naming them.
  RunResult r = run("fetch gcp verda hyperstack shadeform");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* key : {"GCP_BILLING_API_KEY", "VERDA_CLIENT_ID, VERDA_CLIENT_SECRET", "HYPERSTACK_API_KEY",
                          "SHADEFORM_API_KEY"})
    EXPECT_NE(r.out.find(std::string("needs ") + key + " in the environment"), std::string::npos) << key << "\n" << r.out;
  r = run("fetch --list");
  for (const char* s : {"gcp", "verda", "hyperstack", "shadeform", "SHADEFORM_API_KEY", "VERDA_CLIENT_SECRET"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  EXPECT_EQ(r.out.find("not built yet"), std::string::npos) << r.out;
}

}  // namespace

namespace {

// trial48 #9: a dry run whose snapshot the gates refuse said "1 price would change … 98.3200 ->
// 1000000000000000010979…" (309 digits). A refused snapshot changes nothing: its changes are
// listed as what it held, and a price beyond any gate is printed in 4 significant digits.
TEST_F(FetchFailuresE2E, ARefusedDryRunSaysNothingWouldChange) {
  std::string page1 = fixture("azure-page1.json");
  const std::string page2 = fixture("azure-page2.json");
  std::mutex mu;
  httplib::Server server;
  server.Get("/api/retail/prices", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    res.set_content(req.has_param("$skip") ? page2 : page1, "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::string cmd = "XDG_DATA_HOME='" + dir_.string() + "' '" + GPUPLAN_BINARY + "' --db '" +
                          (dir_ / "refused.sqlite").string() + "' fetch azure --base-url http://127.0.0.1:" +
                          std::to_string(port) + " --retries 1";
  const RunResult first = run_shell(cmd + " 2>&1");
  EXPECT_EQ(status_of(first.out, "azure"), "accepted") << first.out;
  {
    std::lock_guard<std::mutex> lock(mu);
    const std::string was = R"("retailPrice":98.0)";
    const auto at = page1.find(was);
    ASSERT_NE(at, std::string::npos);
    page1.replace(at, was.size(), R"("retailPrice":1e308)");
  }
  const RunResult dry = run_shell(cmd + " --dry-run 2>&1");
  server.stop();
  t.join();
  EXPECT_NE(status_of(dry.out, "azure"), "accepted") << dry.out;
  EXPECT_EQ(dry.out.find("price would change"), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find("prices would change"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("snapshot (nothing would change)"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("98.0000 -> 1e+308 USD/h"), std::string::npos) << dry.out;
}

}  // namespace
