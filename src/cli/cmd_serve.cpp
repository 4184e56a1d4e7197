// `gpuplan serve [--listen HOST:PORT] [--threads N]`: the JSON API and the pages
// (server/server.hpp) on the same context as the CLI (--db, --gpus-file). Read-only: the server
// has no write endpoint. Stops gracefully on SIGTERM or SIGINT (running requests finish).
#include <fmt/core.h>
#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include "cli/command.hpp"
#include "cli/common.hpp"
#include "server/server.hpp"
#include "util/error.hpp"

namespace gpuplan::cli {
namespace {

struct ServeOptions {
  std::string listen = "127.0.0.1:8080";
  std::size_t threads = 64;  // cpp-httplib holds a worker per keep-alive connection (server/server.hpp)
};

void run_serve(const ServeOptions& opts, const GlobalOptions& global) {
  server::ServerOptions so;
  server::parse_listen(opts.listen, so);
  if (opts.threads < 1 || opts.threads > 256) throw_invalid("--threads", std::to_string(opts.threads), "1 to 256");
  so.threads = opts.threads;
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
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    srv.stop();
  });
  fmt::print("gpuplan: serving on http://{}:{}/ (JSON API under /api/, OpenAPI at /api/openapi.json)\n", so.host, srv.port());
  std::fflush(stdout);
  srv.run();
  pthread_kill(waiter.native_handle(), SIGTERM);  // wakes the waiter if the server stopped otherwise
  waiter.join();
  fmt::print("gpuplan: stopped\n");
}

GPUPLAN_REGISTER_COMMAND(Command{
    "serve", "serve the JSON API and the web pages (read-only) on a local address",
    [](CLI::App& sub, GlobalOptions& global) {
      auto opts = std::make_shared<ServeOptions>();
      sub.add_option("--listen", opts->listen, "HOST:PORT to listen on (port 0 = any free port)")->capture_default_str();
      sub.add_option("--threads", opts->threads, "worker threads (each serves one connection at a time; fewer than the clients' connections queues them)")->capture_default_str();
      sub.callback([opts, &global] { run_serve(*opts, global); });
    }});

}  // namespace
}  // namespace gpuplan::cli
