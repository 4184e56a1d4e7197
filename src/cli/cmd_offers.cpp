// `gpuplan offers [FILTER...] --sort KEY --limit N --format table|json|csv [--spot | --price-kind KIND]
//                 [--include-flagged] [--max-price-age AGE]
//                 [--group-by gpu|provider] [--fresh-days D] [--stale-days D] [--today DATE]`
// Lists GPU cloud offers (each row with its price's age and freshness tier, catalog/freshness.hpp),
// or with --group-by the min / median / max USD per GPU-hour and the offer count per group, from
// the offer store through api::run_offers, filtered with the filter language
// (docs/filter-language.md). Rendering only: prices, sort values and billing terms come from the
// catalog layer (store.hpp, providers.hpp); SI units inside, converted here for display.
#include <csv.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "api/catalog_reads.hpp"
#include "catalog/filter.hpp"
#include "catalog/freshness.hpp"
#include "catalog/providers.hpp"
#include "catalog/store.hpp"
#include "cli/api_flags.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "cli/plan_render.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/display_width.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

struct OffersOptions {
  std::string format = "table";
  bool help_fields = false;
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

/// The widest line of a rendered table, in terminal columns.
std::size_t widest_line(const std::string& table) {
  std::size_t w = 0;
  for (std::size_t from = 0; from < table.size();) {
    const std::size_t nl = std::min(table.find('\n', from), table.size());
    w = std::max(w, display_width(std::string_view(table).substr(from, nl - from)));
    from = nl + 1;
  }
  return w;
}

/// The note under a table fitted to `width` columns naming the columns it left out (none: nothing).
void print_left_out(const std::vector<std::string>& left_out, std::size_t width) {
  if (left_out.empty()) return;
  std::string names;
  for (const auto& n : left_out) names += (names.empty() ? "" : ", ") + n;
  fmt::print("{}", wrap_text(fmt::format("Left out to fit {} columns: {} (--format csv and --json have every column).", width,
                                         names),
                             static_cast<int>(std::min<std::size_t>(width, 100000)), ""));
}

/// `--group-by`: one row per GPU (or provider) with the price spread of the filtered offers.
void print_groups(const api::OffersOutput& out, const OffersOptions& opts) {
  const OfferGroupKey key = *out.group_key;
  if (opts.format == "json") {
    fmt::print("{}\n", dump_json(api::to_json(out)));
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
                                           "NEWEST_LAST_SEEN"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& g : out.groups) {
    cells.push_back({g.key, std::to_string(g.offers), std::to_string(g.priced_offers), std::to_string(g.providers),
                     money(g.min_usd_per_gpu_hour), money(g.median_usd_per_gpu_hour), money(g.max_usd_per_gpu_hour),
                     std::to_string(g.dated_offers), g.newest_last_seen_at.value_or("unknown")});
  }
  if (opts.format == "csv") {
    std::string text = csv_line(header);
    for (const auto& c : cells) text += csv_line(c);
    fmt::print("{}", text);
    return;
  }
  TextTable t;
  t.header = header;
  t.rows = cells;
  t.right_align = {false, true, true, true, true, true, true, true};
  // Fit the terminal ($COLUMNS) as the offers list does: the columns a price comparison needs
  // least go first, the minimum last but one; the name is clipped only when the median alone does
  // not fit beside it.
  const auto width = terminal_width_known() ? static_cast<std::size_t>(terminal_columns())
                                            : std::numeric_limits<std::size_t>::max() / 2;
  std::string table = t.render();
  if (widest_line(table) > width && key == OfferGroupKey::gpu) {  // GPU names without the vendor ("RTX 3080")
    for (auto& row : t.rows) row[0] = short_gpu(row[0]);
    table = t.render();
  }
  std::vector<std::string> left_out;
  for (const char* name : {"DATED", "PRICED", "NEWEST_LAST_SEEN", "MAX_USD_PER_GPU_H", "PROVIDERS", "GPUS", "OFFERS",
                           "MIN_USD_PER_GPU_H"}) {
    if (widest_line(table) <= width) break;
    if (t.drop_column(name)) {
      table = t.render();
      left_out.emplace_back(name);
    }
  }
  if (const std::size_t w = widest_line(table); w > width && !t.rows.empty()) {
    std::size_t colw = display_width(t.header[0]);
    for (const auto& row : t.rows) colw = std::max(colw, display_width(row[0]));
    const std::size_t target = std::max<std::size_t>(8, colw > w - width ? colw - (w - width) : 8);
    for (auto& row : t.rows) row[0] = clip(row[0], target);
    table = t.render();
  }
  fmt::print("{}", table);
  // Totals over every group, not only the ones shown (trial 9: the flagged count changed with --limit).
  fmt::print("{}", wrap_text(fmt::format("{} of {} groups ({} offers); {} prices, USD per GPU-hour of each offer's latest price; median of an even "
             "count = mean of the two middle prices; {}.",
             out.groups.size(), out.groups_total, out.grouped_offers, price_kind_name(out.query.price_kind),
             out.query.evidence_first ? fmt::format("{} prices questioned by a flag (below_market_index, "
                                                    "gpu_memory_mismatch, price_jump) left out in all groups (--include-flagged "
                                                    "counts them)",
                                                    out.flagged_prices_total)
                                      : std::string("flagged prices counted")),
                             static_cast<int>(std::min<std::size_t>(width, 100000)), ""));
  print_left_out(left_out, width);
}

/// The nodes rented together: "4-32" (min_nodes-max_nodes), "1-64" (no minimum known: one node
/// can be rented), ">=4" (no maximum known), "unknown" (neither).
std::string nodes_text(const Offer& o) {
  if (o.max_nodes) return fmt::format("{}-{}", o.min_nodes.value_or(1), *o.max_nodes);
  if (o.min_nodes) return fmt::format(">={}", *o.min_nodes);
  return "unknown";
}

void run_offers(const api::OffersInput& in, const OffersOptions& opts, const GlobalOptions& global) {
  if (opts.help_fields) {
    print_fields();
    return;
  }
  if (opts.format != "table" && opts.format != "json" && opts.format != "csv")
    throw_invalid("--format", "unknown format \"" + opts.format + "\"", "table, json or csv");
  const api::Context ctx = make_context(global);
  const api::OffersOutput out = api::run_offers(in, ctx);
  if (out.group_key) {
    print_groups(out, opts);
    return;
  }
  const OfferQuery& q = out.query;
  const std::vector<api::OfferRow>& rows = out.rows;
  const std::string kind(price_kind_name(q.price_kind));

  if (opts.format == "json") {
    fmt::print("{}\n", dump_json(api::to_json(out)));
    return;
  }

  const std::vector<std::string> header = {"ID",       "GPU",    "N",       "VRAM_GB", "USD_PER_GPU_H", "USD_PER_H",
                                           "MEM_TB_S", "LINK",   "NET",     "NODES",   "BILLING",       "SOURCE",   "OBSERVED",
                                           "AGE",      "FRESHNESS", "CONFIRMED", "FLAGS"};
  std::vector<std::vector<std::string>> cells;
  // CSV is read by programs: one value per cell (trial46: VRAM_GB "80 (datasheet)", a price
  // "2.10 spot", OBSERVED "... (last seen ...)"), the notes in columns of their own.
  const std::vector<std::string> csv_header = {
      "ID",         "GPU",       "N",         "VRAM_GB", "VRAM_FROM", "USD_PER_GPU_H", "USD_PER_H", "PRICE_KIND",
      "MEM_TB_S",   "LINK",      "NET",       "NODES",   "BILLING_SECONDS", "SOURCE",  "OBSERVED",  "LAST_SEEN",
      "AGE_DAYS",   "FRESHNESS", "CONFIRMED", "FLAGS"};
  std::vector<std::vector<std::string>> csv_cells;
  std::size_t other_kind_rows = 0;
  for (const auto& r : rows) {
    const Offer& o = r.offer;
    // No price of the listed kind: the offer's price of another kind, marked with its kind.
    const PriceObservation* shown = r.price ? &*r.price : r.other_price ? &*r.other_price : nullptr;
    const std::string mark = !r.price && r.other_price ? " " + std::string(price_kind_name(r.other_price->kind)) : "";
    other_kind_rows += mark.empty() ? 0 : 1;
    const Freshness& fresh = r.price ? r.freshness : r.other_price ? r.other_freshness : r.freshness;
    std::string observed = "unknown";
    if (shown && shown->source.observed_at) observed = shown->source.observed_at->substr(0, 10);
    // First seen, and the last time a fetch saw the same price again when later (docs/fetch.md).
    if (shown && shown->seen_at() && shown->seen_at()->substr(0, 10) != observed)
      observed += " (last seen " + shown->seen_at()->substr(0, 10) + ")";
    std::string net(inter_node_network_name(o.inter_node_network));
    if (o.inter_node_bits_per_s) net += fmt::format(" {:g}Gb/s", *o.inter_node_bits_per_s / 1e9);
    cells.push_back({
        o.id,
        o.gpu_name.value_or(o.gpu_name_raw + " (unresolved)"),
        std::to_string(o.gpu_count),
        r.gpu_memory_bytes ? fmt::format("{:g}{}", std::round(*r.gpu_memory_bytes / 1e8) / 10,
                                         r.gpu_memory_from_datasheet ? " (datasheet)" : "")
                           : "unknown",
        r.price || !r.other_price ? money(r.usd_per_gpu_hour) : money(r.other_usd_per_gpu_hour) + mark,
        money(shown ? std::optional<double>(shown->usd_per_hour) : std::nullopt) + mark,
        r.bandwidth_bytes_per_s ? fmt::format("{:.2f}", *r.bandwidth_bytes_per_s / 1e12) : "unknown",
        std::string(intra_node_link_name(o.intra_node_link)),
        net,
        nodes_text(o),
        seconds_text(r.billing.granularity_seconds),
        shown ? shown->source.dataset : "unknown",
        observed,
        fresh.age_days ? fmt::format("{} d", *fresh.age_days) : "unknown",
        std::string(freshness_tier_name(fresh.tier)),
        // The day a source last confirmed capacity (JSON confirmed_available_at), else unknown
        // (trial9b D4: the table had no availability column).
        o.confirmed_available_at ? o.confirmed_available_at->substr(0, 10) : "unknown",
        o.flags.empty() ? "" : "FLAGGED: " + flags_text(o),
    });
    auto number = [](std::optional<double> v, const char* f) { return v ? fmt::format(fmt::runtime(f), *v) : std::string(); };
    csv_cells.push_back({
        o.id,
        o.gpu_name.value_or(o.gpu_name_raw),
        std::to_string(o.gpu_count),
        r.gpu_memory_bytes ? fmt::format("{:g}", std::round(*r.gpu_memory_bytes / 1e8) / 10) : "",
        r.gpu_memory_bytes ? (r.gpu_memory_from_datasheet ? "datasheet" : "offer") : "",
        number(r.price || !r.other_price ? r.usd_per_gpu_hour : r.other_usd_per_gpu_hour, "{:.4f}"),
        number(shown ? std::optional<double>(shown->usd_per_hour) : std::nullopt, "{:.4f}"),
        shown ? std::string(price_kind_name(shown->kind)) : "",
        number(r.bandwidth_bytes_per_s ? std::optional<double>(*r.bandwidth_bytes_per_s / 1e12) : std::nullopt, "{:.3f}"),
        std::string(intra_node_link_name(o.intra_node_link)),
        net,
        nodes_text(o),
        r.billing.granularity_seconds ? fmt::format("{:g}", *r.billing.granularity_seconds) : "",
        shown ? shown->source.dataset : "",
        shown && shown->source.observed_at ? shown->source.observed_at->substr(0, 10) : "",
        shown && shown->seen_at() ? shown->seen_at()->substr(0, 10) : "",
        fresh.age_days ? fmt::format("{}", *fresh.age_days) : "",
        std::string(freshness_tier_name(fresh.tier)),
        o.confirmed_available_at ? o.confirmed_available_at->substr(0, 10) : "",
        o.flags.empty() ? "" : flags_text(o),
    });
  }
  if (opts.format == "csv") {
    std::string text = csv_line(csv_header);
    for (const auto& c : csv_cells) text += csv_line(c);
    fmt::print("{}", text);
    return;
  }
  TextTable t;
  t.header = header;
  t.rows = cells;
  t.right_align = {false, false, true, true, true, true, true};
  // Fit the terminal ($COLUMNS, trial47: the 17 columns ran past any width): leave out the
  // columns a price comparison needs least, then clip the ID and GPU cells; the note names what
  // was left out (--format csv and --json keep every column).
  const auto width = terminal_width_known() ? static_cast<std::size_t>(terminal_columns())
                                            : std::numeric_limits<std::size_t>::max() / 2;
  std::string table = t.render();
  std::vector<std::string> left_out;
  auto drop = [&](std::string_view name) {
    if (t.drop_column(name)) table = t.render();
  };
  if (widest_line(table) > width) {  // GPU names without the vendor ("H100 SXM")
    for (auto& row : t.rows) row[1] = short_gpu(row[1]);
    table = t.render();
  }
  if (widest_line(table) > width && std::all_of(t.rows.begin(), t.rows.end(), [](const auto& row) { return row.back().empty(); }))
    drop("FLAGS");  // no row is flagged: the empty column goes first
  for (const char* name : {"CONFIRMED", "NODES", "MEM_TB_S", "NET", "BILLING", "LINK", "USD_PER_H", "AGE", "FRESHNESS"}) {
    if (widest_line(table) <= width) break;
    drop(name);
    left_out.emplace_back(name);
  }
  // Still too wide: the ID over several lines (whole, for `history ID`), then the GPU and source clipped.
  const auto col_of = [&](const char* name) {
    return static_cast<std::size_t>(std::find(t.header.begin(), t.header.end(), std::string(name)) - t.header.begin());
  };
  // FLAGS last, down to "FLAGGED…" (trial49: a flagged row ran to 79 columns at COLUMNS=60, 122
  // with --include-flagged): that a price is flagged stays visible, the rules are in --json.
  for (std::size_t col : {std::size_t{0}, std::size_t{1}, col_of("SOURCE"), col_of("FLAGS")}) {
    if (col >= t.header.size()) continue;
    const std::size_t w = widest_line(table);
    if (w <= width) break;
    std::size_t colw = display_width(t.header[col]);
    for (const auto& row : t.rows) colw = std::max(colw, display_width(row[col]));
    const std::size_t floor = col == 0 ? 12 : col == col_of("FLAGS") ? 5 : 8;  // "FLAG…" still says it
    const std::size_t target = std::max<std::size_t>(floor, colw > w - width ? colw - (w - width) : floor);
    for (auto& row : t.rows) row[col] = col == 0 ? wrap_id(row[col], target) : clip(row[col], target);
    table = t.render();
  }
  for (const char* name : {"SOURCE", "VRAM_GB"}) {  // a very narrow terminal (60 columns)
    if (widest_line(table) <= width) break;
    drop(name);
    left_out.emplace_back(name);
  }
  fmt::print("{}", table);
  const StoreCounts& counts = out.counts;
  fmt::print("{}", wrap_text(fmt::format("{} of {} matching offers shown ({} in the catalog); {} prices; at {}: fresh = at most {:g} days old, "
             "aging = up to {:g}, stale = older, undated = no date from the source; CONFIRMED = the day a source "
             "last confirmed the offer available (unknown: never; a listed price is not availability); {} offers excluded by "
             "quality flags{}; {}.",
             rows.size(), out.matched, counts.offers, kind, q.now_date, out.limits.fresh_max_days,
             out.limits.stale_after_days, counts.excluded_offers,
             in.include_flagged ? " (shown)" : " (--include-flagged shows them)",
             q.evidence_first ? fmt::format("order: prices dated within {:g} days first (--max-price-age), then stale, "
                                            "undated, and prices a flag questions (--include-flagged: one order)",
                                            out.limits.stale_after_days)
                              : std::string("one order for every price (--include-flagged)")),
                             static_cast<int>(std::min<std::size_t>(width, 100000)), ""));
  print_left_out(left_out, width);
  if (other_kind_rows > 0)
    fmt::print("{}", wrap_text(fmt::format("{} offers have no {} price: their row shows the price they have, marked with its kind (reserved-1w, "
                                           "-1m, -3m, -6m, -1y, -3y commit to 7 days, 1, 3 or 6 months of 730 h, 1 or 3 years; list them with "
                                           "--price-kind KIND, find them with the filter "
                                           "`reserved` or `spot`).",
                                           other_kind_rows, kind),
                               static_cast<int>(std::min<std::size_t>(width, 100000)), ""));
}

GPUPLAN_REGISTER_COMMAND(Command{
    "offers", "list GPU cloud offers, filtered and sorted (gpuplan offers --help-fields for the filter fields)",
    [](CLI::App& sub, GlobalOptions& global) {
      auto in = std::make_shared<api::OffersInput>();
      auto opts = std::make_shared<OffersOptions>();
      add_api_flags(sub, in, api::offers_fields());
      sub.add_option("--format", opts->format, "table (default), json or csv");
      sub.add_flag("--help-fields", opts->help_fields, "list the filter fields with type, unit and example");
      sub.callback([in, opts, &global] { run_offers(*in, *opts, global); });
    }});

}  // namespace
}  // namespace gpuplan::cli
