// `gpuplan serve [--listen HOST:PORT] [--threads N] [--write-token-file PATH]`: the JSON API and
// the pages (server/server.hpp) on the same context as the CLI (--db, --gpus-file). Read-only
// unless a write token is configured: the environment variable GPUPLAN_WRITE_TOKEN or the file
// --write-token-file (which wins; its trailing newline trimmed), never a command-line value
// (visible in ps). A token shorter than 16 bytes or with bytes outside visible ASCII is an error
// (exit 2). With it, POST /api/import takes offer files (docs/api.md). Stops gracefully on
// SIGTERM or SIGINT (running requests finish).
// `--refresh-every DURATION` (at least 1 minute) also runs `gpuplan fetch` on a schedule in a
// background thread (fetch/refresh.hpp; the same fetch::run_fetch), logging each run's
// per-source outcome to stderr; the store must be writable (checked before listening).
#include <fmt/core.h>
#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "catalog/open_store.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "fetch/fetch.hpp"
#include "fetch/http.hpp"
#include "fetch/refresh.hpp"
#include "planner/plan_request.hpp"
#include "server/server.hpp"
#include "util/error.hpp"

namespace gpuplan::cli {
namespace {

struct ServeOptions {
  std::string listen = "127.0.0.1:8080";
  // Signed, so that `--compute-threads -1` is echoed as typed, not as 2^64 - 1.
  std::int64_t compute_threads = 0;  // no limit (server/server.hpp ServerOptions::compute_threads)
  std::int64_t threads = 64;  // signed: `--threads -1` is echoed as typed; cpp-httplib holds a worker per keep-alive connection (server/server.hpp)
  std::string write_token_file;
  std::string refresh_every;                 ///< empty = no scheduled refresh
  std::vector<std::string> refresh_sources;  ///< empty = every keyless source
  std::string base_url;                      ///< --base-url of the refresh (mirrors, tests)
  std::string refresh_min_interval = "1m";   ///< hidden: tests lower it (docs/fetch.md)
  double frozen_after_days = 0;              ///< the refresh's --frozen-after-days (when frozen_given)
  bool frozen_given = false;                 ///< absent: each source's own limit
};

/// The scheduled refresh's own store, HTTP client and schedule (see the file comment).
struct Refresh {
  double interval_s = 0;
  fetch::FetchOptions options;
  std::unique_ptr<OfferStore> store;
  fetch::StopFlag stop;
  std::unique_ptr<fetch::CurlTransport> transport;
  std::unique_ptr<fetch::StoppableSleeper> sleeper;
  std::unique_ptr<fetch::HttpClient> http;
  std::unique_ptr<fetch::PeriodicRunner> runner;
};

void log_line(const std::string& line) {
  std::fputs(("gpuplan: " + line + "\n").c_str(), stderr);
  std::fflush(stderr);
}

/// Checks the refresh flags and opens the refresh's store (before the server listens, so a bad
/// flag or a read-only store is an error at start, not a failure every few hours).
std::unique_ptr<Refresh> prepare_refresh(const ServeOptions& opts, const GlobalOptions& global) {
  if (opts.refresh_every.empty()) {
    if (!opts.refresh_sources.empty() || !opts.base_url.empty() || opts.frozen_given)
      throw_invalid(opts.frozen_given ? "--frozen-after-days" : opts.base_url.empty() ? "--refresh-sources" : "--base-url",
                    "given without --refresh-every",
                    "--refresh-every DURATION (e.g. 6h) as well");
    return nullptr;
  }
  auto r = std::make_unique<Refresh>();
  const double min_s = parse_duration_seconds(opts.refresh_min_interval, "--refresh-min-interval");
  r->interval_s = parse_duration_seconds(opts.refresh_every, "--refresh-every");
  fetch::validate_refresh_interval(r->interval_s, min_s, "--refresh-every");
  if (!opts.base_url.empty()) fetch::check_base_url(opts.base_url);  // http(s), host, port only
  for (const std::string& name : opts.refresh_sources)
    if (fetch::find_source(name) == nullptr)
      throw Error(ErrorKind::not_found, "--refresh-sources", "unknown fetch source \"" + name + "\"",
                  "names from `gpuplan fetch --list`");
  const StoreUrl url = parse_store_url(global.db_path);
  if (url.backend == StoreBackend::sqlite && url.target == ":memory:")
    throw_invalid("--refresh-every", "the store is :memory:, private to one connection; the refresh could not reach it",
                  "a SQLite file or a PostgreSQL URL in --db");
  static const SystemClock clock;
  r->store = open_store(global.db_path, StoreContext{gpu_catalog(global), clock});
  if (const std::optional<std::string> why = r->store->write_refusal())
    throw_invalid("--refresh-every", "the store cannot be written: " + *why,
                  "a store this process may write (or serve read-only and run `gpuplan fetch` where the store is writable)");
  r->options.sources = opts.refresh_sources.empty() ? fetch::keyless_source_names() : opts.refresh_sources;
  r->options.base_url = opts.base_url;
  if (opts.frozen_given)
    r->options.gates.frozen_after_days = fetch::validated_frozen_after_days(opts.frozen_after_days, "--frozen-after-days");
  r->options.gpus = &gpu_catalog(global);
  r->options.stop = &r->stop;
  fetch::TransportOptions topts;
  topts.stop = &r->stop;
  r->transport = std::make_unique<fetch::CurlTransport>(topts);
  r->sleeper = std::make_unique<fetch::StoppableSleeper>(r->stop);
  r->http = std::make_unique<fetch::HttpClient>(*r->transport, *r->sleeper, fetch::RetryPolicy{}, &r->stop);
  return r;
}

/// One scheduled run: the fetch, one stderr line per source, and the server's caches dropped
/// when something was written.
void refresh_once(Refresh& r, const api::Context& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  log_line(fmt::format("refresh: fetching {} sources", r.options.sources.size()));
  const fetch::FetchReport report = fetch::run_fetch(*r.store, *r.http, r.options);
  bool wrote = false;
  for (const fetch::SourceOutcome& o : report.sources) {
    wrote = wrote || o.changes.observations_added > 0 || o.changes.offers_added > 0 || o.changes.offers_updated > 0;
    log_line(fmt::format("refresh: {} {}: {} offers, {} observations added, {} prices seen again; {}", o.source,
                         o.status, o.snapshot.offers, o.changes.observations_added, o.changes.prices_seen_again,
                         o.message));
    for (const std::string& w : o.warnings) log_line(fmt::format("refresh: {} warning: {}", o.source, w));
    for (const std::string& line : fetch::skipped_rows_report(o))
      log_line(fmt::format("refresh: {}{}", line.rfind("  ", 0) == 0 ? "" : o.source + " ", line));
  }
  if (wrote) ctx.note_write();
  log_line(fmt::format("refresh: done in {:.1f} s{}", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                       report.any_failed() ? " (a source failed or was rejected)" : ""));
}

constexpr std::size_t kMinWriteTokenBytes = 16;

/// The write token (see the file comment), or nullopt for a read-only server.
std::optional<std::string> read_write_token(const std::string& file) {
  std::string token, where;
  if (!file.empty()) {
    where = "--write-token-file";
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error(ErrorKind::not_found, where, "cannot read the write token file " + file, "a readable file holding the token");
    std::ostringstream text;
    text << in.rdbuf();
    token = text.str();
    if (token.size() > 4096) throw_invalid(where, "the token file is over 4096 bytes", "one line holding the token");
    if (!token.empty() && token.back() == '\n') token.pop_back();
    if (!token.empty() && token.back() == '\r') token.pop_back();
  } else {
    const char* env = std::getenv("GPUPLAN_WRITE_TOKEN");
    if (env == nullptr || *env == '\0') return std::nullopt;
    where = "GPUPLAN_WRITE_TOKEN";
    token = env;
  }
  for (const char c : token)
    if (c < 0x21 || c > 0x7e)
      throw_invalid(where, "the write token holds a space, control or non-ASCII byte", "visible ASCII characters only");
  if (token.size() < kMinWriteTokenBytes)
    throw_invalid(where, fmt::format("the write token is {} bytes long", token.size()),
                  fmt::format("at least {} bytes (e.g. openssl rand -hex 32)", kMinWriteTokenBytes));
  return token;
}

void run_serve(const ServeOptions& opts, const GlobalOptions& global) {
  server::ServerOptions so;
  server::parse_listen(opts.listen, so);
  if (opts.threads < 1 || opts.threads > 256)
    throw_invalid("--threads", fmt::format("{} is out of range", opts.threads), "an integer in [1, 256]");
  so.threads = static_cast<std::size_t>(opts.threads);
  if (opts.compute_threads < 0 ||
      opts.compute_threads > static_cast<std::int64_t>(server::ServerOptions::kMaxComputeThreads))
    throw_invalid("--compute-threads", fmt::format("{} is out of range", opts.compute_threads),
                  fmt::format("an integer in [0, {}]", server::ServerOptions::kMaxComputeThreads));
  so.compute_threads = static_cast<std::size_t>(opts.compute_threads);
  so.write_token = read_write_token(opts.write_token_file);
  std::unique_ptr<Refresh> refresh = prepare_refresh(opts, global);
  // PostgreSQL pool: one connection per worker thread, at most 16 (most of the 64 default workers
  // hold idle keep-alive connections; N servers × 16 stays under PostgreSQL's max_connections of
  // 100 for N ≤ 5 with a fetcher). A worker finding the pool busy waits for a connection.
  const std::size_t store_connections = std::min<std::size_t>(so.threads, 16);
  const api::Context ctx = make_context(global, /*cache_catalog=*/true, store_connections);
  ctx.store();  // open (and seed) the catalog before listening: the first request is not slow
  // Block the stop signals in every thread (the pool inherits the mask); one thread waits for them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  server::Server srv(ctx, so);
  srv.bind();
  // cpp-httplib's stop() does nothing before listen has started, so a signal that comes between
  // the "serving on" line and the start of srv.run() was lost and the server never stopped (seen
  // as a hung ServeRefreshE2E test that stops the server right after it starts): the waiter asks
  // again until run() has returned.
  std::atomic<bool> run_returned{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    while (!run_returned.load()) {
      srv.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  fmt::print("gpuplan: serving on http://{}:{}/ (JSON API under /api/, OpenAPI at /api/openapi.json; {})\n", so.host,
             srv.port(), so.write_token ? "POST /api/import open to the write token" : "read-only");
  std::fflush(stdout);
  if (refresh) {
    const double now_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const double first_s = fetch::first_refresh_delay_s(*refresh->store, refresh->interval_s, now_s);
    log_line(fmt::format("refresh: every {:g} s ({} sources); first run in {:.0f} s", refresh->interval_s,
                         refresh->options.sources.size(), first_s));
    Refresh& r = *refresh;
    r.runner = std::make_unique<fetch::PeriodicRunner>(
        r.interval_s, first_s, [&r, &ctx] { refresh_once(r, ctx); },
        [](const std::string& what) { log_line("refresh: run failed: " + what); }, r.stop);
  }
  // The refresh thread uses ctx and srv's data: stopped (a transfer in flight aborted, the thread
  // joined) before they go, on every way out of this scope (`refresh` was declared before them).
  struct StopRefresh {
    Refresh* r;
    ~StopRefresh() {
      if (r != nullptr && r->runner) r->runner->stop();
    }
  } stop_refresh{refresh.get()};
  srv.run();
  run_returned = true;
  if (refresh) refresh->runner->stop();  // before "stopped" is printed
  pthread_kill(waiter.native_handle(), SIGTERM);  // wakes the waiter if the server stopped otherwise
  waiter.join();
  fmt::print("gpuplan: stopped\n");
}

GPUPLAN_REGISTER_COMMAND(Command{
    "serve", "serve the JSON API and the web pages on a local address (read-only unless a write token is configured)",
    [](CLI::App& sub, GlobalOptions& global) {
      auto opts = std::make_shared<ServeOptions>();
      sub.add_option("--listen", opts->listen, "HOST:PORT to listen on (port 0 = any free port)")->capture_default_str();
      sub.add_option("--threads", opts->threads, "worker threads (each serves one connection at a time; fewer than the clients' connections queues them)")->capture_default_str()
          ->check(integer_check());
      sub.add_option("--compute-threads", opts->compute_threads,
                     "size, plan and estimate requests computed at once, the others waiting in arrival order (0, the default: no limit; about the core count lowers tail latency under many connections, at some throughput)")
          ->capture_default_str()
          ->check(integer_check());
      sub.add_option("--write-token-file", opts->write_token_file,
                     "file holding the bearer token that allows POST /api/import (else GPUPLAN_WRITE_TOKEN; none: read-only)");
      sub.add_option("--refresh-every", opts->refresh_every,
                     "also run `gpuplan fetch` on this schedule (30m, 6h, 1d; at least 1 minute); needs a writable store");
      sub.add_option("--refresh-sources", opts->refresh_sources,
                     "sources the scheduled refresh fetches (default: every keyless source); see `gpuplan fetch --list`")
          ->delimiter(',');
      sub.add_option("--base-url", opts->base_url,
                     "the refresh's --base-url: replace scheme, host and port of the sources' endpoints (a mirror)");
      sub.add_option("--frozen-after-days", opts->frozen_after_days,
                     "the refresh's --frozen-after-days: a feed unchanged this many days looks frozen (default: the "
                     "source's own, 3 for live marketplaces, 30 for list-price catalogs)")
          ->check(decimal_number_check());
      // Tests only (docs/fetch.md): lowers the one-minute floor so an end-to-end test sees two runs in seconds.
      sub.add_option("--refresh-min-interval", opts->refresh_min_interval, "")->group("");
      sub.callback([opts, &global, &sub] {
        opts->frozen_given = sub.count("--frozen-after-days") > 0;
        run_serve(*opts, global);
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
