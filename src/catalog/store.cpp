#include "catalog/store.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <unordered_set>

#include "catalog/import_detail.hpp"
#include "catalog/store_validate.hpp"
#include "hardware/gpu_spec.hpp"
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
  if (!std::isfinite(stale_after_days) || stale_after_days < 0)
    throw_invalid_coded("stale_after_days", "negative", {{"value", fmt::format("{}", stale_after_days)}},
                        fmt::format("{} is not a valid number of days", stale_after_days), "a non-negative number of days");
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

bool same_offer_facts(const Offer& a, const Offer& b) {
  return a.id == b.id && a.provider == b.provider && a.instance_type == b.instance_type && a.region == b.region &&
         a.zone == b.zone && a.gpu_name_raw == b.gpu_name_raw && a.gpu_name == b.gpu_name &&
         a.gpu_count == b.gpu_count && a.gpu_memory_bytes == b.gpu_memory_bytes && a.vcpus == b.vcpus &&
         a.ram_bytes == b.ram_bytes && a.local_disk_bytes == b.local_disk_bytes &&
         a.intra_node_link == b.intra_node_link && a.intra_node_link_bytes_per_s == b.intra_node_link_bytes_per_s &&
         a.form_factor == b.form_factor && a.inter_node_network == b.inter_node_network &&
         a.inter_node_bits_per_s == b.inter_node_bits_per_s && a.max_nodes == b.max_nodes &&
         a.confirmed_available_at == b.confirmed_available_at && a.billing_override == b.billing_override &&
         a.flags == b.flags;
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
