// End-to-end regression tests for the defects a new-user trial of `gpuplan plan` found on the
// bundled catalog (issue 7, second trial), through the built binary (GPUPLAN_BINARY):
//   1. a flagged (below_market_index) undated $0.69/GPU-h H100 was recommended under --budget,
//      and the "what would help" numbers were computed from it;
//   2. the legend called a plan "clean" while it warned the price was stale (30 vs 90 days);
//   3. demoted (undated) rows lost their mark when the table dropped the price-date column;
//   4. --pareto: the recommended plan lacked its * (an undated plan dominated it on the front);
//   5. --gpus 16: the top 10 were one Azure instance in 10 regions at different regional prices;
//   6. --sort time bought 64 nodes over 32 for +92% cost and -4% time;
//   7. --explain: exposed_comm_seconds must reproduce from its own formula and the step terms
//      must add up to the step time.
// Dates: every run passes --today 2026-12-01; the bundled catalog's dated prices are from
// 2026-10-10 (52 days old) and 2026-05-24 (191 days old), the rest undated (data/offers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;
using nlohmann::json;

class PlanTrialE2E : public BinaryE2E<PlanTrialE2E> {
 public:
  static constexpr const char* kName = "plan-trial";
};

const std::string kToday = " --today 2026-12-01";
const std::string kLora70 = "plan --model llama-3.1-70b --task lora --tokens 5e8" + kToday;
const std::string kLora8 = "plan --model llama-3.1-8b --task lora --tokens 5e9" + kToday;

bool has_warning(const json& j, const std::string& code) {
  for (const auto& w : j["warnings"]) {
    if (w["code"] == code) return true;
  }
  return false;
}
std::string warning_text(const json& j, const std::string& code) {
  for (const auto& w : j["warnings"]) {
    if (w["code"] == code) return w["message"].get<std::string>();
  }
  return "";
}
bool flagged(const json& p) {
  for (const auto& w : p["warnings"]) {
    if (w["code"] == "offer_flagged") return true;
  }
  return false;
}

// ---- 1. flagged / undated prices are not recommended while a dated, unflagged plan exists ----

TEST_F(PlanTrialE2E, FlaggedCheapPlanNotRecommendedUnderBudget) {
  // 8B LoRA on 5e9 tokens under $100: only dataoorts' H100s at $0.69/GPU-h fit the budget, and
  // that price is flagged below_market_index (< 50% of the lowest H100 index, $2.50). Plans on
  // dated, unflagged prices exist (they cost more), so nothing may be recommended, and the
  // warning must quote the cheapest of THOSE, never a flagged one. (Since FSDL rows carry their
  // publication date, the cheapest of those can be another dataoorts offer, e.g. its $0.88 GH200
  // published 2024-05-20, which no rule flags: the check is on the flagged offers themselves.)
  const json j = run_json(kLora8 + " --budget 100 --limit 50", 0);
  ASSERT_FALSE(j["plans"].empty());
  for (const auto& p : j["plans"]) {
    EXPECT_FALSE(p["recommended"].get<bool>()) << p["offer_id"];
    EXPECT_GE(p["demotion_tier"].get<int>(), 2) << p["offer_id"];  // undated or flagged only
    EXPECT_LE(p["total_usd"].get<double>(), 100.0);
  }
  ASSERT_TRUE(has_warning(j, "no_clean_plan")) << j["warnings"].dump();
  const std::string w = warning_text(j, "no_clean_plan");
  // The flagged plans under this budget, named as the warning names a plan: "(provider instance × n)".
  const json with_flagged = run_json(kLora8 + " --budget 100 --limit 50 --include-flagged", 0);
  std::vector<std::string> flagged_names;
  for (const auto& p : with_flagged["plans"]) {
    if (flagged(p)) flagged_names.push_back("(" + p["provider"].get<std::string>() + " " + p["instance_type"].get<std::string>() + " ");
  }
  ASSERT_FALSE(flagged_names.empty()) << "the flagged $0.69 H100 plans must fit the budget";
  for (const std::string& name : flagged_names) EXPECT_EQ(w.find(name), std::string::npos) << name << " in " << w;
  // The quoted cost is above the budget (else that plan would have been listed and recommended).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(w, m, std::regex(R"(costs \$([0-9]+))"))) << w;
  EXPECT_GT(std::stod(m[1]), 100.0) << w;
  // The cheapest-GPU-hour comparison is not made against a flagged price either.
  const std::string gpu_hour = warning_text(j, "cheapest_gpu_hour_not_cheapest_job");
  for (const auto& p : with_flagged["plans"]) {
    if (flagged(p)) {
      EXPECT_EQ(gpu_hour.find(p["instance_type"].get<std::string>()), std::string::npos) << gpu_hour;
    }
  }
}

TEST_F(PlanTrialE2E, NoPlanSuggestionsQuoteDatedUnflaggedPlans) {
  // 70B LoRA on 1e9 tokens under $100: nothing fits. The flagged dataoorts 8×H100 ($0.69/GPU-h,
  // ~$165) was quoted as "a budget of at least $165". The quote must come from a plan on a
  // dated, unflagged price: no_plan.cheapest is not flagged, not undated, and the suggestion
  // quotes its total.
  const json j = run_json("plan --model llama-3.1-70b --task lora --tokens 1e9 --budget 100" + kToday, 1);
  ASSERT_TRUE(j["no_plan"].is_object()) << j.dump().substr(0, 500);
  const json& np = j["no_plan"];
  ASSERT_TRUE(np["cheapest"].is_object());
  EXPECT_LE(np["cheapest"]["demotion_tier"].get<int>(), 1) << np["cheapest"]["offer_id"];
  EXPECT_FALSE(flagged(np["cheapest"]));
  EXPECT_NE(np["cheapest"]["provider"], "dataoorts");
  // "a budget of at least $X" quotes that plan's total, rounded up to whole dollars (applied as
  // --budget X, it lists that plan: plan_advice_e2e_test).
  const std::string want =
      "a budget of at least $" + std::to_string(static_cast<long long>(std::ceil(np["cheapest"]["total_usd"].get<double>())));
  bool quoted = false;
  for (const auto& s : np["suggestions"]) quoted |= s.get<std::string>().rfind(want, 0) == 0;
  EXPECT_TRUE(quoted) << want << " in " << np["suggestions"].dump() << "; cheapest: " << np["cheapest"]["offer_id"]
                      << " $" << np["cheapest"]["total_usd"] << " " << np["values"].dump();
  EXPECT_EQ(np["reason"].get<std::string>().find("dataoorts"), std::string::npos) << np["reason"];
}

TEST_F(PlanTrialE2E, IncludeFlaggedRanksTheFlaggedPriceAgain) {
  // The opt-in still works: with --include-flagged the $0.69 H100 plan is recommended under $100.
  const json j = run_json(kLora8 + " --budget 100 --include-flagged", 0);
  ASSERT_FALSE(j["plans"].empty());
  EXPECT_TRUE(j["plans"][0]["recommended"].get<bool>());
  EXPECT_FALSE(has_warning(j, "no_clean_plan"));
}

// ---- 2. one definition of stale: what is warned stale is marked and ranked as stale ----------

TEST_F(PlanTrialE2E, StaleWarningAndRankingAgree) {
  // Rule (docs/planner.md "Price evidence"): a price observed more than --max-price-age (30
  // days) ago is stale — warned AND tier 1; dated within the limit is tier 0. 2026-10-10 is 52
  // days before 2026-12-01, so every such plan is tier 1 with a stale_price warning; undated is 2.
  const json j = run_json(kLora70 + " --limit 30", 0);
  ASSERT_FALSE(j["plans"].empty());
  for (const auto& p : j["plans"]) {
    bool stale_warned = false;
    for (const auto& w : p["warnings"]) stale_warned |= w["code"] == "stale_price";
    const std::string date = p["price_source"]["observed_at"];
    if (flagged(p)) {
      EXPECT_EQ(p["demotion_tier"], 3) << p["offer_id"];
    } else if (date == "undated") {
      EXPECT_EQ(p["demotion_tier"], 2) << p["offer_id"];
    } else {
      EXPECT_EQ(stale_warned, p["demotion_tier"] == 1) << p["offer_id"] << " " << date;
    }
    if (stale_warned) {
      EXPECT_FALSE(p["demoted_reason"].is_null()) << p["offer_id"];
    }
  }
  // With --max-price-age 60d the 52-day-old prices are clean: no stale warning, tier 0.
  const json k = run_json(kLora70 + " --max-price-age 60d --limit 30", 0);
  bool any_clean = false;
  for (const auto& p : k["plans"]) {
    if (p["price_source"]["observed_at"].get<std::string>().rfind("2026-10-10", 0) == 0) {
      EXPECT_EQ(p["demotion_tier"], 0) << p["offer_id"];
      for (const auto& w : p["warnings"]) EXPECT_NE(w["code"], "stale_price") << p["offer_id"];
      any_clean = true;
    }
  }
  EXPECT_TRUE(any_clean);
  // The legend says the same limit the warning uses.
  RunResult t = run(kLora70);
  // The footer is wrapped at the terminal's width, so a phrase may straddle a line break when
  // the footer's other sentences change length (plan14: the rule and order sentences): compare
  // on the unwrapped text (continuation lines carry no indent).
  std::replace(t.out.begin(), t.out.end(), '\n', ' ');
  EXPECT_NE(t.out.find("~ stale (observed more than 30 days ago"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("older than 30 days"), std::string::npos) << t.out;
  // The old 90-day demotion limit is gone. (Only as a limit: a bare "90" also appears in counts such as
  // "36590 layouts", which move with the bundled catalog.)
  EXPECT_EQ(t.out.find("90 days"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("90d"), std::string::npos) << t.out;
}

// ---- 3. every demoted row carries its mark, whatever the terminal width ---------------------

TEST_F(PlanTrialE2E, DemotedRowsMarkedInNarrowTables) {
  // --deadline 2d --budget 400 on 70B LoRA at 120 columns dropped the price-date column, so the
  // undated rows looked clean. The mark is now in the "#" cell (~ stale, ? undated, ! flagged),
  // which no width drops: each row's mark must match its JSON demotion_tier.
  const std::string args = kLora70 + " --deadline 2d --budget 400";
  const json j = run_json(args, 0);
  // COLUMNS is read from the environment: run the binary with it set in the shell command.
  for (const char* cols : {"120", "80"}) {
    const std::string cmd = std::string("env COLUMNS=") + cols + " '" + GPUPLAN_BINARY + "' --db '" +
                            (dir_ / "offers.sqlite").string() + "' " + args + " 2>&1";
    std::string out;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    ::pclose(pipe);
    std::size_t row = 0;
    std::istringstream lines(out);
    std::string line;
    const std::regex cell(R"(^\s*([0-9]+)(\*?)(R?)([~?!]?)\s{2})");
    while (std::getline(lines, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, cell)) continue;
      const std::size_t i = std::stoul(m[1]) - 1;
      ASSERT_LT(i, j["plans"].size()) << line;
      const int tier = j["plans"][i]["demotion_tier"];
      const std::string want = tier == 1 ? "~" : tier == 2 ? "?" : tier == 3 ? "!" : "";
      EXPECT_EQ(m[4].str(), want) << cols << " columns: " << line;
      EXPECT_EQ(m[3].str() == "R", j["plans"][i]["recommended"].get<bool>()) << line;
      ++row;
    }
    EXPECT_EQ(row, std::min<std::size_t>(10, j["plans"].size())) << out;
  }
}

// ---- 4. --pareto: the recommended plan is on the front it is recommended from ---------------

TEST_F(PlanTrialE2E, ParetoMarksTheRecommendedPlan) {
  // The rule picks the recommended plan from a Pareto front (docs/planner.md), so it must carry
  // the * mark; before, the undated primeintellect 8×B200 at $192 (same 5.4 h) dominated the
  // stale-dated lambda 8×B200 at $292 and took the mark away.
  for (const std::string extra : {" --pareto", "", " --sort time --pareto"}) {
    const json j = run_json(kLora70 + extra, 0);
    bool seen = false;
    for (const auto& p : j["plans"]) {
      if (!p["recommended"].get<bool>()) continue;
      seen = true;
      EXPECT_TRUE(p["on_pareto_front"].get<bool>()) << extra << " " << p["offer_id"];
    }
    EXPECT_TRUE(seen) << extra;
    // Every plan listed by --pareto is on the front.
    if (extra.find("--pareto") != std::string::npos) {
      for (const auto& p : j["plans"]) EXPECT_TRUE(p["on_pareto_front"].get<bool>()) << p["offer_id"];
    }
  }
}

// ---- 5. rows that differ only by region collapse, at any regional price ---------------------

TEST_F(PlanTrialE2E, RegionalPricesCollapseIntoOneRow) {
  // --gpus 16 on 70B LoRA: Azure lists Standard_ND96isr_MI300X_v5 in many regions at $48-$96/h;
  // the top 10 were that one instance ten times. Rule: one row per (provider, instance, nodes,
  // layout, price kind, time, price evidence), the cheapest region's, listing the others.
  const json j = run_json(kLora70 + " --gpus 16 --limit 100", 0);
  std::set<std::string> keys;
  for (const auto& p : j["plans"]) {
    const std::string key = p["provider"].get<std::string>() + "|" + p["instance_type"].get<std::string>() + "|" +
                            std::to_string(p["instances"].get<int>()) + "|" + p["layout"].dump() + "|" +
                            p["cost"]["price_kind"].get<std::string>() + "|" +
                            std::to_string(p["demotion_tier"].get<int>());
    EXPECT_TRUE(keys.insert(key).second) << "duplicate row " << key;
    EXPECT_LE(p["regions"].size(), 1 + p["same_plan_offer_ids"].size()) << p["offer_id"];  // zones share a region
  }
  const json& first = j["plans"][0];
  ASSERT_EQ(first["provider"], "azure");
  EXPECT_GE(first["regions"].size(), 10u);  // the regional price list is one row
  // The row is the cheapest region's: eastus2 at $48/h (data/offers: Azure retail prices).
  EXPECT_DOUBLE_EQ(first["cost"]["usd_per_hour"].get<double>(), 48.0);
}

// ---- 6. --sort time: a negligible speed-up never buys a large cost --------------------------

TEST_F(PlanTrialE2E, SortTimeSpeedupMustBeWorthItsCost) {
  // The rule (docs/planner.md "Time ranking"): a faster plan goes ahead of a cheaper one only if
  // each hour it saves costs at most 3× the cheaper plan's spend per hour. On 70B LoRA Azure
  // MI300X at 64 nodes takes ~4% less time than at 32 for ~92% more: (ΔC/ΔT) / (C/T) ≈ 0.92/0.04
  // = 23 > 3, so 32 nodes must rank first. Checked on the listed order: no plan is directly
  // preceded by a dearer plan whose speed-up over it fails the rule (within one price tier).
  // (This checked every pair until trial 7. The rule is not transitive — 2% ties chain — so no
  // order can satisfy it for every pair; demanding it of the plans below each one let a slow,
  // cheap plan stand above a faster one the rule puts first: 21.5 h / $1,480 above 59 min /
  // $4,108. The order now satisfies the rule for every adjacent pair, and a slower plan stands
  // above a faster one only when the rule puts it ahead: docs/planner.md, e2e SortTimeOrderE2E.)
  const json j = run_json(kLora70 + " --sort time --limit 20", 0);
  ASSERT_GE(j["plans"].size(), 2u);
  const auto& ps = j["plans"];
  for (std::size_t i = 0; i < ps.size(); ++i) {
    for (std::size_t k = i + 1; k < ps.size() && k == i + 1; ++k) {
      if (ps[i]["demotion_tier"] != ps[k]["demotion_tier"] || ps[i]["recommended"].get<bool>()) continue;
      const double ti = ps[i]["time_seconds"], ci = ps[i]["total_usd"];
      const double tk = ps[k]["time_seconds"], ck = ps[k]["total_usd"];
      if (!(ck < ci) || tk <= ti) continue;  // only a cheaper, slower plan below a dearer one
      const bool tie = tk - ti <= 0.02 * ti;
      const double ratio = (ci - ck) / (tk - ti) / (ck / tk);
      EXPECT_FALSE(tie) << "tied plans, dearer first: " << ps[i]["offer_id"] << " over " << ps[k]["offer_id"];
      EXPECT_LE(ratio, 3.0 * (1 + 1e-9)) << ps[i]["offer_id"] << " ×" << ps[i]["instances"] << " over "
                                         << ps[k]["offer_id"] << " ×" << ps[k]["instances"];
    }
  }
  // The 64-node plan the trial saw is not ahead of the 32-node one.
  int pos32 = -1, pos64 = -1;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (ps[i]["instance_type"] != "Standard_ND96isr_MI300X_v5") continue;
    if (ps[i]["instances"] == 32 && pos32 < 0) pos32 = static_cast<int>(i);
    if (ps[i]["instances"] == 64 && pos64 < 0) pos64 = static_cast<int>(i);
  }
  ASSERT_GE(pos32, 0);
  EXPECT_TRUE(pos64 < 0 || pos64 > pos32) << pos32 << " " << pos64;
  // The rule is stated with the plans, as the sort's rule (the R mark never depends on --sort:
  // recommendation_rule stays the front rule, plan_trial3_e2e_test).
  EXPECT_NE(j["sort_rule"].get<std::string>().find("each hour it saves costs at most 3×"), std::string::npos)
      << j["sort_rule"];
}

// ---- 7. --explain: the exposed communication is explained by its own arithmetic -------------

double seconds_of(const std::string& s) { return std::stod(s); }

TEST_F(PlanTrialE2E, ExplainExposedCommunicationAddsUp) {
  // The exposed_comm_seconds line said "DP x + ZeRO y left after overlapping 90% = z", which
  // reads as 10% of y being left while the model hides communication up to 90% of the compute it
  // overlaps (sizing/perf.hpp) and only the excess adds to the step. The line now shows the
  // arithmetic: "DP: ... = a s; ZeRO-3: m micro-batches × max(0, c − f × w ...) = b s; exposed =
  // a s + b s = z s". Checked: a + b = the value, b recomputed from m, c, f, w, and the step
  // terms add up to step_seconds (= the plan's JSON step_seconds). Two plans: 70B LoRA plan 1
  // (ZeRO-3 hidden, LoRA gradients not overlapped) and 8B full on 16 × p4de with ZeRO-3,
  // micro-batch 1 and 512-token sequences (the gathers exceed the compute: exposed > 0).
  const std::string num = R"(([0-9.]+(?:e[-+][0-9]+)?))";
  for (const std::string& args :
       {kLora70 + " --explain 1",
        "plan instance~p4de --model llama-3.1-8b --task full --tokens 1e9 --seq 512 --global-batch 4096 --nodes 16 "
        "--zero 3 --tp 1 --pp 1 --micro-batch 1 --explain 1" + kToday}) {
    const json j = run_json(args, 0);
    ASSERT_TRUE(j["explain"].is_array()) << args;
    std::map<std::string, json> line;
    for (const auto& l : j["explain"]) line[l["term"].get<std::string>()] = l;
    ASSERT_TRUE(line.count("step.exposed_comm_seconds")) << args;
    const double value = line["step.exposed_comm_seconds"]["value"];
    const std::string f = line["step.exposed_comm_seconds"]["formula"];
    std::smatch m;
    ASSERT_TRUE(std::regex_search(f, m, std::regex("exposed = " + num + " s \\+ " + num + " s = " + num + " s"))) << f;
    const double dp = seconds_of(m[1]), zero = seconds_of(m[2]), total = seconds_of(m[3]);
    EXPECT_NEAR(dp + zero, value, 1e-3 * value + 1e-9) << f;
    EXPECT_NEAR(total, value, 1e-3 * value + 1e-9) << f;
    // Both plans use ZeRO-3, so the ZeRO part has its arithmetic.
    ASSERT_TRUE(std::regex_search(f, m, std::regex("ZeRO-3: " + num + " micro-batches × max\\(0, " + num + " s − " + num +
                                                   " × " + num + " s compute per micro-batch\\) = " + num + " s")))
        << f;
    {
      const double md = seconds_of(m[1]), comm = seconds_of(m[2]), overlap = seconds_of(m[3]), window = seconds_of(m[4]);
      EXPECT_NEAR(md * std::max(0.0, comm - overlap * window), zero, 2e-3 * zero + 1e-9) << f;
      EXPECT_NEAR(seconds_of(m[5]), zero, 1e-3 * zero + 1e-9) << f;
    }
    double sum = 0;
    for (const char* t : {"compute_seconds", "tp_allreduce_seconds", "ep_alltoall_seconds", "pp_p2p_seconds",
                          "pp_bubble_seconds", "exposed_comm_seconds", "optimizer_seconds", "overhead_seconds"}) {
      ASSERT_TRUE(line.count(std::string("step.") + t)) << t;
      sum += line[std::string("step.") + t]["value"].get<double>();
    }
    const double step = line["step.step_seconds"]["value"];
    EXPECT_NEAR(sum, step, 1e-9 * step) << args;
    EXPECT_NEAR(step, j["plan"]["step"]["step_seconds"].get<double>(), 1e-9 * step) << args;
    EXPECT_NEAR(value, j["plan"]["step"]["exposed_comm_seconds"].get<double>(), 1e-12 + 1e-9 * value) << args;
  }
}

}  // namespace
