// `gpuplan offers [FILTER...] --sort KEY --limit N --format table|json|csv [--spot] [--include-flagged]
//                 [--group-by gpu|provider] [--fresh-days D] [--stale-days D]`
// Lists GPU cloud offers (each row with its price's age and freshness tier, catalog/freshness.hpp),
// or with --group-by the min / median / max USD per GPU-hour and the offer count per group from the offer store, filtered with the filter language
// (docs/filter-language.md). Rendering only: prices, sort values and billing terms come from the
// catalog layer (store.hpp, providers.hpp); SI units inside, converted here for display.
#include <csv.h>
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "catalog/filter.hpp"
#include "catalog/freshness.hpp"
#include "catalog/providers.hpp"
#include "catalog/open_store.hpp"
#include "catalog/store.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

struct OffersOptions {
  std::vector<std::string> filter_words;
  std::string sort = std::string(kSortPricePerGpuHour);
  std::size_t limit = 0;
  std::string format = "table";
  bool spot = false;
  bool include_flagged = false;
  bool help_fields = false;
  double stale_after_days = 30;
  double fresh_max_days = 7;
  std::string group_by;
  std::string today;  ///< YYYY-MM-DD; empty = the system clock (UTC)
};

std::string csv_cell(const std::string& s) {
  std::string out(s.size() * 2 + 2, '\0');
  out.resize(csv_write(out.data(), out.size(), s.data(), s.size()));
  return out;
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + csv_cell(cells[i]);
  return line + "\n";
}

std::string money(std::optional<double> usd) { return usd ? fmt::format("{:.3f}", *usd) : "unknown"; }

std::string seconds_text(std::optional<double> s) {
  if (!s) return "unknown";
  if (*s >= 3600 && std::fmod(*s, 3600) == 0) return fmt::format("{:.0f} h", *s / 3600);
  if (*s >= 60 && std::fmod(*s, 60) == 0) return fmt::format("{:.0f} min", *s / 60);
  return fmt::format("{:g} s", *s);
}

std::string flags_text(const Offer& o) {
  std::string out;
  for (const auto& f : o.flags) out += (out.empty() ? "" : ",") + f.rule + (f.excludes ? "(excluded)" : "");
  return out;
}

/// Everything one row shows, as display strings plus the raw values for JSON.
struct OfferRow {
  const Offer* offer = nullptr;
  const PriceObservation* price = nullptr;
  std::optional<double> per_gpu_usd;
  std::optional<double> bandwidth_bytes_per_s;
  BillingTerms billing;
  std::optional<bool> stale;
  Freshness freshness;
};

void print_fields() {
  TextTable t;
  t.header = {"FIELD", "TYPE", "UNIT", "EXAMPLE", "MEANING"};
  for (const auto& f : filter_fields())
    t.rows.push_back({std::string(f.name), std::string(filter_field_type_name(f.type)), std::string(f.unit),
                      std::string(f.example), std::string(f.description)});
  fmt::print("{}", t.render());
  fmt::print(
      "\nOperators: = != < <= > >= ~ (substring) !~; combine with and, or, not, parentheses; "
      "juxtaposition means and.\nUnknown values never match (neither a clause nor its negation). "
      "See docs/filter-language.md.\n");
}

std::string json_dump_groups(const std::vector<OfferGroupStats>& groups, std::string_view key_name) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& g : groups) {
    arr.push_back({{std::string(key_name), g.key},
                   {"offers", g.offers},
                   {"priced_offers", g.priced_offers},
                   {key_name == "gpu" ? "providers" : "gpus", g.providers},
                   {"dated_offers", g.dated_offers},
                   {"min_usd_per_gpu_hour", opt(g.min_usd_per_gpu_hour)},
                   {"median_usd_per_gpu_hour", opt(g.median_usd_per_gpu_hour)},
                   {"max_usd_per_gpu_hour", opt(g.max_usd_per_gpu_hour)},
                   {"newest_observed_at", opt(g.newest_observed_at)}});
  }
  return arr.dump(2);
}

/// `--group-by`: one row per GPU (or provider) with the price spread of the filtered offers.
void print_groups(const std::vector<Offer>& offers, OfferGroupKey key, const OfferQuery& q, const OffersOptions& opts) {
  std::vector<OfferGroupStats> groups = group_offer_prices(offers, key, q.price_kind);
  if (opts.limit > 0 && groups.size() > opts.limit) groups.resize(opts.limit);
  const std::string_view key_name = key == OfferGroupKey::gpu ? "gpu" : "provider";
  if (opts.format == "json") {
    fmt::print("{}\n", json_dump_groups(groups, key_name));
    return;
  }
  const std::vector<std::string> header = {key == OfferGroupKey::gpu ? "GPU" : "PROVIDER",
                                           "OFFERS",
                                           "PRICED",
                                           key == OfferGroupKey::gpu ? "PROVIDERS" : "GPUS",
                                           "MIN_USD_PER_GPU_H",
                                           "MEDIAN_USD_PER_GPU_H",
                                           "MAX_USD_PER_GPU_H",
                                           "DATED",
                                           "NEWEST_OBSERVED"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& g : groups) {
    cells.push_back({g.key, std::to_string(g.offers), std::to_string(g.priced_offers), std::to_string(g.providers),
                     money(g.min_usd_per_gpu_hour), money(g.median_usd_per_gpu_hour), money(g.max_usd_per_gpu_hour),
                     std::to_string(g.dated_offers), g.newest_observed_at.value_or("unknown")});
  }
  if (opts.format == "csv") {
    std::string out = csv_line(header);
    for (const auto& c : cells) out += csv_line(c);
    fmt::print("{}", out);
    return;
  }
  TextTable t;
  t.header = header;
  t.rows = cells;
  t.right_align = {false, true, true, true, true, true, true, true};
  fmt::print("{}", t.render());
  fmt::print("{} groups of {} offers; {} prices, USD per GPU-hour of each offer's latest price; median of an even count "
             "= mean of the two middle prices.\n",
             groups.size(), offers.size(), price_kind_name(q.price_kind));
}

void run_offers(const OffersOptions& opts, const GlobalOptions& global) {
  if (opts.help_fields) {
    print_fields();
    return;
  }
  if (opts.format != "table" && opts.format != "json" && opts.format != "csv")
    throw_invalid("--format", "unknown format \"" + opts.format + "\"", "table, json or csv");
  std::optional<OfferGroupKey> group_key;
  if (!opts.group_by.empty()) {
    group_key = parse_offer_group_key(opts.group_by);
    if (!group_key) throw_invalid("--group-by", "unknown grouping \"" + opts.group_by + "\"", "gpu or provider");
  }
  FreshnessLimits limits{opts.fresh_max_days, opts.stale_after_days};
  try {
    limits.validate();
  } catch (const Error& e) {
    throw Error(e.kind(), e.where() == "fresh_max_days" ? "--fresh-days" : "--stale-days", e.message(), e.expected());
  }
  const GpuCatalog& gpus = gpu_catalog(global);
  OfferQuery q;
  for (const auto& w : opts.filter_words) q.filter += (q.filter.empty() ? "" : " ") + w;
  q.sort = opts.sort;
  // The store runs the query without the limit so the footer can say how many offers matched (and
  // --group-by sees every match); the limit cuts the sorted list here (sort first, then cut).
  q.price_kind = opts.spot ? PriceKind::spot : PriceKind::on_demand;
  q.include_excluded = opts.include_flagged;
  q.now_date = opts.today.empty() ? SystemClock().today() : opts.today;
  q.stale_after_days = opts.stale_after_days;
  try {
    q.validate();
  } catch (const Error& e) {
    if (e.where() == "sort") throw Error(e.kind(), "--sort", e.message(), e.expected());
    if (e.where() == "limit") throw Error(e.kind(), "--limit", e.message(), e.expected());
    if (e.where() == "now_date") throw Error(e.kind(), "--today", e.message(), e.expected());
    throw;
  }
  auto store = open_store(global.db_path, StoreContext{gpus, SystemClock()});
  std::vector<Offer> offers = store->query(q);
  if (group_key) {
    print_groups(offers, *group_key, q, opts);
    return;
  }
  const std::size_t matched = offers.size();
  if (opts.limit > 0 && offers.size() > opts.limit) offers.resize(opts.limit);

  std::vector<OfferRow> rows;
  for (const Offer& o : offers) {
    OfferRow r;
    r.offer = &o;
    r.price = o.latest_price(q.price_kind);
    r.per_gpu_usd = offer_sort_value(o, kSortPricePerGpuHour, q.price_kind, gpus);
    r.bandwidth_bytes_per_s = offer_sort_value(o, kSortBandwidth, q.price_kind, gpus);
    r.billing = effective_billing(o, find_provider(bundled_providers(), o.provider));
    r.stale = is_stale(o, q.price_kind, q.now_date, q.stale_after_days);
    r.freshness = price_freshness(r.price, q.now_date, limits);
    rows.push_back(std::move(r));
  }
  const std::string kind(price_kind_name(q.price_kind));

  if (opts.format == "json") {
    auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : rows) {
      const Offer& o = *r.offer;
      nlohmann::json flags = nlohmann::json::array();
      for (const auto& f : o.flags) flags.push_back({{"rule", f.rule}, {"detail", f.detail}, {"excludes", f.excludes}});
      arr.push_back({
          {"id", o.id},
          {"provider", o.provider},
          {"instance_type", o.instance_type},
          {"region", o.region},
          {"gpu_name", opt(o.gpu_name)},
          {"gpu_name_raw", o.gpu_name_raw},
          {"gpu_count", o.gpu_count},
          {"gpu_memory_bytes", opt(o.gpu_memory_bytes)},
          {"memory_bandwidth_bytes_per_s", opt(r.bandwidth_bytes_per_s)},
          {"intra_node_link", intra_node_link_name(o.intra_node_link)},
          {"inter_node_network", inter_node_network_name(o.inter_node_network)},
          {"inter_node_bits_per_s", opt(o.inter_node_bits_per_s)},
          {"price_kind", kind},
          {"usd_per_hour", r.price ? nlohmann::json(r.price->usd_per_hour) : nlohmann::json(nullptr)},
          {"usd_per_gpu_hour", opt(r.per_gpu_usd)},
          {"billing_granularity_seconds", opt(r.billing.granularity_seconds)},
          {"billing_minimum_billed_seconds", opt(r.billing.minimum_billed_seconds)},
          {"source", r.price ? nlohmann::json(r.price->source.dataset) : nlohmann::json(nullptr)},
          {"locator", r.price ? nlohmann::json(r.price->source.locator) : nlohmann::json(nullptr)},
          {"observed_at", r.price ? opt(r.price->source.observed_at) : nlohmann::json(nullptr)},
          {"stale", opt(r.stale)},
          {"age_days", opt(r.freshness.age_days)},
          {"freshness", freshness_tier_name(r.freshness.tier)},
          {"confirmed_available_at", opt(o.confirmed_available_at)},
          {"flags", flags},
      });
    }
    fmt::print("{}\n", dump_json(arr));
    return;
  }

  const std::vector<std::string> header = {"ID",       "GPU",    "N",       "VRAM_GB", "USD_PER_GPU_H", "USD_PER_H",
                                           "MEM_TB_S", "LINK",   "NET",     "BILLING", "SOURCE",        "OBSERVED",
                                           "AGE",      "FRESHNESS", "FLAGS"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) {
    const Offer& o = *r.offer;
    std::string observed = "unknown";
    if (r.price && r.price->source.observed_at) observed = r.price->source.observed_at->substr(0, 10);
    std::string net(inter_node_network_name(o.inter_node_network));
    if (o.inter_node_bits_per_s) net += fmt::format(" {:g}Gb/s", *o.inter_node_bits_per_s / 1e9);
    cells.push_back({
        o.id,
        o.gpu_name.value_or(o.gpu_name_raw + " (unresolved)"),
        std::to_string(o.gpu_count),
        o.gpu_memory_bytes ? fmt::format("{:g}", std::round(*o.gpu_memory_bytes / 1e8) / 10) : "unknown",
        money(r.per_gpu_usd),
        money(r.price ? std::optional<double>(r.price->usd_per_hour) : std::nullopt),
        r.bandwidth_bytes_per_s ? fmt::format("{:.2f}", *r.bandwidth_bytes_per_s / 1e12) : "unknown",
        std::string(intra_node_link_name(o.intra_node_link)),
        net,
        seconds_text(r.billing.granularity_seconds),
        r.price ? r.price->source.dataset : "unknown",
        observed,
        r.freshness.age_days ? fmt::format("{} d", *r.freshness.age_days) : "unknown",
        std::string(freshness_tier_name(r.freshness.tier)),
        o.flags.empty() ? "" : "FLAGGED: " + flags_text(o),
    });
  }
  if (opts.format == "csv") {
    std::string out = csv_line(header);
    for (const auto& c : cells) out += csv_line(c);
    fmt::print("{}", out);
    return;
  }
  TextTable t;
  t.header = header;
  t.rows = cells;
  t.right_align = {false, false, true, true, true, true, true};
  fmt::print("{}", t.render());
  const StoreCounts counts = store->counts();
  fmt::print("{} of {} matching offers shown ({} in the catalog); {} prices; at {}: fresh = at most {:g} days old, "
             "aging = up to {:g}, stale = older, undated = no date from the source; {} offers excluded by quality "
             "flags{}.\n",
             rows.size(), matched, counts.offers, kind, q.now_date, limits.fresh_max_days, limits.stale_after_days,
             counts.excluded_offers,
             opts.include_flagged ? " (shown)" : " (--include-flagged shows them)");
}

GPUPLAN_REGISTER_COMMAND(Command{
    "offers", "list GPU cloud offers, filtered and sorted (gpuplan offers --help-fields for the filter fields)",
    [](CLI::App& sub, GlobalOptions& global) {
      auto opts = std::make_shared<OffersOptions>();
      sub.add_option("filter", opts->filter_words,
                     "filter, e.g. gpu=H100 gpus>=8 vram>=80GB price<=30 (docs/filter-language.md)");
      sub.add_option("--sort", opts->sort, "price_per_gpu_hour (default), price_per_vram_gb, bandwidth or price");
      // A negative count wrapped to "all" (issue 11): refused before the unsigned conversion.
      sub.add_option("--limit", opts->limit, "show at most N offers")->check(non_negative_count());
      sub.add_option("--format", opts->format, "table (default), json or csv");
      sub.add_flag("--spot", opts->spot, "use spot prices instead of on-demand");
      sub.add_flag("--include-flagged", opts->include_flagged, "also show offers excluded by a quality flag");
      sub.add_option("--stale-days", opts->stale_after_days, "a price older than this many days is stale (default 30)");
      sub.add_option("--fresh-days", opts->fresh_max_days,
                     "a price at most this many days old is fresh; between this and --stale-days it is aging (default 7)");
      sub.add_option("--today", opts->today, "today's date YYYY-MM-DD for age and freshness (default: the system clock, UTC)");
      sub.add_option("--group-by", opts->group_by,
                     "gpu or provider: min / median / max USD per GPU-hour and the number of offers per group");
      sub.add_flag("--help-fields", opts->help_fields, "list the filter fields with type, unit and example");
      sub.callback([opts, &global] { run_offers(*opts, global); });
    }});

}  // namespace
}  // namespace gpuplan::cli
