#pragma once
/// Fetch layer, scheduling: what `gpuplan serve --refresh-every DURATION` runs besides serving
/// (docs/fetch.md "Scheduling"). The fetch itself is run_fetch (fetch.hpp), the same function
/// `gpuplan fetch` calls; this file only decides when.
///
///  - One background thread runs the job, then waits, then runs it again: a run never overlaps
///    the previous one (a run longer than the interval is followed at once by the next).
///  - The first run comes one interval after the store's newest snapshot (at once when the
///    store has none, or it is older), so a server restarted more often than the interval still
///    refreshes, and a restart right after a run does not fetch again.
///  - stop() requests the shared StopFlag (transfers in flight abort, backoff waits end) and
///    joins the thread.
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "catalog/store.hpp"
#include "fetch/http.hpp"

namespace gpuplan::fetch {

/// Shortest interval `--refresh-every` accepts in production: one minute. Price feeds change at
/// most hourly (gpuhunt publishes hourly, SkyPilot every 7 hours); a shorter schedule only loads
/// the providers' servers.
inline constexpr double kMinRefreshIntervalSeconds = 60;

/// Throws Error{invalid_input} at `flag` when `interval_s` is below `min_interval_s` (or not
/// finite), naming both.
void validate_refresh_interval(double interval_s, double min_interval_s, const std::string& flag);

/// --frozen-after-days of `fetch` and `serve`: finite and >= 0 days, else Error invalid_input on
/// `flag`. Returns it as the GateLimits override.
double validated_frozen_after_days(double days, const std::string& flag);

/// Seconds to wait before the first run: interval − (now − fetched_at of the store's newest
/// snapshot, any source and status), clamped to [0, interval]; 0 when the store has no
/// snapshot. `now_epoch_s`: seconds since the epoch (UTC).
double first_refresh_delay_s(OfferStore& store, double interval_s, double now_epoch_s);

/// The sources a scheduled refresh fetches by default: every keyless source (a keyed source runs
/// only when named, so a refresh does not log "skipped: needs KEY" on every run).
std::vector<std::string> keyless_source_names();

/// Runs `job` on its own thread: first after `first_delay_s`, then every `interval_s` measured
/// from the start of the previous run (at once after a run that took longer). An exception from
/// the job is passed to `on_error` (what()) and the schedule goes on. Never two runs at once.
class PeriodicRunner {
 public:
  PeriodicRunner(double interval_s, double first_delay_s, std::function<void()> job,
                 std::function<void(const std::string&)> on_error, StopFlag& stop);
  ~PeriodicRunner();
  PeriodicRunner(const PeriodicRunner&) = delete;
  PeriodicRunner& operator=(const PeriodicRunner&) = delete;
  /// Requests the stop flag and waits for the thread (a run in progress ends at its next
  /// cancellation point: a transfer aborts within about a second).
  void stop();
  /// Runs started so far.
  std::size_t runs_started() const;

 private:
  void loop();
  double interval_s_;
  double first_delay_s_;
  std::function<void()> job_;
  std::function<void(const std::string&)> on_error_;
  StopFlag& stop_;
  mutable std::mutex mu_;
  std::size_t runs_ = 0;
  std::thread thread_;
};

}  // namespace gpuplan::fetch
