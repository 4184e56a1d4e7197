// `gpuplan plan [FILTER] --model M --task T ...`: the main job. Thin over the api layer: the
// flags fill an api::PlanInput (the plan fields' table), api::run_plan reads the offers and plans,
// and this file renders the plans as a table, JSON, or one plan's explanation. Computes no numbers
// itself (STYLE.md §1).
//
// Exit codes: 0 plans printed; 1 no offer can run the workload (the reason and what would make
// it fit are printed: an answer, like grep's "no match", not an error); 2-5/70 errors (error.hpp).
#include <algorithm>
#include <fmt/core.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/estimate.hpp"
#include "api/plan.hpp"
#include "cli/api_flags.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "cli/plan_render.hpp"
#include "hardware/gpu_spec.hpp"
#include "model/model_source.hpp"
#include "planner/planner.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

using nlohmann::json;

/// Exit code when no offer can run the workload (documented in docs/planner.md).
constexpr int kExitNoPlan = 1;

/// The date a plan's price was last seen (Plan::price_last_seen_at: its age and the stale mark are
/// counted from it), else its observed date, or "undated" (trial9b D3: the first-seen date was
/// printed beside an age counted from the last-seen one).
std::string price_date(const Plan& p) {
  return p.price_last_seen_at.value_or(p.price_source.observed_at.value_or("undated"));
}

/// ", first seen YYYY-MM-DD" when the price was first seen on an earlier day than price_date, else "".
std::string first_seen_text(const Plan& p) {
  if (!p.price_source.observed_at || !p.price_last_seen_at ||
      p.price_last_seen_at->substr(0, 10) == p.price_source.observed_at->substr(0, 10))
    return "";
  return ", first seen " + p.price_source.observed_at->substr(0, 10);
}

/// The price-evidence mark of a plan (Plan::demotion_tier): "" clean, "~" stale, "?" undated,
/// "!" flagged. Shown in the "#" cell, which no terminal width drops.
const char* evidence_mark(const Plan& p) {
  switch (p.demotion_tier) {
    case 1: return "~";
    case 2: return "?";
    case 3: return "!";
    default: return "";
  }
}

void print_warning_line(const std::string& prefix, const PlanWarning& w, int width) {
  fmt::print("{}", wrap_text(fmt::format("{}[{}] {}", prefix, w.name(), w.message), width, "      "));
}

void print_table(const PlanRequest& r, const PlanResult& res) {
  const bool training = r.workload == PlanWorkload::training;
  const bool images = r.workload == PlanWorkload::image_generation;
  const int width = terminal_columns();
  TextTable t;
  t.header = {"#", "provider", "instance", "n", "GPU", "layout", "mem/GPU", training ? "tok/s" : (images ? "img/h" : "tok/s"),
              "time", "total", "$/h", "price date", "regions"};
  t.right_align = {true, false, false, true, false, false, true, true, true, true, true, false, false};
  // Which rows are not confirmed available (trial9c item 4): marked "u" in the "#" cell when the
  // table mixes confirmed and unconfirmed rows; when none is confirmed the warning summary says so.
  const auto confirmed_rows = std::count_if(res.plans.begin(), res.plans.end(),
                                            [](const Plan& p) { return p.availability_confirmed; });
  const bool mark_unconfirmed = confirmed_rows > 0 && static_cast<std::size_t>(confirmed_rows) < res.plans.size();
  for (std::size_t i = 0; i < res.plans.size(); ++i) {
    const Plan& p = res.plans[i];
    std::string regions = p.regions.empty() || p.regions.front().empty() ? std::string("-") : p.regions.front();
    if (p.regions.size() > 1) regions += fmt::format(" +{}", p.regions.size() - 1);
    t.rows.push_back({fmt::format("{}{}{}{}{}", i + 1, p.on_pareto_front ? "*" : "", p.recommended ? "R" : "",
                                  evidence_mark(p), mark_unconfirmed && !p.availability_confirmed ? "u" : ""),
                      clip(p.provider, 12), clip(p.instance_type, 24), fmt::format("{}", p.instances),
                      fmt::format("{}×{}", p.gpus_per_instance, clip(short_gpu(p.gpu_name), 13)), layout_text(p),
                      fmt::format("{:.0f}/{:.0f}G", p.per_gpu_memory_bytes / 1e9, p.gpu_memory_capacity_bytes / 1e9),
                      images ? rate_text(p.images_per_hour.value_or(0)) : rate_text(p.tokens_per_s),
                      duration_text(p.time_seconds()), (p.cost.total_is_lower_bound() ? "≥" : "") + usd_text(p.total_usd()),
                      fmt::format("{:.2f}{}", p.cost.usd_per_hour,
                                  p.cost.price_kind == PriceKind::on_demand ? "" :
                                  p.cost.price_kind == PriceKind::spot ? " s" : " r"),
                      price_date(p).substr(0, 10) + evidence_mark(p), clip(regions, 14)});
  }
  // Fit the terminal: drop columns from the right end of the least needed ones.
  std::string table = t.render();
  auto widest = [](const std::string& s) {
    std::size_t w = 0, cur = 0;
    for (unsigned char c : s) {
      if (c == '\n') { w = std::max(w, cur); cur = 0; }
      else if ((c & 0xC0) != 0x80) ++cur;
    }
    return std::max(w, cur);
  };
  // The columns left out, named under the table (trial49: they went without a word; `offers` says so).
  std::vector<std::string> left_out;
  for (std::size_t drop : {6u, 10u, 6u}) {  // mem/GPU, then price date, then tok/s
    if (widest(table) <= static_cast<std::size_t>(width)) break;
    left_out.push_back(t.header[drop]);
    t.drop_column(drop);
    table = t.render();
  }
  // Still too wide: clip the instance, regions, provider and GPU cells (details in --json).
  auto cell_width = [](const std::string& c) {
    std::size_t n = 0;
    for (unsigned char ch : c) n += (ch & 0xC0) != 0x80;
    return n;
  };
  const std::size_t last = t.header.size() - 1;
  for (std::size_t col : {std::size_t{2}, last, std::size_t{1}, std::size_t{4}}) {
    const std::size_t w = widest(table);
    if (w <= static_cast<std::size_t>(width)) break;
    std::size_t colw = cell_width(t.header[col]);
    for (const auto& row : t.rows) colw = std::max(colw, cell_width(row[col]));
    const std::size_t target = std::max<std::size_t>(8, colw > w - width ? colw - (w - width) : 8);
    for (auto& row : t.rows) row[col] = clip(row[col], target);
    table = t.render();
  }
  // Still too wide (COLUMNS 80-100, trial 9): drop the regions, then $/h (both in --json and
  // --explain), then wrap the layout cell over several lines (clipped, it hid the EP degree and
  // the recompute: what a user needs to reproduce the run).
  for (const char* name : {"regions", "$/h"}) {
    if (widest(table) <= static_cast<std::size_t>(width)) break;
    if (!t.drop_column(name)) continue;
    left_out.emplace_back(name);
    table = t.render();
  }
  // Still too wide (COLUMNS 60, trial47: rows of 72–74): the instance goes too (--explain and --json
  // name it; provider and GPU stay).
  if (widest(table) > static_cast<std::size_t>(width)) {
    const auto layout_at = std::find(t.header.begin(), t.header.end(), std::string("layout"));
    const std::size_t need = widest(table) - static_cast<std::size_t>(width);
    std::size_t layout_w = 0;
    if (layout_at != t.header.end())
      for (const auto& row : t.rows) layout_w = std::max(layout_w, cell_width(row[static_cast<std::size_t>(layout_at - t.header.begin())]));
    // The layout cell wraps down to 12 columns; drop the instance only when that is not enough.
    if (layout_w <= 12 || layout_w - 12 < need) {
      if (t.drop_column("instance")) {
        left_out.emplace_back("instance");
        table = t.render();
      }
    }
  }
  if (const auto at = std::find(t.header.begin(), t.header.end(), std::string("layout"));
      at != t.header.end() && widest(table) > static_cast<std::size_t>(width)) {
    const auto col = static_cast<std::size_t>(at - t.header.begin());
    const std::size_t w = widest(table);
    std::size_t colw = cell_width(t.header[col]);
    for (const auto& row : t.rows) colw = std::max(colw, cell_width(row[col]));
    const std::size_t target = std::max<std::size_t>(12, colw > w - width ? colw - (w - width) : 12);
    for (auto& row : t.rows) row[col] = wrap_cell(row[col], target);
    table = t.render();
  }
  fmt::print("{}", table);
  std::string footer = fmt::format(
      "{} of {} plans ({} offers considered, {} skipped, {} layouts). * = cost/time Pareto front; R = recommended "
      "({}); sorted by {}. Price marks: ~ stale (observed more than {:.0f} days ago, --max-price-age), ? undated, "
      "! flagged by a data-quality rule; unmarked = clean (dated, unflagged, at most {:.0f} days old){}. $/h per "
      "instance (s spot, r reserved). ≥ = storage or egress price unknown. Details: --explain N, --json.",
      res.plans.size(), res.plans_total, res.offers_considered, res.offers_skipped, res.layouts_evaluated,
      res.recommendation_rule.empty()                ? std::string("none")
      : res.recommendation_rule.rfind("none", 0) == 0 ? res.recommendation_rule
                                                      : res.recommendation_rule.substr(res.recommendation_rule.find(':') + 2),
      // The real order (planner order_rows): the recommended plan, then the price evidence (unless
      // --include-flagged), then the sort (trial 9: "sorted by total cost" over rows that follow
      // the price-age steps).
      fmt::format("{}{}{}", std::any_of(res.plans.begin(), res.plans.end(), [](const Plan& p) { return p.recommended; })
                                ? "the recommended plan first, then "
                                : "",
                  r.include_flagged ? std::string()
                                    : fmt::format("price evidence (clean, stale by age in {:.0f}-day steps, undated, "
                                                  "flagged), then ",
                                                  r.stale_after_days),
                  res.sort_applied != PlanSort::time ? std::string("total cost")
                  : res.sort_rule.empty()            ? std::string("time to finish")
                                                     : res.sort_rule.substr(3)),
      r.stale_after_days, r.stale_after_days,
      r.include_flagged ? "; --include-flagged: ranked together" : "; marked plans rank after clean ones");
  if (mark_unconfirmed)
    footer += fmt::format(" u = availability not confirmed (never, or more than {:.0f} days before --today).",
                          r.stale_after_days);
  if (res.plans_hidden > 0) {
    footer += fmt::format(" {} slower plans hidden (over {}: 30 days or 4× the recommended plan's time; --all lists them).",
                          res.plans_hidden, duration_text(res.hidden_slower_than_seconds));
  }
  if (res.plans_hidden_short > 0) {
    footer += fmt::format(" {} plans on more nodes than needed that finish in under 10 min hidden (a cluster is not "
                          "rented for seconds; --all lists them).",
                          res.plans_hidden_short);
  }
  if (const std::string legend = api::layout_legend_text(api::layout_abbreviations(res.plans)); !legend.empty()) footer += " " + legend;
  // Recompute modules the search chose (planner.hpp search order): what the layout's rc: names.
  if (const std::string why = api::searched_recompute_modules_text(r, api::searched_recompute_modules(r, res.plans));
      !why.empty())
    footer += " " + why;
  if (!left_out.empty()) {
    std::string names;
    for (const auto& n : left_out) names += (names.empty() ? "" : ", ") + n;
    footer += fmt::format(" Left out to fit {} columns: {} (--explain N and --json have them).", width, names);
  }
  fmt::print("{}", wrap_text(footer, width, ""));
  // The training stack and recipe switches the plans were made with, as estimate prints them (trial41 D4).
  if (r.workload == PlanWorkload::training)
    if (const std::string settings = api::training_settings_text(r); !settings.empty())
      fmt::print("{}", wrap_text(fmt::format("Training settings: {}.", settings), width, ""));
  if (images) {
    for (std::size_t i = 0; i < res.plans.size(); ++i) {
      fmt::print("  #{}: {} per 1,000 images\n", i + 1,
                 res.plans[i].usd_per_1000_images ? usd_text(*res.plans[i].usd_per_1000_images) : "unknown");
    }
  }
  for (std::size_t i = 0; i < res.plans.size(); ++i) {
    for (const auto& w : res.plans[i].warnings) {
      if (w.code == PlanWarningCode::billing_assumption || w.code == PlanWarningCode::price_date_unknown ||
          w.code == PlanWarningCode::not_confirmed_available || w.code == PlanWarningCode::link_assumed)
        continue;
      print_warning_line(fmt::format("  #{} ", i + 1), w, width);
    }
  }
  std::size_t undated = 0, unconfirmed = 0, assumed = 0, link = 0;
  for (const auto& p : res.plans) {
    for (const auto& w : p.warnings) {
      undated += w.code == PlanWarningCode::price_date_unknown;
      unconfirmed += w.code == PlanWarningCode::not_confirmed_available;
      assumed += w.code == PlanWarningCode::billing_assumption;
      link += w.code == PlanWarningCode::link_assumed;
    }
  }
  auto summary = [&](std::size_t n, PlanWarningCode c, const char* what) {
    if (n) print_warning_line("  ", PlanWarning{c, fmt::format("{} plans {}", n, what), {}}, width);
  };
  summary(undated, PlanWarningCode::price_date_unknown, "have prices whose source gives no date");
  summary(unconfirmed, PlanWarningCode::not_confirmed_available, "use offers not confirmed available (never, or more than --max-price-age ago)");
  summary(assumed, PlanWarningCode::billing_assumption, "assume unknown billing terms (see --explain N)");
  summary(link, PlanWarningCode::link_assumed, "assume the intra-node link from the GPU datasheet");
  for (const auto& w : res.warnings) print_warning_line("", w, width);
}

void print_no_plan(const PlanResult& res) {
  const NoPlanReason& np = *res.no_plan;
  const int width = terminal_columns();
  fmt::print("{}", wrap_text(fmt::format("No plan: {}", np.reason), width, "  "));
  for (const auto& s : np.suggestions) fmt::print("{}", wrap_text(fmt::format("  would help: {}", s), width, "    "));
  fmt::print("({} offers considered, {} skipped, {} layouts evaluated)\n", res.offers_considered, res.offers_skipped,
             res.layouts_evaluated);
  for (const auto& w : res.warnings) print_warning_line("", w, width);
}

void print_explain(const PlanResult& res, const std::vector<PlanExplainLine>& lines, std::size_t n) {
  const Plan& p = res.plans[n - 1];
  fmt::print("Plan {}: {} {} × {} ({}×{}), {} ${:.4f}/h ({}, {}{})\n", n, p.provider, p.instance_type, p.instances,
             p.gpus_per_instance, p.gpu_name, price_kind_name(p.cost.price_kind), p.cost.usd_per_hour,
             p.price_source.dataset, price_date(p), first_seen_text(p));
  TextTable t;
  t.header = {"term", "value", "unit", "formula", "source"};
  t.right_align = {false, true, false, false, false};
  for (const auto& l : lines) t.rows.push_back({l.term, fmt::format("{:.6g}", l.value), l.unit, l.formula, l.source});
  fmt::print("{}", t.render());
  for (const auto& w : p.warnings) fmt::print("warning [{}]: {}\n", w.name(), w.message);
}

GPUPLAN_REGISTER_COMMAND(Command{
    "plan", "plan the cheapest (or fastest) way to finish a training, serving or image job on the offers",
    [](CLI::App& sub, GlobalOptions& global) {
      // The request's flags are the api layer's plan fields (api/plan.cpp plan_fields(), the same
      // table POST /api/plan reads); the use case is api::run_plan. Only the rendering is here.
      auto in = std::make_shared<api::PlanInput>();
      auto json_out = std::make_shared<bool>(false);
      add_api_flags(sub, in, api::plan_fields());
      sub.add_flag("--json", *json_out, "print JSON (SI units: bytes, seconds, USD)");
      sub.callback([in, json_out, &global] {
        const api::Context ctx = make_context(global);
        const api::PlanOutput out = api::run_plan(*in, ctx);
        const PlanResult& res = out.result;
        if (*json_out) {
          fmt::print("{}\n", dump_json(api::to_json(out)));
        } else if (out.explain) {
          print_explain(res, out.explain_lines, *out.explain);
        } else if (res.no_plan) {
          print_no_plan(res);
        } else {
          print_table(out.request, res);
        }
        if (!out.explain && res.no_plan) global.exit_code = kExitNoPlan;
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
