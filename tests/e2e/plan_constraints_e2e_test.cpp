// End-to-end (issue 7): the questions practitioners ask of `gpuplan plan` and `gpuplan estimate`,
// through the built binary (GPUPLAN_BINARY) on the bundled catalog (a fresh temporary --db):
// deadline and budget respected by every listed plan, exact GPU counts, pinned layouts kept,
// estimate == plan for the same cluster and layout, flagged cheap offers not first, collapsed
// regions, the Pareto front independent of the sort, infeasible deadlines explained, a
// reserved-only quote planned, output fitting COLUMNS, and one-line errors (exit 2) for bad input.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <tuple>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct RunResult {
  int exit_code = -1;
  std::string out;
};

class PlanConstraintsE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpuplan-e2e-constraints-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  /// Runs `gpuplan --db DB <args>`; stderr joined to stdout unless `separate_stderr`.
  static RunResult run(const std::string& args, const std::string& db = "offers.sqlite", const std::string& env = "") {
    const std::string cmd = env + " XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" +
                            (dir_ / db).string() + "' " + args + " 2>&1";
    RunResult r;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (!pipe) return r;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
    const int status = ::pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
  }
  static json run_json(const std::string& args, int expected_exit = 0, const std::string& db = "offers.sqlite") {
    RunResult r = run(args + " --json --today 2026-11-30", db);
    EXPECT_EQ(r.exit_code, expected_exit) << r.out.substr(0, 2000);
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
    return j;
  }
  static void expect_one_line_error(const std::string& args, const std::string& where) {
    RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    EXPECT_EQ(out.find('\n'), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(out.rfind("gpuplan: error: ", 0), 0u) << r.out;
    EXPECT_NE(out.find(where), std::string::npos) << r.out;
  }
  static fs::path dir_;
};
fs::path PlanConstraintsE2E::dir_;

const std::string kLora70 = "plan --model llama-3.1-70b --task lora --tokens 5e8 --limit 100000";
const std::string kFull70 = "plan --model llama-3.1-70b --task full --tokens 1e9 --limit 100000";

TEST_F(PlanConstraintsE2E, DeadlineRespectedCheapestFirst) {
  json j = run_json(kLora70 + " --deadline 12h");
  ASSERT_GT(j["plans"].size(), 0u);
  EXPECT_EQ(j["sort"], "cost");
  EXPECT_DOUBLE_EQ(j["deadline_seconds"].get<double>(), 12 * 3600.0);
  for (const json& p : j["plans"]) EXPECT_LE(p["time_seconds"].get<double>(), 12 * 3600.0) << p["offer_id"];
  // The recommended plan is the cheapest plan of its price-quality tier (the best tier listed), up to
  // the documented cost tie (docs/planner.md "Cost ties": totals within 1% of the cheapest tie, the
  // fastest wins: on the bundled catalog 8 × B200 at $300.60 goes ahead of the slower 4 × B200 at
  // $300.12, 0.16% cheaper, since the B200's driver-reported memory lets the 8-GPU plan fit better).
  const json& rec = j["plans"][0];
  EXPECT_TRUE(rec["recommended"].get<bool>());
  for (const json& p : j["plans"]) {
    if (p["demotion_tier"] == rec["demotion_tier"]) {
      EXPECT_GE(p["total_usd"].get<double>() * 1.01, rec["total_usd"].get<double>());
    }
  }
}

TEST_F(PlanConstraintsE2E, BudgetRespectedFastestFirst) {
  json j = run_json(kLora70 + " --budget 300 --include-flagged");
  ASSERT_GT(j["plans"].size(), 1u);
  EXPECT_EQ(j["sort"], "time");
  for (const json& p : j["plans"]) EXPECT_LE(p["total_usd"].get<double>(), 300.0) << p["offer_id"];
  // Fastest first; a plan within 2% of the fastest's time but cheaper would have been first.
  const json& first = j["plans"][0];
  for (const json& p : j["plans"]) {
    EXPECT_GE(p["time_seconds"].get<double>(), first["time_seconds"].get<double>() / 1.02 * (1 - 1e-12));
    if (p["time_seconds"].get<double>() <= first["time_seconds"].get<double>()) {
      EXPECT_GE(p["total_usd"].get<double>(), first["total_usd"].get<double>());
    }
  }
}

TEST_F(PlanConstraintsE2E, DeadlineAndBudgetTogether) {
  json j = run_json(kLora70 + " --deadline 2d --budget 250");
  ASSERT_GT(j["plans"].size(), 0u);
  EXPECT_EQ(j["sort"], "cost");
  for (const json& p : j["plans"]) {
    EXPECT_LE(p["time_seconds"].get<double>(), 2 * 86400.0);
    EXPECT_LE(p["total_usd"].get<double>(), 250.0);
  }
}

TEST_F(PlanConstraintsE2E, InfeasibleDeadlineExplained) {
  // 14B dense pretraining on 10T tokens: 6 × 14e9 × 1e13 = 8.4e23 FLOP; even 2,048 H100 at
  // 1e15 FLOP/s peak would need 4.1e5 s = 4.7 days at 100% MFU, so one day cannot be met.
  const std::string args =
      "plan --params 14e9 --layers 40 --hidden 5120 --heads 40 --intermediate 13824 --task pretrain --tokens 1e13 "
      "--deadline 1d";
  json j = run_json(args, 1);
  EXPECT_TRUE(j["plans"].empty());
  ASSERT_FALSE(j["no_plan"].is_null());
  const std::string reason = j["no_plan"]["reason"];
  EXPECT_NE(reason.find("deadline"), std::string::npos) << reason;
  EXPECT_NE(reason.find("fastest plan"), std::string::npos) << reason;
  ASSERT_FALSE(j["no_plan"]["fastest"].is_null());
  EXPECT_GT(j["no_plan"]["fastest"]["time_seconds"].get<double>(), 86400.0);
  EXPECT_GE(j["no_plan"]["suggestions"].size(), 2u);
  RunResult text = run(args + " --today 2026-11-30");
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("the deadline of 24.0 h"), std::string::npos) << text.out;
}

TEST_F(PlanConstraintsE2E, DeadlineAndBudgetEachMeetableButNotBoth) {
  // Regression: with a deadline that some plans meet and a budget that other plans meet, the
  // reason named the overall cheapest plan as "the fastest plan within the deadline". The reason
  // must quote the cheapest plan within the deadline (over the budget) and the fastest plan within
  // the budget (over the deadline). On a fixture catalog (tests/data/import/deadline-budget.csv,
  // invented prices: a dear 256-node H100 cluster and a cheap one of at most 4 nodes), so the
  // witness pair does not depend on the bundled prices; the expected plans are read from the
  // unconstrained listing of the same catalog.
  const std::string db = "deadline-budget.sqlite";
  RunResult imp = run("import '" + std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/import/deadline-budget.csv'", db);
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  const std::string base =
      "plan --params 14e9 --layers 40 --hidden 5120 --heads 40 --intermediate 13824 --task pretrain --tokens 1e13 "
      "'provider=examplecloud'";
  const double deadline_s = 30 * 86400.0, budget_usd = 2e6;
  json all = run_json(base + " --limit 100000 --all", 0, db);  // --all: the slow plans too
  ASSERT_GT(all["plans"].size(), 2u);
  const json* cheapest_in_deadline = nullptr;
  const json* fastest_in_budget = nullptr;
  for (const json& p : all["plans"]) {
    const double t = p["time_seconds"].get<double>(), c = p["total_usd"].get<double>();
    ASSERT_FALSE(t <= deadline_s && c <= budget_usd) << "the fixture must not meet both: " << p["offer_id"];
    if (t <= deadline_s && (!cheapest_in_deadline || c < (*cheapest_in_deadline)["total_usd"].get<double>()))
      cheapest_in_deadline = &p;
    if (c <= budget_usd && (!fastest_in_budget || t < (*fastest_in_budget)["time_seconds"].get<double>()))
      fastest_in_budget = &p;
  }
  ASSERT_NE(cheapest_in_deadline, nullptr) << "some plan must meet the deadline alone";
  ASSERT_NE(fastest_in_budget, nullptr) << "some plan must meet the budget alone";

  json j = run_json(base + " --deadline 30d --budget 2e6", 1, db);
  EXPECT_TRUE(j["plans"].empty());
  ASSERT_FALSE(j["no_plan"].is_null());
  const std::string reason = j["no_plan"]["reason"];
  auto named = [](const json& p) {
    return "(" + p["provider"].get<std::string>() + " " + p["instance_type"].get<std::string>() + " \u00d7 " +
           std::to_string(p["instances"].get<int>()) + ")";
  };
  const std::string want_cost = "the cheapest plan within the deadline " + named(*cheapest_in_deadline) + " costs $" +
                                std::to_string(std::llround((*cheapest_in_deadline)["total_usd"].get<double>()));
  EXPECT_NE(reason.find(want_cost), std::string::npos) << want_cost << "\n" << reason;
  char days[32];
  std::snprintf(days, sizeof days, "%.1f days", (*fastest_in_budget)["time_seconds"].get<double>() / 86400);
  const std::string want_time = "the fastest plan within the budget " + named(*fastest_in_budget) + " takes " + days;
  EXPECT_NE(reason.find(want_time), std::string::npos) << want_time << "\n" << reason;
}

TEST_F(PlanConstraintsE2E, NoMonthsLongRecommendationWhenFasterExists) {
  // Issue 7: the 14B / 10T-token pretraining came back as one node for nine years. The
  // recommended plan (row 1) must be the fastest when nothing finishes within 30 days.
  json j = run_json(
      "plan --params 14e9 --layers 40 --hidden 5120 --heads 40 --intermediate 13824 --task pretrain --tokens 1e13 "
      "--limit 100000");
  ASSERT_GT(j["plans"].size(), 1u);
  const json& first = j["plans"][0];
  EXPECT_TRUE(first["recommended"].get<bool>());
  EXPECT_GT(first["instances"].get<int>(), 1);
  double fastest = 1e300;
  for (const json& p : j["plans"]) {
    if (p["demotion_tier"] == first["demotion_tier"]) fastest = std::min(fastest, p["time_seconds"].get<double>());
  }
  EXPECT_LE(first["time_seconds"].get<double>(), fastest * 1.02);
  EXPECT_NE(j["recommendation_rule"].get<std::string>().find("30 days"), std::string::npos);
}

TEST_F(PlanConstraintsE2E, ExactGpuCountAndPinnedLayout) {
  json j = run_json(kFull70 + " --gpus 16 --tp 4 --pp 2 --zero 1 --micro-batch 1 --recompute full");
  ASSERT_GT(j["plans"].size(), 0u);
  for (const json& p : j["plans"]) {
    EXPECT_EQ(p["gpus_total"].get<int>(), 16) << p["offer_id"];
    EXPECT_EQ(p["gpus_per_instance"].get<int>() * p["instances"].get<int>(), 16);
    const json& l = p["layout"];
    EXPECT_EQ(l["tp"], 4);
    EXPECT_EQ(l["pp"], 2);
    EXPECT_EQ(l["dp"], 2);  // 16 / (4 × 2)
    EXPECT_EQ(l["zero_stage"], 1);
    EXPECT_EQ(l["micro_batch"], 1);
    EXPECT_EQ(l["recompute"], "full");
  }
}

TEST_F(PlanConstraintsE2E, ExactNodesNotPowerOfTwo) {
  json j = run_json(kFull70 + " --nodes 3 'gpus=8'");
  ASSERT_GT(j["plans"].size(), 0u);
  for (const json& p : j["plans"]) EXPECT_EQ(p["instances"].get<int>(), 3) << p["offer_id"];
}

TEST_F(PlanConstraintsE2E, EstimateEqualsPlan) {
  json j = run_json(kFull70 + " --nodes 2 --tp 8 --pp 2 --zero 1 --micro-batch 1 --recompute selective 'gpus=8'");
  ASSERT_GT(j["plans"].size(), 0u);
  const json& p = j["plans"][0];
  const json& c = p["cluster"];
  std::ostringstream args;
  args.precision(17);
  args << "estimate --model llama-3.1-70b --task full --tokens 1e9 --gpu '" << p["gpu_name"].get<std::string>()
       << "' --gpus " << p["gpus_total"].get<int>() << " --gpus-per-node " << c["gpus_per_node"].get<int>()
       << " --link " << (c["intra_node_nvlink"].get<bool>() ? "nvlink" : "pcie") << " --intra-node-gb-per-s "
       << c["intra_node_bytes_per_s"].get<double>() / 1e9 << " --inter-node-gbit-per-s "
       << c["inter_node_bytes_per_s"].get<double>() * 8 / 1e9
       << " --tp 8 --pp 2 --zero 1 --micro-batch 1 --recompute selective --json";
  RunResult r = run(args.str());
  ASSERT_EQ(r.exit_code, 0) << args.str() << "\n" << r.out;
  json e = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(e.is_discarded()) << r.out;
  const json& est = e["estimate"];
  auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); };
  EXPECT_TRUE(near(est["step"]["step_seconds"].get<double>(), p["step"]["step_seconds"].get<double>()))
      << est["step"] << "\n" << p["step"];
  EXPECT_TRUE(near(est["work_seconds"].get<double>(), p["work_seconds"].get<double>()));
  EXPECT_TRUE(near(est["goodput"]["wall_seconds"].get<double>(), p["goodput"]["wall_seconds"].get<double>()));
  EXPECT_TRUE(near(est["step"]["mfu"].get<double>(), p["step"]["mfu"].get<double>()));
  EXPECT_EQ(est["layout"], p["layout"]);
  EXPECT_EQ(est["global_batch_seqs"], p["global_batch_seqs"]);
}

TEST_F(PlanConstraintsE2E, EstimateMfuOverrideAndGoodputTerms) {
  // --mfu 0.5: step = model FLOP / (GPUs × peak × 0.5); the JSON's own figures must satisfy it.
  RunResult r = run(
      "estimate --model llama-3.1-8b --task full --tokens 1e9 --gpu 'H100 SXM' --gpus 8 --mfu 0.5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  json e = json::parse(r.out)["estimate"];
  const json& s = e["step"];
  EXPECT_NEAR(s["step_seconds"].get<double>(),
              s["model_flop_per_step"].get<double>() / (8 * s["peak_flops_per_s"].get<double>() * 0.5),
              1e-9 * s["step_seconds"].get<double>());
  EXPECT_DOUBLE_EQ(s["mfu"].get<double>(), 0.5);
  // Goodput: its own term, wall = work + overheads, goodput = work / wall.
  const json& g = e["goodput"];
  EXPECT_NEAR(g["wall_seconds"].get<double>(), e["work_seconds"].get<double>() + g["overhead_seconds"].get<double>(),
              1e-9 * g["wall_seconds"].get<double>());
  EXPECT_LT(g["goodput"].get<double>(), 1.0);
  // The time to finish is the default 10-minute start-up (--startup-minutes) + the goodput wall time.
  EXPECT_DOUBLE_EQ(e["cost"]["startup_seconds"].get<double>(), 600.0);
  EXPECT_NEAR(e["gpu_hours"].get<double>(), (600.0 + g["wall_seconds"].get<double>()) * 8 / 3600,
              1e-9 * e["gpu_hours"].get<double>());
}

TEST_F(PlanConstraintsE2E, FlaggedCheapOfferNotFirstByDefault) {
  // On-demand prices only (--no-spot): the below_market_index rule judges on-demand prices
  // (spot is meant to be cheap). With AWS Spot Advisor interruption rates bundled, spot plans
  // are planned, and the cheapest 70B LoRA plan overall is an undated AWS spot p5en.48xlarge
  // (SkyPilot's $6.836/h in eu-south-2, 10% of on-demand): unflagged, so not this test's case.
  const std::string od = kLora70 + " --no-spot";
  json all = run_json(od + " --sort cost --include-flagged");
  ASSERT_GT(all["plans"].size(), 0u);
  auto flagged = [](const json& p) {
    for (const json& w : p["warnings"]) {
      if (w["code"] == "offer_flagged") return true;
    }
    return false;
  };
  // In the bundled catalog the cheapest on-demand 70B LoRA plan is priced below the market index
  // (flagged: dataoorts' $0.69/GPU-h H100).
  ASSERT_TRUE(flagged(all["plans"][0])) << all["plans"][0]["offer_id"];
  // By default (on-demand only, and with spot plans too) no flagged plan comes first or before an
  // unflagged one, and undated prices are never ranked as fresh.
  for (const std::string& args : {od, kLora70}) {
    json def = run_json(args + " --sort cost");
    ASSERT_GT(def["plans"].size(), 0u) << args;
    EXPECT_FALSE(flagged(def["plans"][0])) << args << ": " << def["plans"][0]["offer_id"];
    bool seen_flagged = false;
    for (const json& p : def["plans"]) {
      if (flagged(p)) {
        seen_flagged = true;
      } else {
        EXPECT_FALSE(seen_flagged) << args << ": unflagged plan after a flagged one: " << p["offer_id"];
      }
    }
    for (const json& p : def["plans"]) {
      if (p["price_source"]["observed_at"] == "undated") {
        EXPECT_FALSE(p["demoted_reason"].is_null()) << p["offer_id"];  // never ranked as fresh
        EXPECT_GE(p["demotion_tier"].get<int>(), 1);
      }
    }
  }
}

TEST_F(PlanConstraintsE2E, RegionsCollapsed) {
  json j = run_json(kLora70);
  std::set<std::tuple<std::string, std::string, int, std::string, std::string, double, double>> seen;
  bool any_multi_region = false;
  for (const json& p : j["plans"]) {
    any_multi_region |= p["regions"].size() > 1;
    auto key = std::make_tuple(p["provider"].get<std::string>(), p["instance_type"].get<std::string>(),
                               p["instances"].get<int>(), p["layout"].dump(), p["cost"]["price_kind"].get<std::string>(),
                               p["cost"]["usd_per_hour"].get<double>(), p["total_usd"].get<double>());
    EXPECT_TRUE(seen.insert(key).second) << "two rows differ only by region: " << p["offer_id"];
  }
  EXPECT_TRUE(any_multi_region);
}

TEST_F(PlanConstraintsE2E, ParetoFrontIndependentOfSort) {
  auto front = [&](const std::string& sort) {
    json j = run_json(kFull70 + " --pareto --sort " + sort);
    std::set<std::tuple<std::string, int, double>> out;
    for (const json& p : j["plans"]) {
      // --pareto also keeps the recommended plan (its sort's pick), on the front or not.
      if (!p["on_pareto_front"].get<bool>()) {
        EXPECT_TRUE(p["recommended"].get<bool>());
        continue;
      }
      out.emplace(p["offer_id"].get<std::string>(), p["instances"].get<int>(), p["total_usd"].get<double>());
    }
    return out;
  };
  const auto by_cost = front("cost");
  EXPECT_GT(by_cost.size(), 2u);
  EXPECT_EQ(by_cost, front("time"));
  EXPECT_EQ(by_cost, front("recommended"));
}

TEST_F(PlanConstraintsE2E, ReservedOnlyQuotePlanned) {
  // The quote example of docs/import-format.md: priced only as reserved-1y.
  const fs::path csv = dir_ / "quote.csv";
  std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,"
                        "interconnect,network,network_gbps,max_nodes,billing_granularity_seconds,billing_minimum_seconds\n"
                        "examplecloud,hgx-h100-8x-reserved,us-west,H100 SXM,8,reserved-1y,2.10,2026-11-02,sales quote "
                        "#1234 (email),nvlink,infiniband,3200,32,3600,2592000\n";
  RunResult imp = run("import '" + csv.string() + "'", "quote.sqlite");
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  json j = run_json(kLora70 + " 'provider=examplecloud'", 0, "quote.sqlite");
  ASSERT_GT(j["plans"].size(), 0u);
  EXPECT_EQ(j["plans"][0]["cost"]["price_kind"], "reserved-1y");
  // $2.10/GPU-h × 8 GPUs = $16.80/h per node.
  EXPECT_NEAR(j["plans"][0]["cost"]["usd_per_hour"].get<double>(), 16.8, 1e-9);
}

// trial52 #2: a quote with a 1-day billing minimum was plan #1 for a short job at many times its
// run's cost, and no warning named the minimum. An 8B LoRA on 1e8 tokens runs well under 12 h on
// 8 × H100: the 86,400 s minimum bills at least twice the run, and billing_minimum says so with
// the ratio billed ÷ run and the compute dollars of time not used (hand check from the plan's own
// cost figures: compute × (1 − run / billed)).
TEST_F(PlanConstraintsE2E, ABillingMinimumThatDwarfsTheRunIsSaid) {
  const fs::path csv = dir_ / "minimum.csv";
  std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,"
                        "billing_granularity_seconds,billing_minimum_seconds\n"
                        "trialco,h100x8-quote,eu-west,H100 SXM,8,on-demand,2.10,2026-11-28,sales quote #42,3600,86400\n";
  RunResult imp = run("import '" + csv.string() + "'", "minimum.sqlite");
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  json j = run_json("plan --model llama-3.1-8b --task lora --tokens 1e8 'provider=trialco'", 0, "minimum.sqlite");
  ASSERT_GT(j["plans"].size(), 0u);
  const json& p = j["plans"][0];
  const double run_s = p["cost"]["run_seconds"].get<double>(), billed = p["cost"]["billed_seconds"].get<double>();
  ASSERT_EQ(billed, 86400.0) << p["cost"].dump();
  ASSERT_LE(2 * run_s, billed);
  const json* w = nullptr;
  for (const auto& x : p["warnings"])
    if (x["code"] == "billing_minimum") w = &x;
  ASSERT_NE(w, nullptr) << p["warnings"].dump();
  EXPECT_EQ((*w)["values"]["minimum_hours"], "24.0");
  EXPECT_EQ((*w)["values"]["ratio"], fmt::format("{:.1f}", billed / run_s));
  EXPECT_EQ((*w)["values"]["unused_usd"],
            fmt::format("{:.2f}", p["cost"]["compute_usd"].get<double>() * (1 - run_s / billed)));
}

// trial52 #4/#5: the storage and egress lines named no source ("provider storage price"), the
// dataset's size had no formula, an image job stored no weights and a generation job's 0 B of egress
// read "the final weights". Each now states its inputs: the dataset as tokens × bytes per token id
// (uint32 ids for Llama 3's 128,256-token vocabulary: 1e8 tokens = 0.4 GB), the served weights as
// params × bits / 8, a generation job's egress as not counted, and the billing term's address.
TEST_F(PlanConstraintsE2E, StorageAndEgressLinesStateTheirInputs) {
  auto line = [](const json& explain, const std::string& term) -> const json* {
    for (const auto& l : explain)
      if (l["term"] == term) return &l;
    return nullptr;
  };
  const fs::path csv = dir_ / "terms.csv";
  std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,"
                        "storage_usd_per_gb_month\n"
                        "termsco,h100x1,eu-west,H100 SXM,1,on-demand,2.50,2026-11-28,sales quote #7,0.10\n";
  ASSERT_EQ(run("import '" + csv.string() + "'", "terms.sqlite").exit_code, 0);
  const json train = run_json("plan --model llama-3.1-8b --task lora --tokens 1e8 --explain 1 'provider=termsco'", 0, "terms.sqlite");
  const json* storage = line(train["explain"], "storage_bytes");
  ASSERT_NE(storage, nullptr) << train["explain"].dump().substr(0, 500);
  EXPECT_NE((*storage)["formula"].get<std::string>().find("dataset 0.4 GB (1e+08 tokens × 4 B per token id"), std::string::npos)
      << (*storage)["formula"];
  // A LoRA job downloads its adapter, and says so (trial53: "the final weights: 8.03e+09 params × 2 B"
  // beside the adapter's 84 MB).
  const json* lora_egress = line(train["explain"], "egress_bytes");
  ASSERT_NE(lora_egress, nullptr);
  EXPECT_NE((*lora_egress)["formula"].get<std::string>().find(
                fmt::format("the LoRA adapter: {:.4g} params × 2 B", (*lora_egress)["value"].get<double>() / 2)),
            std::string::npos)
      << (*lora_egress)["formula"];
  const json serve = run_json("plan --model llama-3.1-8b --task serve --requests 1000 --explain 1 'provider=termsco'", 0, "terms.sqlite");
  const json* weights = line(serve["explain"], "storage_bytes");
  ASSERT_NE(weights, nullptr);
  EXPECT_NEAR((*weights)["value"].get<double>(), 8.03e9 * 2, 0.01e9 * 2);  // Llama 3.1 8B, 16-bit
  EXPECT_NE((*weights)["formula"].get<std::string>().find("the served weights:"), std::string::npos);
  const json* egress = line(serve["explain"], "egress_bytes");
  ASSERT_NE(egress, nullptr);
  EXPECT_EQ((*egress)["formula"], "generated outputs not counted (--egress-gb adds them)");
  const json images = run_json("plan --config '" + std::string(GPUPLAN_SOURCE_DIR) +
                                   "/data/models/black-forest-labs__FLUX.1-schnell__transformer/config.json' --task images "
                                   "--images 1000 --explain 1 'provider=termsco'",
                               0, "terms.sqlite");
  const json* image_weights = line(images["explain"], "storage_bytes");
  ASSERT_NE(image_weights, nullptr);
  EXPECT_GT((*image_weights)["value"].get<double>(), 20e9);  // FLUX.1's ~12B-parameter transformer, 16-bit
}

TEST_F(PlanConstraintsE2E, TableFitsColumns) {
  for (const char* cols : {"120", "100"}) {
    RunResult r = run(kLora70.substr(0, kLora70.find(" --limit")) + " --today 2026-11-30", "offers.sqlite",
                      std::string("COLUMNS=") + cols);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
      std::size_t w = 0;
      for (unsigned char ch : line) w += (ch & 0xC0) != 0x80;
      EXPECT_LE(w, static_cast<std::size_t>(std::stoi(cols))) << line;
    }
  }
}

TEST_F(PlanConstraintsE2E, BadInputOneLineExit2) {
  const std::string base = "plan --model llama-3.1-70b --task full --tokens 1e9";
  expect_one_line_error(base + " --deadline 0", "--deadline");
  expect_one_line_error(base + " --deadline=-5h", "--deadline");
  expect_one_line_error(base + " --deadline soon", "--deadline");
  expect_one_line_error(base + " --budget=-100", "--budget");
  expect_one_line_error(base + " --gpus 12 'gpus=8'", "--gpus");
  expect_one_line_error(base + " --gpus 16 --tp 4 --pp 2 --dp 4", "--gpus");
  // The error quotes the largest node among the offers (8 GPUs here), not an arbitrary one
  // (a new-user trial saw "e.g. 1" for `--tp 16 gpu~h100`, where H100 nodes hold 8).
  expect_one_line_error(base + " --tp 16 'gpus=8'", "the largest has 8");
  expect_one_line_error(base + " --tp 16 'gpu~h100'", "the largest has 8");
  expect_one_line_error(base + " --cp 2", "--cp");
  expect_one_line_error("estimate --model llama-3.1-70b --task full --tokens 1e9 --gpu 'H100 SXM' --gpus 12", "--gpus");
  expect_one_line_error("estimate --model llama-3.1-70b --task full --tokens 1e9 --gpu 'H100 SXM' --gpus 8 --tp 16", "--tp");
  // A multi-node estimate without the network names the flag that exists (it said
  // --inter-node-gbps, which the CLI rejects as an unknown argument).
  expect_one_line_error("estimate --model llama-3.1-70b --task full --tokens 1e9 --gpu 'H100 SXM' --gpus 16 --tp 8 --dp 2",
                        "--inter-node-gbit-per-s");
}

}  // namespace
