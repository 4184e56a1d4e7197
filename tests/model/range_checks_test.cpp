// Issue 11: config values outside physical ranges are refused with the field named, before any
// parameter is counted (the counts overflowed int64 or came out absurd); strict JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "model/hf_config.hpp"
#include "test_util.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;
using testing::expect_error;

json tiny_llama() {
  return json{{"model_type", "llama"}, {"hidden_size", 8}, {"num_hidden_layers", 2}, {"num_attention_heads", 2},
              {"intermediate_size", 16}, {"vocab_size", 10}};
}

json mixtral() {  // data/models/mistralai__Mixtral-8x7B-v0.1/config.json, the fields that matter
  return json{{"model_type", "mixtral"},        {"hidden_size", 4096},       {"intermediate_size", 14336},
              {"max_position_embeddings", 32768}, {"num_attention_heads", 32}, {"num_experts_per_tok", 2},
              {"num_hidden_layers", 32},        {"num_key_value_heads", 8},  {"num_local_experts", 8},
              {"vocab_size", 32000}};
}

std::string error_where(const json& config) {
  const Error e = expect_error([&] { parse_hf_config_text(config.dump(), "config.json"); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << e.what();
  return e.where();
}

TEST(ConfigRanges, IntermediateSizeTwoToThe53PlusOneIsRefused) {
  // The issue: printed 2.39B parameters next to petabytes of activations.
  json c = tiny_llama();
  c["intermediate_size"] = 9007199254740993LL;  // 2^53 + 1
  EXPECT_EQ(error_where(c), "config.json: intermediate_size");
}

TEST(ConfigRanges, TrillionLayersIsRefused) {
  // The issue: num_hidden_layers 1e12 wrapped the count. Written as the float 1e12.
  const std::string text = R"({"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 1e12,
    "num_attention_heads": 2, "intermediate_size": 16, "vocab_size": 10})";
  const Error e = expect_error([&] { parse_hf_config_text(text, "config.json"); });
  EXPECT_EQ(e.where(), "config.json: num_hidden_layers") << e.what();
}

TEST(ConfigRanges, MoreActiveExpertsThanExpertsIsRefused) {
  json c = mixtral();
  c["num_experts_per_tok"] = 9;  // 8 experts
  EXPECT_EQ(error_where(c), "config.json: num_experts_per_tok");
  c["num_experts_per_tok"] = 8;  // all experts active: allowed
  EXPECT_NO_THROW(parse_hf_config_text(c.dump(), "config.json"));
}

TEST(ConfigRanges, EachFieldWithinItsRangeButAnAbsurdTotalIsRefused) {
  json c = tiny_llama();
  c["num_hidden_layers"] = 10000;
  c["hidden_size"] = 1000000;
  c["num_attention_heads"] = 1000;
  c["intermediate_size"] = 10000000;
  const Error e = expect_error([&] { parse_hf_config_text(c.dump(), "config.json"); });
  EXPECT_NE(std::string(e.what()).find("parameters"), std::string::npos) << e.what();
}

TEST(ConfigRanges, OtherFieldsAreNamed) {
  json c = tiny_llama();
  c["vocab_size"] = 1000000000000LL;
  EXPECT_EQ(error_where(c), "config.json: vocab_size");
  c = tiny_llama();
  c["num_attention_heads"] = 2;
  c["num_key_value_heads"] = 4;  // more KV heads than heads (the family reader's own check)
  EXPECT_EQ(error_where(c), "config.json: /num_key_value_heads");
  c = tiny_llama();
  c["max_position_embeddings"] = 100000000000LL;
  EXPECT_EQ(error_where(c), "config.json: max_position_embeddings");
}

TEST(ConfigRanges, BundledLargestModelsStayAccepted) {
  json c = mixtral();
  EXPECT_NO_THROW(parse_hf_config_text(c.dump(), "config.json"));
}

TEST(ConfigStrictJson, DuplicateKeyAndHugeNumberAreErrorsWithPlaces) {
  const Error dup = expect_error([] {
    parse_hf_config_text(R"({"model_type": "llama", "hidden_size": 8, "hidden_size": 4096})", "config.json");
  });
  EXPECT_EQ(dup.where(), "config.json: /hidden_size") << dup.what();
  const Error big = expect_error([] { parse_hf_config_text("{\"hidden_size\": 1e400}", "config.json"); });
  EXPECT_EQ(big.where(), "config.json:1:17") << big.what();
}

}  // namespace
}  // namespace gpuplan
