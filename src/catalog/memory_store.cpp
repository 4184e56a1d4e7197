#include "catalog/memory_store.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "catalog/freshness.hpp"
#include "hardware/gpu_spec.hpp"

namespace gpuplan {

namespace {
/// Same identity as the SQLite unique index: (offer_id, kind, usd_per_hour, observed_at, dataset).
bool same_observation(const PriceObservation& a, const PriceObservation& b) {
  return a.kind == b.kind && a.usd_per_hour == b.usd_per_hour && a.source.observed_at == b.source.observed_at &&
         a.source.dataset == b.source.dataset;
}

/// Oldest first, unknown dates first; stable, so equal dates keep insertion order (the order the
/// SQLite store returns: observed_at, then insertion sequence).
void sort_history(std::vector<PriceObservation>& prices) {
  std::stable_sort(prices.begin(), prices.end(), [](const PriceObservation& a, const PriceObservation& b) {
    const auto& x = a.source.observed_at;
    const auto& y = b.source.observed_at;
    if (!x || !y) return !x && y;
    return *x < *y;
  });
}
}  // namespace

MemoryOfferStore::MemoryOfferStore(const GpuCatalog* gpus) : gpus_(gpus ? *gpus : GpuCatalog::bundled()) {}

ImportResult MemoryOfferStore::import(const ImportBatch& batch) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  validate_batch(batch);  // throws before anything changes: all or nothing
  ImportResult r;
  auto next = offers_;    // build the new state aside, then swap (strong guarantee)
  for (const Offer& in : batch.offers) {
    Offer facts = in;
    facts.prices.clear();
    auto it = next.find(in.id);
    if (it == next.end()) {
      ++r.offers_added;
      it = next.emplace(in.id, facts).first;
    } else {
      check_stored_hardware(it->second, in);  // throws before offers_ changes
      keep_known_facts(facts, it->second);     // a fact this import does not state stays stored
      if (same_offer_facts(it->second, facts)) {
        ++r.offers_unchanged;
      } else {
        ++r.offers_updated;
      }
      facts.prices = std::move(it->second.prices);
      it->second = std::move(facts);
    }
    Offer& stored = it->second;
    const auto latest_before = stored.latest_prices();
    std::array<std::optional<PriceObservation>, kPriceKindCount> before;
    for (std::size_t k = 0; k < kPriceKindCount; ++k)
      if (latest_before[k] != nullptr) before[k] = *latest_before[k];
    for (PriceObservation p : in.prices) {
      p.offer_id = in.id;
      p.last_seen_at.reset();  // set by commit_snapshot only (seen again)
      const bool known = std::any_of(stored.prices.begin(), stored.prices.end(),
                                     [&](const PriceObservation& q) { return same_observation(p, q); });
      if (known) {
        ++r.observations_already_known;
        continue;
      }
      stored.prices.push_back(std::move(p));
      ++r.observations_added;
    }
    sort_history(stored.prices);
    // Only the latest price of a kind carries last_seen_at (as latest_prices in SQL): a new
    // latest observation starts it again at its own date.
    const auto latest_after = stored.latest_prices();
    for (std::size_t k = 0; k < kPriceKindCount; ++k) {
      const PriceObservation* now = latest_after[k];
      if (now == nullptr || (before[k] && same_observation(*before[k], *now))) continue;
      for (PriceObservation& q : stored.prices)
        if (static_cast<std::size_t>(q.kind) == k) q.last_seen_at.reset();
    }
  }
  offers_.swap(next);
  ++revision_;
  return r;
}

std::uint64_t MemoryOfferStore::revision() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return revision_;
}

std::vector<Offer> MemoryOfferStore::query(const OfferQuery& q) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  q.validate();
  const Filter filter = Filter::parse(q.filter);
  const PreparedFilter pf = filter.prepare(q.filter_context(&gpus_));
  struct Hit {
    std::optional<double> key;
    int tier = 0;  ///< EvidenceTier when q.evidence_first, else 0
    const Offer* offer = nullptr;
  };
  std::vector<Hit> hits;
  for (const auto& [id, offer] : offers_) {
    if (!q.include_excluded && offer.excluded_from_ranking()) continue;
    if (!pf.matches(offer)) continue;
    if (q.memory_floor && !passes_memory_floor(offer, *q.memory_floor)) continue;
    const int tier =
        q.evidence_first ? static_cast<int>(price_evidence_tier(offer, q.price_kind, q.now_date, q.stale_after_days)) : 0;
    hits.push_back({offer_sort_value(offer, q.sort, q.price_kind, gpus_), tier, &offer});
  }
  const bool desc = offer_sort_descending(q.sort);
  std::stable_sort(hits.begin(), hits.end(), [&](const Hit& a, const Hit& b) {
    if (a.key.has_value() != b.key.has_value()) return a.key.has_value();
    if (a.tier != b.tier) return a.tier < b.tier;
    if (a.key && *a.key != *b.key) return desc ? *a.key > *b.key : *a.key < *b.key;
    return a.offer->id < b.offer->id;
  });
  std::vector<Offer> out;
  for (const auto& h : hits) {
    if (q.limit && out.size() >= *q.limit) break;
    out.push_back(*h.offer);
    if (!q.all_observations) keep_latest_per_kind(out.back());
  }
  if (q.cheapest_per_plan_class)
    out = select_cheapest_per_plan_class(std::move(out), *q.cheapest_per_plan_class,
                                         clean_date_window(q.now_date, q.stale_after_days));
  return out;
}

ImportResult MemoryOfferStore::preview_import(const ImportBatch& batch) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  MemoryOfferStore copy(&gpus_);
  copy.offers_ = offers_;
  return copy.import(batch);
}

bool MemoryOfferStore::seed_if_new(std::string_view seed_key, const std::function<ImportBatch()>& make_batch) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (seed_key_ == seed_key) return false;
  import(make_batch());
  seed_key_ = std::string(seed_key);
  return true;
}

std::optional<Offer> MemoryOfferStore::get(std::string_view id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = offers_.find(id);
  if (it == offers_.end()) return std::nullopt;
  return it->second;
}

std::vector<PriceObservation> MemoryOfferStore::history(std::string_view offer_id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = offers_.find(offer_id);
  if (it == offers_.end()) return {};
  return it->second.prices;
}

StoreCounts MemoryOfferStore::counts() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  StoreCounts c;
  c.offers = offers_.size();
  for (const auto& [id, o] : offers_) {
    c.observations += o.prices.size();
    c.excluded_offers += o.excluded_from_ranking() ? 1 : 0;
  }
  return c;
}

SnapshotCommit MemoryOfferStore::commit_snapshot(const SnapshotRecord& record, const ImportBatch* batch) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (batch != nullptr) validate_batch(*batch);
  SnapshotCommit c;
  c.record = record;
  // Unchanged = the same content as the last accepted snapshot of the source (as last_snapshot
  // orders them: by fetched_at, the later one on a tie).
  const SnapshotRecord* last = nullptr;
  for (const SnapshotRecord& r : snapshots_)
    if (r.status == "accepted" && r.source == record.source && (last == nullptr || r.fetched_at >= last->fetched_at))
      last = &r;
  // A newer parser re-reads the same content: not "unchanged".
  const bool exists = last != nullptr && last->content_hash == record.content_hash &&
                      last->parser_version == record.parser_version;
  if (record.status == "accepted" && exists) {
    c.already_accepted = true;
    c.record.status = "unchanged";
    c.record.observations_added = 0;
    c.record.detail = kAlreadyAcceptedDetail;
  } else if (record.status == "accepted" && batch != nullptr) {
    c.import = import(*batch);
    c.record.observations_added = c.import.observations_added;
  }
  if (batch != nullptr && c.record.status != "rejected") {
    // Prices seen again and, for an unchanged snapshot, the availability its offers still report
    // (SqliteOfferStore's apply_seen_again).
    bool changed = false;
    for (const PriceSeenAgain& a : batch->seen_again) {
      auto it = offers_.find(a.offer_id);
      if (it == offers_.end()) continue;
      const PriceObservation* latest = it->second.latest_price(a.kind);
      if (latest == nullptr || latest->usd_per_hour != a.usd_per_hour || latest->source.dataset != a.dataset ||
          !latest->seen_at() || !(*latest->seen_at() < a.seen_at))
        continue;
      const_cast<PriceObservation*>(latest)->last_seen_at = a.seen_at;  // an element of offers_, which is not const
      changed = true;
    }
    if (c.record.status == "unchanged")
      for (const Offer& o : batch->offers) {
        auto it = offers_.find(o.id);
        if (it == offers_.end() || !o.confirmed_available_at || !it->second.confirmed_available_at ||
            !(*it->second.confirmed_available_at < *o.confirmed_available_at))
          continue;
        it->second.confirmed_available_at = o.confirmed_available_at;
        changed = true;
      }
    if (changed) ++revision_;
  }
  c.record.id = static_cast<std::int64_t>(snapshots_.size()) + 1;
  snapshots_.push_back(c.record);
  return c;
}

std::optional<SnapshotRecord> MemoryOfferStore::last_snapshot(std::string_view source, std::string_view status) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const SnapshotRecord* best = nullptr;
  for (const SnapshotRecord& r : snapshots_)
    if (r.source == source && r.status == status && (best == nullptr || r.fetched_at >= best->fetched_at)) best = &r;
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::optional<std::string> MemoryOfferStore::first_accepted_with_hash(std::string_view source,
                                                                      std::string_view content_hash) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::optional<std::string> first;
  for (const SnapshotRecord& r : snapshots_)
    if (r.source == source && r.content_hash == content_hash && r.status == "accepted" &&
        (!first || r.fetched_at < *first))
      first = r.fetched_at;
  return first;
}

std::vector<SnapshotRecord> MemoryOfferStore::snapshots(std::string_view source, std::size_t limit) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::vector<SnapshotRecord> out;
  for (const SnapshotRecord& r : snapshots_)
    if (source.empty() || r.source == source) out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [](const SnapshotRecord& a, const SnapshotRecord& b) {
    return a.fetched_at != b.fetched_at ? a.fetched_at > b.fetched_at : a.id > b.id;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace gpuplan
