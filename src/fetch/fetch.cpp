#include "fetch/fetch.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "catalog/import_detail.hpp"
#include "catalog/ingest.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

std::optional<std::string> real_env(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

/// Seconds since the epoch of "YYYY-MM-DD[THH:MM:SSZ]"; nullopt when unreadable.
std::optional<double> epoch_seconds(std::string_view iso) {
  if (iso.size() < 10) return std::nullopt;
  std::tm tm{};
  tm.tm_year = std::atoi(std::string(iso.substr(0, 4)).c_str()) - 1900;
  tm.tm_mon = std::atoi(std::string(iso.substr(5, 2)).c_str()) - 1;
  tm.tm_mday = std::atoi(std::string(iso.substr(8, 2)).c_str());
  if (iso.size() >= 19) {
    tm.tm_hour = std::atoi(std::string(iso.substr(11, 2)).c_str());
    tm.tm_min = std::atoi(std::string(iso.substr(14, 2)).c_str());
    tm.tm_sec = std::atoi(std::string(iso.substr(17, 2)).c_str());
  }
  return static_cast<double>(timegm(&tm));
}

const std::set<std::string_view>& bad_row_rules() {
  static const std::set<std::string_view> r = {import_rule::kZeroPrice, import_rule::kGpuMemoryMismatch,
                                               import_rule::kImplausiblePerGpuPrice};
  return r;
}

/// Latest observation of `kind` from `dataset` among `prices`, or nullptr.
const PriceObservation* latest_from(const std::vector<PriceObservation>& prices, PriceKind kind,
                                    std::string_view dataset) {
  const PriceObservation* best = nullptr;
  for (const PriceObservation& p : prices) {
    if (p.kind != kind || (!dataset.empty() && p.source.dataset != dataset)) continue;
    if (best == nullptr) {
      best = &p;
      continue;
    }
    const std::string a = p.source.observed_at.value_or("");
    const std::string b = best->source.observed_at.value_or("");
    if (a >= b) best = &p;
  }
  return best;
}

constexpr const auto& kKinds = kPriceKinds;

}  // namespace

bool FetchReport::any_failed() const {
  return std::any_of(sources.begin(), sources.end(),
                     [](const SourceOutcome& o) { return o.status == "failed" || o.status == "rejected"; });
}

std::string utc_now_iso() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void apply_gates(const Source& source, ImportBatch& batch, OfferStore& store, const GateLimits& limits,
                 const std::optional<SnapshotRecord>& last_accepted, SourceOutcome& out) {
  const SourceInfo& info = source.info();
  const std::string dataset = "fetch:" + info.name;
  // Not empty.
  if (batch.offers.empty()) out.gate_failures.push_back("not-empty: the snapshot has no GPU offers");
  // Row count against the last accepted snapshot.
  if (last_accepted && last_accepted->offers > 0) {
    const double floor = (1.0 - limits.max_row_drop_fraction) * static_cast<double>(last_accepted->offers);
    if (static_cast<double>(batch.offers.size()) < floor) {
      out.gate_failures.push_back(fmt::format(
          "row-count: {} offers, down from {} in the last accepted snapshot ({}); more than {:.0f}% lost",
          batch.offers.size(), last_accepted->offers, last_accepted->fetched_at, limits.max_row_drop_fraction * 100));
    }
  }
  // Every stored price > 0 (an adapter stores unknown as no observation).
  std::size_t non_positive = 0;
  for (const Offer& o : batch.offers)
    for (const PriceObservation& p : o.prices)
      if (!(p.usd_per_hour > 0) || !std::isfinite(p.usd_per_hour)) ++non_positive;
  if (non_positive > 0)
    out.gate_failures.push_back(fmt::format("price>0: {} observations are not positive finite prices", non_positive));
  // Share of offers with a price or GPU-memory finding (unit errors hit every row). An offer
  // whose source gave a $0 price of some kind and no price of that kind (add_price: an
  // unknown_price finding worded "<kind> price is $0", and no observation) counts too: a feed
  // that zeroes its price field stores "unknown" on every row and must not pass as a good
  // snapshot (issue 9 trial D2: vast with every dph_total 0; per kind since vast offers also
  // carry a spot price from min_bid). A price the source leaves out ("price is missing": a GPU
  // without a pricebook entry, an unpriced part) is its own unknown and is not counted.
  std::size_t bad = 0;
  for (const Offer& o : batch.offers) {
    const bool b = std::any_of(o.flags.begin(), o.flags.end(),
                               [](const QualityFlag& f) { return bad_row_rules().count(f.rule) > 0; });
    // A flag's detail is "<where>: <kind> price is $X: ..." (import_detail::report, add_price).
    const bool zero_only = std::any_of(std::begin(kKinds), std::end(kKinds), [&o](PriceKind kind) {
      if (o.latest_price(kind) != nullptr) return false;
      const std::string said = fmt::format(": {} price is $", price_kind_name(kind));
      const std::string said_negative = fmt::format(": {} price is -$", price_kind_name(kind));
      return std::any_of(o.flags.begin(), o.flags.end(), [&](const QualityFlag& f) {
        return f.rule == kRuleUnknownPrice &&
               (f.detail.find(said) != std::string::npos || f.detail.find(said_negative) != std::string::npos);
      });
    });
    if (b || zero_only) ++bad;
  }
  if (!batch.offers.empty() &&
      static_cast<double>(bad) > limits.max_bad_row_fraction * static_cast<double>(batch.offers.size())) {
    out.gate_failures.push_back(fmt::format(
        "datasheet: {} of {} offers have a $0/implausible price or GPU memory outside the datasheet "
        "(more than {:.0f}%: the feed or its units changed)",
        bad, batch.offers.size(), limits.max_bad_row_fraction * 100));
  }
  // Expected GPUs present.
  std::set<std::string> names;
  for (const Offer& o : batch.offers)
    if (o.gpu_name) names.insert(*o.gpu_name);
  std::vector<std::string> missing;
  for (const std::string& g : info.expected_gpus)
    if (!names.count(g)) missing.push_back(g);
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    out.gate_failures.push_back("expected-gpus: missing " + list);
  }
  // Priced at all: every source is a price feed, so a snapshot in which no offer has a price
  // (the price field renamed or dropped upstream: each row reads "price is missing", which the
  // datasheet gate does not count) is rejected, not stored as a catalog of unknown prices.
  const std::size_t priced_now = static_cast<std::size_t>(
      std::count_if(batch.offers.begin(), batch.offers.end(), [](const Offer& o) { return !o.prices.empty(); }));
  // The same for the on-demand price when every offer says it is missing but some carry another
  // kind (vast with dph_total renamed still stores min_bid as spot): rejected, not stored as a
  // catalog of spot prices with unknown on-demand prices.
  const bool on_demand_missing_everywhere =
      !batch.offers.empty() && std::all_of(batch.offers.begin(), batch.offers.end(), [](const Offer& o) {
        return !o.latest_price(PriceKind::on_demand) &&
               std::any_of(o.flags.begin(), o.flags.end(), [](const QualityFlag& f) {
                 return f.rule == kRuleUnknownPrice && f.detail.find(": on-demand price is missing") != std::string::npos;
               });
      });
  if (!batch.offers.empty() && priced_now == 0)
    out.gate_failures.push_back(fmt::format(
        "priced: none of the {} offers has a price (the feed's price field is missing or renamed)",
        batch.offers.size()));
  else if (on_demand_missing_everywhere)
    out.gate_failures.push_back(fmt::format(
        "priced: none of the {} offers has an on-demand price (the feed's price field is missing or renamed)",
        batch.offers.size()));
  // Price moves since the last snapshot of this source; and what changes against the store.
  std::size_t jumps = 0;
  // Per price kind: offers of this snapshot that this source priced at that kind before, and
  // those of them without a price of that kind now.
  std::array<std::size_t, kPriceKindCount> priced_before{};
  std::array<std::size_t, kPriceKindCount> price_lost{};
  for (Offer& o : batch.offers) {
    const std::optional<Offer> old = store.get(o.id);
    if (old) keep_known_facts(o, *old);
    for (PriceKind kind : kKinds) {
      if (!old || latest_from(old->prices, kind, dataset) == nullptr) continue;
      ++priced_before[static_cast<std::size_t>(kind)];
      if (latest_from(o.prices, kind, "") == nullptr) ++price_lost[static_cast<std::size_t>(kind)];
    }
    for (PriceKind kind : kKinds) {
      const PriceObservation* now = latest_from(o.prices, kind, "");
      if (now == nullptr) continue;
      const PriceObservation* before_any = old ? latest_from(old->prices, kind, "") : nullptr;
      if (before_any == nullptr || before_any->usd_per_hour != now->usd_per_hour)
        out.price_changes.push_back(PriceChange{
            o.id, kind, before_any ? std::optional<double>(before_any->usd_per_hour) : std::nullopt,
            now->usd_per_hour});
      const PriceObservation* before = old ? latest_from(old->prices, kind, dataset) : nullptr;
      if (before == nullptr || !(before->usd_per_hour > 0)) continue;
      const double ratio = now->usd_per_hour / before->usd_per_hour;
      if (ratio > limits.price_move_factor || ratio < 1.0 / limits.price_move_factor) {
        ++jumps;
        import_detail::report(
            batch, &o, now->source.locator, kRulePriceJump,
            fmt::format("{} price moved from ${:.4g}/h ({}) to ${:.4g}/h: more than {}x; check before relying on it",
                        price_kind_name(kind), before->usd_per_hour, before->source.observed_at.value_or("undated"),
                        now->usd_per_hour, limits.price_move_factor),
            false, false);
      }
    }
  }
  // Prices lost against this source's earlier snapshots (issue 9 trial D2): a few unpriced rows are
  // the source's own unknowns (a preview SKU, a GPU without a pricebook entry), but losing more
  // than max_bad_row_fraction of the on-demand or spot prices it gave before means the feed's
  // price field changed: rejected. Reserved and savings-plan prices come and go with a provider's
  // plans, so their losses are a warning only.
  for (PriceKind kind : kKinds) {
    const std::size_t before = priced_before[static_cast<std::size_t>(kind)];
    const std::size_t lost = price_lost[static_cast<std::size_t>(kind)];
    if (lost == 0 || priced_now == 0) continue;
    const bool main_field = kind == PriceKind::on_demand || kind == PriceKind::spot;
    if (main_field && static_cast<double>(lost) > limits.max_bad_row_fraction * static_cast<double>(before))
      out.gate_failures.push_back(fmt::format(
          "price-lost: {} of {} offers this source priced {} before have no {} price now (more than {:.0f}%: the "
          "feed's price field changed)",
          lost, before, price_kind_name(kind), price_kind_name(kind), limits.max_bad_row_fraction * 100));
    else if (!main_field)
      out.warnings.push_back(fmt::format("{} of {} offers this source priced {} before have no {} price now", lost,
                                         before, price_kind_name(kind), price_kind_name(kind)));
  }
  if (jumps > 0)
    out.warnings.push_back(
        fmt::format("{} prices moved more than {}x since the last snapshot (flagged price_jump)", jumps,
                    limits.price_move_factor));
}

FetchReport run_fetch(OfferStore& store, HttpClient& http, const FetchOptions& options) {
  std::vector<const Source*> chosen;
  const auto env = options.env ? options.env : std::function<std::optional<std::string>(std::string_view)>(real_env);
  if (options.sources.empty()) {
    for (const auto& s : all_sources()) chosen.push_back(s.get());
  } else {
    for (const std::string& name : options.sources) {
      const Source* s = find_source(name);
      if (s == nullptr)
        throw Error(ErrorKind::not_found, "SOURCE", "unknown fetch source \"" + name + "\"",
                    "a name from `gpuplan fetch --list`");
      chosen.push_back(s);
    }
  }
  FetchReport report;
  for (const Source* src : chosen) {
    if (options.stop != nullptr && options.stop->requested()) break;
    const SourceInfo& info = src->info();
    SourceOutcome out;
    out.source = info.name;
    // 1. keys
    std::vector<std::string> missing_keys;
    for (const std::string& k : info.key_env)
      if (!env(k)) missing_keys.push_back(k);
    if (!missing_keys.empty()) {
      // Listed as skipped also when every source was asked for, so a user sees what a key would add.
      std::string list;
      for (const auto& k : missing_keys) list += (list.empty() ? "" : ", ") + k;
      out.status = "skipped";
      out.message = "needs " + list + " in the environment (an API key of your account); skipped";
      report.sources.push_back(std::move(out));
      continue;
    }
    SourceContext ctx;
    ctx.http = &http;
    ctx.base_url = options.base_url;
    ctx.env = env;
    ctx.gpus = options.gpus;
    ctx.fetched_at = options.fetched_at.empty() ? utc_now_iso() : options.fetched_at;
    http.set_min_interval(info.name, info.min_request_interval_s);
    SnapshotRecord& rec = out.snapshot;
    rec.source = info.name;
    rec.fetched_at = ctx.fetched_at;
    rec.parser_version = info.parser_version;
    const std::optional<SnapshotRecord> last = store.last_snapshot(info.name, "accepted");
    auto record = [&](ImportBatch* batch) {
      if (options.dry_run) return;
      // The one write path (catalog/ingest.hpp): the store-wide quality gates, then the
      // snapshot record and its batch in one transaction.
      SnapshotCommit c = ingest_snapshot(store, rec, batch, rec.fetched_at.substr(0, 10));
      rec = c.record;
      out.changes = c.import;
      if (c.already_accepted) out.status = "unchanged";
    };
    // 2. download
    std::vector<FetchedDoc> docs;
    try {
      docs = src->download(ctx);
    } catch (const Error& e) {
      if (options.stop != nullptr && options.stop->requested()) {
        out.status = "cancelled";
        out.message = "stopped before the download finished; nothing recorded";
        report.sources.push_back(std::move(out));
        break;
      }
      out.status = "failed";
      out.message = e.what();
      // A keyed source refused with 401/403: say which variable holds the credential it refused.
      if (const auto status = failed_http_status(e); status && (*status == 401 || *status == 403) &&
                                                      !info.key_env.empty()) {
        std::string keys;
        for (const auto& k : info.key_env) keys += (keys.empty() ? "" : ", ") + k;
        out.message = fmt::format("the provider refused the credentials in {} (HTTP {}): check that {} current "
                                  "and allowed to read prices; nothing written. {}",
                                  keys, *status, info.key_env.size() > 1 ? "they are" : "it is", e.what());
      }
      rec.url = info.urls.empty() ? "" : ctx.endpoint(info.urls.front());
      rec.urls = {rec.url};
      rec.content_hash = "none";
      rec.status = "rejected";
      rec.detail = "download failed: " + std::string(e.what());
      record(nullptr);
      report.sources.push_back(std::move(out));
      continue;
    }
    std::vector<std::string_view> bodies;
    for (const FetchedDoc& d : docs) {
      rec.urls.push_back(d.url);
      bodies.push_back(d.body);
    }
    rec.url = rec.urls.empty() ? "" : rec.urls.front();
    rec.content_hash = content_hash(bodies);
    // 3. same content as the last accepted snapshot. Identical since that snapshot (the one with
    // this content: an earlier acceptance of the same content was followed by another content).
    const bool same_content = last && last->content_hash == rec.content_hash;
    const double frozen_days = options.gates.frozen_after_days.value_or(info.frozen_after_days);
    // Seconds since the last accepted snapshot with this content (negative: a date did not parse).
    double same_content_seconds = -1;
    if (same_content) {
      const double t0 = epoch_seconds(last->fetched_at).value_or(-1);
      const double t1 = epoch_seconds(rec.fetched_at).value_or(-1);
      if (t0 >= 0 && t1 >= 0) same_content_seconds = t1 - t0;
    }
    const bool looks_frozen = same_content_seconds >= 0 && same_content_seconds >= frozen_days * 86400.0;
    // Content accepted under an older parser (vast's parser 2 reads min_bid as spot) is read again
    // and goes through the gates like new content, unless the feed looks frozen (a frozen feed
    // confirms nothing, whichever parser reads it).
    const bool reread = same_content && last->parser_version != rec.parser_version && !looks_frozen;
    if (same_content && !reread) {
      out.status = "unchanged";
      rec.status = "unchanged";
      const std::optional<std::string> first = last->fetched_at;
      if (looks_frozen) {
        out.frozen = true;
        out.warnings.push_back(fmt::format("feed looks frozen: identical content since {} ({:.1f} days; {} after {:g} "
                                           "days); its prices are not re-confirmed and age from when they were last seen",
                                           first.value_or(""), same_content_seconds / 86400.0,
                                           options.gates.frozen_after_days ? "--frozen-after-days: frozen"
                                                                           : "this source counts as frozen",
                                           frozen_days));
      }
      rec.detail = out.frozen ? out.warnings.back() : "same content as the last accepted snapshot: nothing imported";
      out.message = rec.detail;
      rec.offers = last->offers;
      rec.rows_read = last->rows_read;
      // The same content still lists its offers at their prices: parsed again, so the store marks
      // those prices (and the availability the source reports) seen at this fetch (docs/fetch.md
      // "Seen again"). A reply that no longer parses (a newer parser) is recorded as it is. A feed
      // that looks frozen confirms nothing: a reply served unchanged for two years made its prices
      // "fresh" and its offers "available now" (trial9b D1).
      ImportBatch same;
      bool parsed = false;
      if (!out.frozen) {
        try {
          same = src->parse(docs, ctx);
          same.dataset = "fetch:" + info.name;
          check_no_future_dates(same, ctx.fetched_at.substr(0, 10));
          parsed = true;
        } catch (const Error&) {
        }
      }
      record(parsed ? &same : nullptr);
      // SEEN AGAIN counts these prices as an accepted snapshot's do (ingest_snapshot split them
      // off; a dry run splits them here, writing nothing). It said 0 (trial9c leftovers).
      if (parsed) {
        if (options.dry_run) split_seen_again(store, same);
        out.changes.prices_seen_again = same.seen_again.size();
      }
      report.sources.push_back(std::move(out));
      continue;
    }
    // 4. parse
    ImportBatch batch;
    try {
      batch = src->parse(docs, ctx);
      batch.dataset = "fetch:" + info.name;
      check_no_future_dates(batch, ctx.fetched_at.substr(0, 10));
    } catch (const Error& e) {
      out.status = "rejected";
      out.message = std::string("malformed response: ") + e.what();
      rec.status = "rejected";
      rec.detail = out.message;
      record(nullptr);
      report.sources.push_back(std::move(out));
      continue;
    }
    rec.rows_read = batch.rows_read;
    rec.offers = batch.offers.size();
    // 5. gates
    apply_gates(*src, batch, store, options.gates, last, out);
    out.rules = rows_per_rule(batch.issues);
    {
      // One example per row: an adapter that makes several offers of one row (RunPod: 1 GPU and
      // maxGpuCount GPUs) reports that row once per offer (trial9b D8 named one row twice).
      std::unordered_map<std::string, std::size_t> per_rule;
      std::set<std::tuple<std::string, bool, std::string>> seen;
      for (const ImportIssue& i : batch.issues)
        if (seen.emplace(i.rule, i.rejected, i.where).second && per_rule[i.rule]++ < kRowExamplesPerRule)
          out.row_examples.push_back(i);
    }
    for (const ImportRuleCount& r : out.rules)
      if (r.rule == kRuleUnmappedSku)
        out.warnings.push_back(fmt::format("{} rows with SKUs the adapter does not map (skipped, listed in the issues)",
                                           r.rejected + r.flagged));
    if (!out.gate_failures.empty()) {
      out.status = "rejected";
      std::string all;
      for (const auto& g : out.gate_failures) all += (all.empty() ? "" : "; ") + g;
      out.message = "gate failed: " + all;
      rec.status = "rejected";
      rec.detail = out.message;
      record(nullptr);
      report.sources.push_back(std::move(out));
      continue;
    }
    // 6. commit
    rec.status = "accepted";
    std::string detail = fmt::format("{} rows read, {} offers; gates passed", batch.rows_read, batch.offers.size());
    for (const auto& w : out.warnings) detail += "; " + w;
    rec.detail = detail;
    if (options.dry_run) {
      out.status = "would-accept";
      for (const Offer& o : batch.offers) {
        const std::optional<Offer> old = store.get(o.id);
        if (!old)
          ++out.changes.offers_added;
        else if (same_offer_facts(*old, o))
          ++out.changes.offers_unchanged;
        else
          ++out.changes.offers_updated;
      }
      // What the real run would add (trial9c item 5: a dry run counted every price of the batch,
      // 12, where the run added 1 and saw 11 again): the prices given again are split off as the
      // commit does (ingest_snapshot), then the store previews the rest.
      split_seen_again(store, batch);
      const ImportResult preview = store.preview_import(batch);
      out.changes.observations_added = preview.observations_added;
      out.changes.observations_already_known = preview.observations_already_known;
      out.changes.prices_seen_again = batch.seen_again.size();
      out.message = detail;
    } else {
      out.status = "accepted";
      record(&batch);
      out.changes.prices_seen_again = batch.seen_again.size();  // ingest_snapshot split them off
      out.rules = rows_per_rule(batch.issues);  // with the flags the store-wide gates added
      out.message = out.status == "unchanged" ? rec.detail : detail;
    }
    report.sources.push_back(std::move(out));
  }
  return report;
}

std::vector<ImportRuleCount> rows_per_rule(const std::vector<ImportIssue>& issues) {
  std::map<std::string, ImportRuleCount> by_rule;
  std::set<std::tuple<std::string, bool, std::string>> seen;
  for (const ImportIssue& i : issues) {
    if (!seen.emplace(i.rule, i.rejected, i.where).second) continue;
    ImportRuleCount& c = by_rule[i.rule];
    c.rule = i.rule;
    ++(i.rejected ? c.rejected : c.flagged);
  }
  std::vector<ImportRuleCount> out;
  for (auto& [rule, c] : by_rule) out.push_back(c);
  return out;
}

std::vector<std::string> skipped_rows_report(const SourceOutcome& o) {
  std::vector<std::string> lines;
  // A rejected snapshot keeps nothing: its flagged rows are not "kept" (trial9b D8).
  const bool kept = o.status != "rejected" && o.status != "failed" && o.status != "cancelled";
  auto examples = [&](const std::string& rule, bool rejected) {
    for (const ImportIssue& i : o.row_examples)
      if (i.rule == rule && i.rejected == rejected) lines.push_back(fmt::format("  {}: {}", i.where, i.detail));
  };
  for (const ImportRuleCount& r : o.rules) {
    if (r.rejected > 0) {
      lines.push_back(fmt::format("{} row{} skipped ({}), e.g.:", r.rejected, r.rejected == 1 ? "" : "s", r.rule));
      examples(r.rule, true);
    }
    if (r.flagged > 0) {
      lines.push_back(kept ? fmt::format("{} row{} kept with the flag {}, e.g.:", r.flagged, r.flagged == 1 ? "" : "s",
                                         r.rule)
                           : fmt::format("{} row{} flagged {} (not kept: the snapshot was rejected), e.g.:", r.flagged,
                                         r.flagged == 1 ? "" : "s", r.rule));
      examples(r.rule, false);
    }
  }
  return lines;
}

}  // namespace gpuplan::fetch
