#pragma once
/// Application layer: importing an offer file received as bytes (the server's POST /api/import),
/// through the same path as `gpuplan import FILE`: the importers (catalog/importers.hpp:
/// import_text, format given or detected), then ingest() (catalog/ingest.hpp: every quality gate,
/// one transaction, all or nothing) on the context's store under Context::use_store().
/// Errors: a malformed file throws Error{invalid_input} whose where() is "NAME:LINE" (CSV) or
/// "NAME:LINE:COL" (JSON), as the CLI reports it; nothing is written then. An unknown format
/// name or a bad file name is Error{invalid_input} with where "/format" or "/name".
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/context.hpp"
#include "catalog/importers.hpp"
#include "catalog/store.hpp"

namespace gpuplan::api {

struct ImportInput {
  std::string body;                ///< the offer file's bytes
  std::string format;              ///< import format name (import_format_name); "" = detected
  bool dry_run = false;            ///< compare with the store, write nothing
  std::string name = "request";    ///< file name in error positions; dataset "user:<name>"
};

struct ImportOutput {
  std::string name;
  std::string format;              ///< the format used (given or detected)
  bool dry_run = false;
  std::size_t rows_read = 0;
  std::size_t offers_in_file = 0;
  ImportResult result;
  std::vector<ImportRuleCount> rules;  ///< per quality rule: rows rejected, offers flagged
};

/// Parses and ingests `in.body` (see the file comment). Marks the context written
/// (Context::note_write) after a real (not dry-run) import so cached answers are dropped.
ImportOutput run_import(const ImportInput& in, const Context& ctx);

/// {"name", "format", "dry_run", "rows_read", "offers_in_file", "offers": {added, updated,
/// unchanged}, "observations": {added, already_known}, "rules": [{rule, rejected, flagged}]}:
/// the numbers `gpuplan import` prints.
nlohmann::json to_json(const ImportOutput& out);

}  // namespace gpuplan::api
