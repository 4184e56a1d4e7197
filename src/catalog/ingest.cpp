#include "catalog/ingest.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "catalog/importers.hpp"
#include "util/error.hpp"

namespace gpuplan {

void apply_quality_gates(ImportBatch& batch, std::string_view today) {
  validate_batch(batch);
  check_no_future_dates(batch, today);
  flag_prices_below_market_index(batch);
}

namespace {

/// The store's market-index pseudo-offers (provider "index:*").
std::vector<Offer> stored_index_series(OfferStore& store) {
  OfferQuery q;
  q.filter = "provider~\"index:\"";
  q.include_excluded = true;
  return store.query(q);
}

/// Steps 1-3 of ingest.hpp, step 3 against the store's market-index series too (read beside
/// the batch's own: the batch is not grown and shrunk per chunk).
void gate_against_index(ImportBatch& batch, const std::vector<Offer>& stored_index, std::string_view today) {
  validate_batch(batch);
  check_no_future_dates(batch, today);
  flag_prices_below_market_index(batch, stored_index);
}

void gate_against_store(OfferStore& store, ImportBatch& batch, std::string_view today) {
  gate_against_index(batch, stored_index_series(store), today);
}

/// A file without any offer is refused (new-user trial 9: a header-only CSV "imported" 0 rows,
/// exit 0, and raised the store's revision): Error{invalid_input} at the file, before anything
/// is committed.
void require_offers(const std::string& path, std::size_t rows_read, std::size_t offers) {
  if (offers > 0) return;
  if (rows_read == 0)
    throw_invalid(path, "no rows: the file holds no offer (a header alone, or an empty offers list); nothing was imported",
                  "at least one offer row (docs/import-format.md)");
  throw_invalid(path,
                fmt::format("no offers: {} row{} read, none of them a GPU offer; nothing was imported", rows_read,
                            rows_read == 1 ? "" : "s"),
                "at least one row with a GPU and a price (docs/import-format.md)");
}

/// The hand-over between ingest_file's parse thread and its writer: at most kDepth parsed
/// chunks wait (bounded memory: kDepth + 2 chunks alive, one being parsed and one being
/// written). The parser's exception, if any, is kept for the writer to rethrow after the
/// chunks before it were written; cancel() (the writer failed) makes the parser's next push
/// throw Cancelled so that it stops reading.
class ChunkPipe {
 public:
  struct Cancelled {};
  static constexpr std::size_t kDepth = 2;

  void push(ImportBatch&& chunk) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return queue_.size() < kDepth || cancelled_; });
    if (cancelled_) throw Cancelled{};
    queue_.push_back(std::move(chunk));
    cv_.notify_all();
  }
  /// The parser is done: `error` is its exception, or nullptr after the last chunk.
  void finish(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    error_ = std::move(error);
    cv_.notify_all();
  }
  /// The next chunk in file order, or nothing once the parser is done and every chunk was taken.
  std::optional<ImportBatch> pop() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !queue_.empty() || done_; });
    if (queue_.empty()) return std::nullopt;
    ImportBatch chunk = std::move(queue_.front());
    queue_.pop_front();
    cv_.notify_all();
    return chunk;
  }
  void cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    queue_.clear();
    cv_.notify_all();
  }
  /// After the parser thread was joined.
  void rethrow_parse_error() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ImportBatch> queue_;
  bool done_ = false;
  bool cancelled_ = false;
  std::exception_ptr error_;
};

}  // namespace

FileImport ingest_file(OfferStore& store, const std::string& path, std::optional<ImportFormat> format,
                       const IngestOptions& opts, std::size_t chunk_rows) {
  FileImport out;
  if (opts.dry_run) {
    ImportBatch batch = import_file(path, format);
    require_offers(path, batch.rows_read, batch.offers.size());
    out.result = ingest(store, batch, opts);
    out.rows_read = batch.rows_read;
    out.offers = batch.offers.size();
    out.summary = batch.summary();
    return out;
  }
  const std::vector<Offer> stored_index = stored_index_series(store);  // before the writer locks the store
  std::map<std::string, ImportRuleCount> counts;
  std::unique_ptr<ImportWriter> writer = store.begin_import();
  ChunkPipe pipe;
  // The parse thread reads, parses and gates chunks (pure work on its own chunk) while this
  // thread writes the previous ones: on 2 cores the file's parsing overlaps the store's inserts
  // (issue 11: 200,000 rows). Chunks reach the writer in file order, so the first error the
  // user sees is the one a sequential run would have shown.
  std::thread parser([&] {
    try {
      import_file_chunks(path, format, chunk_rows, [&](ImportBatch& chunk) {
        gate_against_index(chunk, stored_index, opts.today);
        pipe.push(std::move(chunk));  // the importer starts the next chunk from an empty batch
      });
      pipe.finish(nullptr);
    } catch (const ChunkPipe::Cancelled&) {
      pipe.finish(nullptr);
    } catch (...) {
      pipe.finish(std::current_exception());
    }
  });
  try {
    while (std::optional<ImportBatch> chunk = pipe.pop()) {
      writer->write(*chunk);
      out.rows_read += chunk->rows_read;
      for (const ImportRuleCount& c : chunk->summary()) {
        ImportRuleCount& t = counts[c.rule];
        t.rule = c.rule;
        t.rejected += c.rejected;
        t.flagged += c.flagged;
      }
    }
  } catch (...) {
    pipe.cancel();
    parser.join();
    throw;  // the writer, destroyed uncommitted, rolls back
  }
  parser.join();
  pipe.rethrow_parse_error();
  out.offers = writer->offers_written();
  require_offers(path, out.rows_read, out.offers);  // the writer, destroyed uncommitted, rolls back
  out.result = writer->commit();
  for (auto& [rule, c] : counts) out.summary.push_back(std::move(c));
  return out;
}

ImportResult ingest(OfferStore& store, ImportBatch& batch, const IngestOptions& opts) {
  gate_against_store(store, batch, opts.today);
  return opts.dry_run ? store.preview_import(batch) : store.import(batch);
}

void split_seen_again(OfferStore& store, ImportBatch& batch) {
  for (Offer& o : batch.offers) {
    if (o.prices.empty()) continue;
    const std::optional<Offer> stored = store.get(o.id);
    if (!stored) continue;
    const auto latest = stored->latest_prices();
    std::vector<PriceObservation> keep;
    for (PriceObservation& p : o.prices) {
      const PriceObservation* l = latest[static_cast<std::size_t>(p.kind)];
      if (l != nullptr && l->usd_per_hour == p.usd_per_hour && l->source.dataset == p.source.dataset &&
          p.source.observed_at && l->source.observed_at && *l->source.observed_at < *p.source.observed_at)
        batch.seen_again.push_back(PriceSeenAgain{o.id, p.kind, p.usd_per_hour, p.source.dataset, *p.source.observed_at});
      else
        keep.push_back(std::move(p));
    }
    o.prices = std::move(keep);
  }
}

SnapshotCommit ingest_snapshot(OfferStore& store, const SnapshotRecord& record, ImportBatch* batch,
                               std::string_view today) {
  if (batch != nullptr && record.status == "accepted") gate_against_store(store, *batch, today);
  // After the gates (the below-market-index gate reads the batch's prices): a price the source
  // gives again is seen again, not observed again.
  if (batch != nullptr && record.status != "rejected") split_seen_again(store, *batch);
  return store.commit_snapshot(record, batch);
}

}  // namespace gpuplan
