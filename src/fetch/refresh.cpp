#include "fetch/refresh.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <exception>
#include <string_view>

#include "fetch/source.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

/// Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ" (UTC); nullopt when unreadable.
std::optional<double> iso_epoch_seconds(std::string_view iso) {
  std::tm tm{};
  if (iso.size() < 19 || iso[4] != '-' || iso[7] != '-' || iso[10] != 'T') return std::nullopt;
  auto num = [&](std::size_t at, std::size_t n) { return std::atoi(std::string(iso.substr(at, n)).c_str()); };
  tm.tm_year = num(0, 4) - 1900;
  tm.tm_mon = num(5, 2) - 1;
  tm.tm_mday = num(8, 2);
  tm.tm_hour = num(11, 2);
  tm.tm_min = num(14, 2);
  tm.tm_sec = num(17, 2);
  return static_cast<double>(timegm(&tm));
}

}  // namespace

void validate_refresh_interval(double interval_s, double min_interval_s, const std::string& flag) {
  if (!std::isfinite(interval_s) || interval_s < min_interval_s)
    throw Error(ErrorKind::invalid_input, flag,
                fmt::format("refresh interval of {:g} s is shorter than the minimum of {:g} s", interval_s,
                            min_interval_s),
                "a duration of at least 1 minute, such as 30m, 6h or 1d");
}

double validated_frozen_after_days(double days, const std::string& flag) {
  if (!(days >= 0) || !std::isfinite(days))
    throw Error(ErrorKind::invalid_input, flag, "days must not be negative", "days >= 0, such as 3 or 30");
  return days;
}

double first_refresh_delay_s(OfferStore& store, double interval_s, double now_epoch_s) {
  const std::vector<SnapshotRecord> newest = store.snapshots("", 1);
  if (newest.empty()) return 0;
  const std::optional<double> at = iso_epoch_seconds(newest.front().fetched_at);
  if (!at) return 0;
  const double age = now_epoch_s - *at;
  if (age < 0) return interval_s;  // a clock behind the store's: wait a full interval
  return age >= interval_s ? 0 : interval_s - age;
}

std::vector<std::string> keyless_source_names() {
  std::vector<std::string> out;
  for (const auto& s : all_sources())
    if (s->info().key_env.empty()) out.push_back(s->info().name);
  return out;
}

PeriodicRunner::PeriodicRunner(double interval_s, double first_delay_s, std::function<void()> job,
                               std::function<void(const std::string&)> on_error, StopFlag& stop)
    : interval_s_(interval_s), first_delay_s_(first_delay_s), job_(std::move(job)), on_error_(std::move(on_error)),
      stop_(stop) {
  thread_ = std::thread([this] { loop(); });
}

PeriodicRunner::~PeriodicRunner() { stop(); }

void PeriodicRunner::stop() {
  stop_.request();
  if (thread_.joinable()) thread_.join();
}

std::size_t PeriodicRunner::runs_started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

void PeriodicRunner::loop() {
  using clock = std::chrono::steady_clock;
  if (stop_.wait_for(first_delay_s_)) return;
  for (;;) {
    const clock::time_point started = clock::now();
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++runs_;
    }
    try {
      job_();
    } catch (const std::exception& e) {
      on_error_(e.what());
    } catch (...) {
      on_error_("unknown error");
    }
    const double took = std::chrono::duration<double>(clock::now() - started).count();
    if (stop_.wait_for(interval_s_ - took)) return;
  }
}

}  // namespace gpuplan::fetch
