// End-to-end: the built `gpuplan fetch` (GPUPLAN_BINARY) against recorded responses served by a
// loopback server in this test (--base-url http://127.0.0.1:PORT), into a temporary --db.
// No test touches the internet.
#include <gtest/gtest.h>
#include <httplib.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/fetch/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct RunResult {
  int exit_code = -1;
  std::string out;
};

class FetchE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuplan-e2e-fetch-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    server_.Get("/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv",
                [this](const httplib::Request&, httplib::Response& r) { r.set_content(*body_, "text/csv"); });
    server_.Get("/skypilot-org/skypilot-catalog/master/catalogs/v8/gcp/vms.csv",
                [this](const httplib::Request&, httplib::Response& r) { r.set_content(*skypilot_gcp_, "text/csv"); });
    server_.Post("/api/v0/bundles/", [](const httplib::Request&, httplib::Response& r) { r.status = 503; });
    server_.Get("/v2/plans", [this](const httplib::Request& req, httplib::Response& r) {
      r.set_content(req.get_param_value("cursor") == "cursor-2" ? *vultr_plans2_ : *vultr_plans1_, "application/json");
    });
    server_.Get("/v2/plans-metal", [this](const httplib::Request&, httplib::Response& r) {
      r.set_content(*vultr_metal_, "application/json");
    });
    server_.Post("/graphql", [this](const httplib::Request&, httplib::Response& r) {
      r.set_content(*runpod_, "application/json");
    });
    // Keyed sources (documented layouts, invented values): GCP billing SKUs in two pages, Verda.
    server_.Get("/v1/services/6F81-5844-456A/skus", [this](const httplib::Request& req, httplib::Response& r) {
      if (req.get_header_value("X-Goog-Api-Key") != "gkey") {
        r.status = 403;
        return;
      }
      r.set_content(req.get_param_value("pageToken").empty() ? fixture("gcp-skus-1.json") : *gcp_page2_,
                    "application/json");
    });
    server_.Post("/v1/oauth2/token", [](const httplib::Request& req, httplib::Response& r) {
      const auto j = nlohmann::json::parse(req.body, nullptr, false);
      if (j.is_discarded() || j.value("client_secret", "") != "good") {
        r.status = 401;
        r.set_content(R"({"code": "unauthorized_request"})", "application/json");
        return;
      }
      r.set_content(R"({"access_token": "tok", "token_type": "Bearer", "expires_in": 3600})", "application/json");
    });
    server_.Get("/v1/instance-types", [](const httplib::Request& req, httplib::Response& r) {
      if (req.get_header_value("Authorization") != "Bearer tok") r.status = 401;
      else r.set_content(fixture("verda-instance-types.json"), "application/json");
    });
    server_.Get("/v1/instance-availability", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(fixture("verda-instance-availability.json"), "application/json");
    });
    // Hyperstack (the api_key header) and Shadeform (the X-API-KEY header): a wrong key is a 401
    // with the providers' error bodies; the key each request carried is kept for the test.
    auto keyed = [this](const std::string& header, std::shared_ptr<std::string> body, const char* refusal) {
      return [this, header, body, refusal](const httplib::Request& req, httplib::Response& r) {
        {
          std::lock_guard<std::mutex> lock(keys_mu_);
          keys_seen_.push_back(req.get_header_value(header));
        }
        if (req.get_header_value(header) != kGoodKey) {
          r.status = 401;
          r.set_content(refusal, "application/json");
          return;
        }
        r.set_content(*body, "application/json");
      };
    };
    constexpr const char* kHyperstackRefusal = R"({"status": false, "message": "Invalid API key"})";
    server_.Get("/v1/core/flavors", keyed("api_key", hyperstack_flavors_, kHyperstackRefusal));
    server_.Get("/v1/pricebook", keyed("api_key", hyperstack_pricebook_, kHyperstackRefusal));
    server_.Get("/v1/core/stocks", keyed("api_key", hyperstack_stocks_, kHyperstackRefusal));
    server_.Get("/v1/instances/types", keyed("X-API-KEY", shadeform_types_, R"({"message": "Invalid API key"})"));
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  RunResult run(const std::string& args, const std::string& env = {}) {
    const std::string cmd = env + " XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" +
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
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }

  fs::path dir_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::shared_ptr<std::string> body_ = std::make_shared<std::string>(fixture("skypilot-lambda-vms.csv"));
  // SkyPilot's GCP layout (host rows without an accelerator, accelerator-only rows with an empty
  // InstanceType; data/offers/PROVENANCE.md), invented prices: one host + GPU pair that makes an
  // offer, and one row of each kind the importer leaves out.
  std::shared_ptr<std::string> skypilot_gcp_ = std::make_shared<std::string>(
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"
      "a2-highgpu-8g,,,96,680,,1.00,0.40,us-central1,us-central1-a\n"  // host of the pair below
      ",A100,8,,,,20.00,6.00,us-central1,us-central1-a\n"             // its 8 x A100: one offer, $21.00
      ",T4,1,,,,0.35,0.10,us-central1,us-central1-a\n"                // accelerator without a host
      "a3-highgpu-8g,,,208,1872,,2.00,,us-central1,us-central1-b\n"   // host without its accelerator row
      "n2-standard-8,,,8,32,,0.40,0.10,us-central1,us-central1-a\n"); // a CPU machine
  std::shared_ptr<std::string> vultr_plans1_ = std::make_shared<std::string>(fixture("vultr-plans-1.json"));
  std::shared_ptr<std::string> vultr_plans2_ = std::make_shared<std::string>(fixture("vultr-plans-2.json"));
  std::shared_ptr<std::string> vultr_metal_ = std::make_shared<std::string>(fixture("vultr-metal.json"));
  std::shared_ptr<std::string> runpod_ = std::make_shared<std::string>(fixture("runpod-gputypes.json"));
  std::shared_ptr<std::string> gcp_page2_ = std::make_shared<std::string>(fixture("gcp-skus-2.json"));
  std::shared_ptr<std::string> hyperstack_flavors_ = std::make_shared<std::string>(fixture("hyperstack-flavors.json"));
  std::shared_ptr<std::string> hyperstack_pricebook_ =
      std::make_shared<std::string>(fixture("hyperstack-pricebook.json"));
  std::shared_ptr<std::string> hyperstack_stocks_ = std::make_shared<std::string>(fixture("hyperstack-stocks.json"));
  std::shared_ptr<std::string> shadeform_types_ =
      std::make_shared<std::string>(fixture("shadeform-instance-types.json"));
  static constexpr const char* kGoodKey = "e2e-secret-key-5f3a9c";  // the key the loopback provider accepts
  std::mutex keys_mu_;
  std::vector<std::string> keys_seen_;  // the key header of each keyed request, in order

  std::vector<std::string> keys_seen() {
    std::lock_guard<std::mutex> lock(keys_mu_);
    return keys_seen_;
  }
  /// The stored offers of `provider` as `gpuplan offers` lists them (every field, flagged ones too,
  /// a fixed today so ages do not move): equal before and after a fetch that must write nothing.
  std::string stored_offers(const std::string& provider) {
    return run("offers provider=" + provider + " --include-flagged --limit 0 --today 2026-12-04 --format json").out;
  }
  /// The offer `id` of `provider` as `gpuplan offers --format json` lists it (null when absent).
  nlohmann::json stored_offer(const std::string& provider, const std::string& id) {
    const auto j = nlohmann::json::parse(stored_offers(provider), nullptr, false);
    for (const auto& o : j.is_array() ? j : nlohmann::json::array())
      if (o.value("id", "") == id) return o;
    return nullptr;
  }
  /// EXPECTs that the stored offer `id` of `provider` is (or is not) confirmed available.
  void expect_confirmed(const std::string& provider, const std::string& id, bool confirmed) {
    const auto o = stored_offer(provider, id);
    ASSERT_TRUE(o.is_object()) << id;
    EXPECT_EQ(o["confirmed_available_at"].is_string(), confirmed) << o.dump();
  }
  /// Runs `gpuplan fetch SOURCE` with the key in `env_var` (`key`) on this test's store.
  /// The fetch time is fixed (the hidden --fetched-at) at stored_offers' --today: with the clock's
  /// time, the suite failed from 2026-12-05 on ("--today 2026-12-04 is before every price
  /// observation").
  RunResult fetch_keyed(const std::string& source, const std::string& env_var, const std::string& key) {
    return run("fetch " + source + " --retries 1 --fetched-at 2026-12-04T00:00:00Z --base-url " + base(),
               env_var + "='" + key + "'");
  }
  /// A refused key (HTTP 401) and then each of `bad_bodies` served as `body`: the run fails or is
  /// rejected with a clear message, and the provider's stored offers stay exactly as they were.
  void expect_refusal_and_malformed_replies_write_nothing(const std::string& source, const std::string& env_var,
                                                          const std::shared_ptr<std::string>& body,
                                                          const std::vector<std::string>& bad_bodies) {
    ASSERT_EQ(fetch_keyed(source, env_var, kGoodKey).exit_code, 0);  // a first accepted snapshot
    const std::string before = stored_offers(source);
    ASSERT_NE(before.find("fetch:" + source), std::string::npos) << before.substr(0, 2000);

    const RunResult refused = fetch_keyed(source, env_var, "revoked-key-0000");
    EXPECT_EQ(refused.exit_code, 1) << refused.out;
    EXPECT_NE(refused.out.find("failed"), std::string::npos) << refused.out;
    EXPECT_NE(refused.out.find("refused the credentials in " + env_var + " (HTTP 401)"), std::string::npos)
        << refused.out;
    EXPECT_EQ(stored_offers(source), before);
    EXPECT_FALSE(store_contains("revoked-key-0000"));

    const std::string good = *body;
    for (const std::string& bad : bad_bodies) {
      *body = bad;
      const RunResult r = fetch_keyed(source, env_var, kGoodKey);
      SCOPED_TRACE(bad);
      EXPECT_EQ(r.exit_code, 1) << r.out;
      EXPECT_NE(r.out.find("rejected"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("malformed response"), std::string::npos) << r.out;
      EXPECT_EQ(stored_offers(source), before);
    }
    *body = good;
  }
  /// True when `needle` occurs in any file of the store (the database and its journal / WAL).
  bool store_contains(const std::string& needle) const {
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename().string().rfind("offers.sqlite", 0) != 0) continue;
      std::ifstream in(e.path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (bytes.find(needle) != std::string::npos) return true;
    }
    return false;
  }
};

/// The usd_per_hour of the `kind` observations from `dataset` in `gpuplan history ID --format json`.
std::vector<double> fetched_prices(const std::string& history_json, const std::string& dataset, const std::string& kind) {
  std::vector<double> v;
  const auto j = nlohmann::json::parse(history_json, nullptr, false);
  if (j.is_discarded()) return v;
  const auto& obs = j.contains("observations") ? j["observations"] : j;
  for (const auto& o : obs) {
    if (o.dump().find(dataset) == std::string::npos || o.dump().find("\"" + kind + "\"") == std::string::npos) continue;
    v.push_back(o.value("usd_per_hour", -1.0));
  }
  return v;
}

TEST_F(FetchE2E, FetchesASourceThroughTheBinaryAndKeepsHistory) {
  RunResult dry = run("fetch skypilot/lambda --dry-run --base-url " + base());
  ASSERT_EQ(dry.exit_code, 0) << dry.out;
  EXPECT_NE(dry.out.find("would-accept"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("nothing written"), std::string::npos) << dry.out;

  RunResult first = run("fetch skypilot/lambda --base-url " + base());
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_NE(first.out.find("accepted"), std::string::npos) << first.out;

  RunResult again = run("fetch skypilot/lambda --base-url " + base());
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("unchanged"), std::string::npos) << again.out;

  // A new price adds an observation; the old one stays.
  const auto pos = body_->find("0.75,,us-east-1");
  ASSERT_NE(pos, std::string::npos);
  body_->replace(pos, 4, "0.80");
  RunResult third = run("fetch skypilot/lambda --base-url " + base());
  ASSERT_EQ(third.exit_code, 0) << third.out;
  RunResult hist = run("history lambda/gpu_1x_a10/us-east-1 --format json");
  ASSERT_EQ(hist.exit_code, 0) << hist.out;
  const auto j = nlohmann::json::parse(hist.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << hist.out;
  int fetched = 0;
  bool saw_075 = false, saw_080 = false;
  const auto& obs = j.contains("observations") ? j["observations"] : j;
  for (const auto& o : obs) {
    if (o.dump().find("fetch:skypilot/lambda") == std::string::npos) continue;
    ++fetched;
    const double p = o.value("usd_per_hour", -1.0);
    saw_075 = saw_075 || p == 0.75;
    saw_080 = saw_080 || p == 0.80;
  }
  EXPECT_EQ(fetched, 2) << hist.out;
  EXPECT_TRUE(saw_075 && saw_080) << hist.out;
}

TEST_F(FetchE2E, AFeedThatStopsGivingPricesIsRejectedAndTheStoredPricesStay) {
  // Issue 9 trial D2: a price the source leaves out is stored as unknown, so a Vultr reply whose
  // hourly_cost was renamed upstream used to be accepted as 3 offers of unknown price. Now the
  // snapshot is rejected (exit 1) by the "priced" gate and the stored offers stay as the first
  // fetch left them. Vultr's plan fixtures: the L40S plan in ewr and fra, the 8x H100 metal plan.
  ASSERT_EQ(run("fetch vultr --base-url " + base()).exit_code, 0);
  const std::string before = stored_offers("vultr");
  ASSERT_NE(before.find("fetch:vultr"), std::string::npos) << before.substr(0, 2000);
  for (const auto& body : {vultr_plans1_, vultr_plans2_, vultr_metal_})
    for (auto pos = body->find("\"hourly_cost\""); pos != std::string::npos; pos = body->find("\"hourly_cost\""))
      body->replace(pos, 13, "\"hourly_usd\"");
  const RunResult r = run("fetch vultr --base-url " + base());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("rejected"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("priced: none of the 3 offers has a price"), std::string::npos) << r.out;
  EXPECT_EQ(stored_offers("vultr"), before);
}

TEST_F(FetchE2E, AFailingSourceExitsOneAndOthersStillLand) {
  RunResult r = run("fetch vast skypilot/lambda --retries 1 --base-url " + base());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("accepted"), std::string::npos) << r.out;
}

TEST_F(FetchE2E, UnknownSourceAndBadBaseUrlAreClearErrors) {
  RunResult unknown = run("fetch no-such-source");
  EXPECT_EQ(unknown.exit_code, 3) << unknown.out;
  EXPECT_NE(unknown.out.find("no-such-source"), std::string::npos) << unknown.out;
  RunResult bad = run("fetch skypilot/lambda --base-url not-a-url");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--base-url"), std::string::npos) << bad.out;
}

TEST_F(FetchE2E, ABaseUrlIsHttpOrHttpsWithHostAndPortOnly) {
  // Issue 9 trial D5: `--base-url ""` fetched the real host; a path or query was dropped; ftp://
  // passed. Each is a bad flag now (exit 2, nothing fetched), its message naming what is wrong.
  for (const auto& [base, words] : std::vector<std::pair<std::string, std::string>>{
           {"''", "empty"},
           {base() + "/mirror", "path '/mirror'"},
           {base() + "?token=1", "a query"},
           {"ftp://127.0.0.1:21", "scheme 'ftp'"}}) {
    RunResult r = run("fetch skypilot/lambda --base-url " + (base == "''" ? base : "'" + base + "'"));
    EXPECT_EQ(r.exit_code, 2) << base << ": " << r.out;
    EXPECT_NE(r.out.find("--base-url"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(words), std::string::npos) << base << ": " << r.out;
    EXPECT_EQ(r.out.find("accepted"), std::string::npos) << r.out;
  }
}

TEST_F(FetchE2E, APortOutOfRangeIsNamedNotCalledARelativeUrl) {
  // trial9b D7: `--base-url http://127.0.0.1:99999` was refused as "not an absolute URL". A TCP
  // port is 1..65535 (RFC 793's 16-bit port field; 0 is reserved): the message names the port.
  for (const std::string port : {"99999", "65536", "0"}) {
    RunResult r = run("fetch skypilot/lambda --base-url http://127.0.0.1:" + port);
    EXPECT_EQ(r.exit_code, 2) << port << ": " << r.out;
    EXPECT_NE(r.out.find("has port " + port + ": a port is a whole number from 1 to 65535"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("not an absolute URL"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("accepted"), std::string::npos) << r.out;
  }
  EXPECT_EQ(stored_offers("lambda").find("fetch:"), std::string::npos);  // nothing fetched, nothing written
}

TEST_F(FetchE2E, NegativeFrozenAfterDaysIsABadFlag) {
  // Issue 9 trial D6: `--frozen-after-days -1` was accepted; refused like the other gate flags.
  RunResult r = run("fetch skypilot/lambda --base-url " + base() + " --frozen-after-days -1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--frozen-after-days"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("accepted"), std::string::npos) << r.out;
  RunResult zero = run("fetch skypilot/lambda --base-url " + base() + " --frozen-after-days 0");
  EXPECT_EQ(zero.exit_code, 0) << zero.out;  // 0: every unchanged fetch warns; allowed
}

TEST_F(FetchE2E, AFetchTimeOutsideTheClockIsABadFlag) {
  // trial9e: the tests' hidden --fetched-at took 25:61:99 and stored it as observed_at.
  for (const char* at : {"2026-11-30T25:00:00Z", "2026-11-30T10:61:00Z", "2026-11-30T10:00:99Z"}) {
    RunResult r = run(std::string("fetch skypilot/lambda --base-url ") + base() + " --fetched-at " + at);
    EXPECT_EQ(r.exit_code, 2) << at << "\n" << r.out;
    EXPECT_NE(r.out.find("--fetched-at"), std::string::npos) << r.out;
  }
  EXPECT_EQ(stored_offers("lambda").find("fetch:"), std::string::npos);  // nothing fetched, nothing written
}

TEST_F(FetchE2E, ListNamesTheSources) {
  RunResult r = run("fetch --list");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* s : {"aws", "azure", "runpod", "vast", "skypilot/lambda", "gpuhunt/oci"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  // Each source's frozen-feed limit (trial9c item 6): live marketplaces 3 days, list prices 30.
  auto row = [&](const std::string& name) {
    const std::size_t at = r.out.find("\n" + name + " ");
    return at == std::string::npos ? std::string() : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(row("vast").find(" 3 days "), std::string::npos) << row("vast");
  EXPECT_NE(row("runpod").find(" 3 days "), std::string::npos) << row("runpod");
  EXPECT_NE(row("vultr").find(" 30 days "), std::string::npos) << row("vultr");
  EXPECT_NE(row("skypilot/lambda").find(" 30 days "), std::string::npos) << row("skypilot/lambda");
}

TEST_F(FetchE2E, GcpAssemblesTheMachinePriceFromItsSkusAcrossPages) {
  RunResult none = run("fetch gcp --base-url " + base());
  EXPECT_EQ(none.exit_code, 0) << none.out;
  EXPECT_NE(none.out.find("needs GCP_BILLING_API_KEY in the environment"), std::string::npos) << none.out;
  RunResult r = run("fetch gcp --base-url " + base(), "GCP_BILLING_API_KEY=gkey");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("accepted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("does not map"), std::string::npos) << r.out;  // machines skipped for a missing SKU, counted
  RunResult h = run("history gcp/a2-highgpu-1g/us-central1 --format json");
  ASSERT_EQ(h.exit_code, 0) << h.out;
  // a2-highgpu-1g (1 A100, 12 vCPUs, 85 GiB): 1 × $2.50 + 12 × $0.03 + 85 × $0.004 = $3.20 on demand;
  // spot 1 × $1.00 + 12 × $0.01 + 85 × $0.001 = $1.205 (gcp-skus-1/2.json, invented prices).
  const auto od = fetched_prices(h.out, "fetch:gcp", "on-demand");
  ASSERT_EQ(od.size(), 1u) << h.out;
  EXPECT_NEAR(od[0], 3.20, 1e-9);
  const auto spot = fetched_prices(h.out, "fetch:gcp", "spot");
  ASSERT_EQ(spot.size(), 1u) << h.out;
  EXPECT_NEAR(spot[0], 1.205, 1e-9);
  // a3-highgpu-8g (8 H100, 208 vCPUs, 1872 GiB, 6000 GiB bundled local SSD): 8 × $9.80 + 208 × $0.025
  // + 1872 × $0.003 + 6000 × ($0.073 per GiB-month / 730 h = $0.0001 per GiB-hour) = 78.40 + 5.20
  // + 5.616 + 0.60 = $89.816 on demand.
  const auto a3 = fetched_prices(run("history gcp/a3-highgpu-8g/us-central1 --format json").out, "fetch:gcp",
                                 "on-demand");
  ASSERT_EQ(a3.size(), 1u);
  EXPECT_NEAR(a3[0], 89.816, 1e-9);
  // us-east4 has the H100, A3 core and A3 RAM SKUs but no Local SSD SKU: not priced without its disk.
  EXPECT_TRUE(fetched_prices(run("history gcp/a3-highgpu-8g/us-east4 --format json").out, "fetch:gcp", "on-demand")
                  .empty());
  // us-east1 lacks the A2 RAM SKU: that machine is skipped there, not priced from its GPU and cores
  // (the bundled catalog may know the offer: no observation of this fetch).
  const RunResult east = run("history gcp/a2-highgpu-1g/us-east1 --format json");
  EXPECT_TRUE(fetched_prices(east.out, "fetch:gcp", "on-demand").empty()) << east.out;
}

TEST_F(FetchE2E, GcpMalformedPageRejectsTheSnapshotAndWritesNothing) {
  *gcp_page2_ = R"({"skus": [{"skuId": )";
  RunResult r = run("fetch gcp --base-url " + base(), "GCP_BILLING_API_KEY=gkey");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("rejected"), std::string::npos) << r.out;
  const RunResult h = run("history gcp/a2-highgpu-1g/us-central1 --format json");
  EXPECT_TRUE(fetched_prices(h.out, "fetch:gcp", "on-demand").empty()) << h.out;
  EXPECT_TRUE(fetched_prices(h.out, "fetch:gcp", "spot").empty()) << h.out;
}

TEST_F(FetchE2E, VerdaSignsInThenPricesPerLocationAndA401FailsIt) {
  RunResult none = run("fetch verda --base-url " + base(), "VERDA_CLIENT_ID=cid");
  EXPECT_EQ(none.exit_code, 0) << none.out;
  EXPECT_NE(none.out.find("needs VERDA_CLIENT_SECRET in the environment"), std::string::npos) << none.out;
  RunResult bad = run("fetch verda --retries 1 --base-url " + base(), "VERDA_CLIENT_ID=cid VERDA_CLIENT_SECRET=wrong");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("failed"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("401"), std::string::npos) << bad.out;
  EXPECT_TRUE(fetched_prices(run("history verda/1h100.80s.30v/fin-01 --format json").out, "fetch:verda", "on-demand")
                  .empty());
  RunResult ok = run("fetch verda --base-url " + base(), "VERDA_CLIENT_ID=cid VERDA_CLIENT_SECRET=good");
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  RunResult h = run("history verda/1h100.80s.30v/fin-01 --format json");
  ASSERT_EQ(h.exit_code, 0) << h.out;
  const auto od = fetched_prices(h.out, "fetch:verda", "on-demand");
  ASSERT_EQ(od.size(), 1u) << h.out;
  EXPECT_DOUBLE_EQ(od[0], 2.45);  // "price_per_hour": "2.45"
}

TEST_F(FetchE2E, HyperstackPricesEachFlavorPerGpuHourWithTheKeyInItsHeaderOnly) {
  RunResult none = run("fetch hyperstack --base-url " + base());
  EXPECT_EQ(none.exit_code, 0) << none.out;
  EXPECT_NE(none.out.find("needs HYPERSTACK_API_KEY in the environment"), std::string::npos) << none.out;
  EXPECT_TRUE(keys_seen().empty());  // no request without the key
  RunResult r = fetch_keyed("hyperstack", "HYPERSTACK_API_KEY", kGoodKey);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("accepted"), std::string::npos) << r.out;
  // Every request (flavors, pricebook, stocks) carried the key in the documented `api_key` header.
  const std::vector<std::string> keys = keys_seen();
  EXPECT_EQ(keys.size(), 3u);
  for (const std::string& k : keys) EXPECT_EQ(k, kGoodKey);
  // hyperstack-pricebook.json prices H100-80G-PCIe at $1.90 per GPU-hour (the current entry,
  // end_time null; the ended $2.50 entry is not read). n3-H100x1 has 1 GPU: 1 × 1.90 = $1.90/h.
  auto od = fetched_prices(run("history hyperstack/n3-h100x1/canada-1 --format json").out, "fetch:hyperstack",
                           "on-demand");
  ASSERT_EQ(od.size(), 1u);
  EXPECT_NEAR(od[0], 1.90, 1e-9);
  // n3-H100x8 has 8 GPUs: 8 × 1.90 = $15.20/h for the machine.
  od = fetched_prices(run("history hyperstack/n3-h100x8/canada-1 --format json").out, "fetch:hyperstack",
                      "on-demand");
  ASSERT_EQ(od.size(), 1u);
  EXPECT_NEAR(od[0], 15.20, 1e-9);
  // hyperstack-stocks.json, CANADA-1 H100-80G-PCIe: "1x": 12 → the 1-GPU flavor is confirmed
  // available at the fetch; "8x": 0 → the 8-GPU flavor is not, though "available" is "40+".
  expect_confirmed("hyperstack", "hyperstack/n3-h100x1/canada-1", true);
  expect_confirmed("hyperstack", "hyperstack/n3-h100x8/canada-1", false);
  // H200-141G-SXM5 has no pricebook entry: the offer is stored with an unknown price, no observation.
  EXPECT_TRUE(fetched_prices(run("history hyperstack/n3-h200x8/norway-1 --format json").out, "fetch:hyperstack",
                             "on-demand")
                  .empty());
  // The key is in no stored URL, snapshot or offer: nowhere in the store, nor in the output
  // (the scan does read the store: the fetched flavor URL is found in it).
  ASSERT_TRUE(store_contains(base() + "/v1/core/flavors"));
  EXPECT_FALSE(store_contains(kGoodKey));
  EXPECT_EQ(r.out.find(kGoodKey), std::string::npos) << r.out;
}

TEST_F(FetchE2E, HyperstackRefusedKeyOrMalformedReplyWritesNothing) {
  expect_refusal_and_malformed_replies_write_nothing(
      "hyperstack", "HYPERSTACK_API_KEY", hyperstack_pricebook_,
      {R"({"status": true, "data": []})",  // an object where the documented pricebook is an array
       R"([{"id": 10, "name": "H100-80G-PCIe", "value": 1.9)"});  // cut short
  expect_refusal_and_malformed_replies_write_nothing("hyperstack", "HYPERSTACK_API_KEY", hyperstack_flavors_,
                                                     {R"({"status": true, "data": {"gpu": "H100-80G-PCIe"}})"});
  expect_refusal_and_malformed_replies_write_nothing(
      "hyperstack", "HYPERSTACK_API_KEY", hyperstack_stocks_,
      {R"({"stocks": [{"region": "CANADA-1", "stock-type": "GPU", "models": {}}]})"});  // models not a list
}

TEST_F(FetchE2E, ShadeformPricesEachRegionInCentsWithTheKeyInItsHeaderOnly) {
  RunResult none = run("fetch shadeform --base-url " + base());
  EXPECT_EQ(none.exit_code, 0) << none.out;
  EXPECT_NE(none.out.find("needs SHADEFORM_API_KEY in the environment"), std::string::npos) << none.out;
  EXPECT_TRUE(keys_seen().empty());
  RunResult r = fetch_keyed("shadeform", "SHADEFORM_API_KEY", kGoodKey);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("accepted"), std::string::npos) << r.out;
  const std::vector<std::string> keys = keys_seen();  // the documented X-API-KEY header
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0], kGoodKey);
  // shadeform-instance-types.json: hyperstack n3-H100x1, "hourly_price": 219 (US cents per hour for
  // the instance, 1 GPU) → $2.19/h = $2.19 per GPU-hour, in each listed region.
  for (const char* id : {"shadeform/hyperstack:n3-h100x1/canada-1", "shadeform/hyperstack:n3-h100x1/norway-1"}) {
    const auto od = fetched_prices(run(std::string("history ") + id + " --format json").out, "fetch:shadeform",
                                   "on-demand");
    ASSERT_EQ(od.size(), 1u) << id;
    EXPECT_NEAR(od[0], 2.19, 1e-9) << id;
  }
  // canada-1 is listed "available": true → confirmed available at the fetch; norway-1 false → not.
  expect_confirmed("shadeform", "shadeform/hyperstack:n3-h100x1/canada-1", true);
  expect_confirmed("shadeform", "shadeform/hyperstack:n3-h100x1/norway-1", false);
  // lambdalabs gpu_8x_h100_sxm5: 2392 cents for the 8-GPU instance → $23.92/h, 23.92 / 8 = $2.99 per GPU-hour.
  const auto eight = stored_offer("shadeform", "shadeform/lambdalabs:gpu_8x_h100_sxm5/");
  ASSERT_TRUE(eight.is_object());
  EXPECT_EQ(eight.value("gpu_count", 0), 8);
  EXPECT_NEAR(eight.value("usd_per_hour", -1.0), 23.92, 1e-9) << eight.dump();
  EXPECT_NEAR(eight.value("usd_per_gpu_hour", -1.0), 2.99, 1e-9) << eight.dump();
  EXPECT_FALSE(store_contains(kGoodKey));
  EXPECT_EQ(r.out.find(kGoodKey), std::string::npos) << r.out;
}

TEST_F(FetchE2E, ShadeformRefusedKeyOrMalformedReplyWritesNothing) {
  expect_refusal_and_malformed_replies_write_nothing(
      "shadeform", "SHADEFORM_API_KEY", shadeform_types_,
      {R"({"instance_types": [{"cloud": "hyperstack", "hourly_price": 219)",  // cut short
       R"({"instance_types": {"cloud": "hyperstack"}})"});  // an object where the documented list is an array
}

}  // namespace

// Issue 9 trial D7: rows a feed gives that cannot become offers were skipped silently. The report
// names each rule with its count and the rows (file position and the importer's words).
TEST_F(FetchE2E, RowsLeftOutOfASnapshotAreCountedAndNamed) {
  // An unknown accelerator on the Lambda feed: kept out of plans, flagged.
  body_->append("gpu_1x_zx9000,ZX9000,1.0,8.0,64.0,1.10,,us-east-1,\"{'Gpus': [{'Name': 'ZX9000', 'Manufacturer': "
                "'NVIDIA', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 49152}}], 'TotalGpuMemoryInMiB': 49152}\"\n");
  for (const char* mode : {" --dry-run", ""}) {
    RunResult r = run(std::string("fetch skypilot/gcp skypilot/lambda --base-url ") + base() + mode);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    // GCP: the T4 row without a host and the a3 host without its H100 row (2), the CPU machine (1),
    // the one pair that combined (a flag on a kept offer).
    EXPECT_NE(r.out.find("skypilot/gcp: 2 rows skipped (split_price_unmatched), e.g.:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("a3-highgpu-8g"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("GPU-only price (t4|1|us-central1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("skypilot/gcp: 1 row skipped (cpu_row), e.g.:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("n2-standard-8"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("skypilot/gcp: 1 row kept with the flag split_price_combined, e.g.:"), std::string::npos) << r.out;
    // Lambda: the ZX9000 row names the GPU the catalog does not know.
    EXPECT_NE(r.out.find("skypilot/lambda: 1 row"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ZX9000"), std::string::npos) << r.out;
  }
}

// trial9b D8, three faults of the skipped-rows report (fetch.cpp skipped_rows_report):
// (1) a rejected snapshot listed its flagged rows as "kept with the flag"; it keeps nothing;
// (2) RunPod makes a 1-GPU and a maxGpuCount-GPU offer of each row, so a row with a $0 price was
//     named twice (and counted twice); a row is named and counted once;
// (3) Vultr's CPU-only plans (gpu_type "none", a bare-metal id without "-N-GPU-gpu") were skipped
//     silently; they are counted as cpu_row.
TEST_F(FetchE2E, TheSkippedRowsReportCountsRowsOnceAndKeepsNothingOfARejectedSnapshot) {
  // (1), (2): every on-demand, spot and savings-plan price of the RunPod fixture set to 0: no
  // offer keeps a price, so the "priced" gate rejects the snapshot.
  std::string zero = *runpod_;
  for (const std::string key : {"\"securePrice\":", "\"communityPrice\":", "\"secureSpotPrice\":",
                                "\"communitySpotPrice\":", "\"oneWeekPrice\":", "\"oneMonthPrice\":",
                                "\"threeMonthPrice\":", "\"sixMonthPrice\":"})
    for (auto pos = zero.find(key); pos != std::string::npos; pos = zero.find(key, pos + 1)) {
      const auto value = pos + key.size();
      zero.replace(value, zero.find_first_of(",}", value) - value, "0");
    }
  *runpod_ = zero;
  const RunResult r = run("fetch runpod --base-url " + base());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("rejected"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("kept with the flag"), std::string::npos) << r.out;
  // Rows 0 (H100: 1 and 8 GPUs, secure and community: 4 offers) and 1 (RTX 4090: 1 GPU, two
  // tiers: 2 offers) gave $0 on-demand prices; row 2 ("unknown") makes no offer: 2 rows.
  EXPECT_NE(r.out.find("runpod: 2 rows flagged unknown_price (not kept: the snapshot was rejected), e.g.:"),
            std::string::npos)
      << r.out;
  for (const char* row : {"#gpuTypes/0:", "#gpuTypes/1:"}) {
    const auto first = r.out.find(row);
    EXPECT_NE(first, std::string::npos) << row << "\n" << r.out;
    EXPECT_EQ(r.out.find(row, first + 1), std::string::npos) << row << " named twice:\n" << r.out;
  }
  EXPECT_EQ(stored_offers("runpod").find("fetch:runpod"), std::string::npos);

  // (3): vultr-plans-1.json's vc2-1c-1gb (gpu_type "none") and vultr-metal.json's vbm-4c-32gb.
  const RunResult v = run("fetch vultr --base-url " + base());
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("vultr: 2 rows skipped (cpu_row), e.g.:"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("plan vc2-1c-1gb has gpu_type 'none': no GPU, skipped"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("bare-metal plan vbm-4c-32gb has no GPU in its id: skipped"), std::string::npos) << v.out;
}
