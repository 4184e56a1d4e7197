// `gpuplan ask` through the real binary: a number the sentence states that no double can hold is
// a clear input error naming it (exit 2), never "internal error: stod" (exit 70, new-user trial
// 2026-12-01: "fine-tune llama 3.1 8b with lora on 1e999 tokens").
#include <gtest/gtest.h>

#include "binary_e2e.hpp"

namespace gpuplan::e2e {
namespace {

class AskE2E : public BinaryE2E<AskE2E> {
 public:
  static constexpr const char* kName = "ask";
};

TEST_F(AskE2E, OutOfRangeNumbersAreInputErrors) {
  for (const char* sentence : {"fine-tune llama 3.1 8b with lora on 1e999 tokens",
                               "fine-tune llama 3.1 8b with lora on 1e400 tokens",
                               "fine-tune llama 3.1 8b with lora on 100M tokens under $1e999",
                               "fine-tune llama 3.1 8b with lora on 100M tokens within 1e999 hours"}) {
    const RunResult r = run(std::string("ask '") + sentence + "'");
    EXPECT_EQ(r.exit_code, 2) << sentence << "\n" << r.out;
    EXPECT_NE(r.out.find("1e"), std::string::npos) << r.out;  // the number is named
    EXPECT_NE(r.out.find("out of range"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("internal"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace gpuplan::e2e
