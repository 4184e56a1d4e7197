#include "cli/common.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "catalog/providers.hpp"
#include "catalog/open_store.hpp"
#include "catalog/sqlite_store.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/text_check.hpp"
#include "util/display_width.hpp"

namespace gpuplan::cli {

const GpuCatalog& gpu_catalog(const GlobalOptions& global) {
  if (global.gpus_file.empty()) return GpuCatalog::bundled();
  static std::unique_ptr<GpuCatalog> loaded;
  static std::string loaded_path;
  if (!loaded || loaded_path != global.gpus_file) {
    loaded = std::make_unique<GpuCatalog>(GpuCatalog::load_file(global.gpus_file));
    loaded_path = global.gpus_file;
  }
  return *loaded;
}

namespace {

/// Identity and state of one file ("-" when absent): changes on every write, truncation or rename over it.
std::string file_version(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return "-";
  return fmt::format("{}:{}:{}.{}", st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

}  // namespace

api::Context make_context(const GlobalOptions& global, bool cache_catalog, std::size_t store_connections) {
  static const SystemClock clock;
  const GpuCatalog& gpus = gpu_catalog(global);
  std::string db = global.db_path;
  const StoreUrl url = parse_store_url(db);
  // The store once opened (owned by the Context, which outlives every call of `version`).
  auto opened = std::make_shared<std::atomic<OfferStore*>>(nullptr);
  api::Context::DataVersion version;
  if (cache_catalog) {
    if (url.backend == StoreBackend::postgresql) {
      // Shared by many processes: the revision every committed import raises (one key read).
      version = [opened] {
        OfferStore* s = opened->load();
        return s ? "rev:" + std::to_string(s->revision()) : std::string("unopened");
      };
    } else if (url.target == ":memory:") {
      version = [] { return std::string("memory"); };  // only this process writes it, and the server does not
    } else {
      // SQLite in WAL mode: a commit by another process appends to PATH-wal; a checkpoint writes PATH.
      const std::string path = url.target;
      version = [path] { return file_version(path) + "|" + file_version(path + "-wal"); };
    }
  }
  return api::Context(
      gpus, bundled_providers(), clock,
      [&gpus, db, store_connections, opened]() -> std::unique_ptr<OfferStore> {
        StoreOptions opts;
        opts.connections = store_connections;
        std::unique_ptr<OfferStore> s = open_store(db, StoreContext{gpus, clock}, opts);
        opened->store(s.get());
        return s;
      },
      std::move(version));
}

void TextTable::drop_column(std::size_t col) {
  if (col >= header.size()) return;
  const auto at = static_cast<std::ptrdiff_t>(col);
  header.erase(header.begin() + at);
  if (col < right_align.size()) right_align.erase(right_align.begin() + at);
  for (auto& row : rows)
    if (col < row.size()) row.erase(row.begin() + at);
}

bool TextTable::drop_column(std::string_view name) {
  const auto at = std::find(header.begin(), header.end(), name);
  if (at == header.end()) return false;
  drop_column(static_cast<std::size_t>(at - header.begin()));
  return true;
}

std::string TextTable::render() const {
  // A cell may hold several lines ('\n'): the row is as tall as its tallest cell, each column as
  // wide as its widest line.
  auto lines_of = [](const std::string& cell) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t nl = cell.find('\n'); nl != std::string::npos; nl = cell.find('\n', start)) {
      out.push_back(cell.substr(start, nl - start));
      start = nl + 1;
    }
    out.push_back(cell.substr(start));
    return out;
  };
  std::vector<std::size_t> width(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size() && i < width.size(); ++i) {
      // Display columns, not bytes or code points: Thai marks take none, CJK characters two.
      for (const auto& l : lines_of(cells[i])) width[i] = std::max(width[i], display_width(l));
    }
  };
  measure(header);
  for (const auto& r : rows) measure(r);
  auto line = [&](const std::vector<std::string>& cells) {
    std::vector<std::vector<std::string>> split(width.size());
    std::size_t height = 1;
    for (std::size_t i = 0; i < width.size(); ++i) {
      split[i] = lines_of(i < cells.size() ? cells[i] : "");
      height = std::max(height, split[i].size());
    }
    std::string out;
    for (std::size_t k = 0; k < height; ++k) {
      std::string text;
      for (std::size_t i = 0; i < width.size(); ++i) {
        const std::string cell = k < split[i].size() ? split[i][k] : "";
        const bool right = i < right_align.size() && right_align[i];
        text += pad_to_width(cell, width[i], right);
        if (i + 1 < width.size()) text += "  ";
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
    return out;
  };
  std::string out = line(header);
  std::size_t total = 0;
  for (auto w : width) total += w + 2;
  out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string format_gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

std::string or_unknown(const std::optional<std::string>& s) { return s ? *s : "unknown"; }

namespace {
// "" when `text` is a number in decimal digits, else the validator's message.
std::string decimal_number_error(const std::string& text) {
  if (parse_decimal(text)) return {};
  return "'" + text + "' is not a number written in decimal digits";
}

// "" when `text` is an integer in decimal digits (an optional leading '-' and digits only), else
// the message the model flags give ("--tp: '2.5' is not an integer").
std::string integer_error(const std::string& text) {
  const std::size_t start = !text.empty() && text.front() == '-' ? 1 : 0;
  const bool digits = text.size() > start && std::all_of(text.begin() + static_cast<std::ptrdiff_t>(start), text.end(),
                                                          [](char c) { return c >= '0' && c <= '9'; });
  return digits ? std::string() : "'" + text + "' is not an integer";
}
}  // namespace

const CLI::Validator& decimal_number_check() {
  static const CLI::Validator check([](std::string& text) { return decimal_number_error(text); }, "");
  return check;
}

const CLI::Validator& integer_check() {
  static const CLI::Validator check([](std::string& text) { return integer_error(text); }, "");
  return check;
}

const CLI::Validator& non_negative_count_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        if (std::string error = integer_error(text); !error.empty()) return error;
        if (text.find('-') == 0) return text + " is negative";
        return {};
      },
      "");
  return check;
}

}  // namespace gpuplan::cli
