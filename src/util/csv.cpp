#include "util/csv.hpp"

#include <csv.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <cstdlib>

#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan {
namespace {

struct ParseState {
  std::vector<CsvRow> rows;
  CsvRow current;
  std::size_t line = 1;
  std::size_t long_field_line = 0;  ///< line of the first cell over kMaxCsvFieldBytes (0: none)
};

void on_field(void* data, std::size_t len, void* ctx) {
  auto* st = static_cast<ParseState*>(ctx);
  if (len > kMaxCsvFieldBytes && st->long_field_line == 0) st->long_field_line = st->line;
  st->current.fields.emplace_back(static_cast<const char*>(data), len);
}

void on_row(int /*terminator*/, void* ctx) {
  auto* st = static_cast<ParseState*>(ctx);
  st->current.line = st->line;
  st->rows.push_back(std::move(st->current));
  st->current = CsvRow{};
}

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

CsvTable CsvTable::parse(std::string_view text, std::string source) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
    throw Error(ErrorKind::internal, source, "cannot initialise the CSV parser");
  ParseState st;
  // Feed one line at a time so that each row knows the line it ends on.
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = (nl == std::string_view::npos) ? text.size() : nl + 1;
    std::string_view chunk = text.substr(pos, end - pos);
    if (chunk.size() > kMaxCsvLineBytes) {
      csv_free(&parser);
      throw_invalid(source + ":" + std::to_string(st.line), "line is " + std::to_string(chunk.size()) + " bytes long",
                    "lines of at most " + std::to_string(kMaxCsvLineBytes) + " bytes");
    }
    if (csv_parse(&parser, chunk.data(), chunk.size(), on_field, on_row, &st) != chunk.size()) {
      std::string why = csv_strerror(csv_error(&parser));
      csv_free(&parser);
      throw_invalid(source + ":" + std::to_string(st.line), "malformed CSV: " + why,
                    "RFC 4180 quoting (a quote inside a quoted cell is written twice)");
    }
    if (st.long_field_line != 0) {
      csv_free(&parser);
      throw_invalid(source + ":" + std::to_string(st.long_field_line), "cell longer than " +
                    std::to_string(kMaxCsvFieldBytes) + " bytes", "shorter cells");
    }
    pos = end;
    if (nl != std::string_view::npos) ++st.line;
  }
  if (text.empty() || text.back() == '\n') --st.line;
  if (csv_fini(&parser, on_field, on_row, &st) != 0) {
    std::string why = csv_strerror(csv_error(&parser));
    csv_free(&parser);
    throw_invalid(source + ":" + std::to_string(st.line), "malformed CSV at end of file: " + why,
                  "every quoted cell closed");
  }
  csv_free(&parser);

  CsvTable t;
  t.source_ = std::move(source);
  if (st.rows.empty()) throw_invalid(t.source_ + ":1", "empty CSV file", "a header row");
  t.header_ = std::move(st.rows.front().fields);
  for (std::size_t i = 0; i < t.header_.size(); ++i) {
    std::string name = trim(t.header_[i]);
    t.header_[i] = name;
    if (!t.index_.emplace(name, i).second)
      throw_invalid(t.source_ + ":1", "duplicate column '" + name + "'", "unique column names");
  }
  for (std::size_t r = 1; r < st.rows.size(); ++r) {
    CsvRow& row = st.rows[r];
    if (row.fields.size() != t.header_.size())
      throw_invalid(t.source_ + ":" + std::to_string(row.line),
                    "row has " + std::to_string(row.fields.size()) + " cells",
                    std::to_string(t.header_.size()) + " cells as in the header");
    t.rows_.push_back(std::move(row));
  }
  return t;
}

std::string read_text_file(const std::string& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO without a writer must not hang; the type is checked on the
  // descriptor (no race between a stat and the open).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw_not_found(path, std::string("cannot open file: ") + std::strerror(errno), "a readable file");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_not_found(path, std::string("cannot read file: ") + std::strerror(errno), "a readable file");
  if (!S_ISREG(st.st_mode)) {
    const char* what = S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : S_ISSOCK(st.st_mode) ? "a socket"
                                                                                                         : "not a regular file";
    throw_invalid(path, std::string("is ") + what, "a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw_invalid(path, "file is " + std::to_string(st.st_size) + " bytes", "at most " + std::to_string(max_bytes) + " bytes");
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_not_found(path, std::string("cannot read file: ") + std::strerror(errno), "a readable file");
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes)  // grew while being read
      throw_invalid(path, "file is larger than " + std::to_string(max_bytes) + " bytes", "a smaller file");
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

CsvTable CsvTable::read_file(const std::string& path) { return parse(read_text_file(path), path); }

bool CsvTable::has_column(std::string_view name) const { return index_.count(std::string(name)) > 0; }

std::size_t CsvTable::column(std::string_view name) const {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) throw_invalid(source_ + ":1", "missing column '" + std::string(name) + "'");
  return it->second;
}

const std::string& CsvTable::cell(const CsvRow& row, std::string_view column_name) const {
  return row.fields.at(column(column_name));
}

std::optional<std::string> CsvTable::cell_if(const CsvRow& row, std::string_view column_name) const {
  auto it = index_.find(std::string(column_name));
  if (it == index_.end()) return std::nullopt;
  return row.fields.at(it->second);
}

std::string CsvTable::where(const CsvRow& row) const { return source_ + ":" + std::to_string(row.line); }

std::optional<double> parse_optional_double(std::string_view text, const std::string& where) {
  std::string t = trim(text);
  if (t.empty()) return std::nullopt;
  // Decimal only: strtod would also take hex ("0x10" = 16), "inf", "nan" and locale forms.
  const std::optional<double> v = parse_decimal(t);
  if (!v) throw_invalid(where, "'" + t + "' is not a number", "a finite decimal number");
  return v;
}

}  // namespace gpuplan
