// `gpuplan history OFFER_ID [--format table|json|csv]`: the price observations of one offer over
// time (date, kind, USD per hour, per GPU-hour, source dataset and locator), oldest first,
// undated observations first. Rendering only.
#include <csv.h>
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "catalog/open_store.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

struct HistoryOptions {
  std::string offer_id;
  std::string format = "table";
};

std::string csv_cell(const std::string& s) {
  std::string out(s.size() * 2 + 2, '\0');
  out.resize(csv_write(out.data(), out.size(), s.data(), s.size()));
  return out;
}

void run_history(const HistoryOptions& opts, const GlobalOptions& global) {
  if (opts.format != "table" && opts.format != "json" && opts.format != "csv")
    throw_invalid("--format", "unknown format \"" + opts.format + "\"", "table, json or csv");
  auto store = open_store(global.db_path, StoreContext{gpu_catalog(global), SystemClock()});
  const std::optional<Offer> offer = store->get(opts.offer_id);
  if (!offer)
    throw_not_found(opts.offer_id, "no offer with this id in the store",
                    "an id as listed by `gpuplan offers` (provider/instance_type/region)");
  const auto& obs = offer->prices;
  auto per_gpu = [&](const PriceObservation& p) { return usd_per_gpu_hour(*offer, p); };
  if (opts.format == "json") {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& p : obs) {
      auto g = per_gpu(p);
      arr.push_back({{"observed_at", p.source.observed_at ? nlohmann::json(*p.source.observed_at) : nlohmann::json(nullptr)},
                     {"kind", price_kind_name(p.kind)},
                     {"usd_per_hour", p.usd_per_hour},
                     {"usd_per_gpu_hour", g ? nlohmann::json(*g) : nlohmann::json(nullptr)},
                     {"dataset", p.source.dataset},
                     {"locator", p.source.locator}});
    }
    fmt::print("{}\n", dump_json(nlohmann::json{{"offer_id", offer->id}, {"gpu_count", offer->gpu_count}, {"observations", arr}}));
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : obs) {
    auto g = per_gpu(p);
    rows.push_back({p.source.observed_at.value_or("unknown"), std::string(price_kind_name(p.kind)),
                    fmt::format("{:.3f}", p.usd_per_hour), g ? fmt::format("{:.3f}", *g) : "unknown", p.source.dataset,
                    p.source.locator});
  }
  const std::vector<std::string> header = {"OBSERVED", "KIND", "USD_PER_H", "USD_PER_GPU_H", "SOURCE", "LOCATOR"};
  if (opts.format == "csv") {
    std::string out;
    auto line = [&](const std::vector<std::string>& cells) {
      for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_cell(cells[i]);
      out += "\n";
    };
    line(header);
    for (const auto& r : rows) line(r);
    fmt::print("{}", out);
    return;
  }
  fmt::print("{} ({} x {}): {} observations\n", offer->id, offer->gpu_count,
             offer->gpu_name.value_or(offer->gpu_name_raw), obs.size());
  TextTable t;
  t.header = header;
  t.rows = rows;
  t.right_align = {false, false, true, true};
  fmt::print("{}", t.render());
}

GPUPLAN_REGISTER_COMMAND(Command{"history", "show the price observations of one offer over time",
                                 [](CLI::App& sub, GlobalOptions& global) {
                                   auto opts = std::make_shared<HistoryOptions>();
                                   sub.add_option("offer_id", opts->offer_id, "offer id, as listed by gpuplan offers")
                                       ->required();
                                   sub.add_option("--format", opts->format, "table (default), json or csv");
                                   sub.callback([opts, &global] { run_history(*opts, global); });
                                 }});

}  // namespace
}  // namespace gpuplan::cli
