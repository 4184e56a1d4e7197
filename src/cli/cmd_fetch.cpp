// `gpuplan fetch [SOURCE...] [--dry-run] [--base-url URL] [--list]`: refreshes the offer store
// from live price sources (src/fetch/, docs/fetch.md). Each source is one snapshot, gated and
// written in its own transaction; a failed source does not stop the others. Prints one row per
// source; exit status 1 when a source failed or was rejected (0 otherwise).
#include <fmt/core.h>

#include <cctype>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "catalog/open_store.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "fetch/fetch.hpp"
#include "fetch/http.hpp"
#include "fetch/refresh.hpp"
#include "util/calendar.hpp"
#include "util/error.hpp"

namespace gpuplan::cli {
namespace {

struct FetchCliOptions {
  std::vector<std::string> sources;
  bool dry_run = false;
  bool list = false;
  std::string base_url;
  bool base_url_given = false;  ///< --base-url on the command line ("" is refused, not "no base URL")
  double timeout_s = 120;
  bool timeout_given = false;  ///< --timeout on the command line: it caps the AWS price list's 1800 s too
  int retries = 4;
  fetch::GateLimits gates;
  double frozen_after_days = 0;    ///< --frozen-after-days as typed (used when frozen_given)
  bool frozen_given = false;       ///< absent: each source's own limit (docs/fetch.md "Frozen feeds")
  std::size_t show_changes = 20;
  /// Tests only (hidden, as serve's --refresh-min-interval): the snapshot's fetch time
  /// "YYYY-MM-DDTHH:MM:SSZ" instead of the system clock, so a test can fetch "on day 40" and see
  /// ages move. Not after the system clock, not before 2000-01-01.
  std::string fetched_at;
};

// A price no gate would pass (1e308) in 4 significant digits, not its 309 (trial48 #9).
std::string money(std::optional<double> v) {
  if (!v) return "unknown";
  return std::abs(*v) < 1e9 ? fmt::format("{:.4f}", *v) : fmt::format("{:.4g}", *v);
}

void list_sources() {
  TextTable t;
  t.header = {"SOURCE", "KEY", "FROZEN AFTER", "DESCRIPTION"};
  for (const auto& s : fetch::all_sources()) {
    std::string keys;
    for (const auto& k : s->info().key_env) keys += (keys.empty() ? "" : ",") + k;
    t.rows.push_back({s->info().name, keys.empty() ? "-" : keys, fmt::format("{:g} days", s->info().frozen_after_days),
                      s->info().description});
  }
  fmt::print("{}", t.render());
}

/// The most a fetch waits for one request (a day: the AWS price list needs 1800 s at most) and the
/// most attempts per request (with back-off a few minutes at worst).
constexpr double kMaxFetchTimeoutSeconds = 86400;
constexpr int kMaxFetchRetries = 20;

void run_fetch_cmd(const FetchCliOptions& opts, GlobalOptions& global) {
  if (opts.list) {
    list_sources();
    return;
  }
  // Given (even as ""): scheme http/https, host and optional port only (check_base_url).
  if (opts.base_url_given) fetch::check_base_url(opts.base_url);
  if (!(opts.timeout_s > 0)) throw_invalid("--timeout", "timeout must be positive", "seconds > 0");
  // Upper bounds: a request that may wait a day, or a million attempts with back-off, is a hang,
  // not a fetch (`--retries 1000000` against a refused port ran on with no end).
  if (opts.timeout_s > kMaxFetchTimeoutSeconds)
    throw_invalid_coded("--timeout", "number_out_of_range", {{"value", fmt::format("{}", opts.timeout_s)}, {"range", "(0, 86400]"}},
                        fmt::format("{} is out of range", opts.timeout_s), "seconds in (0, 86400]");
  if (opts.retries < 1) throw_invalid("--retries", "attempts must be at least 1", "an integer >= 1");
  if (opts.retries > kMaxFetchRetries)
    throw_invalid_coded("--retries", "integer_out_of_range",
                        {{"value", std::to_string(opts.retries)}, {"min", "1"}, {"max", std::to_string(kMaxFetchRetries)}},
                        fmt::format("{} is out of range", opts.retries), fmt::format("an integer in [1, {}]", kMaxFetchRetries));
  fetch::GateLimits g = opts.gates;
  if (!(g.max_row_drop_fraction >= 0 && g.max_row_drop_fraction <= 1))
    throw_invalid("--max-row-drop", "fraction outside 0..1", "a fraction such as 0.5");
  if (!(g.price_move_factor > 1)) throw_invalid("--price-move-factor", "factor must exceed 1", "a factor such as 3");
  if (opts.frozen_given) g.frozen_after_days = fetch::validated_frozen_after_days(opts.frozen_after_days, "--frozen-after-days");
  fetch::TransportOptions topts;
  topts.timeout_s = opts.timeout_s;
  topts.timeout_caps_every_request = opts.timeout_given;
  fetch::CurlTransport transport(topts);
  fetch::RealSleeper sleeper;
  fetch::RetryPolicy retry;
  retry.max_attempts = opts.retries;
  fetch::HttpClient http(transport, sleeper, retry);
  fetch::FetchOptions fo;
  fo.sources = opts.sources;
  fo.dry_run = opts.dry_run;
  fo.base_url = opts.base_url;
  fo.gates = g;
  fo.gpus = &gpu_catalog(global);
  if (!opts.fetched_at.empty()) {
    const std::string& f = opts.fetched_at;
    const bool shape = f.size() == 20 && f[4] == '-' && f[7] == '-' && f[10] == 'T' && f[13] == ':' && f[16] == ':' &&
                       f[19] == 'Z' && date_prefix_days_since_epoch(f).has_value() && [&] {
                         // hh < 24, mm < 60, ss < 60 (trial9e: 25:61:99 was stored as observed_at)
                         auto two = [&](std::size_t at) {
                           return std::isdigit(static_cast<unsigned char>(f[at])) &&
                                          std::isdigit(static_cast<unsigned char>(f[at + 1]))
                                      ? (f[at] - '0') * 10 + (f[at + 1] - '0')
                                      : 99;
                         };
                         return two(11) < 24 && two(14) < 60 && two(17) < 60;
                       }();
    if (!shape || before_earliest_date(f) || f > fetch::utc_now_iso())
      throw_invalid("--fetched-at", "not a UTC time from 2000-01-01 to now", "YYYY-MM-DDTHH:MM:SSZ");
    fo.fetched_at = f;
  }
  auto store = open_store(global.db_path, StoreContext{gpu_catalog(global), SystemClock()});
  const fetch::FetchReport report = fetch::run_fetch(*store, http, fo);
  if (report.sources.empty()) {
    fmt::print("nothing to fetch\n");
    return;
  }
  TextTable t;
  t.header = {"SOURCE", "STATUS", "ROWS", "OFFERS", "ADDED", "UPDATED", "OBSERVATIONS", "SEEN AGAIN", "DETAIL"};
  t.right_align = {false, false, true, true, true, true, true, true, false};
  for (const auto& o : report.sources) {
    t.rows.push_back({o.source, o.status, std::to_string(o.snapshot.rows_read), std::to_string(o.snapshot.offers),
                      std::to_string(o.changes.offers_added), std::to_string(o.changes.offers_updated),
                      std::to_string(o.changes.observations_added), std::to_string(o.changes.prices_seen_again),
                      o.message});
  }
  if (opts.dry_run) fmt::print("dry run: nothing written\n");
  fmt::print("{}", t.render());
  for (const auto& o : report.sources) {
    for (const auto& w : o.warnings) fmt::print("{}: warning: {}\n", o.source, w);
    for (const std::string& line : fetch::skipped_rows_report(o))
      fmt::print("{}{}\n", line.rfind("  ", 0) == 0 ? "" : o.source + ": ", line);
    if (opts.dry_run && !o.price_changes.empty()) {
      // A snapshot the gates refused changes nothing, even on a real run (trial48 #9: "1 price would
      // change" was printed under a rejected status): its changes are listed as what it held.
      const bool accepted = o.status == "accepted";
      fmt::print("{}: {} price{} {}{}\n", o.source, o.price_changes.size(), o.price_changes.size() == 1 ? "" : "s",
                 accepted ? "would change" : fmt::format("in the {} snapshot (nothing would change)", o.status),
                 o.price_changes.size() > opts.show_changes ? fmt::format(" (first {})", opts.show_changes) : "");
      for (std::size_t i = 0; i < o.price_changes.size() && i < opts.show_changes; ++i) {
        const auto& c = o.price_changes[i];
        fmt::print("  {} {}: {} -> {} USD/h\n", c.offer_id, price_kind_name(c.kind), money(c.old_usd_per_hour),
                   money(c.new_usd_per_hour));
      }
    }
  }
  if (report.any_failed()) global.exit_code = 1;
}

GPUPLAN_REGISTER_COMMAND(Command{
    "fetch", "refresh offers from live price sources (snapshots, gated; see docs/fetch.md)",
    [](CLI::App& sub, GlobalOptions& global) {
      auto opts = std::make_shared<FetchCliOptions>();
      sub.add_option("source", opts->sources, "sources to fetch (default: every keyless source); see --list");
      sub.add_flag("--dry-run", opts->dry_run, "fetch, parse and gate; show what would change; write nothing");
      sub.add_flag("--list", opts->list, "list the sources and the keys they need");
      sub.add_option("--base-url", opts->base_url,
                     "replace scheme, host and port of the sources' endpoints (a mirror or a recorded reply)");
      sub.add_option("--timeout", opts->timeout_s,
                     "seconds per request, at most 86400 (default 120; the AWS price list 1800 unless this is given)")
          ->check(decimal_number_check());
      sub.add_option("--retries", opts->retries, "attempts per request, 1 to 20, retried on 429/5xx/timeouts (default 4)")
          ->check(integer_check());
      sub.add_option("--max-row-drop", opts->gates.max_row_drop_fraction,
                     "reject a snapshot whose offers fell by more than this fraction (default 0.5)")
          ->check(decimal_number_check());
      sub.add_option("--price-move-factor", opts->gates.price_move_factor,
                     "flag prices that moved more than this factor since the last snapshot (default 3)")
          ->check(decimal_number_check());
      sub.add_option("--frozen-after-days", opts->frozen_after_days,
                     "a feed whose content is unchanged for this many days looks frozen (default: the source's own, "
                     "3 for live marketplaces, 30 for list-price catalogs; see --list)")
          ->check(decimal_number_check());
      sub.add_option("--fetched-at", opts->fetched_at, "")->group("");  // tests only (FetchCliOptions)
      sub.callback([opts, &global, &sub] {
        opts->timeout_given = sub.count("--timeout") > 0;
        opts->base_url_given = sub.count("--base-url") > 0;
        opts->frozen_given = sub.count("--frozen-after-days") > 0;
        run_fetch_cmd(*opts, global);
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
