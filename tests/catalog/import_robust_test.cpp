// Issue 11: imports never crash, never corrupt, never poison. Each test carries the exact input
// that showed a defect.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "catalog/importers.hpp"
#include "catalog/sqlite_store.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan {
namespace {

const std::string kHeader = "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n";

ImportBatch csv(const std::string& body, const std::string& file = "q.csv") {
  ImportSource src;
  src.file = file;
  src.dataset = "user:generic-csv";
  src.locator_base = file;
  return import_generic_csv(kHeader + body, src);
}

std::string error_of(const std::function<void()>& f, ErrorKind kind = ErrorKind::invalid_input) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(ImportRobust, InvalidUtf8IsRejectedWithLineAndColumn) {
  const std::string w = error_of([] {
    import_text(kHeader + "lambda,gpu_1x_h100\xff,us-east-1,H100 SXM,1,on-demand,2.49,2025-06-01,web\n",
                ImportFormat::generic_csv, ImportSource{"q.csv", "user:generic-csv", "", "", nullptr});
  });
  EXPECT_NE(w.find("q.csv:2:19:"), std::string::npos) << w;
}

TEST(ImportRobust, NulByteIsRejected) {
  const std::string row =
      "lambda,gpu_1x" + std::string(1, '\0') + "h100,us-east-1,H100 SXM,1,on-demand,2.49,2025-06-01,web\n";
  const std::string w = error_of([&] {
    import_text(kHeader + row, ImportFormat::generic_csv, ImportSource{"q.csv", "user:generic-csv", "", "", nullptr});
  });
  EXPECT_NE(w.find("NUL"), std::string::npos) << w;
}

TEST(ImportRobust, JsonNumberOutOfRangeHasAFilePosition) {
  const std::string text =
      "{\"format\": \"gpuplan-offers/1\", \"offers\": [{\"provider\": \"lambda\", \"instance_type\": \"x\", "
      "\"gpu\": \"H100 SXM\", \"gpu_count\": 1, \"price_kind\": \"on-demand\", \"usd_per_hour\": 1e400, "
      "\"observed_at\": \"2025-06-01\", \"source\": \"web\"}]}";
  const std::string w = error_of([&] {
    import_text(text, ImportFormat::generic_json, ImportSource{"q.json", "user:generic-json", "", "", nullptr});
  });
  EXPECT_NE(w.find("q.json: /offers/0/usd_per_hour:"), std::string::npos) << w;
  EXPECT_NE(w.find("at line:column 1:"), std::string::npos) << w;
  EXPECT_NE(w.find("1e400"), std::string::npos) << w;
}

TEST(ImportRobust, DuplicateJsonKeyIsAnError) {
  const std::string text =
      "{\"format\": \"gpuplan-offers/1\", \"offers\": [{\"provider\": \"lambda\", \"instance_type\": \"x\", "
      "\"gpu\": \"H100 SXM\", \"gpu\": \"A100\", \"gpu_count\": 1, \"price_kind\": \"on-demand\", \"usd_per_hour\": 2, "
      "\"observed_at\": \"2025-06-01\", \"source\": \"web\"}]}";
  EXPECT_NE(error_of([&] { import_generic_json(text, ImportSource{"q.json", "user:x", "", "", nullptr}); })
                .find("/offers/0/gpu"),
            std::string::npos);
}

// Issue 11, bounded memory: a JSON import hands each offer to the importer as soon as it is
// parsed and drops its DOM (parse_json_strict's array sink). The elements arrive in order, each
// checked with its own pointer; the document comes back without them; an error after some
// elements still fails the whole parse (so the import writes nothing).
TEST(ImportRobust, JsonOffersAreStreamedOneAtATime) {
  const std::string text = "{\"offers\": [{\"a\": 1}, 2, [3], {\"b\": \"x\"}], \"format\": \"f\"}";
  std::vector<std::string> seen;
  const nlohmann::json doc = parse_json_strict(text, "s.json", "offers", [&](std::size_t i, nlohmann::json& e) {
    seen.push_back(std::to_string(i) + "=" + e.dump());
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"0={\"a\":1}", "1=2", "2=[3]", "3={\"b\":\"x\"}"}));
  EXPECT_EQ(doc.dump(), "{\"format\":\"f\",\"offers\":[]}");
  // The same text without a sink keeps every element.
  EXPECT_EQ(parse_json_strict(text, "s.json").at("offers").size(), 4u);
  // A control character (escaped) in element 1 is reported at its pointer, before element 2 is seen.
  seen.clear();
  const std::string bad = "{\"offers\": [{\"a\": \"ok\"}, {\"a\": \"x\\u0001\"}, {\"a\": \"z\"}]}";
  const std::string w = error_of([&] {
    parse_json_strict(bad, "s.json", "offers", [&](std::size_t i, nlohmann::json&) { seen.push_back(std::to_string(i)); });
  });
  EXPECT_NE(w.find("s.json: /offers/1/a"), std::string::npos) << w;
  EXPECT_EQ(seen, std::vector<std::string>{"0"});
  // A syntax error after two offers: the generic importer fails with the file position.
  const std::string offer =
      "{\"provider\": \"lambda\", \"instance_type\": \"x\", \"gpu\": \"H100 SXM\", \"gpu_count\": 1, "
      "\"price_kind\": \"on-demand\", \"usd_per_hour\": 2, \"observed_at\": \"2025-06-01\", \"source\": \"web\"}";
  const std::string broken = "{\"format\": \"gpuplan-offers/1\", \"offers\": [" + offer + ",\n" + offer + ",\n}";
  const std::string w2 = error_of([&] { import_generic_json(broken, ImportSource{"q.json", "user:x", "", "", nullptr}); });
  EXPECT_NE(w2.find("q.json:3:"), std::string::npos) << w2;
  // Well-formed: both rows imported (one offer id, its observation once: the same quote).
  const std::string good = "{\"format\": \"gpuplan-offers/1\", \"offers\": [" + offer + ",\n" + offer + "]}";
  const ImportBatch b = import_generic_json(good, ImportSource{"q.json", "user:x", "", "", nullptr});
  EXPECT_EQ(b.rows_read, 2u);
  ASSERT_EQ(b.offers.size(), 1u);
  EXPECT_EQ(b.offers[0].prices.size(), 1u);
}

TEST(ImportRobust, HexPriceIsNotANumber) {
  // The issue: 0x10 was read as $16.
  const std::string w = error_of([] { csv("lambda,gpu_1x_h100,us-east-1,H100 SXM,1,on-demand,0x10,2025-06-01,web\n"); });
  EXPECT_NE(w.find("0x10"), std::string::npos) << w;
}

TEST(ImportRobust, ImpossibleTimesAndDatesAreRejected) {
  for (const char* date : {"2026-01-05T25:00:00Z", "2026-02-30", "2026-01-05T12:60Z", "2026-01-05T12:00:00+15:00",
                           "2026-01-05T12:00:00"}) {
    const std::string w = error_of([&] {
      csv(std::string("lambda,gpu_1x_h100,us-east-1,H100 SXM,1,on-demand,2.49,") + date + ",web\n");
    });
    EXPECT_NE(w.find("observed_at '" + std::string(date) + "' is not a date"), std::string::npos) << date << ": " << w;
  }
  EXPECT_NO_THROW(csv("lambda,gpu_1x_h100,us-east-1,H100 SXM,1,on-demand,2.49,2026-01-05T23:59:59-08:00,web\n"));
}

TEST(ImportRobust, SlashInInstanceOrRegionDoesNotCollide) {
  // "a/b" in region "c" and "a" in region "b/c" gave the same id "p/a/b/c".
  const ImportBatch b = csv("lambda,a/b,c,H100 SXM,1,on-demand,2.49,2025-06-01,web\n"
                            "lambda,a,b/c,H100 SXM,1,on-demand,3.49,2025-06-01,web\n");
  ASSERT_EQ(b.offers.size(), 2u);
  EXPECT_EQ(b.offers[0].id, "lambda/a%2Fb/c");
  EXPECT_EQ(b.offers[1].id, "lambda/a/b%2Fc");
}

TEST(ImportRobust, SameIdWithDifferentHardwareIsAnErrorNotAMerge) {
  // The issue: an 8xH100 row and a 4xA100 row with the same provider/instance/region merged,
  // the A100 price became the H100 offer's price and it ranked #1.
  const std::string w = error_of([] {
    csv("lambda,gpu_big,us-east-1,H100 SXM,8,on-demand,23.92,2025-06-01,web\n"
        "lambda,gpu_big,us-east-1,A100 SXM4 80GB,4,on-demand,5.16,2025-06-01,web\n");
  });
  EXPECT_NE(w.find("q.csv:3"), std::string::npos) << w;
  EXPECT_NE(w.find("cannot be two machines"), std::string::npos) << w;
}

TEST(ImportRobust, DifferentHardwareAgainstTheStoreIsAnErrorAndWritesNothing) {
  SqliteOfferStore store(":memory:");
  store.import(csv("lambda,gpu_big,us-east-1,H100 SXM,8,on-demand,23.92,2025-06-01,web\n"));
  const auto before = store.counts();
  const ImportBatch other = csv("lambda,gpu_big,us-east-1,A100 SXM4 80GB,4,on-demand,5.16,2025-06-02,web\n", "r.csv");
  const std::string w = error_of([&] { store.import(other); });
  EXPECT_NE(w.find("in the store"), std::string::npos) << w;
  EXPECT_EQ(store.counts().observations, before.observations);
  EXPECT_EQ(store.get("lambda/gpu_big/us-east-1")->gpu_count, 8);
  error_of([&] { store.preview_import(other); });
}

TEST(ImportRobust, SameQuoteFromTwoFilesIsOneObservation) {
  SqliteOfferStore store(":memory:");
  const std::string row = "lambda,gpu_1x_h100,us-east-1,H100 SXM,1,on-demand,2.49,2025-06-01,lambda.ai/pricing\n";
  const ImportResult a = store.import(csv(row, "monday.csv"));
  const ImportResult b = store.import(csv(row, "copy-of-monday.csv"));
  EXPECT_EQ(a.observations_added, 1u);
  EXPECT_EQ(b.observations_added, 0u);
  EXPECT_EQ(b.observations_already_known, 1u);
  EXPECT_EQ(store.history("lambda/gpu_1x_h100/us-east-1").size(), 1u);
}

TEST(ImportRobust, BrokenJsonIsReportedWithItsPosition) {
  // The issue: a broken .json was reported only as "cannot tell the offer file's format".
  const std::string w = error_of([] { detect_import_format("quotes.json", "{\n  \"format\": \"gpuplan-offers/1\",\n  \"x\": [1,\n"); });
  EXPECT_NE(w.find("quotes.json:4:1"), std::string::npos) << w;
}

TEST(ImportRobust, ManyDistinctOffersKeepTheirOwnPrices) {
  // 20,000 distinct offers through the hashed lookup that replaced the linear scan (the speed
  // target lives in bench/bench_catalog.cpp, BM_ImportGenericCsvRows).
  std::string body;
  for (int i = 0; i < 20000; ++i)
    body += "lambda,inst" + std::to_string(i) + ",us-east-1,H100 SXM,1,on-demand," + std::to_string(i % 7 + 1) +
            ",2025-06-01,web\n";
  body += "lambda,inst5,us-east-1,H100 SXM,1,on-demand,9,2025-06-02,web\n";  // a second price for inst5
  const ImportBatch b = csv(body);
  ASSERT_EQ(b.offers.size(), 20000u);
  EXPECT_EQ(b.offers[19999].id, "lambda/inst19999/us-east-1");
  EXPECT_EQ(b.offers[19999].prices.at(0).usd_per_hour, 19999 % 7 + 1);
  ASSERT_EQ(b.find("lambda/inst5/us-east-1")->prices.size(), 2u);
  EXPECT_EQ(b.find("lambda/inst5/us-east-1")->latest_price(PriceKind::on_demand)->usd_per_hour, 9);
}

// Streaming import (issue 11): import_file reads gpuplan's CSV block by block. A file far
// larger than the 64 KiB head must give exactly the batch the whole-text importer gives, and a
// bad byte deep in it must be named by the file's own line and column.
std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  std::fwrite(content.data(), 1, content.size(), f);
  std::fclose(f);
  return path;
}

std::string many_rows(int n) {
  std::string body;
  for (int i = 0; i < n; ++i)
    body += "lambda,inst" + std::to_string(i / 3) + ",us-east-" + std::to_string(i % 2) + ",H100 SXM,1,on-demand," +
            std::to_string(i % 7 + 1) + ",2025-06-0" + std::to_string(1 + i % 3) + ",\"web, quoted\"\n";
  return body;
}

TEST(ImportStreaming, FileLargerThanTheHeadGivesTheWholeTextBatch) {
  const std::string text = kHeader + many_rows(6000);  // ~500 KB: the head plus many blocks
  ASSERT_GT(text.size(), 4u * 65536u);
  const std::string path = temp_file("stream.csv", text);
  const ImportBatch streamed = import_file(path);
  ImportSource src;
  src.file = path;
  src.dataset = "user:generic-csv";
  src.locator_base = path;
  const ImportBatch whole = import_text(text, ImportFormat::generic_csv, src);
  EXPECT_EQ(streamed.rows_read, 6000u);
  ASSERT_EQ(streamed.offers.size(), whole.offers.size());
  for (std::size_t i = 0; i < whole.offers.size(); ++i) {
    ASSERT_EQ(streamed.offers[i].id, whole.offers[i].id);
    ASSERT_EQ(streamed.offers[i].prices.size(), whole.offers[i].prices.size());
    for (std::size_t k = 0; k < whole.offers[i].prices.size(); ++k) {
      EXPECT_EQ(streamed.offers[i].prices[k].usd_per_hour, whole.offers[i].prices[k].usd_per_hour);
      EXPECT_EQ(streamed.offers[i].prices[k].source.locator, whole.offers[i].prices[k].source.locator);
      EXPECT_EQ(streamed.offers[i].prices[k].source.observed_at, whole.offers[i].prices[k].source.observed_at);
    }
    EXPECT_TRUE(same_offer_facts(streamed.offers[i], whole.offers[i])) << whole.offers[i].id;
  }
  // Row 4,000 (i = 3999) is on line 4,001 (line 1 is the header): inst 3999 / 3 = 1333, region
  // 3999 % 2 = 1, price 3999 % 7 + 1 = 3, date 2025-06-0(1 + 3999 % 3) = 2025-06-01.
  std::string bad = kHeader + many_rows(6000);
  const std::string row4000 = "lambda,inst1333,us-east-1,H100 SXM,1,on-demand,3,2025-06-01,\"web, quoted\"\n";
  const std::size_t at = bad.find(row4000);
  ASSERT_NE(at, std::string::npos);
  bad[at + 12] = '\x80';  // a lone continuation byte at column 13 ("lambda,inst1" is 12 bytes)
  const std::string bad_path = temp_file("stream-bad.csv", bad);
  const std::string w = error_of([&] { import_file(bad_path); });
  EXPECT_NE(w.find(bad_path + ":4001:13:"), std::string::npos) << w;
}

TEST(ImportStreaming, CachedGpuResolutionStillReportsEveryUnresolvedRowAndKeepsFormFactors) {
  const ImportBatch b = csv(
      "acme,box-a,r1,Mystery GPU,1,on-demand,1.5,2025-06-01,web\n"
      "acme,box-b,r1,Mystery GPU,1,on-demand,1.5,2025-06-01,web\n"
      "acme,h100-sxm,r1,H100,8,on-demand,20,2025-06-01,web\n"
      "acme,h100-pcie,r1,H100,1,on-demand,2,2025-06-01,web\n");
  std::size_t unresolved = 0;
  for (const ImportIssue& i : b.issues) unresolved += i.rule == import_rule::kUnresolvedGpu;
  EXPECT_EQ(unresolved, 2u);  // one per row, not one per name
  ASSERT_NE(b.find("acme/h100-sxm/r1"), nullptr);
  ASSERT_NE(b.find("acme/h100-pcie/r1"), nullptr);
  EXPECT_EQ(b.find("acme/h100-sxm/r1")->form_factor, "SXM");
  EXPECT_EQ(b.find("acme/h100-pcie/r1")->form_factor, "PCIe");
}

}  // namespace
}  // namespace gpuplan
