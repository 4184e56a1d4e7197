#include "hardware/gpu_spec.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <set>
#include <utility>

#include "util/csv.hpp"
#include "util/embedded.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {

std::string_view dtype_name(Dtype d) noexcept {
  switch (d) {
    case Dtype::fp32: return "fp32";
    case Dtype::tf32: return "tf32";
    case Dtype::bf16: return "bf16";
    case Dtype::fp16: return "fp16";
    case Dtype::fp8: return "fp8";
    case Dtype::int8: return "int8";
    case Dtype::fp4: return "fp4";
  }
  return "unknown";
}

bool GpuSpec::is_hbm() const {
  if (memory_type.size() < 3) return false;
  // ASCII case folding (c | 0x20 maps 'H' and 'h' alike, and no other byte to 'h'): the planner
  // asks this for every step-time estimate, and std::toupper is a locale call per character.
  return (memory_type[0] | 0x20) == 'h' && (memory_type[1] | 0x20) == 'b' && (memory_type[2] | 0x20) == 'm';
}

// ---------------------------------------------------------------------------------------------
// Name normalisation
// ---------------------------------------------------------------------------------------------
namespace {

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// "80", "80.5" -> value; else nullopt.
std::optional<double> plain_number(std::string_view s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front()))) return std::nullopt;
  int dots = 0;
  for (char c : s) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return std::nullopt;
    }
  }
  if (dots > 1 || s.back() == '.') return std::nullopt;
  return std::strtod(std::string(s).c_str(), nullptr);
}

bool is_memory_unit(std::string_view s) { return s == "gb" || s == "g" || s == "gib"; }

/// "80gb", "80g", "80gib" -> 80; else nullopt.
std::optional<double> fused_memory_token(std::string_view s) {
  for (std::string_view unit : {std::string_view("gib"), std::string_view("gb"), std::string_view("g")}) {
    if (s.size() > unit.size() && s.substr(s.size() - unit.size()) == unit) {
      if (auto v = plain_number(s.substr(0, s.size() - unit.size()))) return v;
    }
  }
  return std::nullopt;
}

bool is_dropped_word(std::string_view t) {
  static const std::set<std::string_view> words = {
      "nvidia", "amd",  "intel", "habana", "google", "geforce", "tesla", "instinct", "hgx", "gpu", "generation",
      "hbm",    "hbm2", "hbm2e", "hbm3",   "hbm3e",  "gddr5",   "gddr5x", "gddr6",   "gddr6x", "gddr7"};
  return words.count(t) > 0;
}

std::size_t levenshtein(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

GpuNameKey normalize_gpu_name(std::string_view name) {
  // Tokenise on everything that is not a letter, digit or '.', lower-cased.
  std::vector<std::string> tokens;
  std::string cur;
  auto flush = [&] {
    // Dots only matter inside numbers ("1.5"); strip them at the ends ("freq.").
    while (!cur.empty() && cur.back() == '.') cur.pop_back();
    while (!cur.empty() && cur.front() == '.') cur.erase(cur.begin());
    if (!cur.empty()) tokens.push_back(cur);
    cur.clear();
  };
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '.') {
      cur.push_back(static_cast<char>(std::tolower(c)));
    } else {
      flush();
    }
  }
  flush();

  GpuNameKey out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (auto mem = fused_memory_token(t)) {
      if (!out.memory_gb) out.memory_gb = mem;
      continue;
    }
    if (auto num = plain_number(t); num && i + 1 < tokens.size() && is_memory_unit(tokens[i + 1])) {
      if (!out.memory_gb) out.memory_gb = num;
      ++i;
      continue;
    }
    if (t == "gb" || t == "gib") continue;
    if (is_dropped_word(t)) continue;
    if (t.size() == 4 && t.rfind("sxm", 0) == 0 && is_digits(t.substr(3))) {
      out.key += "sxm";
      continue;
    }
    for (char c : t)
      if (c != '.') out.key.push_back(c);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// CSV parsing
// ---------------------------------------------------------------------------------------------
namespace {

struct RowReader {
  const CsvTable& table;
  const CsvRow& row;

  std::string where_col(std::string_view column) const {
    return table.where(row) + ": column " + std::string(column);
  }
  std::string text(std::string_view column) const {
    auto v = table.cell_if(row, column);
    return v ? *v : std::string();
  }
  std::string required_text(std::string_view column) const {
    std::string v = text(column);
    auto first = v.find_first_not_of(" \t");
    if (first == std::string::npos) throw_invalid(where_col(column), "empty", "a non-empty text");
    return v;
  }
  /// Optional number; when `positive` it must be > 0, else >= 0.
  std::optional<double> number(std::string_view column, bool positive) const {
    if (!table.has_column(column)) return std::nullopt;
    // The location string is built only for an error (the bundled catalog's ~2,000 cells are
    // parsed at every start; building "gpus.csv:N: column C" for each was 2.3 M of the 530B
    // plan's 52.8 M instructions, callgrind, issue 7).
    std::optional<double> v;
    try {
      v = parse_optional_double(table.cell(row, column), std::string());
    } catch (const Error& e) {
      throw_invalid(where_col(column), e.message(), e.expected());
    }
    if (v && (*v < 0 || (positive && *v == 0)))
      throw_invalid(where_col(column), fmt::format("{} is out of range", *v),
                    positive ? "a positive number (leave the cell empty when unknown)" : "a non-negative number");
    return v;
  }
  double required_number(std::string_view column, bool positive) const {
    table.column(column);  // throws "missing column" when absent
    auto v = number(column, positive);
    if (!v) throw_invalid(where_col(column), "empty", positive ? "a positive number" : "a non-negative number");
    return *v;
  }
  std::optional<int> integer(std::string_view column) const {
    auto v = number(column, true);
    if (!v) return std::nullopt;
    if (*v != std::floor(*v) || *v > 1e6)
      throw_invalid(where_col(column), fmt::format("{} is not a whole number", *v), "a positive integer");
    return static_cast<int>(*v);
  }
};

std::vector<std::string> split_aliases(const std::string& cell) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    auto b = cur.find_first_not_of(" \t");
    auto e = cur.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char c : cell) {
    if (c == ';') {
      flush();
    } else {
      cur.push_back(c);
    }
  }
  flush();
  return out;
}

// Column names of the per-dtype dense rates, in kAllDtypes order.
constexpr std::array<std::string_view, kAllDtypes.size()> kFlopsColumns = {
    "fp32_tflops", "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops", "fp4_tflops"};

constexpr double kGB = 1e9;        // decimal gigabyte (datasheet convention)
constexpr double kTera = 1e12;     // TFLOPS -> FLOP/s

}  // namespace

GpuCatalog GpuCatalog::parse_csv(std::string_view text, const std::string& source) {
  CsvTable table = CsvTable::parse(text, source);
  // A missing column names the ones a catalog needs (a trial's file without memory_bw_gbps read
  // "missing column 'memory_bw_gbps'" with nothing expected).
  for (std::string_view required : {"name", "vendor", "memory_gb", "memory_bw_gbps", "interconnect_bw_gbps"}) {
    if (!table.has_column(required))
      throw_invalid(source + ":1", fmt::format("missing column '{}'", required),
                    "a header with the columns name, vendor, memory_gb, memory_bw_gbps and interconnect_bw_gbps (the "
                    "others optional; data/gpus.csv's header lists them all)");
  }

  if (table.rows().empty()) throw_invalid(source + ":2", "the GPU catalog has no GPU rows", "at least one GPU row");
  GpuCatalog catalog;
  std::set<std::string> seen_names;
  for (const CsvRow& row : table.rows()) {
    RowReader r{table, row};
    GpuSpec g;
    g.name = r.required_text("name");
    if (!seen_names.insert(g.name).second)
      throw_invalid(r.where_col("name"), "duplicate GPU name '" + g.name + "'", "each name once");
    g.vendor = r.required_text("vendor");
    g.architecture = r.text("architecture");
    g.form_factor = r.text("form_factor");
    g.aliases = split_aliases(r.text("aliases"));
    g.memory_bytes = r.required_number("memory_gb", true) * kGB;
    g.memory_type = r.text("memory_type");
    table.column("memory_bw_gbps");
    g.memory_bandwidth_bytes_per_s = r.number("memory_bw_gbps", true).value_or(0.0) * kGB;
    for (std::size_t i = 0; i < kAllDtypes.size(); ++i) {
      if (auto v = r.number(kFlopsColumns[i], true)) g.dense_flops_per_s[i] = *v * kTera;
    }
    g.interconnect = r.text("interconnect");
    g.gpu_link_bytes_per_s = r.number("interconnect_bw_gbps", false).value_or(0.0) * kGB;
    g.pcie_gen = r.integer("pcie_gen");
    g.tdp_watts = r.number("tdp_w", true);
    g.release_year = r.integer("release_year");
    if (auto mib = r.number("usable_memory_mib", true)) g.usable_memory_bytes = *mib * 1048576.0;
    g.nvlink_domain_gpus = r.integer("nvlink_domain_gpus");
    if (g.nvlink_domain_gpus && g.gpu_link_bytes_per_s <= 0)
      throw_invalid(r.where_col("nvlink_domain_gpus"), "a link domain without a GPU-to-GPU link bandwidth",
                    "an empty cell, or interconnect_bw_gbps > 0");
    {
      const std::string u = r.text("unified_memory");
      if (u == "yes") {
        g.unified_memory = true;
      } else if (!u.empty() && u != "no") {
        throw_invalid(r.where_col("unified_memory"), "'" + u + "'", "yes, no or empty");
      }
    }
    g.source_ids = r.text("source_ids");
    g.uncertain_cells = r.text("uncertain_cells");

    std::vector<std::string> keys;
    auto add_key = [&](const std::string& spelled, std::string_view column) {
      std::string key = normalize_gpu_name(spelled).key;
      if (key.empty())
        throw_invalid(r.where_col(column), "'" + spelled + "' has no letters or digits left after normalising",
                      "a GPU name such as \"H100 SXM\"");
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
    };
    add_key(g.name, "name");
    for (const auto& a : g.aliases) add_key(a, "aliases");
    for (const std::string& k : keys) catalog.rows_by_key_[k].push_back(catalog.gpus_.size());
    catalog.keys_.push_back(std::move(keys));
    catalog.gpus_.push_back(std::move(g));
  }
  return catalog;
}

GpuCatalog GpuCatalog::load_file(const std::string& path) { return parse_csv(read_text_file(path), path); }

const GpuCatalog& GpuCatalog::bundled() {
  static const GpuCatalog catalog = parse_csv(embedded_file_or_throw("gpus.csv"), "gpus.csv");
  return catalog;
}

// ---------------------------------------------------------------------------------------------
// Lookup
// ---------------------------------------------------------------------------------------------

std::vector<std::size_t> GpuCatalog::candidates(std::string_view name, std::optional<double> memory_bytes) const {
  GpuNameKey q = normalize_gpu_name(name);
  std::vector<std::size_t> hits;
  if (q.key.empty()) return hits;
  if (auto it = rows_by_key_.find(q.key); it != rows_by_key_.end()) hits = it->second;
  std::optional<double> want_bytes = memory_bytes;
  if (!want_bytes && q.memory_gb) want_bytes = *q.memory_gb * kGB;
  if (!want_bytes || hits.empty()) return hits;
  auto size_matches = [&](std::size_t i) {
    return std::abs(gpus_[i].memory_bytes - *want_bytes) <= 0.10 * gpus_[i].memory_bytes;
  };
  std::vector<std::size_t> sized;
  for (std::size_t i : hits)
    if (size_matches(i)) sized.push_back(i);
  if (sized.empty()) {
    // Rule 2b: no row of this key has that size; try the key's variants, i.e. rows with a key
    // that extends the query key ("h100" -> "h100nvl"): vast.ai lists its H100 NVL as "H100"
    // with 95830 MiB.
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      bool extends = std::any_of(keys_[i].begin(), keys_[i].end(), [&](const std::string& k) {
        return k.size() > q.key.size() && k.compare(0, q.key.size(), q.key) == 0;
      });
      if (extends && size_matches(i)) sized.push_back(i);
    }
  }
  if (!sized.empty()) hits = std::move(sized);
  return hits;
}

const GpuSpec* GpuCatalog::try_find(std::string_view name) const { return try_find(name, std::nullopt); }

const GpuSpec* GpuCatalog::try_find(std::string_view name, std::optional<double> memory_bytes) const {
  auto hits = candidates(name, memory_bytes);
  return hits.empty() ? nullptr : &gpus_[hits.front()];
}

const GpuSpec& GpuCatalog::find(std::string_view name) const { return find(name, std::nullopt); }

const GpuSpec& GpuCatalog::find(std::string_view name, std::optional<double> memory_bytes) const {
  if (const GpuSpec* g = try_find(name, memory_bytes)) return *g;
  auto near = nearest_names(name, 5);
  std::string expected = "a GPU in the hardware catalog (`gpuplan gpus` lists them)";
  if (!near.empty()) {
    expected = "a known GPU, e.g. ";
    for (std::size_t i = 0; i < near.size(); ++i) expected += (i ? ", " : "") + near[i];
  }
  std::string listed;
  for (std::size_t i = 0; i < near.size(); ++i) listed += (i ? ", " : "") + near[i];
  throw_not_found_coded("GPU '" + std::string(name) + "'", "unknown_gpu", {{"name", std::string(name)}, {"near", listed}},
                        "unknown GPU", expected);
}

std::vector<std::string> GpuCatalog::nearest_names(std::string_view name, std::size_t max_count) const {
  std::string q = normalize_gpu_name(name).key;
  std::vector<std::pair<std::size_t, std::size_t>> scored;  // (distance, row)
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    std::size_t best = std::string::npos;
    for (const auto& k : keys_[i]) best = std::min(best, levenshtein(q, k));
    scored.emplace_back(best, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && out.size() < max_count; ++i) out.push_back(gpus_[scored[i].second].name);
  return out;
}

}  // namespace gpuplan
