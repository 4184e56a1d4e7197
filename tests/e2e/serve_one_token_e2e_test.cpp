// End-to-end (trial54 #10): serving replies of one output token, through the built binary.
// Nothing follows the first token, so there is no time per output token: no TPOT target applies
// (a given --tpot-ms is refused, the default 200 ms is not used), and the plan's tpot_seconds is
// null. Under continuous batching the first token comes no sooner than one steady-state step,
// which carries the B·P/O prompt tokens of the other arrivals (sizing/serving_perf.cpp); before,
// a 1000-token-prompt service was shown TTFT 82 ms at 198 sequences against a 13.9 s step.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"

namespace gpuplan::e2e {
namespace {

using nlohmann::json;

class ServeOneTokenE2E : public BinaryE2E<ServeOneTokenE2E> {
 public:
  static constexpr const char* kName = "serve-one-token";
};

const std::string kService = "plan --model llama-3.1-8b --task serve --rps 20 --today 2026-11-30 --limit 20";

TEST_F(ServeOneTokenE2E, ATpotTargetOnOneOutputTokenIsRefused) {
  const RunResult r = run(kService + " --output-tokens 1 --tpot-ms 50");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("gpuplan: error: --tpot-ms: --output-tokens 1 has no time between output tokens to bound", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find("--ttft-ms for one-token replies, or --output-tokens ≥ 2"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line: " << r.out;
  // Two output tokens have one time between them: the same target plans.
  EXPECT_EQ(run(kService + " --output-tokens 2 --tpot-ms 50").exit_code, 0);
}

TEST_F(ServeOneTokenE2E, OneOutputTokenHasNoTpotAndTtftIsAtLeastTheSteadyStep) {
  const json j = run_json(kService + " --output-tokens 1", 0);
  ASSERT_FALSE(j["plans"].empty()) << j.dump().substr(0, 2000);
  int checked = 0;
  for (const json& p : j["plans"]) {
    const json& s = p["serving"];
    EXPECT_TRUE(s["tpot_seconds"].is_null()) << p["offer_id"];
    for (const json& o : s["tp_options"]) EXPECT_TRUE(o["tpot_seconds"].is_null()) << p["offer_id"];
    EXPECT_EQ(s["tp_choice"].get<std::string>().find("TPOT"), std::string::npos) << s["tp_choice"];
    // Continuous batching with O = 1: requests/s per replica = B / (O × step), and TTFT ≥ step,
    // so TTFT × requests/s ≥ B (Little's law: the B sequences in flight each wait at least a step).
    const double b = s["batch"].get<double>();
    EXPECT_GE(s["ttft_seconds"].get<double>() * s["requests_per_s_per_replica"].get<double>(), b * (1 - 1e-9))
        << p["offer_id"];
    // The default interactive target is TTFT 2000 ms alone: the recommended plan keeps it.
    if (p.value("recommended", false)) {
      EXPECT_LE(s["ttft_seconds"].get<double>(), 2.0) << p["offer_id"];
      EXPECT_TRUE(s["meets_latency_target"].get<bool>());
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
  // Two output tokens: a TPOT exists and is reported.
  const json two = run_json(kService + " --output-tokens 2", 0);
  ASSERT_FALSE(two["plans"].empty());
  EXPECT_TRUE(two["plans"][0]["serving"]["tpot_seconds"].is_number());
}

TEST_F(ServeOneTokenE2E, ExplainSaysTheStepIsNotATimeBetweenTokens) {
  const RunResult r = run(kService + " --output-tokens 1 --explain 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("one output token: the steady-state step, not a time between tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("at least one steady-state step (TPOT"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpuplan::e2e
