// End-to-end: the `lora_cheaper_than_qlora` warning (issue 7, trial 7: plain LoRA on the machine
// recommended for a QLoRA fine-tune was cheaper, and nothing said so), through the built binary
// on the bundled catalog. The warning's LoRA figures must be what `plan --task lora` itself
// answers for that offer at that GPU count (one engine, two commands), and the warning must not
// appear where the 16-bit model does not fit the recommended machine.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using nlohmann::json;

class LoraAlternativeE2E : public BinaryE2E<LoraAlternativeE2E> {
 public:
  static constexpr const char* kName = "lora-alternative";
  static const json* warning(const json& result, const std::string& code) {
    for (const json& w : result["warnings"]) {
      if (w["code"] == code) return &w;
    }
    return nullptr;
  }
  static const json* recommended(const json& result) {
    for (const json& p : result["plans"]) {
      if (p.value("recommended", false)) return &p;
    }
    return nullptr;
  }
};

double number_of(const json& values, const std::string& key) { return std::stod(values.at(key).get<std::string>()); }

TEST_F(LoraAlternativeE2E, QloraOnAMachineThatHoldsThe16BitModelQuotesLoraThere) {
  // Llama 3.1 8B: 16 GB of 16-bit weights; the QLoRA recommendation is a single large GPU that
  // holds them many times over.
  const json q = run_json("plan --model llama-3.1-8b --task qlora --tokens 1e9", 0);
  const json* rec = recommended(q);
  ASSERT_NE(rec, nullptr) << q.dump().substr(0, 2000);
  const json* w = warning(q, "lora_cheaper_than_qlora");
  ASSERT_NE(w, nullptr) << q["warnings"].dump();
  const json& v = (*w)["values"];
  EXPECT_EQ(v["provider"], (*rec)["provider"]);
  EXPECT_EQ(v["instance_type"], (*rec)["instance_type"]);
  // The QLoRA total is the recommended plan's, to the cent.
  EXPECT_NEAR(number_of(v, "qlora_total_usd"), (*rec)["cost"]["total_usd"].get<double>(), 0.006);
  // At least 5% cheaper (the stated rule).
  EXPECT_LE(number_of(v, "lora_total_usd"), 0.95 * number_of(v, "qlora_total_usd") + 0.01);

  // The same offer and GPU count asked for directly as LoRA, cheapest first: the same total.
  const int gpus = (*rec)["gpus_per_instance"].get<int>() * (*rec)["instances"].get<int>();
  const std::string offer_filter = "provider=" + (*rec)["provider"].get<std::string>();
  const json l = run_json("plan --model llama-3.1-8b --task lora --tokens 1e9 --sort cost --all --gpus " +
                              std::to_string(gpus) + " '" + offer_filter + "'",
                          0);
  const json* same = nullptr;
  for (const json& p : l["plans"]) {
    bool on_offer = p["offer_id"] == (*rec)["offer_id"];  // or a row that collapsed it (same plan elsewhere)
    for (const json& id : p.value("same_plan_offer_ids", json::array())) on_offer = on_offer || id == (*rec)["offer_id"];
    if (on_offer && (!same || p["cost"]["total_usd"] < (*same)["cost"]["total_usd"])) same = &p;
  }
  ASSERT_NE(same, nullptr) << "no LoRA plan on " << (*rec)["offer_id"];
  EXPECT_NEAR(number_of(v, "lora_total_usd"), (*same)["cost"]["total_usd"].get<double>(), 0.006);
  EXPECT_NEAR(number_of(v, "lora_hours"), (*same)["cost"]["run_seconds"].get<double>() / 3600, 0.051);

  // The text output states it too.
  const auto t = run("plan --model llama-3.1-8b --task qlora --tokens 1e9");
  EXPECT_NE(t.out.find("[lora_cheaper_than_qlora]"), std::string::npos) << t.out;
}

TEST_F(LoraAlternativeE2E, NoWarningWhereThe16BitModelDoesNotFit) {
  // Mixtral 8x22B: 282 GB of 16-bit weights do not fit one 180 GB B200 (the QLoRA recommendation: a
  // single B200), so LoRA is no alternative there. (Llama 3.1 70B was the example until its LoRA, 141 GB
  // of weights + checkpoints + logits, fitted one B200 with the 10% margin: with full recompute the
  // recomputed layer no longer adds to the logits, docs/sizing.md "Peak moment".)
  const json q = run_json("plan --model mixtral-8x22b --task qlora --tokens 2e8", 0);
  const json* rec = recommended(q);
  ASSERT_NE(rec, nullptr);
  ASSERT_EQ((*rec)["gpus_per_instance"].get<int>() * (*rec)["instances"].get<int>(), 1) << rec->dump();
  EXPECT_EQ(warning(q, "lora_cheaper_than_qlora"), nullptr) << q["warnings"].dump();
  // ... which `plan --task lora` on one such GPU confirms: no plan.
  const auto l = run("plan --model mixtral-8x22b --task lora --tokens 2e8 --gpus 1 'provider=" +
                     (*rec)["provider"].get<std::string>() + " gpu~B200'");
  EXPECT_NE(l.out.find("No plan"), std::string::npos) << l.out;
}

TEST_F(LoraAlternativeE2E, OnlyForQlora) {
  const json l = run_json("plan --model llama-3.1-8b --task lora --tokens 1e9", 0);
  EXPECT_EQ(warning(l, "lora_cheaper_than_qlora"), nullptr);
}

}  // namespace
