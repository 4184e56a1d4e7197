// ewyluda/gpu-price-index index-history.csv (price-index time series, PROVENANCE.md §4) and
// dstackai/gpuhunt tpu_pricing.json (TPU price table, PROVENANCE.md §5).
#include <fmt/format.h>

#include "catalog/import_detail.hpp"
#include "catalog/importers.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

namespace gpuplan {

using namespace import_detail;

ImportBatch import_ewyluda_index_history_csv(std::string_view text, const ImportSource& src) {
  const CsvTable table = CsvTable::parse(text, src.file);
  for (const char* col : {"date", "gpu_model", "series", "usd_per_gpu_hour"}) (void)table.column(col);
  ImportBatch batch;
  batch.dataset = src.dataset;
  for (const CsvRow& row : table.rows()) {
    ++batch.rows_read;
    const std::string where = table.where(row);
    const std::string date(trim(table.cell(row, "date")));
    const std::string gpu(trim(table.cell(row, "gpu_model")));
    const std::string series(trim(table.cell(row, "series")));
    if (!is_iso_date(date)) {
      throw Error(ErrorKind::invalid_input, where, fmt::format("column date: '{}' is not a date", date),
                  "an ISO date YYYY-MM-DD");
    }
    if (gpu.empty() || series.empty()) {
      throw Error(ErrorKind::invalid_input, where, "gpu_model or series is empty", "a GPU model and a series name");
    }
    const std::optional<double> price = cell_number(table.cell(row, "usd_per_gpu_hour"), where, "usd_per_gpu_hour");
    if (!price || *price < 0) {
      throw Error(ErrorKind::invalid_input, where, "column usd_per_gpu_hour is empty or negative",
                  "a price >= 0 in USD per GPU-hour");
    }
    Offer o;
    o.provider = "index:" + lower(series);
    o.instance_type = gpu;
    o.gpu_count = 1;
    o.gpu_name_raw = gpu;
    o.id = make_offer_id(o);
    // One flag per pseudo-offer (not per row): the series is not rentable.
    const bool first_row_of_series = batch.find(o.id) == nullptr;
    if (first_row_of_series) {
      report(batch, &o, where, import_rule::kPriceIndex,
             fmt::format("market price index '{}' for {}: a statistic over many providers, not a rentable offer; "
                         "kept for price history, never ranked",
                         series, gpu),
             false, true);
      resolve_gpu(o, {gpu}, form_hint({gpu}), batch, src, where);
    }
    const PriceKind kind = lower(series) == "spot" ? PriceKind::spot : PriceKind::on_demand;
    add_price(o, kind, *price, SourceRef{src.dataset, locator_line(src, row.line), date});
    if (*price == 0) check_price(batch, o, kind, *price, where);
    add_offer(batch, std::move(o));
  }
  return batch;
}

ImportBatch import_gpuhunt_tpu_pricing_json(std::string_view text, const ImportSource& src) {
  const nlohmann::json doc = parse_json(text, src);
  auto where_of = [&](const std::string& pointer) { return fmt::format("{}: {}", src.file, pointer); };
  if (!doc.is_object()) {
    throw Error(ErrorKind::invalid_input, where_of("/"), "top level is not an object",
                "{\"<TPU name>\": {\"<region>\": {\"Location\", \"On Demand (USD)\", \"Spot (USD)\"}}}");
  }
  ImportBatch batch;
  batch.dataset = src.dataset;
  for (const auto& [tpu, regions] : doc.items()) {
    if (!regions.is_object()) {
      throw Error(ErrorKind::invalid_input, where_of("/" + tpu), "value is not an object of regions",
                  "{\"<region>\": {...}}");
    }
    for (const auto& entry : regions.items()) {
      // Not a structured binding: clang 14 (the fuzz build) refuses to capture one in a lambda.
      const std::string& region = entry.key();
      const nlohmann::json& r = entry.value();
      ++batch.rows_read;
      const std::string pointer = "/" + tpu + "/" + region;
      const std::string where = where_of(pointer);
      if (!r.is_object()) throw Error(ErrorKind::invalid_input, where, "region entry is not an object", "{...}");
      for (const auto& [key, value] : r.items()) {
        if (key != "Location" && key != "On Demand (USD)" && key != "Spot (USD)") {
          throw Error(ErrorKind::invalid_input, where, fmt::format("unknown field '{}'", key),
                      "only Location, On Demand (USD), Spot (USD)");
        }
      }
      auto price = [&](const char* key) -> std::optional<double> {
        if (!r.contains(key) || r.at(key).is_null()) return std::nullopt;
        if (!r.at(key).is_number() || r.at(key).get<double>() < 0) {
          throw Error(ErrorKind::invalid_input, where + "/" + key, "price is not a number >= 0",
                      "USD per chip-hour as a number");
        }
        return r.at(key).get<double>();
      };
      const std::optional<double> on_demand = price("On Demand (USD)");
      const std::optional<double> spot = price("Spot (USD)");
      Offer o;
      o.provider = "gcp";
      o.instance_type = tpu;  // priced per chip: one chip per "instance"
      o.region = region;
      o.gpu_count = 1;
      o.gpu_name_raw = tpu;
      o.id = make_offer_id(o);
      // "TPU v3 pod" / "TPU v2 device": the pod/device suffix is packaging, not the chip.
      std::string chip = tpu;
      for (std::string_view suffix : {" pod", " device"}) {
        if (chip.size() > suffix.size() && chip.compare(chip.size() - suffix.size(), suffix.size(), suffix) == 0)
          chip.resize(chip.size() - suffix.size());
      }
      resolve_gpu(o, {tpu, chip}, FormHint{}, batch, src, where);
      // The ICI links between TPU chips are not a PCIe/NVLink link: leave the link unknown.
      o.intra_node_link = IntraNodeLink::unknown;
      o.intra_node_link_bytes_per_s.reset();
      if (!on_demand && !spot) {
        report(batch, nullptr, where, import_rule::kNoPrice, "no On Demand (USD) and no Spot (USD): skipped", true,
               false);
        continue;
      }
      const SourceRef ref{src.dataset, (src.locator_base.empty() ? src.file : src.locator_base) + "#" + pointer,
                          std::nullopt};
      if (!on_demand) {
        report(batch, &o, where, import_rule::kNoOnDemandPrice, "only a Spot (USD) price", false, false);
      } else {
        add_checked_price(batch, o, PriceKind::on_demand, *on_demand, ref, where);
      }
      if (spot) {
        add_checked_price(batch, o, PriceKind::spot, *spot, ref, where);
      }
      add_offer(batch, std::move(o));
    }
  }
  return batch;
}

}  // namespace gpuplan
