#pragma once
/// CSV reading through libcsv (RFC 4180 quoting, CRLF or LF, UTF-8 BOM stripped),
/// with the line number of every row kept for error messages.
#include <cstddef>
#include <functional>
#include <memory>
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

/// Streaming CSV reading (issue 11: linear import, bounded memory). Input is pulled in blocks
/// of 64 KiB from `read` and fed to libcsv one physical line at a time, so each row knows the
/// line it ends on; rows are handed out as they complete. Memory: one block, the current line
/// (at most kMaxCsvLineBytes) and the rows of that line: never the whole file.
/// Errors (Error{invalid_input}, "source:line"): malformed quoting, a line longer than
/// kMaxCsvLineBytes, a cell longer than kMaxCsvFieldBytes, an empty input, duplicate header
/// names, a row whose cell count differs from the header's; with `check_text`, the first byte
/// that is not UTF-8 text without control characters ("source:line:col", text_check.hpp; the
/// message names the cell's column: "... in field instance_type").
/// A UTF-8 byte-order mark at the start is dropped.
class CsvReader {
 public:
  /// Fills buf with up to cap bytes; returns the count, 0 at the end. May throw (read errors).
  using ReadFn = std::function<std::size_t(char* buf, std::size_t cap)>;
  /// Reads the header row at once (throws as above for an empty input or bad header).
  CsvReader(ReadFn read, std::string source, bool check_text = false);
  /// Reads from a text that must outlive the reader.
  static CsvReader over_text(std::string_view text, std::string source, bool check_text = false);
  CsvReader(CsvReader&&) noexcept;
  CsvReader& operator=(CsvReader&&) = delete;
  ~CsvReader();

  const std::string& source() const { return source_; }
  /// Header names, trimmed.
  const std::vector<std::string>& header() const { return header_; }
  /// Index of a column, or nullopt.
  std::optional<std::size_t> column_index(std::string_view name) const;
  /// The next data row (cells as written, not trimmed); false at the end of the input.
  bool next(CsvRow& row);
  /// "source:line" for a row.
  std::string where(const CsvRow& row) const { return source_ + ":" + std::to_string(row.line); }

 private:
  struct State;
  bool pull(CsvRow& row);  ///< next raw row (header included), no cell-count check
  std::string source_;
  std::vector<std::string> header_;
  std::unique_ptr<State> st_;
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

/// An open regular file, read in blocks (CsvReader's ReadFn reads from one). Opening checks
/// what read_text_file checks (a regular file, at most max_bytes) without blocking on a FIFO;
/// read() throws Error{invalid_input} when the file grows past max_bytes while being read and
/// Error{not_found} on a read error.
class InputFile {
 public:
  explicit InputFile(const std::string& path, std::size_t max_bytes = kMaxInputFileBytes);
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();
  /// Up to cap bytes into buf; 0 at the end.
  std::size_t read(char* buf, std::size_t cap);
  std::size_t size_bytes() const { return size_bytes_; }  ///< size when opened
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::size_t max_bytes_ = 0;
  std::size_t size_bytes_ = 0;
  std::size_t read_bytes_ = 0;
  int fd_ = -1;
};

/// Reads a whole file into a string. Only regular files are read (a FIFO, a device such as
/// /dev/zero, a directory: Error{invalid_input}, without blocking on the FIFO); a file larger
/// than max_bytes is Error{invalid_input}; a missing or unreadable file Error{not_found}.
std::string read_text_file(const std::string& path, std::size_t max_bytes = kMaxInputFileBytes);

/// Which cell of a CSV text (a header row, then data rows) holds byte `offset`: "field NAME"
/// (the column's header name), "the header row", or "" when the text before it is not CSV or the
/// cell is beyond the header's width. For error messages (text_check.hpp check_text_file).
std::string csv_field_at(std::string_view text, std::size_t offset);

/// Strict number parsing for data cells: the whole (trimmed) text must be a finite number.
/// Returns nullopt for empty/whitespace text; throws Error{invalid_input} at `where` otherwise.
std::optional<double> parse_optional_double(std::string_view text, const std::string& where);

}  // namespace gpuplan
