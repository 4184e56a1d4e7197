// End-to-end regression test for a defect the sixth new-user trial found (issue 10, assistant):
// `gpuplan ask "... within 3 days, budget 100€"` read the euro budget and marked it "not used"
// (gpuplan keeps no exchange rate), then ended with "Plan 1 is the first that meets your budget
// and deadline." The closing sentence now names only the constraints that were applied.
#include <gtest/gtest.h>

#include <string>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;

class AskWithinE2E : public BinaryE2E<AskWithinE2E> {
 public:
  static constexpr const char* kName = "ask-within";
  static RunResult ask(const std::string& sentence) {
    return run_shell("XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' ask '" + sentence +
                     "' --today 2026-11-30 2>&1");
  }
};

TEST_F(AskWithinE2E, TheClosingSentenceNamesOnlyTheConstraintsApplied) {
  // A euro budget is not used: only the deadline is claimed.
  RunResult r = ask("fine-tune llama 3.1 8b with lora on 50M tokens within 3 days, budget 100€");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("is the first that meets your deadline."), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("budget and deadline"), std::string::npos) << r.out;
  // French: the same, in French.
  r = ask("affiner llama 3.1 8b avec lora sur 50M jetons en 3 jours, budget 100€");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("est le premier qui respecte votre délai."), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("votre budget et votre délai"), std::string::npos) << r.out;
  // A USD budget and a deadline: both are claimed.
  r = ask("fine-tune llama 3.1 8b with lora on 50M tokens within 3 days with a budget of $1000");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("is the first that meets your budget and deadline."), std::string::npos) << r.out;
  // Only a USD budget.
  r = ask("fine-tune llama 3.1 8b with lora on 50M tokens with a budget of $1000");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("is the first that meets your budget."), std::string::npos) << r.out;
  // Neither: no closing sentence at all.
  r = ask("fine-tune llama 3.1 8b with lora on 50M tokens");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("is the first that meets"), std::string::npos) << r.out;
}

}  // namespace
