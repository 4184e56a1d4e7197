#pragma once
/// CSV reading through libcsv (RFC 4180 quoting, CRLF or LF, UTF-8 BOM stripped),
/// with the line number of every row kept for error messages.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuplan {

struct CsvRow {
  std::size_t line = 0;             ///< 1-based line of the source on which the row ends
  std::vector<std::string> fields;  ///< cells as written (unquoted), no trimming
};

/// A parsed CSV with a header row. Cells are addressed by column name.
class CsvTable {
 public:
  /// Parses text. source names the file in errors ("data/gpus.csv").
  /// Throws Error{invalid_input} with "source:line" on malformed quoting, an empty file,
  /// duplicate header names, a row whose cell count differs from the header's, a line longer
  /// than kMaxCsvLineBytes or a cell longer than kMaxCsvFieldBytes.
  static CsvTable parse(std::string_view text, std::string source);
  /// Reads and parses a file; throws Error{not_found} when it cannot be read.
  static CsvTable read_file(const std::string& path);

  const std::string& source() const { return source_; }
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<CsvRow>& rows() const { return rows_; }
  bool has_column(std::string_view name) const;
  /// Index of a column; throws Error{invalid_input} "source:1: missing column NAME".
  std::size_t column(std::string_view name) const;
  /// Cell of a row by column name.
  const std::string& cell(const CsvRow& row, std::string_view column_name) const;
  /// Cell of a row by column name, or nullopt when the column does not exist.
  std::optional<std::string> cell_if(const CsvRow& row, std::string_view column_name) const;
  /// "source:line" for a row, for error messages.
  std::string where(const CsvRow& row) const;

 private:
  std::string source_;
  std::vector<std::string> header_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<CsvRow> rows_;
};

/// Limits on untrusted input (issue 11: `import /dev/zero` grew to 7 GB, a FIFO hung).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{512} << 20;  ///< 512 MiB
inline constexpr std::size_t kMaxCsvLineBytes = std::size_t{1} << 20;       ///< 1 MiB per physical line
inline constexpr std::size_t kMaxCsvFieldBytes = std::size_t{64} << 10;     ///< 64 KiB per cell

/// Reads a whole file into a string. Only regular files are read (a FIFO, a device such as
/// /dev/zero, a directory: Error{invalid_input}, without blocking on the FIFO); a file larger
/// than max_bytes is Error{invalid_input}; a missing or unreadable file Error{not_found}.
std::string read_text_file(const std::string& path, std::size_t max_bytes = kMaxInputFileBytes);

/// Strict number parsing for data cells: the whole (trimmed) text must be a finite number.
/// Returns nullopt for empty/whitespace text; throws Error{invalid_input} at `where` otherwise.
std::optional<double> parse_optional_double(std::string_view text, const std::string& where);

}  // namespace gpuplan
