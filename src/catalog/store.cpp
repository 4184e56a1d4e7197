#include "catalog/store.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <tuple>
#include <unordered_set>

#include "catalog/freshness.hpp"
#include "catalog/import_detail.hpp"
#include "catalog/store_validate.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/calendar.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {

const std::vector<std::string_view>& offer_sort_keys() {
  static const std::vector<std::string_view> keys = {kSortPricePerGpuHour, kSortPricePerVramGb, kSortBandwidth,
                                                     kSortPrice};
  return keys;
}

void OfferQuery::validate() const {
  validate_query_options(*this);
  (void)Filter::parse(filter);
}

void validate_query_options(const OfferQuery& q) {
  const std::string& sort = q.sort;
  const auto& limit = q.limit;
  const std::string& now_date = q.now_date;
  const double stale_after_days = q.stale_after_days;
  const auto& memory_floor = q.memory_floor;
  const auto& keys = offer_sort_keys();
  if (std::find(keys.begin(), keys.end(), sort) == keys.end()) {
    std::string list;
    for (auto k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
    throw_invalid_coded("sort", "unknown_choice", {{"value", sort}, {"allowed", list}}, "unknown sort key \"" + sort + "\"",
                        "one of " + list);
  }
  if (limit && *limit == 0) throw_invalid_coded("limit", "not_positive", {{"value", "0"}}, "limit is 0", "a positive number of offers");
  if (!now_date.empty() && (now_date.size() != 10 || !days_since_epoch(now_date)))  // YYYY-MM-DD, a calendar day
    throw_invalid_coded("now_date", "not_a_date", {{"value", now_date}}, "\"" + now_date + "\" is not a date", "YYYY-MM-DD");
  if (before_earliest_date(now_date))
    throw_invalid_coded("now_date", "date_before_earliest", {{"value", now_date}, {"earliest", std::string(kEarliestDate)}},
                        "\"" + now_date + "\" is before " + std::string(kEarliestDate) + ", the earliest date accepted",
                        "a date from " + std::string(kEarliestDate) + " on (no cloud GPU offer is older)");
  if (!std::isfinite(stale_after_days) || stale_after_days < 0)
    throw_invalid_coded("stale_after_days", "negative", {{"value", fmt::format("{}", stale_after_days)}},
                        fmt::format("{} is not a valid number of days", stale_after_days), "a non-negative number of days");
  if (q.cheapest_per_plan_class) {
    if (limit) throw_invalid("cheapest_per_plan_class", "a per-class bound with a limit", "no limit (the planner's read)");
    if (*q.cheapest_per_plan_class == 0)
      throw_invalid_coded("cheapest_per_plan_class", "not_positive", {{"value", "0"}}, "0 offers per plan class",
                          "a positive number of offers");
  }
  if (memory_floor) {
    if (limit) throw_invalid("memory_floor", "a memory floor with a limit", "no limit (the planner reads every match)");
    if (!std::isfinite(memory_floor->cluster_bytes) || memory_floor->cluster_bytes < 0 || memory_floor->max_nodes_assumed < 1 ||
        !(memory_floor->slack >= 1))
      throw_invalid("memory_floor", fmt::format("{} bytes, {} nodes, slack {}", memory_floor->cluster_bytes,
                                                memory_floor->max_nodes_assumed, memory_floor->slack),
                    "bytes >= 0, nodes >= 1, slack >= 1");
  }
}

bool passes_memory_floor(const Offer& offer, const OfferMemoryFloor& floor) {
  if (!offer.gpu_memory_bytes || offer.gpu_count < 1) return true;
  double nodes = 1;
  if (floor.multi_node && offer.inter_node_network != InterNodeNetwork::unknown) {
    nodes = offer.max_nodes ? *offer.max_nodes : floor.max_nodes_assumed;
  }
  return *offer.gpu_memory_bytes * offer.gpu_count * std::max(nodes, 1.0) * floor.slack >= floor.cluster_bytes;
}

FilterContext OfferQuery::filter_context(const GpuCatalog* gpus) const {
  FilterContext ctx;
  ctx.price_kind = price_kind;
  ctx.now_date = now_date;
  ctx.stale_after_days = stale_after_days;
  ctx.gpus = gpus;
  return ctx;
}

std::optional<double> offer_sort_value(const Offer& offer, std::string_view sort, PriceKind kind,
                                       const GpuCatalog& gpus) {
  if (sort == kSortBandwidth) {
    if (!offer.gpu_name) return std::nullopt;
    for (const GpuSpec& s : gpus.gpus())
      if (s.name == *offer.gpu_name && s.memory_bandwidth_bytes_per_s > 0) return s.memory_bandwidth_bytes_per_s;
    return std::nullopt;
  }
  const PriceObservation* p = offer.latest_price(kind);
  if (p == nullptr) return std::nullopt;
  if (sort == kSortPrice) return p->usd_per_hour;
  if (offer.gpu_count == 0) return std::nullopt;
  if (sort == kSortPricePerGpuHour) return p->usd_per_hour / offer.gpu_count;
  if (sort == kSortPricePerVramGb) {
    // the offer's memory per GPU, else its GPU model's (as the filter's `vram`)
    std::optional<double> per_gpu = offer.gpu_memory_bytes;
    if (!per_gpu && offer.gpu_name)
      for (const GpuSpec& s : gpus.gpus())
        if (s.name == *offer.gpu_name) per_gpu = s.memory_bytes;
    if (!per_gpu || *per_gpu == 0) return std::nullopt;
    return p->usd_per_hour / (offer.gpu_count * *per_gpu / 1e9);
  }
  return std::nullopt;
}

std::optional<double> usd_per_gpu_hour(const Offer& offer, const PriceObservation& price) {
  if (offer.gpu_count <= 0) return std::nullopt;
  return price.usd_per_hour / offer.gpu_count;
}

bool offer_sort_descending(std::string_view sort) { return sort == kSortBandwidth; }

void check_stored_hardware(const Offer& stored, const Offer& in) {
  if (import_detail::same_machine(stored, in)) return;
  const std::string where = !in.prices.empty() && !in.prices.front().source.locator.empty()
                                ? in.prices.front().source.locator
                                : "import: " + in.id;
  throw Error(ErrorKind::invalid_input, where,
              fmt::format("offer {} is {} here but {} in the store: one instance type cannot be two machines "
                          "(nothing was imported)",
                          in.id, import_detail::hardware_text(in), import_detail::hardware_text(stored)),
              "the same GPU model and count as the stored offer, or a distinct instance name");
}

namespace {
template <class T>
void fill_unknown(std::optional<T>& a, const std::optional<T>& b) {
  if (!a && b) a = b;
}
}  // namespace

void keep_known_facts(Offer& incoming, const Offer& stored) {
  fill_unknown(incoming.gpu_memory_bytes, stored.gpu_memory_bytes);
  fill_unknown(incoming.vcpus, stored.vcpus);
  fill_unknown(incoming.ram_bytes, stored.ram_bytes);
  fill_unknown(incoming.local_disk_bytes, stored.local_disk_bytes);
  if (incoming.intra_node_link == IntraNodeLink::unknown) incoming.intra_node_link = stored.intra_node_link;
  fill_unknown(incoming.intra_node_link_bytes_per_s, stored.intra_node_link_bytes_per_s);
  if (incoming.form_factor.empty()) incoming.form_factor = stored.form_factor;
  if (incoming.inter_node_network == InterNodeNetwork::unknown) incoming.inter_node_network = stored.inter_node_network;
  fill_unknown(incoming.inter_node_bits_per_s, stored.inter_node_bits_per_s);
  fill_unknown(incoming.max_nodes, stored.max_nodes);
  fill_unknown(incoming.min_nodes, stored.min_nodes);
  fill_unknown(incoming.confirmed_available_at, stored.confirmed_available_at);
  BillingTerms& x = incoming.billing_override;
  const BillingTerms& y = stored.billing_override;
  fill_unknown(x.granularity_seconds, y.granularity_seconds);
  fill_unknown(x.minimum_billed_seconds, y.minimum_billed_seconds);
  fill_unknown(x.storage_usd_per_gb_month, y.storage_usd_per_gb_month);
  fill_unknown(x.egress_usd_per_gb, y.egress_usd_per_gb);
  fill_unknown(x.egress_free_gb_per_month, y.egress_free_gb_per_month);
  fill_unknown(x.preemptions_per_day, y.preemptions_per_day);
  // Source lines are named by the field they source ("preemptions_per_day: ..."). A stored line
  // is kept for a field the incoming offer does not source (its value was kept above); a field
  // the incoming offer sources replaces the stored line with its own, so a source re-fetched
  // every few hours keeps one line per field, not one per fetch (issue 9 trial D4: the AWS Spot
  // Advisor line grew by one per accepted snapshot).
  auto field_of = [](const std::string& line) { return line.substr(0, line.find(':')); };
  std::vector<std::string> incoming_fields;
  for (const std::string& src : x.sources) incoming_fields.push_back(field_of(src));
  for (const std::string& src : y.sources)
    if (std::find(incoming_fields.begin(), incoming_fields.end(), field_of(src)) == incoming_fields.end() &&
        std::find(x.sources.begin(), x.sources.end(), src) == x.sources.end())
      x.sources.push_back(src);
}

bool same_offer_facts(const Offer& a, const Offer& b) {
  return a.id == b.id && a.provider == b.provider && a.instance_type == b.instance_type && a.region == b.region &&
         a.zone == b.zone && a.gpu_name_raw == b.gpu_name_raw && a.gpu_name == b.gpu_name &&
         a.gpu_count == b.gpu_count && a.gpu_memory_bytes == b.gpu_memory_bytes && a.vcpus == b.vcpus &&
         a.ram_bytes == b.ram_bytes && a.local_disk_bytes == b.local_disk_bytes &&
         a.intra_node_link == b.intra_node_link && a.intra_node_link_bytes_per_s == b.intra_node_link_bytes_per_s &&
         a.form_factor == b.form_factor && a.inter_node_network == b.inter_node_network &&
         a.inter_node_bits_per_s == b.inter_node_bits_per_s && a.max_nodes == b.max_nodes && a.min_nodes == b.min_nodes &&
         a.confirmed_available_at == b.confirmed_available_at && a.billing_override == b.billing_override &&
         a.flags == b.flags;
}

namespace {
void class_field(std::string& key, const std::optional<double>& v) {
  // fmt::format, not format_to(back_inserter): with Debian's libfmt 9, clang's sanitizer build
  // cannot link the back_insert_iterator instantiation (undefined vformat_to<char>; CI of 4081705).
  key += v ? fmt::format("{}", *v) : std::string("-");
  key += '\x1f';
}
void class_field(std::string& key, std::string_view v) {
  key += v;
  key += '\x1f';
}
}  // namespace

std::int64_t plan_class_of(const Offer& o) {
  // A canonical text of the facts (unit separators between fields), hashed with 64-bit FNV-1a.
  std::string key;
  key.reserve(256);
  class_field(key, o.provider);
  class_field(key, o.instance_type);
  class_field(key, o.region);
  class_field(key, o.zone);
  class_field(key, o.gpu_name_raw);
  class_field(key, o.gpu_name ? std::string_view(*o.gpu_name) : std::string_view("\x1e"));
  class_field(key, std::to_string(o.gpu_count));
  class_field(key, o.gpu_memory_bytes);
  class_field(key, intra_node_link_name(o.intra_node_link));
  class_field(key, o.intra_node_link_bytes_per_s);
  class_field(key, o.form_factor);
  class_field(key, inter_node_network_name(o.inter_node_network));
  class_field(key, o.inter_node_bits_per_s);
  class_field(key, o.max_nodes ? std::to_string(*o.max_nodes) : std::string("-"));
  // Only when set: the classes (and stored hashes) of offers without a minimum stay as before.
  if (o.min_nodes) class_field(key, "min_nodes=" + std::to_string(*o.min_nodes));
  class_field(key, o.confirmed_available_at ? "confirmed" : "listed");
  const BillingTerms& b = o.billing_override;
  for (const auto& v : {b.granularity_seconds, b.minimum_billed_seconds, b.storage_usd_per_gb_month, b.egress_usd_per_gb,
                        b.egress_free_gb_per_month, b.preemptions_per_day})
    class_field(key, v);
  for (const std::string& src : b.sources) class_field(key, src);
  key += '\x1d';
  for (const QualityFlag& f : o.flags) {
    class_field(key, f.rule);
    class_field(key, f.excludes ? "x" : "k");
  }
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;  // FNV-1a 64 prime
  }
  return static_cast<std::int64_t>(h);
}

CleanDateWindow clean_date_window(std::string_view now_date, double stale_after_days) {
  if (now_date.empty()) return {"", "9"};
  CleanDateWindow w;
  w.lo = earliest_unstale_date(now_date, stale_after_days).value_or("");
  w.hi = earliest_unstale_date(now_date, -1).value_or("9");  // now_date + 1 day
  return w;
}

std::vector<Offer> select_cheapest_per_plan_class(std::vector<Offer> matching, std::size_t k, const CleanDateWindow& window) {
  // (kind, class, clean?) -> (price, index in matching)
  std::map<std::tuple<int, std::int64_t, bool>, std::vector<std::pair<double, std::size_t>>> groups;
  for (std::size_t i = 0; i < matching.size(); ++i) {
    const std::int64_t cls = plan_class_of(matching[i]);
    for (PriceKind kind : kPriceKinds) {
      const PriceObservation* p = matching[i].latest_price(kind);
      if (p == nullptr) continue;
      groups[{static_cast<int>(kind), cls, window.contains(p->seen_at())}].emplace_back(p->usd_per_hour, i);
    }
  }
  std::vector<bool> keep(matching.size(), false);
  for (auto& [key, rows] : groups) {
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t j = 0; j < rows.size(); ++j) {
      if (j >= k && rows[j].first != rows[k - 1].first) break;  // the k cheapest, and ties with the k-th
      keep[rows[j].second] = true;
    }
  }
  std::vector<Offer> out;
  for (std::size_t i = 0; i < matching.size(); ++i)
    if (keep[i]) out.push_back(std::move(matching[i]));
  return out;
}

void sort_offers_like_query(std::vector<Offer>& offers, const OfferQuery& q, const GpuCatalog& gpus) {
  struct Hit {
    std::optional<double> key;
    int tier = 0;
    std::size_t index = 0;
  };
  std::vector<Hit> hits;
  hits.reserve(offers.size());
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const int tier = q.evidence_first
                         ? static_cast<int>(price_evidence_tier(offers[i], q.price_kind, q.now_date, q.stale_after_days))
                         : 0;
    hits.push_back({offer_sort_value(offers[i], q.sort, q.price_kind, gpus), tier, i});
  }
  const bool desc = offer_sort_descending(q.sort);
  std::stable_sort(hits.begin(), hits.end(), [&](const Hit& a, const Hit& b) {
    if (a.key.has_value() != b.key.has_value()) return a.key.has_value();
    if (a.tier != b.tier) return a.tier < b.tier;
    if (a.key && *a.key != *b.key) return desc ? *a.key > *b.key : *a.key < *b.key;
    return offers[a.index].id < offers[b.index].id;
  });
  std::vector<Offer> out;
  out.reserve(offers.size());
  for (const Hit& h : hits) out.push_back(std::move(offers[h.index]));
  offers = std::move(out);
}

std::string SystemClock::today() const {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

void keep_latest_per_kind(Offer& offer) {
  std::vector<const PriceObservation*> keep;
  for (PriceKind k : kPriceKinds)
    if (const PriceObservation* p = offer.latest_price(k)) keep.push_back(p);
  std::vector<PriceObservation> out;
  for (const PriceObservation& p : offer.prices)
    if (std::find(keep.begin(), keep.end(), &p) != keep.end()) out.push_back(p);
  offer.prices = std::move(out);
}

void validate_batch(const ImportBatch& batch) {
  // Views into the batch's own ids (no copies: issue 11, 200,000-row imports call this twice).
  std::unordered_set<std::string_view> seen;
  seen.reserve(batch.offers.size());
  for (const Offer& o : batch.offers) {
    if (o.id.empty()) throw_invalid("import: offer " + o.provider + "/" + o.instance_type, "offer with an empty id",
                                    "a non-empty offer id");
    if (!seen.insert(o.id).second)
      throw_invalid("import: " + o.id, "offer id appears twice in one batch", "unique ids (merge_batch merges them)");
    for (const PriceObservation& p : o.prices) {
      if (!p.offer_id.empty() && p.offer_id != o.id)
        throw_invalid("import: " + o.id, "observation belongs to offer \"" + p.offer_id + "\"",
                      "observations whose offer_id is the offer's id");
      if (!std::isfinite(p.usd_per_hour) || p.usd_per_hour < 0)
        throw_invalid("import: " + o.id, fmt::format("price {} USD/h", p.usd_per_hour),
                      "a finite, non-negative USD per hour");
    }
  }
}

}  // namespace gpuplan

namespace gpuplan {
namespace {
[[noreturn]] void no_snapshots() {
  throw Error(ErrorKind::unavailable, "store", "this offer store keeps no snapshot log",
              "the SQLite store (or a store that implements snapshots)");
}
}  // namespace
std::size_t OfferStore::count_matching(const OfferQuery& q) {
  OfferQuery all = q;
  all.limit.reset();
  return query(all).size();
}

namespace {
/// OfferStore::begin_import's default: the chunks merged in memory, one import() at commit.
class CollectingImportWriter final : public ImportWriter {
 public:
  explicit CollectingImportWriter(OfferStore& store) : store_(store) {}
  void write(const ImportBatch& chunk) override {
    validate_batch(chunk);
    merge_batch(all_, chunk);
  }
  ImportResult commit() override { return store_.import(all_); }
  std::size_t offers_written() const override { return all_.offers.size(); }

 private:
  OfferStore& store_;
  ImportBatch all_;
};
}  // namespace

std::unique_ptr<ImportWriter> OfferStore::begin_import() { return std::make_unique<CollectingImportWriter>(*this); }

SnapshotCommit OfferStore::commit_snapshot(const SnapshotRecord&, const ImportBatch*) { no_snapshots(); }
std::optional<SnapshotRecord> OfferStore::last_snapshot(std::string_view, std::string_view) { no_snapshots(); }
std::optional<std::string> OfferStore::first_accepted_with_hash(std::string_view, std::string_view) { no_snapshots(); }
std::vector<SnapshotRecord> OfferStore::snapshots(std::string_view, std::size_t) { no_snapshots(); }
}  // namespace gpuplan
