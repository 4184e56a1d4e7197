// End-to-end: `gpuplan plan --task serve --engine ...` through the built binary (GPUPLAN_BINARY).
// The engine selects a documented efficiency set (sizing/serving_perf.cpp engine_profile(),
// docs/performance-model.md §3); an unknown engine is a one-line error with exit 2.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"

namespace gpuplan::e2e {
namespace {

using nlohmann::json;

class ServeEngineE2E : public BinaryE2E<ServeEngineE2E> {
 public:
  static constexpr const char* kName = "serve-engine";
};

/// tpot of each plan by offer and layout, so two runs compare the same hardware.
std::map<std::string, json> serving_by_offer(const json& j) {
  std::map<std::string, json> out;
  for (const json& p : j["plans"]) {
    if (!p.contains("serving")) continue;
    out[p["offer_id"].dump() + "/" + p["layout"].dump()] = p;
  }
  return out;
}

TEST_F(ServeEngineE2E, UnknownEngineIsAOneLineErrorExit2) {
  const RunResult r = run("plan --model llama-3.1-8b --task serve --concurrency 1 --engine tgi");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("gpuplan: error: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("--engine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown engine 'tgi'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vllm, tensorrt-llm, sglang or llama.cpp"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line: " << r.out;
}

TEST_F(ServeEngineE2E, EngineChangesTheDecodeStepByItsDocumentedBandwidthEfficiency) {
  // One user: a batch-1 decode step of a 16-bit 8B model is memory-bound (≈ 16 GB of weights per
  // step against ~4 prompt tokens of prefill per step), so on one GPU (tp 1, no all-reduce) the
  // time per output token is bytes / (HBM bandwidth × the engine's 16-bit decode efficiency):
  // TensorRT-LLM's set is vLLM's × 1.05 (serving_perf.cpp), so tpot(trt) / tpot(vllm) = 1/1.05,
  // to within the mixed step's soft-roofline term c·√(c/m) (serving_perf.hpp
  // step_roofline_seconds), which does not scale with the bandwidth efficiency: with c (one
  // decode token + ~4 prompt tokens of math) a few % of m, that term is under 0.5% of the step
  // and moves the ratio by less than 1e-3.
  const std::string base = "plan --model llama-3.1-8b --task serve --concurrency 1 --limit 50";
  const json vllm = run_json(base + " --engine vllm", 0);
  const json trt = run_json(base + " --engine tensorrt-llm", 0);
  const json dflt = run_json(base, 0);
  const auto a = serving_by_offer(vllm), b = serving_by_offer(trt), d = serving_by_offer(dflt);
  int compared = 0;
  for (const auto& [key, pv] : a) {
    const auto it = b.find(key);
    if (it == b.end() || pv["layout"].value("tp", 1) != 1) continue;
    const double tv = pv["serving"]["tpot_seconds"].get<double>();
    const double tt = it->second["serving"]["tpot_seconds"].get<double>();
    EXPECT_NEAR(tt / tv, 1.0 / 1.05, 1e-3) << key;
    EXPECT_LT(tt, tv) << key;
    ++compared;
  }
  EXPECT_GT(compared, 0) << "no single-GPU plan in both runs";
  // vLLM is the default engine: the same numbers without --engine.
  for (const auto& [key, pv] : a) {
    const auto it = d.find(key);
    if (it != d.end()) {
      EXPECT_DOUBLE_EQ(it->second["serving"]["tpot_seconds"].get<double>(), pv["serving"]["tpot_seconds"].get<double>())
          << key;
    }
  }
}

TEST_F(ServeEngineE2E, LlamaCppRunsPromptsBetweenDecodeSteps) {
  // llama.cpp has no continuous batching (its profile): with 8 users the prompts' prefill is added
  // to each step instead of riding inside it, so no plan serves more requests/s per replica than
  // the vLLM plan on the same offer and layout.
  const std::string base = "plan --model llama-3.1-8b --task serve --concurrency 8 --limit 50";
  const auto v = serving_by_offer(run_json(base + " --engine vllm", 0));
  const auto l = serving_by_offer(run_json(base + " --engine llama.cpp", 0));
  int compared = 0;
  for (const auto& [key, pv] : v) {
    const auto it = l.find(key);
    if (it == l.end()) continue;
    EXPECT_LE(it->second["serving"]["requests_per_s_per_replica"].get<double>(),
              pv["serving"]["requests_per_s_per_replica"].get<double>() * (1 + 1e-9))
        << key;
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace gpuplan::e2e
