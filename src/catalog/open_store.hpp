#pragma once
/// Catalog layer: the one way to open the offer store (store.hpp) from a URL.
///
///   sqlite:PATH, or a plain PATH           the embedded SQLite store (sqlite_store.hpp); the
///                                          folder must exist (Error{not_found}, never created);
///                                          ":memory:" works
///   ""                                     SQLite at default_offer_db_path() (its folder is created)
///   postgresql://... or postgres://...     a shared PostgreSQL (pg_store.hpp); libpq URIs and
///   "host=... dbname=..."                  keyword/value connection strings both work
///
/// A new database is seeded from the bundled catalog, and seeded again once when this build's
/// bundled data differs from the data it was seeded with (bundled_catalog_key()), resolved against ctx.gpus (so
/// `--gpus-file` applies to the seed too) and passed through the same quality gates as every
/// other write (ingest.hpp).
///
/// Errors: Error{unavailable} when the database cannot be reached or opened; Error{conflict}
/// (exit 4) when its schema was written by a newer gpuplan; Error{invalid_input} for a URL of
/// an unknown scheme or a file that is not a gpuplan database.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "catalog/store.hpp"

namespace gpuplan {

class GpuCatalog;

/// What a store needs from the process (built once at each edge: CLI start, server, fetcher).
struct StoreContext {
  const GpuCatalog& gpus;  ///< GPU specs for the filter, sort and the seed; outlives the store
  const Clock& clock;      ///< today's date for the quality gates of the seed
};

struct StoreOptions {
  bool seed_bundled = true;       ///< seed a new database from the bundled catalog
  std::size_t connections = 1;    ///< PostgreSQL: pool size (one per server thread); SQLite: ignored
  int busy_timeout_ms = 5000;     ///< SQLite: wait for a lock this long; PostgreSQL: lock_timeout
};

enum class StoreBackend { sqlite, postgresql };

/// Which backend a URL names, and the part the backend reads (the SQLite path with "sqlite:"
/// removed and the default path filled in, or the libpq connection string unchanged).
struct StoreUrl {
  StoreBackend backend = StoreBackend::sqlite;
  std::string target;
  bool defaulted = false;  ///< SQLite at default_offer_db_path() (no --db given)
};
/// Throws Error{invalid_input} at "--db" for an unknown "scheme://".
StoreUrl parse_store_url(std::string_view url);

/// Opens (creating and migrating when needed) the store `url` names; see the top of the file.
std::unique_ptr<OfferStore> open_store(const std::string& url, const StoreContext& ctx, const StoreOptions& opts = {});

}  // namespace gpuplan
