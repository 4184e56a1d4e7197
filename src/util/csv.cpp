#include "util/csv.hpp"

#include <csv.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <cstdlib>

#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan {
namespace {
/// libcsv's error in the words of the file ("error parsing data while strict checking enabled"
/// named the library, not the cell: trial46).
std::string csv_problem(int error) {
  if (error == CSV_EPARSE) return "a quote inside an unquoted cell, or text after a cell's closing quote";
  if (error == CSV_ETOOBIG) return "a cell too large to hold";
  return csv_strerror(error);
}
}  // namespace

namespace {

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
  return std::string(s.substr(b, e - b));
}

constexpr std::size_t kBlockBytes = std::size_t{1} << 16;

/// "field NAME" for the cell at index `cell` of a data row, "the header row" for a header cell,
/// "" beyond the header's width.
std::string cell_label(const std::vector<std::string>& header, bool in_header, std::size_t cell) {
  if (in_header) return "the header row";
  return cell < header.size() ? "field " + header[cell] : std::string();
}

}  // namespace

struct CsvReader::State {
  ReadFn read;
  bool check_text = false;
  csv_parser parser{};
  bool parser_live = false;
  std::string buf;        ///< bytes read and not yet fed
  std::size_t pos = 0;    ///< start of the unfed part of buf
  bool eof = false;       ///< read returned 0
  bool finished = false;  ///< csv_fini done
  bool bom_checked = false;
  std::size_t line = 1;   ///< line being fed (1-based)
  std::size_t long_field_line = 0;  ///< line of the first cell over kMaxCsvFieldBytes (0: none)
  bool any_input = false;
  bool last_was_newline = true;     ///< the input so far ends with '\n' (or is empty)
  std::vector<std::string> header;  ///< the header's names once read (a copy: error messages name the field)
  bool header_read = false;
  CsvRow current;
  std::deque<CsvRow> ready;

  ~State() {
    if (parser_live) csv_free(&parser);
  }

  static void on_field(void* data, std::size_t len, void* ctx) {
    auto* st = static_cast<State*>(ctx);
    if (len > kMaxCsvFieldBytes && st->long_field_line == 0) st->long_field_line = st->line;
    st->current.fields.emplace_back(static_cast<const char*>(data), len);
  }
  static void on_row(int /*terminator*/, void* ctx) {
    auto* st = static_cast<State*>(ctx);
    st->current.line = st->line;
    const std::size_t cells = st->current.fields.size();
    st->ready.push_back(std::move(st->current));
    st->current = CsvRow{};
    st->current.fields.reserve(cells);  // rows have the header's width: one allocation, not log2(width)
  }

  /// Reads more input into buf (dropping the fed part). False at the end of the input.
  bool refill() {
    if (eof) return false;
    if (pos > 0) {
      buf.erase(0, pos);
      pos = 0;
    }
    const std::size_t old = buf.size();
    buf.resize(old + kBlockBytes);
    const std::size_t n = read(buf.data() + old, kBlockBytes);
    buf.resize(old + n);
    if (n == 0) {
      eof = true;
      return false;
    }
    return true;
  }

  /// Feeds the next physical line (or the last, unterminated one) to libcsv; at the end of the
  /// input, finishes the parser. False when nothing is left.
  bool feed_line(const std::string& source) {
    if (finished) return false;
    if (!bom_checked) {  // a UTF-8 byte-order mark may arrive split over several reads
      while (buf.size() - pos < 3 && refill()) {
      }
      if (std::string_view(buf).substr(pos, 3) == "\xEF\xBB\xBF") pos += 3;
      bom_checked = true;
    }
    std::size_t nl = std::string::npos;
    for (;;) {
      nl = buf.find('\n', pos);
      if (nl != std::string::npos) break;
      if (buf.size() - pos > kMaxCsvLineBytes) break;  // reported below
      if (!refill()) break;
    }
    const std::size_t end = nl == std::string::npos ? buf.size() : nl + 1;
    const std::string_view chunk(buf.data() + pos, end - pos);
    if (chunk.size() > kMaxCsvLineBytes)
      throw_invalid(source + ":" + std::to_string(line), "line is " + std::to_string(chunk.size()) + " bytes long",
                    "lines of at most " + std::to_string(kMaxCsvLineBytes) + " bytes");
    if (chunk.empty()) {  // end of input
      if (last_was_newline && line > 1) --line;
      finished = true;
      if (csv_fini(&parser, on_field, on_row, this) != 0)
        throw_invalid(source + ":" + std::to_string(line),
                      "malformed CSV at end of file: " + csv_problem(csv_error(&parser)),
                      "every quoted cell closed");
      return !ready.empty();
    }
    any_input = true;
    if (check_text) {
      if (auto pr = find_text_problem(chunk, true)) {
        // The cell that holds the byte: the line fed up to it, the cells of the row so far.
        std::string field;
        if (csv_parse(&parser, chunk.data(), pr->offset, on_field, on_row, this) == pr->offset)
          field = cell_label(header, !header_read && ready.empty(), current.fields.size());
        throw Error(ErrorKind::invalid_input, source + ":" + std::to_string(line) + ":" + std::to_string(pr->offset + 1),
                    field.empty() ? pr->what : pr->what + " in " + field, "UTF-8 text without control characters");
      }
    }
    if (csv_parse(&parser, chunk.data(), chunk.size(), on_field, on_row, this) != chunk.size())
      throw_invalid(source + ":" + std::to_string(line), "malformed CSV: " + csv_problem(csv_error(&parser)),
                    "RFC 4180 quoting (a quote inside a quoted cell is written twice)");
    if (long_field_line != 0)
      throw_invalid(source + ":" + std::to_string(long_field_line),
                    "cell longer than " + std::to_string(kMaxCsvFieldBytes) + " bytes", "shorter cells");
    pos = end;
    last_was_newline = nl != std::string::npos;
    if (last_was_newline) ++line;
    return true;
  }
};

CsvReader::CsvReader(ReadFn read, std::string source, bool check_text)
    : source_(std::move(source)), st_(std::make_unique<State>()) {
  st_->read = std::move(read);
  st_->check_text = check_text;
  if (csv_init(&st_->parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
    throw Error(ErrorKind::internal, source_, "cannot initialise the CSV parser");
  st_->parser_live = true;
  CsvRow head;
  if (!pull(head)) throw_invalid(source_ + ":1", "empty CSV file", "a header row");
  header_ = std::move(head.fields);
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < header_.size(); ++i) {
    header_[i] = trim(header_[i]);
    if (!seen.emplace(header_[i], i).second)
      throw_invalid(source_ + ":1", "duplicate column '" + header_[i] + "'", "unique column names");
  }
  st_->header = header_;
  st_->header_read = true;
}

std::string csv_field_at(std::string_view text, std::size_t offset) {
  struct Ctx {
    std::vector<std::string> header;
    std::size_t rows = 0;
    std::size_t cells = 0;
  } ctx;
  csv_parser p{};
  if (csv_init(&p, CSV_STRICT | CSV_APPEND_NULL) != 0) return "";
  std::size_t start = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  if (offset < start) offset = start;
  auto on_field = [](void* data, std::size_t len, void* c) {
    auto* x = static_cast<Ctx*>(c);
    if (x->rows == 0) x->header.push_back(trim(std::string_view(static_cast<const char*>(data), len)));
    ++x->cells;
  };
  auto on_row = [](int, void* c) {
    auto* x = static_cast<Ctx*>(c);
    ++x->rows;
    x->cells = 0;
  };
  const std::size_t n = offset - start;
  const bool ok = csv_parse(&p, text.data() + start, n, on_field, on_row, &ctx) == n;
  csv_free(&p);
  return ok ? cell_label(ctx.header, ctx.rows == 0, ctx.cells) : std::string();
}

CsvReader CsvReader::over_text(std::string_view text, std::string source, bool check_text) {
  auto rest = std::make_shared<std::string_view>(text);
  return CsvReader(
      [rest](char* buf, std::size_t cap) {
        const std::size_t n = std::min(cap, rest->size());
        std::memcpy(buf, rest->data(), n);
        rest->remove_prefix(n);
        return n;
      },
      std::move(source), check_text);
}

CsvReader::CsvReader(CsvReader&&) noexcept = default;
CsvReader::~CsvReader() = default;

std::optional<std::size_t> CsvReader::column_index(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return i;
  return std::nullopt;
}

bool CsvReader::pull(CsvRow& row) {
  while (st_->ready.empty())
    if (!st_->feed_line(source_)) return false;
  row = std::move(st_->ready.front());
  st_->ready.pop_front();
  return true;
}

bool CsvReader::next(CsvRow& row) {
  if (!pull(row)) return false;
  if (row.fields.size() != header_.size())
    throw_invalid(where(row), "row has " + std::to_string(row.fields.size()) + " cells",
                  std::to_string(header_.size()) + " cells as in the header");
  return true;
}

CsvTable CsvTable::parse(std::string_view text, std::string source) {
  CsvReader reader = CsvReader::over_text(text, std::move(source));
  CsvTable t;
  t.source_ = reader.source();
  t.header_ = reader.header();
  for (std::size_t i = 0; i < t.header_.size(); ++i) t.index_.emplace(t.header_[i], i);
  CsvRow row;
  while (reader.next(row)) t.rows_.push_back(std::move(row));
  return t;
}

InputFile::InputFile(const std::string& path, std::size_t max_bytes) : path_(path), max_bytes_(max_bytes) {
  // O_NONBLOCK: opening a FIFO without a writer must not hang; the type is checked on the
  // descriptor (no race between a stat and the open).
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw_not_found(path, std::string("cannot open file: ") + std::strerror(errno), "a readable file");
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    throw_not_found(path, std::string("cannot read file: ") + std::strerror(e), "a readable file");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    const char* what = S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : S_ISSOCK(st.st_mode) ? "a socket"
                                                                                                         : "not a regular file";
    throw_invalid(path, std::string("is ") + what, "a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd_);
    throw_invalid(path, "file is " + std::to_string(st.st_size) + " bytes", "at most " + std::to_string(max_bytes) + " bytes");
  }
  size_bytes_ = static_cast<std::size_t>(st.st_size);
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t InputFile::read(char* buf, std::size_t cap) {
  for (;;) {
    const ssize_t n = ::read(fd_, buf, cap);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_not_found(path_, std::string("cannot read file: ") + std::strerror(errno), "a readable file");
    }
    read_bytes_ += static_cast<std::size_t>(n);
    if (read_bytes_ > max_bytes_)  // grew while being read
      throw_invalid(path_, "file is larger than " + std::to_string(max_bytes_) + " bytes", "a smaller file");
    return static_cast<std::size_t>(n);
  }
}

std::string read_text_file(const std::string& path, std::size_t max_bytes) {
  InputFile in(path, max_bytes);
  std::string out;
  out.reserve(in.size_bytes());
  char buf[1 << 16];
  while (const std::size_t n = in.read(buf, sizeof buf)) out.append(buf, n);
  return out;
}

CsvTable CsvTable::read_file(const std::string& path) { return parse(read_text_file(path), path); }

bool CsvTable::has_column(std::string_view name) const { return index_.count(std::string(name)) > 0; }

std::size_t CsvTable::column(std::string_view name) const {
  auto it = index_.find(std::string(name));
  if (it == index_.end())
    throw_invalid(source_ + ":1", "missing column '" + std::string(name) + "'",
                  "a header row with a column named '" + std::string(name) + "'");
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
