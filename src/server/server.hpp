#pragma once
/// Server layer: `gpuplan serve`, the JSON API (and the pages) over the api layer's use cases.
///
/// Endpoints (docs/api.md; the OpenAPI 3 document at GET /api/openapi.json):
///   GET  /api/health                      {"status": "ok", "version", "store": "reachable", "offers",
///                                         "observations"}; 503 {"status": "unavailable", "store":
///                                         "unreachable", "message"} while the store does not answer
///   GET  /api/gpus[?name=]                = gpuplan gpus [NAME] --json
///   GET  /api/models[?name=|model=|params=...] = gpuplan models [NAME] --json
///   GET  /api/offers?q=&sort=&limit=&spot=&include_flagged=&stale_days=&fresh_days=&today=&group_by=
///                                         = gpuplan offers --format json [--group-by]
///   GET  /api/offers/{id}/history         = gpuplan history ID --format json
///   POST /api/size                        body: the size fields      = gpuplan size --json
///   POST /api/plan                        body: the plan fields      = gpuplan plan --json
///   POST /api/estimate                    body: the estimate fields  = gpuplan estimate --json
///                                         (no layout fits: 200 with "estimate": null and "no_fit")
/// Request fields use the CLI's names (api/fields.hpp); unknown fields are rejected with their
/// JSON pointer. Errors: {"code": kind_name, "message", "field": "/pointer" or ""} with the
/// status of util/error.hpp http_status(); internal errors say only "internal error".
/// Catalog reads carry an ETag (hash of the body; If-None-Match → 304) and Last-Modified (the
/// newest observation in the store, or when this process saw the data change; If-Modified-Since
/// → 304 when no If-None-Match is sent). Answers are cached per data version (api::Context: the SQLite
/// file's state, or PostgreSQL's OfferStore::revision()), so N server processes on one
/// PostgreSQL answer alike after any import.
/// Writes: only with a write token (ServerOptions::write_token), POST /api/import
/// (api/import.hpp) with `Authorization: Bearer TOKEN` (compared in constant time): 403
/// read_only without a token configured, 401 unauthorized (WWW-Authenticate: Bearer) on a missing
/// or wrong one, 400 for a malformed file (field: NAME:LINE, nothing written), 413 over
/// max_import_bytes. With a token cpp-httplib's (global) payload limit is max_import_bytes and
/// the JSON endpoints check max_body_bytes themselves (413 payload_too_large).
/// Limits: request bodies ≤ max_body_bytes (413), URIs ≤ 8 KiB (414, cpp-httplib), read/write
/// timeouts, keep-alive capped.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/context.hpp"

namespace gpuplan::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                      ///< 0 = any free port (see Server::port())
  std::size_t threads = 64;  ///< worker threads of the pool (one per open keep-alive connection: mostly idle)
  static constexpr std::size_t kMaxComputeThreads = 256;
  /// Computations (POST /api/size, plan, estimate) that run at once, 0..kMaxComputeThreads; the
  /// others queue in arrival order (server/fifo_slots.hpp). 0 (default): no limit, every worker
  /// computes. A limit near the core count lowers the tail latency under many connections and
  /// costs throughput (the hand-offs): docs/server.md "Speed, 2026-12-04".
  std::size_t compute_threads = 0;
  std::size_t max_body_bytes = 64 * 1024;
  /// Bearer token for POST /api/import; nullopt = read-only server (the import answers 403).
  std::optional<std::string> write_token;
  std::size_t max_import_bytes = std::size_t{32} << 20;  ///< 32 MiB, only with a write token
  int read_timeout_seconds = 5;
  int write_timeout_seconds = 10;
};

class Server {
 public:
  Server(const api::Context& ctx, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds; throws Error{unavailable, "--listen"} when the address cannot be bound.
  void bind();
  /// The bound port (after bind()).
  int port() const;
  /// Serves until stop() (blocking). Call bind() first.
  void run();
  /// Stops accepting, lets running requests finish; safe from any thread.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Checks the query string of a request target ("/offers?q=gpu%3DH100") as the API reads it:
/// each name and value must be valid percent-encoding (RFC 3986 §2.1, '+' a space). A '%' not
/// followed by two hexadecimal digits is Error{invalid_input, "/NAME"} with code
/// query_not_percent_encoded, values name (as written, bytes outside printable ASCII as %XX) and
/// character (1-based, in that part). The pages call it before reading any parameter: `?q=%zz`
/// was read as the filter text "%zz" while /api/offers answered 400.
void check_query_percent_encoding(std::string_view target);

/// Error{invalid_input, field, path_not_percent_encoded} when the path of a request target (before
/// '?') holds a '%' not followed by two hexadecimal digits; values: segment (the path segment, at
/// most 80 characters, bytes outside printable ASCII as %XX) and character (1-based, in it).
/// cpp-httplib passes such a path on undecoded, so `/api/offers/%zz/history` was a 404.
void check_path_percent_encoding(std::string_view target, const std::string& field);

/// Parses "HOST:PORT", ":PORT" or "PORT" (host defaults to 127.0.0.1); Error{invalid_input, "--listen"}.
void parse_listen(const std::string& text, ServerOptions& options);

}  // namespace gpuplan::server
