// Catalog scale (issue 12): query and plan latency on the bundled catalog grown to 10× and 100×
// its size, each offer with a price history, on SQLite and on PostgreSQL.
//
//   bench_store_scale [--scales 1,10,100] [--history 6] [--reps 5]
//   PostgreSQL runs when GPUPLAN_BENCH_PG_URL or GPUPLAN_TEST_PG_URL names an admin database
//   (scripts/with-test-postgres.sh sets the latter); it creates gpuplan_bench_<scale> there.
//
// Growth is done in SQL after the normal seed: every bundled offer gets (scale - 1) copies
// (id + "/xK") whose prices are the original's × (1 + K/1000), so copies interleave with their
// neighbours in price order, and every observation `history` older copies, dated 2024-01..2024-12
// and priced +1%..+12%. These are SYNTHETIC rows for timing only (never data). The growth runs
// at schema version 2 and the store is then reopened, so migrations 3 to 5 build latest_prices
// from the grown history (their time is printed: what upgrading a store of that size costs).
// Timed (median of reps): the FIRST PAGE (filter, default order or price, limit 50: what the
// /offers page and `gpuplan offers` show first); a FULL filtered query (every match); the
// planner's read as api::run_plan reads (plan_memory_floor, latest prices only, the bounded read:
// api::kPlanOffersPerClass per plan class) and plan() over it for a 70B LoRA fine-tune; at 1×
// and 10× also the --all-offers read once, and whether its first 10 plan rows equal the bounded's.
// Then the first pages again after dropping latest_prices' order indexes ("no order ix"). The
// EXPLAIN of the first page is printed per backend and scale.
#include <fmt/core.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "catalog/open_store.hpp"
#include "catalog/pg_store.hpp"
#include "catalog/sqlite_store.hpp"
#include "catalog/providers.hpp"
#include "hardware/gpu_spec.hpp"
#include "model/model_source.hpp"
#include "api/plan.hpp"
#include "planner/planner.hpp"

using namespace gpuplan;

namespace {

double median_ms(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

BillingTerms billing_of(const Offer& o) { return effective_billing(o, find_provider(bundled_providers(), o.provider)); }

const char* kOfferCols =
    "provider, instance_type, region, zone, gpu_name_raw, gpu_name, gpu_count, gpu_memory_bytes, vcpus, ram_bytes, "
    "local_disk_bytes, intra_node_link, intra_node_link_bytes_per_s, form_factor, inter_node_network, "
    "inter_node_bits_per_s, max_nodes, confirmed_available_at, billing_granularity_seconds, "
    "billing_minimum_billed_seconds, billing_storage_usd_per_gb_month, billing_egress_usd_per_gb, "
    "billing_egress_free_gb_per_month, billing_preemptions_per_day, billing_sources_json";

/// SQL that grows a seeded catalog (same text for both databases but the series and dates).
std::vector<std::string> grow_sql(bool pg, int scale, int history) {
  const std::string series = pg ? fmt::format("generate_series(1, {})", scale - 1)
                                : fmt::format("(WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM s "
                                              "WHERE k < {}) SELECT k FROM s)", scale - 1);
  const std::string hseries = pg ? fmt::format("generate_series(1, {})", history)
                                 : fmt::format("(WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM s "
                                               "WHERE k < {}) SELECT k FROM s)", history);
  const std::string k = pg ? "g.k" : "g.k";
  std::vector<std::string> v;
  if (scale > 1) {
    v.push_back(fmt::format("INSERT INTO offers (id, {0}) SELECT o.id || '/x' || {1}, {2} FROM offers o, {3} AS g(k)",
                            kOfferCols, k,
                            [&] {
                              std::string c = kOfferCols, out;
                              std::size_t p = 0;
                              while (true) {
                                auto q = c.find(", ", p);
                                out += "o." + c.substr(p, q == std::string::npos ? std::string::npos : q - p);
                                if (q == std::string::npos) break;
                                out += ", ";
                                p = q + 2;
                              }
                              return out;
                            }(),
                            series));
    v.push_back(fmt::format("INSERT INTO flags (offer_id, position, rule, detail, excludes) SELECT f.offer_id || '/x' "
                            "|| {0}, f.position, f.rule, f.detail, f.excludes FROM flags f, {1} AS g(k)",
                            k, series));
    v.push_back(pg ? fmt::format("INSERT INTO observations (offer_id, kind, usd_per_hour, observed_at, observed_at_text, "
                                 "dataset, locator) SELECT x.offer_id || '/x' || g.k, x.kind, "
                                 "x.usd_per_hour * (1 + g.k / 1000.0), x.observed_at, x.observed_at_text, x.dataset, "
                                 "x.locator FROM observations x, {} AS g(k)",
                                 series)
                   : fmt::format("INSERT INTO observations (offer_id, kind, usd_per_hour, observed_at, dataset, locator) "
                                 "SELECT x.offer_id || '/x' || g.k, x.kind, x.usd_per_hour * (1 + g.k / 1000.0), "
                                 "x.observed_at, x.dataset, x.locator FROM observations x, {} AS g(k)",
                                 series));
  }
  // History: older observations (2024-MM-01, +MM%) for every observation present now.
  v.push_back(pg ? fmt::format("INSERT INTO observations (offer_id, kind, usd_per_hour, observed_at, observed_at_text, "
                               "dataset, locator) SELECT x.offer_id, x.kind, x.usd_per_hour * (1 + 0.01 * h.k), "
                               "make_date(2024, h.k, 1), to_char(make_date(2024, h.k, 1), 'YYYY-MM-DD'), "
                               "'bench:synthetic-history', 'bench' FROM observations x, {} AS h(k) "
                               "WHERE x.dataset <> 'bench:synthetic-history' ON CONFLICT DO NOTHING",
                               hseries)
                 : fmt::format("INSERT OR IGNORE INTO observations (offer_id, kind, usd_per_hour, observed_at, dataset, "
                               "locator) SELECT x.offer_id, x.kind, x.usd_per_hour * (1 + 0.01 * h.k), "
                               "printf('2024-%02d-01', h.k), 'bench:synthetic-history', 'bench' "
                               "FROM observations x, {} AS h(k) WHERE x.dataset <> 'bench:synthetic-history'",
                               hseries));
  // PostgreSQL's statistics as autovacuum would keep them; SQLite stores are never ANALYZEd
  // by gpuplan, so none there (its planner then works from the schema alone, as for users).
  if (pg) v.push_back("ANALYZE");
  // SQLite takes no column list on a subquery alias (its CTE already names the column k).
  if (!pg)
    for (std::string& q : v)
      for (const auto& [from, to] : {std::pair<std::string, std::string>{"AS g(k)", "AS g"}, {"AS h(k)", "AS h"}})
        for (auto p = q.find(from); p != std::string::npos; p = q.find(from, p)) q.replace(p, from.size(), to);
  return v;
}

void run(const std::string& backend, const std::string& url, int scale, int history, int reps,
         const std::function<void(const std::vector<std::string>&)>& exec_raw) {
  const bool pg = backend == "postgresql";
  FixedClock clock("2026-11-30");
  const StoreContext ctx{GpuCatalog::bundled(), clock};
  const auto t0 = std::chrono::steady_clock::now();
  open_store(url, ctx);  // migrates and seeds the bundled catalog
  const double seed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Back to schema version 2, grow, and let migration 3 backfill latest_prices on reopening.
  const auto t1 = std::chrono::steady_clock::now();
  // Migration 7 adds offers.min_nodes: drop it so that the version-2 store has version 2's columns.
  std::vector<std::string> grow = {"DROP TABLE latest_prices", "ALTER TABLE offers DROP COLUMN min_nodes",
                                   pg ? "UPDATE gpuplan_schema SET version = 2" : "PRAGMA user_version = 2"};
  for (auto& g : grow_sql(pg, scale, history)) grow.push_back(std::move(g));
  exec_raw(grow);
  const double grow_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const auto t2 = std::chrono::steady_clock::now();
  auto store = open_store(url, ctx);
  const double migrate_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count();
  if (pg) exec_raw({"ANALYZE"});
  const StoreCounts c = store->counts();
  fmt::print("{:<10} scale {:>3}: {:>7} offers, {:>8} observations (seed {:.1f} s, grow {:.1f} s, migrations 3-5 "
             "{:.1f} s)\n",
             backend, scale, c.offers, c.observations, seed_s, grow_s, migrate_s);
  auto explain = [&](const OfferQuery& q) {
    std::vector<std::string> plans;
    if (auto* s = dynamic_cast<SqliteOfferStore*>(store.get())) plans = s->explain_query(q);
    if (auto* s = dynamic_cast<PgOfferStore*>(store.get())) plans = s->explain_query(q);
    return plans.empty() ? std::string() : plans[0];
  };
  auto q_ms = [&](const std::string& label, const std::string& filter, const std::string& sort,
                  std::optional<std::size_t> limit, int n_reps) {
    OfferQuery q;
    q.filter = filter;
    q.sort = sort;
    q.limit = limit;
    q.now_date = "2026-11-30";
    std::size_t n = 0;
    const double ms = median_ms(n_reps, [&] { n = store->query(q).size(); });
    fmt::print("  {:<11} {:<48} {:>10.2f} ms median of {} ({} offers)\n", label,
               "\"" + filter + "\"" + (sort == "price" ? " --sort price" : ""), ms, n_reps, n);
  };
  const std::vector<std::pair<std::string, std::string>> pages = {
      {"gpu=H100 gpus>=8", std::string(kSortPricePerGpuHour)},
      {"price_per_gpu<=2", std::string(kSortPricePerGpuHour)},
      {"provider=aws or provider=gcp or provider=azure", std::string(kSortPricePerGpuHour)},
      {"", std::string(kSortPricePerGpuHour)},
      {"gpu=A100", "price"}};
  auto first_pages = [&](const char* label) {
    for (const auto& [f, sort] : pages) q_ms(label, f, sort, 50, reps);
  };
  {
    OfferQuery q;
    q.filter = pages[0].first;
    q.limit = 50;
    q.now_date = "2026-11-30";
    std::string plan = explain(q);
    for (auto p = plan.find('\n'); p != std::string::npos && p + 1 < plan.size(); p = plan.find('\n', p + 1))
      plan.replace(p, 1, "\n      ");
    fmt::print("  EXPLAIN of the first page \"{}\" limit 50 (first statement):\n      {}\n", q.filter, plan);
  }
  first_pages("first page");
  // The page footer's "N matching": counted by the database (count_matching) since issue 12's
  // fix; before it, the full filtered query below was run to count.
  for (const auto& [f, sort] : pages) {
    OfferQuery q;
    q.filter = f;
    q.now_date = "2026-11-30";
    std::size_t n = 0;
    const double ms = median_ms(reps, [&] { n = store->count_matching(q); });
    fmt::print("  {:<11} {:<48} {:>10.2f} ms median of {} ({} offers)\n", "count", "\"" + f + "\"", ms, reps, n);
  }
  const int slow_reps = scale >= 100 ? 1 : std::max(1, reps / 2);
  q_ms("full", "gpu=H100 gpus>=8", std::string(kSortPricePerGpuHour), std::nullopt, slow_reps);
  // The plan path: the planner's read (every offer, latest prices only) and plan() over it.
  PlanRequest r;
  r.model.preset = "llama-3.1-70b";
  r.task = Task::lora;
  r.tokens = 5e8;
  r.seq_len = 4096;
  r.today = "2026-11-30";
  ModelSource s;
  s.preset = r.model.preset;
  const ModelArch arch = resolve_model(s);
  // As api::run_plan reads (issue 12): the memory floor (issue 7) and the bounded read, the
  // kPlanOffersPerClass cheapest offers of each plan class per kind and price evidence.
  auto planner_query = [&](bool all_offers) {
    OfferQuery q;
    q.now_date = r.today;
    q.memory_floor = plan_memory_floor(r, arch);
    if (!all_offers) q.cheapest_per_plan_class = api::kPlanOffersPerClass;
    return q;
  };
  // The rows a user sees: the first 10 plans (offer, instances, layout, total).
  auto top_rows = [](const PlanResult& res) {
    std::string t;
    for (std::size_t i = 0; i < std::min<std::size_t>(10, res.plans.size()); ++i) {
      const Plan& p = res.plans[i];
      t += fmt::format("{} x{} tp{} pp{} dp{} {:.2f}{};", p.offer_id, p.instances, p.layout.tp, p.layout.pp, p.layout.dp,
                       p.total_usd(), p.recommended ? " R" : "");
    }
    return t;
  };
  std::size_t plans = 0, offers_read = 0;
  std::string bounded_top;
  std::vector<double> read_ms, plan_ms;
  for (int i = 0; i < reps; ++i) {
    const OfferQuery q = planner_query(false);
    const auto a = std::chrono::steady_clock::now();
    const auto offers = store->query(q);
    const auto b = std::chrono::steady_clock::now();
    const PlanResult res = plan(r, arch, offers, GpuCatalog::bundled(), &billing_of);
    const auto e = std::chrono::steady_clock::now();
    plans = res.plans_total;
    bounded_top = top_rows(res);
    offers_read = offers.size();
    read_ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    plan_ms.push_back(std::chrono::duration<double, std::milli>(e - b).count());
  }
  std::sort(read_ms.begin(), read_ms.end());
  std::sort(plan_ms.begin(), plan_ms.end());
  fmt::print("  plan 70B LoRA: read {:.2f} ms ({} offers) + plan() {:.2f} ms ({} plans), median of {}\n",
             read_ms[read_ms.size() / 2], offers_read, plan_ms[plan_ms.size() / 2], plans, reps);
  if (scale <= 10) {
    // --all-offers once (every match: linear in the catalog), and whether the rows shown agree.
    const auto a = std::chrono::steady_clock::now();
    const auto offers = store->query(planner_query(true));
    const auto b = std::chrono::steady_clock::now();
    const PlanResult res = plan(r, arch, offers, GpuCatalog::bundled(), &billing_of);
    const auto e = std::chrono::steady_clock::now();
    fmt::print("  plan 70B LoRA --all-offers: read {:.2f} ms ({} offers) + plan() {:.2f} ms ({} plans); first 10 rows "
               "{} the bounded read's\n",
               std::chrono::duration<double, std::milli>(b - a).count(), offers.size(),
               std::chrono::duration<double, std::milli>(e - b).count(), res.plans_total,
               top_rows(res) == bounded_top ? "equal to" : "DIFFERENT from");
  }
  // Without latest_prices' order indexes (all but its primary key): the first page sorts every match.
  std::vector<std::string> drop;
  for (const char* ix : {"by_gpu_hour", "by_price", "by_gpu_name", "by_gpu_norm", "by_provider", "by_gpu_name_price",
                         "by_gpu_norm_price", "by_provider_price"})
    drop.push_back(fmt::format("DROP INDEX IF EXISTS latest_prices_{}", ix));  // 6 gone since schema 8
  exec_raw(drop);
  if (pg) exec_raw({"ANALYZE"});
  store = open_store(url, ctx);  // fresh connections: no statement prepared for the old indexes
  first_pages("no order ix");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> scales = {1, 10, 100};
  int history = 6, reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--scales") {
      scales.clear();
      std::size_t p = 0;
      while (p <= v.size()) {
        auto q = v.find(',', p);
        scales.push_back(std::stoi(v.substr(p, q == std::string::npos ? std::string::npos : q - p)));
        if (q == std::string::npos) break;
        p = q + 1;
      }
    } else if (a == "--history") {
      history = std::stoi(v);
    } else if (a == "--reps") {
      reps = std::stoi(v);
    }
  }
  const char* pg_env = std::getenv("GPUPLAN_BENCH_PG_URL");
  if (!pg_env || !*pg_env) pg_env = std::getenv("GPUPLAN_TEST_PG_URL");
  for (int scale : scales) {
    const std::string path = fmt::format("/tmp/gpuplan-bench-{}-{}.sqlite", ::getpid(), scale);
    std::filesystem::remove(path);
    run("sqlite", path, scale, history, reps, [&](const std::vector<std::string>& sql) {
      sqlite3* db = nullptr;
      sqlite3_open(path.c_str(), &db);
      for (const auto& s : sql) {
        char* err = nullptr;
        if (sqlite3_exec(db, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
          fmt::print(stderr, "sqlite: {}\n", err ? err : "?");
          std::exit(1);
        }
      }
      sqlite3_close(db);
    });
    std::filesystem::remove(path);
    std::filesystem::remove(path + "-wal");
    std::filesystem::remove(path + "-shm");
    if (pg_env && *pg_env) {
      const std::string admin = pg_env;
      const std::string name = fmt::format("gpuplan_bench_{}", scale);
      {
        pqxx::connection c(admin);
        pqxx::nontransaction t(c);
        t.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        t.exec("CREATE DATABASE " + name);
      }
      const std::string url = admin.substr(0, admin.rfind('/') + 1) + name;
      run("postgresql", url, scale, history, reps, [&](const std::vector<std::string>& sql) {
        pqxx::connection c(url);
        for (const auto& s : sql) {
          pqxx::nontransaction t(c);
          t.exec(s);
        }
      });
      pqxx::connection c(admin);
      pqxx::nontransaction t(c);
      t.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    } else {
      fmt::print("postgresql: skipped (set GPUPLAN_BENCH_PG_URL or run under scripts/with-test-postgres.sh)\n");
    }
  }
}
