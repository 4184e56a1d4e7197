#pragma once
/// Fetch layer, runner: fetches sources, gates each snapshot, and writes accepted ones to the
/// offer store as new price observations (history is never overwritten). This is the API
/// `gpuplan fetch` and `gpuplan serve --refresh-every` call.
///
/// Per source, in order (docs/fetch.md):
///  1. keyed source without its key → "skipped" (a clear message; nothing recorded);
///  2. download (retries, rate limit) → failure = "failed": a rejected snapshot is recorded
///     with the error, nothing imported; a keyed source refused with HTTP 401/403 says which
///     environment variable(s) hold the credentials it refused;
///  3. content hash equal to the last accepted snapshot's → "unchanged" (recorded, nothing
///     imported); when that content was first accepted frozen_after_days (GateLimits, else the
///     source's own SourceInfo::frozen_after_days) or more ago, the outcome says the feed looks frozen;
///  4. parse (malformed document → "rejected", the error recorded);
///  5. gates: not empty; offers not down more than max_row_drop_fraction from the last
///     accepted snapshot; every stored price > 0; at most max_bad_row_fraction of offers with a
///     price or GPU-memory finding (zero price, memory outside the datasheet, implausible
///     price: a sign the parser misreads units); expected GPU names present. A failed gate →
///     "rejected". Prices that moved more than price_move_factor since the last snapshot of the
///     same source are flagged (QualityFlag "price_jump", not excluding) and listed;
///     Facts the fresh offer does not know (vCPUs, network, preemption band, billing terms...)
///     are kept from the stored offer, so one source never erases what another stored;
///  6. commit: the snapshot record and its observations in one transaction ("accepted"); a
///     concurrent fetch that already stored the same content makes it "unchanged".
/// A failure of one source never stops the others.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/store.hpp"
#include "fetch/http.hpp"
#include "fetch/source.hpp"

namespace gpuplan::fetch {

/// Rule names added by the fetch layer (QualityFlag::rule / ImportIssue::rule).
inline constexpr std::string_view kRuleUnknownPrice = "unknown_price";  ///< source price missing or $0: no observation stored
inline constexpr std::string_view kRulePriceJump = import_rule::kPriceJump;        ///< moved > price_move_factor since the last snapshot (flag only)
inline constexpr std::string_view kRuleUnmappedSku = "unmapped_sku";    ///< SKU not in the adapter's table: row skipped, reported
inline constexpr std::string_view kRuleNotRentable = "not_rentable";    ///< marketplace row not rentable (vast): row skipped, reported

struct GateLimits {
  double max_row_drop_fraction = 0.5;  ///< reject when offers < (1 − this) × last accepted snapshot's
  double price_move_factor = 3.0;      ///< flag when new/old > this or < 1/this
  /// Reject when more offers than this share have a $0 / implausible price or GPU memory outside
  /// the datasheet (an unknown price, e.g. a preview SKU, does not count).
  double max_bad_row_fraction = 0.25;
  /// Same content for this many days → the feed looks frozen (a warning; its prices are not
  /// re-confirmed). nullopt = each source's own limit (SourceInfo::frozen_after_days).
  std::optional<double> frozen_after_days;
};

struct FetchOptions {
  std::vector<std::string> sources;  ///< names; empty = every keyless source plus keyed ones whose key is set
  bool dry_run = false;              ///< compute and report, write nothing (no snapshot record either)
  std::string base_url;              ///< replaces scheme/host/port of every endpoint (tests, mirrors)
  GateLimits gates;
  const GpuCatalog* gpus = nullptr;  ///< nullptr → bundled
  std::string fetched_at;            ///< "YYYY-MM-DDTHH:MM:SSZ"; empty = the system clock (UTC)
  std::function<std::optional<std::string>(std::string_view)> env;  ///< empty = getenv
  /// Optional (the scheduled refresh of `gpuplan serve`): once requested, no further source is
  /// started, and a source whose download was cut by it is reported "cancelled" and recorded
  /// nowhere (the next run fetches it again).
  const StopFlag* stop = nullptr;
};

/// One price that would change / changed.
struct PriceChange {
  std::string offer_id;
  PriceKind kind = PriceKind::on_demand;
  std::optional<double> old_usd_per_hour;  ///< nullopt = no earlier price in the store
  double new_usd_per_hour = 0;
};

struct SourceOutcome {
  std::string source;
  std::string status;   ///< "accepted", "unchanged", "rejected", "failed", "skipped", "would-accept" (dry run), "cancelled" (FetchOptions::stop)
  std::string message;  ///< one line: why (gate, error, missing key) or what was done
  SnapshotRecord snapshot;            ///< as recorded (dry run: as it would be)
  ImportResult changes;               ///< offers added/updated/unchanged, observations added
  std::vector<std::string> gate_failures;
  std::vector<std::string> warnings;  ///< frozen feed, unmapped SKUs, price jumps (summary)
  std::vector<PriceChange> price_changes;  ///< latest price per offer and kind that differs from the store's
  std::vector<ImportRuleCount> rules;      ///< per-rule counts of the rows of the parse (rows_per_rule)
  /// Up to kRowExamplesPerRule issues of each rule, in input order: the rows a user sees named
  /// when the report says what was skipped or flagged (skipped_rows_report).
  std::vector<ImportIssue> row_examples;
  bool frozen = false;
};

struct FetchReport {
  std::vector<SourceOutcome> sources;
  /// True when a source failed or was rejected (exit status of `gpuplan fetch`).
  bool any_failed() const;
};

/// Runs the fetch. Throws Error{not_found} (where "SOURCE") for an unknown source name, before
/// any request; per-source failures are outcomes, not exceptions.
FetchReport run_fetch(OfferStore& store, HttpClient& http, const FetchOptions& options);

/// Gates a parsed batch against the store (step 5 above); fills gate_failures, warnings,
/// price_changes and adds price_jump flags to `batch`. Exposed for tests.
void apply_gates(const Source& source, ImportBatch& batch, OfferStore& store, const GateLimits& limits,
                 const std::optional<SnapshotRecord>& last_accepted, SourceOutcome& out);

/// How many rows of each rule a report names (SourceOutcome::row_examples).
inline constexpr std::size_t kRowExamplesPerRule = 3;

/// Per-rule counts of the distinct rows (ImportIssue::where) that `issues` name, rejected and
/// flagged apart: one row that several offers came from counts once (SourceOutcome::rules).
std::vector<ImportRuleCount> rows_per_rule(const std::vector<ImportIssue>& issues);

/// The rows a snapshot left out or kept with a flag, one block per rule, for people: for each rule
/// with rejected rows "N rows skipped (RULE), e.g.:" then up to kRowExamplesPerRule indented
/// "WHERE: DETAIL" lines (the importer's own words: what was seen, what was done); for flagged rows
/// "N rows kept with the flag RULE, e.g.:" and theirs ("N rows flagged RULE (not kept: the snapshot
/// was rejected)" for a rejected snapshot, which keeps nothing). Lines carry no newline; empty
/// when nothing was skipped or flagged. Used by `gpuplan fetch` and the server's scheduled refresh log.
std::vector<std::string> skipped_rows_report(const SourceOutcome& outcome);

/// Current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now_iso();

}  // namespace gpuplan::fetch
