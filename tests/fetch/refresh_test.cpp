// The scheduled refresh's pieces (fetch/refresh.hpp): the interval floor, the first run's delay
// from the store's newest snapshot, the runner (never two runs at once, errors do not end the
// schedule, stop is prompt) and the stop flag cutting a transfer and a backoff wait short.
#include "fetch/refresh.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "catalog/sqlite_store.hpp"
#include "fetch/fetch.hpp"
#include "fixture_server.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

using testing::FixtureServer;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

TEST(RefreshInterval, BelowTheFloorIsRefusedNamingTheFlag) {
  EXPECT_NO_THROW(validate_refresh_interval(60, kMinRefreshIntervalSeconds, "--refresh-every"));
  EXPECT_NO_THROW(validate_refresh_interval(6 * 3600, kMinRefreshIntervalSeconds, "--refresh-every"));
  try {
    validate_refresh_interval(59, kMinRefreshIntervalSeconds, "--refresh-every");
    FAIL() << "59 s accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_EQ(e.where(), "--refresh-every");
    EXPECT_NE(e.message().find("minimum of 60 s"), std::string::npos) << e.what();
  }
}

TEST(RefreshSchedule, FirstRunOneIntervalAfterTheNewestSnapshot) {
  SqliteOfferStore store(":memory:");
  // 2026-12-01T06:00:00Z = 1796104800 s since the epoch (`date -u -d 2026-12-01T06:00:00Z +%s`).
  const double t = 1796104800.0;
  EXPECT_EQ(first_refresh_delay_s(store, 3600, t), 0.0);  // no snapshot: at once
  SnapshotRecord r;
  r.source = "skypilot/lambda";
  r.url = "http://127.0.0.1/x";
  r.urls = {r.url};
  r.fetched_at = "2026-12-01T06:00:00Z";
  r.content_hash = "none";
  r.status = "rejected";
  r.detail = "test";
  store.commit_snapshot(r, nullptr);
  EXPECT_DOUBLE_EQ(first_refresh_delay_s(store, 3600, t + 600), 3000.0);  // 10 min old: 50 min to go
  EXPECT_DOUBLE_EQ(first_refresh_delay_s(store, 3600, t + 7200), 0.0);    // older than the interval
  EXPECT_DOUBLE_EQ(first_refresh_delay_s(store, 3600, t - 60), 3600.0);   // clock behind the store's
}

TEST(PeriodicRunner, RunsRepeatedlyNeverTwoAtOnceAndSurvivesErrors) {
  StopFlag stop;
  std::atomic<int> running{0}, overlaps{0}, runs{0}, errors{0};
  {
    PeriodicRunner runner(
        0.01, 0,
        [&] {
          if (running.fetch_add(1) != 0) ++overlaps;
          std::this_thread::sleep_for(std::chrono::milliseconds(30));  // longer than the interval
          running.fetch_sub(1);
          if (runs.fetch_add(1) % 2 == 0) throw Error(ErrorKind::unavailable, "test", "every other run fails");
        },
        [&](const std::string&) { ++errors; }, stop);
    const auto t0 = clock_type::now();
    while (runs.load() < 5 && seconds_since(t0) < 10) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    runner.stop();
    EXPECT_GE(runner.runs_started(), 5u);
  }
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_GE(errors.load(), 2);
}

TEST(PeriodicRunner, StopEndsTheWaitAtOnce) {
  StopFlag stop;
  std::atomic<int> runs{0};
  PeriodicRunner runner(3600, 3600, [&] { ++runs; }, [](const std::string&) {}, stop);
  const auto t0 = clock_type::now();
  runner.stop();
  EXPECT_LT(seconds_since(t0), 1.0);
  EXPECT_EQ(runs.load(), 0);
}

TEST(StopFlag, AbortsATransferInFlightAndEndsBackoffWaits) {
  FixtureServer s;
  s.server().Get("/slow", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    res.set_content("late", "text/plain");
  });
  const std::string base = s.start();
  StopFlag stop;
  TransportOptions o;
  o.timeout_s = 30;
  o.stop = &stop;
  CurlTransport transport(o);
  StoppableSleeper sleeper(stop);
  HttpClient http(transport, sleeper, RetryPolicy{}, &stop);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.request();
  });
  const auto t0 = clock_type::now();
  try {
    http.get(base + "/slow");
    ADD_FAILURE() << "expected the transfer to be cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unavailable);
    EXPECT_NE(e.message().find("cancelled"), std::string::npos) << e.what();
  }
  stopper.join();
  EXPECT_LT(seconds_since(t0), 2.5);  // not the server's 3 s, not curl's 30 s, no retries
  EXPECT_EQ(http.attempts(), 1u);
  const auto t1 = clock_type::now();
  sleeper.sleep(60);
  EXPECT_LT(seconds_since(t1), 0.5);
}

}  // namespace
}  // namespace gpuplan::fetch
