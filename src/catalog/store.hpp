#pragma once
/// Catalog layer, offer store (STYLE.md §4): where imported offers and their price observations
/// live between runs. OfferStore is the catalog's only interface; open one with open_store(url)
/// (open_store.hpp). Implementations: SqliteOfferStore (default, embedded; sqlite_store.hpp),
/// PgOfferStore (shared PostgreSQL; pg_store.hpp) and MemoryOfferStore (tests; memory_store.hpp).
/// All pass the same contract test suite (tests/catalog/store_contract_test.cpp). Writes go
/// through ingest() (ingest.hpp), which applies every data-quality gate first.
///
/// Semantics shared by every implementation:
///  - Every store may be called from many threads at once (a server shares one): SQLite and
///    the memory store serialise calls internally; PostgreSQL runs up to its pool size at once.
///  - import() is one transaction: all or nothing. An observation's identity is
///    (offer_id, kind, usd_per_hour, observed_at, dataset): re-importing the same snapshot adds
///    nothing; a re-import with new prices adds observations and keeps the old ones. Offers are
///    upserted by id: the facts the newest import states and its flags replace the stored ones,
///    a fact it does not state (unknown) keeps its stored value (keep_known_facts), and the price
///    history is kept.
///  - query() filters (filter.hpp), drops offers with an excluding quality flag unless
///    include_excluded, sorts (unknown keys last; with evidence_first, by the price's evidence
///    tier before the key; ties by id in byte order) and limits. Returned
///    offers carry flags, billing overrides and, by default, only the latest observation of each
///    price kind (what Offer::latest_price reads, so filters, sorts and plans see the same
///    prices); all_observations = true returns the whole history, oldest first (unknown dates
///    first). get() and history() always return the whole history.
///  - Staleness is relative to the query's now_date (an injected clock, never the wall clock
///    inside the store): a price older than stale_after_days is stale; an undated price is
///    "unknown", neither stale nor fresh (see is_stale in filter.hpp).
#include <cstddef>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/filter.hpp"
#include "catalog/importers.hpp"
#include "catalog/offer.hpp"

namespace gpuplan {

/// Sort keys of OfferQuery::sort.
inline constexpr std::string_view kSortPricePerGpuHour = "price_per_gpu_hour";  ///< USD per GPU-hour, ascending
inline constexpr std::string_view kSortPricePerVramGb = "price_per_vram_gb";    ///< USD per hour per GB of total VRAM, ascending
inline constexpr std::string_view kSortBandwidth = "bandwidth";                 ///< GPU memory bandwidth, descending
inline constexpr std::string_view kSortPrice = "price";                         ///< USD per instance-hour, ascending
/// All sort keys, for help text and errors.
const std::vector<std::string_view>& offer_sort_keys();

/// A lower bound on the GPU memory a job needs in one cluster (the planner's read, issue 7): an
/// offer can run the job only if its GPUs, over the most nodes it can be rented as, hold at
/// least `cluster_bytes`. Offers whose per-GPU memory is unknown always pass (the planner sizes
/// them against the GPU's datasheet).
struct OfferMemoryFloor {
  double cluster_bytes = 0;  ///< bytes the job needs in all its GPUs together, at least
  /// Multi-node jobs (training): an offer with a known inter-node network counts up to its
  /// max_nodes (unknown: max_nodes_assumed) nodes; other offers and single-node jobs count 1.
  bool multi_node = false;
  int max_nodes_assumed = 1;
  /// Slack on the offer's listed per-GPU figure (GB vs GiB, rounding, "80 GB" cards with 85.5e9
  /// usable bytes): it passes when listed × gpu_count × nodes × slack ≥ cluster_bytes.
  double slack = 1.25;
};
/// True when `offer` passes `floor` (see OfferMemoryFloor).
bool passes_memory_floor(const Offer& offer, const OfferMemoryFloor& floor);

/// One query over the store (STYLE.md §6). The CLI and the server fill the same struct.
struct OfferQuery {
  std::string filter;                             ///< filter language text (filter.hpp); "" = all offers
  std::string sort = std::string(kSortPricePerGpuHour);  ///< one of offer_sort_keys()
  std::optional<std::size_t> limit;               ///< at most this many offers; nullopt = all
  PriceKind price_kind = PriceKind::on_demand;    ///< price the filter and sort read
  bool include_excluded = false;                  ///< keep offers with an excluding quality flag
  std::string now_date;                           ///< "YYYY-MM-DD" from the injected clock; "" → stale unknown
  double stale_after_days = 30;                   ///< days; a price strictly older is stale
  /// true: offers are ordered by the evidence of their price of price_kind first (EvidenceTier,
  /// catalog/freshness.hpp: clean, stale, undated, flagged at now_date and stale_after_days),
  /// then by the sort key: the order is ((key) IS NULL, tier, key, id). false: ((key) IS NULL,
  /// key, id). `gpuplan offers` sets it unless --include-flagged (docs/freshness.md).
  bool evidence_first = false;
  /// false: each offer carries only the latest observation of each price kind (bounded by 4
  /// per offer however long fetchers run); true: every observation.
  bool all_observations = false;
  /// Leave out offers that cannot hold the job at all (planner reads; nullopt = none). Applied
  /// to the matching offers before their prices and flags are read; not with a limit.
  std::optional<OfferMemoryFloor> memory_floor;
  /// The planner's bounded read (issue 12; docs/planner.md "Bounded read"): per price kind and
  /// plan class (plan_class_of: one machine in one place), only the K cheapest matching offers
  /// whose price of that kind is clean-dated (observed within [now_date − stale_after_days,
  /// now_date]) and, separately, the K cheapest whose price of that kind is not (stale, undated
  /// or after now_date), each set with the offers tied in price with its K-th
  /// (select_cheapest_per_plan_class). The union over kinds and classes comes back in the
  /// query's order. nullopt = every match. Not with a limit.
  std::optional<std::size_t> cheapest_per_plan_class;

  /// Throws Error{invalid_input} naming the field (where "sort", "limit", "now_date",
  /// "stale_after_days", "memory_floor") or a FilterError for the filter text.
  void validate() const;
  /// The filter context this query implies (gpus = the catalog given).
  FilterContext filter_context(const GpuCatalog* gpus) const;
};

/// What an import changed.
struct ImportResult {
  std::size_t offers_added = 0;       ///< ids not in the store before
  std::size_t offers_updated = 0;     ///< ids already stored whose facts or flags changed
  std::size_t offers_unchanged = 0;   ///< ids already stored, identical facts and flags
  std::size_t observations_added = 0;
  std::size_t observations_already_known = 0;  ///< identical observations skipped
  /// Fetch only: prices the source gave again unchanged (split_seen_again: their last_seen_at is
  /// set, no new observation); 0 for file imports.
  std::size_t prices_seen_again = 0;
};

/// Sizes of the store.
struct StoreCounts {
  std::size_t offers = 0;
  std::size_t observations = 0;
  std::size_t excluded_offers = 0;  ///< offers with an excluding flag
};

/// Sort key value of an offer (nullopt = unknown, sorted last). Shared by both stores so the
/// order is identical: per GPU-hour = price / gpu_count; per VRAM GB = price / (gpu_count ×
/// gpu_memory_bytes / 1e9); bandwidth = the spec's memory bandwidth (bytes/s); price = price.
std::optional<double> offer_sort_value(const Offer& offer, std::string_view sort, PriceKind kind,
                                       const GpuCatalog& gpus);
/// USD per GPU-hour of one observation of `offer` (usd_per_hour / gpu_count); nullopt when
/// gpu_count is not positive.
std::optional<double> usd_per_gpu_hour(const Offer& offer, const PriceObservation& price);
/// True when the sort key sorts descending (bandwidth).
bool offer_sort_descending(std::string_view sort);

/// True when two offers have the same facts (every field but `prices`), flags included.
bool same_offer_facts(const Offer& a, const Offer& b);
/// Refuses an incoming offer whose id is stored with another machine (GPU model or count:
/// import_detail::same_machine): Error{invalid_input} at the incoming row's locator, "nothing was
/// imported". Every store calls it for each stored id before writing (issue 11's "an error, not a
/// merge", on SQLite, PostgreSQL and in memory alike).
void check_stored_hardware(const Offer& stored, const Offer& incoming);
/// Fills the facts an incoming offer does not know (unset optionals, unknown link or network, empty
/// form factor; billing terms field by field, with the stored source line of each field kept
/// unless the incoming offer sources that field itself: one line per field) from the stored offer of the
/// same id: a row or a source that does not state a fact (a user's price quote without network
/// columns, SkyPilot without the Spot Advisor band) never erases what another import stored.
/// Facts it states replace the stored ones. Flags and prices are not copied (flags describe this
/// import; prices are observations). Every store calls it for each stored id before comparing
/// and writing facts; the fetchers call it before their gates (docs/import-format.md).
void keep_known_facts(Offer& incoming, const Offer& stored);

/// The plan class of an offer (issue 12): a 64-bit FNV-1a hash of every fact the planner's
/// physics and costing read (provider, GPU as listed and as resolved, GPUs per instance, memory
/// per GPU, intra-node link and bandwidth, form factor, inter-node network and bandwidth, max
/// nodes, whether availability was confirmed, the billing overrides, the quality flags' rules
/// and whether they exclude) and of its place (instance type, region, zone): one machine in one
/// place, as a plan row shows it. Not the id, host CPU/RAM/disk or prices: two offers of one
/// class get the same plan and the same row and region, and differ only in price and id (the
/// same offer listed twice, by two feeds or under two ids). Stored with each latest price
/// (latest_prices.plan_class) and computed here only.
std::int64_t plan_class_of(const Offer& offer);

/// The clean-date window of the bounded read: a price is clean-dated when its observed_at (a
/// date or timestamp string) is >= `lo` and < `hi`. lo = earliest_unstale_date(now_date,
/// stale_after_days) and hi = the day after now_date; an empty now_date gives lo = "" and hi =
/// "9" (every dated price is clean, as the planner ranks them without --today).
struct CleanDateWindow {
  std::string lo;
  std::string hi;
  bool contains(const std::optional<std::string>& observed_at) const {
    return observed_at && *observed_at >= lo && *observed_at < hi;
  }
};
CleanDateWindow clean_date_window(std::string_view now_date, double stale_after_days);

/// OfferQuery::cheapest_per_plan_class applied in memory to `matching` (offers that match the
/// query, latest prices loaded): for each price kind and plan class, among the offers with a
/// latest price of that kind, the `k` cheapest clean-dated ones and the `k` cheapest others, each
/// with the offers priced as its k-th (ties). Returns the kept offers in `matching`'s order. The
/// stores' SQL walks select the same set (the contract test checks it).
std::vector<Offer> select_cheapest_per_plan_class(std::vector<Offer> matching, std::size_t k, const CleanDateWindow& window);

/// The database stores' bounded read switches plan (as a query planner picks a scan for a small
/// table): while latest_prices holds at most this many rows, it reads every match as an unbounded
/// query does and applies select_cheapest_per_plan_class to them (one pass: cheaper than a walk
/// per class when nearly every class has one row, as in the bundled catalog); above it, the index
/// walks, whose cost follows the classes. Both give the same offers (the contract tests run both).
inline constexpr std::size_t kBoundedReadScanMaxRows = 10000;

/// Sorts offers in the order OfferQuery q returns them (sort key, evidence tier with
/// evidence_first, id), as MemoryOfferStore::query does.
void sort_offers_like_query(std::vector<Offer>& offers, const OfferQuery& q, const GpuCatalog& gpus);

/// A date source (STYLE.md §4: inject the clock).
class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::string today() const = 0;  ///< "YYYY-MM-DD", UTC
};
/// The system clock (UTC).
class SystemClock final : public Clock {
 public:
  std::string today() const override;
};
/// A fixed date, for tests.
class FixedClock final : public Clock {
 public:
  explicit FixedClock(std::string date) : date_(std::move(date)) {}
  std::string today() const override { return date_; }

 private:
  std::string date_;
};

/// One fetch of a live source (src/fetch/): what was downloaded, when, and what became of it.
/// Snapshots are append-only; observations from an accepted snapshot carry dataset
/// "fetch:<source>" and observed_at = fetched_at.
struct SnapshotRecord {
  std::int64_t id = 0;           ///< assigned by the store
  std::string source;            ///< fetch source name ("aws", "azure", "skypilot/lambda", ...)
  std::string url;               ///< first URL requested (the others in `urls`)
  std::vector<std::string> urls; ///< every URL requested, in order
  std::string fetched_at;        ///< "YYYY-MM-DDTHH:MM:SSZ", UTC
  std::string content_hash;      ///< "sha256:<hex>" over the response bodies, in request order
  int parser_version = 0;        ///< the adapter's parser version
  std::string status;            ///< "accepted", "rejected" or "unchanged" (same hash as an accepted one)
  std::size_t rows_read = 0;     ///< rows/records the parser read
  std::size_t offers = 0;        ///< offers in the snapshot
  std::size_t observations_added = 0;
  std::string detail;            ///< plain words: gate results, why rejected, frozen-feed warning
};

/// The detail commit_snapshot records for an "accepted" snapshot that another fetch stored first
/// (the caller's own detail, "... gates passed", would misstate it).
inline constexpr const char* kAlreadyAcceptedDetail =
    "same content as the source's last accepted snapshot, which another fetch stored meanwhile: nothing imported";

/// What commit_snapshot did.
struct SnapshotCommit {
  SnapshotRecord record;             ///< as stored (id set); status "unchanged" when already accepted
  ImportResult import;               ///< zero when nothing was imported
  bool already_accepted = false;     ///< the last accepted snapshot of the source had this hash
};

/// One import written chunk by chunk inside ONE open transaction (issue 11: a large file is
/// streamed into the store, memory bounded by a chunk, not by the file). Obtained from
/// OfferStore::begin_import(); all or nothing as import(): nothing is visible to other
/// connections before commit(), and a writer destroyed without commit() (an error in a later
/// chunk, a data-quality gate, an exception) rolls everything back.
/// Semantics are those of import() of the merge (merge_batch) of all chunks: an id written by an
/// earlier chunk of the same import is merged with it (facts filled, flags united, observations
/// added; another GPU model or count is Error{invalid_input} naming both rows, "cannot be two
/// machines"), an identical observation from two chunks is one, and the counts of commit() count
/// each id once (added/updated/unchanged as the store held it before the import).
class ImportWriter {
 public:
  virtual ~ImportWriter() = default;
  /// Writes one chunk. Throws as OfferStore::import (validate_batch, stored hardware, lock).
  virtual void write(const ImportBatch& chunk) = 0;
  /// Commits; returns what the whole import changed. The writer is done afterwards.
  virtual ImportResult commit() = 0;
  /// Distinct offer ids written so far.
  virtual std::size_t offers_written() const = 0;
};

class OfferStore {
 public:
  virtual ~OfferStore() = default;
  /// Opens a streamed import (ImportWriter). The base implementation merges the chunks in
  /// memory and runs one import() at commit() (same semantics, memory as import(): PostgreSQL
  /// and the memory store); SQLite writes each chunk into its open transaction. While a SQLite
  /// writer is open, its store is locked to other calls of this process (do not call the store
  /// from the thread that holds the writer).
  virtual std::unique_ptr<ImportWriter> begin_import();
  /// Imports a batch as one transaction. Throws Error{invalid_input} when the batch is
  /// inconsistent (an empty id, an observation whose offer_id differs from its offer, a
  /// duplicate id in the batch), Error{unavailable} when the database is locked past the busy
  /// timeout; nothing is written then.
  virtual ImportResult import(const ImportBatch& batch) = 0;
  /// Validates the query (throws as OfferQuery::validate) and runs it.
  virtual std::vector<Offer> query(const OfferQuery& q) = 0;
  /// How many offers query(q) returns without its limit (sort and limit ignored): the "N
  /// matching" of a first page, counted by the database without reading the offers (issue 12:
  /// the footer of /offers and `gpuplan offers` read every match to count them). Validates as
  /// query(). The base implementation runs query() without the limit.
  virtual std::size_t count_matching(const OfferQuery& q);
  /// One offer with all its observations, or nullopt.
  virtual std::optional<Offer> get(std::string_view id) = 0;
  /// The observations of one offer, oldest first (unknown dates first); empty when unknown id.
  virtual std::vector<PriceObservation> history(std::string_view offer_id) = 0;
  virtual StoreCounts counts() = 0;
  /// What import(batch) would change, with nothing written (for `gpuplan import --dry-run`).
  virtual ImportResult preview_import(const ImportBatch& batch) = 0;
  /// Imports make_batch() once per version of the bundled data: when the "seeded" mark is
  /// absent, or holds another `seed_key` (a store seeded by an older gpuplan, whose bundled
  /// catalog was different), the batch is imported and the mark set to `seed_key` in one
  /// transaction (two processes racing seed once). Importing a newer bundle into a seeded store
  /// adds its new offers and observations and updates changed facts; observations already
  /// stored stay (import identity, docs/import-format.md), so a re-seed is never a loss.
  /// Returns true when this call seeded. make_batch runs only when the mark differs.
  virtual bool seed_if_new(std::string_view seed_key, const std::function<ImportBatch()>& make_batch) = 0;
  /// Schema version stored in the database (0 for stores without one).
  virtual int schema_version() = 0;
  /// The data's revision: a counter that every committed import (CLI, seed, fetcher, from any
  /// process) raises in the same transaction. Equal revisions mean equal offers, so a server may
  /// keep an answer while the revision stays the same (one primary-key read per check).
  virtual std::uint64_t revision() = 0;
  /// True when many threads may call this store at once (a connection pool); false when the
  /// store serialises its calls, so callers gain nothing from calling in parallel.
  virtual bool concurrent_calls() const noexcept { return false; }
  /// Why this store cannot be written, or nullopt when it can (as far as the database says
  /// without writing: SQLite opened the file read-only; PostgreSQL in a read-only transaction
  /// mode / a standby, or without INSERT on the tables). Checked by `gpuplan serve
  /// --refresh-every` before it starts, so a scheduled refresh never fails on every run. The
  /// base implementation (in-memory) returns nullopt.
  virtual std::optional<std::string> write_refusal() { return std::nullopt; }

  // Snapshot log (migration 2 of the SQLite store; MemoryOfferStore keeps it in memory). Stores
  // without it throw Error{unavailable} (the base implementation).
  /// Records `record` and, when its status is "accepted" and `batch` is given, imports the batch,
  /// in ONE transaction. Idempotent: when the LAST accepted snapshot of the source (by
  /// fetched_at, then id; read inside the write transaction) has the same content_hash, nothing
  /// is imported and the record is stored as "unchanged". An earlier content seen again after
  /// another one (a price back at an earlier value) is accepted and imported.
  /// Seen again (docs/fetch.md): for an accepted or unchanged record with a batch, each
  /// batch->seen_again entry sets the matching latest price's last_seen_at (when that price is
  /// still the latest of its offer and kind, from that dataset, and was last seen earlier); for an
  /// unchanged one, each batch offer's confirmed_available_at replaces an earlier stored one. The
  /// batch of an unchanged record is not imported.
  virtual SnapshotCommit commit_snapshot(const SnapshotRecord& record, const ImportBatch* batch);
  /// The newest snapshot of `source` with `status` (by fetched_at, then id), or nullopt.
  virtual std::optional<SnapshotRecord> last_snapshot(std::string_view source, std::string_view status);
  /// fetched_at of the oldest accepted snapshot of `source` with this hash, or nullopt.
  virtual std::optional<std::string> first_accepted_with_hash(std::string_view source, std::string_view content_hash);
  /// Snapshots of `source` ("" = all), newest first, at most `limit`.
  virtual std::vector<SnapshotRecord> snapshots(std::string_view source, std::size_t limit);
};

/// Keeps, per price kind, only the observation Offer::latest_price picks, in their stored order.
void keep_latest_per_kind(Offer& offer);

/// Checks a batch before it is written (shared by both stores): throws Error{invalid_input}
/// at "import: OFFER_ID" for an empty id, a duplicate id, or an observation whose offer_id is
/// neither empty nor the offer's id.
void validate_batch(const ImportBatch& batch);

}  // namespace gpuplan
