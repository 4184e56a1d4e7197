#include "catalog/open_store.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "catalog/importers.hpp"
#include "catalog/ingest.hpp"
#include "catalog/pg_store.hpp"
#include "catalog/sqlite_store.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

/// A libpq keyword/value string starts with "keyword=" (host=, dbname=, user=, ...).
bool looks_like_libpq_keywords(std::string_view s) {
  const auto eq = s.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  for (char c : s.substr(0, eq))
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}

}  // namespace

StoreUrl parse_store_url(std::string_view url) {
  if (starts_with(url, "postgresql://") || starts_with(url, "postgres://") || looks_like_libpq_keywords(url))
    return {StoreBackend::postgresql, std::string(url)};
  if (starts_with(url, "sqlite:")) {
    std::string_view path = url.substr(7);
    if (starts_with(path, "//")) path.remove_prefix(2);  // sqlite:///abs/path
    if (path.empty()) throw_invalid("--db", "sqlite: URL without a path", "sqlite:PATH");
    return {StoreBackend::sqlite, std::string(path)};
  }
  if (const auto p = url.find("://"); p != std::string_view::npos)
    throw_invalid("--db", "unknown database scheme \"" + std::string(url.substr(0, p)) + "\"",
                  "a file path, sqlite:PATH, or postgresql://USER@HOST/DB");
  if (url.empty()) return {StoreBackend::sqlite, default_offer_db_path(), true};
  return {StoreBackend::sqlite, std::string(url)};
}

std::unique_ptr<OfferStore> open_store(const std::string& url, const StoreContext& ctx, const StoreOptions& opts) {
  const StoreUrl u = parse_store_url(url);
  std::unique_ptr<OfferStore> store;
  if (u.backend == StoreBackend::postgresql) {
    PgStoreOptions po;
    po.connections = opts.connections;
    po.lock_timeout_ms = opts.busy_timeout_ms;
    store = std::make_unique<PgOfferStore>(u.target, ctx.gpus, po);
  } else {
    if (u.target != ":memory:") {
      const std::string& p = u.target;
      const auto parent = std::filesystem::path(p).parent_path();
      std::error_code ec;
      if (u.defaulted) {
        // Only the default XDG data folder is created; a --db path must name an existing folder.
        if (!parent.empty()) std::filesystem::create_directories(parent, ec);
        if (ec) throw Error(ErrorKind::unavailable, p, "cannot create folder " + parent.string() + ": " + ec.message());
      } else if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
        throw Error(ErrorKind::not_found, "--db " + p, "folder " + parent.string() + " does not exist",
                    "a path in an existing folder (gpuplan does not create folders for --db)");
      }
      if (std::filesystem::exists(p, ec) && !std::filesystem::is_regular_file(p, ec))
        throw Error(ErrorKind::invalid_input, "--db " + p, "not a regular file", "a gpuplan offer database file");
      // A file that does not start with SQLite's 16-byte header ("SQLite format 3\0") is not a
      // database at all: malformed input (exit 2, README "Exit codes"), not SQLite's NOTADB
      // "corrupt store" conflict. An empty file is a new database; an unreadable one is left to
      // SQLite (cannot open: unavailable). /proc files report size 0 but have content: read them.
      if (std::ifstream in(p, std::ios::binary); in) {
        char head[16] = {};
        in.read(head, sizeof head);
        const auto got = static_cast<std::size_t>(in.gcount());
        static constexpr char kHeader[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
        if (got > 0 && (got < sizeof head || std::memcmp(head, kHeader, sizeof head) != 0))
          throw Error(ErrorKind::invalid_input, "--db " + p, "not a SQLite database (the file does not start with the SQLite header: another kind of file, or a store damaged at its start)",
                      "a gpuplan offer database file, or a new path");
      }
    }
    store = std::make_unique<SqliteOfferStore>(u.target, &ctx.gpus, opts.busy_timeout_ms);
  }
  if (opts.seed_bundled) {
    store->seed_if_new(bundled_catalog_key(), [&] {
      ImportBatch b = bundled_catalog(&ctx.gpus);
      apply_quality_gates(b, ctx.clock.today());
      return b;
    });
  }
  return store;
}

}  // namespace gpuplan
