// End-to-end regression test for a defect the sixth new-user trial found (issue 7): a serving
// plan pinned to `--tp 3` on Llama 3.1 70B (64 attention heads, 8 KV heads; its config.json)
// ended in "No plan" (exit 1) while training gave the documented one-line error (exit 2,
// docs/planner.md: "TP not dividing the heads"). Serving engines shard attention heads over TP
// ranks, so 3 cannot divide 64 at any cluster size: the same error, exit 2.
#include <gtest/gtest.h>

#include <string>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;

class ServeTpPinE2E : public BinaryE2E<ServeTpPinE2E> {
 public:
  static constexpr const char* kName = "serve-tp-pin";
  static RunResult plan(const std::string& args) {
    return run_shell("XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' plan " + args +
                     " --today 2026-11-30 2>&1");
  }
};

TEST_F(ServeTpPinE2E, TpNotDividingTheHeadsIsAnInputErrorWhenServing) {
  for (const std::string task : {"serve --concurrency 64 --hours 100", "full --tokens 1e9"}) {
    const RunResult r = plan("--model llama-3.1-70b --task " + task + " --tp 3");
    EXPECT_EQ(r.exit_code, 2) << task << "\n" << r.out;
    EXPECT_NE(r.out.find("gpuplan: error: --tp: tp 3 does not divide the 64 attention heads"), std::string::npos)
        << task << "\n" << r.out;
  }
  // A divisor of the heads is still planned when serving.
  const RunResult ok = plan("--model llama-3.1-70b --task serve --concurrency 64 --hours 100 --tp 4 --limit 1");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
}

}  // namespace
