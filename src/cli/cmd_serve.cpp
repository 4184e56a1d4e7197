// `gpuplan serve [--listen HOST:PORT] [--threads N] [--write-token-file PATH]`: the JSON API and
// the pages (server/server.hpp) on the same context as the CLI (--db, --gpus-file). Read-only
// unless a write token is configured: the environment variable GPUPLAN_WRITE_TOKEN or the file
// --write-token-file (which wins; its trailing newline trimmed), never a command-line value
// (visible in ps). A token shorter than 16 bytes or with bytes outside visible ASCII is an error
// (exit 2). With it, POST /api/import takes offer files (docs/api.md). Stops gracefully on
// SIGTERM or SIGINT (running requests finish).
#include <fmt/core.h>
#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
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
  std::string write_token_file;
};

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
  if (opts.threads < 1 || opts.threads > 256) throw_invalid("--threads", std::to_string(opts.threads), "1 to 256");
  so.threads = opts.threads;
  so.write_token = read_write_token(opts.write_token_file);
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
  fmt::print("gpuplan: serving on http://{}:{}/ (JSON API under /api/, OpenAPI at /api/openapi.json; {})\n", so.host,
             srv.port(), so.write_token ? "POST /api/import open to the write token" : "read-only");
  std::fflush(stdout);
  srv.run();
  pthread_kill(waiter.native_handle(), SIGTERM);  // wakes the waiter if the server stopped otherwise
  waiter.join();
  fmt::print("gpuplan: stopped\n");
}

GPUPLAN_REGISTER_COMMAND(Command{
    "serve", "serve the JSON API and the web pages on a local address (read-only unless a write token is configured)",
    [](CLI::App& sub, GlobalOptions& global) {
      auto opts = std::make_shared<ServeOptions>();
      sub.add_option("--listen", opts->listen, "HOST:PORT to listen on (port 0 = any free port)")->capture_default_str();
      sub.add_option("--threads", opts->threads, "worker threads (each serves one connection at a time; fewer than the clients' connections queues them)")->capture_default_str();
      sub.add_option("--write-token-file", opts->write_token_file,
                     "file holding the bearer token that allows POST /api/import (else GPUPLAN_WRITE_TOKEN; none: read-only)");
      sub.callback([opts, &global] { run_serve(*opts, global); });
    }});

}  // namespace
}  // namespace gpuplan::cli
