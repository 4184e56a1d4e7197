// ewyluda/gpu-price-index daily observation files (data/observations/YYYY/YYYY-MM-DD.csv):
// one row per provider × SKU × region × pricing with its collection time (importers.hpp).
#include <fmt/format.h>

#include <regex>

#include "catalog/import_detail.hpp"
#include "catalog/importers.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

namespace gpuplan {

using namespace import_detail;

namespace {

/// "2026-10-10T12:33:53+00:00" → "2026-10-10T12:33:53Z"; other offsets or shapes → the date part
/// only when `date` agrees, else nullopt (never guessed).
std::optional<std::string> observed_at(const std::string& collected_at, const std::string& date) {
  static const std::regex kUtc(R"((\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?(?:\+00:00|Z))");
  std::smatch m;
  if (std::regex_match(collected_at, m, kUtc) && is_iso_date(m[1].str())) return m[1].str() + "T" + m[2].str() + "Z";
  if (is_iso_date(date)) return date;
  return std::nullopt;
}

}  // namespace

ImportBatch import_ewyluda_observations_csv(std::string_view text, const ImportSource& src) {
  const CsvTable table = CsvTable::parse(text, src.file);
  for (const char* col : {"date", "collected_at", "source", "provider", "pricing", "gpu_model", "sku", "region",
                          "gpu_count", "usd_per_hour", "sample_size"})
    (void)table.column(col);
  ImportBatch batch;
  batch.dataset = src.dataset;
  static const std::regex kOciShape(R"(BM\.GPU\.[A-Za-z0-9-]+\.(\d+))");
  for (const CsvRow& row : table.rows()) {
    ++batch.rows_read;
    const std::string where = table.where(row);
    const std::string date(trim(table.cell(row, "date")));
    if (!is_iso_date(date)) {
      throw Error(ErrorKind::invalid_input, where, fmt::format("column date: '{}' is not a date", date),
                  "an ISO date YYYY-MM-DD");
    }
    const std::string source(trim(table.cell(row, "source")));
    const std::string display(trim(table.cell(row, "provider")));
    const std::string pricing = lower(trim(table.cell(row, "pricing")));
    const std::string gpu(trim(table.cell(row, "gpu_model")));
    const std::string sku(trim(table.cell(row, "sku")));
    if (source.empty() || gpu.empty() || sku.empty()) {
      throw Error(ErrorKind::invalid_input, where, "source, gpu_model or sku is empty",
                  "a source id, a GPU model and a SKU");
    }
    if (pricing != "on_demand" && pricing != "spot") {
      throw Error(ErrorKind::invalid_input, where, fmt::format("column pricing: '{}' is not known", pricing),
                  "on_demand or spot");
    }
    int count = cell_count(table.cell(row, "gpu_count"), where, "gpu_count");
    std::optional<double> price = cell_price(table.cell(row, "usd_per_hour"), where, "usd_per_hour");
    const std::optional<double> sample = cell_number(table.cell(row, "sample_size"), where, "sample_size");
    if (!price) {
      report(batch, nullptr, where, import_rule::kNoPrice, "usd_per_hour is empty: skipped", true, false);
      continue;
    }

    Offer o;
    o.provider = canonical_provider_id(source);
    o.instance_type = sku;
    // "median-offer" is a statistic per GPU, not a SKU: the GPU names it, so that vast's A100 40GB
    // and A100 80GB medians are two offers (one id is one machine, issue 11).
    if (lower(sku) == "median-offer") o.instance_type = sku + " " + gpu;
    // RunPod's Community and Secure clouds list the same GPU ids at different prices.
    if (o.provider == "runpod") {
      if (contains_ci(display, "community")) o.instance_type += " (community)";
      if (contains_ci(display, "secure")) o.instance_type += " (secure)";
    }
    o.region = std::string(trim(table.cell(row, "region")));
    o.gpu_name_raw = gpu;
    std::smatch shape;
    if (o.provider == "oci" && count == 1 && std::regex_match(sku, shape, kOciShape)) {
      const int n = std::stoi(shape[1].str());
      if (n > 1) {
        report(batch, &o, where, import_rule::kPerGpuRowScaled,
               fmt::format("OCI quotes bare-metal shapes per GPU-hour: ${:g} × {} GPUs of {} = ${:g}/h for the shape",
                           *price, n, sku, *price * n),
               false, false);
        count = n;
        *price *= n;
      }
    }
    o.gpu_count = count;
    o.id = make_offer_id(o);
    const SourceRef ref{src.dataset, locator_line(src, row.line), observed_at(std::string(trim(table.cell(row, "collected_at"))), date)};
    resolve_gpu(o, {gpu, sku}, form_hint({gpu, sku}), batch, src, where);
    if ((sample && *sample > 1) || lower(sku) == "median-offer") {
      report(batch, &o, where, import_rule::kPriceIndex,
             fmt::format("median of {} marketplace listings for {}: a statistic, not one rentable offer; kept for "
                         "price history, never ranked",
                         sample ? fmt::format("{:g}", *sample) : std::string("several"), gpu),
             false, true);
    }
    if (contains_ci(sku, " MIG ")) {
      report(batch, &o, where, import_rule::kPartialGpu,
             fmt::format("'{}' is a MIG slice of one GPU, not a whole {}: never ranked", sku, gpu), false, true);
    }
    add_checked_price(batch, o, pricing == "spot" ? PriceKind::spot : PriceKind::on_demand, *price, ref, where);
    add_offer(batch, std::move(o));
  }
  return batch;
}

}  // namespace gpuplan
