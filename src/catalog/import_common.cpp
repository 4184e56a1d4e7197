// Shared helpers of the importers (import_detail.hpp) and the format-independent parts of
// importers.hpp: summary, merge, format names, detection, dispatch, import_file.
#include <charconv>
#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "catalog/filter.hpp"
#include "catalog/import_detail.hpp"
#include "catalog/importers.hpp"
#include "catalog/store.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/csv.hpp"
#include "util/calendar.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::import_detail {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool contains_ci(std::string_view haystack, std::string_view needle) {
  return lower(haystack).find(lower(needle)) != std::string::npos;
}

std::string canonical_provider_id(std::string_view name) {
  std::string slug;
  for (char c : trim(name)) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      slug.push_back(static_cast<char>(std::tolower(u)));
    } else if (!slug.empty() && slug.back() != '-') {
      slug.push_back('-');
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  // The same provider under different names across the bundled sources.
  static const std::map<std::string, std::string, std::less<>> kAliases = {
      {"oracle-cloud", "oci"},       {"oracle", "oci"},          {"vast-ai", "vast"},
      {"vastai", "vast"},            {"jarvislabs", "jarvis-labs"}, {"lambdalabs", "lambda"},
      {"lambda-labs", "lambda"},     {"cudo-compute", "cudo"},   {"oblivus-cloud", "oblivus"},
      {"google-cloud", "gcp"},       {"amazon-web-services", "aws"}, {"microsoft-azure", "azure"},
      // DataCrunch renamed itself Verda (2025); SkyPilot's "verda" catalog lists DataCrunch
      // instance names (UpstreamCloudId "1B300.30V"), tardellirs also says "verda".
      {"datacrunch", "verda"},
  };
  if (auto it = kAliases.find(slug); it != kAliases.end()) return it->second;
  return slug;
}

namespace {
std::string id_part(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '/') out += "%2F";
    else out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

/// The place an offer came from, for errors: the file place of its first observation's locator
/// (locator_place: "FILE:LINE", not "SOURCE (FILE:LINE)", trial46).
std::string origin(const Offer& o) {
  for (const PriceObservation& p : o.prices)
    if (!p.source.locator.empty()) return locator_place(p.source.locator);
  return o.id;
}

}  // namespace

/// The place in the file of an observation's locator, for an error's where: the generic formats'
/// locator is "SOURCE (FILE:LINE)" (import_generic.cpp: the row's source cell, then its place),
/// which put the user's source text first ("q (r.csv:2): observed_at ..."; trial 10): the text in
/// the last balanced parentheses. Another locator (FILE:LINE, URL#pointer) is returned as it is.
std::string locator_place(const std::string& locator) {
  if (locator.empty() || locator.back() != ')') return locator;
  int depth = 0;
  for (std::size_t i = locator.size(); i-- > 0;) {
    if (locator[i] == ')') ++depth;
    if (locator[i] == '(' && --depth == 0) {
      if (i >= 1 && locator[i - 1] == ' ') return locator.substr(i + 1, locator.size() - i - 2);
      break;
    }
  }
  return locator;
}

std::string hardware_text(const Offer& o) {
  return fmt::format("{} x {}", o.gpu_count, o.gpu_name ? *o.gpu_name : o.gpu_name_raw);
}

std::string make_offer_id(const Offer& o) {
  std::string id = id_part(o.provider) + "/" + id_part(o.instance_type) + "/" + id_part(o.region);
  if (!o.zone.empty()) id += "/" + id_part(o.zone);
  return id;
}

bool same_machine(const Offer& a, const Offer& b) {
  if (a.gpu_count != b.gpu_count) return false;
  if (a.gpu_name && b.gpu_name) return *a.gpu_name == *b.gpu_name;
  // One side resolved and the other not: the raw names may still be the same part; only the
  // count can be compared safely.
  if (a.gpu_name || b.gpu_name) return true;
  if (norm_gpu_name(a.gpu_name_raw) == norm_gpu_name(b.gpu_name_raw)) return true;
  // Neither name is in the GPU catalog in force (a --gpus-file without this part): the bundled
  // catalog's aliases still tell whether two sources' spellings ("A100-80GB", "A100 SXM 80GB")
  // name one part. Unknown to both catalogs and spelled differently: two machines.
  const GpuCatalog& bundled = GpuCatalog::bundled();
  const GpuSpec* sa = bundled.try_find(a.gpu_name_raw, a.gpu_memory_bytes);
  const GpuSpec* sb = bundled.try_find(b.gpu_name_raw, b.gpu_memory_bytes);
  return sa != nullptr && sa == sb;
}

void check_same_hardware(const Offer& a, const Offer& b) {
  if (same_machine(a, b)) return;
  throw Error(ErrorKind::invalid_input, origin(b),
              fmt::format("offer {} is {} here but {} at {}: one instance type cannot be two machines", b.id,
                          hardware_text(b), hardware_text(a), origin(a)),
              "the same GPU model and count for one provider/instance/region, or a distinct instance name");
}

const GpuCatalog& gpu_catalog(const ImportSource& src) {
  return src.gpus != nullptr ? *src.gpus : GpuCatalog::bundled();
}

std::string where_line(const ImportSource& src, std::size_t line) { return fmt::format("{}:{}", src.file, line); }

std::string locator_line(const ImportSource& src, std::size_t line) {
  return fmt::format("{}:{}", src.locator_base.empty() ? src.file : src.locator_base, line);
}

namespace {
std::vector<std::string> tokens(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      cur.push_back(static_cast<char>(std::tolower(u)));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}
}  // namespace

FormHint form_hint(const std::vector<std::string_view>& texts) {
  FormHint h;
  bool sxm = false;
  bool pcie = false;
  for (std::string_view t : texts) {
    for (const std::string& tok : tokens(t)) {
      if (tok.rfind("sxm", 0) == 0 || tok == "hgx") sxm = true;
      if (tok == "pcie") pcie = true;
      if (tok == "nvlink" || tok == "nvl") h.nvlink_named = true;
      // "80gsxm5"-style fusions are not seen in the bundled data; tokens are split on
      // punctuation only.
    }
  }
  if (sxm && !pcie) h.form_factor = "SXM";
  if (pcie && !sxm) h.form_factor = "PCIe";
  return h;
}

namespace {
std::string spec_form_factor(const GpuSpec& spec) {
  if (contains_ci(spec.form_factor, "sxm") || contains_ci(spec.form_factor, "hgx")) return "SXM";
  if (contains_ci(spec.form_factor, "pcie")) return "PCIe";
  if (contains_ci(spec.form_factor, "oam")) return "OAM";
  return {};
}

/// GPU memory as a source gave it, for a message: whole GB from 1 GB up ("80 GB"); below, MiB
/// when it is a whole number of MiB (a feed that counts in MiB, vast's `gpu_ram`: 80 MiB is a GB
/// value read as MiB, trial9c), else MB. {:.0f} GB printed "0 GB" for 80 MiB.
std::string source_memory_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.0f} GB", bytes / 1e9);
  const double mib = bytes / (1024.0 * 1024.0);
  if (mib == std::floor(mib)) return fmt::format("{:.0f} MiB", mib);
  return fmt::format("{:.3g} MB", bytes / 1e6);
}

bool memory_matches(const GpuSpec& spec, const std::optional<double>& memory_bytes) {
  if (!memory_bytes || spec.memory_bytes <= 0) return true;
  return std::fabs(*memory_bytes - spec.memory_bytes) <= 0.2 * spec.memory_bytes;
}
}  // namespace

namespace {
std::vector<std::string> name_tries(const std::vector<std::string>& candidates, const FormHint& hint,
                                    const std::optional<double>& memory_bytes) {
  std::vector<std::string> tries;
  for (const std::string& c : candidates) {
    if (c.empty()) continue;
    if (!hint.form_factor.empty()) tries.push_back(c + " " + hint.form_factor);
    if (memory_bytes) {
      tries.push_back(fmt::format("{} {:.0f}GB", c, *memory_bytes / 1e9));
      if (!hint.form_factor.empty())
        tries.push_back(fmt::format("{} {} {:.0f}GB", c, hint.form_factor, *memory_bytes / 1e9));
    }
    tries.push_back(c);
  }
  return tries;
}
}  // namespace

const GpuSpec* match_gpu_memory(const std::vector<std::string>& candidates, const FormHint& hint, double memory_bytes,
                                const ImportSource& src) {
  const GpuCatalog& gpus = gpu_catalog(src);
  for (const std::string& t : name_tries(candidates, hint, memory_bytes)) {
    const GpuSpec* s = gpus.try_find(t);
    if (s != nullptr && memory_matches(*s, memory_bytes)) return s;
  }
  return nullptr;
}

const GpuSpec* resolve_gpu(Offer& offer, const std::vector<std::string>& candidates, const FormHint& hint,
                           ImportBatch& batch, const ImportSource& src, const std::string& where) {
  const GpuCatalog& gpus = gpu_catalog(src);
  const std::vector<std::string> tries = name_tries(candidates, hint, offer.gpu_memory_bytes);
  const GpuSpec* first = nullptr;
  const GpuSpec* chosen = nullptr;
  for (const std::string& t : tries) {
    const GpuSpec* s = gpus.try_find(t);
    if (s == nullptr) continue;
    if (first == nullptr) first = s;
    if (memory_matches(*s, offer.gpu_memory_bytes)) {
      chosen = s;
      break;
    }
  }
  if (chosen == nullptr && first != nullptr) {
    chosen = first;
    // Less memory than the resolved part (e.g. a 20 GB MIG slice of an A100 80GB) would let the
    // planner assume memory that is not there: exclude. More memory (a 48 GB modded 4090) only
    // makes the plan pessimistic: flag.
    const bool less = *offer.gpu_memory_bytes < first->memory_bytes;
    report(batch, &offer, where, import_rule::kGpuMemoryMismatch,
           fmt::format("source says {} per GPU but '{}' resolves to {} with {:.0f} GB; {}",
                       source_memory_text(*offer.gpu_memory_bytes), offer.gpu_name_raw, first->name,
                       first->memory_bytes / 1e9,
                       less ? "less memory than that GPU: kept out of rankings" : "kept that GPU"),
           false, less);
  }

  // Form factor and intra-node link: names first, then the spec.
  offer.form_factor = hint.form_factor;
  if (offer.form_factor.empty() && chosen != nullptr) offer.form_factor = spec_form_factor(*chosen);
  if (hint.nvlink_named || offer.form_factor == "SXM") {
    offer.intra_node_link = IntraNodeLink::nvlink;
  } else if (chosen != nullptr && !chosen->has_gpu_link()) {
    offer.intra_node_link = IntraNodeLink::pcie;
  } else if (offer.form_factor == "PCIe" && chosen == nullptr) {
    offer.intra_node_link = IntraNodeLink::pcie;
  } else if (offer.form_factor == "PCIe" && chosen != nullptr && spec_form_factor(*chosen) == "PCIe") {
    // A PCIe card whose spec lists an NVLink bridge: the bridge is optional, so unknown.
    offer.intra_node_link = IntraNodeLink::unknown;
  } else if (offer.form_factor == "PCIe") {
    offer.intra_node_link = IntraNodeLink::pcie;
  }
  if (offer.intra_node_link == IntraNodeLink::nvlink && chosen != nullptr && chosen->has_gpu_link())
    offer.intra_node_link_bytes_per_s = chosen->gpu_link_bytes_per_s;

  if (chosen == nullptr) {
    offer.gpu_name.reset();
    report(batch, &offer, where, import_rule::kUnresolvedGpu,
           fmt::format("GPU name '{}' is not in the hardware catalog (`gpuplan gpus`); kept but not ranked",
                       offer.gpu_name_raw),
           false, true);
    return nullptr;
  }
  offer.gpu_name = chosen->name;
  return chosen;
}

void report(ImportBatch& batch, Offer* offer, const std::string& where, std::string_view rule, std::string detail,
            bool rejected, bool excludes) {
  if (offer != nullptr) {
    offer->flags.push_back(QualityFlag{std::string(rule), fmt::format("{}: {}", where, detail), excludes});
  }
  batch.issues.push_back(ImportIssue{where, std::string(rule), std::move(detail), rejected});
}

void check_price(ImportBatch& batch, Offer& offer, PriceKind kind, double usd_per_hour, const std::string& where) {
  if (usd_per_hour == 0) {
    report(batch, &offer, where, import_rule::kZeroPrice,
           fmt::format("{} price is $0/h: not a real price; offer kept out of rankings", price_kind_name(kind)), false,
           true);
    return;
  }
  if (offer.gpu_count <= 0) return;
  const double per_gpu = usd_per_hour / offer.gpu_count;
  if (per_gpu > 100.0 || per_gpu < 0.01) {
    report(batch, &offer, where, import_rule::kImplausiblePerGpuPrice,
           fmt::format("{} price ${:.6g}/h for {} GPU(s) is ${:.4g} per GPU-hour, outside the plausible "
                       "$0.01..$100 range; offer kept out of rankings",
                       price_kind_name(kind), usd_per_hour, offer.gpu_count, per_gpu),
           false, true);
  }
}

void add_price(Offer& offer, PriceKind kind, double usd_per_hour, SourceRef source) {
  offer.prices.push_back(PriceObservation{offer.id, kind, usd_per_hour, std::move(source), std::nullopt});
}

void add_checked_price(ImportBatch& batch, Offer& offer, PriceKind kind, double usd_per_hour, SourceRef source,
                       const std::string& where) {
  add_price(offer, kind, usd_per_hour, std::move(source));
  check_price(batch, offer, kind, usd_per_hour, where);
}

namespace {
bool price_before(const PriceObservation& a, const PriceObservation& b) {
  if (a.source.observed_at.has_value() != b.source.observed_at.has_value()) return !a.source.observed_at;
  if (!a.source.observed_at) return false;
  return *a.source.observed_at < *b.source.observed_at;
}

/// Identity of an observation within an offer (the store's observations_identity index).
/// Built by appends (fmt::format here was ~7% of a 200,000-row parse: issue 11); the price is
/// written shortest-round-trip (std::to_chars), so equal doubles give equal keys.
std::string observation_key(const std::string& offer_id, const PriceObservation& p) {
  const std::string_view kind = price_kind_name(p.kind);
  const std::string_view date = p.source.observed_at ? std::string_view(*p.source.observed_at) : std::string_view();
  char price[32];
  const auto [end, ec] = std::to_chars(price, price + sizeof price, p.usd_per_hour);
  const std::size_t price_len = ec == std::errc() ? static_cast<std::size_t>(end - price) : 0;
  std::string key;
  key.reserve(offer_id.size() + kind.size() + price_len + date.size() + p.source.dataset.size() + 4);
  key.append(offer_id).push_back('\x1f');
  key.append(kind).push_back('\x1f');
  key.append(price, price_len).push_back('\x1f');
  key.append(date).push_back('\x1f');
  key.append(p.source.dataset);
  return key;
}

/// Adds p to a's prices (kept sorted oldest first, stable) unless an identical one is known.
void add_observation(Offer& a, PriceObservation p, std::unordered_set<std::string>& keys) {
  p.offer_id = a.id;
  if (!keys.insert(observation_key(a.id, p)).second) return;
  // Rows usually come in date order: appending is the common case; otherwise insert after
  // the equal ones (what a stable sort of the appended vector gives).
  auto at = std::upper_bound(a.prices.begin(), a.prices.end(), p, price_before);
  a.prices.insert(at, std::move(p));
}

void merge_facts(Offer& a, Offer& b);
}  // namespace

void merge_offer(Offer& a, Offer b) {
  check_same_hardware(a, b);
  std::unordered_set<std::string> keys;
  for (const PriceObservation& q : a.prices) keys.insert(observation_key(a.id, q));
  for (PriceObservation& p : b.prices) add_observation(a, std::move(p), keys);
  merge_facts(a, b);
}

void merge_offer_facts(Offer& a, Offer b) { merge_facts(a, b); }

namespace {
void merge_facts(Offer& a, Offer& b) {
  for (QualityFlag& f : b.flags) {
    bool dup = std::any_of(a.flags.begin(), a.flags.end(),
                           [&](const QualityFlag& g) { return g.rule == f.rule && g.detail == f.detail; });
    if (!dup) a.flags.push_back(std::move(f));
  }
  if (!a.gpu_name) {
    a.gpu_name = b.gpu_name;
    // The unresolved flag no longer applies once another source resolved the GPU.
    if (a.gpu_name)
      a.flags.erase(std::remove_if(a.flags.begin(), a.flags.end(),
                                   [](const QualityFlag& f) { return f.rule == import_rule::kUnresolvedGpu; }),
                    a.flags.end());
  }
  // Every other fact a does not know comes from b (the rule a store applies to a stored offer);
  // of two availability confirmations the later one stands.
  const bool later_confirmation = b.confirmed_available_at && a.confirmed_available_at &&
                                  *b.confirmed_available_at > *a.confirmed_available_at;
  keep_known_facts(a, b);
  if (later_confirmation) a.confirmed_available_at = b.confirmed_available_at;
}

}  // namespace

namespace {
/// Brings batch.offer_index and batch.observation_keys in step with batch.offers when other
/// code changed the offers (O(n), never in the importers' own row loop).
void sync_index(ImportBatch& batch) {
  if (batch.offer_index.size() == batch.offers.size()) return;
  batch.offer_index.clear();
  batch.observation_keys.clear();
  for (std::size_t i = 0; i < batch.offers.size(); ++i) {
    const Offer& o = batch.offers[i];
    batch.offer_index.emplace(o.id, i);
    for (const PriceObservation& p : o.prices) batch.observation_keys.insert(observation_key(o.id, p));
  }
}
}  // namespace

void add_offer(ImportBatch& batch, Offer offer) {
  if (offer.id.empty()) offer.id = make_offer_id(offer);
  sync_index(batch);
  auto it = batch.offer_index.find(offer.id);
  if (it == batch.offer_index.end()) {
    std::vector<PriceObservation> prices = std::move(offer.prices);
    offer.prices.clear();
    batch.offer_index.emplace(offer.id, batch.offers.size());
    batch.offers.push_back(std::move(offer));
    Offer& added = batch.offers.back();
    for (PriceObservation& p : prices) add_observation(added, std::move(p), batch.observation_keys);
    return;
  }
  Offer& a = batch.offers[it->second];
  check_same_hardware(a, offer);
  for (PriceObservation& p : offer.prices) add_observation(a, std::move(p), batch.observation_keys);
  merge_facts(a, offer);
}

std::optional<double> cell_number(std::string_view text, const std::string& where, std::string_view column) {
  try {
    return parse_optional_double(text, where);
  } catch (const Error&) {
    throw Error(ErrorKind::invalid_input, where, fmt::format("column {}: '{}' is not a number", column, text),
                "a decimal number such as 12.5, or an empty cell");
  }
}

std::optional<double> cell_price(std::string_view text, const std::string& where, std::string_view column) {
  std::string_view t = trim(text);
  if (!t.empty() && t.front() == '$') t = trim(t.substr(1));
  std::optional<double> v;
  try {
    v = parse_optional_double(t, where);
  } catch (const Error&) {
    throw Error(ErrorKind::invalid_input, where, fmt::format("column {}: '{}' is not a price", column, text),
                "a price in USD per hour such as 12.5 or $12.5, or an empty cell");
  }
  if (v && *v < 0) {
    throw Error(ErrorKind::invalid_input, where, fmt::format("column {}: price {} is negative", column, *v),
                "a price >= 0");
  }
  return v;
}

std::optional<double> cell_gb(std::string_view text, const std::string& where, std::string_view column) {
  const std::string_view t = trim(text);
  if (t.empty()) return std::nullopt;
  std::size_t end = 0;
  while (end < t.size() && (std::isdigit(static_cast<unsigned char>(t[end])) || t[end] == '.')) ++end;
  const std::string unit = lower(trim(t.substr(end)));
  struct Unit {
    std::string_view name;
    double gb;
  };
  static constexpr Unit kUnits[] = {{"", 1.0},
                                    {"gb", 1.0},
                                    {"mb", 1e-3},
                                    {"tb", 1e3},
                                    {"gib", 1.073741824},
                                    {"mib", 1.048576e-3},
                                    {"tib", 1099.511627776}};
  const Unit* u = nullptr;
  for (const Unit& k : kUnits)
    if (k.name == unit) u = &k;
  if (end == 0 || u == nullptr) {
    throw Error(ErrorKind::invalid_input, where, fmt::format("column {}: '{}' is not a memory size", column, text),
                "a number of GB, optionally with a unit: 16, 16GB, 16 GiB, 512 MiB, 1 TB");
  }
  const std::optional<double> v = cell_number(t.substr(0, end), where, column);
  return *v * u->gb;
}

std::optional<std::pair<double, double>> parse_range(std::string_view text) {
  const std::string_view t = trim(text);
  const auto dash = t.find('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  try {
    const auto lo = parse_optional_double(t.substr(0, dash), "");
    const auto hi = parse_optional_double(t.substr(dash + 1), "");
    if (lo && hi && *lo <= *hi) return std::make_pair(*lo, *hi);
  } catch (const Error&) {
  }
  return std::nullopt;
}

int cell_count(std::string_view text, const std::string& where, std::string_view column, int min_count,
               std::string_view noun) {
  // Text that is no number at all ("four") gets the count's own message, not "a decimal number
  // such as 12.5" (new-user trial 9: 12.5 is no GPU count either).
  std::optional<double> v;
  try {
    v = parse_optional_double(text, where);
  } catch (const Error&) {
    v.reset();
  }
  if (!v || *v < min_count || *v != std::floor(*v) || *v > 1e6) {
    throw Error(ErrorKind::invalid_input, where, fmt::format("column {}: '{}' is not a {}", column, text, noun),
                fmt::format("a whole number from {} to 1000000 such as 8 or 8.0", min_count));
  }
  return static_cast<int>(*v);
}

nlohmann::json parse_json(std::string_view text, const ImportSource& src) {
  // Strict: positions for syntax errors and 1e400, duplicate keys and control characters
  // rejected (util/text_check.hpp).
  return parse_json_strict(text, src.file);
}

bool is_iso_date(std::string_view s) {
  auto digits = [&](std::size_t from, std::size_t n) {
    if (s.size() < from + n) return false;
    for (std::size_t i = from; i < from + n; ++i)
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    return true;
  };
  // A real calendar day (2026-02-30 and 2025-02-29 are not): util/calendar.hpp.
  if (!date_prefix_days_since_epoch(s)) return false;
  if (s.size() == 10) return true;
  // YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM), clock fields range-checked (T25:00:00Z is not a
  // time). Offset rule: a timestamp must say its offset (Z or ±HH:MM, |offset| <= 14:00); its
  // date is the date as written (local to that offset), which is what filters and staleness read.
  auto two = [&](std::size_t from) { return (s[from] - '0') * 10 + (s[from + 1] - '0'); };
  if (!(s[10] == 'T' && digits(11, 2) && s.size() > 15 && s[13] == ':' && digits(14, 2))) return false;
  if (two(11) > 23 || two(14) > 59) return false;
  std::size_t i = 16;
  if (i < s.size() && s[i] == ':') {
    if (!digits(i + 1, 2) || two(i + 1) > 59) return false;
    i += 3;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    }
  }
  if (i < s.size() && s[i] == 'Z') return i + 1 == s.size();
  if (i < s.size() && (s[i] == '+' || s[i] == '-'))
    return s.size() == i + 6 && digits(i + 1, 2) && s[i + 3] == ':' && digits(i + 4, 2) &&
           two(i + 1) * 60 + two(i + 4) <= 14 * 60 && two(i + 4) <= 59;
  return false;
}

}  // namespace gpuplan::import_detail

namespace gpuplan {

using namespace import_detail;

std::vector<ImportRuleCount> ImportBatch::summary() const {
  std::map<std::string, ImportRuleCount> by_rule;
  for (const ImportIssue& i : issues) {
    ImportRuleCount& c = by_rule[i.rule];
    c.rule = i.rule;
    if (i.rejected) {
      ++c.rejected;
    } else {
      ++c.flagged;
    }
  }
  std::vector<ImportRuleCount> out;
  out.reserve(by_rule.size());
  for (auto& [rule, c] : by_rule) out.push_back(c);
  return out;
}

const Offer* ImportBatch::find(std::string_view offer_id) const {
  if (offer_index.size() == offers.size()) {
    auto it = offer_index.find(std::string(offer_id));
    if (it != offer_index.end() && it->second < offers.size() && offers[it->second].id == offer_id)
      return &offers[it->second];
    if (it == offer_index.end()) return nullptr;
  }
  for (const Offer& o : offers)
    if (o.id == offer_id) return &o;
  return nullptr;
}

namespace {
constexpr std::pair<ImportFormat, std::string_view> kFormatNames[] = {
    {ImportFormat::skypilot_vms_csv, "skypilot-vms-csv"},
    {ImportFormat::fsdl_cloud_gpus_csv, "fsdl-cloud-gpus-csv"},
    {ImportFormat::fsdl_serverless_gpus_csv, "fsdl-serverless-gpus-csv"},
    {ImportFormat::tardellirs_offerings_json, "tardellirs-offerings-json"},
    {ImportFormat::ewyluda_index_history_csv, "ewyluda-index-history-csv"},
    {ImportFormat::ewyluda_observations_csv, "ewyluda-observations-csv"},
    {ImportFormat::gpuhunt_tpu_pricing_json, "gpuhunt-tpu-pricing-json"},
    {ImportFormat::generic_csv, "generic-csv"},
    {ImportFormat::generic_json, "generic-json"},
};

std::string format_list() {
  std::string s;
  for (const auto& [f, n] : kFormatNames) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

std::string first_line(std::string_view text) {
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF) text.remove_prefix(3);  // UTF-8 BOM
  const auto nl = text.find('\n');
  std::string line(text.substr(0, nl));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

/// How much of a file import_file reads to tell a CSV's format (its header line).
constexpr std::size_t kDetectHeadBytes = std::size_t{1} << 16;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
}  // namespace

std::string_view import_format_name(ImportFormat f) noexcept {
  for (const auto& [format, name] : kFormatNames)
    if (format == f) return name;
  return "generic-csv";
}

std::optional<ImportFormat> parse_import_format(std::string_view name) noexcept {
  for (const auto& [format, n] : kFormatNames)
    if (n == name) return format;
  return std::nullopt;
}

ImportFormat detect_import_format(std::string_view path, std::string_view text) {
  // An empty file (or only blanks) has no format to tell, .csv or .json (trial11: it read
  // "cannot tell the offer file's format"; trial11b: a .json one "unexpected end of input").
  if (trim(text).empty())
    throw Error(ErrorKind::invalid_input, std::string(path), "the file is empty",
                "a .csv or .json file in one of: " + format_list());
  const std::string p = lower(path);
  if (ends_with(p, ".csv")) {
    const std::string header = first_line(text);
    const std::vector<std::string> cols = [&] {
      std::vector<std::string> out;
      std::string cur;
      for (char c : header) {
        if (c == ',') {
          out.push_back(cur);
          cur.clear();
        } else {
          cur.push_back(c);
        }
      }
      out.push_back(cur);
      return out;
    }();
    auto has = [&](std::string_view c) { return std::find(cols.begin(), cols.end(), c) != cols.end(); };
    if (has("InstanceType") && has("AcceleratorName") && has("Price")) return ImportFormat::skypilot_vms_csv;
    if (has("Cloud") && has("GPU Type") && has("On-demand")) return ImportFormat::fsdl_cloud_gpus_csv;
    if (has("Vendor") && has("GPU Type") && has("Per-Hour")) return ImportFormat::fsdl_serverless_gpus_csv;
    if (has("date") && has("gpu_model") && has("series") && has("usd_per_gpu_hour"))
      return ImportFormat::ewyluda_index_history_csv;
    if (has("collected_at") && has("gpu_model") && has("sku") && has("usd_per_hour") && has("sample_size"))
      return ImportFormat::ewyluda_observations_csv;
    if (has("provider") && (has("usd_per_hour") || has("usd_per_gpu_hour"))) return ImportFormat::generic_csv;
  } else if (ends_with(p, ".json")) {
    const std::string_view t = trim(text);
    if (!t.empty() && t.front() == '[' && t.find("\"provider_id\"") != std::string_view::npos &&
        t.find("\"price_usd_hour\"") != std::string_view::npos)
      return ImportFormat::tardellirs_offerings_json;
    if (t.find("\"On Demand (USD)\"") != std::string_view::npos) return ImportFormat::gpuhunt_tpu_pricing_json;
    if (t.find("\"offers\"") != std::string_view::npos) return ImportFormat::generic_json;
    // Not recognised: a broken file is reported with its parse position, not as an unknown format.
    (void)parse_json_strict(text, std::string(path));
  }
  throw Error(ErrorKind::invalid_input, std::string(path), "cannot tell the offer file's format from its name and header",
              "a .csv or .json file in one of: " + format_list() + " (or pass the format explicitly)");
}

ImportBatch import_text(std::string_view text, ImportFormat format, const ImportSource& src) {
  // UTF-8, no control characters: file:line:col of the first bad byte, and the field that holds
  // it (a CSV's column; a JSON file's pointer, from the strict parse that checks each string: the
  // first string with a problem in key order, the same one when a file has one).
  const bool csv = ends_with(import_format_name(format), "-csv");
  check_text_file(text, src.file, [&](std::size_t offset) -> std::string {
    if (csv) return csv_field_at(text, offset);
    try {
      (void)parse_json_strict(text, src.file);
    } catch (const Error& e) {
      const std::string prefix = src.file + ": /";
      if (e.where().rfind(prefix, 0) == 0) return "field " + e.where().substr(src.file.size() + 2);
    }
    return "";
  });
  switch (format) {
    case ImportFormat::skypilot_vms_csv: return import_skypilot_vms_csv(text, src);
    case ImportFormat::fsdl_cloud_gpus_csv: return import_fsdl_cloud_gpus_csv(text, src);
    case ImportFormat::fsdl_serverless_gpus_csv: return import_fsdl_serverless_gpus_csv(text, src);
    case ImportFormat::tardellirs_offerings_json: return import_tardellirs_offerings_json(text, src);
    case ImportFormat::ewyluda_index_history_csv: return import_ewyluda_index_history_csv(text, src);
    case ImportFormat::ewyluda_observations_csv: return import_ewyluda_observations_csv(text, src);
    case ImportFormat::gpuhunt_tpu_pricing_json: return import_gpuhunt_tpu_pricing_json(text, src);
    case ImportFormat::generic_csv: return import_generic_csv(text, src);
    case ImportFormat::generic_json: return import_generic_json(text, src);
  }
  throw Error(ErrorKind::internal, src.file, "unknown import format");
}

ImportBatch import_file(const std::string& path, std::optional<ImportFormat> format) {
  ImportBatch all;
  bool first = true;
  import_file_chunks(path, format, std::numeric_limits<std::size_t>::max(), [&](ImportBatch& b) {
    if (first) all = std::move(b);
    else merge_batch(all, std::move(b));
    first = false;
  });
  return all;
}

void import_file_chunks(const std::string& path, std::optional<ImportFormat> format, std::size_t chunk_rows,
                        const std::function<void(ImportBatch&)>& sink) {
  InputFile in(path);
  // The head decides a CSV's format (its header line); the rest is streamed or read whole.
  std::string head(std::min<std::size_t>(in.size_bytes() + 1, kDetectHeadBytes), '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const std::size_t n = in.read(head.data() + got, head.size() - got);
    if (n == 0) break;
    got += n;
  }
  head.resize(got);
  const bool whole = got < kDetectHeadBytes;  // the head is the whole file
  const bool header_in_head = head.find('\n') != std::string::npos || whole;
  std::optional<ImportFormat> f = format;
  if (!f && header_in_head && ends_with(lower(path), ".csv")) f = detect_import_format(path, head);
  ImportSource src;
  src.file = path;
  src.locator_base = path;
  const auto slash = path.find_last_of('/');
  const std::string batch_dataset = "user:" + (slash == std::string::npos ? path : path.substr(slash + 1));
  if (f == ImportFormat::generic_csv) {
    src.dataset = "user:" + std::string(import_format_name(*f));
    std::size_t head_pos = 0;
    CsvReader rows(
        [&](char* buf, std::size_t cap) -> std::size_t {
          if (head_pos < head.size()) {
            const std::size_t n = std::min(cap, head.size() - head_pos);
            std::memcpy(buf, head.data() + head_pos, n);
            head_pos += n;
            return n;
          }
          return in.read(buf, cap);
        },
        path, /*check_text=*/true);
    import_generic_csv_chunks(rows, src, chunk_rows, [&](ImportBatch& b) {
      b.dataset = batch_dataset;
      sink(b);
    });
    return;
  }
  std::string text = std::move(head);
  char buf[1 << 16];
  while (const std::size_t n = in.read(buf, sizeof buf)) text.append(buf, n);
  if (!f) f = detect_import_format(path, text);
  // Observations are identified without the file name (the same quote from two files is one
  // observation): "user:<format>"; gpuplan's own quotes use "user:<row's source>".
  src.dataset = "user:" + std::string(import_format_name(*f));
  ImportBatch batch = import_text(text, *f, src);
  batch.dataset = batch_dataset;
  text = std::string();  // the text is not needed while the batch is written
  sink(batch);
}

void merge_batch(ImportBatch& into, ImportBatch from) {
  std::unordered_map<std::string, std::size_t> index;
  index.reserve(into.offers.size() + from.offers.size());
  for (std::size_t i = 0; i < into.offers.size(); ++i) index.emplace(into.offers[i].id, i);
  for (Offer& o : from.offers) {
    if (o.id.empty()) o.id = make_offer_id(o);
    if (auto it = index.find(o.id); it != index.end()) {
      merge_offer(into.offers[it->second], std::move(o));
    } else {
      index.emplace(o.id, into.offers.size());
      into.offers.push_back(std::move(o));
    }
  }
  for (ImportIssue& i : from.issues) into.issues.push_back(std::move(i));
  into.rows_read += from.rows_read;
  // add_offer's lookup state no longer matches: rebuilt on its next use.
  into.offer_index.clear();
  into.observation_keys.clear();
  if (into.dataset.empty()) into.dataset = from.dataset;
}

}  // namespace gpuplan
