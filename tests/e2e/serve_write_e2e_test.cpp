// End-to-end: `gpuplan serve` with a write token (POST /api/import), through the real binary on
// 127.0.0.1 with its own temporary --db (seeded from the bundled catalog):
//   - the token comes from GPUPLAN_WRITE_TOKEN (or --write-token-file); a short one is exit 2;
//   - a small generic CSV imports (200, the counts `gpuplan import` prints) and GET /api/offers
//     then shows the offer on this server and on another server on the same store;
//   - dry_run=true writes nothing; a malformed CSV is 400 naming its line and writes nothing;
//   - no token configured → 403 read_only; a missing or wrong token → 401 with WWW-Authenticate;
//   - the JSON endpoints keep their 64 KiB body limit while the import takes more.
// Expected numbers are counted by hand from the CSV text written in each test.
#include <gtest/gtest.h>

#include "serve_process.hpp"
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kToken = "e2e-write-token-0123456789abcdef";

class ServeWriteE2E : public ::testing::Test {
 protected:
  using Running = gpuplan::e2e::ServeProcess;
  /// `gpuplan --db DB serve --listen 127.0.0.1:0 EXTRA...` with `token_env` in GPUPLAN_WRITE_TOKEN
  /// (unset when empty), stderr with stdout (serve_process.hpp).
  static Running start_server(const std::string& db, const std::string& token_env, std::vector<std::string> extra = {}) {
    return gpuplan::e2e::start_serve({db, dir_, token_env, std::move(extra), true});
  }
  /// SIGTERM (when running) and the exit code.
  static int stop_server(Running& r) { return gpuplan::e2e::stop_serve(r); }

  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpuplan-e2e-serve-write-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static std::string db(const std::string& name) { return (dir_ / (name + ".sqlite")).string(); }

  static httplib::Client client(int port) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(60, 0);
    return c;
  }
  static httplib::Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }
  static json health(int port) {
    auto c = client(port);
    auto r = c.Get("/api/health");
    EXPECT_TRUE(r && r->status == 200);
    return r ? json::parse(r->body) : json();
  }
  /// Offers of one provider through GET /api/offers?q=provider=NAME (an array of offers).
  static json offers_of(int port, const std::string& provider) {
    auto c = client(port);
    auto r = c.Get("/api/offers?q=provider=" + provider + "&today=2026-12-01");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    if (!r) return json::array();
    const json j = json::parse(r->body);
    EXPECT_TRUE(j.is_array()) << r->body.substr(0, 200);
    return j;
  }

  static inline fs::path dir_;
};

// Two offers: one quoted on-demand and spot (one offer, two observations), one on-demand.
// Provider "e2equotes" is in no bundled file, so every count below is about these rows only.
const std::string kCsv =
    "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n"
    "e2equotes,h100x8,us-east,H100,8,on-demand,23.92,2026-11-20,https://example.com/quote-1\n"
    "e2equotes,h100x8,us-east,H100,8,spot,12.00,2026-11-20,https://example.com/quote-1\n"
    "e2equotes,a100x1,us-east,A100-80GB,1,on-demand,1.79,2026-11-21,https://example.com/quote-2\n";

TEST_F(ServeWriteE2E, ImportsThroughTheTokenAndReadsSeeIt) {
  const std::string store = db("import");
  Running a = start_server(store, kToken);
  ASSERT_GT(a.port, 0) << a.first_line;
  EXPECT_NE(a.first_line.find("POST /api/import"), std::string::npos) << a.first_line;
  Running b = start_server(store, "");  // a read-only server on the same store
  ASSERT_GT(b.port, 0) << b.first_line;
  const json before = health(a.port);
  EXPECT_EQ(offers_of(a.port, "e2equotes").size(), 0u);
  EXPECT_EQ(offers_of(b.port, "e2equotes").size(), 0u);  // both servers cache this answer

  auto c = client(a.port);
  // Dry run: the counts, nothing written.
  auto r = c.Post("/api/import?dry_run=true&name=quotes.csv", bearer(kToken), kCsv, "text/csv");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["dry_run"], true);
  EXPECT_EQ(j["rows_read"], 3);
  EXPECT_EQ(j["offers_in_file"], 2);
  EXPECT_EQ(j["offers"]["added"], 2);
  EXPECT_EQ(j["observations"]["added"], 3);
  EXPECT_EQ(health(a.port), before);
  EXPECT_EQ(offers_of(a.port, "e2equotes").size(), 0u);

  // The import: format detected (generic-csv), the same counts, now written.
  r = c.Post("/api/import?name=quotes.csv", bearer(kToken), kCsv, "text/csv");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  j = json::parse(r->body);
  EXPECT_EQ(j["format"], "generic-csv");
  EXPECT_EQ(j["dry_run"], false);
  EXPECT_EQ(j["rows_read"], 3);
  EXPECT_EQ(j["offers_in_file"], 2);
  EXPECT_EQ(j["offers"]["added"], 2);
  EXPECT_EQ(j["offers"]["updated"], 0);
  EXPECT_EQ(j["offers"]["unchanged"], 0);
  EXPECT_EQ(j["observations"]["added"], 3);
  EXPECT_EQ(j["observations"]["already_known"], 0);
  EXPECT_TRUE(j["rules"].is_array());
  {  // The OpenAPI document describes this response: its keys are the schema's, nothing more.
    auto d = c.Get("/api/openapi.json");
    ASSERT_TRUE(d && d->status == 200);
    const json doc = json::parse(d->body);
    const json responses = doc["paths"]["/api/import"]["post"]["responses"];
    for (const char* status : {"200", "400", "401", "403", "413"}) EXPECT_TRUE(responses.contains(status)) << status;
    const json schema = doc["components"]["schemas"]["ImportResult"];
    std::set<std::string> real, documented;
    for (const auto& [k, v] : j.items()) real.insert(k);
    for (const auto& k : schema["required"]) documented.insert(k.get<std::string>());
    EXPECT_EQ(real, documented);
    for (const auto& [k, v] : schema["properties"].items()) EXPECT_TRUE(j.contains(k)) << k;
  }
  const json after = health(a.port);
  EXPECT_EQ(after["offers"].get<int>(), before["offers"].get<int>() + 2);
  EXPECT_EQ(after["observations"].get<int>(), before["observations"].get<int>() + 3);
  // Both servers see the new offers (their caches key on the data version).
  for (int port : {a.port, b.port}) {
    const json offers = offers_of(port, "e2equotes");
    ASSERT_EQ(offers.size(), 2u) << port;
    std::string ids;
    for (const auto& o : offers) ids += o["id"].get<std::string>() + " ";
    EXPECT_NE(ids.find("e2equotes/h100x8/us-east"), std::string::npos) << ids;
    EXPECT_NE(ids.find("e2equotes/a100x1/us-east"), std::string::npos) << ids;
  }
  // The same file again: nothing new (what `gpuplan import` says of a re-import).
  r = c.Post("/api/import?format=generic-csv", bearer(kToken), kCsv, "text/csv");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  j = json::parse(r->body);
  EXPECT_EQ(j["offers"]["added"], 0);
  EXPECT_EQ(j["offers"]["unchanged"], 2);
  EXPECT_EQ(j["observations"]["added"], 0);
  EXPECT_EQ(j["observations"]["already_known"], 3);
  EXPECT_EQ(health(a.port)["observations"], after["observations"]);

  // The read-only server refuses writes.
  auto cb = client(b.port);
  r = cb.Post("/api/import", bearer(kToken), kCsv, "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(json::parse(r->body)["code"], "read_only");
  EXPECT_EQ(stop_server(a), 0);
  EXPECT_EQ(stop_server(b), 0);
}

TEST_F(ServeWriteE2E, RefusesWithoutTheRightTokenAndWritesNothing) {
  const std::string store = db("refuse");
  Running ro = start_server(store, "");
  ASSERT_GT(ro.port, 0) << ro.first_line;
  const json before = health(ro.port);
  auto c = client(ro.port);
  auto r = c.Post("/api/import", bearer(kToken), kCsv, "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_EQ(json::parse(r->body)["code"], "read_only");
  EXPECT_EQ(health(ro.port), before);
  EXPECT_EQ(stop_server(ro), 0);

  Running rw = start_server(store, kToken);
  ASSERT_GT(rw.port, 0) << rw.first_line;
  auto w = client(rw.port);
  for (const httplib::Headers& h : {httplib::Headers{}, bearer("e2e-write-token-0123456789abcdeX"),
                                    bearer("e2e-write-token-0123456789abcdef-longer"), bearer("short"),
                                    httplib::Headers{{"Authorization", std::string("Basic ") + kToken}}}) {
    r = w.Post("/api/import", h, kCsv, "text/csv");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << r->body;
    EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
    EXPECT_EQ(json::parse(r->body)["code"], "unauthorized");
  }
  // A malformed CSV (line 3: a price that is no number): 400 naming the line, nothing written
  // (line 2 is a good row: all or nothing).
  const std::string bad =
      "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n"
      "e2equotes,h100x8,us-east,H100,8,on-demand,23.92,2026-11-20,https://example.com/quote-1\n"
      "e2equotes,a100x1,us-east,A100-80GB,1,on-demand,cheap,2026-11-21,https://example.com/quote-2\n";
  r = w.Post("/api/import?name=bad.csv", bearer(kToken), bad, "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["code"], "invalid_input");
  EXPECT_EQ(j["field"].get<std::string>().rfind("bad.csv:3", 0), 0u) << r->body;
  EXPECT_NE(j["message"].get<std::string>().find("bad.csv:3"), std::string::npos) << r->body;
  // A code a client can word itself, with the position (a trial: importer errors had none).
  EXPECT_NE(j.value("message_code", ""), "") << r->body;
  if (j.value("message_code", "") == "import_refused") {
    EXPECT_EQ(j["values"]["position"].get<std::string>().rfind("bad.csv:3", 0), 0u) << r->body;
  }
  EXPECT_EQ(health(rw.port), before);
  EXPECT_EQ(offers_of(rw.port, "e2equotes").size(), 0u);
  // An unknown format name and an unknown parameter are 400 on the parameter.
  r = w.Post("/api/import?format=excel", bearer(kToken), kCsv, "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["field"], "/format");
  r = w.Post("/api/import?colour=red", bearer(kToken), kCsv, "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["field"], "/colour");
  EXPECT_EQ(json::parse(r->body)["message_code"], "unknown_field");
  // Every query-parameter error carries its message code and values (a trial of 2026-12-02 found
  // /format, /dry_run and /name with message_code ""), and a parameter given twice is refused
  // (it was silently the last one), each writing nothing.
  struct ParamCase {
    std::string query, field, code, value_name, value;
  };
  for (const ParamCase& k : std::vector<ParamCase>{
           {"format=excel", "/format", "unknown_choice", "value", "excel"},
           {"dry_run=maybe", "/dry_run", "not_boolean", "value", "maybe"},
           {"name=..%2Fetc", "/name", "not_file_name", "value", "../etc"},
           {"dry_run=true&dry_run=false", "/dry_run", "parameter_twice", "name", "dry_run"},
           {"name=a.csv&format=generic-csv&name=b.csv", "/name", "parameter_twice", "name", "name"},
       }) {
    r = w.Post("/api/import?" + k.query, bearer(kToken), kCsv, "text/csv");
    ASSERT_TRUE(r) << k.query;
    EXPECT_EQ(r->status, 400) << k.query << " -> " << r->body;
    j = json::parse(r->body);
    EXPECT_EQ(j["field"], k.field) << k.query << " -> " << r->body;
    EXPECT_EQ(j["message_code"], k.code) << k.query << " -> " << r->body;
    EXPECT_EQ(j["values"].value(k.value_name, ""), k.value) << k.query << " -> " << r->body;
  }
  {  // unknown_choice lists every import format by the names `gpuplan import --format` takes.
    r = w.Post("/api/import?format=excel", bearer(kToken), kCsv, "text/csv");
    ASSERT_TRUE(r);
    const std::string allowed = json::parse(r->body)["values"].value("allowed", "");
    for (const char* f : {"skypilot-vms-csv", "gpuhunt-tpu-pricing-json", "generic-csv", "generic-json"})
      EXPECT_NE(allowed.find(f), std::string::npos) << f << " not in: " << allowed;
  }
  EXPECT_EQ(health(rw.port), before);
  EXPECT_EQ(offers_of(rw.port, "e2equotes").size(), 0u);
  // An empty file: refused with its own code, nothing written.
  r = w.Post("/api/import", bearer(kToken), "", "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["message_code"], "body_empty") << r->body;
  EXPECT_EQ(health(rw.port), before);
  EXPECT_EQ(stop_server(rw), 0);
}

TEST_F(ServeWriteE2E, JsonEndpointsKeepTheirLimitWhileTheImportTakesMore) {
  Running rw = start_server(db("limits"), kToken);
  ASSERT_GT(rw.port, 0) << rw.first_line;
  auto c = client(rw.port);
  const std::string big_json = "{\"model\": \"" + std::string(100 * 1024, 'a') + "\"}";
  for (const char* path : {"/api/size", "/api/plan", "/api/estimate"}) {
    auto r = c.Post(path, big_json, "application/json");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 413) << path << " " << r->body.substr(0, 200);
    EXPECT_EQ(json::parse(r->body)["code"], "payload_too_large");
  }
  // A 100 KiB CSV is taken by the import (its rows are over the JSON limit, not the import's):
  // 1 200 rows of the same quote, one offer, one observation after deduplication.
  std::string csv = "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n";
  while (csv.size() < 100 * 1024)
    csv += "e2equotes,h100x8,us-east,H100,8,on-demand,23.92,2026-11-20,https://example.com/quote-1\n";
  auto r = c.Post("/api/import?dry_run=true", bearer(kToken), csv, "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body.substr(0, 300);
  // Over the import's limit (32 MiB): 413.
  r = c.Post("/api/import?dry_run=true", bearer(kToken), std::string((32u << 20) + 1, 'x'), "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(stop_server(rw), 0);
}

TEST_F(ServeWriteE2E, TokenFileAndShortTokens) {
  // A short token is a startup error (exit 2), from the environment or from the file.
  Running s = start_server(db("token"), "too-short");
  EXPECT_EQ(s.port, 0);
  EXPECT_NE(s.first_line.find("GPUPLAN_WRITE_TOKEN"), std::string::npos) << s.first_line;
  EXPECT_EQ(stop_server(s), 2);
  const fs::path short_file = dir_ / "short-token";
  std::ofstream(short_file) << "abc\n";
  s = start_server(db("token"), "", {"--write-token-file", short_file.string()});
  EXPECT_EQ(s.port, 0);
  EXPECT_NE(s.first_line.find("--write-token-file"), std::string::npos) << s.first_line;
  EXPECT_EQ(stop_server(s), 2);
  // The file's token (its trailing newline trimmed) opens the import; it wins over the environment.
  const fs::path file = dir_ / "token";
  std::ofstream(file) << "file-token-abcdefghijklmnop\n";
  s = start_server(db("token"), kToken, {"--write-token-file", file.string()});
  ASSERT_GT(s.port, 0) << s.first_line;
  auto c = client(s.port);
  auto r = c.Post("/api/import?dry_run=true", bearer("file-token-abcdefghijklmnop"), kCsv, "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = c.Post("/api/import?dry_run=true", bearer(kToken), kCsv, "text/csv");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401) << r->body;
  EXPECT_EQ(stop_server(s), 0);
}

}  // namespace
