#pragma once
/// Catalog layer, importers: turn real offer feeds (text) into Offers with PriceObservations,
/// provenance (SourceRef) and data-quality flags. Formats and their quirks are described in
/// data/offers/PROVENANCE.md; our own user-quote format in docs/import-format.md.
///
/// Every importer is pure: text in, ImportBatch out. IO happens only in import_file() and
/// bundled_catalog() (which reads the files compiled in from data/offers through
/// util/embedded.hpp).
///
/// Units in the produced Offers follow offer.hpp: usd_per_hour for the WHOLE instance (per-GPU
/// source prices are multiplied by gpu_count), bytes (GB = 1e9, GiB/MiB = 2^30/2^20), bit/s.
///
/// Offer ids: lower-case "provider/instance_type/region", plus "/zone" when the source names an
/// availability zone (AWS and primeintellect price spot per zone, so zones are distinct offers).
/// Inside a part, "%" is written "%25" and "/" "%2F", so no two different offers share an id
/// (before, instance "a/b" in region "c" and instance "a" in region "b/c" collided).
/// The same id seen in several sources is ONE offer with several observations (merge_batch);
/// the id stands for one hardware configuration: the same id with a different GPU model or
/// GPU count is an error (Error{invalid_input} naming both places), never a merge. Price kinds
/// are not part of the id: one offer holds its on-demand, spot and reserved observations.
/// An observation's identity is (offer id, kind, USD/h, observed_at, dataset); files imported by
/// the user get the dataset "user:<format>" and gpuplan's own quotes "user:<row's source>",
/// so the same quote imported from two file names is one observation.
///
/// Dates are never invented: observed_at is set only where the source gives a date per row
/// (tardellirs collected_at, ewyluda date, user quotes). SkyPilot and FSDL rows get nullopt.
///
/// Errors (strict): a malformed row (wrong cell count, non-numeric price or count, bad JSON,
/// wrong JSON type, unknown field in our own format) throws gpuplan::Error{invalid_input} with
/// where = "file:line" (CSV) or "file:line:col" (JSON) and what was expected. The whole import
/// fails; nothing is returned. Data that is well-formed but doubtful is NOT an error: it becomes
/// a QualityFlag and an ImportIssue (see the rule names below).
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "catalog/offer.hpp"

namespace gpuplan {

class GpuCatalog;
class CsvReader;

/// Data-quality rule names used in QualityFlag::rule and ImportIssue::rule.
namespace import_rule {
inline constexpr std::string_view kZeroPrice = "zero_price";              ///< price is $0 (excludes)
inline constexpr std::string_view kMemoryUnit = "memory_unit";            ///< GPU memory in the wrong unit, corrected (flag only)
inline constexpr std::string_view kBidFloorPrice = "bid_floor_price";     ///< on-demand == spot == bid floor (mithril; excludes)
inline constexpr std::string_view kNoOnDemandPrice = "no_on_demand_price";  ///< only a spot/interruptible price (flag only)
inline constexpr std::string_view kSpotZeroMeansNone = "spot_zero_means_none";  ///< vast "0.00" spot = no spot (observation dropped)
inline constexpr std::string_view kCpuRow = "cpu_row";                    ///< no GPU: row skipped (rejected)
inline constexpr std::string_view kImplausiblePerGpuPrice = "implausible_per_gpu_price";  ///< > $100 or < $0.01 per GPU-hour (excludes)
inline constexpr std::string_view kUnresolvedGpu = "unresolved_gpu";      ///< GPU name not in the hardware catalog (excludes)
inline constexpr std::string_view kNoPrice = "no_price";                  ///< neither on-demand nor spot price: row skipped (rejected)
inline constexpr std::string_view kEstimatedPrice = "estimated_price";    ///< the source says the price is an estimate: observation dropped (rejected)
inline constexpr std::string_view kPriceIndex = "price_index";            ///< a market index series, not a rentable offer (excludes)
inline constexpr std::string_view kRangeValue = "range_value";            ///< a spec cell is a range ("4-6" vCPUs): kept unknown (flag only)
inline constexpr std::string_view kGpuMemoryMismatch = "gpu_memory_mismatch";  ///< source memory differs >20 % from the resolved GPU's (excludes when smaller)
inline constexpr std::string_view kSplitPriceCombined = "split_price_combined";  ///< GCP host + GPU rows summed into one offer (flag only)
inline constexpr std::string_view kSplitPriceUnmatched = "split_price_unmatched";  ///< a GCP host or GPU-only price row with no partner: row skipped (rejected)
inline constexpr std::string_view kHostMemoryUnit = "host_memory_unit";    ///< host RAM in the wrong unit: kept unknown (flag only)
inline constexpr std::string_view kMarketplaceBid = "marketplace_bid";    ///< spot price is a marketplace bid (vast): own caveat, no published preemption rate (flag only)
inline constexpr std::string_view kPriceOutlier = "price_outlier";        ///< per-GPU on-demand price under 1/3 of every other provider's for the GPU (excludes)
inline constexpr std::string_view kPartialGpu = "partial_gpu";            ///< a MIG slice or fraction of a GPU sold as one (excludes)
inline constexpr std::string_view kPerGpuRowScaled = "per_gpu_row_scaled";  ///< a per-GPU quote scaled to the whole instance (flag only)
inline constexpr std::string_view kPriceJump = "price_jump";  ///< a fetched price moved more than the gate's factor since the source's last snapshot (flag only; src/fetch)
inline constexpr std::string_view kBelowMarketIndex = "below_market_index";  ///< per-GPU on-demand price under half the lowest market index for the GPU (flag only)
}  // namespace import_rule

/// One finding of an importer about one row.
struct ImportIssue {
  std::string where;   ///< "file:line" (or "file:line:col" for JSON)
  std::string rule;    ///< one of import_rule::*
  std::string detail;  ///< what was seen and what was done, in plain words
  bool rejected = false;  ///< true: the row produced no offer/observation; false: kept and flagged
};

/// Count of issues for one rule.
struct ImportRuleCount {
  std::string rule;
  std::size_t rejected = 0;
  std::size_t flagged = 0;
};

/// The result of importing one file (or several, merged).
/// A fetched price equal to the stored latest price of its offer and kind from the same dataset
/// (docs/fetch.md "Seen again"): not a new observation; OfferStore::commit_snapshot sets that
/// latest price's last_seen_at to `seen_at` when the stored price is still this one and was last
/// seen earlier.
struct PriceSeenAgain {
  std::string offer_id;
  PriceKind kind = PriceKind::on_demand;
  double usd_per_hour = 0;  ///< the price, USD per instance-hour, as stored
  std::string dataset;      ///< the observation's dataset ("fetch:<source>")
  std::string seen_at;      ///< the snapshot's fetched-at time, "YYYY-MM-DDTHH:MM:SSZ"
};

struct ImportBatch {
  std::vector<Offer> offers;         ///< each with its PriceObservations; ids unique within a batch
  /// Prices seen again (fetch snapshots only; split_seen_again in ingest.hpp): applied by
  /// commit_snapshot, ignored by import().
  std::vector<PriceSeenAgain> seen_again;
  std::vector<ImportIssue> issues;   ///< every quality finding, in input order
  std::size_t rows_read = 0;         ///< data rows (or JSON records) read, GPU or not
  std::string dataset;               ///< SourceRef::dataset of the input ("bundled" after bundled_catalog)
  /// Lookup state kept by the importers (add_offer, merge_batch) so that building a batch is
  /// O(rows): offer id → index in `offers`, and the keys of the observations already held.
  /// Rebuilt when stale (offers changed by other code).
  std::unordered_map<std::string, std::size_t> offer_index;
  std::unordered_set<std::string> observation_keys;

  /// Per-rule counts of rejected and flagged issues, sorted by rule name.
  std::vector<ImportRuleCount> summary() const;
  /// The offer with this id, or nullptr.
  const Offer* find(std::string_view offer_id) const;
};

/// Supported input formats.
enum class ImportFormat {
  skypilot_vms_csv,          ///< SkyPilot catalog vms.csv (schema v6/v7/v8/v9)
  fsdl_cloud_gpus_csv,       ///< Full Stack Deep Learning cloud-gpus.csv
  fsdl_serverless_gpus_csv,  ///< Full Stack Deep Learning serverless-gpus.csv
  tardellirs_offerings_json, ///< tardellirs/gpu-pricing src/data/offerings.json
  ewyluda_index_history_csv, ///< ewyluda/gpu-price-index site/data/index-history.csv
  ewyluda_observations_csv,  ///< ewyluda/gpu-price-index data/observations/YYYY/YYYY-MM-DD.csv (dated rows)
  gpuhunt_tpu_pricing_json,  ///< dstackai/gpuhunt resources/tpu_pricing.json
  generic_csv,               ///< gpuplan user quotes, CSV (docs/import-format.md)
  generic_json,              ///< gpuplan user quotes, JSON (docs/import-format.md)
};
/// "skypilot-vms-csv", "fsdl-cloud-gpus-csv", ..., "generic-csv", "generic-json".
std::string_view import_format_name(ImportFormat f) noexcept;
/// Inverse of import_format_name; nullopt for an unknown name.
std::optional<ImportFormat> parse_import_format(std::string_view name) noexcept;
/// Guess the format from the file name and (for .csv/.json) the header / first key.
/// Throws Error{invalid_input} naming `path` when it cannot tell, listing the formats.
ImportFormat detect_import_format(std::string_view path, std::string_view text);

/// Where the text came from, for SourceRef and error messages.
struct ImportSource {
  std::string file;       ///< name used in error "where" and ImportIssue::where ("data/offers/x.csv")
  std::string dataset;    ///< SourceRef::dataset ("skypilot-catalog/v8/lambda", "user:quotes.csv")
  /// Locator prefix; each row's locator is locator_base + ":" + line. Bundled files use
  /// "owner/repo@commit:upstream/path"; user files their path. Empty → `file`.
  std::string locator_base;
  /// Provider id for formats that do not name it per row (SkyPilot: the folder name,
  /// e.g. "lambda"). Empty → derived from `file` where possible (skypilot_provider_from_path).
  std::string provider;
  /// GPU name resolution; nullptr → GpuCatalog::bundled().
  const GpuCatalog* gpus = nullptr;
};

/// SkyPilot provider id from a path like ".../v8/lambda/vms.csv" → "lambda";
/// nullopt when the path has no "<provider>/vms*.csv" tail.
std::optional<std::string> skypilot_provider_from_path(std::string_view path);

/// SkyPilot vms.csv. Columns are found by header name (order differs per file). GpuInfo may be
/// a Python-repr dict, doubled-quote JSON, or a bare GPU name. Price/SpotPrice are whole-instance
/// USD/h; an empty cell means "not sold". Throws as described at the top.
ImportBatch import_skypilot_vms_csv(std::string_view text, const ImportSource& src);
/// FSDL cloud-gpus.csv (Cloud, GPU Type, GPUs, GPU RAM [GB total], vCPUs, RAM [GB], On-demand,
/// Per-GPU, Spot, Name). No per-row dates: observed_at = nullopt.
ImportBatch import_fsdl_cloud_gpus_csv(std::string_view text, const ImportSource& src);
/// FSDL serverless-gpus.csv (Vendor, GPU Type, GPUs, GPU RAM, vCPUs, RAM, Per-Hour, Per-GPU).
ImportBatch import_fsdl_serverless_gpus_csv(std::string_view text, const ImportSource& src);
/// tardellirs offerings.json: per-GPU prices (gpu_count = 1), collected_at per row, source_url
/// per row (used as locator). Rows of one product differing only by tier spot/on-demand merge.
ImportBatch import_tardellirs_offerings_json(std::string_view text, const ImportSource& src);
/// ewyluda index-history.csv: a market price index per (gpu_model, series), not an offer. Each
/// (gpu_model, series) becomes a pseudo-offer with provider "index:<series>", instance_type
/// = gpu_model, gpu_count 1, one on-demand observation per date (USD per GPU-hour), and the
/// excluding flag "price_index" so it never ranks. It is the price-history fixture.
ImportBatch import_ewyluda_index_history_csv(std::string_view text, const ImportSource& src);
/// ewyluda/gpu-price-index daily observation file (date, collected_at, source, provider, segment,
/// pricing, gpu_model, sku, region, geo, gpu_count, usd_per_hour, usd_per_gpu_hour, sample_size).
/// Every row is dated (collected_at, else date). Provider = canonical id of `source`; RunPod's
/// two segments stay apart (instance "<sku> (community)" / "(secure)"). Rows that are not one
/// rentable offer are kept but never ranked: medians over several listings (sample_size > 1 or
/// sku "median-offer": price_index) and MIG slices (sku names "MIG": partial_gpu). OCI bare-metal
/// rows quoted per GPU ("BM.GPU.H100.8", gpu_count 1) are scaled to the whole shape (flag
/// per_gpu_row_scaled).
ImportBatch import_ewyluda_observations_csv(std::string_view text, const ImportSource& src);
/// gpuhunt tpu_pricing.json: {TPU name: {region: {Location, On Demand (USD), Spot (USD)}}},
/// USD per chip-hour; provider "gcp", instance_type = TPU name, gpu_count 1.
ImportBatch import_gpuhunt_tpu_pricing_json(std::string_view text, const ImportSource& src);
/// Our own user-quote format (docs/import-format.md), CSV or JSON. Unknown columns/keys and
/// missing required fields are errors.
ImportBatch import_generic_csv(std::string_view text, const ImportSource& src);
/// The same from rows read one at a time (import_file streams user CSV files through this:
/// memory holds the offers made so far, never the file's text or all its rows).
ImportBatch import_generic_csv(CsvReader& rows, const ImportSource& src);
/// The same in chunks (issue 11: bounded memory): every `chunk_rows` rows (and at the end) the
/// batch of those rows (offers merged within it, its issues and rows_read) is passed to `sink`
/// and then dropped; an id may appear in several chunks (the sink merges: ImportWriter).
/// Every row gate runs as in the whole-file import; a row error throws before its chunk is sunk.
void import_generic_csv_chunks(CsvReader& rows, const ImportSource& src, std::size_t chunk_rows,
                               const std::function<void(ImportBatch&)>& sink);
ImportBatch import_generic_json(std::string_view text, const ImportSource& src);

/// Dispatch on format.
ImportBatch import_text(std::string_view text, ImportFormat format, const ImportSource& src);
/// Reads a file and imports it (format detected unless given; dataset "user:<file name>",
/// locator = path). Throws Error{not_found} when the file cannot be read. gpuplan's own CSV
/// format (the one bulk quote files use) is streamed: parsed block by block as it is read, its
/// text checked line by line (UTF-8, no control characters); the other formats are read whole
/// (at most kMaxInputFileBytes) and parsed as import_text does.
ImportBatch import_file(const std::string& path, std::optional<ImportFormat> format = std::nullopt);
/// import_file in chunks of at most `chunk_rows` rows for gpuplan's own CSV (streamed, see
/// import_generic_csv_chunks); every other format is one chunk (the whole file's batch). Each
/// chunk's dataset is set as import_file sets the batch's.
void import_file_chunks(const std::string& path, std::optional<ImportFormat> format, std::size_t chunk_rows,
                        const std::function<void(ImportBatch&)>& sink);

/// Merges `from` into `into`: offers with the same id become one (observations appended and
/// exact duplicates dropped, flags united, unknown fields filled from `from`); issues appended;
/// rows_read added. Observations of each offer end sorted oldest first (unknown dates first).
void merge_batch(ImportBatch& into, ImportBatch from);

/// Throws Error{invalid_input} naming the observation's source (file:line) when a price is dated
/// after `today` ("YYYY-MM-DD"): a future date would stay the "latest" price for good.
/// (Importers are pure; the caller passes the clock's date.)
void check_no_future_dates(const ImportBatch& batch, std::string_view today);

/// Sets billing_override.preemptions_per_day (with its source) on AWS offers that have a spot
/// price and no rate yet, from the bundled AWS Spot Advisor interruption-frequency bands
/// (data/offers/aws-spot-advisor/interruption-bands.csv, per instance type and region, Linux):
/// the band's upper edge (share of instances interrupted in the trailing month) / 30 days.
/// Called by bundled_catalog(); returns the number of offers given a rate.
std::size_t apply_spot_interruption_bands(std::vector<Offer>& offers);

/// Data-quality gate across feeds: flags (without excluding) every offer whose latest on-demand
/// price per GPU-hour is below `fraction` × the lowest non-spot market-index series for the same
/// GPU at the index's latest date (the ewyluda price-index pseudo-offers, provider "index:*",
/// must be in the batch; without them nothing is flagged). Such a price is possible (a promotion,
/// a stale page) but far from the market, so the planner warns when it ranks the offer.
/// Returns how many offers were flagged; each gets a QualityFlag and an ImportIssue.
std::size_t flag_prices_below_market_index(ImportBatch& batch, double fraction = 0.5);
/// The same, with more index series read beside the batch's (the store's, for a user file);
/// a series whose id is also in the batch is read from the batch. `more_index` is not changed.
std::size_t flag_prices_below_market_index(ImportBatch& batch, const std::vector<Offer>& more_index,
                                           double fraction = 0.5);

/// Flags `price_outlier` (excludes) on every offer whose latest on-demand USD per GPU-hour is
/// under `fraction` of the lowest on-demand per-GPU price of every other provider for the same
/// canonical GPU, when at least two other providers price it. Such a gap (a third of the next
/// cheapest seller) is a placeholder, a MIG slice or a bid far more often than a real list price;
/// the offer stays in the store, visible with --include-flagged. Index pseudo-offers and offers
/// already excluded are neither flagged nor used as references. Returns the number flagged.
std::size_t flag_price_outliers(ImportBatch& batch, double fraction = 1.0 / 3.0);

/// The default catalog: every bundled file under data/offers (embedded_paths("offers/")),
/// imported with its provenance (repo@commit:path from PROVENANCE.md) and merged.
/// Deterministic: two calls return equal batches. GPU names resolve against `gpus`
/// (nullptr → GpuCatalog::bundled(); pass the --gpus-file catalog when the user gave one).
ImportBatch bundled_catalog(const GpuCatalog* gpus = nullptr);

/// The bundled catalog's identity: "bundled sha256:<hex>" over the path and the SHA-256 of the
/// bytes (embedded_file_sha256, computed at build time) of every embedded file bundled_catalog()
/// reads (data/offers/**, data/providers.toml), in path order (util/digest.hpp). Stores keep it
/// as their seed mark, so a gpuplan built with other bundled data re-seeds a store that an older
/// build seeded (OfferStore::seed_if_new). Computed once per process (a few kB hashed).
const std::string& bundled_catalog_key();

}  // namespace gpuplan
