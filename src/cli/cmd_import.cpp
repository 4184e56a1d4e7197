// `gpuplan import FILE [--dry-run] [--format NAME]`: imports an offer file (format detected by
// the importers, or forced) into the offer store as one transaction, and prints what changed:
// rows read, offers added/updated/unchanged, observations added, and per data-quality rule how
// many rows were rejected or flagged. A malformed file is an error naming file:line; nothing is
// written then. Imports that take over a second report progress on stderr (a terminal only); the
// environment variable GPUPLAN_PROGRESS_INTERVAL_MS (1..60000, default 1000) sets the period, which
// the end-to-end tests shorten so they do not depend on how fast the machine imports.
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "catalog/importers.hpp"
#include "catalog/ingest.hpp"
#include "catalog/open_store.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

namespace gpuplan::cli {
namespace {

struct ImportOptions {
  std::string file;
  std::string format;
  bool dry_run = false;
};

/// The progress period: GPUPLAN_PROGRESS_INTERVAL_MS when it is an integer in [1, 60000], else 1 s.
std::chrono::milliseconds progress_interval() {
  const char* v = std::getenv("GPUPLAN_PROGRESS_INTERVAL_MS");
  if (v == nullptr || *v == '\0') return std::chrono::milliseconds(1000);
  char* end = nullptr;
  const long ms = std::strtol(v, &end, 10);
  if (*end != '\0' || ms < 1 || ms > 60000) return std::chrono::milliseconds(1000);
  return std::chrono::milliseconds(ms);
}

/// Prints "PHASE... N s" on stderr once per period (progress_interval()) after the first period, until destroyed.
class Progress {
 public:
  explicit Progress(std::string file)
      : file_(std::move(file)), interval_(progress_interval()), thread_([this] { loop(); }) {}
  ~Progress() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (printed_) fmt::print(stderr, "\n");
  }
  void phase(std::string p) {
    std::lock_guard<std::mutex> lock(mu_);
    phase_ = std::move(p);
  }

 private:
  void loop() {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, interval_, [this] { return done_; })) {
      const auto s = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count();
      // A `\r` progress line only on a terminal: a redirected stderr (a log file) gets none.
      if (!::isatty(::fileno(stderr))) continue;
      fmt::print(stderr, "\rimport {}: {}... {} s", file_, phase_, s);
      std::fflush(stderr);
      printed_ = true;
    }
  }
  std::string file_;
  std::chrono::milliseconds interval_;
  std::string phase_ = "reading";
  bool done_ = false;
  bool printed_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

void run_import(const ImportOptions& opts, const GlobalOptions& global) {
  std::optional<ImportFormat> format;
  if (!opts.format.empty()) {
    format = parse_import_format(opts.format);
    if (!format)
      throw_invalid("--format", "unknown import format \"" + opts.format + "\"",
                    "skypilot-vms-csv, fsdl-cloud-gpus-csv, fsdl-serverless-gpus-csv, tardellirs-offerings-json, "
                    "ewyluda-index-history-csv, gpuhunt-tpu-pricing-json, generic-csv or generic-json");
  }
  FileImport imported;
  {
    Progress progress(opts.file);
    // A missing, unreadable or non-regular file is refused before the store is opened (or
    // created and seeded), as when the file was parsed first.
    { const InputFile probe(opts.file); }
    const SystemClock clock;
    auto store = open_store(global.db_path, StoreContext{gpu_catalog(global), clock});
    progress.phase(opts.dry_run ? "reading and checking against the store" : "reading and writing");
    // One write path with every quality gate (future dates, market index; ingest.hpp). The file
    // is streamed into one transaction: a malformed row (file:line) or a gate writes nothing.
    imported = ingest_file(*store, opts.file, format, IngestOptions{clock.today(), opts.dry_run});
  }
  const ImportResult& result = imported.result;
  fmt::print("{}{}: {} rows read, {} offers in the file\n", opts.dry_run ? "dry run (nothing written) " : "",
             opts.file, imported.rows_read, imported.offers);
  fmt::print("  offers: {} added, {} updated, {} unchanged\n", result.offers_added, result.offers_updated,
             result.offers_unchanged);
  fmt::print("  observations: {} added, {} already known\n", result.observations_added,
             result.observations_already_known);
  const auto& summary = imported.summary;
  if (summary.empty()) {
    fmt::print("  quality rules: nothing rejected or flagged\n");
    return;
  }
  TextTable t;
  t.header = {"RULE", "REJECTED_ROWS", "FLAGGED"};
  t.right_align = {false, true, true};
  for (const auto& r : summary) t.rows.push_back({r.rule, std::to_string(r.rejected), std::to_string(r.flagged)});
  fmt::print("{}", t.render());
}

GPUPLAN_REGISTER_COMMAND(Command{
    "import", "import an offer file (SkyPilot, FSDL, tardellirs, ewyluda, gpuhunt or gpuplan CSV/JSON) into the store",
    [](CLI::App& sub, GlobalOptions& global) {
      auto opts = std::make_shared<ImportOptions>();
      sub.add_option("file", opts->file, "the file to import")->required();
      sub.add_flag("--dry-run", opts->dry_run, "parse and compare with the store, write nothing");
      sub.add_option("--format", opts->format, "force the input format instead of detecting it");
      sub.callback([opts, &global] { run_import(*opts, global); });
    }});

}  // namespace
}  // namespace gpuplan::cli
