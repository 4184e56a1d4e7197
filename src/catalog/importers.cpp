// bundled_catalog(): every offer file compiled in from data/offers, with its provenance
// (repository@commit:upstream path, from data/offers/PROVENANCE.md), imported and merged.
#include "catalog/importers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "catalog/import_detail.hpp"
#include "catalog/providers.hpp"
#include "util/calendar.hpp"
#include "util/csv.hpp"
#include "util/digest.hpp"
#include "util/embedded.hpp"
#include "util/error.hpp"

namespace gpuplan {

namespace {

struct BundledFile {
  std::string_view path;       ///< embedded path (relative to data/)
  ImportFormat format;
  std::string_view dataset;
  std::string_view locator_base;  ///< owner/repo@commit:upstream path (PROVENANCE.md)
  /// Optional sidecar (relative to data/) with columns line,commit,published_at (CSV files: one
  /// row per data line) or pointer,commit,published_at (JSON files: one row per JSON pointer the
  /// importer's locators end with, "#<pointer>"): the date the row's current prices were first
  /// published in an unbroken run of the upstream repository's history (derived from git,
  /// PROVENANCE.md). Empty = rows keep the importer's dates.
  std::string_view row_dates = {};
  /// Optional sidecar (relative to data/) with columns line,instance_type,region,usd_per_hour,
  /// observed_at,observed_in: on-demand prices of this file equal to a dated observation of the
  /// same instance type and region in another bundled file (observed_in: that observation's
  /// locator), written by a script (PROVENANCE.md). apply_price_dates. Empty = none.
  std::string_view price_dates = {};
};

// One row per file of data/offers/PROVENANCE.md. For the AWS excerpt the line numbers in
// locators are those of the bundled excerpt (header + the contiguous p* block of the upstream
// file), marked "[p-family excerpt]".
constexpr BundledFile kBundled[] = {
    {"offers/skypilot-catalog/v8/aws/vms.p-family.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v8/aws",
     "skypilot-org/skypilot-catalog@00148f2af3672e2229b4f7bf8157d5a3f36e3c35:catalogs/v8/aws/vms.csv[p-family excerpt]",
     {}, "offers/skypilot-catalog/v8/aws/vms.p-family.price-dates.csv"},
    {"offers/skypilot-catalog/v8/lambda/vms.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v8/lambda",
     "skypilot-org/skypilot-catalog@95eaf484fa404db8356b745607d162ea4fdf8fda:catalogs/v8/lambda/vms.csv"},
    {"offers/skypilot-catalog/v8/nebius/vms.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v8/nebius",
     "skypilot-org/skypilot-catalog@0082b0435f3912ae4c566856b272455cc78f4f61:catalogs/v8/nebius/vms.csv"},
    {"offers/skypilot-catalog/v8/hyperbolic/vms.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v8/hyperbolic",
     "skypilot-org/skypilot-catalog@0082b0435f3912ae4c566856b272455cc78f4f61:catalogs/v8/hyperbolic/vms.csv"},
    {"offers/skypilot-catalog/v8/verda/vms.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v8/verda",
     "skypilot-org/skypilot-catalog@000c1d0bf24621f4ac37cfa585f0897c1aa1d9cf:catalogs/v8/verda/vms.csv"},
    {"offers/skypilot-catalog/v8/mithril/vms.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v8/mithril",
     "skypilot-org/skypilot-catalog@1f9eb0c264f9a6d78833766f4b18353ac7dfdde9:catalogs/v8/mithril/vms.csv"},
    {"offers/skypilot-catalog/v8/hyperstack/vms.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v8/hyperstack",
     "skypilot-org/skypilot-catalog@fdc9d908ab0b2af9f468f139fb3f662c8c6b3257:catalogs/v8/hyperstack/vms.csv"},
    {"offers/skypilot-catalog/v8/primeintellect/vms.csv", ImportFormat::skypilot_vms_csv,
     "skypilot-catalog/v8/primeintellect",
     "skypilot-org/skypilot-catalog@d9a304ea01e96cd4a043159c60d9326d8de4cf0f:catalogs/v8/primeintellect/vms.csv"},
    {"offers/skypilot-catalog/v8/shadeform/vms.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v8/shadeform",
     "skypilot-org/skypilot-catalog@002363dac75913b446b2d3d564ae795678849dfd:catalogs/v8/shadeform/vms.csv"},
    {"offers/skypilot-catalog/v8/vast/vms.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v8/vast",
     "skypilot-org/skypilot-catalog@01b8cdda287814b30ff0acb49746cca19fbd4355:catalogs/v8/vast/vms.csv"},
    {"offers/skypilot-catalog/v9/fluidstack/vms.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v9/fluidstack",
     "skypilot-org/skypilot-catalog@2c3d7ea7d76bf84cf80d382e946c1609571485fd:catalogs/v9/fluidstack/vms.csv"},
    {"offers/skypilot-catalog/v6/paperspace/vms.csv", ImportFormat::skypilot_vms_csv, "skypilot-catalog/v6/paperspace",
     "skypilot-org/skypilot-catalog@e520054145d1bce6748bcf18c9a25ddd6ea9a348:catalogs/v6/paperspace/vms.csv"},
    {"offers/fsdl-cloud-gpus/cloud-gpus.csv", ImportFormat::fsdl_cloud_gpus_csv, "fsdl-cloud-gpus",
     "the-full-stack/website@2bddc6d52544dc258e7e34396c6958377f72816b:docs/cloud-gpus/cloud-gpus.csv",
     "offers/fsdl-cloud-gpus/cloud-gpus.row-dates.csv"},
    {"offers/fsdl-cloud-gpus/serverless-gpus.csv", ImportFormat::fsdl_serverless_gpus_csv, "fsdl-serverless-gpus",
     "the-full-stack/website@2bddc6d52544dc258e7e34396c6958377f72816b:docs/cloud-gpus/serverless-gpus.csv",
     "offers/fsdl-cloud-gpus/serverless-gpus.row-dates.csv"},
    {"offers/tardellirs-gpu-pricing/offerings.json", ImportFormat::tardellirs_offerings_json, "tardellirs",
     "tardellirs/gpu-pricing@8f09a68030967f5c269c304493abf0911dd19858:src/data/offerings.json"},
    {"offers/ewyluda-gpu-price-index/index-history.csv", ImportFormat::ewyluda_index_history_csv,
     "ewyluda-gpu-price-index",
     "ewyluda/gpu-price-index@0b49da203f7cc6de2f09017cce4b4f458ecc3994:site/data/index-history.csv"},
    {"offers/ewyluda-gpu-price-index/observations-2026-10-10.csv", ImportFormat::ewyluda_observations_csv,
     "ewyluda-observations",
     "ewyluda/gpu-price-index@ab49c8081de81f1dae5f8f7e7d46af80b68c35d6:data/observations/2026/2026-10-10.csv"},
    {"offers/sourced/aws-capacity-blocks.csv", ImportFormat::generic_csv, "aws-capacity-blocks",
     "data/offers/sourced/aws-capacity-blocks.csv (PROVENANCE.md §7)"},
    {"offers/cyclenerd-gcp-pricing/gcp-gpu-machines.csv", ImportFormat::generic_csv, "cyclenerd-gcp-pricing",
     "Cyclenerd/google-cloud-pricing-cost-calculator@fd66b26ff84fee5cdd94f341ea89206e76c06b99:pricing.yml"
     "[GPU machine types, converted; PROVENANCE.md §8]"},
    {"offers/azure-pricing-radar/azure-gpu-vms.csv", ImportFormat::generic_csv, "azure-pricing-radar",
     "andy-diericks/azure-pricing-radar@cf741f25c50759745f8eb5dcaf6c3746669c8f31:data/latest/vm-*.json"
     "[N-series Linux meters, converted; PROVENANCE.md §12]"},
    {"offers/sparecores-aws/aws-gpu-ondemand-2024-02.csv", ImportFormat::generic_csv, "sparecores-aws",
     "SpareCores/sc-data@ce414d8e9d6bb1faf6ce9407fedac0c1f25f587a:src/sc_data/data/sc-data-all.db"
     "[AWS GPU on-demand, converted; PROVENANCE.md §13]"},
    {"offers/gpuhunt/tpu_pricing.json", ImportFormat::gpuhunt_tpu_pricing_json, "gpuhunt-tpu-pricing",
     "dstackai/gpuhunt@b707e743b2c27d7ec9be17e87e689997cbcbbeaf:src/gpuhunt/resources/tpu_pricing.json",
     "offers/gpuhunt/tpu_pricing.row-dates.csv"},
};

// Bundled files under offers/ that hold no offers (documentation, reference tables).
constexpr std::string_view kNotOffers[] = {
    "offers/PROVENANCE.md",
    "offers/README.md",
    "offers/skypilot-catalog/v8/common/accelerators.csv",  // which clouds sell which accelerator
    "offers/skypilot-catalog/v7/common/metadata.csv",      // GPU memory/manufacturer table
    "offers/tardellirs-gpu-pricing/providers.json",        // provider names/urls, no prices
    "offers/fsdl-cloud-gpus/cloud-gpus.row-dates.csv",       // row dates of cloud-gpus.csv (kBundled row_dates)
    "offers/fsdl-cloud-gpus/serverless-gpus.row-dates.csv",  // row dates of serverless-gpus.csv
    "offers/gpuhunt/tpu_pricing.row-dates.csv",              // row dates of tpu_pricing.json
    "offers/skypilot-catalog/v8/aws/vms.p-family.price-dates.csv",  // dated same prices (kBundled price_dates)
    "offers/aws-spot-advisor/interruption-bands.csv",        // spot interruption bands (apply_spot_interruption_bands)
};

constexpr std::string_view kSpotBands = "offers/aws-spot-advisor/interruption-bands.csv";
constexpr std::string_view kSpotBandsSource =
    "AWS Spot Instance Advisor data https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json as committed in "
    "alexei-led/spotinfo@5bdc33cee2e185c2f62df29dd9c4ad0ad7102a74 (2025-06-28T08:37:33Z)";
constexpr std::string_view kSpotBandsSeen = "2025-06-28";
constexpr double kSpotAdvisorWindowDays = 30;  // "during the trailing month" (aws.amazon.com/ec2/spot/instance-advisor)

// Applies a row-dates sidecar: every observation whose locator is "<locator_base>:<line>" (or
// "<locator_base>#<pointer>") and
// has no date gets the sidecar's published_at for that line. An observation whose line has no
// sidecar row is an internal error (the two files are derived together; a gap means one was
// edited alone).
void apply_row_dates(ImportBatch& batch, const BundledFile& file) {
  const std::string sidecar = "data/" + std::string(file.row_dates);
  const CsvTable t = CsvTable::parse(embedded_file_or_throw(file.row_dates), sidecar);
  std::map<std::string, std::string> by_locator;
  for (const CsvRow& r : t.rows()) {
    const std::string& date = t.cell(r, "published_at");
    if (!import_detail::is_iso_date(date))
      throw Error(ErrorKind::internal, t.where(r), fmt::format("published_at '{}' is not a date", date),
                  "YYYY-MM-DDTHH:MM:SSZ");
    const bool by_pointer = t.has_column("pointer");
    by_locator[std::string(file.locator_base) + (by_pointer ? "#" + t.cell(r, "pointer") : ":" + t.cell(r, "line"))] =
        date;
  }
  for (Offer& o : batch.offers) {
    for (PriceObservation& p : o.prices) {
      const auto it = by_locator.find(p.source.locator);
      if (it == by_locator.end())
        throw Error(ErrorKind::internal, p.source.locator, "no row date for this line", sidecar);
      if (!p.source.observed_at) p.source.observed_at = it->second;
    }
  }
}

// Applies a price-dates sidecar (BundledFile::price_dates, written by
// scripts/date-skypilot-aws-prices.py): the on-demand observation whose locator is
// "<locator_base>:<line>" takes the sidecar's observed_at, and its locator names the dated
// observation it equals ("... = same price observed in <observed_in>"). Spot and other kinds keep
// theirs (the dated source observed on-demand prices only). A sidecar row whose line is not an
// on-demand observation of that instance type, region and exact price, or that is used twice, is an
// internal error (the files are derived together; a difference means one was edited alone).
void apply_price_dates(ImportBatch& batch, const BundledFile& file) {
  const std::string sidecar = "data/" + std::string(file.price_dates);
  const CsvTable t = CsvTable::parse(embedded_file_or_throw(file.price_dates), sidecar);
  std::map<std::string, const CsvRow*> by_locator;
  for (const CsvRow& r : t.rows()) {
    if (!import_detail::is_iso_date(t.cell(r, "observed_at")))
      throw Error(ErrorKind::internal, t.where(r), fmt::format("observed_at '{}' is not a date", t.cell(r, "observed_at")),
                  "YYYY-MM-DDTHH:MM:SSZ");
    if (t.cell(r, "observed_in").empty())
      throw Error(ErrorKind::internal, t.where(r), "a date without the observation it comes from", "observed_in");
    if (!by_locator.emplace(std::string(file.locator_base) + ":" + t.cell(r, "line"), &r).second)
      throw Error(ErrorKind::internal, t.where(r), "a second row for this line", "one row per line");
  }
  std::size_t applied = 0;
  for (Offer& o : batch.offers) {
    for (PriceObservation& p : o.prices) {
      if (p.kind != PriceKind::on_demand) continue;
      const auto it = by_locator.find(p.source.locator);
      if (it == by_locator.end()) continue;
      const CsvRow& r = *it->second;
      const std::optional<double> usd = import_detail::cell_number(t.cell(r, "usd_per_hour"), t.where(r), "usd_per_hour");
      if (t.cell(r, "instance_type") != o.instance_type || t.cell(r, "region") != o.region || usd != p.usd_per_hour)
        throw Error(ErrorKind::internal, t.where(r),
                    fmt::format("not the row of {} at {}/h", o.id, p.usd_per_hour),
                    "the same instance type, region and price as the line (re-run scripts/date-skypilot-aws-prices.py)");
      if (p.source.observed_at)
        throw Error(ErrorKind::internal, t.where(r), "the line's price is dated already", "an undated line");
      p.source.observed_at = t.cell(r, "observed_at");
      p.source.locator += " = same price observed in " + t.cell(r, "observed_in");
      ++applied;
    }
  }
  if (applied != by_locator.size())
    throw Error(ErrorKind::internal, sidecar, fmt::format("{} of {} rows match an on-demand price", applied, by_locator.size()),
                "every row the line of an on-demand price (re-run scripts/date-skypilot-aws-prices.py)");
}

}  // namespace

std::size_t apply_spot_interruption_bands(std::vector<Offer>& offers) {
  const std::string file = "data/" + std::string(kSpotBands);
  const CsvTable t = CsvTable::parse(embedded_file_or_throw(kSpotBands), file);
  std::map<std::pair<std::string, std::string>, const CsvRow*> by_key;
  for (const CsvRow& r : t.rows()) by_key[{t.cell(r, "region"), t.cell(r, "instance_type")}] = &r;
  std::size_t applied = 0;
  for (Offer& o : offers) {
    if (o.provider != "aws" || o.billing_override.preemptions_per_day) continue;
    if (o.latest_price(PriceKind::spot) == nullptr) continue;
    const auto it = by_key.find({o.region, o.instance_type});
    if (it == by_key.end()) continue;
    const CsvRow& r = *it->second;
    const std::string& max_text = t.cell(r, "interruption_range_max_pct");
    const std::optional<double> max_v = import_detail::cell_number(max_text, t.where(r), "interruption_range_max_pct");
    const double max_pct = max_v.value_or(0);
    if (!(max_pct > 0 && max_pct <= 100))
      throw Error(ErrorKind::internal, t.where(r), fmt::format("interruption_range_max_pct {} out of range", max_text),
                  "a percentage in (0, 100]");
    // The band is the share of spot instances of this type and region that AWS interrupted in
    // the trailing month; its upper edge spread over 30 days is the rate used for planning
    // (conservative: the top of the band, each interrupted instance interrupted once).
    const double per_day = max_pct / 100.0 / kSpotAdvisorWindowDays;
    o.billing_override.preemptions_per_day = per_day;
    o.billing_override.sources.push_back(
        fmt::format("preemptions_per_day: {} (seen {}); interruption frequency {} in {} for {} (Linux) = upper edge "
                    "{}% of instances per trailing month / {} days = {:.4g} per instance-day",
                    kSpotBandsSource, kSpotBandsSeen, t.cell(r, "interruption_frequency"), o.region, o.instance_type,
                    max_text, kSpotAdvisorWindowDays, per_day));
    ++applied;
  }
  return applied;
}


void check_no_future_dates(const ImportBatch& batch, std::string_view today) {
  for (const Offer& o : batch.offers) {
    for (const PriceObservation& p : o.prices) {
      // By the UTC day of the instant, as `today` is the UTC date: a timestamp written at +14:00
      // just after its local midnight is still today in UTC (it was refused by its local date), and
      // one at −12:00 late in its day is tomorrow in UTC (it was accepted).
      const auto utc_day = p.source.observed_at ? utc_days_since_epoch(*p.source.observed_at) : std::nullopt;
      const auto today_day = date_prefix_days_since_epoch(today);
      const bool future = utc_day && today_day ? *utc_day > *today_day
                                               : p.source.observed_at && p.source.observed_at->substr(0, 10) > today;
      if (future) {
        throw Error(ErrorKind::invalid_input, p.source.locator.empty() ? o.id : import_detail::locator_place(p.source.locator),
                    fmt::format("observed_at {} is after today ({})", *p.source.observed_at, today),
                    "the date the price was seen, not later than today");
      }
    }
  }
}

std::size_t flag_prices_below_market_index(ImportBatch& batch, double fraction) {
  return flag_prices_below_market_index(batch, {}, fraction);
}

std::size_t flag_prices_below_market_index(ImportBatch& batch, const std::vector<Offer>& more_index, double fraction) {
  // Lowest non-spot index value per GPU at each GPU's latest index date.
  struct IndexLow {
    std::string date;
    double usd_per_gpu_hour = 0;
    std::string series;
  };
  std::map<std::string, IndexLow> low;
  // The batch's own series first: a series in both (same id) is read from the batch only.
  std::unordered_set<std::string_view> batch_series;
  for (const Offer& o : batch.offers)
    if (o.provider.rfind("index:", 0) == 0) batch_series.insert(o.id);
  std::vector<const Offer*> series;
  for (const Offer& o : batch.offers) series.push_back(&o);
  for (const Offer& o : more_index)
    if (batch_series.count(o.id) == 0) series.push_back(&o);
  for (const Offer* op : series) {
    const Offer& o = *op;
    if (o.provider.rfind("index:", 0) != 0 || !o.gpu_name || o.gpu_count < 1) continue;
    const PriceObservation* p = o.latest_price(PriceKind::on_demand);
    if (p == nullptr || !p->source.observed_at) continue;
    const double per_gpu = p->usd_per_hour / o.gpu_count;
    auto [it, inserted] = low.try_emplace(*o.gpu_name, IndexLow{*p->source.observed_at, per_gpu, o.provider});
    IndexLow& l = it->second;
    if (inserted) continue;
    if (*p->source.observed_at > l.date) {
      l = IndexLow{*p->source.observed_at, per_gpu, o.provider};
    } else if (*p->source.observed_at == l.date && per_gpu < l.usd_per_gpu_hour) {
      l.usd_per_gpu_hour = per_gpu;
      l.series = o.provider;
    }
  }
  std::size_t flagged = 0;
  for (Offer& o : batch.offers) {
    if (o.provider.rfind("index:", 0) == 0 || !o.gpu_name || o.gpu_count < 1) continue;
    // Idempotent: an offer already flagged by this gate (a second pass on one batch) is skipped.
    if (std::any_of(o.flags.begin(), o.flags.end(),
                    [](const QualityFlag& f) { return f.rule == import_rule::kBelowMarketIndex; }))
      continue;
    auto it = low.find(*o.gpu_name);
    if (it == low.end()) continue;
    const PriceObservation* p = o.latest_price(PriceKind::on_demand);
    if (p == nullptr || p->usd_per_hour <= 0) continue;
    const double per_gpu = p->usd_per_hour / o.gpu_count;
    if (per_gpu >= fraction * it->second.usd_per_gpu_hour) continue;
    const std::string where = p->source.locator.empty() ? o.id : p->source.locator;
    import_detail::report(batch, &o, where, import_rule::kBelowMarketIndex,
           fmt::format("on-demand ${:.2f} per GPU-hour is under {:.0f}% of the lowest market index for {} "
                       "(${:.2f}, {} on {}): check the source before relying on it",
                       per_gpu, fraction * 100, *o.gpu_name, it->second.usd_per_gpu_hour, it->second.series,
                       it->second.date),
           false, false);
    ++flagged;
  }
  return flagged;
}

std::size_t flag_price_outliers(ImportBatch& batch, double fraction) {
  // Lowest and second-lowest on-demand USD per GPU-hour per GPU, by provider.
  std::map<std::string, std::map<std::string, double>> lowest;  // gpu -> provider -> min per-GPU price
  auto per_gpu_price = [](const Offer& o) -> std::optional<double> {
    if (o.provider.rfind("index:", 0) == 0 || !o.gpu_name || o.gpu_count < 1 || o.excluded_from_ranking())
      return std::nullopt;
    const PriceObservation* p = o.latest_price(PriceKind::on_demand);
    if (p == nullptr || p->usd_per_hour <= 0) return std::nullopt;
    return p->usd_per_hour / o.gpu_count;
  };
  for (const Offer& o : batch.offers) {
    const auto v = per_gpu_price(o);
    if (!v) continue;
    auto [it, inserted] = lowest[*o.gpu_name].try_emplace(o.provider, *v);
    if (!inserted && *v < it->second) it->second = *v;
  }
  std::size_t flagged = 0;
  for (Offer& o : batch.offers) {
    const auto v = per_gpu_price(o);
    if (!v) continue;
    std::optional<double> others;
    std::size_t n_others = 0;
    for (const auto& [provider, low] : lowest[*o.gpu_name]) {
      if (provider == o.provider) continue;
      ++n_others;
      if (!others || low < *others) others = low;
    }
    if (n_others < 2 || *v >= fraction * *others) continue;
    const PriceObservation* p = o.latest_price(PriceKind::on_demand);
    const std::string where = p->source.locator.empty() ? o.id : p->source.locator;
    import_detail::report(batch, &o, where, import_rule::kPriceOutlier,
                          fmt::format("on-demand ${:.2f} per GPU-hour is under {:.0f}% of the cheapest of {} other providers "
                                      "for {} (${:.2f}): more likely a placeholder, a slice or a bid than a price; kept "
                                      "out of rankings (--include-flagged shows it)",
                                      *v, fraction * 100, n_others, *o.gpu_name, *others),
                          false, true);
    ++flagged;
  }
  return flagged;
}

const std::string& bundled_catalog_key() {
  static const std::string key = [] {
    std::vector<std::string_view> parts;
    std::vector<std::string_view> paths = embedded_paths("offers/");
    paths.push_back("providers.toml");
    std::sort(paths.begin(), paths.end());
    // Each file enters by its SHA-256, computed at build time (cmake/embed_one.cmake): hashing
    // the ~1.3 MB of bundled data at every start cost more than a millisecond per command.
    for (std::string_view p : paths) {
      const auto digest = embedded_file_sha256(p);
      if (!digest) throw_not_found(std::string(p), "no such bundled data file");
      parts.push_back(p);
      parts.push_back(*digest);
    }
    return "bundled " + sha256_of_parts(parts);
  }();
  return key;
}

ImportBatch bundled_catalog(const GpuCatalog* gpus) {
  ImportBatch all;
  all.dataset = "bundled";
  for (std::string_view path : embedded_paths("offers/")) {
    const BundledFile* file = nullptr;
    for (const BundledFile& f : kBundled)
      if (f.path == path) file = &f;
    if (file == nullptr) {
      bool documented = false;
      for (std::string_view n : kNotOffers) documented = documented || n == path;
      if (documented) continue;
      throw Error(ErrorKind::internal, "data/" + std::string(path),
                  "bundled offer file has no provenance entry in src/catalog/importers.cpp",
                  "a kBundled row (format, dataset, repo@commit:path) or a kNotOffers entry");
    }
    ImportSource src;
    src.file = "data/" + std::string(path);
    src.dataset = std::string(file->dataset);
    src.locator_base = std::string(file->locator_base);
    src.gpus = gpus;
    ImportBatch b = import_text(embedded_file_or_throw(path), file->format, src);
    if (!file->row_dates.empty()) apply_row_dates(b, *file);
    if (!file->price_dates.empty()) apply_price_dates(b, *file);
    merge_batch(all, std::move(b));
  }
  flag_prices_below_market_index(all);
  flag_price_outliers(all);
  // Inter-node networks documented per instance family (data/providers.toml [[networks]]).
  apply_network_facts(all.offers, bundled_providers());
  // AWS spot interruption-frequency bands per instance type and region (data/offers/aws-spot-advisor).
  apply_spot_interruption_bands(all.offers);
  for (const BundledFile& f : kBundled) {
    if (!embedded_file(f.path)) {
      throw Error(ErrorKind::internal, "data/" + std::string(f.path), "listed bundled offer file is not embedded",
                  "the file under data/offers (re-run cmake)");
    }
  }
  return all;
}

}  // namespace gpuplan
