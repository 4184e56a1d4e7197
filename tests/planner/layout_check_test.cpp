// The non-throwing layout checks the planner's search asks (sizing/layout_check.hpp) agree with
// the sizing layer's own model checks: over every bundled decoder preset and TP 1..16, a TP the
// check accepts never makes serving_memory / training_memory throw, and a TP it rejects throws
// with the same message. (The planner relies on this to search without catching exceptions.)
#include <gtest/gtest.h>

#include "model/presets.hpp"
#include "sizing/layout_check.hpp"
#include "sizing/memory.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

TEST(LayoutCheck, ServingCheckMatchesServingMemoryOnEveryPreset) {
  std::size_t rejected = 0, checked = 0;
  for (const PresetInfo& info : list_presets()) {
    const ModelArch arch = load_preset(info.short_name);
    if (arch.family != ModelFamily::decoder) continue;
    for (int tp = 1; tp <= 16; ++tp) {
      ServingMemoryRequest req;
      req.tp = tp;
      req.context_tokens = 1024;
      std::optional<std::string> thrown;
      try {
        (void)serving_memory(arch, req);
      } catch (const Error& e) {
        thrown = e.what();
      }
      const std::optional<std::string> check = serving_layout_problem(arch, tp);
      EXPECT_EQ(check, thrown) << info.short_name << " tp " << tp;
      rejected += check.has_value();
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u);
  EXPECT_GT(rejected, 0u);  // e.g. phi-4: 10 KV heads, tp 4
}

TEST(LayoutCheck, TrainingCheckAcceptsOnlyTpTheSizingTakes) {
  for (const PresetInfo& info : list_presets()) {
    const ModelArch arch = load_preset(info.short_name);
    if (arch.family != ModelFamily::decoder) continue;
    for (int tp = 1; tp <= 16; tp *= 2) {
      TrainingMemoryRequest req;
      req.task = Task::full;
      req.seq_len = 1024;
      req.layout.tp = tp;
      req.layout.dp = 1;
      const std::optional<std::string> check = training_layout_problem(arch, req.layout);
      bool threw = false;
      try {
        (void)training_memory(arch, req);
      } catch (const Error&) {
        threw = true;
      }
      EXPECT_EQ(check.has_value(), threw) << info.short_name << " tp " << tp << ": " << check.value_or("accepted");
    }
  }
}

TEST(LayoutCheck, Phi4KvHeads) {
  // microsoft/phi-4 config.json: 40 attention heads, 10 key-value heads.
  const ModelArch arch = load_preset("phi-4");
  ASSERT_EQ(arch.num_attention_heads, 40);
  ASSERT_EQ(arch.num_kv_heads, 10);
  EXPECT_FALSE(kv_split_problem(arch, 2));   // 10 KV heads split 5 per rank
  EXPECT_FALSE(kv_split_problem(arch, 10));  // 1 per rank
  EXPECT_FALSE(kv_split_problem(arch, 20));  // each replicated on 2 ranks
  EXPECT_TRUE(kv_split_problem(arch, 4));    // 10 % 4 = 2 and 4 ∤ 10
  EXPECT_TRUE(kv_split_problem(arch, 8));
}

}  // namespace
}  // namespace gpuplan
