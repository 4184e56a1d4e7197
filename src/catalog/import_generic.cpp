// gpuplan's own user-quote format, CSV and JSON (docs/import-format.md).
#include <cmath>
#include <limits>
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <set>

#include <fmt/format.h>

#include "catalog/import_detail.hpp"
#include "catalog/importers.hpp"
#include "util/calendar.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan {

using namespace import_detail;

namespace {

enum class FieldType { text, number };
struct FieldDef {
  std::string_view name;
  FieldType type;
  bool required;
};

// Keep in sync with docs/import-format.md.
constexpr FieldDef kFields[] = {
    {"provider", FieldType::text, true},
    {"instance_type", FieldType::text, true},
    {"region", FieldType::text, false},
    {"zone", FieldType::text, false},
    {"gpu", FieldType::text, true},
    {"gpu_count", FieldType::number, true},
    {"gpu_memory_gb", FieldType::number, false},
    {"vcpus", FieldType::number, false},
    {"ram_gb", FieldType::number, false},
    {"local_disk_gb", FieldType::number, false},
    {"price_kind", FieldType::text, true},
    {"usd_per_hour", FieldType::number, false},
    {"usd_per_gpu_hour", FieldType::number, false},
    {"observed_at", FieldType::text, true},
    {"source", FieldType::text, true},
    {"interconnect", FieldType::text, false},
    {"form_factor", FieldType::text, false},
    {"network", FieldType::text, false},
    {"network_gbps", FieldType::number, false},
    {"max_nodes", FieldType::number, false},
    {"min_nodes", FieldType::number, false},
    {"confirmed_available_at", FieldType::text, false},
    {"billing_granularity_seconds", FieldType::number, false},
    {"billing_minimum_seconds", FieldType::number, false},
    {"storage_usd_per_gb_month", FieldType::number, false},
    {"egress_usd_per_gb", FieldType::number, false},
    {"egress_free_gb_per_month", FieldType::number, false},
    {"preemptions_per_day", FieldType::number, false},
    {"billing_source", FieldType::text, false},
    {"notes", FieldType::text, false},
};

/// Field indices, in kFields order.
enum F : std::size_t {
  k_provider,
  k_instance_type,
  k_region,
  k_zone,
  k_gpu,
  k_gpu_count,
  k_gpu_memory_gb,
  k_vcpus,
  k_ram_gb,
  k_local_disk_gb,
  k_price_kind,
  k_usd_per_hour,
  k_usd_per_gpu_hour,
  k_observed_at,
  k_source,
  k_interconnect,
  k_form_factor,
  k_network,
  k_network_gbps,
  k_max_nodes,
  k_min_nodes,
  k_confirmed_available_at,
  k_billing_granularity_seconds,
  k_billing_minimum_seconds,
  k_storage_usd_per_gb_month,
  k_egress_usd_per_gb,
  k_egress_free_gb_per_month,
  k_preemptions_per_day,
  k_billing_source,
  k_notes,
  kFieldCount
};
static_assert(kFieldCount == std::size(kFields));

const FieldDef* field_def(std::string_view name) {
  for (const FieldDef& f : kFields)
    if (f.name == name) return &f;
  return nullptr;
}

std::string field_list() {
  std::string s;
  for (const FieldDef& f : kFields) {
    if (!s.empty()) s += ", ";
    s += f.name;
  }
  return s;
}

/// One record: cell text per field index ("" = absent), viewing the row's cells (CSV) or the
/// record's own strings (JSON): no per-row map or copies (issue 11: linear, fast import).
using Record = std::array<std::string_view, kFieldCount>;

struct Place {
  std::string row_where;   ///< "file:line" or "file: /offers/3"
  std::string locator;     ///< file:line or file#/offers/3
  bool json = false;
  std::size_t pos = 0;     ///< the CSV line, or the JSON offer's index
  std::string where(std::string_view field) const {
    return json ? fmt::format("{}/{}", row_where, field) : row_where;
  }
};

std::string_view getv(const Record& r, F key) { return trim(r[key]); }
std::string get(const Record& r, F key) { return std::string(getv(r, key)); }

std::optional<double> number(const Record& r, F key, const Place& p) {
  const std::string_view text = getv(r, key);
  if (text.empty()) return std::nullopt;
  return cell_number(text, p.where(kFields[key].name), kFields[key].name);
}

void require_nonneg(const std::optional<double>& v, std::string_view key, const Place& p) {
  if (v && *v < 0) {
    throw Error(ErrorKind::invalid_input, p.where(key), fmt::format("{} is negative", key), "a number >= 0");
  }
}

/// Accepted ranges of the numbers a quote gives (validation bounds, not data): a price above a
/// million USD per hour is no instance's (1e308 per GPU-hour overflowed to "price inf"), and an
/// instance preempted more than once a minute (1,440 per day) runs nothing — a trial's 1e9 was
/// accepted and the planner later said the rate was missing.
constexpr double kMaxUsdPerHour = 1e6;
constexpr double kMaxPreemptionsPerDay = 1440;
/// A billing granularity is at least a second and at most the longest commitment a quote can have
/// (reserved-3y: 3 × 365 days = 94,608,000 s, docs/import-format.md).
constexpr double kMaxGranularitySeconds = 3.0 * 365 * 86400;

/// Rejects the row (Error{invalid_input} at file:line, naming the field, the value as written
/// and the accepted range) when the field's number lies outside [lo, hi].
void require_range(const std::optional<double>& v, const Record& r, F key, const Place& p, double lo, double hi,
                   std::string_view unit) {
  if (!v || (*v >= lo && *v <= hi)) return;
  const std::string_view name = kFields[key].name;
  throw Error(ErrorKind::invalid_input, p.where(name),
              // The range once, in the expected part (trial 10: "... is out of range: accepted 0 to
              // 1000000 USD per hour (expected: usd_per_hour from 0 to 1000000 USD per hour)").
              fmt::format("{} {} is out of range", name, trim(r[key])), fmt::format("{} from {} to {} {}", name, lo, hi, unit));
}

/// GPU resolution of one import, cached by what resolve_gpu reads (the raw name, the form
/// hint and the stated memory): 200,000 quotes of one GPU resolve it once. Only clean
/// resolutions (no flag, no issue) are cached; the others are resolved, and reported, per row.
struct ResolvedGpu {
  std::optional<std::string> gpu_name;
  std::string form_factor;
  IntraNodeLink intra_node_link = IntraNodeLink::unknown;
  std::optional<double> intra_node_link_bytes_per_s;
};
using GpuCache = std::unordered_map<std::string, ResolvedGpu>;

void resolve_gpu_cached(Offer& o, const FormHint& hint, ImportBatch& batch, const ImportSource& src,
                        const std::string& where, GpuCache& cache) {
  std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}", o.gpu_name_raw, hint.form_factor, hint.nvlink_named,
                                o.gpu_memory_bytes ? fmt::format("{}", *o.gpu_memory_bytes) : std::string("-"));
  if (auto it = cache.find(key); it != cache.end()) {
    o.gpu_name = it->second.gpu_name;
    o.form_factor = it->second.form_factor;
    o.intra_node_link = it->second.intra_node_link;
    o.intra_node_link_bytes_per_s = it->second.intra_node_link_bytes_per_s;
    return;
  }
  const std::size_t flags = o.flags.size(), issues = batch.issues.size();
  resolve_gpu(o, {o.gpu_name_raw}, hint, batch, src, where);
  if (o.flags.size() == flags && batch.issues.size() == issues)
    cache.emplace(std::move(key), ResolvedGpu{o.gpu_name, o.form_factor, o.intra_node_link, o.intra_node_link_bytes_per_s});
}

/// One file's prices by (offer id, price kind, observed_at) (new-user trial 9: two different
/// prices for one offer, kind and date in one file were both stored, and the later row silently
/// became the offer's price). Two rows with one key and one price are the same quote (one
/// observation, or two when their sources differ); two prices are contradictory evidence: the
/// file is refused at the later row, naming the earlier one and both prices. Rows of another
/// machine (GPU count or GPU) are left to the hardware check. Kept across a streamed file's
/// chunks: about 150 bytes per distinct key.
class PriceLedger {
 public:
  void check(const Offer& o, PriceKind kind, const std::optional<std::string>& observed_at, double usd_per_hour,
             std::string_view field, const Place& p, const ImportSource& src) {
    std::string key;
    const std::string_view kind_name = price_kind_name(kind);
    key.reserve(o.id.size() + kind_name.size() + (observed_at ? observed_at->size() : 0) + 2);
    key.append(o.id).push_back('\x1f');
    key.append(kind_name).push_back('\x1f');
    if (observed_at) key.append(*observed_at);  // "" = unknown (a date is never empty)
    const std::uint64_t machine = machine_hash(o);
    const auto [it, added] = seen_.try_emplace(std::move(key), Seen{usd_per_hour, p.pos, machine});
    // Another machine under this id is the hardware check's error (both rows named there).
    if (added || it->second.machine != machine || same_price(it->second.usd_per_hour, usd_per_hour)) return;
    const std::string earlier =
        p.json ? fmt::format("{}: /offers/{}", src.file, it->second.pos) : fmt::format("{}:{}", src.file, it->second.pos);
    const std::string when = observed_at ? "observed_at " + *observed_at : std::string("observed_at unknown");
    throw Error(ErrorKind::invalid_input, p.where(field),
                fmt::format("offer {} {} {}: {:.10g} USD/h here and {:.10g} USD/h at {} (two prices for one quote)",
                            o.id, kind_name, when, usd_per_hour, it->second.usd_per_hour, earlier),
                "one price per offer, price_kind and observed_at in a file: correct the wrong row, or give each "
                "price the time it was seen (observed_at YYYY-MM-DDTHH:MM:SSZ)");
  }

 private:
  /// Equal up to the rounding of a per-GPU price times the count (2.1 × 3 and 6.3).
  static bool same_price(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }
  /// The row's machine (GPU count and GPU, resolved or as written).
  static std::uint64_t machine_hash(const Offer& o) {
    const std::string& gpu = o.gpu_name ? *o.gpu_name : o.gpu_name_raw;
    return std::hash<std::string>{}(gpu) * 1000003u + static_cast<std::uint64_t>(o.gpu_count);
  }
  struct Seen {
    double usd_per_hour;
    std::size_t pos;
    std::uint64_t machine;
  };
  std::unordered_map<std::string, Seen> seen_;
};

void import_record(const Record& r, const Place& p, const ImportSource& src, ImportBatch& batch, GpuCache& gpu_cache,
                   PriceLedger& ledger) {
  ++batch.rows_read;
  for (std::size_t i = 0; i < kFieldCount; ++i) {
    const FieldDef& f = kFields[i];
    if (f.required && getv(r, static_cast<F>(i)).empty() && i != k_observed_at) {
      throw Error(ErrorKind::invalid_input, p.where(f.name), fmt::format("required field {} is empty", f.name),
                  "a value (see docs/import-format.md)");
    }
  }
  Offer o;
  o.provider = canonical_provider_id(get(r, k_provider));
  o.instance_type = get(r, k_instance_type);
  o.region = get(r, k_region);
  o.zone = get(r, k_zone);
  o.gpu_name_raw = get(r, k_gpu);
  const std::string count_text = get(r, k_gpu_count);
  // One message for 0 and 8.5, with the range accepted (8.5 said "a whole number >= 0" although 0
  // was refused by a second check).
  o.gpu_count = cell_count(count_text, p.where("gpu_count"), "gpu_count", 1);
  o.id = make_offer_id(o);

  const std::string kind_text = lower(get(r, k_price_kind));
  PriceKind kind = PriceKind::on_demand;
  bool kind_ok = false;
  for (PriceKind k : kPriceKinds) {
    if (kind_text == price_kind_name(k)) {
      kind = k;
      kind_ok = true;
    }
  }
  if (!kind_ok) {
    throw Error(ErrorKind::invalid_input, p.where("price_kind"), fmt::format("unknown price_kind '{}'", kind_text),
                "one of on-demand, spot, reserved-1w, reserved-1m, reserved-3m, reserved-6m, reserved-1y, reserved-3y");
  }
  const std::optional<double> per_hour = number(r, k_usd_per_hour, p);
  const std::optional<double> per_gpu_hour = number(r, k_usd_per_gpu_hour, p);
  if (per_hour.has_value() == per_gpu_hour.has_value()) {
    throw Error(ErrorKind::invalid_input, p.where("usd_per_hour"),
                "give exactly one of usd_per_hour (whole instance) and usd_per_gpu_hour",
                "one price: usd_per_hour or usd_per_gpu_hour");
  }
  require_range(per_hour, r, k_usd_per_hour, p, 0, kMaxUsdPerHour, "USD per hour");
  require_range(per_gpu_hour, r, k_usd_per_gpu_hour, p, 0, kMaxUsdPerHour, "USD per GPU-hour");
  const double usd_per_hour = per_hour ? *per_hour : *per_gpu_hour * o.gpu_count;
  // The instance price the GPU price makes is held to the same bound (trial50 #15: 1,000,000 GPUs
  // at $100 per GPU-hour was stored as a $1e8-per-hour instance).
  if (!per_hour && usd_per_hour > kMaxUsdPerHour)
    throw Error(ErrorKind::invalid_input, p.where("usd_per_gpu_hour"),
                fmt::format("usd_per_gpu_hour {} × gpu_count {} = {:.10g} USD per instance-hour is out of range",
                            trim(r[k_usd_per_gpu_hour]), o.gpu_count, usd_per_hour),
                fmt::format("usd_per_gpu_hour × gpu_count from 0 to {:.0f} USD per hour", kMaxUsdPerHour));

  std::optional<std::string> observed_at;
  const std::string date = get(r, k_observed_at);
  if (!date.empty() && lower(date) != "unknown") {
    if (!is_iso_date(date)) {
      throw Error(ErrorKind::invalid_input, p.where("observed_at"), fmt::format("observed_at '{}' is not a date", date),
                  "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, or empty/unknown");
    }
    // 0000-01-01 made an offer 740,319 days old (trial11): util/calendar.hpp kEarliestDate.
    if (before_earliest_date(date))
      throw Error(ErrorKind::invalid_input, p.where("observed_at"),
                  fmt::format("'{}' is before {}, the earliest observation date accepted", date, kEarliestDate),
                  fmt::format("a date from {} on (no cloud GPU offer is older), or empty/unknown", kEarliestDate));
    observed_at = date;
  }
  const std::string confirmed = get(r, k_confirmed_available_at);
  if (!confirmed.empty()) {
    if (!is_iso_date(confirmed)) {
      throw Error(ErrorKind::invalid_input, p.where("confirmed_available_at"),
                  fmt::format("confirmed_available_at '{}' is not a date", confirmed), "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ");
    }
    if (before_earliest_date(confirmed))
      throw Error(ErrorKind::invalid_input, p.where("confirmed_available_at"),
                  fmt::format("'{}' is before {}, the earliest date accepted", confirmed, kEarliestDate),
                  fmt::format("a date from {} on", kEarliestDate));
    o.confirmed_available_at = confirmed;
  }

  if (auto v = number(r, k_gpu_memory_gb, p)) o.gpu_memory_bytes = *v * 1e9;
  if (auto v = number(r, k_vcpus, p)) o.vcpus = *v;
  if (auto v = number(r, k_ram_gb, p)) o.ram_bytes = *v * 1e9;
  if (auto v = number(r, k_local_disk_gb, p)) o.local_disk_bytes = *v * 1e9;

  FormHint hint = form_hint({o.gpu_name_raw, o.instance_type});
  const std::string ff = lower(get(r, k_form_factor));
  if (!ff.empty()) {
    if (ff == "sxm") {
      hint.form_factor = "SXM";
    } else if (ff == "pcie") {
      hint.form_factor = "PCIe";
    } else if (ff == "oam") {
      hint.form_factor = "OAM";
    } else {
      throw Error(ErrorKind::invalid_input, p.where("form_factor"), fmt::format("unknown form_factor '{}'", ff),
                  "SXM, PCIe or OAM");
    }
  }
  const std::string ic = lower(get(r, k_interconnect));
  if (!ic.empty() && ic != "nvlink" && ic != "pcie" && ic != "unknown") {
    throw Error(ErrorKind::invalid_input, p.where("interconnect"), fmt::format("unknown interconnect '{}'", ic),
                "nvlink, pcie or unknown");
  }
  if (ic == "nvlink") hint.nvlink_named = true;
  resolve_gpu_cached(o, hint, batch, src, p.row_where, gpu_cache);
  if (ic == "pcie") {
    o.intra_node_link = IntraNodeLink::pcie;
    o.intra_node_link_bytes_per_s.reset();
  }

  const std::string net = lower(get(r, k_network));
  if (net == "ethernet") {
    o.inter_node_network = InterNodeNetwork::ethernet;
  } else if (net == "roce") {
    o.inter_node_network = InterNodeNetwork::roce;
  } else if (net == "infiniband") {
    o.inter_node_network = InterNodeNetwork::infiniband;
  } else if (!net.empty() && net != "unknown") {
    throw Error(ErrorKind::invalid_input, p.where("network"), fmt::format("unknown network '{}'", net),
                "ethernet, roce, infiniband or unknown");
  }
  if (auto v = number(r, k_network_gbps, p)) {
    require_nonneg(v, "network_gbps", p);
    o.inter_node_bits_per_s = *v * 1e9;
  }
  // A node count like gpu_count: "four", 0 and 2.5 get one message with the range accepted.
  if (!getv(r, k_max_nodes).empty()) o.max_nodes = cell_count(getv(r, k_max_nodes), p.where("max_nodes"), "max_nodes", 1, "node count");
  // The fewest nodes the offer is sold as (a reserved cluster of >= N nodes): never above the
  // most nodes offered together.
  if (!getv(r, k_min_nodes).empty()) {
    o.min_nodes = cell_count(getv(r, k_min_nodes), p.where("min_nodes"), "min_nodes", 1, "node count");
    if (o.max_nodes && *o.min_nodes > *o.max_nodes)
      throw Error(ErrorKind::invalid_input, p.where("min_nodes"),
                  fmt::format("column min_nodes: {} is more than max_nodes {}: the offer cannot be rented", *o.min_nodes,
                              *o.max_nodes),
                  "min_nodes <= max_nodes (the fewest and the most nodes rented together)");
  }

  const std::string billing_source = get(r, k_billing_source).empty() ? get(r, k_source) : get(r, k_billing_source);
  // Override sources are named by the BillingTerms field they set ("granularity_seconds: ...").
  auto billing = [&](F key, std::string_view term, std::optional<double>& into) {
    if (auto v = number(r, key, p)) {
      require_nonneg(v, kFields[key].name, p);
      into = *v;
      o.billing_override.sources.push_back(
          fmt::format("{}: {} ({})", term, billing_source, observed_at ? *observed_at : std::string("unknown")));
    }
  };
  BillingTerms& b = o.billing_override;
  // A granularity is a billing unit: 0 s bills nothing (the planner then assumed per-second
  // billing without a word). At most the longest term a quote can have (reserved-3y).
  require_range(number(r, k_billing_granularity_seconds, p), r, k_billing_granularity_seconds, p, 1, kMaxGranularitySeconds,
                "seconds");
  billing(k_billing_granularity_seconds, "granularity_seconds", b.granularity_seconds);
  // A minimum billed time is at most the longest term a quote can have, too (trial53 #12: 1e12 s,
  // 31,700 years, was imported and priced a 36-minute job at $5.8e9).
  require_range(number(r, k_billing_minimum_seconds, p), r, k_billing_minimum_seconds, p, 0, kMaxGranularitySeconds,
                "seconds");
  billing(k_billing_minimum_seconds, "minimum_billed_seconds", b.minimum_billed_seconds);
  billing(k_storage_usd_per_gb_month, "storage_usd_per_gb_month", b.storage_usd_per_gb_month);
  billing(k_egress_usd_per_gb, "egress_usd_per_gb", b.egress_usd_per_gb);
  billing(k_egress_free_gb_per_month, "egress_free_gb_per_month", b.egress_free_gb_per_month);
  require_range(number(r, k_preemptions_per_day, p), r, k_preemptions_per_day, p, 0, kMaxPreemptionsPerDay,
                "per instance-day (at most one a minute)");
  billing(k_preemptions_per_day, "preemptions_per_day", b.preemptions_per_day);

  // The row's own source names the observation (not the file it came in): the same quote
  // imported from two files is one observation.
  const std::string dataset = src.dataset.rfind("user:", 0) == 0 ? "user:" + get(r, k_source) : src.dataset;
  // After the row's own checks and the GPU's resolution: a row of another machine under the
  // same id is refused as such (check_same_hardware, here or in the store's writer), not as a
  // second price.
  ledger.check(o, kind, observed_at, usd_per_hour, per_hour ? "usd_per_hour" : "usd_per_gpu_hour", p, src);
  const SourceRef ref{dataset, fmt::format("{} ({})", get(r, k_source), p.locator), observed_at};
  add_checked_price(batch, o, kind, usd_per_hour, ref, p.row_where);
  add_offer(batch, std::move(o));
}

}  // namespace

ImportBatch import_generic_csv(std::string_view text, const ImportSource& src) {
  CsvReader reader = CsvReader::over_text(text, src.file);
  return import_generic_csv(reader, src);
}

ImportBatch import_generic_csv(CsvReader& reader, const ImportSource& src) {
  ImportBatch all;
  all.dataset = src.dataset;
  bool first = true;
  import_generic_csv_chunks(reader, src, std::numeric_limits<std::size_t>::max(), [&](ImportBatch& b) {
    if (first) all = std::move(b);  // one chunk: the whole file
    else merge_batch(all, std::move(b));
    first = false;
  });
  return all;
}

void import_generic_csv_chunks(CsvReader& reader, const ImportSource& src, std::size_t chunk_rows,
                               const std::function<void(ImportBatch&)>& sink) {
  std::vector<F> field_of_column;
  for (const std::string& col : reader.header()) {
    const FieldDef* f = field_def(col);
    if (f == nullptr) {
      throw Error(ErrorKind::invalid_input, src.file + ":1", fmt::format("unknown column '{}'", col),
                  "only columns " + field_list());
    }
    field_of_column.push_back(static_cast<F>(f - kFields));
  }
  for (const FieldDef& f : kFields) {
    if (f.required && !reader.column_index(f.name)) {
      throw Error(ErrorKind::invalid_input, src.file + ":1", fmt::format("missing column '{}'", f.name),
                  "the required columns provider, instance_type, gpu, gpu_count, price_kind, observed_at, source "
                  "and usd_per_hour or usd_per_gpu_hour");
    }
  }
  if (!reader.column_index("usd_per_hour") && !reader.column_index("usd_per_gpu_hour")) {
    throw Error(ErrorKind::invalid_input, src.file + ":1", "no price column",
                "a usd_per_hour or usd_per_gpu_hour column");
  }
  ImportBatch batch;
  // A chunk's room is taken once (no reallocation moving its offers): issue 11.
  const auto start_chunk = [&] {
    batch.dataset = src.dataset;
    if (chunk_rows <= (std::size_t{1} << 20)) {
      batch.offers.reserve(chunk_rows);
      batch.offer_index.reserve(chunk_rows);
      batch.observation_keys.reserve(chunk_rows);
    }
  };
  start_chunk();
  GpuCache gpu_cache;  // kept across chunks
  PriceLedger ledger;  // the whole file's prices: a contradiction across chunks is found too
  CsvRow row;
  std::size_t in_chunk = 0;
  bool sunk = false;
  while (reader.next(row)) {
    Record rec{};
    for (std::size_t i = 0; i < field_of_column.size(); ++i) rec[field_of_column[i]] = row.fields[i];
    Place p{reader.where(row), locator_line(src, row.line), false, row.line};
    import_record(rec, p, src, batch, gpu_cache, ledger);
    if (++in_chunk >= chunk_rows) {
      sink(batch);
      sunk = true;
      batch = ImportBatch{};
      start_chunk();
      in_chunk = 0;
    }
  }
  if (in_chunk > 0 || !sunk) sink(batch);
}

ImportBatch import_generic_json(std::string_view text, const ImportSource& src) {
  ImportBatch batch;
  batch.dataset = src.dataset;
  GpuCache gpu_cache;
  PriceLedger ledger;
  // Each offer is imported as soon as the parser has read it, then its JSON dropped (issue 11:
  // the document of 200,000 offers was held whole); errors keep their "file: /offers/i/key"
  // (and syntax errors their file:line:col).
  auto import_offer = [&](std::size_t i, nlohmann::json& o) {
    const std::string pointer = fmt::format("/offers/{}", i);
    if (!o.is_object()) {
      throw Error(ErrorKind::invalid_input, src.file + ": " + pointer, "offer is not an object", "{\"provider\": ...}");
    }
    std::array<std::string, kFieldCount> cells;  // the record's own text; rec views it
    Record rec{};
    for (auto& [key, value] : o.items()) {
      const FieldDef* f = field_def(key);
      const std::string where = fmt::format("{}: {}/{}", src.file, pointer, key);
      if (f == nullptr) {
        throw Error(ErrorKind::invalid_input, where, fmt::format("unknown key '{}'", key), "only keys " + field_list());
      }
      if (value.is_null()) continue;
      if (f->type == FieldType::number) {
        if (!value.is_number()) throw Error(ErrorKind::invalid_input, where, "not a number", "a JSON number");
        cells[static_cast<std::size_t>(f - kFields)] = value.dump();
      } else {
        if (!value.is_string()) throw Error(ErrorKind::invalid_input, where, "not a string", "a JSON string");
        cells[static_cast<std::size_t>(f - kFields)] = std::move(value.get_ref<std::string&>());
      }
      rec[static_cast<std::size_t>(f - kFields)] = cells[static_cast<std::size_t>(f - kFields)];
    }
    if (!o.contains("observed_at")) {
      throw Error(ErrorKind::invalid_input, src.file + ": " + pointer + "/observed_at", "missing key observed_at",
                  "the date the price was seen (YYYY-MM-DD), or \"unknown\"");
    }
    Place p{src.file + ": " + pointer, (src.locator_base.empty() ? src.file : src.locator_base) + "#" + pointer, true, i};
    import_record(rec, p, src, batch, gpu_cache, ledger);
  };
  const nlohmann::json doc = parse_json_strict(text, src.file, "offers", import_offer);
  const std::string top = src.file + ": /";
  if (!doc.is_object()) {
    throw Error(ErrorKind::invalid_input, top, "top level is not an object",
                "{\"format\": \"gpuplan-offers/1\", \"offers\": [ ... ]}");
  }
  for (const auto& [key, value] : doc.items()) {
    if (key != "format" && key != "offers") {
      throw Error(ErrorKind::invalid_input, top + key, fmt::format("unknown key '{}'", key), "only format and offers");
    }
  }
  if (doc.contains("format") && doc.at("format") != "gpuplan-offers/1") {
    throw Error(ErrorKind::invalid_input, top + "format", "unsupported format", "\"gpuplan-offers/1\"");
  }
  if (!doc.contains("offers") || !doc.at("offers").is_array()) {
    throw Error(ErrorKind::invalid_input, top + "offers", "missing or not a list", "\"offers\": [ {...}, ... ]");
  }
  return batch;
}

}  // namespace gpuplan
