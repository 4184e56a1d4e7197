// End-to-end regression tests for the input edge cases left from issues 11, 7 and 10 (small11),
// through the built binary (GPUPLAN_BINARY) on the bundled catalog and, for the API, one
// `gpuplan serve` child on a loopback port. Each test names the exact input that was mishandled.
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "binary_e2e.hpp"
#include "serve_process.hpp"

namespace {

using gpuplan::e2e::RunResult;
using nlohmann::json;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class Small11E2E : public gpuplan::e2e::ServedBinaryE2E<Small11E2E> {
 public:
  static constexpr const char* kName = "small11";
  static httplib::Client client() {
    httplib::Client c("127.0.0.1", server().port);
    c.set_read_timeout(120, 0);
    return c;
  }
  static json post_plan(const std::string& body, int* status) {
    auto c = client();
    auto r = c.Post("/api/plan", body, "application/json");
    if (!r) {
      *status = -1;
      return json();
    }
    *status = r->status;
    return json::parse(r->body, nullptr, false);
  }
  static json get(const std::string& path, int* status) {
    auto c = client();
    auto r = c.Get(path);
    if (!r) {
      *status = -1;
      return json();
    }
    *status = r->status;
    return json::parse(r->body, nullptr, false);
  }
};

const std::string kLoraBody = R"("model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "today": "2026-12-02")";

// trial50 #8: two refusals had no message_code, so the French and Thai pages showed their English
// detail: --spot with another price kind, and an empty offer id.
TEST_F(Small11E2E, SpotWithAnotherPriceKindAndAnEmptyOfferIdAreCoded) {
  int status = 0;
  const json kinds = get("/api/offers?price_kind=reserved-1y&spot=true", &status);
  EXPECT_EQ(status, 400) << kinds.dump();
  EXPECT_EQ(kinds.value("message_code", ""), "both_given") << kinds.dump();
  EXPECT_EQ(kinds["values"].value("a_field", ""), "spot") << kinds.dump();
  EXPECT_EQ(kinds["values"].value("b_field", ""), "price_kind") << kinds.dump();
  const json empty = get("/api/offers/%20/history", &status);
  EXPECT_EQ(status, 400) << empty.dump();
  EXPECT_EQ(empty.value("message_code", ""), "value_empty") << empty.dump();
  EXPECT_EQ(empty["values"].value("a_field", ""), "offer_id") << empty.dump();
}

// #1: `stale_days` and `max_price_age` are one limit in two units; both in one request were
// accepted (the later silently won). Refused at /stale_days on POST /api/plan and GET
// /api/offers, as the CLI refuses --stale-days with --max-price-age (same words).
TEST_F(Small11E2E, StaleDaysWithMaxPriceAgeIsOneLimitGivenTwice) {
  int status = 0;
  const json plan = post_plan("{" + kLoraBody + R"(, "stale_days": 3, "max_price_age": "10d"})", &status);
  EXPECT_EQ(status, 400) << plan.dump();
  EXPECT_EQ(plan.value("field", ""), "/stale_days") << plan.dump();
  EXPECT_EQ(plan.value("message_code", ""), "both_given") << plan.dump();
  EXPECT_TRUE(contains(plan.value("message", ""), "stale_days and max_price_age")) << plan.dump();
  const json offers = get("/api/offers?stale_days=3&max_price_age=10d&limit=1", &status);
  EXPECT_EQ(status, 400) << offers.dump();
  EXPECT_EQ(offers.value("field", ""), "/stale_days") << offers.dump();
  EXPECT_EQ(offers.value("message_code", ""), "both_given") << offers.dump();
  // Each alone is still accepted, on both endpoints (30: above the default fresh limit of 7).
  EXPECT_EQ(get("/api/offers?stale_days=30&limit=1", &status).is_discarded(), false);
  EXPECT_EQ(status, 200);
  get("/api/offers?max_price_age=10d&limit=1", &status);
  EXPECT_EQ(status, 200);
  // The CLI, both commands: the alias named first, in either order, one line.
  for (const std::string args : {"offers --limit 1 --stale-days 3 --max-price-age 10d",
                                 "offers --limit 1 --max-price-age 10d --stale-days 3",
                                 "plan --model llama-3.1-8b --task lora --tokens 5e8 --stale-days 3 --max-price-age 10d"}) {
    const RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out,
              "gpuplan: error: --stale-days: both --stale-days and --max-price-age given; they set the same thing "
              "(expected: one of them)\n")
        << args;
  }
}

// #2: `--preemptions-per-day 0` was refused ("not a positive number") while the import accepts a
// rate of 0. 0 is "this spot pool did not preempt": a spot plan with nothing lost, priced at the
// spot rate for the run (not treated as an unknown rate, which plans no spot at all).
TEST_F(Small11E2E, ZeroPreemptionsPerDayPlansSpotWithoutLoss) {
  const json j = run_json("plan --model llama-3.1-8b --task lora --tokens 5e8 --today 2026-12-02 --preemptions-per-day 0 "
                          "--sort cost --limit 50",
                          0);
  ASSERT_FALSE(j["plans"].empty()) << j.dump().substr(0, 2000);
  int spot_plans = 0;
  for (const json& p : j["plans"]) {
    const json& cost = p["cost"];
    if (cost["price_kind"] != "spot") continue;
    ++spot_plans;
    ASSERT_TRUE(cost.contains("spot")) << cost.dump();
    EXPECT_TRUE(cost["spot"]["mtbf_seconds"].is_null()) << cost.dump();  // never preempted: no MTBF
    EXPECT_EQ(cost["spot_loss_usd"].get<double>(), 0.0) << cost.dump();
    EXPECT_EQ(cost["spot"]["expected_preemptions"].get<double>(), 0.0) << cost.dump();
    // The run is the start-up plus the work (after goodput): nothing added for preemptions.
    EXPECT_NEAR(cost["spot"]["wall_seconds"].get<double>() + cost["startup_seconds"].get<double>(),
                cost["run_seconds"].get<double>(), 1e-6 * cost["run_seconds"].get<double>())
        << cost.dump();
  }
  EXPECT_GT(spot_plans, 0) << "the bundled catalog lists spot prices; at a rate of 0 some are planned";
  // Through the API too, and a negative rate is still refused with the accepted range.
  int status = 0;
  const json api = post_plan("{" + kLoraBody + R"(, "preemptions_per_day": 0, "limit": 1})", &status);
  EXPECT_EQ(status, 200) << api.dump().substr(0, 1000);
  const RunResult neg = run("plan --model llama-3.1-8b --task lora --tokens 5e8 --preemptions-per-day -1");
  EXPECT_EQ(neg.exit_code, 2) << neg.out;
  EXPECT_TRUE(contains(neg.out, "--preemptions-per-day: -1 is out of range (expected: a rate per instance-day in [0, 1440]"))
      << neg.out;
}

// #3: a bare number for `deadline` / `max_price_age` in the API was refused ("expected string,
// got number") while the planner's own advice says "max_price_age 192". A bare number is hours
// for the deadline and days for the price age, as on the CLI.
TEST_F(Small11E2E, BareNumbersForDeadlineAndMaxPriceAgeAreHoursAndDays) {
  int status = 0;
  const json hours = post_plan("{" + kLoraBody + R"(, "deadline": 72, "limit": 1})", &status);
  ASSERT_EQ(status, 200) << hours.dump().substr(0, 1000);
  EXPECT_EQ(hours["deadline_seconds"].get<double>(), 72 * 3600.0);  // 72 h = 259,200 s
  const json text = post_plan("{" + kLoraBody + R"(, "deadline": "72h", "limit": 1})", &status);
  ASSERT_EQ(status, 200);
  EXPECT_EQ(text["deadline_seconds"], hours["deadline_seconds"]);
  // max_price_age 192 (days) ranks like "192d" and like stale_days 192.
  const json days = post_plan("{" + kLoraBody + R"(, "max_price_age": 192, "limit": 3})", &status);
  ASSERT_EQ(status, 200) << days.dump().substr(0, 1000);
  const json suffixed = post_plan("{" + kLoraBody + R"(, "max_price_age": "192d", "limit": 3})", &status);
  ASSERT_EQ(status, 200);
  const json stale_days = post_plan("{" + kLoraBody + R"(, "stale_days": 192, "limit": 3})", &status);
  ASSERT_EQ(status, 200);
  EXPECT_EQ(days["plans"], suffixed["plans"]);
  EXPECT_EQ(days["plans"], stale_days["plans"]);
  // The offers endpoint reads a bare max_price_age as days too (query text "192" and JSON-less).
  get("/api/offers?max_price_age=192&limit=1", &status);
  EXPECT_EQ(status, 200);
  // A number that is not a duration is still refused, at its field.
  const json bad = post_plan("{" + kLoraBody + R"(, "deadline": -5})", &status);
  EXPECT_EQ(status, 400) << bad.dump();
  EXPECT_EQ(bad.value("field", ""), "/deadline") << bad.dump();
  const json wrong = post_plan("{" + kLoraBody + R"(, "deadline": true})", &status);
  EXPECT_EQ(status, 400) << wrong.dump();
  EXPECT_EQ(wrong.value("field", ""), "/deadline") << wrong.dump();
}

// #4: `plan --model llama-3.1-8b --task lora --tokens 5e8 --seq 1000000` said "no plan ... spot
// without a preemption rate" (also with --preemptions-per-day 1): the smallest per-GPU need found
// (on small GPUs) was under the largest GPU's memory (on another offer), which was taken for
// "layouts fit". No layout fits anywhere: the sequence beyond the context is said first, then
// the memory, and a shorter sequence is the advice.
TEST_F(Small11E2E, SequenceTooLongForAnyGpuIsNotASpotReason) {
  for (const std::string extra : {"", " --preemptions-per-day 1"}) {
    const std::string args = "plan --model llama-3.1-8b --task lora --tokens 5e8 --seq 1000000 --today 2026-12-02" + extra;
    const RunResult text = run(args);
    EXPECT_EQ(text.exit_code, 1) << text.out;
    EXPECT_FALSE(contains(text.out, "preemption rate")) << text.out;
    EXPECT_EQ(text.out.rfind("No plan: --seq 1000000 exceeds the model's maximum context of 131072 tokens", 0), 0u)
        << text.out;
    const json j = run_json(args, 1);
    const json& np = j["no_plan"];
    EXPECT_TRUE(contains(np["reason"].get<std::string>(), "no layout fits")) << np.dump();
    EXPECT_EQ(np["code"], "seq_exceeds_context") << np.dump();
    EXPECT_NE(np["code"], "no_usable_price");
    ASSERT_TRUE(np["suggestion_codes"].is_array());
    EXPECT_EQ(np["suggestion_codes"][0], "seq_within_context") << np.dump();
    // The closest cluster's need is above its usable memory (else a layout would fit there).
    if (np["values"].contains("closest_need_per_gpu_bytes")) {
      EXPECT_GT(np["values"]["closest_need_per_gpu_bytes"].get<double>(),
                0.9 * np["values"]["closest_gpu_bytes"].get<double>())  // default --margin 0.10
          << np.dump();
    }
  }
}

// #5: error texts of trial 10. (a) an import error led with the row's source cell ("q
// (r.csv:2): observed_at ..."): it starts with FILE:LINE; (b) `price<1e400` said "is not a
// number": it is out of range, a finite number expected, one line plus the filter and caret;
// (c) a range error said its range twice ("is out of range: accepted 0 to 1000000 USD per hour
// (expected: usd_per_hour from 0 to 1000000 USD per hour)").
TEST_F(Small11E2E, ErrorTextsLeadWithTheirPlaceAndSayTheRangeOnce) {
  namespace fs = std::filesystem;
  const std::string header = "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n";
  const fs::path future = dir_ / "future (1).csv";
  std::ofstream(future) << header << "futurecloud,x,us,H100 SXM,8,on-demand,1,2099-12-02,quote (sales)\n";
  const RunResult a = run("import '" + future.string() + "'");
  EXPECT_EQ(a.exit_code, 2) << a.out;
  EXPECT_EQ(a.out.rfind("gpuplan: error: " + future.string() + ":2: observed_at 2099-12-02 is after today", 0), 0u) << a.out;

  const RunResult b = run("offers 'price<1e400'");
  EXPECT_EQ(b.exit_code, 2) << b.out;
  EXPECT_EQ(b.out,
            "gpuplan: error: filter:7: \"1e400\" is out of range\n"
            "  price<1e400\n"
            "        ^^^^^ (expected: a finite number in USD/h, e.g. price<=30)\n");
  int status = 0;
  const json api = get("/api/offers?q=price%3C1e400", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(api.value("message_code", ""), "filter_number_out_of_range") << api.dump();
  EXPECT_EQ(api.value("offset", -1), 6) << api.dump();  // "price<" is 6 bytes

  const fs::path dear = dir_ / "dear.csv";
  std::ofstream(dear) << header << "dearcloud,x,us,H100 SXM,8,on-demand,1e7,2026-12-02,q\n";
  const RunResult c = run("import '" + dear.string() + "'");
  EXPECT_EQ(c.exit_code, 2) << c.out;
  EXPECT_EQ(c.out, "gpuplan: error: " + dear.string() +
                       ":2: usd_per_hour 1e7 is out of range (expected: usd_per_hour from 0 to 1000000 USD per hour)\n");
  const RunResult n = run("plan --model llama-3.1-8b --task lora --tokens 5e8 --max-nodes 5000");
  EXPECT_EQ(n.out, "gpuplan: error: --max-nodes: 5000 is out of range (expected: an integer in [1, 1024])\n");
}

// #6: `gpuplan ask` dropped "by Friday" / "by end of month" without a word, and printed none of
// the warnings `gpuplan plan` prints for the same request. 2026-12-03 is a Thursday: by Friday
// is 24 h, the month's end (31 December) 28 days.
TEST_F(Small11E2E, AskReadsCalendarDeadlinesAndShowsThePlansWarnings) {
  const json friday = run_json("ask 'fine-tune llama 3.1 8b with lora on 5e8 tokens by Friday' --today 2026-12-03", 0);
  EXPECT_EQ(friday["understood"]["deadline_seconds"], 86400.0) << friday["understood"].dump();
  EXPECT_EQ(friday["understood"]["plan_request"]["deadline"], "86400s");
  const json month = run_json("ask 'affiner llama 3.1 8b avec lora sur 5e8 jetons d'\\''ici la fin du mois' --today 2026-12-03", 0);
  EXPECT_EQ(month["understood"]["deadline_seconds"], 28 * 86400.0) << month["understood"].dump();

  // The same request through plan and ask: every warning plan gives for the whole result is in
  // ask's answer, with its code, as plan prints it.
  const json plan = run_json("plan --model llama-3.1-8b --task lora --tokens 5e8 --today 2026-12-02 --limit 5", 0);
  ASSERT_FALSE(plan["warnings"].empty()) << "the bundled catalog gives this request result warnings";
  const RunResult ask = run("ask 'fine-tune llama 3.1 8b with lora on 5e8 tokens' --today 2026-12-02 --limit 5");
  EXPECT_EQ(ask.exit_code, 0) << ask.out;
  for (const json& w : plan["warnings"])
    EXPECT_TRUE(contains(ask.out, "[" + w["code"].get<std::string>() + "] ")) << w.dump() << "\n" << ask.out;
}

// trial11 (issue 11 #1): the JSON API read an integer field through a double, so a body's
// "seq": 9007199254740993 was refused as "sequence length 9007199254740992", and a plan's
// concurrency as "9.0072e+15 is implausibly large". Both echo the digits sent.
TEST_F(Small11E2E, IntegerFieldsAbove2To53AreEchoedAsSent) {
  auto c = client();
  auto size = c.Post("/api/size", R"({"model": "llama-3.1-8b", "task": "full", "seq": 9007199254740993})", "application/json");
  ASSERT_TRUE(size);
  EXPECT_EQ(size->status, 400) << size->body;
  const json e = json::parse(size->body, nullptr, false);
  EXPECT_EQ(e.value("field", ""), "/seq") << size->body;
  EXPECT_TRUE(contains(e.value("message", ""), "9007199254740993")) << size->body;
  EXPECT_FALSE(contains(size->body, "9007199254740992")) << size->body;
  int status = 0;
  const json q = post_plan(R"({"model": "llama-3.1-8b", "task": "serve", "concurrency": 9007199254740993, "today": "2026-12-02"})", &status);
  EXPECT_EQ(status, 400) << q.dump();
  EXPECT_EQ(q.value("field", ""), "/concurrency") << q.dump();
  EXPECT_TRUE(contains(q.value("message", ""), "9007199254740993")) << q.dump();
}

// Issue 11 leftovers A and B (trial of the last session): a count a user types went through a
// double before it was echoed. `ask` echoed 9007199254740993 (2^53 + 1) tokens as
// 9,007,199,254,740,992 and planned that; `plan --requests 9007199254740993` was refused as
// "9.0072e+15 is implausibly large (expected: at most 1e+13)", and the JSON wrote training_tokens
// 9.007199254740992e+15. A double holds every whole number up to 2^53 = 9007199254740992 and
// 2^53 + 1 not at all (its neighbours 2^53 and 2^53 + 2): each count field refuses it at its flag
// (or /field, or in the sentence's words), with the digits typed; 2^53 itself is exact and kept.
TEST_F(Small11E2E, CountsAreExactAsTypedOrRefusedByName) {
  const std::string v = "9007199254740993";
  const std::string not_held = v + " is not held exactly: above 9007199254740992 (2^53) a count keeps about 16 significant digits";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plan --model llama-3.1-8b --task lora --today 2026-12-02", "--tokens"},
      {"plan --model llama-3.1-8b --task lora --today 2026-12-02", "--dataset-tokens"},
      {"plan --model llama-3.1-8b --task serve --today 2026-12-02", "--requests"},
      {"plan --model sdxl --task images --today 2026-12-02", "--images"},
      {"estimate --model llama-3.1-8b --task lora --gpu H100 --gpus 8", "--tokens"},
      {"size --task full", "--params"},
  };
  for (const auto& [base, flag] : cases) {
    for (const std::string& typed : {v, std::string("9.007199254740993e15")}) {
      const RunResult r = run(base + " " + flag + " " + typed);
      EXPECT_EQ(r.exit_code, 2) << base << " " << flag << "\n" << r.out;
      const std::string shown = typed == v ? not_held : "9.007199254740993e15" + not_held.substr(v.size());
      EXPECT_EQ(r.out.rfind("gpuplan: error: " + flag + ": " + shown + " (expected: ", 0), 0u) << base << " " << flag << "\n" << r.out;
      EXPECT_FALSE(contains(r.out, "e+15")) << r.out;
    }
  }
  // Beyond --requests' documented bound (1e13: planner/plan_request.cpp kMaxRequests), the count and
  // the bound with every digit, as the integer flags show theirs.
  RunResult r = run("plan --model llama-3.1-8b --task serve --today 2026-12-02 --requests 20000000000000");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "gpuplan: error: --requests: 20000000000000 is implausibly large (expected: at most 10000000000000)\n");
  r = run("plan --model llama-3.1-8b --task serve --today 2026-12-02 --requests 9007199254740992");
  EXPECT_EQ(r.out, "gpuplan: error: --requests: 9007199254740992 is implausibly large (expected: at most 10000000000000)\n");
  r = run("plan --model llama-3.1-8b --task serve --today 2026-12-02 --concurrency 100000001");
  EXPECT_EQ(r.out, "gpuplan: error: --concurrency: 100000001 is implausibly large (expected: at most 100000000)\n");

  // 2^53 is held exactly: planned, and the JSON writes the count as an integer with every digit;
  // 1.1M is read from its digits (1.1 × 1e6 is 1100000.0000000002 in doubles).
  for (const auto& [typed, count] : {std::pair{"9007199254740992", std::int64_t{9007199254740992}},
                                     std::pair{"1.1M", std::int64_t{1100000}}, std::pair{"1e16", std::int64_t{10000000000000000}}}) {
    const json j = run_json(std::string("plan --model llama-3.1-8b --task lora --today 2026-12-02 --limit 1 --tokens ") + typed, 0);
    ASSERT_TRUE(j["training_tokens"].is_number_integer()) << typed << " " << j["training_tokens"].dump();
    EXPECT_EQ(j["training_tokens"].get<std::int64_t>(), count) << typed;
  }

  // The API: a JSON integer keeps its 64 bits, so 2^53 + 1 is refused at /tokens as sent.
  int status = 0;
  json e = post_plan(R"({"model": "llama-3.1-8b", "task": "lora", "tokens": 9007199254740993, "today": "2026-12-02"})", &status);
  EXPECT_EQ(status, 400) << e.dump();
  EXPECT_EQ(e.value("field", ""), "/tokens") << e.dump();
  EXPECT_EQ(e.value("message_code", ""), "count_not_exact") << e.dump();
  EXPECT_EQ(e.value("message", ""), not_held) << e.dump();
  e = post_plan(R"({"model": "llama-3.1-8b", "task": "serve", "requests": "9007199254740993", "today": "2026-12-02"})", &status);
  EXPECT_EQ(status, 400) << e.dump();
  EXPECT_EQ(e.value("field", ""), "/requests") << e.dump();
  EXPECT_EQ(e.value("message", ""), not_held) << e.dump();
}

// Issue 11 leftover A: `ask` read a sentence's numbers through a double, so "9007199254740993
// tokens" was echoed 9,007,199,254,740,992 and planned. An integer is now read digit for digit.
TEST_F(Small11E2E, AskEchoesIntegersAsTypedOrRefusesThem) {
  const std::string not_held =
      "9007199254740993 is not held exactly: above 9007199254740992 (2^53) a count keeps about 16 significant digits";
  RunResult r;
  // ask: refused in the sentence's words with the digits typed (was echoed ...992 and planned);
  // 2^53 echoed with every digit, grouped; a number in the JSON understood fields is exact.
  r = run("ask 'fine-tune llama 3.1 8b with lora on 9007199254740993 tokens' --today 2026-12-02");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "gpuplan: error: SENTENCE: training tokens “9007199254740993 tokens” cannot be planned as written: " + not_held +
                       " (expected: the sentence with that value changed)\n");
  r = run("ask 'fine-tune llama 3.1 8b with lora on 9007199254740992 tokens' --today 2026-12-02 --limit 1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "training tokens              9,007,199,254,740,992  ← \"9007199254740992 tokens\"")) << r.out;
  const json understood = run_json("ask 'fine-tune llama 3.1 8b with lora on 9007199254740992 tokens' --today 2026-12-02 --limit 1 --json", 0);
  const json fields = understood["understood"]["fields"];
  bool seen = false;
  for (const json& f : fields) {
    if (f.value("name", "") != "tokens") continue;
    seen = true;
    ASSERT_TRUE(f["value"].is_number_integer()) << f.dump();
    EXPECT_EQ(f["value"].get<std::int64_t>(), 9007199254740992) << f.dump();
  }
  EXPECT_TRUE(seen) << understood["understood"].dump();
  // An integer field from a sentence (users → concurrency) is refused with its digits and its bound.
  r = run("ask 'serve llama 3.1 8b to 9007199254740993 users' --today 2026-12-02");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "9007199254740993 is implausibly large (at most 100000000)")) << r.out;
}

// trial11 (issue 11 #2): a U+202E RIGHT-TO-LEFT OVERRIDE in an imported instance_type was
// stored and printed raw ("gpu_8x_h100<U+202E>live" displays as another id). Refused at import
// like a control character, at file:line:column naming the field, and nothing is written; the
// same inside a JSON file (raw, naming the JSON pointer) and as a \u202e escape.
TEST_F(Small11E2E, BidiControlInAnImportedFieldIsRefused) {
  const std::string before = run("offers provider=lambda --format json --limit 100000").out;
  const std::filesystem::path csv = dir_ / "bidi.csv";
  std::ofstream(csv) << "provider,instance_type,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n"
                        "lambda,gpu_8x_h100\xe2\x80\xaelive,H100,8,on-demand,20,2026-11-01,quote\n";
  RunResult r = run("import '" + csv.string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "gpuplan: error: " + csv.string() +
                       ":2:19: bidirectional control character U+202E in field instance_type (expected: UTF-8 text without "
                       "control characters)\n");
  const std::filesystem::path js = dir_ / "bidi.json";
  std::ofstream(js) << R"({"offers": [{"provider": "lambda", "instance_type": "gpu_8x_h100)" "\xe2\x81\xa7"
                       R"(", "gpu": "H100", "gpu_count": 8, "price_kind": "on-demand", "usd_per_hour": 20, "observed_at": "2026-11-01", "source": "q"}]})";
  r = run("import '" + js.string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, js.string() + ":1:65: bidirectional control character U+2067 in field /offers/0/instance_type")) << r.out;
  std::ofstream(js) << R"({"offers": [{"provider": "lambda", "instance_type": "gpu_8x_h100\u202elive", "gpu": "H100", "gpu_count": 8, "price_kind": "on-demand", "usd_per_hour": 20, "observed_at": "2026-11-01", "source": "q"}]})";
  r = run("import '" + js.string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, js.string() + ": /offers/0/instance_type: bidirectional control character U+202E")) << r.out;
  EXPECT_EQ(run("offers provider=lambda --format json --limit 100000").out, before);
}

// trial11 (issue 11 #3): `/api/offers?q=%zz` passed "%zz" on as the filter and answered "unknown
// field"; a '%' without two hex digits is now refused as not percent-encoding, naming the
// parameter as written, HTTP 400 {code, message, field}; a well-formed escape still decodes.
TEST_F(Small11E2E, BadPercentEncodingInAQueryIsNamedAsSuch) {
  for (const auto& [path, field, seen] : {std::tuple{"/api/offers?q=%zz", "/q", "'%zz' at character 1"},
                                         std::tuple{"/api/offers?limit=1%2", "/limit", "'%2' at character 2"},
                                         std::tuple{"/api/offers?li%zzmit=1", "/li%zzmit", "'%zz' at character 3"},
                                         std::tuple{"/api/models?q=llama%", "/q", "'%' at character 6"}}) {
    int status = 0;
    const json e = get(path, &status);
    EXPECT_EQ(status, 400) << path << " " << e.dump();
    EXPECT_EQ(e.value("code", ""), "invalid_input") << path;
    EXPECT_EQ(e.value("message_code", ""), "query_not_percent_encoded") << path << " " << e.dump();
    EXPECT_EQ(e.value("field", ""), field) << path;
    EXPECT_TRUE(contains(e.value("message", ""), "is not valid percent-encoding: " + std::string(seen))) << path << " " << e.dump();
  }
  int status = 0;
  const json ok = get("/api/offers?q=gpu%3DH100&limit=1", &status);
  EXPECT_EQ(status, 200) << ok.dump();
}

// trial11 (issue 11 #6): `0000-01-01` was accepted for --today, an import's observed_at and a
// filter date; an offer then showed an age of 740,319 days. The earliest date is 2000-01-01
// (util/calendar.hpp: no cloud GPU offer is older); earlier is refused, naming the place, and
// an import writes nothing.
TEST_F(Small11E2E, DatesBefore2000AreRefused) {
  const std::string expected = " (expected: a date from 2000-01-01 on (no cloud GPU offer is older))\n";
  RunResult r = run("offers --today 0000-01-01 --limit 1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "gpuplan: error: --today: \"0000-01-01\" is before 2000-01-01, the earliest date accepted" + expected);
  r = run("plan --model llama-3.1-8b --task lora --tokens 1e8 --today 1999-12-31");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "gpuplan: error: --today: \"1999-12-31\" is before 2000-01-01, the earliest date accepted" + expected);
  r = run("offers 'observed>=0000-01-01'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "gpuplan: error: filter:11: \"0000-01-01\" is before 2000-01-01")) << r.out;
  // 2000-01-01 itself passes this rule (the bundled catalog then refuses it as before its own
  // observations, an older rule: today_before_observations).
  EXPECT_FALSE(contains(run("offers --today 2000-01-01 --limit 1").out, "the earliest date accepted"));
  const std::string before = run("offers provider=lambda --format json --limit 100000").out;
  const std::filesystem::path csv = dir_ / "year0.csv";
  std::ofstream(csv) << "provider,instance_type,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n"
                        "lambda,gpu_8x_h100_year0,H100,8,on-demand,20,0000-01-01,quote\n";
  r = run("import '" + csv.string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "gpuplan: error: " + csv.string() +
                       ":2: '0000-01-01' is before 2000-01-01, the earliest observation date accepted (expected: a date "
                       "from 2000-01-01 on (no cloud GPU offer is older), or empty/unknown)\n");
  EXPECT_EQ(run("offers provider=lambda --format json --limit 100000").out, before);
  // The API refuses it too, at its field.
  int status = 0;
  const json e = get("/api/offers?today=0000-01-01", &status);
  EXPECT_EQ(status, 400) << e.dump();
  EXPECT_EQ(e.value("field", ""), "/today") << e.dump();
  EXPECT_EQ(e.value("message_code", ""), "date_before_earliest") << e.dump();
}

// Issue 11 "decimal numbers only" on the CLI11-parsed numeric flags of fetch, serve and ask: CLI11
// alone read "" as 0, "0x10" as 16 and "inf" as a number (`fetch --timeout 0x10` fetched with a
// 16 s timeout; `--price-move-factor inf` turned the jump gate off). Each is refused before any
// request, exit 2, naming the flag and the text.
TEST_F(Small11E2E, NumericFlagsOfFetchServeAndAskAreDecimalOnly) {
  const std::string no_server = " --dry-run --base-url http://127.0.0.1:1";
  for (const std::string flag : {"--timeout 0x10", "--max-row-drop nan", "--price-move-factor inf",
                                  "--frozen-after-days ''", "--frozen-after-days -inf"}) {
    const RunResult r = run("fetch vast" + no_server + " " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << "\n" << r.out;
    const std::string name = flag.substr(0, flag.find(' '));
    std::string text = flag.substr(flag.find(' ') + 1);
    if (text == "''") text.clear();
    EXPECT_TRUE(contains(r.out, name + ": '" + text + "' is not a number written in decimal digits")) << flag << "\n" << r.out;
    EXPECT_FALSE(contains(r.out, "request failed")) << flag << "\n" << r.out;  // refused before fetching
  }
  // A decimal value still reaches the fetch (which fails: nothing listens on port 1).
  const RunResult ok = run("fetch vast" + no_server + " --timeout 30 --frozen-after-days 2.5");
  EXPECT_TRUE(contains(ok.out, "request failed")) << ok.out;
  // The integer flags say so, as the model flags do ("--tp: '2.5' is not an integer"); CLI11's own
  // conversion answered a fraction with "Could not convert" (trial11b).
  for (const std::string flag : {"--retries ''", "--retries 2.5", "--retries 0x4"}) {
    const RunResult r = run("fetch vast" + no_server + " " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << "\n" << r.out;
    std::string text = flag.substr(flag.find(' ') + 1);
    if (text == "''") text.clear();
    EXPECT_TRUE(contains(r.out, "--retries: '" + text + "' is not an integer")) << flag << "\n" << r.out;
    EXPECT_FALSE(contains(r.out, "request failed")) << flag << "\n" << r.out;
  }
  // Upper bounds: `--retries 1000000` against a refused port retried with back-off with no end, and
  // `--timeout 1e12` waited a request for 31,000 years.
  const std::pair<std::string, std::string> bounds[] = {
      {"--retries 1000000", "gpuplan: error: --retries: 1000000 is out of range (expected: an integer in [1, 20])"},
      {"--timeout 1e12", "gpuplan: error: --timeout: 1000000000000 is out of range (expected: seconds in (0, 86400])"}};
  for (const auto& [flag, line] : bounds) {
    const RunResult r = run("fetch vast" + no_server + " " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, line)) << flag << "\n" << r.out;
    EXPECT_FALSE(contains(r.out, "request failed")) << flag << "\n" << r.out;
  }
  for (const std::string flag : {"--threads 0x4", "--threads 2.5", "--compute-threads 1e1"}) {
    const RunResult r = run("serve " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, flag.substr(0, flag.find(' ')) + ": '" + flag.substr(flag.find(' ') + 1) + "' is not an integer"))
        << flag << "\n" << r.out;
  }
  for (const std::string text : {"0x2", "2.5"}) {
    const RunResult limit = run("ask 'fine-tune llama 3.1 8b with lora on 5e8 tokens' --today 2026-12-02 --limit " + text);
    EXPECT_EQ(limit.exit_code, 2) << limit.out;
    EXPECT_TRUE(contains(limit.out, "--limit: '" + text + "' is not an integer")) << limit.out;
  }
  // trial11b: `ask --limit -1` listed every plan (CLI11 stored -1 in an unsigned count).
  const RunResult negative = run("ask 'fine-tune llama 3.1 8b with lora on 5e8 tokens' --today 2026-12-02 --limit -1");
  EXPECT_EQ(negative.exit_code, 2) << negative.out;
  EXPECT_TRUE(contains(negative.out, "--limit: -1 is negative")) << negative.out;
}

// trial11: an explicit --global-batch above the budget was refused, but the DEFAULT global batch
// (1 Mi tokens for a full fine-tune = 256 × 4096) was not capped: 1,000 tokens were planned as one
// step of 1,048,576 tokens, at the time and GPU-hours of 1e6 tokens. The default now shrinks to
// the budget (1e6 tokens / 4096 = 244.1 sequences: 128, the largest power of two), and a budget
// below one sequence is refused, in the CLI and the API.
TEST_F(Small11E2E, TheDefaultGlobalBatchNeverExceedsTheTokenBudget) {
  const std::string est = "estimate --model llama-3.1-8b --task full --gpu H100 --gpus 8 --seq 4096";
  RunResult r = run(est + " --tokens 1000");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--tokens: the token budget 1000 is smaller than one sequence of 4096 tokens")) << r.out;
  r = run(est + " --tokens 1e6");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "global batch 128 × 4096 tokens")) << r.out;
  r = run(est + " --tokens 1e9");  // a budget above 1 Mi tokens keeps the default
  EXPECT_TRUE(contains(r.out, "global batch 256 × 4096 tokens")) << r.out;
  int status = 0;
  const json e = post_plan(R"({"model": "llama-3.1-8b", "task": "full", "tokens": 1000, "seq": 4096, "today": "2026-12-02"})",
                           &status);
  EXPECT_EQ(status, 400) << e.dump();
  EXPECT_EQ(e.value("message_code", ""), "tokens_below_one_sequence") << e.dump();
  EXPECT_EQ(e.value("field", ""), "/tokens") << e.dump();
}

}  // namespace
