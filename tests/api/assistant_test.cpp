// The assistant's grammar on a table of sentences in English, French and Thai. Each row lists
// every field the sentence states (and nothing else: a field not in the row must not be read)
// and what is missing. Expected values are the sentence's own numbers written out by hand.
#include <gtest/gtest.h>

#include "api/assistant.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/error.hpp"

namespace gpuplan::api {
namespace {

using nlohmann::json;

struct Row {
  const char* sentence;
  const char* language;
  json fields;  ///< name → value, exactly the fields read
  std::vector<std::string> missing;
};

TEST(Assistant, ReadsTheTableOfSentences) {
  const std::vector<Row> rows = {
      {"fine-tune Llama 3.1 70B with QLoRA on 200M tokens within two days under $500", "en",
       {{"model", "llama-3.1-70b"}, {"task", "qlora"}, {"tokens", 2e8}, {"budget_usd", 500}, {"deadline_seconds", 2 * 86400}},
       {}},
      {"LoRA fine-tune of llama-3.1-8b on 1.5B tokens on H100", "en",
       {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1.5e9}, {"filter", "gpu=H100"}}, {}},
      {"serve Qwen3 8B at 20 requests per second for 48 hours", "en",
       {{"model", "qwen3-8b"}, {"task", "serve"}, {"rps", 20}, {"hours", 48}}, {}},
      {"pretrain a model on 2T tokens", "en", {{"task", "pretrain"}, {"tokens", 2e12}}, {"model"}},
      {"fine-tune mistral 7b v0.1", "en", {{"model", "mistral-7b-v0.1"}, {"task", "full"}}, {"tokens"}},
      {"affiner Llama 3.1 70B en QLoRA sur 200 millions de jetons en deux jours pour moins de 500 $", "fr",
       {{"model", "llama-3.1-70b"}, {"task", "qlora"}, {"tokens", 2e8}, {"budget_usd", 500}, {"deadline_seconds", 2 * 86400}},
       {}},
      {"servir Llama 3.1 8B pour 50 utilisateurs", "fr", {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"concurrency", 50}}, {}},
      {"affiner qwen3-8b sur 1,5 milliard de jetons avec des A100", "fr",
       {{"model", "qwen3-8b"}, {"task", "full"}, {"tokens", 1.5e9}, {"filter", "gpu=A100"}}, {}},
      {"ไฟน์จูน Llama 3.1 70B ด้วย QLoRA บน 200 ล้านโทเคน ภายใน 2 วัน งบไม่เกิน 500 ดอลลาร์", "th",
       {{"model", "llama-3.1-70b"}, {"task", "qlora"}, {"tokens", 2e8}, {"budget_usd", 500}, {"deadline_seconds", 2 * 86400}},
       {}},
      {"ให้บริการ Llama 3.1 8B 10 คำขอต่อวินาที", "th", {{"model", "llama-3.1-8b"}, {"task", "serve"}, {"rps", 10}}, {}},
      {"ปรับแต่งโมเดล", "th", {{"task", "full"}}, {"model", "tokens"}},
      {"hello there", "en", json::object(), {"model", "task"}},
  };
  const GpuCatalog& gpus = GpuCatalog::bundled();
  for (const auto& r : rows) {
    const AskResult a = understand(r.sentence, gpus);
    json got = json::object();
    for (const auto& f : a.fields) got[f.name] = f.value;
    EXPECT_EQ(got, r.fields) << r.sentence;
    EXPECT_EQ(a.missing, r.missing) << r.sentence;
    EXPECT_EQ(a.language, r.language) << r.sentence;
  }
}

// The budget and the deadline go to the planner as its constraints (a trial found `ask` listing
// plans past the deadline under the recommendation): the body reads back through plan_fields().
TEST(Assistant, PlanBodyCarriesBudgetAndDeadlineAsPlanConstraints) {
  const AskResult a = understand("fine-tune Llama 3.1 70B with QLoRA on 200M tokens within two days under $500", GpuCatalog::bundled());
  const json body = a.plan_body();
  EXPECT_FALSE(body.contains("budget_usd"));
  EXPECT_FALSE(body.contains("deadline_seconds"));
  EXPECT_EQ(body["tokens"], 2e8);
  EXPECT_EQ(body["deadline"], "172800s");  // 2 days × 86,400 s
  EXPECT_EQ(body["budget"], 500);
  PlanInput in;
  read_fields(in, body, plan_fields());
  EXPECT_EQ(in.deadline, "172800s");
  ASSERT_TRUE(in.request.budget_usd.has_value());
  EXPECT_EQ(*in.request.budget_usd, 500);
}

TEST(Assistant, FirstPlanWithinBudgetAndDeadline) {
  const AskResult a = understand("fine-tune Llama 3.1 70B with QLoRA on 200M tokens within two days under $500", GpuCatalog::bundled());
  PlanResult res;
  Plan cheap_slow, fast;
  cheap_slow.cost.compute_usd = 100;      // total_usd() = compute + storage + egress + spot loss
  cheap_slow.cost.run_seconds = 3 * 86400;  // time_seconds(): over the 2-day deadline
  fast.cost.compute_usd = 400;            // under the $500 budget
  fast.cost.run_seconds = 86400;
  res.plans = {cheap_slow, fast};
  const auto within = first_plan_within(a, res);
  ASSERT_TRUE(within.has_value());
  EXPECT_EQ(*within, 1u);
}

// A number no double holds is an input error at "question" naming it; "1e999 hours" is not read as
// "999 hours" (the duration reads the exponent like every other number).
TEST(Assistant, OutOfRangeNumbersAreInputErrors) {
  const GpuCatalog& gpus = GpuCatalog::bundled();
  for (const char* s : {"lora llama 3.1 8b on 1e999 tokens", "lora llama 3.1 8b on 100M tokens within 1e999 hours",
                        "lora llama 3.1 8b on 1e300 billion tokens", "lora llama 3.1 8b on 100M tokens under $1e999"}) {
    try {
      (void)understand(s, gpus);
      ADD_FAILURE() << "no error for: " << s;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << s;
      EXPECT_EQ(e.where(), "question") << s;
      EXPECT_NE(e.message().find("out of range"), std::string::npos) << e.message();
    }
  }
  // In range, with an exponent: 3 weeks = 3 × 7 × 86,400 s; 2e8 tokens.
  const AskResult a = understand("lora llama 3.1 8b on 2e8 tokens within 3 weeks", gpus);
  json got = json::object();
  for (const auto& f : a.fields) got[f.name] = f.value;
  EXPECT_EQ(got["tokens"], 2e8);
  EXPECT_EQ(got["deadline_seconds"], 3.0 * 7 * 86400);
}

}  // namespace
}  // namespace gpuplan::api
