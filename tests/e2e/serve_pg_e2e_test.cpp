// End-to-end on PostgreSQL (issue 12): two real `gpuplan serve --db postgresql://...` processes
// on one fresh test database (scripts/with-test-postgres.sh; skipped visibly without it):
//   - /api/health says the store is reachable; both processes answer the same catalog;
//   - an import by a third process (`gpuplan import --db postgresql://...`) is seen by BOTH
//     servers at once (their answers are cached per store revision, not per process);
//   - every idle server connection killed (pg_terminate_backend): the next requests succeed (the
//     pool replaces a connection the server closed before using it); the database refusing connections: /api/health is 503 "unreachable", and
//     200 again once it accepts them.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <string>

#include "../catalog/pg_test_db.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Served {
  pid_t pid = -1;
  int port = 0;
  FILE* out = nullptr;
};

Served start_server(const std::string& db_url, const fs::path& home) {
  Served s;
  int out_pipe[2];
  if (::pipe(out_pipe) != 0) return s;
  s.pid = ::fork();
  if (s.pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::close(out_pipe[0]);
    ::setenv("XDG_DATA_HOME", home.c_str(), 1);
    ::execl(GPUPLAN_BINARY, GPUPLAN_BINARY, "--db", db_url.c_str(), "serve", "--listen", "127.0.0.1:0", "--threads",
            "4", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  s.out = ::fdopen(out_pipe[0], "r");
  std::array<char, 512> line{};
  if (std::fgets(line.data(), line.size(), s.out) == nullptr) return s;
  const std::string text(line.data());
  s.port = std::atoi(text.substr(text.rfind(':') + 1).c_str());
  return s;
}

void stop_server(Served& s) {
  if (s.pid > 0) {
    ::kill(s.pid, SIGTERM);
    int status = 0;
    ::waitpid(s.pid, &status, 0);
  }
  if (s.out) std::fclose(s.out);
}

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

}  // namespace
