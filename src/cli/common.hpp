#pragma once
#include <CLI/CLI.hpp>
/// Helpers shared by the CLI commands: rendering only, no engine numbers.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/context.hpp"
#include "cli/command.hpp"

namespace gpuplan {
class GpuCatalog;
}

namespace gpuplan::cli {

/// The hardware catalog in force: --gpus-file when given, else the bundled one.
/// The returned reference stays valid for the process lifetime.
const GpuCatalog& gpu_catalog(const GlobalOptions& global);

/// The use cases' context for this run, built once per command at the entry point: the hardware
/// catalog in force, the bundled provider terms, the system clock (UTC) and the offer store at
/// --db (open_store: a SQLite path or a postgresql:// URL; opened on first use, seeded from the
/// bundled catalog when new).
/// cache_catalog (gpuplan serve): offer queries and counts are kept in memory until the data
/// changes: for SQLite the database file or its WAL (size, modification time or inode: another
/// process imported or fetched), for PostgreSQL OfferStore::revision() (raised by every committed
/// import of any process); see api::Context::DataVersion.
/// store_connections: the PostgreSQL pool size (one per server thread; opened lazily).
api::Context make_context(const GlobalOptions& global, bool cache_catalog = false, std::size_t store_connections = 1);

/// CLI11 check for a numeric option: the text must be a strict decimal number (util/text_check.hpp
/// parse_decimal: digits, optional fraction and exponent). CLI11 alone reads "" as 0, "0x10" as 16
/// and "inf"/"nan" as numbers (issue 11: decimal numbers only). Integer options still fail CLI11's
/// own conversion on a fraction.
const CLI::Validator& decimal_number_check();
/// CLI11 check for an integer option: an optional '-' and decimal digits only, else "'2.5' is not
/// an integer" (the wording of the model flags such as --tp; CLI11's own conversion said "Could
/// not convert", trial11b). The option's range is checked where it is used.
const CLI::Validator& integer_check();
/// As integer_check, and not negative: for a count CLI11 stores unsigned (it read "-1" as
/// the largest value: `ask --limit -1` listed every plan; trial11b). serve's thread counts keep their own range check.
const CLI::Validator& non_negative_count_check();

/// A plain-text table: header row, rows of cells; columns right-aligned when `right_align[i]`. A
/// cell may span several lines ('\n' inside it); its row is then as tall as that cell.
struct TextTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right_align;  ///< per column; missing = left
  std::string render() const;     ///< lines joined with '\n', trailing newline
  /// Removes column `col` (header, alignment, every row's cell); out of range: nothing.
  void drop_column(std::size_t col);
  /// Removes the column headed `name`; false when there is none.
  bool drop_column(std::string_view name);
};

/// Formats bytes as GiB with one decimal ("12.3 GiB").
std::string format_gib(double bytes);
/// Formats an optional value, "unknown" when empty.
std::string or_unknown(const std::optional<std::string>& s);

/// CLI11 check for an unsigned count flag: "-1" would wrap to a huge value (issue 11: `--limit -1`
/// meant "all"); refused as "a whole number >= 0".
inline CLI::Validator non_negative_count() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
          return "'" + s + "' is not a whole number >= 0";
        return {};
      },
      "N>=0");
}

}  // namespace gpuplan::cli
