// `gpuplan history OFFER_ID [--format table|json|csv]`: the price observations of one offer over
// time (first-seen date, last-seen date, kind, USD per hour, per GPU-hour, source dataset and
// locator), oldest first, undated observations first. Rendering only.
#include <csv.h>
#include <fmt/core.h>

#include <memory>
#include <string>

#include "api/catalog_reads.hpp"
#include "cli/api_flags.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

std::string csv_cell(const std::string& s) {
  std::string out(s.size() * 2 + 2, '\0');
  out.resize(csv_write(out.data(), out.size(), s.data(), s.size()));
  return out;
}

void run_history(const api::HistoryInput& in, const std::string& format, const GlobalOptions& global) {
  if (format != "table" && format != "json" && format != "csv")
    throw_invalid("--format", "unknown format \"" + format + "\"", "table, json or csv");
  const api::Context ctx = make_context(global);
  const Offer result = api::run_history(in, ctx);
  const Offer* offer = &result;
  const auto& obs = offer->prices;
  auto per_gpu = [&](const PriceObservation& p) { return usd_per_gpu_hour(*offer, p); };
  if (format == "json") {
    fmt::print("{}\n", dump_json(api::history_to_json(result)));
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : obs) {
    auto g = per_gpu(p);
    // LAST_SEEN (trial9b D5): when a fetch last gave this price (PriceObservation::last_seen_at;
    // kept for the latest price of each kind only); "-" for an earlier price, which is not tracked.
    rows.push_back({p.source.observed_at.value_or("unknown"), p.last_seen_at.value_or("-"),
                    std::string(price_kind_name(p.kind)),
                    fmt::format("{:.3f}", p.usd_per_hour), g ? fmt::format("{:.3f}", *g) : "unknown", p.source.dataset,
                    p.source.locator});
  }
  const std::vector<std::string> header = {"OBSERVED", "LAST_SEEN", "KIND", "USD_PER_H", "USD_PER_GPU_H", "SOURCE",
                                           "LOCATOR"};
  if (format == "csv") {
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
  t.right_align = {false, false, false, true, true};
  fmt::print("{}", t.render());
  fmt::print("OBSERVED = first seen; LAST_SEEN = when a fetch last gave the same price (ages count from it; - = an "
             "earlier price, not tracked).\n");
}

GPUPLAN_REGISTER_COMMAND(Command{"history", "show the price observations of one offer over time",
                                 [](CLI::App& sub, GlobalOptions& global) {
                                   auto in = std::make_shared<api::HistoryInput>();
                                   auto format = std::make_shared<std::string>("table");
                                   add_api_flags(sub, in, api::history_fields());
                                   sub.get_option("offer_id")->required();
                                   sub.add_option("--format", *format, "table (default), json or csv");
                                   sub.callback([in, format, &global] { run_history(*in, *format, global); });
                                 }});

}  // namespace
}  // namespace gpuplan::cli
