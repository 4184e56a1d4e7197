// Every fetcher against recorded responses (tests/data/fetch: documented layouts, invented
// values) served on 127.0.0.1, through run_fetch with a base URL, into a fresh SQLite store.
// Expected values are the fixture's numbers and hand calculations written next to them.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <zip.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "catalog/sqlite_store.hpp"
#include "fetch/fetch.hpp"
#include "fixture_server.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

using testing::fixture;
using testing::FixtureServer;

constexpr const char* kT0 = "2026-12-01T06:00:00Z";

struct Harness {
  explicit Harness(const std::string& db = ":memory:") : transport(opts()), http(transport, sleeper, retry()),
                                                          store(db) {}
  static TransportOptions opts() {
    TransportOptions o;
    o.timeout_s = 5;
    return o;
  }
  static RetryPolicy retry() {
    RetryPolicy r;
    r.max_attempts = 2;
    return r;
  }
  FetchReport fetch(const std::string& base, std::vector<std::string> sources, const std::string& at = kT0,
                    bool dry_run = false) {
    FetchOptions o;
    o.sources = std::move(sources);
    o.base_url = base;
    o.fetched_at = at;
    o.dry_run = dry_run;
    o.gates = gates;
    o.env = [this](std::string_view k) -> std::optional<std::string> {
      auto it = env.find(std::string(k));
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    return run_fetch(store, http, o);
  }
  CurlTransport transport;
  RecordingSleeper sleeper;
  HttpClient http;
  SqliteOfferStore store;
  std::map<std::string, std::string> env = {{"GPUPLAN_AWS_REGIONS", "us-east-1"}};
  GateLimits gates;
};

const PriceObservation* latest(const Offer& o, PriceKind k) { return o.latest_price(k); }
/// The latest `kind` price (USD per hour) of the stored offer `id`; nullopt without the offer or price.
std::optional<double> stored_price(Harness& h, const std::string& id, PriceKind kind) {
  const auto o = h.store.get(id);
  const PriceObservation* p = o ? latest(*o, kind) : nullptr;
  return p ? std::optional<double>(p->usd_per_hour) : std::nullopt;
}

bool has_flag(const Offer& o, std::string_view rule) {
  for (const auto& f : o.flags)
    if (f.rule == rule) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
TEST(AwsFetcher, PriceListSpotAndAdvisor) {
  FixtureServer s;
  s.server().Get("/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv",
                 [](const httplib::Request&, httplib::Response& r) { r.set_content(fixture("aws-price-list.csv"), "text/csv"); });
  s.server().Get("/spot.json", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("aws-spot.json"), "application/json");
  });
  s.server().Get("/spot-advisor-data.json", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("aws-spot-advisor.json"), "application/json");
  });
  Harness h;
  const FetchReport rep = h.fetch(s.start(), {"aws"});
  ASSERT_EQ(rep.sources.size(), 1u);
  const SourceOutcome& out = rep.sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  // p5.48xlarge, g5.xlarge, g5.12xlarge, g6.xlarge, p5e.48xlarge; Windows, Dedicated and m5 are not offers.
  EXPECT_EQ(out.snapshot.offers, 5u);
  EXPECT_EQ(out.snapshot.urls.size(), 3u);

  const auto g5 = h.store.get("aws/g5.xlarge/us-east-1");
  ASSERT_TRUE(g5);
  EXPECT_EQ(g5->gpu_name, "NVIDIA A10G");
  ASSERT_TRUE(latest(*g5, PriceKind::on_demand));
  EXPECT_DOUBLE_EQ(latest(*g5, PriceKind::on_demand)->usd_per_hour, 1.0);
  EXPECT_EQ(latest(*g5, PriceKind::on_demand)->source.observed_at, kT0);
  EXPECT_EQ(latest(*g5, PriceKind::on_demand)->source.dataset, "fetch:aws");
  ASSERT_TRUE(latest(*g5, PriceKind::spot));
  EXPECT_DOUBLE_EQ(latest(*g5, PriceKind::spot)->usd_per_hour, 0.45);
  // Advisor band r=1 is "5-10%" with max 11 (% of instances interrupted per month): 11 / 100 / 30 days.
  ASSERT_TRUE(g5->billing_override.preemptions_per_day);
  EXPECT_NEAR(*g5->billing_override.preemptions_per_day, 0.11 / 30.0, 1e-12);

  const auto p5 = h.store.get("aws/p5.48xlarge/us-east-1");
  ASSERT_TRUE(p5);
  EXPECT_EQ(p5->gpu_name, "NVIDIA H100 SXM");
  EXPECT_EQ(p5->gpu_count, 8);
  EXPECT_DOUBLE_EQ(*p5->gpu_memory_bytes, 80e9);  // "640 GB HBM3" for 8 GPUs
  EXPECT_EQ(latest(*p5, PriceKind::spot), nullptr);  // "N/A*" is unknown, not 0
  const auto g512 = h.store.get("aws/g5.12xlarge/us-east-1");
  ASSERT_TRUE(g512);
  EXPECT_DOUBLE_EQ(*g512->gpu_memory_bytes, 24e9);  // "96 GB" for 4 GPUs

  // Reservation-only p5e priced $0: stored as an offer with an unknown price, never as $0.
  const auto p5e = h.store.get("aws/p5e.48xlarge/us-east-1");
  ASSERT_TRUE(p5e);
  EXPECT_TRUE(p5e->prices.empty());
  EXPECT_TRUE(has_flag(*p5e, kRuleUnknownPrice));
}

TEST(AwsFetcher, AMissingHeaderIsAMalformedSnapshot) {
  FixtureServer s;
  s.server().Get("/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv",
                 [](const httplib::Request&, httplib::Response& r) { r.set_content("\"SKU\",\"x\"\n\"1\",\"OnDemand\",\"Linux\"\n", "text/csv"); });
  s.server().Get("/spot.json", [](const httplib::Request&, httplib::Response& r) { r.set_content("{}", "application/json"); });
  s.server().Get("/spot-advisor-data.json", [](const httplib::Request&, httplib::Response& r) { r.set_content("{}", "application/json"); });
  Harness h;
  const FetchReport rep = h.fetch(s.start(), {"aws"});
  EXPECT_EQ(rep.sources[0].status, "rejected");
  EXPECT_NE(rep.sources[0].message.find("malformed"), std::string::npos) << rep.sources[0].message;
  EXPECT_EQ(h.store.counts().observations, 0u);
  const auto rec = h.store.snapshots("aws", 10);
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].status, "rejected");
}

TEST(AwsFetcher, APriceListCutMidRowIsRejectedNotShortened) {
  // Issue 9 trial D8: a price list whose last row is cut short (no newline after it) lost that
  // row without a word: the streaming filter dropped the fragment (its cells stop before
  // "Linux"), and the snapshot was accepted with 4 offers instead of 5. The cut row now reaches
  // the CSV reader, which rejects a row with fewer cells than the header (as for SkyPilot).
  std::string csv = fixture("aws-price-list.csv");
  const std::size_t start = csv.find("\"SKU4\"");  // the g6.xlarge on-demand row (line 10)
  ASSERT_NE(start, std::string::npos);
  const std::size_t end = csv.find('\n', start) + 1;
  const std::string row = csv.substr(start, end - start);
  ASSERT_NE(row.find("\"Linux\""), std::string::npos);
  // The other rows, then the g6 row cut after its description (5 of its cells): last, unterminated.
  csv = csv.substr(0, start) + csv.substr(end) + row.substr(0, row.find("Hour\"") + 5);
  FixtureServer s;
  s.server().Get("/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv",
                 [csv](const httplib::Request&, httplib::Response& r) { r.set_content(csv, "text/csv"); });
  s.server().Get("/spot.json", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("aws-spot.json"), "application/json");
  });
  s.server().Get("/spot-advisor-data.json", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("aws-spot-advisor.json"), "application/json");
  });
  Harness h;
  const SourceOutcome out = h.fetch(s.start(), {"aws"}).sources[0];
  EXPECT_EQ(out.status, "rejected") << out.message;
  EXPECT_NE(out.message.find("malformed"), std::string::npos) << out.message;
  EXPECT_NE(out.message.find("index.csv:"), std::string::npos) << out.message;  // names URL:line
  EXPECT_EQ(h.store.counts().offers, 0u);
}

TEST(AwsFetcher, EachAcceptedSnapshotKeepsOneSpotAdvisorSourceLinePerOffer) {
  // Issue 9 trial D4: billing_override.sources gained one Spot Advisor line per accepted AWS
  // snapshot (keep_known_facts united the stored lines, each with its own fetch time). Two
  // accepted snapshots (the g5.xlarge price 1.00 -> 1.10 between them): one line, the newer one.
  auto csv = std::make_shared<std::string>(fixture("aws-price-list.csv"));
  FixtureServer s;
  s.server().Get("/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv",
                 [csv](const httplib::Request&, httplib::Response& r) { r.set_content(*csv, "text/csv"); });
  s.server().Get("/spot.json", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("aws-spot.json"), "application/json");
  });
  s.server().Get("/spot-advisor-data.json", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("aws-spot-advisor.json"), "application/json");
  });
  Harness h;
  const std::string base = s.start();
  ASSERT_EQ(h.fetch(base, {"aws"}, "2026-12-01T00:00:00Z").sources[0].status, "accepted");
  const std::size_t pos = csv->find("\"1.0000000000\"");
  ASSERT_NE(pos, std::string::npos);
  csv->replace(pos, 14, "\"1.1000000000\"");
  const SourceOutcome second = h.fetch(base, {"aws"}, "2026-12-02T00:00:00Z").sources[0];
  ASSERT_EQ(second.status, "accepted") << second.message;
  const auto g5 = h.store.get("aws/g5.xlarge/us-east-1");
  ASSERT_TRUE(g5);
  EXPECT_DOUBLE_EQ(latest(*g5, PriceKind::on_demand)->usd_per_hour, 1.1);
  ASSERT_EQ(g5->billing_override.sources.size(), 1u);
  EXPECT_EQ(g5->billing_override.sources[0].rfind("preemptions_per_day: AWS Spot Advisor", 0), 0u);
  EXPECT_NE(g5->billing_override.sources[0].find("fetched 2026-12-02T00:00:00Z"), std::string::npos)
      << g5->billing_override.sources[0];
}

// ---------------------------------------------------------------------------------------------
void serve_azure(FixtureServer& s, std::atomic<int>* page2_calls = nullptr) {
  s.server().Get("/api/retail/prices", [page2_calls](const httplib::Request& req, httplib::Response& r) {
    if (req.has_param("$skip")) {
      if (page2_calls) ++*page2_calls;
      r.set_content(fixture("azure-page2.json"), "application/json");
    } else {
      r.set_content(fixture("azure-page1.json"), "application/json");
    }
  });
}

TEST(AzureFetcher, FollowsNextPageLinksAndSplitsSpotFromOnDemand) {
  FixtureServer s;
  std::atomic<int> page2{0};
  serve_azure(s, &page2);
  Harness h;
  const std::string base = s.start();
  const FetchReport rep = h.fetch(base, {"azure"});
  const SourceOutcome& out = rep.sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  EXPECT_EQ(page2.load(), 1);  // the absolute NextPageLink (prices.azure.com) was rebased to the local server
  ASSERT_EQ(out.snapshot.urls.size(), 2u);
  EXPECT_EQ(out.snapshot.urls[1].rfind(base, 0), 0u) << out.snapshot.urls[1];
  const auto nd = h.store.get("azure/standard_nd96isr_h100_v5/eastus");
  ASSERT_TRUE(nd);
  EXPECT_EQ(nd->gpu_count, 8);
  EXPECT_EQ(nd->gpu_name, "NVIDIA H100 SXM");
  EXPECT_DOUBLE_EQ(latest(*nd, PriceKind::on_demand)->usd_per_hour, 98.0);  // not the Windows 110
  EXPECT_DOUBLE_EQ(latest(*nd, PriceKind::spot)->usd_per_hour, 30.0);       // not Low Priority 20
  EXPECT_EQ(nd->prices.size(), 2u);
  const auto nc = h.store.get("azure/standard_nc24ads_a100_v4/westeurope");
  ASSERT_TRUE(nc);
  EXPECT_EQ(nc->gpu_name, "NVIDIA A100 PCIe 80GB");
  // Preview size priced 0: unknown.
  const auto h100nc = h.store.get("azure/standard_nc40ads_h100_v5/westeurope");
  ASSERT_TRUE(h100nc);
  EXPECT_TRUE(h100nc->prices.empty());
  // The FPGA size NP10s is not in the GPU table: reported, not guessed.
  bool reported = false;
  for (const auto& r : out.rules) reported = reported || (r.rule == kRuleUnmappedSku && r.rejected >= 1);
  EXPECT_TRUE(reported);
}

/// An Azure fetch from a server whose every reply is `page(n, base)` (n: the request's number from
/// 1, base: the server's URL): the outcome, the requests served and the offers stored.
struct LoopingFeed {
  SourceOutcome out;
  int calls = 0;
  std::size_t offers = 0;
};
LoopingFeed fetch_azure_looping(const std::function<std::string(int, const std::string&)>& page) {
  FixtureServer s;
  std::atomic<int> calls{0};
  std::string self;
  s.server().Get("/api/retail/prices", [&](const httplib::Request&, httplib::Response& r) {
    r.set_content(page(++calls, self), "application/json");
  });
  Harness h;
  const std::string base = s.start();
  self = base;
  const FetchReport rep = h.fetch(base, {"azure"});
  return {rep.sources[0], calls.load(), h.store.counts().offers};
}

// trial48: a NextPageLink back to the page just read was followed 2000 times (6 min 40 s); the
// second request of the same page stops the fetch, which writes nothing.
TEST(AzureFetcher, ANextPageLinkToAPageAlreadyReadStopsAtOnce) {
  const LoopingFeed f = fetch_azure_looping([](int n, const std::string& base) {
    // Items differ per request: the repeated link is what stops it
    return R"({"Items": [{"armSkuName": "Standard_ND96isr_H100_v5", "meterId": ")" + std::to_string(n) +
           R"("}], "NextPageLink": ")" + base + R"(/api/retail/prices"})";
  });
  EXPECT_NE(f.out.status, "accepted");
  // Page 1 is the filtered query; its link names the bare URL (page 2), whose link names itself.
  EXPECT_NE(f.out.message.find("after page 2 asks for page 2 again"), std::string::npos) << f.out.message;
  EXPECT_EQ(f.calls, 2);
  EXPECT_EQ(f.offers, 0u);
}

// trial49: a next-page link with a counter (a new URL each time) over the same page was read 598
// times; the second page with the same Items stops the fetch, which writes nothing.
TEST(AzureFetcher, APageThatRepeatsUnderANewLinkStopsAtOnce) {
  const LoopingFeed f = fetch_azure_looping([](int n, const std::string& base) {
    return R"({"Items": [{"armSkuName": "Standard_ND96isr_H100_v5"}], "NextPageLink": ")" + base +
           "/api/retail/prices?n=" + std::to_string(n) + R"("})";
  });
  EXPECT_NE(f.out.status, "accepted");
  EXPECT_NE(f.out.message.find("page 2 holds the same Items as page 1"), std::string::npos) << f.out.message;
  EXPECT_EQ(f.calls, 2);
  EXPECT_EQ(f.offers, 0u);
}

// ---------------------------------------------------------------------------------------------
TEST(RunpodFetcher, PerGpuPricesTimesCountAndStock) {
  FixtureServer s;
  std::string body_seen;
  s.server().Post("/graphql", [&](const httplib::Request& req, httplib::Response& r) {
    body_seen = req.body;
    r.set_content(fixture("runpod-gputypes.json"), "application/json");
  });
  Harness h;
  const FetchReport rep = h.fetch(s.start(), {"runpod"});
  ASSERT_EQ(rep.sources[0].status, "accepted") << rep.sources[0].message;
  EXPECT_NE(body_seen.find("gpuTypes"), std::string::npos);
  // H100: 1x and 8x × secure/community; 4090: 1x × secure/community; "unknown" skipped.
  EXPECT_EQ(rep.sources[0].snapshot.offers, 6u);
  const auto one = h.store.get("runpod/1x h100 sxm secure/");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->gpu_name, "NVIDIA H100 SXM");
  EXPECT_DOUBLE_EQ(latest(*one, PriceKind::on_demand)->usd_per_hour, 2.99);
  EXPECT_DOUBLE_EQ(latest(*one, PriceKind::spot)->usd_per_hour, 1.75);
  EXPECT_EQ(one->confirmed_available_at, kT0);  // stockStatus "High"
  const auto eight = h.store.get("runpod/8x h100 sxm secure/");
  ASSERT_TRUE(eight);
  EXPECT_NEAR(latest(*eight, PriceKind::on_demand)->usd_per_hour, 8 * 2.99, 1e-9);
  EXPECT_NEAR(latest(*eight, PriceKind::spot)->usd_per_hour, 8 * 1.75, 1e-9);
  const auto rtx = h.store.get("runpod/1x rtx 4090 community/");
  ASSERT_TRUE(rtx);
  EXPECT_FALSE(rtx->confirmed_available_at);  // stockStatus null
  EXPECT_DOUBLE_EQ(latest(*rtx, PriceKind::spot)->usd_per_hour, 0.2);
}

// Savings plans (oneWeekPrice / oneMonthPrice / threeMonthPrice / sixMonthPrice, USD per GPU-hour):
// reserved-1w / -1m / -3m / -6m prices of the Secure offer, × GPU count; the Community offer gets none;
// a null, 0 or missing plan price is no plan (never a $0 price).
TEST(RunpodFetcher, SavingsPlansAreReservedPricesWithTheirTermOnTheSecureOffer) {
  FixtureServer s;
  s.server().Post("/graphql", [&](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("runpod-gputypes.json"), "application/json");
  });
  Harness h;
  const FetchReport rep = h.fetch(s.start(), {"runpod"});
  ASSERT_EQ(rep.sources[0].status, "accepted") << rep.sources[0].message;
  const auto one = h.store.get("runpod/1x h100 sxm secure/");
  ASSERT_TRUE(one);
  ASSERT_NE(latest(*one, PriceKind::reserved_1w), nullptr);
  EXPECT_DOUBLE_EQ(latest(*one, PriceKind::reserved_1w)->usd_per_hour, 2.79);
  EXPECT_DOUBLE_EQ(latest(*one, PriceKind::reserved_1m)->usd_per_hour, 2.59);
  EXPECT_DOUBLE_EQ(latest(*one, PriceKind::reserved_3m)->usd_per_hour, 2.49);
  EXPECT_DOUBLE_EQ(latest(*one, PriceKind::reserved_6m)->usd_per_hour, 2.39);
  EXPECT_NE(latest(*one, PriceKind::reserved_6m)->source.locator.find("sixMonthPrice"), std::string::npos);
  const auto eight = h.store.get("runpod/8x h100 sxm secure/");
  ASSERT_TRUE(eight);
  ASSERT_NE(latest(*eight, PriceKind::reserved_3m), nullptr);
  EXPECT_NEAR(latest(*eight, PriceKind::reserved_3m)->usd_per_hour, 8 * 2.49, 1e-9);
  const auto community = h.store.get("runpod/1x h100 sxm community/");
  ASSERT_TRUE(community);
  for (PriceKind k : {PriceKind::reserved_1w, PriceKind::reserved_1m, PriceKind::reserved_3m, PriceKind::reserved_6m})
    EXPECT_EQ(latest(*community, k), nullptr) << price_kind_name(k);
  const auto rtx = h.store.get("runpod/1x rtx 4090 secure/");
  ASSERT_TRUE(rtx);
  EXPECT_EQ(latest(*rtx, PriceKind::reserved_1w), nullptr);  // null
  EXPECT_EQ(latest(*rtx, PriceKind::reserved_1m), nullptr);  // 0: no plan, not a $0 price
  EXPECT_EQ(latest(*rtx, PriceKind::reserved_6m), nullptr);  // missing
  ASSERT_NE(latest(*rtx, PriceKind::reserved_3m), nullptr);
  EXPECT_DOUBLE_EQ(latest(*rtx, PriceKind::reserved_3m)->usd_per_hour, 0.59);
}

// ---------------------------------------------------------------------------------------------
void serve_vast(FixtureServer& s, std::string body) {
  s.server().Post("/api/v0/bundles/", [body](const httplib::Request&, httplib::Response& r) {
    r.set_content(body, "application/json");
  });
}

TEST(VastFetcher, CheapestRentablePerGpuCountCountryConfirmedAvailable) {
  FixtureServer s;
  serve_vast(s, fixture("vast-bundles.json"));
  Harness h;
  const FetchReport rep = h.fetch(s.start(), {"vast"});
  ASSERT_EQ(rep.sources[0].status, "accepted") << rep.sources[0].message;
  EXPECT_EQ(rep.sources[0].snapshot.offers, 2u);  // 2x 4090 NO, 8x H100 US; the unrentable CA one dropped
  const auto no = h.store.get("vast/2x rtx 4090/no");
  ASSERT_TRUE(no);
  EXPECT_DOUBLE_EQ(latest(*no, PriceKind::on_demand)->usd_per_hour, 0.55);  // Bergen's 0.55 beats Oslo's 0.62
  EXPECT_EQ(no->confirmed_available_at, kT0);
  EXPECT_DOUBLE_EQ(*no->gpu_memory_bytes, 24564.0 * 1048576.0);  // gpu_ram is MiB
  EXPECT_EQ(no->gpu_name, "NVIDIA GeForce RTX 4090");
  EXPECT_FALSE(h.store.get("vast/1x rtx 4090/ca"));
  // Spot (issue 9): the key's cheapest min_bid. Fixture: NO rows 1001 min_bid 0.35, 1002 0.30 →
  // 0.30; US row 1003 9.0; the CA row 1004 (0.2) is not rentable and gives nothing.
  ASSERT_NE(latest(*no, PriceKind::spot), nullptr);
  EXPECT_DOUBLE_EQ(latest(*no, PriceKind::spot)->usd_per_hour, 0.30);
  const auto us = h.store.get("vast/8x h100 sxm/us");
  ASSERT_TRUE(us);
  ASSERT_NE(latest(*us, PriceKind::spot), nullptr);
  EXPECT_DOUBLE_EQ(latest(*us, PriceKind::spot)->usd_per_hour, 9.0);
}

TEST(VastFetcher, SpotIsTheKeysCheapestMinBidFlaggedAsABidAndUnknownWithoutOne) {
  // Invented rows in the documented layout (docs: price-sources.md vast). Key 2x RTX 4090 NO:
  // on demand 11 ($0.50, min_bid 0.40) is the cheapest dph_total, but 12 ($0.60, min_bid 0.25)
  // has the cheapest bid, and 13's min_bid 0 is no bid: spot = 0.25 from offer 12. Key 1x RTX
  // 4090 SE: min_bid 0 → no spot. Key 1x RTX 4090 FI: no min_bid → no spot.
  FixtureServer s;
  serve_vast(s, R"({"offers":[
{"id":11,"gpu_name":"RTX 4090","num_gpus":2,"gpu_ram":24564,"dph_total":0.50,"min_bid":0.40,"geolocation":"Oslo, NO","rentable":true},
{"id":12,"gpu_name":"RTX 4090","num_gpus":2,"gpu_ram":24564,"dph_total":0.60,"min_bid":0.25,"geolocation":"Bergen, NO","rentable":true},
{"id":13,"gpu_name":"RTX 4090","num_gpus":2,"gpu_ram":24564,"dph_total":0.70,"min_bid":0,"geolocation":"Oslo, NO","rentable":true},
{"id":21,"gpu_name":"RTX 4090","num_gpus":1,"gpu_ram":24564,"dph_total":0.30,"min_bid":0,"geolocation":"Lund, SE","rentable":true},
{"id":31,"gpu_name":"RTX 4090","num_gpus":1,"gpu_ram":24564,"dph_total":0.32,"geolocation":"Oulu, FI","rentable":true}]})");
  Harness h;
  const auto out = h.fetch(s.start(), {"vast"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  const auto no = h.store.get("vast/2x rtx 4090/no");
  ASSERT_TRUE(no);
  EXPECT_DOUBLE_EQ(latest(*no, PriceKind::on_demand)->usd_per_hour, 0.50);
  const PriceObservation* spot = latest(*no, PriceKind::spot);
  ASSERT_NE(spot, nullptr);
  EXPECT_DOUBLE_EQ(spot->usd_per_hour, 0.25);
  EXPECT_NE(spot->source.locator.find("#offers/1 (offer 12; vast interruptible: minimum bid, outbid"),
            std::string::npos)
      << spot->source.locator;
  EXPECT_TRUE(std::any_of(no->flags.begin(), no->flags.end(),
                          [](const QualityFlag& f) { return f.rule == "marketplace_bid" && !f.excludes; }));
  for (const char* id : {"vast/1x rtx 4090/se", "vast/1x rtx 4090/fi"}) {
    const auto o = h.store.get(id);
    ASSERT_TRUE(o) << id;
    EXPECT_EQ(latest(*o, PriceKind::spot), nullptr) << id;  // unknown, never $0
    ASSERT_NE(latest(*o, PriceKind::on_demand), nullptr) << id;
    EXPECT_FALSE(std::any_of(o->flags.begin(), o->flags.end(),
                             [](const QualityFlag& f) { return f.rule == "marketplace_bid"; }))
        << id;
  }
}

// ---------------------------------------------------------------------------------------------
void serve_lambda_catalog(FixtureServer& s, std::shared_ptr<std::string> body) {
  s.server().Get("/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv",
                 [body](const httplib::Request&, httplib::Response& r) { r.set_content(*body, "text/csv"); });
}

TEST(SkyPilotFetcher, ImportsTheCloudsVmsCsvDatedAtFetch) {
  FixtureServer s;
  auto body = std::make_shared<std::string>(fixture("skypilot-lambda-vms.csv"));
  serve_lambda_catalog(s, body);
  Harness h;
  const FetchReport rep = h.fetch(s.start(), {"skypilot/lambda"});
  ASSERT_EQ(rep.sources[0].status, "accepted") << rep.sources[0].message;
  EXPECT_EQ(rep.sources[0].snapshot.offers, 3u);
  const auto o = h.store.get("lambda/gpu_8x_h100_sxm5/us-east-1");
  ASSERT_TRUE(o);
  EXPECT_DOUBLE_EQ(latest(*o, PriceKind::on_demand)->usd_per_hour, 23.92);
  EXPECT_EQ(latest(*o, PriceKind::on_demand)->source.observed_at, kT0);
  EXPECT_EQ(latest(*o, PriceKind::on_demand)->source.dataset, "fetch:skypilot/lambda");
}

// ---------------------------------------------------------------------------------------------
std::string make_zip(const std::string& member, const std::string& content) {
  const auto path = std::filesystem::temp_directory_path() / ("gpuplan-zip-" + std::to_string(::getpid()) + ".zip");
  std::filesystem::remove(path);
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  EXPECT_NE(z, nullptr);
  zip_source_t* src = zip_source_buffer(z, content.data(), content.size(), 0);
  EXPECT_GE(zip_file_add(z, member.c_str(), src, ZIP_FL_OVERWRITE), 0);
  EXPECT_EQ(zip_close(z), 0);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return bytes;
}

TEST(GpuhuntFetcher, ReadsVersionThenCatalogZip) {
  FixtureServer s;
  const std::string zip = make_zip("oci.csv", fixture("gpuhunt-oci.csv"));
  s.server().Get("/v3/oci/version", [](const httplib::Request&, httplib::Response& r) {
    r.set_content("20261130-1\n", "text/plain");
  });
  s.server().Get("/v3/oci/20261130-1/catalog.zip", [zip](const httplib::Request&, httplib::Response& r) {
    r.set_content(zip, "application/zip");
  });
  Harness h;
  const FetchReport rep = h.fetch(s.start(), {"gpuhunt/oci"});
  ASSERT_EQ(rep.sources[0].status, "accepted") << rep.sources[0].message;
  EXPECT_EQ(rep.sources[0].snapshot.offers, 2u);  // the CPU shape is not an offer
  const auto o = h.store.get("oci/bm.gpu.h100.8/us-ashburn-1");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->gpu_count, 8);
  EXPECT_DOUBLE_EQ(latest(*o, PriceKind::on_demand)->usd_per_hour, 80.0);
  EXPECT_DOUBLE_EQ(latest(*o, PriceKind::spot)->usd_per_hour, 40.0);
}

TEST(GpuhuntFetcher, ACorruptZipIsRejected) {
  FixtureServer s;
  s.server().Get("/v3/oci/version", [](const httplib::Request&, httplib::Response& r) { r.set_content("v1", "text/plain"); });
  s.server().Get("/v3/oci/v1/catalog.zip", [](const httplib::Request&, httplib::Response& r) {
    r.set_content("PK\x03\x04 not really a zip", "application/zip");
  });
  Harness h;
  const FetchReport rep = h.fetch(s.start(), {"gpuhunt/oci"});
  EXPECT_EQ(rep.sources[0].status, "rejected");
  EXPECT_EQ(h.store.counts().offers, 0u);
}

// ---------------------------------------------------------------------------------------------
TEST(VultrFetcher, CursorPagesCloudGpuAndBareMetalPerLocation) {
  FixtureServer s;
  std::atomic<int> cursor_pages{0};
  s.server().Get("/v2/plans", [&](const httplib::Request& req, httplib::Response& r) {
    if (req.get_param_value("cursor") == "cursor-2") {
      ++cursor_pages;
      r.set_content(fixture("vultr-plans-2.json"), "application/json");
    } else {
      r.set_content(fixture("vultr-plans-1.json"), "application/json");
    }
  });
  s.server().Get("/v2/plans-metal", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("vultr-metal.json"), "application/json");
  });
  Harness h;
  const auto out = h.fetch(s.start(), {"vultr"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  EXPECT_EQ(cursor_pages.load(), 1);
  // L40S plan in ewr and fra, the 8x H100 metal plan in sea; the 4 GB A100 slice is fractional.
  EXPECT_EQ(out.snapshot.offers, 3u);
  const auto l40s = h.store.get("vultr/vcg-l40s-16c-180g-48vram/fra");
  ASSERT_TRUE(l40s);
  EXPECT_EQ(l40s->gpu_count, 1);  // 48 GB / 48 GB datasheet
  EXPECT_EQ(l40s->gpu_name, "NVIDIA L40S");
  EXPECT_DOUBLE_EQ(latest(*l40s, PriceKind::on_demand)->usd_per_hour, 1.67);
  const auto metal = h.store.get("vultr/vbm-112c-2048gb-8-h100-gpu/sea");
  ASSERT_TRUE(metal);
  EXPECT_EQ(metal->gpu_count, 8);
  EXPECT_DOUBLE_EQ(latest(*metal, PriceKind::on_demand)->usd_per_hour, 24.0);
  EXPECT_FALSE(h.store.get("vultr/vcg-a100-1c-6g-4vram/ewr"));
}

TEST(OciFetcher, ShapePriceIsTheSumOfItsPartsAndUnpricedPartsAreUnknown) {
  FixtureServer s;
  s.server().Get("/pls/apex/cetools/api/v1/products/", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("oci-products.json"), "application/json");
  });
  s.server().Get("/a/ocom/docs/cloudestimator2/data/shapes.json", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("oci-shapes.json"), "application/json");
  });
  Harness h;
  const auto out = h.fetch(s.start(), {"oci"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  EXPECT_EQ(out.snapshot.offers, 3u);
  const auto h100 = h.store.get("oci/bm.gpu.h100.8/");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->gpu_name, "NVIDIA H100 SXM");
  EXPECT_DOUBLE_EQ(latest(*h100, PriceKind::on_demand)->usd_per_hour, 8 * 10.0);  // 8 GPUs × $10 (USD, not EUR)
  EXPECT_DOUBLE_EQ(*h100->gpu_memory_bytes, 80e9);                                // 640 GB / 8
  const auto b200 = h.store.get("oci/bm.gpu.b200.8/");
  ASSERT_TRUE(b200);
  EXPECT_TRUE(b200->prices.empty());  // part B99999 has no price: unknown
}

TEST(OciFetcher, FollowsNextLinksWhileHasMoreAndAFailedPageWritesNothing) {
  // The products API in two pages (its documented envelope: items, hasMore, links[rel=next] with
  // an absolute href on Oracle's host, rebased under --base-url): the H100 part on page 1, the
  // A10 part on page 2. VM.GPU.A10.1 (1 × part B95909 at $2.00) is priced only if page 2 was read.
  const std::string h100 =
      R"({"partNumber":"B98415","displayName":"Compute - GPU - H100","metricName":"GPU Per Hour","serviceCategory":"Compute - GPU","currencyCodeLocalizations":[{"currencyCode":"USD","prices":[{"model":"PAY_AS_YOU_GO","value":10.0}]}]})";
  const std::string a10 =
      R"({"partNumber":"B95909","displayName":"Compute - GPU - A10","metricName":"GPU Per Hour","serviceCategory":"Compute - GPU","currencyCodeLocalizations":[{"currencyCode":"USD","prices":[{"model":"PAY_AS_YOU_GO","value":2.0}]}]})";
  const std::string page1 = R"({"items":[)" + h100 +
                            R"(],"hasMore":true,"limit":1,"offset":0,"count":1,"links":[{"rel":"next","href":"https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?offset=1"}]})";
  const std::string page2 = R"({"items":[)" + a10 + R"(],"hasMore":false,"limit":1,"offset":1,"count":1,"links":[]})";
  std::atomic<int> page2_calls{0};
  std::atomic<bool> page2_fails{true};
  FixtureServer s;
  s.server().Get("/pls/apex/cetools/api/v1/products/", [&](const httplib::Request& req, httplib::Response& r) {
    if (!req.has_param("offset")) return r.set_content(page1, "application/json");
    ++page2_calls;
    if (page2_fails) {
      r.status = 500;
      return r.set_content("error", "text/plain");
    }
    r.set_content(page2, "application/json");
  });
  s.server().Get("/a/ocom/docs/cloudestimator2/data/shapes.json", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("oci-shapes.json"), "application/json");
  });
  const std::string base = s.start();
  Harness h;
  // Page 2 fails (HTTP 500 on both attempts): the whole OCI snapshot fails, nothing written.
  const auto failed = h.fetch(base, {"oci"}).sources[0];
  EXPECT_EQ(failed.status, "failed") << failed.message;
  EXPECT_EQ(page2_calls.load(), 2);
  EXPECT_FALSE(h.store.get("oci/bm.gpu.h100.8/"));
  // Page 2 served: both pages read, in order, the second through the rebased next link.
  page2_fails = false;
  const auto out = h.fetch(base, {"oci"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  ASSERT_EQ(out.snapshot.urls.size(), 3u);  // products page 1, page 2, shapes
  EXPECT_EQ(out.snapshot.urls[1], base + "/pls/apex/cetools/api/v1/products/?offset=1");
  const auto a10_shape = h.store.get("oci/vm.gpu.a10.1/");
  ASSERT_TRUE(a10_shape);
  EXPECT_DOUBLE_EQ(latest(*a10_shape, PriceKind::on_demand)->usd_per_hour, 2.0);
  const auto h100_shape = h.store.get("oci/bm.gpu.h100.8/");
  ASSERT_TRUE(h100_shape);
  EXPECT_DOUBLE_EQ(latest(*h100_shape, PriceKind::on_demand)->usd_per_hour, 8 * 10.0);
}

TEST(ScalewayFetcher, EurConvertedAtTheEcbRateFetchedWithIt) {
  FixtureServer s;
  s.server().Get(R"(/instance/v1/zones/([a-z0-9-]+)/products/servers)", [](const httplib::Request& req, httplib::Response& r) {
    if (req.matches[1] == "fr-par-2") {
      r.set_header("X-Total-Count", "3");
      r.set_content(fixture("scaleway-servers.json"), "application/json");
    } else {
      r.set_header("X-Total-Count", "0");
      r.set_content("{\"servers\":{}}", "application/json");
    }
  });
  s.server().Get("/stats/eurofxref/eurofxref-daily.xml", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("ecb-eurofxref-daily.xml"), "text/xml");
  });
  Harness h;
  const auto out = h.fetch(s.start(), {"scaleway"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  EXPECT_EQ(out.snapshot.offers, 2u);
  const auto l4 = h.store.get("scaleway/l4-1-24g/fr-par-2");
  ASSERT_TRUE(l4);
  EXPECT_EQ(l4->gpu_name, "NVIDIA L4");
  EXPECT_NEAR(latest(*l4, PriceKind::on_demand)->usd_per_hour, 0.75 * 1.10, 1e-12);  // EUR 0.75 × 1.10 USD/EUR
  EXPECT_NE(latest(*l4, PriceKind::on_demand)->source.locator.find("ECB 2026-11-30"), std::string::npos);
  const auto h100 = h.store.get("scaleway/h100-2-80g/fr-par-2");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->gpu_count, 2);
}

TEST(OvhFetcher, GpuBrickHourlyFlavorsFromBothBooks) {
  FixtureServer s;
  s.server().Get("/1.0/order/catalog/public/cloud", [](const httplib::Request& req, httplib::Response& r) {
    const std::string sub = req.get_param_value("ovhSubsidiary");
    r.set_content(fixture(sub == "FR" ? "ovh-catalog-fr.json" : "ovh-catalog-us.json"), "application/json");
  });
  s.server().Get("/stats/eurofxref/eurofxref-daily.xml", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("ecb-eurofxref-daily.xml"), "text/xml");
  });
  Harness h;
  const auto out = h.fetch(s.start(), {"ovhcloud"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  // FR: h100-380 (hourly, and its monthly plan on the same offer) and l40s-180 hourly; the l40s
  // monthly row priced per hour, the Windows flavor, the per-minute AI addon (brick ai-serving),
  // the CPU flavor and the A100 whose formattedPrice (27.50) disagrees with its 1e-8 price (2.75)
  // are not offers. US: l4-90.
  EXPECT_EQ(out.snapshot.offers, 3u);
  const auto h100 = h.store.get("ovhcloud/h100-380/fr");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->gpu_count, 1);
  EXPECT_NEAR(latest(*h100, PriceKind::on_demand)->usd_per_hour, 2.80 * 1.10, 1e-12);  // 280000000e-8 EUR × 1.10
  EXPECT_NE(latest(*h100, PriceKind::on_demand)->source.locator.find("ECB 2026-11-30"), std::string::npos);
  EXPECT_EQ(latest(*h100, PriceKind::reserved_1y), nullptr);  // the monthly plan is not a 1-year price
  // h100-380.monthly.postpaid: 150000000000e-8 EUR = 1500.00 EUR per month, a one-month commitment
  // stored per hour of its 730-hour term: 1500 × 1.10 / 730 USD/h (hand calculation).
  ASSERT_NE(latest(*h100, PriceKind::reserved_1m), nullptr);
  EXPECT_NEAR(latest(*h100, PriceKind::reserved_1m)->usd_per_hour, 1500.0 * 1.10 / 730.0, 1e-12);
  EXPECT_NE(latest(*h100, PriceKind::reserved_1m)->source.locator.find("monthly.postpaid"), std::string::npos);
  const auto l40s = h.store.get("ovhcloud/l40s-180/fr");
  ASSERT_TRUE(l40s);
  EXPECT_EQ(l40s->gpu_count, 2);  // from blobs.technical.gpu.number, not the name
  EXPECT_EQ(l40s->gpu_name, "NVIDIA L40S");
  EXPECT_NEAR(latest(*l40s, PriceKind::on_demand)->usd_per_hour, 3.00 * 1.10, 1e-12);  // "3,00 €" checks it
  // l40s-180.monthly.postpaid has intervalUnit "hour": not a monthly plan, reported and skipped.
  EXPECT_EQ(latest(*l40s, PriceKind::reserved_1m), nullptr);
  const auto l4 = h.store.get("ovhcloud/l4-90/us");
  ASSERT_TRUE(l4);
  EXPECT_EQ(l4->gpu_name, "NVIDIA L4");
  EXPECT_NEAR(latest(*l4, PriceKind::on_demand)->usd_per_hour, 1.00, 1e-12);  // USD book: no conversion
  EXPECT_FALSE(h.store.get("ovhcloud/a100-180/fr"));
  EXPECT_FALSE(h.store.get("ovhcloud/win-l4-90/fr"));
  EXPECT_FALSE(h.store.get("ovhcloud/ai1-1-gpu/fr"));
}

TEST(OvhFetcher, ABookInTheWrongCurrencyIsRejected) {
  FixtureServer s;
  s.server().Get("/1.0/order/catalog/public/cloud", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("ovh-catalog-fr.json"), "application/json");  // the EUR book answers for US too
  });
  s.server().Get("/stats/eurofxref/eurofxref-daily.xml", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("ecb-eurofxref-daily.xml"), "text/xml");
  });
  Harness h;
  const auto out = h.fetch(s.start(), {"ovhcloud"}).sources[0];
  EXPECT_NE(out.status, "accepted");
  EXPECT_NE(out.message.find("subsidiary US priced in USD"), std::string::npos) << out.message;
  EXPECT_FALSE(h.store.get("ovhcloud/h100-380/fr"));  // a failed source writes nothing
}

TEST(CudoFetcher, SmallestOneGpuVmFromComponentPrices) {
  FixtureServer s;
  s.server().Get("/v1/vms/machine-types", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("cudo-machine-types.json"), "application/json");
  });
  Harness h;
  const auto out = h.fetch(s.start(), {"cudo"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  EXPECT_EQ(out.snapshot.offers, 2u);  // the CPU type is not an offer
  const auto h100 = h.store.get("cudo/epyc-genoa-h100/se-smedjebacken-1");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->gpu_name, "NVIDIA H100 PCIe");
  // 2 vCPUs (minVcpuPerGpu), 2 GiB (2 vCPU ÷ 1 vCPU/GiB), one IPv4: 2.1 + 2×0.002 + 2×0.003 + 0.005.
  EXPECT_NEAR(latest(*h100, PriceKind::on_demand)->usd_per_hour, 2.1 + 2 * 0.002 + 2 * 0.003 + 0.005, 1e-12);
  EXPECT_EQ(h100->confirmed_available_at, kT0);  // maxGpuFree 4
  const auto a5000 = h.store.get("cudo/epyc-rome-rtx-a5000/no-luster-1");
  ASSERT_TRUE(a5000);
  // 1 vCPU ÷ 0.5 vCPU/GiB = 2 GiB: 0.35 + 0.003 + 2×0.002 + 0.004.
  EXPECT_NEAR(latest(*a5000, PriceKind::on_demand)->usd_per_hour, 0.35 + 0.003 + 2 * 0.002 + 0.004, 1e-12);
  EXPECT_FALSE(a5000->confirmed_available_at);  // maxGpuFree 0
}

// A plain `gpuplan fetch` (no source named) lists a keyed source without its key as skipped,
// naming the variable, and sends it no request (every other path of this server is a 404).
TEST(LambdaFetcher, PlainFetchListsItAsSkippedNamingTheKey) {
  FixtureServer s;
  bool lambda_called = false;
  s.server().Get("/api/v1/instance-types", [&](const httplib::Request&, httplib::Response& r) {
    lambda_called = true;
    r.status = 500;
  });
  const std::string base = s.start();
  Harness h;
  const FetchReport rep = h.fetch(base, {});
  const SourceOutcome* lambda = nullptr;
  for (const SourceOutcome& o : rep.sources)
    if (o.source == "lambda") lambda = &o;
  ASSERT_NE(lambda, nullptr);
  EXPECT_EQ(lambda->status, "skipped");
  EXPECT_NE(lambda->message.find("needs LAMBDA_API_KEY"), std::string::npos) << lambda->message;
  EXPECT_FALSE(lambda_called);
}

TEST(LambdaFetcher, SkippedWithoutItsKeyAndCentsWithCapacityWithIt) {
  FixtureServer s;
  std::string auth;
  s.server().Get("/api/v1/instance-types", [&](const httplib::Request& req, httplib::Response& r) {
    auth = req.get_header_value("Authorization");
    r.set_content(fixture("lambda-instance-types.json"), "application/json");
  });
  const std::string base = s.start();
  Harness h;
  const auto skipped = h.fetch(base, {"lambda"}).sources[0];
  EXPECT_EQ(skipped.status, "skipped");
  EXPECT_NE(skipped.message.find("LAMBDA_API_KEY"), std::string::npos);
  EXPECT_TRUE(auth.empty());  // no request was made
  h.env["LAMBDA_API_KEY"] = "secret-test-key";
  const auto out = h.fetch(base, {"lambda"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  EXPECT_EQ(auth, "Bearer secret-test-key");
  const auto one = h.store.get("lambda/gpu_1x_h100_pcie/us-west-3");
  ASSERT_TRUE(one);
  EXPECT_DOUBLE_EQ(latest(*one, PriceKind::on_demand)->usd_per_hour, 2.49);  // 249 cents
  EXPECT_EQ(one->confirmed_available_at, kT0);
  EXPECT_EQ(one->gpu_name, "NVIDIA H100 PCIe");
  const auto eight = h.store.get("lambda/gpu_8x_a100_80gb_sxm4/");
  ASSERT_TRUE(eight);
  EXPECT_FALSE(eight->confirmed_available_at);  // no region with capacity
  EXPECT_EQ(eight->gpu_name, "NVIDIA A100 SXM 80GB");
}

/// Test AWS keys (never sent: libcurl signs with them) and one region, us-east-2.
void with_aws_keys(Harness& h) {
  h.env["GPUPLAN_AWS_REGIONS"] = "us-east-2";
  h.env["AWS_ACCESS_KEY_ID"] = "AKIDEXAMPLE";
  h.env["AWS_SECRET_ACCESS_KEY"] = "test-secret";
}

// AWS EC2 Capacity Blocks for ML (issue 9, "capacity blocks"): DescribeCapacityBlockOfferings'
// documented XML reply (EC2 API reference, Version 2016-11-15: capacityBlockOfferingSet/item with
// instanceType, availabilityZone, instanceCount, startDate, endDate, capacityBlockDurationHours,
// upfrontFee, currencyCode; nextToken), invented values, two pages.
TEST(AwsCapacityBlocksFetcher, SignedOfferingsBecomeOneBlockOfferPerTypeAndRegion) {
  auto item = [](std::string type, int count, double fee, std::string currency = "USD") {
    return fmt::format("<item><capacityBlockOfferingId>cbr-0123</capacityBlockOfferingId><instanceType>{}</instanceType>"
                       "<availabilityZone>us-east-2a</availabilityZone><instanceCount>{}</instanceCount>"
                       "<startDate>2026-10-02T11:30:00.000Z</startDate><endDate>2026-10-03T11:30:00.000Z</endDate>"
                       "<capacityBlockDurationHours>24</capacityBlockDurationHours><upfrontFee>{}</upfrontFee>"
                       "<currencyCode>{}</currencyCode><tenancy>default</tenancy></item>",
                       type, count, fee, currency);
  };
  const std::string head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DescribeCapacityBlockOfferingsResponse "
                           "xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><requestId>r-1</requestId>"
                           "<capacityBlockOfferingSet>";
  const std::string page1 = head + item("p5.48xlarge", 1, 945.36) + item("p5.48xlarge", 2, 1800) +
                            item("trn1.32xlarge", 1, 500) +
                            "</capacityBlockOfferingSet><nextToken>tok+1/=</nextToken></DescribeCapacityBlockOfferingsResponse>";
  const std::string page2 = head + item("p4d.24xlarge", 4, 1500) + item("p4d.24xlarge", 1, 100, "EUR") +
                            "</capacityBlockOfferingSet></DescribeCapacityBlockOfferingsResponse>";
  FixtureServer s;
  std::vector<std::string> auths, tokens;
  s.server().Get("/", [&](const httplib::Request& req, httplib::Response& r) {
    auths.push_back(req.get_header_value("Authorization"));
    tokens.push_back(req.get_param_value("NextToken"));
    EXPECT_EQ(req.get_param_value("Action"), "DescribeCapacityBlockOfferings");
    EXPECT_EQ(req.get_param_value("CapacityDurationHours"), "24");
    r.set_content(req.has_param("NextToken") ? page2 : page1, "text/xml");
  });
  const std::string base = s.start();
  Harness h;
  h.env["GPUPLAN_AWS_REGIONS"] = "us-east-2";
  const auto skipped = h.fetch(base, {"aws-capacity-blocks"}).sources[0];
  EXPECT_EQ(skipped.status, "skipped");
  EXPECT_NE(skipped.message.find("AWS_ACCESS_KEY_ID"), std::string::npos) << skipped.message;
  EXPECT_TRUE(auths.empty());  // no request without the keys
  h.env["AWS_ACCESS_KEY_ID"] = "AKIDEXAMPLE";
  h.env["AWS_SECRET_ACCESS_KEY"] = "test-secret";
  const auto out = h.fetch(base, {"aws-capacity-blocks"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  ASSERT_EQ(auths.size(), 2u);  // both pages, each signed by libcurl (SigV4, region us-east-2, service ec2)
  for (const std::string& a : auths) {
    EXPECT_EQ(a.rfind("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/", 0), 0u) << a;
    EXPECT_NE(a.find("/us-east-2/ec2/aws4_request"), std::string::npos) << a;
    EXPECT_NE(a.find("Signature="), std::string::npos) << a;
    EXPECT_EQ(a.find("test-secret"), std::string::npos) << a;  // the secret never travels
  }
  EXPECT_EQ(tokens.at(1), "tok+1/=");  // nextToken sent back, decoded as given
  // p5.48xlarge: a block is bought whole, so each instance count is its own offer: 1 instance at
  // 945.36 / 24 = 39.39 per instance-hour, 2 instances at 1800 / (24 × 2) = 37.5, min = max nodes = 2.
  const auto p5one = h.store.get("aws/p5.48xlarge capacity-block/us-east-2");
  ASSERT_TRUE(p5one);
  EXPECT_DOUBLE_EQ(latest(*p5one, PriceKind::on_demand)->usd_per_hour, 945.36 / 24);
  EXPECT_EQ(p5one->max_nodes, 1);
  const auto p5 = h.store.get("aws/p5.48xlarge capacity-block x2/us-east-2");
  ASSERT_TRUE(p5);
  EXPECT_DOUBLE_EQ(latest(*p5, PriceKind::on_demand)->usd_per_hour, 37.5);
  EXPECT_EQ(p5->gpu_name, "NVIDIA H100 SXM");
  EXPECT_EQ(p5->gpu_count, 8);
  EXPECT_EQ(p5->max_nodes, 2);
  EXPECT_EQ(p5->min_nodes, 2);  // both instances are paid
  EXPECT_EQ(p5->confirmed_available_at, kT0);
  EXPECT_EQ(p5->billing_override.minimum_billed_seconds, 86400.0);  // a 24-hour block is paid whole
  EXPECT_EQ(p5->inter_node_bits_per_s, 3200e9);
  // p4d.24xlarge: 1500 / (24 × 4) = 15.625; the EUR block is skipped, not converted.
  const auto p4 = h.store.get("aws/p4d.24xlarge capacity-block x4/us-east-2");
  ASSERT_TRUE(p4);
  EXPECT_DOUBLE_EQ(latest(*p4, PriceKind::on_demand)->usd_per_hour, 15.625);
  EXPECT_EQ(p4->gpu_name, "NVIDIA A100 SXM 40GB");
  std::string report;
  for (const std::string& line : skipped_rows_report(out)) report += line + "\n";
  EXPECT_NE(report.find("trn1.32xlarge"), std::string::npos) << report;
  EXPECT_NE(report.find("currency 'EUR' is not USD"), std::string::npos) << report;
}

TEST(AwsCapacityBlocksFetcher, ATruncatedReplyOrABadRegionIsRejectedAndWritesNothing) {
  // trial9e: a body cut just after </capacityBlockOfferingSet> lost its <nextToken> (the next
  // page) and was accepted; GPUPLAN_AWS_REGIONS='evil.com/x#' became part of a signed request's host.
  const std::string cut = "<DescribeCapacityBlockOfferingsResponse><capacityBlockOfferingSet><item><instanceType>"
                          "p5.48xlarge</instanceType><instanceCount>1</instanceCount><capacityBlockDurationHours>24"
                          "</capacityBlockDurationHours><upfrontFee>900</upfrontFee><currencyCode>USD</currencyCode>"
                          "</item></capacityBlockOfferingSet>";
  FixtureServer s;
  int requests = 0;
  s.server().Get("/", [&](const httplib::Request&, httplib::Response& r) {
    ++requests;
    r.set_content(cut, "text/xml");
  });
  const std::string base = s.start();
  Harness h;
  with_aws_keys(h);
  const auto out = h.fetch(base, {"aws-capacity-blocks"}).sources[0];
  EXPECT_EQ(out.status, "rejected") << out.message;
  EXPECT_NE(out.message.find("truncated"), std::string::npos) << out.message;
  EXPECT_EQ(h.store.counts().offers, 0u);
  h.env["GPUPLAN_AWS_REGIONS"] = "evil.com/x#";
  const int before = requests;
  const auto bad = h.fetch(base, {"aws-capacity-blocks"}).sources[0];
  EXPECT_NE(bad.status, "accepted");
  EXPECT_NE(bad.message.find("'evil.com/x#' is not an AWS region code"), std::string::npos) << bad.message;
  EXPECT_EQ(requests, before);  // nothing sent
  EXPECT_EQ(h.store.counts().offers, 0u);
}

TEST(AwsCapacityBlocksFetcher, AReplyThatIsNotTheApisXmlIsRejectedAndWritesNothing) {
  FixtureServer s;
  s.server().Get("/", [](const httplib::Request&, httplib::Response& r) {
    r.set_content("<html><body>Service Unavailable</body></html>", "text/html");
  });
  const std::string base = s.start();
  Harness h;
  with_aws_keys(h);
  const auto out = h.fetch(base, {"aws-capacity-blocks"}).sources[0];
  EXPECT_EQ(out.status, "rejected") << out.message;
  EXPECT_NE(out.message.find("capacityBlockOfferingSet"), std::string::npos) << out.message;
  EXPECT_EQ(h.store.counts().offers, 0u);
}

TEST(ShadeformFetcher, SkippedWithoutItsKeyCentsPerRegionAndAvailability) {
  // tests/data/fetch/shadeform-instance-types.json: Shadeform's documented reply layout
  // (instance_types[].configuration, hourly_price in cents, availability[]), invented values.
  FixtureServer s;
  std::string key_seen;
  s.server().Get("/v1/instances/types", [&](const httplib::Request& req, httplib::Response& r) {
    key_seen = req.get_header_value("X-API-KEY");
    r.set_content(fixture("shadeform-instance-types.json"), "application/json");
  });
  const std::string base = s.start();
  Harness h;
  const auto skipped = h.fetch(base, {"shadeform"}).sources[0];
  EXPECT_EQ(skipped.status, "skipped");
  EXPECT_NE(skipped.message.find("SHADEFORM_API_KEY"), std::string::npos) << skipped.message;
  EXPECT_TRUE(key_seen.empty());  // no request without the key
  h.env["SHADEFORM_API_KEY"] = "test-key";
  const auto out = h.fetch(base, {"shadeform"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  EXPECT_EQ(key_seen, "test-key");
  EXPECT_EQ(out.snapshot.offers, 3u);  // 1×H100 in two regions, 8×H100 with no region; the CPU type is no offer
  const auto canada = h.store.get("shadeform/hyperstack:n3-h100x1/canada-1");
  ASSERT_TRUE(canada);
  EXPECT_EQ(canada->gpu_name, "NVIDIA H100 PCIe");
  EXPECT_EQ(canada->gpu_count, 1);
  EXPECT_DOUBLE_EQ(latest(*canada, PriceKind::on_demand)->usd_per_hour, 2.19);  // 219 cents
  EXPECT_EQ(canada->confirmed_available_at, kT0);                               // available: true
  EXPECT_DOUBLE_EQ(*canada->gpu_memory_bytes, 80e9);
  const auto norway = h.store.get("shadeform/hyperstack:n3-h100x1/norway-1");
  ASSERT_TRUE(norway);
  EXPECT_FALSE(norway->confirmed_available_at);  // available: false
  const auto eight = h.store.get("shadeform/lambdalabs:gpu_8x_h100_sxm5/");
  ASSERT_TRUE(eight);
  EXPECT_EQ(eight->gpu_name, "NVIDIA H100 SXM");
  EXPECT_EQ(eight->gpu_count, 8);
  EXPECT_DOUBLE_EQ(latest(*eight, PriceKind::on_demand)->usd_per_hour, 23.92);  // 2392 cents, the instance
  EXPECT_FALSE(eight->confirmed_available_at);
}

TEST(HyperstackFetcher, FlavorsPricedFromThePricebookPerGpuAndUnpricedGpusUnknown) {
  // tests/data/fetch/hyperstack-{flavors,pricebook,stocks}.json: the documented layouts, invented values.
  FixtureServer s;
  std::string key_seen, stocks_key_seen;
  s.server().Get("/v1/core/flavors", [&](const httplib::Request& req, httplib::Response& r) {
    key_seen = req.get_header_value("api_key");
    r.set_content(fixture("hyperstack-flavors.json"), "application/json");
  });
  s.server().Get("/v1/pricebook", [&](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("hyperstack-pricebook.json"), "application/json");
  });
  s.server().Get("/v1/core/stocks", [&](const httplib::Request& req, httplib::Response& r) {
    stocks_key_seen = req.get_header_value("api_key");
    r.set_content(fixture("hyperstack-stocks.json"), "application/json");
  });
  const std::string base = s.start();
  Harness h;
  EXPECT_EQ(h.fetch(base, {"hyperstack"}).sources[0].status, "skipped");
  EXPECT_TRUE(key_seen.empty());
  h.env["HYPERSTACK_API_KEY"] = "test-key";
  const auto out = h.fetch(base, {"hyperstack"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  EXPECT_EQ(key_seen, "test-key");
  EXPECT_EQ(stocks_key_seen, "test-key");
  EXPECT_EQ(out.snapshot.offers, 3u);  // the CPU flavor is no offer
  const auto one = h.store.get("hyperstack/n3-h100x1/canada-1");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->gpu_name, "NVIDIA H100 PCIe");
  EXPECT_DOUBLE_EQ(*one->gpu_memory_bytes, 80e9);                              // "80G" in the GPU name
  EXPECT_DOUBLE_EQ(latest(*one, PriceKind::on_demand)->usd_per_hour, 1.9);     // the current entry, not the ended 2.5
  EXPECT_DOUBLE_EQ(*one->ram_bytes, 180e9);                                    // "ram": 180 (GB)
  EXPECT_DOUBLE_EQ(*one->local_disk_bytes, 750e9);                             // "ephemeral": 750 (GB)
  EXPECT_EQ(one->confirmed_available_at, kT0);  // stocks CANADA-1 H100-80G-PCIe "1x": 12
  const auto eight = h.store.get("hyperstack/n3-h100x8/canada-1");
  ASSERT_TRUE(eight);
  EXPECT_DOUBLE_EQ(latest(*eight, PriceKind::on_demand)->usd_per_hour, 8 * 1.9);  // per GPU-hour × 8
  EXPECT_FALSE(eight->confirmed_available_at);  // "8x": 0, though "available" is "40+"
  // H200 has no pricebook entry: unknown price, no observation (never $0).
  const auto h200 = h.store.get("hyperstack/n3-h200x8/norway-1");
  ASSERT_TRUE(h200);
  EXPECT_TRUE(h200->prices.empty());
  EXPECT_TRUE(has_flag(*h200, kRuleUnknownPrice));
  EXPECT_EQ(h200->confirmed_available_at, kT0);  // stocks NORWAY-1 H200-141G-SXM5 "8x": 2
}

void serve_verda(FixtureServer& s, std::string* token_body, std::string* auth, int token_status = 200) {
  s.server().Post("/v1/oauth2/token", [=](const httplib::Request& req, httplib::Response& r) {
    *token_body = req.body;
    r.status = token_status;
    if (token_status == 200)
      r.set_content(R"({"access_token": "tok-123", "token_type": "Bearer", "expires_in": 3600})", "application/json");
    else
      r.set_content(R"({"code": "unauthorized_request", "message": "Invalid client credentials"})", "application/json");
  });
  s.server().Get("/v1/instance-types", [=](const httplib::Request& req, httplib::Response& r) {
    *auth = req.get_header_value("Authorization");
    r.set_content(fixture("verda-instance-types.json"), "application/json");
  });
  s.server().Get("/v1/instance-availability", [=](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("verda-instance-availability.json"), "application/json");
  });
}

TEST(VerdaFetcher, OAuthThenStringPricesPerAvailableLocationAndUnknownStaysUnknown) {
  // tests/data/fetch/verda-instance-{types,availability}.json: Verda's documented layouts
  // (shared notes price-sources.md), invented values.
  FixtureServer s;
  std::string token_body, auth;
  serve_verda(s, &token_body, &auth);
  const std::string base = s.start();
  Harness h;
  h.env["VERDA_CLIENT_ID"] = "cid";
  const auto skipped = h.fetch(base, {"verda"}).sources[0];
  EXPECT_EQ(skipped.status, "skipped");
  EXPECT_NE(skipped.message.find("VERDA_CLIENT_SECRET"), std::string::npos) << skipped.message;
  EXPECT_TRUE(token_body.empty());  // no request without both variables
  h.env["VERDA_CLIENT_SECRET"] = "csecret";
  const auto out = h.fetch(base, {"verda"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  const nlohmann::json tb = nlohmann::json::parse(token_body);
  EXPECT_EQ(tb.at("grant_type"), "client_credentials");
  EXPECT_EQ(tb.at("client_id"), "cid");
  EXPECT_EQ(tb.at("client_secret"), "csecret");
  EXPECT_EQ(auth, "Bearer tok-123");
  // 1×H100 in FIN-01 and ICE-01 (both list it), 8×A100 and 1×L40S listed nowhere; CPU type no offer.
  EXPECT_EQ(out.snapshot.offers, 4u);
  const auto fin = h.store.get("verda/1h100.80s.30v/fin-01");
  ASSERT_TRUE(fin);
  EXPECT_EQ(fin->gpu_name, "NVIDIA H100 SXM");
  EXPECT_EQ(fin->gpu_count, 1);
  EXPECT_DOUBLE_EQ(latest(*fin, PriceKind::on_demand)->usd_per_hour, 2.45);  // "2.45"
  EXPECT_DOUBLE_EQ(latest(*fin, PriceKind::spot)->usd_per_hour, 1.10);       // "1.10"
  EXPECT_EQ(fin->confirmed_available_at, kT0);
  EXPECT_DOUBLE_EQ(*fin->vcpus, 30);
  EXPECT_DOUBLE_EQ(*fin->ram_bytes, 120e9);
  EXPECT_TRUE(h.store.get("verda/1h100.80s.30v/ice-01"));
  const auto eight = h.store.get("verda/8a100.80s.176v/");
  ASSERT_TRUE(eight);
  EXPECT_EQ(eight->gpu_name, "NVIDIA A100 SXM 80GB");
  EXPECT_EQ(eight->gpu_count, 8);
  EXPECT_DOUBLE_EQ(*eight->gpu_memory_bytes, 640e9 / 8);  // node total 640 GB ÷ 8 GPUs
  EXPECT_DOUBLE_EQ(latest(*eight, PriceKind::on_demand)->usd_per_hour, 14.0);
  EXPECT_EQ(latest(*eight, PriceKind::spot), nullptr);  // spot_price "0": unknown, not $0
  EXPECT_FALSE(eight->confirmed_available_at);
  const auto l40s = h.store.get("verda/1l40s.20v/");
  ASSERT_TRUE(l40s);
  EXPECT_TRUE(l40s->prices.empty());  // "N/A"
  EXPECT_TRUE(has_flag(*l40s, kRuleUnknownPrice));
  EXPECT_FALSE(h.store.get("verda/cpu.4v.16g/fin-01"));
}

TEST(VerdaFetcher, RejectedCredentialsFailTheSourceAndWriteNothing) {
  FixtureServer s;
  std::string token_body, auth;
  serve_verda(s, &token_body, &auth, 401);
  const std::string base = s.start();
  Harness h;
  h.env["VERDA_CLIENT_ID"] = "cid";
  h.env["VERDA_CLIENT_SECRET"] = "wrong";
  const auto out = h.fetch(base, {"verda"}).sources[0];
  EXPECT_EQ(out.status, "failed");
  EXPECT_NE(out.message.find("401"), std::string::npos) << out.message;
  EXPECT_TRUE(auth.empty());  // the lists were never asked for
  EXPECT_FALSE(h.store.get("verda/1h100.80s.30v/fin-01"));
}

TEST(VerdaFetcher, AMalformedListRejectsTheSnapshotAndWritesNothing) {
  FixtureServer s;
  s.server().Post("/v1/oauth2/token", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(R"({"access_token": "tok-123", "token_type": "Bearer", "expires_in": 3600})", "application/json");
  });
  s.server().Get("/v1/instance-types", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("verda-instance-types.json"), "application/json");
  });
  s.server().Get("/v1/instance-availability", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(R"([{"location_code": "FIN-01", "availabilities": ["1H100.80S.30V")", "application/json");  // cut short
  });
  const std::string base = s.start();
  Harness h;
  h.env["VERDA_CLIENT_ID"] = "cid";
  h.env["VERDA_CLIENT_SECRET"] = "csecret";
  const auto out = h.fetch(base, {"verda"}).sources[0];
  EXPECT_EQ(out.status, "rejected");
  EXPECT_NE(out.message.find("instance-availability"), std::string::npos) << out.message;  // names the document
  EXPECT_FALSE(h.store.get("verda/1h100.80s.30v/fin-01"));
  EXPECT_FALSE(h.store.get("verda/8a100.80s.176v/"));
}

struct GcpServer {
  std::vector<std::string> page_tokens, keys;
  std::string page2 = fixture("gcp-skus-2.json");
};

void serve_gcp(FixtureServer& s, GcpServer* g) {
  s.server().Get("/v1/services/6F81-5844-456A/skus", [g](const httplib::Request& req, httplib::Response& r) {
    g->keys.push_back(req.get_header_value("X-Goog-Api-Key"));
    const std::string token = req.get_param_value("pageToken");
    g->page_tokens.push_back(token);
    r.set_content(token.empty() ? fixture("gcp-skus-1.json") : g->page2, "application/json");
  });
}

TEST(GcpFetcher, MachinePriceAssembledFromGpuCoreAndRamSkusAcrossPages) {
  // tests/data/fetch/gcp-skus-{1,2}.json: the Cloud Billing Catalog API's documented layout,
  // invented prices; machine shapes from data/gcp-machine-shapes.csv (a2-highgpu-1g: 1 GPU,
  // 12 vCPUs, 85 GiB; a2-highgpu-8g: 8, 96, 680; a2-megagpu-16g: 16, 96, 1360).
  FixtureServer s;
  GcpServer g;
  serve_gcp(s, &g);
  const std::string base = s.start();
  Harness h;
  const auto skipped = h.fetch(base, {"gcp"}).sources[0];
  EXPECT_EQ(skipped.status, "skipped");
  EXPECT_NE(skipped.message.find("GCP_BILLING_API_KEY"), std::string::npos) << skipped.message;
  EXPECT_TRUE(g.keys.empty());
  h.env["GCP_BILLING_API_KEY"] = "gkey";
  const auto out = h.fetch(base, {"gcp"}).sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  ASSERT_EQ(g.page_tokens.size(), 2u);  // followed nextPageToken once, stopped at ""
  EXPECT_EQ(g.page_tokens[1], "page-2");
  EXPECT_EQ(g.keys, (std::vector<std::string>{"gkey", "gkey"}));
  for (const std::string& u : out.snapshot.urls) EXPECT_EQ(u.find("gkey"), std::string::npos) << u;
  EXPECT_EQ(out.snapshot.rows_read, 16u);  // 5 + 11 SKUs
  // us-central1 has every A2 part (a2-highgpu-1g/2g/4g/8g, a2-megagpu-16g, a2-ultragpu-1g/2g/4g/8g)
  // and every a3-highgpu part (1g/2g/4g/8g); us-east5 every a3-megagpu-8g part.
  EXPECT_EQ(out.snapshot.offers, 14u);
  const auto one = h.store.get("gcp/a2-highgpu-1g/us-central1");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->gpu_name, "NVIDIA A100 SXM 40GB");
  EXPECT_EQ(one->gpu_count, 1);
  ASSERT_TRUE(one->vcpus);
  EXPECT_DOUBLE_EQ(*one->vcpus, 12);
  ASSERT_TRUE(latest(*one, PriceKind::on_demand));
  ASSERT_TRUE(latest(*one, PriceKind::spot));
  // On-demand: 1 × $2.50 (GPU) + 12 × $0.03 (core) + 85 × $0.004 (GiB) = 2.50 + 0.36 + 0.34.
  EXPECT_NEAR(latest(*one, PriceKind::on_demand)->usd_per_hour, 3.20, 1e-9);
  // Spot: 1 × $1.00 + 12 × $0.01 + 85 × $0.001 = 1.00 + 0.12 + 0.085.
  EXPECT_NEAR(latest(*one, PriceKind::spot)->usd_per_hour, 1.205, 1e-9);
  const auto eight = h.store.get("gcp/a2-highgpu-8g/us-central1");
  ASSERT_TRUE(eight);
  ASSERT_TRUE(latest(*eight, PriceKind::on_demand));
  EXPECT_NEAR(latest(*eight, PriceKind::on_demand)->usd_per_hour, 8 * 2.5 + 96 * 0.03 + 680 * 0.004, 1e-9);  // 25.60
  const auto mega = h.store.get("gcp/a2-megagpu-16g/us-central1");
  ASSERT_TRUE(mega);
  ASSERT_TRUE(latest(*mega, PriceKind::on_demand));
  EXPECT_NEAR(latest(*mega, PriceKind::on_demand)->usd_per_hour, 16 * 2.5 + 96 * 0.03 + 1360 * 0.004, 1e-9);  // 48.32
  // us-east1 has the A100 and A2 core SKUs but no A2 RAM SKU: not priced from its parts.
  EXPECT_FALSE(h.store.get("gcp/a2-highgpu-1g/us-east1"));
  // The L4 SKU alone (no G2 core/RAM SKU) prices no g2 machine.
  EXPECT_FALSE(h.store.get("gcp/g2-standard-4/us-central1"));
  // Bundled Local SSD (data/gcp-machine-shapes.csv: a3-highgpu-1g 1 H100, 26 vCPUs, 234 GiB, 750 GiB
  // local SSD; a2-ultragpu-1g 1 A100 80GB, 12, 170, 375). The Local SSD SKUs are per GiB-month:
  // on demand $0.073 / 730 h = $0.0001 per GiB-hour, spot $0.0365 / 730 = $0.00005 (the spot SKU is
  // filed "OnDemand" in the fixture, as a public adapter reports Google does: its description
  // decides).
  // 1 × $9.80 + 26 × $0.025 + 234 × $0.003 + 750 × $0.0001 = 9.80 + 0.65 + 0.702 + 0.075 = $11.227.
  EXPECT_NEAR(stored_price(h, "gcp/a3-highgpu-1g/us-central1", PriceKind::on_demand).value_or(-1), 11.227, 1e-9);
  EXPECT_FALSE(stored_price(h, "gcp/a3-highgpu-1g/us-central1", PriceKind::spot));  // no spot H100 SKU in the reply
  const auto a3 = h.store.get("gcp/a3-highgpu-1g/us-central1");
  ASSERT_TRUE(a3 && a3->local_disk_bytes);
  EXPECT_DOUBLE_EQ(*a3->local_disk_bytes, 750.0 * 1073741824.0);
  // 8 × 9.80 + 208 × 0.025 + 1872 × 0.003 + 6000 × 0.0001 = 78.40 + 5.20 + 5.616 + 0.60 = $89.816.
  EXPECT_NEAR(stored_price(h, "gcp/a3-highgpu-8g/us-central1", PriceKind::on_demand).value_or(-1), 89.816, 1e-9);
  // On demand: 1 × $3.70 + 12 × $0.03 + 170 × $0.004 + 375 × $0.0001 = 3.70 + 0.36 + 0.68 + 0.0375.
  EXPECT_NEAR(stored_price(h, "gcp/a2-ultragpu-1g/us-central1", PriceKind::on_demand).value_or(-1), 4.7775, 1e-9);
  // Spot: 1 × $1.50 + 12 × $0.01 + 170 × $0.001 + 375 × $0.00005 = 1.50 + 0.12 + 0.17 + 0.01875.
  EXPECT_NEAR(stored_price(h, "gcp/a2-ultragpu-1g/us-central1", PriceKind::spot).value_or(-1), 1.80875, 1e-9);
  // a3-megagpu-8g (8 H100 "Mega" SKU, 208 vCPUs, 1872 GiB, 6000 GiB local SSD) in us-east5:
  // 8 × $11.00 + 208 × $0.025 + 1872 × $0.003 + 6000 × $0.0001 = 88.00 + 5.20 + 5.616 + 0.60 = $99.416.
  EXPECT_NEAR(stored_price(h, "gcp/a3-megagpu-8g/us-east5", PriceKind::on_demand).value_or(-1), 99.416, 1e-9);
  const auto mega8 = h.store.get("gcp/a3-megagpu-8g/us-east5");
  ASSERT_TRUE(mega8);
  EXPECT_EQ(mega8->gpu_name, "NVIDIA H100 SXM");
  // us-east4 has the H100, A3 core and A3 RAM SKUs but no Local SSD SKU: a3 not priced without its disk.
  EXPECT_FALSE(h.store.get("gcp/a3-highgpu-1g/us-east4"));
  bool warned = false;
  for (const std::string& w : out.warnings) warned = warned || w.find("does not map") != std::string::npos;
  EXPECT_TRUE(warned);
  std::size_t unmapped = 0;
  for (const auto& r : out.rules)
    if (r.rule == kRuleUnmappedSku) unmapped = r.rejected + r.flagged;
  // 4 a2-highgpu in us-east1 (no RAM SKU) + 8 g2 in us-central1 (no core/RAM SKU) + 4 a3-highgpu
  // in us-east4 (no Local SSD SKU) + "no GPU SKU" for every other listed (machine, region) pair.
  EXPECT_GE(unmapped, 16u);
}

TEST(GcpFetcher, AMalformedPageRejectsTheSnapshotAndWritesNothing) {
  FixtureServer s;
  GcpServer g;
  g.page2 = R"({"skus": [{"skuId": "x", )";  // cut short
  serve_gcp(s, &g);
  const std::string base = s.start();
  Harness h;
  h.env["GCP_BILLING_API_KEY"] = "gkey";
  const auto out = h.fetch(base, {"gcp"}).sources[0];
  EXPECT_EQ(out.status, "rejected");
  EXPECT_NE(out.message.find("pageToken=page-2"), std::string::npos) << out.message;  // names the page
  EXPECT_FALSE(h.store.get("gcp/a2-highgpu-1g/us-central1"));
}

// ---------------------------------------------------------------------------------------------
// Gates and snapshots.

TEST(Snapshots, SameContentIsUnchangedAndAFeedFrozenPastItsSourcesLimitIsReported) {
  // A list-price catalog (SkyPilot's Lambda file) may stay identical for weeks: frozen only after
  // 30 days (kListPriceFrozenAfterDays). trial9c item 6: at a 3-day limit for every source, stable
  // Vultr and SkyPilot catalogs stopped being confirmed after a long weekend.
  FixtureServer s;
  serve_lambda_catalog(s, std::make_shared<std::string>(fixture("skypilot-lambda-vms.csv")));
  Harness h;
  const std::string base = s.start();
  ASSERT_EQ(find_source("skypilot/lambda")->info().frozen_after_days, 30.0);
  ASSERT_EQ(h.fetch(base, {"skypilot/lambda"}, "2026-10-01T00:00:00Z").sources[0].status, "accepted");
  const std::size_t obs = h.store.counts().observations;
  const auto day1 = h.fetch(base, {"skypilot/lambda"}, "2026-10-02T00:00:00Z").sources[0];
  EXPECT_EQ(day1.status, "unchanged");
  EXPECT_FALSE(day1.frozen);  // 1 day < 30
  const auto day4 = h.fetch(base, {"skypilot/lambda"}, "2026-10-04T06:00:00Z").sources[0];
  EXPECT_EQ(day4.status, "unchanged");
  EXPECT_FALSE(day4.frozen);  // 3.25 days < 30: a stable catalog, still confirmed
  EXPECT_TRUE(day4.warnings.empty());
  const auto day31 = h.fetch(base, {"skypilot/lambda"}, "2026-11-01T06:00:00Z").sources[0];
  EXPECT_EQ(day31.status, "unchanged");
  EXPECT_TRUE(day31.frozen);  // 31.25 days >= 30
  ASSERT_FALSE(day31.warnings.empty());
  EXPECT_NE(day31.warnings[0].find("31.2 days; this source counts as frozen after 30 days"), std::string::npos)
      << day31.warnings[0];
  EXPECT_EQ(h.store.counts().observations, obs);  // nothing added twice
  EXPECT_EQ(h.store.snapshots("skypilot/lambda", 10).size(), 4u);
  // --frozen-after-days replaces the source's limit for the run.
  h.gates.frozen_after_days = 3.0;
  const auto day32 = h.fetch(base, {"skypilot/lambda"}, "2026-11-02T06:00:00Z").sources[0];
  EXPECT_TRUE(day32.frozen);
  ASSERT_FALSE(day32.warnings.empty());
  EXPECT_NE(day32.warnings[0].find("--frozen-after-days: frozen after 3 days"), std::string::npos) << day32.warnings[0];
}

TEST(Snapshots, ALiveMarketplaceFeedIsFrozenAfterThreeDays) {
  // vast reports what is rentable now; three days of identical replies is a stopped feed
  // (kLiveFeedFrozenAfterDays). The sources that report live availability or stock share it.
  for (const char* live : {"vast", "runpod", "lambda", "cudo", "shadeform", "hyperstack", "verda", "aws-capacity-blocks"})
    EXPECT_EQ(find_source(live)->info().frozen_after_days, 3.0) << live;
  for (const char* list : {"aws", "azure", "oci", "vultr", "scaleway", "ovhcloud", "gcp"})
    EXPECT_EQ(find_source(list)->info().frozen_after_days, 30.0) << list;
  FixtureServer s;
  auto body = std::make_shared<std::string>(fixture("vast-bundles.json"));
  s.server().Post("/api/v0/bundles/",
                  [body](const httplib::Request&, httplib::Response& r) { r.set_content(*body, "application/json"); });
  Harness h;
  const std::string base = s.start();
  ASSERT_EQ(h.fetch(base, {"vast"}, "2026-10-01T00:00:00Z").sources[0].status, "accepted");
  EXPECT_FALSE(h.fetch(base, {"vast"}, "2026-10-03T18:00:00Z").sources[0].frozen);  // 2.75 days < 3
  const auto day4 = h.fetch(base, {"vast"}, "2026-10-04T06:00:00Z").sources[0];
  EXPECT_TRUE(day4.frozen);  // 3.25 days
  ASSERT_FALSE(day4.warnings.empty());
  EXPECT_NE(day4.warnings[0].find("this source counts as frozen after 3 days"), std::string::npos) << day4.warnings[0];
}

TEST(Snapshots, AGpuMemoryInTheWrongUnitIsQuotedAsTheSourceGaveIt) {
  // trial9c: vast's `gpu_ram` is MiB; a reply with 80 there (a GB figure) is 80 MiB, far below
  // the H100's 80 GB. The finding printed "source says 0 GB per GPU" ({:.0f} of 0.084 GB).
  FixtureServer s;
  auto body = std::make_shared<std::string>(fixture("vast-bundles.json"));
  const auto pos = body->find("\"gpu_ram\":81559");
  ASSERT_NE(pos, std::string::npos);
  body->replace(pos, std::string("\"gpu_ram\":81559").size(), "\"gpu_ram\":80");
  s.server().Post("/api/v0/bundles/",
                  [body](const httplib::Request&, httplib::Response& r) { r.set_content(*body, "application/json"); });
  Harness h;
  const SourceOutcome o = h.fetch(s.start(), {"vast"}, "2026-10-01T00:00:00Z", true).sources[0];
  std::string all = o.message;
  for (const std::string& w : o.warnings) all += "\n" + w;
  for (const std::string& line : skipped_rows_report(o)) all += "\n" + line;
  EXPECT_NE(all.find("source says 80 MiB per GPU"), std::string::npos) << all;
  EXPECT_EQ(all.find("source says 0 GB"), std::string::npos) << all;
}

TEST(Snapshots, APriceBackAtAnEarlierValueIsANewSnapshotNotUnchanged) {
  // Issue 9 trial D1: vast at $16/h (the fixture's 8x H100), then a copy at x1.25 ($20/h), then
  // the first reply again. The third reply has the first one's hash, but it differs from the LAST
  // accepted snapshot: accepted, its $16 observed again, and the store's latest price is $16.
  FixtureServer s;
  auto body = std::make_shared<std::string>(fixture("vast-bundles.json"));
  s.server().Post("/api/v0/bundles/",
                  [body](const httplib::Request&, httplib::Response& r) { r.set_content(*body, "application/json"); });
  Harness h;
  const std::string base = s.start();
  const std::string normal = *body;
  ASSERT_EQ(h.fetch(base, {"vast"}, "2026-12-01T00:00:00Z").sources[0].status, "accepted");
  const std::string h100 = "vast/8x h100 sxm/us";
  ASSERT_EQ(stored_price(h, h100, PriceKind::on_demand), 16.0);
  // x1.25 on every dph_total: 16.0 -> 20.0, 0.55 -> 0.6875, 0.62 -> 0.775 (0.31 is not rentable).
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"dph_total\":16.0", "\"dph_total\":20.0"},
           {"\"dph_total\":0.55", "\"dph_total\":0.6875"},
           {"\"dph_total\":0.62", "\"dph_total\":0.775"}}) {
    const auto pos = body->find(from);
    ASSERT_NE(pos, std::string::npos) << from;
    body->replace(pos, from.size(), to);
  }
  ASSERT_EQ(h.fetch(base, {"vast"}, "2026-12-01T06:00:00Z").sources[0].status, "accepted");
  ASSERT_EQ(stored_price(h, h100, PriceKind::on_demand), 20.0);
  *body = normal;
  const SourceOutcome back = h.fetch(base, {"vast"}, "2026-12-01T12:00:00Z").sources[0];
  EXPECT_EQ(back.status, "accepted") << back.message;
  EXPECT_EQ(back.changes.observations_added, 2u);  // 8x H100 US $16, 2x 4090 NO $0.55
  EXPECT_EQ(stored_price(h, h100, PriceKind::on_demand), 16.0);
  // On-demand history (the spot price, min_bid 9.0, is unchanged: one observation of its own).
  const auto on_demand_history = [&h, &h100] {
    std::vector<PriceObservation> v;
    for (const PriceObservation& p : h.store.history(h100))
      if (p.kind == PriceKind::on_demand) v.push_back(p);
    return v;
  };
  const auto hist = on_demand_history();
  ASSERT_EQ(hist.size(), 3u);
  EXPECT_EQ(h.store.history(h100).size(), 4u);
  EXPECT_DOUBLE_EQ(hist[2].usd_per_hour, 16.0);
  EXPECT_EQ(hist[2].source.observed_at.value_or(""), "2026-12-01T12:00:00Z");
  // The same reply once more is unchanged (same hash as the last accepted), and not frozen: its
  // content was accepted at 12:00, not at 00:00 (an earlier run of the same content).
  const SourceOutcome again = h.fetch(base, {"vast"}, "2026-12-03T18:00:00Z").sources[0];
  EXPECT_EQ(again.status, "unchanged") << again.message;
  EXPECT_FALSE(again.frozen);  // 2.25 days since 12:00 on the 1st < 3 (2.75 days since 00:00)
  EXPECT_EQ(on_demand_history().size(), 3u);
}

TEST(Snapshots, ASnapshotThatLostMostRowsIsRejectedAndWritesNothing) {
  FixtureServer s;
  auto body = std::make_shared<std::string>(fixture("skypilot-lambda-vms.csv"));
  serve_lambda_catalog(s, body);
  Harness h;
  const std::string base = s.start();
  ASSERT_EQ(h.fetch(base, {"skypilot/lambda"}, "2026-12-01T00:00:00Z").sources[0].status, "accepted");
  const auto before = h.store.counts();
  // Keep the header and one row of three: 1 < (1 − 0.5) × 3.
  *body = body->substr(0, body->find('\n', body->find('\n') + 1) + 1);
  const auto out = h.fetch(base, {"skypilot/lambda"}, "2026-12-01T07:00:00Z").sources[0];
  EXPECT_EQ(out.status, "rejected");
  EXPECT_NE(out.message.find("row-count"), std::string::npos) << out.message;
  EXPECT_EQ(h.store.counts().observations, before.observations);
  EXPECT_EQ(h.store.last_snapshot("skypilot/lambda", "accepted")->fetched_at, "2026-12-01T00:00:00Z");
}

TEST(Snapshots, NewPricesAddObservationsAndKeepHistoryAndBigMovesAreFlagged) {
  FixtureServer s;
  auto body = std::make_shared<std::string>(fixture("skypilot-lambda-vms.csv"));
  serve_lambda_catalog(s, body);
  Harness h;
  const std::string base = s.start();
  ASSERT_EQ(h.fetch(base, {"skypilot/lambda"}, "2026-12-01T00:00:00Z").sources[0].status, "accepted");
  // gpu_1x_a10 0.75 → 7.50 (10×, above the 3× factor); the H100 rows unchanged.
  const auto pos = body->find("0.75,,us-east-1");
  ASSERT_NE(pos, std::string::npos);
  body->replace(pos, 4, "7.50");
  const auto out = h.fetch(base, {"skypilot/lambda"}, "2026-12-01T07:00:00Z").sources[0];
  ASSERT_EQ(out.status, "accepted") << out.message;
  const auto hist = h.store.history("lambda/gpu_1x_a10/us-east-1");
  ASSERT_EQ(hist.size(), 2u);
  EXPECT_DOUBLE_EQ(hist[0].usd_per_hour, 0.75);
  EXPECT_DOUBLE_EQ(hist[1].usd_per_hour, 7.5);
  const auto a10 = h.store.get("lambda/gpu_1x_a10/us-east-1");
  EXPECT_TRUE(has_flag(*a10, kRulePriceJump));
  EXPECT_FALSE(has_flag(*h.store.get("lambda/gpu_8x_h100_sxm5/us-east-1"), kRulePriceJump));
}

TEST(Snapshots, MalformedJsonRejectsOnlyThatSourceAndOthersGoOn) {
  FixtureServer s;
  serve_vast(s, "{\"offers\": [ {\"id\": 1, ");
  serve_lambda_catalog(s, std::make_shared<std::string>(fixture("skypilot-lambda-vms.csv")));
  Harness h;
  const FetchReport rep = h.fetch(s.start(), {"vast", "skypilot/lambda"});
  ASSERT_EQ(rep.sources.size(), 2u);
  EXPECT_EQ(rep.sources[0].status, "rejected");
  EXPECT_NE(rep.sources[0].message.find("malformed"), std::string::npos) << rep.sources[0].message;
  EXPECT_EQ(rep.sources[1].status, "accepted");
  EXPECT_TRUE(rep.any_failed());
  EXPECT_EQ(h.store.counts().offers, 3u);  // the lambda rows only
}

TEST(Snapshots, AServerErrorFailsTheSourceAfterRetries) {
  FixtureServer s;
  std::atomic<int> calls{0};
  s.server().Post("/api/v0/bundles/", [&](const httplib::Request&, httplib::Response& r) {
    ++calls;
    r.status = 500;
  });
  Harness h;
  const auto out = h.fetch(s.start(), {"vast"}).sources[0];
  EXPECT_EQ(out.status, "failed");
  EXPECT_EQ(calls.load(), 2);  // Harness: 2 attempts
  EXPECT_EQ(h.store.snapshots("vast", 5).at(0).status, "rejected");
}

TEST(Snapshots, ExpectedGpuMissingIsRejected) {
  FixtureServer s;
  // Only the H100 offer: the RTX 4090 vast always lists is gone.
  serve_vast(s, R"({"offers":[{"id":1003,"gpu_name":"H100 SXM","num_gpus":8,"gpu_ram":81559,"dph_total":16.0,"geolocation":"Texas, US","rentable":true}]})");
  Harness h;
  const auto out = h.fetch(s.start(), {"vast"}).sources[0];
  EXPECT_EQ(out.status, "rejected");
  EXPECT_NE(out.message.find("expected-gpus"), std::string::npos) << out.message;
  EXPECT_EQ(h.store.counts().offers, 0u);
}

TEST(Snapshots, AVastRowWithZeroGpusIsReportedNotDroppedUnsaid) {
  // trial9d D2: a row with num_gpus 0 vanished: "2 rows read, 1 offers; gates passed", no line.
  FixtureServer s;
  serve_vast(s, R"({"offers":[{"id":1,"gpu_name":"RTX 4090","num_gpus":1,"gpu_ram":24564,"dph_total":0.4,"geolocation":"Oslo, NO","rentable":true},
                              {"id":2,"gpu_name":"RTX 4090","num_gpus":0,"gpu_ram":24564,"dph_total":0.8,"geolocation":"Oslo, NO","rentable":true},
                              {"id":3,"gpu_name":"H100 SXM","num_gpus":8,"gpu_ram":81559,"dph_total":16.0,"geolocation":"Texas, US","rentable":true}]})");
  Harness h;
  const auto out = h.fetch(s.start(), {"vast"}, kT0, true).sources[0];
  std::string report;
  for (const std::string& line : skipped_rows_report(out)) report += line + "\n";
  EXPECT_NE(report.find("offer 2 has num_gpus 0, not a whole number of GPUs from 1; skipped"), std::string::npos)
      << report;
  EXPECT_EQ(out.snapshot.offers, 2u);  // the 1x 4090 and the 8x H100
}

TEST(Snapshots, GpuMemoryOutsideTheDatasheetRejectsTheSnapshot) {
  FixtureServer s;
  // gpu_ram written in GB instead of MiB: 24 → 24 MiB per RTX 4090 (datasheet 24 GB) on every row.
  serve_vast(s, R"({"offers":[{"id":1,"gpu_name":"RTX 4090","num_gpus":1,"gpu_ram":24,"dph_total":0.4,"geolocation":"Oslo, NO","rentable":true},
                              {"id":2,"gpu_name":"RTX 4090","num_gpus":2,"gpu_ram":24,"dph_total":0.8,"geolocation":"Oslo, NO","rentable":true}]})");
  Harness h;
  const auto out = h.fetch(s.start(), {"vast"}).sources[0];
  EXPECT_EQ(out.status, "rejected");
  EXPECT_NE(out.message.find("datasheet"), std::string::npos) << out.message;
}

/// The vast fixture with each of its four dph_total values (0.62, 0.55, 16.0, 0.31) replaced by `value`.
std::string vast_with_every_price(const std::string& value) {
  std::string body = fixture("vast-bundles.json");
  for (const std::string v : {"0.62", "0.55", "16.0", "0.31"}) {
    const std::string from = "\"dph_total\":" + v;
    const auto pos = body.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    if (pos != std::string::npos) body.replace(pos, from.size(), "\"dph_total\":" + value);
  }
  return body;
}

TEST(Snapshots, AFeedWithEveryPriceZeroIsRejectedAndWritesNothing) {
  // Issue 9 trial D2: the vast fixture with every dph_total 0. Each offer's only price is $0
  // (stored as unknown, no observation), so 2 of 2 offers (100% > 25%) have no known price: the
  // datasheet gate rejects the snapshot, on a fresh store and after an accepted one, and nothing
  // is written (no offer, no refreshed confirmed_available_at).
  const std::string zero = vast_with_every_price("0");
  {
    FixtureServer s;
    serve_vast(s, zero);
    Harness h;
    const auto out = h.fetch(s.start(), {"vast"}).sources[0];
    EXPECT_EQ(out.status, "rejected") << out.message;
    EXPECT_NE(out.message.find("datasheet: 2 of 2 offers"), std::string::npos) << out.message;
    EXPECT_EQ(h.store.counts().offers, 0u);
    EXPECT_FALSE(h.store.last_snapshot("vast", "accepted"));
  }
  FixtureServer s;
  auto body = std::make_shared<std::string>(fixture("vast-bundles.json"));
  s.server().Post("/api/v0/bundles/",
                  [body](const httplib::Request&, httplib::Response& r) { r.set_content(*body, "application/json"); });
  Harness h;
  const std::string base = s.start();
  ASSERT_EQ(h.fetch(base, {"vast"}, "2026-12-01T00:00:00Z").sources[0].status, "accepted");
  const auto before = h.store.counts();
  *body = zero;
  const auto out = h.fetch(base, {"vast"}, "2026-12-02T00:00:00Z").sources[0];
  EXPECT_EQ(out.status, "rejected") << out.message;
  EXPECT_EQ(h.store.counts().observations, before.observations);
  const auto h100 = h.store.get("vast/8x h100 sxm/us");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->confirmed_available_at, "2026-12-01T00:00:00Z");  // not refreshed by the rejected feed
  EXPECT_EQ(stored_price(h, "vast/8x h100 sxm/us", PriceKind::on_demand), 16.0);
}

TEST(Snapshots, AFeedWithEveryPriceNegativeIsRejectedAndSaysMinusDollars) {
  // As the $0 feed above, with every dph_total -1: the datasheet gate counts the negative prices
  // too, and a row's finding reads "-$1" (it read "$-1").
  const std::string negative = vast_with_every_price("-1");
  FixtureServer s;
  serve_vast(s, negative);
  Harness h;
  const auto out = h.fetch(s.start(), {"vast"}).sources[0];
  EXPECT_EQ(out.status, "rejected") << out.message;
  EXPECT_NE(out.message.find("datasheet: 2 of 2 offers"), std::string::npos) << out.message;
  bool said = false;
  for (const ImportIssue& i : out.row_examples) {
    EXPECT_EQ(i.detail.find("$-"), std::string::npos) << i.detail;
    said = said || i.detail.find("on-demand price is -$1:") != std::string::npos;
  }
  EXPECT_TRUE(said) << out.message;
  EXPECT_EQ(h.store.counts().offers, 0u);
}

/// Serves the three Vultr fixtures with `edit` applied to each reply body.
void serve_vultr(FixtureServer& s, const std::function<std::string(std::string)>& edit) {
  s.server().Get("/v2/plans", [edit](const httplib::Request& req, httplib::Response& r) {
    r.set_content(edit(fixture(req.get_param_value("cursor") == "cursor-2" ? "vultr-plans-2.json" : "vultr-plans-1.json")),
                  "application/json");
  });
  s.server().Get("/v2/plans-metal", [edit](const httplib::Request&, httplib::Response& r) {
    r.set_content(edit(fixture("vultr-metal.json")), "application/json");
  });
}

/// `text` with every `from` replaced by `to`; fails the test when `from` does not occur.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  EXPECT_NE(text.find(from), std::string::npos) << from;
  for (auto pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size()))
    text.replace(pos, from.size(), to);
  return text;
}

TEST(Snapshots, AFeedWhosePriceFieldIsRenamedIsRejectedAndWritesNothing) {
  // Issue 9 trial D2, the other half: a price the source leaves out is stored as unknown, so a
  // feed whose price field was renamed upstream (Vultr's hourly_cost read as absent on every
  // plan) gave 3 offers with unknown prices and passed every gate.
  FixtureServer s;
  serve_vultr(s, [](std::string body) {
    return body.find("hourly_cost") == std::string::npos ? body : replace_all(body, "\"hourly_cost\"", "\"hourly_price\"");
  });
  Harness h;
  const auto out = h.fetch(s.start(), {"vultr"}).sources[0];
  EXPECT_EQ(out.status, "rejected") << out.message;
  EXPECT_NE(out.message.find("priced: none of the 3 offers has a price"), std::string::npos) << out.message;
  EXPECT_EQ(h.store.counts().offers, 0u);
}

TEST(Snapshots, OnDemandPricesLostSinceTheLastSnapshotRejectItAboveTheBadRowShare) {
  // The L40S plan (2 offers: ewr, fra) loses its hourly_cost; the H100 metal plan keeps its own.
  // 2 of the 3 offers Vultr priced on-demand before have no on-demand price now: 67% > 25%.
  const auto drop_l40s_price = [](std::string body) {
    return body.find("\"hourly_cost\":1.67,") == std::string::npos ? body
                                                                     : replace_all(body, "\"hourly_cost\":1.67,", "");
  };
  FixtureServer first;
  serve_vultr(first, [](std::string body) { return body; });
  FixtureServer second;
  serve_vultr(second, drop_l40s_price);
  const std::string first_base = first.start();
  const std::string second_base = second.start();
  for (const double max_bad_share : {0.25, 0.7}) {
    Harness h;
    h.gates.max_bad_row_fraction = max_bad_share;
    ASSERT_EQ(h.fetch(first_base, {"vultr"}, "2026-12-01T00:00:00Z").sources[0].status, "accepted");
    const auto before = h.store.counts();
    const auto out = h.fetch(second_base, {"vultr"}, "2026-12-02T00:00:00Z").sources[0];
    if (max_bad_share == 0.25) {
      EXPECT_EQ(out.status, "rejected") << out.message;
      EXPECT_NE(out.message.find("price-lost: 2 of 3 offers this source priced on-demand before have no on-demand "
                                 "price now (more than 25%"),
                std::string::npos)
          << out.message;
      EXPECT_EQ(h.store.counts().observations, before.observations);
    } else {
      // 67% <= 70%: accepted. The metal plan's price, the same as on 2026-12-01, is seen again
      // (docs/fetch.md "Seen again": last seen 2026-12-02, no second observation); the unpriced
      // L40S offers keep their stored price: nothing is erased.
      EXPECT_EQ(out.status, "accepted") << out.message;
      EXPECT_EQ(h.store.counts().observations, before.observations);
      const auto metal = h.store.get("vultr/vbm-112c-2048gb-8-h100-gpu/sea");
      ASSERT_TRUE(metal);
      ASSERT_NE(metal->latest_price(PriceKind::on_demand), nullptr);
      EXPECT_EQ(metal->latest_price(PriceKind::on_demand)->source.observed_at, "2026-12-01T00:00:00Z");
      EXPECT_EQ(metal->latest_price(PriceKind::on_demand)->seen_at(), "2026-12-02T00:00:00Z");
    }
    EXPECT_EQ(stored_price(h, "vultr/vcg-l40s-16c-180g-48vram/fra", PriceKind::on_demand), 1.67);
  }
}

TEST(Snapshots, ReservedPricesLostSinceTheLastSnapshotAreAWarningOnly) {
  // RunPod's savings plans come and go with its offer: the fixture's H100 oneWeekPrice (1x and 8x
  // Secure offers) gone is 2 of 2 reserved-1w prices lost, a warning; the snapshot is accepted.
  FixtureServer s;
  auto body = std::make_shared<std::string>(fixture("runpod-gputypes.json"));
  s.server().Post("/graphql", [body](const httplib::Request&, httplib::Response& r) {
    r.set_content(*body, "application/json");
  });
  Harness h;
  const std::string base = s.start();
  ASSERT_EQ(h.fetch(base, {"runpod"}, "2026-12-01T00:00:00Z").sources[0].status, "accepted");
  *body = replace_all(*body, "\"oneWeekPrice\":2.79,", "");
  const auto out = h.fetch(base, {"runpod"}, "2026-12-02T00:00:00Z").sources[0];
  EXPECT_EQ(out.status, "accepted") << out.message;
  bool warned = false;
  for (const auto& w : out.warnings)
    warned = warned || w == "2 of 2 offers this source priced reserved-1w before have no reserved-1w price now";
  EXPECT_TRUE(warned);
}

TEST(Snapshots, DryRunWritesNothingAndListsPriceChanges) {
  FixtureServer s;
  serve_vast(s, fixture("vast-bundles.json"));
  Harness h;
  const auto out = h.fetch(s.start(), {"vast"}, kT0, /*dry_run=*/true).sources[0];
  EXPECT_EQ(out.status, "would-accept");
  EXPECT_EQ(out.changes.offers_added, 2u);
  EXPECT_EQ(out.price_changes.size(), 4u);  // on-demand and spot (min_bid) of each of the 2 offers
  EXPECT_EQ(h.store.counts().offers, 0u);
  EXPECT_TRUE(h.store.snapshots("", 10).empty());
}

TEST(Snapshots, TwoFetchesAtOnceDoNotDuplicateObservations) {
  FixtureServer s;
  serve_lambda_catalog(s, std::make_shared<std::string>(fixture("skypilot-lambda-vms.csv")));
  const std::string base = s.start();
  const auto db = std::filesystem::temp_directory_path() / ("gpuplan-fetch-race-" + std::to_string(::getpid()) + ".sqlite");
  std::filesystem::remove(db);
  { SqliteOfferStore init(db.string()); }  // migrate once
  std::vector<std::string> status(2);
  std::thread a([&] {
    Harness h(db.string());
    status[0] = h.fetch(base, {"skypilot/lambda"}, "2026-12-01T00:00:00Z").sources[0].status;
  });
  std::thread b([&] {
    Harness h(db.string());
    status[1] = h.fetch(base, {"skypilot/lambda"}, "2026-12-01T00:00:01Z").sources[0].status;
  });
  a.join();
  b.join();
  SqliteOfferStore check(db.string());
  EXPECT_EQ(check.counts().observations, 3u);  // one snapshot's three prices, not six
  std::size_t accepted = 0;
  for (const auto& r : check.snapshots("skypilot/lambda", 10)) accepted += r.status == "accepted";
  EXPECT_EQ(accepted, 1u);
  std::sort(status.begin(), status.end());
  EXPECT_EQ(status, (std::vector<std::string>{"accepted", "unchanged"}));
  std::filesystem::remove(db);
}

TEST(Snapshots, ASourceThatDoesNotKnowAFactDoesNotEraseIt) {
  FixtureServer s;
  s.server().Get("/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv",
                 [](const httplib::Request&, httplib::Response& r) { r.set_content(fixture("aws-price-list.csv"), "text/csv"); });
  s.server().Get("/spot.json", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("aws-spot.json"), "application/json");
  });
  s.server().Get("/spot-advisor-data.json", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(fixture("aws-spot-advisor.json"), "application/json");
  });
  // The same offer in a SkyPilot-layout catalog, which carries no interruption band.
  s.server().Get("/skypilot-org/skypilot-catalog/master/catalogs/v8/aws/vms.csv",
                 [](const httplib::Request&, httplib::Response& r) {
                   r.set_content("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n"
                                 "g5.xlarge,A10G,1,4,16,1.05,,us-east-1\n",
                                 "text/csv");
                 });
  Harness h;
  const std::string base = s.start();
  ASSERT_EQ(h.fetch(base, {"aws"}).sources[0].status, "accepted");
  ASSERT_EQ(h.fetch(base, {"skypilot/aws"}, "2026-12-01T07:00:00Z").sources[0].status, "accepted");
  const auto g5 = h.store.get("aws/g5.xlarge/us-east-1");
  ASSERT_TRUE(g5);
  ASSERT_TRUE(g5->billing_override.preemptions_per_day);
  EXPECT_NEAR(*g5->billing_override.preemptions_per_day, 0.11 / 30.0, 1e-12);
  EXPECT_DOUBLE_EQ(latest(*g5, PriceKind::on_demand)->usd_per_hour, 1.05);  // the newer observation
  EXPECT_EQ(h.store.history("aws/g5.xlarge/us-east-1").size(), 3u);         // 1.00 and 0.45 spot kept
}

TEST(Sources, UnknownNameIsNotFound) {
  Harness h;
  try {
    h.fetch("", {"nope"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::not_found);
  }
}

}  // namespace
}  // namespace gpuplan::fetch
