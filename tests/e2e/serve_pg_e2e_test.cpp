// End-to-end on PostgreSQL (issue 12): two real `gpuplan serve --db postgresql://...` processes
// on one fresh test database (scripts/with-test-postgres.sh; skipped visibly without it):
//   - /api/health says the store is reachable; both processes answer the same catalog;
//   - an import by a third process (`gpuplan import --db postgresql://...`) is seen by BOTH
//     servers at once (their answers are cached per store revision, not per process), plans
//     included (a plan cached before the import is computed again after it);
//   - every idle server connection killed (pg_terminate_backend): the next requests succeed (the
//     pool replaces a connection the server closed before using it); the database refusing connections: /api/health is 503 "unreachable", and
//     200 again once it accepts them;
//   - POST /api/import on a server with a write token: 401 without or with a wrong token, 403 on
//     a read-only server, 400 for a malformed CSV and 413 over the import limit (nothing written
//     by any of them), then an import the OTHER server process on the same database shows;
//   - a server SIGKILLed inside an import's transaction: nothing of it is in the database, and a
//     new server on it serves the catalog as before;
//   - the database connection of a request in flight dropped (pg_terminate_backend): that
//     request gets a clear 503 JSON error, and the same server answers the next one.
#include <gtest/gtest.h>

#include "serve_process.hpp"
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../catalog/pg_test_db.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using Served = gpuplan::e2e::ServeProcess;

/// `token`: GPUPLAN_WRITE_TOKEN for the server (none when empty: a read-only server).
Served start_server(const std::string& db_url, const fs::path& home, const std::string& token = "") {
  return gpuplan::e2e::start_serve({db_url, home, token, {}, false});
}
void stop_server(Served& s) { gpuplan::e2e::stop_serve(s); }

int run_cli(const std::string& args) {
  const std::string cmd = std::string("'") + GPUPLAN_BINARY + "' " + args + " >/dev/null 2>&1";
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::size_t offer_count(int port, const std::string& q) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  auto r = c.Get("/api/offers?q=" + q + "&limit=0");
  if (!r || r->status != 200) {
    ADD_FAILURE() << "GET /api/offers on port " << port << ": " << (r ? r->status : -1) << " " << (r ? r->body : "");
    return 0;
  }
  return json::parse(r->body).size();  // an array of offers (limit=0: all that match)
}

/// POST /api/plan: (X-Cache header, providers of the plans in rank order).
std::pair<std::string, std::vector<std::string>> plan_providers(int port, const std::string& body) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  auto r = c.Post("/api/plan", body, "application/json");
  if (!r || r->status != 200) {
    ADD_FAILURE() << "POST /api/plan on port " << port << ": " << (r ? r->status : -1) << " " << (r ? r->body.substr(0, 300) : "");
    return {};
  }
  // The parsed body held in a variable: a range-for over json::parse(...)["plans"] iterates a
  // temporary that is already destroyed (no lifetime extension through operator[] before C++23).
  const json answer = json::parse(r->body);
  std::vector<std::string> providers;
  for (const auto& p : answer["plans"]) providers.push_back(p["provider"]);
  return {r->get_header_value("X-Cache"), providers};
}

TEST(ServePgE2E, TwoServersOnOnePostgresAnswerAliveAndAlike) {
  gpuplan::testing::PgTestDb db;
  GPUPLAN_REQUIRE_PG(db);
  const fs::path dir = fs::temp_directory_path() / ("gpuplan-e2e-serve-pg-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Served a = start_server(db.url(), dir);
  Served b = start_server(db.url(), dir);
  ASSERT_GT(a.port, 0);
  ASSERT_GT(b.port, 0);

  httplib::Client ca("127.0.0.1", a.port);
  auto h = ca.Get("/api/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200) << h->body;
  const json health = json::parse(h->body);
  EXPECT_EQ(health.at("store"), "reachable");
  EXPECT_GT(health.at("offers").get<std::size_t>(), 0u);  // seeded once from the bundled catalog

  // The same catalog on both processes; nothing from examplecloud yet (and now cached).
  EXPECT_EQ(offer_count(a.port, ""), offer_count(b.port, ""));
  EXPECT_EQ(offer_count(a.port, "provider%3Dexamplecloud"), 0u);
  EXPECT_EQ(offer_count(b.port, "provider%3Dexamplecloud"), 0u);
  // A plan on that provider: none, and cached on both (the second request is a hit).
  const std::string plan_body =
      R"({"model": "llama-3.1-8b", "task": "lora", "tokens": 1e8, "filter": "provider=examplecloud", "today": "2026-11-30"})";
  for (int port : {a.port, b.port}) {
    EXPECT_EQ(plan_providers(port, plan_body), std::make_pair(std::string("miss"), std::vector<std::string>{})) << port;
    EXPECT_EQ(plan_providers(port, plan_body), std::make_pair(std::string("hit"), std::vector<std::string>{})) << port;
  }

  // A third process imports 3 offers; both servers see them on their next request.
  const fs::path csv = dir / "three.csv";
  {
    std::ofstream out(csv);
    out << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source\n";
    for (int i = 0; i < 3; ++i)
      out << "examplecloud,h100-e2e" << i << ",us-west,H100 SXM,8,on-demand,2.5,2026-11-02,e2e test input\n";
  }
  ASSERT_EQ(run_cli("--db '" + db.url() + "' import '" + csv.string() + "'"), 0);
  EXPECT_EQ(offer_count(a.port, "provider%3Dexamplecloud"), 3u);
  EXPECT_EQ(offer_count(b.port, "provider%3Dexamplecloud"), 3u);
  // The cached plans are not served again: the store revision in the key moved for both processes.
  for (int port : {a.port, b.port}) {
    const auto [cache, providers] = plan_providers(port, plan_body);
    EXPECT_EQ(cache, "miss") << port;
    EXPECT_FALSE(providers.empty()) << port;  // EXPECT: an ASSERT here would leave both servers running
    if (!providers.empty()) {
      EXPECT_EQ(providers[0], "examplecloud") << port;
    }
  }

  // Every connection of the servers killed: the next requests still succeed.
  {
    pqxx::connection admin(db.admin());
    pqxx::nontransaction t(admin);
    const auto killed = t.exec_params(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        db.name());
    EXPECT_GE(killed.size(), 2u);  // at least one pooled connection per server
    for (int i = 0; i < 500; ++i) {  // until the killed backends are gone (≤ 5 s)
      const auto left = t.exec_params1(
          "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", db.name());
      if (left[0].as<int>() == 0) break;
      ::usleep(10000);
    }
    // A backend leaves pg_stat_activity just before its process exits and closes the socket:
    // give the closes time to arrive, so the servers' connections are dead BEFORE the requests
    // (a connection dropped during a query is a clear error instead: store_pg_test).
    ::usleep(300000);
  }
  EXPECT_EQ(offer_count(a.port, "provider%3Dexamplecloud"), 3u);
  EXPECT_EQ(offer_count(b.port, "provider%3Dexamplecloud"), 3u);

  // The database refuses connections: health is 503 "unreachable"; then it recovers.
  {
    pqxx::connection admin(db.admin());
    pqxx::nontransaction t(admin);
    t.exec("ALTER DATABASE " + t.quote_name(db.name()) + " ALLOW_CONNECTIONS false");
    t.exec_params("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", db.name());
  }
  h = ca.Get("/api/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 503) << h->body;
  EXPECT_EQ(json::parse(h->body).at("store"), "unreachable");
  {
    pqxx::connection admin(db.admin());
    pqxx::nontransaction t(admin);
    t.exec("ALTER DATABASE " + t.quote_name(db.name()) + " ALLOW_CONNECTIONS true");
  }
  h = ca.Get("/api/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200) << h->body;

  stop_server(a);
  stop_server(b);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// POST /api/import against PostgreSQL (issue 10 leftover; the SQLite version is
// serve_write_e2e_test.cpp). Counts are from the CSV text below, written by hand.
TEST(ServePgE2E, ImportThroughTheApiIsSeenByAnotherServerOnTheSameDatabase) {
  gpuplan::testing::PgTestDb db;
  GPUPLAN_REQUIRE_PG(db);
  const fs::path dir = fs::temp_directory_path() / ("gpuplan-e2e-serve-pg-import-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string token = "pg-e2e-write-token-0123456789abcdef";
  Served writer = start_server(db.url(), dir, token);
  Served reader = start_server(db.url(), dir);  // read-only, same database
  ASSERT_GT(writer.port, 0);
  ASSERT_GT(reader.port, 0);
  // Two offers: h100x8 quoted on-demand and spot (two observations), a100x1 on-demand.
  const std::string csv =
      "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n"
      "pge2equotes,h100x8,us-east,H100,8,on-demand,23.92,2026-11-20,https://example.com/quote-1\n"
      "pge2equotes,h100x8,us-east,H100,8,spot,12.00,2026-11-20,https://example.com/quote-1\n"
      "pge2equotes,a100x1,us-east,A100-80GB,1,on-demand,1.79,2026-11-21,https://example.com/quote-2\n";
  auto bearer = [](const std::string& t) { return httplib::Headers{{"Authorization", "Bearer " + t}}; };
  auto health = [](int port) {
    httplib::Client c("127.0.0.1", port);
    auto r = c.Get("/api/health");
    EXPECT_TRUE(r && r->status == 200);
    return r ? json::parse(r->body) : json();
  };
  const json before = health(writer.port);
  EXPECT_EQ(offer_count(reader.port, "provider%3Dpge2equotes"), 0u);  // and now cached by the reader

  httplib::Client w("127.0.0.1", writer.port);
  w.set_read_timeout(60, 0);
  // 401: no token, a wrong one, another scheme.
  for (const httplib::Headers& h : {httplib::Headers{}, bearer(token + "x"), httplib::Headers{{"Authorization", "Basic " + token}}}) {
    auto r = w.Post("/api/import", h, csv, "text/csv");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << r->body;
    EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
  }
  // 403: the read-only server, even with the token.
  {
    httplib::Client ro("127.0.0.1", reader.port);
    auto r = ro.Post("/api/import", bearer(token), csv, "text/csv");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << r->body;
    EXPECT_EQ(json::parse(r->body)["code"], "read_only");
  }
  // 400: line 3 has a price that is no number; line 2 is good, and is not written either.
  {
    const std::string bad =
        "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n"
        "pge2equotes,h100x8,us-east,H100,8,on-demand,23.92,2026-11-20,https://example.com/quote-1\n"
        "pge2equotes,a100x1,us-east,A100-80GB,1,on-demand,cheap,2026-11-21,https://example.com/quote-2\n";
    auto r = w.Post("/api/import?name=bad.csv", bearer(token), bad, "text/csv");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_EQ(json::parse(r->body)["field"].get<std::string>().rfind("bad.csv:3", 0), 0u) << r->body;
  }
  // 413: over the import's 32 MiB limit.
  {
    auto r = w.Post("/api/import", bearer(token), std::string((32u << 20) + 1, 'x'), "text/csv");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 413);
  }
  EXPECT_EQ(health(writer.port), before);  // nothing written by the refused requests
  EXPECT_EQ(offer_count(reader.port, "provider%3Dpge2equotes"), 0u);

  // The import: 2 offers, 3 observations, visible to the other process at once.
  auto r = w.Post("/api/import?name=quotes.csv", bearer(token), csv, "text/csv");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = json::parse(r->body);
  EXPECT_EQ(j["format"], "generic-csv");
  EXPECT_EQ(j["offers"]["added"], 2);
  EXPECT_EQ(j["observations"]["added"], 3);
  const json after = health(reader.port);
  EXPECT_EQ(after["offers"].get<int>(), before["offers"].get<int>() + 2);
  EXPECT_EQ(after["observations"].get<int>(), before["observations"].get<int>() + 3);
  EXPECT_EQ(offer_count(reader.port, "provider%3Dpge2equotes"), 2u);
  EXPECT_EQ(offer_count(writer.port, "provider%3Dpge2equotes"), 2u);
  {  // The spot quote is there too (on the reader).
    httplib::Client ro("127.0.0.1", reader.port);
    auto s = ro.Get("/api/offers?q=provider%3Dpge2equotes%20gpus%3E%3D8&spot=true&limit=0&today=2026-12-01");
    ASSERT_TRUE(s && s->status == 200) << (s ? s->body : "");
    const json offers = json::parse(s->body);
    ASSERT_EQ(offers.size(), 1u) << s->body.substr(0, 300);
    EXPECT_EQ(offers[0]["id"], "pge2equotes/h100x8/us-east");
  }
  stop_server(writer);
  stop_server(reader);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

std::size_t pg_scalar(const std::string& url, const std::string& sql) {
  pqxx::connection c(url);
  pqxx::nontransaction t(c);
  return t.exec(sql)[0][0].as<std::size_t>();
}

/// Whether a transaction holds the stores' write lock (pg_advisory_xact_lock(1, 2), pg_store.cpp
/// lock_writes) on the test database.
bool write_lock_held(const gpuplan::testing::PgTestDb& db) {
  return pg_scalar(db.admin(), "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                               "WHERE l.locktype = 'advisory' AND l.objid = 2 AND d.datname = '" +
                                   db.name() + "'") > 0;
}

TEST(ServePgE2E, AServerKilledInsideAnImportLeavesNothingOfIt) {
  gpuplan::testing::PgTestDb db;
  GPUPLAN_REQUIRE_PG(db);
  const fs::path dir = fs::temp_directory_path() / ("gpuplan-e2e-serve-pg-kill-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string token = "pg-e2e-kill-token-0123456789abcdef";
  Served writer = start_server(db.url(), dir, token);
  ASSERT_GT(writer.port, 0) << writer.first_line;
  const std::size_t offers_before = pg_scalar(db.url(), "SELECT count(*) FROM offers");
  const std::size_t observations_before = pg_scalar(db.url(), "SELECT count(*) FROM observations");
  ASSERT_GT(offers_before, 0u);  // the server seeded the bundled catalog

  // 20,000 distinct offers: one transaction long enough to be inside when the server dies.
  std::string csv = "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n";
  for (int i = 0; i < 20000; ++i)
    csv += "pge2ekill,h100x8-" + std::to_string(i) + ",us-east,H100,8,on-demand,23.92,2026-11-20,https://example.com/q\n";
  std::thread post([&] {
    httplib::Client w("127.0.0.1", writer.port);
    w.set_read_timeout(120, 0);
    w.Post("/api/import?name=big.csv", httplib::Headers{{"Authorization", "Bearer " + token}}, csv, "text/csv");
  });
  bool inside = false;
  for (int i = 0; i < 1200 && !inside; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    inside = write_lock_held(db);
  }
  ASSERT_TRUE(inside) << "the import never took the write lock";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(::kill(writer.pid, SIGKILL), 0);
  int status = 0;
  ::waitpid(writer.pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  writer.pid = -1;
  stop_server(writer);
  post.join();
  // PostgreSQL rolls the transaction back when the socket closes.
  for (int i = 0; i < 400 && write_lock_held(db); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_EQ(pg_scalar(db.url(), "SELECT count(*) FROM offers WHERE provider = 'pge2ekill'"), 0u);
  EXPECT_EQ(pg_scalar(db.url(), "SELECT count(*) FROM offers"), offers_before);
  EXPECT_EQ(pg_scalar(db.url(), "SELECT count(*) FROM observations"), observations_before);

  Served next = start_server(db.url(), dir);
  ASSERT_GT(next.port, 0) << next.first_line;
  EXPECT_EQ(offer_count(next.port, "provider%3Dpge2ekill"), 0u);
  stop_server(next);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(ServePgE2E, AConnectionDroppedMidRequestIsA503AndTheServerKeepsServing) {
  gpuplan::testing::PgTestDb db;
  GPUPLAN_REQUIRE_PG(db);
  const fs::path dir = fs::temp_directory_path() / ("gpuplan-e2e-serve-pg-drop-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Served server = start_server(db.url(), dir);
  ASSERT_GT(server.port, 0) << server.first_line;
  // Hold a lock every catalog read needs, so the server's query waits on the database; then
  // terminate the waiting backend.
  pqxx::connection admin(db.url());
  pqxx::work lock(admin);
  lock.exec("LOCK TABLE offers IN ACCESS EXCLUSIVE MODE");
  int dropped_status = -1;
  std::string dropped_body;
  std::thread get([&] {
    httplib::Client c("127.0.0.1", server.port);
    c.set_read_timeout(60, 0);
    auto r = c.Get("/api/offers?q=gpu%3DH100%20gpus%3E%3D8&limit=5");  // not asked before: not cached
    if (r) {
      dropped_status = r->status;
      dropped_body = r->body;
    }
  });
  bool waiting = false;
  for (int i = 0; i < 1000 && !waiting; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    waiting = pg_scalar(db.admin(), "SELECT count(*) FROM pg_stat_activity WHERE datname = '" + db.name() +
                                        "' AND wait_event_type = 'Lock'") > 0;
  }
  ASSERT_TRUE(waiting) << "the request never waited on the database";
  pg_scalar(db.admin(), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '" + db.name() +
                            "' AND wait_event_type = 'Lock'");
  get.join();
  lock.abort();
  EXPECT_EQ(dropped_status, 503) << dropped_body;
  const json err = json::parse(dropped_body, nullptr, false);
  ASSERT_TRUE(err.is_object()) << dropped_body;
  EXPECT_EQ(err["code"], "unavailable") << dropped_body;
  EXPECT_EQ(dropped_body.find(".cpp"), std::string::npos) << dropped_body;  // no internal paths
  // The same server, the same request: answered on a new connection.
  EXPECT_GT(offer_count(server.port, "gpu%3DH100%20gpus%3E%3D8"), 0u);
  stop_server(server);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// `gpuplan serve --refresh-every` on PostgreSQL (issue 9): the store passes the write check
// (a PostgreSQL write_refusal once read transaction_read_only inside its own READ ONLY
// transaction and refused every PostgreSQL store), the scheduled fetch writes through its own
// connection, and the server answers from it (the revision moved) with no restart. The source is
// a loopback SkyPilot vms.csv (its layout, an invented price, a region no bundled row uses).
TEST(ServePgE2E, ScheduledRefreshWritesToPostgresAndIsServed) {
  gpuplan::testing::PgTestDb db;
  GPUPLAN_REQUIRE_PG(db);
  const fs::path dir = fs::temp_directory_path() / ("gpuplan-e2e-serve-pg-refresh-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  httplib::Server source;
  source.Get("/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv",
             [](const httplib::Request&, httplib::Response& res) {
               res.set_content("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,GpuInfo\n"
                               "gpu_1x_a10,A10,1.0,30.0,200.0,0.63,,zz-pg-1,\"{'Gpus': [{'Name': 'A10', 'Manufacturer': "
                               "'NVIDIA', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 24576}}], 'TotalGpuMemoryInMiB': 24576}\"\n",
                               "text/csv");
             });
  const int source_port = source.bind_to_any_port("127.0.0.1");
  std::thread source_thread([&] { source.listen_after_bind(); });
  while (!source.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Served s = gpuplan::e2e::start_serve(
      {db.url(), dir, "", {"--refresh-every", "2s", "--refresh-min-interval", "1s", "--refresh-sources",
                           "skypilot/lambda", "--base-url", "http://127.0.0.1:" + std::to_string(source_port)},
       true});
  ASSERT_GT(s.port, 0) << s.first_line;
  httplib::Client c("127.0.0.1", s.port);
  c.set_read_timeout(30, 0);
  double price = -1;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (price != 0.63 && std::chrono::steady_clock::now() < until) {
    auto r = c.Get("/api/offers?q=region%3Dzz-pg-1&limit=10");
    if (r && r->status == 200) {
      const json j = json::parse(r->body, nullptr, false);
      for (const json& o : j)
        if (o.value("id", "") == "lambda/gpu_1x_a10/zz-pg-1") price = o.value("usd_per_hour", -1.0);
    }
    if (price != 0.63) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(price, 0.63);
  stop_server(s);
  source.stop();
  source_thread.join();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
